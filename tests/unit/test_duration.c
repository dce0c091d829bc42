/* test_duration.c: Go time.ParseDuration / Duration.String compatibility.
 * The tables follow the behaviour of Go's time package (its own tests and
 * documentation). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/duration.h"

#define NS  1LL
#define US  (1000 * NS)
#define MS  (1000 * US)
#define SEC (1000 * MS)
#define MIN (60 * SEC)
#define HR  (60 * MIN)

static const struct {
	const char *text;
	int64_t ns;
} parse_ok[] = {
	{ "0", 0 },
	{ "-0", 0 },
	{ "+0", 0 },
	{ "0s", 0 },
	{ "5s", 5 * SEC },
	{ "30s", 30 * SEC },
	{ "1478s", 1478 * SEC },
	{ "-5s", -5 * SEC },
	{ "+5s", 5 * SEC },
	{ "-0s", 0 },
	{ "5.0s", 5 * SEC },
	{ "5.6s", 5 * SEC + 600 * MS },
	{ "5.s", 5 * SEC },
	{ ".5s", 500 * MS },
	{ "1.0s", 1 * SEC },
	{ "1.00s", 1 * SEC },
	{ "1.004s", 1 * SEC + 4 * MS },
	{ "1.0040s", 1 * SEC + 4 * MS },
	{ "100.00100s", 100 * SEC + 1 * MS },
	{ "10ns", 10 * NS },
	{ "11us", 11 * US },
	{ "12\xc2\xb5s", 12 * US },
	{ "12\xce\xbcs", 12 * US },
	{ "13ms", 13 * MS },
	{ "14s", 14 * SEC },
	{ "15m", 15 * MIN },
	{ "16h", 16 * HR },
	{ "3h30m", 3 * HR + 30 * MIN },
	{ "1h30m", 90 * MIN },
	{ "1.5h", 90 * MIN },
	{ "250ms", 250 * MS },
	{ "-1m", -1 * MIN },
	{ "10.5s4m", 4 * MIN + 10 * SEC + 500 * MS },
	{ "-2m3.4s", -(2 * MIN + 3 * SEC + 400 * MS) },
	{ "1h2m3s4ms5us6ns",
	        1 * HR + 2 * MIN + 3 * SEC + 4 * MS + 5 * US + 6 },
	{ "39h9m14.425s", 39 * HR + 9 * MIN + 14 * SEC + 425 * MS },
	{ "52763797000ns", 52763797000 },
	{ "0.3333333333333333333h", 20 * MIN },
	{ "9007199254740993ns", (1LL << 53) + 1 },
	{ "9223372036854775807ns", INT64_MAX },
	{ "9223372036854775.807us", INT64_MAX },
	{ "9223372036s854ms775us807ns", INT64_MAX },
	{ "-9223372036854775808ns", INT64_MIN },
	{ "-9223372036854775.808us", INT64_MIN },
	{ "-9223372036s854ms775us808ns", INT64_MIN },
	{ "2562047h47m16.854775807s", INT64_MAX },
	{ "-2562047h47m16.854775808s", INT64_MIN },
	{ "0.100000000000000000000h", 6 * MIN },
	{ "0.830103483285477580700h", 49 * MIN + 48 * SEC + 372539827 },
	{ "1h15m30.918273645s", HR + 15 * MIN + 30 * SEC + 918273645 },
	{ "0.000000001s", 1 },
	{ "0.0000000009s", 0 },
};

static const char *const parse_bad[] = {
	"",
	"3",
	"1",
	"-",
	"+",
	"s",
	"h",
	".",
	"-.",
	".s",
	"+.s",
	"1d",
	"1x",
	"1h 30m",
	" 1h",
	"1h ",
	"1.5.5s",
	"--1s",
	"-+1s",
	"1s-1s",
	"\x85\x85",
	"\xff\xff",
	"hello \xff\xff world",
	"1\xc2s",
	"9223372036854775808ns",
	"9223372036854775.808us",
	"9223372036854ms775us808ns",
	"9223372036s854ms775us808ns",
	"-9223372036854775809ns",
	"2562048h",
	"2562047h48m",
	"3000000h",
	"99999999999999999999ns",
	"1H",
	"1MS",
	"0x",
	"00",
};

static void
test_parse_table(void **state)
{
	int64_t ns;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(parse_ok) / sizeof(parse_ok[0]); i++) {
		ns = 42;
		if (duration_parse(parse_ok[i].text, &ns) != 0
		        || ns != parse_ok[i].ns) {
			fail_msg("%s: got %lld want %lld", parse_ok[i].text,
			        (long long)ns, (long long)parse_ok[i].ns);
		}
	}
	for (i = 0; i < sizeof(parse_bad) / sizeof(parse_bad[0]); i++) {
		ns = 42;
		if (duration_parse(parse_bad[i], &ns) != -1 || ns != 42) {
			fail_msg("'%s' should be rejected", parse_bad[i]);
		}
	}
	assert_int_equal(duration_parse(NULL, &ns), -1);
}

static const struct {
	int64_t ns;
	const char *text;
} format_tab[] = {
	{ 0, "0s" },
	{ 1, "1ns" },
	{ 999, "999ns" },
	{ 1000, "1\xc2\xb5s" },
	{ 1100, "1.1\xc2\xb5s" },
	{ 1001, "1.001\xc2\xb5s" },
	{ 2200 * US, "2.2ms" },
	{ MS, "1ms" },
	{ 250 * MS, "250ms" },
	{ 999999999, "999.999999ms" },
	{ SEC, "1s" },
	{ 1500 * MS, "1.5s" },
	{ 3300 * MS, "3.3s" },
	{ SEC + 1, "1.000000001s" },
	{ 90 * SEC, "1m30s" },
	{ 4 * MIN + 5 * SEC, "4m5s" },
	{ 4 * MIN + 5001 * MS, "4m5.001s" },
	{ 5 * HR + 6 * MIN + 7001 * MS, "5h6m7.001s" },
	{ 8 * MIN + 1, "8m0.000000001s" },
	{ MIN, "1m0s" },
	{ HR, "1h0m0s" },
	{ 90 * MIN, "1h30m0s" },
	{ 100 * HR, "100h0m0s" },
	{ -MIN, "-1m0s" },
	{ -1, "-1ns" },
	{ -1500 * US, "-1.5ms" },
	{ -US, "-1\xc2\xb5s" },
	{ INT64_MAX, "2562047h47m16.854775807s" },
	{ INT64_MIN, "-2562047h47m16.854775808s" },
};

static void
test_format_table(void **state)
{
	char out[DURATION_STR_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(format_tab) / sizeof(format_tab[0]); i++) {
		memset(out, 'x', sizeof(out));
		assert_ptr_equal(duration_format(format_tab[i].ns, out), out);
		assert_string_equal(out, format_tab[i].text);
	}
}

/* format then parse gives the value back, across magnitudes and signs. */
static void
test_round_trip(void **state)
{
	char out[DURATION_STR_LEN];
	int64_t v, got;
	int i, sign;

	(void)state;
	for (sign = -1; sign <= 1; sign += 2) {
		v = 1;
		for (i = 0; i < 63; i++) {
			int64_t x = sign * (v + i * 7);

			duration_format(x, out);
			assert_int_equal(duration_parse(out, &got), 0);
			assert_true(got == x);
			v = v > INT64_MAX / 2 ? INT64_MAX - 1000 : v * 2;
		}
	}
	duration_format(INT64_MIN, out);
	assert_int_equal(duration_parse(out, &got), 0);
	assert_true(got == INT64_MIN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_format_table),
		cmocka_unit_test(test_round_trip),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
