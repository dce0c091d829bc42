/*
 * test_agentrun.c: the AgentRun reconciler driven with JSON in and writes
 * out, its view answered by an in-test supervisor end (a thread serving
 * VIEW_REQ from a little store of objects and pod logs): finalizer,
 * policy failures, the Pending writes and the Job, the Running path (Job
 * counters, a pod name found late, the agent container, timeout, missing
 * Job), completion (finalizer removal, pruning) and deletion.  The
 * server mode: test_agentrun_server.c.
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
#include "common/yamlj.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "tests/lib/testutil.h"
#include "workers/agentrun.h"

/* 2026-01-01T00:00:00Z */
#define T0 1767225600000LL

/* Runs the reconciler; returns the RESULT body (caller puts) with the
 * verdict as "v" and the delay as "after". */
static json_object *
run(struct fakesup *f, const char *obj, const char *children, int64_t now)
{
	json_object *o = obj ? json_tokener_parse(obj) : NULL;
	json_object *ch = json_tokener_parse(children ? children : "[]");
	struct fakesup_run r;
	json_object *res;
	const char *ns = jx_get_str(o, "metadata.namespace");
	const char *name = jx_get_str(o, "metadata.name");
	char key[256];

	/* the key of the object, as the supervisor sends it */
	snprintf(key, sizeof(key), "%s/%s", ns != NULL ? ns : "ns",
	        name != NULL ? name : "r");
	fakesup_run(&agentrun_reconciler, f, key, o, ch, now, &r);
	res = json_object_get(r.result);
	json_object_object_add(res, "v", json_object_new_int((int)r.verdict));
	json_object_object_add(
	        res, "after", json_object_new_int64(r.after_ms));
	fakesup_run_fini(&r);
	json_object_put(o);
	json_object_put(ch);
	return (res);
}

static size_t
nwrites(json_object *res)
{
	json_object *w = json_object_object_get(res, "writes");

	return (w != NULL ? json_object_array_length(w) : 0);
}

static json_object *
wr(json_object *res, size_t i)
{
	return (json_object_array_get_idx(
	        json_object_object_get(res, "writes"), i));
}

/* The first write with op and plural (and name when not NULL). */
static json_object *
find_w(json_object *res, const char *op, const char *plural, const char *name)
{
	for (size_t i = 0; i < nwrites(res); i++) {
		json_object *w = wr(res, i);
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

static size_t
count_w(json_object *res, const char *op, const char *plural)
{
	size_t n = 0;

	for (size_t i = 0; i < nwrites(res); i++) {
		json_object *w = wr(res, i);
		n += strcmp(jx_get_str(w, "op"), op) == 0
		        && strcmp(jx_get_str(w, "resource.plural"), plural)
		                == 0;
	}
	return (n);
}

static int64_t
verdict(json_object *res)
{
	int64_t v = -1;

	jx_get_int(res, "v", &v);
	return (v);
}

static int64_t
after(json_object *res)
{
	int64_t v = -1;

	jx_get_int(res, "after", &v);
	return (v);
}

/* An AgentRun in ns/r; meta_extra, spec_extra and status are spliced. */
static char *
mkrun(const char *meta_extra, const char *spec_extra, const char *status)
{
	return (xasprintf(
	        "{\"apiVersion\":\"sympozium.ai/"
	        "v1alpha1\",\"kind\":\"AgentRun\","
	        "\"metadata\":{\"name\":\"r\",\"namespace\":\"ns\",\"uid\":"
	        "\"u1\",\"resourceVersion\":\"5\",\"creationTimestamp\":"
	        "\"2026-01-01T00:00:00Z\",\"labels\":{\"sympozium.ai/"
	        "instance\":"
	        "\"alice\"}%s},\"spec\":{\"instanceRef\":\"alice\","
	        "\"agentId\":"
	        "\"primary\",\"sessionKey\":\"s1\",\"task\":\"do it\","
	        "\"model\":{\"provider\":\"openai\",\"model\":\"gpt-4o\","
	        "\"authSecretRef\":\"key\"}%s},\"status\":{%s}}",
	        meta_extra, spec_extra, status));
}

#define FIN ",\"finalizers\":[\"sympozium.ai/agentrun-finalizer\"]"
#define INSTANCE                                                              \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"                 \
	"\"SympoziumInstance\",\"metadata\":{\"name\":\"alice\","             \
	"\"namespace\":\"ns\"},\"spec\":{\"memory\":{\"enabled\":true},"      \
	"\"skills\":[{\"skillPackRef\":\"skillpack-web\",\"params\":"         \
	"{\"b\":\"2\",\"a\":\"1\"}}]}}"

#define JOB(st)                                                               \
	"[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"        \
	"{\"name\":\"r\",\"namespace\":\"ns\"},\"status\":{" st "}}]"
#define RUNNING                                                               \
	"\"phase\":\"Running\",\"jobName\":\"r\",\"startedAt\":"              \
	"\"2026-01-01T00:00:00Z\""

static json_object *
status_of(json_object *res)
{
	json_object *w = find_w(res, "update_status", "agentruns", NULL);

	assert_non_null(w);
	return (jx_get(w, "object.status"));
}

static void
test_gone_and_finalizer(void **state)
{
	struct fakesup *f = *state;
	json_object *res = run(f, NULL, NULL, T0);
	char *r = mkrun("", "", "");

	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	res = run(f, r, NULL, T0);
	assert_int_equal(nwrites(res), 1);
	assert_string_equal(jx_get_str(wr(res, 0), "op"), "update");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
	                            jx_get(wr(res, 0),
	                                    "object.metadata."
	                                    "finalizers"),
	                            0)),
	        CONTRACT_FINALIZER_AGENTRUN);
	json_object_put(res);
	free(r);
}

static void
test_instance_missing(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "");
	json_object *res = run(f, r, NULL, T0);
	json_object *st = status_of(res);

	assert_int_equal(nwrites(res), 2);
	evtest_assert(res, 1, "r", "Warning", "Failed", "not found");
	assert_string_equal(jx_get_str(st, "phase"), "Failed");
	assert_string_equal(
	        jx_get_str(st, "completedAt"), "2026-01-01T00:00:00Z");
	assert_string_equal(jx_get_str(st, "error"),
	        "policy validation failed: instance \"alice\" not found: "
	        "sympoziuminstances.sympozium.ai \"alice\" not found");
	json_object_put(res);
	free(r);
}

static void
test_policy_limits(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "");
	char *deep = mkrun(FIN,
	        ",\"parent\":{\"runName\":\"p\",\"sessionKey\":"
	        "\"s\",\"spawnDepth\":4}",
	        "");
	json_object *res;

	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"policyRef\":\"pol\"}}");
	res = run(f, r, NULL, T0);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "policy validation failed: policy \"pol\" not found: "
	        "sympoziumpolicies.sympozium.ai \"pol\" not found");
	json_object_put(res);
	fakesup_add_json(f, "sympoziumpolicies",
	        "{\"metadata\":{\"name\":\"pol\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"subagentPolicy\":{\"maxConcurrent\":1}}}");
	fakesup_add_json(f, "agentruns",
	        "{\"metadata\":{\"name\":\"other\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/instance\":\"alice\"}},"
	        "\"status\":{\"phase\":\"Running\"}}");
	res = run(f, deep, NULL, T0);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "policy validation failed: sub-agent depth 4 exceeds max 3");
	json_object_put(res);
	res = run(f, r, NULL, T0);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "policy validation failed: concurrency limit reached: 1/1");
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	free(r);
	free(deep);
}

