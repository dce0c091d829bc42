/*
 * dispatch.c: the supervisor's data flow (design.md steps 2 to 5).  A
 * cache change enqueues the object (primary kinds) or its controller owner
 * (child kinds); an idle worker gets the next ready key in one WORK with
 * the object and its children; a RESULT's writes go to the writer, and
 * the verdict becomes a queue action once they are done; a key lost with
 * its worker is requeued with backoff (or held back when quarantined);
 * view requests are answered from the caches, or from the API server for
 * what the caches do not hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "ipc/sbxrep.h"
#include "supervisor/cache.h"
#include "supervisor/restart.h"
#include "supervisor/sup.h"

static struct sup_ctl *
find_ctl(struct sup *s, const char *name, size_t *idx)
{
	for (size_t i = 0; i < s->nctls; i++) {
		if (strcmp(s->ctls[i].spec->name, name) == 0) {
			if (idx != NULL) {
				*idx = i;
			}
			return (&s->ctls[i]);
		}
	}
	return (NULL);
}

static void
enqueue_owner(struct sup_ctl *c, const char *child_key,
        const struct inf_owner *o, enum queue_lane lane, int64_t now)
{
	const char *sl = strchr(child_key, '/');
	char key[600];

	if (o == NULL || o->name == NULL || o->kind == NULL ||
	        strcmp(o->kind, c->spec->watches[0].kind) != 0) {
		return;
	}
	if (sl != NULL) {
		snprintf(key, sizeof(key), "%.*s/%s", (int)(sl - child_key),
		        child_key, o->name);
	} else {
		snprintf(key, sizeof(key), "%s", o->name);
	}
	queue_add_lane(c->q, key, lane, now);
}

void
sup_on_change(void *arg, size_t kind, enum inf_change change,
        const char *key, const struct inf_owner *old_owner,
        const struct inf_owner *new_owner)
{
	struct sup *s = arg;
	struct sup_ctl *c = &s->ctls[s->kind_ctl[kind]];
	enum ctrl_role role = c->spec->watches[kind - c->first_kind].role;
	int64_t now = timefmt_now_ms_mono();
	/* a first list's objects wait behind live changes (queue.h lanes) */
	enum queue_lane lane
	        = inf_origin(s->inf) == INF_LIST ? QUEUE_LOW : QUEUE_HIGH;

	(void)change;
	if (role == CTRL_PRIMARY) {
		queue_add_lane(c->q, key, lane, now);
	} else if (role == CTRL_CHILD) {
		enqueue_owner(c, key, old_owner, lane, now);
		enqueue_owner(c, key, new_owner, lane, now);
	}
}

struct resync {
	struct queue *q;
	int64_t now;
};

static int
resync_one(void *arg, const struct cache_item *it)
{
	struct resync *r = arg;

	queue_add_lane(r->q, it->key, QUEUE_LOW, r->now);
	return (0);
}

void
sup_resync(struct sup *s, int64_t now)
{
	for (size_t i = 0; i < s->nctls; i++) {
		struct resync r = {s->ctls[i].q, now};

		size_t k = s->ctls[i].first_kind;

		cache_list(inf_cache(s->inf, k), NULL, inf_filter(s->inf, k),
		        resync_one, &r);
	}
}

struct children {
	json_object *arr;
};

static int
add_child(void *arg, const struct cache_item *it)
{
	struct children *ch = arg;

	/* serialized as cached, never parsed here (issue 7: parsing the
	 * children of every WORK was most of the supervisor's CPU) */
	json_object_array_add(ch->arr, cache_item_raw(it));
	return (0);
}

/* Whether a child kind of c is not fresh (inf_fresh()): the children sent
 * may then lack objects the server has (WORK "childrenStale"). */
static bool
children_stale(const struct sup *s, const struct sup_ctl *c)
{
	for (size_t i = 1; i < c->spec->nwatches; i++) {
		if (c->spec->watches[i].role == CTRL_CHILD
		        && !inf_fresh(s->inf, c->first_kind + i)) {
			return (true);
		}
	}
	return (false);
}

