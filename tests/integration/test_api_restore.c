/*
 * test_api_restore.c: the API server restored from a backup (issue 13,
 * item 4).  The whole operator (leader election on) converges on kubesim;
 * the test then pushes the store's resourceVersion well past what the
 * restored server will reach, stops kubesim and, DOWN_MS later, starts it
 * again EMPTY on the same address (ksim_api_restart()), and re-applies
 * what a backup holds: the CRDs and the sympozium objects (not their
 * children).  Every resourceVersion the supervisor's caches saw is now
 * newer than the server's: its relists from those RVs are answered 504
 * Timeout with cause ResourceVersionTooLarge (and a watch from one waits
 * silently, as a real server's does).  Required within RESTORE_MS: the
 * re-applied objects' children are recreated and owned by the new
 * objects, a SkillPack created after the restore gets its ConfigMap, the
 * supervisor holds a Lease on the new server, and its caches relisted
 * with a consistent read (LIST without resourceVersion).
 *
 * Every wait is bounded.  Only the processes this test started are
 * signalled.
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
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/testutil.h"

#define WAIT_MS    15000
#define RESTORE_MS 40000 /* convergence after the restore */
#define NS         "default"
#define UA_SD      "sympoziumd"
#define GROUP      "sympozium.ai"
#define VERSION    "v1alpha1"
#define BUMPS      300 /* writes that push the old server's RV up */
/* The server is away longer than the client's reconnect attempts (kapi.h:
 * 100, 200, 400 ms), as a restore takes: the watches fail for want of a
 * connection, and the reflectors relist (reflector.h REFL_LOST). */
#define DOWN_MS 1500

static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_LEASE
        = { "coordination.k8s.io", "v1", "leases", true };
static const struct kapi_res R_SKP = { GROUP, VERSION, "skillpacks", true };
static const struct kapi_res R_MCP = { GROUP, VERSION, "mcpservers", true };

static struct optest F;

/* Bookmarks every second: every watch soon knows the server's RV, so
 * after the restore each one is ahead of the server (a kind without
 * events would otherwise keep the RV of its last change, which the
 * restored server may pass before the supervisor reconnects). */
static const char *const KSIM_ARGS[] = { "--bookmark-interval", "1s", NULL };

static int
setup(void **state)
{
	static const char *const le[] = { "--leader-elect",
		"--leader-election-namespace", NS, NULL };

	*state = &F;
	if (optest_start(&F, "test-restore", KSIM_ARGS, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	optest_sd_start(&F, 0, 0, le);
	return (0);
}

/* Creates obj (taken) in NS; fails the test on an error. */
static void
create(const struct kapi_res *r, json_object *obj)
{
	optest_create_or_fail(&F, r, NS, obj, NULL);
	json_object_put(obj);
}

static json_object *
skillpack(const char *name)
{
	return (testutil_jsonf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SkillPack\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
	        "\"skills\":[{\"name\":\"one\",\"content\":\"Use one.\"}]}}",
	        name));
}

static json_object *
mcpserver(const char *name)
{
	return (testutil_jsonf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"MCPServer\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
	        "\"transportType\":\"http\",\"toolsPrefix\":\"t\","
	        "\"deployment\":{\"image\":\"img:1\",\"port\":9000}}}",
	        name));
}

/* What a backup holds of the test's objects. */
static void
apply_objects(void)
{
	create(&R_SKP, skillpack("before"));
	create(&R_MCP, mcpserver("mcp"));
}

static char *
uid_of(const struct kapi_res *r, const char *name)
{
	json_object *o = optest_get(&F, r, NS, name);
	char *uid;

	assert_non_null(o);
	uid = xstrdup(jx_get_str(o, "metadata.uid") ?: "");
	json_object_put(o);
	return (uid);
}

/* Waits for child r NS/name owned by kind/name (its uid now). */
static void
wait_child(const struct kapi_res *r, const char *name, const char *kind,
        const struct kapi_res *owner_res, const char *owner)
{
	char *uid = uid_of(owner_res, owner);
	struct optest_owner own = { kind, owner, uid };

	optest_wait_obj(&F, r, NS, name, optest_check_owner, &own);
	free(uid);
}

