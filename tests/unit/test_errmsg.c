/*
 * test_errmsg.c: one-line bounded error messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/errmsg.h"

static void
test_format_and_bounds(void **state)
{
	char err[8];

	(void)state;
	errmsg(err, sizeof(err), "%s=%d", "a", 1);
	assert_string_equal(err, "a=1");
	errmsg(err, sizeof(err), "%s", "0123456789");
	assert_string_equal(err, "0123456");
	errmsg(NULL, 10, "x");
	memcpy(err, "keep", 5);
	errmsg(err, 0, "x");
	assert_string_equal(err, "keep");
}

static void
test_one_line(void **state)
{
	char err[32];

	(void)state;
	errmsg(err, sizeof(err), "key \"%s\"", "a\nb\tc\x7f");
	assert_string_equal(err, "key \"a?b?c?\"");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_and_bounds),
		cmocka_unit_test(test_one_line),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
