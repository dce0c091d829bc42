/*
 * schedule.c: owns the SympoziumSchedule reconciler (spec section 5):
 * finalizer, suspend, cron parse and due check from in->now_ms, the Forbid
 * wait on the schedule's active runs, the serving guard, the memory-prefixed
 * task, the AgentRun `<schedule>-<N>` (orphan-aware, collision-free numbering)
 * and the status (phase, lastRunTime, nextRunTime, lastRunName, totalRuns).
 * Errors the user can fix (bad cron, missing instance, names too long for
 * labels) set phase Error with a Ready=False condition that says why; a
 * cron no date can match parks the schedule Active without nextRunTime.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/duration.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/cron.h"
#include "workers/kobj.h"
#include "workers/schedule.h"
#include "workers/view.h"
#include "workers/zonecache.h"

#define MINUTE_MS  60000
#define FORBID_MS  30000
#define DAY_MS     (24LL * 3600 * 1000)
#define LABEL_MAX  63
#define RENAME_MAX 100
#define COND_TYPE  "Ready"

struct sched {
	const struct rec_in *in;
	struct rec_out *out;
	json_object *obj;    /* borrowed: in->object */
	json_object *status; /* the status being built (owned) */
	const char *ns, *name, *ref;
};

/* ---- small readers ---- */

static const char *
spec_str(json_object *o, const char *key, const char *dflt)
{
	json_object *v = jx_getv(o, "spec", key, NULL);

	return (json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : dflt);
}

static bool
spec_bool(json_object *o, const char *key, bool dflt)
{
	bool b = dflt;

	jx_get_bool(jx_get(o, "spec"), key, &b);
	return (b);
}

/* An RFC 3339 time at status.key in unix ms, or -1. */
static int64_t
status_time(json_object *status, const char *key)
{
	const char *s = jx_get_str(status, key);
	int64_t us;

	if (s == NULL || s[0] == '\0' || timefmt_parse(s, &us) != 0) {
		return (-1);
	}
	return (us / 1000);
}

static int64_t
status_int(json_object *status, const char *key)
{
	int64_t v = 0;

	jx_get_int(status, key, &v);
	return (v);
}

/* k when name is "<prefix>-<k>" with k a positive decimal, else 0. */
static int64_t
suffix(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	int64_t k = 0;

	if (strncmp(name, prefix, n) != 0 || name[n] != '-'
	        || name[n + 1] == '\0') {
		return (0);
	}
	for (const char *p = name + n + 1; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || k > INT64_MAX / 100) {
			return (0);
		}
		k = k * 10 + (*p - '0');
	}
	return (k);
}

/* ---- status ---- */

static void
set_str(struct sched *sc, const char *key, const char *value)
{
	json_object_object_add(sc->status, key, json_object_new_string(value));
}

static void
set_time(struct sched *sc, const char *key, int64_t ms)
{
	char buf[TIMEFMT_RFC3339_LEN];

	timefmt_rfc3339(ms / 1000 - (ms % 1000 < 0), buf);
	set_str(sc, key, buf);
}

/* The conditions array without our condition type (a new array). */
static json_object *
other_conditions(struct sched *sc, json_object **ours)
{
	json_object *conds = json_object_object_get(sc->status, "conditions");
	json_object *keep = json_object_new_array();

	*ours = NULL;
	for (size_t i = 0; i < jx_array_len(conds); i++) {
		json_object *c = json_object_array_get_idx(conds, i);
		const char *t = jx_get_str(c, "type");
		if (t != NULL && strcmp(t, COND_TYPE) == 0) {
			*ours = c;
		} else {
			json_object_array_add(keep, json_object_get(c));
		}
	}
	return (keep);
}

/* Sets phase; Error carries Ready=False with reason and message, other
 * phases drop that condition. */
