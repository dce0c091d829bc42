/*
 * informer.c: one reflector and one watch cache per kind over a shared
 * kapi multi handle (informer.h).  Owns the translation between the
 * reflector's actions and kapi requests, the gathering of LIST pages until
 * the list is complete, the decoding of watch streams, and the change
 * callbacks to the supervisor.  Single-threaded: the request callbacks run
 * inside kapi_multi_perform() on the loop's thread.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/kapi_watch.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/stats.h"
#include "supervisor/informer.h"
#include "supervisor/labelsel.h"
#include "supervisor/reflector.h"

struct kind {
	struct inf *in;
	size_t idx;
	struct inf_kind k; /* strings point to the owned copies below */
	char *name, *group, *version, *plural, *selector, *ns;
	struct refl *refl;
	struct cache *cache;
	int64_t until_ms; /* next refl_next() due; INT64_MAX: waiting */
	uint64_t list_id;
	json_object **items; /* list pages gathered so far (owned refs) */
	size_t nitems, capitems;
	uint64_t watch_id;
	struct kapi_watch *dec;
	bool reported_sync;
	uint64_t watch_errors, events, watch_bytes;
};

struct inf {
	struct kapi_multi *m;
	struct inf_conf conf;
	struct kind *kinds;
	size_t n;
	enum inf_origin origin; /* of the changes being reported */
};

static int64_t
clock_now(const struct inf *in)
{
	if (in->conf.clock != NULL) {
		return (in->conf.clock(in->conf.clock_arg));
	}
	return (timefmt_now_ms_mono());
}

static char *
dup_or_null(const char *s)
{
	return (s != NULL && s[0] != '\0' ? xstrdup(s) : NULL);
}

static int
kind_init(struct inf *in, struct kind *k, size_t i, const struct inf_kind *src)
{
	char err[128];
	struct labelsel *sel;

	if (src->name == NULL || src->name[0] == '\0'
	        || src->res.plural == NULL || src->res.plural[0] == '\0'
	        || src->res.version == NULL || src->res.version[0] == '\0') {
		log_warnx("informer: kind %zu lacks a name, version or plural",
		        i);
		return (-1);
	}
	sel = labelsel_parse(src->selector, err, sizeof(err));
	if (sel == NULL) {
		log_warnx("informer: %s: selector: %s", src->name, err);
		return (-1);
	}
	labelsel_free(sel);
	k->in = in;
	k->idx = i;
	k->k.name = k->name = xstrdup(src->name);
	k->k.res.group = k->group
	        = xstrdup(src->res.group != NULL ? src->res.group : "");
	k->k.res.version = k->version = xstrdup(src->res.version);
	k->k.res.plural = k->plural = xstrdup(src->res.plural);
	k->k.res.namespaced = src->res.namespaced;
	k->k.selector = k->selector = dup_or_null(src->selector);
	k->k.ns = k->ns = dup_or_null(src->ns);
	k->refl = refl_new(in->conf.seed + i);
	k->cache = cache_new(src->name);
	k->until_ms = 0;
	return (0);
}

static void
drop_items(struct kind *k)
{
	for (size_t i = 0; i < k->nitems; i++) {
		json_object_put(k->items[i]);
	}
	k->nitems = 0;
}

static void
kind_fini(struct kind *k)
{
	if (k->in == NULL) {
		return;
	}
	if (k->list_id != 0) {
		kapi_multi_cancel(k->in->m, k->list_id);
	}
	if (k->watch_id != 0) {
		kapi_multi_cancel(k->in->m, k->watch_id);
	}
	kapi_watch_free(k->dec);
	drop_items(k);
	free(k->items);
	refl_free(k->refl);
	cache_free(k->cache);
	free(k->name);
	free(k->group);
	free(k->version);
	free(k->plural);
	free(k->selector);
	free(k->ns);
}

