/*
 * test_wpolicy.c: the write policy (supervisor/wpolicy.c) against the
 * real write tables of common/contract.c and a fake cache: what the
 * reconcilers legitimately write passes; each rule refuses its attack
 * with its stable name and the index of the write; a cache not synced or
 * a primary deleted meanwhile retries; object names; the write budget
 * per key, bounded whatever the number of keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "supervisor/wpolicy.h"
#include "tests/lib/testutil.h"

/* JSON text written with single quotes, as JSON. */
static const char *
dq(const char *s)
{
	static char buf[8192];
	size_t i;

	for (i = 0; s[i] != '\0' && i < sizeof(buf) - 1; i++) {
		buf[i] = s[i] == '\'' ? '"' : s[i];
	}
	buf[i] = '\0';
	return (buf);
}

#define J(s) testutil_json(dq(s), 0)

static const struct ipc_res cms = { "", "v1", "configmaps", true };
static const struct ipc_res runs = CONTRACT_RES_AGENTRUNS;
static const struct ipc_res events = { "", "v1", "events", true };
static const struct ipc_res secrets = { "", "v1", "secrets", true };
static const struct ipc_res crs
        = { "rbac.authorization.k8s.io", "v1", "clusterroles", false };
static const struct ipc_res crbs
        = { "rbac.authorization.k8s.io", "v1", "clusterrolebindings", false };
static const struct ipc_res leases
        = { "coordination.k8s.io", "v1", "leases", true };
static const struct ipc_res crds
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };
static const struct ipc_res nss = { "", "v1", "namespaces", false };
static const struct ipc_res deps = { "apps", "v1", "deployments", true };
static const struct ipc_res sas = { "", "v1", "serviceaccounts", true };

/* The fake cache: a few objects by plural, namespace and name. */
struct fobj {
	const char *plural, *ns, *name, *json;
};

static const struct fobj *fcache;
static bool funsynced;
/* A plural whose fake cache holds every object (no label selector). */
static const char *fcomplete;

/* The SkillPacks run_primary names, always cached: the skill RBAC check
 * (supervisor/rbacpol.h) compares a role's rules with its pack's. */
#define PACK_RBAC                                                             \
	"{'spec':{'sidecar':{'clusterRBAC':[{'apiGroups':[''],"               \
	"'resources':['pods'],'verbs':['get']}]}}}"
static const struct fobj packs[] = {
	{ "skillpacks", "ns", "k", PACK_RBAC },
	{ "skillpacks", "ns", "x", PACK_RBAC },
	{ NULL, NULL, NULL, NULL },
};

/* A ClusterRole of run r1 for pack P as the reconciler makes it. */
#define SKILL_CR(P)                                                           \
	"{'metadata':{'name':'sympozium-skill-" P "-r1','labels':{"           \
	"'sympozium.ai/agent-run':'r1','sympozium.ai/managed-by':"            \
	"'sympozium','sympozium.ai/skill':'" P "'}},'rules':[{"               \
	"'apiGroups':[''],'resources':['pods'],'verbs':['get']}]}"

static const struct fobj *
f_find(const struct fobj *t, const struct ipc_res *res, const char *ns,
        const char *name)
{
	for (const struct fobj *o = t; o != NULL && o->plural; o++) {
		if (strcmp(o->plural, res->plural) == 0
		        && strcmp(o->ns, ns) == 0
		        && strcmp(o->name, name) == 0) {
			return (o);
		}
	}
	return (NULL);
}

static int
f_lookup(void *arg, const struct ipc_res *res, const char *ns,
        const char *name, const char **json)
{
	(void)arg;
	if (funsynced) {
		return (-1);
	}
	const struct fobj *o = f_find(fcache, res, ns, name);

	if (o == NULL) {
		o = f_find(packs, res, ns, name);
	}
	if (o == NULL) {
		return (fcomplete != NULL
		                        && strcmp(fcomplete, res->plural) == 0
		                ? 2
		                : 0);
	}
	*json = dq(o->json);
	return (1);
}

static const char run_primary[]
        = "{'apiVersion':'sympozium.ai/v1alpha1','kind':'AgentRun',"
          "'metadata':{'name':'r1','namespace':'ns','uid':'u-r1'},"
          "'spec':{'instanceRef':'inst','skills':[{'skillPackRef':'k'},"
          "{'skillPackRef':'x'}]}}";

/* Checks ops (n of them) of controller ctl for key with primary (JSON
 * text, NULL: absent). */
static enum wpol_verdict
check(const char *ctl, const char *key, const char *primary,
        const struct ipc_write *ops, size_t n, struct wpol_violation *v)
{
	json_object *p = primary != NULL ? J(primary) : NULL;
	struct wpol_input in = { .ctrl = contract_find(ctl),
		.key = key,
		.primary = p,
		.ops = ops,
		.n = n,
		.lookup = f_lookup };
	enum wpol_verdict rc;

	assert_non_null(in.ctrl);
	rc = wpol_check(&in, v);
	json_object_put(p);
	return (rc);
}

/* One write of agentrun ns/r1; returns its verdict and rule. */
static const char *
run1(const struct ipc_write *w)
{
	struct wpol_violation v;
	enum wpol_verdict rc
	        = check("agentrun", "ns/r1", run_primary, w, 1, &v);

	if (rc == WPOL_OK) {
		return ("ok");
	}
	if (rc == WPOL_RETRY) {
		return ("retry");
	}
	assert_int_equal(v.index, 0);
	assert_true(v.detail[0] != '\0');
	return (v.rule);
}

static struct ipc_write
wr(enum ipc_op op, const struct ipc_res *res, const char *ns, const char *name,
        json_object *obj)
{
	return ((struct ipc_write) { .op = op,
	        .res = *res,
	        .namespace = ns,
	        .name = name,
	        .object = obj });
}

static const char owned_cm[]
        = "{'metadata':{'name':'r1-input','namespace':'ns','labels':{"
          "'sympozium.ai/agent-run':'r1'},'ownerReferences':[{'uid':"
          "'u-r1','controller':true}]}}";

/* What the agentrun reconciler writes passes. */
static void
test_legit(void **state)
{
	json_object *cm = J(owned_cm);
	json_object *ev = J("{'metadata':{'namespace':'ns'},'involvedObject':{"
	                    "'kind':'AgentRun','name':'r1','namespace':'ns',"
	                    "'uid':'u-r1'},'reason':'Started'}");
	json_object *self = J("{'metadata':{'name':'r1','namespace':'ns'}}");
	json_object *sa = J("{'metadata':{'name':'sympozium-agent'}}");
	json_object *cr = J(SKILL_CR("k"));
	struct ipc_write ops[] = {
		wr(IPC_OP_CREATE, &cms, "ns", "", cm),
		wr(IPC_OP_EVENT, &events, "ns", "", ev),
		wr(IPC_OP_UPDATE_STATUS, &runs, "ns", "r1", self),
		wr(IPC_OP_CREATE, &sas, "ns", "", sa),
		wr(IPC_OP_CREATE, &crs, "", "", cr),
		wr(IPC_OP_DELETE, &crs, "", "sympozium-skill-k-r1", NULL),
		wr(IPC_OP_DELETE, &runs, "ns", "r0", NULL),
	};
	static const struct fobj cache[] = {
		{ "clusterroles", "", "sympozium-skill-k-r1", SKILL_CR("k") },
		{ "agentruns", "ns", "r0",
		        "{'metadata':{'name':'r0','labels':{"
		        "'sympozium.ai/instance':'inst'}}}" },
		{ NULL, NULL, NULL, NULL },
	};
	struct wpol_violation v;

	(void)state;
	fcache = cache;
	assert_int_equal(check("agentrun", "ns/r1", run_primary, ops,
	                         sizeof(ops) / sizeof(ops[0]), &v),
	        WPOL_OK);
	assert_null(v.rule);
	fcache = NULL;
	json_object_put(cm);
	json_object_put(ev);
	json_object_put(self);
	json_object_put(sa);
	json_object_put(cr);
}

