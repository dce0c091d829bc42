/*
 * test_agentrun_sandbox.c: the agent-sandbox backend of the AgentRun
 * reconciler (workers/agentrun_sandbox.c) against the fake supervisor,
 * with SYMPOZIUM_AGENT_SANDBOX=1 (the supervisor found the CRDs): the
 * Sandbox and SandboxClaim of a Pending run, the projection of the Job's
 * containers and volumes, the Running phase from the Ready condition and
 * the pod, result, failure messages, timeout.  Expected values come from
 * upstream internal/controller/agentrun_sandbox.go at 008266e (functions
 * named at each test) and agentrun_controller.go reconcilePending /
 * reconcileRunning (the dispatch to them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "workers/agentrun.h"
#include "workers/agentrun_sandbox.h"

/* 2026-01-01T00:00:00Z */
#define T0 1767225600000LL

#define FIN ",\"finalizers\":[\"sympozium.ai/agentrun-finalizer\"]"
#define INSTANCE                                                              \
	"{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},\"spec\":{}" \
	"}"
#define SBX ",\"agentSandbox\":{\"enabled\":true,\"runtimeClass\":\"gvisor\"}"
#define CLAIM                                                                 \
	",\"agentSandbox\":{\"enabled\":true,\"warmPoolRef\":\"wp-alice\"}"
#define RUNNING(name)                                                         \
	"\"phase\":\"Running\",\"startedAt\":\"2026-01-01T00:00:00Z\","       \
	"\"sandboxName\":\"" name "\""

static json_object *
run(struct fakesup *f, const char *obj, const char *children, int64_t now)
{
	json_object *o = json_tokener_parse(obj);
	json_object *ch = json_tokener_parse(children ? children : "[]");
	struct fakesup_run r;
	json_object *res;

	assert_non_null(o);
	fakesup_run(&agentrun_reconciler, f, "ns/r", o, ch, now, &r);
	res = json_object_get(r.result);
	json_object_object_add(res, "v", json_object_new_int((int)r.verdict));
	json_object_object_add(
	        res, "after", json_object_new_int64(r.after_ms));
	fakesup_run_fini(&r);
	json_object_put(o);
	json_object_put(ch);
	return (res);
}

static char *
mkrun(const char *spec_extra, const char *status)
{
	return (xasprintf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"r\",\"namespace\":"
	        "\"ns\",\"uid\":\"u1\",\"creationTimestamp\":"
	        "\"2026-01-01T00:00:00Z\"" FIN
	        "},\"spec\":{\"instanceRef\":\"alice\",\"agentId\":\"a\","
	        "\"sessionKey\":\"s\",\"task\":\"t\",\"model\":{"
	        "\"provider\":\"openai\",\"model\":\"m\",\"authSecretRef\":"
	        "\"key\"}%s},\"status\":{%s}}",
	        spec_extra, status));
}

static size_t
nwrites(json_object *res)
{
	return (jx_array_len(json_object_object_get(res, "writes")));
}

