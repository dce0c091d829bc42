/*
 * reflector.h: the ListAndWatch state machine of one kind (spec
 * kube-api.md E.1, B.4, B.5).  Prefix refl_.
 *
 * Pure logic with injected time (now_ms: monotonic milliseconds) and
 * randomness: the supervisor asks refl_next() what to do, performs the
 * request itself, and reports the outcome with refl_list_page(),
 * refl_watch_started(), refl_watch_event() and refl_watch_end().
 *
 * Policy (client-go's reflector and pager, with the choices below):
 *  - First list: resourceVersion "0", limit 500, following continue
 *    tokens; all pages share the first page's list RV.
 *  - Relist (after a 410 or an error that needs one): resourceVersion =
 *    the last RV seen (list, event or bookmark), not-older-than.  If the
 *    first list came back paginated ("paged" resource) the relist keeps
 *    limit 500 and sends resourceVersionMatch=NotOlderThan, so the server
 *    never answers 410 for an exact RV (client-go would, then list again:
 *    we save that LIST); otherwise it sends no limit, as client-go does.
 *  - A list that fails with 410 Expired or TooLarge (the RV is newer
 *    than the server's: a restore from a backup; told by the Status's
 *    causes, kapi_status_rv_too_large()) is retried at once with
 *    resourceVersion "" (consistent read), same page size; if that fails
 *    too, the list is retried after a backoff delay.  A watch answered
 *    TooLarge relists after one backoff delay straight with
 *    resourceVersion "" (client-go lists at the RV first, which costs the
 *    server's wait of up to 3 s and a second TooLarge).
 *  - A continue page that fails with 410: the list is redone at once in
 *    full, without limit, with the same resourceVersion (client-go's
 *    pager FullListIfExpired).
 *  - Watch: from the list's RV, allowWatchBookmarks=true, timeoutSeconds
 *    a random integer in [300, 600].  A clean end re-watches at once from
 *    the last RV seen, with no list.  ERROR 410 / HTTP 410 relists after
 *    one backoff delay (client-go's outer loop waits a delay whenever
 *    ListAndWatch returns; with a rested backoff that is 0.8 to 1.6 s).
 *    REFL_RETRY (429, 5xx, a broken stream) backs off, then re-watches
 *    from the last RV (a stale RV then earns a 410 and a relist).  A
 *    "very short watch" (clean end within 1 s of the start with zero
 *    events: what a server shutting down answers) backs off, then
 *    relists from the last RV, as client-go does.  REFL_LOST (the connection
 * failed or broke: the server may have restarted) backs off, then relists from
 * the last RV (client-go re-watches): a server restored from a backup holds
 * objects below that RV, which a watch from it never reports, and a watch from
 * an RV the server has not reached yet waits silently (kube-api.md B.5); the
 * list finds them, or is answered TooLarge.  For the same reason a watch that
 * ends cleanly after REFL_WATCH_MIN_S or more without a single event (not even
 * the bookmark real servers send about 2 s before the deadline) relists from
 * the last RV instead of re-watching.  REFL_ERROR (any other failure, e.g.
 *    403) backs off, then relists (client-go: "watch ended with error").
 *  - A failed list (not 410/TooLarge) backs off, then retries the list.
 *  - Backoff: common/backoff.h with the reflector's values (0.8 s doubling
 *    to 30 s, jitter 1.0, reset after 2 min without backing off).
 *  - RVs are opaque strings: copied and passed back, never parsed or
 *    ordered.  A list answer without a resourceVersion is a list failure.
 */
#ifndef REFLECTOR_H
#define REFLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "common/backoff.h"

#define REFL_PAGE_SIZE      500
#define REFL_WATCH_MIN_S    300
#define REFL_WATCH_MAX_S    600
#define REFL_SHORT_WATCH_MS 1000

struct refl;

/* What the supervisor should do now. */
enum refl_act {
	REFL_NONE,  /* nothing before `until_ms` */
	REFL_LIST,  /* send one LIST page request */
	REFL_WATCH, /* open a watch */
};

/* Strings are borrowed from the reflector and valid until the next call
 * on it. */
