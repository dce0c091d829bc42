/*
 * test_feed.c: queues to WORK (supervisor/feed.c) against a fake worker
 * pool and a fake cache: only while the fence allows, one WORK per idle
 * worker, the WORK body (object, children of child kinds only,
 * childrenStale, attempt), an absent object, a paused controller, a WORK
 * the pool refuses (its key back in the queue), parked keys coming due,
 * and no WORK before every kind of the controller has synced once.
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
#include "ipc/ipc.h"
#include "supervisor/feed.h"
#include "tests/lib/testutil.h"

static const struct ctrl_watch foo_watches[] = {
	{ "Foo", { "x.io", "v1", "foos", true }, NULL, CTRL_PRIMARY },
	{ "Bar", { "x.io", "v1", "bars", true }, "x.io/foo", CTRL_CHILD },
	{ "Baz", { "", "v1", "bazs", true }, NULL, CTRL_READ },
};
static const struct ctrl_spec foo = { "foo", foo_watches, 3, false };

#define MAXW 8

/* The fake pool, cache and fence. */
struct fake {
	int idle;         /* idle workers of "foo" */
	bool refuse;      /* dispatch fails */
	bool leading;     /* the fence */
	bool stale_child; /* kind 1 not fresh */
	bool unsynced;    /* kind 2 has not synced yet */
	int backlog;      /* results the writer holds; full at 2 */
	int nwork;
	char keys[MAXW][64];
	char *bodies[MAXW];
	int child_calls[4]; /* children() per kind */
};

static int
f_idle(void *arg, const char *controller)
{
	struct fake *f = arg;

	assert_string_equal(controller, "foo");
	return (f->idle);
}

static int
f_dispatch(void *arg, const char *controller, const char *key,
        json_object *body, int64_t now)
{
	struct fake *f = arg;

	(void)now;
	assert_string_equal(controller, "foo");
	if (f->refuse || f->nwork >= MAXW) {
		json_object_put(body);
		return (-1);
	}
	snprintf(f->keys[f->nwork], sizeof(f->keys[0]), "%s", key);
	f->bodies[f->nwork++] = strdup(
	        json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
	json_object_put(body);
	f->idle--;
	return (0);
}

/* Objects of kind 0: ns/a (uid ua) and ns/b (uid ub); ns/gone absent. */
static json_object *
f_object(void *arg, size_t kind, const char *key, char **uid)
{
	(void)arg;
	assert_int_equal(kind, 0);
	if (strcmp(key, "ns/gone") == 0) {
		return (NULL);
	}
	*uid = strdup(strcmp(key, "ns/a") == 0 ? "ua" : "ub");
	return (testutil_jsonf("{\"metadata\":{\"name\":\"%s\"}}", key + 3));
}

/* Children: kind 1 has one child of ua. */
static void
f_children(void *arg, size_t kind, const char *uid, json_object *arr)
{
	struct fake *f = arg;

	f->child_calls[kind]++;
	if (kind == 1 && strcmp(uid, "ua") == 0) {
		json_object_array_add(arr,
		        testutil_json("{\"metadata\":{\"name\":\"c1\"}}", 0));
	}
}

static bool
f_fresh(void *arg, size_t kind)
{
	struct fake *f = arg;

	return (!(kind == 1 && f->stale_child));
}

static bool
f_synced(void *arg, size_t kind)
{
	struct fake *f = arg;

	return (!(kind == 2 && f->unsynced));
}

static bool
f_may_write(void *arg, int64_t now)
{
	(void)now;
	return (((struct fake *)arg)->leading);
}

static bool
f_backlogged(void *arg)
{
	return (((struct fake *)arg)->backlog >= 2);
}

struct fx {
	struct fake fk;
	struct feed *feed;
	struct queue *q;
	bool paused;
};

static int
setup(void **state)
{
	static struct fx x;

	memset(&x, 0, sizeof(x));
	x.fk.leading = true;
	struct feed_conf c = { { f_idle, f_dispatch },
		{ f_object, f_children, f_fresh, f_synced }, f_may_write,
		f_backlogged, &x.fk };
	x.feed = feed_new(&c);
	x.q = queue_new(NULL);
	assert_int_equal(feed_add(x.feed, &foo, 0, x.q, &x.paused), 0);
	*state = &x;
	return (0);
}

static int
teardown(void **state)
{
	struct fx *x = *state;

	for (int i = 0; i < x->fk.nwork; i++) {
		free(x->fk.bodies[i]);
	}
	feed_free(x->feed);
	queue_free(x->q);
	return (0);
}

/* WORK number i, read back. */
static json_object *
work(struct fx *x, int i, struct ipc_work *w)
{
	json_object *b = testutil_json(x->fk.bodies[i], 0);
	struct ipc_msg m = { IPC_WORK, 0, b };

	assert_int_equal(ipc_work_read(&m, w), 0);
	return (b);
}

static void
test_fence_and_idle(void **state)
{
	struct fx *x = *state;

	queue_add(x->q, "ns/a", 0);
	queue_add(x->q, "ns/b", 0);
	queue_add(x->q, "ns/gone", 0);
	x->fk.idle = 2;
	x->fk.leading = false;
	feed_run(x->feed, 1);
	assert_int_equal(x->fk.nwork, 0);
	assert_int_equal(queue_len(x->q), 3);
	x->fk.leading = true;
	feed_run(x->feed, 1);
	assert_int_equal(x->fk.nwork, 2);
	assert_string_equal(x->fk.keys[0], "ns/a");
	assert_string_equal(x->fk.keys[1], "ns/b");
	assert_int_equal(queue_processing(x->q), 2);
	assert_int_equal(queue_len(x->q), 1);
	/* no idle worker: the third waits */
	feed_run(x->feed, 2);
	assert_int_equal(x->fk.nwork, 2);
}

/* A controller starts once every kind it watches has synced (a READ kind
 * too); after that, a kind that relists does not stop it. */
static void
test_waits_for_sync(void **state)
{
	struct fx *x = *state;

	queue_add(x->q, "ns/a", 0);
	queue_add(x->q, "ns/b", 0);
	x->fk.idle = 2;
	x->fk.unsynced = true;
	feed_run(x->feed, 1);
	feed_run(x->feed, 2);
	assert_int_equal(x->fk.nwork, 0);
	assert_int_equal(queue_len(x->q), 2);
	x->fk.unsynced = false;
	feed_run(x->feed, 3);
	assert_int_equal(x->fk.nwork, 2);
	x->fk.unsynced = true; /* a relist: keeps going */
	x->fk.idle = 1;
	queue_add(x->q, "ns/gone", 3);
	feed_run(x->feed, 4);
	assert_int_equal(x->fk.nwork, 3);
}

/* A backlogged writer takes no more: keys wait, in order, until it
 * drains; the check is made before every WORK. */
static void
test_backpressure(void **state)
{
	struct fx *x = *state;

	queue_add(x->q, "ns/a", 0);
	queue_add(x->q, "ns/b", 0);
	x->fk.idle = 2;
	x->fk.backlog = 2;
	feed_run(x->feed, 1);
	assert_int_equal(x->fk.nwork, 0);
	assert_int_equal(queue_len(x->q), 2);
	x->fk.backlog = 1;
	feed_run(x->feed, 1);
	assert_int_equal(x->fk.nwork, 2);
	assert_string_equal(x->fk.keys[0], "ns/a");
}

static void
test_work_body(void **state)
{
	struct fx *x = *state;
	struct ipc_work w;

	queue_add(x->q, "ns/a", 0);
	queue_add(x->q, "ns/gone", 0);
	x->fk.idle = 2;
	feed_run(x->feed, 1);
	assert_int_equal(x->fk.nwork, 2);
	json_object *b = work(x, 0, &w);
	assert_string_equal(w.key, "ns/a");
	assert_string_equal(jx_get_str(w.object, "metadata.name"), "a");
	assert_int_equal(json_object_array_length(w.children), 1);
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(w.children, 0),
	                "metadata.name"),
	        "c1");
	assert_false(w.children_stale);
	assert_int_equal(w.attempt, 0);
	assert_true(w.now_ms > 1600000000000LL); /* the real time */
	json_object_put(b);
	/* children of the child kind only, never of a kind only read */
	assert_int_equal(x->fk.child_calls[1], 1);
	assert_int_equal(x->fk.child_calls[2], 0);
	/* an absent object: null, no children asked */
	b = work(x, 1, &w);
	assert_string_equal(w.key, "ns/gone");
	assert_null(w.object);
	assert_int_equal(json_object_array_length(w.children), 0);
	assert_int_equal(x->fk.child_calls[1], 1);
	json_object_put(b);
}

