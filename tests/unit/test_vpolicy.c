/* test_vpolicy.c: the view policy (supervisor/vpolicy): the view tables
 * of common/contract.c against what the reconcilers read, each rule, the
 * per-reconcile meter and the metadata-only shape of a Secret. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/jsonx.h"
#include "supervisor/vpolicy.h"

static const struct ipc_res secrets = CONTRACT_RES_SECRETS;
static const struct ipc_res pods = CONTRACT_RES_PODS;
static const struct ipc_res configmaps = CONTRACT_RES_CONFIGMAPS;
static const struct ipc_res deployments = CONTRACT_RES_DEPLOYMENTS;
static const struct ipc_res agentruns = CONTRACT_RES_AGENTRUNS;
static const struct ipc_res instances = CONTRACT_RES_INSTANCES;
static const struct ipc_res skillpacks = CONTRACT_RES_SKILLPACKS;
static const struct ipc_res clusterroles = CONTRACT_RES_CLUSTERROLES;

#define RUN_SEL   CONTRACT_LABEL_AGENT_RUN "=r1"
#define AR        "agentrun"
#define KEY       "default/r1"
#define SYS       CONTRACT_SYSTEM_NS
#define NO_RULE   NULL
#define NOT_FOUND "(not found)"
#define BAD_SEL   "(invalid selector)"
#define NO_NS     NULL
#define NO_SEL    NULL
#define NAME_ANY  "x"
#define LONG_NAME                                                             \
	"run-with-a-name-that-is-far-too-long-to-be-a-label-value-0123456789"
#define SEL_IN_RUN RUN_SEL "," CONTRACT_LABEL_MANAGED_BY "=sympozium"

/* The rule vpol_check() names for the request (NULL: allowed,
 * NOT_FOUND: answered "not found" unasked). */
static const char *
rule(const char *ctrl, const char *key, enum ipc_view_what what,
        const struct ipc_res *res, const char *ns, const char *name,
        const char *sel)
{
	struct ipc_view_req req = { .id = 1,
		.what = what,
		.namespace = ns,
		.name = name,
		.label_selector = sel,
		.tail_lines = -1 };
	struct vpol_violation v = { 0 };
	const struct contract_ctrl *c = contract_find(ctrl);
	int rc;

	assert_non_null(c);
	if (res != NULL) {
		req.res = *res;
		req.has_res = true;
	}
	rc = vpol_check(c, key, &req, &v);
	if (rc < 0) {
		assert_non_null(v.rule);
		assert_true(v.detail[0] != '\0');
		return (v.rule);
	}
	if (rc == 2) {
		return (BAD_SEL);
	}
	return (rc > 0 ? NOT_FOUND : NULL);
}

#define GET(ctl, res, ns, name)                                               \
	rule(ctl, KEY, IPC_VIEW_GET, res, ns, name, NO_SEL)
#define LIST(ctl, res, ns, sel)                                               \
	rule(ctl, KEY, IPC_VIEW_LIST, res, ns, NULL, sel)

/* What the reconcilers read (workers/: view_get, view_list,
 * view_list_fields, view_secret_meta, view_pod_log) is allowed. */
