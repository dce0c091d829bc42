/*
 * queue.c: one controller's work queue (queue.h), client-go's workqueue
 * contract with its default controller rate limiter.  The supervisor's
 * dispatcher owns one per controller and calls it from its single loop.
 *
 * Every key the queue knows has one struct item, found through a string
 * hash table (common/strtab.h).  An item carries all the key's states as
 * flags; each of the two lanes (queue.h) is a FIFO of items, an intrusive
 * doubly-linked list, so a queued key moves from the low lane to the high
 * one in O(1); the parked keys are a binary min-heap of item pointers ordered
 * by (ready time, arrival).  An item lives while it has a state or a failure
 * history, and is freed as soon as it has neither, so memory follows the
 * live keys.  All operations are O(1) or O(log n).
 */
#include "supervisor/queue.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/strhash.h"
#include "common/strtab.h"
#include "common/xmalloc.h"

struct item {
	char *key;
	uint64_t hash;  /* strhash(key), for the table */
	unsigned flags; /* QUEUE_F_*; QUEUE_F_LOW: dirty in the low lane */
	enum queue_lane proc_lane; /* lane it was handed out from */
	enum queue_lane park_lane; /* lane it joins when its time comes */
	struct item *prev, *next;  /* its lane's FIFO while queued */
	int failures;              /* since the last forget */
	int64_t added_ms;          /* became dirty; -1 if not dirty */
	int64_t start_ms;  /* processing started; -1 if not processing */
	int64_t ready_ms;  /* parked until; -1 if not parked */
	uint64_t seq;      /* parking order, breaks ready-time ties */
	size_t heap_index; /* position in the heap while parked */
};

struct fifo {
	struct item *head, *tail;
	size_t len;
};

