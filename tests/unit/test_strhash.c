/*
 * test_strhash.c: FNV-1a against its published test vectors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/strhash.h"

static void
test_vectors(void **state)
{
	(void)state;
	assert_true(strhash("") == 0xcbf29ce484222325ULL);
	assert_true(strhash("a") == 0xaf63dc4c8601ec8cULL);
	assert_true(strhash("foobar") == 0x85944171f73967e8ULL);
	assert_true(strhash_n("foobar", 6) == strhash("foobar"));
	assert_true(strhash_n("foo\0bar", 7) != strhash("foo"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
