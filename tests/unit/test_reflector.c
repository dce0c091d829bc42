/* test_reflector.c: the ListAndWatch state machine (supervisor/reflector),
 * spec kube-api.md E.1 and checklist items 57 to 61. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "supervisor/reflector.h"

static double
fixed_rand(void *arg)
{
	return (*(double *)arg);
}

/* Expects a LIST at now with these parameters (cont NULL: first page). */
static void
want_list(struct refl *r, int64_t now, const char *rv, int limit,
        const char *match, const char *cont)
{
	struct refl_action a;

	refl_next(r, now, &a);
	assert_int_equal(a.type, REFL_LIST);
	assert_string_equal(a.rv, rv);
	assert_int_equal(a.limit, limit);
	if (match == NULL) {
		assert_null(a.rv_match);
	} else {
		assert_string_equal(a.rv_match, match);
	}
	if (cont == NULL) {
		assert_null(a.cont);
	} else {
		assert_string_equal(a.cont, cont);
	}
	/* Handed out once: then the reflector waits. */
	refl_next(r, now, &a);
	assert_int_equal(a.type, REFL_NONE);
	assert_true(a.until_ms == INT64_MAX);
}

/* Expects a WATCH at now from rv; returns its timeout. */
static int
want_watch(struct refl *r, int64_t now, const char *rv)
{
	struct refl_action a;
	int t;

	refl_next(r, now, &a);
	assert_int_equal(a.type, REFL_WATCH);
	assert_string_equal(a.rv, rv);
	assert_in_range(a.timeout_s, 300, 600);
	t = a.timeout_s;
	refl_next(r, now, &a);
	assert_int_equal(a.type, REFL_NONE);
	return (t);
}

/* Expects nothing to do before exactly `until`; returns until - now. */
static int64_t
want_wait(struct refl *r, int64_t now)
{
	struct refl_action a;

	refl_next(r, now, &a);
	assert_int_equal(a.type, REFL_NONE);
	assert_true(a.until_ms > now && a.until_ms != INT64_MAX);
	return (a.until_ms - now);
}

/* A reflector that has listed once (RV "100", one page) and watches. */
static struct refl *
synced(int64_t now)
{
	struct refl *r = refl_new(1);

	want_list(r, now, "0", 500, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "100", now), REFL_LIST_DONE);
	want_watch(r, now, "100");
	refl_watch_started(r, now);
	return (r);
}

static void
test_first_list_then_watch(void **state)
{
	struct refl *r = refl_new(7);
	const struct refl_stats *s = refl_stats(r);

	(void)state;
	assert_false(refl_synced(r));
	assert_string_equal(refl_rv(r), "");
	/* 57: LIST resourceVersion=0 with limit, then WATCH from its RV. */
	want_list(r, 0, "0", 500, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, "", "100", 5), REFL_LIST_DONE);
	assert_true(refl_synced(r));
	assert_string_equal(refl_list_rv(r), "100");
	assert_string_equal(refl_rv(r), "100");
	want_watch(r, 5, "100");
	assert_int_equal(s->lists, 1);
	assert_int_equal(s->list_requests, 1);
	assert_int_equal(s->watches, 1);
	assert_int_equal(s->watch_restarts, 0);
	assert_int_equal(s->relists, 0);
	assert_int_equal(s->syncs, 1);
	assert_int_equal(s->backoffs, 0);
	refl_free(r);
	refl_free(NULL);
}

static void
test_pagination(void **state)
{
	struct refl *r = refl_new(1);

	(void)state;
	want_list(r, 0, "0", 500, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, "tok1", "100", 1), REFL_LIST_MORE);
	/* Continue pages carry no RV; the first page's RV counts. */
	want_list(r, 1, "", 500, NULL, "tok1");
	assert_int_equal(
	        refl_list_page(r, REFL_OK, "tok2", "999", 2), REFL_LIST_MORE);
	want_list(r, 2, "", 500, NULL, "tok2");
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "998", 3), REFL_LIST_DONE);
	assert_string_equal(refl_list_rv(r), "100");
	want_watch(r, 3, "100");
	assert_int_equal(refl_stats(r)->lists, 1);
	assert_int_equal(refl_stats(r)->list_requests, 3);
	/* The resource is paged: a relist keeps the limit and asks for
	 * not-older-than, so an old RV cannot earn a 410. */
	refl_watch_event(r, "150");
	refl_watch_end(r, REFL_EXPIRED, 10);
	want_wait(r, 10);
	want_list(r, 10 + 1600, "150", 500, "NotOlderThan", NULL);
	refl_free(r);
}