/* A created child carries the label and a controller ownerReference to
 * the primary's uid; in the key's namespace. */
static void
test_child_rules(void **state)
{
	json_object *o = J(owned_cm);
	struct ipc_write w = wr(IPC_OP_CREATE, &cms, "ns", "", o);

	(void)state;
	assert_string_equal(run1(&w), "ok");
	jx_set_path(
	        o, "metadata.labels", J("{'sympozium.ai/agent-run':'r2'}"));
	assert_string_equal(run1(&w), "child-label");
	jx_set_path(o, "metadata.labels", NULL);
	assert_string_equal(run1(&w), "child-label");
	jx_set_path(
	        o, "metadata.labels", J("{'sympozium.ai/agent-run':'r1'}"));
	jx_set_path(o, "metadata.ownerReferences",
	        J("[{'uid':'u-other','controller':true}]"));
	assert_string_equal(run1(&w), "owner");
	jx_set_path(o, "metadata.ownerReferences", J("[{'uid':'u-r1'}]"));
	assert_string_equal(run1(&w), "owner");
	jx_set_path(o, "metadata.ownerReferences",
	        J("[{'uid':'u-r1','controller':true}]"));
	w.namespace = "kube-system";
	assert_string_equal(run1(&w), "namespace");
	w.namespace = "ns";
	jx_set_path(o, "metadata.namespace", J("'kube-system'"));
	assert_string_equal(run1(&w), "namespace");
	jx_set_path(o, "metadata.namespace", J("'ns'"));
	jx_set_path(o, "metadata.name", J("'..'"));
	assert_string_equal(run1(&w), "name");
	jx_set_path(o, "metadata.name", J("'r1-input'"));
	assert_string_equal(run1(&w), "ok");
	json_object_put(o);
}

/* Never Leases, CRDs, Namespaces; nothing outside the table; names are
 * names, never normalised. */
static void
test_forbidden(void **state)
{
	json_object *lease = J("{'metadata':{'name':'sympozium-leader'}}");
	struct ipc_write w
	        = wr(IPC_OP_APPLY, &leases, "ns", "sympozium-leader", lease);

	(void)state;
	assert_string_equal(run1(&w), "forbidden-kind");
	w = wr(IPC_OP_DELETE, &nss, "", "kube-system", NULL);
	assert_string_equal(run1(&w), "forbidden-kind");
	w = wr(IPC_OP_DELETE, &crds, "", "agentruns.sympozium.ai", NULL);
	assert_string_equal(run1(&w), "forbidden-kind");
	w = wr(IPC_OP_DELETE, &cms, "ns", "..", NULL);
	assert_string_equal(run1(&w), "name");
	w = wr(IPC_OP_DELETE, &cms, "ns", "", NULL);
	assert_string_equal(run1(&w), "name");
	w = wr(IPC_OP_PATCH, &deps, "ns", "sympozium-controller", NULL);
	assert_string_equal(run1(&w), "resource");
	w = wr(IPC_OP_DELETE, &crbs, "", "cluster-admin", NULL);
	assert_string_equal(run1(&w), "name");
	/* a namespaced resource said to be cluster-scoped */
	struct ipc_res cluster_cms = cms;
	cluster_cms.namespaced = false;
	w = wr(IPC_OP_DELETE, &cluster_cms, "", "r1-input", NULL);
	assert_string_equal(run1(&w), "resource");
	json_object_put(lease);
}

/* Events: only v1 events, only about the primary. */
static void
test_events(void **state)
{
	json_object *ev = J("{'metadata':{'namespace':'ns'},'involvedObject':{"
	                    "'kind':'AgentRun','name':'r1','namespace':'ns',"
	                    "'uid':'u-r1'}}");
	struct ipc_write w = wr(IPC_OP_EVENT, &secrets, "ns", "", ev);

	(void)state;
	assert_string_equal(run1(&w), "event-target");
	w.res = events;
	assert_string_equal(run1(&w), "ok");
	jx_set_path(ev, "involvedObject.name", J("'r2'"));
	assert_string_equal(run1(&w), "event-target");
	jx_set_path(ev, "involvedObject.name", J("'r1'"));
	jx_set_path(ev, "involvedObject.uid", J("'u-r2'"));
	assert_string_equal(run1(&w), "event-target");
	jx_set_path(ev, "involvedObject.uid", J("'u-r1'"));
	w.namespace = "kube-system";
	assert_string_equal(run1(&w), "namespace");
	/* a create on events is not an event */
	w = wr(IPC_OP_CREATE, &events, "ns", "", ev);
	jx_set_path(ev, "metadata.name", J("'e1'"));
	assert_string_equal(run1(&w), "resource");
	json_object_put(ev);
}

