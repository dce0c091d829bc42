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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/sdproc.h"

#define ACTION  "testctl.sympozium.ai/action"
#define ENABLED "testctl.sympozium.ai/enabled"
#define OUT_SEL "testctl.sympozium.ai/out"
#define CM_PATH "/api/v1/namespaces/default/configmaps"
#define UA_ANY  "sympoziumd/0.1 "
#define LEADING "leading (epoch"
#define WAIT_MS 15000
#define MAX_SD  2
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

/* One supervisor process. */
struct sd {
	pid_t pid;  /* 0 once reaped */
	int status; /* wait status once reaped */
	char log[128];
	pid_t seen[MAX_PID]; /* every worker pid seen, for cleanup */
	int nseen;
};

struct fx {
	char dir[64];
	char kc[128], reqlog[128];
	struct ksim *k;
	struct sd sd[MAX_SD];
};

/* ---- binaries and processes ---- */

static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return (v != NULL && *v != '\0' ? v : dflt);
}

/* Fills *state (-1 when the process is gone) and *ppid from /proc. */
static int
proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], line[1024];
	FILE *f;
	char *p;
	int ok = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		return (-1);
	}
	if (fgets(line, sizeof(line), f) != NULL
	        && (p = strrchr(line, ')')) != NULL) {
		int pp = 0;
		ok = sscanf(p + 1, " %c %d", state, &pp) == 2 ? 0 : -1;
		*ppid = (pid_t)pp;
	}
	fclose(f);
	return (ok);
}

/* True while pid exists and is not a zombie. */
static bool
alive(pid_t pid)
{
	char st;
	pid_t pp;

	return (proc_stat(pid, &st, &pp) == 0 && st != 'Z');
}

/* The live (non-zombie) children of parent; returns how many (<= max). */
static int
children(pid_t parent, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d != NULL && n < max && (e = readdir(d)) != NULL) {
		char *end, st;
		long pid = strtol(e->d_name, &end, 10);
		pid_t pp;

		if (*end != '\0' || pid <= 0
		        || proc_stat((pid_t)pid, &st, &pp) != 0) {
			continue;
		}
		if (pp == parent && st != 'Z') {
			out[n++] = (pid_t)pid;
		}
	}
	if (d != NULL) {
		closedir(d);
	}
	return (n);
}

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

/* The live workers of s (remembered in s->seen for cleanup). */
static int
sd_workers(struct sd *s, pid_t *out, int max)
{
	int n = s->pid > 0 ? children(s->pid, out, max) : 0;

	for (int i = 0; i < n; i++) {
		bool known = false;
		for (int j = 0; j < s->nseen; j++) {
			known = known || s->seen[j] == out[i];
		}
		if (!known && s->nseen < MAX_PID) {
			s->seen[s->nseen++] = out[i];
		}
	}
	return (n);
}

