/*
 * fault.h: a controller's fault state: a controller fault (its workers die
 * on many different keys, so the fault is the controller's, not a poison
 * object's) and a permanent failure (a worker exited IPC_EXIT_PERMANENT).
 * Pure logic, injected time, no I/O.  One struct fault per controller,
 * fed by the worker pool (workers.c) beside its quarantine (restart.h).
 * Prefix fault_.
 *
 * The rule, defaults in brackets:
 *  - a streak is the worker deaths with a key in flight since the
 *    controller's last RESULT (any verdict: the worker survived the
 *    reconcile), within window_ms [10 min] of each other's latest;
 *  - a streak holding keys [3] DIFFERENT keys is a controller fault: the
 *    controller is Degraded.  A single poison key dies alone in its
 *    streak (other keys' RESULTs break it), so it never gets there and is
 *    quarantined as before;
 *  - while Degraded: keys are not quarantined (the caller releases those
 *    quarantined during the streak: fault_foreach_streak()), and each
 *    worker exit of the controller waits initial_ms [500 ms] doubling to
 *    max_ms [30 s] before the restart, instead of the slot's own policy;
 *  - Degraded ends by itself (fault_tick() says so once) recover_ms [60 s]
 *    after the first RESULT that followed the last death, when no worker
 *    of the controller died since: a worker did work and stayed up;
 *  - Failed (a permanent exit) is sticky: no restart until fault_reset()
 *    (sympoziumctl restart).
 */
#ifndef FAULT_H
#define FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fault;

#define FAULT_DEFAULT_KEYS       3
#define FAULT_DEFAULT_WINDOW_MS  (10 * 60 * 1000)
#define FAULT_DEFAULT_INITIAL_MS 500
#define FAULT_DEFAULT_MAX_MS     30000
#define FAULT_DEFAULT_RECOVER_MS 60000
#define FAULT_STREAK_MAX         64 /* keys kept of one streak */

struct fault_config {
	int keys;           /* distinct keys that make a fault (1 counts
	                     * as 2; <= 0: never a fault) */
	int64_t window_ms;  /* a death older than this leaves the streak */
	int64_t initial_ms; /* first restart delay while Degraded; >= 1 */
	int64_t max_ms;     /* largest; < initial_ms counts as it */
	int64_t recover_ms; /* death-free time (with a RESULT) to recover */
};

enum fault_state {
	FAULT_OK,
	FAULT_DEGRADED,
	FAULT_FAILED,
};

/* Read-only view (strings borrowed until the next call on f). */
struct fault_info {
	enum fault_state state;
	const char *reason; /* "" when OK */
	int64_t since_ms;   /* the state's start (-1: OK since creation) */
	uint64_t faults;    /* times it became Degraded */
	uint64_t failures;  /* times it became Failed */
	size_t streak_keys; /* distinct keys in the current streak */
};

typedef void fault_key_fn(const char *key, void *arg);

void fault_config_default(struct fault_config *c);
/* c is copied (NULL: defaults).  Caller frees with fault_free(). */
struct fault *fault_new(const struct fault_config *c);
void fault_free(struct fault *f);

/* A worker died with key in flight (cause copied; NULL is "").  Returns
 * true when this death made the controller Degraded. */
bool fault_key_died(
        struct fault *f, const char *key, const char *cause, int64_t now_ms);
/* A worker exited (any exit, key or not), delay being the slot's own
 * restart delay: returns the delay to use (the fault's backoff while
 * Degraded, else delay) and restarts the recovery clock. */
int64_t fault_on_exit(struct fault *f, int64_t delay, int64_t now_ms);
/* A RESULT came back: the streak is broken. */
void fault_result(struct fault *f, int64_t now_ms);
/* Returns true once when a Degraded controller recovers at now_ms. */
bool fault_tick(struct fault *f, int64_t now_ms);
/* When fault_tick() may next recover (-1: not pending). */
int64_t fault_next_deadline(const struct fault *f);
/* A worker exited permanently: Failed with reason (copied). */
void fault_fail(struct fault *f, const char *reason, int64_t now_ms);
/* Back to OK with an empty streak (an operator's restart). */
void fault_reset(struct fault *f, int64_t now_ms);

enum fault_state fault_state(const struct fault *f);
void fault_info(const struct fault *f, struct fault_info *out);
/* The keys of the current streak, oldest first (fn must not change f). */
void fault_foreach_streak(const struct fault *f, fault_key_fn *fn, void *arg);
/* "ok", "degraded", "failed" ("unknown" otherwise). */
const char *fault_state_name(enum fault_state s);

#endif
