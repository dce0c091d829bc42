/*
 * test_operator.c: the whole operator against bin/kubesim: bin/sympoziumd
 * with the production worker (bin/sympozium-worker beside it, every
 * controller it offers).  The group setup starts kubesim (request log),
 * applies the CRDs (ours, deploy/crds) and starts the supervisor; the
 * tests then, in order: apply the upstream samples (the two known to fail
 * validation answer 422; this and the tests that check their outcome are
 * skipped where the upstream tree is absent); check what the reconcilers
 * produce for them (spec sympozium-controllers.md sections 1, 2, 4, 6):
 * the SkillPack's
 * ConfigMap and status, each SympoziumInstance's memory ConfigMap and
 * status, the AgentRuns of a missing instance Failed with the spec's
 * message, controller ownerReferences on every child and no unexpected
 * child; delete the SkillPack and see its ConfigMap go (finalizer path);
 * see no write by the supervisor (other than on leases) in a 5 s window
 * after convergence; and stop the supervisor with SIGTERM (exit 0).
 *
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

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/testutil.h"

#define WAIT_MS  10000
#define QUIET_MS 5000
#define NS       "default"
#define UA_SD    "sympoziumd"
#define GROUP    "sympozium.ai"
#define VERSION  "v1alpha1"
#define SKP      "code-review-sample"
#define MEM_MD   "# Agent Memory\n\nNo memories recorded yet.\n"
#define RUN_ERR  "policy validation failed: instance \"alice\" not found: "

static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_JOB = { "batch", "v1", "jobs", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_SKP = { GROUP, VERSION, "skillpacks", true };
static const struct kapi_res R_INST
        = { GROUP, VERSION, "sympoziuminstances", true };
static const struct kapi_res R_RUN = { GROUP, VERSION, "agentruns", true };
static const struct kapi_res R_PACK = { GROUP, VERSION, "personapacks", true };

/* Samples not applied at all, and those that must answer 422. */
static const char *const SKIPPED[]
        = { "personapack-helm-values-examples.yaml", NULL };
static const char *const INVALID[]
        = { "agentrun_sample.yaml", "sympoziuminstance_sample.yaml", NULL };

/* The instances of the samples with memory enabled, and the AgentRuns of
 * the missing instance "alice". */
static const char *const INSTANCES[]
        = { "my-github-agent", "secure-alice", NULL };
static const char *const RUNS[]
        = { "alice-sandbox-run-001", "alice-warmpool-run-001", NULL };

static struct optest F;
static int applied; /* sample objects created */

/* ---- helpers ---- */

/* The tests after test_samples_apply check what the operator made of the
 * upstream samples: skipped where the upstream tree is absent. */
static void
need_samples(void)
{
	if (applied == 0) {
		print_message("no upstream samples applied: skipped\n");
		skip();
	}
}

static bool
in_list(const char *const *list, const char *s)
{
	for (int i = 0; list[i] != NULL; i++) {
		if (strcmp(list[i], s) == 0) {
			return (true);
		}
	}
	return (false);
}

/* Creates obj (a sympozium.ai object), retrying on 404 while the CRD is
 * not served yet.  Returns the outcome; err filled. */
static enum kapi_rc
create_cr(json_object *obj, struct kapi_err *e)
{
	const char *plural = optest_plural(jx_get_str(obj, "kind"));
	const char *ns = jx_get_str(obj, "metadata.namespace");
	struct kapi_res r = { GROUP, VERSION, plural, true };

	assert_non_null(plural);
	return (optest_create(&F, &r, ns != NULL ? ns : NS, obj, NULL, e));
}

static const char *
label_is(json_object *o, const char *key, const char *want)
{
	const char *v = json_object_get_string(
	        jx_getv(o, "metadata", "labels", key, NULL));

	if (jx_getv(o, "metadata", "labels", key, NULL) == NULL
	        || strcmp(v, want) != 0) {
		return ("wrong or missing label");
	}
	return (NULL);
}

