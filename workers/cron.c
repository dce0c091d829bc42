/*
 * cron.c: owns the cron parser (robfig/cron v3 with the fields Minute |
 * Hour | Dom | Month | Dow), the next-fire calculation (SpecSchedule.Next,
 * step for step, with Go's time.Date normalisation in the schedule's zone
 * so DST gaps and overlaps land where upstream lands them), and a TZif
 * reader with the POSIX TZ footer rules Go applies after the last
 * transition.  Pure but for cron_zone_load(), which reads one file, and
 * the process-wide default zone loader (cron_set_zone_loader()).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/civil.h"
#include "common/errmsg.h"
#include "common/xmalloc.h"
#include "workers/cron.h"

#define STAR       (1ULL << 63)
#define ALPHA      INT64_MIN
#define OMEGA      INT64_MAX
#define DAY        86400
#define LOOPS_MAX  1000000 /* a safety net: Next never needs this many */
#define TZIF_MAX   (1 << 20)
#define FOOTER_MAX (INT64_C(1) << 40) /* seconds */

/* ---- zones ---- */

enum rkind { R_JULIAN, R_DOY, R_MWD };

struct prule {
	enum rkind kind;
	int day, week, mon;
	int time; /* seconds after local midnight */
};

struct footer {
	bool valid, dst;
	int std_off, dst_off; /* seconds east of UTC */
	struct prule start, end;
};

struct ztype {
	int32_t off;
	bool isdst;
};

struct cron_zone {
	int64_t *when;
	uint8_t *idx;
	size_t ntx;
	struct ztype *types;
	size_t ntypes;
	struct footer ft;
};

void
cron_zone_free(struct cron_zone *z)
{
	if (z == NULL) {
		return;
	}
	free(z->when);
	free(z->idx);
	free(z->types);
	free(z);
}

static void *
dup_mem(const void *p, size_t n)
{
	void *q = n > 0 ? xmalloc(n) : NULL;

	if (n > 0) {
		memcpy(q, p, n);
	}
	return (q);
}

struct cron_zone *
cron_zone_dup(const struct cron_zone *z)
{
	struct cron_zone *d = xcalloc(1, sizeof(*d));

	*d = *z;
	d->when = dup_mem(z->when, z->ntx * sizeof(*z->when));
	d->idx = dup_mem(z->idx, z->ntx * sizeof(*z->idx));
	d->types = dup_mem(z->types, z->ntypes * sizeof(*z->types));
	return (d);
}

/* Day of the year (0-based) and seconds of rule r in year y, as Go's
 * tzruleTime: UTC seconds after the start of the year. */
static int64_t
rule_time(int64_t y, const struct prule *r, int off)
{
	int64_t s = 0;

	if (r->kind == R_JULIAN) {
		s = (int64_t)(r->day - 1) * DAY;
		if (civil_is_leap(y) && r->day >= 60) {
			s += DAY;
		}
	} else if (r->kind == R_DOY) {
		s = (int64_t)r->day * DAY;
	} else {
		int64_t first = civil_days(y, r->mon, 1);
		int wd = (int)civil_floor_mod(first + 4, 7);
		int d = (r->day - wd + 7) % 7;
		for (int i = 1; i < r->week; i++) {
			if (d + 7 >= civil_days_in_month(y, r->mon)) {
				break;
			}
			d += 7;
		}
		s = (first - civil_days(y, 1, 1) + d) * DAY;
	}
	return (s + r->time - off);
}

/* Go's tzset() for the footer, given the start of the last transition. */
static void
footer_lookup(const struct footer *f, int64_t last, int64_t sec, int *off,
        int64_t *start, int64_t *end)
{
	int64_t y, ysec, abs, ss, es;
	int m, d, so = f->std_off, dso = f->dst_off;

	if (!f->dst) {
		*off = f->std_off;
		*start = last;
		*end = OMEGA;
		return;
	}
	/* Years beyond +-2^40 s (35,000 years) would overflow below: they
	 * answer as the year at the bound. */
	sec = sec > FOOTER_MAX      ? FOOTER_MAX
	        : sec < -FOOTER_MAX ? -FOOTER_MAX
	                            : sec;
	civil_from_days(civil_floor_div(sec, DAY), &y, &m, &d);
	abs = civil_days(y, 1, 1) * DAY;
	ysec = (civil_floor_div(sec, DAY) - abs / DAY) * DAY + sec % DAY;
	ss = rule_time(y, &f->start, f->std_off);
	es = rule_time(y, &f->end, f->dst_off);
	if (es < ss) {
		int64_t t = ss;
		ss = es;
		es = t;
		so = f->dst_off;
		dso = f->std_off;
	}
	if (ysec < ss) {
		*off = so, *start = abs, *end = ss + abs;
	} else if (ysec >= es) {
		*off = so, *start = es + abs, *end = abs + 365 * DAY;
	} else {
		*off = dso, *start = ss + abs, *end = es + abs;
	}
}

