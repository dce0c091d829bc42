/*
 * reflector.c: the ListAndWatch state machine of one kind (reflector.h).
 * The supervisor's event loop keeps one per watched kind, asks it what to
 * request next and feeds it the outcomes; the items and events themselves
 * go to the cache (cache.h), never through here.
 *
 * States: LIST_DUE (a list page is to be requested at due_ms), LISTING (a
 * page request is in flight), WATCH_DUE, WATCHING.  A list "attempt" is
 * the sequence of page requests that builds one snapshot; it starts with
 * a first page (no continue token) and ends with REFL_LIST_DONE or a
 * restart.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/reflector.h"

enum state {
	ST_LIST_DUE,
	ST_LISTING,
	ST_WATCH_DUE,
	ST_WATCHING,
};

struct refl {
	enum state st;
	int64_t due_ms;
	char *rv;      /* last RV seen: list, event, bookmark */
	char *list_rv; /* RV of the list attempt (its first page) */
	char *req_rv;  /* resourceVersion of the attempt's first page */
	const char *req_match;
	int req_limit;
	char *cont;        /* token of the next page, NULL: first page */
	bool keep_attempt; /* next first page redoes the same attempt */
	bool keep_limit;   /* ... with the previous attempt's limit */
	bool synced;       /* a list has completed */
	bool paged;        /* the RV=0 list came back paginated */
	bool rv_gone;      /* last RV unusable: list with RV "" */
	bool after_list;   /* the next watch follows a list */
	int64_t watch_start_ms;
	uint64_t watch_events;
	struct backoff bo;
	uint64_t rs;
	refl_rand_fn *rnd;
	void *rarg;
	struct refl_stats stats;
};

static void
set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s != NULL ? xstrdup(s) : NULL;
}

static double
rand01(struct refl *r)
{
	double d;

	if (r->rnd == NULL) {
		return (backoff_rand01(&r->rs));
	}
	d = r->rnd(r->rarg);
	return (d >= 0 && d < 1 ? d : 0);
}

struct refl *
refl_new(uint64_t seed)
{
	struct refl *r = xcalloc(1, sizeof(*r));

	r->st = ST_LIST_DUE;
	r->due_ms = INT64_MIN;
	r->rv = xstrdup("");
	r->list_rv = xstrdup("");
	r->req_rv = xstrdup("");
	r->rs = seed;
	backoff_init(&r->bo, BACKOFF_REFLECTOR_INITIAL_MS,
	        BACKOFF_REFLECTOR_FACTOR, BACKOFF_REFLECTOR_JITTER,
	        BACKOFF_REFLECTOR_CAP_MS, BACKOFF_REFLECTOR_RESET_MS);
	return (r);
}

void
refl_free(struct refl *r)
{
	if (r == NULL) {
		return;
	}
	free(r->rv);
	free(r->list_rv);
	free(r->req_rv);
	free(r->cont);
	free(r);
}

void
refl_set_rand(struct refl *r, refl_rand_fn *fn, void *arg)
{
	r->rnd = fn;
	r->rarg = arg;
}

/* Schedules st at now + one backoff delay. */
static void
delay(struct refl *r, enum state st, int64_t now_ms)
{
	int64_t d = backoff_next(&r->bo, now_ms, rand01(r));

	r->stats.backoffs++;
	r->st = st;
	r->due_ms = now_ms + d;
}

static void
at_once(struct refl *r, enum state st, int64_t now_ms)
{
	r->st = st;
	r->due_ms = now_ms;
}

