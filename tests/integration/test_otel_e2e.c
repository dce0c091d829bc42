/*
 * test_otel_e2e.c: upstream's OpenTelemetry signals from the whole operator
 * (bin/sympoziumd with the production worker, sandbox on) against
 * bin/kubesim, received by a bare OTLP/gRPC collector
 * (tests/integration/otlp_receiver.py, Debian's python3-h2) whose address
 * is OTEL_EXPORTER_OTLP_ENDPOINT.  The collector answers the first two
 * exports UNAVAILABLE: the exporter retries, so nothing is lost; it takes
 * only requests with the metadata of OTEL_EXPORTER_OTLP_HEADERS, and the
 * resource carries OTEL_RESOURCE_ATTRIBUTES.  The
 * runs: ok-run (agent succeeds with token usage), bad-run (agent exits 1)
 * and tp-run (succeeds, carries an otel.dev/traceparent annotation).
 * Checked, decoded with protobuf-c from what the collector stored:
 *  - metrics: sympozium.agent.runs 2 succeeded / 1 failed for instance
 *    alice, sympozium.errors 1 (error.type agent_run_failed), the
 *    duration histogram's count 2 and sum 2 x 1500 ms, under the
 *    resource upstream's buildResource makes (service.name
 *    sympozium-controller, k8s.namespace.name, k8s.pod.name,
 *    sympozium.component controller);
 *  - logs: agent.run.succeeded (INFO, with the token counts) and
 *    agent.run.failed (ERROR, with the run's error);
 *  - traces: agentrun.reconcile, agentrun.create_job and
 *    agentrun.extract_result spans; tp-run's status.traceID is the
 *    annotation's trace ID and its reconcile spans are children of the
 *    annotation's span; ok-run's status.traceID is the trace of one of
 *    its create_job spans (upstream's tracer stamps its own span).
 * Every wait is bounded; the collector exits by itself after 150 s.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "supervisor/proto/otlp.pb-c.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"

#define WAIT_MS  30000
#define NS       "default"
#define GROUP    "sympozium.ai"
#define VERSION  "v1alpha1"
#define TP_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define TP_SPAN  "00f067aa0ba902b7"

static const struct kapi_res R_INST
        = { GROUP, VERSION, "sympoziuminstances", true };
static const struct kapi_res R_RUN = { GROUP, VERSION, "agentruns", true };

static struct optest F;
static char outdir[128], portfile[160];
static pid_t receiver;

/* ---- the collector ---- */

static int
start_receiver(void)
{
	char port[32] = "";
	int64_t end = ksim_now_ms() + 10000;
	FILE *f;

	snprintf(outdir, sizeof(outdir), "/tmp/test-otel-XXXXXX");
	if (mkdtemp(outdir) == NULL) {
		return (-1);
	}
	snprintf(portfile, sizeof(portfile), "%s/port", outdir);
	receiver = fork();
	if (receiver == 0) {
		execl("/usr/bin/python3", "python3",
		        "tests/integration/otlp_receiver.py", portfile, outdir,
		        "--unavailable", "2", "--seconds", "150",
		        (char *)NULL);
		_exit(127);
	}
	while ((f = fopen(portfile, "r")) == NULL && ksim_now_ms() < end) {
		usleep(50000);
	}
	if (f == NULL) {
		fprintf(stderr,
		        "otlp_receiver.py did not start (python3-h2?)\n");
		return (-1);
	}
	if (fgets(port, sizeof(port), f) == NULL) {
		port[0] = '\0';
	}
	fclose(f);
	port[strcspn(port, "\n")] = '\0';
	{
		static char ep[64];

		snprintf(ep, sizeof(ep), "http://127.0.0.1:%s", port);
		setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ep, 1);
	}
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=team%20a", 1);
	setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test", 1);
	setenv("NAMESPACE", "sympozium-system", 1);
	setenv("POD_NAME", "sympozium-controller-0", 1);
	return (0);
}

static int
setup(void **state)
{
	static const char rules[]
	        = "{\"rules\":[{\"labelSelector\":\"sympozium.ai/"
	          "instance=alice,sympozium.ai/"
	          "agent-run!=bad-run\",\"runDuration\":\"200ms\","
	          "\"exitCode\":0,"
	          "\"logs\":{\"*\":\"__SYMPOZIUM_RESULT__{\\\"status\\\":"
	          "\\\"success\\\",\\\"response\\\":\\\"done\\\","
	          "\\\"metrics\\\":{\\\"inputTokens\\\":11,"
	          "\\\"outputTokens\\\":7,\\\"toolCalls\\\":2,"
	          "\\\"durationMs\\\":1500}}__SYMPOZIUM_END__\\n\"}},"
	          "{\"labelSelector\":\"sympozium.ai/agent-run=bad-run\","
	          "\"runDuration\":\"200ms\",\"exitCode\":1}]}";

	*state = &F;
	if (start_receiver() != 0
	        || optest_start_operator(&F, "test-otel", WAIT_MS, NULL)
	                != 0) {
		return (-1);
	}
	optest_kubelet_rules(&F, rules);
	return (0);
}

