/* test_kpatch.c: kubesim's patch algorithms: RFC 7386 merge patch, RFC 6902
 * JSON patch, strategic merge patch; the original is never modified. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "kubesim/kpatch.h"
#include "tests/lib/testutil.h"

enum kind { MERGE, JSONP, SMP };

/* "NULL" stands for no document. */
static json_object *
P(const char *s)
{
	if (strcmp(s, "NULL") == 0) {
		return (NULL);
	}
	return (testutil_json(s, 400));
}

/* Applies patch to orig with the given algorithm, checking that neither
 * input was modified.  Returns the result (owned) or NULL with err set. */
static json_object *
run(enum kind k, const char *orig, const char *patch, char *err, size_t errlen)
{
	json_object *o = P(orig), *p = P(patch), *oc = NULL, *pc = NULL, *r;

	assert_int_equal(json_object_deep_copy(o, &oc, NULL), o ? 0 : -1);
	assert_int_equal(json_object_deep_copy(p, &pc, NULL), p ? 0 : -1);
	err[0] = '\0';
	if (k == MERGE) {
		r = kpatch_merge(o, p, err, errlen);
	} else if (k == JSONP) {
		r = kpatch_json(o, p, err, errlen);
	} else {
		r = kpatch_strategic(o, p, NULL, err, errlen);
	}
	assert_true(json_object_equal(o, oc));
	assert_true(json_object_equal(p, pc));
	if (r == NULL) {
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
	}
	json_object_put(o);
	json_object_put(p);
	json_object_put(oc);
	json_object_put(pc);
	return (r);
}

static void
ok(enum kind k, const char *orig, const char *patch, const char *expect)
{
	char err[256];
	json_object *r = run(k, orig, patch, err, sizeof(err));
	json_object *e = P(expect);
	char *got;

	if (r == NULL) {
		fail_msg("patch %s to %s: %s", patch, orig, err);
	}
	got = jx_to_string(r);
	if (!jx_equal(r, e)) {
		fail_msg("patch %s to %s: got %s want %s", patch, orig, got,
		        expect);
	}
	free(got);
	json_object_put(r);
	json_object_put(e);
}

static void
bad(enum kind k, const char *orig, const char *patch, const char *msg)
{
	char err[256];
	json_object *r = run(k, orig, patch, err, sizeof(err));

	if (r != NULL) {
		char *got = jx_to_string(r);

		fail_msg("patch %s to %s: should fail, got %s", patch, orig,
		        got);
	}
	if (strstr(err, msg) == NULL) {
		fail_msg("patch %s: error \"%s\" lacks \"%s\"", patch, err,
		        msg);
	}
}

/* ---- RFC 7386 ---- */

