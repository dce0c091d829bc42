/*
 * agentrun_server.c: the server-mode AgentRun (spec 1.4, 1.8; upstream
 * agentrun_controller.go reconcilePendingServer, ensureServerAPIKeySecret
 * and reconcileServing at 008266e).  A Pending run with spec.mode
 * "server" gets its input ConfigMap, the agent ServiceAccount, a
 * one-replica Deployment
 * <run>-server running the first requiresServer sidecar as container
 * "web-proxy", a Service <run>-server over the sidecar's ports, and phase
 * Serving.  A Serving run is checked every 30 s: it fails when its Deployment
 * is gone and never times out.  The skill RBAC of the sidecars is made as the
 * task path's.  The API key Secret <instance>-web-proxy-key is created
 * once, its key drawn here (key_secret()) unless the skill names one in
 * auth_secret_ref.  The instance's MCP servers get the ConfigMap
 * <run>-mcp-servers as in the task path.  The gateway's HTTPRoute
 * <run>-web is made with the Service, and retried while Serving, when
 * SympoziumConfig sympozium-system/default has a ready gateway
 * (maybe_route()).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/agentrun_mcp.h"
#include "workers/agentrun_server.h"
#include "workers/kobj.h"
#include "workers/view.h"
#include "workers/wtel.h"

#define SERVER_SA "sympozium-agent"

/* The server sidecar of the run: its pack's spec.sidecar (owned pack)
 * and the skill ref's params. */
struct server_sc {
	json_object *pack; /* owned */
	json_object *sidecar, *params;
};

static const char *
str_or(json_object *o, const char *path, const char *dflt)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL && s[0] != '\0' ? s : dflt);
}

static void
set_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void
now_str(const struct rec_in *in, json_object *status, const char *key)
{
	char ts[TIMEFMT_RFC3339_LEN];

	timefmt_rfc3339(in->now_ms / 1000, ts);
	set_str(status, key, ts);
}

static void
fail(const struct rec_in *in, json_object *status, const char *msg)
{
	set_str(status, "phase", "Failed");
	now_str(in, status, "completedAt");
	set_str(status, "error", msg);
}

/* view_get: 0 found, 1 missing, -1 error (error verdict set). */
static int
get(const struct rec_in *in, struct rec_out *out, const struct ipc_res *res,
        const char *ns, const char *name, json_object **obj)
{
	char err[256];
	int rc;

	*obj = NULL;
	rc = view_get(in->view, res, ns, name, obj, err, sizeof(err));
	if (rc < 0) {
		rec_verdict(out, IPC_V_ERROR, 0, "%s", err);
	}
	return (rc);
}

/* The run's skills, else (not a web-proxy child run) the instance's. */
static int
skills_of(const struct rec_in *in, struct rec_out *out, json_object **inst,
        json_object **skills)
{
	json_object *run = in->object;
	const char *src = kobj_label(run, CONTRACT_LABEL_SOURCE);
	const char *iname = jx_get_str(run, "spec.instanceRef");
	int rc = 1;

	*skills = jx_get(run, "spec.skills");
	*inst = NULL;
	if (iname != NULL && iname[0] != '\0') {
		rc = get(in, out, &kobj_instances, kobj_ns(run), iname, inst);
	}
	if (rc < 0) {
		return (-1);
	}
	if (jx_array_len(*skills) == 0
	        && (src == NULL || strcmp(src, "web-proxy") != 0)) {
		*skills = jx_get(*inst, "spec.skills");
	}
	return (0);
}

static void
rbac_meta(json_object *run, json_object *o, const char *pack)
{
	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, kobj_name(run));
	kobj_set_label(o, CONTRACT_LABEL_SKILL, pack);
	kobj_set_label(o, CONTRACT_LABEL_MANAGED_BY, "sympozium");
}

/* The skill's Role (or ClusterRole) sympozium-skill-<pack>-<run> with
 * rules and its binding to the agent ServiceAccount (spec 1.4 step 1,
 * as the task path's spec 1.3 steps 14, 15). */
