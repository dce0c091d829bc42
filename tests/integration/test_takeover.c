/*
 * test_takeover.c: the operator started on a namespace that upstream's
 * operator has been managing.  The fixtures are what upstream's
 * mcpserver_controller.go (008266e: reconcileDeployment and
 * reconcileService, controllerutil.CreateOrUpdate with
 * SetControllerReference) leaves: a Deployment and a Service named like
 * the MCPServer, controlled by it, with no metadata labels, which our
 * label-selected child watches cannot see.  They are made in kubesim
 * before bin/sympoziumd starts.  Checked through kubesim's request log
 * and the objects: both are adopted with one JSON patch each (same uid,
 * never re-created, no create request at all), the MCPServer becomes
 * ready; an object of the MCPServer's name that it does not control is
 * not taken over (an error in the log, nothing written to it).  A
 * PersonaPack's stamp name held by an instance nobody owns (a user's) is
 * adopted as upstream's personapack_controller.go reconcilePersona takes
 * it over: same uid, the pack's controller reference and label added,
 * the user's labels kept, the pack's model synced, no create.
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

#define WAIT_MS 15000
#define UA_SD   "sympoziumd"
#define NS      "takeover"
#define LABEL   "sympozium.ai/mcp-server"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_MCP
        = { "sympozium.ai", "v1alpha1", "mcpservers", true };
static const struct kapi_res R_INST
        = { "sympozium.ai", "v1alpha1", "sympoziuminstances", true };
static const struct kapi_res R_PACK
        = { "sympozium.ai", "v1alpha1", "personapacks", true };

static struct optest F;
/* uids of upstream's children, as made */
static char dep_uid[64], svc_uid[64];
/* the user's instance team-lead, as made */
static char inst_uid[64];

static void
create(const struct kapi_res *r, json_object *o)
{
	optest_create_or_fail(&F, r, NS, o, NULL);
	json_object_put(o);
}

/* The uid of r ns/name (asserted to exist) into buf. */
static void
uid_of(const struct kapi_res *r, const char *name, char *buf, size_t n)
{
	json_object *o = optest_get(&F, r, NS, name);

	assert_non_null(o);
	snprintf(buf, n, "%s", jx_get_str(o, "metadata.uid") ?: "");
	json_object_put(o);
}

static void
create_mcp(const char *name)
{
	create(&R_MCP,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"MCPServer\",\"metadata\":{\"name\":"
	                       "\"%s\"},\"spec\":{\"transportType\":\"http\","
	                       "\"toolsPrefix\":\"t\",\"deployment\":{"
	                       "\"image\":\"img:1\",\"port\":9000}}}",
	                name));
}

/* upstream's controller reference to MCPServer name (uid) */
#define OWNER_FMT                                                             \
	"\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/v1alpha1\","     \
	"\"kind\":\"MCPServer\",\"name\":\"%s\",\"uid\":\"%s\","              \
	"\"controller\":true,\"blockOwnerDeletion\":true}]"
/* the selector labels upstream puts on the pods */
#define POD_LABELS_FMT                                                        \
	"{\"app.kubernetes.io/name\":\"mcpserver\","                          \
	"\"app.kubernetes.io/instance\":\"%s\","                              \
	"\"app.kubernetes.io/managed-by\":\"sympozium\"}"

