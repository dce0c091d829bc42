/*
 * kapi.c: the request engine of kapi.h.  Every request, blocking or not,
 * is a "transfer" on a libcurl multi handle: one easy handle per request,
 * connections cached by the multi.  A finished attempt is either
 * rescheduled (Retry-After, 401 re-authentication, transport retry of a
 * read) with a deadline the poll honours, or completed and handed to its
 * done callback.  kapi_do() runs the same engine on the client's private
 * multi, so both APIs share one retry policy.  Request builders are in
 * kapi_url.c, the blocking convenience calls in kapi_ops.c.
 */
#include "common/kapi.h"

#include <ctype.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"

#if defined(__x86_64__)
#define KAPI_ARCH "amd64"
#elif defined(__aarch64__)
#define KAPI_ARCH "arm64"
#else
#define KAPI_ARCH "unknown"
#endif

#define CONNECT_TIMEOUT_MS 10000L
#define WATCH_GRACE_S      60L
#define POLL_MAX_MS        3600000

struct kapi_client {
	struct kapi_conf *conf;
	char *ua;
	long timeout_ms;
	size_t max_list, max_body; /* caps on answer bodies */
	struct kapi_multi *sync;   /* for kapi_do, created on demand */
};

struct xfer {
	struct xfer *next;
	struct kapi_multi *m;
	uint64_t id;
	enum kapi_verb verb;
	CURL *easy;
	struct curl_slist *hdrs;
	struct curl_slist *connect_to;
	char *url;
	const char *method;
	const char *ctype;
	char *body;
	size_t body_len;
	char *bad; /* invalid request: the reason */
	int max_retries;
	size_t cap;   /* of the answer's body */
	bool too_big; /* the body passed it: transfer aborted */
	kapi_done_cb done;
	kapi_data_cb data;
	void *arg;
	struct kapi_resp resp;
	char retry_after[64];
	bool has_ra;
	bool delivered;
	bool reauthed;
	bool in_curl;
	bool cancelled;
	int transport_retries;
	int64_t due_ms; /* -1 = not waiting */
	char errbuf[CURL_ERROR_SIZE];
};

struct kapi_multi {
	struct kapi_client *c;
	CURLM *cm;
	struct xfer *head;
	uint64_t next_id;
	int npending;
	bool performing;
};

void
kapi_resp_init(struct kapi_resp *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body);
	r->err = (struct kapi_err)KAPI_ERR_INIT;
}

void
kapi_resp_fini(struct kapi_resp *r)
{
	buf_fini(&r->body);
	kapi_err_fini(&r->err);
}

/* ---- client ---------------------------------------------------------- */

struct kapi_client *
kapi_client_new(struct kapi_conf *conf, const char *user_agent)
{
	struct kapi_client *c = xcalloc(1, sizeof(*c));

	curl_global_init(CURL_GLOBAL_DEFAULT);
	c->conf = conf;
	c->ua = xasprintf("%s (linux/%s) sympozium",
	        user_agent != NULL ? user_agent : "sympozium/dev", KAPI_ARCH);
	c->timeout_ms = KAPI_TIMEOUT_MS;
	c->max_list = KAPI_MAX_LIST_BYTES;
	c->max_body = KAPI_MAX_BODY_BYTES;
	return (c);
}

void
kapi_client_free(struct kapi_client *c)
{
	if (c == NULL) {
		return;
	}
	kapi_multi_free(c->sync);
	free(c->ua);
	free(c);
	curl_global_cleanup();
}

void
kapi_client_set_timeout(struct kapi_client *c, long timeout_ms)
{
	c->timeout_ms = timeout_ms;
}

void
kapi_client_set_max_body(
        struct kapi_client *c, size_t list_bytes, size_t other_bytes)
{
	if (list_bytes > 0) {
		c->max_list = list_bytes;
	}
	if (other_bytes > 0) {
		c->max_body = other_bytes;
	}
}

struct kapi_conf *
kapi_client_conf(struct kapi_client *c)
{
	return (c->conf);
}

