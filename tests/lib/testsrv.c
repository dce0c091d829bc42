/*
 * testsrv.c: the scripted HTTP(S) test server of testsrv.h over
 * libmicrohttpd, thread per connection.  The raw request URI is captured
 * with MHD's URI log callback (before MHD unescapes anything), so tests
 * see exactly what a client put on the wire.  Client certificates are
 * checked against the trusted CA with libcrypto (testcert.c); the peer
 * certificate comes from the GnuTLS session MHD exposes, looked up with
 * dlsym because the tests do not link GnuTLS directly.
 */
#include "tests/lib/testsrv.h"

#include <ctype.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/buf.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "tests/lib/testcert.h"

struct gnutls_datum {
	unsigned char *data;
	unsigned int size;
};
typedef const struct gnutls_datum *(*get_peers_fn)(void *, unsigned int *);

struct queued {
	struct testsrv_resp resp;
	struct queued *next;
};

struct testsrv {
	struct MHD_Daemon *mhd;
	int port;
	char url[64];
	char *trust_ca;
	atomic_bool stopping;

	pthread_mutex_t mu; /* protects everything below */
	char *token;
	testsrv_handler handler;
	void *handler_arg;
	struct queued *head, **tail;
	int nqueued;
	struct testsrv_req **reqs;
	int nreqs;
};

/* Per-request state, created by the URI log callback. */
struct rctx {
	char *uri;
	struct buf body;
	int calls;
};

struct stream {
	struct testsrv *srv;
	struct testsrv_resp resp;
	int idx;
	size_t off;
};

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1) { }
}

static char *
dup_or_null(const char *s)
{
	return (s != NULL ? xstrdup(s) : NULL);
}

static void
resp_fini(struct testsrv_resp *r)
{
	int i;

	free(r->content_type);
	free(r->headers);
	free(r->body);
	for (i = 0; i < r->nchunks; i++) {
		free(r->chunks[i]);
	}
	free(r->chunks);
	memset(r, 0, sizeof(*r));
}

static void
resp_copy(struct testsrv_resp *dst, const struct testsrv_resp *src)
{
	int i;

	*dst = *src;
	dst->content_type = dup_or_null(src->content_type);
	dst->headers = dup_or_null(src->headers);
	if (src->body != NULL && src->body_len == 0) {
		dst->body_len = strlen(src->body);
	}
	dst->body = NULL;
	if (src->body != NULL) {
		dst->body = xmalloc(dst->body_len + 1);
		memcpy(dst->body, src->body, dst->body_len);
		dst->body[dst->body_len] = '\0';
	}
	dst->chunks = NULL;
	if (src->nchunks > 0) {
		dst->chunks = xcalloc((size_t)src->nchunks, sizeof(char *));
		for (i = 0; i < src->nchunks; i++) {
			dst->chunks[i] = xstrdup(src->chunks[i]);
		}
	}
}

static void
req_free(struct testsrv_req *r)
{
	free(r->method);
	free(r->uri);
	free(r->path);
	free(r->authorization);
	free(r->content_type);
	free(r->accept);
	free(r->user_agent);
	free(r->body);
	free(r->client_cn);
	free(r);
}

static char *
header(struct MHD_Connection *conn, const char *name)
{
	const char *v
	        = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);

	return (xstrdup(v != NULL ? v : ""));
}

static char *
client_cn(struct testsrv *srv, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	const struct gnutls_datum *peers;
	get_peers_fn get_peers;
	unsigned int n = 0;
	char *cn;

	if (srv->trust_ca == NULL) {
		return (xstrdup(""));
	}
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	*(void **)&get_peers
	        = dlsym(RTLD_DEFAULT, "gnutls_certificate_get_peers");
	if (ci == NULL || get_peers == NULL
	        || (peers = get_peers(ci->tls_session, &n)) == NULL
	        || n == 0) {
		return (xstrdup(""));
	}
	cn = testcert_verify_der(
	        peers[0].data, (long)peers[0].size, srv->trust_ca);
	return (cn != NULL ? cn : xstrdup(""));
}

static struct testsrv_req *
record(struct testsrv *srv, struct MHD_Connection *conn, const char *method,
        struct rctx *rc)
{
	struct testsrv_req *r = xcalloc(1, sizeof(*r));
	size_t plen = strcspn(rc->uri, "?");

