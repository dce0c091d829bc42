/*
 * test_agent_sandbox.c: agent-sandbox AgentRuns under the whole operator
 * (bin/sympoziumd and its workers against bin/kubesim).  Expectations
 * from upstream internal/controller/agentrun_sandbox.go at 008266e
 * (reconcilePendingAgentSandbox, buildSandboxCR, buildSandboxClaimCR,
 * reconcileRunningAgentSandbox, refineSandboxPhaseFromPod,
 * CheckAgentSandboxCRDs) and cmd/controller/main.go (the start-up check).
 *
 * Group 1, the agent-sandbox CRDs served (our minimal fixtures in
 * tests/integration/data/agent-sandbox-crds, loaded before sympoziumd
 * starts): a run with agentSandbox.enabled gets its Sandbox sb-<run>
 * (owned, labelled, runtimeClassName), no Job; the test plays the
 * agent-sandbox controller: the Ready condition, then the pod of the
 * Sandbox's name from its template, whose result ends the run Succeeded;
 * a failed pod fails the run with the Ready condition's message; a
 * warm-pool run gets its SandboxClaim sbc-<run> and completes on the
 * Sandbox and pod of that name.  Group 2, the CRDs absent: such a run
 * fails with upstream's message, and a Job run still completes (the
 * unserved watch holds nothing up).
 *
 * Every wait is bounded (WAIT_MS).  Only the pids this test forked are
 * signalled.
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

#define WAIT_MS 25000
#define NS      "default"
#define CRD_DIR "tests/integration/data/agent-sandbox-crds"
#define ABSENT                                                                \
	"agent-sandbox mode requires dynamic client (agent-sandbox CRDs "     \
	"not available)"

static const struct kapi_res R_RUN
        = { "sympozium.ai", "v1alpha1", "agentruns", true };
static const struct kapi_res R_INST
        = { "sympozium.ai", "v1alpha1", "sympoziuminstances", true };
static const struct kapi_res R_SBX
        = { "agents.x-k8s.io", "v1alpha1", "sandboxes", true };
static const struct kapi_res R_CLAIM
        = { "agents.x-k8s.io", "v1alpha1", "sandboxclaims", true };
static const struct kapi_res R_POD = { "", "v1", "pods", true };
static const struct kapi_res R_JOB = { "batch", "v1", "jobs", true };

static struct optest F;

static void
create(const struct kapi_res *r, json_object *o)
{
	optest_create_or_fail(&F, r, NS, o, NULL);
	json_object_put(o);
}

/* An AgentRun of instance alice; extra is spliced into its spec. */
static void
create_run(const char *name, const char *extra)
{
	create(&R_RUN,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"AgentRun\",\"metadata\":{\"name\":"
	                       "\"%s\"},\"spec\":{\"instanceRef\":\"alice\","
	                       "\"agentId\":\"e2e\",\"sessionKey\":\"s1\","
	                       "\"task\":\"t\",\"model\":{\"provider\":"
	                       "\"openai\",\"model\":\"gpt-4o\","
	                       "\"authSecretRef\":\"\"}%s}}",
	                name, extra));
}

static int
start(const char *name, bool crds)
{
	if (optest_start(&F, name, NULL, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	if (crds) {
		assert_int_equal(ksim_apply_crds(F.a.c, CRD_DIR), 3);
	}
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":"
	                       "{\"name\":\"alice\"},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}}}}"));
	optest_sd_start(&F, 0, 0, NULL);
	return (0);
}

static int
setup_served(void **state)
{
	*state = &F;
	return (start("test-agent-sandbox", true));
}

static int
setup_absent(void **state)
{
	*state = &F;
	return (start("test-agent-sandbox-absent", false));
}

/* Sets the Sandbox's Ready condition (the agent-sandbox controller's
 * part). */
static void
set_ready(const char *name, const char *status, const char *message)
{
	json_object *sb = optest_get(&F, &R_SBX, NS, name), *out = NULL;
	struct kapi_err e = KAPI_ERR_INIT;

	assert_non_null(sb);
	jx_set_path(sb, "status",
	        testutil_jsonf("{\"conditions\":[{\"type\":\"Ready\","
	                       "\"status\":\"%s\",\"reason\":\"Test\","
	                       "\"message\":\"%s\"}]}",
	                status, message));
	assert_int_equal(
	        kapi_update_status(F.a.c, &R_SBX, NS, sb, &out, &e), KAPI_OK);
	kapi_err_fini(&e);
	json_object_put(out);
	json_object_put(sb);
}

/* The pod of the Sandbox called name, from template (the Sandbox's
 * spec.podTemplate; borrowed), exiting with code after a short run with
 * log as the agent container's log. */