/* The zone used before the first transition (Go's lookupFirstZone). */
static size_t
first_zone(const struct cron_zone *z)
{
	bool used = false;

	for (size_t i = 0; i < z->ntx; i++) {
		used = used || z->idx[i] == 0;
	}
	if (!used) {
		return (0);
	}
	if (z->ntx > 0 && z->types[z->idx[0]].isdst) {
		for (size_t zi = z->idx[0]; zi-- > 0;) {
			if (!z->types[zi].isdst) {
				return (zi);
			}
		}
	}
	for (size_t zi = 0; zi < z->ntypes; zi++) {
		if (!z->types[zi].isdst) {
			return (zi);
		}
	}
	return (0);
}

/* Go's Location.lookup: the offset at sec and the period it holds in. */
static void
lookup(const struct cron_zone *z, int64_t sec, int *off, int64_t *start,
        int64_t *end)
{
	size_t lo = 0, hi;

	*off = 0, *start = ALPHA, *end = OMEGA;
	if (z == NULL || z->ntypes == 0) {
		return;
	}
	if (z->ntx == 0 || sec < z->when[0]) {
		*off = z->types[first_zone(z)].off;
		*end = z->ntx > 0 ? z->when[0] : OMEGA;
		return;
	}
	hi = z->ntx;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (sec < z->when[mid]) {
			*end = z->when[mid];
			hi = mid;
		} else {
			lo = mid;
		}
	}
	*off = z->types[z->idx[lo]].off;
	*start = z->when[lo];
	if (lo == z->ntx - 1 && z->ft.valid) {
		footer_lookup(&z->ft, *start, sec, off, start, end);
	}
}

int
cron_zone_offset(const struct cron_zone *z, int64_t t)
{
	int off;
	int64_t s, e;

	lookup(z, t, &off, &s, &e);
	return (off);
}

/* ---- POSIX TZ footer (Go's tzsetName, tzsetOffset, tzsetRule) ---- */

static const char *
tz_num(const char *s, int min, int max, int *out)
{
	int n = 0;

	if (!isdigit((unsigned char)*s)) {
		return (NULL);
	}
	while (isdigit((unsigned char)*s)) {
		n = n * 10 + (*s++ - '0');
		if (n > max) {
			return (NULL);
		}
	}
	*out = n;
	return (n < min ? NULL : s);
}

static const char *
tz_name(const char *s)
{
	const char *p = s;

	if (*s == '<') {
		p = strchr(s, '>');
		return (p != NULL ? p + 1 : NULL);
	}
	while (*p != '\0' && !isdigit((unsigned char)*p)
	        && strchr(",-+", *p) == NULL) {
		p++;
	}
	return (p - s < 3 ? NULL : p);
}

static const char *
tz_offset(const char *s, int *out)
{
	int neg = 0, h, m = 0, sec = 0;

	if (*s == '+' || *s == '-') {
		neg = *s++ == '-';
	}
	if ((s = tz_num(s, 0, 24 * 7, &h)) == NULL) {
		return (NULL);
	}
	if (*s == ':' && (s = tz_num(s + 1, 0, 59, &m)) != NULL && *s == ':') {
		s = tz_num(s + 1, 0, 59, &sec);
	}
	*out = (h * 3600 + m * 60 + sec) * (neg ? -1 : 1);
	return (s);
}

