/*
 * test_schedule_tz.c: SympoziumSchedules with a CRON_TZ= zone under the
 * whole operator (bin/sympoziumd and bin/sympozium-worker against
 * bin/kubesim) with the worker sandbox on: the schedule worker cannot
 * open the zone file, so it asks the supervisor (a zoneinfo view).  A
 * schedule in America/New_York reaches phase Active with the nextRunTime
 * computed in that zone; one in an unknown zone gets the InvalidSchedule
 * status; and the schedule worker never died (no "exited: signal SIGSYS"
 * in the supervisor's log, no restart).  In ASan builds the sandbox has no
 * filter (sbx_relaxed()): the test still runs but proves the view path
 * only in `make check`.
 *
 * Every wait is bounded (WAIT_MS).  Only the pid this test forked is
 * signalled.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "tests/lib/ksim.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"
#include "workers/cron.h"

#define WAIT_MS 15000
#define NS      "default"
#define GROUP   "sympozium.ai"
#define VERSION "v1alpha1"

static const struct kapi_res R_SCHED
        = { GROUP, VERSION, "sympoziumschedules", true };

static struct {
	struct ksim_api a;
	char dir[64];
	char log[128];
	pid_t pid; /* 0 once reaped */
	int status;
} F;

static void
apply_crds(void)
{
	char *dir = testutil_shared_path("upstream/sympozium-v1alpha1/crds");
	int n = ksim_apply_crds(F.a.c, dir);

	free(dir);
	assert_int_equal(n, 8);
}

static void
sd_start(void)
{
	char rundir[128];
	const char *args[] = { "--kubeconfig", F.a.kubeconfig, "--runtime-dir",
		rundir, "--metrics-bind-address=0",
		"--health-probe-bind-address=0", NULL };

	snprintf(F.log, sizeof(F.log), "%s/sympoziumd.log", F.dir);
	snprintf(rundir, sizeof(rundir), "%s/run", F.dir);
	F.pid = sdproc_start(F.log, args);
	assert_true(F.pid > 0);
}

static char *
sd_log(void)
{
	char *t = testutil_read_file(F.log, NULL);

	return (t != NULL ? t : xstrdup(""));
}

static int
setup(void **state)
{
	(void)state;
	memset(&F, 0, sizeof(F));
	snprintf(F.dir, sizeof(F.dir), "/tmp/test-schedtz-XXXXXX");
	if (mkdtemp(F.dir) == NULL) {
		return (-1);
	}
	if (ksim_api_start(&F.a, NULL, "test-schedule-tz/0.1", 10000) != 0) {
		return (-1);
	}
	apply_crds();
	sd_start();
	return (0);
}

static int
teardown(void **state)
{
	char path[256];
	int rc;

	(void)state;
	if (F.pid > 0) {
		(void)kill(F.pid, SIGTERM);
		if (!sdproc_reap(&F.pid, &F.status, 15000)) {
			(void)kill(F.pid, SIGKILL);
			(void)sdproc_reap(&F.pid, &F.status, 5000);
		}
	}
	rc = ksim_api_stop(&F.a);
	snprintf(path, sizeof(path), "%s/sympoziumd.log", F.dir);
	(void)unlink(path);
	snprintf(path, sizeof(path), "%s/run", F.dir);
	(void)rmdir(path);
	(void)rmdir(F.dir);
	return (rc == 0 ? 0 : -1);
}

/* Creates schedule name with the cron expression, retrying while the CRD
 * is not served yet; returns the created object. */
static json_object *
create_schedule(const char *name, const char *cron)
{
	char *text = xasprintf("{\"apiVersion\":\"" GROUP "/" VERSION "\","
	                       "\"kind\":\"SympoziumSchedule\",\"metadata\":"
	                       "{\"name\":\"%s\",\"namespace\":\"" NS "\"},"
	                       "\"spec\":{\"instanceRef\":\"nobody\","
	                       "\"schedule\":\"%s\",\"task\":\"Check in.\"}}",
	        name, cron);
	json_object *obj = json_tokener_parse(text), *out = NULL;
	int64_t end = ksim_now_ms() + WAIT_MS;
	enum kapi_rc rc;

	assert_non_null(obj);
	for (;;) {
		struct kapi_err e = KAPI_ERR_INIT;
		rc = kapi_create(F.a.c, &R_SCHED, NS, obj, &out, &e);
		if (rc != KAPI_ENOTFOUND || ksim_now_ms() >= end) {
			if (rc != KAPI_OK) {
				fail_msg("create %s: %s", name, e.message);
			}
			kapi_err_fini(&e);
			break;
		}
		kapi_err_fini(&e);
		ksim_sleep_ms(50);
	}
	json_object_put(obj);
	free(text);
	return (out);
}

