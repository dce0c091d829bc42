/*
 * test_reconcilers.c: the six reconcilers end to end.  One bin/kubesim
 * (upstream CRDs, every emulated controller, a request log) and one
 * bin/sympoziumd with --leader-elect running the production worker; each
 * test works in a namespace of its own.  The group setup installs
 * kubesim's kubelet rules that shape the pods of the runs below (logs with
 * the agent's result markers, exit codes, long runs).  The tests check
 * (spec sympozium-controllers.md): an AgentRun's result, token usage and
 * memory parsed from its pod's log (1.5, 1.14); failing pods failing their
 * run with the log's error or "Job failed" (1.5); a run past spec.timeout
 * failing with "timeout" and its Job deleted (1.5 step 7); deleting owners
 * (an AgentRun, an MCPServer) removing their children through kubesim's
 * garbage collector, not the operator, and owners with finalizers (a
 * running AgentRun, an instance) cleaned up by the operator (1.9, 2.2); a
 * spec change touching exactly the children it should (MCPServer image,
 * persona model and task, skill content, a new channel); a
 * SympoziumSchedule creating its first run at once, a suspended one
 * firing the missed tick on resume, an invalid cron giving Error (5.2,
 * 5.4); a PersonaPack stamping instances, schedules and seeds, removing an
 * excluded persona, tearing everything down when disabled, and its
 * deletion; a run whose instance the cache misses (its watch down) still
 * starting, the instance read live; and no write by the operator other
 * than Lease renewals in 10 s of steady state.
 *
 * Every wait is bounded (WAIT_MS).  Only the pid this test forked, and
 * the workers found under it in /proc, are signalled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 12000
/* quiet for longer than the 5 s polls (running AgentRuns, MCPServer
 * readiness), so a slow build (ASan) has really converged */
#define QUIET_MS  6000
#define STEADY_MS 10000
#define UA_SD     "sympoziumd"
#define GROUP     "sympozium.ai"
#define VERSION   "v1alpha1"
#define MEM_MD    "# Agent Memory\n\nNo memories recorded yet.\n"

/* Namespaces, one per test. */
#define NS_RESULT  "e2e-result"
#define NS_FAIL    "e2e-fail"
#define NS_TIMEOUT "e2e-timeout"
#define NS_GC      "e2e-gc"
#define NS_CHANGE  "e2e-change"
#define NS_SCHED   "e2e-sched"
#define NS_PACK    "e2e-pack"
#define NS_FIN     "e2e-fin"
#define NS_STALE   "e2e-stale"

static const char *const NAMESPACES[] = { NS_RESULT, NS_FAIL, NS_TIMEOUT,
	NS_GC, NS_FIN, NS_CHANGE, NS_SCHED, NS_PACK, NS_STALE };

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_POD = { "", "v1", "pods", true };
static const struct kapi_res R_PVC
        = { "", "v1", "persistentvolumeclaims", true };
static const struct kapi_res R_SA = { "", "v1", "serviceaccounts", true };
static const struct kapi_res R_JOB = { "batch", "v1", "jobs", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_INST
        = { GROUP, VERSION, "sympoziuminstances", true };
static const struct kapi_res R_RUN = { GROUP, VERSION, "agentruns", true };
static const struct kapi_res R_SCHED
        = { GROUP, VERSION, "sympoziumschedules", true };
static const struct kapi_res R_SKP = { GROUP, VERSION, "skillpacks", true };
static const struct kapi_res R_PACK = { GROUP, VERSION, "personapacks", true };
static const struct kapi_res R_MCP = { GROUP, VERSION, "mcpservers", true };

/* The log of the successful run: a result and a memory block. */
#define OK_RESULT                                                             \
	"{\"status\":\"success\",\"response\":\"All tests pass.\","           \
	"\"metrics\":{\"durationMs\":1234,\"inputTokens\":100,"               \
	"\"outputTokens\":42,\"toolCalls\":3}}"
#define OK_LOG                                                                \
	"starting agent\nthinking...\n__SYMPOZIUM_RESULT__\n" OK_RESULT       \
	"\n__SYMPOZIUM_END__\n__SYMPOZIUM_MEMORY__\n"                         \
	"  remember: the e2e suite passed  \n__SYMPOZIUM_MEMORY_END__\n"      \
	"bye\n"
#define ERR_LOG                                                               \
	"starting agent\n__SYMPOZIUM_RESULT__\n"                              \
	"{\"status\":\"error\",\"error\":\"  model exploded  \"}\n"           \
	"__SYMPOZIUM_END__\n"

static struct optest F;

/* ---- objects ---- */

/* Creates o (put here) in ns, retrying on 404 while its CRD is not served
 * yet.  Fails the test on any other error. */
static void
create(const struct kapi_res *r, const char *ns, json_object *o)
{
	optest_create_or_fail(&F, r, ns, o, NULL);
	json_object_put(o);
}

static void
merge_patch(const struct kapi_res *r, const char *ns, const char *name,
        const char *patch)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_patch(F.a.c, r, ns, name, KAPI_PATCH_MERGE, patch, NULL,
	            false, NULL, &e)
	        != KAPI_OK) {
		fail_msg("patch %s %s/%s: %s", r->plural, ns, name,
		        e.message ?: "");
	}
	kapi_err_fini(&e);
}

static void
del_obj(const struct kapi_res *r, const char *ns, const char *name)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_delete(F.a.c, r, ns, name, NULL, NULL, &e) != KAPI_OK) {
		fail_msg("delete %s %s/%s: %s", r->plural, ns, name,
		        e.message ?: "");
	}
	kapi_err_fini(&e);
}

/* A minimal SympoziumInstance with memory (so <name>-memory; without
 * spec.memory there is none, spec 2.2 step 6). */
static void
create_instance(const char *ns, const char *name)
{
	create(&R_INST, ns,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                "\"kind\":\"SympoziumInstance\",\"metadata\":{"
	                "\"name\":\"%s\"},\"spec\":{\"agents\":{\"default\":{"
	                "\"model\":\"gpt-4o\"}},\"memory\":{\"enabled\":"
	                "true}}}",
	                name));
}

