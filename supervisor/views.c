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
 * the supervisor: only metadata, type and key names.  A zoneinfo view (the
 * TZif file of a CRON_TZ= zone) is answered by zoneinfo.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "supervisor/cache.h"
#include "supervisor/sup.h"
#include "supervisor/zoneinfo.h"

/* A pod's log is read with limitBytes: the AgentRun reconciler keeps
 * the last AGENTRUN_MEMORY_LINES (100) lines (the result and memory
 * blocks); 4 MiB holds them with room to spare and stays well inside one
 * view answer (IPC_MAX_LEN). */
#define SUP_LOG_LIMIT_BYTES (4L << 20)

struct live {
	struct wk_worker *w;
	uint64_t ticket;
	int64_t id;
	enum ipc_view_what what;
	struct kapi_res res;
	struct stats *stats;
	enum kapi_verb verb;
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

/* Only the metadata, type and key names of a Secret. */
static json_object *
secret_meta(json_object *secret)
{
	json_object *out = json_object_new_object();
	json_object *keys = json_object_new_array();
	json_object *md = NULL;

	md = jx_copy(json_object_object_get(secret, "metadata"));
	json_object_object_add(out, "metadata", md);
	const char *type = jx_get_str(secret, "type");
	if (type != NULL) {
		json_object_object_add(
		        out, "type", json_object_new_string(type));
	}
	json_object *data = json_object_object_get(secret, "data");
	if (data != NULL && json_object_is_type(data, json_type_object)) {
		json_object_object_foreach(data, k, v)
		{
			(void)v;
			json_object_array_add(keys, json_object_new_string(k));
		}
	}
	json_object_object_add(out, "keys", keys);
	return (out);
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

static void
live_done(void *arg, struct kapi_resp *resp)
{
	struct live *l = arg;
	json_object *obj = NULL;

	stats_api(l->stats, l->verb, resp->code);
	if (resp->err.rc == KAPI_ENOTFOUND) {
		reply(l->w, l->ticket, l->id, IPC_VS_NOT_FOUND, NULL, NULL,
		        NULL, NULL);
	} else if (resp->err.rc != KAPI_OK) {
		reply(l->w, l->ticket, l->id, IPC_VS_ERROR, NULL, NULL, NULL,
		        resp->err.message != NULL ? resp->err.message
		                                  : "API error");
	} else if (l->what == IPC_VIEW_POD_LOG) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, NULL, NULL,
		        buf_str(&resp->body), NULL);
	} else if ((obj = jx_parse(
	                    resp->body.data, resp->body.len, 0, NULL, 0))
	        == NULL) {
		reply(l->w, l->ticket, l->id, IPC_VS_ERROR, NULL, NULL, NULL,
		        "undecodable answer");
	} else if (l->what == IPC_VIEW_LIST) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, NULL,
		        live_items(l, obj), NULL, NULL);
	} else if (l->what == IPC_VIEW_SECRET_META) {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, secret_meta(obj),
		        NULL, NULL, NULL);
	} else {
		reply(l->w, l->ticket, l->id, IPC_VS_OK, json_object_get(obj),
		        NULL, NULL, NULL);
	}
	json_object_put(obj);
	free(l);
}

static const struct kapi_res secrets = { "", "v1", "secrets", true };

/* Reads what the caches cannot answer from the API server. */
static void
live(struct sup *s, struct wk_worker *w, uint64_t ticket,
        const struct ipc_view_req *req)
{
	struct live *l = xcalloc(1, sizeof(*l));
	struct kapi_req kr = { .verb = KAPI_GET };

	/* the engine copies what it keeps of kr: borrowing req is enough */
	*l = (struct live) {
		.w = w, .ticket = ticket, .id = req->id, .what = req->what
	};
	kr.ns = req->namespace;
	kr.name = req->name;
	if (req->what == IPC_VIEW_LIST) {
		kr.verb = KAPI_LIST;
		kr.name = NULL;
		kr.list.label_selector = req->label_selector;
		for (size_t i = 0; i < req->nfields; i++) {
			snprintf(l->fields[i], sizeof(l->fields[i]), "%s",
			        req->fields[i]);
		}
		l->nfields = req->nfields;
		l->res = (struct kapi_res) { req->res.group, req->res.version,
			req->res.plural, req->res.namespaced };
		kr.res = &l->res;
	} else if (req->what == IPC_VIEW_POD_LOG) {
		kr.verb = KAPI_LOG;
		kr.log.container = req->container;
		kr.log.tail_lines = req->tail_lines;
		kr.log.limit_bytes = SUP_LOG_LIMIT_BYTES;
	} else if (req->what == IPC_VIEW_SECRET_META) {
		kr.res = &secrets;
	} else {
		l->res = (struct kapi_res) { req->res.group, req->res.version,
			req->res.plural, req->res.namespaced };
		kr.res = &l->res;
	}
	l->stats = s->stats;
	l->verb = kr.verb;
	kapi_multi_submit(s->m, &kr, live_done, l);
}

void
sup_on_view(void *arg, struct wk_worker *w, uint64_t ticket,
        const struct ipc_msg *msg)
{
	struct sup *s = arg;
	struct ipc_view_req req;
	int k;

	if (ipc_view_req_read(msg, &req) != 0) {
		return;
	}
	if (req.what == IPC_VIEW_ZONEINFO) {
		wk_view_reply(
		        w, ticket, zi_reply(zi_default(), req.id, req.name));
		return;
	}
	k = req.has_res ? full_cache(s, &req.res, req.label_selector) : -1;
	if (req.what == IPC_VIEW_LIST && k >= 0) {
		json_object *items = json_object_new_array();
		struct listing l = { items, &req };
		if (cache_list(inf_cache(s->inf, (size_t)k), req.namespace,
		            req.label_selector, add_item, &l)
		        < 0) {
			json_object_put(items);
			reply(w, ticket, req.id, IPC_VS_ERROR, NULL, NULL,
			        NULL, "bad label selector");
			return;
		}
		reply(w, ticket, req.id, IPC_VS_OK, NULL, items, NULL, NULL);
	} else if (req.what == IPC_VIEW_GET && k >= 0
	        && s->kinds[k].selector == NULL) {
		const char *t = cache_get(inf_cache(s->inf, (size_t)k),
		        req.namespace != NULL ? req.namespace : "", req.name);
		struct cache_item it
		        = { .json = t, .json_len = t != NULL ? strlen(t) : 0 };
		if (t == NULL) {
			/* a miss may be a watch that is down or behind, and a
			 * reconciler acts on "not found" (a run fails for
			 * good): only the API server may say it */
			live(s, w, ticket, &req);
			return;
		}
		reply(w, ticket, req.id, IPC_VS_OK, cache_item_raw(&it), NULL,
		        NULL, NULL);
	} else {
		live(s, w, ticket, &req);
	}
}
