/*
 * path.c: the supervisor's data path wired to its three modules (sup.h
 * "path.c"): intake.c (watch events to queues), feed.c (queues to WORK),
 * settle.c (RESULT to writes to verdict) and the writer, whose ports are
 * answered here from the informer's caches, the worker pool and the
 * writer.  Glue only: the logic is in those modules.  The fence of all of
 * them, and of the writer, is one function: sup_fence().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/cache.h"
#include "supervisor/egress.h"
#include "supervisor/feed.h"
#include "supervisor/intake.h"
#include "supervisor/memstore.h"
#include "supervisor/otel.h"
#include "supervisor/restart.h"
#include "supervisor/settle.h"
#include "supervisor/sup.h"
#include "supervisor/wpolicy.h"

/* ---- the fence ---- */

bool
sup_fence(struct sup *s, int64_t now)
{
	return (leader_may_write(s->leader, now));
}

static bool
may_write_at(void *arg, int64_t now)
{
	return (sup_fence(arg, now));
}

bool
sup_may_write(void *arg)
{
	return (sup_fence(arg, timefmt_now_ms_mono()));
}

/* ---- intake: watch events to queues ---- */

void
sup_on_change(void *arg, size_t kind, enum inf_change change, const char *key,
        const struct inf_owner *old_owner, const struct inf_owner *new_owner)
{
	struct sup *s = arg;

	(void)change;
	intake_on_change(s->intake, kind, inf_origin(s->inf) == INF_LIST, key,
	        old_owner, new_owner, timefmt_now_ms_mono());
}

struct each {
	void (*add)(void *ctx, const char *key);
	void *ctx;
};

static int
each_one(void *arg, const struct cache_item *it)
{
	struct each *e = arg;

	e->add(e->ctx, it->key);
	return (0);
}

static void
each_object(void *arg, size_t kind, void (*add)(void *ctx, const char *key),
        void *ctx)
{
	struct sup *s = arg;
	struct each e = { add, ctx };

	cache_list(inf_cache(s->inf, kind), NULL, inf_filter(s->inf, kind),
	        each_one, &e);
}

void
sup_resync(struct sup *s, int64_t now)
{
	intake_resync(s->intake, each_object, s, now);
}

/* ---- feed: queues to WORK ---- */

static int
pool_idle(void *arg, const char *controller)
{
	return (wk_idle(((struct sup *)arg)->pool, controller));
}

static int
pool_dispatch(void *arg, const char *controller, const char *key,
        json_object *body, int64_t now)
{
	return (wk_dispatch(
	        ((struct sup *)arg)->pool, controller, key, body, now));
}

static json_object *
cache_object(void *arg, size_t kind, const char *key, char **uid)
{
	struct sup *s = arg;
	struct cache_item it;

	if (cache_lookup(inf_cache(s->inf, kind), key, &it) != 0) {
		return (NULL);
	}
	*uid = xstrdup(it.uid);
	return (cache_item_raw(&it));
}

static int
add_child(void *arg, const struct cache_item *it)
{
	/* serialized as cached, never parsed here (issue 7: parsing the
	 * children of every WORK was most of the supervisor's CPU) */
	json_object_array_add(arg, cache_item_raw(it));
	return (0);
}

static void
cache_children(void *arg, size_t kind, const char *uid, json_object *arr)
{
	inf_by_owner(((struct sup *)arg)->inf, kind, uid, add_child, arr);
}

static bool
cache_fresh(void *arg, size_t kind)
{
	return (inf_fresh(((struct sup *)arg)->inf, kind));
}

static bool
kind_synced(void *arg, size_t kind)
{
	return (inf_synced(((struct sup *)arg)->inf, kind));
}

/* Backpressure (feed.h): the writer holds SUP_WRITE_BACKLOG results.
 * With --max-concurrent-writes requests in flight, that bounds the
 * results (and their decoded writes) waiting in the supervisor under a
 * burst, as a controller's synchronous reconciles do upstream. */
#define SUP_WRITE_BACKLOG(s) (4 * (s)->cfg.max_writes)

static bool
writer_backlogged(void *arg)
{
	struct sup *s = arg;

	return (s->cfg.max_writes > 0
	        && wr_pending(s->wr) >= SUP_WRITE_BACKLOG(s));
}

void
sup_dispatch(struct sup *s, int64_t now)
{
	if (!s->stopping) {
		feed_run(s->feed, now);
	}
}

/* ---- settle: RESULT to writes to verdict ---- */

static int
wr_submit_port(void *arg, const struct wr_batch *b, uint64_t token)
{
	return (wr_submit(((struct sup *)arg)->wr, b, token));
}

/* The primary key of controller ctl as cached, parsed (caller puts), or
 * NULL. */
static json_object *
primary_object(struct sup *s, size_t ctl, const char *key)
{
	struct cache_item it;

	if (cache_lookup(inf_cache(s->inf, s->ctls[ctl].first_kind), key, &it)
	        != 0) {
		return (NULL);
	}
	return (jx_parse(it.json, it.json_len, 0, NULL, 0));
}

