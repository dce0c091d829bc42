/*
 * queue.c: one controller's work queue (queue.h), client-go's workqueue
 * contract with its default controller rate limiter.  The supervisor's
 * dispatcher owns one per controller and calls it from its single loop.
 *
 * Every key the queue knows has one struct item, found through a small
 * open-addressing hash table (linear probing, backward-shift deletion, so
 * no tombstones).  An item carries all the key's states as flags; the FIFO
 * is a ring of item pointers and the parked keys a binary min-heap of item
 * pointers ordered by (ready time, arrival).  An item lives while it has a
 * state or a failure history, and is freed as soon as it has neither, so
 * memory follows the live keys.  All operations are O(1) or O(log n).
 */
#include "supervisor/queue.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/strhash.h"
#include "common/xmalloc.h"

struct item {
	char *key;
	uint64_t hash;
	unsigned flags;    /* QUEUE_F_* */
	int failures;      /* since the last forget */
	int64_t added_ms;  /* became dirty; -1 if not dirty */
	int64_t start_ms;  /* processing started; -1 if not processing */
	int64_t ready_ms;  /* parked until; -1 if not parked */
	uint64_t seq;      /* parking order, breaks ready-time ties */
	size_t heap_index; /* position in the heap while parked */
};

struct queue {
	struct queue_config cfg;
	/* the hash table: capacity a power of two, at most half full */
	struct item **tab;
	size_t tab_cap;
	size_t tab_len;
	/* the FIFO ring */
	struct item **ring;
	size_t ring_cap;
	size_t ring_head;
	size_t ring_len;
	/* the delay heap */
	struct item **heap;
	size_t heap_cap;
	size_t heap_len;
	uint64_t heap_seq;
	/* the token bucket */
	double tokens;
	int64_t bucket_ms;
	bool bucket_used;

	size_t processing;
	size_t depth;
	bool shutdown;
	uint64_t adds_total;
	uint64_t retries_total;
	struct queue_hist wait, work;
};

const double queue_buckets[QUEUE_NBUCKETS] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4,
        1e-3, 1e-2, 1e-1, 1, 10, 100, 1000};

static void
hist_add(struct queue_hist *h, int64_t ms)
{
	double s = (double)(ms < 0 ? 0 : ms) / 1000.0;
	size_t b = 0;

	while (b < QUEUE_NBUCKETS && s > queue_buckets[b]) {
		b++;
	}
	h->counts[b]++;
	h->count++;
	h->sum_s += s;
}

#define TAB_MIN  16
#define RING_MIN 16

/* ---- hash table ---- */

/* The slot holding key, or the empty slot where it would go. */
static size_t
find_slot(const struct queue *q, const char *key, uint64_t h)
{
	size_t mask = q->tab_cap - 1;
	size_t i = (size_t)h & mask;

	while (q->tab[i] != NULL) {
		if (q->tab[i]->hash == h && strcmp(q->tab[i]->key, key) == 0) {
			break;
		}
		i = (i + 1) & mask;
	}
	return (i);
}

static struct item *
lookup(const struct queue *q, const char *key)
{
	if (key == NULL) {
		return (NULL);
	}
	return (q->tab[find_slot(q, key, strhash(key))]);
}

static void
tab_grow(struct queue *q)
{
	struct item **old = q->tab;
	size_t old_cap = q->tab_cap, i;

	q->tab_cap *= 2;
	q->tab = xcalloc(q->tab_cap, sizeof(*q->tab));
	for (i = 0; i < old_cap; i++) {
		if (old[i] != NULL) {
			q->tab[find_slot(q, old[i]->key, old[i]->hash)]
			        = old[i];
		}
	}
	free(old);
}

/* key's item, created (stateless) if missing. */
static struct item *
intern(struct queue *q, const char *key)
{
	uint64_t h = strhash(key);
	size_t i = find_slot(q, key, h);
	struct item *it;

	if (q->tab[i] != NULL) {
		return (q->tab[i]);
	}
	if ((q->tab_len + 1) * 2 > q->tab_cap) {
		tab_grow(q);
		i = find_slot(q, key, h);
	}
	it = xcalloc(1, sizeof(*it));
	it->key = xstrdup(key);
	it->hash = h;
	it->added_ms = it->start_ms = it->ready_ms = -1;
	q->tab[i] = it;
	q->tab_len++;
	return (it);
}

