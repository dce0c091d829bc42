/*
 * informer.h: the supervisor's watch side (design.md "Data flow" 1-2,
 * spec kube-api.md E.1).  Prefix inf_.
 *
 * For each kind of a fixed set (a name, a resource, an optional
 * equality-based label selector, one namespace or all) a source: one
 * reflector (reflector.h) and one watch cache (cache.h) over a shared
 * struct kapi_multi.  Kinds with the same resource, namespace and selector
 * share one source; a kind with a selector is served by the unselected
 * source of its resource and namespace when there is one, through a
 * filter: its changes are those of the objects its selector matches (an
 * object whose labels stop matching is a delete for it, one that starts
 * matching an add), and inf_by_owner() applies the filter; the cache
 * (inf_cache) then holds more than the kind selects.  A source's LIST
 * pages and WATCHes are issued as refl_next() says; a LIST page is decoded
 * one item at a time into staged compact cache entries (never parsed
 * whole), watch events go to cache_apply() and refl_watch_event(), a
 * completed (re)list goes to cache_replace_staged(), and every change of a
 * cached object is reported to the owner with its key and its controller owner
 * before and after, so the supervisor can enqueue the object or its owner.
 *
 * No threads, no blocking calls: the owner's poll loop calls
 * kapi_multi_poll() / kapi_multi_perform() (which run the informer's
 * request callbacks) and inf_tick() (which starts due requests).  Time is
 * injected: inf_tick(now_ms) takes the loop's monotonic milliseconds; the
 * request callbacks, which run inside kapi_multi_perform(), read the clock
 * given in struct inf_conf (default timefmt_now_ms_mono()).
 *
 * Behaviour: a watch the server ends cleanly is resumed from the last
 * resourceVersion with no LIST; an ERROR event with code 410 or an HTTP
 * 410 costs one relist (after the reflector's backoff delay).  A broken
 * stream (undecodable bytes) ends the watch as REFL_RETRY.  Every LIST and
 * WATCH carries the source's labelSelector, so objects outside it are
 * never cached.
 *
 * Callbacks: on_change for every add, update and delete of a cached
 * object (a relist reports updates only for objects whose cached text
 * changed, and deletes for vanished keys); on_synced once per kind, after
 * its first complete list (the cache is then marked synced).  Callbacks
 * must not free the informer; they may read the caches.
 */
#ifndef INFORMER_H
#define INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kapi.h"
#include "supervisor/cache.h"

struct inf;
struct stats;

/* One watched kind.  Everything is copied by inf_new() (res strings
 * included). */
struct inf_kind {
	const char *name;     /* for logs and metrics, e.g. "configmaps" */
	struct kapi_res res;  /* the resource */
	const char *selector; /* labelSelector, NULL or "" for none */
	const char *ns;       /* one namespace, NULL for all */
};

enum inf_change {
	INF_ADD,
	INF_UPDATE,
	INF_DELETE,
};

/* Where the change being reported comes from (inf_origin()). */
enum inf_origin {
	INF_LIVE,   /* a watch event */
	INF_LIST,   /* a kind's first complete list (every object: adds) */
	INF_RELIST, /* a later list: what changed while not watching */
};

/* A controller owner; all NULL when the object has none.  Borrowed for
 * the duration of a callback. */
struct inf_owner {
	const char *kind;
	const char *name;
	const char *uid;
};

/* Change of object `key` of kind number `kind`.  old_owner is the
 * controller owner before (update, delete; all NULL for an add),
 * new_owner after (add, update; all NULL for a delete). */
typedef void inf_change_fn(void *arg, size_t kind, enum inf_change change,
        const char *key, const struct inf_owner *old_owner,
        const struct inf_owner *new_owner);
/* The first complete list of kind number `kind` is in its cache. */
typedef void inf_synced_fn(void *arg, size_t kind);
/* Monotonic milliseconds. */
typedef int64_t inf_clock_fn(void *arg);

struct inf_conf {
	inf_change_fn *on_change; /* may be NULL */
	inf_synced_fn *on_synced; /* may be NULL */
	void *arg;
	inf_clock_fn *clock; /* NULL: timefmt_now_ms_mono() */
	void *clock_arg;
	uint64_t seed;          /* reflector jitter seed (kind i: seed + i) */
	size_t max_event_bytes; /* watch decoder bound; 0: default */
	struct stats *stats;    /* API answers counted here; may be NULL */
};

