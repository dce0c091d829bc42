/*
 * test_sympoziumconfig_e2e.c: the SympoziumConfig controller end to end:
 * one bin/kubesim (our CRDs) and one bin/sympoziumd with the production
 * worker.  Expected values from upstream
 * internal/controller/sympoziumconfig_controller.go at 008266e
 * (Reconcile, reconcileGatewayClass, reconcileGateway, readGatewayStatus,
 * updateStatus, cleanupGatewayResources):
 *   - before the Gateway API is served, an enabled config gets its
 *     finalizer and phase Error with the no-match message;
 *   - once the Gateway API CRDs are served (tests/fixtures/gateway-api/,
 *     our minimal ones), the GatewayClass "sympozium" and the Gateway
 *     "sympozium-gateway" appear with upstream's fields, labels and
 *     controller reference, and the phase is Pending;
 *   - the Gateway's status written as a gateway controller would
 *     (Programmed True, an address) makes the phase Ready with
 *     status.gateway {ready, address, listenerCount};
 *   - disabled: both are deleted, phase Disabled; enabled again and the
 *     config deleted: both deleted, the finalizer removed, the config gone.
 * The controller requeues after 30 s (upstream); the test touches the
 * config (an annotation) to reconcile it sooner, as an edit would.
 *
 * Every wait is bounded (WAIT_MS).
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
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 15000
#define NS      "e2e-config"
#define GW_DIR  "tests/fixtures/gateway-api"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CFG
        = { "sympozium.ai", "v1alpha1", "sympoziumconfigs", true };
static const struct kapi_res R_GW
        = { "gateway.networking.k8s.io", "v1", "gateways", true };
static const struct kapi_res R_GC
        = { "gateway.networking.k8s.io", "v1", "gatewayclasses", false };

static struct optest F;
static int touches;

static void
merge_patch(const struct kapi_res *r, const char *name, const char *patch)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_patch(F.a.c, r, r->namespaced ? NS : NULL, name,
	            KAPI_PATCH_MERGE, patch, NULL, false, NULL, &e)
	        != KAPI_OK) {
		fail_msg("patch %s %s: %s", r->plural, name, e.message ?: "");
	}
	kapi_err_fini(&e);
}

/* A user's edit: the config is reconciled again. */
static void
touch(void)
{
	char patch[128];

	snprintf(patch, sizeof(patch),
	        "{\"metadata\":{\"annotations\":{\"e2e/touch\":\"%d\"}}}",
	        touches++);
	merge_patch(&R_CFG, "platform", patch);
}

/* Polls the config until check passes, touching it between polls. */
static void
wait_config(optest_check_fn *check, const void *arg)
{
	json_object *last = NULL;
	const char *miss = "not tried";

	for (int i = 0; i < 4 && miss != NULL; i++) {
		json_object_put(last);
		last = NULL;
		miss = optest_poll(
		        &F, &R_CFG, NS, "platform", check, arg, &last);
		if (miss != NULL) {
			touch();
		}
	}
	if (miss != NULL) {
		fail_msg("config: %s: %s", miss,
		        last != NULL ? json_object_to_json_string(last) : "-");
	}
	json_object_put(last);
}

static const char *
ready_cond(json_object *o, const char *status, const char *reason)
{
	json_object *conds = jx_get(o, "status.conditions");

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *c = json_object_array_get_idx(conds, i);
		if (strcmp(jx_get_str(c, "type") ?: "", "Ready") != 0) {
			continue;
		}
		if (strcmp(jx_get_str(c, "status") ?: "", status) != 0) {
			return ("Ready condition status differs");
		}
		return (strcmp(jx_get_str(c, "reason") ?: "", reason) == 0
		                ? NULL
		                : "Ready condition reason differs");
	}
	return ("no Ready condition");
}

static bool
has_finalizer(json_object *o)
{
	json_object *f = jx_get(o, "metadata.finalizers");

	for (size_t i = 0; i < jx_array_len(f); i++) {
		const char *s = json_object_get_string(
		        json_object_array_get_idx(f, i));
		if (s != NULL
		        && strcmp(s, "sympozium.ai/config-finalizer") == 0) {
			return (true);
		}
	}
	return (false);
}

