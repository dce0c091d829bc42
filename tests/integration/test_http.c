/*
 * test_http.c: sympoziumd's HTTP endpoints end to end (issue 6 item 3):
 * bin/sympoziumd with the test controller against bin/kubesim, its first
 * LISTs delayed so the caches sync late.  /healthz answers at once,
 * /readyz is 500 before the caches sync (informers-synced named as
 * failed) and 200 after with every check named in ?verbose; /metrics
 * parses and carries the required names, reconcile_total grows after a
 * reconcile; answers stay fast while the worker is SIGSTOPped; ":0" picks
 * a free port, "0" turns an endpoint off, a bad address fails the start.
 * Controller faults: testctl crashing on every key (one switch ConfigMap)
 * is Degraded in /readyz?verbose, sympoziumctl status, /metrics and one
 * log line, with /healthz and /readyz 200, and recovers by itself once the
 * switch is off; a worker exiting 100 is not restarted, its controller
 * fails readiness (not liveness) until sympoziumctl restart.
 * A policy violation (issue 15): a RESULT with a delete outside the key's
 * namespace is refused whole (kubesim's request log: neither of its
 * writes was sent), the worker is killed and the key quarantined at
 * once, with a PolicyViolation Event, the error line, the metric
 * sympozium_policy_violations_total and the count in sympoziumctl status.
 *
 * Processes are signalled only by the pids this test started or found as
 * the supervisor's children in /proc.  Every wait is bounded.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS   20000
#define ANSWER_MS 500

static int
free_port(void)
{
	int port = testutil_free_port();

	assert_true(port > 0);
	return (port);
}

/* The log's text from needle on (caller frees), waiting up to ms; NULL
 * when it did not come. */
static char *
log_wait(struct optest *f, const char *needle, int ms)
{
	char *t, *p, *r;

	if (!sdproc_log_wait(&f->sd[0], needle, 1, ms)) {
		return (NULL);
	}
	t = sdproc_log_text(f->sd[0].log);
	p = strstr(t, needle);
	r = p != NULL ? xstrdup(p) : NULL;
	free(t);
	return (r);
}

/* Starts the supervisor (testctl) with its metrics and probes on maddr
 * and paddr. */
static void
sd_start(struct optest *f, const char *maddr, const char *paddr)
{
	const char *args[] = { "--health-socket", f->sock, "--shutdown-grace",
		"1s", "--metrics-bind-address", maddr,
		"--health-probe-bind-address", paddr, NULL };

	optest_sd_start(f, 0, OPTEST_SD_TESTCTL | OPTEST_SD_HTTP, args);
}

/* ---- HTTP ---- */

static size_t
collect(char *p, size_t sz, size_t n, void *arg)
{
	buf_append(arg, p, sz * n);
	return (sz * n);
}

/* GET http://127.0.0.1:port path; returns the status (0: no answer) and
 * the body (caller frees), and how long it took. */
static long
get(int port, const char *path, char **body, int64_t *ms)
{
	CURL *e = curl_easy_init();
	struct buf b = BUF_INIT;
	char url[256];
	long code = 0;
	int64_t t0 = ksim_now_ms();

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 5000L);
	if (curl_easy_perform(e) == CURLE_OK) {
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	}
	curl_easy_cleanup(e);
	if (ms != NULL) {
		*ms = ksim_now_ms() - t0;
	}
	buf_putc(&b, '\0');
	if (body != NULL) {
		*body = buf_detach(&b, NULL);
	} else {
		buf_fini(&b);
	}
	return (code);
}

