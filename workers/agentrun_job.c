/*
 * agentrun_job.c: builds the Job of a task-mode AgentRun (spec 1.12): the
 * labels, deadlines, pod security, the init containers (wait-for-memory,
 * mcp-discover, preRun hooks), the agent, ipc-bridge, sandbox, mcp-bridge
 * and skill sidecar containers, and the volumes (the workspace a PVC
 * when the run has postRun hooks: agentrun_postrun.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/contract.h"
#include "common/jsonx.h"
#include "common/w3trace.h"
#include "common/xmalloc.h"
#include "workers/agentrun_job.h"
#include "workers/agentrun_mcp.h"
#include "workers/agentrun_postrun.h"
#include "workers/kobj.h"

#define NATS_URL "nats://nats.sympozium-system.svc:4222"

static json_object *
str(const char *v)
{
	return (json_object_new_string(v != NULL ? v : ""));
}

static void
put(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* Copies an env array of {name, value...} entries. */
static void
env_copy(json_object *env, json_object *from)
{
	size_t n = jx_array_len(from);

	for (size_t i = 0; i < n; i++) {
		json_object_array_add(env,
		        json_object_get(json_object_array_get_idx(from, i)));
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* Appends prefix+key (upper-cased when upper) = value for every string
 * entry of map, in key order. */
static void
env_map(json_object *env, json_object *map, const char *prefix, bool upper)
{
	size_t n = 0, len;
	const char **keys;

	if (map == NULL || !json_object_is_type(map, json_type_object)) {
		return;
	}
	len = (size_t)json_object_object_length(map);
	keys = xcalloc(len + 1, sizeof(*keys));
	json_object_object_foreach(map, k, v)
	{
		(void)v;
		keys[n++] = k;
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *name = xasprintf("%s%s", prefix, keys[i]);
		for (char *p = name; upper && *p != '\0'; p++) {
			*p = (char)toupper((unsigned char)*p);
		}
		kobj_env_add(env, name,
		        json_object_get_string(
		                json_object_object_get(map, keys[i])));
		free(name);
	}
	free(keys);
}

static json_object *
quantities(const char *cpu, const char *mem)
{
	json_object *o = json_object_new_object();

	put(o, "cpu", str(cpu));
	put(o, "memory", str(mem));
	return (o);
}

static json_object *
resources(
        const char *rcpu, const char *rmem, const char *lcpu, const char *lmem)
{
	json_object *o = json_object_new_object();

	put(o, "requests", quantities(rcpu, rmem));
	put(o, "limits", quantities(lcpu, lmem));
	return (o);
}

static json_object *
drop_all(void)
{
	json_object *caps = json_object_new_object();
	json_object *drop = json_object_new_array();

	json_object_array_add(drop, str("ALL"));
	put(caps, "drop", drop);
	return (caps);
}

/* The hardened container securityContext. */
static json_object *
hardened(void)
{
	json_object *o = json_object_new_object();

	put(o, "readOnlyRootFilesystem", json_object_new_boolean(1));
	put(o, "allowPrivilegeEscalation", json_object_new_boolean(0));
	put(o, "capabilities", drop_all());
	return (o);
}

static void
mount(json_object *mounts, const char *name, const char *path, bool ro)
{
	json_object *m = json_object_new_object();

	put(m, "name", str(name));
	put(m, "mountPath", str(path));
	if (ro) {
		put(m, "readOnly", json_object_new_boolean(1));
	}
	json_object_array_add(mounts, m);
}

/* {name, image, imagePullPolicy: IfNotPresent}, with env and
 * volumeMounts arrays returned through *env and *mounts. */
static json_object *
container(const char *name, const char *image, json_object **env,
        json_object **mounts)
{
	json_object *c = json_object_new_object();

	put(c, "name", str(name));
	put(c, "image", str(image));
	put(c, "imagePullPolicy", str("IfNotPresent"));
	*env = json_object_new_array();
	*mounts = json_object_new_array();
	put(c, "env", *env);
	put(c, "volumeMounts", *mounts);
	return (c);
}

/* A user-supplied image's pull policy (later upstream fix #167
 * ResolveImagePullPolicy): p when valid, else IfNotPresent as before. */
static void
pull_policy(json_object *c, const char *p)
{
	put(c, "imagePullPolicy", str(kobj_pull_policy(p) ?: "IfNotPresent"));
}

/* Drops an empty env array (Go omits it). */
static void
tidy(json_object *c)
{
	json_object *env = json_object_object_get(c, "env");

	if (env != NULL && json_object_array_length(env) == 0) {
		json_object_object_del(c, "env");
	}
}

/* The builders above, for the postRun Job (agentrun_postrun.c). */
json_object *
agentrun_job_hardened(void)
{
	return (hardened());
}

json_object *
agentrun_job_resources(
        const char *rcpu, const char *rmem, const char *lcpu, const char *lmem)
{
	return (resources(rcpu, rmem, lcpu, lmem));
}

json_object *
agentrun_job_container(const char *name, const char *image, json_object **env,
        json_object **mounts)
{
	return (container(name, image, env, mounts));
}

void
agentrun_job_mount(
        json_object *mounts, const char *name, const char *path, bool ro)
{
	mount(mounts, name, path, ro);
}

void
agentrun_job_env_map(json_object *env, json_object *map)
{
	env_map(env, map, "", false);
}

static const char *
run_name(const struct agentrun_job_in *in)
{
	return (kobj_name(in->run));
}

static const char *
spec_str(const struct agentrun_job_in *in, const char *path)
{
	return (jx_get_str(json_object_object_get(in->run, "spec"), path));
}

static bool
has_mcp(const struct agentrun_job_in *in)
{
	return (jx_array_len(in->mcp) > 0);
}

/* attrs[k] = v for every string entry of map with k, v not empty. */
static void
attrs_merge(json_object *attrs, json_object *map)
{
	if (map == NULL || !json_object_is_type(map, json_type_object)) {
		return;
	}
	json_object_object_foreach(map, k, v)
	{
		if (json_object_is_type(v, json_type_string)) {
			put(attrs, k, json_object_get(v));
		}
	}
}

/* "k=v,..." of the default resource attributes overridden by the
 * instance's, empty keys and values skipped, the pairs sorted (upstream
 * buildObservabilityEnv).  NULL when none.  Caller frees. */
static char *
resource_attrs(const struct agentrun_job_in *in)
{
	json_object *attrs = json_object_new_object();
	char **pairs, *out;
	size_t n = 0;
	struct buf b;

	put(attrs, "sympozium.instance.name",
	        str(spec_str(in, "instanceRef")));
	put(attrs, "sympozium.agent_run.id", str(run_name(in)));
	put(attrs, "k8s.namespace.name", str(kobj_ns(in->run)));
	attrs_merge(attrs,
	        json_object_object_get(
	                in->observability, "resourceAttributes"));
	pairs = xcalloc(
	        (size_t)json_object_object_length(attrs) + 1, sizeof(*pairs));
	json_object_object_foreach(attrs, k, v)
	{
		const char *val = json_object_get_string(v);
		if (k[0] != '\0' && val != NULL && val[0] != '\0') {
			pairs[n++] = xasprintf("%s=%s", k, val);
		}
	}
	qsort(pairs, n, sizeof(*pairs), cmp_str);
	buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		buf_printf(&b, "%s%s", i > 0 ? "," : "", pairs[i]);
		free(pairs[i]);
	}
	free(pairs);
	json_object_put(attrs);
	out = buf_detach(&b, NULL);
	if (n == 0) {
		free(out);
		out = NULL;
	}
	return (out);
}

/* SYMPOZIUM_OTEL_* and OTEL_* pairs of an enabled instance.observability
 * (upstream buildObservabilityEnv), appended to env. */
static void
otel_env(const struct agentrun_job_in *in, json_object *env)
{
	static const char *const keys[][2]
	        = { { "otlpEndpoint", "OTLP_ENDPOINT" },
		          { "otlpProtocol", "OTLP_PROTOCOL" },
		          { "serviceName", "SERVICE_NAME" } };
	char *attrs;

	if (in->observability == NULL) {
		return;
	}
	kobj_env_add(env, "SYMPOZIUM_OTEL_ENABLED", "true");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = jx_get_str(in->observability, keys[i][0]);
		char *a, *o;
		if (v == NULL || v[0] == '\0') {
			continue;
		}
		a = xasprintf("SYMPOZIUM_OTEL_%s", keys[i][1]);
		o = xasprintf(
		        i == 2 ? "OTEL_%s" : "OTEL_EXPORTER_%s", keys[i][1]);
		kobj_env_add(env, a, v);
		kobj_env_add(env, o, v);
		free(a);
		free(o);
	}
	if ((attrs = resource_attrs(in)) != NULL) {
		kobj_env_add(env, "SYMPOZIUM_OTEL_RESOURCE_ATTRIBUTES", attrs);
		kobj_env_add(env, "OTEL_RESOURCE_ATTRIBUTES", attrs);
		free(attrs);
	}
}

