/*
 * test_postrun.c: AgentRuns with lifecycle.postRun hooks (spec
 * sympozium-controllers.md 1.7) under the whole operator (bin/sympoziumd
 * and its workers against bin/kubesim, whose Job and kubelet emulation run
 * the pods).  Expectations from upstream agentrun_controller.go at
 * 008266e: a run with a hook gets the workspace PVC <run>-workspace
 * (ensureWorkspacePVC), goes Running -> PostRunning with the Job
 * <run>-postrun (startPostRun) -> Succeeded with the agent's result once
 * that Job completes (reconcilePostRunning), and its PVC is deleted
 * (cleanupWorkspacePVC); a failing hook appends PostRunFailed and keeps
 * the agent's outcome (and our Events PostRunStarted and PostRunFailed
 * are recorded); a gated run gets its lifecycle Role and RoleBinding
 * (ensureLifecycleRBAC) and resolves with the verdict annotated while its
 * hook still runs (resolveGate); a run the upstream operator left in
 * PostRunning, with its postRun Job and PVC, continues to Succeeded.
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

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 20000
#define NS      "default"
#define GROUP   "sympozium.ai"
#define VERSION "v1alpha1"

static const struct kapi_res R_RUN = { GROUP, VERSION, "agentruns", true };
static const struct kapi_res R_INST
        = { GROUP, VERSION, "sympoziuminstances", true };
static const struct kapi_res R_JOB = { "batch", "v1", "jobs", true };
static const struct kapi_res R_PVC
        = { "", "v1", "persistentvolumeclaims", true };
static const struct kapi_res R_ROLE
        = { "rbac.authorization.k8s.io", "v1", "roles", true };
static const struct kapi_res R_RB
        = { "rbac.authorization.k8s.io", "v1", "rolebindings", true };

#define OK_LOG                                                                \
	"__SYMPOZIUM_RESULT__\n{\"status\":\"success\",\"response\":"         \
	"\"All done.\",\"metrics\":{\"inputTokens\":5,\"outputTokens\":"      \
	"6}}\n__SYMPOZIUM_END__\n"

/* What a gate hook needs to annotate its verdict (lifecycle RBAC). */
#define GATE_RBAC                                                             \
	",\"rbac\":[{\"apiGroups\":[\"sympozium.ai\"],\"resources\":"         \
	"[\"agentruns\"],\"verbs\":[\"get\",\"patch\"]}]"

static struct optest F;

static void
create(const struct kapi_res *r, json_object *o, json_object **out)
{
	optest_create_or_fail(&F, r, NS, o, out);
	json_object_put(o);
}

/* A run of instance "pr" with one hook "notify" (and a gate "judge"). */
static void
create_run(const char *name, bool gated, json_object **out)
{
	create(&R_RUN,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"AgentRun\",\"metadata\":{\"name\":\"%s\","
	                "\"labels\":"
	                "{\"sympozium.ai/instance\":\"pr\"}},\"spec\":{"
	                "\"instanceRef\":\"pr\",\"agentId\":\"e2e\","
	                "\"sessionKey\":\"s1\",\"task\":\"work\",\"model\":{"
	                "\"provider\":\"openai\",\"model\":\"gpt-4o\","
	                "\"authSecretRef\":\"\"},\"lifecycle\":{\"postRun\":[{"
	                "\"name\":\"notify\",\"image\":\"notify:e2e\"}%s]%s}}"
	                "}",
	                name,
	                gated ? ",{\"name\":\"judge\",\"image\":\"judge:e2e\","
	                        "\"gate\":true}"
	                      : "",
	                gated ? GATE_RBAC : ""),
	        out);
}

