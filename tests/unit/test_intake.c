/*
 * test_intake.c: watch events to queues (supervisor/intake.c) with real
 * queues and a fake cache listing: primary keys, child events mapped to
 * their controller owner (old and new), kinds only read, the lanes of
 * listed and live changes, the kind numbering of several controllers and
 * the resync of primary kinds only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/intake.h"

static const struct ctrl_watch foo_watches[] = {
	{ "Foo", { "x.io", "v1", "foos", true }, NULL, CTRL_PRIMARY },
	{ "Bar", { "x.io", "v1", "bars", true }, "x.io/foo", CTRL_CHILD },
	{ "Baz", { "", "v1", "bazs", true }, NULL, CTRL_READ },
};
static const struct ctrl_spec foo = { "foo", foo_watches, 3, false };
static const struct ctrl_watch qux_watches[] = {
	{ "Qux", { "x.io", "v1", "quxes", false }, NULL, CTRL_PRIMARY },
	{ "Bar", { "x.io", "v1", "bars", true }, "x.io/qux", CTRL_CHILD },
};
static const struct ctrl_spec qux = { "qux", qux_watches, 2, false };

struct fx {
	struct intake *in;
	struct queue *qf, *qq;
};

static int
setup(void **state)
{
	static struct fx f;

	f.in = intake_new();
	f.qf = queue_new(NULL);
	f.qq = queue_new(NULL);
	assert_int_equal(intake_add(f.in, &foo, f.qf), 0);
	assert_int_equal(intake_add(f.in, &qux, f.qq), 3);
	*state = &f;
	return (0);
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	intake_free(f->in);
	queue_free(f->qf);
	queue_free(f->qq);
	return (0);
}

/* The next key handed out by q ("" when none). */
static const char *
next(struct queue *q)
{
	static char key[128];
	const char *k = queue_get(q, 0, NULL);

	snprintf(key, sizeof(key), "%s", k != NULL ? k : "");
	if (k != NULL) {
		queue_done(q, k, 0);
	}
	return (key);
}

static void
test_primary_lanes(void **state)
{
	struct fx *f = *state;

	intake_on_change(f->in, 0, true, "ns/a", NULL, NULL, 0);
	intake_on_change(f->in, 0, false, "ns/b", NULL, NULL, 0);
	assert_int_equal(queue_lane_len(f->qf, QUEUE_LOW), 1);
	assert_int_equal(queue_lane_len(f->qf, QUEUE_HIGH), 1);
	assert_int_equal(queue_len(f->qq), 0);
	/* the live change first */
	assert_string_equal(next(f->qf), "ns/b");
	assert_string_equal(next(f->qf), "ns/a");
	/* the second controller's primary kind is kind 3, cluster-scoped */
	intake_on_change(f->in, 3, false, "top", NULL, NULL, 0);
	assert_string_equal(next(f->qq), "top");
	assert_int_equal(queue_len(f->qf), 0);
}

static void
test_child_owners(void **state)
{
	struct fx *f = *state;
	struct inf_owner o1 = { "Foo", "one", "u1" };
	struct inf_owner o2 = { "Foo", "two", "u2" };
	struct inf_owner other = { "Deployment", "three", "u3" };
	struct inf_owner noname = { "Foo", NULL, "u4" };

	/* an owner change enqueues both owners, in the child's namespace */
	intake_on_change(f->in, 1, false, "ns/child", &o1, &o2, 0);
	assert_int_equal(queue_len(f->qf), 2);
	assert_string_equal(next(f->qf), "ns/one");
	assert_string_equal(next(f->qf), "ns/two");
	/* an owner of another kind, or without a name: nothing */
	intake_on_change(f->in, 1, false, "ns/child", &other, &noname, 0);
	intake_on_change(f->in, 1, false, "ns/child", NULL, NULL, 0);
	assert_int_equal(queue_len(f->qf), 0);
	/* a cluster-scoped child: the owner's bare name */
	intake_on_change(f->in, 1, true, "child", NULL, &o1, 0);
	assert_int_equal(queue_lane_len(f->qf, QUEUE_LOW), 1);
	assert_string_equal(next(f->qf), "one");
	/* the same child kind watched for qux maps to qux's owner kind */
	struct inf_owner q = { "Qux", "top", "u5" };
	intake_on_change(f->in, 4, false, "ns/child", &o1, &q, 0);
	assert_int_equal(queue_len(f->qf), 0);
	assert_string_equal(next(f->qq), "ns/top");
}

static void
test_read_and_unknown_kinds(void **state)
{
	struct fx *f = *state;
	struct inf_owner o1 = { "Foo", "one", "u1" };

	intake_on_change(f->in, 2, false, "ns/baz", &o1, &o1, 0);
	intake_on_change(f->in, 5, false, "ns/x", &o1, &o1, 0);
	intake_on_change(f->in, 99, false, "ns/x", &o1, &o1, 0);
	assert_int_equal(queue_len(f->qf), 0);
	assert_int_equal(queue_len(f->qq), 0);
}

/* A fake cache listing: kind 0 holds a, b; kind 3 holds c; every other
 * kind would list "wrong". */
static size_t listed[8];

static void
each(void *arg, size_t kind, void (*add)(void *ctx, const char *key),
        void *ctx)
{
	(void)arg;
	listed[kind]++;
	if (kind == 0) {
		add(ctx, "ns/a");
		add(ctx, "ns/b");
	} else if (kind == 3) {
		add(ctx, "c");
	} else {
		add(ctx, "wrong");
	}
}

static void
test_resync(void **state)
{
	struct fx *f = *state;

	memset(listed, 0, sizeof(listed));
	intake_resync(f->in, each, NULL, 0);
	assert_int_equal(listed[0], 1);
	assert_int_equal(listed[3], 1);
	assert_int_equal(listed[1] + listed[2] + listed[4], 0);
	assert_int_equal(queue_lane_len(f->qf, QUEUE_LOW), 2);
	assert_int_equal(queue_lane_len(f->qq, QUEUE_LOW), 1);
	assert_string_equal(next(f->qf), "ns/a");
	assert_string_equal(next(f->qf), "ns/b");
	assert_string_equal(next(f->qq), "c");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_primary_lanes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_child_owners, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_read_and_unknown_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resync, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
