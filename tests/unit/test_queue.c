/* test_queue.c: the work queue (spec items 62-64), shutdown, deadlines, a
 * randomized model test and 10,000 keys.  All time is injected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/backoff.h"
#include "supervisor/queue.h"

#define MANY_LOW 10000

/* A queue without the overall bucket, so only per-key delays count. */
static struct queue *
queue_nobucket(int64_t base, int64_t cap)
{
	struct queue_config c;

	queue_config_default(&c);
	c.base_ms = base;
	c.cap_ms = cap;
	c.qps = 0;
	return (queue_new(&c));
}

/* 62: 3 x Add before Get gives one delivery. */
static void
test_add_coalesces(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats st;
	const char *k;

	(void)state;
	assert_int_equal(queue_add(q, "ns/x", 0), 0);
	assert_int_equal(queue_add(q, "ns/x", 1), 0);
	assert_int_equal(queue_add(q, "ns/x", 2), 0);
	assert_int_equal(queue_len(q), 1);
	k = queue_get(q, 3, NULL);
	assert_non_null(k);
	assert_string_equal(k, "ns/x");
	assert_null(queue_get(q, 3, NULL));
	assert_int_equal(queue_done(q, k, 4), 0);
	assert_null(queue_get(q, 5, NULL));
	queue_stats(q, &st);
	assert_int_equal(st.adds_total, 1);
	assert_int_equal(st.keys, 0);
	queue_free(q);
}

/* 62: Adds while processing give exactly one more delivery, after Done. */
static void
test_add_while_processing(void **state)
{
	struct queue *q = queue_new(NULL);
	const char *k;

	(void)state;
	queue_add(q, "ns/x", 0);
	k = queue_get(q, 0, NULL);
	assert_string_equal(k, "ns/x");
	queue_add(q, "ns/x", 1);
	queue_add(q, "ns/x", 2);
	assert_int_equal(queue_len(q), 0);
	assert_null(queue_get(q, 3, NULL));
	assert_int_equal(queue_key_flags(q, "ns/x"),
	        QUEUE_F_DIRTY | QUEUE_F_PROCESSING);
	assert_int_equal(queue_done(q, "ns/x", 4), 0);
	assert_int_equal(queue_len(q), 1);
	k = queue_get(q, 5, NULL);
	assert_string_equal(k, "ns/x");
	assert_int_equal(queue_done(q, k, 6), 0);
	assert_null(queue_get(q, 7, NULL));
	assert_int_equal(queue_done(q, "ns/x", 8), -1);
	queue_free(q);
}

#define NWORKERS 4
#define NKEYS    6

/* 62: with N workers taking and finishing keys in a random order while
 * keys are re-added, no key is ever held by two workers. */
static void
test_never_held_twice(void **state)
{
	struct queue *q = queue_new(NULL);
	char held[NWORKERS][16];
	uint64_t rng = 42;
	int64_t now = 0;
	int step, w, v, deliveries = 0;
	const char *k;
	char key[16];

	(void)state;
	memset(held, 0, sizeof(held));
	for (step = 0; step < 20000; step++, now++) {
		snprintf(key, sizeof(key), "ns/k%d",
		        (int)(backoff_rand01(&rng) * NKEYS));
		queue_add(q, key, now);
		w = (int)(backoff_rand01(&rng) * NWORKERS);
		if (held[w][0] != '\0') {
			assert_int_equal(queue_done(q, held[w], now), 0);
			held[w][0] = '\0';
			continue;
		}
		if ((k = queue_get(q, now, NULL)) == NULL) {
			continue;
		}
		for (v = 0; v < NWORKERS; v++) {
			assert_string_not_equal(held[v], k);
		}
		snprintf(held[w], sizeof(held[w]), "%s", k);
		deliveries++;
	}
	assert_true(deliveries > 1000);
	queue_free(q);
}

/* 62: AddAfter(x, 100) then AddAfter(x, 10) gives one delivery at 10. */
static void
test_add_after_earlier_wins(void **state)
{
	struct queue *q = queue_new(NULL);
	const char *k;

	(void)state;
	assert_int_equal(queue_add_after(q, "ns/x", 100, 1000), 0);
	assert_int_equal(queue_add_after(q, "ns/x", 10, 1000), 0);
	assert_int_equal(queue_parked(q), 1);
	assert_int_equal(queue_len(q), 0);
	assert_int_equal(queue_parked_until(q, "ns/x"), 1010);
	assert_int_equal(queue_next_deadline(q, 1000), 1010);
	assert_null(queue_get(q, 1009, NULL));
	k = queue_get(q, 1010, NULL);
	assert_string_equal(k, "ns/x");
	assert_int_equal(queue_done(q, k, 1011), 0);
	assert_int_equal(queue_parked(q), 0);
	assert_int_equal(queue_next_deadline(q, 1011), -1);
	assert_null(queue_get(q, 1200, NULL));

	/* A later time does not postpone an earlier one. */
	queue_add_after(q, "ns/y", 10, 2000);
	queue_add_after(q, "ns/y", 100, 2000);
	assert_int_equal(queue_next_deadline(q, 2000), 2010);
	/* A delay <= 0 is a plain add, the parked entry stays separate. */
	queue_add_after(q, "ns/y", 0, 2001);
	assert_int_equal(queue_len(q), 1);
	assert_int_equal(queue_parked(q), 1);
	k = queue_get(q, 2002, NULL);
	assert_string_equal(k, "ns/y");
	queue_done(q, k, 2003);
	assert_string_equal(queue_get(q, 2010, NULL), "ns/y");
	queue_free(q);
}

