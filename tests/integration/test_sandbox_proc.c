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
#include <setjmp.h>
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
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "workers/sandbox.h"

#define LEADING "leading (epoch"
#define WAIT_MS 15000

/* ---- the supervisor ---- */

/* Starts the supervisor (testctl only, one worker) with an extra flag
 * (NULL: none).  The binaries are $BIN's, built like this test
 * (sbx_relaxed() agrees). */
static void
sd_start(struct optest *f, const char *extra)
{
	const char *args[] = { "--health-socket", f->sock, extra, NULL };

	optest_sd_start(f, 0, OPTEST_SD_TESTCTL, args);
}

static int
log_count(struct optest *f, const char *needle)
{
	return (sdproc_log_count(f->sd[0].log, needle));
}

/* Waits up to ms for n occurrences of needle in the log (remembering the
 * workers meanwhile). */
static bool
log_wait(struct optest *f, const char *needle, int n, int ms)
{
	return (sdproc_log_wait(&f->sd[0], needle, n, ms));
}

/* ---- the API ---- */

/* Waits up to ms for <name>-out; returns its data (caller puts), or
 * NULL. */
static json_object *
wait_out(struct optest *f, const char *name, int ms)
{
	json_object *d = NULL;

	(void)optest_testctl_wait_out(f, name, ms, &d);
	return (d);
}

static void
create_ok_items(struct optest *f, int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ok-%d", i);
		optest_testctl_create(f, name, true, NULL);
	}
}

static void
assert_ok_items(struct optest *f, int n)
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

/* SIGTERMs the supervisor (any exit within 10 s), SIGKILLs what is left
 * by pid, and checks the log for sanitizer reports. */
static int
teardown(void **state)
{
	return (optest_finish(*state, OPTEST_TERM, false));
}

/* ---- tests ---- */

/* The Warning Event on ConfigMap default/name about the sandbox kill:
 * waits for it, checks that it names call. */
static void
assert_sandbox_event(struct optest *f, const char *name, const char *call)
{
	json_object *evs = NULL;
	int64_t end = ksim_now_ms() + WAIT_MS;

	do {
		json_object_put(evs);
		evs = optest_events(f, "default", name, "SandboxKilled");
		if (json_object_array_length(evs) > 0) {
			break;
		}
		ksim_sleep_ms(50);
	} while (ksim_now_ms() < end);
	if (json_object_array_length(evs) != 1) {
		fail_msg("want one SandboxKilled Event on %s, got %s", name,
		        json_object_to_json_string(evs));
	}
	json_object *ev = json_object_array_get_idx(evs, 0);
	const char *msg = jx_get_str(ev, "message");
	print_message("event: %s\n", msg);
	assert_string_equal(jx_get_str(ev, "type"), "Warning");
	assert_non_null(strstr(msg, call));
	assert_non_null(strstr(msg,
	        "the testctl worker was killed by its "
	        "sandbox: system call "));
	json_object_put(evs);
}

/* sympoziumctl worker testctl-0 names the call as the last exit. */
static void
assert_ctl_names(struct optest *f, const char *cause)
{
	struct sdproc_ctl r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock,
	        "worker", "testctl-0", NULL);

	assert_int_equal(r.rc, 0);
	print_message("%s", r.out);
	if (strstr(r.out, cause) == NULL) {
		fail_msg("sympoziumctl worker: no \"%s\" in:\n%s", cause,
		        r.out);
	}
	sdproc_ctl_free(&r);
}

/* A forbidden call kills the worker with SIGSYS, the supervisor says
 * which (log, sympoziumctl, an Event on the key); it is restarted, the
 * other keys flow, the key is quarantined and never done. */
static void
killed_and_restarted(struct optest *f, const char *action, const char *call)
{
	char cause[128];

	snprintf(cause, sizeof(cause),
	        "signal SIGSYS: killed by its sandbox: system call %s (",
	        call);
	sd_start(f, NULL);
	assert_true(log_wait(f, LEADING, 1, WAIT_MS));
	optest_testctl_create(f, "bad", true, action);
	create_ok_items(f, 5);
	if (!log_wait(f, "default/bad quarantined", 1, 20000)) {
		sdproc_dump_log(f->sd[0].log);
		fail_msg("default/bad was not quarantined");
	}
	assert_true(log_count(f, "exited: signal SIGSYS") >= 2);
	if (log_count(f, cause) < 3) {
		sdproc_dump_log(f->sd[0].log);
		fail_msg("the log does not name the call: \"%s\"", cause);
	}
	assert_int_equal(log_count(f, "default/bad lost with its worker"), 2);
	assert_ctl_names(f, cause);
	assert_sandbox_event(f, "bad", call);
	assert_ok_items(f, 5);
	/* the restarted worker keeps serving */
	optest_testctl_create(f, "late", true, NULL);
	json_object *d = wait_out(f, "late", WAIT_MS);
	assert_non_null(d);
	json_object_put(d);
	assert_false(optest_testctl_has_out(f, "bad"));
	assert_int_equal(log_count(f, "error: sandbox:"), 0);
	assert_true(sdproc_alive(f->sd[0].pid));
}

static void
test_open_killed(void **state)
{
	struct optest *f = *state;
	char action[200];

	snprintf(action, sizeof(action), "open:%s", f->a.kubeconfig);
	if (sbx_relaxed()) {
		/* ASan workers run without the filter (sandbox.h) */
		print_message("ASan build: open() is allowed\n");
		sd_start(f, NULL);
		assert_true(log_wait(f, LEADING, 1, WAIT_MS));
		optest_testctl_create(f, "bad", true, action);
		json_object *d = wait_out(f, "bad", WAIT_MS);
		assert_non_null(d);
		json_object_put(d);
		return;
	}
	killed_and_restarted(f, action, "openat");
}

static void
test_socket_killed(void **state)
{
	struct optest *f = *state;

	if (sbx_relaxed()) {
		/* ASan workers run without the filter (sandbox.h) */
		sd_start(f, NULL);
		assert_true(log_wait(f, LEADING, 1, WAIT_MS));
		optest_testctl_create(f, "bad", true, "socket");
		json_object *d = wait_out(f, "bad", WAIT_MS);
		assert_non_null(d);
		json_object_put(d);
		return;
	}
	killed_and_restarted(f, "socket", "socket");
}

/* The worker's environment: only the settings reconcilers read. */
static void
test_env_cleared(void **state)
{
	struct optest *f = *state;

	setenv("SYMPOZIUM_IMAGE_TAG", "v-test", 1);
	setenv("SYMPOZIUM_WORKER_SANDBOX", "on", 1);
	sd_start(f, NULL);
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	unsetenv("SYMPOZIUM_WORKER_SANDBOX");
	assert_true(log_wait(f, LEADING, 1, WAIT_MS));
	optest_testctl_create(f, "env", true, "env");
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
	struct optest *f = *state;
	char action[200];
	json_object *d;

	snprintf(action, sizeof(action), "open:%s", f->a.kubeconfig);
	sd_start(f, "--no-worker-sandbox");
	assert_true(log_wait(f, LEADING, 1, WAIT_MS));
	optest_testctl_create(f, "opener", true, action);
	optest_testctl_create(f, "sock", true, "socket");
	optest_testctl_create(f, "env", true, "env");
	d = wait_out(f, "opener", WAIT_MS);
	assert_non_null(d);
	assert_string_equal(jx_get_str(d, "opened"), f->a.kubeconfig);
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
		        test_open_killed, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_socket_killed, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_env_cleared, optest_testctl_setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_worker_sandbox,
		        optest_testctl_setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