/* Waits up to ms for s to have exactly n live workers. */
static bool
wait_workers(struct sd *s, int n, int ms)
{
	pid_t p[MAX_PID];
	int64_t end = ksim_now_ms() + ms;

	do {
		if (sd_workers(s, p, MAX_PID) == n) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

/* Starts a supervisor as fx->sd[i] with the common flags plus extra
 * (NULL-terminated lists, either may be NULL). */
static void
sd_start(struct fx *f, int i, const char *const *extra,
        const char *const *extra2)
{
	struct sd *s = &f->sd[i];
	const char *argv[48];
	char rundir[128], log[128];
	int n = 0;

	snprintf(log, sizeof(log), "%s/sd%d.log", f->dir, i);
	memcpy(s->log, log, sizeof(log));
	snprintf(rundir, sizeof(rundir), "%s/run%d", f->dir, i);
	argv[n++] = "--kubeconfig";
	argv[n++] = f->kc;
	argv[n++] = "--metrics-bind-address=0";
	argv[n++] = "--health-probe-bind-address=0";
	argv[n++] = "--controllers";
	argv[n++] = "testctl";
	argv[n++] = "--worker-binary";
	argv[n++]
	        = env_or("WORKER_TEST_BIN", "bin/tests/sympozium-worker-test");
	argv[n++] = "--runtime-dir";
	argv[n++] = rundir;
	for (int j = 0; extra != NULL && extra[j] != NULL && n < 39; j++) {
		argv[n++] = extra[j];
	}
	for (int j = 0; extra2 != NULL && extra2[j] != NULL && n < 45; j++) {
		argv[n++] = extra2[j];
	}
	argv[n] = NULL;
	s->pid = sdproc_start(s->log, argv);
	assert_true(s->pid > 0);
}

/* Waits up to ms for s to exit; true when it did (status in s->status). */
static bool
sd_reap(struct sd *s, int ms)
{
	return (sdproc_reap(&s->pid, &s->status, ms));
}

/* The supervisor's log so far.  Caller frees with free(). */
static char *
sd_text(const struct sd *s)
{
	struct buf b = BUF_INIT;

	(void)buf_read_file(&b, s->log, 64 << 20);
	buf_putc(&b, '\0');
	return (buf_detach(&b, NULL));
}

static int
count_in(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) {
		n++;
	}
	return (n);
}

/* Occurrences of needle in the log of s. */
static int
sd_count(const struct sd *s, const char *needle)
{
	char *t = sd_text(s);
	int n = count_in(t, needle);

	free(t);
	return (n);
}

/* Waits up to ms for at least n occurrences of needle in the log of s. */
static bool
sd_wait(const struct sd *s, const char *needle, int n, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	do {
		if (sd_count(s, needle) >= n) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

/* The identity s announced in "leading (epoch N) as ID", into id. */
static bool
sd_identity(const struct sd *s, char *id, size_t len)
{
	char *t = sd_text(s);
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

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

static int
setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sympoziumd.XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		free(f);
		return (-1);
	}
	snprintf(f->kc, sizeof(f->kc), "%s/kubeconfig", f->dir);
	snprintf(f->reqlog, sizeof(f->reqlog), "%s/requests.log", f->dir);
	const char *args[] = { "--write-kubeconfig", f->kc, "--request-log",
		f->reqlog, "--controllers", "none", NULL };
	f->k = ksim_start(args);
	*state = f;
	return (f->k != NULL ? 0 : -1);
}

/* Returns -1 after printing it when the log of s holds a sanitizer report
 * other than the deliberate SIGSEGV of testctl's "segv" action. */
static int
sanitizer_clean(const struct sd *s)
{
	char *t = sd_text(s), *line, *save = NULL;
	int rc = 0;

	for (line = strtok_r(t, "\n", &save); line != NULL && rc == 0;
	        line = strtok_r(NULL, "\n", &save)) {
		if ((strstr(line, "ERROR: AddressSanitizer") != NULL
		            && strstr(line, "SEGV on unknown address") == NULL)
		        || strstr(line, "ERROR: LeakSanitizer") != NULL
		        || strstr(line, "runtime error:") != NULL) {
			print_error("%s: %s\n", s->log, line);
			rc = -1;
		}
	}
	free(t);
	return (rc);
}

/* SIGKILLs whatever a test left running (by pid), checks the logs for
 * sanitizer reports, then removes dir. */
static int
teardown(void **state)
{
	struct fx *f = *state;
	int rc = 0;

	for (int i = 0; i < MAX_SD; i++) {
		struct sd *s = &f->sd[i];
		pid_t p[MAX_PID];
		(void)sd_workers(s, p, MAX_PID);
		if (s->pid > 0) {
			kill(s->pid, SIGCONT);
			kill(s->pid, SIGKILL);
			(void)sd_reap(s, 5000);
		}
		for (int j = 0; j < s->nseen; j++) {
			if (alive(s->seen[j])) {
				kill(s->seen[j], SIGKILL);
			}
		}
		if (s->log[0] != '\0' && sanitizer_clean(s) != 0) {
			rc = -1;
		}
	}
	ksim_stop(f->k);
	if (getenv("KEEP_TEST_DIR") == NULL) {
		nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	free(f);
	return (rc);
}

/* ---- API helpers ---- */

static long
post(struct fx *f, const char *path)
{
	struct ksim_resp *r = ksim_request(ksim_url(f->k), "POST", path,
	        "application/json", "{}", NULL, 0);
	long code = r->code;

	ksim_resp_free(r);
	return (code);
}

/* Creates ConfigMap default/name; labelled for testctl when enabled;
 * action NULL leaves the default (ok). */
static void
cm_create(struct fx *f, const char *name, bool enabled, const char *action)
{
	json_object *o = json_object_new_object();
	struct ksim_resp *r;

	jx_set_path(o, "metadata.name", json_object_new_string(name));
	if (enabled) {
		jx_setv(o, json_object_new_string("yes"), "metadata", "labels",
		        ENABLED, NULL);
	}
	if (action != NULL) {
		jx_setv(o, json_object_new_string(action), "metadata",
		        "annotations", ACTION, NULL);
	}
	r = ksim_request(ksim_url(f->k), "POST", CM_PATH, "application/json",
	        json_object_to_json_string(o), NULL, 0);
	json_object_put(o);
	if (r->code != 201) {
		print_error("create %s: %ld %s\n", name, r->code, r->body);
	}
	assert_int_equal(r->code, 201);
	ksim_resp_free(r);
}

static bool
cm_exists(struct fx *f, const char *name)
{
	char path[256];
	struct ksim_resp *r;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", CM_PATH, name);
	r = ksim_request(ksim_url(f->k), "GET", path, NULL, NULL, NULL, 0);
	ok = r->code == 200;
	ksim_resp_free(r);
	return (ok);
}

/* Waits up to ms for ConfigMap <name>-out. */
static bool
wait_out(struct fx *f, const char *name, int ms)
{
	char out[200];
	int64_t end = ksim_now_ms() + ms;

	snprintf(out, sizeof(out), "%s-out", name);
	do {
		if (cm_exists(f, out)) {
			return (true);
		}
		ksim_sleep_ms(25);
	} while (ksim_now_ms() < end);
	return (false);
}

/* Number of testctl outputs in the server. */
static int
count_outs(struct fx *f)
{
	struct ksim_resp *r = ksim_request(ksim_url(f->k), "GET",
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
rl_count(struct fx *f, const struct rl_filter *flt, char *first, size_t len)
{
	char *t, *line, *save = NULL;
	struct buf b = BUF_INIT;
	int n = 0;

	(void)buf_read_file(&b, f->reqlog, 256 << 20);
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
rl_verb(struct fx *f, const char *verb)
{
	struct rl_filter flt = { .verb = verb, .ua = UA_ANY };

	return (rl_count(f, &flt, NULL, 0));
}

/* Waits up to ms for at least n requests of verb by a supervisor. */
static bool
wait_verb(struct fx *f, const char *verb, int n, int ms)
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
	struct fx *f = *state;
	char name[64];
	char bad[1024] = "";
	struct rl_filter unselected = { .ua = UA_ANY, .no_selector = true };

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "pre-%d", i);
		cm_create(f, name, true, NULL);
	}
	cm_create(f, "plain-0", false, NULL);
	cm_create(f, "plain-1", false, "ok");
	sd_start(f, 0, NULL, NULL);
	assert_true(sd_wait(&f->sd[0], LEADING, 1, WAIT_MS));
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "post-%d", i);
		cm_create(f, name, true, NULL);
	}
	cm_create(f, "plain-2", false, NULL);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "pre-%d", i);
		assert_true(wait_out(f, name, WAIT_MS));
		snprintf(name, sizeof(name), "post-%d", i);
		assert_true(wait_out(f, name, WAIT_MS));
	}
	ksim_sleep_ms(500);
	assert_int_equal(count_outs(f), 20);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "plain-%d-out", i);
		assert_false(cm_exists(f, name));
	}
	/* Every LIST and WATCH carried a selector: nothing else is cached. */
	unselected.verb = "list";
	assert_int_equal(rl_count(f, &unselected, bad, sizeof(bad)), 0);
	unselected.verb = "watch";
	assert_int_equal(rl_count(f, &unselected, bad, sizeof(bad)), 0);
	assert_true(alive(f->sd[0].pid));
}

