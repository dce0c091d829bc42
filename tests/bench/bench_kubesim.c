/*
 * bench_kubesim.c: the kubesim benchmark driver (issue 3), run by
 * tests/bench/kubesim.sh against a running bin/kubesim.  Owns three
 * measurements, all with the same client load (NCLIENTS threads, one
 * keep-alive libcurl handle each, ~300-byte JSON bodies):
 *
 *  1. baseline: a trivial libmicrohttpd server inside this process, in
 *     kubesim's threading mode, answering every POST with a fixed JSON
 *     body: the machine's HTTP capacity in this run;
 *  2. writes: ConfigMap creates, then updates with the returned
 *     resourceVersion, against kubesim (every response code checked);
 *  3. watch fan-out: NWATCHERS watches on one namespace while the clients
 *     update objects in it; events delivered per second until every
 *     watcher has all of them, and a check that each watcher saw exactly
 *     the written resourceVersions, in order.
 *
 * Prints a table (figure, baseline, ratio, target, PASS/MISS).  Exit 0
 * when every request and check succeeded (a MISS is not an error), 1 on
 * errors, 2 on usage.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <microhttpd.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/bench/result.h"

#define NCLIENTS      4
#define NWATCHERS     10
#define WATCH_OBJS    25 /* objects per client in the watch phase */
#define PAD_LEN       150
#define TARGET_WRITES 5000.0
#define TARGET_EVENTS 20000.0

struct counts {
	int baseline; /* requests per client */
	int writes;   /* creates (and as many updates) per client */
	int watch;    /* updates per client in the watch phase */
};

static const struct counts full_counts = { 10000, 10000, 5000 };
static const struct counts quick_counts = { 500, 500, 250 };

struct client {
	int id;
	CURL *c;
	struct curl_slist *hdrs;
	struct buf resp;
	const char *base; /* server URL, borrowed */
	char prefix[32];  /* object name prefix of this run */
	int n;            /* requests in the current phase */
	int errors;
	uint64_t *rvs; /* per object: its latest resourceVersion */
	uint64_t *out; /* watch phase: the rv of each write (borrowed) */
};

struct watcher {
	pthread_t th;
	CURL *c;
	struct buf line;
	const char *match; /* "\"name\":\"PREFIX", borrowed */
	long want;
	long got;
	long other; /* events on objects not ours */
	uint64_t *rvs;
	bool bad_type;
	atomic_bool ready;
	double done_at;
};

struct row {
	const char *name;
	double figure;
	const char *unit;
	double baseline;
	double target; /* 0: none */
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static uint64_t
find_rv(const char *s)
{
	const char *p = strstr(s, "\"resourceVersion\":\"");

	if (p == NULL) {
		return (0);
	}
	return (strtoull(p + strlen("\"resourceVersion\":\""), NULL, 10));
}

/* ---- the baseline server ---- */

static char baseline_body[]
        = "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{"
          "\"name\":\"baseline\",\"namespace\":\"default\",\"uid\":"
          "\"00000000-0000-0000-0000-000000000000\",\"resourceVersion\":"
          "\"1\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"data\":{"
          "\"round\":\"0\",\"payload\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}";

static enum MHD_Result
baseline_handler(void *cls, struct MHD_Connection *mc, const char *url,
        const char *method, const char *version, const char *upload,
        size_t *upload_size, void **con_cls)
{
	static int started;
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)upload;
	if (*con_cls == NULL) {
		*con_cls = &started;
		return (MHD_YES);
	}
	if (*upload_size > 0) {
		*upload_size = 0;
		return (MHD_YES);
	}
	r = MHD_create_response_from_buffer(sizeof(baseline_body) - 1,
	        baseline_body, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(mc, 201, r);
	MHD_destroy_response(r);
	return (ret);
}

/* Starts the baseline server on a free port; its URL goes to url. */
static struct MHD_Daemon *
baseline_start(char *url, size_t urllen)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD
	        | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL
	        | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	d = MHD_start_daemon(flags, 0, NULL, NULL, baseline_handler, NULL,
	        MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_TIMEOUT,
	        (unsigned)0, MHD_OPTION_END);
	if (d == NULL) {
		return (NULL);
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(url, urllen, "http://127.0.0.1:%u", (unsigned)di->port);
	return (d);
}

/* ---- clients ---- */

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
	buf_append(arg, p, size * n);
	return (size * n);
}

