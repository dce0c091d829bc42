/*
 * zonecache.h: a sandboxed worker's time zones.  A cron zone loader
 * (cron.h cron_zone_loader_fn) that asks the supervisor for the zone's
 * TZif bytes through a view (view_zoneinfo()) and keeps up to ZC_MAX
 * parsed zones in memory (least recently used evicted), so a schedule's
 * zone crosses the session once.  Zones not found or refused are not
 * kept.  Process-wide, one thread.  Prefix zc_.
 */
#ifndef ZONECACHE_H
#define ZONECACHE_H

#include <stddef.h>

#include "workers/cron.h"

#define ZC_MAX 16

/* The loader: arg is the struct view * to ask (borrowed).  Errors read
 * `unknown time zone "X"` (not found; with the view's message appended
 * after a view error) or `invalid location name "X"`. */
struct cron_zone *zc_load(
        const char *name, void *arg, char *err, size_t errlen);
/* Zones kept now. */
size_t zc_count(void);
/* Forgets every zone (tests). */
void zc_reset(void);

#endif
