/*
 * test_mcpserver.c: the MCPServer reconciler, JSON in, writes and verdict
 * out (spec sympozium-controllers.md section 6): external URL, stdio and
 * http Deployments and Services, status and conditions, requeue while not
 * ready, Secrets read through a fake supervisor end of the view, invalid
 * specs.
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
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "workers/kobj.h"
#include "workers/mcpserver.h"

#define NOW_MS 1767225600000LL /* 2026-01-01T00:00:00Z */
#define NOW_TS "2026-01-01T00:00:00Z"

static json_object *
J(const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return (o);
}

/* Runs the reconciler, its view served by f (NULL: none). */
static void
run_view(const char *obj, const char *children, struct fakesup *f,
        struct fakesup_run *g)
{
	json_object *o = obj != NULL ? J(obj) : NULL;
	json_object *k = J(children != NULL ? children : "[]");

	fakesup_run(&mcpserver_reconciler, f, "ns/github", o, k, NOW_MS, g);
	json_object_put(o);
	json_object_put(k);
}

static void
run(const char *obj, const char *children, struct fakesup_run *g)
{
	run_view(obj, children, NULL, g);
}

/* ---- the fake supervisor: Secret ns/tok, and "boom" failing ---- */

static int
fake_setup(void **state)
{
	struct fakesup *f = fakesup_start();

	fakesup_add_secret(f, "ns", "tok",
	        J("{\"metadata\":{\"name\":\"tok\"},"
	          "\"keys\":[\"Z_KEY\",\"A_KEY\"]}"));
	fakesup_fail(f, "secrets", "boom", "API down");
	*state = f;
	return (0);
}

/* ---- objects ---- */

#define MD(gen)                                                               \
	"\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","             \
	"\"uid\":\"u-1\",\"generation\":" #gen ",\"resourceVersion\":\"5\"}"
#define STDIO_SPEC                                                            \
	"\"spec\":{\"transportType\":\"stdio\",\"toolsPrefix\":\"github\","   \
	"\"deployment\":{\"image\":\"mcp/github\",\"cmd\":\"node\","          \
	"\"args\":[\"dist/index.js\",\"--x\"],\"env\":{\"ZED\":\"z\","        \
	"\"ALPHA\":\"a\"},\"secretRefs\":[{\"name\":\"tok\"},"                \
	"{\"name\":\"missing\"}],\"resources\":{\"limits\":{\"cpu\":"         \
	"\"1\"}},\"serviceAccountName\":\"mcp-sa\"}}"
#define HTTP_SPEC                                                             \
	"\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":\"search\","    \
	"\"replicas\":2,\"deployment\":{\"image\":\"ghcr.io/x/search:1\","    \
	"\"port\":9000,\"env\":{\"LOG_LEVEL\":\"info\",\"A\":\"1\"},"         \
	"\"secretRefs\":[{\"name\":\"s1\"},{\"name\":\"s2\"}]}}"
#define POD_LABELS                                                            \
	"{\"app.kubernetes.io/name\":\"mcpserver\","                          \
	"\"app.kubernetes.io/instance\":\"github\","                          \
	"\"app.kubernetes.io/managed-by\":\"sympozium\"}"
#define OWNER                                                                 \
	"[{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"MCPServer\","  \
	"\"name\":\"github\",\"uid\":\"u-1\",\"controller\":true,"            \
	"\"blockOwnerDeletion\":true}]"

