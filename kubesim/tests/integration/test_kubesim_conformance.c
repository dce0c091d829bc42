/*
 * test_kubesim_conformance.c: the black-box conformance suite of bin/kubesim.
 * g01..g52 are the items 1 to 52 of the checklist in section G of the
 * Kubernetes API spec (/work/shared/spec/kube-api.md); x01..x17 check
 * other rules of sections A, C and D (error bodies, scope, boolean
 * parameters, body checks, field validation, Tables, OpenAPI stub,
 * namespaces, leases, garbage collection, patches) and the bearer-token,
 * TLS and kubeconfig modes of the command line.  Every test talks HTTP to
 * a running kubesim through the harness tests/lib/kcheck (on
 * tests/lib/ksim); one server (started by the group setup) is shared, and
 * tests that need a tiny history or other flags start their own.
 * CONFORMANCE_FILTER=<glob> runs only the matching tests.  What a test
 * makes is kept in kcheck's per-test arena, released by the teardown.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/kcheck.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

static const char *const group_args[]
        = { "--watch-history", "50", "--bookmark-interval", "1s",
	          "--watch-timeout", "4s", "--too-large-wait", "1s", NULL };
static const char *const small_args[]
        = { "--watch-history", "5", "--bookmark-interval", "1s",
	          "--watch-timeout", "4s", "--too-large-wait", "1s", NULL };

/* Discovery and CRDs */

static void
g01_discovery_api(void **state)
{
	json_object *api = kc_get(200, "/api");
	json_object *apis, *groups;

	(void)state;
	assert_string_equal(kc_str_at(api, "kind"), "APIVersions");
	assert_true(kc_str_in_array(jx_get(api, "versions"), "v1"));
	apis = kc_get(200, "/apis");
	assert_string_equal(kc_str_at(apis, "kind"), "APIGroupList");
	groups = jx_get(apis, "groups");
	assert_non_null(groups);
	for (size_t i = 0; i < json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i);

		if (strcmp(kc_str_at(g, "name"), "") == 0) {
			fail_msg("core group listed in /apis");
		}
		kc_str_at(g, "preferredVersion.groupVersion");
	}
	assert_non_null(kc_find_group(groups, "apiextensions.k8s.io"));
	assert_string_equal(
	        kc_str_at(kc_find_group(groups, "coordination.k8s.io"),
	                "preferredVersion.groupVersion"),
	        "coordination.k8s.io/v1");
}

static void
g02_discovery_group_version(void **state)
{
	json_object *l = kc_get(200, "/apis/coordination.k8s.io/v1");
	json_object *ent = NULL;
	bool nsd = false;

	(void)state;
	assert_string_equal(kc_str_at(l, "kind"), "APIResourceList");
	assert_string_equal(
	        kc_str_at(l, "groupVersion"), "coordination.k8s.io/v1");
	kc_resource_entry_verbs(l, "leases", &ent);
	assert_int_equal(jx_get_bool(ent, "namespaced", &nsd), 0);
	assert_true(nsd);
	assert_string_equal(kc_str_at(ent, "kind"), "Lease");
	assert_true(kc_str_in_array(jx_get(ent, "verbs"), "list"));
	assert_true(kc_str_in_array(jx_get(ent, "verbs"), "watch"));
}

static void
g03_crd_discovery(void **state)
{
	static const char *const cr_verbs[] = { "delete", "deletecollection",
		"get", "list", "patch", "create", "update", "watch" };
	static const char *const st_verbs[] = { "get", "patch", "update" };
	json_object *l, *ent = NULL, *crd;

	(void)state;
	crd = kc_ensure_crd("example.com", "widgets", "Widget", true);
	if (crd != NULL) {
		/* The install is synchronous (spec H): the 201 shows it. */
		assert_string_equal(
		        kc_cond_status(crd, "NamesAccepted"), "True");
		assert_string_equal(
		        kc_cond_status(crd, "Established"), "True");
	}
	l = kc_get(200, "/apis/example.com/v1");
	assert_string_equal(kc_str_at(l, "kind"), "APIResourceList");
	assert_string_equal(kc_str_at(l, "groupVersion"), "example.com/v1");
	kc_resource_entry_verbs(l, "widgets", &ent);
	assert_string_equal(kc_str_at(ent, "kind"), "Widget");
	kc_assert_verbs(ent, cr_verbs, 8);
	kc_resource_entry_verbs(l, "widgets/status", &ent);
	kc_assert_verbs(ent, st_verbs, 3);
	assert_non_null(kc_find_group(
	        jx_get(kc_get(200, "/apis"), "groups"), "example.com"));
	crd = kc_get(200, KC_CRD_PATH "/widgets.example.com");
	assert_string_equal(kc_cond_status(crd, "NamesAccepted"), "True");
	assert_string_equal(kc_cond_status(crd, "Established"), "True");
}

static void
g04_crd_bad_name(void **state)
{
	const char *body = kc_crd_json("example.com", "bolts", "Bolt", false);
	json_object *o = kc_keep(testutil_json(body, 0));
	json_object *st;

	(void)state;
	kc_set_str(o, "metadata.name", "nuts.example.com");
	st = kc_post(422, KC_CRD_PATH, json_object_to_json_string(o));
	kc_check_status(st, 422, "Invalid");
	kc_get(404, KC_CRD_PATH "/nuts.example.com");
}

static void
g05_crd_delete_cascade(void **state)
{
	const char *ns = kc_new_ns();
	const char *base = kc_fmt(
	        "/apis/five.example.com/v1/namespaces/%s/sprockets", ns);
	const char *obj
	        = "{\"apiVersion\":\"five.example.com/v1\","
	          "\"kind\":\"Sprocket\",\"metadata\":{\"name\":\"%s\"},"
	          "\"spec\":{\"foo\":\"x\"}}";
	struct ksim_watch *w;
	json_object *ev1, *ev2;
	int64_t deadline;
	struct ksim_resp *r;
	long code = 0;

	(void)state;
	assert_non_null(kc_ensure_crd(
	        "five.example.com", "sprockets", "Sprocket", true));
	kc_post(201, base, kc_fmt(obj, "s1"));
	kc_post(201, base, kc_fmt(obj, "s2"));
	w = kc_watch(kc_fmt("/apis/five.example.com/v1/sprockets?watch=true"
	                    "&resourceVersion=%s",
	        kc_list_rv("/apis/five.example.com/v1/sprockets")));
	kc_del(200, KC_CRD_PATH "/sprockets.five.example.com", NULL);
	ev1 = kc_expect_event(w, "DELETED", NULL);
	ev2 = kc_expect_event(w, "DELETED", NULL);
	assert_string_not_equal(kc_str_at(ev1, "object.metadata.name"),
	        kc_str_at(ev2, "object.metadata.name"));
	deadline = ksim_now_ms() + 5000;
	while (ksim_now_ms() < deadline) {
		r = kc_send(kc_base, "GET", "/apis/five.example.com/v1", NULL,
		        NULL, NULL);
		code = r->code;
		ksim_resp_free(r);
		if (code == 404) {
			break;
		}
		usleep(50000);
	}
	assert_int_equal(code, 404);
	kc_get(404, KC_CRD_PATH "/sprockets.five.example.com");
	assert_null(kc_find_group(
	        jx_get(kc_get(200, "/apis"), "groups"), "five.example.com"));
}

static void
g06_aggregated_discovery_negotiation(void **state)
{
	static const char *const hdrs[]
	        = { "Accept: application/json;g=apidiscovery.k8s.io;v=v2;"
		    "as=APIGroupDiscoveryList,application/json",
		          NULL };
	struct ksim_resp *r;
	const char *ct,
	        *v2 = "application/json;g=apidiscovery.k8s.io;v=v2;"
	              "as=APIGroupDiscoveryList";

	(void)state;
	r = kc_send(kc_base, "GET", "/apis", NULL, NULL, hdrs);
	ct = kc_fmt("%s", r->content_type);
	assert_int_equal(r->code, 200);
	assert_non_null(kc_keep(r->json ? json_object_get(r->json) : NULL));
	if (strncmp(ct, v2, strlen(v2)) == 0) {
		assert_string_equal(
		        kc_str_at(r->json, "kind"), "APIGroupDiscoveryList");
	} else {
		if (strcmp(ct, KC_JSON) != 0
		        && strncmp(ct, KC_JSON ";", strlen(KC_JSON) + 1)
		                != 0) {
			fail_msg("Content-Type %s", ct);
		}
		assert_null(strstr(ct, "as="));
		assert_string_equal(
		        kc_str_at(r->json, "kind"), "APIGroupList");
	}
	ksim_resp_free(r);
}

/* Create / read */

static void
g07_create_configmap(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o = kc_mk_cm(ns, "c7", NULL);

	(void)state;
	kc_assert_match(
	        "^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}"
	        "-[0-9a-f]{12}$",
	        kc_str_at(o, "metadata.uid"));
	kc_assert_match(
	        "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
	        kc_str_at(o, "metadata.creationTimestamp"));
	assert_true(strlen(kc_rv_of(o)) > 0);
	assert_string_equal(kc_str_at(o, "metadata.namespace"), ns);
	assert_string_equal(kc_str_at(o, "kind"), "ConfigMap");
	assert_string_equal(kc_str_at(o, "apiVersion"), "v1");
}

static void
g08_create_existing(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	kc_mk_cm(ns, "c8", NULL);
	st = kc_post(409, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c8\"}}");
	kc_check_status(st, 409, "AlreadyExists");
	assert_string_equal(kc_str_at(st, "details.name"), "c8");
	assert_string_equal(kc_str_at(st, "details.kind"), "configmaps");
	assert_string_equal(
	        kc_str_at(st, "message"), "configmaps \"c8\" already exists");
}

static void
g09_get_missing(void **state)
{
	json_object *st = kc_get(404, kc_cm_path("default", "nope9"));

	(void)state;
	kc_check_status(st, 404, "NotFound");
	assert_string_equal(
	        kc_str_at(st, "message"), "configmaps \"nope9\" not found");
}

static void
g10_generate_name(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o;

	(void)state;
	o = kc_post(201, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"generateName\":\"w-\"}}");
	kc_assert_match("^w-[bcdfghjklmnpqrstvwxz2456789]{5}$",
	        kc_str_at(o, "metadata.name"));
	kc_get(200, kc_cm_path(ns, kc_str_at(o, "metadata.name")));
}

