/*
 * egress.c: the OTLP/gRPC transport thread (egress.h).  Owns its queue (a
 * mutex and a condition variable shared with the supervisor's loop, the
 * only state the two threads share), one libcurl easy handle, and the
 * up/down state behind its two log lines.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/egress.h"

#define RESP_MAX 65536

struct req {
	enum otel_signal sig;
	char *data; /* gRPC frame: flag, length, message; or a JSON body */
	size_t len;
	char *url;  /* a plain POST (egress_post()); NULL: an OTLP export */
	char *what; /* the plain POST's subject, for the log */
};

struct egress {
	char *endpoint;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv, idle_cv;
	struct req q[EGRESS_QUEUE_MAX];
	size_t head, n;
	bool stop, busy, started, down;
	struct egress_stats st;
	CURL *easy;
	struct curl_slist *extra; /* OTEL_EXPORTER_OTLP_HEADERS */
};

/* What the answer said: grpc-status from its headers or trailers. */
struct answer {
	int grpc_status; /* -1: none */
	char grpc_message[256];
	size_t body;
};

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n;

	if (len > 12 && strncasecmp(p, "grpc-status:", 12) == 0) {
		a->grpc_status = atoi(p + 12);
	} else if (len > 13 && strncasecmp(p, "grpc-message:", 13) == 0) {
		size_t m = len - 13 < sizeof(a->grpc_message) - 1
		        ? len - 13
		        : sizeof(a->grpc_message) - 1;

		memcpy(a->grpc_message, p + 13, m);
		a->grpc_message[m] = '\0';
		a->grpc_message[strcspn(a->grpc_message, "\r\n")] = '\0';
	}
	return (len);
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;

	(void)p;
	a->body += size * n;
	return (a->body > RESP_MAX ? 0 : size * n);
}

/* Whether an answer is worth a retry (OTLP's retryable gRPC codes, a
 * transport failure, an overloaded HTTP hop). */
static bool
retryable(CURLcode rc, long code, int grpc)
{
	if (rc != CURLE_OK) {
		return (true);
	}
	if (code != 200) {
		return (code == 429 || code == 502 || code == 503
		        || code == 504);
	}
	return (grpc == 1 || grpc == 4 || grpc == 8 || grpc == 10 || grpc == 11
	        || grpc == 14 || grpc == 15 || grpc == -1);
}

/* A plain JSON POST (egress_post()), once: its outcome logged as
 * upstream's memory store logs it. */
static void
plain(struct egress *x, const struct req *r)
{
	struct curl_slist *h = NULL;
	struct answer a = { .grpc_status = -1 };
	long code = 0;
	CURLcode rc;

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_reset(x->easy);
	curl_easy_setopt(x->easy, CURLOPT_URL, r->url);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, r->data);
	curl_easy_setopt(
	        x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(x->easy, CURLOPT_USERAGENT, "sympoziumd");
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, (long)EGRESS_POST_MS);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, &a);
	rc = curl_easy_perform(x->easy);
	curl_slist_free_all(h);
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	pthread_mutex_lock(&x->mu);
	x->st.posts_ok += rc == CURLE_OK && code == 200;
	x->st.posts_failed += !(rc == CURLE_OK && code == 200);
	pthread_mutex_unlock(&x->mu);
	if (rc != CURLE_OK) {
		log_debug("failed to persist failure memory for %s: %s",
		        r->what, curl_easy_strerror(rc));
	} else if (code != 200) {
		log_debug(
		        "memory server returned %ld for the failure store of "
		        "%s",
		        code, r->what);
	} else {
		log_info(
		        "persisted failure memory to the memory server for %s",
		        r->what);
	}
}

