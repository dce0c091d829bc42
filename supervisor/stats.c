/*
 * stats.c: the supervisor's figures (stats.h): the tables, the counting
 * hooks and the latency histograms with their percentiles.  The refresh
 * that copies the gauges out of the modules that own them is the
 * supervisor's (ops.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/stats.h"

const double stats_buckets[STATS_NBUCKETS] = { 0.005, 0.01, 0.025, 0.05, 0.1,
	0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
	1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15,
	20, 25, 30, 40, 50, 60 };

struct stats *
stats_new(int64_t now_ms, int64_t now_unix_ms)
{
	struct stats *st = xcalloc(1, sizeof(*st));

	st->start_ms = now_ms;
	st->start_unix_ms = now_unix_ms;
	st->leading_since_ms = now_ms;
	return (st);
}

void
stats_free(struct stats *st)
{
	if (st == NULL) {
		return;
	}
	free(st->workers);
	free(st->ctls);
	free(st->kinds);
	free(st->shadow_w);
	free(st);
}

size_t
stats_add_ctl(struct stats *st, const char *name)
{
	struct stats_ctl *c;

	st->ctls = xreallocarray(st->ctls, st->nctls + 1, sizeof(*st->ctls));
	c = &st->ctls[st->nctls];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->fault_since_ms = -1;
	return (st->nctls++);
}

size_t
stats_add_worker(struct stats *st, const char *controller, int index)
{
	struct stats_worker *w;
	struct stats_ctl *c = stats_ctl(st, controller);

	st->workers = xreallocarray(
	        st->workers, st->nworkers + 1, sizeof(*st->workers));
	w = &st->workers[st->nworkers];
	memset(w, 0, sizeof(*w));
	snprintf(w->controller, sizeof(w->controller), "%s", controller);
	w->index = index;
	w->state = STATS_W_STOPPED;
	w->started_ms = w->key_since_ms = w->hb_age_ms = -1;
	w->last_error_ms = -1;
	if (c != NULL) {
		c->workers++;
	}
	return (st->nworkers++);
}

size_t
stats_add_kind(struct stats *st, const char *name, const char *controller)
{
	struct stats_kind *k;

	st->kinds
	        = xreallocarray(st->kinds, st->nkinds + 1, sizeof(*st->kinds));
	k = &st->kinds[st->nkinds];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	snprintf(k->controller, sizeof(k->controller), "%s", controller);
	return (st->nkinds++);
}

struct stats_ctl *
stats_ctl(struct stats *st, const char *name)
{
	for (size_t i = 0; st != NULL && i < st->nctls; i++) {
		if (strcmp(st->ctls[i].name, name) == 0) {
			return (&st->ctls[i]);
		}
	}
	return (NULL);
}

struct stats_worker *
stats_worker(struct stats *st, const char *controller, int index)
{
	for (size_t i = 0; st != NULL && i < st->nworkers; i++) {
		if (st->workers[i].index == index
		        && strcmp(st->workers[i].controller, controller)
		                == 0) {
			return (&st->workers[i]);
		}
	}
	return (NULL);
}

/* ---- histograms ---- */

void
stats_hist_add(struct stats_hist *h, int64_t ms)
{
	double s = (double)(ms < 0 ? 0 : ms) / 1000.0;
	size_t b = 0;

	while (b < STATS_NBUCKETS && s > stats_buckets[b]) {
		b++;
	}
	h->counts[b]++;
	h->count++;
	h->sum_s += s;
	h->ring_ms[h->ring_pos] = ms < 0 ? 0 : ms;
	h->ring_pos = (h->ring_pos + 1) % STATS_RING;
	if (h->ring_len < STATS_RING) {
		h->ring_len++;
	}
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return ((x > y) - (x < y));
}

int64_t
stats_hist_quantile(const struct stats_hist *h, double q)
{
	int64_t v[STATS_RING];
	size_t i;

	if (h->ring_len == 0) {
		return (-1);
	}
	memcpy(v, h->ring_ms, h->ring_len * sizeof(v[0]));
	qsort(v, h->ring_len, sizeof(v[0]), cmp_i64);
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	/* nearest rank */
	i = (size_t)ceil(q * (double)h->ring_len);
	return (v[i == 0 ? 0 : i - 1]);
}

double
stats_hist_bucket_quantile(const struct stats_hist *h, double q)
{
	double rank, below = 0, lo = 0;

	if (h->count == 0) {
		return (-1);
	}
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	rank = q * (double)h->count;
	for (size_t b = 0; b < STATS_NBUCKETS; b++) {
		double n = (double)h->counts[b];
		if (below + n >= rank && n > 0) {
			return (lo
			        + (stats_buckets[b] - lo) * (rank - below)
			                / n);
		}
		below += n;
		lo = stats_buckets[b];
	}
	/* in +Inf: Prometheus answers the largest finite bound */
	return (stats_buckets[STATS_NBUCKETS - 1]);
}

/* ---- hooks ---- */

void
stats_set_text(char *dst, size_t len, const char *s)
{
	snprintf(dst, len, "%s", s != NULL ? s : "");
}

