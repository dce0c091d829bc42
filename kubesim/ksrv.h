/*
 * ksrv.h: kubesim's server core, independent of HTTP: the context (store,
 * registry, options, pod logs), the request and response shapes the HTTP
 * layer fills and sends, the handlers of every route (kverb.c: objects and
 * collections; kdisc.c: discovery, OpenAPI, version, health; kwatch.c:
 * watch streams; kstatus.c: Status bodies) and the object-level operations
 * the emulated controllers use.  Prefixes: ksrv_ (context), kverb_,
 * kwatch_, kstatus_, kresp_.
 */
#ifndef KSRV_H
#define KSRV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "kubesim/kres.h"
#include "kubesim/kroute.h"
#include "kubesim/kschema.h"
#include "kubesim/ksel.h"
#include "kubesim/kstore.h"

struct ksrv_opts {
	size_t watch_history;      /* events kept (--watch-history) */
	int64_t bookmark_ms;       /* --bookmark-interval */
	int64_t watch_timeout_ms;  /* 0: random in [30 min, 60 min) */
	int64_t too_large_wait_ms; /* --too-large-wait */
	bool gc;                   /* finalizers foregroundDeletion/orphan */
};

struct ksrv_log; /* pod logs, keyed by namespace/pod/container */

struct ksrv {
	struct kstore *st; /* the store; its lock guards reg and logs */
	struct kres_reg *reg;
	struct ksrv_opts opts;
	volatile int stopping; /* set at shutdown: watches end */
	int reaping;           /* inside a namespace or CRD cleanup */
	uint64_t rnd;          /* PRNG state (names, uids), under the lock */
	struct ksrv_log *logs;
	size_t nlogs;
	char *addr; /* "127.0.0.1:PORT" for /api */
};

/* One query parameter. */
struct kq {
	char *k;
	char *v;
};

/* A request as the HTTP layer received it.  All borrowed. */
struct kreq {
	const char *method; /* "GET", ... */
	const char *path;
	const struct kq *q;
	size_t nq;
	const char *ctype;  /* Content-Type, or NULL */
	const char *accept; /* Accept, or NULL */
	const char *body;
	size_t body_len;
};

struct kwatch;

/* A response to send.  kresp_fini frees what it owns. */
struct kresp {
	int code;
	const char *ctype; /* static string */
	struct buf body;
	int retry_after;  /* > 0: Retry-After header */
	char *warning;    /* Warning header value, or NULL */
	uint64_t rv;      /* resourceVersion produced (request log) */
	const char *verb; /* static: "get", "list", "watch", "create", ... */
	struct kwatch *watch; /* non-NULL: stream it (kwatch.c) */
};

