/*
 * test_events.c: Kubernetes Events recorded by the whole operator
 * (bin/sympoziumd with the production worker) against bin/kubesim.  The
 * group setup starts kubesim (request log), applies the upstream CRDs,
 * sets kubelet rules (a run whose agent succeeds with a result, one whose
 * agent exits 1) and starts the supervisor.  The tests, in order:
 *  - an AgentRun that succeeds gets a Normal "Started" Event (Job created)
 *    and a Normal "Succeeded" Event, each with count 1, stamped as
 *    client-go does (name <run>.<hex nanos>, source.component, timestamps);
 *  - an AgentRun whose Job fails gets a Warning "Failed" Event with the
 *    run's status.error; one whose instance is missing a Warning "Failed"
 * Event saying so;
 *  - a SkillPack made invalid, valid, then invalid again with the same
 *    mistake has ONE InvalidSkills Event whose count went to 2 (a PATCH,
 *    not a second Event); deleted, the next one re-creates it (count 3)
 *    after the PATCH's 404;
 *  - after convergence the supervisor POSTs and PATCHes no Event for 3 s;
 *  - SIGTERM stops the supervisor (exit 0).
 * Every wait is bounded (WAIT_MS).  Only the pid this test forked, and
 * the workers found under it in /proc, are signalled.
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
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS  20000
#define QUIET_MS 3000
#define NS       "default"
#define UA_SD    "sympoziumd"
#define GROUP    "sympozium.ai"
#define VERSION  "v1alpha1"

static const struct kapi_res R_EV = { "", "v1", "events", true };
static const struct kapi_res R_SKP = { GROUP, VERSION, "skillpacks", true };
static const struct kapi_res R_INST
        = { GROUP, VERSION, "sympoziuminstances", true };
static const struct kapi_res R_RUN = { GROUP, VERSION, "agentruns", true };

static struct optest F;

/* ---- set-up helpers ---- */

/* The agent pods: ok-run succeeds with a result, bad-run exits 1. */
static void
kubelet_rules(void)
{
	static const char rules[]
	        = "{\"rules\":[{\"labelSelector\":\"sympozium.ai/"
	          "agent-run=ok-run\",\"runDuration\":\"200ms\",\"exitCode\":"
	          "0,"
	          "\"logs\":{\"*\":\"__SYMPOZIUM_RESULT__{\\\"status\\\":"
	          "\\\"success\\\",\\\"response\\\":\\\"done\\\"}"
	          "__SYMPOZIUM_END__\\n\"}},"
	          "{\"labelSelector\":\"sympozium.ai/agent-run=bad-run\","
	          "\"runDuration\":\"200ms\",\"exitCode\":1}]}";

	optest_kubelet_rules(&F, rules);
}

/* The operator, then the kubelet rules (for the pods of the runs the
 * tests create). */
static int
setup(void **state)
{
	*state = &F;
	if (optest_start_operator(&F, "test-events", WAIT_MS, NULL) != 0) {
		return (-1);
	}
	kubelet_rules();
	return (0);
}

/* ---- objects and events ---- */

/* Creates a sympozium.ai object from JSON text (retrying while its CRD
 * is not served yet). */
static void
create(const struct kapi_res *r, const char *json)
{
	json_object *o = json_tokener_parse(json);

	assert_non_null(o);
	optest_create_or_fail(&F, r, NS, o, NULL);
	json_object_put(o);
}

#define RUN(name, inst)                                                       \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"AgentRun\","    \
	"\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" NS "\"},"      \
	"\"spec\":{\"agentId\":\"a\",\"instanceRef\":\"" inst "\","           \
	"\"sessionKey\":\"s\",\"task\":\"do it\",\"model\":{\"provider\":"    \
	"\"openai\",\"model\":\"gpt\",\"authSecretRef\":\"key\"}}}"

/* The Events about involvedObject name with that reason (a new array;
 * caller puts). */
static json_object *
events_of(const char *name, const char *reason)
{
	return (optest_events(&F, NS, name, reason));
}

static int64_t
count_of(json_object *ev)
{
	int64_t n = -1;

	jx_get_int(ev, "count", &n);
	return (n);
}

