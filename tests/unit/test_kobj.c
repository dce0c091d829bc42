/*
 * test_kobj.c: the object helpers of workers/kobj.h that build pieces of
 * child objects (kobj_env_add).  The event writes are in test_kobj_event.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "workers/kobj.h"

static void
test_env_add(void **state)
{
	json_object *env = json_object_new_array();
	char *s;

	(void)state;
	kobj_env_add(env, "A", "1");
	kobj_env_add(env, "EMPTY", "");
	kobj_env_add(env, "UNSET", NULL);
	kobj_env_add(env, NULL, "x");
	s = jx_to_string(env);
	assert_string_equal(s,
	        "[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"EMPTY\"},"
	        "{\"name\":\"UNSET\"},{\"name\":\"\",\"value\":\"x\"}]");
	free(s);
	json_object_put(env);
}

/* Child images (upstream agentrun_controller.go imageRef,
 * sympoziuminstance_controller.go, mcpserver_controller.go
 * mcpBridgeImage): <registry>/<name>:<tag>, registry defaulting to
 * ghcr.io/sympozium-ai/sympozium and tag to the build's (main.imageTag
 * upstream, IMAGE_TAG in our Makefile, "latest" by default). */
static void
test_image(void **state)
{
	char out[256], want[256];

	(void)state;
	assert_string_not_equal(kobj_image_tag(), "");
	snprintf(want, sizeof(want), "ghcr.io/sympozium-ai/sympozium/x:%s",
	        kobj_image_tag());
	kobj_image(out, sizeof(out), NULL, "x", NULL);
	assert_string_equal(out, want);
	kobj_image(out, sizeof(out), "", "x", "");
	assert_string_equal(out, want);
	kobj_image(out, sizeof(out), "reg.example/y", "x", "v1.2");
	assert_string_equal(out, "reg.example/y/x:v1.2");
}

/* kobj_set_condition(): meta.SetStatusCondition's rules (added by type,
 * updated in place, lastTransitionTime kept while the status stays). */
static void
test_set_condition(void **state)
{
	json_object *st = json_tokener_parse(
	        "{\"conditions\":[{\"type\":\"Deployed\",\"status\":"
	        "\"True\"}]}");
	json_object *c;

	(void)state;
	kobj_set_condition(st, "Ready", "False", "Pending", "wait", 3,
	        1767225600000); /* 2026-01-01T00:00:00Z */
	assert_int_equal(jx_array_len(jx_get(st, "conditions")), 2);
	c = json_object_array_get_idx(jx_get(st, "conditions"), 1);
	assert_string_equal(jx_get_str(c, "type"), "Ready");
	assert_string_equal(jx_get_str(c, "status"), "False");
	assert_string_equal(jx_get_str(c, "reason"), "Pending");
	assert_string_equal(jx_get_str(c, "message"), "wait");
	assert_string_equal(
	        jx_get_str(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	/* same status later: only reason, message, generation move */
	kobj_set_condition(
	        st, "Ready", "False", "Still", "more", 4, 1767225660000);
	assert_int_equal(jx_array_len(jx_get(st, "conditions")), 2);
	assert_string_equal(jx_get_str(c, "reason"), "Still");
	assert_string_equal(
	        jx_get_str(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	/* a new status: a new transition time */
	kobj_set_condition(st, "Ready", "True", "Ok", "", 4, 1767225720000);
	assert_string_equal(
	        jx_get_str(c, "lastTransitionTime"), "2026-01-01T00:02:00Z");
	json_object_put(st);
	/* conditions not an array: replaced by one */
	st = json_tokener_parse("{\"conditions\":\"x\"}");
	kobj_set_condition(st, "Ready", "True", "Ok", "", 1, 0);
	assert_int_equal(jx_array_len(jx_get(st, "conditions")), 1);
	json_object_put(st);
}

/* Later upstream fixes #202 (7c75147: agentrun_controller.go imageRef,
 * orchestrator/podbuilder.go resolveImageRegistry) and #244 (604dd57:
 * cmd/controller/main.go, imageTag from SYMPOZIUM_IMAGE_TAG at startup):
 * every child image takes SYMPOZIUM_IMAGE_REGISTRY and
 * SYMPOZIUM_IMAGE_TAG when set and not empty; explicit arguments still
 * win. */
static void
test_image_env(void **state)
{
	char out[256], want[256];

	(void)state;
	setenv("SYMPOZIUM_IMAGE_REGISTRY", "reg.local/sy", 1);
	setenv("SYMPOZIUM_IMAGE_TAG", "v0.9.1", 1);
	kobj_image(out, sizeof(out), NULL, "agent-runner", NULL);
	assert_string_equal(out, "reg.local/sy/agent-runner:v0.9.1");
	kobj_image(out, sizeof(out), "", "ipc-bridge", "");
	assert_string_equal(out, "reg.local/sy/ipc-bridge:v0.9.1");
	kobj_image(out, sizeof(out), "reg.example/y", "x", "v1.2");
	assert_string_equal(out, "reg.example/y/x:v1.2");
	/* only the tag set */
	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	kobj_image(out, sizeof(out), NULL, "sandbox", NULL);
	assert_string_equal(
	        out, "ghcr.io/sympozium-ai/sympozium/sandbox:v0.9.1");
	/* empty values count as unset */
	setenv("SYMPOZIUM_IMAGE_REGISTRY", "", 1);
	setenv("SYMPOZIUM_IMAGE_TAG", "", 1);
	snprintf(want, sizeof(want), "ghcr.io/sympozium-ai/sympozium/x:%s",
	        kobj_image_tag());
	kobj_image(out, sizeof(out), NULL, "x", NULL);
	assert_string_equal(out, want);
	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	unsetenv("SYMPOZIUM_IMAGE_TAG");
}

/* Later upstream fix #167 (imagepullpolicy.go ResolveImagePullPolicy and
 * its test, commit 74a0895): Always, IfNotPresent and Never are kept;
 * empty or unknown values are not a policy (the caller's fallback). */
static void
test_pull_policy(void **state)
{
	(void)state;
	assert_string_equal(kobj_pull_policy("Always"), "Always");
	assert_string_equal(kobj_pull_policy("IfNotPresent"), "IfNotPresent");
	assert_string_equal(kobj_pull_policy("Never"), "Never");
	assert_null(kobj_pull_policy(""));
	assert_null(kobj_pull_policy("Bogus"));
	assert_null(kobj_pull_policy("always"));
	assert_null(kobj_pull_policy(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_add),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_set_condition),
		cmocka_unit_test(test_image_env),
		cmocka_unit_test(test_pull_policy),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
