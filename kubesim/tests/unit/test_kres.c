/*
 * test_kres.c: tests of kubesim/kres: lookups of built-in and CRD
 * resources, the built-in table (flags, scope, names), discovery
 * documents (spec D.2, D.4, G1-G5), CRD validation and server-managed
 * status (C.10), install/terminate/remove, version priority, the OpenAPI v3
 * stub (D.5) and the upstream sympozium CRDs.
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

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "kubesim/kres.h"
#include "tests/lib/testutil.h"

#define NOW "2026-01-02T03:04:05Z"

/* A valid widgets.example.com CRD with the given versions array. */
static json_object *
widget_crd_v(const char *versions)
{
	char *s = xasprintf(
	        "{\"apiVersion\":\"apiextensions.k8s.io/v1\","
	        "\"kind\":\"CustomResourceDefinition\","
	        "\"metadata\":{\"name\":\"widgets.example.com\"},"
	        "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
	        "\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\","
	        "\"shortNames\":[\"wd\"],\"categories\":[\"all\"]},"
	        "\"versions\":%s}}",
	        versions);
	json_object *o = testutil_json(s, 0);

	free(s);
	return (o);
}

#define SCHEMA                                                                \
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","               \
	"\"properties\":{\"spec\":{\"type\":\"object\","                      \
	"\"x-kubernetes-preserve-unknown-fields\":true}}}}"

static json_object *
widget_crd(void)
{
	return (widget_crd_v(
	        "[{\"name\":\"v1\",\"served\":true,\"storage\":true," SCHEMA
	        ",\"subresources\":{\"status\":{}},"
	        "\"selectableFields\":[{\"jsonPath\":\".spec.color\"}],"
	        "\"additionalPrinterColumns\":[{\"name\":\"Color\","
	        "\"type\":\"string\",\"jsonPath\":\".spec.color\"}]}]"));
}

static void
install(struct kres_reg *reg, json_object *crd)
{
	char err[256] = "";

	if (kres_crd_install(reg, crd, err, sizeof(err)) != 0) {
		fail_msg("install: %s", err);
	}
}

/* The element of array a whose key equals val, or NULL. */
static json_object *
find_by(json_object *a, const char *key, const char *val)
{
	size_t i;
	const char *s;

	for (i = 0; i < json_object_array_length(a); i++) {
		s = jx_get_str(json_object_array_get_idx(a, i), key);
		if (s != NULL && strcmp(s, val) == 0) {
			return (json_object_array_get_idx(a, i));
		}
	}
	return (NULL);
}

static void
assert_json(json_object *o, const char *want)
{
	json_object *w = testutil_json(want, 0);

	if (!jx_equal(o, w)) {
		char *got = jx_to_string(o);

		fail_msg("got %s\nwant %s", got, want);
	}
	json_object_put(w);
}

static void
test_find(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	const struct kres *r;

	(void)state;
	r = kres_find(reg, "", "v1", "pods");
	assert_non_null(r);
	assert_string_equal(r->coll, "/pods");
	assert_string_equal(r->api_version, "v1");
	assert_string_equal(r->kind, "Pod");
	assert_string_equal(r->list_kind, "PodList");
	r = kres_find(reg, "apps", "v1", "deployments");
	assert_non_null(r);
	assert_string_equal(r->coll, "apps/deployments");
	assert_string_equal(r->api_version, "apps/v1");
	assert_null(r->schema);
	assert_null(r->crd);
	assert_null(kres_find(reg, "apps", "v1", "pods"));
	assert_null(kres_find(reg, "", "v1", "deployments"));
	assert_null(kres_find(reg, "", "v2", "pods"));
	assert_null(kres_find(reg, "", "v1", "nothing"));
	assert_null(kres_find(reg, NULL, "v1", "pods"));
	r = kres_find(reg, "events.k8s.io", "v1", "events");
	assert_non_null(r);
	assert_string_equal(r->coll, "events.k8s.io/events");
	kres_reg_free(reg);
}

static void
test_find_kind(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	const struct kres *r;

	(void)state;
	r = kres_find_kind(reg, "v1", "ConfigMap");
	assert_non_null(r);
	assert_string_equal(r->plural, "configmaps");
	r = kres_find_kind(reg, "apps/v1", "Deployment");
	assert_non_null(r);
	assert_string_equal(r->plural, "deployments");
	r = kres_find_kind(reg, "events.k8s.io/v1", "Event");
	assert_string_equal(r->group, "events.k8s.io");
	assert_null(kres_find_kind(reg, "v1", "Deployment"));
	assert_null(kres_find_kind(reg, "apps/v1", "deployment"));
	assert_null(kres_find_kind(reg, "apps/v2", "Deployment"));
	assert_null(kres_find_kind(reg, NULL, "Pod"));
	kres_reg_free(reg);
}

struct want {
	const char *group;
	const char *plural;
	const char *singular;
	const char *kind;
	unsigned flags;
	const char *shorts; /* comma-separated, "" for none */
	const char *cats;
};

#define NS  KRES_NAMESPACED
#define ST  KRES_STATUS
#define UC  KRES_UNCOND_UPDATE
#define GEN KRES_GENERATION

