/*
 * instance.c: the SympoziumInstance reconciler (spec
 * sympozium-controllers.md 2.2).  Owns the finalizer and the clean-up on
 * delete, the channel Deployments (create-only, plus the WhatsApp PVC),
 * the legacy memory ConfigMap, the memory server (PVC, Deployment,
 * Service), the web-endpoint server AgentRun, and the status: phase,
 * channels[] and activeAgentPods counted from the AgentRuns read through
 * the view.  Every successful pass asks to run again in 60 s.
 *
 * Writes are ordered so that what upstream only logs on failure (memory
 * objects, the web-endpoint run) comes after the status write: a failure
 * there cannot hide the status.
 */
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "workers/instance.h"
#include "workers/kobj.h"
#include "workers/view.h"

#define MEMORY_MD "# Agent Memory\n\nNo memories recorded yet.\n"
#define TYPE_MAX  63
#define LABEL_MAX 63  /* a label value */
#define DNS_MAX   253 /* an object name */
#define NAME_LEN  320

struct ictx {
	const struct rec_in *in;
	struct rec_out *out;
	json_object *inst; /* borrowed: in->object */
	const char *ns;
	const char *name;
	json_object *created; /* names of Deployments created in this pass */
	char err[256];
};

/* ---- small builders ---- */

static json_object *
jstr(const char *s)
{
	return (json_object_new_string(s != NULL ? s : ""));
}

static json_object *
labels(const char *component, const char *channel, const char *instance)
{
	json_object *l = json_object_new_object();

	json_object_object_add(l, CONTRACT_LABEL_COMPONENT, jstr(component));
	if (channel != NULL) {
		json_object_object_add(
		        l, CONTRACT_LABEL_CHANNEL, jstr(channel));
	}
	json_object_object_add(l, CONTRACT_LABEL_INSTANCE, jstr(instance));
	return (l);
}

/* A new namespaced child of the instance with those labels. */
static json_object *
child_new(struct ictx *c, const char *api, const char *kind, const char *name,
        json_object *lab)
{
	json_object *o = kobj_new(api, kind, c->ns, name);

	jx_setv(o, lab, "metadata", "labels", NULL);
	kobj_set_owner(o, c->inst);
	return (o);
}

/* ---- view wrappers (a NULL view is an error, not a crash) ---- */

static int
vget(struct ictx *c, const struct ipc_res *res, const char *name,
        json_object **out)
{
	*out = NULL;
	if (c->in->view == NULL) {
		snprintf(c->err, sizeof(c->err), "no view");
		return (-1);
	}
	return (view_get(
	        c->in->view, res, c->ns, name, out, c->err, sizeof(c->err)));
}

static int
vsecret(struct ictx *c, const char *name)
{
	json_object *o = NULL;
	int rc;

	if (c->in->view == NULL) {
		snprintf(c->err, sizeof(c->err), "no view");
		return (-1);
	}
	rc = view_secret_meta(
	        c->in->view, c->ns, name, &o, c->err, sizeof(c->err));
	json_object_put(o);
	return (rc);
}

/* ---- spec helpers ---- */

static bool
has_finalizer(json_object *o)
{
	return (kobj_has_finalizer(o, CONTRACT_FINALIZER_INSTANCE));
}

/* {"metadata":{"finalizers":[...],"resourceVersion":rv}}: with or without
 * ours; null when the list ends up empty. */
static json_object *
finalizer_patch(json_object *o, bool add)
{
	return (kobj_finalizer_patch(o, CONTRACT_FINALIZER_INSTANCE,
	        (add ? KOBJ_FIN_ADD : 0) | KOBJ_FIN_RV | KOBJ_FIN_NULL_EMPTY));
}

/* spec.memory.enabled (default true when memory is given). */
static bool
memory_enabled(json_object *inst)
{
	json_object *m = jx_get(inst, "spec.memory");
	bool on = true;

	if (m == NULL || !json_object_is_type(m, json_type_object)) {
		return (false);
	}
	jx_get_bool(m, "enabled", &on);
	return (on);
}

