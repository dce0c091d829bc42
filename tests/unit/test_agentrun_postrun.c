/*
 * test_agentrun_postrun.c: the PostRunning path of the AgentRun
 * reconciler (workers/agentrun_postrun.c) against the fake supervisor:
 * the workspace PVC and the agent Job's changes in Pending, the postRun
 * Job, Running -> PostRunning, the outcomes of PostRunning (PostRunFailed,
 * the 10-minute budget, a missing Job), the response gate and the PVC
 * cleanup.  Every expected value comes from upstream
 * internal/controller/agentrun_controller.go at 008266e; each test names
 * the function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "tests/lib/testutil.h"
#include "workers/agentrun.h"
#include "workers/agentrun_postrun.h"

/* 2026-01-01T00:00:00Z */
#define T0 1767225600000LL

struct res {
	json_object *writes; /* owned */
	enum ipc_verdict v;
	int64_t after;
};

static void
res_fini(struct res *r)
{
	json_object_put(r->writes);
}

static struct res
pass(struct fakesup *f, json_object *obj, const char *children, int64_t now)
{
	json_object *ch = json_tokener_parse(children ? children : "[]");
	struct fakesup_run r;
	struct res out;

	fakesup_run(&agentrun_reconciler, f, "ns/r", obj, ch, now, &r);
	out.writes = json_object_get(r.writes);
	out.v = r.verdict;
	out.after = r.after_ms;
	fakesup_run_fini(&r);
	json_object_put(ch);
	return (out);
}

/* The first write with op and plural (and name when not NULL). */
static json_object *
find_w(struct res *r, const char *op, const char *plural, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(r->writes); i++) {
		json_object *w = json_object_array_get_idx(r->writes, i);
		const char *n = jx_get_str(w, "name");
		if (n == NULL) {
			n = jx_get_str(w, "object.metadata.name");
		}
		if (strcmp(jx_get_str(w, "op"), op) == 0
		        && strcmp(jx_get_str(w, "resource.plural"), plural)
		                == 0
		        && (name == NULL
		                || (n != NULL && strcmp(n, name) == 0))) {
			return (w);
		}
	}
	return (NULL);
}

static int
index_of(struct res *r, json_object *w)
{
	for (size_t i = 0; i < json_object_array_length(r->writes); i++) {
		if (json_object_array_get_idx(r->writes, i) == w) {
			return ((int)i);
		}
	}
	return (-1);
}

static json_object *
status_of(struct res *r)
{
	json_object *w = find_w(r, "update_status", "agentruns", NULL);

	assert_non_null(w);
	return (jx_get(w, "object.status"));
}

/* The index of the event write with reason after the status write, -1
 * when there is none; asserted to be of type with msg in its message. */
static int
event_at(struct res *r, const char *type, const char *reason, const char *msg)
{
	json_object *body = json_object_new_object();
	int st = index_of(r, find_w(r, "update_status", "agentruns", NULL));
	int at = -1;

	json_object_object_add(body, "writes", json_object_get(r->writes));
	for (size_t i = (size_t)(st + 1);
	        st >= 0 && i < json_object_array_length(r->writes); i++) {
		json_object *w = json_object_array_get_idx(r->writes, i);
		const char *why = jx_get_str(w, "object.reason");
		if (strcmp(jx_get_str(w, "op"), "event") == 0 && why != NULL
		        && strcmp(why, reason) == 0) {
			evtest_assert(body, i, "r", type, reason, msg);
			at = (int)i;
			break;
		}
	}
	json_object_put(body);
	return (at);
}

/* A run ns/r with the finalizer; spec_extra and status spliced, then
 * annotations (a JSON object text or NULL). */
static json_object *
mkrun(const char *spec_extra, const char *status, const char *ann)
{
	json_object *o = testutil_jsonf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"r\",\"namespace\":"
	        "\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"5\","
	        "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
	        "\"sympozium.ai/instance\":\"alice\"},\"finalizers\":["
	        "\"sympozium.ai/agentrun-finalizer\"]},\"spec\":{"
	        "\"instanceRef\":\"alice\",\"agentId\":\"primary\","
	        "\"sessionKey\":\"s1\",\"task\":\"do it\",\"model\":{"
	        "\"provider\":\"openai\",\"model\":\"gpt-4o\","
	        "\"authSecretRef\":\"key\"}%s},\"status\":{%s}}",
	        spec_extra, status);

	if (ann != NULL) {
		jx_set_path(
		        o, "metadata.annotations", json_tokener_parse(ann));
	}
	return (o);
}

#define HOOK  "{\"name\":\"notify\",\"image\":\"notify:1\"}"
#define GATE  "{\"name\":\"judge\",\"image\":\"judge:1\",\"gate\":true}"
#define HOOKS ",\"lifecycle\":{\"postRun\":[" HOOK "]}"
#define GATED ",\"lifecycle\":{\"postRun\":[" HOOK "," GATE "]}"
#define INSTANCE                                                              \
	"{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},\"spec\":"   \
	"{}}"