static void
wr_event_port(void *arg, size_t ctl, const char *key, const char *type,
        const char *reason, const char *message)
{
	struct sup *s = arg;
	json_object *obj = primary_object(s, ctl, key);

	if (obj != NULL) {
		wr_event(s->wr, obj, type, reason, message);
		json_object_put(obj);
	}
}

/* The write policy's view of controller ctl's caches (wpol_lookup_fn). */
struct pol_arg {
	struct sup *s;
	size_t ctl;
};

/* wpol_lookup_fn over the controller's own caches (wpolicy.h): 2 when a
 * synced cache of every object of res in ns lacks it. */
static int
pol_lookup(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json)
{
	struct pol_arg *pa = arg;
	struct sup *s = pa->s;
	const struct sup_ctl *c = &s->ctls[pa->ctl];
	bool unsynced = false, complete = false;

	for (size_t i = c->first_kind; i < c->first_kind + c->spec->nwatches;
	        i++) {
		const struct kapi_res *r = &s->kinds[i].res;
		if (strcmp(r->group, res->group) != 0
		        || strcmp(r->version, res->version) != 0
		        || strcmp(r->plural, res->plural) != 0
		        || r->namespaced != res->namespaced) {
			continue;
		}
		if (!inf_synced(s->inf, i)) {
			unsynced = true;
			continue;
		}
		if ((*json = cache_get(inf_cache(s->inf, i), ns, name))
		        != NULL) {
			return (1);
		}
		complete = complete
		        || ((s->kinds[i].selector == NULL
		                    || s->kinds[i].selector[0] == '\0')
		                && (s->kinds[i].ns == NULL
		                        || strcmp(s->kinds[i].ns, ns) == 0));
	}
	return (unsynced ? -1 : complete ? 2 : 0);
}

static enum wpol_verdict
check_port(void *arg, size_t ctl, const struct ipc_result *r,
        const struct ipc_write *ops, struct wpol_violation *v)
{
	struct sup *s = arg;
	struct pol_arg pa = { s, ctl };
	struct wpol_input in
	        = { .ctrl = contract_find(s->ctls[ctl].spec->name),
		          .key = r->key,
		          .primary = primary_object(s, ctl, r->key),
		          .ops = ops,
		          .n = r->nwrites,
		          .lookup = pol_lookup,
		          .arg = &pa,
		          .allow_wildcard = s->cfg.allow_skill_wildcard };
	enum wpol_verdict rc;

	if (in.ctrl == NULL) {
		json_object_put(in.primary);
		*v = (struct wpol_violation) { "resource", 0, "" };
		snprintf(v->detail, sizeof(v->detail), "no write table");
		return (WPOL_VIOLATION);
	}
	rc = wpol_check(&in, v);
	json_object_put(in.primary);
	return (rc);
}

/* The telemetry of a settled RESULT to the OpenTelemetry signals, the
 * span times on the wall clock. */
static void
take_telemetry(struct sup *s, size_t ctl, json_object *tel, int64_t sent_ms,
        int64_t now)
{
	int64_t end = timefmt_now_us_real() * 1000;
	int64_t start = sent_ms >= 0 && sent_ms <= now
	        ? end - (now - sent_ms) * 1000000
	        : end;
	char err[256];

	if (s->otel != NULL
	        && otel_ingest(s->otel, s->ctls[ctl].spec->name, tel, start,
	                   end, err, sizeof(err))
	                != 0) {
		log_warnx("%s: %s", s->ctls[ctl].spec->name, err);
	}
}

/* A failure record for the run's memory server (memstore.h), POSTed by
 * the egress thread, started at the first one. */
static void
take_memory(struct sup *s, size_t ctl, const char *key, json_object *mem)
{
	json_object *run = primary_object(s, ctl, key);
	char err[256], *url, *body, *what;

	if (run == NULL) {
		return; /* deleted meanwhile: nothing to learn from */
	}
	if (memstore_request(run, mem, &url, &body, err, sizeof(err)) != 0) {
		log_debug("agentrun: %s: %s", key, err);
		json_object_put(run);
		return;
	}
	json_object_put(run);
	if (s->egress == NULL) {
		s->egress = egress_new(NULL, NULL);
	}
	what = xasprintf("agentrun %s", key);
	if (s->egress != NULL) {
		egress_post(s->egress, url, body, what);
	}
	free(what);
	free(url);
	free(body);
}

/* What a settled RESULT asks besides its writes.  Not under --shadow: it
 * sends nothing, and the upstream operator beside it reports and stores
 * the same runs. */
static void
settled_port(void *arg, size_t ctl, const char *key, json_object *tel,
        json_object *mem, int64_t sent_ms, int64_t now)
{
	struct sup *s = arg;

	if (s->shadow != NULL) {
		return;
	}
	if (tel != NULL) {
		take_telemetry(s, ctl, tel, sent_ms, now);
	}
	if (mem != NULL) {
		take_memory(s, ctl, key, mem);
	}
}