static void
test_stale_and_attempt(void **state)
{
	struct fx *x = *state;
	struct ipc_work w;

	/* a key that failed twice, parked, comes due inside feed_run() */
	queue_add(x->q, "ns/b", 0);
	for (int64_t t = 0; t < 2000; t += 1000) {
		const char *k = queue_get(x->q, t, NULL);
		assert_non_null(k);
		queue_finish(x->q, k, QUEUE_ERROR, 0, t);
	}
	assert_int_equal(queue_len(x->q), 0);
	x->fk.stale_child = true;
	x->fk.idle = 1;
	feed_run(x->feed, 100000);
	assert_int_equal(x->fk.nwork, 1);
	json_object *b = work(x, 0, &w);
	assert_int_equal(w.attempt, 2);
	assert_true(w.children_stale);
	json_object_put(b);
}

static void
test_paused_and_refused(void **state)
{
	struct fx *x = *state;

	queue_add(x->q, "ns/a", 0);
	queue_add(x->q, "ns/b", 0);
	x->fk.idle = 2;
	x->paused = true;
	feed_run(x->feed, 1);
	assert_int_equal(x->fk.nwork, 0);
	assert_int_equal(queue_len(x->q), 2);
	x->paused = false;
	x->fk.refuse = true;
	feed_run(x->feed, 1);
	/* the refused key is back, queued, and the turn ended */
	assert_int_equal(x->fk.nwork, 0);
	assert_int_equal(queue_processing(x->q), 0);
	assert_int_equal(queue_len(x->q), 2);
	x->fk.refuse = false;
	feed_run(x->feed, 2);
	assert_int_equal(x->fk.nwork, 2);
	assert_string_equal(x->fk.keys[0], "ns/b");
	assert_string_equal(x->fk.keys[1], "ns/a");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_fence_and_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_waits_for_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_work_body, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_stale_and_attempt, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_paused_and_refused, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