/* A parked key that is already queued coalesces when it comes due. */
static void
test_parked_coalesces(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats st;

	(void)state;
	queue_add_after(q, "ns/x", 10, 0);
	queue_add(q, "ns/x", 5);
	assert_int_equal(queue_tick(q, 10), 1);
	assert_int_equal(queue_len(q), 1);
	assert_int_equal(queue_added_ms(q, "ns/x"), 5);
	queue_stats(q, &st);
	assert_int_equal(st.adds_total, 1);
	assert_int_equal(st.retries_total, 1);
	queue_free(q);
}

/* 63: per-key delays 5, 10, 20, 40 ms ... capped at 1000 s (reached at
 * the 19th failure); Forget resets; NumRequeues counts. */
static void
test_exponential(void **state)
{
	struct queue *q
	        = queue_nobucket(QUEUE_DEFAULT_BASE_MS, QUEUE_DEFAULT_CAP_MS);
	int64_t want = 5;
	int i;

	(void)state;
	for (i = 0; i < 18; i++) {
		assert_int_equal(queue_num_requeues(q, "ns/x"), i);
		assert_int_equal(queue_add_rate_limited(q, "ns/x", 0), want);
		want *= 2;
	}
	assert_int_equal(want, 5 * (1 << 18)); /* 1310.72 s > cap */
	for (i = 0; i < 5; i++) {
		assert_int_equal(
		        queue_add_rate_limited(q, "ns/x", 0), 1000 * 1000);
	}
	assert_int_equal(queue_num_requeues(q, "ns/x"), 23);
	/* Parked once, at the earliest time asked (5 ms). */
	assert_int_equal(queue_parked(q), 1);
	assert_int_equal(queue_parked_until(q, "ns/x"), 5);
	queue_forget(q, "ns/x");
	assert_int_equal(queue_num_requeues(q, "ns/x"), 0);
	assert_int_equal(queue_parked(q), 1); /* forget does not dequeue */
	assert_int_equal(queue_add_rate_limited(q, "ns/x", 0), 5);
	assert_int_equal(queue_add_rate_limited(q, "ns/x", 0), 10);
	/* Keys have separate histories. */
	assert_int_equal(queue_add_rate_limited(q, "ns/y", 0), 5);
	queue_free(q);
}

/* 63: the default bucket allows 100 immediately, then 10 per second. */
static void
test_bucket(void **state)
{
	struct queue *q = queue_new(NULL);
	char key[32];
	int i;

	(void)state;
	/* Fresh keys: the exponential part is 5 ms each time. */
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "ns/a%d", i);
		assert_int_equal(queue_add_rate_limited(q, key, 0), 5);
	}
	assert_int_equal(queue_add_rate_limited(q, "ns/b0", 0), 100);
	assert_int_equal(queue_add_rate_limited(q, "ns/b1", 0), 200);
	assert_int_equal(queue_add_rate_limited(q, "ns/b2", 0), 300);
	/* At 1.3 s the debt is paid and 10 tokens are back. */
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "ns/c%d", i);
		assert_int_equal(queue_add_rate_limited(q, key, 1300), 5);
	}
	assert_int_equal(queue_add_rate_limited(q, "ns/d", 1300), 100);
	/* Steady 10/s: one call every 100 ms never waits. */
	for (i = 1; i <= 50; i++) {
		snprintf(key, sizeof(key), "ns/e%d", i);
		assert_int_equal(
		        queue_add_rate_limited(q, key, 1400 + 100 * i), 5);
	}
	queue_free(q);
}

/* qps <= 0 disables the bucket. */
static void
test_bucket_disabled(void **state)
{
	struct queue *q = queue_nobucket(5, 1000);
	char key[32];
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "ns/a%d", i);
		assert_int_equal(queue_add_rate_limited(q, key, 0), 5);
	}
	queue_free(q);
}

/* Takes key out and checks it is the one expected. */
static void
take(struct queue *q, const char *key, int64_t now)
{
	const char *k = queue_get(q, now, NULL);

	assert_non_null(k);
	assert_string_equal(k, key);
}

/* 64: each verdict's queue action. */
static void
test_verdicts(void **state)
{
	struct queue *q = queue_new(NULL);

	(void)state;
	/* error: rate-limited requeue, 5 then 10 ms. */
	queue_add(q, "ns/x", 0);
	take(q, "ns/x", 0);
	assert_int_equal(queue_finish(q, "ns/x", QUEUE_ERROR, 0, 0), 0);
	assert_int_equal(queue_num_requeues(q, "ns/x"), 1);
	assert_int_equal(queue_parked_until(q, "ns/x"), 5);
	assert_null(queue_get(q, 4, NULL));
	take(q, "ns/x", 5);
	/* requeue: the same as error. */
	assert_int_equal(queue_finish(q, "ns/x", QUEUE_REQUEUE, 0, 5), 0);
	assert_int_equal(queue_num_requeues(q, "ns/x"), 2);
	assert_int_equal(queue_parked_until(q, "ns/x"), 15);
	take(q, "ns/x", 15);
	/* requeue_after: backoff reset, delivered after d. */
	assert_int_equal(
	        queue_finish(q, "ns/x", QUEUE_REQUEUE_AFTER, 3000, 15), 0);
	assert_int_equal(queue_num_requeues(q, "ns/x"), 0);
	assert_int_equal(queue_next_deadline(q, 15), 3015);
	assert_null(queue_get(q, 3014, NULL));
	take(q, "ns/x", 3015);
	/* success: forget, nothing queued. */
	assert_int_equal(queue_finish(q, "ns/x", QUEUE_ERROR, 0, 3015), 0);
	take(q, "ns/x", 3020);
	assert_int_equal(queue_finish(q, "ns/x", QUEUE_SUCCESS, 0, 3020), 0);
	assert_int_equal(queue_num_requeues(q, "ns/x"), 0);
	assert_int_equal(queue_key_flags(q, "ns/x"), 0);
	/* terminal: forget, never requeued. */
	queue_add(q, "ns/y", 4000);
	take(q, "ns/y", 4000);
	assert_int_equal(queue_finish(q, "ns/y", QUEUE_ERROR, 0, 4000), 0);
	take(q, "ns/y", 4005);
	assert_int_equal(queue_finish(q, "ns/y", QUEUE_TERMINAL, 0, 4005), 0);
	assert_int_equal(queue_num_requeues(q, "ns/y"), 0);
	assert_int_equal(queue_next_deadline(q, 4005), -1);
	assert_null(queue_get(q, 10000000, NULL));
	/* Only processing keys, known verdicts. */
	assert_int_equal(queue_finish(q, "ns/y", QUEUE_SUCCESS, 0, 4006), -1);
	queue_add(q, "ns/z", 5000);
	take(q, "ns/z", 5000);
	assert_int_equal(
	        queue_finish(q, "ns/z", (enum queue_verdict)99, 0, 5000), -1);
	assert_int_equal(queue_processing(q), 1);
	assert_int_equal(queue_finish(q, "ns/z", QUEUE_SUCCESS, 0, 5000), 0);
	assert_int_equal(queue_processing(q), 0);
	queue_free(q);
}

