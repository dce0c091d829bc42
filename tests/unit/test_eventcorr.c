/*
 * test_eventcorr.c: the Event correlator (supervisor/events.h): stamping,
 * deduplication into count PATCHes, aggregation of similar events, the
 * spam filter's token bucket and the LRU bounds, with time as a parameter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "supervisor/events.h"

#define SEC INT64_C(1000000000)
#define MIN (60 * SEC)
#define T0  (INT64_C(1767225600) * SEC) /* 2026-01-01T00:00:00Z */

static json_object *
mkev(const char *name, const char *ns, const char *type, const char *reason,
        const char *msg)
{
	json_object *ev = json_object_new_object();
	json_object *ref = json_object_new_object();

	json_object_object_add(
	        ref, "kind", json_object_new_string("AgentRun"));
	json_object_object_add(ref, "apiVersion",
	        json_object_new_string("sympozium.ai/v1alpha1"));
	json_object_object_add(ref, "name", json_object_new_string(name));
	if (ns != NULL) {
		json_object_object_add(
		        ref, "namespace", json_object_new_string(ns));
	}
	json_object_object_add(ref, "uid", json_object_new_string("u-1"));
	json_object_object_add(ev, "involvedObject", ref);
	if (type != NULL) {
		json_object_object_add(
		        ev, "type", json_object_new_string(type));
	}
	if (reason != NULL) {
		json_object_object_add(
		        ev, "reason", json_object_new_string(reason));
	}
	json_object_object_add(ev, "message", json_object_new_string(msg));
	return (ev);
}

/* Correlates a fresh event; returns the verb, the action in *a. */
static enum ev_verb
rec(struct ev *e, int64_t now, const char *name, const char *reason,
        const char *msg, struct ev_action *a)
{
	json_object *ev = mkev(name, "default", "Normal", reason, msg);
	enum ev_verb v = ev_correlate(e, ev, now, a);

	json_object_put(ev);
	return (v);
}

static const char *
s(json_object *o, const char *path)
{
	const char *v = jx_get_str(o, path);

	return (v != NULL ? v : "");
}

static int64_t
i64(json_object *o, const char *path)
{
	int64_t v = -1;

	jx_get_int(o, path, &v);
	return (v);
}

static void
test_stamp(void **state)
{
	struct ev_conf conf = { .instance = "pod-1" };
	struct ev *e = ev_new(&conf);
	struct ev_action a;
	char want[64];

	(void)state;
	assert_int_equal(
	        rec(e, T0 + 5, "run", "Started", "go", &a), EV_CREATE);
	snprintf(want, sizeof(want), "run.%llx", (unsigned long long)(T0 + 5));
	assert_string_equal(a.name, want);
	assert_string_equal(a.ns, "default");
	assert_string_equal(s(a.event, "metadata.name"), want);
	assert_string_equal(s(a.event, "metadata.namespace"), "default");
	assert_string_equal(s(a.event, "apiVersion"), "v1");
	assert_string_equal(s(a.event, "kind"), "Event");
	assert_string_equal(s(a.event, "source.component"), EV_COMPONENT);
	assert_string_equal(s(a.event, "reportingComponent"), EV_COMPONENT);
	assert_string_equal(s(a.event, "reportingInstance"), "pod-1");
	assert_string_equal(
	        s(a.event, "firstTimestamp"), "2026-01-01T00:00:00Z");
	assert_string_equal(
	        s(a.event, "lastTimestamp"), "2026-01-01T00:00:00Z");
	assert_int_equal(i64(a.event, "count"), 1);
	assert_string_equal(s(a.event, "type"), "Normal");
	assert_string_equal(s(a.event, "reason"), "Started");
	assert_string_equal(s(a.event, "message"), "go");
	assert_string_equal(s(a.event, "involvedObject.uid"), "u-1");
	assert_null(a.patch);
	ev_action_fini(&a);
	/* Another event in the same nanosecond gets a later name. */
	assert_int_equal(rec(e, T0 + 5, "run", "Other", "x", &a), EV_CREATE);
	snprintf(want, sizeof(want), "run.%llx", (unsigned long long)(T0 + 6));
	assert_string_equal(a.name, want);
	ev_action_fini(&a);
	ev_free(e);
}

