/*
 * civil.h: the proleptic Gregorian calendar in plain integer arithmetic,
 * for every module that turns dates into day counts and back (RFC 3339
 * timestamps in timefmt.c, cron schedules and TZ rules in workers/cron.c).
 * Prefix civil_.
 *
 * Days count from 1970-01-01 (day 0); negative days are before it.  Years
 * are astronomical (year 0 is 1 BC) and every function is exact for any
 * date whose day count fits in an int64_t with room for the 400-year
 * shift (|years| below about 2.5e16).  Neither TZ nor the C library's time
 * functions are used.  Pure.
 */
#ifndef CIVIL_H
#define CIVIL_H

#include <stdbool.h>
#include <stdint.h>

/* a / b rounded toward negative infinity (b != 0). */
int64_t civil_floor_div(int64_t a, int64_t b);
/* a - civil_floor_div(a, b) * b: in [0, b) for b > 0. */
int64_t civil_floor_mod(int64_t a, int64_t b);

/* Whether y is a leap year. */
bool civil_is_leap(int64_t y);
/* Days in month m (1..12) of year y. */
int civil_days_in_month(int64_t y, int m);

/* Days since 1970-01-01 of y-m-d (m 1..12, d 1..31; a d past the month's
 * end counts on into the next month). */
int64_t civil_days(int64_t y, int m, int d);
/* The date of day n since 1970-01-01: the inverse of civil_days(). */
void civil_from_days(int64_t n, int64_t *y, int *m, int *d);

#endif
