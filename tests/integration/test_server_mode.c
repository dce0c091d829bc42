/*
 * test_server_mode.c: server-mode AgentRuns (spec
 * sympozium-controllers.md 1.4, 1.8) under the whole operator
 * (bin/sympoziumd and its workers against bin/kubesim).  A run with
 * spec.mode "server" and a requiresServer skill reaches phase Serving
 * with its Deployment and Service <run>-server, owned by it (upstream
 * agentrun_controller.go reconcilePendingServer at 008266e), and the
 * skill Role and RoleBinding of its sidecar (ensureSkillRBAC); a run the
 * upstream operator left in Serving, with its Deployment, before ours
 * started, stays Serving (reconcileServing) instead of failing; a
 * Serving run whose Deployment is deleted fails with "server Deployment
 * not found".  The web-proxy API key Secret <instance>-web-proxy-key
 * (upstream ensureServerAPIKeySecret) is made by the first run, owned by
 * it, its one key api-key read by the proxy's WEB_PROXY_API_KEY, and a
 * second run of the instance leaves it as it is.
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

#define WAIT_MS 15000
#define NS      "default"
#define GROUP   "sympozium.ai"
#define VERSION "v1alpha1"

static const struct kapi_res R_RUN = { GROUP, VERSION, "agentruns", true };
static const struct kapi_res R_INST
        = { GROUP, VERSION, "sympoziuminstances", true };
static const struct kapi_res R_SKP = { GROUP, VERSION, "skillpacks", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_ROLE
        = { "rbac.authorization.k8s.io", "v1", "roles", true };
static const struct kapi_res R_RB
        = { "rbac.authorization.k8s.io", "v1", "rolebindings", true };
static const struct kapi_res R_SEC = { "", "v1", "secrets", true };
static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CFG
        = { GROUP, VERSION, "sympoziumconfigs", true };
static const struct kapi_res R_GW
        = { "gateway.networking.k8s.io", "v1", "gateways", true };
static const struct kapi_res R_ROUTE
        = { "gateway.networking.k8s.io", "v1", "httproutes", true };
#define SYS    "sympozium-system"
#define GW_DIR "tests/fixtures/gateway-api"

static struct optest F;

static void
create(const struct kapi_res *r, json_object *o, json_object **out)
{
	optest_create_or_fail(&F, r, NS, o, out);
	json_object_put(o);
}

static void
create_run(const char *name, json_object **out)
{
	create(&R_RUN,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	                "\"AgentRun\",\"metadata\":{\"name\":\"%s\"},"
	                "\"spec\":{\"instanceRef\":\"web\",\"agentId\":"
	                "\"e2e\",\"sessionKey\":\"s1\",\"task\":\"serve\","
	                "\"mode\":\"server\",\"skills\":[{\"skillPackRef\":"
	                "\"web-endpoint\"}],\"model\":{\"provider\":"
	                "\"openai\",\"model\":\"gpt-4o\",\"authSecretRef\":"
	                "\"\"}}}",
	                name),
	        out);
}

/* A run as the upstream operator leaves it: Serving, its Deployment
 * <name>-server owned by it and labelled sympozium.ai/agent-run. */
