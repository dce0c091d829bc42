/*
 * fuzz_cron.c: libFuzzer target for the cron parser and the next-fire
 * calculation (workers/cron.c).  The input up to its first NUL or newline
 * is the expression; the byte after it (if any) picks one of a few fixed
 * instants (DST change days, a leap day, the end of a year).
 *
 * A rejected expression must come with a message.  An accepted one is
 * parsed again by a small independent reading of robfig's grammar (the
 * oracle below: bit sets per field, names, steps, the star rule of the
 * day fields), and five successive fires from the instant must be strictly
 * increasing, fall on a whole local minute and match the oracle's sets;
 * when a fire is at most three days away, no earlier minute may match.
 * Near a UTC-offset change (DST) only the ordering is checked: robfig's
 * normalisation through time.Date decides there, not a plain match.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/xmalloc.h"
#include "workers/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STAR   (1ULL << 63)
#define NFIRES 5

static void
check(bool ok)
{
	if (!ok) {
		__builtin_trap();
	}
}

/* ---- the oracle: robfig's getField/getRange, written independently ---- */

struct rfield {
	unsigned min, max;
	const char *const *names;
};

static const char *const months[] = { "jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL };
static const char *const days[]
        = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };
static const struct rfield rfields[5] = { { 0, 59, NULL }, { 0, 23, NULL },
	{ 1, 31, NULL }, { 1, 12, months }, { 0, 6, days } };

/* A non-negative integer (Go Atoi, '+' allowed) or a name; -1 if not. */
static long
rnum(const char *s, size_t n, const struct rfield *f)
{
	long v = 0;
	size_t i = 0;

	for (int k = 0; f != NULL && f->names != NULL && f->names[k]; k++) {
		if (n == 3 && strncasecmp(s, f->names[k], 3) == 0) {
			return ((long)f->min + k);
		}
	}
	if (n > 0 && s[0] == '+') {
		i = 1;
	}
	if (i == n) {
		return (-1);
	}
	for (; i < n; i++) {
		if (!isdigit((unsigned char)s[i]) || v > 100000000) {
			return (-1);
		}
		v = v * 10 + (s[i] - '0');
	}
	return (v);
}

/* One range term s[0..n); 0 and bits added, or -1. */
static int
rrange(const char *s, size_t n, const struct rfield *f, uint64_t *bits)
{
	char t[4100];
	char *slash, *dash;
	long lo, hi, step = 1;
	uint64_t extra = 0;

	if (n == 0 || n >= sizeof(t)) {
		return (n == 0 ? 0 : -1);
	}
	memcpy(t, s, n);
	t[n] = '\0';
	if ((slash = strchr(t, '/')) != NULL) {
		*slash++ = '\0';
		if (strchr(slash, '/') != NULL
		        || (step = rnum(slash, strlen(slash), NULL)) <= 0) {
			return (-1);
		}
	}
	if (strcmp(t, "*") == 0 || strcmp(t, "?") == 0) {
		lo = f->min, hi = f->max, extra = STAR;
	} else if ((dash = strchr(t, '-')) != NULL) {
		*dash++ = '\0';
		lo = rnum(t, strlen(t), f);
		hi = rnum(dash, strlen(dash), f);
		if (lo < 0 || hi < 0 || strchr(dash, '-') != NULL) {
			return (-1);
		}
	} else if ((lo = hi = rnum(t, strlen(t), f)) < 0) {
		return (-1);
	} else if (slash != NULL) {
		hi = f->max;
	}
	if (step > 1) {
		extra = 0;
	}
	if (lo < (long)f->min || hi > (long)f->max || lo > hi) {
		return (-1);
	}
	for (long i = lo; i <= hi; i += step) {
		*bits |= 1ULL << i;
	}
	*bits |= extra;
	return (0);
}

/* The five fields of expr (after any zone prefix) into bits; 0 or -1. */
static int
oracle(const char *expr, uint64_t bits[5])
{
	const char *p = expr;
	int k = 0;

	if (strncmp(p, "TZ=", 3) == 0 || strncmp(p, "CRON_TZ=", 8) == 0) {
		p = strchr(p, ' ');
	}
	for (; p != NULL && k <= 5; k++) {
		while (isspace((unsigned char)*p)) {
			p++;
		}
		if (*p == '\0') {
			break;
		}
		const char *e = p;
		while (*e != '\0' && !isspace((unsigned char)*e)) {
			e++;
		}
		if (k == 5) {
			return (-1);
		}
		bits[k] = 0;
		for (const char *q = p; q < e;) {
			const char *c = memchr(q, ',', (size_t)(e - q));
			size_t n = c != NULL ? (size_t)(c - q)
			                     : (size_t)(e - q);
			if (rrange(q, n, &rfields[k], &bits[k]) != 0) {
				return (-1);
			}
			q += n + 1;
		}
		if ((bits[k] & ~STAR) == 0) {
			return (-1);
		}
		p = e;
	}
	return (k == 5 ? 0 : -1);
}

