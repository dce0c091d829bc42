/*
 * agentrun_sandbox.c: the agent-sandbox backend of the AgentRun
 * reconciler (agentrun_sandbox.h; upstream agentrun_sandbox.go at
 * 008266e): the Sandbox and SandboxClaim CRs, the projection of the Job
 * builder's containers and volumes into the Sandbox's pod template
 * (upstream containerToMap, volumeToMap: the fields they keep, no
 * others), and the Running pass over the Sandbox's Ready condition and
 * its pod.  Upstream's EnsureWarmPool has no caller at 008266e, so no
 * SandboxWarmPool is written here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/duration.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/agentrun_job.h"
#include "workers/agentrun_sandbox.h"
#include "workers/kobj.h"
#include "workers/view.h"

#define SANDBOX_API "agents.x-k8s.io/v1alpha1"

bool
agentrun_sandbox_served(void)
{
	const char *v = getenv(CONTRACT_ENV_AGENT_SANDBOX);

	return (v != NULL && strcmp(v, "1") == 0);
}

bool
agentrun_sandbox_wanted(json_object *run)
{
	bool on = false;

	return (jx_get_bool(run, "spec.agentSandbox.enabled", &on) == 0 && on);
}

static const char *
str_or_empty(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

bool
agentrun_sandbox_active(json_object *status)
{
	return (str_or_empty(status, "sandboxName")[0] != '\0'
	        || str_or_empty(status, "sandboxClaimName")[0] != '\0');
}

static void
put(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

static json_object *
str(const char *s)
{
	return (json_object_new_string(s != NULL ? s : ""));
}

/* {"name": <name at path of o>} */
static json_object *
name_ref(json_object *o, const char *key)
{
	json_object *r = json_object_new_object();

	put(r, key, str(jx_get_str(o, key)));
	return (r);
}

static void
copy_bool(json_object *dst, json_object *src, const char *key)
{
	bool b;

	if (jx_get_bool(src, key, &b) == 0) {
		put(dst, key, json_object_new_boolean(b));
	}
}

static json_object *
env_list(json_object *env)
{
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(env); i++) {
		json_object *e = json_object_array_get_idx(env, i);
		json_object *m = json_object_new_object();
		/* a valueFrom is dropped: value "" (upstream) */
		put(m, "name", str(jx_get_str(e, "name")));
		put(m, "value", str(jx_get_str(e, "value")));
		json_object_array_add(out, m);
	}
	return (out);
}

static json_object *
env_from_list(json_object *ef)
{
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(ef); i++) {
		json_object *e = json_object_array_get_idx(ef, i);
		json_object *m = json_object_new_object();
		json_object *sr = json_object_object_get(e, "secretRef");
		if (json_object_is_type(sr, json_type_object)) {
			put(m, "secretRef", name_ref(sr, "name"));
		}
		json_object_array_add(out, m);
	}
	return (out);
}

static json_object *
mounts_list(json_object *vm)
{
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(vm); i++) {
		json_object *e = json_object_array_get_idx(vm, i);
		json_object *m = json_object_new_object();
		bool ro = false;
		put(m, "name", str(jx_get_str(e, "name")));
		put(m, "mountPath", str(jx_get_str(e, "mountPath")));
		if (jx_get_bool(e, "readOnly", &ro) == 0 && ro) {
			put(m, "readOnly", json_object_new_boolean(1));
		}
		json_object_array_add(out, m);
	}
	return (out);
}

static json_object *
security(json_object *sc)
{
	json_object *m = json_object_new_object();
	json_object *drop = jx_get(sc, "capabilities.drop");

	copy_bool(m, sc, "readOnlyRootFilesystem");
	copy_bool(m, sc, "allowPrivilegeEscalation");
	if (jx_array_len(drop) > 0) {
		json_object *caps = json_object_new_object();
		put(caps, "drop", jx_copy(drop));
		put(m, "capabilities", caps);
	}
	return (m);
}

static json_object *
resources(json_object *r)
{
	json_object *m = json_object_new_object();
	static const char *const keys[] = { "requests", "limits" };

	for (size_t i = 0; i < 2; i++) {
		json_object *q = json_object_object_get(r, keys[i]);
		if (json_object_is_type(q, json_type_object)) {
			put(m, keys[i], jx_copy(q));
		}
	}
	if (json_object_object_length(m) == 0) {
		json_object_put(m);
		return (NULL);
	}
	return (m);
}

