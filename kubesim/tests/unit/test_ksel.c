/* test_ksel.c: kubesim's label and field selectors (kubesim/ksel.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/jsonx.h"
#include "kubesim/ksel.h"
#include "tests/lib/testutil.h"

static json_object *
P(const char *s)
{
	return (testutil_json(s, 0));
}

/* Label sets used by the match table. */
static const char *const sets[] = {
	"{}",                                             /* 0 */
	"{\"env\":\"a\"}",                                /* 1 */
	"{\"env\":\"b\",\"tier\":\"web\"}",               /* 2 */
	"{\"env\":\"a\",\"tier\":\"db\"}",                /* 3 */
	"{\"env\":\"c\"}",                                /* 4 */
	"{\"env\":\"a\",\"legacy\":\"\"}",                /* 5 */
	"{\"n\":\"10\",\"x\":\"\"}",                      /* 6 */
	"{\"n\":\"abc\"}",                                /* 7 */
	"{\"example.com/app\":\"web\",\"in\":\"notin\"}", /* 8 */
};
#define NSETS (sizeof(sets) / sizeof(sets[0]))

static const struct {
	const char *sel;
	const char *want; /* one '1'/'0' per label set */
} match_table[] = {
	{ "", "111111111" },
	{ "   ", "111111111" },
	/* spec item 36 */
	{ "env in (a,b),tier!=db,!legacy", "011000000" },
	{ "env in (a, b) , tier != db , ! legacy", "011000000" },
	{ "env=a", "010101000" },
	{ "env==a", "010101000" },
	{ "env = a", "010101000" },
	{ "env!=a", "101010111" },
	{ "env notin (a,c)", "101000111" },
	{ "env", "011111000" },
	{ "!env", "100000111" },
	{ "env,!tier", "010011000" },
	{ "x=", "000000100" },
	{ "x in ()", "000000100" },
	{ "x in (,z)", "000000100" },
	{ "x in (q,,r)", "000000100" },
	{ "x in (q,)", "000000100" },
	{ "env in (c,d)", "000010000" },
	{ "env in (c,d,)", "000010000" },
	{ "n>5", "000000100" },
	{ "n<11", "000000100" },
	{ "n>10", "000000000" },
	{ "n<5", "000000000" },
	{ "example.com/app=web", "000000001" },
	{ "in=notin", "000000001" },
	{ "in in (in,notin)", "000000001" },
	{ "env in(a)", "010101000" },
	{ "env=a,env=b", "000000000" },
	{ "env in (a,a,b)", "011101000" },
};

static void
test_label_match_table(void **state)
{
	json_object *objs[NSETS];
	size_t i, j;

	(void)state;
	for (j = 0; j < NSETS; j++) {
		objs[j] = P(sets[j]);
	}
	for (i = 0; i < sizeof(match_table) / sizeof(match_table[0]); i++) {
		char err[512] = "";
		struct ksel *s = ksel_parse_labels(
		        match_table[i].sel, err, sizeof(err));

		if (s == NULL) {
			fail_msg("%s: %s", match_table[i].sel, err);
		}
		for (j = 0; j < NSETS; j++) {
			bool want = match_table[i].want[j] == '1';

			if (ksel_match_labels(s, objs[j]) != want) {
				fail_msg("%s on %s: want %d",
				        match_table[i].sel, sets[j], want);
			}
		}
		ksel_free(s);
	}
	for (j = 0; j < NSETS; j++) {
		json_object_put(objs[j]);
	}
}

static void
test_label_missing_labels(void **state)
{
	struct ksel *s = ksel_parse_labels("a!=b,c notin (d),!e", NULL, 0);
	struct ksel *s2 = ksel_parse_labels("a", NULL, 0);
	json_object *notobj = P("[1]");

	(void)state;
	assert_non_null(s);
	assert_int_equal(ksel_count(s), 3);
	assert_true(ksel_match_labels(s, NULL));
	assert_true(ksel_match_labels(s, notobj));
	assert_false(ksel_match_labels(s2, NULL));
	ksel_free(s);
	ksel_free(s2);
	json_object_put(notobj);
}