/* The first spec.skills[] entry whose skillPackRef is one of names. */
static json_object *
skill_ref(json_object *inst, const char *a, const char *b)
{
	json_object *skills = jx_get(inst, "spec.skills");

	for (size_t i = 0; i < jx_array_len(skills); i++) {
		json_object *s = json_object_array_get_idx(skills, i);
		const char *ref = jx_get_str(s, "skillPackRef");
		if (ref != NULL
		        && (strcmp(ref, a) == 0
		                || (b != NULL && strcmp(ref, b) == 0))) {
			return (s);
		}
	}
	return (NULL);
}

static const char *
registry(void)
{
	return (getenv("SYMPOZIUM_IMAGE_REGISTRY"));
}

/* ---- channel Deployments ---- */

/* A channel type gives a Deployment name, a label value and an image
 * name: a DNS label. */
static bool
valid_type(const char *t)
{
	size_t n = t != NULL ? strlen(t) : 0;

	if (n == 0 || n > TYPE_MAX || t[0] == '-' || t[n - 1] == '-') {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		if (!((t[i] >= 'a' && t[i] <= 'z')
		            || (t[i] >= '0' && t[i] <= '9') || t[i] == '-')) {
			return (false);
		}
	}
	return (true);
}

/* OTEL_EXPORTER_OTLP_ENDPOINT: the instance's endpoint when observability
 * is enabled, "" when it is given but disabled, else our own env var. */
static const char *
otel_endpoint(json_object *inst)
{
	json_object *obs = jx_get(inst, "spec.observability");
	bool on = false;
	const char *v;

	if (obs != NULL && json_object_is_type(obs, json_type_object)) {
		jx_get_bool(obs, "enabled", &on);
		v = on ? jx_get_str(obs, "otlpEndpoint") : NULL;
		return (v != NULL ? v : "");
	}
	v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	return (v != NULL ? v : "");
}

