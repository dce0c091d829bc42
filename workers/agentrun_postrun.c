/*
 * agentrun_postrun.c: the PostRunning path of an AgentRun (spec 1.7;
 * upstream agentrun_controller.go at 008266e): the gate checks of the
 * Pending path (validateGateHooks), the workspace PVC <run>-workspace
 * (ensureWorkspacePVC, cleanupWorkspacePVC), the postRun Job
 * <run>-postrun whose init containers are the lifecycle.postRun hooks
 * (buildPostRunJob, startPostRun), the PostRunning phase with its
 * PostRunFailed condition and 10-minute budget (reconcilePostRunning)
 * and the response gate (resolveGate, parseGateVerdict).  The gated
 * completion event upstream publishes on NATS is not sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/agentrun_job.h"
#include "workers/agentrun_postrun.h"
#include "workers/kobj.h"

#define POSTRUN_SA "sympozium-agent"
#define DONE_IMAGE "busybox:1.36"

static json_object *
hooks_of(json_object *run)
{
	return (jx_get(run, "spec.lifecycle.postRun"));
}

static bool
is_gate(json_object *hook)
{
	bool g = false;

	jx_get_bool(hook, "gate", &g);
	return (g);
}

bool
agentrun_postrun_hooks(json_object *run)
{
	return (jx_array_len(hooks_of(run)) > 0);
}

bool
agentrun_postrun_gated(json_object *run)
{
	json_object *hooks = hooks_of(run);

	for (size_t i = 0; i < jx_array_len(hooks); i++) {
		if (is_gate(json_object_array_get_idx(hooks, i))) {
			return (true);
		}
	}
	return (false);
}

/* s as Go's %q writes it, for the names of hooks: quotes, backslash
 * escapes, \xNN for other control bytes. */
static void
go_quote(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
	        p++) {
		if (*p == '"' || *p == '\\') {
			buf_putc(b, '\\');
			buf_putc(b, (char)*p);
		} else if (*p == '\n') {
			buf_puts(b, "\\n");
		} else if (*p == '\t') {
			buf_puts(b, "\\t");
		} else if (*p < 0x20 || *p == 0x7f) {
			buf_printf(b, "\\x%02x", *p);
		} else {
			buf_putc(b, (char)*p);
		}
	}
	buf_putc(b, '"');
}

const char *
agentrun_postrun_validate(json_object *run)
{
	static char msg[512];
	json_object *pre = jx_get(run, "spec.lifecycle.preRun");
	json_object *post = hooks_of(run);
	size_t gates = 0;
	struct buf b;

	for (size_t i = 0; i < jx_array_len(pre); i++) {
		json_object *h = json_object_array_get_idx(pre, i);
		if (!is_gate(h)) {
			continue;
		}
		buf_init(&b);
		go_quote(&b, jx_get_str(h, "name") ?: "");
		snprintf(msg, sizeof(msg),
		        "gate hook validation failed: gate: true is only "
		        "valid on postRun hooks, not preRun (hook %s)",
		        buf_str(&b));
		buf_fini(&b);
		return (msg);
	}
	for (size_t i = 0; i < jx_array_len(post); i++) {
		gates += is_gate(json_object_array_get_idx(post, i));
	}
	if (gates > 1) {
		snprintf(msg, sizeof(msg),
		        "gate hook validation failed: at most one postRun "
		        "hook "
		        "may set gate: true, found %zu",
		        gates);
		return (msg);
	}
	return (NULL);
}

char *
agentrun_postrun_pvc_name(json_object *run)
{
	return (xasprintf("%s-workspace", kobj_name(run)));
}

