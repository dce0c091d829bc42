/*
 * lease.h: Lease-based leader election (kube-api.md E.6, checklist 65 and
 * 66) as a pure state machine.  Prefix lease_.
 *
 * The module does no I/O.  The supervisor's event loop asks lease_next()
 * what to do, performs the HTTP request itself (GET, POST or PUT of the
 * coordination.k8s.io/v1 Lease cfg->name in cfg->ns) and hands the answer
 * back with lease_on_get() or lease_on_write().  At most one request is in
 * flight at a time; while one is, lease_next() answers LEASE_ACT_NONE.
 *
 * Two clocks are injected: now_ms is monotonic milliseconds
 * (timefmt_now_ms_mono()), used for every decision (observation times,
 * deadlines, retries); now_us is wall-clock microseconds
 * (timefmt_now_us_real()), used only to stamp acquireTime and renewTime
 * (MicroTime, "2006-01-02T15:04:05.000000Z").  now_ms must never decrease
 * from one call to the next.
 *
 * Behaviour, as client-go's LeaderElector:
 *   - One attempt: fast path (when the last observed holder is me and that
 *     observation is younger than its leaseDurationSeconds: PUT renewTime=now
 *     from the cached object, acquireTime and leaseTransitions unchanged);
 *     else, or when the fast path fails, GET; 404 -> POST a new Lease; a
 *     record held by another (non-empty holder, observed less than its
 *     leaseDurationSeconds ago) -> failure; else PUT holder=me, renewTime=now
 *     (acquireTime and leaseTransitions kept when the record was mine, else
 *     acquireTime=now and leaseTransitions+1) with the fetched
 *     resourceVersion.
 *   - Expiry is judged by local observation time: observedTime is the local
 *     now_ms when the record (holderIdentity, leaseDurationSeconds,
 *     acquireTime, renewTime, leaseTransitions, compared byte-wise) was last
 *     seen to change; the Lease's own timestamps are never compared with the
 *     local clock.
 *   - Candidate: a failed attempt is retried after a jittered retry period,
 *     uniformly in [RP, 2.2 RP), or when the observation of a record held
 *     by another expires if that is sooner (client-go waits for its next
 *     jittered tick).  Leader: each renewal is sent RP after the
 *     previous one was sent (no jitter), or as soon as its answer came
 *     when that took longer (client-go polls its renewals on a timer
 *     that does not wait for the answer); a failed renewal is retried
 *     the same way.  So the leader of a slow server (a request taking
 *     up to about half the renew deadline) keeps its lease.
 *   - Fencing: leadership lasts until renew_deadline_ms after the *send*
 *     time of the last successful write (so never longer than the server
 *     could have seen it; client-go counts its deadline from the start of
 *     a renewal round, RP after the last success was answered, which is
 *     later).  When that passes without a new success, this
 *     process is no longer leader, and stays so; a later success starts a
 *     new leadership with a new epoch.  Every other candidate waits at
 *     least lease_duration_ms > renew_deadline_ms after it observed that
 *     write, so two leaderships never overlap (with sane clock rates).
 *   - The first renewal comes RP after the acquiring write was sent
 *     (client-go renews at once; that extra request buys nothing).
 *
 * Ownership: struct lease is opaque; lease_new() copies the configuration's
 * strings.  Objects passed to lease_on_get()/lease_on_write() are borrowed
 * (copied when kept).  Bodies in struct lease_action are owned by the
 * caller, who frees them with lease_action_fini().
 */
#ifndef LEASE_H
#define LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define LEASE_DEFAULT_NAME        "sympozium-controller-leader"
#define LEASE_DEFAULT_DURATION_MS 15000
#define LEASE_DEFAULT_RENEW_MS    10000
#define LEASE_DEFAULT_RETRY_MS    2000
#define LEASE_JITTER              1.2 /* retry in [RP, (1 + 1.2) RP) */

/* A uniform number in [0, 1) (values outside are clamped). */
typedef double lease_rand_fn(void *arg);

struct lease_config {
	const char *identity;      /* holderIdentity, e.g. "<host>_<uuid>" */
	const char *ns;            /* leader-election namespace */
	const char *name;          /* Lease name (LEASE_DEFAULT_NAME) */
	int64_t lease_duration_ms; /* >= 1000; written in whole seconds */
	int64_t renew_deadline_ms;
	int64_t retry_period_ms;
	bool release_on_cancel; /* lease_release() writes the empty holder */
	lease_rand_fn *rand;    /* NULL: backoff_rand01() seeded by seed */
	void *rand_arg;         /* borrowed; passed to rand */
	uint64_t seed;          /* PRNG seed when rand is NULL */
};

struct lease;

enum lease_act {
	LEASE_ACT_NONE = 0, /* nothing to send; call again at at_ms */
	LEASE_ACT_GET,      /* GET the Lease */
	LEASE_ACT_CREATE,   /* POST body to the namespace's leases */
	LEASE_ACT_UPDATE,   /* PUT body (resourceVersion set) to the Lease */
	LEASE_ACT_DONE,     /* released or stopped: nothing more, ever */
};

