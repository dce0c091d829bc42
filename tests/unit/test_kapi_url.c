/* test_kapi_url.c: URLs, methods, content types and DeleteOptions bodies
 * of kapi_url.c, for every verb and option (no network). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/kapi.h"

static const struct kapi_res cms = { "", "v1", "configmaps", true };
static const struct kapi_res nss = { "", "v1", "namespaces", false };
static const struct kapi_res leases
        = { "coordination.k8s.io", "v1", "leases", true };
static const struct kapi_res crds
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };

static struct kapi_conf conf = { .server = "https://k:6443" };

static void
expect(const struct kapi_req *req, const char *want)
{
	struct buf b = BUF_INIT;
	const char *why = NULL;

	assert_int_equal(kapi_url(&conf, req, &b, &why), 0);
	assert_null(why);
	assert_string_equal(buf_str(&b), want);
	buf_fini(&b);
}

static void
expect_bad(const struct kapi_req *req, const char *why_part)
{
	struct buf b = BUF_INIT;
	const char *why = NULL;

	assert_int_equal(kapi_url(&conf, req, &b, &why), -1);
	assert_non_null(why);
	assert_non_null(strstr(why, why_part));
	buf_fini(&b);
}

static void
test_paths(void **state)
{
	struct kapi_req r
	        = { .verb = KAPI_GET, .res = &cms, .ns = "ns1", .name = "a" };

	(void)state;
	expect(&r, "https://k:6443/api/v1/namespaces/ns1/configmaps/a");
	r.res = &leases;
	expect(&r,
	        "https://k:6443/apis/coordination.k8s.io/v1/namespaces/"
	        "ns1/leases/a");
	r = (struct kapi_req) { .verb = KAPI_GET, .res = &nss, .name = "x" };
	expect(&r, "https://k:6443/api/v1/namespaces/x");
	r.res = &crds;
	r.name = "widgets.example.com";
	expect(&r,
	        "https://k:6443/apis/apiextensions.k8s.io/v1/"
	        "customresourcedefinitions/widgets.example.com");
	r = (struct kapi_req) { .verb = KAPI_LIST, .res = &cms, .ns = "n" };
	expect(&r, "https://k:6443/api/v1/namespaces/n/configmaps");
	r.ns = NULL;
	expect(&r, "https://k:6443/api/v1/configmaps");
	r = (struct kapi_req) {
		.verb = KAPI_CREATE, .res = &leases, .ns = "n"
	};
	expect(&r,
	        "https://k:6443/apis/coordination.k8s.io/v1/namespaces/n/"
	        "leases");
	r = (struct kapi_req) { .verb = KAPI_UPDATE,
		.res = &cms,
		.ns = "n",
		.name = "a",
		.subresource = "status" };
	expect(&r, "https://k:6443/api/v1/namespaces/n/configmaps/a/status");
	r.verb = KAPI_PATCH;
	expect(&r, "https://k:6443/api/v1/namespaces/n/configmaps/a/status");
	r = (struct kapi_req) {
		.verb = KAPI_DELETE, .res = &nss, .name = "x"
	};
	expect(&r, "https://k:6443/api/v1/namespaces/x");
}

static void
test_list_options(void **state)
{
	struct kapi_req r = { .verb = KAPI_LIST, .res = &cms, .ns = "n" };

	(void)state;
	r.list.label_selector = "app=web,tier!=db,env in (a, b),!legacy";
	r.list.field_selector = "metadata.name=x,status.phase!=Running";
	r.list.resource_version = "123";
	r.list.resource_version_match = "NotOlderThan";
	r.list.limit = 50;
	r.list.cont = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTB9+/=";
	r.list.timeout_seconds = 30;
	r.list.allow_watch_bookmarks = true; /* watch only: not sent */
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/configmaps"
	        "?labelSelector=app%3Dweb%2Ctier%21%3Ddb%2Cenv%20in%20%28a"
	        "%2C%20b%29%2C%21legacy"
	        "&fieldSelector=metadata.name%3Dx%2Cstatus.phase%21%3D"
	        "Running"
	        "&resourceVersion=123&resourceVersionMatch=NotOlderThan"
	        "&limit=50"
	        "&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTB9%2B%2F%3D"
	        "&timeoutSeconds=30");
}

static void
test_watch_options(void **state)
{
	struct kapi_req r = { .verb = KAPI_WATCH, .res = &leases };

	(void)state;
	expect(&r,
	        "https://k:6443/apis/coordination.k8s.io/v1/leases"
	        "?watch=true");
	r.ns = "kube-system";
	r.list.resource_version = "77";
	r.list.label_selector = "a=b";
	r.list.allow_watch_bookmarks = true;
	r.list.timeout_seconds = 300;
	r.list.limit = 10;   /* never on a watch */
	r.list.cont = "zzz"; /* never on a watch */
	expect(&r,
	        "https://k:6443/apis/coordination.k8s.io/v1/namespaces/"
	        "kube-system/leases?watch=true&labelSelector=a%3Db"
	        "&resourceVersion=77&allowWatchBookmarks=true"
	        "&timeoutSeconds=300");
	r = (struct kapi_req) {
		.verb = KAPI_WATCH, .res = &cms, .ns = "n", .name = "one"
	};
	r.list.send_initial_events = true;
	r.list.resource_version_match = "NotOlderThan";
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/configmaps/one"
	        "?watch=true&resourceVersionMatch=NotOlderThan"
	        "&sendInitialEvents=true");
}