static char *
shared_memory_url(const struct agentrun_job_in *in)
{
	return (xasprintf("http://%s-shared-memory.%s.svc:8080",
	        in->persona_pack ?: "", kobj_ns(in->run) ?: ""));
}

static void
common_env(const struct agentrun_job_in *in, json_object *env)
{
	kobj_env_add(env, "AGENT_RUN_ID", run_name(in));
	kobj_env_add(env, "INSTANCE_NAME", spec_str(in, "instanceRef"));
	kobj_env_add(env, "AGENT_NAMESPACE", kobj_ns(in->run));
}

static void
agent_env(const struct agentrun_job_in *in, json_object *env)
{
	static const char *const pairs[][2] = { { "AGENT_ID", "agentId" },
		{ "SESSION_KEY", "sessionKey" },
		{ "INSTANCE_NAME", "instanceRef" },
		{ "PERSONA_PACK_NAME", NULL }, { "AGENT_NAMESPACE", NULL },
		{ "TASK", "task" }, { "SYSTEM_PROMPT", "systemPrompt" },
		{ "MODEL_PROVIDER", "model.provider" },
		{ "MODEL_NAME", "model.model" },
		{ "MODEL_BASE_URL", "model.baseURL" },
		{ "THINKING_MODE", "model.thinking" } };
	const char *ch, *chat;

	kobj_env_add(env, "AGENT_RUN_ID", run_name(in));
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *v = pairs[i][1] != NULL ? spec_str(in, pairs[i][1])
		        : i == 3                    ? in->persona_pack
		                                    : kobj_ns(in->run);
		kobj_env_add(env, pairs[i][0], v);
	}
	if (in->memory_enabled) {
		kobj_env_add(env, "MEMORY_ENABLED", "true");
	}
	if (agentrun_job_memory_skill(in->skills)) {
		char *url = agentrun_job_memory_url(in->run);
		kobj_env_add(env, "MEMORY_SERVER_URL", url);
		free(url);
	}
	env_map(env, jx_get(in->run, "spec.env"), "", false);
	kobj_env_add(env, "TOOLS_ENABLED", "true");
	ch = kobj_annotation(in->run, CONTRACT_ANN_REPLY_CHANNEL);
	chat = kobj_annotation(in->run, CONTRACT_ANN_REPLY_CHAT_ID);
	if (ch != NULL) {
		kobj_env_add(env, "SOURCE_CHANNEL", ch);
	}
	if (chat != NULL) {
		kobj_env_add(env, "SOURCE_CHAT_ID", chat);
	}
	otel_env(in, env);
	if (in->shared_access != NULL) {
		char *url = shared_memory_url(in);
		kobj_env_add(env, "WORKFLOW_MEMORY_SERVER_URL", url);
		kobj_env_add(env, "WORKFLOW_MEMORY_ACCESS", in->shared_access);
		free(url);
	}
}

