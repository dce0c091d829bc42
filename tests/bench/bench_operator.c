/*
 * bench_operator.c: the operator benchmarks of issue 7 item 4 (writes,
 * memory, start, leader handover), run by tests/bench/operator.sh.  Each
 * phase starts its own bin/kubesim (request log, --controllers none) and
 * bin/sympoziumd, loads objects with a plain 4-thread libcurl client, and
 * reads its figures from kubesim's request log, sympoziumd's log lines
 * ("caches synced", "all N workers ready", "leading") and /proc.
 *
 *  writes:   baseline = ConfigMap creates from the plain client; then N
 *            SkillPacks reconciled by a fresh supervisor (each needs a
 *            finalizer, a ConfigMap and a status: 3 writes); the
 *            operator's write rate, no-op writes (a write answered with a
 *            resourceVersion already seen: kubesim short-circuits writes
 *            that change nothing), writes after convergence.
 *  memory:   R completed AgentRuns with their Job, Pod, ConfigMap and
 *            ServiceAccount created directly; the supervisor's and the
 *            workers' PSS after the start-up backlog, against the raw
 *            JSON (managedFields stripped) of what its watches select.
 *  start:    same load: supervisor start to "caches synced" and "all
 *            workers ready"; an AgentRun created right after the sync,
 *            while the backlog runs, to its first write.
 *  handover: two supervisors with --leader-elect (lease 3s, renew 2s,
 *            retry 500ms); SIGTERM or SIGKILL of the leader to the first
 *            successful Lease write of the other.
 *
 * Exit 0 when every request and check succeeded (a MISS is not an
 * error), 1 on errors, 2 on usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "ctl/ctl.h"
#include "ipc/hproto.h"
#include "tests/bench/result.h"
#include "tests/lib/ksim.h"
#include "tests/lib/opload.h"

#define MIB      (1024.0 * 1024.0)
#define UA_SD    "sympoziumd/"
#define UA_BENCH "bench-operator/0.1"
#define LEASE_MS 3000
#define RETRY_MS 500

static bool quick;
static int errors;

static void
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench operator: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	errors++;
}

static int64_t
now_us(void)
{
	return (timefmt_now_us_real());
}

static void
row(const char *name, double fig, const char *unit, const char *base,
        const char *target, int verdict)
{
	printf("  %-34s %14.3f %-8s %-26s %-16s %s\n", name, fig, unit,
	        base != NULL ? base : "", target != NULL ? target : "",
	        verdict < 0       ? ""
	                : verdict ? "PASS"
	                          : "MISS");
}

/* opload_send() as the bench's client; a failure counts as an error. */
static double
par_send(const char *base, int n, opload_build_fn *b, opload_answer_fn *a,
        void *arg)
{
	double t = opload_send(base, UA_BENCH, n, b, a, arg);

	if (t < 0) {
		fail("%d requests: a request failed", n);
	}
	return (t);
}

/* ---- kubesim and the CRDs ---- */

static int
start_kubesim(struct ksim_api *a)
{
	const char *args[] = { "--controllers", "none", "--watch-history",
		"400000", NULL };

	if (ksim_api_start(a, args, "bench-operator/0.1", 30000) != 0) {
		fail("kubesim did not start");
		return (-1);
	}
	return (0);
}

static int
simple(const char *base, const char *method, const char *path,
        const char *ctype, const char *body)
{
	struct ksim_resp *r
	        = ksim_request(base, method, path, ctype, body, NULL, 30000);
	int rc = r->code >= 200 && r->code <= 299 ? 0 : -1;

	if (rc != 0) {
		fail("%s %s: %ld %s", method, path, r->code, r->body);
	}
	ksim_resp_free(r);
	return (rc);
}

static int
make_ns(const char *base, const char *ns)
{
	char body[256];

	snprintf(body, sizeof(body),
	        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	        "\"metadata\":{\"name\":\"%s\"}}",
	        ns);
	return (simple(
	        base, "POST", "/api/v1/namespaces", "application/json", body));
}

/* Applies deploy/crds/sympozium.ai_*.yaml and waits until agentruns are
 * served. */
static int
apply_crds(const char *base)
{
	DIR *d = opendir("deploy/crds");
	struct dirent *e;
	int rc = 0;

	if (d == NULL) {
		fail("deploy/crds: %s", strerror(errno));
		return (-1);
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char path[512], err[256];
		struct buf t = BUF_INIT;
		json_object *docs;

		if (strncmp(e->d_name, "sympozium.ai_", 13) != 0) {
			continue;
		}
		snprintf(path, sizeof(path), "deploy/crds/%s", e->d_name);
		if (buf_read_file(&t, path, 1 << 22) != 0
		        || (docs = yamlj_parse_all(
		                    t.data, t.len, err, sizeof(err)))
		                == NULL) {
			fail("%s: cannot read", path);
			buf_fini(&t);
			rc = -1;
			break;
		}
		for (size_t i = 0;
		        rc == 0 && i < json_object_array_length(docs); i++) {
			rc = simple(base, "POST",
			        "/apis/apiextensions.k8s.io/v1/"
			        "customresourcedefinitions",
			        "application/json",
			        json_object_to_json_string_ext(
			                json_object_array_get_idx(docs, i),
			                JSON_C_TO_STRING_PLAIN));
		}
		json_object_put(docs);
		buf_fini(&t);
	}
	closedir(d);
	for (int i = 0; rc == 0 && i < 200; i++) {
		struct ksim_resp *r = ksim_request(base, "GET",
		        "/apis/sympozium.ai/v1alpha1/agentruns?limit=1", NULL,
		        NULL, NULL, 5000);
		long code = r->code;
		ksim_resp_free(r);
		if (code == 200) {
			return (0);
		}
		ksim_sleep_ms(25);
	}
	return (rc == 0 ? (fail("CRDs not served"), -1) : rc);
}

/* ---- sympoziumd ---- */

struct sd {
	pid_t pid;
	char log[160];
	char rundir[160];
};

static int
sd_start(struct sd *s, const struct ksim_api *a, const char *tag,
        const char *const *extra)
{
	char cwd[400], bin[600];
	char *argv[32];
	int n = 0;

	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		return (-1);
	}
	if (getenv("SYMPOZIUMD") != NULL && getenv("SYMPOZIUMD")[0] != '\0') {
		snprintf(bin, sizeof(bin), "%s", getenv("SYMPOZIUMD"));
	} else {
		snprintf(bin, sizeof(bin), "%s/bin/sympoziumd", cwd);
	}
	snprintf(s->log, sizeof(s->log), "%s/sd-%s.log", a->dir, tag);
	snprintf(s->rundir, sizeof(s->rundir), "%s/run-%s", a->dir, tag);
	argv[n++] = bin;
	argv[n++] = xstrdup("--kubeconfig");
	argv[n++] = xstrdup(a->kubeconfig);
	argv[n++] = xstrdup("--runtime-dir");
	argv[n++] = s->rundir;
	argv[n++] = xstrdup("--metrics-bind-address=0");
	argv[n++] = xstrdup("--health-probe-bind-address=0");
	for (int i = 0; extra != NULL && extra[i] != NULL && n < 30; i++) {
		argv[n++] = xstrdup(extra[i]);
	}
	argv[n] = NULL;
	s->pid = fork();
	if (s->pid != 0) {
		for (int i = 1; i < n; i++) {
			if (argv[i] != s->rundir) {
				free(argv[i]);
			}
		}
	}
	if (s->pid < 0) {
		fail("fork: %s", strerror(errno));
		return (-1);
	}
	if (s->pid == 0) {
		int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
			_exit(126);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return (0);
}

