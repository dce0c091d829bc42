/*
 * test_kapi_kubesim.c: our Kubernetes client (common/kapi*.c) against a
 * spawned bin/kubesim ($KUBESIM, via tests/lib/ksim) over TLS with a
 * bearer token, configured from the kubeconfig kubesim writes
 * (kapi_conf_load).  Every verb: get, list (label selector, one page,
 * kapi_list_all), create, update (stale resourceVersion -> KAPI_ECONFLICT),
 * update_status on a sympozium CR (our deploy/ files) with a status
 * subresource, the four patch types, delete (propagation policy, uid and
 * resourceVersion preconditions), a watch through the multi engine decoded
 * with kapi_watch, pods/log from the emulated kubelet, and authentication (401
 * without or with a wrong token, TLS refused without the CA).
 *
 * One server is shared by the group; each test uses its own namespace.
 * Every wait is bounded (WAIT_MS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/kapi_watch.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 10000
#define TOKEN   "kapi-test-token"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SEC = { "", "v1", "secrets", true };
static const struct kapi_res R_DEPLOY = { "apps", "v1", "deployments", true };
static const struct kapi_res R_CRD
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };
static const struct kapi_res R_SKILL
        = { "sympozium.ai", "v1alpha1", "skillpacks", true };

static struct ksim_api A;

/* ---- helpers ---------------------------------------------------------- */

static const char *
str(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

/* Asserts rc == want, printing the error's message otherwise. */
static void
expect_rc(enum kapi_rc rc, enum kapi_rc want, struct kapi_err *err)
{
	if (rc != want) {
		fail_msg("rc %s (code %ld: %s), want %s", kapi_rc_name(rc),
		        err->code, err->message ? err->message : "",
		        kapi_rc_name(want));
	}
}

/* Creates obj (a JSON literal) and frees it; asserts success. */
static void
create_ok(const struct kapi_res *res, const char *ns, json_object *obj)
{
	struct kapi_err err = KAPI_ERR_INIT;

	expect_rc(kapi_create(A.c, res, ns, obj, NULL, &err), KAPI_OK, &err);
	kapi_err_fini(&err);
	json_object_put(obj);
}

static void
make_ns(const char *name)
{
	create_ok(&R_NS, NULL,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	                       "\"metadata\":{\"name\":\"%s\"}}",
	                name));
}

static json_object *
cm(const char *name, const char *labels, const char *data)
{
	return (testutil_jsonf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	        "{\"name\":\"%s\",\"labels\":{%s}},\"data\":{%s}}",
	        name, labels, data));
}

/* GET that must succeed (caller frees). */
static json_object *
get_ok(const struct kapi_res *res, const char *ns, const char *name)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o = NULL;

	expect_rc(kapi_get(A.c, res, ns, name, &o, &err), KAPI_OK, &err);
	kapi_err_fini(&err);
	return (o);
}

static enum kapi_rc
get_rc(const struct kapi_res *res, const char *ns, const char *name)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o = NULL;
	enum kapi_rc rc = kapi_get(A.c, res, ns, name, &o, &err);

	json_object_put(o);
	kapi_err_fini(&err);
	return (rc);
}

static json_object *
patch_ok(const struct kapi_res *res, const char *ns, const char *name,
        enum kapi_patch type, const char *patch, const char *manager)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o = NULL;

	expect_rc(kapi_patch(A.c, res, ns, name, type, patch, manager, false,
	                  &o, &err),
	        KAPI_OK, &err);
	kapi_err_fini(&err);
	return (o);
}

/* Polls GET until path equals want (or the object is gone when want is
 * NULL), within WAIT_MS. */
static void
wait_for(const struct kapi_res *res, const char *ns, const char *name,
        const char *path, const char *want)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o = NULL;
	enum kapi_rc rc;
	bool done;

	for (;;) {
		rc = kapi_get(A.c, res, ns, name, &o, &err);
		done = want == NULL
		        ? rc == KAPI_ENOTFOUND
		        : rc == KAPI_OK && strcmp(str(o, path), want) == 0;
		json_object_put(o);
		o = NULL;
		kapi_err_fini(&err);
		err = (struct kapi_err)KAPI_ERR_INIT;
		if (done) {
			return;
		}
		if (timefmt_now_ms_mono() > end) {
			fail_msg("%s/%s: %s never became %s", res->plural,
			        name, path, want ? want : "gone");
		}
		usleep(20000);
	}
}