/* Whether local civil time tm matches the oracle's sets. */
static bool
matches(const uint64_t b[5], const struct tm *tm)
{
	bool dom = (b[2] >> tm->tm_mday & 1) != 0;
	bool dow = (b[4] >> tm->tm_wday & 1) != 0;
	bool day = ((b[2] | b[4]) & STAR) != 0 ? dom && dow : dom || dow;

	return (tm->tm_sec == 0 && (b[0] >> tm->tm_min & 1) != 0
	        && (b[1] >> tm->tm_hour & 1) != 0
	        && (b[3] >> (tm->tm_mon + 1) & 1) != 0 && day);
}

static void
local(const struct cron_zone *z, int64_t t, struct tm *tm)
{
	time_t lt = (time_t)(t + cron_zone_offset(z, t));

	gmtime_r(&lt, tm);
}

/* The zone named by a CRON_TZ=/TZ= prefix (NULL: UTC or no prefix). */
static struct cron_zone *
zone_of(const char *expr)
{
	const char *eq = strchr(expr, '='), *sp = strchr(expr, ' ');
	char name[256], err[256];

	if (eq == NULL || sp == NULL || sp < eq
	        || (strncmp(expr, "TZ=", 3) != 0
	                && strncmp(expr, "CRON_TZ=", 8) != 0)
	        || (size_t)(sp - eq) > sizeof(name)) {
		return (NULL);
	}
	memcpy(name, eq + 1, (size_t)(sp - eq - 1));
	name[sp - eq - 1] = '\0';
	return (cron_zone_load(name, err, sizeof(err)));
}

/* ---- the checks ---- */

/* Fixed instants (unix ms): US and EU DST days, a leap day, new year. */
static const int64_t instants[] = {
	1772953200000, /* 2026-03-08T07:00:00Z, US spring forward */
	1792364400123, /* 2026-10-18T23:00:00.123Z, a week before EU fall */
	1835481599999, /* 2028-02-29T23:59:59.999Z */
	1798761540000, /* 2026-12-31T23:59:00Z */
};

static void
check_fire(const struct cron_zone *z, const uint64_t b[5], int64_t after,
        int64_t fire)
{
	int64_t a = after / 1000 + 1, f = fire / 1000;
	struct tm tm;

	check(fire > after && fire % 1000 == 0);
	if (cron_zone_offset(z, f - 7200) != cron_zone_offset(z, f + 7200)
	        || cron_zone_offset(z, a) != cron_zone_offset(z, f)) {
		return; /* a DST change nearby: robfig's normalisation rules */
	}
	local(z, f, &tm);
	check(matches(b, &tm));
	if (f - a > 3 * 86400) {
		return;
	}
	for (int64_t t = a; t < f; t++) {
		local(z, t, &tm);
		if (tm.tm_sec == 0) {
			check(!matches(b, &tm));
			t += 59;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *cut = memchr(data, '\0', size);
	struct cron_zone *z;
	struct cron *c;
	uint64_t b[5];
	char err[512] = "", *expr;
	int64_t at, next;
	size_t n;

	if (cut == NULL) {
		cut = memchr(data, '\n', size);
	}
	n = cut != NULL ? (size_t)(cut - data) : size;
	if (n > 4096) {
		return (0);
	}
	expr = xstrndup((const char *)data, n);
	at = instants[n + 1 < size ? data[n + 1] % 4 : 0];
	if (cron_parse(expr, &c, err, sizeof(err)) != 0) {
		check(c == NULL && err[0] != '\0');
		free(expr);
		return (0);
	}
	check(oracle(expr, b) == 0);
	z = zone_of(expr);
	for (int i = 0; i < NFIRES; i++) {
		check(cron_next(c, at, &next) == 0);
		check_fire(z, b, at, next);
		at = next;
	}
	cron_zone_free(z);
	cron_free(c);
	free(expr);
	return (0);
}