/* upstream's children of MCPServer mcp-up */
static void
create_upstream_children(void)
{
	char uid[64];

	uid_of(&R_MCP, "mcp-up", uid, sizeof(uid));
	create(&R_DEP,
	        testutil_jsonf("{\"apiVersion\":\"apps/v1\",\"kind\":"
	                       "\"Deployment\",\"metadata\":{\"name\":"
	                       "\"mcp-up\"," OWNER_FMT "},\"spec\":{"
	                       "\"replicas\":1,\"selector\":{\"matchLabels\":"
	                       "" POD_LABELS_FMT
	                       "},\"template\":{\"metadata\":"
	                       "{\"labels\":" POD_LABELS_FMT "},\"spec\":{"
	                       "\"containers\":[{\"name\":\"mcp-server\","
	                       "\"image\":\"img:1\",\"ports\":[{\"name\":"
	                       "\"http\",\"containerPort\":9000,\"protocol\":"
	                       "\"TCP\"}]}]}}}}",
	                "mcp-up", uid, "mcp-up", "mcp-up"));
	create(&R_SVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                       "\"metadata\":{\"name\":\"mcp-up\"," OWNER_FMT
	                       "},\"spec\":{\"selector\":{"
	                       "\"app.kubernetes.io/name\":\"mcpserver\","
	                       "\"app.kubernetes.io/instance\":\"mcp-up\"},"
	                       "\"ports\":[{\"name\":\"http\",\"port\":9000,"
	                       "\"targetPort\":9000,\"protocol\":\"TCP\"}]}}",
	                "mcp-up", uid));
	uid_of(&R_DEP, "mcp-up", dep_uid, sizeof(dep_uid));
	uid_of(&R_SVC, "mcp-up", svc_uid, sizeof(svc_uid));
}

static int
setup(void **state)
{
	*state = &F;
	if (optest_start(&F, "test-takeover", NULL, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	assert_int_equal(
	        ksim_api_create(&F.a, &R_NS, NULL, NS, NULL), KAPI_OK);
	create_mcp("mcp-up");
	create_upstream_children();
	/* a Service of the name that nobody controls (a user's) */
	create_mcp("mcp-orphan");
	create(&R_SVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                       "\"metadata\":{\"name\":\"mcp-orphan\"},"
	                       "\"spec\":{\"ports\":[{\"port\":80}]}}"));
	/* a user's instance, then a pack that stamps that name */
	create(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"SympoziumInstance\",\"metadata\":"
	                       "{\"name\":\"team-lead\",\"labels\":{"
	                       "\"owner\":\"user\"}},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"old-model\"}}}}"));
	uid_of(&R_INST, "team-lead", inst_uid, sizeof(inst_uid));
	create(&R_PACK,
	        testutil_jsonf("{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                       "\"kind\":\"PersonaPack\",\"metadata\":{"
	                       "\"name\":\"team\"},\"spec\":{\"enabled\":"
	                       "true,\"personas\":[{\"name\":\"lead\","
	                       "\"systemPrompt\":\"You lead.\",\"model\":"
	                       "\"new-model\"}]}}"));
	optest_sd_start(&F, 0, 0, NULL);
	return (0);
}

/* Whether the object carries LABEL valued name. */
static const char *
check_label(json_object *o, const void *arg)
{
	json_object *v = jx_getv(o, "metadata", "labels", LABEL, NULL);

	if (o == NULL) {
		return ("absent");
	}
	return (v != NULL && strcmp(json_object_get_string(v), arg) == 0
	                ? NULL
	                : "not labelled " LABEL);
}

static const char *
check_ready(json_object *o, const void *arg)
{
	bool ready = false;

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	return (jx_get_bool(o, "status.ready", &ready) == 0 && ready
	                ? NULL
	                : "status.ready is not true");
}

static int
sd_requests(const char *method, const char *frag)
{
	int n = ksim_count_log(F.a.request_log, method, frag, UA_SD);

	assert_true(n >= 0);
	return (n);
}

/* Upstream's children are adopted in place, the server becomes ready,
 * and nothing is created. */
static void
test_adopted(void **state)
{
	char uid[64];

	(void)state;
	optest_wait_obj(&F, &R_DEP, NS, "mcp-up", check_label, "mcp-up");
	optest_wait_obj(&F, &R_SVC, NS, "mcp-up", check_label, "mcp-up");
	optest_wait_obj(&F, &R_MCP, NS, "mcp-up", check_ready, NULL);
	uid_of(&R_DEP, "mcp-up", uid, sizeof(uid));
	assert_string_equal(uid, dep_uid);
	uid_of(&R_SVC, "mcp-up", uid, sizeof(uid));
	assert_string_equal(uid, svc_uid);
	assert_int_equal(sd_requests("POST", "/namespaces/" NS "/deploy"), 0);
	assert_int_equal(
	        sd_requests("POST", "/namespaces/" NS "/services"), 0);
	assert_int_equal(
	        sd_requests("PATCH", "/namespaces/" NS "/deployments/mcp-up"),
	        1);
	assert_int_equal(
	        sd_requests("PATCH", "/namespaces/" NS "/services/mcp-up"), 1);
}

