/*
 * mtune.h: glibc malloc tuning for the long-lived processes: a cap on
 * the per-thread arenas, and when to give freed heap back once a burst
 * of work is over (the decision is pure, for tests/unit/test_mtune.c).
 */
#ifndef MTUNE_H
#define MTUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Free heap worth a trim, and the least time between two trims. */
#define MTUNE_TRIM_MIN_FREE  (1u << 20)
#define MTUNE_TRIM_PERIOD_MS 10000

struct mtune_trim {
	bool worked;     /* busy at some point since the last trim */
	int64_t last_ms; /* when the last trim ran; 0: never */
};

/* Caps glibc's malloc arenas at max unless MALLOC_ARENA_MAX is set in the
 * environment (which then wins).  Call before any thread exists. */
void mtune_arenas(int max);

/* Notes whether the process is idle at now_ms (nothing in flight); true
 * when a trim is worth trying: idle after some work, at least
 * MTUNE_TRIM_PERIOD_MS after the last trim.  mtune_trim_due() then says
 * whether heap_free (free bytes inside the heap) is worth it. */
bool mtune_trim_ripe(struct mtune_trim *t, bool idle, int64_t now_ms);
bool mtune_trim_due(const struct mtune_trim *t, size_t heap_free);
void mtune_trimmed(struct mtune_trim *t, int64_t now_ms);

/* The above with mallinfo2() and malloc_trim(0): once a burst of work is
 * over, the freed pages inside the heap go back to the system (free()
 * alone returns only the top of the heap).  Call often; true when it
 * trimmed. */
bool mtune_trim_check(struct mtune_trim *t, bool idle, int64_t now_ms);

#endif