	r->method = xstrdup(method);
	r->uri = xstrdup(rc->uri);
	r->path = xstrndup(rc->uri, plen);
	r->authorization = header(conn, "Authorization");
	r->content_type = header(conn, "Content-Type");
	r->accept = header(conn, "Accept");
	r->user_agent = header(conn, "User-Agent");
	r->body_len = rc->body.len;
	r->body = xmemdup(buf_str(&rc->body), rc->body.len + 1);
	r->client_cn = client_cn(srv, conn);
	r->t_ms = timefmt_now_ms_mono();
	pthread_mutex_lock(&srv->mu);
	srv->reqs = xreallocarray(
	        srv->reqs, (size_t)srv->nreqs + 1, sizeof(*srv->reqs));
	srv->reqs[srv->nreqs++] = r;
	pthread_mutex_unlock(&srv->mu);
	return (r);
}

/* Picks the answer: 401 on a bad token, else the queue, else the
 * handler, else 404. */
static void
choose(struct testsrv *srv, const struct testsrv_req *req,
        struct testsrv_resp *out)
{
	testsrv_handler fn;
	struct queued *q;
	void *arg;
	char *want = NULL;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&srv->mu);
	if (srv->token != NULL) {
		want = xasprintf("Bearer %s", srv->token);
	}
	if (want != NULL && strcmp(want, req->authorization) != 0) {
		pthread_mutex_unlock(&srv->mu);
		free(want);
		out->code = 401;
		out->content_type = xstrdup("text/plain; charset=utf-8");
		out->body = xstrdup("Unauthorized\n");
		out->body_len = strlen(out->body);
		return;
	}
	free(want);
	if ((q = srv->head) != NULL) {
		srv->head = q->next;
		if (srv->head == NULL) {
			srv->tail = &srv->head;
		}
		srv->nqueued--;
		pthread_mutex_unlock(&srv->mu);
		*out = q->resp;
		free(q);
		return;
	}
	fn = srv->handler;
	arg = srv->handler_arg;
	pthread_mutex_unlock(&srv->mu);
	if (fn != NULL) {
		fn(arg, req, out);
	}
	if (out->code == 0) {
		resp_fini(out);
		out->code = 404;
		out->body
		        = xstrdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		                  "\"metadata\":{},\"status\":\"Failure\","
		                  "\"message\":\"not scripted\","
		                  "\"reason\":\"NotFound\",\"code\":404}");
		out->body_len = strlen(out->body);
	}
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct stream *s = cls;
	const char *chunk;
	size_t n;

	(void)pos;
	if (s->idx >= s->resp.nchunks && s->resp.repeat_last
	        && !atomic_load(&s->srv->stopping)) {
		s->idx = s->resp.nchunks - 1;
	}
	while (s->idx >= s->resp.nchunks) {
		if (!s->resp.hold || atomic_load(&s->srv->stopping)) {
			return (MHD_CONTENT_READER_END_OF_STREAM);
		}
		sleep_ms(20);
	}
	if (s->off == 0 && s->idx > 0 && s->resp.pause_ms > 0) {
		sleep_ms(s->resp.pause_ms);
	}
	chunk = s->resp.chunks[s->idx];
	n = strlen(chunk) - s->off;
	if (n > max) {
		n = max;
	}
	memcpy(out, chunk + s->off, n);
	s->off += n;
	if (s->off == strlen(chunk)) {
		s->idx++;
		s->off = 0;
	}
	return ((ssize_t)n);
}

static void
stream_free(void *cls)
{
	struct stream *s = cls;

	resp_fini(&s->resp);
	free(s);
}

static void
add_headers(struct MHD_Response *mr, const struct testsrv_resp *r)
{
	char *lines, *line, *save = NULL, *colon, *v;

	MHD_add_response_header(mr, "Content-Type",
	        r->content_type != NULL ? r->content_type
	                                : "application/json");
	if (r->headers == NULL) {
		return;
	}
	lines = xstrdup(r->headers);
	for (line = strtok_r(lines, "\r\n", &save); line != NULL;
	        line = strtok_r(NULL, "\r\n", &save)) {
		if ((colon = strchr(line, ':')) == NULL) {
			continue;
		}
		*colon = '\0';
		for (v = colon + 1; isspace((unsigned char)*v); v++) { }
		MHD_add_response_header(mr, line, v);
	}
	free(lines);
}