static void
test_write_options(void **state)
{
	struct kapi_req r = { .verb = KAPI_CREATE,
		.res = &cms,
		.ns = "n",
		.dry_run = true,
		.field_manager = "sympozium op" };

	(void)state;
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/configmaps"
	        "?dryRun=All&fieldManager=sympozium%20op");
	assert_string_equal(kapi_method(r.verb), "POST");
	assert_string_equal(kapi_content_type(&r), "application/json");
	r = (struct kapi_req) { .verb = KAPI_PATCH,
		.res = &cms,
		.ns = "n",
		.name = "a",
		.patch_type = KAPI_PATCH_APPLY,
		.field_manager = "op",
		.force = true };
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/configmaps/a"
	        "?fieldManager=op&force=true");
	assert_string_equal(kapi_method(r.verb), "PATCH");
	assert_string_equal(
	        kapi_content_type(&r), "application/apply-patch+yaml");
	r.patch_type = KAPI_PATCH_MERGE; /* force only for apply */
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/configmaps/a"
	        "?fieldManager=op");
	assert_string_equal(
	        kapi_content_type(&r), "application/merge-patch+json");
	r.patch_type = KAPI_PATCH_JSON;
	assert_string_equal(
	        kapi_content_type(&r), "application/json-patch+json");
	r.patch_type = KAPI_PATCH_STRATEGIC;
	assert_string_equal(kapi_content_type(&r),
	        "application/strategic-merge-patch+json");
	r.verb = KAPI_UPDATE;
	assert_string_equal(kapi_method(r.verb), "PUT");
	r.verb = KAPI_GET;
	assert_null(kapi_content_type(&r));
	r.list.resource_version = "0";
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/configmaps/a"
	        "?resourceVersion=0");
	assert_string_equal(kapi_method(KAPI_WATCH), "GET");
	assert_string_equal(kapi_method(KAPI_LOG), "GET");
	assert_string_equal(kapi_method(KAPI_DELETE), "DELETE");
}

static void
test_log(void **state)
{
	struct kapi_req r = { .verb = KAPI_LOG, .ns = "n", .name = "p-1" };

	(void)state;
	expect(&r, "https://k:6443/api/v1/namespaces/n/pods/p-1/log");
	r.log.container = "main";
	r.log.tail_lines = 100;
	r.log.previous = true;
	r.log.timestamps = true;
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/pods/p-1/log"
	        "?container=main&tailLines=100&previous=true"
	        "&timestamps=true");
	r.res = &kapi_res_pods;
	r.log.previous = false;
	r.log.timestamps = false;
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/pods/p-1/log"
	        "?container=main&tailLines=100");
	r.log.limit_bytes = 4194304;
	expect(&r,
	        "https://k:6443/api/v1/namespaces/n/pods/p-1/log"
	        "?container=main&tailLines=100&limitBytes=4194304");
}

static void
test_escaping_of_path(void **state)
{
	struct kapi_req r = {
		.verb = KAPI_GET, .res = &cms, .ns = "a b", .name = "x y?"
	};
	struct buf b = BUF_INIT;

	(void)state;
	expect(&r,
	        "https://k:6443/api/v1/namespaces/a%20b/configmaps/"
	        "x%20y%3F");
	r.name = "a..b";
	expect(&r, "https://k:6443/api/v1/namespaces/a%20b/configmaps/a..b");
	kapi_escape(&b, "AZaz09-._~ é&#");
	assert_string_equal(buf_str(&b), "AZaz09-._~%20%C3%A9%26%23");
	buf_fini(&b);
}