static void
test_legit_reads(void **state)
{
	(void)state;
	/* agentrun */
	assert_null(GET(AR, &instances, "default", "i1"));
	assert_null(GET(AR, &skillpacks, "default", "p"));
	assert_null(GET(AR, &skillpacks, SYS, "p"));
	assert_null(GET(AR, &configmaps, SYS, "skill"));
	assert_null(GET(AR, &configmaps, "default", "i1-memory"));
	assert_null(GET(AR, &pods, "default", "r1-pod"));
	assert_null(LIST(AR, &pods, "default", RUN_SEL));
	assert_null(LIST(
	        AR, &agentruns, "default", CONTRACT_LABEL_INSTANCE "=i1"));
	assert_null(LIST(AR, &clusterroles, NO_NS, SEL_IN_RUN));
	assert_null(rule(
	        AR, KEY, IPC_VIEW_POD_LOG, NULL, "default", "r1-pod", NO_SEL));
	/* instance, personapack, mcpserver, schedule */
	assert_null(GET("instance", &deployments, "default", "i1-memory"));
	assert_null(LIST("instance", &agentruns, "default",
	        CONTRACT_LABEL_INSTANCE "=i1"));
	assert_null(rule("instance", KEY, IPC_VIEW_SECRET_META, NULL,
	        "default", "s", NO_SEL));
	assert_null(GET("personapack", &instances, "default", "p-a"));
	assert_null(rule("mcpserver", KEY, IPC_VIEW_SECRET_META, NULL,
	        "default", "s", NO_SEL));
	assert_null(GET("schedule", &agentruns, "default", "r1"));
	assert_null(GET("schedule", &configmaps, "default", "i1-memory"));
	/* a time zone is never an API read */
	assert_null(rule("schedule", KEY, IPC_VIEW_ZONEINFO, NULL, NO_NS,
	        "Europe/Paris", NO_SEL));
}

static void
test_no_key(void **state)
{
	(void)state;
	assert_string_equal(rule(AR, NULL, IPC_VIEW_GET, &instances, "default",
	                            "i1", NO_SEL),
	        "view-no-key");
	assert_string_equal(rule("schedule", NULL, IPC_VIEW_ZONEINFO, NULL,
	                            NO_NS, "UTC", NO_SEL),
	        "view-no-key");
}

/* Secrets: their metadata view only, never a get or list, even for a
 * controller that may read their metadata. */
static void
test_secrets(void **state)
{
	(void)state;
	assert_string_equal(
	        GET("instance", &secrets, "default", "s"), "view-secret");
	assert_string_equal(
	        LIST("instance", &secrets, "default", NO_SEL), "view-secret");
	assert_string_equal(
	        GET("skillpack", &secrets, "kube-system", "s"), "view-secret");
	assert_string_equal(rule("skillpack", KEY, IPC_VIEW_SECRET_META, NULL,
	                            "default", "s", NO_SEL),
	        "view-resource");
	assert_string_equal(rule(AR, KEY, IPC_VIEW_SECRET_META, NULL,
	                            "default", "s", NO_SEL),
	        "view-resource");
}

static void
test_resources(void **state)
{
	(void)state;
	/* the skillpack reconciler reads nothing */
	assert_string_equal(GET("skillpack", &configmaps, "default", NAME_ANY),
	        "view-resource");
	/* a kind the controller does not read; a view it does not make */
	assert_string_equal(
	        GET("personapack", &pods, "default", "p"), "view-resource");
	/* the shared memory server (spec 3.4): got by name, never listed */
	assert_null(GET("personapack", &deployments, "default", "d"));
	assert_string_equal(
	        LIST("personapack", &deployments, "default", NO_SEL),
	        "view-resource");
	assert_string_equal(LIST("instance", &deployments, "default", NO_SEL),
	        "view-resource");
	assert_string_equal(
	        LIST(AR, &instances, "default", NO_SEL), "view-resource");
	assert_string_equal(rule("instance", KEY, IPC_VIEW_POD_LOG, NULL,
	                            "default", "p", NO_SEL),
	        "view-resource");
	/* the group and version count */
	struct ipc_res cm_apps = { "apps", "v1", "configmaps", true };
	struct ipc_res cm_v2 = { "", "v2", "configmaps", true };
	assert_string_equal(
	        GET(AR, &cm_apps, "default", "c"), "view-resource");
	assert_string_equal(GET(AR, &cm_v2, "default", "c"), "view-resource");
}

