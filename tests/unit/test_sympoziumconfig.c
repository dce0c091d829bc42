/*
 * test_sympoziumconfig.c: the SympoziumConfig reconciler, JSON in, writes
 * and verdict out, its Gateway API reads served by the fake supervisor.
 * The expected values come from upstream
 * internal/controller/sympoziumconfig_controller.go at 008266e:
 *   - Reconcile: a missing config is done; deletion runs
 *     cleanupGatewayResources then removes sympozium.ai/config-finalizer;
 *     a config without it gets it; spec.gateway nil or not enabled is a
 *     cleanup and phase Disabled; else GatewayClass, Gateway, phase Ready
 *     when the Gateway is programmed, else Pending, RequeueAfter 30 s; a
 *     failure is phase Error with "GatewayClass: <err>" or
 *     "Gateway: <err>" and the error returned;
 *   - reconcileGatewayClass: name gatewayClassName or "sympozium", label
 *     sympozium.ai/managed-by=sympoziumconfig, spec.controllerName
 *     gateway.envoyproxy.io/gatewayclass-controller;
 *   - reconcileGateway: name spec.gateway.name or "sympozium-gateway",
 *     the same label, a controller reference to the config, the class,
 *     listener "http" HTTP 80 with allowedRoutes.namespaces.from Same,
 *     and with tls.enabled and a baseDomain listener "https" HTTPS 443
 *     hostname "*.<baseDomain>", tls mode Terminate, certificateRefs
 *     [{kind Secret, name secretName or "sympozium-wildcard-cert"}];
 *     annotation cert-manager.io/cluster-issuer when set; an existing
 *     Gateway gets class, listeners and annotations replaced;
 *   - readGatewayStatus: ready when a Programmed condition is True, the
 *     first address's value, listenerCount len(spec.listeners)
 *     (api/v1alpha1 sympoziumconfig_types.go: address and listenerCount
 *     omitempty);
 *   - updateStatus: the Ready condition True/Ready for Ready,
 *     False/ReconcileError for Error, False/Pending, False/Disabled (message
 *     cleared), observedGeneration, meta.SetStatusCondition's
 *     lastTransitionTime.
 * The Gateway API not served: the REST mapper's no-match error text
 * (k8s.io/apimachinery meta.NoKindMatchError).  Our deliberate
 * differences (only what the spec names is removed, a Gateway the config
 * does not control is an error) are tested as such.
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
#include "tests/lib/fakesup.h"
#include "workers/kobj.h"
#include "workers/sympoziumconfig.h"

#define NOW_MS 1767225600000LL /* 2026-01-01T00:00:00Z */
#define NOW    "2026-01-01T00:00:00Z"

#define FIN   "\"finalizers\":[\"sympozium.ai/config-finalizer\"],"
#define CFG_M "\"name\":\"platform\",\"namespace\":\"ns\",\"uid\":\"c-1\","
#define CONFIG(meta, spec, status)                                            \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\","                          \
	"\"kind\":\"SympoziumConfig\",\"metadata\":{" CFG_M meta              \
	"\"generation\":3,\"resourceVersion\":\"7\"},"                        \
	"\"spec\":" spec status "}"
#define ENABLED "{\"gateway\":{\"enabled\":true}}"
#define OWNER                                                                 \
	"\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/v1alpha1\","     \
	"\"kind\":\"SympoziumConfig\",\"name\":\"platform\",\"uid\":\"c-1\"," \
	"\"controller\":true,\"blockOwnerDeletion\":true}]"
#define LABEL  "\"labels\":{\"sympozium.ai/managed-by\":\"sympoziumconfig\"}"
#define ROUTES "\"allowedRoutes\":{\"namespaces\":{\"from\":\"Same\"}}"
#define HTTP_L                                                                \
	"{\"name\":\"http\",\"port\":80,\"protocol\":\"HTTP\"," ROUTES "}"
#define GW_API "\"apiVersion\":\"gateway.networking.k8s.io/v1\","

static json_object *
J(const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return (o);
}

static void
run(struct fakesup *f, const char *obj, struct fakesup_run *g)
{
	json_object *o = obj != NULL ? J(obj) : NULL;
	json_object *k = J("[]");

	fakesup_run(&symconf_reconciler, f, "ns/platform", o, k, NOW_MS, g);
	json_object_put(o);
	json_object_put(k);
}