#define STARTED "\"startedAt\":\"2026-01-01T00:00:00Z\""
#define RUNNING "\"phase\":\"Running\",\"jobName\":\"r\"," STARTED
#define JOB(name, st)                                                         \
	"[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"        \
	"{\"name\":\"" name "\",\"namespace\":\"ns\"},\"status\":{" st "}}]"
/* upstream startPostRun's status, as left by it (or by us) */
#define POSTRUNNING(code)                                                     \
	"\"phase\":\"PostRunning\",\"jobName\":\"r\",\"postRunJobName\":"     \
	"\"r-postrun\",\"exitCode\":" code ",\"result\":\"the answer\","      \
	"\"tokenUsage\":{\"totalTokens\":7}," STARTED
#define POSTRUNNING_FAILED                                                    \
	"\"phase\":\"PostRunning\",\"jobName\":\"r\",\"postRunJobName\":"     \
	"\"r-postrun\",\"exitCode\":1,\"error\":\"Job failed\"," STARTED

static const char *
env_of(json_object *c, const char *name)
{
	json_object *env = json_object_object_get(c, "env");

	for (size_t i = 0; i < jx_array_len(env); i++) {
		json_object *e = json_object_array_get_idx(env, i);
		if (strcmp(jx_get_str(e, "name"), name) == 0) {
			return (jx_get_str(e, "value") ?: "");
		}
	}
	return (NULL);
}

/* reconcilePending (ensureWorkspacePVC before the Job), buildVolumes
 * (the workspace a PVC), buildContainers (GATE_SUPPRESS_COMPLETION on
 * ipc-bridge with a gate hook); postRun hooks no longer fail the run. */
static void
test_pending(void **state)
{
	struct fakesup *f = *state;
	json_object *run = mkrun(GATED, "", NULL), *pvc, *job, *vols;
	struct res r;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	r = pass(f, run, NULL, T0);
	assert_null(jx_get(status_of(&r), "error"));
	pvc = find_w(&r, "create", "persistentvolumeclaims", "r-workspace");
	assert_non_null(pvc);
	assert_true(index_of(&r, pvc)
	        < index_of(&r, find_w(&r, "create", "jobs", "r")));
	fakesup_assert_json(jx_get(pvc, "object"),
	        "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	        "\"metadata\":{\"name\":\"r-workspace\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\","
	        "\"sympozium.ai/component\":\"workspace\"},"
	        "\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/"
	        "v1alpha1\",\"kind\":\"AgentRun\",\"name\":\"r\",\"uid\":"
	        "\"u1\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
	        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":"
	        "{\"requests\":{\"storage\":\"1Gi\"}}}}");
	job = jx_get(find_w(&r, "create", "jobs", "r"), "object");
	vols = jx_get(job, "spec.template.spec.volumes");
	fakesup_assert_json(json_object_array_get_idx(vols, 0),
	        "{\"name\":\"workspace\",\"persistentVolumeClaim\":{"
	        "\"claimName\":\"r-workspace\"}}");
	assert_string_equal(
	        env_of(json_object_array_get_idx(
	                       jx_get(job, "spec.template.spec.containers"),
	                       1),
	                "GATE_SUPPRESS_COMPLETION"),
	        "true");
	assert_string_equal(jx_get_str(status_of(&r), "phase"), "Running");
	res_fini(&r);
	json_object_put(run);
	/* without a gate: the PVC, no GATE_SUPPRESS_COMPLETION */
	run = mkrun(HOOKS, "", NULL);
	r = pass(f, run, NULL, T0);
	assert_non_null(
	        find_w(&r, "create", "persistentvolumeclaims", "r-workspace"));
	job = jx_get(find_w(&r, "create", "jobs", "r"), "object");
	assert_null(env_of(
	        json_object_array_get_idx(
	                jx_get(job, "spec.template.spec.containers"), 1),
	        "GATE_SUPPRESS_COMPLETION"));
	res_fini(&r);
	json_object_put(run);
	/* no hooks: no PVC */
	run = mkrun("", "", NULL);
	r = pass(f, run, NULL, T0);
	assert_null(find_w(&r, "create", "persistentvolumeclaims", NULL));
	res_fini(&r);
	json_object_put(run);
}

/* Later upstream fix #167 (agentrun_controller.go buildPostRunJob,
 * ResolveImagePullPolicy, commit 74a0895): a postRun hook's valid
 * imagePullPolicy, else IfNotPresent. */
static void
test_hook_pull_policy(void **state)
{
	json_object *run
	        = mkrun(",\"lifecycle\":{\"postRun\":[{\"name\":"
	                "\"a\",\"image\":\"a:1\",\"imagePullPolicy\":"
	                "\"Always\"},{\"name\":\"b\",\"image\":\"b:1\","
	                "\"imagePullPolicy\":\"Later\"}]}",
	                "", NULL);
	json_object *job = agentrun_postrun_job(run, 0, "x");
	json_object *ic = jx_get(job, "spec.template.spec.initContainers");

	(void)state;
	assert_int_equal(json_object_array_length(ic), 2);
	assert_string_equal(jx_get_str(json_object_array_get_idx(ic, 0),
	                            "imagePullPolicy"),
	        "Always");
	assert_string_equal(jx_get_str(json_object_array_get_idx(ic, 1),
	                            "imagePullPolicy"),
	        "IfNotPresent");
	json_object_put(job);
	json_object_put(run);
}