/* Signals and reaps s (bounded: SIGKILL after 10 s).  Returns the wait
 * status, or -1. */
static int
sd_stop(struct sd *s, int sig)
{
	int st = -1;
	int64_t end = ksim_now_ms() + 10000;

	if (s->pid <= 0) {
		return (-1);
	}
	kill(s->pid, sig);
	while (waitpid(s->pid, &st, WNOHANG) == 0) {
		if (ksim_now_ms() > end) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, &st, 0);
			break;
		}
		ksim_sleep_ms(10);
	}
	s->pid = 0;
	return (st);
}

/* The first line of s's log containing what, copied to line; its
 * timestamp (real µs) or -1 when absent. */
static int64_t
sd_find(const struct sd *s, const char *what, char *line, size_t len)
{
	FILE *f = fopen(s->log, "re");
	char l[2048];
	int64_t ts = -1;

	while (f != NULL && fgets(l, sizeof(l), f) != NULL) {
		char *sp = strchr(l, ' '), tsb[64];
		if (strstr(l, what) == NULL || sp == NULL
		        || sscanf(sp + 1, "%63s", tsb) != 1
		        || timefmt_parse(tsb, &ts) != 0) {
			ts = -1;
			continue;
		}
		if (line != NULL) {
			snprintf(line, len, "%.*s", (int)(len - 1), l);
		}
		break;
	}
	if (f != NULL) {
		fclose(f);
	}
	return (ts);
}

static int64_t
sd_wait(const struct sd *s, const char *what, char *line, size_t len, int ms)
{
	int64_t end = ksim_now_ms() + ms, ts;

	while ((ts = sd_find(s, what, line, len)) < 0 && ksim_now_ms() < end) {
		ksim_sleep_ms(5);
	}
	if (ts < 0) {
		fail("no \"%s\" in %s", what, s->log);
	}
	return (ts);
}

/* ---- the request log ---- */

struct req {
	int64_t ts; /* real µs */
	char method[8];
	char *path;
	int code;
	bool sd; /* from a sympoziumd */
	char *ua;
	uint64_t rv;
};

struct reqs {
	struct req *v;
	size_t n;
};

static void
reqs_free(struct reqs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].ua);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static int
reqs_load(const char *file, struct reqs *out)
{
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0, vcap = 0;

	memset(out, 0, sizeof(*out));
	if (f == NULL) {
		fail("%s: %s", file, strerror(errno));
		return (-1);
	}
	while (getline(&line, &cap, f) > 0) {
		json_object *o = json_tokener_parse(line);
		struct req r = { 0 };
		const char *s;
		int64_t code = 0;

		if (o == NULL) {
			continue;
		}
		if ((s = jx_get_str(o, "ts")) != NULL) {
			timefmt_parse(s, &r.ts);
		}
		snprintf(r.method, sizeof(r.method), "%s",
		        jx_get_str(o, "method") ?: "");
		r.path = xstrdup(jx_get_str(o, "path") ?: "");
		r.ua = xstrdup(jx_get_str(o, "userAgent") ?: "");
		r.sd = strncmp(r.ua, UA_SD, strlen(UA_SD)) == 0;
		jx_get_int(o, "code", &code);
		r.code = (int)code;
		if ((s = jx_get_str(o, "rv")) != NULL) {
			r.rv = strtoull(s, NULL, 10);
		}
		json_object_put(o);
		if (out->n == vcap) {
			vcap = vcap == 0 ? 1024 : vcap * 2;
			out->v = xreallocarray(out->v, vcap, sizeof(*out->v));
		}
		out->v[out->n++] = r;
	}
	free(line);
	fclose(f);
	return (0);
}

static bool
is_write(const struct req *r)
{
	return (strcmp(r->method, "POST") == 0 || strcmp(r->method, "PUT") == 0
	        || strcmp(r->method, "PATCH") == 0
	        || strcmp(r->method, "DELETE") == 0);
}

/* A supervisor write other than Lease and Event traffic. */
static bool
is_obj_write(const struct req *r)
{
	return (r->sd && is_write(r) && strstr(r->path, "/leases") == NULL
	        && strstr(r->path, "/events") == NULL);
}

static int
cmp_rv(const void *a, const void *b)
{
	const struct req *x = *(const struct req *const *)a;
	const struct req *y = *(const struct req *const *)b;

	return (x->rv < y->rv ? -1 : x->rv > y->rv);
}

/* Successful supervisor writes (not DELETE) whose resourceVersion another
 * logged write already got: kubesim answers a write that changes nothing
 * with the object's current resourceVersion. */
static size_t
count_noops(const struct reqs *rs)
{
	const struct req **w = xcalloc(rs->n + 1, sizeof(*w));
	size_t n = 0, noop = 0;

	for (size_t i = 0; i < rs->n; i++) {
		const struct req *r = &rs->v[i];
		if (is_write(r) && strcmp(r->method, "DELETE") != 0
		        && r->code >= 200 && r->code < 300 && r->rv != 0) {
			w[n++] = r;
		}
	}
	qsort(w, n, sizeof(*w), cmp_rv);
	for (size_t i = 1; i < n; i++) {
		if (w[i]->rv == w[i - 1]->rv && (w[i]->sd || w[i - 1]->sd)) {
			noop++;
		}
	}
	free(w);
	return (noop);
}

