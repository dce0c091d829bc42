/*
 * test_takeover_all.c: the operator started on a namespace that
 * upstream's operator (008266e) has brought to rest, for every kind whose
 * resting state is covered here (test_takeover.c covers MCPServer).  The
 * fixtures are built below, in C, from upstream's
 * internal/controller/ Go files (each says which function it comes from),
 * before any sympoziumd runs; kubesim runs only its gc and Deployment
 * loops so the Jobs and pods stay exactly as made.  Then (1) a --shadow
 * sympoziumd must list no pending write, and (2) a normal sympoziumd must
 * send only the writes upstream's next reconcile would also send: no
 * create (so no AlreadyExists), no delete, runs stay in their phase.
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
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 60000
#define UA      "sympoziumd"
#define NS      "tkall"
#define API     "sympozium.ai/v1alpha1"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_PVC
        = { "", "v1", "persistentvolumeclaims", true };
static const struct kapi_res R_POD = { "", "v1", "pods", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_JOB = { "batch", "v1", "jobs", true };
static const struct kapi_res R_SKP
        = { "sympozium.ai", "v1alpha1", "skillpacks", true };
static const struct kapi_res R_POL
        = { "sympozium.ai", "v1alpha1", "sympoziumpolicies", true };
static const struct kapi_res R_INST
        = { "sympozium.ai", "v1alpha1", "sympoziuminstances", true };
static const struct kapi_res R_RUN
        = { "sympozium.ai", "v1alpha1", "agentruns", true };

static struct optest F;
static char now_ts[32]; /* RFC 3339, when the fixtures were made */

/* Creates o (put) with status st (put, may be NULL) through the status
 * subresource, as upstream's Status().Update/Patch leaves it.  The
 * created object's uid into uid (may be NULL). */
static void
make(const struct kapi_res *r, json_object *o, json_object *st, char *uid)
{
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *out = NULL, *out2 = NULL;

	if (optest_create(&F, r, NS, o, &out, &e) != KAPI_OK) {
		fail_msg("create %s %s: %s", r->plural,
		        json_object_to_json_string(o),
		        e.message != NULL ? e.message : "?");
	}
	json_object_put(o);
	if (uid != NULL) {
		snprintf(uid, 64, "%s", jx_get_str(out, "metadata.uid") ?: "");
	}
	if (st != NULL) {
		jx_set_path(out, "status", st);
		if (kapi_update_status(F.a.c, r, NS, out, &out2, &e)
		        != KAPI_OK) {
			fail_msg("status %s: %s", r->plural,
			        e.message != NULL ? e.message : "?");
		}
	}
	kapi_err_fini(&e);
	json_object_put(out2);
	json_object_put(out);
}

/* controllerutil.SetControllerReference's owner reference */
static char *
owner(const char *kind, const char *name, const char *uid)
{
	return (xasprintf("\"ownerReferences\":[{\"apiVersion\":\"%s\","
	                  "\"kind\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\","
	                  "\"controller\":true,\"blockOwnerDeletion\":true}]",
	        strcmp(kind, "Job") == 0 ? "batch/v1" : API, kind, name, uid));
}

/* skillpack_controller.go Reconcile (finalizer, status Ready, name,
 * skill count) and reconcileConfigMap (the ConfigMap named as the pack,
 * its two labels, "<skill>.md" keys with the description header). */
static void
fixture_skillpack(void)
{
	char uid[64];
	char *own;

	make(&R_SKP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"" API "\",\"kind\":"
	                "\"SkillPack\",\"metadata\":{\"name\":\"tools\","
	                "\"finalizers\":[\"sympozium.ai/"
	                "skillpack-finalizer\"]},\"spec\":{\"skills\":["
	                "{\"name\":\"grep\",\"description\":\"Search\","
	                "\"content\":\"Use grep.\"}]}}"),
	        testutil_jsonf("{\"phase\":\"Ready\",\"configMapName\":"
	                       "\"tools\",\"skillCount\":1}"),
	        uid);
	own = owner("SkillPack", "tools", uid);
	make(&R_CM,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                       "\"metadata\":{\"name\":\"tools\",\"labels\":{"
	                       "\"sympozium.ai/component\":\"skillpack\","
	                       "\"sympozium.ai/skillpack\":\"tools\"},%s},"
	                       "\"data\":{\"grep.md\":\"# grep\\n\\n> Search"
	                       "\\n\\nUse grep.\"}}",
	                own),
	        NULL, NULL);
	free(own);
}

