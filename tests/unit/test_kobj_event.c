/*
 * test_kobj_event.c: the event writes of workers/kobj.h (kobj_event,
 * kobj_eventf, kobj_status_event): their shape, and that status
 * transitions give exactly one event while a steady state gives none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "ipc/ipc.h"
#include "tests/lib/evtest.h"
#include "workers/kobj.h"

#define OBJ(status)                                                           \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"SkillPack\","   \
	"\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\","   \
	"\"resourceVersion\":\"42\"}" status "}"
#define READY(st, reason, msg)                                                \
	"{\"phase\":\"X\",\"conditions\":[{\"type\":\"Ready\",\"status\":"    \
	"\"" st "\",\"reason\":\"" reason "\",\"message\":\"" msg "\"}]}"

static void
out_init(struct rec_out *out)
{
	memset(out, 0, sizeof(*out));
	out->result = ipc_result_new("ns/p", 1, IPC_V_DONE, 0, NULL);
}

static void
test_event_shape(void **state)
{
	json_object *o = json_tokener_parse(OBJ(""));
	struct rec_out out;
	json_object *w, *ev;

	(void)state;
	out_init(&out);
	kobj_event(&out, o, KOBJ_NORMAL, "Started", "go");
	kobj_eventf(&out, o, KOBJ_WARNING, "Failed", "code %d", 7);
	kobj_event(&out, NULL, KOBJ_NORMAL, "Nothing", "x");
	assert_int_equal(evtest_count(out.result), 2);
	evtest_assert(out.result, 0, "p", "Normal", "Started", "go");
	evtest_assert(out.result, 1, "p", "Warning", "Failed", "code 7");
	w = json_object_array_get_idx(jx_get(out.result, "writes"), 0);
	assert_string_equal(jx_get_str(w, "namespace"), "ns");
	ev = jx_get(w, "object");
	assert_string_equal(jx_get_str(ev, "apiVersion"), "v1");
	assert_string_equal(jx_get_str(ev, "metadata.namespace"), "ns");
	assert_string_equal(
	        jx_get_str(ev, "involvedObject.kind"), "SkillPack");
	assert_string_equal(jx_get_str(ev, "involvedObject.apiVersion"),
	        "sympozium.ai/v1alpha1");
	assert_string_equal(jx_get_str(ev, "involvedObject.namespace"), "ns");
	assert_string_equal(jx_get_str(ev, "involvedObject.uid"), "u1");
	assert_string_equal(
	        jx_get_str(ev, "involvedObject.resourceVersion"), "42");
	json_object_put(out.result);
	json_object_put(o);
}

/* old status (in the object), new status -> number of events. */
static size_t
transition(const char *old, const char *now, const char *reason)
{
	json_object *o = json_tokener_parse(old);
	json_object *st = json_tokener_parse(now);
	struct rec_out out;
	size_t n;

	assert_non_null(o);
	assert_non_null(st);
	out_init(&out);
	kobj_status_event(&out, o, st);
	n = evtest_count(out.result);
	if (n == 1) {
		evtest_assert(out.result, 0, "p", "Warning", reason, NULL);
	}
	json_object_put(out.result);
	json_object_put(o);
	json_object_put(st);
	return (n);
}

static void
test_status_transitions(void **state)
{
	(void)state;
	/* Ready turns False: one Warning with its reason. */
	assert_int_equal(
	        transition(OBJ(""), READY("False", "InvalidSpec", "m"),
	                "InvalidSpec"),
	        1);
	assert_int_equal(
	        transition(OBJ(",\"status\":" READY("True", "Ok", "fine")),
	                READY("False", "InvalidSpec", "m"), "InvalidSpec"),
	        1);
	/* Steady: the same False condition again: nothing. */
	assert_int_equal(transition(OBJ(",\"status\":" READY(
	                                    "False", "InvalidSpec", "m")),
	                         READY("False", "InvalidSpec", "m"), NULL),
	        0);
	/* Another reason or message while False: a new Warning. */
	assert_int_equal(
	        transition(
	                OBJ(",\"status\":" READY("False", "InvalidSpec", "m")),
	                READY("False", "InvalidSpec", "other"), "InvalidSpec"),
	        1);
	/* In progress is not a warning; True is not either. */
	assert_int_equal(
	        transition(OBJ(""), READY("False", "NotReady", "m"), NULL), 0);
	assert_int_equal(
	        transition(OBJ(""), READY("True", "Ready", "m"), NULL), 0);
	/* Phase Error or Failed without a Ready condition. */
	assert_int_equal(
	        transition(OBJ(",\"status\":{\"phase\":\"Ready\"}"),
	                "{\"phase\":\"Error\",\"message\":\"bad\"}", "Failed"),
	        1);
	assert_int_equal(
	        transition(OBJ(""),
	                "{\"phase\":\"Failed\",\"error\":\"boom\"}", "Failed"),
	        1);
	assert_int_equal(
	        transition(OBJ(""), "{\"phase\":\"Failed\"}", "Failed"), 1);
	assert_int_equal(transition(OBJ(",\"status\":{\"phase\":\"Error\"}"),
	                         "{\"phase\":\"Error\",\"x\":1}", NULL),
	        0);
	assert_int_equal(
	        transition(OBJ(""), "{\"phase\":\"Running\"}", NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_shape),
		cmocka_unit_test(test_status_transitions),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
