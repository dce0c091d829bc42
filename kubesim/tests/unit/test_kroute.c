/*
 * test_kroute.c: kubesim's path routing (spec A.1) and the boolean query
 * rule (A.3).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kubesim/kroute.h"

static void
check(const char *path, enum kroute_kind kind, const char *group,
        const char *ns, const char *plural, const char *name, const char *sub,
        bool watch)
{
	struct kroute r;

	kroute_parse(path, &r);
	assert_int_equal(r.kind, kind);
	if (group != NULL) {
		assert_string_equal(r.group, group);
	}
	if (ns != NULL) {
		assert_string_equal(r.ns, ns);
	} else {
		assert_null(r.ns);
	}
	if (plural != NULL) {
		assert_string_equal(r.plural, plural);
	}
	if (name != NULL) {
		assert_string_equal(r.name, name);
	} else {
		assert_null(r.name);
	}
	if (sub != NULL) {
		assert_string_equal(r.sub, sub);
	} else {
		assert_null(r.sub);
	}
	assert_int_equal(r.watch_path, watch);
	kroute_fini(&r);
}

static void
test_resources(void **state)
{
	(void)state;
	check("/api/v1/pods", KROUTE_RESOURCE, "", NULL, "pods", NULL, NULL,
	        false);
	check("/api/v1/namespaces/a/pods/p/log", KROUTE_RESOURCE, "", "a",
	        "pods", "p", "log", false);
	check("/apis/apps/v1/namespaces/a/deployments/d/status",
	        KROUTE_RESOURCE, "apps", "a", "deployments", "d", "status",
	        false);
	check("/api/v1/namespaces", KROUTE_RESOURCE, "", NULL, "namespaces",
	        NULL, NULL, false);
	check("/api/v1/namespaces/x", KROUTE_RESOURCE, "", NULL, "namespaces",
	        "x", NULL, false);
	check("/api/v1/namespaces/x/status", KROUTE_RESOURCE, "", NULL,
	        "namespaces", "x", "status", false);
	check("/api/v1/namespaces/x/configmaps", KROUTE_RESOURCE, "", "x",
	        "configmaps", NULL, NULL, false);
	check("/apis/example.com/v1/namespaces/x/status", KROUTE_RESOURCE,
	        "example.com", "x", "status", NULL, NULL, false);
	check("/apis/example.com/v1/watch/namespaces/x/widgets/w",
	        KROUTE_RESOURCE, "example.com", "x", "widgets", "w", NULL,
	        true);
	check("/apis/example.com/v1/widgets", KROUTE_RESOURCE, "example.com",
	        NULL, "widgets", NULL, NULL, false);
}

static void
test_other(void **state)
{
	struct kroute r;

	(void)state;
	check("/api", KROUTE_API, NULL, NULL, NULL, NULL, NULL, false);
	check("/apis", KROUTE_APIS, NULL, NULL, NULL, NULL, NULL, false);
	check("/apis/apps", KROUTE_GROUP, "apps", NULL, NULL, NULL, NULL,
	        false);
	check("/apis/apps/v1", KROUTE_GV, "apps", NULL, NULL, NULL, NULL,
	        false);
	check("/api/v1", KROUTE_GV, "", NULL, NULL, NULL, NULL, false);
	check("/version", KROUTE_VERSION, NULL, NULL, NULL, NULL, NULL, false);
	check("/openapi/v2", KROUTE_OPENAPI_V2, NULL, NULL, NULL, NULL, NULL,
	        false);
	check("/openapi/v3", KROUTE_OPENAPI_ROOT, NULL, NULL, NULL, NULL, NULL,
	        false);
	kroute_parse("/openapi/v3/apis/apps/v1", &r);
	assert_int_equal(r.kind, KROUTE_OPENAPI_DOC);
	assert_string_equal(r.rest, "apis/apps/v1");
	kroute_fini(&r);
	kroute_parse("/_kubesim/faults/3", &r);
	assert_int_equal(r.kind, KROUTE_ADMIN);
	assert_string_equal(r.rest, "faults/3");
	kroute_fini(&r);
	kroute_parse("/healthz", &r);
	assert_int_equal(r.kind, KROUTE_HEALTH);
	kroute_fini(&r);
	check("/nope", KROUTE_NONE, NULL, NULL, NULL, NULL, NULL, false);
	check("", KROUTE_NONE, NULL, NULL, NULL, NULL, NULL, false);
	check("/api/v1/namespaces/a/pods/p/log/extra", KROUTE_NONE, NULL, NULL,
	        NULL, NULL, NULL, false);
	check("/a/b/c/d/e/f/g/h/i/j/k/l/m/n", KROUTE_NONE, NULL, NULL, NULL,
	        NULL, NULL, false);
}

static void
test_qbool(void **state)
{
	(void)state;
	assert_false(kroute_qbool(NULL));
	assert_false(kroute_qbool("0"));
	assert_false(kroute_qbool("false"));
	assert_false(kroute_qbool("FaLsE"));
	assert_true(kroute_qbool(""));
	assert_true(kroute_qbool("1"));
	assert_true(kroute_qbool("true"));
	assert_true(kroute_qbool("yes"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_qbool),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
