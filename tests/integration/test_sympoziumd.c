/*
 * test_sympoziumd.c: bin/sympoziumd end to end against bin/kubesim, with
 * the test controller "testctl" of bin/tests/sympozium-worker-test (issue
 * 4's integration list): the cache converges; a watch closed by the server
 * resumes without a LIST and a forced 410 costs one LIST per kind; a worker
 * killed mid-reconcile comes back and its key runs again while other items
 * flow; a hung worker is killed at the reconcile deadline; a poison key is
 * quarantined; leader election hands over after SIGKILL, SIGSTOP and
 * SIGTERM with no write of a deposed leader after its renew deadline; and
 * SIGTERM exits 0 leaving no worker behind.
 *
 * Each test starts its own kubesim (with a request log) and supervisors in
 * a fresh temporary directory; the supervisors' stderr goes to files that
 * the test polls.  Every wait is bounded.  Processes are only signalled by
 * the pids this test started or found as their children in /proc.
 */
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

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"

#define OUT_SEL "testctl.sympozium.ai/out"
#define CM_PATH "/api/v1/namespaces/default/configmaps"
#define UA_ANY  "sympoziumd/0.1 "
#define LEADING "leading (epoch"
#define WAIT_MS 15000
#define MAX_PID 64

/* Leader election timing (ms) passed to both supervisors. */
#define LEASE_MS 3000
#define RENEW_MS 2000
#define RETRY_MS 500
/* Worst hand-over after a hard stop of the leader: the standby retries
 * every [RP, 2.2 RP) (LEASE_JITTER), so it may observe the last renewal
 * up to 2.2 RP late and try again up to 2.2 RP after the lease expired:
 * lease duration + 2 x 2.2 RP, plus a margin for the requests. */
#define HARD_HANDOVER_MS (LEASE_MS + 2 * RETRY_MS * 22 / 10 + 800)

static const char *const le_args[] = { "--leader-elect",
	"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline",
	"2s", "--leader-elect-retry-period", "500ms", NULL };

/* ---- binaries and processes ---- */