static void
create_serving(const char *name)
{
	json_object *run = NULL, *dep, *out = NULL;
	struct kapi_err e = KAPI_ERR_INIT;

	create_run(name, &run);
	jx_set_path(run, "metadata.finalizers",
	        json_tokener_parse("[\"sympozium.ai/agentrun-finalizer\"]"));
	dep = testutil_jsonf(
	        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	        "\"metadata\":{\"name\":\"%s-server\",\"labels\":{"
	        "\"sympozium.ai/agent-run\":\"%s\",\"sympozium.ai/"
	        "component\":\"agent-server\"},\"ownerReferences\":[{"
	        "\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":"
	        "true,\"blockOwnerDeletion\":true}]},\"spec\":{\"replicas\":1,"
	        "\"selector\":{\"matchLabels\":{\"sympozium.ai/agent-run\":"
	        "\"%s\"}},\"template\":{\"metadata\":{\"labels\":{"
	        "\"sympozium.ai/agent-run\":\"%s\"}},\"spec\":{\"containers\":"
	        "[{\"name\":\"web-proxy\",\"image\":\"x\"}]}}}}",
	        name, name, name, jx_get_str(run, "metadata.uid"), name, name);
	create(&R_DEP, dep, NULL);
	jx_set_path(run, "status",
	        testutil_jsonf("{\"phase\":\"Serving\",\"deploymentName\":"
	                       "\"%s-server\",\"serviceName\":\"%s-server\","
	                       "\"startedAt\":\"2020-01-01T00:00:00Z\"}",
	                name, name));
	assert_int_equal(
	        kapi_update_status(F.a.c, &R_RUN, NS, run, &out, &e), KAPI_OK);
	kapi_err_fini(&e);
	json_object_put(out);
	json_object_put(run);
}

static int
setup(void **state)
{
	*state = &F;
	if (optest_start(&F, "test-server-mode", NULL, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	/* the Gateway API served from the start: routes are watched */
	assert_int_equal(ksim_apply_crds(F.a.c, GW_DIR), 3);
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":"
	                       "{\"name\":\"web\"},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}}}}"),
	        NULL);
	create(&R_SKP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                "\"kind\":\"SkillPack\",\"metadata\":{\"name\":"
	                "\"web-endpoint\"},\"spec\":{\"skills\":[],"
	                "\"sidecar\":{\"image\":\"web-proxy:e2e\","
	                "\"requiresServer\":true,\"ports\":[{\"name\":"
	                "\"http\",\"containerPort\":8080}],\"rbac\":[{"
	                "\"apiGroups\":[\"sympozium.ai\"],\"resources\":"
	                "[\"agentruns\"],\"verbs\":[\"get\","
	                "\"create\"]}]}}}"),
	        NULL);
	/* before the operator starts: what upstream left behind */
	create_serving("left");
	optest_sd_start(&F, 0, 0, NULL);
	return (0);
}

static void
test_pending_to_serving(void **state)
{
	const struct optest_owner own = { "AgentRun", "srv", NULL };
	json_object *run;

	(void)state;
	create_run("srv", NULL);
	optest_wait_field(&F, &R_RUN, NS, "srv", "status.phase", "Serving");
	run = optest_get(&F, &R_RUN, NS, "srv");
	assert_string_equal(
	        jx_get_str(run, "status.deploymentName"), "srv-server");
	assert_string_equal(
	        jx_get_str(run, "status.serviceName"), "srv-server");
	assert_non_null(jx_get_str(run, "status.startedAt"));
	json_object_put(run);
	optest_wait_obj(
	        &F, &R_DEP, NS, "srv-server", optest_check_owner, &own);
	optest_wait_obj(
	        &F, &R_SVC, NS, "srv-server", optest_check_owner, &own);
	/* the server sidecar's skill RBAC passed the supervisor's bounds */
	optest_wait_obj(&F, &R_ROLE, NS, "sympozium-skill-web-endpoint-srv",
	        optest_check_owner, &own);
	optest_wait_obj(&F, &R_RB, NS, "sympozium-skill-web-endpoint-srv",
	        optest_check_owner, &own);
}

/* The Secret's api-key as stored: in data, base64 (the API server folds
 * stringData in and drops it). */
static const char *
stored_key(json_object *sec)
{
	assert_null(jx_get(sec, "stringData"));
	return (jx_get_str(sec, "data.api-key"));
}

/* ensureServerAPIKeySecret: web-web-proxy-key, made once by the first
 * run (srv above) and never rewritten by the next; every proxy reads it
 * through WEB_PROXY_API_KEY (reconcilePendingServer's secretKeyRef). */