/* The WORK body for key of controller c. */
static json_object *
work_body(struct sup *s, struct sup_ctl *c, const char *key)
{
	struct cache *primary = inf_cache(s->inf, c->first_kind);
	struct cache_item it;
	struct ipc_work w = {.key = key,
	        .attempt = queue_num_requeues(c->q, key),
	        .now_ms = timefmt_now_us_real() / 1000};
	struct children ch = {.arr = json_object_new_array()};

	if (cache_lookup(primary, key, &it) == 0) {
		w.object = cache_item_raw(&it);
		char *uid = xstrdup(it.uid);
		for (size_t i = 1; i < c->spec->nwatches; i++) {
			if (c->spec->watches[i].role != CTRL_CHILD) {
				continue;
			}
			inf_by_owner(s->inf, c->first_kind + i, uid, add_child,
			        &ch);
		}
		free(uid);
	}
	w.children = ch.arr;
	w.children_stale = children_stale(s, c);
	return (ipc_work_new(&w));
}

/* Backpressure: while the writer holds this many results, no key is
 * handed out (each result holds its decoded writes until they are
 * answered; with --max-concurrent-writes requests in flight that bounds
 * the supervisor's memory under a burst, as a controller's synchronous
 * reconciles do upstream). */
#define SUP_WRITE_BACKLOG(s) (4 * (s)->cfg.max_writes)

static bool
writer_full(const struct sup *s)
{
	return (s->cfg.max_writes > 0
	        && wr_pending(s->wr) >= SUP_WRITE_BACKLOG(s));
}

void
sup_dispatch(struct sup *s, int64_t now)
{
	if (s->stopping || !sup_leading(s, now) || writer_full(s)) {
		return;
	}
	for (size_t i = 0; i < s->nctls; i++) {
		struct sup_ctl *c = &s->ctls[i];

		queue_tick(c->q, now);
		while (!c->paused && wk_idle(s->pool, c->spec->name) > 0
		        && !writer_full(s)) {
			const char *k = queue_get(c->q, now, NULL);
			if (k == NULL) {
				break;
			}
			char *key = xstrdup(k);
			json_object *body = work_body(s, c, key);
			if (wk_dispatch(s->pool, c->spec->name, key, body, now) !=
			        0) {
				queue_done(c->q, key, now);
				queue_add(c->q, key, now);
				free(key);
				break;
			}
			free(key);
		}
	}
}

static enum queue_verdict
verdict_of(enum ipc_verdict v)
{
	switch (v) {
	case IPC_V_DONE:
		return (QUEUE_SUCCESS);
	case IPC_V_REQUEUE:
		return (QUEUE_REQUEUE);
	case IPC_V_REQUEUE_AFTER:
		return (QUEUE_REQUEUE_AFTER);
	case IPC_V_TERMINAL:
		return (QUEUE_TERMINAL);
	default:
		return (QUEUE_ERROR);
	}
}

static enum stats_result
result_of(enum queue_verdict v, int64_t after_ms)
{
	switch (v) {
	case QUEUE_SUCCESS:
		return (STATS_SUCCESS);
	case QUEUE_REQUEUE:
		return (STATS_REQUEUE);
	case QUEUE_REQUEUE_AFTER:
		return (after_ms > 0 ? STATS_REQUEUE_AFTER : STATS_REQUEUE);
	default:
		return (STATS_ERROR);
	}
}

/* Counts a reconcile's final verdict (stats.h), before the queue forgets
 * when it started. */
static void
count(struct sup *s, struct sup_ctl *c, int worker, const char *key,
        enum queue_verdict v, int64_t after_ms, const char *msg, int64_t now)
{
	int64_t t0 = queue_started_ms(c->q, key);

	stats_reconcile(s->stats, c->spec->name, worker, result_of(v, after_ms),
	        t0 >= 0 ? now - t0 : 0, msg, now);
}

