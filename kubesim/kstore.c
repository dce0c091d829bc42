/*
 * kstore.c: kubesim's object store (kstore.h).  Owns the reference-counted
 * immutable items, the per-resource collections (arrays sorted by key in
 * strcmp byte order, binary searched), the resourceVersion counter, the
 * bounded ring of write events (event rv r lives in slot r % capacity),
 * lists at a past rv (current items with the ring's newer events undone),
 * and the mutex/condvar pair watchers wait on.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/kstore.h"

/* A growable array of item references sorted by key. */
struct iarr {
	struct kitem **v;
	size_t n;
	size_t cap;
};

struct kstore_coll {
	char *name;
	struct iarr items;
};

struct kstore {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t rv;
	uint64_t oldest_rv;
	uint64_t epoch;
	struct kstore_coll **colls;
	size_t ncolls;
	struct kstore_ev *ring; /* event r in ring[r % cap] */
	size_t cap;
};

/* ---------------------------------------------------------------------
 * Items
 */

struct kitem *
kitem_new(json_object *obj, const char *key, uint64_t rv)
{
	struct kitem *it = xcalloc(1, sizeof(*it));
	const char *s;

	s = json_object_to_json_string_ext(
	        obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s == NULL) {
		s = "null";
	}
	it->refs = 1;
	it->rv = rv;
	it->key = xstrdup(key != NULL ? key : "");
	it->obj = obj;
	it->len = strlen(s);
	it->json = xmemdup(s, it->len + 1);
	return (it);
}

struct kitem *
kitem_ref(struct kitem *it)
{
	if (it != NULL) {
		__atomic_add_fetch(&it->refs, 1, __ATOMIC_RELAXED);
	}
	return (it);
}

void
kitem_unref(struct kitem *it)
{
	if (it == NULL) {
		return;
	}
	if (__atomic_sub_fetch(&it->refs, 1, __ATOMIC_ACQ_REL) != 0) {
		return;
	}
	json_object_put(it->obj);
	free(it->json);
	free(it->key);
	free(it);
}

/* ---------------------------------------------------------------------
 * Sorted item arrays
 */

/* Index of key in a, or where it would be inserted; *found tells which. */
static size_t
find(const struct iarr *a, const char *key, bool *found)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(a->v[mid]->key, key);

		if (c == 0) {
			*found = true;
			return (mid);
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*found = false;
	return (lo);
}

static void
insert_at(struct iarr *a, size_t i, struct kitem *it)
{
	if (a->n == a->cap) {
		a->cap = a->cap != 0 ? a->cap * 2 : 16;
		a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
	}
	memmove(&a->v[i + 1], &a->v[i], (a->n - i) * sizeof(*a->v));
	a->v[i] = it;
	a->n++;
}

/* Removes slot i; returns its reference to the caller. */
static struct kitem *
remove_at(struct iarr *a, size_t i)
{
	struct kitem *it = a->v[i];

	memmove(&a->v[i], &a->v[i + 1], (a->n - i - 1) * sizeof(*a->v));
	a->n--;
	return (it);
}

/* Stores it (reference taken) at its key; returns the replaced item's
 * reference or NULL. */
static struct kitem *
set_item(struct iarr *a, struct kitem *it)
{
	bool found;
	size_t i = find(a, it->key, &found);
	struct kitem *old;

	if (!found) {
		insert_at(a, i, it);
		return (NULL);
	}
	old = a->v[i];
	a->v[i] = it;
	return (old);
}