static void
test_api_key_secret(void **state)
{
	const struct optest_owner own = { "AgentRun", "srv", NULL };
	json_object *sec, *sec2, *dep;
	char *rv, *key;

	(void)state;
	optest_wait_obj(
	        &F, &R_SEC, NS, "web-web-proxy-key", optest_check_owner, &own);
	sec = optest_get(&F, &R_SEC, NS, "web-web-proxy-key");
	assert_string_equal(json_object_get_string(jx_getv(sec, "metadata",
	                            "labels", "sympozium.ai/component", NULL)),
	        "web-proxy");
	assert_non_null(stored_key(sec));
	rv = xstrdup(jx_get_str(sec, "metadata.resourceVersion"));
	key = xstrdup(stored_key(sec));
	json_object_put(sec);
	create_run("srv2", NULL);
	optest_wait_field(&F, &R_RUN, NS, "srv2", "status.phase", "Serving");
	dep = optest_get(&F, &R_DEP, NS, "srv2-server");
	assert_non_null(dep);
	json_object *env = jx_get(dep, "spec.template.spec.containers.0.env");
	bool found = false;
	for (size_t i = 0; i < jx_array_len(env); i++) {
		json_object *e = json_object_array_get_idx(env, i);
		if (strcmp(jx_get_str(e, "name"), "WEB_PROXY_API_KEY") == 0) {
			assert_string_equal(
			        jx_get_str(e, "valueFrom.secretKeyRef.name"),
			        "web-web-proxy-key");
			assert_string_equal(
			        jx_get_str(e, "valueFrom.secretKeyRef.key"),
			        "api-key");
			found = true;
		}
	}
	assert_true(found);
	json_object_put(dep);
	sec2 = optest_get(&F, &R_SEC, NS, "web-web-proxy-key");
	assert_string_equal(jx_get_str(sec2, "metadata.resourceVersion"), rv);
	assert_string_equal(stored_key(sec2), key);
	assert_string_equal(
	        jx_get_str(sec2, "metadata.ownerReferences.0.name"), "srv");
	json_object_put(sec2);
	free(rv);
	free(key);
}

/* The taken-over Serving run stays Serving (checked after the operator
 * has had time to reconcile it: the new run above went through). */
static void
test_taken_over(void **state)
{
	json_object *run;

	(void)state;
	run = optest_get(&F, &R_RUN, NS, "left");
	assert_string_equal(jx_get_str(run, "status.phase"), "Serving");
	assert_null(jx_get(run, "status.error"));
	json_object_put(run);
	/* its Deployment gone: upstream fails the run */
	assert_int_equal(kapi_delete(F.a.c, &R_DEP, NS, "left-server", NULL,
	                         NULL, NULL),
	        KAPI_OK);
	optest_wait_field(&F, &R_RUN, NS, "left", "status.phase", "Failed");
	optest_wait_field(&F, &R_RUN, NS, "left", "status.error",
	        "server Deployment not found");
}

/* A merge patch of SympoziumConfig sympozium-system/default. */
static void
patch_config(const char *patch)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_patch(F.a.c, &R_CFG, SYS, "default", KAPI_PATCH_MERGE, patch,
	            NULL, false, NULL, &e)
	        != KAPI_OK) {
		fail_msg("patch config: %s", e.message ?: "");
	}
	kapi_err_fini(&e);
}

/* The Gateway the config controller made, as its gateway controller
 * would program it; then the config's status says ready. */
