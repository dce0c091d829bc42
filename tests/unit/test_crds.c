/*
 * test_crds.c: our CustomResourceDefinitions (deploy/crds/) against the
 * upstream Sympozium ones, as the committed digest of their facts holds
 * them (tests/unit/data/upstream-crds.digest, tests/lib/crddigest.h): our
 * digest equals it; upstream's CRDs rebuilt from it (descriptions absent)
 * have the same names, scope, versions, subresources and printer columns
 * as ours, every schema node with the same keywords and property set, and,
 * through kubesim's schema engine, give the same verdict and the same
 * defaulted and pruned object for our samples and for generated objects (a
 * "maximal" valid object per kind and one mutation per leaf).  Where the
 * upstream reference tree is present ($SHARED_DIR, else ../shared), the
 * digest must equal the one written from it, and the upstream samples get
 * the same outcome too; elsewhere those two tests are skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
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
#include "kubesim/kschema.h"
#include "tests/lib/crddigest.h"
#include "tests/lib/testutil.h"

#define OURS_DIR "deploy/crds"
#define DIGEST   "tests/unit/data/upstream-crds.digest"

static const char *const plurals[] = { "agentruns", "mcpservers",
	"personapacks", "skillpacks", "sympoziumconfigs", "sympoziuminstances",
	"sympoziumpolicies", "sympoziumschedules", NULL };

/* Properties ours may add to upstream's, as "<plural>:<path>" (each one
 * must be documented in docs/compatibility.md, "Later upstream fixes"):
 * optional fields of fixes upstream made after 008266e. */
static const char *const extra_allowed[] = {
	"mcpservers:.spec.suspended",                  /* upstream #195 */
	"mcpservers:.spec.deployment.volumes",         /* upstream #198 */
	"mcpservers:.spec.deployment.volumeMounts",    /* upstream #198 */
	"mcpservers:.spec.deployment.imagePullPolicy", /* upstream #167 */
	/* upstream #167, the AgentRun side */
	"agentruns:.spec.lifecycle.preRun[].imagePullPolicy",
	"agentruns:.spec.lifecycle.postRun[].imagePullPolicy",
	"agentruns:.spec.sandbox.imagePullPolicy",
	"sympoziuminstances:.spec.agents.default.lifecycle.preRun[]."
	"imagePullPolicy",
	"sympoziuminstances:.spec.agents.default.lifecycle.postRun[]."
	"imagePullPolicy",
	"sympoziuminstances:.spec.agents.default.sandbox.imagePullPolicy",
	"personapacks:.spec.personas[].lifecycle.preRun[].imagePullPolicy",
	"personapacks:.spec.personas[].lifecycle.postRun[].imagePullPolicy",
	"skillpacks:.spec.sidecar.imagePullPolicy",
	NULL,
};

/* Whether digest line l (CRD VERSION PATH ...) is a fact of an allowed
 * extra property or below it. */
static bool
extra_line(const char *l)
{
	for (size_t i = 0; extra_allowed[i] != NULL; i++) {
		const char *colon = strchr(extra_allowed[i], ':');
		size_t pl = (size_t)(colon - extra_allowed[i]);
		const char *path = colon + 1, *p;
		size_t n = strlen(path);

		if (strncmp(l, extra_allowed[i], pl) != 0
		        || strncmp(l + pl, ".sympozium.ai ", 14) != 0
		        || (p = strchr(l + pl + 14, ' ')) == NULL) {
			continue;
		}
		p++;
		if (strncmp(p, path, n) == 0
		        && (p[n] == ' ' || p[n] == '.' || p[n] == '[')) {
			return (true);
		}
	}
	return (false);
}

/* The digest without the lines of allowed extra properties (caller
 * frees). */
static char *
drop_extras(char *d)
{
	struct buf out = BUF_INIT;

	for (const char *l = d, *nl; (nl = strchr(l, '\n')) != NULL;
	        l = nl + 1) {
		if (!extra_line(l)) {
			buf_append(&out, l, (size_t)(nl - l + 1));
		}
	}
	buf_puts(&out, "");
	free(d);
	return (buf_detach(&out, NULL));
}

static json_object *
load_doc(const char *path)
{
	char err[256], *text;
	size_t len;
	json_object *doc;

	text = testutil_read_file(path, &len);
	doc = yamlj_parse(text, len, err, sizeof(err));
	free(text);
	if (doc == NULL) {
		fail_msg("%s: %s", path, err);
	}
	return (doc);
}

static json_object *
load_ours(const char *plural)
{
	char *p = xasprintf("%s/sympozium.ai_%s.yaml", OURS_DIR, plural);
	json_object *doc = load_doc(p);

	free(p);
	return (doc);
}

/* The committed digest of the upstream CRDs (borrowed, read once). */
static const char *
digest(void)
{
	static char *text;
	size_t len;

	if (text == NULL) {
		text = testutil_read_file(DIGEST, &len);
	}
	return (text);
}