/* An AgentRun of instance inst; timeout NULL: none. */
static void
create_run(const char *ns, const char *name, const char *inst,
        const char *timeout)
{
	json_object *o = testutil_jsonf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
	        "\"instanceRef\":\"%s\",\"agentId\":\"e2e\",\"sessionKey\":"
	        "\"s1\",\"task\":\"Run the tests\",\"model\":{\"provider\":"
	        "\"openai\",\"model\":\"gpt-4o\",\"authSecretRef\":\"\"}}}",
	        name, inst);

	if (timeout != NULL) {
		jx_set_path(
		        o, "spec.timeout", json_object_new_string(timeout));
	}
	create(&R_RUN, ns, o);
}

/* A string field of the object (GET now), "" when absent.  Caller frees
 * with free(). */
static char *
field_of(const struct kapi_res *r, const char *ns, const char *name,
        const char *path)
{
	json_object *o = optest_get(&F, r, ns, name);
	char *s = xstrdup(jx_get_str(o, path) ?: "");

	json_object_put(o);
	return (s);
}

static char *
rv_of(const struct kapi_res *r, const char *ns, const char *name)
{
	return (field_of(r, ns, name, "metadata.resourceVersion"));
}

/* ---- the supervisor ---- */

/* The kubelet rules of every test, installed once (a PUT replaces the
 * list; rules apply to pods created afterwards). */
static void
kubelet_rules(void)
{
	json_object *rules = json_object_new_array();
	json_object *body = json_object_new_object();
	json_object *ok_log = json_object_new_string(OK_LOG);
	json_object *err_log = json_object_new_string(ERR_LOG);

	json_object_array_add(rules,
	        testutil_jsonf(
	                "{\"namespace\":\"" NS_RESULT "\",\"labelSelector\":"
	                "\"sympozium.ai/agent-run=run-ok\",\"runDuration\":"
	                "\"500ms\",\"logs\":{\"agent\":%s}}",
	                json_object_to_json_string(ok_log)));
	json_object_array_add(rules,
	        testutil_jsonf(
	                "{\"namespace\":\"" NS_FAIL "\",\"labelSelector\":"
	                "\"sympozium.ai/agent-run=run-err\",\"runDuration\":"
	                "\"500ms\",\"exitCode\":1,\"logs\":{\"agent\":%s}}",
	                json_object_to_json_string(err_log)));
	json_object_array_add(rules,
	        testutil_jsonf(
	                "{\"namespace\":\"" NS_FAIL "\",\"labelSelector\":"
	                "\"sympozium.ai/agent-run=run-crash\",\"runDuration\":"
	                "\"500ms\",\"exitCode\":2,\"logs\":{\"agent\":"
	                "\"segfault\\n\"}}"));
	json_object_array_add(rules,
	        testutil_jsonf(
	                "{\"namespace\":\"" NS_STALE "\",\"runDuration\":"
	                "\"120s\"}"));
	json_object_array_add(rules,
	        testutil_jsonf("{\"namespace\":\"" NS_FIN "\",\"runDuration\":"
	                       "\"120s\"}"));
	json_object_array_add(rules,
	        testutil_jsonf(
	                "{\"namespace\":\"" NS_TIMEOUT "\",\"runDuration\":"
	                "\"120s\"}"));
	json_object_object_add(body, "rules", rules);
	optest_kubelet_rules(&F, json_object_to_json_string(body));
	json_object_put(body);
	json_object_put(ok_log);
	json_object_put(err_log);
}

/* ---- polling ---- */

/* Waits for o's one controller ownerReference to name the sympozium.ai
 * owner kind/name, with blockOwnerDeletion. */
static void
wait_owned(const struct kapi_res *r, const char *ns, const char *name,
        const char *kind, const char *owner)
{
	const struct optest_owner own = { kind, owner, NULL };

	optest_wait_obj(&F, r, ns, name, optest_check_owner, &own);
}

static int64_t
int_at(json_object *o, const char *path)
{
	int64_t v = -1;

	return (jx_get_int(o, path, &v) == 0 ? v : -1);
}

static bool
has_finalizers(json_object *o)
{
	json_object *f = jx_get(o, "metadata.finalizers");

	return (f != NULL && json_object_array_length(f) > 0);
}

/* ---- the request log ---- */

static const char *const WRITES[] = { "POST", "PUT", "PATCH", "DELETE", NULL };

/* Writes by the supervisor in the request log whose path contains frag
 * (NULL: any), leases excepted. */
static int
sd_writes_to(const char *frag)
{
	int n = 0;

	for (int i = 0; WRITES[i] != NULL; i++) {
		int all = ksim_count_log(
		        F.a.request_log, WRITES[i], frag, UA_SD);
		int leases = frag != NULL ? 0
		                          : ksim_count_log(F.a.request_log,
		                                  WRITES[i], "/leases", UA_SD);
		assert_true(all >= 0 && leases >= 0);
		n += all - leases;
	}
	return (n);
}

static int
sd_deletes(const char *frag)
{
	int n = ksim_count_log(F.a.request_log, "DELETE", frag, UA_SD);

	assert_true(n >= 0);
	return (n);
}

/* ---- group setup ---- */

/* The operator (leader election in "default"), then each test's
 * namespace and the kubelet rules (for the pods of the runs the tests
 * create). */
static int
setup(void **state)
{
	static const char *const le[] = { "--leader-elect",
		"--leader-election-namespace", "default", NULL };

	*state = &F;
	if (optest_start_operator(&F, "test-reconcilers", WAIT_MS, le) != 0) {
		return (-1);
	}
	for (size_t i = 0; i < sizeof(NAMESPACES) / sizeof(NAMESPACES[0]);
	        i++) {
		if (ksim_api_create(&F.a, &R_NS, NULL, NAMESPACES[i], NULL)
		        != KAPI_OK) {
			return (-1);
		}
	}
	kubelet_rules();
	return (0);
}

/* ---- 1. a result from the pod's log ---- */

static const char *
check_terminal(json_object *o, const void *arg)
{
	const char *phase = jx_get_str(o, "status.phase");

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	if (phase == NULL
	        || (strcmp(phase, "Succeeded") != 0
	                && strcmp(phase, "Failed") != 0)) {
		return ("not terminal yet");
	}
	return (has_finalizers(o) ? "a terminal run keeps a finalizer" : NULL);
}

