/*
 * timefmt.c: RFC 3339 formatting and parsing (timefmt.h) with a
 * self-contained proleptic Gregorian calendar, plus the two clock readers.
 * Days are counted from 0001-01-01 ("day 0"), which keeps every division on
 * non-negative numbers; the epoch is day EPOCH_DAY.
 */
#include "common/timefmt.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#define SECS_PER_DAY  86400
#define DAYS_PER_400Y 146097 /* 400 * 365 + 97 leap days */
#define DAYS_PER_100Y 36524
#define DAYS_PER_4Y   1461
#define EPOCH_DAY     719162 /* 1970-01-01 counted from 0001-01-01 */

/* Days before the first of each month in a common year. */
static const int month_start[13]
        = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365 };

static bool
is_leap(int64_t y)
{
	return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
}

static int
days_in_month(int64_t y, int m)
{
	return (month_start[m] - month_start[m - 1] + (m == 2 && is_leap(y)));
}

/* Days from 0001-01-01 to y-m-d (y >= 1, fields already validated). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t py = y - 1; /* complete years before y */

	return (py * 365 + py / 4 - py / 100 + py / 400 + month_start[m - 1]
	        + (m > 2 && is_leap(y)) + d - 1);
}

/* Inverse of days_from_civil() for n >= 0. */
static void
civil_from_days(int64_t n, int64_t *y, int *m, int *d)
{
	int64_t q400, q100, q4, q1;
	int doy;

	q400 = n / DAYS_PER_400Y;
	n %= DAYS_PER_400Y;
	q100 = n / DAYS_PER_100Y;
	if (q100 == 4) { /* the last day of a 400-year cycle */
		q100 = 3;
	}
	n -= q100 * DAYS_PER_100Y;
	q4 = n / DAYS_PER_4Y;
	n %= DAYS_PER_4Y;
	q1 = n / 365;
	if (q1 == 4) { /* the last day of a leap 4-year cycle */
		q1 = 3;
	}
	n -= q1 * 365;
	*y = 1 + 400 * q400 + 100 * q100 + 4 * q4 + q1;
	doy = (int)n;
	for (*m = 1; *m < 12; (*m)++) {
		if (doy < month_start[*m] + (*m >= 2 && is_leap(*y))) {
			break;
		}
	}
	*d = doy - month_start[*m - 1] - (*m > 2 && is_leap(*y)) + 1;
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	return (a / b - (a % b != 0 && (a < 0) != (b < 0)));
}

/* Writes "YYYY-MM-DDTHH:MM:SS" for a second in range; returns its length. */
static int
format_seconds(int64_t secs, char *out, size_t len)
{
	int64_t day = floor_div(secs, SECS_PER_DAY), y;
	int64_t sod = secs - day * SECS_PER_DAY;
	int m, d;

	civil_from_days(day + EPOCH_DAY, &y, &m, &d);
	return (snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, m,
	        d, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60)));
}

int
timefmt_rfc3339(int64_t unix_seconds, char out[TIMEFMT_RFC3339_LEN])
{
	out[0] = '\0';
	if (unix_seconds < TIMEFMT_MIN_SECONDS
	        || unix_seconds > TIMEFMT_MAX_SECONDS) {
		return (-1);
	}
	format_seconds(unix_seconds, out, TIMEFMT_RFC3339_LEN - 1);
	out[19] = 'Z';
	out[20] = '\0';
	return (0);
}

int
timefmt_rfc3339_micro(int64_t unix_micros, char out[TIMEFMT_RFC3339_MICRO_LEN])
{
	int64_t secs = floor_div(unix_micros, 1000000);
	int n;

	out[0] = '\0';
	if (secs < TIMEFMT_MIN_SECONDS || secs > TIMEFMT_MAX_SECONDS) {
		return (-1);
	}
	n = format_seconds(secs, out, TIMEFMT_RFC3339_MICRO_LEN);
	snprintf(out + n, (size_t)(TIMEFMT_RFC3339_MICRO_LEN - n), ".%06dZ",
	        (int)(unix_micros - secs * 1000000));
	return (0);
}

/* Reads exactly n decimal digits at *sp into *out and advances *sp. */
static int
digits(const char **sp, int n, int *out)
{
	int v = 0;

	for (; n > 0; n--, (*sp)++) {
		if (**sp < '0' || **sp > '9') {
			return (-1);
		}
		v = v * 10 + (**sp - '0');
	}
	*out = v;
	return (0);
}

/* Reads the character c (either case for letters) at *sp. */
static int
expect(const char **sp, char c)
{
	char got = **sp;

	if (got >= 'a' && got <= 'z') {
		got = (char)(got - 'a' + 'A');
	}
	if (got != c) {
		return (-1);
	}
	(*sp)++;
	return (0);
}

/* Optional ".F": 1..9 digits, truncated to microseconds. */
static int
fraction(const char **sp, int64_t *us)
{
	int n = 0;
	int64_t v = 0;

	*us = 0;
	if (**sp != '.') {
		return (0);
	}
	for ((*sp)++; **sp >= '0' && **sp <= '9'; (*sp)++, n++) {
		if (n < 6) {
			v = v * 10 + (**sp - '0');
		}
	}
	if (n < 1 || n > 9) {
		return (-1);
	}
	for (; n < 6; n++) {
		v *= 10;
	}
	*us = v;
	return (0);
}

/* "Z" or "+hh:mm"/"-hh:mm" into seconds east of UTC. */
static int
zone(const char **sp, int64_t *offset)
{
	int sign, hh, mm;

	if (expect(sp, 'Z') == 0) {
		*offset = 0;
		return (0);
	}
	if (**sp != '+' && **sp != '-') {
		return (-1);
	}
	sign = **sp == '-' ? -1 : 1;
	(*sp)++;
	if (digits(sp, 2, &hh) < 0 || expect(sp, ':') < 0
	        || digits(sp, 2, &mm) < 0 || hh > 23 || mm > 59) {
		return (-1);
	}
	*offset = sign * (hh * 3600 + mm * 60);
	return (0);
}

int
timefmt_parse(const char *s, int64_t *unix_micros)
{
	int y, mo, d, h, mi, sec;
	int64_t us, offset, secs;

	if (s == NULL || digits(&s, 4, &y) < 0 || expect(&s, '-') < 0
	        || digits(&s, 2, &mo) < 0 || expect(&s, '-') < 0
	        || digits(&s, 2, &d) < 0 || expect(&s, 'T') < 0
	        || digits(&s, 2, &h) < 0 || expect(&s, ':') < 0
	        || digits(&s, 2, &mi) < 0 || expect(&s, ':') < 0
	        || digits(&s, 2, &sec) < 0 || fraction(&s, &us) < 0
	        || zone(&s, &offset) < 0 || *s != '\0') {
		return (-1);
	}
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)
	        || h > 23 || mi > 59 || sec > 59) {
		return (-1);
	}
	secs = (days_from_civil(y, mo, d) - EPOCH_DAY) * SECS_PER_DAY
	        + h * 3600 + mi * 60 + sec - offset;
	*unix_micros = secs * 1000000 + us;
	return (0);
}

int64_t
timefmt_now_ms_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int64_t
timefmt_now_us_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}
