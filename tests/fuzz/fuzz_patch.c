/*
 * fuzz_patch.c: libFuzzer target for kubesim's patch algorithms
 * (kubesim/kpatch.c).  The input is two JSON texts separated by the
 * first newline: the original and the patch.  Both are parsed with
 * jx_parse() and the patch is applied as a merge patch, a JSON patch and a
 * strategic merge patch (default schema).  The target traps when an input
 * is modified or a merge patch is not idempotent (RFC 7386: applying the
 * same patch twice changes nothing more).  Everything is freed, so leaks
 * show up under ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "common/jsonx.h"
#include "kubesim/kpatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Deeper than KPATCH_MAX_DEPTH, so the depth checks are reached. */
#define FUZZ_PARSE_DEPTH 160

static json_object *
copy(json_object *o)
{
	json_object *c = NULL;

	if (json_object_deep_copy(o, &c, NULL) != 0) {
		__builtin_trap();
	}
	return (c);
}

static void
check_merge(json_object *orig, json_object *patch)
{
	json_object *r, *r2;
	char err[256];

	r = kpatch_merge(orig, patch, err, sizeof(err));
	if (r == NULL) {
		return;
	}
	r2 = kpatch_merge(r, patch, err, sizeof(err));
	if (r2 == NULL || !jx_equal(r, r2)) {
		__builtin_trap();
	}
	json_object_put(r);
	json_object_put(r2);
}

static void
apply_all(json_object *orig, json_object *patch)
{
	json_object *oc = copy(orig), *pc = copy(patch), *r;
	char err[256];

	check_merge(orig, patch);
	r = kpatch_json(orig, patch, err, sizeof(err));
	json_object_put(r);
	r = kpatch_strategic(orig, patch, NULL, err, sizeof(err));
	json_object_put(r);
	if (!json_object_equal(orig, oc) || !json_object_equal(patch, pc)) {
		__builtin_trap();
	}
	json_object_put(oc);
	json_object_put(pc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nl = memchr(text, '\n', size);
	json_object *orig, *patch;
	char err[256];
	size_t n1;

	if (nl == NULL) {
		return (0);
	}
	n1 = (size_t)(nl - text);
	orig = jx_parse(text, n1, FUZZ_PARSE_DEPTH, err, sizeof(err));
	patch = jx_parse(
	        nl + 1, size - n1 - 1, FUZZ_PARSE_DEPTH, err, sizeof(err));
	if (orig != NULL && patch != NULL) {
		apply_all(orig, patch);
	}
	json_object_put(orig);
	json_object_put(patch);
	return (0);
}
