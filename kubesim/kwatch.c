/*
 * kwatch.c: one watch stream (spec B.5).  It reads the store's event ring
 * from its own position, turns each write into ADDED, MODIFIED or DELETED
 * for its selectors (an object that starts or stops matching is added or
 * deleted), emits the initial ADDED events, BOOKMARKs (periodic, one about
 * 2 s before the deadline, and the initial-events-end one), an ERROR 410
 * when its position is too old, and ends at its deadline, when its
 * resource goes away, when the server stops or when all watches are
 * closed (kstore_kick).  Each event is one JSON line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/ksrv.h"
#include "kubesim/ktable.h"

#define BATCH        256
#define PRE_DEADLINE 2000
#define MAX_WAIT_MS  1000

struct kwatch {
	struct ksrv *ks;
	struct kwatch_spec sp;
	struct kstore_coll *coll;
	uint64_t cursor; /* every event <= cursor has been handled */
	uint64_t epoch;
	int64_t next_bookmark;
	bool pre_deadline_sent;
	struct kitem **init; /* initial ADDED, still to send */
	size_t ninit, iinit;
	bool init_bookmark;
	bool table_defs_sent;
	struct buf out;
	size_t off;
	bool done;
};

static bool
matches(const struct kwatch *w, const struct kitem *it)
{
	const char *p = w->sp.ns_prefix;

	if (it == NULL) {
		return (false);
	}
	if (p != NULL && strncmp(it->key, p, strlen(p)) != 0) {
		return (false);
	}
	return (ksel_match_labels(
	                w->sp.labels, jx_get(it->obj, "metadata.labels"))
	        && ksel_match_fields(w->sp.fields, it->obj));
}

