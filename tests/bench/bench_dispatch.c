/*
 * bench_dispatch.c: the supervisor benchmarks of issue 7 item 4 (dispatch
 * latency and throughput, isolation cost, restart), driven by
 * tests/bench/dispatch.sh.  Each phase but ipc starts its own bin/kubesim;
 * each prints absolute figures, the baseline measured in the same run, the
 * ratio, and PASS or MISS per target.  Exit status 1 only on errors.
 *
 * Phases (tests/bench/README.md has the method):
 *  ipc       WORK round trips to an echoing child over ipc_sock (nng);
 *            baseline: the same over a plain AF_UNIX SOCK_SEQPACKET pair.
 *  latency   bin/tests/sympoziumd-test (sympoziumd with the test
 *            controller; test worker, testctl=6) while this
 *            driver PUTs ConfigMaps at 1,000/s; the test controller's
 *            stamp action logs (resourceVersion, CLOCK_MONOTONIC us) at
 *            the start of each reconcile, sandbox on; baseline: a plain watch
 *            opened by this driver on the same objects.
 *  noop      the supervisor's modules in this process (sup_new(), the
 *            loop of sup_run() below) with six test workers, keys of
 *            cached objects added straight to the queue; baseline: the
 *            same keys, WORK bodies and result path in-process.
 *  isolation the real SkillPack reconciler, multi-process (1 and 2 workers)
 *            against in-process: convergence of N new packs (with the
 *            API writes) and resyncs of the converged packs.
 *  restart   SIGKILL of one of six test workers until READY, while the
 *            other five reconcile; baseline: the five without kills.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "ipc/ipc.h"
#include "supervisor/cache.h"
#include "supervisor/settle.h"
#include "supervisor/sup.h"
#include "tests/bench/result.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"
#include "workers/reconcile.h"
#include "workers/runtime.h"
#include "workers/view.h"

#define ENABLED "testctl.sympozium.ai/enabled"
#define ACTION  "testctl.sympozium.ai/action"

#define KILL_EVERY_MS 50 /* restart phase: 20 kills per second */

static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_CRD
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };
static const struct kapi_res R_SKP
        = { "sympozium.ai", "v1alpha1", "skillpacks", true };

static struct {
	bool quick;
	const char *bin;
	int errors;
	int misses;
} B = { .bin = "bin" };

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

static void
fail(const char *what)
{
	fprintf(stderr, "bench dispatch: %s\n", what);
	printf("ERROR: %s\n", what);
	B.errors++;
}

static const char *
verdict(bool ok)
{
	if (!ok) {
		B.misses++;
	}
	return (ok ? "PASS" : "MISS");
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return ((x > y) - (x < y));
}

/* The p-th percentile (0..100) of v[0..n) (sorted in place), 0 if n = 0. */
static int64_t
pct(int64_t *v, size_t n, double p)
{
	if (n == 0) {
		return (0);
	}
	qsort(v, n, sizeof(*v), cmp_i64);
	size_t i = (size_t)((p / 100.0) * (double)(n - 1) + 0.5);
	return (v[i < n ? i : n - 1]);
}

/* ------------------------------------------------------------------ */
/* kubesim and objects */

static int
start_api(struct ksim_api *a)
{
	static const char *const args[]
	        = { "--watch-history", "200000", NULL };

	if (ksim_api_start(a, args, "bench-dispatch/0.1", 15000) != 0) {
		fail("kubesim did not start");
		return (-1);
	}
	return (0);
}

/* sup_free(), and SIGTERM and SIGINT, which sup_new() blocked, unblocked
 * again (the next kubesim would inherit them).  SIGCHLD stays blocked
 * from main() on in every thread, so that it reaches the signalfd. */
