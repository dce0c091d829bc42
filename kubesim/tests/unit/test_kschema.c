/*
 * test_kschema.c: tests of kubesim/kschema: the sympozium CRDs
 * (ours, deploy/crds, which test_crds checks against upstream's) compile,
 * the upstream samples (read in place from ../shared/upstream, or
 * $SHARED_DIR; skipped where absent) default, prune and validate,
 * hand-made invalid variants give the Kubernetes field paths and reasons,
 * and hostile inputs stay bounded.
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
#include "kubesim/kschema.h"
#include "tests/lib/testutil.h"

/* Our CRDs, deploy/crds (test_crds checks them against upstream's). */
#define CRDS "deploy/crds/sympozium.ai_*.yaml"

/* Globs rel (a pattern such as samples/NAME.yaml) in the upstream tree
 * (the running test is skipped where it is absent). */
static void
upstream_glob(const char *rel, glob_t *g)
{
	char *dir = testutil_shared_path(TESTUTIL_UPSTREAM);
	char *pat = xasprintf("%s/%s", dir, rel);

	assert_int_equal(glob(pat, 0, NULL, g), 0);
	free(pat);
	free(dir);
}

static json_object *
load_all(const char *path)
{
	char err[256], *text;
	size_t len;
	json_object *docs;

	text = testutil_read_file(path, &len);
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

	assert_int_equal(glob(CRDS, 0, NULL, &g), 0);
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

static json_object *
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

static void
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
	assert_int_equal(glob(CRDS, 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 8);
	for (i = 0; i < g.gl_pathc; i++) {
		json_object *docs = load_all(g.gl_pathv[i]);
		json_object *vs = jx_get(
		        json_object_array_get_idx(docs, 0), "spec.versions");

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
	        "spec.skills[0]|FieldValueTypeInvalid|Invalid value: "
	        "\"string\": "
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
	static const char *const kinds[]
	        = { "AgentRun", "MCPServer", "PersonaPack", "SkillPack",
		          "SympoziumConfig", "SympoziumInstance",
		          "SympoziumPolicy", "SympoziumSchedule", NULL };
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
	upstream_glob("samples/*.yaml", &g);
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

/* Sets the value at a dotted path whose last segment is an object key
 * (intermediate array indexes allowed); takes ownership of v. */
static void
set_at(json_object *o, const char *path, json_object *v)
{
	const char *dot = strrchr(path, '.');
	char *parent = xstrndup(path, dot != NULL ? (size_t)(dot - path) : 0);
	json_object *p = jx_get(o, parent);

	assert_non_null(p);
	json_object_object_add(p, dot != NULL ? dot + 1 : path, v);
	free(parent);
}

static json_object *
schedule(void)
{
	return (parse(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	        "\"kind\":\"SympoziumSchedule\",\"metadata\":{\"name\":\"s\"},"
	        "\"spec\":{\"instanceRef\":\"demo\",\"schedule\":\"0 * * * "
	        "*\","
	        "\"task\":\"t\",\"type\":\"heartbeat\",\"includeMemory\":true}"
	        ","
	        "\"status\":{\"conditions\":[{\"type\":\"Ready\","
	        "\"status\":\"True\",\"reason\":\"Ok\",\"message\":\"\","
	        "\"lastTransitionTime\":\"2024-01-02T03:04:05Z\","
	        "\"observedGeneration\":3}]}}"));
}

/* Sets the dotted path of a fresh schedule to the JSON value and returns
 * the causes. */
static void
expect_variant(const char *path, const char *json, const char *want)
{
	struct kschema *ks = schema_for("SympoziumSchedule", "v1alpha1");
	json_object *o = schedule();

	if (json != NULL) {
		set_at(o, path, parse(json));
	} else {
		jx_strip(o, path);
	}
	expect_causes(ks, o, want);
	json_object_put(o);
	kschema_free(ks);
}

static void
test_valid_variant_base(void **state)
{
	struct kschema *ks = schema_for("SympoziumSchedule", "v1alpha1");
	json_object *o = schedule();

	(void)state;
	expect_causes(ks, o, "");
	json_object_put(o);
	kschema_free(ks);
}

static void
test_wrong_type(void **state)
{
	(void)state;
	expect_variant("spec.includeMemory", "\"yes\"",
	        "spec.includeMemory|FieldValueTypeInvalid|Invalid value: "
	        "\"string\": spec.includeMemory in body must be of type "
	        "boolean: "
	        "\"string\"");
	expect_variant("spec.task", "[1]",
	        "spec.task|FieldValueTypeInvalid|Invalid value: \"array\": "
	        "spec.task in body must be of type string: \"array\"");
	expect_variant("status.conditions.0.observedGeneration", "1.5",
	        "status.conditions[0].observedGeneration|"
	        "FieldValueTypeInvalid|"
	        "Invalid value: \"number\": status.conditions[0]."
	        "observedGeneration in body must be of type integer: "
	        "\"number\"");
	expect_variant("spec", "\"x\"",
	        "spec|FieldValueTypeInvalid|Invalid value: \"string\": spec "
	        "in "
	        "body must be of type object: \"string\"");
}

static void
test_required(void **state)
{
	(void)state;
	expect_variant("spec.task", NULL,
	        "spec.task|FieldValueRequired|Required value");
	expect_variant("status.conditions.0.reason", NULL,
	        "status.conditions[0].reason|FieldValueRequired|Required "
	        "value");
}

static void
test_enum(void **state)
{
	(void)state;
	expect_variant("spec.concurrencyPolicy", "\"Sometimes\"",
	        "spec.concurrencyPolicy|FieldValueNotSupported|Unsupported "
	        "value: "
	        "\"Sometimes\": supported values: \"Forbid\", \"Allow\", "
	        "\"Replace\"");
	expect_variant("status.conditions.0.status", "\"true\"",
	        "status.conditions[0].status|FieldValueNotSupported|"
	        "Unsupported "
	        "value: \"true\": supported values: \"True\", \"False\", "
	        "\"Unknown\"");
}

static void
test_pattern(void **state)
{
	(void)state;
	expect_variant("status.conditions.0.reason", "\"not ok\"",
	        "status.conditions[0].reason|FieldValueInvalid|Invalid value: "
	        "\"not ok\": status.conditions[0].reason in body should match "
	        "'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'");
	expect_variant("status.conditions.0.reason", "\"A_b,c:D\"", "");
	expect_variant(
	        "status.conditions.0.type", "\"example.com/Ready\"", "");
	expect_variant("status.conditions.0.type", "\"Example.com/Ready\"",
	        "status.conditions[0].type|FieldValueInvalid|Invalid value: "
	        "\"Example.com/Ready\": status.conditions[0].type in body "
	        "should "
	        "match '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
	        "[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$'");
}

static void
test_range_and_length(void **state)
{
	char *big = xmalloc(1026), *js;

	(void)state;
	expect_variant("status.conditions.0.observedGeneration", "-1",
	        "status.conditions[0].observedGeneration|FieldValueInvalid|"
	        "Invalid value: -1: status.conditions[0].observedGeneration "
	        "in "
	        "body should be greater than or equal to 0");
	expect_variant("status.conditions.0.reason", "\"\"",
	        "status.conditions[0].reason|FieldValueInvalid|Invalid value: "
	        "\"\": status.conditions[0].reason in body should be at least "
	        "1 "
	        "chars long;status.conditions[0].reason|FieldValueInvalid|"
	        "Invalid value: \"\": status.conditions[0].reason in body "
	        "should "
	        "match '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'");
	memset(big, 'a', 1025);
	big[1025] = '\0';
	js = xasprintf("\"%s\"", big);
	expect_variant("status.conditions.0.reason", js,
	        "status.conditions[0].reason|FieldValueTooLong|Too long: may "
	        "not "
	        "be more than 1024 bytes");
	free(js);
	free(big);
}

static void
test_format_date_time(void **state)
{
	(void)state;
	expect_variant("status.conditions.0.lastTransitionTime",
	        "\"2024-01-02T03:04:05.123+02:00\"", "");
	expect_variant("status.conditions.0.lastTransitionTime",
	        "\"yesterday\"",
	        "status.conditions[0].lastTransitionTime|"
	        "FieldValueTypeInvalid|"
	        "Invalid value: \"yesterday\": status.conditions[0]."
	        "lastTransitionTime in body must be of type date-time: "
	        "\"yesterday\"");
}

static void
test_metadata_not_validated(void **state)
{
	(void)state;
	expect_variant("metadata.labels", "{\"a\":[1,2]}", "");
	expect_variant("metadata", "\"weird\"", "");
}

static void
test_invalid_message(void **state)
{
	struct kschema *ks = schema_for("SympoziumSchedule", "v1alpha1");
	json_object *o = schedule();
	struct kschema_cause *c;
	struct buf m = BUF_INIT;
	size_t n;

	(void)state;
	jx_strip(o, "spec.task");
	assert_int_equal(kschema_validate(ks, o, &c, &n), 1);
	kschema_invalid_message(
	        "SympoziumSchedule", "sympozium.ai", "s", c, n, &m);
	assert_string_equal(buf_str(&m),
	        "SympoziumSchedule.sympozium.ai "
	        "\"s\" is invalid: spec.task: Required value");
	kschema_causes_free(c, n);
	jx_strip(o, "spec.schedule");
	jx_set_path(o, "spec.type", json_object_new_string("x"));
	assert_int_equal(kschema_validate(ks, o, &c, &n), 1);
	assert_int_equal(n, 3);
	buf_reset(&m);
	kschema_invalid_message(
	        "SympoziumSchedule", "sympozium.ai", "s", c, n, &m);
	assert_string_equal(buf_str(&m),
	        "SympoziumSchedule.sympozium.ai "
	        "\"s\" is invalid: [spec.schedule: Required value, spec.task: "
	        "Required value, spec.type: Unsupported value: \"x\": "
	        "supported "
	        "values: \"heartbeat\", \"scheduled\", \"sweep\"]");
	/* Duplicates are dropped as by the aggregate; empty group. */
	free(c[1].field);
	free(c[1].message);
	c[1].field = xstrdup(c[0].field);
	c[1].message = xstrdup(c[0].message);
	buf_reset(&m);
	kschema_invalid_message("Widget", "", "w", c, 2, &m);
	assert_string_equal(buf_str(&m),
	        "Widget \"w\" is invalid: spec.schedule: Required value");
	kschema_causes_free(c, n);
	buf_reset(&m);
	kschema_invalid_message("Widget", NULL, "w", NULL, 0, &m);
	assert_string_equal(buf_str(&m), "Widget \"w\" is invalid: <nil>");
	buf_fini(&m);
	json_object_put(o);
	kschema_free(ks);
}

static json_object *
mcpserver(void)
{
	return (parse(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	        "\"kind\":\"MCPServer\",\"metadata\":{\"name\":\"m\","
	        "\"labels\":{\"x\":\"y\"},\"bogusMeta\":1},\"bogusTop\":1,"
	        "\"spec\":{\"toolsPrefix\":\"gh\",\"transportType\":\"http\","
	        "\"extra\":{\"a\":1},"
	        "\"deployment\":{\"image\":\"img\",\"junk\":true,"
	        "\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":2},"
	        "\"claims\":[{\"name\":\"c\",\"deep\":{\"x\":1}}]},"
	        "\"secretRefs\":[{\"name\":\"s\"},{\"name\":\"t\",\"k\":1}]}},"
	        "\"status\":{\"what\":1}}"));
}

static void
test_prune_upstream(void **state)
{
	struct kschema *ks = schema_for("MCPServer", "v1alpha1");
	json_object *o = mcpserver();
	struct buf pruned = BUF_INIT;
	char *s;

	(void)state;
	assert_int_equal(kschema_prune(ks, o, &pruned), 6);
	assert_string_equal(buf_str(&pruned),
	        "bogusTop,spec.extra,spec.deployment.junk,"
	        "spec.deployment.resources.claims[0].deep,"
	        "spec.deployment.secretRefs[1].k,status.what");
	s = jx_to_string(o);
	assert_string_equal(s,
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	        "\"kind\":\"MCPServer\",\"metadata\":{\"name\":\"m\","
	        "\"labels\":{\"x\":\"y\"},\"bogusMeta\":1},"
	        "\"spec\":{\"toolsPrefix\":\"gh\",\"transportType\":\"http\","
	        "\"deployment\":{\"image\":\"img\",\"resources\":{\"limits\":"
	        "{\"cpu\":\"500m\",\"memory\":2},\"claims\":[{\"name\":\"c\"}]"
	        "},"
	        "\"secretRefs\":[{\"name\":\"s\"},{\"name\":\"t\"}]}},"
	        "\"status\":{}}");
	free(s);
	/* Idempotent; NULL list allowed. */
	assert_int_equal(kschema_prune(ks, o, NULL), 0);
	assert_int_equal(kschema_prune(ks, NULL, NULL), -1);
	buf_fini(&pruned);
	json_object_put(o);
	kschema_free(ks);
}

static struct kschema *
compile(const char *json)
{
	json_object *s = parse(json);
	char err[256];
	struct kschema *ks = kschema_new(s, err, sizeof(err));

	if (ks == NULL) {
		fail_msg("schema: %s", err);
	}
	json_object_put(s); /* kschema keeps its own copy */
	return (ks);
}

static void
test_prune_preserve_unknown(void **state)
{
	struct kschema *ks = compile(
	        "{\"type\":\"object\",\"properties\":{"
	        "\"spec\":{\"type\":\"object\",\"properties\":{"
	        "\"free\":{\"type\":\"object\","
	        "\"x-kubernetes-preserve-unknown-fields\":true,"
	        "\"properties\":{\"typed\":{\"type\":\"object\","
	        "\"properties\":"
	        "{\"k\":{\"type\":\"string\"}}}}},"
	        "\"list\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	        "\"x-kubernetes-preserve-unknown-fields\":true}},"
	        "\"bare\":{\"type\":\"object\"},"
	        "\"any\":{\"x-kubernetes-preserve-unknown-fields\":true}}}}}");
	json_object *o = parse(
	        "{\"apiVersion\":\"v\",\"kind\":\"K\","
	        "\"metadata\":{\"q\":1},\"spec\":{"
	        "\"free\":{\"u\":{\"deep\":[1,{\"z\":2}]},\"typed\":{\"k\":"
	        "\"v\","
	        "\"drop\":1}},\"list\":[{\"a\":1},{\"b\":{\"c\":2}}],"
	        "\"bare\":{\"gone\":1},\"any\":[{\"x\":1}],\"nope\":1}}");
	struct buf pruned = BUF_INIT;
	char *s;

	(void)state;
	assert_int_equal(kschema_prune(ks, o, &pruned), 3);
	assert_string_equal(buf_str(&pruned),
	        "spec.free.typed.drop,spec.bare.gone,spec.nope");
	s = jx_to_string(jx_get(o, "spec"));
	assert_string_equal(s,
	        "{\"free\":{\"u\":{\"deep\":[1,{\"z\":2}]},"
	        "\"typed\":{\"k\":\"v\"}},\"list\":[{\"a\":1},{\"b\":{\"c\":2}"
	        "}],"
	        "\"bare\":{},\"any\":[{\"x\":1}]}");
	free(s);
	expect_causes(ks, o, "");
	buf_fini(&pruned);
	json_object_put(o);
	kschema_free(ks);
}

static void
test_default_upstream(void **state)
{
	struct kschema *ks = schema_for("SympoziumSchedule", "v1alpha1");
	struct kschema *mk = schema_for("MCPServer", "v1alpha1");
	struct kschema *pk = schema_for("PersonaPack", "v1alpha1");
	json_object *o = parse("{\"spec\":{\"instanceRef\":\"i\","
	                       "\"schedule\":\"* * * * "
	                       "*\",\"task\":\"t\",\"type\":\"sweep\"}}");
	json_object *m = parse("{\"spec\":{\"toolsPrefix\":\"p\","
	                       "\"transportType\":\"stdio\",\"replicas\":4}}");
	json_object *p = parse(
	        "{\"spec\":{\"personas\":[{\"name\":\"a\","
	        "\"systemPrompt\":\"s\",\"schedule\":{\"task\":\"t\"},"
	        "\"memory\":{}},{\"name\":\"b\",\"systemPrompt\":\"s\"}]}}");
	char *s;

	(void)state;
	assert_int_equal(kschema_default(ks, o), 0);
	s = jx_to_string(o);
	assert_string_equal(s,
	        "{\"spec\":{\"instanceRef\":\"i\","
	        "\"schedule\":\"* * * * *\",\"task\":\"t\",\"type\":\"sweep\","
	        "\"concurrencyPolicy\":\"Forbid\",\"includeMemory\":true}}");
	free(s);
	/* deployment.port (8080) is not created: its parent is missing. */
	assert_int_equal(kschema_default(mk, m), 0);
	s = jx_to_string(m);
	assert_string_equal(s,
	        "{\"spec\":{\"toolsPrefix\":\"p\","
	        "\"transportType\":\"stdio\",\"replicas\":4,\"timeout\":30}}");
	free(s);
	jx_set_path(m, "spec.deployment", parse("{\"image\":\"i\"}"));
	kschema_default(mk, m);
	assert_int_equal(
	        json_object_get_int(jx_get(m, "spec.deployment.port")), 8080);
	/* Inside array items, only where the parent exists. */
	assert_int_equal(kschema_default(pk, p), 0);
	assert_string_equal(
	        jx_get_str(p, "spec.personas.0.schedule.type"), "heartbeat");
	assert_true(json_object_get_boolean(
	        jx_get(p, "spec.personas.0.memory.enabled")));
	assert_null(jx_get(p, "spec.personas.1.schedule"));
	assert_string_equal(jx_get_str(p, "spec.workflowType"), "autonomous");
	expect_causes(pk, p, "");
	assert_int_equal(kschema_default(pk, NULL), -1);
	json_object_put(o);
	json_object_put(m);
	json_object_put(p);
	kschema_free(ks);
	kschema_free(mk);
	kschema_free(pk);
}

static void
test_default_nested_and_maps(void **state)
{
	struct kschema *ks = compile(
	        "{\"type\":\"object\",\"properties\":{"
	        "\"a\":{\"type\":\"object\",\"default\":{},\"properties\":{"
	        "\"b\":{\"type\":\"integer\",\"default\":7},"
	        "\"c\":{\"type\":\"object\",\"properties\":{\"d\":{\"type\":"
	        "\"string\",\"default\":\"no\"}}}}},"
	        "\"m\":{\"type\":\"object\",\"additionalProperties\":{"
	        "\"type\":"
	        "\"object\",\"properties\":{\"p\":{\"type\":\"string\","
	        "\"default\":\"dp\"}}}},"
	        "\"metadata\":{\"type\":\"object\",\"properties\":{\"name\":"
	        "{\"type\":\"string\",\"default\":\"never\"}}}}}");
	json_object *o = parse("{\"m\":{\"x\":{},\"y\":{\"p\":\"keep\"}}}");
	char *s;

	(void)state;
	assert_int_equal(kschema_default(ks, o), 0);
	s = jx_to_string(o);
	assert_string_equal(s,
	        "{\"m\":{\"x\":{\"p\":\"dp\"},\"y\":{\"p\":"
	        "\"keep\"}},\"a\":{\"b\":7}}");
	free(s);
	json_object_put(o);
	kschema_free(ks);
}

static void
test_int_or_string(void **state)
{
	struct kschema *ks = schema_for("MCPServer", "v1alpha1");
	json_object *o = mcpserver();
	const char *lim = "spec.deployment.resources.limits.cpu";

	(void)state;
	kschema_prune(ks, o, NULL);
	jx_strip(o, "status");
	expect_causes(ks, o, "");
	jx_set_path(o, lim, json_object_new_int(3));
	expect_causes(ks, o, "");
	jx_set_path(o, lim, json_object_new_string("lots"));
	expect_causes(ks, o,
	        "spec.deployment.resources.limits.cpu|"
	        "FieldValueInvalid|Invalid value: \"lots\": spec.deployment."
	        "resources.limits.cpu in body should match "
	        "'^(\\+|-)?(([0-9]+(\\."
	        "[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?("
	        "([0-9]"
	        "+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'");
	jx_set_path(o, lim, json_object_new_string("1.5Gi"));
	expect_causes(ks, o, "");
	jx_set_path(o, lim, json_object_new_boolean(1));
	expect_causes(ks, o,
	        "spec.deployment.resources.limits.cpu|"
	        "FieldValueTypeInvalid|Invalid value: \"boolean\": spec."
	        "deployment.resources.limits.cpu in body must be of type "
	        "integer,string: \"boolean\"");
	jx_set_path(o, lim, json_object_new_double(1.5));
	expect_causes(ks, o,
	        "spec.deployment.resources.limits.cpu|"
	        "FieldValueTypeInvalid|Invalid value: \"number\": spec."
	        "deployment.resources.limits.cpu in body must be of type "
	        "integer,string: \"number\"");
	json_object_put(o);
	kschema_free(ks);
}

static void
test_nullable(void **state)
{
	struct kschema *ks
	        = compile("{\"type\":\"object\",\"properties\":{"
	                  "\"a\":{\"type\":\"string\",\"nullable\":true,"
	                  "\"default\":\"d\"},"
	                  "\"b\":{\"type\":\"string\"},"
	                  "\"c\":{\"type\":\"string\",\"default\":\"x\"},"
	                  "\"m\":{\"type\":\"object\","
	                  "\"additionalProperties\":{\"type\":"
	                  "\"integer\"}}}}");
	json_object *o = parse("{\"a\":null,\"b\":null,\"c\":null,"
	                       "\"m\":{\"k\":null,\"j\":1}}");
	char *s;

	(void)state;
	expect_causes(ks, o,
	        "b|FieldValueTypeInvalid|Invalid value: "
	        "\"null\": b in body must be of type string;"
	        "c|FieldValueTypeInvalid|Invalid value: \"null\": c in body "
	        "must "
	        "be of type string;m.k|FieldValueTypeInvalid|Invalid value: "
	        "\"null\": m.k in body must be of type integer");
	kschema_default(ks, o);
	s = jx_to_string(o);
	assert_string_equal(s, "{\"a\":null,\"c\":\"x\",\"m\":{\"j\":1}}");
	free(s);
	expect_causes(ks, o, "");
	json_object_put(o);
	kschema_free(ks);
}

static void
test_numbers_and_lists(void **state)
{
	struct kschema *ks = compile(
	        "{\"type\":\"object\",\"properties\":{"
	        "\"n\":{\"type\":\"number\",\"maximum\":1000000,"
	        "\"minimum\":0.5,\"exclusiveMinimum\":true},"
	        "\"i\":{\"type\":\"integer\",\"maximum\":10,"
	        "\"exclusiveMaximum\":true},"
	        "\"l\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":2,"
	        "\"items\":{\"type\":\"string\",\"pattern\":\"^\\\\d{2}-\\\\w+"
	        "$\"}},"
	        "\"p\":{\"type\":\"object\",\"maxProperties\":1,"
	        "\"minProperties\":1,\"additionalProperties\":{\"type\":"
	        "\"string\",\"pattern\":\"[\\\\w.-]\\\\.x\"}}}}");
	json_object *o = parse("{\"n\":2,\"i\":9,\"l\":[\"12-ab_c\"],"
	                       "\"p\":{\"k\":\"a.x\"}}");

	(void)state;
	expect_causes(ks, o, "");
	jx_set_path(o, "n", json_object_new_double(1e7));
	jx_set_path(o, "i", json_object_new_int(10));
	expect_causes(ks, o,
	        "n|FieldValueInvalid|Invalid value: 1e+07: n in "
	        "body should be less than or equal to "
	        "1e+06;i|FieldValueInvalid|"
	        "Invalid value: 10: i in body should be less than 10");
	jx_set_path(o, "n", json_object_new_double(0.5));
	jx_set_path(o, "i", json_object_new_int(-3));
	jx_set_path(o, "l", parse("[\"1-a\",\"12-b\",\"12-\"]"));
	jx_set_path(o, "p", parse("{\"a\":\"-.x\",\"b\":\"..y\"}"));
	expect_causes(ks, o,
	        "n|FieldValueInvalid|Invalid value: 0.5: n in "
	        "body should be greater than 0.5;"
	        "l|FieldValueTooMany|Too many: 3: must have at most 2 items;"
	        "l[0]|FieldValueInvalid|Invalid value: \"1-a\": l[0] in body "
	        "should match '^\\d{2}-\\w+$';"
	        "l[2]|FieldValueInvalid|Invalid value: \"12-\": l[2] in body "
	        "should match '^\\d{2}-\\w+$';"
	        "p|FieldValueTooMany|Too many: 2: must have at most 1 item;"
	        "p.b|FieldValueInvalid|Invalid value: \"..y\": p.b in body "
	        "should "
	        "match '[\\w.-]\\.x'");
	jx_set_path(o, "n", json_object_new_int(1));
	jx_set_path(o, "l", parse("[]"));
	jx_set_path(o, "p", parse("{}"));
	expect_causes(ks, o,
	        "l|FieldValueInvalid|Invalid value: []: l in "
	        "body should have at least 1 "
	        "items;p|FieldValueInvalid|Invalid "
	        "value: {}: p in body should have at least 1 properties");
	json_object_put(o);
	kschema_free(ks);
}

/* Lengths count code points: "é" is two bytes but one character. */
static void
test_length_code_points(void **state)
{
	struct kschema *ks = compile(
	        "{\"type\":\"object\",\"properties\":{"
	        "\"s\":{\"type\":\"string\",\"maxLength\":3,\"minLength\":2},"
	        "\"one\":{\"type\":\"string\",\"maxLength\":1}}}");
	json_object *o = parse("{\"s\":\"\xc3\xa9\xc3\xa9\xc3\xa9\","
	                       "\"one\":\"\xe2\x82\xac\"}");

	(void)state;
	expect_causes(ks, o, "");
	set_at(o, "s", json_object_new_string("\xc3\xa9\xc3\xa9\xc3\xa9x"));
	set_at(o, "one", json_object_new_string("ab"));
	expect_causes(ks, o,
	        "s|FieldValueTooLong|Too long: may not be more "
	        "than 3 bytes;one|FieldValueTooLong|Too long: may not be more "
	        "than 1 byte");
	set_at(o, "s", json_object_new_string("\xc3\xa9"));
	set_at(o, "one", json_object_new_string("\"\n"));
	expect_causes(ks, o,
	        "s|FieldValueInvalid|Invalid value: \"\xc3\xa9\": "
	        "s in body should be at least 2 chars "
	        "long;one|FieldValueTooLong|"
	        "Too long: may not be more than 1 byte");
	json_object_put(o);
	kschema_free(ks);
}

/* pattern must match (1) or not (0) s, as Go's regexp.MatchString. */
static void
expect_match(const char *pattern, const char *str, int match)
{
	json_object *sch = json_object_new_object(), *o;
	char err[256];
	struct kschema *ks;
	struct kschema_cause *c;
	size_t n;

	json_object_object_add(sch, "type", json_object_new_string("object"));
	json_object_object_add(
	        sch, "properties", parse("{\"s\":{\"type\":\"string\"}}"));
	json_object_object_add(jx_get(sch, "properties.s"), "pattern",
	        json_object_new_string(pattern));
	ks = kschema_new(sch, err, sizeof(err));
	if (ks == NULL) {
		fail_msg("pattern %s: %s", pattern, err);
	}
	o = json_object_new_object();
	json_object_object_add(o, "s", json_object_new_string(str));
	kschema_validate(ks, o, &c, &n);
	if ((n == 0) != (match != 0)) {
		fail_msg("pattern %s on \"%s\": want match=%d", pattern, str,
		        match);
	}
	kschema_causes_free(c, n);
	json_object_put(o);
	json_object_put(sch);
	kschema_free(ks);
}

static void
test_pattern_translation(void **state)
{
	(void)state;
	expect_match("\\d+", "ab12", 1); /* unanchored search */
	expect_match("^\\d+$", "ab12", 0);
	expect_match("^\\D\\W\\S\\s$", "a-x ", 1);
	expect_match("^\\D$", "1", 0);
	expect_match("^[\\w.-]+$", "a_b.c-d", 1);
	expect_match("^[\\w.-]+$", "a b", 0);
	expect_match("^[\\]\\-\\^a]+$", "]-^a", 1);
	expect_match("^[\\]\\-\\^a]+$", "b", 0);
	expect_match("^[]a]$", "]", 1);
	expect_match("^[^\\d]$", "x", 1);
	expect_match("^[^\\d]$", "5", 0);
	expect_match("^(?:ab)+$", "abab", 1);
	expect_match("^\\x41\\.\\/\\t$", "A./\t", 1);
	expect_match("^a\\.b$", "axb", 0);
	expect_match("^[[:alpha:]]{2,3}$", "abc", 1);
	expect_match("^a{2}$", "aaa", 0);
	expect_match("^(\\+|-)?[0-9]+$", "+12", 1);
	expect_match("", "anything", 1);
	expect_match("\\Aab\\z", "xab", 0);
	expect_match("\\Aab\\z", "ab", 1);
	expect_match("\\bcd\\b", "ab cd", 1);
}

static void
test_composition_and_embedded(void **state)
{
	struct kschema *ks = compile(
	        "{\"type\":\"object\",\"properties\":{"
	        "\"a\":{\"type\":\"integer\",\"allOf\":[{\"minimum\":1},"
	        "{\"maximum\":5}]},"
	        "\"o\":{\"type\":\"integer\",\"oneOf\":[{\"minimum\":3},"
	        "{\"maximum\":4}]},"
	        "\"n\":{\"type\":\"string\",\"not\":{\"enum\":[\"bad\"]}},"
	        "\"e\":{\"type\":\"object\","
	        "\"x-kubernetes-embedded-resource\":true,\"properties\":{"
	        "\"spec\":{\"type\":\"object\",\"properties\":{\"r\":"
	        "{\"type\":\"string\"}}}}}}}");
	json_object *o
	        = parse("{\"a\":3,\"o\":7,\"n\":\"good\","
	                "\"e\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	                "\"metadata\":{\"name\":\"p\",\"x\":1},\"junk\":1,"
	                "\"spec\":{\"r\":\"x\",\"q\":2}}}");
	struct buf pruned = BUF_INIT;

	(void)state;
	assert_int_equal(kschema_prune(ks, o, &pruned), 2);
	assert_string_equal(buf_str(&pruned), "e.junk,e.spec.q");
	assert_int_equal(json_object_get_int(jx_get(o, "e.metadata.x")), 1);
	expect_causes(ks, o, "");
	set_at(o, "a", json_object_new_int(9));
	set_at(o, "o", json_object_new_int(3));
	set_at(o, "n", json_object_new_string("bad"));
	expect_causes(ks, o,
	        "a|FieldValueInvalid|Invalid value: 9: a in body "
	        "should be less than or equal to "
	        "5;o|FieldValueInvalid|Invalid "
	        "value: 3: o in body must validate one and only one schema "
	        "(oneOf);n|FieldValueInvalid|Invalid value: \"bad\": n in "
	        "body "
	        "must not validate the schema (not)");
	buf_fini(&pruned);
	json_object_put(o);
	kschema_free(ks);
}

static void
expect_bad_schema(const char *json, const char *errpart)
{
	json_object *s = json != NULL ? parse(json) : NULL;
	char err[256];
	struct kschema *ks = kschema_new(s, err, sizeof(err));

	assert_null(ks);
	if (strstr(err, errpart) == NULL) {
		fail_msg("error \"%s\" lacks \"%s\"", err, errpart);
	}
	json_object_put(s);
}

static void
test_bad_schemas(void **state)
{
	struct buf deep = BUF_INIT;
	int i;

	(void)state;
	expect_bad_schema(NULL, "missing");
	expect_bad_schema("[1]", "must be an object");
	expect_bad_schema("{\"type\":\"strin\"}", "unsupported value strin");
	expect_bad_schema("{\"type\":\"null\"}", "type");
	expect_bad_schema("{\"type\":7}", "type");
	expect_bad_schema("{\"properties\":[]}", "properties");
	expect_bad_schema("{\"properties\":{\"a\":{\"type\":\"int\"}}}",
	        "openAPIV3Schema.properties[a].type");
	expect_bad_schema("{\"items\":[{}]}", "items");
	expect_bad_schema("{\"items\":null}", "items");
	expect_bad_schema("{\"required\":[1]}", "required");
	expect_bad_schema("{\"required\":\"a\"}", "required");
	expect_bad_schema("{\"enum\":\"a\"}", "enum");
	expect_bad_schema("{\"maxLength\":\"3\"}", "maxLength");
	expect_bad_schema("{\"pattern\":\"(?i)abc\"}", "pattern");
	expect_bad_schema("{\"pattern\":\"[a\"}", "pattern");
	expect_bad_schema("{\"pattern\":\"\\\\p{L}\"}", "pattern");
	expect_bad_schema("{\"anyOf\":{}}", "anyOf");
	expect_bad_schema("{\"additionalProperties\":3}", "must be an object");
	for (i = 0; i < KSCHEMA_MAX_DEPTH + 2; i++) {
		buf_puts(&deep, "{\"items\":");
	}
	buf_puts(&deep, "{}");
	for (i = 0; i < KSCHEMA_MAX_DEPTH + 2; i++) {
		buf_putc(&deep, '}');
	}
	{
		char err[256];
		json_object *s = jx_parse(
		        deep.data, deep.len, 1000, err, sizeof(err));
		struct kschema *ks;

		assert_non_null(s);
		ks = kschema_new(s, err, sizeof(err));
		assert_null(ks);
		assert_non_null(strstr(err, "deeper"));
		json_object_put(s);
	}
	buf_fini(&deep);
}

static void
test_absurd_inputs(void **state)
{
	struct kschema *ks = compile(
	        "{\"type\":\"object\",\"properties\":{"
	        "\"free\":{\"x-kubernetes-preserve-unknown-fields\":true},"
	        "\"gone\":{\"type\":\"object\"},"
	        "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}}"
	        "}");
	json_object *o = json_object_new_object(), *deep, *cur, *arr;
	struct kschema_cause *c;
	size_t n;
	int i;

	(void)state;
	/* 5000-deep nesting under a preserved and a pruned field. */
	for (i = 0; i < 2; i++) {
		deep = cur = json_object_new_object();
		for (int d = 0; d < 5000; d++) {
			json_object *next = json_object_new_object();

			json_object_object_add(cur, "x", next);
			cur = next;
		}
		json_object_object_add(o, i == 0 ? "free" : "gone", deep);
	}
	arr = json_object_new_array();
	for (i = 0; i < 200000; i++) {
		json_object_array_add(arr, json_object_new_string("s"));
	}
	json_object_object_add(o, "l", arr);
	assert_int_equal(kschema_default(ks, o), 0);
	assert_int_equal(kschema_validate(ks, o, &c, &n), 1);
	assert_int_equal(n, KSCHEMA_MAX_CAUSES);
	assert_string_equal(c[0].field, "l[0]");
	kschema_causes_free(c, n);
	assert_int_equal(kschema_prune(ks, o, NULL), 1);
	assert_non_null(jx_get(o, "free.x.x.x.x"));
	assert_int_equal(json_object_object_length(jx_get(o, "gone")), 0);
	/* Non-object roots. */
	arr = json_object_new_int(1);
	assert_int_equal(kschema_prune(ks, arr, NULL), -1);
	assert_int_equal(kschema_default(ks, arr), -1);
	json_object_put(arr);
	assert_int_equal(kschema_validate(NULL, o, &c, &n), -1);
	assert_null(c);
	assert_int_equal(kschema_validate(ks, o, NULL, &n), -1);
	assert_int_equal(kschema_validate(ks, NULL, &c, &n), 1);
	assert_string_equal(c[0].message,
	        "Invalid value: \"null\":  in body "
	        "must be of type object");
	kschema_causes_free(c, n);
	json_object_put(o);
	kschema_free(ks);
	kschema_free(NULL);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_every_crd_compiles),
	cmocka_unit_test(test_samples_validate),
	cmocka_unit_test(test_valid_variant_base),
	cmocka_unit_test(test_wrong_type),
	cmocka_unit_test(test_required),
	cmocka_unit_test(test_enum),
	cmocka_unit_test(test_pattern),
	cmocka_unit_test(test_range_and_length),
	cmocka_unit_test(test_format_date_time),
	cmocka_unit_test(test_metadata_not_validated),
	cmocka_unit_test(test_invalid_message),
	cmocka_unit_test(test_prune_upstream),
	cmocka_unit_test(test_prune_preserve_unknown),
	cmocka_unit_test(test_default_upstream),
	cmocka_unit_test(test_default_nested_and_maps),
	cmocka_unit_test(test_int_or_string),
	cmocka_unit_test(test_nullable),
	cmocka_unit_test(test_numbers_and_lists),
	cmocka_unit_test(test_length_code_points),
	cmocka_unit_test(test_pattern_translation),
	cmocka_unit_test(test_composition_and_embedded),
	cmocka_unit_test(test_bad_schemas),
	cmocka_unit_test(test_absurd_inputs),
};

int
main(void)
{
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
