/*
 * kstate.h: a snapshot of kubesim's objects for the suites that check
 * convergence from the outside (test_chaos, test_scale): every object of
 * a list of kinds in one namespace, by kind and name, and the children of
 * each owner (its controller ownerReference of group sympozium.ai), with
 * the small readers their expectation models use and a list of the
 * mismatches found.  The models themselves (what each object should
 * become) stay in each suite.
 *
 * Functions never call cmocka; kstate_load() prints the reason of a
 * failure on stderr.
 */
#ifndef KSTATE_H
#define KSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "common/kapi.h"

/* Mismatches kept in kstate.why (the rest are only counted). */
#define KSTATE_MAX_WHY 40

/* A kind to load: its resource and its Kind (the children's "Kind/name"
 * entries use it). */
struct kstate_kind {
	const struct kapi_res *res;
	const char *kind;
};

/* One snapshot.  Owned by kstate_load() until kstate_free(). */
struct kstate {
	const struct kstate_kind *kinds; /* borrowed */
	size_t nkinds;
	json_object **by;      /* per kind: name -> object */
	json_object *kids;     /* owner uid -> array of "Kind/name" */
	struct buf why;        /* the first KSTATE_MAX_WHY mismatches */
	int nwhy;              /* every mismatch */
	int verified_children; /* children kstate_check_kids() found right */
};

/* Lists every kind of kinds (n of them, borrowed until kstate_free()) in
 * ns through c.  Returns 0, or -1 (reason on stderr; st must still be
 * freed). */
int kstate_load(struct kstate *st, struct kapi_client *c, const char *ns,
        const struct kstate_kind *kinds, size_t n);
void kstate_free(struct kstate *st);
/* The object of resource r (one of the kinds, compared by address) named
 * name, or NULL.  Borrowed. */
json_object *kstate_get(
        const struct kstate *st, const struct kapi_res *r, const char *name);
/* Records a mismatch (printf format). */
void kstate_miss(struct kstate *st, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Compares the children of owner o with want (NULL-terminated "Kind/name"
 * strings, freed here): a mismatch names what. */
void kstate_check_kids(
        struct kstate *st, const char *what, json_object *o, char **want);

/* ---- readers ---- */

/* The string at path (jx dotted path) of o, "" when absent. */
const char *kstate_str(json_object *o, const char *path);
/* The integer at path, -1 when absent. */
int64_t kstate_int(json_object *o, const char *path);
/* The controller ownerReference of o, or NULL. */
json_object *kstate_controller_ref(json_object *o);
bool kstate_has_finalizer(json_object *o, const char *fin);
/* True when label key of o equals want. */
bool kstate_label_is(json_object *o, const char *key, const char *want);
/* data[key] of a ConfigMap, or NULL. */
const char *kstate_data(json_object *cm, const char *key);
/* The condition of type t in o's status, or NULL. */
json_object *kstate_condition(json_object *o, const char *t);

#endif