/* Mutations: the primary, or objects it owns as cached. */
static void
test_not_owned(void **state)
{
	static const struct fobj cache[] = {
		{ "configmaps", "ns", "code-review",
		        "{'metadata':{'name':'code-review','ownerReferences':["
		        "{"
		        "'uid':'u-sp','controller':true}]}}" },
		{ "configmaps", "ns", "other",
		        "{'metadata':{'name':'other','ownerReferences':[{"
		        "'uid':'u-x','controller':true}]}}" },
		{ NULL, NULL, NULL, NULL },
	};
	static const char sp[]
	        = "{'kind':'SkillPack','metadata':{'name':'code-review',"
	          "'namespace':'ns','uid':'u-sp'}}";
	json_object *cm = J("{'metadata':{'name':'code-review'}}");
	struct ipc_write w = wr(IPC_OP_UPDATE, &cms, "ns", "code-review", cm);
	struct wpol_violation v;

	(void)state;
	fcache = cache;
	assert_int_equal(
	        check("skillpack", "ns/code-review", sp, &w, 1, &v), WPOL_OK);
	w = wr(IPC_OP_DELETE, &cms, "ns", "other", NULL);
	assert_int_equal(check("skillpack", "ns/code-review", sp, &w, 1, &v),
	        WPOL_VIOLATION);
	assert_string_equal(v.rule, "not-owned");
	/* not cached at all (a victim without our label) */
	w = wr(IPC_OP_DELETE, &cms, "ns", "victim", NULL);
	assert_int_equal(check("skillpack", "ns/code-review", sp, &w, 1, &v),
	        WPOL_VIOLATION);
	assert_string_equal(v.rule, "not-owned");
	/* the caches not synced yet: retried */
	funsynced = true;
	assert_int_equal(check("skillpack", "ns/code-review", sp, &w, 1, &v),
	        WPOL_RETRY);
	funsynced = false;
	/* gone from a cache of every ConfigMap: deleted by another RESULT
	 * since the worker read it; retried, not blamed */
	fcomplete = "configmaps";
	assert_int_equal(check("skillpack", "ns/code-review", sp, &w, 1, &v),
	        WPOL_RETRY);
	fcomplete = NULL;
	/* an update of another AgentRun than the primary */
	json_object *run = J("{'metadata':{'name':'r2'}}");
	w = wr(IPC_OP_UPDATE, &runs, "ns", "r2", run);
	assert_string_equal(run1(&w), "not-owned");
	/* the object named otherwise than the write */
	w = wr(IPC_OP_UPDATE, &runs, "ns", "r1", run);
	assert_string_equal(run1(&w), "name");
	/* pruning: a run of another instance */
	w = wr(IPC_OP_DELETE, &runs, "ns", "r2", NULL);
	static const struct fobj other[] = {
		{ "agentruns", "ns", "r2",
		        "{'metadata':{'name':'r2','labels':{"
		        "'sympozium.ai/instance':'elsewhere'}}}" },
		{ NULL, NULL, NULL, NULL },
	};
	fcache = other;
	assert_string_equal(run1(&w), "not-owned");
	fcache = NULL;
	json_object_put(cm);
	json_object_put(run);
}

/* Secrets: only deletes of those the PersonaPack's spec names. */
static void
test_secrets(void **state)
{
	static const char pack[]
	        = "{'kind':'PersonaPack','metadata':{'name':'p','namespace':"
	          "'ns','uid':'u-p'},'spec':{'authRefs':[{'provider':'openai',"
	          "'secret':'p-openai-key'}]}}";
	struct ipc_write w
	        = wr(IPC_OP_DELETE, &secrets, "ns", "p-openai-key", NULL);
	struct wpol_violation v;
	json_object *s = J("{'metadata':{'name':'x'},'data':{'k':'dg=='}}");

	(void)state;
	assert_int_equal(
	        check("personapack", "ns/p", pack, &w, 1, &v), WPOL_OK);
	w.name = "db-password";
	assert_int_equal(
	        check("personapack", "ns/p", pack, &w, 1, &v), WPOL_VIOLATION);
	assert_string_equal(v.rule, "secret");
	w = wr(IPC_OP_CREATE, &secrets, "ns", "", s);
	assert_int_equal(
	        check("personapack", "ns/p", pack, &w, 1, &v), WPOL_VIOLATION);
	assert_string_equal(v.rule, "secret");
	assert_string_equal(run1(&w), "secret");
	json_object_put(s);
}

/* 1.5 MiB per object, WPOL_WRITES_MAX per RESULT. */
static void
test_bounds(void **state)
{
	char *big = malloc(WPOL_OBJECT_MAX + 64);
	json_object *o = J(owned_cm);
	struct ipc_write w = wr(IPC_OP_CREATE, &cms, "ns", "", o);
	struct ipc_write *many = calloc(WPOL_WRITES_MAX + 1, sizeof(*many));
	struct wpol_violation v;

	(void)state;
	memset(big, 'x', WPOL_OBJECT_MAX);
	big[WPOL_OBJECT_MAX] = '\0';
	jx_set_path(o, "data.blob", json_object_new_string(big));
	assert_string_equal(run1(&w), "size");
	json_object_put(o);
	free(big);
	o = J(owned_cm);
	for (size_t i = 0; i <= WPOL_WRITES_MAX; i++) {
		many[i] = wr(IPC_OP_CREATE, &cms, "ns", "", o);
	}
	assert_int_equal(check("agentrun", "ns/r1", run_primary, many,
	                         WPOL_WRITES_MAX, &v),
	        WPOL_OK);
	assert_int_equal(check("agentrun", "ns/r1", run_primary, many,
	                         WPOL_WRITES_MAX + 1, &v),
	        WPOL_VIOLATION);
	assert_string_equal(v.rule, "writes-per-result");
	/* the first bad write is named by its index */
	many[7] = wr(IPC_OP_DELETE, &cms, "ns", "..", NULL);
	assert_int_equal(check("agentrun", "ns/r1", run_primary, many, 10, &v),
	        WPOL_VIOLATION);
	assert_int_equal(v.index, 7);
	free(many);
	json_object_put(o);
}

/* The primary deleted while its worker had it: stale, retried; what
 * needs no primary is still refused. */
static void
test_primary_gone(void **state)
{
	json_object *o = J(owned_cm);
	struct ipc_write w = wr(IPC_OP_CREATE, &cms, "ns", "", o);
	struct wpol_violation v;

	(void)state;
	assert_int_equal(
	        check("agentrun", "ns/r1", NULL, &w, 1, &v), WPOL_RETRY);
	w = wr(IPC_OP_DELETE, &nss, "", "ns", NULL);
	assert_int_equal(
	        check("agentrun", "ns/r1", NULL, &w, 1, &v), WPOL_VIOLATION);
	assert_string_equal(v.rule, "forbidden-kind");
	json_object_put(o);
}

/* Cluster-scoped: only the skill RBAC prefix and label; a shared object
 * by its one name. */
static void
test_cluster_and_shared(void **state)
{
	json_object *cr = J(SKILL_CR("x"));
	json_object *sa = J("{'metadata':{'name':'default'}}");
	struct ipc_write w = wr(IPC_OP_CREATE, &crs, "", "", cr);

	(void)state;
	assert_string_equal(run1(&w), "ok");
	jx_set_path(cr, "metadata.name", J("'admin'"));
	assert_string_equal(run1(&w), "name");
	jx_set_path(cr, "metadata.name", J("'sympozium-skill-x-r1'"));
	/* past the generic rules, the skill RBAC check: its pack's rules */
	jx_set_path(cr, "rules",
	        J("[{'apiGroups':['*'],'resources':['*'],"
	          "'verbs':['*']}]"));
	assert_string_equal(run1(&w), "rbac-wildcard");
	jx_set_path(cr, "rules",
	        J("[{'apiGroups':[''],'resources':['pods'],"
	          "'verbs':['get']}]"));
	assert_string_equal(run1(&w), "ok");
	jx_set_path(cr, "metadata.labels", J("{}"));
	assert_string_equal(run1(&w), "child-label");
	w = wr(IPC_OP_CREATE, &crs, "kube-system", "", cr);
	assert_string_equal(run1(&w), "namespace");
	/* another run's, by its name; one cached with another run's label */
	w = wr(IPC_OP_DELETE, &crs, "", "sympozium-skill-x-r2", NULL);
	assert_string_equal(run1(&w), "name");
	w = wr(IPC_OP_DELETE, &crs, "", "sympozium-skill-xr1", NULL);
	assert_string_equal(run1(&w), "name");
	w = wr(IPC_OP_DELETE, &crs, "", "sympozium-skill-x-r1", NULL);
	assert_string_equal(run1(&w), "ok");
	static const struct fobj other[] = {
		{ "clusterroles", "", "sympozium-skill-x-r1",
		        "{'metadata':{'name':'sympozium-skill-x-r1','labels':{"
		        "'sympozium.ai/agent-run':'r9'}}}" },
		{ NULL, NULL, NULL, NULL },
	};
	fcache = other;
	assert_string_equal(run1(&w), "not-owned");
	fcache = NULL;
	w = wr(IPC_OP_CREATE, &sas, "ns", "", sa);
	assert_string_equal(run1(&w), "name");
	json_object_put(cr);
	json_object_put(sa);
}