/* The Ready condition of phase (reason, status, message) as updateStatus
 * writes it. */
static void
assert_status(struct ipc_write *w, const char *want)
{
	assert_int_equal(w->op, IPC_OP_UPDATE_STATUS);
	assert_string_equal(w->res.plural, "sympoziumconfigs");
	assert_string_equal(w->name, "platform");
	fakesup_assert_json(jx_get(w->object, "status"), want);
}

static void
add_class(struct fakesup *f, const char *name, bool labelled)
{
	char text[512];

	snprintf(text, sizeof(text),
	        "{" GW_API "\"kind\":\"GatewayClass\",\"metadata\":{\"name\":"
	        "\"%s\",\"resourceVersion\":\"2\"%s},\"spec\":{"
	        "\"controllerName\":\"x\"}}",
	        name, labelled ? "," LABEL : "");
	fakesup_add(f, "gatewayclasses", NULL, name, J(text));
}

/* A Gateway in ns: owned by the config or not, its spec and status. */
static void
add_gateway(struct fakesup *f, const char *name, bool owned, const char *rest)
{
	char text[2048];

	snprintf(text, sizeof(text),
	        "{" GW_API "\"kind\":\"Gateway\",\"metadata\":{\"name\":"
	        "\"%s\",\"namespace\":\"ns\",\"resourceVersion\":\"11\","
	        "\"uid\":\"g-1\"," LABEL "%s},%s}",
	        name, owned ? "," OWNER : "", rest);
	fakesup_add(f, "gateways", "ns", name, J(text));
}

/* The config is gone: NotFound ends the reconcile, nothing read. */
static void
test_gone(void **state)
{
	struct fakesup_run g;

	run(*state, NULL, &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 0);
	assert_int_equal(fakesup_nreqs(*state), 0);
	fakesup_run_fini(&g);
}

/* AddFinalizer: the finalizer first (a patch that keeps the
 * resourceVersion, as Update would conflict); the patch's event brings
 * the rest. */