static void
g11_create_with_rv(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	st = kc_post(500, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c11\",\"resourceVersion\":\"5\"}}");
	assert_string_equal(kc_str_at(st, "message"),
	        "resourceVersion should not be set on objects to be created");
	kc_get(404, kc_cm_path(ns, "c11"));
}

static void
g12_namespace_mismatch_and_missing(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	st = kc_post(400, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c12\",\"namespace\":\"a\"}}");
	kc_check_status(st, 400, "BadRequest");
	kc_assert_contains(kc_str_at(st, "message"),
	        "the namespace of the provided object does not match the "
	        "namespace sent on the request");
	st = kc_post(404, kc_cm_path("nope-ns12", NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c12\"}}");
	kc_check_status(st, 404, "NotFound");
	assert_string_equal(kc_str_at(st, "message"),
	        "namespaces \"nope-ns12\" not found");
}

static void
g13_media_types(void **state)
{
	static const char *const proto[]
	        = { "Accept: application/vnd.kubernetes.protobuf", NULL };
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	st = kc_call(415, "POST", "text/plain",
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c13\"}}",
	        kc_cm_path(ns, NULL));
	kc_check_status(st, 415, "UnsupportedMediaType");
	kc_need_widgets();
	kc_mk_widget(ns, "w13", "a", NULL, NULL);
	st = kc_callh(406, "GET", NULL, NULL, proto, kc_w_path(ns, "w13"));
	kc_check_status(st, 406, "NotAcceptable");
}

/* Update / patch / concurrency */

static void
g14_put_stale(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o = kc_mk_cm(ns, "c14", NULL);
	json_object *c = kc_copy(o), *st;

	(void)state;
	kc_set_str(c, "data.k", "v2");
	kc_put(200, kc_cm_path(ns, "c14"), c);
	kc_set_str(o, "data.k", "v3");
	st = kc_put(409, kc_cm_path(ns, "c14"), o);
	kc_check_status(st, 409, "Conflict");
	kc_assert_contains(kc_str_at(st, "message"),
	        "the object has been modified; please apply your changes to "
	        "the latest version and try again");
	kc_assert_contains(kc_str_at(st, "message"),
	        "Operation cannot be fulfilled on configmaps \"c14\"");
	assert_string_equal(
	        kc_str_at(kc_get(200, kc_cm_path(ns, "c14")), "data.k"), "v2");
}

static void
g15_put_current(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o = kc_mk_cm(ns, "c15", NULL);
	json_object *u;

	(void)state;
	o = kc_copy(o);
	kc_set_str(o, "data.k", "v2");
	u = kc_put(200, kc_cm_path(ns, "c15"), o);
	assert_string_not_equal(kc_rv_of(u), kc_rv_of(o));
	assert_true(kc_rvn(u) > kc_rvn(o));
	assert_string_equal(
	        kc_rv_of(kc_get(200, kc_cm_path(ns, "c15"))), kc_rv_of(u));
	assert_string_equal(kc_str_at(u, "data.k"), "v2");
}

static void
g16_put_without_rv(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o, *st, *causes;
	bool found = false;

	(void)state;
	kc_need_widgets();
	o = kc_copy(kc_mk_widget(ns, "w16", "a", NULL, NULL));
	jx_strip(o, "metadata.resourceVersion");
	kc_set_str(o, "spec.foo", "b");
	st = kc_put(422, kc_w_path(ns, "w16"), o);
	kc_check_status(st, 422, "Invalid");
	causes = jx_get(st, "details.causes");
	for (size_t i = 0; causes && i < json_object_array_length(causes);
	        i++) {
		const char *f = jx_get_str(
		        json_object_array_get_idx(causes, i), "field");

		found = found || (f && !strcmp(f, "metadata.resourceVersion"));
	}
	if (!found) {
		fail_msg("no cause for metadata.resourceVersion: %s",
		        json_object_to_json_string(st));
	}
	o = kc_copy(kc_mk_cm(ns, "c16", NULL));
	jx_strip(o, "metadata.resourceVersion");
	kc_set_str(o, "data.k", "v2");
	assert_string_equal(
	        kc_str_at(kc_put(200, kc_cm_path(ns, "c16"), o), "data.k"),
	        "v2");
}

static void
g17_put_missing(void **state)
{
	const char *ns = kc_new_ns();
	json_object *l;

	(void)state;
	kc_need_widgets();
	kc_put_s(404, kc_w_path(ns, "w17"),
	        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
	        "\"metadata\":{\"name\":\"w17\"},\"spec\":{\"foo\":\"a\"}}");
	l = kc_put_s(201,
	        kc_fmt("/apis/coordination.k8s.io/v1/namespaces/%s/leases/l17",
	                ns),
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"l17\"},"
	        "\"spec\":{\"holderIdentity\":\"me\"}}");
	assert_string_equal(kc_str_at(l, "kind"), "Lease");
	assert_string_equal(kc_str_at(l, "spec.holderIdentity"), "me");
}

static void
g18_noop_put(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o = kc_mk_cm(ns, "c18", NULL);
	struct ksim_watch *w;
	json_object *u, *ev;

	(void)state;
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_cm_path(ns, NULL), kc_rv_of(o)));
	u = kc_put(200, kc_cm_path(ns, "c18"),
	        kc_get(200, kc_cm_path(ns, "c18")));
	assert_string_equal(kc_rv_of(u), kc_rv_of(o));
	assert_string_equal(
	        kc_rv_of(kc_get(200, kc_cm_path(ns, "c18"))), kc_rv_of(o));
	kc_patch(200, KC_MERGE, kc_cm_path(ns, "c18"),
	        "{\"data\":{\"k\":\"changed\"}}");
	ev = kc_expect_event(w, "MODIFIED", "c18");
	assert_string_equal(kc_str_at(ev, "object.data.k"), "changed");
}

static void
g19_merge_and_json_patch(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o;

	(void)state;
	kc_post(201, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c19\"},"
	        "\"data\":{\"a\":\"1\",\"b\":\"1\"}}");
	o = kc_patch(200, KC_MERGE, kc_cm_path(ns, "c19"),
	        "{\"data\":{\"a\":null,\"b\":\"2\"}}");
	assert_null(jx_get(o, "data.a"));
	assert_string_equal(kc_str_at(o, "data.b"), "2");
	o = kc_patch(200, KC_JSONP, kc_cm_path(ns, "c19"),
	        "[{\"op\":\"replace\",\"path\":\"/data/b\",\"value\":\"3\"}]");
	assert_string_equal(kc_str_at(o, "data.b"), "3");
	o = kc_get(200, kc_cm_path(ns, "c19"));
	assert_null(jx_get(o, "data.a"));
	assert_string_equal(kc_str_at(o, "data.b"), "3");
}

static void
g20_smp_on_cr(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	kc_need_widgets();
	kc_mk_widget(ns, "w20", "a", NULL, NULL);
	st = kc_patch(415, KC_SMP, kc_w_path(ns, "w20"),
	        "{\"spec\":{\"foo\":\"b\"}}");
	kc_check_status(st, 415, "UnsupportedMediaType");
	assert_string_equal(kc_str_at(st, "message"),
	        "the body of the request was in an unknown format - accepted "
	        "media types include: application/json-patch+json, "
	        "application/merge-patch+json, application/apply-patch+yaml");
}

static void
g21_patch_with_rv(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o = kc_mk_cm(ns, "c21", NULL);
	json_object *st;

	(void)state;
	kc_patch(200, KC_MERGE, kc_cm_path(ns, "c21"),
	        "{\"data\":{\"k\":\"v2\"}}");
	st = kc_patch(409, KC_MERGE, kc_cm_path(ns, "c21"),
	        kc_fmt("{\"metadata\":{\"resourceVersion\":\"%s\"},"
	               "\"data\":{\"k\":\"v3\"}}",
	                kc_rv_of(o)));
	kc_check_status(st, 409, "Conflict");
	assert_string_equal(
	        kc_str_at(kc_get(200, kc_cm_path(ns, "c21")), "data.k"), "v2");
	o = kc_patch(200, KC_MERGE, kc_cm_path(ns, "c21"),
	        "{\"data\":{\"k\":\"v4\"}}");
	assert_string_equal(kc_str_at(o, "data.k"), "v4");
}

static void
g22_patch_missing_and_apply(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	st = kc_patch(404, KC_MERGE, kc_cm_path(ns, "c22"),
	        "{\"data\":{\"k\":\"v\"}}");
	kc_check_status(st, 404, "NotFound");
	st = kc_patch(422, KC_APPLY, kc_cm_path(ns, "c22"),
	        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c22\n"
	        "data:\n  k: v\n");
	kc_check_status(st, 422, "Invalid");
	kc_assert_contains(kc_str_at(st, "message"), "fieldManager");
	kc_assert_contains(kc_str_at(st, "message"), "Required value");
}

struct racer {
	const char *base;
	const char *path;
	const char *body;
	long code;
	pthread_barrier_t *bar;
};

static void *
race_main(void *arg)
{
	struct racer *r = arg;
	struct ksim_resp *resp;

	pthread_barrier_wait(r->bar);
	resp = ksim_request(
	        r->base, "PUT", r->path, KC_JSON, r->body, NULL, 10000);
	r->code = resp->code;
	ksim_resp_free(resp);
	return (NULL);
}