static void
set_phase(struct sched *sc, const char *phase, const char *reason,
        const char *msg)
{
	json_object *ours, *keep = other_conditions(sc, &ours);
	char now[TIMEFMT_RFC3339_LEN];

	set_str(sc, "phase", phase);
	if (reason != NULL) {
		json_object *c = json_object_new_object();
		const char *was = jx_get_str(ours, "lastTransitionTime");
		const char *st = jx_get_str(ours, "status");
		timefmt_rfc3339(sc->in->now_ms / 1000, now);
		json_object_object_add(
		        c, "type", json_object_new_string(COND_TYPE));
		json_object_object_add(
		        c, "status", json_object_new_string("False"));
		json_object_object_add(
		        c, "reason", json_object_new_string(reason));
		json_object_object_add(
		        c, "message", json_object_new_string(msg));
		json_object_object_add(c, "lastTransitionTime",
		        json_object_new_string(was != NULL && st != NULL
		                                && strcmp(st, "False") == 0
		                        ? was
		                        : now));
		json_object_array_add(keep, c);
	}
	if (json_object_array_length(keep) == 0
	        && json_object_object_get(sc->status, "conditions") == NULL) {
		json_object_put(keep);
		return;
	}
	json_object_object_add(sc->status, "conditions", keep);
}

static void set_error(struct sched *sc, const char *reason, const char *fmt,
        ...) __attribute__((format(printf, 3, 4)));

static void
set_error(struct sched *sc, const char *reason, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	set_phase(sc, "Error", reason, msg);
}

/* Emits the status update when the status changed ("errors ignored":
 * Conflict and NotFound are tolerated). */
static void
flush_status(struct sched *sc)
{
	json_object *old = jx_get(sc->obj, "status");
	json_object *o, *w;

	if (jx_equal(sc->status, old)) {
		return;
	}
	o = jx_copy_strip(sc->obj, "status", "metadata.managedFields", NULL);
	json_object_object_add(o, "status", json_object_get(sc->status));
	w = ipc_write_new(
	        IPC_OP_UPDATE_STATUS, &kobj_schedules, sc->ns, sc->name, o);
	ipc_write_set_tolerate(w, IPC_TOL_CONFLICT | IPC_TOL_NOT_FOUND);
	rec_write(sc->out, w);
	kobj_status_event(sc->out, sc->obj, sc->status);
}

static void
finish(struct sched *sc, int64_t after_ms)
{
	flush_status(sc);
	if (after_ms < 0) {
		rec_verdict(sc->out, IPC_V_DONE, 0, NULL);
	} else {
		rec_verdict(sc->out, IPC_V_REQUEUE_AFTER,
		        after_ms > 0 ? after_ms : 1, NULL);
	}
}

static void
fail_view(struct sched *sc, const char *what, const char *err)
{
	rec_verdict(sc->out, IPC_V_ERROR, 0, "%s: %s", what, err);
}

/* ---- finalizer ---- */

static bool
has_finalizer(json_object *o)
{
	return (kobj_has_finalizer(o, CONTRACT_FINALIZER_SCHEDULE));
}

/* A merge patch of metadata.finalizers with ours added or removed,
 * guarded by the cached resourceVersion. */
static void
patch_finalizers(struct sched *sc, bool add)
{
	json_object *patch
	        = kobj_finalizer_patch(sc->obj, CONTRACT_FINALIZER_SCHEDULE,
	                (add ? KOBJ_FIN_ADD : 0) | KOBJ_FIN_RV);

	kobj_merge_patch(sc->out, &kobj_schedules, sc->ns, sc->name, patch);
}

/* ---- the due path ---- */

/* Whether s is a non-empty valid label value. */
static bool
label_value(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > LABEL_MAX) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9');
		if (!alnum
		        && ((i == 0 || i == n - 1)
		                || (c != '-' && c != '_' && c != '.'))) {
			return (false);
		}
	}
	return (true);
}

/* When our own last status write has not reached the cache (or failed),
 * an owned run numbered past status.totalRuns exists: take lastRunTime,
 * lastRunName and totalRuns from it instead of firing the tick again. */
