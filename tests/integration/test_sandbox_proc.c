/*
 * test_sandbox_proc.c: the worker sandbox (workers/sandbox.c) end to end:
 * bin/sympoziumd with the test controller of
 * bin/tests/sympozium-worker-test against bin/kubesim.  A worker that opens
 * a file (here: the supervisor's kubeconfig, a credential) or creates a
 * socket is killed by the seccomp filter (the supervisor logs "signal
 * SIGSYS" as the exit cause), restarted, and the other keys keep flowing;
 * the key is quarantined after its repeated deaths.  The worker's
 * environment holds only the settings the reconcilers read; and
 * --no-worker-sandbox turns it all off.
 *
 * ASan builds relax the filter for open() (sandbox.h): there the open test
 * checks the relaxed behaviour instead.  Each test starts its own kubesim
 * and supervisor in a fresh temporary directory; every wait is bounded;
 * processes are only signalled by the pids this test started or found as
 * the supervisor's children in /proc.
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
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/sdproc.h"
#include "workers/sandbox.h"

#define ACTION  "testctl.sympozium.ai/action"
#define ENABLED "testctl.sympozium.ai/enabled"
#define CM_PATH "/api/v1/namespaces/default/configmaps"
#define LEADING "leading (epoch"
#define WAIT_MS 15000
#define MAX_PID 64

struct fx {
	char dir[64];
	char kc[128], log[128];
	struct ksim *k;
	pid_t pid; /* the supervisor; 0 once reaped */
	pid_t seen[MAX_PID];
	int nseen;
};

/* ---- processes ---- */

static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return (v != NULL && *v != '\0' ? v : dflt);
}

/* The parent of pid and whether it is a zombie; -1 when gone. */
static int
proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], line[1024], *p;
	FILE *f;
	int ok = -1, pp = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		return (-1);
	}
	if (fgets(line, sizeof(line), f) != NULL
	        && (p = strrchr(line, ')')) != NULL) {
		ok = sscanf(p + 1, " %c %d", state, &pp) == 2 ? 0 : -1;
		*ppid = (pid_t)pp;
	}
	fclose(f);
	return (ok);
}

static bool
alive(pid_t pid)
{
	char st;
	pid_t pp;

	return (proc_stat(pid, &st, &pp) == 0 && st != 'Z');
}

/* Remembers the supervisor's live children (its workers) for cleanup. */
static void
note_workers(struct fx *f)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d != NULL && f->pid > 0 && (e = readdir(d)) != NULL) {
		char *end, st;
		long pid = strtol(e->d_name, &end, 10);
		pid_t pp;
		bool known = false;

		if (*end != '\0' || pid <= 0
		        || proc_stat((pid_t)pid, &st, &pp) != 0
		        || pp != f->pid) {
			continue;
		}
		for (int j = 0; j < f->nseen; j++) {
			known = known || f->seen[j] == (pid_t)pid;
		}
		if (!known && f->nseen < MAX_PID) {
			f->seen[f->nseen++] = (pid_t)pid;
		}
	}
	if (d != NULL) {
		closedir(d);
	}
}

/* Starts the supervisor (testctl only, one worker) with extra flags. */
static void
sd_start(struct fx *f, const char *extra)
{
	char rundir[128], sd[256], wk[256];
	const char *argv[16];
	int n = 0;

	snprintf(rundir, sizeof(rundir), "%s/run", f->dir);
	/* $BIN's programs, built like this test (sbx_relaxed() agrees) */
	snprintf(sd, sizeof(sd), "%s/sympoziumd", env_or("BIN", "bin"));
	snprintf(wk, sizeof(wk), "%s/tests/sympozium-worker-test",
	        env_or("BIN", "bin"));
	argv[n++] = "--kubeconfig";
	argv[n++] = f->kc;
	argv[n++] = "--metrics-bind-address=0";
	argv[n++] = "--health-probe-bind-address=0";
	argv[n++] = "--controllers";
	argv[n++] = "testctl";
	argv[n++] = "--worker-binary";
	argv[n++] = env_or("WORKER_TEST_BIN", wk);
	argv[n++] = "--runtime-dir";
	argv[n++] = rundir;
	if (extra != NULL) {
		argv[n++] = extra;
	}
	argv[n] = NULL;
	f->pid = sdproc_start_bin(env_or("SYMPOZIUMD", sd), f->log, argv, NULL);
	assert_true(f->pid > 0);
}