static bool
has_finalizer(json_object *o, const char *fin)
{
	json_object *f = jx_get(o, "metadata.finalizers");

	for (size_t i = 0; f != NULL && i < json_object_array_length(f); i++) {
		const char *s = json_object_get_string(
		        json_object_array_get_idx(f, i));
		if (s != NULL && strcmp(s, fin) == 0) {
			return (true);
		}
	}
	return (false);
}

/* The object's uid (GET now); caller frees with free(). */
static char *
uid_of(const struct kapi_res *r, const char *name)
{
	json_object *o = NULL;
	char *uid;

	assert_int_equal(kapi_get(F.a.c, r, NS, name, &o, NULL), KAPI_OK);
	uid = xstrdup(jx_get_str(o, "metadata.uid") ?: "");
	json_object_put(o);
	return (uid);
}

/* ---- group setup ---- */

static int
setup(void **state)
{
	*state = &F;
	return (optest_start_operator(&F, "test-operator", WAIT_MS, NULL));
}

/* ---- tests ---- */

static void
apply_file(const char *dir, const char *file)
{
	char *path = xasprintf("%s/%s", dir, file);
	json_object *docs = testutil_read_yaml(path);
	bool invalid = in_list(INVALID, file);

	assert_non_null(docs);
	for (size_t j = 0; j < json_object_array_length(docs); j++) {
		json_object *o = json_object_array_get_idx(docs, j);
		struct kapi_err e = KAPI_ERR_INIT;
		enum kapi_rc rc = create_cr(o, &e);

		if (invalid) {
			if (rc != KAPI_EINVALID || e.code != 422) {
				fail_msg("%s: want 422, got %ld %s", file,
				        e.code, e.message ?: "");
			}
		} else if (rc != KAPI_OK) {
			fail_msg("%s: %s/%s: %ld %s", file,
			        jx_get_str(o, "kind"),
			        jx_get_str(o, "metadata.name"), e.code,
			        e.message ?: "");
		} else {
			applied++;
		}
		kapi_err_fini(&e);
	}
	json_object_put(docs);
	free(path);
}

static void
test_samples_apply(void **state)
{
	char *dir
	        = testutil_shared_path("upstream/sympozium-v1alpha1/samples");
	const char *files[] = { "agentrun_agent_sandbox.yaml",
		"agentrun_sample.yaml", "personapack-adhoc-with-github.yaml",
		"personapack-developer-team-github.yaml",
		"personapack-helm-values-examples.yaml",
		"personapack_sample.yaml", "skillpack_sample.yaml",
		"sympoziuminstance_agent_sandbox.yaml",
		"sympoziuminstance_sample.yaml", "sympoziumpolicy_sample.yaml",
		"sympoziumschedule_sample.yaml" };

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!in_list(SKIPPED, files[i])) {
			apply_file(dir, files[i]);
		}
	}
	free(dir);
	assert_true(applied >= 8);
}

static const char *
check_skillpack(json_object *o, const void *arg)
{
	int64_t n = -1;

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	if (!has_finalizer(o, "sympozium.ai/skillpack-finalizer")) {
		return ("finalizer sympozium.ai/skillpack-finalizer missing");
	}
	if (strcmp(jx_get_str(o, "status.phase") ?: "", "Ready") != 0) {
		return ("status.phase is not Ready");
	}
	if (strcmp(jx_get_str(o, "status.configMapName") ?: "", SKP) != 0) {
		return ("status.configMapName is not " SKP);
	}
	if (jx_get_int(o, "status.skillCount", &n) != 0 || n != 2) {
		return ("status.skillCount is not 2");
	}
	return (NULL);
}

/* The value the spec gives for a skill with a description. */
static char *
skill_value(json_object *skill)
{
	return (xasprintf("# %s\n\n> %s\n\n%s", jx_get_str(skill, "name"),
	        jx_get_str(skill, "description"),
	        jx_get_str(skill, "content")));
}

