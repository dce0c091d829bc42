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
	struct kres builtin = { .flags = 0 };

	(void)state;
	assert_true(ktable_wanted(&cr, KUBECTL_ACCEPT));
	assert_false(ktable_wanted(&builtin, KUBECTL_ACCEPT));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_default_age),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
