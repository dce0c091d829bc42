/*
 * sympoziumconfig.c: the SympoziumConfig reconciler.  Upstream's
 * Reconcile: a config that is gone is done; one being deleted has its
 * Gateway API objects removed, then its finalizer; otherwise the
 * finalizer is added.  With spec.gateway absent or not enabled the
 * objects are removed and the phase is Disabled.  Enabled: the
 * GatewayClass (cluster-scoped, spec.gateway.gatewayClassName, default
 * "sympozium", labelled sympozium.ai/managed-by=sympoziumconfig) and the
 * Gateway (the config's namespace, spec.gateway.name, default
 * "sympozium-gateway", labelled so and controlled by the config) are
 * created or brought to the spec, the Gateway's Programmed condition,
 * first address and listener count go to status.gateway, the phase is
 * Ready or Pending, and the config is reconciled again after 30 s.  A
 * failure is phase Error with the Ready condition's message saying which
 * object, and an error (retried with backoff).
 *
 * No cache holds the Gateway API objects (the API may not be served:
 * a watch of it would never sync), so they are read live through views.
 * Deliberate differences (docs/compatibility.md): only the objects the
 * spec names are removed (upstream removes every labelled Gateway of the
 * namespace and every labelled GatewayClass of the cluster), a Gateway
 * only when the config controls it; an existing GatewayClass without
 * the label is used, not labelled (taken over); an existing Gateway the
 * config does not control is an error, not overwritten; the Gateway is
 * changed by a JSON patch the API server applies only while the config
 * controls it (contract.h CONTRACT_OWN_TESTED), and only when it
 * differs.  The Gateway API not being served (a list of the namespace's
 * Gateways answers not found) is upstream's error (the REST mapper's
 * no-match), in the status message and the log.
 */
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "workers/kobj.h"
#include "workers/sympoziumconfig.h"
#include "workers/view.h"
#include "workers/wtel.h"

#define GW_API      CONTRACT_GATEWAY_GROUP "/v1"
#define GW_MANAGED  CONTRACT_LABEL_MANAGED_BY "=" CONTRACT_MANAGED_BY_CONFIG
#define GW_CTRL     "gateway.envoyproxy.io/gatewayclass-controller"
#define GW_ISSUER   "cert-manager.io/cluster-issuer"
#define DEF_CLASS   "sympozium"
#define DEF_GATEWAY "sympozium-gateway"
#define DEF_SECRET  "sympozium-wildcard-cert"

/* One reconcile's state. */
struct symconf {
	const struct rec_in *in;
	struct rec_out *out;
	json_object *cfg; /* borrowed: in->object */
	const char *ns;
	char err[512];
};

/* ---- the spec ---- */

static const char *
spec_or(json_object *cfg, const char *path, const char *def)
{
	const char *s = jx_get_str(cfg, path);

	return (s != NULL && s[0] != '\0' ? s : def);
}

static const char *
class_name(json_object *cfg)
{
	return (spec_or(cfg, "spec.gateway.gatewayClassName", DEF_CLASS));
}

static const char *
gateway_name(json_object *cfg)
{
	return (spec_or(cfg, "spec.gateway.name", DEF_GATEWAY));
}

/* A DNS-1123 subdomain, as the API server (and the write policy) wants
 * an object name: the CRD does not validate the spec's names. */
static bool
name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		bool an = (s[i] >= 'a' && s[i] <= 'z')
		        || (s[i] >= '0' && s[i] <= '9');
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.'
		        || s[i + 1] == '.';
		if (!an && (edge || (s[i] != '-' && s[i] != '.'))) {
			return (false);
		}
	}
	return (true);
}

static bool
spec_bool(json_object *cfg, const char *path)
{
	bool b = false;

	return (jx_get_bool(cfg, path, &b) == 0 && b);
}

static bool
managed(json_object *o)
{
	const char *v = kobj_label(o, CONTRACT_LABEL_MANAGED_BY);

	return (v != NULL && strcmp(v, CONTRACT_MANAGED_BY_CONFIG) == 0);
}