static const struct {
	const char *sel;
	const char *err; /* exact message */
} bad_table[] = {
	/* spec item 37 */
	{ "a in (b",
	        "unable to parse requirement: found '', expected: ',' or "
	        "')'" },
	{ "a in b)", "unable to parse requirement: found 'b' expected: '('" },
	{ "=x", "found '=', expected: !, identifier, or 'end of string'" },
	{ "a===",
	        "unable to parse requirement: found '=', expected: "
	        "identifier" },
	{ "a=b,", "found '', expected: identifier after ','" },
	{ "a=b c", "found 'c', expected: ',' or 'end of string'" },
	{ "a b",
	        "unable to parse requirement: found 'b', expected: in, "
	        "notin, =, ==, !=, gt, lt" },
	{ "a in (b c)",
	        "unable to parse requirement: found 'c', expected: "
	        "',' or ')'" },
	{ "a in (b))", "found ')', expected: ',' or 'end of string'" },
	{ "a in (=)",
	        "unable to parse requirement: found '=', expected: ',', "
	        "')' or identifier" },
	{ "a in (b,=)",
	        "unable to parse requirement: found '=', expected: "
	        "',', or identifier" },
	{ "!", "unable to parse requirement: found '', expected: identifier" },
	{ "!a=b", "found '=', expected: ',' or 'end of string'" },
	{ "a>b",
	        "unable to parse requirement: values[0]: Invalid value: "
	        "\"b\": for 'Gt', 'Lt' operators, the value must be an "
	        "integer" },
	{ "a<",
	        "unable to parse requirement: values[0]: Invalid value: "
	        "\"\": for 'Gt', 'Lt' operators, the value must be an "
	        "integer" },
	{ "a>99999999999999999999",
	        "unable to parse requirement: values[0]: "
	        "Invalid value: \"99999999999999999999\": "
	        "for 'Gt', 'Lt' operators, the value must "
	        "be an integer" },
	{ "*bar",
	        "unable to parse requirement: <nil>: Invalid value: \"*bar\": "
	        "name part must consist of alphanumeric characters, '-', '_' "
	        "or "
	        "'.', and must start and end with an alphanumeric character "
	        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
	        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" },
	{ "a/b/c",
	        "unable to parse requirement: <nil>: Invalid value: "
	        "\"a/b/c\": a qualified name must consist of alphanumeric "
	        "characters, '-', '_' or '.', and must start and end with "
	        "an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
	        "or '123-abc', regex used for validation is "
	        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
	        "optional DNS subdomain prefix and '/' (e.g. "
	        "'example.com/MyName')" },
	{ "/a",
	        "unable to parse requirement: <nil>: Invalid value: \"/a\": "
	        "prefix part must be non-empty" },
	{ "Ex.com/a",
	        "unable to parse requirement: <nil>: Invalid value: "
	        "\"Ex.com/a\": "
	        "prefix part a lowercase RFC 1123 subdomain must consist of "
	        "lower "
	        "case alphanumeric characters, '-' or '.', and must start and "
	        "end "
	        "with an alphanumeric character (e.g. 'example.com', regex "
	        "used "
	        "for validation is "
	        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9]"
	        ")?)*"
	        "')" },
	{ "a=-b",
	        "unable to parse requirement: values[0][a]: Invalid value: "
	        "\"-b\": a valid label must be an empty string or consist "
	        "of alphanumeric characters, '-', '_' or '.', and must "
	        "start and end with an alphanumeric character (e.g. "
	        "'MyValue',  or 'my_value',  or '12345', regex used for "
	        "validation is "
	        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')" },
	{ "a\"\\=b",
	        "unable to parse requirement: <nil>: Invalid value: "
	        "\"a\\\"\\\\\": name part must consist of alphanumeric "
	        "characters, '-', '_' or '.', and must start and end "
	        "with an alphanumeric character (e.g. 'MyName',  or "
	        "'my.name',  or '123-abc', regex used for validation is "
	        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" },
};

static void
test_label_malformed(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_table) / sizeof(bad_table[0]); i++) {
		char err[2048] = "";
		struct ksel *s = ksel_parse_labels(
		        bad_table[i].sel, err, sizeof(err));

		if (s != NULL) {
			fail_msg("%s: parsed", bad_table[i].sel);
		}
		if (strcmp(err, bad_table[i].err) != 0) {
			fail_msg("%s:\n got  %s\n want %s", bad_table[i].sel,
			        err, bad_table[i].err);
		}
	}
}