static const char *
tz_rule(const char *s, struct prule *r)
{
	if (*s == 'J') {
		r->kind = R_JULIAN;
		s = tz_num(s + 1, 1, 365, &r->day);
	} else if (*s == 'M') {
		r->kind = R_MWD;
		s = tz_num(s + 1, 1, 12, &r->mon);
		s = s != NULL && *s == '.' ? tz_num(s + 1, 1, 5, &r->week)
		                           : NULL;
		s = s != NULL && *s == '.' ? tz_num(s + 1, 0, 6, &r->day)
		                           : NULL;
	} else {
		r->kind = R_DOY;
		s = tz_num(s, 0, 365, &r->day);
	}
	r->time = 2 * 3600;
	if (s != NULL && *s == '/') {
		s = tz_offset(s + 1, &r->time);
	}
	return (s);
}

/* Parses the footer text s (NUL-terminated); f->valid tells. */
static void
footer_parse(const char *s, struct footer *f)
{
	memset(f, 0, sizeof(*f));
	if ((s = tz_name(s)) == NULL
	        || (s = tz_offset(s, &f->std_off)) == NULL) {
		return;
	}
	f->std_off = -f->std_off;
	if (*s == '\0' || *s == ',') {
		f->valid = true;
		return;
	}
	if ((s = tz_name(s)) == NULL) {
		return;
	}
	if (*s == '\0' || *s == ',') {
		f->dst_off = f->std_off + 3600;
	} else if ((s = tz_offset(s, &f->dst_off)) == NULL) {
		return;
	} else {
		f->dst_off = -f->dst_off;
	}
	if (*s == '\0') {
		s = ",M3.2.0,M11.1.0";
	}
	if ((*s != ',' && *s != ';') || (s = tz_rule(s + 1, &f->start)) == NULL
	        || *s != ',' || (s = tz_rule(s + 1, &f->end)) == NULL
	        || *s != '\0') {
		return;
	}
	f->dst = true;
	f->valid = true;
}

/* ---- TZif ---- */

struct rd {
	const unsigned char *p;
	size_t len, off;
};

static uint32_t
be32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16
	        | (uint32_t)p[2] << 8 | p[3]);
}

static const unsigned char *
take(struct rd *r, size_t n)
{
	const unsigned char *p = r->p + r->off;

	if (n > r->len - r->off) {
		return (NULL);
	}
	r->off += n;
	return (p);
}

/* The six counts of a header: isut, isstd, leap, time, type, char. */
static int
header(struct rd *r, uint32_t cnt[6], int *version)
{
	const unsigned char *h = take(r, 44);

	if (h == NULL || memcmp(h, "TZif", 4) != 0) {
		return (-1);
	}
	*version = h[4] == 0 ? 1 : h[4] - '0';
	for (int i = 0; i < 6; i++) {
		cnt[i] = be32(h + 20 + 4 * i);
		if (cnt[i] > TZIF_MAX) {
			return (-1);
		}
	}
	return (0);
}

static size_t
block_len(const uint32_t c[6], size_t tw)
{
	return (c[3] * (tw + 1) + c[4] * 6 + c[5] + c[2] * (tw + 4) + c[1]
	        + c[0]);
}

/* Reads one data block (times tw bytes wide) into z. */
static int
block(struct rd *r, const uint32_t c[6], size_t tw, struct cron_zone *z)
{
	const unsigned char *t = take(r, c[3] * tw), *ix = take(r, c[3]);
	const unsigned char *ty = take(r, (size_t)c[4] * 6);

	if (t == NULL || ix == NULL || ty == NULL || c[4] == 0
	        || take(r, c[5] + c[2] * (tw + 4) + c[1] + c[0]) == NULL) {
		return (-1);
	}
	z->ntypes = c[4];
	z->types = xcalloc(c[4], sizeof(*z->types));
	for (size_t i = 0; i < c[4]; i++) {
		z->types[i].off = (int32_t)be32(ty + 6 * i);
		z->types[i].isdst = ty[6 * i + 4] != 0;
	}
	z->ntx = c[3] > 0 ? c[3] : 1;
	z->when = xcalloc(z->ntx, sizeof(*z->when));
	z->idx = xcalloc(z->ntx, 1);
	z->when[0] = ALPHA; /* Go's fake transition for fixed zones */
	for (size_t i = 0; i < c[3]; i++) {
		const unsigned char *p = t + tw * i;
		z->when[i] = tw == 8
		        ? (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4))
		        : (int32_t)be32(p);
		z->idx[i] = ix[i];
		if (ix[i] >= c[4]) {
			return (-1);
		}
	}
	return (0);
}

