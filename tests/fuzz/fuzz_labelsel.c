/*
 * fuzz_labelsel.c: libFuzzer target for the supervisor's equality-based
 * label selectors (supervisor/labelsel.c), which are not kubesim's ksel.
 * The input, cut at its first NUL, is parsed; an error must come with a
 * message.  An accepted selector is matched against a few label sets both
 * through the getter and as JSON (the answers must agree), and, as a
 * differential check, kubesim's ksel (apimachinery's full grammar, a
 * superset) must accept the same text and give the same answers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "supervisor/labelsel.h"
#include "kubesim/ksel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const label_sets[] = {
	"{}",
	"{\"a\":\"b\"}",
	"{\"a\":\"\",\"x\":\"y\",\"example.com/k\":\"v\"}",
	"{\"env\":\"prod\",\"tier\":\"web\",\"a\":\"1\",\"b-c.d_e\":\"x.y\"}",
	"{\"sympozium.ai/instance\":\"i1\",\"app\":\"agent\",\"n\":\"10\"}",
};

static void
check(bool ok)
{
	if (!ok) {
		__builtin_trap();
	}
}

static const char *
get(void *arg, const char *key)
{
	json_object *v = json_object_object_get(arg, key);

	return (v != NULL ? json_object_get_string(v) : NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_object *sets[sizeof(label_sets) / sizeof(label_sets[0])];
	size_t nsets = sizeof(sets) / sizeof(sets[0]);
	char *s = xstrndup((const char *)data, size);
	char err[256] = "", kerr[256] = "";
	struct labelsel *sel;
	struct ksel *ks;
	bool m;

	if (sets[0] == NULL) {
		for (size_t i = 0; i < nsets; i++) {
			sets[i] = json_tokener_parse(label_sets[i]);
		}
	}
	if ((sel = labelsel_parse(s, err, sizeof(err))) == NULL) {
		check(err[0] != '\0');
		free(s);
		return (0);
	}
	ks = ksel_parse_labels(s, kerr, sizeof(kerr));
	check(ks != NULL);
	for (size_t i = 0; i < nsets; i++) {
		m = labelsel_match_json(sel, sets[i]);
		check(m == labelsel_match(sel, get, sets[i]));
		check(m == ksel_match_labels(ks, sets[i]));
		if (labelsel_empty(sel)) {
			check(m);
		}
	}
	check(labelsel_match_json(sel, NULL) == ksel_match_labels(ks, NULL));
	ksel_free(ks);
	labelsel_free(sel);
	free(s);
	return (0);
}