/* The first document of one of our deploy/ files (caller frees). */
static json_object *
deploy_doc(const char *rel)
{
	char *path = xasprintf("deploy/%s", rel);
	size_t len;
	char *text = testutil_read_file(path, &len);
	char err[256] = "";
	json_object *all = yamlj_parse_all(text, len, err, sizeof(err));
	json_object *o;

	if (all == NULL || json_object_array_length(all) == 0) {
		fail_msg("%s: no document %s", path, err);
	}
	o = json_object_get(json_object_array_get_idx(all, 0));
	json_object_put(all);
	free(text);
	free(path);
	return (o);
}

/* ---- group setup ------------------------------------------------------ */

static int
group_setup(void **state)
{
	const char *args[] = { "--tls", "--token", TOKEN, NULL };

	*state = &A;
	return (ksim_api_start(&A, args, "test_kapi_kubesim/0", WAIT_MS));
}

/* ---- get, list, create, update ----------------------------------------- */

static void
test_get(void **state)
{
	json_object *o;

	(void)state;
	o = get_ok(&R_NS, NULL, "default");
	assert_string_equal(str(o, "kind"), "Namespace");
	assert_string_equal(str(o, "metadata.name"), "default");
	assert_string_equal(str(o, "apiVersion"), "v1");
	json_object_put(o);
	assert_int_equal(get_rc(&R_NS, NULL, "no-such-ns"), KAPI_ENOTFOUND);
	assert_int_equal(
	        get_rc(&R_CM, "default", "no-such-cm"), KAPI_ENOTFOUND);
}

static void
test_create(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *in, *out = NULL;

	(void)state;
	make_ns("kapi-create");
	in = cm("c1", "\"app\":\"x\"", "\"k\":\"v\"");
	expect_rc(kapi_create(A.c, &R_CM, "kapi-create", in, &out, &err),
	        KAPI_OK, &err);
	assert_string_equal(str(out, "metadata.namespace"), "kapi-create");
	assert_non_null(jx_get_str(out, "metadata.uid"));
	assert_non_null(jx_get_str(out, "metadata.resourceVersion"));
	assert_non_null(jx_get_str(out, "metadata.creationTimestamp"));
	json_object_put(out);
	out = NULL;
	expect_rc(kapi_create(A.c, &R_CM, "kapi-create", in, &out, &err),
	        KAPI_EEXISTS, &err);
	assert_int_equal(err.code, 409);
	assert_string_equal(err.reason, "AlreadyExists");
	assert_null(out);
	kapi_err_fini(&err);
	json_object_put(in);
}

static int
count_items(json_object *list)
{
	return ((int)json_object_array_length(jx_get(list, "items")));
}

static void
test_list_selector_and_pages(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	struct kapi_list_opts o = { .label_selector = "tier=a" };
	json_object *list = NULL, *items = NULL;
	char name[16], *rv = NULL;

	(void)state;
	make_ns("kapi-list");
	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		create_ok(&R_CM, "kapi-list",
		        cm(name, i % 2 ? "\"tier\":\"a\"" : "\"tier\":\"b\"",
		                "\"i\":\"x\""));
	}
	expect_rc(kapi_list(A.c, &R_CM, "kapi-list", &o, &list, &err), KAPI_OK,
	        &err);
	assert_int_equal(count_items(list), 3);
	assert_string_equal(str(list, "kind"), "ConfigMapList");
	json_object_put(list);
	list = NULL;
	o = (struct kapi_list_opts) { .limit = 2 };
	expect_rc(kapi_list(A.c, &R_CM, "kapi-list", &o, &list, &err), KAPI_OK,
	        &err);
	assert_int_equal(count_items(list), 2);
	assert_non_null(jx_get_str(list, "metadata.continue"));
	json_object_put(list);
	expect_rc(
	        kapi_list_all(A.c, &R_CM, "kapi-list", &o, &items, &rv, &err),
	        KAPI_OK, &err);
	assert_int_equal((int)json_object_array_length(items), 7);
	assert_non_null(rv);
	assert_true(rv[0] != '\0');
	json_object_put(items);
	free(rv);
	o.label_selector = "tier!=a";
	expect_rc(
	        kapi_list_all(A.c, &R_CM, "kapi-list", &o, &items, NULL, &err),
	        KAPI_OK, &err);
	assert_int_equal((int)json_object_array_length(items), 4);
	json_object_put(items);
	kapi_err_fini(&err);
}