/* A key re-added while processing and then failed is delivered at once
 * after Done (it is dirty) and again when its backoff ends (client-go
 * does the same: the parked entry is separate). */
static void
test_verdict_dirty(void **state)
{
	struct queue *q = queue_new(NULL);

	(void)state;
	queue_add(q, "ns/x", 0);
	take(q, "ns/x", 0);
	queue_add(q, "ns/x", 1);
	assert_int_equal(queue_finish(q, "ns/x", QUEUE_ERROR, 0, 2), 0);
	assert_int_equal(queue_len(q), 1);
	assert_int_equal(queue_parked(q), 1);
	take(q, "ns/x", 2);
	assert_int_equal(queue_done(q, "ns/x", 3), 0);
	take(q, "ns/x", 7);
	assert_int_equal(queue_done(q, "ns/x", 8), 0);
	assert_null(queue_get(q, 100000, NULL));
	queue_free(q);
}

static void
test_verdict_labels(void **state)
{
	(void)state;
	assert_string_equal(queue_verdict_label(QUEUE_SUCCESS), "success");
	assert_string_equal(queue_verdict_label(QUEUE_REQUEUE), "requeue");
	assert_string_equal(
	        queue_verdict_label(QUEUE_REQUEUE_AFTER), "requeue_after");
	assert_string_equal(queue_verdict_label(QUEUE_ERROR), "error");
	assert_string_equal(queue_verdict_label(QUEUE_TERMINAL), "error");
	assert_string_equal(
	        queue_verdict_label((enum queue_verdict)42), "unknown");
}

/* Shutdown: no new adds, parked keys dropped, queued ones handed out,
 * re-adds from before the shutdown honoured by Done, then drained. */
static void
test_shutdown(void **state)
{
	struct queue *q = queue_new(NULL);

	(void)state;
	queue_add(q, "ns/a", 0);
	queue_add(q, "ns/b", 0);
	queue_add_after(q, "ns/c", 100, 0);
	take(q, "ns/a", 1);
	queue_add(q, "ns/a", 2); /* dirty while processing */
	queue_shutdown(q);
	assert_true(queue_is_shutdown(q));
	assert_false(queue_drained(q));
	assert_int_equal(queue_add(q, "ns/d", 3), -1);
	assert_int_equal(queue_add_after(q, "ns/d", 10, 3), -1);
	assert_int_equal(queue_add_rate_limited(q, "ns/d", 3), -1);
	assert_int_equal(queue_num_requeues(q, "ns/d"), 0);
	assert_int_equal(queue_parked(q), 0);
	assert_int_equal(queue_next_deadline(q, 3), -1);
	take(q, "ns/b", 4);
	assert_int_equal(queue_finish(q, "ns/b", QUEUE_ERROR, 0, 5), 0);
	assert_int_equal(queue_parked(q), 0);
	assert_int_equal(queue_done(q, "ns/a", 6), 0);
	take(q, "ns/a", 7);
	assert_null(queue_get(q, 1000, NULL));
	assert_false(queue_drained(q));
	assert_int_equal(queue_done(q, "ns/a", 8), 0);
	assert_true(queue_drained(q));
	assert_null(queue_get(q, 1000, NULL));
	queue_free(q);
}

/* next_deadline: the earliest parked time, -1 with none; due keys move in. */
static void
test_next_deadline(void **state)
{
	struct queue *q = queue_new(NULL);

	(void)state;
	assert_int_equal(queue_next_deadline(q, 0), -1);
	queue_add_after(q, "ns/a", 500, 0);
	queue_add_after(q, "ns/b", 200, 0);
	queue_add_after(q, "ns/c", 300, 0);
	assert_int_equal(queue_next_deadline(q, 0), 200);
	assert_int_equal(queue_next_deadline(q, 250), 300);
	assert_int_equal(queue_len(q), 1);
	assert_int_equal(queue_parked(q), 2);
	assert_int_equal(queue_next_deadline(q, 10000), -1);
	assert_int_equal(queue_len(q), 3);
	/* Ready keys come out in ready-time order. */
	take(q, "ns/b", 10000);
	take(q, "ns/c", 10000);
	take(q, "ns/a", 10000);
	/* Huge delays saturate instead of overflowing. */
	queue_add_after(q, "ns/z", INT64_MAX, 10);
	assert_int_equal(queue_next_deadline(q, 10), INT64_MAX);
	queue_free(q);
}