static void
test_gone(void **state)
{
	struct fakesup_run g;

	(void)state;
	run(NULL, NULL, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_external(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;
	const char *want
	        = "{\"ready\":true,\"url\":\"https://mcp.example.com/"
	          "mcp\",\"toolCount\":0,\"conditions\":[{\"type\":"
	          "\"Ready\",\"status\":\"True\",\"reason\":"
	          "\"External\",\"message\":\"External MCP server URL "
	          "configured\",\"observedGeneration\":2,"
	          "\"lastTransitionTime\":\"" NOW_TS "\"}]}";
	char obj[1024];

	(void)state;
	/* a deployment block is ignored, nothing is deployed */
	run("{" MD(2) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"docs\",\"url\":\"https://mcp.example.com/"
	              "mcp\",\"deployment\":"
	              "{\"image\":\"x\"}}}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE_STATUS);
	assert_string_equal(w.res.plural, "mcpservers");
	assert_string_equal(jx_get_str(w.object, "kind"), "MCPServer");
	fakesup_assert_json(jx_get(w.object, "status"), want);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
	/* the same again: no write */
	snprintf(obj, sizeof(obj),
	        "{" MD(2) ",\"spec\":{\"transportType\":\"http\","
	                  "\"toolsPrefix\":"
	                  "\"docs\",\"url\":\"https://mcp.example.com/mcp\"},"
	                  "\"status\":%s}",
	        want);
	run(obj, NULL, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_external_keeps_deployed(void **state)
{
	struct fakesup_run g;
	json_object *st;

	(void)state;
	/* formerly managed: Deployed stays, Ready flips to External; the
	 * Deployment is not deleted */
	run("{" MD(4) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"url\":\"http://"
	              "ext:1\"},\"status\":{\"ready\":false,"
	              "\"url\":\"http://github.ns.svc:8080\",\"toolCount\":0,"
	              "\"conditions\":[{\"type\":\"Deployed\",\"status\":"
	              "\"True\","
	              "\"reason\":\"DeploymentCreated\",\"message\":\"m\","
	              "\"observedGeneration\":3,\"lastTransitionTime\":"
	              "\"2025-01-01T00:00:00Z\"},{\"type\":\"Ready\","
	              "\"status\":"
	              "\"False\",\"reason\":\"NotReady\",\"message\":\"m\","
	              "\"observedGeneration\":3,\"lastTransitionTime\":"
	              "\"2025-01-01T00:00:00Z\"}]}}",
	        "[{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"github\"}}"
	        "]",
	        &g);
	assert_int_equal(g.r.nwrites, 1);
	st = jx_get(fakesup_write(&g, 0).object, "status");
	assert_string_equal(jx_get_str(st, "conditions.0.type"), "Deployed");
	assert_string_equal(jx_get_str(st, "conditions.0.lastTransitionTime"),
	        "2025-01-01T00:00:00Z");
	assert_string_equal(jx_get_str(st, "conditions.1.reason"), "External");
	assert_string_equal(
	        jx_get_str(st, "conditions.1.lastTransitionTime"), NOW_TS);
	fakesup_assert_json(
	        jx_get(st, "conditions.1.observedGeneration"), "4");
	assert_string_equal(jx_get_str(st, "url"), "http://ext:1");
	fakesup_run_fini(&g);
}

static void
test_stdio_create(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;
	struct ipc_write w;
	json_object *pod, *c;

	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	run_view("{" MD(1) "," STDIO_SPEC "}", NULL, f, &g);
	/* two Secrets, then the Deployment and the Service the child watch
	 * did not show (none: created) */
	assert_int_equal(fakesup_nreqs(f), 4);
	assert_true(fakesup_was_read(f, "deployments", "github"));
	assert_true(fakesup_was_read(f, "services", "github"));
	assert_int_equal(g.r.nwrites, 3);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_CREATE);
	assert_string_equal(w.res.group, "apps");
	assert_string_equal(w.res.plural, "deployments");
	assert_string_equal(w.namespace, "ns");
	assert_string_equal(kobj_name(w.object), "github");
	fakesup_assert_json(
	        jx_get(w.object, "metadata.ownerReferences"), OWNER);
	assert_string_equal(
	        kobj_label(w.object, CONTRACT_LABEL_MCP_SERVER), "github");
	assert_string_equal(
	        kobj_label(w.object, "app.kubernetes.io/name"), "mcpserver");
	fakesup_assert_json(jx_get(w.object, "spec.replicas"), "1");
	fakesup_assert_json(
	        jx_get(w.object, "spec.selector.matchLabels"), POD_LABELS);
	fakesup_assert_json(
	        jx_get(w.object, "spec.template.metadata.labels"), POD_LABELS);
	pod = jx_get(w.object, "spec.template.spec");
	assert_string_equal(jx_get_str(pod, "serviceAccountName"), "mcp-sa");
	fakesup_assert_json(jx_get(pod, "volumes"),
	        "[{\"name\":\"adapter-bin\",\"emptyDir\":{}}]");
	fakesup_assert_json(jx_get(pod, "initContainers"),
	        "[{\"name\":\"inject-adapter\",\"image\":"
	        "\"ghcr.io/sympozium-ai/sympozium/mcp-bridge:latest\","
	        "\"command\":[\"cp\",\"/usr/local/bin/mcp-bridge\","
	        "\"/adapter/mcp-bridge\"],\"volumeMounts\":[{\"name\":"
	        "\"adapter-bin\",\"mountPath\":\"/adapter\"}]}]");
	assert_int_equal(
	        json_object_array_length(jx_get(pod, "containers")), 1);
	c = jx_get(pod, "containers.0");
	assert_string_equal(jx_get_str(c, "name"), "mcp-server");
	assert_string_equal(jx_get_str(c, "image"), "mcp/github");
	fakesup_assert_json(jx_get(c, "command"), "[\"/adapter/mcp-bridge\"]");
	fakesup_assert_json(jx_get(c, "args"), "[\"--stdio-adapter\"]");
	fakesup_assert_json(jx_get(c, "env"),
	        "[{\"name\":\"MCP_STDIO_ADAPTER\",\"value\":\"true\"},"
	        "{\"name\":\"STDIO_CMD\",\"value\":\"node\"},"
	        "{\"name\":\"STDIO_ARGS\",\"value\":\"dist/index.js,--x\"},"
	        "{\"name\":\"STDIO_SERVER_NAME\",\"value\":\"github\"},"
	        "{\"name\":\"STDIO_PORT\",\"value\":\"8080\"},"
	        "{\"name\":\"STDIO_ENV_ALPHA\",\"value\":\"a\"},"
	        "{\"name\":\"STDIO_ENV_ZED\",\"value\":\"z\"},"
	        "{\"name\":\"STDIO_ENV_A_KEY\",\"valueFrom\":{"
	        "\"secretKeyRef\":"
	        "{\"name\":\"tok\",\"key\":\"A_KEY\"}}},"
	        "{\"name\":\"STDIO_ENV_Z_KEY\",\"valueFrom\":{"
	        "\"secretKeyRef\":"
	        "{\"name\":\"tok\",\"key\":\"Z_KEY\"}}}]");
	fakesup_assert_json(jx_get(c, "volumeMounts"),
	        "[{\"name\":\"adapter-bin\",\"mountPath\":\"/adapter\"}]");
	fakesup_assert_json(
	        jx_get(c, "resources"), "{\"limits\":{\"cpu\":\"1\"}}");
	fakesup_assert_json(jx_get(c, "livenessProbe"),
	        "{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
	        "\"initialDelaySeconds\":30,\"periodSeconds\":15,"
	        "\"timeoutSeconds\":5,\"failureThreshold\":5}");
	fakesup_assert_json(jx_get(c, "readinessProbe"),
	        "{\"httpGet\":{\"path\":\"/readyz\",\"port\":8080},"
	        "\"initialDelaySeconds\":20,\"periodSeconds\":10,"
	        "\"timeoutSeconds\":5,\"failureThreshold\":5}");
	w = fakesup_write(&g, 1);
	assert_int_equal(w.op, IPC_OP_CREATE);
	assert_string_equal(w.res.plural, "services");
	assert_string_equal(kobj_name(w.object), "github");
	fakesup_assert_json(
	        jx_get(w.object, "metadata.ownerReferences"), OWNER);
	fakesup_assert_json(jx_get(w.object, "spec"),
	        "{\"selector\":{\"app.kubernetes.io/name\":\"mcpserver\","
	        "\"app.kubernetes.io/instance\":\"github\"},\"ports\":[{"
	        "\"name\":\"http\",\"protocol\":\"TCP\",\"port\":8080,"
	        "\"targetPort\":8080}]}");
	w = fakesup_write(&g, 2);
	assert_int_equal(w.op, IPC_OP_UPDATE_STATUS);
	fakesup_assert_json(jx_get(w.object, "status"),
	        "{\"ready\":false,\"url\":\"http://github.ns.svc:8080\","
	        "\"toolCount\":0,\"conditions\":[{\"type\":\"Deployed\","
	        "\"status\":\"True\",\"reason\":\"DeploymentCreated\","
	        "\"message\":\"Deployment and Service created\","
	        "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW_TS
	        "\"},{\"type\":\"Ready\",\"status\":\"False\",\"reason\":"
	        "\"NotReady\",\"message\":\"Waiting for deployment to become "
	        "ready\",\"observedGeneration\":1,\"lastTransitionTime\":"
	        "\"" NOW_TS "\"}]}");
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(g.after_ms, 5000);
	fakesup_run_fini(&g);
}

static void
test_stdio_image_env(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;

	setenv("SYMPOZIUM_IMAGE_REGISTRY", "reg.local/sy", 1);
	setenv("SYMPOZIUM_IMAGE_TAG", "v9", 1);
	run_view("{" MD(1) ",\"spec\":{\"transportType\":\"stdio\","
	                   "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
	                   "\"i\"}}}",
	        NULL, f, &g);
	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	assert_int_equal(fakesup_nreqs(f), 2); /* the unseen children */
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 0).object,
	                "spec.template.spec.initContainers.0.image"),
	        "reg.local/sy/mcp-bridge:v9");
	json_object *c = jx_get(fakesup_write(&g, 0).object,
	        "spec.template.spec.containers.0");
	assert_string_equal(jx_get_str(c, "env.1.value"), "");
	assert_string_equal(jx_get_str(c, "env.2.value"), "");
	fakesup_assert_json(jx_get(c, "resources"), "{}");
	assert_null(jx_get(fakesup_write(&g, 0).object,
	        "spec.template.spec.serviceAccountName"));
	fakesup_run_fini(&g);
}

static void
test_stdio_secret_error(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;

	run_view("{" MD(1) ",\"spec\":{\"transportType\":\"stdio\","
	                   "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
	                   "\"i\","
	                   "\"secretRefs\":[{\"name\":\"boom\"}]}}}",
	        NULL, f, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_non_null(strstr(g.message, "API down"));
	fakesup_run_fini(&g);
}

static void
test_stdio_no_view(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{" MD(1) ",\"spec\":{\"transportType\":\"stdio\",\"toolsPrefix\":"
	              "\"g\",\"deployment\":{\"image\":\"i\",\"secretRefs\":[{"
	              "\"name\":"
	              "\"tok\"}]}}}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	fakesup_run_fini(&g);
}

static void
test_http_create(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;
	json_object *pod;

	(void)state;
	run("{" MD(1) "," HTTP_SPEC "}", NULL, &g);
	assert_int_equal(g.r.nwrites, 3);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_CREATE);
	fakesup_assert_json(jx_get(w.object, "spec.replicas"), "2");
	pod = jx_get(w.object, "spec.template.spec");
	assert_null(jx_get(pod, "initContainers"));
	assert_null(jx_get(pod, "volumes"));
	fakesup_assert_json(jx_get(pod, "containers"),
	        "[{\"name\":\"mcp-server\",\"image\":\"ghcr.io/x/search:1\","
	        "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":"
	        "\"LOG_LEVEL\",\"value\":\"info\"}],\"envFrom\":[{"
	        "\"secretRef\":"
	        "{\"name\":\"s1\"}},{\"secretRef\":{\"name\":\"s2\"}}],"
	        "\"resources\":{},\"ports\":[{\"containerPort\":9000,"
	        "\"protocol\":\"TCP\"}],\"readinessProbe\":{\"tcpSocket\":"
	        "{\"port\":9000},\"initialDelaySeconds\":3,"
	        "\"periodSeconds\":5}}]");
	w = fakesup_write(&g, 1);
	fakesup_assert_json(jx_get(w.object, "spec.ports"),
	        "[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":9000,"
	        "\"targetPort\":9000}]");
	w = fakesup_write(&g, 2);
	assert_string_equal(jx_get_str(w.object, "status.url"),
	        "http://github.ns.svc:9000");
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	fakesup_run_fini(&g);
}

static void
test_http_command(void **state)
{
	struct fakesup_run g;
	json_object *c;

	(void)state;
	run("{" MD(1) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"deployment\":{\"image\":\"i\",\"cmd\":\"srv\","
	              "\"args\":"
	              "[\"-p\",\"1\"]}}}",
	        NULL, &g);
	c = jx_get(fakesup_write(&g, 0).object,
	        "spec.template.spec.containers.0");
	fakesup_assert_json(jx_get(c, "command"), "[\"srv\"]");
	fakesup_assert_json(jx_get(c, "args"), "[\"-p\",\"1\"]");
	assert_null(jx_get(c, "env"));
	assert_null(jx_get(c, "envFrom"));
	fakesup_assert_json(jx_get(c, "ports"),
	        "[{\"containerPort\":8080,\"protocol\":\"TCP\"}]");
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 2).object, "status.url"),
	        "http://github.ns.svc:8080");
	fakesup_run_fini(&g);
	/* args without cmd are kept (upstream drops them) */
	run("{" MD(1) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"deployment\":{\"image\":\"i\",\"args\":[\"-v\"]"
	              "}}}",
	        NULL, &g);
	c = jx_get(fakesup_write(&g, 0).object,
	        "spec.template.spec.containers.0");
	assert_null(jx_get(c, "command"));
	fakesup_assert_json(jx_get(c, "args"), "[\"-v\"]");
	fakesup_run_fini(&g);
}

