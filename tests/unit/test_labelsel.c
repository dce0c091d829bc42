/* test_labelsel.c: equality-based label selectors (supervisor/labelsel). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "supervisor/labelsel.h"

/* Whether sel matches the labels of the JSON text. */
static bool
m(const char *sel, const char *labels)
{
	char err[200];
	struct labelsel *ls = labelsel_parse(sel, err, sizeof(err));
	json_object *o = json_tokener_parse(labels);
	bool ok;

	assert_non_null(ls);
	ok = labelsel_match_json(ls, o);
	json_object_put(o);
	labelsel_free(ls);
	return (ok);
}

static void
test_equality(void **state)
{
	const char *l = "{\"app\":\"web\",\"tier\":\"front\","
	                "\"app.kubernetes.io/managed-by\":\"sympozium\"}";

	(void)state;
	assert_true(m("app=web", l));
	assert_true(m("app==web", l));
	assert_false(m("app=db", l));
	assert_true(m("app=web,tier=front", l));
	assert_false(m("app=web,tier=back", l));
	assert_true(m(" app = web , tier== front ", l));
	assert_true(m("app.kubernetes.io/managed-by=sympozium", l));
	assert_false(m("app=", l));
	assert_true(m("none=", "{\"none\":\"\"}"));
}

static void
test_inequality_exists(void **state)
{
	const char *l = "{\"app\":\"web\"}";

	(void)state;
	assert_true(m("app!=db", l));
	assert_false(m("app!=web", l));
	assert_true(m("tier!=x", l)); /* absent key matches != */
	assert_true(m("app", l));
	assert_false(m("tier", l));
	assert_true(m("!tier", l));
	assert_false(m("!app", l));
	assert_true(m("app,!tier,app!=x", l));
}

static void
test_empty_and_missing_labels(void **state)
{
	(void)state;
	assert_true(m("", "{}"));
	assert_true(m("  ", "{\"a\":\"b\"}"));
	assert_true(m(NULL, "{}"));
	assert_false(m("a=b", "{}"));
	assert_true(m("!a", "null"));
	assert_false(m("a", "[1]"));
	assert_false(m("a=1", "{\"a\":1}")); /* non-string: absent */
	assert_true(labelsel_empty(NULL));
}

static void
bad(const char *sel, const char *want)
{
	char err[200] = "";

	assert_null(labelsel_parse(sel, err, sizeof(err)));
	if (strstr(err, want) == NULL) {
		fail_msg("selector \"%s\": error \"%s\" lacks \"%s\"", sel,
		        err, want);
	}
}

static void
test_rejected(void **state)
{
	(void)state;
	bad("a=b,", "empty term");
	bad(",a", "empty term");
	bad("a in (x,y)", "unsupported");
	bad("a b=c", "unsupported");
	bad("=x", "invalid label key");
	bad("-a=x", "invalid label key");
	bad("a=-x", "invalid label value");
	bad("a=x y", "invalid label value");
	bad("Bad_Prefix/a=x", "invalid label key");
	bad("a/=x", "invalid label key");
	bad("!", "invalid label key");
	bad("!a=b", "unsupported");
	bad("a=b=c", "invalid label value");
	bad("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa="
	    "1",
	        "invalid label key"); /* 64 characters */
	/* NULL err buffers are fine. */
	assert_null(labelsel_parse("a=b,", NULL, 0));
}

static void
test_long_names_ok(void **state)
{
	char sel[400];

	(void)state;
	/* 63-character name and value, a dotted prefix. */
	snprintf(sel, sizeof(sel), "example.com/%s=%s",
	        "a234567890123456789012345678901234567890123456789012345678901"
	        "23",
	        "b234567890123456789012345678901234567890123456789012345678901"
	        "23");
	struct labelsel *ls = labelsel_parse(sel, NULL, 0);
	assert_non_null(ls);
	labelsel_free(ls);
}

/* Found by fuzz_labelsel against kubesim's ksel (apimachinery's rules):
 * a key prefix is a DNS subdomain label by label, and only space, tab,
 * CR and LF are blanks. */
static void
test_fuzz_findings(void **state)
{
	static const char *const bad[]
	        = { "example-.com/k=v", "example.-com/k=v", "a..b/k=v", ".a/k",
		          "a./k", "a=a\f", "\va=b", "a\f=b", NULL };
	static const char *const good[]
	        = { "a-b.c-d/k=v", "a.b/k", " a = b ,\tc\r\n", NULL };
	char err[256];

	(void)state;
	for (int i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		struct labelsel *ls = labelsel_parse(bad[i], err, sizeof(err));
		if (ls != NULL) {
			fail_msg("\"%s\" accepted", bad[i]);
		}
		assert_true(err[0] != '\0');
	}
	for (int i = 0; good[i] != NULL; i++) {
		struct labelsel *ls
		        = labelsel_parse(good[i], err, sizeof(err));
		if (ls == NULL) {
			fail_msg("\"%s\" refused: %s", good[i], err);
		}
		labelsel_free(ls);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equality),
		cmocka_unit_test(test_inequality_exists),
		cmocka_unit_test(test_empty_and_missing_labels),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_long_names_ok),
		cmocka_unit_test(test_fuzz_findings),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
