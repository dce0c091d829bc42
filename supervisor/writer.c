/*
 * writer.c: runs the writes of worker RESULTs over the kapi multi handle
 * (writer.h): per-key ordering, the fence before every request, no-op
 * suppression against the caches, tolerated failures and best-effort
 * events.  Jobs (one per submitted result) sit in one list in submit
 * order; a job may move only when no earlier unfinished job has its key.
 * The list is short (bounded by the number of workers' results in flight),
 * so the scans are linear.
 */
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/stats.h"
#include "supervisor/writer.h"

struct job {
	struct job *next;
	struct wr *w;
	char *key;
	uint64_t token;
	json_object *writes; /* one reference */
	size_t n, i;
	uint64_t req_id; /* != 0: waiting for its answer */
	bool answered;   /* an answer waits in rc, code, msg */
	enum kapi_rc rc;
	long code;
	char *msg;
	struct wr_report rep;
	struct ev_action act; /* the event write in progress */
	bool ev_active;       /* act is set */
	enum kapi_verb verb; /* of the request in flight (stats) */
};

struct wr {
	struct kapi_multi *m;
	struct wr_conf conf;
	wr_event_fn *event;
	struct job *head, *tail;
	size_t njobs;
	struct wr_stats st;
	struct stats *stats;
};

struct wr *
wr_new(struct kapi_multi *m, const struct wr_conf *conf)
{
	struct wr *w = xcalloc(1, sizeof(*w));

	w->m = m;
	if (conf != NULL) {
		w->conf = *conf;
	}
	return (w);
}

void
wr_set_event_fn(struct wr *w, wr_event_fn *fn)
{
	w->event = fn;
}

static void
job_free(struct job *j)
{
	json_object_put(j->writes);
	ev_action_fini(&j->act);
	free(j->key);
	free(j->msg);
	free(j);
}

void
wr_set_stats(struct wr *w, struct stats *st)
{
	w->stats = st;
}

void
wr_free(struct wr *w)
{
	struct job *j, *next;

	if (w == NULL) {
		return;
	}
	for (j = w->head; j != NULL; j = next) {
		next = j->next;
		if (j->req_id != 0) {
			kapi_multi_cancel(w->m, j->req_id);
		}
		job_free(j);
	}
	free(w);
}

int
wr_submit(struct wr *w, const struct ipc_result *res, uint64_t token)
{
	struct job *j;

	if (res->key == NULL || res->key[0] == '\0') {
		return (-1);
	}
	j = xcalloc(1, sizeof(*j));
	j->w = w;
	j->key = xstrdup(res->key);
	j->token = token;
	if (res->writes != NULL) {
		j->writes = json_object_get(res->writes);
		j->n = res->nwrites;
	}
	if (w->tail != NULL) {
		w->tail->next = j;
	} else {
		w->head = j;
	}
	w->tail = j;
	w->njobs++;
	return (0);
}

/* ---- pure helpers ---- */

bool
wr_tolerated(unsigned tolerate, enum kapi_rc rc)
{
	switch (rc) {
	case KAPI_OK:
		return (true);
	case KAPI_EEXISTS:
		return ((tolerate & IPC_TOL_ALREADY_EXISTS) != 0);
	case KAPI_ENOTFOUND:
		return ((tolerate & IPC_TOL_NOT_FOUND) != 0);
	case KAPI_ECONFLICT:
		return ((tolerate & IPC_TOL_CONFLICT) != 0);
	default:
		return (false);
	}
}

/* Fields the server sets or the comparison ignores. */
static const char *const server_fields[] = {
	"metadata.resourceVersion",
	"metadata.managedFields",
	"metadata.uid",
	"metadata.creationTimestamp",
	"metadata.generation",
	"metadata.selfLink",
	"metadata.deletionTimestamp",
	"metadata.deletionGracePeriodSeconds",
	"apiVersion",
	"kind",
	"status",
	NULL,
};

/* Equal as objects, ignoring server_fields (status too unless
 * with_status). */
static bool
same_object(json_object *a, json_object *b, bool with_status)
{
	const char *paths[sizeof(server_fields) / sizeof(server_fields[0])];
	json_object *ca, *cb;
	size_t n = 0;
	bool eq;

	for (size_t i = 0; server_fields[i] != NULL; i++) {
		if (!with_status || strcmp(server_fields[i], "status") != 0) {
			paths[n++] = server_fields[i];
		}
	}
	paths[n] = NULL;
	ca = jx_copy_stripa(a, paths);
	cb = jx_copy_stripa(b, paths);
	eq = jx_equal(ca, cb);
	json_object_put(ca);
	json_object_put(cb);
	return (eq);
}