/* The rule of a run's agent pod or postRun pod. */
static json_object *
rule(const char *run, const char *component, const char *extra)
{
	json_object *log = json_object_new_string(OK_LOG);
	json_object *r = testutil_jsonf(
	        "{\"namespace\":\"" NS "\",\"labelSelector\":"
	        "\"sympozium.ai/agent-run=%s,sympozium.ai/component=%s\","
	        "\"logs\":{\"agent\":%s}%s}",
	        run, component, json_object_to_json_string(log), extra);

	json_object_put(log);
	return (r);
}

static void
kubelet_rules(void)
{
	json_object *rules = json_object_new_array();
	json_object *body = json_object_new_object();

	json_object_array_add(
	        rules, rule("pr-ok", "agent-run", ",\"runDuration\":\"2s\""));
	json_object_array_add(
	        rules, rule("pr-ok", "post-run", ",\"runDuration\":\"1s\""));
	json_object_array_add(rules,
	        rule("pr-hookfail", "agent-run",
	                ",\"runDuration\":\"500ms\""));
	json_object_array_add(rules,
	        rule("pr-hookfail", "post-run",
	                ",\"runDuration\":\"500ms\",\"exitCode\":1"));
	json_object_array_add(rules,
	        rule("pr-gate", "agent-run", ",\"runDuration\":\"500ms\""));
	json_object_array_add(rules,
	        rule("pr-gate", "post-run", ",\"runDuration\":\"120s\""));
	json_object_object_add(body, "rules", rules);
	optest_kubelet_rules(&F, json_object_to_json_string(body));
	json_object_put(body);
}

static json_object *
owned_by(const char *kind, const char *name, const char *run, const char *uid,
        const char *component)
{
	return (testutil_jsonf(
	        "{\"metadata\":{\"name\":\"%s\",\"labels\":{"
	        "\"sympozium.ai/agent-run\":\"%s\",\"sympozium.ai/"
	        "component\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
	        "\"sympozium.ai/v1alpha1\",\"kind\":\"AgentRun\",\"name\":"
	        "\"%s\",\"uid\":\"%s\",\"controller\":true,"
	        "\"blockOwnerDeletion\":true}]},\"kind\":\"%s\"}",
	        name, run, component, run, uid, kind));
}

/* A run as the upstream operator leaves it after startPostRun: status
 * PostRunning with exitCode, result and postRunJobName, its postRun Job
 * (which kubesim runs to completion) and its workspace PVC. */
static void
create_left(const char *name)
{
	json_object *run = NULL, *o, *out = NULL;
	struct kapi_err e = KAPI_ERR_INIT;
	char *job = xasprintf("%s-postrun", name);
	char *pvc = xasprintf("%s-workspace", name);
	const char *uid;

	create_run(name, false, &run);
	uid = jx_get_str(run, "metadata.uid");
	o = owned_by("PersistentVolumeClaim", pvc, name, uid, "workspace");
	jx_set_path(o, "apiVersion", json_object_new_string("v1"));
	jx_set_path(o, "spec",
	        json_tokener_parse("{\"accessModes\":[\"ReadWriteOnce\"],"
	                           "\"resources\":{\"requests\":{\"storage\":"
	                           "\"1Gi\"}}}"));
	create(&R_PVC, o, NULL);
	o = owned_by("Job", job, name, uid, "post-run");
	jx_set_path(o, "apiVersion", json_object_new_string("batch/v1"));
	jx_set_path(o, "spec",
	        testutil_jsonf(
	                "{\"backoffLimit\":0,\"template\":{\"metadata\":{"
	                "\"labels\":{\"sympozium.ai/agent-run\":\"%s\","
	                "\"sympozium.ai/component\":\"post-run\"}},\"spec\":{"
	                "\"restartPolicy\":\"Never\",\"containers\":[{"
	                "\"name\":\"done\",\"image\":\"busybox:1.36\"}]}}}",
	                name));
	create(&R_JOB, o, NULL);
	jx_set_path(run, "metadata.finalizers",
	        json_tokener_parse("[\"sympozium.ai/agentrun-finalizer\"]"));
	assert_int_equal(
	        kapi_update(F.a.c, &R_RUN, NS, run, &out, &e), KAPI_OK);
	json_object_put(run);
	run = out;
	out = NULL;
	jx_set_path(run, "status",
	        testutil_jsonf("{\"phase\":\"PostRunning\",\"jobName\":\"%s\","
	                       "\"postRunJobName\":\"%s\",\"exitCode\":0,"
	                       "\"result\":\"kept\",\"startedAt\":\"%s\"}",
	                name, job,
	                jx_get_str(run, "metadata.creationTimestamp")));
	assert_int_equal(
	        kapi_update_status(F.a.c, &R_RUN, NS, run, &out, &e), KAPI_OK);
	kapi_err_fini(&e);
	json_object_put(out);
	json_object_put(run);
	free(job);
	free(pvc);
}

