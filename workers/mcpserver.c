/*
 * mcpserver.c: the MCPServer reconciler (spec sympozium-controllers.md
 * section 6).  Owns, for a managed server, the Deployment and the Service
 * named like the MCPServer (create-or-update: fields we own are rewritten
 * on a copy of the live object, and the copy is written only when it
 * differs), and the MCPServer's status (ready, url, toolCount and the
 * Deployed and Ready conditions).  An external server (spec.url) only gets
 * status.  A spec that cannot be deployed gets Ready=False with a reason.
 * A suspended one (spec.suspended, later upstream fix #195) has its
 * Deployment scaled to zero and the Suspended condition.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/kobj.h"
#include "workers/mcpserver.h"
#include "workers/view.h"

#define API_VERSION  "sympozium.ai/v1alpha1"
#define KIND         "MCPServer"
#define STDIO_PORT   8080
#define DEFAULT_PORT 8080
#define ADAPTER_VOL  "adapter-bin"
#define ADAPTER_DIR  "/adapter"
#define BRIDGE_BIN   "/usr/local/bin/mcp-bridge"

/* What one reconcile works from (borrowed from in->object). */
struct mcp {
	json_object *obj;
	const char *name, *ns;
	json_object *dep; /* spec.deployment */
	bool stdio;
	int64_t port; /* the Service's and the url's port */
	int64_t gen;
};

/* ---- small JSON builders ---- */

static json_object *
str(const char *s)
{
	return (json_object_new_string(s != NULL ? s : ""));
}

static json_object *
parse(const char *text)
{
	json_object *o = json_tokener_parse(text);

	if (o == NULL) {
		fatalx("mcpserver: bad built-in JSON %s", text);
	}
	return (o);
}

static json_object *
env_value(const char *name, const char *value)
{
	json_object *e = json_object_new_object();

	json_object_object_add(e, "name", str(name));
	json_object_object_add(e, "value", str(value));
	return (e);
}

static bool
is_array(json_object *a)
{
	return (a != NULL && json_object_is_type(a, json_type_array));
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* The keys of object o, sorted (borrowed strings; caller frees the
 * array). */
static const char **
sorted_keys(json_object *o, size_t *n)
{
	const char **keys;

	*n = 0;
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		return (NULL);
	}
	keys = xcalloc(
	        (size_t)json_object_object_length(o) + 1, sizeof(*keys));
	json_object_object_foreach(o, k, v)
	{
		(void)v;
		keys[(*n)++] = k;
	}
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return (keys);
}

/* The strings of array a, sorted (borrowed; caller frees the array). */
static const char **
sorted_strings(json_object *a, size_t *n)
{
	const char **s = xcalloc(jx_array_len(a) + 1, sizeof(*s));

	*n = 0;
	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (e != NULL && json_object_is_type(e, json_type_string)) {
			s[(*n)++] = json_object_get_string(e);
		}
	}
	qsort(s, *n, sizeof(*s), cmp_str);
	return (s);
}

/* The pod labels (and Deployment selector), spec 6.2 step 4. */
static json_object *
pod_labels(const char *name)
{
	json_object *l = json_object_new_object();

	json_object_object_add(l, CONTRACT_LABEL_K8S_NAME, str("mcpserver"));
	json_object_object_add(l, CONTRACT_LABEL_K8S_INSTANCE, str(name));
	json_object_object_add(
	        l, CONTRACT_LABEL_K8S_MANAGED_BY, str("sympozium"));
	return (l);
}

/* ---- reading the spec ---- */

/* Fills m; returns NULL, or why the spec cannot be deployed (static). */
/* spec.deployment.<key> (later upstream fix #198): absent, or an array
 * of objects each with a name; NULL when fine, else why not. */