static void
wait_converged(void)
{
	wait_child(&R_CM, "before", "SkillPack", &R_SKP, "before");
	wait_child(&R_DEP, "mcp", "MCPServer", &R_MCP, "mcp");
	wait_child(&R_SVC, "mcp", "MCPServer", &R_MCP, "mcp");
}

/* BUMPS writes to one ConfigMap: the old server's RV ends far above
 * anything the restored one reaches during the test. */
static void
bump_rv(void)
{
	char patch[96];

	create(&R_CM,
	        testutil_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                      "\"metadata\":{\"name\":\"bump\"}}",
	                0));
	for (int i = 0; i < BUMPS; i++) {
		snprintf(patch, sizeof(patch), "{\"data\":{\"n\":\"%d\"}}", i);
		assert_int_equal(
		        kapi_patch(F.a.c, &R_CM, NS, "bump", KAPI_PATCH_MERGE,
		                patch, NULL, false, NULL, NULL),
		        KAPI_OK);
	}
}

/* The server's current RV, as a list reports it. */
static long long
server_rv(void)
{
	json_object *list = NULL;
	long long rv;

	assert_int_equal(
	        kapi_list(F.a.c, &R_CM, NS, NULL, &list, NULL), KAPI_OK);
	rv = atoll(jx_get_str(list, "metadata.resourceVersion") ?: "0");
	json_object_put(list);
	return (rv);
}

static const char *
check_held(json_object *o, const void *arg)
{
	const char *h = jx_get_str(o, "spec.holderIdentity");

	(void)arg;
	return (h != NULL && h[0] != '\0' ? NULL : "no holderIdentity");
}

/* The supervisor's LISTs of path without resourceVersion. */
static int
count_consistent_lists(const char *path)
{
	char *text = testutil_read_file(F.a.request_log, NULL);
	int n = 0;

	assert_non_null(text);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		json_object *o = testutil_json(l, 0);
		const char *q = jx_get_str(o, "query");
		n += o != NULL
		        && strcmp(jx_get_str(o, "verb") ?: "", "list") == 0
		        && strstr(jx_get_str(o, "path") ?: "", path) != NULL
		        && strstr(jx_get_str(o, "userAgent") ?: "", UA_SD)
		                != NULL
		        && q != NULL && strstr(q, "resourceVersion=") == NULL;
		json_object_put(o);
	}
	free(text);
	return (n);
}

static void
test_restore(void **state)
{
	long long old_rv, new_rv;
	int64_t t0;
	int consistent;

	(void)state;
	apply_objects();
	wait_converged();
	bump_rv();
	old_rv = server_rv();
	ksim_sleep_ms(2500); /* a bookmark for every watch */

	/* the restore: an empty server on the same address, then what the
	 * backup holds */
	t0 = ksim_now_ms();
	assert_int_equal(ksim_api_restart(&F.a, DOWN_MS, KSIM_ARGS), 0);
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	apply_objects();
	new_rv = server_rv();
	assert_true(new_rv < old_rv - BUMPS / 2);

	F.wait_ms = RESTORE_MS;
	create(&R_SKP, skillpack("after"));
	wait_child(&R_CM, "after", "SkillPack", &R_SKP, "after");
	wait_converged();
	fprintf(stderr,
	        "restore: converged %lld ms after the server stopped\n",
	        (long long)(ksim_now_ms() - t0));
	optest_wait_obj(&F, &R_LEASE, NS, "sympozium-controller-leader",
	        check_held, NULL);
	/* the caches came back through consistent reads (client-go:
	 * resourceVersion "" after TooLarge), not from the old RVs */
	consistent = count_consistent_lists("/skillpacks");
	if (consistent < 1) {
		sdproc_dump_log(F.sd[0].log);
		fail_msg("no consistent LIST of skillpacks after the restore "
		         "(old RV %lld, new %lld)",
		        old_rv, new_rv);
	}
	assert_int_equal(sdproc_check_sanitizers(F.sd[0].log, false), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restore),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