/* User plus system CPU time of pid in ms, or 0. */
static int64_t
cpu_ms(pid_t pid)
{
	char path[64], l[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		return (0);
	}
	if (fgets(l, sizeof(l), f) == NULL || (p = strrchr(l, ')')) == NULL
	        || sscanf(p + 2,
	                   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	                   "%llu %llu",
	                   &ut, &st)
	                != 2) {
		ut = st = 0;
	}
	fclose(f);
	return ((int64_t)((ut + st) * 1000
	        / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

static int children(pid_t parent, pid_t *out, int max);

/* CPU ms of the live children of pid. */
static int64_t
children_cpu_ms(pid_t pid)
{
	pid_t k[64];
	int n = children(pid, k, 64);
	int64_t t = 0;

	for (int i = 0; i < n; i++) {
		t += cpu_ms(k[i]);
	}
	return (t);
}

/* ---- writes ---- */

#define SKILL_TEXT                                                            \
	"# Review checklist\\n\\n- correctness and edge cases\\n- error "     \
	"handling\\n- naming\\n- tests\\n- security\\n- documentation\\n"

static void
b_cm(void *arg, int i, struct buf *path, struct buf *body, const char **m,
        const char **ct)
{
	(void)arg;
	(void)m;
	(void)ct;
	buf_puts(path, "/api/v1/namespaces/base/configmaps");
	buf_printf(body,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	        "{\"name\":\"pack-%d\",\"labels\":{\"sympozium.ai/component\":"
	        "\"skillpack\",\"sympozium.ai/skillpack\":\"pack-%d\"}},"
	        "\"data\":{\"review.md\":\"%s\"}}",
	        i, i, SKILL_TEXT);
}

static void
b_pack(void *arg, int i, struct buf *path, struct buf *body, const char **m,
        const char **ct)
{
	(void)arg;
	(void)m;
	(void)ct;
	buf_puts(path, "/apis/sympozium.ai/v1alpha1/namespaces/wr/skillpacks");
	buf_printf(body,
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SkillPack\",\"metadata\":{\"name\":\"pack-%d\"},\"spec\":"
	        "{\"category\":\"development\",\"source\":\"bench\","
	        "\"version\":\"0.1.0\",\"skills\":[{\"name\":\"review\","
	        "\"description\":\"Code review\",\"content\":\"%s\"}]}}",
	        i, SKILL_TEXT);
}

struct wstats {
	size_t writes, cm_creates, noops, after;
	int64_t first, last;
};

static void
write_stats(const struct reqs *rs, int64_t converged, struct wstats *w)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < rs->n; i++) {
		const struct req *r = &rs->v[i];
		if (!is_obj_write(r)) {
			continue;
		}
		if (r->ts > converged) {
			w->after++;
			continue;
		}
		w->writes++;
		if (strcmp(r->method, "POST") == 0
		        && strstr(r->path, "/configmaps") != NULL
		        && r->code == 201) {
			w->cm_creates++;
		}
		if (w->first == 0 || r->ts < w->first) {
			w->first = r->ts;
		}
		if (r->ts > w->last) {
			w->last = r->ts;
		}
	}
	w->noops = count_noops(rs);
}

/* Waits until the supervisor has created n ConfigMaps and written n
 * statuses (skillpacks/.../status) and then nothing for 500 ms. */
static int
wait_packs(const struct ksim_api *a, int n, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (ksim_now_ms() < end) {
		int cms = ksim_count_log(
		        a->request_log, "create", "/configmaps", UA_SD);
		int st = ksim_count_log(
		        a->request_log, NULL, "/status", UA_SD);
		if (cms >= n && st >= n) {
			return (0);
		}
		ksim_sleep_ms(50);
	}
	fail("the SkillPacks did not converge in %d ms", ms);
	return (-1);
}

/* The RESULT lines of one writes run (result.h). */
static void
writes_results(int nworkers, double base, double op, const struct wstats *w)
{
	char fig[64];

	snprintf(fig, sizeof(fig), "operator writes, %d skillpack worker%s",
	        nworkers, nworkers > 1 ? "s" : "");
	bench_result("operator", fig, op, "req/s", base, bench_ratio(op, base),
	        "ratio >= 0.95", op >= 0.95 * base);
	snprintf(fig, sizeof(fig), "no-op writes (same rv), %d worker%s",
	        nworkers, nworkers > 1 ? "s" : "");
	bench_result("operator", fig, (double)w->noops, "writes", NAN, NAN,
	        "0", w->noops == 0);
	snprintf(fig, sizeof(fig), "writes after convergence, %d worker%s",
	        nworkers, nworkers > 1 ? "s" : "");
	bench_result("operator", fig, (double)w->after, "writes", NAN, NAN,
	        "0", w->after == 0);
}

static void
bench_writes(int nworkers)
{
	struct ksim_api a;
	int n = quick ? 1000 : 10000;
	int quiet = quick ? 1000 : 3000;
	char wk[32];
	const char *extra[]
	        = { "--controllers", "skillpack", "--workers", wk, NULL };
	int64_t cpu0;
	struct sd s = { 0 };
	struct reqs rs;
	struct wstats w;
	double tb, base, op;
	int64_t converged, cpu_sd, cpu_ks;
	char bs[64];

	if (start_kubesim(&a) != 0) {
		return;
	}
	if (apply_crds(ksim_url(a.k)) != 0 || make_ns(ksim_url(a.k), "base")
	        || make_ns(ksim_url(a.k), "wr") != 0) {
		goto out;
	}
	tb = par_send(ksim_url(a.k), n, b_cm, NULL, NULL);
	if (tb <= 0 || par_send(ksim_url(a.k), n, b_pack, NULL, NULL) < 0) {
		goto out;
	}
	base = n / tb;
	snprintf(wk, sizeof(wk), "skillpack=%d", nworkers);
	cpu0 = cpu_ms(ksim_pid(a.k));
	if (sd_start(&s, &a, "writes", extra) != 0
	        || wait_packs(&a, n, 120000) != 0) {
		goto out;
	}
	converged = now_us();
	cpu_sd = cpu_ms(s.pid) + children_cpu_ms(s.pid);
	cpu_ks = cpu_ms(ksim_pid(a.k)) - cpu0;
	ksim_sleep_ms(quiet);
	if (reqs_load(a.request_log, &rs) != 0) {
		goto out;
	}
	write_stats(&rs, converged, &w);
	reqs_free(&rs);
	op = w.last > w.first
	        ? (double)w.writes * 1e6 / (double)(w.last - w.first)
	        : 0;
	printf("== writes: %d SkillPacks (each: finalizer, ConfigMap, "
	       "status), "
	       "%d skillpack worker(s)\n",
	        n, nworkers);
	row("baseline: plain client creates", base, "req/s", "4 threads", "",
	        -1);
	snprintf(bs, sizeof(bs), "ratio %.3f", op / base);
	row("operator writes", op, "req/s", bs, ">= 0.95", op >= 0.95 * base);
	row("operator writes (count)", (double)w.writes, "", "expected 3N", "",
	        -1);
	row("operator reconciles (packs/s)",
	        w.last > w.first ? n * 1e6 / (double)(w.last - w.first) : 0,
	        "/s", "", "", -1);
	row("no-op writes (same rv)", (double)w.noops, "", "", "0",
	        w.noops == 0);
	snprintf(bs, sizeof(bs), "in %d ms", quiet);
	row("writes after convergence", (double)w.after, "", bs, "0",
	        w.after == 0);
	snprintf(bs, sizeof(bs), "kubesim %.0f ms", (double)cpu_ks);
	row("operator CPU (supervisor+workers)", (double)cpu_sd, "ms", bs, "",
	        -1);
	writes_results(nworkers, base, op, &w);
	if (w.cm_creates != (size_t)n) {
		fail("%zu ConfigMaps created for %d packs", w.cm_creates, n);
	}
out:
	if (s.pid > 0 && WEXITSTATUS(sd_stop(&s, SIGTERM)) != 0) {
		fail("sympoziumd (writes) did not exit 0");
	}
	ksim_api_stop(&a);
}

/* ---- memory and start ---- */

#define NSTAGES 8

struct load {
	int runs, nns;
	char (*run_uid)[40];
	char (*job_uid)[40];
};

static void
uid_of(const char *body, char *out)
{
	json_object *o = json_tokener_parse(body);

	snprintf(out, 40, "%s", jx_get_str(o, "metadata.uid") ?: "");
	json_object_put(o);
}

static void
a_run(void *arg, int i, const char *body)
{
	uid_of(body, ((struct load *)arg)->run_uid[i]);
}

static void
a_job(void *arg, int i, const char *body)
{
	uid_of(body, ((struct load *)arg)->job_uid[i]);
}

static const char *const POD_SPEC
        = "{\"serviceAccountName\":\"sympozium-agent\","
          "\"restartPolicy\":\"Never\",\"securityContext\":{\"runAsNonRoot\":"
          "true,\"runAsUser\":1000,\"fsGroup\":1000},\"containers\":[{"
          "\"name\":\"agent\",\"image\":\"ghcr.io/sympozium-ai/sympozium/"
          "agent-runner:v0.1.0\",\"imagePullPolicy\":\"IfNotPresent\","
          "\"env\":[{\"name\":\"AGENT_RUN_ID\",\"value\":\"%s\"},{\"name\":"
          "\"AGENT_ID\",\"value\":\"default\"},{\"name\":\"SESSION_KEY\","
          "\"value\":\"session-%d\"},{\"name\":\"INSTANCE_NAME\",\"value\":"
          "\"inst-%d\"},{\"name\":\"MODEL_PROVIDER\",\"value\":\"anthropic\"},"
          "{\"name\":\"MODEL_NAME\",\"value\":\"claude-sonnet-4-20250514\"},"
          "{\"name\":\"ANTHROPIC_API_KEY\",\"valueFrom\":{\"secretKeyRef\":{"
          "\"name\":\"inst-key\",\"key\":\"ANTHROPIC_API_KEY\"}}}],"
          "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":"
          "\"128Mi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"512Mi\"}},"
          "\"securityContext\":{\"allowPrivilegeEscalation\":false,"
          "\"readOnlyRootFilesystem\":true,\"capabilities\":{\"drop\":["
          "\"ALL\"]}},\"volumeMounts\":[{\"name\":\"workspace\","
          "\"mountPath\":\"/workspace\"},{\"name\":\"ipc\",\"mountPath\":"
          "\"/ipc\"},{\"name\":\"input\",\"mountPath\":\"/input\","
          "\"readOnly\":true},{\"name\":\"tmp\",\"mountPath\":\"/tmp\"}]},"
          "{\"name\":\"ipc-bridge\",\"image\":\"ghcr.io/sympozium-ai/"
          "sympozium/ipc-bridge:v0.1.0\",\"env\":[{\"name\":\"AGENT_RUN_ID\","
          "\"value\":\"%s\"},{\"name\":\"NATS_URL\",\"value\":\"nats://"
          "nats.sympozium-system.svc:4222\"}],\"resources\":{\"requests\":{"
          "\"cpu\":\"10m\",\"memory\":\"32Mi\"}},\"volumeMounts\":[{\"name\":"
          "\"ipc\",\"mountPath\":\"/ipc\"}]}],\"volumes\":[{\"name\":"
          "\"workspace\",\"emptyDir\":{}},{\"name\":\"ipc\",\"emptyDir\":{"
          "\"medium\":\"Memory\"}},{\"name\":\"input\",\"configMap\":{"
          "\"name\":"
          "\"%s-input\"}},{\"name\":\"tmp\",\"emptyDir\":{}}]}";

static void
run_labels(struct buf *b, int r)
{
	buf_printf(b,
	        "\"labels\":{\"sympozium.ai/instance\":\"inst-%d\","
	        "\"sympozium.ai/agent-id\":\"default\","
	        "\"sympozium.ai/component\":\"agent-run\","
	        "\"sympozium.ai/agent-run\":\"run-%d\"}",
	        r % 200, r);
}

static void
pod_spec(struct buf *b, int r)
{
	char name[32];

	snprintf(name, sizeof(name), "run-%d", r);
	buf_printf(b, POD_SPEC, name, r, r % 200, name, name);
}

static void
st_run(struct load *l, int r, struct buf *b, const char *ns)
{
	(void)l;
	(void)ns;
	buf_printf(b,
	        "{\"status\":{\"phase\":\"Succeeded\",\"podName\":"
	        "\"run-%d-abcde\",\"jobName\":\"run-%d\",\"startedAt\":"
	        "\"2026-11-30T10:00:00Z\",\"completedAt\":\"2026-11-30T10:01:0"
	        "0Z\",\"result\":\"The review found no blocking issue; two "
	        "minor "
	        "naming remarks and a missing test for the error path were "
	        "reported.\",\"tokenUsage\":{\"inputTokens\":1834,"
	        "\"outputTokens\":412,\"totalTokens\":2246,\"toolCalls\":3,"
	        "\"durationMs\":61234}}}",
	        r, r);
}

static void
b_stage(struct load *l, int stage, int r, struct buf *path, struct buf *b,
        const char **m, const char **ct)
{
	char ns[16];

	snprintf(ns, sizeof(ns), "ns-%d", r % l->nns);
	switch (stage) {
	case 0:
		buf_printf(path, "/api/v1/namespaces/%s/serviceaccounts", ns);
		buf_printf(b, "{\"metadata\":{\"name\":\"run-%d-sa\",", r);
		run_labels(b, r);
		buf_puts(b, "}}");
		break;
	case 1:
		buf_printf(path, "/api/v1/namespaces/%s/configmaps", ns);
		buf_printf(b, "{\"metadata\":{\"name\":\"run-%d-input\",", r);
		run_labels(b, r);
		buf_printf(b,
		        "},\"data\":{\"task\":\"Review pull request %d "
		        "for correctness and security\"}}",
		        r);
		break;
	case 2:
		buf_printf(path,
		        "/apis/sympozium.ai/v1alpha1/namespaces/%s/agentruns",
		        ns);
		buf_printf(b,
		        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
		        "\"AgentRun\",\"metadata\":{\"name\":\"run-%d\",",
		        r);
		run_labels(b, r);
		buf_printf(b,
		        "},\"spec\":{\"instanceRef\":\"inst-%d\",\"agentId\":"
		        "\"default\",\"sessionKey\":\"session-%d\",\"task\":"
		        "\"Review pull request %d for correctness and "
		        "security\","
		        "\"model\":{\"provider\":\"anthropic\",\"model\":"
		        "\"claude-sonnet-4-20250514\",\"authSecretRef\":"
		        "\"inst-key\"},\"timeout\":\"10m\"}}",
		        r % 200, r, r);
		break;
	case 3:
		buf_printf(path,
		        "/apis/sympozium.ai/v1alpha1/namespaces/%s/agentruns/"
		        "run-%d/status",
		        ns, r);
		st_run(l, r, b, ns);
		*m = "PATCH";
		*ct = "application/merge-patch+json";
		break;
	case 4:
		buf_printf(path, "/apis/batch/v1/namespaces/%s/jobs", ns);
		buf_printf(b, "{\"metadata\":{\"name\":\"run-%d\",", r);
		run_labels(b, r);
		buf_printf(b,
		        ",\"ownerReferences\":[{\"apiVersion\":"
		        "\"sympozium.ai/v1alpha1\",\"kind\":\"AgentRun\","
		        "\"name\":\"run-%d\",\"uid\":\"%s\",\"controller\":"
		        "true,"
		        "\"blockOwnerDeletion\":true}]},\"spec\":{"
		        "\"backoffLimit\""
		        ":0,\"ttlSecondsAfterFinished\":3600,"
		        "\"activeDeadlineSeconds\":600,\"template\":{"
		        "\"metadata\":{",
		        r, l->run_uid[r]);
		run_labels(b, r);
		buf_puts(b, "},\"spec\":");
		pod_spec(b, r);
		buf_puts(b, "}}}");
		break;
	case 5:
		buf_printf(path,
		        "/apis/batch/v1/namespaces/%s/jobs/run-%d/status", ns,
		        r);
		buf_puts(b,
		        "{\"status\":{\"startTime\":\"2026-11-30T10:00:00Z\","
		        "\"completionTime\":\"2026-11-30T10:01:00Z\","
		        "\"succeeded\":1,\"active\":0,\"ready\":0,"
		        "\"conditions\":[{\"type\":\"SuccessCriteriaMet\","
		        "\"status\":\"True\",\"lastProbeTime\":\"2026-11-"
		        "30T10:"
		        "01:00Z\",\"lastTransitionTime\":\"2026-11-30T10:01:"
		        "00Z"
		        "\"},{\"type\":\"Complete\",\"status\":\"True\","
		        "\"reason\":\"CompletionsReached\",\"lastProbeTime\":"
		        "\"2026-11-30T10:01:00Z\",\"lastTransitionTime\":"
		        "\"2026-11-30T10:01:00Z\"}]}}");
		*m = "PATCH";
		*ct = "application/merge-patch+json";
		break;
	case 6:
		buf_printf(path, "/api/v1/namespaces/%s/pods", ns);
		buf_printf(b, "{\"metadata\":{\"name\":\"run-%d-abcde\",", r);
		buf_printf(b,
		        "\"labels\":{\"sympozium.ai/instance\":\"inst-%d\","
		        "\"sympozium.ai/agent-run\":\"run-%d\","
		        "\"batch.kubernetes.io/job-name\":\"run-%d\","
		        "\"job-name\":\"run-%d\","
		        "\"batch.kubernetes.io/controller-uid\":\"%s\"}",
		        r % 200, r, r, r, l->job_uid[r]);
		buf_printf(b,
		        ",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
		        "\"kind\":\"Job\",\"name\":\"run-%d\",\"uid\":\"%s\","
		        "\"controller\":true,\"blockOwnerDeletion\":true}]},"
		        "\"spec\":",
		        r, l->job_uid[r]);
		pod_spec(b, r);
		buf_puts(b, "}");
		break;
	default:
		buf_printf(path,
		        "/api/v1/namespaces/%s/pods/run-%d-abcde/status", ns,
		        r);
		buf_puts(b,
		        "{\"status\":{\"phase\":\"Succeeded\",\"podIP\":"
		        "\"10.244.1.17\",\"hostIP\":\"172.18.0.3\","
		        "\"startTime\":\"2026-11-30T10:00:00Z\","
		        "\"conditions\":[{\"type\":\"Ready\",\"status\":"
		        "\"False\",\"reason\":\"PodCompleted\"}],"
		        "\"containerStatuses\":[{\"name\":\"agent\",\"ready\":"
		        "false,\"restartCount\":0,\"image\":\"ghcr.io/"
		        "sympozium-ai/sympozium/agent-runner:v0.1.0\","
		        "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":"
		        "\"Completed\",\"startedAt\":\"2026-11-30T10:00:02Z\","
		        "\"finishedAt\":\"2026-11-30T10:00:59Z\"}}},{\"name\":"
		        "\"ipc-bridge\",\"ready\":false,\"restartCount\":0,"
		        "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":"
		        "\"Completed\"}}}]}}");
		*m = "PATCH";
		*ct = "application/merge-patch+json";
		break;
	}
}

struct stage_arg {
	struct load *l;
	int stage;
};

static void
b_load(void *arg, int i, struct buf *path, struct buf *body, const char **m,
        const char **ct)
{
	struct stage_arg *s = arg;

	b_stage(s->l, s->stage, i, path, body, m, ct);
}

static void
a_load(void *arg, int i, const char *body)
{
	struct stage_arg *s = arg;

	if (s->stage == 2) {
		a_run(s->l, i, body);
	} else if (s->stage == 4) {
		a_job(s->l, i, body);
	}
}

static int
load_runs(const char *base, struct load *l)
{
	for (int i = 0; i < l->nns; i++) {
		char ns[16];
		snprintf(ns, sizeof(ns), "ns-%d", i);
		if (make_ns(base, ns) != 0) {
			return (-1);
		}
	}
	for (int s = 0; s < NSTAGES; s++) {
		struct stage_arg sa = { l, s };
		if (par_send(base, l->runs, b_load, a_load, &sa) < 0) {
			return (-1);
		}
	}
	return (0);
}

/* The live children of parent; returns how many (<= max). */
static int
children(pid_t parent, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d != NULL && n < max && (e = readdir(d)) != NULL) {
		char path[64], l[512], *p;
		long pid = strtol(e->d_name, &p, 10);
		FILE *f;
		int pp = 0;
		char st = 0;

		if (*p != '\0' || pid <= 0) {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "re")) == NULL) {
			continue;
		}
		if (fgets(l, sizeof(l), f) != NULL
		        && (p = strrchr(l, ')')) != NULL
		        && sscanf(p + 1, " %c %d", &st, &pp) == 2
		        && pp == parent && st != 'Z') {
			out[n++] = (pid_t)pid;
		}
		fclose(f);
	}
	if (d != NULL) {
		closedir(d);
	}
	return (n);
}