static void
test_update_conflict(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o, *out = NULL;
	char *stale;

	(void)state;
	make_ns("kapi-update");
	create_ok(&R_CM, "kapi-update", cm("u", "", "\"k\":\"1\""));
	o = get_ok(&R_CM, "kapi-update", "u");
	stale = xstrdup(str(o, "metadata.resourceVersion"));
	jx_set_path(o, "data.k", json_object_new_string("2"));
	expect_rc(kapi_update(A.c, &R_CM, "kapi-update", o, &out, &err),
	        KAPI_OK, &err);
	assert_string_equal(str(out, "data.k"), "2");
	assert_string_not_equal(str(out, "metadata.resourceVersion"), stale);
	json_object_put(out);
	out = NULL;
	/* o still carries the old resourceVersion. */
	jx_set_path(o, "data.k", json_object_new_string("3"));
	expect_rc(kapi_update(A.c, &R_CM, "kapi-update", o, &out, &err),
	        KAPI_ECONFLICT, &err);
	assert_int_equal(err.code, 409);
	assert_string_equal(err.reason, "Conflict");
	assert_null(out);
	json_object_put(o);
	o = get_ok(&R_CM, "kapi-update", "u");
	assert_string_equal(str(o, "data.k"), "2");
	json_object_put(o);
	free(stale);
	kapi_err_fini(&err);
}

/* ---- status subresource on a sympozium CR ----------------------------- */

static void
install_skillpack_crd(void)
{
	json_object *crd = deploy_doc("crds/sympozium.ai_skillpacks.yaml");

	create_ok(&R_CRD, NULL, crd);
	wait_for(&R_CRD, NULL, "skillpacks.sympozium.ai",
	        "status.acceptedNames.kind", "SkillPack");
}

static void
test_update_status(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *sp, *out = NULL;
	int64_t gen = 0;

	(void)state;
	install_skillpack_crd();
	make_ns("kapi-status");
	sp = deploy_doc("samples/skillpack.yaml");
	jx_set_path(sp, "metadata.namespace",
	        json_object_new_string("kapi-status"));
	create_ok(&R_SKILL, "kapi-status", sp);
	sp = get_ok(&R_SKILL, "kapi-status", "demo-skills");
	jx_set_path(sp, "status.phase", json_object_new_string("Ready"));
	jx_set_path(sp, "status.skillCount", json_object_new_int(2));
	jx_set_path(sp, "spec.version", json_object_new_string("9.9.9"));
	expect_rc(kapi_update_status(
	                  A.c, &R_SKILL, "kapi-status", sp, &out, &err),
	        KAPI_OK, &err);
	/* The status endpoint takes status only. */
	assert_string_equal(str(out, "status.phase"), "Ready");
	assert_string_equal(str(out, "spec.version"), "0.1.0");
	assert_int_equal(jx_get_int(out, "metadata.generation", &gen), 0);
	assert_int_equal(gen, 1);
	json_object_put(out);
	out = NULL;
	/* A stale status update conflicts like any other. */
	expect_rc(kapi_update_status(
	                  A.c, &R_SKILL, "kapi-status", sp, &out, &err),
	        KAPI_ECONFLICT, &err);
	json_object_put(sp);
	/* The main resource ignores status. */
	sp = get_ok(&R_SKILL, "kapi-status", "demo-skills");
	jx_set_path(sp, "status.phase", json_object_new_string("Broken"));
	expect_rc(kapi_update(A.c, &R_SKILL, "kapi-status", sp, &out, &err),
	        KAPI_OK, &err);
	assert_string_equal(str(out, "status.phase"), "Ready");
	json_object_put(out);
	json_object_put(sp);
	kapi_err_fini(&err);
}

/* ---- patches ------------------------------------------------------------ */

static void
test_patch_merge(void **state)
{
	json_object *o;

	(void)state;
	make_ns("kapi-merge");
	create_ok(&R_CM, "kapi-merge", cm("m", "\"a\":\"1\"", "\"x\":\"1\""));
	o = patch_ok(&R_CM, "kapi-merge", "m", KAPI_PATCH_MERGE,
	        "{\"metadata\":{\"labels\":{\"a\":null,\"b\":\"2\"}},"
	        "\"data\":{\"y\":\"2\"}}",
	        NULL);
	assert_null(jx_getv(o, "metadata", "labels", "a", NULL));
	assert_string_equal(str(o, "metadata.labels.b"), "2");
	assert_string_equal(str(o, "data.x"), "1");
	assert_string_equal(str(o, "data.y"), "2");
	json_object_put(o);
}