static void
g23_lease_race(void **state)
{
	const char *ns = kc_new_ns();
	const char *p = kc_fmt(
	        "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	json_object *l;
	struct racer r[2];
	pthread_t t[2];
	pthread_barrier_t bar;

	(void)state;
	l = kc_post(201, p,
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"l23\"},"
	        "\"spec\":{\"holderIdentity\":\"none\"}}");
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++) {
		json_object *c = kc_copy(l);

		kc_set_str(c, "spec.holderIdentity", i ? "b" : "a");
		r[i] = (struct racer) { kc_base, kc_fmt("%s/l23", p),
			kc_fmt("%s", json_object_to_json_string(c)), 0, &bar };
		pthread_create(&t[i], NULL, race_main, &r[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
	}
	pthread_barrier_destroy(&bar);
	if (!((r[0].code == 200 && r[1].code == 409)
	            || (r[0].code == 409 && r[1].code == 200))) {
		fail_msg("racing PUTs got %ld and %ld, want 200 and 409",
		        r[0].code, r[1].code);
	}
	assert_string_equal(kc_str_at(kc_get(200, kc_fmt("%s/l23", p)),
	                            "spec.holderIdentity"),
	        r[0].code == 200 ? "a" : "b");
}

/* Generation and status */

static void
g24_generation(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o;

	(void)state;
	kc_need_widgets();
	o = kc_mk_widget(ns, "w24", "a", NULL, NULL);
	assert_int_equal(kc_int_at(o, "metadata.generation"), 1);
	o = kc_copy(o);
	kc_set_str(o, "spec.foo", "b");
	o = kc_copy(kc_put(200, kc_w_path(ns, "w24"), o));
	assert_int_equal(kc_int_at(o, "metadata.generation"), 2);
	kc_set_str(o, "metadata.labels.l", "x");
	o = kc_copy(kc_put(200, kc_w_path(ns, "w24"), o));
	assert_int_equal(kc_int_at(o, "metadata.generation"), 2);
	assert_string_equal(kc_str_at(o, "metadata.labels.l"), "x");
	kc_set_str(o, "metadata.annotations.n", "y");
	o = kc_put(200, kc_w_path(ns, "w24"), o);
	assert_int_equal(kc_int_at(o, "metadata.generation"), 2);
	assert_int_equal(kc_int_at(kc_get(200, kc_w_path(ns, "w24")),
	                         "metadata.generation"),
	        2);
}

static void
g25_status_ignored_on_main(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o;

	(void)state;
	kc_need_widgets();
	o = kc_mk_widget(
	        ns, "w25", "a", NULL, "\"status\":{\"phase\":\"born\"}");
	assert_null(jx_get(o, "status.phase"));
	assert_null(jx_get(kc_get(200, kc_w_path(ns, "w25")), "status.phase"));
	o = kc_copy(o);
	kc_set_str(o, "status.phase", "s1");
	o = kc_copy(kc_put(200, kc_fmt("%s/status", kc_w_path(ns, "w25")), o));
	assert_string_equal(kc_str_at(o, "status.phase"), "s1");
	kc_set_str(o, "status.phase", "hacked");
	kc_put(200, kc_w_path(ns, "w25"), o);
	o = kc_get(200, kc_w_path(ns, "w25"));
	assert_string_equal(kc_str_at(o, "status.phase"), "s1");
	assert_int_equal(kc_int_at(o, "metadata.generation"), 1);
}

static void
g26_status_subresource_put(void **state)
{
	const char *ns = kc_new_ns();
	const char *sp = NULL;
	json_object *o, *old, *u, *st;

	(void)state;
	kc_need_widgets();
	old = kc_mk_widget(ns, "w26", "a", NULL, NULL);
	sp = kc_fmt("%s/status", kc_w_path(ns, "w26"));
	o = kc_copy(old);
	kc_set_str(o, "status.phase", "ok");
	kc_set_str(o, "spec.foo", "changed");
	kc_set_str(o, "metadata.labels.l", "x");
	u = kc_put(200, sp, o);
	assert_true(kc_rvn(u) > kc_rvn(old));
	o = kc_get(200, kc_w_path(ns, "w26"));
	assert_string_equal(kc_str_at(o, "status.phase"), "ok");
	assert_string_equal(kc_str_at(o, "spec.foo"), "a");
	assert_null(jx_get(o, "metadata.labels.l"));
	assert_int_equal(kc_int_at(o, "metadata.generation"), 1);
	assert_string_equal(kc_rv_of(o), kc_rv_of(u));
	o = kc_copy(old);
	kc_set_str(o, "status.phase", "stale");
	st = kc_put(409, sp, o);
	kc_check_status(st, 409, "Conflict");
	o = kc_get(200, sp);
	assert_string_equal(kc_str_at(o, "status.phase"), "ok");
	assert_string_equal(kc_str_at(o, "metadata.name"), "w26");
}

static void
g27_no_status_subresource(void **state)
{
	const char *ns = kc_new_ns();
	const char *p
	        = kc_fmt("/apis/example.com/v1/namespaces/%s/gizmos", ns);
	json_object *o;

	(void)state;
	kc_need_gizmos();
	o = kc_post(201, p,
	        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gizmo\","
	        "\"metadata\":{\"name\":\"g27\"},\"spec\":{\"foo\":\"a\"},"
	        "\"status\":{\"phase\":\"p0\"}}");
	assert_int_equal(kc_int_at(o, "metadata.generation"), 1);
	assert_string_equal(kc_str_at(o, "status.phase"), "p0");
	kc_get(404, kc_fmt("%s/g27/status", p));
	o = kc_copy(o);
	kc_set_str(o, "status.phase", "p1");
	kc_put(404, kc_fmt("%s/g27/status", p), o);
	o = kc_put(200, kc_fmt("%s/g27", p), o);
	assert_string_equal(kc_str_at(o, "status.phase"), "p1");
	assert_int_equal(kc_int_at(o, "metadata.generation"), 2);
}

/* Deletion and finalizers */

static void
g28_delete_plain(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *o, *st, *e1, *e2, *e3;

	(void)state;
	kc_need_widgets();
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_w_path(ns, NULL), kc_list_rv(kc_w_path(ns, NULL))));
	o = kc_mk_widget(ns, "w28", "a", NULL, NULL);
	e1 = kc_expect_event(w, "ADDED", "w28");
	kc_patch(200, KC_MERGE, kc_w_path(ns, "w28"),
	        "{\"spec\":{\"foo\":\"b\"}}");
	e2 = kc_expect_event(w, "MODIFIED", "w28");
	st = kc_del(200, kc_w_path(ns, "w28"), NULL);
	assert_string_equal(kc_str_at(st, "kind"), "Status");
	assert_string_equal(kc_str_at(st, "status"), "Success");
	assert_string_equal(kc_str_at(st, "details.kind"), "widgets");
	assert_string_equal(kc_str_at(st, "details.name"), "w28");
	assert_string_equal(kc_str_at(st, "details.group"), "example.com");
	assert_string_equal(
	        kc_str_at(st, "details.uid"), kc_str_at(o, "metadata.uid"));
	kc_get(404, kc_w_path(ns, "w28"));
	e3 = kc_expect_event(w, "DELETED", "w28");
	assert_true(
	        kc_rvn(jx_get(e2, "object")) > kc_rvn(jx_get(e1, "object")));
	assert_true(
	        kc_rvn(jx_get(e3, "object")) > kc_rvn(jx_get(e2, "object")));
}

#define HOLD "\"finalizers\":[\"example.com/hold\"]"

static void
g29_delete_with_finalizer(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *o, *d, *d2, *ev;
	int64_t grace;

	(void)state;
	o = kc_mk_cm(ns, "c29", HOLD);
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_cm_path(ns, NULL), kc_rv_of(o)));
	d = kc_del(200, kc_cm_path(ns, "c29"), NULL);
	assert_string_equal(kc_str_at(d, "kind"), "ConfigMap");
	kc_str_at(d, "metadata.deletionTimestamp");
	grace = kc_int_at(d, "metadata.deletionGracePeriodSeconds");
	assert_int_equal(grace, 0);
	assert_true(kc_rvn(d) > kc_rvn(o));
	o = kc_get(200, kc_cm_path(ns, "c29"));
	assert_string_equal(kc_str_at(o, "metadata.deletionTimestamp"),
	        kc_str_at(d, "metadata.deletionTimestamp"));
	ev = kc_expect_event(w, "MODIFIED", "c29");
	kc_str_at(ev, "object.metadata.deletionTimestamp");
	d2 = kc_del(200, kc_cm_path(ns, "c29"), NULL);
	assert_string_equal(kc_rv_of(d2), kc_rv_of(d));
	assert_string_equal(kc_str_at(d2, "metadata.deletionTimestamp"),
	        kc_str_at(d, "metadata.deletionTimestamp"));
	kc_patch(200, KC_MERGE, kc_cm_path(ns, "c29"),
	        "{\"metadata\":{\"finalizers\":null}}");
	kc_expect_event(w, "DELETED", "c29");
}

static void
g30_no_new_finalizers(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st, *o;

	(void)state;
	kc_need_widgets();
	kc_mk_widget(ns, "w30", "a", HOLD, NULL);
	kc_del(200, kc_w_path(ns, "w30"), NULL);
	st = kc_patch(422, KC_MERGE, kc_w_path(ns, "w30"),
	        "{\"metadata\":{\"finalizers\":[\"example.com/hold\","
	        "\"example.com/new\"]}}");
	kc_check_status(st, 422, "Invalid");
	kc_assert_contains(kc_str_at(st, "message"),
	        "no new finalizers can be added if the object is being "
	        "deleted");
	o = kc_patch(200, KC_MERGE, kc_w_path(ns, "w30"),
	        "{\"spec\":{\"foo\":\"b\"}}");
	assert_string_equal(kc_str_at(o, "spec.foo"), "b");
	kc_str_at(o, "metadata.deletionTimestamp");
	kc_patch(200, KC_MERGE, kc_w_path(ns, "w30"),
	        "{\"metadata\":{\"finalizers\":null}}");
	kc_get(404, kc_w_path(ns, "w30"));
}

static void
g31_last_finalizer_removed(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *o;

	(void)state;
	o = kc_mk_cm(ns, "c31", HOLD);
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_cm_path(ns, NULL), kc_rv_of(o)));
	kc_del(200, kc_cm_path(ns, "c31"), NULL);
	kc_expect_event(w, "MODIFIED", "c31");
	o = kc_copy(kc_get(200, kc_cm_path(ns, "c31")));
	jx_strip(o, "metadata.finalizers");
	kc_put(200, kc_cm_path(ns, "c31"), o);
	kc_get(404, kc_cm_path(ns, "c31"));
	kc_expect_event(w, "DELETED", "c31");
}

static void
g32_foreground_delete(void **state)
{
	const char *ns = kc_new_ns();
	json_object *d;
	struct ksim_resp *r;

	(void)state;
	kc_need_widgets();
	kc_mk_widget(ns, "w32", "a", NULL, NULL);
	d = kc_del(200, kc_w_path(ns, "w32"),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"propagationPolicy\":\"Foreground\"}");
	kc_str_at(d, "metadata.deletionTimestamp");
	if (!kc_str_in_array(
	            jx_get(d, "metadata.finalizers"), "foregroundDeletion")) {
		fail_msg("no foregroundDeletion finalizer: %s",
		        json_object_to_json_string(d));
	}
	/* The GC emulation may finish the deletion at once. */
	r = kc_send(kc_base, "GET", kc_w_path(ns, "w32"), NULL, NULL, NULL);
	if (r->code == 200) {
		assert_non_null(jx_get(r->json, "metadata.deletionTimestamp"));
	} else {
		assert_int_equal(r->code, 404);
	}
	ksim_resp_free(r);
}