/* buildPostRunJob: names, labels, deadlines, pod security, the gate
 * hook first, env order (base, spec env sorted, hook env, GATE_MODE),
 * command and args only when given, the done container, the volumes. */
static void
test_job(void **state)
{
	json_object *run = mkrun(
	        ",\"env\":{\"ZED\":\"z\",\"ALPHA\":\"a\"},"
	        "\"imagePullSecrets\":"
	        "[{\"name\":\"reg\"}],\"lifecycle\":{\"postRun\":[{\"name\":"
	        "\"notify\",\"image\":\"notify:1\",\"command\":[\"sh\"],"
	        "\"args\":[\"-c\",\"x\"],\"env\":[{\"name\":\"H\","
	        "\"value\":\"h\"}]}," GATE "]}",
	        "", NULL);
	json_object *job = agentrun_postrun_job(run, 0, "the answer");
	json_object *long_run;
	char name[80];

	(void)state;
	fakesup_assert_json(job,
	        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	        "\"name\":\"r-postrun\",\"namespace\":\"ns\",\"labels\":{"
	        "\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/instance\":"
	        "\"alice\",\"sympozium.ai/component\":\"post-run\","
	        "\"app.kubernetes.io/part-of\":\"sympozium\","
	        "\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}},"
	        "\"spec\":{\"ttlSecondsAfterFinished\":300,"
	        "\"activeDeadlineSeconds\":600,\"backoffLimit\":0,"
	        "\"template\":{\"metadata\":{\"labels\":{"
	        "\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/instance\":"
	        "\"alice\",\"sympozium.ai/component\":\"post-run\","
	        "\"app.kubernetes.io/part-of\":\"sympozium\","
	        "\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}},"
	        "\"spec\":{\"restartPolicy\":\"Never\",\"serviceAccountName\":"
	        "\"sympozium-agent\",\"imagePullSecrets\":[{\"name\":"
	        "\"reg\"}],\"securityContext\":{\"runAsNonRoot\":true,"
	        "\"runAsUser\":1000,\"fsGroup\":1000},\"initContainers\":[{"
	        "\"name\":\"post-judge\",\"image\":\"judge:1\","
	        "\"imagePullPolicy\":\"IfNotPresent\",\"env\":[{\"name\":"
	        "\"AGENT_RUN_ID\",\"value\":\"r\"},{\"name\":"
	        "\"INSTANCE_NAME\",\"value\":\"alice\"},{\"name\":"
	        "\"AGENT_NAMESPACE\",\"value\":\"ns\"},{\"name\":"
	        "\"AGENT_EXIT_CODE\",\"value\":\"0\"},{\"name\":"
	        "\"AGENT_RESULT\",\"value\":\"the answer\"},{\"name\":"
	        "\"ALPHA\",\"value\":\"a\"},{\"name\":\"ZED\",\"value\":"
	        "\"z\"},{\"name\":\"GATE_MODE\",\"value\":\"true\"}],"
	        "\"volumeMounts\":[{\"name\":\"workspace\",\"mountPath\":"
	        "\"/workspace\"},{\"name\":\"tmp\",\"mountPath\":\"/tmp\"}],"
	        "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":"
	        "\"128Mi\"},\"limits\":{\"cpu\":\"500m\",\"memory\":"
	        "\"512Mi\"}},\"securityContext\":{\"readOnlyRootFilesystem\":"
	        "true,\"allowPrivilegeEscalation\":false,\"capabilities\":{"
	        "\"drop\":[\"ALL\"]}}},{\"name\":\"post-notify\",\"image\":"
	        "\"notify:1\",\"imagePullPolicy\":\"IfNotPresent\","
	        "\"command\":[\"sh\"],\"args\":[\"-c\",\"x\"],\"env\":[{"
	        "\"name\":\"AGENT_RUN_ID\",\"value\":\"r\"},{\"name\":"
	        "\"INSTANCE_NAME\",\"value\":\"alice\"},{\"name\":"
	        "\"AGENT_NAMESPACE\",\"value\":\"ns\"},{\"name\":"
	        "\"AGENT_EXIT_CODE\",\"value\":\"0\"},{\"name\":"
	        "\"AGENT_RESULT\",\"value\":\"the answer\"},{\"name\":"
	        "\"ALPHA\",\"value\":\"a\"},{\"name\":\"ZED\",\"value\":"
	        "\"z\"},{\"name\":\"H\",\"value\":\"h\"}],\"volumeMounts\":[{"
	        "\"name\":\"workspace\",\"mountPath\":\"/workspace\"},{"
	        "\"name\":\"tmp\",\"mountPath\":\"/tmp\"}],\"resources\":{"
	        "\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},"
	        "\"limits\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"}},"
	        "\"securityContext\":{\"readOnlyRootFilesystem\":true,"
	        "\"allowPrivilegeEscalation\":false,\"capabilities\":{"
	        "\"drop\":[\"ALL\"]}}}],\"containers\":[{\"name\":\"done\","
	        "\"image\":\"busybox:1.36\",\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"command\":[\"true\"],\"securityContext\":{"
	        "\"readOnlyRootFilesystem\":true,\"allowPrivilegeEscalation\":"
	        "false,\"capabilities\":{\"drop\":[\"ALL\"]}},\"resources\":{"
	        "\"requests\":{\"cpu\":\"10m\",\"memory\":\"8Mi\"},"
	        "\"limits\":{\"cpu\":\"50m\",\"memory\":\"16Mi\"}}}],"
	        "\"volumes\":[{\"name\":\"workspace\","
	        "\"persistentVolumeClaim\":"
	        "{\"claimName\":\"r-workspace\"}},{\"name\":\"tmp\","
	        "\"emptyDir\":{\"sizeLimit\":\"256Mi\"}}]}}}}");
	json_object_put(job);
	/* the name cut to 63 characters (a run name of 60: "-po") */
	long_run = mkrun(HOOKS, "", NULL);
	memset(name, 'a', 60);
	name[60] = '\0';
	jx_set_path(long_run, "metadata.name", json_object_new_string(name));
	job = agentrun_postrun_job(long_run, 1, "");
	assert_int_equal(strlen(jx_get_str(job, "metadata.name")), 63);
	assert_string_equal(jx_get_str(job, "metadata.name") + 60, "-po");
	/* an empty result: AGENT_RESULT without a value (omitempty) */
	assert_string_equal(
	        env_of(json_object_array_get_idx(jx_get(job,
	                                                 "spec.template.spec."
	                                                 "initContainers"),
	                       0),
	                "AGENT_EXIT_CODE"),
	        "1");
	assert_string_equal(
	        env_of(json_object_array_get_idx(jx_get(job,
	                                                 "spec.template.spec."
	                                                 "initContainers"),
	                       0),
	                "AGENT_RESULT"),
	        "");
	json_object_put(job);
	/* 62: upstream's cut leaves "<run>-", which no API server takes;
	 * ours drops the '-' (docs/compatibility.md) */
	name[62] = '\0';
	memset(name + 60, 'a', 2);
	jx_set_path(long_run, "metadata.name", json_object_new_string(name));
	job = agentrun_postrun_job(long_run, 0, "x");
	assert_string_equal(jx_get_str(job, "metadata.name"), name);
	json_object_put(job);
	json_object_put(long_run);
	json_object_put(run);
}

