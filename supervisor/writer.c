/*
 * writer.c: runs the writes of worker RESULTs over the kapi multi handle
 * (writer.h): per-key ordering, the fence before every request, no-op
 * suppression against the caches, tolerated failures and best-effort
 * events, and the Event correlator (events.h) every event goes through.
 * A job (one per submitted result, or one per wr_event()) holds its typed
 * writes, decoded once before submission, and a reference to the JSON
 * they borrow from.  Jobs sit in one list in submit order; a job may move
 * only when no earlier unfinished job has its key.
 * The list is short (bounded by the number of workers' results in flight),
 * so the scans are linear.
 */
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/stats.h"
#include "supervisor/writer.h"

struct job {
	struct job *next;
	struct wr *w;
	char *key;
	char *controller; /* "" for wr_event()'s */
	uint64_t token;
	bool own;              /* wr_event()'s: no on_done */
	json_object *keep;     /* one reference: what ops borrow from */
	struct ipc_write *ops; /* n typed writes */
	size_t n, i;
	uint64_t req_id; /* != 0: waiting for its answer */
	bool answered;   /* an answer waits in rc, code, msg */
	enum kapi_rc rc;
	long code;
	char *msg;
	struct wr_report rep;
	struct ev_action act; /* the event write in progress */
	bool ev_active;       /* act is set */
	enum kapi_verb verb;  /* of the request in flight (stats) */
};