static const char *
check_skill_cm(json_object *o, const void *arg)
{
	json_object *pack = (json_object *)(uintptr_t)arg;
	json_object *skills = jx_get(pack, "spec.skills");
	json_object *data = jx_get(o, "data");
	struct optest_owner own
	        = { "SkillPack", SKP, jx_get_str(pack, "metadata.uid") };
	const char *why;

	if (o == NULL) {
		return ("absent");
	}
	if ((why = label_is(o, "sympozium.ai/component", "skillpack")) != NULL
	        || (why = label_is(o, "sympozium.ai/skillpack", SKP))
	                != NULL) {
		return (why);
	}
	if (data == NULL
	        || json_object_object_length(data)
	                != (int)json_object_array_length(skills)) {
		return ("data does not hold one key per skill");
	}
	for (size_t i = 0; i < json_object_array_length(skills); i++) {
		json_object *s = json_object_array_get_idx(skills, i);
		char *key = xasprintf("%s.md", jx_get_str(s, "name"));
		char *want = skill_value(s);
		json_object *v = jx_getv(data, key, NULL);
		bool ok = v != NULL
		        && strcmp(json_object_get_string(v), want) == 0;
		free(key);
		free(want);
		if (!ok) {
			return ("a skill's key is missing or its value differs"
			        " from \"# <name>\\n\\n> <description>\\n\\n"
			        "<content>\"");
		}
	}
	return (optest_check_owner(o, &own));
}

static void
test_skillpack(void **state)
{
	json_object *pack = NULL;

	(void)state;
	need_samples();
	optest_wait_obj(&F, &R_SKP, NS, SKP, check_skillpack, NULL);
	assert_int_equal(
	        kapi_get(F.a.c, &R_SKP, NS, SKP, &pack, NULL), KAPI_OK);
	optest_wait_obj(&F, &R_CM, NS, SKP, check_skill_cm, pack);
	json_object_put(pack);
}

static const char *
check_instance(json_object *o, const void *arg)
{
	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	if (strcmp(jx_get_str(o, "status.phase") ?: "", "Running") != 0) {
		return ("status.phase is not Running (no run is Running or "
		        "Serving)");
	}
	return (NULL);
}

static const char *
check_memory_cm(json_object *o, const void *arg)
{
	const struct optest_owner *own = arg;
	const char *md = jx_getv(o, "data", "MEMORY.md", NULL) != NULL
	        ? json_object_get_string(jx_getv(o, "data", "MEMORY.md", NULL))
	        : NULL;
	const char *why;

	if (o == NULL) {
		return ("absent");
	}
	if ((why = label_is(o, "sympozium.ai/instance", own->name)) != NULL
	        || (why = label_is(o, "sympozium.ai/component", "memory"))
	                != NULL) {
		return (why);
	}
	if (md == NULL || strcmp(md, MEM_MD) != 0) {
		return ("data.MEMORY.md is not the initial text");
	}
	return (optest_check_owner(o, own));
}

static void
test_instances(void **state)
{
	(void)state;
	need_samples();
	for (int i = 0; INSTANCES[i] != NULL; i++) {
		char *uid, *cm;
		struct optest_owner own;

		optest_wait_obj(
		        &F, &R_INST, NS, INSTANCES[i], check_instance, NULL);
		uid = uid_of(&R_INST, INSTANCES[i]);
		own = (struct optest_owner) { "SympoziumInstance",
			INSTANCES[i], uid };
		cm = xasprintf("%s-memory", INSTANCES[i]);
		optest_wait_obj(&F, &R_CM, NS, cm, check_memory_cm, &own);
		free(cm);
		free(uid);
	}
}

static const char *
check_failed_run(json_object *o, const void *arg)
{
	const char *err = jx_get_str(o, "status.error");

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	if (strcmp(jx_get_str(o, "status.phase") ?: "", "Failed") != 0) {
		return ("status.phase is not Failed");
	}
	if (err == NULL || strncmp(err, RUN_ERR, strlen(RUN_ERR)) != 0) {
		return ("status.error does not start with '" RUN_ERR "'");
	}
	if (jx_get_str(o, "status.completedAt") == NULL) {
		return ("status.completedAt missing");
	}
	if (jx_get(o, "metadata.finalizers") != NULL
	        && json_object_array_length(jx_get(o, "metadata.finalizers"))
	                > 0) {
		return ("a terminal run still has a finalizer");
	}
	return (NULL);
}