/* data["MEMORY.md"] equals arg. */
static const char *
check_memory(json_object *o, const void *arg)
{
	json_object *v = jx_getv(o, "data", "MEMORY.md", NULL);

	if (o == NULL) {
		return ("absent");
	}
	return (v != NULL && strcmp(json_object_get_string(v), arg) == 0
	                ? NULL
	                : "MEMORY.md differs");
}

static void
test_run_result(void **state)
{
	json_object *run;

	(void)state;
	create_instance(NS_RESULT, "inst");
	optest_wait_obj(&F, &R_CM, NS_RESULT, "inst-memory",
	        optest_check_present, NULL);
	create_run(NS_RESULT, "run-ok", "inst", NULL);
	optest_wait_obj(&F, &R_RUN, NS_RESULT, "run-ok", check_terminal, NULL);
	run = optest_get(&F, &R_RUN, NS_RESULT, "run-ok");
	assert_string_equal(jx_get_str(run, "status.phase"), "Succeeded");
	assert_string_equal(
	        jx_get_str(run, "status.result"), "All tests pass.");
	assert_null(jx_get(run, "status.error"));
	assert_string_equal(jx_get_str(run, "status.jobName"), "run-ok");
	assert_non_null(jx_get_str(run, "status.startedAt"));
	assert_non_null(jx_get_str(run, "status.completedAt"));
	assert_int_equal(
	        strncmp(jx_get_str(run, "status.podName") ?: "", "run-ok-", 7),
	        0);
	assert_int_equal(int_at(run, "status.tokenUsage.inputTokens"), 100);
	assert_int_equal(int_at(run, "status.tokenUsage.outputTokens"), 42);
	assert_int_equal(int_at(run, "status.tokenUsage.totalTokens"), 142);
	assert_int_equal(int_at(run, "status.tokenUsage.toolCalls"), 3);
	assert_int_equal(int_at(run, "status.tokenUsage.durationMs"), 1234);
	json_object_put(run);
	/* The memory block replaced the instance's MEMORY.md, trimmed. */
	optest_wait_obj(&F, &R_CM, NS_RESULT, "inst-memory", check_memory,
	        "remember: the e2e suite passed");
	/* The run's children: its input ConfigMap and Job, owned by it, and
	 * the shared ServiceAccount. */
	wait_owned(&R_CM, NS_RESULT, "run-ok-input", "AgentRun", "run-ok");
	wait_owned(&R_JOB, NS_RESULT, "run-ok", "AgentRun", "run-ok");
	optest_wait_obj(&F, &R_SA, NS_RESULT, "sympozium-agent",
	        optest_check_present, NULL);
}

/* ---- 2. a failing pod ---- */

static void
test_run_failed_pod(void **state)
{
	json_object *run;

	(void)state;
	create_instance(NS_FAIL, "inst");
	create_run(NS_FAIL, "run-err", "inst", NULL);
	create_run(NS_FAIL, "run-crash", "inst", NULL);
	optest_wait_obj(&F, &R_RUN, NS_FAIL, "run-err", check_terminal, NULL);
	optest_wait_obj(
	        &F, &R_RUN, NS_FAIL, "run-crash", check_terminal, NULL);
	/* The log's error, trimmed. */
	run = optest_get(&F, &R_RUN, NS_FAIL, "run-err");
	assert_string_equal(jx_get_str(run, "status.phase"), "Failed");
	assert_string_equal(jx_get_str(run, "status.error"), "model exploded");
	assert_non_null(jx_get_str(run, "status.completedAt"));
	assert_null(jx_get(run, "status.tokenUsage"));
	json_object_put(run);
	/* No markers: the Job's failure. */
	run = optest_get(&F, &R_RUN, NS_FAIL, "run-crash");
	assert_string_equal(jx_get_str(run, "status.phase"), "Failed");
	assert_string_equal(jx_get_str(run, "status.error"), "Job failed");
	assert_null(jx_get(run, "status.result"));
	json_object_put(run);
}

/* ---- 3. a timeout ---- */

static void
test_run_timeout(void **state)
{
	json_object *run, *pods = NULL;
	struct kapi_list_opts lo = { 0 };

	(void)state;
	create_instance(NS_TIMEOUT, "inst");
	create_run(NS_TIMEOUT, "run-slow", "inst", "2s");
	optest_wait_obj(
	        &F, &R_RUN, NS_TIMEOUT, "run-slow", check_terminal, NULL);
	run = optest_get(&F, &R_RUN, NS_TIMEOUT, "run-slow");
	assert_string_equal(jx_get_str(run, "status.phase"), "Failed");
	assert_string_equal(jx_get_str(run, "status.error"), "timeout");
	json_object_put(run);
	/* The Job was deleted (foreground) by the operator, its pod by the
	 * garbage collector. */
	optest_wait_obj(
	        &F, &R_JOB, NS_TIMEOUT, "run-slow", optest_check_absent, NULL);
	assert_true(
	        sd_deletes("/namespaces/" NS_TIMEOUT "/jobs/run-slow") >= 1);
	lo.label_selector = "sympozium.ai/agent-run=run-slow";
	for (int64_t end = ksim_now_ms() + WAIT_MS;; ksim_sleep_ms(100)) {
		json_object_put(pods);
		pods = NULL;
		assert_int_equal(kapi_list_all(F.a.c, &R_POD, NS_TIMEOUT, &lo,
		                         &pods, NULL, NULL),
		        KAPI_OK);
		if (json_object_array_length(pods) == 0
		        || ksim_now_ms() >= end) {
			break;
		}
	}
	assert_int_equal(json_object_array_length(pods), 0);
	json_object_put(pods);
}

/* ---- 4. deleting owners: the garbage collector removes children ---- */

/* Creates an http MCPServer with image img. */
static void
create_mcp(const char *ns, const char *name, const char *img)
{
	create(&R_MCP, ns,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"MCPServer\",\"metadata\":{\"name\":\"%s\"},"
	                "\"spec\":"
	                "{\"transportType\":\"http\",\"toolsPrefix\":\"t\","
	                "\"deployment\":{\"image\":\"%s\",\"port\":9000}}}",
	                name, img));
}