/* Upstream's CRD rebuilt from the digest. */
static json_object *
load_upstream(const char *plural)
{
	char err[256], *name = xasprintf("%s.sympozium.ai", plural);
	json_object *crd = crddigest_crd(digest(), name, err, sizeof(err));

	if (crd == NULL) {
		fail_msg("%s: %s", DIGEST, err);
	}
	free(name);
	return (crd);
}

/* The openAPIV3Schema of the CRD's first version (borrowed). */
static json_object *
schema_of(json_object *crd)
{
	json_object *v
	        = json_object_array_get_idx(jx_get(crd, "spec.versions"), 0);

	return (jx_get(v, "schema.openAPIV3Schema"));
}

static struct kschema *
compile(json_object *crd)
{
	char err[256];
	struct kschema *ks = kschema_new(schema_of(crd), err, sizeof(err));

	if (ks == NULL) {
		fail_msg("%s: %s", jx_get_str(crd, "metadata.name"), err);
	}
	return (ks);
}

/* ------------------------------------------------------------------ */
/* Files */

static void
test_files_and_kustomization(void **state)
{
	json_object *k = load_doc(OURS_DIR "/kustomization.yaml");
	json_object *res = jx_get(k, "resources");
	glob_t g;
	size_t i;

	(void)state;
	assert_string_equal(jx_get_str(k, "kind"), "Kustomization");
	assert_non_null(res);
	assert_int_equal(json_object_array_length(res), 8);
	for (i = 0; plurals[i] != NULL; i++) {
		char *want = xasprintf("sympozium.ai_%s.yaml", plurals[i]);

		assert_string_equal(json_object_get_string(
		                            json_object_array_get_idx(res, i)),
		        want);
		free(want);
	}
	assert_int_equal(glob(OURS_DIR "/*.yaml", 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 9); /* eight CRDs + kustomization */
	globfree(&g);
	json_object_put(k);
}

/* ------------------------------------------------------------------ */
/* Digest: ours against the committed one, the committed one against the
 * tree, and lossless */

/* The fact lines of digest text d (comments aside) that are not in e,
 * each prefixed with tag, at most 20 (caller frees). */
static char *
lines_missing(const char *d, const char *e, const char *tag)
{
	struct buf out = BUF_INIT;
	size_t n = 0;

	for (const char *l = d, *nl; (nl = strchr(l, '\n')) != NULL;
	        l = nl + 1) {
		char *line = xstrndup(l, (size_t)(nl - l + 1));
		const char *hit = strstr(e, line);

		/* whole lines only: at the start or after a newline */
		while (hit != NULL && hit != e && hit[-1] != '\n') {
			hit = strstr(hit + 1, line);
		}
		if (line[0] != '#' && hit == NULL && n++ < 20) {
			buf_printf(&out, "%s %s", tag, line);
		}
		free(line);
	}
	buf_puts(&out, "");
	return (buf_detach(&out, NULL));
}

/* "" when the digests hold the same facts, else the differences, each
 * line tagged with the name (padded) of the one that has it. */
static char *
digest_diff(const char *x, const char *xname, const char *y, const char *yname)
{
	char *a = lines_missing(x, y, xname);
	char *b = lines_missing(y, x, yname);
	char *d = xasprintf("%s%s", a, b);

	free(a);
	free(b);
	return (d);
}

static char *
digest_of_ours(void)
{
	char err[256];
	char *d = crddigest_files(
	        OURS_DIR "/sympozium.ai_*.yaml", err, sizeof(err));

	if (d == NULL) {
		fail_msg("%s", err);
	}
	return (d);
}

static void
test_digest_of_ours_equal(void **state)
{
	char *ours = drop_extras(digest_of_ours());
	char *d = digest_diff(
	        ours, "only in ours:    ", digest(), "only in the digest:");

	(void)state;
	if (d[0] != '\0') {
		fail_msg("our CRDs against %s:\n%s", DIGEST, d);
	}
	/* ~1,000 facts: the digest really holds the schemas */
	assert_true(strlen(digest()) > 50000);
	free(d);
	free(ours);
}

/* The committed digest is the one written from the tree (skipped where
 * the tree is absent). */
static void
test_digest_matches_tree(void **state)
{
	char *dir = testutil_shared_path(TESTUTIL_UPSTREAM "/crds");
	char *pat = xasprintf("%s/*.yaml", dir), err[256];
	char *tree = crddigest_files(pat, err, sizeof(err));

	(void)state;
	if (tree == NULL) {
		fail_msg("%s", err);
	}
	if (strcmp(tree, digest()) != 0) {
		char *d = digest_diff(tree, "only in the tree:  ", digest(),
		        "only in the digest:");

		fail_msg("%s differs from the tree's digest (make crd-digest "
		         "rewrites it):\n%s",
		        DIGEST, d);
	}
	free(tree);
	free(pat);
	free(dir);
}

/* A CRD rebuilt from the digest has the same digest: nothing is lost. */
static void
test_digest_lossless(void **state)
{
	struct buf all = BUF_INIT;
	char err[256], *diff;
	size_t i;

	(void)state;
	for (i = 0; plurals[i] != NULL; i++) {
		json_object *u = load_upstream(plurals[i]);
		char *d = crddigest_of(u, err, sizeof(err));

		assert_non_null(d);
		buf_puts(&all, d);
		free(d);
		json_object_put(u);
	}
	buf_puts(&all, "");
	diff = digest_diff(
	        all.data, "only rebuilt:", digest(), "only in the digest:");
	if (diff[0] != '\0') {
		fail_msg("rebuilt CRDs:\n%s", diff);
	}
	free(diff);
	buf_fini(&all);
}

/* Malformed digests are refused with a message, never a crash. */
static void
test_digest_bad_lines(void **state)
{
	static const char *const bad[] = {
		"",
		"x.sympozium.ai - - versions \"v1\"\n",
		"x.sympozium.ai - - versions [1]\n",
		"x.sympozium.ai v1 nopath type \"string\"\n",
		"x.sympozium.ai v1 .a type {bad json\n",
		"x.sympozium.ai - - spec 5\nx.sympozium.ai v1 - served true\n",
		"x.sympozium.ai - - spec.versions {}\n"
		"x.sympozium.ai v1 - served true\n",
		"x.sympozium.ai v1 . items true\n"
		"x.sympozium.ai v1 [] type \"string\"\n",
		"x.sympozium.ai v1 .[] type \"string\"\n",
		"x.sympozium.ai v1 .a.. type \"string\"\n",
		"x.sympozium.ai v1 .a properties 1\n"
		"x.sympozium.ai v1 .a.b type \"string\"\n",
	};
	char err[256];
	json_object *o;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		o = crddigest_crd(bad[i], "x.sympozium.ai", err, sizeof(err));
		if (o != NULL || err[0] == '\0') {
			fail_msg("digest %zu accepted: %s", i, bad[i]);
		}
	}
	o = crddigest_crd("x.sympozium.ai v1 .a{} type \"string\"\n"
	                  "x.sympozium.ai v1 .a[] type null\n",
	        "x.sympozium.ai", err, sizeof(err));
	assert_non_null(o);
	assert_string_equal(jx_get_str(o,
	                            "spec.versions.0.schema.openAPIV3Schema."
	                            "properties.a.additionalProperties.type"),
	        "string");
	json_object_put(o);
}