static void
test_names(void **state)
{
	char long_name[300];

	(void)state;
	assert_true(wpol_name_valid("configmaps", "a"));
	assert_true(wpol_name_valid("configmaps", "a.b-c.d"));
	assert_false(wpol_name_valid("configmaps", ""));
	assert_false(wpol_name_valid("configmaps", NULL));
	assert_false(wpol_name_valid("configmaps", "."));
	assert_false(wpol_name_valid("configmaps", ".."));
	assert_false(wpol_name_valid("configmaps", "a..b"));
	assert_false(wpol_name_valid("configmaps", "a/b"));
	assert_false(wpol_name_valid("configmaps", "A"));
	assert_false(wpol_name_valid("configmaps", "-a"));
	assert_false(wpol_name_valid("configmaps", "a%2F.."));
	assert_false(wpol_name_valid("services", "a.b"));
	assert_true(wpol_name_valid("services", "a-b"));
	memset(long_name, 'a', sizeof(long_name));
	long_name[253] = '\0';
	assert_true(wpol_name_valid("configmaps", long_name));
	long_name[253] = 'a';
	long_name[254] = '\0';
	assert_false(wpol_name_valid("configmaps", long_name));
	long_name[64] = '\0';
	assert_false(wpol_name_valid("services", long_name));
}

/* The budget: a burst, then the refill rate; per key; bounded memory. */
static void
test_budget(void **state)
{
	struct wpol_budget *b = wpol_budget_new();
	char key[32];
	int i;

	(void)state;
	for (i = 0; wpol_budget_take(b, "c", "ns/k", 100, 0); i++) { }
	assert_int_equal(i, WPOL_BUDGET_BURST / 100);
	assert_true(wpol_budget_take(b, "c", "ns/other", 100, 0));
	assert_true(wpol_budget_take(b, "d", "ns/k", 100, 0));
	assert_false(wpol_budget_take(b, "c", "ns/k", 100, 4000));
	assert_true(wpol_budget_take(b, "c", "ns/k", 100, 5000));
	/* 50,000 keys in a fixed table: each starts full */
	for (i = 0; i < 50000; i++) {
		snprintf(key, sizeof(key), "ns/k%d", i);
		assert_true(wpol_budget_take(b, "c", key, 10, 6000));
	}
	wpol_budget_free(b);
}

/* One write of mcpserver ns/m1; its verdict and rule. */
static const char *
mcp1(const struct ipc_write *w)
{
	struct wpol_violation v;
	enum wpol_verdict rc = check("mcpserver", "ns/m1",
	        "{'apiVersion':'sympozium.ai/v1alpha1','kind':'MCPServer',"
	        "'metadata':{'name':'m1','namespace':'ns','uid':'u-m1'}}",
	        w, 1, &v);

	return (rc == WPOL_OK ? "ok" : rc == WPOL_RETRY ? "retry" : v.rule);
}

/* The adoption patch of an uncached child (contract.h
 * CONTRACT_OWN_ADOPT): exactly its four operations, the primary's uid
 * and the child label valued the primary's name; anything else is
 * not-owned. */
static void
test_adopt(void **state)
{
	static const char *const ok[] = {
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/12/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/12/controller','value':true},"
		"{'op':'add','path':'/metadata/labels/"
		"sympozium.ai~1mcp-server',"
		"'value':'m1'}]",
	};
	static const char *const bad[] = {
		/* another uid, another index, not the controller flag */
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-x'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/1/controller','value':true},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':false},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}}]",
		/* a second label, another value, another key, a replace */
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1','a':'b'}}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels/"
		"sympozium.ai~1mcp-server',"
		"'value':'m2'}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels/"
		"sympozium.ai~1mcp-serverx',"
		"'value':'m1'}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'replace','path':'/spec/template','value':{}}]",
		/* a fifth operation; no resourceVersion test; no tests */
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}},"
		"{'op':'remove','path':'/spec/replicas'}]",
		"[{'op':'test','path':'/metadata/name','value':'m1'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-m1'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}}]",
		"[{'op':'add','path':'/metadata/labels','value':{"
		"'sympozium.ai/mcp-server':'m1'}}]",
		"{'metadata':{'labels':{'sympozium.ai/mcp-server':'m1'}}}",
		"[1,2,3,4]",
	};
	struct ipc_write w = { .op = IPC_OP_PATCH,
		.res = deps,
		.namespace = "ns",
		.name = "m1",
		.patch_type = IPC_PATCH_JSON };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		w.patch = J(ok[i]);
		assert_string_equal(mcp1(&w), "ok");
		w.patch_type = IPC_PATCH_MERGE; /* only as a JSON patch */
		assert_string_equal(mcp1(&w), "not-owned");
		w.patch_type = IPC_PATCH_JSON;
		w.namespace = "other";
		assert_string_equal(mcp1(&w), "namespace");
		w.namespace = "ns";
		json_object_put(w.patch);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w.patch = J(bad[i]);
		assert_string_equal(mcp1(&w), "not-owned");
		json_object_put(w.patch);
	}
	/* the agentrun controller has no adoption row */
	w.patch = J(ok[0]);
	assert_string_equal(run1(&w), "resource");
	json_object_put(w.patch);
}

/* One write of personapack ns/p (personas a and b-c). */
static const char *
pack1(const struct ipc_write *w)
{
	struct wpol_violation v;
	enum wpol_verdict rc = check("personapack", "ns/p",
	        "{'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
	        "'metadata':{'name':'p','namespace':'ns','uid':'u-p'},"
	        "'spec':{'personas':[{'name':'a'},{'name':'b-c'}]}}",
	        w, 1, &v);

	return (rc == WPOL_OK ? "ok" : rc == WPOL_RETRY ? "retry" : v.rule);
}

#define OR_RV   "{'op':'test','path':'/metadata/resourceVersion','value':'7'}"
#define OR_NONE "{'op':'test','path':'/metadata/ownerReferences','value':null}"
#define OR_REF(extra)                                                         \
	"{'op':'add','path':'/metadata/ownerReferences','value':[{"           \
	"'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"          \
	"'name':'p','uid':'u-p','controller':true,"                           \
	"'blockOwnerDeletion':true" extra "}]}"
#define OR_LABEL                                                              \
	"{'op':'add','path':'/metadata/labels/sympozium.ai~1persona-pack',"   \
	"'value':'p'}"