void kresp_init(struct kresp *rs);
void kresp_fini(struct kresp *rs);
/* Answers a Status with code, reason and message; returns code. */
int kresp_error(struct kresp *rs, int code, const char *reason,
        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* 404 NotFound for the object name of res, worded as the real server
 * ("configmaps \"x\" not found", "widgets.example.com \"x\" not found").
 * Returns 404. */
int kresp_not_found(
        struct kresp *rs, const struct kres *res, const char *name);
/* Sends st (taken) as the body with its code (and Retry-After). */
void kresp_status(struct kresp *rs, json_object *st);
/* Sends obj (borrowed) as JSON. */
void kresp_json(struct kresp *rs, int code, json_object *obj);

/* Status objects (spec A.6).  New objects; callers put them. */
json_object *kstatus_new(int code, const char *reason, const char *message);
/* details.name/group/kind (kind = the resource plural)/uid; NULLs skipped */
void kstatus_details(json_object *st, const char *name, const char *group,
        const char *kind, const char *uid);
void kstatus_causes(json_object *st, const struct kschema_cause *c, size_t n);
void kstatus_retry(json_object *st, int seconds);
json_object *kstatus_success(const char *name, const char *group,
        const char *kind, const char *uid);

/* Context. */
struct ksrv *ksrv_new(const struct ksrv_opts *opts);
void ksrv_free(struct ksrv *ks);
/* The query value of name, or NULL. */
const char *kreq_q(const struct kreq *rq, const char *name);

/* The verb of a request ("get", "list", "watch", "create", "update",
 * "patch", "delete", "deletecollection", "discovery") and, for resource
 * paths, its plural in *plural (caller frees; NULL otherwise). */
const char *kverb_classify(const struct kreq *rq, char **plural);

/* Handles any route; fills rs (never fails; errors are Status bodies). */
void kverb_handle(struct ksrv *ks, const struct kreq *rq, struct kresp *rs);

/* Discovery, OpenAPI, /version, health (kdisc.c). */
void kdisc_handle(struct ksrv *ks, const struct kreq *rq,
        const struct kroute *rt, struct kresp *rs);

/* What a watch streams.  kwatch_new takes labels, fields and ns_prefix. */
struct kwatch_spec {
	const struct kres *res;
	char *ns_prefix;            /* "ns/" or NULL for all */
	struct ksel *labels;        /* NULL: everything */
	struct ksel_fields *fields; /* NULL: everything */
	uint64_t start_rv;          /* events with rv > start_rv */
	bool initial;               /* ADDED for the state at start_rv */
	bool initial_bookmark;      /* then the initial-events-end BOOKMARK */
	bool bookmarks;             /* allowWatchBookmarks */
	bool too_old;               /* only an ERROR 410 event */
	int64_t deadline_ms;        /* monotonic end of the watch */
	int table;                  /* -1, or Table rows (ktable_include) */
};

/*
 * Watch streams (kwatch.c).  kwatch_new is called under the store lock
 * (it takes the initial snapshot).  kwatch_read fills out with the next bytes
 * of the stream, blocking until there are some; returns the count, 0 at the
 * end of the stream.  kwatch_free releases it.
 */
struct kwatch *kwatch_new(struct ksrv *ks, struct kwatch_spec *spec);
size_t kwatch_read(struct kwatch *w, char *out, size_t max);
void kwatch_free(struct kwatch *w);

/*
 * Writes (kwrite.c), called under the store lock by kverb_handle and by
 * the emulated controllers.  obj is borrowed.  Each returns the HTTP code
 * the request got and leaves the answer in rs (which may be NULL).
 */
int kwrite_create(struct ksrv *ks, const struct kres *res, const char *ns,
        json_object *obj, const struct kreq *rq, struct kresp *rs);
int kwrite_update(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name, json_object *obj, bool status, const struct kreq *rq,
        struct kresp *rs);
int kwrite_patch(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name, bool status, const struct kreq *rq,
        struct kresp *rs);
/* DELETE of one object with options (body or query, as in rq; rq may be
 * NULL for defaults) and propagation policy override (NULL: from rq). */
int kwrite_delete(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name, const char *policy, const struct kreq *rq,
        struct kresp *rs);
int kwrite_delete_collection(struct ksrv *ks, const struct kres *res,
        const char *ns, const struct kreq *rq, struct kresp *rs);

/* Shared helpers (ksrv.c). */
/* "ns/name" or "name"; caller frees. */
char *ksrv_key(const struct kres *res, const char *ns, const char *name);
struct kstore_coll *ksrv_coll(struct ksrv *ks, const struct kres *res);
/* Current UTC time, RFC 3339 seconds. */
void ksrv_now(char out[32]);
/* A random RFC 4122 version 4 UUID. */
void ksrv_uid(char out[37]);
/* A resourceVersion: decimal digits, no leading zero ("0" allowed).
 * Returns 0, or -1 when malformed. */
int ksrv_parse_rv(const char *s, uint64_t *rv);
/* Sends the item's JSON (as the served version of res) with code. */
void ksrv_send_item(struct kresp *rs, int code, const struct kres *res,
        const struct kitem *it);
/* Waits, with the lock held on entry and exit, until the store reaches
 * rv or opts.too_large_wait_ms passes.  Returns 0, or -1 (and answers
 * 504 Timeout in rs) when it did not. */
int ksrv_wait_rv(struct ksrv *ks, uint64_t rv, struct kresp *rs);
/* Pod logs: sets (replaces) one container's log text; text NULL removes
 * every log of the pod (container ignored). */
void ksrv_log_set(struct ksrv *ks, const char *ns, const char *pod,
        const char *container, const char *text);
/* The log of one container, or NULL.  Borrowed (lock held). */
const char *ksrv_log_get(struct ksrv *ks, const char *ns, const char *pod,
        const char *container);

#endif