/* Waits until the supervisor has sent no request (Leases aside) for
 * quiet_ms; returns the time of its last request (real µs), or -1. */
static int64_t
wait_quiet(const struct ksim_api *a, int quiet_ms, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (ksim_now_ms() < end) {
		struct reqs rs;
		int64_t last = 0;
		if (reqs_load(a->request_log, &rs) != 0) {
			return (-1);
		}
		for (size_t i = 0; i < rs.n; i++) {
			if (rs.v[i].sd
			        && strstr(rs.v[i].path, "/leases") == NULL
			        && strstr(rs.v[i].path, "watch=") == NULL
			        && rs.v[i].ts > last) {
				last = rs.v[i].ts;
			}
		}
		reqs_free(&rs);
		if (last > 0 && now_us() - last > quiet_ms * 1000LL) {
			return (last);
		}
		ksim_sleep_ms(200);
	}
	fail("the supervisor did not go quiet in %d ms", ms);
	return (-1);
}

/* Whether a status reply shows a controller with queued or processing
 * keys (parked ones wait for their time: not a backlog). */
static bool
queues_busy(json_object *reply)
{
	json_object *ctls = jx_get(reply, "controllers");
	size_t n = ctls != NULL ? json_object_array_length(ctls) : 0;
	int64_t depth, proc;

	if (ctls == NULL) {
		return (true);
	}
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(ctls, i);
		if (jx_get_int(c, "depth", &depth) != 0
		        || jx_get_int(c, "processing", &proc) != 0
		        || depth + proc > 0) {
			return (true);
		}
	}
	return (false);
}

