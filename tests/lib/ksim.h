/*
 * ksim.h: drives a running bin/kubesim from black-box tests.  Starts and
 * stops the server process, sends one HTTP request at a time over libcurl
 * and follows watch streams in a background thread.  Everything is bounded
 * in time: requests time out, a watch read takes a timeout, stopping the
 * server kills it after 5 s.
 *
 * ksim_api is the usual fixture on top: kubesim writing a kubeconfig and a
 * request log into a fresh temporary directory, and a kapi client
 * configured from that kubeconfig.
 *
 * The binary is $KUBESIM, else "bin/kubesim" (relative to the cwd).
 * Functions that can fail return NULL or -1 after printing the reason on
 * stderr; they never call cmocka, so the library suits any test.
 */
#ifndef KSIM_H
#define KSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "common/kapi.h"

struct ksim;
struct ksim_watch;
struct kapi_conf;
struct kapi_client;

#define KSIM_PATH_MAX 128

/* One HTTP answer.  Strings are NUL-terminated and never NULL. */
struct ksim_resp {
	long code;  /* HTTP status; 0 when the transfer failed */
	char *body; /* response body ("" when empty) */
	size_t body_len;
	char *content_type; /* Content-Type ("" when absent) */
	char *headers;      /* raw header lines of the final response */
	json_object *json;  /* body parsed as JSON, or NULL */
	char *error;        /* curl's error text when code is 0, else "" */
	int64_t elapsed_ms; /* wall time of the request */
};

/* Starts $KUBESIM --listen 127.0.0.1:0 followed by args (NULL-terminated,
 * at most 60; args may be NULL) and waits up to 10 s for "listening on URL" on
 * its stdout.  Later stdout lines are copied to stderr.  Returns the handle
 * (caller frees with ksim_stop()), or NULL with the reason on stderr. */
struct ksim *ksim_start(const char *const *args);
/* SIGTERM, then waits up to 5 s (SIGKILL after that) and frees k.
 * Returns the exit status (0..255), 128 + signal when killed by a signal,
 * or -1 when k is NULL or waitpid failed. */
int ksim_stop(struct ksim *k);
/* The URL of the server, e.g. "http://127.0.0.1:38211".  Borrowed. */
const char *ksim_url(const struct ksim *k);
pid_t ksim_pid(const struct ksim *k);

/* Sends one request to base + path (path includes the query).  ctype NULL:
 * no Content-Type; body NULL: no body; headers: NULL-terminated "Name:
 * value" lines, or NULL.  TLS certificates are not verified.  timeout_ms
 * <= 0 means 15 s.  Never NULL; caller frees with ksim_resp_free(). */
struct ksim_resp *ksim_request(const char *base, const char *method,
        const char *path, const char *ctype, const char *body,
        const char *const *headers, int timeout_ms);
void ksim_resp_free(struct ksim_resp *r);
/* Value of response header name (case-insensitive), or NULL.  Caller frees
 * with free(). */
char *ksim_resp_header(const struct ksim_resp *r, const char *name);

/* Percent-encodes s for a query value.  Caller frees with free(). */
char *ksim_urlenc(const char *s);
/* Monotonic clock in milliseconds. */
int64_t ksim_now_ms(void);
/* Sleeps ms milliseconds (resumed after signals). */
void ksim_sleep_ms(int ms);
/* The kubesim binary ksim_start() runs: $KUBESIM, else "bin/kubesim".
 * Borrowed. */
const char *ksim_binary(void);

/* Opens a streaming GET of base + path in a background thread.  headers
 * as for ksim_request().  Never NULL; caller frees with
 * ksim_watch_close(). */
struct ksim_watch *ksim_watch_open(
        const char *base, const char *path, const char *const *headers);
/* Waits up to timeout_ms for the HTTP status line and headers of the final
 * response; returns the status, or 0 when none arrived (or the transfer
 * failed). */
long ksim_watch_status(struct ksim_watch *w, int timeout_ms);
/* Value of a response header of the stream (case-insensitive; valid once
 * ksim_watch_status() returned non-zero), or NULL.  Caller frees with
 * free(). */
char *ksim_watch_header(struct ksim_watch *w, const char *name);
/* The next complete line (ending in '\n') parsed as JSON, waiting up to
 * timeout_ms.  NULL on timeout or at the end of the stream.  Lines that are
 * not one JSON document are counted (ksim_watch_bad_lines) and skipped.
 * Caller frees with json_object_put(). */
json_object *ksim_watch_next(struct ksim_watch *w, int timeout_ms);
/* Waits up to timeout_ms for the stream to end; true when it ended. */
bool ksim_watch_wait_end(struct ksim_watch *w, int timeout_ms);
/* True once the transfer has finished (any reason). */
bool ksim_watch_ended(struct ksim_watch *w);
/* Monotonic ms at which the stream ended (0 while open). */
int64_t ksim_watch_end_ms(struct ksim_watch *w);
/* Lines that failed to parse, plus a trailing fragment without '\n' at
 * the end of the stream. */
