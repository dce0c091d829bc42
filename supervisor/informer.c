/*
 * informer.c: one reflector and one watch cache per source over a shared
 * kapi multi handle (informer.h).  A source is a distinct (resource,
 * namespace, selector); kinds with the same one share it, and a selected
 * kind is served, filtered, by the unselected source of its resource and
 * namespace when there is one.  Owns the translation between the
 * reflector's actions and kapi requests, LIST pages (decoded item by item,
 * common/kapi_list.h) into staged cache entries, watch streams, and
 * the change callbacks to the supervisor (fanned out to every kind of the
 * source, through its filter).  Single-threaded: the request callbacks run
 * inside kapi_multi_perform() on the loop's thread.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi_list.h"
#include "common/kapi_watch.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/stats.h"
#include "supervisor/informer.h"
#include "supervisor/labelsel.h"
#include "supervisor/reflector.h"

/* One reflector and cache: the request side, shared by its kinds. */
struct src {
	struct inf *in;
	struct kind *k; /* the first kind: its name, resource, selector */
	struct refl *refl;
	struct cache *cache;
	int64_t until_ms; /* next refl_next() due; INT64_MAX: waiting */
	uint64_t list_id;
	struct cache_stage *stage; /* list pages decoded so far */
	uint64_t watch_id;
	struct kapi_watch *dec;
	bool reported_sync;
	bool filtered; /* some kind of it has a filter */
	uint64_t watch_errors, events, watch_bytes;
	int64_t fresh_ms;    /* last known in sync (informer.h inf_age_ms) */
	uint64_t watch_seen; /* events of the open watch */
	uint64_t fails;      /* failed requests in the current streak */
	int64_t fail_since_ms;
};

struct kind {
	struct inf *in;
	size_t idx;
	struct inf_kind k; /* strings point to the owned copies below */
	char *name, *group, *version, *plural, *selector, *ns;
	struct src *src;
	struct labelsel *filter; /* served by a wider source: its selector */
	bool off;                /* not watched (inf_new_off()) */
};

struct inf {
	struct kapi_multi *m;
	struct inf_conf conf;
	struct kind *kinds;
	size_t n;
	enum inf_origin origin; /* of the changes being reported */
	struct src **srcs;
	size_t nsrcs;
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
kind_check(size_t i, const struct inf_kind *src)
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
	return (0);
}

static void
kind_init(struct inf *in, struct kind *k, size_t i, const struct inf_kind *src)
{
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
}

static bool
same_str(const char *a, const char *b)
{
	return (a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0);
}

/* Whether a and b watch the same resource in the same namespace. */
static bool
same_res(const struct kind *a, const struct kind *b)
{
	return (strcmp(a->group, b->group) == 0
	        && strcmp(a->version, b->version) == 0
	        && strcmp(a->plural, b->plural) == 0
	        && same_str(a->ns, b->ns));
}

/* The source serving k: one of the same resource and namespace, with the
 * same selector or (k filtering) none; else a new one. */
static void
kind_attach(struct inf *in, struct kind *k)
{
	struct src *s;

	for (size_t i = 0; !k->off && i < in->nsrcs; i++) {
		s = in->srcs[i];
		if (!s->k->off && same_res(s->k, k)
		        && same_str(s->k->selector, k->selector)) {
			k->src = s;
			return;
		}
	}
	for (size_t i = 0;
	        !k->off && k->selector != NULL && k->idx < 64 && i < in->nsrcs;
	        i++) {
		s = in->srcs[i];
		if (!s->k->off && same_res(s->k, k)
		        && s->k->selector == NULL) {
			k->src = s;
			k->filter = labelsel_parse(k->selector, NULL, 0);
			s->filtered = true;
			return;
		}
	}
	s = xcalloc(1, sizeof(*s));
	s->in = in;
	s->k = k;
	s->refl = refl_new(in->conf.seed + k->idx);
	s->cache = cache_new(k->name);
	s->stage = cache_stage_new();
	s->fresh_ms = clock_now(in);
	if (k->off) {
		/* never due: synced and empty for good */
		s->until_ms = INT64_MAX;
		s->reported_sync = true;
		cache_set_synced(s->cache, true);
	}
	in->srcs = xreallocarray(in->srcs, in->nsrcs + 1, sizeof(*in->srcs));
	in->srcs[in->nsrcs++] = s;
	k->src = s;
}

