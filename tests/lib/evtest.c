/*
 * evtest.c: Event write assertions for reconciler tests (evtest.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/evtest.h"

size_t
evtest_count(json_object *result)
{
	json_object *ws = jx_get(result, "writes");
	size_t n = 0;

	for (size_t i = 0; ws != NULL && i < json_object_array_length(ws);
	        i++) {
		const char *op
		        = jx_get_str(json_object_array_get_idx(ws, i), "op");
		n += op != NULL && strcmp(op, "event") == 0;
	}
	return (n);
}

static const char *
str(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

void
evtest_assert(json_object *result, size_t i, const char *name,
        const char *type, const char *reason, const char *msg)
{
	json_object *ws = jx_get(result, "writes");
	json_object *w, *ev;

	assert_non_null(ws);
	assert_true(i < json_object_array_length(ws));
	w = json_object_array_get_idx(ws, i);
	assert_string_equal(str(w, "op"), "event");
	assert_string_equal(str(w, "resource.plural"), "events");
	assert_string_equal(str(w, "resource.version"), "v1");
	ev = jx_get(w, "object");
	assert_string_equal(str(ev, "kind"), "Event");
	if (name != NULL) {
		assert_string_equal(str(ev, "involvedObject.name"), name);
	}
	assert_string_equal(str(ev, "type"), type);
	assert_string_equal(str(ev, "reason"), reason);
	if (msg != NULL && strstr(str(ev, "message"), msg) == NULL) {
		fail_msg("event message \"%s\" lacks \"%s\"",
		        str(ev, "message"), msg);
	}
}