void
agentrun_postrun_pvc(struct rec_out *out, json_object *run)
{
	char *name;
	json_object *pvc, *modes;

	if (!agentrun_postrun_hooks(run)) {
		return;
	}
	name = agentrun_postrun_pvc_name(run);
	pvc = kobj_new("v1", "PersistentVolumeClaim", kobj_ns(run), name);
	kobj_set_label(pvc, CONTRACT_LABEL_AGENT_RUN, kobj_name(run));
	kobj_set_label(pvc, CONTRACT_LABEL_COMPONENT, "workspace");
	kobj_set_owner(pvc, run);
	modes = json_object_new_array();
	json_object_array_add(modes, json_object_new_string("ReadWriteOnce"));
	jx_setv(pvc, modes, "spec", "accessModes", NULL);
	jx_setv(pvc, json_object_new_string("1Gi"), "spec", "resources",
	        "requests", "storage", NULL);
	kobj_create(out, &kobj_pvcs, pvc, true);
	free(name);
}

/* "<run>-postrun" cut to 63 characters; then (a deliberate difference)
 * without trailing '-' or '.', which no API server accepts. */
static char *
job_name(json_object *run)
{
	char *name = xasprintf("%s-postrun", kobj_name(run));
	size_t n = strlen(name);

	if (n > 63) {
		n = 63;
	}
	while (n > 0 && (name[n - 1] == '-' || name[n - 1] == '.')) {
		n--;
	}
	name[n] = '\0';
	return (name);
}

/* text cut to AGENTRUN_POSTRUN_RESULT_MAX bytes; the bytes of a UTF-8
 * sequence left incomplete by the cut become U+FFFD each, as Go's JSON
 * encoder writes them.  Caller frees. */
static char *
cut_result(const char *text)
{
	size_t n = strlen(text), k = 0, lead;
	struct buf b;

	if (n <= AGENTRUN_POSTRUN_RESULT_MAX) {
		return (xstrdup(text));
	}
	n = AGENTRUN_POSTRUN_RESULT_MAX;
	while (k < 3 && k < n
	        && ((unsigned char)text[n - 1 - k] & 0xc0) == 0x80) {
		k++;
	}
	lead = (unsigned char)text[n - 1 - k];
	if (k < n && lead >= 0xc0) {
		size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
		k = want > k + 1 ? k + 1 : 0;
	} else {
		k = 0;
	}
	buf_init(&b);
	buf_append(&b, text, n - k);
	for (size_t i = 0; i < k; i++) {
		buf_puts(&b, "\xef\xbf\xbd");
	}
	return (buf_detach(&b, NULL));
}

static void
job_labels(json_object *run, json_object *o)
{
	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, kobj_name(run));
	kobj_set_label(o, CONTRACT_LABEL_INSTANCE,
	        jx_get_str(run, "spec.instanceRef") ?: "");
	kobj_set_label(o, CONTRACT_LABEL_COMPONENT, "post-run");
	kobj_set_label(o, CONTRACT_LABEL_K8S_PART_OF, "sympozium");
	kobj_set_label(
	        o, CONTRACT_LABEL_K8S_MANAGED_BY, "sympozium-controller");
}

/* The env every hook gets (upstream's baseEnv). */
static void
base_env(json_object *env, json_object *run, int exit_code, const char *text)
{
	char code[16];
	char *cut = cut_result(text);

	snprintf(code, sizeof(code), "%d", exit_code);
	kobj_env_add(env, "AGENT_RUN_ID", kobj_name(run));
	kobj_env_add(
	        env, "INSTANCE_NAME", jx_get_str(run, "spec.instanceRef"));
	kobj_env_add(env, "AGENT_NAMESPACE", kobj_ns(run));
	kobj_env_add(env, "AGENT_EXIT_CODE", code);
	kobj_env_add(env, "AGENT_RESULT", cut);
	agentrun_job_env_map(env, jx_get(run, "spec.env"));
	free(cut);
}