static json_object *
agent_container(const struct agentrun_job_in *in)
{
	char image[256];
	json_object *env, *mounts, *c;
	const char *secret = spec_str(in, "model.authSecretRef");

	kobj_image(image, sizeof(image), NULL, "agent-runner", NULL);
	c = container("agent", image, &env, &mounts);
	agent_env(in, env);
	if (secret != NULL && secret[0] != '\0') {
		json_object *from = json_object_new_array();
		json_object *ref = json_object_new_object();
		jx_setv(ref, str(secret), "secretRef", "name", NULL);
		json_object_array_add(from, ref);
		put(c, "envFrom", from);
	}
	mount(mounts, "workspace", "/workspace", false);
	mount(mounts, "skills", "/skills", true);
	mount(mounts, "ipc", "/ipc", false);
	mount(mounts, "tmp", "/tmp", false);
	if (in->memory_enabled) {
		mount(mounts, "memory", "/memory", true);
	}
	put(c, "resources", resources("250m", "512Mi", "1", "1Gi"));
	put(c, "securityContext", hardened());
	return (c);
}

static json_object *
bridge_container(const struct agentrun_job_in *in)
{
	char image[256];
	json_object *env, *mounts, *c;

	kobj_image(image, sizeof(image), NULL, "ipc-bridge", NULL);
	c = container("ipc-bridge", image, &env, &mounts);
	common_env(in, env);
	kobj_env_add(env, "EVENT_BUS_URL", NATS_URL);
	if (agentrun_postrun_gated(in->run)) {
		kobj_env_add(env, "GATE_SUPPRESS_COMPLETION", "true");
	}
	otel_env(in, env);
	mount(mounts, "ipc", "/ipc", false);
	put(c, "resources", resources("50m", "64Mi", "100m", "128Mi"));
	put(c, "securityContext", hardened());
	return (c);
}