static int
setup(void **state)
{
	*state = &F;
	if (optest_start(&F, "test-postrun", NULL, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":"
	                       "{\"name\":\"pr\"},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}}}}"),
	        NULL);
	kubelet_rules();
	/* before the operator starts: what upstream left behind */
	create_left("pr-left");
	optest_sd_start(&F, 0, 0, NULL);
	return (0);
}

static const char *
check_phase(json_object *obj, const void *arg)
{
	const char *p = jx_get_str(obj, "status.phase");

	return (p != NULL && strcmp(p, arg) == 0 ? NULL : "phase");
}

/* Running -> PostRunning -> Succeeded; the PVC made, then deleted. */
static void
test_postrun_succeeds(void **state)
{
	const struct optest_owner own = { "AgentRun", "pr-ok", NULL };
	json_object *run;

	(void)state;
	create_run("pr-ok", false, NULL);
	optest_wait_obj(
	        &F, &R_PVC, NS, "pr-ok-workspace", optest_check_owner, &own);
	optest_wait_obj(&F, &R_RUN, NS, "pr-ok", check_phase, "Running");
	optest_wait_obj(&F, &R_RUN, NS, "pr-ok", check_phase, "PostRunning");
	optest_wait_obj(
	        &F, &R_JOB, NS, "pr-ok-postrun", optest_check_owner, &own);
	optest_wait_field(
	        &F, &R_RUN, NS, "pr-ok", "status.phase", "Succeeded");
	run = optest_get(&F, &R_RUN, NS, "pr-ok");
	assert_string_equal(jx_get_str(run, "status.result"), "All done.");
	assert_string_equal(
	        jx_get_str(run, "status.postRunJobName"), "pr-ok-postrun");
	assert_int_equal(
	        json_object_get_int(jx_get(run, "status.exitCode")), 0);
	assert_int_equal(json_object_get_int(jx_get(
	                         run, "status.tokenUsage.outputTokens")),
	        6);
	assert_null(jx_get(run, "status.conditions"));
	json_object_put(run);
	optest_wait_obj(
	        &F, &R_PVC, NS, "pr-ok-workspace", optest_check_absent, NULL);
}

/* The number of Events about run with reason, once there is one (the
 * supervisor sends them after the status write), waiting up to
 * WAIT_MS. */
static size_t
events(const char *run, const char *reason)
{
	size_t n = 0;

	for (int waited = 0; n == 0 && waited < WAIT_MS; waited += 100) {
		json_object *ev = optest_events(&F, NS, run, reason);
		n = json_object_array_length(ev);
		json_object_put(ev);
		if (n == 0) {
			ksim_sleep_ms(100);
		}
	}
	return (n);
}