/* Waits until the supervisor's work queues are empty with nothing
 * processing (its status on the health socket, polled every 20 ms): a
 * start-up backlog of completed runs sends no request, so the request
 * log's quiet time alone ends at the last live change's writes once they
 * go first (docs-perfqueue.md).  Returns when it saw that (real µs), or
 * -1. */
static int64_t
wait_drained(const struct sd *s, int ms)
{
	int64_t end = ksim_now_ms() + ms;
	struct hp_req req = { .cmd = HP_STATUS };
	char path[200], err[256];

	snprintf(path, sizeof(path), "%s/health.sock", s->rundir);
	while (ksim_now_ms() < end) {
		json_object *reply = NULL;
		if (ctl_call(path, &req, 2000, &reply, NULL, err, sizeof(err))
		        == CTL_EXIT_OK) {
			bool busy = queues_busy(reply);
			json_object_put(reply);
			if (!busy) {
				return (now_us());
			}
		}
		ksim_sleep_ms(20);
	}
	fail("the supervisor's queues did not drain in %d ms", ms);
	return (-1);
}

/* The first supervisor write on a path containing frag at or after t. */
static int64_t
first_write(const struct ksim_api *a, const char *frag, int64_t t, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (ksim_now_ms() < end) {
		struct reqs rs;
		int64_t ts = -1;
		if (reqs_load(a->request_log, &rs) != 0) {
			return (-1);
		}
		for (size_t i = 0; i < rs.n && ts < 0; i++) {
			if (is_obj_write(&rs.v[i]) && rs.v[i].ts >= t
			        && strstr(rs.v[i].path, frag) != NULL) {
				ts = rs.v[i].ts;
			}
		}
		reqs_free(&rs);
		if (ts >= 0) {
			return (ts);
		}
		ksim_sleep_ms(20);
	}
	fail("no write on %s within %d ms", frag, ms);
	return (-1);
}