void
sup_on_result(void *arg, const char *controller, struct wk_worker *w,
        const struct ipc_msg *msg)
{
	struct sup *s = arg;
	int64_t now = timefmt_now_ms_mono();
	struct ipc_result r;
	size_t idx;
	struct sup_ctl *c = find_ctl(s, controller, &idx);

	if (c == NULL || ipc_result_read(msg, &r) != 0) {
		return;
	}
	if ((uint32_t)r.epoch != s->epoch || !sup_leading(s, now)) {
		log_info("%s: dropping the result for %s from epoch %lld",
		        controller, r.key, (long long)r.epoch);
		queue_done(c->q, r.key, now);
		return;
	}
	if (r.verdict == IPC_V_ERROR || r.verdict == IPC_V_TERMINAL) {
		log_warnx("%s: %s: %s", controller, r.key, r.message);
	}
	if (r.nwrites == 0) {
		count(s, c, wk_worker_index(w), r.key, verdict_of(r.verdict),
		        r.after_ms, r.message, now);
		queue_finish(c->q, r.key, verdict_of(r.verdict), r.after_ms, now);
		return;
	}
	s->pend = xreallocarray(s->pend, s->npend + 1, sizeof(*s->pend));
	s->pend[s->npend] = (struct sup_pending){.token = ++s->next_token,
	        .ctl = idx, .worker = wk_worker_index(w), .key = xstrdup(r.key),
	        .verdict = verdict_of(r.verdict), .after_ms = r.after_ms};
	s->npend++;
	wr_submit(s->wr, &r, s->next_token);
}

/* The API server refused a write for good (it will refuse the retries
 * too): say so on the object. */
static void
write_failed_event(struct sup *s, size_t ctl, const char *key,
        const struct wr_report *rep)
{
	char msg[1024];

	if (rep->rc != KAPI_EINVALID && rep->rc != KAPI_EBADREQUEST
	        && rep->rc != KAPI_EFORBIDDEN) {
		return;
	}
	snprintf(msg, sizeof(msg), "write %zu refused (%s): %s", rep->failed,
	        kapi_rc_name(rep->rc), rep->message);
	sup_record_event(s, ctl, key, "Warning", "FailedWrite", msg);
}

void
sup_on_written(void *arg, uint64_t token, const struct wr_report *rep)
{
	struct sup *s = arg;
	int64_t now = timefmt_now_ms_mono();

	for (size_t i = 0; i < s->npend; i++) {
		struct sup_pending *p = &s->pend[i];
		if (p->token != token) {
			continue;
		}
		struct queue *q = s->ctls[p->ctl].q;
		if (rep->outcome != WR_FENCED) {
			bool ok = rep->outcome == WR_OK;
			count(s, &s->ctls[p->ctl], p->worker, p->key,
			        ok ? p->verdict : QUEUE_ERROR, p->after_ms,
			        ok ? NULL : rep->message, now);
		}
		if (rep->outcome == WR_OK) {
			queue_finish(q, p->key, p->verdict, p->after_ms, now);
		} else if (rep->outcome == WR_FENCED) {
			queue_done(q, p->key, now);
		} else {
			log_warnx("%s: %s: write %zu failed: %s",
			        s->ctls[p->ctl].spec->name, p->key, rep->failed,
			        rep->message);
			write_failed_event(s, p->ctl, p->key, rep);
			queue_finish(q, p->key, QUEUE_ERROR, 0, now);
		}
		free(p->key);
		s->pend[i] = s->pend[--s->npend];
		return;
	}
}

/* A worker killed by its sandbox: a Warning Event on the key in flight
 * naming the system call (ipc/sbxrep.h). */
static void
sandbox_event(struct sup *s, size_t idx, const char *controller,
        const char *key, const char *cause)
{
	const char *what = strstr(cause, SBXREP_CAUSE);
	char msg[512];

	if (what == NULL) {
		return;
	}
	snprintf(msg, sizeof(msg), "reconciling it, the %s worker was %s",
	        controller, what);
	sup_record_event(s, idx, key, "Warning", "SandboxKilled", msg);
}