static void
role_pair(json_object *run, struct rec_out *out, bool cluster,
        const char *pack, json_object *rules)
{
	const char *ns = cluster ? NULL : kobj_ns(run);
	char *name = xasprintf("sympozium-skill-%s-%s", pack, kobj_name(run));
	json_object *role = kobj_new("rbac.authorization.k8s.io/v1",
	        cluster ? "ClusterRole" : "Role", ns, name);
	json_object *bind = kobj_new("rbac.authorization.k8s.io/v1",
	        cluster ? "ClusterRoleBinding" : "RoleBinding", ns, name);
	json_object *subj = json_object_new_object();

	rbac_meta(run, role, pack);
	rbac_meta(run, bind, pack);
	if (!cluster) {
		kobj_set_owner(role, run);
		kobj_set_owner(bind, run);
	}
	json_object_object_add(role, "rules", json_object_get(rules));
	jx_setv(bind, json_object_new_string("rbac.authorization.k8s.io"),
	        "roleRef", "apiGroup", NULL);
	jx_setv(bind, json_object_new_string(cluster ? "ClusterRole" : "Role"),
	        "roleRef", "kind", NULL);
	jx_setv(bind, json_object_new_string(name), "roleRef", "name", NULL);
	set_str(subj, "kind", "ServiceAccount");
	set_str(subj, "name", SERVER_SA);
	set_str(subj, "namespace", kobj_ns(run));
	json_object_object_add(bind, "subjects", json_object_new_array());
	json_object_array_add(json_object_object_get(bind, "subjects"), subj);
	kobj_create(
	        out, cluster ? &kobj_clusterroles : &kobj_roles, role, true);
	kobj_create(out,
	        cluster ? &kobj_clusterrolebindings : &kobj_rolebindings, bind,
	        true);
	free(name);
}

/* The skill RBAC of a resolved sidecar (one with an image). */
static void
sidecar_rbac(json_object *run, struct rec_out *out, const char *pack,
        json_object *sc)
{
	json_object *r = json_object_object_get(sc, "rbac");
	json_object *cr = json_object_object_get(sc, "clusterRBAC");

	if (jx_array_len(r) > 0) {
		role_pair(run, out, false, pack, r);
	}
	if (jx_array_len(cr) > 0) {
		role_pair(run, out, true, pack, cr);
	}
}

/* The first skill whose pack's sidecar has an image and requiresServer
 * (upstream resolveSkillSidecars, then the first RequiresServer); the
 * skill RBAC of every sidecar with an image on the way when rbac
 * (ensureSkillRBAC, before the server sidecar is looked for, as
 * upstream). */
static int
find_server(const struct rec_in *in, struct rec_out *out, json_object *skills,
        bool rbac, struct server_sc *s)
{
	for (size_t i = 0; i < jx_array_len(skills); i++) {
		json_object *ref = json_object_array_get_idx(skills, i), *p;
		const char *n = jx_get_str(ref, "skillPackRef");
		bool server = false;
		int rc;
		if (n == NULL || n[0] == '\0') {
			continue;
		}
		n = strncmp(n, "skillpack-", 10) == 0 ? n + 10 : n;
		rc = get(
		        in, out, &kobj_skillpacks, kobj_ns(in->object), n, &p);
		if (rc == 1) {
			rc = get(in, out, &kobj_skillpacks, KOBJ_SYSTEM_NS, n,
			        &p);
		}
		if (rc < 0) {
			return (-1);
		}
		if (rc == 0 && rbac
		        && str_or(p, "spec.sidecar.image", NULL) != NULL) {
			sidecar_rbac(
			        in->object, out, n, jx_get(p, "spec.sidecar"));
		}
		jx_get_bool(p, "spec.sidecar.requiresServer", &server);
		if (rc == 0 && server && s->pack == NULL
		        && str_or(p, "spec.sidecar.image", NULL) != NULL) {
			*s = (struct server_sc) { p, jx_get(p, "spec.sidecar"),
				jx_get(ref, "params") };
			continue;
		}
		json_object_put(p);
	}
	return (s->pack != NULL ? 0 : 1);
}