static const char *
bad_named_list(json_object *dep, const char *key, bool stdio)
{
	json_object *a = jx_get(dep, key);

	if (a == NULL) {
		return (NULL);
	}
	if (!is_array(a)) {
		return (strcmp(key, "volumes") == 0
		                ? "spec.deployment.volumes must be a list"
		                : "spec.deployment.volumeMounts must be a "
		                  "list");
	}
	for (size_t i = 0; i < jx_array_len(a); i++) {
		const char *n
		        = jx_get_str(json_object_array_get_idx(a, i), "name");
		if (n == NULL || n[0] == '\0') {
			return (strcmp(key, "volumes") == 0
			                ? "spec.deployment.volumes: every "
			                  "entry "
			                  "needs a name"
			                : "spec.deployment.volumeMounts: "
			                  "every "
			                  "entry needs a name");
		}
		if (stdio && strcmp(n, ADAPTER_VOL) == 0) {
			return (strcmp(key, "volumes") == 0
			                ? "spec.deployment.volumes: name "
			                  "\"" ADAPTER_VOL
			                  "\" is reserved for "
			                  "stdio transports"
			                : "spec.deployment.volumeMounts: name "
			                  "\"" ADAPTER_VOL
			                  "\" is reserved for "
			                  "stdio transports");
		}
	}
	return (NULL);
}

/* Appends copies of the items of extra (an array, or absent) to arr. */
static void
append_copies(json_object *arr, json_object *extra)
{
	for (size_t i = 0; is_array(extra) && i < jx_array_len(extra); i++) {
		json_object_array_add(
		        arr, jx_copy(json_object_array_get_idx(extra, i)));
	}
}

static const char *
read_spec(json_object *obj, struct mcp *m)
{
	const char *tt = jx_get_str(obj, "spec.transportType");
	const char *image, *why;
	int64_t replicas = 0;

	*m = (struct mcp) { .obj = obj,
		.name = kobj_name(obj),
		.ns = kobj_ns(obj),
		.dep = jx_get(obj, "spec.deployment"),
		.port = DEFAULT_PORT };
	jx_get_int(obj, "metadata.generation", &m->gen);
	if (m->dep == NULL || !json_object_is_type(m->dep, json_type_object)) {
		m->dep = NULL;
		return ("spec.deployment is required when spec.url is empty");
	}
	if (tt == NULL
	        || (strcmp(tt, "stdio") != 0 && strcmp(tt, "http") != 0)) {
		return ("spec.transportType must be \"stdio\" or \"http\"");
	}
	image = jx_get_str(m->dep, "image");
	if (image == NULL || image[0] == '\0') {
		return ("spec.deployment.image is required");
	}
	if (jx_get_int(obj, "spec.replicas", &replicas) == 0 && replicas < 0) {
		/* the schema takes any int32; the Deployment would be refused
		 */
		return ("spec.replicas must not be negative");
	}
	m->stdio = strcmp(tt, "stdio") == 0;
	if ((why = bad_named_list(m->dep, "volumes", m->stdio)) != NULL
	        || (why = bad_named_list(m->dep, "volumeMounts", m->stdio))
	                != NULL) {
		return (why);
	}
	if (!m->stdio && jx_get_int(m->dep, "port", &m->port) == 0
	        && (m->port < 1 || m->port > 65535)) {
		return ("spec.deployment.port must be between 1 and 65535");
	}
	if (m->stdio || jx_get(m->dep, "port") == NULL) {
		m->port = m->stdio ? STDIO_PORT : DEFAULT_PORT;
	}
	return (NULL);
}

/* ---- stdio: env from the spec and from the Secrets ---- */

/* Appends STDIO_ENV_<key> secretKeyRefs for every key of Secret sname.
 * Returns -1 (err set) when the Secret cannot be read; a missing one is
 * skipped with a log line, as upstream does. */
static int
secret_env(const struct rec_in *in, const struct mcp *m, const char *sname,
        json_object *env, char *err, size_t errlen)
{
	json_object *meta = NULL;
	const char **keys;
	size_t n;
	int rc;

	if (in->view == NULL) {
		snprintf(err, errlen, "no view to read Secret %s", sname);
		return (-1);
	}
	rc = view_secret_meta(in->view, m->ns, sname, &meta, err, errlen);
	if (rc == 1) {
		log_warnx("mcpserver %s/%s: Secret %s not found, skipped",
		        m->ns, m->name, sname);
		return (0);
	}
	if (rc != 0) {
		return (-1);
	}
	keys = sorted_strings(jx_get(meta, "keys"), &n);
	for (size_t i = 0; i < n; i++) {
		char *name = xasprintf("STDIO_ENV_%s", keys[i]);
		json_object *e = json_object_new_object();
		json_object *ref = json_object_new_object();
		json_object_object_add(ref, "name", str(sname));
		json_object_object_add(ref, "key", str(keys[i]));
		json_object_object_add(e, "name", str(name));
		jx_setv(e, ref, "valueFrom", "secretKeyRef", NULL);
		json_object_array_add(env, e);
		free(name);
	}
	free(keys);
	json_object_put(meta);
	return (0);
}

