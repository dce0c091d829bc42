/*
 * http.c: the supervisor's HTTP endpoints (http.h): the probe checks and
 * their answers (pure), and the libmicrohttpd daemons driven from the
 * supervisor's poll loop.  The supervisor's handlers for /healthz,
 * /readyz and /metrics are ops.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/http.h"

/* ---- the checks ---- */

static void
check_synced(const struct stats *st, struct http_check *c)
{
	struct buf b = BUF_INIT;

	*c = (struct http_check) { .name = "informers-synced", .ok = true };
	for (size_t i = 0; i < st->nkinds; i++) {
		if (!st->kinds[i].synced) {
			buf_printf(&b, "%s%s", c->ok ? "" : ", ",
			        st->kinds[i].name);
			c->ok = false;
		}
	}
	if (!c->ok || !st->all_synced) {
		c->ok = false;
		snprintf(c->reason, sizeof(c->reason), "caches not synced: %s",
		        b.len > 0 ? buf_str(&b) : "(starting)");
	}
	buf_fini(&b);
}

static bool
serving(enum stats_wstate s)
{
	return (s == STATS_W_READY || s == STATS_W_BUSY
	        || s == STATS_W_STANDBY);
}

static void
check_workers(const struct stats *st, struct http_check *c)
{
	*c = (struct http_check) { .name = "workers", .ok = true };
	for (size_t i = 0; i < st->nctls && c->ok; i++) {
		const struct stats_ctl *ctl = &st->ctls[i];
		/* a degraded or failed one answers in controller-NAME */
		bool ok = ctl->paused || ctl->fault != FAULT_OK;
		for (size_t j = 0; j < st->nworkers && !ok; j++) {
			ok = strcmp(st->workers[j].controller, ctl->name) == 0
			        && serving(st->workers[j].state);
		}
		if (!ok) {
			c->ok = false;
			snprintf(c->reason, sizeof(c->reason),
			        "controller %s has no ready worker",
			        ctl->name);
		}
	}
}

/* controller-NAME: a controller fault is noted, not failed (another
 * replica runs the same workers, and a ready pod keeps its metrics
 * scraped); a permanent failure fails (a rollout with a bad
 * configuration stops at the first pod). */
static void
check_controller(const struct stats_ctl *ctl, struct http_check *c)
{
	*c = (struct http_check) { .ok = ctl->fault != FAULT_FAILED };
	snprintf(c->name, sizeof(c->name), "controller-%s", ctl->name);
	if (ctl->fault == FAULT_DEGRADED) {
		snprintf(c->note, sizeof(c->note), "degraded: %s",
		        ctl->fault_reason);
	} else if (ctl->fault == FAULT_FAILED) {
		snprintf(c->reason, sizeof(c->reason), "failed: %.240s",
		        ctl->fault_reason);
	}
}

static int
by_name(const void *a, const void *b)
{
	return (strcmp(((const struct http_check *)a)->name,
	        ((const struct http_check *)b)->name));
}

/* One informer-<resource> check per resource, after the n others. */
static size_t
check_caches(const struct stats *st, struct http_check *out, size_t n)
{
	for (size_t i = 0; i < st->nkinds && n < HTTP_MAX_CHECKS; i++) {
		int64_t age = stats_resource_age(st, i);
		struct http_check *c = &out[n];

		if (age < 0 || st->kinds[i].resource[0] == '\0') {
			continue;
		}
		*c = (struct http_check) { .ok = st->cache_stale_ms <= 0
			        || age <= st->cache_stale_ms };
		snprintf(c->name, sizeof(c->name), "%s", st->kinds[i].check);
		snprintf(c->detail, sizeof(c->detail), "age %llds",
		        (long long)(age / 1000));
		if (!c->ok) {
			snprintf(c->reason, sizeof(c->reason),
			        "cache of %s is %llds old (limit %llds)",
			        st->kinds[i].resource, (long long)(age / 1000),
			        (long long)(st->cache_stale_ms / 1000));
		}
		n++;
	}
	return (n);
}