static json_object *
owned(json_object *run, const char *api, const char *kind, const char *name)
{
	json_object *o = kobj_new(api, kind, kobj_ns(run), name);

	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, kobj_name(run));
	kobj_set_owner(o, run);
	return (o);
}

static const char *
param(struct server_sc *s, const char *key)
{
	json_object *v = json_object_object_get(s->params, key);

	return (json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : NULL);
}

/* The API key Secret's name (upstream ensureServerAPIKeySecret): the
 * skill's auth_secret_ref (*ours false), else <instance>-web-proxy-key
 * (*ours true: the reconciler makes it when missing). */
static char *
api_key_secret(json_object *run, struct server_sc *s, bool *ours)
{
	const char *ref = param(s, "auth_secret_ref");

	*ours = ref == NULL || ref[0] == '\0';
	if (!*ours) {
		return (xstrdup(ref));
	}
	return (xasprintf("%s%s", str_or(run, "spec.instanceRef", ""),
	        CONTRACT_WEB_PROXY_KEY_SUFFIX));
}

/* "sk-" and the hex of CONTRACT_WEB_PROXY_KEY_BYTES bytes from
 * getrandom(2) (upstream: crypto/rand, hex), or NULL. */
static char *
random_key(void)
{
	unsigned char b[CONTRACT_WEB_PROXY_KEY_BYTES];
	char *key = xmalloc(3 + 2 * sizeof(b) + 1);
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n <= 0 && errno != EINTR) {
			free(key);
			return (NULL);
		}
		got += n > 0 ? (size_t)n : 0;
	}
	memcpy(key, "sk-", 3);
	for (size_t i = 0; i < sizeof(b); i++) {
		snprintf(key + 3 + 2 * i, 3, "%02x", b[i]);
	}
	explicit_bzero(b, sizeof(b));
	return (key);
}

/* Whether name is a DNS-1123 subdomain (the write policy's name rule:
 * a name it refuses would be a violation, not an API error). */
static bool
subdomain(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 253) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i], prev = i > 0 ? name[i - 1] : '.';
		char next = i + 1 < n ? name[i + 1] : '.';
		bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!an && c != '-' && c != '.') {
			return (false);
		}
		if (!an && (prev == '.' || next == '.')) {
			return (false); /* a part must start and end alnum */
		}
	}
	return (true);
}

/* The Secret name with stringData api-key, labelled component=web-proxy
 * and instance as upstream, plus the run's child label; controlled by
 * the run.  Created once: a pass that finds it (metadata view) sends
 * nothing, and a create that meets one tolerates AlreadyExists, so an
 * existing key is never rewritten.  0 done, -1 error (verdict set). */
static int
key_secret(const struct rec_in *in, struct rec_out *out, const char *name)
{
	json_object *run = in->object, *meta = NULL, *sec, *sd;
	char err[256], *key;
	int rc;

	if (!subdomain(name)) {
		rec_verdict(out, IPC_V_ERROR, 0,
		        "spec.instanceRef gives no valid Secret name for the "
		        "web-proxy key");
		return (-1);
	}
	rc = view_secret_meta(
	        in->view, kobj_ns(run), name, &meta, err, sizeof(err));
	json_object_put(meta);
	if (rc <= 0) {
		if (rc < 0) {
			rec_verdict(out, IPC_V_ERROR, 0, "%s", err);
		}
		return (rc);
	}
	if ((key = random_key()) == NULL) {
		rec_verdict(out, IPC_V_ERROR, 0, "getrandom failed");
		return (-1);
	}
	sec = owned(run, "v1", "Secret", name);
	kobj_set_label(sec, CONTRACT_LABEL_COMPONENT, "web-proxy");
	kobj_set_label(sec, CONTRACT_LABEL_INSTANCE,
	        str_or(run, "spec.instanceRef", ""));
	sd = json_object_new_object();
	set_str(sd, CONTRACT_WEB_PROXY_KEY_DATA, key);
	json_object_object_add(sec, "stringData", sd);
	kobj_create(out, &kobj_secrets, sec, true);
	explicit_bzero(key, strlen(key));
	free(key);
	return (0);
}