static json_object *
sandbox_container(const struct agentrun_job_in *in)
{
	char image[256];
	const char *img = spec_str(in, "sandbox.image");
	json_object *env, *mounts, *c, *sc = json_object_new_object();
	json_object *cmd = json_object_new_array();

	if (img != NULL && img[0] != '\0') {
		snprintf(image, sizeof(image), "%s", img);
	} else {
		kobj_image(image, sizeof(image), NULL, "sandbox", NULL);
	}
	c = container("sandbox", image, &env, &mounts);
	pull_policy(c, spec_str(in, "sandbox.imagePullPolicy"));
	json_object_array_add(cmd, str("sleep"));
	json_object_array_add(cmd, str("infinity"));
	put(c, "command", cmd);
	mount(mounts, "workspace", "/workspace", false);
	mount(mounts, "tmp", "/tmp", false);
	put(c, "resources", resources("100m", "256Mi", "500m", "512Mi"));
	put(sc, "readOnlyRootFilesystem", json_object_new_boolean(1));
	put(sc, "capabilities", drop_all());
	put(c, "securityContext", sc);
	tidy(c);
	return (c);
}

/* Init container pre-<name> for a preRun hook. */
static json_object *
hook_container(const struct agentrun_job_in *in, json_object *hook)
{
	char *name = xasprintf("pre-%s", jx_get_str(hook, "name") ?: "");
	json_object *env, *mounts, *c;

	c = container(name, jx_get_str(hook, "image"), &env, &mounts);
	free(name);
	pull_policy(c, jx_get_str(hook, "imagePullPolicy"));
	common_env(in, env);
	env_copy(env, json_object_object_get(hook, "env"));
	env_map(env, jx_get(in->run, "spec.env"), "", false);
	if (jx_get(hook, "command") != NULL) {
		put(c, "command", json_object_get(jx_get(hook, "command")));
	}
	if (jx_get(hook, "args") != NULL) {
		put(c, "args", json_object_get(jx_get(hook, "args")));
	}
	mount(mounts, "workspace", "/workspace", false);
	mount(mounts, "ipc", "/ipc", false);
	mount(mounts, "tmp", "/tmp", false);
	put(c, "resources", resources("100m", "128Mi", "500m", "512Mi"));
	put(c, "securityContext", hardened());
	return (c);
}

void
agentrun_job_host_volume(const char *pack, size_t idx, char out[64])
{
	char *raw = xasprintf("host-%s-%zu", pack, idx);
	char *p = raw, *e;

	for (char *q = raw; *q != '\0'; q++) {
		*q = (char)tolower((unsigned char)*q);
		if (!(islower((unsigned char)*q)
		            || isdigit((unsigned char)*q))) {
			*q = '-';
		}
	}
	while (*p == '-') {
		p++;
	}
	e = p + strlen(p);
	while (e > p && e[-1] == '-') {
		*--e = '\0';
	}
	snprintf(out, 64, "%s", p[0] != '\0' ? p : "host-mount");
	free(raw);
}

static bool
flag(json_object *o, const char *path, bool def)
{
	bool b = def;

	jx_get_bool(o, path, &b);
	return (b);
}

static json_object *
host_security(json_object *ha)
{
	json_object *sc = NULL;

	if (flag(ha, "privileged", false)) {
		sc = json_object_new_object();
		put(sc, "privileged", json_object_new_boolean(1));
		put(sc, "allowPrivilegeEscalation",
		        json_object_new_boolean(1));
		jx_setv(sc, str("Unconfined"), "seccompProfile", "type", NULL);
	}
	if (flag(ha, "runAsRoot", false)) {
		sc = sc != NULL ? sc : json_object_new_object();
		put(sc, "runAsUser", json_object_new_int64(0));
		put(sc, "runAsNonRoot", json_object_new_boolean(0));
	}
	return (sc);
}

