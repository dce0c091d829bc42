/*
 * backoff.c: exponential backoff with jitter (backoff.h), the reflector's
 * relist/rewatch delays, the work queue's per-key delays and a tiny PRNG.
 * Pure logic: callers pass the clock and the random numbers in.
 */
#include "common/backoff.h"

#include <math.h>

/* Steps never grow beyond this, so step + jitter*step stays in range. */
#define STEP_MAX (INT64_MAX / 16)

/* The largest double below 1.0. */
#define BELOW_ONE 0x1.fffffffffffffp-1

void
backoff_init(struct backoff *b, int64_t initial_ms, double factor,
        double jitter, int64_t cap_ms, int64_t reset_after_ms)
{
	b->initial_ms = initial_ms < 0 ? 0 : initial_ms;
	if (b->initial_ms > STEP_MAX) {
		b->initial_ms = STEP_MAX;
	}
	b->factor = factor >= 1.0 ? factor : 1.0; /* NaN fails >= */
	b->jitter = jitter >= 0.0 ? fmin(jitter, 10.0) : 0.0;
	b->cap_ms = cap_ms;
	b->reset_after_ms = reset_after_ms;
	backoff_reset(b);
}

void
backoff_reset(struct backoff *b)
{
	b->cur_ms = b->initial_ms;
	b->last_ms = 0;
	b->started = false;
}

/* The step after cur: cur * factor, capped, computed in double so that a
 * large factor cannot overflow. */
static int64_t
grow(const struct backoff *b, int64_t cur)
{
	double next = (double)cur * b->factor;
	int64_t limit = STEP_MAX;

	if (b->cap_ms > 0 && b->cap_ms < limit) {
		limit = b->cap_ms;
	}
	if (!(next < (double)limit)) {
		return (limit);
	}
	return ((int64_t)next);
}

int64_t
backoff_next(struct backoff *b, int64_t now_ms, double rnd01)
{
	int64_t d;

	if (b->started && b->reset_after_ms > 0
	        && now_ms - b->last_ms > b->reset_after_ms) {
		b->cur_ms = b->initial_ms;
	}
	b->started = true;
	b->last_ms = now_ms;
	d = b->cur_ms;
	b->cur_ms = grow(b, d);
	if (!(rnd01 >= 0.0)) { /* also NaN */
		rnd01 = 0.0;
	} else if (rnd01 > BELOW_ONE) {
		rnd01 = BELOW_ONE;
	}
	return (d + (int64_t)(rnd01 * b->jitter * (double)d));
}

int64_t
backoff_exp(int64_t base_ms, int64_t cap_ms, int failures)
{
	int64_t d = base_ms < 0 ? 0 : base_ms;
	int64_t limit = cap_ms > 0 ? cap_ms : INT64_MAX;
	int i;

	/* Doubling stops as soon as the cap is reached: at most 63 rounds. */
	for (i = 0; i < failures && d < limit; i++) {
		d = d > limit / 2 ? limit : d * 2;
		if (d == 0) {
			break;
		}
	}
	return (d < limit ? d : limit);
}

double
backoff_rand01(uint64_t *state)
{
	uint64_t x = *state;

	if (x == 0) {
		x = 0x9e3779b97f4a7c15ULL;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	/* The top 53 bits of the scrambled value, as a fraction. */
	return ((double)((x * 0x2545f4914f6cdd1dULL) >> 11) * 0x1.0p-53);
}