static const struct want builtins[] = {
	{ "", "namespaces", "namespace", "Namespace", ST | UC, "ns", "" },
	{ "", "configmaps", "configmap", "ConfigMap", NS | UC, "cm", "" },
	{ "", "secrets", "secret", "Secret", NS | UC, "", "" },
	{ "", "serviceaccounts", "serviceaccount", "ServiceAccount", NS | UC,
	        "sa", "" },
	{ "", "services", "service", "Service", NS | UC | ST, "svc", "all" },
	{ "", "pods", "pod", "Pod", NS | UC | ST | KRES_LOG, "po", "all" },
	{ "", "persistentvolumeclaims", "persistentvolumeclaim",
	        "PersistentVolumeClaim", NS | UC | ST, "pvc", "" },
	{ "", "events", "event", "Event", NS | UC, "ev", "" },
	{ "apps", "deployments", "deployment", "Deployment",
	        NS | UC | ST | GEN | KRES_SCALE, "deploy", "all" },
	{ "batch", "jobs", "job", "Job", NS | UC | ST | GEN, "", "all" },
	{ "rbac.authorization.k8s.io", "roles", "role", "Role", NS | UC, "",
	        "" },
	{ "rbac.authorization.k8s.io", "rolebindings", "rolebinding",
	        "RoleBinding", NS | UC, "", "" },
	{ "rbac.authorization.k8s.io", "clusterroles", "clusterrole",
	        "ClusterRole", UC, "", "" },
	{ "rbac.authorization.k8s.io", "clusterrolebindings",
	        "clusterrolebinding", "ClusterRoleBinding", UC, "", "" },
	{ "coordination.k8s.io", "leases", "lease", "Lease",
	        NS | KRES_CREATE_ON_UPDATE, "", "" },
	{ "networking.k8s.io", "networkpolicies", "networkpolicy",
	        "NetworkPolicy", NS | UC | GEN, "netpol", "" },
	{ "policy", "poddisruptionbudgets", "poddisruptionbudget",
	        "PodDisruptionBudget", NS | UC | ST | GEN, "pdb", "" },
	{ "events.k8s.io", "events", "event", "Event", NS | UC, "ev", "" },
	{ "apiextensions.k8s.io", "customresourcedefinitions",
	        "customresourcedefinition", "CustomResourceDefinition",
	        ST | GEN, "crd,crds", NULL },
};

static void
check_strv(char *const *v, const char *csv)
{
	char *s;

	if (csv == NULL) {
		return;
	}
	s = xstrdup("");
	for (; *v != NULL; v++) {
		char *t = xasprintf("%s%s%s", s, s[0] ? "," : "", *v);

		free(s);
		s = t;
	}
	assert_string_equal(s, csv);
	free(s);
}

static void
check_builtin(const struct kres_reg *reg, const struct want *w)
{
	const struct kres *r = kres_find(reg, w->group, "v1", w->plural);
	char *coll = xasprintf("%s/%s", w->group, w->plural);
	json_object *rl, *e;

	assert_non_null(r);
	assert_string_equal(r->singular, w->singular);
	assert_string_equal(r->kind, w->kind);
	assert_int_equal(r->flags, w->flags | KRES_STRATEGIC);
	assert_string_equal(r->coll, coll);
	check_strv(r->short_names, w->shorts);
	check_strv(r->categories, w->cats);
	assert_non_null(r->verbs[0]);
	assert_non_null(r->selectable);
	assert_false(r->gone);
	rl = kres_resource_list(reg, w->group, "v1");
	e = find_by(jx_get(rl, "resources"), "name", w->plural);
	assert_non_null(e);
	assert_string_equal(jx_get_str(e, "kind"), w->kind);
	assert_string_equal(jx_get_str(e, "singularName"), w->singular);
	assert_int_equal(json_object_get_boolean(jx_get(e, "namespaced")),
	        (w->flags & NS) != 0);
	json_object_put(rl);
	free(coll);
}

static void
test_builtins(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	const struct kres *r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		check_builtin(reg, &builtins[i]);
	}
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		assert_true(r->flags & KRES_STRATEGIC);
		assert_false(r->flags & KRES_CUSTOM);
	}
	assert_int_equal(i, sizeof(builtins) / sizeof(builtins[0]));
	r = kres_find(reg, "", "v1", "namespaces");
	check_strv(r->verbs, "create,delete,get,list,patch,update,watch");
	r = kres_find(reg, "coordination.k8s.io", "v1", "leases");
	check_strv(r->verbs,
	        "create,delete,deletecollection,get,list,patch,update,watch");
	r = kres_find(reg, "", "v1", "pods");
	assert_string_equal(r->selectable[0], "spec.nodeName");
	kres_reg_free(reg);
}

static void
test_api_versions(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *o = kres_api_versions(reg, "127.0.0.1:6443");

	(void)state;
	assert_json(o,
	        "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
	        "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":"
	        "\"0.0.0.0/0\",\"serverAddress\":\"127.0.0.1:6443\"}]}");
	json_object_put(o);
	kres_reg_free(reg);
}