static void
test_defaults_and_bad_input(void **state)
{
	struct ev *e = ev_new(NULL);
	struct ev_action a;
	json_object *ev;
	char big[2000];

	(void)state;
	/* Cluster-scoped object: the Event goes to "default"; no type:
	 * Normal. */
	ev = mkev("node", NULL, NULL, "Hello", "m");
	assert_int_equal(ev_correlate(e, ev, T0, &a), EV_CREATE);
	assert_string_equal(a.ns, "default");
	assert_string_equal(s(a.event, "type"), "Normal");
	assert_null(jx_get(a.event, "reportingInstance"));
	ev_action_fini(&a);
	json_object_put(ev);
	/* No reason, no name, not an object: dropped with a reason. */
	ev = mkev("x", "ns", "Normal", NULL, "m");
	assert_int_equal(ev_correlate(e, ev, T0, &a), EV_DROP);
	assert_non_null(a.why);
	assert_null(a.event);
	json_object_put(ev);
	ev = mkev("", "ns", "Normal", "R", "m");
	assert_int_equal(ev_correlate(e, ev, T0, &a), EV_DROP);
	json_object_put(ev);
	ev = json_object_new_array();
	assert_int_equal(ev_correlate(e, ev, T0, &a), EV_DROP);
	json_object_put(ev);
	/* A long message is cut to 1024 bytes on a UTF-8 boundary. */
	memset(big, 'a', sizeof(big));
	memcpy(big + 1023, "\xc3\xa9", 2); /* bytes 1023-1024: must go */
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(rec(e, T0, "run", "Long", big, &a), EV_CREATE);
	assert_int_equal(strlen(s(a.event, "message")), 1023);
	ev_action_fini(&a);
	ev_free(e);
}

static void
test_dedupe(void **state)
{
	struct ev *e = ev_new(NULL);
	struct ev_action a;
	char first[64];

	(void)state;
	assert_int_equal(rec(e, T0, "run", "Failed", "boom", &a), EV_CREATE);
	snprintf(first, sizeof(first), "%s", a.name);
	ev_action_fini(&a);
	for (int i = 2; i <= 5; i++) {
		assert_int_equal(
		        rec(e, T0 + i * SEC, "run", "Failed", "boom", &a),
		        EV_PATCH);
		assert_string_equal(a.name, first);
		assert_string_equal(a.ns, "default");
		assert_int_equal(i64(a.patch, "count"), i);
		assert_string_equal(s(a.patch, "message"), "boom");
		assert_int_equal(json_object_object_length(a.patch), 3);
		/* The whole event, for a create when the Event is gone. */
		assert_int_equal(i64(a.event, "count"), i);
		assert_string_equal(
		        s(a.event, "firstTimestamp"), "2026-01-01T00:00:00Z");
		ev_action_fini(&a);
	}
	assert_int_equal(
	        rec(e, T0 + 5 * SEC, "run", "Failed", "boom", &a), EV_PATCH);
	assert_string_equal(
	        s(a.patch, "lastTimestamp"), "2026-01-01T00:00:05Z");
	ev_action_fini(&a);
	/* Another message, reason or object is another Event. */
	assert_int_equal(rec(e, T0, "run", "Failed", "other", &a), EV_CREATE);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0, "run", "Started", "boom", &a), EV_CREATE);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0, "run2", "Failed", "boom", &a), EV_CREATE);
	ev_action_fini(&a);
	ev_free(e);
}