/* hostPath mounts and volumes of a sidecar with hostAccess enabled. */
static void
host_mounts(const struct agentrun_sidecar *s, json_object *ha,
        json_object *mounts, json_object *volumes)
{
	json_object *list = json_object_object_get(ha, "mounts");
	size_t n = jx_array_len(list);

	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(list, i);
		const char *hp = jx_get_str(m, "hostPath");
		const char *mp = jx_get_str(m, "mountPath");
		char name[64];
		json_object *vol;
		if (hp == NULL || hp[0] == '\0' || mp == NULL
		        || mp[0] == '\0') {
			continue;
		}
		agentrun_job_host_volume(s->pack, i, name);
		mount(mounts, name, mp, flag(m, "readOnly", true));
		vol = json_object_new_object();
		put(vol, "name", str(name));
		jx_setv(vol, str(hp), "hostPath", "path", NULL);
		json_object_array_add(volumes, vol);
	}
}

static void
secret_mount(const struct agentrun_sidecar *s, json_object *mounts,
        json_object *volumes)
{
	const char *ref = jx_get_str(s->sidecar, "secretRef");
	const char *path = jx_get_str(s->sidecar, "secretMountPath");
	char *name, *def;
	json_object *vol;

	if (ref == NULL || ref[0] == '\0') {
		return;
	}
	name = xasprintf("skill-secret-%s", s->pack);
	def = xasprintf("/secrets/%s", ref);
	mount(mounts, name, path != NULL && path[0] != '\0' ? path : def,
	        true);
	vol = json_object_new_object();
	put(vol, "name", str(name));
	jx_setv(vol, str(ref), "secret", "secretName", NULL);
	jx_setv(vol, json_object_new_boolean(1), "secret", "optional", NULL);
	json_object_array_add(volumes, vol);
	free(name);
	free(def);
}

struct pod_flags {
	bool host_network, host_pid;
};

static json_object *
sidecar_container(const struct agentrun_sidecar *s, json_object *volumes,
        struct pod_flags *pf)
{
	char *name = xasprintf("skill-%s", s->pack);
	json_object *env, *mounts, *cmd, *c, *ha, *sc;
	const char *cpu = jx_get_str(s->sidecar, "resources.cpu");
	const char *mem = jx_get_str(s->sidecar, "resources.memory");

	c = container(name, jx_get_str(s->sidecar, "image"), &env, &mounts);
	free(name);
	pull_policy(c, jx_get_str(s->sidecar, "imagePullPolicy"));
	cmd = json_object_object_get(s->sidecar, "command");
	if (cmd != NULL && json_object_is_type(cmd, json_type_array)
	        && json_object_array_length(cmd) > 0) {
		put(c, "command", json_object_get(cmd));
	}
	env_copy(env, json_object_object_get(s->sidecar, "env"));
	env_map(env, s->params, "SKILL_", true);
	mount(mounts, "ipc", "/ipc", false);
	mount(mounts, "tmp", "/tmp", false);
	if (flag(s->sidecar, "mountWorkspace", true)) {
		mount(mounts, "workspace", "/workspace", false);
	}
	cpu = cpu != NULL && cpu[0] != '\0' ? cpu : "100m";
	mem = mem != NULL && mem[0] != '\0' ? mem : "128Mi";
	put(c, "resources", resources(cpu, mem, cpu, mem));
	ha = json_object_object_get(s->sidecar, "hostAccess");
	if (flag(ha, "enabled", false)) {
		pf->host_network |= flag(ha, "hostNetwork", false);
		pf->host_pid |= flag(ha, "hostPID", false);
		host_mounts(s, ha, mounts, volumes);
		if ((sc = host_security(ha)) != NULL) {
			put(c, "securityContext", sc);
		}
	}
	secret_mount(s, mounts, volumes);
	tidy(c);
	return (c);
}

static json_object *
empty_dir(const char *name, const char *medium, const char *size)
{
	json_object *v = json_object_new_object();
	json_object *ed = json_object_new_object();

	put(v, "name", str(name));
	if (medium != NULL) {
		put(ed, "medium", str(medium));
	}
	if (size != NULL) {
		put(ed, "sizeLimit", str(size));
	}
	put(v, "emptyDir", ed);
	return (v);
}

static void
add_source(json_object *sources, const char *cm)
{
	json_object *s = json_object_new_object();

	if (cm == NULL || cm[0] == '\0') {
		json_object_put(s);
		return;
	}
	jx_setv(s, str(cm), "configMap", "name", NULL);
	jx_setv(s, json_object_new_boolean(1), "configMap", "optional", NULL);
	json_object_array_add(sources, s);
}

