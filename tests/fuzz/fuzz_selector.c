/*
 * fuzz_selector.c: libFuzzer target for kubesim's label and field selectors
 * (kubesim/ksel.c).  The input is split at its first NUL byte (or
 * '\n' when there is none): the first part is parsed as a label selector,
 * the second as a field selector for pods.  Whatever parses is matched
 * against a small fixed pod; an error must come with a non-empty message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "kubesim/ksel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pod_json[]
        = "{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"labels\":"
          "{\"env\":\"a\",\"tier\":\"web\",\"n\":\"10\",\"example.com/"
          "x\":\"\"}},"
          "\"spec\":{\"nodeName\":\"node,1\",\"replicas\":3,\"ratio\":0.25,"
          "\"paused\":false},\"status\":{\"phase\":\"Running\"}}";

static const char *const pod_extra[] = { "spec.nodeName", "status.phase",
	"spec.replicas", "spec.ratio", "spec.paused", NULL };

static void
fuzz_labels(const char *s, json_object *pod)
{
	char err[256] = "";
	struct ksel *sel = ksel_parse_labels(s, err, sizeof(err));

	if (sel == NULL) {
		if (err[0] == '\0') {
			__builtin_trap();
		}
		return;
	}
	(void)ksel_match_labels(sel, jx_get(pod, "metadata.labels"));
	(void)ksel_match_labels(sel, NULL);
	ksel_free(sel);
}

static void
fuzz_fields(const char *s, json_object *pod)
{
	char err[256] = "";
	struct ksel_fields *sel
	        = ksel_parse_fields(s, pod_extra, "pods", err, sizeof(err));
	const char *name;

	if (sel == NULL) {
		if (err[0] == '\0') {
			__builtin_trap();
		}
		return;
	}
	(void)ksel_match_fields(sel, pod);
	name = ksel_fields_name(sel);
	if (name != NULL && strlen(name) > strlen(s)) {
		__builtin_trap();
	}
	ksel_fields_free(sel);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_object *pod;
	const uint8_t *cut;
	char *lab, *fld;
	size_t n;

	if (pod == NULL) {
		pod = json_tokener_parse(pod_json);
	}
	cut = memchr(data, '\0', size);
	if (cut == NULL) {
		cut = memchr(data, '\n', size);
	}
	n = cut != NULL ? (size_t)(cut - data) : size;
	lab = xstrndup((const char *)data, n);
	fld = cut != NULL ? xstrndup((const char *)cut + 1, size - n - 1)
	                  : xstrdup("");
	fuzz_labels(lab, pod);
	fuzz_fields(fld, pod);
	free(lab);
	free(fld);
	return (0);
}