static void
iarr_fini(struct iarr *a)
{
	for (size_t i = 0; i < a->n; i++) {
		kitem_unref(a->v[i]);
	}
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/* ---------------------------------------------------------------------
 * Store, collections, counter
 */

struct kstore *
kstore_new(size_t history, uint64_t first_rv)
{
	struct kstore *st = xcalloc(1, sizeof(*st));
	pthread_condattr_t ca;

	pthread_mutex_init(&st->mu, NULL);
	pthread_condattr_init(&ca);
	/* The clock of timefmt_now_ms_mono(), which deadlines use. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->cv, &ca);
	pthread_condattr_destroy(&ca);
	st->cap = history != 0 ? history : 1;
	st->ring = xcalloc(st->cap, sizeof(*st->ring));
	st->rv = first_rv;
	st->oldest_rv = first_rv;
	return (st);
}

static void
drop_events(struct kstore *st)
{
	for (uint64_t r = st->oldest_rv + 1; r <= st->rv; r++) {
		kstore_ev_release(&st->ring[r % st->cap]);
	}
	st->oldest_rv = st->rv;
}

void
kstore_free(struct kstore *st)
{
	if (st == NULL) {
		return;
	}
	drop_events(st);
	for (size_t i = 0; i < st->ncolls; i++) {
		iarr_fini(&st->colls[i]->items);
		free(st->colls[i]->name);
		free(st->colls[i]);
	}
	free(st->colls);
	free(st->ring);
	pthread_cond_destroy(&st->cv);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

void
kstore_lock(struct kstore *st)
{
	pthread_mutex_lock(&st->mu);
}

void
kstore_unlock(struct kstore *st)
{
	pthread_mutex_unlock(&st->mu);
}

struct kstore_coll *
kstore_coll(struct kstore *st, const char *name, bool create)
{
	struct kstore_coll *c;

	for (size_t i = 0; i < st->ncolls; i++) {
		if (strcmp(st->colls[i]->name, name) == 0) {
			return (st->colls[i]);
		}
	}
	if (!create) {
		return (NULL);
	}
	c = xcalloc(1, sizeof(*c));
	c->name = xstrdup(name);
	st->colls
	        = xreallocarray(st->colls, st->ncolls + 1, sizeof(*st->colls));
	st->colls[st->ncolls++] = c;
	return (c);
}

const char *
kstore_coll_name(const struct kstore_coll *c)
{
	return (c->name);
}

size_t
kstore_coll_count(const struct kstore_coll *c)
{
	return (c->items.n);
}

uint64_t
kstore_rv(const struct kstore *st)
{
	return (st->rv);
}

uint64_t
kstore_oldest_rv(const struct kstore *st)
{
	return (st->oldest_rv);
}

uint64_t
kstore_epoch(const struct kstore *st)
{
	return (st->epoch);
}

struct kitem *
kstore_get(struct kstore_coll *c, const char *key)
{
	bool found;
	size_t i = find(&c->items, key, &found);

	return (found ? c->items.v[i] : NULL);
}

/* ---------------------------------------------------------------------
 * Writes
 */

/* Sets obj's metadata.resourceVersion to rv (decimal string); creates or
 * replaces a missing or non-object metadata.  Non-objects are left. */
static void
set_rv(json_object *obj, uint64_t rv)
{
	json_object *md = NULL;
	char s[24];

	if (!json_object_is_type(obj, json_type_object)) {
		return;
	}
	if (!json_object_object_get_ex(obj, "metadata", &md)
	        || !json_object_is_type(md, json_type_object)) {
		md = json_object_new_object();
		json_object_object_add(obj, "metadata", md);
	}
	snprintf(s, sizeof(s), "%" PRIu64, rv);
	json_object_object_add(
	        md, "resourceVersion", json_object_new_string(s));
}

/* Advances the counter and appends an event (references taken). */
static void
append_event(struct kstore *st, enum kstore_evtype type, struct kstore_coll *c,
        struct kitem *old, struct kitem *new)
{
	uint64_t r = st->rv + 1;
	struct kstore_ev *ev = &st->ring[r % st->cap];

	if (st->rv - st->oldest_rv >= st->cap) {
		kstore_ev_release(&st->ring[(st->oldest_rv + 1) % st->cap]);
		st->oldest_rv++;
	}
	ev->rv = r;
	ev->type = type;
	ev->coll = c;
	ev->old = old;
	ev->new = new;
	st->rv = r;
	pthread_cond_broadcast(&st->cv);
}

struct kitem *
kstore_put(struct kstore *st, struct kstore_coll *c, const char *key,
        json_object *obj)
{
	uint64_t r = st->rv + 1;
	struct kitem *it, *old;

	set_rv(obj, r);
	it = kitem_new(obj, key, r);
	old = set_item(&c->items, it);
	append_event(st, old != NULL ? KSTORE_MODIFIED : KSTORE_ADDED, c, old,
	        kitem_ref(it));
	return (it);
}

uint64_t
kstore_delete(struct kstore *st, struct kstore_coll *c, const char *key)
{
	uint64_t r = st->rv + 1;
	struct kitem *old, *tomb;
	json_object *copy = NULL;
	bool found;
	size_t i = find(&c->items, key, &found);

	if (!found) {
		return (0);
	}
	old = remove_at(&c->items, i);
	if (old->obj != NULL
	        && json_object_deep_copy(old->obj, &copy, NULL) != 0) {
		copy = NULL;
	}
	set_rv(copy, r);
	tomb = kitem_new(copy, old->key, r);
	append_event(st, KSTORE_DELETED, c, old, tomb);
	return (r);
}

void
kstore_compact(struct kstore *st)
{
	drop_events(st);
}

/* ---------------------------------------------------------------------
 * Reads
 */

/* Undoes event ev on a (a list's working copy). */
static void
undo(struct iarr *a, const struct kstore_ev *ev)
{
	bool found;
	size_t i;

	if (ev->type == KSTORE_ADDED) {
		i = find(a, ev->new->key, &found);
		if (found) {
			kitem_unref(remove_at(a, i));
		}
		return;
	}
	kitem_unref(set_item(a, kitem_ref(ev->old)));
}

/* Keeps the items whose key starts with prefix, in order. */
static void
filter_prefix(struct iarr *a, const char *prefix)
{
	size_t plen = strlen(prefix), j = 0;

	for (size_t i = 0; i < a->n; i++) {
		if (strncmp(a->v[i]->key, prefix, plen) == 0) {
			a->v[j++] = a->v[i];
		} else {
			kitem_unref(a->v[i]);
		}
	}
	a->n = j;
}

/* Referenced copy of the current items of c starting with prefix. */
static void
copy_current(const struct kstore_coll *c, const char *prefix, struct iarr *a)
{
	size_t plen = strlen(prefix), i = 0;
	bool found;

	if (plen != 0) {
		i = find(&c->items, prefix, &found);
	}
	a->cap = c->items.n - i + 1;
	a->v = xreallocarray(NULL, a->cap, sizeof(*a->v));
	a->n = 0;
	for (; i < c->items.n; i++) {
		if (strncmp(c->items.v[i]->key, prefix, plen) != 0) {
			break;
		}
		a->v[a->n++] = kitem_ref(c->items.v[i]);
	}
}

int
kstore_list(struct kstore *st, struct kstore_coll *c, const char *prefix,
        uint64_t rv, struct kitem ***items, size_t *n)
{
	struct iarr a = { NULL, 0, 0 };

	if (prefix == NULL) {
		prefix = "";
	}
	if (rv == 0) {
		rv = st->rv;
	}
	if (rv < st->oldest_rv || rv > st->rv) {
		return (-1);
	}
	if (rv == st->rv) {
		copy_current(c, prefix, &a);
	} else {
		copy_current(c, "", &a);
		for (uint64_t r = st->rv; r > rv; r--) {
			const struct kstore_ev *ev = &st->ring[r % st->cap];

			if (ev->coll == c) {
				undo(&a, ev);
			}
		}
		filter_prefix(&a, prefix);
	}
	*items = a.v;
	*n = a.n;
	return (0);
}

int
kstore_events(const struct kstore *st, uint64_t after, struct kstore_ev *out,
        size_t max)
{
	size_t k = 0;

	if (after < st->oldest_rv) {
		return (-1);
	}
	if (max > INT32_MAX) {
		max = INT32_MAX;
	}
	for (uint64_t r = after + 1; r <= st->rv && k < max; r++) {
		const struct kstore_ev *ev = &st->ring[r % st->cap];

		out[k] = *ev;
		kitem_ref(out[k].old);
		kitem_ref(out[k].new);
		k++;
	}
	return ((int)k);
}

void
kstore_ev_release(struct kstore_ev *ev)
{
	kitem_unref(ev->old);
	kitem_unref(ev->new);
	ev->old = NULL;
	ev->new = NULL;
}

/* ---------------------------------------------------------------------
 * Waiting
 */

/* One check of kstore_wait's conditions; -1 to keep waiting.  A kick wins
 * over ready events so a busy stream still closes promptly. */
static int
wait_check(struct kstore *st, uint64_t after, uint64_t *epoch,
        int64_t deadline_ms)
{
	if (st->epoch != *epoch) {
		*epoch = st->epoch;
		return (2);
	}
	if (st->rv > after) {
		return (1);
	}
	if (deadline_ms != 0 && timefmt_now_ms_mono() >= deadline_ms) {
		return (0);
	}
	return (-1);
}

int
kstore_wait(struct kstore *st, uint64_t after, uint64_t *epoch,
        int64_t deadline_ms)
{
	struct timespec ts = { 0, 0 };
	int rc;

	if (deadline_ms > 0) {
		ts.tv_sec = (time_t)(deadline_ms / 1000);
		ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
	}
	pthread_mutex_lock(&st->mu);
	while ((rc = wait_check(st, after, epoch, deadline_ms)) < 0) {
		if (deadline_ms == 0) {
			pthread_cond_wait(&st->cv, &st->mu);
		} else {
			pthread_cond_timedwait(&st->cv, &st->mu, &ts);
		}
	}
	pthread_mutex_unlock(&st->mu);
	return (rc);
}

void
kstore_kick(struct kstore *st)
{
	pthread_mutex_lock(&st->mu);
	st->epoch++;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
}
