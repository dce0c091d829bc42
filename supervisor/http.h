/*
 * http.h: the supervisor's HTTP endpoints (issue 6): the health probes
 * (--health-probe-bind-address, default :8081: /healthz, /readyz and their
 * /<check> paths) and Prometheus /metrics (--metrics-bind-address,
 * default :8080), each a libmicrohttpd daemon driven from the
 * supervisor's one poll loop (non-blocking sockets: a slow client never
 * holds up another; limits below): no thread of its own (MHD_USE_EPOLL with
 * external polling; its epoll descriptor joins the loop's poll set, its
 * timeout the loop's deadline).  Answers are rendered synchronously from
 * in-memory state.  Prefix http_.
 *
 * The probe logic is pure (http_ready_checks(), http_probe_answer()) and
 * follows controller-runtime's healthz handler (kube-api.md E.8): 200
 * "ok" when every check passes; otherwise 500 with one "[+]name ok" /
 * "[-]name failed: reason withheld" line per check and "healthz check
 * failed"; ?verbose lists the checks on success too, ending "healthz check
 * passed"; ?exclude=NAME (repeatable) skips a check; /readyz/NAME runs one
 * check: 200 "ok" or 500 "internal server error: REASON"; an unknown NAME
 * is 404.
 */
#ifndef HTTP_H
#define HTTP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "supervisor/stats.h"

/* The Content-Types of the answers: text, the Prometheus text format. */
#define HTTP_TEXT_PLAIN "text/plain; charset=utf-8"
#define HTTP_PROM_TEXT  "text/plain; version=0.0.4; charset=utf-8"

#define HTTP_MAX_CHECKS  64
#define HTTP_MAX_EXCLUDE 16
/*
 * Connection limits of each endpoint (issue 13 item 5).  Every socket is
 * non-blocking and served from the one loop, so a slow client costs one
 * descriptor and a little memory, never the others' time; what must be
 * bounded is how many there are and how long each may take:
 *   - HTTP_MAX_CONNS connections in all, HTTP_MAX_PER_IP from one address
 *     (well above the 100 slow connections the tests hold from 127.0.0.1,
 *     so the probe behind them is still accepted, and below the global
 *     limit, so one address cannot take every slot);
 *   - HTTP_REQUEST_TIMEOUT_MS: a request must have arrived and been
 *     answered within that time of the connection opening or of its
 *     previous answer (covers idle keep-alive connections and headers
 *     sent a byte at a time, which an idle timeout does not: every byte
 *     restarts it); the connection is then shut down;
 *   - HTTP_TIMEOUT_S: libmicrohttpd's own idle timeout, a backstop;
 *   - HTTP_CONN_MEMORY: the memory pool of one connection (request line
 *     and headers; answers are allocated apart).
 */
#define HTTP_MAX_CONNS          256
#define HTTP_MAX_PER_IP         128
#define HTTP_REQUEST_TIMEOUT_MS 10000
#define HTTP_TIMEOUT_S          10
#define HTTP_CONN_MEMORY        (16 * 1024)

/* ---- pure: probes ---- */

struct http_check {
	char name[80];
	bool ok;
	char reason[256]; /* why it failed; "" when ok */
	char note[300];   /* shown instead of "ok" when it passes; "" none */
	char detail[48];  /* shown after the verdict in lists, "" none */
};

/* The readiness checks of st (refreshed by the caller): first, sorted by
 * name, controller-NAME for each controller (fault.h: passes while it
 * runs, noted "degraded: REASON" in a controller fault, which does not
 * fail readiness; fails when it failed on a permanent exit),
 * informers-synced (every cache synced), leader-election (passes for the
 * leader and a standby alike), ping, workers (each controller that is
 * neither degraded nor failed has a ready, busy or standby worker, or is
 * paused); then one informer-<resource> per watched resource (its oldest
 * cache's age, stats_kind.age_ms, is at most st->cache_stale_ms; detail
 * "age Ns").  Fills out[HTTP_MAX_CHECKS] (checks beyond it are left out);
 * returns how many. */
size_t http_ready_checks(const struct stats *st, struct http_check *out);
/* The liveness checks: ping (the loop answered).  Returns how many. */
size_t http_live_checks(struct http_check *out);

/* A probe request's query. */
struct http_query {
	bool verbose;
	const char *exclude[HTTP_MAX_EXCLUDE]; /* borrowed */
	size_t nexclude;
};

/* The answer to a probe over checks c[n]: all of them (one == NULL) or
 * the check named one.  Appends the body to out; returns the HTTP
 * status (200, 500, or 404 for an unknown one). */
int http_probe_answer(const struct http_check *c, size_t n, const char *one,
        const struct http_query *q, struct buf *out);

/* ---- the server ---- */

struct http;

/* Answers GET path (no query) with query q parsed: appends the body to
 * body, sets *ctype (static), returns the HTTP status. */
typedef int http_fn(void *arg, const char *path, const struct http_query *q,
        struct buf *body, const char **ctype);

/* Whether addr turns the endpoint off ("0" or "", as controller-runtime). */
bool http_disabled(const char *addr);
/* Splits "HOST:PORT", ":PORT" or "[V6]:PORT" (PORT 0..65535; 0 picks a
 * free one) into host (len bytes; "" = every address) and *port.
 * Returns 0, or -1 when malformed. */
int http_parse_addr(const char *addr, char *host, size_t len, int *port);

/* Listens on addr (not disabled) and serves fn(arg) from the caller's
 * loop.  what names it in messages ("metrics", "health probe").  Returns
 * the server, or NULL with a reason in err.  Caller frees with
 * http_free() (NULL is fine). */
struct http *http_new(const char *what, const char *addr, http_fn *fn,
        void *arg, char *err, size_t errlen);
void http_free(struct http *h);
/* The bound port and address as "HOST:PORT". */
int http_port(const struct http *h);
const char *http_addr(const struct http *h);

/* The descriptor to poll (one: the daemon's epoll set, POLLIN) into
 * out[max]; returns how many (0 or 1). */
size_t http_fds(const struct http *h, struct pollfd *out, size_t max);
/* Runs the daemon: accepts, reads, answers, writes what is ready; never
 * blocks. */
void http_handle(struct http *h);
/* The daemon's next deadline (absolute, now_ms's clock), or -1 (none):
 * libmicrohttpd's, or the request deadline of a connection. */
int64_t http_next_deadline(const struct http *h, int64_t now_ms);

#endif