static bool
wait_code(int port, const char *path, long want, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	do {
		if (get(port, path, NULL, NULL) == want) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

/* The value of the sample line starting with `series ` in a page, or -1;
 * asserts the page is well formed (comments or "name{...} value"). */
static double
metric(const char *page, const char *series)
{
	char *t = xstrdup(page), *save = NULL;
	double v = -1;

	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(l, ' ');
		if (l[0] == '#') {
			assert_true(strncmp(l, "# HELP ", 7) == 0
			        || strncmp(l, "# TYPE ", 7) == 0);
			continue;
		}
		assert_non_null(sp);
		char *end;
		double x = strtod(sp + 1, &end);
		assert_true(end != sp + 1 && *end == '\0');
		if ((size_t)(sp - l) == strlen(series)
		        && strncmp(l, series, strlen(series)) == 0) {
			v = x;
		}
	}
	free(t);
	return (v);
}

/* ---- fixture ---- */

/* The supervisor's caches sync late: every LIST waits 5 s. */
static int
setup(void **state)
{
	static const char *const args[]
	        = { "--fault", "verb=list,delay=5s", NULL };

	*state = optest_testctl_new("test-http", args, WAIT_MS);
	return (*state != NULL ? 0 : -1);
}

/* ---- tests ---- */

static void
test_probes(void **state)
{
	struct optest *f = *state;
	char ma[32], pa[32], *body;
	int mport = free_port(), pport = free_port();

	snprintf(ma, sizeof(ma), "127.0.0.1:%d", mport);
	snprintf(pa, sizeof(pa), "127.0.0.1:%d", pport);
	sd_start(f, ma, pa);
	/* alive at once; not ready while the LISTs wait */
	assert_true(wait_code(pport, "/healthz", 200, WAIT_MS));
	assert_int_equal(get(pport, "/readyz", &body, NULL), 500);
	assert_non_null(strstr(body,
	        "[-]informers-synced failed: reason "
	        "withheld\n"));
	assert_non_null(strstr(body, "healthz check failed"));
	free(body);
	assert_int_equal(
	        get(pport, "/readyz/informers-synced", &body, NULL), 500);
	assert_non_null(strstr(body, "caches not synced"));
	free(body);
	assert_int_equal(get(pport, "/readyz/ping", NULL, NULL), 200);
	/* the worker is up before the LISTs answer (5 s) */
	assert_true(wait_code(pport, "/readyz/workers", 200, 4000));
	assert_int_equal(
	        get(pport, "/readyz?exclude=informers-synced", NULL, NULL),
	        200);
	/* ready once synced, every check named */
	assert_true(wait_code(pport, "/readyz", 200, WAIT_MS));
	assert_int_equal(get(pport, "/readyz?verbose", &body, NULL), 200);
	assert_string_equal(body,
	        "[+]controller-testctl ok\n"
	        "[+]informers-synced ok\n"
	        "[+]leader-election ok\n"
	        "[+]ping ok\n"
	        "[+]workers ok\n"
	        "[+]informer-configmaps ok (age 0s)\n"
	        "healthz check passed\n");
	free(body);
	assert_int_equal(get(pport, "/healthz?verbose", &body, NULL), 200);
	assert_string_equal(body, "[+]ping ok\nhealthz check passed\n");
	free(body);
	assert_int_equal(get(pport, "/healthz/ping", NULL, NULL), 200);
	assert_int_equal(get(pport, "/readyz/nope", NULL, NULL), 404);
	assert_int_equal(get(pport, "/metrics", NULL, NULL), 404);
	assert_int_equal(get(mport, "/healthz", NULL, NULL), 404);
}

static void
test_metrics(void **state)
{
	struct optest *f = *state;
	char ma[32], *page;
	const char *ok = "controller_runtime_reconcile_total{controller="
	                 "\"testctl\",result=\"success\"}";
	const char *rss = "sympozium_worker_resident_memory_bytes{controller="
	                  "\"testctl\",worker=\"testctl-0\"}";
	int mport = free_port();

	snprintf(ma, sizeof(ma), "127.0.0.1:%d", mport);
	sd_start(f, ma, "0");
	char *l = log_wait(f, "leading (epoch", WAIT_MS);
	assert_non_null(l);
	free(l);
	assert_true(wait_code(mport, "/metrics", 200, WAIT_MS));
	/* a worker's memory shows once it runs */
	int64_t end = ksim_now_ms() + WAIT_MS;
	do {
		assert_int_equal(get(mport, "/metrics", &page, NULL), 200);
		bool up = metric(page, rss) > 100000;
		if (!up) {
			free(page);
			ksim_sleep_ms(50);
			continue;
		}
		break;
	} while (ksim_now_ms() < end);
	for (size_t i = 0; sdproc_metric_names[i] != NULL; i++) {
		char help[200];
		snprintf(help, sizeof(help), "# HELP %s ",
		        sdproc_metric_names[i]);
		if (strstr(page, help) == NULL) {
			fail_msg("missing %s", sdproc_metric_names[i]);
		}
	}
	assert_true(metric(page, rss) > 100000);
	assert_true(metric(page, "process_resident_memory_bytes") > 100000);
	assert_true(metric(page, "process_open_fds") >= 5);
	assert_true(metric(page,
	                    "leader_election_master_status{name="
	                    "\"sympozium-controller-leader\"}")
	        == 1);
	double before = metric(page, ok);
	assert_true(before >= 0);
	free(page);
	/* a reconcile: reconcile_total and the queue's counters grow */
	optest_testctl_create(f, "m1", true, NULL);
	end = ksim_now_ms() + WAIT_MS;
	double now = before;
	page = NULL;
	while (ksim_now_ms() < end) {
		ksim_sleep_ms(50);
		assert_int_equal(get(mport, "/metrics", &page, NULL), 200);
		now = metric(page, ok);
		if (now > before) {
			break;
		}
		free(page);
		page = NULL;
	}
	assert_non_null(page);
	assert_true(now > before);
	assert_true(metric(page,
	                    "workqueue_adds_total{controller=\"testctl\","
	                    "name=\"testctl\"}")
	        >= 1);
	assert_true(metric(page,
	                    "controller_runtime_reconcile_time_seconds_"
	                    "count{controller=\"testctl\"}")
	        >= 1);
	assert_true(metric(page,
	                    "workqueue_work_duration_seconds_count{"
	                    "controller=\"testctl\",name=\"testctl\"}")
	        >= 1);
	assert_non_null(strstr(page,
	        "rest_client_requests_total{code=\"200\","
	        "host=\"127.0.0.1:"));
	free(page);

	/* the worker SIGSTOPped: answers stay fast */
	pid_t kids[16];
	int nkids = sdproc_workers(&f->sd[0], kids, 16);
	assert_true(nkids >= 1);
	for (int j = 0; j < nkids; j++) {
		kill(kids[j], SIGSTOP);
	}
	for (int i = 0; i < 10; i++) {
		int64_t ms;
		assert_int_equal(get(mport, "/metrics", &page, &ms), 200);
		assert_true(ms <= ANSWER_MS);
		free(page);
	}
	for (int j = 0; j < nkids; j++) {
		kill(kids[j], SIGCONT);
	}
}

static void
test_ports(void **state)
{
	struct optest *f = *state;
	char *l, *p;
	int st;

	/* ":0": a free port, logged; "0": off */
	sd_start(f, ":0", "0");
	l = log_wait(f, "metrics on http://", WAIT_MS);
	assert_non_null(l);
	p = strstr(l, "]:");
	assert_non_null(p);
	int port = atoi(p + 2);
	assert_true(port > 0);
	free(l);
	assert_true(wait_code(port, "/metrics", 200, WAIT_MS));
	l = sdproc_log_text(f->sd[0].log);
	assert_null(strstr(l, "health probes on"));
	free(l);
	kill(f->sd[0].pid, SIGTERM);
	assert_int_equal(waitpid(f->sd[0].pid, &st, 0), f->sd[0].pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a bad address, and a port in use: the start fails, saying why */
	sd_start(f, "nonsense", "0");
	assert_int_equal(waitpid(f->sd[0].pid, &st, 0), f->sd[0].pid);
	f->sd[0].pid = 0;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	l = log_wait(f, "bad bind address", 2000);
	assert_non_null(l);
	free(l);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	char pa[32];
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(pa, sizeof(pa), "127.0.0.1:%d", ntohs(sa.sin_port));
	sd_start(f, "0", pa);
	assert_int_equal(waitpid(f->sd[0].pid, &st, 0), f->sd[0].pid);
	f->sd[0].pid = 0;
	close(fd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	l = log_wait(f, "--health-probe-bind-address: listen", 2000);
	assert_non_null(l);
	free(l);
}

/* ---- controller faults ---- */

#define CM_PATH "/api/v1/namespaces/default/configmaps"
#define SWITCH  "switch:default/testctl-switch"

/* PUTs data.action of ConfigMap default/NAME (POST when create). */
static void
cm_action(struct optest *f, const char *name, const char *action, bool create)
{
	char body[256], path[160];
	struct ksim_resp *r;

	snprintf(body, sizeof(body),
	        "{\"metadata\":{\"name\":\"%s\"},\"data\":{\"action\":"
	        "\"%s\"}}",
	        name, action);
	snprintf(path, sizeof(path), CM_PATH "%s%s", create ? "" : "/",
	        create ? "" : name);
	r = ksim_request(ksim_url(f->a.k), create ? "POST" : "PATCH", path,
	        create ? "application/json" : "application/merge-patch+json",
	        body, NULL, 0);
	assert_int_equal(r->code, create ? 201 : 200);
	ksim_resp_free(r);
}

/* Starts the supervisor with its endpoints on free ports and a 2 s
 * recovery; returns when /readyz is 200. */
static void
sd_start_fault(struct optest *f, int mport, int pport)
{
	char ma[32], pa[32];
	const char *args[] = { "--health-socket", f->sock, "--shutdown-grace",
		"1s", "--metrics-bind-address", ma,
		"--health-probe-bind-address", pa, "--controller-recovery",
		"2s", NULL };

	snprintf(ma, sizeof(ma), "127.0.0.1:%d", mport);
	snprintf(pa, sizeof(pa), "127.0.0.1:%d", pport);
	optest_sd_start(f, 0, OPTEST_SD_TESTCTL | OPTEST_SD_HTTP, args);
	assert_true(wait_code(pport, "/readyz", 200, WAIT_MS));
}

/* GET path, asserting status; the body (caller frees). */
static char *
get_code(int port, const char *path, long want)
{
	char *body = NULL;
	long code = get(port, path, &body, NULL);

	if (code != want) {
		print_error("%s: %ld, want %ld: %s\n", path, code, want, body);
	}
	assert_int_equal(code, want);
	return (body);
}

static double
metric_now(int mport, const char *series)
{
	char *page = get_code(mport, "/metrics", 200);
	double v = metric(page, series);

	free(page);
	return (v);
}

/* sympoziumctl status holds every needle. */
static void
status_has(struct optest *f, const char *a, const char *b)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "status", NULL);

	assert_int_equal(r.rc, 0);
	if (strstr(r.out, a) == NULL || strstr(r.out, b) == NULL) {
		print_error("status:\n%s\n", r.out);
	}
	assert_non_null(strstr(r.out, a));
	assert_non_null(strstr(r.out, b));
	sdproc_ctl_free(&r);
}

#define DEGRADED_M "sympozium_controller_degraded{controller=\"testctl\"}"
#define FAILED_M   "sympozium_controller_failed{controller=\"testctl\"}"
#define FAULTS_M   "sympozium_controller_faults_total{controller=\"testctl\"}"
#define QUAR_M     "sympozium_worker_quarantined_keys{controller=\"testctl\"}"

static void
test_controller_fault(void **state)
{
	struct optest *f = *state;
	int mport = free_port(), pport = free_port();
	char *l, *body, name[16];

	sd_start_fault(f, mport, pport);
	cm_action(f, "testctl-switch", "exit:3", true);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		optest_testctl_create(f, name, true, SWITCH);
	}
	l = log_wait(f,
	        "controller testctl degraded: workers died on 3 different "
	        "keys in a row (last: exit 3 on default/c",
	        WAIT_MS);
	assert_non_null(l);
	assert_non_null(strstr(l, "); restarting with backoff 500 ms\n"));
	free(l);
	/* more deaths: no key is quarantined while Degraded */
	assert_true(sdproc_log_wait(&f->sd[0], "exited: exit 3", 6, WAIT_MS));
	free(get_code(pport, "/healthz", 200));
	free(get_code(pport, "/readyz", 200));
	body = get_code(pport, "/readyz?verbose", 200);
	assert_non_null(strstr(
	        body, "[+]controller-testctl degraded: workers died on "));
	assert_non_null(strstr(body, "[+]workers ok\n"));
	free(body);
	status_has(f, "testctl          degraded ", "testctl degraded for ");
	assert_true(metric_now(mport, DEGRADED_M) == 1);
	assert_true(metric_now(mport, FAULTS_M) == 1);
	assert_true(metric_now(mport, QUAR_M) == 0);
	assert_int_equal(sdproc_log_count(f->sd[0].log, "quarantined:"), 0);
	/* the fault goes away: it recovers by itself, every key converges */
	cm_action(f, "testctl-switch", "ok", false);
	l = log_wait(f,
	        "controller testctl recovered: a worker completed a "
	        "reconcile and stayed up 2 s",
	        WAIT_MS);
	assert_non_null(l);
	free(l);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
	}
	body = get_code(pport, "/readyz?verbose", 200);
	assert_non_null(strstr(body, "[+]controller-testctl ok\n"));
	free(body);
	status_has(f, "testctl          active ", "caches");
	assert_true(metric_now(mport, DEGRADED_M) == 0);
	assert_true(metric_now(mport, FAULTS_M) == 1);
	assert_int_equal(
	        sdproc_log_count(f->sd[0].log, "controller testctl degraded"),
	        1);
}