/* Phase arg, with the finalizer. */
static const char *
check_phase(json_object *o, const void *arg)
{
	const char *want = arg, *phase = jx_get_str(o, "status.phase");

	if (o == NULL) {
		return ("absent");
	}
	if (!has_finalizer(o)) {
		return ("no finalizer");
	}
	return (phase != NULL && strcmp(phase, want) == 0 ? NULL
	                                                  : "phase differs");
}

static const char *
check_not_served(json_object *o, const void *arg)
{
	const char *miss = check_phase(o, "Error"), *msg;

	(void)arg;
	if (miss != NULL
	        || (miss = ready_cond(o, "False", "ReconcileError"))) {
		return (miss);
	}
	msg = jx_get_str(
	        json_object_array_get_idx(jx_get(o, "status.conditions"), 0),
	        "message");
	return (msg != NULL
	                        && strcmp(msg,
	                                   "GatewayClass: no matches for kind "
	                                   "\"GatewayClass\" in version "
	                                   "\"gateway.networking.k8s.io/v1\"")
	                                == 0
	                ? NULL
	                : "not the no-match message");
}

static const char *
check_pending(json_object *o, const void *arg)
{
	const char *miss = check_phase(o, "Pending");
	json_object *gw = jx_get(o, "status.gateway");
	int64_t n = 0;
	bool ready = true;

	(void)arg;
	if (miss != NULL || (miss = ready_cond(o, "False", "Pending"))) {
		return (miss);
	}
	if (jx_get_bool(gw, "ready", &ready) != 0 || ready
	        || jx_get_int(gw, "listenerCount", &n) != 0 || n != 2) {
		return ("status.gateway is not {ready false, listenerCount "
		        "2}");
	}
	return (NULL);
}

static const char *
check_ready(json_object *o, const void *arg)
{
	const char *miss = check_phase(o, "Ready");
	json_object *want;
	bool same;

	(void)arg;
	if (miss != NULL || (miss = ready_cond(o, "True", "Ready"))) {
		return (miss);
	}
	want = json_tokener_parse("{\"ready\":true,\"address\":\"10.1.2.3\","
	                          "\"listenerCount\":2}");
	same = jx_equal(jx_get(o, "status.gateway"), want);
	json_object_put(want);
	return (same ? NULL : "status.gateway differs");
}

static const char *
check_disabled(json_object *o, const void *arg)
{
	const char *miss = check_phase(o, "Disabled");

	(void)arg;
	if (miss != NULL || (miss = ready_cond(o, "False", "Disabled"))) {
		return (miss);
	}
	return (jx_get(o, "status.gateway") == NULL ? NULL
	                                            : "status.gateway kept");
}

/* The GatewayClass upstream's reconcileGatewayClass creates. */
static void
check_class(void)
{
	json_object *gc = optest_get(&F, &R_GC, NULL, "sympozium");

	assert_non_null(gc);
	assert_string_equal(jx_get_str(gc, "spec.controllerName"),
	        "gateway.envoyproxy.io/gatewayclass-controller");
	assert_string_equal(
	        json_object_get_string(jx_getv(gc, "metadata", "labels",
	                "sympozium.ai/managed-by", NULL)),
	        "sympoziumconfig");
	assert_null(jx_get(gc, "metadata.ownerReferences"));
	json_object_put(gc);
}

/* The Gateway upstream's reconcileGateway creates for the test's spec. */
static void
check_gateway(const char *cfg_uid)
{
	json_object *gw = optest_get(&F, &R_GW, NS, "sympozium-gateway");
	struct optest_owner owner = { "SympoziumConfig", "platform", cfg_uid };
	json_object *want = json_tokener_parse(
	        "[{\"name\":\"http\",\"port\":80,\"protocol\":\"HTTP\","
	        "\"allowedRoutes\":{\"namespaces\":{\"from\":\"Same\"}}},"
	        "{\"name\":\"https\",\"hostname\":\"*.example.com\",\"port\":"
	        "443,\"protocol\":\"HTTPS\",\"tls\":{\"mode\":\"Terminate\","
	        "\"certificateRefs\":[{\"kind\":\"Secret\",\"name\":"
	        "\"wildcard\"}]},\"allowedRoutes\":{\"namespaces\":{\"from\":"
	        "\"Same\"}}}]");

	assert_non_null(gw);
	assert_null(optest_check_owner(gw, &owner));
	assert_string_equal(
	        jx_get_str(gw, "spec.gatewayClassName"), "sympozium");
	if (!jx_equal(jx_get(gw, "spec.listeners"), want)) {
		fail_msg("listeners: %s", json_object_to_json_string(gw));
	}
	assert_string_equal(
	        json_object_get_string(jx_getv(gw, "metadata", "labels",
	                "sympozium.ai/managed-by", NULL)),
	        "sympoziumconfig");
	assert_string_equal(
	        json_object_get_string(jx_getv(gw, "metadata", "annotations",
	                "cert-manager.io/cluster-issuer", NULL)),
	        "ca-issuer");
	json_object_put(want);
	json_object_put(gw);
}