/* One change to one of our CRDs and the fact line the digest then has
 * (NULL: a description, which the digest leaves out). */
static void
expect_digest_change(
        const char *path, const char *key, const char *json, const char *want)
{
	json_object *o = load_ours("agentruns"), *node = jx_get(o, path);
	char err[256], *d, *base;

	assert_non_null(node);
	base = crddigest_of(o, err, sizeof(err));
	json_object_object_add(node, key, testutil_json(json, 0));
	d = crddigest_of(o, err, sizeof(err));
	assert_non_null(d);
	if (want == NULL) {
		assert_string_equal(d, base);
	} else if (strstr(d, want) == NULL || strcmp(d, base) == 0) {
		fail_msg("%s %s: no \"%s\" in the digest", path, key, want);
	}
	free(base);
	free(d);
	json_object_put(o);
}

static void
test_digest_detects(void **state)
{
	static const char *const sp
	        = "spec.versions.0.schema.openAPIV3Schema.properties.spec";

	(void)state;
	expect_digest_change("spec", "scope", "\"Cluster\"",
	        "agentruns.sympozium.ai - - spec.scope \"Cluster\"\n");
	expect_digest_change("spec.versions.0", "additionalPrinterColumns",
	        "[{\"name\":\"X\",\"type\":\"string\",\"jsonPath\":\".x\","
	        "\"description\":\"prose\"}]",
	        "v1alpha1 - additionalPrinterColumns "
	        "[{\"jsonPath\":\".x\",\"name\":\"X\",\"type\":\"string\"}]"
	        "\n");
	expect_digest_change("spec.versions.0", "subresources", "{}",
	        "v1alpha1 - subresources {}\n");
	expect_digest_change(
	        "spec.versions.0.schema.openAPIV3Schema.properties."
	        "spec.properties.cleanup",
	        "enum", "[\"keep\"]",
	        "v1alpha1 .spec.cleanup enum [\"keep\"]\n");
	expect_digest_change(sp, "required", "[\"task\"]",
	        "v1alpha1 .spec required [\"task\"]\n");
	expect_digest_change(sp, "default", "{\"b\":1,\"a\":[2]}",
	        "v1alpha1 .spec default {\"a\":[2],\"b\":1}\n");
	expect_digest_change(sp, "items", "{\"type\":\"integer\"}",
	        "v1alpha1 .spec[] type \"integer\"\n");
	expect_digest_change(sp, "additionalProperties", "true",
	        "v1alpha1 .spec additionalProperties true\n");
	expect_digest_change(sp, "description", "\"other prose\"", NULL);
}

/* ------------------------------------------------------------------ */
/* CRD level: names, scope, versions, subresources, printer columns */