static int
teardown(void **state)
{
	int rc = optest_teardown(state);
	char cmd[256];

	if (receiver > 0) {
		kill(receiver, SIGTERM);
		waitpid(receiver, NULL, 0);
	}
	if (getenv("KEEP_TEST_DIR") == NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", outdir);
		if (system(cmd) != 0) {
			rc = -1;
		}
	}
	return (rc);
}

/* ---- what the collector stored ---- */

/* The stored requests of signal ("metrics", ...), oldest first: their
 * file names into names (at most max), how many. */
static int
stored(const char *signal, char names[][64], int max)
{
	struct dirent **ents;
	char suffix[32];
	int n = scandir(outdir, &ents, NULL, alphasort), k = 0;

	snprintf(suffix, sizeof(suffix), "-%s.pb", signal);
	for (int i = 0; i < n; i++) {
		const char *s = ents[i]->d_name;
		size_t l = strlen(s), sl = strlen(suffix);

		if (s[0] != '.' && l > sl && l < 64
		        && strcmp(s + l - sl, suffix) == 0
		        && strstr(s, "refused") == NULL && k < max) {
			memcpy(names[k++], s, l + 1);
		}
		free(ents[i]);
	}
	free(ents);
	return (k);
}

/* How many requests the collector refused. */
static int
refused(void)
{
	struct dirent **ents;
	int n = scandir(outdir, &ents, NULL, alphasort), k = 0;

	for (int i = 0; i < n; i++) {
		k += strstr(ents[i]->d_name, "-refused-") != NULL;
		free(ents[i]);
	}
	free(ents);
	return (k);
}

static void
read_stored(const char *name, struct buf *b)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	buf_reset(b);
	assert_int_equal(buf_read_file(b, path, 16u << 20), 0);
}

static const char *
attr(Otlp__KeyValue **kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(kv[i]->key, key) == 0) {
			return (kv[i]->value->value_case
			                        == OTLP__ANY_VALUE__VALUE_STRING_VALUE
			                ? kv[i]->value->string_value
			                : "(int)");
		}
	}
	return (NULL);
}

static int64_t
int_attr(Otlp__KeyValue **kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(kv[i]->key, key) == 0) {
			return (kv[i]->value->int_value);
		}
	}
	return (-1);
}

static void
hex(const ProtobufCBinaryData *d, char *out)
{
	for (size_t i = 0; i < d->len; i++) {
		sprintf(out + 2 * i, "%02x", d->data[i]);
	}
	out[2 * d->len] = '\0';
}

/* ---- runs ---- */

static void
create(const struct kapi_res *r, const char *json)
{
	json_object *o = json_tokener_parse(json);

	assert_non_null(o);
	optest_create_or_fail(&F, r, NS, o, NULL);
	json_object_put(o);
}

#define RUN(name, ann)                                                        \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"AgentRun\","    \
	"\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" NS "\"" ann    \
	"},\"spec\":{\"agentId\":\"a\",\"instanceRef\":\"alice\","            \
	"\"sessionKey\":\"s\",\"task\":\"do it\",\"model\":{\"provider\":"    \
	"\"openai\",\"model\":\"gpt\",\"authSecretRef\":\"key\"}}}"

/* The run's status once its phase is phase (asserted within WAIT_MS). */
static json_object *
wait_phase(const char *name, const char *phase)
{
	int64_t end = ksim_now_ms() + WAIT_MS;

	for (;;) {
		json_object *o = NULL;

		if (kapi_get(F.a.c, &R_RUN, NS, name, &o, NULL) == KAPI_OK
		        && strcmp(jx_get_str(o, "status.phase") != NULL
		                           ? jx_get_str(o, "status.phase")
		                           : "",
		                   phase)
		                == 0) {
			return (o);
		}
		json_object_put(o);
		if (ksim_now_ms() >= end) {
			fail_msg("%s never reached %s", name, phase);
		}
		usleep(100000);
	}
}

/* ---- checks ---- */

struct runs_seen {
	int64_t succeeded, failed, errors, hist_count;
	double hist_sum;
	bool resource_ok;
};

