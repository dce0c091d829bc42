/* test_otel.c: the signal policy, the aggregation and the OTLP encoding
 * of supervisor/otel.c, read back with protobuf-c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "supervisor/otel.h"
#include "supervisor/proto/otlp.pb-c.h"

#define TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN  "00f067aa0ba902b7"

static struct otel *
mk(void)
{
	struct otel_conf c = { "http://collector:4317", "sympozium-system",
		"pod-1", NULL, NULL, 1000, "team=a%20b, service.name=evil" };

	return (otel_new(&c));
}

static int
ingest(struct otel *o, const char *ctl, const char *json)
{
	json_object *t = json_tokener_parse(json);
	char err[256];
	int rc;

	assert_non_null(t);
	rc = otel_ingest(o, ctl, t, 2000, 3000, err, sizeof(err));
	json_object_put(t);
	return (rc);
}

static void
test_off_without_endpoint(void **state)
{
	struct otel_conf c = { 0 };
	struct otel *o = mk();

	(void)state;
	assert_null(otel_new(&c));
	c.endpoint = "";
	assert_null(otel_new(&c));
	/* the scheme and any path dropped: gRPC wants host:port */
	assert_string_equal(otel_endpoint(o), "collector:4317");
	otel_free(o);
}

static void
test_policy_refuses(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"metrics\":{}}",
		/* another controller's instrument */
		"{\"metrics\":[{\"name\":\"sympozium.gateway.ready\","
		"\"value\":1}]}",
		"{\"metrics\":[{\"name\":\"made.up\",\"value\":1}]}",
		/* a counter going down, a fraction, an unlisted attribute */
		"{\"metrics\":[{\"name\":\"sympozium.agent.runs\","
		"\"value\":-1}]}",
		"{\"metrics\":[{\"name\":\"sympozium.agent.runs\","
		"\"value\":1.5}]}",
		"{\"metrics\":[{\"name\":\"sympozium.agent.runs\",\"value\":1,"
		"\"attrs\":{\"pod\":\"x\"}}]}",
		"{\"logs\":[{\"event\":\"agent.run.exploded\"}]}",
		"{\"logs\":[{\"event\":\"agent.run.failed\","
		"\"attrs\":{\"password\":\"x\"}}]}",
		"{\"spans\":[{\"name\":\"agentrun.reconcile\",\"traceId\":"
		"\"00000000000000000000000000000000\",\"spanId\":\"" SPAN
		"\",\"sampled\":true}]}",
		"{\"spans\":[{\"name\":\"agentrun.reconcile\",\"traceId\":\""
		"4BF92F3577B34DA6A3CE929D0E0E4736\",\"spanId\":\"" SPAN
		"\",\"sampled\":true}]}",
		"{\"spans\":[{\"name\":\"evil\",\"traceId\":\"" TRACE
		"\",\"spanId\":\"" SPAN "\",\"sampled\":true}]}",
	};
	struct otel *o = mk();
	struct otel_stats st;
	struct buf b;

	(void)state;
	buf_init(&b);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ingest(o, "agentrun", bad[i]), -1);
	}
	otel_stats(o, &st);
	assert_int_equal(st.refused, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(st.ingested, 0);
	for (int s = 0; s < OTEL_NSIGNALS; s++) {
		assert_int_equal(otel_encode(o, s, 5000, &b), 0);
	}
	buf_fini(&b);
	otel_free(o);
}

static const Otlp__Metric *
metric(const Otlp__ExportMetricsServiceRequest *r, const char *name)
{
	const Otlp__ResourceMetrics *rm = r->resource_metrics[0];

	for (size_t s = 0; s < rm->n_scope_metrics; s++) {
		for (size_t m = 0; m < rm->scope_metrics[s]->n_metrics; m++) {
			if (strcmp(rm->scope_metrics[s]->metrics[m]->name,
			            name)
			        == 0) {
				return (rm->scope_metrics[s]->metrics[m]);
			}
		}
	}
	return (NULL);
}

