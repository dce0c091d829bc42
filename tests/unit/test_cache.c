/* test_cache.c: the watch cache of one kind (supervisor/cache). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "supervisor/cache.h"

/* A Pod-like object; owner NULL for none, labels a JSON object text. */
static json_object *
obj(const char *ns, const char *name, const char *rv, const char *owner,
        const char *labels)
{
	struct buf b = BUF_INIT;
	json_object *o;

	buf_printf(&b,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\","
	        "\"resourceVersion\":\"%s\"",
	        name, name, rv);
	if (ns != NULL) {
		buf_printf(&b, ",\"namespace\":\"%s\"", ns);
	}
	if (labels != NULL) {
		buf_printf(&b, ",\"labels\":%s", labels);
	}
	if (owner != NULL) {
		buf_printf(&b,
		        ",\"ownerReferences\":[{\"apiVersion\":\"v1\","
		        "\"kind\":\"Other\",\"name\":\"x\",\"uid\":\"other\"},"
		        "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
		        "\"kind\":\"AgentRun\",\"name\":\"own-%s\","
		        "\"uid\":\"%s\",\"controller\":true}]",
		        owner, owner);
	}
	buf_puts(&b,
	        ",\"managedFields\":[{\"manager\":\"kubectl\"}]},"
	        "\"data\":{\"k\":\"v\"}}");
	o = jx_parse(b.data, b.len, 0, NULL, 0);
	assert_non_null(o);
	buf_fini(&b);
	return (o);
}

/* Applies one event and drops obj; returns the change and keeps res. */
static enum cache_change
ap(struct cache *c, enum cache_event ev, json_object *o,
        struct cache_result *res)
{
	enum cache_change ch = cache_apply(c, ev, o, res);

	json_object_put(o);
	return (ch);
}

static enum cache_change
ap1(struct cache *c, enum cache_event ev, json_object *o)
{
	struct cache_result res;
	enum cache_change ch = ap(c, ev, o, &res);

	cache_result_fini(&res);
	return (ch);
}

/* Collects visited keys, space separated. */
static int
collect(void *arg, const struct cache_item *it)
{
	struct buf *b = arg;

	buf_printf(b, "%s%s", b->len > 0 ? " " : "", it->key);
	return (0);
}

static char *
by_owner(struct cache *c, const char *uid)
{
	struct buf b = BUF_INIT;

	assert_int_equal(cache_by_owner(c, uid, collect, &b), 0);
	return (buf_detach(&b, NULL));
}

static char *
list(struct cache *c, const char *ns, const char *sel)
{
	struct buf b = BUF_INIT;

	assert_int_equal(cache_list(c, ns, sel, collect, &b), 0);
	return (buf_detach(&b, NULL));
}

#define assert_owned(c, uid, want)                                            \
	do {                                                                  \
		char *got_ = by_owner(c, uid);                                \
		assert_string_equal(got_, want);                              \
		free(got_);                                                   \
	} while (0)

#define assert_listed(c, ns, sel, want)                                       \
	do {                                                                  \
		char *got_ = list(c, ns, sel);                                \
		assert_string_equal(got_, want);                              \
		free(got_);                                                   \
	} while (0)

