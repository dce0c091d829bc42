/*
 * test_probe.c: the probe checks and answers of supervisor/http.c
 * (controller-runtime's healthz conventions), bind addresses, and the
 * HTTP server in process: one loop here polls both libcurl and the
 * server's descriptor (the server has no thread: it answers only when
 * http_handle() runs).
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "common/buf.h"
#include "common/timefmt.h"
#include "supervisor/http.h"
#include "supervisor/stats.h"

static struct stats *
ready_stats(void)
{
	struct stats *st = stats_new(0, 0);

	stats_add_ctl(st, "a");
	stats_add_ctl(st, "b");
	stats_add_worker(st, "a", 0);
	stats_add_worker(st, "b", 0);
	stats_add_worker(st, "b", 1);
	stats_add_kind(st, "ConfigMap", "a");
	stats_add_kind(st, "Pod", "b");
	st->kinds[0].synced = st->kinds[1].synced = st->all_synced = true;
	st->workers[0].state = STATS_W_READY;
	st->workers[1].state = STATS_W_CRASHLOOP;
	st->workers[2].state = STATS_W_BUSY;
	st->leading = true;
	return (st);
}

static int
answer(const struct stats *st, const char *one, const struct http_query *q,
        char **body)
{
	struct http_check c[HTTP_MAX_CHECKS];
	size_t n = http_ready_checks(st, c);
	struct buf b = BUF_INIT;
	int status = http_probe_answer(c, n, one, q, &b);

	buf_putc(&b, '\0');
	*body = buf_detach(&b, NULL);
	return (status);
}

static void
test_ready(void **state)
{
	struct stats *st = ready_stats();
	struct http_query v = { .verbose = true };
	char *body;

	(void)state;
	assert_int_equal(answer(st, NULL, NULL, &body), 200);
	assert_string_equal(body, "ok");
	free(body);
	assert_int_equal(answer(st, NULL, &v, &body), 200);
	assert_string_equal(body,
	        "[+]controller-a ok\n"
	        "[+]controller-b ok\n"
	        "[+]informers-synced ok\n"
	        "[+]leader-election ok\n"
	        "[+]ping ok\n"
	        "[+]workers ok\n"
	        "healthz check passed\n");
	free(body);
	/* a standby is ready; so is a replica that lost its Lease */
	st->leading = false;
	st->workers[0].state = STATS_W_STANDBY;
	st->workers[2].state = STATS_W_STANDBY;
	assert_int_equal(answer(st, NULL, NULL, &body), 200);
	free(body);
	assert_int_equal(answer(st, "leader-election", NULL, &body), 200);
	assert_string_equal(body, "ok");
	free(body);
	stats_free(st);
}

static void
test_not_ready(void **state)
{
	struct stats *st = ready_stats();
	struct http_query ex
	        = { .exclude = { "informers-synced", "nope" }, .nexclude = 2 };
	char *body;

	(void)state;
	st->kinds[1].synced = st->all_synced = false;
	assert_int_equal(answer(st, NULL, NULL, &body), 500);
	assert_string_equal(body,
	        "[+]controller-a ok\n"
	        "[+]controller-b ok\n"
	        "[-]informers-synced failed: reason "
	        "withheld\n"
	        "[+]leader-election ok\n"
	        "[+]ping ok\n"
	        "[+]workers ok\n"
	        "healthz check failed\n");
	free(body);
	assert_int_equal(answer(st, "informers-synced", NULL, &body), 500);
	assert_string_equal(body,
	        "internal server error: caches not "
	        "synced: Pod\n");
	free(body);
	assert_int_equal(answer(st, "ping", NULL, &body), 200);
	free(body);
	assert_int_equal(answer(st, "nope", NULL, &body), 404);
	free(body);
	/* excluded: ok again, listed as excluded; an unknown name warned */
	assert_int_equal(answer(st, NULL, &ex, &body), 200);
	assert_string_equal(body, "ok");
	free(body);
	ex.verbose = true;
	assert_int_equal(answer(st, NULL, &ex, &body), 200);
	assert_non_null(strstr(body, "[+]informers-synced excluded: ok\n"));
	assert_non_null(strstr(body, "no matches for \"nope\""));
	free(body);
	/* workers: b has none serving */
	st->kinds[1].synced = st->all_synced = true;
	st->workers[2].state = STATS_W_RESTARTING;
	assert_int_equal(answer(st, "workers", NULL, &body), 500);
	assert_string_equal(body,
	        "internal server error: controller b has "
	        "no ready worker\n");
	free(body);
	/* ... unless b is paused */
	st->ctls[1].paused = true;
	assert_int_equal(answer(st, NULL, NULL, &body), 200);
	free(body);
	/* not synced before the first LIST, even with no kind flagged */
	st->all_synced = false;
	assert_int_equal(answer(st, "informers-synced", NULL, &body), 500);
	free(body);
	stats_free(st);
}

/* A degraded controller is named, with its reason, and stays ready (its
 * workers being down does not fail "workers" either); a failed one fails
 * readiness. */