static void
sup_done(struct sup *s)
{
	sigset_t set;

	sup_free(s);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void
api_stop(struct ksim_api *a)
{
	if (a->k != NULL && ksim_api_stop(a) != 0) {
		fail("kubesim did not exit cleanly");
	}
}

static json_object *
cm_new(const char *ns, const char *name, const char *action)
{
	json_object *o = json_object_new_object();

	jx_set_path(o, "metadata.name", json_object_new_string(name));
	jx_set_path(o, "metadata.namespace", json_object_new_string(ns));
	jx_setv(o, json_object_new_string("true"), "metadata", "labels",
	        ENABLED, NULL);
	jx_setv(o, json_object_new_string(action), "metadata", "annotations",
	        ACTION, NULL);
	jx_set_path(o, "data.v", json_object_new_string("0"));
	jx_set_path(o, "data.pad",
	        json_object_new_string("0123456789abcdef0123456789abcdef"
	                               "0123456789abcdef0123456789abcdef"));
	return (o);
}

static int
make_ns(struct ksim_api *a, const char *ns)
{
	static const struct kapi_res nsres = { "", "v1", "namespaces", false };
	json_object *o = json_object_new_object();
	struct kapi_err e = KAPI_ERR_INIT;

	jx_set_path(o, "metadata.name", json_object_new_string(ns));
	enum kapi_rc rc = kapi_create(a->c, &nsres, NULL, o, NULL, &e);
	kapi_err_fini(&e);
	json_object_put(o);
	return (rc == KAPI_OK || rc == KAPI_EEXISTS ? 0 : -1);
}

/* Creates n ConfigMaps b-00000... in ns for the test controller; objs
 * (may be NULL) receives the created objects (caller puts). */
static int
create_cms(struct ksim_api *a, const char *ns, int n, const char *action,
        json_object **objs)
{
	if (make_ns(a, ns) != 0) {
		fail("cannot create a namespace");
		return (-1);
	}
	for (int i = 0; i < n; i++) {
		char name[32];
		struct kapi_err e = KAPI_ERR_INIT;
		json_object *out = NULL;

		snprintf(name, sizeof(name), "b-%05d", i);
		json_object *o = cm_new(ns, name, action);
		enum kapi_rc rc = kapi_create(a->c, &R_CM, ns, o, &out, &e);
		kapi_err_fini(&e);
		json_object_put(o);
		if (rc != KAPI_OK) {
			fail("cannot create a ConfigMap");
			return (-1);
		}
		if (objs != NULL) {
			objs[i] = out;
		} else {
			json_object_put(out);
		}
	}
	return (0);
}

static int
apply_skillpack_crd(struct ksim_api *a)
{
	const char *path = "deploy/crds/sympozium.ai_skillpacks.yaml";
	size_t len = 0;
	char *text = testutil_read_file(path, &len);
	json_object *crd = NULL;
	char err[256];
	int rc = -1;

	if (text != NULL
	        && yamlj_parse_doc(text, len, &crd, err, sizeof(err)) == 0) {
		struct kapi_err e = KAPI_ERR_INIT;
		rc = kapi_create(a->c, &R_CRD, NULL, crd, NULL, &e) == KAPI_OK
		        ? 0
		        : -1;
		kapi_err_fini(&e);
	}
	json_object_put(crd);
	free(text);
	if (rc != 0) {
		fail("cannot apply the SkillPack CRD (deploy/crds)");
	}
	return (rc);
}

static int
create_skillpacks(struct ksim_api *a, const char *ns, int n)
{
	if (make_ns(a, ns) != 0 || apply_skillpack_crd(a) != 0) {
		return (-1);
	}
	for (int i = 0; i < n; i++) {
		char name[32];
		json_object *o = json_object_new_object();
		struct kapi_err e = KAPI_ERR_INIT;
		enum kapi_rc rc;

		snprintf(name, sizeof(name), "sp-%05d", i);
		jx_set_path(o, "apiVersion",
		        json_object_new_string("sympozium.ai/v1alpha1"));
		jx_set_path(o, "kind", json_object_new_string("SkillPack"));
		jx_set_path(o, "metadata.name", json_object_new_string(name));
		jx_set_path(o, "spec",
		        testutil_json(
		                "{\"category\":\"bench\",\"version\":\"0.1."
		                "0\","
		                "\"skills\":[{\"name\":\"review\","
		                "\"description\":\"d\","
		                "\"content\":\"# Review\\n- check it\\n\"},"
		                "{\"name\":\"security\",\"content\":\"# "
		                "Sec\\n\"}]}",
		                32));
		int64_t end = ksim_now_ms() + 5000;
		do { /* the CRD may take a moment to be served */
			kapi_err_fini(&e);
			e = (struct kapi_err)KAPI_ERR_INIT;
			rc = kapi_create(a->c, &R_SKP, ns, o, NULL, &e);
		} while (rc == KAPI_ENOTFOUND && ksim_now_ms() < end);
		kapi_err_fini(&e);
		json_object_put(o);
		if (rc != KAPI_OK) {
			fail("cannot create a SkillPack");
			return (-1);
		}
	}
	return (0);
}

/* ------------------------------------------------------------------ */
/* phase 0: one ipc round trip, nng pair1 against a plain AF_UNIX socket */

/* A WORK-sized message: one of the benchmark's ConfigMaps. */
static json_object *
sample_work(void)
{
	struct ipc_work w = { .key = "tp/b-00001",
		.epoch = 1,
		.object = cm_new("tp", "b-00001", "noop"),
		.deadline_ms = 60000 };

	return (ipc_work_new(&w));
}

/* The echo peer over a SOCK_SEQPACKET descriptor: decode, encode, send
 * back, until the other end closes. */
static void
echo_unix(int fd)
{
	static char data[1 << 16];
	ssize_t n;

	while ((n = read(fd, data, sizeof(data))) > 0) {
		struct ipc_msg m;
		struct buf b = BUF_INIT;
		char err[128];

		if (ipc_decode(data, (size_t)n, sizeof(data), &m, err,
		            sizeof(err))
		                != 0
		        || ipc_encode(m.type, m.reqid, m.body, &b) != 0
		        || write(fd, b.data, b.len) != (ssize_t)b.len) {
			_exit(1);
		}
		buf_fini(&b);
		ipc_msg_fini(&m);
	}
	_exit(0);
}

static void
echo_nng(const char *path)
{
	char err[256];
	struct ipc_sock *s = ipc_sock_dial(path, 0, 5000, err, sizeof(err));

	while (s != NULL) {
		struct ipc_msg m = { 0 };
		enum ipc_sock_rc rc
		        = ipc_sock_recv_wait(s, 2000, &m, err, sizeof(err));
		if (rc != IPC_SOCK_OK || m.type == IPC_QUIT) {
			break;
		}
		ipc_sock_send(s, m.type, m.reqid, m.body);
		ipc_msg_fini(&m);
	}
	_exit(0);
}

static int64_t
rt_unix(int fd, json_object *body, int n, int64_t *lat)
{
	static char data[1 << 16];
	int64_t t0 = now_us();

	for (int i = 0; i < n; i++) {
		struct buf b = BUF_INIT;
		struct ipc_msg m;
		char err[128];
		int64_t t = now_us();

		ipc_encode(IPC_WORK, (uint32_t)i, body, &b);
		if (write(fd, b.data, b.len) != (ssize_t)b.len) {
			return (-1);
		}
		buf_fini(&b);
		struct pollfd pfd = { fd, POLLIN, 0 };
		poll(&pfd, 1, 5000);
		ssize_t got = read(fd, data, sizeof(data));
		if (got <= 0
		        || ipc_decode(data, (size_t)got, sizeof(data), &m, err,
		                   sizeof(err))
		                != 0) {
			return (-1);
		}
		ipc_msg_fini(&m);
		lat[i] = now_us() - t;
	}
	return (now_us() - t0);
}

static int64_t
rt_nng(struct ipc_sock *s, json_object *body, int n, int64_t *lat)
{
	int64_t t0 = now_us();

	for (int i = 0; i < n; i++) {
		struct ipc_msg m = { 0 };
		char err[128];
		int64_t t = now_us();
		enum ipc_sock_rc rc;

		if (ipc_sock_send(s, IPC_WORK, (uint32_t)i, body)
		        != IPC_SOCK_OK) {
			return (-1);
		}
		/* as the supervisor waits: poll on the descriptor, then take
		 */
		while ((rc = ipc_sock_recv(s, &m, err, sizeof(err)))
		        == IPC_SOCK_AGAIN) {
			struct pollfd pfd = { ipc_sock_fd(s), POLLIN, 0 };
			poll(&pfd, 1, 5000);
		}
		if (rc != IPC_SOCK_OK) {
			return (-1);
		}
		ipc_msg_fini(&m);
		lat[i] = now_us() - t;
	}
	return (now_us() - t0);
}

/* Must run before anything in this process uses nng (the nng echo peer
 * is forked and initialises nng on its own). */
static void
phase_ipc(void)
{
	int n = B.quick ? 5000 : 20000, sp[2];
	char dir[] = "/tmp/bench-ipc.XXXXXX", path[64], err[256];
	json_object *body = sample_work();
	int64_t *lu = xcalloc((size_t)n, sizeof(*lu));
	int64_t *ln = xcalloc((size_t)n, sizeof(*ln));
	struct buf b = BUF_INIT;
	pid_t pu, pn;

	ipc_encode(IPC_WORK, 0, body, &b);
	if (mkdtemp(dir) == NULL
	        || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp)
	                != 0) {
		fail("ipc: no socket");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/s", dir);
	if ((pu = fork()) == 0) {
		close(sp[0]);
		echo_unix(sp[1]);
	}
	close(sp[1]);
	if ((pn = fork()) == 0) {
		close(sp[0]);
		echo_nng(path);
	}
	struct ipc_sock *s = ipc_sock_listen(path, 0, err, sizeof(err));
	int64_t tu = rt_unix(sp[0], body, n, lu);
	int64_t tn = s != NULL ? rt_nng(s, body, n, ln) : -1;
	close(sp[0]);
	if (s != NULL) {
		ipc_sock_send(s, IPC_QUIT, 0, NULL);
		ksim_sleep_ms(50);
	}
	ipc_sock_close(s);
	waitpid(pu, NULL, 0);
	waitpid(pn, NULL, 0);
	unlink(path);
	rmdir(dir);
	if (tu <= 0 || tn <= 0) {
		fail("ipc: a round trip failed");
		goto out;
	}
	printf("\n-- ipc round trip: %d WORK messages of %zu bytes, echoed "
	       "(decoded and re-encoded) by a child process\n",
	        n, b.len);
	double ru = n * 1e6 / (double)tu, rn = n * 1e6 / (double)tn;
	printf("%-34s %9.0f /s  p50 %.1f us  p99 %.1f us\n",
	        "baseline: AF_UNIX SOCK_SEQPACKET", ru, (double)pct(lu, n, 50),
	        (double)pct(lu, n, 99));
	printf("%-34s %9.0f /s  p50 %.1f us  p99 %.1f us  ratio %.3f\n",
	        "nng pair1 over ipc:// (ipc_sock)", rn, (double)pct(ln, n, 50),
	        (double)pct(ln, n, 99), rn / ru);
	bench_result("dispatch", "ipc round trips, nng (ipc_sock)", rn, "/s",
	        ru, bench_ratio(rn, ru), NULL, BV_NONE);
out:
	buf_fini(&b);
	json_object_put(body);
	free(lu);
	free(ln);
}

/* ------------------------------------------------------------------ */
/* phase 1: event-to-worker latency with bin/tests/sympoziumd-test */

struct rvt {
	int64_t rv;
	int64_t us;
};

struct watcher {
	struct ksim_watch *w;
	pthread_t th;
	volatile bool stop;
	struct rvt *seen;
	size_t nseen, cap;
};

static void *
watch_main(void *arg)
{
	struct watcher *wa = arg;

	while (!wa->stop) {
		json_object *ev = ksim_watch_next(wa->w, 100);
		if (ev == NULL) {
			continue;
		}
		int64_t t = now_us();
		const char *rv
		        = jx_get_str(ev, "object.metadata.resourceVersion");
		if (rv != NULL && wa->nseen < wa->cap) {
			wa->seen[wa->nseen++] = (struct rvt) { atoll(rv), t };
		}
		json_object_put(ev);
	}
	return (NULL);
}

static pid_t
spawn_sympoziumd(const char *kc, const char *logpath)
{
	char sd[512], wb[512];
	pid_t pid;

	snprintf(sd, sizeof(sd), "%s/tests/sympoziumd-test", B.bin);
	snprintf(wb, sizeof(wb), "%s/tests/sympozium-worker-test", B.bin);
	if ((pid = fork()) == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* the workers' stamps go to this log (stderr) */
		execl(sd, sd, "--kubeconfig", kc, "--controllers", "testctl",
		        "--worker-binary", wb, "--workers", "testctl=6",
		        "--metrics-bind-address=0",
		        "--health-probe-bind-address=0", (char *)NULL);
		_exit(127);
	}
	return (pid);
}

#define STAMP "testctl-stamp "

/* The stamps (testctl's stamp action) in the log at path, at most cap of
 * them into out (NULL: only counted).  Returns how many. */
static size_t
read_stamps(const char *path, struct rvt *out, size_t cap)
{
	FILE *f = fopen(path, "re");
	long long rv, us;
	char line[512];
	size_t n = 0;

	if (f == NULL) {
		return (0);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, STAMP, strlen(STAMP)) != 0
		        || sscanf(line + strlen(STAMP), "%lld %lld", &rv, &us)
		                != 2) {
			continue;
		}
		if (out != NULL && n < cap) {
			out[n] = (struct rvt) { rv, us };
		}
		n++;
	}
	fclose(f);
	return (out != NULL && n > cap ? cap : n);
}