/* buildPostRunJob: AGENT_RESULT is cut to 32 KiB. */
static void
test_job_result_cut(void **state)
{
	json_object *run = mkrun(HOOKS, "", NULL), *job;
	size_t n = AGENTRUN_POSTRUN_RESULT_MAX + 100;
	char *text = xmalloc(n + 1);
	const char *v;

	(void)state;
	memset(text, 'x', n);
	text[n] = '\0';
	job = agentrun_postrun_job(run, 0, text);
	v = env_of(
	        json_object_array_get_idx(
	                jx_get(job, "spec.template.spec.initContainers"), 0),
	        "AGENT_RESULT");
	assert_int_equal(strlen(v), AGENTRUN_POSTRUN_RESULT_MAX);
	json_object_put(job);
	/* a 3-byte character across the cut: its 2 bytes kept become 2
	 * U+FFFD, as Go's encoder writes the invalid bytes */
	memcpy(text + AGENTRUN_POSTRUN_RESULT_MAX - 2, "\xe2\x82\xac", 3);
	job = agentrun_postrun_job(run, 0, text);
	v = env_of(
	        json_object_array_get_idx(
	                jx_get(job, "spec.template.spec.initContainers"), 0),
	        "AGENT_RESULT");
	assert_int_equal(strlen(v), AGENTRUN_POSTRUN_RESULT_MAX - 2 + 6);
	assert_string_equal(v + AGENTRUN_POSTRUN_RESULT_MAX - 2,
	        "\xef\xbf\xbd\xef\xbf\xbd");
	json_object_put(job);
	free(text);
	json_object_put(run);
}

/* reconcileRunning then startPostRun: the Job succeeded (exit code 0,
 * result and usage stored) or failed (exit code 1, error, no usage); the
 * postRun Job owned by the run, phase PostRunning, requeue 5 s. */