/* sympoziumpolicy_controller.go Reconcile: status.boundInstances is the
 * number of instances whose spec.policyRef names it (one: "inst"). */
static void
fixture_policy(void)
{
	make(&R_POL,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumPolicy\",\"metadata\":{\"name\":"
	                       "\"pol\"},\"spec\":{\"toolGating\":{"
	                       "\"defaultAction\":\"allow\"}}}"),
	        testutil_jsonf("{\"boundInstances\":1}"), NULL);
}

/* The memory labels upstream puts on the memory Deployment, its pods and
 * Service (sympoziuminstance_controller.go reconcileMemoryDeployment). */
#define MEM_LABELS                                                            \
	"{\"sympozium.ai/component\":\"memory\","                             \
	"\"sympozium.ai/instance\":\"inst\"}"

/* sympoziuminstance_controller.go reconcileMemoryDeployment: the
 * Deployment "<inst>-memory" (Recreate, one replica, container
 * memory-server of <registry>/skill-memory:<tag>, defaults
 * ghcr.io/sympozium-ai/sympozium and latest, port http 8080, the two
 * env vars, the memory-db PVC at /data, fsGroup 1000) and its Service. */
static void
fixture_memory_server(const char *own)
{
	make(&R_DEP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	                "\"metadata\":{\"name\":\"inst-memory\",\"labels\":"
	                "" MEM_LABELS ",%s},\"spec\":{\"replicas\":1,"
	                "\"strategy\":{\"type\":\"Recreate\"},\"selector\":{"
	                "\"matchLabels\":" MEM_LABELS "},\"template\":{"
	                "\"metadata\":{\"labels\":" MEM_LABELS "},\"spec\":{"
	                "\"securityContext\":{\"fsGroup\":1000},"
	                "\"containers\":[{\"name\":\"memory-server\","
	                "\"image\":\"ghcr.io/sympozium-ai/sympozium/"
	                "skill-memory:latest\",\"imagePullPolicy\":"
	                "\"IfNotPresent\",\"ports\":[{\"name\":\"http\","
	                "\"containerPort\":8080,\"protocol\":\"TCP\"}],"
	                "\"env\":[{\"name\":\"MEMORY_DB_PATH\",\"value\":"
	                "\"/data/memory.db\"},{\"name\":\"MEMORY_PORT\","
	                "\"value\":\"8080\"}],\"volumeMounts\":[{\"name\":"
	                "\"memory-db\",\"mountPath\":\"/data\"}]}],"
	                "\"volumes\":[{\"name\":\"memory-db\","
	                "\"persistentVolumeClaim\":{\"claimName\":"
	                "\"inst-memory-db\"}}]}}}}",
	                own),
	        NULL, NULL);
	make(&R_SVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                       "\"metadata\":{\"name\":\"inst-memory\","
	                       "\"labels\":" MEM_LABELS ",%s},\"spec\":{"
	                       "\"selector\":" MEM_LABELS ",\"ports\":[{"
	                       "\"name\":\"http\",\"port\":8080,"
	                       "\"targetPort\":8080,\"protocol\":\"TCP\"}]}}",
	                own),
	        NULL, NULL);
}

/* sympoziuminstance_controller.go Reconcile (finalizer
 * sympozium.ai/finalizer; status phase Running as no run is Serving,
 * activeAgentPods the one Running run, no channels so no
 * status.channels), reconcileMemoryConfigMap ("<inst>-memory", labels
 * instance and component memory, MEMORY.md's initial text),
 * reconcileMemoryPVC ("<inst>-memory-db", component memory-db, RWO 1Gi)
 * and reconcileMemoryDeployment (the "memory" SkillPack ref). */