static void
test_patch_json(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o = NULL;

	(void)state;
	make_ns("kapi-jsonp");
	create_ok(&R_CM, "kapi-jsonp", cm("j", "", "\"x\":\"1\",\"y\":\"2\""));
	o = patch_ok(&R_CM, "kapi-jsonp", "j", KAPI_PATCH_JSON,
	        "[{\"op\":\"test\",\"path\":\"/data/x\",\"value\":\"1\"},"
	        "{\"op\":\"replace\",\"path\":\"/data/x\",\"value\":\"9\"},"
	        "{\"op\":\"remove\",\"path\":\"/data/y\"},"
	        "{\"op\":\"add\",\"path\":\"/data/z~1w\",\"value\":\"3\"}]",
	        NULL);
	assert_string_equal(str(o, "data.x"), "9");
	assert_null(jx_get(o, "data.y"));
	assert_string_equal(str(jx_getv(o, "data", "z/w", NULL), ""), "3");
	json_object_put(o);
	o = NULL;
	/* A failed test operation changes nothing. */
	assert_int_not_equal(
	        kapi_patch(A.c, &R_CM, "kapi-jsonp", "j", KAPI_PATCH_JSON,
	                "[{\"op\":\"test\",\"path\":\"/data/x\","
	                "\"value\":\"0\"},{\"op\":\"remove\","
	                "\"path\":\"/data/x\"}]",
	                NULL, false, &o, &err),
	        KAPI_OK);
	assert_null(o);
	o = get_ok(&R_CM, "kapi-jsonp", "j");
	assert_string_equal(str(o, "data.x"), "9");
	json_object_put(o);
	/* As Kubernetes' json-patch: an absent member tests equal to null
	 * (its parent must exist); a present one does not. */
	o = patch_ok(&R_CM, "kapi-jsonp", "j", KAPI_PATCH_JSON,
	        "[{\"op\":\"test\",\"path\":\"/metadata/ownerReferences\","
	        "\"value\":null},"
	        "{\"op\":\"add\",\"path\":\"/data/n\",\"value\":\"1\"}]",
	        NULL);
	assert_string_equal(str(o, "data.n"), "1");
	json_object_put(o);
	o = NULL;
	assert_int_not_equal(
	        kapi_patch(A.c, &R_CM, "kapi-jsonp", "j", KAPI_PATCH_JSON,
	                "[{\"op\":\"test\",\"path\":\"/data/x\","
	                "\"value\":null}]",
	                NULL, false, &o, &err),
	        KAPI_OK);
	assert_null(o);
	assert_int_not_equal(
	        kapi_patch(A.c, &R_CM, "kapi-jsonp", "j", KAPI_PATCH_JSON,
	                "[{\"op\":\"test\",\"path\":\"/nope/x\","
	                "\"value\":null}]",
	                NULL, false, &o, &err),
	        KAPI_OK);
	assert_null(o);
	kapi_err_fini(&err);
}

/* A Secret is stored as the real server stores it: stringData folded
 * into data (base64, over a data key of the same name), type Opaque by
 * default; on update too. */
static void
test_secret_string_data(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o;

	(void)state;
	make_ns("kapi-sec");
	create_ok(&R_SEC, "kapi-sec",
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
	                       "\"metadata\":{\"name\":\"s\"},\"data\":{"
	                       "\"a\":\"eA==\",\"b\":\"eQ==\"},"
	                       "\"stringData\":{\"a\":\"sk-1\"}}"));
	o = get_ok(&R_SEC, "kapi-sec", "s");
	assert_string_equal(str(o, "data.a"), "c2stMQ==");
	assert_string_equal(str(o, "data.b"), "eQ==");
	assert_string_equal(str(o, "type"), "Opaque");
	assert_null(jx_get(o, "stringData"));
	jx_set_path(o, "stringData", testutil_json("{\"c\":\"z\"}", 0));
	jx_set_path(o, "type", json_object_new_string("example.com/x"));
	expect_rc(kapi_update(A.c, &R_SEC, "kapi-sec", o, NULL, &err), KAPI_OK,
	        &err);
	json_object_put(o);
	o = get_ok(&R_SEC, "kapi-sec", "s");
	assert_string_equal(str(o, "data.c"), "eg==");
	assert_string_equal(str(o, "type"), "example.com/x");
	assert_null(jx_get(o, "stringData"));
	json_object_put(o);
	kapi_err_fini(&err);
}

static json_object *
deployment(const char *name)
{
	return (testutil_jsonf(
	        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	        "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"replicas\":1,"
	        "\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},"
	        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"%s\"}},"
	        "\"spec\":{\"containers\":["
	        "{\"name\":\"a\",\"image\":\"img-a:1\"},"
	        "{\"name\":\"b\",\"image\":\"img-b:1\"}]}}}}",
	        name, name, name));
}

