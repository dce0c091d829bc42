/*
 * civil.c: the calendar of civil.h, after Howard Hinnant's
 * days_from_civil/civil_from_days: years are shifted to start on March 1
 * so the leap day ends the year, and counted in 400-year eras of 146097
 * days, the calendar's exact period.
 */
#include "common/civil.h"

#define DAYS_PER_ERA 146097 /* 400 * 365 + 97 leap days */
#define EPOCH_SHIFT  719468 /* 1970-01-01 counted from 0000-03-01 */

int64_t
civil_floor_div(int64_t a, int64_t b)
{
	return (a / b - (a % b != 0 && (a < 0) != (b < 0)));
}

int64_t
civil_floor_mod(int64_t a, int64_t b)
{
	return (a - civil_floor_div(a, b) * b);
}

bool
civil_is_leap(int64_t y)
{
	return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
}

int
civil_days_in_month(int64_t y, int m)
{
	static const int n[]
	        = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return (m == 2 && civil_is_leap(y) ? 29 : n[m - 1]);
}

int64_t
civil_days(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = civil_floor_div(y, 400);
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return (era * DAYS_PER_ERA + doe - EPOCH_SHIFT);
}

void
civil_from_days(int64_t n, int64_t *y, int *m, int *d)
{
	n += EPOCH_SHIFT;
	int64_t era = civil_floor_div(n, DAYS_PER_ERA);
	int64_t doe = n - era * DAYS_PER_ERA;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}
