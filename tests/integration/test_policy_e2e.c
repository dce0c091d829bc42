/*
 * test_policy_e2e.c: the SympoziumPolicy controller end to end: one
 * bin/kubesim (our CRDs) and one bin/sympoziumd with the production
 * worker.  An instance whose spec.policyRef names a policy makes the
 * policy's status.boundInstances 1; when the reference goes, the next
 * reconcile of the policy drops the count (0 is omitted).  Upstream
 * (internal/controller/sympoziumpolicy_controller.go at 008266e,
 * SetupWithManager) watches only the policy, so an instance's change
 * alone does not reconcile it: the test touches the policy (an
 * annotation) as a user's edit or a resync would.
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

#define WAIT_MS 12000
#define NS      "e2e-policy"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_INST
        = { "sympozium.ai", "v1alpha1", "sympoziuminstances", true };
static const struct kapi_res R_POL
        = { "sympozium.ai", "v1alpha1", "sympoziumpolicies", true };

static struct optest F;

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

/* status.boundInstances equals *(const int *)arg (0: absent). */
static const char *
check_bound(json_object *o, const void *arg)
{
	json_object *b = jx_get(o, "status.boundInstances");
	int want = *(const int *)arg;

	if (o == NULL) {
		return ("absent");
	}
	if (want == 0) {
		return (b == NULL ? NULL : "boundInstances still set");
	}
	if (b == NULL || !json_object_is_type(b, json_type_int)) {
		return ("no boundInstances");
	}
	return (json_object_get_int(b) == want ? NULL
	                                       : "boundInstances differs");
}

static int
setup(void **state)
{
	*state = &F;
	if (optest_start_operator(&F, "test-policy-e2e", WAIT_MS, NULL) != 0) {
		return (-1);
	}
	return (ksim_api_create(&F.a, &R_NS, NULL, NS, NULL) == KAPI_OK ? 0
	                                                                : -1);
}

static void
create(const struct kapi_res *r, json_object *o)
{
	optest_create_or_fail(&F, r, NS, o, NULL);
	json_object_put(o);
}

static void
test_bound_instances(void **state)
{
	static const int one = 1, zero = 0;
	const char *miss = "not tried";
	char patch[128];

	(void)state;
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":{"
	                       "\"name\":\"bound\"},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}},"
	                       "\"policyRef\":\"strict\"}}"));
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":{"
	                       "\"name\":\"free\"},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}}}}"));
	/* the instance is cached once its own controller wrote it */
	optest_wait_obj(&F, &R_INST, NS, "bound", optest_check_present, NULL);
	create(&R_POL,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumPolicy\",\"metadata\":{"
	                       "\"name\":\"strict\"},\"spec\":{}}"));
	optest_wait_obj(&F, &R_POL, NS, "strict", check_bound, &one);
	/* the reference goes; each touch of the policy reconciles it (the
	 * supervisor's instance cache may lag the first one) */
	merge_patch(&R_INST, "bound", "{\"spec\":{\"policyRef\":null}}");
	for (int i = 0; i < 5 && miss != NULL; i++) {
		snprintf(patch, sizeof(patch),
		        "{\"metadata\":{\"annotations\":{\"e2e/touch\":"
		        "\"%d\"}}}",
		        i);
		merge_patch(&R_POL, "strict", patch);
		miss = optest_poll(
		        &F, &R_POL, NS, "strict", check_bound, &zero, NULL);
	}
	if (miss != NULL) {
		fail_msg("policy strict: %s", miss);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_instances),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