static void
test_add_update_delete(void **state)
{
	struct cache *c = cache_new("configmaps");
	struct cache_result res;
	const char *text;

	(void)state;
	assert_false(cache_synced(c));
	assert_string_equal(cache_rv(c), "");
	assert_int_equal(
	        ap(c, CACHE_EV_ADDED, obj("ns", "a", "10", "o1", NULL), &res),
	        CACHE_ADD);
	assert_string_equal(res.key, "ns/a");
	assert_string_equal(res.rv, "10");
	assert_null(res.old_owner.uid);
	assert_string_equal(res.new_owner.uid, "o1");
	assert_string_equal(res.new_owner.kind, "AgentRun");
	assert_string_equal(res.new_owner.name, "own-o1");
	cache_result_fini(&res);
	assert_int_equal(cache_count(c), 1);
	text = cache_get(c, "ns", "a");
	assert_non_null(text);
	assert_non_null(strstr(text, "\"resourceVersion\":\"10\""));
	assert_null(strchr(text, ' ')); /* compact */

	/* Same object again: unchanged; then a real update. */
	assert_int_equal(
	        ap1(c, CACHE_EV_MODIFIED, obj("ns", "a", "10", "o1", NULL)),
	        CACHE_UNCHANGED);
	assert_int_equal(ap(c, CACHE_EV_MODIFIED,
	                         obj("ns", "a", "11", "o2", NULL), &res),
	        CACHE_UPDATE);
	assert_string_equal(res.old_owner.uid, "o1");
	assert_string_equal(res.new_owner.uid, "o2");
	cache_result_fini(&res);
	/* ADDED of a known key updates it. */
	assert_int_equal(
	        ap1(c, CACHE_EV_ADDED, obj("ns", "a", "12", "o2", NULL)),
	        CACHE_UPDATE);

	assert_int_equal(ap(c, CACHE_EV_DELETED,
	                         obj("ns", "a", "13", "o2", NULL), &res),
	        CACHE_DELETE);
	assert_string_equal(res.key, "ns/a");
	assert_string_equal(res.old_owner.uid, "o2");
	assert_null(res.new_owner.uid);
	assert_string_equal(res.rv, "13");
	cache_result_fini(&res);
	assert_null(cache_get(c, "ns", "a"));
	assert_int_equal(cache_count(c), 0);
	/* Deleting an unknown key changes nothing but the rv. */
	assert_int_equal(
	        ap1(c, CACHE_EV_DELETED, obj("ns", "zz", "14", NULL, NULL)),
	        CACHE_UNCHANGED);
	assert_string_equal(cache_rv(c), "14");
	cache_result_fini(NULL);
	cache_free(c);
	cache_free(NULL);
}

static void
test_managed_fields_stripped(void **state)
{
	struct cache *c = cache_new("cm");
	json_object *o;
	struct cache_item it;

	(void)state;
	ap1(c, CACHE_EV_ADDED,
	        obj(NULL, "cluster", "5", NULL, "{\"a\":\"b\"}"));
	assert_null(strstr(cache_get(c, NULL, "cluster"), "managedFields"));
	assert_non_null(cache_get(c, "", "cluster"));
	o = cache_get_obj(c, NULL, "cluster");
	assert_non_null(o);
	assert_string_equal(jx_get_str(o, "data.k"), "v");
	assert_string_equal(jx_get_str(o, "metadata.labels.a"), "b");
	assert_null(jx_get(o, "metadata.managedFields"));
	json_object_put(o);
	assert_null(cache_get_obj(c, NULL, "nope"));
	assert_int_equal(cache_lookup(c, "cluster", &it), 0);
	assert_string_equal(it.ns, "");
	assert_string_equal(it.name, "cluster");
	assert_string_equal(it.uid, "u-cluster");
	assert_string_equal(it.rv, "5");
	assert_null(it.owner_uid);
	assert_int_equal(it.json_len, strlen(it.json));
	assert_int_equal(cache_lookup(c, "x/cluster", &it), -1);
	assert_int_equal(cache_lookup(c, NULL, &it), -1);
	cache_free(c);
}

static void
test_owner_index(void **state)
{
	struct cache *c = cache_new("cm");

	(void)state;
	ap1(c, CACHE_EV_ADDED, obj("n", "c", "1", "o1", NULL));
	ap1(c, CACHE_EV_ADDED, obj("n", "a", "2", "o1", NULL));
	ap1(c, CACHE_EV_ADDED, obj("m", "b", "3", "o1", NULL));
	ap1(c, CACHE_EV_ADDED, obj("n", "d", "4", "o2", NULL));
	ap1(c, CACHE_EV_ADDED, obj("n", "e", "5", NULL, NULL));
	assert_owned(c, "o1", "m/b n/a n/c");
	assert_owned(c, "o2", "n/d");
	assert_owned(c, "other", ""); /* not a controller reference */
	assert_owned(c, "none", "");
	/* Owner change moves the key; losing the owner drops it. */
	ap1(c, CACHE_EV_MODIFIED, obj("n", "a", "6", "o2", NULL));
	ap1(c, CACHE_EV_MODIFIED, obj("n", "c", "7", NULL, NULL));
	assert_owned(c, "o1", "m/b");
	assert_owned(c, "o2", "n/a n/d");
	ap1(c, CACHE_EV_DELETED, obj("m", "b", "8", "o1", NULL));
	assert_owned(c, "o1", "");
	ap1(c, CACHE_EV_DELETED, obj("n", "a", "9", "o2", NULL));
	assert_owned(c, "o2", "n/d");
	assert_int_equal(cache_by_owner(c, NULL, collect, NULL), 0);
	cache_free(c);
}

