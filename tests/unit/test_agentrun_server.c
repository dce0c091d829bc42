/*
 * test_agentrun_server.c: the server mode of the AgentRun reconciler
 * (workers/agentrun_server.c) against the fake supervisor: a Pending run
 * with spec.mode "server" and its web-proxy Deployment, Service and
 * Serving status; the Serving phase (Deployment present: requeue in 30 s
 * whatever the age; gone: Failed; stale cache: wait); the gateway's
 * HTTPRoute <run>-web, made, retried while Serving, and deleted.  Expected
 * values come from upstream internal/controller/agentrun_controller.go at
 * 008266e, functions reconcilePendingServer, ensureServerAPIKeySecret,
 * reconcileServing, and reconcilePending's ensureMCPConfigMap.
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
#include "tests/lib/fakesup.h"
#include "workers/agentrun.h"

/* 2026-01-01T00:00:00Z */
#define T0 1767225600000LL

#define FIN ",\"finalizers\":[\"sympozium.ai/agentrun-finalizer\"]"
#define INSTANCE                                                              \
	"{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},\"spec\":"   \
	"{\"skills\":[{\"skillPackRef\":\"skillpack-web-endpoint\","          \
	"\"params\":{\"rate_limit_rpm\":\"60\"}}]}}"
/* the server pack in the system namespace (upstream falls back to it) */
#define PACK                                                                  \
	"{\"metadata\":{\"name\":\"web-endpoint\",\"namespace\":"             \
	"\"sympozium-system\"},\"spec\":{\"sidecar\":{\"image\":"             \
	"\"ghcr.io/x/web-proxy:v1\",\"requiresServer\":true,\"env\":"         \
	"[{\"name\":\"MODE\",\"value\":\"openai\"}],\"ports\":[{\"name\":"    \
	"\"http\",\"containerPort\":8080}],\"resources\":{\"cpu\":"           \
	"\"200m\"},\"rbac\":[{\"apiGroups\":[\"sympozium.ai\"],"              \
	"\"resources\":[\"agentruns\"],\"verbs\":[\"create\"]}]}}}"