size_t
http_ready_checks(const struct stats *st, struct http_check *out)
{
	size_t n = 4;

	check_synced(st, &out[0]);
	/* a standby is ready: it serves its caches and takes over at once;
	 * a replica that lost its Lease keeps running as a standby */
	out[1] = (struct http_check) { .name = "leader-election", .ok = true };
	out[2] = (struct http_check) { .name = "ping", .ok = true };
	check_workers(st, &out[3]);
	for (size_t i = 0; i < st->nctls && n < HTTP_MAX_CHECKS; i++) {
		check_controller(&st->ctls[i], &out[n++]);
	}
	qsort(out, n, sizeof(*out), by_name);
	return (check_caches(st, out, n));
}

size_t
http_live_checks(struct http_check *out)
{
	out[0] = (struct http_check) { .name = "ping", .ok = true };
	return (1);
}

static bool
excluded(const struct http_query *q, const char *name, bool *used)
{
	bool hit = false;

	for (size_t i = 0; q != NULL && i < q->nexclude; i++) {
		if (strcmp(q->exclude[i], name) == 0) {
			used[i] = hit = true;
		}
	}
	return (hit);
}

static int
one_check(
        const struct http_check *c, size_t n, const char *one, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(c[i].name, one) != 0) {
			continue;
		}
		if (c[i].ok) {
			buf_puts(out, c[i].note[0] != '\0' ? c[i].note : "ok");
			return (200);
		}
		buf_printf(out, "internal server error: %s\n", c[i].reason);
		return (500);
	}
	buf_puts(out, "404 page not found\n");
	return (404);
}

int
http_probe_answer(const struct http_check *c, size_t n, const char *one,
        const struct http_query *q, struct buf *out)
{
	bool used[HTTP_MAX_EXCLUDE] = { false }, ok = true;
	struct buf list = BUF_INIT;

	if (one != NULL && *one != '\0') {
		return (one_check(c, n, one, out));
	}
	for (size_t i = 0; i < n; i++) {
		if (excluded(q, c[i].name, used)) {
			buf_printf(&list, "[+]%s excluded: ok\n", c[i].name);
			continue;
		}
		if (c[i].ok) {
			buf_printf(&list, "[+]%s %s", c[i].name,
			        c[i].note[0] != '\0' ? c[i].note : "ok");
		} else {
			buf_printf(&list, "[-]%s failed: reason withheld",
			        c[i].name);
			ok = false;
		}
		buf_printf(&list, c[i].detail[0] != '\0' ? " (%s)\n" : "%s\n",
		        c[i].detail);
	}
	for (size_t i = 0; q != NULL && i < q->nexclude; i++) {
		if (!used[i]) {
			buf_printf(&list,
			        "warn: some health checks cannot be "
			        "excluded: no matches for \"%s\"\n",
			        q->exclude[i]);
		}
	}
	if (ok && (q == NULL || !q->verbose)) {
		buf_puts(out, "ok");
	} else {
		buf_append(out, list.data, list.len);
		buf_puts(out,
		        ok ? "healthz check passed\n"
		           : "healthz check failed\n");
	}
	buf_fini(&list);
	return (ok ? 200 : 500);
}

/* ---- addresses ---- */

bool
http_disabled(const char *addr)
{
	return (addr == NULL || addr[0] == '\0' || strcmp(addr, "0") == 0);
}

int
http_parse_addr(const char *addr, char *host, size_t len, int *port)
{
	const char *colon, *h = addr;
	size_t hl;
	char *end;
	long p;

	if (addr[0] == '[') {
		const char *rb = strchr(addr, ']');
		if (rb == NULL || rb[1] != ':') {
			return (-1);
		}
		h = addr + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		if ((colon = strrchr(addr, ':')) == NULL
		        || memchr(addr, ':', (size_t)(colon - addr)) != NULL) {
			return (-1);
		}
		hl = (size_t)(colon - addr);
	}
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || p < 0
	        || p > 65535 || hl >= len) {
		return (-1);
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return (0);
}

/* ---- the server ---- */

/* One open connection, for the request deadline. */
struct http_conn {
	struct http_conn *next, *prev;
	int fd;
	int64_t since_ms; /* opened, or its previous answer sent */
	bool cut;         /* shut down past its deadline */
};

struct http {
	char what[32];
	char addr[80];
	int port;
	int fd;   /* the listening socket (MHD closes it) */
	int epfd; /* the daemon's epoll set */
	struct MHD_Daemon *d;
	http_fn *fn;
	void *arg;
	struct http_conn *conns; /* open connections, newest first */
};