static bool
wait_lines(const char *path, size_t n, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (read_stamps(path, NULL, 0) < n) {
		if (ksim_now_ms() > end) {
			return (false);
		}
		ksim_sleep_ms(10);
	}
	return (true);
}

/* Latencies (us) of sent[i] to the first receipt of the same rv. */
static size_t
match(const struct rvt *sent, size_t nsent, const struct rvt *got, size_t ngot,
        int64_t *lat)
{
	size_t n = 0;

	for (size_t i = 0; i < nsent; i++) {
		for (size_t j = 0; j < ngot; j++) {
			if (got[j].rv == sent[i].rv) {
				lat[n++] = got[j].us - sent[i].us;
				break;
			}
		}
	}
	return (n);
}

/* PUTs nev updates round robin over objs at rate per second; sent[i]
 * gets the new rv and the time before the PUT, answered[i] the time of
 * the answer. */
static int
pace_updates(struct ksim_api *a, json_object **objs, int nobj, int nev,
        int rate, struct rvt *sent, int64_t *answered)
{
	int64_t t0 = now_us() + 1000, step = 1000000 / rate;

	for (int i = 0; i < nev; i++) {
		json_object *o = objs[i % nobj], *out = NULL;
		struct kapi_err e = KAPI_ERR_INIT;
		char v[16];
		int64_t due = t0 + (int64_t)i * step, t;

		while ((t = now_us()) < due) {
			struct timespec ts = { 0, (due - t) * 1000 };
			nanosleep(&ts, NULL);
		}
		snprintf(v, sizeof(v), "%d", i + 1);
		jx_set_path(o, "data.v", json_object_new_string(v));
		int64_t ts0 = now_us();
		enum kapi_rc rc = kapi_update(a->c, &R_CM, "lat", o, &out, &e);
		answered[i] = now_us();
		kapi_err_fini(&e);
		if (rc != KAPI_OK) {
			json_object_put(out);
			fail("an update failed");
			return (-1);
		}
		const char *rv = jx_get_str(out, "metadata.resourceVersion");
		sent[i] = (struct rvt) { rv != NULL ? atoll(rv) : -1, ts0 };
		objs[i % nobj] = out;
		json_object_put(o);
	}
	return (0);
}

