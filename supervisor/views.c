/*
 * views.c: answers workers' view requests (design.md step 4).  get and
 * list come from the caches of the kinds the controllers watch (a list
 * also from a label-selected cache when the request's selector implies
 * the cache's; a get the cache misses is confirmed live, as the cache
 * may lag behind a watch that is down, so "not found" always comes from
 * the API server); what no cache holds (an object of another kind, a list
 * across other labels, a Secret's metadata, a pod's log) is read from the
 * API server asynchronously, on the loop's multi handle, and answered
 * when it arrives (a pod's log with limitBytes).  Secret values never leave
 * the supervisor: only metadata (without annotations and managedFields),
 * type and key names.  A zoneinfo view (the TZif file of a CRON_TZ= zone)
 * is answered by zoneinfo.c.  Every view is judged by the view policy
 * (vpolicy.h) before any cache read or live request; a refused one is
 * answered with an error "policy: <rule>: <detail>" and logged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "supervisor/cache.h"
#include "supervisor/sup.h"
#include "supervisor/vpolicy.h"
#include "supervisor/zoneinfo.h"

/* A pod's log is read with limitBytes: the AgentRun reconciler keeps
 * the last AGENTRUN_MEMORY_LINES (100) lines (the result and memory
 * blocks); 4 MiB holds them with room to spare and stays well inside one
 * view answer (IPC_MAX_LEN). */
#define SUP_LOG_LIMIT_BYTES (4L << 20)

/* The policy's context of one view request. */
struct vctx {
	struct sup *s;
	struct wk_worker *w;
	uint64_t ticket;
	const struct contract_ctrl *c;
	struct vpol_meter *m;
	const char *key; /* borrowed: in flight for the call */
};

struct live {
	struct wk_worker *w;
	uint64_t ticket;
	int64_t id;
	enum ipc_view_what what;
	struct kapi_res res; /* of the strings below */
	char group[IPC_NAME_MAX + 1], version[IPC_NAME_MAX + 1];
	char plural[IPC_NAME_MAX + 1];
	struct sup *s;
	enum kapi_verb verb;
	/* the policy: its meter (counted in flight until done), the key's
	 * own objects only when own (a label key) is set */
	const struct contract_ctrl *c;
	struct vpol_meter *m;
	char *key;
	const char *own;
	/* a pod's log after its pod: the pod is read first (pod_check),
	 * then the log of ns/name, container, tail */
	bool pod_check;
	char *ns, *name, *container;
	int64_t tail;
	/* a list's projection, copied: the request dies with its message */
	char fields[IPC_FIELDS_MAX][IPC_FIELD_MAX + 1];
	size_t nfields;
};

static void
reply(struct wk_worker *w, uint64_t ticket, int64_t id,
        enum ipc_view_status st, json_object *obj, json_object *items,
        const char *text, const char *msg)
{
	struct ipc_view_reply r = { .id = id,
		.status = st,
		.object = obj,
		.items = items,
		.text = text,
		.message = msg };

	wk_view_reply(w, ticket, ipc_view_reply_new(&r));
}

/* Refuses a view the policy forbids: an error answer naming the rule,
 * and a warning naming controller, key and rule.  Nothing when ticket
 * is over (the reconcile has ended: the worker is not the culprit of a
 * late answer of its own). */
static void
view_violation(struct sup *s, struct wk_worker *w, uint64_t ticket, int64_t id,
        const char *key, const struct vpol_violation *v)
{
	char msg[sizeof(v->detail) + 64];
	struct ipc_view_reply r
	        = { .id = id, .status = IPC_VS_ERROR, .message = msg };

	snprintf(msg, sizeof(msg), "policy: %s: %s", v->rule, v->detail);
	if (wk_view_reply(w, ticket, ipc_view_reply_new(&r)) != 0) {
		return;
	}
	log_warnx("controller %s: key %s: view refused: %s",
	        wk_worker_controller(w), key != NULL ? key : "(none)", msg);
	sup_violation(s, w, v->rule, v->detail, timefmt_now_ms_mono());
}

/* Whether a request's label selector can only match objects a cache
 * selected by csel holds: csel is one requirement ("key" or "key=value")
 * and the request names the same key with a value it allows. */
static bool
within(const char *csel, const char *req)
{
	size_t klen = strcspn(csel, "=");

	if (req == NULL) {
		return (false);
	}
	for (const char *p = req; (p = strstr(p, csel)) != NULL; p++) {
		bool start = p == req || p[-1] == ',';
		char next = p[klen];
		if (start
		        && (next == '='
		                || (csel[klen] == '='
		                        && (next == ',' || next == '\0')))) {
			return (true);
		}
	}
	return (false);
}