/* ---- curl callbacks -------------------------------------------------- */

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	long code = 0;

	if (x->cancelled) {
		return (0);
	}
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (x->data != NULL && code >= 200 && code <= 299) {
		x->delivered = true;
		x->data(x->arg, x->id, p, len);
		return (x->cancelled ? 0 : len);
	}
	if ((code < 200 || code > 299)
	        && x->resp.body.len >= KAPI_MAX_ERROR_BYTES) {
		return (len); /* the Status is at the start: drain the rest */
	}
	if (len > x->cap - x->resp.body.len) {
		/* aborts the transfer (CURLE_WRITE_ERROR) */
		x->too_big = true;
		buf_fini(&x->resp.body);
		return (0);
	}
	buf_append(&x->resp.body, p, len);
	return (len);
}

/* Returns the value of header line p if its name is name, else NULL. */
static const char *
header_value(const char *p, size_t len, const char *name, size_t *vlen)
{
	size_t nlen = strlen(name);

	if (len <= nlen || p[nlen] != ':' || strncasecmp(p, name, nlen) != 0) {
		return (NULL);
	}
	p += nlen + 1;
	len -= nlen + 1;
	while (len > 0 && isspace((unsigned char)*p)) {
		p++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)p[len - 1])) {
		len--;
	}
	*vlen = len;
	return (p);
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, vlen;
	const char *v;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		x->has_ra = false;
	} else if ((v = header_value(p, len, "Retry-After", &vlen)) != NULL) {
		if (vlen >= sizeof(x->retry_after)) {
			vlen = sizeof(x->retry_after) - 1;
		}
		memcpy(x->retry_after, v, vlen);
		x->retry_after[vlen] = '\0';
		x->has_ra = true;
	} else if ((v = header_value(p, len, "Warning", &vlen)) != NULL) {
		log_warnx("kapi: %s %s: server warning: %.*s", x->method,
		        x->url, (int)vlen, v);
	}
	return (len);
}

/* ---- transfers ------------------------------------------------------- */

static void
setup_tls(CURL *e, const struct kapi_conf *conf)
{
	struct curl_blob blob;

	if (conf->ca_pem != NULL) {
		blob.data = conf->ca_pem;
		blob.len = conf->ca_len ? conf->ca_len : strlen(conf->ca_pem);
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (conf->cert_pem != NULL && conf->key_pem != NULL) {
		blob.data = conf->cert_pem;
		blob.len = conf->cert_len ? conf->cert_len
		                          : strlen(conf->cert_pem);
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		blob.data = conf->key_pem;
		blob.len = conf->key_len ? conf->key_len
		                         : strlen(conf->key_pem);
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (conf->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (conf->username != NULL) {
		curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(e, CURLOPT_USERNAME, conf->username);
		curl_easy_setopt(e, CURLOPT_PASSWORD,
		        conf->password != NULL ? conf->password : "");
	}
}

/*
 * tls-server-name: the URL names the server by that name, so libcurl sends
 * it as SNI and verifies the certificate against it, and CONNECT_TO sends
 * the connection to the configured host and port.  The Host header
 * carries the name too, which the API server ignores.
 */
static void
setup_server_name(struct xfer *x, const char *name)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *url = NULL, *line;

	if (curl_url_set(u, CURLUPART_URL, x->url, CURLU_PATH_AS_IS)
	                != CURLUE_OK
	        || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK
	        || curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT)
	                != CURLUE_OK
	        || curl_url_set(u, CURLUPART_HOST, name, 0) != CURLUE_OK
	        || curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
		log_warnx("kapi: cannot use tls-server-name %s with %s", name,
		        x->url);
	} else {
		line = xasprintf("%s:%s:%s:%s", name, port, host, port);
		x->connect_to = curl_slist_append(NULL, line);
		free(line);
		curl_easy_setopt(x->easy, CURLOPT_URL, url);
		curl_easy_setopt(x->easy, CURLOPT_CONNECT_TO, x->connect_to);
	}
	curl_free(host);
	curl_free(port);
	curl_free(url);
	curl_url_cleanup(u);
}

static void
setup_method(struct xfer *x)
{
	CURL *e = x->easy;

	if (x->body != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		        (curl_off_t)x->body_len);
		if (strcmp(x->method, "POST") != 0) {
			curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method);
		}
	} else if (strcmp(x->method, "GET") == 0) {
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method);
	}
}