static void
test_unsupported(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, ",\"mode\":\"server\"", "");
	json_object *res;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0);
	/* upstream agentrun_controller.go reconcilePendingServer: the
	 * instance's skill pack "web" is absent, so no server sidecar (the
	 * server path itself: tests/unit/test_agentrun_server.c); the input
	 * ConfigMap came first (createInputConfigMap in reconcilePending) */
	assert_int_equal(nwrites(res), 3);
	assert_non_null(find_w(res, "create", "configmaps", "r-input"));
	evtest_assert(res, 2, "r", "Warning", "Failed", "requiresServer");
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "no sidecar with requiresServer=true found");
	json_object_put(res);
	free(r);
}

/* The env value of name in a container, or NULL. */
static const char *
env_of(json_object *c, const char *name, int *pos)
{
	json_object *env = json_object_object_get(c, "env");

	for (size_t i = 0; env != NULL && i < json_object_array_length(env);
	        i++) {
		json_object *e = json_object_array_get_idx(env, i);
		if (strcmp(jx_get_str(e, "name"), name) == 0) {
			*pos = (int)i;
			return (jx_get_str(e, "value") ?: "");
		}
	}
	return (NULL);
}

static json_object *
pending_job(struct fakesup *f, const char *meta, const char *spec)
{
	char *r = mkrun(meta, spec, "");
	json_object *res = run(f, r, NULL, T0);
	json_object *job = json_object_get(
	        jx_get(find_w(res, "create", "jobs", "r"), "object"));

	assert_non_null(job);
	json_object_put(res);
	free(r);
	return (job);
}

static const char *
agent_env(json_object *job, const char *name)
{
	int pos;

	return (env_of(
	        json_object_array_get_idx(
	                jx_get(job, "spec.template.spec.containers"), 0),
	        name, &pos));
}

/* What the Pending path takes from the instance, in memory only (spec
 * 1.3 step 6): skills unless the run has its own or comes from the web
 * proxy, legacy memory, runTimeout for the Job deadline, the persona
 * pack label (the run's own when the instance has none). */
static void
test_inherit(void **state)
{
	struct fakesup *f = *state;
	json_object *job;

	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/persona-pack\":\"team\"}},"
	        "\"spec\":{\"memory\":{\"enabled\":true},\"agents\":{"
	        "\"default\":{\"runTimeout\":\"30m\"}},\"skills\":[{"
	        "\"configMapRef\":\"inst-skill\"}]}}");
	job = pending_job(f, FIN, "");
	fakesup_assert_json(jx_get(job, "spec.activeDeadlineSeconds"), "1860");
	assert_string_equal(agent_env(job, "PERSONA_PACK_NAME"), "team");
	assert_string_equal(agent_env(job, "MEMORY_ENABLED"), "true");
	fakesup_assert_json(
	        json_object_array_get_idx(
	                jx_get(job, "spec.template.spec.volumes"), 3),
	        "{\"name\":\"skills\",\"projected\":{\"sources\":[{"
	        "\"configMap\":{\"name\":\"inst-skill\",\"optional\":true}}]}"
	        "}");
	json_object_put(job);
	/* the run's own timeout and skills win */
	job = pending_job(f, FIN,
	        ",\"timeout\":\"90s\",\"skills\":[{\"configMapRef\":\"own\"}"
	        "]");
	fakesup_assert_json(jx_get(job, "spec.activeDeadlineSeconds"), "150");
	assert_string_equal(jx_get_str(json_object_array_get_idx(
	                                       jx_get(job,
	                                               "spec.template.spec."
	                                               "volumes.3.projected."
	                                               "sources"),
	                                       0),
	                            "configMap.name"),
	        "own");
	json_object_put(job);
	/* web-proxy runs do not inherit skills */
	job = pending_job(f,
	        FIN ",\"labels\":{\"sympozium.ai/source\":\"web-proxy\"}", "");
	fakesup_assert_json(
	        json_object_array_get_idx(
	                jx_get(job, "spec.template.spec.volumes"), 3),
	        "{\"name\":\"skills\",\"emptyDir\":{}}");
	json_object_put(job);
	fakesup_reset(f);
	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"}}");
	job = pending_job(f,
	        FIN ",\"labels\":{\"sympozium.ai/persona-pack\":\"own\"}", "");
	assert_string_equal(agent_env(job, "PERSONA_PACK_NAME"), "own");
	assert_null(agent_env(job, "MEMORY_ENABLED"));
	json_object_put(job);
}

static void
check_job(json_object *job)
{
	json_object *pod = jx_get(job, "spec.template.spec");
	json_object *cs = json_object_object_get(pod, "containers");
	json_object *agent = json_object_array_get_idx(cs, 0);
	json_object *skill = json_object_array_get_idx(cs, 3);
	int64_t v = 0;
	int pa = -1, pb = -1;

	assert_string_equal(jx_get_str(job, "metadata.name"), "r");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(
	                           jx_get(job, "metadata.ownerReferences"), 0),
	                "uid"),
	        "u1");
	assert_string_equal(
	        json_object_get_string(jx_getv(job, "spec", "template",
	                "metadata", "labels", "sympozium.ai/component", NULL)),
	        "agent-run");
	assert_int_equal(jx_get_int(job, "spec.activeDeadlineSeconds", &v), 0);
	assert_int_equal(v, 660);
	assert_int_equal(
	        jx_get_int(job, "spec.ttlSecondsAfterFinished", &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(json_object_array_length(cs), 4);
	assert_string_equal(jx_get_str(agent, "name"), "agent");
	assert_string_equal(jx_get_str(agent, "image"),
	        "ghcr.io/sympozium-ai/sympozium/agent-runner:latest");
	assert_string_equal(env_of(agent, "MEMORY_ENABLED", &pa), "true");
	assert_string_equal(env_of(agent, "LOG_LEVEL", &pb), "debug");
	assert_true(pa < pb);
	assert_string_equal(env_of(agent, "TOOLS_ENABLED", &pa), "true");
	assert_true(pb < pa);
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(cs, 1), "name"),
	        "ipc-bridge");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(cs, 2), "name"),
	        "sandbox");
	assert_string_equal(jx_get_str(skill, "name"), "skill-web");
	assert_string_equal(env_of(skill, "SKILL_A", &pa), "1");
	assert_string_equal(env_of(skill, "SKILL_B", &pb), "2");
	assert_true(pa < pb);
	assert_string_equal(
	        jx_get_str(pod, "serviceAccountName"), "sympozium-agent");
	assert_string_equal(
	        jx_get_str(pod, "securityContext.seccompProfile.type"),
	        "RuntimeDefault");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(
	                           json_object_object_get(pod, "volumes"), 4),
	                "configMap.name"),
	        "alice-memory");
}

static void
test_pending_creates(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN,
	        ",\"timeout\":\"10m\",\"sandbox\":{\"enabled\":true},"
	        "\"env\":{\"LOG_LEVEL\":\"debug\"}",
	        "");
	json_object *res, *st, *w;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks",
	        "{\"metadata\":{\"name\":\"web\",\"namespace\":"
	        "\"sympozium-system\"},\"spec\":{\"sidecar\":{\"image\":"
	        "\"img\","
	        "\"rbac\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
	        "\"verbs\":[\"get\"]}],\"clusterRBAC\":[{\"apiGroups\":[\"\"],"
	        "\"resources\":[\"nodes\"],\"verbs\":[\"get\"]}]}}}");
	fakesup_add_json(f, "configmaps",
	        "{\"metadata\":{\"name\":\"skillpack-web\",\"namespace\":"
	        "\"sympozium-system\"},\"data\":{\"s.md\":\"x\"}}");
	res = run(f, r, NULL, T0);
	assert_non_null(
	        find_w(res, "create", "serviceaccounts", "sympozium-agent"));
	w = find_w(res, "create", "configmaps", "r-input");
	assert_string_equal(jx_get_str(w, "object.data.task"), "do it");
	w = find_w(res, "create", "configmaps", "skillpack-web");
	assert_non_null(w);
	assert_string_equal(jx_get_str(w, "object.metadata.namespace"), "ns");
	assert_string_equal(json_object_get_string(jx_getv(
	                            w, "object", "data", "s.md", NULL)),
	        "x");
	assert_non_null(
	        find_w(res, "create", "roles", "sympozium-skill-web-r"));
	assert_non_null(find_w(
	        res, "create", "rolebindings", "sympozium-skill-web-r"));
	w = find_w(res, "create", "clusterroles", "sympozium-skill-web-r");
	assert_null(jx_get(w, "object.metadata.ownerReferences"));
	assert_non_null(find_w(res, "create", "clusterrolebindings",
	        "sympozium-skill-web-r"));
	w = find_w(res, "create", "jobs", "r");
	assert_non_null(w);
	check_job(json_object_object_get(w, "object"));
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "Running");
	assert_string_equal(jx_get_str(st, "jobName"), "r");
	assert_string_equal(
	        jx_get_str(st, "startedAt"), "2026-01-01T00:00:00Z");
	assert_int_equal(evtest_count(res), 1);
	evtest_assert(res, nwrites(res) - 1, "r", "Normal", "Started",
	        "Created Job r");
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	assert_int_equal(after(res), 5000);
	json_object_put(res);
	free(r);
}

