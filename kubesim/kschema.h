/*
 * kschema.h: structural-schema processing of custom resources, as
 * kube-apiserver's apiextensions does it with a CRD version's
 * openAPIV3Schema: defaulting, pruning of unknown fields and validation
 * with Kubernetes field errors (the causes of a 422 Invalid Status).
 *
 * The object root is a whole custom resource: at the root (and in objects
 * marked x-kubernetes-embedded-resource) apiVersion, kind and metadata are
 * never pruned, and metadata is neither defaulted nor validated here.
 *
 * Field paths follow kube-openapi as the real server reports them:
 * properties are joined with '.', array items take "[i]", and the keys of
 * an additionalProperties map are joined with '.' too ("spec.labels.app",
 * not "spec.labels[app]").
 *
 * Approximations (documented, deliberate):
 *  - pattern: ECMA/RE2 syntax is translated to POSIX ERE (regcomp with
 *    REG_EXTENDED|REG_NOSUB): \d \D \w \W \s \S (also inside brackets),
 *    escaped punctuation, \t \n \r \f \v, \xHH, \A, \z and (?: are
 *    translated (\b \B passed to glibc);
 *    \p{..}, \u...., inline flags (?i) and lookaround make kschema_new fail.
 *    Matching is an unanchored search (Go regexp.MatchString) on bytes: '.'
 *    matches one byte (not one code point) and also a newline.
 *  - x-kubernetes-validations (CEL) is ignored; so are
 *    x-kubernetes-list-type/map-keys (no duplicate checks) and the numeric
 *    formats int32/int64 (kube-openapi does not range-check data by
 *    format).  Formats checked: date-time, date.  Others are no-ops.
 *  - when a value has the wrong type only the type error is reported for it
 *    (the real server may add e.g. an enum error for the same field).
 *  - at most KSCHEMA_MAX_CAUSES causes are collected.
 *  - x-kubernetes-int-or-string takes integers and strings; anything else
 *    is one FieldValueTypeInvalid "must be of type integer,string" cause.
 *  - causes come in a fixed order: per object, required first, then the
 *    fields in the object's own order (the real server's order varies).
 */
#ifndef KSCHEMA_H
#define KSCHEMA_H

#include <stddef.h>

#include <json-c/json.h>

#include "common/buf.h"

/* Schemas nesting deeper than this are refused by kschema_new(); every
 * walk follows the schema, so it also bounds recursion on any input. */
#define KSCHEMA_MAX_DEPTH  64
#define KSCHEMA_MAX_CAUSES 1000

struct kschema;

/* One field error, as in a Status' details.causes[]. */
struct kschema_cause {
	char *field;   /* "spec.containers[0].name" */
	char *reason;  /* "FieldValueRequired", ... */
	char *message; /* "Required value", ... (no field prefix) */
};

/*
 * Compiles an openAPIV3Schema (borrowed; deep-copied).  Returns NULL with a
 * one-line reason in err for what can be detected cheaply: a schema that is
 * not an object, an unknown "type", non-object properties/items, bad
 * required/enum lists, a pattern that does not compile, nesting deeper than
 * KSCHEMA_MAX_DEPTH.  Caller frees with kschema_free().
 */
struct kschema *kschema_new(json_object *schema, char *err, size_t errlen);
void kschema_free(struct kschema *ks);
/* The schema it was made from (borrowed). */
json_object *kschema_root(const struct kschema *ks);

/*
 * Applies defaults in place, as apiextensions' structural defaulting: a
 * property that is missing (or null while not nullable) gets a deep copy of
 * its default, then the walk continues into it, so defaults nested in a
 * default apply; objects are walked through properties and
 * additionalProperties, arrays through items.  Before that, a null under a
 * non-nullable property without a default is removed (as the real server's
 * PruneNonNullableNullsWithoutDefaults).  Returns 0, -1 when obj is not an
 * object.
 */
int kschema_default(const struct kschema *ks, json_object *obj);

/*
 * Removes, in place, fields the schema does not specify, except inside
 * x-kubernetes-preserve-unknown-fields objects (where specified properties
 * are still pruned recursively).  When pruned_paths is not NULL the field
 * paths removed are appended, comma-separated ("spec.foo,spec.x[0].y").
 * Returns the number of fields removed, or -1 when obj is not an object.
 */
int kschema_prune(
        const struct kschema *ks, json_object *obj, struct buf *pruned_paths);

/*
 * Validates obj (everything but metadata).  Stores a new array of causes in
 * *causes (NULL when none; caller frees with kschema_causes_free()) and
 * their count in *ncauses.  Returns 0 when valid, 1 when there are causes,
 * -1 (no causes) when ks, causes or ncauses is NULL.  A NULL obj is JSON
 * null (a type error unless the root schema is nullable).
 */
int kschema_validate(const struct kschema *ks, json_object *obj,
        struct kschema_cause **causes, size_t *ncauses);
void kschema_causes_free(struct kschema_cause *causes, size_t n);

/*
 * Appends the 422 message of the real server to out:
 * `<Kind>.<group> "<name>" is invalid: <field>: <message>` for one cause,
 * `... is invalid: [<f1>: <m1>, <f2>: <m2>]` for several (duplicates
 * dropped, as apimachinery's aggregate does).  An empty group gives just
 * `<Kind>`.  n == 0 gives `... is invalid: <nil>` (Go's nil aggregate).
 */
void kschema_invalid_message(const char *kind, const char *group,
        const char *name, const struct kschema_cause *causes, size_t n,
        struct buf *out);

#endif