/* A failing hook: PostRunFailed appended, the agent's success kept. */
static void
test_hook_fails(void **state)
{
	json_object *run;

	(void)state;
	create_run("pr-hookfail", false, NULL);
	optest_wait_field(
	        &F, &R_RUN, NS, "pr-hookfail", "status.phase", "Succeeded");
	run = optest_get(&F, &R_RUN, NS, "pr-hookfail");
	assert_string_equal(jx_get_str(run, "status.result"), "All done.");
	assert_string_equal(jx_get_str(run, "status.conditions.0.type") ?: "",
	        "PostRunFailed");
	assert_string_equal(
	        jx_get_str(run, "status.conditions.0.reason") ?: "",
	        "PostRunJobFailed");
	json_object_put(run);
	optest_wait_obj(&F, &R_PVC, NS, "pr-hookfail-workspace",
	        optest_check_absent, NULL);
	/* our Events (docs/observability.md) */
	assert_int_equal(events("pr-hookfail", "PostRunStarted"), 1);
	assert_int_equal(events("pr-hookfail", "PostRunFailed"), 1);
}

/* The gate: its lifecycle RBAC (ensureLifecycleRBAC: Role and
 * RoleBinding sympozium-lifecycle-<run>, within the supervisor's bounds);
 * a verdict annotated while the hook runs ends the Job and rewrites the
 * result. */
static void
test_gate_verdict(void **state)
{
	const struct optest_owner own = { "AgentRun", "pr-gate", NULL };
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *run, *role;

	(void)state;
	create_run("pr-gate", true, NULL);
	optest_wait_obj(&F, &R_ROLE, NS, "sympozium-lifecycle-pr-gate",
	        optest_check_owner, &own);
	optest_wait_obj(&F, &R_RB, NS, "sympozium-lifecycle-pr-gate",
	        optest_check_owner, &own);
	role = optest_get(&F, &R_ROLE, NS, "sympozium-lifecycle-pr-gate");
	assert_string_equal(json_object_get_string(jx_getv(role, "metadata",
	                            "labels", "sympozium.ai/component", NULL)),
	        "lifecycle");
	assert_string_equal(
	        jx_get_str(role, "rules.0.resources.0") ?: "", "agentruns");
	json_object_put(role);
	optest_wait_obj(&F, &R_RUN, NS, "pr-gate", check_phase, "PostRunning");
	optest_wait_obj(
	        &F, &R_JOB, NS, "pr-gate-postrun", optest_check_present, NULL);
	assert_int_equal(
	        kapi_patch(F.a.c, &R_RUN, NS, "pr-gate", KAPI_PATCH_MERGE,
	                "{\"metadata\":{\"annotations\":{\"sympozium.ai/"
	                "gate-verdict\":\"{\\\"action\\\":\\\"rewrite\\\","
	                "\\\"response\\\":\\\"redacted\\\"}\"}}}",
	                NULL, false, NULL, &e),
	        KAPI_OK);
	kapi_err_fini(&e);
	optest_wait_field(
	        &F, &R_RUN, NS, "pr-gate", "status.phase", "Succeeded");
	run = optest_get(&F, &R_RUN, NS, "pr-gate");
	assert_string_equal(jx_get_str(run, "status.result"), "redacted");
	assert_string_equal(
	        jx_get_str(run, "status.gateVerdict"), "rewritten");
	json_object_put(run);
	optest_wait_obj(
	        &F, &R_JOB, NS, "pr-gate-postrun", optest_check_absent, NULL);
}

/* The run upstream left in PostRunning continues instead of failing. */
static void
test_taken_over(void **state)
{
	json_object *run;

	(void)state;
	optest_wait_field(
	        &F, &R_RUN, NS, "pr-left", "status.phase", "Succeeded");
	run = optest_get(&F, &R_RUN, NS, "pr-left");
	assert_string_equal(jx_get_str(run, "status.result"), "kept");
	assert_null(jx_get(run, "status.error"));
	json_object_put(run);
	optest_wait_obj(&F, &R_PVC, NS, "pr-left-workspace",
	        optest_check_absent, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_postrun_succeeds),
		cmocka_unit_test(test_hook_fails),
		cmocka_unit_test(test_gate_verdict),
		cmocka_unit_test(test_taken_over),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
