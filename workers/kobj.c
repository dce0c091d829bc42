/*
 * kobj.c: object building, ownership, writes and the shared helpers of
 * spec 0.3 for the reconcilers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/kobj.h"

const struct ipc_res kobj_configmaps = CONTRACT_RES_CONFIGMAPS;
const struct ipc_res kobj_secrets = { "", "v1", "secrets", true };
const struct ipc_res kobj_services = CONTRACT_RES_SERVICES;
const struct ipc_res kobj_serviceaccounts
        = { "", "v1", "serviceaccounts", true };
const struct ipc_res kobj_pods = CONTRACT_RES_PODS;
const struct ipc_res kobj_pvcs = { "", "v1", "persistentvolumeclaims", true };
const struct ipc_res kobj_deployments = CONTRACT_RES_DEPLOYMENTS;
const struct ipc_res kobj_jobs = CONTRACT_RES_JOBS;
const struct ipc_res kobj_roles
        = { "rbac.authorization.k8s.io", "v1", "roles", true };
const struct ipc_res kobj_rolebindings
        = { "rbac.authorization.k8s.io", "v1", "rolebindings", true };
const struct ipc_res kobj_clusterroles
        = { "rbac.authorization.k8s.io", "v1", "clusterroles", false };
const struct ipc_res kobj_clusterrolebindings
        = { "rbac.authorization.k8s.io", "v1", "clusterrolebindings", false };
const struct ipc_res kobj_networkpolicies
        = { "networking.k8s.io", "v1", "networkpolicies", true };
const struct ipc_res kobj_agentruns = CONTRACT_RES_AGENTRUNS;
const struct ipc_res kobj_instances = CONTRACT_RES_INSTANCES;
const struct ipc_res kobj_personapacks = CONTRACT_RES_PERSONAPACKS;
const struct ipc_res kobj_skillpacks = CONTRACT_RES_SKILLPACKS;
const struct ipc_res kobj_schedules = CONTRACT_RES_SCHEDULES;
const struct ipc_res kobj_mcpservers = CONTRACT_RES_MCPSERVERS;
const struct ipc_res kobj_policies = CONTRACT_RES_POLICIES;
const struct ipc_res kobj_configs = CONTRACT_RES_CONFIGS;
const struct ipc_res kobj_events = { "", "v1", "events", true };
const struct ipc_res kobj_gateways = CONTRACT_RES_GATEWAYS;
const struct ipc_res kobj_gatewayclasses = CONTRACT_RES_GATEWAYCLASSES;
const struct ipc_res kobj_httproutes = CONTRACT_RES_HTTPROUTES;
const struct ipc_res kobj_sandboxes = CONTRACT_RES_SANDBOXES;
const struct ipc_res kobj_sandboxclaims = CONTRACT_RES_SANDBOXCLAIMS;

json_object *
kobj_new(const char *api_version, const char *kind, const char *ns,
        const char *name)
{
	json_object *o = json_object_new_object();
	json_object *md = json_object_new_object();

	json_object_object_add(
	        o, "apiVersion", json_object_new_string(api_version));
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(md, "name", json_object_new_string(name));
	if (ns != NULL) {
		json_object_object_add(
		        md, "namespace", json_object_new_string(ns));
	}
	json_object_object_add(o, "metadata", md);
	return (o);
}

static const char *
meta_str(json_object *o, const char *key)
{
	const char *s = jx_get_str(json_object_object_get(o, "metadata"), key);

	return (s != NULL ? s : "");
}

const char *
kobj_name(json_object *o)
{
	return (meta_str(o, "name"));
}

const char *
kobj_ns(json_object *o)
{
	return (meta_str(o, "namespace"));
}

const char *
kobj_uid(json_object *o)
{
	return (meta_str(o, "uid"));
}

static const char *
map_get(json_object *o, const char *map, const char *key)
{
	json_object *v = jx_getv(o, "metadata", map, key, NULL);

	return (v != NULL && json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : NULL);
}

const char *
kobj_label(json_object *o, const char *key)
{
	return (map_get(o, "labels", key));
}

const char *
kobj_annotation(json_object *o, const char *key)
{
	return (map_get(o, "annotations", key));
}

void
kobj_set_label(json_object *o, const char *key, const char *value)
{
	jx_setv(o, json_object_new_string(value), "metadata", "labels", key,
	        NULL);
}

void
kobj_set_annotation(json_object *o, const char *key, const char *value)
{
	jx_setv(o, json_object_new_string(value), "metadata", "annotations",
	        key, NULL);
}

bool
kobj_has_finalizer(json_object *o, const char *name)
{
	json_object *f = jx_getv(o, "metadata", "finalizers", NULL);

	for (size_t i = 0; json_object_is_type(f, json_type_array)
	        && i < json_object_array_length(f);
	        i++) {
		json_object *e = json_object_array_get_idx(f, i);
		if (json_object_is_type(e, json_type_string)
		        && strcmp(json_object_get_string(e), name) == 0) {
			return (true);
		}
	}
	return (false);
}

json_object *
kobj_finalizers(json_object *o, const char *name, bool add)
{
	json_object *f = jx_getv(o, "metadata", "finalizers", NULL);
	json_object *list = json_object_new_array();

	for (size_t i = 0; json_object_is_type(f, json_type_array)
	        && i < json_object_array_length(f);
	        i++) {
		json_object *e = json_object_array_get_idx(f, i);
		if (!json_object_is_type(e, json_type_string)
		        || strcmp(json_object_get_string(e), name) != 0) {
			json_object_array_add(list, json_object_get(e));
		}
	}
	if (add) {
		json_object_array_add(list, json_object_new_string(name));
	}
	return (list);
}

json_object *
kobj_finalizer_patch(json_object *o, const char *name, unsigned flags)
{
	json_object *list = kobj_finalizers(o, name, flags & KOBJ_FIN_ADD);
	json_object *patch = json_object_new_object();
	const char *rv = jx_get_str(o, "metadata.resourceVersion");

	if ((flags & KOBJ_FIN_NULL_EMPTY) != 0
	        && json_object_array_length(list) == 0) {
		json_object_put(list);
		list = NULL; /* JSON null: the key removed */
	}
	jx_setv(patch, list, "metadata", "finalizers", NULL);
	if ((flags & KOBJ_FIN_RV) != 0 && rv != NULL) {
		jx_setv(patch, json_object_new_string(rv), "metadata",
		        "resourceVersion", NULL);
	}
	return (patch);
}

