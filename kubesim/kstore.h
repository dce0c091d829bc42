/*
 * kstore.h: kubesim's object store.  One resourceVersion counter for the
 * whole server, one sorted collection of immutable items per resource, and
 * a bounded ring of write events that defines what "too old" means for
 * watches, Exact lists and continue tokens (spec B.1, H).  Prefix kstore_
 * (and kitem_ for the items).
 *
 * Concurrency: one mutex.  Every kstore_ function except new, free, lock,
 * unlock, wait and the kitem_ reference functions requires the caller to
 * hold it (kstore_lock).  Items are immutable once stored and reference
 * counted (atomically), so a watcher may keep items and write item->json
 * after unlocking.  item->obj must only be read, and only under the lock
 * (json-c objects are not thread-safe even for some reads).
 *
 * Every write advances the counter by exactly one and appends exactly one
 * event; so event rv == previous rv + 1 and the ring holds the events
 * (oldest_rv, current_rv].
 */
#ifndef KSTORE_H
#define KSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* An immutable stored object state. */
struct kitem {
	unsigned refs;    /* atomic; use kitem_ref/kitem_unref */
	uint64_t rv;      /* the resourceVersion of this state */
	char *key;        /* "ns/name" (namespaced) or "name" */
	json_object *obj; /* owned; read under the store lock only */
	char *json;       /* compact serialization of obj, NUL-ended */
	size_t len;       /* strlen(json) */
};

/* Builds an item from obj (taken: the item owns it), key (copied) and rv;
 * serializes obj once.  refs starts at 1. */
struct kitem *kitem_new(json_object *obj, const char *key, uint64_t rv);
struct kitem *kitem_ref(struct kitem *it);
void kitem_unref(struct kitem *it); /* NULL is fine */

enum kstore_evtype { KSTORE_ADDED = 1, KSTORE_MODIFIED, KSTORE_DELETED };

/* One write.  For ADDED old is NULL; for DELETED new is the last stored
 * state with metadata.resourceVersion set to the deletion's rv (what a
 * DELETED watch event carries) and old is that last stored state. */
struct kstore_ev {
	uint64_t rv;
	enum kstore_evtype type;
	struct kstore_coll *coll;
	struct kitem *old;
	struct kitem *new;
};

struct kstore;
struct kstore_coll; /* one resource's objects, e.g. "apps/deployments" */

/* history: how many events the ring keeps (at least 1).  first_rv: the
 * counter's initial value (the first write gets first_rv + 1). */
struct kstore *kstore_new(size_t history, uint64_t first_rv);
void kstore_free(struct kstore *st);

void kstore_lock(struct kstore *st);
void kstore_unlock(struct kstore *st);

/* The collection named name ("group/plural", "" group for core: "/pods"),
 * created empty when create is true (NULL when missing and !create).  A
 * collection lives as long as the store. */
struct kstore_coll *kstore_coll(
        struct kstore *st, const char *name, bool create);
const char *kstore_coll_name(const struct kstore_coll *c);
size_t kstore_coll_count(const struct kstore_coll *c);

uint64_t kstore_rv(const struct kstore *st);
/* Events with rv > kstore_oldest_rv() are in the ring. */
uint64_t kstore_oldest_rv(const struct kstore *st);

/* The current item at key, or NULL.  Borrowed: valid while the lock is
 * held (kitem_ref it to keep it). */
struct kitem *kstore_get(struct kstore_coll *c, const char *key);

/*
 * Stores obj (taken) at key: advances the counter, sets obj's
 * metadata.resourceVersion to the new rv (as a decimal string), replaces
 * any current item, appends an ADDED (no current item) or MODIFIED event,
 * wakes waiters.  Returns the new item (borrowed, like kstore_get).
 */
struct kitem *kstore_put(struct kstore *st, struct kstore_coll *c,
        const char *key, json_object *obj);

/* Removes the item at key: advances the counter, appends a DELETED event,
 * wakes waiters.  Returns the deletion's rv, or 0 when key is absent. */
uint64_t kstore_delete(
        struct kstore *st, struct kstore_coll *c, const char *key);

/*
 * The items of c in key byte order whose key starts with prefix (NULL or
 * "" for all; "ns/" for one namespace), as of rv (0 = now).  Stores a new
 * array of referenced items in *items (caller unrefs each and frees the
 * array with free()) and its length in *n.  Returns 0, or -1 when rv is
 * older than kstore_oldest_rv() or newer than kstore_rv() (nothing
 * stored).  An rv in the past is answered by undoing the ring's events
 * newer than rv.
 */
int kstore_list(struct kstore *st, struct kstore_coll *c, const char *prefix,
        uint64_t rv, struct kitem ***items, size_t *n);

/*
 * Copies up to max events with rv > after into out (old and new
 * referenced: release with kstore_ev_release), oldest first.  Returns the
 * number copied (0 when none yet), or -1 when after < kstore_oldest_rv()
 * (events were dropped: the caller's position is too old).
 */
int kstore_events(const struct kstore *st, uint64_t after,
        struct kstore_ev *out, size_t max);
void kstore_ev_release(struct kstore_ev *ev);

/* Drops every event from the ring (oldest_rv becomes the current rv), so
 * any watch, Exact list or continue token older than now gets 410. */
void kstore_compact(struct kstore *st);

/*
 * Waits, without the lock held, until an event with rv > after exists,
 * kstore_kick() was called after *epoch was read, or deadline_ms
 * (timefmt_now_ms_mono() clock; 0 = no deadline) passes.  epoch: the
 * caller's copy of the kick counter, updated on return.  Returns 1 when
 * events are ready, 0 on deadline, 2 when kicked.
 */
int kstore_wait(struct kstore *st, uint64_t after, uint64_t *epoch,
        int64_t deadline_ms);

/* The kick counter (read under the lock; start value for kstore_wait). */
uint64_t kstore_epoch(const struct kstore *st);
/* Increments the kick counter and wakes every waiter: used to close every
 * open watch at once and to stop the server.  Takes the lock itself. */
void kstore_kick(struct kstore *st);

#endif
