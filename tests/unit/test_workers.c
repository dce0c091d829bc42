/*
 * test_workers.c: the pure parts of the worker pool (supervisor/workers.c)
 * that need no process: state and exit-cause strings, controller
 * validation, and a pool that was never started (no dispatch, no
 * deadlines, shutdown done at once).  Real processes are exercised by
 * tests/integration/test_workers_proc.c.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "supervisor/workers.h"

static void
test_state_names(void **state)
{
	(void)state;
	assert_string_equal(wk_state_name(WK_STARTING), "starting");
	assert_string_equal(wk_state_name(WK_READY), "ready");
	assert_string_equal(wk_state_name(WK_BUSY), "busy");
	assert_string_equal(wk_state_name(WK_RESTARTING), "restarting");
	assert_string_equal(wk_state_name(WK_CRASHLOOP), "crash-loop");
	assert_string_equal(wk_state_name(WK_STOPPING), "stopping");
	assert_string_equal(wk_state_name(WK_STOPPED), "stopped");
	assert_string_equal(wk_state_name((enum wk_state)99), "unknown");
}

static void
test_exit_causes(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(wk_exit_cause(3 << 8, buf, sizeof(buf)), "exit 3");
	assert_string_equal(wk_exit_cause(0, buf, sizeof(buf)), "exit 0");
	assert_string_equal(
	        wk_exit_cause(SIGSEGV, buf, sizeof(buf)), "signal SIGSEGV");
	assert_string_equal(
	        wk_exit_cause(SIGKILL, buf, sizeof(buf)), "signal SIGKILL");
	assert_string_equal(wk_exit_cause(SIGABRT | 0x80, buf, sizeof(buf)),
	        "signal SIGABRT (core dumped)");
	assert_string_equal(wk_exit_cause(0x137f, buf, sizeof(buf)),
	        "status 0x137f"); /* stopped, not an exit */
	wk_exit_cause(3 << 8, buf, 4);
	assert_string_equal(buf, "exi");
}

static struct wk_pool *
pool(const char *dir)
{
	struct wk_config c;

	wk_config_default(&c);
	assert_int_equal(c.reconcile_ms, 60000);
	assert_int_equal(c.handshake_ms, 5000);
	c.binary = "/nonexistent/worker";
	c.runtime_dir = dir;
	return (wk_pool_new(&c, NULL, NULL));
}

static void
test_add_controller(void **state)
{
	struct wk_pool *p = pool("/tmp");
	char err[128], longdir[200];

	(void)state;
	assert_int_equal(wk_add_controller(p, "agentrun", 4, err, 128), 0);
	assert_int_equal(wk_add_controller(p, "agentrun", 1, err, 128), -1);
	assert_non_null(strstr(err, "given twice"));
	assert_int_equal(wk_add_controller(p, "Bad_Name", 1, err, 128), -1);
	assert_int_equal(wk_add_controller(p, "", 1, err, 128), -1);
	assert_int_equal(wk_add_controller(p, NULL, 1, err, 128), -1);
	assert_int_equal(wk_add_controller(p, "x", 0, err, 128), -1);
	assert_int_equal(
	        wk_add_controller(p, "x", WK_PROCS_MAX + 1, err, 128), -1);
	assert_int_equal(wk_add_controller(p, "x", WK_PROCS_MAX, err, 128), 0);
	assert_non_null(wk_quarantine(p, "agentrun"));
	assert_null(wk_quarantine(p, "nope"));
	wk_free(p);
	memset(longdir, 'd', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	p = pool(longdir);
	assert_int_equal(wk_add_controller(p, "agentrun", 1, err, 128), -1);
	assert_non_null(strstr(err, "too long"));
	wk_free(p);
}

static int nslots;

static void
count_slot(const struct wk_info *in, void *arg)
{
	(void)arg;
	assert_int_equal(in->state, WK_STOPPED);
	assert_int_equal(in->pid, 0);
	assert_null(in->key);
	assert_int_equal(in->restarts, 0);
	assert_string_equal(in->last_cause, "");
	nslots++;
}

static void
test_unstarted_pool(void **state)
{
	struct wk_pool *p = pool("/tmp");
	char err[128];

	(void)state;
	assert_int_equal(wk_add_controller(p, "instance", 2, err, 128), 0);
	assert_int_equal(wk_idle(p, "instance"), 0);
	assert_int_equal(wk_idle(p, "nope"), 0);
	assert_int_equal(wk_dispatch(p, "instance", "ns/a",
	                         json_object_new_object(), 0),
	        -1);
	assert_int_equal(
	        wk_dispatch(p, "nope", "ns/a", json_object_new_object(), 0),
	        -1);
	assert_int_equal(wk_next_deadline(p, 100), -1);
	wk_tick(p, 100);
	wk_reap(p, 100);
	wk_handle_io(p, 100);
	nslots = 0;
	wk_foreach(p, 100, count_slot, NULL);
	assert_int_equal(nslots, 2);
	assert_false(wk_done(p));
	wk_shutdown(p, 100);
	assert_true(wk_done(p));
	wk_free(p);
	wk_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_exit_causes),
		cmocka_unit_test(test_add_controller),
		cmocka_unit_test(test_unstarted_pool),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
