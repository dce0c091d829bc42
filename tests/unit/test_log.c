/* test_log.c: record format, levels, escaping and JSON output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "common/log.h"

/* Runs the logger into a pipe and returns what it wrote. */
static char out[16384];

static const char *
capture_begin(int *fds)
{
	assert_int_equal(pipe(fds), 0);
	log_setfd(fds[1]);
	return (out);
}

static const char *
capture_end(int *fds)
{
	ssize_t n;

	log_setfd(-1);
	close(fds[1]);
	n = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	out[n > 0 ? n : 0] = '\0';
	return (out);
}

static void
test_text_record(void **state)
{
	int fds[2];
	const char *s;

	(void)state;
	log_init("worker[agentrun]", LOG_FORMAT_TEXT);
	capture_begin(fds);
	log_info("started %d", 3);
	s = capture_end(fds);
	assert_true(strncmp(s, "worker[agentrun] 20", 19) == 0);
	assert_non_null(strstr(s, " info: started 3\n"));
	assert_int_equal(strchr(s, '\n') - s + 1, (long)strlen(s));
}

static void
test_levels(void **state)
{
	int fds[2];
	const char *s;

	(void)state;
	log_init("t", LOG_FORMAT_TEXT);
	capture_begin(fds);
	log_debug("hidden");
	log_setverbose(1);
	log_debug("shown");
	log_setverbose(-1);
	log_info("hidden too");
	log_warnx("warned");
	s = capture_end(fds);
	assert_null(strstr(s, "hidden"));
	assert_non_null(strstr(s, "debug: shown"));
	assert_non_null(strstr(s, "warning: warned"));
	log_setverbose(0);
}

static void
test_newlines_escaped_and_errno(void **state)
{
	int fds[2];
	const char *s;

	(void)state;
	log_init("t", LOG_FORMAT_TEXT);
	capture_begin(fds);
	errno = ENOENT;
	log_warn("open %s", "a\nb");
	s = capture_end(fds);
	assert_non_null(strstr(s, "open a\\nb: No such file or directory\n"));
	assert_int_equal(strchr(s, '\n') - s + 1, (long)strlen(s));
}

static const char *
jget(json_object *o, const char *a, const char *b)
{
	return (json_object_get_string(
	        json_object_object_get(json_object_object_get(o, a), b)));
}

static void
test_json_record_parses(void **state)
{
	int fds[2];
	const char *s;
	json_object *o, *v;

	(void)state;
	log_init("sympoziumd", LOG_FORMAT_JSON);
	capture_begin(fds);
	log_info("say \"hi\"\\\t\x01 done");
	s = capture_end(fds);
	o = json_tokener_parse(s);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "msg", &v));
	assert_string_equal(
	        json_object_get_string(v), "say \"hi\"\\\t\x01 done");
	assert_true(json_object_object_get_ex(o, "logger", &v));
	assert_string_equal(json_object_get_string(v), "sympoziumd");
	assert_true(json_object_object_get_ex(o, "level", &v));
	assert_string_equal(json_object_get_string(v), "info");
	json_object_put(o);
	/* zap's level names */
	capture_begin(fds);
	log_warnx("careful");
	s = capture_end(fds);
	o = json_tokener_parse(s);
	assert_string_equal(
	        json_object_get_string(json_object_object_get(o, "level")),
	        "warn");
	json_object_put(o);
}

static const struct log_obj obj = { "agentrun", "sympozium.ai", "AgentRun",
	"ns", "my run", "0b1c2d3e-0000-4000-8000-000000000001",
	"write 0 failed: \"boom\"", "result", "error" };

static void
test_obj_json(void **state)
{
	static const char *const want[][2] = { { "level", "error" },
		{ "msg", "Reconciler error" }, { "controller", "agentrun" },
		{ "controllerGroup", "sympozium.ai" },
		{ "controllerKind", "AgentRun" }, { "namespace", "ns" },
		{ "name", "my run" },
		{ "reconcileID", "0b1c2d3e-0000-4000-8000-000000000001" },
		{ "result", "error" },
		{ "error", "write 0 failed: \"boom\"" } };
	int fds[2];
	const char *s;
	json_object *o;

	(void)state;
	log_init("sympoziumd", LOG_FORMAT_JSON);
	capture_begin(fds);
	log_obj(LOG_LEVEL_ERROR, &obj, "Reconciler error");
	s = capture_end(fds);
	o = json_tokener_parse(s);
	assert_non_null(o);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_string_equal(
		        json_object_get_string(
		                json_object_object_get(o, want[i][0])),
		        want[i][1]);
	}
	assert_string_equal(jget(o, "AgentRun", "name"), "my run");
	assert_string_equal(jget(o, "AgentRun", "namespace"), "ns");
	json_object_put(o);
	/* debug records only with -v */
	capture_begin(fds);
	log_obj(LOG_LEVEL_DEBUG, &obj, "Reconciled");
	log_info("x");
	s = capture_end(fds);
	assert_null(strstr(s, "Reconciled"));
}

/* A worker's reconcile: every record carries the object (log_context). */
static void
test_context(void **state)
{
	int fds[2];
	const char *s;

	(void)state;
	log_init("worker[agentrun]", LOG_FORMAT_JSON);
	log_context(&obj);
	capture_begin(fds);
	log_info("pending: no instance");
	s = capture_end(fds);
	assert_non_null(strstr(s,
	        "\"msg\":\"pending: no instance\","
	        "\"controller\":\"agentrun\""));
	assert_non_null(strstr(s, "\"reconcileID\":\"0b1c2d3e-"));
	/* the context's error is not carried: only object fields */
	assert_null(strstr(s, "\"error\""));
	log_context(NULL);
	capture_begin(fds);
	log_info("idle");
	s = capture_end(fds);
	assert_null(strstr(s, "controller"));
}

static void
test_obj_text(void **state)
{
	int fds[2];
	const char *s;

	(void)state;
	log_init("sympoziumd", LOG_FORMAT_TEXT);
	capture_begin(fds);
	log_obj(LOG_LEVEL_ERROR, &obj, "Reconciler error");
	s = capture_end(fds);
	assert_non_null(strstr(s,
	        " error: Reconciler error controller=agentrun "
	        "controllerGroup=sympozium.ai "
	        "controllerKind=AgentRun namespace=ns "
	        "name=\"my run\" reconcileID=0b1c2d3e-"));
	assert_non_null(
	        strstr(s, " error=\"write 0 failed: \\\"boom\\\"\"\n"));
	assert_int_equal(strchr(s, '\n') - s + 1, (long)strlen(s));
}

static void
test_parse_format(void **state)
{
	enum log_format f;

	(void)state;
	assert_int_equal(log_parse_format("json", &f), 0);
	assert_int_equal(f, LOG_FORMAT_JSON);
	assert_int_equal(log_parse_format("text", &f), 0);
	assert_int_equal(f, LOG_FORMAT_TEXT);
	assert_int_equal(log_parse_format("xml", &f), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_record),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_newlines_escaped_and_errno),
		cmocka_unit_test(test_json_record_parses),
		cmocka_unit_test(test_obj_json),
		cmocka_unit_test(test_obj_text),
		cmocka_unit_test(test_context),
		cmocka_unit_test(test_parse_format),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
