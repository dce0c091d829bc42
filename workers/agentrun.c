/*
 * agentrun.c: the AgentRun reconciler (spec 1.2-1.10, 1.14-1.16): the
 * top-level dispatch, finalizer, the Pending path (policy, SA, input
 * ConfigMap, skills, mirrors, RBAC, Job), the Running path (Job counters,
 * the agent container, log result, timeout), the Completed path (cluster
 * RBAC cleanup, finalizer, history pruning) and the Delete path.  The Job
 * itself is built by agentrun_job.c, logs are parsed by
 * agentrun_result.c, server-mode runs (Pending with spec.mode
 * "server", phase Serving) are handled by agentrun_server.c, and
 * postRun hooks (workspace PVC, phase PostRunning) by
 * agentrun_postrun.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/duration.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/agentrun.h"
#include "workers/agentrun_job.h"
#include "workers/agentrun_mcp.h"
#include "workers/agentrun_postrun.h"
#include "workers/agentrun_result.h"
#include "workers/agentrun_sandbox.h"
#include "workers/agentrun_server.h"
#include "workers/kobj.h"
#include "workers/view.h"
#include "workers/wtel.h"

#define AGENT_SA "sympozium-agent"

/* One reconcile. */
struct ctx {
	const struct rec_in *in;
	struct rec_out *out;
	json_object *run;    /* in->object, borrowed */
	json_object *status; /* the status being written, owned */
	const char *name, *ns;
	/* OpenTelemetry (wtel.h): upstream's agentrun.reconcile span, the
	 * phase's span (create_job, extract_result) and the sandbox's
	 * (create_sandbox, check_sandbox) */
	struct wtel_span rspan, pspan, sspan;
};

static void span_start(struct ctx *c, struct wtel_span *s,
        struct wtel_span *parent, const char *name);

static const char *
spec_str(struct ctx *c, const char *path)
{
	const char *s
	        = jx_get_str(json_object_object_get(c->run, "spec"), path);

	return (s != NULL ? s : "");
}

static const char *
st_str(struct ctx *c, const char *key)
{
	const char *s = jx_get_str(c->status, key);

	return (s != NULL ? s : "");
}

static void
st_set(struct ctx *c, const char *key, const char *value)
{
	json_object_object_add(c->status, key, json_object_new_string(value));
}

static void
st_now(struct ctx *c, const char *key)
{
	char ts[TIMEFMT_RFC3339_LEN];

	timefmt_rfc3339(c->in->now_ms / 1000, ts);
	st_set(c, key, ts);
}

/* The Event for a phase transition (issue 6 item 4), after the status
 * write: started (Job created), succeeded, failed or timed out. */
static void
phase_event(struct ctx *c, json_object *old)
{
	const char *was = jx_get_str(old, "phase"), *now = st_str(c, "phase");
	const char *err = st_str(c, "error");

	if (was != NULL && strcmp(was, now) == 0) {
		return;
	}
	if (strcmp(now, "Running") == 0
	        && agentrun_sandbox_active(c->status)) {
		kobj_eventf(c->out, c->run, KOBJ_NORMAL, "Started",
		        st_str(c, "sandboxClaimName")[0] != '\0'
		                ? "Created SandboxClaim %s"
		                : "Created Sandbox %s",
		        st_str(c, "sandboxName"));
	} else if (strcmp(now, "Running") == 0) {
		kobj_eventf(c->out, c->run, KOBJ_NORMAL, "Started",
		        "Created Job %s", st_str(c, "jobName"));
	} else if (strcmp(now, "Succeeded") == 0) {
		kobj_event(c->out, c->run, KOBJ_NORMAL, "Succeeded",
		        "The agent run succeeded");
	} else if (strcmp(now, "Skipped") == 0) {
		kobj_event(c->out, c->run, KOBJ_NORMAL, "Skipped",
		        st_str(c, "result"));
	} else if (strcmp(now, "Failed") == 0) {
		kobj_event(c->out, c->run, KOBJ_WARNING,
		        strcmp(err, "timeout") == 0 ? "Timeout" : "Failed",
		        err[0] != '\0' ? err : "The agent run failed");
	}
}

/* The innermost live span (the context upstream's log records carry). */
static const struct w3t_ctx *
span_ctx(struct ctx *c)
{
	return (c->sspan.live           ? &c->sspan.ctx
	                : c->pspan.live ? &c->pspan.ctx
	                                : &c->rspan.ctx);
}

/* Upstream succeedRun's and failRun's metrics and log records, and the
 * serving gauge of reconcilePendingServer, at the phase transition. */
static void
phase_telemetry(struct ctx *c, json_object *old)
{
	const char *was = jx_get_str(old, "phase"), *now = st_str(c, "phase");
	const char *inst = spec_str(c, "instanceRef");
	json_object *a;
	int64_t v;

	if (!wtel_on() || (was != NULL && strcmp(was, now) == 0)) {
		return;
	}
	if (strcmp(now, "Serving") == 0) {
		wtel_count(c->out, "sympozium.web_endpoint.serving", 1,
		        "sympozium.instance", inst, NULL, NULL);
		return;
	}
	if (strcmp(now, "Skipped") == 0) { /* #228's skipRun */
		wtel_count(c->out, "sympozium.agent.runs", 1,
		        "sympozium.agent.status", "skipped",
		        "sympozium.instance", inst);
		return;
	}
	if (strcmp(now, "Succeeded") != 0 && strcmp(now, "Failed") != 0) {
		return;
	}
	wtel_count(c->out, "sympozium.agent.runs", 1, "sympozium.agent.status",
	        now[0] == 'S' ? "succeeded" : "failed", "sympozium.instance",
	        inst);
	a = json_object_new_object();
	json_object_object_add(
	        a, "agent_run", json_object_new_string(c->name));
	json_object_object_add(a, "instance", json_object_new_string(inst));
	if (now[0] == 'F') {
		wtel_count(c->out, "sympozium.errors", 1, "error.type",
		        "agent_run_failed", "sympozium.instance", inst);
		json_object_object_add(a, "error",
		        json_object_new_string(st_str(c, "error")));
		wtel_log(c->out, "agent.run.failed", a, span_ctx(c));
		return;
	}
	json_object_object_add(
	        a, "status", json_object_new_string("succeeded"));
	if (jx_get(c->status, "tokenUsage") != NULL) {
		static const char *const f[][2]
		        = { { "inputTokens", "input_tokens" },
			          { "outputTokens", "output_tokens" },
			          { "toolCalls", "tool_calls" },
			          { "durationMs", "duration_ms" } };

		for (size_t i = 0; i < 4; i++) {
			v = 0;
			jx_get_int(json_object_object_get(
			                   c->status, "tokenUsage"),
			        f[i][0], &v);
			json_object_object_add(
			        a, f[i][1], json_object_new_int64(v));
		}
		if (v > 0) { /* durationMs */
			wtel_record(c->out, "sympozium.agent.duration_ms",
			        (double)v, "sympozium.agent.status",
			        "succeeded", "sympozium.instance", inst);
		}
	}
	wtel_log(c->out, "agent.run.succeeded", a, span_ctx(c));
}

/* Emits the status when it differs from the cached one. */
static void
flush_status(struct ctx *c)
{
	json_object *old = json_object_object_get(c->run, "status");
	json_object *obj;

	if (old != NULL && jx_equal(old, c->status)) {
		return;
	}
	if (old == NULL && json_object_object_length(c->status) == 0) {
		return;
	}
	obj = jx_copy(c->run);
	json_object_object_add(obj, "status", json_object_get(c->status));
	kobj_update_status(c->out, &kobj_agentruns, obj);
	phase_event(c, old);
	phase_telemetry(c, old);
	agentrun_postrun_events(c->out, c->run, old, c->status);
}