static char *
join_args(json_object *args)
{
	struct buf b;

	buf_init(&b);
	buf_puts(&b, "");
	for (size_t i = 0; i < jx_array_len(args); i++) {
		if (i > 0) {
			buf_putc(&b, ',');
		}
		buf_puts(&b,
		        json_object_get_string(
		                json_object_array_get_idx(args, i))
		                ?: "");
	}
	return (buf_detach(&b, NULL));
}

/* spec 6.2 step 4, the stdio container's env (caller puts), or NULL with
 * err set. */
static json_object *
stdio_env(
        const struct rec_in *in, const struct mcp *m, char *err, size_t errlen)
{
	json_object *env = json_object_new_array(), *map, *refs;
	char *args = join_args(jx_get(m->dep, "args"));
	const char **keys;
	size_t n;

	json_object_array_add(env, env_value("MCP_STDIO_ADAPTER", "true"));
	json_object_array_add(
	        env, env_value("STDIO_CMD", jx_get_str(m->dep, "cmd")));
	json_object_array_add(env, env_value("STDIO_ARGS", args));
	json_object_array_add(env, env_value("STDIO_SERVER_NAME", m->name));
	json_object_array_add(env, env_value("STDIO_PORT", "8080"));
	free(args);
	map = jx_get(m->dep, "env");
	keys = sorted_keys(map, &n);
	for (size_t i = 0; i < n; i++) {
		char *name = xasprintf("STDIO_ENV_%s", keys[i]);
		json_object_array_add(env,
		        env_value(name,
		                json_object_get_string(json_object_object_get(
		                        map, keys[i]))));
		free(name);
	}
	free(keys);
	refs = jx_get(m->dep, "secretRefs");
	for (size_t i = 0; i < jx_array_len(refs); i++) {
		const char *s = jx_get_str(
		        json_object_array_get_idx(refs, i), "name");
		if (s != NULL && s[0] != '\0'
		        && secret_env(in, m, s, env, err, errlen) != 0) {
			json_object_put(env);
			return (NULL);
		}
	}
	return (env);
}

/* ---- the pod template ---- */

static json_object *
resources(const struct mcp *m)
{
	json_object *r = jx_get(m->dep, "resources");

	if (r == NULL || !json_object_is_type(r, json_type_object)) {
		return (json_object_new_object());
	}
	return (jx_copy(r));
}

static void
set_sa(json_object *pod, const struct mcp *m)
{
	const char *sa = jx_get_str(m->dep, "serviceAccountName");

	if (sa != NULL && sa[0] != '\0') {
		json_object_object_add(pod, "serviceAccountName", str(sa));
	} else {
		json_object_object_del(pod, "serviceAccountName");
	}
}

static char *
bridge_image(void)
{
	char img[512];

	kobj_image(img, sizeof(img), getenv("SYMPOZIUM_IMAGE_REGISTRY"),
	        "mcp-bridge", getenv("SYMPOZIUM_IMAGE_TAG"));
	return (xstrdup(img));
}

/* imagePullPolicy of the mcp-server container: spec.deployment's when it
 * is a valid one (later upstream fix #167); otherwise none, as at 008266e
 * (the API server's default). */
static void
pull_policy(json_object *c, const struct mcp *m)
{
	const char *p
	        = kobj_pull_policy(jx_get_str(m->dep, "imagePullPolicy"));

	if (p != NULL) {
		json_object_object_add(c, "imagePullPolicy", str(p));
	}
}

/* The stdio pod: the adapter copied in by an init container, the server
 * image run under it.  env taken. */