static void
setup_easy(struct xfer *x, const struct kapi_req *req)
{
	struct kapi_client *c = x->m->c;
	CURL *e = x->easy = curl_easy_init();
	long ts = req->list.timeout_seconds;

	curl_easy_setopt(e, CURLOPT_URL, x->url);
	/* The path goes out as built: libcurl never folds "/../" or "/./"
	 * (kapi_url refuses such segments; this holds for the server's
	 * own path prefix too). */
	curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, c->ua);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	if (x->verb == KAPI_WATCH) {
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
		        ts > 0 ? (ts + WATCH_GRACE_S) * 1000 : 0L);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
	} else {
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
		        req->timeout_ms > 0 ? req->timeout_ms : c->timeout_ms);
	}
	kapi_conf_refresh(c->conf); /* an exec plugin's client certificate */
	setup_tls(e, c->conf);
	if (c->conf->tls_server_name != NULL) {
		setup_server_name(x, c->conf->tls_server_name);
	}
	setup_method(x);
}

static void
build_headers(struct xfer *x)
{
	struct kapi_conf *conf = x->m->c->conf;
	struct curl_slist *h = NULL;
	const char *token;
	char *line;

	h = curl_slist_append(h, "Accept: application/json, */*");
	h = curl_slist_append(h, "Expect:");
	if (x->ctype != NULL) {
		line = xasprintf("Content-Type: %s", x->ctype);
		h = curl_slist_append(h, line);
		free(line);
	}
	token = conf->username == NULL
	        ? kapi_conf_token(conf, timefmt_now_ms_mono())
	        : NULL;
	if (token != NULL) {
		line = xasprintf("Authorization: Bearer %s", token);
		h = curl_slist_append(h, line);
		free(line);
	}
	curl_slist_free_all(x->hdrs);
	x->hdrs = h;
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, h);
}

static void
start_attempt(struct xfer *x)
{
	buf_reset(&x->resp.body);
	x->too_big = false;
	x->has_ra = false;
	x->errbuf[0] = '\0';
	x->due_ms = -1;
	build_headers(x);
	if (curl_multi_add_handle(x->m->cm, x->easy) != CURLM_OK) {
		/* Cannot happen outside callbacks; fail loudly rather than
		 * hang: the transfer completes as a transport error. */
		x->bad = xstrdup("cannot start the transfer");
		x->due_ms = 0;
		return;
	}
	x->in_curl = true;
}

static void
xfer_free(struct xfer *x)
{
	if (x->in_curl) {
		curl_multi_remove_handle(x->m->cm, x->easy);
	}
	if (x->easy != NULL) {
		curl_easy_cleanup(x->easy);
	}
	curl_slist_free_all(x->hdrs);
	curl_slist_free_all(x->connect_to);
	kapi_resp_fini(&x->resp);
	free(x->url);
	free(x->body);
	free(x->bad);
	free(x);
}

static void
unlink_xfer(struct xfer *x)
{
	struct xfer **pp;

	for (pp = &x->m->head; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == x) {
			*pp = x->next;
			x->m->npending--;
			return;
		}
	}
}

/* Hands the outcome to the done callback and frees the transfer. */
static void
complete(struct xfer *x)
{
	unlink_xfer(x);
	if (x->in_curl) {
		curl_multi_remove_handle(x->m->cm, x->easy);
		x->in_curl = false;
	}
	if (x->done != NULL) {
		x->done(x->arg, &x->resp);
	}
	xfer_free(x);
}

static void
schedule(struct xfer *x, int64_t due)
{
	x->due_ms = due;
	x->resp.retries++;
}