static int
stop_at_second(void *arg, const struct cache_item *it)
{
	int *n = arg;

	(void)it;
	return (++*n == 2 ? 42 : 0);
}

static void
test_list_namespace_selector(void **state)
{
	struct cache *c = cache_new("cm");
	int n = 0;

	(void)state;
	ap1(c, CACHE_EV_ADDED,
	        obj("n1", "b", "1", NULL, "{\"app\":\"web\",\"t\":\"x\"}"));
	ap1(c, CACHE_EV_ADDED, obj("n1", "a", "2", NULL, "{\"app\":\"db\"}"));
	ap1(c, CACHE_EV_ADDED, obj("n2", "c", "3", NULL, "{\"app\":\"web\"}"));
	ap1(c, CACHE_EV_ADDED, obj(NULL, "g", "4", NULL, NULL));
	assert_listed(c, NULL, NULL, "g n1/a n1/b n2/c");
	assert_listed(c, "n1", NULL, "n1/a n1/b");
	assert_listed(c, "", "", "g");
	assert_listed(c, "n3", NULL, "");
	assert_listed(c, NULL, "app=web", "n1/b n2/c");
	assert_listed(c, "n1", "app=web", "n1/b");
	assert_listed(c, NULL, "app!=web", "g n1/a");
	assert_listed(c, NULL, "t", "n1/b");
	assert_listed(c, NULL, "!app", "g");
	assert_int_equal(cache_list(c, NULL, "a in (b)", collect, NULL), -1);
	assert_int_equal(cache_list(c, NULL, NULL, stop_at_second, &n), 42);
	assert_int_equal(n, 2);
	/* The namespace index follows deletes. */
	ap1(c, CACHE_EV_DELETED, obj("n2", "c", "5", NULL, NULL));
	assert_listed(c, "n2", NULL, "");
	cache_free(c);
}

/* Records the handler calls of a replace. */
static void
on_add(void *arg, const struct cache_item *o)
{
	buf_printf(arg, "add:%s@%s ", o->key, o->rv);
}

static void
on_update(void *arg, const struct cache_item *old, const struct cache_item *o)
{
	buf_printf(arg, "upd:%s@%s>%s ", o->key, old->rv, o->rv);
}

static void
on_delete(void *arg, const struct cache_item *o)
{
	buf_printf(
	        arg, "del:%s@%s%s ", o->key, o->rv, o->tombstone ? "(t)" : "");
}

static const struct cache_handlers handlers = { on_add, on_update, on_delete };

static void
test_replace_diff(void **state)
{
	struct cache *c = cache_new("cm");
	struct buf b = BUF_INIT;
	json_object *items[5];

	(void)state;
	ap1(c, CACHE_EV_ADDED, obj("n", "keep", "1", "o1", NULL));
	ap1(c, CACHE_EV_ADDED, obj("n", "same", "2", NULL, NULL));
	ap1(c, CACHE_EV_ADDED, obj("n", "zgone", "3", "o1", NULL));
	ap1(c, CACHE_EV_ADDED, obj("n", "agone", "4", NULL, NULL));
	items[0] = obj("n", "keep", "9", "o2", NULL);
	items[1] = obj("n", "new", "8", NULL, NULL);
	items[2] = obj("n", "same", "2", NULL, NULL);
	items[3] = NULL;
	items[4] = json_object_new_string("junk");
	assert_int_equal(cache_replace(c, items, 5, "20", &handlers, &b), 1);
	assert_string_equal(buf_str(&b),
	        "upd:n/keep@1>9 add:n/new@8 upd:n/same@2>2 "
	        "del:n/agone@4(t) del:n/zgone@3(t) ");
	assert_string_equal(cache_rv(c), "20");
	assert_int_equal(cache_count(c), 3);
	assert_listed(c, NULL, NULL, "n/keep n/new n/same");
	assert_owned(c, "o1", "");
	assert_owned(c, "o2", "n/keep");
	assert_null(strstr(cache_get(c, "n", "new"), "managedFields"));
	/* An empty relist deletes everything; NULL handlers are fine. */
	buf_reset(&b);
	assert_int_equal(cache_replace(c, NULL, 0, NULL, &handlers, &b), 0);
	assert_string_equal(buf_str(&b),
	        "del:n/keep@9(t) del:n/new@8(t) del:n/same@2(t) ");
	assert_string_equal(cache_rv(c), "20");
	assert_int_equal(cache_count(c), 0);
	assert_int_equal(cache_replace(c, items, 3, "21", NULL, NULL), 0);
	assert_int_equal(cache_count(c), 3);
	for (size_t i = 0; i < 5; i++) {
		json_object_put(items[i]);
	}
	buf_fini(&b);
	cache_free(c);
}

