/*
 * backoff.h: exponential backoff with jitter, pure logic.  Prefix backoff_.
 *
 * struct backoff mirrors client-go's wait.Backoff as the reflector uses it
 * (kube-api.md E.1): each call to backoff_next() returns the current step
 * d plus jitter (a value in [d, d + jitter*d)), then multiplies the step by
 * factor, never beyond cap_ms.  If more than reset_after_ms passed since the
 * previous backoff_next(), the step first returns to initial_ms.  With the
 * reflector's values (800 ms, x2, jitter 1.0, cap 30 s, reset 2 min) the
 * delays fall in [0.8,1.6) s, [1.6,3.2) s, ... [25.6,51.2) s, then [30,60) s
 * for ever until two quiet minutes reset them.
 *
 * Time and randomness are injected: `now_ms` is any monotonic millisecond
 * clock (timefmt_now_ms_mono()), `rnd01` a uniform number in [0, 1)
 * (backoff_rand01()).  All durations are milliseconds.
 */
#ifndef BACKOFF_H
#define BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

/* Embedded by callers; the fields are private (read them only in tests). */
struct backoff {
	int64_t initial_ms;     /* first step */
	int64_t cap_ms;         /* largest step; <= 0: no cap */
	int64_t reset_after_ms; /* quiet time that resets; <= 0: never */
	double factor;          /* step multiplier, >= 1 */
	double jitter;          /* extra fraction of the step, >= 0 */
	int64_t cur_ms;         /* step the next call starts from */
	int64_t last_ms;        /* now_ms of the previous call */
	bool started;           /* false until the first call */
};

/* The reflector's parameters (client-go reflector.go). */
#define BACKOFF_REFLECTOR_INITIAL_MS 800
#define BACKOFF_REFLECTOR_FACTOR     2.0
#define BACKOFF_REFLECTOR_JITTER     1.0
#define BACKOFF_REFLECTOR_CAP_MS     30000
#define BACKOFF_REFLECTOR_RESET_MS   120000

/* Sets the parameters and starts at initial_ms.  Out-of-range values are
 * clamped: initial_ms < 0 to 0, factor < 1 (or NaN) to 1, jitter < 0 (or
 * NaN) to 0, jitter > 10 to 10. */
void backoff_init(struct backoff *b, int64_t initial_ms, double factor,
        double jitter, int64_t cap_ms, int64_t reset_after_ms);

/* The delay to wait now, in ms, and advances the step.  rnd01 outside
 * [0, 1) is clamped into it.  Never negative; saturates instead of
 * overflowing. */
int64_t backoff_next(struct backoff *b, int64_t now_ms, double rnd01);

/* Returns the step to initial_ms at once (after a success). */
void backoff_reset(struct backoff *b);

/* Per-key exponential delay of the work queue (client-go
 * ItemExponentialFailureRateLimiter): base_ms * 2^failures, capped at
 * cap_ms (<= 0: no cap, saturating at INT64_MAX).  failures < 0 counts as
 * 0; any failures count, even 1000, is safe.  base_ms < 0 counts as 0. */
int64_t backoff_exp(int64_t base_ms, int64_t cap_ms, int failures);

/* Next number in [0, 1) from a xorshift64* generator whose state the
 * caller owns (seed it with anything, e.g. the clock and the pid; a zero
 * state is replaced by a fixed non-zero seed).  Not for cryptography. */
double backoff_rand01(uint64_t *state);

#endif
