/*
 * queue.h: one controller's work queue with client-go's contract
 * (kube-api.md E.4, E.5).  Pure logic, one thread, injected time.  Prefix
 * queue_.
 *
 * Keys are strings ("ns/name").  A key is in one or more of these states:
 *   dirty       waiting to be processed (client-go's dirty set);
 *   queued      dirty and in its lane's FIFO, ready for queue_get();
 *   processing  handed out by queue_get(), until queue_done();
 *   parked      waiting in the delay heap until its ready time.
 * Guarantees: a key is queued at most once; a key is never handed out while
 * it is processing; any number of adds during processing cause exactly one
 * more delivery after queue_done().  Parked keys are separate from the FIFO:
 * when their ready time comes they are added (and so coalesce as an add).
 *
 * Lanes (issue 7, start benchmark; docs-perfqueue.md).  A dirty key is in
 * one of two lanes, each a FIFO:
 *   QUEUE_HIGH  a real change: a live watch event (queue_add() is this
 *               lane), and the timers of keys handed out from it;
 *   QUEUE_LOW   work that is only there because of a full pass: the
 *               objects of a kind's first LIST, the resync on gaining
 *               leadership, and the timers of keys handed out from it.
 * A key is in one lane at most: a high add of a key dirty in the low lane
 * moves it to the high lane (to its FIFO's tail, keeping its added time);
 * a low add of a key dirty in the high lane coalesces.  A key re-added
 * while processing is queued in its lane after queue_done().  The verdicts
 * of queue_finish() (requeue, error, requeue-after) put a key back in the
 * lane it was handed out from, when its delay ends (as controller-runtime's
 * priority queue does); a parked key added to both lanes joins the high
 * one.  queue_add_after() and queue_add_rate_limited() join the high lane.
 * queue_get() serves the high lane first, except that after high_run
 * high keys in a row while low keys waited it serves one low key, so the
 * low lane always gets at least 1 / (high_run + 1) of the deliveries.
 *
 * Rate limiting is client-go's DefaultControllerRateLimiter: the larger of a
 * per-key exponential delay (base * 2^failures, capped) and an overall token
 * bucket (qps, burst) shared by all keys.  The defaults are client-go's:
 * 5 ms doubling to a 1000 s cap, 10 qps with a burst of 100.  We keep the
 * 1000 s cap on purpose: it is what the upstream controller-manager does
 * (we are a drop-in), the cap is only reached after 18 failures in a row,
 * and a key is never stuck behind it: any watch event on the object is a
 * plain add, which is not rate limited.
 *
 * Time: every `now_ms` is the caller's monotonic clock in milliseconds
 * (timefmt_now_ms_mono()); it must not go backwards.  Due parked keys move
 * into the FIFO in queue_get(), queue_tick() and queue_next_deadline(), so
 * the event loop sets its timer to queue_next_deadline() and calls
 * queue_get() when it fires.  Nothing here sleeps or blocks.
 */
#ifndef QUEUE_H
#define QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct queue;

#define QUEUE_DEFAULT_BASE_MS  5
#define QUEUE_DEFAULT_CAP_MS   (1000 * 1000) /* 1000 s, as client-go */
#define QUEUE_DEFAULT_QPS      10.0
#define QUEUE_DEFAULT_BURST    100
#define QUEUE_DEFAULT_HIGH_RUN 10

enum queue_lane {
	QUEUE_HIGH, /* live changes */
	QUEUE_LOW,  /* initial list, resync */
};
#define QUEUE_NLANES 2

struct queue_config {
	int64_t base_ms; /* per-key first delay; < 0 counts as 0 */
	int64_t cap_ms;  /* per-key largest delay; <= 0: no cap */
	double qps; /* overall bucket refill per second; <= 0: no bucket */
	int burst;  /* bucket size; < 1 counts as 1 */
	/* high keys served in a row while low keys wait, before one low key;
	 * < 1: QUEUE_DEFAULT_HIGH_RUN */
	int high_run;
};

/* The reconcile verdict of a worker (kube-api.md E.5). */
enum queue_verdict {
	QUEUE_SUCCESS,       /* forget */
	QUEUE_REQUEUE,       /* add_rate_limited */
	QUEUE_REQUEUE_AFTER, /* forget, then add_after(after_ms) */
	QUEUE_ERROR,         /* add_rate_limited */
	QUEUE_TERMINAL,      /* forget, no requeue */
};

/* Flags of queue_key_flags(). */
#define QUEUE_F_DIRTY      0x1u
#define QUEUE_F_QUEUED     0x2u
#define QUEUE_F_PROCESSING 0x4u
#define QUEUE_F_PARKED     0x8u
#define QUEUE_F_LOW        0x10u /* dirty in the low lane */

/* client-go's workqueue duration buckets (seconds): 1e-8 x 10^k, k = 0..11;
 * a last, implicit +Inf bucket follows. */
#define QUEUE_NBUCKETS 12
extern const double queue_buckets[QUEUE_NBUCKETS];

/* A duration histogram: counts[i] durations were <= queue_buckets[i] and
 * above the bucket before (not cumulative; counts[QUEUE_NBUCKETS] is
 * +Inf). */
struct queue_hist {
	uint64_t counts[QUEUE_NBUCKETS + 1];
	uint64_t count;
	double sum_s;
};