static json_object *
run(struct fakesup *f, const char *obj, const char *children, int64_t now)
{
	json_object *o = json_tokener_parse(obj);
	json_object *ch = json_tokener_parse(children ? children : "[]");
	struct fakesup_run r;
	json_object *res;

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

static json_object *
find_w(json_object *res, const char *op, const char *plural)
{
	json_object *ws = json_object_object_get(res, "writes");

	for (size_t i = 0; i < jx_array_len(ws); i++) {
		json_object *w = json_object_array_get_idx(ws, i);
		if (strcmp(jx_get_str(w, "op"), op) == 0
		        && strcmp(jx_get_str(w, "resource.plural"), plural)
		                == 0) {
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

static char *
mkrun(const char *spec_extra, const char *status)
{
	return (xasprintf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"r\",\"namespace\":"
	        "\"ns\",\"uid\":\"u1\"" FIN "},\"spec\":{\"instanceRef\":"
	        "\"alice\",\"agentId\":\"primary\",\"task\":\"serve\","
	        "\"mode\":\"server\",\"model\":{\"provider\":\"openai\","
	        "\"model\":\"gpt-4o\",\"nodeSelector\":{\"gpu\":\"yes\"}}%s},"
	        "\"status\":{%s}}",
	        spec_extra, status));
}

/* The env entry name of c, or NULL. */
static json_object *
env(json_object *c, const char *name)
{
	json_object *e = json_object_object_get(c, "env");

	for (size_t i = 0; i < jx_array_len(e); i++) {
		json_object *v = json_object_array_get_idx(e, i);
		if (strcmp(jx_get_str(v, "name"), name) == 0) {
			return (v);
		}
	}
	return (NULL);
}

/* A label (keys hold dots, so not a jx path). */
static const char *
lab(json_object *l, const char *key)
{
	json_object *v = json_object_object_get(l, key);

	return (v != NULL ? json_object_get_string(v) : "(none)");
}

static void
assert_labels(json_object *l)
{
	assert_string_equal(lab(l, "sympozium.ai/agent-run"), "r");
	assert_string_equal(lab(l, "sympozium.ai/instance"), "alice");
	assert_string_equal(lab(l, "sympozium.ai/component"), "agent-server");
	assert_string_equal(lab(l, "app.kubernetes.io/part-of"), "sympozium");
	assert_string_equal(lab(l, "app.kubernetes.io/managed-by"),
	        "sympozium-controller");
}

static void
check_container(json_object *c)
{
	assert_string_equal(jx_get_str(c, "name"), "web-proxy");
	assert_string_equal(jx_get_str(c, "image"), "ghcr.io/x/web-proxy:v1");
	assert_string_equal(jx_get_str(c, "imagePullPolicy"), "IfNotPresent");
	assert_string_equal(jx_get_str(env(c, "MODE"), "value"), "openai");
	assert_string_equal(
	        jx_get_str(env(c, "INSTANCE_NAME"), "value"), "alice");
	assert_string_equal(jx_get_str(env(c, "WEB_PROXY_API_KEY"),
	                            "valueFrom.secretKeyRef.name"),
	        "alice-web-proxy-key");
	assert_string_equal(jx_get_str(env(c, "WEB_PROXY_API_KEY"),
	                            "valueFrom.secretKeyRef.key"),
	        "api-key");
	assert_string_equal(
	        jx_get_str(env(c, "RATE_LIMIT_RPM"), "value"), "60");
	assert_string_equal(
	        jx_get_str(env(c, "SKILL_RATE_LIMIT_RPM"), "value"), "60");
	assert_int_equal(num(c, "ports.0.containerPort"), 8080);
	assert_string_equal(jx_get_str(c, "ports.0.protocol"), "TCP");
	assert_string_equal(
	        jx_get_str(c, "livenessProbe.httpGet.path"), "/healthz");
	assert_int_equal(num(c, "livenessProbe.httpGet.port"), 8080);
	assert_int_equal(num(c, "livenessProbe.initialDelaySeconds"), 5);
	assert_int_equal(num(c, "livenessProbe.periodSeconds"), 10);
	assert_int_equal(num(c, "readinessProbe.initialDelaySeconds"), 3);
	assert_int_equal(num(c, "readinessProbe.periodSeconds"), 5);
	assert_string_equal(jx_get_str(c, "resources.requests.cpu"), "200m");
	assert_string_equal(
	        jx_get_str(c, "resources.requests.memory"), "128Mi");
	assert_string_equal(jx_get_str(c, "resources.limits.cpu"), "500m");
	assert_string_equal(jx_get_str(c, "resources.limits.memory"), "256Mi");
}

/* reconcilePendingServer: Deployment and Service <run>-server, owned,
 * labelled; status Serving with their names; requeue 30 s. */
static void
test_pending_server(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("", "");
	json_object *res, *d, *s, *st;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks", PACK);
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "create", "jobs"));
	/* createInputConfigMap runs first in upstream reconcilePending */
	d = jx_get(find_w(res, "create", "configmaps"), "object");
	assert_string_equal(jx_get_str(d, "metadata.name"), "r-input");
	assert_string_equal(jx_get_str(d, "data.task"), "serve");
	assert_string_equal(jx_get_str(d, "data.agent-id"), "primary");
	assert_non_null(find_w(res, "create", "serviceaccounts"));
	d = jx_get(find_w(res, "create", "deployments"), "object");
	assert_non_null(d);
	assert_string_equal(jx_get_str(d, "metadata.name"), "r-server");
	assert_string_equal(
	        jx_get_str(d, "metadata.ownerReferences.0.uid"), "u1");
	assert_labels(jx_get(d, "metadata.labels"));
	assert_labels(jx_get(d, "spec.selector.matchLabels"));
	assert_labels(jx_get(d, "spec.template.metadata.labels"));
	assert_int_equal(num(d, "spec.replicas"), 1);
	assert_string_equal(
	        jx_get_str(d, "spec.template.spec.serviceAccountName"),
	        "sympozium-agent");
	assert_string_equal(
	        jx_get_str(d, "spec.template.spec.restartPolicy"), "Always");
	assert_string_equal(
	        jx_get_str(d, "spec.template.spec.nodeSelector.gpu"), "yes");
	check_container(jx_get(d, "spec.template.spec.containers.0"));
	s = jx_get(find_w(res, "create", "services"), "object");
	assert_string_equal(jx_get_str(s, "metadata.name"), "r-server");
	assert_labels(jx_get(s, "spec.selector"));
	assert_int_equal(num(s, "spec.ports.0.port"), 8080);
	assert_int_equal(num(s, "spec.ports.0.targetPort"), 8080);
	assert_string_equal(jx_get_str(s, "spec.ports.0.name"), "http");
	st = jx_get(
	        find_w(res, "update_status", "agentruns"), "object.status");
	assert_string_equal(jx_get_str(st, "phase"), "Serving");
	assert_string_equal(jx_get_str(st, "deploymentName"), "r-server");
	assert_string_equal(jx_get_str(st, "serviceName"), "r-server");
	assert_string_equal(
	        jx_get_str(st, "startedAt"), "2026-01-01T00:00:00Z");
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	assert_int_equal(num(res, "after"), 30000);
	/* ensureSkillRBAC: the sidecar's rules in Role and RoleBinding
	 * sympozium-skill-<pack>-<run> bound to sympozium-agent */
	d = jx_get(find_w(res, "create", "roles"), "object");
	assert_string_equal(jx_get_str(d, "metadata.name"),
	        "sympozium-skill-web-endpoint-r");
	assert_string_equal(
	        lab(jx_get(d, "metadata.labels"), "sympozium.ai/skill"),
	        "web-endpoint");
	assert_string_equal(jx_get_str(d, "rules.0.resources.0"), "agentruns");
	d = jx_get(find_w(res, "create", "rolebindings"), "object");
	assert_string_equal(jx_get_str(d, "roleRef.name"),
	        "sympozium-skill-web-endpoint-r");
	assert_string_equal(
	        jx_get_str(d, "subjects.0.name"), "sympozium-agent");
	assert_null(find_w(res, "create", "clusterroles"));
	json_object_put(res);
	free(r);
}

/* ensureServerAPIKeySecret: a skill's auth_secret_ref is used as is. */
static void
test_auth_secret_ref(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(",\"skills\":[{\"skillPackRef\":\"web-endpoint\","
	                "\"params\":{\"auth_secret_ref\":\"mine\"}}]",
	        "");
	json_object *res, *c;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks", PACK);
	res = run(f, r, NULL, T0);
	c = jx_get(find_w(res, "create", "deployments"),
	        "object.spec.template.spec.containers.0");
	assert_string_equal(jx_get_str(env(c, "WEB_PROXY_API_KEY"),
	                            "valueFrom.secretKeyRef.name"),
	        "mine");
	assert_null(env(c, "RATE_LIMIT_RPM"));
	/* ensureServerAPIKeySecret returns the ref before any Secret */
	assert_null(find_w(res, "create", "secrets"));
	json_object_put(res);
	free(r);
}

#define SERVING                                                               \
	"\"phase\":\"Serving\",\"deploymentName\":\"r-server\","              \
	"\"serviceName\":\"r-server\",\"startedAt\":\"2020-01-01T00:00:00Z\""
#define DEPLOY                                                                \
	"[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":"  \
	"{\"name\":\"r-server\",\"namespace\":\"ns\"},\"status\":"            \
	"{\"replicas\":1,\"readyReplicas\":0}}]"

/* reconcileServing: no timeout (startedAt years ago), no writes, 30 s;
 * the Deployment gone: Failed "server Deployment not found". */
static void
test_serving(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(",\"timeout\":\"1m\"", SERVING);
	json_object *res, *st;

	res = run(f, r, DEPLOY, T0);
	assert_null(find_w(res, "update_status", "agentruns"));
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	assert_int_equal(num(res, "after"), 30000);
	json_object_put(res);
	res = run(f, r, NULL, T0);
	st = jx_get(
	        find_w(res, "update_status", "agentruns"), "object.status");
	assert_string_equal(jx_get_str(st, "phase"), "Failed");
	assert_string_equal(
	        jx_get_str(st, "error"), "server Deployment not found");
	assert_int_equal(num(res, "v"), IPC_V_DONE);
	json_object_put(res);
	free(r);
}

/* reconcileDelete: the Deployment and Service named in the status go. */
static void
test_delete(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("", SERVING);
	json_object *o = json_tokener_parse(r), *res;

	jx_setv(o, json_object_new_string("2026-01-01T00:00:00Z"), "metadata",
	        "deletionTimestamp", NULL);
	res = run(f, json_object_to_json_string(o), DEPLOY, T0);
	assert_string_equal(
	        jx_get_str(find_w(res, "delete", "deployments"), "name"),
	        "r-server");
	assert_string_equal(
	        jx_get_str(find_w(res, "delete", "services"), "name"),
	        "r-server");
	json_object_put(res);
	json_object_put(o);
	free(r);
}

/* The index of the first write op on plural, or -1. */
static int
w_index(json_object *res, const char *op, const char *plural)
{
	json_object *ws = json_object_object_get(res, "writes");

	for (size_t i = 0; i < jx_array_len(ws); i++) {
		json_object *w = json_object_array_get_idx(ws, i);
		if (strcmp(jx_get_str(w, "op"), op) == 0
		        && strcmp(jx_get_str(w, "resource.plural"), plural)
		                == 0) {
			return ((int)i);
		}
	}
	return (-1);
}

/* The key of a created web-proxy Secret, checked against upstream
 * ensureServerAPIKeySecret: "sk-" and hex of 24 random bytes. */
static const char *
checked_key(json_object *res)
{
	json_object *s = jx_get(find_w(res, "create", "secrets"), "object");
	const char *k = jx_get_str(s, "stringData.api-key");

	assert_non_null(s);
	assert_string_equal(
	        jx_get_str(s, "metadata.name"), "alice-web-proxy-key");
	assert_string_equal(jx_get_str(s, "metadata.namespace"), "ns");
	assert_string_equal(
	        lab(jx_get(s, "metadata.labels"), "sympozium.ai/component"),
	        "web-proxy");
	assert_string_equal(
	        lab(jx_get(s, "metadata.labels"), "sympozium.ai/instance"),
	        "alice");
	assert_string_equal(
	        lab(jx_get(s, "metadata.labels"), "sympozium.ai/agent-run"),
	        "r");
	assert_string_equal(
	        jx_get_str(s, "metadata.ownerReferences.0.uid"), "u1");
	assert_null(jx_get(s, "data"));
	assert_int_equal(
	        json_object_object_length(jx_get(s, "stringData")), 1);
	assert_non_null(k);
	assert_int_equal(strlen(k), 3 + 48);
	assert_memory_equal(k, "sk-", 3);
	assert_int_equal(strspn(k + 3, "0123456789abcdef"), 48);
	return (k);
}

/* ensureServerAPIKeySecret (upstream agentrun_controller.go at 008266e):
 * without auth_secret_ref, <instance>-web-proxy-key is made before the
 * Deployment (reconcilePendingServer's order), with a fresh random key
 * each time it is missing; once it exists nothing is written to it. */
static void
test_key_secret(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("", "");
	json_object *res, *res2;
	json_object *meta = json_tokener_parse(
	        "{\"metadata\":{\"name\":\"alice-web-proxy-key\","
	        "\"namespace\":\"ns\"},\"keys\":[\"api-key\"]}");

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks", PACK);
	res = run(f, r, NULL, T0);
	res2 = run(f, r, NULL, T0);
	assert_true(w_index(res, "create", "secrets") >= 0);
	assert_true(w_index(res, "create", "secrets")
	        < w_index(res, "create", "deployments"));
	assert_string_not_equal(checked_key(res), checked_key(res2));
	json_object_put(res);
	json_object_put(res2);
	fakesup_add_secret(f, "ns", "alice-web-proxy-key", meta);
	res = run(f, r, NULL, T0);
	assert_null(find_w(res, "create", "secrets"));
	assert_null(find_w(res, "update", "secrets"));
	assert_non_null(find_w(res, "create", "deployments"));
	json_object_put(res);
	free(r);
}

/* The ConfigMap write of name, or NULL. */
static json_object *
find_cm(json_object *res, const char *name)
{
	json_object *ws = json_object_object_get(res, "writes");

	for (size_t i = 0; i < jx_array_len(ws); i++) {
		json_object *w = json_object_array_get_idx(ws, i);
		if (strcmp(jx_get_str(w, "op"), "create") == 0
		        && strcmp(jx_get_str(w, "resource.plural"),
		                   "configmaps")
		                == 0
		        && strcmp(jx_get_str(w, "object.metadata.name"), name)
		                == 0) {
			return (w);
		}
	}
	return (NULL);
}

/* reconcilePending makes the MCP ConfigMap (ensureMCPConfigMap) before
 * it branches to reconcilePendingServer, so a server run of an instance
 * with reachable MCP servers gets <run>-mcp-servers too (labels
 * agent-run, instance, component=mcp-config; key mcp-servers.yaml as
 * buildMCPServersYAML); none reachable:
 * no ConfigMap. */
static void
test_mcp_config(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("", "");
	json_object *res, *w, *l;

	fakesup_add_json(f, "sympoziuminstances",
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},"
	        "\"spec\":{\"skills\":[{\"skillPackRef\":\"web-endpoint\"}],"
	        "\"mcpServers\":[{\"name\":\"gh\",\"toolsPrefix\":\"gh\"},"
	        "{\"name\":\"gone\",\"toolsPrefix\":\"g\"}]}}");
	fakesup_add_json(f, "skillpacks", PACK);
	fakesup_add_json(f, "mcpservers",
	        "{\"metadata\":{\"name\":\"gh\",\"namespace\":\"ns\"},"
	        "\"spec\":{},\"status\":{\"ready\":true,\"url\":"
	        "\"http://gh.ns.svc:8080/mcp\"}}");
	res = run(f, r, NULL, T0);
	w = find_cm(res, "r-mcp-servers");
	assert_non_null(w);
	l = jx_get(w, "object.metadata.labels");
	assert_string_equal(lab(l, "sympozium.ai/agent-run"), "r");
	assert_string_equal(lab(l, "sympozium.ai/instance"), "alice");
	assert_string_equal(lab(l, "sympozium.ai/component"), "mcp-config");
	assert_string_equal(
	        jx_get_str(w, "object.metadata.ownerReferences.0.uid"), "u1");
	assert_string_equal(json_object_get_string(jx_getv(w, "object", "data",
	                            "mcp-servers.yaml", NULL)),
	        "servers:\n"
	        "  - name: gh\n"
	        "    url: http://gh.ns.svc:8080/mcp\n"
	        "    toolsPrefix: gh\n"
	        "    timeout: 30\n");
	assert_non_null(find_w(res, "create", "deployments"));
	assert_string_equal(
	        jx_get_str(find_w(res, "update_status", "agentruns"),
	                "object.status.phase"),
	        "Serving");
	json_object_put(res);
	fakesup_remove(f, "mcpservers", NULL, "gh");
	res = run(f, r, NULL, T0);
	assert_null(find_cm(res, "r-mcp-servers"));
	assert_non_null(find_w(res, "create", "deployments"));
	json_object_put(res);
	free(r);
}

/* An instance whose name is valid but too long for the Secret's
 * (245 + "-web-proxy-key" > 253; upstream's create would be refused as
 * Invalid): no Secret write, so no policy violation; the pass errs and
 * is retried. */
static void
test_key_secret_bad_name(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(
	        ",\"skills\":[{\"skillPackRef\":\"web-endpoint\"}]", "");
	char *name = xmalloc(246), *bad, *at, *inst;
	json_object *res;

	memset(name, 'a', 245);
	name[245] = '\0';
	at = strstr(r, "\"alice\"");
	*at = '\0';
	bad = xasprintf("%s\"%s\"%s", r, name, at + 7);
	inst = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":"
	                 "\"ns\"},\"spec\":{}}",
	        name);
	fakesup_add_json(f, "sympoziuminstances", inst);
	fakesup_add_json(f, "skillpacks", PACK);
	res = run(f, bad, NULL, T0);
	assert_null(find_w(res, "create", "secrets"));
	assert_null(find_w(res, "create", "deployments"));
	assert_int_equal(num(res, "v"), IPC_V_ERROR);
	assert_non_null(
	        strstr(jx_get_str(res, "verdict.message"), "web-proxy key"));
	json_object_put(res);
	free(inst);
	free(bad);
	free(name);
	free(r);
}