static void
test_permanent_failure(void **state)
{
	struct optest *f = *state;
	int mport = free_port(), pport = free_port();
	char *l, *body;

	sd_start_fault(f, mport, pport);
	cm_action(f, "perm", "exit:100", true);
	optest_testctl_create(f, "p", true, "switch:default/perm");
	l = log_wait(f,
	        "controller testctl failed: worker testctl-0 exit 100 "
	        "(permanent failure); not restarted (sympoziumctl restart "
	        "testctl starts it again)",
	        WAIT_MS);
	assert_non_null(l);
	free(l);
	free(get_code(pport, "/healthz", 200));
	body = get_code(pport, "/readyz?verbose", 500);
	assert_non_null(strstr(
	        body, "[-]controller-testctl failed: reason withheld\n"));
	free(body);
	body = get_code(pport, "/readyz/controller-testctl", 500);
	assert_non_null(strstr(body,
	        "internal server error: failed: exit 100 (permanent "
	        "failure)"));
	free(body);
	status_has(f, "testctl          failed ", "testctl failed for ");
	assert_true(metric_now(mport, FAILED_M) == 1);
	assert_true(metric_now(mport,
	                    "sympozium_worker_state{controller=\"testctl\","
	                    "state=\"failed\",worker=\"testctl-0\"}")
	        == 1);
	/* not respawned: no other start within a second and a half */
	ksim_sleep_ms(1500);
	assert_int_equal(
	        sdproc_log_count(f->sd[0].log, "exited: exit 100"), 1);
	assert_int_equal(sdproc_workers(&f->sd[0], NULL, 0), 0);
	/* fixed, then restarted by the operator: it runs again */
	cm_action(f, "perm", "ok", false);
	struct sdproc_ctl r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "restart", "testctl", NULL);
	assert_int_equal(r.rc, 0);
	sdproc_ctl_free(&r);
	assert_true(optest_testctl_wait_out(f, "p", WAIT_MS, NULL));
	assert_true(wait_code(pport, "/readyz", 200, WAIT_MS));
	assert_true(metric_now(mport, FAILED_M) == 0);
}