static void
test_group_list(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *o = kres_group_list(reg), *gs, *g;
	size_t i;

	(void)state;
	assert_string_equal(jx_get_str(o, "kind"), "APIGroupList");
	assert_string_equal(jx_get_str(o, "apiVersion"), "v1");
	gs = jx_get(o, "groups");
	assert_int_equal(json_object_array_length(gs), 8);
	for (i = 0; i < json_object_array_length(gs); i++) {
		g = json_object_array_get_idx(gs, i);
		assert_string_not_equal(jx_get_str(g, "name"), "");
		assert_non_null(jx_get(g, "preferredVersion"));
		assert_null(jx_get(g, "kind"));
	}
	assert_null(find_by(gs, "name", ""));
	g = find_by(gs, "name", "coordination.k8s.io");
	assert_json(g,
	        "{\"name\":\"coordination.k8s.io\",\"versions\":["
	        "{\"groupVersion\":\"coordination.k8s.io/v1\","
	        "\"version\":\"v1\"}],\"preferredVersion\":{"
	        "\"groupVersion\":\"coordination.k8s.io/v1\","
	        "\"version\":\"v1\"}}");
	assert_non_null(find_by(gs, "name", "apiextensions.k8s.io"));
	json_object_put(o);
	o = kres_group(reg, "apps");
	assert_json(o,
	        "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\","
	        "\"name\":\"apps\",\"versions\":[{\"groupVersion\":"
	        "\"apps/v1\",\"version\":\"v1\"}],\"preferredVersion\":{"
	        "\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}}");
	json_object_put(o);
	assert_null(kres_group(reg, ""));
	assert_null(kres_group(reg, "nope.example.com"));
	assert_null(kres_group(reg, NULL));
	kres_reg_free(reg);
}

static void
test_resource_list(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *o, *rs, *e;

	(void)state;
	o = kres_resource_list(reg, "coordination.k8s.io", "v1");
	assert_string_equal(jx_get_str(o, "kind"), "APIResourceList");
	assert_string_equal(jx_get_str(o, "apiVersion"), "v1");
	assert_string_equal(
	        jx_get_str(o, "groupVersion"), "coordination.k8s.io/v1");
	rs = jx_get(o, "resources");
	assert_int_equal(json_object_array_length(rs), 1);
	e = json_object_array_get_idx(rs, 0);
	assert_non_null(jx_get_str(e, "storageVersionHash"));
	assert_true(strlen(jx_get_str(e, "storageVersionHash")) > 4);
	jx_strip(e, "storageVersionHash");
	assert_json(e,
	        "{\"name\":\"leases\",\"singularName\":\"lease\","
	        "\"namespaced\":true,\"kind\":\"Lease\",\"verbs\":["
	        "\"create\",\"delete\",\"deletecollection\",\"get\","
	        "\"list\",\"patch\",\"update\",\"watch\"]}");
	json_object_put(o);

	o = kres_resource_list(reg, "", "v1");
	assert_string_equal(jx_get_str(o, "groupVersion"), "v1");
	rs = jx_get(o, "resources");
	e = find_by(rs, "name", "pods");
	assert_json(jx_get(e, "shortNames"), "[\"po\"]");
	assert_json(jx_get(e, "categories"), "[\"all\"]");
	assert_null(jx_get(find_by(rs, "name", "secrets"), "shortNames"));
	assert_null(jx_get(find_by(rs, "name", "secrets"), "categories"));
	assert_json(find_by(rs, "name", "pods/status"),
	        "{\"name\":\"pods/status\",\"singularName\":\"\","
	        "\"namespaced\":true,\"kind\":\"Pod\",\"verbs\":[\"get\","
	        "\"patch\",\"update\"]}");
	assert_json(find_by(rs, "name", "pods/log"),
	        "{\"name\":\"pods/log\",\"singularName\":\"\","
	        "\"namespaced\":true,\"kind\":\"Pod\",\"verbs\":[\"get\"]}");
	assert_non_null(find_by(rs, "name", "namespaces/status"));
	assert_non_null(find_by(rs, "name", "services/status"));
	assert_non_null(find_by(rs, "name", "persistentvolumeclaims/status"));
	assert_null(find_by(rs, "name", "configmaps/status"));
	json_object_put(o);

	kres_reg_free(reg);
}

static void
test_resource_list_groups(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *o, *rs, *e;

	(void)state;
	o = kres_resource_list(reg, "apps", "v1");
	rs = jx_get(o, "resources");
	assert_non_null(find_by(rs, "name", "deployments/status"));
	assert_json(find_by(rs, "name", "deployments/scale"),
	        "{\"name\":\"deployments/scale\",\"singularName\":\"\","
	        "\"namespaced\":true,\"group\":\"autoscaling\","
	        "\"version\":\"v1\",\"kind\":\"Scale\",\"verbs\":[\"get\","
	        "\"patch\",\"update\"]}");
	json_object_put(o);
	o = kres_resource_list(reg, "batch", "v1");
	assert_non_null(
	        find_by(jx_get(o, "resources"), "name", "jobs/status"));
	json_object_put(o);
	o = kres_resource_list(reg, "policy", "v1");
	assert_non_null(find_by(jx_get(o, "resources"), "name",
	        "poddisruptionbudgets/status"));
	json_object_put(o);
	o = kres_resource_list(reg, "apiextensions.k8s.io", "v1");
	assert_non_null(find_by(jx_get(o, "resources"), "name",
	        "customresourcedefinitions/status"));
	e = find_by(
	        jx_get(o, "resources"), "name", "customresourcedefinitions");
	assert_false(json_object_get_boolean(jx_get(e, "namespaced")));
	assert_json(jx_get(e, "shortNames"), "[\"crd\",\"crds\"]");
	json_object_put(o);

	assert_null(kres_resource_list(reg, "apps", "v2"));
	assert_null(kres_resource_list(reg, "", "v2"));
	assert_null(kres_resource_list(reg, "nope.io", "v1"));
	kres_reg_free(reg);
}

