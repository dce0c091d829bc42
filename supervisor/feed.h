/*
 * feed.h: work queues to idle workers (design.md step 3).  Prefix feed_.
 *
 * On every turn of the loop, for each controller not paused: the queue's
 * timers advance (queue_tick()), then while the pool has an idle worker
 * of the controller and the queue a ready key, the key goes out in one
 * WORK: the primary object as cached (null when absent), its children
 * (the cached objects of every child kind whose controller owner has the
 * object's uid, serialized as cached), "childrenStale" when a child kind
 * is not fresh, the attempt (queue_num_requeues()) and the real time.  A
 * WORK the pool cannot send puts its key back (queue_done + queue_add)
 * and ends the controller's turn.  A controller starts only once every
 * kind it watches has synced (controller-runtime's WaitForCacheSync
 * before its workers start): until then its keys wait in its queue, so
 * no reconcile sees a child cache that has not listed yet.  After that a
 * relist does not stop it ("childrenStale" says the cache may lag).  Nothing
 * goes out unless the fence allows writing (only a leader dispatches), nor
 * while the writer is backlogged (backpressure: each result waiting there
 * holds its decoded writes, so this bounds the memory of a burst).
 *
 * The pool, the caches and the fence are the caller's functions
 * (struct feed_conf), so this is tested against fakes.
 */
#ifndef FEED_H
#define FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "supervisor/ctrl.h"
#include "supervisor/queue.h"

struct feed;

/* The worker pool's part (workers.h wk_idle(), wk_dispatch()). */
struct feed_pool {
	int (*idle)(void *arg, const char *controller);
	/* Sends a WORK body (taken); 0, or -1 when it cannot. */
	int (*dispatch)(void *arg, const char *controller, const char *key,
	        json_object *body, int64_t now);
};

/* The caches' part (informer.h, cache.h). */
struct feed_cache {
	/* The cached object key of kind (a new reference to it as
	 * cache_item_raw() gives it) and its uid (*uid, allocated: the
	 * caller frees it), or NULL when absent (*uid untouched). */
	json_object *(*object)(
	        void *arg, size_t kind, const char *key, char **uid);
	/* Appends to arr the cached objects of kind whose controller owner
	 * has uid. */
	void (*children)(
	        void *arg, size_t kind, const char *uid, json_object *arr);
	/* Whether kind's cache is fresh (inf_fresh()). */
	bool (*fresh)(void *arg, size_t kind);
	/* Whether kind's cache has synced once (inf_synced()); NULL: always.
	 */
	bool (*synced)(void *arg, size_t kind);
};

struct feed_conf {
	struct feed_pool pool;
	struct feed_cache cache;
	/* The fence: whether this process may dispatch and write now. */
	bool (*may_write)(void *arg, int64_t now);
	/* Whether the writer holds too many results to take more now
	 * (NULL: never). */
	bool (*backlogged)(void *arg);
	void *arg; /* given to every function above */
};

/* conf is copied.  Caller frees with feed_free(). */
struct feed *feed_new(const struct feed_conf *conf);
void feed_free(struct feed *f); /* NULL is fine */

/* Adds controller spec (borrowed) whose kinds start at first_kind, whose
 * keys wait in q (borrowed) and which is paused while *paused (borrowed;
 * sympoziumctl pause).  Returns its index. */
size_t feed_add(struct feed *f, const struct ctrl_spec *spec,
        size_t first_kind, struct queue *q, const bool *paused);

/* Hands ready keys to idle workers (see above). */
void feed_run(struct feed *f, int64_t now);

#endif