static void
repair_from_children(struct sched *sc)
{
	json_object *kids = sc->in->children, *best = NULL;
	int64_t total = status_int(sc->status, "totalRuns"), bk = total;
	int64_t last = status_time(sc->status, "lastRunTime"), created;

	for (size_t i = 0; i < jx_array_len(kids); i++) {
		json_object *c = json_object_array_get_idx(kids, i);
		const char *kind = jx_get_str(c, "kind");
		int64_t k = suffix(kobj_name(c), sc->name);
		if (kind != NULL && strcmp(kind, "AgentRun") == 0 && k > bk) {
			bk = k;
			best = c;
		}
	}
	created = status_time(jx_get(best, "metadata"), "creationTimestamp");
	if (best == NULL || created < 0 || created < last) {
		return;
	}
	set_str(sc, "lastRunTime",
	        jx_get_str(best, "metadata.creationTimestamp"));
	set_str(sc, "lastRunName", kobj_name(best));
	json_object_object_add(
	        sc->status, "totalRuns", json_object_new_int64(bk));
}

/* What the Forbid check and the serving guard read of each run (a
 * projected list). */
static const char *const phase_field[] = { "status.phase" };

static bool
active_phase(const char *ph)
{
	ph = ph != NULL ? ph : "";
	return (strcmp(ph, "Running") == 0 || strcmp(ph, "Pending") == 0
	        || strcmp(ph, "Serving") == 0 || ph[0] == '\0');
}

/* Forbid: whether any run labelled with the schedule's name is still
 * active (later upstream fix #239: a list, not a get of lastRunName, so a
 * stale status cannot let two runs through).  -1 on a view error. */
static int
forbid_blocks(struct sched *sc, bool *blocked)
{
	const char *policy = spec_str(sc->obj, "concurrencyPolicy", "Forbid");
	json_object *items = NULL;
	char sel[128], err[256];

	*blocked = false;
	if (strcmp(policy, "Forbid") != 0) {
		return (0);
	}
	snprintf(sel, sizeof(sel), CONTRACT_LABEL_SCHEDULE "=%s", sc->name);
	if (view_list_fields(sc->in->view, &kobj_agentruns, sc->ns, sel,
	            phase_field, 1, &items, err, sizeof(err))
	        < 0) {
		fail_view(sc, "list the schedule's runs", err);
		return (-1);
	}
	for (size_t i = 0;
	        items != NULL && i < json_object_array_length(items); i++) {
		*blocked = *blocked
		        || active_phase(view_row_str(
		                json_object_array_get_idx(items, i), 0));
	}
	json_object_put(items);
	return (0);
}

/* The serving guard: whether a run of the instance is Serving. */
static int
serving(struct sched *sc, bool *busy)
{
	json_object *items = NULL;
	char sel[128], err[256];

	*busy = false;
	snprintf(sel, sizeof(sel), CONTRACT_LABEL_INSTANCE "=%s", sc->ref);
	if (view_list_fields(sc->in->view, &kobj_agentruns, sc->ns, sel,
	            phase_field, 1, &items, err, sizeof(err))
	        < 0) {
		fail_view(sc, "list the instance's runs", err);
		return (-1);
	}
	for (size_t i = 0;
	        items != NULL && i < json_object_array_length(items); i++) {
		const char *ph
		        = view_row_str(json_object_array_get_idx(items, i), 0);
		*busy = *busy || (ph != NULL && strcmp(ph, "Serving") == 0);
	}
	json_object_put(items);
	return (0);
}

/* The task, prefixed with the instance memory when asked.  Caller frees
 * *task with free(); -1 on a view error. */
static int
task_text(struct sched *sc, char **task)
{
	const char *t = spec_str(sc->obj, "task", "");
	json_object *cm = NULL;
	char name[320], err[256];
	const char *mem;
	int rc = 1;

	if (spec_bool(sc->obj, "includeMemory", true)) {
		snprintf(name, sizeof(name), "%s-memory", sc->ref);
		rc = view_get(sc->in->view, &kobj_configmaps, sc->ns, name,
		        &cm, err, sizeof(err));
	}
	if (rc < 0) {
		fail_view(sc, "get the memory ConfigMap", err);
		return (-1);
	}
	mem = jx_getv(cm, "data", "MEMORY.md", NULL) != NULL
	        ? json_object_get_string(
	                jx_getv(cm, "data", "MEMORY.md", NULL))
	        : NULL;
	if (mem != NULL && mem[0] != '\0') {
		*task = xasprintf(
		        "## Memory Context\n%s\n\n## Task\n%s", mem, t);
	} else {
		*task = xstrdup(t);
	}
	json_object_put(cm);
	return (0);
}

