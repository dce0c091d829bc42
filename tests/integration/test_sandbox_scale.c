/*
 * test_sandbox_scale.c: the worker sandbox at the scale where it once
 * killed the agentrun worker (issue 13): the whole operator (bin/sympoziumd
 * and bin/sympozium-worker against bin/kubesim, sandbox on) and NRUNS
 * AgentRuns of one SympoziumInstance created in a burst, each run's pod
 * succeeding at once on kubesim's kubelet.  The run history is kept
 * (--max-run-history above NRUNS), so the agentrun worker's sort of the
 * instance's completed runs grows past 128 pointers (1 KiB), where glibc's
 * qsort() asks sysconf(_SC_PHYS_PAGES), a sysinfo call.  Every run must
 * reach Succeeded within WAIT_MS and no worker may exit (no "exited:" in
 * the supervisor's log).  In ASan builds sbx_enter() loads no filter
 * (sandbox.h): the test runs but proves the fix only in `make check`.
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
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define NRUNS   200
#define WAIT_MS 180000
#define NS      "default"

static const struct kapi_res R_INST
        = { "sympozium.ai", "v1alpha1", "sympoziuminstances", true };
static const struct kapi_res R_RUN
        = { "sympozium.ai", "v1alpha1", "agentruns", true };

#define OK_LOG                                                                \
	"__SYMPOZIUM_RESULT__\n{\"status\":\"success\",\"response\":\"ok\"}"  \
	"\n__SYMPOZIUM_END__\n"

static struct optest F;

static int
setup(void **state)
{
	static const char *const args[]
	        = { "--max-run-history", "1000", NULL };

	*state = &F;
	return (optest_start_operator(&F, "test-sandbox-scale", 15000, args));
}

static void
create(const struct kapi_res *r, json_object *o)
{
	optest_create_or_fail(&F, r, NS, o, NULL);
	json_object_put(o);
}

/* Runs of NS in phase Succeeded; *listed: how many runs there are. */
static int
succeeded(int *listed)
{
	json_object *items = NULL;
	struct kapi_err e = KAPI_ERR_INIT;
	int n = 0;

	if (kapi_list_all(F.a.c, &R_RUN, NS, NULL, &items, NULL, &e)
	        != KAPI_OK) {
		fail_msg("list agentruns: %s", e.message ?: "");
	}
	kapi_err_fini(&e);
	*listed = (int)json_object_array_length(items);
	for (int i = 0; i < *listed; i++) {
		const char *ph = jx_get_str(
		        json_object_array_get_idx(items, (size_t)i),
		        "status.phase");
		n += ph != NULL && strcmp(ph, "Succeeded") == 0;
	}
	json_object_put(items);
	return (n);
}

static void
test_many_completed_runs(void **state)
{
	json_object *log = json_object_new_string(OK_LOG);
	char name[32];
	int done = 0, listed = 0;

	(void)state;
	json_object *rules = testutil_jsonf(
	        "{\"rules\":[{\"namespace\":\"" NS "\",\"runDuration\":"
	        "\"10ms\",\"logs\":{\"agent\":%s}}]}",
	        json_object_to_json_string(log));

	optest_kubelet_rules(&F, json_object_to_json_string(rules));
	json_object_put(rules);
	json_object_put(log);
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":{"
	                       "\"name\":\"inst\"},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}}}}"));
	for (int i = 0; i < NRUNS; i++) {
		snprintf(name, sizeof(name), "run-%03d", i);
		create(&R_RUN,
		        testutil_jsonf(
		                "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
		                "\"kind\":\"AgentRun\",\"metadata\":{\"name\":"
		                "\"%s\",\"labels\":{\"sympozium.ai/instance\":"
		                "\"inst\"}},\"spec\":{\"instanceRef\":"
		                "\"inst\","
		                "\"agentId\":\"a\",\"sessionKey\":\"s\","
		                "\"task\":\"t\",\"model\":{\"provider\":"
		                "\"openai\",\"model\":\"gpt-4o\","
		                "\"authSecretRef\":\"\"}}}",
		                name));
	}
	int64_t t0 = ksim_now_ms();
	while (ksim_now_ms() - t0 < WAIT_MS
	        && sdproc_log_count(F.sd[0].log, "exited:") == 0) {
		if ((done = succeeded(&listed)) == NRUNS) {
			break;
		}
		ksim_sleep_ms(500);
	}
	print_message("%d of %d runs Succeeded in %lld ms\n", done, listed,
	        (long long)(ksim_now_ms() - t0));
	if (sdproc_log_count(F.sd[0].log, "exited:") != 0 || done != NRUNS) {
		sdproc_dump_log(F.sd[0].log);
		fail_msg("%d of %d runs Succeeded; worker exits: %d", done,
		        NRUNS, sdproc_log_count(F.sd[0].log, "exited:"));
	}
	assert_int_equal(listed, NRUNS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_completed_runs),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