struct inf *
inf_new(struct kapi_multi *m, const struct inf_kind *kinds, size_t n,
        const struct inf_conf *conf)
{
	struct inf *in = xcalloc(1, sizeof(*in));

	in->m = m;
	if (conf != NULL) {
		in->conf = *conf;
	}
	in->kinds = xcalloc(n > 0 ? n : 1, sizeof(*in->kinds));
	for (size_t i = 0; i < n; i++) {
		if (kind_init(in, &in->kinds[i], i, &kinds[i]) < 0) {
			inf_free(in);
			return (NULL);
		}
		in->n = i + 1;
	}
	return (in);
}

void
inf_free(struct inf *in)
{
	if (in == NULL) {
		return;
	}
	for (size_t i = 0; i < in->n; i++) {
		kind_fini(&in->kinds[i]);
	}
	free(in->kinds);
	free(in);
}

/* ---- outcomes ---- */

static enum refl_result
result_of(const struct kapi_err *e)
{
	switch (e->rc) {
	case KAPI_OK:
		return (REFL_OK);
	case KAPI_EGONE:
		return (REFL_EXPIRED);
	case KAPI_ETIMEOUT:
		if (e->code == 504 && strcmp(e->reason, "TooLarge") == 0) {
			return (REFL_TOO_LARGE);
		}
		return (REFL_RETRY);
	case KAPI_ETOOMANY:
	case KAPI_ESERVER:
	case KAPI_ETRANSPORT:
		return (REFL_RETRY);
	default:
		if (e->code == 504 && strcmp(e->reason, "TooLarge") == 0) {
			return (REFL_TOO_LARGE);
		}
		return (REFL_ERROR);
	}
}

/* An ERROR watch event's Status code as a reflector outcome. */
static enum refl_result
result_of_status(long code, const char *reason)
{
	if (code == 410 || strcmp(reason, "Expired") == 0
	        || strcmp(reason, "Gone") == 0) {
		return (REFL_EXPIRED);
	}
	if (code == 504 && strcmp(reason, "TooLarge") == 0) {
		return (REFL_TOO_LARGE);
	}
	if (code == 429 || code >= 500) {
		return (REFL_RETRY);
	}
	return (REFL_ERROR);
}

static void
report(struct kind *k, enum inf_change ch, const char *key,
        const struct inf_owner *old_o, const struct inf_owner *new_o)
{
	static const struct inf_owner none = { NULL, NULL, NULL };
	struct inf *in = k->in;

	if (in->conf.on_change == NULL) {
		return;
	}
	in->conf.on_change(in->conf.arg, k->idx, ch, key,
	        ch == INF_ADD ? &none : old_o,
	        ch == INF_DELETE ? &none : new_o);
}

static void
owner_of_item(const struct cache_item *it, struct inf_owner *o)
{
	o->kind = it->owner_kind;
	o->name = it->owner_name;
	o->uid = it->owner_uid;
}

static void
owner_of_res(const struct cache_owner *co, struct inf_owner *o)
{
	o->kind = co->kind;
	o->name = co->name;
	o->uid = co->uid;
}

/* ---- lists ---- */

static void
on_add(void *arg, const struct cache_item *obj)
{
	struct inf_owner o;

	owner_of_item(obj, &o);
	report(arg, INF_ADD, obj->key, NULL, &o);
}

static void
on_update(
        void *arg, const struct cache_item *old, const struct cache_item *obj)
{
	struct inf_owner oo, no;

	if (old->json_len == obj->json_len
	        && memcmp(old->json, obj->json, obj->json_len) == 0) {
		return;
	}
	owner_of_item(old, &oo);
	owner_of_item(obj, &no);
	report(arg, INF_UPDATE, obj->key, &oo, &no);
}

static void
on_delete(void *arg, const struct cache_item *tomb)
{
	struct inf_owner o;

	owner_of_item(tomb, &o);
	report(arg, INF_DELETE, tomb->key, &o, NULL);
}