/* The children and status a first http reconcile produced, as the cache
 * would show them (kind missing, as in list items). */
static void
steady_children(char *buf, size_t len, int ready)
{
	struct fakesup_run g;
	char *dep, *svc;

	run("{" MD(1) "," HTTP_SPEC "}", NULL, &g);
	json_object *d = fakesup_write(&g, 0).object,
	            *s = fakesup_write(&g, 1).object;
	jx_set_path(
	        d, "metadata.resourceVersion", json_object_new_string("9"));
	jx_set_path(d, "status.readyReplicas", json_object_new_int(ready));
	jx_set_path(s, "spec.clusterIP", json_object_new_string("10.0.0.1"));
	json_object_object_del(d, "kind");
	json_object_object_del(s, "kind");
	json_object_object_del(d, "apiVersion");
	json_object_object_del(s, "apiVersion");
	dep = jx_to_string(d);
	svc = jx_to_string(s);
	snprintf(buf, len, "[%s,%s]", dep, svc);
	free(dep);
	free(svc);
	fakesup_run_fini(&g);
}

static void
test_ready_then_steady(void **state)
{
	char children[8192], obj[8192];
	struct fakesup_run g;
	json_object *st;

	(void)state;
	steady_children(children, sizeof(children), 2);
	run("{" MD(1) "," HTTP_SPEC "}", children, &g);
	/* nothing to change on the children: only status */
	assert_int_equal(g.r.nwrites, 1);
	st = jx_get(fakesup_write(&g, 0).object, "status");
	fakesup_assert_json(jx_get(st, "ready"), "true");
	assert_string_equal(jx_get_str(st, "conditions.1.type"), "Ready");
	assert_string_equal(jx_get_str(st, "conditions.1.status"), "True");
	assert_string_equal(jx_get_str(st, "conditions.1.reason"), "Ready");
	assert_string_equal(
	        jx_get_str(st, "conditions.1.message"), "MCP server is ready");
	assert_int_equal(g.verdict, IPC_V_DONE);
	char *sts = jx_to_string(st);
	snprintf(obj, sizeof(obj), "{" MD(1) "," HTTP_SPEC ",\"status\":%s}",
	        sts);
	free(sts);
	fakesup_run_fini(&g);
	/* steady state: no write at all, no requeue */
	run(obj, children, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
	/* the Deployment loses its pods: Ready flips, requeue after 5 s */
	steady_children(children, sizeof(children), 0);
	run(obj, children, &g);
	assert_int_equal(g.r.nwrites, 1);
	st = jx_get(fakesup_write(&g, 0).object, "status");
	fakesup_assert_json(jx_get(st, "ready"), "false");
	assert_string_equal(jx_get_str(st, "conditions.1.reason"), "NotReady");
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(g.after_ms, 5000);
	fakesup_run_fini(&g);
}

static void
test_update_on_change(void **state)
{
	char children[8192];
	struct fakesup_run g;
	struct ipc_write w;

	(void)state;
	steady_children(children, sizeof(children), 1);
	/* a new image and port: Deployment and Service updated in place */
	run("{" MD(2) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"replicas\":2,\"deployment\":{\"image\":\"new:"
	              "2\","
	              "\"port\":9100}}}",
	        children, &g);
	assert_int_equal(g.r.nwrites, 3);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	assert_string_equal(w.name, "github");
	assert_string_equal(
	        jx_get_str(w.object, "metadata.resourceVersion"), "9");
	assert_string_equal(jx_get_str(w.object, "kind"), "Deployment");
	assert_string_equal(
	        jx_get_str(w.object, "spec.template.spec.containers.0.image"),
	        "new:2");
	w = fakesup_write(&g, 1);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	assert_string_equal(w.res.plural, "services");
	assert_string_equal(
	        jx_get_str(w.object, "spec.clusterIP"), "10.0.0.1");
	fakesup_assert_json(jx_get(w.object, "spec.ports.0.port"), "9100");
	fakesup_run_fini(&g);
}

#define SUSP_SPEC(b)                                                          \
	"\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":\"search\","    \
	"\"replicas\":2,\"suspended\":" #b ",\"deployment\":{\"image\":"      \
	"\"ghcr.io/x/search:1\",\"port\":9000,\"env\":{\"LOG_LEVEL\":"        \
	"\"info\",\"A\":\"1\"},\"secretRefs\":[{\"name\":\"s1\"},"            \
	"{\"name\":\"s2\"}]}}"

/* Later upstream fix #195 (mcpserver_controller.go reconcileSuspended and
 * updateStatus, commit 6200f97): a suspended server creates nothing,
 * scales its Deployment to zero (only when not already zero), and its
 * status is ready false, no url, toolCount 0, Suspended=True and
 * Ready=False reason Suspended; resuming drops the Suspended condition and
 * the Deployment gets its replicas back. */
static void
test_suspended(void **state)
{
	char children[8192], obj[8192];
	struct fakesup_run g;
	struct ipc_write w;
	json_object *st, *d;
	char *sts, *susp;

	(void)state;
	/* never deployed: no child is created, only the status */
	run("{" MD(3) "," SUSP_SPEC(true) "}", NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	evtest_assert(g.result, 1, "github", "Warning", "Suspended",
	        "MCP server is suspended");
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE_STATUS);
	fakesup_assert_json(jx_get(w.object, "status"),
	        "{\"ready\":false,\"toolCount\":0,\"conditions\":["
	        "{\"type\":\"Suspended\",\"lastTransitionTime\":\"" NOW_TS
	        "\",\"status\":\"True\",\"observedGeneration\":3,"
	        "\"reason\":\"Suspended\",\"message\":\"MCP server is "
	        "suspended \xe2\x80\x94 configure secrets and tokens, then "
	        "unsuspend\"},{\"type\":\"Ready\",\"lastTransitionTime\":"
	        "\"" NOW_TS "\",\"status\":\"False\",\"observedGeneration\":3,"
	        "\"reason\":\"Suspended\",\"message\":\"MCP server is "
	        "suspended\"}]}");
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);

	/* deployed and ready: scaled to zero, url gone */
	steady_children(children, sizeof(children), 2);
	run("{" MD(3) "," SUSP_SPEC(
	            true) ",\"status\":{\"ready\":true,"
	                  "\"url\":\"http://"
	                  "github.ns.svc:9000\",\"toolCount\":4,"
	                  "\"tools\":[\"a\"]}}",
	        children, &g);
	assert_int_equal(g.r.nwrites, 3);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	assert_string_equal(w.res.plural, "deployments");
	assert_string_equal(
	        jx_get_str(w.object, "metadata.resourceVersion"), "9");
	fakesup_assert_json(jx_get(w.object, "spec.replicas"), "0");
	assert_string_equal(
	        jx_get_str(w.object, "spec.template.spec.containers.0.image"),
	        "ghcr.io/x/search:1");
	st = jx_get(fakesup_write(&g, 1).object, "status");
	fakesup_assert_json(jx_get(st, "ready"), "false");
	assert_null(jx_get(st, "url"));
	assert_null(jx_get(st, "tools"));
	fakesup_assert_json(jx_get(st, "toolCount"), "0");
	susp = jx_to_string(st);
	snprintf(obj, sizeof(obj),
	        "{" MD(3) "," SUSP_SPEC(true) ",\"status\":%s}", susp);
	fakesup_run_fini(&g);

	/* already at zero: nothing written */
	d = J(children);
	jx_set_path(json_object_array_get_idx(d, 0), "spec.replicas",
	        json_object_new_int(0));
	sts = jx_to_string(d);
	run(obj, sts, &g);
	free(sts);
	json_object_put(d);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);

	/* resumed: the Suspended condition goes, replicas come back */
	snprintf(obj, sizeof(obj),
	        "{" MD(4) "," SUSP_SPEC(false) ",\"status\":%s}", susp);
	d = J(children);
	jx_set_path(json_object_array_get_idx(d, 0), "spec.replicas",
	        json_object_new_int(0));
	sts = jx_to_string(d);
	json_object_put(d);
	run(obj, sts, &g);
	free(sts);
	free(susp);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	fakesup_assert_json(jx_get(w.object, "spec.replicas"), "2");
	st = NULL;
	for (size_t i = 0; i < g.r.nwrites; i++) {
		w = fakesup_write(&g, i);
		st = w.op == IPC_OP_UPDATE_STATUS ? jx_get(w.object, "status")
		                                  : st;
	}
	assert_non_null(st);
	for (size_t i = 0; i < jx_array_len(jx_get(st, "conditions")); i++) {
		assert_string_not_equal(
		        jx_get_str(json_object_array_get_idx(
		                           jx_get(st, "conditions"), i),
		                "type"),
		        "Suspended");
	}
	fakesup_run_fini(&g);
}