static json_object *
skills_volume(const struct agentrun_job_in *in)
{
	json_object *sources = json_object_new_array();
	size_t n = jx_array_len(in->skills);
	json_object *v;

	for (size_t i = 0; i < n; i++) {
		json_object *ref = json_object_array_get_idx(in->skills, i);
		add_source(sources, jx_get_str(ref, "skillPackRef"));
		add_source(sources, jx_get_str(ref, "configMapRef"));
	}
	if (json_object_array_length(sources) == 0) {
		json_object_put(sources);
		return (empty_dir("skills", NULL, NULL));
	}
	v = json_object_new_object();
	put(v, "name", str("skills"));
	jx_setv(v, sources, "projected", "sources", NULL);
	return (v);
}

/* Volume name from the optional ConfigMap <base><suffix>. */
static void
cm_volume(json_object *vols, const char *name, const char *base,
        const char *suffix)
{
	json_object *v = json_object_new_object();
	char *cm = xasprintf("%s%s", base ?: "", suffix);

	put(v, "name", str(name));
	jx_setv(v, str(cm), "configMap", "name", NULL);
	jx_setv(v, json_object_new_boolean(1), "configMap", "optional", NULL);
	json_object_array_add(vols, v);
	free(cm);
}

/* emptyDir, or the workspace PVC when the run has postRun hooks
 * (upstream buildVolumes). */
static json_object *
workspace_volume(const struct agentrun_job_in *in)
{
	json_object *v;
	char *claim;

	if (!agentrun_postrun_hooks(in->run)) {
		return (empty_dir("workspace", NULL, "1Gi"));
	}
	v = json_object_new_object();
	claim = agentrun_postrun_pvc_name(in->run);
	put(v, "name", str("workspace"));
	jx_setv(v, str(claim), "persistentVolumeClaim", "claimName", NULL);
	free(claim);
	return (v);
}

static json_object *
base_volumes(const struct agentrun_job_in *in)
{
	json_object *vols = json_object_new_array();

	json_object_array_add(vols, workspace_volume(in));
	json_object_array_add(vols, empty_dir("ipc", "Memory", "64Mi"));
	json_object_array_add(vols, empty_dir("tmp", NULL, "256Mi"));
	json_object_array_add(vols, skills_volume(in));
	if (in->memory_enabled) {
		cm_volume(vols, "memory", spec_str(in, "instanceRef"),
		        "-memory");
	}
	if (has_mcp(in)) {
		cm_volume(vols, "mcp-config", run_name(in), "-mcp-servers");
	}
	return (vols);
}

/* MCP_AUTH_<NAME> from the server's authSecret (key authKey, default
 * "token"), optional. */
static void
mcp_auth_env(json_object *env, json_object *srv)
{
	const char *secret = jx_get_str(srv, "authSecret");
	const char *key = jx_get_str(srv, "authKey");
	char *name;
	json_object *e, *ref;

	if (secret == NULL || secret[0] == '\0') {
		return;
	}
	name = agentrun_mcp_auth_env(jx_get_str(srv, "name") ?: "");
	e = json_object_new_object();
	ref = json_object_new_object();
	put(ref, "name", str(secret));
	put(ref, "key", str(key != NULL && key[0] != '\0' ? key : "token"));
	put(ref, "optional", json_object_new_boolean(1));
	put(e, "name", str(name));
	jx_setv(e, ref, "valueFrom", "secretKeyRef", NULL);
	json_object_array_add(env, e);
	free(name);
}

/* The span of the reconcile in progress (agentrun_job_trace()). */
static struct w3t_ctx span;

void
agentrun_job_trace(const struct w3t_ctx *c)
{
	span = c != NULL ? *c : (struct w3t_ctx) { 0 };
}

/* The span context the run's containers and status get: the reconcile's
 * span, else the run's annotation's (upstream's no-op tracer keeps it). */
static bool
trace_ctx(json_object *run, struct w3t_ctx *out)
{
	if (span.valid) {
		*out = span;
		return (true);
	}
	return (w3t_parse(
	        kobj_annotation(run, AGENTRUN_JOB_ANN_TRACEPARENT), out));
}

void
agentrun_job_status_trace_id(json_object *run, json_object *status)
{
	struct w3t_ctx tc;
	char id[33];

	if (!trace_ctx(run, &tc))
		return;
	w3t_trace_id_hex(&tc, id);
	json_object_object_add(status, "traceID", json_object_new_string(id));
}