static json_object *
env_var(const char *name, const char *value)
{
	json_object *e = json_object_new_object();

	set_str(e, "name", name);
	if (value != NULL) {
		set_str(e, "value", value);
	}
	return (e);
}

/* The web-proxy's env: the sidecar's, INSTANCE_NAME, WEB_PROXY_API_KEY
 * from the Secret, RATE_LIMIT_*, SKILL_<PARAM>. */
static json_object *
server_env(json_object *run, struct server_sc *s, const char *secret)
{
	json_object *env = json_object_new_array(), *e;
	json_object *own = json_object_object_get(s->sidecar, "env");

	for (size_t i = 0; i < jx_array_len(own); i++) {
		json_object *v = json_object_array_get_idx(own, i);
		json_object_array_add(env,
		        env_var(str_or(v, "name", ""),
		                str_or(v, "value", "")));
	}
	json_object_array_add(env,
	        env_var("INSTANCE_NAME", str_or(run, "spec.instanceRef", "")));
	e = env_var("WEB_PROXY_API_KEY", NULL);
	jx_setv(e, json_object_new_string(secret), "valueFrom", "secretKeyRef",
	        "name", NULL);
	jx_setv(e, json_object_new_string("api-key"), "valueFrom",
	        "secretKeyRef", "key", NULL);
	json_object_array_add(env, e);
	if (param(s, "rate_limit_rpm") != NULL) {
		json_object_array_add(env,
		        env_var("RATE_LIMIT_RPM", param(s, "rate_limit_rpm")));
	}
	if (param(s, "rate_limit_burst") != NULL) {
		json_object_array_add(env,
		        env_var("RATE_LIMIT_BURST",
		                param(s, "rate_limit_burst")));
	}
	if (json_object_is_type(s->params, json_type_object)) {
		json_object_object_foreach(s->params, k, v)
		{
			char *n = xasprintf("SKILL_%s", k);
			for (char *p = n; *p != '\0'; p++) {
				*p = (char)toupper((unsigned char)*p);
			}
			json_object_array_add(
			        env, env_var(n, json_object_get_string(v)));
			free(n);
		}
	}
	return (env);
}

/* Container ports (svc false) or Service ports (svc true). */
static json_object *
ports(struct server_sc *s, bool svc)
{
	json_object *in = json_object_object_get(s->sidecar, "ports");
	json_object *outp = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(in); i++) {
		json_object *p = json_object_array_get_idx(in, i);
		json_object *o = json_object_new_object();
		int64_t port = 0;
		jx_get_int(p, "containerPort", &port);
		if (jx_get_str(p, "name") != NULL) {
			set_str(o, "name", jx_get_str(p, "name"));
		}
		json_object_object_add(o, svc ? "port" : "containerPort",
		        json_object_new_int64(port));
		if (svc) {
			json_object_object_add(
			        o, "targetPort", json_object_new_int64(port));
		}
		set_str(o, "protocol", str_or(p, "protocol", "TCP"));
		json_object_array_add(outp, o);
	}
	return (outp);
}

static json_object *
probe(int64_t delay, int64_t period)
{
	json_object *p = json_object_new_object();

	jx_setv(p, json_object_new_string("/healthz"), "httpGet", "path",
	        NULL);
	jx_setv(p, json_object_new_int64(8080), "httpGet", "port", NULL);
	json_object_object_add(
	        p, "initialDelaySeconds", json_object_new_int64(delay));
	json_object_object_add(
	        p, "periodSeconds", json_object_new_int64(period));
	return (p);
}

