/*
 * restart.h: the worker restart policy and the poison-key quarantine of
 * design.md "Worker lifecycle".  Pure logic, injected time, no I/O.  Two
 * small types with their own prefixes: restart_ (one per worker process
 * slot) and quarantine_ (one per controller).
 *
 * Restart policy (struct restart), defaults in brackets:
 *  - the first exit after a start from scratch or after stable running
 *    restarts immediately (delay 0);
 *  - each further exit in a row waits initial_ms [100 ms] doubling to
 *    max_ms [30 s]: 0, 100, 200, 400, ... 25.6 s, 30 s, 30 s;
 *  - intensity, as OTP's supervisor: more than `intensity` [5] exits within
 *    period_ms [60 s] puts the slot in CrashLoop.  CrashLoop never gives
 *    up: each exit then waits max_ms.  It is sticky: it ends (with the
 *    backoff) only after the worker ran stable_ms;
 *  - a worker that has been ready for stable_ms [60 s] is stable: its
 *    backoff and CrashLoop are reset, so its next exit restarts at once.
 *
 * Quarantine (struct quarantine), defaults in brackets: per key, the number
 * of consecutive worker deaths while that key was in flight.  The
 * threshold-th [3rd] death in a row quarantines the key: the supervisor
 * parks it for backoff_ms [10 min] (it is tried again after that; one more
 * death quarantines it again at once, since the count stays at or above
 * the threshold).  The row is broken only by a RESULT for that key (the
 * worker survived it, whatever the verdict: an error verdict is not a
 * death): quarantine_key_ok().  A death while another key is in flight
 * does not touch this key's count: the row counts this key's attempts.
 */
#ifndef RESTART_H
#define RESTART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct restart;
struct quarantine;

#define RESTART_DEFAULT_INITIAL_MS 100
#define RESTART_DEFAULT_MAX_MS     30000
#define RESTART_DEFAULT_INTENSITY  5
#define RESTART_DEFAULT_PERIOD_MS  60000
#define RESTART_DEFAULT_STABLE_MS  60000

#define QUARANTINE_DEFAULT_THRESHOLD  3
#define QUARANTINE_DEFAULT_BACKOFF_MS (10 * 60 * 1000)

struct restart_config {
	int64_t initial_ms; /* second restart's delay; < 1 counts as 1 */
	int64_t max_ms;     /* largest delay; < initial_ms counts as it */
	int intensity;      /* R: more than R exits in period = CrashLoop */
	int64_t period_ms;  /* T; <= 0 disables the intensity check */
	int64_t stable_ms;  /* ready this long = reset; <= 0: never */
};

enum restart_state {
	RESTART_RUNNING,   /* up (or restarting at once) */
	RESTART_BACKOFF,   /* waiting before the next start, until ready */
	RESTART_CRASHLOOP, /* intensity exceeded; restarts at max_ms */
};

/* Read-only view for health output. */
struct restart_info {
	enum restart_state state;
	uint64_t restarts_total; /* exits seen */
	int consecutive;         /* exits since the last reset */
	int64_t last_exit_ms;    /* -1: never */
	int64_t ready_since_ms;  /* -1: not ready */
	const char *last_cause;  /* borrowed until the next exit; "" none */
};

void restart_config_default(struct restart_config *c);
/* c is copied (NULL: defaults).  Caller frees with restart_free(). */
struct restart *restart_new(const struct restart_config *c);
void restart_free(struct restart *r);

/* The worker exited (cause: a short text such as "signal 11", copied;
 * NULL is ""): returns the delay in ms before the next start, >= 0, and
 * stores the new state in *state (may be NULL).  Call it for every exit,
 * also of a worker that never became ready. */
int64_t restart_on_exit(struct restart *r, int64_t now_ms, const char *cause,
        enum restart_state *state);
/* The worker finished its handshake and is ready. */
void restart_on_ready(struct restart *r, int64_t now_ms);
/* The current state; a worker ready for stable_ms is reset here too. */
enum restart_state restart_state(struct restart *r, int64_t now_ms);
/* "running", "backoff", "crashloop" ("unknown" otherwise). */
const char *restart_state_name(enum restart_state s);
/* Fills *out (after the same stability check as restart_state()). */
void restart_info(struct restart *r, int64_t now_ms, struct restart_info *out);

struct quarantine_config {
	int threshold;      /* deaths in a row that quarantine; < 1 counts 1 */
	int64_t backoff_ms; /* how long a quarantined key is held; >= 0 */
};

/* One key's record (all fields borrowed from the quarantine). */
struct quarantine_rec {
	const char *key;
	int deaths;        /* consecutive deaths with the key in flight */
	const char *cause; /* the last death's cause */
	int64_t first_ms;  /* the first death of this row */
	int64_t since_ms;  /* first quarantined in this row (-1: not) */
	int64_t until_ms;  /* held until, from the last death (-1: not) */
};

typedef void quarantine_fn(const struct quarantine_rec *rec, void *arg);

void quarantine_config_default(struct quarantine_config *c);
/* c is copied (NULL: defaults).  Caller frees with quarantine_free(). */
struct quarantine *quarantine_new(const struct quarantine_config *c);
void quarantine_free(struct quarantine *q);

/* A worker died with key in flight (key and cause copied; cause NULL is
 * ""): counts the death.  Returns true when the key is quarantined now;
 * then it is held until now_ms + backoff_ms (quarantine_until()). */
bool quarantine_key_died(struct quarantine *q, const char *key,
        const char *cause, int64_t now_ms);
/* A worker killed for a policy violation with key in flight (workers.h
 * wk_violation()): the key is quarantined at once, whatever its row
 * (held until now_ms + backoff_ms).  Returns true (false for an empty
 * key). */
bool quarantine_key_poison(struct quarantine *q, const char *key,
        const char *cause, int64_t now_ms);
/* A RESULT came back for key: its row is broken and its record dropped. */
void quarantine_key_ok(struct quarantine *q, const char *key);
/* Whether key is quarantined and still held at now_ms. */
bool quarantine_is_quarantined(
        const struct quarantine *q, const char *key, int64_t now_ms);
/* The end of key's hold (-1: not quarantined). */
int64_t quarantine_until(const struct quarantine *q, const char *key);
/* key's consecutive deaths (0: none). */
int quarantine_deaths(const struct quarantine *q, const char *key);
/* Number of quarantined keys (deaths in a row >= threshold, whether still
 * held or already being tried again), and a walk over them in the order of
 * their row's first death (fn must not change q). */
size_t quarantine_count(const struct quarantine *q);
void quarantine_foreach(
        const struct quarantine *q, quarantine_fn *fn, void *arg);

#endif
