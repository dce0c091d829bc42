/*
 * sup.h: the supervisor's context, shared by its glue modules: sup.c (set
 * up, the one poll loop, signals, shutdown), path.c (the data path: the
 * informer, the pool and the writer wired to intake.c, feed.c and
 * settle.c), views.c (view requests) and ops.c (stats, health socket,
 * HTTP pages).  Leadership is the leader module's own (leader.h);
 * everything else asks it.  One thread; nothing here is locked.  Prefix
 * sup_.
 */
#ifndef SUP_H
#define SUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kapi.h"
#include "common/kapi_watch.h"
#include "common/mtune.h"
#include "supervisor/config.h"
#include "supervisor/ctrl.h"
#include "supervisor/events.h"
#include "supervisor/informer.h"
#include "supervisor/leader.h"
#include "supervisor/queue.h"
#include "supervisor/stats.h"
#include "supervisor/vpolicy.h"
#include "supervisor/workers.h"
#include "supervisor/writer.h"

#define SUP_MAX_ENV 8

/* One running controller. */
struct sup_ctl {
	const struct ctrl_spec *spec;
	size_t first_kind; /* informer kind of spec->watches[0] */
	struct queue *q;
	bool paused; /* sympoziumctl pause: no dispatch, keys accumulate */
	/* the view policy's meter of each worker slot (views.c) */
	struct vpol_meter *meters;
	int nmeters;
};

struct intake;
struct feed;
struct otel;
struct egress;
struct settle;

struct sup {
	struct sup_config cfg;
	struct kapi_conf *conf;
	struct kapi_client *client;
	struct kapi_multi *m;
	struct inf *inf;
	struct inf_kind *kinds;
	size_t nkinds;
	size_t *kind_ctl; /* controller index of each informer kind */
	struct sup_ctl *ctls;
	size_t nctls;
	struct wk_pool *pool;
	struct wr *wr; /* the writer, with the Event correlator */
	/* the data path (path.c) */
	struct intake *intake; /* watch events to queues (intake.h) */
	struct feed *feed;     /* queues to WORK (feed.h) */
	struct settle *settle; /* RESULT to writes to verdict (settle.h) */
	struct leader *leader; /* the Lease, epochs, fencing (leader.h) */
	/* lifecycle */
	int sigfd;
	bool stopping;
	int64_t stop_at;   /* when SIGTERM came */
	bool workers_quit; /* wk_shutdown called */
	char runtime_dir[4096];
	bool own_runtime_dir;
	char *env[SUP_MAX_ENV]; /* workers' environment, NULL-ended */
	struct stats *stats;    /* every figure (stats.h) */
	struct health *health;  /* the health socket (health.h) */
	struct http *probe;     /* /healthz, /readyz (http.h); NULL: off */
	struct http *metrics;   /* /metrics (http.h); NULL: off */
	struct mtune_trim trim; /* freed heap given back when idle */
	struct shadow *shadow;  /* --shadow: the writes not sent (shadow.h);
	                         * NULL otherwise */
	bool agent_sandbox; /* the agent-sandbox CRDs are served (served.c) */
	bool httproutes;    /* the Gateway API serves httproutes (served.c) */
	bool *kind_off;     /* per informer kind: unserved, not watched */
	/* OpenTelemetry (sup.c): NULL when OTEL_EXPORTER_OTLP_ENDPOINT is
	 * unset */
	struct otel *otel;
	struct egress *egress;
	int64_t otel_due[3]; /* monotonic ms of each signal's next export */
};

/* sup.c: the supervisor built from cfg (copied; its strings must outlive
 * it), or NULL with a reason in err.  sup_run() serves until SIGTERM or
 * SIGINT and the shutdown sequence, and returns the exit status. */
struct sup *sup_new(const struct sup_config *cfg, char *err, size_t errlen);
int sup_run(struct sup *s);
void sup_free(struct sup *s);
/* Exports what is due (all of it when force), and returns at once: the
 * exporter's thread sends (egress.h). */
void sup_otel_tick(struct sup *s, int64_t now, bool force);

/* path.c: the data path */
/* Creates s->intake, s->feed and s->settle over s->ctls (their queues
 * made) and s->stats; sup_path_free() frees them. */
void sup_path_new(struct sup *s);
void sup_path_free(struct sup *s);
/* The one fence of the data path: whether this process may dispatch and
 * write now (feed, settle, the writer before every request, and the
 * loop's cancel of requests in flight ask it). */
bool sup_fence(struct sup *s, int64_t now);
/* The writer's fence (wr_fence_fn): sup_fence() at the current time. */
bool sup_may_write(void *arg);
/* The informer's change callback: intake_on_change(). */
void sup_on_change(void *arg, size_t kind, enum inf_change change,
        const char *key, const struct inf_owner *old_owner,
        const struct inf_owner *new_owner);
/* The pool's callbacks (workers.h): settle_result(), settle_lost(),
 * settle_released(). */
void sup_on_result(void *arg, const char *controller, struct wk_worker *w,
        const struct ipc_result *r, const struct ipc_write *ops);
void sup_on_lost(void *arg, const char *controller, const char *key,
        const char *cause, bool quarantined);
void sup_on_released(void *arg, const char *controller, const char *key);
/* The writer's callbacks: settle_written() and the no-op lookup in the
 * caches (wr_lookup_fn). */
void sup_on_written(void *arg, uint64_t token, const struct wr_report *rep);
int sup_lookup(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json);
/* Hands ready keys to idle workers (leader only, not while stopping). */
void sup_dispatch(struct sup *s, int64_t now);
/* Enqueues every primary object (on becoming leader). */
void sup_resync(struct sup *s, int64_t now);

/* Any policy violation by worker w (borrowed; the key in flight is the
 * one it is reconciling), the one entry point for writes (path.c, from
 * settle_result()) and views alike: rule is a stable name (wpolicy.h),
 * detail one line.  Logs an error naming controller, key and rule,
 * counts sympozium_policy_violations_total{controller,rule} (stats.h),
 * gives the cached primary a Warning Event "PolicyViolation", then kills
 * the worker and quarantines the key at once (wk_violation(): the key is
 * lost, then held back as for a crash, with its "Quarantined" Event).
 * Whatever the worker asked in that reconcile is not carried out: the
 * caller has refused it.  Safe inside the pool's callbacks.  w NULL or
 * without a key: only logged. */
void sup_violation(struct sup *s, struct wk_worker *w, const char *rule,
        const char *detail, int64_t now);

/* served.c: sets s->agent_sandbox and s->httproutes (one blocking LIST
 * each at start-up, only when a running controller has an optional watch
 * of that group), and whether optional watch w is off (not served). */
void sup_detect_served(struct sup *s);
bool sup_optional_off(const struct sup *s, const struct ctrl_watch *w);

/* views.c */
void sup_on_view(void *arg, struct wk_worker *w, uint64_t ticket,
        const struct ipc_msg *msg);

#endif
