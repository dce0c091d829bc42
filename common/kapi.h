/*
 * kapi.h: the Kubernetes REST client (spec kube-api.md sections A, B, E.9),
 * over libcurl and json-c.
 *
 * A request is described by a struct kapi_req (verb, resource, namespace,
 * name, options, body); kapi_url() turns it into a URL (pure, no I/O).
 * Two ways to run requests:
 *
 *   - blocking: kapi_do() and the kapi_get/list/create/... wrappers, for
 *     tools and tests;
 *   - non-blocking: a struct kapi_multi (one libcurl multi handle) driven
 *     by an event loop with kapi_multi_poll() / kapi_multi_perform(); many
 *     requests and watches in flight on one thread.
 *
 * Both share one engine, so both behave alike:
 *   - Authorization: the bearer token from kapi_conf_token() on every
 *     attempt (so a rotated token file is picked up); basic auth when the
 *     configuration has a username.  After a 401, when the token comes
 *     from a file, the token is invalidated (kapi_conf_token_invalidate)
 *     and the request is resent once, with the re-read token.
 *   - Retries (E.9): a 429 or 5xx answer carrying Retry-After is resent
 *     after that many seconds (at most KAPI_RETRY_AFTER_CAP s per wait), up
 *     to max_retries (default KAPI_MAX_RETRIES) times, for every verb (the
 *     body is held in memory).  Without the header nothing is retried,
 *     nor is a TooLarge answer (kapi_status_rv_too_large(): waiting does
 *     not help; the caller lists with resourceVersion "").
 *     Connection-level failures (refused, reset, send/receive error,
 *     empty reply; not timeouts) are retried only for GET, LIST, WATCH and
 *     LOG, and only
 *     before any watch data was delivered, at most KAPI_TRANSPORT_RETRIES
 *     times with 100, 200, 400 ms waits, counted in the same budget.  TLS
 *     failures are never retried.  Waits are deadlines in the multi loop,
 *     never sleeps.
 *   - Timeouts: a connect timeout of 10 s; every request but a watch has a
 *     total timeout (kapi_client_set_timeout, default 30 s).  A watch has
 *     none (the server ends it after timeoutSeconds; when set, the client
 *     gives up timeoutSeconds + 60 s after the start) and uses TCP
 *     keepalive instead.
 *   - TLS: CA from conf->ca_pem (else the system roots), client
 *     certificate and key from conf->cert_pem/key_pem, no verification
 *     when conf->insecure.  conf->tls_server_name is sent as SNI and
 *     verified against the certificate: the URL names that host and
 *     CURLOPT_CONNECT_TO points it at the configured server (so the Host
 *     header carries the name too, which the API server ignores).
 *   - Bounded answers: a body longer than its cap (req->max_body, else the
 *     client's cap for a LIST or for any other verb; a watch is framed
 *     per event by its decoder instead) aborts the transfer: the request
 *     completes with KAPI_ETOOBIG, the message naming the method, the
 *     path and the cap, logged as a warning; it is not retried (the
 *     caller's backoff decides).  Nothing is kept of the body.
 *   - Headers: Accept: application/json, *\/\*; Content-Type per verb;
 *     User-Agent "<user_agent> (linux/<arch>) sympozium"; gzip accepted.
 *     Warning headers are logged with log_warnx.
 *
 * Threads: a client and its multis are used by one thread at a time (the
 * configuration's token cache is updated in place).  Free every multi
 * before its client.
 */
#ifndef KAPI_H
#define KAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "common/kapi_conf.h"
#include "common/kapi_err.h"

#define KAPI_MAX_RETRIES       10
#define KAPI_TRANSPORT_RETRIES 3
#define KAPI_RETRY_AFTER_CAP   60
#define KAPI_TIMEOUT_MS        30000
/* Default caps on one answer's body (kapi_client_set_max_body): a LIST
 * page (500 objects a page, or a whole list the watch cache serves
 * unpaginated: 10,000 objects of 20 KiB fit), and any other answer (an
 * object is at most 1.5 MiB in etcd; pod logs are read with limitBytes).
 * An error answer keeps at most KAPI_MAX_ERROR_BYTES. */
#define KAPI_MAX_LIST_BYTES  ((size_t)256 << 20)
#define KAPI_MAX_BODY_BYTES  ((size_t)16 << 20)
#define KAPI_MAX_ERROR_BYTES ((size_t)1 << 20)

/* A resource: core group is "" (-> /api/v1), else /apis/<group>/<ver>. */
struct kapi_res {
	const char *group;
	const char *version;
	const char *plural;
	bool namespaced;
};

extern const struct kapi_res kapi_res_pods;