static void
test_namespaces(void **state)
{
	(void)state;
	assert_string_equal(
	        GET(AR, &instances, "other", "i1"), "view-namespace");
	/* built-ins only of the kinds upstream reads there */
	assert_string_equal(GET(AR, &instances, SYS, "i1"), "view-namespace");
	assert_string_equal(
	        GET("instance", &configmaps, SYS, "c"), "view-namespace");
	assert_string_equal(
	        GET(AR, &configmaps, "kube-system", "c"), "view-namespace");
	/* all namespaces at once; a namespace on a cluster-scoped list */
	assert_string_equal(
	        LIST(AR, &agentruns, NO_NS, NO_SEL), "view-namespace");
	assert_string_equal(
	        LIST(AR, &agentruns, "", NO_SEL), "view-namespace");
	assert_string_equal(LIST(AR, &clusterroles, "default", SEL_IN_RUN),
	        "view-namespace");
	assert_string_equal(rule(AR, KEY, IPC_VIEW_POD_LOG, NULL, "other",
	                            "r1-pod", NO_SEL),
	        "view-namespace");
	assert_string_equal(rule("mcpserver", KEY, IPC_VIEW_SECRET_META, NULL,
	                            "kube-system", "s", NO_SEL),
	        "view-namespace");
	/* the scope of the request builds its path: the table's only */
	struct ipc_res cm_cluster = { "", "v1", "configmaps", false };
	struct ipc_res cr_ns
	        = { "rbac.authorization.k8s.io", "v1", "clusterroles", true };
	assert_string_equal(
	        GET(AR, &cm_cluster, "default", "c"), "view-namespace");
	assert_string_equal(
	        LIST(AR, &cr_ns, NO_NS, SEL_IN_RUN), "view-namespace");
	/* a key of the system namespace reads there */
	assert_null(rule("instance", SYS "/i", IPC_VIEW_GET, &configmaps, SYS,
	        "c", NO_SEL));
}

/* The policy controller lists the instances of its key's namespace
 * (workers/policy.c), nothing else. */
static void
test_policy_views(void **state)
{
	(void)state;
	assert_null(LIST("policy", &instances, "default", NO_SEL));
	assert_string_equal(
	        GET("policy", &instances, "default", "i1"), "view-resource");
	assert_string_equal(
	        LIST("policy", &instances, "other", NO_SEL), "view-namespace");
	assert_string_equal(
	        LIST("policy", &instances, SYS, NO_SEL), "view-namespace");
	assert_string_equal(LIST("policy", &agentruns, "default", NO_SEL),
	        "view-resource");
	assert_string_equal(rule("policy", KEY, IPC_VIEW_SECRET_META, NULL,
	                            "default", "s", NO_SEL),
	        "view-resource");
}

/* The config controller reads its Gateway (a get, and the list that
 * probes whether the Gateway API is served) in its key's namespace and
 * gets the cluster's GatewayClass by name (workers/sympoziumconfig.c),
 * nothing else. */
static void
test_config_views(void **state)
{
	static const struct ipc_res gws = CONTRACT_RES_GATEWAYS;
	static const struct ipc_res gcs = CONTRACT_RES_GATEWAYCLASSES;
	static const struct ipc_res gcs_ns
	        = { CONTRACT_GATEWAY_GROUP, "v1", "gatewayclasses", true };

	(void)state;
	assert_null(GET("config", &gws, "default", "sympozium-gateway"));
	assert_null(LIST("config", &gws, "default",
	        "sympozium.ai/managed-by=sympoziumconfig"));
	assert_null(GET("config", &gcs, "", "sympozium"));
	assert_string_equal(GET("config", &gws, "other", "sympozium-gateway"),
	        "view-namespace");
	assert_string_equal(
	        LIST("config", &gws, SYS, NO_SEL), "view-namespace");
	/* no list of the cluster's classes, no class in a namespace */
	assert_string_equal(LIST("config", &gcs, "", NO_SEL), "view-resource");
	assert_string_equal(
	        GET("config", &gcs, "default", "sympozium"), "view-namespace");
	assert_string_equal(GET("config", &gcs_ns, "default", "sympozium"),
	        "view-namespace");
	assert_string_equal(
	        GET("config", &instances, "default", "i"), "view-resource");
	assert_string_equal(rule("config", KEY, IPC_VIEW_SECRET_META, NULL,
	                            "default", "s", NO_SEL),
	        "view-resource");
}