/* Init container post-<name> of one hook. */
static json_object *
hook_container(
        json_object *run, json_object *hook, int exit_code, const char *text)
{
	char *name = xasprintf("post-%s", jx_get_str(hook, "name") ?: "");
	json_object *env, *mounts, *c, *henv = jx_get(hook, "env");

	c = agentrun_job_container(
	        name, jx_get_str(hook, "image"), &env, &mounts);
	free(name);
	/* later upstream fix #167: the hook's valid pull policy */
	json_object_object_add(c, "imagePullPolicy",
	        json_object_new_string(
	                kobj_pull_policy(jx_get_str(hook, "imagePullPolicy"))
	                        ?: "IfNotPresent"));
	if (jx_array_len(jx_get(hook, "command")) > 0) {
		json_object_object_add(c, "command",
		        json_object_get(jx_get(hook, "command")));
	}
	if (jx_array_len(jx_get(hook, "args")) > 0) {
		json_object_object_add(
		        c, "args", json_object_get(jx_get(hook, "args")));
	}
	base_env(env, run, exit_code, text);
	for (size_t i = 0; i < jx_array_len(henv); i++) {
		json_object *e = json_object_array_get_idx(henv, i);
		kobj_env_add(
		        env, jx_get_str(e, "name"), jx_get_str(e, "value"));
	}
	if (is_gate(hook)) {
		kobj_env_add(env, "GATE_MODE", "true");
	}
	agentrun_job_mount(mounts, "workspace", "/workspace", false);
	agentrun_job_mount(mounts, "tmp", "/tmp", false);
	json_object_object_add(c, "resources",
	        agentrun_job_resources("100m", "128Mi", "500m", "512Mi"));
	json_object_object_add(c, "securityContext", agentrun_job_hardened());
	return (c);
}

/* The hooks, each gate moved to the front as it comes (upstream
 * prepends them), the others in order. */
static json_object *
init_containers(json_object *run, int exit_code, const char *text)
{
	json_object *hooks = hooks_of(run), *list = json_object_new_array();
	size_t n = jx_array_len(hooks);

	for (size_t i = n; i > 0; i--) {
		json_object *h = json_object_array_get_idx(hooks, i - 1);
		if (is_gate(h)) {
			json_object_array_add(
			        list, hook_container(run, h, exit_code, text));
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_object *h = json_object_array_get_idx(hooks, i);
		if (!is_gate(h)) {
			json_object_array_add(
			        list, hook_container(run, h, exit_code, text));
		}
	}
	return (list);
}

static json_object *
done_container(void)
{
	json_object *c = json_object_new_object();
	json_object *cmd = json_object_new_array();

	json_object_object_add(c, "name", json_object_new_string("done"));
	json_object_object_add(c, "image", json_object_new_string(DONE_IMAGE));
	json_object_object_add(
	        c, "imagePullPolicy", json_object_new_string("IfNotPresent"));
	json_object_array_add(cmd, json_object_new_string("true"));
	json_object_object_add(c, "command", cmd);
	json_object_object_add(c, "securityContext", agentrun_job_hardened());
	json_object_object_add(c, "resources",
	        agentrun_job_resources("10m", "8Mi", "50m", "16Mi"));
	return (c);
}

static json_object *
volumes(json_object *run)
{
	json_object *vols = json_object_new_array();
	json_object *ws = json_object_new_object(), *tmp;
	char *claim = agentrun_postrun_pvc_name(run);

	json_object_object_add(
	        ws, "name", json_object_new_string("workspace"));
	jx_setv(ws, json_object_new_string(claim), "persistentVolumeClaim",
	        "claimName", NULL);
	json_object_array_add(vols, ws);
	tmp = json_object_new_object();
	json_object_object_add(tmp, "name", json_object_new_string("tmp"));
	jx_setv(tmp, json_object_new_string("256Mi"), "emptyDir", "sizeLimit",
	        NULL);
	json_object_array_add(vols, tmp);
	free(claim);
	return (vols);
}

static json_object *
pod_spec(json_object *run, int exit_code, const char *text)
{
	json_object *pod = json_object_new_object();
	json_object *sc = json_object_new_object(), *list;
	json_object *ips = jx_get(run, "spec.imagePullSecrets");

	json_object_object_add(
	        pod, "restartPolicy", json_object_new_string("Never"));
	json_object_object_add(
	        pod, "serviceAccountName", json_object_new_string(POSTRUN_SA));
	if (ips != NULL) {
		json_object_object_add(
		        pod, "imagePullSecrets", json_object_get(ips));
	}
	json_object_object_add(sc, "runAsNonRoot", json_object_new_boolean(1));
	json_object_object_add(sc, "runAsUser", json_object_new_int64(1000));
	json_object_object_add(sc, "fsGroup", json_object_new_int64(1000));
	json_object_object_add(pod, "securityContext", sc);
	json_object_object_add(
	        pod, "initContainers", init_containers(run, exit_code, text));
	list = json_object_new_array();
	json_object_array_add(list, done_container());
	json_object_object_add(pod, "containers", list);
	json_object_object_add(pod, "volumes", volumes(run));
	return (pod);
}

json_object *
agentrun_postrun_job(json_object *run, int exit_code, const char *text)
{
	char *name = job_name(run);
	json_object *job = kobj_new("batch/v1", "Job", kobj_ns(run), name);
	json_object *spec = json_object_new_object();
	json_object *tmpl = json_object_new_object();

	job_labels(run, job);
	job_labels(run, tmpl);
	json_object_object_add(
	        spec, "ttlSecondsAfterFinished", json_object_new_int64(300));
	json_object_object_add(
	        spec, "activeDeadlineSeconds", json_object_new_int64(600));
	json_object_object_add(spec, "backoffLimit", json_object_new_int64(0));
	json_object_object_add(
	        tmpl, "spec", pod_spec(run, exit_code, text ?: ""));
	json_object_object_add(spec, "template", tmpl);
	json_object_object_add(job, "spec", spec);
	free(name);
	return (job);
}

static void
set_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v ?: ""));
}

