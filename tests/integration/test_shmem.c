/*
 * test_shmem.c: a PersonaPack's shared memory server end to end (spec
 * sympozium-controllers.md 3.4; upstream personapack_controller.go
 * reconcileSharedMemory / cleanupSharedMemory at 008266e).  One
 * bin/kubesim (upstream CRDs, its Deployment status loop) and one
 * bin/sympoziumd with the production worker.  A pack with
 * sharedMemory.enabled gets its PVC, Deployment and Service (controlled by
 * it, labelled, the size and image as upstream), and status
 * sharedMemoryReady true (set once the three exist; kubesim also makes
 * the Deployment ready); a converged pack draws no write although its
 * Deployment's status events reach it; a storageSize change updates
 * nothing; a Service deleted by hand is created again (the child watch);
 * sharedMemory disabled, and the pack disabled, remove the three
 * (deleted by the operator) and set sharedMemoryReady false; re-enabling
 * brings them back; deleting the pack removes them, the operator's
 * deletes before the garbage collector's.
 *
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

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/testutil.h"

#define WAIT_MS  12000
#define QUIET_MS 3000
#define UA_SD    "sympoziumd"
#define NS       "shm"
#define DEP      "crew-shared-memory"
#define PVC      "crew-shared-memory-db"
#define PATH_NS  "/namespaces/" NS

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_PVC
        = { "", "v1", "persistentvolumeclaims", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_PACK
        = { "sympozium.ai", "v1alpha1", "personapacks", true };

static struct optest F;

static const struct optest_owner OWNER = { "PersonaPack", "crew", NULL };

static void
merge_patch(const struct kapi_res *r, const char *name, const char *patch)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_patch(F.a.c, r, NS, name, KAPI_PATCH_MERGE, patch, NULL,
	            false, NULL, &e)
	        != KAPI_OK) {
		fail_msg("patch %s %s: %s", r->plural, name, e.message ?: "");
	}
	kapi_err_fini(&e);
}

static int
sd_count(const char *verb, const char *frag)
{
	int n = ksim_count_log(F.a.request_log, verb, frag, UA_SD);

	assert_true(n >= 0);
	return (n);
}

/* ---- checks ---- */

/* Labelled component=shared-memory and persona-pack=crew, controlled by
 * the pack. */
static const char *
check_child(json_object *o, const void *arg)
{
	const char *c, *p;

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	c = json_object_get_string(jx_getv(
	        o, "metadata", "labels", "sympozium.ai/component", NULL));
	p = json_object_get_string(jx_getv(
	        o, "metadata", "labels", "sympozium.ai/persona-pack", NULL));
	if (c == NULL || strcmp(c, "shared-memory") != 0 || p == NULL
	        || strcmp(p, "crew") != 0) {
		return ("labels missing or wrong");
	}
	return (optest_check_owner(o, &OWNER));
}

static const char *
check_ready(json_object *o, const void *arg)
{
	bool want = *(const bool *)arg, got = false;

	if (o == NULL) {
		return ("absent");
	}
	jx_get_bool(o, "status.sharedMemoryReady", &got);
	return (got == want ? NULL : "status.sharedMemoryReady differs");
}

static const char *
check_dep_ready(json_object *o, const void *arg)
{
	int64_t n = 0;

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	jx_get_int(o, "status.readyReplicas", &n);
	return (n == 1 ? NULL : "status.readyReplicas is not 1");
}

/* Present again, after a second POST by the operator. */
static const char *
check_recreated(json_object *o, const void *arg)
{
	if (sd_count("POST", PATH_NS "/services") <= *(const int *)arg) {
		return ("not created again");
	}
	return (check_child(o, NULL));
}

static void
del_obj(const struct kapi_res *r, const char *name)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_delete(F.a.c, r, NS, name, NULL, NULL, &e) != KAPI_OK) {
		fail_msg("delete %s %s: %s", r->plural, name, e.message ?: "");
	}
	kapi_err_fini(&e);
}

static void
wait_three(bool present)
{
	optest_check_fn *fn = present ? check_child : optest_check_absent;

	optest_wait_obj(&F, &R_PVC, NS, PVC, fn, NULL);
	optest_wait_obj(&F, &R_DEP, NS, DEP, fn, NULL);
	optest_wait_obj(&F, &R_SVC, NS, DEP, fn, NULL);
}

static void
wait_ready(bool want)
{
	optest_wait_obj(&F, &R_PACK, NS, "crew", check_ready, &want);
}