/* SympoziumConfig sympozium-system/default with a gateway; extra goes
 * into spec.gateway, ready is status.gateway.ready. */
static void
add_config(struct fakesup *f, const char *extra, const char *ready)
{
	char *c = xasprintf(
	        "{\"metadata\":{\"name\":\"default\",\"namespace\":"
	        "\"sympozium-system\"},\"spec\":{\"gateway\":{%s}},"
	        "\"status\":{\"gateway\":{\"ready\":%s}}}",
	        extra, ready);

	fakesup_add_json(f, "sympoziumconfigs", c);
	free(c);
}

/* maybeCreateHTTPRoute (upstream agentrun_controller.go at 008266e):
 * with the gateway enabled and ready, <run>-web is made with the
 * Service: labels, controller owner, the gateway of spec.gateway.name in
 * sympozium-system, hostname <instanceRef>.<baseDomain>, backend the
 * Service on port 8080. */
static void
test_route_pending(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("", "");
	json_object *res, *o;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks", PACK);
	add_config(f,
	        "\"enabled\":true,\"name\":\"gw1\",\"baseDomain\":"
	        "\"example.com\"",
	        "true");
	res = run(f, r, NULL, T0);
	assert_true(w_index(res, "create", "services")
	        < w_index(res, "create", "httproutes"));
	o = jx_get(find_w(res, "create", "httproutes"), "object");
	assert_string_equal(
	        jx_get_str(o, "apiVersion"), "gateway.networking.k8s.io/v1");
	assert_string_equal(jx_get_str(o, "kind"), "HTTPRoute");
	assert_string_equal(jx_get_str(o, "metadata.name"), "r-web");
	assert_string_equal(jx_get_str(o, "metadata.namespace"), "ns");
	assert_string_equal(
	        lab(jx_get(o, "metadata.labels"), "sympozium.ai/agent-run"),
	        "r");
	assert_string_equal(
	        lab(jx_get(o, "metadata.labels"), "sympozium.ai/instance"),
	        "alice");
	assert_string_equal(
	        lab(jx_get(o, "metadata.labels"), "sympozium.ai/component"),
	        "agent-server");
	assert_int_equal(
	        json_object_object_length(jx_get(o, "metadata.labels")), 3);
	assert_string_equal(
	        jx_get_str(o, "metadata.ownerReferences.0.uid"), "u1");
	assert_true(json_object_get_boolean(
	        jx_get(o, "metadata.ownerReferences.0.controller")));
	assert_string_equal(jx_get_str(o, "spec.parentRefs.0.name"), "gw1");
	assert_string_equal(jx_get_str(o, "spec.parentRefs.0.namespace"),
	        "sympozium-system");
	assert_int_equal(jx_array_len(jx_get(o, "spec.hostnames")), 1);
	assert_string_equal(
	        jx_get_str(o, "spec.hostnames.0"), "alice.example.com");
	assert_string_equal(
	        jx_get_str(o, "spec.rules.0.backendRefs.0.name"), "r-server");
	assert_int_equal(num(o, "spec.rules.0.backendRefs.0.port"), 8080);
	assert_string_equal(
	        jx_get_str(find_w(res, "create", "httproutes"), "tolerate.0"),
	        "AlreadyExists");
	json_object_put(res);
	free(r);
}