static void fail_run(struct ctx *c, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* spec 1.10 failRun. */
static void
fail_run(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	st_set(c, "phase", "Failed");
	st_now(c, "completedAt");
	st_set(c, "error", msg);
	log_debug("agentrun %s/%s: failed: %s", c->ns, c->name, msg);
}

static json_object *
usage_json(const struct agentrun_result *r)
{
	json_object *u = json_object_new_object();

	json_object_object_add(
	        u, "inputTokens", json_object_new_int64(r->input_tokens));
	json_object_object_add(
	        u, "outputTokens", json_object_new_int64(r->output_tokens));
	json_object_object_add(
	        u, "totalTokens", json_object_new_int64(r->total_tokens));
	json_object_object_add(
	        u, "toolCalls", json_object_new_int64(r->tool_calls));
	json_object_object_add(
	        u, "durationMs", json_object_new_int64(r->duration_ms));
	return (u);
}

/* spec 1.10 succeedRun. */
static void
succeed_run(struct ctx *c, const struct agentrun_result *r)
{
	st_set(c, "phase", "Succeeded");
	st_now(c, "completedAt");
	st_set(c, "result", r->result != NULL ? r->result : "");
	if (r->has_usage) {
		json_object_object_add(c->status, "tokenUsage", usage_json(r));
	} else {
		json_object_object_del(c->status, "tokenUsage");
	}
}

/* Later upstream fix #228 skipRun: a preRun hook skipped the run before
 * any LLM call; terminal, postRun hooks and memory bypassed. */
static void
skip_run(struct ctx *c, const struct agentrun_result *r)
{
	st_set(c, "phase", "Skipped");
	st_now(c, "completedAt");
	st_set(c, "result", r->result != NULL ? r->result : "");
}

static bool
has_finalizer(json_object *run)
{
	return (kobj_has_finalizer(run, CONTRACT_FINALIZER_AGENTRUN));
}

/* Full Update adding the finalizer (spec 1.2 step 4). */
static void
add_finalizer(struct ctx *c)
{
	json_object *obj = NULL;

	obj = jx_copy(c->run);
	jx_setv(obj,
	        kobj_finalizers(c->run, CONTRACT_FINALIZER_AGENTRUN, true),
	        "metadata", "finalizers", NULL);
	json_object_object_del(obj, "status");
	kobj_update(c->out, &kobj_agentruns, obj);
}

/* Merge patch removing the finalizer (spec 1.6 step 3, 1.9 step 4). */
static void
remove_finalizer(struct ctx *c)
{
	json_object *patch = kobj_finalizer_patch(
	        c->run, CONTRACT_FINALIZER_AGENTRUN, KOBJ_FIN_NULL_EMPTY);

	kobj_merge_patch(c->out, &kobj_agentruns, c->ns, c->name, patch);
}

static void
delete_with(struct ctx *c, const struct ipc_res *res, const char *ns,
        const char *name, const char *propagation)
{
	json_object *w = ipc_write_new(IPC_OP_DELETE, res, ns, name, NULL);

	ipc_write_set_propagation(w, propagation);
	ipc_write_set_tolerate(w, IPC_TOL_NOT_FOUND);
	rec_write(c->out, w);
}

/* Deletes the cluster-scoped skill RBAC of the run (spec 1.9 step 1);
 * errors are ignored. */
static void
delete_cluster_rbac(struct ctx *c)
{
	const struct ipc_res *kinds[]
	        = { &kobj_clusterroles, &kobj_clusterrolebindings };
	char *sel = xasprintf("%s=%s,%s=sympozium", CONTRACT_LABEL_AGENT_RUN,
	        c->name, CONTRACT_LABEL_MANAGED_BY);

	for (size_t k = 0; k < 2; k++) {
		json_object *items = NULL;
		char err[256];
		if (view_list(c->in->view, kinds[k], NULL, sel, &items, err,
		            sizeof(err))
		        != 0) {
			log_debug("agentrun %s: %s", c->name, err);
			continue;
		}
		for (size_t i = 0; i < json_object_array_length(items); i++) {
			delete_with(c, kinds[k], NULL,
			        kobj_name(json_object_array_get_idx(items, i)),
			        "Background");
		}
		json_object_put(items);
	}
	free(sel);
}

static bool
terminal(const char *phase)
{
	return (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0
	        || strcmp(phase, "Skipped") == 0); /* #228 */
}

/* What pruning reads of each run of the instance, a row of a projected
 * list (whole runs made every pass O(runs) bytes, O(runs^2) a burst). */
enum { P_NAME, P_CREATED, P_PHASE, P_N };
static const char *const prune_fields[P_N]
        = { "metadata.name", "metadata.creationTimestamp", "status.phase" };

/* Rows by creationTimestamp, then name. */
static int
by_creation(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a;
	json_object *y = *(json_object *const *)b;
	int d = strcmp(view_row_str(x, P_CREATED) ?: "",
	        view_row_str(y, P_CREATED) ?: "");

	return (d != 0 ? d
	               : strcmp(view_row_str(x, P_NAME) ?: "",
	                       view_row_str(y, P_NAME) ?: ""));
}

/* The history limit: env AGENTRUN_HISTORY_ENV (sympoziumd's
 * --max-run-history), AGENTRUN_HISTORY when unset, invalid or <= 0. */
static size_t
history_limit(void)
{
	const char *v = getenv(AGENTRUN_HISTORY_ENV);
	char *end = NULL;
	long long n;

	if (v == NULL || v[0] == '\0') {
		return (AGENTRUN_HISTORY);
	}
	n = strtoll(v, &end, 10);
	return (*end == '\0' && n > 0 ? (size_t)n : AGENTRUN_HISTORY);
}

/* Deletes the oldest completed runs of the instance beyond the history
 * limit (spec 1.6 step 4), at most AGENTRUN_PRUNE_MAX of them; errors are
 * logged only.  True when more are left for a later pass (found by the
 * scale suite: 3,000 runs of one instance made one pass of 1,542
 * deletes, a RESULT the supervisor refuses). */
static bool
prune_history(struct ctx *c)
{
	const char *inst = spec_str(c, "instanceRef");
	json_object *items = NULL;
	json_object **done;
	size_t n = 0, total, limit = history_limit(), excess;
	char err[256], *sel;

	if (inst[0] == '\0') {
		return (false);
	}
	sel = xasprintf(CONTRACT_LABEL_INSTANCE "=%s", inst);
	if (view_list_fields(c->in->view, &kobj_agentruns, c->ns, sel,
	            prune_fields,
	            sizeof(prune_fields) / sizeof(prune_fields[0]), &items,
	            err, sizeof(err))
	        != 0) {
		log_warnx("agentrun %s: pruning: %s", c->name, err);
		free(sel);
		return (false);
	}
	free(sel);
	total = json_object_array_length(items);
	done = xcalloc(total + 1, sizeof(*done));
	for (size_t i = 0; i < total; i++) {
		json_object *r = json_object_array_get_idx(items, i);
		if (terminal(view_row_str(r, P_PHASE) ?: "")
		        && view_row_str(r, P_NAME) != NULL) {
			done[n++] = r;
		}
	}
	qsort(done, n, sizeof(*done), by_creation);
	excess = n > limit ? n - limit : 0;
	for (size_t i = 0; i < excess && i < AGENTRUN_PRUNE_MAX; i++) {
		kobj_delete(c->out, &kobj_agentruns, c->ns,
		        view_row_str(done[i], P_NAME), true);
	}
	free(done);
	json_object_put(items);
	return (excess > AGENTRUN_PRUNE_MAX);
}

/* spec 1.6. */
static void
completed(struct ctx *c)
{
	/* Without our finalizer the cluster RBAC cleanup has already run:
	 * the writer stops at the first failed write, and the finalizer
	 * goes after the deletes in the same result.  Skipping spares two
	 * live LISTs per completed run on every resync and start-up (the
	 * start benchmark, docs/benchmarks.md). */
	if (has_finalizer(c->run)) {
		delete_cluster_rbac(c);
	}
	agentrun_postrun_cleanup(c->in, c->out, c->status);
	if (has_finalizer(c->run)) {
		remove_finalizer(c);
	}
	if (prune_history(c)) {
		rec_verdict(c->out, IPC_V_REQUEUE_AFTER,
		        AGENTRUN_PRUNE_AGAIN_MS, NULL);
	} else {
		rec_verdict(c->out, IPC_V_DONE, 0, NULL);
	}
}

/* The HTTPRoute <run>-web (spec 1.9 step 3), when cached: one the cache
 * does not hold (the Gateway API not served at start-up) goes with the
 * run by garbage collection, through its owner reference. */
static void
delete_route(struct ctx *c)
{
	char *name = xasprintf("%s-web", c->name);

	if (kobj_child(c->in->children, "HTTPRoute", name) != NULL) {
		kobj_delete(c->out, &kobj_httproutes, c->ns, name, true);
	}
	free(name);
}

/* spec 1.9. */
static void
deleting(struct ctx *c)
{
	if (!has_finalizer(c->run)) {
		rec_verdict(c->out, IPC_V_DONE, 0, NULL);
		return;
	}
	delete_cluster_rbac(c);
	/* only a cached Job: the main Job of a PostRunning run is often
	 * gone (deleted by the sidecar path, or its TTL), and a delete of an
	 * object the caches do not hold is a policy violation; garbage
	 * collection takes it with the run anyway */
	if (kobj_child(c->in->children, "Job", st_str(c, "jobName")) != NULL) {
		delete_with(c, &kobj_jobs, c->ns, st_str(c, "jobName"),
		        "Foreground");
	}
	if (st_str(c, "deploymentName")[0] != '\0') {
		delete_with(c, &kobj_deployments, c->ns,
		        st_str(c, "deploymentName"), "Foreground");
		wtel_count(c->out, "sympozium.web_endpoint.serving", -1,
		        "sympozium.instance", spec_str(c, "instanceRef"), NULL,
		        NULL);
	}
	if (st_str(c, "serviceName")[0] != '\0') {
		delete_with(c, &kobj_services, c->ns, st_str(c, "serviceName"),
		        "Background");
	}
	delete_route(c);
	remove_finalizer(c);
	rec_verdict(c->out, IPC_V_DONE, 0, NULL);
}

/* Runs view_get; returns 0 (found), 1 (missing) or -1 (the reconcile
 * ends with an error verdict). */
static int
get(struct ctx *c, const struct ipc_res *res, const char *ns, const char *name,
        json_object **out)
{
	char err[256];
	int rc;

	*out = NULL;
	if (name == NULL || name[0] == '\0') {
		return (1);
	}
	rc = view_get(c->in->view, res, ns, name, out, err, sizeof(err));
	if (rc < 0) {
		rec_verdict(c->out, IPC_V_ERROR, 0, "%s", err);
	}
	return (rc);
}

static int64_t
int_or(json_object *o, const char *path, int64_t def)
{
	int64_t v = def;

	jx_get_int(o, path, &v);
	return (v);
}

static const char *const phase_field[] = { "status.phase" };

/* The Running runs of the instance (a list error: -1, check skipped). */
static int64_t
running_count(struct ctx *c)
{
	char *sel = xasprintf(
	        CONTRACT_LABEL_INSTANCE "=%s", spec_str(c, "instanceRef"));
	json_object *items = NULL;
	char err[256];
	int64_t n = 0;

	if (view_list_fields(c->in->view, &kobj_agentruns, c->ns, sel,
	            phase_field, 1, &items, err, sizeof(err))
	        != 0) {
		free(sel);
		return (-1);
	}
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		const char *p
		        = view_row_str(json_object_array_get_idx(items, i), 0);
		n += p != NULL && strcmp(p, "Running") == 0;
	}
	json_object_put(items);
	free(sel);
	return (n);
}