enum kapi_verb {
	KAPI_GET = 0,
	KAPI_LIST,
	KAPI_CREATE, /* POST collection */
	KAPI_UPDATE, /* PUT object (or subresource) */
	KAPI_PATCH,
	KAPI_DELETE,
	KAPI_WATCH, /* GET collection (or object) ?watch=true */
	KAPI_LOG,   /* GET pods/<name>/log */
};

enum kapi_patch {
	KAPI_PATCH_MERGE = 0, /* application/merge-patch+json */
	KAPI_PATCH_JSON,      /* application/json-patch+json */
	KAPI_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
	KAPI_PATCH_APPLY,     /* application/apply-patch+yaml */
};

/* List and watch options; NULL / 0 / false = not sent. */
struct kapi_list_opts {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version;
	const char *resource_version_match; /* "Exact", "NotOlderThan" */
	long limit;
	const char *cont; /* continue token */
	long timeout_seconds;
	bool allow_watch_bookmarks; /* watch only */
	bool send_initial_events;   /* watch only */
};

/* Delete options, sent as a DeleteOptions JSON body when any is set. */
struct kapi_delete_opts {
	const char *propagation_policy; /* Foreground, Background, ... */
	const char *precondition_uid;
	const char *precondition_rv;
	bool grace_period_set;
	long grace_period_seconds;
};

/* pods/log options. */
struct kapi_log_opts {
	const char *container;
	long tail_lines;  /* > 0 to send */
	long limit_bytes; /* > 0 to send: the server stops there */
	bool previous;
	bool timestamps;
};

/* A request.  Everything is borrowed for the duration of the submitting
 * call only (the engine copies what it keeps). */
struct kapi_req {
	enum kapi_verb verb;
	const struct kapi_res *res; /* NULL for LOG means pods */
	const char *ns;             /* NULL: cluster-scoped, or all
	                             * namespaces for LIST/WATCH */
	const char *name;
	const char *subresource;    /* "status", "scale", ... */
	struct kapi_list_opts list; /* LIST, WATCH, GET (rv) */
	const char *body;           /* CREATE/UPDATE/PATCH/DELETE */
	size_t body_len;            /* 0 = strlen(body) */
	enum kapi_patch patch_type;
	const char *field_manager;
	bool force;   /* apply patches only */
	bool dry_run; /* dryRun=All */
	struct kapi_delete_opts del;
	struct kapi_log_opts log;
	int max_retries; /* 0 = default, < 0 = none */
	long timeout_ms; /* total, per attempt; 0 = the client's (not for
	                  * WATCH) */
	size_t max_body; /* cap on the answer's body; 0 = the client's */
};

/* The outcome of one request (after its retries). */
struct kapi_resp {
	uint64_t id;
	long code;           /* last HTTP status, 0 = none */
	struct buf body;     /* last answer's body (not for a
	                      * watch's 2xx stream) */
	struct kapi_err err; /* err.rc == KAPI_OK on 2xx */
	int retries;         /* resends performed (incl. 401) */
};

void kapi_resp_init(struct kapi_resp *r);
void kapi_resp_fini(struct kapi_resp *r);

/*
 * Builds the URL of req against conf->server into out (appended).
 * Returns 0, or -1 with *why set to a static reason (bad combination,
 * e.g. a namespaced GET without namespace, or a group, version, plural,
 * namespace, name or subresource that is not a valid path segment: ".",
 * "..", or containing '/', '%' or a control byte).  A request whose URL
 * is refused is never sent: it completes with KAPI_EBADREQUEST, code 0.
 */
int kapi_url(const struct kapi_conf *conf, const struct kapi_req *req,
        struct buf *out, const char **why);
/* The HTTP method of a verb, and the Content-Type of req (or NULL). */
const char *kapi_method(enum kapi_verb verb);
const char *kapi_content_type(const struct kapi_req *req);
/* Appends the DeleteOptions JSON for req (dryRun included); returns 0, or
 * -1 when no option is set (no body to send). */
int kapi_delete_body(const struct kapi_req *req, struct buf *out);
/* Appends s percent-encoded (RFC 3986 unreserved kept). */
void kapi_escape(struct buf *out, const char *s);

/* Client.  conf is borrowed for the client's life; user_agent is
 * "<prog>/<version>". Free with kapi_client_free(). */
struct kapi_client *kapi_client_new(
        struct kapi_conf *conf, const char *user_agent);
void kapi_client_free(struct kapi_client *c);
void kapi_client_set_timeout(struct kapi_client *c, long timeout_ms);
/* The caps on answer bodies: list_bytes for LIST, other_bytes for every
 * other verb but WATCH; 0 keeps the current one (defaults
 * KAPI_MAX_LIST_BYTES and KAPI_MAX_BODY_BYTES). */
void kapi_client_set_max_body(
        struct kapi_client *c, size_t list_bytes, size_t other_bytes);
struct kapi_conf *kapi_client_conf(struct kapi_client *c);

/* Blocking.  Runs req to completion (with retries) and fills out (caller
 * calls kapi_resp_fini).  Returns out->err.rc. */