json_object *
agentrun_sandbox_container(json_object *c)
{
	json_object *m = json_object_new_object(), *o;
	const char *pp = jx_get_str(c, "imagePullPolicy");

	put(m, "name", str(jx_get_str(c, "name")));
	put(m, "image", str(jx_get_str(c, "image")));
	if (pp != NULL && pp[0] != '\0') {
		put(m, "imagePullPolicy", str(pp));
	}
	if (jx_array_len(o = jx_get(c, "command")) > 0) {
		put(m, "command", jx_copy(o));
	}
	if (jx_array_len(o = jx_get(c, "env")) > 0) {
		put(m, "env", env_list(o));
	}
	if (jx_array_len(o = jx_get(c, "envFrom")) > 0) {
		put(m, "envFrom", env_from_list(o));
	}
	if (jx_array_len(o = jx_get(c, "volumeMounts")) > 0) {
		put(m, "volumeMounts", mounts_list(o));
	}
	o = json_object_object_get(c, "securityContext");
	if (json_object_is_type(o, json_type_object)) {
		put(m, "securityContext", security(o));
	}
	if ((o = resources(json_object_object_get(c, "resources"))) != NULL) {
		put(m, "resources", o);
	}
	return (m);
}

static json_object *
projected(json_object *p)
{
	json_object *srcs = jx_get(p, "sources");
	json_object *list = json_object_new_array();
	json_object *m = json_object_new_object();

	for (size_t i = 0; i < jx_array_len(srcs); i++) {
		json_object *s = json_object_array_get_idx(srcs, i);
		json_object *e = json_object_new_object(), *r;
		if (json_object_is_type(
		            r = json_object_object_get(s, "configMap"),
		            json_type_object)) {
			put(e, "configMap", name_ref(r, "name"));
		}
		if (json_object_is_type(
		            r = json_object_object_get(s, "secret"),
		            json_type_object)) {
			put(e, "secret", name_ref(r, "name"));
		}
		json_object_array_add(list, e);
	}
	put(m, "sources", list);
	return (m);
}

json_object *
agentrun_sandbox_volume(json_object *v)
{
	json_object *m = json_object_new_object(), *o;
	const char *s;

	put(m, "name", str(jx_get_str(v, "name")));
	if (json_object_is_type(o = json_object_object_get(v, "emptyDir"),
	            json_type_object)) {
		json_object *ed = json_object_new_object();
		if ((s = jx_get_str(o, "medium")) != NULL && s[0] != '\0') {
			put(ed, "medium", str(s));
		}
		if ((s = jx_get_str(o, "sizeLimit")) != NULL) {
			put(ed, "sizeLimit", str(s));
		}
		put(m, "emptyDir", ed);
	}
	if (json_object_is_type(o = json_object_object_get(v, "configMap"),
	            json_type_object)) {
		put(m, "configMap", name_ref(o, "name"));
	}
	if (json_object_is_type(o = json_object_object_get(v, "projected"),
	            json_type_object)) {
		put(m, "projected", projected(o));
	}
	if (json_object_is_type(
	            o = json_object_object_get(v, "persistentVolumeClaim"),
	            json_type_object)) {
		json_object *pvc = json_object_new_object();
		bool ro = false;
		jx_get_bool(o, "readOnly", &ro);
		put(pvc, "claimName", str(jx_get_str(o, "claimName")));
		put(pvc, "readOnly", json_object_new_boolean(ro));
		put(m, "persistentVolumeClaim", pvc);
	}
	return (m);
}

static void
labels(json_object *run, json_object *o)
{
	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, kobj_name(run));
	kobj_set_label(o, CONTRACT_LABEL_INSTANCE,
	        str_or_empty(run, "spec.instanceRef"));
	kobj_set_label(o, CONTRACT_LABEL_COMPONENT, "agent-run");
	kobj_set_label(o, CONTRACT_LABEL_AGENT_SANDBOX, "true");
	kobj_set_label(o, CONTRACT_LABEL_K8S_PART_OF, "sympozium");
	kobj_set_label(
	        o, CONTRACT_LABEL_K8S_MANAGED_BY, "sympozium-controller");
}

/* The new CR kind "<prefix><run>" of run, labelled and owned. */
static json_object *
new_cr(json_object *run, const char *kind, const char *prefix)
{
	char *name = xasprintf("%s%s", prefix, kobj_name(run));
	json_object *o = kobj_new(SANDBOX_API, kind, kobj_ns(run), name);

	labels(run, o);
	kobj_set_owner(o, run);
	free(name);
	return (o);
}

/* The projected list at key of pod, NULL when empty. */
static json_object *
mapped(json_object *pod, const char *key, json_object *(*fn)(json_object *),
        bool keep_empty)
{
	json_object *in = json_object_object_get(pod, key);
	json_object *out;

	if (jx_array_len(in) == 0 && !keep_empty) {
		return (NULL);
	}
	out = json_object_new_array();
	for (size_t i = 0; i < jx_array_len(in); i++) {
		json_object_array_add(
		        out, fn(json_object_array_get_idx(in, i)));
	}
	return (out);
}

