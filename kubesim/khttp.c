/*
 * khttp.c: kubesim's HTTP/1.1 front end.  libmicrohttpd runs one thread
 * per connection, so a watch response simply blocks in its content
 * callback (kwatch_read).  Owns: the listening socket, TLS material,
 * bearer-token authentication (401 Status), request bodies (bounded like
 * the real server's 3 MiB), the request log (one JSON line per request),
 * and the admin endpoint (/_kubesim/close-watches, /_kubesim/compact).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/khttp.h"

#define MAX_BODY   (3 * 1024 * 1024)
#define MAX_ADMINS 16

struct admin {
	char *name;
	khttp_admin_fn fn;
	void *arg;
};

struct khttp {
	struct ksrv *ks;
	struct MHD_Daemon *d;
	int fd;
	char *token;
	FILE *log;
	pthread_mutex_t log_mu;
	struct admin admins[MAX_ADMINS];
	size_t nadmins;
	khttp_filter_fn filter;
	void *filter_arg;
	khttp_accept_fn accept;
	void *accept_arg;
};

/* Per-request state (MHD's con_cls). */
struct conn {
	struct buf body;
	bool too_big;
	struct kq *q;
	size_t nq;
};

static void
json_str(struct buf *b, const char *s)
{
	json_object *o = json_object_new_string(s != NULL ? s : "");

	buf_puts(b,
	        json_object_to_json_string_ext(o,
	                JSON_C_TO_STRING_PLAIN
	                        | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void
query_string(const struct conn *c, struct buf *b)
{
	for (size_t i = 0; i < c->nq; i++) {
		buf_printf(b, "%s%s", i > 0 ? "&" : "", c->q[i].k);
		if (c->q[i].v != NULL) {
			buf_printf(b, "=%s", c->q[i].v);
		}
	}
}

static void
log_request(struct khttp *h, struct MHD_Connection *mc, const struct conn *c,
        const char *method, const char *url, const struct kresp *rs)
{
	char ts[TIMEFMT_RFC3339_MICRO_LEN];
	struct buf b = BUF_INIT, q = BUF_INIT;

	if (h->log == NULL) {
		return;
	}
	timefmt_rfc3339_micro(timefmt_now_us_real(), ts);
	query_string(c, &q);
	buf_printf(&b, "{\"ts\":\"%s\",\"verb\":", ts);
	json_str(&b, rs->verb != NULL ? rs->verb : "");
	buf_puts(&b, ",\"method\":");
	json_str(&b, method);
	buf_puts(&b, ",\"path\":");
	json_str(&b, url);
	buf_puts(&b, ",\"query\":");
	json_str(&b, buf_str(&q));
	buf_printf(&b, ",\"code\":%d,\"userAgent\":", rs->code);
	json_str(&b,
	        MHD_lookup_connection_value(
	                mc, MHD_HEADER_KIND, "User-Agent"));
	if (rs->rv != 0) {
		buf_printf(&b, ",\"rv\":\"%" PRIu64 "\"", rs->rv);
	}
	buf_puts(&b, "}\n");
	pthread_mutex_lock(&h->log_mu);
	fwrite(b.data, 1, b.len, h->log);
	fflush(h->log);
	pthread_mutex_unlock(&h->log_mu);
	buf_fini(&b);
	buf_fini(&q);
}

static enum MHD_Result
collect_arg(
        void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct conn *c = cls;

	(void)kind;
	if (c->nq >= 64) {
		return (MHD_NO);
	}
	c->q = xreallocarray(c->q, c->nq + 1, sizeof(*c->q));
	c->q[c->nq].k = xstrdup(key);
	c->q[c->nq].v = value != NULL ? xstrdup(value) : NULL;
	c->nq++;
	return (MHD_YES);
}

static bool
authorized(struct khttp *h, struct MHD_Connection *mc)
{
	const char *a;

	if (h->token == NULL) {
		return (true);
	}
	a = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Authorization");
	return (a != NULL && strncmp(a, "Bearer ", 7) == 0
	        && strcmp(a + 7, h->token) == 0);
}

static void
builtin_admin(struct khttp *h, const char *p, struct kresp *rs)
{
	if (strcmp(p, "close-watches") == 0) {
		log_info("admin: closing every open watch");
		kstore_kick(h->ks->st);
		kresp_error(rs, 200, NULL, "watches closed");
	} else if (strcmp(p, "compact") == 0) {
		kstore_lock(h->ks->st);
		kstore_compact(h->ks->st);
		log_info("admin: history compacted at rv %" PRIu64,
		        kstore_rv(h->ks->st));
		kstore_unlock(h->ks->st);
		kresp_error(rs, 200, NULL, "history compacted");
	} else {
		kresp_error(rs, 404, "NotFound", "no admin endpoint %s", p);
	}
}

static void
admin(struct khttp *h, const struct kreq *rq, struct kresp *rs)
{
	const char *p = rq->path + strlen("/_kubesim/");
	size_t n = strcspn(p, "/");

	rs->verb = "admin";
	for (size_t i = 0; i < h->nadmins; i++) {
		if (strlen(h->admins[i].name) == n
		        && strncmp(p, h->admins[i].name, n) == 0) {
			h->admins[i].fn(h->admins[i].arg, rq,
			        p[n] == '/' ? p + n + 1 : "", rs);
			return;
		}
	}
	if (strcmp(rq->method, "POST") != 0) {
		kresp_error(rs, 405, "MethodNotAllowed",
		        "admin endpoints take POST");
		return;
	}
	builtin_admin(h, p, rs);
}

void
khttp_admin_register(
        struct khttp *h, const char *name, khttp_admin_fn fn, void *arg)
{
	if (h->nadmins == MAX_ADMINS) {
		fatalx("khttp: too many admin endpoints");
	}
	h->admins[h->nadmins].name = xstrdup(name);
	h->admins[h->nadmins].fn = fn;
	h->admins[h->nadmins].arg = arg;
	h->nadmins++;
}

void
khttp_set_filter(struct khttp *h, khttp_filter_fn fn, void *arg)
{
	h->filter = fn;
	h->filter_arg = arg;
}

void
khttp_set_accept(struct khttp *h, khttp_accept_fn fn, void *arg)
{
	h->accept = fn;
	h->accept_arg = arg;
}

static enum MHD_Result
accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct khttp *h = cls;

	(void)addr;
	(void)len;
	if (h->accept != NULL && !h->accept(h->accept_arg)) {
		return (MHD_NO);
	}
	return (MHD_YES);
}

static ssize_t
watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	size_t n = kwatch_read(cls, buf, max);

	(void)pos;
	return (n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n);
}

static void
watch_done(void *cls)
{
	kwatch_free(cls);
}

static enum MHD_Result
send_response(struct MHD_Connection *mc, struct kresp *rs)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char ra[16];

	if (rs->watch != NULL) {
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
		        16 * 1024, watch_reader, rs->watch, watch_done);
		rs->watch = NULL;
	} else {
		r = MHD_create_response_from_buffer(rs->body.len,
		        rs->body.data != NULL ? rs->body.data : (void *)"",
		        MHD_RESPMEM_MUST_COPY);
	}
	MHD_add_response_header(r, "Content-Type", rs->ctype);
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	if (rs->retry_after > 0) {
		snprintf(ra, sizeof(ra), "%d", rs->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (rs->warning != NULL) {
		MHD_add_response_header(r, "Warning", rs->warning);
	}
	ret = MHD_queue_response(mc, (unsigned)rs->code, r);
	MHD_destroy_response(r);
	return (ret);
}

/* Runs the filter; true when it answered. */
static bool
filtered(struct khttp *h, const struct kreq *rq, struct kresp *rs)
{
	const char *verb;
	char *plural = NULL;
	bool answered;

	if (h->filter == NULL) {
		return (false);
	}
	verb = kverb_classify(rq, &plural);
	answered = h->filter(
	        h->filter_arg, rq, verb, plural != NULL ? plural : "", rs);
	free(plural);
	if (answered && rs->verb == NULL) {
		rs->verb = verb;
	}
	return (answered);
}

static void
serve(struct khttp *h, struct MHD_Connection *mc, struct conn *c,
        const char *url, const char *method, struct kresp *rs)
{
	struct kreq rq = {
		.method = method,
		.path = url,
		.q = c->q,
		.nq = c->nq,
		.ctype = MHD_lookup_connection_value(
		        mc, MHD_HEADER_KIND, "Content-Type"),
		.accept
		= MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Accept"),
		.body = c->body.data != NULL ? c->body.data : "",
		.body_len = c->body.len,
	};

	if (!authorized(h, mc)) {
		kresp_error(rs, 401, "Unauthorized", "Unauthorized");
	} else if (c->too_big) {
		kresp_error(rs, 413, "RequestEntityTooLarge",
		        "the request body exceeds %d bytes", MAX_BODY);
	} else if (strncmp(url, "/_kubesim/", 10) == 0) {
		admin(h, &rq, rs);
	} else if (!filtered(h, &rq, rs)) {
		kverb_handle(h->ks, &rq, rs);
	}
}

static enum MHD_Result
handler(void *cls, struct MHD_Connection *mc, const char *url,
        const char *method, const char *version, const char *upload,
        size_t *upload_size, void **con_cls)
{
	struct khttp *h = cls;
	struct conn *c = *con_cls;
	struct kresp rs;
	enum MHD_Result ret;

	(void)version;
	if (c == NULL) {
		c = xcalloc(1, sizeof(*c));
		buf_init(&c->body);
		*con_cls = c;
		return (MHD_YES);
	}
	if (*upload_size > 0) {
		if (c->body.len + *upload_size > MAX_BODY) {
			c->too_big = true;
		} else {
			buf_append(&c->body, upload, *upload_size);
		}
		*upload_size = 0;
		return (MHD_YES);
	}
	MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, collect_arg, c);
	kresp_init(&rs);
	serve(h, mc, c, url, method, &rs);
	log_request(h, mc, c, method, url, &rs);
	log_debug("%s %s -> %d", method, url, rs.code);
	ret = send_response(mc, &rs);
	kresp_fini(&rs);
	return (ret);
}