/* Per-key metadata and the metrics counters. */
static void
test_metadata(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats st;
	int64_t lat = -1;
	const char *k;

	(void)state;
	assert_int_equal(queue_added_ms(q, "ns/x"), -1);
	queue_add(q, "ns/x", 100);
	queue_add(q, "ns/x", 150);
	assert_int_equal(queue_added_ms(q, "ns/x"), 100);
	assert_int_equal(
	        queue_key_flags(q, "ns/x"), QUEUE_F_DIRTY | QUEUE_F_QUEUED);
	k = queue_get(q, 130, &lat);
	assert_int_equal(lat, 30);
	assert_int_equal(queue_started_ms(q, k), 130);
	assert_int_equal(queue_added_ms(q, k), -1);
	queue_add(q, "ns/x", 140);
	queue_add_after(q, "ns/y", 50, 140);
	queue_stats(q, &st);
	assert_int_equal(st.adds_total, 2);
	assert_int_equal(st.retries_total, 1);
	assert_int_equal(st.depth, 1);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.processing, 1);
	assert_int_equal(st.parked, 1);
	assert_int_equal(st.keys, 2);
	assert_int_equal(queue_key_flags(q, "ns/y"), QUEUE_F_PARKED);
	queue_done(q, "ns/x", 160);
	assert_int_equal(queue_started_ms(q, "ns/x"), -1);
	k = queue_get(q, 170, &lat);
	assert_string_equal(k, "ns/x");
	assert_int_equal(lat, 30); /* from the re-add at 140 */
	queue_free(q);
}

/* Bad input is refused, never a crash. */
static void
test_bad_input(void **state)
{
	struct queue *q = queue_new(NULL);

	(void)state;
	assert_int_equal(queue_add(q, NULL, 0), -1);
	assert_int_equal(queue_add(q, "", 0), -1);
	assert_int_equal(queue_add_after(q, NULL, 5, 0), -1);
	assert_int_equal(queue_add_rate_limited(q, "", 0), -1);
	assert_int_equal(queue_done(q, NULL, 0), -1);
	assert_int_equal(queue_done(q, "ns/none", 0), -1);
	assert_int_equal(queue_finish(q, NULL, QUEUE_SUCCESS, 0, 0), -1);
	queue_forget(q, NULL);
	queue_forget(q, "ns/none");
	assert_int_equal(queue_num_requeues(q, NULL), 0);
	assert_int_equal(queue_key_flags(q, NULL), 0);
	assert_int_equal(queue_parked_until(q, "ns/none"), -1);
	assert_null(queue_get(q, 0, NULL));
	queue_free(NULL);
	queue_free(q);
}

/* ---- lanes ---- */

/* A queue with a small high run, so the low lane's share shows. */
static struct queue *
queue_run(int high_run)
{
	struct queue_config c;

	queue_config_default(&c);
	c.qps = 0;
	c.high_run = high_run;
	return (queue_new(&c));
}

/* Gets one key and finishes it at once; asserts it is want. */
static void
take_done(struct queue *q, const char *want, int64_t now)
{
	const char *k = queue_get(q, now, NULL);

	assert_non_null(k);
	assert_string_equal(k, want);
	assert_int_equal(queue_done(q, k, now), 0);
}

/* The start benchmark's case: 10,000 keys from the initial list, then one
 * live change: it is handed out next, then the backlog in its order. */
static void
test_lane_high_first(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats st;
	char key[32];
	int64_t lat;
	int i;

	(void)state;
	for (i = 0; i < MANY_LOW; i++) {
		snprintf(key, sizeof(key), "ns/run-%d", i);
		assert_int_equal(queue_add_lane(q, key, QUEUE_LOW, 0), 0);
	}
	assert_int_equal(queue_key_flags(q, "ns/run-0"),
	        QUEUE_F_DIRTY | QUEUE_F_QUEUED | QUEUE_F_LOW);
	assert_int_equal(queue_add(q, "ns/probe", 5), 0);
	queue_stats(q, &st);
	assert_int_equal(st.queued, MANY_LOW + 1);
	assert_int_equal(st.queued_high, 1);
	assert_int_equal(st.queued_low, MANY_LOW);
	assert_int_equal(st.depth, MANY_LOW + 1);
	assert_string_equal(queue_get(q, 7, &lat), "ns/probe");
	assert_int_equal(lat, 2);
	assert_int_equal(queue_done(q, "ns/probe", 8), 0);
	for (i = 0; i < MANY_LOW; i++) {
		snprintf(key, sizeof(key), "ns/run-%d", i);
		take_done(q, key, 9);
	}
	assert_null(queue_get(q, 10, NULL));
	queue_stats(q, &st);
	assert_int_equal(st.keys, 0);
	queue_free(q);
}

/* A key queued in the low lane that gets a live change moves to the high
 * lane's tail (queued once, its added time kept); a low add of a key in
 * the high lane coalesces there. */