static void
test_expired_continue_full_list(void **state)
{
	struct refl *r = refl_new(1);

	(void)state;
	want_list(r, 0, "0", 500, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, "tok1", "100", 1), REFL_LIST_MORE);
	want_list(r, 1, "", 500, NULL, "tok1");
	/* The pager redoes the list at once, in full, same RV. */
	assert_int_equal(refl_list_page(r, REFL_EXPIRED, NULL, NULL, 2),
	        REFL_LIST_RESTART);
	want_list(r, 2, "0", 0, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "120", 3), REFL_LIST_DONE);
	want_watch(r, 3, "120");
	assert_int_equal(refl_stats(r)->lists, 1);
	assert_int_equal(refl_stats(r)->list_requests, 3);
	assert_int_equal(refl_stats(r)->backoffs, 0);
	refl_free(r);
}

static void
test_clean_end_rewatch_no_list(void **state)
{
	struct refl *r = synced(0);
	const struct refl_stats *s = refl_stats(r);

	(void)state;
	/* 58: events and bookmarks advance the RV; a clean end re-watches
	 * from the last one at once, with no LIST. */
	refl_watch_event(r, "101");
	refl_watch_event(r, NULL);
	refl_watch_event(r, "105"); /* a bookmark */
	refl_watch_end(r, REFL_OK, 300000);
	want_watch(r, 300000, "105");
	refl_watch_started(r, 300010);
	refl_watch_end(r, REFL_OK, 400000); /* idle, long: still clean */
	want_watch(r, 400000, "105");
	assert_int_equal(s->lists, 1);
	assert_int_equal(s->list_requests, 1);
	assert_int_equal(s->watches, 3);
	assert_int_equal(s->watch_restarts, 2);
	assert_int_equal(s->backoffs, 0);
	refl_free(r);
}

static void
test_expired_relists(void **state)
{
	struct refl *r = synced(0);
	const struct refl_stats *s = refl_stats(r);
	int64_t d;

	(void)state;
	/* 59: ERROR 410 -> one relist from the last RV (not-older-than, no
	 * limit: the resource is not paged), then watch from its RV. */
	refl_watch_event(r, "130");
	refl_watch_end(r, REFL_EXPIRED, 1000);
	d = want_wait(r, 1000);
	assert_in_range(d, 800, 1599);
	want_list(r, 1000 + d, "130", 0, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "200", 3000), REFL_LIST_DONE);
	want_watch(r, 3000, "200");
	assert_int_equal(s->lists, 2);
	assert_int_equal(s->relists, 1);
	assert_int_equal(s->list_requests, 2);
	assert_int_equal(s->watch_restarts, 0);
	refl_free(r);
}

static void
test_list_expired_retries_consistent(void **state)
{
	struct refl *r = synced(0);

	(void)state;
	refl_watch_end(r, REFL_ERROR, 1000); /* e.g. 403: relist */
	want_list(r, 5000, "100", 0, NULL, NULL);
	/* The RV is gone: retry at once with RV "" and the same limit. */
	assert_int_equal(refl_list_page(r, REFL_EXPIRED, NULL, NULL, 5001),
	        REFL_LIST_RESTART);
	want_list(r, 5001, "", 0, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "300", 5002), REFL_LIST_DONE);
	want_watch(r, 5002, "300");
	/* Later relists use the last RV again; a TooLarge answer (the
	 * server was restored from a backup) retries at once with "". */
	refl_watch_end(r, REFL_ERROR, 6000);
	want_list(r, 10000, "300", 0, NULL, NULL);
	assert_int_equal(refl_list_page(r, REFL_TOO_LARGE, NULL, NULL, 10001),
	        REFL_LIST_RESTART);
	want_list(r, 10001, "", 0, NULL, NULL);
	/* Even the consistent read failing: back off, then "" again, as a
	 * new attempt with the pager's page size. */
	assert_int_equal(refl_list_page(r, REFL_EXPIRED, NULL, NULL, 10002),
	        REFL_LIST_RESTART);
	assert_in_range(want_wait(r, 10002), 800, 60000);
	want_list(r, 80000, "", 500, NULL, NULL);
	refl_free(r);
}

/* A watch answered TooLarge (its RV is newer than the restored server's):
 * after one backoff delay the relist goes straight to a consistent read,
 * paged, and the watch then follows the new server's RVs. */
static void
test_watch_too_large_lists_consistent(void **state)
{
	struct refl *r = synced(0);
	int64_t d;

	(void)state;
	refl_watch_end(r, REFL_TOO_LARGE, 1000);
	d = want_wait(r, 1000);
	assert_in_range(d, 800, 1600);
	want_list(r, 1000 + d, "", 500, NULL, NULL);
	assert_int_equal(refl_list_page(r, REFL_OK, NULL, "42", 1000 + d),
	        REFL_LIST_DONE);
	want_watch(r, 1000 + d, "42");
	assert_string_equal(refl_rv(r), "42");
	/* the next relist uses the new RV again */
	refl_watch_end(r, REFL_ERROR, 5000);
	d = want_wait(r, 5000);
	want_list(r, 5000 + d, "42", 0, NULL, NULL);
	refl_free(r);
}

