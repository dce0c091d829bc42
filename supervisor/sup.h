/*
 * sup.h: the supervisor's context, shared by its glue modules: sup.c (set
 * up, the one poll loop, signals, shutdown), dispatch.c (events to queues,
 * queues to workers, results to the writer, views) and ops.c (stats,
 * health socket, HTTP pages).  Leadership is the leader module's own
 * (leader.h); everything else asks it.  One thread; nothing here is
 * locked.  Prefix sup_.
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
#include "supervisor/workers.h"
#include "supervisor/writer.h"

#define SUP_MAX_ENV 8

/* One running controller. */
struct sup_ctl {
	const struct ctrl_spec *spec;
	size_t first_kind; /* informer kind of spec->watches[0] */
	struct queue *q;
	bool paused; /* sympoziumctl pause: no dispatch, keys accumulate */
};

/* A RESULT whose writes are in the writer. */
struct sup_pending {
	uint64_t token;
	size_t ctl;
	int worker; /* the slot that sent the RESULT (stats) */
	char *key;
	enum queue_verdict verdict;
	int64_t after_ms;
};

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
	struct wr *wr;
	struct ev *ev; /* the Event correlator (events.h) */
	struct sup_pending *pend;
	size_t npend;
	uint64_t next_token;
	struct leader *leader; /* the Lease, epochs, fencing (leader.h) */
	/* lifecycle */
	int sigfd;
	bool stopping;
	int64_t stop_at;   /* when SIGTERM came */
	bool workers_quit; /* wk_shutdown called */
	char runtime_dir[4096];
	bool own_runtime_dir;
	char *env[SUP_MAX_ENV]; /* workers' environment, NULL-ended */
	struct stats *stats;     /* every figure (stats.h) */
	struct health *health;   /* the health socket (health.h) */
	struct http *probe;      /* /healthz, /readyz (http.h); NULL: off */
	struct http *metrics;    /* /metrics (http.h); NULL: off */
	struct mtune_trim trim;  /* freed heap given back when idle */
};

/* sup.c: the supervisor built from cfg (copied; its strings must outlive
 * it), or NULL with a reason in err.  sup_run() serves until SIGTERM or
 * SIGINT and the shutdown sequence, and returns the exit status. */
struct sup *sup_new(const struct sup_config *cfg, char *err, size_t errlen);
int sup_run(struct sup *s);
void sup_free(struct sup *s);

/* dispatch.c */
void sup_on_change(void *arg, size_t kind, enum inf_change change,
        const char *key, const struct inf_owner *old_owner,
        const struct inf_owner *new_owner);
void sup_on_result(void *arg, const char *controller, struct wk_worker *w,
        const struct ipc_msg *msg);
void sup_on_view(void *arg, struct wk_worker *w, uint64_t ticket,
        const struct ipc_msg *msg);
void sup_on_lost(void *arg, const char *controller, const char *key,
        const char *cause, bool quarantined);
/* A key released from quarantine (a controller fault): queued now. */
void sup_on_released(void *arg, const char *controller, const char *key);
void sup_on_written(void *arg, uint64_t token, const struct wr_report *rep);
int sup_lookup(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json);
bool sup_may_write(void *arg);
/* The writer's event function: correlates at the real time. */
enum ev_verb sup_on_event(
        void *arg, json_object *event, struct ev_action *act);
/* Records an Event of type/reason/message on controller c's primary
 * object key (nothing when it is not cached); best effort, through the
 * writer (so only while leading). */
void sup_record_event(struct sup *s, size_t c, const char *key,
        const char *type, const char *reason, const char *message);
/* Hands ready keys to idle workers (leader only, not while stopping). */
void sup_dispatch(struct sup *s, int64_t now);
/* Enqueues every primary object (on becoming leader). */
void sup_resync(struct sup *s, int64_t now);

#endif