/* ---- 2: watches: resume without LIST, one LIST per kind after 410 ---- */

static void
test_watch_resume_and_410(void **state)
{
	struct fx *f = *state;
	struct sd *s = &f->sd[0];
	int lists, watches;

	sd_start(f, 0, NULL, NULL);
	assert_true(sd_wait(s, LEADING, 1, WAIT_MS));
	cm_create(f, "a", true, NULL);
	assert_true(wait_out(f, "a", WAIT_MS));
	assert_true(wait_verb(f, "watch", 2, WAIT_MS));
	lists = rl_verb(f, "list");
	assert_int_equal(lists, 2); /* one per watched kind */
	watches = rl_verb(f, "watch");

	/* Closed by the server: re-watch from the last resourceVersion. */
	assert_int_equal(post(f, "/_kubesim/close-watches"), 200);
	assert_true(wait_verb(f, "watch", watches + 2, WAIT_MS));
	cm_create(f, "b", true, NULL);
	assert_true(wait_out(f, "b", WAIT_MS));
	assert_int_equal(rl_verb(f, "list"), lists);

	/* 410: an unwatched write moves the server past what the supervisor
	 * saw, the history is dropped, and the watches end. */
	watches = rl_verb(f, "watch");
	cm_create(f, "bump", false, NULL);
	assert_int_equal(post(f, "/_kubesim/compact"), 200);
	assert_int_equal(post(f, "/_kubesim/close-watches"), 200);
	cm_create(f, "c", true, NULL); /* created meanwhile */
	assert_true(wait_out(f, "c", WAIT_MS));
	assert_true(wait_verb(f, "list", lists + 2, WAIT_MS));
	assert_true(wait_verb(f, "watch", watches + 4, WAIT_MS));
	ksim_sleep_ms(1500);
	assert_int_equal(rl_verb(f, "list"), lists + 2);
	cm_create(f, "d", true, NULL);
	assert_true(wait_out(f, "d", WAIT_MS));
	assert_int_equal(rl_verb(f, "list"), lists + 2);
	assert_false(cm_exists(f, "bump-out"));
}