static void
completed(void *cls, struct MHD_Connection *mc, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
	struct conn *c = *con_cls;

	(void)cls;
	(void)mc;
	(void)toe;
	if (c == NULL) {
		return;
	}
	for (size_t i = 0; i < c->nq; i++) {
		free(c->q[i].k);
		free(c->q[i].v);
	}
	free(c->q);
	buf_fini(&c->body);
	free(c);
	*con_cls = NULL;
}

/* Binds "ADDR:PORT" / "[ADDR]:PORT".  The socket, or -1 (logged). */
static int
listen_on(const char *spec, char *host, size_t hostlen, int *port)
{
	char *s = xstrdup(spec), *h = s, *p = strrchr(s, ':');
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE,
		.ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1;

	if (p == NULL) {
		log_warnx("--listen %s: want ADDR:PORT", spec);
		free(s);
		return (-1);
	}
	*p++ = '\0';
	if (h[0] == '[') {
		h++;
		h[strcspn(h, "]")] = '\0';
	}
	if (getaddrinfo(h, p, &hints, &ai) != 0 || ai == NULL) {
		log_warnx("--listen %s: not a numeric address and port", spec);
		free(s);
		return (-1);
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0
	        || listen(fd, 512) != 0
	        || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		log_warn("--listen %s", spec);
		if (fd >= 0) {
			close(fd);
		}
		fd = -1;
	} else {
		*port = ntohs(ss.ss_family == AF_INET6
		                ? ((struct sockaddr_in6 *)&ss)->sin6_port
		                : ((struct sockaddr_in *)&ss)->sin_port);
		snprintf(host, hostlen,
		        ai->ai_family == AF_INET6 ? "[%s]" : "%s", h);
	}
	freeaddrinfo(ai);
	free(s);
	return (fd);
}

