/*
 * test_policy.c: the SympoziumPolicy reconciler, JSON in, writes and
 * verdict out, its instance list served by the fake supervisor.  The
 * expected values come from upstream
 * internal/controller/sympoziumpolicy_controller.go at 008266e,
 * SympoziumPolicyReconciler.Reconcile: a missing policy is done; the
 * instances of the request's namespace whose spec.policyRef equals the
 * policy's name are counted into status.boundInstances (api/v1alpha1
 * sympoziumpolicy_types.go: an int with omitempty, so 0 is absent); a
 * failed list returns the error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/fakesup.h"
#include "workers/kobj.h"
#include "workers/policy.h"

#define NOW_MS 1767225600000LL /* 2026-01-01T00:00:00Z */

#define POLICY(status)                                                        \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\","                          \
	"\"kind\":\"SympoziumPolicy\",\"metadata\":{\"name\":\"strict\","     \
	"\"namespace\":\"ns\",\"uid\":\"p-1\",\"resourceVersion\":\"4\"},"    \
	"\"spec\":{}" status "}"

static json_object *
J(const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return (o);
}

static void
run(struct fakesup *f, const char *obj, struct fakesup_run *g)
{
	json_object *o = obj != NULL ? J(obj) : NULL;
	json_object *k = J("[]");

	fakesup_run(&policy_reconciler, f, "ns/strict", o, k, NOW_MS, g);
	json_object_put(o);
	json_object_put(k);
}

static void
add_inst(struct fakesup *f, const char *ns, const char *name, const char *ref)
{
	char text[512];

	if (ref != NULL) {
		snprintf(text, sizeof(text),
		        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
		        "\"spec\":{\"policyRef\":\"%s\"}}",
		        name, ns, ref);
	} else {
		snprintf(text, sizeof(text),
		        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
		        "\"spec\":{}}",
		        name, ns);
	}
	fakesup_add_json(f, "sympoziuminstances", text);
}

static int
setup(void **state)
{
	struct fakesup *f = fakesup_start();

	add_inst(f, "ns", "a", "strict");
	add_inst(f, "ns", "b", "strict");
	add_inst(f, "ns", "c", "other");
	add_inst(f, "ns", "d", NULL);
	/* another namespace: upstream lists InNamespace(req.Namespace) */
	add_inst(f, "elsewhere", "e", "strict");
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	fakesup_stop(*state);
	return (0);
}

/* The policy is gone: Get's NotFound ends the reconcile, no writes. */
static void
test_gone(void **state)
{
	struct fakesup_run g;

	fakesup_clear_log(*state);
	run(*state, NULL, &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 0);
	assert_int_equal(fakesup_nreqs(*state), 0);
	fakesup_run_fini(&g);
}

/* Two instances of ns name it: boundInstances 2, by a status update. */
static void
test_counts(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	run(*state, POLICY(""), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE_STATUS);
	assert_string_equal(w.res.plural, "sympoziumpolicies");
	assert_string_equal(w.namespace, "ns");
	assert_string_equal(w.name, "strict");
	fakesup_assert_json(
	        jx_get(w.object, "status"), "{\"boundInstances\":2}");
	fakesup_assert_json(jx_get(w.object, "spec"), "{}");
	fakesup_run_fini(&g);
}

/* The count is already there: the update would change nothing. */
static void
test_unchanged(void **state)
{
	struct fakesup_run g;

	run(*state, POLICY(",\"status\":{\"boundInstances\":2}"), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 0);
	fakesup_run_fini(&g);
}

/* A stale count is corrected; other status fields are kept. */
static void
test_stale(void **state)
{
	struct fakesup_run g;

	run(*state,
	        POLICY(",\"status\":{\"boundInstances\":7,"
	               "\"conditions\":[{\"type\":\"X\"}]}"),
	        &g);
	assert_int_equal(g.nwrites, 1);
	fakesup_assert_json(jx_get(fakesup_write(&g, 0).object, "status"),
	        "{\"boundInstances\":2,\"conditions\":[{\"type\":\"X\"}]}");
	fakesup_run_fini(&g);
}

/* No instance references it any more: 0 is omitted (omitempty). */
static void
test_zero(void **state)
{
	struct fakesup_run g;

	fakesup_remove(*state, "sympoziuminstances", "ns", "a");
	fakesup_remove(*state, "sympoziuminstances", "ns", "b");
	run(*state, POLICY(",\"status\":{\"boundInstances\":2}"), &g);
	assert_int_equal(g.nwrites, 1);
	fakesup_assert_json(
	        jx_get(fakesup_write(&g, 0).object, "status"), "{}");
	fakesup_run_fini(&g);
	/* and with no count stored, nothing to write */
	run(*state, POLICY(""), &g);
	assert_int_equal(g.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
	add_inst(*state, "ns", "a", "strict");
	add_inst(*state, "ns", "b", "strict");
}

/* The list fails: the error is returned (retried), nothing written. */
static void
test_list_error(void **state)
{
	struct fakesup_run g;

	fakesup_fail(*state, "sympoziuminstances", NULL, "API down");
	run(*state, POLICY(""), &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 0);
	assert_non_null(strstr(g.message, "API down"));
	fakesup_run_fini(&g);
	fakesup_fail(*state, "sympoziuminstances", NULL, NULL);
}

/* The list is one view of the key's namespace, projected. */
static void
test_request(void **state)
{
	struct fakesup_run g;

	fakesup_clear_log(*state);
	run(*state, POLICY(""), &g);
	assert_int_equal(fakesup_nreqs(*state), 1);
	assert_non_null(
	        strstr(fakesup_log(*state), "list sympoziuminstances ns/"));
	fakesup_run_fini(&g);
}

/* Bad input: odd shapes never crash, non-string refs do not count. */
static void
test_bad_input(void **state)
{
	struct fakesup_run g;

	fakesup_add_json(*state, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"n\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"policyRef\":5}}");
	fakesup_add_json(*state, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"m\",\"namespace\":\"ns\"},"
	        "\"spec\":\"x\"}");
	run(*state, POLICY(",\"status\":\"weird\""), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 1);
	fakesup_assert_json(jx_get(fakesup_write(&g, 0).object, "status"),
	        "{\"boundInstances\":2}");
	fakesup_run_fini(&g);
	fakesup_remove(*state, "sympoziuminstances", "ns", "n");
	fakesup_remove(*state, "sympoziuminstances", "ns", "m");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_zero),
		cmocka_unit_test(test_list_error),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_bad_input),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