static void
footer(struct rd *r, struct cron_zone *z)
{
	const char *p = (const char *)r->p + r->off;
	size_t n = r->len - r->off;
	const char *nl;
	char buf[128];

	if (n < 2 || p[0] != '\n' || (nl = memchr(p + 1, '\n', n - 1)) == NULL
	        || (size_t)(nl - p - 1) >= sizeof(buf)) {
		return;
	}
	memcpy(buf, p + 1, (size_t)(nl - p - 1));
	buf[nl - p - 1] = '\0';
	footer_parse(buf, &z->ft);
}

struct cron_zone *
cron_zone_parse(const void *data, size_t len, char *err, size_t errlen)
{
	struct rd r = { data, len, 0 };
	struct cron_zone *z = xcalloc(1, sizeof(*z));
	uint32_t c[6];
	int version;

	if (header(&r, c, &version) != 0) {
		goto fail;
	}
	if (version >= 2) {
		size_t skip = block_len(c, 4);
		if (take(&r, skip) == NULL || header(&r, c, &version) != 0
		        || block(&r, c, 8, z) != 0) {
			goto fail;
		}
		footer(&r, z);
	} else if (block(&r, c, 4, z) != 0) {
		goto fail;
	}
	return (z);
fail:
	cron_zone_free(z);
	errmsg(err, errlen, "malformed time zone data");
	return (NULL);
}

struct cron_zone *
cron_zone_load(const char *name, char *err, size_t errlen)
{
	const char *dir = getenv("TZDIR");
	struct cron_zone *z = NULL;
	unsigned char *data = xmalloc(TZIF_MAX);
	char path[4096];
	size_t n = 0;
	FILE *f;

	if (name[0] == '\0' || strcmp(name, "UTC") == 0
	        || strcmp(name, "Local") == 0) {
		z = xcalloc(1, sizeof(*z));
	} else if (name[0] == '/' || name[0] == '\\'
	        || strstr(name, "..") != NULL) {
		errmsg(err, errlen, "invalid location name \"%s\"", name);
	} else if (snprintf(path, sizeof(path), "%s/%s",
	                   dir != NULL && dir[0] ? dir : "/usr/share/zoneinfo",
	                   name)
	                >= (int)sizeof(path)
	        || (f = fopen(path, "rb")) == NULL) {
		errmsg(err, errlen, "unknown time zone \"%s\"", name);
	} else {
		n = fread(data, 1, TZIF_MAX, f);
		fclose(f);
		z = cron_zone_parse(data, n, err, errlen);
		if (z == NULL) {
			errmsg(err, errlen, "unknown time zone \"%s\"", name);
		}
	}
	free(data);
	return (z);
}

/* ---- Go's time operations in one zone ---- */

struct civ {
	int64_t y;
	int mon, d, h, mi, s, wday;
};

/* t.In(z): the fields of unix second t in zone z. */
static void
civ(const struct cron_zone *z, int64_t t, struct civ *v)
{
	int64_t local = t + cron_zone_offset(z, t);
	int64_t days = civil_floor_div(local, DAY), rem = local - days * DAY;

	civil_from_days(days, &v->y, &v->mon, &v->d);
	v->h = (int)(rem / 3600);
	v->mi = (int)(rem / 60 % 60);
	v->s = (int)(rem % 60);
	v->wday = (int)civil_floor_mod(days + 4, 7);
}

/* time.Date(y, mon, d, h, mi, s, 0, z): mon and d may overflow. */
static int64_t
mkdate(const struct cron_zone *z, int64_t y, int mon, int d, int h, int mi,
        int s)
{
	int64_t m0 = mon - 1, unix, start, end, utc;
	int off;

	y += civil_floor_div(m0, 12);
	m0 = civil_floor_mod(m0, 12);
	unix = (civil_days(y, (int)m0 + 1, 1) + d - 1) * DAY + h * 3600
	        + mi * 60 + s;
	lookup(z, unix, &off, &start, &end);
	if (off != 0) {
		utc = unix - off;
		if (utc < start || utc >= end) {
			lookup(z, utc, &off, &start, &end);
		}
		unix -= off;
	}
	return (unix);
}

/* ---- parser ---- */

struct cron {
	uint64_t minute, hour, dom, month, dow;
	struct cron_zone *zone; /* NULL: UTC */
};