/* Counters for /metrics (names as client-go's workqueue_* metrics). */
struct queue_stats {
	uint64_t adds_total; /* adds that made a key dirty (not coalesced) */
	uint64_t retries_total; /* add_after and add_rate_limited calls */
	size_t depth;       /* dirty keys: queued + re-added in processing */
	size_t queued;      /* = queue_len() */
	size_t queued_high; /* = queue_lane_len(QUEUE_HIGH) */
	size_t queued_low;  /* = queue_lane_len(QUEUE_LOW) */
	size_t processing;  /* = queue_processing() */
	size_t parked;      /* = queue_parked() */
	size_t keys;        /* keys with any state or failure history */
	struct queue_hist wait; /* workqueue_queue_duration_seconds: dirty
	                         * -> queue_get() */
	struct queue_hist work; /* workqueue_work_duration_seconds:
	                         * queue_get() -> done */
};

/* Fills c with the defaults above. */
void queue_config_default(struct queue_config *c);

/* A new empty queue; c is copied (NULL: the defaults).  Caller frees with
 * queue_free(). */
struct queue *queue_new(const struct queue_config *c);
/* Frees q and every key it holds; NULL is fine. */
void queue_free(struct queue *q);

/* Add(key) in the high lane: marks key dirty and queues it unless it is
 * processing.  Ignored after shutdown and when key is already dirty (a key
 * dirty in the low lane moves to the high one).  key is copied.  Returns
 * 0, or -1 if key is NULL or empty or the queue is shut down. */
int queue_add(struct queue *q, const char *key, int64_t now_ms);
/* Add(key) in lane (see "Lanes" above); queue_add() is QUEUE_HIGH.
 * Returns 0, or -1 as queue_add() or for an unknown lane. */
int queue_add_lane(struct queue *q, const char *key, enum queue_lane lane,
        int64_t now_ms);
/* AddAfter(key, delay): delay <= 0 adds now; otherwise parks key until
 * now_ms + delay_ms; if key is already parked the earlier ready time wins.
 * Returns 0, or -1 as queue_add(). */
int queue_add_after(
        struct queue *q, const char *key, int64_t delay_ms, int64_t now_ms);
/* AddRateLimited(key): counts one failure of key and adds it after the
 * larger of its exponential delay and the bucket's wait.  Returns the
 * delay in ms, or -1 as queue_add() (then nothing is counted). */
int64_t queue_add_rate_limited(
        struct queue *q, const char *key, int64_t now_ms);
/* Forget(key): clears key's failure history; does not dequeue it. */
void queue_forget(struct queue *q, const char *key);
/* NumRequeues(key): the failures counted since the last forget. */
int queue_num_requeues(const struct queue *q, const char *key);

/* Get(): moves due parked keys in, then pops the head of the lane served
 * next (see "Lanes") and marks it processing.  Returns the key (borrowed:
 * valid until queue_done() or queue_finish() for it), or NULL if none is ready
 * (after shutdown too, once the FIFO is empty).  *latency_ms (may be NULL)
 * receives how long the key waited since it became dirty. */
const char *queue_get(struct queue *q, int64_t now_ms, int64_t *latency_ms);
/* Done(key): ends processing; a key re-added meanwhile is queued again.
 * key may be the pointer queue_get() returned.  Returns 0, or -1 if key
 * is not processing. */
int queue_done(struct queue *q, const char *key, int64_t now_ms);
/* Applies a verdict to a processing key, then queue_done(): the whole
 * controller-runtime reconcileHandler in one call.  after_ms is used by
 * QUEUE_REQUEUE_AFTER only (<= 0 there means a plain add).  Returns 0,
 * or -1 if key is not processing or verdict is unknown (nothing done). */
int queue_finish(struct queue *q, const char *key, enum queue_verdict verdict,
        int64_t after_ms, int64_t now_ms);

/* Moves the parked keys whose time has come into the queue; returns how
 * many were due. */
size_t queue_tick(struct queue *q, int64_t now_ms);
/* The earliest ready time (absolute, same clock as now_ms) of a parked
 * key, after queue_tick(q, now_ms), or -1 if none is parked.  When
 * queue_len() > 0 the caller has work now regardless. */
int64_t queue_next_deadline(struct queue *q, int64_t now_ms);

/* ShutDown(): later adds are ignored, parked keys are dropped (client-go's
 * delaying loop stops), queued keys are still handed out, and queue_done()
 * still requeues keys re-added before the shutdown. */
void queue_shutdown(struct queue *q);
bool queue_is_shutdown(const struct queue *q);
/* Shut down with nothing queued or processing (ShutDownWithDrain's end). */
bool queue_drained(const struct queue *q);

size_t queue_len(const struct queue *q); /* queued keys */
/* queued keys in lane (0 for an unknown lane) */
size_t queue_lane_len(const struct queue *q, enum queue_lane lane);
size_t queue_processing(const struct queue *q); /* keys handed out */
size_t queue_parked(const struct queue *q);     /* keys in the delay heap */
void queue_stats(const struct queue *q, struct queue_stats *out);
/* The summed and the largest age at now_ms of the keys in processing
 * (workqueue_unfinished_work_seconds and
 * workqueue_longest_running_processor_seconds), in ms; 0 when none.
 * O(keys known). */
void queue_ages(const struct queue *q, int64_t now_ms, int64_t *sum_ms,
        int64_t *max_ms);

/* Per-key metadata: QUEUE_F_* flags (0: unknown key); the time key became
 * dirty (-1 if not dirty); when its processing started (-1 if not
 * processing); its parked ready time (-1 if not parked). */
unsigned queue_key_flags(const struct queue *q, const char *key);
int64_t queue_added_ms(const struct queue *q, const char *key);
int64_t queue_started_ms(const struct queue *q, const char *key);
int64_t queue_parked_until(const struct queue *q, const char *key);

/* The verdict's name for the `result` label: "success", "requeue",
 * "requeue_after", "error", "error" (terminal); "unknown" otherwise. */
const char *queue_verdict_label(enum queue_verdict v);

#endif