static void
test_finalizer_added(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	run(*state, CONFIG("", ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_PATCH);
	assert_string_equal(w.res.plural, "sympoziumconfigs");
	fakesup_assert_json(w.patch,
	        "{\"metadata\":{\"finalizers\":[\"sympozium.ai/config-"
	        "finalizer\"],\"resourceVersion\":\"7\"}}");
	fakesup_run_fini(&g);
}

/* No spec.gateway: nothing to remove, phase Disabled, Ready False. */
static void
test_disabled(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	run(*state, CONFIG(FIN, "{}", ""), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_status(&w,
	        "{\"phase\":\"Disabled\",\"conditions\":[{\"type\":\"Ready\","
	        "\"lastTransitionTime\":\"" NOW "\",\"status\":\"False\","
	        "\"observedGeneration\":3,\"reason\":\"Disabled\","
	        "\"message\":\"\"}]}");
	fakesup_run_fini(&g);
	/* written already: nothing changes, nothing is written */
	run(*state,
	        CONFIG(FIN, "{\"gateway\":{\"enabled\":false}}",
	                ",\"status\":{\"phase\":\"Disabled\",\"conditions\":[{"
	                "\"type\":\"Ready\",\"lastTransitionTime\":"
	                "\"2025-01-01T00:00:00Z\",\"status\":\"False\","
	                "\"observedGeneration\":3,\"reason\":\"Disabled\","
	                "\"message\":\"\"}]}"),
	        &g);
	assert_int_equal(g.nwrites, 0);
	fakesup_run_fini(&g);
}

/* Enabled, nothing there: GatewayClass and Gateway created with
 * upstream's defaults, phase Pending, requeue after 30 s. */
static void
test_enabled_creates(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(g.after_ms, 30000);
	assert_int_equal(g.nwrites, 3);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_CREATE);
	assert_string_equal(w.res.group, "gateway.networking.k8s.io");
	assert_string_equal(w.res.plural, "gatewayclasses");
	assert_false(w.res.namespaced);
	fakesup_assert_json(w.object,
	        "{" GW_API "\"kind\":\"GatewayClass\",\"metadata\":{\"name\":"
	        "\"sympozium\"," LABEL "},\"spec\":{\"controllerName\":"
	        "\"gateway.envoyproxy.io/gatewayclass-controller\"}}");
	w = fakesup_write(&g, 1);
	assert_int_equal(w.op, IPC_OP_CREATE);
	assert_string_equal(w.res.plural, "gateways");
	assert_string_equal(w.namespace, "ns");
	fakesup_assert_json(w.object,
	        "{" GW_API "\"kind\":\"Gateway\",\"metadata\":{\"name\":"
	        "\"sympozium-gateway\",\"namespace\":\"ns\"," LABEL "," OWNER
	        "},\"spec\":{\"gatewayClassName\":\"sympozium\","
	        "\"listeners\":[" HTTP_L "]}}");
	w = fakesup_write(&g, 2);
	assert_status(&w,
	        "{\"phase\":\"Pending\",\"gateway\":{\"ready\":false,"
	        "\"listenerCount\":1},\"conditions\":[{\"type\":\"Ready\","
	        "\"lastTransitionTime\":\"" NOW "\",\"status\":\"False\","
	        "\"observedGeneration\":3,\"reason\":\"Pending\","
	        "\"message\":\"\"}]}");
	fakesup_run_fini(&g);
}

/* Names from the spec, TLS with a base domain: the HTTPS listener and
 * the cert-manager annotation. */
static void
test_tls(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;
	int64_t n = 0;

	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"enabled\":true,\"gatewayClassName\":"
	                "\"envoy\",\"name\":\"edge\",\"baseDomain\":"
	                "\"example.com\",\"tls\":{\"enabled\":true,"
	                "\"certManagerClusterIssuer\":\"letsencrypt\"}}}",
	                ""),
	        &g);
	assert_int_equal(g.nwrites, 3);
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 0).object, "metadata.name"),
	        "envoy");
	w = fakesup_write(&g, 1);
	fakesup_assert_json(w.object,
	        "{" GW_API "\"kind\":\"Gateway\",\"metadata\":{\"name\":"
	        "\"edge\",\"namespace\":\"ns\"," LABEL ",\"annotations\":{"
	        "\"cert-manager.io/cluster-issuer\":\"letsencrypt\"}," OWNER
	        "},\"spec\":{\"gatewayClassName\":\"envoy\",\"listeners\":"
	        "[" HTTP_L
	        ",{\"name\":\"https\",\"hostname\":\"*.example.com\","
	        "\"port\":443,\"protocol\":\"HTTPS\",\"tls\":{\"mode\":"
	        "\"Terminate\",\"certificateRefs\":[{\"kind\":\"Secret\","
	        "\"name\":\"sympozium-wildcard-cert\"}]}," ROUTES "}]}}");
	assert_int_equal(jx_get_int(fakesup_write(&g, 2).object,
	                         "status.gateway.listenerCount", &n),
	        0);
	assert_int_equal(n, 2);
	fakesup_run_fini(&g);
	/* TLS without a base domain: HTTP only */
	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"enabled\":true,\"tls\":{\"enabled\":"
	                "true,\"secretName\":\"s\"}}}",
	                ""),
	        &g);
	fakesup_assert_json(
	        jx_get(fakesup_write(&g, 1).object, "spec.listeners"),
	        "[" HTTP_L "]");
	fakesup_run_fini(&g);
}

/* Both exist as wanted and the Gateway is programmed: no object write,
 * phase Ready with the first address; the transition time moves as the
 * status turns True. */