static const char *
check_ready(json_object *o, const void *arg)
{
	bool ready = false;

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	return (jx_get_bool(o, "status.ready", &ready) == 0 && ready
	                ? NULL
	                : "status.ready is not true");
}

/* The number of objects of r in ns matching the label selector sel. */
static size_t
count_labelled(const struct kapi_res *r, const char *ns, const char *sel)
{
	struct kapi_list_opts lo = { .label_selector = sel };
	json_object *items = NULL;
	size_t n;

	assert_int_equal(
	        kapi_list_all(F.a.c, r, ns, &lo, &items, NULL, NULL), KAPI_OK);
	n = json_object_array_length(items);
	json_object_put(items);
	return (n);
}

/* Waits until no object of r in ns matches sel. */
static void
wait_none_labelled(const struct kapi_res *r, const char *ns, const char *sel)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	size_t n;

	while ((n = count_labelled(r, ns, sel)) != 0 && ksim_now_ms() < end) {
		ksim_sleep_ms(100);
	}
	if (n != 0) {
		fail_msg("%zu %s in %s still match %s", n, r->plural, ns, sel);
	}
}

static void
test_owner_delete_gc(void **state)
{
	(void)state;
	create_instance(NS_GC, "inst");
	create_run(NS_GC, "run-gc", "inst", NULL);
	create_mcp(NS_GC, "mcp-gc", "img:1");
	optest_wait_obj(&F, &R_RUN, NS_GC, "run-gc", check_terminal, NULL);
	wait_owned(&R_CM, NS_GC, "run-gc-input", "AgentRun", "run-gc");
	wait_owned(&R_JOB, NS_GC, "run-gc", "AgentRun", "run-gc");
	optest_wait_obj(&F, &R_MCP, NS_GC, "mcp-gc", check_ready, NULL);
	wait_owned(&R_DEP, NS_GC, "mcp-gc", "MCPServer", "mcp-gc");
	wait_owned(&R_SVC, NS_GC, "mcp-gc", "MCPServer", "mcp-gc");
	assert_int_equal(
	        count_labelled(&R_POD, NS_GC, "sympozium.ai/agent-run=run-gc"),
	        1);

	del_obj(&R_RUN, NS_GC, "run-gc");
	del_obj(&R_MCP, NS_GC, "mcp-gc");
	optest_wait_obj(
	        &F, &R_JOB, NS_GC, "run-gc", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_CM, NS_GC, "run-gc-input", optest_check_absent, NULL);
	wait_none_labelled(&R_POD, NS_GC, "sympozium.ai/agent-run=run-gc");
	optest_wait_obj(
	        &F, &R_DEP, NS_GC, "mcp-gc", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_SVC, NS_GC, "mcp-gc", optest_check_absent, NULL);
	/* The garbage collector did it: the operator deleted nothing there
	 * (the ServiceAccount has no owner and stays). */
	assert_int_equal(sd_deletes("/namespaces/" NS_GC "/"), 0);
	optest_wait_obj(&F, &R_SA, NS_GC, "sympozium-agent",
	        optest_check_present, NULL);
}

/* Deleting owners with finalizers: a running AgentRun (spec 1.9: the
 * operator deletes its Job, then drops the finalizer) and a
 * SympoziumInstance (spec 2.2 step 2: its channel Deployments and memory
 * ConfigMap). */
static void
test_owner_delete_finalizers(void **state)
{
	(void)state;
	create_instance(NS_FIN, "inst");
	merge_patch(&R_INST, NS_FIN, "inst",
	        "{\"spec\":{\"channels\":[{\"type\":\"telegram\"}]}}");
	create_run(NS_FIN, "run-long", "inst", NULL);
	optest_wait_field(
	        &F, &R_RUN, NS_FIN, "run-long", "status.phase", "Running");
	wait_owned(&R_JOB, NS_FIN, "run-long", "AgentRun", "run-long");
	wait_owned(&R_DEP, NS_FIN, "inst-channel-telegram",
	        "SympoziumInstance", "inst");
	wait_owned(&R_CM, NS_FIN, "inst-memory", "SympoziumInstance", "inst");
	for (int64_t end = ksim_now_ms() + WAIT_MS;
	        count_labelled(
	                &R_POD, NS_FIN, "sympozium.ai/agent-run=run-long")
	                == 0
	        && ksim_now_ms() < end;) {
		ksim_sleep_ms(100);
	}

	del_obj(&R_RUN, NS_FIN, "run-long");
	optest_wait_obj(
	        &F, &R_RUN, NS_FIN, "run-long", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_JOB, NS_FIN, "run-long", optest_check_absent, NULL);
	optest_wait_obj(&F, &R_CM, NS_FIN, "run-long-input",
	        optest_check_absent, NULL);
	wait_none_labelled(&R_POD, NS_FIN, "sympozium.ai/agent-run=run-long");
	assert_true(sd_deletes("/namespaces/" NS_FIN "/jobs/run-long") >= 1);

	del_obj(&R_INST, NS_FIN, "inst");
	optest_wait_obj(
	        &F, &R_INST, NS_FIN, "inst", optest_check_absent, NULL);
	optest_wait_obj(&F, &R_DEP, NS_FIN, "inst-channel-telegram",
	        optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_CM, NS_FIN, "inst-memory", optest_check_absent, NULL);
	assert_true(sd_deletes("/namespaces/" NS_FIN
	                       "/deployments/inst-channel-telegram")
	        >= 1);
	assert_true(sd_deletes("/namespaces/" NS_FIN "/configmaps/inst-memory")
	        >= 1);
}

/* ---- 5. a spec change touches only its children ---- */

/* A cron that fires about once a month, never during the test and never
 * at creation (no tick in the 24 h before): 15 days from the first call,
 * the same string on every call (a changed cron is a spec change). */
static void
far_cron(char *out, size_t n)
{
	static char cron[64];

	if (cron[0] == '\0') {
		time_t t = time(NULL) + 15 * 86400;
		struct tm tm;

		gmtime_r(&t, &tm);
		snprintf(cron, sizeof(cron), "%d %d %d * *", tm.tm_min,
		        tm.tm_hour, tm.tm_mday > 28 ? 28 : tm.tm_mday);
	}
	snprintf(out, n, "%s", cron);
}

