/*
 * duration.c: Go-compatible duration parsing and formatting (duration.h).
 * Pure logic.  Parsing accumulates the magnitude in a uint64_t so that
 * -9223372036854775808ns (2^63) is representable before the sign is
 * applied, exactly as Go does; every step checks for overflow first.
 */
#include "common/duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define TWO63 ((uint64_t)1 << 63)

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "\xc2\xb5s", 1000 }, /* U+00B5 MICRO SIGN */
	{ "\xce\xbcs", 1000 }, /* U+03BC GREEK SMALL LETTER MU */
	{ "ms", 1000000 },
	{ "s", 1000000000 },
	{ "m", 60ULL * 1000000000 },
	{ "h", 3600ULL * 1000000000 },
};

static bool
is_digit(char c)
{
	return (c >= '0' && c <= '9');
}

/* Digits before the point; -1 when the value exceeds 2^63. */
static int
leading_int(const char **sp, uint64_t *out)
{
	uint64_t x = 0;

	for (; is_digit(**sp); (*sp)++) {
		if (x > TWO63 / 10) {
			return (-1);
		}
		x = x * 10 + (uint64_t)(**sp - '0');
		if (x > TWO63) {
			return (-1);
		}
	}
	*out = x;
	return (0);
}

/* Digits after the point as x / scale; digits that would overflow are
 * consumed but ignored (they are below nanosecond precision anyway). */
static void
leading_fraction(const char **sp, uint64_t *x, double *scale)
{
	bool overflow = false;
	uint64_t y;

	*x = 0;
	*scale = 1;
	for (; is_digit(**sp); (*sp)++) {
		if (overflow) {
			continue;
		}
		if (*x > (TWO63 - 1) / 10) {
			overflow = true;
			continue;
		}
		y = *x * 10 + (uint64_t)(**sp - '0');
		if (y > TWO63) {
			overflow = true;
			continue;
		}
		*x = y;
		*scale *= 10;
	}
}

/* The unit spelled s[0..len), or 0 when unknown. */
static uint64_t
unit_ns(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strlen(units[i].name) == len
		        && memcmp(units[i].name, s, len) == 0) {
			return (units[i].ns);
		}
	}
	return (0);
}

/* One "<number>[.<fraction>]<unit>" component, in nanoseconds. */
static int
component(const char **sp, uint64_t *out)
{
	const char *start = *sp, *u;
	uint64_t v, f = 0, unit;
	double scale = 1;
	bool pre, post = false;

	if (!is_digit(**sp) && **sp != '.') {
		return (-1);
	}
	if (leading_int(sp, &v) < 0) {
		return (-1);
	}
	pre = *sp != start;
	if (**sp == '.') {
		u = ++(*sp);
		leading_fraction(sp, &f, &scale);
		post = *sp != u;
	}
	if (!pre && !post) {
		return (-1); /* no digits: ".s" */
	}
	for (u = *sp; **sp != '\0' && **sp != '.' && !is_digit(**sp); (*sp)++)
		;
	unit = unit_ns(u, (size_t)(*sp - u));
	if (unit == 0 || v > TWO63 / unit) {
		return (-1);
	}
	v *= unit;
	if (f > 0) {
		/* Go computes this in float64; so do we, for equal results. */
		v += (uint64_t)((double)f * ((double)unit / scale));
		if (v > TWO63) {
			return (-1);
		}
	}
	*out = v;
	return (0);
}

int
duration_parse(const char *s, int64_t *out_ns)
{
	uint64_t d = 0, v;
	bool neg = false;

	if (s == NULL) {
		return (-1);
	}
	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (strcmp(s, "0") == 0) {
		*out_ns = 0;
		return (0);
	}
	if (*s == '\0') {
		return (-1);
	}
	while (*s != '\0') {
		if (component(&s, &v) < 0) {
			return (-1);
		}
		d += v; /* both <= 2^63: no wrap */
		if (d > TWO63) {
			return (-1);
		}
	}
	if (!neg && d > TWO63 - 1) {
		return (-1);
	}
	if (neg) {
		*out_ns = d == TWO63 ? INT64_MIN : -(int64_t)d;
	} else {
		*out_ns = (int64_t)d;
	}
	return (0);
}

/* Appends ".ddd" for frac / 10^prec without trailing zeros; nothing when
 * frac is 0.  Returns the number of bytes written. */
static int
put_frac(char *p, uint64_t frac, int prec)
{
	char digits[16];
	int n;

	if (frac == 0) {
		return (0);
	}
	snprintf(digits, sizeof(digits), "%0*llu", prec,
	        (unsigned long long)frac);
	for (n = prec; digits[n - 1] == '0'; n--)
		;
	digits[n] = '\0';
	return (sprintf(p, ".%s", digits));
}

/* Below one second: "999ns", "1.5µs", "250ms". */
static void
format_small(char *p, uint64_t u)
{
	unsigned long long whole;
	const char *unit;
	int prec;

	if (u < 1000) {
		sprintf(p, "%lluns", (unsigned long long)u);
		return;
	}
	if (u < 1000000) {
		prec = 3;
		unit = "\xc2\xb5s";
	} else {
		prec = 6;
		unit = "ms";
	}
	whole = u / (prec == 3 ? 1000 : 1000000);
	p += sprintf(p, "%llu", whole);
	p += put_frac(p, u % (prec == 3 ? 1000 : 1000000), prec);
	strcpy(p, unit);
}

char *
duration_format(int64_t ns, char out[DURATION_STR_LEN])
{
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	unsigned long long secs, mins;
	char *p = out;

	if (ns < 0) {
		*p++ = '-';
	}
	if (u == 0) {
		strcpy(out, "0s");
	} else if (u < 1000000000) {
		format_small(p, u);
	} else {
		secs = u / 1000000000;
		mins = secs / 60;
		if (mins >= 60) {
			p += sprintf(p, "%lluh%llum", mins / 60, mins % 60);
		} else if (mins > 0) {
			p += sprintf(p, "%llum", mins);
		}
		p += sprintf(p, "%llu", secs % 60);
		p += put_frac(p, u % 1000000000, 9);
		strcpy(p, "s");
	}
	return (out);
}
