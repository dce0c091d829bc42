/*
 * test_viewpolicy.c: the view policy (supervisor/vpolicy.h) end to end:
 * bin/tests/sympoziumd-test with the test controller testctl against
 * bin/kubesim.  A view of another namespace, a get of a Secret, a log of
 * a pod that is not the key's own and a reconcile over its view budget
 * are refused with a log line naming the rule, and kubesim's request
 * log shows that no such request reached the API server; the metadata
 * view of a Secret made with kubectl apply carries none of its values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "supervisor/vpolicy.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/workers/testctl.h"

#define UA      "sympoziumd/0.1 "
#define LEADING "leading (epoch"
#define WAIT_MS 20000
/* test_view_budget's reconcile makes VPOL_VIEWS_MAX live GETs one after
 * another: seconds on a loaded 2-core machine, so a wider bound. */
#define BUDGET_WAIT_MS 90000

static const struct kapi_res configmaps = CONTRACT_RES_CONFIGMAPS;
static const struct kapi_res secrets = CONTRACT_RES_SECRETS;
static const struct kapi_res pods = CONTRACT_RES_PODS;

static void
create_json(struct optest *f, const struct kapi_res *r, const char *ns,
        const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	optest_create_or_fail(f, r, ns, o, NULL);
	json_object_put(o);
}

/* Starts the supervisor with testctl and waits until it leads. */
static void
start(struct optest *f)
{
	optest_sd_start(f, 0, OPTEST_SD_TESTCTL, NULL);
	assert_true(sdproc_log_wait(&f->sd[0], LEADING, 1, WAIT_MS));
}

/* The supervisor's requests whose path holds frag. */
static int
gets(struct optest *f, const char *frag)
{
	return (ksim_count_log(f->a.request_log, "GET", frag, UA));
}

/* Waits for "key default/<name>: view refused: policy: <rule>". */
static void
wait_refused_ms(
        struct optest *f, const char *name, const char *rule, int wait_ms)
{
	char line[256];

	snprintf(line, sizeof(line),
	        "key default/%s: view refused: policy: %s:", name, rule);
	if (!sdproc_log_wait(&f->sd[0], line, 1, wait_ms)) {
		sdproc_dump_log(f->sd[0].log);
		fail_msg("no \"%s\"", line);
	}
}

static void
wait_refused(struct optest *f, const char *name, const char *rule)
{
	wait_refused_ms(f, name, rule, WAIT_MS);
}

/* A view of another namespace is refused, never asked; one of the key's
 * namespace is answered. */
static void
test_other_namespace(void **state)
{
	struct optest *f = *state;
	json_object *data = NULL;

	create_json(f, &configmaps, "kube-system",
	        "{\"metadata\":{\"name\":\"victim\"},"
	        "\"data\":{\"k\":\"stolen\"}}");
	create_json(f, &configmaps, "default",
	        "{\"metadata\":{\"name\":\"mine\"},\"data\":{\"k\":\"v\"}}");
	start(f);
	optest_testctl_create(f, "own", true, "view:default/mine");
	optest_testctl_create(f, "cross", true, "view:kube-system/victim");
	assert_true(optest_testctl_wait_out(f, "own", WAIT_MS, &data));
	assert_string_equal(jx_get_str(data, "k"), "v");
	json_object_put(data);
	wait_refused(f, "cross", "view-namespace");
	assert_int_equal(gets(f, "/namespaces/kube-system/configmaps"), 0);
	assert_true(gets(f, "/namespaces/default/configmaps/mine") >= 1);
	assert_false(optest_testctl_has_out(f, "cross"));
}

/* A Secret is never read whole, even of the key's namespace. */
static void
test_secret_get(void **state)
{
	struct optest *f = *state;

	create_json(f, &secrets, "default",
	        "{\"metadata\":{\"name\":\"s1\"},"
	        "\"data\":{\"token\":\"c2VjcmV0\"}}");
	start(f);
	optest_testctl_create(f, "sget", true, "get:secrets:default/s1");
	wait_refused(f, "sget", "view-secret");
	assert_int_equal(gets(f, "/secrets"), 0);
	assert_false(optest_testctl_has_out(f, "sget"));
}

/* kubectl apply puts a Secret's values into an annotation: the metadata
 * view strips annotations and managedFields, and holds key names only. */