/* Depth and concurrency limits of a policy; 0 passes, 1 failed. */
static int
check_subagents(struct ctx *c, json_object *sp)
{
	int64_t max_depth = int_or(sp, "maxDepth", 3);
	int64_t max_conc = int_or(sp, "maxConcurrent", 5);
	json_object *parent = jx_get(c->run, "spec.parent");
	int64_t depth = int_or(parent, "spawnDepth", 0), n;

	if (parent != NULL && depth > max_depth) {
		fail_run(c,
		        "policy validation failed: sub-agent depth %lld "
		        "exceeds max %lld",
		        (long long)depth, (long long)max_depth);
		return (1);
	}
	n = running_count(c);
	if (n >= 0 && n >= max_conc) {
		fail_run(c,
		        "policy validation failed: concurrency limit "
		        "reached: %lld/%lld",
		        (long long)n, (long long)max_conc);
		return (1);
	}
	return (0);
}

/* spec 1.3 step 1.  Returns 0 with *inst (caller puts), 1 when the run
 * failed, -1 on a view error. */
static int
validate(struct ctx *c, json_object **inst)
{
	const char *ref = spec_str(c, "instanceRef");
	const char *pref;
	json_object *pol = NULL, *sp;
	int rc = get(c, &kobj_instances, c->ns, ref, inst);

	if (rc != 0) {
		if (rc == 1) {
			fail_run(c,
			        "policy validation failed: instance \"%s\" "
			        "not found: sympoziuminstances.sympozium.ai "
			        "\"%s\" not found",
			        ref, ref);
		}
		return (rc);
	}
	pref = jx_get_str(*inst, "spec.policyRef");
	if (pref == NULL || pref[0] == '\0') {
		return (0);
	}
	if ((rc = get(c, &kobj_policies, c->ns, pref, &pol)) != 0) {
		if (rc == 1) {
			fail_run(c,
			        "policy validation failed: policy \"%s\" "
			        "not found: sympoziumpolicies.sympozium.ai "
			        "\"%s\" not found",
			        pref, pref);
		}
		return (rc);
	}
	sp = jx_get(pol, "spec.subagentPolicy");
	rc = sp != NULL ? check_subagents(c, sp) : 0;
	json_object_put(pol);
	return (rc);
}

/* A timeout that does not parse (upstream cannot even decode such a
 * run), features this build rejects, and the gate checks (spec 1.3
 * steps 2, 3, 10; 1.7; 1.11); a server-mode run goes to
 * agentrun_server_pending() (spec 1.4).  Returns 1 when the run failed,
 * 2 when the server path took it, 3 for an agent-sandbox run (its CRDs
 * served: agentrun_sandbox.h), -1 on a view error. */
static int
unsupported(struct ctx *c)
{
	const char *to = spec_str(c, "timeout");
	int64_t ns = 0;

	if (strlen(c->name) > 63) {
		fail_run(c,
		        "run name is longer than 63 characters (it is used "
		        "as a label value)");
	} else if (to[0] != '\0' && duration_parse(to, &ns) != 0) {
		fail_run(c,
		        "invalid timeout \"%s\": want a duration such as "
		        "\"10m\" or \"1h30m\"",
		        to);
	} else if (to[0] != '\0' && ns <= 0) {
		fail_run(c, "invalid timeout \"%s\": must be positive", to);
	} else if (agentrun_postrun_validate(c->run) != NULL) {
		fail_run(c, "%s", agentrun_postrun_validate(c->run));
	} else if (agentrun_sandbox_wanted(c->run)
	        && !agentrun_sandbox_served()) {
		fail_run(c, AGENTRUN_SANDBOX_ABSENT);
	} else if (agentrun_sandbox_wanted(c->run)) {
		return (3);
	} else if (strcmp(spec_str(c, "mode"), "server") == 0) {
		return (agentrun_server_pending(c->in, c->out, c->status));
	} else {
		return (0);
	}
	return (1);
}