static void
set_now(const struct rec_in *in, json_object *status, const char *key)
{
	char ts[TIMEFMT_RFC3339_LEN];

	timefmt_rfc3339(in->now_ms / 1000, ts);
	set_str(status, key, ts);
}

void
agentrun_postrun_start(const struct rec_in *in, struct rec_out *out,
        json_object *status, int exit_code, const char *text,
        json_object *usage)
{
	json_object *job;

	json_object_object_add(
	        status, "exitCode", json_object_new_int(exit_code));
	set_str(status, exit_code == 0 ? "result" : "error", text);
	if (usage != NULL) {
		json_object_object_add(status, "tokenUsage", usage);
	} else {
		json_object_object_del(status, "tokenUsage");
	}
	job = agentrun_postrun_job(in->object, exit_code, text);
	kobj_set_owner(job, in->object);
	set_str(status, "phase", "PostRunning");
	set_str(status, "postRunJobName", kobj_name(job));
	kobj_create(out, &kobj_jobs, job, true);
}

/* ---- PostRunning ---- */

/* What one PostRunning pass works with. */
struct pr {
	const struct rec_in *in;
	struct rec_out *out;
	json_object *status; /* being written, borrowed */
	bool agent_ok;       /* status.exitCode == 0 */
	bool gated;
};

static const char *
st_str(struct pr *p, const char *key)
{
	return (jx_get_str(p->status, key) ?: "");
}

static void
succeed(struct pr *p, const char *result)
{
	char *keep = xstrdup(result);

	set_str(p->status, "phase", "Succeeded");
	set_now(p->in, p->status, "completedAt");
	set_str(p->status, "result", keep);
	free(keep);
}

static void
fail(struct pr *p, const char *msg)
{
	char *keep = xstrdup(msg);

	set_str(p->status, "phase", "Failed");
	set_now(p->in, p->status, "completedAt");
	set_str(p->status, "error", keep);
	free(keep);
}

/* A verdict as Go's json.Unmarshal fills upstream's gateVerdict: keys
 * matched exactly or case-insensitively, the last one winning; a known
 * key of another type than string (or null) is an error. */
struct verdict {
	const char *action, *response, *reason; /* borrowed from doc */
	json_object *doc;
};