/* Waits until exactly one Event (name, reason) exists with count >= min;
 * returns it (caller puts). */
static json_object *
wait_event(const char *name, const char *reason, int64_t min)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	json_object *evs, *ev;

	for (;;) {
		evs = events_of(name, reason);
		if ((json_object_array_length(evs) == 1
		            && count_of(json_object_array_get_idx(evs, 0))
		                    >= min)
		        || ksim_now_ms() >= end) {
			break;
		}
		json_object_put(evs);
		ksim_sleep_ms(100);
	}
	if (json_object_array_length(evs) != 1
	        || count_of(json_object_array_get_idx(evs, 0)) < min) {
		sdproc_dump_log(F.sd[0].log);
		fail_msg("%s %s: want 1 Event with count >= %lld, got %s",
		        name, reason, (long long)min,
		        json_object_to_json_string(evs));
	}
	ev = json_object_get(json_object_array_get_idx(evs, 0));
	json_object_put(evs);
	return (ev);
}

/* Checks the client-go stamping of ev about an object of kind. */
static void
check_stamp(
        json_object *ev, const char *name, const char *kind, const char *type)
{
	const char *ename = jx_get_str(ev, "metadata.name");
	int64_t first, last;

	assert_non_null(ename);
	assert_int_equal(strncmp(ename, name, strlen(name)), 0);
	assert_int_equal(ename[strlen(name)], '.');
	assert_true(strspn(ename + strlen(name) + 1, "0123456789abcdef")
	        == strlen(ename + strlen(name) + 1));
	assert_string_equal(jx_get_str(ev, "metadata.namespace"), NS);
	assert_string_equal(jx_get_str(ev, "involvedObject.kind"), kind);
	assert_string_equal(jx_get_str(ev, "involvedObject.namespace"), NS);
	assert_non_null(jx_get_str(ev, "involvedObject.uid"));
	assert_string_equal(jx_get_str(ev, "involvedObject.apiVersion"),
	        GROUP "/" VERSION);
	assert_string_equal(jx_get_str(ev, "type"), type);
	assert_string_equal(
	        jx_get_str(ev, "source.component"), "sympozium-controller");
	assert_string_equal(
	        jx_get_str(ev, "reportingComponent"), "sympozium-controller");
	assert_int_equal(
	        timefmt_parse(jx_get_str(ev, "firstTimestamp"), &first), 0);
	assert_int_equal(
	        timefmt_parse(jx_get_str(ev, "lastTimestamp"), &last), 0);
	assert_true(last >= first);
}

/* ---- tests ---- */

static void
test_run_succeeds(void **state)
{
	json_object *ev;

	(void)state;
	create(&R_INST,
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SympoziumInstance\",\"metadata\":{\"name\":\"alice\","
	        "\"namespace\":\"" NS "\"},\"spec\":{\"agents\":{\"default\":"
	        "{\"model\":\"gpt\"}}}}");
	create(&R_RUN, RUN("ok-run", "alice"));
	ev = wait_event("ok-run", "Started", 1);
	check_stamp(ev, "ok-run", "AgentRun", "Normal");
	assert_int_equal(count_of(ev), 1);
	assert_non_null(
	        strstr(jx_get_str(ev, "message"), "Created Job ok-run"));
	json_object_put(ev);
	ev = wait_event("ok-run", "Succeeded", 1);
	check_stamp(ev, "ok-run", "AgentRun", "Normal");
	assert_int_equal(count_of(ev), 1);
	json_object_put(ev);
}

static void
test_runs_fail(void **state)
{
	json_object *ev, *run = NULL;

	(void)state;
	create(&R_RUN, RUN("bad-run", "alice"));
	create(&R_RUN, RUN("ghost-run", "nobody"));
	ev = wait_event("bad-run", "Failed", 1);
	check_stamp(ev, "bad-run", "AgentRun", "Warning");
	/* The message is the run's status.error. */
	assert_int_equal(
	        kapi_get(F.a.c, &R_RUN, NS, "bad-run", &run, NULL), KAPI_OK);
	assert_string_equal(jx_get_str(run, "status.phase"), "Failed");
	assert_string_equal(
	        jx_get_str(ev, "message"), jx_get_str(run, "status.error"));
	json_object_put(run);
	json_object_put(ev);
	ev = wait_event("ghost-run", "Failed", 1);
	check_stamp(ev, "ghost-run", "AgentRun", "Warning");
	assert_non_null(strstr(jx_get_str(ev, "message"), "\"nobody\""));
	assert_int_equal(count_of(ev), 1);
	json_object_put(ev);
	/* The failed run was started first. */
	ev = wait_event("bad-run", "Started", 1);
	json_object_put(ev);
}