void
kobj_set_owner(json_object *child, json_object *owner)
{
	json_object *refs
	        = jx_getv(child, "metadata", "ownerReferences", NULL);
	json_object *out = json_object_new_array();
	json_object *r = json_object_new_object();

	for (size_t i = 0; i < jx_array_len(refs); i++) {
		json_object *e = json_object_array_get_idx(refs, i);
		bool ctl = false;
		jx_get_bool(e, "controller", &ctl);
		if (!ctl) {
			json_object_array_add(out, json_object_get(e));
		}
	}
	json_object_object_add(r, "apiVersion",
	        json_object_new_string(jx_get_str(owner, "apiVersion") ?: ""));
	json_object_object_add(r, "kind",
	        json_object_new_string(jx_get_str(owner, "kind") ?: ""));
	json_object_object_add(
	        r, "name", json_object_new_string(kobj_name(owner)));
	json_object_object_add(
	        r, "uid", json_object_new_string(kobj_uid(owner)));
	json_object_object_add(r, "controller", json_object_new_boolean(1));
	json_object_object_add(
	        r, "blockOwnerDeletion", json_object_new_boolean(1));
	json_object_array_add(out, r);
	jx_setv(child, out, "metadata", "ownerReferences", NULL);
}

/* The index of child's controller reference to owner, or -1. */
static int
owner_index(json_object *child, json_object *owner)
{
	json_object *refs
	        = jx_getv(child, "metadata", "ownerReferences", NULL);

	for (size_t i = 0; i < jx_array_len(refs); i++) {
		json_object *e = json_object_array_get_idx(refs, i);
		bool ctl = false;
		const char *uid = jx_get_str(e, "uid");
		if (jx_get_bool(e, "controller", &ctl) == 0 && ctl
		        && uid != NULL && strcmp(uid, kobj_uid(owner)) == 0) {
			return ((int)i);
		}
	}
	return (-1);
}