/* Validates crd (owned) and checks that one cause is on field with reason
 * and a message containing msg. */
static void
expect_cause(json_object *crd, const char *field, const char *reason,
        const char *msg)
{
	struct kschema_cause *c = NULL;
	size_t n = 0, i;
	int found = 0;

	assert_int_equal(kres_crd_validate(crd, &c, &n), 1);
	for (i = 0; i < n; i++) {
		if (strcmp(c[i].field, field) == 0
		        && strcmp(c[i].reason, reason) == 0
		        && strstr(c[i].message, msg) != NULL) {
			found = 1;
		}
	}
	if (!found) {
		fail_msg("no cause %s %s %s (first: %s %s)", field, reason,
		        msg, n ? c[0].field : "-", n ? c[0].message : "-");
	}
	kschema_causes_free(c, n);
	json_object_put(crd);
}

static void
test_validate_ok(void **state)
{
	json_object *crd = widget_crd();
	struct kschema_cause *c = (void *)1;
	size_t n = 99;

	(void)state;
	assert_int_equal(kres_crd_validate(crd, &c, &n), 0);
	assert_int_equal(n, 0);
	kschema_causes_free(c, n);
	json_object_put(crd);
}

static void
test_validate_causes(void **state)
{
	json_object *crd;

	(void)state;
	crd = widget_crd();
	jx_set_path(crd, "metadata.name", json_object_new_string("w.x.com"));
	expect_cause(crd, "metadata.name", "FieldValueInvalid",
	        "Invalid value: \"w.x.com\": must be "
	        "spec.names.plural+\".\"+spec.group");

	crd = widget_crd();
	jx_set_path(
	        crd, "metadata.name", json_object_new_string("widgets.ex"));
	jx_set_path(crd, "spec.group", json_object_new_string("ex"));
	expect_cause(crd, "spec.group", "FieldValueInvalid",
	        "Invalid value: \"ex\": should be a domain with at least one "
	        "dot");

	crd = widget_crd();
	jx_set_path(crd, "spec.scope", json_object_new_string("Global"));
	expect_cause(crd, "spec.scope", "FieldValueNotSupported",
	        "Unsupported value: \"Global\"");

	crd = widget_crd();
	jx_strip(crd, "spec.names.kind");
	expect_cause(crd, "spec.names.kind", "FieldValueRequired",
	        "Required value");

	crd = widget_crd();
	jx_strip(crd, "spec.names.plural");
	expect_cause(crd, "spec.names.plural", "FieldValueRequired",
	        "Required value");

	crd = widget_crd();
	jx_set_path(crd, "metadata.name",
	        json_object_new_string("Wid/gets.example.com"));
	jx_set_path(
	        crd, "spec.names.plural", json_object_new_string("Wid/gets"));
	expect_cause(crd, "spec.names.plural", "FieldValueInvalid",
	        "Invalid value: \"Wid/gets\": a lowercase RFC 1123 label");

	crd = widget_crd_v("[{\"name\":\"v1/x\",\"served\":true,"
	                   "\"storage\":true," SCHEMA "}]");
	expect_cause(crd, "spec.versions[0].name", "FieldValueInvalid",
	        "a DNS-1035 label");

	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":true," SCHEMA "},"
	                   "{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":false," SCHEMA "}]");
	expect_cause(crd, "spec.versions[1].name", "FieldValueDuplicate",
	        "Duplicate value: \"v1\"");
}

static void
test_validate_versions(void **state)
{
	json_object *crd;

	(void)state;
	crd = widget_crd_v("[]");
	expect_cause(
	        crd, "spec.versions", "FieldValueRequired", "Required value");

	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":true," SCHEMA "},"
	                   "{\"name\":\"v2\",\"served\":true,"
	                   "\"storage\":true," SCHEMA "}]");
	expect_cause(crd, "spec.versions", "FieldValueInvalid",
	        "must have exactly one version marked as storage version");

	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":false," SCHEMA "}]");
	expect_cause(crd, "spec.versions", "FieldValueInvalid",
	        "must have exactly one version marked as storage version");

	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":true}]");
	expect_cause(crd, "spec.versions[0].schema.openAPIV3Schema",
	        "FieldValueRequired", "Required value");

	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":true,\"schema\":{\"openAPIV3Schema\":"
	                   "{\"type\":\"bogus\"}}}]");
	expect_cause(crd, "spec.versions[0].schema.openAPIV3Schema",
	        "FieldValueInvalid", "");
}