/* Strategic merge: containers merge by name (a merge patch would
 * replace the list). */
static void
test_patch_strategic(void **state)
{
	json_object *o, *cs;

	(void)state;
	make_ns("kapi-smp");
	create_ok(&R_DEPLOY, "kapi-smp", deployment("d"));
	o = patch_ok(&R_DEPLOY, "kapi-smp", "d", KAPI_PATCH_STRATEGIC,
	        "{\"spec\":{\"template\":{\"spec\":{\"containers\":"
	        "[{\"name\":\"b\",\"image\":\"img-b:2\"}]}}}}",
	        NULL);
	cs = jx_get(o, "spec.template.spec.containers");
	assert_int_equal((int)json_object_array_length(cs), 2);
	assert_string_equal(
	        str(json_object_array_get_idx(cs, 0), "name"), "a");
	assert_string_equal(
	        str(json_object_array_get_idx(cs, 0), "image"), "img-a:1");
	assert_string_equal(
	        str(json_object_array_get_idx(cs, 1), "image"), "img-b:2");
	json_object_put(o);
	create_ok(&R_CM, "kapi-smp", cm("s", "", "\"x\":\"1\""));
	o = patch_ok(&R_CM, "kapi-smp", "s", KAPI_PATCH_STRATEGIC,
	        "{\"data\":{\"x\":null,\"y\":\"2\"}}", NULL);
	assert_null(jx_get(o, "data.x"));
	assert_string_equal(str(o, "data.y"), "2");
	json_object_put(o);
}

static void
test_patch_strategic_on_cr_refused(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o = NULL;

	(void)state;
	expect_rc(kapi_patch(A.c, &R_SKILL, "kapi-status", "demo-skills",
	                  KAPI_PATCH_STRATEGIC, "{\"spec\":{}}", NULL, false,
	                  &o, &err),
	        KAPI_EBADREQUEST, &err);
	assert_int_equal(err.code, 415);
	assert_null(o);
	kapi_err_fini(&err);
}

/* Server-side apply: creates, then updates, with a field manager. */
static void
test_patch_apply(void **state)
{
	const char *doc = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                  "\"metadata\":{\"name\":\"ap\"},"
	                  "\"data\":{\"k\":\"%s\"}}";
	char body[256];
	json_object *o;

	(void)state;
	make_ns("kapi-apply");
	snprintf(body, sizeof(body), doc, "1");
	o = patch_ok(&R_CM, "kapi-apply", "ap", KAPI_PATCH_APPLY, body,
	        "kapi-test");
	assert_string_equal(str(o, "data.k"), "1");
	assert_non_null(jx_get_str(o, "metadata.uid"));
	json_object_put(o);
	snprintf(body, sizeof(body), doc, "2");
	o = patch_ok(&R_CM, "kapi-apply", "ap", KAPI_PATCH_APPLY, body,
	        "kapi-test");
	assert_string_equal(str(o, "data.k"), "2");
	json_object_put(o);
	o = get_ok(&R_CM, "kapi-apply", "ap");
	assert_string_equal(str(o, "data.k"), "2");
	json_object_put(o);
}

/* ---- delete ------------------------------------------------------------- */

static enum kapi_rc
delete_rc(const char *ns, const char *name, const struct kapi_delete_opts *o,
        json_object **out)
{
	struct kapi_err err = KAPI_ERR_INIT;
	enum kapi_rc rc = kapi_delete(A.c, &R_CM, ns, name, o, out, &err);

	kapi_err_fini(&err);
	return (rc);
}

static void
test_delete_preconditions(void **state)
{
	struct kapi_delete_opts d = { .precondition_uid = "not-the-uid" };
	json_object *o, *out = NULL;
	char *uid, *rv;

	(void)state;
	make_ns("kapi-del");
	create_ok(&R_CM, "kapi-del", cm("p", "", "\"k\":\"1\""));
	o = get_ok(&R_CM, "kapi-del", "p");
	uid = xstrdup(str(o, "metadata.uid"));
	rv = xstrdup(str(o, "metadata.resourceVersion"));
	json_object_put(o);
	assert_int_equal(delete_rc("kapi-del", "p", &d, NULL), KAPI_ECONFLICT);
	json_object_put(patch_ok(&R_CM, "kapi-del", "p", KAPI_PATCH_MERGE,
	        "{\"data\":{\"k\":\"2\"}}", NULL));
	d = (struct kapi_delete_opts) { .precondition_uid = uid,
		.precondition_rv = rv };
	assert_int_equal(delete_rc("kapi-del", "p", &d, NULL), KAPI_ECONFLICT);
	assert_int_equal(get_rc(&R_CM, "kapi-del", "p"), KAPI_OK);
	o = get_ok(&R_CM, "kapi-del", "p");
	d.precondition_rv = str(o, "metadata.resourceVersion");
	d.propagation_policy = "Background";
	assert_int_equal(delete_rc("kapi-del", "p", &d, &out), KAPI_OK);
	assert_non_null(out);
	json_object_put(out);
	json_object_put(o);
	assert_int_equal(get_rc(&R_CM, "kapi-del", "p"), KAPI_ENOTFOUND);
	assert_int_equal(
	        delete_rc("kapi-del", "p", NULL, NULL), KAPI_ENOTFOUND);
	free(uid);
	free(rv);
}