static void
test_running_to_postrunning(void **state)
{
	struct fakesup *f = *state;
	json_object *run = mkrun(HOOKS, RUNNING ",\"podName\":\"p\"", NULL);
	json_object *st, *job;
	struct res r;

	fakesup_add_log(f, "ns", "p",
	        "__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":"
	        "\"the answer\",\"metrics\":{\"inputTokens\":3,"
	        "\"outputTokens\":4}}__SYMPOZIUM_END__\n");
	r = pass(f, run, JOB("r", "\"succeeded\":1"), T0 + 60000);
	st = status_of(&r);
	assert_string_equal(jx_get_str(st, "phase"), "PostRunning");
	assert_string_equal(jx_get_str(st, "postRunJobName"), "r-postrun");
	assert_int_equal(json_object_get_int(jx_get(st, "exitCode")), 0);
	assert_string_equal(jx_get_str(st, "result"), "the answer");
	assert_int_equal(
	        json_object_get_int(jx_get(st, "tokenUsage.inputTokens")), 3);
	assert_null(jx_get(st, "completedAt"));
	job = jx_get(find_w(&r, "create", "jobs", "r-postrun"), "object");
	assert_non_null(job);
	assert_string_equal(
	        jx_get_str(job, "metadata.ownerReferences.0.uid") ?: "", "u1");
	assert_string_equal(
	        env_of(json_object_array_get_idx(jx_get(job,
	                                                 "spec.template.spec."
	                                                 "initContainers"),
	                       0),
	                "AGENT_RESULT"),
	        "the answer");
	assert_int_equal(r.v, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after, AGENTRUN_POSTRUN_POLL_MS);
	/* our Event (docs/observability.md; upstream records none) */
	assert_true(event_at(&r, "Normal", "PostRunStarted",
	                    "Created postRun Job r-postrun")
	        > 0);
	res_fini(&r);
	/* the Job failed without a result in the log */
	fakesup_add_log(f, "ns", "p", "boom\n");
	r = pass(f, run, JOB("r", "\"failed\":1"), T0 + 60000);
	st = status_of(&r);
	assert_string_equal(jx_get_str(st, "phase"), "PostRunning");
	assert_int_equal(json_object_get_int(jx_get(st, "exitCode")), 1);
	assert_string_equal(jx_get_str(st, "error"), "Job failed");
	assert_null(jx_get(st, "tokenUsage"));
	job = jx_get(find_w(&r, "create", "jobs", "r-postrun"), "object");
	assert_string_equal(
	        env_of(json_object_array_get_idx(jx_get(job,
	                                                 "spec.template.spec."
	                                                 "initContainers"),
	                       0),
	                "AGENT_EXIT_CODE"),
	        "1");
	assert_string_equal(
	        env_of(json_object_array_get_idx(jx_get(job,
	                                                 "spec.template.spec."
	                                                 "initContainers"),
	                       0),
	                "AGENT_RESULT"),
	        "Job failed");
	res_fini(&r);
	json_object_put(run);
}

/* reconcileRunning's sidecar-aware path: the agent container exited, the
 * Job is deleted (background) and the postRun Job started with the
 * container's message. */
static void
test_sidecar_to_postrunning(void **state)
{
	struct fakesup *f = *state;
	json_object *run = mkrun(HOOKS, RUNNING ",\"podName\":\"p\"", NULL);
	json_object *st;
	struct res r;

	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\"}},\"spec\":{"
	        "\"containers\":[{\"name\":\"agent\"},{\"name\":\"ipc-"
	        "bridge\"},"
	        "{\"name\":\"skill-x\"}]},\"status\":{\"containerStatuses\":[{"
	        "\"name\":\"agent\",\"state\":{\"terminated\":{\"exitCode\":2,"
	        "\"reason\":\"Error\"}}}]}}");
	fakesup_add_log(f, "ns", "p", "no marker\n");
	r = pass(f, run, JOB("r", "\"active\":1"), T0 + 60000);
	st = status_of(&r);
	assert_string_equal(jx_get_str(st, "phase"), "PostRunning");
	assert_int_equal(json_object_get_int(jx_get(st, "exitCode")), 1);
	assert_string_equal(jx_get_str(st, "error"),
	        "agent container exited with code 2 (Error)");
	assert_non_null(find_w(&r, "delete", "jobs", "r"));
	assert_non_null(find_w(&r, "create", "jobs", "r-postrun"));
	assert_int_equal(r.after, AGENTRUN_POSTRUN_POLL_MS);
	res_fini(&r);
	json_object_put(run);
}

/* reconcilePostRunning without a gate: the stored outcome once the Job
 * succeeded; the PostRunFailed condition appended when it failed (the
 * outcome unchanged); a missing Job requeues 5 s; a running one too,
 * until 10 minutes after startedAt, then the Job is deleted
 * (foreground). */