/* allowedRoutes: routes of the Gateway's namespace only. */
static json_object *
same_ns_routes(void)
{
	json_object *r = json_object_new_object();

	jx_setv(r, json_object_new_string("Same"), "namespaces", "from", NULL);
	return (r);
}

static json_object *
https_listener(json_object *cfg, const char *domain)
{
	json_object *l = json_object_new_object(), *tls, *refs, *ref;
	char host[320];

	snprintf(host, sizeof(host), "*.%s", domain);
	json_object_object_add(l, "name", json_object_new_string("https"));
	json_object_object_add(l, "hostname", json_object_new_string(host));
	json_object_object_add(l, "port", json_object_new_int(443));
	json_object_object_add(l, "protocol", json_object_new_string("HTTPS"));
	tls = json_object_new_object();
	json_object_object_add(
	        tls, "mode", json_object_new_string("Terminate"));
	refs = json_object_new_array();
	ref = json_object_new_object();
	json_object_object_add(ref, "kind", json_object_new_string("Secret"));
	json_object_object_add(ref, "name",
	        json_object_new_string(spec_or(
	                cfg, "spec.gateway.tls.secretName", DEF_SECRET)));
	json_object_array_add(refs, ref);
	json_object_object_add(tls, "certificateRefs", refs);
	json_object_object_add(l, "tls", tls);
	json_object_object_add(l, "allowedRoutes", same_ns_routes());
	return (l);
}

/* Upstream's listeners: HTTP on 80; HTTPS on 443 for *.<baseDomain>
 * when TLS is enabled and a base domain is set. */
static json_object *
listeners(json_object *cfg)
{
	json_object *a = json_object_new_array(),
	            *l = json_object_new_object();
	const char *domain = jx_get_str(cfg, "spec.gateway.baseDomain");

	json_object_object_add(l, "name", json_object_new_string("http"));
	json_object_object_add(l, "port", json_object_new_int(80));
	json_object_object_add(l, "protocol", json_object_new_string("HTTP"));
	json_object_object_add(l, "allowedRoutes", same_ns_routes());
	json_object_array_add(a, l);
	if (spec_bool(cfg, "spec.gateway.tls.enabled") && domain != NULL
	        && domain[0] != '\0') {
		json_object_array_add(a, https_listener(cfg, domain));
	}
	return (a);
}

/* The cert-manager annotation when an issuer is set, else none (an
 * empty object). */
static json_object *
annotations(json_object *cfg)
{
	json_object *a = json_object_new_object();
	const char *issuer
	        = jx_get_str(cfg, "spec.gateway.tls.certManagerClusterIssuer");

	if (issuer != NULL && issuer[0] != '\0') {
		json_object_object_add(
		        a, GW_ISSUER, json_object_new_string(issuer));
	}
	return (a);
}

/* ---- the GatewayClass ---- */

static void
create_class(struct symconf *c, const char *name)
{
	json_object *gc = kobj_new(GW_API, "GatewayClass", NULL, name);

	kobj_set_label(
	        gc, CONTRACT_LABEL_MANAGED_BY, CONTRACT_MANAGED_BY_CONFIG);
	jx_setv(gc, json_object_new_string(GW_CTRL), "spec", "controllerName",
	        NULL);
	log_info("config %s: creating GatewayClass %s", c->in->key, name);
	kobj_create(c->out, &kobj_gatewayclasses, gc, true);
}

/* Whether the Gateway API is served: a list of a served resource never
 * answers not found.  -1 on error (c->err set). */
static int
served(struct symconf *c)
{
	json_object *items = NULL;
	char e[256];
	int rc = view_list(c->in->view, &kobj_gateways, c->ns, GW_MANAGED,
	        &items, e, sizeof(e));

	json_object_put(items);
	if (rc < 0) {
		snprintf(c->err, sizeof(c->err), "%s", e);
		return (-1);
	}
	return (rc == 0);
}

/* After a not-found get of kind: whether the Gateway API is not served
 * (or the probe failed), with upstream's error in c->err (the REST
 * mapper's no-match: meta.NoKindMatchError). */