/* The adoption of an unowned stamp (contract.h CONTRACT_OWN_ORPHAN): its
 * four operations exactly, one controller reference to the primary, the
 * pack label, a name made of the pack's and a persona's; anything else
 * is not-owned. */
static void
test_orphan(void **state)
{
	static const struct ipc_res insts = CONTRACT_RES_INSTANCES;
	static const struct ipc_res scheds = CONTRACT_RES_SCHEDULES;
	static const char ok[]
	        = "[" OR_RV "," OR_NONE "," OR_REF("") "," OR_LABEL "]";
	static const char *const bad[] = {
		/* a controller reference to another, a second reference */
		"[" OR_RV "," OR_NONE ","
		"{'op':'add','path':'/metadata/ownerReferences','value':[{"
		"'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
		"'name':'q','uid':'u-q','controller':true,"
		"'blockOwnerDeletion':true}]}," OR_LABEL "]",
		"[" OR_RV "," OR_NONE ","
		"{'op':'add','path':'/metadata/ownerReferences','value':[{"
		"'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
		"'name':'p','uid':'u-p','controller':true,"
		"'blockOwnerDeletion':true},{'apiVersion':'v1','kind':'X',"
		"'name':'x','uid':'u-x'}]}," OR_LABEL "]",
		/* an extra key in the reference, no controller flag */
		"[" OR_RV "," OR_NONE "," OR_REF(",'x':1") "," OR_LABEL "]",
		"[" OR_RV "," OR_NONE ","
		"{'op':'add','path':'/metadata/ownerReferences','value':[{"
		"'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
		"'name':'p','uid':'u-p','controller':false,"
		"'blockOwnerDeletion':true}]}," OR_LABEL "]",
		/* no test of the absence, a test of something else */
		"[" OR_RV "," OR_REF("") "," OR_LABEL ","
		                         "{'op':'test','path':'/metadata/"
		                         "name','value':'p-a'}]",
		"[" OR_RV ","
		"{'op':'test','path':'/metadata/ownerReferences','value':[]},"
		"" OR_REF("") "," OR_LABEL "]",
		/* another label value, a fifth operation, out of order */
		"[" OR_RV "," OR_NONE
		"," OR_REF("") ","
		               "{'op':'add','path':'/metadata/labels/"
		               "sympozium.ai~1persona-"
		               "pack','value':'q'}]",
		"[" OR_RV "," OR_NONE
		"," OR_REF("") "," OR_LABEL ","
		               "{'op':'remove','path':'/spec'}]",
		"[" OR_NONE "," OR_RV "," OR_REF("") "," OR_LABEL "]",
	};
	static const char *const names[]
	        = { "p-b", "p-ab", "q-a", "p-a-x", "p-b-c-schedule", "pa" };
	struct ipc_write w = { .op = IPC_OP_PATCH,
		.res = insts,
		.namespace = "ns",
		.name = "p-a",
		.patch_type = IPC_PATCH_JSON };

	(void)state;
	w.patch = J(ok);
	assert_string_equal(pack1(&w), "ok");
	w.name = "p-b-c";
	assert_string_equal(pack1(&w), "ok");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		w.name = names[i];
		assert_string_equal(pack1(&w), "not-owned");
	}
	w.res = scheds;
	w.name = "p-b-c-schedule";
	assert_string_equal(pack1(&w), "ok");
	w.name = "p-b-c";
	assert_string_equal(pack1(&w), "not-owned");
	w.res = insts;
	w.name = "p-a";
	w.patch_type = IPC_PATCH_MERGE;
	assert_string_equal(pack1(&w), "not-owned");
	w.patch_type = IPC_PATCH_JSON;
	w.namespace = "other";
	assert_string_equal(pack1(&w), "namespace");
	w.namespace = "ns";
	/* the mcpserver controller has no such row for its kinds */
	assert_string_equal(mcp1(&w), "resource");
	json_object_put(w.patch);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w.patch = J(bad[i]);
		assert_string_equal(pack1(&w), "not-owned");
		json_object_put(w.patch);
	}
}

/* The policy controller: the status of its own policy, nothing else
 * (contract.c policy_w: update_status of the primary, Events). */
static void
test_policy_rows(void **state)
{
	static const struct ipc_res pols = CONTRACT_RES_POLICIES;
	static const struct ipc_res insts = CONTRACT_RES_INSTANCES;
	static const char pol[]
	        = "{'apiVersion':'sympozium.ai/v1alpha1','kind':"
	          "'SympoziumPolicy','metadata':{'name':'p','namespace':"
	          "'ns','uid':'u-p'}}";
	json_object *self = J("{'metadata':{'name':'p','namespace':'ns'}}");
	json_object *other = J("{'metadata':{'name':'q','namespace':'ns'}}");
	json_object *inst = J("{'metadata':{'name':'i','namespace':'ns'}}");
	struct ipc_write w;
	struct wpol_violation v;

	(void)state;
	w = wr(IPC_OP_UPDATE_STATUS, &pols, "ns", "p", self);
	assert_int_equal(check("policy", "ns/p", pol, &w, 1, &v), WPOL_OK);
	/* the spec is not its to change */
	w = wr(IPC_OP_UPDATE, &pols, "ns", "p", self);
	assert_int_equal(
	        check("policy", "ns/p", pol, &w, 1, &v), WPOL_VIOLATION);
	assert_string_equal(v.rule, "resource");
	/* another policy's status */
	w = wr(IPC_OP_UPDATE_STATUS, &pols, "ns", "q", other);
	assert_int_equal(
	        check("policy", "ns/p", pol, &w, 1, &v), WPOL_VIOLATION);
	assert_string_equal(v.rule, "not-owned");
	/* the instances it only lists */
	w = wr(IPC_OP_UPDATE_STATUS, &insts, "ns", "i", inst);
	assert_int_equal(
	        check("policy", "ns/p", pol, &w, 1, &v), WPOL_VIOLATION);
	assert_string_equal(v.rule, "resource");
	json_object_put(self);
	json_object_put(other);
	json_object_put(inst);
}

/* The workspace PVC of a run with postRun hooks (workers/
 * agentrun_postrun.c, upstream ensureWorkspacePVC and
 * cleanupWorkspacePVC): created as a child of the run, deleted only when
 * cached as its child; never another run's, never an update; the
 * postRun Job passes the Job child row. */