static json_object *
labels(json_object *run)
{
	json_object *l = json_object_new_object();

	set_str(l, CONTRACT_LABEL_AGENT_RUN, kobj_name(run));
	set_str(l, CONTRACT_LABEL_INSTANCE,
	        str_or(run, "spec.instanceRef", ""));
	set_str(l, CONTRACT_LABEL_COMPONENT, "agent-server");
	set_str(l, CONTRACT_LABEL_K8S_PART_OF, "sympozium");
	set_str(l, CONTRACT_LABEL_K8S_MANAGED_BY, "sympozium-controller");
	return (l);
}

static json_object *
container(json_object *run, struct server_sc *s, const char *secret)
{
	json_object *c = json_object_new_object();
	json_object *sc = json_object_new_object();

	set_str(c, "name", "web-proxy");
	set_str(c, "image", str_or(s->sidecar, "image", ""));
	set_str(c, "imagePullPolicy", /* later upstream fix #167 */
	        kobj_pull_policy(jx_get_str(s->sidecar, "imagePullPolicy"))
	                ?: "IfNotPresent");
	json_object_object_add(c, "env", server_env(run, s, secret));
	json_object_object_add(c, "ports", ports(s, false));
	json_object_object_add(c, "livenessProbe", probe(5, 10));
	json_object_object_add(c, "readinessProbe", probe(3, 5));
	jx_setv(c,
	        json_object_new_string(
	                str_or(s->sidecar, "resources.cpu", "100m")),
	        "resources", "requests", "cpu", NULL);
	jx_setv(c,
	        json_object_new_string(
	                str_or(s->sidecar, "resources.memory", "128Mi")),
	        "resources", "requests", "memory", NULL);
	jx_setv(c, json_object_new_string("500m"), "resources", "limits",
	        "cpu", NULL);
	jx_setv(c, json_object_new_string("256Mi"), "resources", "limits",
	        "memory", NULL);
	json_object_object_add(sc, "runAsNonRoot", json_object_new_boolean(1));
	json_object_object_add(
	        sc, "readOnlyRootFilesystem", json_object_new_boolean(1));
	json_object_object_add(
	        sc, "allowPrivilegeEscalation", json_object_new_boolean(0));
	json_object_object_add(c, "securityContext", sc);
	return (c);
}

static json_object *
deployment(json_object *run, struct server_sc *s, const char *name,
        const char *secret)
{
	json_object *d = owned(run, "apps/v1", "Deployment", name);
	json_object *spec = json_object_new_object();
	json_object *pod = json_object_new_object();
	json_object *cs = json_object_new_array();
	json_object *v;

	jx_setv(d, labels(run), "metadata", "labels", NULL);
	json_object_object_add(spec, "replicas", json_object_new_int64(1));
	jx_setv(spec, labels(run), "selector", "matchLabels", NULL);
	jx_setv(spec, labels(run), "template", "metadata", "labels", NULL);
	set_str(pod, "restartPolicy", "Always");
	set_str(pod, "serviceAccountName", SERVER_SA);
	if ((v = jx_get(run, "spec.imagePullSecrets")) != NULL) {
		json_object_object_add(
		        pod, "imagePullSecrets", json_object_get(v));
	}
	if ((v = jx_get(run, "spec.model.nodeSelector")) != NULL) {
		json_object_object_add(
		        pod, "nodeSelector", json_object_get(v));
	}
	json_object_array_add(cs, container(run, s, secret));
	json_object_object_add(pod, "containers", cs);
	jx_setv(spec, pod, "template", "spec", NULL);
	json_object_object_add(d, "spec", spec);
	return (d);
}

static json_object *
service(json_object *run, struct server_sc *s, const char *name)
{
	json_object *svc = owned(run, "v1", "Service", name);

	jx_setv(svc, labels(run), "metadata", "labels", NULL);
	jx_setv(svc, labels(run), "spec", "selector", NULL);
	jx_setv(svc, ports(s, true), "spec", "ports", NULL);
	return (svc);
}

/* The input ConfigMap <run>-input (upstream createInputConfigMap, run
 * before the server branch of reconcilePending). */