static bool
transport_retryable(const struct xfer *x, CURLcode rc)
{
	bool read = x->verb == KAPI_GET || x->verb == KAPI_LIST
	        || x->verb == KAPI_WATCH || x->verb == KAPI_LOG;

	if (!read || x->delivered
	        || x->transport_retries >= KAPI_TRANSPORT_RETRIES
	        || x->resp.retries >= x->max_retries) {
		return (false);
	}
	return (rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR
	        || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING);
}

static void
finish_transport(struct xfer *x, CURLcode rc)
{
	if (x->errbuf[0] != '\0') {
		kapi_err_transport(&x->resp.err, "%s %s: %s (%s)", x->method,
		        x->url, curl_easy_strerror(rc), x->errbuf);
	} else {
		kapi_err_transport(&x->resp.err, "%s %s: %s", x->method,
		        x->url, curl_easy_strerror(rc));
	}
	x->resp.code = 0;
	if (transport_retryable(x, rc)) {
		log_debug("kapi: %s %s: %s; retrying", x->method, x->url,
		        x->resp.err.message);
		schedule(x,
		        timefmt_now_ms_mono()
		                + (100L << x->transport_retries));
		x->transport_retries++;
		return;
	}
	complete(x);
}

static void
finish_http(struct xfer *x)
{
	struct kapi_conf *conf = x->m->c->conf;
	long code = 0;
	int ra;

	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	x->resp.code = code;
	if (code == 401 && !x->reauthed
	        && (conf->token_file != NULL || conf->exec != NULL)) {
		kapi_conf_token_invalidate(conf);
		x->reauthed = true;
		schedule(x, timefmt_now_ms_mono());
		return;
	}
	ra = x->has_ra ? kapi_retry_after_parse(x->retry_after) : -1;
	kapi_err_from_http(&x->resp.err, code, x->method, x->resp.body.data,
	        x->resp.body.len, x->has_ra ? x->retry_after : NULL);
	/* a resourceVersion newer than the server's stays so however long
	 * the wait: the caller must ask differently (relist with RV "") */
	if ((code == 429 || (code >= 500 && code <= 599)) && ra >= 0
	        && !x->delivered && x->resp.retries < x->max_retries
	        && !x->resp.err.rv_too_large) {
		if (ra > KAPI_RETRY_AFTER_CAP) {
			ra = KAPI_RETRY_AFTER_CAP;
		}
		log_debug("kapi: %s %s: %ld, retrying in %d s", x->method,
		        x->url, code, ra);
		schedule(x, timefmt_now_ms_mono() + (int64_t)ra * 1000);
		return;
	}
	complete(x);
}

/* The body passed its cap: a failed request, never retried here. */
static void
finish_too_big(struct xfer *x)
{
	const char *path = strstr(x->url, "://");

	path = path != NULL ? strchr(path + 3, '/') : NULL;
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->resp.code);
	kapi_err_set(&x->resp.err, KAPI_ETOOBIG, x->resp.code,
	        "%s %s: answer body exceeds the cap of %zu bytes; transfer "
	        "aborted",
	        x->method, path != NULL ? path : x->url, x->cap);
	log_warnx("kapi: %s", x->resp.err.message);
	complete(x);
}

/* One attempt ended (CURLMSG_DONE). */
static void
finish_attempt(struct xfer *x, CURLcode rc)
{
	curl_multi_remove_handle(x->m->cm, x->easy);
	x->in_curl = false;
	if (x->cancelled) {
		unlink_xfer(x);
		xfer_free(x);
	} else if (x->too_big) {
		finish_too_big(x);
	} else if (rc != CURLE_OK) {
		finish_transport(x, rc);
	} else {
		finish_http(x);
	}
}

/* ---- multi ----------------------------------------------------------- */

struct kapi_multi *
kapi_multi_new(struct kapi_client *c)
{
	struct kapi_multi *m = xcalloc(1, sizeof(*m));

	m->c = c;
	m->cm = curl_multi_init();
	m->next_id = 1;
	return (m);
}

void
kapi_multi_free(struct kapi_multi *m)
{
	struct xfer *x;

	if (m == NULL) {
		return;
	}
	while ((x = m->head) != NULL) {
		m->head = x->next;
		xfer_free(x);
	}
	curl_multi_cleanup(m->cm);
	free(m);
}