/* True when pid's main thread sleeps in nanosleep (testctl's sleep:MS). */
static bool
in_nanosleep(pid_t pid)
{
	char path[64], buf[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	if ((f = fopen(path, "re")) != NULL) {
		if (fgets(buf, sizeof(buf), f) == NULL) {
			buf[0] = '\0';
		}
		fclose(f);
	}
	if (strstr(buf, "nanosleep") != NULL) {
		return (true);
	}
#if defined(__x86_64__)
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((f = fopen(path, "re")) != NULL) {
		long nr = -1;
		if (fscanf(f, "%ld", &nr) != 1) {
			nr = -1;
		}
		fclose(f);
		return (nr == 35 || nr == 230);
	}
#endif
	return (false);
}

/* Waits up to ms for s to have exactly n live workers. */
static bool
wait_workers(struct sdproc *s, int n, int ms)
{
	pid_t p[MAX_PID];
	int64_t end = ksim_now_ms() + ms;

	do {
		if (sdproc_workers(s, p, MAX_PID) == n) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

/* Starts supervisor i with testctl and extra flags (may be NULL). */
static void
sd_start(struct optest *f, int i, const char *const *extra)
{
	optest_sd_start(f, i, OPTEST_SD_TESTCTL, extra);
}

/* Waits up to ms for s to exit; true when it did (status in s->status). */
static bool
sd_reap(struct sdproc *s, int ms)
{
	return (sdproc_reap(&s->pid, &s->status, ms));
}

/* Occurrences of needle in the log of s. */
static int
sd_count(const struct sdproc *s, const char *needle)
{
	return (sdproc_log_count(s->log, needle));
}

/* The identity s announced in "leading (epoch N) as ID", into id. */
static bool
sd_identity(const struct sdproc *s, char *id, size_t len)
{
	char *t = sdproc_log_text(s->log);
	const char *p = strstr(t, LEADING);
	bool ok = false;

	if (p != NULL && (p = strstr(p, ") as ")) != NULL) {
		p += 5;
		size_t n = strcspn(p, "\n ");
		ok = n > 0 && n < len;
		snprintf(id, len, "%.*s", (int)n, p);
	}
	free(t);
	return (ok);
}

/* ---- fixture ---- */

/* SIGKILLs whatever a test left running (by pid) and checks the logs for
 * sanitizer reports other than the deliberate SIGSEGV of testctl's
 * "segv" action. */
static int
teardown(void **state)
{
	return (optest_finish(*state, OPTEST_KILL, true));
}

/* ---- API helpers ---- */

static long
post(struct optest *f, const char *path)
{
	struct ksim_resp *r = ksim_request(ksim_url(f->a.k), "POST", path,
	        "application/json", "{}", NULL, 0);
	long code = r->code;

	ksim_resp_free(r);
	return (code);
}

/* Number of testctl outputs in the server. */
static int
count_outs(struct optest *f)
{
	struct ksim_resp *r = ksim_request(ksim_url(f->a.k), "GET",
	        CM_PATH "?labelSelector=" OUT_SEL, NULL, NULL, NULL, 0);
	json_object *items = r->json != NULL
	        ? json_object_object_get(r->json, "items")
	        : NULL;
	int n = items != NULL ? (int)json_object_array_length(items) : -1;

	ksim_resp_free(r);
	return (n);
}

/* ---- the request log ---- */

/* Which request-log lines rl_count() counts. */
struct rl_filter {
	const char *verb; /* exact verb, or NULL for any */
	const char *ua;   /* substring of the userAgent */
	bool writes;      /* only POST/PUT/PATCH/DELETE outside Leases */
	bool no_selector; /* only lines without labelSelector */
	int64_t after_us; /* only lines with ts later than this (0: any) */
};

static bool
rl_match(json_object *l, const struct rl_filter *flt)
{
	const char *verb = jx_get_str(l, "verb");
	const char *ua = jx_get_str(l, "userAgent");
	const char *m = jx_get_str(l, "method");
	const char *path = jx_get_str(l, "path");
	const char *q = jx_get_str(l, "query");
	int64_t ts = 0;

	if (verb == NULL || ua == NULL || m == NULL || path == NULL
	        || q == NULL || strstr(ua, flt->ua) == NULL
	        || (flt->verb != NULL && strcmp(verb, flt->verb) != 0)) {
		return (false);
	}
	if (flt->writes
	        && (strcmp(m, "GET") == 0
	                || strstr(path, "/leases") != NULL)) {
		return (false);
	}
	if (flt->no_selector && strstr(q, "labelSelector=") != NULL) {
		return (false);
	}
	if (flt->after_us > 0
	        && (timefmt_parse(jx_get_str(l, "ts"), &ts) != 0
	                || ts <= flt->after_us)) {
		return (false);
	}
	return (true);
}

/* Counts the matching lines of the request log; the first one is copied
 * into first (when not NULL). */
static int
rl_count(
        struct optest *f, const struct rl_filter *flt, char *first, size_t len)
{
	char *t, *line, *save = NULL;
	struct buf b = BUF_INIT;
	int n = 0;

	(void)buf_read_file(&b, f->a.request_log, 256 << 20);
	buf_putc(&b, '\0');
	t = buf_detach(&b, NULL);
	for (line = strtok_r(t, "\n", &save); line != NULL;
	        line = strtok_r(NULL, "\n", &save)) {
		json_object *l = json_tokener_parse(line);
		if (l != NULL && rl_match(l, flt)) {
			if (n++ == 0 && first != NULL) {
				snprintf(first, len, "%s", line);
			}
		}
		json_object_put(l);
	}
	free(t);
	return (n);
}

static int
rl_verb(struct optest *f, const char *verb)
{
	struct rl_filter flt = { .verb = verb, .ua = UA_ANY };

	return (rl_count(f, &flt, NULL, 0));
}

/* Waits up to ms for at least n requests of verb by a supervisor. */
static bool
wait_verb(struct optest *f, const char *verb, int n, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	do {
		if (rl_verb(f, verb) >= n) {
			return (true);
		}
		ksim_sleep_ms(25);
	} while (ksim_now_ms() < end);
	return (false);
}

/* ---- 1: convergence ---- */

static void
test_converges(void **state)
{
	struct optest *f = *state;
	char name[64];
	char bad[1024] = "";
	struct rl_filter unselected = { .ua = UA_ANY, .no_selector = true };

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "pre-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	optest_testctl_create(f, "plain-0", false, NULL);
	optest_testctl_create(f, "plain-1", false, "ok");
	sd_start(f, 0, NULL);
	assert_true(sdproc_log_wait(&f->sd[0], LEADING, 1, WAIT_MS));
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "post-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	optest_testctl_create(f, "plain-2", false, NULL);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "pre-%d", i);
		assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
		snprintf(name, sizeof(name), "post-%d", i);
		assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
	}
	ksim_sleep_ms(500);
	assert_int_equal(count_outs(f), 20);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "plain-%d", i);
		assert_false(optest_testctl_has_out(f, name));
	}
	/* Every LIST and WATCH carried a selector: nothing else is cached. */
	unselected.verb = "list";
	assert_int_equal(rl_count(f, &unselected, bad, sizeof(bad)), 0);
	unselected.verb = "watch";
	assert_int_equal(rl_count(f, &unselected, bad, sizeof(bad)), 0);
	assert_true(sdproc_alive(f->sd[0].pid));
}

