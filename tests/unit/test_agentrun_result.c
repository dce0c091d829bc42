/*
 * test_agentrun_result.c: the agent log parsing of spec 1.14: result and
 * token usage markers, error status, bad JSON, a missing end marker, the
 * last-80-lines window, the 429/quota fallback and the memory block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "workers/agentrun_result.h"

static void
test_result_and_usage(void **state)
{
	struct agentrun_result r;

	(void)state;
	agentrun_result_parse(
	        "starting\n__SYMPOZIUM_RESULT__{\"status\":\"success\","
	        "\"response\":\"old\"}__SYMPOZIUM_END__\n"
	        "__SYMPOZIUM_RESULT__ {\"status\":\"success\",\"response\":"
	        "\"hello\",\"metrics\":{\"durationMs\":1200,\"inputTokens\":"
	        "10,\"outputTokens\":5,\"toolCalls\":2}} __SYMPOZIUM_END__\n",
	        &r);
	assert_string_equal(r.result, "hello");
	assert_null(r.error);
	assert_true(r.has_usage);
	assert_int_equal(r.total_tokens, 15);
	assert_int_equal(r.tool_calls, 2);
	assert_int_equal(r.duration_ms, 1200);
	agentrun_result_fini(&r);
}

/* Later upstream fix #228 (agentrun_controller.go parseAgentResultFromLogs,
 * internal/ipc/protocol.go ResultStatusSkipped, commit 056421c): status
 * "skipped" is a skip, the trimmed response its reason ("preRun hook
 * requested skip" when empty), no usage even with metrics, no error. */
static void
test_skipped_status(void **state)
{
	struct agentrun_result r;

	(void)state;
	agentrun_result_parse("__SYMPOZIUM_RESULT__{\"status\":\"skipped\","
	                      "\"response\":\"  no new mail \",\"metrics\":"
	                      "{\"inputTokens\":3}}__SYMPOZIUM_END__",
	        &r);
	assert_true(r.skipped);
	assert_string_equal(r.result, "no new mail");
	assert_null(r.error);
	assert_false(r.has_usage);
	agentrun_result_fini(&r);
	agentrun_result_parse("__SYMPOZIUM_RESULT__{\"status\":\"skipped\"}"
	                      "__SYMPOZIUM_END__",
	        &r);
	assert_true(r.skipped);
	assert_string_equal(r.result, "preRun hook requested skip");
	agentrun_result_fini(&r);
	/* other statuses are no skip */
	agentrun_result_parse("__SYMPOZIUM_RESULT__{\"status\":\"success\","
	                      "\"response\":\"x\"}__SYMPOZIUM_END__",
	        &r);
	assert_false(r.skipped);
	agentrun_result_fini(&r);
}

static void
test_error_status(void **state)
{
	struct agentrun_result r;

	(void)state;
	agentrun_result_parse("__SYMPOZIUM_RESULT__{\"status\":\"error\","
	                      "\"error\":\"  boom \"}__SYMPOZIUM_END__",
	        &r);
	assert_null(r.result);
	assert_string_equal(r.error, "boom");
	assert_false(r.has_usage);
	agentrun_result_fini(&r);
	agentrun_result_parse("__SYMPOZIUM_RESULT__{\"status\":\"error\"}"
	                      "__SYMPOZIUM_END__",
	        &r);
	assert_string_equal(r.error, "agent run failed");
	agentrun_result_fini(&r);
}

static void
test_bad_or_unterminated(void **state)
{
	struct agentrun_result r;

	(void)state;
	agentrun_result_parse(
	        "__SYMPOZIUM_RESULT__{not json__SYMPOZIUM_END__", &r);
	assert_null(r.result);
	assert_null(r.error);
	agentrun_result_fini(&r);
	/* A start marker without end: empty, and no 429 fallback. */
	agentrun_result_parse("HTTP 429 too many requests\n"
	                      "__SYMPOZIUM_RESULT__{\"response\":\"x\"}",
	        &r);
	assert_null(r.result);
	assert_null(r.error);
	agentrun_result_fini(&r);
	agentrun_result_parse(NULL, &r);
	assert_null(r.result);
	agentrun_result_fini(&r);
}