static struct xfer *
xfer_new(struct kapi_multi *m, const struct kapi_req *req)
{
	struct xfer *x = xcalloc(1, sizeof(*x));
	struct buf url = BUF_INIT, del = BUF_INIT;
	const char *why;

	x->m = m;
	x->id = m->next_id++;
	x->verb = req->verb;
	x->method = kapi_method(req->verb);
	x->ctype = kapi_content_type(req);
	x->max_retries = req->max_retries == 0 ? KAPI_MAX_RETRIES
	        : req->max_retries < 0         ? 0
	                                       : req->max_retries;
	x->cap = req->max_body > 0       ? req->max_body
	        : req->verb == KAPI_LIST ? m->c->max_list
	                                 : m->c->max_body;
	kapi_resp_init(&x->resp);
	x->resp.id = x->id;
	if (kapi_url(m->c->conf, req, &url, &why) == -1) {
		x->bad = xasprintf("invalid request: %s", why);
	}
	x->url = buf_detach(&url, NULL);
	if (req->body != NULL) {
		x->body_len
		        = req->body_len ? req->body_len : strlen(req->body);
		x->body = xmemdup(req->body, x->body_len + 1);
		x->body[x->body_len] = '\0';
	} else if (req->verb == KAPI_DELETE
	        && kapi_delete_body(req, &del) == 0) {
		x->body = buf_detach(&del, &x->body_len);
	} else if (req->verb == KAPI_DELETE) {
		x->ctype = NULL;
	} else if (x->ctype != NULL) {
		x->body = xstrdup("");
	}
	return (x);
}

static uint64_t
submit(struct kapi_multi *m, const struct kapi_req *req, kapi_data_cb data,
        kapi_done_cb done, void *arg)
{
	struct xfer *x = xfer_new(m, req), **pp;

	x->done = done;
	x->data = data;
	x->arg = arg;
	for (pp = &m->head; *pp != NULL; pp = &(*pp)->next) { }
	*pp = x;
	m->npending++;
	if (x->bad == NULL) {
		setup_easy(x, req);
	}
	if (x->bad != NULL || m->performing) {
		x->due_ms = 0;
	} else {
		start_attempt(x);
	}
	return (x->id);
}

uint64_t
kapi_multi_submit(struct kapi_multi *m, const struct kapi_req *req,
        kapi_done_cb done, void *arg)
{
	return (submit(m, req, NULL, done, arg));
}

uint64_t
kapi_multi_watch(struct kapi_multi *m, const struct kapi_req *req,
        kapi_data_cb data, kapi_done_cb done, void *arg)
{
	struct kapi_req w = *req;

	w.verb = KAPI_WATCH;
	return (submit(m, &w, data, done, arg));
}

static struct xfer *
find(struct kapi_multi *m, uint64_t id)
{
	struct xfer *x;

	for (x = m->head; x != NULL; x = x->next) {
		if (x->id == id && !x->cancelled) {
			return (x);
		}
	}
	return (NULL);
}

int
kapi_multi_cancel(struct kapi_multi *m, uint64_t id)
{
	struct xfer *x = find(m, id);

	if (x == NULL) {
		return (-1);
	}
	x->cancelled = true;
	if (!m->performing || !x->in_curl) {
		unlink_xfer(x);
		xfer_free(x);
	}
	return (0);
}

int
kapi_multi_poll(
        struct kapi_multi *m, struct kapi_pollfd *extra, int n, int timeout_ms)
{
	struct curl_waitfd *w = NULL;
	int64_t now = timefmt_now_ms_mono();
	struct xfer *x;
	int i, got = 0, numfds = 0;