/* spec 1.3 step 7: the instance's MCP servers, resolved from MCPServers
 * (the run's namespace first, then sympozium-system), in <run>-mcp-servers;
 * none reachable: no ConfigMap. */
static void
test_mcp_config(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "");
	json_object *res, *w;

	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"mcpServers\":[{\"name\":\"gh\",\"toolsPrefix\":"
	        "\"gh\",\"timeout\":30,\"authSecret\":\"gh-tok\"},{\"name\":"
	        "\"gone\",\"toolsPrefix\":\"g\"},{\"name\":\"fixed\","
	        "\"url\":\"http://fixed:9/mcp\",\"toolsPrefix\":\"f\"}]}}");
	fakesup_add_json(f, "mcpservers",
	        "{\"metadata\":{\"name\":\"gh\",\"namespace\":"
	        "\"sympozium-system\"},\"spec\":{\"toolsAllow\":[\"issues\"]},"
	        "\"status\":{\"ready\":true,\"url\":\"http://gh.sympozium-"
	        "system.svc:8080/mcp\"}}");
	res = run(f, r, NULL, T0);
	w = find_w(res, "create", "configmaps", "r-mcp-servers");
	assert_non_null(w);
	assert_true(fakesup_was_read(f, "mcpservers", "gone"));
	fakesup_assert_json(jx_get(w, "object.metadata"),
	        "{\"name\":\"r-mcp-servers\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\","
	        "\"sympozium.ai/instance\":\"alice\",\"sympozium.ai/"
	        "component\":\"mcp-config\"},\"ownerReferences\":[{"
	        "\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"name\":\"r\",\"uid\":\"u1\",\"controller\":"
	        "true,\"blockOwnerDeletion\":true}]}");
	assert_string_equal(json_object_get_string(jx_getv(w, "object", "data",
	                            "mcp-servers.yaml", NULL)),
	        "servers:\n"
	        "  - name: gh\n"
	        "    url: http://gh.sympozium-system.svc:8080/mcp\n"
	        "    toolsPrefix: gh\n"
	        "    timeout: 30\n"
	        "    auth:\n"
	        "      type: bearer\n"
	        "      tokenEnv: MCP_AUTH_GH\n"
	        "    toolsAllow:\n"
	        "      - issues\n"
	        "  - name: fixed\n"
	        "    url: http://fixed:9/mcp\n"
	        "    toolsPrefix: f\n"
	        "    timeout: 30\n");
	assert_string_equal(jx_get_str(wr(res, 2), "object.metadata.name"),
	        "r-mcp-servers");
	/* the resolved servers reach the Job (agentrun_controller.go
	 * buildContainers): mcp-discover, mcp-bridge, MCP_AUTH_GH */
	w = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_string_equal(
	        jx_get_str(w, "spec.template.spec.initContainers.0.name"),
	        "mcp-discover");
	assert_string_equal(
	        jx_get_str(w, "spec.template.spec.containers.2.name"),
	        "mcp-bridge");
	assert_string_equal(jx_get_str(w,
	                            "spec.template.spec.containers.2."
	                            "env.4.valueFrom.secretKeyRef.name"),
	        "gh-tok");
	json_object_put(res);
	fakesup_remove(f, "mcpservers", NULL, "gh");
	res = run(f, r, NULL, T0);
	w = find_w(res, "create", "configmaps", "r-mcp-servers");
	assert_string_equal(json_object_get_string(jx_getv(w, "object", "data",
	                            "mcp-servers.yaml", NULL)),
	        "servers:\n"
	        "  - name: fixed\n"
	        "    url: http://fixed:9/mcp\n"
	        "    toolsPrefix: f\n"
	        "    timeout: 30\n");
	json_object_put(res);
	fakesup_reset(f);
	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"mcpServers\":[{\"name\":\"gone\","
	        "\"toolsPrefix\":\"g\"}]}}");
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "create", "configmaps", "r-mcp-servers"));
	w = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_non_null(w);
	assert_null(jx_get(w, "spec.template.spec.initContainers"));
	json_object_put(res);
	free(r);
}

/* A run failed in Pending: exactly two writes, the status {phase: Failed,
 * completedAt: now, error} and its Warning Failed event, and verdict
 * done. */
static void
assert_failed_only(json_object *res, const char *error)
{
	char *want = xasprintf("{\"phase\":\"Failed\",\"completedAt\":"
	                       "\"2026-01-01T00:00:00Z\",\"error\":\"%s\"}",
	        error);

	assert_int_equal(nwrites(res), 2);
	fakesup_assert_json(status_of(res), want);
	evtest_assert(res, 1, NULL, "Warning", "Failed", NULL);
	assert_int_equal(verdict(res), IPC_V_DONE);
	free(want);
}

static void
fails_with(struct fakesup *f, const char *spec_extra, const char *error)
{
	char *r = mkrun(FIN, spec_extra, "");
	json_object *res = run(f, r, NULL, T0);

	assert_failed_only(res, error);
	json_object_put(res);
	free(r);
}

/* Bad input fails the run in Pending with a clear error and creates
 * nothing: an invalid or non-positive timeout, gate hooks in the wrong
 * place, agent sandboxes (not supported); a server
 * run without a server sidecar: test_unsupported. */
static void
test_bad_input(void **state)
{
	struct fakesup *f = *state;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fails_with(f, ",\"timeout\":\"10 minutes\"",
	        "invalid timeout \\\"10 minutes\\\": want a duration such as "
	        "\\\"10m\\\" or \\\"1h30m\\\"");
	fails_with(f, ",\"timeout\":\"-5m\"",
	        "invalid timeout \\\"-5m\\\": must be positive");
	fails_with(f, ",\"timeout\":\"0s\"",
	        "invalid timeout \\\"0s\\\": must be positive");
	fails_with(f,
	        ",\"lifecycle\":{\"preRun\":[{\"name\":\"a\",\"image\":\"i\","
	        "\"gate\":true}]}",
	        /* upstream agentrun_controller.go validateGateHooks */
	        "gate hook validation failed: gate: true is only valid on "
	        "postRun hooks, not preRun (hook \\\"a\\\")");
	fails_with(f,
	        ",\"lifecycle\":{\"postRun\":[{\"name\":\"a\",\"image\":\"i\","
	        "\"gate\":true},{\"name\":\"b\",\"image\":\"i\",\"gate\":"
	        "true}]}",
	        "gate hook validation failed: at most one postRun hook may "
	        "set gate: true, found 2");
	/* a bad timeout on the instance is only ignored (spec 1.3 step 6) */
	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"agents\":{\"default\":{\"runTimeout\":"
	        "\"soon\"}}}}");
	{
		char *r = mkrun(FIN, "", "");
		json_object *res = run(f, r, NULL, T0);
		int64_t v = 0;
		assert_int_equal(
		        jx_get_int(find_w(res, "create", "jobs", "r"),
		                "object.spec.activeDeadlineSeconds", &v),
		        0);
		assert_int_equal(v, 600);
		json_object_put(res);
		free(r);
	}
}