static json_object *
channel_container(struct ictx *c, const char *type, const char *secret)
{
	json_object *ctr = json_object_new_object();
	json_object *env = json_object_new_array();
	char image[512], name[NAME_LEN];

	snprintf(name, sizeof(name), "channel-%s", type);
	kobj_image(image, sizeof(image), registry(), name, NULL);
	json_object_object_add(ctr, "name", jstr("channel"));
	json_object_object_add(ctr, "image", jstr(image));
	json_object_object_add(ctr, "imagePullPolicy", jstr("IfNotPresent"));
	snprintf(name, sizeof(name), "sympozium-channel-%s", type);
	kobj_env_add(env, "INSTANCE_NAME", c->name);
	kobj_env_add(env, "EVENT_BUS_URL", INST_EVENT_BUS);
	kobj_env_add(
	        env, "OTEL_EXPORTER_OTLP_ENDPOINT", otel_endpoint(c->inst));
	kobj_env_add(env, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
	kobj_env_add(env, "OTEL_SERVICE_NAME", name);
	json_object_object_add(ctr, "env", env);
	if (secret != NULL && secret[0] != '\0') {
		json_object *from = json_object_new_array();
		json_object *ref = json_object_new_object();
		jx_setv(ref, jstr(secret), "secretRef", "name", NULL);
		json_object_array_add(from, ref);
		json_object_object_add(ctr, "envFrom", from);
	}
	return (ctr);
}

/* WhatsApp: Recreate, and its session store on PVC <deploy>-data. */
static void
add_whatsapp(json_object *d, json_object *ctr, const char *dname)
{
	json_object *vols = json_object_new_array();
	json_object *mounts = json_object_new_array();
	json_object *v = json_object_new_object();
	json_object *m = json_object_new_object();
	char claim[NAME_LEN + 8];

	snprintf(claim, sizeof(claim), "%s-data", dname);
	jx_setv(d, jstr("Recreate"), "spec", "strategy", "type", NULL);
	json_object_object_add(v, "name", jstr("whatsapp-data"));
	jx_setv(v, jstr(claim), "persistentVolumeClaim", "claimName", NULL);
	json_object_array_add(vols, v);
	jx_setv(d, vols, "spec", "template", "spec", "volumes", NULL);
	json_object_object_add(m, "name", jstr("whatsapp-data"));
	json_object_object_add(m, "mountPath", jstr("/data"));
	json_object_array_add(mounts, m);
	json_object_object_add(ctr, "volumeMounts", mounts);
}

static json_object *
channel_deployment(struct ictx *c, const char *dname, const char *type,
        const char *secret)
{
	json_object *d = child_new(c, "apps/v1", "Deployment", dname,
	        labels("channel", type, c->name));
	json_object *ctr = channel_container(c, type, secret);
	json_object *ctrs = json_object_new_array();

	jx_setv(d, json_object_new_int(1), "spec", "replicas", NULL);
	jx_setv(d, labels("channel", type, c->name), "spec", "selector",
	        "matchLabels", NULL);
	jx_setv(d, labels("channel", type, c->name), "spec", "template",
	        "metadata", "labels", NULL);
	if (strcmp(type, "whatsapp") == 0) {
		add_whatsapp(d, ctr, dname);
	}
	json_object_array_add(ctrs, ctr);
	jx_setv(d, ctrs, "spec", "template", "spec", "containers", NULL);
	return (d);
}

static json_object *
pvc_new(struct ictx *c, const char *name, const char *size, json_object *lab)
{
	json_object *p
	        = child_new(c, "v1", "PersistentVolumeClaim", name, lab);
	json_object *modes = json_object_new_array();

	json_object_array_add(modes, jstr("ReadWriteOnce"));
	jx_setv(p, modes, "spec", "accessModes", NULL);
	jx_setv(p, jstr(size), "spec", "resources", "requests", "storage",
	        NULL);
	return (p);
}

/* Creates the PVC when the view says it is absent.  -1: view error. */
static int
ensure_pvc(
        struct ictx *c, const char *name, const char *size, json_object *lab)
{
	json_object *got = NULL;
	int rc = vget(c, &kobj_pvcs, name, &got);

	json_object_put(got);
	if (rc == 1) {
		kobj_create(
		        c->out, &kobj_pvcs, pvc_new(c, name, size, lab), true);
		return (0);
	}
	json_object_put(lab);
	return (rc < 0 ? -1 : 0);
}

static void
push_status(json_object *list, const char *type, const char *status,
        const char *message)
{
	json_object *s = json_object_new_object();

	json_object_object_add(s, "type", jstr(type));
	json_object_object_add(s, "status", jstr(status));
	if (message != NULL) {
		json_object_object_add(s, "message", jstr(message));
	}
	json_object_array_add(list, s);
}

/* The channel's Deployment: created when absent (Pending), else
 * Connected or Disconnected by its readyReplicas.  -1: view error. */
static int
channel_deploy(struct ictx *c, const char *dname, const char *type,
        const char *secret, json_object *list)
{
	json_object *dep = kobj_child(c->in->children, "Deployment", dname);
	json_object *got = NULL;
	int64_t ready = 0;

	if (dep == NULL && json_object_object_get(c->created, dname) != NULL) {
		push_status(list, type, "Pending", NULL);
		return (0);
	}
	if (dep == NULL) {
		int rc = vget(c, &kobj_deployments, dname, &got);
		if (rc < 0) {
			return (-1);
		}
		dep = got;
	}
	if (dep == NULL) {
		kobj_create(c->out, &kobj_deployments,
		        channel_deployment(c, dname, type, secret), true);
		json_object_object_add(
		        c->created, dname, json_object_new_boolean(1));
		push_status(list, type, "Pending", NULL);
		return (0);
	}
	jx_get_int(dep, "status.readyReplicas", &ready);
	push_status(
	        list, type, ready > 0 ? "Connected" : "Disconnected", NULL);
	json_object_put(got);
	return (0);
}

static int
one_channel(struct ictx *c, json_object *ch, json_object *list)
{
	const char *type = jx_get_str(ch, "type");
	const char *secret = jx_get_str(ch, "configRef.secret");
	char dname[NAME_LEN], msg[NAME_LEN + 32];
	int rc;

	if (!valid_type(type)) {
		snprintf(msg, sizeof(msg), "invalid channel type \"%.*s\"",
		        TYPE_MAX, type != NULL ? type : "");
		push_status(list, type, "Error", msg);
		return (0);
	}
	snprintf(dname, sizeof(dname), "%s-channel-%s", c->name, type);
	if (strlen(c->name) > LABEL_MAX || strlen(dname) > DNS_MAX) {
		push_status(list, type, "Error",
		        "instance name too long for a channel Deployment");
		return (0);
	}
	if (secret != NULL && secret[0] != '\0') {
		rc = vsecret(c, secret);
		if (rc < 0) {
			return (-1);
		}
		if (rc == 1) {
			snprintf(msg, sizeof(msg), "secret \"%.*s\" not found",
			        NAME_LEN - 1, secret);
			push_status(list, type, "Error", msg);
			return (0);
		}
	}
	if (strcmp(type, "whatsapp") == 0) {
		char pvc[NAME_LEN + 8];
		snprintf(pvc, sizeof(pvc), "%s-data", dname);
		if (ensure_pvc(c, pvc, "256Mi",
		            labels("channel", "whatsapp", c->name))
		        < 0) {
			return (-1);
		}
	}
	return (channel_deploy(c, dname, type, secret, list));
}

/* The new status.channels, or NULL on a view error (c->err). */
static json_object *
reconcile_channels(struct ictx *c)
{
	json_object *chans = jx_get(c->inst, "spec.channels");
	json_object *list = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(chans); i++) {
		if (one_channel(c, json_object_array_get_idx(chans, i), list)
		        < 0) {
			json_object_put(list);
			return (NULL);
		}
	}
	return (list);
}