bool
kobj_owned_by(json_object *child, json_object *owner)
{
	return (owner_index(child, owner) >= 0);
}

static json_object *
patch_op(const char *op, const char *path, json_object *value)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "op", json_object_new_string(op));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "value", value);
	return (o);
}

/* key as a JSON Pointer token (RFC 6901: ~ as ~0, / as ~1). */
static char *
pointer_token(const char *key)
{
	char *t = xmalloc(strlen(key) * 2 + 1), *p = t;

	for (; *key != '\0'; key++) {
		if (*key == '~' || *key == '/') {
			*p++ = '~';
			*p++ = *key == '~' ? '0' : '1';
		} else {
			*p++ = *key;
		}
	}
	*p = '\0';
	return (t);
}

/* The three tests of contract.h's CONTRACT_OWN_ADOPT and _TESTED: live's
 * resourceVersion, its controller reference at index i naming owner. */
static json_object *
owner_tests(json_object *owner, int i, const char *rv)
{
	json_object *ops = json_object_new_array();
	char path[64];

	json_object_array_add(ops,
	        patch_op("test", "/metadata/resourceVersion",
	                json_object_new_string(rv)));
	snprintf(path, sizeof(path), "/metadata/ownerReferences/%d/uid", i);
	json_object_array_add(ops,
	        patch_op("test", path,
	                json_object_new_string(kobj_uid(owner))));
	snprintf(path, sizeof(path), "/metadata/ownerReferences/%d/controller",
	        i);
	json_object_array_add(
	        ops, patch_op("test", path, json_object_new_boolean(1)));
	return (ops);
}

/* The add of label key=value to live's labels (the whole map when it has
 * none). */
static json_object *
label_op(json_object *live, const char *key, const char *value)
{
	json_object *labels = jx_getv(live, "metadata", "labels", NULL);
	json_object *op, *l;
	char *tok, *lp;

	if (!json_object_is_type(labels, json_type_object)) {
		l = json_object_new_object();
		json_object_object_add(l, key, json_object_new_string(value));
		return (patch_op("add", "/metadata/labels", l));
	}
	tok = pointer_token(key);
	lp = xasprintf("/metadata/labels/%s", tok);
	op = patch_op("add", lp, json_object_new_string(value));
	free(lp);
	free(tok);
	return (op);
}

int
kobj_adopt_orphan(struct rec_out *out, const struct ipc_res *res,
        json_object *live, json_object *owner, const char *key,
        const char *value)
{
	const char *rv = jx_get_str(live, "metadata.resourceVersion");
	json_object *ops, *ref;

	if (jx_getv(live, "metadata", "ownerReferences", NULL) != NULL
	        || rv == NULL) {
		return (-1);
	}
	ref = json_object_new_object();
	kobj_set_owner(ref, owner);
	ops = json_object_new_array();
	json_object_array_add(ops,
	        patch_op("test", "/metadata/resourceVersion",
	                json_object_new_string(rv)));
	json_object_array_add(
	        ops, patch_op("test", "/metadata/ownerReferences", NULL));
	json_object_array_add(ops,
	        patch_op("add", "/metadata/ownerReferences",
	                json_object_get(jx_getv(
	                        ref, "metadata", "ownerReferences", NULL))));
	json_object_array_add(ops, label_op(live, key, value));
	json_object_put(ref);
	rec_write(out,
	        ipc_write_patch_new(res, kobj_ns(live), kobj_name(live), ops,
	                IPC_PATCH_JSON));
	return (0);
}