/* What the Pending path works out before writing. */
struct plan {
	json_object *inst;   /* the instance, owned */
	json_object *skills; /* effective skill refs, borrowed */
	json_object *packs;  /* SkillPacks holding the sidecars, owned */
	struct agentrun_sidecar *sc;
	size_t nsc;
	int64_t timeout_s;
	json_object *mcp;    /* resolved MCP servers, owned */
	char *shared_access; /* shared-memory access, owned; NULL: none */
};

static void
plan_fini(struct plan *p)
{
	json_object_put(p->inst);
	json_object_put(p->packs);
	json_object_put(p->mcp);
	free(p->shared_access);
	free(p->sc);
}

/* A timeout in milliseconds from a Go duration, rounded up (a positive
 * "1ns" is 1 ms, not none); 0 when absent, invalid or not positive. */
static int64_t
ms_of(const char *d)
{
	int64_t ns = 0;

	if (d == NULL || d[0] == '\0' || duration_parse(d, &ns) != 0
	        || ns <= 0) {
		return (0);
	}
	return (ns / 1000000 + (ns % 1000000 != 0));
}

/* A timeout in seconds (the Job's deadline), at least 1 when positive;
 * 0 when absent or invalid. */
static int64_t
seconds_of(const char *d)
{
	int64_t ms = ms_of(d);

	return (ms > 0 && ms < 1000 ? 1 : ms / 1000);
}

/* Skills, timeout inherited from the instance in memory (spec 1.3
 * step 6). */
static void
inherit(struct ctx *c, struct plan *p)
{
	json_object *own = jx_get(c->run, "spec.skills");
	json_object *theirs = jx_get(p->inst, "spec.skills");
	const char *src = kobj_label(c->run, CONTRACT_LABEL_SOURCE);

	p->skills = own;
	if (jx_array_len(own) == 0 && jx_array_len(theirs) > 0
	        && (src == NULL || strcmp(src, "web-proxy") != 0)) {
		p->skills = theirs;
	}
	p->timeout_s = seconds_of(spec_str(c, "timeout"));
	if (p->timeout_s == 0) {
		p->timeout_s = seconds_of(
		        jx_get_str(p->inst, "spec.agents.default.runTimeout"));
	}
}

/* The SkillPack of a ref in the run's namespace, else the system one. */
static int
find_pack(struct ctx *c, const char *ref, json_object **pack)
{
	const char *name
	        = strncmp(ref, "skillpack-", 10) == 0 ? ref + 10 : ref;
	int rc = get(c, &kobj_skillpacks, c->ns, name, pack);

	if (rc == 1) {
		rc = get(c, &kobj_skillpacks, KOBJ_SYSTEM_NS, name, pack);
	}
	return (rc);
}

/* spec 1.3 steps 9 and 11.  Returns -1 on a view error. */
static int
resolve_sidecars(struct ctx *c, struct plan *p)
{
	size_t n = jx_array_len(p->skills);

	p->packs = json_object_new_array();
	p->sc = xcalloc(n + 1, sizeof(*p->sc));
	for (size_t i = 0; i < n; i++) {
		json_object *ref = json_object_array_get_idx(p->skills, i);
		const char *name = jx_get_str(ref, "skillPackRef");
		json_object *pack = NULL, *sc;
		bool server = false;
		int rc;
		if (name == NULL || name[0] == '\0') {
			continue;
		}
		if ((rc = find_pack(c, name, &pack)) != 0) {
			if (rc < 0) {
				return (-1);
			}
			continue;
		}
		json_object_array_add(p->packs, pack);
		sc = jx_get(pack, "spec.sidecar");
		jx_get_bool(sc, "requiresServer", &server);
		if (jx_get_str(sc, "image") == NULL
		        || jx_get_str(sc, "image")[0] == '\0' || server) {
			continue;
		}
		p->sc[p->nsc++] = (struct agentrun_sidecar) {
			strncmp(name, "skillpack-", 10) == 0 ? name + 10
			                                     : name,
			sc, jx_get(ref, "params")
		};
	}
	return (0);
}

static json_object *
owned(struct ctx *c, const char *api, const char *kind, const char *name)
{
	json_object *o = kobj_new(api, kind, c->ns, name);

	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, c->name);
	kobj_set_owner(o, c->run);
	return (o);
}

/* spec 1.3 steps 4 and 5. */
static void
ensure_sa_and_input(struct ctx *c)
{
	json_object *sa = kobj_new("v1", "ServiceAccount", c->ns, AGENT_SA);
	char *name = xasprintf("%s-input", c->name);
	json_object *cm = owned(c, "v1", "ConfigMap", name);
	json_object *data = json_object_new_object();

	kobj_set_label(sa, CONTRACT_LABEL_K8S_MANAGED_BY, "sympozium");
	kobj_create(c->out, &kobj_serviceaccounts, sa, true);
	json_object_object_add(
	        data, "task", json_object_new_string(spec_str(c, "task")));
	json_object_object_add(data, "system-prompt",
	        json_object_new_string(spec_str(c, "systemPrompt")));
	json_object_object_add(data, "agent-id",
	        json_object_new_string(spec_str(c, "agentId")));
	json_object_object_add(data, "session-key",
	        json_object_new_string(spec_str(c, "sessionKey")));
	json_object_object_add(cm, "data", data);
	kobj_create(c->out, &kobj_configmaps, cm, true);
	free(name);
}

/* The MCPServer of an entry: in the run's namespace, else the system
 * one.  Returns 0 (*srv may be NULL: none) or -1 on a view error. */
static int
find_mcp(struct ctx *c, json_object *entry, json_object **srv)
{
	const char *name = jx_get_str(entry, "name");
	int rc;

	*srv = NULL;
	if (jx_get_str(entry, "url") != NULL
	        && jx_get_str(entry, "url")[0] != '\0') {
		return (0);
	}
	rc = get(c, &kobj_mcpservers, c->ns, name, srv);
	if (rc == 1) {
		rc = get(c, &kobj_mcpservers, KOBJ_SYSTEM_NS, name, srv);
	}
	return (rc < 0 ? -1 : 0);
}

/* spec 1.3 step 7 [PERIPH]: the ConfigMap <run>-mcp-servers of the
 * instance's reachable MCP servers, kept in p->mcp for the Job's
 * mcp-discover/mcp-bridge containers.  Returns -1 on a view error. */
static int
mcp_config(struct ctx *c, struct plan *p)
{
	json_object *list = jx_get(p->inst, "spec.mcpServers");
	json_object *servers = json_object_new_array(), *cm, *srv;
	char *name, *yaml;

	for (size_t i = 0; i < jx_array_len(list); i++) {
		json_object *e = json_object_array_get_idx(list, i), *r;
		if (find_mcp(c, e, &srv) != 0) {
			json_object_put(servers);
			return (-1);
		}
		if ((r = agentrun_mcp_resolve(e, srv)) != NULL) {
			json_object_array_add(servers, r);
		}
		json_object_put(srv);
	}
	if (json_object_array_length(servers) > 0) {
		name = xasprintf("%s-mcp-servers", c->name);
		cm = owned(c, "v1", "ConfigMap", name);
		kobj_set_label(cm, CONTRACT_LABEL_INSTANCE,
		        spec_str(c, "instanceRef"));
		kobj_set_label(cm, CONTRACT_LABEL_COMPONENT, "mcp-config");
		yaml = agentrun_mcp_yaml(servers);
		jx_setv(cm, json_object_new_string(yaml), "data",
		        AGENTRUN_MCP_KEY, NULL);
		kobj_create(c->out, &kobj_configmaps, cm, true);
		free(yaml);
		free(name);
	}
	p->mcp = servers;
	return (0);
}