static void
create_pod(const char *name, json_object *template, int code, const char *log)
{
	json_object *pod = testutil_jsonf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	        "\"name\":\"%s\",\"annotations\":{"
	        "\"kubesim.sympozium.ai/run-duration\":\"300ms\","
	        "\"kubesim.sympozium.ai/exit-code\":\"%d\"}}}",
	        name, code);

	jx_setv(pod, jx_copy(jx_get(template, "metadata.labels")), "metadata",
	        "labels", NULL);
	jx_setv(pod, jx_copy(jx_get(template, "spec")), "spec", NULL);
	jx_setv(pod, json_object_new_string(log), "metadata", "annotations",
	        "kubesim.sympozium.ai/log.agent", NULL);
	create(&R_POD, pod);
}

#define RESULT_LOG                                                            \
	"__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":\"%s\"}"    \
	"__SYMPOZIUM_END__\n"

/* A run asking for the Sandbox backend gets the Sandbox sb-<run>, no
 * Job; Ready=True keeps it Running; the pod's success completes it with
 * the result of its agent log. */
static void
test_sandbox_run(void **state)
{
	const struct optest_owner own = { "AgentRun", "sbx", NULL };
	json_object *sb, *run;
	char *log = xasprintf(RESULT_LOG, "from the sandbox");

	(void)state;
	create_run("sbx",
	        ",\"agentSandbox\":{\"enabled\":true,\"runtimeClass\":"
	        "\"gvisor\"}");
	optest_wait_field(
	        &F, &R_RUN, NS, "sbx", "status.sandboxName", "sb-sbx");
	optest_wait_field(&F, &R_RUN, NS, "sbx", "status.phase", "Running");
	optest_wait_obj(&F, &R_SBX, NS, "sb-sbx", optest_check_owner, &own);
	sb = optest_get(&F, &R_SBX, NS, "sb-sbx");
	assert_string_equal(
	        json_object_get_string(jx_getv(sb, "metadata", "labels",
	                "sympozium.ai/agent-sandbox", NULL)),
	        "true");
	assert_string_equal(
	        jx_get_str(sb, "spec.podTemplate.spec.runtimeClassName"),
	        "gvisor");
	assert_string_equal(json_object_get_string(json_object_object_get(
	                            json_object_array_get_idx(
	                                    jx_get(sb,
	                                            "spec.podTemplate.spec."
	                                            "containers"),
	                                    0),
	                            "name")),
	        "agent");
	assert_null(optest_get(&F, &R_JOB, NS, "sbx"));
	/* Ready: still Running, its pod named after it */
	set_ready("sb-sbx", "True", "ready");
	optest_wait_field(&F, &R_RUN, NS, "sbx", "status.podName", "sb-sbx");
	run = optest_get(&F, &R_RUN, NS, "sbx");
	assert_string_equal(jx_get_str(run, "status.phase"), "Running");
	json_object_put(run);
	create_pod("sb-sbx", jx_get(sb, "spec.podTemplate"), 0, log);
	optest_wait_field(&F, &R_RUN, NS, "sbx", "status.phase", "Succeeded");
	optest_wait_field(
	        &F, &R_RUN, NS, "sbx", "status.result", "from the sandbox");
	json_object_put(sb);
	free(log);
}

/* A failed pod without an error in its log: the Ready condition's
 * message is the run's error. */
static void
test_sandbox_fails(void **state)
{
	json_object *sb;

	(void)state;
	create_run("sbf", ",\"agentSandbox\":{\"enabled\":true}");
	optest_wait_field(
	        &F, &R_RUN, NS, "sbf", "status.sandboxName", "sb-sbf");
	sb = optest_get(&F, &R_SBX, NS, "sb-sbf");
	assert_non_null(sb);
	set_ready("sb-sbf", "False", "sandbox runtime crashed");
	create_pod("sb-sbf", jx_get(sb, "spec.podTemplate"), 1, "no marker\n");
	optest_wait_field(&F, &R_RUN, NS, "sbf", "status.phase", "Failed");
	optest_wait_field(&F, &R_RUN, NS, "sbf", "status.error",
	        "sandbox runtime crashed");
	json_object_put(sb);
}

/* A warm-pool run gets the SandboxClaim sbc-<run> naming the pool, no
 * Sandbox of its own, and runs on the Sandbox and pod of the claim's
 * name (the agent-sandbox controller's, played here; made before the run
 * as upstream reads that Sandbox on the pass right after the claim). */