static void
test_postrunning(void **state)
{
	struct fakesup *f = *state;
	json_object *ok = mkrun(HOOKS, POSTRUNNING("0"), NULL);
	json_object *bad = mkrun(HOOKS, POSTRUNNING_FAILED, NULL);
	json_object *st, *w;
	struct res r;

	r = pass(f, ok, JOB("r-postrun", "\"succeeded\":1"), T0 + 60000);
	st = status_of(&r);
	assert_string_equal(jx_get_str(st, "phase"), "Succeeded");
	assert_string_equal(jx_get_str(st, "result"), "the answer");
	assert_int_equal(
	        json_object_get_int(jx_get(st, "tokenUsage.totalTokens")), 7);
	assert_string_equal(
	        jx_get_str(st, "completedAt"), "2026-01-01T00:01:00Z");
	assert_null(jx_get(st, "conditions"));
	assert_null(jx_get(st, "gateVerdict"));
	assert_int_equal(r.v, IPC_V_DONE);
	assert_true(event_at(&r, "Normal", "Succeeded", NULL) > 0);
	assert_int_equal(event_at(&r, "Warning", "PostRunFailed", NULL), -1);
	res_fini(&r);
	r = pass(f, bad, JOB("r-postrun", "\"succeeded\":1"), T0 + 60000);
	st = status_of(&r);
	assert_string_equal(jx_get_str(st, "phase"), "Failed");
	assert_string_equal(jx_get_str(st, "error"), "Job failed");
	res_fini(&r);
	/* the hooks failed: condition, outcome unchanged */
	r = pass(f, ok, JOB("r-postrun", "\"failed\":1"), T0 + 60000);
	st = status_of(&r);
	assert_string_equal(jx_get_str(st, "phase"), "Succeeded");
	fakesup_assert_json(jx_get(st, "conditions"),
	        "[{\"type\":\"PostRunFailed\",\"status\":\"True\","
	        "\"lastTransitionTime\":\"2026-01-01T00:01:00Z\",\"reason\":"
	        "\"PostRunJobFailed\",\"message\":\"One or more postRun "
	        "lifecycle hooks failed\"}]");
	assert_true(event_at(&r, "Warning", "PostRunFailed",
	                    "One or more postRun lifecycle hooks failed")
	        > 0);
	res_fini(&r);
	/* no Job in the cache: requeue, nothing written */
	r = pass(f, ok, NULL, T0 + 60000);
	assert_int_equal(json_object_array_length(r.writes), 0);
	assert_int_equal(r.v, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after, AGENTRUN_POSTRUN_POLL_MS);
	res_fini(&r);
	/* still running at exactly 10 minutes: requeue */
	r = pass(f, ok, JOB("r-postrun", "\"active\":1"), T0 + 600000);
	assert_int_equal(json_object_array_length(r.writes), 0);
	assert_int_equal(r.after, AGENTRUN_POSTRUN_POLL_MS);
	res_fini(&r);
	/* past it: the Job deleted (foreground), the stored outcome */
	r = pass(f, ok, JOB("r-postrun", "\"active\":1"), T0 + 601000);
	w = find_w(&r, "delete", "jobs", "r-postrun");
	assert_non_null(w);
	assert_string_equal(jx_get_str(w, "propagation"), "Foreground");
	assert_string_equal(jx_get_str(status_of(&r), "phase"), "Succeeded");
	assert_null(jx_get(status_of(&r), "conditions"));
	res_fini(&r);
	json_object_put(ok);
	json_object_put(bad);
}

/* One gated PostRunning pass: the status written. */
static json_object *
gate_pass(struct fakesup *f, const char *status, const char *ann,
        const char *gate_default, const char *job_status, struct res *r)
{
	char *spec = xasprintf(",\"lifecycle\":{\"postRun\":[" HOOK "," GATE
	                       "]%s%s%s}",
	        gate_default != NULL ? ",\"gateDefault\":\"" : "",
	        gate_default != NULL ? gate_default : "",
	        gate_default != NULL ? "\"" : "");
	json_object *run = mkrun(spec, status, ann);
	char *children = xasprintf(
	        "[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
	        "{\"name\":\"r-postrun\",\"namespace\":\"ns\"},\"status\":{"
	        "%s}}]",
	        job_status);

	*r = pass(f, run, children, T0 + 60000);
	free(children);
	free(spec);
	json_object_put(run);
	return (status_of(r));
}

static void
expect_gate(struct fakesup *f, const char *ann, const char *gate_default,
        const char *job_status, const char *verdict, const char *result)
{
	struct res r;
	json_object *st = gate_pass(
	        f, POSTRUNNING("0"), ann, gate_default, job_status, &r);

	assert_string_equal(jx_get_str(st, "gateVerdict"), verdict);
	assert_string_equal(jx_get_str(st, "phase"), "Succeeded");
	assert_string_equal(jx_get_str(st, "result"), result);
	assert_int_equal(
	        json_object_get_int(jx_get(st, "tokenUsage.totalTokens")), 7);
	res_fini(&r);
}

#define VERDICT(j) "{\"sympozium.ai/gate-verdict\":" j "}"

/* resolveGate and parseGateVerdict: approve, reject (with and without a
 * response), rewrite; none or an invalid one (bad JSON, an unknown
 * action, a non-string field) gives error or timeout and, with
 * gateDefault block (the default), the blocked text; allow keeps the
 * result (allowed-by-default).  Keys match case-insensitively (Go's
 * json.Unmarshal). */