/* One export; 0, or -1 with why (*retry: worth another try). */
static int
post(struct egress *x, const struct req *r, char *why, size_t n, bool *retry)
{
	struct answer a = { .grpc_status = -1 };
	struct curl_slist *h = NULL;
	char url[512];
	long code = 0;
	CURLcode rc;

	snprintf(url, sizeof(url), "http://%s%s", x->endpoint,
	        otel_path(r->sig));
	h = curl_slist_append(h, "Content-Type: application/grpc");
	h = curl_slist_append(h, "TE: trailers");
	h = curl_slist_append(h, "Expect:");
	for (struct curl_slist *e = x->extra; e != NULL; e = e->next) {
		h = curl_slist_append(h, e->data);
	}
	curl_easy_reset(x->easy);
	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	curl_easy_setopt(x->easy, CURLOPT_HTTP_VERSION,
	        (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, r->data);
	curl_easy_setopt(
	        x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(x->easy, CURLOPT_USERAGENT, "sympoziumd-otlp");
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	/* a connection per export: libcurl 7.88 sends nothing for a second
	 * POST on a reused prior-knowledge h2c connection (seen against
	 * tests/integration/otlp_receiver.py); at one export a second at
	 * most, a connect is cheap */
	curl_easy_setopt(x->easy, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, (long)EGRESS_TIMEOUT_MS);
	curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, &a);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, &a);
	rc = curl_easy_perform(x->easy);
	curl_slist_free_all(h);
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	*retry = retryable(rc, code, a.grpc_status);
	if (rc != CURLE_OK) {
		snprintf(why, n, "%s", curl_easy_strerror(rc));
	} else if (code != 200) {
		snprintf(why, n, "HTTP status %ld", code);
	} else if (a.grpc_status != 0) {
		snprintf(why, n, "grpc-status %d%s%s", a.grpc_status,
		        a.grpc_message[0] != '\0' ? ": " : "", a.grpc_message);
	} else {
		return (0);
	}
	return (-1);
}

static void
report(struct egress *x, const struct req *r, int rc, const char *why)
{
	static const char *const name[] = { "metrics", "traces", "logs" };

	pthread_mutex_lock(&x->mu);
	if (rc == 0) {
		x->st.sent[r->sig]++;
	} else {
		x->st.failed[r->sig]++;
	}
	pthread_mutex_unlock(&x->mu);
	if (rc != 0 && !x->down) {
		log_warnx("otlp: export of %s to %s failed: %s (further "
		          "failures are counted, not logged)",
		        name[r->sig], x->endpoint, why);
	} else if (rc == 0 && x->down) {
		log_info("otlp: exports to %s work again", x->endpoint);
	}
	x->down = rc != 0;
}

/* post() with retries: EGRESS_RETRIES more after retryable failures,
 * 1 s, 2 s, 4 s ... apart (the Go exporter's retry, shortened), given up
 * when the exporter stops. */
static int
attempt(struct egress *x, const struct req *r, char *why, size_t n)
{
	int64_t wait_ms = 1000;
	bool retry = false;
	int rc = post(x, r, why, n, &retry);

	for (int i = 0; rc != 0 && retry && i < EGRESS_RETRIES; i++) {
		struct timespec until;
		bool stop;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += wait_ms / 1000;
		pthread_mutex_lock(&x->mu);
		while (!x->stop
		        && pthread_cond_timedwait(&x->cv, &x->mu, &until)
		                == 0) { }
		stop = x->stop;
		pthread_mutex_unlock(&x->mu);
		if (stop) {
			break;
		}
		wait_ms *= 2;
		rc = post(x, r, why, n, &retry);
	}
	return (rc);
}

static void
req_free(struct req *r)
{
	free(r->data);
	free(r->url);
	free(r->what);
}

static void *
run(void *arg)
{
	struct egress *x = arg;

	pthread_mutex_lock(&x->mu);
	for (;;) {
		struct req r;
		char why[320];
		int rc;

		while (x->n == 0 && !x->stop) {
			pthread_cond_wait(&x->cv, &x->mu);
		}
		if (x->n == 0) {
			break;
		}
		r = x->q[x->head];
		x->head = (x->head + 1) % EGRESS_QUEUE_MAX;
		x->n--;
		x->busy = true;
		pthread_mutex_unlock(&x->mu);
		if (r.url != NULL) {
			plain(x, &r);
		} else {
			rc = attempt(x, &r, why, sizeof(why));
			report(x, &r, rc, why);
		}
		req_free(&r);
		pthread_mutex_lock(&x->mu);
		x->busy = false;
		pthread_cond_broadcast(&x->idle_cv);
	}
	pthread_mutex_unlock(&x->mu);
	return (NULL);
}

/* An HTTP token (RFC 9110), lowercase as gRPC metadata keys are. */
static bool
token_ok(char *k)
{
	for (char *p = k; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
		            || (*p >= 'A' && *p <= 'Z')
		            || strchr("-_.", *p))) {
			return (false);
		}
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	}
	return (true);
}