/* The connection lost (the server may have restarted, restored from a
 * backup): relist from the last RV after one delay, then watch. */
static void
test_watch_lost_relists(void **state)
{
	struct refl *r = synced(0);
	const struct refl_stats *s = refl_stats(r);
	int64_t d;

	(void)state;
	refl_watch_end(r, REFL_LOST, 1000);
	d = want_wait(r, 1000);
	want_list(r, 1000 + d, "100", 0, NULL, NULL);
	assert_int_equal(s->relists, 1);
	/* a lost list is retried like any failed list */
	assert_int_equal(refl_list_page(r, REFL_LOST, NULL, NULL, 3000),
	        REFL_LIST_RESTART);
	d = want_wait(r, 3000);
	want_list(r, 3000 + d, "100", 0, NULL, NULL);
	assert_int_equal(refl_list_page(r, REFL_OK, NULL, "120", 3000 + d),
	        REFL_LIST_DONE);
	want_watch(r, 3000 + d, "120");
	refl_free(r);
}

/* A full-length watch without one event, not even the pre-deadline
 * bookmark: the server is behind the RV (restored): relist at once. */
static void
test_silent_watch_relists(void **state)
{
	struct refl *r = synced(0);

	(void)state;
	refl_watch_end(r, REFL_OK, 300000);
	want_list(r, 300000, "100", 0, NULL, NULL);
	assert_int_equal(refl_stats(r)->relists, 1);
	refl_free(r);
}

static void
test_list_failure_backoff(void **state)
{
	double lo = 0.0, hi = 0.999999;
	static const int64_t steps[]
	        = { 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000 };
	struct refl *r = refl_new(1);
	int64_t now = 0, d;

	(void)state;
	/* 60: repeated list failures: [0.8,1.6), [1.6,3.2) ... [30,60). */
	refl_set_rand(r, fixed_rand, &lo);
	for (size_t i = 0; i < 8; i++) {
		want_list(r, now, "0", 500, NULL, NULL);
		refl_list_page(r, REFL_RETRY, NULL, NULL, now);
		d = want_wait(r, now);
		assert_int_equal(d, steps[i]);
		/* Not before the delay. */
		want_wait(r, now + d - 1);
		now += d;
	}
	refl_set_rand(r, fixed_rand, &hi);
	want_list(r, now, "0", 500, NULL, NULL);
	refl_list_page(r, REFL_ERROR, NULL, NULL, now);
	d = want_wait(r, now);
	assert_in_range(d, 59999, 59999);
	now += d;
	/* Success, then 2 min of health: the delays start over. */
	want_list(r, now, "0", 500, NULL, NULL);
	refl_list_page(r, REFL_OK, NULL, "100", now);
	want_watch(r, now, "100");
	refl_set_rand(r, NULL, NULL); /* the built-in generator again */
	refl_watch_event(r, "101");
	now += 120001;
	refl_watch_end(r, REFL_RETRY, now);
	assert_in_range(want_wait(r, now), 800, 1599);
	assert_int_equal(refl_stats(r)->backoffs, 10);
	refl_free(r);
}

static void
test_watch_errors(void **state)
{
	struct refl *r = synced(0);
	const struct refl_stats *s = refl_stats(r);
	int64_t d, now = 500000;

	(void)state;
	/* 429 / 5xx / refused: back off, re-watch from the last RV. */
	refl_watch_event(r, "110");
	refl_watch_end(r, REFL_RETRY, now);
	d = want_wait(r, now);
	assert_in_range(d, 800, 1599);
	want_watch(r, now + d, "110");
	now += d;
	/* A failure to start (no refl_watch_started) is the same. */
	refl_watch_end(r, REFL_RETRY, now);
	d = want_wait(r, now);
	assert_in_range(d, 1600, 3199);
	want_watch(r, now + d, "110");
	assert_int_equal(s->lists, 1);
	assert_int_equal(s->watch_restarts, 2);
	/* Outcomes reported out of turn are ignored. */
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "1", now), REFL_LIST_RESTART);
	refl_free(r);
}