struct bounds {
	const char *what;
	unsigned min, max;
	const char *const *names; /* indexed from min */
};

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may",
	"jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL };
static const char *const dow_names[]
        = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct bounds fields[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day-of-month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day-of-week", 0, 6, dow_names },
};

void
cron_free(struct cron *c)
{
	if (c != NULL) {
		cron_zone_free(c->zone);
		free(c);
	}
}

static const struct bounds plain = { "step", 0, 0, NULL };

/* strconv.Atoi of s[0..n) (non-negative), or a name of b. */
static int
number(const char *s, size_t n, const struct bounds *b, unsigned *out,
        char *err, size_t errlen)
{
	size_t i = 0;
	unsigned long long v = 0;

	for (size_t k = 0; b->names != NULL && n == 3 && b->names[k]; k++) {
		if (strncasecmp(s, b->names[k], 3) == 0) {
			*out = b->min + (unsigned)k;
			return (0);
		}
	}
	if (n > 0 && s[0] == '+') {
		i++;
	}
	if (i == n) {
		errmsg(err, errlen, "failed to parse int from \"%.*s\"",
		        (int)n, s);
		return (-1);
	}
	for (; i < n; i++) {
		if (!isdigit((unsigned char)s[i])) {
			errmsg(err, errlen,
			        "failed to parse int from \"%.*s\"", (int)n,
			        s);
			return (-1);
		}
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > 1000000) {
			errmsg(err, errlen, "value out of range: %.*s", (int)n,
			        s);
			return (-1);
		}
	}
	*out = (unsigned)v;
	return (0);
}

/* The bits of one range expression e[0..n) (robfig's getRange). */
static int
range(const char *e, size_t n, const struct bounds *b, uint64_t *bits,
        char *err, size_t errlen)
{
	const char *slash = memchr(e, '/', n);
	size_t rn = slash != NULL ? (size_t)(slash - e) : n;
	const char *dash = memchr(e, '-', rn);
	unsigned start, end, step = 1;
	uint64_t extra = 0;

	if (slash != NULL && memchr(slash + 1, '/', n - rn - 1) != NULL) {
		errmsg(err, errlen, "too many slashes: %.*s", (int)n, e);
		return (-1);
	}
	if (dash != NULL
	        && memchr(dash + 1, '-', rn - (size_t)(dash - e) - 1)
	                != NULL) {
		errmsg(err, errlen, "too many hyphens: %.*s", (int)n, e);
		return (-1);
	}
	if ((rn == 1 || dash == e + 1) && (e[0] == '*' || e[0] == '?')) {
		if (dash != NULL) {
			errmsg(err, errlen,
			        "a range cannot start with %c: %.*s", e[0],
			        (int)n, e);
			return (-1);
		}
		start = b->min, end = b->max, extra = STAR;
	} else if (number(e, dash != NULL ? (size_t)(dash - e) : rn, b, &start,
	                   err, errlen)
	                != 0
	        || (dash != NULL
	                && number(dash + 1, rn - (size_t)(dash - e) - 1, b,
	                           &end, err, errlen)
	                        != 0)) {
		return (-1);
	} else if (dash == NULL) {
		end = start;
	}
	if (slash != NULL) {
		if (number(slash + 1, n - rn - 1, &plain, &step, err, errlen)
		        != 0) {
			return (-1);
		}
		if (dash == NULL) {
			end = b->max; /* "N/step" means "N-max/step" */
		}
		if (step > 1) {
			extra = 0;
		}
	}
	if (start < b->min) {
		errmsg(err, errlen,
		        "beginning of range (%u) below minimum (%u): "
		        "%.*s",
		        start, b->min, (int)n, e);
		return (-1);
	}
	if (end > b->max) {
		errmsg(err, errlen,
		        "end of range (%u) above maximum (%u): %.*s", end,
		        b->max, (int)n, e);
		return (-1);
	}
	if (start > end) {
		errmsg(err, errlen,
		        "beginning of range (%u) beyond end of range "
		        "(%u): %.*s",
		        start, end, (int)n, e);
		return (-1);
	}
	if (step == 0) {
		errmsg(err, errlen,
		        "step of range should be a positive number: "
		        "%.*s",
		        (int)n, e);
		return (-1);
	}
	for (unsigned i = start; i <= end; i += step) {
		*bits |= 1ULL << i;
	}
	*bits |= extra;
	return (0);
}