/* ---- memory ---- */

static void
memory_configmap(struct ictx *c)
{
	char name[NAME_LEN];
	json_object *got = NULL, *cm;
	int rc;

	snprintf(name, sizeof(name), "%s-memory", c->name);
	rc = vget(c, &kobj_configmaps, name, &got);
	json_object_put(got);
	if (rc < 0) {
		log_warnx("instance %s/%s: memory ConfigMap: %s", c->ns,
		        c->name, c->err);
	}
	if (rc != 1) {
		return;
	}
	cm = child_new(
	        c, "v1", "ConfigMap", name, labels("memory", NULL, c->name));
	jx_setv(cm, jstr(MEMORY_MD), "data", "MEMORY.md", NULL);
	kobj_create(c->out, &kobj_configmaps, cm, true);
}

static json_object *
memory_container(void)
{
	json_object *port = json_object_new_object();
	json_object *ports = json_object_new_array();
	char image[512];

	kobj_image(image, sizeof(image), registry(), "skill-memory", NULL);
	json_object_object_add(port, "name", jstr("http"));
	json_object_object_add(
	        port, "containerPort", json_object_new_int(8080));
	json_object_array_add(ports, port);
	return (kobj_memory_server(image, ports));
}

static json_object *
memory_deployment(struct ictx *c, const char *name)
{
	json_object *d = child_new(c, "apps/v1", "Deployment", name,
	        labels("memory", NULL, c->name));
	json_object *ctrs = json_object_new_array();
	json_object *vols = json_object_new_array();
	json_object *v = json_object_new_object();
	char claim[NAME_LEN + 8];

	snprintf(claim, sizeof(claim), "%s-db", name);
	jx_setv(d, json_object_new_int(1), "spec", "replicas", NULL);
	jx_setv(d, jstr("Recreate"), "spec", "strategy", "type", NULL);
	jx_setv(d, labels("memory", NULL, c->name), "spec", "selector",
	        "matchLabels", NULL);
	jx_setv(d, labels("memory", NULL, c->name), "spec", "template",
	        "metadata", "labels", NULL);
	jx_setv(d, json_object_new_int(1000), "spec", "template", "spec",
	        "securityContext", "fsGroup", NULL);
	json_object_array_add(ctrs, memory_container());
	jx_setv(d, ctrs, "spec", "template", "spec", "containers", NULL);
	json_object_object_add(v, "name", jstr("memory-db"));
	jx_setv(v, jstr(claim), "persistentVolumeClaim", "claimName", NULL);
	json_object_array_add(vols, v);
	jx_setv(d, vols, "spec", "template", "spec", "volumes", NULL);
	return (d);
}