static void
test_aggregate(void **state)
{
	struct ev *e = ev_new(NULL);
	struct ev_action a;
	char msg[32], agg[64];
	struct ev_stats st;

	(void)state;
	for (int i = 1; i <= EV_MAX_SIMILAR - 1; i++) {
		snprintf(msg, sizeof(msg), "m%d", i);
		assert_int_equal(rec(e, T0 + i * SEC, "run", "Retry", msg, &a),
		        EV_CREATE);
		assert_string_equal(s(a.event, "message"), msg);
		ev_action_fini(&a);
	}
	/* The 10th distinct message in 10 minutes: one aggregate event. */
	assert_int_equal(
	        rec(e, T0 + 10 * SEC, "run", "Retry", "m10", &a), EV_CREATE);
	assert_string_equal(
	        s(a.event, "message"), "(combined from similar events): m10");
	snprintf(agg, sizeof(agg), "%s", a.name);
	ev_action_fini(&a);
	/* Later similar ones count on the aggregate. */
	for (int i = 11; i <= 13; i++) {
		snprintf(msg, sizeof(msg), "m%d", i);
		assert_int_equal(rec(e, T0 + i * SEC, "run", "Retry", msg, &a),
		        EV_PATCH);
		assert_string_equal(a.name, agg);
		assert_int_equal(i64(a.patch, "count"), i - 9);
		assert_string_equal(
		        s(a.patch, "message") + strlen(EV_AGGREGATE_PREFIX),
		        msg);
		ev_action_fini(&a);
	}
	/* A message still in the similar set is deduplicated on its own
	 * Event (as client-go does: the set did not grow). */
	assert_int_equal(
	        rec(e, T0 + 14 * SEC, "run", "Retry", "m1", &a), EV_PATCH);
	assert_string_not_equal(a.name, agg);
	assert_int_equal(i64(a.patch, "count"), 2);
	assert_string_equal(s(a.patch, "message"), "m1");
	ev_action_fini(&a);
	ev_stats(e, &st);
	assert_int_equal(st.aggregated, 4);
	/* Ten minutes of quiet: the window restarts, messages are their
	 * own again. */
	assert_int_equal(
	        rec(e, T0 + 14 * SEC + 11 * MIN, "run", "Retry", "new", &a),
	        EV_CREATE);
	assert_string_equal(s(a.event, "message"), "new");
	ev_action_fini(&a);
	/* Other reasons on the object are not aggregated with these. */
	assert_int_equal(
	        rec(e, T0 + 15 * SEC, "run", "Else", "m11", &a), EV_CREATE);
	assert_string_equal(s(a.event, "message"), "m11");
	ev_action_fini(&a);
	ev_free(e);
}

static void
test_spam(void **state)
{
	struct ev *e = ev_new(NULL);
	struct ev_action a;
	char reason[32];
	struct ev_stats st;

	(void)state;
	/* Burst 25 per object, whatever the reason or message. */
	for (int i = 0; i < EV_SPAM_BURST; i++) {
		snprintf(reason, sizeof(reason), "R%d", i);
		assert_int_equal(
		        rec(e, T0, "run", reason, "m", &a), EV_CREATE);
		ev_action_fini(&a);
	}
	assert_int_equal(rec(e, T0, "run", "R99", "m", &a), EV_DROP);
	assert_non_null(strstr(a.why, "spam"));
	assert_int_equal(rec(e, T0 + 4 * MIN, "run", "R98", "m", &a), EV_DROP);
	/* Identical events are limited too (the count still grows). */
	assert_int_equal(rec(e, T0 + 4 * MIN, "run", "R0", "m", &a), EV_DROP);
	/* Another object has its own bucket. */
	assert_int_equal(rec(e, T0, "other", "R0", "m", &a), EV_CREATE);
	ev_action_fini(&a);
	/* One token back every 5 minutes. */
	assert_int_equal(rec(e, T0 + 5 * MIN, "run", "R0", "m", &a), EV_PATCH);
	assert_int_equal(i64(a.patch, "count"), 3);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0 + 5 * MIN, "run", "R0", "m", &a), EV_DROP);
	/* Hours refill the burst, no more. */
	for (int i = 0; i < EV_SPAM_BURST; i++) {
		assert_int_equal(rec(e, T0 + 300 * MIN, "run", "R1", "m", &a),
		        EV_PATCH);
		ev_action_fini(&a);
	}
	assert_int_equal(
	        rec(e, T0 + 300 * MIN, "run", "R1", "m", &a), EV_DROP);
	ev_stats(e, &st);
	assert_int_equal(st.dropped, 5);
	assert_int_equal(st.created, EV_SPAM_BURST + 1);
	assert_int_equal(st.patched, EV_SPAM_BURST + 1);
	ev_free(e);
}