/* The upstream agent-sandbox samples: the runs fail with the message
 * upstream gives when the agent-sandbox CRDs are absent; the instance's
 * agents.default.agentSandbox is not read by this controller, so a plain
 * run of that instance gets a Job. */
static void
test_agent_sandbox_samples(void **state)
{
	struct fakesup *f = *state;
	char *path
	        = testutil_shared_path("upstream/sympozium-v1alpha1/samples/"
	                               "agentrun_agent_sandbox.yaml");
	char *ipath = testutil_shared_path("upstream/sympozium-v1alpha1/"
	                                   "samples/"
	                                   "sympoziuminstance_agent_sandbox."
	                                   "yaml");
	size_t len = 0;
	char *text = testutil_read_file(path, &len), err[256];
	json_object *docs = yamlj_parse_all(text, len, err, sizeof(err));
	json_object *inst, *res;
	char *r;

	assert_non_null(docs);
	assert_int_equal(json_object_array_length(docs), 2);
	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":"
	        "\"default\"}}");
	for (size_t i = 0; i < 2; i++) {
		json_object *run_o = json_object_array_get_idx(docs, i);
		jx_setv(run_o, json_object_new_string("u1"), "metadata", "uid",
		        NULL);
		jx_setv(run_o,
		        json_tokener_parse(
		                "[\"sympozium.ai/agentrun-finalizer\"]"),
		        "metadata", "finalizers", NULL);
		res = run(f, json_object_to_json_string(run_o), NULL, T0);
		assert_failed_only(res,
		        "agent-sandbox mode requires dynamic client "
		        "(agent-sandbox CRDs not available)");
		json_object_put(res);
	}
	free(text);
	text = testutil_read_file(ipath, &len);
	inst = yamlj_parse(text, len, err, sizeof(err));
	assert_non_null(inst);
	jx_setv(inst, json_object_new_string("ns"), "metadata", "namespace",
	        NULL);
	jx_setv(inst, json_object_new_string("alice"), "metadata", "name",
	        NULL);
	fakesup_add(f, "sympoziuminstances", "ns", "alice", inst);
	fakesup_add_json(f, "sympoziumpolicies",
	        "{\"metadata\":{\"name\":\"restrictive\",\"namespace\":"
	        "\"ns\"},\"spec\":{}}");
	r = mkrun(FIN, "", "");
	res = run(f, r, NULL, T0);
	assert_non_null(find_w(res, "create", "jobs", "r"));
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Running");
	json_object_put(res);
	free(r);
	free(text);
	free(path);
	free(ipath);
	json_object_put(docs);
}

/* A skill whose SkillPack exists in neither namespace is skipped (no
 * sidecar, no RBAC) but its ConfigMap is still projected (optional);
 * a view error ends the reconcile with an error and no write. */
static void
test_missing_skillpack_and_view_error(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN,
	        ",\"skills\":[{\"skillPackRef\":\"skillpack-nope\"}]", "");
	json_object *res, *w;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0);
	assert_non_null(strstr(fakesup_log(f), "get skillpacks ns/nope"));
	assert_non_null(strstr(
	        fakesup_log(f), "get skillpacks sympozium-system/nope"));
	w = find_w(res, "create", "jobs", "r");
	assert_int_equal(json_object_array_length(jx_get(
	                         w, "object.spec.template.spec.containers")),
	        2);
	fakesup_assert_json(
	        json_object_array_get_idx(jx_get(w,
	                                          "object.spec.template.spec."
	                                          "volumes"),
	                3),
	        "{\"name\":\"skills\",\"projected\":{\"sources\":[{"
	        "\"configMap\":{\"name\":\"skillpack-nope\",\"optional\":"
	        "true}}]}}");
	assert_int_equal(count_w(res, "create", "roles"), 0);
	assert_int_equal(count_w(res, "create", "configmaps"), 1);
	json_object_put(res);
	fakesup_fail(f, "skillpacks", NULL, "connection refused");
	res = run(f, r, NULL, T0);
	assert_int_equal(verdict(res), IPC_V_ERROR);
	assert_null(find_w(res, "create", "jobs", NULL));
	assert_null(find_w(res, "update_status", "agentruns", NULL));
	json_object_put(res);
	free(r);
}

/* Status writes that change nothing are not sent: a pod name found while
 * the Job runs is written once; the next poll writes nothing. */
static void
test_no_op_status(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING);
	char *r2 = mkrun(FIN, "", RUNNING ",\"podName\":\"r-abc\"");
	json_object *res;

	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"r-abc\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\"}},\"spec\":"
	        "{\"containers\":[{\"name\":\"agent\"},{\"name\":"
	        "\"ipc-bridge\"}]}}");
	res = run(f, r, JOB("\"active\":1"), T0 + 1000);
	assert_int_equal(nwrites(res), 1);
	fakesup_assert_json(
	        status_of(res), "{" RUNNING ",\"podName\":\"r-abc\"}");
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	res = run(f, r2, JOB("\"active\":1"), T0 + 6000);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	assert_int_equal(after(res), 5000);
	json_object_put(res);
	free(r);
	free(r2);
}

/* The upstream defect: the pod name found in this reconcile is used at
 * once, so a run whose Job already finished keeps its result. */
static void
test_succeeded_late_pod(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING);
	json_object *res, *st, *w;

	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"r-abc\",\"namespace\":\"ns\","
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\"}}}");
	fakesup_add_json(f, "configmaps",
	        "{\"metadata\":{\"name\":\"alice-memory\",\"namespace\":"
	        "\"ns\"}}");
	fakesup_add_log(f, "ns", "r-abc",
	        "__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":"
	        "\"done\",\"metrics\":{\"inputTokens\":3,\"outputTokens\":4}}"
	        "__SYMPOZIUM_END__\n__SYMPOZIUM_MEMORY__ remember "
	        "__SYMPOZIUM_MEMORY_END__\n");
	res = run(f, r, JOB("\"succeeded\":1"), T0 + 60000);
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "Succeeded");
	assert_string_equal(jx_get_str(st, "podName"), "r-abc");
	assert_string_equal(jx_get_str(st, "result"), "done");
	assert_string_equal(
	        jx_get_str(st, "completedAt"), "2026-01-01T00:01:00Z");
	int64_t tot = 0;
	assert_int_equal(jx_get_int(st, "tokenUsage.totalTokens", &tot), 0);
	assert_int_equal(tot, 7);
	w = find_w(res, "update", "configmaps", "alice-memory");
	assert_string_equal(json_object_get_string(jx_getv(
	                            w, "object", "data", "MEMORY.md", NULL)),
	        "remember");
	assert_int_equal(evtest_count(res), 1);
	evtest_assert(res, nwrites(res) - 1, "r", "Normal", "Succeeded", NULL);
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	free(r);
}

/* Found by the chaos suite: a transient error reading the agent's log
 * (a 503 on pods/log) must not complete the run with an empty result;
 * the reconcile ends with an error verdict (backoff) and writes nothing,
 * and the next pass harvests the result. */
static void
test_log_error_retried(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING ",\"podName\":\"p\"");
	json_object *res;

	fakesup_add_log(f, "ns", "p",
	        "__SYMPOZIUM_RESULT__{\"response\":\"kept\"}"
	        "__SYMPOZIUM_END__");
	fakesup_fail(f, "pods/log", NULL, "injected 503");
	res = run(f, r, JOB("\"succeeded\":1"), T0);
	assert_int_equal(verdict(res), IPC_V_ERROR);
	assert_int_equal(nwrites(res), 0);
	json_object_put(res);
	fakesup_fail(f, "pods/log", NULL, NULL);
	res = run(f, r, JOB("\"succeeded\":1"), T0);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Succeeded");
	assert_string_equal(jx_get_str(status_of(res), "result"), "kept");
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	free(r);
}

