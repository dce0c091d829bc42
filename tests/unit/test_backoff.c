/* test_backoff.c: reflector backoff, per-key exponential delays, PRNG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "common/backoff.h"

static void
reflector(struct backoff *b)
{
	backoff_init(b, BACKOFF_REFLECTOR_INITIAL_MS, BACKOFF_REFLECTOR_FACTOR,
	        BACKOFF_REFLECTOR_JITTER, BACKOFF_REFLECTOR_CAP_MS,
	        BACKOFF_REFLECTOR_RESET_MS);
}

/* Lower bounds of the reflector's steps: 0.8, 1.6, ... 25.6, then 30 s. */
static const int64_t steps[]
        = { 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 30000 };

#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static void
test_reflector_bounds(void **state)
{
	struct backoff b;
	int64_t now = 1000, d;
	size_t i;

	(void)state;
	/* rnd01 = 0 gives the low end, rnd01 just below 1 the high end. */
	reflector(&b);
	for (i = 0; i < NSTEPS; i++) {
		d = backoff_next(&b, now, 0.0);
		assert_int_equal(d, steps[i]);
		now += d;
	}
	reflector(&b);
	for (i = 0; i < NSTEPS; i++) {
		d = backoff_next(&b, now, 0.999999999);
		assert_int_equal(d, 2 * steps[i] - 1);
		now += d;
	}
	reflector(&b);
	for (i = 0; i < NSTEPS; i++) {
		d = backoff_next(&b, now, 0.5);
		assert_int_equal(d, steps[i] + steps[i] / 2);
		now += d;
	}
}

/* With the PRNG every delay lands in [d, 2d) and the steady state stays in
 * [30, 60) s. */
static void
test_reflector_random(void **state)
{
	struct backoff b;
	uint64_t seed = 12345;
	int64_t now = 0, d;
	size_t i;

	(void)state;
	reflector(&b);
	for (i = 0; i < 1000; i++) {
		int64_t lo = i < NSTEPS ? steps[i] : 30000;

		d = backoff_next(&b, now, backoff_rand01(&seed));
		assert_in_range(d, lo, 2 * lo - 1);
		now += d;
	}
}

static void
test_reset_after_quiet(void **state)
{
	struct backoff b;
	int64_t now = 5000;
	int i;

	(void)state;
	reflector(&b);
	for (i = 0; i < 8; i++) {
		backoff_next(&b, now, 0.0);
		now += 60000; /* one minute apart: no reset */
	}
	assert_int_equal(backoff_next(&b, now, 0.0), 30000);
	/* Exactly 2 min since the last call is not yet "more than" 2 min. */
	now += 120000;
	assert_int_equal(backoff_next(&b, now, 0.0), 30000);
	/* 2 min + 1 ms of quiet resets to the initial step. */
	now += 120001;
	assert_int_equal(backoff_next(&b, now, 0.0), 800);
	assert_int_equal(backoff_next(&b, now + 1, 0.0), 1600);
	/* An explicit reset. */
	backoff_reset(&b);
	assert_int_equal(backoff_next(&b, now + 2, 0.0), 800);
}

static void
test_no_reset_when_disabled(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 10, 2.0, 0.0, 0, 0);
	assert_int_equal(backoff_next(&b, 0, 0.9), 10);
	assert_int_equal(backoff_next(&b, 1000000000, 0.9), 20);
	assert_int_equal(backoff_next(&b, 2000000000, 0.9), 40);
}

static void
test_clamping(void **state)
{
	struct backoff b;
	int64_t d, prev = 0;
	int i;

	(void)state;
	/* No cap and a huge factor saturate without overflow. */
	backoff_init(&b, 1000, 1e300, 10.0, 0, 0);
	for (i = 0; i < 100; i++) {
		d = backoff_next(&b, i, 0.999);
		assert_true(d >= prev);
		prev = d;
	}
	assert_true(d > 0);
	/* Bad parameters and random numbers are clamped. */
	backoff_init(&b, -5, 0.5, -1.0, 100, 0);
	assert_int_equal(backoff_next(&b, 0, 0.5), 0);
	backoff_init(&b, 100, 0.5, 1.0, 1000, 0);
	assert_int_equal(backoff_next(&b, 0, -3.0), 100);
	assert_int_equal(backoff_next(&b, 0, 7.0), 199);
	assert_int_equal(backoff_next(&b, 0, NAN), 100);
	/* The cap bounds the step, not the jitter on top of it. */
	backoff_init(&b, 100, 3.0, 1.0, 250, 0);
	assert_int_equal(backoff_next(&b, 0, 0.0), 100);
	assert_int_equal(backoff_next(&b, 0, 0.0), 250);
	assert_int_equal(backoff_next(&b, 0, 0.999999), 499);
}

static void
test_exp(void **state)
{
	(void)state;
	assert_int_equal(backoff_exp(5, 1000000, 0), 5);
	assert_int_equal(backoff_exp(5, 1000000, 1), 10);
	assert_int_equal(backoff_exp(5, 1000000, 2), 20);
	assert_int_equal(backoff_exp(5, 1000000, 3), 40);
	assert_int_equal(backoff_exp(5, 1000000, 17), 655360);
	assert_int_equal(backoff_exp(5, 1000000, 18), 1000000);
	assert_int_equal(backoff_exp(5, 1000000, 1000), 1000000);
	assert_int_equal(backoff_exp(5, 1000000, 2147483647), 1000000);
	assert_int_equal(backoff_exp(5, 1000000, -1), 5);
	assert_int_equal(backoff_exp(5, 3, 0), 3);
	assert_int_equal(backoff_exp(0, 1000, 1000), 0);
	assert_int_equal(backoff_exp(-5, 1000, 3), 0);
	/* No cap: saturates at INT64_MAX instead of wrapping. */
	assert_true(backoff_exp(5, 0, 1000) == INT64_MAX);
	assert_true(backoff_exp(1, 0, 62) == (int64_t)1 << 62);
	assert_true(backoff_exp(1, -1, 63) == INT64_MAX);
}

static void
test_rand01(void **state)
{
	uint64_t s1 = 0, s2 = 0, s3 = 99;
	double sum = 0, r, lo = 1, hi = 0;
	int i, same = 0;

	(void)state;
	for (i = 0; i < 100000; i++) {
		r = backoff_rand01(&s1);
		assert_true(r >= 0.0 && r < 1.0);
		sum += r;
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
		/* Same seed, same sequence; another seed differs. */
		assert_true(r == backoff_rand01(&s2));
		same += r == backoff_rand01(&s3);
	}
	assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
	assert_true(lo < 0.001 && hi > 0.999);
	assert_true(same < 10);
	assert_true(s1 != 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reflector_bounds),
		cmocka_unit_test(test_reflector_random),
		cmocka_unit_test(test_reset_after_quiet),
		cmocka_unit_test(test_no_reset_when_disabled),
		cmocka_unit_test(test_clamping),
		cmocka_unit_test(test_exp),
		cmocka_unit_test(test_rand01),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