/* A daily cron whose last tick was 12 h ago: a new schedule fires at
 * once (spec 5.4, first fire) and not again for 12 h. */
static void
daily_cron(char *out, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, n, "%d %d * * *", (tm.tm_min + 30) % 60,
	        (tm.tm_hour + 12) % 24);
}

static const char *
check_image(json_object *o, const void *arg)
{
	json_object *c = jx_get(o, "spec.template.spec.containers");
	json_object *c0 = c != NULL && json_object_array_length(c) > 0
	        ? json_object_array_get_idx(c, 0)
	        : NULL;

	if (o == NULL) {
		return ("absent");
	}
	return (strcmp(jx_get_str(c0, "image") ?: "", arg) == 0
	                ? NULL
	                : "container image differs");
}

/* Every child in NS_CHANGE: of the "team" pack, of its instances, of
 * the "mcp" MCPServer, of the "tools" SkillPack and of the "solo"
 * instance. */
static const struct {
	const struct kapi_res *r;
	const char *name;
} KIDS[] = {
	{ &R_INST, "team-a" },
	{ &R_INST, "team-b" },
	{ &R_SCHED, "team-a-schedule" },
	{ &R_SCHED, "team-b-schedule" },
	{ &R_CM, "team-a-memory" },
	{ &R_CM, "team-b-memory" },
	{ &R_DEP, "team-a-memory" },
	{ &R_SVC, "team-b-memory" },
	{ &R_PVC, "team-a-memory-db" },
	{ &R_DEP, "mcp" },
	{ &R_SVC, "mcp" },
	{ &R_CM, "tools" },
	{ &R_CM, "solo-memory" },
};
#define NKIDS (sizeof(KIDS) / sizeof(KIDS[0]))
enum {
	K_TEAM_A,
	K_TEAM_B_SCHED = 3,
	K_MCP_DEP = 9,
	K_TOOLS = 11,
	K_NONE = 99
};

/* The personas of "team"; model of a and task of b vary. */
static void
patch_team(const char *model_a, const char *task_b)
{
	char cron[64];
	char *p;

	far_cron(cron, sizeof(cron));
	p = xasprintf("{\"spec\":{\"personas\":["
	              "{\"name\":\"a\",\"systemPrompt\":\"You are A.\","
	              "\"model\":\"%s\",\"schedule\":{\"type\":\"scheduled\","
	              "\"cron\":\"%s\",\"task\":\"A task\"}},"
	              "{\"name\":\"b\",\"systemPrompt\":\"You are B.\","
	              "\"schedule\":{\"type\":\"sweep\",\"cron\":\"%s\","
	              "\"task\":\"%s\"}}]}}",
	        model_a, cron, cron, task_b);
	merge_patch(&R_PACK, NS_CHANGE, "team", p);
	free(p);
}

static const char *
check_pack(json_object *o, const void *arg)
{
	const int64_t *want = arg; /* installedCount */
	const char *phase = jx_get_str(o, "status.phase");

	if (o == NULL) {
		return ("absent");
	}
	if (*want == 0) {
		return (phase != NULL && strcmp(phase, "Inactive") == 0
		                        && int_at(o, "status.installedCount")
		                                <= 0
		                ? NULL
		                : "not Inactive with installedCount 0");
	}
	if (phase == NULL || strcmp(phase, "Ready") != 0) {
		return ("status.phase is not Ready");
	}
	return (int_at(o, "status.installedCount") == *want
	                ? NULL
	                : "installedCount differs");
}

/* Asserts that of KIDS only the one at index changed (K_NONE: none)
 * its resourceVersion since rv[], after the operator went quiet; then
 * refreshes rv[]. */
static void
assert_only_changed(char **rv, size_t changed)
{
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	for (size_t i = 0; i < NKIDS; i++) {
		char *now = rv_of(KIDS[i].r, NS_CHANGE, KIDS[i].name);
		bool same = strcmp(now, rv[i]) == 0;

		if (i == changed && same) {
			fail_msg("%s %s did not change", KIDS[i].r->plural,
			        KIDS[i].name);
		}
		if (i != changed && !same) {
			(void)ksim_writes_after(
			        F.a.request_log, UA_SD, 0, true);
			fail_msg("%s %s changed (rv %s -> %s)",
			        KIDS[i].r->plural, KIDS[i].name, rv[i], now);
		}
		free(rv[i]);
		rv[i] = now;
	}
}

static void
create_tools(void)
{
	create(&R_SKP, NS_CHANGE,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"SkillPack\",\"metadata\":{\"name\":\"tools\"},"
	                "\"spec\":{\"skills\":[{\"name\":\"one\",\"content\":"
	                "\"Use one.\"},{\"name\":\"two\",\"content\":"
	                "\"Use two.\"}]}}"));
}

/* Creates the objects of NS_CHANGE and waits for every child. */
static void
change_fixture(void)
{
	const int64_t two = 2;

	create_mcp(NS_CHANGE, "mcp", "img:1");
	create_tools();
	create_instance(NS_CHANGE, "solo");
	create(&R_PACK, NS_CHANGE,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"PersonaPack\",\"metadata\":{\"name\":\"team\"},"
	                "\"spec\":{\"enabled\":true,\"personas\":[]}}"));
	patch_team("gpt-4o", "B task");
	optest_wait_obj(&F, &R_MCP, NS_CHANGE, "mcp", check_ready, NULL);
	wait_owned(&R_SVC, NS_CHANGE, "mcp", "MCPServer", "mcp");
	optest_wait_obj(&F, &R_PACK, NS_CHANGE, "team", check_pack, &two);
	wait_owned(&R_CM, NS_CHANGE, "tools", "SkillPack", "tools");
	for (size_t i = 0; i < NKIDS; i++) {
		optest_wait_obj(&F, KIDS[i].r, NS_CHANGE, KIDS[i].name,
		        optest_check_present, NULL);
	}
}

static const char *
check_two_md(json_object *o, const void *arg)
{
	json_object *v = jx_getv(o, "data", "two.md", NULL);

	if (o == NULL) {
		return ("absent");
	}
	return (v != NULL && strcmp(json_object_get_string(v), arg) == 0
	                ? NULL
	                : "two.md differs");
}