static int
verdict_field(struct verdict *v, const char *key, json_object *val)
{
	static const char *const keys[] = { "action", "response", "reason" };
	const char **slot[] = { &v->action, &v->response, &v->reason };

	for (size_t i = 0; i < 3; i++) {
		if (strcasecmp(key, keys[i]) != 0) {
			continue;
		}
		if (val == NULL) {
			return (0);
		}
		if (!json_object_is_type(val, json_type_string)) {
			return (-1);
		}
		*slot[i] = json_object_get_string(val);
	}
	return (0);
}

/* parseGateVerdict: 0 with *v filled (caller puts v->doc) when the
 * annotation holds a verdict with action approve, reject or rewrite;
 * -1 otherwise. */
static int
parse_verdict(json_object *run, struct verdict *v)
{
	const char *raw = kobj_annotation(run, AGENTRUN_POSTRUN_ANN_VERDICT);
	int bad = 0;

	*v = (struct verdict) { "", "", "", NULL };
	if (raw == NULL || raw[0] == '\0') {
		return (-1);
	}
	v->doc = jx_parse(raw, strlen(raw), 0, NULL, 0);
	if (v->doc == NULL || !json_object_is_type(v->doc, json_type_object)) {
		json_object_put(v->doc);
		v->doc = NULL;
		return (-1);
	}
	json_object_object_foreach(v->doc, k, val)
	{
		bad |= verdict_field(v, k, val);
	}
	if (bad != 0
	        || (strcmp(v->action, "approve") != 0
	                && strcmp(v->action, "reject") != 0
	                && strcmp(v->action, "rewrite") != 0)) {
		json_object_put(v->doc);
		v->doc = NULL;
		return (-1);
	}
	return (0);
}

/* resolveGate: the verdict applied to the stored result, status.
 * gateVerdict, then the final phase. */
static void
resolve_gate(struct pr *p, bool hook_failed)
{
	struct verdict v;
	const char *result = st_str(p, "result"), *label;
	const char *def
	        = jx_get_str(p->in->object, "spec.lifecycle.gateDefault");
	bool ok = parse_verdict(p->in->object, &v) == 0;
	char *final;

	if (ok && strcmp(v.action, "approve") == 0) {
		label = "approved";
	} else if (ok && strcmp(v.action, "reject") == 0) {
		label = "rejected";
		result = v.response[0] != '\0' ? v.response
		                               : "Response blocked by policy";
	} else if (ok) {
		label = "rewritten";
		result = v.response;
	} else if (def == NULL || def[0] == '\0'
	        || strcmp(def, "block") == 0) {
		label = hook_failed ? "error" : "timeout";
		result = "Response blocked: gate hook did not return a "
		         "verdict";
	} else {
		label = "allowed-by-default";
	}
	final = xstrdup(result);
	set_str(p->status, "gateVerdict", label);
	json_object_put(v.doc);
	if (p->agent_ok) {
		succeed(p, final);
	} else {
		fail(p, st_str(p, "error"));
	}
	free(final);
}

/* The gate, else the agent's own outcome. */
static void
finish(struct pr *p, bool hook_failed)
{
	if (p->gated) {
		resolve_gate(p, hook_failed);
	} else if (p->agent_ok) {
		succeed(p, st_str(p, "result"));
	} else {
		fail(p, st_str(p, "error"));
	}
	rec_verdict(p->out, IPC_V_DONE, 0, NULL);
}

static void
add_failed_condition(struct pr *p)
{
	json_object *conds = json_object_object_get(p->status, "conditions");
	json_object *c = json_object_new_object();

	if (!json_object_is_type(conds, json_type_array)) {
		conds = json_object_new_array();
		json_object_object_add(p->status, "conditions", conds);
	}
	set_str(c, "type", "PostRunFailed");
	set_str(c, "status", "True");
	set_now(p->in, c, "lastTransitionTime");
	set_str(c, "reason", "PostRunJobFailed");
	set_str(c, "message", "One or more postRun lifecycle hooks failed");
	json_object_array_add(conds, c);
}

