/*
 * test_ktable.c: kubesim's Table printing of custom resources: Accept
 * negotiation, human durations, columns from additionalPrinterColumns,
 * the default Age column, includeObject.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "kubesim/ktable.h"
#include "tests/lib/testutil.h"

#define KUBECTL_ACCEPT                                                        \
	"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;"      \
	"as=Table;v=v1beta1;g=meta.k8s.io,application/json"

static void
test_wanted(void **state)
{
	struct kres cr = { .flags = KRES_CUSTOM };
	struct kres builtin
	        = { .flags = 0, .group = "", .plural = "bindings" };
	struct kres pods = { .flags = 0, .group = "", .plural = "pods" };

	(void)state;
	assert_true(ktable_wanted(&cr, KUBECTL_ACCEPT));
	/* a built-in kind without a printer: plain JSON */
	assert_false(ktable_wanted(&builtin, KUBECTL_ACCEPT));
	assert_true(ktable_wanted(&pods, KUBECTL_ACCEPT));
	assert_false(ktable_wanted(&cr, "application/json"));
	assert_false(ktable_wanted(&cr, NULL));
	assert_false(ktable_wanted(&cr, "application/json, */*"));
	/* v1beta1 only: not served */
	assert_false(ktable_wanted(&cr,
	        "application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
	        "application/json"));
	assert_int_equal(ktable_include(NULL), KTABLE_METADATA);
	assert_int_equal(ktable_include("Object"), KTABLE_OBJECT);
	assert_int_equal(ktable_include("None"), KTABLE_NONE);
}

static void
test_human(void **state)
{
	static const struct {
		int64_t s;
		const char *want;
	} cases[] = {
		{ -5, "0s" },
		{ 0, "0s" },
		{ 119, "119s" },
		{ 130, "2m10s" },
		{ 599, "9m59s" },
		{ 600, "10m" },
		{ 3 * 3600 - 1, "179m" },
		{ 3 * 3600 + 120, "3h2m" },
		{ 8 * 3600, "8h" },
		{ 47 * 3600, "47h" },
		{ 3 * 86400 + 4 * 3600, "3d4h" },
		{ 10 * 86400, "10d" },
		{ 3 * 365 * 86400 + 86400, "3y1d" },
		{ 9 * 365 * 86400, "9y" },
	};
	char out[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ktable_human(cases[i].s, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

static void
test_columns(void **state)
{
	json_object *cols = testutil_json(
	        "[{\"name\":\"Phase\",\"type\":\"string\",\"jsonPath\":"
	        "\".status.phase\"},{\"name\":\"N\",\"type\":\"integer\","
	        "\"jsonPath\":\".spec.items[1].n\",\"priority\":1}]",
	        0);
	struct kres cr = { .flags = KRES_CUSTOM, .columns = cols };
	json_object *obj = testutil_json(
	        "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"},\"status\":"
	        "{\"phase\":\"Running\"},\"spec\":{\"items\":[{\"n\":1},"
	        "{\"n\":2}]}}",
	        0);
	json_object *t = ktable_new(&cr, true, "42", "tok");

	(void)state;
	ktable_add(t, &cr, obj, KTABLE_METADATA);
	assert_string_equal(jx_get_str(t, "kind"), "Table");
	assert_string_equal(jx_get_str(t, "apiVersion"), "meta.k8s.io/v1");
	assert_string_equal(jx_get_str(t, "metadata.resourceVersion"), "42");
	assert_string_equal(jx_get_str(t, "metadata.continue"), "tok");
	json_object *defs = json_object_object_get(t, "columnDefinitions");
	assert_int_equal(json_object_array_length(defs), 3);
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(defs, 0), "format"),
	        "name");
	json_object *row = json_object_array_get_idx(
	        json_object_object_get(t, "rows"), 0);
	json_object *cells = json_object_object_get(row, "cells");
	assert_string_equal(
	        json_object_get_string(json_object_array_get_idx(cells, 0)),
	        "a");
	assert_string_equal(
	        json_object_get_string(json_object_array_get_idx(cells, 1)),
	        "Running");
	assert_int_equal(
	        json_object_get_int(json_object_array_get_idx(cells, 2)), 2);
	assert_string_equal(
	        jx_get_str(json_object_object_get(row, "object"), "kind"),
	        "PartialObjectMetadata");
	assert_string_equal(jx_get_str(json_object_object_get(row, "object"),
	                            "metadata.uid"),
	        "u");
	json_object_put(t);
	json_object_put(obj);
	json_object_put(cols);
}