/* The bits of field f (text s[0..n)), a comma list of ranges. */
static int
field(const char *s, size_t n, const struct bounds *b, uint64_t *bits,
        char *err, size_t errlen)
{
	char sub[256];
	size_t i = 0;

	*bits = 0;
	while (i < n) {
		const char *c = memchr(s + i, ',', n - i);
		size_t len = c != NULL ? (size_t)(c - s) - i : n - i;
		if (len > 0
		        && range(s + i, len, b, bits, sub, sizeof(sub)) != 0) {
			errmsg(err, errlen, "%s field \"%.*s\": %s", b->what,
			        (int)n, s, sub);
			return (-1);
		}
		i += len + 1;
	}
	if ((*bits & ~STAR) == 0) {
		errmsg(err, errlen, "%s field \"%.*s\" is empty", b->what,
		        (int)n, s);
		return (-1);
	}
	return (0);
}

/* Whether some date can match at all (a leap year counts). */
static bool
feasible(const struct cron *c)
{
	if ((c->dom & STAR) != 0 || (c->dow & STAR) == 0) {
		return (true); /* the weekday field decides: any month has all
		                */
	}
	for (int m = 1; m <= 12; m++) {
		for (int d = 1; d <= civil_days_in_month(2000, m); d++) {
			if ((c->month >> m & 1) != 0
			        && (c->dom >> d & 1) != 0) {
				return (true);
			}
		}
	}
	return (false);
}

/* Splits s on white space into at most 6 fields. */
static int
split(const char *s, const char *f[6], size_t n[6])
{
	int k = 0;

	for (;;) {
		while (isspace((unsigned char)*s)) {
			s++;
		}
		if (*s == '\0') {
			return (k);
		}
		const char *b = s;
		while (*s != '\0' && !isspace((unsigned char)*s)) {
			s++;
		}
		if (k < 6) {
			f[k] = b;
			n[k] = (size_t)(s - b);
		}
		k++;
	}
}

static struct cron_zone *
file_loader(const char *name, void *arg, char *err, size_t errlen)
{
	(void)arg;
	return (cron_zone_load(name, err, errlen));
}

static cron_zone_loader_fn zone_loader = file_loader;
static void *zone_loader_arg;

void
cron_set_zone_loader(cron_zone_loader_fn fn, void *arg)
{
	zone_loader = fn != NULL ? fn : file_loader;
	zone_loader_arg = fn != NULL ? arg : NULL;
}

/* Strips a CRON_TZ= / TZ= prefix into c->zone (with loader fn); returns
 * the rest. */
static const char *
zone_prefix(const char *expr, cron_zone_loader_fn fn, void *arg,
        struct cron *c, char *err, size_t errlen)
{
	const char *sp, *eq = strchr(expr, '=');
	char name[256], sub[256];

	if (strncmp(expr, "TZ=", 3) != 0
	        && strncmp(expr, "CRON_TZ=", 8) != 0) {
		return (expr);
	}
	if ((sp = strchr(expr, ' ')) == NULL) {
		errmsg(err, errlen, "no fields after the time zone in \"%s\"",
		        expr);
		return (NULL);
	}
	if ((size_t)(sp - eq - 1) >= sizeof(name)) {
		errmsg(err, errlen, "time zone name too long in \"%s\"", expr);
		return (NULL);
	}
	memcpy(name, eq + 1, (size_t)(sp - eq - 1));
	name[sp - eq - 1] = '\0';
	if (name[0] == '\0' || strcmp(name, "UTC") == 0
	        || strcmp(name, "Local") == 0) {
		return (sp); /* UTC: no loader asked */
	}
	if ((c->zone = fn(name, arg, sub, sizeof(sub))) == NULL) {
		errmsg(err, errlen, "provided bad location %s: %s", name, sub);
		return (NULL);
	}
	if (c->zone->ntypes == 0) { /* UTC */
		cron_zone_free(c->zone);
		c->zone = NULL;
	}
	return (sp);
}

int
cron_parse(const char *expr, struct cron **out, char *err, size_t errlen)
{
	return (cron_parse_with(expr, NULL, NULL, out, err, errlen));
}