/* Later upstream fix #198 (mcpserver_controller.go buildStdioPodSpec and
 * buildHTTPPodSpec, commit 5acf1bd): spec.deployment.volumes go to the
 * pod (stdio: after adapter-bin) and volumeMounts to the mcp-server
 * container only (stdio: after the adapter mount; the init container
 * keeps its own); stdio refuses the reserved name adapter-bin in either
 * list (upstream returns that error; here Ready=False InvalidSpec). */
static void
test_volumes(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;
	json_object *pod;
	static const char vols[] = "\"volumes\":[{\"name\":\"secrets\","
	                           "\"csi\":{\"driver\":\"vault\"}}],"
	                           "\"volumeMounts\":[{\"name\":\"secrets\","
	                           "\"mountPath\":\"/mnt/s\"}]";
	char obj[2048];

	snprintf(obj, sizeof(obj),
	        "{" MD(1) ",\"spec\":{\"transportType\":\"stdio\","
	                  "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
	                  "\"i\",%s}}}",
	        vols);
	run_view(obj, NULL, f, &g);
	pod = jx_get(fakesup_write(&g, 0).object, "spec.template.spec");
	fakesup_assert_json(jx_get(pod, "volumes"),
	        "[{\"name\":\"adapter-bin\",\"emptyDir\":{}},"
	        "{\"name\":\"secrets\",\"csi\":{\"driver\":\"vault\"}}]");
	fakesup_assert_json(jx_get(pod, "containers.0.volumeMounts"),
	        "[{\"name\":\"adapter-bin\",\"mountPath\":\"/adapter\"},"
	        "{\"name\":\"secrets\",\"mountPath\":\"/mnt/s\"}]");
	fakesup_assert_json(jx_get(pod, "initContainers.0.volumeMounts"),
	        "[{\"name\":\"adapter-bin\",\"mountPath\":\"/adapter\"}]");
	fakesup_run_fini(&g);

	snprintf(obj, sizeof(obj),
	        "{" MD(1) ",\"spec\":{\"transportType\":\"http\","
	                  "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
	                  "\"i\",%s}}}",
	        vols);
	run(obj, NULL, &g);
	pod = jx_get(fakesup_write(&g, 0).object, "spec.template.spec");
	fakesup_assert_json(jx_get(pod, "volumes"),
	        "[{\"name\":\"secrets\",\"csi\":{\"driver\":\"vault\"}}]");
	fakesup_assert_json(jx_get(pod, "containers.0.volumeMounts"),
	        "[{\"name\":\"secrets\",\"mountPath\":\"/mnt/s\"}]");
	fakesup_run_fini(&g);

	/* the reserved name, in either list, for stdio only */
	static const char *const reserved[] = {
		"\"volumes\":[{\"name\":\"adapter-bin\",\"emptyDir\":{}}]",
		"\"volumeMounts\":[{\"name\":\"adapter-bin\","
		"\"mountPath\":\"/x\"}]",
	};
	for (size_t i = 0; i < 2; i++) {
		snprintf(obj, sizeof(obj),
		        "{" MD(1) ",\"spec\":{\"transportType\":\"stdio\","
		                  "\"toolsPrefix\":\"g\",\"deployment\":{"
		                  "\"image\":"
		                  "\"i\",%s}}}",
		        reserved[i]);
		run(obj, NULL, &g);
		assert_int_equal(
		        fakesup_write(&g, 0).op, IPC_OP_UPDATE_STATUS);
		json_object *st
		        = jx_get(fakesup_write(&g, 0).object, "status");
		assert_string_equal(
		        jx_get_str(st, "conditions.0.reason"), "InvalidSpec");
		assert_non_null(strstr(jx_get_str(st, "conditions.0.message"),
		        "name \"adapter-bin\" is reserved for stdio "
		        "transports"));
		fakesup_run_fini(&g);
	}
	snprintf(obj, sizeof(obj),
	        "{" MD(1) ",\"spec\":{\"transportType\":\"http\","
	                  "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
	                  "\"i\",%s}}}",
	        reserved[0]);
	run(obj, NULL, &g);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_CREATE);
	fakesup_run_fini(&g);
	/* malformed lists are refused, never crash */
	run("{" MD(1) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"deployment\":{\"image\":\"i\",\"volumes\":[7]}}"
	              "}",
	        NULL, &g);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_UPDATE_STATUS);
	fakesup_run_fini(&g);
	run("{" MD(1) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"deployment\":{\"image\":\"i\",\"volumeMounts\":"
	              "{}}}}",
	        NULL, &g);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_UPDATE_STATUS);
	fakesup_run_fini(&g);
}