/* The skill's hostname param wins over the base domain; the gateway
 * name defaults to sympozium-gateway. */
static void
test_route_hostname_param(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(",\"skills\":[{\"skillPackRef\":\"web-endpoint\","
	                "\"params\":{\"hostname\":\"chat.example.org\"}}]",
	        "");
	json_object *res, *o;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks", PACK);
	add_config(
	        f, "\"enabled\":true,\"baseDomain\":\"example.com\"", "true");
	res = run(f, r, NULL, T0);
	o = jx_get(find_w(res, "create", "httproutes"), "object");
	assert_string_equal(
	        jx_get_str(o, "spec.hostnames.0"), "chat.example.org");
	assert_string_equal(
	        jx_get_str(o, "spec.parentRefs.0.name"), "sympozium-gateway");
	json_object_put(res);
	free(r);
}

/* No route without the config, with the gateway disabled or not ready,
 * without a hostname, or when the config cannot be read; the run is
 * Serving in every case. */
static void
test_route_skipped(void **state)
{
	struct fakesup *f = *state;
	static const char *const cfg[][2] = {
		{ NULL, NULL },
		{ "\"enabled\":false,\"baseDomain\":\"example.com\"", "true" },
		{ "\"enabled\":true,\"baseDomain\":\"example.com\"", "false" },
		{ "\"enabled\":true", "true" },
		{ "error", NULL },
	};
	char *r = mkrun("", "");

	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		fakesup_reset(f);
		fakesup_add_json(f, "sympoziuminstances", INSTANCE);
		fakesup_add_json(f, "skillpacks", PACK);
		if (cfg[i][1] != NULL) {
			add_config(f, cfg[i][0], cfg[i][1]);
		} else if (cfg[i][0] != NULL) {
			add_config(f,
			        "\"enabled\":true,\"baseDomain\":\"x.io\"",
			        "true");
			fakesup_fail(f, "sympoziumconfigs", NULL, "boom");
		}
		json_object *res = run(f, r, NULL, T0);
		assert_null(find_w(res, "create", "httproutes"));
		assert_non_null(find_w(res, "create", "services"));
		assert_string_equal(
		        jx_get_str(find_w(res, "update_status", "agentruns"),
		                "object.status.phase"),
		        "Serving");
		assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
		json_object_put(res);
	}
	free(r);
}