static void
test_gate(void **state)
{
	struct fakesup *f = *state;
	const char *ok = "\"succeeded\":1", *failed = "\"failed\":1";

	expect_gate(f, VERDICT("\"{\\\"action\\\":\\\"approve\\\"}\""), NULL,
	        ok, "approved", "the answer");
	expect_gate(f,
	        VERDICT("\"{\\\"action\\\":\\\"reject\\\",\\\"response\\\":"
	                "\\\"no\\\",\\\"reason\\\":\\\"pii\\\"}\""),
	        NULL, ok, "rejected", "no");
	expect_gate(f, VERDICT("\"{\\\"action\\\":\\\"reject\\\"}\""), NULL,
	        ok, "rejected", "Response blocked by policy");
	expect_gate(f,
	        VERDICT("\"{\\\"action\\\":\\\"rewrite\\\",\\\"response\\\":"
	                "\\\"better\\\"}\""),
	        NULL, ok, "rewritten", "better");
	expect_gate(f, VERDICT("\"{\\\"action\\\":\\\"rewrite\\\"}\""), NULL,
	        ok, "rewritten", "");
	expect_gate(f, VERDICT("\"{\\\"Action\\\":\\\"approve\\\"}\""), NULL,
	        ok, "approved", "the answer");
	/* no verdict: timeout (hook succeeded) or error (hook failed) */
	expect_gate(f, NULL, NULL, ok, "timeout",
	        "Response blocked: gate hook did not return a verdict");
	expect_gate(f, NULL, "block", failed, "error",
	        "Response blocked: gate hook did not return a verdict");
	expect_gate(f, VERDICT("\"not json\""), NULL, ok, "timeout",
	        "Response blocked: gate hook did not return a verdict");
	expect_gate(f, VERDICT("\"{\\\"action\\\":\\\"maybe\\\"}\""), NULL, ok,
	        "timeout",
	        "Response blocked: gate hook did not return a verdict");
	expect_gate(f,
	        VERDICT("\"{\\\"action\\\":\\\"approve\\\",\\\"reason\\\":1}"
	                "\""),
	        NULL, ok, "timeout",
	        "Response blocked: gate hook did not return a verdict");
	expect_gate(f, VERDICT("\"[1]\""), NULL, ok, "timeout",
	        "Response blocked: gate hook did not return a verdict");
	expect_gate(f, NULL, "allow", ok, "allowed-by-default", "the answer");
	expect_gate(
	        f, NULL, "allow", failed, "allowed-by-default", "the answer");
}

/* reconcilePostRunning, gated: a verdict annotation while the Job still
 * runs deletes it (background) and resolves at once; the budget's end
 * resolves as a failed hook; a failed agent stays failed with its error
 * whatever the verdict. */
static void
test_gate_running(void **state)
{
	struct fakesup *f = *state;
	json_object *st, *w;
	struct res r;

	st = gate_pass(f, POSTRUNNING("0"),
	        VERDICT("\"{\\\"action\\\":\\\"rewrite\\\",\\\"response\\\":"
	                "\\\"manual\\\"}\""),
	        NULL, "\"active\":1", &r);
	w = find_w(&r, "delete", "jobs", "r-postrun");
	assert_non_null(w);
	assert_string_equal(jx_get_str(w, "propagation"), "Background");
	assert_string_equal(jx_get_str(st, "gateVerdict"), "rewritten");
	assert_string_equal(jx_get_str(st, "result"), "manual");
	assert_int_equal(r.v, IPC_V_DONE);
	res_fini(&r);
	/* an empty annotation counts as present (upstream checks the key) */
	st = gate_pass(f, POSTRUNNING("0"), VERDICT("\"\""), NULL,
	        "\"active\":1", &r);
	assert_non_null(find_w(&r, "delete", "jobs", "r-postrun"));
	assert_string_equal(jx_get_str(st, "gateVerdict"), "timeout");
	res_fini(&r);
	/* no annotation, still running: requeue */
	{
		json_object *run = mkrun(GATED, POSTRUNNING("0"), NULL);
		r = pass(f, run, JOB("r-postrun", "\"active\":1"), T0 + 60000);
		assert_int_equal(json_object_array_length(r.writes), 0);
		assert_int_equal(r.after, AGENTRUN_POSTRUN_POLL_MS);
		res_fini(&r);
		/* the budget's end: as a failed hook */
		r = pass(
		        f, run, JOB("r-postrun", "\"active\":1"), T0 + 601000);
		assert_string_equal(
		        jx_get_str(status_of(&r), "gateVerdict"), "error");
		assert_string_equal(
		        jx_get_str(find_w(&r, "delete", "jobs", "r-postrun"),
		                "propagation"),
		        "Foreground");
		res_fini(&r);
		json_object_put(run);
	}
	/* a failed agent: Failed with its stored error, verdict recorded */
	st = gate_pass(f, POSTRUNNING_FAILED,
	        VERDICT("\"{\\\"action\\\":\\\"approve\\\"}\""), NULL,
	        "\"succeeded\":1", &r);
	assert_string_equal(jx_get_str(st, "phase"), "Failed");
	assert_string_equal(jx_get_str(st, "error"), "Job failed");
	assert_string_equal(jx_get_str(st, "gateVerdict"), "approved");
	res_fini(&r);
}

/* validateGateHooks' messages (through the Pending path), with %q
 * quoting of the hook name. */