static void
print_lat(const char *row, int64_t *lat, size_t n, size_t expect)
{
	int64_t p50 = pct(lat, n, 50), p99 = pct(lat, n, 99),
	        mx = n > 0 ? lat[n - 1] : 0;

	printf("%-34s %6zu/%-6zu p50 %7.3f  p99 %7.3f  max %7.3f ms\n", row, n,
	        expect, p50 / 1000.0, p99 / 1000.0, mx / 1000.0);
}

static void
phase_latency(void)
{
	int nobj = 1000, nev = B.quick ? 1000 : 5000, rate = 1000;
	struct ksim_api a;
	char logp[256];
	json_object **objs = xcalloc((size_t)nobj, sizeof(*objs));
	struct rvt *sent = xcalloc((size_t)nev, sizeof(*sent));
	int64_t *answered = xcalloc((size_t)nev, sizeof(*answered));
	struct watcher wa = { .cap = (size_t)nev * 2 };
	pid_t sd = -1;

	if (start_api(&a) != 0) {
		goto out;
	}
	snprintf(logp, sizeof(logp), "%s/sympoziumd.log", a.dir);
	if (create_cms(&a, "lat", nobj, "stamp", objs) != 0) {
		goto out;
	}
	sd = spawn_sympoziumd(a.kubeconfig, logp);
	if (!wait_lines(logp, (size_t)nobj, 15000)) {
		fail("sympoziumd did not reconcile the initial objects");
		goto out;
	}
	wa.seen = xcalloc(wa.cap, sizeof(*wa.seen));
	char *path = xasprintf("/api/v1/namespaces/lat/configmaps?watch=1&"
	                       "labelSelector=%s&resourceVersion=%s",
	        ENABLED,
	        jx_get_str(objs[nobj - 1], "metadata.resourceVersion"));
	wa.w = ksim_watch_open(ksim_url(a.k), path, NULL);
	free(path);
	if (ksim_watch_status(wa.w, 5000) != 200) {
		fail("baseline watch did not open");
		goto out;
	}
	pthread_create(&wa.th, NULL, watch_main, &wa);
	if (pace_updates(&a, objs, nobj, nev, rate, sent, answered) != 0) {
		goto out;
	}
	bool all = wait_lines(logp, (size_t)(nobj + nev), 10000);
	ksim_sleep_ms(200);
	wa.stop = true;
	pthread_join(wa.th, NULL);

	struct rvt *got = xcalloc((size_t)(nobj + nev) * 2, sizeof(*got));
	size_t ngot = read_stamps(logp, got, (size_t)(nobj + nev) * 2);
	int64_t *lat = xcalloc((size_t)nev, sizeof(*lat));
	int64_t *blat = xcalloc((size_t)nev, sizeof(*blat));
	size_t n = match(sent, (size_t)nev, got, ngot, lat);
	size_t bn = match(sent, (size_t)nev, wa.seen, wa.nseen, blat);
	for (int i = 0; i < nev; i++) {
		answered[i] -= sent[i].us;
	}
	printf("\n-- latency: %d updates at %d/s over %d objects, "
	       "sympoziumd --workers testctl=6\n",
	        nev, rate, nobj);
	print_lat("baseline: PUT round trip", answered, (size_t)nev,
	        (size_t)nev);
	print_lat("baseline: PUT -> plain watch", blat, bn, (size_t)nev);
	print_lat("PUT -> worker receives WORK", lat, n, (size_t)nev);
	int64_t p99 = pct(lat, n, 99), bp99 = pct(blat, bn, 99);
	printf("%-34s %.2f\n", "ratio p99 worker / plain watch",
	        bp99 > 0 ? (double)p99 / (double)bp99 : 0.0);
	/* the same event at the plain watcher and at the worker: what the
	 * operator adds after the API server sent the event */
	size_t nd = 0;
	int64_t *d = xcalloc((size_t)nev, sizeof(*d));
	for (size_t i = 0; i < wa.nseen; i++) {
		for (size_t j = 0; j < ngot; j++) {
			if (got[j].rv == wa.seen[i].rv) {
				d[nd++] = got[j].us - wa.seen[i].us;
				break;
			}
		}
	}
	print_lat("watch event -> worker (difference)", d, nd, (size_t)nev);
	int64_t dp99 = pct(d, nd, 99);
	printf("%-34s p99 %.3f ms < 1 ms at 1,000/s: %s\n", "target",
	        dp99 / 1000.0, verdict(dp99 < 1000));
	bench_result("dispatch", "PUT -> worker, p99", p99 / 1000.0, "ms",
	        bp99 / 1000.0, bench_ratio((double)p99, (double)bp99), NULL,
	        BV_NONE);
	bench_result("dispatch", "watch event -> worker, p99 at 1,000/s",
	        dp99 / 1000.0, "ms", bp99 / 1000.0, NAN, "< 1 ms",
	        dp99 < 1000);
	free(d);
	/* an update made while its object's previous one is still queued
	 * or being reconciled coalesces with it (the queue's contract): the
	 * worker then sees only the later resourceVersion */
	printf("%-34s %zu of %d\n", "coalesced (never seen by a worker)",
	        (size_t)nev - n, nev);
	if (!all && n < (size_t)nev * 9 / 10) {
		fail("fewer than 90% of the updates reached a worker");
	}
	free(got);
	free(lat);
	free(blat);
out:
	if (sd > 0) {
		kill(sd, SIGTERM);
		int st;
		waitpid(sd, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fail("sympoziumd did not exit cleanly");
		}
	}
	ksim_watch_close(wa.w);
	free(wa.seen);
	for (int i = 0; i < nobj; i++) {
		json_object_put(objs[i]);
	}
	free(objs);
	free(sent);
	free(answered);
	if (a.k != NULL) {
		api_stop(&a);
	}
}

/* ------------------------------------------------------------------ */
/* the supervisor in this process */

static struct sup *
sup_make(const char *kc, const char *controllers, const char *worker,
        const char *workers)
{
	/* the configuration points into argv: it must outlive the sup */
	static char av[10][512];
	char *argv[11];
	int argc = 0;
	struct sup_config cfg;
	char err[512];

	snprintf(av[argc++], sizeof(av[0]), "sympoziumd");
	snprintf(av[argc++], sizeof(av[0]), "--kubeconfig=%s", kc);
	snprintf(av[argc++], sizeof(av[0]), "--controllers=%s", controllers);
	snprintf(av[argc++], sizeof(av[0]), "--worker-binary=%s/%s", B.bin,
	        worker);
	if (workers != NULL) {
		snprintf(av[argc++], sizeof(av[0]), "--workers=%s", workers);
	}
	for (int i = 0; i < argc; i++) {
		argv[i] = av[i];
	}
	argv[argc] = NULL;
	if (cfg_parse(argc, argv, &cfg, err, sizeof(err)) != 0) {
		fail(err);
		return (NULL);
	}
	struct sup *s = sup_new(&cfg, err, sizeof(err));
	if (s == NULL) {
		fail(err);
	}
	return (s);
}