/* RFC 7386: returns the patched target (a new reference; target's
 * reference is consumed). */
static json_object *
merge_apply(json_object *target, json_object *patch)
{
	if (!json_object_is_type(patch, json_type_object)) {
		json_object_put(target);
		json_object *copy = NULL;
		copy = jx_copy(patch);
		return (copy);
	}
	if (!json_object_is_type(target, json_type_object)) {
		json_object_put(target);
		target = json_object_new_object();
	}
	json_object_object_foreach(patch, k, v)
	{
		if (v == NULL) {
			json_object_object_del(target, k);
			continue;
		}
		json_object *cur = json_object_object_get(target, k);
		json_object *nv = merge_apply(json_object_get(cur), v);
		json_object_object_add(target, k, nv);
	}
	return (target);
}

/* A strategic patch without arrays and "$" directives acts as a merge
 * patch. */
static bool
plain_merge(json_object *p)
{
	if (json_object_is_type(p, json_type_array)) {
		return (false);
	}
	if (!json_object_is_type(p, json_type_object)) {
		return (true);
	}
	json_object_object_foreach(p, k, v)
	{
		if (k[0] == '$' || !plain_merge(v)) {
			return (false);
		}
	}
	return (true);
}

static bool
patch_noop(const struct ipc_write *wr, json_object *cached)
{
	json_object *copy = NULL, *out;
	bool eq;

	if (cached == NULL || !json_object_is_type(wr->patch, json_type_object)
	        || (wr->patch_type == IPC_PATCH_STRATEGIC
	                && !plain_merge(wr->patch))
	        || wr->patch_type == IPC_PATCH_JSON) {
		return (false);
	}
	copy = jx_copy(cached);
	out = merge_apply(copy, wr->patch);
	eq = same_object(out, cached, true);
	json_object_put(out);
	return (eq);
}

bool
wr_noop(const struct ipc_write *wr, json_object *cached, bool known)
{
	if (!known) {
		return (false);
	}
	switch (wr->op) {
	case IPC_OP_UPDATE:
		return (cached != NULL && wr->object != NULL
		        && same_object(wr->object, cached, false));
	case IPC_OP_UPDATE_STATUS:
		return (cached != NULL && wr->object != NULL
		        && jx_equal(jx_get(wr->object, "status"),
		                jx_get(cached, "status")));
	case IPC_OP_CREATE:
		return (cached != NULL && wr->object != NULL
		        && (wr->tolerate & IPC_TOL_ALREADY_EXISTS) != 0
		        && same_object(wr->object, cached, false));
	case IPC_OP_PATCH:
		return (patch_noop(wr, cached));
	case IPC_OP_DELETE:
		return (cached == NULL
		        && (wr->tolerate & IPC_TOL_NOT_FOUND) != 0);
	default:
		return (false);
	}
}

/* ---- running ---- */

static const char *
obj_str(json_object *obj, const char *path)
{
	const char *s = obj != NULL ? jx_get_str(obj, path) : NULL;

	return (s != NULL ? s : "");
}

/* The write's target namespace and name, defaults from the object. */
static void
target_of(const struct ipc_write *wr, const char **ns, const char **name)
{
	*ns = wr->namespace[0] != '\0'
	        ? wr->namespace
	        : obj_str(wr->object, "metadata.namespace");
	*name = wr->name[0] != '\0' ? wr->name
	                            : obj_str(wr->object, "metadata.name");
	if (!wr->res.namespaced) {
		*ns = "";
	}
}

/* Asks the caches whether wr is a no-op. */
static bool
is_noop(struct wr *w, const struct ipc_write *wr)
{
	const char *ns, *name, *text = NULL;
	json_object *cached = NULL;
	bool noop;
	int found;

	if (w->conf.lookup == NULL || wr->op == IPC_OP_EVENT
	        || wr->op == IPC_OP_APPLY) {
		return (false);
	}
	target_of(wr, &ns, &name);
	if (name[0] == '\0') {
		return (false);
	}
	found = w->conf.lookup(w->conf.arg, &wr->res, ns, name, &text);
	if (found < 0 || (found == 1 && text == NULL)) {
		return (false);
	}
	if (found == 1) {
		cached = jx_parse(text, strlen(text), 0, NULL, 0);
		if (cached == NULL) {
			return (false);
		}
	}
	noop = wr_noop(wr, cached, true);
	json_object_put(cached);
	return (noop);
}

static void
req_done(void *arg, struct kapi_resp *resp)
{
	struct job *j = arg;

	stats_api(j->w->stats, j->verb, resp->code);
	j->req_id = 0;
	j->answered = true;
	j->rc = resp->err.rc;
	j->code = resp->code;
	free(j->msg);
	j->msg = xstrdup(resp->err.message != NULL ? resp->err.message : "");
}