static void
input_cm(json_object *run, struct rec_out *out)
{
	char *name = xasprintf("%s-input", kobj_name(run));
	json_object *cm = owned(run, "v1", "ConfigMap", name);
	json_object *data = json_object_new_object();

	set_str(data, "task", str_or(run, "spec.task", ""));
	set_str(data, "system-prompt", str_or(run, "spec.systemPrompt", ""));
	set_str(data, "agent-id", str_or(run, "spec.agentId", ""));
	set_str(data, "session-key", str_or(run, "spec.sessionKey", ""));
	json_object_object_add(cm, "data", data);
	kobj_create(out, &kobj_configmaps, cm, true);
	free(name);
}

/* The MCPServer named by an instance entry without a url (run namespace,
 * then sympozium-system; upstream resolveMCPServerURLs), or none. */
static int
mcp_server(const struct rec_in *in, struct rec_out *out, json_object *entry,
        json_object **srv)
{
	const char *name = jx_get_str(entry, "name");
	const char *url = jx_get_str(entry, "url");
	int rc;

	*srv = NULL;
	if ((url != NULL && url[0] != '\0') || name == NULL
	        || name[0] == '\0') {
		return (0);
	}
	rc = get(in, out, &kobj_mcpservers, kobj_ns(in->object), name, srv);
	if (rc == 1) {
		rc = get(in, out, &kobj_mcpservers, KOBJ_SYSTEM_NS, name, srv);
	}
	return (rc < 0 ? -1 : 0);
}

/* The MCP ConfigMap <run>-mcp-servers of the instance's reachable MCP
 * servers (upstream reconcilePending's ensureMCPConfigMap, before the
 * server branch; as the task path's mcp_config() in agentrun.c).
 * Returns -1 on a view error. */
static int
mcp_cm(const struct rec_in *in, struct rec_out *out, json_object *inst)
{
	json_object *run = in->object, *list = jx_get(inst, "spec.mcpServers");
	json_object *servers = json_object_new_array(), *srv, *r, *cm;
	char *name, *yaml;

	for (size_t i = 0; i < jx_array_len(list); i++) {
		json_object *e = json_object_array_get_idx(list, i);
		if (mcp_server(in, out, e, &srv) != 0) {
			json_object_put(servers);
			return (-1);
		}
		if ((r = agentrun_mcp_resolve(e, srv)) != NULL) {
			json_object_array_add(servers, r);
		}
		json_object_put(srv);
	}
	if (json_object_array_length(servers) > 0) {
		name = xasprintf("%s-mcp-servers", kobj_name(run));
		cm = owned(run, "v1", "ConfigMap", name);
		kobj_set_label(cm, CONTRACT_LABEL_INSTANCE,
		        str_or(run, "spec.instanceRef", ""));
		kobj_set_label(cm, CONTRACT_LABEL_COMPONENT, "mcp-config");
		yaml = agentrun_mcp_yaml(servers);
		jx_setv(cm, json_object_new_string(yaml), "data",
		        AGENTRUN_MCP_KEY, NULL);
		kobj_create(out, &kobj_configmaps, cm, true);
		free(yaml);
		free(name);
	}
	json_object_put(servers);
	return (0);
}

/* The HTTPRoute <run>-web to the Service svc on port 8080 through the
 * gateway gw in the system namespace (spec 1.4 step 6). */
static json_object *
route(json_object *run, const char *host, const char *gw, const char *svc)
{
	char *name = xasprintf("%s-web", kobj_name(run));
	json_object *r = owned(
	        run, "gateway.networking.k8s.io/v1", "HTTPRoute", name);
	json_object *parent = json_object_new_object();
	json_object *backend = json_object_new_object();
	json_object *rule = json_object_new_object();

	kobj_set_label(r, CONTRACT_LABEL_INSTANCE,
	        str_or(run, "spec.instanceRef", ""));
	kobj_set_label(r, CONTRACT_LABEL_COMPONENT, "agent-server");
	set_str(parent, "name", gw);
	set_str(parent, "namespace", KOBJ_SYSTEM_NS);
	set_str(backend, "name", svc);
	json_object_object_add(backend, "port", json_object_new_int(8080));
	jx_setv(rule, json_object_new_array(), "backendRefs", NULL);
	json_object_array_add(jx_get(rule, "backendRefs"), backend);
	jx_setv(r, json_object_new_array(), "spec", "parentRefs", NULL);
	json_object_array_add(jx_get(r, "spec.parentRefs"), parent);
	jx_setv(r, json_object_new_array(), "spec", "hostnames", NULL);
	json_object_array_add(
	        jx_get(r, "spec.hostnames"), json_object_new_string(host));
	jx_setv(r, json_object_new_array(), "spec", "rules", NULL);
	json_object_array_add(jx_get(r, "spec.rules"), rule);
	free(name);
	return (r);
}