/* Restarts without backoff: every SIGKILL is a first exit. */
static void
pool_no_backoff(struct sup *s)
{
	struct wk_config wc;
	struct wk_callbacks cb = { sup_on_result, sup_on_view, sup_on_lost,
		NULL, sup_on_released };
	char e[256];

	wk_free(s->pool);
	wk_config_default(&wc);
	wc.fault.keys = 0; /* the kills here are not a controller fault */
	wc.env = (const char *const *)s->env;
	wc.binary = s->cfg.worker_binary;
	wc.runtime_dir = s->runtime_dir;
	wc.restart.stable_ms = 1;
	wc.restart.period_ms = 0;
	wc.quarantine.threshold = 1000000;
	s->pool = wk_pool_new(&wc, &cb, s);
	for (size_t i = 0; i < s->nctls; i++) {
		wk_add_controller(s->pool, s->ctls[i].spec->name,
		        cfg_workers_for(&s->cfg, s->ctls[i].spec->name), e,
		        sizeof(e));
	}
}

static bool
queues_busy(struct sup *s)
{
	for (size_t i = 0; i < s->nctls; i++) {
		if (queue_len(s->ctls[i].q) > 0
		        || queue_processing(s->ctls[i].q) > 0) {
			return (true);
		}
	}
	return (wr_pending(s->wr) > 0 || settle_pending(s->settle) > 0);
}

static int
loop_timeout(struct sup *s, bool dispatch, int64_t now, int cap)
{
	int64_t t = now + cap, d;

	if ((d = inf_next_deadline(s->inf, now)) >= 0 && d < t) {
		t = d;
	}
	if ((d = wk_next_deadline(s->pool, now)) >= 0 && d < t) {
		t = d;
	}
	for (size_t i = 0; i < s->nctls; i++) {
		d = queue_next_deadline(s->ctls[i].q, now);
		if (d >= 0 && d < t) {
			t = d;
		}
		if (queue_len(s->ctls[i].q) > 0
		        && (!dispatch
		                || wk_idle(s->pool, s->ctls[i].spec->name)
		                        > 0)) {
			t = now;
		}
	}
	if (wr_has_ready(s->wr)) {
		t = now;
	}
	return (t > now ? (int)(t - now) : 0);
}

/* Time the loop spent in wk_tick() and wk_reap(). */
static int64_t tick_us, reap_us;

/* One turn of sup_run()'s loop; dispatch false: the in-process mode
 * (reconciles run by the caller instead). */
static void
turn(struct sup *s, bool dispatch, int cap_ms)
{
	int64_t now = timefmt_now_ms_mono();
	struct kapi_pollfd fds[128];
	struct pollfd pf[128];
	struct signalfd_siginfo si;

	inf_tick(s->inf, now);
	int64_t t = now_us();
	wk_tick(s->pool, now); /* spawns restarting workers: fork+exec */
	tick_us += now_us() - t;
	leader_tick(s->leader, now);
	if (dispatch) {
		sup_dispatch(s, now);
	}
	wr_run(s->wr);
	size_t n = wk_fds(s->pool, pf, 127);
	fds[0] = (struct kapi_pollfd) { s->sigfd, POLLIN, 0 };
	for (size_t i = 0; i < n; i++) {
		fds[i + 1] = (struct kapi_pollfd) { pf[i].fd, POLLIN, 0 };
	}
	kapi_multi_poll(
	        s->m, fds, (int)n + 1, loop_timeout(s, dispatch, now, cap_ms));
	kapi_multi_perform(s->m);
	now = timefmt_now_ms_mono();
	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			t = now_us();
			wk_reap(s->pool, now);
			reap_us += now_us() - t;
		}
	}
	wk_handle_io(s->pool, now);
}

struct slots {
	int total, ready;
	uint64_t ok[WK_PROCS_MAX];
	pid_t pid[WK_PROCS_MAX];
	enum wk_state st[WK_PROCS_MAX];
};

static void
slot_one(const struct wk_info *in, void *arg)
{
	struct slots *sl = arg;

	if (in->index < WK_PROCS_MAX) {
		sl->ok[in->index] += in->reconciles_ok;
		sl->pid[in->index] = in->pid;
		sl->st[in->index] = in->state;
	}
	sl->total++;
	sl->ready += in->state == WK_READY || in->state == WK_BUSY;
}

static struct slots
slots(struct sup *s)
{
	struct slots sl = { 0 };

	wk_foreach(s->pool, timefmt_now_ms_mono(), slot_one, &sl);
	return (sl);
}

static uint64_t
total_ok(const struct slots *sl, int from)
{
	uint64_t t = 0;

	for (int i = from; i < WK_PROCS_MAX; i++) {
		t += sl->ok[i];
	}
	return (t);
}

/* Runs the loop until synced, the workers ready (when started) and the
 * queues idle for quiet_ms.  Returns the time of the last busy turn (us),
 * or -1 on timeout. */
static int64_t
settle(struct sup *s, bool dispatch, bool workers, int quiet_ms,
        int timeout_ms, void (*inproc)(struct sup *, int))
{
	int64_t end = now_us() + (int64_t)timeout_ms * 1000;
	int64_t last = now_us();

	while (now_us() < end) {
		turn(s, dispatch, 5);
		if (inproc != NULL) {
			inproc(s, 64);
		}
		bool ready = !workers || slots(s).ready == slots(s).total;
		if (!inf_all_synced(s->inf) || !ready || queues_busy(s)) {
			last = now_us();
		} else if (now_us() - last >= (int64_t)quiet_ms * 1000) {
			return (last);
		}
	}
	return (-1);
}

/* ------------------------------------------------------------------ */
/* in-process reconciles */

static void
noop_reconcile(const struct rec_in *in, struct rec_out *out)
{
	/* what testctl's noop action does: read the action, answer done */
	json_object *a
	        = jx_getv(in->object, "metadata", "annotations", ACTION, NULL);
	rec_verdict(out, IPC_V_DONE, 0,
	        a != NULL && strcmp(json_object_get_string(a), "noop") != 0
	                ? "unexpected action"
	                : NULL);
}