static const enum kapi_patch patch_types[] = {
	[IPC_PATCH_NONE] = KAPI_PATCH_MERGE,
	[IPC_PATCH_MERGE] = KAPI_PATCH_MERGE,
	[IPC_PATCH_JSON] = KAPI_PATCH_JSON,
	[IPC_PATCH_STRATEGIC] = KAPI_PATCH_STRATEGIC,
};

static const enum kapi_verb verbs[] = {
	[IPC_OP_CREATE] = KAPI_CREATE,
	[IPC_OP_UPDATE] = KAPI_UPDATE,
	[IPC_OP_UPDATE_STATUS] = KAPI_UPDATE,
	[IPC_OP_PATCH] = KAPI_PATCH,
	[IPC_OP_APPLY] = KAPI_PATCH,
	[IPC_OP_DELETE] = KAPI_DELETE,
	[IPC_OP_EVENT] = KAPI_CREATE,
};

/* Sends the correlator's decision for an event write. */
static void
send_event(struct wr *w, struct job *j, const struct ipc_write *wr)
{
	struct kapi_res res = { wr->res.group, wr->res.version, wr->res.plural,
		wr->res.namespaced };
	struct kapi_req req;
	bool patch = j->act.verb == EV_PATCH;

	memset(&req, 0, sizeof(req));
	req.verb = patch ? KAPI_PATCH : KAPI_CREATE;
	req.res = &res;
	req.ns = j->act.ns;
	req.name = patch ? j->act.name : NULL;
	req.body = json_object_to_json_string_ext(
	        patch ? j->act.patch : j->act.event, JSON_C_TO_STRING_PLAIN);
	req.patch_type = KAPI_PATCH_STRATEGIC;
	req.field_manager = WR_FIELD_MANAGER;
	j->verb = req.verb;
	j->req_id = kapi_multi_submit(w->m, &req, req_done, j);
	j->rep.sent++;
	w->st.sent++;
}

static void
send_write(struct wr *w, struct job *j, const struct ipc_write *wr)
{
	struct kapi_res res = { wr->res.group, wr->res.version, wr->res.plural,
		wr->res.namespaced };
	struct kapi_req req;
	const char *ns, *name;

	if (j->ev_active) {
		send_event(w, j, wr);
		return;
	}
	memset(&req, 0, sizeof(req));
	target_of(wr, &ns, &name);
	req.verb = verbs[wr->op];
	req.res = &res;
	req.ns = ns[0] != '\0' ? ns : NULL;
	if (wr->op != IPC_OP_CREATE && wr->op != IPC_OP_EVENT) {
		req.name = name;
	}
	if (wr->op == IPC_OP_UPDATE_STATUS) {
		req.subresource = "status";
	}
	req.body = wr->op == IPC_OP_PATCH
	        ? json_object_to_json_string_ext(
	                wr->patch, JSON_C_TO_STRING_PLAIN)
	        : (wr->object != NULL ? json_object_to_json_string_ext(
	                   wr->object, JSON_C_TO_STRING_PLAIN)
	                              : NULL);
	req.patch_type = wr->op == IPC_OP_APPLY ? KAPI_PATCH_APPLY
	                                        : patch_types[wr->patch_type];
	req.field_manager = wr->op != IPC_OP_DELETE ? WR_FIELD_MANAGER : NULL;
	req.force = wr->op == IPC_OP_APPLY;
	req.del.propagation_policy = wr->propagation;
	j->verb = req.verb;
	j->req_id = kapi_multi_submit(w->m, &req, req_done, j);
	j->rep.sent++;
	w->st.sent++;
}

/* Takes the answer of write j->i.  Returns false when the job failed. */
static bool
take_answer(struct wr *w, struct job *j, const struct ipc_write *wr)
{
	j->answered = false;
	if (j->ev_active) {
		ev_action_fini(&j->act);
		j->ev_active = false;
	}
	if (j->rc == KAPI_OK) {
		return (true);
	}
	if (wr->op == IPC_OP_EVENT) {
		log_warnx("writer: %s: event %zu failed: %s: %s", j->key, j->i,
		        kapi_rc_name(j->rc), j->msg);
		j->rep.event_errors++;
		w->st.event_errors++;
		return (true);
	}
	if (wr_tolerated(wr->tolerate, j->rc)) {
		j->rep.tolerated++;
		w->st.tolerated++;
		return (true);
	}
	j->rep.outcome = WR_FAILED;
	j->rep.rc = j->rc;
	j->rep.code = j->code;
	j->rep.failed = j->i;
	return (false);
}