static void
test_secret_meta_stripped(void **state)
{
	struct optest *f = *state;
	json_object *data = NULL, *meta;

	create_json(f, &secrets, "default",
	        "{\"metadata\":{\"name\":\"applied\",\"labels\":{\"a\":\"b\"},"
	        "\"annotations\":{\"kubectl.kubernetes.io/"
	        "last-applied-configuration\":\"{\\\"data\\\":{\\\"token\\\":"
	        "\\\"dmFsdWUtb2YtdGhlLXRva2Vu\\\"}}\"}},"
	        "\"data\":{\"token\":\"dmFsdWUtb2YtdGhlLXRva2Vu\"}}");
	start(f);
	optest_testctl_create(f, "smeta", true, "secret:applied");
	assert_true(optest_testctl_wait_out(f, "smeta", WAIT_MS, &data));
	assert_non_null(jx_get_str(data, "meta"));
	assert_null(
	        strstr(jx_get_str(data, "meta"), "dmFsdWUtb2YtdGhlLXRva2Vu"));
	meta = json_tokener_parse(jx_get_str(data, "meta"));
	assert_non_null(meta);
	assert_null(jx_get(meta, "metadata.annotations"));
	assert_null(jx_get(meta, "metadata.managedFields"));
	assert_null(jx_get(meta, "data"));
	assert_string_equal(jx_get_str(meta, "metadata.name"), "applied");
	assert_string_equal(jx_get_str(meta, "metadata.labels.a"), "b");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
	                            jx_get(meta, "keys"), 0)),
	        "token");
	json_object_put(meta);
	json_object_put(data);
	/* nor in the supervisor's log */
	assert_int_equal(
	        sdproc_log_count(f->sd[0].log, "dmFsdWUtb2YtdGhlLXRva2Vu"), 0);
}

/* A pod's log only of the key's own pod (labelled with its name). */
static void
test_pod_log_own_only(void **state)
{
	struct optest *f = *state;
	json_object *data = NULL;

	create_json(f, &pods, "default",
	        "{\"metadata\":{\"name\":\"mine\",\"labels\":{"
	        "\"" TESTCTL_LABEL_RUN
	        "\":\"lmine\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
	        "\"image\":\"x\"}]}}");
	create_json(f, &pods, "default",
	        "{\"metadata\":{\"name\":\"theirs\",\"labels\":{"
	        "\"" TESTCTL_LABEL_RUN "\":\"other\"}},\"spec\":{"
	        "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
	start(f);
	optest_testctl_create(f, "lmine", true, "log:mine");
	optest_testctl_create(f, "ltheirs", true, "log:theirs");
	assert_true(optest_testctl_wait_out(f, "lmine", WAIT_MS, &data));
	json_object_put(data);
	wait_refused(f, "ltheirs", "view-own");
	/* its pod was read, then its log asked (with limitBytes) */
	assert_true(gets(f, "/namespaces/default/pods/mine/log") >= 1);
	assert_int_equal(gets(f, "/pods/theirs/log"), 0);
}

/* The refusals of the view budget for key default/name. */
static int
budget_refusals(struct optest *f, const char *name)
{
	char line[128];

	snprintf(line, sizeof(line),
	        "key default/%s: view refused: policy: view-budget:", name);
	return (sdproc_log_count(f->sd[0].log, line));
}

/* One reconcile's views stop at its budget: each of the first
 * VPOL_VIEWS_MAX is a live GET, none after.  testctl ends the reconcile
 * for good at the first refusal: one reconcile, VPOL_VIEWS_MAX GETs.  A
 * supervisor that also retries the key (after killing the worker) makes
 * VPOL_VIEWS_MAX GETs per refusal, one reconcile at most under way. */
static void
test_view_budget(void **state)
{
	struct optest *f = *state;
	char action[32];
	int before, n, after;

	start(f);
	snprintf(action, sizeof(action), "views:%d", VPOL_VIEWS_MAX + 1000);
	optest_testctl_create(f, "b", true, action);
	wait_refused_ms(f, "b", "view-budget", BUDGET_WAIT_MS);
	ksim_sleep_ms(500);
	before = budget_refusals(f, "b");
	n = gets(f, "/namespaces/default/configmaps/b-none");
	after = budget_refusals(f, "b");
	if (n < VPOL_VIEWS_MAX * before || n > VPOL_VIEWS_MAX * (after + 1)) {
		fail_msg("%d GETs for %d..%d refusals", n, before, after);
	}
	if (after == 1) {
		assert_int_equal(n, VPOL_VIEWS_MAX);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_other_namespace,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_secret_get,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_secret_meta_stripped,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_pod_log_own_only,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_view_budget,
		        optest_testctl_setup, optest_testctl_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