/* An object of the name that the MCPServer does not control is left
 * alone, and the log says why. */
static void
test_not_controlled(void **state)
{
	json_object *svc;

	(void)state;
	assert_true(sdproc_log_wait(&F.sd[0], "not taken over", 1, WAIT_MS));
	assert_int_equal(
	        sd_requests(NULL, "/namespaces/" NS "/services/mcp-orphan")
	                - sd_requests("GET",
	                        "/namespaces/" NS "/services/mcp-orphan"),
	        0);
	svc = optest_get(&F, &R_SVC, NS, "mcp-orphan");
	assert_non_null(svc);
	assert_null(jx_getv(svc, "metadata", "labels", NULL));
	assert_null(jx_getv(svc, "metadata", "ownerReferences", NULL));
	json_object_put(svc);
}

/* The instance is the pack's, synced: its controller reference and
 * label, the persona's model and prompt. */
static const char *
check_adopted(json_object *o, const void *arg)
{
	json_object *refs = jx_getv(o, "metadata", "ownerReferences", NULL);
	json_object *r = json_object_array_get_idx(refs, 0);
	bool ctl = false;

	(void)arg;
	if (o == NULL) {
		return ("absent");
	}
	if (jx_array_len(refs) != 1
	        || strcmp(jx_get_str(r, "kind") ?: "", "PersonaPack") != 0
	        || strcmp(jx_get_str(r, "name") ?: "", "team") != 0
	        || jx_get_bool(r, "controller", &ctl) != 0 || !ctl) {
		return ("no controller reference to PersonaPack team");
	}
	if (strcmp(jx_get_str(o, "spec.agents.default.model") ?: "",
	            "new-model")
	        != 0) {
		return ("model not synced");
	}
	if (strcmp(jx_get_str(o, "spec.memory.systemPrompt") ?: "",
	            "You lead.")
	        != 0) {
		return ("systemPrompt not synced");
	}
	return (NULL);
}

/* The user's instance of a stamp name is adopted, not re-created; the
 * pack counts it installed. */
static void
test_pack_adopts_orphan(void **state)
{
	json_object *o, *v;
	char uid[64];
	int64_t n = -1;

	(void)state;
	optest_wait_obj(&F, &R_INST, NS, "team-lead", check_adopted, NULL);
	uid_of(&R_INST, "team-lead", uid, sizeof(uid));
	assert_string_equal(uid, inst_uid);
	o = optest_get(&F, &R_INST, NS, "team-lead");
	v = jx_getv(
	        o, "metadata", "labels", "sympozium.ai/persona-pack", NULL);
	assert_string_equal(json_object_get_string(v), "team");
	v = jx_getv(o, "metadata", "labels", "owner", NULL);
	assert_string_equal(json_object_get_string(v), "user");
	json_object_put(o);
	assert_int_equal(
	        sd_requests("POST", "/namespaces/" NS "/sympoziuminstances"),
	        0);
	/* the adoption, then the instance controller's own (finalizer) */
	assert_true(sd_requests("PATCH",
	                    "/namespaces/" NS "/sympoziuminstances/team-lead")
	        >= 1);
	assert_true(sdproc_log_wait(&F.sd[0],
	        "adopting SympoziumInstance team-lead, which has no owner", 1,
	        WAIT_MS));
	o = optest_get(&F, &R_PACK, NS, "team");
	assert_non_null(o);
	assert_int_equal(jx_get_int(o, "status.installedCount", &n), 0);
	assert_int_equal(n, 1);
	json_object_put(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adopted),
		cmocka_unit_test(test_not_controlled),
		cmocka_unit_test(test_pack_adopts_orphan),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