static bool
known(json_object *const lists[2], const char *name)
{
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0;
		        json_object_is_type(lists[l], json_type_array)
		        && i < json_object_array_length(lists[l]);
		        i++) {
			json_object *o
			        = json_object_array_get_idx(lists[l], i);
			if (strcmp(kobj_name(o), name) == 0) {
				return (true);
			}
		}
	}
	return (false);
}

/* Step 12 and the collision part of 14: N past totalRuns and past every
 * `<name>-<k>` run, renamed past names already taken.  0 when 100
 * renames all collide. */
static int64_t
run_number(struct sched *sc)
{
	int64_t n = status_int(sc->status, "totalRuns") + 1;
	json_object *items = NULL, *lists[2];
	char sel[128], err[256], name[IPC_NAME_MAX + 32];
	int tries = 0;

	snprintf(sel, sizeof(sel), CONTRACT_LABEL_SCHEDULE "=%s", sc->name);
	if (view_list(sc->in->view, &kobj_agentruns, sc->ns, sel, &items, err,
	            sizeof(err))
	        == 0) {
		for (size_t i = 0;
		        items != NULL && i < json_object_array_length(items);
		        i++) {
			int64_t k = suffix(
			        kobj_name(json_object_array_get_idx(items, i)),
			        sc->name);
			n = k >= n ? k + 1 : n;
		}
	}
	lists[0] = items;
	lists[1] = sc->in->children;
	for (;;) {
		snprintf(
		        name, sizeof(name), "%s-%lld", sc->name, (long long)n);
		if (!known(lists, name)) {
			break;
		}
		if (++tries >= RENAME_MAX) {
			n = 0;
			break;
		}
		n++;
	}
	json_object_put(items);
	return (n);
}

static void
copy_if(json_object *dst, const char *key, json_object *src)
{
	bool empty = src == NULL
	        || (json_object_is_type(src, json_type_string)
	                && json_object_get_string_len(src) == 0)
	        || (json_object_is_type(src, json_type_object)
	                && json_object_object_length(src) == 0)
	        || (json_object_is_type(src, json_type_array)
	                && json_object_array_length(src) == 0);

	if (!empty) {
		json_object_object_add(dst, key, jx_copy(src));
	}
}

/* The instance's skills without the web endpoint's. */
static json_object *
skills(json_object *inst)
{
	json_object *in = jx_get(inst, "spec.skills");
	json_object *outl = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(in); i++) {
		json_object *s = json_object_array_get_idx(in, i);
		const char *ref = jx_get_str(s, "skillPackRef");
		if (ref != NULL
		        && (strcmp(ref, "web-endpoint") == 0
		                || strcmp(ref, "skillpack-web-endpoint")
		                        == 0)) {
			continue;
		}
		json_object_array_add(outl, jx_copy(s));
	}
	return (outl);
}

/* Step 13: the AgentRun.  Caller puts. */
/* spec.timeout from the instance's runTimeout when it is a positive Go
 * duration, written as Go's Duration.String (later upstream fix #230:
 * the run carries it, so every gate of the run sees the same value). */
static void
run_timeout(json_object *spec, const char *rt)
{
	char buf[DURATION_STR_LEN];
	int64_t ns = 0;

	if (rt == NULL || duration_parse(rt, &ns) != 0 || ns <= 0) {
		return;
	}
	json_object_object_add(spec, "timeout",
	        json_object_new_string(duration_format(ns, buf)));
}