static json_object *
template_spec(json_object *run, json_object *pod)
{
	json_object *ps = json_object_new_object(), *l;
	json_object *sc = json_object_new_object();
	const char *rc = jx_get_str(run, "spec.agentSandbox.runtimeClass");

	put(ps, "serviceAccountName", str(CONTRACT_AGENT_SA));
	put(ps, "restartPolicy", str("Never"));
	put(sc, "runAsNonRoot", json_object_new_boolean(1));
	put(sc, "runAsUser", json_object_new_int64(1000));
	put(sc, "fsGroup", json_object_new_int64(1000));
	put(ps, "securityContext", sc);
	put(ps, "containers",
	        mapped(pod, "containers", agentrun_sandbox_container, true));
	if ((l = mapped(
	             pod, "initContainers", agentrun_sandbox_container, false))
	        != NULL) {
		put(ps, "initContainers", l);
	}
	if ((l = mapped(pod, "volumes", agentrun_sandbox_volume, false))
	        != NULL) {
		put(ps, "volumes", l);
	}
	if (rc != NULL && rc[0] != '\0') {
		put(ps, "runtimeClassName", str(rc));
	}
	return (ps);
}

json_object *
agentrun_sandbox_cr(json_object *run, json_object *pod)
{
	json_object *o = new_cr(run, "Sandbox", "sb-");
	json_object *tmpl = json_object_new_object();

	labels(run, tmpl); /* metadata.labels: the CR's */
	put(tmpl, "spec", template_spec(run, pod));
	jx_setv(o, tmpl, "spec", "podTemplate", NULL);
	return (o);
}

json_object *
agentrun_sandbox_claim(json_object *run, const char *pool)
{
	json_object *o = new_cr(run, "SandboxClaim", "sbc-");

	jx_setv(o, str(pool), "spec", "warmPoolRef", "name", NULL);
	return (o);
}

/* The condition Ready of a Sandbox, or NULL. */
static json_object *
ready(json_object *sandbox)
{
	json_object *conds = jx_get(sandbox, "status.conditions");

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *c = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(c, "type");
		if (t != NULL && strcmp(t, "Ready") == 0) {
			return (c);
		}
	}
	return (NULL);
}

const char *
agentrun_sandbox_phase(json_object *sandbox)
{
	/* every Ready condition counts (upstream loops over all) */
	json_object *conds = jx_get(sandbox, "status.conditions");

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *c = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(c, "type");
		const char *s = jx_get_str(c, "status");
		if (t != NULL && strcmp(t, "Ready") == 0 && s != NULL
		        && strcmp(s, "True") == 0) {
			return ("Running");
		}
	}
	return ("");
}

const char *
agentrun_sandbox_message(json_object *sandbox)
{
	return (str_or_empty(ready(sandbox), "message"));
}

const char *
agentrun_sandbox_pod_phase(json_object *pod, const char *fallback)
{
	const char *p = jx_get_str(pod, "status.phase");

	if (p != NULL && strcmp(p, "Succeeded") == 0) {
		return ("Completed");
	}
	if (p != NULL && strcmp(p, "Failed") == 0) {
		return ("Failed");
	}
	return (fallback);
}

static void
st_set(json_object *status, const char *key, const char *v)
{
	json_object_object_add(status, key, json_object_new_string(v));
}

void
agentrun_sandbox_create(const struct rec_in *in, struct rec_out *out,
        json_object *status, json_object *pod)
{
	json_object *run = in->object;
	const char *pool = str_or_empty(run, "spec.agentSandbox.warmPoolRef");
	bool claim = pool[0] != '\0';
	json_object *cr = claim ? agentrun_sandbox_claim(run, pool)
	                        : agentrun_sandbox_cr(run, pod);
	char *name = xstrdup(kobj_name(cr));
	char ts[TIMEFMT_RFC3339_LEN];

	kobj_create(
	        out, claim ? &kobj_sandboxclaims : &kobj_sandboxes, cr, true);
	timefmt_rfc3339(in->now_ms / 1000, ts);
	st_set(status, "phase", "Running");
	st_set(status, "startedAt", ts);
	agentrun_job_status_trace_id(run, status);
	/* a claim: both names (upstream sets sandboxName from the created
	 * object, the claim) */
	if (claim) {
		st_set(status, "sandboxClaimName", name);
	}
	st_set(status, "sandboxName", name);
	rec_verdict(out, IPC_V_REQUEUE_AFTER, AGENTRUN_SANDBOX_POLL_MS, NULL);
	free(name);
}

/* The pod called name among the run's own (labelled with it), or NULL
 * (a list error too: upstream falls back on the conditions).  Caller
 * puts. */