/* Mirrors one system ConfigMap into the run's namespace. */
static int
mirror_one(struct ctx *c, const char *name)
{
	json_object *src = NULL, *dst = NULL, *copy;
	json_object *data = NULL;
	int rc = get(c, &kobj_configmaps, KOBJ_SYSTEM_NS, name, &src);

	if (rc == 0) {
		data = json_object_object_get(src, "data");
		rc = get(c, &kobj_configmaps, c->ns, name, &dst);
	}
	if (rc == 0 && !jx_equal(json_object_object_get(dst, "data"), data)) {
		json_object_object_add(dst, "data", json_object_get(data));
		kobj_update(c->out, &kobj_configmaps, json_object_get(dst));
	} else if (rc == 1 && src != NULL) {
		copy = owned(c, "v1", "ConfigMap", name);
		kobj_set_label(
		        copy, CONTRACT_LABEL_COMPONENT, "skillpack-mirror");
		kobj_set_label(copy, CONTRACT_LABEL_MANAGED_BY, "sympozium");
		json_object_object_add(copy, "data", json_object_get(data));
		kobj_create(c->out, &kobj_configmaps, copy, true);
	}
	json_object_put(src);
	json_object_put(dst);
	return (rc < 0 ? -1 : 0);
}

/* spec 1.3 step 13.  Returns -1 on a view error. */
static int
mirror_skills(struct ctx *c, struct plan *p)
{
	if (strcmp(c->ns, KOBJ_SYSTEM_NS) == 0) {
		return (0);
	}
	for (size_t i = 0; i < jx_array_len(p->skills); i++) {
		json_object *ref = json_object_array_get_idx(p->skills, i);
		const char *name = jx_get_str(ref, "skillPackRef");
		if (name == NULL || name[0] == '\0') {
			name = jx_get_str(ref, "configMapRef");
		}
		if (name != NULL && name[0] != '\0'
		        && mirror_one(c, name) != 0) {
			return (-1);
		}
	}
	return (0);
}

static void
rbac_labels(struct ctx *c, json_object *o, const char *skill,
        const char *component)
{
	kobj_set_label(o, CONTRACT_LABEL_AGENT_RUN, c->name);
	if (skill != NULL) {
		kobj_set_label(o, CONTRACT_LABEL_SKILL, skill);
	}
	if (component != NULL) {
		kobj_set_label(o, CONTRACT_LABEL_COMPONENT, component);
	}
	kobj_set_label(o, CONTRACT_LABEL_MANAGED_BY, "sympozium");
}

/* A Role (or ClusterRole) with rules and its binding to the agent SA. */
static void
role_pair(struct ctx *c, bool cluster, const char *name, json_object *rules,
        const char *skill, const char *component)
{
	const char *ns = cluster ? NULL : c->ns;
	json_object *role = kobj_new("rbac.authorization.k8s.io/v1",
	        cluster ? "ClusterRole" : "Role", ns, name);
	json_object *bind = kobj_new("rbac.authorization.k8s.io/v1",
	        cluster ? "ClusterRoleBinding" : "RoleBinding", ns, name);
	json_object *subj = json_object_new_object();
	json_object *subjects = json_object_new_array();

	rbac_labels(c, role, skill, component);
	rbac_labels(c, bind, skill, component);
	if (!cluster) {
		kobj_set_owner(role, c->run);
		kobj_set_owner(bind, c->run);
	}
	json_object_object_add(role, "rules", json_object_get(rules));
	jx_setv(bind, json_object_new_string("rbac.authorization.k8s.io"),
	        "roleRef", "apiGroup", NULL);
	jx_setv(bind, json_object_new_string(cluster ? "ClusterRole" : "Role"),
	        "roleRef", "kind", NULL);
	jx_setv(bind, json_object_new_string(name), "roleRef", "name", NULL);
	json_object_object_add(
	        subj, "kind", json_object_new_string("ServiceAccount"));
	json_object_object_add(subj, "name", json_object_new_string(AGENT_SA));
	json_object_object_add(
	        subj, "namespace", json_object_new_string(c->ns));
	json_object_array_add(subjects, subj);
	json_object_object_add(bind, "subjects", subjects);
	kobj_create(c->out, cluster ? &kobj_clusterroles : &kobj_roles, role,
	        true);
	kobj_create(c->out,
	        cluster ? &kobj_clusterrolebindings : &kobj_rolebindings, bind,
	        true);
}

/* spec 1.3 steps 14 and 15. */
static void
rbac(struct ctx *c, struct plan *p)
{
	json_object *lrules = jx_get(c->run, "spec.lifecycle.rbac");

	for (size_t i = 0; i < p->nsc; i++) {
		const struct agentrun_sidecar *s = &p->sc[i];
		char *name
		        = xasprintf("sympozium-skill-%s-%s", s->pack, c->name);
		json_object *r = json_object_object_get(s->sidecar, "rbac");
		json_object *cr
		        = json_object_object_get(s->sidecar, "clusterRBAC");
		if (jx_array_len(r) > 0) {
			role_pair(c, false, name, r, s->pack, NULL);
		}
		if (jx_array_len(cr) > 0) {
			role_pair(c, true, name, cr, s->pack, NULL);
		}
		free(name);
	}
	if (jx_array_len(lrules) > 0) {
		char *name = xasprintf("sympozium-lifecycle-%s", c->name);
		role_pair(c, false, name, lrules, NULL, "lifecycle");
		free(name);
	}
}

/* The run's persona-pack label as the Pending path sees it: the
 * instance's copied over the run's own (spec 1.3 step 6). */
static const char *
persona_pack(struct ctx *c, struct plan *p)
{
	const char *v = kobj_label(p->inst, CONTRACT_LABEL_PERSONA_PACK);

	return (v != NULL ? v
	                  : kobj_label(c->run, CONTRACT_LABEL_PERSONA_PACK));
}

/* spec 1.13 (agentrun_controller.go injectSharedMemory): when the run's
 * PersonaPack has sharedMemory.enabled, the access of the instance's
 * persona (its sympozium.ai/persona label) from accessRules, first match,
 * default "read-write", into p->shared_access.  Returns -1 on a view
 * error (upstream skips the injection; we retry). */
static int
shared_memory(struct ctx *c, struct plan *p)
{
	const char *pack = persona_pack(c, p);
	const char *persona = kobj_label(p->inst, CONTRACT_LABEL_PERSONA);
	const char *access = "read-write";
	json_object *pp = NULL, *rules;
	bool on = false;
	int rc = get(c, &kobj_personapacks, c->ns, pack, &pp);

	if (rc != 0 || jx_get_bool(pp, "spec.sharedMemory.enabled", &on) != 0
	        || !on) {
		json_object_put(pp);
		return (rc < 0 ? -1 : 0);
	}
	rules = jx_get(pp, "spec.sharedMemory.accessRules");
	for (size_t i = 0; i < jx_array_len(rules); i++) {
		json_object *rule = json_object_array_get_idx(rules, i);
		const char *who = jx_get_str(rule, "persona");
		if (strcmp(who ?: "", persona ?: "") == 0) {
			access = jx_get_str(rule, "access") ?: "";
			break;
		}
	}
	p->shared_access = xstrdup(access);
	json_object_put(pp);
	return (0);
}

/* The Job builder's input.  An agent-sandbox run (sbx) has no persona
 * pack copied from the instance and no shared memory (upstream
 * reconcilePendingAgentSandbox does neither). */
static struct agentrun_job_in
job_in(struct ctx *c, struct plan *p, bool sbx)
{
	bool mem = false, otel = false;

	jx_get_bool(p->inst, "spec.memory.enabled", &mem);
	jx_get_bool(p->inst, "spec.observability.enabled", &otel);
	return ((struct agentrun_job_in) { c->run, p->skills, p->sc, p->nsc,
	        sbx ? kobj_label(c->run, CONTRACT_LABEL_PERSONA_PACK)
	            : persona_pack(c, p),
	        mem, p->timeout_s, p->mcp,
	        otel ? jx_get(p->inst, "spec.observability") : NULL,
	        sbx ? NULL : p->shared_access });
}

