/*
 * policy.c: the SympoziumPolicy reconciler.  Upstream's Reconcile: a
 * policy that is gone is done; otherwise it lists the SympoziumInstances
 * of the key's namespace, counts those whose spec.policyRef equals the
 * policy's name and updates status.boundInstances with the count (a Go
 * int with omitempty: 0 leaves the field out).  A failed list is an error
 * (retried with backoff).  We skip the status write when the status would
 * not change (the API server would not change the object either).  No
 * finalizer, no children, no Events (upstream records none).
 */
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "workers/kobj.h"
#include "workers/policy.h"
#include "workers/view.h"

static const char *const policy_fields[] = { "spec.policyRef" };

/* The number of instances in ns referencing name, or -1 (err set). */
static int64_t
policy_count(const struct rec_in *in, const char *ns, const char *name,
        char *err, size_t errlen)
{
	json_object *items = NULL;
	int64_t n = 0;
	int rc = -1;

	if (in->view == NULL) {
		snprintf(err, errlen, "no view");
		return (-1);
	}
	rc = view_list_fields(in->view, &kobj_instances, ns, NULL,
	        policy_fields, 1, &items, err, errlen);
	if (rc != 0) {
		if (rc > 0) {
			snprintf(err, errlen, "listing instances: not found");
		}
		json_object_put(items);
		return (-1);
	}
	for (size_t i = 0; i < jx_array_len(items); i++) {
		const char *ref
		        = view_row_str(json_object_array_get_idx(items, i), 0);
		if (ref != NULL && strcmp(ref, name) == 0) {
			n++;
		}
	}
	json_object_put(items);
	return (n);
}

/* Writes status.boundInstances = bound unless already so. */
static void
policy_status(struct rec_out *out, json_object *pol, int64_t bound)
{
	json_object *obj = jx_copy(pol);
	json_object *st = json_object_object_get(obj, "status");

	if (st == NULL || !json_object_is_type(st, json_type_object)) {
		st = json_object_new_object();
		json_object_object_add(obj, "status", st);
	}
	if (bound > 0) {
		json_object_object_add(
		        st, "boundInstances", json_object_new_int64(bound));
	} else {
		json_object_object_del(st, "boundInstances");
	}
	if (jx_equal(st, jx_get(pol, "status"))
	        || (json_object_object_length(st) == 0
	                && jx_get(pol, "status") == NULL)) {
		json_object_put(obj);
		return;
	}
	kobj_update_status(out, &kobj_policies, obj);
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	json_object *pol = in->object;
	char err[256] = "";
	int64_t bound;

	if (pol == NULL || !json_object_is_type(pol, json_type_object)) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	bound = policy_count(
	        in, kobj_ns(pol), kobj_name(pol), err, sizeof(err));
	if (bound < 0) {
		log_warnx("policy %s: %s", in->key, err);
		rec_verdict(out, IPC_V_ERROR, 0, "listing instances: %s", err);
		return;
	}
	policy_status(out, pol, bound);
	rec_verdict(
	        out, IPC_V_DONE, 0, "boundInstances %lld", (long long)bound);
}

const struct reconciler policy_reconciler = { "policy", reconcile };