/* Takes it out of the table (backward-shift deletion) and frees it. */
static void
tab_remove(struct queue *q, struct item *it)
{
	size_t mask = q->tab_cap - 1;
	size_t i = find_slot(q, it->key, it->hash), j = i, k;

	q->tab[i] = NULL;
	for (;;) {
		j = (j + 1) & mask;
		if (q->tab[j] == NULL) {
			break;
		}
		k = (size_t)q->tab[j]->hash & mask;
		/* An entry whose home lies cyclically in (i, j] stays. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) {
			continue;
		}
		q->tab[i] = q->tab[j];
		q->tab[j] = NULL;
		i = j;
	}
	q->tab_len--;
	free(it->key);
	free(it);
}

/* Frees it once it has no state and no failure history. */
static void
release(struct queue *q, struct item *it)
{
	if (it->flags == 0 && it->failures == 0) {
		tab_remove(q, it);
	}
}

/* ---- FIFO ring ---- */

static void
ring_push(struct queue *q, struct item *it)
{
	struct item **n;
	size_t i;

	if (q->ring_len == q->ring_cap) {
		n = xreallocarray(NULL, q->ring_cap * 2, sizeof(*n));
		for (i = 0; i < q->ring_len; i++) {
			n[i] = q->ring[(q->ring_head + i) % q->ring_cap];
		}
		free(q->ring);
		q->ring = n;
		q->ring_cap *= 2;
		q->ring_head = 0;
	}
	q->ring[(q->ring_head + q->ring_len) % q->ring_cap] = it;
	q->ring_len++;
	it->flags |= QUEUE_F_QUEUED;
}

static struct item *
ring_pop(struct queue *q)
{
	struct item *it;

	if (q->ring_len == 0) {
		return (NULL);
	}
	it = q->ring[q->ring_head];
	q->ring_head = (q->ring_head + 1) % q->ring_cap;
	q->ring_len--;
	it->flags &= ~QUEUE_F_QUEUED;
	return (it);
}

/* ---- delay heap ---- */

static bool
before(const struct item *a, const struct item *b)
{
	if (a->ready_ms != b->ready_ms) {
		return (a->ready_ms < b->ready_ms);
	}
	return (a->seq < b->seq);
}

static void
heap_set(struct queue *q, size_t i, struct item *it)
{
	q->heap[i] = it;
	it->heap_index = i;
}

static void
sift_up(struct queue *q, size_t i)
{
	struct item *it = q->heap[i];
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!before(it, q->heap[parent])) {
			break;
		}
		heap_set(q, i, q->heap[parent]);
		i = parent;
	}
	heap_set(q, i, it);
}

static void
sift_down(struct queue *q, size_t i)
{
	struct item *it = q->heap[i];
	size_t child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= q->heap_len) {
			break;
		}
		if (child + 1 < q->heap_len
		        && before(q->heap[child + 1], q->heap[child])) {
			child++;
		}
		if (!before(q->heap[child], it)) {
			break;
		}
		heap_set(q, i, q->heap[child]);
		i = child;
	}
	heap_set(q, i, it);
}

/* Parks it until ready_ms; an earlier ready time already set wins. */
static void
park(struct queue *q, struct item *it, int64_t ready_ms)
{
	if (it->flags & QUEUE_F_PARKED) {
		if (ready_ms < it->ready_ms) {
			it->ready_ms = ready_ms;
			sift_up(q, it->heap_index);
		}
		return;
	}
	if (q->heap_len == q->heap_cap) {
		q->heap_cap = q->heap_cap ? q->heap_cap * 2 : 16;
		q->heap = xreallocarray(
		        q->heap, q->heap_cap, sizeof(*q->heap));
	}
	it->flags |= QUEUE_F_PARKED;
	it->ready_ms = ready_ms;
	it->seq = q->heap_seq++;
	heap_set(q, q->heap_len++, it);
	sift_up(q, it->heap_index);
}

/* Takes the heap's top out. */
static struct item *
heap_pop(struct queue *q)
{
	struct item *top = q->heap[0];

	q->heap_len--;
	if (q->heap_len > 0) {
		heap_set(q, 0, q->heap[q->heap_len]);
		sift_down(q, 0);
	}
	top->flags &= ~QUEUE_F_PARKED;
	top->ready_ms = -1;
	return (top);
}

/* ---- rate limiter ---- */

/* The token bucket's wait for one more token (golang.org/x/time/rate's
 * Reserve: tokens may go negative, the wait pays the debt back). */
static int64_t
bucket_take(struct queue *q, int64_t now_ms)
{
	double burst = q->cfg.burst < 1 ? 1.0 : (double)q->cfg.burst;
	int64_t elapsed;

	if (!(q->cfg.qps > 0.0)) {
		return (0);
	}
	if (!q->bucket_used) {
		q->bucket_used = true;
		q->tokens = burst;
		q->bucket_ms = now_ms;
	} else if (now_ms > q->bucket_ms) {
		elapsed = now_ms - q->bucket_ms;
		q->tokens = fmin(burst,
		        q->tokens + (double)elapsed * q->cfg.qps / 1000.0);
		q->bucket_ms = now_ms;
	}
	q->tokens -= 1.0;
	if (q->tokens >= 0.0) {
		return (0);
	}
	return ((int64_t)ceil(-q->tokens * 1000.0 / q->cfg.qps - 1e-9));
}