static json_object *
memory_service(struct ictx *c, const char *name)
{
	json_object *s = child_new(
	        c, "v1", "Service", name, labels("memory", NULL, c->name));
	json_object *ports = json_object_new_array();
	json_object *p = json_object_new_object();

	json_object_object_add(p, "name", jstr("http"));
	json_object_object_add(p, "port", json_object_new_int(8080));
	json_object_object_add(p, "targetPort", json_object_new_int(8080));
	json_object_array_add(ports, p);
	jx_setv(s, ports, "spec", "ports", NULL);
	jx_setv(s, labels("memory", NULL, c->name), "spec", "selector", NULL);
	return (s);
}

/* [PERIPH, later] the memory server of the "memory" SkillPack. */
static void
memory_server(struct ictx *c)
{
	char name[NAME_LEN], pvc[NAME_LEN + 8];
	json_object *got = NULL;
	int rc = 0;

	snprintf(name, sizeof(name), "%s-memory", c->name);
	snprintf(pvc, sizeof(pvc), "%s-db", name);
	if (ensure_pvc(c, pvc, "1Gi", labels("memory-db", NULL, c->name))
	        < 0) {
		log_warnx("instance %s/%s: memory PVC: %s", c->ns, c->name,
		        c->err);
	}
	if (kobj_child(c->in->children, "Deployment", name) != NULL) {
		/* Not upstream (it returns here): a Service whose create
		 * failed after the Deployment's would never be made (seen by
		 * test_chaos with injected 503s). */
		if (kobj_child(c->in->children, "Service", name) == NULL) {
			kobj_create(c->out, &kobj_services,
			        memory_service(c, name), true);
		}
		return;
	}
	rc = vget(c, &kobj_deployments, name, &got);
	json_object_put(got);
	if (rc < 0) {
		log_warnx("instance %s/%s: memory server: %s", c->ns, c->name,
		        c->err);
	}
	if (rc != 1) {
		return;
	}
	kobj_create(
	        c->out, &kobj_deployments, memory_deployment(c, name), true);
	kobj_create(c->out, &kobj_services, memory_service(c, name), true);
}

/* ---- AgentRuns: the active count and the web-endpoint run ---- */

struct runs {
	int64_t active;
	bool serving;
	bool web_alive; /* a web-endpoint run not being deleted (or unknown) */
};

/* What count_runs() reads of each run: a row of a projected list. */
enum { R_COMPONENT, R_DELETING, R_PHASE, R_N };
static const char *const run_fields[R_N]
        = { "metadata.labels." CONTRACT_LABEL_COMPONENT,
	          "metadata.deletionTimestamp", "status.phase" };

static void
count_runs(struct ictx *c, struct runs *r)
{
	char sel[NAME_LEN + 32];
	json_object *items = NULL;
	int rc = -1;

	*r = (struct runs) { 0, false, false };
	snprintf(sel, sizeof(sel), CONTRACT_LABEL_INSTANCE "=%s", c->name);
	if (c->in->view == NULL) {
		snprintf(c->err, sizeof(c->err), "no view");
	} else {
		rc = view_list_fields(c->in->view, &kobj_agentruns, c->ns, sel,
		        run_fields, R_N, &items, c->err, sizeof(c->err));
	}
	if (rc != 0) {
		log_warnx("instance %s/%s: listing AgentRuns: %s", c->ns,
		        c->name, c->err);
		r->web_alive = true;
		json_object_put(items);
		return;
	}
	for (size_t i = 0; i < jx_array_len(items); i++) {
		json_object *run = json_object_array_get_idx(items, i);
		const char *phase = view_row_str(run, R_PHASE);
		const char *comp = view_row_str(run, R_COMPONENT);
		if (phase != NULL
		        && (strcmp(phase, "Running") == 0
		                || strcmp(phase, "Serving") == 0)) {
			r->active++;
			r->serving |= strcmp(phase, "Serving") == 0;
		}
		if (comp != NULL && strcmp(comp, "web-endpoint") == 0
		        && json_object_array_get_idx(run, R_DELETING)
		                == NULL) {
			r->web_alive = true;
		}
	}
	json_object_put(items);
}