/* ---- failing watches ---- */

#define STALE_LIMIT_S 3
#define FAIL_MS       (STALE_LIMIT_S * 1000 + 4000) /* the fault's length */

/* kubesim admin request; returns the HTTP status. */
static long
admin(struct optest *f, const char *method, const char *path, const char *body)
{
	struct ksim_resp *r = ksim_request(ksim_url(f->a.k), method, path,
	        body != NULL ? "application/json" : NULL, body, NULL, 10000);
	long code = r->code;

	ksim_resp_free(r);
	return (code);
}

static double
cache_age(int mport)
{
	char *page = NULL;
	double v;

	assert_int_equal(get(mport, "/metrics", &page, NULL), 200);
	v = metric(
	        page, "sympozium_cache_age_seconds{resource=\"configmaps\"}");
	free(page);
	return (v);
}

/*
 * kubesim answers every list and watch of configmaps 503 for FAIL_MS (the
 * open watches closed): one warning per source (testctl has two), the
 * cache's age grows in /readyz?verbose and the metric, /readyz fails once
 * past --cache-staleness-limit while /healthz stays 200; after the fault,
 * one "recovered" line per source and /readyz is 200 again.
 */
static void
test_failing_watch(void **state)
{
	struct optest *f = *state;
	char ma[32], pa[32], *body, *text;
	int mport = free_port(), pport = free_port();
	const char *args[] = { "--health-socket", f->sock, "--shutdown-grace",
		"1s", "--metrics-bind-address", ma,
		"--health-probe-bind-address", pa, "--cache-staleness-limit",
		"3s", NULL };
	int64_t t0;

	snprintf(ma, sizeof(ma), "127.0.0.1:%d", mport);
	snprintf(pa, sizeof(pa), "127.0.0.1:%d", pport);
	optest_sd_start(f, 0, OPTEST_SD_TESTCTL | OPTEST_SD_HTTP, args);
	assert_true(wait_code(pport, "/readyz", 200, WAIT_MS));
	ksim_sleep_ms(1200); /* the watches open for good */
	assert_true(cache_age(mport) == 0);
	assert_int_equal(admin(f, "POST", "/_kubesim/faults",
	                         "{\"verbs\":[\"list\",\"watch\"],"
	                         "\"resource\":\"configmaps\",\"code\":503}"),
	        201);
	assert_int_equal(
	        admin(f, "POST", "/_kubesim/close-watches", NULL), 200);
	t0 = ksim_now_ms();
	assert_true(wait_code(pport, "/readyz", 500, FAIL_MS + 2000));
	assert_true(ksim_now_ms() - t0 >= STALE_LIMIT_S * 1000 - 500);
	assert_int_equal(get(pport, "/healthz", NULL, NULL), 200);
	assert_int_equal(get(pport, "/readyz?verbose", &body, NULL), 500);
	assert_non_null(strstr(
	        body, "[-]informer-configmaps failed: reason withheld (age "));
	free(body);
	assert_int_equal(
	        get(pport, "/readyz/informer-configmaps", &body, NULL), 500);
	assert_non_null(strstr(body, "cache of configmaps is "));
	free(body);
	assert_true(cache_age(mport) >= STALE_LIMIT_S);
	while (ksim_now_ms() - t0 < FAIL_MS) {
		assert_int_equal(get(pport, "/healthz", NULL, NULL), 200);
		ksim_sleep_ms(200);
	}
	assert_int_equal(admin(f, "DELETE", "/_kubesim/faults", NULL), 200);
	/* the reflectors' backoff after a few seconds of failures: < 30 s */
	assert_true(wait_code(pport, "/readyz", 200, 40000));
	assert_true(sdproc_log_wait(&f->sd[0], "recovered after", 2, 40000));
	text = sdproc_log_text(f->sd[0].log);
	/* one warning and one recovery per failing source, whatever the
	 * number of retries */
	assert_int_equal(sdproc_count(text, "of configmaps "), 4);
	assert_int_equal(sdproc_count(text, " failing: "), 2);
	assert_int_equal(sdproc_count(text, "recovered after"), 2);
	assert_null(strstr(text, "after 1 failure(s)")); /* it was retried */
	free(text);
	assert_true(cache_age(mport) < STALE_LIMIT_S);
}