	if (timeout_ms < 0 || timeout_ms > POLL_MAX_MS) {
		timeout_ms = POLL_MAX_MS;
	}
	for (x = m->head; x != NULL; x = x->next) {
		if (!x->in_curl && x->due_ms >= 0
		        && x->due_ms - now < timeout_ms) {
			timeout_ms
			        = x->due_ms > now ? (int)(x->due_ms - now) : 0;
		}
	}
	if (n > 0) {
		w = xcalloc((size_t)n, sizeof(*w));
	}
	for (i = 0; i < n; i++) {
		w[i].fd = extra[i].fd;
		w[i].events = (short)(((extra[i].events & POLLIN)
		                                      ? CURL_WAIT_POLLIN
		                                      : 0)
		        | ((extra[i].events & POLLPRI) ? CURL_WAIT_POLLPRI : 0)
		        | ((extra[i].events & POLLOUT) ? CURL_WAIT_POLLOUT
		                                       : 0));
	}
	if (curl_multi_poll(m->cm, w, (unsigned)n, timeout_ms, &numfds)
	        != CURLM_OK) {
		free(w);
		return (-1);
	}
	for (i = 0; i < n; i++) {
		extra[i].revents = (short)(((w[i].revents & CURL_WAIT_POLLIN)
		                                           ? POLLIN
		                                           : 0)
		        | ((w[i].revents & CURL_WAIT_POLLPRI) ? POLLPRI : 0)
		        | ((w[i].revents & CURL_WAIT_POLLOUT) ? POLLOUT : 0));
		got += extra[i].revents != 0;
	}
	free(w);
	return (got);
}

/* Starts due retries; completes invalid requests.  Restarts the scan
 * after a callback, which may have changed the list. */
static void
start_due(struct kapi_multi *m)
{
	int64_t now = timefmt_now_ms_mono();
	struct xfer *x;

again:
	for (x = m->head; x != NULL; x = x->next) {
		if (x->in_curl || x->due_ms < 0 || x->due_ms > now) {
			continue;
		}
		if (x->bad != NULL) {
			kapi_err_set(&x->resp.err, KAPI_EBADREQUEST, 0,
			        "%s %s: %s", x->method, x->url, x->bad);
			complete(x);
			goto again;
		}
		start_attempt(x);
	}
}

/* Removes transfers cancelled while curl was running callbacks. */
static void
sweep(struct kapi_multi *m)
{
	struct xfer *x;

again:
	for (x = m->head; x != NULL; x = x->next) {
		if (x->cancelled) {
			unlink_xfer(x);
			xfer_free(x);
			goto again;
		}
	}
}

int
kapi_multi_perform(struct kapi_multi *m)
{
	struct xfer *x;
	CURLMsg *msg;
	int running, left;

	start_due(m);
	m->performing = true;
	curl_multi_perform(m->cm, &running);
	m->performing = false;
	sweep(m);
	while ((msg = curl_multi_info_read(m->cm, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE) {
			continue;
		}
		x = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
		if (x != NULL) {
			finish_attempt(x, msg->data.result);
		}
	}
	start_due(m);
	return (m->npending);
}

int
kapi_multi_pending(const struct kapi_multi *m)
{
	return (m->npending);
}

void
kapi_multi_wakeup(struct kapi_multi *m)
{
	curl_multi_wakeup(m->cm);
}

/* ---- blocking -------------------------------------------------------- */

struct sync_state {
	bool done;
	struct kapi_resp *out;
};

static void
sync_done(void *arg, struct kapi_resp *r)
{
	struct sync_state *st = arg;
	struct buf tmp = r->body;

	st->done = true;
	st->out->id = r->id;
	st->out->code = r->code;
	st->out->retries = r->retries;
	r->body = st->out->body;
	st->out->body = tmp;
	kapi_err_move(&st->out->err, &r->err);
}

enum kapi_rc
kapi_do(struct kapi_client *c, const struct kapi_req *req,
        struct kapi_resp *out)
{
	struct sync_state st = { false, out };

	kapi_resp_init(out);
	if (c->sync == NULL) {
		c->sync = kapi_multi_new(c);
	}
	kapi_multi_submit(c->sync, req, sync_done, &st);
	for (;;) {
		kapi_multi_perform(c->sync);
		if (st.done) {
			break;
		}
		kapi_multi_poll(c->sync, NULL, 0, 1000);
	}
	return (out->err.rc);
}