static void
test_lane_move(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats st;
	int64_t lat;

	(void)state;
	queue_add_lane(q, "ns/l1", QUEUE_LOW, 0);
	queue_add_lane(q, "ns/l2", QUEUE_LOW, 1);
	queue_add_lane(q, "ns/l3", QUEUE_LOW, 2);
	queue_add(q, "ns/h1", 3);
	queue_add(q, "ns/l2", 4); /* live change of l2: moves */
	queue_add_lane(q, "ns/h1", QUEUE_LOW, 5); /* coalesces in high */
	queue_add_lane(q, "ns/l1", QUEUE_LOW, 6); /* coalesces in low */
	queue_stats(q, &st);
	assert_int_equal(st.adds_total, 4);
	assert_int_equal(st.queued_high, 2);
	assert_int_equal(st.queued_low, 2);
	assert_int_equal(
	        queue_key_flags(q, "ns/l2"), QUEUE_F_DIRTY | QUEUE_F_QUEUED);
	assert_int_equal(queue_added_ms(q, "ns/l2"), 1);
	assert_string_equal(queue_get(q, 10, NULL), "ns/h1");
	assert_string_equal(queue_get(q, 10, &lat), "ns/l2");
	assert_int_equal(lat, 9);
	assert_string_equal(queue_get(q, 10, NULL), "ns/l1");
	assert_string_equal(queue_get(q, 10, NULL), "ns/l3");
	assert_null(queue_get(q, 10, NULL));
	queue_free(q);
}

/* Adds while processing: the key comes back once, after done, in the
 * high lane if any of the adds was high. */
static void
test_lane_processing(void **state)
{
	struct queue *q = queue_new(NULL);
	const char *k;

	(void)state;
	queue_add_lane(q, "ns/a", QUEUE_LOW, 0);
	queue_add_lane(q, "ns/b", QUEUE_LOW, 0);
	k = queue_get(q, 1, NULL);
	assert_string_equal(k, "ns/a");
	queue_add_lane(q, "ns/a", QUEUE_LOW, 2);
	/* a is processing: b comes next, then nothing */
	assert_string_equal(queue_get(q, 2, NULL), "ns/b");
	assert_null(queue_get(q, 2, NULL));
	assert_int_equal(queue_key_flags(q, "ns/a"),
	        QUEUE_F_DIRTY | QUEUE_F_PROCESSING | QUEUE_F_LOW);
	queue_add(q, "ns/a", 3);
	assert_int_equal(queue_key_flags(q, "ns/a"),
	        QUEUE_F_DIRTY | QUEUE_F_PROCESSING);
	assert_int_equal(queue_lane_len(q, QUEUE_HIGH), 0);
	assert_int_equal(queue_done(q, "ns/a", 4), 0);
	assert_int_equal(queue_lane_len(q, QUEUE_HIGH), 1);
	assert_int_equal(queue_done(q, "ns/b", 4), 0);
	queue_add_lane(q, "ns/b", QUEUE_LOW, 5);
	queue_add_lane(q, "ns/c", QUEUE_LOW, 5);
	take_done(q, "ns/a", 6);
	k = queue_get(q, 7, NULL);
	assert_string_equal(k, "ns/b");
	queue_add_lane(q, "ns/b", QUEUE_LOW, 8);
	assert_int_equal(queue_done(q, k, 9), 0);
	assert_int_equal(queue_lane_len(q, QUEUE_LOW), 2);
	take_done(q, "ns/c", 10);
	take_done(q, "ns/b", 10);
	assert_null(queue_get(q, 11, NULL));
	queue_free(q);
}

/* With the high lane never empty, every (high_run + 1)-th key is low, in
 * the low lane's order: no starvation. */
static void
test_lane_no_starvation(void **state)
{
	struct queue *q = queue_run(3);
	char key[32], got[32];
	const char *k;
	int i, low = 0;

	(void)state;
	for (i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "ns/low-%d", i);
		queue_add_lane(q, key, QUEUE_LOW, 0);
	}
	for (i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "ns/high-%d", i);
		queue_add(q, key, 0);
	}
	for (i = 0; i < 32; i++) {
		k = queue_get(q, 1, NULL);
		assert_non_null(k);
		snprintf(got, sizeof(got), "%s", k);
		assert_int_equal(queue_done(q, got, 1), 0);
		if (i % 4 == 3) {
			snprintf(key, sizeof(key), "ns/low-%d", low++);
			assert_string_equal(got, key);
		} else {
			assert_non_null(strstr(got, "high"));
			queue_add(q, got, 1); /* a live change again */
		}
	}
	assert_int_equal(queue_lane_len(q, QUEUE_LOW), 0);
	/* The low lane empty: the run starts again from 0. */
	queue_add_lane(q, "ns/late", QUEUE_LOW, 2);
	for (i = 0; i < 3; i++) {
		k = queue_get(q, 2, NULL);
		assert_non_null(strstr(k, "high"));
		snprintf(got, sizeof(got), "%s", k);
		queue_done(q, got, 2);
		queue_add(q, got, 2);
	}
	take_done(q, "ns/late", 2);
	queue_free(q);
	/* The default config: 1 low key every QUEUE_DEFAULT_HIGH_RUN + 1. */
	q = queue_new(NULL);
	queue_add_lane(q, "ns/low", QUEUE_LOW, 0);
	for (i = 0; i < QUEUE_DEFAULT_HIGH_RUN; i++) {
		queue_add(q, "ns/high", 0);
		take_done(q, "ns/high", 0);
	}
	queue_add(q, "ns/high", 0);
	take_done(q, "ns/low", 0);
	take_done(q, "ns/high", 0);
	queue_free(q);
}

/* Verdict timers put the key back in the lane it was handed out from;
 * AddAfter and AddRateLimited join the high lane; a key parked for both
 * lanes joins the high one. */