static void
fixture_instance(void)
{
	char uid[64];
	char *own;

	make(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumInstance\",\"metadata\":{\"name\":"
	                       "\"inst\",\"finalizers\":[\"sympozium.ai/"
	                       "finalizer\"]},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}},"
	                       "\"policyRef\":\"pol\",\"skills\":[{"
	                       "\"skillPackRef\":\"memory\"}],\"memory\":{"
	                       "\"enabled\":true}}}"),
	        testutil_jsonf(
	                "{\"phase\":\"Running\",\"activeAgentPods\":1}"),
	        uid);
	own = owner("SympoziumInstance", "inst", uid);
	make(&R_CM,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                       "\"metadata\":{\"name\":\"inst-memory\","
	                       "\"labels\":{\"sympozium.ai/instance\":"
	                       "\"inst\",\"sympozium.ai/component\":"
	                       "\"memory\"},%s},\"data\":{\"MEMORY.md\":"
	                       "\"# Agent Memory\\n\\nNo memories recorded "
	                       "yet.\\n\"}}",
	                own),
	        NULL, NULL);
	make(&R_PVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"PersistentVolumeClaim\",\"metadata\":{"
	                       "\"name\":\"inst-memory-db\",\"labels\":{"
	                       "\"sympozium.ai/instance\":\"inst\","
	                       "\"sympozium.ai/component\":\"memory-db\"},%s},"
	                       "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
	                       "\"resources\":{\"requests\":{\"storage\":"
	                       "\"1Gi\"}}}}",
	                own),
	        NULL, NULL);
	fixture_memory_server(own);
	free(own);
}

/* agentrun_controller.go buildJob: the labels of the Job and its pods */
#define RUN_LABELS_FMT                                                        \
	"{\"sympozium.ai/agent-run\":\"%s\",\"sympozium.ai/instance\":"       \
	"\"inst\",\"sympozium.ai/component\":\"agent-run\","                  \
	"\"app.kubernetes.io/part-of\":\"sympozium\","                        \
	"\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}"

/* An AgentRun of instance inst (the instance label is the one
 * countActiveAgentPods and pruneOldRuns select on), its status st. */
static void
make_run(const char *name, bool finalizer, json_object *st, char *uid)
{
	make(&R_RUN,
	        testutil_jsonf(
	                "{\"apiVersion\":\"" API "\",\"kind\":"
	                "\"AgentRun\",\"metadata\":{\"name\":\"%s\","
	                "\"labels\":{\"sympozium.ai/instance\":"
	                "\"inst\"}%s},\"spec\":{\"instanceRef\":"
	                "\"inst\",\"agentId\":\"default\","
	                "\"sessionKey\":\"s-%s\",\"task\":\"hello\","
	                "\"model\":{\"provider\":\"openai\",\"model\":"
	                "\"gpt-4o\",\"authSecretRef\":\"openai-key\"}}}",
	                name,
	                finalizer ? ",\"finalizers\":[\"sympozium.ai/"
	                            "agentrun-finalizer\"]"
	                          : "",
	                name),
	        st, uid);
}

/* agentrun_controller.go createInputConfigMap ("<run>-input", label
 * agent-run, the four keys) and buildJob (the Job named as the run,
 * RUN_LABELS, ttl 300, deadline 600, backoffLimit 0, restartPolicy
 * Never, service account sympozium-agent), jst its status; the Job's pod
 * as the Job controller names and labels it, pst its status. */
static void
make_run_children(
        const char *run, const char *uid, json_object *jst, json_object *pst)
{
	char juid[64];
	char *own = owner("AgentRun", run, uid), *jown;

	make(&R_CM,
	        testutil_jsonf(
	                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                "\"metadata\":{\"name\":\"%s-input\",\"labels\":"
	                "{\"sympozium.ai/agent-run\":\"%s\"},%s},"
	                "\"data\":{\"task\":\"hello\",\"system-prompt\":"
	                "\"\",\"agent-id\":\"default\",\"session-key\":"
	                "\"s-%s\"}}",
	                run, run, own, run),
	        NULL, NULL);
	make(&R_JOB,
	        testutil_jsonf(
	                "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	                "\"metadata\":{\"name\":\"%s\",\"labels\":"
	                "" RUN_LABELS_FMT ",%s},\"spec\":{"
	                "\"ttlSecondsAfterFinished\":300,"
	                "\"activeDeadlineSeconds\":600,\"backoffLimit\":"
	                "0,\"template\":{\"metadata\":{\"labels\":"
	                "" RUN_LABELS_FMT "},\"spec\":{\"restartPolicy\":"
	                "\"Never\",\"serviceAccountName\":"
	                "\"sympozium-agent\",\"containers\":[{\"name\":"
	                "\"agent\",\"image\":\"ghcr.io/sympozium-ai/"
	                "sympozium/agent-runner:latest\"}]}}}}",
	                run, run, own, run),
	        jst, juid);
	jown = owner("Job", run, juid);
	make(&R_POD,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	                       "\"metadata\":{\"name\":\"%s-p0d\",\"labels\":"
	                       "" RUN_LABELS_FMT ",%s},\"spec\":{"
	                       "\"restartPolicy\":\"Never\",\"containers\":[{"
	                       "\"name\":\"agent\",\"image\":\"ghcr.io/"
	                       "sympozium-ai/sympozium/agent-runner:"
	                       "latest\"}]}}",
	                run, run, jown),
	        pst, NULL);
	free(jown);
	free(own);
}

