/*
 * writer.h: executes the writes of worker RESULTs (design.md "Data flow"
 * 4-6).  Prefix wr_.
 *
 * A submitted result is a list of typed writes (struct ipc_write, decoded
 * once where the RESULT arrived: ipc_result_decode()); the writer never
 * parses them again.  They run in order over the shared struct
 * kapi_multi, one request at a time, stopping at the first failure.
 * Results of different keys run concurrently; results of one key run one
 * after the other, in the order submitted.
 *
 * Per write:
 *  - fence: the fence function is called before EVERY request; false stops
 *    the result at once, nothing more is sent, outcome WR_FENCED.
 *  - no-op suppression: a write whose result would equal the cached object
 *    (the owner's lookup function reads the caches) is not sent and counts
 *    as skipped; see wr_noop() for the exact rules.
 *  - tolerate: a failure listed in the write's "tolerate" (AlreadyExists,
 *    NotFound, Conflict) counts as success.
 *  - events (op "event") are best effort: a failed event is logged and the
 *    result goes on.  With the writer's own correlator (wr_set_correlator():
 *    supervisor/events.h, at the real time) each event goes out as it
 *    decides: a POST of the stamped Event, a PATCH (strategic merge) of
 *    the existing Event's count, lastTimestamp and message (a PATCH that
 *    finds the Event gone POSTs it instead, as client-go does), or nothing
 *    (rate-limited).
 *
 * Ops: create = POST, update = PUT, update_status = PUT .../status, patch
 * = PATCH (merge, json, strategic), apply = server-side apply PATCH with
 * fieldManager "sympozium" and force, delete = DELETE with
 * propagationPolicy, event = POST of the event object.  The name of
 * update, update_status and apply defaults to the object's metadata.name,
 * the namespace of every op to the object's metadata.namespace.
 *
 * The supervisor's own Events are a call, wr_event(): one event write on
 * the object, through the same fence, correlator and stats.
 *
 * No threads, no blocking, no time but the real clock that stamps Events:
 * wr_submit() and wr_event() only queue; progress
 * (fence checks, no-op checks, sending the next request, completion
 * callbacks) happens in wr_run(), which the owner's loop calls after each
 * kapi_multi_perform(); wr_has_ready() tells the loop not to sleep.
 */
#ifndef WRITER_H
#define WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/kapi.h"
#include "common/kapi_err.h"
#include "ipc/ipc.h"
#include "supervisor/events.h"
#include "supervisor/shadow.h"

#define WR_FIELD_MANAGER "sympozium"

struct wr;
struct stats;

enum wr_outcome {
	WR_OK,     /* every write succeeded, was tolerated or skipped */
	WR_FENCED, /* the fence said no before a request: stopped */
	WR_FAILED, /* a write failed (rc, message): stopped there */
};

/* The outcome of one result, borrowed for the callback. */
struct wr_report {
	enum wr_outcome outcome;
	const char *key;       /* the result's key */
	enum kapi_rc rc;       /* WR_FAILED: the failure, else KAPI_OK */
	long code;             /* WR_FAILED: HTTP status (0: none) */
	const char *message;   /* WR_FAILED: why; "" otherwise */
	size_t failed;         /* WR_FAILED, WR_FENCED: index of the write */
	size_t sent;           /* requests sent (events included) */
	size_t skipped;        /* writes not sent: no-op */
	size_t tolerated;      /* failures counted as success */
	size_t event_errors;   /* failed events (logged only) */
	size_t events_dropped; /* events the event function dropped */
	size_t shadowed;       /* shadow mode: writes recorded, not sent */
};

/*
 * Cached state of res/ns/name (ns "" for cluster-scoped): returns 1 and
 * sets *json to the cached compact JSON text (borrowed; used before the
 * writer returns), 0 when the kind is cached and synced and the object is
 * absent, -1 when the cache cannot tell (kind not cached, not synced).
 */
typedef int wr_lookup_fn(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json);
/* True while this supervisor may write (it leads, within its renew
 * deadline). */
typedef bool wr_fence_fn(void *arg);
/* A submitted result is finished (not called for wr_event()'s). */
typedef void wr_done_fn(
        void *arg, uint64_t token, const struct wr_report *rep);

struct wr_conf {
	wr_lookup_fn *lookup; /* NULL: never skip */
	wr_fence_fn *fence;   /* NULL: always allowed */
	wr_done_fn *on_done;  /* may be NULL */
	void *arg;            /* given to the three */
	size_t max_inflight;  /* requests in flight at most; 0: no bound */
};

/* A writer over m (borrowed; must outlive it).  conf is copied.  Caller
 * frees with wr_free(). */
struct wr *wr_new(struct kapi_multi *m, const struct wr_conf *conf);

/* Gives the writer its own Event correlator, ev_new(conf) (conf may be
 * NULL): from then on every event write is stamped and correlated
 * (events.h).  Without one (the default) event objects are POSTed as they
 * are. */