static void
test_claim_run(void **state)
{
	const struct optest_owner own = { "AgentRun", "wp", NULL };
	json_object *cl, *tmpl, *run;
	char *log = xasprintf(RESULT_LOG, "from the pool");

	(void)state;
	tmpl = json_tokener_parse(
	        "{\"metadata\":{\"labels\":{\"sympozium.ai/agent-run\":"
	        "\"wp\"}},\"spec\":{\"restartPolicy\":\"Never\","
	        "\"containers\":[{\"name\":\"agent\",\"image\":\"x\"}]}}");
	create(&R_SBX,
	        testutil_jsonf("{\"apiVersion\":\"agents.x-k8s.io/v1alpha1\","
	                       "\"kind\":\"Sandbox\",\"metadata\":{\"name\":"
	                       "\"sbc-wp\"},\"spec\":{\"podTemplate\":%s}}",
	                json_object_to_json_string(tmpl)));
	set_ready("sbc-wp", "True", "claimed");
	create_run("wp",
	        ",\"agentSandbox\":{\"enabled\":true,\"warmPoolRef\":"
	        "\"wp-alice\"}");
	optest_wait_field(
	        &F, &R_RUN, NS, "wp", "status.sandboxClaimName", "sbc-wp");
	optest_wait_field(&F, &R_RUN, NS, "wp", "status.podName", "sbc-wp");
	optest_wait_obj(&F, &R_CLAIM, NS, "sbc-wp", optest_check_owner, &own);
	cl = optest_get(&F, &R_CLAIM, NS, "sbc-wp");
	assert_string_equal(
	        jx_get_str(cl, "spec.warmPoolRef.name"), "wp-alice");
	assert_null(optest_get(&F, &R_SBX, NS, "sb-wp"));
	run = optest_get(&F, &R_RUN, NS, "wp");
	assert_string_equal(jx_get_str(run, "status.phase"), "Running");
	json_object_put(run);
	create_pod("sbc-wp", tmpl, 0, log);
	optest_wait_field(&F, &R_RUN, NS, "wp", "status.phase", "Succeeded");
	optest_wait_field(
	        &F, &R_RUN, NS, "wp", "status.result", "from the pool");
	json_object_put(cl);
	json_object_put(tmpl);
	free(log);
}

/* A claim whose Sandbox does not exist when the run is next checked
 * fails at once (upstream reconcileRunningAgentSandbox: no grace). */
static void
test_claim_without_sandbox(void **state)
{
	(void)state;
	create_run("wp2",
	        ",\"agentSandbox\":{\"enabled\":true,\"warmPoolRef\":"
	        "\"wp-alice\"}");
	optest_wait_field(&F, &R_RUN, NS, "wp2", "status.phase", "Failed");
	optest_wait_field(&F, &R_RUN, NS, "wp2", "status.error",
	        "sandbox CR \"sbc-wp2\" not found");
}

static void
test_detected(void **state)
{
	(void)state;
	assert_true(sdproc_log_wait(&F.sd[0],
	        "agent-sandbox: CRDs served (agents.x-k8s.io/v1alpha1)", 1,
	        WAIT_MS));
}

/* Without the CRDs: upstream's failure, nothing of the group written;
 * a Job run goes through. */
static void
test_absent(void **state)
{
	(void)state;
	assert_true(sdproc_log_wait(&F.sd[0],
	        "agent-sandbox: CRDs (agents.x-k8s.io/v1alpha1) not served", 1,
	        WAIT_MS));
	create_run("nosbx", ",\"agentSandbox\":{\"enabled\":true}");
	optest_wait_field(&F, &R_RUN, NS, "nosbx", "status.phase", "Failed");
	optest_wait_field(&F, &R_RUN, NS, "nosbx", "status.error", ABSENT);
	create_run("plain", "");
	optest_wait_field(&F, &R_RUN, NS, "plain", "status.jobName", "plain");
	optest_wait_field(
	        &F, &R_RUN, NS, "plain", "status.phase", "Succeeded");
}

int
main(void)
{
	const struct CMUnitTest served[] = {
		cmocka_unit_test(test_detected),
		cmocka_unit_test(test_sandbox_run),
		cmocka_unit_test(test_sandbox_fails),
		cmocka_unit_test(test_claim_run),
		cmocka_unit_test(test_claim_without_sandbox),
		cmocka_unit_test(optest_test_sigterm),
	};
	const struct CMUnitTest absent[] = {
		cmocka_unit_test(test_absent),
		cmocka_unit_test(optest_test_sigterm),
	};
	int rc = cmocka_run_group_tests_name(
	        "served", served, setup_served, optest_teardown);

	memset(&F, 0, sizeof(F));
	return (rc
	        + cmocka_run_group_tests_name(
	                "absent", absent, setup_absent, optest_teardown));
}