static void
src_free(struct inf *in, struct src *s)
{
	if (s->list_id != 0) {
		kapi_multi_cancel(in->m, s->list_id);
	}
	if (s->watch_id != 0) {
		kapi_multi_cancel(in->m, s->watch_id);
	}
	kapi_watch_free(s->dec);
	cache_stage_free(s->stage);
	refl_free(s->refl);
	cache_free(s->cache);
	free(s);
}

static void
kind_fini(struct kind *k)
{
	if (k->in == NULL) {
		return;
	}
	labelsel_free(k->filter);
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
	return (inf_new_off(m, kinds, NULL, n, conf));
}

struct inf *
inf_new_off(struct kapi_multi *m, const struct inf_kind *kinds,
        const bool *off, size_t n, const struct inf_conf *conf)
{
	struct inf *in = xcalloc(1, sizeof(*in));

	in->m = m;
	if (conf != NULL) {
		in->conf = *conf;
	}
	in->kinds = xcalloc(n > 0 ? n : 1, sizeof(*in->kinds));
	for (size_t i = 0; i < n; i++) {
		if (kind_check(i, &kinds[i]) < 0) {
			inf_free(in);
			return (NULL);
		}
		kind_init(in, &in->kinds[i], i, &kinds[i]);
		in->kinds[i].off = off != NULL && off[i];
		in->n = i + 1;
	}
	/* unselected kinds first, so selected ones can share them */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			struct kind *k = &in->kinds[i];
			if ((k->selector == NULL) == (pass == 0)) {
				kind_attach(in, k);
			}
		}
	}
	return (in);
}

void
inf_free(struct inf *in)
{
	if (in == NULL) {
		return;
	}
	for (size_t i = 0; i < in->nsrcs; i++) {
		src_free(in, in->srcs[i]);
	}
	free(in->srcs);
	for (size_t i = 0; i < in->n; i++) {
		kind_fini(&in->kinds[i]);
	}
	free(in->kinds);
	free(in);
}

/* ---- outcomes ---- */

/* An answer's outcome for the reflector.  A resourceVersion newer than
 * the server has is told by the Status's causes (kapi_err.h), whatever
 * its code, as client-go tells it. */
static enum refl_result
result_of(const struct kapi_err *e)
{
	if (e->rc != KAPI_OK && e->rv_too_large) {
		return (REFL_TOO_LARGE);
	}
	switch (e->rc) {
	case KAPI_OK:
		return (REFL_OK);
	case KAPI_EGONE:
		return (REFL_EXPIRED);
	case KAPI_ETIMEOUT:
	case KAPI_ETOOMANY:
	case KAPI_ESERVER:
		return (REFL_RETRY);
	case KAPI_ETRANSPORT:
		return (REFL_LOST);
	default:
		return (REFL_ERROR);
	}
}

/* An ERROR watch event's Status as a reflector outcome. */
static enum refl_result
result_of_status(json_object *status, long code, const char *reason)
{
	if (code == 410 || strcmp(reason, "Expired") == 0
	        || strcmp(reason, "Gone") == 0) {
		return (REFL_EXPIRED);
	}
	if (kapi_status_rv_too_large(status)) {
		return (REFL_TOO_LARGE);
	}
	if (code == 429 || code >= 500) {
		return (REFL_RETRY);
	}
	return (REFL_ERROR);
}

/* Whether kind k sees item it (NULL: no object). */
static bool
sees(const struct kind *k, const struct cache_item *it)
{
	struct cache_item copy;

	if (it == NULL) {
		return (false);
	}
	if (k->filter == NULL) {
		return (true);
	}
	copy = *it;
	return (labelsel_match(k->filter, cache_item_label, &copy));
}