static bool
not_served(struct symconf *c, const char *kind)
{
	int rc = served(c);

	if (rc == 0) {
		snprintf(c->err, sizeof(c->err),
		        "no matches for kind \"%s\" in version \"%s\"", kind,
		        GW_API);
		log_warnx("config %s: the Gateway API (%s) is not served: "
		          "install its CRDs to use spec.gateway",
		        c->in->key, GW_API);
	}
	return (rc <= 0);
}

/* upstream reconcileGatewayClass.  0, or -1 with c->err. */
static int
sync_class(struct symconf *c)
{
	const char *name = class_name(c->cfg);
	json_object *gc = NULL;
	char e[256];
	int rc;

	if (!name_valid(name)) {
		snprintf(c->err, sizeof(c->err), "invalid name \"%.253s\"",
		        name);
		return (-1);
	}
	rc = view_get(c->in->view, &kobj_gatewayclasses, NULL, name, &gc, e,
	        sizeof(e));
	if (rc == 0) {
		if (!managed(gc)) {
			log_info("config %s: GatewayClass %s exists without "
			         "%s: used, not taken over",
			        c->in->key, name, GW_MANAGED);
		}
		json_object_put(gc);
		return (0);
	}
	if (rc < 0) {
		snprintf(c->err, sizeof(c->err), "%s", e);
		return (-1);
	}
	if (not_served(c, "GatewayClass")) {
		return (-1);
	}
	create_class(c, name);
	return (0);
}

/* ---- the Gateway ---- */

static json_object *
new_gateway(struct symconf *c, json_object *ls, json_object *ann)
{
	json_object *gw
	        = kobj_new(GW_API, "Gateway", c->ns, gateway_name(c->cfg));

	kobj_set_label(
	        gw, CONTRACT_LABEL_MANAGED_BY, CONTRACT_MANAGED_BY_CONFIG);
	if (json_object_object_length(ann) > 0) {
		jx_setv(gw, json_object_get(ann), "metadata", "annotations",
		        NULL);
	}
	jx_setv(gw, json_object_new_string(class_name(c->cfg)), "spec",
	        "gatewayClassName", NULL);
	jx_setv(gw, json_object_get(ls), "spec", "listeners", NULL);
	kobj_set_owner(gw, c->cfg);
	return (gw);
}

/* An "add" of want at path unless have equals it. */
static void
change(json_object *ops, const char *path, json_object *have,
        json_object *want)
{
	if (!jx_equal(have, want)) {
		json_object_array_add(ops,
		        kobj_patch_op("add", path, json_object_get(want)));
	}
}

/* upstream reconcileGateway's update: class, listeners, annotations
 * (replaced: an empty set removes them).  0, or -1 with c->err. */
static int
update_gateway(
        struct symconf *c, json_object *gw, json_object *ls, json_object *ann)
{
	json_object *ops = json_object_new_array();
	json_object *cls = json_object_new_string(class_name(c->cfg));
	json_object *have = jx_getv(gw, "metadata", "annotations", NULL);

	if (!kobj_owned_by(gw, c->cfg)) {
		json_object_put(ops);
		json_object_put(cls);
		snprintf(c->err, sizeof(c->err),
		        "%s/%s exists and is not controlled by this "
		        "SympoziumConfig",
		        c->ns, kobj_name(gw));
		return (-1);
	}
	change(ops, "/spec/gatewayClassName",
	        jx_getv(gw, "spec", "gatewayClassName", NULL), cls);
	change(ops, "/spec/listeners", jx_getv(gw, "spec", "listeners", NULL),
	        ls);
	if (json_object_object_length(ann) > 0) {
		change(ops, "/metadata/annotations", have, ann);
	} else if (have != NULL) {
		json_object_array_add(ops,
		        kobj_patch_op(
		                "remove", "/metadata/annotations", NULL));
	}
	json_object_put(cls);
	if (json_object_array_length(ops) == 0) {
		json_object_put(ops);
		return (0);
	}
	return (kobj_tested_patch(c->out, &kobj_gateways, gw, c->cfg, ops) == 0
	                ? 0
	                : -1);
}

/* upstream readGatewayStatus: ready when Programmed is True, the first
 * address, the listener count (omitted when 0).  gw NULL: just created,
 * no status yet. */