struct queue {
	struct queue_config cfg;
	struct strtab items; /* key -> struct item */
	/* the two FIFOs, indexed by enum queue_lane */
	struct fifo lanes[QUEUE_NLANES];
	int high_run; /* high keys handed out in a row while low ones wait */
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

const double queue_buckets[QUEUE_NBUCKETS]
        = { 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000 };

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

/* ---- items ---- */

static const char *
item_key(const void *p)
{
	return (((const struct item *)p)->key);
}

static uint64_t
item_hash(const void *p)
{
	return (((const struct item *)p)->hash);
}

static struct item *
lookup(const struct queue *q, const char *key)
{
	if (key == NULL) {
		return (NULL);
	}
	return (strtab_get(&q->items, key));
}

/* key's item, created (stateless) if missing. */
static struct item *
intern(struct queue *q, const char *key)
{
	struct item *it = strtab_get(&q->items, key);

	if (it != NULL) {
		return (it);
	}
	it = xcalloc(1, sizeof(*it));
	it->key = xstrdup(key);
	it->hash = strhash(key);
	it->added_ms = it->start_ms = it->ready_ms = -1;
	strtab_put(&q->items, it);
	return (it);
}

/* Takes it out of the table and frees it. */
static void
item_remove(struct queue *q, struct item *it)
{
	strtab_remove(&q->items, it);
	free(it->key);
	free(it);
}

/* Frees it once it has no state and no failure history. */
static void
release(struct queue *q, struct item *it)
{
	if (it->flags == 0 && it->failures == 0) {
		item_remove(q, it);
	}
}

/* ---- lanes ---- */

static enum queue_lane
lane_of(const struct item *it)
{
	return ((it->flags & QUEUE_F_LOW) ? QUEUE_LOW : QUEUE_HIGH);
}

/* Appends it to the FIFO of its lane (QUEUE_F_LOW says which). */
static void
fifo_push(struct queue *q, struct item *it)
{
	struct fifo *f = &q->lanes[lane_of(it)];

	it->next = NULL;
	it->prev = f->tail;
	if (f->tail != NULL) {
		f->tail->next = it;
	} else {
		f->head = it;
	}
	f->tail = it;
	f->len++;
	it->flags |= QUEUE_F_QUEUED;
}

/* Takes a queued it out of its lane's FIFO. */
static void
fifo_unlink(struct queue *q, struct item *it)
{
	struct fifo *f = &q->lanes[lane_of(it)];

	if (it->prev != NULL) {
		it->prev->next = it->next;
	} else {
		f->head = it->next;
	}
	if (it->next != NULL) {
		it->next->prev = it->prev;
	} else {
		f->tail = it->prev;
	}
	it->prev = it->next = NULL;
	f->len--;
	it->flags &= ~QUEUE_F_QUEUED;
}

/* The lane queue_get() serves next: the high one, except that after
 * high_run high keys in a row while low keys waited, one low key. */
static struct fifo *
next_lane(struct queue *q)
{
	struct fifo *hi = &q->lanes[QUEUE_HIGH], *lo = &q->lanes[QUEUE_LOW];
	int run = q->cfg.high_run < 1 ? QUEUE_DEFAULT_HIGH_RUN
	                              : q->cfg.high_run;

	if (lo->len == 0) {
		q->high_run = 0;
		return (hi->len > 0 ? hi : NULL);
	}
	if (hi->len == 0 || q->high_run >= run) {
		q->high_run = 0;
		return (lo);
	}
	q->high_run++;
	return (hi);
}

static struct item *
fifo_pop(struct queue *q)
{
	struct fifo *f = next_lane(q);
	struct item *it;

	if (f == NULL) {
		return (NULL);
	}
	it = f->head;
	fifo_unlink(q, it);
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

/* Parks it until ready_ms, to join lane then; an earlier ready time
 * already set wins, and so does the high lane. */
static void
park(struct queue *q, struct item *it, int64_t ready_ms, enum queue_lane lane)
{
	if (it->flags & QUEUE_F_PARKED) {
		if (lane == QUEUE_HIGH) {
			it->park_lane = QUEUE_HIGH;
		}
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
	it->park_lane = lane;
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
	c->high_run = QUEUE_DEFAULT_HIGH_RUN;
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
	strtab_init(&q->items, item_key, item_hash, 50);
	return (q);
}

void
queue_free(struct queue *q)
{
	struct item *it;
	size_t pos = 0;

	if (q == NULL) {
		return;
	}
	while ((it = strtab_next(&q->items, &pos)) != NULL) {
		free(it->key);
		free(it);
	}
	strtab_fini(&q->items);
	free(q->heap);
	free(q);
}

/* A dirty key added in the high lane leaves the low one (moving to the
 * high FIFO's tail if it is queued). */
static void
raise_lane(struct queue *q, struct item *it)
{
	bool queued = (it->flags & QUEUE_F_QUEUED) != 0;

	if (queued) {
		fifo_unlink(q, it);
	}
	it->flags &= ~QUEUE_F_LOW;
	if (queued) {
		fifo_push(q, it);
	}
}

/* client-go's Add on an item, in lane. */
static void
add_item(
        struct queue *q, struct item *it, enum queue_lane lane, int64_t now_ms)
{
	if (it->flags & QUEUE_F_DIRTY) {
		if (lane == QUEUE_HIGH && (it->flags & QUEUE_F_LOW)) {
			raise_lane(q, it);
		}
		return;
	}
	q->adds_total++;
	q->depth++;
	it->flags |= QUEUE_F_DIRTY | (lane == QUEUE_LOW ? QUEUE_F_LOW : 0);
	it->added_ms = now_ms;
	if (!(it->flags & QUEUE_F_PROCESSING)) {
		fifo_push(q, it);
	}
}

static bool
usable(const struct queue *q, const char *key)
{
	return (key != NULL && key[0] != '\0' && !q->shutdown);
}

int
queue_add_lane(
        struct queue *q, const char *key, enum queue_lane lane, int64_t now_ms)
{
	if (!usable(q, key) || (lane != QUEUE_HIGH && lane != QUEUE_LOW)) {
		return (-1);
	}
	add_item(q, intern(q, key), lane, now_ms);
	return (0);
}

int
queue_add(struct queue *q, const char *key, int64_t now_ms)
{
	return (queue_add_lane(q, key, QUEUE_HIGH, now_ms));
}

/* AddAfter on an item, joining lane (usable() already checked). */
static void
add_after_item(struct queue *q, struct item *it, int64_t delay_ms,
        enum queue_lane lane, int64_t now_ms)
{
	q->retries_total++;
	if (delay_ms <= 0) {
		add_item(q, it, lane, now_ms);
	} else {
		park(q, it,
		        delay_ms > INT64_MAX - now_ms ? INT64_MAX
		                                      : now_ms + delay_ms,
		        lane);
	}
}

int
queue_add_after(
        struct queue *q, const char *key, int64_t delay_ms, int64_t now_ms)
{
	if (!usable(q, key)) {
		return (-1);
	}
	add_after_item(q, intern(q, key), delay_ms, QUEUE_HIGH, now_ms);
	return (0);
}

/* AddRateLimited on an item: MaxOf(exponential, bucket); both consume. */
static int64_t
add_rate_limited_item(
        struct queue *q, struct item *it, enum queue_lane lane, int64_t now_ms)
{
	int64_t a = item_when(q, it);
	int64_t b = bucket_take(q, now_ms);
	int64_t d = a > b ? a : b;

	add_after_item(q, it, d, lane, now_ms);
	return (d);
}

int64_t
queue_add_rate_limited(struct queue *q, const char *key, int64_t now_ms)
{
	if (!usable(q, key)) {
		return (-1);
	}
	return (add_rate_limited_item(q, intern(q, key), QUEUE_HIGH, now_ms));
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
	struct item *it;
	size_t n = 0;

	while (q->heap_len > 0 && q->heap[0]->ready_ms <= now_ms) {
		it = heap_pop(q);
		add_item(q, it, it->park_lane, now_ms);
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
	if ((it = fifo_pop(q)) == NULL) {
		return (NULL);
	}
	if (latency_ms != NULL) {
		*latency_ms = now_ms - it->added_ms;
	}
	hist_add(&q->wait, now_ms - it->added_ms);
	it->proc_lane = lane_of(it);
	it->flags &= ~(QUEUE_F_DIRTY | QUEUE_F_LOW);
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
		fifo_push(q, it);
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
			add_rate_limited_item(q, it, it->proc_lane, now_ms);
		}
		break;
	case QUEUE_REQUEUE_AFTER:
		it->failures = 0;
		if (!q->shutdown) {
			add_after_item(q, it, after_ms, it->proc_lane, now_ms);
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
	return (q->shutdown && queue_len(q) == 0 && q->processing == 0);
}

size_t
queue_len(const struct queue *q)
{
	return (q->lanes[QUEUE_HIGH].len + q->lanes[QUEUE_LOW].len);
}

size_t
queue_lane_len(const struct queue *q, enum queue_lane lane)
{
	if (lane != QUEUE_HIGH && lane != QUEUE_LOW) {
		return (0);
	}
	return (q->lanes[lane].len);
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
	out->queued = queue_len(q);
	out->queued_high = q->lanes[QUEUE_HIGH].len;
	out->queued_low = q->lanes[QUEUE_LOW].len;
	out->processing = q->processing;
	out->parked = q->heap_len;
	out->keys = strtab_len(&q->items);
	out->wait = q->wait;
	out->work = q->work;
}

void
queue_ages(const struct queue *q, int64_t now_ms, int64_t *sum_ms,
        int64_t *max_ms)
{
	const struct item *it;
	size_t pos = 0;

	*sum_ms = *max_ms = 0;
	while ((it = strtab_next(&q->items, &pos)) != NULL) {
		if (!(it->flags & QUEUE_F_PROCESSING)) {
			continue;
		}
		int64_t age
		        = now_ms > it->start_ms ? now_ms - it->start_ms : 0;
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