/* The parameters of a new list attempt (spec E.1). */
static void
plan_list(struct refl *r)
{
	const char *rv;

	if (r->rv_gone) {
		rv = "";
	} else if (!r->synced && r->rv[0] == '\0') {
		rv = "0";
	} else {
		rv = r->rv;
	}
	set_str(&r->req_rv, rv);
	r->req_match = NULL;
	if (!r->keep_limit) {
		r->req_limit = REFL_PAGE_SIZE;
		if (!r->paged && rv[0] != '\0' && strcmp(rv, "0") != 0) {
			r->req_limit = 0; /* served by the watch cache */
		}
	}
	if (r->paged && rv[0] != '\0' && strcmp(rv, "0") != 0
	        && r->req_limit > 0) {
		r->req_match = "NotOlderThan";
	}
	r->keep_limit = false;
}

static void
next_list(struct refl *r, struct refl_action *act)
{
	if (r->cont == NULL) {
		if (!r->keep_attempt) {
			r->stats.lists++;
			if (r->synced) {
				r->stats.relists++;
			}
			plan_list(r);
		}
		r->keep_attempt = false;
		act->rv = r->req_rv;
		act->rv_match = r->req_match;
	} else {
		act->rv = "";
		act->rv_match = NULL;
	}
	act->type = REFL_LIST;
	act->limit = r->req_limit;
	act->cont = r->cont;
	r->stats.list_requests++;
	r->st = ST_LISTING;
}

static void
next_watch(struct refl *r, int64_t now_ms, struct refl_action *act)
{
	int span = REFL_WATCH_MAX_S - REFL_WATCH_MIN_S + 1;

	act->type = REFL_WATCH;
	act->rv = r->rv;
	act->timeout_s = REFL_WATCH_MIN_S + (int)(rand01(r) * span);
	if (act->timeout_s > REFL_WATCH_MAX_S) {
		act->timeout_s = REFL_WATCH_MAX_S;
	}
	r->stats.watches++;
	if (!r->after_list) {
		r->stats.watch_restarts++;
	}
	r->after_list = false;
	r->watch_start_ms = now_ms;
	r->watch_events = 0;
	r->st = ST_WATCHING;
}

void
refl_next(struct refl *r, int64_t now_ms, struct refl_action *act)
{
	memset(act, 0, sizeof(*act));
	act->type = REFL_NONE;
	act->rv = "";
	act->until_ms = INT64_MAX;
	if (r->st == ST_LISTING || r->st == ST_WATCHING) {
		return;
	}
	if (now_ms < r->due_ms) {
		act->until_ms = r->due_ms;
		return;
	}
	if (r->st == ST_LIST_DUE) {
		next_list(r, act);
	} else {
		next_watch(r, now_ms, act);
	}
}

/* The list attempt failed: drop its pages. */
static void
list_reset(struct refl *r)
{
	set_str(&r->cont, NULL);
}

/* A 410 or TooLarge answer to a list. */
static enum refl_list_step
list_expired(struct refl *r, enum refl_result res, int64_t now_ms)
{
	if (res == REFL_EXPIRED && r->cont != NULL) {
		/* The pager's fallback: the same list in full, no limit. */
		list_reset(r);
		r->req_limit = 0;
		r->keep_attempt = true;
		at_once(r, ST_LIST_DUE, now_ms);
		return (REFL_LIST_RESTART);
	}
	list_reset(r);
	if (r->req_rv[0] == '\0') {
		/* Even a consistent read failed: back off and retry. */
		delay(r, ST_LIST_DUE, now_ms);
		return (REFL_LIST_RESTART);
	}
	r->rv_gone = true;
	r->keep_limit = true;
	at_once(r, ST_LIST_DUE, now_ms);
	return (REFL_LIST_RESTART);
}