static void
gateway_ready(void)
{
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *gw;

	optest_wait_obj(&F, &R_GW, SYS, "sympozium-gateway",
	        optest_check_present, NULL);
	gw = optest_get(&F, &R_GW, SYS, "sympozium-gateway");
	json_object_object_add(gw, "status",
	        json_tokener_parse("{\"addresses\":[{\"type\":\"IPAddress\","
	                           "\"value\":\"10.1.2.3\"}],\"conditions\":["
	                           "{\"type\":\"Programmed\",\"status\":"
	                           "\"True\"}]}"));
	if (kapi_update_status(F.a.c, &R_GW, SYS, gw, NULL, &e) != KAPI_OK) {
		fail_msg("gateway status: %s", e.message ?: "");
	}
	kapi_err_fini(&e);
	json_object_put(gw);
	for (int i = 0; i < 4; i++) {
		json_object *c = optest_get(&F, &R_CFG, SYS, "default");
		bool ok = false;
		jx_get_bool(c, "status.gateway.ready", &ok);
		json_object_put(c);
		if (ok) {
			return;
		}
		/* sooner than the config's 30 s requeue */
		char patch[96];
		snprintf(patch, sizeof(patch),
		        "{\"metadata\":{\"annotations\":{\"e2e/touch\":"
		        "\"%d\"}}}",
		        i);
		patch_config(patch);
		ksim_sleep_ms(1000);
	}
	fail_msg("SympoziumConfig default: status.gateway.ready not true");
}

static const char *
check_route(json_object *o, const void *arg)
{
	const struct optest_owner *own = arg;
	const char *miss = optest_check_owner(o, own);

	if (miss != NULL) {
		return (miss);
	}
	if (strcmp(jx_get_str(o, "spec.hostnames.0") ?: "", "web.example.com")
	        != 0) {
		return ("hostname is not web.example.com");
	}
	if (strcmp(jx_get_str(o, "spec.parentRefs.0.name") ?: "",
	            "sympozium-gateway")
	                != 0
	        || strcmp(jx_get_str(o, "spec.parentRefs.0.namespace") ?: "",
	                   SYS)
	                != 0) {
		return ("parentRef is not sympozium-system/sympozium-gateway");
	}
	if (strcmp(jx_get_str(o, "spec.rules.0.backendRefs.0.name") ?: "",
	            "routed-server")
	        != 0) {
		return ("backend is not the Service routed-server");
	}
	return (NULL);
}

/* maybeCreateHTTPRoute under the whole operator: with SympoziumConfig
 * sympozium-system/default's gateway ready, a new server run gets the
 * route routed-web (<instance>.<baseDomain>, the gateway, its Service on
 * 8080), owned by it; deleting the run takes the route. */
static void
test_http_route(void **state)
{
	const struct optest_owner own = { "AgentRun", "routed", NULL };
	json_object *cfg;

	(void)state;
	/* found at start-up: the routes are watched (served.c) */
	assert_true(sdproc_log_wait(
	        &F.sd[0], "gateway-api: httproutes served", 1, WAIT_MS));
	json_object *ns = optest_get(&F, &R_NS, NULL, SYS);
	if (ns == NULL) {
		assert_int_equal(ksim_api_create(&F.a, &R_NS, NULL, SYS, NULL),
		        KAPI_OK);
	}
	json_object_put(ns);
	cfg = testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                     "\"kind\":\"SympoziumConfig\",\"metadata\":{"
	                     "\"name\":\"default\"},\"spec\":{\"gateway\":{"
	                     "\"enabled\":true,\"baseDomain\":"
	                     "\"example.com\"}}}");
	optest_create_or_fail(&F, &R_CFG, SYS, cfg, NULL);
	json_object_put(cfg);
	gateway_ready();
	create_run("routed", NULL);
	optest_wait_field(&F, &R_RUN, NS, "routed", "status.phase", "Serving");
	optest_wait_obj(&F, &R_ROUTE, NS, "routed-web", check_route, &own);
	assert_int_equal(
	        kapi_delete(F.a.c, &R_RUN, NS, "routed", NULL, NULL, NULL),
	        KAPI_OK);
	optest_wait_obj(&F, &R_RUN, NS, "routed", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_ROUTE, NS, "routed-web", optest_check_absent, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pending_to_serving),
		cmocka_unit_test(test_api_key_secret),
		cmocka_unit_test(test_taken_over),
		cmocka_unit_test(test_http_route),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