int
kobj_adopt(struct rec_out *out, const struct ipc_res *res, json_object *live,
        json_object *owner, const char *key, const char *value)
{
	int i = owner_index(live, owner);
	const char *rv = jx_get_str(live, "metadata.resourceVersion");
	json_object *ops;

	if (i < 0 || rv == NULL) {
		return (-1);
	}
	ops = owner_tests(owner, i, rv);
	json_object_array_add(ops, label_op(live, key, value));
	rec_write(out,
	        ipc_write_patch_new(res, kobj_ns(live), kobj_name(live), ops,
	                IPC_PATCH_JSON));
	return (0);
}

int
kobj_tested_patch(struct rec_out *out, const struct ipc_res *res,
        json_object *live, json_object *owner, json_object *changes)
{
	int i = owner_index(live, owner);
	const char *rv = jx_get_str(live, "metadata.resourceVersion");
	json_object *ops;

	if (i < 0 || rv == NULL || jx_array_len(changes) == 0) {
		json_object_put(changes);
		return (-1);
	}
	ops = owner_tests(owner, i, rv);
	for (size_t k = 0; k < jx_array_len(changes); k++) {
		json_object_array_add(ops,
		        json_object_get(
		                json_object_array_get_idx(changes, k)));
	}
	json_object_put(changes);
	rec_write(out,
	        ipc_write_patch_new(res, kobj_ns(live), kobj_name(live), ops,
	                IPC_PATCH_JSON));
	return (0);
}

json_object *
kobj_patch_op(const char *op, const char *path, json_object *value)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "op", json_object_new_string(op));
	json_object_object_add(o, "path", json_object_new_string(path));
	if (value != NULL) {
		json_object_object_add(o, "value", value);
	}
	return (o);
}

json_object *
kobj_child(json_object *children, const char *kind, const char *name)
{
	for (size_t i = 0; i < jx_array_len(children); i++) {
		json_object *c = json_object_array_get_idx(children, i);
		const char *k = jx_get_str(c, "kind");
		if (k != NULL && strcmp(k, kind) == 0
		        && strcmp(kobj_name(c), name) == 0) {
			return (c);
		}
	}
	return (NULL);
}

static void
add(struct rec_out *out, enum ipc_op op, const struct ipc_res *res,
        json_object *obj, unsigned tolerate)
{
	json_object *w
	        = ipc_write_new(op, res, kobj_ns(obj)[0] ? kobj_ns(obj) : NULL,
	                op == IPC_OP_CREATE ? NULL : kobj_name(obj), obj);

	if (tolerate != 0) {
		ipc_write_set_tolerate(w, tolerate);
	}
	rec_write(out, w);
}

void
kobj_create(struct rec_out *out, const struct ipc_res *res, json_object *obj,
        bool tolerate_exists)
{
	add(out, IPC_OP_CREATE, res, obj,
	        tolerate_exists ? IPC_TOL_ALREADY_EXISTS : 0);
}

void
kobj_update(struct rec_out *out, const struct ipc_res *res, json_object *obj)
{
	add(out, IPC_OP_UPDATE, res, obj, 0);
}

void
kobj_update_status(
        struct rec_out *out, const struct ipc_res *res, json_object *obj)
{
	add(out, IPC_OP_UPDATE_STATUS, res, obj, 0);
}

void
kobj_merge_patch(struct rec_out *out, const struct ipc_res *res,
        const char *ns, const char *name, json_object *patch)
{
	rec_write(out,
	        ipc_write_patch_new(res, ns, name, patch, IPC_PATCH_MERGE));
}

void
kobj_delete(struct rec_out *out, const struct ipc_res *res, const char *ns,
        const char *name, bool tolerate_missing)
{
	json_object *w = ipc_write_new(IPC_OP_DELETE, res, ns, name, NULL);

	ipc_write_set_propagation(w, "Background");
	if (tolerate_missing) {
		ipc_write_set_tolerate(w, IPC_TOL_NOT_FOUND);
	}
	rec_write(out, w);
}

