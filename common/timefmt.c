/*
 * timefmt.c: RFC 3339 formatting and parsing (timefmt.h) over the
 * calendar of common/civil.h, plus the two clock readers.
 */
#include "common/timefmt.h"

#include <stdio.h>
#include <time.h>

#include "common/civil.h"

#define SECS_PER_DAY 86400

/* Writes "YYYY-MM-DDTHH:MM:SS" for a second in range; returns its length. */
static int
format_seconds(int64_t secs, char *out, size_t len)
{
	int64_t day = civil_floor_div(secs, SECS_PER_DAY), y;
	int64_t sod = secs - day * SECS_PER_DAY;
	int m, d;

	civil_from_days(day, &y, &m, &d);
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
	int64_t secs = civil_floor_div(unix_micros, 1000000);
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
	if (y < 1 || mo < 1 || mo > 12 || d < 1
	        || d > civil_days_in_month(y, mo) || h > 23 || mi > 59
	        || sec > 59) {
		return (-1);
	}
	secs = civil_days(y, mo, d) * SECS_PER_DAY + h * 3600 + mi * 60 + sec
	        - offset;
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