/* Found by the chaos suite: a finished Job whose pod is not in the cache
 * yet is waited for (polled) for AGENTRUN_POD_GRACE_MS after its
 * completion, then the run completes without a log. */
static void
test_finished_job_pod_pending(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING);
	json_object *res;

	res = run(f, r,
	        JOB("\"succeeded\":1,\"completionTime\":"
	            "\"2026-01-01T00:00:10Z\""),
	        T0 + 20000);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	assert_int_equal(after(res), AGENTRUN_POLL_MS);
	assert_int_equal(nwrites(res), 0);
	json_object_put(res);
	res = run(f, r,
	        JOB("\"succeeded\":1,\"completionTime\":"
	            "\"2026-01-01T00:00:10Z\""),
	        T0 + 10000 + AGENTRUN_POD_GRACE_MS);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Succeeded");
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	free(r);
}

/* Later upstream fix #228 (agentrun_controller.go reconcileRunning,
 * skipRun, commit 056421c): a log whose result has status "skipped"
 * makes the run Skipped (terminal) with completedAt and the reason as
 * result, whether the Job succeeded or failed; postRun hooks and the
 * memory write-back are bypassed.  The Event (ours) is Normal Skipped. */
static void
test_skipped(void **state)
{
	struct fakesup *f = *state;
	const char *jobs[] = { JOB("\"succeeded\":1"), JOB("\"failed\":1") };
	const char *specs[] = { "",
		",\"lifecycle\":{\"postRun\":[{\"name\":\"notify\","
		"\"image\":\"notify:1\"}]}" };
	json_object *res, *st;

	fakesup_add_json(f, "configmaps",
	        "{\"metadata\":{\"name\":\"alice-memory\",\"namespace\":"
	        "\"ns\"}}");
	fakesup_add_log(f, "ns", "p",
	        "__SYMPOZIUM_RESULT__{\"status\":\"skipped\",\"response\":"
	        "\"nothing to do\"}__SYMPOZIUM_END__\n__SYMPOZIUM_MEMORY__ "
	        "remember __SYMPOZIUM_MEMORY_END__\n");
	for (size_t i = 0; i < 2; i++) {
		for (size_t k = 0; k < 2; k++) {
			char *r = mkrun(
			        FIN, specs[k], RUNNING ",\"podName\":\"p\"");
			res = run(f, r, jobs[i], T0 + 60000);
			st = status_of(res);
			assert_string_equal(
			        jx_get_str(st, "phase"), "Skipped");
			assert_string_equal(
			        jx_get_str(st, "result"), "nothing to do");
			assert_string_equal(jx_get_str(st, "completedAt"),
			        "2026-01-01T00:01:00Z");
			assert_null(jx_get(st, "error"));
			assert_null(find_w(
			        res, "update", "configmaps", "alice-memory"));
			assert_null(find_w(res, "create", "jobs", NULL));
			evtest_assert(res, nwrites(res) - 1, "r", "Normal",
			        "Skipped", "nothing to do");
			assert_int_equal(verdict(res), IPC_V_DONE);
			json_object_put(res);
			free(r);
		}
	}
	/* Skipped is terminal: no finalizer is added to such a run */
	char *r = mkrun("", "", "\"phase\":\"Skipped\"");
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "patch", "agentruns", "r"));
	json_object_put(res);
	free(r);
}

static void
test_failed_job(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING ",\"podName\":\"p\"");
	json_object *res;

	res = run(f, r, JOB("\"failed\":1"), T0);
	assert_string_equal(jx_get_str(status_of(res), "error"), "Job failed");
	evtest_assert(
	        res, nwrites(res) - 1, "r", "Warning", "Failed", "Job failed");
	json_object_put(res);
	fakesup_add_log(f, "ns", "p",
	        "__SYMPOZIUM_RESULT__{\"response\":\"ok\"}"
	        "__SYMPOZIUM_END__");
	res = run(f, r, JOB("\"failed\":1"), T0);
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Succeeded");
	assert_string_equal(jx_get_str(status_of(res), "result"), "ok");
	json_object_put(res);
	fakesup_add_log(f, "ns", "p", "error: HTTP 429 from provider");
	res = run(f, r, JOB("\"failed\":1"), T0);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "error: HTTP 429 from provider");
	json_object_put(res);
	free(r);
}

/* upstream persistFailureMemory: a run with the memory skill whose Job
 * fails (or times out) asks for its failure record; one without asks
 * nothing, nor does a success. */
static void
test_failure_memory(void **state)
{
	struct fakesup *f = *state;
	char *mem = mkrun(FIN, ",\"skills\":[{\"skillPackRef\":\"memory\"}]",
	        RUNNING ",\"podName\":\"pm\"");
	char *plain = mkrun(FIN, "", RUNNING ",\"podName\":\"pm\"");
	json_object *res;

	res = run(f, mem, JOB("\"failed\":1"), T0);
	assert_string_equal(jx_get_str(res, "memoryStore.content"),
	        "## Failed AgentRun: r\n**Task**: do it\n**Error**: Job "
	        "failed\n**Timestamp**: 2026-01-01T00:00:00Z\n**Instance**: "
	        "alice");
	json_object_put(res);
	res = run(f, plain, JOB("\"failed\":1"), T0);
	assert_null(jx_get(res, "memoryStore"));
	json_object_put(res);
	res = run(f, mem, JOB(""), T0 + 601000);
	assert_non_null(strstr(jx_get_str(res, "memoryStore.content"),
	        "**Error**: timeout\n"));
	json_object_put(res);
	fakesup_add_log(f, "ns", "pm",
	        "__SYMPOZIUM_RESULT__{\"response\":\"ok\"}"
	        "__SYMPOZIUM_END__");
	res = run(f, mem, JOB("\"succeeded\":1"), T0);
	assert_null(jx_get(res, "memoryStore"));
	json_object_put(res);
	free(mem);
	free(plain);
}

static void
test_agent_container_exit(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING ",\"podName\":\"p\"");
	json_object *res, *w;

	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"containers\":[{\"name\":\"agent\"},{\"name\":"
	        "\"ipc-bridge\"},{\"name\":\"skill-x\"}]},\"status\":"
	        "{\"containerStatuses\":[{\"name\":\"agent\",\"state\":"
	        "{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}}"
	        "]}}");
	res = run(f, r, JOB(""), T0);
	w = find_w(res, "delete", "jobs", "r");
	assert_string_equal(jx_get_str(w, "propagation"), "Background");
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "agent container exited with code 137 (OOMKilled)");
	json_object_put(res);
	free(r);
}

static void
test_poll_timeout_missing_job(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING ",\"podName\":\"p\"");
	json_object *res, *w;

	res = run(f, r, JOB(""), T0 + 60000);
	assert_int_equal(nwrites(res), 0); /* steady: no event either */
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	assert_int_equal(after(res), 5000);
	json_object_put(res);
	res = run(f, r, JOB(""), T0 + 601000);
	w = find_w(res, "delete", "jobs", "r");
	assert_string_equal(jx_get_str(w, "propagation"), "Foreground");
	assert_string_equal(jx_get_str(status_of(res), "error"), "timeout");
	assert_int_equal(evtest_count(res), 1);
	evtest_assert(
	        res, nwrites(res) - 1, "r", "Warning", "Timeout", "timeout");
	json_object_put(res);
	res = run(f, r, NULL, T0 + 1000);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	res = run(f, r, NULL, T0 + 60000);
	assert_string_equal(
	        jx_get_str(status_of(res), "error"), "Job not found");
	json_object_put(res);
	free(r);
}

/* Runs the reconciler on a run object with no children, the WORK saying
 * whether the children are stale; returns the RESULT body (caller puts). */