struct khttp *
khttp_start(
        struct ksrv *ks, const struct khttp_opts *o, char *url, size_t urllen)
{
	struct khttp *h = xcalloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD
	        | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL
	        | MHD_USE_ERROR_LOG;
	char host[128];
	int port = 0;

	h->ks = ks;
	pthread_mutex_init(&h->log_mu, NULL);
	h->fd = listen_on(o->listen, host, sizeof(host), &port);
	if (h->fd < 0) {
		goto fail;
	}
	if (o->request_log != NULL
	        && (h->log = fopen(o->request_log, "ae")) == NULL) {
		log_warn("--request-log %s", o->request_log);
		goto fail;
	}
	h->token = o->token != NULL ? xstrdup(o->token) : NULL;
	if (o->cert_pem != NULL) {
		flags |= MHD_USE_TLS;
	}
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)o->key_pem },
		{ MHD_OPTION_HTTPS_MEM_CERT, 0,
		        (void *)(uintptr_t)o->cert_pem },
		{ MHD_OPTION_END, 0, NULL },
	};
	if (o->cert_pem == NULL) {
		tls[0].option = MHD_OPTION_END;
	}
	h->d = MHD_start_daemon(flags, 0, accept_policy, h, handler, h,
	        MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_NOTIFY_COMPLETED,
	        completed, h, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0,
	        MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (h->d == NULL) {
		log_warnx("cannot start the HTTP server");
		goto fail;
	}
	free(ks->addr);
	ks->addr = xasprintf("%s:%d", host, port);
	snprintf(url, urllen, "%s://%s:%d", o->cert_pem ? "https" : "http",
	        host, port);
	return (h);
fail:
	if (h->fd >= 0) {
		close(h->fd);
	}
	if (h->log != NULL) {
		fclose(h->log);
	}
	free(h->token);
	free(h);
	return (NULL);
}

void
khttp_stop(struct khttp *h)
{
	if (h == NULL) {
		return;
	}
	h->ks->stopping = 1;
	kstore_kick(h->ks->st);
	MHD_stop_daemon(h->d);
	close(h->fd);
	if (h->log != NULL) {
		fclose(h->log);
	}
	pthread_mutex_destroy(&h->log_mu);
	for (size_t i = 0; i < h->nadmins; i++) {
		free(h->admins[i].name);
	}
	free(h->token);
	free(h);
}
