/*
 * test_kapi_list.c: the LIST answer decoder (common/kapi_list.h): items in
 * order with the list's apiVersion and kind filled in, the rest of the
 * answer kept, too-deep items skipped by name, bad bodies refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi_list.h"

struct seen {
	int n;
	char names[8][64];
	char kinds[8][64];
	int skipped;
	char skip_name[64];
	size_t skip_idx;
};

static void
on_item(void *arg, json_object *it)
{
	struct seen *s = arg;
	const char *k = jx_get_str(it, "kind");
	const char *av = jx_get_str(it, "apiVersion");

	if (s->n < 8) {
		snprintf(s->names[s->n], 64, "%s",
		        jx_get_str(it, "metadata.name"));
		snprintf(s->kinds[s->n], 64, "%s/%s", av ? av : "-",
		        k ? k : "-");
	}
	s->n++;
}

static void
on_skip(void *arg, const char *name, size_t idx)
{
	struct seen *s = arg;

	s->skipped++;
	snprintf(s->skip_name, sizeof(s->skip_name), "%s", name);
	s->skip_idx = idx;
}

static int
decode(const char *body, struct seen *s, json_object **doc)
{
	struct kapi_list_cb cb = { on_item, on_skip, s };

	memset(s, 0, sizeof(*s));
	return (kapi_list_decode(body, strlen(body), doc, &cb));
}

static void
test_items_and_doc(void **state)
{
	struct seen s;
	json_object *doc;

	(void)state;
	assert_int_equal(decode(" {\"kind\":\"PodList\",\"apiVersion\":\"v1\","
	                        "\"metadata\":{\"resourceVersion\":\"42\","
	                        "\"continue\":\"c1\"},\"items\":[ "
	                        "{\"metadata\":{\"name\":\"a\"}},\n"
	                        "{\"kind\":\"Other\",\"apiVersion\":\"x/v2\","
	                        "\"metadata\":{\"name\":\"b\"}} ] }",
	                         &s, &doc),
	        0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.names[0], "a");
	assert_string_equal(s.kinds[0], "v1/Pod");
	assert_string_equal(s.names[1], "b");
	assert_string_equal(s.kinds[1], "x/v2/Other");
	assert_string_equal(jx_get_str(doc, "metadata.resourceVersion"), "42");
	assert_string_equal(jx_get_str(doc, "metadata.continue"), "c1");
	assert_null(json_object_object_get(doc, "items"));
	json_object_put(doc);
	/* empty, null and absent items */
	assert_int_equal(decode("{\"items\":[]}", &s, &doc), 0);
	assert_int_equal(s.n, 0);
	json_object_put(doc);
	assert_int_equal(
	        decode("{\"items\":null,\"metadata\":{}}", &s, &doc), 0);
	assert_int_equal(s.n, 0);
	json_object_put(doc);
	assert_int_equal(decode("{}", &s, &doc), 0);
	assert_non_null(doc);
	json_object_put(doc);
}

/* An item deeper than the parser's limit is skipped by name; the items
 * after it are decoded. */
static void
test_deep_item(void **state)
{
	struct buf b = BUF_INIT;
	struct seen s;
	json_object *doc;

	(void)state;
	buf_puts(&b,
	        "{\"items\":[{\"metadata\":{\"name\":\"ok1\"}},"
	        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"deep\"},"
	        "\"spec\":");
	for (int i = 0; i < 200; i++) {
		buf_puts(&b, "[");
	}
	for (int i = 0; i < 200; i++) {
		buf_puts(&b, "]");
	}
	buf_puts(&b, "},{\"metadata\":{\"name\":\"ok2\"}}]}");
	assert_int_equal(decode(b.data, &s, &doc), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.names[0], "ok1");
	assert_string_equal(s.names[1], "ok2");
	assert_int_equal(s.skipped, 1);
	assert_string_equal(s.skip_name, "ns/deep");
	assert_int_equal(s.skip_idx, 1);
	json_object_put(doc);
	buf_fini(&b);
}

static void
test_bad_bodies(void **state)
{
	static const char *const bad[] = { "", "[]", "\"x\"", "{\"items\":{}}",
		"{\"items\":[1,}", "{\"items\":[{}", "{\"a\":1,}",
		"{\"items\":[]", "nul" };
	struct kapi_list_cb cb = { on_item, on_skip, NULL };
	struct seen s;
	json_object *doc = (json_object *)&s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(decode(bad[i], &s, &doc), -1);
		assert_null(doc);
	}
	/* a raw NUL inside */
	cb.arg = &s;
	assert_int_equal(
	        kapi_list_decode("{\"items\":[]}\0", 13, &doc, &cb), -1);
	assert_int_equal(kapi_list_decode(NULL, 0, &doc, &cb), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items_and_doc),
		cmocka_unit_test(test_deep_item),
		cmocka_unit_test(test_bad_bodies),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
