/*
 * health.h: the supervisor's health socket (issue 6): a Unix stream
 * socket, mode 0600, served from the supervisor's one poll loop with
 * non-blocking I/O only, so it answers within milliseconds whatever the
 * workers do (hung, SIGSTOPped, crash-looping).  Prefix health_.
 *
 * The protocol is ipc/hproto.h (one JSON request line, one JSON reply
 * line, then the server closes).  A peer is accepted only when its uid
 * (SO_PEERCRED) is the supervisor's or root's; any other gets an error
 * reply and a log line.  Each connection has HEALTH_TIMEOUT_MS to send
 * its request and read the reply; at most HEALTH_MAX_CONNS are open (more
 * are refused with an error reply).  Garbage or oversized requests get an
 * error reply and the connection is closed.
 *
 * The reply bodies are rendered from struct stats (stats.h) by the pure
 * health_*_json() functions, so they can be tested without a supervisor.
 */
#ifndef HEALTH_H
#define HEALTH_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "ipc/hproto.h"
#include "supervisor/stats.h"

#define HEALTH_TIMEOUT_MS 2000
#define HEALTH_MAX_CONNS  16

struct health;

/* Answers one decoded request with a reply line (hp_reply_ok() or
 * hp_reply_error(); the server frees it). */
typedef char *health_fn(void *arg, const struct hp_req *req, int64_t now_ms);

/* Listens on path (a stale socket file there is replaced; another kind of
 * file is an error) with mode 0600.  fn and arg are kept.  Returns the
 * server, or NULL with a reason in err.  Caller frees with health_free()
 * (which removes the socket file). */
struct health *health_new(
        const char *path, health_fn *fn, void *arg, char *err, size_t errlen);
void health_free(struct health *h);

/* The descriptors to poll (listening socket, then each connection with
 * POLLIN or POLLOUT), at most max; returns how many were filled. */
size_t health_fds(const struct health *h, struct pollfd *out, size_t max);
/* Accepts, reads, answers and writes whatever is ready, closes finished
 * and timed-out connections.  Never blocks. */
void health_handle(struct health *h, int64_t now_ms);
/* The earliest connection deadline, or -1 when none is open. */
int64_t health_next_deadline(const struct health *h);
/* Connections open now (tests). */
size_t health_nconns(const struct health *h);

/* Whether a server accepts connections on the socket at path now. */
bool health_alive(const char *path);

/* ---- pure ---- */

/* Whether a peer with uid peer may talk to a server running as self. */
bool health_peer_allowed(uid_t peer, uid_t self);

/* Reply bodies (owned; caller puts or hands to hp_reply_ok()). */
json_object *health_worker_json(
        const struct stats_worker *w, bool detail, int64_t now_ms);
json_object *health_workers_json(const struct stats *st, int64_t now_ms);
json_object *health_status_json(const struct stats *st, int64_t now_ms);
/* The worker rows named name ("CONTROLLER-INDEX", or "CONTROLLER": all
 * its slots) into out (at most max indexes into st->workers); returns how
 * many matched. */
size_t health_match(
        const struct stats *st, const char *name, size_t *out, size_t max);

#endif