static void
expect_same(
        json_object *a, json_object *b, const char *plural, const char *path)
{
	json_object *x = jx_get(a, path), *y = jx_get(b, path);

	if (!jx_equal(x, y)) {
		char *sx = jx_to_string(x), *sy = jx_to_string(y);

		fail_msg("%s %s: ours %s, upstream %s", plural, path, sx, sy);
	}
}

static void
test_crd_level_equal(void **state)
{
	static const char *const paths[] = { "apiVersion", "kind",
		"metadata.name", "spec.group", "spec.scope", "spec.names",
		"spec.conversion", "spec.preserveUnknownFields", NULL };
	static const char *const vpaths[] = { "name", "served", "storage",
		"subresources", "additionalPrinterColumns", "deprecated",
		"selectableFields", NULL };
	size_t i, j;

	(void)state;
	for (i = 0; plurals[i] != NULL; i++) {
		json_object *o = load_ours(plurals[i]);
		json_object *u = load_upstream(plurals[i]);
		json_object *ov = jx_get(o, "spec.versions");
		json_object *uv = jx_get(u, "spec.versions");

		for (j = 0; paths[j] != NULL; j++) {
			expect_same(o, u, plurals[i], paths[j]);
		}
		assert_int_equal(json_object_array_length(ov),
		        json_object_array_length(uv));
		for (j = 0; j < json_object_array_length(uv); j++) {
			size_t k;

			for (k = 0; vpaths[k] != NULL; k++) {
				expect_same(json_object_array_get_idx(ov, j),
				        json_object_array_get_idx(uv, j),
				        plurals[i], vpaths[k]);
			}
		}
		assert_non_null(jx_get(o, "spec.versions.0.subresources"));
		json_object_put(o);
		json_object_put(u);
	}
}

/* ------------------------------------------------------------------ */
/* Schema level: every node compared keyword by keyword */

struct cmp {
	const char *plural;
	struct buf diffs; /* one line per difference */
	size_t nodes;     /* schema nodes compared */
};

/* json_object_object_foreach needs an object. */
static json_object *
obj_or_empty(json_object *o)
{
	static json_object *empty;

	if (json_object_is_type(o, json_type_object)) {
		return (o);
	}
	if (empty == NULL) {
		empty = json_object_new_object();
	}
	return (empty);
}

static bool
is_sub_key(const char *k)
{
	return (strcmp(k, "properties") == 0 || strcmp(k, "items") == 0
	        || strcmp(k, "additionalProperties") == 0
	        || strcmp(k, "description") == 0);
}

static bool
in_array(json_object *arr, json_object *v)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		if (jx_equal(json_object_array_get_idx(arr, i), v)) {
			return (true);
		}
	}
	return (false);
}

/* enum and required compare as sets; everything else exactly. */
static bool
keyword_equal(const char *k, json_object *a, json_object *b)
{
	size_t i;

	if ((strcmp(k, "enum") != 0 && strcmp(k, "required") != 0)
	        || !json_object_is_type(a, json_type_array)
	        || !json_object_is_type(b, json_type_array)) {
		return (jx_equal(a, b) && (a == NULL) == (b == NULL));
	}
	for (i = 0; i < json_object_array_length(a); i++) {
		if (!in_array(b, json_object_array_get_idx(a, i))) {
			return (false);
		}
	}
	for (i = 0; i < json_object_array_length(b); i++) {
		if (!in_array(a, json_object_array_get_idx(b, i))) {
			return (false);
		}
	}
	return (true);
}

static void
diff(struct cmp *c, const char *path, const char *fmt, const char *what)
{
	buf_printf(&c->diffs, "%s %s: ", c->plural, path[0] ? path : "<root>");
	buf_printf(&c->diffs, fmt, what);
	buf_puts(&c->diffs, "\n");
}

static bool
extra_is_allowed(const char *plural, const char *path)
{
	size_t i;

	for (i = 0; extra_allowed[i] != NULL; i++) {
		char *k = xasprintf("%s:%s", plural, path);
		bool eq = strcmp(k, extra_allowed[i]) == 0;

		free(k);
		if (eq) {
			return (true);
		}
	}
	return (false);
}

/* Keywords (not sub-schemas) present in either node must be equal. */
static void
compare_keywords(
        struct cmp *c, const char *path, json_object *o, json_object *u)
{
	json_object_object_foreach(u, k, uv)
	{
		if (!is_sub_key(k)
		        && !keyword_equal(
		                k, json_object_object_get(o, k), uv)) {
			diff(c, path, "keyword %s differs", k);
		}
	}
	json_object_object_foreach(o, k2, ov)
	{
		(void)ov;
		if (!is_sub_key(k2) && json_object_object_get(u, k2) == NULL
		        && !json_object_object_get_ex(u, k2, NULL)) {
			diff(c, path, "keyword %s only in ours", k2);
		}
	}
}

static void compare_node(
        struct cmp *c, const char *path, json_object *o, json_object *u);

