/*
 * health.c: the health socket (health.h): the non-blocking server on a
 * Unix socket with its peer check and the JSON rendering of struct
 * stats.  The supervisor's answers to each request are ops.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/health.h"

struct conn {
	int fd;
	int64_t deadline;
	char in[HP_REQ_MAX];
	size_t inlen;
	char *refusal; /* the answer to any request (peer refused) */
	char *out;     /* reply line, NULL until answered */
	size_t outlen, outoff;
};

struct health {
	int lfd;
	char *path;
	health_fn *fn;
	void *arg;
	struct conn conns[HEALTH_MAX_CONNS];
	size_t nconns;
};

bool
health_peer_allowed(uid_t peer, uid_t self)
{
	return (peer == self || peer == 0);
}

/* ---- the listening socket ---- */

static int
prepare_path(const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (lstat(path, &sb) != 0) {
		return (errno == ENOENT ? 0 : -1);
	}
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, errlen,
		        "health socket %s: exists and is not a "
		        "socket",
		        path);
		return (-1);
	}
	if (health_alive(path)) {
		snprintf(err, errlen,
		        "health socket %s: in use by another "
		        "process",
		        path);
		return (-1);
	}
	unlink(path);
	return (0);
}

bool
health_alive(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		return (false);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return (false);
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	/* EAGAIN: a full backlog is still a live server */
	rc = rc == 0 || errno == EAGAIN;
	close(fd);
	return (rc != 0);
}