/* The per-key exponential delay, counting one more failure. */
static int64_t
item_when(struct queue *q, struct item *it)
{
	int64_t d = backoff_exp(q->cfg.base_ms, q->cfg.cap_ms, it->failures);

	if (it->failures < INT_MAX) {
		it->failures++;
	}
	return (d);
}

/* ---- queue operations ---- */

void
queue_config_default(struct queue_config *c)
{
	c->base_ms = QUEUE_DEFAULT_BASE_MS;
	c->cap_ms = QUEUE_DEFAULT_CAP_MS;
	c->qps = QUEUE_DEFAULT_QPS;
	c->burst = QUEUE_DEFAULT_BURST;
}

struct queue *
queue_new(const struct queue_config *c)
{
	struct queue *q = xcalloc(1, sizeof(*q));

	if (c != NULL) {
		q->cfg = *c;
	} else {
		queue_config_default(&q->cfg);
	}
	q->tab_cap = TAB_MIN;
	q->tab = xcalloc(q->tab_cap, sizeof(*q->tab));
	q->ring_cap = RING_MIN;
	q->ring = xcalloc(q->ring_cap, sizeof(*q->ring));
	return (q);
}

void
queue_free(struct queue *q)
{
	size_t i;

	if (q == NULL) {
		return;
	}
	for (i = 0; i < q->tab_cap; i++) {
		if (q->tab[i] != NULL) {
			free(q->tab[i]->key);
			free(q->tab[i]);
		}
	}
	free(q->tab);
	free(q->ring);
	free(q->heap);
	free(q);
}

/* client-go's Add on an item. */
static void
add_item(struct queue *q, struct item *it, int64_t now_ms)
{
	if (it->flags & QUEUE_F_DIRTY) {
		return;
	}
	q->adds_total++;
	q->depth++;
	it->flags |= QUEUE_F_DIRTY;
	it->added_ms = now_ms;
	if (!(it->flags & QUEUE_F_PROCESSING)) {
		ring_push(q, it);
	}
}

static bool
usable(const struct queue *q, const char *key)
{
	return (key != NULL && key[0] != '\0' && !q->shutdown);
}

int
queue_add(struct queue *q, const char *key, int64_t now_ms)
{
	if (!usable(q, key)) {
		return (-1);
	}
	add_item(q, intern(q, key), now_ms);
	return (0);
}

/* AddAfter on an item (usable() already checked). */
static void
add_after_item(
        struct queue *q, struct item *it, int64_t delay_ms, int64_t now_ms)
{
	q->retries_total++;
	if (delay_ms <= 0) {
		add_item(q, it, now_ms);
	} else {
		park(q, it,
		        delay_ms > INT64_MAX - now_ms ? INT64_MAX
		                                      : now_ms + delay_ms);
	}
}

int
queue_add_after(
        struct queue *q, const char *key, int64_t delay_ms, int64_t now_ms)
{
	if (!usable(q, key)) {
		return (-1);
	}
	add_after_item(q, intern(q, key), delay_ms, now_ms);
	return (0);
}

/* AddRateLimited on an item: MaxOf(exponential, bucket); both consume. */
static int64_t
add_rate_limited_item(struct queue *q, struct item *it, int64_t now_ms)
{
	int64_t a = item_when(q, it);
	int64_t b = bucket_take(q, now_ms);
	int64_t d = a > b ? a : b;

	add_after_item(q, it, d, now_ms);
	return (d);
}

int64_t
queue_add_rate_limited(struct queue *q, const char *key, int64_t now_ms)
{
	if (!usable(q, key)) {
		return (-1);
	}
	return (add_rate_limited_item(q, intern(q, key), now_ms));
}

void
queue_forget(struct queue *q, const char *key)
{
	struct item *it = lookup(q, key);

	if (it != NULL) {
		it->failures = 0;
		release(q, it);
	}
}

int
queue_num_requeues(const struct queue *q, const char *key)
{
	const struct item *it = lookup(q, key);

	return (it != NULL ? it->failures : 0);
}

size_t
queue_tick(struct queue *q, int64_t now_ms)
{
	size_t n = 0;

	while (q->heap_len > 0 && q->heap[0]->ready_ms <= now_ms) {
		add_item(q, heap_pop(q), now_ms);
		n++;
	}
	return (n);
}

int64_t
queue_next_deadline(struct queue *q, int64_t now_ms)
{
	queue_tick(q, now_ms);
	return (q->heap_len > 0 ? q->heap[0]->ready_ms : -1);
}

