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
 * Every wait is bounded (WAIT_MS).  Only the pid this test forked, and
 * the workers found under it in /proc, are signalled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"
#include "workers/cron.h"

#define WAIT_MS 15000
#define NS      "default"
#define GROUP   "sympozium.ai"
#define VERSION "v1alpha1"

static const struct kapi_res R_SCHED
        = { GROUP, VERSION, "sympoziumschedules", true };

static struct optest F;

static int
setup(void **state)
{
	*state = &F;
	return (optest_start_operator(&F, "test-schedule-tz", WAIT_MS, NULL));
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

	assert_non_null(obj);
	optest_create_or_fail(&F, &R_SCHED, NS, obj, &out);
	json_object_put(obj);
	free(text);
	return (out);
}

/* Waits for the schedule's status.phase to be phase; returns the object
 * (caller puts). */
static json_object *
wait_phase(const char *name, const char *phase)
{
	const char *fv[2] = { "status.phase", phase };
	json_object *o = NULL;

	if (optest_poll(&F, &R_SCHED, NS, name, optest_check_field, fv, &o)
	        != NULL) {
		const char *got = jx_get_str(o, "status.phase");
		sdproc_dump_log(F.sd[0].log);
		fail_msg("%s: phase %s after %d ms, want %s (%s)", name,
		        got != NULL ? got : "(none)", WAIT_MS, phase,
		        o != NULL ? json_object_to_json_string(o) : "");
	}
	return (o);
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
	(void)state;
	/* before shutdown, no worker of any controller exited */
	if (sdproc_log_count(F.sd[0].log, "exited:") != 0) {
		sdproc_dump_log(F.sd[0].log);
		fail_msg("a worker exited");
	}
	optest_sd_sigterm(&F, 0, 15000);
	assert_int_equal(
	        sdproc_log_count(F.sd[0].log, "exited: signal SIGSYS"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_york),
		cmocka_unit_test(test_unknown_zone),
		cmocka_unit_test(test_worker_alive),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