static void
test_default_age(void **state)
{
	struct kres cr = { .flags = KRES_CUSTOM };
	json_object *obj = testutil_json(
	        "{\"metadata\":{\"name\":\"b\",\"creationTimestamp\":"
	        "\"2000-01-01T00:00:00Z\"}}",
	        0);
	json_object *t = ktable_new(&cr, false, NULL, NULL);

	(void)state;
	ktable_add(t, &cr, obj, KTABLE_NONE);
	assert_int_equal(json_object_array_length(json_object_object_get(
	                         t, "columnDefinitions")),
	        0);
	json_object *row = json_object_array_get_idx(
	        json_object_object_get(t, "rows"), 0);
	assert_null(json_object_object_get(row, "object"));
	const char *age = json_object_get_string(json_object_array_get_idx(
	        json_object_object_get(row, "cells"), 1));
	assert_non_null(strchr(age, 'y'));
	json_object_put(t);
	json_object_put(obj);
}

/* The cells of a built-in kind's Table row for obj (JSON text). */
static json_object *
cells_of(const char *group, const char *plural, const char *json)
{
	struct kres r = { .flags = 0,
		.group = (char *)(uintptr_t)group,
		.plural = (char *)(uintptr_t)plural };
	json_object *o = json_tokener_parse(json), *t, *c;

	assert_non_null(o);
	t = ktable_new(&r, true, "1", NULL);
	ktable_add(t, &r, o, KTABLE_NONE);
	c = json_object_get(jx_get(
	        json_object_array_get_idx(jx_get(t, "rows"), 0), "cells"));
	json_object_put(t);
	json_object_put(o);
	return (c);
}

static const char *
at(json_object *cells, size_t i)
{
	return (json_object_get_string(json_object_array_get_idx(cells, i)));
}

static void
test_builtin_pods(void **state)
{
	json_object *c;
	struct kres pods = { .flags = 0, .group = "", .plural = "pods" };
	json_object *t = ktable_new(&pods, true, "1", NULL);
	json_object *defs = jx_get(t, "columnDefinitions");

	(void)state;
	/* the real server's pod columns, the wide ones at priority 1 */
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(defs, 2), "name"),
	        "Status");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(defs, 5), "name"), "IP");
	assert_int_equal(
	        json_object_get_int(jx_get(
	                json_object_array_get_idx(defs, 5), "priority")),
	        1);
	json_object_put(t);
	c = cells_of("", "pods",
	        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":"
	        "[{\"name\":\"a\"},{\"name\":\"b\"}]},\"status\":{"
	        "\"phase\":\"Running\",\"podIP\":\"10.0.0.1\","
	        "\"containerStatuses\":[{\"ready\":true,\"restartCount\":2,"
	        "\"state\":{\"running\":{}}},{\"ready\":false,"
	        "\"restartCount\":1,\"state\":{\"waiting\":{\"reason\":"
	        "\"CrashLoopBackOff\"}}}]}}");
	assert_string_equal(at(c, 0), "p");
	assert_string_equal(at(c, 1), "1/2");
	assert_string_equal(at(c, 2), "CrashLoopBackOff");
	assert_string_equal(at(c, 3), "3");
	assert_string_equal(at(c, 5), "10.0.0.1");
	assert_string_equal(at(c, 6), "<none>");
	json_object_put(c);
	c = cells_of("", "pods",
	        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":"
	        "[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Failed\","
	        "\"containerStatuses\":[{\"state\":{\"terminated\":{"
	        "\"exitCode\":3}}}]}}");
	assert_string_equal(at(c, 2), "ExitCode:3");
	json_object_put(c);
	c = cells_of("", "pods",
	        "{\"metadata\":{\"name\":\"p\",\"deletionTimestamp\":"
	        "\"2026-01-01T00:00:00Z\"},\"status\":{\"phase\":"
	        "\"Running\"}}");
	assert_string_equal(at(c, 2), "Terminating");
	json_object_put(c);
}