static json_object *
gateway_info(json_object *gw, size_t nlisteners)
{
	json_object *info = json_object_new_object();
	json_object *conds = jx_getv(gw, "status", "conditions", NULL);
	json_object *addrs = jx_getv(gw, "status", "addresses", NULL);
	const char *addr = jx_array_len(addrs) > 0
	        ? jx_get_str(json_object_array_get_idx(addrs, 0), "value")
	        : NULL;
	bool ready = false;

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *e = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(e, "type"),
		           *s = jx_get_str(e, "status");
		ready |= t != NULL && s != NULL && strcmp(t, "Programmed") == 0
		        && strcmp(s, "True") == 0;
	}
	json_object_object_add(info, "ready", json_object_new_boolean(ready));
	if (addr != NULL && addr[0] != '\0') {
		json_object_object_add(
		        info, "address", json_object_new_string(addr));
	}
	if (nlisteners > 0) {
		json_object_object_add(info, "listenerCount",
		        json_object_new_int64((int64_t)nlisteners));
	}
	return (info);
}

/* Creates or updates the Gateway; *info its status info.  0, or -1 with
 * c->err. */
static int
sync_gateway(struct symconf *c, json_object **info)
{
	json_object *gw = NULL, *ls, *ann;
	int rc;

	if (!name_valid(gateway_name(c->cfg))) {
		snprintf(c->err, sizeof(c->err), "invalid name \"%.253s\"",
		        gateway_name(c->cfg));
		return (-1);
	}
	ls = listeners(c->cfg);
	ann = annotations(c->cfg);
	rc = view_get(c->in->view, &kobj_gateways, c->ns, gateway_name(c->cfg),
	        &gw, c->err, sizeof(c->err));

	if (rc == 1 && not_served(c, "Gateway")) {
		rc = -1;
	} else if (rc == 1) {
		log_info("config %s: creating Gateway %s", c->in->key,
		        gateway_name(c->cfg));
		kobj_create(
		        c->out, &kobj_gateways, new_gateway(c, ls, ann), true);
		rc = 0;
	} else if (rc == 0) {
		rc = update_gateway(c, gw, ls, ann);
	}
	if (rc == 0) {
		*info = gateway_info(gw, json_object_array_length(ls));
	}
	json_object_put(gw);
	json_object_put(ls);
	json_object_put(ann);
	return (rc);
}

/* ---- removal ---- */

/* upstream cleanupGatewayResources, for the objects the spec names: the
 * Gateway when labelled and controlled by the config, the GatewayClass
 * when labelled.  A read that fails is logged and skipped, as upstream
 * does with a failed list (the Gateway API not served among them). */
/* Reads res ns/name into *o (NULL: none) when the name is valid; a
 * failed read is logged and skipped. */
static void
cleanup_read(struct symconf *c, const struct ipc_res *res, const char *ns,
        const char *name, json_object **o)
{
	char e[256] = "";

	*o = NULL;
	if (name_valid(name)
	        && view_get(c->in->view, res, ns, name, o, e, sizeof(e)) < 0) {
		log_debug("config %s: %s %s: %s", c->in->key, res->plural,
		        name, e);
	}
}

static void
cleanup(struct symconf *c)
{
	const char *gw = gateway_name(c->cfg), *gc = class_name(c->cfg);
	json_object *o;

	cleanup_read(c, &kobj_gateways, c->ns, gw, &o);
	if (o != NULL && managed(o) && kobj_owned_by(o, c->cfg)) {
		kobj_delete(c->out, &kobj_gateways, c->ns, gw, true);
	}
	json_object_put(o);
	cleanup_read(c, &kobj_gatewayclasses, NULL, gc, &o);
	if (o != NULL && managed(o)) {
		kobj_delete(c->out, &kobj_gatewayclasses, NULL, gc, true);
	}
	json_object_put(o);
}

/* ---- status ---- */

/* upstream updateStatus: the phase, status.gateway (info taken, NULL:
 * removed) and the Ready condition; written only when it changes. */