void wr_set_correlator(struct wr *w, const struct ev_conf *conf);
/* Counts every API answer in st (stats.h; borrowed, NULL: none). */
void wr_set_stats(struct wr *w, struct stats *st);
/* Shadow mode (--shadow) when sh is non-NULL (borrowed): nothing is sent;
 * each write that is not a no-op is recorded in sh (one record per
 * object, shadow.h), counted, and done as if it had succeeded; a no-op
 * write clears its object's record. */
void wr_set_shadow(struct wr *w, struct shadow *sh);

/* Cancels requests in flight (a request already sent may still take
 * effect) and frees everything without callbacks.  NULL is fine. */
void wr_free(struct wr *w);

/* A RESULT's writes, decoded (ipc_result_decode()). */
struct wr_batch {
	const char *key;             /* the result's key (copied) */
	const struct ipc_write *ops; /* n typed writes (copied) */
	size_t n;
	json_object *keep;      /* what ops borrow from (referenced while the
	                           writes run): the RESULT's "writes" array */
	const char *controller; /* its controller (copied; NULL: "") */
};

/*
 * Queues the writes of b under b->key with the caller's token (given back
 * to on_done); the message they came in may be freed afterwards.  Never
 * calls back.  Returns 0, or -1 when b has no key.
 */
int wr_submit(struct wr *w, const struct wr_batch *b, uint64_t token);

/* Queues the supervisor's own Event of type, reason and message about
 * involved (borrowed: its apiVersion, kind, namespace, name, uid and
 * resourceVersion are copied, ev_event_new()), under its own ordering key
 * "event:<key>" so it waits for no write of the object.  Best effort, as
 * every event; no on_done. */
void wr_event(struct wr *w, json_object *involved, const char *type,
        const char *reason, const char *message);

/* Advances every result that can move: sends next requests, completes
 * finished results (on_done).  Returns the number of results not finished
 * (queued, waiting for a request, or ready). */
size_t wr_run(struct wr *w);

/* True when wr_run() has work to do now (the loop must not sleep). */
bool wr_has_ready(const struct wr *w);

/* Results not finished. */
size_t wr_pending(const struct wr *w);
/* Requests sent and not yet answered (at most conf.max_inflight). */
size_t wr_inflight(const struct wr *w);

/* Fencing at the last moment: cancels every request submitted but not
 * yet answered (libcurl may not have sent it: a process stopped right
 * after submitting sends it when resumed) and finishes its job as
 * WR_FENCED through on_done.  Called when leadership is found lost before
 * the transfers run again.  Returns how many were cancelled. */
size_t wr_fence_inflight(struct wr *w);

/* Counters since creation. */
struct wr_stats {
	uint64_t results; /* finished results */
	uint64_t sent;    /* requests sent */
	uint64_t skipped; /* no-op writes not sent */
	uint64_t tolerated;
	uint64_t failed; /* results ended WR_FAILED */
	uint64_t fenced; /* results ended WR_FENCED */
	uint64_t event_errors;
	uint64_t events_dropped;
	uint64_t shadowed; /* shadow mode: writes recorded, not sent */
};
void wr_stats(const struct wr *w, struct wr_stats *out);

/* ---- pure helpers (exposed for tests) ---- */

/*
 * Whether a failure rc is listed in tolerate (IPC_TOL_* bits):
 * KAPI_EEXISTS ~ AlreadyExists, KAPI_ENOTFOUND ~ NotFound, KAPI_ECONFLICT
 * ~ Conflict.  KAPI_OK is always "tolerated".
 */
bool wr_tolerated(unsigned tolerate, enum kapi_rc rc);

/*
 * Whether write wr would leave the cached object unchanged, so it need not
 * be sent.  cached is the cached object (borrowed, NULL: absent), known
 * tells whether the cache can tell (false: never a no-op).  Rules:
 *  - update: desired and cached equal once both drop metadata
 *    resourceVersion, managedFields, uid, creationTimestamp, generation,
 *    selfLink, deletionTimestamp, deletionGracePeriodSeconds, and the
 *    top-level apiVersion, kind and status (a PUT of the main resource
 *    does not change status: our kinds have the status subresource);
 *  - update_status: desired "status" equals cached "status" (absent =
 *    null);
 *  - create: cached exists, AlreadyExists is tolerated and the objects are
 *    equal as for update (then the server would change nothing);
 *  - patch (merge; strategic when the patch holds no array and no "$"
 *    directive, where it behaves as merge): cached exists and the patched
 *    copy equals cached as for update, status included;
 *  - delete: the object is absent from a synced cache and NotFound is
 *    tolerated;
 *  - apply, json patch, event: never (apply: managedFields are stripped
 *    from the cache, so fields the apply would remove cannot be known).
 */
bool wr_noop(const struct ipc_write *wr, json_object *cached, bool known);

#endif