static void
scan_metrics(const char *name, struct runs_seen *r)
{
	struct buf b;
	Otlp__ExportMetricsServiceRequest *req;

	buf_init(&b);
	read_stored(name, &b);
	req = otlp__export_metrics_service_request__unpack(
	        NULL, b.len, (const uint8_t *)b.data);
	assert_non_null(req);
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < req->n_resource_metrics; i++) {
		Otlp__ResourceMetrics *rm = req->resource_metrics[i];
		Otlp__Resource *res = rm->resource;
		const char *ns = attr(res->attributes, res->n_attributes,
		        "k8s.namespace.name");
		const char *pod = attr(
		        res->attributes, res->n_attributes, "k8s.pod.name");

		r->resource_ok = ns != NULL && pod != NULL
		        && strcmp(attr(res->attributes, res->n_attributes,
		                          "service.name"),
		                   "sympozium-controller")
		                == 0
		        && strcmp(ns, "sympozium-system") == 0
		        && strcmp(pod, "sympozium-controller-0") == 0
		        && attr(res->attributes, res->n_attributes,
		                   "deployment.environment")
		                != NULL;
		for (size_t s = 0; s < rm->n_scope_metrics; s++) {
			Otlp__ScopeMetrics *sm = rm->scope_metrics[s];

			for (size_t m = 0; m < sm->n_metrics; m++) {
				Otlp__Metric *x = sm->metrics[m];

				if (strcmp(x->name, "sympozium.agent.runs")
				        == 0) {
					for (size_t p = 0;
					        p < x->sum->n_data_points;
					        p++) {
						Otlp__NumberDataPoint *d
						        = x->sum->data_points
						                  [p];
						const char *st = attr(
						        d->attributes,
						        d->n_attributes,
						        "sympozium.agent."
						        "status");

						assert_string_equal(
						        attr(d->attributes,
						                d->n_attributes,
						                "sympozium."
						                "instance"),
						        "alice");
						if (strcmp(st, "succeeded")
						        == 0) {
							r->succeeded
							        = d->as_int;
						} else {
							r->failed = d->as_int;
						}
					}
				} else if (strcmp(x->name, "sympozium.errors")
				        == 0) {
					assert_string_equal(
					        attr(x->sum->data_points[0]
					                        ->attributes,
					                x->sum->data_points[0]
					                        ->n_attributes,
					                "error.type"),
					        "agent_run_failed");
					r->errors = x->sum->data_points[0]
					                    ->as_int;
				} else if (strcmp(x->name,
				                   "sympozium.agent.duration_"
				                   "ms")
				        == 0) {
					r->hist_count
					        = (int64_t)x->histogram
					                  ->data_points[0]
					                  ->count;
					r->hist_sum
					        = x->histogram->data_points[0]
					                  ->sum;
				}
			}
		}
	}
	otlp__export_metrics_service_request__free_unpacked(req, NULL);
	buf_fini(&b);
}

/* Waits until the newest metrics export shows every run counted. */
static void
check_metrics(void)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	static char names[256][64];
	struct runs_seen r = { 0 };
	int n;

	for (;;) {
		n = stored("metrics", names, 256);
		if (n > 0) {
			scan_metrics(names[n - 1], &r);
			if (r.succeeded == 2 && r.failed == 1) {
				break;
			}
		}
		if (ksim_now_ms() >= end) {
			fail_msg("metrics: %d exports, last: succeeded %lld "
			         "failed %lld",
			        n, (long long)r.succeeded,
			        (long long)r.failed);
		}
		usleep(250000);
	}
	assert_true(r.resource_ok);
	assert_int_equal(r.errors, 1);
	assert_int_equal(r.hist_count, 2);
	assert_true(r.hist_sum == 3000.0);
}