/* Counters of one kind (metrics, tests). */
struct inf_stats {
	uint64_t lists;          /* list attempts (first pages) */
	uint64_t list_requests;  /* LIST requests sent, pages included */
	uint64_t relists;        /* list attempts after the first sync */
	uint64_t watches;        /* WATCH requests sent */
	uint64_t watch_restarts; /* watches resumed from an RV, no list */
	uint64_t watch_errors;   /* watches ended other than cleanly */
	uint64_t events;         /* watch events applied (bookmarks too) */
	uint64_t watch_bytes;    /* bytes received on watch streams */
	uint64_t objects;        /* objects in the cache now */
	uint64_t bytes;          /* bytes held by the cache now */
	bool synced;
	int64_t age_ms;   /* inf_age_ms() */
	uint64_t failing; /* failed requests in the current streak, 0: none */
};

/*
 * A new informer over m (borrowed; must outlive the informer) for the n
 * kinds (copied).  conf is copied.  Nothing is sent before the first
 * inf_tick().  Returns NULL (with a warning logged) when a selector does
 * not parse or a kind lacks a name or plural.  Caller frees with
 * inf_free().
 */
struct inf *inf_new(struct kapi_multi *m, const struct inf_kind *kinds,
        size_t n, const struct inf_conf *conf);

/* inf_new() where kind i is not watched when off[i] (off may be NULL:
 * none is): a resource the API does not serve (an optional CRD that is
 * not installed) gets its own cache, synced and empty from the start and
 * always fresh, and no request is ever sent for it. */
struct inf *inf_new_off(struct kapi_multi *m, const struct inf_kind *kinds,
        const bool *off, size_t n, const struct inf_conf *conf);

/* Cancels the informer's requests and frees it with its caches.  NULL is
 * fine. */
void inf_free(struct inf *in);

/* Starts the requests that are due at now_ms.  Call once per loop
 * iteration, after kapi_multi_perform(). */
void inf_tick(struct inf *in, int64_t now_ms);

/* The earliest time (monotonic ms, >= now_ms) at which inf_tick() has
 * something to do, or INT64_MAX when it waits only for requests in flight.
 * Returns now_ms when something is due already. */
int64_t inf_next_deadline(const struct inf *in, int64_t now_ms);

/* Number of kinds, and the index of the kind called name (-1: none). */
size_t inf_nkinds(const struct inf *in);
int inf_kind_index(const struct inf *in, const char *name);
/* The kind as given to inf_new() (copies owned by the informer). */
const struct inf_kind *inf_kind(const struct inf *in, size_t kind);

/* The cache of kind number `kind` (borrowed; read it, never change it), or
 * NULL when kind is out of range. */
struct cache *inf_cache(const struct inf *in, size_t kind);

/* Number of sources (distinct reflectors and caches), and the source
 * number of kind (SIZE_MAX when out of range): kinds with the same source
 * share the same cache. */
size_t inf_nsources(const struct inf *in);
size_t inf_source(const struct inf *in, size_t kind);

/* The selector kind filters its source's cache with (borrowed), or NULL
 * when the cache holds exactly what the kind selects. */
const char *inf_filter(const struct inf *in, size_t kind);

/* cache_by_owner() on kind's cache, through its filter. */
int inf_by_owner(const struct inf *in, size_t kind, const char *uid,
        cache_each_fn *fn, void *arg);

/* Whether kind has completed a list; whether every kind has. */
bool inf_synced(const struct inf *in, size_t kind);
bool inf_all_synced(const struct inf *in);
/* Inside an on_change callback: where that change comes from (INF_LIVE
 * outside callbacks).  The supervisor queues INF_LIST keys in the low
 * lane (queue.h, docs-perfqueue.md). */
enum inf_origin inf_origin(const struct inf *in);

/* Whether kind's cache follows the server now: it is synced and its watch
 * has been open for INF_FRESH_MS at least (so the events a re-watch
 * replays are in).  False while it lists, relists, or waits (backoff) to
 * re-watch: objects created meanwhile may be missing.  Uses the
 * informer's clock (struct inf_conf). */
#define INF_FRESH_MS 1000
bool inf_fresh(const struct inf *in, size_t kind);

/*
 * The age of kind's cache: the time since it was last known to hold what
 * the server holds.  It is known so when a list completes, when a watch
 * event or bookmark arrives, while a watch is open once it has delivered
 * an event or stayed open INF_FRESH_MS (age 0 then: an idle open watch is
 * not stale), and up to the moment an established watch (HTTP 2xx) ends.
 * Before the first list it counts from the informer's creation.  A
 * failing list or watch lets it grow.  Failures also make streaks: the
 * first failed list or watch after a success logs one warning naming the
 * resource and the error, the next success one info line "recovered
 * after N failure(s) / T s"; 410 and TooLarge answers are not failures.
 */
int64_t inf_age_ms(const struct inf *in, size_t kind);

/* Fills *out with the counters of kind (zeroed when out of range). */
void inf_stats(const struct inf *in, size_t kind, struct inf_stats *out);

#endif
