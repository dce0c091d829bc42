/* test_kstore.c: kubesim's object store (kubesim/kstore.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "kubesim/kstore.h"
#include "tests/lib/testutil.h"

/* {"metadata":{"name":name},"v":v} */
static json_object *
O(const char *name, int v)
{
	json_object *o = json_object_new_object();
	json_object *md = json_object_new_object();

	json_object_object_add(md, "name", json_object_new_string(name));
	json_object_object_add(o, "metadata", md);
	json_object_object_add(o, "v", json_object_new_int(v));
	return (o);
}

static struct kitem *
put(struct kstore *st, struct kstore_coll *c, const char *key, int v)
{
	return (kstore_put(st, c, key, O(key, v)));
}

static const char *
rvstr(const struct kitem *it)
{
	return (jx_get_str(it->obj, "metadata.resourceVersion"));
}

/* "key:v,key:v" for kstore_list(c, prefix, rv); "ERR" when it fails. */
static char *
list_str(struct kstore *st, struct kstore_coll *c, const char *prefix,
        uint64_t rv)
{
	struct kitem **items = NULL;
	size_t n = 0;
	struct buf b;
	int64_t v;

	if (kstore_list(st, c, prefix, rv, &items, &n) != 0) {
		return (strdup("ERR"));
	}
	buf_init(&b);
	buf_puts(&b, "");
	for (size_t i = 0; i < n; i++) {
		v = -1;
		jx_get_int(items[i]->obj, "v", &v);
		buf_printf(&b, "%s%s:%lld", i != 0 ? "," : "", items[i]->key,
		        (long long)v);
		kitem_unref(items[i]);
	}
	free(items);
	return (buf_detach(&b, NULL));
}

#define CHECK_LIST(st, c, prefix, rv, want)                                   \
	do {                                                                  \
		char *got_ = list_str((st), (c), (prefix), (rv));             \
		assert_string_equal(got_, (want));                            \
		free(got_);                                                   \
	} while (0)