/* An owner ConfigMap and a dependent pointing at it. */
static void
owner_and_dependent(const char *ns, const char *owner, const char *dep)
{
	json_object *o, *d;

	create_ok(&R_CM, ns, cm(owner, "", ""));
	o = get_ok(&R_CM, ns, owner);
	d = cm(dep, "", "");
	jx_set_path(d, "metadata.ownerReferences",
	        testutil_jsonf(
	                "[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                "\"name\":\"%s\",\"uid\":\"%s\"}]",
	                owner, str(o, "metadata.uid")));
	create_ok(&R_CM, ns, d);
	json_object_put(o);
}

static void
test_delete_propagation(void **state)
{
	struct kapi_delete_opts d = { .propagation_policy = "Orphan" };
	json_object *o;

	(void)state;
	make_ns("kapi-prop");
	owner_and_dependent("kapi-prop", "o1", "d1");
	assert_int_equal(delete_rc("kapi-prop", "o1", &d, NULL), KAPI_OK);
	wait_for(&R_CM, "kapi-prop", "o1", NULL, NULL);
	o = get_ok(&R_CM, "kapi-prop", "d1");
	assert_null(jx_get(o, "metadata.ownerReferences"));
	json_object_put(o);

	owner_and_dependent("kapi-prop", "o2", "d2");
	d.propagation_policy = "Background";
	assert_int_equal(delete_rc("kapi-prop", "o2", &d, NULL), KAPI_OK);
	assert_int_equal(get_rc(&R_CM, "kapi-prop", "o2"), KAPI_ENOTFOUND);
	wait_for(&R_CM, "kapi-prop", "d2", NULL, NULL);

	owner_and_dependent("kapi-prop", "o3", "d3");
	d.propagation_policy = "Foreground";
	o = NULL;
	assert_int_equal(delete_rc("kapi-prop", "o3", &d, &o), KAPI_OK);
	assert_non_null(jx_get_str(o, "metadata.deletionTimestamp"));
	assert_string_equal(
	        str(o, "metadata.finalizers.0"), "foregroundDeletion");
	json_object_put(o);
	wait_for(&R_CM, "kapi-prop", "d3", NULL, NULL);
	wait_for(&R_CM, "kapi-prop", "o3", NULL, NULL);
}

/* ---- watch through the multi engine ------------------------------------ */

struct wstate {
	struct kapi_multi *m;
	struct kapi_watch *dec;
	int step;             /* writes done: create, patch, delete */
	enum kapi_rc step_rc; /* first failed write */
	char types[8][16];    /* event types seen for "w" */
	char data[8][8];      /* their data.k */
	int n;
	bool ended;
	char error[128];
};

static void write_next(struct wstate *ws);

static void
write_done(void *arg, struct kapi_resp *resp)
{
	struct wstate *ws = arg;

	if (resp->err.rc != KAPI_OK && ws->step_rc == KAPI_OK) {
		ws->step_rc = resp->err.rc;
		return;
	}
	ws->step++;
	write_next(ws);
}

/* Create, patch, delete ConfigMap "w", each submitted when the previous
 * one is done. */
static void
write_next(struct wstate *ws)
{
	struct kapi_req r = { .res = &R_CM, .ns = "kapi-watch", .name = "w" };

	switch (ws->step) {
	case 0:
		r.verb = KAPI_CREATE;
		r.name = NULL;
		r.body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		         "\"metadata\":{\"name\":\"w\"},\"data\":{\"k\":\"1\"}"
		         "}";
		break;
	case 1:
		r.verb = KAPI_PATCH;
		r.patch_type = KAPI_PATCH_MERGE;
		r.body = "{\"data\":{\"k\":\"2\"}}";
		break;
	case 2:
		r.verb = KAPI_DELETE;
		break;
	default:
		return;
	}
	kapi_multi_submit(ws->m, &r, write_done, ws);
}