static void
test_spec_change(void **state)
{
	char *rv[NKIDS];

	(void)state;
	change_fixture();
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	for (size_t i = 0; i < NKIDS; i++) {
		rv[i] = rv_of(KIDS[i].r, NS_CHANGE, KIDS[i].name);
	}
	/* The MCPServer's image: its Deployment, not its Service. */
	merge_patch(&R_MCP, NS_CHANGE, "mcp",
	        "{\"spec\":{\"deployment\":{\"image\":\"img:2\"}}}");
	optest_wait_obj(&F, &R_DEP, NS_CHANGE, "mcp", check_image, "img:2");
	assert_only_changed(rv, K_MCP_DEP);
	/* A persona's model: its instance only (spec 3.3 "Present"). */
	patch_team("gpt-5", "B task");
	optest_wait_field(&F, &R_INST, NS_CHANGE, "team-a",
	        "spec.agents.default.model", "gpt-5");
	assert_only_changed(rv, K_TEAM_A);
	/* A persona's schedule task: its schedule only. */
	patch_team("gpt-5", "B task v2");
	optest_wait_field(&F, &R_SCHED, NS_CHANGE, "team-b-schedule",
	        "spec.task", "B task v2");
	assert_only_changed(rv, K_TEAM_B_SCHED);
	/* A skill's content: the SkillPack's ConfigMap only. */
	merge_patch(&R_SKP, NS_CHANGE, "tools",
	        "{\"spec\":{\"skills\":[{\"name\":\"one\",\"content\":"
	        "\"Use one.\"},{\"name\":\"two\",\"content\":\"Use 2.\"}]}}");
	optest_wait_obj(&F, &R_CM, NS_CHANGE, "tools", check_two_md, "Use 2.");
	assert_only_changed(rv, K_TOOLS);
	/* A new channel: a new Deployment, the instance's other children
	 * (its memory ConfigMap) untouched. */
	merge_patch(&R_INST, NS_CHANGE, "solo",
	        "{\"spec\":{\"channels\":[{\"type\":\"telegram\"}]}}");
	wait_owned(&R_DEP, NS_CHANGE, "solo-channel-telegram",
	        "SympoziumInstance", "solo");
	assert_only_changed(rv, K_NONE);
	for (size_t i = 0; i < NKIDS; i++) {
		free(rv[i]);
	}
}

/* ---- 6. a schedule creates its run ---- */

static void
test_schedule_run(void **state)
{
	char cron[64];
	json_object *run, *s;
	const char *task;

	(void)state;
	create_instance(NS_SCHED, "inst");
	optest_wait_obj(&F, &R_CM, NS_SCHED, "inst-memory",
	        optest_check_present, NULL);
	daily_cron(cron, sizeof(cron));
	create(&R_SCHED, NS_SCHED,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"SympoziumSchedule\",\"metadata\":{\"name\":"
	                "\"nightly\"},\"spec\":{\"instanceRef\":\"inst\","
	                "\"schedule\":\"%s\",\"task\":\"Do the thing\","
	                "\"type\":\"sweep\"}}",
	                cron));
	wait_owned(
	        &R_RUN, NS_SCHED, "nightly-1", "SympoziumSchedule", "nightly");
	run = optest_get(&F, &R_RUN, NS_SCHED, "nightly-1");
	assert_string_equal(
	        jx_getv(run, "metadata", "labels", "sympozium.ai/schedule",
	                NULL) == NULL
	                ? ""
	                : json_object_get_string(jx_getv(run, "metadata",
	                        "labels", "sympozium.ai/schedule", NULL)),
	        "nightly");
	assert_string_equal(json_object_get_string(jx_getv(run, "metadata",
	                            "labels", "sympozium.ai/instance", NULL)),
	        "inst");
	assert_string_equal(json_object_get_string(jx_getv(run, "metadata",
	                            "labels", "sympozium.ai/type", NULL)),
	        "sweep");
	assert_string_equal(
	        jx_get_str(run, "spec.agentId"), "schedule-nightly");
	assert_string_equal(jx_get_str(run, "spec.instanceRef"), "inst");
	task = jx_get_str(run, "spec.task");
	assert_string_equal(task,
	        "## Memory Context\n" MEM_MD "\n\n## Task\nDo the thing");
	json_object_put(run);
	optest_wait_field(&F, &R_SCHED, NS_SCHED, "nightly",
	        "status.lastRunName", "nightly-1");
	s = optest_get(&F, &R_SCHED, NS_SCHED, "nightly");
	assert_string_equal(jx_get_str(s, "status.phase"), "Active");
	assert_int_equal(int_at(s, "status.totalRuns"), 1);
	assert_non_null(jx_get_str(s, "status.nextRunTime"));
	assert_non_null(jx_get_str(s, "status.lastRunTime"));
	json_object_put(s);
	/* The run completes on the emulated kubelet (empty log: no result);
	 * the schedule makes no second run. */
	optest_wait_field(&F, &R_RUN, NS_SCHED, "nightly-1", "status.phase",
	        "Succeeded");
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	assert_int_equal(count_labelled(&R_RUN, NS_SCHED,
	                         "sympozium.ai/schedule=nightly"),
	        1);
}

/* A schedule of instance "inst" in NS_SCHED; suspend: "true"/"false". */
static void
create_schedule(const char *name, const char *cron, const char *suspend)
{
	create(&R_SCHED, NS_SCHED,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"SympoziumSchedule\",\"metadata\":{\"name\":\"%s\"},"
	                "\"spec\":{\"instanceRef\":\"inst\",\"schedule\":"
	                "\"%s\",\"task\":\"Later\",\"suspend\":%s}}",
	                name, cron, suspend));
}

static const char *
check_invalid(json_object *o, const void *arg)
{
	json_object *c = jx_get(o, "status.conditions");

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	if (strcmp(jx_get_str(o, "status.phase") ?: "", "Error") != 0) {
		return ("status.phase is not Error");
	}
	for (size_t i = 0; c != NULL && i < json_object_array_length(c); i++) {
		json_object *x = json_object_array_get_idx(c, i);
		if (strcmp(jx_get_str(x, "type") ?: "", "Ready") == 0
		        && strcmp(jx_get_str(x, "status") ?: "", "False") == 0
		        && strcmp(jx_get_str(x, "reason") ?: "",
		                   "InvalidSchedule")
		                == 0) {
			return (NULL);
		}
	}
	return ("no Ready=False condition with reason InvalidSchedule");
}