static int
listen_on(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "health socket %s: path too long", path);
		return (-1);
	}
	if (prepare_path(path, err, errlen) != 0) {
		return (-1);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "health socket: %s", strerror(errno));
		return (-1);
	}
	old = umask(077); /* born 0600: no window with a wider mode */
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, 16) != 0) {
		snprintf(err, errlen, "health socket %s: %s", path,
		        strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

struct health *
health_new(
        const char *path, health_fn *fn, void *arg, char *err, size_t errlen)
{
	int fd = listen_on(path, err, errlen);
	struct health *h;

	if (fd < 0) {
		return (NULL);
	}
	h = xcalloc(1, sizeof(*h));
	h->lfd = fd;
	h->path = xstrdup(path);
	h->fn = fn;
	h->arg = arg;
	return (h);
}

static void
conn_close(struct health *h, size_t i)
{
	close(h->conns[i].fd);
	free(h->conns[i].out);
	free(h->conns[i].refusal);
	h->conns[i] = h->conns[--h->nconns];
}

void
health_free(struct health *h)
{
	if (h == NULL) {
		return;
	}
	while (h->nconns > 0) {
		conn_close(h, 0);
	}
	close(h->lfd);
	unlink(h->path);
	free(h->path);
	free(h);
}

size_t
health_fds(const struct health *h, struct pollfd *out, size_t max)
{
	size_t n = 0;

	if (h == NULL || max == 0) {
		return (0);
	}
	out[n++] = (struct pollfd) { h->lfd, POLLIN, 0 };
	for (size_t i = 0; i < h->nconns && n < max; i++) {
		out[n++] = (struct pollfd) { h->conns[i].fd,
			h->conns[i].out != NULL ? POLLOUT : POLLIN, 0 };
	}
	return (n);
}

int64_t
health_next_deadline(const struct health *h)
{
	int64_t t = -1;

	for (size_t i = 0; h != NULL && i < h->nconns; i++) {
		if (t < 0 || h->conns[i].deadline < t) {
			t = h->conns[i].deadline;
		}
	}
	return (t);
}

size_t
health_nconns(const struct health *h)
{
	return (h != NULL ? h->nconns : 0);
}

/* ---- connections ---- */

/* A new connection; refusal (taken, may be NULL) answers any request:
 * the request is read all the same, so closing never resets the peer
 * before it reads the answer. */
static void
add_conn(struct health *h, int fd, char *refusal, int64_t now)
{
	struct conn *c = &h->conns[h->nconns++];

	c->fd = fd;
	c->deadline = now + HEALTH_TIMEOUT_MS;
	c->inlen = 0;
	c->refusal = refusal;
	c->out = NULL;
	c->outlen = c->outoff = 0;
}

static char *
check_peer(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) {
		log_warnx("health socket: SO_PEERCRED: %s; refused",
		        strerror(errno));
		return (hp_reply_error("permission denied: peer credentials "
		                       "unavailable"));
	}
	if (!health_peer_allowed(cr.uid, geteuid())) {
		log_warnx("health socket: refused pid %d uid %u (only uid %u "
		          "or root may connect)",
		        (int)cr.pid, (unsigned)cr.uid, (unsigned)geteuid());
		return (hp_reply_error("permission denied: uid %u is neither "
		                       "the supervisor's uid %u nor root",
		        (unsigned)cr.uid, (unsigned)geteuid()));
	}
	return (NULL);
}

static void
accept_all(struct health *h, int64_t now)
{
	int fd;

	while ((fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC))
	        >= 0) {
		if (h->nconns == HEALTH_MAX_CONNS) {
			static const char busy[]
			        = "{\"ok\":false,\"error\":"
			          "\"busy: too many connections\"}\n";
			(void)!send(fd, busy, sizeof(busy) - 1,
			        MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		add_conn(h, fd, check_peer(fd), now);
	}
}

static void
answer(struct health *h, struct conn *c, size_t len, int64_t now)
{
	struct hp_req req;
	char err[256];

	if (c->refusal != NULL) {
		c->out = c->refusal;
		c->refusal = NULL;
	} else if (hp_req_decode(c->in, len, &req, err, sizeof(err)) != 0) {
		c->out = hp_reply_error("bad request: %s", err);
	} else {
		c->out = h->fn(h->arg, &req, now);
	}
	c->outlen = strlen(c->out);
	if (c->outlen > HP_REPLY_MAX) {
		free(c->out);
		c->out = hp_reply_error("reply too large");
		c->outlen = strlen(c->out);
	}
}

/* Reads what is there; answers once a line (or EOF) is in.  Returns -1
 * when the connection is to be closed now. */
static int
conn_read(struct health *h, struct conn *c, int64_t now)
{
	ssize_t r;
	char *nl;

	while ((r = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen,
	                MSG_DONTWAIT))
	        > 0) {
		c->inlen += (size_t)r;
		if ((nl = memchr(c->in, '\n', c->inlen)) != NULL) {
			answer(h, c, (size_t)(nl - c->in), now);
			return (0);
		}
		if (c->inlen == sizeof(c->in)) {
			answer(h, c, c->inlen, now); /* too long */
			return (0);
		}
	}
	if (r == 0) {
		if (c->inlen == 0) {
			return (-1);
		}
		answer(h, c, c->inlen, now);
		return (0);
	}
	return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
	                ? 0
	                : -1);
}

/* Writes what it can; -1 when done (or failed): close. */
static int
conn_write(struct conn *c)
{
	ssize_t r;

	while (c->outoff < c->outlen) {
		r = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
		        MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0) {
			return (errno == EAGAIN || errno == EWOULDBLOCK
			                        || errno == EINTR
			                ? 0
			                : -1);
		}
		c->outoff += (size_t)r;
	}
	shutdown(c->fd, SHUT_WR);
	/* unread request bytes would turn the close into a reset */
	while (recv(c->fd, c->in, sizeof(c->in), MSG_DONTWAIT) > 0) { }
	return (-1);
}

void
health_handle(struct health *h, int64_t now_ms)
{
	if (h == NULL) {
		return;
	}
	accept_all(h, now_ms);
	for (size_t i = 0; i < h->nconns;) {
		struct conn *c = &h->conns[i];
		int rc = 0;
		if (c->out == NULL) {
			rc = conn_read(h, c, now_ms);
		}
		if (rc == 0 && c->out != NULL) {
			rc = conn_write(c);
		}
		if (rc != 0 || now_ms >= c->deadline) {
			conn_close(h, i);
			continue;
		}
		i++;
	}
}

/* ---- rendering ---- */