/* Lists of own objects must select the key's name by its label. */
static void
test_own_lists(void **state)
{
	(void)state;
	assert_string_equal(LIST(AR, &pods, "default", NO_SEL), "view-own");
	assert_string_equal(LIST(AR, &pods, "default", ""), "view-own");
	assert_string_equal(
	        LIST(AR, &pods, "default", CONTRACT_LABEL_AGENT_RUN "=r2"),
	        "view-own");
	assert_string_equal(
	        LIST(AR, &pods, "default", CONTRACT_LABEL_AGENT_RUN "!=r1"),
	        "view-own");
	assert_string_equal(
	        LIST(AR, &pods, "default", CONTRACT_LABEL_AGENT_RUN "=r10"),
	        "view-own");
	assert_string_equal(
	        LIST(AR, &pods, "default", "x" CONTRACT_LABEL_AGENT_RUN "=r1"),
	        "view-own");
	assert_string_equal(
	        LIST(AR, &pods, "default", CONTRACT_LABEL_AGENT_RUN),
	        "view-own");
	/* a selector labelsel refuses is no proof: answered as the API
	 * server answers one it cannot parse, without asking it; so is a
	 * run whose name is too long for a label value (a reconciler's
	 * request, not an attack) */
	assert_string_equal(
	        LIST(AR, &pods, "default", RUN_SEL ",x in (a,b)"), BAD_SEL);
	assert_string_equal(
	        rule(AR, "default/" LONG_NAME, IPC_VIEW_LIST, &clusterroles,
	                NO_NS, NULL, CONTRACT_LABEL_AGENT_RUN "=" LONG_NAME),
	        BAD_SEL);
	assert_string_equal(LIST(AR, &clusterroles, NO_NS,
	                            CONTRACT_LABEL_MANAGED_BY "=sympozium"),
	        "view-own");
	/* more requirements only narrow it; blanks and == are fine */
	assert_null(LIST(AR, &pods, "default", "a=b," RUN_SEL ",!c"));
	assert_null(LIST(
	        AR, &pods, "default", " " CONTRACT_LABEL_AGENT_RUN " == r1 "));
}

/* A name no object can have is "not found" without asking. */
static void
test_names(void **state)
{
	static const char *const bad[] = { "", ".", "..", "../x", "a/b", "A",
		"a..b", "-a", "a-", "a_b", "a%2e", "a b" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *r = GET(AR, &instances, "default", bad[i]);
		if (r == NULL || strcmp(r, NOT_FOUND) != 0) {
			fail_msg("name \"%s\": %s", bad[i], r ? r : "allowed");
		}
	}
	assert_null(GET(AR, &instances, "default", "a.b-c.0"));
}

static json_object *
pod(const char *run)
{
	json_object *o = json_tokener_parse("{\"metadata\":{\"name\":\"p\"}}");

	if (run != NULL) {
		jx_setv(o, json_object_new_string(run), "metadata", "labels",
		        CONTRACT_LABEL_AGENT_RUN, NULL);
	}
	return (o);
}

static int
object(const char *key, enum ipc_view_what what, const struct ipc_res *res,
        json_object *obj)
{
	struct ipc_view_req req
	        = { .what = what, .namespace = "default", .name = "p" };
	struct vpol_violation v = { 0 };
	int rc;

	if (res != NULL) {
		req.res = *res;
		req.has_res = true;
	}
	rc = vpol_check_object(contract_find(AR), key, &req, obj, &v);
	if (rc != 0) {
		assert_string_equal(v.rule, "view-own");
	}
	json_object_put(obj);
	return (rc);
}