static void
stdio_pod(json_object *pod, const struct mcp *m, json_object *env)
{
	char *img = bridge_image();
	json_object *init = json_object_new_object();
	json_object *c = json_object_new_object();
	json_object *mounts = parse("[{\"name\":\"" ADAPTER_VOL
	                            "\",\"mountPath\":\"" ADAPTER_DIR "\"}]");
	json_object *arr;

	json_object_object_add(init, "name", str("inject-adapter"));
	json_object_object_add(init, "image", str(img));
	json_object_object_add(init, "command",
	        parse("[\"cp\",\"" BRIDGE_BIN "\",\"" ADAPTER_DIR
	              "/mcp-bridge\"]"));
	json_object_object_add(init, "volumeMounts", jx_copy(mounts));
	free(img);
	json_object_object_add(c, "name", str("mcp-server"));
	json_object_object_add(c, "image", str(jx_get_str(m->dep, "image")));
	pull_policy(c, m);
	json_object_object_add(
	        c, "command", parse("[\"" ADAPTER_DIR "/mcp-bridge\"]"));
	json_object_object_add(c, "args", parse("[\"--stdio-adapter\"]"));
	json_object_object_add(c, "env", env);
	json_object_object_add(c, "volumeMounts", mounts);
	append_copies(mounts, jx_get(m->dep, "volumeMounts"));
	json_object_object_add(c, "resources", resources(m));
	json_object_object_add(c, "livenessProbe",
	        parse("{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
	              "\"initialDelaySeconds\":30,\"periodSeconds\":15,"
	              "\"timeoutSeconds\":5,\"failureThreshold\":5}"));
	json_object_object_add(c, "readinessProbe",
	        parse("{\"httpGet\":{\"path\":\"/readyz\",\"port\":8080},"
	              "\"initialDelaySeconds\":20,\"periodSeconds\":10,"
	              "\"timeoutSeconds\":5,\"failureThreshold\":5}"));
	arr = json_object_new_array();
	json_object_array_add(arr, init);
	json_object_object_add(pod, "initContainers", arr);
	arr = json_object_new_array();
	json_object_array_add(arr, c);
	json_object_object_add(pod, "containers", arr);
	arr = parse("[{\"name\":\"" ADAPTER_VOL "\",\"emptyDir\":{}}]");
	append_copies(arr, jx_get(m->dep, "volumes"));
	json_object_object_add(pod, "volumes", arr);
	set_sa(pod, m);
}

static json_object *
http_env(const struct mcp *m)
{
	json_object *env = json_object_new_array();
	json_object *map = jx_get(m->dep, "env");
	size_t n;
	const char **keys = sorted_keys(map, &n);

	for (size_t i = 0; i < n; i++) {
		json_object_array_add(env,
		        env_value(keys[i],
		                json_object_get_string(json_object_object_get(
		                        map, keys[i]))));
	}
	free(keys);
	return (env);
}

static json_object *
http_env_from(const struct mcp *m)
{
	json_object *refs = jx_get(m->dep, "secretRefs");
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(refs); i++) {
		const char *s = jx_get_str(
		        json_object_array_get_idx(refs, i), "name");
		if (s != NULL && s[0] != '\0') {
			json_object *e = json_object_new_object();
			jx_setv(e, str(s), "secretRef", "name", NULL);
			json_object_array_add(out, e);
		}
	}
	return (out);
}