/* Later upstream fix #167 (mcpserver_controller.go buildStdioPodSpec,
 * buildHTTPPodSpec, commit 74a0895): the mcp-server container takes
 * spec.deployment.imagePullPolicy when valid.  Unset or invalid: no
 * field, as at 008266e (upstream's fix writes IfNotPresent there; we keep
 * the API server's default so :latest images still pull Always). */
static void
test_pull_policy(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;
	const char *tt[] = { "stdio", "http" };
	char obj[1024];

	for (size_t i = 0; i < 2; i++) {
		snprintf(obj, sizeof(obj),
		        "{" MD(1) ",\"spec\":{\"transportType\":\"%s\","
		                  "\"toolsPrefix\":\"g\",\"deployment\":{"
		                  "\"image\":"
		                  "\"i\",\"imagePullPolicy\":\"Always\"}}}",
		        tt[i]);
		run_view(obj, NULL, f, &g);
		json_object *pod = jx_get(
		        fakesup_write(&g, 0).object, "spec.template.spec");
		assert_string_equal(
		        jx_get_str(pod, "containers.0.imagePullPolicy"),
		        "Always");
		assert_null(jx_get(pod, "initContainers.0.imagePullPolicy"));
		fakesup_run_fini(&g);
		snprintf(obj, sizeof(obj),
		        "{" MD(1) ",\"spec\":{\"transportType\":\"%s\","
		                  "\"toolsPrefix\":\"g\",\"deployment\":{"
		                  "\"image\":"
		                  "\"i\",\"imagePullPolicy\":\"Bogus\"}}}",
		        tt[i]);
		run_view(obj, NULL, f, &g);
		assert_null(jx_get(fakesup_write(&g, 0).object,
		        "spec.template.spec.containers.0.imagePullPolicy"));
		fakesup_run_fini(&g);
	}
}