#define ROUTE                                                                 \
	"{\"apiVersion\":\"gateway.networking.k8s.io/v1\",\"kind\":"          \
	"\"HTTPRoute\",\"metadata\":{\"name\":\"r-web\",\"namespace\":"       \
	"\"ns\"}}"

/* reconcileServing retries the route from the run's own skills (the
 * instance's were used in memory only), writing no skill RBAC; once the
 * route is a child, nothing is written. */
static void
test_route_serving(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun(
	        ",\"skills\":[{\"skillPackRef\":\"web-endpoint\"}]", SERVING);
	char *bare = mkrun("", SERVING);
	char *both = xasprintf(
	        "[%.*s," ROUTE "]", (int)strlen(DEPLOY) - 2, DEPLOY + 1);
	json_object *res, *ws;

	fakesup_add_json(f, "sympoziuminstances", INSTANCE);
	fakesup_add_json(f, "skillpacks", PACK);
	add_config(
	        f, "\"enabled\":true,\"baseDomain\":\"example.com\"", "true");
	res = run(f, r, DEPLOY, T0);
	ws = json_object_object_get(res, "writes");
	assert_int_equal(jx_array_len(ws), 1);
	assert_string_equal(jx_get_str(find_w(res, "create", "httproutes"),
	                            "object.spec.rules.0.backendRefs.0.name"),
	        "r-server");
	assert_int_equal(num(res, "after"), 30000);
	json_object_put(res);
	res = run(f, r, both, T0);
	assert_int_equal(
	        jx_array_len(json_object_object_get(res, "writes")), 0);
	assert_int_equal(num(res, "after"), 30000);
	json_object_put(res);
	res = run(f, bare, DEPLOY, T0);
	assert_null(find_w(res, "create", "httproutes"));
	json_object_put(res);
	fakesup_fail(f, "skillpacks", NULL, "boom");
	res = run(f, r, DEPLOY, T0);
	assert_null(find_w(res, "create", "httproutes"));
	assert_int_equal(num(res, "v"), IPC_V_REQUEUE_AFTER);
	json_object_put(res);
	free(both);
	free(bare);
	free(r);
}