/* The informer kind whose cache can answer for res and the request's
 * selector: one without a selector, else one whose selector the
 * request's implies.  -1 when none (the caller reads live). */
static int
full_cache(struct sup *s, const struct ipc_res *res, const char *req_sel)
{
	int best = -1;

	for (size_t i = 0; i < s->nkinds; i++) {
		const struct kapi_res *r = &s->kinds[i].res;
		const char *csel = s->kinds[i].selector;
		if (strcmp(r->group, res->group) != 0
		        || strcmp(r->version, res->version) != 0
		        || strcmp(r->plural, res->plural) != 0
		        || !inf_synced(s->inf, i)) {
			continue;
		}
		if (csel == NULL) {
			return ((int)i);
		}
		if (best < 0 && within(csel, req_sel)) {
			best = (int)i;
		}
	}
	return (best);
}

/* A list being answered: its items and the request's projection. */
struct listing {
	json_object *items;
	const struct ipc_view_req *req;
};

static int
add_item(void *arg, const struct cache_item *it)
{
	struct listing *l = arg;
	json_object *obj;

	if (l->req->nfields == 0) {
		/* serialized as cached, never parsed (cache_item_raw) */
		json_object_array_add(l->items, cache_item_raw(it));
		return (0);
	}
	obj = jx_parse(it->json, it->json_len, 0, NULL, 0);
	if (obj != NULL) {
		json_object_array_add(l->items,
		        ipc_project(obj, l->req->fields, l->req->nfields));
	}
	json_object_put(obj);
	return (0);
}

/* The items of a live list, projected as the request asked. */
static json_object *
live_items(const struct live *l, json_object *list)
{
	json_object *items = json_object_object_get(list, "items");
	json_object *out;
	const char *fields[IPC_FIELDS_MAX];

	if (!json_object_is_type(items, json_type_array)) {
		return (json_object_new_array());
	}
	if (l->nfields == 0) {
		return (json_object_get(items));
	}
	for (size_t i = 0; i < l->nfields; i++) {
		fields[i] = l->fields[i];
	}
	out = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object_array_add(out,
		        ipc_project(json_object_array_get_idx(items, i),
		                fields, l->nfields));
	}
	return (out);
}

static void live_submit(struct live *l, const struct ipc_view_req *req);

static void
live_free(struct live *l)
{
	vpol_meter_done(l->m, l->ticket);
	free(l->key);
	free(l->ns);
	free(l->name);
	free(l->container);
	free(l);
}

/* A read object the policy refuses (not the key's own): true when
 * refused. */
static bool
refused(struct live *l, json_object *obj)
{
	struct vpol_violation v;
	struct ipc_view_req req
	        = { .what = l->pod_check ? IPC_VIEW_POD_LOG : l->what,
		          .name = l->name };

	if (l->own == NULL) {
		return (false);
	}
	req.res = (struct ipc_res) { l->res.group, l->res.version,
		l->res.plural, l->res.namespaced };
	if (vpol_check_object(l->c, l->key, &req, obj, &v) == 0) {
		return (false);
	}
	view_violation(l->s, l->w, l->ticket, l->id, l->key, &v);
	return (true);
}

/* The pod of a log view has been read: the log next, when the pod is the
 * key's own.  True when the log is under way (l is kept). */
static bool
pod_checked(struct live *l, json_object *pod)
{
	struct ipc_view_req req = { .id = l->id,
		.what = IPC_VIEW_POD_LOG,
		.namespace = l->ns,
		.name = l->name,
		.container = l->container,
		.tail_lines = l->tail };

	if (refused(l, pod)) {
		return (false);
	}
	l->pod_check = false;
	live_submit(l, &req);
	return (true);
}

