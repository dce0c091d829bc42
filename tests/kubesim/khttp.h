/*
 * khttp.h: kubesim's HTTP/1.1 front end on libmicrohttpd (one thread per
 * connection): listening socket, optional TLS, bearer-token check, the
 * request log, the admin endpoint under /_kubesim/, and streaming of
 * watch responses.  Prefix khttp_.
 */
#ifndef KHTTP_H
#define KHTTP_H

#include <stddef.h>

#include "tests/kubesim/ksrv.h"

struct khttp_opts {
	const char *listen;      /* "ADDR:PORT" or "[ADDR]:PORT" */
	const char *token;       /* bearer token required, or NULL */
	const char *request_log; /* path of the JSON-lines log, or NULL */
	const char *cert_pem;    /* TLS server certificate, or NULL */
	const char *key_pem;     /* its key */
};

struct khttp;

/* Listens and serves ks until khttp_stop.  Writes the base URL
 * ("http://127.0.0.1:PORT") into url.  NULL on error (logged). */
struct khttp *khttp_start(struct ksrv *ks, const struct khttp_opts *o,
        char *url, size_t urllen);
/* Ends every watch, stops serving, frees h. */
void khttp_stop(struct khttp *h);

#endif