/* The env shared by mcp-discover and mcp-bridge (upstream
 * buildContainers' mcpEnv). */
static void
mcp_env(const struct agentrun_job_in *in, json_object *env)
{
	const char *tp
	        = kobj_annotation(in->run, AGENTRUN_JOB_ANN_TRACEPARENT);
	char own[W3T_TRACEPARENT_LEN + 1];

	if (span.valid) {
		w3t_format(&span, own);
		tp = own;
	}
	kobj_env_add(env, "AGENT_RUN_ID", run_name(in));
	kobj_env_add(env, "MCP_CONFIG_PATH", "/config/mcp-servers.yaml");
	kobj_env_add(env, "MCP_IPC_PATH", "/ipc/tools");
	kobj_env_add(env, "MCP_MANIFEST_PATH", "/ipc/tools/mcp-tools.json");
	if (tp != NULL && tp[0] != '\0') {
		kobj_env_add(env, "TRACEPARENT", tp);
	}
	otel_env(in, env);
	for (size_t i = 0; i < jx_array_len(in->mcp); i++) {
		mcp_auth_env(env, json_object_array_get_idx(in->mcp, i));
	}
}

/* mcp-discover (init, discover_only) or mcp-bridge (sidecar). */
static json_object *
mcp_container(const struct agentrun_job_in *in, bool discover)
{
	char image[256];
	json_object *env, *mounts, *c;

	kobj_image(image, sizeof(image), NULL, "mcp-bridge", NULL);
	c = container(discover ? "mcp-discover" : "mcp-bridge", image, &env,
	        &mounts);
	put(c, "securityContext", hardened());
	mcp_env(in, env);
	if (discover) {
		kobj_env_add(env, "MCP_DISCOVER_ONLY", "true");
	}
	mount(mounts, "ipc", "/ipc", false);
	mount(mounts, "mcp-config", "/config", true);
	put(c, "resources", resources("100m", "128Mi", "200m", "256Mi"));
	return (c);
}

bool
agentrun_job_memory_skill(json_object *skills)
{
	size_t n = jx_array_len(skills);

	for (size_t i = 0; i < n; i++) {
		const char *ref = jx_get_str(
		        json_object_array_get_idx(skills, i), "skillPackRef");
		if (ref != NULL && strcmp(ref, "memory") == 0) {
			return (true);
		}
	}
	return (false);
}

char *
agentrun_job_memory_url(json_object *run)
{
	const char *inst = jx_get_str(run, "spec.instanceRef");

	return (xasprintf("http://%s-memory.%s.svc:8080", inst ?: "",
	        kobj_ns(run) ?: ""));
}

/* wait-for-<what>: polls url/health for up to 120 s (upstream
 * buildContainers, injectSharedMemory); label is "memory server" or
 * "shared memory server". */
static json_object *
wait_container(const char *name, const char *url, const char *label)
{
	char *script = xasprintf("elapsed=0; until wget -q --spider "
	                         "--timeout=2 %s/health; do echo 'waiting "
	                         "for %s...'; sleep 2; "
	                         "elapsed=$((elapsed+2)); if [ $elapsed -ge "
	                         "120 ]; then echo 'ERROR: %s not "
	                         "ready after 120s'; exit 1; fi; done",
	        url, label, label);
	json_object *env, *mounts, *c, *cmd = json_object_new_array();

	c = container(name, "busybox:1.36", &env, &mounts);
	json_object_object_del(c, "volumeMounts");
	put(c, "securityContext", hardened());
	json_object_array_add(cmd, str("sh"));
	json_object_array_add(cmd, str("-c"));
	json_object_array_add(cmd, str(script));
	put(c, "command", cmd);
	put(c, "resources", resources("50m", "32Mi", "100m", "64Mi"));
	tidy(c);
	free(script);
	return (c);
}

static json_object *
init_containers(const struct agentrun_job_in *in)
{
	json_object *pre = jx_get(in->run, "spec.lifecycle.preRun");
	json_object *list = json_object_new_array();
	size_t n = jx_array_len(pre);

	if (agentrun_job_memory_skill(in->skills)) {
		char *url = agentrun_job_memory_url(in->run);
		json_object_array_add(list,
		        wait_container(
		                "wait-for-memory", url, "memory server"));
		free(url);
	}
	if (has_mcp(in)) {
		json_object_array_add(list, mcp_container(in, true));
	}
	for (size_t i = 0; i < n; i++) {
		json_object_array_add(list,
		        hook_container(in, json_object_array_get_idx(pre, i)));
	}
	if (in->shared_access != NULL) {
		char *url = shared_memory_url(in);
		json_object_array_add(list,
		        wait_container("wait-for-shared-memory", url,
		                "shared memory server"));
		free(url);
	}
	return (list);
}