static void
fail_bad_write(struct job *j)
{
	j->rep.outcome = WR_FAILED;
	j->rep.rc = KAPI_EBADREQUEST;
	j->rep.failed = j->i;
	free(j->msg);
	j->msg = xasprintf("write %zu is malformed", j->i);
}

/* Asks the event function how event write wr goes out.  Returns false
 * when it is dropped (nothing to send). */
static bool
event_prepare(struct wr *w, struct job *j, const struct ipc_write *wr)
{
	if (wr->op != IPC_OP_EVENT || w->event == NULL || j->ev_active) {
		return (true);
	}
	if (w->event(w->conf.arg, wr->object, &j->act) == EV_DROP) {
		ev_action_fini(&j->act);
		j->rep.events_dropped++;
		w->st.events_dropped++;
		return (false);
	}
	j->ev_active = true;
	return (true);
}

/* A count PATCH that found its Event gone: POST the whole Event instead
 * (client-go's recordEvent). */
static bool
event_retry(struct job *j)
{
	if (!j->ev_active || j->act.verb != EV_PATCH
	        || j->rc != KAPI_ENOTFOUND) {
		return (false);
	}
	j->act.verb = EV_CREATE;
	jx_strip(j->act.event, "metadata.resourceVersion");
	j->answered = false;
	return (true);
}

/* Moves job j as far as it goes.  Returns true when it is finished. */
static bool
step(struct wr *w, struct job *j)
{
	struct ipc_result r = { .writes = j->writes, .nwrites = j->n };
	struct ipc_write wr;

	for (;;) {
		if (j->i >= j->n) {
			return (true);
		}
		if (ipc_result_write(&r, j->i, &wr) < 0) {
			fail_bad_write(j);
			return (true);
		}
		if (j->answered && !event_retry(j)) {
			if (!take_answer(w, j, &wr)) {
				return (true);
			}
			j->i++;
			continue;
		}
		if (is_noop(w, &wr)) {
			j->rep.skipped++;
			w->st.skipped++;
			j->i++;
			continue;
		}
		if (!event_prepare(w, j, &wr)) {
			j->i++;
			continue;
		}
		if (w->conf.fence != NULL && !w->conf.fence(w->conf.arg)) {
			j->rep.outcome = WR_FENCED;
			j->rep.failed = j->i;
			return (true);
		}
		send_write(w, j, &wr);
		return (false);
	}
}

/* True when an earlier unfinished job has j's key. */
static bool
blocked(const struct wr *w, const struct job *j)
{
	for (const struct job *p = w->head; p != j; p = p->next) {
		if (strcmp(p->key, j->key) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
unlink_job(struct wr *w, struct job *j)
{
	struct job **pp = &w->head, *prev = NULL;

	while (*pp != j) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	*pp = j->next;
	if (w->tail == j) {
		w->tail = prev;
	}
	w->njobs--;
}

static void
finish(struct wr *w, struct job *j)
{
	unlink_job(w, j);
	j->rep.key = j->key;
	j->rep.message
	        = j->rep.outcome == WR_FAILED && j->msg != NULL ? j->msg : "";
	w->st.results++;
	if (j->rep.outcome == WR_FAILED) {
		w->st.failed++;
	} else if (j->rep.outcome == WR_FENCED) {
		w->st.fenced++;
	}
	if (w->conf.on_done != NULL) {
		w->conf.on_done(w->conf.arg, j->token, &j->rep);
	}
	job_free(j);
}

static bool
movable(const struct wr *w, const struct job *j)
{
	return (j->req_id == 0 && !blocked(w, j));
}

size_t
wr_run(struct wr *w)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct job *j = w->head; j != NULL; j = j->next) {
			if (movable(w, j) && step(w, j)) {
				finish(w, j);
				again = true;
				break;
			}
		}
	}
	return (w->njobs);
}

size_t
wr_fence_inflight(struct wr *w)
{
	size_t n = 0;
	struct job *j = w->head, *next;

	for (; j != NULL; j = next) {
		next = j->next;
		if (j->req_id == 0 || j->answered
		        || kapi_multi_cancel(w->m, j->req_id) != 0) {
			continue;
		}
		j->req_id = 0;
		j->rep.outcome = WR_FENCED;
		j->rep.failed = j->i;
		n++;
		finish(w, j);
	}
	return (n);
}

bool
wr_has_ready(const struct wr *w)
{
	for (const struct job *j = w->head; j != NULL; j = j->next) {
		if (movable(w, j)) {
			return (true);
		}
	}
	return (false);
}

size_t
wr_pending(const struct wr *w)
{
	return (w->njobs);
}

void
wr_stats(const struct wr *w, struct wr_stats *out)
{
	*out = w->st;
}
