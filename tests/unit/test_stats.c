/* test_stats.c: the supervisor's figures (supervisor/stats.h): tables,
 * reconcile counting by result with the last error, the histogram's
 * controller-runtime buckets and its percentiles, API counting by verb
 * and code, leadership, and the names a /metrics renderer uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "supervisor/stats.h"

static struct stats *
two_workers(void)
{
	struct stats *st = stats_new(1000, 1700000000000);

	assert_int_equal(stats_add_ctl(st, "testctl"), 0);
	assert_int_equal(stats_add_ctl(st, "instance"), 1);
	assert_int_equal(stats_add_worker(st, "testctl", 0), 0);
	assert_int_equal(stats_add_worker(st, "testctl", 1), 1);
	assert_int_equal(stats_add_worker(st, "instance", 0), 2);
	assert_int_equal(stats_add_kind(st, "configmaps", "testctl"), 0);
	return (st);
}

static void
test_tables(void **state)
{
	struct stats *st = two_workers();

	(void)state;
	assert_int_equal(st->nctls, 2);
	assert_int_equal(st->nworkers, 3);
	assert_int_equal(st->nkinds, 1);
	assert_int_equal(st->ctls[0].workers, 2);
	assert_int_equal(st->ctls[1].workers, 1);
	assert_ptr_equal(stats_worker(st, "testctl", 1), &st->workers[1]);
	assert_null(stats_worker(st, "testctl", 2));
	assert_null(stats_ctl(st, "nope"));
	assert_int_equal(st->workers[0].state, STATS_W_STOPPED);
	assert_int_equal(st->workers[0].started_ms, -1);
	assert_int_equal(st->workers[0].last_error_ms, -1);
	assert_string_equal(st->kinds[0].controller, "testctl");
	assert_int_equal(st->start_ms, 1000);
	stats_free(st);
	stats_free(NULL);
}

static void
test_reconcile_counts(void **state)
{
	struct stats *st = two_workers();
	struct stats_worker *w = &st->workers[1];

	(void)state;
	stats_reconcile(st, "testctl", 1, STATS_SUCCESS, 12, NULL, 2000);
	stats_reconcile(st, "testctl", 1, STATS_REQUEUE_AFTER, 3, NULL, 2001);
	stats_reconcile(
	        st, "testctl", 1, STATS_ERROR, 40, "told to fail", 2002);
	stats_reconcile(st, "testctl", 0, STATS_REQUEUE, 1, NULL, 2003);
	stats_reconcile(st, "testctl", 1, STATS_SUCCESS, 5, "ignored", 2004);
	assert_int_equal(w->results[STATS_SUCCESS], 2);
	assert_int_equal(w->results[STATS_ERROR], 1);
	assert_int_equal(w->results[STATS_REQUEUE_AFTER], 1);
	assert_int_equal(w->results[STATS_REQUEUE], 0);
	assert_string_equal(w->last_error, "told to fail");
	assert_int_equal(w->last_error_ms, 2002);
	assert_int_equal(w->latency.count, 4);
	assert_int_equal(st->workers[0].results[STATS_REQUEUE], 1);
	assert_int_equal(st->ctls[0].results[STATS_SUCCESS], 2);
	assert_int_equal(st->ctls[0].results[STATS_REQUEUE], 1);
	assert_int_equal(st->ctls[0].latency.count, 5);
	assert_int_equal(st->ctls[1].latency.count, 0);
	/* a lost key is an error of the controller */
	stats_lost(st, "testctl", "signal SIGKILL", 100, 2005);
	assert_int_equal(st->ctls[0].results[STATS_ERROR], 2);
	/* out-of-range result counts as error; unknown names are ignored */
	stats_reconcile(st, "testctl", 0, (enum stats_result)9, 1, NULL, 3);
	assert_int_equal(st->workers[0].results[STATS_ERROR], 1);
	assert_string_equal(st->workers[0].last_error, "error");
	stats_reconcile(st, "nope", 0, STATS_SUCCESS, 1, NULL, 3);
	stats_reconcile(NULL, "testctl", 0, STATS_SUCCESS, 1, NULL, 3);
	stats_lost(NULL, "testctl", "x", 1, 1);
	stats_free(st);
}