/* The resource plural of an API path ("?" when none). */
static void
resource_of(const char *path, char *out, size_t len)
{
	char seg[8][64];
	int n = 0, i;
	const char *p = path;

	while (n < 8 && *p == '/') {
		size_t l = strcspn(p + 1, "/?");
		snprintf(seg[n++], sizeof(seg[0]), "%.*s", (int)l, p + 1);
		p += 1 + l;
	}
	i = n > 0 && strcmp(seg[0], "api") == 0 ? 2 : 3;
	if (i < n && strcmp(seg[i], "namespaces") == 0 && i + 2 < n) {
		i += 2;
	}
	snprintf(out, len, "%s", i < n ? seg[i] : "?");
}

/* Prints the supervisor's requests between t0 and t1 by method and
 * resource (the last plural-looking path segment before a name). */
static void
req_summary(const struct ksim_api *a, int64_t t0, int64_t t1)
{
	struct reqs rs;
	char keys[32][96];
	int counts[32] = { 0 }, nk = 0;

	if (reqs_load(a->request_log, &rs) != 0) {
		return;
	}
	for (size_t i = 0; i < rs.n; i++) {
		const struct req *r = &rs.v[i];
		char key[96], res[64] = "?";
		const char *p = r->path;
		int k;

		if (!r->sd || r->ts < t0 || r->ts > t1) {
			continue;
		}
		resource_of(p, res, sizeof(res));
		snprintf(key, sizeof(key), "%s %s%s", r->method, res,
		        strstr(r->path, "/status") != NULL ? "/status" : "");
		for (k = 0; k < nk && strcmp(keys[k], key) != 0; k++) { }
		if (k == nk && nk < 32) {
			snprintf(keys[nk++], sizeof(keys[0]), "%s", key);
		}
		if (k < 32) {
			counts[k]++;
		}
	}
	reqs_free(&rs);
	printf("  supervisor requests from start to backlog done:");
	for (int k = 0; k < nk; k++) {
		printf("%s %s %d", k % 4 == 0 ? "\n   " : ",", keys[k],
		        counts[k]);
	}
	printf("\n");
}