/* The index of controller name in s->ctls, or SIZE_MAX. */
static size_t
ctl_index(const struct sup *s, const char *name)
{
	for (size_t i = 0; name != NULL && i < s->nctls; i++) {
		if (strcmp(s->ctls[i].spec->name, name) == 0) {
			return (i);
		}
	}
	return (SIZE_MAX);
}

void
sup_violation(struct sup *s, struct wk_worker *w, const char *rule,
        const char *detail, int64_t now)
{
	const char *ctl = wk_worker_controller(w);
	const char *key = wk_worker_key(w);
	size_t idx = ctl_index(s, ctl);
	char msg[512];

	if (w == NULL || key == NULL || idx == SIZE_MAX) {
		log_error("policy violation (%s) without a key in flight: %s",
		        rule, detail);
		return;
	}
	snprintf(msg, sizeof(msg), "policy violation (%s): %s", rule, detail);
	log_error("%s: %s: %s; the worker is killed and the key "
	          "quarantined",
	        ctl, key, msg);
	stats_violation(s->stats, ctl, rule);
	wr_event_port(s, idx, key, "Warning", "PolicyViolation", msg);
	wk_violation(w, msg, now);
}

void
sup_on_result(void *arg, const char *controller, struct wk_worker *w,
        const struct ipc_result *r, const struct ipc_write *ops)
{
	struct sup *s = arg;
	int64_t now = timefmt_now_ms_mono();
	struct wpol_violation v;
	char detail[320];

	/* telemetry outside the controller's signal policy is a violation,
	 * found before any write is sent */
	if (r->telemetry != NULL
	        && otel_check(controller, r->telemetry, detail, sizeof(detail))
	                != 0) {
		sup_violation(s, w, "telemetry", detail, now);
		return;
	}
	if (r->memory_store != NULL
	        && memstore_check(
	                   controller, r->memory_store, detail, sizeof(detail))
	                != 0) {
		sup_violation(s, w, "memory-store", detail, now);
		return;
	}
	if (settle_result(s->settle, controller, wk_worker_index(w), r, ops,
	            leader_epoch(s->leader), now, &v)
	        == 0) {
		return;
	}
	if (v.index < r->nwrites) {
		snprintf(detail, sizeof(detail), "write %zu: %s", v.index,
		        v.detail);
	} else {
		snprintf(detail, sizeof(detail), "%s", v.detail);
	}
	sup_violation(s, w, v.rule, detail, now);
}

void
sup_on_written(void *arg, uint64_t token, const struct wr_report *rep)
{
	struct sup *s = arg;

	settle_written(s->settle, token, rep, timefmt_now_ms_mono());
}

void
sup_on_lost(void *arg, const char *controller, const char *key,
        const char *cause, bool quarantined)
{
	struct sup *s = arg;
	struct quarantine *q = wk_quarantine(s->pool, controller);
	struct settle_loss l = { .cause = cause, .quarantined = quarantined };

	if (quarantined) {
		l.until_ms = quarantine_until(q, key);
		l.deaths = quarantine_deaths(q, key);
	}
	settle_lost(s->settle, controller, key, &l, timefmt_now_ms_mono());
}

void
sup_on_released(void *arg, const char *controller, const char *key)
{
	struct sup *s = arg;

	settle_released(s->settle, controller, key, timefmt_now_ms_mono());
}

/* ---- the writer's no-op lookup ---- */

int
sup_lookup(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json)
{
	struct sup *s = arg;

	for (size_t i = 0; i < s->nkinds; i++) {
		const struct kapi_res *r = &s->kinds[i].res;
		if (s->kinds[i].selector != NULL
		        || strcmp(r->group, res->group) != 0
		        || strcmp(r->version, res->version) != 0
		        || strcmp(r->plural, res->plural) != 0) {
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

/* ---- set-up ---- */

void
sup_path_new(struct sup *s)
{
	struct feed_conf fc = { .pool = { pool_idle, pool_dispatch },
		.cache
		= { cache_object, cache_children, cache_fresh, kind_synced },
		.may_write = may_write_at,
		.backlogged = writer_backlogged,
		.arg = s };
	struct settle_conf sc = { .wr = { wr_submit_port, wr_event_port },
		.check = check_port,
		.may_write = may_write_at,
		.settled = settled_port,
		.arg = s,
		.stats = s->stats };

	s->intake = intake_new();
	s->feed = feed_new(&fc);
	s->settle = settle_new(&sc);
	/* in s->ctls' order: settle's and intake's indexes are s->ctls'
	 * (wr_event_port()) and the informer's kind numbers (add_kinds()) */
	for (size_t i = 0; i < s->nctls; i++) {
		struct sup_ctl *c = &s->ctls[i];
		intake_add(s->intake, c->spec, c->q);
		feed_add(s->feed, c->spec, c->first_kind, c->q, &c->paused);
		settle_set_kind(s->settle,
		        settle_add(s->settle, c->spec->name, c->q),
		        c->spec->watches[0].res.group,
		        c->spec->watches[0].kind);
	}
}

void
sup_path_free(struct sup *s)
{
	settle_free(s->settle);
	feed_free(s->feed);
	intake_free(s->intake);
}