static int
bind_one(int family, const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0;

	if (fd < 0) {
		return (-1);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	if (bind(fd, sa, len) != 0 || listen(fd, 64) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return (-1);
	}
	return (fd);
}

/* Every address (IPv6 and IPv4 when the host has IPv6) for "". */
static int
listen_any(int port)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
		.sin6_port = htons((uint16_t)port),
		.sin6_addr = in6addr_any };
	struct sockaddr_in s4 = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_ANY) };
	int fd = bind_one(AF_INET6, (struct sockaddr *)&s6, sizeof(s6));

	if (fd < 0 && errno != EADDRINUSE) {
		fd = bind_one(AF_INET, (struct sockaddr *)&s4, sizeof(s4));
	}
	return (fd);
}

static int
listen_on(const char *host, int port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV },
	                *res, *ai;
	char ps[8];
	int fd = -1, rc;

	if (host[0] == '\0') {
		if ((fd = listen_any(port)) < 0) {
			snprintf(err, errlen, "listen :%d: %s", port,
			        strerror(errno));
		}
		return (fd);
	}
	snprintf(ps, sizeof(ps), "%d", port);
	if ((rc = getaddrinfo(host, ps, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
		return (-1);
	}
	errno = EADDRNOTAVAIL;
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		fd = bind_one(ai->ai_family, ai->ai_addr, ai->ai_addrlen);
	}
	if (fd < 0) {
		snprintf(err, errlen, "listen %s:%d: %s", host, port,
		        strerror(errno));
	}
	freeaddrinfo(res);
	return (fd);
}

static enum MHD_Result
query_arg(
        void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct http_query *q = cls;

	(void)kind;
	if (strcmp(key, "verbose") == 0) {
		q->verbose = true;
	} else if (strcmp(key, "exclude") == 0 && value != NULL
	        && q->nexclude < HTTP_MAX_EXCLUDE) {
		q->exclude[q->nexclude++] = value;
	}
	return (MHD_YES);
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url,
        const char *method, const char *version, const char *upload,
        size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	struct http_query q = { .verbose = false };
	struct buf body = BUF_INIT;
	const char *ctype = HTTP_TEXT_PLAIN;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int status;

	(void)version, (void)upload, (void)upload_size, (void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		buf_puts(&body, "method not allowed\n");
	} else {
		MHD_get_connection_values(
		        conn, MHD_GET_ARGUMENT_KIND, query_arg, &q);
		status = h->fn(h->arg, url, &q, &body, &ctype);
	}
	resp = MHD_create_response_from_buffer(
	        body.len, body.data, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(resp, "Content-Type", ctype);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	buf_fini(&body);
	return (ret);
}

/* MHD_OPTION_NOTIFY_CONNECTION: tracks open connections. */
static void
on_conn(void *cls, struct MHD_Connection *conn, void **ctx,
        enum MHD_ConnectionNotificationCode toe)
{
	struct http *h = cls;
	struct http_conn *c = *ctx;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		c = xcalloc(1, sizeof(*c));
		ci = MHD_get_connection_info(
		        conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		c->fd = ci != NULL ? ci->connect_fd : -1;
		c->since_ms = timefmt_now_ms_mono();
		c->next = h->conns;
		if (h->conns != NULL) {
			h->conns->prev = c;
		}
		h->conns = c;
		*ctx = c;
	} else if (c != NULL) {
		if (c->prev != NULL) {
			c->prev->next = c->next;
		} else {
			h->conns = c->next;
		}
		if (c->next != NULL) {
			c->next->prev = c->prev;
		}
		free(c);
		*ctx = NULL;
	}
}

/* MHD_OPTION_NOTIFY_COMPLETED: an answer went out; the next request of
 * the connection gets a fresh deadline. */
static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *ci;
	struct http_conn *c;

	(void)cls, (void)con_cls, (void)toe;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci != NULL && (c = ci->socket_context) != NULL) {
		c->since_ms = timefmt_now_ms_mono();
	}
}

/* Shuts down the connections past their request deadline: libmicrohttpd
 * then reads the end of the stream and closes them itself. */