/* agentrun_controller.go: a run succeedRun finished (phase Succeeded,
 * completedAt, result; jobName and startedAt from reconcilePending,
 * podName from reconcileRunning) whose finalizer reconcileCompleted
 * removed; its Job complete, its pod terminated with 0. */
static void
fixture_run_succeeded(void)
{
	char uid[64];

	make_run("run-done", false,
	        testutil_jsonf("{\"phase\":\"Succeeded\",\"jobName\":"
	                       "\"run-done\",\"podName\":\"run-done-p0d\","
	                       "\"startedAt\":\"%s\",\"completedAt\":\"%s\","
	                       "\"result\":\"hi\"}",
	                now_ts, now_ts),
	        uid);
	make_run_children("run-done", uid,
	        testutil_jsonf("{\"succeeded\":1,\"startTime\":\"%s\","
	                       "\"completionTime\":\"%s\",\"conditions\":[{"
	                       "\"type\":\"Complete\",\"status\":\"True\"}]}",
	                now_ts, now_ts),
	        testutil_jsonf(
	                "{\"phase\":\"Succeeded\",\"containerStatuses\":"
	                "[{\"name\":\"agent\",\"ready\":false,"
	                "\"restartCount\":0,\"image\":\"x\","
	                "\"imageID\":\"\",\"state\":{\"terminated\":{"
	                "\"exitCode\":0,\"reason\":\"Completed\"}}}]}"));
}

/* agentrun_controller.go reconcilePending (finalizer, phase Running,
 * jobName, startedAt) and reconcileRunning (podName): a run within its
 * timeout whose Job is active and whose agent container runs, which
 * reconcileRunning only requeues. */
static void
fixture_run_running(void)
{
	char uid[64];

	make_run("run-live", true,
	        testutil_jsonf("{\"phase\":\"Running\",\"jobName\":"
	                       "\"run-live\",\"podName\":\"run-live-p0d\","
	                       "\"startedAt\":\"%s\"}",
	                now_ts),
	        uid);
	make_run_children("run-live", uid,
	        testutil_jsonf("{\"active\":1,\"startTime\":\"%s\"}", now_ts),
	        testutil_jsonf("{\"phase\":\"Running\",\"containerStatuses\":"
	                       "[{\"name\":\"agent\",\"ready\":true,"
	                       "\"restartCount\":0,\"image\":\"x\","
	                       "\"imageID\":\"\",\"state\":{\"running\":{"
	                       "\"startedAt\":\"%s\"}}}]}",
	                now_ts));
}

static void
fixtures(void)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(now_ts, sizeof(now_ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fixture_skillpack();
	fixture_policy();
	fixture_instance();
	fixture_run_succeeded();
	fixture_run_running();
}

/* sympoziumctl --json shadow: the reply (caller puts). */
static json_object *
shadow_reply(void)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        F.dir, NULL, "--socket", F.sock, "--json", "shadow", NULL);
	json_object *o;

	if (r.rc != 0) {
		fail_msg("sympoziumctl --json shadow: exit %d: %s%s", r.rc,
		        r.out, r.err);
	}
	o = jx_parse(r.out, strlen(r.out), 0, NULL, 0);
	if (o == NULL) {
		fail_msg("sympoziumctl --json shadow: not JSON: %s", r.out);
	}
	sdproc_ctl_free(&r);
	return (o);
}

/* The reconciles controller ctl finished (every outcome), from
 * sympoziumctl --json status; its error count into *errors. */
static int64_t
reconciles(const char *ctl, int64_t *errors)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        F.dir, NULL, "--socket", F.sock, "--json", "status", NULL);
	json_object *o = jx_parse(r.out, strlen(r.out), 0, NULL, 0);
	json_object *a = jx_get(o, "controllers");
	int64_t n = 0;

	*errors = 0;
	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *c = json_object_array_get_idx(a, i);
		if (strcmp(jx_get_str(c, "name") ?: "", ctl) != 0) {
			continue;
		}
		json_object_object_foreach(jx_get(c, "reconciles"), k, v)
		{
			n += json_object_get_int64(v);
			*errors += strcmp(k, "error") == 0
			        ? json_object_get_int64(v)
			        : 0;
		}
	}
	json_object_put(o);
	sdproc_ctl_free(&r);
	return (n);
}

