/* test_yamlj.c: YAML to JSON conversion (common/yamlj.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/yamlj.h"

/* The first document of text as compact JSON text (caller frees), or
 * "ERR: <message>". */
static char *
to_json(const char *text)
{
	char err[256];
	json_object *doc;
	char *s;

	if (yamlj_parse_doc(text, strlen(text), &doc, err, sizeof(err)) != 0) {
		size_t n = strlen(err) + 6;

		s = malloc(n);
		snprintf(s, n, "ERR: %s", err);
		return (s);
	}
	s = strdup(json_object_to_json_string_ext(
	        doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	return (s);
}

static void
expect(const char *yaml, const char *json)
{
	char *got = to_json(yaml);

	if (strcmp(got, json) != 0) {
		print_error("yaml <%s>: got %s, want %s\n", yaml, got, json);
	}
	assert_string_equal(got, json);
	free(got);
}

static void
expect_err(const char *yaml, const char *needle)
{
	char *got = to_json(yaml);

	if (strncmp(got, "ERR: ", 5) != 0 || strstr(got, needle) == NULL) {
		print_error("yaml <%s>: got %s, want error with '%s'\n", yaml,
		        got, needle);
		fail();
	}
	free(got);
}

static void
test_scalars(void **state)
{
	static const char *const table[][2] = {
		{ "true", "true" },
		{ "True", "true" },
		{ "TRUE", "true" },
		{ "false", "false" },
		{ "yes", "true" },
		{ "No", "false" },
		{ "on", "true" },
		{ "OFF", "false" },
		{ "y", "true" },
		{ "null", "null" },
		{ "Null", "null" },
		{ "~", "null" },
		{ "", "null" },
		{ "42", "42" },
		{ "-17", "-17" },
		{ "+12", "12" },
		{ "0", "0" },
		{ "0x1F", "31" },
		{ "-0x10", "-16" },
		{ "0o17", "15" },
		{ "017", "15" },
		{ "0b101", "5" },
		{ "1_000", "1000" },
		{ "9223372036854775807", "9223372036854775807" },
		{ "-9223372036854775808", "-9223372036854775808" },
		{ "18446744073709551615", "18446744073709551615" },
		{ "1.5", "1.5" },
		{ "-2e3", "-2e3" },
		{ "1.0e+3", "1.0e+3" },
		{ ".5", "0.5" },
		{ "09", "9.0" },
		{ ".inf", "\".inf\"" },
		{ "-.Inf", "\"-.Inf\"" },
		{ ".nan", "\".nan\"" },
		{ "1e400", "\"1e400\"" },
		{ "hello", "\"hello\"" },
		{ "1.2.3", "\"1.2.3\"" },
		{ "0x", "\"0x\"" },
		{ "12abc", "\"12abc\"" },
		{ "2001-12-14", "\"2001-12-14\"" },
		{ "'true'", "\"true\"" },
		{ "\"42\"", "\"42\"" },
		{ "''", "\"\"" },
		{ "'null'", "\"null\"" },
		{ "\"a\\tb\"", "\"a\\tb\"" },
		{ "|\n  text\n", "\"text\\n\"" },
		{ ">\n  a\n  b\n", "\"a b\\n\"" },
		{ "!!str 42", "\"42\"" },
		{ "!!str true", "\"true\"" },
		{ "!!int \"42\"", "42" },
		{ "!!bool 'yes'", "true" },
		{ "!!float 3", "3.0" },
		{ "!!null ''", "null" },
		{ "!custom 7", "\"7\"" },
		{ "<<", "\"<<\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		expect(table[i][0], table[i][1]);
	}
}

static void
test_tag_mismatch(void **state)
{
	(void)state;
	expect_err("!!int abc", "does not match its tag");
	expect_err("!!bool maybe", "does not match its tag");
	expect_err("!!float x1", "does not match its tag");
	expect_err("!!int 1.5", "does not match its tag");
}

static void
test_nested(void **state)
{
	(void)state;
	expect("a:\n  b: [1, 2, {c: d}]\n  e:\n  - x\n  - v: z\n    w: ~\n",
	        "{\"a\":{\"b\":[1,2,{\"c\":\"d\"}],\"e\":[\"x\",{\"v\":\"z\","
	        "\"w\":null}]}}");
	expect("- - - deep\n", "[[[\"deep\"]]]");
	expect("{}", "{}");
	expect("[]", "[]");
	expect("a: 1\na: 2\n", "{\"a\":2}");
}

static void
test_keys_become_strings(void **state)
{
	(void)state;
	/* As in kubectl (go-yaml v2): an unquoted y or no key is a
	 * boolean. */
	expect("y: 1\nno: 2\n'y': 3\n", "{\"true\":1,\"false\":2,\"y\":3}");
	expect("1: a\ntrue: b\nnull: c\n1.5: d\n0x10: e\n'x': f\n",
	        "{\"1\":\"a\",\"true\":\"b\",\"null\":\"c\",\"1.5\":\"d\","
	        "\"16\":\"e\",\"x\":\"f\"}");
	expect_err("? [a]\n: b\n", "mapping key is not a scalar");
	expect_err("{a: 1}: b\n", "mapping key is not a scalar");
}

static void
test_json_input(void **state)
{
	(void)state;
	expect("{\"apiVersion\": \"v1\", \"n\": 1.5e3, \"arr\": [true, null, "
	       "\"x\", -3], \"s\": \"a\\u00e9\", \"o\": {}}",
	        "{\"apiVersion\":\"v1\",\"n\":1.5e3,\"arr\":[true,null,\"x\",-"
	        "3],"
	        "\"s\":\"a\xc3\xa9\",\"o\":{}}");
}

static void
test_multi_doc(void **state)
{
	const char *text = "a: 1\n---\n---\nb: 2\n...\n---\nnull\n---\n[3]\n";
	char err[256];
	json_object *docs, *first;

	(void)state;
	docs = yamlj_parse_all(text, strlen(text), err, sizeof(err));
	assert_non_null(docs);
	assert_string_equal(
	        json_object_to_json_string_ext(docs, JSON_C_TO_STRING_PLAIN),
	        "[{\"a\":1},{\"b\":2},[3]]");
	json_object_put(docs);
	first = yamlj_parse(text, strlen(text), err, sizeof(err));
	assert_non_null(first);
	assert_string_equal(
	        json_object_to_json_string_ext(first, JSON_C_TO_STRING_PLAIN),
	        "{\"a\":1}");
	json_object_put(first);

	docs = yamlj_parse_all("", 0, err, sizeof(err));
	assert_non_null(docs);
	assert_int_equal(json_object_array_length(docs), 0);
	json_object_put(docs);
	assert_null(yamlj_parse("# only a comment\n", 17, err, sizeof(err)));
	assert_non_null(strstr(err, "no document"));
	/* An error in a later document fails parse_all only. */
	text = "a: 1\n---\nb: [\n";
	first = yamlj_parse(text, strlen(text), err, sizeof(err));
	assert_non_null(first);
	json_object_put(first);
	assert_null(yamlj_parse_all(text, strlen(text), err, sizeof(err)));
}

static void
test_anchors_and_merge(void **state)
{
	const char *text = "base: &b {x: 1, k: 2}\n"
	                   "c: *b\n"
	                   "d:\n  <<: *b\n  k: 3\n"
	                   "e:\n  k: 4\n  <<: [{x: 5, z: 6}, {x: 7, w: 8}]\n"
	                   "s: &s hello\n"
	                   "t: *s\n"
	                   "f: {!!merge <<: {q: 1}}\n"
	                   "g: {'<<': {q: 1}}\n";
	char err[256];
	json_object *doc, *c, *v;

	(void)state;
	doc = yamlj_parse(text, strlen(text), err, sizeof(err));
	assert_non_null(doc);
	assert_string_equal(
	        json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN),
	        "{\"base\":{\"x\":1,\"k\":2},\"c\":{\"x\":1,\"k\":2},"
	        "\"d\":{\"k\":3,\"x\":1},\"e\":{\"k\":4,\"x\":5,\"z\":6,\"w\":"
	        "8},"
	        "\"s\":\"hello\",\"t\":\"hello\",\"f\":{\"q\":1},"
	        "\"g\":{\"<<\":{\"q\":1}}}");
	/* An alias is a copy: changing it leaves the anchor alone. */
	assert_true(json_object_object_get_ex(doc, "c", &c));
	json_object_object_add(c, "x", json_object_new_int(99));
	assert_true(json_object_object_get_ex(doc, "base", &v));
	assert_true(json_object_object_get_ex(v, "x", &v));
	assert_int_equal(json_object_get_int(v), 1);
	json_object_put(doc);

	expect_err("a: *nope\n", "unknown anchor 'nope'");
	expect_err("a: &x [1, *x]\n", "unknown anchor 'x'");
	expect_err("a:\n  <<: 3\n", "merge key value is not a mapping");
	expect_err("a:\n  <<: [3]\n", "merge key list holds a non-mapping");
	/* Anchors do not cross documents. */
	text = "a: &x 1\n---\nb: *x\n";
	assert_null(yamlj_parse_all(text, strlen(text), err, sizeof(err)));
	assert_non_null(strstr(err, "unknown anchor"));
}

static void
test_alias_bomb_refused(void **state)
{
	struct buf b = BUF_INIT;
	char err[256];
	json_object *doc;
	int i, j;

	(void)state;
	buf_puts(
	        &b, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (i = 1; i <= 9; i++) {
		buf_printf(&b, "a%d: &a%d [", i, i);
		for (j = 0; j < 9; j++) {
			buf_printf(&b, "%s*a%d", j > 0 ? ", " : "", i - 1);
		}
		buf_puts(&b, "]\n");
	}
	doc = yamlj_parse(b.data, b.len, err, sizeof(err));
	assert_null(doc);
	assert_non_null(strstr(err, "aliases expand to more than 1000000"));
	assert_non_null(strstr(err, "line "));
	/* A moderate expansion (10^5 nodes) is fine. */
	buf_reset(&b);
	buf_puts(&b, "a0: &a0 [0, 1, 2, 3, 4, 5, 6, 7, 8]\n");
	for (i = 1; i <= 4; i++) {
		buf_printf(&b, "a%d: &a%d [", i, i);
		for (j = 0; j < 10; j++) {
			buf_printf(&b, "%s*a%d", j > 0 ? ", " : "", i - 1);
		}
		buf_puts(&b, "]\n");
	}
	doc = yamlj_parse(b.data, b.len, err, sizeof(err));
	assert_non_null(doc);
	json_object_put(doc);
	buf_fini(&b);
}

static void
test_depth_limit(void **state)
{
	struct buf b = BUF_INIT;
	char err[256];
	json_object *doc;
	int i;

	(void)state;
	for (i = 0; i < YAMLJ_MAX_DEPTH; i++) {
		buf_putc(&b, '[');
	}
	for (i = 0; i < YAMLJ_MAX_DEPTH; i++) {
		buf_putc(&b, ']');
	}
	doc = yamlj_parse(b.data, b.len, err, sizeof(err));
	assert_non_null(doc);
	json_object_put(doc);
	buf_reset(&b);
	for (i = 0; i < 100000; i++) {
		buf_puts(&b, "[{a: ");
	}
	doc = yamlj_parse(b.data, b.len, err, sizeof(err));
	assert_null(doc);
	assert_non_null(strstr(err, "nesting deeper than 1000"));
	buf_fini(&b);
}

static void
test_errors_have_positions(void **state)
{
	(void)state;
	expect_err("a: 1\nb: [1, 2\nc: 3\n", "line 3");
	expect_err("a: 1\n\tb: 2\n", "line 2");
	expect_err("a: 'open\n", "line ");
	expect_err("a: b: c\n", "line 1 column 5");
	expect_err("key: [\x01]\n", "yaml:");
	expect_err("\xff\xfe\xfd", "yaml:");
}

static void
test_garbage_and_length(void **state)
{
	static const char junk[] = "a: [1, {b: \0\0\0 }\n\x80\x81 &&& *** !!";
	const char *text = "a: 1\nb: 2\n";
	char err[8];
	json_object *doc;
	size_t n;

	(void)state;
	for (n = 0; n <= sizeof(junk); n++) {
		doc = yamlj_parse(junk, n, err, sizeof(err));
		json_object_put(doc);
		json_object_put(yamlj_parse_all(junk, n, err, sizeof(err)));
	}
	/* Only len bytes are read (no NUL needed): "a: 1\n" of the text. */
	doc = yamlj_parse(text, 5, err, sizeof(err));
	assert_non_null(doc);
	assert_int_equal(json_object_object_length(doc), 1);
	json_object_put(doc);
	/* A tiny err buffer is truncated, not overrun. */
	assert_null(yamlj_parse("[", 1, err, sizeof(err)));
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_null(yamlj_parse("[", 1, NULL, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_tag_mismatch),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_keys_become_strings),
		cmocka_unit_test(test_json_input),
		cmocka_unit_test(test_multi_doc),
		cmocka_unit_test(test_anchors_and_merge),
		cmocka_unit_test(test_alias_bomb_refused),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_errors_have_positions),
		cmocka_unit_test(test_garbage_and_length),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