/* The route's hostname: the skill's hostname param, else
 * <instanceRef>.<baseDomain>; NULL when neither (caller frees). */
static char *
route_host(json_object *run, struct server_sc *s, json_object *cfg)
{
	const char *h = param(s, "hostname");
	const char *dom = jx_get_str(cfg, "spec.gateway.baseDomain");

	if (h != NULL && h[0] != '\0') {
		return (xstrdup(h));
	}
	if (dom == NULL || dom[0] == '\0') {
		return (NULL);
	}
	return (xasprintf("%s.%s", str_or(run, "spec.instanceRef", ""), dom));
}

/* Why the route is not made with the SympoziumConfig cfg (NULL: it
 * is made); logged by the caller. */
static const char *
route_skip(json_object *cfg)
{
	bool on = false, ready = false;

	if (cfg == NULL) {
		return ("SympoziumConfig not found");
	}
	jx_get_bool(cfg, "spec.gateway.enabled", &on);
	if (!on) {
		return ("gateway not enabled");
	}
	jx_get_bool(cfg, "status.gateway.ready", &ready);
	return (ready ? NULL : "gateway not ready");
}

/* upstream's sympozium.web_endpoint.gateway_not_ready (an enabled
 * gateway not ready) and .route_created counters */
static void
route_telemetry(struct rec_out *out, json_object *run, const char *why)
{
	const char *inst = str_or(run, "spec.instanceRef", "");

	if (why == NULL) {
		wtel_count(out, "sympozium.web_endpoint.route_created", 1,
		        "sympozium.instance", inst, NULL, NULL);
	} else if (strcmp(why, "gateway not ready") == 0) {
		wtel_count(out, "sympozium.web_endpoint.gateway_not_ready", 1,
		        "sympozium.instance", inst, NULL, NULL);
	}
}

/* maybeCreateHTTPRoute (spec 1.4 step 6, 1.8): the route <run>-web when
 * SympoziumConfig sympozium-system/default enables a ready gateway and
 * a hostname is known; left untouched once it exists (a child in the
 * cache), created tolerating AlreadyExists otherwise.  Every reason to
 * skip, a view error included, only logs: a Serving run comes back in
 * 30 s. */
static void
maybe_route(const struct rec_in *in, struct rec_out *out, struct server_sc *s,
        const char *svc)
{
	json_object *run = in->object, *cfg = NULL;
	char *wname = xasprintf("%s-web", kobj_name(run)), *host = NULL;
	const char *why;
	char err[256];

	if (kobj_child(in->children, "HTTPRoute", wname) != NULL) {
		free(wname);
		return;
	}
	if (view_get(in->view, &kobj_configs, KOBJ_SYSTEM_NS,
	            CONTRACT_CONFIG_NAME, &cfg, err, sizeof(err))
	        < 0) {
		why = err;
	} else if ((why = route_skip(cfg)) == NULL
	        && (host = route_host(run, s, cfg)) == NULL) {
		why = "no hostname available";
	}
	if (why != NULL) {
		log_debug("agentrun %s/%s: no HTTPRoute %s: %s", kobj_ns(run),
		        kobj_name(run), wname, why);
	} else {
		kobj_create(out, &kobj_httproutes,
		        route(run, host,
		                str_or(cfg, "spec.gateway.name",
		                        "sympozium-gateway"),
		                svc),
		        true);
	}
	route_telemetry(out, run, why);
	json_object_put(cfg);
	free(host);
	free(wname);
}

