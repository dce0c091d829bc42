/*
 * test_kobj_finalizer.c: the finalizer helpers of workers/kobj.h that the
 * five reconcilers with a finalizer share: the membership test (strings
 * only), the list with ours removed or appended (other entries kept in
 * order, never twice), and the merge patch with its resourceVersion
 * precondition and an emptied list as null.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/fakesup.h"
#include "workers/kobj.h"

#define OURS "sympozium.ai/x-finalizer"

static json_object *
J(const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return (o);
}

/* An object with metadata.finalizers = fins (JSON text, NULL: none). */
static json_object *
with(const char *fins)
{
	json_object *o = J("{\"metadata\":{\"name\":\"a\","
	                   "\"resourceVersion\":\"9\"}}");

	if (fins != NULL) {
		jx_setv(o, J(fins), "metadata", "finalizers", NULL);
	}
	return (o);
}

static bool
has(const char *fins)
{
	json_object *o = with(fins);
	bool r = kobj_has_finalizer(o, OURS);

	json_object_put(o);
	return (r);
}

static void
test_has(void **state)
{
	(void)state;
	assert_false(has(NULL));
	assert_false(has("[]"));
	assert_false(has("[\"other\"]"));
	assert_true(has("[\"other\",\"" OURS "\"]"));
	assert_false(has("\"" OURS "\""));       /* not an array */
	assert_false(has("[1,null,{\"a\":1}]")); /* not strings */
	assert_true(has("[1,\"" OURS "\"]"));
}

/* kobj_finalizers(with(fins), OURS, add) is the JSON text want. */
static void
list_is(const char *fins, bool add, const char *want)
{
	json_object *o = with(fins);
	json_object *l = kobj_finalizers(o, OURS, add);

	fakesup_assert_json(l, want);
	json_object_put(l);
	json_object_put(o);
}

static void
test_list(void **state)
{
	(void)state;
	list_is(NULL, true, "[\"" OURS "\"]");
	list_is(NULL, false, "[]");
	list_is("{}", true, "[\"" OURS "\"]");
	list_is("[\"a\",\"b\"]", true, "[\"a\",\"b\",\"" OURS "\"]");
	list_is("[\"a\",\"" OURS "\",\"b\"]", false, "[\"a\",\"b\"]");
	/* present: moved last, never twice */
	list_is("[\"" OURS "\",\"a\"]", true, "[\"a\",\"" OURS "\"]");
	list_is("[\"" OURS "\",\"" OURS "\"]", false, "[]");
	list_is("[1,\"a\"]", false, "[1,\"a\"]");
}

static void
patch_is(const char *fins, unsigned flags, const char *want)
{
	json_object *o = with(fins);
	json_object *p = kobj_finalizer_patch(o, OURS, flags);

	fakesup_assert_json(p, want);
	json_object_put(p);
	json_object_put(o);
}

static void
test_patch(void **state)
{
	(void)state;
	patch_is("[\"a\"]", KOBJ_FIN_ADD,
	        "{\"metadata\":{\"finalizers\":[\"a\",\"" OURS "\"]}}");
	patch_is("[\"a\",\"" OURS "\"]", KOBJ_FIN_RV,
	        "{\"metadata\":{\"finalizers\":[\"a\"],"
	        "\"resourceVersion\":\"9\"}}");
	/* the last one removed: [] or null */
	patch_is("[\"" OURS "\"]", 0, "{\"metadata\":{\"finalizers\":[]}}");
	patch_is("[\"" OURS "\"]", KOBJ_FIN_NULL_EMPTY,
	        "{\"metadata\":{\"finalizers\":null}}");
	patch_is("[\"" OURS "\"]", KOBJ_FIN_NULL_EMPTY | KOBJ_FIN_RV,
	        "{\"metadata\":{\"finalizers\":null,"
	        "\"resourceVersion\":\"9\"}}");
	patch_is(NULL, KOBJ_FIN_ADD | KOBJ_FIN_RV | KOBJ_FIN_NULL_EMPTY,
	        "{\"metadata\":{\"finalizers\":[\"" OURS "\"],"
	        "\"resourceVersion\":\"9\"}}");
}

static void
test_patch_no_rv(void **state)
{
	json_object *o = J("{\"metadata\":{\"finalizers\":[\"a\"]}}");
	json_object *p = kobj_finalizer_patch(o, OURS, KOBJ_FIN_RV);

	(void)state;
	fakesup_assert_json(p, "{\"metadata\":{\"finalizers\":[\"a\"]}}");
	json_object_put(p);
	json_object_put(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_has),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_patch),
		cmocka_unit_test(test_patch_no_rv),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