static void
delete_job(struct pr *p, const char *name, const char *propagation)
{
	json_object *w = ipc_write_new(
	        IPC_OP_DELETE, &kobj_jobs, kobj_ns(p->in->object), name, NULL);

	ipc_write_set_propagation(w, propagation);
	ipc_write_set_tolerate(w, IPC_TOL_NOT_FOUND);
	rec_write(p->out, w);
}

/* Milliseconds since status.startedAt, -1 when unknown. */
static int64_t
since_start(struct pr *p)
{
	int64_t us;

	if (timefmt_parse(st_str(p, "startedAt"), &us) != 0) {
		return (-1);
	}
	return (p->in->now_ms - us / 1000);
}

static int64_t
count(json_object *job, const char *path)
{
	int64_t v = 0;

	jx_get_int(job, path, &v);
	return (v);
}

void
agentrun_postrun_running(
        const struct rec_in *in, struct rec_out *out, json_object *status)
{
	struct pr p = { in, out, status, false,
		agentrun_postrun_gated(in->object) };
	const char *name = st_str(&p, "postRunJobName");
	json_object *job;
	int64_t code = -1, elapsed;

	if (name[0] == '\0') {
		fail(&p, "postRun Job name missing");
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	if ((job = kobj_child(in->children, "Job", name)) == NULL) {
		rec_verdict(out, IPC_V_REQUEUE_AFTER, AGENTRUN_POSTRUN_POLL_MS,
		        "postRun job %s not in the cache", name);
		return;
	}
	p.agent_ok = jx_get_int(status, "exitCode", &code) == 0 && code == 0;
	if (count(job, "status.succeeded") > 0) {
		finish(&p, false);
	} else if (count(job, "status.failed") > 0) {
		add_failed_condition(&p);
		finish(&p, true);
	} else if (p.gated
	        && kobj_annotation(in->object, AGENTRUN_POSTRUN_ANN_VERDICT)
	                != NULL) {
		delete_job(&p, name, "Background");
		finish(&p, false);
	} else if ((elapsed = since_start(&p)) >= 0
	        && elapsed > AGENTRUN_POSTRUN_TIMEOUT_MS) {
		log_debug("agentrun %s: postRun timed out",
		        kobj_name(in->object));
		delete_job(&p, name, "Foreground");
		finish(&p, true);
	} else {
		rec_verdict(out, IPC_V_REQUEUE_AFTER, AGENTRUN_POSTRUN_POLL_MS,
		        NULL);
	}
}

static size_t
failed_conditions(json_object *status)
{
	json_object *conds = json_object_object_get(status, "conditions");
	size_t n = 0;

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		const char *t = jx_get_str(
		        json_object_array_get_idx(conds, i), "type");
		n += t != NULL && strcmp(t, "PostRunFailed") == 0;
	}
	return (n);
}

void
agentrun_postrun_events(struct rec_out *out, json_object *run,
        json_object *old, json_object *now)
{
	const char *was = jx_get_str(old, "phase") ?: "";
	const char *is = jx_get_str(now, "phase") ?: "";

	if (strcmp(is, "PostRunning") == 0 && strcmp(was, is) != 0) {
		kobj_eventf(out, run, KOBJ_NORMAL, "PostRunStarted",
		        "Created postRun Job %s",
		        jx_get_str(now, "postRunJobName") ?: "");
	}
	if (failed_conditions(now) > failed_conditions(old)) {
		kobj_event(out, run, KOBJ_WARNING, "PostRunFailed",
		        "One or more postRun lifecycle hooks failed");
	}
}

void
agentrun_postrun_cleanup(
        const struct rec_in *in, struct rec_out *out, json_object *status)
{
	const char *job = jx_get_str(status, "postRunJobName");
	char *name;

	if (job == NULL || job[0] == '\0') {
		return;
	}
	name = agentrun_postrun_pvc_name(in->object);
	if (kobj_child(in->children, "PersistentVolumeClaim", name) != NULL) {
		kobj_delete(out, &kobj_pvcs, kobj_ns(in->object), name, true);
	}
	free(name);
}
