/*
 * test_skillpack.c: the SkillPack reconciler, JSON in, writes and verdict
 * out (spec sympozium-controllers.md section 4): gone, finalizer added,
 * ConfigMap created / replaced / left alone, status written only when it
 * changes, deletion, invalid skill names and oversized packs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "workers/kobj.h"
#include "workers/skillpack.h"

#define NOW_MS 1767225600000LL /* 2026-01-01T00:00:00Z */

static json_object *
J(const char *text)
{
	json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return (o);
}

/* Runs the reconciler; fakesup_run() checks the writes against the
 * protocol's encoding and validation too. */
static void
run(const char *obj, const char *children, struct fakesup_run *g)
{
	json_object *o = obj != NULL ? J(obj) : NULL;
	json_object *k = J(children != NULL ? children : "[]");

	fakesup_run(&skillpack_reconciler, NULL, "ns/code-review", o, k,
	        NOW_MS, g);
	json_object_put(o);
	json_object_put(k);
}

#define PACK_MD                                                               \
	"\"metadata\":{\"name\":\"code-review\",\"namespace\":\"ns\","        \
	"\"uid\":\"u-1\",\"generation\":3,\"resourceVersion\":\"7\","         \
	"\"finalizers\":[\"other\",\"sympozium.ai/skillpack-finalizer\"]}"
#define SPEC                                                                  \
	"\"spec\":{\"skills\":[{\"name\":\"review-guidelines\","              \
	"\"description\":\"Guidelines for performing code reviews\","         \
	"\"content\":\"# Code Review Guidelines\\n- Check\\n\"},"             \
	"{\"name\":\"plain\",\"content\":\"just text\"}]}"
#define PACK "{" PACK_MD "," SPEC "}"
#define DATA                                                                  \
	"{\"review-guidelines.md\":\"# review-guidelines\\n\\n> Guidelines "  \
	"for performing code reviews\\n\\n# Code Review Guidelines\\n- "      \
	"Check\\n\",\"plain.md\":\"just text\"}"
#define READY_STATUS                                                          \
	"{\"phase\":\"Ready\",\"configMapName\":\"code-review\","             \
	"\"skillCount\":2}"
#define LABELS                                                                \
	"{\"sympozium.ai/component\":\"skillpack\","                          \
	"\"sympozium.ai/skillpack\":\"code-review\"}"