static void
test_stdio_to_http_clears_adapter(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;
	char *dep;
	char children[16384];

	run_view("{" MD(1) ",\"spec\":{\"transportType\":\"stdio\","
	                   "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
	                   "\"i\","
	                   "\"serviceAccountName\":\"sa\"}}}",
	        NULL, f, &g);
	dep = jx_to_string(fakesup_write(&g, 0).object);
	snprintf(children, sizeof(children), "[%s]", dep);
	free(dep);
	fakesup_run_fini(&g);
	run("{" MD(2) ",\"spec\":{\"transportType\":\"http\",\"toolsPrefix\":"
	              "\"g\",\"deployment\":{\"image\":\"i\"}}}",
	        children, &g);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_UPDATE);
	json_object *pod
	        = jx_get(fakesup_write(&g, 0).object, "spec.template.spec");
	assert_null(jx_get(pod, "initContainers"));
	assert_null(jx_get(pod, "volumes"));
	assert_null(jx_get(pod, "serviceAccountName"));
	assert_int_equal(
	        json_object_array_length(jx_get(pod, "containers")), 1);
	assert_int_equal(
	        fakesup_write(&g, 1).op, IPC_OP_CREATE); /* no Service yet */
	fakesup_run_fini(&g);
}

static void
test_invalid_specs(void **state)
{
	static const char *const objs[] = {
		"{" MD(1) ",\"spec\":{\"transportType\":\"http\","
		          "\"toolsPrefix\":\"g\"}}",
		"{" MD(1) ",\"spec\":{\"transportType\":\"grpc\","
		          "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
		          "\"i\"}}}",
		"{" MD(1) ",\"spec\":{\"transportType\":\"http\","
		          "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
		          "\"\"}}}",
		"{" MD(1) ",\"spec\":{\"transportType\":\"http\","
		          "\"toolsPrefix\":\"g\",\"deployment\":{\"image\":"
		          "\"i\",\"port\":70000}}}",
		"{" MD(1) "}",
		"{" MD(1) ",\"spec\":{\"transportType\":\"http\","
		          "\"toolsPrefix\":\"g\",\"replicas\":-3,"
		          "\"deployment\":{\"image\":\"i\"}}}",
	};
	static const char *const msgs[] = { "spec.deployment is required",
		"transportType", "image is required", "port must be",
		"spec.deployment is required", "spec.replicas must not be" };
	struct fakesup_run g;
	json_object *st;

	(void)state;
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		run(objs[i], NULL, &g);
		assert_int_equal(g.r.nwrites, 2);
		evtest_assert(
		        g.result, 1, "github", "Warning", "InvalidSpec", NULL);
		assert_int_equal(
		        fakesup_write(&g, 0).op, IPC_OP_UPDATE_STATUS);
		st = jx_get(fakesup_write(&g, 0).object, "status");
		fakesup_assert_json(jx_get(st, "ready"), "false");
		assert_null(jx_get(st, "url"));
		assert_string_equal(
		        jx_get_str(st, "conditions.0.reason"), "InvalidSpec");
		assert_non_null(strstr(
		        jx_get_str(st, "conditions.0.message"), msgs[i]));
		assert_int_equal(g.verdict, IPC_V_DONE);
		fakesup_run_fini(&g);
	}
}