static json_object *
web_model(json_object *inst)
{
	json_object *m = json_object_new_object();
	const char *model = jx_get_str(inst, "spec.agents.default.model");
	const char *url = jx_get_str(inst, "spec.agents.default.baseURL");
	json_object *sel = jx_get(inst, "spec.agents.default.nodeSelector");

	json_object_object_add(
	        m, "provider", jstr(kobj_resolve_provider(inst)));
	json_object_object_add(m, "model", jstr(model));
	json_object_object_add(
	        m, "authSecretRef", jstr(kobj_resolve_auth_secret(inst)));
	if (url != NULL && url[0] != '\0') {
		json_object_object_add(m, "baseURL", jstr(url));
	}
	if (sel != NULL && json_object_is_type(sel, json_type_object)
	        && json_object_object_length(sel) > 0) {
		json_object_object_add(m, "nodeSelector", jx_copy(sel));
	}
	return (m);
}

/* [PERIPH] the server-mode run behind a web-endpoint skill. */
static void
web_endpoint(struct ictx *c, const struct runs *r)
{
	json_object *ref
	        = skill_ref(c->inst, "web-endpoint", "skillpack-web-endpoint");
	json_object *run, *spec, *skills, *pull;
	char name[NAME_LEN];

	if (ref == NULL || r->web_alive) {
		return;
	}
	snprintf(name, sizeof(name), "%s-web-endpoint", c->name);
	run = child_new(c, "sympozium.ai/v1alpha1", "AgentRun", name,
	        labels("web-endpoint", NULL, c->name));
	spec = json_object_new_object();
	json_object_object_add(spec, "instanceRef", jstr(c->name));
	json_object_object_add(spec, "agentId", jstr("web-endpoint"));
	json_object_object_add(spec, "sessionKey", jstr("web-endpoint"));
	json_object_object_add(
	        spec, "task", jstr("Serve HTTP requests for this instance"));
	json_object_object_add(spec, "mode", jstr("server"));
	json_object_object_add(spec, "model", web_model(c->inst));
	skills = json_object_new_array();
	json_object_array_add(skills, jx_copy(ref));
	json_object_object_add(spec, "skills", skills);
	pull = jx_get(c->inst, "spec.imagePullSecrets");
	if (jx_array_len(pull) > 0) {
		json_object_object_add(
		        spec, "imagePullSecrets", jx_copy(pull));
	}
	json_object_object_add(run, "spec", spec);
	kobj_create(c->out, &kobj_agentruns, run, true);
}

/* ---- status ---- */

/* Writes the status when it differs from the cached one.  channels and
 * active are taken; channels NULL or active < 0 keep the cached values. */
static void
write_status(struct ictx *c, const char *phase, json_object *channels,
        int64_t active)
{
	json_object *obj = jx_copy(c->inst);
	json_object *st = json_object_object_get(obj, "status");

	if (st == NULL || !json_object_is_type(st, json_type_object)) {
		st = json_object_new_object();
		json_object_object_add(obj, "status", st);
	}
	json_object_object_add(st, "phase", jstr(phase));
	if (channels != NULL && json_object_array_length(channels) > 0) {
		json_object_object_add(st, "channels", channels);
	} else if (channels != NULL) {
		/* an empty list is omitted, as Go's omitempty does */
		json_object_object_del(st, "channels");
		json_object_put(channels);
	}
	if (active > 0) {
		json_object_object_add(
		        st, "activeAgentPods", json_object_new_int64(active));
	} else if (active == 0) {
		/* zero is omitted, as upstream's omitempty does
		 * (api/v1alpha1 SympoziumInstanceStatus.ActiveAgentPods) */
		json_object_object_del(st, "activeAgentPods");
	}
	if (jx_equal(st, jx_get(c->inst, "status"))) {
		json_object_put(obj);
		return;
	}
	kobj_update_status(c->out, &kobj_instances, obj);
	kobj_status_event(c->out, c->inst, st);
}

/* ---- the phases ---- */

/* Deletes the legacy memory ConfigMap name when the instance controls
 * it.  Not upstream, which deletes whatever has that name: a PersonaPack's
 * seed memory <pack>-<persona>-memory is named the same as its stamped
 * instance's, and the write policy lets a controller delete only its
 * own. */