/* ---- 3: SIGKILL of a worker in the middle of a reconcile ---- */

/* The worker of s sleeping in a reconcile, other than not; 0 if none
 * within ms. */
static pid_t
wait_sleeper(struct sd *s, pid_t not, int ms)
{
	pid_t p[MAX_PID];
	int64_t end = ksim_now_ms() + ms;

	do {
		int n = sd_workers(s, p, MAX_PID);
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
	struct fx *f = *state;
	struct sd *s = &f->sd[0];
	pid_t victim, again, p[MAX_PID];
	char name[64], line[128];
	int64_t t0;

	sd_start(f, 0, two, NULL);
	assert_true(sd_wait(s, LEADING, 1, WAIT_MS));
	assert_true(wait_workers(s, 2, WAIT_MS));
	cm_create(f, "slow", true, "sleep:3000");
	victim = wait_sleeper(s, 0, 2500);
	assert_true(victim > 0);
	t0 = ksim_now_ms();
	assert_int_equal(kill(victim, SIGKILL), 0);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "fast-%d", i);
		cm_create(f, name, true, NULL);
	}
	/* The other items flow while slow runs again (3 s) elsewhere. */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "fast-%d", i);
		assert_true(wait_out(f, name, 5000));
	}
	print_message("fast items done %lld ms after the kill\n",
	        (long long)(ksim_now_ms() - t0));
	assert_true(ksim_now_ms() - t0 < 2500);
	/* The key is processed again: a worker sleeps in it once more. */
	again = wait_sleeper(s, victim, 2500);
	assert_true(again > 0);
	snprintf(line, sizeof(line), "(pid %d) exited: signal SIGKILL",
	        (int)victim);
	assert_true(sd_wait(s, line, 1, 5000));
	assert_true(sd_wait(s, "default/slow lost with its worker", 1, 5000));
	/* The worker is back: two live workers, the victim not among them. */
	assert_true(wait_workers(s, 2, 5000));
	int n = sd_workers(s, p, MAX_PID);
	for (int i = 0; i < n; i++) {
		assert_int_not_equal(p[i], victim);
	}
	assert_false(alive(victim));
	assert_int_equal(sd_count(s, "quarantined"), 0);
}

/* ---- 4: a hung worker is killed at the reconcile deadline ---- */

