/* test_jsonx.c: json-c helpers: paths, equality, stripping, parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "tests/lib/testutil.h"

static json_object *
P(const char *s)
{
	return (testutil_json(s, 0));
}

static bool
eq(const char *a, const char *b)
{
	json_object *oa = P(a), *ob = P(b);
	bool r = jx_equal(oa, ob), r2 = jx_equal(ob, oa);

	assert_true(r == r2);
	json_object_put(oa);
	json_object_put(ob);
	return (r);
}

static const char *doc = "{\"metadata\":{\"name\":\"n1\",\"namespace\":\"ns\","
                         "\"generation\":7,\"labels\":{\"app.kubernetes.io/"
                         "name\":\"web\",\"a\":\"b\"},\"deleted\":true,"
                         "\"nil\":null,\"big\":18446744073709551615,"
                         "\"neg\":-5,\"dbl\":1.5},"
                         "\"spec\":{\"containers\":[{\"image\":\"i0\"},"
                         "{\"image\":\"i1\"}]}}";

static void
test_getters(void **state)
{
	json_object *o = P(doc);
	int64_t n = 42;
	bool b = false;

	(void)state;
	assert_string_equal(jx_get_str(o, "metadata.name"), "n1");
	assert_string_equal(jx_get_str(o, "spec.containers.1.image"), "i1");
	assert_null(jx_get_str(o, "spec.containers.2.image"));
	assert_null(jx_get_str(o, "spec.containers.x.image"));
	assert_null(jx_get_str(o, "metadata.labels.app.kubernetes.io/name"));
	assert_string_equal(json_object_get_string(jx_getv(o, "metadata",
	                            "labels", "app.kubernetes.io/name", NULL)),
	        "web");
	assert_ptr_equal(jx_getv(o, NULL), o);
	assert_ptr_equal(jx_get(o, ""), o);
	assert_null(jx_getv(o, "metadata", "name", "x", NULL));
	assert_int_equal(jx_get_int(o, "metadata.generation", &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(jx_get_int(o, "metadata.neg", &n), 0);
	assert_int_equal(n, -5);
	assert_true(jx_get_bool(o, "metadata.deleted", &b) == 0 && b);
	json_object_put(o);
}

static void
test_getters_wrong_types(void **state)
{
	json_object *o = P(doc);
	int64_t n = 42;
	bool b = false;

	(void)state;
	assert_null(jx_get_str(o, "metadata.generation"));
	assert_null(jx_get_str(o, "metadata"));
	assert_null(jx_get_str(o, "metadata.name.x"));
	assert_null(jx_get_str(o, "metadata..name"));
	assert_null(jx_get_str(o, ".metadata"));
	assert_null(jx_get_str(o, "metadata."));
	assert_null(jx_get(o, "metadata.nil"));
	assert_null(jx_get(NULL, "a"));
	assert_null(jx_get(o, NULL));
	assert_int_equal(jx_get_int(o, "metadata.name", &n), -1);
	assert_int_equal(jx_get_int(o, "metadata.dbl", &n), -1);
	assert_int_equal(jx_get_int(o, "metadata.big", &n), -1);
	assert_int_equal(jx_get_int(o, "metadata.nil", &n), -1);
	assert_int_equal(jx_get_int(o, "nope", &n), -1);
	assert_int_equal(n, 42);
	assert_int_equal(jx_get_bool(o, "metadata.generation", &b), -1);
	assert_int_equal(jx_get_bool(o, "metadata.name", &b), -1);
	assert_false(b);
	/* An index segment on an object is a key. */
	assert_null(jx_get(o, "metadata.0"));
	json_object_put(o);
}

static void
test_set_path(void **state)
{
	json_object *o = P("{\"metadata\":{\"name\":\"x\",\"n\":null}}");
	json_object *v;
	char *s;

	(void)state;
	assert_int_equal(jx_set_path(o, "metadata.labels.app",
	                         json_object_new_string("web")),
	        0);
	assert_int_equal(jx_set_path(o, "status.phase",
	                         json_object_new_string("Running")),
	        0);
	assert_int_equal(
	        jx_set_path(o, "metadata.n.x", json_object_new_int(1)), 0);
	assert_int_equal(jx_setv(o, json_object_new_string("v"), "metadata",
	                         "annotations", "a.b/c", NULL),
	        0);
	assert_int_equal(
	        jx_set_path(o, "metadata.name", json_object_new_string("y")),
	        0);
	s = jx_to_string(o);
	assert_string_equal(s,
	        "{\"metadata\":{\"name\":\"y\",\"n\":{\"x\":1},\"labels\":{"
	        "\"app\":\"web\"},\"annotations\":{\"a.b/c\":\"v\"}},"
	        "\"status\":{\"phase\":\"Running\"}}");
	free(s);

	/* Failures leave obj unchanged and value with the caller. */
	v = json_object_new_int(5);
	assert_int_equal(jx_set_path(o, "metadata.name.x", v), -1);
	assert_int_equal(jx_set_path(o, "a..b", v), -1);
	assert_int_equal(jx_set_path(o, "", v), -1);
	assert_int_equal(jx_set_path(o, "new.", v), -1);
	assert_int_equal(jx_setv(o, v, NULL), -1);
	assert_null(jx_get(o, "new"));
	assert_null(jx_get(o, "a"));
	json_object_put(v);
	json_object_put(o);
}