static void
test_workspace_pvc(void **state)
{
	static const struct ipc_res pvcs = CONTRACT_RES_PVCS;
	static const struct ipc_res jobs = CONTRACT_RES_JOBS;
	static const struct fobj cache[] = {
		{ "persistentvolumeclaims", "ns", "r1-workspace",
		        "{'metadata':{'name':'r1-workspace','labels':{"
		        "'sympozium.ai/agent-run':'r1'},'ownerReferences':[{"
		        "'uid':'u-r1','controller':true}]}}" },
		{ "persistentvolumeclaims", "ns", "r2-workspace",
		        "{'metadata':{'name':'r2-workspace','labels':{"
		        "'sympozium.ai/agent-run':'r2'},'ownerReferences':[{"
		        "'uid':'u-r2','controller':true}]}}" },
		{ NULL, NULL, NULL, NULL },
	};
	json_object *o = J("{'apiVersion':'v1','kind':'PersistentVolumeClaim',"
	                   "'metadata':{'name':'r1-workspace','namespace':"
	                   "'ns','labels':{'sympozium.ai/agent-run':'r1',"
	                   "'sympozium.ai/component':'workspace'},"
	                   "'ownerReferences':[{'uid':'u-r1','controller':"
	                   "true}]},'spec':{'accessModes':['ReadWriteOnce'],"
	                   "'resources':{'requests':{'storage':'1Gi'}}}}");
	json_object *job = J("{'apiVersion':'batch/v1','kind':'Job',"
	                     "'metadata':{'name':'r1-postrun','namespace':"
	                     "'ns','labels':{'sympozium.ai/agent-run':'r1',"
	                     "'sympozium.ai/component':'post-run'},"
	                     "'ownerReferences':[{'uid':'u-r1','controller':"
	                     "true}]}}");
	struct ipc_write w = wr(IPC_OP_CREATE, &pvcs, "ns", "", o);

	(void)state;
	fcache = cache;
	assert_string_equal(run1(&w), "ok");
	/* refused shapes: another run's label, no label, no owner */
	jx_set_path(
	        o, "metadata.labels", J("{'sympozium.ai/agent-run':'r2'}"));
	assert_string_equal(run1(&w), "child-label");
	jx_set_path(o, "metadata.labels", NULL);
	assert_string_equal(run1(&w), "child-label");
	jx_set_path(
	        o, "metadata.labels", J("{'sympozium.ai/agent-run':'r1'}"));
	jx_set_path(o, "metadata.ownerReferences", NULL);
	assert_string_equal(run1(&w), "owner");
	/* an update is no operation of the row */
	w = wr(IPC_OP_UPDATE, &pvcs, "ns", "r1-workspace", o);
	assert_string_equal(run1(&w), "resource");
	/* delete: its own cached PVC; not another run's, not an uncached
	 * one, not in another namespace */
	w = wr(IPC_OP_DELETE, &pvcs, "ns", "r1-workspace", NULL);
	assert_string_equal(run1(&w), "ok");
	w = wr(IPC_OP_DELETE, &pvcs, "ns", "r2-workspace", NULL);
	assert_string_equal(run1(&w), "not-owned");
	w = wr(IPC_OP_DELETE, &pvcs, "ns", "data", NULL);
	assert_string_equal(run1(&w), "not-owned");
	w = wr(IPC_OP_DELETE, &pvcs, "other", "r1-workspace", NULL);
	assert_string_equal(run1(&w), "namespace");
	/* the postRun Job */
	w = wr(IPC_OP_CREATE, &jobs, "ns", "", job);
	assert_string_equal(run1(&w), "ok");
	fcache = NULL;
	json_object_put(o);
	json_object_put(job);
}

/* agent-sandbox mode (workers/agentrun_sandbox.c, upstream
 * agentrun_sandbox.go buildSandboxCR / buildSandboxClaimCR and the
 * timeout's delete): the run's Sandbox and SandboxClaim are created as
 * children (label and controller ownerReference), the Sandbox deleted
 * only when the cache holds it as the run's; nothing else on either. */
static void
test_agent_sandbox(void **state)
{
	static const struct ipc_res sbx = CONTRACT_RES_SANDBOXES;
	static const struct ipc_res claims = CONTRACT_RES_SANDBOXCLAIMS;
	static const struct ipc_res pools = { CONTRACT_SANDBOX_GROUP,
		CONTRACT_SANDBOX_VERSION, "sandboxwarmpools", true };
	static const struct fobj cache[] = {
		{ "sandboxes", "ns", "sb-r1",
		        "{'metadata':{'name':'sb-r1','labels':{"
		        "'sympozium.ai/agent-run':'r1'},'ownerReferences':[{"
		        "'uid':'u-r1','controller':true}]}}" },
		{ "sandboxes", "ns", "sbc-r1",
		        "{'metadata':{'name':'sbc-r1','ownerReferences':[{"
		        "'uid':'u-claim','controller':true}]}}" },
		{ NULL, NULL, NULL, NULL },
	};
	json_object *sb = J("{'metadata':{'name':'sb-r1','namespace':'ns',"
	                    "'labels':{'sympozium.ai/agent-run':'r1'},"
	                    "'ownerReferences':[{'uid':'u-r1','controller':"
	                    "true}]},'spec':{}}");
	json_object *cl = J("{'metadata':{'name':'sbc-r1','namespace':'ns',"
	                    "'labels':{'sympozium.ai/agent-run':'r1'},"
	                    "'ownerReferences':[{'uid':'u-r1','controller':"
	                    "true}]},'spec':{'warmPoolRef':{'name':'wp'}}}");
	struct ipc_write w = wr(IPC_OP_CREATE, &sbx, "ns", "", sb);

	(void)state;
	fcache = cache;
	assert_string_equal(run1(&w), "ok");
	w = wr(IPC_OP_CREATE, &claims, "ns", "", cl);
	assert_string_equal(run1(&w), "ok");
	w = wr(IPC_OP_DELETE, &sbx, "ns", "sb-r1", NULL);
	assert_string_equal(run1(&w), "ok");
	/* refused: a claim's Sandbox (another owner), one not cached */
	w = wr(IPC_OP_DELETE, &sbx, "ns", "sbc-r1", NULL);
	assert_string_equal(run1(&w), "not-owned");
	w = wr(IPC_OP_DELETE, &sbx, "ns", "victim", NULL);
	assert_string_equal(run1(&w), "not-owned");
	/* refused: other operations, other kinds of the group */
	w = wr(IPC_OP_UPDATE, &sbx, "ns", "sb-r1", sb);
	assert_string_equal(run1(&w), "resource");
	w = wr(IPC_OP_DELETE, &claims, "ns", "sbc-r1", NULL);
	assert_string_equal(run1(&w), "resource");
	w = wr(IPC_OP_CREATE, &pools, "ns", "", cl);
	assert_string_equal(run1(&w), "resource");
	/* refused: a created Sandbox without the label, another's, or in
	 * another namespace */
	jx_set_path(sb, "metadata.labels", NULL);
	w = wr(IPC_OP_CREATE, &sbx, "ns", "", sb);
	assert_string_equal(run1(&w), "child-label");
	jx_set_path(
	        sb, "metadata.labels", J("{'sympozium.ai/agent-run':'r1'}"));
	jx_set_path(sb, "metadata.ownerReferences",
	        J("[{'uid':'u-other','controller':true}]"));
	assert_string_equal(run1(&w), "owner");
	jx_set_path(sb, "metadata.ownerReferences",
	        J("[{'uid':'u-r1','controller':true}]"));
	w.namespace = "kube-system";
	assert_string_equal(run1(&w), "namespace");
	/* no other controller may write them */
	{
		struct wpol_violation v;
		static const char inst[]
		        = "{'kind':'SympoziumInstance','metadata':{'name':"
		          "'inst','namespace':'ns','uid':'u-i'}}";
		w = wr(IPC_OP_CREATE, &sbx, "ns", "", sb);
		w.namespace = "ns";
		assert_int_equal(check("instance", "ns/inst", inst, &w, 1, &v),
		        WPOL_VIOLATION);
		assert_string_equal(v.rule, "resource");
	}
	fcache = NULL;
	json_object_put(sb);
	json_object_put(cl);
}