static void
test_hung_worker_deadline(void **state)
{
	static const char *const rt[] = { "--reconcile-timeout", "1s", NULL };
	struct fx *f = *state;
	struct sd *s = &f->sd[0];
	char name[64];
	int64_t t0;

	sd_start(f, 0, rt, NULL);
	assert_true(sd_wait(s, LEADING, 1, WAIT_MS));
	assert_true(wait_workers(s, 1, WAIT_MS));
	t0 = ksim_now_ms();
	cm_create(f, "stuck", true, "hang");
	cm_create(f, "ok-0", true, NULL);
	assert_true(sd_wait(s, "reconcile deadline 1 s; killing it", 1, 5000));
	int64_t dt = ksim_now_ms() - t0;
	print_message("deadline kill seen after %lld ms\n", (long long)dt);
	assert_true(dt >= 900);
	assert_true(sd_wait(s,
	        "default/stuck lost with its worker (reconcile "
	        "deadline",
	        1, 5000));
	assert_true(wait_out(f, "ok-0", WAIT_MS));
	for (int i = 1; i < 4; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		cm_create(f, name, true, NULL);
	}
	for (int i = 1; i < 4; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		assert_true(wait_out(f, name, WAIT_MS));
	}
	assert_true(alive(s->pid));
}

/* ---- 5: a poison key is quarantined ---- */

static void
test_poison_quarantined(void **state)
{
	struct fx *f = *state;
	struct sd *s = &f->sd[0];
	char name[64];
	int crashes;

	sd_start(f, 0, NULL, NULL);
	assert_true(sd_wait(s, LEADING, 1, WAIT_MS));
	cm_create(f, "poison", true, "segv");
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		cm_create(f, name, true, NULL);
	}
	if (!sd_wait(s, "default/poison quarantined", 1, 20000)) {
		sdproc_dump_log(s->log);
		fail_msg("default/poison was not quarantined");
	}
	assert_int_equal(
	        sd_count(s, "default/poison lost with its worker"), 2);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		assert_true(wait_out(f, name, WAIT_MS));
	}
	/* The controller keeps serving; the poison key is left alone. */
	crashes = sd_count(s, "exited: signal SIGSEGV");
	cm_create(f, "ok-late", true, NULL);
	assert_true(wait_out(f, "ok-late", WAIT_MS));
	ksim_sleep_ms(1000);
	assert_int_equal(sd_count(s, "exited: signal SIGSEGV"), crashes);
	assert_false(cm_exists(f, "poison-out"));
	assert_true(alive(s->pid));
}

/* ---- 6: leader election ---- */

/* Starts two electing supervisors and waits for the leader; returns its
 * index after checking that only one leads for a while. */
static int
elect_two(struct fx *f)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	int leader = -1;

	sd_start(f, 0, le_args, NULL);
	sd_start(f, 1, le_args, NULL);
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
	cm_create(f, "before", true, NULL);
	assert_true(wait_out(f, "before", WAIT_MS));
	return (leader);
}

/* Asserts that no non-Lease write by identity id has a ts after us. */
static void
assert_no_write_after(struct fx *f, const char *id, int64_t us)
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
assert_written_by(struct fx *f, const char *id, const char *name)
{
	char ua[300];
	struct rl_filter w = { .ua = ua, .writes = true };

	assert_true(wait_out(f, name, WAIT_MS));
	snprintf(ua, sizeof(ua), "%s%s ", UA_ANY, id);
	assert_true(rl_count(f, &w, NULL, 0) >= 1);
}

static void
test_leader_sigkill(void **state)
{
	struct fx *f = *state;
	int l = elect_two(f);
	struct sd *old = &f->sd[l], *neu = &f->sd[1 - l];
	char id_old[200], id_new[200];
	int64_t t0, t_us, dt;

	assert_true(sd_identity(old, id_old, sizeof(id_old)));
	t_us = timefmt_now_us_real();
	t0 = ksim_now_ms();
	assert_int_equal(kill(old->pid, SIGKILL), 0);
	assert_true(sd_reap(old, 5000));
	assert_true(sd_wait(neu, LEADING, 1, HARD_HANDOVER_MS + 2000));
	dt = ksim_now_ms() - t0;
	print_message("took over %lld ms after SIGKILL\n", (long long)dt);
	assert_true(dt <= HARD_HANDOVER_MS);
	assert_true(sd_identity(neu, id_new, sizeof(id_new)));
	assert_string_not_equal(id_old, id_new);
	cm_create(f, "after", true, NULL);
	assert_written_by(f, id_new, "after");
	assert_no_write_after(f, id_old, t_us + (int64_t)RENEW_MS * 1000);
}