void
sup_on_lost(void *arg, const char *controller, const char *key,
        const char *cause, bool quarantined)
{
	struct sup *s = arg;
	int64_t now = timefmt_now_ms_mono();
	size_t idx;
	struct sup_ctl *c = find_ctl(s, controller, &idx);
	char msg[512];

	if (c == NULL) {
		return;
	}
	sandbox_event(s, idx, controller, key, cause);
	int64_t t0 = queue_started_ms(c->q, key);
	stats_lost(s->stats, controller, cause, t0 >= 0 ? now - t0 : 0, now);
	if (!quarantined) {
		log_warnx("%s: %s lost with its worker (%s); requeued",
		        controller, key, cause);
		queue_finish(c->q, key, QUEUE_ERROR, 0, now);
		return;
	}
	int64_t until = quarantine_until(wk_quarantine(s->pool, controller),
	        key);
	log_error("%s: %s quarantined: it killed its worker %d times in a "
	          "row (last: %s)",
	        controller, key,
	        quarantine_deaths(wk_quarantine(s->pool, controller), key),
	        cause);
	queue_done(c->q, key, now);
	queue_forget(c->q, key);
	queue_add_after(c->q, key, until > now ? until - now : 600000, now);
	snprintf(msg, sizeof(msg),
	        "reconciling it killed the %s worker %d times in a row "
	        "(last: %s); held back for %lld s",
	        controller,
	        quarantine_deaths(wk_quarantine(s->pool, controller), key),
	        cause, (long long)((until > now ? until - now : 600000) / 1000));
	sup_record_event(s, idx, key, "Warning", "Quarantined", msg);
}

void
sup_on_released(void *arg, const char *controller, const char *key)
{
	struct sup *s = arg;
	struct sup_ctl *c = find_ctl(s, controller, NULL);

	if (c != NULL) {
		queue_add(c->q, key, timefmt_now_ms_mono());
	}
}

enum ev_verb
sup_on_event(void *arg, json_object *event, struct ev_action *act)
{
	struct sup *s = arg;
	enum ev_verb v;

	v = ev_correlate(s->ev, event, timefmt_now_us_real() * 1000, act);
	if (v == EV_DROP) {
		const char *r = jx_get_str(event, "reason");
		const char *n = jx_get_str(event, "involvedObject.name");
		log_debug("event %s on %s dropped: %s", r != NULL ? r : "",
		        n != NULL ? n : "", act->why);
	}
	return (v);
}

static const struct ipc_res events_res = {"", "v1", "events", true};

void
sup_record_event(struct sup *s, size_t c, const char *key, const char *type,
        const char *reason, const char *message)
{
	struct cache *primary = inf_cache(s->inf, s->ctls[c].first_kind);
	struct cache_item it;
	json_object *obj, *body, *ev;
	char ekey[IPC_KEY_MAX + 16];

	if (cache_lookup(primary, key, &it) != 0) {
		return;
	}
	obj = jx_parse(it.json, it.json_len, 0, NULL, 0);
	if (obj == NULL) {
		return;
	}
	snprintf(ekey, sizeof(ekey), "event:%s", key);
	body = ipc_result_new(ekey, s->epoch, IPC_V_DONE, 0, NULL);
	ev = ev_event_new(obj, type, reason, message);
	ipc_result_add_write(body,
	        ipc_write_new(IPC_OP_EVENT, &events_res, NULL, NULL, ev));
	struct ipc_result r = {.key = ekey,
	        .writes = json_object_object_get(body, "writes"),
	        .nwrites = 1};
	wr_submit(s->wr, &r, 0); /* token 0: no pending entry */
	json_object_put(body);
	json_object_put(obj);
}

int
sup_lookup(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json)
{
	struct sup *s = arg;

	for (size_t i = 0; i < s->nkinds; i++) {
		const struct kapi_res *r = &s->kinds[i].res;
		if (s->kinds[i].selector != NULL ||
		        strcmp(r->group, res->group) != 0 ||
		        strcmp(r->version, res->version) != 0 ||
		        strcmp(r->plural, res->plural) != 0) {
			continue;
		}
		if (!inf_synced(s->inf, i)) {
			return (-1);
		}
		*json = cache_get(inf_cache(s->inf, i), ns, name);
		return (*json != NULL ? 1 : 0);
	}
	return (-1);
}

bool
sup_may_write(void *arg)
{
	struct sup *s = arg;

	return (sup_leading(s, timefmt_now_ms_mono()));
}
