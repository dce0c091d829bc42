/* test_mtune.c: the malloc arena cap and the heap-trim decision. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include "common/mtune.h"

#define MIB (1u << 20)

/* volatile: the compiler drops an allocation nobody reads */
static char *volatile pin;

/* Idle after work, once per period. */
static void
test_trim_after_work(void **state)
{
	struct mtune_trim t = { 0 };

	(void)state;
	/* idle from the start: nothing was freed */
	assert_false(mtune_trim_ripe(&t, true, 1000));
	assert_false(mtune_trim_ripe(&t, false, 2000));
	assert_false(mtune_trim_ripe(&t, false, 3000));
	assert_true(mtune_trim_ripe(&t, true, 4000));
	mtune_trimmed(&t, 4000);
	/* idle goes on: no second trim */
	assert_false(mtune_trim_ripe(&t, true, 4000 + MTUNE_TRIM_PERIOD_MS));
	/* more work within the period waits for the period's end */
	assert_false(mtune_trim_ripe(&t, false, 5000));
	assert_false(mtune_trim_ripe(&t, true, 6000));
	assert_true(mtune_trim_ripe(&t, true, 4000 + MTUNE_TRIM_PERIOD_MS));
}

static void
test_trim_worth_it(void **state)
{
	struct mtune_trim t = { 0 };

	(void)state;
	assert_false(mtune_trim_ripe(&t, false, 1000));
	assert_false(mtune_trim_due(&t, MTUNE_TRIM_MIN_FREE - 1));
	assert_true(mtune_trim_due(&t, MTUNE_TRIM_MIN_FREE));
	mtune_trimmed(&t, 2000);
	assert_false(mtune_trim_due(&t, 100 * MIB));
}

/* Little free heap: no trim, and none until the next burst. */
static void
test_check_small_heap(void **state)
{
	struct mtune_trim t = { 0 };

	(void)state;
	malloc_trim(0);
	assert_false(mtune_trim_check(&t, false, 1000));
	assert_false(mtune_trim_check(&t, true, 2000));
	assert_false(t.worked);
	assert_int_equal(t.last_ms, 2000);
}

/* Resident pages of this process. */
static long
rss_pages(void)
{
	long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &size, &rss), 2);
	fclose(f);
	return (rss);
}

/* A trim gives back the pages of many freed small blocks, which free()
 * alone keeps (they are not at the top of the heap). */
static void
test_trim_returns_pages(void **state)
{
	enum { N = 40000, SZ = 1000 };
	struct mtune_trim t = { 0 };

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip(); /* the sanitizer's allocator has its own heap */
#endif
	char **p = malloc(N * sizeof(*p));
	assert_non_null(p);
	for (int i = 0; i < N; i++) {
		p[i] = malloc(SZ);
		memset(p[i], 1, SZ);
	}
	assert_false(mtune_trim_check(&t, false, 1000));
	pin = malloc(SZ); /* keeps the heap's top from shrinking on free() */
	for (int i = 0; i < N; i++) {
		free(p[i]);
	}
	long before = rss_pages();
	assert_true(mtune_trim_check(&t, true, 2000));
	long after = rss_pages();
	long page = sysconf(_SC_PAGESIZE);
	assert_true((before - after) * page > (long)(N * SZ) / 2);
	free(pin);
	free(p);
}

static void *
allocate(void *arg)
{
	char *p = malloc(1000);

	(void)arg;
	pin = p; /* read elsewhere, so the allocation stays */
	memset(p, 1, 1000);
	usleep(50000); /* all threads at once: each would take an arena */
	free(p);
	return (NULL);
}

/* How many arenas malloc_info() lists. */
static int
arenas(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int n = 0;

	assert_non_null(f);
	malloc_info(0, f);
	fclose(f);
	for (const char *s = buf; (s = strstr(s, "<heap nr=")) != NULL; s++) {
		n++;
	}
	free(buf);
	return (n);
}

static void
test_arena_cap(void **state)
{
	pthread_t th[4];

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip();
#endif
	unsetenv("MALLOC_ARENA_MAX");
	mtune_arenas(1);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(
		        pthread_create(&th[i], NULL, allocate, NULL), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
	}
	assert_int_equal(arenas(), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trim_after_work),
		cmocka_unit_test(test_trim_worth_it),
		cmocka_unit_test(test_check_small_heap),
		cmocka_unit_test(test_trim_returns_pages),
		cmocka_unit_test(test_arena_cap),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