struct lease_action {
	enum lease_act act;
	/* NONE: the monotonic time to call lease_next() again (the next
	 * attempt, or the moment leadership would lapse, whichever comes
	 * first); INT64_MAX (during a release: its deadline) while a request
	 * is in flight and nothing else is due.  Other actions: now_ms. */
	int64_t at_ms;
	/* GET/CREATE/UPDATE: the request's own timeout (the renew deadline,
	 * as kube-controller-manager gives its leader-election client), so
	 * one hung request cannot hold the elector past its deadline. */
	int64_t timeout_ms;
	/* CREATE/UPDATE: the Lease as compact JSON; caller frees with
	 * lease_action_fini().  NULL otherwise. */
	char *body;
};

/* Outcome of one request, as the caller classified the HTTP answer. */
enum lease_result {
	LEASE_RES_OK = 0,   /* 2xx with the Lease object */
	LEASE_RES_NOTFOUND, /* 404 (meaningful for GET) */
	LEASE_RES_CONFLICT, /* 409 (stale resourceVersion, AlreadyExists) */
	LEASE_RES_ERROR,    /* anything else: network, timeout, 5xx, 422 */
};

/* Checks the configuration: identity, ns and name non-empty, all durations
 * > 0, lease_duration_ms >= 1000, and lease_duration > renew_deadline >
 * 1.2 * retry_period.  Returns 0, or -1 with a one-line message in err. */
int lease_config_check(
        const struct lease_config *cfg, char *err, size_t errlen);

/* A new elector (not leader, epoch 0, first attempt due at once), or NULL
 * with a message in err when lease_config_check() fails.  cfg is copied.
 * Free with lease_free(). */
struct lease *lease_new(
        const struct lease_config *cfg, char *err, size_t errlen);

/* Frees l; NULL is allowed. */
void lease_free(struct lease *l);

/* What to do now.  Fills *out (its previous content is overwritten, not
 * freed).  A CREATE or UPDATE marks the request as in flight and records
 * now_ms as its send time; its answer must come back through
 * lease_on_write(), a GET's through lease_on_get(). */
void lease_next(struct lease *l, int64_t now_ms, int64_t now_us,
        struct lease_action *out);

/* Frees act->body and resets *act to LEASE_ACT_NONE. */
void lease_action_fini(struct lease_action *act);

/* The answer to the GET in flight.  obj (borrowed, may be NULL) is the
 * Lease when r is LEASE_RES_OK; an OK answer without a usable object (not
 * a JSON object, no metadata.resourceVersion) counts as LEASE_RES_ERROR.
 * Returns 0, or -1 (and changes nothing) when no GET was in flight. */
int lease_on_get(struct lease *l, enum lease_result r, json_object *obj,
        int64_t now_ms);

/* The answer to the CREATE or UPDATE in flight; obj as for lease_on_get().
 * Returns 0, or -1 (and changes nothing) when no write was in flight. */
int lease_on_write(struct lease *l, enum lease_result r, json_object *obj,
        int64_t now_ms);

/* Stops campaigning for good and, when cfg->release_on_cancel and the last
 * observed holder is me, starts the release: PUT {holderIdentity "",
 * leaseDurationSeconds 1, acquireTime = renewTime = now, leaseTransitions
 * unchanged}; a 409 re-reads the Lease and retries while it is still mine,
 * an error retries after RP, all bounded by renew_deadline_ms from this
 * call.  Leadership ends at once (lease_is_leader() is false from here
 * on).  Fills *out like lease_next(); continue with lease_next() until it
 * answers LEASE_ACT_DONE.  A request already in flight is awaited first. */
void lease_release(struct lease *l, int64_t now_ms, int64_t now_us,
        struct lease_action *out);

/* The Lease as a watch event shows it (obj NULL: deleted), for a
 * candidate between attempts: judged as the answer of an attempt's GET
 * would be (a changed record is observed now; free, or ours: write at
 * once; deleted: create; held by another: the next attempt at the
 * observation's expiry or after the jittered retry period).  So a release
 * is taken within one round trip, and a killed holder is replaced within
 * the lease duration of its last renewal, as the watch saw it.  Ignored
 * (false) for a leader, while releasing, or with a request in flight (its
 * answer will do); true when it was taken (call lease_next() now). */
bool lease_on_watch(struct lease *l, json_object *obj, int64_t now_ms);

/* True while this process leads: it acquired or renewed the Lease and the
 * last successful write was sent less than renew_deadline_ms before now_ms.
 * Once false it stays false until a new leadership (new epoch) begins. */
bool lease_is_leader(struct lease *l, int64_t now_ms);

/* The monotonic time at which the current leadership lapses unless renewed
 * (last successful send + renew_deadline_ms), or -1 when not leader.
 * Writes that cannot complete before it must not be sent. */
int64_t lease_valid_until(struct lease *l, int64_t now_ms);

/* Number of leaderships this process has begun: 0 before the first, then
 * 1, 2, ...  Work is tagged with it; results of an older epoch are
 * dropped. */
uint32_t lease_epoch(const struct lease *l);

/* holderIdentity of the last record read or written ("" when empty or
 * none seen yet).  Borrowed; valid until the next call on l. */
const char *lease_holder(const struct lease *l);

/* Monotonic time when the current leadership began, or -1 when not
 * leader (as last computed; call lease_is_leader() first to refresh). */
int64_t lease_leader_since(const struct lease *l);

/* Renewals that took the slow path: a PUT, after a GET, of a Lease this
 * elector already holds (client-go's leader_election_slowpath_total). */
uint64_t lease_slowpath(const struct lease *l);

/* The record last observed (read or written) and the local time it was
 * seen to change (-1 before the first); for tests and /debug output. */
int64_t lease_observed_time(const struct lease *l);

#endif