static const struct reconciler noop_rec = { "testctl", noop_reconcile };
static const struct reconciler *inproc_rec;
static struct view *inproc_view;
static uint64_t inproc_count;

static int
add_child(void *arg, const struct cache_item *it)
{
	json_object *o = jx_parse(it->json, it->json_len, 0, NULL, 0);

	if (o != NULL) {
		json_object_array_add(arg, o);
	}
	return (0);
}

/* The WORK body feed.c's work_body() builds (same fields), with the
 * key and epoch wk_dispatch() adds. */
static json_object *
work_body(struct sup *s, struct sup_ctl *c, const char *key)
{
	struct cache *primary = inf_cache(s->inf, c->first_kind);
	struct cache_item it;
	struct ipc_work w = { .key = key,
		.epoch = leader_epoch(s->leader),
		.attempt = queue_num_requeues(c->q, key),
		.now_ms = timefmt_now_us_real() / 1000,
		.deadline_ms = WK_DEFAULT_RECONCILE_MS };
	json_object *arr = json_object_new_array();

	if (cache_lookup(primary, key, &it) == 0) {
		w.object = jx_parse(it.json, it.json_len, 0, NULL, 0);
		char *uid = xstrdup(it.uid);
		for (size_t i = 1; i < c->spec->nwatches; i++) {
			if (c->spec->watches[i].role == CTRL_CHILD) {
				cache_by_owner(
				        inf_cache(s->inf, c->first_kind + i),
				        uid, add_child, arr);
			}
		}
		free(uid);
	}
	w.children = arr;
	return (ipc_work_new(&w));
}

/* Up to max reconciles of controller 0 in this process: WORK body,
 * reconciler, RESULT through sup_on_result() (the writer, the queue). */
static void
inproc_run(struct sup *s, int max)
{
	struct sup_ctl *c = &s->ctls[0];
	int64_t now = timefmt_now_ms_mono();

	queue_tick(c->q, now);
	for (int i = 0; i < max; i++) {
		const char *k = queue_get(c->q, now, NULL);
		if (k == NULL) {
			return;
		}
		char *key = xstrdup(k);
		struct ipc_msg work = { IPC_WORK, 0, work_body(s, c, key) };
		json_object *res
		        = wrt_reconcile(inproc_rec, &work, inproc_view);
		struct ipc_msg rm = { IPC_RESULT, 0, res };
		struct ipc_result r;
		struct ipc_write *ops;
		if (ipc_result_decode(&rm, &r, &ops) == 0) {
			sup_on_result(s, c->spec->name, NULL, &r, ops);
		}
		free(ops);
		json_object_put(res);
		json_object_put(work.body);
		free(key);
		inproc_count++;
	}
}

/* ------------------------------------------------------------------ */
/* phase 2: no-op reconciles per second */

struct keys_feed {
	char **keys;
	int n, next;
};

static void
keys_feed(struct sup *s, struct keys_feed *f, size_t depth)
{
	struct queue *q = s->ctls[0].q;
	int64_t now = timefmt_now_ms_mono();

	while (queue_len(q) < depth) {
		queue_add(q, f->keys[f->next], now);
		f->next = (f->next + 1) % f->n;
	}
}

static void
keys_feed_init(struct keys_feed *f, const char *ns, int n)
{
	f->n = n;
	f->next = 0;
	f->keys = xcalloc((size_t)n, sizeof(*f->keys));
	for (int i = 0; i < n; i++) {
		f->keys[i] = xasprintf("%s/b-%05d", ns, i);
	}
}

static void
keys_feed_free(struct keys_feed *f)
{
	for (int i = 0; i < f->n; i++) {
		free(f->keys[i]);
	}
	free(f->keys);
}

/* CPU time (us) of this thread, of this process, and of the workers. */
struct cpu {
	int64_t thread, process, workers;
};

static int64_t
tv_us(struct timeval a, struct timeval b)
{
	return ((int64_t)(a.tv_sec + b.tv_sec) * 1000000 + a.tv_usec
	        + b.tv_usec);
}

static int64_t
proc_cpu_us(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		return (0);
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (p == NULL
	        || sscanf(p + 2,
	                   "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
	                   "%*u %*u %llu %llu",
	                   &ut, &st)
	                != 2) {
		return (0);
	}
	return ((int64_t)(ut + st) * 1000000 / sysconf(_SC_CLK_TCK));
}

static struct cpu
cpu_now(const struct slots *sl)
{
	struct rusage t, p;
	struct cpu c = { 0 };

	getrusage(RUSAGE_THREAD, &t);
	getrusage(RUSAGE_SELF, &p);
	c.thread = tv_us(t.ru_utime, t.ru_stime);
	c.process = tv_us(p.ru_utime, p.ru_stime);
	for (int i = 0; i < sl->total && i < WK_PROCS_MAX; i++) {
		c.workers += sl->pid[i] > 0 ? proc_cpu_us(sl->pid[i]) : 0;
	}
	return (c);
}

static struct cpu last_cpu; /* of the last rate_multi() run */

/* Multi-process no-op reconciles per second over dur_ms. */
static double
rate_multi(struct sup *s, struct keys_feed *f, int dur_ms, int from_slot)
{
	/* the restart phase does not read /proc/PID/stat of its workers */
	bool cpu = from_slot == 0;
	struct slots a = slots(s);
	struct cpu c0 = cpu ? cpu_now(&a) : (struct cpu) { 0 };
	int64_t t0 = now_us(), end = t0 + (int64_t)dur_ms * 1000;

	while (now_us() < end) {
		keys_feed(s, f, 256);
		turn(s, true, 5);
	}
	struct slots b = slots(s);
	struct cpu c1 = cpu ? cpu_now(&b) : (struct cpu) { 0 };
	uint64_t n = total_ok(&b, 0) - total_ok(&a, 0);
	if (cpu && n > 0) {
		last_cpu = (struct cpu) { (c1.thread - c0.thread) / (int64_t)n,
			(c1.process - c0.process) / (int64_t)n,
			(c1.workers - c0.workers) / (int64_t)n };
	}
	return ((double)(total_ok(&b, from_slot) - total_ok(&a, from_slot))
	        * 1e6 / (double)(now_us() - t0));
}

static double
rate_inproc(struct sup *s, struct keys_feed *f, int dur_ms)
{
	uint64_t n0 = inproc_count;
	int64_t t0 = now_us(), end = t0 + (int64_t)dur_ms * 1000;

	while (now_us() < end) {
		keys_feed(s, f, 256);
		inproc_run(s, 64);
		turn(s, false, 0);
	}
	return ((double)(inproc_count - n0) * 1e6 / (double)(now_us() - t0));
}