static void
test_ready(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	add_class(*state, "sympozium", true);
	add_gateway(*state, "sympozium-gateway", true,
	        "\"spec\":{\"gatewayClassName\":\"sympozium\",\"listeners\":"
	        "[" HTTP_L
	        "]},\"status\":{\"addresses\":[{\"type\":\"IPAddress\","
	        "\"value\":\"10.0.0.7\"},{\"value\":\"10.0.0.8\"}],"
	        "\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\"},"
	        "{\"type\":\"Programmed\",\"status\":\"True\"}]}");
	run(*state,
	        CONFIG(FIN, ENABLED,
	                ",\"status\":{\"phase\":\"Pending\",\"conditions\":[{"
	                "\"type\":\"Ready\",\"lastTransitionTime\":"
	                "\"2025-01-01T00:00:00Z\",\"status\":\"False\","
	                "\"observedGeneration\":3,\"reason\":\"Pending\","
	                "\"message\":\"\"}]}"),
	        &g);
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(g.after_ms, 30000);
	assert_int_equal(g.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_status(&w,
	        "{\"phase\":\"Ready\",\"gateway\":{\"ready\":true,\"address\":"
	        "\"10.0.0.7\",\"listenerCount\":1},\"conditions\":[{\"type\":"
	        "\"Ready\",\"lastTransitionTime\":\"" NOW "\",\"status\":"
	        "\"True\",\"observedGeneration\":3,\"reason\":\"Ready\","
	        "\"message\":\"\"}]}");
	fakesup_run_fini(&g);
}

/* An existing Gateway it controls with another class and annotations:
 * the class replaced and the annotations dropped (upstream assigns the
 * annotation map, empty here), by the tested JSON patch. */
static void
test_update(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	add_class(*state, "sympozium", true);
	add_gateway(*state, "sympozium-gateway", true,
	        "\"spec\":{\"gatewayClassName\":\"old\",\"listeners\":[" HTTP_L
	        "]}");
	fakesup_clear_log(*state);
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.nwrites, 2);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_PATCH);
	assert_int_equal(w.patch_type, IPC_PATCH_JSON);
	assert_string_equal(w.name, "sympozium-gateway");
	fakesup_assert_json(w.patch,
	        "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
	        "\"value\":\"11\"},{\"op\":\"test\",\"path\":"
	        "\"/metadata/ownerReferences/0/uid\",\"value\":\"c-1\"},"
	        "{\"op\":\"test\",\"path\":\"/metadata/ownerReferences/0/"
	        "controller\",\"value\":true},{\"op\":\"add\",\"path\":"
	        "\"/spec/gatewayClassName\",\"value\":\"sympozium\"}]");
	fakesup_run_fini(&g);
	/* with the cert-manager issuer: the annotations set */
	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"enabled\":true,\"tls\":{"
	                "\"certManagerClusterIssuer\":\"ca\"}}}",
	                ""),
	        &g);
	w = fakesup_write(&g, 0);
	fakesup_assert_json(json_object_array_get_idx(w.patch, 4),
	        "{\"op\":\"add\",\"path\":\"/metadata/annotations\","
	        "\"value\":{\"cert-manager.io/cluster-issuer\":\"ca\"}}");
	fakesup_run_fini(&g);
	/* the reads: the class, then the Gateway, both live */
	assert_non_null(strstr(fakesup_log(*state),
	        "get gatewayclasses /sympozium\nget gateways ns/"
	        "sympozium-gateway\n"));
}

/* An annotated Gateway whose config sets no issuer: remove them. */
static void
test_update_removes_annotations(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	add_class(*state, "sympozium", true);
	fakesup_add(*state, "gateways", "ns", "sympozium-gateway",
	        J("{" GW_API "\"kind\":\"Gateway\",\"metadata\":{\"name\":"
	          "\"sympozium-gateway\",\"namespace\":\"ns\","
	          "\"resourceVersion\":\"11\",\"annotations\":{\"a\":\"b\"},"
	          "\"ownerReferences\":[{\"uid\":\"other\"},{\"uid\":\"c-1\","
	          "\"controller\":true}]},\"spec\":{\"gatewayClassName\":"
	          "\"sympozium\",\"listeners\":[" HTTP_L "]}}"));
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	w = fakesup_write(&g, 0);
	fakesup_assert_json(w.patch,
	        "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
	        "\"value\":\"11\"},{\"op\":\"test\",\"path\":"
	        "\"/metadata/ownerReferences/1/uid\",\"value\":\"c-1\"},"
	        "{\"op\":\"test\",\"path\":\"/metadata/ownerReferences/1/"
	        "controller\",\"value\":true},{\"op\":\"remove\",\"path\":"
	        "\"/metadata/annotations\"}]");
	fakesup_run_fini(&g);
}

/* A Gateway of that name the config does not control: not overwritten
 * (deliberate), phase Error naming it, the error returned. */
