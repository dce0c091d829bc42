/*
 * stats.h: every figure the supervisor keeps about itself and its workers
 * (issue 6), in one place, so the health socket (health.c) and the
 * Prometheus /metrics endpoint read the same numbers.  Prefix stats_.
 *
 * Two kinds of figures:
 *   - counters and histograms, fed by small hooks where things happen
 *     (stats_reconcile() in settle.c, stats_api() in the request
 *     callbacks of informer.c, writer.c, leader.c and views.c, ...);
 *   - gauges copied from the modules that own them (worker slots from
 *     workers.c, queue depths from queue.c, caches from informer.c, the
 *     Lease from leader.c) by ops_stats_refresh() (ops.c) just before a
 *     reader looks.
 * A reader (health socket, /metrics) calls ops_stats_refresh() and then
 * walks the plain arrays below: every array has its length beside it and
 * every field is a plain value, so a renderer needs no other module.
 *
 * Every stats_* hook accepts st == NULL and does nothing, so modules and
 * their unit tests work without a stats object.  One thread; no locks.
 * Times are monotonic milliseconds (timefmt_now_ms_mono()) unless the name
 * says _unix_ms.
 */
#ifndef STATS_H
#define STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/kapi.h"
#include "supervisor/fault.h"
#include "supervisor/queue.h"

/* controller-runtime's bucket upper bounds (seconds) for
 * controller_runtime_reconcile_time_seconds; a last, implicit +Inf bucket
 * follows. */
#define STATS_NBUCKETS 40
extern const double stats_buckets[STATS_NBUCKETS];

/* Latest reconcile durations kept for exact percentiles. */
#define STATS_RING 256

#define STATS_NAME_MAX  64  /* controller and kind names */
#define STATS_KEY_MAX   256 /* keys shown (longer ones are cut) */
#define STATS_ERR_MAX   256 /* last error / exit cause text */
#define STATS_API_SLOTS 64  /* distinct (verb, code) pairs counted */

/* The `result` label of controller_runtime_reconcile_total. */
enum stats_result {
	STATS_SUCCESS,       /* "success" */
	STATS_ERROR,         /* "error" (terminal and lost keys too) */
	STATS_REQUEUE,       /* "requeue" */
	STATS_REQUEUE_AFTER, /* "requeue_after" */
	STATS_NRESULTS,
};

/* A worker slot's state as shown (wk_state plus "standby"). */
enum stats_wstate {
	STATS_W_STARTING,
	STATS_W_READY,
	STATS_W_BUSY,
	STATS_W_RESTARTING,
	STATS_W_CRASHLOOP,
	STATS_W_STANDBY, /* ready, but this supervisor is not leading */
	STATS_W_STOPPING,
	STATS_W_STOPPED,
	STATS_W_FAILED, /* permanent exit: not restarted */
	STATS_W_NSTATES,
};

/* A latency histogram: counts[i] reconciles took <= stats_buckets[i] and
 * more than the bucket before (not cumulative; counts[STATS_NBUCKETS] is
 * the +Inf bucket), plus a ring of the latest durations. */
struct stats_hist {
	uint64_t counts[STATS_NBUCKETS + 1];
	uint64_t count;
	double sum_s;
	int64_t ring_ms[STATS_RING];
	size_t ring_len; /* valid entries (<= STATS_RING) */
	size_t ring_pos; /* next slot written */
};

/* One worker slot. */
struct stats_worker {
	char controller[STATS_NAME_MAX];
	int index;
	/* copied by ops_stats_refresh() */
	pid_t pid; /* 0: no process */
	enum stats_wstate state;
	int64_t started_ms;            /* last spawn, -1 never */
	uint64_t restarts;             /* exits seen */
	char last_exit[STATS_ERR_MAX]; /* "exit 3", "signal SIGKILL"; "" */
	int64_t hb_age_ms;             /* since its last message, -1 none */
	char key[STATS_KEY_MAX];       /* in flight; "" none */
	int64_t key_since_ms;          /* -1 when no key */
	uint64_t lost;                 /* keys lost with the process */
	/* counted by hooks */
	uint64_t results[STATS_NRESULTS]; /* reconciles by result */
	char last_error[STATS_ERR_MAX];   /* last error message, "" none */
	int64_t last_error_ms;            /* -1 none */
	struct stats_hist latency;
};