static void
compare_properties(
        struct cmp *c, const char *path, json_object *o, json_object *u)
{
	json_object *op
	        = obj_or_empty(json_object_object_get(o, "properties"));
	json_object *up
	        = obj_or_empty(json_object_object_get(u, "properties"));

	json_object_object_foreach(up, k, uv)
	{
		char *p = xasprintf("%s.%s", path, k);
		json_object *ov = json_object_object_get(op, k);

		if (ov == NULL) {
			diff(c, p, "%s", "missing in ours");
		} else {
			compare_node(c, p, ov, uv);
		}
		free(p);
	}
	json_object_object_foreach(op, k2, ov2)
	{
		char *p = xasprintf("%s.%s", path, k2);

		(void)ov2;
		if (json_object_object_get(up, k2) == NULL
		        && !extra_is_allowed(c->plural, p)) {
			diff(c, p, "%s", "only in ours");
		}
		free(p);
	}
}

/* items or additionalProperties: a schema, or a boolean (compared). */
static void
compare_sub(struct cmp *c, const char *path, const char *key,
        const char *suffix, json_object *o, json_object *u)
{
	json_object *os = json_object_object_get(o, key);
	json_object *us = json_object_object_get(u, key);
	char *p = xasprintf("%s%s", path, suffix);

	if (json_object_is_type(us, json_type_object)
	        && json_object_is_type(os, json_type_object)) {
		compare_node(c, p, os, us);
	} else if (!jx_equal(os, us) || (os == NULL) != (us == NULL)) {
		diff(c, p, "%s differs", key);
	}
	free(p);
}

static void
compare_node(struct cmp *c, const char *path, json_object *o, json_object *u)
{
	c->nodes++;
	compare_keywords(c, path, o, u);
	compare_properties(c, path, o, u);
	compare_sub(c, path, "items", "[]", o, u);
	compare_sub(c, path, "additionalProperties", "{}", o, u);
}

/* Differences between the two schemas, one per line (caller frees). */
static char *
schema_diffs(
        const char *plural, json_object *ours, json_object *up, size_t *nodes)
{
	struct cmp c = { .plural = plural, .diffs = BUF_INIT };

	compare_node(&c, "", ours, up);
	*nodes = c.nodes;
	buf_puts(&c.diffs, "");
	return (buf_detach(&c.diffs, NULL));
}

static void
test_schemas_match(void **state)
{
	size_t i, total = 0;

	(void)state;
	for (i = 0; plurals[i] != NULL; i++) {
		json_object *o = load_ours(plurals[i]);
		json_object *u = load_upstream(plurals[i]);
		size_t nodes;
		char *d = schema_diffs(
		        plurals[i], schema_of(o), schema_of(u), &nodes);

		if (d[0] != '\0') {
			fail_msg("schema differences:\n%s", d);
		}
		total += nodes;
		free(d);
		json_object_put(o);
		json_object_put(u);
	}
	/* ~680 nodes upstream: the walk really went everywhere */
	assert_true(total >= 650);
}

/* The comparison itself catches each kind of difference. */
static void
test_schema_compare_detects(void **state)
{
	static const struct {
		const char *path; /* node (dotted, through properties) */
		const char *key;
		const char *json; /* NULL: delete key */
		const char *want;
	} muts[] = {
		{ "properties.spec.properties.cleanup", "enum", "[\"delete\"]",
		        "spec.cleanup: keyword enum" },
		{ "properties.spec.properties.cleanup", "default", "\"keep\"",
		        "keyword default" },
		{ "properties.spec", "required", "[\"agentId\"]",
		        "keyword required" },
		{ "properties.status.properties.exitCode", "format", NULL,
		        "keyword format" },
		{ "properties.spec.properties.timeout", "pattern", "\"^x$\"",
		        "keyword pattern only in ours" },
		{ "properties.spec.properties", "bogus",
		        "{\"type\":\"string\"}", "spec.bogus: only in ours" },
		{ "properties.spec.properties", "task", NULL,
		        "spec.task: missing in ours" },
		{ "properties.spec.properties.env", "additionalProperties",
		        "{\"type\":\"integer\"}", "spec.env{}: keyword type" },
		{ "properties.spec.properties.skills", "items", "true",
		        "spec.skills[]: items differs" },
	};
	json_object *u = load_upstream("agentruns");
	size_t i, nodes;

	(void)state;
	for (i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		json_object *m = NULL;
		json_object *node;
		char *d;

		json_object_deep_copy(schema_of(u), &m, NULL);
		node = jx_get(m, muts[i].path);
		assert_non_null(node);
		if (muts[i].json == NULL) {
			json_object_object_del(node, muts[i].key);
		} else {
			json_object_object_add(node, muts[i].key,
			        testutil_json(muts[i].json, 0));
		}
		d = schema_diffs("agentruns", m, schema_of(u), &nodes);
		if (strstr(d, muts[i].want) == NULL) {
			fail_msg("mutation %zu: got \"%s\"", i, d);
		}
		free(d);
		json_object_put(m);
	}
	json_object_put(u);
}