int ksim_watch_bad_lines(struct ksim_watch *w);
/* Number of complete lines received so far. */
int ksim_watch_lines(struct ksim_watch *w);
/* Everything received so far.  Caller frees with free(). */
char *ksim_watch_body(struct ksim_watch *w);
/* curl's result text once ended ("" for a clean end).  Caller frees with
 * free(). */
char *ksim_watch_error(struct ksim_watch *w);
/* Cancels the transfer, joins the thread and frees w (NULL is fine). */
void ksim_watch_close(struct ksim_watch *w);

/* A kubesim and a kapi client talking to it.  All fields are owned by the
 * fixture (set by ksim_api_start(), freed by ksim_api_stop()). */
struct ksim_api {
	struct ksim *k;
	struct kapi_conf *conf;          /* loaded from kubeconfig */
	struct kapi_client *c;           /* uses conf */
	char dir[32];                    /* fresh /tmp/ksim-XXXXXX */
	char kubeconfig[KSIM_PATH_MAX];  /* dir/kubeconfig */
	char request_log[KSIM_PATH_MAX]; /* dir/requests.log */
};

/* Creates a unique directory under /tmp, starts kubesim with
 * --write-kubeconfig and --request-log into it followed by extra_args
 * (NULL-terminated, at most 56, may be NULL), loads the kubeconfig and
 * makes a client with user_agent ("<prog>/<version>") and timeout_ms.
 * Returns 0 (release with ksim_api_stop()), or -1 with the reason on
 * stderr and nothing left behind (*a zeroed). */
int ksim_api_start(struct ksim_api *a, const char *const *extra_args,
        const char *user_agent, long timeout_ms);
/* Stops a's kubesim, waits down_ms, and starts a new, empty one (a fresh
 * store: the API server "restored" with nothing in it) on the same
 * address, with the
 * same kubeconfig and request log (appended to) and extra_args (at most
 * 54, may be NULL), retrying for up to 5 s while the port is busy.  The
 * client and everything configured from the kubeconfig stay valid (not
 * with --tls: the new server has a new CA).  Returns 0, or -1 with the
 * reason on stderr (a->k is then NULL; ksim_api_stop() still cleans up). */
int ksim_api_restart(
        struct ksim_api *a, int down_ms, const char *const *extra_args);
/* Frees the client and the configuration, stops kubesim, removes the
 * directory with everything in it (kept when $KEEP_TEST_DIR is set), and
 * zeroes *a.  Returns ksim_stop()'s status
 * (0 for a clean exit), or -1 when a was not started. */
int ksim_api_stop(struct ksim_api *a);

/* Creates a minimal object of r named name in ns (NULL: cluster-scoped,
 * e.g. a Namespace), labelled app=<app_label> when app_label is not NULL.
 * Returns kapi_create()'s outcome. */
enum kapi_rc ksim_api_create(struct ksim_api *a, const struct kapi_res *r,
        const char *ns, const char *name, const char *app_label);
/* A cmocka group teardown (the library itself does not use cmocka):
 * ksim_api_stop() of the ksim_api *state points to (the group setup sets
 * it).  Returns 0 when kubesim exited cleanly, else -1. */
int ksim_api_teardown(void **state);

/* Counts the lines of kubesim's request log whose "verb" ("list",
 * "update", ...) or "method" ("PUT", ...) equals verb, whose "path"
 * contains path_fragment and whose "userAgent" contains
 * user_agent_fragment.  A NULL filter matches every line; lines that are
 * not JSON objects are skipped.  Returns the count, or -1 when the file
 * cannot be read (reason on stderr). */
int ksim_count_log(const char *request_log, const char *verb,
        const char *path_fragment, const char *user_agent_fragment);

/* Counts the write requests (POST, PUT, PATCH, DELETE) whose "userAgent"
 * contains user_agent_fragment, Lease requests excepted, in the complete
 * lines of the request log after its first skip lines (one read, so the
 * count never goes back); each is printed on stderr when show.  0 when
 * the file cannot be read. */
int ksim_writes_after(const char *request_log, const char *user_agent_fragment,
        int skip, bool show);

/* The number of complete lines of the request log. */
int ksim_log_lines(const char *request_log);

/* Waits until those writes (ksim_writes_after) stop for quiet_ms, or
 * max_ms passed. */
void ksim_wait_quiet(const char *request_log, const char *user_agent_fragment,
        int quiet_ms, int max_ms);

/* Creates, through c, every CustomResourceDefinition document of every
 * "*.yaml" file of dir (in name order; other documents are skipped).
 * Stops at the first failure.  Returns the number of CRDs created, or -1
 * with the reason on stderr. */
int ksim_apply_crds(struct kapi_client *c, const char *dir);

#endif