/* A get or log of a pod only of the key's own. */
static void
test_own_objects(void **state)
{
	(void)state;
	assert_int_equal(object(KEY, IPC_VIEW_POD_LOG, NULL, pod("r1")), 0);
	assert_int_equal(object(KEY, IPC_VIEW_GET, &pods, pod("r1")), 0);
	assert_int_equal(object(KEY, IPC_VIEW_POD_LOG, NULL, pod("r2")), -1);
	assert_int_equal(object(KEY, IPC_VIEW_POD_LOG, NULL, pod(NULL)), -1);
	assert_int_equal(object(KEY, IPC_VIEW_GET, &pods, pod("r10")), -1);
	assert_int_equal(object(KEY, IPC_VIEW_GET, &pods, NULL), -1);
	/* a label that is not a string */
	json_object *p = pod(NULL);
	jx_setv(p, json_object_new_int(1), "metadata", "labels",
	        CONTRACT_LABEL_AGENT_RUN, NULL);
	assert_int_equal(object("default/1", IPC_VIEW_GET, &pods, p), -1);
	/* any instance will do */
	assert_int_equal(object(KEY, IPC_VIEW_GET, &instances, pod(NULL)), 0);
}

static void
test_meter_budget(void **state)
{
	struct vpol_meter m = { 0 };
	struct vpol_violation v = { 0 };

	(void)state;
	for (int i = 0; i < VPOL_VIEWS_MAX; i++) {
		assert_int_equal(vpol_meter_view(&m, 7, &v), 0);
	}
	assert_int_equal(vpol_meter_view(&m, 7, &v), -1);
	assert_string_equal(v.rule, "view-budget");
	assert_int_equal(vpol_meter_view(&m, 7, &v), -1);
	/* the next reconcile starts afresh */
	assert_int_equal(vpol_meter_view(&m, 8, &v), 0);
	assert_int_equal(m.views, 1);
}

static void
test_meter_in_flight(void **state)
{
	struct vpol_meter m = { 0 };
	struct vpol_violation v = { 0 };

	(void)state;
	for (int i = 0; i < VPOL_LIVE_MAX; i++) {
		assert_int_equal(vpol_meter_live(&m, 3, &v), 0);
	}
	assert_int_equal(vpol_meter_live(&m, 3, &v), -1);
	assert_string_equal(v.rule, "view-in-flight");
	vpol_meter_done(&m, 3);
	assert_int_equal(vpol_meter_live(&m, 3, &v), 0);
	/* the worker died (a new ticket): its old reads count no more, and
	 * their late answers change nothing */
	assert_int_equal(vpol_meter_live(&m, 4, &v), 0);
	assert_int_equal(m.live, 1);
	vpol_meter_done(&m, 3);
	assert_int_equal(m.live, 1);
	vpol_meter_done(&m, 4);
	vpol_meter_done(&m, 4);
	assert_int_equal(m.live, 0);
}

/* A Secret made with kubectl apply holds its values in an annotation:
 * none of it reaches a worker. */