/* Records reused in place after eviction keep their chains right, and a
 * recorded Event's name and firstTimestamp come back exactly (the cache
 * keeps neither as text). */
static void
test_lru_reuse(void **state)
{
	struct ev_conf conf = { .cache_size = 8 };
	struct ev *e = ev_new(&conf);
	struct ev_action a;
	char name[16], first[80], second[80];

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 40; i++) {
			snprintf(name, sizeof(name), "c%d", i);
			assert_int_equal(
			        rec(e, T0, name, "R", "m", &a), EV_CREATE);
			ev_action_fini(&a);
		}
		/* the last 8 are known, the one before is not */
		for (int i = 39; i >= 32; i--) {
			snprintf(name, sizeof(name), "c%d", i);
			assert_int_equal(
			        rec(e, T0, name, "R", "m", &a), EV_PATCH);
			ev_action_fini(&a);
		}
		assert_int_equal(rec(e, T0, "c31", "R", "m", &a), EV_CREATE);
		ev_action_fini(&a);
	}
	ev_free(e);
	/* two events in one tick: the second's name is a nanosecond on */
	e = ev_new(NULL);
	assert_int_equal(rec(e, T0, "x", "A", "m", &a), EV_CREATE);
	snprintf(first, sizeof(first), "%s", a.name);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0, "x", "B", "m", &a), EV_CREATE);
	snprintf(second, sizeof(second), "%s", a.name);
	ev_action_fini(&a);
	assert_string_not_equal(first, second);
	assert_int_equal(rec(e, T0 + 7 * SEC, "x", "B", "m", &a), EV_PATCH);
	assert_string_equal(a.name, second);
	assert_string_equal(s(a.event, "metadata.name"), second);
	assert_string_equal(
	        s(a.event, "firstTimestamp"), "2026-01-01T00:00:00Z");
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0 + 9 * SEC, "x", "A", "m", &a), EV_PATCH);
	assert_string_equal(a.name, first);
	ev_action_fini(&a);
	ev_free(e);
}

static void
test_lru_bound(void **state)
{
	struct ev_conf conf = { .cache_size = 4 };
	struct ev *e = ev_new(&conf);
	struct ev_action a;
	struct ev_stats st;
	char name[16];

	(void)state;
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "o%d", i);
		assert_int_equal(rec(e, T0, name, "R", "m", &a), EV_CREATE);
		ev_action_fini(&a);
	}
	/* Touch o0: now o1 is the least recently used. */
	assert_int_equal(rec(e, T0, "o0", "R", "m", &a), EV_PATCH);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0, "o4", "R", "m", &a), EV_CREATE);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0, "o0", "R", "m", &a), EV_PATCH);
	ev_action_fini(&a);
	assert_int_equal(rec(e, T0, "o1", "R", "m", &a), EV_CREATE);
	ev_action_fini(&a);
	/* Many more: every cache stays at its bound. */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(rec(e, T0, name, "R", "m", &a), EV_CREATE);
		ev_action_fini(&a);
	}
	ev_stats(e, &st);
	assert_int_equal(st.similar_entries, 4);
	assert_int_equal(st.log_entries, 4);
	assert_int_equal(st.spam_entries, 4);
	ev_free(e);
	/* The default bound is client-go's. */
	e = ev_new(NULL);
	for (int i = 0; i < EV_CACHE_SIZE + 100; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		rec(e, T0, name, "R", "m", &a);
		ev_action_fini(&a);
	}
	ev_stats(e, &st);
	assert_int_equal(st.log_entries, EV_CACHE_SIZE);
	assert_int_equal(st.spam_entries, EV_CACHE_SIZE);
	ev_free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_defaults_and_bad_input),
		cmocka_unit_test(test_dedupe),
		cmocka_unit_test(test_aggregate),
		cmocka_unit_test(test_spam),
		cmocka_unit_test(test_lru_bound),
		cmocka_unit_test(test_lru_reuse),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