static void
test_foreign_gateway(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	add_class(*state, "sympozium", false); /* used, not labelled */
	add_gateway(*state, "sympozium-gateway", false,
	        "\"spec\":{\"gatewayClassName\":\"x\"}");
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_status(&w,
	        "{\"phase\":\"Error\",\"conditions\":[{\"type\":\"Ready\","
	        "\"lastTransitionTime\":\"" NOW "\",\"status\":\"False\","
	        "\"observedGeneration\":3,\"reason\":\"ReconcileError\","
	        "\"message\":\"Gateway: ns/sympozium-gateway exists and is "
	        "not controlled by this SympoziumConfig\"}]}");
	fakesup_run_fini(&g);
}

/* The Gateway API is not served: upstream's Get fails with the REST
 * mapper's no-match error, which goes to the status; nothing created. */
static void
test_not_served(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	fakesup_unserved(*state, "gatewayclasses", true);
	fakesup_unserved(*state, "gateways", true);
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_status(&w,
	        "{\"phase\":\"Error\",\"conditions\":[{\"type\":\"Ready\","
	        "\"lastTransitionTime\":\"" NOW "\",\"status\":\"False\","
	        "\"observedGeneration\":3,\"reason\":\"ReconcileError\","
	        "\"message\":\"GatewayClass: no matches for kind "
	        "\\\"GatewayClass\\\" in version "
	        "\\\"gateway.networking.k8s.io/v1\\\"\"}]}");
	assert_non_null(strstr(g.message, "no matches for kind"));
	fakesup_run_fini(&g);
	/* disabled: the cleanup's reads fail quietly, phase Disabled */
	run(*state, CONFIG(FIN, "{\"gateway\":{\"enabled\":false}}", ""), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 1);
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 0).object, "status.phase"),
	        "Disabled");
	fakesup_run_fini(&g);
}

/* The GatewayClass there but the Gateway kind not served: upstream's
 * Get of the Gateway fails with the no-match error for "Gateway". */
static void
test_gateway_not_served(void **state)
{
	struct fakesup_run g;
	const char *msg;

	add_class(*state, "sympozium", true);
	fakesup_unserved(*state, "gateways", true);
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 1);
	msg = jx_get_str(
	        json_object_array_get_idx(jx_get(fakesup_write(&g, 0).object,
	                                          "status.conditions"),
	                0),
	        "message");
	assert_non_null(msg);
	assert_string_equal(msg,
	        "Gateway: no matches for kind \"Gateway\" in version "
	        "\"gateway.networking.k8s.io/v1\"");
	fakesup_run_fini(&g);
}

/* Names the API server would refuse (the CRD does not validate them):
 * phase Error saying so, nothing read or written but the status (the
 * write policy would refuse such a write); disabled, nothing to read. */
static void
test_invalid_names(void **state)
{
	struct fakesup_run g;
	const char *msg;

	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"enabled\":true,\"name\":\"Edge_1\"}}",
	                ""),
	        &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 2); /* the class, the status */
	assert_string_equal(fakesup_write(&g, 0).res.plural, "gatewayclasses");
	msg = jx_get_str(
	        json_object_array_get_idx(jx_get(fakesup_write(&g, 1).object,
	                                          "status.conditions"),
	                0),
	        "message");
	assert_string_equal(msg, "Gateway: invalid name \"Edge_1\"");
	fakesup_run_fini(&g);
	fakesup_clear_log(*state);
	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"enabled\":true,\"gatewayClassName\":"
	                "\"a..b\"}}",
	                ""),
	        &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 1);
	assert_int_equal(fakesup_nreqs(*state), 0);
	fakesup_run_fini(&g);
	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"name\":\"-x\",\"gatewayClassName\":"
	                "\"y.\"}}",
	                ""),
	        &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 1);
	assert_int_equal(fakesup_nreqs(*state), 0);
	fakesup_run_fini(&g);
}

/* A read error (not a not-found) is an error too. */
static void
test_read_error(void **state)
{
	struct fakesup_run g;
	const char *msg;

	fakesup_fail(*state, "gatewayclasses", NULL, "API down");
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_ERROR);
	assert_int_equal(g.nwrites, 1);
	msg = jx_get_str(
	        json_object_array_get_idx(jx_get(fakesup_write(&g, 0).object,
	                                          "status.conditions"),
	                0),
	        "message");
	assert_non_null(msg);
	assert_int_equal(strncmp(msg, "GatewayClass: ", 14), 0);
	assert_non_null(strstr(msg, "API down"));
	fakesup_run_fini(&g);
}