static void
live_done(void *arg, struct kapi_resp *resp)
{
	struct live *l = arg;
	json_object *obj = NULL;

	stats_api(l->s->stats, l->verb, resp->code);
	if (resp->err.rc == KAPI_ENOTFOUND) {
		reply(l->w, l->ticket, l->id, IPC_VS_NOT_FOUND, NULL, NULL,
		        NULL, NULL);
	} else if (resp->err.rc != KAPI_OK) {
		reply(l->w, l->ticket, l->id, IPC_VS_ERROR, NULL, NULL, NULL,
		        resp->err.message != NULL ? resp->err.message
		                                  : "API error");
	} else if (l->what == IPC_VIEW_POD_LOG && !l->pod_check) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, NULL, NULL,
		        buf_str(&resp->body), NULL);
	} else if ((obj = jx_parse(
	                    resp->body.data, resp->body.len, 0, NULL, 0))
	        == NULL) {
		reply(l->w, l->ticket, l->id, IPC_VS_ERROR, NULL, NULL, NULL,
		        "undecodable answer");
	} else if (l->pod_check) {
		if (pod_checked(l, obj)) {
			json_object_put(obj);
			return;
		}
	} else if (l->what == IPC_VIEW_LIST) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, NULL,
		        live_items(l, obj), NULL, NULL);
	} else if (l->what == IPC_VIEW_SECRET_META) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, vpol_secret_meta(obj),
		        NULL, NULL, NULL);
	} else if (!refused(l, obj)) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, json_object_get(obj),
		        NULL, NULL, NULL);
	}
	json_object_put(obj);
	live_free(l);
}

static const struct kapi_res secrets = CONTRACT_RES_SECRETS;
static const struct kapi_res pods = CONTRACT_RES_PODS;

/* Sends l's request for req (borrowed: the engine copies what it keeps
 * of kr). */
static void
live_submit(struct live *l, const struct ipc_view_req *req)
{
	struct kapi_req kr = { .verb = KAPI_GET };

	kr.ns = req->namespace;
	kr.name = req->name;
	if (l->pod_check) {
		l->res = pods;
		kr.res = &pods;
	} else if (req->what == IPC_VIEW_LIST) {
		kr.verb = KAPI_LIST;
		kr.name = NULL;
		kr.list.label_selector = req->label_selector;
		for (size_t i = 0; i < req->nfields; i++) {
			snprintf(l->fields[i], sizeof(l->fields[i]), "%s",
			        req->fields[i]);
		}
		l->nfields = req->nfields;
		kr.res = &l->res;
	} else if (req->what == IPC_VIEW_POD_LOG) {
		kr.verb = KAPI_LOG;
		kr.log.container = req->container;
		kr.log.tail_lines = req->tail_lines;
		kr.log.limit_bytes = SUP_LOG_LIMIT_BYTES;
	} else if (req->what == IPC_VIEW_SECRET_META) {
		kr.res = &secrets;
	} else {
		kr.res = &l->res;
	}
	l->verb = kr.verb;
	kapi_multi_submit(l->s->m, &kr, live_done, l);
}

/* Reads what the caches cannot answer from the API server, one more
 * live read of the reconcile in flight; a pod's log after its pod
 * (pod_check) when the policy wants the key's own. */
static void
live(const struct vctx *x, const struct ipc_view_req *req, bool pod_check)
{
	struct vpol_violation v;
	struct live *l;

	if (vpol_meter_live(x->m, x->ticket, &v) != 0) {
		view_violation(x->s, x->w, x->ticket, req->id, x->key, &v);
		return;
	}
	l = xcalloc(1, sizeof(*l));
	*l = (struct live) { .w = x->w,
		.ticket = x->ticket,
		.id = req->id,
		.what = req->what,
		.s = x->s,
		.c = x->c,
		.m = x->m,
		.key = xstrdup(x->key),
		.own = vpol_own_label(x->c, req),
		.pod_check = pod_check,
		.name = req->name != NULL ? xstrdup(req->name) : NULL,
		.tail = req->tail_lines };
	/* copied: refused() reads it after the request is gone */
	snprintf(l->group, sizeof(l->group), "%s", req->res.group ?: "");
	snprintf(l->version, sizeof(l->version), "%s", req->res.version ?: "");
	snprintf(l->plural, sizeof(l->plural), "%s", req->res.plural ?: "");
	l->res = (struct kapi_res) { l->group, l->version, l->plural,
		req->res.namespaced };
	if (pod_check) {
		l->ns = xstrdup(req->namespace);
		l->container = req->container != NULL ? xstrdup(req->container)
		                                      : NULL;
	}
	live_submit(l, req);
}

/* The meter of w's slot, NULL when unknown. */
static struct vpol_meter *
meter_of(struct sup *s, const struct wk_worker *w)
{
	const char *name = wk_worker_controller(w);
	int i = wk_worker_index(w);

	for (size_t k = 0; k < s->nctls; k++) {
		if (strcmp(s->ctls[k].spec->name, name) == 0 && i >= 0
		        && i < s->ctls[k].nmeters) {
			return (&s->ctls[k].meters[i]);
		}
	}
	return (NULL);
}