/* A suspended schedule makes no run; resumed, it fires the missed tick at
 * once (spec 5.4 "missed schedules").  An invalid cron: phase Error with
 * a Ready=False condition (decision), no run. */
static void
test_schedule_suspend_invalid(void **state)
{
	char cron[64];

	(void)state;
	daily_cron(cron, sizeof(cron));
	create_schedule("paused", cron, "true");
	create_schedule("broken", "61 * * * *", "false");
	optest_wait_field(
	        &F, &R_SCHED, NS_SCHED, "paused", "status.phase", "Suspended");
	optest_wait_obj(&F, &R_SCHED, NS_SCHED, "broken", check_invalid, NULL);
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	assert_int_equal(count_labelled(&R_RUN, NS_SCHED,
	                         "sympozium.ai/schedule=paused"),
	        0);
	assert_int_equal(count_labelled(&R_RUN, NS_SCHED,
	                         "sympozium.ai/schedule=broken"),
	        0);
	merge_patch(&R_SCHED, NS_SCHED, "paused",
	        "{\"spec\":{\"suspend\":false}}");
	wait_owned(
	        &R_RUN, NS_SCHED, "paused-1", "SympoziumSchedule", "paused");
	optest_wait_field(
	        &F, &R_SCHED, NS_SCHED, "paused", "status.phase", "Active");
	optest_wait_field(
	        &F, &R_RUN, NS_SCHED, "paused-1", "status.phase", "Succeeded");
}

/* ---- 7. a PersonaPack stamps and tears down ---- */

static void
patch_crew(const char *extra)
{
	char cron[64];
	char *p;

	far_cron(cron, sizeof(cron));
	p = xasprintf("{\"spec\":{%s\"personas\":["
	              "{\"name\":\"x\",\"systemPrompt\":\"You are X.\","
	              "\"memory\":{\"enabled\":true,\"seeds\":[\"seed one\"]},"
	              "\"schedule\":{\"type\":\"heartbeat\",\"cron\":\"%s\","
	              "\"task\":\"X task\"}},"
	              "{\"name\":\"y\",\"systemPrompt\":\"You are Y.\","
	              "\"schedule\":{\"type\":\"sweep\",\"cron\":\"%s\","
	              "\"task\":\"Y task\"}}]}}",
	        extra, cron, cron);
	merge_patch(&R_PACK, NS_PACK, "crew", p);
	free(p);
}

static const char *
check_persona_label(json_object *o, const void *arg)
{
	json_object *l = jx_getv(
	        o, "metadata", "labels", "sympozium.ai/persona", NULL);
	json_object *p = jx_getv(
	        o, "metadata", "labels", "sympozium.ai/persona-pack", NULL);

	if (o == NULL) {
		return ("absent");
	}
	if (l == NULL || p == NULL || strcmp(json_object_get_string(l), arg)
	        || strcmp(json_object_get_string(p), "crew")) {
		return ("persona labels missing or wrong");
	}
	return (optest_check_owner(o,
	        &(const struct optest_owner) { "PersonaPack", "crew", NULL }));
}

static void
test_personapack_teardown(void **state)
{
	const int64_t two = 2, one = 1, zero = 0;

	(void)state;
	create(&R_PACK, NS_PACK,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"PersonaPack\",\"metadata\":{\"name\":\"crew\"},"
	                "\"spec\":{\"enabled\":true,\"personas\":[]}}"));
	patch_crew("");
	optest_wait_obj(&F, &R_PACK, NS_PACK, "crew", check_pack, &two);
	optest_wait_obj(
	        &F, &R_INST, NS_PACK, "crew-x", check_persona_label, "x");
	optest_wait_obj(
	        &F, &R_INST, NS_PACK, "crew-y", check_persona_label, "y");
	optest_wait_obj(&F, &R_SCHED, NS_PACK, "crew-x-schedule",
	        check_persona_label, "x");
	optest_wait_obj(&F, &R_SCHED, NS_PACK, "crew-y-schedule",
	        check_persona_label, "y");
	optest_wait_field(&F, &R_SCHED, NS_PACK, "crew-x-schedule",
	        "spec.instanceRef", "crew-x");
	optest_wait_obj(&F, &R_CM, NS_PACK, "crew-x-memory", check_memory,
	        "# Memory\n\n- seed one\n");

	/* An excluded persona loses its instance and schedule. */
	patch_crew("\"excludePersonas\":[\"y\"],");
	optest_wait_obj(
	        &F, &R_INST, NS_PACK, "crew-y", optest_check_absent, NULL);
	optest_wait_obj(&F, &R_SCHED, NS_PACK, "crew-y-schedule",
	        optest_check_absent, NULL);
	optest_wait_obj(&F, &R_PACK, NS_PACK, "crew", check_pack, &one);
	optest_wait_obj(
	        &F, &R_INST, NS_PACK, "crew-x", optest_check_present, NULL);

	/* Disabled: everything goes, the seed ConfigMap too. */
	merge_patch(
	        &R_PACK, NS_PACK, "crew", "{\"spec\":{\"enabled\":false}}");
	optest_wait_obj(
	        &F, &R_INST, NS_PACK, "crew-x", optest_check_absent, NULL);
	optest_wait_obj(&F, &R_SCHED, NS_PACK, "crew-x-schedule",
	        optest_check_absent, NULL);
	optest_wait_obj(&F, &R_CM, NS_PACK, "crew-x-memory",
	        optest_check_absent, NULL);
	optest_wait_obj(&F, &R_PACK, NS_PACK, "crew", check_pack, &zero);
	assert_int_equal(count_labelled(&R_INST, NS_PACK,
	                         "sympozium.ai/persona-pack=crew"),
	        0);
	assert_int_equal(count_labelled(&R_SCHED, NS_PACK,
	                         "sympozium.ai/persona-pack=crew"),
	        0);
}

/* Deleting an enabled pack: its seed ConfigMap is deleted by the
 * operator (spec 3.2 step 2), its instances and schedules by the garbage
 * collector (then the instances' finalizers run). */