/* ---- 2: watches: resume without LIST, one LIST per kind after 410 ---- */

static void
test_watch_resume_and_410(void **state)
{
	struct optest *f = *state;
	struct sdproc *s = &f->sd[0];
	int lists, watches;

	sd_start(f, 0, NULL);
	assert_true(sdproc_log_wait(s, LEADING, 1, WAIT_MS));
	optest_testctl_create(f, "a", true, NULL);
	assert_true(optest_testctl_wait_out(f, "a", WAIT_MS, NULL));
	assert_true(wait_verb(f, "watch", 2, WAIT_MS));
	lists = rl_verb(f, "list");
	assert_int_equal(lists, 2); /* one per watched kind */
	watches = rl_verb(f, "watch");

	/* Closed by the server: re-watch from the last resourceVersion. */
	assert_int_equal(post(f, "/_kubesim/close-watches"), 200);
	assert_true(wait_verb(f, "watch", watches + 2, WAIT_MS));
	optest_testctl_create(f, "b", true, NULL);
	assert_true(optest_testctl_wait_out(f, "b", WAIT_MS, NULL));
	assert_int_equal(rl_verb(f, "list"), lists);

	/* 410: an unwatched write moves the server past what the supervisor
	 * saw, the history is dropped, and the watches end. */
	watches = rl_verb(f, "watch");
	optest_testctl_create(f, "bump", false, NULL);
	assert_int_equal(post(f, "/_kubesim/compact"), 200);
	assert_int_equal(post(f, "/_kubesim/close-watches"), 200);
	optest_testctl_create(f, "c", true, NULL); /* created meanwhile */
	assert_true(optest_testctl_wait_out(f, "c", WAIT_MS, NULL));
	assert_true(wait_verb(f, "list", lists + 2, WAIT_MS));
	assert_true(wait_verb(f, "watch", watches + 4, WAIT_MS));
	ksim_sleep_ms(1500);
	assert_int_equal(rl_verb(f, "list"), lists + 2);
	optest_testctl_create(f, "d", true, NULL);
	assert_true(optest_testctl_wait_out(f, "d", WAIT_MS, NULL));
	assert_int_equal(rl_verb(f, "list"), lists + 2);
	assert_false(optest_testctl_has_out(f, "bump"));
}

/* ---- 3: SIGKILL of a worker in the middle of a reconcile ---- */

/* The worker of s sleeping in a reconcile, other than not; 0 if none
 * within ms. */
static pid_t
wait_sleeper(struct sdproc *s, pid_t not, int ms)
{
	pid_t p[MAX_PID];
	int64_t end = ksim_now_ms() + ms;

	do {
		int n = sdproc_workers(s, p, MAX_PID);
		for (int i = 0; i < n; i++) {
			if (p[i] != not &&in_nanosleep(p[i])) {
				return (p[i]);
			}
		}
		ksim_sleep_ms(10);
	} while (ksim_now_ms() < end);
	return (0);
}