/* The config controller (contract.c config_w): its own finalizer and
 * status; the Gateway and GatewayClass its spec names (default names
 * when it names none), created with the managed-by label and, for the
 * Gateway, its controller reference, deleted by that name only; the
 * Gateway's class, listeners and annotations by a JSON patch that tests
 * the controller reference (CONTRACT_OWN_TESTED). */
static const char cfg_primary[]
        = "{'apiVersion':'sympozium.ai/v1alpha1','kind':'SympoziumConfig',"
          "'metadata':{'name':'c','namespace':'ns','uid':'u-c'},"
          "'spec':{'gateway':{'enabled':true,'gatewayClassName':'envoy'}}}";

static const char *
cfg1(const char *primary, const struct ipc_write *w)
{
	struct wpol_violation v;
	enum wpol_verdict rc = check("config", "ns/c", primary, w, 1, &v);

	return (rc == WPOL_OK ? "ok" : rc == WPOL_RETRY ? "retry" : v.rule);
}

static void
test_config_rows(void **state)
{
	static const struct ipc_res cfgs = CONTRACT_RES_CONFIGS;
	static const struct ipc_res gws = CONTRACT_RES_GATEWAYS;
	static const struct ipc_res gcs = CONTRACT_RES_GATEWAYCLASSES;
	static const char own[] = "'ownerReferences':[{'uid':'u-c',"
	                          "'controller':true}]";
	static const char lab[]
	        = "'labels':{'sympozium.ai/managed-by':'sympoziumconfig'}";
	char text[512];
	json_object *o[8];
	struct ipc_write w;
	size_t k = 0;

	(void)state;
	/* the finalizer (a patch of itself) and the status */
	w = wr(IPC_OP_UPDATE_STATUS, &cfgs, "ns", "c",
	        o[k++] = J("{'metadata':{'name':'c','namespace':'ns'}}"));
	assert_string_equal(cfg1(cfg_primary, &w), "ok");
	w = (struct ipc_write) { .op = IPC_OP_PATCH,
		.res = cfgs,
		.namespace = "ns",
		.name = "d",
		.patch = o[k++] = J("{'metadata':{'finalizers':[]}}"),
		.patch_type = IPC_PATCH_MERGE };
	assert_string_equal(cfg1(cfg_primary, &w), "not-owned");
	/* the GatewayClass its spec names, labelled */
	snprintf(text, sizeof(text), "{'metadata':{'name':'envoy',%s}}", lab);
	w = wr(IPC_OP_CREATE, &gcs, "", "", o[k++] = J(text));
	assert_string_equal(cfg1(cfg_primary, &w), "ok");
	/* unlabelled; another name; the default name when the spec names
	 * one */
	w = wr(IPC_OP_CREATE, &gcs, "", "",
	        o[k++] = J("{'metadata':{'name':'envoy'}}"));
	assert_string_equal(cfg1(cfg_primary, &w), "child-label");
	w = wr(IPC_OP_DELETE, &gcs, "", "istio", NULL);
	assert_string_equal(cfg1(cfg_primary, &w), "not-owned");
	w = wr(IPC_OP_DELETE, &gcs, "", "sympozium", NULL);
	assert_string_equal(cfg1(cfg_primary, &w), "not-owned");
	w = wr(IPC_OP_DELETE, &gcs, "", "envoy", NULL);
	assert_string_equal(cfg1(cfg_primary, &w), "ok");
	/* no update of a GatewayClass (no take-over) */
	w = wr(IPC_OP_UPDATE, &gcs, "", "envoy", o[2]);
	assert_string_equal(cfg1(cfg_primary, &w), "resource");
	/* the default Gateway name: labelled and controlled */
	snprintf(text, sizeof(text),
	        "{'metadata':{'name':'sympozium-gateway',%s,%s}}", lab, own);
	w = wr(IPC_OP_CREATE, &gws, "ns", "", o[k++] = J(text));
	assert_string_equal(cfg1(cfg_primary, &w), "ok");
	w.namespace = "other";
	assert_string_equal(cfg1(cfg_primary, &w), "namespace");
	snprintf(text, sizeof(text),
	        "{'metadata':{'name':'sympozium-gateway',%s}}", lab);
	w = wr(IPC_OP_CREATE, &gws, "ns", "", o[k++] = J(text));
	assert_string_equal(cfg1(cfg_primary, &w), "owner");
	w = wr(IPC_OP_DELETE, &gws, "ns", "edge", NULL);
	assert_string_equal(cfg1(cfg_primary, &w), "not-owned");
	w = wr(IPC_OP_DELETE, &gws, "ns", "sympozium-gateway", NULL);
	assert_string_equal(cfg1(cfg_primary, &w), "ok");
	/* the primary gone: retried, never allowed */
	assert_string_equal(cfg1(NULL, &w), "retry");
	/* no update or merge patch of a Gateway */
	w = wr(IPC_OP_UPDATE, &gws, "ns", "sympozium-gateway", o[4]);
	assert_string_equal(cfg1(cfg_primary, &w), "resource");
	for (size_t i = 0; i < k; i++) {
		json_object_put(o[i]);
	}
}

/* The tested patch: three tests of the controller reference, then adds
 * or removes of the listed paths only. */
static void
test_config_tested(void **state)
{
	static const struct ipc_res gws = CONTRACT_RES_GATEWAYS;
#define TESTS                                                                 \
	"[{'op':'test','path':'/metadata/resourceVersion','value':'7'},"      \
	"{'op':'test','path':'/metadata/ownerReferences/0/uid',"              \
	"'value':'u-c'},{'op':'test','path':"                                 \
	"'/metadata/ownerReferences/0/controller','value':true}"
	static const char *const ok[] = {
		TESTS ",{'op':'add','path':'/spec/gatewayClassName',"
		      "'value':'envoy'}]",
		TESTS ",{'op':'add','path':'/spec/listeners','value':[]},"
		      "{'op':'remove','path':'/metadata/annotations'}]",
		TESTS ",{'op':'add','path':'/metadata/annotations','value':{"
		      "'a':'b'}}]",
	};
	static const char *const bad[] = {
		/* no change; a path not listed; below a listed one; a
		 * replace; a remove with a value */
		TESTS "]",
		TESTS ",{'op':'add','path':'/metadata/labels','value':{}}]",
		TESTS ",{'op':'add','path':'/spec/listeners/0','value':{}}]",
		TESTS ",{'op':'replace','path':'/spec/listeners','value':[]}]",
		TESTS ",{'op':'remove','path':'/spec/listeners','value':1}]",
		TESTS ",{'op':'add','path':'/metadata/ownerReferences',"
		      "'value':[]}]",
		/* another uid; not the controller flag; no rv test */
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-x'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/spec/listeners','value':[]}]",
		"[{'op':'test','path':'/metadata/"
		"resourceVersion','value':'7'},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-c'},{'op':'test','path':"
		"'/metadata/ownerReferences/1/controller','value':true},"
		"{'op':'add','path':'/spec/listeners','value':[]}]",
		"[{'op':'add','path':'/spec/listeners','value':[]},"
		"{'op':'test','path':'/metadata/ownerReferences/0/uid',"
		"'value':'u-c'},{'op':'test','path':"
		"'/metadata/ownerReferences/0/controller','value':true},"
		"{'op':'add','path':'/spec/listeners','value':[]}]",
	};