static void
client_init(struct client *cl, int id, const char *base)
{
	memset(cl, 0, sizeof(*cl));
	cl->id = id;
	cl->base = base;
	buf_init(&cl->resp);
	cl->c = curl_easy_init();
	if (cl->c == NULL) {
		fprintf(stderr, "bench_kubesim: curl_easy_init failed\n");
		exit(1);
	}
	cl->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	cl->hdrs = curl_slist_append(cl->hdrs, "Accept: application/json");
	cl->hdrs = curl_slist_append(cl->hdrs, "Expect:");
	curl_easy_setopt(cl->c, CURLOPT_HTTPHEADER, cl->hdrs);
	curl_easy_setopt(cl->c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(cl->c, CURLOPT_WRITEDATA, &cl->resp);
	curl_easy_setopt(cl->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(cl->c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(cl->c, CURLOPT_TCP_NODELAY, 1L);
	snprintf(cl->prefix, sizeof(cl->prefix), "b%d-%d-", (int)getpid(), id);
}

static void
client_fini(struct client *cl)
{
	curl_easy_cleanup(cl->c);
	curl_slist_free_all(cl->hdrs);
	buf_fini(&cl->resp);
	free(cl->rvs);
}

/* One request; the response body is in cl->resp.  The status, or -1. */
static long
request(struct client *cl, const char *method, const char *path,
        const char *body)
{
	char url[512];
	long code = -1;

	snprintf(url, sizeof(url), "%s%s", cl->base, path);
	buf_reset(&cl->resp);
	curl_easy_setopt(cl->c, CURLOPT_URL, url);
	if (body != NULL) {
		curl_easy_setopt(cl->c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(
		        cl->c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		curl_easy_setopt(cl->c, CURLOPT_CUSTOMREQUEST,
		        strcmp(method, "POST") == 0 ? NULL : method);
	} else {
		curl_easy_setopt(cl->c, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(cl->c, CURLOPT_CUSTOMREQUEST, NULL);
	}
	if (curl_easy_perform(cl->c) != CURLE_OK) {
		return (-1);
	}
	curl_easy_getinfo(cl->c, CURLINFO_RESPONSE_CODE, &code);
	buf_str(&cl->resp);
	return (code);
}

/* A ConfigMap body of about 300 bytes; rv 0 = a create. */
static void
cm_body(char *out, size_t len, const char *name, int round, uint64_t rv)
{
	char pad[PAD_LEN + 1], rvs[48] = "";

	memset(pad, 'a' + round % 26, PAD_LEN);
	pad[PAD_LEN] = '\0';
	if (rv != 0) {
		snprintf(rvs, sizeof(rvs),
		        ",\"resourceVersion\":\"%" PRIu64 "\"", rv);
	}
	snprintf(out, len,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	        "\"name\":\"%s\"%s,\"labels\":{\"app\":\"bench\"}},\"data\":{"
	        "\"round\":\"%d\",\"payload\":\"%s\"}}",
	        name, rvs, round, pad);
}

/* Records a failed request (the first few are printed). */
static void
failed(struct client *cl, const char *what, long code, long want)
{
	if (cl->errors++ < 3) {
		fprintf(stderr,
		        "bench_kubesim: %s: got %ld, want %ld: %.200s\n", what,
		        code, want, buf_str(&cl->resp));
	}
}

/* Creates objects [0, n) named PREFIX<i> in namespace ns. */
static void
create_objects(struct client *cl, const char *ns, const char *prefix, int n)
{
	char path[128], name[64], body[512];
	long code;

	cl->rvs = xreallocarray(cl->rvs, (size_t)n, sizeof(*cl->rvs));
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		cm_body(body, sizeof(body), name, 0, 0);
		if ((code = request(cl, "POST", path, body)) != 201) {
			failed(cl, "create", code, 201);
			cl->rvs[i] = 0;
			continue;
		}
		cl->rvs[i] = find_rv(buf_str(&cl->resp));
	}
}

/* n updates of objects [0, nobj) round robin; each write's rv goes to
 * out[k] when out is not NULL. */
static void
update_objects(struct client *cl, const char *ns, const char *prefix, int nobj,
        int n, uint64_t *out)
{
	char path[160], name[64], body[512];
	long code;

	for (int k = 0; k < n; k++) {
		int i = k % nobj;
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		snprintf(path, sizeof(path),
		        "/api/v1/namespaces/%s/configmaps/%s", ns, name);
		cm_body(body, sizeof(body), name, k / nobj + 1, cl->rvs[i]);
		if ((code = request(cl, "PUT", path, body)) != 200) {
			failed(cl, "update", code, 200);
			continue;
		}
		cl->rvs[i] = find_rv(buf_str(&cl->resp));
		if (out != NULL) {
			out[k] = cl->rvs[i];
		}
	}
}

/* ---- phases ---- */

enum phase { PH_BASELINE, PH_CREATE, PH_UPDATE, PH_WATCH_SETUP, PH_WATCH };

struct job {
	struct client *cl;
	enum phase ph;
};

static void *
client_main(void *arg)
{
	struct job *j = arg;
	struct client *cl = j->cl;
	char wprefix[48];
	char body[512];
	long code;

	snprintf(wprefix, sizeof(wprefix), "w%s", cl->prefix);
	switch (j->ph) {
	case PH_BASELINE:
		for (int i = 0; i < cl->n; i++) {
			cm_body(body, sizeof(body), "baseline", 0, 0);
			code = request(cl, "POST",
			        "/api/v1/namespaces/default/configmaps", body);
			if (code != 201) {
				failed(cl, "baseline", code, 201);
			}
		}
		break;
	case PH_CREATE:
		create_objects(cl, "default", cl->prefix, cl->n);
		break;
	case PH_UPDATE:
		update_objects(cl, "default", cl->prefix, cl->n, cl->n, NULL);
		break;
	case PH_WATCH_SETUP:
		create_objects(cl, "bench", wprefix, WATCH_OBJS);
		break;
	case PH_WATCH:
		update_objects(
		        cl, "bench", wprefix, WATCH_OBJS, cl->n, cl->out);
		break;
	}
	return (NULL);
}

/* Runs ph on every client (n requests each); its duration in seconds. */
static double
run_phase(struct client *cls, enum phase ph, int n)
{
	pthread_t th[NCLIENTS];
	struct job jobs[NCLIENTS];
	double t0 = now_s();

	for (int i = 0; i < NCLIENTS; i++) {
		cls[i].n = n;
		jobs[i] = (struct job) { &cls[i], ph };
		pthread_create(&th[i], NULL, client_main, &jobs[i]);
	}
	for (int i = 0; i < NCLIENTS; i++) {
		pthread_join(th[i], NULL);
	}
	return (now_s() - t0);
}

static int
errors(const struct client *cls)
{
	int e = 0;

	for (int i = 0; i < NCLIENTS; i++) {
		e += cls[i].errors;
	}
	return (e);
}

/* ---- watchers ---- */

/* One complete event line. */
static void
watch_line(struct watcher *w, const char *s)
{
	if (strstr(s, w->match) == NULL) {
		w->other++;
		return;
	}
	if (strncmp(s, "{\"type\":\"MODIFIED\"", 18) != 0) {
		w->bad_type = true;
	}
	if (w->got < w->want) {
		w->rvs[w->got] = find_rv(s);
	}
	w->got++;
}

static size_t
watch_data(char *p, size_t size, size_t n, void *arg)
{
	struct watcher *w = arg;
	char *nl;
	size_t off = 0;

	buf_append(&w->line, p, size * n);
	buf_str(&w->line);
	while ((nl = memchr(w->line.data + off, '\n', w->line.len - off))
	        != NULL) {
		*nl = '\0';
		watch_line(w, w->line.data + off);
		off = (size_t)(nl - w->line.data) + 1;
	}
	buf_consume(&w->line, off);
	if (w->got >= w->want) {
		w->done_at = now_s();
		return (0); /* enough: end the transfer */
	}
	return (size * n);
}

static size_t
watch_header(char *p, size_t size, size_t n, void *arg)
{
	struct watcher *w = arg;

	if (size * n <= 2 && (p[0] == '\r' || p[0] == '\n')) {
		atomic_store(&w->ready, true);
	}
	return (size * n);
}

static void *
watcher_main(void *arg)
{
	struct watcher *w = arg;
	CURLcode rc = curl_easy_perform(w->c);

	if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR) {
		fprintf(stderr, "bench_kubesim: watch: %s\n",
		        curl_easy_strerror(rc));
	}
	atomic_store(&w->ready, true);
	return (NULL);
}

static void
watcher_start(struct watcher *w, const char *url, const char *match, long want)
{
	memset(w, 0, sizeof(*w));
	buf_init(&w->line);
	w->match = match;
	w->want = want;
	w->rvs = xcalloc((size_t)want, sizeof(*w->rvs));
	w->c = curl_easy_init();
	curl_easy_setopt(w->c, CURLOPT_URL, url);
	curl_easy_setopt(w->c, CURLOPT_WRITEFUNCTION, watch_data);
	curl_easy_setopt(w->c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(w->c, CURLOPT_HEADERFUNCTION, watch_header);
	curl_easy_setopt(w->c, CURLOPT_HEADERDATA, w);
	curl_easy_setopt(w->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(w->c, CURLOPT_TIMEOUT, 60L);
	/* A stream that stalls for 5 s has failed: do not wait longer. */
	curl_easy_setopt(w->c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(w->c, CURLOPT_LOW_SPEED_TIME, 5L);
	pthread_create(&w->th, NULL, watcher_main, w);
}

static void
watcher_fini(struct watcher *w)
{
	curl_easy_cleanup(w->c);
	buf_fini(&w->line);
	free(w->rvs);
}

/* Waits up to 3 s for every watch's response headers. */
static void
await_watchers(struct watcher *ws)
{
	double t0 = now_s();

	for (int i = 0; i < NWATCHERS; i++) {
		while (!atomic_load(&ws[i].ready) && now_s() - t0 < 3) {
			usleep(1000);
		}
	}
}

/* Waits for every watcher; when the last one got all its events. */
static double
join_watchers(struct watcher *ws)
{
	double tend = 0;

	for (int i = 0; i < NWATCHERS; i++) {
		pthread_join(ws[i].th, NULL);
		if (ws[i].done_at > tend) {
			tend = ws[i].done_at;
		}
	}
	return (tend);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Each watcher got exactly the written rvs, in order.  Errors found. */
static int
verify_watchers(struct watcher *ws, uint64_t *written, long want)
{
	int bad = 0;

	qsort(written, (size_t)want, sizeof(*written), cmp_u64);
	for (int i = 0; i < NWATCHERS; i++) {
		struct watcher *w = &ws[i];
		bool same = w->got == want
		        && memcmp(w->rvs, written, (size_t)want * 8) == 0;
		if (!same || w->bad_type) {
			fprintf(stderr,
			        "bench_kubesim: watcher %d: %ld of %ld "
			        "events, "
			        "%s, %s\n",
			        i, w->got, want,
			        same ? "written order" : "NOT the written rvs",
			        w->bad_type ? "bad type" : "all MODIFIED");
			bad++;
		}
	}
	return (bad);
}

/* ---- the benchmark ---- */

struct results {
	double baseline, creates, updates, writes, watch_writes, events;
	double base_runs[2]; /* the baseline before and after kubesim */
	double cpu_create, cpu_update, cpu_watch; /* kubesim us per write */
	int errors;
	int watch_bad;
};

/* CPU time (user + system) of process pid so far in microseconds, or -1
 * (pid 0 or unreadable). */
static double
proc_cpu_us(int pid)
{
	char path[64], line[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (pid <= 0 || (f = fopen(path, "re")) == NULL) {
		return (-1);
	}
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL || (p = strrchr(line, ')')) == NULL) {
		return (-1);
	}
	/* After "(comm)": state is field 3; utime and stime are 14 and 15. */
	n = sscanf(p + 1,
	        " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
	        "%llu",
	        &ut, &st);
	if (n != 2) {
		return (-1);
	}
	return ((double)(ut + st) * 1e6 / (double)sysconf(_SC_CLK_TCK));
}

/* CPU microseconds of pid per request between two proc_cpu_us(). */
static double
cpu_per(double before, double after, double requests)
{
	return (before < 0 || after < 0 ? -1 : (after - before) / requests);
}

static void
print_row(const struct row *r)
{
	char base[32] = "-", ratio[32] = "-", target[32] = "-";
	const char *verdict = "-";

	if (r->baseline > 0) {
		snprintf(base, sizeof(base), "%.0f", r->baseline);
		snprintf(
		        ratio, sizeof(ratio), "%.3f", r->figure / r->baseline);
	}
	if (r->target > 0) {
		snprintf(target, sizeof(target), "%.0f", r->target);
		verdict = r->figure >= r->target ? "PASS" : "MISS";
	}
	printf("%-14s %10.0f %-7s %10s %7s %8s %s\n", r->name, r->figure,
	        r->unit, base, ratio, target, verdict);
}

/* The RESULT line of a row (result.h); the baseline row has none. */
static void
result_row(const struct row *r)
{
	char target[32] = "";

	if (r->baseline <= 0) {
		return;
	}
	if (r->target >= 1000) { /* both targets: thousands, with a comma */
		snprintf(target, sizeof(target), ">= %d,%03d %s",
		        (int)r->target / 1000, (int)r->target % 1000, r->unit);
	}
	bench_result("kubesim", r->name, r->figure, r->unit, r->baseline,
	        bench_ratio(r->figure, r->baseline), target,
	        r->target > 0 ? r->figure >= r->target : BV_NONE);
}

static void
print_table(const struct results *r)
{
	const struct row rows[] = {
		{ "http-baseline", r->baseline, "req/s", 0, 0 },
		{ "create", r->creates, "req/s", r->baseline, TARGET_WRITES },
		{ "update", r->updates, "req/s", r->baseline, TARGET_WRITES },
		{ "write", r->writes, "req/s", r->baseline, TARGET_WRITES },
		{ "watch-write", r->watch_writes, "req/s", r->baseline, 0 },
		{ "watch-events", r->events, "ev/s", r->watch_writes,
		        TARGET_EVENTS },
	};

	printf("%-14s %10s %-7s %10s %7s %8s %s\n", "name", "figure", "unit",
	        "baseline", "ratio", "target", "result");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_row(&rows[i]);
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		result_row(&rows[i]);
	}
	printf("(write ratios: against http-baseline; watch-events ratio: "
	       "against watch-write, %d watchers, ideal %d.0)\n",
	        NWATCHERS, NWATCHERS);
	printf("http-baseline runs (before, after): %.0f, %.0f req/s\n",
	        r->base_runs[0], r->base_runs[1]);
	if (r->cpu_create >= 0) {
		printf("kubesim CPU per write: create %.1f us, update %.1f "
		       "us, "
		       "update with %d watchers %.1f us\n",
		        r->cpu_create, r->cpu_update, NWATCHERS, r->cpu_watch);
	}
	printf("errors: %d; watch order check: %s\n", r->errors,
	        r->watch_bad == 0 ? "OK" : "FAILED");
}

/* One baseline run (fresh clients and server); its requests/s.  The
 * figure kept is the best run: the machine's capacity. */
static void
run_baseline(const struct counts *k, struct results *r, int run)
{
	struct client cls[NCLIENTS];
	char url[64];
	struct MHD_Daemon *d = baseline_start(url, sizeof(url));
	double t;

	if (d == NULL) {
		fprintf(stderr, "bench_kubesim: cannot start the baseline\n");
		exit(1);
	}
	for (int i = 0; i < NCLIENTS; i++) {
		client_init(&cls[i], i, url);
	}
	t = run_phase(cls, PH_BASELINE, k->baseline);
	r->base_runs[run] = NCLIENTS * k->baseline / t;
	if (r->base_runs[run] > r->baseline) {
		r->baseline = r->base_runs[run];
	}
	r->errors += errors(cls);
	for (int i = 0; i < NCLIENTS; i++) {
		client_fini(&cls[i]);
	}
	MHD_stop_daemon(d);
}

static void
run_writes(
        struct client *cls, const struct counts *k, struct results *r, int pid)
{
	double c0 = proc_cpu_us(pid);
	double tc = run_phase(cls, PH_CREATE, k->writes);
	double c1 = proc_cpu_us(pid);
	double tu = run_phase(cls, PH_UPDATE, k->writes);
	double c2 = proc_cpu_us(pid);

	r->cpu_create = cpu_per(c0, c1, NCLIENTS * k->writes);
	r->cpu_update = cpu_per(c1, c2, NCLIENTS * k->writes);
	r->creates = NCLIENTS * k->writes / tc;
	r->updates = NCLIENTS * k->writes / tu;
	r->writes = 2.0 * NCLIENTS * k->writes / (tc + tu);
}

/* Creates the namespace "bench" unless it exists.  0 or -1. */
static int
create_namespace(struct client *cl)
{
	long code = request(cl, "POST", "/api/v1/namespaces",
	        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	        "\"metadata\":{\"name\":\"bench\"}}");

	if (code != 201 && code != 409) {
		failed(cl, "create namespace", code, 201);
		return (-1);
	}
	return (0);
}

/* The resourceVersion of a list of namespace "bench", or 0. */
static uint64_t
current_rv(struct client *cl)
{
	long code;
	json_object *o;
	const char *s;
	uint64_t rv = 0;

	code = request(cl, "GET", "/api/v1/namespaces/bench/configmaps", NULL);
	o = json_tokener_parse(buf_str(&cl->resp));
	s = jx_get_str(o, "metadata.resourceVersion");
	if (code != 200 || s == NULL) {
		failed(cl, "list", code, 200);
	} else {
		rv = strtoull(s, NULL, 10);
	}
	json_object_put(o);
	return (rv);
}

static void
run_watch(
        struct client *cls, const struct counts *k, struct results *r, int pid)
{
	struct watcher ws[NWATCHERS];
	long want = (long)NCLIENTS * k->watch;
	uint64_t *written = xcalloc((size_t)want, sizeof(*written));
	char url[256], match[64];
	double t0, tw, tend, c0;
	uint64_t rv;

	if (create_namespace(&cls[0]) != 0
	        || (run_phase(cls, PH_WATCH_SETUP, 0), errors(cls) != 0)
	        || (rv = current_rv(&cls[0])) == 0) {
		fprintf(stderr, "bench_kubesim: watch setup failed\n");
		r->watch_bad = 1;
		free(written);
		return;
	}
	snprintf(url, sizeof(url),
	        "%s/api/v1/namespaces/bench/configmaps?watch=true&"
	        "resourceVersion=%" PRIu64 "&timeoutSeconds=60",
	        cls[0].base, rv);
	snprintf(match, sizeof(match), "\"name\":\"wb%d-", (int)getpid());
	for (int i = 0; i < NWATCHERS; i++) {
		watcher_start(&ws[i], url, match, want);
	}
	await_watchers(ws);
	for (int i = 0; i < NCLIENTS; i++) {
		cls[i].out = written + (size_t)i * (size_t)k->watch;
	}
	c0 = proc_cpu_us(pid);
	t0 = now_s();
	tw = run_phase(cls, PH_WATCH, k->watch);
	tend = join_watchers(ws);
	r->cpu_watch = cpu_per(c0, proc_cpu_us(pid), (double)want);
	r->watch_writes = want / tw;
	r->events = tend > t0 ? NWATCHERS * want / (tend - t0) : 0;
	r->watch_bad = verify_watchers(ws, written, want);
	for (int i = 0; i < NWATCHERS; i++) {
		watcher_fini(&ws[i]);
	}
	for (int i = 0; i < NCLIENTS; i++) {
		cls[i].out = NULL;
	}
	free(written);
}

static void
usage(void)
{
	fprintf(stderr,
	        "usage: bench_kubesim [--quick] [--server-pid PID] URL\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const struct counts *k = &full_counts;
	struct client cls[NCLIENTS];
	struct results r = { 0 };
	const char *url = NULL;
	int pid = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			k = &quick_counts;
		} else if (strcmp(argv[i], "--server-pid") == 0
		        && i + 1 < argc) {
			pid = atoi(argv[++i]);
		} else if (argv[i][0] != '-' && url == NULL) {
			url = argv[i];
		} else {
			usage();
		}
	}
	if (url == NULL) {
		usage();
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	run_baseline(k, &r, 0);
	for (int i = 0; i < NCLIENTS; i++) {
		client_init(&cls[i], i, url);
	}
	run_writes(cls, k, &r, pid);
	run_watch(cls, k, &r, pid);
	r.errors += errors(cls);
	for (int i = 0; i < NCLIENTS; i++) {
		client_fini(&cls[i]);
	}
	run_baseline(k, &r, 1);
	print_table(&r);
	curl_global_cleanup();
	return (r.errors == 0 && r.watch_bad == 0 && r.events > 0 ? 0 : 1);
}