static json_object *
run_stale(const char *obj, bool stale, int64_t now, struct rec_out *ro)
{
	json_object *o = json_tokener_parse(obj);
	json_object *ch = json_object_new_array();
	struct rec_in in = { .key = "ns/r",
		.object = o,
		.children = ch,
		.now_ms = now,
		.children_stale = stale };

	memset(ro, 0, sizeof(*ro));
	ro->result = ipc_result_new("ns/r", 1, IPC_V_DONE, 0, NULL);
	agentrun_reconciler.reconcile(&in, ro);
	json_object_put(o);
	json_object_put(ch);
	return (ro->result);
}

/* A Job missing while the supervisor's child caches lag the server (chaos
 * suite: a Job watch in backoff for a minute) is never "not found": the
 * run is requeued, with no write, however long since its start. */
static void
test_missing_job_children_stale(void **state)
{
	char *r = mkrun(FIN, "", RUNNING ",\"podName\":\"p\"");
	struct rec_out ro;
	json_object *res;

	(void)state;
	res = run_stale(r, true, T0 + 60000, &ro);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(ro.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(ro.after_ms, AGENTRUN_STALE_MS);
	assert_non_null(strstr(ro.message, "may lag"));
	json_object_put(res);
	/* within the grace too, and long after it */
	res = run_stale(r, true, T0 + 1000, &ro);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(ro.verdict, IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	res = run_stale(r, true, T0 + 3600000, &ro);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(ro.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(ro.after_ms, AGENTRUN_STALE_MS);
	json_object_put(res);
	/* fresh children: past the grace the run fails, as before */
	res = run_stale(r, false, T0 + 60000, &ro);
	assert_string_equal(
	        jx_get_str(status_of(res), "error"), "Job not found");
	assert_string_equal(jx_get_str(status_of(res), "phase"), "Failed");
	assert_int_equal(ro.verdict, IPC_V_DONE);
	json_object_put(res);
	free(r);
}

static void
test_completed(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "\"phase\":\"Succeeded\"");
	json_object *res, *w;

	fakesup_add_json(f, "clusterroles",
	        "{\"metadata\":{\"name\":\"sympozium-skill-web-r\",\"labels\":"
	        "{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"
	        "managed-by\":"
	        "\"sympozium\"}}}");
	for (int i = 0; i < 52; i++) {
		char *o = xasprintf(
		        "{\"metadata\":{\"name\":\"old%02d\",\"namespace\":"
		        "\"ns\","
		        "\"creationTimestamp\":\"2025-01-01T00:00:%02dZ\","
		        "\"labels\":{\"sympozium.ai/instance\":\"alice\"}},"
		        "\"status\":{\"phase\":\"%s\"}}",
		        i, 59 - i, i % 2 ? "Failed" : "Succeeded");
		fakesup_add_json(f, "agentruns", o);
		free(o);
	}
	fakesup_add_json(f, "agentruns",
	        "{\"metadata\":{\"name\":\"live\",\"namespace\":\"ns\","
	        "\"labels\":"
	        "{\"sympozium.ai/instance\":\"alice\"}},\"status\":{\"phase\":"
	        "\"Running\"}}");
	res = run(f, r, NULL, T0);
	assert_non_null(find_w(
	        res, "delete", "clusterroles", "sympozium-skill-web-r"));
	w = find_w(res, "patch", "agentruns", "r");
	assert_non_null(w);
	assert_true(json_object_object_get_ex(
	        jx_get(w, "patch.metadata"), "finalizers", NULL));
	assert_null(jx_get(w, "patch.metadata.finalizers"));
	/* the two oldest completed runs go */
	assert_non_null(find_w(res, "delete", "agentruns", "old51"));
	assert_non_null(find_w(res, "delete", "agentruns", "old50"));
	assert_null(find_w(res, "delete", "agentruns", "old49"));
	assert_null(find_w(res, "update_status", "agentruns", NULL));
	assert_int_equal(evtest_count(res), 0); /* no transition */
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	/* --max-run-history reaches the worker through the environment */
	setenv(AGENTRUN_HISTORY_ENV, "50", 1);
	res = run(f, r, NULL, T0);
	assert_int_equal(count_w(res, "delete", "agentruns"), 2);
	json_object_put(res);
	setenv(AGENTRUN_HISTORY_ENV, "3", 1);
	res = run(f, r, NULL, T0);
	assert_int_equal(count_w(res, "delete", "agentruns"), 49);
	assert_non_null(find_w(res, "delete", "agentruns", "old03"));
	assert_null(find_w(res, "delete", "agentruns", "old02"));
	assert_null(find_w(res, "delete", "agentruns", "live"));
	json_object_put(res);
	/* 0, negative or garbage: 50 */
	for (int i = 0; i < 3; i++) {
		setenv(AGENTRUN_HISTORY_ENV,
		        (const char *[]) { "0", "-4", "x" }[i], 1);
		res = run(f, r, NULL, T0);
		assert_int_equal(count_w(res, "delete", "agentruns"), 2);
		json_object_put(res);
	}
	unsetenv(AGENTRUN_HISTORY_ENV);
	free(r);
}

/* 1,200 completed runs of the instance, history 50: one pass deletes the
 * oldest AGENTRUN_PRUNE_MAX (a RESULT holds at most IPC_WRITES_MAX
 * writes) and comes back for the rest. */
static void
test_prune_bounded(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "\"phase\":\"Succeeded\"");
	json_object *res;

	for (int i = 0; i < 1200; i++) {
		char *o = xasprintf(
		        "{\"metadata\":{\"name\":\"b%04d\",\"namespace\":"
		        "\"ns\",\"creationTimestamp\":\"2025-01-01T00:%02d:"
		        "%02dZ\",\"labels\":{\"sympozium.ai/instance\":"
		        "\"alice\"}},\"status\":{\"phase\":\"Succeeded\"}}",
		        i, i / 60, i % 60);
		fakesup_add_json(f, "agentruns", o);
		free(o);
	}
	res = run(f, r, NULL, T0);
	assert_int_equal(
	        count_w(res, "delete", "agentruns"), AGENTRUN_PRUNE_MAX);
	assert_true(nwrites(res) <= IPC_WRITES_MAX);
	assert_non_null(find_w(res, "delete", "agentruns", "b0000"));
	assert_non_null(find_w(res, "delete", "agentruns", "b0499"));
	assert_null(find_w(res, "delete", "agentruns", "b0500"));
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	/* only what pruning reads of each run crosses the session */
	assert_non_null(strstr(fakesup_log(f),
	        "list agentruns ns/ sympozium.ai/instance=alice "
	        "fields=metadata.name,metadata.creationTimestamp,"
	        "status.phase\n"));
	json_object_put(res);
	free(r);
}

static void
test_deleting_and_unknown(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"",
	        "", RUNNING);
	char *u = mkrun(FIN, "", "\"phase\":\"AwaitingDelegate\"");
	json_object *res, *w;

	res = run(f, r, JOB("\"active\":1"), T0);
	w = find_w(res, "delete", "jobs", "r");
	assert_string_equal(jx_get_str(w, "propagation"), "Foreground");
	assert_non_null(find_w(res, "patch", "agentruns", "r"));
	assert_null(find_w(res, "update_status", "agentruns", NULL));
	json_object_put(res);
	/* the Job not cached (gone): no delete (a policy violation), the
	 * finalizer still removed */
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "delete", "jobs", NULL));
	assert_non_null(find_w(res, "patch", "agentruns", "r"));
	json_object_put(res);
	res = run(f, u, NULL, T0);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	free(r);
	free(u);
}

/* A run name that cannot be a label value fails the run. */
static void
test_long_name(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "");
	json_object *o = json_tokener_parse(r);
	json_object *res;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	jx_setv(o,
	        json_object_new_string("a234567890123456789012345678901234567"
	                               "890123456789012345678901234"),
	        "metadata", "name", NULL);
	res = run(f, json_object_to_json_string(o), NULL, T0);
	assert_failed_only(res,
	        "run name is longer than 63 characters (it is used as a "
	        "label value)");
	json_object_put(res);
	json_object_put(o);
	free(r);
}