/* Every fixture's key was reconciled, none in error: the empty write
 * lists below are the reconcilers' verdict, not a pass not yet made. */
static void
assert_all_reconciled(void)
{
	static const struct {
		const char *ctl;
		int keys;
	} want[] = { { "skillpack", 1 }, { "policy", 1 }, { "instance", 1 },
		{ "agentrun", 2 } };
	int64_t end = ksim_now_ms() + WAIT_MS, err = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		while (reconciles(want[i].ctl, &err) < want[i].keys
		        && ksim_now_ms() < end) {
			ksim_sleep_ms(200);
		}
		if (reconciles(want[i].ctl, &err) < want[i].keys || err != 0) {
			fail_msg("controller %s: %d keys, reconciled %lld, "
			         "errors %lld",
			        want[i].ctl, want[i].keys,
			        (long long)reconciles(want[i].ctl, &err),
			        (long long)err);
		}
	}
}

static int
setup(void **state)
{
	/* no Job or kubelet loop: the Jobs and pods stay as upstream left
	 * them (the run-live pod must not finish under the test) */
	static const char *const ksim_args[]
	        = { "--controllers", "gc,deployment", NULL };

	*state = &F;
	if (optest_start(&F, "test-takeover-all", ksim_args, 10000, WAIT_MS)
	        != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	assert_int_equal(
	        ksim_api_create(&F.a, &R_NS, NULL, NS, NULL), KAPI_OK);
	fixtures();
	return (0);
}

/* (1) the shadow over upstream's resting state lists nothing. */
static void
test_shadow_no_pending(void **state)
{
	const char *args[] = { "--shadow", "--health-socket", F.sock, NULL };
	json_object *rep;

	(void)state;
	optest_sd_start(&F, 0, 0, args);
	assert_true(sdproc_log_wait(&F.sd[0], "caches synced", 1, WAIT_MS));
	assert_all_reconciled();
	sleep(2); /* requeues and events from our own reads settle */
	rep = shadow_reply();
	assert_non_null(jx_get(rep, "shadow"));
	if (jx_array_len(jx_get(rep, "pending")) != 0) {
		fail_msg("upstream's state, yet pending: %s",
		        json_object_to_json_string(jx_get(rep, "pending")));
	}
	json_object_put(rep);
	assert_int_equal(ksim_writes_after(F.a.request_log, UA, 0, true), 0);
	optest_sd_sigterm(&F, 0, 15000);
}

static const char *
check_phase(json_object *o, const void *arg)
{
	if (o == NULL) {
		return ("absent");
	}
	return (strcmp(jx_get_str(o, "status.phase") ?: "", arg) == 0
	                ? NULL
	                : "another phase");
}

/* (2) the operator itself: no write at all (upstream's next reconcile
 * re-sends equal values: the SkillPack ConfigMap Update and status
 * Updates, the policy and instance status; none changes a field), and
 * every object is still there, the runs in their phase. */
static void
test_operator_writes_nothing(void **state)
{
	int skip = ksim_log_lines(F.a.request_log);
	const char *args[] = { "--health-socket", F.sock, NULL };

	(void)state;
	optest_sd_start(&F, 1, 0, args);
	assert_true(sdproc_log_wait(&F.sd[1], "caches synced", 1, WAIT_MS));
	assert_all_reconciled();
	ksim_wait_quiet(F.a.request_log, UA, 3000, WAIT_MS);
	assert_int_equal(
	        ksim_writes_after(F.a.request_log, UA, skip, true), 0);
	optest_wait_obj(&F, &R_RUN, NS, "run-live", check_phase, "Running");
	optest_wait_obj(&F, &R_RUN, NS, "run-done", check_phase, "Succeeded");
	optest_wait_obj(&F, &R_SKP, NS, "tools", check_phase, "Ready");
	optest_wait_obj(&F, &R_INST, NS, "inst", check_phase, "Running");
	optest_wait_obj(
	        &F, &R_JOB, NS, "run-live", optest_check_present, NULL);
	optest_wait_obj(
	        &F, &R_POD, NS, "run-done-p0d", optest_check_present, NULL);
	optest_wait_obj(
	        &F, &R_CM, NS, "run-done-input", optest_check_present, NULL);
	optest_wait_obj(
	        &F, &R_DEP, NS, "inst-memory", optest_check_present, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shadow_no_pending),
		cmocka_unit_test(test_operator_writes_nothing),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
