/*
 * kpatch.h: the three PATCH algorithms of the Kubernetes API server, as pure
 * functions on json-c values.  Prefix kpatch_.
 *
 * Every function takes the stored object (original) and the decoded request
 * body (patch), both borrowed and never modified, and returns a new object
 * the caller frees with json_object_put(), or NULL with a one-line message in
 * err (when err != NULL and errlen > 0).  A NULL result is always an error: a
 * patch whose result would be JSON null is refused.
 *
 * Limits: inputs or results nested deeper than KPATCH_MAX_DEPTH, JSON pointers
 * longer than KPATCH_MAX_POINTER bytes and JSON patches adding more than
 * KPATCH_MAX_NODES values are refused with an error.
 */
#ifndef KPATCH_H
#define KPATCH_H

#include <stddef.h>

#include <json-c/json.h>

#define KPATCH_MAX_DEPTH   100
#define KPATCH_MAX_POINTER 4096
/* Values a JSON patch may add in all (copies can double a document). */
#define KPATCH_MAX_NODES 1000000

/*
 * One list that a strategic merge patch merges instead of replacing.  path is
 * the list's dotted path from the object root, "[]" standing for "every
 * element of the list above": "spec.template.spec.containers[].env".  key is
 * the merge key of the list's elements ("name"), or NULL for a list of
 * primitives merged as a set (union, original order first), such as
 * metadata.finalizers.
 */
struct kpatch_listkey {
	const char *path;
	const char *key;
};

/* The merge lists of one kind: keys is an array ended by a {NULL, NULL}
 * entry.  Borrowed for the duration of the call. */
struct kpatch_schema {
	const struct kpatch_listkey *keys;
};

/* Merge lists of Pod, Job, CronJob, Deployment/StatefulSet/DaemonSet-like
 * shapes, Service ports, ownerReferences, finalizers and status.conditions,
 * ended by {NULL, NULL}. */
extern const struct kpatch_listkey kpatch_default_listkeys[];
/* { kpatch_default_listkeys } */
extern const struct kpatch_schema kpatch_default_schema;

/* JSON merge patch, RFC 7386 (application/merge-patch+json).  original may
 * be NULL (no target).  A patch that is not an object replaces the target. */
json_object *kpatch_merge(
        json_object *original, json_object *patch, char *err, size_t errlen);

/* JSON patch, RFC 6902 (application/json-patch+json).  patch must be an
 * array of operation objects (add, remove, replace, move, copy, test).  All
 * or nothing: any failing operation gives NULL. */
json_object *kpatch_json(
        json_object *original, json_object *patch, char *err, size_t errlen);

/* Strategic merge patch (application/strategic-merge-patch+json): a merge
 * patch in which the lists named by schema (NULL: kpatch_default_schema) are
 * merged by key, and the directives $patch (replace, merge, delete),
 * $setElementOrder/<list>, $deleteFromPrimitiveList/<list> and $retainKeys
 * are applied; no "$" key is left in the result.  patch must be an object;
 * original may be NULL (treated as {}), otherwise it must be an object. */
json_object *kpatch_strategic(json_object *original, json_object *patch,
        const struct kpatch_schema *schema, char *err, size_t errlen);

#endif