static void
test_window(void **state)
{
	struct buf b;
	struct agentrun_result r;

	(void)state;
	buf_init(&b);
	buf_puts(&b,
	        "__SYMPOZIUM_RESULT__{\"response\":\"far\"}"
	        "__SYMPOZIUM_END__\n");
	for (int i = 0; i < 80; i++) {
		buf_printf(&b, "line %d\n", i);
	}
	agentrun_result_parse(buf_str(&b), &r);
	assert_null(r.result); /* 81 lines back: out of the window */
	agentrun_result_fini(&r);
	assert_string_equal(agentrun_result_tail("a\nb\nc\n", 2), "b\nc\n");
	assert_string_equal(agentrun_result_tail("a\nb", 5), "a\nb");
	buf_fini(&b);
}

static void
test_quota_fallback(void **state)
{
	struct agentrun_result r;
	struct buf b;

	(void)state;
	agentrun_result_parse(
	        "ok\nError:   Rate Limit\t exceeded\nfine\n", &r);
	assert_string_equal(r.error, "Error: Rate Limit exceeded");
	agentrun_result_fini(&r);
	agentrun_result_parse(
	        "got (429) once\nlater status code: 429 x\n", &r);
	assert_string_equal(r.error, "later status code: 429 x");
	agentrun_result_fini(&r);
	agentrun_result_parse("all good\n", &r);
	assert_null(r.error);
	agentrun_result_fini(&r);
	buf_init(&b);
	buf_puts(&b, "quota ");
	for (int i = 0; i < 600; i++) {
		buf_putc(&b, 'x');
	}
	agentrun_result_parse(buf_str(&b), &r);
	assert_int_equal(strlen(r.error), 503);
	assert_string_equal(r.error + 500, "...");
	agentrun_result_fini(&r);
	buf_fini(&b);
}

static void
test_memory(void **state)
{
	char *m;

	(void)state;
	m = agentrun_result_memory("x\n__SYMPOZIUM_MEMORY__old"
	                           "__SYMPOZIUM_MEMORY_END__\n"
	                           "__SYMPOZIUM_MEMORY__\n# notes\n"
	                           "__SYMPOZIUM_MEMORY_END__\n");
	assert_string_equal(m, "# notes");
	free(m);
	assert_null(agentrun_result_memory("__SYMPOZIUM_MEMORY__  "
	                                   "__SYMPOZIUM_MEMORY_END__"));
	assert_null(agentrun_result_memory("__SYMPOZIUM_MEMORY__ x"));
	assert_null(agentrun_result_memory(NULL));
}

/* Found by fuzz_agentrun_result: token counts whose sum overflows int64
 * saturate instead of overflowing. */
static void
test_huge_tokens(void **state)
{
	struct agentrun_result r;

	(void)state;
	agentrun_result_parse("__SYMPOZIUM_RESULT__ {\"response\":\"x\","
	                      "\"metrics\":{\"inputTokens\":"
	                      "9223372036854775807,\"outputTokens\":"
	                      "9223372036854775807}} __SYMPOZIUM_END__\n",
	        &r);
	assert_string_equal(r.result, "x");
	assert_true(r.has_usage);
	assert_true(r.total_tokens == INT64_MAX);
	agentrun_result_fini(&r);
	agentrun_result_parse("__SYMPOZIUM_RESULT__ {\"metrics\":{"
	                      "\"inputTokens\":-9223372036854775807,"
	                      "\"outputTokens\":-9}} __SYMPOZIUM_END__",
	        &r);
	assert_false(r.has_usage);
	assert_true(r.total_tokens == INT64_MIN);
	agentrun_result_fini(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_and_usage),
		cmocka_unit_test(test_error_status),
		cmocka_unit_test(test_bad_or_unterminated),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_quota_fallback),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_huge_tokens),
		cmocka_unit_test(test_skipped_status),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
