/*
 * restart.c: the worker restart policy and the poison-key quarantine
 * (restart.h).  The supervisor's worker table keeps one struct restart per
 * process slot and one struct quarantine per controller, and feeds them
 * exits, readiness and per-key deaths from its loop; both only compute.
 *
 * Intensity keeps the times of the last intensity+1 exits in a ring: when
 * the ring is full and its oldest entry is within period_ms of now, more
 * than `intensity` exits happened in the period.  Quarantine records live
 * in a small array: only keys that killed a worker have one, so a linear
 * search is cheaper than any index.
 */
#include "supervisor/restart.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/xmalloc.h"

struct restart {
	struct restart_config cfg;
	enum restart_state state;
	bool crashloop;
	int consecutive;  /* exits since the last reset */
	int64_t *exits;   /* ring of the last intensity+1 exit times */
	size_t exits_cap; /* intensity + 1 */
	size_t exits_len;
	size_t exits_head; /* oldest entry */
	uint64_t total;
	int64_t last_exit_ms;
	int64_t ready_ms; /* -1: not ready */
	char *cause;
};

void
restart_config_default(struct restart_config *c)
{
	c->initial_ms = RESTART_DEFAULT_INITIAL_MS;
	c->max_ms = RESTART_DEFAULT_MAX_MS;
	c->intensity = RESTART_DEFAULT_INTENSITY;
	c->period_ms = RESTART_DEFAULT_PERIOD_MS;
	c->stable_ms = RESTART_DEFAULT_STABLE_MS;
}

struct restart *
restart_new(const struct restart_config *c)
{
	struct restart *r = xcalloc(1, sizeof(*r));

	if (c != NULL) {
		r->cfg = *c;
	} else {
		restart_config_default(&r->cfg);
	}
	if (r->cfg.initial_ms < 1) {
		r->cfg.initial_ms = 1;
	}
	if (r->cfg.max_ms < r->cfg.initial_ms) {
		r->cfg.max_ms = r->cfg.initial_ms;
	}
	if (r->cfg.intensity < 0) {
		r->cfg.intensity = 0;
	}
	if (r->cfg.intensity > 10000) {
		r->cfg.intensity = 10000; /* bounds the ring */
	}
	r->exits_cap = (size_t)r->cfg.intensity + 1;
	r->exits = xcalloc(r->exits_cap, sizeof(*r->exits));
	r->state = RESTART_RUNNING;
	r->last_exit_ms = -1;
	r->ready_ms = -1;
	r->cause = xstrdup("");
	return (r);
}

void
restart_free(struct restart *r)
{
	if (r == NULL) {
		return;
	}
	free(r->exits);
	free(r->cause);
	free(r);
}

/* A worker ready for stable_ms resets the backoff, CrashLoop and the
 * intensity count. */
static void
check_stable(struct restart *r, int64_t now_ms)
{
	if (r->ready_ms < 0 || r->cfg.stable_ms <= 0
	        || now_ms - r->ready_ms < r->cfg.stable_ms) {
		return;
	}
	r->consecutive = 0;
	r->crashloop = false;
	r->exits_len = 0;
	r->exits_head = 0;
	if (r->state == RESTART_CRASHLOOP) {
		r->state = RESTART_RUNNING;
	}
}

/* Records an exit; true when more than `intensity` fell in the period. */
static bool
record_exit(struct restart *r, int64_t now_ms)
{
	size_t tail;

	if (r->exits_len == r->exits_cap) {
		r->exits_head = (r->exits_head + 1) % r->exits_cap;
		r->exits_len--;
	}
	tail = (r->exits_head + r->exits_len) % r->exits_cap;
	r->exits[tail] = now_ms;
	r->exits_len++;
	return (r->cfg.period_ms > 0 && r->exits_len == r->exits_cap
	        && now_ms - r->exits[r->exits_head] <= r->cfg.period_ms);
}

