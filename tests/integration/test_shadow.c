/*
 * test_shadow.c: shadow mode (--shadow) against kubesim.  A normal
 * sympoziumd reconciles our samples (deploy/samples) until nothing more
 * is written, and stops; then a --shadow sympoziumd runs against the same
 * kubesim: it must send no write and list no pending write (sympoziumctl
 * shadow --json); after the test deletes the SkillPack's ConfigMap, the
 * shadow lists exactly the create that would restore it, still without
 * sending it.
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
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 60000
#define UA      "sympoziumd"
/* The SkillPack sample's ConfigMap: named as the SkillPack (upstream
 * internal/controller/skillpack_controller.go, the ConfigMap's Name). */
#define SKP_CM "demo-skills"

static struct optest F;
static int skip_lines; /* request log lines before the shadow started */

static void
apply_doc(json_object *o)
{
	const char *api = jx_get_str(o, "apiVersion");
	const char *kind = jx_get_str(o, "kind");
	const char *ns = jx_get_str(o, "metadata.namespace");
	struct kapi_res r = { "sympozium.ai", "v1alpha1", NULL, true };

	assert_non_null(api);
	assert_non_null(kind);
	if (strcmp(kind, "Kustomization") == 0) {
		return;
	}
	if (strcmp(kind, "Secret") == 0) {
		r = (struct kapi_res) { "", "v1", "secrets", true };
	} else {
		r.plural = optest_plural(kind);
		assert_non_null(r.plural);
	}
	optest_create_or_fail(&F, &r, ns != NULL ? ns : "default", o, NULL);
}

static void
apply_samples(void)
{
	/* Not the schedule sample: it fires every minute, and a run that
	 * falls due between the two passes is new work the shadow rightly
	 * lists, not drift (seen when a minute boundary fell between them). */
	static const char *const files[]
	        = { "secret.yaml", "sympoziumpolicy.yaml", "skillpack.yaml",
		          "sympoziuminstance.yaml", "personapack.yaml",
		          "mcpserver.yaml", "sympoziumconfig.yaml" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = xasprintf("deploy/samples/%s", files[i]);
		json_object *docs = testutil_read_yaml(path);

		assert_non_null(docs);
		for (size_t j = 0; j < json_object_array_length(docs); j++) {
			json_object *d = json_object_array_get_idx(docs, j);
			json_object *ps = jx_get(d, "spec.personas");

			/* the pack stamps its instance, not its schedule (a
			 * tick between the passes, as above) */
			for (size_t k = 0; k < jx_array_len(ps); k++) {
				json_object_object_del(
				        json_object_array_get_idx(ps, k),
				        "schedule");
			}
			apply_doc(d);
		}
		json_object_put(docs);
		free(path);
	}
}

/* sympoziumctl --json shadow: the reply (caller puts). */
static json_object *
shadow_reply(void)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        F.dir, NULL, "--socket", F.sock, "--json", "shadow", NULL);
	json_object *o;

	if (r.rc != 0) {
		fail_msg("sympoziumctl --json shadow: exit %d: %s%s", r.rc,
		        r.out, r.err);
	}
	o = jx_parse(r.out, strlen(r.out), 0, NULL, 0);
	if (o == NULL) {
		fail_msg("sympoziumctl --json shadow: not JSON: %s", r.out);
	}
	sdproc_ctl_free(&r);
	return (o);
}

static int
group_setup(void **state)
{
	const char *args[] = { "--health-socket", "", NULL };

	*state = &F;
	if (optest_start(&F, "test-shadow", NULL, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	args[1] = F.sock;
	optest_sd_start(&F, 0, 0, args);
	return (0);
}

/* (1) a converged cluster: the shadow has nothing to write. */
static void
test_converged_no_pending(void **state)
{
	const char *args[] = { "--shadow", "--health-socket", F.sock, NULL };
	const struct kapi_res skp
	        = { "sympozium.ai", "v1alpha1", "skillpacks", true };
	const struct kapi_res cm = { "", "v1", "configmaps", true };
	json_object *rep;
	size_t n;

	(void)state;
	apply_samples();
	/* Converged means the children exist, not only a quiet spell: under
	 * load a worker can be slow to take its first key for longer than
	 * the quiet window (CI once stopped the first pass before the
	 * SkillPack's ConfigMap was made, and the shadow rightly listed it).
	 */
	optest_wait_field(
	        &F, &skp, "default", SKP_CM, "status.phase", "Ready");
	optest_wait_obj(
	        &F, &cm, "default", SKP_CM, optest_check_present, NULL);
	ksim_wait_quiet(F.a.request_log, UA, 5000, WAIT_MS);
	optest_sd_sigterm(&F, 0, 15000);
	skip_lines = ksim_log_lines(F.a.request_log);
	optest_sd_start(&F, 1, 0, args);
	assert_true(sdproc_log_wait(&F.sd[1], "caches synced", 1, WAIT_MS));
	sleep(8); /* every key reconciled at least once */
	rep = shadow_reply();
	assert_true(jx_get(rep, "shadow") != NULL);
	n = jx_array_len(jx_get(rep, "pending"));
	if (n != 0) {
		fail_msg("converged, yet pending: %s",
		        json_object_to_json_string(jx_get(rep, "pending")));
	}
	json_object_put(rep);
	assert_int_equal(
	        ksim_writes_after(F.a.request_log, UA, skip_lines, true), 0);
}

static bool
lists_cm_create(json_object *rep)
{
	json_object *a = jx_get(rep, "pending");

	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *r = json_object_array_get_idx(a, i);
		if (strcmp(jx_get_str(r, "name") ?: "", SKP_CM) == 0
		        && strcmp(jx_get_str(r, "verb") ?: "", "create") == 0
		        && strcmp(jx_get_str(r, "resource") ?: "",
		                   "configmaps")
		                == 0
		        && strcmp(jx_get_str(r, "controller") ?: "",
		                   "skillpack")
		                == 0) {
			return (true);
		}
	}
	return (false);
}

/* (2) a drifted child: exactly the write that would fix it, not sent. */
static void
test_drift_listed(void **state)
{
	const struct kapi_res cm = { "", "v1", "configmaps", true };
	struct kapi_err e = KAPI_ERR_INIT;
	int64_t end;
	json_object *rep = NULL;

	(void)state;
	assert_int_equal(
	        kapi_delete(F.a.c, &cm, "default", SKP_CM, NULL, NULL, &e),
	        KAPI_OK);
	kapi_err_fini(&e);
	end = ksim_now_ms() + WAIT_MS;
	for (;;) {
		json_object_put(rep);
		rep = shadow_reply();
		if (lists_cm_create(rep) || ksim_now_ms() > end) {
			break;
		}
		usleep(200 * 1000);
	}
	if (!lists_cm_create(rep)
	        || jx_array_len(jx_get(rep, "pending")) != 1) {
		fail_msg("want the one create of %s, have %s", SKP_CM,
		        json_object_to_json_string(rep));
	}
	json_object_put(rep);
	/* the ConfigMap stays deleted: nothing went to kubesim */
	assert_int_equal(
	        ksim_writes_after(F.a.request_log, UA, skip_lines, true), 0);
	assert_int_equal(kapi_get(F.a.c, &cm, "default", SKP_CM, NULL, &e),
	        KAPI_ENOTFOUND);
	kapi_err_fini(&e);
	assert_true(sdproc_log_count(F.sd[1].log,
	                    "shadow: skillpack would "
	                    "create configmaps")
	        >= 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_converged_no_pending),
		cmocka_unit_test(test_drift_listed),
	};

	return (cmocka_run_group_tests(tests, group_setup, optest_teardown));
}