/* ---- take-over (upstream's mcpserver_controller.go reconcileDeployment
 * and reconcileService: CreateOrUpdate of objects named like the
 * MCPServer, SetControllerReference, no metadata labels) ---- */

#define UP_OWNER                                                              \
	"\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/v1alpha1\","     \
	"\"kind\":\"MCPServer\",\"name\":\"github\",\"uid\":\"u-1\","         \
	"\"controller\":true,\"blockOwnerDeletion\":true}]"

/* What upstream left: both children unlabelled (the Service with a label
 * a user added), both controlled by the MCPServer. */
static int
upstream_setup(void **state)
{
	struct fakesup *f = fakesup_start();

	fakesup_add_json(f, "deployments",
	        "{\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","
	        "\"resourceVersion\":\"41\"," UP_OWNER "}}");
	fakesup_add_json(f, "services",
	        "{\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","
	        "\"resourceVersion\":\"42\",\"labels\":{\"team\":\"a\"}"
	        "," UP_OWNER "}}");
	*state = f;
	return (0);
}

/* Children the child watch cannot see, controlled by the MCPServer, are
 * adopted (the JSON patch that tests they are still the MCPServer's and
 * adds the child label) before anything else is written. */
static void
test_adopt_upstream_children(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;
	struct ipc_write w;

	run_view("{" MD(1) "," HTTP_SPEC "}", NULL, f, &g);
	assert_int_equal(g.r.nwrites, 2);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_PATCH);
	assert_int_equal(w.patch_type, IPC_PATCH_JSON);
	assert_string_equal(w.res.plural, "deployments");
	assert_string_equal(w.name, "github");
	fakesup_assert_json(w.patch,
	        "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
	        "\"value\":\"41\"},{\"op\":\"test\",\"path\":"
	        "\"/metadata/ownerReferences/0/uid\",\"value\":\"u-1\"},"
	        "{\"op\":\"test\",\"path\":"
	        "\"/metadata/ownerReferences/0/controller\",\"value\":true},"
	        "{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":"
	        "{\"sympozium.ai/mcp-server\":\"github\"}}]");
	w = fakesup_write(&g, 1);
	assert_string_equal(w.res.plural, "services");
	fakesup_assert_json(jx_get(w.patch, "3"),
	        "{\"op\":\"add\",\"path\":"
	        "\"/metadata/labels/sympozium.ai~1mcp-server\","
	        "\"value\":\"github\"}");
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(g.after_ms, MCPSERVER_ADOPT_MS);
	fakesup_run_fini(&g);
}