static json_object *
build_run(struct sched *sc, json_object *inst, const char *name,
        const char *task)
{
	json_object *run
	        = kobj_new("sympozium.ai/v1alpha1", "AgentRun", sc->ns, name);
	json_object *spec = json_object_new_object();
	json_object *model = json_object_new_object();
	json_object *def = jx_get(inst, "spec.agents.default");
	const char *m = jx_get_str(def, "model");
	char agent[IPC_NAME_MAX + 16];

	kobj_set_label(run, CONTRACT_LABEL_INSTANCE, sc->ref);
	kobj_set_label(run, CONTRACT_LABEL_SCHEDULE, sc->name);
	kobj_set_label(run, CONTRACT_LABEL_TYPE,
	        spec_str(sc->obj, "type", "scheduled"));
	kobj_set_owner(run, sc->obj);
	snprintf(agent, sizeof(agent), "schedule-%s", sc->name);
	json_object_object_add(
	        spec, "instanceRef", json_object_new_string(sc->ref));
	json_object_object_add(spec, "agentId", json_object_new_string(agent));
	json_object_object_add(spec, "sessionKey", json_object_new_string(""));
	json_object_object_add(spec, "task", json_object_new_string(task));
	json_object_object_add(model, "provider",
	        json_object_new_string(kobj_resolve_provider(inst)));
	json_object_object_add(
	        model, "model", json_object_new_string(m != NULL ? m : ""));
	copy_if(model, "baseURL", jx_get(def, "baseURL"));
	copy_if(model, "thinking", jx_get(def, "thinking"));
	copy_if(model, "nodeSelector", jx_get(def, "nodeSelector"));
	json_object_object_add(model, "authSecretRef",
	        json_object_new_string(kobj_resolve_auth_secret(inst)));
	json_object_object_add(spec, "model", model);
	copy_if(spec, "imagePullSecrets",
	        jx_get(inst, "spec.imagePullSecrets"));
	copy_if(spec, "lifecycle", jx_get(def, "lifecycle"));
	run_timeout(spec, jx_get_str(def, "runTimeout"));
	json_object *sk = skills(inst);
	copy_if(spec, "skills", sk);
	json_object_put(sk);
	json_object_object_add(run, "spec", spec);
	return (run);
}

static int64_t
delay(int64_t next_ms, int64_t now_ms, int64_t cap)
{
	return (next_ms - now_ms < cap ? next_ms - now_ms : cap);
}

/* A cron with no reachable date (later upstream fix #220): Active, no
 * nextRunTime, no run, another look in a minute. */
static void
park(struct sched *sc)
{
	json_object_object_del(sc->status, "nextRunTime");
	set_phase(sc, "Active", NULL, NULL);
	finish(sc, MINUTE_MS);
}

/* Steps 11 to 15, once the guards let the tick through. */
static void
fire(struct sched *sc, const struct cron *c, const char *task)
{
	json_object *inst = NULL;
	char err[256], name[IPC_NAME_MAX + 32];
	int64_t n, next, now = sc->in->now_ms;
	int rc = view_get(sc->in->view, &kobj_instances, sc->ns, sc->ref,
	        &inst, err, sizeof(err));

	if (rc < 0) {
		fail_view(sc, "get the instance", err);
		return;
	}
	if (rc == 1) {
		set_error(sc, "InstanceNotFound", "instance \"%s\" not found",
		        sc->ref);
		finish(sc, MINUTE_MS);
		return;
	}
	if ((n = run_number(sc)) == 0) {
		json_object_put(inst);
		finish(sc, MINUTE_MS);
		return;
	}
	snprintf(name, sizeof(name), "%s-%lld", sc->name, (long long)n);
	if (strlen(name) > LABEL_MAX) {
		set_error(sc, "NameTooLong",
		        "run name \"%s\" is longer than %d "
		        "characters (it is used as a label value)",
		        name, LABEL_MAX);
		json_object_put(inst);
		finish(sc, -1);
		return;
	}
	kobj_create(sc->out, &kobj_agentruns, build_run(sc, inst, name, task),
	        false);
	json_object_put(inst);
	set_time(sc, "lastRunTime", now);
	set_str(sc, "lastRunName", name);
	if (n > status_int(sc->status, "totalRuns")) {
		json_object_object_add(
		        sc->status, "totalRuns", json_object_new_int64(n));
	}
	if (cron_next(c, now, &next) != 0) {
		park(sc);
		return;
	}
	set_time(sc, "nextRunTime", next);
	finish(sc, delay(next, now, MINUTE_MS));
}

