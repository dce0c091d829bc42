/*
 * test_shadowrec.c: shadow mode's record table and summaries
 * (supervisor/shadow.h): one record per object (replace, not append),
 * a record cleared when its object needs no write, the cap with its
 * count of drops, and Secret bodies never in a summary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/jsonx.h"
#include "supervisor/shadow.h"

static const struct ipc_res cm_res = { "", "v1", "configmaps", true };
static const struct ipc_res secret_res = { "", "v1", "secrets", true };
static const struct ipc_res sp_res
        = { "sympozium.ai", "v1alpha1", "skillpacks", true };

static json_object *
parse(const char *s)
{
	json_object *o = jx_parse(s, strlen(s), 0, NULL, 0);

	assert_non_null(o);
	return (o);
}

static void
test_dedupe(void **state)
{
	struct shadow *sh = sh_new(0);
	json_object *a;

	(void)state;
	assert_int_equal(sh_record(sh, "skillpack", "create", "configmaps",
	                         "ns", "a", "new object"),
	        1);
	/* the same write again: held as it is, not appended */
	assert_int_equal(sh_record(sh, "skillpack", "create", "configmaps",
	                         "ns", "a", "new object"),
	        0);
	assert_int_equal(sh_pending(sh), 1);
	/* a later write to the same object replaces the record */
	assert_int_equal(sh_record(sh, "skillpack", "update", "configmaps",
	                         "ns", "a", "data.x"),
	        1);
	assert_int_equal(sh_pending(sh), 1);
	/* another object, another namespace, another resource */
	sh_record(sh, "skillpack", "create", "configmaps", "other", "a", "");
	sh_record(sh, "skillpack", "create", "secrets", "ns", "a", "");
	assert_int_equal(sh_pending(sh), 3);
	a = sh_json(sh);
	assert_int_equal(json_object_array_length(a), 3);
	/* sorted by resource, namespace, name */
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(a, 0), "namespace"),
	        "ns");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(a, 0), "verb"), "update");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(a, 0), "summary"),
	        "data.x");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(a, 2), "resource"),
	        "secrets");
	json_object_put(a);
	/* the object needs no write any more */
	sh_forget(sh, "configmaps", "ns", "a");
	sh_forget(sh, "configmaps", "ns", "absent");
	assert_int_equal(sh_pending(sh), 2);
	assert_int_equal(sh_dropped(sh), 0);
	sh_free(sh);
}

static void
test_cap(void **state)
{
	struct shadow *sh = sh_new(2);

	(void)state;
	sh_record(sh, "c", "create", "configmaps", "ns", "a", "");
	sh_record(sh, "c", "create", "configmaps", "ns", "b", "");
	assert_int_equal(
	        sh_record(sh, "c", "create", "configmaps", "ns", "c", ""), -1);
	assert_int_equal(
	        sh_record(sh, "c", "create", "configmaps", "ns", "d", ""), -1);
	assert_int_equal(sh_pending(sh), 2);
	assert_int_equal(sh_dropped(sh), 2);
	/* a held object still updates at the cap */
	assert_int_equal(sh_record(sh, "c", "delete", "configmaps", "ns", "a",
	                         "object exists"),
	        1);
	sh_forget(sh, "configmaps", "ns", "b");
	assert_int_equal(
	        sh_record(sh, "c", "create", "configmaps", "ns", "c", ""), 1);
	assert_int_equal(sh_pending(sh), 2);
	sh_free(sh);
	sh_free(NULL);
}

static void
test_names(void **state)
{
	char r[64];

	(void)state;
	assert_string_equal(sh_verb(IPC_OP_UPDATE_STATUS), "update-status");
	assert_string_equal(sh_verb(IPC_OP_DELETE), "delete");
	assert_string_equal(sh_verb((enum ipc_op)99), "unknown");
	sh_resource(&sp_res, r, sizeof(r));
	assert_string_equal(r, "skillpacks.sympozium.ai");
	sh_resource(&cm_res, r, sizeof(r));
	assert_string_equal(r, "configmaps");
}