/* The pod ns/name as some pod cache holds it, or NULL. */
static const char *
cached_pod(struct sup *s, const char *ns, const char *name)
{
	const char *t = NULL;

	for (size_t i = 0; i < s->nkinds && t == NULL; i++) {
		const struct kapi_res *r = &s->kinds[i].res;
		if (strcmp(r->group, pods.group) == 0
		        && strcmp(r->plural, pods.plural) == 0
		        && inf_synced(s->inf, i)) {
			t = cache_get(inf_cache(s->inf, i), ns, name);
		}
	}
	return (t);
}

/* A pod's log: of the key's own pod only when the policy says so, the
 * pod read from the cache, else live first. */
static void
pod_log(const struct vctx *x, const struct ipc_view_req *req)
{
	struct vpol_violation v;
	const char *t;
	json_object *pod;
	int rc;

	if (vpol_own_label(x->c, req) == NULL) {
		live(x, req, false);
		return;
	}
	if ((t = cached_pod(x->s, req->namespace, req->name)) == NULL) {
		live(x, req, true);
		return;
	}
	pod = jx_parse(t, strlen(t), 0, NULL, 0);
	rc = vpol_check_object(x->c, x->key, req, pod, &v);
	json_object_put(pod);
	if (rc != 0) {
		view_violation(x->s, x->w, x->ticket, req->id, x->key, &v);
	} else {
		live(x, req, false);
	}
}

/* Answers req from the caches where they can, else live. */
static void
answer(const struct vctx *x, const struct ipc_view_req *req)
{
	struct sup *s = x->s;
	int k = req->has_res ? full_cache(s, &req->res, req->label_selector)
	                     : -1;

	if (req->what == IPC_VIEW_POD_LOG) {
		pod_log(x, req);
	} else if (req->what == IPC_VIEW_LIST && k >= 0) {
		json_object *items = json_object_new_array();
		struct listing l = { items, req };
		if (cache_list(inf_cache(s->inf, (size_t)k), req->namespace,
		            req->label_selector, add_item, &l)
		        < 0) {
			json_object_put(items);
			reply(x->w, x->ticket, req->id, IPC_VS_ERROR, NULL,
			        NULL, NULL, "bad label selector");
			return;
		}
		reply(x->w, x->ticket, req->id, IPC_VS_OK, NULL, items, NULL,
		        NULL);
	} else if (req->what == IPC_VIEW_GET && k >= 0
	        && s->kinds[k].selector == NULL
	        && vpol_own_label(x->c, req) == NULL) {
		const char *t = cache_get(inf_cache(s->inf, (size_t)k),
		        req->namespace != NULL ? req->namespace : "",
		        req->name);
		struct cache_item it
		        = { .json = t, .json_len = t != NULL ? strlen(t) : 0 };
		if (t == NULL) {
			/* a miss may be a watch that is down or behind, and a
			 * reconciler acts on "not found" (a run fails for
			 * good): only the API server may say it */
			live(x, req, false);
			return;
		}
		reply(x->w, x->ticket, req->id, IPC_VS_OK, cache_item_raw(&it),
		        NULL, NULL, NULL);
	} else {
		live(x, req, false);
	}
}

void
sup_on_view(void *arg, struct wk_worker *w, uint64_t ticket,
        const struct ipc_msg *msg)
{
	struct sup *s = arg;
	struct ipc_view_req req;
	struct vpol_violation v;
	struct vctx x = { s, w, ticket, contract_find(wk_worker_controller(w)),
		meter_of(s, w), wk_worker_key(w) };
	int rc;

	if (ipc_view_req_read(msg, &req) != 0) {
		return;
	}
	if (x.m == NULL) {
		rc = -1;
		v = (struct vpol_violation) { "view-no-key",
			"unknown worker" };
	} else if ((rc = vpol_meter_view(x.m, ticket, &v)) == 0) {
		rc = vpol_check(x.c, x.key, &req, &v);
	}
	if (rc < 0) {
		view_violation(s, w, ticket, req.id, x.key, &v);
	} else if (rc == 2) {
		reply(w, ticket, req.id, IPC_VS_ERROR, NULL, NULL, NULL,
		        "invalid label selector");
	} else if (rc > 0) {
		reply(w, ticket, req.id, IPC_VS_NOT_FOUND, NULL, NULL, NULL,
		        NULL);
	} else if (req.what == IPC_VIEW_ZONEINFO) {
		wk_view_reply(
		        w, ticket, zi_reply(zi_default(), req.id, req.name));
	} else {
		answer(&x, &req);
	}
}