#define VIOL_M                                                                \
	"sympozium_policy_violations_total{controller=\"testctl\","           \
	"rule=\"namespace\"}"

/* The VIOL column of testctl's row of sympoziumctl status, or -1. */
static long
ctl_violations(struct optest *f)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "status", NULL);
	const char *row = strstr(r.out, "\ntestctl ");
	char cols[13][32];
	long v = -1;

	if (row != NULL
	        && sscanf(row, "%31s %31s %31s %31s %31s %31s %31s %31s",
	                   cols[0], cols[1], cols[2], cols[3], cols[4],
	                   cols[5], cols[6], cols[7])
	                == 8
	        && strstr(r.out, "QUARANT VIOL") != NULL) {
		v = strtol(cols[7], NULL, 10);
	}
	sdproc_ctl_free(&r);
	return (v);
}

static void
test_policy_violation(void **state)
{
	static const struct kapi_res cms = { "", "v1", "configmaps", true };
	struct optest *f = *state;
	int mport = free_port();
	char ma[32], *l;
	json_object *evs, *victim;

	snprintf(ma, sizeof(ma), "127.0.0.1:%d", mport);
	assert_int_equal(
	        ksim_api_create(&f->a, &cms, "kube-system", "victim", NULL),
	        KAPI_OK);
	sd_start(f, ma, "0");
	l = log_wait(f, "leading (epoch", WAIT_MS);
	assert_non_null(l);
	free(l);
	optest_testctl_create(
	        f, "intruder", true, "foreign:kube-system/victim");
	l = log_wait(f, "default/intruder quarantined", WAIT_MS);
	if (l == NULL) {
		sdproc_dump_log(f->sd[0].log);
		fail_msg("default/intruder was not quarantined");
	}
	free(l);
	/* loud: the line naming controller, key and rule; the kill */
	assert_int_equal(sdproc_log_count(f->sd[0].log,
	                         "testctl: default/intruder: policy violation "
	                         "(namespace): write 1: delete configmaps in "
	                         "namespace \"kube-system\""),
	        1);
	assert_int_equal(sdproc_log_count(f->sd[0].log,
	                         "policy violation (namespace): write 1: "
	                         "delete configmaps in namespace "
	                         "\"kube-system\"; killing it"),
	        1);
	/* contained: nothing of the RESULT reached the API server */
	assert_int_equal(ksim_count_log(f->a.request_log, "DELETE",
	                         "/configmaps/victim", "sympoziumd"),
	        0);
	assert_int_equal(ksim_count_log(f->a.request_log, "POST",
	                         "/configmaps", "sympoziumd"),
	        0);
	assert_false(optest_testctl_has_out(f, "intruder"));
	victim = optest_get(f, &cms, "kube-system", "victim");
	assert_non_null(victim);
	json_object_put(victim);
	/* the Event, the metric, the count in sympoziumctl */
	for (int64_t end = ksim_now_ms() + WAIT_MS;; ksim_sleep_ms(50)) {
		evs = optest_events(
		        f, "default", "intruder", "PolicyViolation");
		if (json_object_array_length(evs) > 0 || ksim_now_ms() > end) {
			break;
		}
		json_object_put(evs);
	}
	assert_int_equal(json_object_array_length(evs), 1);
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(evs, 0), "type"),
	        "Warning");
	json_object_put(evs);
	assert_true(wait_code(mport, "/metrics", 200, WAIT_MS));
	assert_true(metric_now(mport, VIOL_M) == 1);
	assert_int_equal(ctl_violations(f), 1);
	/* the controller keeps serving; the key is held back */
	optest_testctl_create(f, "fine", true, NULL);
	assert_true(optest_testctl_wait_out(f, "fine", WAIT_MS, NULL));
	assert_true(metric_now(mport, QUAR_M) == 1);
	assert_false(optest_testctl_has_out(f, "intruder"));
}

/* The plain fixture: kubesim without faults. */
static int
setup_plain(void **state)
{
	*state = optest_testctl_new("test-http", NULL, WAIT_MS);
	return (*state != NULL ? 0 : -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_probes, setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(
		        test_metrics, setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(
		        test_ports, setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_controller_fault,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_failing_watch,
		        setup_plain, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_permanent_failure,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_policy_violation,
		        setup_plain, optest_testctl_teardown),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return (rc);
}
