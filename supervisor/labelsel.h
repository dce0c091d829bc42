/*
 * labelsel.h: equality-based label selectors (kube-api.md C.7), pure logic.
 * Prefix labelsel_.
 *
 * Grammar: requirements separated by ',', each one of
 *     key=value   key==value   key!=value   key   !key
 * with optional blanks around keys, values and operators.  A key is an
 * optional DNS-subdomain prefix and '/' then a name of at most 63
 * characters ([A-Za-z0-9] at both ends, [-_.A-Za-z0-9] inside); a value is
 * empty or follows the same rules as a name.  The empty selector matches
 * everything.  Set-based forms (in, notin, exists with parentheses) are
 * refused with a clear message: the supervisor's own selectors never need
 * them.
 *
 * Semantics as in apimachinery: key!=value also matches objects without
 * the key; !key matches objects without it; all requirements must hold.
 */
#ifndef LABELSEL_H
#define LABELSEL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

struct labelsel;

/* Value of label key for the object being tested, or NULL when the label
 * is absent.  Borrowed. */
typedef const char *labelsel_get_fn(void *arg, const char *key);

/* Parses s (NULL counts as "").  Returns the selector (caller frees with
 * labelsel_free()), or NULL with a one-line message in err (when err !=
 * NULL and errlen > 0). */
struct labelsel *labelsel_parse(const char *s, char *err, size_t errlen);

/* Frees sel.  NULL is fine. */
void labelsel_free(struct labelsel *sel);

/* True when sel has no requirement (matches everything). */
bool labelsel_empty(const struct labelsel *sel);

/* Whether the labels reached through get(arg, key) satisfy sel. */
bool labelsel_match(
        const struct labelsel *sel, labelsel_get_fn *get, void *arg);

/* Same against a JSON object of labels (metadata.labels; NULL or a
 * non-object counts as no labels, non-string values as absent). */
bool labelsel_match_json(const struct labelsel *sel, json_object *labels);

#endif
