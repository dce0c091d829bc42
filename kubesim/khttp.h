/*
 * khttp.h: kubesim's HTTP/1.1 front end on libmicrohttpd (one thread per
 * connection): listening socket, optional TLS, bearer-token check, the
 * request log, the admin endpoint under /_kubesim/, and streaming of
 * watch responses.  Prefix khttp_.
 */
#ifndef KHTTP_H
#define KHTTP_H

#include <stddef.h>

#include "kubesim/ksrv.h"

struct khttp_opts {
	const char *listen;      /* "ADDR:PORT" or "[ADDR]:PORT" */
	const char *token;       /* bearer token required, or NULL */
	const char *request_log; /* path of the JSON-lines log, or NULL */
	const char *cert_pem;    /* TLS server certificate, or NULL */
	const char *key_pem;     /* its key */
};

struct khttp;

/* An admin endpoint: /_kubesim/<name>[/<sub>] is given to fn with sub
 * ("" when absent).  fn fills rs; it runs without the store lock. */
typedef void (*khttp_admin_fn)(
        void *arg, const struct kreq *rq, const char *sub, struct kresp *rs);

/* A filter run before every non-admin request, without the store lock,
 * with the request's verb ("get", "list", "watch", "create", "update",
 * "patch", "delete", "deletecollection", "discovery") and resource plural
 * ("" for discovery and other paths).  It may delay, or answer (return
 * true: rs is sent instead of serving the request). */
typedef bool (*khttp_filter_fn)(void *arg, const struct kreq *rq,
        const char *verb, const char *plural, struct kresp *rs);

/* Decides whether to accept a new connection (false: it is closed at
 * once, which clients see as a refused or reset connection). */
typedef bool (*khttp_accept_fn)(void *arg);

/* Listens and serves ks until khttp_stop.  Writes the base URL
 * ("http://127.0.0.1:PORT") into url.  NULL on error (logged). */
struct khttp *khttp_start(
        struct ksrv *ks, const struct khttp_opts *o, char *url, size_t urllen);
/* Registration, before requests arrive (right after khttp_start). */
void khttp_admin_register(
        struct khttp *h, const char *name, khttp_admin_fn fn, void *arg);
void khttp_set_filter(struct khttp *h, khttp_filter_fn fn, void *arg);
void khttp_set_accept(struct khttp *h, khttp_accept_fn fn, void *arg);

/* Ends every watch, stops serving, frees h. */
void khttp_stop(struct khttp *h);

#endif