static void
test_bad_combinations(void **state)
{
	struct kapi_req r = { .verb = KAPI_GET, .res = &cms, .name = "a" };

	(void)state;
	expect_bad(&r, "namespace required");
	r = (struct kapi_req) {
		.verb = KAPI_GET, .res = &nss, .ns = "n", .name = "a"
	};
	expect_bad(&r, "cluster-scoped");
	r = (struct kapi_req) { .verb = KAPI_GET, .res = &cms, .ns = "n" };
	expect_bad(&r, "name required");
	r = (struct kapi_req) {
		.verb = KAPI_CREATE, .res = &cms, .ns = "n", .name = "a"
	};
	expect_bad(&r, "collection");
	r = (struct kapi_req) { .verb = KAPI_LIST,
		.res = &cms,
		.ns = "n",
		.subresource = "status" };
	expect_bad(&r, "subresource");
	r = (struct kapi_req) { .verb = KAPI_GET, .ns = "n", .name = "a" };
	expect_bad(&r, "no resource");
	r = (struct kapi_req) { .verb = (enum kapi_verb)42, .res = &cms };
	expect_bad(&r, "verb");
	r = (struct kapi_req) { .verb = KAPI_PATCH,
		.res = &cms,
		.ns = "n",
		.name = "a",
		.patch_type = (enum kapi_patch)9 };
	expect_bad(&r, "patch type");
	r = (struct kapi_req) { .verb = KAPI_LOG, .ns = "n" };
	expect_bad(&r, "name required");
}

/* Names and namespaces that would change the path once the server (or
 * a client) reads it are refused, for every verb, before any URL. */
static void
test_bad_segments(void **state)
{
	static const char *const bad[] = { ".", "..", "a/b", "../kube-system",
		"/", "%2e%2e", "a%2Fb", "a\nb", "a\x7f" };
	static const struct kapi_res dotdot = { "", "v1", "..", true };
	static const struct kapi_res slash = { "a/b", "v1", "x", true };
	struct kapi_req r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = (struct kapi_req) { .verb = KAPI_DELETE,
			.res = &cms,
			.ns = "n",
			.name = bad[i] };
		expect_bad(&r, "name is not a valid path segment");
		r.verb = KAPI_GET;
		expect_bad(&r, "name is not a valid path segment");
		r.name = "a";
		r.ns = bad[i];
		expect_bad(&r, "namespace is not a valid path segment");
		r = (struct kapi_req) {
			.verb = KAPI_LIST, .res = &cms, .ns = bad[i]
		};
		expect_bad(&r, "namespace is not a valid path segment");
		r = (struct kapi_req) {
			.verb = KAPI_DELETE, .res = &nss, .name = bad[i]
		};
		expect_bad(&r, "name is not a valid path segment");
	}
	r = (struct kapi_req) { .verb = KAPI_UPDATE,
		.res = &cms,
		.ns = "n",
		.name = "a",
		.subresource = ".." };
	expect_bad(&r, "subresource");
	r.subresource = "";
	expect_bad(&r, "subresource");
	r = (struct kapi_req) {
		.verb = KAPI_GET, .res = &dotdot, .ns = "n", .name = "a"
	};
	expect_bad(&r, "resource is not a valid path segment");
	r.res = &slash;
	expect_bad(&r, "resource is not a valid path segment");
	r = (struct kapi_req) {
		.verb = KAPI_DELETE, .res = &cms, .ns = "", .name = "a"
	};
	expect_bad(&r, "namespace required");
	r = (struct kapi_req) {
		.verb = KAPI_DELETE, .res = &cms, .ns = "n", .name = ""
	};
	expect_bad(&r, "name required");
}

static void
test_delete_body(void **state)
{
	struct kapi_req r
	        = { .verb = KAPI_DELETE, .res = &cms, .ns = "n", .name = "a" };
	struct buf b = BUF_INIT;

	(void)state;
	assert_int_equal(kapi_delete_body(&r, &b), -1);
	assert_int_equal(b.len, 0);
	r.del.propagation_policy = "Foreground";
	r.del.precondition_uid = "u-1";
	r.del.precondition_rv = "42";
	r.del.grace_period_set = true;
	r.del.grace_period_seconds = 0;
	r.dry_run = true;
	assert_int_equal(kapi_delete_body(&r, &b), 0);
	assert_string_equal(buf_str(&b),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"propagationPolicy\":\"Foreground\",\"gracePeriodSeconds\":"
	        "0,"
	        "\"dryRun\":[\"All\"],"
	        "\"preconditions\":{\"uid\":\"u-1\",\"resourceVersion\":"
	        "\"42\"}}");
	buf_reset(&b);
	r = (struct kapi_req) { .verb = KAPI_DELETE };
	r.del.precondition_rv = "a\"b";
	assert_int_equal(kapi_delete_body(&r, &b), 0);
	assert_string_equal(buf_str(&b),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"preconditions\":{\"resourceVersion\":\"a\\\"b\"}}");
	buf_fini(&b);
	/* No query parameters on DELETE: the body carries them. */
	r = (struct kapi_req) { .verb = KAPI_DELETE,
		.res = &cms,
		.ns = "n",
		.name = "a",
		.dry_run = true };
	expect(&r, "https://k:6443/api/v1/namespaces/n/configmaps/a");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_list_options),
		cmocka_unit_test(test_watch_options),
		cmocka_unit_test(test_write_options),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_escaping_of_path),
		cmocka_unit_test(test_bad_combinations),
		cmocka_unit_test(test_bad_segments),
		cmocka_unit_test(test_delete_body),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
