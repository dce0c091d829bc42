/*
 * test_shmem_policy.c: the policy rows of the PersonaPack's shared memory
 * server (common/contract.c personapack, spec sympozium-controllers.md
 * 3.4): the write policy (supervisor/wpolicy.c) lets the pack create its
 * PVC, Deployment and Service labelled with its name and controlled by it,
 * and delete them when the cache holds them so; it refuses another pack's
 * label, a missing or foreign controller reference, another namespace,
 * updates and patches (the objects are create-only), deletes of what it
 * does not control; the view policy (supervisor/vpolicy.c) lets it get
 * the three kinds by name in its namespace only, never list them; and the
 * child watches select the three kinds by the persona-pack label.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "supervisor/vpolicy.h"
#include "supervisor/wpolicy.h"
#include "tests/lib/testutil.h"

static const struct ipc_res pvcs = CONTRACT_RES_PVCS;
static const struct ipc_res deps = CONTRACT_RES_DEPLOYMENTS;
static const struct ipc_res svcs = CONTRACT_RES_SERVICES;

/* JSON text written with single quotes, as JSON. */
static json_object *
J(const char *s)
{
	char buf[4096];
	size_t i;

	for (i = 0; s[i] != '\0' && i < sizeof(buf) - 1; i++) {
		buf[i] = s[i] == '\'' ? '"' : s[i];
	}
	buf[i] = '\0';
	return (testutil_json(buf, 0));
}

static const char pack[]
        = "{'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
          "'metadata':{'name':'p','namespace':'ns','uid':'u-p'},"
          "'spec':{'enabled':true,'sharedMemory':{'enabled':true}}}";

/* The fake cache: our Deployment, a foreign one, our PVC. */
static char cached[3][512];

static int
lookup(void *arg, const struct ipc_res *res, const char *ns, const char *name,
        const char **json)
{
	(void)arg;
	if (strcmp(ns, "ns") != 0) {
		return (0);
	}
	if (strcmp(res->plural, "deployments") == 0
	        && strcmp(name, "p-shared-memory") == 0) {
		*json = cached[0];
		return (1);
	}
	if (strcmp(res->plural, "deployments") == 0
	        && strcmp(name, "foreign") == 0) {
		*json = cached[1];
		return (1);
	}
	if (strcmp(res->plural, "persistentvolumeclaims") == 0
	        && strcmp(name, "p-shared-memory-db") == 0) {
		*json = cached[2];
		return (1);
	}
	return (0);
}

static void
fill_cache(void)
{
	json_object *o[3] = {
		J("{'metadata':{'name':'p-shared-memory','namespace':'ns',"
		  "'labels':{'sympozium.ai/persona-pack':'p'},"
		  "'ownerReferences':[{'uid':'u-p','controller':true}]}}"),
		J("{'metadata':{'name':'foreign','namespace':'ns',"
		  "'labels':{'sympozium.ai/persona-pack':'p'},"
		  "'ownerReferences':[{'uid':'u-x','controller':true}]}}"),
		J("{'metadata':{'name':'p-shared-memory-db','namespace':'ns',"
		  "'labels':{'sympozium.ai/persona-pack':'p'},"
		  "'ownerReferences':[{'uid':'u-p','controller':true}]}}"),
	};

	for (size_t i = 0; i < 3; i++) {
		snprintf(cached[i], sizeof(cached[i]), "%s",
		        json_object_to_json_string(o[i]));
		json_object_put(o[i]);
	}
}

/* The rule write w of personapack ns/p breaks ("ok": none). */
static const char *
judge(const struct ipc_write *w)
{
	json_object *p = J(pack);
	struct wpol_input in = { .ctrl = contract_find("personapack"),
		.key = "ns/p",
		.primary = p,
		.ops = w,
		.n = 1,
		.lookup = lookup };
	struct wpol_violation v;
	enum wpol_verdict rc;

	assert_non_null(in.ctrl);
	rc = wpol_check(&in, &v);
	json_object_put(p);
	if (rc == WPOL_OK) {
		return ("ok");
	}
	assert_int_equal(rc, WPOL_VIOLATION);
	return (v.rule);
}

static struct ipc_write
wr(enum ipc_op op, const struct ipc_res *res, const char *ns, const char *name,
        json_object *obj)
{
	return ((struct ipc_write) { .op = op,
	        .res = *res,
	        .namespace = ns,
	        .name = name,
	        .object = obj });
}

/* A child of the pack as personapack_shmem.c makes it. */
static json_object *
child(const char *name)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
	        "{'metadata':{'name':'%s','namespace':'ns','labels':{"
	        "'sympozium.ai/component':'shared-memory',"
	        "'sympozium.ai/persona-pack':'p'},'ownerReferences':[{"
	        "'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
	        "'name':'p','uid':'u-p','controller':true,"
	        "'blockOwnerDeletion':true}]}}",
	        name);
	return (J(buf));
}