struct refl_action {
	enum refl_act type;
	/* REFL_NONE: call refl_next() again at this time; INT64_MAX when
	 * waiting for the outcome of a request in flight. */
	int64_t until_ms;
	/* LIST, WATCH: resourceVersion; "" means omit the parameter. */
	const char *rv;
	/* LIST: resourceVersionMatch, or NULL to omit it. */
	const char *rv_match;
	/* LIST: limit, 0 to omit it. */
	int limit;
	/* LIST: continue token, or NULL for the first page.  When set, send
	 * no resourceVersion and no resourceVersionMatch (rv is ""). */
	const char *cont;
	/* WATCH: timeoutSeconds, in [REFL_WATCH_MIN_S, REFL_WATCH_MAX_S].
	 * Always send allowWatchBookmarks=true. */
	int timeout_s;
};

/* Outcome of a request. */
enum refl_result {
	REFL_OK,        /* success (watch: clean end of stream) */
	REFL_EXPIRED,   /* 410 Gone / Expired (HTTP or ERROR event) */
	REFL_TOO_LARGE, /* RV newer than the server's (504 Timeout with
	                 * cause ResourceVersionTooLarge) */
	REFL_RETRY,     /* 429, 5xx, a broken stream */
	REFL_LOST,      /* no answer: connection refused, reset, closed */
	REFL_ERROR,     /* anything else */
};

/* What to do with the items gathered from the list pages so far. */
enum refl_list_step {
	REFL_LIST_MORE,    /* keep them; another page follows */
	REFL_LIST_DONE,    /* the list is complete: cache_replace() them
	                    * all with refl_list_rv() */
	REFL_LIST_RESTART, /* drop them: the list starts again */
};

/* Counters (for metrics and tests). */
struct refl_stats {
	uint64_t lists;          /* list attempts started (first pages) */
	uint64_t list_requests;  /* LIST requests sent, pages included */
	uint64_t relists;        /* list attempts after the first sync */
	uint64_t watches;        /* WATCH requests sent */
	uint64_t watch_restarts; /* watches resumed from an RV, no list */
	uint64_t backoffs;       /* delays taken */
	uint64_t syncs;          /* lists completed */
};

/* Random source: a uniform number in [0, 1). */
typedef double refl_rand_fn(void *arg);

/* A new reflector in state idle: the first refl_next() lists.  seed feeds
 * the built-in generator (backoff_rand01()).  Caller frees with
 * refl_free(). */
struct refl *refl_new(uint64_t seed);

/* Frees r.  NULL is fine. */
void refl_free(struct refl *r);

/* Replaces the random source (tests); fn NULL restores the built-in. */
void refl_set_rand(struct refl *r, refl_rand_fn *fn, void *arg);

/* The next action at now_ms; see struct refl_action.  LIST and WATCH are
 * handed out once: the reflector then waits for their outcome. */
void refl_next(struct refl *r, int64_t now_ms, struct refl_action *act);

/*
 * Outcome of the LIST page request refl_next() asked for.  On REFL_OK,
 * cont is the answer's metadata.continue (NULL or "" when done) and
 * list_rv its metadata.resourceVersion (only the first page's counts).
 * Returns what to do with the pages' items.  Reporting an outcome when no
 * LIST is in flight is ignored (returns REFL_LIST_RESTART).
 */
enum refl_list_step refl_list_page(struct refl *r, enum refl_result res,
        const char *cont, const char *list_rv, int64_t now_ms);

/* The watch asked for is established (HTTP 200 received). */
void refl_watch_started(struct refl *r, int64_t now_ms);

/* One event of the watch (ADDED, MODIFIED, DELETED or BOOKMARK) with its
 * metadata.resourceVersion (NULL or "" keeps the last one). */
void refl_watch_event(struct refl *r, const char *rv);

/* The watch ended: REFL_OK for a clean end of stream, otherwise why it
 * failed to start or stopped (an ERROR event's code maps as above). */
void refl_watch_end(struct refl *r, enum refl_result res, int64_t now_ms);

/* The last resourceVersion seen (list, event, bookmark), "" before the
 * first list.  Borrowed. */
const char *refl_rv(const struct refl *r);

/* The RV of the list completed by REFL_LIST_DONE.  Borrowed. */
const char *refl_list_rv(const struct refl *r);

/* True once a list has completed (the cache may be marked synced). */
bool refl_synced(const struct refl *r);

/* True while a watch is open (asked for and not ended); *since_ms (may be
 * NULL) is then the time given to refl_watch_started(). */
bool refl_watching(const struct refl *r, int64_t *since_ms);

/* Counters.  Borrowed. */
const struct refl_stats *refl_stats(const struct refl *r);

#endif