/* The http pod: the server image on its own port. */
static void
http_pod(json_object *pod, const struct mcp *m)
{
	json_object *c = json_object_new_object(), *arr, *p;
	const char *cmd = jx_get_str(m->dep, "cmd");
	json_object *args = jx_get(m->dep, "args");

	json_object_object_add(c, "name", str("mcp-server"));
	json_object_object_add(c, "image", str(jx_get_str(m->dep, "image")));
	pull_policy(c, m);
	if (cmd != NULL && cmd[0] != '\0') {
		arr = json_object_new_array();
		json_object_array_add(arr, str(cmd));
		json_object_object_add(c, "command", arr);
	}
	if (jx_array_len(args) > 0) {
		json_object_object_add(c, "args", jx_copy(args));
	}
	if (jx_get(m->dep, "env") != NULL) {
		json_object_object_add(c, "env", http_env(m));
	}
	if (jx_array_len(jx_get(m->dep, "secretRefs")) > 0) {
		json_object_object_add(c, "envFrom", http_env_from(m));
	}
	json_object_object_add(c, "resources", resources(m));
	if (jx_array_len(jx_get(m->dep, "volumeMounts")) > 0) {
		json_object_object_add(c, "volumeMounts",
		        jx_copy(jx_get(m->dep, "volumeMounts")));
	}
	p = json_object_new_object();
	json_object_object_add(
	        p, "containerPort", json_object_new_int64(m->port));
	json_object_object_add(p, "protocol", str("TCP"));
	arr = json_object_new_array();
	json_object_array_add(arr, p);
	json_object_object_add(c, "ports", arr);
	p = json_object_new_object();
	jx_setv(p, json_object_new_int64(m->port), "tcpSocket", "port", NULL);
	json_object_object_add(
	        p, "initialDelaySeconds", json_object_new_int(3));
	json_object_object_add(p, "periodSeconds", json_object_new_int(5));
	json_object_object_add(c, "readinessProbe", p);
	arr = json_object_new_array();
	json_object_array_add(arr, c);
	json_object_object_add(pod, "containers", arr);
	/* upstream leaves a former stdio pod's adapter behind; we do not */
	json_object_object_del(pod, "initContainers");
	json_object_object_del(pod, "volumes");
	if (jx_array_len(jx_get(m->dep, "volumes")) > 0) {
		json_object_object_add(
		        pod, "volumes", jx_copy(jx_get(m->dep, "volumes")));
	}
	set_sa(pod, m);
}

/* ---- the children ---- */

/* The child of that kind and name (cached list items may lack "kind":
 * then a Deployment is told from a Service by its pod template). */
static json_object *
find_child(json_object *children, const char *kind, const char *name)
{
	bool want_dep = strcmp(kind, "Deployment") == 0;

	for (size_t i = 0; i < jx_array_len(children); i++) {
		json_object *c = json_object_array_get_idx(children, i);
		const char *k = jx_get_str(c, "kind");
		bool match = k != NULL
		        ? strcmp(k, kind) == 0
		        : (jx_get(c, "spec.template") != NULL) == want_dep;
		if (match && strcmp(kobj_name(c), name) == 0) {
			return (c);
		}
	}
	return (NULL);
}

/* Our owner reference, labels for the watch, on a child's metadata. */
static void
own(json_object *child, const struct mcp *m)
{
	json_object *owner = kobj_new(API_VERSION, KIND, m->ns, m->name);
	json_object *l = pod_labels(m->name);

	jx_setv(owner, str(kobj_uid(m->obj)), "metadata", "uid", NULL);
	kobj_set_owner(child, owner);
	json_object_put(owner);
	json_object_object_foreach(l, k, v)
	{
		kobj_set_label(child, k, json_object_get_string(v));
	}
	json_object_put(l);
	kobj_set_label(child, CONTRACT_LABEL_MCP_SERVER, m->name);
}

/* spec 6.2 step 4 on dep (new or a copy of the live one).  env taken
 * (stdio; NULL for http). */
static void
shape_deployment(json_object *dep, const struct mcp *m, json_object *env)
{
	json_object *pod;
	int64_t replicas = 1;

	own(dep, m);
	jx_get_int(m->obj, "spec.replicas", &replicas);
	jx_set_path(dep, "spec.replicas", json_object_new_int64(replicas));
	jx_set_path(dep, "spec.selector.matchLabels", pod_labels(m->name));
	jx_set_path(dep, "spec.template.metadata.labels", pod_labels(m->name));
	pod = jx_get(dep, "spec.template.spec");
	if (pod == NULL || !json_object_is_type(pod, json_type_object)) {
		pod = json_object_new_object();
		jx_set_path(dep, "spec.template.spec", pod);
	}
	if (m->stdio) {
		stdio_pod(pod, m, env);
	} else {
		http_pod(pod, m);
	}
}