static void
test_label_lengths(void **state)
{
	char key[80], sel[400], err[2048];
	struct ksel *s;

	(void)state;
	/* 63-char name: fine; 64: refused. */
	memset(key, 'k', 63);
	key[63] = '\0';
	s = ksel_parse_labels(key, err, sizeof(err));
	assert_non_null(s);
	ksel_free(s);
	memset(key, 'k', 64);
	key[64] = '\0';
	assert_null(ksel_parse_labels(key, err, sizeof(err)));
	assert_non_null(strstr(err,
	        "name part must be no more than 63 "
	        "characters"));
	/* Value of 64 characters. */
	snprintf(sel, sizeof(sel), "a=%s", key);
	assert_null(ksel_parse_labels(sel, err, sizeof(err)));
	assert_non_null(strstr(err, "values[0][a]: Invalid value: \"kkk"));
	assert_non_null(strstr(err, "must be no more than 63 characters"));
	/* Two bad values: aggregated in brackets. */
	assert_null(ksel_parse_labels("a in (-x,-y)", err, sizeof(err)));
	assert_true(err[strlen("unable to parse requirement: ")] == '[');
	assert_non_null(strstr(err, "values[1][a]: Invalid value: \"-y\""));
	/* Prefix longer than 253. */
	memset(sel, 'p', 254);
	strcpy(sel + 254, "/a");
	assert_null(ksel_parse_labels(sel, err, sizeof(err)));
	assert_non_null(strstr(err,
	        "prefix part must be no more than 253 "
	        "characters"));
	/* Truncated message, NULL err. */
	assert_null(ksel_parse_labels("a in (b", err, 8));
	assert_string_equal(err, "unable ");
	assert_null(ksel_parse_labels("a in (b", NULL, 0));
}

static void
test_label_too_long_and_bytes(void **state)
{
	char *big = malloc(KSEL_MAX_LEN + 2), err[256];
	const char odd[] = { 'a', '=', (char)0xff, 0 };
	struct ksel *s;

	(void)state;
	memset(big, 'a', KSEL_MAX_LEN + 1);
	big[KSEL_MAX_LEN + 1] = '\0';
	assert_null(ksel_parse_labels(big, err, sizeof(err)));
	assert_string_equal(err, "label selector too long");
	free(big);
	assert_null(ksel_parse_labels(odd, err, sizeof(err)));
	assert_non_null(strstr(err, "Invalid value: \"\\xff\""));
	assert_null(ksel_parse_labels("a=\xc3\xa9", err, sizeof(err)));
	assert_non_null(strstr(err, "Invalid value: \"\xc3\xa9\""));
	assert_null(ksel_parse_labels("\t\n=", err, sizeof(err)));
	s = ksel_parse_labels(NULL, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(ksel_count(s), 0);
	ksel_free(s);
}

/* a==: Go's parseExactValue accepts an empty value after any operator. */
static void
test_label_empty_value(void **state)
{
	struct ksel *s = ksel_parse_labels("a==", NULL, 0);
	json_object *l = P("{\"a\":\"\"}"), *l2 = P("{\"a\":\"x\"}");

	(void)state;
	assert_non_null(s);
	assert_true(ksel_match_labels(s, l));
	assert_false(ksel_match_labels(s, l2));
	ksel_free(s);
	json_object_put(l);
	json_object_put(l2);
}

static const char *const pod_extra[]
        = { "spec.nodeName", "status.phase", NULL };

static const char pod[] = "{\"metadata\":{\"name\":\"p1\",\"namespace\":"
                          "\"ns\"},\"spec\":{\"nodeName\":\"n,1\","
                          "\"replicas\":3,\"paused\":true,\"ratio\":0.5},"
                          "\"status\":{\"phase\":\"Running\"}}";

static const struct {
	const char *sel;
	bool want;
} field_table[] = {
	{ "", true },
	{ ",", true },
	{ "metadata.name=p1", true },
	{ "metadata.name==p1", true },
	{ "metadata.name!=p1", false },
	{ "metadata.name=p2", false },
	{ "metadata.name!=p2,metadata.namespace=ns", true },
	{ "metadata.namespace=ns,status.phase=Pending", false },
	{ "spec.nodeName=n\\,1", true },
	{ "spec.nodeName=n,1", false }, /* "1" is a bad term */
	{ "status.phase!=", true },
	{ "spec.replicas=3", true },
	{ "spec.paused=true", true },
	{ "spec.ratio=0.5", true },
	{ "spec.missing=", true },
	{ "spec.missing!=", false },
};

static void
test_field_match(void **state)
{
	static const char *const extra[]
	        = { "spec.nodeName", "status.phase", "spec.replicas",
		          "spec.paused", "spec.ratio", "spec.missing", NULL };
	json_object *o = P(pod);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(field_table) / sizeof(field_table[0]); i++) {
		char err[256] = "";
		struct ksel_fields *f = ksel_parse_fields(
		        field_table[i].sel, extra, "pods", err, sizeof(err));

		if (i == 9) {
			assert_null(f);
			assert_string_equal(err,
			        "invalid selector: "
			        "'spec.nodeName=n,1'; can't "
			        "understand '1'");
			continue;
		}
		if (f == NULL) {
			fail_msg("%s: %s", field_table[i].sel, err);
		}
		if (ksel_match_fields(f, o) != field_table[i].want) {
			fail_msg("%s: want %d", field_table[i].sel,
			        field_table[i].want);
		}
		ksel_fields_free(f);
	}
	json_object_put(o);
}