static json_object *
find_w(json_object *res, const char *op, const char *plural, const char *name)
{
	for (size_t i = 0; i < nwrites(res); i++) {
		json_object *w = json_object_array_get_idx(
		        json_object_object_get(res, "writes"), i);
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

static int64_t
num(json_object *o, const char *path)
{
	int64_t v = -1;

	jx_get_int(o, path, &v);
	return (v);
}

static json_object *
status_of(json_object *res)
{
	json_object *w = find_w(res, "update_status", "agentruns", NULL);

	assert_non_null(w);
	return (jx_get(w, "object.status"));
}

static int
setup(void **state)
{
	setenv(CONTRACT_ENV_AGENT_SANDBOX, "1", 1);
	return (fakesup_setup(state));
}

static int
reset(void **state)
{
	fakesup_reset(*state);
	setenv(CONTRACT_ENV_AGENT_SANDBOX, "1", 1);
	return (0);
}

/* upstream containerToMap: name, image, imagePullPolicy, command, env
 * (name and value only: a valueFrom becomes value ""), envFrom
 * (secretRef only), volumeMounts (readOnly only when true),
 * securityContext (readOnlyRootFilesystem, allowPrivilegeEscalation,
 * capabilities.drop), resources; args, ports, workingDir and the rest
 * are not carried. */
static void
test_container_projection(void **state)
{
	json_object *c = json_tokener_parse(
	        "{\"name\":\"agent\",\"image\":\"img:1\",\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"command\":[\"run\"],\"args\":[\"-x\"],"
	        "\"ports\":[{\"containerPort\":80}],\"workingDir\":\"/w\","
	        "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\","
	        "\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"x\"}}}],"
	        "\"envFrom\":[{\"secretRef\":{\"name\":\"key\",\"optional\":"
	        "true}},{\"configMapRef\":{\"name\":\"cm\"}}],"
	        "\"volumeMounts\":[{\"name\":\"w\",\"mountPath\":\"/w\","
	        "\"readOnly\":false},{\"name\":\"s\",\"mountPath\":\"/s\","
	        "\"readOnly\":true,\"subPath\":\"x\"}],\"securityContext\":{"
	        "\"readOnlyRootFilesystem\":true,\"allowPrivilegeEscalation\":"
	        "false,\"runAsUser\":5,\"capabilities\":{\"drop\":[\"ALL\"],"
	        "\"add\":[\"NET_ADMIN\"]}},\"resources\":{\"requests\":{"
	        "\"cpu\":\"250m\"},\"limits\":{\"memory\":\"1Gi\"}}}");
	json_object *bare = json_tokener_parse(
	        "{\"name\":\"x\",\"securityContext\":{}}");
	json_object *m = agentrun_sandbox_container(c);

	(void)state;
	fakesup_assert_json(m,
	        "{\"name\":\"agent\",\"image\":\"img:1\",\"imagePullPolicy\":"
	        "\"IfNotPresent\",\"command\":[\"run\"],\"env\":[{\"name\":"
	        "\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"\"}],"
	        "\"envFrom\":[{\"secretRef\":{\"name\":\"key\"}},{}],"
	        "\"volumeMounts\":[{\"name\":\"w\",\"mountPath\":\"/w\"},"
	        "{\"name\":\"s\",\"mountPath\":\"/s\",\"readOnly\":true}],"
	        "\"securityContext\":{\"readOnlyRootFilesystem\":true,"
	        "\"allowPrivilegeEscalation\":false,\"capabilities\":{"
	        "\"drop\":[\"ALL\"]}},\"resources\":{\"requests\":{\"cpu\":"
	        "\"250m\"},\"limits\":{\"memory\":\"1Gi\"}}}");
	json_object_put(m);
	/* image "" always; an empty securityContext stays {} */
	m = agentrun_sandbox_container(bare);
	fakesup_assert_json(
	        m, "{\"name\":\"x\",\"image\":\"\",\"securityContext\":{}}");
	json_object_put(m);
	json_object_put(c);
	json_object_put(bare);
}

/* upstream volumeToMap: emptyDir (medium, sizeLimit), configMap (name),
 * projected (configMap and secret names per source),
 * persistentVolumeClaim (claimName and readOnly always); any other
 * volume source (hostPath, secret) leaves only the name. */
static void
test_volume_projection(void **state)
{
	static const char *const in[] = {
		"{\"name\":\"t\",\"emptyDir\":{}}",
		"{\"name\":\"m\",\"emptyDir\":{\"medium\":\"Memory\","
		"\"sizeLimit\":\"64Mi\"}}",
		"{\"name\":\"c\",\"configMap\":{\"name\":\"r-input\","
		"\"defaultMode\":420,\"items\":[{\"key\":\"a\",\"path\":\"b\"}"
		"]}}",
		"{\"name\":\"p\",\"projected\":{\"sources\":[{\"configMap\":{"
		"\"name\":\"a\",\"optional\":true}},{\"secret\":{\"name\":"
		"\"b\"}},{\"downwardAPI\":{}}]}}",
		"{\"name\":\"w\",\"persistentVolumeClaim\":{\"claimName\":"
		"\"r-workspace\"}}",
		"{\"name\":\"h\",\"hostPath\":{\"path\":\"/var\"}}",
	};
	static const char *const want[] = {
		"{\"name\":\"t\",\"emptyDir\":{}}",
		"{\"name\":\"m\",\"emptyDir\":{\"medium\":\"Memory\","
		"\"sizeLimit\":\"64Mi\"}}",
		"{\"name\":\"c\",\"configMap\":{\"name\":\"r-input\"}}",
		"{\"name\":\"p\",\"projected\":{\"sources\":[{\"configMap\":{"
		"\"name\":\"a\"}},{\"secret\":{\"name\":\"b\"}},{}]}}",
		"{\"name\":\"w\",\"persistentVolumeClaim\":{\"claimName\":"
		"\"r-workspace\",\"readOnly\":false}}",
		"{\"name\":\"h\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		json_object *v = json_tokener_parse(in[i]);
		json_object *m = agentrun_sandbox_volume(v);
		fakesup_assert_json(m, want[i]);
		json_object_put(m);
		json_object_put(v);
	}
}

/* upstream sandboxPhaseFromConditions, sandboxConditionMessage,
 * refineSandboxPhaseFromPod. */
static void
test_phase_helpers(void **state)
{
	json_object *none = json_tokener_parse("{}");
	json_object *ready = json_tokener_parse(
	        "{\"status\":{\"conditions\":[{\"type\":\"Other\",\"status\":"
	        "\"True\"},{\"type\":\"Ready\",\"status\":\"True\","
	        "\"message\":\"up\"}]}}");
	json_object *notready = json_tokener_parse(
	        "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	        "\"False\",\"message\":\"pulling\"}]}}");
	json_object *bad = json_tokener_parse(
	        "{\"status\":{\"conditions\":[7,{\"type\":\"Ready\"}]}}");
	json_object *ok = json_tokener_parse("{\"status\":{\"phase\":"
	                                     "\"Succeeded\"}}");
	json_object *ko
	        = json_tokener_parse("{\"status\":{\"phase\":\"Failed\"}}");
	json_object *up
	        = json_tokener_parse("{\"status\":{\"phase\":\"Running\"}}");

	(void)state;
	assert_string_equal(agentrun_sandbox_phase(none), "");
	assert_string_equal(agentrun_sandbox_phase(ready), "Running");
	/* Ready False is not a failure: the pod decides */
	assert_string_equal(agentrun_sandbox_phase(notready), "");
	assert_string_equal(agentrun_sandbox_phase(bad), "");
	assert_string_equal(agentrun_sandbox_message(ready), "up");
	assert_string_equal(agentrun_sandbox_message(notready), "pulling");
	assert_string_equal(agentrun_sandbox_message(none), "");
	assert_string_equal(agentrun_sandbox_message(bad), "");
	assert_string_equal(agentrun_sandbox_pod_phase(ok, ""), "Completed");
	assert_string_equal(agentrun_sandbox_pod_phase(ko, "x"), "Failed");
	assert_string_equal(
	        agentrun_sandbox_pod_phase(up, "Running"), "Running");
	assert_string_equal(agentrun_sandbox_pod_phase(NULL, ""), "");
	json_object_put(none);
	json_object_put(ready);
	json_object_put(notready);
	json_object_put(bad);
	json_object_put(ok);
	json_object_put(ko);
	json_object_put(up);
}

/* upstream reconcilePendingAgentSandbox + buildSandboxCR: the shared
 * steps (ServiceAccount, input ConfigMap), then the Sandbox sb-<run>
 * instead of a Job: labels (agent-sandbox "true" among them) on the CR
 * and its pod template, the run's controller ownerReference, the pod
 * spec's fixed fields, runtimeClassName, the Job's containers and
 * volumes projected; status Running, startedAt, sandboxName; requeue
 * 5 s. */
static void
test_pending_sandbox(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, "");
	json_object *res, *sb, *ps, *st, *c0;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0);
	assert_non_null(find_w(res, "create", "serviceaccounts", NULL));
	assert_non_null(find_w(res, "create", "configmaps", "r-input"));
	assert_null(find_w(res, "create", "jobs", NULL));
	assert_null(find_w(res, "create", "sandboxclaims", NULL));
	sb = jx_get(find_w(res, "create", "sandboxes", "sb-r"), "object");
	assert_non_null(sb);
	assert_string_equal(
	        jx_get_str(sb, "apiVersion"), "agents.x-k8s.io/v1alpha1");
	assert_string_equal(jx_get_str(sb, "kind"), "Sandbox");
	assert_string_equal(jx_get_str(sb, "metadata.namespace"), "ns");
	fakesup_assert_json(jx_get(sb, "metadata.labels"),
	        "{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"
	        "instance\":\"alice\",\"sympozium.ai/component\":"
	        "\"agent-run\",\"sympozium.ai/agent-sandbox\":\"true\","
	        "\"app.kubernetes.io/part-of\":\"sympozium\","
	        "\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}");
	fakesup_assert_json(jx_get(sb, "spec.podTemplate.metadata.labels"),
	        json_object_to_json_string(jx_get(sb, "metadata.labels")));
	fakesup_assert_json(jx_get(sb, "metadata.ownerReferences"),
	        "[{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"name\":\"r\",\"uid\":\"u1\",\"controller\":"
	        "true,\"blockOwnerDeletion\":true}]");
	ps = jx_get(sb, "spec.podTemplate.spec");
	assert_string_equal(
	        jx_get_str(ps, "serviceAccountName"), "sympozium-agent");
	assert_string_equal(jx_get_str(ps, "restartPolicy"), "Never");
	assert_string_equal(jx_get_str(ps, "runtimeClassName"), "gvisor");
	fakesup_assert_json(jx_get(ps, "securityContext"),
	        "{\"runAsNonRoot\":true,\"runAsUser\":1000,\"fsGroup\":1000}");
	/* the Job's agent and ipc-bridge, projected */
	assert_int_equal(jx_array_len(jx_get(ps, "containers")), 2);
	c0 = json_object_array_get_idx(jx_get(ps, "containers"), 0);
	assert_string_equal(jx_get_str(c0, "name"), "agent");
	assert_null(jx_get(c0, "args"));
	assert_null(jx_get(c0, "ports"));
	assert_true(jx_array_len(jx_get(ps, "volumes")) > 0);
	assert_null(jx_get(ps, "initContainers"));
	assert_null(jx_get(ps, "seccompProfile"));
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "Running");
	assert_string_equal(
	        jx_get_str(st, "startedAt"), "2026-01-01T00:00:00Z");
	assert_string_equal(jx_get_str(st, "sandboxName"), "sb-r");
	assert_null(jx_get(st, "sandboxClaimName"));
	assert_null(jx_get(st, "jobName"));
	evtest_assert(res, nwrites(res) - 1, "r", "Normal", "Started",
	        "Created Sandbox sb-r");
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	assert_int_equal(num(res, "after"), 5000);
	json_object_put(res);
	free(r);
}