/* Steps 8 to 10: the guards and the task, then fire. */
static void
due(struct sched *sc, const struct cron *c)
{
	bool blocked;
	char *task = NULL;

	if (!label_value(sc->ref)) {
		set_error(sc, "InvalidInstanceRef",
		        "spec.instanceRef \"%s\" is "
		        "not a valid instance name",
		        sc->ref);
		finish(sc, -1);
		return;
	}
	if (!label_value(sc->name)) {
		set_error(sc, "NameTooLong",
		        "schedule name \"%s\" is not a "
		        "valid label value (at most %d characters)",
		        sc->name, LABEL_MAX);
		finish(sc, -1);
		return;
	}
	if (forbid_blocks(sc, &blocked) != 0) {
		return;
	}
	if (blocked) {
		finish(sc, FORBID_MS);
		return;
	}
	if (serving(sc, &blocked) != 0) {
		return;
	}
	if (blocked) {
		finish(sc, MINUTE_MS);
		return;
	}
	if (task_text(sc, &task) != 0) {
		return;
	}
	fire(sc, c, task);
	free(task);
}

/* Steps 4 to 7. */
static void
active(struct sched *sc)
{
	const char *expr = spec_str(sc->obj, "schedule", "");
	const char *phase = jx_get_str(sc->status, "phase");
	struct cron *c = NULL;
	char err[256];
	int64_t last, next, now = sc->in->now_ms;
	int rc;

	if (spec_bool(sc->obj, "suspend", false)) {
		if (phase == NULL || strcmp(phase, "Suspended") != 0) {
			set_phase(sc, "Suspended", NULL, NULL);
		}
		finish(sc, MINUTE_MS);
		return;
	}
	/* a sandboxed worker cannot open zone files: it asks the view */
	rc = cron_parse_with(expr, sc->in->view != NULL ? zc_load : NULL,
	        sc->in->view, &c, err, sizeof(err));
	if (rc == CRON_NEVER) {
		park(sc);
		return;
	}
	if (rc != 0) {
		set_error(sc, "InvalidSchedule", "invalid schedule \"%s\": %s",
		        expr, err);
		finish(sc, -1);
		return;
	}
	repair_from_children(sc);
	last = status_time(sc->status, "lastRunTime");
	if (last < 0) {
		last = status_time(
		        jx_get(sc->obj, "metadata"), "creationTimestamp");
		last = (last < 0 ? now : last) - DAY_MS;
	}
	if (cron_next(c, last, &next) != 0) {
		park(sc);
	} else {
		set_time(sc, "nextRunTime", next);
		set_phase(sc, "Active", NULL, NULL);
		if (now < next) {
			finish(sc, delay(next, now, MINUTE_MS));
		} else {
			due(sc, c);
		}
	}
	cron_free(c);
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	struct sched sc = { .in = in, .out = out, .obj = in->object };

	if (in->object == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	sc.ns = kobj_ns(sc.obj);
	sc.name = kobj_name(sc.obj);
	sc.ref = spec_str(sc.obj, "instanceRef", "");
	if (jx_getv(sc.obj, "metadata", "deletionTimestamp", NULL) != NULL) {
		if (has_finalizer(sc.obj)) {
			patch_finalizers(&sc, false);
		}
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	if (!has_finalizer(sc.obj)) {
		/* the patch's watch event brings the next pass: a status
		 * write now would need the resourceVersion the patch makes,
		 * and a run created now would not be recorded */
		patch_finalizers(&sc, true);
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	sc.status = jx_copy_obj(jx_get(sc.obj, "status"));
	active(&sc);
	json_object_put(sc.status);
}

const struct reconciler schedule_reconciler = { "schedule", reconcile };