/* The agent-sandbox path's last step: the Sandbox (or SandboxClaim) from
 * the Job builder's pod spec (agentrun_sandbox.h). */
static void
create_sandbox(struct ctx *c, struct plan *p)
{
	struct agentrun_job_in ji = job_in(c, p, true);
	json_object *pod = agentrun_job_pod_spec(&ji);

	agentrun_sandbox_create(c->in, c->out, c->status, pod);
	json_object_put(pod);
}

/* spec 1.3 steps 17-19. */
static void
create_job(struct ctx *c, struct plan *p)
{
	json_object *job;
	struct agentrun_job_in ji = job_in(c, p, false);

	job = agentrun_job_build(&ji);
	kobj_set_owner(job, c->run);
	kobj_create(c->out, &kobj_jobs, job, true);
	st_set(c, "phase", "Running");
	st_set(c, "jobName", kobj_name(job));
	st_now(c, "startedAt");
	agentrun_job_status_trace_id(c->run, c->status);
	rec_verdict(c->out, IPC_V_REQUEUE_AFTER, AGENTRUN_POLL_MS, NULL);
}

/* Milliseconds since metadata.creationTimestamp, 0 when unknown. */
static int64_t
run_age_ms(struct ctx *c)
{
	int64_t us;
	const char *ts = jx_get_str(c->run, "metadata.creationTimestamp");

	if (ts == NULL || timefmt_parse(ts, &us) != 0) {
		return (0);
	}
	return (c->in->now_ms - us / 1000);
}

/* spec 1.3 step 12 (agentrun_controller.go reconcilePending): a run with
 * the memory skill waits for <instance>-memory to have a ready replica,
 * requeueing every 5 s, and fails once older than 120 s.  Returns 0 (go
 * on), 1 (failed), 2 (requeued) or -1 (view error). */
static int
memory_wait(struct ctx *c, struct plan *p, bool sbx)
{
	char *name, age[DURATION_STR_LEN];
	json_object *dep = NULL;
	int64_t ms = run_age_ms(c);
	int rc;

	if (!agentrun_job_memory_skill(p->skills)) {
		return (0);
	}
	name = xasprintf("%s-memory", spec_str(c, "instanceRef"));
	rc = get(c, &kobj_deployments, c->ns, name, &dep);
	if (rc == 0 && int_or(dep, "status.readyReplicas", 0) >= 1) {
		rc = 0;
	} else if (rc >= 0 && ms > AGENTRUN_MEMORY_WAIT_MS) {
		duration_format(ms / 1000 * 1000000000, age);
		/* the agent-sandbox path's message has no hint (upstream
		 * reconcilePendingAgentSandbox) */
		fail_run(c,
		        rc == 1 && sbx ? "memory server deployment \"%s\" not "
		                         "found after %s"
		                : rc == 1
		                ? "memory server deployment \"%s\" not "
		                  "found after %s \u2014 ensure the "
		                  "instance has been reconciled"
		                : "memory server deployment \"%s\" has "
		                  "no ready replicas after %s",
		        name, age);
		rc = 1;
	} else if (rc >= 0) {
		rec_verdict(c->out, IPC_V_REQUEUE_AFTER,
		        AGENTRUN_MEMORY_POLL_MS, NULL);
		rc = 2;
	}
	json_object_put(dep);
	free(name);
	return (rc);
}

/* spec 1.3. */
static void
pending(struct ctx *c)
{
	struct plan p = { 0 };
	int rc;
	bool sbx = false;

	span_start(c, &c->pspan, &c->rspan, "agentrun.create_job");
	rc = validate(c, &p.inst);

	if (rc == 0) {
		rc = unsupported(c); /* 2: the server path took the run */
	}
	if (rc == 3) { /* agent-sandbox: the same steps, then its CR */
		sbx = true;
		rc = 0;
		span_start(c, &c->sspan, &c->pspan, "agentrun.create_sandbox");
		wtel_span_attr(&c->sspan, "runtime.class",
		        spec_str(c, "agentSandbox.runtimeClass"));
	}
	if (rc == 0) {
		ensure_sa_and_input(c);
		inherit(c, &p);
		rc = mcp_config(c, &p);
	}
	if (rc == 0) {
		rc = resolve_sidecars(c, &p);
	}
	if (rc == 0) {
		rc = memory_wait(c, &p, sbx);
	}
	if (rc == 0) {
		rc = mirror_skills(c, &p);
	}
	if (rc == 0 && !sbx) {
		rc = shared_memory(c, &p);
	}
	if (rc == 0) {
		rbac(c, &p);
		agentrun_postrun_pvc(c->out, c->run);
		if (sbx) {
			create_sandbox(c, &p);
		} else {
			create_job(c, &p);
		}
	}
	if (rc == 1) {
		rec_verdict(c->out, IPC_V_DONE, 0, NULL);
	}
	plan_fini(&p);
}

/* The agent's log (last AGENTRUN_MEMORY_LINES lines) into *text (NULL
 * without a pod name or when the pod or its log is gone).  Returns 0, or
 * -1 when the log could not be read (e.g. a 5xx or a refused connection):
 * the reconcile then ends with an error verdict and is retried, instead
 * of completing the run with an empty result (found by the chaos suite:
 * a transient error on pods/log lost the result for good). */
static int
agent_log(struct ctx *c, char **text)
{
	const char *pod = st_str(c, "podName");
	char err[256];

	*text = NULL;
	if (pod[0] == '\0') {
		return (0);
	}
	if (view_pod_log(c->in->view, c->ns, pod, "agent",
	            AGENTRUN_MEMORY_LINES, text, err, sizeof(err))
	        < 0) {
		rec_verdict(c->out, IPC_V_ERROR, 0, "pod log: %s", err);
		return (-1);
	}
	return (0);
}

/* Writes the memory block of log into <instance>-memory (spec 1.14);
 * errors and a missing ConfigMap are ignored. */
static void
save_memory(struct ctx *c, const char *log)
{
	char *mem = agentrun_result_memory(log);
	char *name, err[256];
	json_object *cm = NULL;

	if (mem == NULL) {
		return;
	}
	name = xasprintf("%s-memory", spec_str(c, "instanceRef"));
	if (view_get(c->in->view, &kobj_configmaps, c->ns, name, &cm, err,
	            sizeof(err))
	        == 0) {
		json_object *o = jx_getv(cm, "data", "MEMORY.md", NULL);
		const char *old = o != NULL ? json_object_get_string(o) : NULL;
		if (old == NULL || strcmp(old, mem) != 0) {
			jx_setv(cm, json_object_new_string(mem), "data",
			        "MEMORY.md", NULL);
			kobj_update(
			        c->out, &kobj_configmaps, json_object_get(cm));
		}
	}
	json_object_put(cm);
	free(name);
	free(mem);
}

/* Reads the log once: result into *r, memory written back.  Returns -1
 * (error verdict set, *r untouched) when the log could not be read. */
static int
harvest(struct ctx *c, struct agentrun_result *r)
{
	char *log = NULL;

	if (agent_log(c, &log) != 0) {
		return (-1);
	}
	agentrun_result_parse(log, r);
	if (!r->skipped) {
		save_memory(c, log);
	}
	free(log);
	return (0);
}

/* spec 1.5 step 2: the first pod of the run, used at once. */
static int
find_pod(struct ctx *c)
{
	char *sel;
	json_object *items = NULL;
	char err[256];

	if (st_str(c, "podName")[0] != '\0') {
		return (0);
	}
	sel = xasprintf(CONTRACT_LABEL_AGENT_RUN "=%s", c->name);
	if (view_list(c->in->view, &kobj_pods, c->ns, sel, &items, err,
	            sizeof(err))
	        != 0) {
		free(sel);
		rec_verdict(c->out, IPC_V_ERROR, 0, "%s", err);
		return (-1);
	}
	if (json_object_array_length(items) > 0) {
		st_set(c, "podName",
		        kobj_name(json_object_array_get_idx(items, 0)));
	}
	json_object_put(items);
	free(sel);
	return (0);
}