static void
g33_delete_precondition(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;

	(void)state;
	kc_mk_cm(ns, "c33", NULL);
	st = kc_del(409, kc_cm_path(ns, "c33"),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"preconditions\":{\"uid\":"
	        "\"00000000-0000-4000-8000-000000000000\"}}");
	kc_check_status(st, 409, "Conflict");
	kc_assert_contains(kc_str_at(st, "message"), "Precondition failed");
	kc_get(200, kc_cm_path(ns, "c33"));
}

static void
g34_two_controllers(void **state)
{
	const char *ns = kc_new_ns();
	const char *ref
	        = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	          "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}";
	json_object *st;

	(void)state;
	st = kc_post(422, kc_cm_path(ns, NULL),
	        kc_fmt("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	               "\"metadata\":{\"name\":\"c34\",\"ownerReferences\":[%"
	               "s,%s]}"
	               "}",
	                kc_fmt(ref, "o1",
	                        "11111111-1111-4111-8111-111111111111"),
	                kc_fmt(ref, "o2",
	                        "22222222-2222-4222-8222-222222222222")));
	kc_check_status(st, 422, "Invalid");
	kc_get(404, kc_cm_path(ns, "c34"));
}

/* List, selectors, pagination */

static void
assert_sorted(json_object *list)
{
	json_object *items = jx_get(list, "items");
	uint64_t lrv = kc_rvn(list);

	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *it = json_object_array_get_idx(items, i);

		assert_true(kc_rvn(it) <= lrv);
		if (i > 0) {
			json_object *pr
			        = json_object_array_get_idx(items, i - 1);
			int c = strcmp(kc_str_at(pr, "metadata.namespace"),
			        kc_str_at(it, "metadata.namespace"));

			if (c == 0) {
				c = strcmp(kc_str_at(pr, "metadata.name"),
				        kc_str_at(it, "metadata.name"));
			}
			if (c >= 0) {
				fail_msg("items not sorted: %s",
				        kc_item_names(list));
			}
		}
	}
}

static void
g35_list_shape(void **state)
{
	const char *ns = kc_new_ns(), *ns2 = kc_new_ns();
	const char *lab = kc_fmt("\"labels\":{\"g35\":\"%s\"}", ns);
	json_object *l;

	(void)state;
	l = kc_get(200, kc_cm_path(ns, NULL));
	assert_string_equal(kc_str_at(l, "kind"), "ConfigMapList");
	assert_string_equal(kc_str_at(l, "apiVersion"), "v1");
	assert_non_null(jx_get(l, "items"));
	assert_true(json_object_is_type(jx_get(l, "items"), json_type_array));
	assert_int_equal(json_object_array_length(jx_get(l, "items")), 0);
	kc_rvn(l);
	kc_mk_cm(ns2, "b", lab);
	kc_mk_cm(ns, "c", lab);
	kc_mk_cm(ns, "a", lab);
	kc_mk_cm(ns2, "a", lab);
	kc_mk_cm(ns, "b", lab);
	l = kc_get(200, kc_cm_path(ns, NULL));
	assert_string_equal(kc_item_names(l), "a,b,c");
	assert_sorted(l);
	l = kc_get(200,
	        kc_fmt("/api/v1/configmaps?labelSelector=%s",
	                kc_keep_str(ksim_urlenc(kc_fmt("g35=%s", ns)))));
	assert_int_equal(json_object_array_length(jx_get(l, "items")), 5);
	assert_sorted(l);
}

static void
g36_label_selector(void **state)
{
	const char *ns = kc_new_ns();
	json_object *l;

	(void)state;
	kc_mk_cm(ns, "o1", "\"labels\":{\"env\":\"a\"}");
	kc_mk_cm(ns, "o2", "\"labels\":{\"env\":\"b\",\"tier\":\"web\"}");
	kc_mk_cm(ns, "o3", "\"labels\":{\"env\":\"a\",\"tier\":\"db\"}");
	kc_mk_cm(ns, "o4", "\"labels\":{\"env\":\"c\"}");
	kc_mk_cm(ns, "o5", "\"labels\":{\"env\":\"b\",\"legacy\":\"x\"}");
	kc_mk_cm(ns, "o6", NULL);
	kc_mk_cm(ns, "o7", "\"labels\":{\"env\":\"a\",\"legacy\":\"\"}");
	l = kc_get(200,
	        kc_fmt("%s?labelSelector=%s", kc_cm_path(ns, NULL),
	                kc_keep_str(ksim_urlenc(
	                        "env in (a,b),tier!=db,!legacy"))));
	assert_string_equal(kc_item_names(l), "o1,o2");
}

static void
g37_bad_label_selector(void **state)
{
	json_object *st;

	(void)state;
	st = kc_get(400,
	        kc_fmt("%s?labelSelector=%s", kc_cm_path("default", NULL),
	                kc_keep_str(ksim_urlenc("a in (b"))));
	kc_check_status(st, 400, "BadRequest");
}

static void
g38_field_selector(void **state)
{
	const char *ns = kc_new_ns();
	json_object *l, *st;

	(void)state;
	kc_mk_cm(ns, "x", NULL);
	kc_mk_cm(ns, "y", NULL);
	l = kc_get(200,
	        kc_fmt("%s?fieldSelector=%s", kc_cm_path(ns, NULL),
	                kc_keep_str(ksim_urlenc("metadata.name=x"))));
	assert_string_equal(kc_item_names(l), "x");
	kc_need_widgets();
	st = kc_get(400,
	        kc_fmt("%s?fieldSelector=%s", kc_w_path(ns, NULL),
	                kc_keep_str(ksim_urlenc("spec.foo=1"))));
	kc_check_status(st, 400, "BadRequest");
	assert_string_equal(kc_str_at(st, "message"),
	        "field label not supported: spec.foo");
}

static void
g39_pagination(void **state)
{
	const char *ns = kc_new_ns();
	const char *cont = "", *rv = NULL;
	char seen[256] = "";
	json_object *l;
	int pages = 0;

	(void)state;
	for (int i = 0; i < 5; i++) {
		kc_mk_cm(ns, kc_fmt("p%d", i), NULL);
	}
	do {
		const char *q = *cont ? kc_fmt("&continue=%s",
		                        kc_keep_str(ksim_urlenc(cont)))
		                      : "";

		l = kc_get(
		        200, kc_fmt("%s?limit=2%s", kc_cm_path(ns, NULL), q));
		assert_true(json_object_array_length(jx_get(l, "items")) <= 2);
		if (rv == NULL) {
			rv = kc_rv_of(l);
			assert_int_equal(
			        json_object_array_length(jx_get(l, "items")),
			        2);
			assert_true(
			        strlen(kc_str_at(l, "metadata.continue")) > 0);
			kc_mk_cm(ns, "p2x", NULL);
			kc_mk_cm(ns, "p9", NULL);
		} else {
			assert_string_equal(kc_rv_of(l), rv);
		}
		if (*kc_item_names(l)) {
			strcat(seen, *seen ? "," : "");
			strcat(seen, kc_item_names(l));
		}
		cont = jx_get_str(l, "metadata.continue");
		cont = cont ? cont : "";
		assert_true(++pages <= 6);
	} while (*cont);
	assert_string_equal(seen, "p0,p1,p2,p3,p4");
}

static void
g40_continue_errors(void **state)
{
	struct ksim *k = kc_start_own(small_args);
	const char *ns, *cont, *ok;
	json_object *l, *st;

	(void)state;
	kc_base = ksim_url(k);
	ns = kc_new_ns();
	for (int i = 0; i < 3; i++) {
		kc_mk_cm(ns, kc_fmt("q%d", i), NULL);
	}
	l = kc_get(200, kc_fmt("%s?limit=1", kc_cm_path(ns, NULL)));
	cont = kc_keep_str(ksim_urlenc(kc_str_at(l, "metadata.continue")));
	st = kc_get(400,
	        kc_fmt("%s?limit=1&continue=%s&resourceVersion=%s",
	                kc_cm_path(ns, NULL), cont, kc_rv_of(l)));
	kc_check_status(st, 400, "BadRequest");
	st = kc_get(400,
	        kc_fmt("%s?limit=1&continue=garbage%%21%%21",
	                kc_cm_path(ns, NULL)));
	kc_check_status(st, 400, "BadRequest");
	ok = kc_fmt("%s?limit=1&continue=%s", kc_cm_path(ns, NULL), cont);
	kc_get(200, ok);
	for (int i = 0; i < 8; i++) {
		kc_patch(200, KC_MERGE, kc_cm_path(ns, "q0"),
		        kc_fmt("{\"data\":{\"k\":\"%d\"}}", i));
	}
	st = kc_get(410, ok);
	kc_check_status(st, 410, "Expired");
}

static void
g41_list_option_validation(void **state)
{
	const char *p = kc_cm_path("default", NULL);
	json_object *st;

	(void)state;
	st = kc_get(422, kc_fmt("%s?resourceVersionMatch=NotOlderThan", p));
	kc_check_status(st, 422, "Invalid");
	kc_assert_contains(kc_str_at(st, "message"),
	        "ListOptions.meta.k8s.io \"\" is invalid");
	st = kc_get(422,
	        kc_fmt("%s?resourceVersionMatch=Exact&resourceVersion=0", p));
	kc_check_status(st, 422, "Invalid");
	st = kc_get(422, kc_fmt("%s?sendInitialEvents=true", p));
	kc_check_status(st, 422, "Invalid");
}

static void
g42_exact_list(void **state)
{
	struct ksim *k = kc_start_own(small_args);
	const char *ns, *q;
	json_object *a, *l, *st;

	(void)state;
	kc_base = ksim_url(k);
	ns = kc_new_ns();
	a = kc_mk_cm(ns, "a", NULL);
	kc_mk_cm(ns, "b", NULL);
	q = kc_fmt("%s?resourceVersion=%s&resourceVersionMatch=Exact",
	        kc_cm_path(ns, NULL), kc_rv_of(a));
	l = kc_get(200, q);
	assert_string_equal(kc_rv_of(l), kc_rv_of(a));
	assert_string_equal(kc_item_names(l), "a");
	for (int i = 0; i < 8; i++) {
		kc_patch(200, KC_MERGE, kc_cm_path(ns, "b"),
		        kc_fmt("{\"data\":{\"k\":\"%d\"}}", i));
	}
	st = kc_get(410, q);
	kc_check_status(st, 410, "Expired");
}

