/*
 * test_logs.c: the supervisor's log records as controller-runtime's zap
 * logger writes them (common/log.h), from bin/sympoziumd with the test
 * controller against kubesim, --log-format=json -v:
 *  - every line is one JSON object with ts, level (zap's names), logger
 *    and msg;
 *  - a reconcile that fails gives exactly one "Reconciler error" record
 *    (level error) per failed attempt, with controller, controllerGroup,
 *    controllerKind, the {"ConfigMap":{"name","namespace"}} object,
 *    namespace, name, a UUID reconcileID (a new one per attempt) and the
 *    error as its own field;
 *  - a reconcile that succeeds gives a debug "Reconciled" record with the
 *    same fields and result "done", and no Reconciler error.
 * Bounded waits; only the pids the fixture started are signalled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"

#define WAIT_MS 20000

static const char *
field(json_object *o, const char *key)
{
	return (json_object_get_string(json_object_object_get(o, key)));
}

/* Every record of the log whose msg is msg and whose name is name (a new
 * array); asserts that every line is a JSON record with the base fields. */
static json_object *
records(struct optest *f, const char *msg, const char *name)
{
	char *text = sdproc_log_text(f->sd[0].log), *save = NULL;
	json_object *out = json_object_new_array();

	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(l);

		if (o == NULL) {
			fail_msg("not a JSON record: %s", l);
		}
		assert_non_null(field(o, "ts"));
		assert_non_null(field(o, "msg"));
		/* the supervisor's, or a worker's (worker[testctl]) */
		assert_true(strcmp(field(o, "logger"), "sympoziumd") == 0
		        || strncmp(field(o, "logger"), "worker[", 7) == 0);
		assert_true(strcmp(field(o, "level"), "debug") == 0
		        || strcmp(field(o, "level"), "info") == 0
		        || strcmp(field(o, "level"), "warn") == 0
		        || strcmp(field(o, "level"), "error") == 0);
		if (strcmp(field(o, "msg"), msg) == 0
		        && field(o, "name") != NULL
		        && strcmp(field(o, "name"), name) == 0) {
			json_object_array_add(out, o);
		} else {
			json_object_put(o);
		}
	}
	free(text);
	return (out);
}

static void
check_obj(json_object *o, const char *name)
{
	const char *rid = field(o, "reconcileID");

	assert_string_equal(field(o, "controller"), "testctl");
	assert_string_equal(field(o, "controllerGroup"), "");
	assert_string_equal(field(o, "controllerKind"), "ConfigMap");
	assert_string_equal(field(o, "namespace"), "default");
	assert_string_equal(
	        jx_get_str(json_object_object_get(o, "ConfigMap"), "name"),
	        name);
	assert_non_null(rid);
	assert_int_equal(strlen(rid), 36);
	assert_true(rid[8] == '-' && rid[13] == '-' && rid[14] == '4'
	        && rid[18] == '-' && rid[23] == '-');
}

static void
test_records(void **state)
{
	static const char *const args[] = { "--log-format=json", "-v", NULL };
	struct optest *f = optest_testctl_new("test-logs", NULL, WAIT_MS);
	json_object *errs, *oks;
	int64_t end;

	(void)state;
	assert_non_null(f);
	optest_sd_start(f, 0, OPTEST_SD_TESTCTL, args);
	optest_testctl_create(f, "fails", true, "error");
	optest_testctl_create(f, "works", true, NULL);
	/* the error is retried with backoff: wait for two attempts */
	end = ksim_now_ms() + WAIT_MS;
	for (;;) {
		errs = records(f, "Reconciler error", "fails");
		if (json_object_array_length(errs) >= 2
		        || ksim_now_ms() >= end) {
			break;
		}
		json_object_put(errs);
		usleep(100000);
	}
	assert_true(json_object_array_length(errs) >= 2);
	for (size_t i = 0; i < json_object_array_length(errs); i++) {
		json_object *e = json_object_array_get_idx(errs, i);

		check_obj(e, "fails");
		assert_string_equal(field(e, "level"), "error");
		assert_non_null(field(e, "error"));
		assert_true(strlen(field(e, "error")) > 0);
	}
	/* a new reconcile, a new ID */
	assert_string_not_equal(
	        field(json_object_array_get_idx(errs, 0), "reconcileID"),
	        field(json_object_array_get_idx(errs, 1), "reconcileID"));
	assert_true(optest_testctl_wait_out(f, "works", WAIT_MS, NULL));
	end = ksim_now_ms() + WAIT_MS;
	for (;;) {
		oks = records(f, "Reconciled", "works");
		if (json_object_array_length(oks) >= 1
		        || ksim_now_ms() >= end) {
			break;
		}
		json_object_put(oks);
		usleep(100000);
	}
	assert_true(json_object_array_length(oks) >= 1);
	check_obj(json_object_array_get_idx(oks, 0), "works");
	assert_string_equal(
	        field(json_object_array_get_idx(oks, 0), "level"), "debug");
	assert_string_equal(
	        field(json_object_array_get_idx(oks, 0), "result"), "done");
	json_object_put(errs);
	errs = records(f, "Reconciler error", "works");
	assert_int_equal(json_object_array_length(errs), 0);
	json_object_put(errs);
	json_object_put(oks);
	assert_int_equal(optest_finish(f, OPTEST_TERM_EXIT0, false), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