static void
add_int(json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void
add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void
add_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

static int64_t
ago(int64_t t, int64_t now)
{
	return (t >= 0 ? now - t : -1);
}

static json_object *
results_json(const uint64_t *r)
{
	json_object *o = json_object_new_object();

	for (int i = 0; i < STATS_NRESULTS; i++) {
		add_int(o, stats_result_label((enum stats_result)i),
		        (int64_t)r[i]);
	}
	return (o);
}

static json_object *
latency_json(const struct stats_hist *h, bool buckets)
{
	json_object *o = json_object_new_object();

	add_int(o, "count", (int64_t)h->count);
	add_int(o, "p50", stats_hist_quantile(h, 0.5));
	add_int(o, "p90", stats_hist_quantile(h, 0.9));
	add_int(o, "p99", stats_hist_quantile(h, 0.99));
	add_int(o, "max", stats_hist_quantile(h, 1.0));
	json_object_object_add(
	        o, "sumSeconds", json_object_new_double(h->sum_s));
	if (buckets) {
		json_object *a = json_object_new_array();
		uint64_t cum = 0;
		for (size_t b = 0; b < STATS_NBUCKETS; b++) {
			json_object *e = json_object_new_array();
			cum += h->counts[b];
			json_object_array_add(
			        e, json_object_new_double(stats_buckets[b]));
			json_object_array_add(
			        e, json_object_new_int64((int64_t)cum));
			json_object_array_add(a, e);
		}
		json_object_object_add(o, "buckets", a);
	}
	return (o);
}

json_object *
health_worker_json(const struct stats_worker *w, bool detail, int64_t now)
{
	json_object *o = json_object_new_object();
	char name[STATS_NAME_MAX + 16];

	snprintf(name, sizeof(name), "%s-%d", w->controller, w->index);
	add_str(o, "name", name);
	add_str(o, "controller", w->controller);
	add_int(o, "index", w->index);
	add_int(o, "pid", (int64_t)w->pid);
	add_str(o, "state", stats_wstate_name(w->state));
	add_int(o, "startedAgoMs", ago(w->started_ms, now));
	add_int(o, "restarts", (int64_t)w->restarts);
	add_str(o, "lastExit", w->last_exit);
	add_int(o, "heartbeatAgeMs", w->hb_age_ms);
	add_str(o, "key", w->key);
	add_int(o, "keyAgeMs",
	        w->key[0] != '\0' ? ago(w->key_since_ms, now) : -1);
	json_object_object_add(o, "reconciles", results_json(w->results));
	add_int(o, "lost", (int64_t)w->lost);
	add_str(o, "lastError", w->last_error);
	add_int(o, "lastErrorAgoMs", ago(w->last_error_ms, now));
	json_object_object_add(
	        o, "latencyMs", latency_json(&w->latency, detail));
	return (o);
}

json_object *
health_workers_json(const struct stats *st, int64_t now)
{
	json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < st->nworkers; i++) {
		json_object_array_add(
		        a, health_worker_json(&st->workers[i], false, now));
	}
	json_object_object_add(o, "workers", a);
	return (o);
}

/* {"rule": count, ...} of a controller's policy violations. */
static json_object *
rules_json(const struct stats_ctl *c)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; i < STATS_RULES_MAX && c->rules[i].rule[0]; i++) {
		add_int(o, c->rules[i].rule, (int64_t)c->rules[i].count);
	}
	return (o);
}

static json_object *
ctl_json(const struct stats_ctl *c, int64_t now)
{
	json_object *o = json_object_new_object();

	add_str(o, "name", c->name);
	add_bool(o, "paused", c->paused);
	add_int(o, "workers", c->workers);
	add_int(o, "depth", (int64_t)c->depth);
	add_int(o, "parked", (int64_t)c->parked);
	add_int(o, "queuedHigh", (int64_t)c->queued_high);
	add_int(o, "queuedLow", (int64_t)c->queued_low);
	add_int(o, "processing", (int64_t)c->processing);
	add_int(o, "adds", (int64_t)c->adds);
	add_int(o, "retries", (int64_t)c->retries);
	add_int(o, "quarantined", (int64_t)c->quarantined);
	add_int(o, "violations", (int64_t)c->violations);
	json_object_object_add(o, "violationsByRule", rules_json(c));
	add_str(o, "state", fault_state_name(c->fault));
	add_str(o, "stateReason", c->fault_reason);
	add_int(o, "stateSinceAgoMs", ago(c->fault_since_ms, now));
	add_int(o, "faults", (int64_t)c->faults);
	add_int(o, "failures", (int64_t)c->failures);
	json_object_object_add(o, "reconciles", results_json(c->results));
	json_object_object_add(
	        o, "latencyMs", latency_json(&c->latency, false));
	return (o);
}