/* The agent is done (spec 1.5 steps 4-6): postRun hooks first when the
 * run has any (agentrun_postrun.c), else the final phase. */
static void
agent_ok(struct ctx *c, const struct agentrun_result *r)
{
	if (agentrun_postrun_hooks(c->run)) {
		agentrun_postrun_start(c->in, c->out, c->status, 0,
		        r->result != NULL ? r->result : "",
		        r->has_usage ? usage_json(r) : NULL);
	} else {
		succeed_run(c, r);
	}
}

/* upstream persistFailureMemory: a run with the memory skill asks the
 * supervisor (workers have no network) to store a failure record in its
 * instance's memory server (RESULT "memoryStore", ipc.h). */
static void
failure_memory(struct ctx *c, const char *reason)
{
	const char *task = spec_str(c, "task");
	char ts[TIMEFMT_RFC3339_LEN], *content;
	json_object *m;

	if (!agentrun_job_memory_skill(jx_get(c->run, "spec.skills"))) {
		return;
	}
	timefmt_rfc3339(c->in->now_ms / 1000, ts);
	content = xasprintf(
	        "## Failed AgentRun: %s\n**Task**: %.500s%s\n"
	        "**Error**: %s\n**Timestamp**: %s\n**Instance**: %s",
	        c->name, task, strlen(task) > 500 ? "..." : "", reason, ts,
	        spec_str(c, "instanceRef"));
	m = json_object_new_object();
	json_object_object_add(m, "content", json_object_new_string(content));
	json_object_object_add(c->out->result, "memoryStore", m);
	free(content);
}

static void
agent_failed(struct ctx *c, const char *msg)
{
	failure_memory(c, msg);
	if (agentrun_postrun_hooks(c->run)) {
		agentrun_postrun_start(c->in, c->out, c->status, 1, msg, NULL);
	} else {
		fail_run(c, "%s", msg);
	}
}

/* DONE, or the PostRunning poll when the agent's end started the postRun
 * Job. */
static void
done_verdict(struct ctx *c)
{
	if (strcmp(st_str(c, "phase"), "PostRunning") == 0) {
		rec_verdict(c->out, IPC_V_REQUEUE_AFTER,
		        AGENTRUN_POSTRUN_POLL_MS, NULL);
	} else {
		rec_verdict(c->out, IPC_V_DONE, 0, NULL);
	}
}

/* Job succeeded or failed (spec 1.5 steps 4, 5).  Returns -1 (error
 * verdict set) when the log could not be read. */
static int
job_done(struct ctx *c, bool ok)
{
	struct agentrun_result r;

	if (harvest(c, &r) != 0) {
		return (-1);
	}
	if (r.skipped) {
		skip_run(c, &r);
	} else if (ok || (r.result != NULL && r.error == NULL)) {
		agent_ok(c, &r);
	} else {
		agent_failed(c, r.error != NULL ? r.error : "Job failed");
	}
	agentrun_result_fini(&r);
	return (0);
}

/* The terminated state of the pod's agent container, or NULL.  *pod is
 * the pod (caller puts). */
static json_object *
agent_terminated(json_object *pod)
{
	json_object *cs = jx_get(pod, "status.containerStatuses");

	if (jx_array_len(jx_get(pod, "spec.containers")) <= 2) {
		return (NULL);
	}
	for (size_t i = 0; i < jx_array_len(cs); i++) {
		json_object *s = json_object_array_get_idx(cs, i);
		const char *n = jx_get_str(s, "name");
		if (n != NULL && strcmp(n, "agent") == 0) {
			return (jx_get(s, "state.terminated"));
		}
	}
	return (NULL);
}

/* spec 1.5 step 6.  Returns 1 when the run finished, 0 otherwise, -1 on
 * a view error. */
static int
sidecar_aware(struct ctx *c)
{
	json_object *pod = NULL, *term;
	struct agentrun_result r;
	int64_t code;
	const char *reason;
	int rc = get(c, &kobj_pods, c->ns, st_str(c, "podName"), &pod);

	if (rc != 0 || (term = agent_terminated(pod)) == NULL) {
		json_object_put(pod);
		return (rc < 0 ? -1 : 0);
	}
	code = int_or(term, "exitCode", 0);
	reason = jx_get_str(term, "reason");
	if (harvest(c, &r) != 0) {
		json_object_put(pod);
		return (-1);
	}
	delete_with(c, &kobj_jobs, c->ns, st_str(c, "jobName"), "Background");
	if (code == 0 && r.skipped) {
		skip_run(c, &r);
	} else if (code == 0) {
		agent_ok(c, &r);
	} else if (r.error != NULL) {
		agent_failed(c, r.error);
	} else {
		char msg[2048]; /* as fail_run()'s */
		snprintf(msg, sizeof(msg),
		        "agent container exited with code %lld%s%s%s",
		        (long long)code, reason != NULL ? " (" : "",
		        reason != NULL ? reason : "",
		        reason != NULL ? ")" : "");
		agent_failed(c, msg);
	}
	agentrun_result_fini(&r);
	json_object_put(pod);
	return (1);
}

/* The run's timeout in ms: spec.timeout, else (decision: the Job's
 * deadline came from it) the instance's runTimeout, else 10 minutes.  The
 * instance is read only when the default would fire. */
static int64_t
timeout_ms(struct ctx *c, int64_t elapsed)
{
	int64_t ms = ms_of(spec_str(c, "timeout"));
	json_object *inst = NULL;
	char err[256];

	if (ms > 0) {
		return (ms);
	}
	if (elapsed <= AGENTRUN_TIMEOUT_MS) {
		return (AGENTRUN_TIMEOUT_MS);
	}
	if (view_get(c->in->view, &kobj_instances, c->ns,
	            spec_str(c, "instanceRef"), &inst, err, sizeof(err))
	        == 0) {
		ms = ms_of(jx_get_str(inst, "spec.agents.default.runTimeout"));
	}
	json_object_put(inst);
	return (ms > 0 ? ms : AGENTRUN_TIMEOUT_MS);
}

/* Milliseconds since status.startedAt, or -1 when unknown. */
static int64_t
since_start(struct ctx *c)
{
	int64_t us;

	if (timefmt_parse(st_str(c, "startedAt"), &us) != 0) {
		return (-1);
	}
	return (c->in->now_ms - us / 1000);
}

/* spec 1.5 step 7.  Returns 1 when the run timed out. */
static int
timed_out(struct ctx *c)
{
	int64_t elapsed = since_start(c);
	char *log;

	if (elapsed < 0 || elapsed <= timeout_ms(c, elapsed)) {
		return (0);
	}
	/* best effort: the run times out anyway (the verdict set on a
	 * log error is replaced by the caller's) */
	(void)agent_log(c, &log);
	save_memory(c, log);
	free(log);
	delete_with(c, &kobj_jobs, c->ns, st_str(c, "jobName"), "Foreground");
	failure_memory(c, "timeout");
	fail_run(c, "timeout");
	return (1);
}

/* spec 1.5 step 1: a Job missing from the cache.  While the supervisor
 * says its child caches may lag the server (a watch broken, in backoff or
 * relisting: found by the chaos suite), the absence proves nothing: wait,
 * whatever the time since the start. */
static void
job_missing(struct ctx *c)
{
	int64_t elapsed = since_start(c);

	if (c->in->children_stale) {
		rec_verdict(c->out, IPC_V_REQUEUE_AFTER, AGENTRUN_STALE_MS,
		        "job %s not in the cache, which may lag the server",
		        st_str(c, "jobName"));
		return;
	}
	if (elapsed >= 0 && elapsed < AGENTRUN_JOB_GRACE_MS) {
		rec_verdict(c->out, IPC_V_REQUEUE_AFTER, AGENTRUN_POLL_MS,
		        "job %s not in the cache yet", st_str(c, "jobName"));
		return;
	}
	fail_run(c, "Job not found");
	rec_verdict(c->out, IPC_V_DONE, 0, NULL);
}