static void
test_lane_timers(void **state)
{
	struct queue *q = queue_nobucket(10, 1000);

	(void)state;
	queue_add_lane(q, "ns/low", QUEUE_LOW, 0);
	queue_add(q, "ns/high", 0);
	assert_string_equal(queue_get(q, 0, NULL), "ns/high");
	assert_string_equal(queue_get(q, 0, NULL), "ns/low");
	assert_int_equal(
	        queue_finish(q, "ns/low", QUEUE_REQUEUE_AFTER, 50, 1), 0);
	assert_int_equal(queue_finish(q, "ns/high", QUEUE_ERROR, 0, 1), 0);
	queue_add_lane(q, "ns/other", QUEUE_LOW, 1);
	assert_int_equal(queue_tick(q, 11), 1); /* high: 10 ms backoff */
	assert_int_equal(queue_lane_len(q, QUEUE_HIGH), 1);
	take_done(q, "ns/high", 12);
	assert_int_equal(queue_tick(q, 51), 1); /* low, after other */
	assert_int_equal(queue_key_flags(q, "ns/low"),
	        QUEUE_F_DIRTY | QUEUE_F_QUEUED | QUEUE_F_LOW);
	assert_int_equal(queue_lane_len(q, QUEUE_LOW), 2);
	take_done(q, "ns/other", 52);
	assert_string_equal(queue_get(q, 52, NULL), "ns/low");
	assert_int_equal(queue_finish(q, "ns/low", QUEUE_REQUEUE, 0, 53), 0);
	assert_int_equal(queue_num_requeues(q, "ns/low"), 1);
	/* parked for the low lane, then AddAfter: the high lane wins */
	assert_int_equal(queue_add_after(q, "ns/low", 100, 53), 0);
	assert_int_equal(queue_parked_until(q, "ns/low"), 63);
	queue_tick(q, 63);
	assert_int_equal(
	        queue_key_flags(q, "ns/low"), QUEUE_F_DIRTY | QUEUE_F_QUEUED);
	take_done(q, "ns/low", 64);
	/* AddRateLimited joins the high lane */
	assert_int_equal(queue_add_rate_limited(q, "ns/r", 64), 10);
	queue_tick(q, 74);
	assert_int_equal(queue_lane_len(q, QUEUE_HIGH), 1);
	take_done(q, "ns/r", 74);
	/* a low requeue-after of 0 is an immediate low add */
	queue_add_lane(q, "ns/z", QUEUE_LOW, 75);
	assert_string_equal(queue_get(q, 75, NULL), "ns/z");
	queue_finish(q, "ns/z", QUEUE_REQUEUE_AFTER, 0, 76);
	assert_int_equal(queue_lane_len(q, QUEUE_LOW), 1);
	take_done(q, "ns/z", 77);
	queue_free(q);
}

/* Bad lanes; shutdown still hands out both lanes. */
static void
test_lane_bad_and_shutdown(void **state)
{
	struct queue *q = queue_new(NULL);

	(void)state;
	assert_int_equal(queue_add_lane(q, "ns/x", (enum queue_lane)7, 0), -1);
	assert_int_equal(queue_add_lane(q, NULL, QUEUE_LOW, 0), -1);
	assert_int_equal(queue_add_lane(q, "", QUEUE_LOW, 0), -1);
	assert_int_equal(queue_lane_len(q, (enum queue_lane)7), 0);
	assert_int_equal(queue_len(q), 0);
	queue_add_lane(q, "ns/l", QUEUE_LOW, 0);
	queue_add(q, "ns/h", 0);
	queue_shutdown(q);
	assert_int_equal(queue_add_lane(q, "ns/y", QUEUE_LOW, 0), -1);
	assert_false(queue_drained(q));
	take_done(q, "ns/h", 1);
	take_done(q, "ns/l", 1);
	assert_true(queue_drained(q));
	queue_free(q);
}

/* ---- randomized model test ---- */

#define MKEYS 12
#define MWORK 3
#define MRUN  2 /* high_run of the queue under test */

/* The reference model: client-go's sets with two lanes, written the slow,
 * obvious way. */
struct model {
	bool dirty[MKEYS];
	bool processing[MKEYS];
	int lane[MKEYS];      /* while dirty */
	int proc_lane[MKEYS]; /* while processing */
	int park_lane[MKEYS]; /* while parked */
	int fifo[QUEUE_NLANES][MKEYS * 2];
	int fifo_len[QUEUE_NLANES];
	int run;
	int64_t ready[MKEYS]; /* -1: not parked */
	uint64_t seq[MKEYS];
	uint64_t next_seq;
	int failures[MKEYS];
	int held[MWORK]; /* -1: idle */
	bool shutdown;
};

static void
mkey(int i, char *out, size_t len)
{
	snprintf(out, len, "ns/key-%d", i);
}

/* Position of i in lane l's FIFO, -1 if absent. */
static int
m_find(const struct model *m, int l, int i)
{
	for (int j = 0; j < m->fifo_len[l]; j++) {
		if (m->fifo[l][j] == i) {
			return (j);
		}
	}
	return (-1);
}

static void
m_remove(struct model *m, int l, int j)
{
	memmove(m->fifo[l] + j, m->fifo[l] + j + 1,
	        (size_t)(--m->fifo_len[l] - j) * sizeof(int));
}

static void
m_add(struct model *m, int i, int lane)
{
	int j;

	if (m->shutdown) {
		return;
	}
	if (m->dirty[i]) {
		if (lane == QUEUE_HIGH && m->lane[i] == QUEUE_LOW) {
			m->lane[i] = QUEUE_HIGH;
			if ((j = m_find(m, QUEUE_LOW, i)) >= 0) {
				m_remove(m, QUEUE_LOW, j);
				m->fifo[QUEUE_HIGH][m->fifo_len[QUEUE_HIGH]++]
				        = i;
			}
		}
		return;
	}
	m->dirty[i] = true;
	m->lane[i] = lane;
	if (!m->processing[i]) {
		m->fifo[lane][m->fifo_len[lane]++] = i;
	}
}