static void
delete_memory_cm(struct ictx *c, const char *name)
{
	json_object *cm = NULL;

	if (vget(c, &kobj_configmaps, name, &cm) < 0) {
		log_warnx("instance %s/%s: memory ConfigMap: %s", c->ns,
		        c->name, c->err);
	} else if (cm != NULL && kobj_owned_by(cm, c->inst)) {
		kobj_delete(c->out, &kobj_configmaps, c->ns, name, true);
	}
	json_object_put(cm);
}

static void
reconcile_delete(struct ictx *c)
{
	json_object *kids = c->in->children;
	char mem[NAME_LEN];

	snprintf(mem, sizeof(mem), "%s-memory", c->name);
	for (size_t i = 0; i < jx_array_len(kids); i++) {
		json_object *k = json_object_array_get_idx(kids, i);
		const char *kind = jx_get_str(k, "kind");
		const char *comp = kobj_label(k, CONTRACT_LABEL_COMPONENT);
		const char *inst = kobj_label(k, CONTRACT_LABEL_INSTANCE);
		if (kind != NULL && strcmp(kind, "Deployment") == 0
		        && comp != NULL && strcmp(comp, "channel") == 0
		        && inst != NULL && strcmp(inst, c->name) == 0) {
			kobj_delete(c->out, &kobj_deployments, c->ns,
			        kobj_name(k), true);
		}
	}
	kobj_merge_patch(c->out, &kobj_instances, c->ns, c->name,
	        finalizer_patch(c->inst, false));
	/* upstream only logs these failures: after the finalizer */
	delete_memory_cm(c, mem);
	if (kobj_child(kids, "Deployment", mem) != NULL) {
		kobj_delete(c->out, &kobj_deployments, c->ns, mem, true);
	}
	if (kobj_child(kids, "Service", mem) != NULL) {
		kobj_delete(c->out, &kobj_services, c->ns, mem, true);
	}
	rec_verdict(c->out, IPC_V_DONE, 0, "finalized");
}

static void
reconcile_live(struct ictx *c)
{
	json_object *channels = reconcile_channels(c);
	struct runs r;

	if (channels == NULL) {
		write_status(c, "Error", NULL, -1);
		rec_verdict(c->out, IPC_V_ERROR, 0, "channels: %s", c->err);
		return;
	}
	count_runs(c, &r);
	write_status(c, r.serving ? "Serving" : "Running", channels, r.active);
	if (strlen(c->name) > LABEL_MAX) {
		/* no child can carry sympozium.ai/instance=<name> */
		log_warnx("instance %s/%s: name too long for child labels",
		        c->ns, c->name);
	} else {
		if (memory_enabled(c->inst)) {
			memory_configmap(c);
		}
		if (skill_ref(c->inst, "memory", NULL) != NULL) {
			memory_server(c);
		}
		web_endpoint(c, &r);
	}
	rec_verdict(c->out, IPC_V_REQUEUE_AFTER, INST_REQUEUE_MS, NULL);
}

void
inst_reconcile(const struct rec_in *in, struct rec_out *out)
{
	struct ictx c = { .in = in, .out = out, .inst = in->object };

	if (in->object == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, "gone");
		return;
	}
	c.ns = kobj_ns(in->object);
	c.name = kobj_name(in->object);
	if (jx_get(in->object, "metadata.deletionTimestamp") != NULL) {
		if (has_finalizer(in->object)) {
			reconcile_delete(&c);
		} else {
			rec_verdict(out, IPC_V_DONE, 0, "being deleted");
		}
		return;
	}
	if (!has_finalizer(in->object)) {
		/* the patched object comes back through the watch */
		kobj_merge_patch(out, &kobj_instances, c.ns, c.name,
		        finalizer_patch(in->object, true));
		rec_verdict(out, IPC_V_DONE, 0, "finalizer added");
		return;
	}
	c.created = json_object_new_object();
	reconcile_live(&c);
	json_object_put(c.created);
}

const struct reconciler instance_reconciler = { "instance", inst_reconcile };