static void
check_too_large(const char *path)
{
	struct ksim_resp *r = kc_send(kc_base, "GET", path, NULL, NULL, NULL);
	json_object *st = kc_keep(json_object_get(r->json));
	json_object *causes;
	char *ra = ksim_resp_header(r, "Retry-After");
	long code = r->code;
	int64_t ms = r->elapsed_ms;

	kc_keep_str(ra);
	ksim_resp_free(r);
	assert_int_equal(code, 504);
	if (ms > 3500) {
		fail_msg("504 after %lld ms, want <= ~3 s", (long long)ms);
	}
	kc_check_status(st, 504, "Timeout");
	kc_assert_contains(kc_str_at(st, "message"),
	        "Too large resource version: 999999999, current: ");
	causes = jx_get(st, "details.causes");
	assert_non_null(causes);
	assert_string_equal(
	        kc_str_at(json_object_array_get_idx(causes, 0), "reason"),
	        "ResourceVersionTooLarge");
	assert_int_equal(kc_int_at(st, "details.retryAfterSeconds"), 1);
	assert_non_null(ra);
	assert_string_equal(ra, "1");
}

static void
g43_too_large(void **state)
{
	const char *ns = kc_new_ns();

	(void)state;
	kc_mk_cm(ns, "c43", NULL);
	check_too_large(
	        kc_fmt("%s?resourceVersion=999999999", kc_cm_path(ns, "c43")));
	check_too_large(
	        kc_fmt("%s?resourceVersion=999999999", kc_cm_path(ns, NULL)));
}

/* Watch */

static void
g44_watch_event_order(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *e[3];
	int64_t t0;

	(void)state;
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_cm_path(ns, NULL), kc_list_rv(kc_cm_path(ns, NULL))));
	kc_mk_cm(ns, "c44", NULL);
	t0 = ksim_now_ms();
	e[0] = kc_expect_event(w, "ADDED", "c44");
	if (ksim_now_ms() - t0 > 1000) {
		fail_msg("ADDED arrived %lld ms after the write",
		        (long long)(ksim_now_ms() - t0));
	}
	kc_patch(200, KC_MERGE, kc_cm_path(ns, "c44"),
	        "{\"data\":{\"k\":\"v2\"}}");
	e[1] = kc_expect_event(w, "MODIFIED", "c44");
	assert_string_equal(kc_str_at(e[1], "object.data.k"), "v2");
	kc_del(200, kc_cm_path(ns, "c44"), NULL);
	e[2] = kc_expect_event(w, "DELETED", "c44");
	assert_true(kc_rvn(jx_get(e[1], "object"))
	        > kc_rvn(jx_get(e[0], "object")));
	assert_true(kc_rvn(jx_get(e[2], "object"))
	        > kc_rvn(jx_get(e[1], "object")));
	for (int i = 0; i < 3; i++) {
		assert_string_equal(
		        kc_str_at(e[i], "object.kind"), "ConfigMap");
		assert_string_equal(
		        kc_str_at(e[i], "object.apiVersion"), "v1");
	}
	assert_int_equal(ksim_watch_lines(w), 3);
	assert_int_equal(ksim_watch_bad_lines(w), 0);
	kc_check_stream_headers(w, "g44");
}

/* Reads the initial ADDED events of a watch: exactly names "a,b". */
static void
expect_initial_ab(struct ksim_watch *w)
{
	json_object *e1 = kc_expect_event(w, "ADDED", NULL);
	json_object *e2 = kc_expect_event(w, "ADDED", NULL);
	const char *n1 = kc_str_at(e1, "object.metadata.name");
	const char *n2 = kc_str_at(e2, "object.metadata.name");

	if (!((!strcmp(n1, "a") && !strcmp(n2, "b"))
	            || (!strcmp(n1, "b") && !strcmp(n2, "a")))) {
		fail_msg("initial events for %s and %s, want a and b", n1, n2);
	}
}

static void
g45_watch_start_points(void **state)
{
	const char *ns = kc_new_ns();
	const char *n;
	struct ksim_watch *w;
	json_object *ev;

	(void)state;
	kc_mk_cm(ns, "a", NULL);
	kc_mk_cm(ns, "b", NULL);
	kc_patch(200, KC_MERGE, kc_cm_path(ns, "b"),
	        "{\"data\":{\"k\":\"old\"}}");
	w = kc_watch(kc_fmt("%s?watch=true", kc_cm_path(ns, NULL)));
	expect_initial_ab(w);
	kc_expect_quiet(w, 300);
	w = kc_watch(kc_fmt(
	        "%s?watch=true&resourceVersion=0", kc_cm_path(ns, NULL)));
	expect_initial_ab(w);
	n = kc_list_rv(kc_cm_path(ns, NULL));
	w = kc_watch(kc_fmt(
	        "%s?watch=true&resourceVersion=%s", kc_cm_path(ns, NULL), n));
	kc_patch(200, KC_MERGE, kc_cm_path(ns, "a"),
	        "{\"data\":{\"k\":\"new\"}}");
	ev = kc_expect_event(w, "MODIFIED", "a");
	assert_true(kc_rvn(jx_get(ev, "object")) > kc_rv_num(n));
	kc_expect_quiet(w, 300);
}

static void
relabel(const char *ns, const char *name, const char *app)
{
	kc_patch(200, KC_MERGE, kc_cm_path(ns, name),
	        kc_fmt("{\"metadata\":{\"labels\":{\"app\":\"%s\"}}}", app));
}

static void
g46_selector_transitions(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *ev;

	(void)state;
	w = kc_watch(
	        kc_fmt("%s?watch=true&resourceVersion=%s&labelSelector=%s",
	                kc_cm_path(ns, NULL), kc_list_rv(kc_cm_path(ns, NULL)),
	                kc_keep_str(ksim_urlenc("app=a"))));
	kc_mk_cm(ns, "y", "\"labels\":{\"app\":\"b\"}");
	kc_mk_cm(ns, "x", "\"labels\":{\"app\":\"a\"}");
	kc_expect_event(w, "ADDED", "x");
	relabel(ns, "x", "b");
	ev = kc_expect_event(w, "DELETED", "x");
	(void)ev;
	relabel(ns, "x", "a");
	ev = kc_expect_event(w, "ADDED", "x");
	assert_string_equal(kc_str_at(ev, "object.metadata.labels.app"), "a");
	relabel(ns, "y", "c");
	kc_expect_quiet(w, 300);
}

static void
g47_watch_too_old(void **state)
{
	struct ksim *k = kc_start_own(small_args);
	struct ksim_watch *w;
	const char *ns;
	json_object *o, *ev;
	long code;

	(void)state;
	kc_base = ksim_url(k);
	ns = kc_new_ns();
	o = kc_mk_cm(ns, "c47", NULL);
	for (int i = 0; i < 8; i++) {
		kc_patch(200, KC_MERGE, kc_cm_path(ns, "c47"),
		        kc_fmt("{\"data\":{\"k\":\"%d\"}}", i));
	}
	w = kc_watch_on(kc_base,
	        kc_fmt("%s?watch=true&resourceVersion=%s",
	                kc_cm_path(ns, NULL), kc_rv_of(o)));
	code = ksim_watch_status(w, 5000);
	if (code == 200) {
		ev = kc_next_event(w, KC_EVENT_MS);
		assert_non_null(ev);
		assert_string_equal(kc_str_at(ev, "type"), "ERROR");
		kc_check_status(jx_get(ev, "object"), 410, "Expired");
		assert_true(ksim_watch_wait_end(w, 3000));
		assert_null(kc_next_event(w, 0));
	} else if (code == 410) {
		assert_true(ksim_watch_wait_end(w, 3000));
		o = kc_keep(testutil_json(kc_keep_str(ksim_watch_body(w)), 0));
		kc_check_status(o, 410, "Expired");
	} else {
		fail_msg("watch from a too-old RV: HTTP %ld, want 200 or 410",
		        code);
	}
}

static void
g48_watch_timeouts(void **state)
{
	const char *ns = kc_new_ns();
	const char *rv = kc_list_rv(kc_cm_path(ns, NULL));
	struct ksim_watch *w;
	int64_t t0 = ksim_now_ms(), dt;
	char *err;

	(void)state;
	w = kc_watch(
	        kc_fmt("%s?watch=true&timeoutSeconds=2&resourceVersion=%s",
	                kc_cm_path(ns, NULL), rv));
	assert_true(ksim_watch_wait_end(w, 6000));
	dt = ksim_watch_end_ms(w) - t0;
	if (dt < 1500 || dt > 4000) {
		fail_msg("timeoutSeconds=2 watch lasted %lld ms",
		        (long long)dt);
	}
	assert_null(kc_next_event(w, 0));
	assert_int_equal(ksim_watch_lines(w), 0);
	assert_int_equal(ksim_watch_bad_lines(w), 0);
	err = kc_keep_str(ksim_watch_error(w));
	assert_string_equal(err, "");
	t0 = ksim_now_ms();
	w = kc_watch(kc_fmt(
	        "%s?watch=true&resourceVersion=%s", kc_cm_path(ns, NULL), rv));
	assert_false(ksim_watch_wait_end(w, 3500));
	/* --watch-timeout 4s is the length of such a watch. */
	assert_true(ksim_watch_wait_end(w, 4000));
	dt = ksim_watch_end_ms(w) - t0;
	if (dt > 6000) {
		fail_msg(
		        "default watch lasted %lld ms with --watch-timeout 4s",
		        (long long)dt);
	}
	err = kc_keep_str(ksim_watch_error(w));
	assert_string_equal(err, "");
	assert_int_equal(ksim_watch_bad_lines(w), 0);
}

static void
check_bookmark(json_object *ev, uint64_t min_rv)
{
	json_object *obj = jx_get(ev, "object");
	json_object *md = jx_get(obj, "metadata");

	assert_string_equal(kc_str_at(obj, "apiVersion"), "v1");
	assert_string_equal(kc_str_at(obj, "kind"), "ConfigMap");
	if (json_object_object_length(obj) != 3
	        || json_object_object_length(md)
	                != (jx_get(md, "annotations") ? 2 : 1)) {
		fail_msg("BOOKMARK object has extra fields: %s",
		        json_object_to_json_string(ev));
	}
	assert_true(kc_rvn(obj) >= min_rv);
}