/* Policy violations of one rule (sup_violation()). */
#define STATS_RULES_MAX 24
struct stats_rule {
	char rule[STATS_NAME_MAX]; /* "not-owned", ...; "" unused */
	uint64_t count;
};

/* One controller. */
struct stats_ctl {
	char name[STATS_NAME_MAX];
	/* copied by ops_stats_refresh() */
	size_t depth;  /* workqueue_depth */
	size_t parked; /* waiting for their time (requeue_after, backoff) */
	size_t queued_high; /* queued in the high lane (live changes) */
	size_t queued_low;  /* queued in the low lane (lists, resyncs) */
	size_t processing;
	uint64_t adds;    /* workqueue_adds_total */
	uint64_t retries; /* workqueue_retries_total */
	size_t quarantined;
	bool paused;
	enum fault_state fault;           /* ok, degraded, failed */
	char fault_reason[STATS_ERR_MAX]; /* "" when ok */
	int64_t fault_since_ms;           /* -1: ok since the start */
	uint64_t faults;              /* times Degraded (controller faults) */
	uint64_t failures;            /* times failed (permanent exits) */
	int workers;                  /* slots */
	struct queue_hist wait, work; /* workqueue_{queue,work}_duration */
	int64_t unfinished_ms;        /* summed age of keys in processing */
	int64_t longest_ms;           /* the oldest one's */
	/* counted by hooks (all its workers, lost keys included) */
	uint64_t results[STATS_NRESULTS];
	uint64_t terminal; /* errors not retried (IPC_V_TERMINAL) */
	uint64_t panics;   /* keys lost with their worker */
	struct stats_hist latency;
	/* policy violations, by rule (sympozium_policy_violations_total) */
	uint64_t violations;
	struct stats_rule rules[STATS_RULES_MAX];
};

/* One watched kind. */
struct stats_kind {
	char name[STATS_NAME_MAX];
	char controller[STATS_NAME_MAX];
	bool synced;
	uint64_t objects;
	uint64_t lists, relists, watches, watch_restarts, watch_errors, events;
	char resource[STATS_NAME_MAX];   /* plural, e.g. "agentruns" */
	char check[STATS_NAME_MAX + 16]; /* "informer-<resource>" */
	int64_t age_ms;                  /* the cache's age (inf_age_ms()) */
	uint64_t failing; /* failed requests in the current streak */
};

/* API requests by (verb, HTTP code); code 0: no answer (connection). */
struct stats_api {
	enum kapi_verb verb;
	long code;
	uint64_t count;
};

/* Writes shadow mode did not send, by (controller, verb, resource). */
#define STATS_SHADOW_SLOTS 256
struct stats_shadow {
	char controller[STATS_NAME_MAX];
	char verb[16];
	char resource[STATS_NAME_MAX + 16];
	uint64_t count;
};

struct stats {
	int64_t start_ms;      /* the supervisor's start */
	int64_t start_unix_ms; /* the same, wall clock */
	/* leadership, copied */
	bool leading;
	bool leader_elect;        /* false: leads alone, no Lease */
	int64_t leading_since_ms; /* leader or standby since */
	char holder[128];         /* the Lease's holderIdentity, "" none */
	char identity[128];
	uint32_t epoch;
	bool stopping;
	bool all_synced;
	uint64_t lease_slowpath; /* renewals through a GET, copied */
	/* API, counted */
	struct stats_api api[STATS_API_SLOTS];
	size_t napi;
	uint64_t api_total;
	uint64_t api_errors;    /* answers other than 2xx, and no answer */
	uint64_t api_overflow;  /* pairs beyond STATS_API_SLOTS */
	int64_t cache_stale_ms; /* --cache-staleness-limit: readiness bound */
	uint64_t relists;       /* sums over the kinds, copied */
	uint64_t watch_restarts;
	/* tables */
	struct stats_worker *workers;
	size_t nworkers;
	struct stats_ctl *ctls;
	size_t nctls;
	struct stats_kind *kinds;
	size_t nkinds;
	/* shadow mode (--shadow, shadow.h): counted, and copied gauges */
	bool shadow;
	struct stats_shadow *shadow_w; /* STATS_SHADOW_SLOTS, or NULL */
	size_t nshadow;
	uint64_t shadow_overflow; /* triples beyond STATS_SHADOW_SLOTS */
	uint64_t shadow_pending;  /* records held (sh_pending()) */
	uint64_t shadow_dropped;  /* records not kept (sh_dropped()) */
};