#undef TESTS
	struct ipc_write w = { .op = IPC_OP_PATCH,
		.res = gws,
		.namespace = "ns",
		.name = "sympozium-gateway",
		.patch_type = IPC_PATCH_JSON };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		w.patch = J(ok[i]);
		assert_string_equal(cfg1(cfg_primary, &w), "ok");
		/* the same as a merge patch */
		w.patch_type = IPC_PATCH_MERGE;
		assert_string_equal(cfg1(cfg_primary, &w), "not-owned");
		w.patch_type = IPC_PATCH_JSON;
		json_object_put(w.patch);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w.patch = J(bad[i]);
		if (strcmp(cfg1(cfg_primary, &w), "not-owned") != 0) {
			fail_msg("bad patch %zu allowed", i);
		}
		json_object_put(w.patch);
	}
}

/* The web-proxy key Secret of a server-mode run (CONTRACT_OWN_KEY_SECRET;
 * name, labels, data key and key shape from upstream
 * agentrun_controller.go ensureServerAPIKeySecret at 008266e): created
 * only, named <spec.instanceRef>-web-proxy-key, child label, controller
 * ownerReference, stringData api-key only; every other shape refused. */
#define KEY48 "0123456789abcdef0123456789abcdef0123456789abcdef"
#define KEY_META(name, extra)                                                 \
	"{'apiVersion':'v1','kind':'Secret','metadata':{'name':'" name        \
	"','namespace':'ns','labels':{'sympozium.ai/agent-run':'r1'},"        \
	"'ownerReferences':[{'uid':'u-r1','controller':true}]}" extra "}"

static const char *
key_create(const char *json)
{
	json_object *o = J(json);
	struct ipc_write w = wr(IPC_OP_CREATE, &secrets, "ns", "", o);
	const char *rule = run1(&w);

	json_object_put(o);
	return (rule);
}

static void
test_web_proxy_key(void **state)
{
	struct ipc_write w;

	(void)state;
	assert_string_equal(
	        key_create(KEY_META("inst-web-proxy-key",
	                ",'stringData':{'api-key':'sk-" KEY48 "'}")),
	        "ok");
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'type':'Opaque','stringData':{"
	                            "'api-key':'sk-" KEY48 "'}")),
	        "ok");
	/* another name, another instance's, or the bare suffix */
	assert_string_equal(
	        key_create(KEY_META("db-password",
	                ",'stringData':{'api-key':'sk-" KEY48 "'}")),
	        "secret");
	assert_string_equal(
	        key_create(KEY_META("other-web-proxy-key",
	                ",'stringData':{'api-key':'sk-" KEY48 "'}")),
	        "secret");
	assert_string_equal(
	        key_create(KEY_META("inst-web-proxy-key-x",
	                ",'stringData':{'api-key':'sk-" KEY48 "'}")),
	        "secret");
	/* not the run's child */
	assert_string_equal(
	        key_create("{'metadata':{'name':'inst-web-proxy-key',"
	                   "'ownerReferences':[{'uid':'u-r1','controller':"
	                   "true}]},'stringData':{'api-key':'sk-" KEY48 "'}}"),
	        "child-label");
	assert_string_equal(
	        key_create("{'metadata':{'name':'inst-web-proxy-key','labels':"
	                   "{'sympozium.ai/agent-run':'r1'}},'stringData':{"
	                   "'api-key':'sk-" KEY48 "'}}"),
	        "owner");
	/* data beyond the one generated key */
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'data':{'api-key':'c2steA=='}")),
	        "secret");
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'stringData':{'api-key':'sk-" KEY48
	                            "','token':'x'}")),
	        "secret");
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'stringData':{'other':'sk-" KEY48 "'}")),
	        "secret");
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'stringData':{'api-key':'hunter2'}")),
	        "secret");
	assert_string_equal(
	        key_create(KEY_META("inst-web-proxy-key",
	                ",'stringData':{'api-key':'sk-" KEY48 "0'}")),
	        "secret");
	assert_string_equal(
	        key_create(KEY_META("inst-web-proxy-key",
	                ",'stringData':{'api-key':'sk-"
	                "0123456789ABCDEF0123456789abcdef0123456789abcdef'}")),
	        "secret");
	assert_string_equal(
	        key_create(KEY_META("inst-web-proxy-key", ",'stringData':{}")),
	        "secret");
	assert_string_equal(
	        key_create(KEY_META("inst-web-proxy-key", "")), "secret");
	/* a token Secret, or one made immutable */
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'type':'kubernetes.io/"
	                            "service-account-token','stringData':{"
	                            "'api-key':'sk-" KEY48 "'}")),
	        "secret");
	assert_string_equal(key_create(KEY_META("inst-web-proxy-key",
	                            ",'immutable':true,'stringData':{"
	                            "'api-key':'sk-" KEY48 "'}")),
	        "secret");
	/* never updated, patched or deleted, even when it is the run's */
	w = wr(IPC_OP_UPDATE, &secrets, "ns", "inst-web-proxy-key", NULL);
	assert_string_equal(run1(&w), "secret");
	w = wr(IPC_OP_DELETE, &secrets, "ns", "inst-web-proxy-key", NULL);
	assert_string_equal(run1(&w), "secret");
	w = wr(IPC_OP_PATCH, &secrets, "ns", "inst-web-proxy-key", NULL);
	assert_string_equal(run1(&w), "secret");
	/* another controller may not create it */
	{
		json_object *o = J(KEY_META("inst-web-proxy-key",
		        ",'stringData':{'api-key':'sk-" KEY48 "'}"));
		struct wpol_violation v;
		static const char inst[]
		        = "{'kind':'SympoziumInstance','metadata':{'name':"
		          "'inst','namespace':'ns','uid':'u-i'}}";
		w = wr(IPC_OP_CREATE, &secrets, "ns", "", o);
		assert_int_equal(check("instance", "ns/inst", inst, &w, 1, &v),
		        WPOL_VIOLATION);
		assert_string_equal(v.rule, "secret");
		json_object_put(o);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legit),
		cmocka_unit_test(test_child_rules),
		cmocka_unit_test(test_forbidden),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_not_owned),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_primary_gone),
		cmocka_unit_test(test_cluster_and_shared),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_orphan),
		cmocka_unit_test(test_policy_rows),
		cmocka_unit_test(test_config_rows),
		cmocka_unit_test(test_config_tested),
		cmocka_unit_test(test_workspace_pvc),
		cmocka_unit_test(test_agent_sandbox),
		cmocka_unit_test(test_web_proxy_key),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