static void
test_controller_checks(void **state)
{
	struct stats *st = ready_stats();
	struct http_query v = { .verbose = true };
	char *body;

	(void)state;
	st->ctls[1].fault = FAULT_DEGRADED;
	snprintf(st->ctls[1].fault_reason, sizeof(st->ctls[1].fault_reason),
	        "workers died on 3 different keys in a row (last: exit 3 on "
	        "ns/c)");
	st->workers[1].state = STATS_W_RESTARTING;
	st->workers[2].state = STATS_W_RESTARTING;
	assert_int_equal(answer(st, NULL, &v, &body), 200);
	assert_string_equal(body,
	        "[+]controller-a ok\n"
	        "[+]controller-b degraded: workers died on 3 different keys "
	        "in a row (last: exit 3 on ns/c)\n"
	        "[+]informers-synced ok\n"
	        "[+]leader-election ok\n"
	        "[+]ping ok\n"
	        "[+]workers ok\n"
	        "healthz check passed\n");
	free(body);
	assert_int_equal(answer(st, "controller-b", NULL, &body), 200);
	assert_string_equal(body,
	        "degraded: workers died on 3 different keys in a row (last: "
	        "exit 3 on ns/c)");
	free(body);
	st->ctls[1].fault = FAULT_FAILED;
	snprintf(st->ctls[1].fault_reason, sizeof(st->ctls[1].fault_reason),
	        "exit 100 (permanent failure: unknown controller \"b\")");
	st->workers[1].state = STATS_W_FAILED;
	st->workers[2].state = STATS_W_FAILED;
	assert_int_equal(answer(st, NULL, NULL, &body), 500);
	assert_string_equal(body,
	        "[+]controller-a ok\n"
	        "[-]controller-b failed: reason withheld\n"
	        "[+]informers-synced ok\n"
	        "[+]leader-election ok\n"
	        "[+]ping ok\n"
	        "[+]workers ok\n"
	        "healthz check failed\n");
	free(body);
	assert_int_equal(answer(st, "controller-b", NULL, &body), 500);
	assert_string_equal(body,
	        "internal server error: failed: exit 100 (permanent failure: "
	        "unknown controller \"b\")\n");
	free(body);
	stats_free(st);
}

/* One informer-<resource> check per resource: its oldest cache against
 * the staleness limit; the age shown in the listing. */
static void
test_stale_cache(void **state)
{
	struct stats *st = ready_stats();
	struct http_query v = { .verbose = true };
	const char *res[] = { "agentruns", "pods", "agentruns" };
	char *body;

	(void)state;
	stats_add_kind(st, "AgentRun", "b");
	st->kinds[2].synced = true;
	for (size_t i = 0; i < 3; i++) {
		snprintf(st->kinds[i].resource, sizeof(st->kinds[i].resource),
		        "%s", res[i]);
		snprintf(st->kinds[i].check, sizeof(st->kinds[i].check),
		        "informer-%s", res[i]);
	}
	st->cache_stale_ms = 300000;
	st->kinds[0].age_ms = 0;
	st->kinds[1].age_ms = 2500;
	st->kinds[2].age_ms = 300000; /* at the limit: still ready */
	assert_int_equal(answer(st, NULL, &v, &body), 200);
	assert_string_equal(body,
	        "[+]controller-a ok\n"
	        "[+]controller-b ok\n"
	        "[+]informers-synced ok\n"
	        "[+]leader-election ok\n"
	        "[+]ping ok\n"
	        "[+]workers ok\n"
	        "[+]informer-agentruns ok (age 300s)\n"
	        "[+]informer-pods ok (age 2s)\n"
	        "healthz check passed\n");
	free(body);
	st->kinds[2].age_ms = 312000;
	assert_int_equal(answer(st, NULL, NULL, &body), 500);
	assert_non_null(strstr(body,
	        "[-]informer-agentruns failed: reason withheld (age 312s)\n"));
	free(body);
	assert_int_equal(answer(st, "informer-agentruns", NULL, &body), 500);
	assert_string_equal(body,
	        "internal server error: cache of agentruns is 312s old "
	        "(limit 300s)\n");
	free(body);
	assert_int_equal(answer(st, "informer-pods", NULL, &body), 200);
	free(body);
	/* excluded like any check */
	struct http_query ex
	        = { .exclude = { "informer-agentruns" }, .nexclude = 1 };
	assert_int_equal(answer(st, NULL, &ex, &body), 200);
	free(body);
	stats_free(st);
}

static void
test_live(void **state)
{
	struct http_check c[HTTP_MAX_CHECKS];
	struct buf b = BUF_INIT;
	size_t n = http_live_checks(c);

	(void)state;
	assert_int_equal(n, 1);
	assert_int_equal(http_probe_answer(c, n, NULL, NULL, &b), 200);
	assert_int_equal(http_probe_answer(c, n, "ping", NULL, &b), 200);
	buf_putc(&b, '\0');
	assert_string_equal(buf_str(&b), "okok");
	buf_fini(&b);
}