static void
report_memory(
        const struct sd *s, const struct opload_raw *raw, const char *sync)
{
	pid_t kids[64];
	int nk = children(s->pid, kids, 64);
	long sup = opload_pss_kib(s->pid), maxw = 0;
	unsigned long long cobj = 0, cbytes = 0;
	const char *p = strstr(sync, "watches, ");
	double limit = opload_sup_limit(raw);
	char bs[80];

	if (p != NULL) {
		sscanf(p, "watches, %llu objects, %llu bytes", &cobj, &cbytes);
	}
	for (int i = 0; i < nk; i++) {
		long k = opload_pss_kib(kids[i]);
		maxw = k > maxw ? k : maxw;
	}
	printf("== memory: %zu objects (%zu in all watches), raw JSON %.2f "
	       "MiB "
	       "(%.2f MiB with every watch's copy)\n",
	        raw->uobjs, raw->objs, raw->ubytes / MIB, raw->bytes / MIB);
	snprintf(bs, sizeof(bs), "limit %.2f MiB", limit / MIB);
	row("supervisor PSS (MiB)", sup / 1024.0, "MiB", bs, "< 1.5 raw + 8",
	        sup * 1024.0 < limit);
	snprintf(bs, sizeof(bs), "ratio %.2f to raw",
	        (sup * 1024.0) / (double)raw->ubytes);
	row("supervisor PSS per object", sup * 1024.0 / (double)raw->uobjs,
	        "B", bs, "", -1);
	row("supervisor peak RSS (VmHWM)", opload_hwm_kib(s->pid) / 1024.0,
	        "MiB", "during start-up", "", -1);
	row("raw JSON per object", (double)raw->ubytes / (double)raw->uobjs,
	        "B", "", "", -1);
	row("cache bytes (at sync, all watches)", cbytes / MIB, "MiB", "", "",
	        -1);
	snprintf(bs, sizeof(bs), "raw %.2f MiB", raw->bytes / MIB);
	row("cache bytes / raw (all watches)",
	        raw->bytes > 0 ? (double)cbytes / (double)raw->bytes : 0, "",
	        bs, "", -1);
	snprintf(bs, sizeof(bs), "%d workers", nk);
	row("largest worker PSS (MiB)", maxw / 1024.0, "MiB", bs, "< 4",
	        maxw < 4096);
	snprintf(bs, sizeof(bs), "< 1.5 raw + 8 MiB = %.1f MiB", limit / MIB);
	bench_result("operator", "supervisor PSS", sup / 1024.0, "MiB",
	        raw->ubytes / MIB, (sup * 1024.0) / (double)raw->ubytes, bs,
	        sup * 1024.0 < limit);
	bench_result("operator", "supervisor PSS per cached object",
	        sup * 1024.0 / (double)raw->uobjs, "B",
	        (double)raw->ubytes / (double)raw->uobjs,
	        (sup * 1024.0) / (double)raw->ubytes, NULL, BV_NONE);
	bench_result("operator", "largest worker PSS", maxw / 1024.0, "MiB",
	        NAN, NAN, "< 4 MiB", maxw < 4096);
}

/* The RESULT lines of the start phase (result.h); times in us. */
static void
start_results(int runs, int64_t sync, int64_t ready, int64_t probe)
{
	char fig[80];

	snprintf(fig, sizeof(fig), "start to caches synced, %d AgentRuns",
	        runs);
	bench_result("operator", fig, sync / 1e3, "ms", NAN, NAN,
	        "<= 2,000 ms", sync <= 2000000);
	bench_result("operator", "start to all workers ready", ready / 1e3,
	        "ms", NAN, NAN, "<= 2,000 ms", ready <= 2000000);
	bench_result("operator", "new AgentRun in the backlog to first write",
	        probe / 1e3, "ms", NAN, NAN, "<= 1,000 ms", probe <= 1000000);
}

static void
bench_start_memory(void)
{
	struct ksim_api a;
	struct load l
	        = { .runs = quick ? 1000 : 10000, .nns = quick ? 4 : 20 };
	struct sd s = { 0 };
	struct opload_raw raw;
	char sync[512] = "", ready[512] = "";
	int64_t t0, tsync, tready, tcreate, twrite, tquiet, tdrain;
	char bs[64];

	l.run_uid = xcalloc((size_t)l.runs, sizeof(*l.run_uid));
	l.job_uid = xcalloc((size_t)l.runs, sizeof(*l.job_uid));
	if (start_kubesim(&a) != 0) {
		goto done;
	}
	if (apply_crds(ksim_url(a.k)) != 0 || load_runs(ksim_url(a.k), &l) != 0
	        || opload_raw_json(ksim_url(a.k), &raw) != 0) {
		goto out;
	}
	t0 = now_us();
	if (sd_start(&s, &a, "start", NULL) != 0) {
		goto out;
	}
	tsync = sd_wait(&s, "caches synced", sync, sizeof(sync), 60000);
	if (tsync < 0) {
		goto out;
	}
	tcreate = now_us();
	if (simple(ksim_url(a.k), "POST",
	            "/apis/sympozium.ai/v1alpha1/namespaces/ns-0/agentruns",
	            "application/json",
	            "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	            "\"AgentRun\",\"metadata\":{\"name\":\"probe\"},\"spec\":{"
	            "\"instanceRef\":\"nobody\",\"agentId\":\"default\","
	            "\"sessionKey\":\"probe\",\"task\":\"probe\",\"model\":{"
	            "\"provider\":\"anthropic\",\"model\":\"m\","
	            "\"authSecretRef\":\"k\"}}}")
	        != 0) {
		goto out;
	}
	tready = sd_wait(&s, "workers ready", ready, sizeof(ready), 60000);
	twrite = first_write(&a, "/agentruns/probe", tcreate, 120000);
	tdrain = wait_drained(&s, 300000);
	tquiet = wait_quiet(&a, 1500, 300000);
	if (tready < 0 || twrite < 0 || tquiet < 0 || tdrain < 0) {
		goto out;
	}
	printf("== start: %d AgentRuns with Job, Pod, ConfigMap, "
	       "ServiceAccount in %d namespaces\n",
	        l.runs, l.nns);
	row("start to caches synced (ms)", (tsync - t0) / 1e3, "ms", "",
	        "<= 2000", tsync - t0 <= 2000000);
	row("start to all workers ready (ms)", (tready - t0) / 1e3, "ms", "",
	        "<= 2000", tready - t0 <= 2000000);
	snprintf(bs, sizeof(bs), "created at sync+%.0f ms",
	        (tcreate - tsync) / 1e3);
	row("new AgentRun to first write (ms)", (twrite - tcreate) / 1e3, "ms",
	        bs, "<= 1000", twrite - tcreate <= 1000000);
	row("sync to backlog done (ms)",
	        ((tdrain > tquiet ? tdrain : tquiet) - tsync) / 1e3, "ms",
	        "queues drained, requests quiet", "", -1);
	row("sync to queues drained (ms)", (tdrain - tsync) / 1e3, "ms",
	        "status polled every 20 ms", "", -1);
	start_results(l.runs, tsync - t0, tready - t0, twrite - tcreate);
	snprintf(bs, sizeof(bs), "workers %.0f ms",
	        (double)children_cpu_ms(s.pid));
	row("CPU of the supervisor (ms)", (double)cpu_ms(s.pid), "ms", bs, "",
	        -1);
	req_summary(&a, t0, tquiet);
	report_memory(&s, &raw, sync);
out:
	if (s.pid > 0 && WEXITSTATUS(sd_stop(&s, SIGTERM)) != 0) {
		fail("sympoziumd (start) did not exit 0");
	}
	ksim_api_stop(&a);
done:
	free(l.run_uid);
	free(l.job_uid);
}

/* ---- leader handover ---- */

static const char *const LE_ARGS[] = { "--controllers", "skillpack",
	"--leader-elect", "--leader-elect-lease-duration", "3s",
	"--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period",
	"500ms", NULL };

/* The first successful Lease write at or after t by a supervisor whose
 * user agent does not start with old_ua ("sympoziumd/0.1 IDENTITY "). */