static void
copy_str(json_object *to, const char *key, json_object *from, const char *path)
{
	const char *v = jx_get_str(from, path);

	if (v != NULL && v[0] != '\0') {
		json_object_object_add(to, key, json_object_new_string(v));
	}
}

void
kobj_event(struct rec_out *out, json_object *involved, const char *type,
        const char *reason, const char *message)
{
	json_object *ev, *ref;
	const char *ns;

	if (involved == NULL) {
		return;
	}
	ns = kobj_ns(involved);
	ref = json_object_new_object();
	copy_str(ref, "kind", involved, "kind");
	copy_str(ref, "namespace", involved, "metadata.namespace");
	copy_str(ref, "name", involved, "metadata.name");
	copy_str(ref, "uid", involved, "metadata.uid");
	copy_str(ref, "apiVersion", involved, "apiVersion");
	copy_str(ref, "resourceVersion", involved, "metadata.resourceVersion");
	ev = json_object_new_object();
	json_object_object_add(ev, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(ev, "kind", json_object_new_string("Event"));
	json_object_object_add(ev, "metadata", json_object_new_object());
	if (ns[0] != '\0') {
		jx_set_path(
		        ev, "metadata.namespace", json_object_new_string(ns));
	}
	json_object_object_add(ev, "involvedObject", ref);
	json_object_object_add(ev, "type", json_object_new_string(type));
	json_object_object_add(ev, "reason", json_object_new_string(reason));
	json_object_object_add(ev, "message",
	        json_object_new_string(message != NULL ? message : ""));
	rec_write(out,
	        ipc_write_new(IPC_OP_EVENT, &kobj_events,
	                ns[0] != '\0' ? ns : NULL, NULL, ev));
}

void
kobj_eventf(struct rec_out *out, json_object *involved, const char *type,
        const char *reason, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = NULL;
	}
	va_end(ap);
	kobj_event(out, involved, type, reason, msg != NULL ? msg : fmt);
	free(msg);
}

/* The condition of that type in status (borrowed), or NULL. */
static json_object *
condition(json_object *status, const char *type)
{
	json_object *conds = jx_get(status, "conditions");

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *c = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(c, "type");
		if (t != NULL && strcmp(t, type) == 0) {
			return (c);
		}
	}
	return (NULL);
}

static bool
same_str(json_object *a, json_object *b, const char *path)
{
	const char *x = jx_get_str(a, path), *y = jx_get_str(b, path);

	return (strcmp(x != NULL ? x : "", y != NULL ? y : "") == 0);
}

/* Ready=False reasons that say "in progress", not "wrong". */
static const char *const progress[]
        = { "NotReady", "Progressing", "Pending", "Reconciling", NULL };

/* A Ready=False condition that is new or changed, and not progress. */
static bool
ready_turned_false(json_object *was, json_object *now)
{
	const char *st = jx_get_str(now, "status");
	const char *reason = jx_get_str(now, "reason");

	if (now == NULL || st == NULL || strcmp(st, "False") != 0) {
		return (false);
	}
	for (size_t i = 0; reason != NULL && progress[i] != NULL; i++) {
		if (strcmp(reason, progress[i]) == 0) {
			return (false);
		}
	}
	return (was == NULL || !same_str(was, now, "status")
	        || !same_str(was, now, "reason")
	        || !same_str(was, now, "message"));
}

static bool
bad_phase(const char *p)
{
	return (p != NULL
	        && (strcmp(p, "Error") == 0 || strcmp(p, "Failed") == 0));
}

void
kobj_status_event(
        struct rec_out *out, json_object *obj, json_object *new_status)
{
	json_object *old = jx_get(obj, "status");
	json_object *ready = condition(new_status, "Ready");
	const char *phase = jx_get_str(new_status, "phase");
	const char *msg;