/* The agent container ended with 0 while sidecars linger: the result
 * from the log, the Job deleted in the background; a non-zero exit with
 * an error in the log fails with the log's error. */
static void
test_agent_container_success(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", RUNNING ",\"podName\":\"p\"");
	json_object *res, *w;

	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"containers\":[{\"name\":\"agent\"},{\"name\":"
	        "\"ipc-bridge\"},{\"name\":\"skill-x\"}]},\"status\":"
	        "{\"containerStatuses\":[{\"name\":\"skill-x\",\"state\":{"
	        "\"running\":{}}},{\"name\":\"agent\",\"state\":"
	        "{\"terminated\":{\"exitCode\":0}}}]}}");
	fakesup_add_log(f, "ns", "p",
	        "__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":"
	        "\"fine\"}__SYMPOZIUM_END__\n");
	res = run(f, r, JOB("\"active\":1"), T0 + 30000);
	w = find_w(res, "delete", "jobs", "r");
	assert_string_equal(jx_get_str(w, "propagation"), "Background");
	fakesup_assert_json(status_of(res),
	        "{" RUNNING ",\"podName\":\"p\",\"phase\":\"Succeeded\","
	        "\"completedAt\":\"2026-01-01T00:00:30Z\",\"result\":"
	        "\"fine\"}");
	assert_int_equal(verdict(res), IPC_V_DONE);
	json_object_put(res);
	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"containers\":[{\"name\":\"agent\"},{\"name\":"
	        "\"ipc-bridge\"},{\"name\":\"skill-x\"}]},\"status\":"
	        "{\"containerStatuses\":[{\"name\":\"agent\",\"state\":"
	        "{\"terminated\":{\"exitCode\":2}}}]}}");
	fakesup_add_log(f, "ns", "p",
	        "__SYMPOZIUM_RESULT__{\"status\":\"error\",\"error\":"
	        "\" model refused \"}__SYMPOZIUM_END__\n");
	res = run(f, r, JOB("\"active\":1"), T0 + 30000);
	assert_string_equal(
	        jx_get_str(status_of(res), "error"), "model refused");
	json_object_put(res);
	/* two containers: the agent's state is not looked at */
	fakesup_add_json(f, "pods",
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"containers\":[{\"name\":\"agent\"},{\"name\":"
	        "\"ipc-bridge\"}]},\"status\":{\"containerStatuses\":[{"
	        "\"name\":\"agent\",\"state\":{\"terminated\":{\"exitCode\":"
	        "2}}}]}}");
	res = run(f, r, JOB("\"active\":1"), T0 + 30000);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	free(r);
}

/* The Running timeout: spec.timeout; without one the instance's
 * runTimeout (our fix: the Job's deadline came from it), else 10
 * minutes; a timeout that no longer parses counts as none. */
static void
test_running_timeouts(void **state)
{
	struct fakesup *f = *state;
	char *own = mkrun(FIN, ",\"timeout\":\"1m\"", RUNNING);
	char *none = mkrun(FIN, "", RUNNING);
	char *bad = mkrun(FIN, ",\"timeout\":\"later\"", RUNNING);
	json_object *res;

	res = run(f, own, JOB("\"active\":1"), T0 + 60000);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	res = run(f, own, JOB("\"active\":1"), T0 + 61000);
	fakesup_assert_json(status_of(res),
	        "{" RUNNING ",\"phase\":\"Failed\",\"completedAt\":"
	        "\"2026-01-01T00:01:01Z\",\"error\":\"timeout\"}");
	json_object_put(res);
	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"agents\":{\"default\":{\"runTimeout\":"
	        "\"30m\"}}}}");
	res = run(f, none, JOB("\"active\":1"), T0 + 11 * 60000);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	res = run(f, none, JOB("\"active\":1"), T0 + 31 * 60000);
	assert_string_equal(jx_get_str(status_of(res), "error"), "timeout");
	json_object_put(res);
	fakesup_reset(f);
	res = run(f, bad, JOB("\"active\":1"), T0 + 9 * 60000);
	assert_int_equal(nwrites(res), 0);
	json_object_put(res);
	res = run(f, bad, JOB("\"active\":1"), T0 + 11 * 60000);
	assert_string_equal(jx_get_str(status_of(res), "error"), "timeout");
	json_object_put(res);
	free(own);
	free(none);
	free(bad);
}

/* A positive timeout under a second is a timeout, not none (it used to
 * round down to 0 s and so to the 10 minute default). */
static void
test_running_subsecond_timeout(void **state)
{
	struct fakesup *f = *state;
	char *half = mkrun(FIN, ",\"timeout\":\"500ms\"", RUNNING);
	char *tiny = mkrun(FIN, ",\"timeout\":\"1ns\"", RUNNING);
	json_object *res;

	res = run(f, half, JOB("\"active\":1"), T0 + 500);
	assert_int_equal(nwrites(res), 0);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	res = run(f, half, JOB("\"active\":1"), T0 + 501);
	assert_string_equal(jx_get_str(status_of(res), "error"), "timeout");
	json_object_put(res);
	res = run(f, tiny, JOB("\"active\":1"), T0 + 2);
	assert_string_equal(jx_get_str(status_of(res), "error"), "timeout");
	json_object_put(res);
	free(half);
	free(tiny);
}

/* Completed: the workspace PVC after a postRun (deleted when cached: the
 * write policy refuses a delete of an object its caches do not hold), no
 * finalizer patch when there is none, no pruning without an instanceRef;
 * a PostRunning run without postRunJobName fails (upstream
 * agentrun_controller.go reconcilePostRunning). */
static void
test_completed_variants(void **state)
{
	struct fakesup *f = *state;
	char *pr = mkrun("", "",
	        "\"phase\":\"Failed\",\"postRunJobName\":"
	        "\"r-postrun\"");
	char *noinst = mkrun("", "", "\"phase\":\"Succeeded\"");
	char *post = mkrun(FIN, "", "\"phase\":\"PostRunning\"");
	json_object *o, *res, *w;

	res = run(f, pr,
	        "[{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	        "\"metadata\":{\"name\":\"r-workspace\",\"namespace\":"
	        "\"ns\"}}]",
	        T0);
	w = find_w(res, "delete", "persistentvolumeclaims", "r-workspace");
	assert_non_null(w);
	assert_null(find_w(res, "patch", "agentruns", NULL));
	assert_null(find_w(res, "update_status", "agentruns", NULL));
	json_object_put(res);
	res = run(f, pr, NULL, T0);
	assert_null(find_w(res, "delete", "persistentvolumeclaims", NULL));
	json_object_put(res);
	o = json_tokener_parse(noinst);
	jx_setv(o, json_object_new_string(""), "spec", "instanceRef", NULL);
	fakesup_clear_log(f);
	res = run(f, json_object_to_json_string(o), NULL, T0);
	assert_int_equal(nwrites(res), 0);
	assert_null(strstr(fakesup_log(f), "list agentruns"));
	json_object_put(res);
	json_object_put(o);
	res = run(f, post, NULL, T0);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "postRun Job name missing");
	json_object_put(res);
	free(pr);
	free(noinst);
	free(post);
}

/* spec 1.3 step 12 (agentrun_controller.go reconcilePending and
 * buildContainers): a run with the memory skill waits for the Deployment
 * <instance>-memory to have a ready replica (requeue 5 s), fails once
 * older than 120 s, and otherwise gets MEMORY_SERVER_URL and the
 * wait-for-memory init container. */