struct wr {
	struct kapi_multi *m;
	struct wr_conf conf;
	struct ev *ev; /* NULL: events POSTed as they are */
	struct job *head, *tail;
	size_t njobs;
	size_t inflight; /* jobs with a request in flight */
	struct wr_stats st;
	struct stats *stats;
	struct shadow *shadow; /* wr_set_shadow() */
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
wr_set_correlator(struct wr *w, const struct ev_conf *conf)
{
	ev_free(w->ev);
	w->ev = ev_new(conf);
}

static void
job_free(struct job *j)
{
	json_object_put(j->keep);
	free(j->ops);
	ev_action_fini(&j->act);
	free(j->key);
	free(j->controller);
	free(j->msg);
	free(j);
}

void
wr_set_stats(struct wr *w, struct stats *st)
{
	w->stats = st;
}

void
wr_set_shadow(struct wr *w, struct shadow *sh)
{
	w->shadow = sh;
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
	ev_free(w->ev);
	free(w);
}

static void
append(struct wr *w, struct job *j)
{
	if (w->tail != NULL) {
		w->tail->next = j;
	} else {
		w->head = j;
	}
	w->tail = j;
	w->njobs++;
}

static struct job *
job_new(struct wr *w, const char *key, const struct ipc_write *ops, size_t n,
        json_object *keep)
{
	struct job *j = xcalloc(1, sizeof(*j));

	j->w = w;
	j->key = xstrdup(key);
	j->controller = xstrdup("");
	j->keep = json_object_get(keep);
	if (n > 0) {
		j->ops = xmemdup(
		        ops, n * sizeof(*ops)); /* n <= IPC_WRITES_MAX */
		j->n = n;
	}
	return (j);
}

int
wr_submit(struct wr *w, const struct wr_batch *b, uint64_t token)
{
	struct job *j;

	if (b->key == NULL || b->key[0] == '\0') {
		return (-1);
	}
	j = job_new(w, b->key, b->ops, b->n, b->keep);
	j->token = token;
	if (b->controller != NULL) {
		free(j->controller);
		j->controller = xstrdup(b->controller);
	}
	append(w, j);
	return (0);
}

static const struct ipc_res events_res = { "", "v1", "events", true };

void
wr_event(struct wr *w, json_object *involved, const char *type,
        const char *reason, const char *message)
{
	json_object *ev = ev_event_new(involved, type, reason, message);
	const char *ns = jx_get_str(involved, "metadata.namespace");
	const char *name = jx_get_str(involved, "metadata.name");
	struct ipc_write op = { .op = IPC_OP_EVENT,
		.res = events_res,
		.namespace = "",
		.name = "",
		.object = ev };
	char *key;

	/* its own key: an object's Event does not wait for its writes */
	key = ns != NULL && ns[0] != '\0'
	        ? xasprintf("event:%s/%s", ns, name != NULL ? name : "")
	        : xasprintf("event:%s", name != NULL ? name : "");
	struct job *j = job_new(w, key, &op, 1, ev);
	j->own = true;
	append(w, j);
	json_object_put(ev);
	free(key);
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

/* The cached state of wr's target: 1 and *cached (parsed; caller puts),
 * 0 when the cache knows it absent, -1 when it cannot tell. */
static int
cached_of(struct wr *w, const struct ipc_write *wr, json_object **cached)
{
	const char *ns, *name, *text = NULL;
	int found;

	*cached = NULL;
	if (w->conf.lookup == NULL || wr->op == IPC_OP_EVENT) {
		return (-1);
	}
	target_of(wr, &ns, &name);
	if (name[0] == '\0') {
		return (-1);
	}
	found = w->conf.lookup(w->conf.arg, &wr->res, ns, name, &text);
	if (found < 0 || (found == 1 && text == NULL)) {
		return (-1);
	}
	if (found == 1) {
		*cached = jx_parse(text, strlen(text), 0, NULL, 0);
		if (*cached == NULL) {
			return (-1);
		}
	}
	return (found);
}

/* Asks the caches whether wr is a no-op. */
static bool
is_noop(struct wr *w, const struct ipc_write *wr)
{
	json_object *cached = NULL;
	bool noop;

	if (wr->op == IPC_OP_APPLY || cached_of(w, wr, &cached) < 0) {
		return (false);
	}
	noop = wr_noop(wr, cached, true);
	json_object_put(cached);
	return (noop);
}

/* Shadow mode: records wr instead of sending it (shadow.h). */
static void
shadow_write(struct wr *w, struct job *j, const struct ipc_write *wr)
{
	char res[256], sum[SH_SUMMARY_MAX];
	const char *ns, *name, *verb = sh_verb(wr->op);
	json_object *cached = NULL;

	sh_resource(&wr->res, res, sizeof(res));
	j->rep.shadowed++;
	w->st.shadowed++;
	stats_shadow(w->stats, j->controller, verb, res);
	if (wr->op == IPC_OP_EVENT) {
		log_debug("shadow: %s: event not sent: %s",
		        j->controller[0] != '\0' ? j->controller : "-",
		        obj_str(wr->object, "reason"));
		return;
	}
	target_of(wr, &ns, &name);
	(void)cached_of(w, wr, &cached);
	sh_summary(wr, cached, sum, sizeof(sum));
	json_object_put(cached);
	if (sh_record(w->shadow, j->controller, verb, res, ns, name, sum)
	        > 0) {
		log_info("shadow: %s would %s %s %s%s%s: %s", j->controller,
		        verb, res, ns, ns[0] != '\0' ? "/" : "", name, sum);
	}
}

/* Shadow mode: wr is a no-op, its object needs no write any more. */
static void
shadow_forget(struct wr *w, const struct ipc_write *wr)
{
	char res[256];
	const char *ns, *name;

	if (w->shadow == NULL) {
		return;
	}
	sh_resource(&wr->res, res, sizeof(res));
	target_of(wr, &ns, &name);
	sh_forget(w->shadow, res, ns, name);
}

static void
req_done(void *arg, struct kapi_resp *resp)
{
	struct job *j = arg;

	stats_api(j->w->stats, j->verb, resp->code);
	j->req_id = 0;
	j->w->inflight--;
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
	w->inflight++;
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
	w->inflight++;
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

/* Asks the correlator how event write wr goes out, at the real time.
 * Returns false when it is dropped (nothing to send). */
static bool
event_prepare(struct wr *w, struct job *j, const struct ipc_write *wr)
{
	if (wr->op != IPC_OP_EVENT || w->ev == NULL || j->ev_active) {
		return (true);
	}
	if (ev_correlate(
	            w->ev, wr->object, timefmt_now_us_real() * 1000, &j->act)
	        == EV_DROP) {
		const char *r = jx_get_str(wr->object, "reason");
		const char *n = jx_get_str(wr->object, "involvedObject.name");
		log_debug("event %s on %s dropped: %s", r != NULL ? r : "",
		        n != NULL ? n : "", j->act.why);
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

/* The bound on requests in flight is reached. */
static bool
full(const struct wr *w)
{
	return (w->conf.max_inflight > 0
	        && w->inflight >= w->conf.max_inflight);
}

/* Moves job j as far as it goes.  Returns true when it is finished. */
static bool
step(struct wr *w, struct job *j)
{
	for (;;) {
		if (j->i >= j->n) {
			return (true);
		}
		const struct ipc_write *wr = &j->ops[j->i];
		if (j->answered && !event_retry(j)) {
			if (!take_answer(w, j, wr)) {
				return (true);
			}
			j->i++;
			continue;
		}
		if (is_noop(w, wr)) {
			shadow_forget(w, wr);
			j->rep.skipped++;
			w->st.skipped++;
			j->i++;
			continue;
		}
		if (!event_prepare(w, j, wr)) {
			j->i++;
			continue;
		}
		if (w->shadow != NULL) {
			shadow_write(w, j, wr);
			ev_action_fini(&j->act);
			j->ev_active = false;
			j->i++;
			continue;
		}
		if (w->conf.fence != NULL && !w->conf.fence(w->conf.arg)) {
			j->rep.outcome = WR_FENCED;
			j->rep.failed = j->i;
			return (true);
		}
		if (full(w)) {
			return (false); /* sent when a request is answered */
		}
		send_write(w, j, wr);
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
	if (w->conf.on_done != NULL && !j->own) {
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
		w->inflight--;
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
		/* at the bound, only an answer moves a job */
		if (movable(w, j) && (j->answered || !full(w))) {
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

size_t
wr_inflight(const struct wr *w)
{
	return (w->inflight);
}

void
wr_stats(const struct wr *w, struct wr_stats *out)
{
	*out = w->st;
}