int
cron_parse_with(const char *expr, cron_zone_loader_fn fn, void *arg,
        struct cron **out, char *err, size_t errlen)
{
	struct cron *c = xcalloc(1, sizeof(*c));
	uint64_t *bits[5]
	        = { &c->minute, &c->hour, &c->dom, &c->month, &c->dow };
	const char *f[6], *s;
	size_t n[6];
	int k;

	*out = NULL;
	if (expr == NULL || expr[0] == '\0') {
		errmsg(err, errlen, "empty spec string");
		goto fail;
	}
	if (fn == NULL) {
		fn = zone_loader;
		arg = zone_loader_arg;
	}
	if ((s = zone_prefix(expr, fn, arg, c, err, errlen)) == NULL) {
		goto fail;
	}
	while (isspace((unsigned char)*s)) {
		s++;
	}
	if (s[0] == '@') {
		errmsg(err, errlen, "parser does not accept descriptors: %s",
		        s);
		goto fail;
	}
	if ((k = split(s, f, n)) != 5) {
		errmsg(err, errlen,
		        "expected exactly 5 fields, found %d: \"%s\"", k, s);
		goto fail;
	}
	for (int i = 0; i < 5; i++) {
		if (field(f[i], n[i], &fields[i], bits[i], err, errlen) != 0) {
			goto fail;
		}
	}
	if (!feasible(c)) {
		errmsg(err, errlen,
		        "\"%s\" never fires: no month has those "
		        "days",
		        s);
		cron_free(c);
		return (CRON_NEVER);
	}
	*out = c;
	return (0);
fail:
	cron_free(c);
	return (-1);
}

/* ---- next ---- */

static bool
day_matches(const struct cron *c, const struct civ *v)
{
	bool dom = (c->dom >> v->d & 1) != 0,
	     dow = (c->dow >> v->wday & 1) != 0;

	if ((c->dom & STAR) != 0 || (c->dow & STAR) != 0) {
		return (dom && dow);
	}
	return (dom || dow);
}

/* Sets t and refreshes v. */
#define SET(expr)                                                             \
	do {                                                                  \
		t = (expr);                                                   \
		civ(z, t, &v);                                                \
		if (++loops > LOOPS_MAX) {                                    \
			return (-1);                                          \
		}                                                             \
	} while (0)

int
cron_next(const struct cron *c, int64_t after_ms, int64_t *next_ms)
{
	const struct cron_zone *z = c->zone;
	int64_t t = civil_floor_div(after_ms, 1000) + 1, ylimit;
	bool added = false;
	long loops = 0;
	struct civ v;

	civ(z, t, &v);
	ylimit = v.y + 5;
wrap:
	if (v.y > ylimit) {
		return (-1);
	}
	while ((c->month >> v.mon & 1) == 0) {
		if (!added) {
			added = true;
			SET(mkdate(z, v.y, v.mon, 1, 0, 0, 0));
		}
		SET(mkdate(z, v.y, v.mon + 1, v.d, v.h, v.mi, v.s));
		if (v.mon == 1) {
			goto wrap;
		}
	}
	while (!day_matches(c, &v)) {
		if (!added) {
			added = true;
			SET(mkdate(z, v.y, v.mon, v.d, 0, 0, 0));
		}
		SET(mkdate(z, v.y, v.mon, v.d + 1, v.h, v.mi, v.s));
		if (v.h != 0) { /* midnight moved by DST */
			SET(t + (v.h > 12 ? 24 - v.h : -v.h) * 3600);
		}
		if (v.d == 1) {
			goto wrap;
		}
	}
	while ((c->hour >> v.h & 1) == 0) {
		if (!added) {
			added = true;
			SET(mkdate(z, v.y, v.mon, v.d, v.h, 0, 0));
		}
		SET(t + 3600);
		if (v.h == 0) {
			goto wrap;
		}
	}
	while ((c->minute >> v.mi & 1) == 0) {
		if (!added) {
			added = true;
			SET(t - civil_floor_mod(t, 60));
		}
		SET(t + 60);
		if (v.mi == 0) {
			goto wrap;
		}
	}
	while (v.s != 0) { /* the seconds field is "0" */
		added = true;
		SET(t + 1);
		if (v.s == 0) {
			goto wrap;
		}
	}
	*next_ms = t * 1000;
	return (0);
}