static void
test_runs_missing_instance(void **state)
{
	(void)state;
	need_samples();
	for (int i = 0; RUNS[i] != NULL; i++) {
		optest_wait_obj(
		        &F, &R_RUN, NS, RUNS[i], check_failed_run, NULL);
	}
}

/* Names of the objects of r in NS with an ownerReference, joined by
 * spaces in list order, written to out. */
static void
owned_names(const struct kapi_res *r, struct buf *out)
{
	json_object *items = NULL;

	assert_int_equal(kapi_list_all(F.a.c, r, NS, NULL, &items, NULL, NULL),
	        KAPI_OK);
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *o = json_object_array_get_idx(items, i);
		json_object *refs = jx_get(o, "metadata.ownerReferences");
		if (refs != NULL && json_object_array_length(refs) > 0) {
			buf_printf(out, "%s ", jx_get_str(o, "metadata.name"));
		}
	}
	json_object_put(items);
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The names in want[0..n) sorted and joined as owned_names() prints. */
static void
joined(char **want, size_t n, struct buf *out)
{
	qsort(want, n, sizeof(*want), cmp_str);
	for (size_t i = 0; i < n; i++) {
		buf_printf(out, "%s ", want[i]);
		free(want[i]);
	}
}

/* The memory-server Deployments <instance>-memory the spec (0.3) gives
 * instances that use the "memory" SkillPack, joined into out (reset). */
static void
memory_servers(struct buf *out)
{
	json_object *insts = NULL;
	char *want[64];
	size_t n = 0;

	buf_reset(out);
	assert_int_equal(
	        kapi_list_all(F.a.c, &R_INST, NS, NULL, &insts, NULL, NULL),
	        KAPI_OK);
	for (size_t i = 0; i < json_object_array_length(insts) && n < 60;
	        i++) {
		json_object *o = json_object_array_get_idx(insts, i);
		json_object *sk = jx_get(o, "spec.skills");
		for (size_t j = 0; j < jx_array_len(sk); j++) {
			const char *ref
			        = jx_get_str(json_object_array_get_idx(sk, j),
			                "skillPackRef");
			if (ref != NULL && strcmp(ref, "memory") == 0) {
				char *d = NULL;
				assert_true(
				        asprintf(&d, "%s-memory",
				                jx_get_str(o, "metadata.name"))
				        > 0);
				want[n++] = d;
				break;
			}
		}
	}
	json_object_put(insts);
	joined(want, n, out);
}

/* The seed memory ConfigMaps of every enabled PersonaPack's personas with
 * seeds
 * (owned by the pack, which the write policy needs to let it delete
 * them) into want from *n. */
static void
want_seeds(char **want, size_t *n, size_t max)
{
	json_object *packs = NULL;

	assert_int_equal(
	        kapi_list_all(F.a.c, &R_PACK, NS, NULL, &packs, NULL, NULL),
	        KAPI_OK);
	for (size_t i = 0; i < json_object_array_length(packs); i++) {
		json_object *p = json_object_array_get_idx(packs, i);
		json_object *ps = jx_get(p, "spec.personas");
		bool on = false;
		if (jx_get_bool(p, "spec.enabled", &on) != 0 || !on) {
			continue; /* a catalog only */
		}
		for (size_t j = 0; j < jx_array_len(ps) && *n < max; j++) {
			json_object *e = json_object_array_get_idx(ps, j);
			char *name = NULL;
			if (jx_array_len(jx_get(e, "memory.seeds")) == 0) {
				continue;
			}
			assert_true(asprintf(&name, "%s-%s-memory",
			                    jx_get_str(p, "metadata.name"),
			                    jx_get_str(e, "name"))
			        > 0);
			want[(*n)++] = name;
		}
	}
	json_object_put(packs);
}