static void
watch_data(void *arg, uint64_t id, const char *data, size_t len)
{
	struct wstate *ws = arg;
	struct kapi_watch_event ev;

	(void)id;
	if (kapi_watch_feed(ws->dec, data, len) != 0) {
		snprintf(ws->error, sizeof(ws->error), "%s",
		        kapi_watch_error(ws->dec));
		return;
	}
	while (kapi_watch_next(ws->dec, &ev) == 1) {
		if (ws->n < 8
		        && strcmp(str(ev.object, "metadata.name"), "w") == 0) {
			snprintf(ws->types[ws->n], sizeof(ws->types[0]), "%s",
			        kapi_watch_type_name(ev.type));
			snprintf(ws->data[ws->n], sizeof(ws->data[0]), "%s",
			        str(ev.object, "data.k"));
			ws->n++;
		}
		kapi_watch_event_fini(&ev);
	}
}

static void
watch_done(void *arg, struct kapi_resp *resp)
{
	struct wstate *ws = arg;

	ws->ended = true;
	if (resp->err.rc != KAPI_OK) {
		snprintf(ws->error, sizeof(ws->error), "watch ended: %s %ld",
		        kapi_rc_name(resp->err.rc), resp->code);
	}
}

static char *
list_rv(const char *ns)
{
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *list = NULL;
	char *rv;

	expect_rc(kapi_list(A.c, &R_CM, ns, NULL, &list, &err), KAPI_OK, &err);
	rv = xstrdup(str(list, "metadata.resourceVersion"));
	json_object_put(list);
	kapi_err_fini(&err);
	return (rv);
}

static void
test_watch_multi(void **state)
{
	struct wstate ws = { .dec = kapi_watch_new(0, 0) };
	struct kapi_req r
	        = { .verb = KAPI_WATCH, .res = &R_CM, .ns = "kapi-watch" };
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	char *rv;

	(void)state;
	make_ns("kapi-watch");
	rv = list_rv("kapi-watch");
	r.list.resource_version = rv;
	r.list.timeout_seconds = 20;
	ws.m = kapi_multi_new(A.c);
	assert_true(
	        kapi_multi_watch(ws.m, &r, watch_data, watch_done, &ws) > 0);
	write_next(&ws);
	while (ws.n < 3 && !ws.ended && ws.error[0] == '\0'
	        && timefmt_now_ms_mono() < end) {
		kapi_multi_poll(ws.m, NULL, 0, 200);
		kapi_multi_perform(ws.m);
	}
	kapi_multi_free(ws.m);
	kapi_watch_free(ws.dec);
	free(rv);
	assert_string_equal(ws.error, "");
	assert_int_equal(ws.step_rc, KAPI_OK);
	assert_int_equal(ws.n, 3);
	assert_string_equal(ws.types[0], "ADDED");
	assert_string_equal(ws.data[0], "1");
	assert_string_equal(ws.types[1], "MODIFIED");
	assert_string_equal(ws.data[1], "2");
	assert_string_equal(ws.types[2], "DELETED");
	assert_string_equal(ws.data[2], "2");
}

/* ---- pods/log ----------------------------------------------------------- */

static json_object *
pod(const char *name, const char *annotations)
{
	return (testutil_jsonf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
	        "{\"name\":\"%s\",\"annotations\":{%s}},\"spec\":"
	        "{\"restartPolicy\":\"Never\",\"containers\":"
	        "[{\"name\":\"main\",\"image\":\"busybox\"}]}}",
	        name, annotations));
}

static void
test_log(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	struct kapi_log_opts lo = { .container = "main" };
	char *text = NULL;

	(void)state;
	make_ns("kapi-log");
	create_ok(&kapi_res_pods, "kapi-log",
	        pod("hello",
	                "\"kubesim.sympozium.ai/log\":\"hello\\nworld\\n\","
	                "\"kubesim.sympozium.ai/run-duration\":\"60s\""));
	wait_for(&kapi_res_pods, "kapi-log", "hello", "status.phase",
	        "Running");
	expect_rc(kapi_log(A.c, "kapi-log", "hello", NULL, &text, &err),
	        KAPI_OK, &err);
	assert_string_equal(text, "hello\nworld\n");
	free(text);
	text = NULL;
	lo.tail_lines = 1;
	expect_rc(kapi_log(A.c, "kapi-log", "hello", &lo, &text, &err),
	        KAPI_OK, &err);
	assert_string_equal(text, "world\n");
	free(text);
	text = NULL;
	lo = (struct kapi_log_opts) { .container = "nope" };
	expect_rc(kapi_log(A.c, "kapi-log", "hello", &lo, &text, &err),
	        KAPI_EBADREQUEST, &err);
	assert_int_equal(err.code, 400);
	assert_null(text);
	expect_rc(kapi_log(A.c, "kapi-log", "missing", NULL, &text, &err),
	        KAPI_ENOTFOUND, &err);
	kapi_err_fini(&err);
}