	if (ready_turned_false(condition(old, "Ready"), ready)) {
		const char *r = jx_get_str(ready, "reason");
		kobj_event(out, obj, KOBJ_WARNING,
		        r != NULL && r[0] != '\0' ? r : "NotReady",
		        jx_get_str(ready, "message"));
		return;
	}
	if (ready != NULL || !bad_phase(phase)
	        || same_str(old, new_status, "phase")) {
		return;
	}
	msg = jx_get_str(new_status, "message");
	if (msg == NULL) {
		msg = jx_get_str(new_status, "error");
	}
	if (msg != NULL) {
		kobj_event(out, obj, KOBJ_WARNING, "Failed", msg);
	} else {
		kobj_eventf(
		        out, obj, KOBJ_WARNING, "Failed", "phase %s", phase);
	}
}

void
kobj_env_add(json_object *env, const char *name, const char *value)
{
	json_object *e = json_object_new_object();

	json_object_object_add(
	        e, "name", json_object_new_string(name != NULL ? name : ""));
	if (value != NULL && value[0] != '\0') {
		json_object_object_add(
		        e, "value", json_object_new_string(value));
	}
	json_object_array_add(env, e);
}

static const char *const providers[] = { "anthropic", "azure-openai",
	"bedrock", "lm-studio", "ollama", "openai", NULL };