static void
test_merge_rfc7386_appendix(void **state)
{
	(void)state;
	ok(MERGE, "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
	ok(MERGE, "{\"a\":\"b\"}", "{\"b\":\"c\"}",
	        "{\"a\":\"b\",\"b\":\"c\"}");
	ok(MERGE, "{\"a\":\"b\"}", "{\"a\":null}", "{}");
	ok(MERGE, "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}",
	        "{\"b\":\"c\"}");
	ok(MERGE, "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
	ok(MERGE, "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
	ok(MERGE, "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
	        "{\"a\":{\"b\":\"d\"}}");
	ok(MERGE, "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
	ok(MERGE, "[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
	ok(MERGE, "{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
	ok(MERGE, "{\"a\":\"foo\"}", "\"bar\"", "\"bar\"");
	ok(MERGE, "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
	ok(MERGE, "[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
	ok(MERGE, "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}",
	        "{\"a\":{\"bb\":{}}}");
	/* A null patch would make the object null: refused. */
	bad(MERGE, "{\"a\":\"foo\"}", "NULL", "null");
	/* No target at all. */
	ok(MERGE, "NULL", "{\"a\":{\"b\":null,\"c\":1}}", "{\"a\":{\"c\":1}}");
}

static void
test_merge_rfc7386_example(void **state)
{
	(void)state;
	ok(MERGE,
	        "{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\","
	        "\"familyName\":\"Doe\"},\"tags\":[\"example\",\"sample\"],"
	        "\"content\":\"This will be unchanged\"}",
	        "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\","
	        "\"author\":{\"familyName\":null},\"tags\":[\"example\"]}",
	        "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},"
	        "\"tags\":[\"example\"],\"content\":\"This will be "
	        "unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}");
	/* Checklist 19. */
	ok(MERGE, "{\"data\":{\"a\":\"1\",\"c\":\"3\"}}",
	        "{\"data\":{\"a\":null,\"b\":\"2\"}}",
	        "{\"data\":{\"c\":\"3\",\"b\":\"2\"}}");
}

static void
test_merge_key_order(void **state)
{
	char err[128];
	json_object *r;
	char *s;

	(void)state;
	r = run(MERGE, "{\"b\":1,\"a\":{\"y\":1,\"x\":2}}",
	        "{\"c\":3,\"a\":{\"z\":0}}", err, sizeof(err));
	assert_non_null(r);
	s = jx_to_string(r);
	assert_string_equal(s,
	        "{\"b\":1,\"a\":{\"y\":1,\"x\":2,\"z\":0},"
	        "\"c\":3}");
	free(s);
	json_object_put(r);
}

/* ---- RFC 6902 ---- */

static void
test_json_rfc6902_appendix(void **state)
{
	(void)state;
	/* A.1 */
	ok(JSONP, "{\"foo\":\"bar\"}",
	        "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
	        "{\"baz\":\"qux\",\"foo\":\"bar\"}");
	/* A.2 */
	ok(JSONP, "{\"foo\":[\"bar\",\"baz\"]}",
	        "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
	        "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
	/* A.3 */
	ok(JSONP, "{\"baz\":\"qux\",\"foo\":\"bar\"}",
	        "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
	        "{\"foo\":\"bar\"}");
	/* A.4 */
	ok(JSONP, "{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
	        "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
	        "{\"foo\":[\"bar\",\"baz\"]}");
	/* A.5 */
	ok(JSONP, "{\"baz\":\"qux\",\"foo\":\"bar\"}",
	        "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
	        "{\"baz\":\"boo\",\"foo\":\"bar\"}");
	/* A.6 */
	ok(JSONP,
	        "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},"
	        "\"qux\":{\"corge\":\"grault\"}}",
	        "[{\"op\":\"move\",\"from\":\"/foo/waldo\","
	        "\"path\":\"/qux/thud\"}]",
	        "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\","
	        "\"thud\":\"fred\"}}");
	/* A.7 */
	ok(JSONP, "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
	        "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
	        "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
	/* A.8 */
	ok(JSONP, "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
	        "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
	        "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
	        "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
	/* A.9 */
	bad(JSONP, "{\"baz\":\"qux\"}",
	        "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]",
	        "testing value /baz failed");
	/* A.10 */
	ok(JSONP, "{\"foo\":\"bar\"}",
	        "[{\"op\":\"add\",\"path\":\"/child\",\"value\":"
	        "{\"grandchild\":{}}}]",
	        "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}");
	/* A.11 */
	ok(JSONP, "{\"foo\":\"bar\"}",
	        "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\","
	        "\"xyz\":123}]",
	        "{\"foo\":\"bar\",\"baz\":\"qux\"}");
	/* A.12 */
	bad(JSONP, "{\"foo\":\"bar\"}",
	        "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]",
	        "doc is missing path: \"/baz/bat\": missing value");
	/* A.13 (duplicate "op") cannot be seen after json-c parsed it. */
	/* A.14 */
	ok(JSONP, "{\"/\":9,\"~1\":10}",
	        "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
	        "{\"/\":9,\"~1\":10}");
	/* A.15 */
	bad(JSONP, "{\"/\":9,\"~1\":10}",
	        "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]",
	        "test failed");
	/* A.16 */
	ok(JSONP, "{\"foo\":[\"bar\"]}",
	        "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":"
	        "[\"abc\",\"def\"]}]",
	        "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}");
}

static void
test_json_ops(void **state)
{
	(void)state;
	/* Checklist 19. */
	ok(JSONP, "{\"data\":{\"b\":\"2\"}}",
	        "[{\"op\":\"replace\",\"path\":\"/data/b\",\"value\":\"3\"}]",
	        "{\"data\":{\"b\":\"3\"}}");
	ok(JSONP, "{\"a\":{\"b\":[1,2]}}",
	        "[{\"op\":\"copy\",\"from\":\"/a/b\",\"path\":\"/a/c\"},"
	        "{\"op\":\"add\",\"path\":\"/a/c/0\",\"value\":0},"
	        "{\"op\":\"remove\",\"path\":\"/a/b/1\"}]",
	        "{\"a\":{\"b\":[1],\"c\":[0,1,2]}}");
	/* Whole-document operations, "/" names the key "". */
	ok(JSONP, "{\"a\":1}",
	        "[{\"op\":\"replace\",\"path\":\"\","
	        "\"value\":{\"b\":2}}]",
	        "{\"b\":2}");
	ok(JSONP, "{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/\",\"value\":3}]",
	        "{\"a\":1,\"\":3}");
	ok(JSONP, "{\"a\":1}", "[{\"op\":\"add\",\"path\":\"\",\"value\":[]}]",
	        "[]");
	ok(JSONP, "{\"a\":1}",
	        "[{\"op\":\"test\",\"path\":\"\","
	        "\"value\":{\"a\":1.0}}]",
	        "{\"a\":1}");
	/* null values are values. */
	ok(JSONP, "{\"a\":1}",
	        "[{\"op\":\"add\",\"path\":\"/b\",\"value\":null},"
	        "{\"op\":\"test\",\"path\":\"/b\",\"value\":null},"
	        "{\"op\":\"replace\",\"path\":\"/a\",\"value\":null}]",
	        "{\"a\":null,\"b\":null}");
	ok(JSONP, "{\"a\":[1,2,3]}",
	        "[{\"op\":\"add\",\"path\":\"/a/3\",\"value\":4},"
	        "{\"op\":\"move\",\"from\":\"/a/0\",\"path\":\"/a/-\"},"
	        "{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]",
	        "{\"a\":[2,3,4,1]}");
	ok(JSONP, "{\"a\":{\"m~n\":1,\"x/y\":2}}",
	        "[{\"op\":\"move\",\"from\":\"/a/m~0n\",\"path\":\"/a/"
	        "x~1y\"}]",
	        "{\"a\":{\"x/y\":1}}");
	ok(JSONP, "{\"a\":1}", "[]", "{\"a\":1}");
}

static void
test_json_errors(void **state)
{
	(void)state;
	bad(JSONP, "{}", "{\"op\":\"add\"}", "must be an array");
	bad(JSONP, "{}", "[1]", "operation 0");
	bad(JSONP, "{}", "[{\"path\":\"/a\",\"value\":1}]", "operation 0");
	bad(JSONP, "{}", "[{\"op\":\"frob\",\"path\":\"/a\"}]",
	        "unexpected kind \"frob\"");
	bad(JSONP, "{}", "[{\"op\":\"add\",\"path\":\"/a\"}]",
	        "missing \"value\"");
	bad(JSONP, "{}", "[{\"op\":\"add\",\"value\":1}]", "path must be");
	bad(JSONP, "{}", "[{\"op\":\"add\",\"path\":5,\"value\":1}]",
	        "path must be");
	bad(JSONP, "{}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]",
	        "not a JSON pointer");
	bad(JSONP, "{}", "[{\"op\":\"add\",\"path\":\"/a~2\",\"value\":1}]",
	        "bad ~ escape");
	bad(JSONP, "{\"a\":1}", "[{\"op\":\"move\",\"path\":\"/b\"}]",
	        "from must be");
	bad(JSONP, "{\"data\":{}}",
	        "[{\"op\":\"remove\",\"path\":\"/data/x\"}]",
	        "doc is missing path: \"/data/x\": missing value");
	bad(JSONP, "{\"a\":1}",
	        "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":1}]",
	        "replace operation does not apply");
	bad(JSONP, "{\"a\":[1]}",
	        "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":1}]",
	        "invalid array index");
	bad(JSONP, "{\"a\":[1,2]}",
	        "[{\"op\":\"add\",\"path\":\"/a/01\",\"value\":1}]",
	        "invalid array index");
	bad(JSONP, "{\"a\":[1]}", "[{\"op\":\"remove\",\"path\":\"/a/-\"}]",
	        "missing");
	bad(JSONP, "{\"a\":[1]}", "[{\"op\":\"remove\",\"path\":\"/a/1\"}]",
	        "missing");
	bad(JSONP, "{\"a\":{\"b\":1}}",
	        "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]",
	        "is a child of");
	bad(JSONP, "{\"a\":1}",
	        "[{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/b\"}]",
	        "\"/x\"");
	bad(JSONP, "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"\"}]",
	        "whole document");
	bad(JSONP, "{\"a\":1}",
	        "[{\"op\":\"replace\",\"path\":\"\",\"value\":null}]",
	        "result is null");
	/* Through a scalar. */
	bad(JSONP, "{\"a\":1}",
	        "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", "missing");
}

/* A failing operation leaves no partial result (and the original alone). */
static void
test_json_atomic(void **state)
{
	(void)state;
	bad(JSONP, "{\"a\":1}",
	        "[{\"op\":\"add\",\"path\":\"/b\",\"value\":2},"
	        "{\"op\":\"remove\",\"path\":\"/a\"},"
	        "{\"op\":\"test\",\"path\":\"/b\",\"value\":3}]",
	        "test failed");
}

static void
test_json_limits(void **state)
{
	struct buf b = BUF_INIT;
	int i;

	(void)state;
	buf_puts(&b, "[{\"op\":\"add\",\"value\":1,\"path\":\"");
	for (i = 0; i < 2100; i++) {
		buf_puts(&b, "/a");
	}
	buf_puts(&b, "\"}]");
	bad(JSONP, "{}", buf_str(&b), "longer than 4096");
	buf_reset(&b);
	/* Each copy doubles the document. */
	buf_putc(&b, '[');
	for (i = 0; i < 40; i++) {
		buf_printf(&b,
		        "%s{\"op\":\"copy\",\"from\":\"\",\"path\":"
		        "\"/%d\"}",
		        i ? "," : "", i);
	}
	buf_putc(&b, ']');
	bad(JSONP, "{\"x\":[1,2,3,4,5,6,7,8]}", buf_str(&b), "more than");
	buf_reset(&b);
	/* Copying into itself nests deeper each time. */
	buf_puts(&b, "[");
	for (i = 0; i < 120; i++) {
		buf_printf(&b,
		        "%s{\"op\":\"copy\",\"from\":\"\",\"path\":"
		        "\"/a\"}",
		        i ? "," : "");
	}
	buf_putc(&b, ']');
	bad(JSONP, "{}", buf_str(&b), "deeper than 100");
	buf_fini(&b);
}

static void
test_deep_inputs(void **state)
{
	struct buf b = BUF_INIT;
	int i;

	(void)state;
	for (i = 0; i < 150; i++) {
		buf_puts(&b, "{\"a\":");
	}
	buf_puts(&b, "1");
	for (i = 0; i < 150; i++) {
		buf_putc(&b, '}');
	}
	bad(MERGE, "{}", buf_str(&b), "deeper than 100");
	bad(MERGE, buf_str(&b), "{}", "deeper than 100");
	bad(SMP, "{}", buf_str(&b), "deeper than 100");
	bad(JSONP, buf_str(&b), "[]", "deeper than 100");
	buf_fini(&b);
}

/* ---- strategic merge patch ---- */

static void
test_smp_containers_by_name(void **state)
{
	(void)state;
	ok(SMP,
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"}"
	        ","
	        "{\"name\":\"b\",\"image\":\"b:1\",\"args\":[\"x\"]}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"b:2\"}"
	        ","
	        "{\"name\":\"c\",\"image\":\"c:1\"}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"}"
	        ","
	        "{\"name\":\"b\",\"image\":\"b:2\",\"args\":[\"x\"]},"
	        "{\"name\":\"c\",\"image\":\"c:1\"}]}}");
	/* env by name inside a Deployment's template. */
	ok(SMP,
	        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
	        "\"w\",\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":"
	        "\"B\",\"value\":\"2\"}]}]}}}}",
	        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
	        "\"w\",\"env\":[{\"name\":\"B\",\"value\":\"3\"},{\"name\":"
	        "\"C\",\"value\":\"4\"}]}]}}}}",
	        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
	        "\"w\",\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":"
	        "\"B\",\"value\":\"3\"},{\"name\":\"C\",\"value\":\"4\"}]}]}}"
	        "}}");
	/* conditions by type, ownerReferences by uid. */
	ok(SMP,
	        "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	        "\"False\"},{\"type\":\"X\",\"status\":\"True\"}]},"
	        "\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\","
	        "\"name\":\"o\"}]}}",
	        "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	        "\"True\"}]},\"metadata\":{\"ownerReferences\":[{\"uid\":"
	        "\"u2\",\"name\":\"p\"}]}}",
	        "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	        "\"True\"},{\"type\":\"X\",\"status\":\"True\"}]},"
	        "\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\","
	        "\"name\":\"o\"},{\"uid\":\"u2\",\"name\":\"p\"}]}}");
}

static void
test_smp_patch_delete(void **state)
{
	(void)state;
	ok(SMP,
	        "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},"
	        "{\"name\":\"c\"}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"b\",\"$patch\":"
	        "\"delete\"}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":"
	        "\"c\"}]}}");
	/* $patch: delete on a map empties it. */
	ok(SMP, "{\"spec\":{\"x\":{\"a\":1}}}",
	        "{\"spec\":{\"x\":{\"$patch\":\"delete\"}}}",
	        "{\"spec\":{\"x\":{}}}");
}

static void
test_smp_patch_replace_merge(void **state)
{
	(void)state;
	ok(SMP, "{\"spec\":{\"selector\":{\"a\":\"1\",\"b\":\"2\"}}}",
	        "{\"spec\":{\"selector\":{\"$patch\":\"replace\",\"x\":"
	        "\"1\"}}}",
	        "{\"spec\":{\"selector\":{\"x\":\"1\"}}}");
	ok(SMP,
	        "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]"
	        "}}",
	        "{\"spec\":{\"containers\":[{\"$patch\":\"replace\"},"
	        "{\"name\":\"z\"}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"z\"}]}}");
	ok(SMP, "{\"spec\":{\"s\":{\"a\":\"1\"}}}",
	        "{\"spec\":{\"s\":{\"$patch\":\"merge\",\"b\":\"2\"}}}",
	        "{\"spec\":{\"s\":{\"a\":\"1\",\"b\":\"2\"}}}");
}

static void
test_smp_set_element_order(void **state)
{
	char err[256];
	json_object *r;
	char *s;

	(void)state;
	r = run(SMP,
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},"
	        "{\"name\":\"b\"},{\"name\":\"c\"}]}}",
	        "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},"
	        "{\"name\":\"a\"},{\"name\":\"d\"}],\"containers\":[{\"name\":"
	        "\"a\",\"image\":\"2\"},{\"name\":\"d\"}]}}",
	        err, sizeof(err));
	assert_non_null(r);
	s = jx_to_string(r);
	assert_string_equal(s,
	        "{\"spec\":{\"containers\":[{\"name\":\"c\"},"
	        "{\"name\":\"a\",\"image\":\"2\"},{\"name\":"
	        "\"d\"},{\"name\":\"b\"}]}}");
	free(s);
	json_object_put(r);
}

static void
test_smp_finalizers(void **state)
{
	(void)state;
	ok(SMP, "{\"metadata\":{\"finalizers\":[\"x\",\"y\",\"z\"]}}",
	        "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	        "[\"y\"]}}",
	        "{\"metadata\":{\"finalizers\":[\"x\",\"z\"]}}");
	/* A merge primitive list is a set union. */
	ok(SMP, "{\"metadata\":{\"finalizers\":[\"x\",\"y\"]}}",
	        "{\"metadata\":{\"finalizers\":[\"y\",\"w\"]}}",
	        "{\"metadata\":{\"finalizers\":[\"x\",\"y\",\"w\"]}}");
	/* What kubectl apply sends. */
	ok(SMP, "{\"metadata\":{\"finalizers\":[\"x\",\"y\",\"z\"]}}",
	        "{\"metadata\":{\"$setElementOrder/finalizers\":[\"z\",\"x\"],"
	        "\"$deleteFromPrimitiveList/finalizers\":[\"y\"]}}",
	        "{\"metadata\":{\"finalizers\":[\"z\",\"x\"]}}");
	ok(SMP, "{\"metadata\":{\"name\":\"n\"}}",
	        "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	        "[\"y\"],\"finalizers\":[\"q\"]}}",
	        "{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"q\"]}}");
}

static void
test_smp_retain_keys(void **state)
{
	(void)state;
	ok(SMP,
	        "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\","
	        "\"rollingUpdate\":{\"maxSurge\":1}}}}",
	        "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],"
	        "\"type\":\"Recreate\"}}}",
	        "{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}");
	bad(SMP, "{\"spec\":{}}",
	        "{\"spec\":{\"s\":{\"$retainKeys\":[\"a\"],\"b\":1}}}",
	        "not present in $retainKeys");
	bad(SMP, "{}", "{\"s\":{\"$retainKeys\":[1]}}", "list strings");
}

static void
test_smp_maps_and_plain_lists(void **state)
{
	(void)state;
	ok(SMP, "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
	        "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"}}}",
	        "{\"metadata\":{\"labels\":{\"b\":\"2\",\"c\":\"3\"}}}");
	/* No merge key: replaced. */
	ok(SMP,
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":[\"1\","
	        "\"2\"]}],\"tolerations\":[{\"key\":\"k\"}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":[\"3\"]}]"
	        ","
	        "\"tolerations\":[{\"key\":\"j\"}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":[\"3\"]}]"
	        ","
	        "\"tolerations\":[{\"key\":\"j\"}]}}");
	/* Directives never reach the result, even in new values. */
	ok(SMP, "NULL",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":"
	        "\"merge\",\"env\":[{\"name\":\"E\",\"$patch\":\"delete\"}]}],"
	        "\"x\":[{\"$patch\":\"replace\"},{\"y\":{\"$patch\":"
	        "\"merge\"}}]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[]}],"
	        "\"x\":[{\"y\":{}}]}}");
	/* Whole-object patch of a pod. */
	ok(SMP, "{\"kind\":\"Pod\",\"spec\":{\"containers\":[]}}",
	        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":["
	        "{\"containerPort\":80}]}]}}",
	        "{\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":\"a\","
	        "\"ports\":[{\"containerPort\":80}]}]}}");
}

static void
test_smp_custom_schema(void **state)
{
	static const struct kpatch_listkey keys[] = {
		{ "items", "id" },
		{ "items[].tags", NULL },
		{ NULL, NULL },
	};
	const struct kpatch_schema schema = { keys };
	json_object *o = P("{\"items\":[{\"id\":1,\"tags\":[\"a\"]}],"
	                   "\"spec\":{\"containers\":[{\"name\":\"a\"}]}}");
	json_object *p = P("{\"items\":[{\"id\":1,\"tags\":[\"b\"]},"
	                   "{\"id\":2}],\"spec\":{\"containers\":[{\"name\":"
	                   "\"b\"}]}}");
	json_object *e = P("{\"items\":[{\"id\":1,\"tags\":[\"a\",\"b\"]},"
	                   "{\"id\":2}],\"spec\":{\"containers\":[{\"name\":"
	                   "\"b\"}]}}");
	json_object *r;
	char err[128];

	(void)state;
	r = kpatch_strategic(o, p, &schema, err, sizeof(err));
	assert_non_null(r);
	assert_true(jx_equal(r, e));
	json_object_put(r);
	json_object_put(o);
	json_object_put(p);
	json_object_put(e);
}

static void
test_smp_errors(void **state)
{
	(void)state;
	bad(SMP, "{}", "[1]", "must be an object");
	bad(SMP, "[1]", "{}", "not an object");
	bad(SMP, "{}", "{\"$frob\":1}", "unknown $ directive");
	bad(SMP, "{}", "{\"a\":{\"$patch\":\"explode\"}}", "unknown $patch");
	bad(SMP, "{}", "{\"a\":{\"$patch\":3}}", "unknown $patch");
	bad(SMP, "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	        "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}",
	        "merge key: name");
	bad(SMP, "{}", "{\"spec\":{\"containers\":[\"a\"]}}", "merge key");
	bad(SMP, "{}", "{\"spec\":{\"$setElementOrder/containers\":{}}}",
	        "$setElementOrder");
	bad(SMP, "{}",
	        "{\"metadata\":{\"finalizers\":[{\"$patch\":"
	        "\"delete\"}]}}",
	        "primitive list");
	bad(SMP, "{}", "{\"spec\":{\"containers\":[{\"$patch\":\"delete\"}]}}",
	        "\"spec.containers[]\"");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_rfc7386_appendix),
		cmocka_unit_test(test_merge_rfc7386_example),
		cmocka_unit_test(test_merge_key_order),
		cmocka_unit_test(test_json_rfc6902_appendix),
		cmocka_unit_test(test_json_ops),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_json_atomic),
		cmocka_unit_test(test_json_limits),
		cmocka_unit_test(test_deep_inputs),
		cmocka_unit_test(test_smp_containers_by_name),
		cmocka_unit_test(test_smp_patch_delete),
		cmocka_unit_test(test_smp_patch_replace_merge),
		cmocka_unit_test(test_smp_set_element_order),
		cmocka_unit_test(test_smp_finalizers),
		cmocka_unit_test(test_smp_retain_keys),
		cmocka_unit_test(test_smp_maps_and_plain_lists),
		cmocka_unit_test(test_smp_custom_schema),
		cmocka_unit_test(test_smp_errors),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