static struct MHD_Response *
build_response(struct testsrv *srv, struct testsrv_resp *r)
{
	struct MHD_Response *mr;
	struct stream *s;

	if (r->nchunks > 0) {
		s = xcalloc(1, sizeof(*s));
		s->srv = srv;
		s->resp = *r;
		memset(r, 0, sizeof(*r));
		s->resp.code = s->resp.code != 0 ? s->resp.code : 200;
		mr = MHD_create_response_from_callback(
		        MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
		add_headers(mr, &s->resp);
		return (mr);
	}
	mr = MHD_create_response_from_buffer(r->body_len,
	        r->body != NULL ? r->body : (void *)"", MHD_RESPMEM_MUST_COPY);
	add_headers(mr, r);
	return (mr);
}

static enum MHD_Result
answer(struct testsrv *srv, struct MHD_Connection *conn, const char *method,
        struct rctx *rc)
{
	struct testsrv_resp r;
	struct MHD_Response *mr;
	const struct testsrv_req *req;
	enum MHD_Result ret;
	int code;

	req = record(srv, conn, method, rc);
	choose(srv, req, &r);
	if (r.delay_ms > 0) {
		sleep_ms(r.delay_ms);
	}
	code = r.code;
	mr = build_response(srv, &r);
	ret = MHD_queue_response(conn, (unsigned)code, mr);
	MHD_destroy_response(mr);
	resp_fini(&r);
	return (ret);
}

static enum MHD_Result
access_cb(void *cls, struct MHD_Connection *conn, const char *url,
        const char *method, const char *version, const char *upload,
        size_t *upload_size, void **con_cls)
{
	struct rctx *rc = *con_cls;

	(void)url;
	(void)version;
	if (rc == NULL) {
		return (MHD_NO);
	}
	if (rc->calls++ == 0) {
		return (MHD_YES);
	}
	if (*upload_size > 0) {
		buf_append(&rc->body, upload, *upload_size);
		*upload_size = 0;
		return (MHD_YES);
	}
	return (answer(cls, conn, method, rc));
}

static void *
uri_cb(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct rctx *rc = xcalloc(1, sizeof(*rc));

	(void)cls;
	(void)conn;
	rc->uri = xstrdup(uri);
	return (rc);
}

static void
completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
	struct rctx *rc = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rc != NULL) {
		free(rc->uri);
		buf_fini(&rc->body);
		free(rc);
		*con_cls = NULL;
	}
}

static struct MHD_Daemon *
start_mhd(struct testsrv *srv, const struct testsrv_opts *o)
{
	struct sockaddr_in sin;
	struct MHD_OptionItem opts[8];
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION
	        | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	int n = 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	opts[n++] = (struct MHD_OptionItem) { MHD_OPTION_SOCK_ADDR, 0, &sin };
	opts[n++] = (struct MHD_OptionItem) { MHD_OPTION_URI_LOG_CALLBACK,
		(intptr_t)uri_cb, srv };
	opts[n++] = (struct MHD_OptionItem) { MHD_OPTION_NOTIFY_COMPLETED,
		(intptr_t)completed_cb, srv };
	if (o != NULL && o->cert_pem != NULL) {
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem) { MHD_OPTION_HTTPS_MEM_KEY,
			0, (void *)(uintptr_t)o->key_pem };
		opts[n++]
		        = (struct MHD_OptionItem) { MHD_OPTION_HTTPS_MEM_CERT,
			          0, (void *)(uintptr_t)o->cert_pem };
		if (o->trust_ca_pem != NULL) {
			opts[n++] = (struct MHD_OptionItem) {
				MHD_OPTION_HTTPS_MEM_TRUST, 0,
				(void *)(uintptr_t)o->trust_ca_pem
			};
		}
	}
	opts[n] = (struct MHD_OptionItem) { MHD_OPTION_END, 0, NULL };
	return (MHD_start_daemon(flags, 0, NULL, NULL, access_cb, srv,
	        MHD_OPTION_ARRAY, opts, MHD_OPTION_END));
}

struct testsrv *
testsrv_start(const struct testsrv_opts *o)
{
	struct testsrv *srv = xcalloc(1, sizeof(*srv));
	const union MHD_DaemonInfo *di;

	pthread_mutex_init(&srv->mu, NULL);
	srv->tail = &srv->head;
	if (o != NULL) {
		srv->token = dup_or_null(o->token);
		srv->trust_ca = dup_or_null(o->trust_ca_pem);
	}
	if ((srv->mhd = start_mhd(srv, o)) == NULL
	        || (di = MHD_get_daemon_info(
	                    srv->mhd, MHD_DAEMON_INFO_BIND_PORT))
	                == NULL) {
		testsrv_stop(srv);
		return (NULL);
	}
	srv->port = di->port;
	snprintf(srv->url, sizeof(srv->url), "%s://127.0.0.1:%d",
	        o != NULL && o->cert_pem != NULL ? "https" : "http",
	        srv->port);
	return (srv);
}