static void
m_park(struct model *m, int i, int64_t at, int lane)
{
	if (m->ready[i] < 0) {
		m->ready[i] = at;
		m->seq[i] = m->next_seq++;
		m->park_lane[i] = lane;
		return;
	}
	if (at < m->ready[i]) {
		m->ready[i] = at;
	}
	if (lane == QUEUE_HIGH) {
		m->park_lane[i] = QUEUE_HIGH;
	}
}

/* Promotes due keys in (ready, seq) order. */
static void
m_tick(struct model *m, int64_t now)
{
	int i, best;

	for (;;) {
		best = -1;
		for (i = 0; i < MKEYS; i++) {
			if (m->ready[i] < 0 || m->ready[i] > now) {
				continue;
			}
			if (best < 0 || m->ready[i] < m->ready[best]
			        || (m->ready[i] == m->ready[best]
			                && m->seq[i] < m->seq[best])) {
				best = i;
			}
		}
		if (best < 0) {
			return;
		}
		m->ready[best] = -1;
		m_add(m, best, m->park_lane[best]);
	}
}

/* The lane served next, -1 for none. */
static int
m_lane(struct model *m)
{
	int hi = m->fifo_len[QUEUE_HIGH], lo = m->fifo_len[QUEUE_LOW];

	if (lo == 0) {
		m->run = 0;
		return (hi > 0 ? QUEUE_HIGH : -1);
	}
	if (hi == 0 || m->run >= MRUN) {
		m->run = 0;
		return (QUEUE_LOW);
	}
	m->run++;
	return (QUEUE_HIGH);
}

static int
m_get(struct model *m, int64_t now)
{
	int i, l;

	m_tick(m, now);
	if ((l = m_lane(m)) < 0) {
		return (-1);
	}
	i = m->fifo[l][0];
	m_remove(m, l, 0);
	m->dirty[i] = false;
	m->processing[i] = true;
	m->proc_lane[i] = l;
	return (i);
}

static void
m_done(struct model *m, int i)
{
	m->processing[i] = false;
	if (m->dirty[i]) {
		m->fifo[m->lane[i]][m->fifo_len[m->lane[i]]++] = i;
	}
}

/* Model of the limiter with base 1, cap 64 and no bucket. */
static void
m_rate_limited(struct model *m, int i, int64_t now, int lane)
{
	int64_t d;

	if (m->shutdown) {
		return;
	}
	d = backoff_exp(1, 64, m->failures[i]++);
	m_park(m, i, now + d, lane);
}

/* Done or a random verdict on processing key i. */
static void
m_finish(struct model *m, struct queue *q, int i, uint64_t *rng, int64_t now)
{
	int v = (int)(backoff_rand01(rng) * 6);
	int64_t d = (int64_t)(backoff_rand01(rng) * 30) - 5;
	int lane = m->proc_lane[i];
	char key[32];

	mkey(i, key, sizeof(key));
	if (v == 5) {
		assert_int_equal(queue_done(q, key, now), 0);
		m_done(m, i);
		return;
	}
	assert_int_equal(
	        queue_finish(q, key, (enum queue_verdict)v, d, now), 0);
	switch ((enum queue_verdict)v) {
	case QUEUE_SUCCESS:
	case QUEUE_TERMINAL:
		m->failures[i] = 0;
		break;
	case QUEUE_REQUEUE:
	case QUEUE_ERROR:
		m_rate_limited(m, i, now, lane);
		break;
	case QUEUE_REQUEUE_AFTER:
		m->failures[i] = 0;
		if (!m->shutdown) {
			d <= 0 ? m_add(m, i, lane)
			       : m_park(m, i, now + d, lane);
		}
		break;
	}
	m_done(m, i);
}

static void
m_check(struct model *m, struct queue *q)
{
	struct queue_stats st;
	size_t parked = 0, proc = 0, keys = 0;
	unsigned want, got;
	char key[32];
	int i;

	for (i = 0; i < MKEYS; i++) {
		mkey(i, key, sizeof(key));
		want = (m->dirty[i] ? QUEUE_F_DIRTY : 0)
		        | (m->processing[i] ? QUEUE_F_PROCESSING : 0)
		        | (m->ready[i] >= 0 ? QUEUE_F_PARKED : 0)
		        | (m->dirty[i] && m->lane[i] == QUEUE_LOW ? QUEUE_F_LOW
		                                                  : 0);
		if (m_find(m, QUEUE_HIGH, i) >= 0
		        || m_find(m, QUEUE_LOW, i) >= 0) {
			want |= QUEUE_F_QUEUED;
		}
		got = queue_key_flags(q, key);
		assert_int_equal(got, want);
		assert_int_equal(queue_num_requeues(q, key), m->failures[i]);
		assert_int_equal(queue_parked_until(q, key), m->ready[i]);
		parked += m->ready[i] >= 0;
		proc += m->processing[i];
		keys += want != 0 || m->failures[i] != 0;
	}
	queue_stats(q, &st);
	assert_int_equal(st.queued_high, m->fifo_len[QUEUE_HIGH]);
	assert_int_equal(st.queued_low, m->fifo_len[QUEUE_LOW]);
	assert_int_equal(
	        st.queued, m->fifo_len[QUEUE_HIGH] + m->fifo_len[QUEUE_LOW]);
	assert_int_equal(st.processing, proc);
	assert_int_equal(st.parked, parked);
	assert_int_equal(st.keys, keys);
}

/* A get on both; a key handed out is held by worker w. */
static void
m_take(struct model *m, struct queue *q, int w, int64_t now)
{
	const char *k = queue_get(q, now, NULL);
	int got = m_get(m, now);
	char key[32];

	if (got < 0) {
		assert_null(k);
		return;
	}
	mkey(got, key, sizeof(key));
	assert_non_null(k);
	assert_string_equal(k, key);
	m->held[w] = got;
}

