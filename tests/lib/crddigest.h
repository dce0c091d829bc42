/*
 * crddigest.h: the digest of CustomResourceDefinitions: every fact that
 * decides what a CRD serves and accepts (names, scope, versions,
 * subresources, printer columns, and each schema node's keywords: type,
 * enum, required, default, pattern, format, ...), without description
 * text, one fact per line, sorted:
 *
 *   CRD VERSION PATH KEY JSON
 *
 * VERSION and PATH are "-" for a fact of the CRD or of the version itself;
 * PATH names a schema node: "." its root, ".f" a property, "[]" items,
 * "{}" additionalProperties (".spec.skills[].name").  JSON is the value,
 * compact, object keys sorted.  test_crds compares our deploy/crds with
 * the committed digest of upstream's (tests/unit/data/upstream-crds.digest,
 * written by bin/tests/crd-digest) and rebuilds upstream's CRDs from it.
 */
#ifndef CRDDIGEST_H
#define CRDDIGEST_H

#include <json-c/json.h>

/* The digest's header (comment lines, before the facts). */
extern const char crddigest_header[];

/* The sorted fact lines of one CRD (no header), or NULL with a message in
 * err (a property name the path syntax cannot hold).  Caller frees. */
char *crddigest_of(json_object *crd, char *err, size_t errlen);

/* The digest (header and the sorted facts of every CRD) of the YAML files
 * matching the glob pattern, or NULL with a message in err (no file, a
 * file that does not parse).  Caller frees. */
char *crddigest_files(const char *pattern, char *err, size_t errlen);

/* The CRD named name (e.g. "agentruns.sympozium.ai") rebuilt from digest
 * text (descriptions absent), or NULL with a message in err (absent,
 * malformed line).  Caller puts with json_object_put(). */
json_object *crddigest_crd(
        const char *digest, const char *name, char *err, size_t errlen);

#endif
