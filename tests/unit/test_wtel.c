/*
 * test_wtel.c: the telemetry a worker reports (workers/wtel.c) with
 * OTEL_EXPORTER_OTLP_ENDPOINT set, and what the AgentRun reconciler
 * reports through it: every RESULT's telemetry passes the supervisor's
 * signal policy (otel_check); a failed run counts sympozium.agent.runs
 * (failed) and sympozium.errors and logs agent.run.failed inside its
 * create_job span; a started run's status.traceID is its spans' trace, a
 * new root without an otel.dev/traceparent annotation and the
 * annotation's trace (its span the reconcile span's parent) with one.
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
#include "common/xmalloc.h"
#include "supervisor/otel.h"
#include "tests/lib/fakesup.h"
#include "workers/agentrun.h"
#include "workers/wtel.h"

#define T0       1767225600000LL
#define TP_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define TP_SPAN  "00f067aa0ba902b7"

static json_object *
run(struct fakesup *f, const char *obj)
{
	json_object *o = json_tokener_parse(obj);
	json_object *ch = json_tokener_parse("[]");
	struct fakesup_run r;
	json_object *res;

	assert_non_null(o);
	fakesup_run(&agentrun_reconciler, f, "ns/r", o, ch, T0, &r);
	res = json_object_get(r.result);
	fakesup_run_fini(&r);
	json_object_put(o);
	json_object_put(ch);
	return (res);
}

static char *
mkrun(const char *ann)
{
	return (xasprintf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"r\",\"namespace\":"
	        "\"ns\",\"uid\":\"u1\",\"creationTimestamp\":"
	        "\"2026-01-01T00:00:00Z\",\"labels\":{\"sympozium.ai/"
	        "instance\":\"alice\"},\"finalizers\":[\"sympozium.ai/"
	        "agentrun-finalizer\"]%s},\"spec\":{\"instanceRef\":"
	        "\"alice\",\"agentId\":\"primary\",\"sessionKey\":\"s1\","
	        "\"task\":\"do it\",\"model\":{\"provider\":\"openai\","
	        "\"model\":\"gpt-4o\",\"authSecretRef\":\"key\"}},"
	        "\"status\":{}}",
	        ann));
}

/* The telemetry of res, asserted present and accepted by the policy. */
static json_object *
telemetry(json_object *res)
{
	json_object *t = json_object_object_get(res, "telemetry");
	char err[256] = "";

	assert_non_null(t);
	if (otel_check("agentrun", t, err, sizeof(err)) != 0) {
		fail_msg("refused: %s", err);
	}
	return (t);
}

static json_object *
span(json_object *tel, const char *name)
{
	json_object *a = json_object_object_get(tel, "spans");

	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *s = json_object_array_get_idx(a, i);

		if (strcmp(jx_get_str(s, "name"), name) == 0) {
			return (s);
		}
	}
	fail_msg("no span %s", name);
	return (NULL);
}

static const char *
attr(json_object *o, const char *key)
{
	return (json_object_get_string(json_object_object_get(
	        json_object_object_get(o, "attrs"), key)));
}

static void
test_api_output_passes_policy(void **state)
{
	struct rec_out out = { .result = json_object_new_object() };
	struct wtel_span a, b;
	char err[256];

	(void)state;
	assert_true(wtel_on());
	wtel_count(&out, "sympozium.web_endpoint.serving", -1,
	        "sympozium.instance", "i", NULL, NULL);
	wtel_record(&out, "sympozium.agent.duration_ms", 12.5,
	        "sympozium.agent.status", "succeeded", "sympozium.instance",
	        "i");
	wtel_span_start(&a, NULL, "agentrun.reconcile");
	wtel_span_start(&b, &a.ctx, "agentrun.create_job");
	assert_true(a.live && b.live);
	assert_memory_equal(a.ctx.trace_id, b.ctx.trace_id, 16);
	wtel_span_attr(&b, "agentrun.name", "r");
	wtel_log(&out, "agent.run.failed", NULL, &b.ctx);
	wtel_span_end(&out, &b);
	snprintf(a.error, sizeof(a.error), "reconcile failed");
	wtel_span_end(&out, &a);
	assert_int_equal(
	        otel_check("agentrun",
	                json_object_object_get(out.result, "telemetry"), err,
	                sizeof(err)),
	        0);
	/* another controller may not report the agentrun's signals */
	assert_int_equal(
	        otel_check("skillpack",
	                json_object_object_get(out.result, "telemetry"), err,
	                sizeof(err)),
	        -1);
	json_object_put(out.result);
}

static void
test_failed_run(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("");
	json_object *res = run(f, r);
	json_object *tel = telemetry(res),
	            *job = span(tel, "agentrun.create_job");
	json_object *m = json_object_object_get(tel, "metrics");
	json_object *l = json_object_array_get_idx(
	        json_object_object_get(tel, "logs"), 0);

	assert_int_equal(jx_array_len(m), 2);
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(m, 0), "name"),
	        "sympozium.agent.runs");
	assert_string_equal(attr(json_object_array_get_idx(m, 0),
	                            "sympozium.agent.status"),
	        "failed");
	assert_string_equal(
	        attr(json_object_array_get_idx(m, 1), "error.type"),
	        "agent_run_failed");
	assert_string_equal(jx_get_str(l, "event"), "agent.run.failed");
	assert_string_equal(attr(l, "agent_run"), "r");
	assert_non_null(strstr(attr(l, "error"), "not found"));
	/* the record carries the create_job span's context */
	assert_string_equal(
	        jx_get_str(l, "spanId"), jx_get_str(job, "spanId"));
	assert_string_equal(jx_get_str(job, "parentSpanId"),
	        jx_get_str(span(tel, "agentrun.reconcile"), "spanId"));
	assert_string_equal(
	        attr(span(tel, "agentrun.reconcile"), "agentrun.phase"), "");
	json_object_put(res);
	free(r);
}

static const char *
trace_id(json_object *res)
{
	json_object *a = json_object_object_get(res, "writes");

	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *w = json_object_array_get_idx(a, i);

		if (strcmp(jx_get_str(w, "op"), "update_status") == 0) {
			return (jx_get_str(w, "object.status.traceID"));
		}
	}
	return (NULL);
}

static void
test_started_run_trace(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("");
	char *a = mkrun(
	        ",\"annotations\":{\"otel.dev/traceparent\":\"00-" TP_TRACE
	        "-" TP_SPAN "-01\"}");
	json_object *res, *tel;

	fakesup_add_json(f, "sympoziuminstances",
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SympoziumInstance\",\"metadata\":{\"name\":\"alice\","
	        "\"namespace\":\"ns\"},\"spec\":{}}");
	res = run(f, r);
	tel = telemetry(res);
	assert_non_null(trace_id(res));
	assert_string_equal(trace_id(res),
	        jx_get_str(span(tel, "agentrun.create_job"), "traceId"));
	assert_null(jx_get(span(tel, "agentrun.reconcile"), "parentSpanId"));
	assert_null(json_object_object_get(tel, "metrics"));
	json_object_put(res);
	res = run(f, a);
	tel = telemetry(res);
	assert_string_equal(trace_id(res), TP_TRACE);
	assert_string_equal(
	        jx_get_str(span(tel, "agentrun.reconcile"), "parentSpanId"),
	        TP_SPAN);
	json_object_put(res);
	free(r);
	free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_output_passes_policy),
		cmocka_unit_test(test_failed_run),
		cmocka_unit_test(test_started_run_trace),
	};

	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4317", 1);
	return (cmocka_run_group_tests(
	        tests, fakesup_setup, fakesup_teardown));
}