/* spec 6.2 step 5 on svc. */
static void
shape_service(json_object *svc, const struct mcp *m)
{
	json_object *sel = pod_labels(m->name), *port, *ports;

	own(svc, m);
	json_object_object_del(sel, CONTRACT_LABEL_K8S_MANAGED_BY);
	jx_set_path(svc, "spec.selector", sel);
	port = json_object_new_object();
	json_object_object_add(port, "name", str("http"));
	json_object_object_add(port, "protocol", str("TCP"));
	json_object_object_add(port, "port", json_object_new_int64(m->port));
	json_object_object_add(
	        port, "targetPort", json_object_new_int64(m->port));
	ports = json_object_new_array();
	json_object_array_add(ports, port);
	jx_set_path(svc, "spec.ports", ports);
}

/* A copy of the live child to reshape, or a new object. */
static json_object *
start_child(json_object *cur, const char *api, const char *kind,
        const struct mcp *m)
{
	json_object *o;

	if (cur == NULL) {
		return (kobj_new(api, kind, m->ns, m->name));
	}
	o = jx_copy_strip(cur, "metadata.managedFields", NULL);
	json_object_object_add(o, "apiVersion", str(api));
	json_object_object_add(o, "kind", str(kind));
	return (o);
}

/* Creates o, updates it when it differs from cur, or drops it. */
static void
put_child(struct rec_out *out, const struct ipc_res *res, json_object *cur,
        json_object *o)
{
	json_object *a, *b;
	bool same;

	if (cur == NULL) {
		kobj_create(out, res, o, false);
		return;
	}
	a = jx_copy_strip(o, "apiVersion", "kind", "status", NULL);
	b = jx_copy_strip(cur, "apiVersion", "kind", "status",
	        "metadata.managedFields", NULL);
	same = jx_equal(a, b);
	json_object_put(a);
	json_object_put(b);
	if (same) {
		json_object_put(o);
	} else {
		kobj_update(out, res, o);
	}
}

/* ---- status ---- */

/* meta.SetStatusCondition: set or update by type; lastTransitionTime
 * moves only when the status changes. */
static void
set_condition(json_object *status, const char *type, const char *st,
        const char *reason, const char *msg, int64_t gen, int64_t now_ms)
{
	json_object *conds = jx_get(status, "conditions"), *c = NULL;
	char ts[TIMEFMT_RFC3339_LEN];

	if (!is_array(conds)) {
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
		json_object_object_add(c, "type", str(type));
		json_object_array_add(conds, c);
	}
	const char *old = jx_get_str(c, "status");
	if (old == NULL || strcmp(old, st) != 0
	        || jx_get(c, "lastTransitionTime") == NULL) {
		timefmt_rfc3339(now_ms / 1000, ts);
		json_object_object_add(c, "lastTransitionTime", str(ts));
	}
	json_object_object_add(c, "status", str(st));
	json_object_object_add(
	        c, "observedGeneration", json_object_new_int64(gen));
	json_object_object_add(c, "reason", str(reason));
	json_object_object_add(c, "message", str(msg));
}

/* meta.RemoveStatusCondition. */
static void
drop_condition(json_object *status, const char *type)
{
	json_object *conds = jx_get(status, "conditions"), *keep;

	if (!is_array(conds)) {
		return;
	}
	keep = json_object_new_array();
	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *e = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(e, "type");
		if (t == NULL || strcmp(t, type) != 0) {
			json_object_array_add(keep, json_object_get(e));
		}
	}
	json_object_object_add(status, "conditions", keep);
}

/* ready, url (NULL: removed), toolCount 0. */
static void
set_fields(json_object *st, bool ready, const char *url)
{
	json_object_object_add(st, "ready", json_object_new_boolean(ready));
	if (url != NULL) {
		json_object_object_add(st, "url", str(url));
	} else {
		json_object_object_del(st, "url");
	}
	json_object_object_add(st, "toolCount", json_object_new_int(0));
}

/* Writes st (taken) unless it equals the cached status. */
static void
put_status(struct rec_out *out, json_object *obj, json_object *st)
{
	json_object *c;

	if (jx_equal(st, jx_get(obj, "status"))) {
		json_object_put(st);
		return;
	}
	c = jx_copy_strip(obj, "metadata.managedFields", NULL);
	json_object_object_add(c, "apiVersion", str(API_VERSION));
	json_object_object_add(c, "kind", str(KIND));
	json_object_object_add(c, "status", st);
	kobj_update_status(out, &kobj_mcpservers, c);
	kobj_status_event(out, obj, st);
}