const char *
queue_get(struct queue *q, int64_t now_ms, int64_t *latency_ms)
{
	struct item *it;

	queue_tick(q, now_ms);
	if ((it = ring_pop(q)) == NULL) {
		return (NULL);
	}
	if (latency_ms != NULL) {
		*latency_ms = now_ms - it->added_ms;
	}
	hist_add(&q->wait, now_ms - it->added_ms);
	it->flags &= ~QUEUE_F_DIRTY;
	it->flags |= QUEUE_F_PROCESSING;
	it->added_ms = -1;
	it->start_ms = now_ms;
	q->depth--;
	q->processing++;
	return (it->key);
}

/* Done on a processing item; it may be freed. */
static void
done_item(struct queue *q, struct item *it, int64_t now_ms)
{
	hist_add(&q->work, now_ms - it->start_ms);
	it->flags &= ~QUEUE_F_PROCESSING;
	it->start_ms = -1;
	q->processing--;
	if (it->flags & QUEUE_F_DIRTY) {
		ring_push(q, it);
	} else {
		release(q, it);
	}
}

int
queue_done(struct queue *q, const char *key, int64_t now_ms)
{
	struct item *it = lookup(q, key);

	if (it == NULL || !(it->flags & QUEUE_F_PROCESSING)) {
		return (-1);
	}
	done_item(q, it, now_ms);
	return (0);
}

int
queue_finish(struct queue *q, const char *key, enum queue_verdict verdict,
        int64_t after_ms, int64_t now_ms)
{
	struct item *it = lookup(q, key);

	if (it == NULL || !(it->flags & QUEUE_F_PROCESSING)) {
		return (-1);
	}
	switch (verdict) {
	case QUEUE_SUCCESS:
	case QUEUE_TERMINAL:
		it->failures = 0;
		break;
	case QUEUE_REQUEUE:
	case QUEUE_ERROR:
		if (!q->shutdown) {
			add_rate_limited_item(q, it, now_ms);
		}
		break;
	case QUEUE_REQUEUE_AFTER:
		it->failures = 0;
		if (!q->shutdown) {
			add_after_item(q, it, after_ms, now_ms);
		}
		break;
	default:
		return (-1);
	}
	done_item(q, it, now_ms);
	return (0);
}

void
queue_shutdown(struct queue *q)
{
	struct item *it;

	q->shutdown = true;
	while (q->heap_len > 0) {
		it = heap_pop(q);
		release(q, it);
	}
}

bool
queue_is_shutdown(const struct queue *q)
{
	return (q->shutdown);
}

bool
queue_drained(const struct queue *q)
{
	return (q->shutdown && q->ring_len == 0 && q->processing == 0);
}

size_t
queue_len(const struct queue *q)
{
	return (q->ring_len);
}

size_t
queue_processing(const struct queue *q)
{
	return (q->processing);
}

size_t
queue_parked(const struct queue *q)
{
	return (q->heap_len);
}

void
queue_stats(const struct queue *q, struct queue_stats *out)
{
	out->adds_total = q->adds_total;
	out->retries_total = q->retries_total;
	out->depth = q->depth;
	out->queued = q->ring_len;
	out->processing = q->processing;
	out->parked = q->heap_len;
	out->keys = q->tab_len;
	out->wait = q->wait;
	out->work = q->work;
}

void
queue_ages(const struct queue *q, int64_t now_ms, int64_t *sum_ms,
        int64_t *max_ms)
{
	*sum_ms = *max_ms = 0;
	for (size_t i = 0; i < q->tab_cap; i++) {
		const struct item *it = q->tab[i];
		if (it == NULL || !(it->flags & QUEUE_F_PROCESSING)) {
			continue;
		}
		int64_t age = now_ms > it->start_ms ? now_ms - it->start_ms : 0;
		*sum_ms += age;
		if (age > *max_ms) {
			*max_ms = age;
		}
	}
}

unsigned
queue_key_flags(const struct queue *q, const char *key)
{
	const struct item *it = lookup(q, key);

	return (it != NULL ? it->flags : 0);
}

int64_t
queue_added_ms(const struct queue *q, const char *key)
{
	const struct item *it = lookup(q, key);

	return (it != NULL ? it->added_ms : -1);
}

int64_t
queue_started_ms(const struct queue *q, const char *key)
{
	const struct item *it = lookup(q, key);

	return (it != NULL ? it->start_ms : -1);
}

int64_t
queue_parked_until(const struct queue *q, const char *key)
{
	const struct item *it = lookup(q, key);

	return (it != NULL ? it->ready_ms : -1);
}

const char *
queue_verdict_label(enum queue_verdict v)
{
	switch (v) {
	case QUEUE_SUCCESS:
		return ("success");
	case QUEUE_REQUEUE:
		return ("requeue");
	case QUEUE_REQUEUE_AFTER:
		return ("requeue_after");
	case QUEUE_ERROR:
	case QUEUE_TERMINAL:
		return ("error");
	}
	return ("unknown");
}