/* The containers and volumes are the Job builder's (agentrun_job.c),
 * projected one by one: the same names in the same order as the Job the
 * same run gets without agentSandbox. */
static void
test_same_containers_as_job(void **state)
{
	struct fakesup *f = *state;
	char *sr = mkrun(SBX ",\"sandbox\":{\"enabled\":true}", "");
	char *jr = mkrun(",\"sandbox\":{\"enabled\":true}", "");
	json_object *rs, *rj, *ps, *js;
	static const char *const keys[] = { "containers", "volumes" };

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	rs = run(f, sr, NULL, T0);
	rj = run(f, jr, NULL, T0);
	ps = jx_get(find_w(rs, "create", "sandboxes", "sb-r"),
	        "object.spec.podTemplate.spec");
	js = jx_get(find_w(rj, "create", "jobs", "r"),
	        "object.spec.template.spec");
	assert_non_null(ps);
	assert_non_null(js);
	for (size_t k = 0; k < 2; k++) {
		json_object *a = jx_get(ps, keys[k]), *b = jx_get(js, keys[k]);
		assert_int_equal(jx_array_len(a), jx_array_len(b));
		for (size_t i = 0; i < jx_array_len(a); i++) {
			json_object *x = json_object_array_get_idx(a, i);
			json_object *y = json_object_array_get_idx(b, i);
			json_object *p = k == 0 ? agentrun_sandbox_container(y)
			                        : agentrun_sandbox_volume(y);
			assert_true(jx_equal(x, p));
			json_object_put(p);
		}
	}
	json_object_put(rs);
	json_object_put(rj);
	free(sr);
	free(jr);
}