static void
write_status(struct symconf *c, const char *phase, const char *msg,
        json_object *info)
{
	json_object *st = jx_copy_obj(jx_get(c->cfg, "status")), *obj;
	const char *cs = "False", *reason = phase;
	int64_t gen = 0;

	jx_get_int(c->cfg, "metadata.generation", &gen);
	json_object_object_add(st, "phase", json_object_new_string(phase));
	if (info != NULL) {
		json_object_object_add(st, "gateway", info);
	} else {
		json_object_object_del(st, "gateway");
	}
	if (strcmp(phase, "Ready") == 0) {
		cs = "True";
	} else if (strcmp(phase, "Error") == 0) {
		reason = "ReconcileError";
	} else if (strcmp(phase, "Disabled") == 0) {
		msg = "";
	}
	kobj_set_condition(st, "Ready", cs, reason, msg, gen, c->in->now_ms);
	if (jx_equal(st, jx_get(c->cfg, "status"))) {
		json_object_put(st);
		return;
	}
	obj = jx_copy(c->cfg);
	json_object_object_add(obj, "status", st);
	kobj_update_status(c->out, &kobj_configs, obj);
}

/* ---- reconcile ---- */

static void
finalize(struct symconf *c)
{
	if (kobj_has_finalizer(c->cfg, CONTRACT_FINALIZER_CONFIG)) {
		cleanup(c);
		kobj_merge_patch(c->out, &kobj_configs, c->ns,
		        kobj_name(c->cfg),
		        kobj_finalizer_patch(c->cfg, CONTRACT_FINALIZER_CONFIG,
		                KOBJ_FIN_RV));
	}
	rec_verdict(
	        c->out, IPC_V_DONE, 0, "gateway removed, finalizer removed");
}

/* upstream's "Error" status for a failure of what (c->err says why). */
static void
failed(struct symconf *c, const char *what)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "%s: %s", what, c->err);
	log_warnx("config %s: %s", c->in->key, msg);
	write_status(c, "Error", msg, NULL);
	rec_verdict(c->out, IPC_V_ERROR, 0, "%s", msg);
}

/* spec.gateway enabled: the GatewayClass, the Gateway, the status. */
static void
enabled(struct symconf *c)
{
	json_object *info = NULL;
	bool ready = false;

	if (sync_class(c) != 0) {
		failed(c, "GatewayClass");
		return;
	}
	if (sync_gateway(c, &info) != 0) {
		failed(c, "Gateway");
		return;
	}
	jx_get_bool(info, "ready", &ready);
	if (ready) { /* upstream readGatewayStatus: +1 per ready reading */
		wtel_count(c->out, "sympozium.gateway.ready", 1, NULL, NULL,
		        NULL, NULL);
	}
	write_status(c, ready ? "Ready" : "Pending", "", info);
	rec_verdict(c->out, IPC_V_REQUEUE_AFTER, SYMCONF_REQUEUE_MS, "%s",
	        ready ? "gateway ready" : "gateway pending");
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	struct symconf c = { .in = in, .out = out, .cfg = in->object };

	if (c.cfg == NULL || !json_object_is_type(c.cfg, json_type_object)
	        || in->view == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	c.ns = kobj_ns(c.cfg);
	if (jx_get(c.cfg, "metadata.deletionTimestamp") != NULL) {
		finalize(&c);
		return;
	}
	if (!kobj_has_finalizer(c.cfg, CONTRACT_FINALIZER_CONFIG)) {
		/* the patch's watch event brings the config back */
		kobj_merge_patch(out, &kobj_configs, c.ns, kobj_name(c.cfg),
		        kobj_finalizer_patch(c.cfg, CONTRACT_FINALIZER_CONFIG,
		                KOBJ_FIN_ADD | KOBJ_FIN_RV));
		rec_verdict(out, IPC_V_DONE, 0, "finalizer added");
		return;
	}
	if (!spec_bool(c.cfg, "spec.gateway.enabled")) {
		cleanup(&c);
		write_status(&c, "Disabled", "", NULL);
		rec_verdict(out, IPC_V_DONE, 0, "gateway disabled");
		return;
	}
	enabled(&c);
}

const struct reconciler symconf_reconciler = { "config", reconcile };