/* The writes once the server sidecar is known. */
static int
build(const struct rec_in *in, struct rec_out *out, json_object *status,
        struct server_sc *s)
{
	json_object *run = in->object;
	json_object *sa
	        = kobj_new("v1", "ServiceAccount", kobj_ns(run), SERVER_SA);
	bool ours = false;
	char *secret = api_key_secret(run, s, &ours);
	char *name = xasprintf("%s-server", kobj_name(run));

	kobj_set_label(sa, CONTRACT_LABEL_K8S_MANAGED_BY, "sympozium");
	kobj_create(out, &kobj_serviceaccounts, sa, true);
	if (ours && key_secret(in, out, secret) < 0) {
		free(secret);
		free(name);
		return (-1);
	}
	kobj_create(out, &kobj_deployments, deployment(run, s, name, secret),
	        true);
	kobj_create(out, &kobj_services, service(run, s, name), true);
	maybe_route(in, out, s, name);
	set_str(status, "phase", "Serving");
	set_str(status, "deploymentName", name);
	set_str(status, "serviceName", name);
	now_str(in, status, "startedAt");
	rec_verdict(out, IPC_V_REQUEUE_AFTER, AGENTRUN_SERVER_POLL_MS, NULL);
	free(secret);
	free(name);
	return (2);
}

int
agentrun_server_pending(
        const struct rec_in *in, struct rec_out *out, json_object *status)
{
	json_object *inst = NULL, *skills = NULL;
	struct server_sc s = { 0 };
	int rc;

	input_cm(in->object, out);
	rc = skills_of(in, out, &inst, &skills);
	if (rc == 0) {
		rc = mcp_cm(in, out, inst);
	}
	if (rc == 0) {
		rc = find_server(in, out, skills, true, &s);
	}
	if (rc == 1) {
		fail(in, status, "no sidecar with requiresServer=true found");
	} else if (rc == 0) {
		rc = build(in, out, status, &s);
	}
	json_object_put(s.pack);
	json_object_put(inst);
	return (rc);
}

/* reconcileServing's retry of the route: the server sidecar of the run's
 * own spec.skills (upstream resolveSkillSidecars; the instance's skills
 * were used in memory only at Pending), no skill RBAC written.  A view
 * error only logs: the run comes back in 30 s. */
static void
serving_route(
        const struct rec_in *in, struct rec_out *out, json_object *status)
{
	const char *svc = jx_get_str(status, "serviceName");
	struct server_sc s = { 0 };
	struct rec_out scratch = { 0 }; /* a view error's verdict; no
	                                 * writes without rbac */

	if (svc == NULL || svc[0] == '\0') {
		return;
	}
	if (find_server(
	            in, &scratch, jx_get(in->object, "spec.skills"), false, &s)
	        == 0) {
		maybe_route(in, out, &s, svc);
	} else if (scratch.verdict == IPC_V_ERROR) {
		log_debug("agentrun %s/%s: HTTPRoute retry: %s",
		        kobj_ns(in->object), kobj_name(in->object),
		        scratch.message);
	}
	json_object_put(s.pack);
}

void
agentrun_server_serving(
        const struct rec_in *in, struct rec_out *out, json_object *status)
{
	const char *d = jx_get_str(status, "deploymentName");

	if (d != NULL && d[0] != '\0'
	        && kobj_child(in->children, "Deployment", d) == NULL) {
		if (in->children_stale) {
			rec_verdict(out, IPC_V_REQUEUE_AFTER,
			        AGENTRUN_SERVER_STALE_MS,
			        "deployment %s not in the cache, which may "
			        "lag "
			        "the server",
			        d);
			return;
		}
		fail(in, status, "server Deployment not found");
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	serving_route(in, out, status);
	rec_verdict(out, IPC_V_REQUEUE_AFTER, AGENTRUN_SERVER_POLL_MS, NULL);
}