static void
cut_slow(struct http *h, int64_t now)
{
	for (struct http_conn *c = h->conns; c != NULL; c = c->next) {
		if (!c->cut && c->fd >= 0
		        && now - c->since_ms >= HTTP_REQUEST_TIMEOUT_MS) {
			(void)shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			log_debug("%s: connection closed: no request within "
			          "%d ms",
			        h->what, HTTP_REQUEST_TIMEOUT_MS);
		}
	}
}

/* The earliest request deadline of an open connection, or -1. */
static int64_t
conn_deadline(const struct http *h)
{
	int64_t t = -1;

	for (const struct http_conn *c = h->conns; c != NULL; c = c->next) {
		int64_t d = c->since_ms + HTTP_REQUEST_TIMEOUT_MS;
		if (!c->cut && (t < 0 || d < t)) {
			t = d;
		}
	}
	return (t);
}

static void
describe(struct http *h, const char *host)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "";

	if (getsockname(h->fd, (struct sockaddr *)&ss, &len) != 0) {
		return;
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		h->port = ntohs(s6->sin6_port);
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(h->addr, sizeof(h->addr), "[%s]:%d",
		        host[0] == '\0' ? "::" : ip, h->port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		h->port = ntohs(s4->sin_port);
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(h->addr, sizeof(h->addr), "%s:%d", ip, h->port);
	}
}

struct http *
http_new(const char *what, const char *addr, http_fn *fn, void *arg, char *err,
        size_t errlen)
{
	struct http *h;
	char host[64], e[200];
	int port;
	const union MHD_DaemonInfo *info;

	if (http_disabled(addr)
	        || http_parse_addr(addr, host, sizeof(host), &port) != 0) {
		snprintf(err, errlen,
		        "%s: bad bind address \"%s\" (want "
		        "HOST:PORT, :PORT or 0)",
		        what, addr != NULL ? addr : "");
		return (NULL);
	}
	h = xcalloc(1, sizeof(*h));
	snprintf(h->what, sizeof(h->what), "%s", what);
	h->fn = fn;
	h->arg = arg;
	if ((h->fd = listen_on(host, port, e, sizeof(e))) < 0) {
		snprintf(err, errlen, "%s: %s", what, e);
		free(h);
		return (NULL);
	}
	describe(h, host);
	h->d = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, answer, h,
	        MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_LIMIT,
	        (unsigned)HTTP_MAX_CONNS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	        (unsigned)HTTP_MAX_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT,
	        (unsigned)HTTP_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	        (size_t)HTTP_CONN_MEMORY, MHD_OPTION_NOTIFY_CONNECTION,
	        on_conn, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	        MHD_OPTION_END);
	info = h->d != NULL
	        ? MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD)
	        : NULL;
	if (info == NULL) {
		snprintf(
		        err, errlen, "%s: cannot start the HTTP server", what);
		if (h->d != NULL) {
			MHD_stop_daemon(h->d);
		}
		close(h->fd);
		free(h);
		return (NULL);
	}
	h->epfd = info->epoll_fd;
	return (h);
}

void
http_free(struct http *h)
{
	if (h == NULL) {
		return;
	}
	/* take the listening socket back, so that it is closed once */
	MHD_socket fd = MHD_quiesce_daemon(h->d);
	MHD_stop_daemon(h->d);
	if (fd != MHD_INVALID_SOCKET) {
		close(fd);
	}
	free(h);
}

int
http_port(const struct http *h)
{
	return (h->port);
}

const char *
http_addr(const struct http *h)
{
	return (h->addr);
}

size_t
http_fds(const struct http *h, struct pollfd *out, size_t max)
{
	if (h == NULL || max == 0) {
		return (0);
	}
	out[0] = (struct pollfd) { .fd = h->epfd, .events = POLLIN };
	return (1);
}

void
http_handle(struct http *h)
{
	if (h != NULL) {
		MHD_run(h->d);
		cut_slow(h, timefmt_now_ms_mono());
	}
}

int64_t
http_next_deadline(const struct http *h, int64_t now_ms)
{
	MHD_UNSIGNED_LONG_LONG t;
	int64_t d = -1, c;

	if (h == NULL) {
		return (-1);
	}
	if (MHD_get_timeout(h->d, &t) == MHD_YES) {
		d = t > 3600000 ? now_ms + 3600000 : now_ms + (int64_t)t;
	}
	c = conn_deadline(h);
	return (c >= 0 && (d < 0 || c < d) ? c : d);
}