/* ---- the supervisor's log ---- */

static int
log_count(struct fx *f, const char *needle)
{
	struct buf b = BUF_INIT;
	int n = 0;

	(void)buf_read_file(&b, f->log, 64 << 20);
	buf_putc(&b, '\0');
	for (const char *p = b.data; (p = strstr(p, needle)) != NULL; p++) {
		n++;
	}
	buf_fini(&b);
	return (n);
}

static bool
log_wait(struct fx *f, const char *needle, int n, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	do {
		note_workers(f);
		if (log_count(f, needle) >= n) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

static void
dump_log(struct fx *f)
{
	struct buf b = BUF_INIT;

	(void)buf_read_file(&b, f->log, 64 << 20);
	buf_putc(&b, '\0');
	print_message("---- %s ----\n%s---- end ----\n", f->log, b.data);
	buf_fini(&b);
}

/* ---- the API ---- */

static void
cm_create(struct fx *f, const char *name, const char *action)
{
	json_object *o = json_object_new_object();
	struct ksim_resp *r;

	jx_set_path(o, "metadata.name", json_object_new_string(name));
	jx_setv(o, json_object_new_string("yes"), "metadata", "labels",
	        ENABLED, NULL);
	if (action != NULL) {
		jx_setv(o, json_object_new_string(action), "metadata",
		        "annotations", ACTION, NULL);
	}
	r = ksim_request(ksim_url(f->k), "POST", CM_PATH, "application/json",
	        json_object_to_json_string(o), NULL, 0);
	json_object_put(o);
	assert_int_equal(r->code, 201);
	ksim_resp_free(r);
}

/* ConfigMap <name>-out's data (caller puts), or NULL. */
static json_object *
out_data(struct fx *f, const char *name)
{
	char path[256];
	struct ksim_resp *r;
	json_object *d = NULL;

	snprintf(path, sizeof(path), "%s/%s-out", CM_PATH, name);
	r = ksim_request(ksim_url(f->k), "GET", path, NULL, NULL, NULL, 0);
	if (r->code == 200 && r->json != NULL) {
		d = json_object_get(json_object_object_get(r->json, "data"));
		if (d == NULL) {
			d = json_object_new_object();
		}
	}
	ksim_resp_free(r);
	return (d);
}

/* Waits up to ms for <name>-out; returns its data (caller puts). */
static json_object *
wait_out(struct fx *f, const char *name, int ms)
{
	int64_t end = ksim_now_ms() + ms;
	json_object *d;

	do {
		if ((d = out_data(f, name)) != NULL) {
			return (d);
		}
		ksim_sleep_ms(25);
	} while (ksim_now_ms() < end);
	return (NULL);
}

static void
create_ok_items(struct fx *f, int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		cm_create(f, name, NULL);
	}
}

static void
assert_ok_items(struct fx *f, int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		json_object *d = wait_out(f, name, WAIT_MS);
		assert_non_null(d);
		json_object_put(d);
	}
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

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sandbox_proc.XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		free(f);
		return (-1);
	}
	snprintf(f->kc, sizeof(f->kc), "%s/kubeconfig", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/sd.log", f->dir);
	const char *args[] = { "--write-kubeconfig", f->kc, "--controllers",
		"none", NULL };
	f->k = ksim_start(args);
	*state = f;
	return (f->k != NULL ? 0 : -1);
}

/* -1 when the log holds a sanitizer report. */
static int
sanitizer_clean(struct fx *f)
{
	int rc = 0;

	if (log_count(f, "ERROR: AddressSanitizer") > 0
	        || log_count(f, "ERROR: LeakSanitizer") > 0
	        || log_count(f, "runtime error:") > 0) {
		dump_log(f);
		rc = -1;
	}
	return (rc);
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	int rc = 0, st;

	note_workers(f);
	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		if (!sdproc_reap(&f->pid, &st, 10000) && f->pid > 0) {
			kill(f->pid, SIGKILL);
			(void)waitpid(f->pid, &st, 0);
		}
	}
	for (int j = 0; j < f->nseen; j++) {
		if (alive(f->seen[j])) {
			kill(f->seen[j], SIGKILL);
		}
	}
	if (f->log[0] != '\0') {
		rc = sanitizer_clean(f);
	}
	ksim_stop(f->k);
	if (getenv("KEEP_TEST_DIR") == NULL) {
		nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	free(f);
	return (rc);
}

