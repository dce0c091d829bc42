/*
 * timefmt.h: RFC 3339 timestamps as Kubernetes writes them, and the two
 * clocks.  Prefix timefmt_.
 *
 * Units: unix_seconds and unix_micros count from 1970-01-01T00:00:00Z and
 * ignore leap seconds (POSIX time); negative values are before 1970.  The
 * calendar is the proleptic Gregorian one, computed with plain arithmetic,
 * so neither TZ nor the C library's time functions matter.  Supported years
 * are 0001..9999, the range RFC 3339's four-digit year can write.
 *
 * Everything here is pure except timefmt_now_ms_mono() and
 * timefmt_now_us_real(), the only functions that read a clock.
 */
#ifndef TIMEFMT_H
#define TIMEFMT_H

#include <stdint.h>

#define TIMEFMT_RFC3339_LEN       32 /* size of the out buffer below */
#define TIMEFMT_RFC3339_MICRO_LEN 40

/* First and last second of the supported range (0001-01-01T00:00:00Z and
 * 9999-12-31T23:59:59Z). */
#define TIMEFMT_MIN_SECONDS (-62135596800LL)
#define TIMEFMT_MAX_SECONDS 253402300799LL

/* Writes "2006-01-02T15:04:05Z" (UTC, whole seconds; Kubernetes metav1.Time)
 * into out.  Returns 0, or -1 with out set to "" when the time is outside
 * years 0001..9999. */
int timefmt_rfc3339(int64_t unix_seconds, char out[TIMEFMT_RFC3339_LEN]);

/* Writes "2006-01-02T15:04:05.000000Z" (UTC, always six digits; Kubernetes
 * metav1.MicroTime) into out.  Times before 1970 round down, so -1 is
 * "1969-12-31T23:59:59.999999Z".  Returns 0, or -1 with out set to "" when
 * outside years 0001..9999. */
int timefmt_rfc3339_micro(
        int64_t unix_micros, char out[TIMEFMT_RFC3339_MICRO_LEN]);

/*
 * Parses an RFC 3339 date-time: "YYYY-MM-DDTHH:MM:SS[.F]Z" where F is 1 to 9
 * digits (truncated to microseconds) and the zone is "Z" or "+hh:mm" /
 * "-hh:mm"; 'T' and 'Z' may be lowercase.  Stores microseconds since the
 * epoch in *unix_micros (UTC).  Returns 0, or -1 (leaving *unix_micros
 * alone) for anything else: NULL, missing or extra characters, a space for
 * 'T', an offset without the colon, year 0000, month 13, day 31 in April,
 * Feb 29 outside leap years, hour 24, minute 60, second 60 (leap seconds
 * are refused), an offset hour above 23 or more than 9 fraction digits.
 */
int timefmt_parse(const char *s, int64_t *unix_micros);

/* Milliseconds of CLOCK_MONOTONIC: for deadlines and backoff `now`. */
int64_t timefmt_now_ms_mono(void);

/* Microseconds of CLOCK_REALTIME since the epoch: for timestamps. */
int64_t timefmt_now_us_real(void);

#endif