static void
test_leader_sigstop_fenced(void **state)
{
	struct fx *f = *state;
	int l = elect_two(f);
	struct sd *old = &f->sd[l], *neu = &f->sd[1 - l];
	char id_old[200], id_new[200], name[64];
	int64_t t0, t_us, dt;

	assert_true(sd_identity(old, id_old, sizeof(id_old)));
	t_us = timefmt_now_us_real();
	t0 = ksim_now_ms();
	assert_int_equal(kill(old->pid, SIGSTOP), 0);
	assert_true(sd_wait(neu, LEADING, 1, HARD_HANDOVER_MS + 2000));
	dt = ksim_now_ms() - t0;
	print_message("took over %lld ms after SIGSTOP\n", (long long)dt);
	assert_true(dt <= HARD_HANDOVER_MS);
	assert_true(sd_identity(neu, id_new, sizeof(id_new)));
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "during-%d", i);
		cm_create(f, name, true, NULL);
	}
	/* The old leader wakes up with events queued and a stale Lease. */
	assert_int_equal(kill(old->pid, SIGCONT), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "resumed-%d", i);
		cm_create(f, name, true, NULL);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "during-%d", i);
		assert_written_by(f, id_new, name);
		snprintf(name, sizeof(name), "resumed-%d", i);
		assert_true(wait_out(f, name, WAIT_MS));
	}
	assert_true(sd_wait(old, "not leading any more", 1, 5000));
	ksim_sleep_ms(1500);
	assert_no_write_after(f, id_old, t_us + (int64_t)RENEW_MS * 1000);
	assert_int_equal(sd_count(old, LEADING), 1);
	assert_true(alive(old->pid));
}

static void
test_leader_sigterm(void **state)
{
	struct fx *f = *state;
	int l = elect_two(f);
	struct sd *old = &f->sd[l], *neu = &f->sd[1 - l];
	char id_old[200], id_new[200];
	int64_t t0, t_us, dt;

	assert_true(sd_identity(old, id_old, sizeof(id_old)));
	t_us = timefmt_now_us_real();
	t0 = ksim_now_ms();
	assert_int_equal(kill(old->pid, SIGTERM), 0);
	assert_true(sd_wait(neu, LEADING, 1, HARD_HANDOVER_MS + 2000));
	dt = ksim_now_ms() - t0;
	print_message("took over %lld ms after SIGTERM\n", (long long)dt);
	/* About one retry period (with client-go's jitter up to 1.2x). */
	assert_true(dt <= RETRY_MS * 22 / 10 + 1000);
	assert_true(sd_reap(old, 12000));
	assert_true(WIFEXITED(old->status));
	assert_int_equal(WEXITSTATUS(old->status), 0);
	assert_true(sd_count(old, "released") >= 1);
	assert_true(sd_identity(neu, id_new, sizeof(id_new)));
	cm_create(f, "after", true, NULL);
	assert_written_by(f, id_new, "after");
	assert_no_write_after(f, id_old, t_us + (int64_t)RENEW_MS * 1000);
}

/* ---- 7: SIGTERM of a single supervisor ---- */

static void
test_sigterm_clean_exit(void **state)
{
	static const char *const two[] = { "--workers", "testctl=2", NULL };
	struct fx *f = *state;
	struct sd *s = &f->sd[0];
	pid_t kids[MAX_PID];
	int n;
	int64_t t0, dt;

	sd_start(f, 0, two, NULL);
	assert_true(sd_wait(s, LEADING, 1, WAIT_MS));
	assert_true(wait_workers(s, 2, WAIT_MS));
	cm_create(f, "short", true, "sleep:500");
	assert_true(
	        wait_sleeper(s, 0, 2500) > 0); /* one reconcile in flight */
	n = sd_workers(s, kids, MAX_PID);
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
		while (alive(kids[i]) && ksim_now_ms() < end) {
			ksim_sleep_ms(10);
		}
		assert_false(alive(kids[i]));
	}
	assert_int_equal(sd_count(s, "info: stopped\n"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_converges, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_watch_resume_and_410, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_worker_sigkill, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_hung_worker_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_poison_quarantined, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_leader_sigkill, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_leader_sigstop_fenced, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_leader_sigterm, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_sigterm_clean_exit, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