static void
test_worker_sigkill(void **state)
{
	static const char *const two[] = { "--workers", "testctl=2", NULL };
	struct optest *f = *state;
	struct sdproc *s = &f->sd[0];
	pid_t victim, again, p[MAX_PID];
	char name[64], line[128];
	int64_t t0;

	sd_start(f, 0, two);
	assert_true(sdproc_log_wait(s, LEADING, 1, WAIT_MS));
	assert_true(wait_workers(s, 2, WAIT_MS));
	optest_testctl_create(f, "slow", true, "sleep:3000");
	victim = wait_sleeper(s, 0, 2500);
	assert_true(victim > 0);
	t0 = ksim_now_ms();
	assert_int_equal(kill(victim, SIGKILL), 0);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "fast-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	/* The other items flow while slow runs again (3 s) elsewhere. */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "fast-%d", i);
		assert_true(optest_testctl_wait_out(f, name, 5000, NULL));
	}
	print_message("fast items done %lld ms after the kill\n",
	        (long long)(ksim_now_ms() - t0));
	assert_true(ksim_now_ms() - t0 < 2500);
	/* The key is processed again: a worker sleeps in it once more. */
	again = wait_sleeper(s, victim, 2500);
	assert_true(again > 0);
	snprintf(line, sizeof(line), "(pid %d) exited: signal SIGKILL",
	        (int)victim);
	assert_true(sdproc_log_wait(s, line, 1, 5000));
	assert_true(sdproc_log_wait(
	        s, "default/slow lost with its worker", 1, 5000));
	/* The worker is back: two live workers, the victim not among them. */
	assert_true(wait_workers(s, 2, 5000));
	int n = sdproc_workers(s, p, MAX_PID);
	for (int i = 0; i < n; i++) {
		assert_int_not_equal(p[i], victim);
	}
	assert_false(sdproc_alive(victim));
	assert_int_equal(sd_count(s, "quarantined"), 0);
}

/* ---- 4: a hung worker is killed at the reconcile deadline ---- */

static void
test_hung_worker_deadline(void **state)
{
	static const char *const rt[] = { "--reconcile-timeout", "1s", NULL };
	struct optest *f = *state;
	struct sdproc *s = &f->sd[0];
	char name[64];
	int64_t t0;

	sd_start(f, 0, rt);
	assert_true(sdproc_log_wait(s, LEADING, 1, WAIT_MS));
	assert_true(wait_workers(s, 1, WAIT_MS));
	t0 = ksim_now_ms();
	optest_testctl_create(f, "stuck", true, "hang");
	optest_testctl_create(f, "ok-0", true, NULL);
	assert_true(sdproc_log_wait(
	        s, "reconcile deadline 1 s; killing it", 1, 5000));
	int64_t dt = ksim_now_ms() - t0;
	print_message("deadline kill seen after %lld ms\n", (long long)dt);
	assert_true(dt >= 900);
	assert_true(sdproc_log_wait(s,
	        "default/stuck lost with its worker (reconcile "
	        "deadline",
	        1, 5000));
	assert_true(optest_testctl_wait_out(f, "ok-0", WAIT_MS, NULL));
	for (int i = 1; i < 4; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	for (int i = 1; i < 4; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
	}
	assert_true(sdproc_alive(s->pid));
}

/* ---- 5: a poison key is quarantined ---- */

static void
test_poison_quarantined(void **state)
{
	struct optest *f = *state;
	struct sdproc *s = &f->sd[0];
	char name[64];
	int crashes;

	sd_start(f, 0, NULL);
	assert_true(sdproc_log_wait(s, LEADING, 1, WAIT_MS));
	optest_testctl_create(f, "poison", true, "segv");
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	if (!sdproc_log_wait(s, "default/poison quarantined", 1, 20000)) {
		sdproc_dump_log(s->log);
		fail_msg("default/poison was not quarantined");
	}
	assert_int_equal(
	        sd_count(s, "default/poison lost with its worker"), 2);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
	}
	/* The controller keeps serving; the poison key is left alone. */
	crashes = sd_count(s, "exited: signal SIGSEGV");
	optest_testctl_create(f, "ok-late", true, NULL);
	assert_true(optest_testctl_wait_out(f, "ok-late", WAIT_MS, NULL));
	ksim_sleep_ms(1000);
	assert_int_equal(sd_count(s, "exited: signal SIGSEGV"), crashes);
	assert_false(optest_testctl_has_out(f, "poison"));
	assert_true(sdproc_alive(s->pid));
}