static void
test_bookmark(void **state)
{
	struct cache *c = cache_new("cm");
	struct cache_result res;

	(void)state;
	ap1(c, CACHE_EV_ADDED, obj("n", "a", "x7", NULL, NULL));
	assert_string_equal(cache_rv(c), "x7");
	assert_int_equal(
	        ap(c, CACHE_EV_BOOKMARK,
	                json_tokener_parse("{\"kind\":\"ConfigMap\","
	                                   "\"metadata\":{\"resourceVersion\":"
	                                   "\"a1\"}}"),
	                &res),
	        CACHE_UNCHANGED);
	assert_null(res.key);
	assert_string_equal(res.rv, "a1");
	cache_result_fini(&res);
	assert_string_equal(cache_rv(c), "a1"); /* opaque: never ordered */
	assert_int_equal(cache_count(c), 1);
	assert_int_equal(
	        ap(c, CACHE_EV_BOOKMARK,
	                json_tokener_parse("{\"metadata\":{}}"), &res),
	        CACHE_INVALID);
	assert_non_null(strstr(res.err, "resourceVersion"));
	cache_result_fini(&res);
	assert_string_equal(cache_rv(c), "a1");
	cache_free(c);
}

static void
rejected(struct cache *c, enum cache_event ev, const char *text,
        const char *why)
{
	struct cache_result res;
	json_object *o = text != NULL ? json_tokener_parse(text) : NULL;

	assert_int_equal(ap(c, ev, o, &res), CACHE_INVALID);
	assert_non_null(res.err);
	if (strstr(res.err, why) == NULL) {
		fail_msg("%s: \"%s\" lacks \"%s\"", text, res.err, why);
	}
	assert_null(res.key);
	cache_result_fini(&res);
}

static void
test_rejects_bad_objects(void **state)
{
	struct cache *c = cache_new("cm");

	(void)state;
	rejected(c, CACHE_EV_ADDED, NULL, "not a JSON object");
	rejected(c, CACHE_EV_ADDED, "[1,2]", "not a JSON object");
	rejected(c, CACHE_EV_ADDED, "\"s\"", "not a JSON object");
	rejected(c, CACHE_EV_ADDED, "{}", "no metadata");
	rejected(c, CACHE_EV_ADDED, "{\"metadata\":[]}", "no metadata");
	rejected(c, CACHE_EV_MODIFIED, "{\"metadata\":{}}", "metadata.name");
	rejected(c, CACHE_EV_ADDED, "{\"metadata\":{\"name\":\"\"}}",
	        "metadata.name");
	rejected(c, CACHE_EV_ADDED, "{\"metadata\":{\"name\":5}}",
	        "metadata.name");
	rejected(c, CACHE_EV_DELETED,
	        "{\"metadata\":{\"name\":\"a\",\"namespace\":{}}}",
	        "namespace");
	rejected(c, (enum cache_event)99, "{\"metadata\":{\"name\":\"a\"}}",
	        "unknown");
	assert_int_equal(cache_count(c), 0);
	assert_string_equal(cache_rv(c), "");
	/* Odd but valid: no uid, no rv, odd owner references, labels. */
	assert_int_equal(
	        ap1(c, CACHE_EV_ADDED,
	                json_tokener_parse(
	                        "{\"metadata\":{\"name\":\"a\",\"namespace\":"
	                        "null,\"labels\":[1],\"ownerReferences\":"
	                        "[1,{\"controller\":true},{\"controller\":"
	                        "true,\"uid\":7}]}}")),
	        CACHE_ADD);
	assert_non_null(cache_get(c, NULL, "a"));
	assert_listed(c, "", "x!=y", "a");
	cache_free(c);
}