/* ---- tests ---- */

/* A forbidden call kills the worker with SIGSYS; it is restarted, the
 * other keys flow, the key is quarantined and never done. */
static void
killed_and_restarted(struct fx *f, const char *action)
{
	sd_start(f, NULL);
	assert_true(log_wait(f, LEADING, 1, WAIT_MS));
	cm_create(f, "bad", action);
	create_ok_items(f, 5);
	if (!log_wait(f, "default/bad quarantined", 1, 20000)) {
		dump_log(f);
		fail_msg("default/bad was not quarantined");
	}
	assert_true(log_count(f, "exited: signal SIGSYS") >= 2);
	assert_int_equal(log_count(f, "default/bad lost with its worker"), 2);
	assert_ok_items(f, 5);
	/* the restarted worker keeps serving */
	cm_create(f, "late", NULL);
	json_object *d = wait_out(f, "late", WAIT_MS);
	assert_non_null(d);
	json_object_put(d);
	assert_null(out_data(f, "bad"));
	assert_int_equal(log_count(f, "sandbox:"), 0);
	assert_true(alive(f->pid));
}

static void
test_open_killed(void **state)
{
	struct fx *f = *state;
	char action[200];

	snprintf(action, sizeof(action), "open:%s", f->kc);
	if (sbx_relaxed()) {
		/* ASan workers run without the filter (sandbox.h) */
		print_message("ASan build: open() is allowed\n");
		sd_start(f, NULL);
		assert_true(log_wait(f, LEADING, 1, WAIT_MS));
		cm_create(f, "bad", action);
		json_object *d = wait_out(f, "bad", WAIT_MS);
		assert_non_null(d);
		json_object_put(d);
		return;
	}
	killed_and_restarted(f, action);
}

static void
test_socket_killed(void **state)
{
	struct fx *f = *state;

	if (sbx_relaxed()) {
		/* ASan workers run without the filter (sandbox.h) */
		sd_start(f, NULL);
		assert_true(log_wait(f, LEADING, 1, WAIT_MS));
		cm_create(f, "bad", "socket");
		json_object *d = wait_out(f, "bad", WAIT_MS);
		assert_non_null(d);
		json_object_put(d);
		return;
	}
	killed_and_restarted(f, "socket");
}

/* The worker's environment: only the settings reconcilers read. */
static void
test_env_cleared(void **state)
{
	struct fx *f = *state;

	setenv("SYMPOZIUM_IMAGE_TAG", "v-test", 1);
	setenv("SYMPOZIUM_WORKER_SANDBOX", "on", 1);
	sd_start(f, NULL);
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	unsetenv("SYMPOZIUM_WORKER_SANDBOX");
	assert_true(log_wait(f, LEADING, 1, WAIT_MS));
	cm_create(f, "env", "env");
	json_object *d = wait_out(f, "env", WAIT_MS);
	assert_non_null(d);
	print_message("worker env: %s\n", json_object_to_json_string(d));
	assert_string_equal(jx_get_str(d, "SYMPOZIUM_IMAGE_TAG"), "v-test");
	assert_int_equal(json_object_object_length(d), 1);
	json_object_put(d);
}

/* --no-worker-sandbox: the same calls succeed. */
static void
test_no_worker_sandbox(void **state)
{
	struct fx *f = *state;
	char action[200];
	json_object *d;

	snprintf(action, sizeof(action), "open:%s", f->kc);
	sd_start(f, "--no-worker-sandbox");
	assert_true(log_wait(f, LEADING, 1, WAIT_MS));
	cm_create(f, "opener", action);
	cm_create(f, "sock", "socket");
	cm_create(f, "env", "env");
	d = wait_out(f, "opener", WAIT_MS);
	assert_non_null(d);
	assert_string_equal(jx_get_str(d, "opened"), f->kc);
	json_object_put(d);
	d = wait_out(f, "sock", WAIT_MS);
	assert_non_null(d);
	assert_string_equal(jx_get_str(d, "socket"), "created");
	json_object_put(d);
	d = wait_out(f, "env", WAIT_MS);
	assert_non_null(d);
	assert_string_equal(jx_get_str(d, "SYMPOZIUM_WORKER_SANDBOX"), "off");
	json_object_put(d);
	assert_int_equal(log_count(f, "SIGSYS"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_open_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_socket_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_env_cleared, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_no_worker_sandbox, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