/* Disabled with both there: the Gateway it controls and the labelled
 * class are deleted (tolerating not found), then Disabled. */
static void
test_disable_cleans(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	add_class(*state, "sympozium", true);
	add_gateway(*state, "sympozium-gateway", true, "\"spec\":{}");
	run(*state, CONFIG(FIN, "{\"gateway\":{\"enabled\":false}}", ""), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 3);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_DELETE);
	assert_string_equal(w.res.plural, "gateways");
	assert_string_equal(w.namespace, "ns");
	assert_string_equal(w.name, "sympozium-gateway");
	assert_true((w.tolerate & IPC_TOL_NOT_FOUND) != 0);
	w = fakesup_write(&g, 1);
	assert_int_equal(w.op, IPC_OP_DELETE);
	assert_string_equal(w.res.plural, "gatewayclasses");
	assert_string_equal(w.name, "sympozium");
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 2).object, "status.phase"),
	        "Disabled");
	fakesup_run_fini(&g);
}

/* Objects it does not own are left alone (deliberate: upstream deletes
 * by label only). */
static void
test_disable_leaves_foreign(void **state)
{
	struct fakesup_run g;

	add_class(*state, "sympozium", false);
	add_gateway(*state, "sympozium-gateway", false, "\"spec\":{}");
	run(*state, CONFIG(FIN, "{}", ""), &g);
	assert_int_equal(g.nwrites, 1);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_UPDATE_STATUS);
	fakesup_run_fini(&g);
}

/* Deleted: the cleanup, then the finalizer removed (keeping the
 * resourceVersion), no status write. */
static void
test_delete(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	add_class(*state, "envoy", true);
	add_gateway(*state, "sympozium-gateway", true, "\"spec\":{}");
	run(*state,
	        CONFIG(FIN "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",",
	                "{\"gateway\":{\"enabled\":true,"
	                "\"gatewayClassName\":\"envoy\"}}",
	                ""),
	        &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 3);
	assert_string_equal(fakesup_write(&g, 0).res.plural, "gateways");
	assert_string_equal(fakesup_write(&g, 1).name, "envoy");
	w = fakesup_write(&g, 2);
	assert_int_equal(w.op, IPC_OP_PATCH);
	fakesup_assert_json(w.patch,
	        "{\"metadata\":{\"finalizers\":[],\"resourceVersion\":"
	        "\"7\"}}");
	fakesup_run_fini(&g);
	/* without the finalizer: nothing to do */
	run(*state,
	        CONFIG("\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",", "{}",
	                ""),
	        &g);
	assert_int_equal(g.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

/* Bad input never crashes: odd types read as absent. */
static void
test_bad_input(void **state)
{
	struct fakesup_run g;

	run(*state, CONFIG(FIN, "{\"gateway\":\"yes\"}", ",\"status\":7"), &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
	run(*state,
	        CONFIG(FIN,
	                "{\"gateway\":{\"enabled\":true,\"name\":5,"
	                "\"gatewayClassName\":[],\"tls\":3}}",
	                ",\"status\":{\"conditions\":\"x\"}"),
	        &g);
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 1).object, "metadata.name"),
	        "sympozium-gateway");
	fakesup_run_fini(&g);
	add_gateway(*state, "sympozium-gateway", true,
	        "\"spec\":7,\"status\":{\"conditions\":[3,{\"type\":5}],"
	        "\"addresses\":[{\"value\":1}]}");
	add_class(*state, "sympozium", true);
	run(*state, CONFIG(FIN, ENABLED, ""), &g);
	assert_int_equal(g.verdict, IPC_V_REQUEUE_AFTER);
	fakesup_run_fini(&g);
	run(*state, "[]", &g);
	assert_int_equal(g.verdict, IPC_V_DONE);
	assert_int_equal(g.nwrites, 0);
	fakesup_run_fini(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_gone, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_finalizer_added, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_disabled, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_enabled_creates, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_tls, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_ready, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_update, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_update_removes_annotations, fakesup_setup,
		        fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_foreign_gateway, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_not_served, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_gateway_not_served,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_invalid_names, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_read_error, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_disable_cleans, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(test_disable_leaves_foreign,
		        fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_delete, fakesup_setup, fakesup_teardown),
		cmocka_unit_test_setup_teardown(
		        test_bad_input, fakesup_setup, fakesup_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
