/*
 * test_view.c: the worker's side of projected lists (workers/view.c
 * view_list_fields) against the fake supervisor end (tests/lib/fakesup.c,
 * which projects as the supervisor does): the request names its fields,
 * the reply is one row of values per object, bad paths are refused
 * before asking, and a reply of another shape is an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/fakesup.h"
#include "workers/view.h"

static const struct ipc_res runs
        = { "sympozium.ai", "v1alpha1", "agentruns", true };

static const char *const fields[]
        = { "metadata.name", "metadata.creationTimestamp", "status.phase" };

static void
add_runs(struct fakesup *f)
{
	fakesup_add_json(f, "agentruns",
	        "{\"metadata\":{\"name\":\"r1\",\"namespace\":\"ns\","
	        "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"labels\":{\"sympozium.ai/instance\":\"a\"}},"
	        "\"spec\":{\"task\":\"a long task\"},"
	        "\"status\":{\"phase\":\"Succeeded\",\"result\":\"x\"}}");
	fakesup_add_json(f, "agentruns",
	        "{\"metadata\":{\"name\":\"r2\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/instance\":\"a\"}}}");
}

static void
test_projected(void **state)
{
	struct fakesup *f = *state;
	json_object *items = NULL;
	char err[128];

	add_runs(f);
	assert_int_equal(view_list_fields(fakesup_view(f), &runs, "ns",
	                         "sympozium.ai/instance=a", fields, 3, &items,
	                         err, sizeof(err)),
	        0);
	assert_string_equal(fakesup_log(f),
	        "list agentruns ns/ sympozium.ai/instance=a "
	        "fields=metadata.name,metadata.creationTimestamp,"
	        "status.phase\n");
	fakesup_assert_json(items,
	        "[[\"r1\",\"2026-01-01T00:00:00Z\",\"Succeeded\"],"
	        "[\"r2\",null,null]]");
	assert_string_equal(
	        view_row_str(json_object_array_get_idx(items, 0), 2),
	        "Succeeded");
	assert_null(view_row_str(json_object_array_get_idx(items, 1), 2));
	json_object_put(items);
	/* no fields: whole objects, no "fields" on the wire */
	fakesup_clear_log(f);
	assert_int_equal(view_list(fakesup_view(f), &runs, "ns", NULL, &items,
	                         err, sizeof(err)),
	        0);
	assert_string_equal(fakesup_log(f), "list agentruns ns/\n");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(items, 0), "spec.task"),
	        "a long task");
	json_object_put(items);
}

static void
test_bad_paths(void **state)
{
	struct fakesup *f = *state;
	const char *bad[] = { "spec.sympozium.ai/instance" };
	const char *many[IPC_FIELDS_MAX + 1];
	json_object *items = NULL;
	char err[128];

	for (size_t i = 0; i < IPC_FIELDS_MAX + 1; i++) {
		many[i] = "status";
	}
	assert_int_equal(view_list_fields(fakesup_view(f), &runs, "ns", NULL,
	                         bad, 1, &items, err, sizeof(err)),
	        -1);
	assert_string_equal(err, "view: invalid field path");
	assert_int_equal(
	        view_list_fields(fakesup_view(f), &runs, "ns", NULL, many,
	                IPC_FIELDS_MAX + 1, &items, err, sizeof(err)),
	        -1);
	assert_string_equal(err, "view: too many fields");
	assert_null(items);
	assert_int_equal(fakesup_nreqs(f), 0);
}

static void
test_unprojected_reply(void **state)
{
	struct fakesup *f = *state;
	json_object *items = NULL;
	char err[128];

	add_runs(f);
	fakesup_unprojected(f, true);
	assert_int_equal(view_list_fields(fakesup_view(f), &runs, "ns", NULL,
	                         fields, 3, &items, err, sizeof(err)),
	        -1);
	assert_null(items);
	assert_string_equal(err,
	        "view: malformed reply (items of another shape than asked)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_projected, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_bad_paths, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_unprojected_reply,
		        fakesup_setup, fakesup_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