/* A pod still Pending has no log yet: 400 "waiting to start". */
static void
test_log_waiting(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;
	char *text = NULL;

	(void)state;
	make_ns("kapi-logw");
	create_ok(&kapi_res_pods, "kapi-logw",
	        pod("slow", "\"kubesim.sympozium.ai/start-delay\":\"60s\""));
	expect_rc(kapi_log(A.c, "kapi-logw", "slow", NULL, &text, &err),
	        KAPI_EBADREQUEST, &err);
	assert_int_equal(err.code, 400);
	assert_string_equal(err.reason, "BadRequest");
	assert_non_null(strstr(err.message, "is waiting to start"));
	assert_null(text);
	kapi_err_fini(&err);
}

/* ---- authentication and TLS -------------------------------------------- */

/* A GET of namespace default with a modified copy of the configuration. */
static enum kapi_rc
get_with(void (*tweak)(struct kapi_conf *), struct kapi_err *err)
{
	char e[256];
	struct kapi_conf *conf
	        = kapi_conf_load(A.kubeconfig, NULL, e, sizeof(e));
	struct kapi_client *c;
	json_object *o = NULL;
	enum kapi_rc rc;

	assert_non_null(conf);
	tweak(conf);
	c = kapi_client_new(conf, "test_kapi_kubesim/0");
	kapi_client_set_timeout(c, WAIT_MS);
	rc = kapi_get(c, &R_NS, NULL, "default", &o, err);
	json_object_put(o);
	kapi_client_free(c);
	kapi_conf_free(conf);
	return (rc);
}

static void
keep(struct kapi_conf *conf)
{
	(void)conf;
}

static void
no_token(struct kapi_conf *conf)
{
	free(conf->token);
	conf->token = NULL;
}

static void
wrong_token(struct kapi_conf *conf)
{
	free(conf->token);
	conf->token = xstrdup("not-" TOKEN);
}

static void
no_ca(struct kapi_conf *conf)
{
	free(conf->ca_pem);
	conf->ca_pem = NULL;
	conf->ca_len = 0;
}

static void
test_tls_ca_and_token(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;

	(void)state;
	assert_int_equal(strncmp(A.conf->server, "https://127.0.0.1:", 18), 0);
	assert_non_null(A.conf->ca_pem);
	assert_false(A.conf->insecure);
	assert_string_equal(A.conf->token, TOKEN);
	expect_rc(get_with(keep, &err), KAPI_OK, &err);
	/* The server's certificate is not trusted without the CA. */
	expect_rc(get_with(no_ca, &err), KAPI_ETRANSPORT, &err);
	kapi_err_fini(&err);
}

static void
test_unauthorized(void **state)
{
	struct kapi_err err = KAPI_ERR_INIT;

	(void)state;
	expect_rc(get_with(no_token, &err), KAPI_EUNAUTHORIZED, &err);
	assert_int_equal(err.code, 401);
	expect_rc(get_with(wrong_token, &err), KAPI_EUNAUTHORIZED, &err);
	assert_int_equal(err.code, 401);
	kapi_err_fini(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_list_selector_and_pages),
		cmocka_unit_test(test_update_conflict),
		cmocka_unit_test(test_update_status),
		cmocka_unit_test(test_patch_merge),
		cmocka_unit_test(test_patch_json),
		cmocka_unit_test(test_secret_string_data),
		cmocka_unit_test(test_patch_strategic),
		cmocka_unit_test(test_patch_strategic_on_cr_refused),
		cmocka_unit_test(test_patch_apply),
		cmocka_unit_test(test_delete_preconditions),
		cmocka_unit_test(test_delete_propagation),
		cmocka_unit_test(test_watch_multi),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_log_waiting),
		cmocka_unit_test(test_tls_ca_and_token),
		cmocka_unit_test(test_unauthorized),
	};

	return (cmocka_run_group_tests(tests, group_setup, ksim_api_teardown));
}