/* reconcileDelete: the cached route <run>-web goes too. */
static void
test_route_delete(void **state)
{
	struct fakesup *f = *state;
	char *r = mkrun("", SERVING);
	json_object *o = json_tokener_parse(r), *res;
	char *both = xasprintf(
	        "[%.*s," ROUTE "]", (int)strlen(DEPLOY) - 2, DEPLOY + 1);

	(void)f;
	jx_setv(o, json_object_new_string("2026-01-01T00:00:00Z"), "metadata",
	        "deletionTimestamp", NULL);
	res = run(f, json_object_to_json_string(o), both, T0);
	assert_string_equal(
	        jx_get_str(find_w(res, "delete", "httproutes"), "name"),
	        "r-web");
	assert_string_equal(
	        jx_get_str(find_w(res, "delete", "httproutes"), "tolerate.0"),
	        "NotFound");
	assert_true(w_index(res, "delete", "httproutes")
	        < w_index(res, "patch", "agentruns"));
	json_object_put(res);
	free(both);
	json_object_put(o);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_pending_server, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_auth_secret_ref, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_serving, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_delete, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_key_secret, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_mcp_config, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_key_secret_bad_name,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_route_pending, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_route_hostname_param,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_route_skipped, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_route_serving, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_route_delete, fakesup_setup, fakesup_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