static void
list_complete(struct kind *k)
{
	static const struct cache_handlers h
	        = { on_add, on_update, on_delete };
	size_t skipped;

	/* queue lanes (docs-perfqueue.md): the changes are a list's */
	k->in->origin = k->reported_sync ? INF_RELIST : INF_LIST;
	skipped = cache_replace(
	        k->cache, k->items, k->nitems, refl_list_rv(k->refl), &h, k);
	k->in->origin = INF_LIVE;
	if (skipped > 0) {
		log_warnx("informer: %s: %zu invalid listed objects skipped",
		        k->k.name, skipped);
	}
	drop_items(k);
	/* A list's parsed pages are many small json-c allocations, freed
	 * here all at once: give the pages back to the system, or the
	 * supervisor keeps the peak of its largest list resident (issue 7
	 * memory benchmark, docs-bench2.md). */
	malloc_trim(0);
	if (!k->reported_sync) {
		k->reported_sync = true;
		cache_set_synced(k->cache, true);
		if (k->in->conf.on_synced != NULL) {
			k->in->conf.on_synced(k->in->conf.arg, k->idx);
		}
	}
}

/* Items of a list answer may lack apiVersion and kind (real servers leave
 * them out of built-in lists): they come from the list's own, so every
 * cached object names its kind (ownerReferences are built from them). */
static void
fill_type(json_object *item, json_object *doc)
{
	const char *lk = jx_get_str(doc, "kind");
	const char *av = jx_get_str(doc, "apiVersion");
	size_t n = lk != NULL ? strlen(lk) : 0;

	if (!json_object_is_type(item, json_type_object)) {
		return;
	}
	if (json_object_object_get(item, "apiVersion") == NULL && av != NULL) {
		json_object_object_add(item, "apiVersion",
		        json_object_new_string(av));
	}
	if (json_object_object_get(item, "kind") == NULL && n > 4 &&
	        strcmp(lk + n - 4, "List") == 0) {
		json_object_object_add(item, "kind",
		        json_object_new_string_len(lk, (int)(n - 4)));
	}
}

static void
keep_items(struct kind *k, json_object *items, json_object *doc)
{
	size_t n = json_object_array_length(items);

	if (k->nitems + n > k->capitems) {
		k->capitems = (k->nitems + n) * 2;
		k->items = xreallocarray(
		        k->items, k->capitems, sizeof(*k->items));
	}
	for (size_t i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i);
		fill_type(it, doc);
		k->items[k->nitems++] = json_object_get(it);
	}
}

/* Parses a list answer into *doc (owned) and its items (borrowed from
 * *doc, NULL when there are none). */
static enum refl_result
parse_list(struct kapi_resp *resp, json_object **doc, json_object **items)
{
	*doc = jx_parse(resp->body.data, resp->body.len, 0, NULL, 0);
	*items = *doc != NULL ? jx_get(*doc, "items") : NULL;
	if (*doc == NULL) {
		return (REFL_ERROR);
	}
	if (*items == NULL || json_object_is_type(*items, json_type_array)) {
		return (REFL_OK);
	}
	if (json_object_is_type(*items, json_type_null)) {
		*items = NULL;
		return (REFL_OK);
	}
	*items = NULL;
	return (REFL_ERROR);
}

static void
list_done(void *arg, struct kapi_resp *resp)
{
	struct kind *k = arg;
	enum refl_result res = result_of(&resp->err);
	json_object *doc = NULL, *items = NULL;
	enum refl_list_step step;

	stats_api(k->in->conf.stats, KAPI_LIST, resp->code);
	k->list_id = 0;
	k->until_ms = 0;
	if (res == REFL_OK) {
		res = parse_list(resp, &doc, &items);
	} else {
		log_debug("informer: %s: list failed: %s", k->k.name,
		        resp->err.message != NULL ? resp->err.message : "");
	}
	if (items != NULL) {
		keep_items(k, items, doc);
	}
	step = refl_list_page(k->refl, res,
	        doc != NULL ? jx_get_str(doc, "metadata.continue") : NULL,
	        doc != NULL ? jx_get_str(doc, "metadata.resourceVersion")
	                    : NULL,
	        clock_now(k->in));
	json_object_put(doc);
	if (step == REFL_LIST_DONE) {
		list_complete(k);
	} else if (step == REFL_LIST_RESTART) {
		drop_items(k);
	}
}

