/*
 * fuzz_list.c: libFuzzer target for the LIST answer decoder
 * (common/kapi_list.c).  Differential check: when the whole input also
 * parses as one JSON object with json-c (so no item was too deep), a
 * successful decode must have handed out exactly its items, in order,
 * each equal (as serialised) to the parsed one apart from the apiVersion and
 * kind filled in from the list, and kept every other member; otherwise the
 * target traps.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "common/jsonx.h"
#include "common/kapi_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct got {
	json_object *items; /* array of copies */
	size_t skipped;
};

static void
on_item(void *arg, json_object *it)
{
	struct got *g = arg;

	json_object_array_add(g->items, json_object_get(it));
}

static void
on_skip(void *arg, const char *name, size_t idx)
{
	struct got *g = arg;

	(void)name;
	(void)idx;
	g->skipped++;
}

/* it, with apiVersion and kind as the decoder fills them from whole. */
static void
filled(json_object *it, json_object *whole)
{
	const char *lk = jx_get_str(whole, "kind");
	const char *av = jx_get_str(whole, "apiVersion");
	size_t n = lk != NULL ? strlen(lk) : 0;

	if (!json_object_is_type(it, json_type_object)) {
		return;
	}
	if (json_object_object_get(it, "apiVersion") == NULL && av != NULL) {
		json_object_object_add(
		        it, "apiVersion", json_object_new_string(av));
	}
	if (json_object_object_get(it, "kind") == NULL && n > 4
	        && strcmp(lk + n - 4, "List") == 0) {
		json_object_object_add(it, "kind",
		        json_object_new_string_len(lk, (int)(n - 4)));
	}
}

/* Equal as serialised (NaN is not equal to itself as a value). */
static bool
same(json_object *a, json_object *b)
{
	const char *x
	        = json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
	const char *y
	        = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);

	return (strcmp(x, y) == 0);
}

static void
compare(json_object *whole, json_object *doc, struct got *g)
{
	json_object *items = json_object_object_get(whole, "items");
	size_t n = json_object_is_type(items, json_type_array)
	        ? json_object_array_length(items)
	        : 0;

	if (g->skipped != 0 || json_object_array_length(g->items) != n) {
		__builtin_trap();
	}
	for (size_t i = 0; i < n; i++) {
		json_object *want = json_object_array_get_idx(items, i);
		filled(want, whole);
		if (!same(want, json_object_array_get_idx(g->items, i))) {
			__builtin_trap();
		}
	}
	json_object_object_del(whole, "items");
	if (!same(whole, doc)) {
		__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct got g = { json_object_new_array(), 0 };
	struct kapi_list_cb cb = { on_item, on_skip, &g };
	json_object *doc = NULL, *whole;
	int rc;

	rc = kapi_list_decode((const char *)data, size, &doc, &cb);
	if ((rc == 0) != (doc != NULL)) {
		__builtin_trap();
	}
	whole = jx_parse((const char *)data, size, 0, NULL, 0);
	if (rc == 0 && json_object_is_type(whole, json_type_object)
	        && memchr(data, '\0', size) == NULL) {
		compare(whole, doc, &g);
	}
	json_object_put(whole);
	json_object_put(doc);
	json_object_put(g.items);
	return (0);
}