int64_t
restart_on_exit(struct restart *r, int64_t now_ms, const char *cause,
        enum restart_state *state)
{
	int64_t delay = 0;

	check_stable(r, now_ms);
	r->ready_ms = -1;
	r->last_exit_ms = now_ms;
	r->total++;
	free(r->cause);
	r->cause = xstrdup(cause != NULL ? cause : "");
	if (r->consecutive > 0) {
		delay = backoff_exp(
		        r->cfg.initial_ms, r->cfg.max_ms, r->consecutive - 1);
	}
	if (r->consecutive < INT_MAX) {
		r->consecutive++;
	}
	if (record_exit(r, now_ms)) {
		r->crashloop = true;
	}
	if (r->crashloop) {
		delay = r->cfg.max_ms;
		r->state = RESTART_CRASHLOOP;
	} else {
		r->state = delay > 0 ? RESTART_BACKOFF : RESTART_RUNNING;
	}
	if (state != NULL) {
		*state = r->state;
	}
	return (delay);
}

void
restart_on_ready(struct restart *r, int64_t now_ms)
{
	r->ready_ms = now_ms;
	r->state = r->crashloop ? RESTART_CRASHLOOP : RESTART_RUNNING;
}

enum restart_state
restart_state(struct restart *r, int64_t now_ms)
{
	check_stable(r, now_ms);
	return (r->state);
}

const char *
restart_state_name(enum restart_state s)
{
	switch (s) {
	case RESTART_RUNNING:
		return ("running");
	case RESTART_BACKOFF:
		return ("backoff");
	case RESTART_CRASHLOOP:
		return ("crashloop");
	}
	return ("unknown");
}

void
restart_info(struct restart *r, int64_t now_ms, struct restart_info *out)
{
	check_stable(r, now_ms);
	out->state = r->state;
	out->restarts_total = r->total;
	out->consecutive = r->consecutive;
	out->last_exit_ms = r->last_exit_ms;
	out->ready_since_ms = r->ready_ms;
	out->last_cause = r->cause;
}

/* ---- quarantine ---- */

/* A record as stored; struct quarantine_rec is its borrowed view. */
struct qrec {
	char *key;
	char *cause;
	int deaths;
	int64_t first_ms;
	int64_t since_ms;
	int64_t until_ms;
};

struct quarantine {
	struct quarantine_config cfg;
	struct qrec *recs;
	size_t len;
	size_t cap;
};

void
quarantine_config_default(struct quarantine_config *c)
{
	c->threshold = QUARANTINE_DEFAULT_THRESHOLD;
	c->backoff_ms = QUARANTINE_DEFAULT_BACKOFF_MS;
}

struct quarantine *
quarantine_new(const struct quarantine_config *c)
{
	struct quarantine *q = xcalloc(1, sizeof(*q));

	if (c != NULL) {
		q->cfg = *c;
	} else {
		quarantine_config_default(&q->cfg);
	}
	if (q->cfg.threshold < 1) {
		q->cfg.threshold = 1;
	}
	if (q->cfg.backoff_ms < 0) {
		q->cfg.backoff_ms = 0;
	}
	return (q);
}

static void
rec_fini(struct qrec *rec)
{
	free(rec->key);
	free(rec->cause);
}

void
quarantine_free(struct quarantine *q)
{
	size_t i;

	if (q == NULL) {
		return;
	}
	for (i = 0; i < q->len; i++) {
		rec_fini(&q->recs[i]);
	}
	free(q->recs);
	free(q);
}

static struct qrec *
find(const struct quarantine *q, const char *key)
{
	size_t i;

	if (key == NULL) {
		return (NULL);
	}
	for (i = 0; i < q->len; i++) {
		if (strcmp(q->recs[i].key, key) == 0) {
			return (&q->recs[i]);
		}
	}
	return (NULL);
}