void
stats_reconcile(struct stats *st, const char *controller, int index,
        enum stats_result result, int64_t latency_ms, const char *message,
        int64_t now_ms)
{
	struct stats_ctl *c = stats_ctl(st, controller);
	struct stats_worker *w = stats_worker(st, controller, index);

	if ((unsigned)result >= STATS_NRESULTS) {
		result = STATS_ERROR;
	}
	if (c != NULL) {
		c->results[result]++;
		stats_hist_add(&c->latency, latency_ms);
	}
	if (w == NULL) {
		return;
	}
	w->results[result]++;
	stats_hist_add(&w->latency, latency_ms);
	if (result == STATS_ERROR) {
		stats_set_text(w->last_error, sizeof(w->last_error),
		        message != NULL ? message : "error");
		w->last_error_ms = now_ms;
	}
}

void
stats_lost(struct stats *st, const char *controller, const char *cause,
        int64_t latency_ms, int64_t now_ms)
{
	struct stats_ctl *c = stats_ctl(st, controller);

	(void)cause;
	(void)now_ms;
	if (c != NULL) {
		c->results[STATS_ERROR]++;
		c->panics++;
		stats_hist_add(&c->latency, latency_ms);
	}
}

void
stats_terminal(struct stats *st, const char *controller)
{
	struct stats_ctl *c = stats_ctl(st, controller);

	if (c != NULL) {
		c->terminal++;
	}
}

void
stats_lease_slowpath(struct stats *st, uint64_t n)
{
	if (st != NULL) {
		st->lease_slowpath = n;
	}
}

void
stats_violation(struct stats *st, const char *controller, const char *rule)
{
	struct stats_ctl *c = stats_ctl(st, controller);

	if (c == NULL) {
		return;
	}
	c->violations++;
	for (size_t i = 0; i < STATS_RULES_MAX; i++) {
		struct stats_rule *r = &c->rules[i];
		if (r->rule[0] == '\0') {
			stats_set_text(r->rule, sizeof(r->rule), rule);
		}
		if (strcmp(r->rule, rule) == 0) {
			r->count++;
			return;
		}
	}
}

void
stats_leadership(
        struct stats *st, bool leading, uint32_t epoch, int64_t now_ms)
{
	if (st == NULL) {
		return;
	}
	st->leading = leading;
	st->epoch = epoch;
	st->leading_since_ms = now_ms;
}

void
stats_api(struct stats *st, enum kapi_verb verb, long code)
{
	size_t i;

	if (st == NULL) {
		return;
	}
	st->api_total++;
	if (code < 200 || code > 299) {
		st->api_errors++;
	}
	for (i = 0; i < st->napi; i++) {
		if (st->api[i].verb == verb && st->api[i].code == code) {
			st->api[i].count++;
			return;
		}
	}
	if (st->napi == STATS_API_SLOTS) {
		st->api_overflow++;
		return;
	}
	st->api[st->napi++] = (struct stats_api) { verb, code, 1 };
}

static bool
shadow_is(const struct stats_shadow *r, const char *controller,
        const char *verb, const char *resource)
{
	return (strcmp(r->controller, controller) == 0
	        && strcmp(r->verb, verb) == 0
	        && strcmp(r->resource, resource) == 0);
}

void
stats_shadow(struct stats *st, const char *controller, const char *verb,
        const char *resource)
{
	struct stats_shadow *r;

	if (st == NULL) {
		return;
	}
	if (st->shadow_w == NULL) {
		st->shadow_w = xcalloc(STATS_SHADOW_SLOTS, sizeof(*r));
	}
	for (size_t i = 0; i < st->nshadow; i++) {
		if (shadow_is(&st->shadow_w[i], controller, verb, resource)) {
			st->shadow_w[i].count++;
			return;
		}
	}
	if (st->nshadow == STATS_SHADOW_SLOTS) {
		st->shadow_overflow++;
		return;
	}
	r = &st->shadow_w[st->nshadow++];
	snprintf(r->controller, sizeof(r->controller), "%s", controller);
	snprintf(r->verb, sizeof(r->verb), "%s", verb);
	snprintf(r->resource, sizeof(r->resource), "%s", resource);
	r->count = 1;
}

/* ---- names ---- */

const char *
stats_result_label(enum stats_result r)
{
	static const char *const n[]
	        = { "success", "error", "requeue", "requeue_after" };

	return ((unsigned)r < STATS_NRESULTS ? n[r] : "unknown");
}

const char *
stats_wstate_name(enum stats_wstate s)
{
	static const char *const n[]
	        = { "starting", "ready", "busy", "restarting", "crash-loop",
		          "standby", "stopping", "stopped", "failed" };

	return ((unsigned)s < STATS_W_NSTATES ? n[s] : "unknown");
}

const char *
stats_verb_name(enum kapi_verb v)
{
	static const char *const n[] = { "GET", "LIST", "POST", "PUT", "PATCH",
		"DELETE", "WATCH", "LOG" };

	return ((unsigned)v <= KAPI_LOG ? n[v] : "UNKNOWN");
}

int64_t
stats_resource_age(const struct stats *st, size_t i)
{
	int64_t age = st->kinds[i].age_ms;

	for (size_t j = 0; j < st->nkinds; j++) {
		if (strcmp(st->kinds[j].resource, st->kinds[i].resource)
		        != 0) {
			continue;
		}
		if (j < i) {
			return (-1);
		}
		age = st->kinds[j].age_ms > age ? st->kinds[j].age_ms : age;
	}
	return (age);
}