static void
test_validate(void **state)
{
	json_object *run = mkrun(
	        ",\"lifecycle\":{\"preRun\":[{\"name\":\"a\\\"b\",\"image\":"
	        "\"i\",\"gate\":true}]}",
	        "", NULL);

	(void)state;
	assert_string_equal(agentrun_postrun_validate(run),
	        "gate hook validation failed: gate: true is only valid on "
	        "postRun hooks, not preRun (hook \"a\\\"b\")");
	json_object_put(run);
	run = mkrun(",\"lifecycle\":{\"postRun\":[" GATE "," GATE "," GATE
	            "]}",
	        "", NULL);
	assert_string_equal(agentrun_postrun_validate(run),
	        "gate hook validation failed: at most one postRun hook may "
	        "set gate: true, found 3");
	json_object_put(run);
	run = mkrun(GATED, "", NULL);
	assert_null(agentrun_postrun_validate(run));
	assert_true(agentrun_postrun_gated(run));
	json_object_put(run);
}

/* reconcileCompleted: cleanupWorkspacePVC for a run with
 * postRunJobName (when cached); none without it. */
static void
test_cleanup(void **state)
{
	struct fakesup *f = *state;
	json_object *done = mkrun(HOOKS,
	        "\"phase\":\"Succeeded\",\"postRunJobName\":\"r-postrun\"",
	        NULL);
	json_object *plain = mkrun(HOOKS, "\"phase\":\"Succeeded\"", NULL);
	const char *pvc = "[{\"apiVersion\":\"v1\",\"kind\":"
	                  "\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
	                  "\"r-workspace\",\"namespace\":\"ns\"}}]";
	struct res r;

	r = pass(f, done, pvc, T0);
	assert_non_null(
	        find_w(&r, "delete", "persistentvolumeclaims", "r-workspace"));
	assert_non_null(find_w(&r, "patch", "agentruns", "r"));
	res_fini(&r);
	r = pass(f, plain, pvc, T0);
	assert_null(find_w(&r, "delete", "persistentvolumeclaims", NULL));
	res_fini(&r);
	json_object_put(done);
	json_object_put(plain);
}

/* Bad shapes never crash: hooks that are not objects, a postRun that is
 * not an array (no hooks), conditions that are not an array, an exitCode
 * that is not an integer (the agent counts as failed), a startedAt that
 * does not parse (no budget), a postRunJobName that is not a string. */
static void
test_bad_shapes(void **state)
{
	struct fakesup *f = *state;
	json_object *run, *job;
	struct res r;

	run = mkrun(",\"lifecycle\":{\"postRun\":[1,\"x\",{\"env\":[2],"
	            "\"command\":{},\"gate\":\"yes\"}]}",
	        "", NULL);
	job = agentrun_postrun_job(run, 0, "t");
	assert_int_equal(
	        jx_array_len(jx_get(job, "spec.template.spec.initContainers")),
	        3);
	assert_false(agentrun_postrun_gated(run));
	json_object_put(job);
	json_object_put(run);
	/* postRun not an array: no hooks, the run just completes */
	run = mkrun(",\"lifecycle\":{\"postRun\":{\"a\":1}}",
	        RUNNING ",\"podName\":\"p\"", NULL);
	r = pass(f, run, JOB("r", "\"succeeded\":1"), T0);
	assert_string_equal(jx_get_str(status_of(&r), "phase"), "Succeeded");
	res_fini(&r);
	json_object_put(run);
	/* PostRunning: conditions a string, exitCode a string, startedAt
	 * garbage */
	run = mkrun(HOOKS,
	        "\"phase\":\"PostRunning\",\"postRunJobName\":\"r-postrun\","
	        "\"exitCode\":\"0\",\"error\":\"e\",\"conditions\":\"no\","
	        "\"startedAt\":\"yesterday\"",
	        NULL);
	r = pass(f, run, JOB("r-postrun", "\"active\":1"), T0 + 3600000);
	assert_int_equal(json_object_array_length(r.writes), 0);
	assert_int_equal(r.after, AGENTRUN_POSTRUN_POLL_MS);
	res_fini(&r);
	r = pass(f, run, JOB("r-postrun", "\"failed\":1"), T0);
	assert_string_equal(jx_get_str(status_of(&r), "phase"), "Failed");
	assert_string_equal(jx_get_str(status_of(&r), "error"), "e");
	assert_string_equal(
	        jx_get_str(status_of(&r), "conditions.0.type") ?: "",
	        "PostRunFailed");
	res_fini(&r);
	json_object_put(run);
	/* postRunJobName not a string: missing */
	run = mkrun(
	        HOOKS, "\"phase\":\"PostRunning\",\"postRunJobName\":7", NULL);
	r = pass(f, run, NULL, T0);
	assert_string_equal(jx_get_str(status_of(&r), "error"),
	        "postRun Job name missing");
	res_fini(&r);
	json_object_put(run);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_pending, fakesup_setup, fakesup_teardown),
		cmocka_unit_test(test_job),
		cmocka_unit_test(test_job_result_cut),
		cmocka_unit_test_setup_teardown(test_running_to_postrunning,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_sidecar_to_postrunning,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_postrunning, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_gate, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_gate_running, fakesup_setup, fakesup_teardown),
		cmocka_unit_test(test_validate),
		cmocka_unit_test_setup_teardown(
		        test_cleanup, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_bad_shapes, fakesup_setup, fakesup_teardown),
		cmocka_unit_test(test_hook_pull_policy),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