/* upstream buildSandboxClaimCR: with warmPoolRef, the SandboxClaim
 * sbc-<run> naming the pool, the same labels and owner, no Sandbox;
 * status sandboxClaimName and (the created claim's name) sandboxName. */
static void
test_pending_claim(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(CLAIM, "");
	json_object *res, *cl, *st;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "create", "sandboxes", NULL));
	assert_null(find_w(res, "create", "jobs", NULL));
	cl = jx_get(find_w(res, "create", "sandboxclaims", "sbc-r"), "object");
	assert_non_null(cl);
	assert_string_equal(jx_get_str(cl, "kind"), "SandboxClaim");
	fakesup_assert_json(jx_get(cl, "spec"),
	        "{\"warmPoolRef\":{\"name\":\"wp-alice\"}}");
	assert_string_equal(
	        json_object_get_string(jx_getv(cl, "metadata", "labels",
	                CONTRACT_LABEL_AGENT_SANDBOX, NULL)),
	        "true");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(
	                           jx_get(cl, "metadata.ownerReferences"), 0),
	                "uid"),
	        "u1");
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "sandboxClaimName"), "sbc-r");
	assert_string_equal(jx_get_str(st, "sandboxName"), "sbc-r");
	assert_string_equal(jx_get_str(st, "phase"), "Running");
	evtest_assert(res, nwrites(res) - 1, "r", "Normal", "Started",
	        "Created SandboxClaim sbc-r");
	json_object_put(res);
	free(r);
}