/* No child beyond those the spec gives.  The SkillPack's ConfigMap and
 * the two instances' memory ConfigMaps, the PersonaPacks' seed memory
 * ConfigMaps; for every run a schedule made
 * (the PersonaPack's stamped schedules and the heartbeat sample) its
 * input ConfigMap; a Job for every run that got one (status.jobName);
 * as Deployments only the memory servers of instances using the "memory"
 * SkillPack (no sample has channels or MCP servers).  The alice runs
 * failed before any child. */
static void
test_no_other_children(void **state)
{
	struct buf got = BUF_INIT, cms = BUF_INIT, jobs = BUF_INIT;
	char *want_cm[64], *want_job[64];
	size_t ncm = 0, njob = 0;
	json_object *runs = NULL;

	(void)state;
	need_samples();
	ksim_wait_quiet(F.a.request_log, UA_SD, 1000, WAIT_MS);
	want_cm[ncm++] = strdup("code-review-sample");
	want_cm[ncm++] = strdup("my-github-agent-memory");
	want_cm[ncm++] = strdup("secure-alice-memory");
	want_seeds(want_cm, &ncm, 30);
	assert_int_equal(
	        kapi_list_all(F.a.c, &R_RUN, NS, NULL, &runs, NULL, NULL),
	        KAPI_OK);
	for (size_t i = 0; i < json_object_array_length(runs) && ncm < 60;
	        i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		const char *name = jx_get_str(r, "metadata.name");
		const char *job = jx_get_str(r, "status.jobName");
		if (jx_getv(r, "metadata", "labels", "sympozium.ai/schedule",
		            NULL)
		        != NULL) {
			char *n = NULL;
			assert_true(asprintf(&n, "%s-input", name) > 0);
			want_cm[ncm++] = n;
		}
		if (job != NULL && job[0] != '\0') {
			want_job[njob++] = strdup(job);
		}
	}
	json_object_put(runs);
	joined(want_cm, ncm, &cms);
	joined(want_job, njob, &jobs);
	owned_names(&R_CM, &got);
	if (strcmp(buf_str(&got), buf_str(&cms)) != 0) {
		fail_msg("owned ConfigMaps: got \"%s\", want \"%s\"",
		        buf_str(&got), buf_str(&cms));
	}
	buf_reset(&got);
	owned_names(&R_JOB, &got);
	assert_string_equal(buf_str(&got), buf_str(&jobs));
	buf_reset(&got);
	owned_names(&R_DEP, &got);
	memory_servers(&jobs);
	assert_string_equal(buf_str(&got), buf_str(&jobs));
	buf_fini(&got);
	buf_fini(&cms);
	buf_fini(&jobs);
}

static void
test_skillpack_delete(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	need_samples();
	if (kapi_delete(F.a.c, &R_SKP, NS, SKP, NULL, NULL, &e) != KAPI_OK) {
		fail_msg("DELETE skillpack: %s", e.message);
	}
	kapi_err_fini(&e);
	optest_wait_obj(&F, &R_CM, NS, SKP, optest_check_absent, NULL);
	optest_wait_obj(&F, &R_SKP, NS, SKP, optest_check_absent, NULL);
	/* The supervisor deleted it, not only the garbage collector. */
	assert_true(ksim_count_log(F.a.request_log, "DELETE",
	                    "/configmaps/" SKP, UA_SD)
	        >= 1);
}

static void
test_steady_state(void **state)
{
	int before, after, skip;

	(void)state;
	ksim_wait_quiet(F.a.request_log, UA_SD, 1000, WAIT_MS);
	skip = ksim_log_lines(F.a.request_log);
	before = ksim_writes_after(F.a.request_log, UA_SD, 0, false);
	ksim_sleep_ms(QUIET_MS);
	after = ksim_writes_after(F.a.request_log, UA_SD, 0, false);
	if (after != before) {
		(void)ksim_writes_after(F.a.request_log, UA_SD, skip, true);
		fail_msg("%d write(s) by the supervisor in %d ms of steady "
		         "state; want 0",
		        after - before, QUIET_MS);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_apply),
		cmocka_unit_test(test_skillpack),
		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_runs_missing_instance),
		cmocka_unit_test(test_no_other_children),
		cmocka_unit_test(test_skillpack_delete),
		cmocka_unit_test(test_steady_state),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