enum kapi_rc kapi_do(struct kapi_client *c, const struct kapi_req *req,
        struct kapi_resp *out);

/*
 * Blocking wrappers.  out (may be NULL) receives the decoded answer the
 * caller frees with json_object_put(); err (may be NULL, else
 * initialised with KAPI_ERR_INIT, caller calls kapi_err_fini) receives
 * the outcome.  A 2xx answer that is not JSON gives KAPI_EDECODE.
 */
enum kapi_rc kapi_get(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, const char *name, json_object **out,
        struct kapi_err *err);
/* One page: out is the whole List object. */
enum kapi_rc kapi_list(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, const struct kapi_list_opts *opts, json_object **out,
        struct kapi_err *err);
/* Every page (opts->limit per page, default 500), following continue
 * tokens; when a continue page answers 410 the list restarts once without
 * limit (client-go's pager).  items receives a new array of all items,
 * rv (may be NULL) the list's resourceVersion (caller frees). */
enum kapi_rc kapi_list_all(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, const struct kapi_list_opts *opts, json_object **items,
        char **rv, struct kapi_err *err);
enum kapi_rc kapi_create(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, json_object *obj, json_object **out,
        struct kapi_err *err);
/* PUT of obj at the name in its metadata. */
enum kapi_rc kapi_update(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, json_object *obj, json_object **out,
        struct kapi_err *err);
enum kapi_rc kapi_update_status(struct kapi_client *c,
        const struct kapi_res *res, const char *ns, json_object *obj,
        json_object **out, struct kapi_err *err);
/* field_manager may be NULL except for apply; force only for apply. */
enum kapi_rc kapi_patch(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, const char *name, enum kapi_patch type,
        const char *patch, const char *field_manager, bool force,
        json_object **out, struct kapi_err *err);
/* opts may be NULL. */
enum kapi_rc kapi_delete(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, const char *name, const struct kapi_delete_opts *opts,
        json_object **out, struct kapi_err *err);
/* text receives the log (caller frees with free()). */
enum kapi_rc kapi_log(struct kapi_client *c, const char *ns, const char *pod,
        const struct kapi_log_opts *opts, char **text, struct kapi_err *err);

/*
 * Non-blocking.  Callbacks run inside kapi_multi_perform() (data
 * callbacks inside libcurl's transfer); they may submit new requests and
 * cancel any request.  The resp given to a done callback is borrowed for
 * the call: the callback may take its body (buf_detach) and err
 * (kapi_err_move); the engine finalises what is left.
 */
struct kapi_multi;

typedef void (*kapi_done_cb)(void *arg, struct kapi_resp *resp);
/* Watch bytes as they arrive (only from a 2xx answer). */
typedef void (*kapi_data_cb)(
        void *arg, uint64_t id, const char *data, size_t len);

/* Mirrors struct pollfd; events/revents use POLLIN/POLLPRI/POLLOUT. */
struct kapi_pollfd {
	int fd;
	short events;
	short revents;
};

/* c must outlive the multi. */
struct kapi_multi *kapi_multi_new(struct kapi_client *c);
/* Cancels every request (no callbacks) and frees. */
void kapi_multi_free(struct kapi_multi *m);
/* Returns the request id (> 0, unique within m).  An invalid request
 * (kapi_url refuses it) completes from the next kapi_multi_perform with
 * KAPI_EBADREQUEST and the reason.  done may be NULL. */
uint64_t kapi_multi_submit(struct kapi_multi *m, const struct kapi_req *req,
        kapi_done_cb done, void *arg);
/* A WATCH (req->verb must be KAPI_WATCH): data as it arrives, then done
 * with the end: KAPI_OK for a clean end, the HTTP error of a failed start,
 * or KAPI_ETRANSPORT. */
uint64_t kapi_multi_watch(struct kapi_multi *m, const struct kapi_req *req,
        kapi_data_cb data, kapi_done_cb done, void *arg);
/* Stops a request; its done callback is not called.  0, or -1 when id is
 * unknown (already done). */
int kapi_multi_cancel(struct kapi_multi *m, uint64_t id);
/* Waits up to timeout_ms (negative: an hour) for transfer activity or one
 * of the extra fds (revents filled), less when a retry is due sooner.  Returns
 * the number of extra fds with events, or -1 on a libcurl error. */
int kapi_multi_poll(struct kapi_multi *m, struct kapi_pollfd *extra, int n,
        int timeout_ms);
/* Drives transfers, starts due retries and runs callbacks of finished
 * requests.  Returns the number of requests still pending. */
int kapi_multi_perform(struct kapi_multi *m);
int kapi_multi_pending(const struct kapi_multi *m);
/* Makes a kapi_multi_poll in another thread return early. */
void kapi_multi_wakeup(struct kapi_multi *m);

#endif