static void
test_addr(void **state)
{
	char h[64];
	int port;

	(void)state;
	assert_true(http_disabled("0"));
	assert_true(http_disabled(""));
	assert_true(http_disabled(NULL));
	assert_false(http_disabled(":0"));
	assert_int_equal(http_parse_addr(":8080", h, sizeof(h), &port), 0);
	assert_string_equal(h, "");
	assert_int_equal(port, 8080);
	assert_int_equal(
	        http_parse_addr("127.0.0.1:0", h, sizeof(h), &port), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(port, 0);
	assert_int_equal(http_parse_addr("[::1]:81", h, sizeof(h), &port), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(port, 81);
	assert_int_equal(http_parse_addr("8080", h, sizeof(h), &port), -1);
	assert_int_equal(http_parse_addr(":", h, sizeof(h), &port), -1);
	assert_int_equal(http_parse_addr(":65536", h, sizeof(h), &port), -1);
	assert_int_equal(http_parse_addr(":-1", h, sizeof(h), &port), -1);
	assert_int_equal(http_parse_addr(":80x", h, sizeof(h), &port), -1);
	assert_int_equal(http_parse_addr("::1:80", h, sizeof(h), &port), -1);
	assert_int_equal(http_parse_addr("[::1]80", h, sizeof(h), &port), -1);
}

/* ---- the server in process ---- */

static int calls;

static int
fn(void *arg, const char *path, const struct http_query *q, struct buf *body,
        const char **ctype)
{
	(void)arg;
	calls++;
	*ctype = "text/x-test";
	buf_printf(body, "%s v=%d n=%zu x0=%s", path, q->verbose, q->nexclude,
	        q->nexclude > 0 ? q->exclude[0] : "-");
	return (strcmp(path, "/gone") == 0 ? 404 : 200);
}

static size_t
collect(char *p, size_t sz, size_t n, void *arg)
{
	buf_append(arg, p, sz * n);
	return (sz * n);
}

/* GETs url with one loop polling curl and the server. */
static long
get(struct http *h, const char *url, const char *method, char **body,
        char **ctype)
{
	CURLM *m = curl_multi_init();
	CURL *e = curl_easy_init();
	struct buf b = BUF_INIT;
	int running = 1;
	long code = 0;
	char *ct = NULL;
	int64_t end = timefmt_now_ms_mono() + 5000;

	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
	if (method != NULL) {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	}
	curl_multi_add_handle(m, e);
	while (running > 0 && timefmt_now_ms_mono() < end) {
		struct pollfd pf[1];
		size_t n = http_fds(h, pf, 1);
		struct curl_waitfd wf = { pf[0].fd, CURL_WAIT_POLLIN, 0 };
		assert_int_equal(n, 1);
		curl_multi_perform(m, &running);
		curl_multi_wait(m, &wf, 1, 50, NULL);
		http_handle(h);
	}
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct);
	*ctype = strdup(ct != NULL ? ct : "");
	curl_multi_remove_handle(m, e);
	curl_easy_cleanup(e);
	curl_multi_cleanup(m);
	buf_putc(&b, '\0');
	*body = buf_detach(&b, NULL);
	return (code);
}

static void
test_server(void **state)
{
	char err[256], url[128], *body, *ct;
	struct http *h
	        = http_new("test", "127.0.0.1:0", fn, NULL, err, sizeof(err));
	struct http *h2;

	(void)state;
	assert_non_null(h);
	assert_true(http_port(h) > 0);
	snprintf(url, sizeof(url),
	        "http://%s/readyz?verbose&exclude=a&"
	        "exclude=b",
	        http_addr(h));
	assert_int_equal(get(h, url, NULL, &body, &ct), 200);
	assert_string_equal(body, "/readyz v=1 n=2 x0=a");
	assert_string_equal(ct, "text/x-test");
	free(body);
	free(ct);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/gone", http_port(h));
	assert_int_equal(get(h, url, NULL, &body, &ct), 404);
	free(body);
	free(ct);
	calls = 0;
	assert_int_equal(get(h, url, "POST", &body, &ct), 405);
	assert_int_equal(calls, 0);
	free(body);
	free(ct);
	/* the port is taken: a clear error */
	h2 = http_new("metrics", http_addr(h), fn, NULL, err, sizeof(err));
	assert_null(h2);
	assert_non_null(strstr(err, "metrics: listen"));
	assert_non_null(strstr(err, "in use"));
	assert_null(http_new("x", "nonsense", fn, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "bad bind address"));
	/* deadlines: none or soon */
	assert_true(http_next_deadline(h, 100) == -1
	        || http_next_deadline(h, 100) >= 100);
	http_free(h);
	http_free(NULL);
	assert_int_equal(http_fds(NULL, NULL, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ready),
		cmocka_unit_test(test_not_ready),
		cmocka_unit_test(test_controller_checks),
		cmocka_unit_test(test_stale_cache),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_server),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return (rc);
}