const char *
kobj_resolve_provider(json_object *inst)
{
	json_object *refs = jx_get(inst, "spec.authRefs");
	size_t n = jx_array_len(refs);
	const char *url = jx_get_str(inst, "spec.agents.default.baseURL");

	for (size_t i = 0; i < n; i++) {
		const char *p = jx_get_str(
		        json_object_array_get_idx(refs, i), "provider");
		if (p != NULL && p[0] != '\0') {
			return (p);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = jx_get_str(
		        json_object_array_get_idx(refs, i), "secret");
		for (size_t j = 0; s != NULL && providers[j] != NULL; j++) {
			if (strstr(s, providers[j]) != NULL) {
				return (providers[j]);
			}
		}
	}
	if (url != NULL && url[0] != '\0') {
		if (strstr(url, "ollama") || strstr(url, ":11434")) {
			return ("ollama");
		}
		if (strstr(url, "lm-studio") || strstr(url, ":1234")) {
			return ("lm-studio");
		}
		return ("custom");
	}
	return ("openai");
}

const char *
kobj_resolve_auth_secret(json_object *inst)
{
	json_object *refs = jx_get(inst, "spec.authRefs");
	size_t n = jx_array_len(refs);

	for (size_t i = 0; i < n; i++) {
		const char *s = jx_get_str(
		        json_object_array_get_idx(refs, i), "secret");
		while (s != NULL && (*s == ' ' || *s == '\t')) {
			s++;
		}
		if (s != NULL && s[0] != '\0') {
			return (s);
		}
	}
	return ("");
}

const char *
kobj_image_tag(void)
{
	return (KOBJ_IMAGE_TAG[0] != '\0' ? KOBJ_IMAGE_TAG : "latest");
}

/* s when set and not empty, else the environment variable env when set
 * and not empty, else dflt. */
static const char *
first_set(const char *s, const char *env, const char *dflt)
{
	const char *e = getenv(env);

	if (s != NULL && s[0] != '\0') {
		return (s);
	}
	return (e != NULL && e[0] != '\0' ? e : dflt);
}

void
kobj_image(char *out, size_t len, const char *registry, const char *name,
        const char *tag)
{
	snprintf(out, len, "%s/%s:%s",
	        first_set(registry, "SYMPOZIUM_IMAGE_REGISTRY", KOBJ_REGISTRY),
	        name, first_set(tag, "SYMPOZIUM_IMAGE_TAG", kobj_image_tag()));
}

const char *
kobj_pull_policy(const char *p)
{
	static const char *const ok[] = { "Always", "IfNotPresent", "Never" };

	for (size_t i = 0; p != NULL && i < 3; i++) {
		if (strcmp(p, ok[i]) == 0) {
			return (ok[i]);
		}
	}
	return (NULL);
}

/* ---- status conditions ---- */

void
kobj_set_condition(json_object *status, const char *type, const char *st,
        const char *reason, const char *msg, int64_t gen, int64_t now_ms)
{
	json_object *conds = jx_get(status, "conditions"), *c = NULL;
	char ts[TIMEFMT_RFC3339_LEN];
	const char *old;

	if (conds == NULL || !json_object_is_type(conds, json_type_array)) {
		conds = json_object_new_array();
		json_object_object_add(status, "conditions", conds);
	}
	for (size_t i = 0; i < jx_array_len(conds) && c == NULL; i++) {
		json_object *e = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(e, "type");
		c = t != NULL && strcmp(t, type) == 0 ? e : NULL;
	}
	if (c == NULL) {
		c = json_object_new_object();
		json_object_object_add(
		        c, "type", json_object_new_string(type));
		json_object_array_add(conds, c);
	}
	old = jx_get_str(c, "status");
	if (old == NULL || strcmp(old, st) != 0
	        || jx_get(c, "lastTransitionTime") == NULL) {
		timefmt_rfc3339(now_ms / 1000, ts);
		json_object_object_add(
		        c, "lastTransitionTime", json_object_new_string(ts));
	}
	json_object_object_add(c, "status", json_object_new_string(st));
	json_object_object_add(
	        c, "observedGeneration", json_object_new_int64(gen));
	json_object_object_add(c, "reason", json_object_new_string(reason));
	json_object_object_add(c, "message", json_object_new_string(msg));
}

/* ---- the memory server ---- */

static json_object *
health_probe(int initial, int period, int failures)
{
	json_object *p = json_object_new_object();

	jx_setv(p, json_object_new_string("/health"), "httpGet", "path", NULL);
	jx_setv(p, json_object_new_int(8080), "httpGet", "port", NULL);
	if (initial > 0) {
		json_object_object_add(p, "initialDelaySeconds",
		        json_object_new_int(initial));
	}
	json_object_object_add(
	        p, "periodSeconds", json_object_new_int(period));
	if (failures > 0) {
		json_object_object_add(
		        p, "failureThreshold", json_object_new_int(failures));
	}
	return (p);
}

static void
set_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

json_object *
kobj_memory_server(const char *image, json_object *ports)
{
	json_object *c = json_object_new_object();
	json_object *env = json_object_new_array();
	json_object *mounts = json_object_new_array();
	json_object *m = json_object_new_object();

	set_str(c, "name", "memory-server");
	set_str(c, "image", image);
	set_str(c, "imagePullPolicy", "IfNotPresent");
	json_object_object_add(c, "ports", ports);
	kobj_env_add(env, "MEMORY_DB_PATH", "/data/memory.db");
	kobj_env_add(env, "MEMORY_PORT", "8080");
	json_object_object_add(c, "env", env);
	set_str(m, "name", "memory-db");
	set_str(m, "mountPath", "/data");
	json_object_array_add(mounts, m);
	json_object_object_add(c, "volumeMounts", mounts);
	json_object_object_add(c, "startupProbe", health_probe(0, 2, 30));
	json_object_object_add(c, "readinessProbe", health_probe(0, 10, 0));
	json_object_object_add(c, "livenessProbe", health_probe(5, 30, 0));
	jx_setv(c, json_object_new_string("50m"), "resources", "requests",
	        "cpu", NULL);
	jx_setv(c, json_object_new_string("64Mi"), "resources", "requests",
	        "memory", NULL);
	jx_setv(c, json_object_new_string("200m"), "resources", "limits",
	        "cpu", NULL);
	jx_setv(c, json_object_new_string("128Mi"), "resources", "limits",
	        "memory", NULL);
	return (c);
}