static void
check_logs(void)
{
	static char names[256][64];
	int n = stored("logs", names, 256);
	bool ok = false, bad = false;
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < n; i++) {
		Otlp__ExportLogsServiceRequest *req;

		read_stored(names[i], &b);
		req = otlp__export_logs_service_request__unpack(
		        NULL, b.len, (const uint8_t *)b.data);
		assert_non_null(req);
		for (size_t k = 0; k
		        < req->resource_logs[0]->scope_logs[0]->n_log_records;
		        k++) {
			Otlp__LogRecord *l = req->resource_logs[0]
			                             ->scope_logs[0]
			                             ->log_records[k];

			if (strcmp(l->body->string_value,
			            "agent.run.succeeded")
			        == 0) {
				ok = true;
				assert_int_equal(l->severity_number, 9);
				assert_int_equal(int_attr(l->attributes,
				                         l->n_attributes,
				                         "input_tokens"),
				        11);
				assert_int_equal(int_attr(l->attributes,
				                         l->n_attributes,
				                         "duration_ms"),
				        1500);
				assert_int_equal(l->trace_id.len, 16);
			} else if (strcmp(l->body->string_value,
			                   "agent.run.failed")
			        == 0) {
				bad = true;
				assert_int_equal(l->severity_number, 17);
				assert_string_equal(
				        attr(l->attributes, l->n_attributes,
				                "agent_run"),
				        "bad-run");
				assert_non_null(attr(l->attributes,
				        l->n_attributes, "error"));
			}
		}
		otlp__export_logs_service_request__free_unpacked(req, NULL);
	}
	buf_fini(&b);
	assert_true(ok);
	assert_true(bad);
}

/* Whether some stored span of name has trace and (when parent is not
 * NULL) that parent span ID. */
static bool
span_seen(const char *name, const char *trace, const char *parent)
{
	static char names[256][64];
	int n = stored("traces", names, 256);
	bool seen = false;
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < n && !seen; i++) {
		Otlp__ExportTraceServiceRequest *req;
		Otlp__ScopeSpans *ss;

		read_stored(names[i], &b);
		req = otlp__export_trace_service_request__unpack(
		        NULL, b.len, (const uint8_t *)b.data);
		assert_non_null(req);
		ss = req->resource_spans[0]->scope_spans[0];
		assert_string_equal(
		        ss->scope->name, "sympozium.ai/controller");
		for (size_t k = 0; k < ss->n_spans && !seen; k++) {
			char t[33], p[17] = "";

			hex(&ss->spans[k]->trace_id, t);
			if (ss->spans[k]->has_parent_span_id) {
				hex(&ss->spans[k]->parent_span_id, p);
			}
			seen = strcmp(ss->spans[k]->name, name) == 0
			        && (trace == NULL || strcmp(t, trace) == 0)
			        && (parent == NULL || strcmp(p, parent) == 0);
		}
		otlp__export_trace_service_request__free_unpacked(req, NULL);
	}
	buf_fini(&b);
	return (seen);
}

static void
wait_span(const char *name, const char *trace, const char *parent)
{
	int64_t end = ksim_now_ms() + WAIT_MS;

	while (!span_seen(name, trace, parent)) {
		if (ksim_now_ms() >= end) {
			fail_msg("no span %s trace %s parent %s", name,
			        trace ? trace : "*", parent ? parent : "*");
		}
		usleep(250000);
	}
}

/* ---- the test ---- */

static void
test_signals(void **state)
{
	json_object *ok, *bad, *tp;
	char trace[33];

	(void)state;
	create(&R_INST,
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SympoziumInstance\",\"metadata\":{\"name\":\"alice\","
	        "\"namespace\":\"" NS "\"},\"spec\":{\"agents\":{\"default\":"
	        "{\"model\":\"gpt\"}}}}");
	create(&R_RUN, RUN("ok-run", ""));
	create(&R_RUN, RUN("bad-run", ""));
	create(&R_RUN,
	        RUN("tp-run",
	                ",\"annotations\":{\"otel.dev/"
	                "traceparent\":\"00-" TP_TRACE "-" TP_SPAN "-01\"}"));
	ok = wait_phase("ok-run", "Succeeded");
	bad = wait_phase("bad-run", "Failed");
	tp = wait_phase("tp-run", "Succeeded");
	/* upstream's tracer: the annotated run keeps its trace; the others
	 * get one of their own */
	assert_string_equal(jx_get_str(tp, "status.traceID"), TP_TRACE);
	assert_non_null(jx_get_str(ok, "status.traceID"));
	snprintf(trace, sizeof(trace), "%s", jx_get_str(ok, "status.traceID"));
	assert_int_equal(strlen(trace), 32);
	assert_string_not_equal(trace, TP_TRACE);
	check_metrics();
	check_logs();
	wait_span("agentrun.reconcile", TP_TRACE, TP_SPAN);
	wait_span("agentrun.create_job", trace, NULL);
	wait_span("agentrun.extract_result", NULL, NULL);
	/* the collector's first two answers were UNAVAILABLE: retried, so
	 * nothing was lost (the checks above) and nothing logged */
	assert_int_equal(refused(), 2);
	assert_int_equal(sdproc_log_count(F.sd[0].log, "otlp: export of"), 0);
	json_object_put(ok);
	json_object_put(bad);
	json_object_put(tp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