/* Without the CRDs (no CONTRACT_ENV_AGENT_SANDBOX): upstream's failure
 * when its dynamic client is nil. */
static void
test_absent(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, "");
	json_object *res;

	unsetenv(CONTRACT_ENV_AGENT_SANDBOX);
	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "create", "sandboxes", NULL));
	assert_null(find_w(res, "create", "jobs", NULL));
	assert_string_equal(
	        jx_get_str(status_of(res), "error"), AGENTRUN_SANDBOX_ABSENT);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Failed");
	json_object_put(res);
	free(r);
}

#define SANDBOX_CHILD(cond)                                                   \
	"[{\"apiVersion\":\"agents.x-k8s.io/v1alpha1\",\"kind\":"             \
	"\"Sandbox\",\"metadata\":{\"name\":\"sb-r\",\"namespace\":\"ns\"},"  \
	"\"status\":{\"conditions\":[" cond "]}}]"
#define READY_TRUE "{\"type\":\"Ready\",\"status\":\"True\"}"
#define READY_FALSE(msg)                                                      \
	"{\"type\":\"Ready\",\"status\":\"False\",\"message\":\"" msg "\"}"

static void
add_pod(struct fakesup *f, const char *name, const char *phase, bool own)
{
	char *p = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":"
	                    "\"ns\",\"labels\":{\"%s\":\"r\"}},\"status\":{"
	                    "\"phase\":\"%s\"}}",
	        name, own ? CONTRACT_LABEL_AGENT_RUN : "other", phase);

	fakesup_add_json(f, "pods", p);
	free(p);
}

/* upstream reconcileRunningAgentSandbox: the Sandbox Ready and its pod
 * running: podName is the Sandbox's name, requeue 5 s, nothing else. */
static void
test_running_waits(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, RUNNING("sb-r"));
	json_object *res;

	add_pod(f, "sb-r", "Running", true);
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 60000);
	assert_string_equal(jx_get_str(status_of(res), "podName"), "sb-r");
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Running");
	assert_int_equal(nwrites(res), 1);
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	assert_int_equal(num(res, "after"), 5000);
	json_object_put(res);
	/* no spec.timeout: no default either, an hour later still waits */
	res = run(f, r, SANDBOX_CHILD(READY_FALSE("starting")), T0 + 3600000);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Running");
	assert_int_equal(num(res, "after"), 5000);
	json_object_put(res);
	free(r);
}

/* Case "Completed": the pod succeeded; the result from its agent log,
 * memory written back (extractAndPersistMemory), Succeeded. */