static void
test_secret_meta(void **state)
{
	json_object *s = json_tokener_parse(
	        "{\"kind\":\"Secret\",\"type\":\"Opaque\","
	        "\"metadata\":{\"name\":\"s\",\"namespace\":\"default\","
	        "\"labels\":{\"sympozium.ai/persona-pack\":\"p\"},"
	        "\"annotations\":{\"kubectl.kubernetes.io/"
	        "last-applied-configuration\":\"{\\\"data\\\":{\\\"token\\\":"
	        "\\\"c2VjcmV0LXZhbHVl\\\"}}\",\"note\":\"x\"},"
	        "\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":"
	        "{\"f:data\":{\"f:token\":{}}}}]},"
	        "\"data\":{\"token\":\"c2VjcmV0LXZhbHVl\"},"
	        "\"stringData\":{\"other\":\"plain-value\"}}");
	json_object *m;
	const char *t;

	(void)state;
	assert_non_null(s);
	m = vpol_secret_meta(s);
	t = json_object_to_json_string(m);
	assert_null(strstr(t, "c2VjcmV0LXZhbHVl"));
	assert_null(strstr(t, "plain-value"));
	assert_null(strstr(t, "annotations"));
	assert_null(strstr(t, "managedFields"));
	assert_string_equal(jx_get_str(m, "type"), "Opaque");
	assert_string_equal(jx_get_str(m, "metadata.name"), "s");
	assert_string_equal(
	        json_object_get_string(jx_getv(m, "metadata", "labels",
	                "sympozium.ai/persona-pack", NULL)),
	        "p");
	assert_int_equal(jx_array_len(jx_get(m, "keys")), 1);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
	                            jx_get(m, "keys"), 0)),
	        "token");
	json_object_put(m);
	json_object_put(s);
	/* no metadata, no data */
	m = vpol_secret_meta(NULL);
	assert_int_equal(jx_array_len(jx_get(m, "keys")), 0);
	json_object_put(m);
}

/* No row of any view table gives a get or list of Secrets, and rows of
 * own objects name their label. */
static void
test_tables(void **state)
{
	const struct contract_ctrl *c;

	(void)state;
	for (size_t i = 0; (c = contract_at(i)) != NULL; i++) {
		for (size_t j = 0; j < c->nviews; j++) {
			const struct contract_view *r = &c->views[j];
			if (strcmp(r->res.plural, "secrets") == 0) {
				assert_int_equal(r->ops, CONTRACT_VIEW_SECRET);
			}
			/* cluster-scoped: lists of own objects, or the get of
			 * the GatewayClass a SympoziumConfig names (no secret
			 * in it; no label can name a config's key) */
			if (r->scope == CONTRACT_VIEW_CLUSTER
			        && strcmp(r->res.plural, "gatewayclasses")
			                == 0) {
				assert_null(r->own);
				assert_int_equal(r->ops, CONTRACT_VIEW_GET);
			} else if (r->scope == CONTRACT_VIEW_CLUSTER) {
				assert_non_null(r->own);
				assert_int_equal(r->ops, CONTRACT_VIEW_LIST);
			}
		}
	}
}

/* agent-sandbox mode (workers/agentrun_sandbox.c): the agentrun
 * controller gets a Sandbox of the key's namespace by name (a claim's is
 * not labelled with the run); no list, no other namespace, no other kind
 * of the group, and no other controller reads them. */
static void
test_agent_sandbox_views(void **state)
{
	static const struct ipc_res sbx = CONTRACT_RES_SANDBOXES;
	static const struct ipc_res claims = CONTRACT_RES_SANDBOXCLAIMS;

	(void)state;
	assert_null(GET(AR, &sbx, "default", "sb-r1"));
	assert_null(GET(AR, &sbx, "default", "sbc-r1"));
	assert_string_equal(
	        LIST(AR, &sbx, "default", RUN_SEL), "view-resource");
	assert_string_equal(
	        GET(AR, &sbx, "kube-system", "sb-r1"), "view-namespace");
	assert_string_equal(GET(AR, &sbx, SYS, "sb-r1"), "view-namespace");
	assert_string_equal(
	        GET(AR, &claims, "default", "sbc-r1"), "view-resource");
	assert_string_equal(
	        GET("instance", &sbx, "default", "sb-r1"), "view-resource");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legit_reads),
		cmocka_unit_test(test_no_key),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_own_lists),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_own_objects),
		cmocka_unit_test(test_meter_budget),
		cmocka_unit_test(test_meter_in_flight),
		cmocka_unit_test(test_secret_meta),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_policy_views),
		cmocka_unit_test(test_config_views),
		cmocka_unit_test(test_agent_sandbox_views),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