static struct curl_slist *
headers_of(const char *env)
{
	struct otel_pair p[OTEL_PAIRS_MAX];
	struct curl_slist *l = NULL;
	int n;

	if (env == NULL || env[0] == '\0') {
		return (NULL);
	}
	n = otel_pairs(env, p, OTEL_PAIRS_MAX);
	if (n < 0) {
		log_warnx("otlp: OTEL_EXPORTER_OTLP_HEADERS does not parse: "
		          "ignored");
		return (NULL);
	}
	for (int i = 0; i < n; i++) {
		char *line;

		if (!token_ok(p[i].key)) {
			log_warnx("otlp: header %s is no valid name: ignored",
			        p[i].key);
			continue;
		}
		line = xasprintf("%s: %s", p[i].key, p[i].value);
		l = curl_slist_append(l, line);
		free(line);
	}
	otel_pairs_free(p, (size_t)n);
	return (l);
}

struct egress *
egress_new(const char *endpoint, const char *headers)
{
	struct egress *x = xcalloc(1, sizeof(*x));

	x->endpoint = xstrdup(endpoint != NULL ? endpoint : "");
	x->extra = headers_of(headers);
	x->easy = curl_easy_init();
	pthread_mutex_init(&x->mu, NULL);
	pthread_cond_init(&x->cv, NULL);
	pthread_cond_init(&x->idle_cv, NULL);
	if (x->easy == NULL || pthread_create(&x->thread, NULL, run, x) != 0) {
		log_warnx("otlp: cannot start the exporter: telemetry is off");
		egress_free(x, 0);
		return (NULL);
	}
	x->started = true;
	return (x);
}

/* Waits (mu held) until the queue is empty and nothing is in flight, or
 * wait_ms passed. */
static void
drain(struct egress *x, int64_t wait_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while ((x->n > 0 || x->busy)
	        && pthread_cond_timedwait(&x->idle_cv, &x->mu, &until) == 0) {
	}
}

void
egress_free(struct egress *x, int64_t wait_ms)
{
	if (x == NULL) {
		return;
	}
	pthread_mutex_lock(&x->mu);
	if (x->started && wait_ms > 0) {
		drain(x, wait_ms);
	}
	/* what is still queued is not sent */
	for (; x->n > 0; x->n--) {
		req_free(&x->q[x->head]);
		x->head = (x->head + 1) % EGRESS_QUEUE_MAX;
	}
	x->stop = true;
	pthread_cond_signal(&x->cv);
	pthread_mutex_unlock(&x->mu);
	if (x->started) {
		/* an export in flight ends within EGRESS_TIMEOUT_MS */
		pthread_join(x->thread, NULL);
	}
	if (x->easy != NULL) {
		curl_easy_cleanup(x->easy);
	}
	curl_slist_free_all(x->extra);
	pthread_cond_destroy(&x->cv);
	pthread_cond_destroy(&x->idle_cv);
	pthread_mutex_destroy(&x->mu);
	free(x->endpoint);
	free(x);
}

/* Queues r (taken), the oldest dropped when the queue is full. */
static void
enqueue(struct egress *x, struct req *r)
{
	size_t tail;

	pthread_mutex_lock(&x->mu);
	if (x->n == EGRESS_QUEUE_MAX) {
		req_free(&x->q[x->head]);
		x->head = (x->head + 1) % EGRESS_QUEUE_MAX;
		x->n--;
		x->st.dropped++;
	}
	tail = (x->head + x->n) % EGRESS_QUEUE_MAX;
	x->q[tail] = *r;
	x->n++;
	pthread_cond_signal(&x->cv);
	pthread_mutex_unlock(&x->mu);
}

void
egress_post(
        struct egress *x, const char *url, const char *json, const char *what)
{
	struct req r = { .data = xstrdup(json),
		.len = strlen(json),
		.url = xstrdup(url),
		.what = xstrdup(what) };

	enqueue(x, &r);
}

void
egress_send(struct egress *x, enum otel_signal sig, struct buf *body)
{
	struct req r = { .sig = sig,
		.data = xmalloc(body->len + 5),
		.len = body->len + 5 };

	r.data[0] = 0; /* not compressed */
	r.data[1] = (char)(body->len >> 24 & 0xff);
	r.data[2] = (char)(body->len >> 16 & 0xff);
	r.data[3] = (char)(body->len >> 8 & 0xff);
	r.data[4] = (char)(body->len & 0xff);
	memcpy(r.data + 5, body->data, body->len);
	buf_reset(body);
	enqueue(x, &r);
}

void
egress_stats(struct egress *x, struct egress_stats *out)
{
	pthread_mutex_lock(&x->mu);
	*out = x->st;
	pthread_mutex_unlock(&x->mu);
}
