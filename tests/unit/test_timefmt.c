/* test_timefmt.c: RFC 3339 formatting, parsing and the calendar. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/timefmt.h"

/* Unix seconds of well-known instants (checked against Python's calendar
 * module and Go's reference time). */
static const struct {
	int64_t secs;
	const char *text;
} known[] = {
	{ 0, "1970-01-01T00:00:00Z" },
	{ 1136239445, "2006-01-02T22:04:05Z" },
	{ 951782400, "2000-02-29T00:00:00Z" },
	{ 951868800, "2000-03-01T00:00:00Z" },
	{ 1709208000, "2024-02-29T12:00:00Z" },
	{ -2203891200, "1900-03-01T00:00:00Z" },
	{ -2203977600, "1900-02-28T00:00:00Z" },
	{ -1, "1969-12-31T23:59:59Z" },
	{ -14182940, "1969-07-20T20:17:40Z" },
	{ -62135596800, "0001-01-01T00:00:00Z" },
	{ 253402300799, "9999-12-31T23:59:59Z" },
	{ -11670998400, "1600-02-29T00:00:00Z" },
	{ 4107542400, "2100-03-01T00:00:00Z" },
	{ 946684799, "1999-12-31T23:59:59Z" },
	{ 978307200, "2001-01-01T00:00:00Z" },
};

static void
test_format_known(void **state)
{
	char out[TIMEFMT_RFC3339_LEN];
	int64_t us;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		assert_int_equal(timefmt_rfc3339(known[i].secs, out), 0);
		assert_string_equal(out, known[i].text);
		assert_int_equal(timefmt_parse(known[i].text, &us), 0);
		assert_true(us == known[i].secs * 1000000);
	}
}

static void
test_format_range(void **state)
{
	char out[TIMEFMT_RFC3339_LEN];
	char outm[TIMEFMT_RFC3339_MICRO_LEN];

	(void)state;
	assert_int_equal(timefmt_rfc3339(TIMEFMT_MIN_SECONDS - 1, out), -1);
	assert_string_equal(out, "");
	assert_int_equal(timefmt_rfc3339(TIMEFMT_MAX_SECONDS + 1, out), -1);
	assert_int_equal(timefmt_rfc3339(INT64_MIN, out), -1);
	assert_int_equal(timefmt_rfc3339(INT64_MAX, out), -1);
	assert_int_equal(timefmt_rfc3339_micro(INT64_MIN, outm), -1);
	assert_string_equal(outm, "");
	assert_int_equal(timefmt_rfc3339_micro(INT64_MAX, outm), -1);
	assert_int_equal(timefmt_rfc3339_micro(
	                         TIMEFMT_MAX_SECONDS * 1000000 + 999999, outm),
	        0);
	assert_string_equal(outm, "9999-12-31T23:59:59.999999Z");
	assert_int_equal(
	        timefmt_rfc3339_micro(TIMEFMT_MIN_SECONDS * 1000000, outm), 0);
	assert_string_equal(outm, "0001-01-01T00:00:00.000000Z");
	assert_int_equal(
	        timefmt_rfc3339_micro(TIMEFMT_MIN_SECONDS * 1000000 - 1, outm),
	        -1);
}

static void
test_micro(void **state)
{
	char out[TIMEFMT_RFC3339_MICRO_LEN];

	(void)state;
	assert_int_equal(timefmt_rfc3339_micro(0, out), 0);
	assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
	assert_int_equal(timefmt_rfc3339_micro(1136239445123456, out), 0);
	assert_string_equal(out, "2006-01-02T22:04:05.123456Z");
	assert_int_equal(timefmt_rfc3339_micro(-1, out), 0);
	assert_string_equal(out, "1969-12-31T23:59:59.999999Z");
	assert_int_equal(timefmt_rfc3339_micro(-1000000, out), 0);
	assert_string_equal(out, "1969-12-31T23:59:59.000000Z");
	assert_int_equal(timefmt_rfc3339_micro(-1000001, out), 0);
	assert_string_equal(out, "1969-12-31T23:59:58.999999Z");
}

/* Every day of 0001..9999 formats and parses back to itself; consecutive
 * days differ by exactly 86400 s and the dates advance one by one. */
static void
test_round_trip_all_days(void **state)
{
	char out[TIMEFMT_RFC3339_MICRO_LEN], prev[TIMEFMT_RFC3339_MICRO_LEN];
	int64_t t, us;

	(void)state;
	prev[0] = '\0';
	for (t = TIMEFMT_MIN_SECONDS; t <= TIMEFMT_MAX_SECONDS; t += 86400) {
		int64_t x = t * 1000000 + 43200123456; /* 12:00:00.123456 */

		assert_int_equal(timefmt_rfc3339_micro(x, out), 0);
		assert_string_equal(out + 10, "T12:00:00.123456Z");
		assert_int_equal(timefmt_parse(out, &us), 0);
		assert_true(us == x);
		assert_true(strcmp(prev, out) < 0);
		memcpy(prev, out, sizeof(out));
	}
	assert_string_equal(prev, "9999-12-31T12:00:00.123456Z");
}