void
testsrv_stop(struct testsrv *srv)
{
	struct queued *q;

	if (srv == NULL) {
		return;
	}
	atomic_store(&srv->stopping, true);
	if (srv->mhd != NULL) {
		MHD_stop_daemon(srv->mhd);
	}
	while ((q = srv->head) != NULL) {
		srv->head = q->next;
		resp_fini(&q->resp);
		free(q);
	}
	testsrv_clear(srv);
	free(srv->token);
	free(srv->trust_ca);
	pthread_mutex_destroy(&srv->mu);
	free(srv);
}

int
testsrv_port(const struct testsrv *srv)
{
	return (srv->port);
}

const char *
testsrv_url(const struct testsrv *srv)
{
	return (srv->url);
}

void
testsrv_set_token(struct testsrv *srv, const char *token)
{
	pthread_mutex_lock(&srv->mu);
	free(srv->token);
	srv->token = dup_or_null(token);
	pthread_mutex_unlock(&srv->mu);
}

void
testsrv_set_handler(struct testsrv *srv, testsrv_handler fn, void *arg)
{
	pthread_mutex_lock(&srv->mu);
	srv->handler = fn;
	srv->handler_arg = arg;
	pthread_mutex_unlock(&srv->mu);
}

void
testsrv_push_resp(struct testsrv *srv, const struct testsrv_resp *r)
{
	struct queued *q = xcalloc(1, sizeof(*q));

	resp_copy(&q->resp, r);
	pthread_mutex_lock(&srv->mu);
	*srv->tail = q;
	srv->tail = &q->next;
	srv->nqueued++;
	pthread_mutex_unlock(&srv->mu);
}

void
testsrv_push(
        struct testsrv *srv, int code, const char *headers, const char *body)
{
	struct testsrv_resp r;

	memset(&r, 0, sizeof(r));
	r.code = code;
	r.headers = (char *)(uintptr_t)headers;
	r.body = (char *)(uintptr_t)body;
	r.body_len = body != NULL ? strlen(body) : 0;
	testsrv_push_resp(srv, &r);
}

void
testsrv_push_stream(struct testsrv *srv, int code, const char *const *chunks,
        int nchunks, int pause_ms, bool hold)
{
	struct testsrv_resp r;

	memset(&r, 0, sizeof(r));
	r.code = code;
	r.chunks = (char **)(uintptr_t)chunks;
	r.nchunks = nchunks;
	r.pause_ms = pause_ms;
	r.hold = hold;
	testsrv_push_resp(srv, &r);
}

int
testsrv_queued(struct testsrv *srv)
{
	int n;

	pthread_mutex_lock(&srv->mu);
	n = srv->nqueued;
	pthread_mutex_unlock(&srv->mu);
	return (n);
}

int
testsrv_nreqs(struct testsrv *srv)
{
	int n;

	pthread_mutex_lock(&srv->mu);
	n = srv->nreqs;
	pthread_mutex_unlock(&srv->mu);
	return (n);
}

const struct testsrv_req *
testsrv_req(struct testsrv *srv, int i)
{
	const struct testsrv_req *r = NULL;

	pthread_mutex_lock(&srv->mu);
	if (i >= 0 && i < srv->nreqs) {
		r = srv->reqs[i];
	}
	pthread_mutex_unlock(&srv->mu);
	return (r);
}

void
testsrv_clear(struct testsrv *srv)
{
	int i;

	pthread_mutex_lock(&srv->mu);
	for (i = 0; i < srv->nreqs; i++) {
		req_free(srv->reqs[i]);
	}
	free(srv->reqs);
	srv->reqs = NULL;
	srv->nreqs = 0;
	pthread_mutex_unlock(&srv->mu);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9') {
		return (c - '0');
	}
	c = tolower(c);
	return (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
}

static char *
unescape(const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0
		        && hexval(s[i + 2]) >= 0) {
			buf_putc(&b,
			        (char)(hexval(s[i + 1]) * 16
			                + hexval(s[i + 2])));
			i += 2;
		} else {
			buf_putc(&b, s[i] == '+' ? ' ' : s[i]);
		}
	}
	return (buf_detach(&b, NULL));
}

char *
testsrv_query(const struct testsrv_req *req, const char *key)
{
	const char *q = strchr(req->uri, '?'), *p, *eq, *end;
	size_t klen = strlen(key);

	if (q == NULL) {
		return (NULL);
	}
	for (p = q + 1; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		end = p + strcspn(p, "&");
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq == NULL) {
			eq = end;
		}
		if ((size_t)(eq - p) == klen && memcmp(p, key, klen) == 0) {
			return (eq == end ? xstrdup("")
			                  : unescape(eq + 1,
			                          (size_t)(end - eq - 1)));
		}
	}
	return (NULL);
}