static void
g49_bookmarks(void **state)
{
	const char *ns = kc_new_ns();
	const char *rv = kc_list_rv(kc_cm_path(ns, NULL));
	struct ksim_watch *w;
	json_object *ev;
	uint64_t last;
	int64_t deadline;
	bool got = false;

	(void)state;
	w = kc_watch(kc_fmt("%s?watch=true&allowWatchBookmarks=true&"
	                    "resourceVersion=%s",
	        kc_cm_path(ns, NULL), rv));
	kc_mk_cm(ns, "c49", NULL);
	ev = kc_expect_event(w, "ADDED", "c49");
	last = kc_rvn(jx_get(ev, "object"));
	deadline = ksim_now_ms() + 3500;
	while (!got && ksim_now_ms() < deadline) {
		ev = kc_next_event(w, 500);
		if (ev != NULL) {
			assert_string_equal(kc_str_at(ev, "type"), "BOOKMARK");
			check_bookmark(ev, last);
			got = true;
		}
	}
	assert_true(got);
	w = kc_watch(kc_fmt(
	        "%s?watch=true&resourceVersion=%s", kc_cm_path(ns, NULL), rv));
	kc_expect_event(w, "ADDED", "c49");
	deadline = ksim_now_ms() + 2500;
	while (ksim_now_ms() < deadline) {
		ev = kc_next_event(w, 500);
		if (ev != NULL) {
			fail_msg("event without bookmarks asked: %s",
			        json_object_to_json_string(ev));
		}
	}
}

static void
g50_send_initial_events(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *st, *ev;
	const char *end;
	long code;

	(void)state;
	kc_mk_cm(ns, "a", NULL);
	kc_mk_cm(ns, "b", NULL);
	st = kc_get(422,
	        kc_fmt("%s?watch=true&sendInitialEvents=true",
	                kc_cm_path(ns, NULL)));
	kc_check_status(st, 422, "Invalid");
	w = kc_watch_on(kc_base,
	        kc_fmt("%s?watch=true&sendInitialEvents=true"
	               "&resourceVersionMatch=NotOlderThan"
	               "&allowWatchBookmarks=true",
	                kc_cm_path(ns, NULL)));
	code = ksim_watch_status(w, 5000);
	if (code == 422) {
		assert_true(ksim_watch_wait_end(w, 3000));
		st = kc_keep(
		        testutil_json(kc_keep_str(ksim_watch_body(w)), 0));
		kc_check_status(st, 422, "Invalid");
		return;
	}
	assert_int_equal(code, 200);
	expect_initial_ab(w);
	ev = kc_next_event(w, KC_EVENT_MS);
	assert_non_null(ev);
	assert_string_equal(kc_str_at(ev, "type"), "BOOKMARK");
	end = jx_getv(ev, "object", "metadata", "annotations",
	              "k8s.io/initial-events-end", NULL)
	        ? json_object_get_string(jx_getv(ev, "object", "metadata",
	                "annotations", "k8s.io/initial-events-end", NULL))
	        : NULL;
	assert_non_null(end);
	assert_string_equal(end, "true");
	kc_mk_cm(ns, "c", NULL);
	kc_expect_event(w, "ADDED", "c");
}

static void
g51_watch_one_object(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *st;

	(void)state;
	kc_need_widgets();
	kc_mk_widget(ns, "foo", "a", NULL, NULL);
	kc_mk_widget(ns, "bar", "a", NULL, NULL);
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_w_path(ns, "foo"), kc_list_rv(kc_w_path(ns, NULL))));
	kc_patch(200, KC_MERGE, kc_w_path(ns, "bar"),
	        "{\"spec\":{\"foo\":\"b\"}}");
	kc_patch(200, KC_MERGE, kc_w_path(ns, "foo"),
	        "{\"spec\":{\"foo\":\"b\"}}");
	kc_expect_event(w, "MODIFIED", "foo");
	kc_del(200, kc_w_path(ns, "bar"), NULL);
	kc_del(200, kc_w_path(ns, "foo"), NULL);
	kc_expect_event(w, "DELETED", "foo");
	kc_mk_widget(ns, "baz", "a", NULL, NULL);
	kc_expect_quiet(w, 300);
	st = kc_get(400,
	        kc_fmt("%s?watch=true&fieldSelector=%s", kc_w_path(ns, "foo"),
	                kc_keep_str(ksim_urlenc("metadata.name=bar"))));
	kc_check_status(st, 400, "BadRequest");
}

static void
g52_deleted_after_finalizer(void **state)
{
	const char *ns = kc_new_ns();
	struct ksim_watch *w;
	json_object *o, *ev, *mod;

	(void)state;
	kc_need_widgets();
	o = kc_mk_widget(ns, "w52", "a", HOLD, NULL);
	w = kc_watch(kc_fmt("%s?watch=true&resourceVersion=%s",
	        kc_w_path(ns, NULL), kc_rv_of(o)));
	kc_del(200, kc_w_path(ns, "w52"), NULL);
	mod = kc_expect_event(w, "MODIFIED", "w52");
	/* Spec C.2: marking for deletion bumps generation once. */
	assert_int_equal(kc_int_at(mod, "object.metadata.generation"), 2);
	kc_patch(200, KC_MERGE, kc_w_path(ns, "w52"),
	        "{\"spec\":{\"foo\":\"last\"}}");
	mod = kc_expect_event(w, "MODIFIED", "w52");
	o = kc_patch(200, KC_MERGE, kc_w_path(ns, "w52"),
	        "{\"metadata\":{\"finalizers\":null}}");
	assert_null(jx_get(o, "metadata.finalizers.0"));
	ev = kc_expect_event(w, "DELETED", "w52");
	assert_true(kc_str_in_array(
	        jx_get(ev, "object.metadata.finalizers"), "example.com/hold"));
	assert_string_equal(kc_str_at(ev, "object.spec.foo"), "last");
	assert_string_equal(kc_str_at(ev, "object.metadata.deletionTimestamp"),
	        kc_str_at(mod, "object.metadata.deletionTimestamp"));
	assert_true(
	        kc_rvn(jx_get(ev, "object")) > kc_rvn(jx_get(mod, "object")));
	kc_get(404, kc_w_path(ns, "w52"));
}

/* Command-line modes and error bodies */

static void
x01_error_bodies_are_json_status(void **state)
{
	static const char *const paths[] = { "/api/v1/namespaces/nope-x1",
		"/api/v1/namespaces/default/configmaps/nope-x1",
		"/apis/coordination.k8s.io/v1/namespaces/default/leases/nope",
		NULL };

	(void)state;
	for (int i = 0; paths[i] != NULL; i++) {
		kc_check_status(kc_get(404, paths[i]), 404, "NotFound");
	}
	kc_check_status(kc_post(400, kc_cm_path("default", NULL), "{not json"),
	        400, "BadRequest");
	kc_check_status(
	        kc_post(409, "/api/v1/namespaces",
	                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	                "\"metadata\":{\"name\":\"default\"}}"),
	        409, "AlreadyExists");
}

static void
x02_unknown_group(void **state)
{
	(void)state;
	kc_check_status(
	        kc_get(404, "/apis/nope.example.com"), 404, "NotFound");
	kc_check_status(
	        kc_get(404, "/apis/nope.example.com/v1"), 404, "NotFound");
	kc_check_status(kc_get(404,
	                        "/apis/nope.example.com/v1/namespaces/default/"
	                        "things"),
	        404, "NotFound");
	kc_check_status(kc_get(404, "/api/v1/nothings"), 404, "NotFound");
}

/* Spec A.1: scope mismatches are 404. */
static void
x02b_scope_mismatch(void **state)
{
	(void)state;
	kc_mk_cm("default", "x02b", NULL);
	kc_get(200, kc_cm_path("default", "x02b"));
	kc_check_status(
	        kc_get(404, "/api/v1/configmaps/x02b"), 404, "NotFound");
	kc_del(404, "/api/v1/configmaps/x02b", NULL);
	kc_need_widgets();
	kc_check_status(kc_get(404,
	                        "/apis/apiextensions.k8s.io/v1/namespaces/"
	                        "default/customresourcedefinitions/"
	                        "widgets.example.com"),
	        404, "NotFound");
	kc_check_status(
	        kc_get(404, "/api/v1/namespaces/default/namespaces/default"),
	        404, "NotFound");
	kc_del(200, kc_cm_path("default", "x02b"), NULL);
}

static void
x03_bearer_token(void **state)
{
	static const char *const good[]
	        = { "Authorization: Bearer t0k", NULL };
	static const char *const bad[]
	        = { "Authorization: Bearer nope", NULL };
	static const char *const args[] = { "--token", "t0k", NULL };
	struct ksim *k = kc_start_own(args);
	struct ksim_resp *r;
	long c1, c2, c3;

	(void)state;
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, NULL, 5000);
	c1 = r->code;
	ksim_resp_free(r);
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, bad, 5000);
	c2 = r->code;
	ksim_resp_free(r);
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, good, 5000);
	c3 = r->code;
	ksim_resp_free(r);
	assert_int_equal(c1, 401);
	assert_int_equal(c2, 401);
	assert_int_equal(c3, 200);
	assert_int_equal(kc_stop_own(k), 0);
}

static void
x04_tls(void **state)
{
	static const char *const args[] = { "--tls", NULL };
	struct ksim *k = kc_start_own(args);
	struct ksim_resp *r;
	long code;

	(void)state;
	kc_assert_match("^https://127\\.0\\.0\\.1:[0-9]+$", ksim_url(k));
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, NULL, 5000);
	code = r->code;
	if (code != 200) {
		fail_msg("GET /api over TLS: %ld %s", code,
		        kc_keep_str(xstrdup(r->error)));
	}
	ksim_resp_free(r);
	assert_int_equal(kc_stop_own(k), 0);
}

static void
x05_write_kubeconfig(void **state)
{
	char path[] = "/tmp/ksim-kubeconfig-XXXXXX";
	const char *args[] = { "--write-kubeconfig", path, NULL };
	struct ksim *k;
	char *text = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	k = kc_start_own(args);
	for (int i = 0; i < 40 && access(path, R_OK) != 0; i++) {
		usleep(50000);
	}
	if (access(path, R_OK) == 0) {
		text = kc_keep_str(testutil_read_file(path, NULL));
	}
	unlink(path);
	assert_non_null(text);
	kc_assert_contains(text, ksim_url(k));
	assert_int_equal(kc_stop_own(k), 0);
}

/* Spec A.3: absent, 0 or false (any case) is false; anything else,
 * even empty, is true. */