static int
setup(void **state)
{
	*state = &F;
	if (optest_start_operator(&F, "test-config-e2e", WAIT_MS, NULL) != 0) {
		return (-1);
	}
	return (ksim_api_create(&F.a, &R_NS, NULL, NS, NULL) == KAPI_OK ? 0
	                                                                : -1);
}

/* The Gateway's status as its gateway controller would write it. */
static void
program_gateway(void)
{
	json_object *gw = optest_get(&F, &R_GW, NS, "sympozium-gateway");
	struct kapi_err e = KAPI_ERR_INIT;

	assert_non_null(gw);
	json_object_object_add(gw, "status",
	        json_tokener_parse(
	                "{\"addresses\":[{\"type\":\"IPAddress\","
	                "\"value\":\"10.1.2.3\"}],\"conditions\":["
	                "{\"type\":\"Accepted\",\"status\":\"True\"},"
	                "{\"type\":\"Programmed\",\"status\":"
	                "\"True\"}]}"));
	if (kapi_update_status(F.a.c, &R_GW, NS, gw, NULL, &e) != KAPI_OK) {
		fail_msg("gateway status: %s", e.message ?: "");
	}
	kapi_err_fini(&e);
	json_object_put(gw);
}

static void
test_gateway_lifecycle(void **state)
{
	json_object *cfg = NULL, *obj;
	struct kapi_err e = KAPI_ERR_INIT;
	char uid[64];

	(void)state;
	obj = testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                     "\"kind\":\"SympoziumConfig\",\"metadata\":{"
	                     "\"name\":\"platform\"},\"spec\":{\"gateway\":{"
	                     "\"enabled\":true,\"baseDomain\":\"example.com\","
	                     "\"tls\":{\"enabled\":true,\"secretName\":"
	                     "\"wildcard\",\"certManagerClusterIssuer\":"
	                     "\"ca-issuer\"}}}}");
	optest_create_or_fail(&F, &R_CFG, NS, obj, &cfg);
	json_object_put(obj);
	snprintf(
	        uid, sizeof(uid), "%s", jx_get_str(cfg, "metadata.uid") ?: "");
	json_object_put(cfg);
	/* no Gateway API yet: upstream's no-match error in the status */
	wait_config(check_not_served, NULL);
	assert_int_equal(ksim_apply_crds(F.a.c, GW_DIR), 3);
	touch(); /* sooner than the error's backoff */
	wait_config(check_pending, NULL);
	check_class();
	check_gateway(uid);
	program_gateway();
	touch(); /* sooner than the 30 s requeue */
	wait_config(check_ready, NULL);
	/* disabled: both removed */
	merge_patch(&R_CFG, "platform",
	        "{\"spec\":{\"gateway\":{\"enabled\":false}}}");
	wait_config(check_disabled, NULL);
	optest_wait_obj(
	        &F, &R_GW, NS, "sympozium-gateway", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_GC, NULL, "sympozium", optest_check_absent, NULL);
	/* enabled again, then deleted: removed, finalizer gone, config gone */
	merge_patch(&R_CFG, "platform",
	        "{\"spec\":{\"gateway\":{\"enabled\":true}}}");
	wait_config(check_pending, NULL);
	optest_wait_obj(
	        &F, &R_GC, NULL, "sympozium", optest_check_present, NULL);
	assert_int_equal(
	        kapi_delete(F.a.c, &R_CFG, NS, "platform", NULL, NULL, &e),
	        KAPI_OK);
	kapi_err_fini(&e);
	optest_wait_obj(&F, &R_CFG, NS, "platform", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_GW, NS, "sympozium-gateway", optest_check_absent, NULL);
	optest_wait_obj(
	        &F, &R_GC, NULL, "sympozium", optest_check_absent, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gateway_lifecycle),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