/* Creates of the three pass; the child rules refuse the bad shapes. */
static void
test_creates(void **state)
{
	const struct ipc_res *res[] = { &pvcs, &deps, &svcs };
	const char *names[] = { "p-shared-memory-db", "p-shared-memory",
		"p-shared-memory" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		json_object *o = child(names[i]);
		struct ipc_write w = wr(IPC_OP_CREATE, res[i], "ns", "", o);
		assert_string_equal(judge(&w), "ok");
		jx_set_path(o, "metadata.labels",
		        J("{'sympozium.ai/persona-pack':'q'}"));
		assert_string_equal(judge(&w), "child-label");
		jx_set_path(o, "metadata.labels",
		        J("{'sympozium.ai/component':'shared-memory'}"));
		assert_string_equal(judge(&w), "child-label");
		jx_set_path(o, "metadata.labels",
		        J("{'sympozium.ai/persona-pack':'p'}"));
		jx_set_path(o, "metadata.ownerReferences",
		        J("[{'uid':'u-x','controller':true}]"));
		assert_string_equal(judge(&w), "owner");
		jx_set_path(o, "metadata.ownerReferences", NULL);
		assert_string_equal(judge(&w), "owner");
		jx_set_path(o, "metadata.ownerReferences",
		        J("[{'uid':'u-p','controller':true}]"));
		w.namespace = "kube-system";
		assert_string_equal(judge(&w), "namespace");
		json_object_put(o);
	}
}

/* Deletes: only what the cache holds controlled by the pack. */
static void
test_deletes(void **state)
{
	struct ipc_write w;

	(void)state;
	fill_cache();
	w = wr(IPC_OP_DELETE, &deps, "ns", "p-shared-memory", NULL);
	assert_string_equal(judge(&w), "ok");
	w = wr(IPC_OP_DELETE, &pvcs, "ns", "p-shared-memory-db", NULL);
	assert_string_equal(judge(&w), "ok");
	w = wr(IPC_OP_DELETE, &deps, "ns", "foreign", NULL);
	assert_string_equal(judge(&w), "not-owned");
	/* not cached: a victim without the label */
	w = wr(IPC_OP_DELETE, &svcs, "ns", "kubernetes", NULL);
	assert_string_equal(judge(&w), "not-owned");
	w = wr(IPC_OP_DELETE, &deps, "kube-system", "p-shared-memory", NULL);
	assert_string_equal(judge(&w), "namespace");
}

/* Create-only: no update, patch or status write of the three. */
static void
test_no_mutation(void **state)
{
	json_object *o = child("p-shared-memory");
	struct ipc_write w;

	(void)state;
	fill_cache();
	w = wr(IPC_OP_UPDATE, &deps, "ns", "p-shared-memory", o);
	assert_string_equal(judge(&w), "resource");
	w = wr(IPC_OP_UPDATE_STATUS, &deps, "ns", "p-shared-memory", o);
	assert_string_equal(judge(&w), "resource");
	w = wr(IPC_OP_PATCH, &deps, "ns", "p-shared-memory", o);
	assert_string_equal(judge(&w), "resource");
	w = wr(IPC_OP_UPDATE, &svcs, "ns", "p-shared-memory", o);
	assert_string_equal(judge(&w), "resource");
	json_object_put(o);
	o = child("p-shared-memory-db");
	w = wr(IPC_OP_UPDATE, &pvcs, "ns", "p-shared-memory-db", o);
	assert_string_equal(judge(&w), "resource");
	json_object_put(o);
}

/* The view rule of req for personapack ns/p (NULL: allowed). */
static const char *
view(enum ipc_view_what what, const struct ipc_res *res, const char *ns,
        const char *name)
{
	struct ipc_view_req req = { .id = 1,
		.what = what,
		.res = *res,
		.has_res = true,
		.namespace = ns,
		.name = name,
		.tail_lines = -1 };
	struct vpol_violation v = { 0 };
	int rc = vpol_check(contract_find("personapack"), "ns/p", &req, &v);

	return (rc < 0 ? v.rule : NULL);
}

/* Views: a get by name of the three in the key's namespace, no list. */
static void
test_views(void **state)
{
	const struct ipc_res *res[] = { &pvcs, &deps, &svcs };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_null(
		        view(IPC_VIEW_GET, res[i], "ns", "p-shared-memory"));
		assert_string_equal(view(IPC_VIEW_GET, res[i], "kube-system",
		                            "p-shared-memory"),
		        "view-namespace");
		assert_string_equal(view(IPC_VIEW_LIST, res[i], "ns", NULL),
		        "view-resource");
	}
}

/* The child watches: the three kinds, selected by the pack label. */
static void
test_watches(void **state)
{
	const struct contract_ctrl *c = contract_find("personapack");
	const char *kinds[]
	        = { "PersistentVolumeClaim", "Deployment", "Service" };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		bool found = false;
		for (size_t i = 1; i < c->nwatches; i++) {
			const struct contract_watch *w = &c->watches[i];
			if (strcmp(w->kind, kinds[k]) == 0) {
				assert_int_equal(w->role, CONTRACT_CHILD);
				assert_string_equal(
				        w->label, CONTRACT_LABEL_PERSONA_PACK);
				found = true;
			}
		}
		assert_true(found);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creates),
		cmocka_unit_test(test_deletes),
		cmocka_unit_test(test_no_mutation),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_watches),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