static void
test_field_escapes(void **state)
{
	json_object *o = P("{\"metadata\":{\"name\":\"a=b,c\\\\d!e\"}}");
	struct ksel_fields *f;
	char err[256];

	(void)state;
	f = ksel_parse_fields(
	        "metadata.name=a\\=b\\,c\\\\d!e", NULL, "x", err, sizeof(err));
	assert_non_null(f);
	assert_string_equal(ksel_fields_name(f), "a=b,c\\d!e");
	assert_true(ksel_match_fields(f, o));
	ksel_fields_free(f);
	/* The first operator splits: the rest is the value. */
	f = ksel_parse_fields("metadata.name=!x", NULL, "x", err, sizeof(err));
	assert_non_null(f);
	assert_string_equal(ksel_fields_name(f), "!x");
	ksel_fields_free(f);
	assert_null(ksel_parse_fields(
	        "metadata.name=a=b", NULL, "x", err, sizeof(err)));
	assert_string_equal(err,
	        "invalid field selector: unescaped character "
	        "in value: 61");
	assert_null(ksel_parse_fields(
	        "metadata.name=a\\!b", NULL, "x", err, sizeof(err)));
	assert_string_equal(err,
	        "invalid field selector: invalid escape "
	        "sequence: \\!");
	assert_null(ksel_parse_fields(
	        "metadata.name=a\\", NULL, "x", err, sizeof(err)));
	assert_string_equal(err,
	        "invalid field selector: invalid escape "
	        "sequence: \\");
	assert_null(ksel_parse_fields(
	        "metadata.name", NULL, "x", err, sizeof(err)));
	assert_string_equal(err,
	        "invalid selector: 'metadata.name'; can't "
	        "understand 'metadata.name'");
	json_object_put(o);
}

