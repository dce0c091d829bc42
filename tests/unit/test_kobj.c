/*
 * test_kobj.c: the object helpers of workers/kobj.h that build pieces of
 * child objects (kobj_env_add).  The event writes are in test_kobj_event.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "workers/kobj.h"

static void
test_env_add(void **state)
{
	json_object *env = json_object_new_array();
	char *s;

	(void)state;
	kobj_env_add(env, "A", "1");
	kobj_env_add(env, "EMPTY", "");
	kobj_env_add(env, "UNSET", NULL);
	kobj_env_add(env, NULL, "x");
	s = jx_to_string(env);
	assert_string_equal(s,
	        "[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"EMPTY\"},"
	        "{\"name\":\"UNSET\"},{\"name\":\"\",\"value\":\"x\"}]");
	free(s);
	json_object_put(env);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_add),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
