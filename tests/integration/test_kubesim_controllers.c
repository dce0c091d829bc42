/*
 * test_kubesim_controllers.c: black-box tests of kubesim's emulated
 * control plane (tests/kubesim/kctrl.c) against a spawned bin/kubesim
 * ($KUBESIM): garbage collection with background, foreground and orphan
 * propagation, the Job controller (completion, backoff limit,
 * activeDeadlineSeconds, ttlSecondsAfterFinished), the kubelet stand-in
 * (pod phases, logs, annotations and /_kubesim/kubelet rules), Deployment
 * status and --controllers none; plus kctrl_parse in-process.  Every wait
 * is bounded (WAIT_MS).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "tests/kubesim/kctrl.h"

#define WAIT_MS 10000

/* ---- a local kubesim helper ------------------------------------------- */

struct sim {
	pid_t pid;
	char url[128];
};

static struct sim main_sim;

static int
sim_start(struct sim *s, const char *controllers)
{
	const char *bin = getenv("KUBESIM") ?: "bin/kubesim";
	int fd[2];
	char line[256];
	size_t n = 0;

	if (pipe(fd) != 0) {
		return (-1);
	}
	s->pid = fork();
	if (s->pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(bin, bin, "--controllers", controllers, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	while (n < sizeof(line) - 1 && timefmt_now_ms_mono() < end) {
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		if (poll(&p, 1, 100) <= 0) {
			continue;
		}
		if (read(fd[0], line + n, 1) != 1 || line[n] == '\n') {
			break;
		}
		n++;
	}
	line[n] = '\0';
	close(fd[0]);
	if (sscanf(line, "listening on %127s", s->url) != 1) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		return (-1);
	}
	return (0);
}

static void
sim_stop(struct sim *s)
{
	int st = 0;

	kill(s->pid, SIGTERM);
	waitpid(s->pid, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static size_t
on_data(char *p, size_t sz, size_t nm, void *arg)
{
	buf_append(arg, p, sz * nm);
	return (sz * nm);
}

/* One request; returns the body (caller frees) and the status in *code. */
static char *
http(struct sim *s, const char *method, const char *path, const char *ctype,
        const char *body, long *code)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct buf b = BUF_INIT;
	char *url = xasprintf("%s%s", s->url, path);
	char *hdr = xasprintf("Content-Type: %s", ctype ?: "application/json");

	h = curl_slist_append(h, hdr);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	*code = 0;
	if (curl_easy_perform(c) == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	free(hdr);
	buf_putc(&b, '\0');
	return (buf_detach(&b, NULL));
}

/* A request that must answer want; returns the parsed body. */
static json_object *
req(const char *method, const char *path, const char *body, long want)
{
	long code;
	char *r = http(&main_sim, method, path, NULL, body, &code);
	json_object *o = jx_parse(r, strlen(r), 0, NULL, 0);

	if (code != want) {
		fail_msg("%s %s: %ld (want %ld): %s", method, path, code, want,
		        r);
	}
	free(r);
	return (o);
}

/* GET path: the object, or NULL on 404. */
static json_object *
get(const char *path)
{
	long code;
	char *r = http(&main_sim, "GET", path, NULL, NULL, &code);
	json_object *o
	        = code == 200 ? jx_parse(r, strlen(r), 0, NULL, 0) : NULL;

	if (code != 200 && code != 404) {
		fail_msg("GET %s: %ld: %s", path, code, r);
	}
	free(r);
	return (o);
}

static void
pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static char *
create(const char *path, const char *body)
{
	json_object *o = req("POST", path, body, 201);
	char *uid = xstrdup(jx_get_str(o, "metadata.uid"));

	json_object_put(o);
	return (uid);
}

static void
make_ns(const char *ns)
{
	char *b = xasprintf("{\"metadata\":{\"name\":\"%s\"}}", ns);

	free(create("/api/v1/namespaces", b));
	free(b);
}

/* Waits until GET path is 404. */
static void
wait_gone(const char *path)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	json_object *o;

	while ((o = get(path)) != NULL) {
		json_object_put(o);
		if (timefmt_now_ms_mono() > end) {
			fail_msg("%s still exists", path);
		}
		pause_ms(20);
	}
}

/* Waits until the string at field of GET path is want; returns the
 * object. */
static json_object *
wait_str(const char *path, const char *field, const char *want)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	for (;;) {
		json_object *o = get(path);
		const char *v = jx_get_str(o, field);
		if (v != NULL && strcmp(v, want) == 0) {
			return (o);
		}
		json_object_put(o);
		if (timefmt_now_ms_mono() > end) {
			fail_msg("%s: %s never became %s", path, field, want);
		}
		pause_ms(20);
	}
}

/* The condition of type in obj's status, or NULL.  Borrowed. */
static json_object *
condition(json_object *obj, const char *type)
{
	json_object *cs = jx_get(obj, "status.conditions");
	size_t n = cs != NULL ? json_object_array_length(cs) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(cs, i);
		if (strcmp(jx_get_str(c, "type") ?: "", type) == 0) {
			return (c);
		}
	}
	return (NULL);
}