static void
x06_boolean_params(void **state)
{
	static const char *const off[] = { "false", "0", "FALSE", NULL };
	static const char *const on[]
	        = { "watch", "watch=", "watch=1", "watch=yes", NULL };
	const char *ns = kc_new_ns();
	struct ksim_resp *r;

	(void)state;
	kc_mk_cm(ns, "b", NULL);
	for (int i = 0; off[i] != NULL; i++) {
		json_object *l = kc_get(200,
		        kc_fmt("%s?watch=%s", kc_cm_path(ns, NULL), off[i]));

		assert_string_equal(kc_str_at(l, "kind"), "ConfigMapList");
	}
	for (int i = 0; on[i] != NULL; i++) {
		const char *p = kc_fmt(
		        "%s?%s&timeoutSeconds=1", kc_cm_path(ns, NULL), on[i]);

		r = kc_send(kc_base, "GET", p, NULL, NULL, NULL);
		if (r->code != 200
		        || strncmp(r->body, "{\"type\":\"ADDED\"", 15) != 0) {
			const char *m = kc_fmt(
			        "%s: %ld %.300s", p, r->code, r->body);

			ksim_resp_free(r);
			fail_msg("not a watch: %s", m);
		}
		ksim_resp_free(r);
	}
}

/* Spec A.7: request-body checks. */
static void
x07_body_checks(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o = kc_copy(kc_mk_cm(ns, "c", NULL));
	json_object *st;

	(void)state;
	kc_set_str(o, "metadata.name", "other");
	st = kc_put(400, kc_cm_path(ns, "c"), o);
	kc_check_status(st, 400, "BadRequest");
	kc_assert_contains(kc_str_at(st, "message"),
	        "the name of the object (other) does not match the name on "
	        "the URL (c)");
	st = kc_patch(400, KC_MERGE, kc_cm_path(ns, "c"),
	        "{\"metadata\":{\"name\":\"other\"}}");
	kc_check_status(st, 400, "BadRequest");
	st = kc_post(400, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v2\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"d\"}}");
	kc_check_status(st, 400, "BadRequest");
	kc_assert_contains(kc_str_at(st, "message"),
	        "does not match the expected API version");
	st = kc_post(422, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{}}");
	kc_check_status(st, 422, "Invalid");
	kc_assert_contains(kc_str_at(st, "message"),
	        "metadata.name: Required value: name or generateName is "
	        "required");
	st = kc_patch(422, KC_MERGE,
	        kc_fmt("%s?force=true", kc_cm_path(ns, "c")),
	        "{\"data\":{\"k\":\"v\"}}");
	kc_check_status(st, 422, "Invalid");
}

/* Spec A.7: fieldValidation Strict, Warn and Ignore. */
static void
x08_field_validation(void **state)
{
	static const char *const modes[] = { "Warn", "Ignore" };
	const char *ns = kc_new_ns();
	const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                   "\"metadata\":{\"name\":\"%s\"},\"bogus\":1}";
	json_object *st;

	(void)state;
	st = kc_post(400,
	        kc_fmt("%s?fieldValidation=Strict", kc_cm_path(ns, NULL)),
	        kc_fmt(body, "s"));
	kc_check_status(st, 400, "BadRequest");
	kc_assert_match("^strict decoding error:", kc_str_at(st, "message"));
	for (int i = 0; i < 2; i++) {
		struct ksim_resp *r = kc_send(kc_base, "POST",
		        kc_fmt("%s?fieldValidation=%s", kc_cm_path(ns, NULL),
		                modes[i]),
		        KC_JSON, kc_fmt(body, i ? "i" : "w"), NULL);
		char *warn = kc_keep_str(ksim_resp_header(r, "Warning"));
		long code = r->code;

		ksim_resp_free(r);
		assert_int_equal(code, 201);
		if (i == 0) {
			assert_non_null(warn);
			kc_assert_match("^299 - \"", warn);
		} else {
			assert_null(warn);
		}
	}
}

/* Beyond the checklist: spec A, C and D behaviour the operator's tests
 * rely on. */

/* Spec D.6: a Table Accept gets a Table with its Content-Type, or a plain
 * list labelled application/json. */
static void
x09_table_negotiation(void **state)
{
	static const char *const hdrs[]
	        = { "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,"
		    "application/json",
		          NULL };
	const char *tab = "application/json;as=Table;v=v1;g=meta.k8s.io";
	const char *ns = kc_new_ns();
	const char *paths[2];

	(void)state;
	kc_need_widgets();
	kc_mk_widget(ns, "t1", "a", NULL, NULL);
	kc_mk_cm(ns, "t1", NULL);
	paths[0] = kc_w_path(ns, NULL);
	paths[1] = kc_cm_path(ns, NULL);
	for (int i = 0; i < 2; i++) {
		struct ksim_resp *r
		        = kc_send(kc_base, "GET", paths[i], NULL, NULL, hdrs);
		const char *ct = kc_fmt("%s", r->content_type);
		json_object *o
		        = kc_keep(r->json ? json_object_get(r->json) : NULL);

		ksim_resp_free(r);
		assert_non_null(o);
		if (strncmp(ct, tab, strlen(tab)) == 0) {
			json_object *row;

			assert_string_equal(kc_str_at(o, "kind"), "Table");
			assert_string_equal(
			        kc_str_at(o, "apiVersion"), "meta.k8s.io/v1");
			assert_string_equal(
			        kc_str_at(o, "columnDefinitions.0.name"),
			        "Name");
			row = jx_get(o, "rows.0");
			assert_non_null(row);
			assert_string_equal(kc_str_at(row, "cells.0"), "t1");
			assert_string_equal(kc_str_at(row, "object.kind"),
			        "PartialObjectMetadata");
			kc_rv_of(o);
		} else {
			assert_string_equal(ct, KC_JSON);
			assert_string_equal(kc_item_names(o), "t1");
		}
	}
}

/* Spec A.1: the deprecated watch paths equal ?watch=true. */
static void
x10_deprecated_watch_path(void **state)
{
	const char *ns = kc_new_ns();
	const char *rv = kc_list_rv(kc_cm_path(ns, NULL));
	struct ksim_watch *w;

	(void)state;
	w = kc_watch(kc_fmt(
	        "/api/v1/watch/namespaces/%s/configmaps?resourceVersion=%s",
	        ns, rv));
	kc_mk_cm(ns, "d1", NULL);
	kc_expect_event(w, "ADDED", "d1");
}

/* Spec D.1. */
static void
x11_version_and_health(void **state)
{
	static const char *const hp[]
	        = { "/healthz", "/livez", "/readyz", NULL };
	json_object *v = kc_get(200, "/version");

	(void)state;
	kc_str_at(v, "major");
	kc_str_at(v, "minor");
	kc_assert_match("^v1\\.[0-9]+\\.[0-9]+", kc_str_at(v, "gitVersion"));
	for (int i = 0; hp[i] != NULL; i++) {
		struct ksim_resp *r
		        = kc_send(kc_base, "GET", hp[i], NULL, NULL, NULL);
		const char *m = kc_fmt("%s: %ld [%s] %s", hp[i], r->code,
		        r->content_type, r->body);
		bool ok = r->code == 200 && strcmp(r->body, "ok") == 0
		        && strncmp(r->content_type, "text/plain", 10) == 0;

		ksim_resp_free(r);
		if (!ok) {
			fail_msg("%s", m);
		}
	}
}

/* Spec D.5: the OpenAPI v3 documents kubectl apply and explain read
 * (each kind a schema with its GVK); v2 as JSON, 406 to a protobuf-only
 * client. */
static void
x12_openapi_stub(void **state)
{
	static const char *const gvs[]
	        = { "api/v1", "apis/apiextensions.k8s.io/v1",
		          "apis/coordination.k8s.io/v1", NULL };
	json_object *root = kc_get(200, "/openapi/v3");

	(void)state;
	for (int i = 0; gvs[i] != NULL; i++) {
		const char *url
		        = jx_get_str(jx_getv(root, "paths", gvs[i],
		                             "serverRelativeURL", NULL),
		                "");
		json_object *doc;
		const char *txt;

		if (url == NULL) {
			fail_msg("no %s in /openapi/v3: %s", gvs[i],
			        json_object_to_json_string(root));
		}
		doc = kc_get(200, url);
		kc_str_at(doc, "openapi");
		txt = json_object_to_json_string(jx_get(doc, "paths"));
		kc_assert_contains(txt, "x-kubernetes-group-version-kind");
		kc_assert_contains(txt, "\"fieldValidation\"");
		assert_null(strstr(txt, "strategic-merge-patch"));
		txt = json_object_to_json_string(jx_get(doc, "components"));
		kc_assert_contains(txt, "x-kubernetes-group-version-kind");
		kc_assert_contains(txt,
		        "io.k8s.apimachinery.pkg.apis.meta.v1."
		        "ObjectMeta");
	}
	root = kc_get(200, "/openapi/v2");
	kc_str_at(root, "swagger");
	kc_assert_contains(
	        json_object_to_json_string(jx_get(root, "definitions")),
	        "\"io.k8s.api.core.v1.Pod\"");
	assert_null(strstr(
	        json_object_to_json_string(root), "#/components/schemas/"));
	{
		static const char *const pb[]
		        = { "Accept: application/"
			    "com.github.proto-openapi.spec."
			    "v2@v1.0+protobuf",
			          NULL };

		kc_callh(406, "GET", NULL, NULL, pb, "/openapi/v2");
	}
}

/* Spec C.8: standard namespaces; a terminating namespace refuses new
 * content; deleting a namespace removes its objects. */
static void
x13_namespace_lifecycle(void **state)
{
	static const char *const std[] = { "default", "kube-system",
		"kube-public", "kube-node-lease", "sympozium-system", NULL };
	const char *ns = kc_new_ns();
	struct ksim_resp *r;
	int64_t deadline;
	long code = 0;

	(void)state;
	for (int i = 0; std[i] != NULL; i++) {
		kc_get(200, kc_fmt("/api/v1/namespaces/%s", std[i]));
	}
	kc_mk_cm(ns, "n1", NULL);
	kc_del(200, kc_fmt("/api/v1/namespaces/%s", ns), NULL);
	r = kc_send(kc_base, "POST", kc_cm_path(ns, NULL), KC_JSON,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"n2\"}}",
	        NULL);
	code = r->code;
	if (code == 403) {
		kc_check_error_body(r, "create in terminating namespace");
		assert_string_equal(
		        jx_get_str(r->json, "reason"), "Forbidden");
		kc_assert_contains(jx_get_str(r->json, "message"),
		        "because it is being terminated");
	}
	ksim_resp_free(r);
	if (code != 403 && code != 404) {
		fail_msg("create in a deleted namespace: HTTP %ld", code);
	}
	deadline = ksim_now_ms() + 5000;
	do {
		r = kc_send(kc_base, "GET",
		        kc_fmt("/api/v1/namespaces/%s", ns), NULL, NULL, NULL);
		code = r->code;
		ksim_resp_free(r);
		if (code != 404) {
			usleep(50000);
		}
	} while (code != 404 && ksim_now_ms() < deadline);
	assert_int_equal(code, 404);
	kc_get(404, kc_cm_path(ns, "n1"));
}