/* Waits for the schedule's status.phase to be phase; returns the object
 * (caller puts). */
static json_object *
wait_phase(const char *name, const char *phase)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	json_object *o = NULL;

	for (;;) {
		struct kapi_err e = KAPI_ERR_INIT;
		enum kapi_rc rc = kapi_get(F.a.c, &R_SCHED, NS, name, &o, &e);
		const char *got
		        = rc == KAPI_OK ? jx_get_str(o, "status.phase") : NULL;
		kapi_err_fini(&e);
		if (got != NULL && strcmp(got, phase) == 0) {
			return (o);
		}
		if (ksim_now_ms() >= end) {
			char *log = sd_log();
			fprintf(stderr, "---- sympoziumd log ----\n%s----\n",
			        log);
			free(log);
			fail_msg("%s: phase %s after %d ms, want %s (%s)",
			        name, got != NULL ? got : "(none)", WAIT_MS,
			        phase,
			        o != NULL ? json_object_to_json_string(o)
			                  : "");
		}
		json_object_put(o);
		o = NULL;
		ksim_sleep_ms(100);
	}
}

/* A month half a year away, so the schedule is not due in the test. */
static int
far_month(void)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	return ((tm.tm_mon + 6) % 12 + 1);
}

static void
test_new_york(void **state)
{
	char cron[96], want[TIMEFMT_RFC3339_LEN], err[256];
	json_object *created, *o;
	int64_t cts_us, next_ms;
	struct cron *c = NULL;

	(void)state;
	snprintf(cron, sizeof(cron), "CRON_TZ=America/New_York 0 9 1 %d *",
	        far_month());
	created = create_schedule("ny", cron);
	assert_int_equal(timefmt_parse(jx_get_str(created,
	                                       "metadata.creationTimestamp"),
	                         &cts_us),
	        0);
	/* what the reconciler must compute: first fire after creation - 24 h,
	 * in New York (this process may read the zone file) */
	assert_int_equal(cron_parse(cron, &c, err, sizeof(err)), 0);
	assert_int_equal(cron_next(c, cts_us / 1000 - 86400000, &next_ms), 0);
	cron_free(c);
	timefmt_rfc3339(next_ms / 1000, want);
	o = wait_phase("ny", "Active");
	assert_string_equal(jx_get_str(o, "status.nextRunTime"), want);
	/* 09:00 in New York is 13:00 or 14:00 UTC, never 09:00 */
	assert_null(strstr(want, "T09:00:00"));
	json_object_put(o);
	json_object_put(created);
}

static void
test_unknown_zone(void **state)
{
	json_object *o, *c;

	(void)state;
	json_object_put(
	        create_schedule("nowhere", "CRON_TZ=Nowhere/City 0 9 * * *"));
	o = wait_phase("nowhere", "Error");
	c = json_object_array_get_idx(jx_get(o, "status.conditions"), 0);
	assert_string_equal(jx_get_str(c, "reason"), "InvalidSchedule");
	assert_non_null(strstr(jx_get_str(c, "message"),
	        "unknown time zone \"Nowhere/City\""));
	json_object_put(o);
}

/* The schedule worker never died: no SIGSYS, no restart. */
static void
test_worker_alive(void **state)
{
	char *log = sd_log();

	(void)state;
	/* before shutdown, no worker of any controller exited */
	if (strstr(log, "exited:") != NULL) {
		fprintf(stderr, "---- sympoziumd log ----\n%s----\n", log);
		free(log);
		fail_msg("a worker exited");
	}
	free(log);
	assert_true(F.pid > 0);
	assert_int_equal(kill(F.pid, SIGTERM), 0);
	assert_true(sdproc_reap(&F.pid, &F.status, 15000));
	assert_true(WIFEXITED(F.status) && WEXITSTATUS(F.status) == 0);
	log = sd_log();
	assert_null(strstr(log, "exited: signal SIGSYS"));
	free(log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_york),
		cmocka_unit_test(test_unknown_zone),
		cmocka_unit_test(test_worker_alive),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
