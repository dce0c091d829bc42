/*
 * test_fault.c: the controller fault policy (supervisor/fault.c) with
 * injected time: a streak of different keys is a fault, one key alone is
 * not (the quarantine's case), a RESULT or the window breaks a streak, the
 * backoff while Degraded, recovery after a worker stayed up, the permanent
 * failure and its reset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "supervisor/fault.h"

/* Three different keys in a row: Degraded at the third, with the cause. */
static void
test_distinct_keys_fault(void **state)
{
	struct fault *f = fault_new(NULL);
	struct fault_info fi;

	(void)state;
	assert_false(fault_key_died(f, "ns/a", "signal SIGSYS", 100));
	assert_int_equal(fault_on_exit(f, 0, 100), 0);
	assert_false(fault_key_died(f, "ns/b", "signal SIGSYS", 200));
	assert_int_equal(fault_on_exit(f, 100, 200), 100);
	assert_int_equal(fault_state(f), FAULT_OK);
	assert_true(fault_key_died(f, "ns/c", "signal SIGSYS", 400));
	assert_int_equal(fault_state(f), FAULT_DEGRADED);
	fault_info(f, &fi);
	assert_string_equal(fi.reason,
	        "workers died on 3 different keys in a row (last: signal "
	        "SIGSYS on ns/c)");
	assert_int_equal(fi.since_ms, 400);
	assert_int_equal(fi.faults, 1);
	assert_int_equal(fi.streak_keys, 3);
	/* a further death is no new transition; the reason follows */
	assert_false(fault_key_died(f, "ns/d", "exit 3", 500));
	fault_info(f, &fi);
	assert_int_equal(fi.faults, 1);
	assert_non_null(strstr(fi.reason, "4 different keys"));
	fault_free(f);
}

/* One key dying again and again is a poison key, not a fault. */
static void
test_same_key_no_fault(void **state)
{
	struct fault *f = fault_new(NULL);
	struct fault_info fi;

	(void)state;
	for (int i = 0; i < 10; i++) {
		assert_false(fault_key_died(f, "ns/p", "signal SIGSEGV", i));
		(void)fault_on_exit(f, 0, i);
	}
	assert_int_equal(fault_state(f), FAULT_OK);
	fault_info(f, &fi);
	assert_int_equal(fi.streak_keys, 1);
	assert_string_equal(fi.reason, "");
	fault_free(f);
}

/* A poison key among keys that succeed: every RESULT breaks the streak. */
static void
test_result_breaks_streak(void **state)
{
	struct fault *f = fault_new(NULL);

	(void)state;
	assert_false(fault_key_died(f, "ns/a", "x", 1));
	assert_false(fault_key_died(f, "ns/b", "x", 2));
	fault_result(f, 3);
	assert_false(fault_key_died(f, "ns/c", "x", 4));
	assert_false(fault_key_died(f, "ns/d", "x", 5));
	assert_int_equal(fault_state(f), FAULT_OK);
	assert_true(fault_key_died(f, "ns/a", "x", 6));
	fault_free(f);
}

/* Deaths further apart than the window are not one streak. */
static void
test_window(void **state)
{
	struct fault_config c;
	struct fault *f;

	(void)state;
	fault_config_default(&c);
	c.window_ms = 1000;
	f = fault_new(&c);
	assert_false(fault_key_died(f, "ns/a", "x", 0));
	assert_false(fault_key_died(f, "ns/b", "x", 500));
	assert_false(fault_key_died(f, "ns/c", "x", 1200)); /* a left */
	assert_int_equal(fault_state(f), FAULT_OK);
	assert_true(fault_key_died(f, "ns/d", "x", 1300));
	fault_free(f);
}

static void
collect(const char *key, void *arg)
{
	char *out = arg;

	strcat(out, key);
	strcat(out, ";");
}

/* The streak's keys are walked oldest first (the caller releases those
 * it quarantined); a key dying again moves to the end. */
static void
test_streak_keys(void **state)
{
	struct fault *f = fault_new(NULL);
	char keys[128] = "";

	(void)state;
	fault_key_died(f, "ns/a", "x", 1);
	fault_key_died(f, "ns/b", "x", 2);
	fault_key_died(f, "ns/a", "x", 3);
	fault_key_died(f, "ns/c", "x", 4);
	fault_foreach_streak(f, collect, keys);
	assert_string_equal(keys, "ns/b;ns/a;ns/c;");
	fault_free(f);
}

/* While Degraded every exit waits 500 ms doubling to 30 s. */
static void
test_backoff(void **state)
{
	static const int64_t want[]
	        = { 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000 };
	struct fault *f = fault_new(NULL);

	(void)state;
	fault_key_died(f, "ns/a", "x", 1);
	fault_key_died(f, "ns/b", "x", 2);
	fault_key_died(f, "ns/c", "x", 3);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(
		        fault_on_exit(f, 7, 10 + (int64_t)i), want[i]);
	}
	fault_free(f);
}

