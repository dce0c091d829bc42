/* test_restart.c: worker restart backoff, intensity (CrashLoop), reset
 * after stable running, and the poison-key quarantine.  Injected time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "supervisor/restart.h"

/* Exits spread far apart (no intensity), never ready: pure backoff. */
static struct restart *
restart_nointensity(void)
{
	struct restart_config c;

	restart_config_default(&c);
	c.period_ms = 0;
	return (restart_new(&c));
}

/* The first restart is immediate; a first restart after stable running
 * too. */
static void
test_first_immediate(void **state)
{
	struct restart *r = restart_new(NULL);
	enum restart_state st = RESTART_CRASHLOOP;

	(void)state;
	assert_int_equal(restart_state(r, 0), RESTART_RUNNING);
	restart_on_ready(r, 0);
	assert_int_equal(restart_on_exit(r, 10, "signal 9", &st), 0);
	assert_int_equal(st, RESTART_RUNNING);
	restart_on_ready(r, 20);
	assert_int_equal(restart_on_exit(r, 30, "exit 1", &st), 100);
	assert_int_equal(st, RESTART_BACKOFF);
	assert_int_equal(restart_state(r, 31), RESTART_BACKOFF);
	restart_on_ready(r, 130);
	assert_int_equal(restart_state(r, 131), RESTART_RUNNING);
	restart_free(r);
	restart_free(NULL);
}

/* 0, 100, 200, 400, ... 25.6 s, then 30 s for ever. */
static void
test_backoff_doubling(void **state)
{
	static const int64_t want[] = { 0, 100, 200, 400, 800, 1600, 3200,
		6400, 12800, 25600, 30000, 30000, 30000 };
	struct restart *r = restart_nointensity();
	int64_t now = 0, d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		d = restart_on_exit(r, now, "exit 1", NULL);
		assert_int_equal(d, want[i]);
		/* Up but never stable: ready for 1 s each time. */
		restart_on_ready(r, now + d);
		now += d + 1000;
	}
	for (i = 0; i < 100; i++) {
		assert_int_equal(restart_on_exit(r, now, NULL, NULL), 30000);
		now += 31000;
	}
	assert_int_equal(restart_state(r, now), RESTART_BACKOFF);
	restart_free(r);
}

/* More than 5 exits in 60 s: CrashLoop at the max backoff, sticky until
 * the worker runs stable for 60 s, then back to an immediate restart. */
static void
test_intensity(void **state)
{
	struct restart *r = restart_new(NULL);
	enum restart_state st;
	int64_t now = 0, d;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		d = restart_on_exit(r, now, "signal 11", &st);
		assert_int_not_equal(st, RESTART_CRASHLOOP);
		now += d + 1;
	}
	d = restart_on_exit(r, now, "signal 11", &st); /* the 6th */
	assert_int_equal(st, RESTART_CRASHLOOP);
	assert_int_equal(d, 30000);
	/* Still retried, at the max, and still CrashLoop even once the exits
	 * are sparse. */
	for (i = 0; i < 5; i++) {
		now += d;
		restart_on_ready(r, now);
		assert_int_equal(
		        restart_state(r, now + 10), RESTART_CRASHLOOP);
		now += 45000;
		d = restart_on_exit(r, now, "signal 11", &st);
		assert_int_equal(st, RESTART_CRASHLOOP);
		assert_int_equal(d, 30000);
	}
	now += d;
	restart_on_ready(r, now);
	assert_int_equal(restart_state(r, now + 59999), RESTART_CRASHLOOP);
	assert_int_equal(restart_state(r, now + 60000), RESTART_RUNNING);
	d = restart_on_exit(r, now + 70000, "exit 3", &st);
	assert_int_equal(d, 0);
	assert_int_equal(st, RESTART_RUNNING);
	restart_free(r);
}

/* Exits more than 60 s apart never reach the intensity limit, even when
 * the worker never gets ready (but the backoff keeps growing). */
static void
test_intensity_window(void **state)
{
	struct restart *r = restart_new(NULL);
	enum restart_state st;
	int64_t now = 0;
	int i;

	(void)state;
	for (i = 0; i < 20; i++) {
		restart_on_exit(r, now, "handshake timeout", &st);
		assert_int_not_equal(st, RESTART_CRASHLOOP);
		now += 12001; /* 5 exits span 48 s, 6 span 60.005 s */
	}
	assert_int_equal(restart_on_exit(r, now, NULL, NULL), 30000);
	restart_free(r);
}

