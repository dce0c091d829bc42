/*
 * yamlj.h: YAML text to json-c objects, resolving scalars the way
 * Kubernetes does (sigs.k8s.io/yaml, i.e. go-yaml v2 then JSON), so that a
 * kubeconfig, a CRD or a manifest reads the same here as in kubectl.
 *
 * Plain (unquoted) scalars resolve as YAML 1.1 / go-yaml v2:
 *   null, Null, NULL, ~ and empty          -> JSON null
 *   true/True/TRUE, yes/Yes/YES, y/Y, on/On/ON           -> true
 *   false/False/FALSE, no/No/NO, n/N, off/Off/OFF        -> false
 *   integers (decimal, 0x.., 0o.., 0b.., leading-0 octal, '_' ignored)
 *       -> int64 (uint64 above INT64_MAX)
 *   floats (1.5, -2e3, .5)                 -> double
 *   .inf, -.inf, .nan and everything else  -> string (JSON has no inf/nan)
 * Quoted and block scalars are strings.  Explicit tags !!str, !!int,
 * !!float, !!bool, !!null are honoured (a value that does not fit its tag
 * is an error); a scalar with any other tag is a string (go-yaml v2).
 *
 * Anchors and aliases are expanded by deep copy; a document whose aliases
 * expand to more than YAMLJ_MAX_ALIAS_NODES nodes is refused (billion
 * laughs).  Merge keys (<<) take a mapping or a list of mappings; keys
 * written in the mapping itself win, then earlier merged mappings win
 * (the YAML merge spec; go-yaml v2 lets a later merge override).  Scalar
 * mapping keys are resolved like values, then written as text ("1",
 * "true", "null"), so an unquoted key y, no or on becomes "true"/"false"
 * exactly as in kubectl; a mapping or list used as a key is an error.  A
 * repeated key: the last one wins. Collections nest at most YAMLJ_MAX_DEPTH
 * deep; input is at most YAMLJ_MAX_INPUT bytes.  Errors say what and where
 * ("line L column C").
 */
#ifndef YAMLJ_H
#define YAMLJ_H

#include <stddef.h>

#include <json-c/json.h>

#define YAMLJ_MAX_DEPTH       1000
#define YAMLJ_MAX_ALIAS_NODES 1000000
#define YAMLJ_MAX_INPUT       ((size_t)64 << 20)

/*
 * Parses the first document of text (len bytes, need not be
 * NUL-terminated) into *out: 0 with *out owned by the caller (json-c
 * reference; NULL when the document is empty or null), or -1 with a
 * one-line reason in err.  Later documents are not read.
 */
int yamlj_parse_doc(const char *text, size_t len, json_object **out, char *err,
        size_t errlen);

/* As yamlj_parse_doc but returns the document (caller frees with
 * json_object_put()), or NULL with a reason in err, also when the stream
 * has no document or the document is null. */
json_object *yamlj_parse(
        const char *text, size_t len, char *err, size_t errlen);

/* Every document of a multi-document stream, as a JSON array the caller
 * frees with json_object_put(); empty and null documents are skipped.
 * NULL with a reason in err on any error. */
json_object *yamlj_parse_all(
        const char *text, size_t len, char *err, size_t errlen);

#endif
