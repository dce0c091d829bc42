/*
 * testsrv.h: a small HTTP(S) server on 127.0.0.1 for tests, over
 * libmicrohttpd (one thread per connection, so delays and streams never
 * block other requests).  Answers come from a FIFO of scripted responses,
 * then from an optional handler, else a 404 Status.  Every request is
 * recorded for assertions.  Optionally requires a bearer token (401
 * text/plain otherwise) and asks for client certificates signed by a CA.
 *
 * Threads: the server runs its own threads; the testsrv_* functions may be
 * called from the test thread at any time.  Handlers run on server threads.
 */
#ifndef TESTSRV_H
#define TESTSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct testsrv;

/* A recorded request.  All strings are NUL-terminated and never NULL
 * ("" when absent). */
struct testsrv_req {
	char *method;
	char *uri;  /* raw path and query, as sent */
	char *path; /* raw path only */
	char *authorization;
	char *content_type;
	char *accept;
	char *user_agent;
	char *body;
	size_t body_len;
	char *client_cn; /* verified client certificate CN, or "" */
	int64_t t_ms;    /* CLOCK_MONOTONIC arrival, milliseconds */
};

/* A response.  Strings are copied by testsrv_push*(); a handler fills
 * them with heap strings the server frees. */
struct testsrv_resp {
	int code;
	char *content_type; /* NULL = application/json */
	char *headers;      /* extra "Name: value" lines, '\n'-separated */
	char *body;         /* NULL = empty */
	size_t body_len;
	int delay_ms; /* before answering */
	/* Streaming (when nchunks > 0): body is ignored; each chunk is sent
	 * pause_ms after the previous one, then the stream ends, or, with
	 * hold, stays open until testsrv_stop(). */
	char **chunks;
	int nchunks;
	int pause_ms;
	bool hold;
	bool repeat_last; /* after the chunks, the last one again, without
	                   * end (an endless body) until the client leaves */
};

/* Fills resp (zeroed on entry; code 0 means "not handled" -> 404). */
typedef void (*testsrv_handler)(
        void *arg, const struct testsrv_req *req, struct testsrv_resp *resp);

struct testsrv_opts {
	const char *cert_pem; /* server certificate; NULL = plain HTTP */
	const char *key_pem;
	const char *trust_ca_pem; /* ask for client certs signed by it */
	const char *token;        /* required bearer token, or NULL */
};

/* Starts a server on 127.0.0.1 with a kernel-chosen port; NULL on
 * failure.  opts may be NULL (plain HTTP, no auth). */
struct testsrv *testsrv_start(const struct testsrv_opts *opts);
/* Stops the server, ends held streams and frees everything. */
void testsrv_stop(struct testsrv *srv);
int testsrv_port(const struct testsrv *srv);
/* "https://127.0.0.1:PORT" (or http).  Borrowed. */
const char *testsrv_url(const struct testsrv *srv);
/* Changes the required token (NULL = none). */
void testsrv_set_token(struct testsrv *srv, const char *token);
void testsrv_set_handler(struct testsrv *srv, testsrv_handler fn, void *arg);

/* Queues a response; headers may be NULL. */
void testsrv_push(
        struct testsrv *srv, int code, const char *headers, const char *body);
/* Queues any response (copied). */
void testsrv_push_resp(struct testsrv *srv, const struct testsrv_resp *r);
/* Queues a chunked stream of nchunks strings. */
void testsrv_push_stream(struct testsrv *srv, int code,
        const char *const *chunks, int nchunks, int pause_ms, bool hold);
/* Number of responses still queued. */
int testsrv_queued(struct testsrv *srv);

/* Recorded requests, oldest first.  The pointer stays valid until
 * testsrv_stop() or testsrv_clear(). */
int testsrv_nreqs(struct testsrv *srv);
const struct testsrv_req *testsrv_req(struct testsrv *srv, int i);
void testsrv_clear(struct testsrv *srv);
/* Decoded value of query parameter key of req, or NULL when absent.
 * Caller frees with free(). */
char *testsrv_query(const struct testsrv_req *req, const char *key);

#endif