/* A worker ready for stable_ms resets the backoff; shorter runs do not. */
static void
test_stable_reset(void **state)
{
	struct restart *r = restart_nointensity();
	int64_t now = 0;

	(void)state;
	assert_int_equal(restart_on_exit(r, now, NULL, NULL), 0);
	assert_int_equal(restart_on_exit(r, now, NULL, NULL), 100);
	assert_int_equal(restart_on_exit(r, now, NULL, NULL), 200);
	restart_on_ready(r, 1000);
	assert_int_equal(restart_on_exit(r, 1000 + 59999, NULL, NULL), 400);
	restart_on_ready(r, 70000);
	assert_int_equal(restart_on_exit(r, 70000 + 60000, NULL, NULL), 0);
	assert_int_equal(restart_on_exit(r, 130001, NULL, NULL), 100);
	restart_free(r);
}

/* restart_info and the names; configuration is clamped. */
static void
test_info(void **state)
{
	struct restart_config c;
	struct restart_info in;
	struct restart *r;
	enum restart_state st;

	(void)state;
	r = restart_new(NULL);
	restart_info(r, 0, &in);
	assert_int_equal(in.restarts_total, 0);
	assert_int_equal(in.last_exit_ms, -1);
	assert_string_equal(in.last_cause, "");
	restart_on_exit(r, 5, "signal 6 (core dumped)", NULL);
	restart_on_exit(r, 6, "exit 2", NULL);
	restart_on_ready(r, 200);
	restart_info(r, 300, &in);
	assert_int_equal(in.state, RESTART_RUNNING);
	assert_int_equal(in.restarts_total, 2);
	assert_int_equal(in.consecutive, 2);
	assert_int_equal(in.last_exit_ms, 6);
	assert_int_equal(in.ready_since_ms, 200);
	assert_string_equal(in.last_cause, "exit 2");
	restart_free(r);

	assert_string_equal(restart_state_name(RESTART_RUNNING), "running");
	assert_string_equal(restart_state_name(RESTART_BACKOFF), "backoff");
	assert_string_equal(
	        restart_state_name(RESTART_CRASHLOOP), "crashloop");
	assert_string_equal(
	        restart_state_name((enum restart_state)9), "unknown");

	/* intensity 0: any exit is a CrashLoop; bad delays are clamped. */
	restart_config_default(&c);
	c.intensity = -3;
	c.initial_ms = -1;
	c.max_ms = -1;
	r = restart_new(&c);
	assert_int_equal(restart_on_exit(r, 0, NULL, &st), 1);
	assert_int_equal(st, RESTART_CRASHLOOP);
	restart_free(r);
}

/* ---- quarantine ---- */

/* A policy violation quarantines the key at once, whatever its row; a
 * RESULT ends it as any. */
static void
test_quarantine_poison(void **state)
{
	struct quarantine *q = quarantine_new(NULL);

	(void)state;
	assert_true(quarantine_key_poison(q, "ns/p", "policy violation", 100));
	assert_true(quarantine_is_quarantined(q, "ns/p", 100));
	assert_int_equal(quarantine_until(q, "ns/p"), 100 + 600000);
	assert_int_equal(quarantine_deaths(q, "ns/p"), 3);
	assert_int_equal(quarantine_count(q), 1);
	assert_false(quarantine_key_died(q, "ns/other", "signal 11", 100));
	assert_true(quarantine_key_poison(q, "ns/other", "x", 200));
	assert_int_equal(quarantine_deaths(q, "ns/other"), 3);
	assert_false(quarantine_key_poison(q, "", "x", 200));
	quarantine_key_ok(q, "ns/p");
	assert_false(quarantine_is_quarantined(q, "ns/p", 300));
	quarantine_free(q);
}

/* The third death in a row quarantines the key for 10 minutes. */
static void
test_quarantine_third(void **state)
{
	struct quarantine *q = quarantine_new(NULL);

	(void)state;
	assert_false(quarantine_key_died(q, "ns/p", "signal 11", 100));
	assert_false(quarantine_key_died(q, "ns/p", "signal 11", 200));
	assert_false(quarantine_is_quarantined(q, "ns/p", 200));
	assert_int_equal(quarantine_deaths(q, "ns/p"), 2);
	assert_int_equal(quarantine_count(q), 0);
	assert_true(quarantine_key_died(q, "ns/p", "reconcile timeout", 300));
	assert_true(quarantine_is_quarantined(q, "ns/p", 300));
	assert_int_equal(quarantine_until(q, "ns/p"), 300 + 600000);
	assert_true(quarantine_is_quarantined(q, "ns/p", 600299));
	assert_false(quarantine_is_quarantined(q, "ns/p", 600300));
	assert_int_equal(quarantine_count(q), 1);
	/* Tried again after the hold: one more death holds it again. */
	assert_true(quarantine_key_died(q, "ns/p", "signal 6", 700000));
	assert_int_equal(quarantine_until(q, "ns/p"), 1300000);
	assert_int_equal(quarantine_deaths(q, "ns/p"), 4);
	quarantine_free(q);
	quarantine_free(NULL);
}