/* spec 6.2 step 2. */
static void
external(const struct rec_in *in, struct rec_out *out, const struct mcp *m)
{
	json_object *st = jx_copy_obj(jx_get(m->obj, "status"));

	set_fields(st, true, jx_get_str(m->obj, "spec.url"));
	set_condition(st, "Ready", "True", "External",
	        "External MCP server URL configured", m->gen, in->now_ms);
	put_status(out, m->obj, st);
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

/* A spec that cannot be deployed: not ready, with the reason. */
static void
invalid(const struct rec_in *in, struct rec_out *out, const struct mcp *m,
        const char *why)
{
	json_object *st = jx_copy_obj(jx_get(m->obj, "status"));

	log_warnx("mcpserver %s/%s: %s", m->ns, m->name, why);
	set_fields(st, false, NULL);
	set_condition(
	        st, "Ready", "False", "InvalidSpec", why, m->gen, in->now_ms);
	put_status(out, m->obj, st);
	rec_verdict(out, IPC_V_DONE, 0, "invalid: %s", why);
}

/* spec 6.2 step 6; dep is the live Deployment (NULL: just created). */
static void
managed_status(const struct rec_in *in, struct rec_out *out,
        const struct mcp *m, json_object *dep)
{
	json_object *st = jx_copy_obj(jx_get(m->obj, "status"));
	int64_t ready = 0;
	char *url = xasprintf(
	        "http://%s.%s.svc:%lld", m->name, m->ns, (long long)m->port);

	jx_get_int(dep, "status.readyReplicas", &ready);
	set_fields(st, ready > 0, url);
	free(url);
	set_condition(st, "Deployed", "True", "DeploymentCreated",
	        "Deployment and Service created", m->gen, in->now_ms);
	if (ready > 0) {
		set_condition(st, "Ready", "True", "Ready",
		        "MCP server is ready", m->gen, in->now_ms);
	} else {
		set_condition(st, "Ready", "False", "NotReady",
		        "Waiting for deployment to become ready", m->gen,
		        in->now_ms);
	}
	drop_condition(st, "Suspended"); /* resumed (#195) */
	put_status(out, m->obj, st);
	if (ready > 0) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
	} else {
		rec_verdict(out, IPC_V_REQUEUE_AFTER, MCPSERVER_REQUEUE_MS,
		        "waiting for the Deployment to become ready");
	}
}

/* ---- take-over of upstream's children ---- */

/* Whether live already carries our child label and is controlled by m. */
static bool
adopted(json_object *live, const struct mcp *m)
{
	const char *v = kobj_label(live, CONTRACT_LABEL_MCP_SERVER);

	return (v != NULL && strcmp(v, m->name) == 0
	        && kobj_owned_by(live, m->obj));
}

/* The child of m's name that the child watch does not see (upstream
 * creates its Deployment and Service with no label): 0 when there is
 * none (it is to be created), 1 when it is controlled by m and the
 * adoption patch was written (the watch sees it next), -1 with the
 * reason in err (it is someone else's: not taken over). */
static int
unseen_child(const struct rec_in *in, struct rec_out *out,
        const struct ipc_res *res, const char *kind, const struct mcp *m,
        char *err, size_t errlen)
{
	json_object *live = NULL;
	int rc;

	if (in->view == NULL) {
		return (0);
	}
	rc = view_get(in->view, res, m->ns, m->name, &live, err, errlen);
	if (rc != 0) {
		return (rc == 1 ? 0 : -1);
	}
	if (adopted(live, m)) {
		/* by an earlier pass whose watch event has not come yet: no
		 * second patch, the event (or the requeue) brings the next
		 * pass */
		json_object_put(live);
		return (1);
	}
	rc = kobj_adopt(
	        out, res, live, m->obj, CONTRACT_LABEL_MCP_SERVER, m->name);
	if (rc == 0) {
		log_info("mcpserver %s/%s: adopting %s %s (no child label)",
		        m->ns, m->name, kind, m->name);
		rc = 1;
	} else {
		snprintf(err, errlen,
		        "%s %s/%s exists and is not controlled by MCPServer "
		        "%s: not taken over (delete it, or make the MCPServer "
		        "its controller)",
		        kind, m->ns, m->name, m->name);
	}
	json_object_put(live);
	return (rc);
}