static const struct {
	const char *text;
	int64_t us;
} valid[] = {
	{ "2006-01-02T15:04:05-07:00", 1136239445000000 },
	{ "2006-01-02T15:04:05+00:00", 1136214245000000 },
	{ "2006-01-02T15:04:05-00:00", 1136214245000000 },
	{ "2026-11-30T15:18:26+05:30", 1796032106000000 },
	{ "2026-11-30t09:48:26z", 1796032106000000 },
	{ "1970-01-01T00:00:00.5Z", 500000 },
	{ "1970-01-01T00:00:00.123456789Z", 123456 },
	{ "1970-01-01T00:00:00.000001Z", 1 },
	{ "1970-01-01T00:00:00.0000009Z", 0 },
	{ "1969-12-31T23:59:59.9999999Z", -1 },
	{ "1970-01-01T01:00:00+01:00", 0 },
	{ "1970-01-01T00:00:00+23:59", -86340000000 },
	{ "2000-02-29T23:59:59Z", 951868799000000 },
	{ "2024-02-29T00:00:00Z", 1709164800000000 },
	{ "0001-01-01T00:00:00+01:00", -62135600400000000 },
};

static const char *const invalid[] = {
	"",
	"2006",
	"2006-01-02",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05Zx",
	"2006-01-02T15:04:05Z ",
	" 2006-01-02T15:04:05Z",
	"2006-01-02 15:04:05Z",
	"2006-01-02X15:04:05Z",
	"2006-1-02T15:04:05Z",
	"06-01-02T15:04:05Z",
	"20060-01-02T15:04:05Z",
	"0000-01-01T00:00:00Z",
	"2006-13-01T00:00:00Z",
	"2006-00-01T00:00:00Z",
	"2006-01-00T00:00:00Z",
	"2006-01-32T00:00:00Z",
	"2006-04-31T00:00:00Z",
	"2006-06-31T00:00:00Z",
	"1900-02-29T00:00:00Z",
	"2023-02-29T00:00:00Z",
	"2100-02-29T00:00:00Z",
	"2024-02-30T00:00:00Z",
	"2006-01-02T24:00:00Z",
	"2006-01-02T23:60:00Z",
	"2006-01-02T23:59:60Z",
	"2006-01-02T15:04:05.Z",
	"2006-01-02T15:04:05.1234567890Z",
	"2006-01-02T15:04:05,5Z",
	"2006-01-02T15:04:05+0200",
	"2006-01-02T15:04:05-0530",
	"2006-01-02T15:04:05+02",
	"2006-01-02T15:04:05+2:00",
	"2006-01-02T15:04:05+24:00",
	"2006-01-02T15:04:05+02:60",
	"2006-01-02T15:04:05UTC",
	"2006-01-02T15:04:05+02:00Z",
	"-006-01-02T15:04:05Z",
	"+2006-01-02T15:04:05Z",
	"2006-01-02T15:04:5Z",
	"2006-01-02T1a:04:05Z",
	"garbage",
};

static void
test_parse_table(void **state)
{
	int64_t us;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		us = 42;
		if (timefmt_parse(valid[i].text, &us) != 0
		        || us != valid[i].us) {
			fail_msg("%s: got %lld want %lld", valid[i].text,
			        (long long)us, (long long)valid[i].us);
		}
	}
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		us = 42;
		if (timefmt_parse(invalid[i], &us) != -1 || us != 42) {
			fail_msg("'%s' should be rejected", invalid[i]);
		}
	}
	assert_int_equal(timefmt_parse(NULL, &us), -1);
}

static void
test_leap_years(void **state)
{
	int64_t a, b;

	(void)state;
	/* 2000 and 2024 are leap years: Feb 29 exists, Mar 1 is 2 days after
	 * Feb 28.  1900 is not. */
	assert_int_equal(timefmt_parse("2000-02-28T00:00:00Z", &a), 0);
	assert_int_equal(timefmt_parse("2000-03-01T00:00:00Z", &b), 0);
	assert_true(b - a == 2 * 86400 * 1000000LL);
	assert_int_equal(timefmt_parse("2024-02-28T00:00:00Z", &a), 0);
	assert_int_equal(timefmt_parse("2024-03-01T00:00:00Z", &b), 0);
	assert_true(b - a == 2 * 86400 * 1000000LL);
	assert_int_equal(timefmt_parse("1900-02-28T00:00:00Z", &a), 0);
	assert_int_equal(timefmt_parse("1900-03-01T00:00:00Z", &b), 0);
	assert_true(b - a == 86400 * 1000000LL);
	/* Whole years: 2000 has 366 days, 1900 has 365. */
	assert_int_equal(timefmt_parse("2000-01-01T00:00:00Z", &a), 0);
	assert_int_equal(timefmt_parse("2001-01-01T00:00:00Z", &b), 0);
	assert_true(b - a == 366 * 86400 * 1000000LL);
	assert_int_equal(timefmt_parse("1900-01-01T00:00:00Z", &a), 0);
	assert_int_equal(timefmt_parse("1901-01-01T00:00:00Z", &b), 0);
	assert_true(b - a == 365 * 86400 * 1000000LL);
}

static void
test_clocks(void **state)
{
	int64_t m1, m2, r;

	(void)state;
	m1 = timefmt_now_ms_mono();
	m2 = timefmt_now_ms_mono();
	assert_true(m2 >= m1);
	r = timefmt_now_us_real();
	/* After 2020-01-01 and before 2200. */
	assert_true(r > 1577836800LL * 1000000);
	assert_true(r < 7258118400LL * 1000000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_known),
		cmocka_unit_test(test_format_range),
		cmocka_unit_test(test_micro),
		cmocka_unit_test(test_round_trip_all_days),
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_leap_years),
		cmocka_unit_test(test_clocks),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
