/*
 * jsonx.h: json-c helpers shared by the watch cache, the reconcilers and the
 * REST client.  Prefix jx_.
 *
 * Paths.  A "dotted path" names a value by its object keys joined with '.':
 * "metadata.name", "spec.template.spec".  A segment made only of decimal
 * digits also indexes an array ("spec.containers.0.image"); on an object the
 * same segment is an ordinary key.  Empty segments ("a..b", ".a", "a.") never
 * match.  The empty path "" names the root itself.  Keys that contain dots
 * ("app.kubernetes.io/name") are reached with the jx_getv()/jx_setv() forms,
 * which take one literal key per argument and no array indexes.
 *
 * JSON null.  json-c represents a JSON null as a NULL json_object pointer, so
 * the getters cannot tell "present but null" from "missing": both give NULL.
 *
 * Ownership.  Getters return borrowed pointers that live only as long as the
 * parent object (json-c's rule).  Functions that return an owned object say
 * so; free it with json_object_put().  Setters take ownership of the value
 * only when they succeed (return 0); on failure the caller still owns it.
 */
#ifndef JSONX_H
#define JSONX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Default nesting limit of jx_parse() when max_depth <= 0. */
#define JX_DEFAULT_DEPTH 64

/* The value at a dotted path, or NULL if any step is missing, a step does not
 * match the container type, or the value is JSON null.  obj may be NULL.
 * Borrowed. */
json_object *jx_get(json_object *obj, const char *path);

/* Like jx_get() with one literal key per argument, ended by NULL:
 * jx_getv(o, "metadata", "labels", "app.kubernetes.io/name", NULL).
 * No key means the root.  Borrowed. */
json_object *jx_getv(json_object *obj, ...) __attribute__((sentinel));

/* The string at a dotted path, or NULL when missing or not a string.
 * Borrowed from the object (valid until the parent is freed or changed). */
const char *jx_get_str(json_object *obj, const char *path);

/* Stores the integer at a dotted path in *out.  Returns 0, or -1 (and leaves
 * *out alone) when missing, not a JSON integer (doubles such as 1.5 or 1.0
 * are refused, as are strings) or outside int64_t. */
int jx_get_int(json_object *obj, const char *path, int64_t *out);

/* Stores the boolean at a dotted path in *out.  Returns 0, or -1 (and leaves
 * *out alone) when missing or not a JSON boolean. */
int jx_get_bool(json_object *obj, const char *path, bool *out);

/* Sets the dotted path in obj to value, creating missing (or null)
 * intermediate objects.  The last segment is always an object key (arrays
 * are not indexed here).  Takes ownership of value on success (value may be
 * NULL, which stores a JSON null).  Returns -1 without changing obj when obj
 * is not an object, the path has an empty segment, or an existing
 * intermediate is not an object; the caller then still owns value. */
int jx_set_path(json_object *obj, const char *path, json_object *value);

/* Like jx_set_path() with literal keys: jx_setv(o, value, "metadata",
 * "labels", "app.kubernetes.io/name", NULL).  At least one key is needed. */
int jx_setv(json_object *obj, json_object *value, ...)
        __attribute__((sentinel));

/* Semantic deep equality.  Objects are equal when they have the same keys
 * with equal values, in any order; arrays compare element by element in
 * order; numbers compare by numeric value (1 == 1.0, across int and double);
 * strings byte by byte (embedded NULs included); booleans by value.  NULL and
 * JSON null are equal.  Different types (other than int/double) differ. */
bool jx_equal(json_object *a, json_object *b);

/* Removes the value at a dotted path from its parent object (or array, when
 * the last segment is an index).  Missing paths are ignored. */
void jx_strip(json_object *obj, const char *path);

/* The length of array a, or 0 when a is not an array (NULL included). */
size_t jx_array_len(json_object *a);

/* Deep copy of obj (json_object_deep_copy), or NULL when obj is NULL or
 * the copy fails.  Caller frees with json_object_put(). */
json_object *jx_copy(json_object *obj);

/* Deep copy of obj when it is a JSON object, else a new empty object (for
 * a status to edit); never NULL.  Caller frees with json_object_put(). */
json_object *jx_copy_obj(json_object *obj);

/* Deep copy of obj (json_object_deep_copy) with each dotted path of the
 * NULL-terminated argument list removed:
 * jx_copy_strip(o, "metadata.managedFields", "status", NULL).
 * Returns NULL when obj is NULL.  Caller frees with json_object_put(). */
json_object *jx_copy_strip(json_object *obj, ...) __attribute__((sentinel));

/* Same with a NULL-terminated array of paths (paths may be NULL). */
json_object *jx_copy_stripa(json_object *obj, const char *const *paths);

/* Compact serialisation (no spaces, '/' not escaped).  NULL gives "null".
 * Never NULL; caller frees with free(). */
char *jx_to_string(json_object *obj);

/* Parses exactly one JSON document from s[0..len) (s need not be
 * NUL-terminated).  Whitespace may follow; anything else is an error, as are
 * NUL bytes, truncated input, invalid UTF-8, nesting deeper than max_depth (<=
 * 0: JX_DEFAULT_DEPTH) and a document that is just "null" (NULL is the error
 * value).  Depth counts every value on the way down, as json-c does: "1" is
 * depth 1, "[]" is 1, "{\"a\":1}" and "[[]]" are 2.
 * json-c's strict mode is used; a number that is not finite (NaN,
 * [-]Infinity, an exponent beyond a double's range), which json-c 0.16
 * accepts there, is an error too.  json-c still accepts single-quoted
 * strings.
 * Returns an owned object (caller frees with json_object_put()), or NULL
 * with a one-line message in err (when err != NULL and errlen > 0). */
json_object *jx_parse(
        const char *s, size_t len, int max_depth, char *err, size_t errlen);

/*
 * Raw JSON text, read for its structure only (no validation), without
 * recursion, so at any depth: what names an object too deep to parse.
 * Every function reads [p, end) only.
 */
/* The end of the JSON value starting at p (no leading blanks), or NULL
 * when the text ends first. */
const char *jx_text_skip(const char *p, const char *end);
/* The value of member key of the object starting at p ('{'; top-level
 * members only), or NULL when absent or p is not an object. */
const char *jx_text_member(const char *p, const char *end, const char *key);
/* The string value at p, decoded (at most n - 1 bytes, control
 * characters as '?') into out; "" when p is not a string. */
void jx_text_string(const char *p, const char *end, char *out, size_t n);
/* "NS/NAME", "NAME" (cluster-scoped) or "" (neither readable) of the
 * object at p, from its metadata, into out[n]. */
void jx_text_name(const char *p, const char *end, char *out, size_t n);

#endif