static int
setup(void **state)
{
	*state = &F;
	if (optest_start_operator(&F, "test-shmem", WAIT_MS, NULL) != 0) {
		return (-1);
	}
	return (ksim_api_create(&F.a, &R_NS, NULL, NS, NULL) == KAPI_OK ? 0
	                                                                : -1);
}

/* ---- the test ---- */

/* Created as upstream builds them; ready; quiet once converged. */
static void
created(void)
{
	const char *size[2] = { "spec.resources.requests.storage", "2Gi" };
	json_object *d;
	int skip;

	wait_three(true);
	optest_wait_obj(&F, &R_PVC, NS, PVC, optest_check_field, size);
	d = optest_get(&F, &R_DEP, NS, DEP);
	assert_non_null(d);
	assert_string_equal(jx_get_str(json_object_array_get_idx(
	                                       jx_get(d,
	                                               "spec.template.spec."
	                                               "containers"),
	                                       0),
	                            "image"),
	        "ghcr.io/sympozium-ai/sympozium/skill-memory:latest");
	json_object_put(d);
	optest_wait_obj(&F, &R_DEP, NS, DEP, check_dep_ready, NULL);
	wait_ready(true);

	/* converged: nothing more, although the Deployment's status events
	 * reach the pack through its child watch */
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	skip = ksim_log_lines(F.a.request_log);
	ksim_sleep_ms(QUIET_MS);
	assert_int_equal(
	        ksim_writes_after(F.a.request_log, UA_SD, skip, true), 0);
}

static void
test_shared_memory(void **state)
{
	const char *size[2] = { "spec.resources.requests.storage", "2Gi" };
	json_object *pack;
	int skip, posts;

	(void)state;
	pack = testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                      "\"kind\":\"PersonaPack\",\"metadata\":{"
	                      "\"name\":\"crew\"},\"spec\":{\"enabled\":true,"
	                      "\"personas\":[],\"sharedMemory\":{\"enabled\":"
	                      "true,\"storageSize\":\"2Gi\"}}}");
	optest_create_or_fail(&F, &R_PACK, NS, pack, NULL);
	json_object_put(pack);
	created();

	/* a Service deleted by hand comes back: the child watch sees it go */
	posts = sd_count("POST", PATH_NS "/services");
	del_obj(&R_SVC, DEP);
	optest_wait_obj(&F, &R_SVC, NS, DEP, check_recreated, &posts);

	/* create only: a new size is not applied */
	merge_patch(&R_PACK, "crew",
	        "{\"spec\":{\"sharedMemory\":{\"storageSize\":\"9Gi\"}}}");
	ksim_wait_quiet(F.a.request_log, UA_SD, QUIET_MS, WAIT_MS);
	skip = sd_count("PUT", PATH_NS "/persistentvolumeclaims")
	        + sd_count("PATCH", PATH_NS "/persistentvolumeclaims");
	assert_int_equal(skip, 0);
	optest_wait_obj(&F, &R_PVC, NS, PVC, optest_check_field, size);

	/* sharedMemory disabled: the operator deletes the three */
	merge_patch(&R_PACK, "crew",
	        "{\"spec\":{\"sharedMemory\":{\"enabled\":false,"
	        "\"storageSize\":\"2Gi\"}}}");
	wait_three(false);
	wait_ready(false);
	assert_int_equal(sd_count("DELETE", PATH_NS "/services/" DEP), 1);
	assert_int_equal(sd_count("DELETE", PATH_NS "/deployments/" DEP), 1);
	assert_int_equal(
	        sd_count("DELETE", PATH_NS "/persistentvolumeclaims/" PVC), 1);

	/* back on, then the whole pack disabled */
	merge_patch(&R_PACK, "crew",
	        "{\"spec\":{\"sharedMemory\":{\"enabled\":true}}}");
	created();
	merge_patch(&R_PACK, "crew", "{\"spec\":{\"enabled\":false}}");
	wait_three(false);
	wait_ready(false);
	optest_wait_field(&F, &R_PACK, NS, "crew", "status.phase", "Inactive");
	assert_int_equal(sd_count("DELETE", PATH_NS "/deployments/" DEP), 2);

	/* enabled again, then deleted: the operator deletes them first */
	merge_patch(&R_PACK, "crew", "{\"spec\":{\"enabled\":true}}");
	created();
	del_obj(&R_PACK, "crew");
	optest_wait_obj(&F, &R_PACK, NS, "crew", optest_check_absent, NULL);
	wait_three(false);
	assert_int_equal(sd_count("DELETE", PATH_NS "/deployments/" DEP), 3);
	assert_int_equal(sd_count("DELETE", PATH_NS "/services/" DEP), 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_memory),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
