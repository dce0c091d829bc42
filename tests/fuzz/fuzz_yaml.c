/*
 * fuzz_yaml.c: libFuzzer target for YAML loading (common/yamlj.c), the
 * YAML side of kubeconfigs, CRDs and manifests (fuzz_kubeconfig feeds the
 * same converter through the kubeconfig loader).  Each input is parsed as
 * one document and as a stream.  An error must come with a message; a
 * stream that parses must have a first document that parses, equal to the
 * stream's first element when not null; every parsed document, written as
 * JSON (JSON is YAML, for text without the characters yaml_printable()
 * names), must load back equal to itself.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/yamlj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok)
{
	if (!ok) {
		__builtin_trap();
	}
}

/* Whether the UTF-8 text s holds only characters that YAML reads as
 * themselves inside a quoted scalar: json-c writes DEL, the C1 controls
 * and U+FFFE/U+FFFF raw, which YAML refuses unescaped, and NEL, LS and PS
 * (U+0085, U+2028, U+2029) raw, which libyaml takes as line breaks and
 * folds; only JSON text without them is YAML that loads back the same. */
static bool
yaml_printable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if (*p == 0x7f
		        || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		        || (p[0] == 0xe2 && p[1] == 0x80
		                && (p[2] == 0xa8 || p[2] == 0xa9))
		        || (p[0] == 0xef && p[1] == 0xbf
		                && (p[2] == 0xbe || p[2] == 0xbf))) {
			return (false);
		}
	}
	return (true);
}

/* j written as JSON loads back equal (JSON is YAML, when printable). */
static void
json_round_trip(json_object *j)
{
	const char *s = json_object_to_json_string_ext(
	        j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	char err[256] = "";
	json_object *back = NULL;

	if (!yaml_printable(s)) {
		return;
	}
	check(yamlj_parse_doc(s, strlen(s), &back, err, sizeof(err)) == 0);
	check(jx_equal(j, back));
	json_object_put(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char err[256] = "", err2[256] = "";
	json_object *doc = NULL, *all;
	int rc;

	rc = yamlj_parse_doc(text, size, &doc, err, sizeof(err));
	check(rc == 0 || (err[0] != '\0' && doc == NULL));
	all = yamlj_parse_all(text, size, err2, sizeof(err2));
	check(all != NULL || err2[0] != '\0');
	if (all != NULL) {
		check(rc == 0 && json_object_is_type(all, json_type_array));
		if (doc != NULL) {
			check(json_object_array_length(all) > 0);
			check(jx_equal(
			        doc, json_object_array_get_idx(all, 0)));
		}
	}
	if (doc != NULL) {
		json_round_trip(doc);
	}
	json_object_put(doc);
	json_object_put(all);
	return (0);
}