static void
phase_noop(void)
{
	int nobj = 1000, dur = B.quick ? 1000 : 3000;
	struct ksim_api a;
	struct keys_feed f;
	struct sup *s = NULL;

	if (start_api(&a) != 0) {
		return;
	}
	keys_feed_init(&f, "tp", nobj);
	if (create_cms(&a, "tp", nobj, "noop", NULL) != 0
	        || (s = sup_make(a.kubeconfig, "testctl",
	                    "tests/sympozium-worker-test", "testctl=6"))
	                == NULL) {
		goto out;
	}
	wk_start(s->pool, timefmt_now_ms_mono());
	if (settle(s, true, true, 200, 20000, NULL) < 0) {
		fail("noop: the supervisor did not settle");
		goto out;
	}
	inproc_rec = &noop_rec;
	/* BENCH_MULTI_ONLY=1: only the multi-process run (for profiling) */
	bool mo = getenv("BENCH_MULTI_ONLY") != NULL;
	double in1 = mo ? 1 : rate_inproc(s, &f, dur);
	double multi = rate_multi(s, &f, dur, 0);
	double in2 = mo ? 1 : rate_inproc(s, &f, dur);
	double base = in1 > in2 ? in1 : in2;
	printf("\n-- no-op reconciles: %d cached ConfigMaps, keys added "
	       "straight to the queue, %d ms each\n",
	        nobj, dur);
	printf("%-34s %9.0f /s  (runs: %.0f, %.0f)\n",
	        "baseline: in-process, one loop", base, in1, in2);
	printf("%-34s %9.0f /s  ratio %.3f\n", "multi-process, 6 workers",
	        multi, multi / base);
	printf("%-34s loop thread %lld, its nng threads %lld, workers %lld "
	       "us\n",
	        "CPU per multi-process reconcile", (long long)last_cpu.thread,
	        (long long)(last_cpu.process - last_cpu.thread),
	        (long long)last_cpu.workers);
	printf("%-34s %.0f/s >= 20,000/s: %s\n", "target", multi,
	        verdict(multi >= 20000));
	bench_result("dispatch", "no-op reconciles, 6 workers", multi, "/s",
	        mo ? NAN : base, mo ? NAN : multi / base, ">= 20,000/s",
	        multi >= 20000);
out:
	sup_done(s);
	keys_feed_free(&f);
	api_stop(&a);
}

/* ------------------------------------------------------------------ */
/* phase 3: isolation cost with the SkillPack reconciler */

struct iso {
	double converge; /* packs per second, with the API writes */
	double resync;   /* reconciles per second of converged packs */
	int children;    /* skillpack ConfigMaps at the end */
};

static int
count_children(struct ksim_api *a)
{
	struct kapi_list_opts lo
	        = { .label_selector = "sympozium.ai/skillpack" };
	json_object *items = NULL;
	struct kapi_err e = KAPI_ERR_INIT;
	int n = -1;

	if (kapi_list_all(a->c, &R_CM, "iso", &lo, &items, NULL, &e)
	        == KAPI_OK) {
		n = (int)json_object_array_length(items);
	}
	kapi_err_fini(&e);
	json_object_put(items);
	return (n);
}

static int
iso_run(bool multi, const char *workers, int npacks, int rounds,
        struct iso *out)
{
	struct ksim_api a;
	struct sup *s = NULL;
	int rc = -1;
	void (*inp)(struct sup *, int) = multi ? NULL : inproc_run;

	if (start_api(&a) != 0) {
		return (-1);
	}
	if (create_skillpacks(&a, "iso", npacks) != 0
	        || (s = sup_make(a.kubeconfig, "skillpack", "sympozium-worker",
	                    workers))
	                == NULL) {
		goto out;
	}
	inproc_rec = rec_find("skillpack");
	int64_t t0 = now_us();
	if (multi) {
		wk_start(s->pool, timefmt_now_ms_mono());
	}
	int64_t t1 = settle(s, multi, multi, 300, 60000, inp);
	if (t1 < 0) {
		fail("skillpack: the supervisor did not converge");
		goto out;
	}
	out->converge = npacks * 1e6 / (double)(t1 - t0);
	int64_t r0 = now_us();
	for (int r = 0; r < rounds; r++) {
		sup_resync(s, timefmt_now_ms_mono());
		while (queues_busy(s)) {
			turn(s, multi, 5);
			if (!multi) {
				inproc_run(s, 64);
			}
		}
	}
	out->resync = (double)npacks * rounds * 1e6 / (double)(now_us() - r0);
	out->children = count_children(&a);
	rc = 0;
out:
	sup_done(s);
	api_stop(&a);
	return (rc);
}

/* The RESULT lines of the isolation phase: 1 worker (the targets) and 2
 * workers, against the in-process baselines bc and br. */
static void
iso_results(const struct iso *m, const struct iso *m2, double bc, double br)
{
	bench_result("dispatch", "SkillPack converge, 1 worker", m->converge,
	        "packs/s", bc, m->converge / bc, "ratio >= 0.9",
	        m->converge / bc >= 0.9);
	bench_result("dispatch", "SkillPack resync, 1 worker", m->resync, "/s",
	        br, m->resync / br, "ratio >= 0.9", m->resync / br >= 0.9);
	bench_result("dispatch", "SkillPack converge, 2 workers", m2->converge,
	        "packs/s", bc, m2->converge / bc, NULL, BV_NONE);
	bench_result("dispatch", "SkillPack resync, 2 workers", m2->resync,
	        "/s", br, m2->resync / br, NULL, BV_NONE);
}