static void
test_personapack_delete(void **state)
{
	char cron[64];

	(void)state;
	far_cron(cron, sizeof(cron));
	create(&R_PACK, NS_PACK,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"PersonaPack\",\"metadata\":{\"name\":\"duo\"},"
	                "\"spec\":{\"enabled\":true,\"personas\":[{\"name\":"
	                "\"z\",\"systemPrompt\":\"You are Z.\",\"memory\":{"
	                "\"enabled\":true,\"seeds\":[\"zed\"]},\"schedule\":{"
	                "\"type\":\"sweep\",\"cron\":\"%s\",\"task\":\"Z\"}}]}"
	                "}",
	                cron));
	wait_owned(&R_INST, NS_PACK, "duo-z", "PersonaPack", "duo");
	wait_owned(&R_SCHED, NS_PACK, "duo-z-schedule", "PersonaPack", "duo");
	optest_wait_obj(&F, &R_CM, NS_PACK, "duo-z-memory", check_memory,
	        "# Memory\n\n- zed\n");
	del_obj(&R_PACK, NS_PACK, "duo");
	optest_wait_obj(
	        &F, &R_PACK, NS_PACK, "duo", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_INST, NS_PACK, "duo-z", optest_check_absent, NULL);
	optest_wait_obj(&F, &R_SCHED, NS_PACK, "duo-z-schedule",
	        optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_CM, NS_PACK, "duo-z-memory", optest_check_absent, NULL);
	assert_true(
	        sd_deletes("/namespaces/" NS_PACK "/configmaps/duo-z-memory")
	        >= 1);
	assert_int_equal(
	        sd_deletes("/namespaces/" NS_PACK "/sympoziuminstances/duo-z"),
	        0);
}

/* ---- 8. a stale cache never says "not found" ---- */

/* Posts a kubesim fault rule (JSON); returns its id. */
static int
add_fault(const char *rule)
{
	struct ksim_resp *r = ksim_request(ksim_url(F.a.k), "POST",
	        "/_kubesim/faults", "application/json", rule, NULL, 10000);
	int64_t id = -1;

	if (r->code != 201 || jx_get_int(r->json, "id", &id) != 0) {
		fail_msg("fault rule %s: %ld %s", rule, r->code, r->body);
	}
	ksim_resp_free(r);
	return ((int)id);
}

static void
admin_post(const char *method, const char *path)
{
	struct ksim_resp *r = ksim_request(
	        ksim_url(F.a.k), method, path, NULL, NULL, NULL, 10000);

	if (r->code != 200) {
		fail_msg("%s %s: %ld %s", method, path, r->code, r->body);
	}
	ksim_resp_free(r);
}

static const char *
check_phase_set(json_object *o, const void *arg)
{
	(void)arg;
	return (jx_get_str(o, "status.phase") != NULL ? NULL : "no phase");
}

/*
 * The supervisor's SympoziumInstance watch is down (kubesim answers its
 * lists and watches 503, so the reflector backs off) when an instance and
 * then a run naming it are created: the cache misses the instance, and the
 * run must not fail with "instance not found" (spec 1.3 step 1 fails a run
 * for good).  The get is confirmed live (views.c), so the run starts.
 * Found by the long chaos run: a standby took over while its instance
 * watch was backing off.
 */
static void
test_stale_cache_get(void **state)
{
	char path[64];
	const char *miss;
	int id;

	(void)state;
	id = add_fault("{\"verbs\":[\"list\",\"watch\"],\"resource\":"
	               "\"sympoziuminstances\",\"code\":503}");
	admin_post("POST", "/_kubesim/close-watches");
	create_instance(NS_STALE, "in-stale");
	create_run(NS_STALE, "run-stale", "in-stale", NULL);
	miss = optest_poll(&F, &R_JOB, NS_STALE, "run-stale",
	        optest_check_present, NULL, NULL);
	snprintf(path, sizeof(path), "/_kubesim/faults/%d", id);
	admin_post("DELETE", path);
	if (miss != NULL) {
		json_object *run
		        = optest_get(&F, &R_RUN, NS_STALE, "run-stale");
		fail_msg("no Job for run-stale; the run: %s",
		        json_object_to_json_string(run));
	}
	optest_wait_field(
	        &F, &R_RUN, NS_STALE, "run-stale", "status.phase", "Running");
	/* the instance came from the API server, not from the cache */
	assert_true(
	        ksim_count_log(F.a.request_log, "get",
	                "/namespaces/" NS_STALE "/sympoziuminstances/in-stale",
	                UA_SD)
	        >= 1);
	/* the watch is back: the instance itself gets reconciled, before
	 * the steady state below */
	optest_wait_obj(
	        &F, &R_INST, NS_STALE, "in-stale", check_phase_set, NULL);
}

/* ---- 9. steady state ---- */

static void
test_steady_state(void **state)
{
	int before, after, skip, leases;

	(void)state;
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	skip = ksim_log_lines(F.a.request_log);
	before = sd_writes_to(NULL);
	leases = ksim_count_log(F.a.request_log, "PUT", "/leases", UA_SD);
	ksim_sleep_ms(STEADY_MS);
	after = sd_writes_to(NULL);
	if (after != before) {
		(void)ksim_writes_after(F.a.request_log, UA_SD, skip, true);
		fail_msg("%d write(s) by the supervisor in %d ms of steady "
		         "state; want 0",
		        after - before, STEADY_MS);
	}
	/* The leader kept renewing its Lease (retry period 2 s). */
	assert_true(ksim_count_log(F.a.request_log, "PUT", "/leases", UA_SD)
	        >= leases + 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_result),
		cmocka_unit_test(test_run_failed_pod),
		cmocka_unit_test(test_run_timeout),
		cmocka_unit_test(test_owner_delete_gc),
		cmocka_unit_test(test_owner_delete_finalizers),
		cmocka_unit_test(test_spec_change),
		cmocka_unit_test(test_schedule_run),
		cmocka_unit_test(test_schedule_suspend_invalid),
		cmocka_unit_test(test_personapack_teardown),
		cmocka_unit_test(test_personapack_delete),
		cmocka_unit_test(test_stale_cache_get),
		cmocka_unit_test(test_steady_state),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
