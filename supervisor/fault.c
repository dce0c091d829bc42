/*
 * fault.c: a controller's fault state (fault.h).  Owns the current streak
 * (the distinct keys its workers died on since the last RESULT, each with
 * the time of its latest death, in a small array: a streak that makes a
 * fault is a handful of keys, FAULT_STREAK_MAX at most, oldest dropped),
 * the state with its reason, the backoff step while Degraded and the
 * recovery clock.  Computes only.
 */
#include "supervisor/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/xmalloc.h"

struct entry {
	char *key;
	int64_t last_ms;
};

struct fault {
	struct fault_config cfg;
	enum fault_state state;
	char *reason;
	int64_t since_ms;
	uint64_t faults, failures;
	struct entry streak[FAULT_STREAK_MAX];
	size_t nstreak;
	int steps;            /* exits while Degraded (backoff step) */
	int64_t last_exit_ms; /* -1: none */
	bool result_after;    /* a RESULT since the last exit */
	int64_t result_ms;    /* the first one's time */
};

void
fault_config_default(struct fault_config *c)
{
	c->keys = FAULT_DEFAULT_KEYS;
	c->window_ms = FAULT_DEFAULT_WINDOW_MS;
	c->initial_ms = FAULT_DEFAULT_INITIAL_MS;
	c->max_ms = FAULT_DEFAULT_MAX_MS;
	c->recover_ms = FAULT_DEFAULT_RECOVER_MS;
}

struct fault *
fault_new(const struct fault_config *c)
{
	struct fault *f = xcalloc(1, sizeof(*f));

	if (c != NULL) {
		f->cfg = *c;
	} else {
		fault_config_default(&f->cfg);
	}
	if (f->cfg.keys == 1) {
		f->cfg.keys = 2; /* one key alone is the quarantine's case */
	}
	if (f->cfg.keys > FAULT_STREAK_MAX) {
		f->cfg.keys = FAULT_STREAK_MAX;
	}
	if (f->cfg.initial_ms < 1) {
		f->cfg.initial_ms = 1;
	}
	if (f->cfg.max_ms < f->cfg.initial_ms) {
		f->cfg.max_ms = f->cfg.initial_ms;
	}
	f->reason = xstrdup("");
	f->since_ms = -1;
	f->last_exit_ms = -1;
	return (f);
}

static void
streak_clear(struct fault *f)
{
	for (size_t i = 0; i < f->nstreak; i++) {
		free(f->streak[i].key);
	}
	f->nstreak = 0;
}

void
fault_free(struct fault *f)
{
	if (f == NULL) {
		return;
	}
	streak_clear(f);
	free(f->reason);
	free(f);
}

static void
streak_drop(struct fault *f, size_t i)
{
	free(f->streak[i].key);
	memmove(&f->streak[i], &f->streak[i + 1],
	        (f->nstreak - i - 1) * sizeof(f->streak[0]));
	f->nstreak--;
}

/* Drops deaths older than the window, then records key's. */
static void
streak_add(struct fault *f, const char *key, int64_t now)
{
	for (size_t i = 0; i < f->nstreak;) {
		if (strcmp(f->streak[i].key, key) == 0
		        || (f->cfg.window_ms > 0
		                && now - f->streak[i].last_ms
		                        > f->cfg.window_ms)) {
			streak_drop(f, i);
		} else {
			i++;
		}
	}
	if (f->nstreak == FAULT_STREAK_MAX) {
		streak_drop(f, 0);
	}
	f->streak[f->nstreak].key = xstrdup(key);
	f->streak[f->nstreak].last_ms = now;
	f->nstreak++;
}

static void
set_state(struct fault *f, enum fault_state s, char *reason, int64_t now)
{
	free(f->reason);
	f->reason = reason;
	if (f->state != s) {
		f->since_ms = now;
	}
	f->state = s;
}

bool
fault_key_died(
        struct fault *f, const char *key, const char *cause, int64_t now_ms)
{
	bool became;

	if (key == NULL || key[0] == '\0' || f->state == FAULT_FAILED
	        || f->cfg.keys <= 0) {
		return (false);
	}
	streak_add(f, key, now_ms);
	if (f->nstreak < (size_t)f->cfg.keys) {
		return (false); /* Degraded keeps the reason that made it */
	}
	became = f->state == FAULT_OK;
	if (became) {
		f->faults++;
		f->steps = 0;
	}
	set_state(f, FAULT_DEGRADED,
	        xasprintf("workers died on %zu different keys in a row "
	                  "(last: %s on %s)",
	                f->nstreak, cause != NULL ? cause : "", key),
	        now_ms);
	return (became);
}

int64_t
fault_on_exit(struct fault *f, int64_t delay, int64_t now_ms)
{
	f->last_exit_ms = now_ms;
	f->result_after = false;
	if (f->state != FAULT_DEGRADED) {
		return (delay);
	}
	delay = backoff_exp(f->cfg.initial_ms, f->cfg.max_ms, f->steps);
	if (f->steps < 62) {
		f->steps++;
	}
	return (delay);
}

void
fault_result(struct fault *f, int64_t now_ms)
{
	streak_clear(f);
	if (!f->result_after) {
		f->result_after = true;
		f->result_ms = now_ms;
	}
}

int64_t
fault_next_deadline(const struct fault *f)
{
	if (f->state != FAULT_DEGRADED || !f->result_after) {
		return (-1);
	}
	return (f->result_ms + f->cfg.recover_ms);
}

bool
fault_tick(struct fault *f, int64_t now_ms)
{
	int64_t t = fault_next_deadline(f);

	if (t < 0 || now_ms < t) {
		return (false);
	}
	set_state(f, FAULT_OK, xstrdup(""), now_ms);
	f->steps = 0;
	return (true);
}

void
fault_fail(struct fault *f, const char *reason, int64_t now_ms)
{
	if (f->state != FAULT_FAILED) {
		f->failures++;
	}
	streak_clear(f);
	set_state(f, FAULT_FAILED, xstrdup(reason != NULL ? reason : ""),
	        now_ms);
}

void
fault_reset(struct fault *f, int64_t now_ms)
{
	streak_clear(f);
	f->steps = 0;
	f->result_after = false;
	set_state(f, FAULT_OK, xstrdup(""), now_ms);
}

enum fault_state
fault_state(const struct fault *f)
{
	return (f->state);
}

void
fault_info(const struct fault *f, struct fault_info *out)
{
	out->state = f->state;
	out->reason = f->reason;
	out->since_ms = f->since_ms;
	out->faults = f->faults;
	out->failures = f->failures;
	out->streak_keys = f->nstreak;
}

void
fault_foreach_streak(const struct fault *f, fault_key_fn *fn, void *arg)
{
	for (size_t i = 0; i < f->nstreak; i++) {
		fn(f->streak[i].key, arg);
	}
}

const char *
fault_state_name(enum fault_state s)
{
	switch (s) {
	case FAULT_OK:
		return ("ok");
	case FAULT_DEGRADED:
		return ("degraded");
	case FAULT_FAILED:
		return ("failed");
	}
	return ("unknown");
}