static void
test_validate_junk(void **state)
{
	static const char *const junk[] = { "{}", "[]", "1", "{\"spec\":7}",
		"{\"spec\":{\"versions\":[1,null,\"x\"]}}" };
	struct kschema_cause *c;
	json_object *o;
	size_t i, n;
	char err[128];
	struct kres_reg *reg = kres_reg_new();

	(void)state;
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		o = testutil_json(junk[i], 0);
		assert_int_equal(kres_crd_validate(o, &c, &n), 1);
		assert_true(n > 0);
		kschema_causes_free(c, n);
		kres_crd_set_status(o, NOW);
		assert_int_equal(
		        kres_crd_install(reg, o, err, sizeof(err)), -1);
		json_object_put(o);
	}
	assert_int_equal(kres_crd_validate(NULL, &c, &n), 1);
	kschema_causes_free(c, n);
	kres_reg_free(reg);
}

static void
test_set_status(void **state)
{
	json_object *crd = widget_crd(), *conds;

	(void)state;
	kres_crd_set_status(crd, NOW);
	assert_string_equal(jx_get_str(crd, "spec.names.singular"), "widget");
	assert_string_equal(
	        jx_get_str(crd, "spec.names.listKind"), "WidgetList");
	assert_json(jx_get(crd, "status.acceptedNames"),
	        "{\"plural\":\"widgets\",\"kind\":\"Widget\","
	        "\"shortNames\":[\"wd\"],\"categories\":[\"all\"],"
	        "\"singular\":\"widget\",\"listKind\":\"WidgetList\"}");
	assert_json(jx_get(crd, "status.storedVersions"), "[\"v1\"]");
	conds = jx_get(crd, "status.conditions");
	assert_json(find_by(conds, "type", "NamesAccepted"),
	        "{\"type\":\"NamesAccepted\",\"status\":\"True\","
	        "\"lastTransitionTime\":\"" NOW "\",\"reason\":"
	        "\"NoConflicts\",\"message\":\"no conflicts found\"}");
	assert_json(find_by(conds, "type", "Established"),
	        "{\"type\":\"Established\",\"status\":\"True\","
	        "\"lastTransitionTime\":\"" NOW "\",\"reason\":"
	        "\"InitialNamesAccepted\",\"message\":"
	        "\"the initial names have been accepted\"}");
	/* Again later: times kept, nothing duplicated. */
	kres_crd_set_status(crd, "2027-01-01T00:00:00Z");
	conds = jx_get(crd, "status.conditions");
	assert_int_equal(json_object_array_length(conds), 2);
	assert_string_equal(jx_get_str(find_by(conds, "type", "Established"),
	                            "lastTransitionTime"),
	        NOW);
	assert_json(jx_get(crd, "status.storedVersions"), "[\"v1\"]");
	json_object_put(crd);
}

static void
test_set_status_keeps(void **state)
{
	json_object *crd = widget_crd();

	(void)state;
	jx_set_path(crd, "spec.names.singular", json_object_new_string("wdg"));
	jx_set_path(crd, "status",
	        testutil_json("{\"storedVersions\":[\"v0\"],\"conditions\":["
	                      "{\"type\":\"Established\",\"status\":\"False\","
	                      "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\""
	                      "}]}",
	                0));
	kres_crd_set_status(crd, NOW);
	assert_string_equal(jx_get_str(crd, "spec.names.singular"), "wdg");
	assert_json(jx_get(crd, "status.storedVersions"), "[\"v0\",\"v1\"]");
	assert_string_equal(
	        jx_get_str(find_by(jx_get(crd, "status.conditions"), "type",
	                           "Established"),
	                "lastTransitionTime"),
	        NOW);
	json_object_put(crd);
}

static void
test_install(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *crd = widget_crd(), *o, *rs;
	const struct kres *r;

	(void)state;
	kres_crd_set_status(crd, NOW);
	install(reg, crd);
	r = kres_find(reg, "example.com", "v1", "widgets");
	assert_non_null(r);
	assert_int_equal(r->flags,
	        KRES_CUSTOM | KRES_GENERATION | KRES_NAMESPACED | KRES_STATUS);
	assert_string_equal(r->coll, "example.com/widgets");
	assert_string_equal(r->api_version, "example.com/v1");
	assert_string_equal(r->singular, "widget");
	assert_string_equal(r->list_kind, "WidgetList");
	assert_string_equal(r->crd, "widgets.example.com");
	assert_non_null(r->schema);
	check_strv(r->short_names, "wd");
	check_strv(r->categories, "all");
	check_strv(r->selectable, "spec.color");
	check_strv(r->verbs,
	        "delete,deletecollection,get,list,patch,create,update,watch");
	assert_json(r->columns,
	        "[{\"name\":\"Color\",\"type\":\"string\","
	        "\"jsonPath\":\".spec.color\"}]");
	assert_true(r == kres_find_kind(reg, "example.com/v1", "Widget"));

	o = kres_group_list(reg);
	assert_non_null(find_by(jx_get(o, "groups"), "name", "example.com"));
	json_object_put(o);
	o = kres_resource_list(reg, "example.com", "v1");
	rs = jx_get(o, "resources");
	assert_int_equal(json_object_array_length(rs), 2);
	jx_strip(json_object_array_get_idx(rs, 0), "storageVersionHash");
	assert_json(o,
	        "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\","
	        "\"groupVersion\":\"example.com/v1\",\"resources\":["
	        "{\"name\":\"widgets\",\"singularName\":\"widget\","
	        "\"namespaced\":true,\"kind\":\"Widget\",\"verbs\":["
	        "\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\","
	        "\"create\",\"update\",\"watch\"],\"shortNames\":[\"wd\"],"
	        "\"categories\":[\"all\"]},"
	        "{\"name\":\"widgets/status\",\"singularName\":\"\","
	        "\"namespaced\":true,\"kind\":\"Widget\",\"verbs\":[\"get\","
	        "\"patch\",\"update\"]}]}");
	json_object_put(o);
	json_object_put(crd);
	kres_reg_free(reg);
}