static void
test_builtin_others(void **state)
{
	json_object *c;

	(void)state;
	c = cells_of("", "events",
	        "{\"metadata\":{\"name\":\"r.1\"},\"type\":\"Warning\","
	        "\"reason\":\"Failed\",\"message\":\"boom\",\"count\":3,"
	        "\"involvedObject\":{\"kind\":\"AgentRun\",\"name\":\"r\"},"
	        "\"source\":{\"component\":\"sympozium-controller\"}}");
	assert_string_equal(at(c, 0), "<unknown>");
	assert_string_equal(at(c, 1), "Warning");
	assert_string_equal(at(c, 2), "Failed");
	assert_string_equal(at(c, 3), "agentrun/r");
	assert_string_equal(at(c, 5), "sympozium-controller");
	assert_string_equal(at(c, 6), "boom");
	assert_int_equal(
	        json_object_get_int(json_object_array_get_idx(c, 8)), 3);
	json_object_put(c);
	c = cells_of("", "services",
	        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"type\":"
	        "\"NodePort\",\"clusterIP\":\"10.96.0.9\",\"ports\":[{"
	        "\"port\":80,\"nodePort\":30080},{\"port\":53,"
	        "\"protocol\":\"UDP\"}]}}");
	assert_string_equal(at(c, 1), "NodePort");
	assert_string_equal(at(c, 4), "80:30080/TCP,53/UDP");
	assert_string_equal(at(c, 6), "<none>");
	json_object_put(c);
	c = cells_of("batch", "jobs",
	        "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{"
	        "\"spec\":{\"containers\":[{\"name\":\"agent\",\"image\":"
	        "\"x:1\"}]}}},\"status\":{\"succeeded\":1,\"startTime\":"
	        "\"2026-01-01T00:00:00Z\",\"completionTime\":"
	        "\"2026-01-01T00:00:42Z\",\"conditions\":[{\"type\":"
	        "\"Complete\",\"status\":\"True\"}]}}");
	assert_string_equal(at(c, 1), "Complete");
	assert_string_equal(at(c, 2), "1/1");
	assert_string_equal(at(c, 3), "42s");
	assert_string_equal(at(c, 5), "agent");
	json_object_put(c);
	c = cells_of("", "namespaces",
	        "{\"metadata\":{\"name\":\"n\"},\"status\":{\"phase\":"
	        "\"Terminating\"}}");
	assert_string_equal(at(c, 1), "Terminating");
	json_object_put(c);
	c = cells_of("apps", "deployments",
	        "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":3},"
	        "\"status\":{\"readyReplicas\":2,\"updatedReplicas\":3,"
	        "\"availableReplicas\":2}}");
	assert_string_equal(at(c, 1), "2/3");
	assert_int_equal(
	        json_object_get_int(json_object_array_get_idx(c, 2)), 3);
	json_object_put(c);
	c = cells_of("", "secrets",
	        "{\"metadata\":{\"name\":\"s\"},\"type\":"
	        "\"kubernetes.io/tls\",\"data\":{\"a\":\"\",\"b\":\"\"}}");
	assert_string_equal(at(c, 1), "kubernetes.io/tls");
	assert_int_equal(
	        json_object_get_int(json_object_array_get_idx(c, 2)), 2);
	json_object_put(c);
	c = cells_of("coordination.k8s.io", "leases",
	        "{\"metadata\":{\"name\":\"l\"},\"spec\":{"
	        "\"holderIdentity\":\"me\"}}");
	assert_string_equal(at(c, 1), "me");
	json_object_put(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_default_age),
		cmocka_unit_test(test_builtin_pods),
		cmocka_unit_test(test_builtin_others),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