static void
send_list(struct kind *k, const struct refl_action *act)
{
	struct kapi_req req;

	memset(&req, 0, sizeof(req));
	req.verb = KAPI_LIST;
	req.res = &k->k.res;
	req.ns = k->k.ns;
	req.list.label_selector = k->k.selector;
	req.list.resource_version = act->rv[0] != '\0' ? act->rv : NULL;
	req.list.resource_version_match = act->rv_match;
	req.list.limit = act->limit;
	req.list.cont = act->cont;
	k->list_id = kapi_multi_submit(k->in->m, &req, list_done, k);
}

/* ---- watches ---- */

static void
watch_finish(struct kind *k, enum refl_result res)
{
	kapi_watch_free(k->dec);
	k->dec = NULL;
	k->watch_id = 0;
	k->until_ms = 0;
	if (res != REFL_OK) {
		k->watch_errors++;
	}
	refl_watch_end(k->refl, res, clock_now(k->in));
}

static const enum cache_event cache_ev[] = {
	[KAPI_WATCH_ADDED] = CACHE_EV_ADDED,
	[KAPI_WATCH_MODIFIED] = CACHE_EV_MODIFIED,
	[KAPI_WATCH_DELETED] = CACHE_EV_DELETED,
	[KAPI_WATCH_BOOKMARK] = CACHE_EV_BOOKMARK,
};

static void
apply_event(struct kind *k, struct kapi_watch_event *ev)
{
	static const enum inf_change chg[] = {
		[CACHE_ADD] = INF_ADD,
		[CACHE_UPDATE] = INF_UPDATE,
		[CACHE_DELETE] = INF_DELETE,
	};
	struct cache_result res;
	struct inf_owner oo, no;
	enum cache_change c;

	refl_watch_event(k->refl, ev->rv);
	c = cache_apply(k->cache, cache_ev[ev->type], ev->object, &res);
	k->events++;
	if (c == CACHE_INVALID) {
		log_warnx("informer: %s: %s event refused: %s", k->k.name,
		        kapi_watch_type_name(ev->type), res.err);
	} else if (c != CACHE_UNCHANGED) {
		owner_of_res(&res.old_owner, &oo);
		owner_of_res(&res.new_owner, &no);
		report(k, chg[c], res.key, &oo, &no);
	}
	cache_result_fini(&res);
}

/* Handles one event; returns false when the watch is over. */
static bool
handle_event(struct kind *k, struct kapi_watch_event *ev)
{
	long code = 0;
	const char *reason = "", *msg = "";

	if (ev->type != KAPI_WATCH_ERROR) {
		apply_event(k, ev);
		return (true);
	}
	kapi_watch_error_status(ev, &code, &reason, &msg);
	log_debug("informer: %s: watch ERROR %ld %s: %s", k->k.name, code,
	        reason, msg);
	kapi_multi_cancel(k->in->m, k->watch_id);
	watch_finish(k, result_of_status(code, reason));
	return (false);
}

static void
watch_data(void *arg, uint64_t id, const char *data, size_t len)
{
	struct kind *k = arg;
	struct kapi_watch_event ev;
	int rc;

	if (id != k->watch_id || k->dec == NULL) {
		return;
	}
	k->watch_bytes += len;
	if (kapi_watch_feed(k->dec, data, len) < 0) {
		rc = -1;
	} else {
		while ((rc = kapi_watch_next(k->dec, &ev)) == 1) {
			bool go_on = handle_event(k, &ev);

			kapi_watch_event_fini(&ev);
			if (!go_on) {
				return;
			}
		}
	}
	if (rc < 0) {
		log_warnx("informer: %s: watch stream broken: %s", k->k.name,
		        kapi_watch_error(k->dec));
		kapi_multi_cancel(k->in->m, k->watch_id);
		watch_finish(k, REFL_RETRY);
	}
}

static void
watch_done(void *arg, struct kapi_resp *resp)
{
	struct kind *k = arg;
	enum refl_result res = result_of(&resp->err);

	if (resp->id != k->watch_id) {
		return;
	}
	stats_api(k->in->conf.stats, KAPI_WATCH, resp->code);
	if (res == REFL_OK && kapi_watch_finish(k->dec) < 0) {
		log_warnx("informer: %s: watch: %s", k->k.name,
		        kapi_watch_error(k->dec));
		res = REFL_RETRY;
	} else if (res != REFL_OK) {
		log_debug("informer: %s: watch ended: %s", k->k.name,
		        resp->err.message != NULL ? resp->err.message : "");
	}
	watch_finish(k, res);
}