/* A new record for key's first death, at the end (first-death order). */
static struct qrec *
append(struct quarantine *q, const char *key, int64_t now_ms)
{
	struct qrec *rec;

	if (q->len == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 8;
		q->recs = xreallocarray(q->recs, q->cap, sizeof(*q->recs));
	}
	rec = &q->recs[q->len++];
	rec->key = xstrdup(key);
	rec->cause = xstrdup("");
	rec->deaths = 0;
	rec->first_ms = now_ms;
	rec->since_ms = -1;
	rec->until_ms = -1;
	return (rec);
}

/* key's record, a new one for its first death; NULL for no key. */
static struct qrec *
rec_of(struct quarantine *q, const char *key, int64_t now_ms)
{
	struct qrec *rec;

	if (key == NULL || key[0] == '\0') {
		return (NULL);
	}
	if ((rec = find(q, key)) == NULL) {
		rec = append(q, key, now_ms);
	}
	return (rec);
}

bool
quarantine_key_died(struct quarantine *q, const char *key, const char *cause,
        int64_t now_ms)
{
	struct qrec *rec;

	if ((rec = rec_of(q, key, now_ms)) == NULL) {
		return (false);
	}
	if (rec->deaths < INT_MAX) {
		rec->deaths++;
	}
	free(rec->cause);
	rec->cause = xstrdup(cause != NULL ? cause : "");
	if (rec->deaths < q->cfg.threshold) {
		return (false);
	}
	if (rec->since_ms < 0) {
		rec->since_ms = now_ms;
	}
	rec->until_ms = q->cfg.backoff_ms > INT64_MAX - now_ms
	        ? INT64_MAX
	        : now_ms + q->cfg.backoff_ms;
	return (true);
}

bool
quarantine_key_poison(struct quarantine *q, const char *key, const char *cause,
        int64_t now_ms)
{
	struct qrec *rec;

	if ((rec = rec_of(q, key, now_ms)) == NULL) {
		return (false);
	}
	if (rec->deaths < q->cfg.threshold - 1) {
		rec->deaths = q->cfg.threshold - 1;
	}
	return (quarantine_key_died(q, key, cause, now_ms));
}

void
quarantine_key_ok(struct quarantine *q, const char *key)
{
	struct qrec *rec = find(q, key);
	size_t i;

	if (rec == NULL) {
		return;
	}
	i = (size_t)(rec - q->recs);
	rec_fini(rec);
	memmove(&q->recs[i], &q->recs[i + 1],
	        (q->len - i - 1) * sizeof(*q->recs));
	q->len--;
}

bool
quarantine_is_quarantined(
        const struct quarantine *q, const char *key, int64_t now_ms)
{
	const struct qrec *rec = find(q, key);

	return (rec != NULL && rec->until_ms >= 0 && now_ms < rec->until_ms);
}

int64_t
quarantine_until(const struct quarantine *q, const char *key)
{
	const struct qrec *rec = find(q, key);

	return (rec != NULL ? rec->until_ms : -1);
}

int
quarantine_deaths(const struct quarantine *q, const char *key)
{
	const struct qrec *rec = find(q, key);

	return (rec != NULL ? rec->deaths : 0);
}

size_t
quarantine_count(const struct quarantine *q)
{
	size_t i, n = 0;

	for (i = 0; i < q->len; i++) {
		if (q->recs[i].since_ms >= 0) {
			n++;
		}
	}
	return (n);
}

void
quarantine_foreach(const struct quarantine *q, quarantine_fn *fn, void *arg)
{
	struct quarantine_rec view;
	size_t i;

	for (i = 0; i < q->len; i++) {
		if (q->recs[i].since_ms < 0) {
			continue;
		}
		view.key = q->recs[i].key;
		view.cause = q->recs[i].cause;
		view.deaths = q->recs[i].deaths;
		view.first_ms = q->recs[i].first_ms;
		view.since_ms = q->recs[i].since_ms;
		view.until_ms = q->recs[i].until_ms;
		fn(&view, arg);
	}
}