/* Bit i set: kind i of s's kinds (filtered ones only) sees it. */
static uint64_t
seen_by(const struct src *s, const struct cache_item *it)
{
	const struct inf *in = s->in;
	uint64_t bits = 0;

	for (size_t i = 0; i < in->n && i < 64; i++) {
		if (in->kinds[i].src == s && sees(&in->kinds[i], it)) {
			bits |= UINT64_C(1) << i;
		}
	}
	return (bits);
}

static void
report_kind(struct kind *k, enum inf_change ch, const char *key,
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

/*
 * Reports a change of s's cache to each kind of s.  A filtered kind sees
 * the object before (old_bits) and after (new_bits) through its selector:
 * an object leaving it is a delete, one entering it an add.
 */
static void
report(struct src *s, enum inf_change ch, const char *key,
        const struct inf_owner *old_o, const struct inf_owner *new_o,
        uint64_t old_bits, uint64_t new_bits)
{
	struct inf *in = s->in;

	for (size_t i = 0; i < in->n; i++) {
		struct kind *k = &in->kinds[i];
		bool was, is;

		if (k->src != s) {
			continue;
		}
		if (k->filter == NULL) {
			report_kind(k, ch, key, old_o, new_o);
			continue;
		}
		was = ch != INF_ADD && (old_bits >> i & 1) != 0;
		is = ch != INF_DELETE && (new_bits >> i & 1) != 0;
		if (was && is) {
			report_kind(k, INF_UPDATE, key, old_o, new_o);
		} else if (was) {
			report_kind(k, INF_DELETE, key, old_o, NULL);
		} else if (is) {
			report_kind(k, INF_ADD, key, NULL, new_o);
		}
	}
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
	struct src *s = arg;
	struct inf_owner o;

	owner_of_item(obj, &o);
	report(s, INF_ADD, obj->key, NULL, &o, 0,
	        s->filtered ? seen_by(s, obj) : 0);
}

static void
on_update(
        void *arg, const struct cache_item *old, const struct cache_item *obj)
{
	struct src *s = arg;
	struct inf_owner oo, no;

	if (old->json_len == obj->json_len
	        && memcmp(old->json, obj->json, obj->json_len) == 0) {
		return;
	}
	owner_of_item(old, &oo);
	owner_of_item(obj, &no);
	report(s, INF_UPDATE, obj->key, &oo, &no,
	        s->filtered ? seen_by(s, old) : 0,
	        s->filtered ? seen_by(s, obj) : 0);
}

static void
on_delete(void *arg, const struct cache_item *tomb)
{
	struct src *s = arg;
	struct inf_owner o;

	owner_of_item(tomb, &o);
	report(s, INF_DELETE, tomb->key, &o, NULL,
	        s->filtered ? seen_by(s, tomb) : 0, 0);
}

/* ---- failing streaks ---- */

/* A list or watch of s failed: the first failure after a success starts
 * a streak and says so, once. */
static void
src_failed(struct src *s, const char *what, const char *msg)
{
	if (s->fails++ == 0) {
		s->fail_since_ms = clock_now(s->in);
		log_warnx("informer: %s of %s%s%s failing: %s", what,
		        s->k->k.res.plural,
		        s->k->k.selector != NULL ? " " : "",
		        s->k->k.selector != NULL ? s->k->k.selector : "",
		        msg != NULL && msg[0] != '\0' ? msg : "no answer");
	}
}

/* s is in sync (a list completed, a watch event came): a streak ends. */
static void
src_ok(struct src *s)
{
	int64_t now = clock_now(s->in);

	s->fresh_ms = now;
	if (s->fails > 0) {
		log_info("informer: list/watch of %s%s%s recovered after "
		         "%llu failure(s) / %.1f s",
		        s->k->k.res.plural,
		        s->k->k.selector != NULL ? " " : "",
		        s->k->k.selector != NULL ? s->k->k.selector : "",
		        (unsigned long long)s->fails,
		        (double)(now - s->fail_since_ms) / 1000.0);
		s->fails = 0;
	}
}

static void
list_complete(struct src *s)
{
	static const struct cache_handlers h
	        = { on_add, on_update, on_delete };
	struct inf *in = s->in;
	size_t skipped;

	/* queue lanes: the changes are a list's */
	in->origin = s->reported_sync ? INF_RELIST : INF_LIST;
	skipped = cache_replace_staged(
	        s->cache, s->stage, refl_list_rv(s->refl), &h, s);
	in->origin = INF_LIVE;
	src_ok(s);
	if (skipped > 0) {
		log_warnx("informer: %s: %zu invalid listed objects skipped",
		        s->k->k.name, skipped);
	}
	/* A list's parsed items are many small json-c allocations: give
	 * the freed pages back to the system, or the supervisor keeps the
	 * peak of its largest list resident (the memory benchmark,
	 * docs/benchmarks.md). */
	malloc_trim(0);
	if (s->reported_sync) {
		return;
	}
	s->reported_sync = true;
	cache_set_synced(s->cache, true);
	for (size_t i = 0; i < in->n && in->conf.on_synced != NULL; i++) {
		if (in->kinds[i].src == s) {
			in->conf.on_synced(in->conf.arg, i);
		}
	}
}

/* ---- list bodies (common/kapi_list.h) ---- */

static void
stage_item(void *arg, json_object *item)
{
	struct src *s = arg;

	cache_stage_add(s->stage, item);
}

/* An item nested deeper than the parser's limit: skipped with a warning
 * naming it. */
static void
skip_deep(void *arg, const char *name, size_t idx)
{
	struct src *s = arg;

	log_warnx("informer: %s: listed object %s%s(item %zu) nested deeper "
	          "than %d levels: skipped",
	        s->k->k.name, name, name[0] != '\0' ? " " : "", idx,
	        JX_DEFAULT_DEPTH);
}

/* Decodes a list answer: its items go to the stage; *doc (owned) keeps
 * the rest (metadata). */
static enum refl_result
parse_list(struct src *s, struct kapi_resp *resp, json_object **doc)
{
	struct kapi_list_cb cb = { stage_item, skip_deep, s };

	return (kapi_list_decode(resp->body.data, resp->body.len, doc, &cb)
	                        == 0
	                ? REFL_OK
	                : REFL_ERROR);
}

static void
list_done(void *arg, struct kapi_resp *resp)
{
	struct src *s = arg;
	enum refl_result res = result_of(&resp->err);
	json_object *doc = NULL;
	enum refl_list_step step;

	stats_api(s->in->conf.stats, KAPI_LIST, resp->code);
	s->list_id = 0;
	s->until_ms = 0;
	if (res == REFL_OK) {
		res = parse_list(s, resp, &doc);
	} else {
		log_debug("informer: %s: list failed: %s", s->k->k.name,
		        resp->err.message != NULL ? resp->err.message : "");
	}
	if (res != REFL_OK && res != REFL_EXPIRED && res != REFL_TOO_LARGE) {
		src_failed(s, "list", resp->err.message);
	}
	step = refl_list_page(s->refl, res,
	        doc != NULL ? jx_get_str(doc, "metadata.continue") : NULL,
	        doc != NULL ? jx_get_str(doc, "metadata.resourceVersion")
	                    : NULL,
	        clock_now(s->in));
	json_object_put(doc);
	if (step == REFL_LIST_DONE) {
		list_complete(s);
	} else if (step == REFL_LIST_RESTART) {
		cache_stage_clear(s->stage);
	}
}

static void
send_list(struct src *s, const struct refl_action *act)
{
	struct kapi_req req;

	memset(&req, 0, sizeof(req));
	req.verb = KAPI_LIST;
	req.res = &s->k->k.res;
	req.ns = s->k->k.ns;
	req.list.label_selector = s->k->k.selector;
	req.list.resource_version = act->rv[0] != '\0' ? act->rv : NULL;
	req.list.resource_version_match = act->rv_match;
	req.list.limit = act->limit;
	req.list.cont = act->cont;
	s->list_id = kapi_multi_submit(s->in->m, &req, list_done, s);
}

/* ---- watches ---- */

static void
watch_finish(struct src *s, enum refl_result res)
{
	kapi_watch_free(s->dec);
	s->dec = NULL;
	s->watch_id = 0;
	s->until_ms = 0;
	if (res != REFL_OK) {
		s->watch_errors++;
	}
	refl_watch_end(s->refl, res, clock_now(s->in));
}

static const enum cache_event cache_ev[] = {
	[KAPI_WATCH_ADDED] = CACHE_EV_ADDED,
	[KAPI_WATCH_MODIFIED] = CACHE_EV_MODIFIED,
	[KAPI_WATCH_DELETED] = CACHE_EV_DELETED,
	[KAPI_WATCH_BOOKMARK] = CACHE_EV_BOOKMARK,
};

/* The filter bits of the cached object the event is about (before it is
 * applied). */
static uint64_t
bits_before(struct src *s, struct kapi_watch_event *ev)
{
	const char *ns = jx_get_str(ev->object, "metadata.namespace");
	const char *name = jx_get_str(ev->object, "metadata.name");
	struct cache_item it;
	char *key;
	uint64_t bits = 0;

	if (!s->filtered || name == NULL || ev->type == KAPI_WATCH_BOOKMARK) {
		return (0);
	}
	key = ns != NULL && ns[0] != '\0' ? xasprintf("%s/%s", ns, name)
	                                  : xstrdup(name);
	if (cache_lookup(s->cache, key, &it) == 0) {
		bits = seen_by(s, &it);
	}
	free(key);
	return (bits);
}

static void
apply_event(struct src *s, struct kapi_watch_event *ev)
{
	static const enum inf_change chg[] = {
		[CACHE_ADD] = INF_ADD,
		[CACHE_UPDATE] = INF_UPDATE,
		[CACHE_DELETE] = INF_DELETE,
	};
	struct cache_result res;
	struct cache_item it;
	struct inf_owner oo, no;
	enum cache_change c;
	uint64_t ob = bits_before(s, ev), nb = 0;

	refl_watch_event(s->refl, ev->rv);
	c = cache_apply(s->cache, cache_ev[ev->type], ev->object, &res);
	s->events++;
	s->watch_seen++;
	src_ok(s);
	if (c == CACHE_INVALID) {
		log_warnx("informer: %s: %s event refused: %s", s->k->k.name,
		        kapi_watch_type_name(ev->type), res.err);
	} else if (c != CACHE_UNCHANGED) {
		if (s->filtered && c != CACHE_DELETE
		        && cache_lookup(s->cache, res.key, &it) == 0) {
			nb = seen_by(s, &it);
		}
		owner_of_res(&res.old_owner, &oo);
		owner_of_res(&res.new_owner, &no);
		report(s, chg[c], res.key, &oo, &no, ob, nb);
	}
	cache_result_fini(&res);
}

/* Handles one event; returns false when the watch is over. */
static bool
handle_event(struct src *s, struct kapi_watch_event *ev)
{
	long code = 0;
	const char *reason = "", *msg = "";

	if (ev->type != KAPI_WATCH_ERROR) {
		apply_event(s, ev);
		return (true);
	}
	kapi_watch_error_status(ev, &code, &reason, &msg);
	log_debug("informer: %s: watch ERROR %ld %s: %s", s->k->k.name, code,
	        reason, msg);
	kapi_multi_cancel(s->in->m, s->watch_id);
	watch_finish(s, result_of_status(ev->object, code, reason));
	return (false);
}

static void
watch_data(void *arg, uint64_t id, const char *data, size_t len)
{
	struct src *s = arg;
	struct kapi_watch_event ev;
	int rc;

	if (id != s->watch_id || s->dec == NULL) {
		return;
	}
	s->watch_bytes += len;
	if (kapi_watch_feed(s->dec, data, len) < 0) {
		rc = -1;
	} else {
		while ((rc = kapi_watch_next(s->dec, &ev)) == 1) {
			bool go_on = handle_event(s, &ev);

			kapi_watch_event_fini(&ev);
			if (!go_on) {
				return;
			}
		}
	}
	if (rc < 0) {
		log_warnx("informer: %s: watch stream broken: %s",
		        s->k->k.name, kapi_watch_error(s->dec));
		kapi_multi_cancel(s->in->m, s->watch_id);
		watch_finish(s, REFL_RETRY);
	}
}

static void
watch_done(void *arg, struct kapi_resp *resp)
{
	struct src *s = arg;
	enum refl_result res = result_of(&resp->err);

	if (resp->id != s->watch_id) {
		return;
	}
	stats_api(s->in->conf.stats, KAPI_WATCH, resp->code);
	if (res == REFL_OK && kapi_watch_finish(s->dec) < 0) {
		log_warnx("informer: %s: watch: %s", s->k->k.name,
		        kapi_watch_error(s->dec));
		res = REFL_RETRY;
	} else if (res != REFL_OK) {
		log_debug("informer: %s: watch ended: %s", s->k->k.name,
		        resp->err.message != NULL ? resp->err.message : "");
	}
	if (resp->code >= 200 && resp->code <= 299) {
		s->fresh_ms = clock_now(s->in); /* it was open until now */
	}
	if (res == REFL_OK) {
		src_ok(s);
	} else if (res != REFL_EXPIRED && res != REFL_TOO_LARGE) {
		src_failed(s, "watch", resp->err.message);
	}
	watch_finish(s, res);
}

static void
watch_skipped(void *arg, const char *what)
{
	struct src *s = arg;

	log_warnx("informer: %s: watch: %s: skipped", s->k->k.name, what);
}

static void
send_watch(struct src *s, const struct refl_action *act, int64_t now_ms)
{
	struct kapi_req req;

	memset(&req, 0, sizeof(req));
	req.verb = KAPI_WATCH;
	req.res = &s->k->k.res;
	req.ns = s->k->k.ns;
	req.list.label_selector = s->k->k.selector;
	req.list.resource_version = act->rv[0] != '\0' ? act->rv : NULL;
	req.list.timeout_seconds = act->timeout_s;
	req.list.allow_watch_bookmarks = true;
	s->dec = kapi_watch_new(s->in->conf.max_event_bytes, 0);
	s->watch_seen = 0;
	kapi_watch_set_skip(s->dec, watch_skipped, s);
	s->watch_id
	        = kapi_multi_watch(s->in->m, &req, watch_data, watch_done, s);
	refl_watch_started(s->refl, now_ms);
}

/* ---- timers ---- */

/* When s's streak ends by a watch that stays open: since it opened, or
 * INT64_MAX when that is not the case. */
static int64_t
recovery_due(const struct src *s)
{
	int64_t since;

	if (s->fails == 0 || !refl_watching(s->refl, &since)) {
		return (INT64_MAX);
	}
	return (since + INF_FRESH_MS);
}

static void
src_tick(struct src *s, int64_t now_ms)
{
	struct refl_action act;

	if (recovery_due(s) <= now_ms) {
		src_ok(s); /* its watch is open for good */
	}

	while (s->until_ms <= now_ms) {
		refl_next(s->refl, now_ms, &act);
		switch (act.type) {
		case REFL_LIST:
			send_list(s, &act);
			break;
		case REFL_WATCH:
			send_watch(s, &act, now_ms);
			break;
		case REFL_NONE:
			s->until_ms = act.until_ms;
			break;
		}
	}
}

void
inf_tick(struct inf *in, int64_t now_ms)
{
	for (size_t i = 0; i < in->nsrcs; i++) {
		src_tick(in->srcs[i], now_ms);
	}
}

int64_t
inf_next_deadline(const struct inf *in, int64_t now_ms)
{
	int64_t t = INT64_MAX;

	for (size_t i = 0; i < in->nsrcs; i++) {
		int64_t r = recovery_due(in->srcs[i]);
		if (in->srcs[i]->until_ms < t) {
			t = in->srcs[i]->until_ms;
		}
		t = r < t ? r : t;
	}
	return (t < now_ms ? now_ms : t);
}

/* ---- reads ---- */

size_t
inf_nkinds(const struct inf *in)
{
	return (in->n);
}

size_t
inf_nsources(const struct inf *in)
{
	return (in->nsrcs);
}

size_t
inf_source(const struct inf *in, size_t kind)
{
	for (size_t i = 0; kind < in->n && i < in->nsrcs; i++) {
		if (in->srcs[i] == in->kinds[kind].src) {
			return (i);
		}
	}
	return (SIZE_MAX);
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
	return (kind < in->n ? in->kinds[kind].src->cache : NULL);
}

const char *
inf_filter(const struct inf *in, size_t kind)
{
	if (kind >= in->n || in->kinds[kind].filter == NULL) {
		return (NULL);
	}
	return (in->kinds[kind].selector);
}

int
inf_by_owner(const struct inf *in, size_t kind, const char *uid,
        cache_each_fn *fn, void *arg)
{
	if (kind >= in->n) {
		return (0);
	}
	return (cache_by_owner_sel(
	        inf_cache(in, kind), uid, inf_filter(in, kind), fn, arg));
}

bool
inf_synced(const struct inf *in, size_t kind)
{
	return (kind < in->n && in->kinds[kind].src->reported_sync);
}

bool
inf_fresh(const struct inf *in, size_t kind)
{
	int64_t since;

	if (kind < in->n && in->kinds[kind].off) {
		return (true);
	}
	if (kind >= in->n || !in->kinds[kind].src->reported_sync
	        || !refl_watching(in->kinds[kind].src->refl, &since)) {
		return (false);
	}
	return (clock_now(in) - since >= INF_FRESH_MS);
}

int64_t
inf_age_ms(const struct inf *in, size_t kind)
{
	const struct src *s;
	int64_t since, now = clock_now(in);

	if (kind >= in->n) {
		return (0);
	}
	s = in->kinds[kind].src;
	if (in->kinds[kind].off) {
		return (0);
	}
	if (s->reported_sync && refl_watching(s->refl, &since)
	        && (s->watch_seen > 0 || now - since >= INF_FRESH_MS)) {
		return (0);
	}
	return (now > s->fresh_ms ? now - s->fresh_ms : 0);
}

enum inf_origin
inf_origin(const struct inf *in)
{
	return (in->origin);
}

bool
inf_all_synced(const struct inf *in)
{
	for (size_t i = 0; i < in->nsrcs; i++) {
		if (!in->srcs[i]->reported_sync) {
			return (false);
		}
	}
	return (true);
}

void
inf_stats(const struct inf *in, size_t kind, struct inf_stats *out)
{
	const struct src *s;
	const struct refl_stats *rs;

	memset(out, 0, sizeof(*out));
	if (kind >= in->n) {
		return;
	}
	s = in->kinds[kind].src;
	rs = refl_stats(s->refl);
	out->lists = rs->lists;
	out->list_requests = rs->list_requests;
	out->relists = rs->relists;
	out->watches = rs->watches;
	out->watch_restarts = rs->watch_restarts;
	out->watch_errors = s->watch_errors;
	out->events = s->events;
	out->watch_bytes = s->watch_bytes;
	out->objects = cache_count(s->cache);
	out->bytes = cache_bytes(s->cache);
	out->synced = s->reported_sync;
	out->age_ms = inf_age_ms(in, kind);
	out->failing = s->fails;
}