/* ------------------------------------------------------------------ */
/* Behaviour: default + prune + validate under both schemas */

struct pair {
	struct kschema *ours, *up;
};

static void
pair_load(struct pair *p, const char *plural)
{
	json_object *o = load_ours(plural), *u = load_upstream(plural);

	p->ours = compile(o);
	p->up = compile(u);
	json_object_put(o);
	json_object_put(u);
}

static void
pair_free(struct pair *p)
{
	kschema_free(p->ours);
	kschema_free(p->up);
}

/* Defaults, prunes and validates obj (borrowed, not changed): the pruned
 * paths, the causes and the resulting object, as one string (caller
 * frees). */
static char *
process(const struct kschema *ks, json_object *obj, bool *valid)
{
	json_object *c = NULL;
	struct buf b = BUF_INIT, pruned = BUF_INIT;

	struct kschema_cause *causes;
	size_t n, i;
	char *s;

	assert_int_equal(json_object_deep_copy(obj, &c, NULL), 0);
	kschema_default(ks, c);
	kschema_prune(ks, c, &pruned);
	*valid = kschema_validate(ks, c, &causes, &n) == 0;
	buf_printf(&b, "pruned[%s] causes[", pruned.len ? pruned.data : "");
	for (i = 0; i < n; i++) {
		buf_printf(&b, "%s|%s|%s;", causes[i].field, causes[i].reason,
		        causes[i].message);
	}
	s = jx_to_string(c);
	buf_printf(&b, "] obj %s", s);
	free(s);
	kschema_causes_free(causes, n);
	buf_fini(&pruned);
	json_object_put(c);
	return (buf_detach(&b, NULL));
}

/* Same outcome under both; returns upstream's verdict. */
static bool
same_outcome(const struct pair *p, json_object *obj, const char *what)
{
	bool vo, vu;
	char *so = process(p->ours, obj, &vo);
	char *su = process(p->up, obj, &vu);

	if (strcmp(so, su) != 0 || vo != vu) {
		fail_msg("%s:\n ours     %s\n upstream %s", what, so, su);
	}
	free(so);
	free(su);
	return (vu);
}

static const char *
plural_of(const char *kind)
{
	static const char *const kinds[]
	        = { "AgentRun", "MCPServer", "PersonaPack", "SkillPack",
		          "SympoziumConfig", "SympoziumInstance",
		          "SympoziumPolicy", "SympoziumSchedule", NULL };
	size_t i;

	for (i = 0; kind != NULL && kinds[i] != NULL; i++) {
		if (strcmp(kinds[i], kind) == 0) {
			return (plurals[i]);
		}
	}
	return (NULL);
}

/* Every sympozium document of the files matching glob_pat through both
 * schemas; counts upstream's verdicts. */
static void
samples_outcome(const char *glob_pat, size_t *nvalid, size_t *ninvalid)
{
	size_t i, j;
	glob_t g;

	assert_int_equal(glob(glob_pat, 0, NULL, &g), 0);
	for (i = 0; i < g.gl_pathc; i++) {
		json_object *docs = testutil_read_yaml(g.gl_pathv[i]);

		for (j = 0; j < json_object_array_length(docs); j++) {
			json_object *d = json_object_array_get_idx(docs, j);
			const char *pl = plural_of(jx_get_str(d, "kind"));
			struct pair p;

			if (pl == NULL) {
				continue;
			}
			pair_load(&p, pl);
			if (same_outcome(&p, d, g.gl_pathv[i])) {
				(*nvalid)++;
			} else {
				(*ninvalid)++;
			}
			pair_free(&p);
		}
		json_object_put(docs);
	}
	globfree(&g);
	print_message("%s: %zu accepted, %zu rejected\n", glob_pat, *nvalid,
	        *ninvalid);
}

/* The upstream samples (skipped where the tree is absent). */
static void
test_samples_same_outcome(void **state)
{
	char *dir = testutil_shared_path(TESTUTIL_UPSTREAM "/samples");
	char *glob_pat = xasprintf("%s/*.yaml", dir);
	size_t nvalid = 0, ninvalid = 0;

	(void)state;
	samples_outcome(glob_pat, &nvalid, &ninvalid);
	free(glob_pat);
	free(dir);
	/* test_kschema.c: two samples are stale and rejected upstream */
	assert_int_equal(ninvalid, 2);
	assert_true(nvalid >= 10);
}

/* Our samples, one per kind: all accepted under both. */
static void
test_our_samples_same_outcome(void **state)
{
	size_t nvalid = 0, ninvalid = 0;

	(void)state;
	samples_outcome("deploy/samples/*.yaml", &nvalid, &ninvalid);
	assert_int_equal(ninvalid, 0);
	assert_int_equal(nvalid, 8);
}

/* ------------------------------------------------------------------ */
/* Generated objects */

/* A string accepted by the node's pattern/minLength/maxLength, chosen
 * among fixed candidates and checked with kschema itself. */