#define PACK(skill)                                                           \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"SkillPack\","   \
	"\"metadata\":{\"name\":\"flip\",\"namespace\":\"" NS "\"},"          \
	"\"spec\":{\"skills\":[{\"name\":\"" skill "\",\"content\":\"x\"}]}}"

/* Replaces flip's spec and waits for its status phase. */
static void
set_pack(const char *skill, const char *phase)
{
	char *patch = xasprintf("{\"spec\":{\"skills\":[{\"name\":\"%s\","
	                        "\"content\":\"x\"}]}}",
	        skill);
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_patch(F.a.c, &R_SKP, NS, "flip", KAPI_PATCH_MERGE, patch,
	            NULL, false, NULL, &e)
	        != KAPI_OK) {
		fail_msg("patch flip: %s", e.message);
	}
	kapi_err_fini(&e);
	free(patch);
	optest_wait_field(&F, &R_SKP, NS, "flip", "status.phase", phase);
}

static void
test_dedupe_counts(void **state)
{
	json_object *ev;
	char first[256], name[300];

	(void)state;
	create(&R_SKP, PACK("bad name"));
	ev = wait_event("flip", "InvalidSkills", 1);
	check_stamp(ev, "flip", "SkillPack", "Warning");
	assert_int_equal(count_of(ev), 1);
	snprintf(first, sizeof(first), "%s", jx_get_str(ev, "firstTimestamp"));
	json_object_put(ev);
	set_pack("good", "Ready");
	set_pack("bad name", "Failed");
	/* The same event again: the one Event counts 2 (a PATCH). */
	ev = wait_event("flip", "InvalidSkills", 2);
	assert_int_equal(count_of(ev), 2);
	assert_string_equal(jx_get_str(ev, "firstTimestamp"), first);
	snprintf(name, sizeof(name), "%s", jx_get_str(ev, "metadata.name"));
	json_object_put(ev);
	assert_true(ksim_count_log(
	                    F.a.request_log, "PATCH", "/events/flip.", UA_SD)
	        >= 1);
	/* The Event deleted meanwhile (as the server's TTL does): the count
	 * PATCH finds it gone and the whole Event is POSTed again. */
	assert_int_equal(kapi_delete(F.a.c, &R_EV, NS, name, NULL, NULL, NULL),
	        KAPI_OK);
	set_pack("good", "Ready");
	set_pack("bad name", "Failed");
	ev = wait_event("flip", "InvalidSkills", 3);
	assert_int_equal(count_of(ev), 3);
	assert_string_equal(jx_get_str(ev, "metadata.name"), name);
	assert_string_equal(jx_get_str(ev, "firstTimestamp"), first);
	json_object_put(ev);
}

/* Event requests (POST and PATCH) by the supervisor so far. */
static int
event_writes(void)
{
	int post = ksim_count_log(F.a.request_log, "POST", "/events", UA_SD);
	int patch = ksim_count_log(F.a.request_log, "PATCH", "/events", UA_SD);

	assert_true(post >= 0 && patch >= 0);
	return (post + patch);
}

static void
test_quiet(void **state)
{
	int before;

	(void)state;
	before = event_writes();
	ksim_sleep_ms(QUIET_MS);
	if (event_writes() != before) {
		sdproc_dump_log(F.sd[0].log);
		fail_msg("%d Event write(s) in %d ms of steady state",
		        event_writes() - before, QUIET_MS);
	}
	/* Each transition was recorded once. */
	json_object *evs = events_of("ok-run", "Started");
	assert_int_equal(json_object_array_length(evs), 1);
	json_object_put(evs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_succeeds),
		cmocka_unit_test(test_runs_fail),
		cmocka_unit_test(test_dedupe_counts),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