static void
test_put_get_replace(void **state)
{
	struct kstore *st = kstore_new(16, 100);
	struct kstore_coll *c;
	struct kitem *it, *got;

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	assert_int_equal(kstore_rv(st), 100);
	assert_null(kstore_get(c, "ns/a"));
	it = kstore_put(st, c, "ns/a",
	        testutil_json("{\"metadata\":{\"name\":\"a/b\"},\"v\":1}", 0));
	assert_non_null(it);
	assert_int_equal(it->rv, 101);
	assert_int_equal(it->refs, 2); /* collection and event */
	assert_string_equal(it->key, "ns/a");
	assert_string_equal(it->json,
	        "{\"metadata\":{\"name\":\"a/b\",\"resourceVersion\":\"101\"},"
	        "\"v\":1}");
	assert_int_equal(it->len, strlen(it->json));
	got = kstore_get(c, "ns/a");
	assert_ptr_equal(got, it);
	assert_int_equal(kstore_coll_count(c), 1);

	it = put(st, c, "ns/a", 2);
	assert_int_equal(it->rv, 102);
	got = kstore_get(c, "ns/a");
	assert_ptr_equal(got, it);
	assert_string_equal(rvstr(got), "102");
	assert_int_equal(kstore_coll_count(c), 1);
	assert_null(kstore_get(c, "ns/b"));
	assert_null(kstore_get(c, "ns/"));
	assert_null(kstore_get(c, "ns/aa"));
	CHECK_LIST(st, c, NULL, 0, "ns/a:2");
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_rv_metadata(void **state)
{
	struct kstore *st = kstore_new(16, 0);
	struct kstore_coll *c;
	struct kitem *it;

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/configmaps", true);
	for (int i = 1; i <= 5; i++) {
		it = put(st, c, "k", i);
		assert_int_equal(it->rv, (uint64_t)i);
		assert_int_equal(kstore_rv(st), (uint64_t)i);
	}
	assert_string_equal(rvstr(kstore_get(c, "k")), "5");
	/* Missing metadata is created. */
	it = kstore_put(st, c, "m", testutil_json("{\"x\":1}", 0));
	assert_string_equal(it->json,
	        "{\"x\":1,\"metadata\":"
	        "{\"resourceVersion\":\"6\"}}");
	/* A non-object metadata is replaced; a stale rv is overwritten. */
	it = kstore_put(st, c, "m", testutil_json("{\"metadata\":3}", 0));
	assert_string_equal(
	        it->json, "{\"metadata\":{\"resourceVersion\":\"7\"}}");
	it = kstore_put(st, c, "m",
	        testutil_json(
	                "{\"metadata\":{\"resourceVersion\":\"x\"}}", 0));
	assert_string_equal(rvstr(it), "8");
	/* A non-object is stored as is (no crash). */
	it = kstore_put(st, c, "arr", testutil_json("[1,2]", 0));
	assert_string_equal(it->json, "[1,2]");
	assert_int_equal(it->rv, 9);
	assert_int_equal(kstore_delete(st, c, "arr"), 10);
	assert_int_equal(kstore_rv(st), 10);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_delete(void **state)
{
	struct kstore *st = kstore_new(16, 10);
	struct kstore_coll *c;
	struct kstore_ev ev[4];

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	put(st, c, "ns/a", 1);
	put(st, c, "ns/b", 2);
	put(st, c, "ns/a", 3);
	assert_int_equal(kstore_rv(st), 13);
	assert_int_equal(kstore_delete(st, c, "ns/c"), 0);
	assert_int_equal(kstore_rv(st), 13);
	assert_int_equal(kstore_delete(st, c, "ns/a"), 14);
	assert_int_equal(kstore_rv(st), 14);
	assert_null(kstore_get(c, "ns/a"));
	assert_int_equal(kstore_coll_count(c), 1);
	assert_int_equal(kstore_delete(st, c, "ns/a"), 0);
	CHECK_LIST(st, c, NULL, 0, "ns/b:2");

	assert_int_equal(kstore_events(st, 13, ev, 4), 1);
	assert_int_equal(ev[0].rv, 14);
	assert_int_equal(ev[0].type, KSTORE_DELETED);
	assert_ptr_equal(ev[0].coll, c);
	assert_int_equal(ev[0].new->rv, 14);
	assert_string_equal(ev[0].new->key, "ns/a");
	assert_string_equal(rvstr(ev[0].new), "14");
	assert_int_equal(ev[0].old->rv, 13);
	assert_string_equal(ev[0].old->key, "ns/a");
	assert_string_equal(rvstr(ev[0].old), "13");
	assert_string_equal(ev[0].new->json,
	        "{\"metadata\":{\"name\":\"ns/a\",\"resourceVersion\":\"14\"},"
	        "\"v\":3}");
	assert_string_equal(ev[0].old->json,
	        "{\"metadata\":{\"name\":\"ns/a\",\"resourceVersion\":\"13\"},"
	        "\"v\":3}");
	kstore_ev_release(&ev[0]);
	assert_null(ev[0].old);
	assert_null(ev[0].new);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_list_order_prefix(void **state)
{
	struct kstore *st = kstore_new(64, 0);
	struct kstore_coll *c;
	struct kitem **items;
	size_t n;

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/secrets", true);
	put(st, c, "a/x", 1);
	put(st, c, "a-b/y", 2);
	put(st, c, "b/z", 3);
	put(st, c, "a/b", 4);
	put(st, c, "a-b/a", 5);
	put(st, c, "a", 6);
	put(st, c, "A/q", 7);
	put(st, c, "a/\xc3\xa9", 8);
	CHECK_LIST(st, c, NULL, 0,
	        "A/q:7,a:6,a-b/a:5,a-b/y:2,a/b:4,a/x:1,a/\xc3\xa9:8,b/z:3");
	CHECK_LIST(st, c, "", 0,
	        "A/q:7,a:6,a-b/a:5,a-b/y:2,a/b:4,a/x:1,a/\xc3\xa9:8,b/z:3");
	CHECK_LIST(st, c, "a/", 0, "a/b:4,a/x:1,a/\xc3\xa9:8");
	CHECK_LIST(st, c, "a-b/", 0, "a-b/a:5,a-b/y:2");
	CHECK_LIST(st, c, "b/", 0, "b/z:3");
	CHECK_LIST(
	        st, c, "a", 0, "a:6,a-b/a:5,a-b/y:2,a/b:4,a/x:1,a/\xc3\xa9:8");
	CHECK_LIST(st, c, "zz/", 0, "");
	CHECK_LIST(st, c, "0/", 0, "");
	/* The same prefixes answered at a past rv. */
	CHECK_LIST(st, c, "a/", 5, "a/b:4,a/x:1");
	CHECK_LIST(st, c, "a-b/", 4, "a-b/y:2");

	items = (struct kitem **)1;
	n = 99;
	assert_int_equal(kstore_list(st, c, "zz/", 0, &items, &n), 0);
	assert_int_equal(n, 0);
	free(items);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_list_past(void **state)
{
	struct kstore *st = kstore_new(64, 100);
	struct kstore_coll *c, *o;

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	o = kstore_coll(st, "apps/deployments", true);
	put(st, c, "n/a", 1);        /* 101 */
	put(st, c, "n/b", 1);        /* 102 */
	put(st, o, "n/a", 9);        /* 103 other collection */
	put(st, c, "n/a", 2);        /* 104 */
	kstore_delete(st, c, "n/b"); /* 105 */
	put(st, c, "m/c", 1);        /* 106 */
	put(st, c, "n/b", 3);        /* 107 re-created */
	kstore_delete(st, c, "n/a"); /* 108 */
	put(st, o, "n/z", 9);        /* 109 */
	put(st, c, "n/b", 4);        /* 110 */

	CHECK_LIST(st, c, NULL, 100, "");
	CHECK_LIST(st, c, NULL, 101, "n/a:1");
	CHECK_LIST(st, c, NULL, 102, "n/a:1,n/b:1");
	CHECK_LIST(st, c, NULL, 103, "n/a:1,n/b:1");
	CHECK_LIST(st, c, NULL, 104, "n/a:2,n/b:1");
	CHECK_LIST(st, c, NULL, 105, "n/a:2");
	CHECK_LIST(st, c, NULL, 106, "m/c:1,n/a:2");
	CHECK_LIST(st, c, NULL, 107, "m/c:1,n/a:2,n/b:3");
	CHECK_LIST(st, c, NULL, 108, "m/c:1,n/b:3");
	CHECK_LIST(st, c, NULL, 109, "m/c:1,n/b:3");
	CHECK_LIST(st, c, NULL, 110, "m/c:1,n/b:4");
	CHECK_LIST(st, c, NULL, 0, "m/c:1,n/b:4");
	CHECK_LIST(st, c, "n/", 104, "n/a:2,n/b:1");
	CHECK_LIST(st, c, "m/", 105, "");
	CHECK_LIST(st, c, "m/", 106, "m/c:1");
	CHECK_LIST(st, o, NULL, 102, "");
	CHECK_LIST(st, o, NULL, 108, "n/a:9");
	CHECK_LIST(st, o, NULL, 0, "n/a:9,n/z:9");
	/* Past lists do not change the store. */
	CHECK_LIST(st, c, NULL, 0, "m/c:1,n/b:4");
	assert_int_equal(kstore_coll_count(c), 2);
	assert_int_equal(kstore_rv(st), 110);

	/* The past items are the exact states, with their own rv. */
	{
		struct kitem **items;
		size_t n;

		assert_int_equal(kstore_list(st, c, NULL, 104, &items, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(items[0]->rv, 104);
		assert_string_equal(rvstr(items[0]), "104");
		assert_int_equal(items[1]->rv, 102);
		assert_string_equal(rvstr(items[1]), "102");
		for (size_t i = 0; i < n; i++) {
			kitem_unref(items[i]);
		}
		free(items);
	}
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_list_bounds(void **state)
{
	struct kstore *st = kstore_new(4, 100);
	struct kstore_coll *c;
	struct kitem **items = NULL;
	size_t n = 7;

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	/* A fresh store answers at first_rv only. */
	CHECK_LIST(st, c, NULL, 100, "");
	CHECK_LIST(st, c, NULL, 99, "ERR");
	CHECK_LIST(st, c, NULL, 101, "ERR");
	CHECK_LIST(st, c, NULL, 0, "");
	for (int i = 1; i <= 10; i++) {
		put(st, c, "k", i);
	}
	assert_int_equal(kstore_rv(st), 110);
	assert_int_equal(kstore_oldest_rv(st), 106);
	CHECK_LIST(st, c, NULL, 105, "ERR");
	CHECK_LIST(st, c, NULL, 106, "k:6");
	CHECK_LIST(st, c, NULL, 108, "k:8");
	CHECK_LIST(st, c, NULL, 110, "k:10");
	CHECK_LIST(st, c, NULL, 111, "ERR");
	CHECK_LIST(st, c, NULL, 0, "k:10");
	/* Nothing is stored on failure. */
	assert_int_equal(kstore_list(st, c, NULL, 1, &items, &n), -1);
	assert_null(items);
	assert_int_equal(n, 7);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_ring_overflow(void **state)
{
	struct kstore *st = kstore_new(3, 0);
	struct kstore_coll *c;
	struct kstore_ev ev[8];

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	assert_int_equal(kstore_oldest_rv(st), 0);
	assert_int_equal(kstore_events(st, 0, ev, 8), 0);
	for (int i = 1; i <= 5; i++) {
		put(st, c, "k", i);
	}
	assert_int_equal(kstore_oldest_rv(st), 2);
	assert_int_equal(kstore_events(st, 0, ev, 8), -1);
	assert_int_equal(kstore_events(st, 1, ev, 8), -1);
	assert_int_equal(kstore_events(st, 2, ev, 8), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ev[i].rv, 3 + i);
		assert_int_equal(ev[i].type, KSTORE_MODIFIED);
		assert_int_equal(ev[i].new->rv, 3 + i);
		assert_int_equal(ev[i].old->rv, 2 + i);
		kstore_ev_release(&ev[i]);
	}
	/* max limits the copy; a position at or past now gives 0. */
	assert_int_equal(kstore_events(st, 2, ev, 2), 2);
	assert_int_equal(ev[1].rv, 4);
	kstore_ev_release(&ev[0]);
	kstore_ev_release(&ev[1]);
	assert_int_equal(kstore_events(st, 4, ev, 8), 1);
	assert_int_equal(ev[0].rv, 5);
	kstore_ev_release(&ev[0]);
	assert_int_equal(kstore_events(st, 5, ev, 8), 0);
	assert_int_equal(kstore_events(st, 9, ev, 8), 0);
	assert_int_equal(kstore_events(st, 2, ev, 0), 0);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_history_zero(void **state)
{
	struct kstore *st = kstore_new(0, 0);
	struct kstore_coll *c;
	struct kstore_ev ev[2];

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	put(st, c, "a", 1);
	put(st, c, "b", 2);
	assert_int_equal(kstore_oldest_rv(st), 1);
	assert_int_equal(kstore_events(st, 0, ev, 2), -1);
	assert_int_equal(kstore_events(st, 1, ev, 2), 1);
	assert_int_equal(ev[0].type, KSTORE_ADDED);
	assert_string_equal(ev[0].new->key, "b");
	kstore_ev_release(&ev[0]);
	CHECK_LIST(st, c, NULL, 1, "a:1");
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_events_order(void **state)
{
	struct kstore *st = kstore_new(16, 50);
	struct kstore_coll *c, *o;
	struct kitem *a1, *a2, *b1;
	struct kstore_ev ev[8];

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	o = kstore_coll(st, "/services", true);
	a1 = kitem_ref(put(st, c, "a", 1));
	b1 = kitem_ref(put(st, o, "b", 1));
	a2 = kitem_ref(put(st, c, "a", 2));
	kstore_delete(st, c, "a");
	assert_int_equal(kstore_events(st, 50, ev, 8), 4);
	assert_int_equal(ev[0].type, KSTORE_ADDED);
	assert_int_equal(ev[0].rv, 51);
	assert_ptr_equal(ev[0].coll, c);
	assert_null(ev[0].old);
	assert_ptr_equal(ev[0].new, a1);
	assert_int_equal(ev[1].type, KSTORE_ADDED);
	assert_ptr_equal(ev[1].coll, o);
	assert_ptr_equal(ev[1].new, b1);
	assert_int_equal(ev[2].type, KSTORE_MODIFIED);
	assert_int_equal(ev[2].rv, 53);
	assert_ptr_equal(ev[2].old, a1);
	assert_ptr_equal(ev[2].new, a2);
	assert_int_equal(ev[3].type, KSTORE_DELETED);
	assert_int_equal(ev[3].rv, 54);
	assert_ptr_equal(ev[3].old, a2);
	assert_int_equal(ev[3].new->rv, 54);
	/* a1: ours, ring ADDED.new, ring MODIFIED.old, our copy of both. */
	assert_int_equal(a1->refs, 5);
	/* a2: ours, ring MODIFIED.new and DELETED.old, ev[2].new, ev[3].old */
	assert_int_equal(a2->refs, 5);
	for (int i = 0; i < 4; i++) {
		kstore_ev_release(&ev[i]);
	}
	assert_int_equal(a1->refs, 3);
	assert_int_equal(a2->refs, 3);
	kstore_compact(st);
	assert_int_equal(a1->refs, 1);
	assert_int_equal(a2->refs, 1);
	assert_int_equal(b1->refs, 2); /* ours and the collection's */
	kitem_unref(a1);
	kitem_unref(a2);
	kitem_unref(b1);
	kitem_unref(NULL);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_compact(void **state)
{
	struct kstore *st = kstore_new(16, 0);
	struct kstore_coll *c;
	struct kstore_ev ev[4];

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	put(st, c, "a", 1);
	put(st, c, "b", 1);
	put(st, c, "a", 2);
	kstore_compact(st);
	assert_int_equal(kstore_rv(st), 3);
	assert_int_equal(kstore_oldest_rv(st), 3);
	assert_int_equal(kstore_events(st, 2, ev, 4), -1);
	assert_int_equal(kstore_events(st, 3, ev, 4), 0);
	CHECK_LIST(st, c, NULL, 2, "ERR");
	CHECK_LIST(st, c, NULL, 3, "a:2,b:1");
	CHECK_LIST(st, c, NULL, 0, "a:2,b:1");
	kstore_compact(st); /* twice is fine */
	assert_int_equal(kstore_delete(st, c, "b"), 4);
	assert_int_equal(kstore_events(st, 3, ev, 4), 1);
	assert_int_equal(ev[0].type, KSTORE_DELETED);
	kstore_ev_release(&ev[0]);
	CHECK_LIST(st, c, NULL, 3, "a:2,b:1");
	CHECK_LIST(st, c, NULL, 4, "a:2");
	kstore_unlock(st);
	kstore_free(st);
}

struct writer {
	struct kstore *st;
	struct kstore_coll *c;
	int n;
};

static void *
writer_main(void *arg)
{
	struct writer *w = arg;

	for (int i = 0; i < w->n; i++) {
		kstore_lock(w->st);
		put(w->st, w->c, "w", i);
		kstore_unlock(w->st);
	}
	return (NULL);
}

static void *
kicker_main(void *arg)
{
	kstore_kick(arg);
	return (NULL);
}

static void
test_wait_write(void **state)
{
	struct kstore *st = kstore_new(16, 0);
	struct writer w = { st, NULL, 1 };
	pthread_t t;
	uint64_t epoch;

	(void)state;
	kstore_lock(st);
	w.c = kstore_coll(st, "/pods", true);
	epoch = kstore_epoch(st);
	kstore_unlock(st);
	assert_int_equal(pthread_create(&t, NULL, writer_main, &w), 0);
	assert_int_equal(
	        kstore_wait(st, 0, &epoch, timefmt_now_ms_mono() + 10000), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	/* No deadline: returns at once because events are ready. */
	assert_int_equal(kstore_wait(st, 0, &epoch, 0), 1);
	assert_int_equal(epoch, 0);
	/* Without a deadline, woken by a later write. */
	assert_int_equal(pthread_create(&t, NULL, writer_main, &w), 0);
	assert_int_equal(kstore_wait(st, 1, &epoch, 0), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	kstore_lock(st);
	assert_int_equal(kstore_rv(st), 2);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_wait_deadline(void **state)
{
	struct kstore *st = kstore_new(16, 7);
	uint64_t epoch = 0;
	int64_t t0 = timefmt_now_ms_mono();

	(void)state;
	assert_int_equal(kstore_wait(st, 7, &epoch, t0 + 60), 0);
	assert_true(timefmt_now_ms_mono() - t0 >= 60);
	assert_int_equal(kstore_wait(st, 7, &epoch, t0 - 1000), 0);
	assert_int_equal(kstore_wait(st, 7, &epoch, -5), 0);
	assert_int_equal(epoch, 0);
	/* Ready events win over a passed deadline. */
	assert_int_equal(kstore_wait(st, 6, &epoch, t0 - 1000), 1);
	kstore_free(st);
}

static void
test_wait_kick(void **state)
{
	struct kstore *st = kstore_new(16, 0);
	pthread_t t;
	uint64_t epoch, e2;

	(void)state;
	kstore_lock(st);
	epoch = kstore_epoch(st);
	kstore_unlock(st);
	e2 = epoch;
	assert_int_equal(pthread_create(&t, NULL, kicker_main, st), 0);
	assert_int_equal(kstore_wait(st, 0, &epoch, 0), 2);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(epoch, e2 + 1);
	kstore_lock(st);
	assert_int_equal(kstore_epoch(st), epoch);
	kstore_unlock(st);
	/* The kick was consumed: next wait times out. */
	assert_int_equal(
	        kstore_wait(st, 0, &epoch, timefmt_now_ms_mono() + 20), 0);
	/* A stale copy returns 2 at once, even past its deadline. */
	assert_int_equal(kstore_wait(st, 0, &e2, 1), 2);
	assert_int_equal(e2, epoch);
	kstore_free(st);
}

static void
test_refs_survive(void **state)
{
	struct kstore *st = kstore_new(2, 0);
	struct kstore_coll *c;
	struct kitem *held;
	char *want;

	(void)state;
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	held = kitem_ref(put(st, c, "ns/a", 1));
	want = strdup(held->json);
	kstore_unlock(st);

	kstore_lock(st);
	put(st, c, "ns/a", 2);
	put(st, c, "ns/a", 3);
	put(st, c, "ns/a", 4);
	kstore_delete(st, c, "ns/a");
	kstore_compact(st);
	kstore_unlock(st);
	/* Only our reference is left; json is intact after unlocking. */
	assert_int_equal(held->refs, 1);
	assert_string_equal(held->json, want);
	assert_int_equal(held->len, strlen(want));
	assert_int_equal(held->rv, 1);
	kstore_free(st);
	assert_string_equal(held->json, want);
	kitem_unref(held);
	free(want);
}

/* A reader keeps references and reads json unlocked while a writer
 * replaces the item (for ASan/TSan). */
static void
test_refs_concurrent(void **state)
{
	struct kstore *st = kstore_new(8, 0);
	struct writer w = { st, NULL, 2000 };
	pthread_t t;
	size_t total = 0;

	(void)state;
	kstore_lock(st);
	w.c = kstore_coll(st, "/pods", true);
	put(st, w.c, "w", -1);
	kstore_unlock(st);
	assert_int_equal(pthread_create(&t, NULL, writer_main, &w), 0);
	for (int i = 0; i < 2000; i++) {
		struct kitem *it;

		kstore_lock(st);
		it = kitem_ref(kstore_get(w.c, "w"));
		kstore_unlock(st);
		assert_non_null(it);
		assert_int_equal(strlen(it->json), it->len);
		assert_non_null(strstr(it->json, "\"resourceVersion\""));
		total += it->len;
		kitem_unref(it);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(total > 0);
	kstore_lock(st);
	assert_int_equal(kstore_rv(st), 2001);
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_collections(void **state)
{
	struct kstore *st = kstore_new(16, 0);
	struct kstore_coll *p, *d, *again;

	(void)state;
	kstore_lock(st);
	assert_null(kstore_coll(st, "/pods", false));
	p = kstore_coll(st, "/pods", true);
	d = kstore_coll(st, "apps/deployments", true);
	assert_non_null(p);
	assert_non_null(d);
	assert_ptr_not_equal(p, d);
	for (int i = 0; i < 40; i++) {
		char name[32];

		snprintf(name, sizeof(name), "g%d/things", i);
		assert_non_null(kstore_coll(st, name, true));
	}
	again = kstore_coll(st, "/pods", false);
	assert_ptr_equal(again, p);
	assert_ptr_equal(kstore_coll(st, "apps/deployments", true), d);
	assert_ptr_equal(kstore_coll(st, "g7/things", false),
	        kstore_coll(st, "g7/things", true));
	assert_null(kstore_coll(st, "pods", false));
	assert_string_equal(kstore_coll_name(p), "/pods");
	assert_string_equal(kstore_coll_name(d), "apps/deployments");

	put(st, p, "ns/a", 1);
	put(st, d, "ns/a", 2);
	put(st, d, "ns/b", 3);
	assert_int_equal(kstore_coll_count(p), 1);
	assert_int_equal(kstore_coll_count(d), 2);
	assert_int_equal(kstore_rv(st), 3);
	assert_int_equal(kstore_delete(st, p, "ns/b"), 0);
	assert_int_equal(kstore_delete(st, p, "ns/a"), 4);
	assert_null(kstore_get(p, "ns/a"));
	assert_non_null(kstore_get(d, "ns/a"));
	CHECK_LIST(st, p, NULL, 0, "");
	CHECK_LIST(st, d, NULL, 0, "ns/a:2,ns/b:3");
	CHECK_LIST(st, p, NULL, 3, "ns/a:1");
	CHECK_LIST(st, d, NULL, 2, "ns/a:2");
	kstore_unlock(st);
	kstore_free(st);
}

static void
test_free_outstanding(void **state)
{
	struct kstore *st = kstore_new(4, 0);
	struct kstore_coll *c;
	struct kstore_ev ev[4];
	int n;

	(void)state;
	kstore_free(NULL);
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	kstore_coll(st, "/empty", true);
	for (int i = 0; i < 10; i++) {
		put(st, c, i % 2 ? "a" : "b", i);
	}
	kstore_delete(st, c, "a");
	n = kstore_events(st, kstore_oldest_rv(st), ev, 4);
	assert_int_equal(n, 4);
	kstore_unlock(st);
	kstore_free(st);
	/* Event copies outlive the store. */
	assert_int_equal(ev[3].type, KSTORE_DELETED);
	assert_string_equal(ev[3].new->key, "a");
	for (int i = 0; i < n; i++) {
		kstore_ev_release(&ev[i]);
	}
}

static uint64_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (*s >> 33);
}

static void
test_many_random(void **state)
{
	enum { N = 20000 };
	struct kstore *st = kstore_new(N, 0);
	struct kstore_coll *c;
	struct kitem **items;
	size_t n, *perm = malloc(N * sizeof(*perm));
	uint64_t seed = 42;
	char key[32];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		perm[i] = i;
	}
	for (size_t i = N - 1; i > 0; i--) {
		size_t j = lcg(&seed) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	kstore_lock(st);
	c = kstore_coll(st, "/pods", true);
	for (size_t i = 0; i < N; i++) {
		/* Namespaces ns0..ns9 and names of varying length. */
		snprintf(
		        key, sizeof(key), "ns%zu/p%zu", perm[i] % 10, perm[i]);
		put(st, c, key, (int)perm[i]);
	}
	assert_int_equal(kstore_coll_count(c), N);
	assert_int_equal(kstore_list(st, c, NULL, 0, &items, &n), 0);
	assert_int_equal(n, N);
	for (size_t i = 1; i < n; i++) {
		assert_true(strcmp(items[i - 1]->key, items[i]->key) < 0);
	}
	for (size_t i = 0; i < n; i++) {
		kitem_unref(items[i]);
	}
	free(items);
	assert_int_equal(kstore_list(st, c, "ns3/", 0, &items, &n), 0);
	assert_int_equal(n, N / 10);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(strncmp(items[i]->key, "ns3/", 4), 0);
		kitem_unref(items[i]);
	}
	free(items);
	/* Every key is found; deleting the even ones leaves the odd ones. */
	for (size_t i = 0; i < N; i += 2) {
		snprintf(key, sizeof(key), "ns%zu/p%zu", i % 10, i);
		assert_non_null(kstore_get(c, key));
		assert_int_not_equal(kstore_delete(st, c, key), 0);
	}
	assert_int_equal(kstore_coll_count(c), N / 2);
	/* Half-way back: the list before the deletions has them all. */
	assert_int_equal(kstore_list(st, c, NULL, N, &items, &n), 0);
	assert_int_equal(n, N);
	for (size_t i = 0; i < n; i++) {
		kitem_unref(items[i]);
	}
	free(items);
	kstore_unlock(st);
	kstore_free(st);
	free(perm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_replace),
		cmocka_unit_test(test_rv_metadata),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_list_order_prefix),
		cmocka_unit_test(test_list_past),
		cmocka_unit_test(test_list_bounds),
		cmocka_unit_test(test_ring_overflow),
		cmocka_unit_test(test_history_zero),
		cmocka_unit_test(test_events_order),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_wait_write),
		cmocka_unit_test(test_wait_deadline),
		cmocka_unit_test(test_wait_kick),
		cmocka_unit_test(test_refs_survive),
		cmocka_unit_test(test_refs_concurrent),
		cmocka_unit_test(test_collections),
		cmocka_unit_test(test_free_outstanding),
		cmocka_unit_test(test_many_random),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