/* Appends one event line; the item's JSON as the served version. */
static void
emit(struct kwatch *w, const char *type, const struct kitem *it)
{
	const struct kres *res = w->sp.res;
	const char *av = jx_get_str(it->obj, "apiVersion");

	buf_printf(&w->out, "{\"type\":\"%s\",\"object\":", type);
	if (w->sp.table >= 0) {
		char rv[24];
		snprintf(rv, sizeof(rv), "%" PRIu64, it->rv);
		json_object *t
		        = ktable_new(res, !w->table_defs_sent, rv, NULL);
		ktable_add(t, res, it->obj, (enum ktable_include)w->sp.table);
		w->table_defs_sent = true;
		buf_puts(&w->out,
		        json_object_to_json_string_ext(t,
		                JSON_C_TO_STRING_PLAIN
		                        | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(t);
	} else if (av == NULL || strcmp(av, res->api_version) == 0) {
		buf_append(&w->out, it->json, it->len);
	} else {
		json_object *c = NULL;
		json_object_deep_copy(it->obj, &c, NULL);
		json_object_object_add(c, "apiVersion",
		        json_object_new_string(res->api_version));
		buf_puts(&w->out,
		        json_object_to_json_string_ext(c,
		                JSON_C_TO_STRING_PLAIN
		                        | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(c);
	}
	buf_puts(&w->out, "}\n");
}

static void
emit_bookmark(struct kwatch *w, bool initial_end)
{
	buf_printf(&w->out,
	        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\","
	        "\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
	        "\"%" PRIu64 "\"%s}}}\n",
	        w->sp.res->kind, w->sp.res->api_version, w->cursor,
	        initial_end
	                ? ",\"annotations\":{\"k8s.io/initial-events-end\":"
	                  "\"true\"}"
	                : "");
}

static void
emit_gone(struct kwatch *w, uint64_t oldest)
{
	buf_printf(&w->out,
	        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
	        "\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
	        "\"Failure\",\"message\":\"too old resource version: %" PRIu64
	        " (%" PRIu64 ")\",\"reason\":\"Expired\",\"code\":410}}\n",
	        w->cursor, oldest + 1);
	w->done = true;
}

struct kwatch *
kwatch_new(struct ksrv *ks, struct kwatch_spec *sp)
{
	struct kwatch *w = xcalloc(1, sizeof(*w));
	struct kitem **items = NULL;
	size_t n = 0;

	w->ks = ks;
	w->sp = *sp;
	memset(sp, 0, sizeof(*sp));
	w->coll = ksrv_coll(ks, w->sp.res);
	w->cursor = w->sp.start_rv;
	w->epoch = kstore_epoch(ks->st);
	w->next_bookmark = timefmt_now_ms_mono() + ks->opts.bookmark_ms;
	w->init_bookmark = w->sp.initial_bookmark;
	buf_init(&w->out);
	if (w->sp.initial
	        && kstore_list(ks->st, w->coll, w->sp.ns_prefix, 0, &items, &n)
	                == 0) {
		w->init = xreallocarray(NULL, n + 1, sizeof(*w->init));
		for (size_t i = 0; i < n; i++) {
			if (matches(w, items[i])) {
				w->init[w->ninit++] = items[i];
			} else {
				kitem_unref(items[i]);
			}
		}
		free(items);
	}
	if (w->sp.too_old) {
		emit_gone(w, kstore_oldest_rv(ks->st));
	}
	return (w);
}

void
kwatch_free(struct kwatch *w)
{
	if (w == NULL) {
		return;
	}
	for (size_t i = w->iinit; i < w->ninit; i++) {
		kitem_unref(w->init[i]);
	}
	free(w->init);
	free(w->sp.ns_prefix);
	ksel_free(w->sp.labels);
	ksel_fields_free(w->sp.fields);
	buf_fini(&w->out);
	free(w);
}

/* A state that stopped matching: its previous state at the event's rv. */
static struct kitem *
leaving(const struct kstore_ev *ev)
{
	json_object *c = NULL;
	char rv[24];

	json_object_deep_copy(ev->old->obj, &c, NULL);
	snprintf(rv, sizeof(rv), "%" PRIu64, ev->rv);
	jx_set_path(c, "metadata.resourceVersion", json_object_new_string(rv));
	return (kitem_new(c, ev->old->key, ev->rv));
}

/* One write as seen through the selectors. */
static void
translate(struct kwatch *w, const struct kstore_ev *ev)
{
	bool was = matches(w, ev->old);
	bool now = ev->type != KSTORE_DELETED && matches(w, ev->new);

	if (ev->type == KSTORE_DELETED) {
		if (was) {
			emit(w, "DELETED", ev->new);
		}
	} else if (was && now) {
		emit(w, "MODIFIED", ev->new);
	} else if (now) {
		emit(w, "ADDED", ev->new);
	} else if (was) {
		struct kitem *it = leaving(ev);
		emit(w, "DELETED", it);
		kitem_unref(it);
	}
}

/* Reads new events from the ring (lock held).  Returns how many. */
static int
drain(struct kwatch *w)
{
	struct kstore_ev evs[BATCH];
	int n = kstore_events(w->ks->st, w->cursor, evs, BATCH);

	if (n < 0) {
		emit_gone(w, kstore_oldest_rv(w->ks->st));
		return (0);
	}
	for (int i = 0; i < n; i++) {
		if (evs[i].coll == w->coll) {
			translate(w, &evs[i]);
		}
		w->cursor = evs[i].rv;
		kstore_ev_release(&evs[i]);
	}
	return (n);
}

static void
send_initial(struct kwatch *w)
{
	for (size_t k = 0; k < BATCH && w->iinit < w->ninit; k++) {
		struct kitem *it = w->init[w->iinit++];
		emit(w, "ADDED", it);
		kitem_unref(it);
	}
}

/* Produces more output, or waits for something to happen. */
static void
advance(struct kwatch *w)
{
	struct kstore *st = w->ks->st;
	int64_t now = timefmt_now_ms_mono(), until;

	kstore_lock(st);
	if (w->iinit < w->ninit) {
		send_initial(w);
	} else if (w->init_bookmark) {
		w->init_bookmark = false;
		emit_bookmark(w, true);
	} else if (w->ks->stopping) {
		w->done = true;
	} else if (drain(w) == 0 && !w->done && w->out.len == 0) {
		if (now >= w->sp.deadline_ms || w->sp.res->gone) {
			w->done = true;
		} else if (w->sp.bookmarks
		        && (now >= w->next_bookmark
		                || (!w->pre_deadline_sent
		                        && now >= w->sp.deadline_ms
		                                        - PRE_DEADLINE))) {
			if (now >= w->sp.deadline_ms - PRE_DEADLINE) {
				w->pre_deadline_sent = true;
			}
			w->next_bookmark = now + w->ks->opts.bookmark_ms;
			emit_bookmark(w, false);
		}
	}
	kstore_unlock(st);
	if (w->done || w->out.len > 0) {
		return;
	}
	until = w->sp.deadline_ms;
	if (w->sp.bookmarks && !w->pre_deadline_sent
	        && until - PRE_DEADLINE > now) {
		until = until - PRE_DEADLINE;
	}
	if (w->sp.bookmarks && w->next_bookmark < until) {
		until = w->next_bookmark;
	}
	if (until > now + MAX_WAIT_MS) {
		until = now + MAX_WAIT_MS;
	}
	if (kstore_wait(st, w->cursor, &w->epoch, until) == 2) {
		w->done = true;
	}
}

size_t
kwatch_read(struct kwatch *w, char *out, size_t max)
{
	while (w->off >= w->out.len) {
		buf_reset(&w->out);
		w->off = 0;
		if (w->done) {
			return (0);
		}
		advance(w);
	}
	size_t n = w->out.len - w->off;
	if (n > max) {
		n = max;
	}
	memcpy(out, w->out.data + w->off, n);
	w->off += n;
	return (n);
}
