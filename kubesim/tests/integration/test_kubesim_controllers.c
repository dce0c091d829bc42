/*
 * test_kubesim_controllers.c: black-box tests of kubesim's emulated
 * control plane (kubesim/kctrl.c) against bin/kubesim ($KUBESIM)
 * driven through tests/lib/ksim: garbage collection with background,
 * foreground and orphan propagation, the Job controller (completion, backoff
 * limit, activeDeadlineSeconds, ttlSecondsAfterFinished), the kubelet stand-in
 * (pod phases, logs, annotations and /_kubesim/kubelet rules), Deployment
 * status and --controllers none; plus kctrl_parse in-process.  Every wait
 * is bounded (WAIT_MS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "kubesim/kctrl.h"
#include "tests/lib/ksim.h"

#define WAIT_MS 10000
#define REQ_MS  10000
#define MERGE   "application/merge-patch+json"

/* ---- talking to kubesim ----------------------------------------------- */

static struct ksim *K; /* the server the tests talk to */

static struct ksim *
start(const char *controllers)
{
	const char *const args[] = { "--controllers", controllers, NULL };

	return (ksim_start(args));
}

/* One request to K; ctype NULL means JSON.  Caller frees with
 * ksim_resp_free(). */
static struct ksim_resp *
http(const char *method, const char *path, const char *ctype, const char *body)
{
	return (ksim_request(ksim_url(K), method, path,
	        ctype ?: "application/json", body, NULL, REQ_MS));
}

/* Frees r; returns its parsed body (caller frees). */
static json_object *
take_json(struct ksim_resp *r)
{
	json_object *o = r->json;

	r->json = NULL;
	ksim_resp_free(r);
	return (o);
}

/* A request that must answer want; returns the parsed body. */
static json_object *
req(const char *method, const char *path, const char *body, long want)
{
	struct ksim_resp *r = http(method, path, NULL, body);

	if (r->code != want) {
		fail_msg("%s %s: %ld (want %ld): %s", method, path, r->code,
		        want, r->body);
	}
	return (take_json(r));
}

/* GET path: the object, or NULL on 404. */
static json_object *
get(const char *path)
{
	struct ksim_resp *r = http("GET", path, NULL, NULL);

	if (r->code != 200 && r->code != 404) {
		fail_msg("GET %s: %ld: %s", path, r->code, r->body);
	}
	if (r->code != 200) {
		ksim_resp_free(r);
		return (NULL);
	}
	return (take_json(r));
}

/* A merge patch of path that must answer 200. */
static void
merge_patch(const char *path, const char *patch)
{
	struct ksim_resp *r = http("PATCH", path, MERGE, patch);

	assert_int_equal(r->code, 200);
	ksim_resp_free(r);
}