static void
test_metrics_cumulative(void **state)
{
	struct otel *o = mk();
	struct buf b;
	Otlp__ExportMetricsServiceRequest *r;
	const Otlp__Metric *m;
	const char *run
	        = "{\"metrics\":[{\"name\":\"sympozium.agent.runs\","
	          "\"value\":1,\"attrs\":{\"sympozium.instance\":\"a\","
	          "\"sympozium.agent.status\":\"succeeded\"}},"
	          "{\"name\":\"sympozium.agent.duration_ms\","
	          "\"value\":30,\"attrs\":{\"sympozium.instance\":"
	          "\"a\",\"sympozium.agent.status\":\"succeeded\"}}]}";

	(void)state;
	buf_init(&b);
	assert_int_equal(ingest(o, "agentrun", run), 0);
	assert_int_equal(ingest(o, "agentrun", run), 0);
	assert_int_equal(ingest(o, "agentrun",
	                         "{\"metrics\":[{\"name\":"
	                         "\"sympozium.web_endpoint.serving\","
	                         "\"value\":-1,\"attrs\":{"
	                         "\"sympozium.instance\":\"b\"}}]}"),
	        0);
	assert_int_equal(ingest(o, "config",
	                         "{\"metrics\":[{\"name\":"
	                         "\"sympozium.gateway.ready\",\"value\":1}]}"),
	        0);
	assert_int_equal(otel_encode(o, OTEL_METRICS, 9000, &b), 4);
	r = otlp__export_metrics_service_request__unpack(
	        NULL, b.len, (const uint8_t *)b.data);
	assert_non_null(r);
	assert_int_equal(r->n_resource_metrics, 1);
	/* two scopes: the controller's and the config controller's */
	assert_int_equal(r->resource_metrics[0]->n_scope_metrics, 2);
	assert_string_equal(
	        r->resource_metrics[0]->scope_metrics[1]->scope->name,
	        "sympozium.ai/config-controller");
	assert_string_equal(r->resource_metrics[0]
	                            ->resource->attributes[0]
	                            ->value->string_value,
	        "sympozium-controller");
	/* OTEL_RESOURCE_ATTRIBUTES under ours: team added, service.name
	 * kept */
	{
		Otlp__Resource *res = r->resource_metrics[0]->resource;
		size_t n = res->n_attributes;

		assert_int_equal(n, 5);
		assert_string_equal(res->attributes[n - 1]->key, "team");
		assert_string_equal(
		        res->attributes[n - 1]->value->string_value, "a b");
	}
	m = metric(r, "sympozium.agent.runs");
	assert_non_null(m);
	assert_int_equal(m->data_case, OTLP__METRIC__DATA_SUM);
	assert_true(m->sum->is_monotonic);
	assert_int_equal(m->sum->aggregation_temporality,
	        OTLP__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
	assert_int_equal(m->sum->n_data_points, 1);
	assert_int_equal(m->sum->data_points[0]->as_int, 2);
	assert_int_equal(m->sum->data_points[0]->start_time_unix_nano, 1000);
	assert_int_equal(m->sum->data_points[0]->time_unix_nano, 9000);
	/* attributes sorted by key, as the SDK's sets */
	assert_string_equal(m->sum->data_points[0]->attributes[0]->key,
	        "sympozium.agent.status");
	m = metric(r, "sympozium.agent.duration_ms");
	assert_int_equal(m->data_case, OTLP__METRIC__DATA_HISTOGRAM);
	assert_int_equal(m->histogram->data_points[0]->count, 2);
	assert_true(m->histogram->data_points[0]->sum == 60.0);
	assert_int_equal(m->histogram->data_points[0]->n_explicit_bounds, 15);
	/* 30 ms falls in (25, 50] */
	assert_int_equal(m->histogram->data_points[0]->bucket_counts[4], 2);
	m = metric(r, "sympozium.web_endpoint.serving");
	assert_false(m->sum->is_monotonic);
	assert_int_equal(m->sum->data_points[0]->as_int, -1);
	otlp__export_metrics_service_request__free_unpacked(r, NULL);
	/* cumulative: the next export carries the totals again */
	assert_int_equal(otel_encode(o, OTEL_METRICS, 9500, &b), 4);
	buf_fini(&b);
	otel_free(o);
}

static void
test_spans_and_logs_queued(void **state)
{
	struct otel *o = mk();
	struct buf b;
	Otlp__ExportTraceServiceRequest *t;
	Otlp__ExportLogsServiceRequest *l;
	const Otlp__Span *sp;
	const Otlp__LogRecord *rec;

	(void)state;
	buf_init(&b);
	assert_int_equal(
	        ingest(o, "agentrun",
	                "{\"spans\":[{\"name\":\"agentrun.create_job\","
	                "\"traceId\":\"" TRACE "\",\"spanId\":\"" SPAN "\","
	                "\"parentSpanId\":\"1111111111111111\","
	                "\"sampled\":true,\"attrs\":{\"agentrun.name\":\"r\"}}"
	                ","
	                "{\"name\":\"agentrun.reconcile\",\"traceId\":\"" TRACE
	                "\",\"spanId\":\"2222222222222222\",\"sampled\":false}"
	                ",{\"name\":\"agentrun.reconcile\",\"traceId\":"
	                "\"" TRACE
	                "\",\"spanId\":\"1111111111111111\",\"sampled\":true,"
	                "\"error\":\"reconcile failed\"}],"
	                "\"logs\":[{\"event\":\"agent.run.failed\",\"attrs\":{"
	                "\"agent_run\":\"r\",\"error\":\"boom\"},\"traceId\":"
	                "\"" TRACE "\",\"spanId\":\"" SPAN "\"}]}"),
	        0);
	/* the unsampled span is not exported */
	assert_int_equal(otel_encode(o, OTEL_TRACES, 5000, &b), 2);
	t = otlp__export_trace_service_request__unpack(
	        NULL, b.len, (const uint8_t *)b.data);
	assert_non_null(t);
	sp = t->resource_spans[0]->scope_spans[0]->spans[0];
	assert_string_equal(sp->name, "agentrun.create_job");
	assert_int_equal(sp->trace_id.len, 16);
	assert_int_equal(sp->trace_id.data[0], 0x4b);
	assert_int_equal(sp->parent_span_id.data[0], 0x11);
	assert_int_equal(sp->start_time_unix_nano, 2000);
	assert_int_equal(sp->end_time_unix_nano, 3000);
	assert_null(sp->status);
	sp = t->resource_spans[0]->scope_spans[0]->spans[1];
	assert_false(sp->has_parent_span_id);
	/* the reconcile span's duration, as upstream sets it (ms) */
	assert_string_equal(sp->attributes[sp->n_attributes - 1]->key,
	        "reconcile.duration_ms");
	assert_true(sp->attributes[sp->n_attributes - 1]->value->double_value
	        == 0.0);
	assert_int_equal(sp->status->code,
	        OTLP__STATUS__STATUS_CODE__STATUS_CODE_ERROR);
	otlp__export_trace_service_request__free_unpacked(t, NULL);
	/* the queue is emptied by the export */
	assert_int_equal(otel_encode(o, OTEL_TRACES, 5000, &b), 0);
	assert_int_equal(otel_encode(o, OTEL_LOGS, 5000, &b), 1);
	l = otlp__export_logs_service_request__unpack(
	        NULL, b.len, (const uint8_t *)b.data);
	rec = l->resource_logs[0]->scope_logs[0]->log_records[0];
	assert_string_equal(rec->body->string_value, "agent.run.failed");
	assert_int_equal(rec->severity_number, 17);
	assert_string_equal(rec->severity_text, "ERROR");
	assert_int_equal(rec->n_attributes, 2);
	assert_int_equal(rec->span_id.data[0], 0x00);
	assert_int_equal(rec->span_id.data[1], 0xf0);
	otlp__export_logs_service_request__free_unpacked(l, NULL);
	buf_fini(&b);
	otel_free(o);
}

static void
test_pairs(void **state)
{
	struct otel_pair p[OTEL_PAIRS_MAX];

	(void)state;
	assert_int_equal(otel_pairs("", p, 4), 0);
	assert_int_equal(otel_pairs(" a = 1 ,b=x%2Cy,c=", p, 4), 3);
	assert_string_equal(p[0].key, "a");
	assert_string_equal(p[0].value, "1");
	assert_string_equal(p[1].value, "x,y");
	assert_string_equal(p[2].value, "");
	otel_pairs_free(p, 3);
	assert_int_equal(otel_pairs("a", p, 4), -1);
	assert_int_equal(otel_pairs("=v", p, 4), -1);
	assert_int_equal(otel_pairs("a=%zz", p, 4), -1);
	assert_int_equal(otel_pairs("a=%4", p, 4), -1);
	assert_int_equal(otel_pairs("a=%0a", p, 4), -1);
	assert_int_equal(otel_pairs("a=1,b=2,c=3", p, 2), -1);
}

static void
test_bounds(void **state)
{
	struct otel *o = mk();
	struct otel_stats st;
	char json[256];
	struct buf b;

	(void)state;
	buf_init(&b);
	for (int i = 0; i < OTEL_SERIES_MAX + 5; i++) {
		snprintf(json, sizeof(json),
		        "{\"metrics\":[{\"name\":\"sympozium.web_endpoint."
		        "route_created\",\"value\":1,\"attrs\":{"
		        "\"sympozium.instance\":\"i%d\"}}]}",
		        i);
		assert_int_equal(ingest(o, "agentrun", json), 0);
	}
	for (int i = 0; i < OTEL_QUEUE_MAX + 3; i++) {
		assert_int_equal(ingest(o, "agentrun",
		                         "{\"logs\":[{\"event\":"
		                         "\"agent.run.succeeded\"}]}"),
		        0);
	}
	otel_stats(o, &st);
	assert_int_equal(st.series_dropped, 5);
	assert_int_equal(st.queue_dropped[OTEL_LOGS], 3);
	assert_int_equal(otel_encode(o, OTEL_METRICS, 1, &b), OTEL_SERIES_MAX);
	assert_int_equal(otel_encode(o, OTEL_LOGS, 1, &b), OTEL_QUEUE_MAX);
	buf_fini(&b);
	otel_free(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_without_endpoint),
		cmocka_unit_test(test_policy_refuses),
		cmocka_unit_test(test_metrics_cumulative),
		cmocka_unit_test(test_spans_and_logs_queued),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_bounds),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