static void
test_set_path_array_root(void **state)
{
	json_object *a = json_object_new_array();
	json_object *v = json_object_new_int(1);

	(void)state;
	assert_int_equal(jx_set_path(a, "x", v), -1);
	assert_int_equal(jx_set_path(NULL, "x", v), -1);
	json_object_put(v);
	json_object_put(a);
}

static void
test_equal(void **state)
{
	(void)state;
	assert_true(eq("{\"a\":1,\"b\":[1,2]}", "{\"b\":[1,2],\"a\":1}"));
	assert_false(eq("{\"b\":[2,1]}", "{\"b\":[1,2]}"));
	assert_true(eq("[[1,[2,{\"x\":[]}]],{}]", "[[1,[2,{\"x\":[]}]],{}]"));
	assert_false(eq("[[1,[2,{\"x\":[]}]],{}]", "[[1,[2,{\"x\":{}}]],{}]"));
	assert_true(eq("1", "1.0"));
	assert_true(eq("[100]", "[1e2]"));
	assert_true(eq("-0", "0.0"));
	assert_false(eq("1", "1.5"));
	assert_false(eq("1", "\"1\""));
	assert_false(eq("true", "1"));
	assert_false(eq("false", "0"));
	assert_true(eq("false", "false"));
	assert_false(eq("{}", "[]"));
	assert_false(eq("\"\"", "[]"));
	assert_false(eq("{\"a\":null}", "{}"));
	assert_true(eq("{\"a\":null}", "{\"a\":null}"));
	assert_false(eq("{\"a\":null}", "{\"b\":null}"));
	assert_false(eq("{\"a\":1}", "{\"a\":1,\"b\":2}"));
	assert_false(eq("[1]", "[1,1]"));
	assert_true(eq("\"a\\u0000b\"", "\"a\\u0000b\""));
	assert_false(eq("\"a\\u0000b\"", "\"a\\u0000c\""));
	assert_false(eq("\"ab\"", "\"abc\""));
	assert_true(eq("9223372036854775807", "9223372036854775807"));
	assert_false(eq("9223372036854775807", "9223372036854775806"));
	assert_false(eq("18446744073709551615", "9223372036854775807"));
	assert_true(eq("18446744073709551615", "18446744073709551615"));
	assert_false(eq("9007199254740993", "9007199254740992.0"));
	assert_true(jx_equal(NULL, NULL));
}

static void
test_equal_null(void **state)
{
	json_object *o = json_object_new_object();
	json_object *null_in_obj = P("{\"n\":null}");

	(void)state;
	assert_false(jx_equal(NULL, o));
	assert_false(jx_equal(o, NULL));
	assert_true(jx_equal(jx_get(null_in_obj, "n"), NULL));
	json_object_put(o);
	json_object_put(null_in_obj);
}

static void
test_strip(void **state)
{
	json_object *o = P("{\"metadata\":{\"name\":\"a\",\"managedFields\":"
	                   "[{\"x\":1}],\"labels\":{\"a.b\":\"c\"}},"
	                   "\"status\":{},\"items\":[0,1,2]}");
	json_object *c;
	char *s;

	(void)state;
	c = jx_copy_strip(o, "metadata.managedFields", "status", "nope.x",
	        "metadata.labels.a", "", ".", "items.1", "items.9",
	        "metadata.", NULL);
	s = jx_to_string(c);
	assert_string_equal(s,
	        "{\"metadata\":{\"name\":\"a\",\"labels\":{\"a.b\":\"c\"}},"
	        "\"items\":[0,2]}");
	free(s);
	/* The original is untouched and the copy is independent. */
	assert_non_null(jx_get(o, "metadata.managedFields"));
	assert_ptr_not_equal(jx_get(o, "metadata"), jx_get(c, "metadata"));
	json_object_put(c);

	jx_strip(o, "metadata.name");
	jx_strip(o, "metadata.name");
	jx_strip(o, "status.phase.x");
	jx_strip(NULL, "a");
	jx_strip(o, NULL);
	assert_null(jx_get(o, "metadata.name"));
	assert_non_null(jx_get(o, "status"));
	assert_null(jx_copy_strip(NULL, "a", NULL));
	c = jx_copy_stripa(o, NULL);
	assert_true(jx_equal(c, o));
	json_object_put(c);
	json_object_put(o);
}