static void
test_buckets(void **state)
{
	struct stats_hist h;

	(void)state;
	/* controller-runtime's 40 bounds, ascending, 5 ms to 60 s */
	assert_true(stats_buckets[0] == 0.005);
	assert_true(stats_buckets[STATS_NBUCKETS - 1] == 60);
	for (int i = 1; i < STATS_NBUCKETS; i++) {
		assert_true(stats_buckets[i] > stats_buckets[i - 1]);
	}
	memset(&h, 0, sizeof(h));
	stats_hist_add(&h, 5);     /* <= 0.005: first bucket (le is <=) */
	stats_hist_add(&h, 6);     /* 0.01 */
	stats_hist_add(&h, 1000);  /* 1.0 */
	stats_hist_add(&h, 61000); /* +Inf */
	stats_hist_add(&h, -3);    /* clamped to 0 */
	assert_int_equal(h.counts[0], 2);
	assert_int_equal(h.counts[1], 1);
	assert_int_equal(h.counts[17], 1); /* 1.0 */
	assert_int_equal(h.counts[STATS_NBUCKETS], 1);
	assert_int_equal(h.count, 5);
	assert_true(h.sum_s > 62.01 && h.sum_s < 62.02);
}

static void
test_quantiles(void **state)
{
	struct stats_hist h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(stats_hist_quantile(&h, 0.5), -1);
	assert_true(stats_hist_bucket_quantile(&h, 0.5) < 0);
	for (int i = 1; i <= 100; i++) {
		stats_hist_add(&h, i);
	}
	assert_int_equal(stats_hist_quantile(&h, 0.5), 50);
	assert_int_equal(stats_hist_quantile(&h, 0.9), 90);
	assert_int_equal(stats_hist_quantile(&h, 0.99), 99);
	assert_int_equal(stats_hist_quantile(&h, 1.0), 100);
	assert_int_equal(stats_hist_quantile(&h, 0.0), 1);
	/* bucket estimate: 50 ms lies in (0.025, 0.05] */
	double q = stats_hist_bucket_quantile(&h, 0.5);
	assert_true(q > 0.025 && q <= 0.05);
	/* the ring keeps the latest STATS_RING only */
	for (int i = 0; i < STATS_RING; i++) {
		stats_hist_add(&h, 7000);
	}
	assert_int_equal(h.ring_len, STATS_RING);
	assert_int_equal(stats_hist_quantile(&h, 0.01), 7000);
	assert_int_equal(h.count, 100 + STATS_RING);
}

static void
test_api(void **state)
{
	struct stats *st = two_workers();

	(void)state;
	stats_api(st, KAPI_LIST, 200);
	stats_api(st, KAPI_LIST, 200);
	stats_api(st, KAPI_CREATE, 409);
	stats_api(st, KAPI_WATCH, 0);
	assert_int_equal(st->api_total, 4);
	assert_int_equal(st->api_errors, 2);
	assert_int_equal(st->napi, 3);
	assert_int_equal(st->api[0].verb, KAPI_LIST);
	assert_int_equal(st->api[0].count, 2);
	assert_int_equal(st->api[1].code, 409);
	for (long c = 0; c < STATS_API_SLOTS + 5; c++) {
		stats_api(st, KAPI_GET, 300 + c);
	}
	assert_int_equal(st->napi, STATS_API_SLOTS);
	assert_int_equal(st->api_overflow, 8);
	stats_api(NULL, KAPI_GET, 200);
	stats_free(st);
}

static void
test_leadership(void **state)
{
	struct stats *st = two_workers();

	(void)state;
	assert_false(st->leading);
	assert_int_equal(st->leading_since_ms, 1000);
	stats_leadership(st, true, 3, 5000);
	assert_true(st->leading);
	assert_int_equal(st->epoch, 3);
	assert_int_equal(st->leading_since_ms, 5000);
	stats_leadership(st, false, 3, 9000);
	assert_false(st->leading);
	assert_int_equal(st->leading_since_ms, 9000);
	stats_leadership(NULL, true, 1, 1);
	stats_free(st);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(stats_result_label(STATS_SUCCESS), "success");
	assert_string_equal(stats_result_label(STATS_ERROR), "error");
	assert_string_equal(stats_result_label(STATS_REQUEUE), "requeue");
	assert_string_equal(
	        stats_result_label(STATS_REQUEUE_AFTER), "requeue_after");
	assert_string_equal(stats_result_label(STATS_NRESULTS), "unknown");
	assert_string_equal(
	        stats_wstate_name(STATS_W_CRASHLOOP), "crash-loop");
	assert_string_equal(stats_wstate_name(STATS_W_STANDBY), "standby");
	assert_string_equal(stats_wstate_name(STATS_W_NSTATES), "unknown");
	assert_string_equal(stats_verb_name(KAPI_CREATE), "POST");
	assert_string_equal(stats_verb_name(KAPI_WATCH), "WATCH");
	assert_string_equal(stats_verb_name((enum kapi_verb)99), "UNKNOWN");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_reconcile_counts),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_leadership),
		cmocka_unit_test(test_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
