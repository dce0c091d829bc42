/*
 * test_strtab.c: the string-keyed hash table (common/strtab.h) against a
 * plain array model under random puts, replaces and deletes, so that
 * growth, wrap-around probe runs and backward-shift deletion are all
 * crossed, with and without the elements' own hashes; plus the edge
 * cases of an empty table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strhash.h"
#include "common/strtab.h"

#define NKEYS 300

struct elem {
	char key[24];
	uint64_t h;
	int val;
};

static const char *
elem_key(const void *p)
{
	return (((const struct elem *)p)->key);
}

static uint64_t
elem_hash(const void *p)
{
	return (((const struct elem *)p)->h);
}

static void
test_empty(void **state)
{
	struct strtab t;
	size_t pos = 0;

	(void)state;
	strtab_init(&t, elem_key, NULL, 0);
	assert_null(strtab_get(&t, "a"));
	assert_null(strtab_del(&t, "a"));
	assert_false(strtab_remove(&t, &t));
	assert_null(strtab_next(&t, &pos));
	assert_int_equal(strtab_len(&t), 0);
	assert_int_equal(strtab_bytes(&t), 0);
	strtab_fini(&t);
	strtab_fini(&t);
}

static void
test_put_replace_del(void **state)
{
	struct elem a = { .key = "a", .val = 1 },
	            a2 = { .key = "a", .val = 2 },
	            b = { .key = "b", .val = 3 };
	struct strtab t;

	(void)state;
	strtab_init(&t, elem_key, NULL, 0);
	assert_null(strtab_put(&t, &a));
	assert_null(strtab_put(&t, &b));
	assert_ptr_equal(strtab_put(&t, &a2), &a);
	assert_int_equal(strtab_len(&t), 2);
	assert_ptr_equal(strtab_get(&t, "a"), &a2);
	assert_false(strtab_remove(&t, &a));
	assert_ptr_equal(strtab_del(&t, "a"), &a2);
	assert_null(strtab_get(&t, "a"));
	assert_null(strtab_del(&t, "a"));
	assert_ptr_equal(strtab_get(&t, "b"), &b);
	assert_int_equal(strtab_len(&t), 1);
	assert_int_equal(strtab_bytes(&t), 16 * sizeof(void *));
	strtab_fini(&t);
	assert_null(strtab_get(&t, "b"));
}

/* Every element of the model is found, nothing else is, iteration visits
 * each exactly once, and the table is at most as full as it may be. */
static void
check(const struct strtab *t, struct elem *e, const int *in, int nkeys)
{
	int seen[NKEYS] = { 0 };
	size_t n = 0, pos = 0;
	struct elem *x;

	for (int i = 0; i < nkeys; i++) {
		x = strtab_get(t, e[i].key);
		assert_ptr_equal(x, in[i] ? &e[i] : NULL);
		n += in[i] != 0;
	}
	assert_int_equal(strtab_len(t), n);
	assert_true(strtab_len(t) * 100
	        <= strtab_bytes(t) / sizeof(void *) * t->max_load);
	while ((x = strtab_next(t, &pos)) != NULL) {
		seen[x - e]++;
	}
	for (int i = 0; i < nkeys; i++) {
		assert_int_equal(seen[i], in[i]);
	}
}

/* Whether some run of the table wraps past its last slot: the case the
 * cyclic test of backward-shift deletion is for. */
static int
wraps(const struct strtab *t)
{
	size_t cap = strtab_bytes(t) / sizeof(void *);

	for (size_t i = 0; i < cap; i++) {
		if (t->slot[i] != NULL
		        && (strhash(t->keyof(t->slot[i])) & (cap - 1)) > i) {
			return (1);
		}
	}
	return (0);
}

/* Keys "ns/obj-N"; with cap > 0, every other one homed in the last three
 * slots or the first one of a table of cap slots, so runs wrap. */
static void
make_keys(struct elem *e, int nkeys, size_t cap)
{
	int n = 0;

	for (int i = 0; n < nkeys; i++) {
		char k[24];
		size_t h;

		snprintf(k, sizeof(k), "ns/obj-%d", i);
		h = (size_t)strhash(k) & (cap - 1);
		if (cap == 0 || n % 2 == 1 || h == 0 || h >= cap - 3) {
			memcpy(e[n].key, k, sizeof(k));
			e[n].h = strhash(k);
			e[n].val = n;
			n++;
		}
	}
}

/* Random puts and deletes over nkeys keys (made by make_keys() with cap),
 * checked every step. */
static void
run_model(int nkeys, int steps, size_t cap, strtab_hashof_fn *hashof,
        unsigned load)
{
	static struct elem e[NKEYS];
	int in[NKEYS] = { 0 }, wrapped = 0;
	struct strtab t;

	make_keys(e, nkeys, cap);
	strtab_init(&t, elem_key, hashof, load);
	for (int step = 0; step < steps; step++) {
		int i = rand() % nkeys;
		/* more puts than deletes in the first half, then the reverse
		 */
		int put = rand() % 100 < (step < steps / 2 ? 70 : 30);
		struct elem *want = in[i] ? &e[i] : NULL;
		if (put) {
			assert_ptr_equal(strtab_put(&t, &e[i]), want);
		} else if (step % 2 == 0) {
			assert_ptr_equal(strtab_del(&t, e[i].key), want);
		} else {
			assert_int_equal(
			        strtab_remove(&t, &e[i]), want != NULL);
		}
		in[i] = put;
		wrapped |= wraps(&t);
		check(&t, e, in, nkeys);
	}
	assert_true(wrapped || cap == 0);
	strtab_fini(&t);
}

/* 11 keys stay in 16 slots, 22 in 32 (8 and 16 at a 50% load): long
 * runs, many wrapping around. */
static void
test_model_small(void **state)
{
	(void)state;
	srand(14);
	run_model(11, 20000, 16, NULL, 0);
	run_model(22, 20000, 32, NULL, 0);
	run_model(8, 20000, 16, elem_hash, 50);
	run_model(16, 20000, 32, elem_hash, 50);
}

static void
test_model_large(void **state)
{
	(void)state;
	srand(6);
	run_model(NKEYS, 4000, 0, NULL, 0);
	run_model(NKEYS, 4000, 0, elem_hash, 50);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_put_replace_del),
		cmocka_unit_test(test_model_small),
		cmocka_unit_test(test_model_large),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