/* ---- 6: leader election ---- */

/* Starts two electing supervisors and waits for the leader; returns its
 * index after checking that only one leads for a while. */
static int
elect_two(struct optest *f)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	int leader = -1;

	sd_start(f, 0, le_args);
	sd_start(f, 1, le_args);
	while (leader < 0 && ksim_now_ms() < end) {
		for (int i = 0; i < 2 && leader < 0; i++) {
			leader = sd_count(&f->sd[i], LEADING) > 0 ? i : -1;
		}
		ksim_sleep_ms(20);
	}
	assert_true(leader >= 0);
	ksim_sleep_ms(LEASE_MS); /* a whole lease: still a single leader */
	assert_int_equal(sd_count(&f->sd[leader], LEADING), 1);
	assert_int_equal(sd_count(&f->sd[1 - leader], LEADING), 0);
	/* The standby keeps warm workers. */
	assert_true(wait_workers(&f->sd[1 - leader], 1, WAIT_MS));
	optest_testctl_create(f, "before", true, NULL);
	assert_true(optest_testctl_wait_out(f, "before", WAIT_MS, NULL));
	return (leader);
}

/* Asserts that no non-Lease write by identity id has a ts after us. */
static void
assert_no_write_after(struct optest *f, const char *id, int64_t us)
{
	char ua[300], first[2048] = "";
	struct rl_filter w = { .ua = ua, .writes = true, .after_us = us };
	struct rl_filter all = { .ua = ua, .writes = true };
	int n;

	snprintf(ua, sizeof(ua), "%s%s ", UA_ANY, id);
	print_message("writes by the deposed leader: %d in all\n",
	        rl_count(f, &all, NULL, 0));
	n = rl_count(f, &w, first, sizeof(first));
	if (n != 0) {
		fail_msg("%d write(s) of the deposed leader after its renew "
		         "deadline, first: %s",
		        n, first);
	}
}

/* Asserts the new leader id wrote the output of name. */
static void
assert_written_by(struct optest *f, const char *id, const char *name)
{
	char ua[300];
	struct rl_filter w = { .ua = ua, .writes = true };

	assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
	snprintf(ua, sizeof(ua), "%s%s ", UA_ANY, id);
	assert_true(rl_count(f, &w, NULL, 0) >= 1);
}

static void
test_leader_sigkill(void **state)
{
	struct optest *f = *state;
	int l = elect_two(f);
	struct sdproc *old = &f->sd[l], *neu = &f->sd[1 - l];
	char id_old[200], id_new[200];
	int64_t t0, t_us, dt;

	assert_true(sd_identity(old, id_old, sizeof(id_old)));
	t_us = timefmt_now_us_real();
	t0 = ksim_now_ms();
	assert_int_equal(kill(old->pid, SIGKILL), 0);
	assert_true(sd_reap(old, 5000));
	assert_true(sdproc_log_wait(neu, LEADING, 1, HARD_HANDOVER_MS + 2000));
	dt = ksim_now_ms() - t0;
	print_message("took over %lld ms after SIGKILL\n", (long long)dt);
	assert_true(dt <= HARD_HANDOVER_MS);
	assert_true(sd_identity(neu, id_new, sizeof(id_new)));
	assert_string_not_equal(id_old, id_new);
	optest_testctl_create(f, "after", true, NULL);
	assert_written_by(f, id_new, "after");
	assert_no_write_after(f, id_old, t_us + (int64_t)RENEW_MS * 1000);
}

