/*
 * test_civil.c: the proleptic Gregorian calendar (common/civil.h): known
 * day numbers, the leap-year rule, every day of years 0001..9999 against
 * a day-by-day walk, negative years and days, floor division.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/civil.h"

static void
test_known(void **state)
{
	(void)state;
	assert_int_equal(civil_days(1970, 1, 1), 0);
	assert_int_equal(civil_days(1969, 12, 31), -1);
	assert_int_equal(civil_days(2000, 3, 1), 11017);
	assert_int_equal(civil_days(2000, 2, 29), 11016);
	assert_int_equal(civil_days(1, 1, 1), -719162);
	assert_int_equal(civil_days(9999, 12, 31), 2932896);
	assert_int_equal(civil_days(0, 3, 1), -719468);
	assert_int_equal(civil_days(-1, 12, 31), -719529);
	/* a day past the month's end counts on */
	assert_int_equal(civil_days(2023, 1, 32), civil_days(2023, 2, 1));
	assert_int_equal(civil_days(2023, 2, 29), civil_days(2023, 3, 1));
}

static void
test_leap(void **state)
{
	(void)state;
	assert_true(civil_is_leap(2000));
	assert_true(civil_is_leap(2024));
	assert_true(civil_is_leap(1600));
	assert_true(civil_is_leap(0));
	assert_true(civil_is_leap(-4));
	assert_true(civil_is_leap(-400));
	assert_false(civil_is_leap(1900));
	assert_false(civil_is_leap(2100));
	assert_false(civil_is_leap(2023));
	assert_false(civil_is_leap(-100));
	assert_int_equal(civil_days_in_month(2024, 2), 29);
	assert_int_equal(civil_days_in_month(1900, 2), 28);
	assert_int_equal(civil_days_in_month(2023, 4), 30);
	assert_int_equal(civil_days_in_month(2023, 12), 31);
}

/* Walks y-m-d from start, one day at a time for n days, checking both
 * directions against the running day number. */
static void
walk(int64_t y, int m, int d, int64_t n)
{
	int64_t day = civil_days(y, m, d), gy;
	int gm, gd;

	for (int64_t i = 0; i < n; i++, day++) {
		assert_int_equal(civil_days(y, m, d), day);
		civil_from_days(day, &gy, &gm, &gd);
		assert_int_equal(gy, y);
		assert_int_equal(gm, m);
		assert_int_equal(gd, d);
		if (++d > civil_days_in_month(y, m)) {
			d = 1;
			if (++m > 12) {
				m = 1;
				y++;
			}
		}
	}
}

static void
test_every_day(void **state)
{
	(void)state;
	walk(1, 1, 1, 2932896 + 719162 + 1); /* 0001-01-01..9999-12-31 */
	walk(-1200, 1, 1, 3 * 146097);       /* three eras before year 0 */
}

static void
test_far(void **state)
{
	int64_t y;
	int m, d;

	(void)state;
	civil_from_days(civil_days(1000000000, 2, 29), &y, &m, &d);
	assert_int_equal(y, 1000000000);
	assert_int_equal(m, 2);
	assert_int_equal(d, 29);
	civil_from_days(civil_days(-1000000000, 12, 31), &y, &m, &d);
	assert_int_equal(y, -1000000000);
	assert_int_equal(m, 12);
	assert_int_equal(d, 31);
	/* 400 years are exactly 146097 days, anywhere */
	assert_int_equal(civil_days(-1000000000 + 400, 5, 6)
	                - civil_days(-1000000000, 5, 6),
	        146097);
}

static void
test_floor(void **state)
{
	(void)state;
	assert_int_equal(civil_floor_div(7, 2), 3);
	assert_int_equal(civil_floor_div(-7, 2), -4);
	assert_int_equal(civil_floor_div(-8, 2), -4);
	assert_int_equal(civil_floor_div(7, -2), -4);
	assert_int_equal(civil_floor_div(-1, 86400), -1);
	assert_int_equal(civil_floor_div(0, 86400), 0);
	assert_int_equal(civil_floor_mod(-1, 7), 6);
	assert_int_equal(civil_floor_mod(-7, 7), 0);
	assert_int_equal(civil_floor_mod(13, 12), 1);
	assert_int_equal(civil_floor_mod(-13, 12), 11);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_leap),
		cmocka_unit_test(test_every_day),
		cmocka_unit_test(test_far),
		cmocka_unit_test(test_floor),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
