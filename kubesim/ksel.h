/*
 * ksel.h: kubesim's label and field selectors, parsed and matched as the
 * real API server does (apimachinery pkg/labels and pkg/fields; spec C.7).
 *
 * Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
 * `k`, `!k`, `k>5`, `k<5`, comma-ANDed, with the Go lexer's whitespace and
 * token rules, key and value validation, and the real error wording
 * (e.g. "unable to parse requirement: found '', expected: ',' or ')'").
 *
 * Field selectors: `k=v`, `k==v`, `k!=v`, comma-ANDed, `\\`, `\,` and `\=`
 * escapes in values; keys limited to metadata.name, metadata.namespace and
 * the caller's extras ("field label not supported: <key>" otherwise).
 *
 * Error messages are the server's text without the Status wrapping: the
 * caller answers 400 BadRequest with them.  Inputs longer than
 * KSEL_MAX_LEN bytes are refused.
 */
#ifndef KSEL_H
#define KSEL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#define KSEL_MAX_LEN 16384

struct ksel;
struct ksel_fields;

/* Parses a label selector ("" and NULL select everything).  Returns a
 * selector the caller frees with ksel_free(), or NULL with a message in err
 * (truncated to errlen; err may be NULL when errlen is 0). */
struct ksel *ksel_parse_labels(const char *s, char *err, size_t errlen);

/* Whether a labels object (metadata.labels; NULL or not an object counts as
 * no labels) matches.  Borrowed arguments. */
bool ksel_match_labels(const struct ksel *sel, json_object *labels);

/* The number of requirements (0 for a select-everything selector). */
size_t ksel_count(const struct ksel *sel);

void ksel_free(struct ksel *sel);

/* Parses a field selector.  allowed_extra: the kind's extra field keys
 * (NULL-terminated, may be NULL); metadata.name and metadata.namespace are
 * always supported.  resource_plural only names the resource in debug logs.
 * Returns a selector the caller frees with ksel_fields_free(), or NULL with
 * a message in err. */
struct ksel_fields *ksel_parse_fields(const char *s,
        const char *const *allowed_extra, const char *resource_plural,
        char *err, size_t errlen);

/* Whether obj matches: each field is read at its dotted path (missing or
 * null reads as ""; numbers and booleans as Go prints them).  Borrowed. */
bool ksel_match_fields(const struct ksel_fields *sel, json_object *obj);

/* The name pinned by a `metadata.name=<v>` (or `==`) term, or NULL.
 * Borrowed from sel. */
const char *ksel_fields_name(const struct ksel_fields *sel);

void ksel_fields_free(struct ksel_fields *sel);

#endif