/* Recovery: recover_ms after the first RESULT that followed the last
 * death, without a death.  Said once; the next fault starts its backoff
 * afresh. */
static void
test_recovery(void **state)
{
	struct fault *f = fault_new(NULL);
	struct fault_info fi;

	(void)state;
	fault_key_died(f, "ns/a", "x", 0);
	fault_key_died(f, "ns/b", "x", 0);
	fault_key_died(f, "ns/c", "x", 1000);
	assert_int_equal(fault_on_exit(f, 0, 1000), 500);
	/* no RESULT: staying up idle proves nothing */
	assert_int_equal(fault_next_deadline(f), -1);
	assert_false(fault_tick(f, 1000000));
	fault_result(f, 2000);
	fault_result(f, 3000); /* the first RESULT starts the clock */
	assert_int_equal(fault_next_deadline(f), 2000 + 60000);
	assert_false(fault_tick(f, 61999));
	/* a death restarts the clock and needs a new RESULT */
	assert_false(fault_key_died(f, "ns/d", "x", 50000));
	assert_int_equal(fault_on_exit(f, 0, 50000), 1000);
	assert_false(fault_tick(f, 70000));
	fault_result(f, 51000);
	assert_false(fault_tick(f, 110999));
	assert_true(fault_tick(f, 111000));
	assert_false(fault_tick(f, 111001));
	fault_info(f, &fi);
	assert_int_equal(fi.state, FAULT_OK);
	assert_string_equal(fi.reason, "");
	assert_int_equal(fi.since_ms, 111000);
	/* back to normal: exits keep their own delay */
	assert_int_equal(fault_on_exit(f, 100, 120000), 100);
	/* a new fault: backoff from 500 ms again, counted twice */
	fault_key_died(f, "ns/x", "x", 130000);
	fault_key_died(f, "ns/y", "x", 130001);
	assert_true(fault_key_died(f, "ns/z", "x", 130002));
	assert_int_equal(fault_on_exit(f, 0, 130002), 500);
	fault_info(f, &fi);
	assert_int_equal(fi.faults, 2);
	fault_free(f);
}

/* A permanent exit fails the controller until reset; deaths in between
 * are not a fault. */
static void
test_failed(void **state)
{
	struct fault *f = fault_new(NULL);
	struct fault_info fi;

	(void)state;
	fault_key_died(f, "ns/a", "x", 1);
	fault_fail(f, "exit 100 (permanent failure: bad flag)", 5);
	fault_info(f, &fi);
	assert_int_equal(fi.state, FAULT_FAILED);
	assert_string_equal(
	        fi.reason, "exit 100 (permanent failure: bad flag)");
	assert_int_equal(fi.failures, 1);
	assert_int_equal(fi.streak_keys, 0);
	assert_false(fault_key_died(f, "ns/b", "x", 6));
	assert_false(fault_key_died(f, "ns/c", "x", 7));
	assert_false(fault_key_died(f, "ns/d", "x", 8));
	assert_int_equal(fault_state(f), FAULT_FAILED);
	assert_false(fault_tick(f, 1000000));
	fault_reset(f, 2000000);
	fault_info(f, &fi);
	assert_int_equal(fi.state, FAULT_OK);
	assert_int_equal(fi.since_ms, 2000000);
	assert_string_equal(fault_state_name(FAULT_OK), "ok");
	assert_string_equal(fault_state_name(FAULT_DEGRADED), "degraded");
	assert_string_equal(fault_state_name(FAULT_FAILED), "failed");
	fault_free(f);
}

/* keys <= 0 turns controller faults off; bad input is harmless. */
static void
test_off_and_bad_input(void **state)
{
	struct fault_config c;
	struct fault *f;

	(void)state;
	fault_config_default(&c);
	c.keys = 0;
	f = fault_new(&c);
	for (int i = 0; i < 100; i++) {
		char k[16];
		snprintf(k, sizeof(k), "ns/%d", i);
		assert_false(fault_key_died(f, k, NULL, i));
	}
	assert_int_equal(fault_state(f), FAULT_OK);
	fault_free(f);
	f = fault_new(NULL);
	assert_false(fault_key_died(f, NULL, "x", 1));
	assert_false(fault_key_died(f, "", "x", 1));
	/* more distinct keys than a streak keeps: bounded */
	for (int i = 0; i < 3 * FAULT_STREAK_MAX; i++) {
		char k[16];
		snprintf(k, sizeof(k), "ns/%d", i);
		(void)fault_key_died(f, k, NULL, i);
	}
	struct fault_info fi;
	fault_info(f, &fi);
	assert_int_equal(fi.streak_keys, FAULT_STREAK_MAX);
	fault_free(NULL);
	fault_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distinct_keys_fault),
		cmocka_unit_test(test_same_key_no_fault),
		cmocka_unit_test(test_result_breaks_streak),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_streak_keys),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_recovery),
		cmocka_unit_test(test_failed),
		cmocka_unit_test(test_off_and_bad_input),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