static void
test_many_objects_bytes(void **state)
{
	struct cache *c = cache_new("cm");
	char name[32], owner[32];
	size_t empty = cache_bytes(c), full, text = 0;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "obj-%05d", i);
		snprintf(owner, sizeof(owner), "own-%d", i % 100);
		assert_int_equal(ap1(c, CACHE_EV_ADDED,
		                         obj(i % 2 ? "odd" : "even", name, "1",
		                                 owner, "{\"a\":\"b\"}")),
		        CACHE_ADD);
		text += strlen(cache_get(c, i % 2 ? "odd" : "even", name));
	}
	assert_int_equal(cache_count(c), 10000);
	full = cache_bytes(c);
	/* Holds at least the texts, and not wildly more. */
	assert_true(full > empty + text);
	assert_true(full < empty + text * 3);
	/* Every object findable, the owner index sized right. */
	for (int i = 0; i < 10000; i += 7) {
		snprintf(name, sizeof(name), "obj-%05d", i);
		assert_non_null(cache_get(c, i % 2 ? "odd" : "even", name));
	}
	{
		char *o = by_owner(c, "own-3");
		size_t n = 1;

		for (char *p = o; *p != '\0'; p++) {
			n += *p == ' ';
		}
		assert_int_equal(n, 100);
		free(o);
	}
	/* Deleting every other object: the tables stay consistent. */
	for (int i = 0; i < 10000; i += 2) {
		snprintf(name, sizeof(name), "obj-%05d", i);
		assert_int_equal(ap1(c, CACHE_EV_DELETED,
		                         obj("even", name, "2", NULL, NULL)),
		        CACHE_DELETE);
	}
	assert_int_equal(cache_count(c), 5000);
	for (int i = 1; i < 10000; i += 2) {
		snprintf(name, sizeof(name), "obj-%05d", i);
		assert_non_null(cache_get(c, "odd", name));
	}
	assert_listed(c, "even", NULL, "");
	assert_true(cache_bytes(c) < full);
	assert_int_equal(cache_replace(c, NULL, 0, "3", NULL, NULL), 0);
	assert_int_equal(cache_count(c), 0);
	assert_true(cache_bytes(c) < empty + 10000 * 3 * sizeof(void *));
	cache_free(c);
}

static void
test_synced_flag_name(void **state)
{
	struct cache *c = cache_new("agentruns.sympozium.ai");

	(void)state;
	assert_string_equal(cache_name(c), "agentruns.sympozium.ai");
	cache_set_synced(c, true);
	assert_true(cache_synced(c));
	cache_set_synced(c, false);
	assert_false(cache_synced(c));
	cache_free(c);
}

/* Selected listings in a namespace come from a label index, created on
 * the first listing naming the key, kept in step with every change. */
static void
test_label_index(void **state)
{
	struct cache *c = cache_new("cm");
	size_t before;

	(void)state;
	ap1(c, CACHE_EV_ADDED, obj("a", "r3", "1", NULL, "{\"inst\":\"x\"}"));
	ap1(c, CACHE_EV_ADDED,
	        obj("a", "r1", "2", NULL, "{\"inst\":\"x\",\"app\":\"z\"}"));
	ap1(c, CACHE_EV_ADDED, obj("a", "r2", "3", NULL, "{\"inst\":\"y\"}"));
	ap1(c, CACHE_EV_ADDED, obj("b", "r4", "4", NULL, "{\"inst\":\"x\"}"));
	before = cache_bytes(c);
	assert_listed(c, "a", "inst=x", "a/r1 a/r3");
	assert_true(cache_bytes(c) > before);
	assert_listed(c, "a", " inst == x , app=z", "a/r1");
	assert_listed(c, "b", "inst=x", "b/r4");
	assert_listed(c, "c", "inst=x", "");
	assert_listed(c, "a", "inst=none", "");
	assert_listed(c, "a", "inst!=x", "a/r2");
	/* index kept up to date: relabel, add, delete */
	ap1(c, CACHE_EV_MODIFIED,
	        obj("a", "r3", "5", NULL, "{\"inst\":\"y\"}"));
	ap1(c, CACHE_EV_ADDED, obj("a", "r5", "6", NULL, "{\"inst\":\"x\"}"));
	ap1(c, CACHE_EV_DELETED, obj("a", "r1", "7", NULL, NULL));
	assert_listed(c, "a", "inst=x", "a/r5");
	assert_listed(c, "a", "inst=y", "a/r2 a/r3");
	/* more keys than indexes: the namespace walk answers the same */
	assert_listed(c, "a", "k1=v", "");
	assert_listed(c, "a", "k2=v", "");
	assert_listed(c, "a", "k3=v", "");
	assert_listed(c, "a", "k4=v,inst=y", "");
	assert_listed(c, "a", "app=z", "");
	/* a relist keeps the index in step */
	json_object *items[] = {
		obj("a", "r2", "8", NULL, "{\"inst\":\"x\"}"),
		obj("b", "r4", "9", NULL, "{\"inst\":\"x\"}"),
	};
	cache_replace(c, items, 2, "9", NULL, NULL);
	json_object_put(items[0]);
	json_object_put(items[1]);
	assert_listed(c, "a", "inst=x", "a/r2");
	assert_listed(c, "a", "inst=y", "");
	cache_free(c);
}