static json_object *
kind_json(const struct stats_kind *k)
{
	json_object *o = json_object_new_object();

	add_str(o, "name", k->name);
	add_str(o, "controller", k->controller);
	add_bool(o, "synced", k->synced);
	add_int(o, "objects", (int64_t)k->objects);
	add_int(o, "lists", (int64_t)k->lists);
	add_int(o, "relists", (int64_t)k->relists);
	add_int(o, "watches", (int64_t)k->watches);
	add_int(o, "watchRestarts", (int64_t)k->watch_restarts);
	add_int(o, "watchErrors", (int64_t)k->watch_errors);
	add_int(o, "events", (int64_t)k->events);
	add_str(o, "resource", k->resource);
	add_int(o, "ageMs", k->age_ms);
	add_int(o, "failing", (int64_t)k->failing);
	return (o);
}

static json_object *
api_json(const struct stats *st)
{
	json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();

	add_int(o, "total", (int64_t)st->api_total);
	add_int(o, "errors", (int64_t)st->api_errors);
	for (size_t i = 0; i < st->napi; i++) {
		json_object *e = json_object_new_object();
		add_str(e, "verb", stats_verb_name(st->api[i].verb));
		add_int(e, "code", st->api[i].code);
		add_int(e, "count", (int64_t)st->api[i].count);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "requests", a);
	return (o);
}

static json_object *
sup_json(const struct stats *st, int64_t now)
{
	json_object *o = json_object_new_object();

	add_int(o, "pid", (int64_t)getpid());
	add_str(o, "identity", st->identity);
	add_str(o, "role", st->leading ? "leader" : "standby");
	add_int(o, "roleSinceAgoMs", ago(st->leading_since_ms, now));
	add_bool(o, "leaderElection", st->leader_elect);
	add_str(o, "leaseHolder", st->holder);
	add_int(o, "epoch", st->epoch);
	add_bool(o, "stopping", st->stopping);
	add_int(o, "uptimeMs", now - st->start_ms);
	add_bool(o, "cacheSynced", st->all_synced);
	add_int(o, "cacheStalenessLimitMs", st->cache_stale_ms);
	add_int(o, "relists", (int64_t)st->relists);
	add_int(o, "watchRestarts", (int64_t)st->watch_restarts);
	json_object_object_add(o, "api", api_json(st));
	return (o);
}

json_object *
health_status_json(const struct stats *st, int64_t now)
{
	json_object *o = health_workers_json(st, now);
	json_object *c = json_object_new_array(), *k = json_object_new_array();

	json_object_object_add(o, "supervisor", sup_json(st, now));
	for (size_t i = 0; i < st->nctls; i++) {
		json_object_array_add(c, ctl_json(&st->ctls[i], now));
	}
	for (size_t i = 0; i < st->nkinds; i++) {
		json_object_array_add(k, kind_json(&st->kinds[i]));
	}
	json_object_object_add(o, "controllers", c);
	json_object_object_add(o, "kinds", k);
	return (o);
}

size_t
health_match(const struct stats *st, const char *name, size_t *out, size_t max)
{
	size_t n = 0;
	char full[STATS_NAME_MAX + 16];

	for (size_t i = 0; i < st->nworkers && n < max; i++) {
		const struct stats_worker *w = &st->workers[i];
		snprintf(full, sizeof(full), "%s-%d", w->controller, w->index);
		if (strcmp(full, name) == 0
		        || strcmp(w->controller, name) == 0) {
			out[n++] = i;
		}
	}
	return (n);
}