/* GET path (a pod's log) must answer 200 with want. */
static void
check_log(const char *path, const char *want)
{
	struct ksim_resp *r = http("GET", path, NULL, NULL);

	assert_int_equal(r->code, 200);
	assert_string_equal(r->body, want);
	ksim_resp_free(r);
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

/* ---- bounded waits ---------------------------------------------------- */

/* Whether o, the answer to a GET (NULL on 404), is what a wait wants. */
typedef bool done_fn(json_object *o, const void *arg);

/* GETs path every 20 ms until done(o, arg) holds and returns that o
 * (caller frees); fails the test after WAIT_MS, saying what it waited
 * for. */
static json_object *
wait_for(const char *path, done_fn *done, const void *arg, const char *what)
{
	int64_t end = ksim_now_ms() + WAIT_MS;

	for (;;) {
		json_object *o = get(path);
		if (done(o, arg)) {
			return (o);
		}
		json_object_put(o);
		if (ksim_now_ms() > end) {
			fail_msg(
			        "%s: not %s after %d ms", path, what, WAIT_MS);
		}
		ksim_sleep_ms(20);
	}
}

static bool
is_gone(json_object *o, const void *arg)
{
	(void)arg;
	return (o == NULL);
}

/* Waits until GET path is 404. */
static void
wait_gone(const char *path)
{
	wait_for(path, is_gone, NULL, "gone");
}

struct field_want {
	const char *field;
	const char *want;
};

static bool
field_is(json_object *o, const void *arg)
{
	const struct field_want *fw = arg;
	const char *v = jx_get_str(o, fw->field);

	return (v != NULL && strcmp(v, fw->want) == 0);
}

/* Waits until the string at field of GET path is want; returns the
 * object. */
static json_object *
wait_str(const char *path, const char *field, const char *want)
{
	struct field_want fw = { field, want };

	return (wait_for(path, field_is, &fw, want));
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

static bool
condition_true(json_object *o, const void *type)
{
	json_object *c = condition(o, type);

	return (c != NULL
	        && strcmp(jx_get_str(c, "status") ?: "", "True") == 0);
}

static json_object *
wait_condition(const char *path, const char *type)
{
	return (wait_for(path, condition_true, type, type));
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

/* o exists (asserted) and has exactly one owner reference. */
static bool
one_owner(json_object *o, const void *arg)
{
	json_object *refs = jx_get(o, "metadata.ownerReferences");

	(void)arg;
	assert_non_null(o);
	return (refs != NULL && json_object_array_length(refs) == 1);
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
	json_object *d2 = wait_for("/api/v1/namespaces/gcb/configmaps/d2",
	        one_owner, NULL, "with one owner");
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

static bool
gone_or_deleting(json_object *o, const void *arg)
{
	(void)arg;
	return (o == NULL || jx_get(o, "metadata.deletionTimestamp") != NULL);
}

/* In a new namespace ns: ConfigMap "own", and "dep" owned by it
 * (blockOwnerDeletion; dep_extra as for cm()); then deletes own with
 * propagation policy.  Returns the DELETE answer (200). */
static json_object *
delete_owner(const char *ns, const char *dep_extra, const char *policy)
{
	char *path = xasprintf(CM "/own", ns);
	char *body = xasprintf("{\"propagationPolicy\":\"%s\"}", policy);
	char *u, *r, *refs;
	json_object *o;

	make_ns(ns);
	u = cm(ns, "own", NULL, "");
	r = ref("own", u, true);
	refs = xasprintf("[%s]", r);
	free(cm(ns, "dep", refs, dep_extra));
	o = req("DELETE", path, body, 200);
	free(u);
	free(r);
	free(refs);
	free(path);
	free(body);
	return (o);
}

static void
test_gc_foreground(void **state)
{
	(void)state;
	json_object *o = delete_owner(
	        "gcf", ",\"finalizers\":[\"test.io/hold\"]", "Foreground");
	assert_non_null(jx_get(o, "metadata.deletionTimestamp"));
	assert_string_equal(
	        jx_get_str(o, "metadata.finalizers.0"), "foregroundDeletion");
	json_object_put(o);
	/* The dependent is deleted too; it stays (our finalizer), and so does
	 * the owner. */
	json_object *d = wait_for("/api/v1/namespaces/gcf/configmaps/dep",
	        gone_or_deleting, NULL, "being deleted");
	assert_non_null(d);
	json_object_put(d);
	ksim_sleep_ms(300);
	o = get("/api/v1/namespaces/gcf/configmaps/own");
	assert_non_null(o);
	assert_string_equal(
	        jx_get_str(o, "metadata.finalizers.0"), "foregroundDeletion");
	json_object_put(o);
	merge_patch("/api/v1/namespaces/gcf/configmaps/dep",
	        "{\"metadata\":{\"finalizers\":null}}");
	wait_gone("/api/v1/namespaces/gcf/configmaps/dep");
	wait_gone("/api/v1/namespaces/gcf/configmaps/own");
}

static void
test_gc_orphan(void **state)
{
	(void)state;
	json_object_put(delete_owner("gco", "", "Orphan"));
	wait_gone("/api/v1/namespaces/gco/configmaps/own");
	json_object *d = get("/api/v1/namespaces/gco/configmaps/dep");
	assert_non_null(d);
	assert_null(jx_get(d, "metadata.ownerReferences"));
	assert_null(jx_get(d, "metadata.deletionTimestamp"));
	json_object_put(d);
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

/* The list path of the job's pods.  Caller frees. */
static char *
pods_path(const char *ns, const char *job_name)
{
	return (xasprintf("/api/v1/namespaces/%s/pods?labelSelector="
	                  "batch.kubernetes.io/job-name%%3D%s",
	        ns, job_name));
}

static json_object *
job_pods(const char *ns, const char *job_name)
{
	char *p = pods_path(ns, job_name);
	json_object *l = get(p);

	free(p);
	return (l);
}

static bool
has_pods(json_object *list, const void *want_some)
{
	return ((nitems(list) > 0) == *(const bool *)want_some);
}

/* Waits until the job has at least one pod (some) or none (!some);
 * returns the list. */
static json_object *
wait_pods(const char *ns, const char *job_name, bool some)
{
	char *p = pods_path(ns, job_name);
	json_object *l = wait_for(
	        p, has_pods, &some, some ? "with pods" : "without pods");

	free(p);
	return (l);
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
	json_object *l = wait_pods("jc", "j1", true);
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

	char *lp = xasprintf("%s/log", ppath);
	check_log(lp, "hello world\n");
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
	json_object_put(wait_pods("jd", "jd", true));
	json_object *j = wait_condition(
	        "/apis/batch/v1/namespaces/jd/jobs/jd", "Failed");
	assert_string_equal(jx_get_str(condition(j, "Failed"), "reason"),
	        "DeadlineExceeded");
	json_object_put(j);
	json_object_put(wait_pods("jd", "jd", false));
}

static void
test_job_ttl(void **state)
{
	(void)state;
	make_ns("jt");
	free(job("jt", "jt", "\"kubesim.sympozium.ai/run-duration\":\"100ms\"",
	        ",\"ttlSecondsAfterFinished\":1"));
	json_object *l = wait_pods("jt", "jt", true);
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
	check_log("/api/v1/namespaces/kr/pods/p/log", "ruled\n");
	/* restartPolicy Always without a run duration: Running for good. */
	json_object_put(wait_str(
	        "/api/v1/namespaces/kr/pods/srv", "status.phase", "Running"));
	ksim_sleep_ms(1300);
	json_object_put(wait_str(
	        "/api/v1/namespaces/kr/pods/srv", "status.phase", "Running"));
	json_object_put(req("DELETE", "/_kubesim/kubelet", NULL, 200));
}

static bool
generation_2(json_object *o, const void *arg)
{
	int64_t n = 0;

	(void)arg;
	jx_get_int(o, "status.observedGeneration", &n);
	return (n == 2);
}

static void
test_deployment(void **state)
{
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
	merge_patch("/apis/apps/v1/namespaces/dp/deployments/d",
	        "{\"spec\":{\"replicas\":5}}");
	d = wait_for("/apis/apps/v1/namespaces/dp/deployments/d", generation_2,
	        NULL, "at generation 2");
	assert_int_equal(jx_get_int(d, "status.replicas", &n), 0);
	assert_int_equal(n, 5);
	json_object_put(d);
}

/* --controllers none: a Job gets no pod and Foreground deletes at once. */
static void
test_controllers_none(void **state)
{
	struct ksim *keep = K, *none = start("none");

	(void)state;
	assert_non_null(none);
	K = none;
	free(job("default", "idle", "", ""));
	free(cm("default", "own", NULL, ""));
	json_object *o
	        = req("DELETE", "/api/v1/namespaces/default/configmaps/own",
	                "{\"propagationPolicy\":\"Foreground\"}", 200);
	assert_null(jx_get(o, "metadata.finalizers"));
	json_object_put(o);
	assert_null(get("/api/v1/namespaces/default/configmaps/own"));
	ksim_sleep_ms(500);
	json_object *l = job_pods("default", "idle");
	assert_int_equal(nitems(l), 0);
	json_object_put(l);
	json_object *j = get("/apis/batch/v1/namespaces/default/jobs/idle");
	assert_null(jx_get(j, "status.startTime"));
	json_object_put(j);
	assert_int_equal(ksim_stop(K), 0);
	K = keep;
}

static int
setup(void **state)
{
	(void)state;
	K = start("all");
	return (K != NULL ? 0 : -1);
}

static int
teardown(void **state)
{
	(void)state;
	assert_int_equal(ksim_stop(K), 0);
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