static void
phase_isolation(void)
{
	int npacks = B.quick ? 200 : 1000, rounds = B.quick ? 3 : 5;
	struct iso m = { 0 }, m2 = { 0 }, i1 = { 0 }, i2 = { 0 };

	if (iso_run(false, NULL, npacks, rounds, &i1) != 0
	        || iso_run(true, NULL, npacks, rounds, &m) != 0
	        || iso_run(true, "skillpack=2", npacks, rounds, &m2) != 0
	        || iso_run(false, NULL, npacks, rounds, &i2) != 0) {
		return;
	}
	double bc = i1.converge > i2.converge ? i1.converge : i2.converge;
	double br = i1.resync > i2.resync ? i1.resync : i2.resync;
	printf("\n-- isolation cost: SkillPack reconciler, %d packs "
	       "(in-process before and after; best is the baseline)\n",
	        npacks);
	printf("%-34s %9.0f /s  (runs: %.0f, %.0f)\n",
	        "baseline: converge in-process", bc, i1.converge, i2.converge);
	printf("%-34s %9.0f /s  ratio %.3f\n", "converge multi-process",
	        m.converge, m.converge / bc);
	printf("%-34s %9.0f /s  (runs: %.0f, %.0f)\n",
	        "baseline: resync in-process", br, i1.resync, i2.resync);
	printf("%-34s %9.0f /s  ratio %.3f\n", "resync multi-process",
	        m.resync, m.resync / br);
	printf("%-34s %9.0f /s  ratio %.3f\n", "converge multi, 2 workers",
	        m2.converge, m2.converge / bc);
	printf("%-34s %9.0f /s  ratio %.3f\n", "resync multi, 2 workers",
	        m2.resync, m2.resync / br);
	printf("%-34s converge %.3f, resync %.3f >= 0.9 (1 worker): %s\n",
	        "target", m.converge / bc, m.resync / br,
	        verdict(m.converge / bc >= 0.9 && m.resync / br >= 0.9));
	iso_results(&m, &m2, bc, br);
	if (m.children != npacks || m2.children != npacks
	        || i1.children != npacks || i2.children != npacks) {
		fail("skillpack: wrong number of ConfigMaps");
	}
}

/* ------------------------------------------------------------------ */
/* phase 4: restart */

static void
phase_restart(void)
{
	int nobj = 1000, kills = B.quick ? 100 : 1000;
	struct ksim_api a;
	struct keys_feed f;
	struct sup *s = NULL;
	int64_t *lat = xcalloc((size_t)kills, sizeof(*lat));

	if (start_api(&a) != 0) {
		free(lat);
		return;
	}
	keys_feed_init(&f, "rs", nobj);
	if (create_cms(&a, "rs", nobj, "noop", NULL) != 0
	        || (s = sup_make(a.kubeconfig, "testctl",
	                    "tests/sympozium-worker-test", "testctl=6"))
	                == NULL) {
		goto out;
	}
	pool_no_backoff(s);
	wk_start(s->pool, timefmt_now_ms_mono());
	if (settle(s, true, true, 200, 20000, NULL) < 0) {
		fail("restart: the supervisor did not settle");
		goto out;
	}
	int dur = B.quick ? 1000 : 3000;
	double base1 = rate_multi(s, &f, dur, 1);
	struct slots b0 = slots(s);
	int64_t k0 = now_us(), tick0 = tick_us, reap0 = reap_us;
	int done = 0;
	for (; done < kills; done++) {
		struct slots sl = slots(s);
		pid_t old = sl.pid[0];
		int64_t t0 = now_us();
		kill(old, SIGKILL);
		for (;;) {
			keys_feed(s, &f, 256);
			turn(s, true, 5);
			sl = slots(s);
			if (sl.pid[0] != old && sl.pid[0] > 0
			        && (sl.st[0] == WK_READY
			                || sl.st[0] == WK_BUSY)) {
				break;
			}
			if (now_us() - t0 > 10000000) {
				fprintf(stderr,
				        "slot 0: pid %d (was %d) state %s\n",
				        (int)sl.pid[0], (int)old,
				        wk_state_name(sl.st[0]));
				fail("restart: a worker did not come back in "
				     "10 s");
				goto out;
			}
		}
		lat[done] = now_us() - t0;
		/* one kill every KILL_EVERY_MS: a fixed cadence, so the
		 * restarts' share of the CPU is the same from run to run */
		while (now_us() - t0 < KILL_EVERY_MS * 1000) {
			keys_feed(s, &f, 256);
			turn(s, true, 5);
		}
	}
	struct slots b1 = slots(s);
	double during = (double)(total_ok(&b1, 1) - total_ok(&b0, 1)) * 1e6
	        / (double)(now_us() - k0);
	double tick_per = (double)(tick_us - tick0) / done,
	       reap_per = (double)(reap_us - reap0) / done;
	double base2 = rate_multi(s, &f, dur, 1);
	double base = base1 > base2 ? base1 : base2;
	printf("\n-- restart: SIGKILL of worker 0 of 6 (testctl, no-op), "
	       "restart backoff off, %d kills, one every %d ms\n",
	        kills, KILL_EVERY_MS);
	print_lat("SIGKILL -> READY", lat, (size_t)done, (size_t)kills);
	printf("%-34s %9.0f /s  (runs: %.0f, %.0f)\n",
	        "baseline: workers 1-5, no kills", base, base1, base2);
	printf("%-34s %9.0f /s  ratio %.3f\n", "workers 1-5 during kills",
	        during, during / base);
	printf("%-34s %.0f us in wk_tick (spawn), %.0f us in wk_reap\n",
	        "supervisor loop time per kill", tick_per, reap_per);
	int64_t p99 = pct(lat, (size_t)done, 99);
	printf("%-34s p99 %.3f ms < 50 ms, ratio %.3f >= 0.95: %s\n", "target",
	        p99 / 1000.0, during / base,
	        verdict(p99 < 50000 && during / base >= 0.95));
	char fig[64];
	snprintf(fig, sizeof(fig), "SIGKILL -> READY, p99 of %d kills", done);
	bench_result("dispatch", fig, p99 / 1000.0, "ms", NAN, NAN, "< 50 ms",
	        p99 < 50000);
	bench_result("dispatch", "workers 1-5 during the kills", during, "/s",
	        base, during / base, "ratio >= 0.95", during / base >= 0.95);
out:
	free(lat);
	sup_done(s);
	keys_feed_free(&f);
	api_stop(&a);
}

int
main(int argc, char **argv)
{
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			B.quick = true;
		} else if (strcmp(argv[i], "--bin") == 0 && i + 1 < argc) {
			B.bin = argv[++i];
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			only = argv[++i];
		} else {
			fprintf(stderr,
			        "usage: bench_dispatch [--quick] [--bin "
			        "DIR] [--only ipc|latency|noop|isolation|"
			        "restart]\n");
			return (2);
		}
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	log_init("bench", LOG_FORMAT_TEXT);
	inproc_view = view_new(NULL, 1000);
	if (only == NULL || strcmp(only, "ipc") == 0) {
		phase_ipc();
	}
	if (only == NULL || strcmp(only, "latency") == 0) {
		phase_latency();
	}
	if (only == NULL || strcmp(only, "noop") == 0) {
		phase_noop();
	}
	if (only == NULL || strcmp(only, "isolation") == 0) {
		phase_isolation();
	}
	if (only == NULL || strcmp(only, "restart") == 0) {
		phase_restart();
	}
	view_free(inproc_view);
	printf("\n%d target(s) missed, %d error(s)\n", B.misses, B.errors);
	return (B.errors > 0 ? 1 : 0);
}