/* Spec C.4, C.9: Lease rules. */
static void
x14_lease_rules(void **state)
{
	const char *ns = kc_new_ns();
	const char *p = kc_fmt(
	        "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	json_object *l, *st;

	(void)state;
	l = kc_copy(kc_post(201, p,
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":"
	        "\"a\",\"leaseDurationSeconds\":15,\"acquireTime\":"
	        "\"2026-01-02T03:04:05.123456Z\",\"renewTime\":"
	        "\"2026-01-02T03:04:05.123456Z\",\"leaseTransitions\":0}}"));
	assert_string_equal(
	        kc_str_at(l, "spec.renewTime"), "2026-01-02T03:04:05.123456Z");
	jx_strip(l, "metadata.resourceVersion");
	kc_set_str(l, "spec.holderIdentity", "b");
	st = kc_put(422, kc_fmt("%s/l", p), l);
	kc_check_status(st, 422, "Invalid");
	kc_assert_contains(
	        kc_str_at(st, "message"), "must be specified for an update");
	st = kc_post(422, p,
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"bad\"},"
	        "\"spec\":{\"leaseDurationSeconds\":0}}");
	kc_check_status(st, 422, "Invalid");
}

static json_object *
wait_gone_or(const char *path, bool want_gone, int ms)
{
	int64_t deadline = ksim_now_ms() + ms;
	json_object *o = NULL;

	for (;;) {
		struct ksim_resp *r
		        = kc_send(kc_base, "GET", path, NULL, NULL, NULL);
		long code = r->code;

		o = kc_keep(r->json ? json_object_get(r->json) : NULL);
		ksim_resp_free(r);
		if (want_gone ? code == 404 : code == 200) {
			return (o);
		}
		if (ksim_now_ms() >= deadline) {
			fail_msg("%s: HTTP %ld after %d ms", path, code, ms);
		}
		usleep(50000);
	}
}

/* Spec C.6: the emulated garbage collector (--controllers all). */
static void
x15_garbage_collection(void **state)
{
	const char *ns = kc_new_ns();
	const char *ref = "\"ownerReferences\":[{\"apiVersion\":\"v1\","
	                  "\"kind\":\"ConfigMap\",\"name\":\"%s\","
	                  "\"uid\":\"%s\",\"controller\":true}]";
	json_object *o1, *o2, *d;

	(void)state;
	o1 = kc_mk_cm(ns, "owner1", NULL);
	kc_mk_cm(ns, "dep1",
	        kc_fmt(ref, "owner1", kc_str_at(o1, "metadata.uid")));
	kc_del(200, kc_cm_path(ns, "owner1"), NULL);
	wait_gone_or(kc_cm_path(ns, "dep1"), true, 5000);
	o2 = kc_mk_cm(ns, "owner2", NULL);
	kc_mk_cm(ns, "dep2",
	        kc_fmt(ref, "owner2", kc_str_at(o2, "metadata.uid")));
	kc_del(200, kc_cm_path(ns, "owner2"),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"propagationPolicy\":\"Orphan\"}");
	wait_gone_or(kc_cm_path(ns, "owner2"), true, 5000);
	d = kc_get(200, kc_cm_path(ns, "dep2"));
	assert_null(jx_get(d, "metadata.ownerReferences.0"));
}

/* Spec D.7 (kubectl delete): DeleteOptions in any of three apiVersions. */
static void
x16_delete_options_versions(void **state)
{
	static const char *const av[]
	        = { "v1", "meta.k8s.io/v1", "example.com/v1", NULL };
	const char *ns = kc_new_ns();

	(void)state;
	kc_need_widgets();
	for (int i = 0; av[i] != NULL; i++) {
		const char *n = kc_fmt("d%d", i);

		kc_mk_widget(ns, n, "a", NULL, NULL);
		kc_del(200, kc_w_path(ns, n),
		        kc_fmt("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"%"
		               "s\","
		               "\"propagationPolicy\":\"Background\"}",
		                av[i]));
		kc_get(404, kc_w_path(ns, n));
	}
}

/* Spec A.4: strategic merge patch on a built-in, with kubectl's
 * directives for lists. */
/* Names as the real server validates them per kind: a Service name is a
 * DNS-1035 label (no leading digit, at most 63), a ConfigMap name a
 * subdomain (dots allowed), an RBAC name a path segment (colons allowed,
 * no '/'). */
static void
x18_name_rules(void **state)
{
	const char *ns = kc_new_ns();
	json_object *st;
	const char *svc = kc_fmt("/api/v1/namespaces/%s/services", ns);
	const char *roles = kc_fmt(
	        "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles", ns);
	const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                   "\"metadata\":{\"name\":\"%s\"},\"spec\":{"
	                   "\"ports\":[{\"port\":80}]}}";
	const char *role = "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
	                   "\"kind\":\"Role\",\"metadata\":{\"name\":"
	                   "\"%s\"},\"rules\":[]}";

	(void)state;
	st = kc_post(422, svc, kc_fmt(body, "1svc"));
	kc_check_status(st, 422, "Invalid");
	assert_non_null(strstr(json_object_to_json_string(st),
	        "a DNS-1035 label must consist of lower case alphanumeric"));
	st = kc_post(422, svc, kc_fmt(body, "a.b"));
	kc_check_status(st, 422, "Invalid");
	kc_post(201, svc, kc_fmt(body, "svc-1"));
	/* a dotted ConfigMap name is fine */
	kc_post(201, kc_cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"a.b\"}}");
	kc_post(201, roles, kc_fmt(role, "system:x:y"));
	st = kc_post(422, roles, kc_fmt(role, ".."));
	kc_check_status(st, 422, "Invalid");
	assert_non_null(
	        strstr(json_object_to_json_string(st), "may not be '..'"));
}

static void
x17_smp_builtin(void **state)
{
	const char *ns = kc_new_ns();
	json_object *o;

	(void)state;
	kc_mk_cm(ns, "s", "\"finalizers\":[\"example.com/a\"]");
	o = kc_patch(200, KC_SMP, kc_cm_path(ns, "s"),
	        "{\"metadata\":{\"$setElementOrder/finalizers\":"
	        "[\"example.com/a\",\"example.com/b\"],"
	        "\"finalizers\":[\"example.com/b\"]},"
	        "\"data\":{\"x\":\"1\"}}");
	assert_string_equal(kc_str_at(o, "data.x"), "1");
	assert_true(kc_str_in_array(
	        jx_get(o, "metadata.finalizers"), "example.com/b"));
	assert_null(strstr(json_object_to_json_string(o), "$setElementOrder"));
	o = kc_patch(200, KC_SMP, kc_cm_path(ns, "s"),
	        "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	        "[\"example.com/a\",\"example.com/b\"]}}");
	assert_null(jx_get(o, "metadata.finalizers.0"));
	assert_null(strstr(json_object_to_json_string(o), "$delete"));
}

/* Group fixtures */

static int
group_setup(void **state)
{
	(void)state;
	return (kc_group_start(group_args));
}

static int
group_teardown(void **state)
{
	(void)state;
	return (kc_group_stop());
}

#define T(f) cmocka_unit_test_teardown(f, kc_release)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(g01_discovery_api),
		T(g02_discovery_group_version),
		T(g03_crd_discovery),
		T(g04_crd_bad_name),
		T(g05_crd_delete_cascade),
		T(g06_aggregated_discovery_negotiation),
		T(g07_create_configmap),
		T(g08_create_existing),
		T(g09_get_missing),
		T(g10_generate_name),
		T(g11_create_with_rv),
		T(g12_namespace_mismatch_and_missing),
		T(g13_media_types),
		T(g14_put_stale),
		T(g15_put_current),
		T(g16_put_without_rv),
		T(g17_put_missing),
		T(g18_noop_put),
		T(g19_merge_and_json_patch),
		T(g20_smp_on_cr),
		T(g21_patch_with_rv),
		T(g22_patch_missing_and_apply),
		T(g23_lease_race),
		T(g24_generation),
		T(g25_status_ignored_on_main),
		T(g26_status_subresource_put),
		T(g27_no_status_subresource),
		T(g28_delete_plain),
		T(g29_delete_with_finalizer),
		T(g30_no_new_finalizers),
		T(g31_last_finalizer_removed),
		T(g32_foreground_delete),
		T(g33_delete_precondition),
		T(g34_two_controllers),
		T(g35_list_shape),
		T(g36_label_selector),
		T(g37_bad_label_selector),
		T(g38_field_selector),
		T(g39_pagination),
		T(g40_continue_errors),
		T(g41_list_option_validation),
		T(g42_exact_list),
		T(g43_too_large),
		T(g44_watch_event_order),
		T(g45_watch_start_points),
		T(g46_selector_transitions),
		T(g47_watch_too_old),
		T(g48_watch_timeouts),
		T(g49_bookmarks),
		T(g50_send_initial_events),
		T(g51_watch_one_object),
		T(g52_deleted_after_finalizer),
		T(x01_error_bodies_are_json_status),
		T(x02_unknown_group),
		T(x02b_scope_mismatch),
		T(x06_boolean_params),
		T(x07_body_checks),
		T(x08_field_validation),
		T(x09_table_negotiation),
		T(x10_deprecated_watch_path),
		T(x11_version_and_health),
		T(x12_openapi_stub),
		T(x13_namespace_lifecycle),
		T(x14_lease_rules),
		T(x15_garbage_collection),
		T(x16_delete_options_versions),
		T(x17_smp_builtin),
		T(x18_name_rules),
		T(x03_bearer_token),
		T(x04_tls),
		T(x05_write_kubeconfig),
	};

	/* CONFORMANCE_FILTER=g05* runs only the matching tests. */
	if (getenv("CONFORMANCE_FILTER") != NULL) {
		cmocka_set_test_filter(getenv("CONFORMANCE_FILTER"));
	}
	return (cmocka_run_group_tests(tests, group_setup, group_teardown));
}
