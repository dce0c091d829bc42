/*
 * mtune.c: glibc malloc tuning (mtune.h).  Every thread that allocates
 * gets an arena of its own, up to 8 per core (nng's and libcurl's threads
 * in the supervisor), and each keeps the freed pages of its peak.  And
 * after a burst (a backlog of events and writes, a pruned run history,
 * deleted objects) the freed memory stays in the heap, fragmented among
 * live objects, until malloc_trim() hands its pages back.
 */
#include <malloc.h>
#include <stdlib.h>

#include "common/mtune.h"

void
mtune_arenas(int max)
{
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		mallopt(M_ARENA_MAX, max);
	}
}

bool
mtune_trim_ripe(struct mtune_trim *t, bool idle, int64_t now_ms)
{
	if (!idle) {
		t->worked = true;
		return (false);
	}
	return (t->worked
	        && (t->last_ms == 0
	                || now_ms - t->last_ms >= MTUNE_TRIM_PERIOD_MS));
}

bool
mtune_trim_due(const struct mtune_trim *t, size_t heap_free)
{
	return (t->worked && heap_free >= MTUNE_TRIM_MIN_FREE);
}

void
mtune_trimmed(struct mtune_trim *t, int64_t now_ms)
{
	t->worked = false;
	t->last_ms = now_ms;
}

bool
mtune_trim_check(struct mtune_trim *t, bool idle, int64_t now_ms)
{
	if (!mtune_trim_ripe(t, idle, now_ms)) {
		return (false);
	}
	struct mallinfo2 mi = mallinfo2();
	if (!mtune_trim_due(t, mi.fordblks)) {
		/* little to give back: wait for the next burst */
		mtune_trimmed(t, now_ms);
		return (false);
	}
	malloc_trim(0);
	mtune_trimmed(t, now_ms);
	return (true);
}