static void
test_field_unsupported(void **state)
{
	char err[256];

	(void)state;
	/* spec item 38 */
	assert_null(ksel_parse_fields(
	        "spec.foo=1", NULL, "widgets", err, sizeof(err)));
	assert_string_equal(err, "field label not supported: spec.foo");
	assert_null(ksel_parse_fields("metadata.name=x,spec.nodeName=n", NULL,
	        "jobs", err, sizeof(err)));
	assert_string_equal(err, "field label not supported: spec.nodeName");
	assert_null(ksel_parse_fields(
	        " metadata.name=x", pod_extra, "pods", err, sizeof(err)));
	assert_string_equal(err, "field label not supported:  metadata.name");
	assert_null(
	        ksel_parse_fields("=x", pod_extra, "pods", err, sizeof(err)));
	assert_string_equal(err, "field label not supported: ");
	/* Terms are checked in sorted order, parse errors first. */
	assert_null(ksel_parse_fields("z=1,b=2", NULL, "x", err, sizeof(err)));
	assert_string_equal(err, "field label not supported: b");
	assert_null(ksel_parse_fields("a=1,zz", NULL, "x", err, sizeof(err)));
	assert_string_equal(err,
	        "invalid selector: 'a=1,zz'; can't "
	        "understand 'zz'");
}

static void
test_field_name_pin(void **state)
{
	struct ksel_fields *f;

	(void)state;
	f = ksel_parse_fields("metadata.name=x", NULL, "jobs", NULL, 0);
	assert_string_equal(ksel_fields_name(f), "x");
	ksel_fields_free(f);
	f = ksel_parse_fields("metadata.namespace=n,metadata.name==y", NULL,
	        "jobs", NULL, 0);
	assert_string_equal(ksel_fields_name(f), "y");
	ksel_fields_free(f);
	f = ksel_parse_fields("metadata.name!=x", NULL, "jobs", NULL, 0);
	assert_null(ksel_fields_name(f));
	ksel_fields_free(f);
	f = ksel_parse_fields("", NULL, "jobs", NULL, 0);
	assert_null(ksel_fields_name(f));
	assert_true(ksel_match_fields(f, NULL));
	ksel_fields_free(f);
	assert_null(ksel_fields_name(NULL));
}

static void
test_field_events(void **state)
{
	static const char *const ev_extra[] = { "involvedObject.kind",
		"involvedObject.name", "involvedObject.namespace",
		"involvedObject.uid", "reason", "type", NULL };
	json_object *o
	        = P("{\"involvedObject\":{\"kind\":\"Pod\",\"name\":"
	            "\"p\"},\"reason\":\"Started\",\"type\":\"Normal\"}");
	struct ksel_fields *f = ksel_parse_fields(
	        "involvedObject.kind=Pod,involvedObject.name=p,type!=Warning",
	        ev_extra, "events", NULL, 0);

	(void)state;
	assert_non_null(f);
	assert_true(ksel_match_fields(f, o));
	ksel_fields_free(f);
	f = ksel_parse_fields("reason=Killing", ev_extra, "events", NULL, 0);
	assert_false(ksel_match_fields(f, o));
	ksel_fields_free(f);
	json_object_put(o);
}

static void
test_field_numbers(void **state)
{
	json_object *o = P("{\"a\":1e21,\"b\":1e20,\"c\":0.00001,\"d\":-2,"
	                   "\"e\":1.5e-7,\"f\":false,\"g\":null}");
	static const char *const extra[]
	        = { "a", "b", "c", "d", "e", "f", "g", NULL };
	struct ksel_fields *f
	        = ksel_parse_fields("a=1e+21,b=100000000000000000000,c=1e-05,"
	                            "d=-2,e=1.5e-07,f=false,"
	                            "g=",
	                extra, "x", NULL, 0);

	(void)state;
	assert_non_null(f);
	assert_true(ksel_match_fields(f, o));
	ksel_fields_free(f);
	json_object_put(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_match_table),
		cmocka_unit_test(test_label_missing_labels),
		cmocka_unit_test(test_label_malformed),
		cmocka_unit_test(test_label_lengths),
		cmocka_unit_test(test_label_too_long_and_bytes),
		cmocka_unit_test(test_label_empty_value),
		cmocka_unit_test(test_field_match),
		cmocka_unit_test(test_field_escapes),
		cmocka_unit_test(test_field_unsupported),
		cmocka_unit_test(test_field_name_pin),
		cmocka_unit_test(test_field_events),
		cmocka_unit_test(test_field_numbers),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