static void
test_remove(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *crd = widget_crd(), *o;
	const struct kres *r;

	(void)state;
	install(reg, crd);
	r = kres_find(reg, "example.com", "v1", "widgets");
	kres_crd_terminating(reg, "widgets.example.com");
	assert_true(r->terminating);
	assert_true(r == kres_find(reg, "example.com", "v1", "widgets"));
	o = kres_resource_list(reg, "example.com", "v1");
	assert_json(jx_get(find_by(jx_get(o, "resources"), "name", "widgets"),
	                    "verbs"),
	        "[\"delete\",\"deletecollection\",\"get\",\"list\","
	        "\"watch\"]");
	json_object_put(o);

	kres_crd_remove(reg, "widgets.example.com");
	assert_true(r->gone);
	assert_string_equal(r->plural, "widgets"); /* still readable */
	assert_null(kres_find(reg, "example.com", "v1", "widgets"));
	assert_null(kres_find_kind(reg, "example.com/v1", "Widget"));
	assert_null(kres_resource_list(reg, "example.com", "v1"));
	assert_null(kres_group(reg, "example.com"));
	o = kres_group_list(reg);
	assert_null(find_by(jx_get(o, "groups"), "name", "example.com"));
	json_object_put(o);
	kres_crd_remove(reg, "nothing.example.com");
	kres_crd_terminating(reg, "nothing.example.com");
	json_object_put(crd);
	kres_reg_free(reg);
}

static void
test_reinstall(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *crd = widget_crd(), *crd2;
	const struct kres *old, *r;

	(void)state;
	install(reg, crd);
	old = kres_find(reg, "example.com", "v1", "widgets");
	crd2 = widget_crd_v(
	        "[{\"name\":\"v1\",\"served\":true,"
	        "\"storage\":true," SCHEMA ",\"subresources\":{\"scale\":{}}},"
	        "{\"name\":\"v2\",\"served\":false,"
	        "\"storage\":false," SCHEMA "}]");
	install(reg, crd2);
	assert_true(old->gone);
	r = kres_find(reg, "example.com", "v1", "widgets");
	assert_non_null(r);
	assert_true(r != old);
	assert_true(r->flags & KRES_SCALE);
	assert_false(r->flags & KRES_STATUS);
	assert_null(r->columns);
	assert_null(kres_find(reg, "example.com", "v2", "widgets"));
	json_object_put(crd);
	json_object_put(crd2);
	kres_reg_free(reg);
}