static enum refl_list_step
list_ok(struct refl *r, const char *cont, const char *list_rv, int64_t now_ms)
{
	bool more = cont != NULL && cont[0] != '\0';

	if (r->cont == NULL) {
		if (list_rv == NULL || list_rv[0] == '\0') {
			log_warnx("reflector: list without resourceVersion");
			list_reset(r);
			delay(r, ST_LIST_DUE, now_ms);
			return (REFL_LIST_RESTART);
		}
		set_str(&r->list_rv, list_rv);
		if (more && strcmp(r->req_rv, "0") == 0) {
			r->paged = true;
		}
	}
	if (more) {
		set_str(&r->cont, cont);
		at_once(r, ST_LIST_DUE, now_ms);
		return (REFL_LIST_MORE);
	}
	list_reset(r);
	set_str(&r->rv, r->list_rv);
	r->synced = true;
	r->rv_gone = false;
	r->after_list = true;
	r->stats.syncs++;
	at_once(r, ST_WATCH_DUE, now_ms);
	return (REFL_LIST_DONE);
}

enum refl_list_step
refl_list_page(struct refl *r, enum refl_result res, const char *cont,
        const char *list_rv, int64_t now_ms)
{
	if (r->st != ST_LISTING) {
		return (REFL_LIST_RESTART);
	}
	switch (res) {
	case REFL_OK:
		return (list_ok(r, cont, list_rv, now_ms));
	case REFL_EXPIRED:
	case REFL_TOO_LARGE:
		return (list_expired(r, res, now_ms));
	case REFL_RETRY:
	case REFL_LOST:
	case REFL_ERROR:
		break;
	}
	list_reset(r);
	delay(r, ST_LIST_DUE, now_ms);
	return (REFL_LIST_RESTART);
}

void
refl_watch_started(struct refl *r, int64_t now_ms)
{
	if (r->st == ST_WATCHING) {
		r->watch_start_ms = now_ms;
	}
}

void
refl_watch_event(struct refl *r, const char *rv)
{
	if (r->st != ST_WATCHING) {
		return;
	}
	r->watch_events++;
	if (rv != NULL && rv[0] != '\0') {
		set_str(&r->rv, rv);
	}
}

void
refl_watch_end(struct refl *r, enum refl_result res, int64_t now_ms)
{
	if (r->st != ST_WATCHING) {
		return;
	}
	switch (res) {
	case REFL_OK:
		if (r->watch_events == 0
		        && now_ms - r->watch_start_ms < REFL_SHORT_WATCH_MS) {
			/* a server going away ends new watches at once: the
			 * next one may reach a restored server, which a
			 * watch from this RV would never report */
			log_debug("reflector: very short watch: relisting");
			delay(r, ST_LIST_DUE, now_ms);
		} else if (r->watch_events == 0
		        && now_ms - r->watch_start_ms
		                >= (int64_t)REFL_WATCH_MIN_S * 1000) {
			/* not even the bookmark servers send before the
			 * deadline: the server is behind our RV */
			log_debug("reflector: silent watch: relisting");
			at_once(r, ST_LIST_DUE, now_ms);
		} else {
			at_once(r, ST_WATCH_DUE, now_ms);
		}
		break;
	case REFL_RETRY:
		delay(r, ST_WATCH_DUE, now_ms);
		break;
	case REFL_LOST:
		delay(r, ST_LIST_DUE, now_ms);
		break;
	case REFL_TOO_LARGE:
		/* the server is behind the RV (restored from a backup): a
		 * list at it would wait and fail the same way */
		r->rv_gone = true;
		delay(r, ST_LIST_DUE, now_ms);
		break;
	case REFL_EXPIRED:
	case REFL_ERROR:
		delay(r, ST_LIST_DUE, now_ms);
		break;
	}
}

bool
refl_watching(const struct refl *r, int64_t *since_ms)
{
	if (r->st != ST_WATCHING) {
		return (false);
	}
	if (since_ms != NULL) {
		*since_ms = r->watch_start_ms;
	}
	return (true);
}

const char *
refl_rv(const struct refl *r)
{
	return (r->rv);
}

const char *
refl_list_rv(const struct refl *r)
{
	return (r->list_rv);
}

bool
refl_synced(const struct refl *r)
{
	return (r->synced);
}

const struct refl_stats *
refl_stats(const struct refl *r)
{
	return (&r->stats);
}