static json_object *
gen_string(json_object *s)
{
	static const char *const cands[] = { "a1", "Ready", "100m", "x",
		"example.com/Ready", "abc", NULL };
	json_object *one = json_object_new_object();
	struct kschema *ks;
	char err[256];
	size_t i;

	json_object_object_foreach(s, k, v)
	{
		if (strcmp(k, "pattern") == 0 || strcmp(k, "minLength") == 0
		        || strcmp(k, "maxLength") == 0) {
			json_object_object_add(one, k, json_object_get(v));
		}
	}
	json_object_object_add(one, "type", json_object_new_string("string"));
	ks = kschema_new(one, err, sizeof(err));
	assert_non_null(ks);
	for (i = 0; cands[i] != NULL; i++) {
		json_object *str = json_object_new_string(cands[i]);
		struct kschema_cause *c;
		size_t n;

		if (kschema_validate(ks, str, &c, &n) == 0) {
			kschema_free(ks);
			json_object_put(one);
			return (str);
		}
		kschema_causes_free(c, n);
		json_object_put(str);
	}
	fail_msg("no candidate string for %s", jx_to_string(s));
	return (NULL);
}

static json_object *gen_value(json_object *s);

static json_object *
gen_object(json_object *s)
{
	json_object *o = json_object_new_object();
	json_object *props
	        = obj_or_empty(json_object_object_get(s, "properties"));
	json_object *ap = json_object_object_get(s, "additionalProperties");

	json_object_object_foreach(props, k, ps)
	{
		json_object_object_add(o, k, gen_value(ps));
	}
	if (json_object_is_type(ap, json_type_object)) {
		json_object_object_add(o, "key1", gen_value(ap));
	}
	return (o);
}

static json_object *
gen_scalar(json_object *s, const char *type)
{
	json_object *v = json_object_object_get(s, "minimum");
	const char *fmt = jx_get_str(s, "format");

	if (strcmp(type, "integer") == 0) {
		return (json_object_new_int64(
		        v != NULL ? json_object_get_int64(v) + 1 : 7));
	}
	if (strcmp(type, "number") == 0) {
		return (json_object_new_double(1.5));
	}
	if (strcmp(type, "boolean") == 0) {
		return (json_object_new_boolean(1));
	}
	if (fmt != NULL && strcmp(fmt, "date-time") == 0) {
		return (json_object_new_string("2024-01-02T03:04:05Z"));
	}
	if (fmt != NULL && strcmp(fmt, "date") == 0) {
		return (json_object_new_string("2024-01-02"));
	}
	return (gen_string(s));
}

/* A valid value with every property filled in. */
static json_object *
gen_value(json_object *s)
{
	json_object *e = json_object_object_get(s, "enum");
	const char *type = jx_get_str(s, "type");
	json_object *v = NULL;

	if (e != NULL) {
		/* the last value: not the default, mostly */
		json_object_deep_copy(json_object_array_get_idx(e,
		                              json_object_array_length(e) - 1),
		        &v, NULL);
		return (v);
	}
	if (json_object_object_get(s, "x-kubernetes-int-or-string") != NULL) {
		return (json_object_new_string("250m"));
	}
	if (type == NULL || strcmp(type, "object") == 0) {
		return (gen_object(s));
	}
	if (strcmp(type, "array") == 0) {
		v = json_object_new_array();
		json_object_array_add(
		        v, gen_value(json_object_object_get(s, "items")));
		return (v);
	}
	return (gen_scalar(s, type));
}

static json_object *
gen_maximal(json_object *schema, const char *kind)
{
	json_object *o = gen_value(schema);

	json_object_object_add(o, "apiVersion",
	        json_object_new_string("sympozium.ai/v1alpha1"));
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "metadata",
	        testutil_json(
	                "{\"name\":\"max\",\"namespace\":\"default\"}", 0));
	return (o);
}

struct mut {
	const struct pair *p;
	json_object *root;
	const char *plural;
	size_t n, rejected;
};

/* Runs one mutated root through both schemas. */
static void
check_mut(struct mut *m, const char *path, const char *what)
{
	char *label = xasprintf("%s %s (%s)", m->plural, path, what);

	if (!same_outcome(m->p, m->root, label)) {
		m->rejected++;
	}
	m->n++;
	free(label);
}

/* Replaces the value in parent (object key or array index) with v for
 * one check, then puts the original back. */
static void
try_value(struct mut *m, json_object *parent, const char *key, size_t idx,
        json_object *v, const char *path, const char *what)
{
	json_object *orig;

	if (key != NULL) {
		orig = json_object_get(json_object_object_get(parent, key));
		json_object_object_add(parent, key, v);
		check_mut(m, path, what);
		json_object_object_add(parent, key, orig);
	} else {
		orig = json_object_get(json_object_array_get_idx(parent, idx));
		json_object_array_put_idx(parent, idx, v);
		check_mut(m, path, what);
		json_object_array_put_idx(parent, idx, orig);
	}
}

static json_object *
wrong_type(json_object *v)
{
	if (json_object_is_type(v, json_type_string)) {
		return (json_object_new_array());
	}
	return (json_object_new_string("wrong"));
}

