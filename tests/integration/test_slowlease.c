/*
 * test_slowlease.c: a slow API server does not make the Lease flap (issue
 * 13 item 4).  bin/kubesim delays every request by 4 s (--fault
 * delay=4s); bin/sympoziumd with the test controller and --leader-elect
 * at the defaults (lease 15 s, renew deadline 10 s, retry period 2 s)
 * acquires the Lease and then holds it for 30 s: no "lost" line in its
 * log, one leadership only, and the renewals reached kubesim (PUTs of the
 * Lease in its request log).
 *
 * The supervisor is stopped by pid on every path (the fixture's
 * teardown).  Every wait is bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"

#define ACQUIRE_MS 40000
#define HOLD_MS    30000
#define UA_SD      "sympoziumd"

static int
setup(void **state)
{
	const char *ksim_args[] = { "--fault", "delay=4s", NULL };

	*state = optest_testctl_new("test-slowlease", ksim_args, 20000);
	return (*state != NULL ? 0 : -1);
}

static int
teardown(void **state)
{
	return (optest_finish(*state, OPTEST_TERM, false));
}

static void
test_lease_holds(void **state)
{
	struct optest *o = *state;
	const char *args[] = { "--leader-elect", "--leader-election-namespace",
		"default", NULL };
	int puts0, puts;

	optest_sd_start(o, 0, OPTEST_SD_TESTCTL, args);
	if (!sdproc_log_wait(&o->sd[0], "leading as", 1, ACQUIRE_MS)) {
		sdproc_dump_log(o->sd[0].log);
		fail_msg("no leadership within %d ms", ACQUIRE_MS);
	}
	puts0 = ksim_count_log(o->a.request_log, "PUT", "/leases/", UA_SD);
	/* Nothing to wait for: the check is that nothing happens. */
	ksim_sleep_ms(HOLD_MS);
	puts = ksim_count_log(o->a.request_log, "PUT", "/leases/", UA_SD);
	if (sdproc_log_count(o->sd[0].log, "lost") != 0
	        || sdproc_log_count(o->sd[0].log, "not leading any more") != 0
	        || sdproc_log_count(o->sd[0].log, "leading as") != 1) {
		sdproc_dump_log(o->sd[0].log);
		fail_msg("the leader lost its Lease on a 4 s-per-request "
		         "server");
	}
	/* a renewal every 4 s or so (each waits 4 s in kubesim) */
	printf("lease renewals in %d ms: %d\n", HOLD_MS, puts - puts0);
	assert_true(puts - puts0 >= HOLD_MS / 4000 - 2);
	assert_true(sdproc_alive(o->sd[0].pid));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_lease_holds, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