static void
test_leader_sigstop_fenced(void **state)
{
	struct optest *f = *state;
	int l = elect_two(f);
	struct sdproc *old = &f->sd[l], *neu = &f->sd[1 - l];
	char id_old[200], id_new[200], name[64];
	int64_t t0, t_us, dt;

	assert_true(sd_identity(old, id_old, sizeof(id_old)));
	t_us = timefmt_now_us_real();
	t0 = ksim_now_ms();
	assert_int_equal(kill(old->pid, SIGSTOP), 0);
	assert_true(sdproc_log_wait(neu, LEADING, 1, HARD_HANDOVER_MS + 2000));
	dt = ksim_now_ms() - t0;
	print_message("took over %lld ms after SIGSTOP\n", (long long)dt);
	assert_true(dt <= HARD_HANDOVER_MS);
	assert_true(sd_identity(neu, id_new, sizeof(id_new)));
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "during-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	/* The old leader wakes up with events queued and a stale Lease. */
	assert_int_equal(kill(old->pid, SIGCONT), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "resumed-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "during-%d", i);
		assert_written_by(f, id_new, name);
		snprintf(name, sizeof(name), "resumed-%d", i);
		assert_true(optest_testctl_wait_out(f, name, WAIT_MS, NULL));
	}
	assert_true(sdproc_log_wait(old, "not leading any more", 1, 5000));
	ksim_sleep_ms(1500);
	assert_no_write_after(f, id_old, t_us + (int64_t)RENEW_MS * 1000);
	assert_int_equal(sd_count(old, LEADING), 1);
	assert_true(sdproc_alive(old->pid));
}

static void
test_leader_sigterm(void **state)
{
	struct optest *f = *state;
	int l = elect_two(f);
	struct sdproc *old = &f->sd[l], *neu = &f->sd[1 - l];
	char id_old[200], id_new[200];
	int64_t t0, t_us, dt;

	assert_true(sd_identity(old, id_old, sizeof(id_old)));
	t_us = timefmt_now_us_real();
	t0 = ksim_now_ms();
	assert_int_equal(kill(old->pid, SIGTERM), 0);
	assert_true(sdproc_log_wait(neu, LEADING, 1, HARD_HANDOVER_MS + 2000));
	dt = ksim_now_ms() - t0;
	print_message("took over %lld ms after SIGTERM\n", (long long)dt);
	/* About one retry period (with client-go's jitter up to 1.2x). */
	assert_true(dt <= RETRY_MS * 22 / 10 + 1000);
	assert_true(sd_reap(old, 12000));
	assert_true(WIFEXITED(old->status));
	assert_int_equal(WEXITSTATUS(old->status), 0);
	assert_true(sd_count(old, "released") >= 1);
	assert_true(sd_identity(neu, id_new, sizeof(id_new)));
	optest_testctl_create(f, "after", true, NULL);
	assert_written_by(f, id_new, "after");
	assert_no_write_after(f, id_old, t_us + (int64_t)RENEW_MS * 1000);
}

/* ---- 7: SIGTERM of a single supervisor ---- */

static void
test_sigterm_clean_exit(void **state)
{
	static const char *const two[] = { "--workers", "testctl=2", NULL };
	struct optest *f = *state;
	struct sdproc *s = &f->sd[0];
	pid_t kids[MAX_PID];
	int n;
	int64_t t0, dt;

	sd_start(f, 0, two);
	assert_true(sdproc_log_wait(s, LEADING, 1, WAIT_MS));
	assert_true(wait_workers(s, 2, WAIT_MS));
	optest_testctl_create(f, "short", true, "sleep:500");
	assert_true(
	        wait_sleeper(s, 0, 2500) > 0); /* one reconcile in flight */
	n = sdproc_workers(s, kids, MAX_PID);
	assert_int_equal(n, 2);
	t0 = ksim_now_ms();
	assert_int_equal(kill(s->pid, SIGTERM), 0);
	assert_true(sd_reap(s, 12000));
	dt = ksim_now_ms() - t0;
	print_message("exited %lld ms after SIGTERM\n", (long long)dt);
	assert_true(WIFEXITED(s->status));
	assert_int_equal(WEXITSTATUS(s->status), 0);
	assert_true(dt < 5000);
	for (int i = 0; i < n; i++) {
		int64_t end = ksim_now_ms() + 2000;
		while (sdproc_alive(kids[i]) && ksim_now_ms() < end) {
			ksim_sleep_ms(10);
		}
		assert_false(sdproc_alive(kids[i]));
	}
	assert_int_equal(sd_count(s, "info: stopped\n"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_converges, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_resume_and_410,
		        optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_worker_sigkill, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(test_hung_worker_deadline,
		        optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(test_poison_quarantined,
		        optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_leader_sigkill, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(test_leader_sigstop_fenced,
		        optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_leader_sigterm, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_clean_exit,
		        optest_testctl_setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