static void
test_install_refused(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *crd;
	char err[256] = "";

	(void)state;
	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,"
	                   "\"storage\":true,\"schema\":{\"openAPIV3Schema\":"
	                   "{\"type\":\"bogus\"}}}]");
	assert_int_equal(kres_crd_install(reg, crd, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	assert_null(kres_group(reg, "example.com"));
	json_object_put(crd);
	/* A CRD may not take over a built-in. */
	crd = testutil_json(
	        "{\"metadata\":{\"name\":\"leases.coordination.k8s.io\"},"
	        "\"spec\":{\"group\":\"coordination.k8s.io\",\"scope\":"
	        "\"Namespaced\",\"names\":{\"plural\":\"leases\",\"kind\":"
	        "\"Lease\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
	        "\"storage\":true," SCHEMA "}]}}",
	        0);
	assert_int_equal(kres_crd_install(reg, crd, err, sizeof(err)), -1);
	assert_false(
	        kres_find(reg, "coordination.k8s.io", "v1", "leases")->flags
	        & KRES_CUSTOM);
	json_object_put(crd);
	kres_reg_free(reg);
}

static void
test_preferred_version(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *crd, *g;

	(void)state;
	crd = widget_crd_v(
	        "[{\"name\":\"v1alpha1\",\"served\":true,\"storage\":"
	        "false," SCHEMA "},{\"name\":\"v1beta1\",\"served\":true,"
	        "\"storage\":false," SCHEMA "},{\"name\":\"v1\",\"served\":"
	        "true,\"storage\":true," SCHEMA "},{\"name\":\"v1beta2\","
	        "\"served\":true,\"storage\":false," SCHEMA "}]");
	install(reg, crd);
	g = kres_group(reg, "example.com");
	assert_json(jx_get(g, "versions"),
	        "[{\"groupVersion\":\"example.com/v1\",\"version\":\"v1\"},"
	        "{\"groupVersion\":\"example.com/v1beta2\","
	        "\"version\":\"v1beta2\"},"
	        "{\"groupVersion\":\"example.com/v1beta1\","
	        "\"version\":\"v1beta1\"},"
	        "{\"groupVersion\":\"example.com/v1alpha1\","
	        "\"version\":\"v1alpha1\"}]");
	assert_string_equal(jx_get_str(g, "preferredVersion.version"), "v1");
	json_object_put(g);
	json_object_put(crd);

	crd = widget_crd_v("[{\"name\":\"v1\",\"served\":true,\"storage\":"
	                   "true," SCHEMA "},{\"name\":\"v2\",\"served\":"
	                   "true,\"storage\":false," SCHEMA "}]");
	install(reg, crd);
	g = kres_group(reg, "example.com");
	assert_string_equal(jx_get_str(g, "preferredVersion.groupVersion"),
	        "example.com/v2");
	assert_int_equal(json_object_array_length(jx_get(g, "versions")), 2);
	json_object_put(g);
	json_object_put(crd);
	kres_reg_free(reg);
}

static const char *
root_url(json_object *root, const char *gv)
{
	return (jx_get_str(
	        jx_getv(root, "paths", gv, NULL), "serverRelativeURL"));
}

static void
check_patch_op(json_object *doc, const char *path, const char *group,
        const char *version, const char *kind)
{
	json_object *op = jx_getv(doc, "paths", path, "patch", NULL);
	json_object *gvk = testutil_json("{}", 0), *ct;

	if (op == NULL) {
		fail_msg("no PATCH at %s", path);
	}
	json_object_object_add(gvk, "group", json_object_new_string(group));
	json_object_object_add(
	        gvk, "version", json_object_new_string(version));
	json_object_object_add(gvk, "kind", json_object_new_string(kind));
	assert_true(
	        jx_equal(jx_get(op, "x-kubernetes-group-version-kind"), gvk));
	json_object_put(gvk);
	assert_json(jx_get(op, "parameters"),
	        "[{\"name\":\"fieldValidation\",\"in\":\"query\","
	        "\"schema\":{\"type\":\"string\"}}]");
	ct = jx_get(op, "requestBody.content");
	assert_non_null(jx_getv(ct, "application/merge-patch+json", NULL));
	assert_non_null(jx_getv(ct, "application/json-patch+json", NULL));
	assert_null(
	        jx_getv(ct, "application/strategic-merge-patch+json", NULL));
	assert_json(
	        jx_get(op, "responses"), "{\"200\":{\"description\":\"OK\"}}");
}

static void
test_openapi(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *root, *doc, *crd = widget_crd();
	char *before;

	(void)state;
	root = kres_openapi_root(reg);
	assert_string_equal(root_url(root, "api/v1") != NULL ? "y" : "n", "y");
	assert_true(strncmp(root_url(root, "api/v1"),
	                    "/openapi/v3/api/v1?hash=", 24)
	        == 0);
	assert_non_null(root_url(root, "apis/apiextensions.k8s.io/v1"));
	assert_non_null(root_url(root, "apis/coordination.k8s.io/v1"));
	assert_non_null(root_url(root, "apis/apps/v1"));
	assert_null(root_url(root, "apis/example.com/v1"));
	assert_int_equal(json_object_object_length(jx_get(root, "paths")), 9);
	before = xstrdup(root_url(root, "api/v1"));
	json_object_put(root);

	doc = kres_openapi_doc(reg, "api/v1");
	assert_string_equal(jx_get_str(doc, "openapi"), "3.0.0");
	assert_json(jx_get(doc, "info"),
	        "{\"title\":\"Kubernetes\",\"version\":\"v1.33.0\"}");
	/* each kind a component kubectl explain finds by its GVK, metadata
	 * a reference to ObjectMeta (in the same document) */
	assert_string_equal(
	        jx_get_str(
	                json_object_array_get_idx(
	                        json_object_object_get(
	                                json_object_object_get(
	                                        jx_get(doc,
	                                                "components.schemas"),
	                                        "io.k8s.api.core.v1."
	                                        "ConfigMap"),
	                                "x-kubernetes-group-version-kind"),
	                        0),
	                "kind"),
	        "ConfigMap");
	assert_non_null(
	        json_object_object_get(jx_get(doc, "components.schemas"),
	                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
	check_patch_op(
	        doc, "/api/v1/namespaces/{name}", "", "v1", "Namespace");
	check_patch_op(doc, "/api/v1/namespaces/{namespace}/configmaps/{name}",
	        "", "v1", "ConfigMap");
	assert_int_equal(json_object_object_length(jx_get(doc, "paths")), 8);
	json_object_put(doc);
	doc = kres_openapi_doc(reg, "apis/apps/v1");
	check_patch_op(doc,
	        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
	        "apps", "v1", "Deployment");
	json_object_put(doc);
	doc = kres_openapi_doc(reg, "apis/apiextensions.k8s.io/v1");
	check_patch_op(doc,
	        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
	        "{name}",
	        "apiextensions.k8s.io", "v1", "CustomResourceDefinition");
	json_object_put(doc);
	assert_null(kres_openapi_doc(reg, "apis/example.com/v1"));
	assert_null(kres_openapi_doc(reg, "apis/apps"));
	assert_null(kres_openapi_doc(reg, "apis/apps/v1/x"));
	assert_null(kres_openapi_doc(reg, "api/v2"));
	assert_null(kres_openapi_doc(reg, ""));
	assert_null(kres_openapi_doc(reg, NULL));

	free(before);
	json_object_put(crd);
	kres_reg_free(reg);
}

static void
test_openapi_crd(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *root, *doc, *crd = widget_crd();
	char *before;

	(void)state;
	root = kres_openapi_root(reg);
	before = xstrdup(root_url(root, "api/v1"));
	json_object_put(root);
	install(reg, crd);
	root = kres_openapi_root(reg);
	assert_string_equal(root_url(root, "api/v1"), before);
	assert_true(strncmp(root_url(root, "apis/example.com/v1"),
	                    "/openapi/v3/apis/example.com/v1?hash=", 37)
	        == 0);
	json_object_put(root);
	doc = kres_openapi_doc(reg, "apis/example.com/v1");
	check_patch_op(doc,
	        "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}",
	        "example.com", "v1", "Widget");
	json_object_put(doc);
	free(before);
	json_object_put(crd);
	kres_reg_free(reg);
}

static void
test_openapi_hash_changes(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	json_object *root, *crd = widget_crd(), *crd2;
	char *before;

	(void)state;
	install(reg, crd);
	root = kres_openapi_root(reg);
	before = xstrdup(root_url(root, "apis/example.com/v1"));
	json_object_put(root);
	crd2 = testutil_json(
	        "{\"metadata\":{\"name\":\"gadgets.example.com\"},"
	        "\"spec\":{\"group\":\"example.com\",\"scope\":\"Cluster\","
	        "\"names\":{\"plural\":\"gadgets\",\"kind\":\"Gadget\"},"
	        "\"versions\":[{\"name\":\"v1\",\"served\":true,"
	        "\"storage\":true," SCHEMA "}]}}",
	        0);
	install(reg, crd2);
	root = kres_openapi_root(reg);
	assert_string_not_equal(root_url(root, "apis/example.com/v1"), before);
	json_object_put(root);
	root = kres_openapi_doc(reg, "apis/example.com/v1");
	assert_non_null(jx_getv(root, "paths",
	        "/apis/example.com/v1/gadgets/{name}", "patch", NULL));
	json_object_put(root);
	free(before);
	json_object_put(crd);
	json_object_put(crd2);
	kres_reg_free(reg);
}

/* Every sympozium CRD (ours, deploy/crds: test_crds checks them against
 * upstream's) validates and installs; the group serves v1alpha1. */
static void
test_sympozium_crds(void **state)
{
	struct kres_reg *reg = kres_reg_new();
	const char *pat = "deploy/crds/sympozium.ai_*.yaml";
	char *text, err[256];
	struct kschema_cause *c;
	json_object *crd, *g;
	glob_t gl;
	size_t i, n, len;

	(void)state;
	assert_int_equal(glob(pat, 0, NULL, &gl), 0);
	assert_true(gl.gl_pathc >= 8);
	for (i = 0; i < gl.gl_pathc; i++) {
		text = testutil_read_file(gl.gl_pathv[i], &len);
		assert_int_equal(
		        yamlj_parse_doc(text, len, &crd, err, sizeof(err)), 0);
		free(text);
		if (kres_crd_validate(crd, &c, &n) != 0) {
			fail_msg("%s: %s: %s", gl.gl_pathv[i], c[0].field,
			        c[0].message);
		}
		kres_crd_set_status(crd, NOW);
		if (kres_crd_install(reg, crd, err, sizeof(err)) != 0) {
			fail_msg("%s: %s", gl.gl_pathv[i], err);
		}
		assert_non_null(kres_find(reg, "sympozium.ai", "v1alpha1",
		        jx_get_str(crd, "spec.names.plural")));
		json_object_put(crd);
	}
	g = kres_group(reg, "sympozium.ai");
	assert_string_equal(jx_get_str(g, "preferredVersion.groupVersion"),
	        "sympozium.ai/v1alpha1");
	json_object_put(g);
	g = kres_resource_list(reg, "sympozium.ai", "v1alpha1");
	assert_true(json_object_array_length(jx_get(g, "resources"))
	        >= gl.gl_pathc);
	json_object_put(g);
	globfree(&gl);
	kres_reg_free(reg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_kind),
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_api_versions),
		cmocka_unit_test(test_group_list),
		cmocka_unit_test(test_resource_list),
		cmocka_unit_test(test_resource_list_groups),
		cmocka_unit_test(test_validate_ok),
		cmocka_unit_test(test_validate_causes),
		cmocka_unit_test(test_validate_versions),
		cmocka_unit_test(test_validate_junk),
		cmocka_unit_test(test_set_status),
		cmocka_unit_test(test_set_status_keeps),
		cmocka_unit_test(test_install),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_reinstall),
		cmocka_unit_test(test_install_refused),
		cmocka_unit_test(test_preferred_version),
		cmocka_unit_test(test_openapi),
		cmocka_unit_test(test_openapi_crd),
		cmocka_unit_test(test_openapi_hash_changes),
		cmocka_unit_test(test_sympozium_crds),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