/* True when the Job finished less than AGENTRUN_POD_GRACE_MS ago (its
 * completionTime, else the run's start) and no pod of the run is known:
 * completing now would lose the result in its log (found by the chaos
 * suite: the pods' informer was still relisting after a 410). */
static bool
pod_pending(struct ctx *c, json_object *job)
{
	const char *done = jx_get_str(job, "status.completionTime");
	int64_t us, since;

	if (st_str(c, "podName")[0] != '\0') {
		return (false);
	}
	if (done != NULL && timefmt_parse(done, &us) == 0) {
		since = c->in->now_ms - us / 1000;
	} else {
		since = since_start(c);
	}
	return (since >= 0 && since < AGENTRUN_POD_GRACE_MS);
}

/* ---- agent-sandbox mode (agentrun_sandbox.h) ---- */

/* upstream reconcileRunningAgentSandbox: the Sandbox's pass, then the
 * result from the log of its pod (when the pod is the run's own):
 * Completed succeeds unless the log holds an error; a failed pod fails
 * with the log's error, else the Ready condition's message; either way
 * through the postRun hooks first when the run has any (agent_ok()). */
static void
sandbox_running(struct ctx *c)
{
	struct agentrun_sandbox_check k;
	struct agentrun_result r;
	char *log = NULL;

	agentrun_sandbox_check(c->in, c->out, c->status, &k);
	if (k.step == AGENTRUN_SANDBOX_WAIT || k.step == AGENTRUN_SANDBOX_ERROR
	        || (k.step != AGENTRUN_SANDBOX_FAILED && k.own_pod
	                && agent_log(c, &log) != 0)) {
		return;
	}
	agentrun_result_parse(log, &r);
	if (k.step == AGENTRUN_SANDBOX_COMPLETED && r.skipped) {
		skip_run(c, &r);
	} else if (k.step == AGENTRUN_SANDBOX_COMPLETED && r.error == NULL) {
		save_memory(c, log);
		agent_ok(c, &r);
	} else {
		agent_failed(c, r.error != NULL ? r.error : k.msg);
	}
	agentrun_result_fini(&r);
	free(log);
	done_verdict(c);
}

/* spec 1.5. */
static void
running(struct ctx *c)
{
	json_object *job
	        = kobj_child(c->in->children, "Job", st_str(c, "jobName"));
	int rc;

	span_start(c, &c->pspan, &c->rspan, "agentrun.extract_result");
	if (agentrun_sandbox_active(c->status)) {
		span_start(c, &c->sspan, &c->pspan, "agentrun.check_sandbox");
		wtel_span_attr(
		        &c->sspan, "sandbox.name", st_str(c, "sandboxName"));
		sandbox_running(c);
		return;
	}
	if (job == NULL) {
		job_missing(c);
		return;
	}
	if (find_pod(c) != 0) {
		return;
	}
	if (int_or(job, "status.succeeded", 0) > 0
	        || int_or(job, "status.failed", 0) > 0) {
		if (pod_pending(c, job)) {
			rec_verdict(c->out, IPC_V_REQUEUE_AFTER,
			        AGENTRUN_POLL_MS,
			        "pod of finished job %s not in the cache yet",
			        st_str(c, "jobName"));
			return;
		}
		if (job_done(c, int_or(job, "status.succeeded", 0) > 0) == 0) {
			done_verdict(c);
		}
		return;
	}
	rc = st_str(c, "podName")[0] != '\0' ? sidecar_aware(c) : 0;
	if (rc == 0) {
		rc = timed_out(c);
	}
	if (rc == 0) {
		rec_verdict(
		        c->out, IPC_V_REQUEUE_AFTER, AGENTRUN_POLL_MS, NULL);
	} else if (rc == 1) {
		done_verdict(c);
	}
}

/* Starts span s (upstream's controllerTracer.Start) under parent; the
 * innermost span's context is what the run's containers get as
 * TRACEPARENT and its trace ID status.traceID (agentrun_job.h). */
static void
span_start(struct ctx *c, struct wtel_span *s, struct wtel_span *parent,
        const char *name)
{
	wtel_span_start(s, &parent->ctx, name);
	wtel_span_attr(s, "agentrun.name", c->name);
	if (s != &c->sspan || strcmp(name, "agentrun.create_sandbox") == 0) {
		wtel_span_attr(s, "instance.name", spec_str(c, "instanceRef"));
	}
	if (s->live) {
		agentrun_job_trace(&s->ctx);
	}
}

/* Ends the spans, innermost first; the reconcile span fails with the
 * reconcile, as upstream's. */
static void
spans_end(struct ctx *c)
{
	if (c->out->verdict == IPC_V_ERROR
	        || c->out->verdict == IPC_V_TERMINAL) {
		snprintf(c->rspan.error, sizeof(c->rspan.error),
		        "reconcile failed");
	}
	wtel_span_end(c->out, &c->sspan);
	wtel_span_end(c->out, &c->pspan);
	wtel_span_end(c->out, &c->rspan);
	json_object_put(c->sspan.attrs);
	json_object_put(c->pspan.attrs);
	json_object_put(c->rspan.attrs);
	agentrun_job_trace(NULL);
}

/* The reconcile span, joined to the run's otel.dev/traceparent
 * annotation (upstream extractTraceparent). */
static void
rspan_start(struct ctx *c)
{
	struct w3t_ctx parent = { 0 };

	if (!wtel_on()) {
		return;
	}
	w3t_parse(kobj_annotation(c->run, AGENTRUN_JOB_ANN_TRACEPARENT),
	        &parent);
	wtel_span_start(&c->rspan, &parent, "agentrun.reconcile");
	wtel_span_attr(&c->rspan, "agentrun.name", c->name);
	wtel_span_attr(&c->rspan, "namespace", c->ns);
	wtel_span_attr(&c->rspan, "agentrun.phase", st_str(c, "phase"));
	wtel_span_attr(&c->rspan, "instance.name", spec_str(c, "instanceRef"));
}

static void
dispatch(struct ctx *c)
{
	const char *phase = st_str(c, "phase");

	if (phase[0] == '\0' || strcmp(phase, "Pending") == 0) {
		pending(c);
	} else if (strcmp(phase, "Running") == 0) {
		running(c);
	} else if (terminal(phase)) {
		completed(c);
	} else if (strcmp(phase, "Serving") == 0) {
		agentrun_server_serving(c->in, c->out, c->status);
	} else if (strcmp(phase, "PostRunning") == 0) {
		agentrun_postrun_running(c->in, c->out, c->status);
	} else {
		log_debug("agentrun %s/%s: unknown phase %s", c->ns, c->name,
		        phase);
		rec_verdict(c->out, IPC_V_DONE, 0, NULL);
	}
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	struct ctx c = { .in = in, .out = out, .run = in->object };
	json_object *st;

	rec_verdict(out, IPC_V_DONE, 0, NULL);
	if (in->object == NULL) {
		return;
	}
	c.name = kobj_name(in->object);
	c.ns = kobj_ns(in->object);
	st = json_object_object_get(in->object, "status");
	c.status = jx_copy_obj(st);
	rspan_start(&c);
	if (jx_getv(in->object, "metadata", "deletionTimestamp", NULL)
	        != NULL) {
		deleting(&c);
	} else if (!terminal(st_str(&c, "phase")) && !has_finalizer(c.run)) {
		add_finalizer(&c);
	} else {
		dispatch(&c);
		flush_status(&c);
	}
	spans_end(&c);
	json_object_put(c.status);
}

const struct reconciler agentrun_reconciler = { "agentrun", reconcile };