static void
test_gone(void **state)
{
	struct fakesup_run g;

	(void)state;
	run(NULL, NULL, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_finalizer_added(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	(void)state;
	run("{\"metadata\":{\"name\":\"code-review\",\"namespace\":\"ns\","
	    "\"uid\":\"u-1\",\"resourceVersion\":\"7\",\"finalizers\":"
	    "[\"other\"]}," SPEC "}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	assert_string_equal(w.res.plural, "skillpacks");
	assert_string_equal(w.name, "code-review");
	fakesup_assert_json(jx_get(w.object, "metadata.finalizers"),
	        "[\"other\",\"sympozium.ai/skillpack-finalizer\"]");
	assert_string_equal(
	        jx_get_str(w.object, "metadata.resourceVersion"), "7");
	assert_string_equal(jx_get_str(w.object, "kind"), "SkillPack");
	assert_string_equal(
	        jx_get_str(w.object, "apiVersion"), "sympozium.ai/v1alpha1");
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_create(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	(void)state;
	run(PACK, NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_CREATE);
	assert_string_equal(w.res.plural, "configmaps");
	assert_string_equal(w.namespace, "ns");
	assert_string_equal(kobj_name(w.object), "code-review");
	fakesup_assert_json(jx_get(w.object, "data"), DATA);
	fakesup_assert_json(jx_get(w.object, "metadata.labels"), LABELS);
	fakesup_assert_json(jx_get(w.object, "metadata.ownerReferences"),
	        "[{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SkillPack\",\"name\":\"code-review\",\"uid\":\"u-1\","
	        "\"controller\":true,\"blockOwnerDeletion\":true}]");
	assert_int_equal(w.tolerate, 0);
	w = fakesup_write(&g, 1);
	assert_int_equal(w.op, IPC_OP_UPDATE_STATUS);
	assert_string_equal(w.res.plural, "skillpacks");
	fakesup_assert_json(jx_get(w.object, "status"), READY_STATUS);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_duplicates_last_wins(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{" PACK_MD ",\"spec\":{\"skills\":[{\"name\":\"a\",\"content\":"
	    "\"one\"},{\"name\":\"a\",\"description\":\"\",\"content\":"
	    "\"two\"}]}}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	fakesup_assert_json(jx_get(fakesup_write(&g, 0).object, "data"),
	        "{\"a.md\":\"two\"}");
	fakesup_assert_json(
	        jx_get(fakesup_write(&g, 1).object, "status.skillCount"), "2");
	fakesup_run_fini(&g);
}

static void
test_sample_value(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{" PACK_MD
	    ",\"spec\":{\"skills\":[{\"name\":\"review-guidelines\","
	    "\"description\":\"Guidelines for performing code reviews\","
	    "\"content\":\"# Code Review Guidelines\\n\",\"requires\":"
	    "{\"tools\":[\"read_file\"]}}]}}",
	        NULL, &g);
	json_object *data = jx_get(fakesup_write(&g, 0).object, "data");
	assert_string_equal(json_object_get_string(json_object_object_get(
	                            data, "review-guidelines.md")),
	        "# review-guidelines\n\n> Guidelines for performing code "
	        "reviews\n\n# Code Review Guidelines\n");
	fakesup_run_fini(&g);
}

static void
test_replace_existing(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	(void)state;
	run("{" PACK_MD "," SPEC ",\"status\":" READY_STATUS "}",
	        "[{\"metadata\":{\"name\":\"code-review\",\"namespace\":"
	        "\"ns\","
	        "\"resourceVersion\":\"4\",\"labels\":{\"extra\":\"x\","
	        "\"sympozium.ai/skillpack\":\"code-review\"},"
	        "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
	        "\"Other\","
	        "\"name\":\"o\",\"uid\":\"u-9\"},{\"apiVersion\":"
	        "\"sympozium.ai/v1alpha1\",\"kind\":\"SkillPack\",\"name\":"
	        "\"code-review\",\"uid\":\"u-1\",\"controller\":true}]},"
	        "\"data\":{\"stale.md\":\"x\"}}]",
	        &g);
	assert_int_equal(g.r.nwrites, 1);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	assert_string_equal(w.res.plural, "configmaps");
	assert_string_equal(w.name, "code-review");
	fakesup_assert_json(jx_get(w.object, "data"), DATA);
	fakesup_assert_json(jx_get(w.object, "metadata.labels"), LABELS);
	assert_int_equal(json_object_array_length(
	                         jx_get(w.object, "metadata.ownerReferences")),
	        2);
	assert_string_equal(
	        jx_get_str(w.object, "metadata.resourceVersion"), "4");
	assert_string_equal(jx_get_str(w.object, "kind"), "ConfigMap");
	fakesup_run_fini(&g);
}

static void
test_steady_state(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{" PACK_MD "," SPEC ",\"status\":" READY_STATUS "}",
	        "[{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
	        "\"code-review\",\"namespace\":\"ns\",\"labels\":" LABELS
	        "},\"data\":" DATA "}]",
	        &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_other_child_kind_ignored(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{" PACK_MD "," SPEC ",\"status\":" READY_STATUS "}",
	        "[{\"kind\":\"Secret\",\"metadata\":{\"name\":"
	        "\"code-review\",\"namespace\":\"ns\"}}]",
	        &g);
	assert_int_equal(g.r.nwrites, 1);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_CREATE);
	fakesup_run_fini(&g);
}

static void
test_no_skills(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{" PACK_MD ",\"spec\":{\"category\":\"x\"}}", NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	fakesup_assert_json(jx_get(fakesup_write(&g, 0).object, "data"), "{}");
	fakesup_assert_json(jx_get(fakesup_write(&g, 1).object, "status"),
	        "{\"phase\":\"Ready\",\"configMapName\":\"code-review\","
	        "\"skillCount\":0}");
	fakesup_run_fini(&g);
}

static void
test_deletion(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;

	(void)state;
	run("{\"metadata\":{\"name\":\"code-review\",\"namespace\":\"ns\","
	    "\"uid\":\"u-1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	    "\"finalizers\":[\"sympozium.ai/skillpack-finalizer\","
	    "\"other\"]}," SPEC "}",
	        "[{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
	        "\"code-review\",\"namespace\":\"ns\"}}]",
	        &g);
	assert_int_equal(g.r.nwrites, 2);
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_DELETE);
	assert_string_equal(w.res.plural, "configmaps");
	assert_string_equal(w.namespace, "ns");
	assert_string_equal(w.name, "code-review");
	assert_int_equal(w.tolerate, IPC_TOL_NOT_FOUND);
	w = fakesup_write(&g, 1);
	assert_int_equal(w.op, IPC_OP_UPDATE);
	assert_string_equal(w.res.plural, "skillpacks");
	fakesup_assert_json(
	        jx_get(w.object, "metadata.finalizers"), "[\"other\"]");
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

/* Without its ConfigMap among the children, only the finalizer goes. */
static void
test_deletion_no_child(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{\"metadata\":{\"name\":\"code-review\",\"namespace\":\"ns\","
	    "\"uid\":\"u-1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	    "\"finalizers\":[\"sympozium.ai/skillpack-finalizer\"]}," SPEC "}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 1);
	assert_int_equal(fakesup_write(&g, 0).op, IPC_OP_UPDATE);
	fakesup_run_fini(&g);
}

static void
test_deletion_without_our_finalizer(void **state)
{
	struct fakesup_run g;

	(void)state;
	run("{\"metadata\":{\"name\":\"code-review\",\"namespace\":\"ns\","
	    "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"finalizers\":"
	    "[\"other\"]}," SPEC "}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 0);
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_invalid_name(void **state)
{
	struct fakesup_run g;
	struct ipc_write w;
	json_object *st;

	(void)state;
	run("{" PACK_MD ",\"spec\":{\"skills\":[{\"name\":\"ok\",\"content\":"
	    "\"x\"},{\"name\":\"bad name\",\"content\":\"y\"}]}}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	evtest_assert(g.result, 1, "code-review", "Warning", "InvalidSkills",
	        "bad name");
	w = fakesup_write(&g, 0);
	assert_int_equal(w.op, IPC_OP_UPDATE_STATUS);
	st = jx_get(w.object, "status");
	assert_string_equal(jx_get_str(st, "phase"), "Failed");
	assert_null(jx_get(st, "configMapName"));
	fakesup_assert_json(jx_get(st, "skillCount"), "2");
	assert_string_equal(jx_get_str(st, "conditions.0.type"), "Ready");
	assert_string_equal(jx_get_str(st, "conditions.0.status"), "False");
	assert_string_equal(
	        jx_get_str(st, "conditions.0.reason"), "InvalidSkills");
	assert_non_null(strstr(
	        jx_get_str(st, "conditions.0.message"), "\"bad name.md\""));
	assert_string_equal(jx_get_str(st, "conditions.0.lastTransitionTime"),
	        "2026-01-01T00:00:00Z");
	fakesup_assert_json(
	        jx_get(st, "conditions.0.observedGeneration"), "3");
	assert_int_equal(g.verdict, IPC_V_DONE);
	fakesup_run_fini(&g);
}

static void
test_invalid_then_fixed(void **state)
{
	struct fakesup_run g;
	json_object *st;

	(void)state;
	/* the same invalid pack again: nothing to write */
	run("{" PACK_MD ",\"spec\":{\"skills\":[{\"content\":\"y\"}]},"
	    "\"status\":{\"phase\":\"Failed\",\"skillCount\":1,\"conditions\":"
	    "[{\"type\":\"Ready\",\"status\":\"False\",\"observedGeneration\":"
	    "3,\"lastTransitionTime\":\"2025-01-01T00:00:00Z\",\"reason\":"
	    "\"InvalidSkills\",\"message\":\"skills[0] has no name\"}]}}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 0);
	fakesup_run_fini(&g);
	/* fixed: Ready again, the condition flips with a new time */
	run("{" PACK_MD ",\"spec\":{\"skills\":[{\"name\":\"n\",\"content\":"
	    "\"y\"}]},\"status\":{\"phase\":\"Failed\",\"skillCount\":1,"
	    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
	    "\"observedGeneration\":3,\"lastTransitionTime\":"
	    "\"2025-01-01T00:00:00Z\",\"reason\":\"InvalidSkills\","
	    "\"message\":\"skills[0] has no name\"}]}}",
	        NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	st = jx_get(fakesup_write(&g, 1).object, "status");
	assert_string_equal(jx_get_str(st, "phase"), "Ready");
	assert_string_equal(jx_get_str(st, "configMapName"), "code-review");
	assert_string_equal(jx_get_str(st, "conditions.0.status"), "True");
	assert_string_equal(
	        jx_get_str(st, "conditions.0.reason"), "ConfigMapSynced");
	assert_string_equal(jx_get_str(st, "conditions.0.lastTransitionTime"),
	        "2026-01-01T00:00:00Z");
	fakesup_run_fini(&g);
}

static void
test_too_large(void **state)
{
	struct fakesup_run g;
	size_t n = 1024 * 1024 + 10;
	char *big = malloc(n + 1);
	char *obj;

	(void)state;
	memset(big, 'a', n);
	big[n] = '\0';
	assert_true(asprintf(&obj,
	                    "{" PACK_MD ",\"spec\":{\"skills\":[{\"name\":"
	                    "\"big\",\"content\":\"%s\"}]}}",
	                    big)
	        > 0);
	run(obj, NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	evtest_assert(g.result, 1, "code-review", "Warning", "InvalidSkills",
	        "more than a ConfigMap holds");
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 0).object, "status.phase"),
	        "Failed");
	assert_non_null(strstr(jx_get_str(fakesup_write(&g, 0).object,
	                               "status.conditions.0.message"),
	        "more than a ConfigMap holds"));
	fakesup_run_fini(&g);
	free(obj);
	free(big);
}

static void
test_bad_shapes(void **state)
{
	struct fakesup_run g;

	(void)state;
	/* skills not an array, a skill not an object: no crash */
	run("{" PACK_MD ",\"spec\":{\"skills\":\"x\"}}", NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	fakesup_assert_json(
	        jx_get(fakesup_write(&g, 1).object, "status.skillCount"), "0");
	fakesup_run_fini(&g);
	run("{" PACK_MD ",\"spec\":{\"skills\":[7]}}", NULL, &g);
	assert_int_equal(g.r.nwrites, 2);
	evtest_assert(
	        g.result, 1, "code-review", "Warning", "InvalidSkills", NULL);
	assert_string_equal(
	        jx_get_str(fakesup_write(&g, 0).object, "status.phase"),
	        "Failed");
	fakesup_run_fini(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_finalizer_added),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_duplicates_last_wins),
		cmocka_unit_test(test_sample_value),
		cmocka_unit_test(test_replace_existing),
		cmocka_unit_test(test_steady_state),
		cmocka_unit_test(test_other_child_kind_ignored),
		cmocka_unit_test(test_no_skills),
		cmocka_unit_test(test_deletion),
		cmocka_unit_test(test_deletion_no_child),
		cmocka_unit_test(test_deletion_without_our_finalizer),
		cmocka_unit_test(test_invalid_name),
		cmocka_unit_test(test_invalid_then_fixed),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_bad_shapes),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