static void
send_watch(struct kind *k, const struct refl_action *act, int64_t now_ms)
{
	struct kapi_req req;

	memset(&req, 0, sizeof(req));
	req.verb = KAPI_WATCH;
	req.res = &k->k.res;
	req.ns = k->k.ns;
	req.list.label_selector = k->k.selector;
	req.list.resource_version = act->rv[0] != '\0' ? act->rv : NULL;
	req.list.timeout_seconds = act->timeout_s;
	req.list.allow_watch_bookmarks = true;
	k->dec = kapi_watch_new(k->in->conf.max_event_bytes, 0);
	k->watch_id
	        = kapi_multi_watch(k->in->m, &req, watch_data, watch_done, k);
	refl_watch_started(k->refl, now_ms);
}

/* ---- timers ---- */

static void
kind_tick(struct kind *k, int64_t now_ms)
{
	struct refl_action act;

	while (k->until_ms <= now_ms) {
		refl_next(k->refl, now_ms, &act);
		switch (act.type) {
		case REFL_LIST:
			send_list(k, &act);
			break;
		case REFL_WATCH:
			send_watch(k, &act, now_ms);
			break;
		case REFL_NONE:
			k->until_ms = act.until_ms;
			break;
		}
	}
}

void
inf_tick(struct inf *in, int64_t now_ms)
{
	for (size_t i = 0; i < in->n; i++) {
		kind_tick(&in->kinds[i], now_ms);
	}
}

int64_t
inf_next_deadline(const struct inf *in, int64_t now_ms)
{
	int64_t t = INT64_MAX;

	for (size_t i = 0; i < in->n; i++) {
		if (in->kinds[i].until_ms < t) {
			t = in->kinds[i].until_ms;
		}
	}
	return (t < now_ms ? now_ms : t);
}

/* ---- reads ---- */

size_t
inf_nkinds(const struct inf *in)
{
	return (in->n);
}

int
inf_kind_index(const struct inf *in, const char *name)
{
	for (size_t i = 0; i < in->n; i++) {
		if (strcmp(in->kinds[i].k.name, name) == 0) {
			return ((int)i);
		}
	}
	return (-1);
}

const struct inf_kind *
inf_kind(const struct inf *in, size_t kind)
{
	return (kind < in->n ? &in->kinds[kind].k : NULL);
}

struct cache *
inf_cache(const struct inf *in, size_t kind)
{
	return (kind < in->n ? in->kinds[kind].cache : NULL);
}

bool
inf_synced(const struct inf *in, size_t kind)
{
	return (kind < in->n && in->kinds[kind].reported_sync);
}

bool
inf_fresh(const struct inf *in, size_t kind)
{
	int64_t since;

	if (kind >= in->n || !in->kinds[kind].reported_sync
	        || !refl_watching(in->kinds[kind].refl, &since)) {
		return (false);
	}
	return (clock_now(in) - since >= INF_FRESH_MS);
}

enum inf_origin
inf_origin(const struct inf *in)
{
	return (in->origin);
}

bool
inf_all_synced(const struct inf *in)
{
	for (size_t i = 0; i < in->n; i++) {
		if (!in->kinds[i].reported_sync) {
			return (false);
		}
	}
	return (true);
}

void
inf_stats(const struct inf *in, size_t kind, struct inf_stats *out)
{
	const struct kind *k;
	const struct refl_stats *rs;

	memset(out, 0, sizeof(*out));
	if (kind >= in->n) {
		return;
	}
	k = &in->kinds[kind];
	rs = refl_stats(k->refl);
	out->lists = rs->lists;
	out->list_requests = rs->list_requests;
	out->relists = rs->relists;
	out->watches = rs->watches;
	out->watch_restarts = rs->watch_restarts;
	out->watch_errors = k->watch_errors;
	out->events = k->events;
	out->watch_bytes = k->watch_bytes;
	out->objects = cache_count(k->cache);
	out->bytes = cache_bytes(k->cache);
	out->synced = k->reported_sync;
}