static json_object *
pod_security(const struct agentrun_job_in *in)
{
	json_object *sc = json_object_new_object();
	const char *sp
	        = spec_str(in, "sandbox.securityContext.seccompProfile.type");

	put(sc, "runAsNonRoot", json_object_new_boolean(1));
	put(sc, "runAsUser", json_object_new_int64(1000));
	put(sc, "fsGroup", json_object_new_int64(1000));
	jx_setv(sc, str(sp != NULL && sp[0] != '\0' ? sp : "RuntimeDefault"),
	        "seccompProfile", "type", NULL);
	return (sc);
}

static json_object *
containers(const struct agentrun_job_in *in, json_object *vols,
        struct pod_flags *pf)
{
	json_object *list = json_object_new_array();
	bool sandbox = false;

	json_object_array_add(list, agent_container(in));
	json_object_array_add(list, bridge_container(in));
	jx_get_bool(in->run, "spec.sandbox.enabled", &sandbox);
	if (sandbox) {
		json_object_array_add(list, sandbox_container(in));
	}
	if (has_mcp(in)) {
		json_object_array_add(list, mcp_container(in, false));
	}
	for (size_t i = 0; i < in->nsidecars; i++) {
		json_object_array_add(
		        list, sidecar_container(&in->sidecars[i], vols, pf));
	}
	return (list);
}

static json_object *
pod_spec(const struct agentrun_job_in *in)
{
	json_object *pod = json_object_new_object();
	json_object *vols = base_volumes(in);
	json_object *inits = init_containers(in);
	json_object *ips = jx_get(in->run, "spec.imagePullSecrets");
	json_object *ns = jx_get(in->run, "spec.model.nodeSelector");
	struct pod_flags pf = { false, false };

	put(pod, "restartPolicy", str("Never"));
	put(pod, "serviceAccountName", str("sympozium-agent"));
	if (ips != NULL) {
		put(pod, "imagePullSecrets", json_object_get(ips));
	}
	if (ns != NULL) {
		put(pod, "nodeSelector", json_object_get(ns));
	}
	put(pod, "securityContext", pod_security(in));
	if (json_object_array_length(inits) > 0) {
		put(pod, "initContainers", inits);
	} else {
		json_object_put(inits);
	}
	put(pod, "containers", containers(in, vols, &pf));
	put(pod, "volumes", vols);
	if (pf.host_network) {
		put(pod, "hostNetwork", json_object_new_boolean(1));
	}
	if (pf.host_pid) {
		put(pod, "hostPID", json_object_new_boolean(1));
	}
	put(pod, "dnsPolicy",
	        str(pf.host_network ? "ClusterFirstWithHostNet"
	                            : "ClusterFirst"));
	return (pod);
}

json_object *
agentrun_job_pod_spec(const struct agentrun_job_in *in)
{
	return (pod_spec(in));
}

static void
job_labels(const struct agentrun_job_in *in, json_object *o)
{
	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, run_name(in));
	kobj_set_label(
	        o, CONTRACT_LABEL_INSTANCE, spec_str(in, "instanceRef") ?: "");
	kobj_set_label(o, CONTRACT_LABEL_COMPONENT, "agent-run");
	kobj_set_label(o, CONTRACT_LABEL_K8S_PART_OF, "sympozium");
	kobj_set_label(
	        o, CONTRACT_LABEL_K8S_MANAGED_BY, "sympozium-controller");
}

json_object *
agentrun_job_build(const struct agentrun_job_in *in)
{
	json_object *job
	        = kobj_new("batch/v1", "Job", kobj_ns(in->run), run_name(in));
	json_object *spec = json_object_new_object();
	json_object *tmpl = json_object_new_object();

	job_labels(in, job);
	job_labels(in, tmpl);
	put(spec, "ttlSecondsAfterFinished", json_object_new_int64(300));
	put(spec, "activeDeadlineSeconds",
	        json_object_new_int64(
	                in->timeout_s > 0 ? in->timeout_s + 60 : 600));
	put(spec, "backoffLimit", json_object_new_int64(0));
	put(tmpl, "spec", pod_spec(in));
	put(spec, "template", tmpl);
	put(job, "spec", spec);
	return (job);
}