static void mutate_tree(struct mut *m, json_object *v, json_object *parent,
        const char *key, size_t idx, const char *path);

/* Mutations of the members of an object: removal of each key (required
 * ones are rejected), an unknown key (pruned the same way). */
static void
mutate_members(struct mut *m, json_object *o, const char *path)
{
	char **keys;
	size_t n = 0, i;

	keys = xcalloc(
	        (size_t)json_object_object_length(o) + 1, sizeof(*keys));
	json_object_object_foreach(o, k, v0)
	{
		(void)v0;
		keys[n++] = xstrdup(k);
	}
	for (i = 0; i < n; i++) {
		char *p = xasprintf("%s.%s", path, keys[i]);
		json_object *orig
		        = json_object_get(json_object_object_get(o, keys[i]));

		if (strcmp(path, "") != 0
		        || strcmp(keys[i], "metadata") != 0) {
			json_object_object_del(o, keys[i]);
			check_mut(m, p, "removed");
			json_object_object_add(
			        o, keys[i], json_object_get(orig));
			mutate_tree(m, orig, o, keys[i], 0, p);
		}
		json_object_put(orig);
		free(p);
		free(keys[i]);
	}
	free(keys);
	json_object_object_add(o, "zzUnknown", json_object_new_string("x"));
	check_mut(m, path, "unknown field");
	json_object_object_del(o, "zzUnknown");
}

static void
mutate_scalar(struct mut *m, json_object *v, json_object *parent,
        const char *key, size_t idx, const char *path)
{
	if (json_object_is_type(v, json_type_string)) {
		try_value(m, parent, key, idx, json_object_new_string(""),
		        path, "empty string");
		try_value(m, parent, key, idx,
		        json_object_new_string("!not valid!"), path,
		        "other string");
		try_value(m, parent, key, idx, json_object_new_int(3), path,
		        "integer for string");
	}
	if (json_object_is_type(v, json_type_int)) {
		try_value(m, parent, key, idx, json_object_new_int64(-1), path,
		        "negative");
		try_value(m, parent, key, idx, json_object_new_double(2.5),
		        path, "fraction");
	}
}

static void
mutate_tree(struct mut *m, json_object *v, json_object *parent,
        const char *key, size_t idx, const char *path)
{
	try_value(m, parent, key, idx, wrong_type(v), path, "wrong type");
	try_value(m, parent, key, idx, NULL, path, "null");
	if (json_object_is_type(v, json_type_object)) {
		mutate_members(m, v, path);
	} else if (json_object_is_type(v, json_type_array)) {
		size_t i;

		for (i = 0; i < json_object_array_length(v); i++) {
			char *p = xasprintf("%s[%zu]", path, i);

			mutate_tree(m, json_object_array_get_idx(v, i), v,
			        NULL, i, p);
			free(p);
		}
		json_object_array_add(v, json_object_new_int(1));
		check_mut(m, path, "extra bad element");
		json_object_array_del_idx(
		        v, json_object_array_length(v) - 1, 1);
	} else {
		mutate_scalar(m, v, parent, key, idx, path);
	}
}

static void
test_generated_objects(void **state)
{
	size_t i, total = 0, rejected = 0;

	(void)state;
	for (i = 0; plurals[i] != NULL; i++) {
		json_object *u = load_upstream(plurals[i]);
		json_object *obj = gen_maximal(
		        schema_of(u), jx_get_str(u, "spec.names.kind"));
		json_object *before = NULL;
		struct pair p;
		struct mut m = { .p = &p, .root = obj, .plural = plurals[i] };

		json_object_deep_copy(obj, &before, NULL);
		pair_load(&p, plurals[i]);
		if (!same_outcome(&p, obj, plurals[i])) {
			bool ok;

			fail_msg("maximal %s rejected upstream: %s",
			        plurals[i], process(p.up, obj, &ok));
		}
		mutate_members(&m, obj, "");
		assert_true(jx_equal(obj, before)); /* mutations undone */
		total += m.n;
		rejected += m.rejected;
		json_object_put(before);
		pair_free(&p);
		json_object_put(obj);
		json_object_put(u);
	}
	print_message("generated objects: %zu mutations, %zu rejected\n",
	        total, rejected);
	assert_true(total >= 2000);
	assert_true(rejected >= total / 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_and_kustomization),
		cmocka_unit_test(test_digest_of_ours_equal),
		cmocka_unit_test(test_digest_matches_tree),
		cmocka_unit_test(test_digest_lossless),
		cmocka_unit_test(test_digest_detects),
		cmocka_unit_test(test_digest_bad_lines),
		cmocka_unit_test(test_crd_level_equal),
		cmocka_unit_test(test_schemas_match),
		cmocka_unit_test(test_schema_compare_detects),
		cmocka_unit_test(test_samples_same_outcome),
		cmocka_unit_test(test_our_samples_same_outcome),
		cmocka_unit_test(test_generated_objects),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