static void
test_memory_wait(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(
	        FIN, ",\"skills\":[{\"skillPackRef\":\"memory\"}]", "");
	json_object *res, *st, *job;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	res = run(f, r, NULL, T0 + 10000);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	assert_int_equal(after(res), 5000);
	assert_null(find_w(res, "create", "jobs", "r"));
	assert_null(find_w(res, "update_status", "agentruns", NULL));
	json_object_put(res);
	res = run(f, r, NULL, T0 + 121500);
	st = status_of(res);
	assert_string_equal(jx_get_str(st, "phase"), "Failed");
	assert_string_equal(jx_get_str(st, "error"),
	        "memory server deployment \"alice-memory\" not found after "
	        "2m1s \xe2\x80\x94 ensure the instance has been reconciled");
	assert_null(find_w(res, "create", "jobs", "r"));
	json_object_put(res);
	fakesup_add_json(f, "deployments",
	        "{\"metadata\":{\"name\":\"alice-memory\",\"namespace\":"
	        "\"ns\"},\"status\":{\"readyReplicas\":0}}");
	res = run(f, r, NULL, T0 + 130000);
	assert_string_equal(jx_get_str(status_of(res), "error"),
	        "memory server deployment \"alice-memory\" has no ready "
	        "replicas after 2m10s");
	json_object_put(res);
	res = run(f, r, NULL, T0 + 1000);
	assert_int_equal(verdict(res), IPC_V_REQUEUE_AFTER);
	assert_null(find_w(res, "create", "jobs", "r"));
	json_object_put(res);
	fakesup_reset(f);
	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "deployments",
	        "{\"metadata\":{\"name\":\"alice-memory\",\"namespace\":"
	        "\"ns\"},\"status\":{\"readyReplicas\":1}}");
	res = run(f, r, NULL, T0 + 1000);
	job = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_non_null(job);
	assert_string_equal(
	        jx_get_str(job, "spec.template.spec.initContainers.0.name"),
	        "wait-for-memory");
	assert_string_equal(agent_env(job, "MEMORY_SERVER_URL"),
	        "http://alice-memory.ns.svc:8080");
	json_object_put(res);
	free(r);
}

/* agentrun_controller.go reconcilePending: the instance's
 * spec.observability reaches the Job only when enabled. */
static void
test_observability_enabled(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN, "", "");
	json_object *res, *job;

	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"observability\":{\"enabled\":false,"
	        "\"otlpEndpoint\":\"otel:4317\"}}}");
	res = run(f, r, NULL, T0);
	job = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_null(agent_env(job, "SYMPOZIUM_OTEL_ENABLED"));
	json_object_put(res);
	fakesup_reset(f);
	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"observability\":{\"enabled\":true,"
	        "\"otlpEndpoint\":\"otel:4317\"}}}");
	res = run(f, r, NULL, T0);
	job = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_string_equal(agent_env(job, "SYMPOZIUM_OTEL_ENABLED"), "true");
	assert_string_equal(
	        agent_env(job, "OTEL_EXPORTER_OTLP_ENDPOINT"), "otel:4317");
	json_object_put(res);
	free(r);
}

/* spec 1.13 (agentrun_controller.go injectSharedMemory): a run of an
 * instance stamped from a PersonaPack with sharedMemory.enabled gets
 * WORKFLOW_MEMORY_SERVER_URL and WORKFLOW_MEMORY_ACCESS (the persona's
 * accessRules entry, default read-write) last in the agent's env and
 * wait-for-shared-memory after the preRun hooks. */
static void
test_shared_memory(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(FIN,
	        ",\"lifecycle\":{\"preRun\":[{\"name\":\"p\",\"image\":\"x\"}]"
	        "}",
	        "");
	json_object *res, *job, *env;
	const char *inst
	        = "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\","
	          "\"labels\":{\"sympozium.ai/persona-pack\":\"team\","
	          "\"sympozium.ai/persona\":\"%s\"}},\"spec\":{}}";
	char *i1 = xasprintf(inst, "writer");
	char *i2 = xasprintf(inst, "nobody");

	fakesup_add_json(f, "sympoziuminstances", i1);
	fakesup_add_json(f, "personapacks",
	        "{\"metadata\":{\"name\":\"team\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"sharedMemory\":{\"enabled\":true,"
	        "\"accessRules\":[{\"persona\":\"reader\",\"access\":"
	        "\"read-only\"},{\"persona\":\"writer\",\"access\":"
	        "\"write-only\"}]}}}");
	res = run(f, r, NULL, T0);
	job = jx_get(find_w(res, "create", "jobs", "r"), "object");
	env = jx_get(job, "spec.template.spec.containers.0.env");
	fakesup_assert_json(json_object_array_get_idx(
	                            env, json_object_array_length(env) - 2),
	        "{\"name\":\"WORKFLOW_MEMORY_SERVER_URL\",\"value\":"
	        "\"http://team-shared-memory.ns.svc:8080\"}");
	fakesup_assert_json(json_object_array_get_idx(
	                            env, json_object_array_length(env) - 1),
	        "{\"name\":\"WORKFLOW_MEMORY_ACCESS\",\"value\":"
	        "\"write-only\"}");
	assert_string_equal(
	        jx_get_str(job, "spec.template.spec.initContainers.0.name"),
	        "pre-p");
	fakesup_assert_json(jx_get(job, "spec.template.spec.initContainers.1"),
	        "{\"name\":\"wait-for-shared-memory\",\"image\":"
	        "\"busybox:1.36\",\"imagePullPolicy\":\"IfNotPresent\","
	        "\"securityContext\":{\"readOnlyRootFilesystem\":true,"
	        "\"allowPrivilegeEscalation\":false,\"capabilities\":{"
	        "\"drop\":[\"ALL\"]}},\"command\":[\"sh\",\"-c\",\"elapsed=0;"
	        " until wget -q --spider --timeout=2 "
	        "http://team-shared-memory.ns.svc:8080/health; do echo "
	        "'waiting for shared memory server...'; sleep 2; "
	        "elapsed=$((elapsed+2)); if [ $elapsed -ge 120 ]; then echo "
	        "'ERROR: shared memory server not ready after 120s'; exit 1; "
	        "fi; done\"],\"resources\":{\"requests\":{\"cpu\":\"50m\","
	        "\"memory\":\"32Mi\"},\"limits\":{\"cpu\":\"100m\","
	        "\"memory\":\"64Mi\"}}}");
	json_object_put(res);
	fakesup_remove(f, "sympoziuminstances", "ns", "alice");
	fakesup_add_json(f, "sympoziuminstances", i2);
	res = run(f, r, NULL, T0);
	job = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_string_equal(
	        agent_env(job, "WORKFLOW_MEMORY_ACCESS"), "read-write");
	json_object_put(res);
	fakesup_remove(f, "personapacks", "ns", "team");
	res = run(f, r, NULL, T0);
	job = jx_get(find_w(res, "create", "jobs", "r"), "object");
	assert_null(agent_env(job, "WORKFLOW_MEMORY_ACCESS"));
	assert_int_equal(
	        jx_array_len(jx_get(job, "spec.template.spec.initContainers")),
	        1);
	json_object_put(res);
	free(i1);
	free(i2);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gone_and_finalizer,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_instance_missing,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_policy_limits, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_unsupported, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_pending_creates, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_mcp_config, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_bad_input, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_agent_sandbox_samples,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_missing_skillpack_and_view_error, fakesup_setup,
		        fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_no_op_status, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_inherit, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_succeeded_late_pod,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_failed_job, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_failure_memory, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_skipped, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_log_error_retried,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_finished_job_pod_pending,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_agent_container_exit,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test(test_missing_job_children_stale),
		cmocka_unit_test_setup_teardown(test_poll_timeout_missing_job,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_completed, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_prune_bounded, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_deleting_and_unknown,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_long_name, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_agent_container_success,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_running_timeouts,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_running_subsecond_timeout,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_completed_variants,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_memory_wait, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_observability_enabled,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_shared_memory, fakesup_setup, fakesup_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