static json_object *
own_pod(const struct rec_in *in, const char *name)
{
	char *sel = xasprintf(
	        CONTRACT_LABEL_AGENT_RUN "=%s", kobj_name(in->object));
	json_object *items = NULL, *pod = NULL;
	char err[256];

	if (view_list(in->view, &kobj_pods, kobj_ns(in->object), sel, &items,
	            err, sizeof(err))
	        == 0) {
		for (size_t i = 0; i < json_object_array_length(items); i++) {
			json_object *p = json_object_array_get_idx(items, i);
			if (strcmp(kobj_name(p), name) == 0) {
				pod = json_object_get(p);
				break;
			}
		}
	}
	json_object_put(items);
	free(sel);
	return (pod);
}

/* Whether spec.timeout (only: upstream's sandbox path knows no default)
 * has passed since status.startedAt. */
static bool
timed_out(const struct rec_in *in, json_object *status)
{
	const char *to = str_or_empty(in->object, "spec.timeout");
	int64_t ns = 0, us = 0;

	if (to[0] == '\0' || duration_parse(to, &ns) != 0 || ns <= 0
	        || timefmt_parse(str_or_empty(status, "startedAt"), &us)
	                != 0) {
		return (false);
	}
	return ((in->now_ms - us / 1000) * 1000000 > ns);
}

/* The Sandbox called name: the child, else read by name (*owned false).
 * Returns 0, 1 (absent) or -1 (error verdict set). */
static int
find_sandbox(const struct rec_in *in, struct rec_out *out, const char *name,
        json_object **sb, bool *owned)
{
	char err[256];
	int rc;

	*sb = kobj_child(in->children, "Sandbox", name);
	*owned = *sb != NULL;
	if (*owned) {
		*sb = json_object_get(*sb);
		return (0);
	}
	rc = view_get(in->view, &kobj_sandboxes, kobj_ns(in->object), name, sb,
	        err, sizeof(err));
	if (rc < 0) {
		rec_verdict(out, IPC_V_ERROR, 0, "sandbox: %s", err);
	}
	return (rc);
}

/* Still running: the timeout, else a requeue. */
static void
still_running(const struct rec_in *in, struct rec_out *out,
        json_object *status, const char *name, bool owned,
        struct agentrun_sandbox_check *k)
{
	if (!timed_out(in, status)) {
		k->step = AGENTRUN_SANDBOX_WAIT;
		rec_verdict(out, IPC_V_REQUEUE_AFTER, AGENTRUN_SANDBOX_POLL_MS,
		        NULL);
		return;
	}
	/* the write policy lets only the run's own Sandbox go (a claim's
	 * is the agent-sandbox controller's) */
	if (owned) {
		kobj_delete(
		        out, &kobj_sandboxes, kobj_ns(in->object), name, true);
	}
	k->step = AGENTRUN_SANDBOX_FAILED;
	snprintf(k->msg, sizeof(k->msg), "agent sandbox timed out");
}

void
agentrun_sandbox_check(const struct rec_in *in, struct rec_out *out,
        json_object *status, struct agentrun_sandbox_check *k)
{
	const char *sn = str_or_empty(status, "sandboxName");
	char *name;
	json_object *sb = NULL, *pod = NULL;
	const char *phase;
	bool owned = false;
	int rc;

	memset(k, 0, sizeof(*k));
	if (!agentrun_sandbox_served()) {
		/* upstream: DynamicClient nil (the CRDs gone since) */
		k->step = AGENTRUN_SANDBOX_FAILED;
		snprintf(k->msg, sizeof(k->msg), "dynamic client unavailable");
		return;
	}
	name = xstrdup(
	        sn[0] != '\0' ? sn : str_or_empty(status, "sandboxClaimName"));
	rc = find_sandbox(in, out, name, &sb, &owned);
	k->step = rc < 0 ? AGENTRUN_SANDBOX_ERROR : AGENTRUN_SANDBOX_FAILED;
	if (rc != 0) {
		snprintf(k->msg, sizeof(k->msg), "sandbox CR \"%s\" not found",
		        name);
		free(name);
		return;
	}
	/* its pod has its name (upstream): the log is read from it */
	st_set(status, "podName", name);
	phase = agentrun_sandbox_phase(sb);
	pod = own_pod(in, name);
	k->own_pod = pod != NULL;
	phase = agentrun_sandbox_pod_phase(pod, phase);
	if (strcmp(phase, "Completed") == 0) {
		k->step = AGENTRUN_SANDBOX_COMPLETED;
	} else if (strcmp(phase, "Failed") == 0) {
		const char *m = agentrun_sandbox_message(sb);
		k->step = AGENTRUN_SANDBOX_POD_FAILED;
		if (m[0] != '\0') {
			snprintf(k->msg, sizeof(k->msg), "%s", m);
		} else {
			snprintf(k->msg, sizeof(k->msg),
			        "sandbox CR entered phase \"%s\"", phase);
		}
	} else {
		still_running(in, out, status, name, owned, k);
	}
	json_object_put(pod);
	json_object_put(sb);
	free(name);
}