static void
test_array_len(void **state)
{
	json_object *o = P("{\"a\":[1,2,3],\"e\":[],\"s\":\"abc\","
	                   "\"o\":{\"x\":1}}");

	(void)state;
	assert_int_equal(jx_array_len(jx_get(o, "a")), 3);
	assert_int_equal(jx_array_len(jx_get(o, "e")), 0);
	assert_int_equal(jx_array_len(jx_get(o, "s")), 0);
	assert_int_equal(jx_array_len(jx_get(o, "o")), 0);
	assert_int_equal(jx_array_len(jx_get(o, "nope")), 0);
	assert_int_equal(jx_array_len(NULL), 0);
	json_object_put(o);
}

/* jx_copy: an independent deep copy, NULL for NULL; jx_copy_obj: the same
 * for an object, a new empty object for anything else. */
static void
test_copy(void **state)
{
	json_object *o = P("{\"status\":{\"phase\":\"Ready\",\"n\":[1]},"
	                   "\"s\":\"x\",\"a\":[1,{\"b\":2}]}");
	json_object *c;

	(void)state;
	assert_null(jx_copy(NULL));
	c = jx_copy(o);
	assert_non_null(c);
	assert_ptr_not_equal(c, o);
	assert_true(jx_equal(c, o));
	jx_strip(c, "status.phase");
	assert_non_null(jx_get(o, "status.phase"));
	json_object_put(c);
	c = jx_copy(jx_get(o, "a"));
	assert_true(jx_equal(c, jx_get(o, "a")));
	assert_ptr_not_equal(
	        json_object_array_get_idx(c, 1), jx_get(o, "a.1"));
	json_object_put(c);

	c = jx_copy_obj(jx_get(o, "status"));
	assert_true(jx_equal(c, jx_get(o, "status")));
	assert_ptr_not_equal(c, jx_get(o, "status"));
	json_object_put(c);
	for (const char *p = "s\0a\0nope\0"; *p != '\0'; p += strlen(p) + 1) {
		c = jx_copy_obj(jx_get(o, p));
		assert_true(json_object_is_type(c, json_type_object));
		assert_int_equal(json_object_object_length(c), 0);
		json_object_put(c);
	}
	c = jx_copy_obj(NULL);
	assert_int_equal(json_object_object_length(c), 0);
	json_object_put(c);
	json_object_put(o);
}

static void
test_to_string(void **state)
{
	json_object *o = P("{ \"url\" : \"/api/v1\", \"n\": [1, 2.5, true] }");
	char *s;

	(void)state;
	s = jx_to_string(o);
	assert_string_equal(s, "{\"url\":\"/api/v1\",\"n\":[1,2.5,true]}");
	free(s);
	s = jx_to_string(NULL);
	assert_string_equal(s, "null");
	free(s);
	json_object_put(o);
}

static void
expect_parse_error(const char *s, size_t len, int depth, const char *want)
{
	char err[128] = "";
	json_object *o = jx_parse(s, len, depth, err, sizeof(err));

	if (o != NULL) {
		fail_msg("parse of '%.*s' should fail", (int)len, s);
	}
	if (strstr(err, want) == NULL) {
		fail_msg("error for '%.*s' is '%s', want '%s'", (int)len, s,
		        err, want);
	}
}

static void
test_parse_errors(void **state)
{
	(void)state;
	expect_parse_error("{\"a\":", 5, 0, "truncated");
	expect_parse_error("[1,2", 4, 0, "truncated");
	expect_parse_error("\"abc", 4, 0, "truncated");
	expect_parse_error("", 0, 0, "truncated");
	expect_parse_error("   ", 3, 0, "truncated");
	expect_parse_error("{} x", 4, 0, "trailing data at offset 3");
	expect_parse_error("{}{}", 4, 0, "trailing data at offset 2");
	expect_parse_error("1 2", 3, 0, "trailing");
	expect_parse_error("{}\0", 3, 0, "NUL byte at offset 2");
	expect_parse_error("\"a\0b\"", 5, 0, "NUL byte at offset 2");
	expect_parse_error("[1,]", 4, 0, "");
	expect_parse_error("{a:1}", 5, 0, "");
	expect_parse_error("null", 4, 0, "null");
	expect_parse_error("\"\xff\"", 3, 0, "");
	expect_parse_error("[[[[1]]]]", 9, 4, "too deep");
	expect_parse_error("{\"a\":{\"b\":{\"c\":{}}}}", 20, 3, "too deep");
	expect_parse_error(NULL, 0, 0, "");
	/* json-c reads these as doubles; none is JSON */
	expect_parse_error("{\"a\":NaN}", 9, 0, "not finite");
	expect_parse_error("[1,-Infinity]", 13, 0, "not finite");
	expect_parse_error("{\"a\":[Infinity]}", 16, 0, "not finite");
	expect_parse_error("[1e999]", 7, 0, "not finite");
	expect_parse_error("[-2E+400]", 9, 0, "not finite");
	/* No error buffer is fine. */
	assert_null(jx_parse("[", 1, 0, NULL, 0));
}