static void
test_running_completes(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, RUNNING("sb-r") ",\"podName\":\"sb-r\"");
	json_object *res, *st;

	add_pod(f, "sb-r", "Succeeded", true);
	fakesup_add_json(f, "configmaps",
	        "{\"metadata\":{\"name\":\"alice-memory\",\"namespace\":"
	        "\"ns\"}}");
	fakesup_add_log(f, "ns", "sb-r",
	        "__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":"
	        "\"done\"}__SYMPOZIUM_END__\n__SYMPOZIUM_MEMORY__ keep "
	        "__SYMPOZIUM_MEMORY_END__\n");
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 60000);
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "Succeeded");
	assert_string_equal(jx_get_str(st, "result"), "done");
	assert_string_equal(
	        jx_get_str(st, "completedAt"), "2026-01-01T00:01:00Z");
	assert_non_null(find_w(res, "update", "configmaps", "alice-memory"));
	evtest_assert(res, nwrites(res) - 1, "r", "Normal", "Succeeded", NULL);
	assert_int_equal(num(res, "v"), IPC_V_DONE);
	json_object_put(res);
	/* Completed with an error in the log: Failed with it, no memory */
	fakesup_add_log(f, "ns", "sb-r",
	        "__SYMPOZIUM_RESULT__{\"status\":\"error\",\"error\":"
	        "\"model refused\"}__SYMPOZIUM_END__\n__SYMPOZIUM_MEMORY__ "
	        "keep __SYMPOZIUM_MEMORY_END__\n");
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 60000);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Failed");
	assert_string_equal(
	        jx_get_str(status_of(res), "error"), "model refused");
	assert_null(find_w(res, "update", "configmaps", "alice-memory"));
	json_object_put(res);
	free(r);
}

/* Case "Failed": the log's error, else the Ready condition's message
 * (sandboxConditionMessage), else "sandbox CR entered phase". */
static void
test_running_fails(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, RUNNING("sb-r"));
	json_object *res;

	add_pod(f, "sb-r", "Failed", true);
	res = run(f, r, SANDBOX_CHILD(READY_FALSE("OOMKilled")), T0 + 1000);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Failed");
	assert_string_equal(jx_get_str(status_of(res), "error"), "OOMKilled");
	assert_int_equal(num(res, "v"), IPC_V_DONE);
	json_object_put(res);
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 1000);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "sandbox CR entered phase \"Failed\"");
	json_object_put(res);
	fakesup_add_log(f, "ns", "sb-r",
	        "__SYMPOZIUM_RESULT__{\"status\":\"error\",\"error\":"
	        "\"bad key\"}__SYMPOZIUM_END__\n");
	res = run(f, r, SANDBOX_CHILD(READY_FALSE("OOMKilled")), T0 + 1000);
	assert_string_equal(jx_get_str(status_of(res), "error"), "bad key");
	json_object_put(res);
	free(r);
}

/* A Sandbox run with postRun hooks (upstream
 * reconcileRunningAgentSandbox's Completed and Failed cases): the agent's
 * end starts the postRun Job (startPostRun) instead of the final phase;
 * PostRunning with the agent's exit code, requeue, no Succeeded yet. */
static void
test_running_postrun(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX ",\"lifecycle\":{\"postRun\":[{\"name\":"
	                    "\"notify\",\"image\":\"busybox\",\"command\":"
	                    "[\"true\"]}]}",
	        RUNNING("sb-r") ",\"podName\":\"sb-r\"");
	json_object *res, *st;

	add_pod(f, "sb-r", "Succeeded", true);
	fakesup_add_log(f, "ns", "sb-r",
	        "__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":"
	        "\"done\"}__SYMPOZIUM_END__\n");
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 60000);
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "PostRunning");
	assert_string_equal(jx_get_str(st, "postRunJobName"), "r-postrun");
	assert_non_null(find_w(res, "create", "jobs", NULL));
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	/* a failed pod: the postRun Job too, with the failure's exit code */
	fakesup_reset(f);
	add_pod(f, "sb-r", "Failed", true);
	res = run(f, r, SANDBOX_CHILD(READY_FALSE("OOMKilled")), T0 + 60000);
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "PostRunning");
	assert_int_equal(num(st, "exitCode"), 1);
	json_object_put(res);
	free(r);
}

/* The Sandbox gone: Failed "sandbox CR %q not found" (the view's
 * answer, a live read in the supervisor). */
static void
test_running_sandbox_missing(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, RUNNING("sb-r"));
	json_object *res = run(f, r, NULL, T0 + 1000);

	assert_true(fakesup_was_read(f, "sandboxes", "sb-r"));
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "sandbox CR \"sb-r\" not found");
	assert_int_equal(num(res, "v"), IPC_V_DONE);
	json_object_put(res);
	free(r);
}