static json_object *
wait_condition(const char *path, const char *type)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	for (;;) {
		json_object *o = get(path);
		json_object *c = condition(o, type);
		if (c != NULL
		        && strcmp(jx_get_str(c, "status") ?: "", "True")
		                == 0) {
			return (o);
		}
		json_object_put(o);
		if (timefmt_now_ms_mono() > end) {
			fail_msg("%s: no condition %s", path, type);
		}
		pause_ms(20);
	}
}

static size_t
nitems(json_object *list)
{
	json_object *a = jx_get(list, "items");

	return (a != NULL ? json_object_array_length(a) : 0);
}

static json_object *
item(json_object *list, size_t i)
{
	return (json_object_array_get_idx(jx_get(list, "items"), i));
}

/* ---- kctrl_parse ------------------------------------------------------ */

static void
test_parse(void **state)
{
	unsigned v = 99;

	(void)state;
	assert_int_equal(kctrl_parse("all", &v), 0);
	assert_int_equal(v, KCTRL_ALL);
	assert_int_equal(kctrl_parse("none", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(kctrl_parse("gc", &v), 0);
	assert_int_equal(v, KCTRL_GC);
	assert_int_equal(kctrl_parse("job,kubelet", &v), 0);
	assert_int_equal(v, KCTRL_JOB | KCTRL_KUBELET);
	assert_int_equal(kctrl_parse("deployment,gc,namespace,crd", &v), 0);
	assert_int_equal(v, KCTRL_DEPLOYMENT | KCTRL_GC);
	v = 7;
	assert_int_equal(kctrl_parse("", &v), -1);
	assert_int_equal(kctrl_parse("gc,", &v), -1);
	assert_int_equal(kctrl_parse(",gc", &v), -1);
	assert_int_equal(kctrl_parse("gc,,job", &v), -1);
	assert_int_equal(kctrl_parse("jobs", &v), -1);
	assert_int_equal(kctrl_parse("all,gc", &v), -1);
	assert_int_equal(kctrl_parse("GC", &v), -1);
	assert_int_equal(kctrl_parse(NULL, &v), -1);
	assert_int_equal(v, 7);
}

/* ---- garbage collection ----------------------------------------------- */

#define CM "/api/v1/namespaces/%s/configmaps"

/* A ConfigMap in ns with owner references refs (JSON array or NULL) and
 * extra metadata (",\"finalizers\":[...]" or ""); returns its uid. */
static char *
cm(const char *ns, const char *name, const char *refs, const char *extra)
{
	char *path = xasprintf(CM, ns);
	char *b = xasprintf("{\"metadata\":{\"name\":\"%s\"%s%s%s}}", name,
	        refs != NULL ? ",\"ownerReferences\":" : "", refs ?: "",
	        extra);
	char *uid = create(path, b);

	free(path);
	free(b);
	return (uid);
}

static char *
ref(const char *name, const char *uid, bool block)
{
	return (xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                  "\"name\":\"%s\",\"uid\":\"%s\"%s}",
	        name, uid, block ? ",\"blockOwnerDeletion\":true" : ""));
}

static void
test_gc_background(void **state)
{
	(void)state;
	make_ns("gcb");
	char *u1 = cm("gcb", "o1", NULL, "");
	char *u2 = cm("gcb", "o2", NULL, "");
	char *r1 = ref("o1", u1, false), *r2 = ref("o2", u2, false);
	char *both = xasprintf("[%s,%s]", r1, r2),
	     *one = xasprintf("[%s]", r1);

	free(cm("gcb", "d1", one, ""));
	free(cm("gcb", "d2", both, ""));
	json_object_put(req(
	        "DELETE", "/api/v1/namespaces/gcb/configmaps/o1", NULL, 200));
	wait_gone("/api/v1/namespaces/gcb/configmaps/d1");
	/* d2 survives with only the live owner. */
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	json_object *d2;
	for (;;) {
		d2 = get("/api/v1/namespaces/gcb/configmaps/d2");
		assert_non_null(d2);
		json_object *refs = jx_get(d2, "metadata.ownerReferences");
		if (refs != NULL && json_object_array_length(refs) == 1) {
			break;
		}
		json_object_put(d2);
		assert_true(timefmt_now_ms_mono() < end);
		pause_ms(20);
	}
	assert_string_equal(
	        jx_get_str(d2, "metadata.ownerReferences.0.uid"), u2);
	json_object_put(d2);
	/* A same-name owner created again does not adopt. */
	char *u3 = cm("gcb", "o3", NULL, "");
	char *r3 = ref("o3", u3, false), *three = xasprintf("[%s]", r3);
	free(cm("gcb", "d3", three, ""));
	json_object_put(req(
	        "DELETE", "/api/v1/namespaces/gcb/configmaps/o3", NULL, 200));
	free(cm("gcb", "o3", NULL, ""));
	wait_gone("/api/v1/namespaces/gcb/configmaps/d3");
	json_object *o3 = get("/api/v1/namespaces/gcb/configmaps/o3");
	assert_non_null(o3);
	json_object_put(o3);
	free(u1), free(u2), free(u3), free(r1), free(r2), free(r3);
	free(both), free(one), free(three);
}

static void
test_gc_foreground(void **state)
{
	(void)state;
	make_ns("gcf");
	char *u = cm("gcf", "own", NULL, "");
	char *r = ref("own", u, true), *refs = xasprintf("[%s]", r);

	free(cm("gcf", "dep", refs, ",\"finalizers\":[\"test.io/hold\"]"));
	json_object *o = req("DELETE", "/api/v1/namespaces/gcf/configmaps/own",
	        "{\"propagationPolicy\":\"Foreground\"}", 200);
	assert_non_null(jx_get(o, "metadata.deletionTimestamp"));
	assert_string_equal(
	        jx_get_str(o, "metadata.finalizers.0"), "foregroundDeletion");
	json_object_put(o);
	/* The dependent is deleted too; it stays (our finalizer), and so does
	 * the owner. */
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	json_object *d;
	while ((d = get("/api/v1/namespaces/gcf/configmaps/dep")) != NULL
	        && jx_get(d, "metadata.deletionTimestamp") == NULL) {
		json_object_put(d);
		assert_true(timefmt_now_ms_mono() < end);
		pause_ms(20);
	}
	assert_non_null(d);
	json_object_put(d);
	pause_ms(300);
	o = get("/api/v1/namespaces/gcf/configmaps/own");
	assert_non_null(o);
	assert_string_equal(
	        jx_get_str(o, "metadata.finalizers.0"), "foregroundDeletion");
	json_object_put(o);
	long code;
	free(http(&main_sim, "PATCH", "/api/v1/namespaces/gcf/configmaps/dep",
	        "application/merge-patch+json",
	        "{\"metadata\":{\"finalizers\":null}}", &code));
	assert_int_equal(code, 200);
	wait_gone("/api/v1/namespaces/gcf/configmaps/dep");
	wait_gone("/api/v1/namespaces/gcf/configmaps/own");
	free(u);
	free(r);
	free(refs);
}

static void
test_gc_orphan(void **state)
{
	(void)state;
	make_ns("gco");
	char *u = cm("gco", "own", NULL, "");
	char *r = ref("own", u, true), *refs = xasprintf("[%s]", r);

	free(cm("gco", "dep", refs, ""));
	json_object_put(req("DELETE", "/api/v1/namespaces/gco/configmaps/own",
	        "{\"propagationPolicy\":\"Orphan\"}", 200));
	wait_gone("/api/v1/namespaces/gco/configmaps/own");
	json_object *d = get("/api/v1/namespaces/gco/configmaps/dep");
	assert_non_null(d);
	assert_null(jx_get(d, "metadata.ownerReferences"));
	assert_null(jx_get(d, "metadata.deletionTimestamp"));
	json_object_put(d);
	free(u);
	free(r);
	free(refs);
}

/* ---- jobs and the kubelet --------------------------------------------- */

#define JOBS "/apis/batch/v1/namespaces/%s/jobs"

/* A Job whose pod template has annotations anns (JSON object body) and
 * spec fields extra (",\"backoffLimit\":1" or ""). */
static char *
job(const char *ns, const char *name, const char *anns, const char *extra)
{
	char *path = xasprintf(JOBS, ns);
	char *b = xasprintf(
	        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
	        "{\"name\":\"%s\"},\"spec\":{\"template\":{\"metadata\":{"
	        "\"labels\":{\"app\":\"t\"},\"annotations\":{%s}},\"spec\":{"
	        "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
	        "\"main\","
	        "\"image\":\"busybox:1\"}]}}%s}}",
	        name, anns, extra);
	char *uid = create(path, b);

	free(path);
	free(b);
	return (uid);
}

static json_object *
job_pods(const char *ns, const char *job_name)
{
	char *p = xasprintf("/api/v1/namespaces/%s/pods?labelSelector="
	                    "batch.kubernetes.io/job-name%%3D%s",
	        ns, job_name);
	json_object *l = get(p);

	free(p);
	return (l);
}

/* Waits until the job has at least one pod; returns the list. */
static json_object *
wait_pods(const char *ns, const char *job_name)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	for (;;) {
		json_object *l = job_pods(ns, job_name);
		if (nitems(l) > 0) {
			return (l);
		}
		json_object_put(l);
		if (timefmt_now_ms_mono() > end) {
			fail_msg("job %s/%s: no pod", ns, job_name);
		}
		pause_ms(20);
	}
}