/* A new, empty stats object started at now_ms.  Caller frees with
 * stats_free() (NULL is fine). */
struct stats *stats_new(int64_t now_ms, int64_t now_unix_ms);
void stats_free(struct stats *st);

/* Adds a controller row (and returns its index); workers of it are added
 * with stats_add_worker() (returns the worker row's index).  The tables
 * keep their order: controllers as added, workers as added. */
size_t stats_add_ctl(struct stats *st, const char *name);
size_t stats_add_worker(struct stats *st, const char *controller, int index);
size_t stats_add_kind(
        struct stats *st, const char *name, const char *controller);

/* Lookups (NULL when unknown). */
struct stats_ctl *stats_ctl(struct stats *st, const char *name);
struct stats_worker *stats_worker(
        struct stats *st, const char *controller, int index);

/* ---- hooks (st may be NULL) ---- */

/* One reconcile of key by worker (controller, index) ended with result
 * after latency_ms (processing start to final verdict, writes included).
 * message: the error text for STATS_ERROR (NULL: none). */
void stats_reconcile(struct stats *st, const char *controller, int index,
        enum stats_result result, int64_t latency_ms, const char *message,
        int64_t now_ms);
/* A reconcile of controller ended with a terminal error (not retried):
 * controller_runtime_terminal_reconcile_errors_total.  It is counted as
 * an error by stats_reconcile() too. */
void stats_terminal(struct stats *st, const char *controller);
/* A key lost with its worker (cause: "signal SIGKILL", ...): an error of
 * the controller (the worker's row counts lost keys itself), and what
 * controller-runtime counts as a reconcile panic. */
void stats_lost(struct stats *st, const char *controller, const char *cause,
        int64_t latency_ms, int64_t now_ms);
/* A policy violation of rule (a stable name, wpolicy.h) by a worker of
 * controller.  Rules beyond STATS_RULES_MAX distinct ones count in the
 * total only. */
void stats_violation(
        struct stats *st, const char *controller, const char *rule);
/* Leadership changed (leader.c): leading or standby since now_ms. */
void stats_leadership(
        struct stats *st, bool leading, uint32_t epoch, int64_t now_ms);
/* The Lease's renewals that went through the slow path so far (a GET
 * after the optimistic update failed): leader_election_slowpath_total. */
void stats_lease_slowpath(struct stats *st, uint64_t n);
/* One API answer (resp->code; 0 when none came). */
void stats_api(struct stats *st, enum kapi_verb verb, long code);
/* One write shadow mode did not send. */
void stats_shadow(struct stats *st, const char *controller, const char *verb,
        const char *resource);

/* ---- pure helpers ---- */

/* Records one duration into h. */
void stats_hist_add(struct stats_hist *h, int64_t ms);
/* The q-quantile (0..1) in ms over the ring (exact over the latest
 * STATS_RING), or -1 when empty. */
int64_t stats_hist_quantile(const struct stats_hist *h, double q);
/* The quantile estimated from the buckets (Prometheus'
 * histogram_quantile: linear within a bucket), in seconds; -1 when
 * empty. */
double stats_hist_bucket_quantile(const struct stats_hist *h, double q);

/* The age of the oldest cache of st->kinds[i]'s resource (over every
 * kind of that resource), or -1 when an earlier kind has the same
 * resource: one figure per resource, at its first kind. */
int64_t stats_resource_age(const struct stats *st, size_t i);

/* Copies s ("" when NULL) into dst (len bytes), cut to fit. */
void stats_set_text(char *dst, size_t len, const char *s);

/* "success", "error", "requeue", "requeue_after"; "unknown". */
const char *stats_result_label(enum stats_result r);
/* "starting", "ready", "busy", "restarting", "crash-loop", "standby",
 * "stopping", "stopped", "failed"; "unknown". */
const char *stats_wstate_name(enum stats_wstate s);
/* "GET", "LIST", "POST", "PUT", "PATCH", "DELETE", "WATCH", "LOG" (the
 * verb label of rest_client_requests_total is the HTTP method; ours
 * tells LIST and WATCH apart). */
const char *stats_verb_name(enum kapi_verb v);

#endif