/* spec.timeout past startedAt while running: the Sandbox is deleted,
 * Failed "agent sandbox timed out". */
static void
test_running_timeout(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX ",\"timeout\":\"1m\"", RUNNING("sb-r"));
	json_object *res;

	add_pod(f, "sb-r", "Running", true);
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 60000);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Running");
	json_object_put(res);
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 60001);
	assert_non_null(find_w(res, "delete", "sandboxes", "sb-r"));
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "agent sandbox timed out");
	evtest_assert(res, nwrites(res) - 1, "r", "Warning", "Failed",
	        "agent sandbox timed out");
	json_object_put(res);
	free(r);
}

/* A claim's Sandbox (sbc-<run>, the agent-sandbox controller's: not a
 * child) is read by name; a pod of that name without the run's label is
 * not read (the view policy) and decides nothing; on timeout that
 * Sandbox is not deleted (the write policy: not the run's own). */
static void
test_running_claim(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(CLAIM ",\"timeout\":\"1m\"",
	        RUNNING("sbc-r") ",\"sandboxClaimName\":\"sbc-r\"");
	json_object *res;

	fakesup_add_json(f, "sandboxes",
	        "{\"metadata\":{\"name\":\"sbc-r\",\"namespace\":\"ns\"},"
	        "\"status\":{\"conditions\":[" READY_TRUE "]}}");
	add_pod(f, "sbc-r", "Succeeded", false);
	res = run(f, r, NULL, T0 + 1000);
	assert_true(fakesup_was_read(f, "sandboxes", "sbc-r"));
	assert_string_equal(jx_get_str(status_of(res), "podName"), "sbc-r");
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Running");
	assert_int_equal(num(res, "after"), 5000);
	json_object_put(res);
	res = run(f, r, NULL, T0 + 120000);
	assert_null(find_w(res, "delete", "sandboxes", NULL));
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "agent sandbox timed out");
	json_object_put(res);
	free(r);
}

/* A Running agent-sandbox run while the CRDs are not served (gone since
 * it started): upstream's "dynamic client unavailable", nothing read. */
static void
test_running_absent(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX, RUNNING("sb-r"));
	json_object *res;

	unsetenv(CONTRACT_ENV_AGENT_SANDBOX);
	fakesup_clear_log(f);
	res = run(f, r, SANDBOX_CHILD(READY_TRUE), T0 + 1000);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Failed");
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "dynamic client unavailable");
	assert_int_equal(fakesup_nreqs(f), 0);
	json_object_put(res);
	free(r);
}

/* The memory-server wait of the agent-sandbox path: its "not found"
 * message has no hint (reconcilePendingAgentSandbox, unlike
 * reconcilePending), after 120 s. */
static void
test_memory_wait_message(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(SBX ",\"skills\":[{\"skillPackRef\":\"memory\"}]", "");
	json_object *res;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0 + 60000);
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	assert_int_equal(num(res, "after"), 5000);
	assert_null(find_w(res, "create", "sandboxes", NULL));
	json_object_put(res);
	res = run(f, r, NULL, T0 + 121000);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "memory server deployment \"alice-memory\" not found after "
	        "2m1s");
	json_object_put(res);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_projection),
		cmocka_unit_test(test_volume_projection),
		cmocka_unit_test(test_phase_helpers),
		cmocka_unit_test_setup(test_pending_sandbox, reset),
		cmocka_unit_test_setup(test_same_containers_as_job, reset),
		cmocka_unit_test_setup(test_pending_claim, reset),
		cmocka_unit_test_setup(test_absent, reset),
		cmocka_unit_test_setup(test_running_waits, reset),
		cmocka_unit_test_setup(test_running_completes, reset),
		cmocka_unit_test_setup(test_running_fails, reset),
		cmocka_unit_test_setup(test_running_postrun, reset),
		cmocka_unit_test_setup(test_running_sandbox_missing, reset),
		cmocka_unit_test_setup(test_running_timeout, reset),
		cmocka_unit_test_setup(test_running_claim, reset),
		cmocka_unit_test_setup(test_running_absent, reset),
		cmocka_unit_test_setup(test_memory_wait_message, reset),
	};

	return (cmocka_run_group_tests(tests, setup, fakesup_teardown));
}