/* One random operation on both the queue and the model. */
static void
m_step(struct model *m, struct queue *q, uint64_t *rng, int64_t now)
{
	int op = (int)(backoff_rand01(rng) * 9);
	int i = (int)(backoff_rand01(rng) * MKEYS);
	int w = (int)(backoff_rand01(rng) * MWORK);
	int64_t d = (int64_t)(backoff_rand01(rng) * 40) - 5;
	char key[32];

	mkey(i, key, sizeof(key));
	switch (op) {
	case 0:
	case 1:
		assert_int_equal(queue_add(q, key, now), m->shutdown ? -1 : 0);
		m_add(m, i, QUEUE_HIGH);
		break;
	case 8:
		assert_int_equal(queue_add_lane(q, key, QUEUE_LOW, now),
		        m->shutdown ? -1 : 0);
		m_add(m, i, QUEUE_LOW);
		break;
	case 2:
		queue_add_after(q, key, d, now);
		if (!m->shutdown) {
			d <= 0 ? m_add(m, i, QUEUE_HIGH)
			       : m_park(m, i, now + d, QUEUE_HIGH);
		}
		break;
	case 3:
		queue_add_rate_limited(q, key, now);
		m_rate_limited(m, i, now, QUEUE_HIGH);
		break;
	case 4:
		queue_forget(q, key);
		m->failures[i] = 0;
		break;
	case 5:
	case 6:
		if (m->held[w] >= 0) {
			m_finish(m, q, m->held[w], rng, now);
			m->held[w] = -1;
		} else {
			m_take(m, q, w, now);
		}
		break;
	case 7:
		if (backoff_rand01(rng) < 0.002) {
			queue_shutdown(q);
			m->shutdown = true;
			memset(m->ready, 0xff, sizeof(m->ready)); /* -1 */
		} else {
			queue_tick(q, now);
			m_tick(m, now);
		}
		break;
	}
}

static void
test_model_random(void **state)
{
	struct queue_config c;
	struct model m;
	struct queue *q;
	uint64_t rng;
	int64_t now;
	int round, step, i;

	(void)state;
	queue_config_default(&c);
	c.base_ms = 1;
	c.cap_ms = 64;
	c.qps = 0;
	c.high_run = MRUN;
	for (round = 0; round < 20; round++) {
		memset(&m, 0, sizeof(m));
		for (i = 0; i < MKEYS; i++) {
			m.ready[i] = -1;
		}
		for (i = 0; i < MWORK; i++) {
			m.held[i] = -1;
		}
		q = queue_new(&c);
		rng = 1000 + (uint64_t)round;
		now = 0;
		for (step = 0; step < 3000; step++) {
			now += (int64_t)(backoff_rand01(&rng) * 4);
			m_step(&m, q, &rng, now);
			m_check(&m, q);
		}
		queue_free(q);
	}
}

/* ---- scale ---- */

#define MANY 10000

/* 10,000 keys: FIFO order, parked order, and every item freed after. */
static void
test_many_keys(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats st;
	char key[32];
	const char *k;
	int i, round;

	(void)state;
	for (round = 0; round < 3; round++) {
		for (i = 0; i < MANY; i++) {
			snprintf(key, sizeof(key), "ns-%d/obj-%d", i % 7, i);
			queue_add(q, key, round);
			queue_add(q, key, round); /* coalesces */
		}
		assert_int_equal(queue_len(q), MANY);
		for (i = 0; i < MANY; i++) {
			snprintf(key, sizeof(key), "ns-%d/obj-%d", i % 7, i);
			k = queue_get(q, round, NULL);
			assert_non_null(k);
			assert_string_equal(k, key);
		}
		assert_int_equal(queue_processing(q), MANY);
		for (i = MANY - 1; i >= 0; i--) {
			snprintf(key, sizeof(key), "ns-%d/obj-%d", i % 7, i);
			assert_int_equal(queue_done(q, key, round), 0);
		}
		queue_stats(q, &st);
		assert_int_equal(st.keys, 0);
	}
	/* Parked in reverse order: they come out by ready time. */
	for (i = 0; i < MANY; i++) {
		snprintf(key, sizeof(key), "ns/p%d", i);
		queue_add_after(q, key, MANY - i, 0);
	}
	assert_int_equal(queue_next_deadline(q, 0), 1);
	for (i = MANY - 1; i >= 0; i--) {
		snprintf(key, sizeof(key), "ns/p%d", i);
		k = queue_get(q, MANY - i, NULL);
		assert_non_null(k);
		assert_string_equal(k, key);
		queue_done(q, k, MANY - i);
	}
	assert_int_equal(queue_parked(q), 0);
	queue_free(q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_coalesces),
		cmocka_unit_test(test_add_while_processing),
		cmocka_unit_test(test_never_held_twice),
		cmocka_unit_test(test_add_after_earlier_wins),
		cmocka_unit_test(test_parked_coalesces),
		cmocka_unit_test(test_exponential),
		cmocka_unit_test(test_bucket),
		cmocka_unit_test(test_bucket_disabled),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_verdict_dirty),
		cmocka_unit_test(test_verdict_labels),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_next_deadline),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_lane_high_first),
		cmocka_unit_test(test_lane_move),
		cmocka_unit_test(test_lane_processing),
		cmocka_unit_test(test_lane_no_starvation),
		cmocka_unit_test(test_lane_timers),
		cmocka_unit_test(test_lane_bad_and_shutdown),
		cmocka_unit_test(test_model_random),
		cmocka_unit_test(test_many_keys),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