static int64_t
lease_taken(const struct ksim_api *a, const char *old_ua, int64_t t, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (ksim_now_ms() < end) {
		struct reqs rs;
		int64_t ts = -1;
		if (reqs_load(a->request_log, &rs) != 0) {
			return (-1);
		}
		for (size_t i = 0; i < rs.n && ts < 0; i++) {
			const struct req *r = &rs.v[i];
			if (r->sd && r->ts >= t && is_write(r)
			        && strstr(r->path, "/leases") != NULL
			        && r->code >= 200 && r->code < 300
			        && strncmp(r->ua, old_ua, strlen(old_ua))
			                != 0) {
				ts = r->ts;
				if (getenv("BENCH_DEBUG") != NULL) {
					fprintf(stderr,
					        "lease taken: %s %s by "
					        "%s (old %s) +%lld us\n",
					        r->method, r->path, r->ua,
					        old_ua,
					        (long long)(r->ts - t));
				}
			}
		}
		reqs_free(&rs);
		if (ts >= 0) {
			return (ts);
		}
		ksim_sleep_ms(20);
	}
	fail("no new leader within %d ms", ms);
	return (-1);
}

/* The index of the leading supervisor (its log says "leading (epoch N)
 * as ID" after since), its user agent in ua; -1 when none within ms. */
static int
leader_of(struct sd *s, int64_t since, char *ua, size_t len, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (ksim_now_ms() < end) {
		for (int i = 0; i < 2; i++) {
			char line[512], *p;
			FILE *f = fopen(s[i].log, "re");
			int64_t ts = -1;
			while (f != NULL
			        && fgets(line, sizeof(line), f) != NULL) {
				char *sp = strchr(line, ' '), tsb[64];
				if ((p = strstr(line, ") as ")) == NULL
				        || strstr(line, "leading (epoch")
				                == NULL
				        || sp == NULL
				        || sscanf(sp + 1, "%63s", tsb) != 1
				        || timefmt_parse(tsb, &ts) != 0
				        || ts < since) {
					continue;
				}
				p[strcspn(p, "\n")] = '\0';
				snprintf(ua, len, "sympoziumd/0.1 %s ", p + 5);
				fclose(f);
				return (i);
			}
			if (f != NULL) {
				fclose(f);
			}
		}
		ksim_sleep_ms(20);
	}
	fail("no supervisor leads");
	return (-1);
}

static void
stats(const double *v, int n, double *med, double *max)
{
	double t[64];

	memcpy(t, v, (size_t)n * sizeof(*v));
	for (int i = 1; i < n; i++) {
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	}
	*med = t[n / 2];
	*max = t[n - 1];
}

static int
handover_round(struct ksim_api *a, struct sd *s, int sig, double *ms)
{
	char ua[300], tag[32];
	static int gen;
	int li = leader_of(s, 0, ua, sizeof(ua), 15000);
	int64_t t, tk;

	if (li < 0) {
		return (-1);
	}
	t = now_us();
	sd_stop(&s[li], sig);
	tk = lease_taken(a, ua, t, 15000);
	if (tk < 0) {
		return (-1);
	}
	*ms = (tk - t) / 1e3;
	/* the killed one comes back as the standby, with a fresh log */
	snprintf(tag, sizeof(tag), "le%d", ++gen);
	if (sd_start(&s[li], a, tag, LE_ARGS) != 0) {
		return (-1);
	}
	/* let it try the Lease once (and fail) before the next round */
	ksim_sleep_ms(2 * RETRY_MS + 300);
	return (0);
}

static void
bench_handover(void)
{
	struct ksim_api a;
	struct sd s[2] = { { 0 }, { 0 } };
	int rounds = quick ? 2 : 6;
	double term[64], kill_[64], med, max;
	int nt = 0, nk = 0;
	char bs[80], fig[64];

	if (start_kubesim(&a) != 0) {
		return;
	}
	if (apply_crds(ksim_url(a.k)) != 0 || sd_start(&s[0], &a, "a", LE_ARGS)
	        || sd_start(&s[1], &a, "b", LE_ARGS) != 0) {
		goto out;
	}
	for (int i = 0; i < rounds; i++) {
		if (handover_round(&a, s, SIGTERM, &term[nt]) != 0) {
			goto out;
		}
		nt++;
		if (handover_round(&a, s, SIGKILL, &kill_[nk]) != 0) {
			goto out;
		}
		nk++;
	}
	printf("== leader handover: lease 3s, renew 2s, retry 500ms, %d "
	       "rounds each\n",
	        rounds);
	stats(term, nt, &med, &max);
	snprintf(bs, sizeof(bs), "median %.0f ms", med);
	row("SIGTERM: kill to new leader (max)", max, "ms", bs, "< 1000",
	        max < 1000);
	snprintf(fig, sizeof(fig), "SIGTERM handover, max of %d", nt);
	bench_result("operator", fig, max, "ms", NAN, NAN, "< 1,000 ms",
	        max < 1000);
	stats(kill_, nk, &med, &max);
	snprintf(bs, sizeof(bs), "median %.0f ms", med);
	row("SIGKILL: kill to new leader (max)", max, "ms", bs, "<= 3500",
	        max <= LEASE_MS + RETRY_MS);
	snprintf(fig, sizeof(fig), "SIGKILL handover, max of %d", nk);
	bench_result("operator", fig, max, "ms", NAN, NAN,
	        "<= lease + retry = 3,500 ms", max <= LEASE_MS + RETRY_MS);
out:
	for (int i = 0; i < 2; i++) {
		if (s[i].pid > 0) {
			sd_stop(&s[i], SIGTERM);
		}
	}
	ksim_api_stop(&a);
}

static double
loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f != NULL) {
		if (fscanf(f, "%lf", &l) != 1) {
			l = -1;
		}
		fclose(f);
	}
	return (l);
}

int
main(int argc, char **argv)
{
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (argv[i][0] != '-' && only == NULL) {
			only = argv[i];
		} else {
			fprintf(stderr,
			        "usage: bench_operator [--quick] "
			        "[writes|start|handover]\n");
			return (2);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	printf("== operator benchmark (%s), load average %.2f\n",
	        quick ? "quick" : "full", loadavg());
	printf("  %-34s %14s %-8s %-26s %-16s %s\n", "figure", "value", "unit",
	        "baseline / note", "target", "result");
	if (only == NULL || strcmp(only, "writes") == 0) {
		bench_writes(1);
		bench_writes(4);
	}
	if (only == NULL || strcmp(only, "start") == 0) {
		bench_start_memory();
	}
	if (only == NULL || strcmp(only, "handover") == 0) {
		bench_handover();
	}
	printf("== load average at the end %.2f\n", loadavg());
	curl_global_cleanup();
	return (errors > 0 ? 1 : 0);
}