/* Adopts what upstream made before anything else is written.  Returns 0
 * to go on; otherwise the verdict is set. */
static int
take_over(const struct rec_in *in, struct rec_out *out, const struct mcp *m)
{
	char err[512] = "";
	int d = 0, s = 0;

	if (find_child(in->children, "Deployment", m->name) == NULL) {
		d = unseen_child(in, out, &kobj_deployments, "Deployment", m,
		        err, sizeof(err));
	}
	if (d >= 0 && find_child(in->children, "Service", m->name) == NULL) {
		s = unseen_child(in, out, &kobj_services, "Service", m, err,
		        sizeof(err));
	}
	if (d < 0 || s < 0) {
		rec_verdict(out, IPC_V_ERROR, 0, "%s", err);
		return (-1);
	}
	if (d + s > 0) {
		rec_verdict(out, IPC_V_REQUEUE_AFTER, MCPSERVER_ADOPT_MS,
		        "adopted the existing children");
		return (1);
	}
	return (0);
}

/* ---- suspended (later upstream fix #195) ---- */

/* Scales the Deployment the child watch sees to zero (nothing else of it
 * is touched); status not ready with the Suspended conditions. */
static void
suspended(const struct rec_in *in, struct rec_out *out, const struct mcp *m)
{
	json_object *cur = find_child(in->children, "Deployment", m->name);
	json_object *st, *o;
	int64_t replicas = -1;

	if (take_over(in, out, m) != 0) {
		return;
	}
	if (cur != NULL
	        && (jx_get_int(cur, "spec.replicas", &replicas) != 0
	                || replicas != 0)) {
		o = start_child(cur, "apps/v1", "Deployment", m);
		jx_set_path(o, "spec.replicas", json_object_new_int(0));
		kobj_update(out, &kobj_deployments, o);
	}
	st = jx_copy_obj(jx_get(m->obj, "status"));
	set_fields(st, false, NULL);
	json_object_object_del(st, "tools");
	set_condition(st, "Suspended", "True", "Suspended",
	        "MCP server is suspended \xe2\x80\x94 configure secrets and "
	        "tokens, then unsuspend",
	        m->gen, in->now_ms);
	set_condition(st, "Ready", "False", "Suspended",
	        "MCP server is suspended", m->gen, in->now_ms);
	put_status(out, m->obj, st);
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

/* ---- reconcile ---- */

static void
managed(const struct rec_in *in, struct rec_out *out, const struct mcp *m)
{
	json_object *env = NULL, *cur, *o;
	char err[256];

	if (take_over(in, out, m) != 0) {
		return;
	}
	if (m->stdio && (env = stdio_env(in, m, err, sizeof(err))) == NULL) {
		rec_verdict(out, IPC_V_ERROR, 0, "%s", err);
		return;
	}
	cur = find_child(in->children, "Deployment", m->name);
	o = start_child(cur, "apps/v1", "Deployment", m);
	shape_deployment(o, m, env);
	put_child(out, &kobj_deployments, cur, o);
	json_object *dep = cur;
	cur = find_child(in->children, "Service", m->name);
	o = start_child(cur, "v1", "Service", m);
	shape_service(o, m);
	put_child(out, &kobj_services, cur, o);
	managed_status(in, out, m, dep);
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	struct mcp m;
	const char *url, *why;
	bool susp = false;

	if (in->object == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	url = jx_get_str(in->object, "spec.url");
	why = read_spec(in->object, &m);
	if (url != NULL && url[0] != '\0') {
		external(in, out, &m);
	} else if (m.dep != NULL
	        && jx_get_bool(in->object, "spec.suspended", &susp) == 0
	        && susp) {
		suspended(in, out, &m);
	} else if (why != NULL) {
		invalid(in, out, &m, why);
	} else {
		managed(in, out, &m);
	}
}

const struct reconciler mcpserver_reconciler = { "mcpserver", reconcile };