static void
test_parse_ok(void **state)
{
	json_object *o;
	char err[64];
	int64_t n = 0;
	char *deep;
	size_t i;

	(void)state;
	/* the words and exponents that only look like those */
	o = jx_parse("{\"NaN\":\"Infinity 1e999\",\"x\":1.5e3}", 34, 0, err,
	        sizeof(err));
	assert_non_null(o);
	json_object_put(o);
	o = jx_parse("[[[1]]]", 7, 4, err, sizeof(err));
	assert_non_null(o);
	json_object_put(o);
	o = jx_parse("{\"a\":{\"b\":{\"c\":{}}}}", 20, 4, err, sizeof(err));
	assert_non_null(o);
	json_object_put(o);
	/* Length-bounded: the bytes after len are not read. */
	o = jx_parse("{\"a\":12}XYZ", 8, 0, err, sizeof(err));
	assert_non_null(o);
	assert_int_equal(jx_get_int(o, "a", &n), 0);
	assert_int_equal(n, 12);
	json_object_put(o);
	o = jx_parse(" 42 \n", 5, 0, err, sizeof(err));
	assert_non_null(o);
	assert_int_equal(json_object_get_int64(o), 42);
	json_object_put(o);
	o = jx_parse("123", 2, 0, err, sizeof(err));
	assert_int_equal(json_object_get_int64(o), 12);
	json_object_put(o);
	/* The default depth allows 64 levels, not 65. */
	deep = calloc(1, 200);
	for (i = 0; i < 64; i++) {
		deep[i] = '[';
		deep[127 - i] = ']';
	}
	o = jx_parse(deep, 128, 0, err, sizeof(err));
	assert_non_null(o);
	json_object_put(o);
	memmove(deep + 1, deep, 128);
	deep[0] = '[';
	deep[129] = ']';
	assert_null(jx_parse(deep, 130, 0, err, sizeof(err)));
	free(deep);
}

/* The structure-only reader names an object however deep it is. */
static void
test_text(void **state)
{
	struct buf b = BUF_INIT;
	const char *p, *end, *v;
	char out[64];

	(void)state;
	buf_puts(&b,
	        "{ \"kind\" : \"X\", \"spec\": {\"s\": \"}]\\\"\"}, "
	        "\"deep\": ");
	for (int i = 0; i < 100000; i++) {
		buf_putc(&b, '[');
	}
	for (int i = 0; i < 100000; i++) {
		buf_putc(&b, ']');
	}
	buf_puts(&b,
	        ", \"metadata\": {\"name\": \"n\\u0001\\\"x\", "
	        "\"namespace\": \"ns\"}} tail");
	p = b.data;
	end = b.data + b.len;
	/* the value's end, at any depth */
	assert_ptr_equal(jx_text_skip(p, end), end - 5);
	assert_null(jx_text_skip(p, end - 6));
	assert_ptr_equal(jx_text_skip("12,", (const char *)"12," + 3),
	        (const char *)"12," + 2);
	/* members of the top level only */
	v = jx_text_member(p, end, "kind");
	jx_text_string(v, end, out, sizeof(out));
	assert_string_equal(out, "X");
	assert_null(jx_text_member(p, end, "s"));
	assert_null(jx_text_member(p, end, "nope"));
	assert_null(jx_text_member(NULL, end, "kind"));
	assert_null(jx_text_member("[1]", (const char *)"[1]" + 3, "kind"));
	jx_text_name(p, end, out, sizeof(out));
	assert_string_equal(out, "ns/n?\"x");
	jx_text_name("{}", (const char *)"{}" + 2, out, sizeof(out));
	assert_string_equal(out, "");
	jx_text_string("7", (const char *)"7" + 1, out, sizeof(out));
	assert_string_equal(out, "");
	jx_text_string("\"abcdef\"", (const char *)"\"abcdef\"" + 8, out, 4);
	assert_string_equal(out, "abc");
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getters),
		cmocka_unit_test(test_getters_wrong_types),
		cmocka_unit_test(test_set_path),
		cmocka_unit_test(test_set_path_array_root),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_equal_null),
		cmocka_unit_test(test_strip),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_array_len),
		cmocka_unit_test(test_to_string),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_text),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