/* A RESULT for the key breaks the row; another key's deaths do not. */
static void
test_quarantine_reset(void **state)
{
	struct quarantine *q = quarantine_new(NULL);

	(void)state;
	quarantine_key_died(q, "ns/a", "x", 1);
	quarantine_key_died(q, "ns/a", "x", 2);
	quarantine_key_ok(q, "ns/a");
	assert_int_equal(quarantine_deaths(q, "ns/a"), 0);
	assert_false(quarantine_key_died(q, "ns/a", "x", 3));
	assert_false(quarantine_key_died(q, "ns/b", "y", 4));
	assert_false(quarantine_key_died(q, "ns/b", "y", 5));
	assert_false(quarantine_key_died(q, "ns/a", "x", 6));
	assert_true(quarantine_key_died(q, "ns/a", "x", 7));
	assert_true(quarantine_key_died(q, "ns/b", "y", 8));
	assert_int_equal(quarantine_count(q), 2);
	quarantine_key_ok(q, "ns/a");
	assert_false(quarantine_is_quarantined(q, "ns/a", 9));
	assert_int_equal(quarantine_until(q, "ns/a"), -1);
	assert_true(quarantine_is_quarantined(q, "ns/b", 9));
	assert_int_equal(quarantine_count(q), 1);
	quarantine_key_ok(q, "ns/none");
	quarantine_key_ok(q, NULL);
	assert_false(quarantine_key_died(q, NULL, "z", 10));
	assert_false(quarantine_key_died(q, "", "z", 10));
	assert_false(quarantine_is_quarantined(q, NULL, 10));
	quarantine_free(q);
}

struct listing {
	char text[512];
	size_t n;
};

static void
collect(const struct quarantine_rec *rec, void *arg)
{
	struct listing *l = arg;
	size_t len = strlen(l->text);

	snprintf(l->text + len, sizeof(l->text) - len,
	        "%s:%d:%s:%lld:%lld:%lld;", rec->key, rec->deaths, rec->cause,
	        (long long)rec->first_ms, (long long)rec->since_ms,
	        (long long)rec->until_ms);
	l->n++;
}

/* The listing: quarantined keys only, in first-death order, with the
 * record of why. */
static void
test_quarantine_list(void **state)
{
	struct quarantine_config c;
	struct quarantine *q;
	struct listing l;

	(void)state;
	quarantine_config_default(&c);
	c.threshold = 2;
	c.backoff_ms = 1000;
	q = quarantine_new(&c);
	quarantine_key_died(q, "ns/b", "signal 11", 10);
	quarantine_key_died(q, "ns/a", "exit 1", 20);
	quarantine_key_died(q, "ns/c", "exit 1", 25);
	quarantine_key_died(q, "ns/a", "signal 9", 30);
	quarantine_key_died(q, "ns/b", "timeout", 40);
	quarantine_key_died(q, "ns/b", NULL, 50);
	memset(&l, 0, sizeof(l));
	quarantine_foreach(q, collect, &l);
	assert_int_equal(l.n, 2);
	assert_string_equal(
	        l.text, "ns/b:3::10:40:1050;ns/a:2:signal 9:20:30:1030;");
	quarantine_free(q);

	/* threshold < 1 counts as 1: the first death quarantines. */
	c.threshold = 0;
	c.backoff_ms = -5;
	q = quarantine_new(&c);
	assert_true(quarantine_key_died(q, "ns/x", "boom", 7));
	assert_int_equal(quarantine_until(q, "ns/x"), 7);
	assert_false(quarantine_is_quarantined(q, "ns/x", 7));
	quarantine_free(q);
}

/* Many keys come and go: records are dropped, memory stays bounded. */
static void
test_quarantine_many(void **state)
{
	struct quarantine *q = quarantine_new(NULL);
	char key[32];
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "ns/k%d", i);
		quarantine_key_died(q, key, "x", i);
		if (i % 10 != 0) {
			quarantine_key_ok(q, key);
		}
	}
	for (i = 0; i < 1000; i += 10) {
		snprintf(key, sizeof(key), "ns/k%d", i);
		assert_int_equal(quarantine_deaths(q, key), 1);
		quarantine_key_died(q, key, "x", 2000);
		assert_true(quarantine_key_died(q, key, "x", 2001));
	}
	assert_int_equal(quarantine_count(q), 100);
	quarantine_free(q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_immediate),
		cmocka_unit_test(test_backoff_doubling),
		cmocka_unit_test(test_intensity),
		cmocka_unit_test(test_intensity_window),
		cmocka_unit_test(test_stable_reset),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_quarantine_third),
		cmocka_unit_test(test_quarantine_poison),
		cmocka_unit_test(test_quarantine_reset),
		cmocka_unit_test(test_quarantine_list),
		cmocka_unit_test(test_quarantine_many),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