static void
check_pod_meta(json_object *pod, const char *job_uid)
{
	bool b = false;

	assert_string_equal(
	        jx_get_str(pod, "metadata.ownerReferences.0.kind"), "Job");
	assert_string_equal(
	        jx_get_str(pod, "metadata.ownerReferences.0.uid"), job_uid);
	assert_int_equal(jx_get_bool(pod,
	                         "metadata.ownerReferences.0."
	                         "controller",
	                         &b),
	        0);
	assert_true(b);
	assert_string_equal(
	        json_object_get_string(jx_getv(pod, "metadata", "labels",
	                "batch.kubernetes.io/controller-uid", NULL)),
	        job_uid);
	assert_string_equal(json_object_get_string(jx_getv(
	                            pod, "metadata", "labels", "app", NULL)),
	        "t");
	assert_non_null(strstr(jx_get_str(pod, "metadata.name"), "j1-"));
}

static void
test_job_complete(void **state)
{
	(void)state;
	make_ns("jc");
	char *uid = job("jc", "j1",
	        "\"kubesim.sympozium.ai/run-duration\":\"600ms\","
	        "\"kubesim.sympozium.ai/log\":\"hello world\\n\"",
	        "");
	json_object *l = wait_pods("jc", "j1");
	json_object *pod = item(l, 0);
	check_pod_meta(pod, uid);
	char *ppath = xasprintf("/api/v1/namespaces/jc/pods/%s",
	        jx_get_str(pod, "metadata.name"));
	json_object_put(l);

	json_object *p = wait_str(ppath, "status.phase", "Running");
	assert_string_equal(
	        jx_get_str(p, "status.containerStatuses.0.name"), "main");
	assert_non_null(jx_get(p, "status.containerStatuses.0.state.running"));
	assert_non_null(strstr(jx_get_str(p, "status.podIP"), "10.244."));
	json_object_put(p);
	p = wait_str(ppath, "status.phase", "Succeeded");
	assert_string_equal(jx_get_str(p,
	                            "status.containerStatuses.0.state."
	                            "terminated.reason"),
	        "Completed");
	json_object_put(p);

	json_object *j = wait_condition(
	        "/apis/batch/v1/namespaces/jc/jobs/j1", "Complete");
	int64_t n = 0;
	assert_int_equal(jx_get_int(j, "status.succeeded", &n), 0);
	assert_int_equal(n, 1);
	assert_null(jx_get(j, "status.active"));
	assert_non_null(jx_get(j, "status.completionTime"));
	assert_non_null(jx_get(j, "status.startTime"));
	assert_string_equal(jx_get_str(j, "status.conditions.0.type"),
	        "SuccessCriteriaMet");
	assert_string_equal(jx_get_str(condition(j, "Complete"), "reason"),
	        "CompletionsReached");
	json_object_put(j);

	long code;
	char *lp = xasprintf("%s/log", ppath);
	char *log = http(&main_sim, "GET", lp, NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(log, "hello world\n");
	free(log);
	free(lp);
	free(ppath);
	free(uid);
}

static void
test_job_failed(void **state)
{
	(void)state;
	make_ns("jf");
	free(job("jf", "jf",
	        "\"kubesim.sympozium.ai/run-duration\":\"100ms\","
	        "\"kubesim.sympozium.ai/exit-code\":\"2\"",
	        ",\"backoffLimit\":1"));
	json_object *j = wait_condition(
	        "/apis/batch/v1/namespaces/jf/jobs/jf", "Failed");
	json_object *c = condition(j, "Failed");
	assert_string_equal(jx_get_str(c, "reason"), "BackoffLimitExceeded");
	assert_string_equal(jx_get_str(c, "message"),
	        "Job has reached the specified backoff limit");
	assert_non_null(condition(j, "FailureTarget"));
	int64_t n = 0;
	assert_int_equal(jx_get_int(j, "status.failed", &n), 0);
	assert_int_equal(n, 2);
	json_object_put(j);
	json_object *l = job_pods("jf", "jf");
	assert_int_equal(nitems(l), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(
		        jx_get_str(item(l, i), "status.phase"), "Failed");
		assert_int_equal(jx_get_int(item(l, i),
		                         "status.containerStatuses.0.state."
		                         "terminated.exitCode",
		                         &n),
		        0);
		assert_int_equal(n, 2);
	}
	json_object_put(l);
}

static void
test_job_deadline(void **state)
{
	(void)state;
	make_ns("jd");
	free(job("jd", "jd", "\"kubesim.sympozium.ai/run-duration\":\"1h\"",
	        ",\"activeDeadlineSeconds\":1"));
	json_object *l = wait_pods("jd", "jd");
	json_object_put(l);
	json_object *j = wait_condition(
	        "/apis/batch/v1/namespaces/jd/jobs/jd", "Failed");
	assert_string_equal(jx_get_str(condition(j, "Failed"), "reason"),
	        "DeadlineExceeded");
	json_object_put(j);
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	while (nitems(l = job_pods("jd", "jd")) > 0) {
		json_object_put(l);
		assert_true(timefmt_now_ms_mono() < end);
		pause_ms(20);
	}
	json_object_put(l);
}

static void
test_job_ttl(void **state)
{
	(void)state;
	make_ns("jt");
	free(job("jt", "jt", "\"kubesim.sympozium.ai/run-duration\":\"100ms\"",
	        ",\"ttlSecondsAfterFinished\":1"));
	json_object *l = wait_pods("jt", "jt");
	char *pp = xasprintf("/api/v1/namespaces/jt/pods/%s",
	        jx_get_str(item(l, 0), "metadata.name"));
	json_object_put(l);
	json_object_put(wait_condition(
	        "/apis/batch/v1/namespaces/jt/jobs/jt", "Complete"));
	wait_gone("/apis/batch/v1/namespaces/jt/jobs/jt");
	wait_gone(pp);
	free(pp);
}

static void
test_kubelet_admin(void **state)
{
	(void)state;
	json_object_put(req("PUT", "/_kubesim/kubelet",
	        "{\"rules\":[{\"labelSelector\":\"app=y\"}]}", 200));
	json_object_put(req("PUT", "/_kubesim/kubelet", "{\"rules\":", 400));
	json_object_put(req("PUT", "/_kubesim/kubelet",
	        "{\"rules\":[{\"exitCode\":300}]}", 400));
	json_object_put(req("PUT", "/_kubesim/kubelet",
	        "{\"rules\":[{\"labelSelector\":\"a in (\"}]}", 400));
	json_object_put(req("PUT", "/_kubesim/kubelet",
	        "{\"rules\":[{\"runDuration\":\"soon\"}]}", 400));
	json_object_put(req("POST", "/_kubesim/kubelet",
	        "{\"rules\":[{\"colour\":\"red\"}]}", 400));
	/* The rejected bodies left the rules alone. */
	json_object *r = req("GET", "/_kubesim/kubelet", NULL, 200);
	assert_int_equal(json_object_array_length(jx_get(r, "rules")), 1);
	assert_string_equal(jx_get_str(r, "rules.0.labelSelector"), "app=y");
	json_object_put(r);
	r = req("DELETE", "/_kubesim/kubelet", NULL, 200);
	assert_int_equal(json_object_array_length(jx_get(r, "rules")), 0);
	json_object_put(r);
	r = req("GET", "/_kubesim/kubelet", NULL, 200);
	assert_int_equal(json_object_array_length(jx_get(r, "rules")), 0);
	json_object_put(r);
}

static void
test_kubelet_rules(void **state)
{
	long code;
	int64_t n = 0;

	(void)state;
	make_ns("kr");
	json_object_put(req("PUT", "/_kubesim/kubelet",
	        "{\"rules\":[{\"namespace\":\"kr\",\"labelSelector\":"
	        "\"app=x\",\"runDuration\":\"200ms\",\"exitCode\":3,"
	        "\"logs\":{\"*\":\"ruled\\n\"}}]}",
	        200));
	free(create("/api/v1/namespaces/kr/pods",
	        "{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"x\"}},"
	        "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{"
	        "\"name\":\"c\",\"image\":\"x\"}]}}"));
	free(create("/api/v1/namespaces/kr/pods",
	        "{\"metadata\":{\"name\":\"srv\"},\"spec\":{\"containers\":[{"
	        "\"name\":\"c\",\"image\":\"x\"}]}}"));
	json_object *p = wait_str(
	        "/api/v1/namespaces/kr/pods/p", "status.phase", "Failed");
	assert_int_equal(jx_get_int(p,
	                         "status.containerStatuses.0.state."
	                         "terminated.exitCode",
	                         &n),
	        0);
	assert_int_equal(n, 3);
	assert_string_equal(jx_get_str(p,
	                            "status.containerStatuses.0.state."
	                            "terminated.reason"),
	        "Error");
	json_object_put(p);
	char *log = http(&main_sim, "GET", "/api/v1/namespaces/kr/pods/p/log",
	        NULL, NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(log, "ruled\n");
	free(log);
	/* restartPolicy Always without a run duration: Running for good. */
	json_object_put(wait_str(
	        "/api/v1/namespaces/kr/pods/srv", "status.phase", "Running"));
	pause_ms(1300);
	json_object_put(wait_str(
	        "/api/v1/namespaces/kr/pods/srv", "status.phase", "Running"));
	json_object_put(req("DELETE", "/_kubesim/kubelet", NULL, 200));
}

static void
test_deployment(void **state)
{
	long code;

	(void)state;
	make_ns("dp");
	free(create("/apis/apps/v1/namespaces/dp/deployments",
	        "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":3,"
	        "\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{"
	        "\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{"
	        "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}"));
	json_object *d = wait_condition(
	        "/apis/apps/v1/namespaces/dp/deployments/d", "Available");
	int64_t n = 0;
	assert_int_equal(jx_get_int(d, "status.availableReplicas", &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(jx_get_int(d, "status.readyReplicas", &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(jx_get_int(d, "status.observedGeneration", &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(jx_get_str(condition(d, "Progressing"), "reason"),
	        "NewReplicaSetAvailable");
	json_object_put(d);
	free(http(&main_sim, "PATCH",
	        "/apis/apps/v1/namespaces/dp/deployments/d",
	        "application/merge-patch+json", "{\"spec\":{\"replicas\":5}}",
	        &code));
	assert_int_equal(code, 200);
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	for (;;) {
		d = get("/apis/apps/v1/namespaces/dp/deployments/d");
		n = 0;
		jx_get_int(d, "status.observedGeneration", &n);
		if (n == 2) {
			break;
		}
		json_object_put(d);
		assert_true(timefmt_now_ms_mono() < end);
		pause_ms(20);
	}
	assert_int_equal(jx_get_int(d, "status.replicas", &n), 0);
	assert_int_equal(n, 5);
	json_object_put(d);
}

/* --controllers none: a Job gets no pod and Foreground deletes at once. */
static void
test_controllers_none(void **state)
{
	struct sim keep = main_sim;

	(void)state;
	assert_int_equal(sim_start(&main_sim, "none"), 0);
	free(job("default", "idle", "", ""));
	free(cm("default", "own", NULL, ""));
	json_object *o
	        = req("DELETE", "/api/v1/namespaces/default/configmaps/own",
	                "{\"propagationPolicy\":\"Foreground\"}", 200);
	assert_null(jx_get(o, "metadata.finalizers"));
	json_object_put(o);
	assert_null(get("/api/v1/namespaces/default/configmaps/own"));
	pause_ms(500);
	json_object *l = job_pods("default", "idle");
	assert_int_equal(nitems(l), 0);
	json_object_put(l);
	json_object *j = get("/apis/batch/v1/namespaces/default/jobs/idle");
	assert_null(jx_get(j, "status.startTime"));
	json_object_put(j);
	sim_stop(&main_sim);
	main_sim = keep;
}

static int
setup(void **state)
{
	(void)state;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	return (sim_start(&main_sim, "all"));
}

static int
teardown(void **state)
{
	(void)state;
	sim_stop(&main_sim);
	curl_global_cleanup();
	return (0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_gc_background),
		cmocka_unit_test(test_gc_foreground),
		cmocka_unit_test(test_gc_orphan),
		cmocka_unit_test(test_job_complete),
		cmocka_unit_test(test_job_failed),
		cmocka_unit_test(test_job_deadline),
		cmocka_unit_test(test_job_ttl),
		cmocka_unit_test(test_kubelet_admin),
		cmocka_unit_test(test_kubelet_rules),
		cmocka_unit_test(test_deployment),
		cmocka_unit_test(test_controllers_none),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