static int
count_adds(void *arg, const struct cache_item *it)
{
	(void)it;
	(*(int *)arg)++;
	return (0);
}

static void
h_add(void *arg, const struct cache_item *it)
{
	count_adds(arg, it);
}

/* Staged lists, item labels, filtered owner walks, raw serialization. */
static void
test_stage_raw(void **state)
{
	struct cache *c = cache_new("cm");
	struct cache_stage *st = cache_stage_new();
	struct cache_handlers h = { .on_add = h_add };
	struct cache_item it;
	json_object *o, *arr;
	int adds = 0;
	char *got;

	(void)state;
	o = obj("a", "p1", "1", "u1", "{\"sel\":\"yes\"}");
	assert_int_equal(cache_stage_add(st, o), 0);
	json_object_put(o);
	o = obj("a", "p2", "2", "u1", NULL);
	assert_int_equal(cache_stage_add(st, o), 0);
	json_object_put(o);
	o = json_object_new_string("not an object");
	assert_int_equal(cache_stage_add(st, o), -1);
	json_object_put(o);
	assert_int_equal(cache_stage_count(st), 2);
	assert_int_equal(cache_replace_staged(c, st, "5", &h, &adds), 1);
	assert_int_equal(cache_stage_count(st), 0);
	assert_int_equal(adds, 2);
	assert_string_equal(cache_rv(c), "5");
	assert_int_equal(cache_count(c), 2);
	/* a cleared stage installs nothing: the relist empties the cache */
	o = obj("a", "p3", "3", NULL, NULL);
	cache_stage_add(st, o);
	json_object_put(o);
	cache_stage_clear(st);
	assert_int_equal(cache_stage_count(st), 0);

	assert_int_equal(cache_lookup(c, "a/p1", &it), 0);
	assert_string_equal(cache_item_label(&it, "sel"), "yes");
	assert_null(cache_item_label(&it, "other"));
	adds = 0;
	assert_int_equal(
	        cache_by_owner_sel(c, "u1", "sel=yes", count_adds, &adds), 0);
	assert_int_equal(adds, 1);
	adds = 0;
	assert_int_equal(
	        cache_by_owner_sel(c, "u1", NULL, count_adds, &adds), 0);
	assert_int_equal(adds, 2);
	assert_int_equal(
	        cache_by_owner_sel(c, "u1", "a in (b)", count_adds, &adds),
	        -1);

	arr = json_object_new_array();
	json_object_array_add(arr, cache_item_raw(&it));
	got = xasprintf("[%s]", it.json);
	assert_string_equal(
	        json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN),
	        got);
	free(got);
	json_object_put(arr);
	cache_stage_free(st);
	cache_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_update_delete),
		cmocka_unit_test(test_managed_fields_stripped),
		cmocka_unit_test(test_owner_index),
		cmocka_unit_test(test_list_namespace_selector),
		cmocka_unit_test(test_replace_diff),
		cmocka_unit_test(test_bookmark),
		cmocka_unit_test(test_rejects_bad_objects),
		cmocka_unit_test(test_many_objects_bytes),
		cmocka_unit_test(test_synced_flag_name),
		cmocka_unit_test(test_label_index),
		cmocka_unit_test(test_stage_raw),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