/* refl_watching(): only while a watch is open, with its start time. */
static void
test_watching(void **state)
{
	struct refl *r = refl_new(3);
	int64_t since = -1, d;

	(void)state;
	assert_false(refl_watching(r, &since));
	want_list(r, 0, "0", 500, NULL, NULL);
	assert_false(refl_watching(r, NULL)); /* listing */
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "100", 10), REFL_LIST_DONE);
	want_watch(r, 10, "100");
	refl_watch_started(r, 20);
	assert_true(refl_watching(r, &since));
	assert_int_equal(since, 20);
	refl_watch_end(r, REFL_RETRY, 5000);
	assert_false(refl_watching(r, &since)); /* backing off */
	d = want_wait(r, 5000);
	want_watch(r, 5000 + d, "100");
	refl_watch_started(r, 5000 + d);
	assert_true(refl_watching(r, &since));
	assert_int_equal(since, 5000 + d);
	refl_watch_end(r, REFL_EXPIRED, 9000);
	assert_false(refl_watching(r, NULL)); /* relist due */
	refl_free(r);
}

static void
test_very_short_watch(void **state)
{
	struct refl *r = synced(1000);
	int64_t d;

	(void)state;
	/* Ends cleanly within 1 s with no event: an error, backed off,
	 * then a relist from the last RV (a server going away answers so;
	 * the next watch may reach a restored one). */
	refl_watch_end(r, REFL_OK, 1999);
	d = want_wait(r, 1999);
	assert_in_range(d, 800, 1599);
	want_list(r, 1999 + d, "100", 0, NULL, NULL);
	assert_int_equal(refl_list_page(r, REFL_OK, NULL, "100", 1999 + d),
	        REFL_LIST_DONE);
	want_watch(r, 1999 + d, "100");
	refl_watch_started(r, 5000);
	/* One event within 1 s: a clean end. */
	refl_watch_event(r, "101");
	refl_watch_end(r, REFL_OK, 5100);
	want_watch(r, 5100, "101");
	refl_watch_started(r, 6000);
	/* No event but 1 s long: clean too. */
	refl_watch_end(r, REFL_OK, 7000);
	want_watch(r, 7000, "101");
	assert_int_equal(refl_stats(r)->lists, 2);
	refl_free(r);
}

static void
test_opaque_rvs(void **state)
{
	struct refl *r = refl_new(3);

	(void)state;
	/* 61: non-numeric RVs pass through unchanged, never ordered. */
	want_list(r, 0, "0", 500, NULL, NULL);
	refl_list_page(r, REFL_OK, NULL, "x7", 0);
	want_watch(r, 0, "x7");
	refl_watch_started(r, 0);
	refl_watch_event(r, "a1"); /* "smaller" than x7: still taken */
	refl_watch_end(r, REFL_OK, 400000);
	want_watch(r, 400000, "a1");
	refl_watch_end(r, REFL_EXPIRED, 500000);
	want_list(r, 600000, "a1", 0, NULL, NULL);
	refl_list_page(r, REFL_OK, NULL, "zz-9", 600001);
	want_watch(r, 600001, "zz-9");
	assert_string_equal(refl_rv(r), "zz-9");
	refl_free(r);
}

static void
test_list_without_rv(void **state)
{
	struct refl *r = refl_new(3);

	(void)state;
	want_list(r, 0, "0", 500, NULL, NULL);
	assert_int_equal(
	        refl_list_page(r, REFL_OK, NULL, "", 10), REFL_LIST_RESTART);
	assert_false(refl_synced(r));
	assert_in_range(want_wait(r, 10), 800, 1599);
	refl_free(r);
}

static void
test_watch_timeouts_spread(void **state)
{
	struct refl *r = synced(0);
	int lo = 600, hi = 300, t;

	(void)state;
	for (int i = 0; i < 400; i++) {
		refl_watch_event(r, "101");
		refl_watch_end(r, REFL_OK, 2000 + i);
		t = want_watch(r, 2000 + i, "101");
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	/* Spread over the whole range (the generator is uniform). */
	assert_true(lo < 330);
	assert_true(hi > 570);
	refl_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_list_then_watch),
		cmocka_unit_test(test_pagination),
		cmocka_unit_test(test_expired_continue_full_list),
		cmocka_unit_test(test_clean_end_rewatch_no_list),
		cmocka_unit_test(test_expired_relists),
		cmocka_unit_test(test_list_expired_retries_consistent),
		cmocka_unit_test(test_watch_too_large_lists_consistent),
		cmocka_unit_test(test_watch_lost_relists),
		cmocka_unit_test(test_silent_watch_relists),
		cmocka_unit_test(test_list_failure_backoff),
		cmocka_unit_test(test_watch_errors),
		cmocka_unit_test(test_watching),
		cmocka_unit_test(test_very_short_watch),
		cmocka_unit_test(test_opaque_rvs),
		cmocka_unit_test(test_list_without_rv),
		cmocka_unit_test(test_watch_timeouts_spread),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