/* A pass that runs before the watch has seen its own adoption (the
 * Deployment's event came first, the Service's not yet): the live Service
 * already carries the label, so it is not patched again; the pass waits
 * for the watch. */
static void
test_adopt_once(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;

	fakesup_remove(f, "services", "ns", "github");
	fakesup_add_json(f, "services",
	        "{\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","
	        "\"resourceVersion\":\"43\",\"labels\":{\"team\":\"a\","
	        "\"sympozium.ai/mcp-server\":\"github\"}," UP_OWNER "}}");
	run_view("{" MD(1) "," HTTP_SPEC "}", NULL, f, &g);
	assert_int_equal(g.r.nwrites, 1); /* the Deployment's patch only */
	assert_string_equal(fakesup_write(&g, 0).res.plural, "deployments");
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(g.after_ms, MCPSERVER_ADOPT_MS);
	fakesup_run_fini(&g);
}

/* One that is not the MCPServer's (no controller, or another) is not
 * taken over: an error, nothing written. */
static void
test_adopt_refused(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run g;
	const char *const others[] = {
		"{\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","
		"\"resourceVersion\":\"41\"}}",
		"{\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","
		"\"resourceVersion\":\"41\",\"ownerReferences\":[{\"uid\":"
		"\"u-2\",\"controller\":true}]}}",
		"{\"metadata\":{\"name\":\"github\",\"namespace\":\"ns\","
		"\"resourceVersion\":\"41\",\"ownerReferences\":[{\"uid\":"
		"\"u-1\"}]}}",
	};

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		fakesup_remove(f, "deployments", "ns", "github");
		fakesup_add_json(f, "deployments", others[i]);
		run_view("{" MD(1) "," HTTP_SPEC "}", NULL, f, &g);
		assert_int_equal(g.r.nwrites, 0);
		assert_int_equal(g.verdict, IPC_V_ERROR);
		assert_non_null(strstr(g.message, "not taken over"));
		fakesup_run_fini(&g);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_external),
		cmocka_unit_test(test_external_keeps_deployed),
		cmocka_unit_test_setup_teardown(
		        test_stdio_create, fake_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_stdio_image_env, fake_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_stdio_secret_error, fake_setup, fakesup_teardown),
		cmocka_unit_test(test_stdio_no_view),
		cmocka_unit_test(test_http_create),
		cmocka_unit_test(test_http_command),
		cmocka_unit_test(test_ready_then_steady),
		cmocka_unit_test(test_update_on_change),
		cmocka_unit_test_setup_teardown(
		        test_stdio_to_http_clears_adapter, fake_setup,
		        fakesup_teardown),
		cmocka_unit_test(test_invalid_specs),
		cmocka_unit_test(test_suspended),
		cmocka_unit_test_setup_teardown(
		        test_pull_policy, fake_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_volumes, fake_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_adopt_upstream_children,
		        upstream_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_adopt_refused, upstream_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_adopt_once, upstream_setup, fakesup_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