static void
test_summary_update(void **state)
{
	json_object *cached = parse(
	        "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\","
	        "\"labels\":{\"x\":\"1\"}},\"data\":{\"k\":\"old\"}}");
	json_object *want = parse("{\"metadata\":{\"name\":\"a\",\"labels\":"
	                          "{\"x\":\"1\",\"y\":\"2\"}},\"data\":{\"k\":"
	                          "\"new\"}}");
	struct ipc_write wr = { .op = IPC_OP_UPDATE,
		.res = cm_res,
		.namespace = "ns",
		.name = "a",
		.object = want };
	char out[SH_SUMMARY_MAX];

	(void)state;
	sh_summary(&wr, cached, out, sizeof(out));
	/* resourceVersion is the server's: not a difference */
	assert_string_equal(out, "metadata.labels.y, data.k");
	/* the same object: nothing differs */
	wr.object = cached;
	sh_summary(&wr, cached, out, sizeof(out));
	assert_string_equal(out, "");
	wr.op = IPC_OP_CREATE;
	wr.object = want;
	sh_summary(&wr, NULL, out, sizeof(out));
	assert_string_equal(out, "new object");
	json_object_put(cached);
	json_object_put(want);
}

static void
test_summary_patch(void **state)
{
	json_object *cached
	        = parse("{\"metadata\":{\"name\":\"a\","
	                "\"finalizers\":[\"f\"]},\"spec\":{\"a\":1,"
	                "\"b\":2}}");
	json_object *patch = parse("{\"metadata\":{\"finalizers\":null},"
	                           "\"spec\":{\"a\":1,\"b\":3,\"c\":null}}");
	struct ipc_write wr = { .op = IPC_OP_PATCH,
		.res = sp_res,
		.namespace = "ns",
		.name = "a",
		.patch = patch,
		.patch_type = IPC_PATCH_MERGE };
	char out[SH_SUMMARY_MAX];

	(void)state;
	sh_summary(&wr, cached, out, sizeof(out));
	/* spec.a is already 1, spec.c already absent */
	assert_string_equal(out, "metadata.finalizers, spec.b");
	wr.patch_type = IPC_PATCH_JSON;
	sh_summary(&wr, cached, out, sizeof(out));
	assert_string_equal(out, "json patch");
	json_object_put(cached);
	json_object_put(patch);
}

/* A Secret's data and stringData: neither values nor key names. */
static void
test_summary_secret(void **state)
{
	json_object *cached = parse("{\"metadata\":{\"name\":\"s\"},\"data\":"
	                            "{\"token\":\"c2VjcmV0\"}}");
	json_object *want = parse(
	        "{\"metadata\":{\"name\":\"s\",\"labels\":{\"l\":\"v\"}},"
	        "\"data\":{\"token\":\"bmV3\",\"password\":\"cHc=\"},"
	        "\"stringData\":{\"apikey\":\"hunter2\"}}");
	struct ipc_write wr = { .op = IPC_OP_UPDATE,
		.res = secret_res,
		.namespace = "ns",
		.name = "s",
		.object = want };
	char out[SH_SUMMARY_MAX];

	(void)state;
	sh_summary(&wr, cached, out, sizeof(out));
	assert_string_equal(
	        out, "metadata.labels, data(redacted), stringData(redacted)");
	assert_null(strstr(out, "token"));
	assert_null(strstr(out, "hunter2"));
	/* a ConfigMap's data keys are shown */
	wr.res = cm_res;
	sh_summary(&wr, cached, out, sizeof(out));
	assert_non_null(strstr(out, "data.token"));
	json_object_put(cached);
	json_object_put(want);
}

static void
test_summary_bounded(void **state)
{
	json_object *want = parse("{\"spec\":{\"a\":1,\"b\":1,\"c\":1,\"d\":1,"
	                          "\"e\":1,\"f\":1,\"g\":1,\"h\":1}}");
	struct ipc_write wr = { .op = IPC_OP_UPDATE,
		.res = sp_res,
		.namespace = "ns",
		.name = "a",
		.object = want };
	json_object *cached = parse("{\"spec\":{}}");
	char out[SH_SUMMARY_MAX], small[16];

	(void)state;
	sh_summary(&wr, cached, out, sizeof(out));
	assert_string_equal(out,
	        "spec.a, spec.b, spec.c, spec.d, spec.e, spec.f, +2 more");
	sh_summary(&wr, cached, small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
	json_object_put(cached);
	json_object_put(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedupe),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_summary_update),
		cmocka_unit_test(test_summary_patch),
		cmocka_unit_test(test_summary_secret),
		cmocka_unit_test(test_summary_bounded),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
