/*
 * test_rbacpol.c: the skill RBAC bounds of supervisor/rbacpol.c.  The
 * writes the real agentrun reconciler makes (run through the fake
 * supervisor end) all pass; each way out of bounds (cluster-admin
 * bindings, '*' rules, rules no SkillPack declares, other subjects,
 * names, namespaces, aggregation, other verbs, malformed objects) is
 * refused with its rule.
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
#include "common/xmalloc.h"
#include "supervisor/rbacpol.h"
#include "tests/lib/fakesup.h"
#include "workers/agentrun.h"

#define T0   1767225600000LL
#define RBAC "rbac.authorization.k8s.io"

static const struct ipc_res roles = { RBAC, "v1", "roles", true };
static const struct ipc_res croles = { RBAC, "v1", "clusterroles", false };
static const struct ipc_res rbs = { RBAC, "v1", "rolebindings", true };
static const struct ipc_res crbs
        = { RBAC, "v1", "clusterrolebindings", false };
static const struct ipc_res sas = { "", "v1", "serviceaccounts", true };
static const struct ipc_res cms = { "", "v1", "configmaps", true };

#define RUN                                                                   \
	"{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":\"AgentRun\","    \
	"\"metadata\":{\"name\":\"r\",\"namespace\":\"ns\",\"uid\":\"u1\","   \
	"\"resourceVersion\":\"5\",\"creationTimestamp\":"                    \
	"\"2026-01-01T00:00:00Z\",\"finalizers\":[\"sympozium.ai/"            \
	"agentrun-finalizer\"],\"labels\":{\"sympozium.ai/instance\":"        \
	"\"alice\"}},\"spec\":{\"instanceRef\":\"alice\",\"agentId\":"        \
	"\"primary\",\"sessionKey\":\"s1\",\"task\":\"do it\",\"model\":"     \
	"{\"provider\":\"openai\",\"model\":\"gpt-4o\",\"authSecretRef\":"    \
	"\"key\"},\"lifecycle\":{\"rbac\":[{\"apiGroups\":[\"\"],"            \
	"\"resources\":[\"configmaps\"],\"verbs\":[\"get\"]}]}}}"
/* The run takes its skills from the instance (spec 1.3 step 6). */
#define INSTANCE                                                              \
	"{\"metadata\":{\"name\":\"alice\",\"namespace\":\"ns\"},\"spec\":"   \
	"{\"skills\":[{\"skillPackRef\":\"skillpack-web\"},"                  \
	"{\"skillPackRef\":\"wild\"}]}}"
#define PACK_RULES                                                            \
	"[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]" \
	"}]"
#define PACK_CRULES                                                           \
	"[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],\"verbs\":"         \
	"[\"get\"]}]"
#define STAR_RULES                                                            \
	"[{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}]"
#define PACK_WEB                                                              \
	"{\"metadata\":{\"name\":\"web\",\"namespace\":\"sympozium-system\"}" \
	","                                                                   \
	"\"spec\":{\"sidecar\":{\"image\":\"img\",\"rbac\":" PACK_RULES       \
	",\"clusterRBAC\":" PACK_CRULES "}}}"
#define PACK_WILD                                                             \
	"{\"metadata\":{\"name\":\"wild\",\"namespace\":\"ns\"},\"spec\":"    \
	"{\"sidecar\":{\"image\":\"img\",\"rbac\":" STAR_RULES                \
	",\"clusterRBAC\":" STAR_RULES "}}}"
#define PACK_OTHER                                                            \
	"{\"metadata\":{\"name\":\"other\",\"namespace\":\"ns\"},\"spec\":"   \
	"{\"sidecar\":{\"image\":\"img\",\"rbac\":" STAR_RULES "}}}"
#define OURS                                                                  \
	"\"labels\":{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"        \
	"managed-by\":\"sympozium\",\"sympozium.ai/skill\":\"web\"}"

/* The fake cache: (plural, ns, name) -> JSON text. */
struct ent {
	const char *plural, *ns, *name, *json;
};

static struct ent cache[] = {
	{ "sympoziuminstances", "ns", "alice", INSTANCE },
	{ "skillpacks", "sympozium-system", "web", PACK_WEB },
	{ "skillpacks", "ns", "wild", PACK_WILD },
	{ "skillpacks", "ns", "other", PACK_OTHER },
	{ "roles", "ns", "sympozium-skill-web-r",
	        "{\"metadata\":{\"name\":\"sympozium-skill-web-r\","
	        "\"namespace\":\"ns\"," OURS "}}" },
	{ "clusterroles", "", "sympozium-skill-wild-r",
	        "{\"metadata\":{\"name\":\"sympozium-skill-wild-r\","
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\"}}}" },
	{ "clusterroles", "", "sympozium-skill-web-r",
	        "{\"metadata\":{\"name\":\"sympozium-skill-web-r\"," OURS
	        "}}" },
};

static size_t nlookups;
static const char *hidden; /* a name the cache does not hold now */

static const char *
lookup(void *arg, const struct ipc_res *res, const char *ns, const char *name)
{
	(void)arg;
	nlookups++;
	if (hidden != NULL && strcmp(name, hidden) == 0) {
		return (NULL);
	}
	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++) {
		if (strcmp(cache[i].plural, res->plural) == 0
		        && strcmp(cache[i].ns, ns) == 0
		        && strcmp(cache[i].name, name) == 0) {
			return (cache[i].json);
		}
	}
	return (NULL);
}

struct fx {
	json_object *run;
	json_object *objs[32];
	struct ipc_write w[32];
	size_t n;
	struct rbacpol_ctx c;
};

static int
setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	f->run = json_tokener_parse(RUN);
	f->c = (struct rbacpol_ctx) { f->run, lookup, NULL, false, f->w, 0 };
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	for (size_t i = 0; i < f->n; i++) {
		json_object_put(f->objs[i]);
	}
	json_object_put(f->run);
	free(f);
	hidden = NULL;
	return (0);
}

/* Adds a write to the RESULT; its JSON object is parsed from text. */
static const struct ipc_write *
add(struct fx *f, enum ipc_op op, const struct ipc_res *res, const char *ns,
        const char *name, const char *obj)
{
	assert_true(f->n < 32);
	f->objs[f->n] = obj != NULL ? json_tokener_parse(obj) : NULL;
	if (obj != NULL) {
		assert_non_null(f->objs[f->n]);
	}
	f->w[f->n] = (struct ipc_write) { .op = op,
		.res = *res,
		.namespace = ns,
		.name = name,
		.object = f->objs[f->n] };
	f->c.nwrites = ++f->n;
	return (&f->w[f->n - 1]);
}

/* A create of a role (kind "Role"/"ClusterRole") named name in ns
 * ("" cluster) with labels (JSON members) and rules. */
static char *
role(const char *kind, const char *ns, const char *name, const char *labels,
        const char *rules)
{
	return (xasprintf("{\"apiVersion\":\"" RBAC "/v1\",\"kind\":\"%s\","
	                  "\"metadata\":{\"name\":\"%s\"%s%s%s,%s},"
	                  "\"rules\":%s}",
	        kind, name, *ns ? ",\"namespace\":\"" : "", ns,
	        *ns ? "\"" : "", labels, rules));
}

static char *
binding(const char *kind, const char *ns, const char *name,
        const char *subjects, const char *roleref)
{
	return (xasprintf("{\"apiVersion\":\"" RBAC "/v1\",\"kind\":\"%s\","
	                  "\"metadata\":{\"name\":\"%s\"%s%s%s," OURS "},"
	                  "\"subjects\":%s,\"roleRef\":%s}",
	        kind, name, *ns ? ",\"namespace\":\"" : "", ns,
	        *ns ? "\"" : "", subjects, roleref));
}

#define SUBJ                                                                  \
	"[{\"kind\":\"ServiceAccount\",\"name\":\"sympozium-agent\","         \
	"\"namespace\":\"ns\"}]"
#define REF(kind, name)                                                       \
	"{\"apiGroup\":\"" RBAC "\",\"kind\":\"" kind "\",\"name\":\"" name   \
	"\"}"

static void
expect(struct fx *f, const struct ipc_write *w, const char *want_rule)
{
	const char *rule = NULL;
	char detail[256] = "";
	int rc = rbacpol_check(&f->c, w, &rule, detail, sizeof(detail));

	if (want_rule == NULL) {
		if (rc != 0) {
			fail_msg("refused (%s): %s", rule, detail);
		}
		return;
	}
	if (rc != -1 || rule == NULL || strcmp(rule, want_rule) != 0) {
		fail_msg("want %s, got rc %d rule %s (%s)", want_rule, rc,
		        rule ? rule : "-", detail);
	}
	assert_true(detail[0] != '\0');
}

/* A Role create, the object from role(). */
static void
expect_role(struct fx *f, const char *kind, const char *ns, const char *name,
        const char *labels, const char *rules, const char *want_rule)
{
	char *o = role(kind, ns, name, labels, rules);

	expect(f,
	        add(f, IPC_OP_CREATE, strcmp(kind, "Role") ? &croles : &roles,
	                *ns ? ns : NULL, NULL, o),
	        want_rule);
	free(o);
}

/* Everything the agentrun reconciler writes on the Pending path is within
 * bounds, with its skills inherited from the instance. */
static void
test_agentrun_writes_pass(void **state)
{
	struct fx *f = *state;
	struct fakesup *fs = fakesup_start();
	json_object *ch = json_object_new_array();
	struct fakesup_run r;
	struct ipc_write *ws;
	size_t nrbac = 0;

	fakesup_add_json(fs, "sympoziuminstances", INSTANCE);
	fakesup_add_json(fs, "skillpacks", PACK_WEB);
	fakesup_run(&agentrun_reconciler, fs, "ns/r", f->run, ch, T0, &r);
	assert_true(r.nwrites >= 8);
	ws = xcalloc(r.nwrites, sizeof(*ws));
	for (size_t i = 0; i < r.nwrites; i++) {
		ws[i] = fakesup_write(&r, i);
	}
	f->c.writes = ws;
	f->c.nwrites = r.nwrites;
	for (size_t i = 0; i < r.nwrites; i++) {
		const char *g = ws[i].res.group;
		nrbac += (g != NULL && strcmp(g, RBAC) == 0)
		        || strcmp(ws[i].res.plural, "serviceaccounts") == 0;
		expect(f, &ws[i], NULL);
	}
	/* SA, Role+RoleBinding, ClusterRole+ClusterRoleBinding of web,
	 * the lifecycle Role+RoleBinding. */
	assert_int_equal(nrbac, 7);
	free(ws);
	f->c.writes = f->w;
	f->c.nwrites = 0;
	fakesup_run_fini(&r);
	json_object_put(ch);
	fakesup_stop(fs);
}

static void
test_roles(void **state)
{
	struct fx *f = *state;

	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, PACK_RULES,
	        NULL);
	expect_role(f, "ClusterRole", "", "sympozium-skill-web-r", OURS,
	        PACK_CRULES, NULL);
	/* The ClusterRole's rules are clusterRBAC, not rbac. */
	expect_role(f, "ClusterRole", "", "sympozium-skill-web-r", OURS,
	        PACK_RULES, "rbac-rules");
	/* One more rule than declared, one less, none. */
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS,
	        "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":"
	        "[\"get\"]},{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],"
	        "\"verbs\":[\"get\"]}]",
	        "rbac-rules");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS,
	        "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"secrets\"],"
	        "\"verbs\":[\"get\"]}]",
	        "rbac-rules");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, "[]",
	        "rbac-rules");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, "{}",
	        "rbac-rules");
	/* Another namespace, another name, a pack the run does not use. */
	expect_role(f, "Role", "kube-system", "sympozium-skill-web-r", OURS,
	        PACK_RULES, "rbac-namespace");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r2", OURS,
	        PACK_RULES, "rbac-name");
	expect_role(f, "Role", "ns", "admin", OURS, PACK_RULES, "rbac-name");
	expect_role(f, "Role", "ns", "sympozium-skill-other-r",
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"
	        "managed-by\":\"sympozium\",\"sympozium.ai/skill\":\"other\"}",
	        STAR_RULES, "rbac-name");
	/* The lifecycle Role carries the run's spec.lifecycle.rbac; there
	 * is no lifecycle ClusterRole. */
	expect_role(f, "Role", "ns", "sympozium-lifecycle-r",
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"
	        "managed-by\":\"sympozium\",\"sympozium.ai/component\":"
	        "\"lifecycle\"}",
	        "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
	        "\"verbs\":[\"get\"]}]",
	        NULL);
	expect_role(f, "Role", "ns", "sympozium-lifecycle-r",
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"
	        "managed-by\":\"sympozium\",\"sympozium.ai/component\":"
	        "\"lifecycle\"}",
	        STAR_RULES, "rbac-wildcard");
	expect_role(f, "ClusterRole", "", "sympozium-lifecycle-r", OURS,
	        PACK_RULES, "rbac-name");
}

static void
test_wildcard(void **state)
{
	struct fx *f = *state;
	const char *wild = "\"labels\":{\"sympozium.ai/agent-run\":\"r\","
	                   "\"sympozium.ai/managed-by\":\"sympozium\","
	                   "\"sympozium.ai/skill\":\"wild\"}";

	/* The SkillPack declares '*': refused unless the operator allows
	 * it; allowed, rules must still be the declared ones. */
	expect_role(f, "Role", "ns", "sympozium-skill-wild-r", wild,
	        STAR_RULES, "rbac-wildcard");
	expect_role(f, "ClusterRole", "", "sympozium-skill-wild-r", wild,
	        STAR_RULES, "rbac-wildcard");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS,
	        "[{\"apiGroups\":[\"\"],\"resources\":[\"pods/*\"],"
	        "\"verbs\":[\"get\"]}]",
	        "rbac-wildcard");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS,
	        "[{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"get\"]}]",
	        "rbac-wildcard");
	f->c.allow_wildcard = true;
	expect_role(f, "Role", "ns", "sympozium-skill-wild-r", wild,
	        STAR_RULES, NULL);
	expect_role(f, "ClusterRole", "", "sympozium-skill-wild-r", wild,
	        STAR_RULES, NULL);
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, STAR_RULES,
	        "rbac-rules");
}

/* Labels and fields that would change what a role grants or who gets
 * it: aggregation into admin, an aggregationRule, wrong labels. */
static void
test_labels_and_fields(void **state)
{
	struct fx *f = *state;
	char *o;

	expect_role(f, "ClusterRole", "", "sympozium-skill-web-r",
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\",\"sympozium.ai/"
	        "managed-by\":\"sympozium\",\"sympozium.ai/skill\":\"web\","
	        "\"rbac.authorization.k8s.io/aggregate-to-admin\":\"true\"}",
	        PACK_CRULES, "rbac-label");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r",
	        "\"labels\":{\"sympozium.ai/agent-run\":\"x\",\"sympozium.ai/"
	        "managed-by\":\"sympozium\",\"sympozium.ai/skill\":\"web\"}",
	        PACK_RULES, "rbac-label");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r",
	        "\"labels\":{\"sympozium.ai/agent-run\":\"r\"}", PACK_RULES,
	        "rbac-label");
	expect_role(f, "Role", "ns", "sympozium-skill-web-r",
	        "\"annotations\":{}," OURS, PACK_RULES, "rbac-fields");
	o = xasprintf(
	        "{\"kind\":\"ClusterRole\",\"metadata\":{\"name\":"
	        "\"sympozium-skill-web-r\"," OURS "},\"rules\":" PACK_CRULES
	        ",\"aggregationRule\":{\"clusterRoleSelectors\":[{"
	        "\"matchLabels\":{\"rbac.authorization.k8s.io/"
	        "aggregate-to-admin\":\"true\"}}]}}");
	expect(f, add(f, IPC_OP_CREATE, &croles, NULL, NULL, o),
	        "rbac-fields");
	free(o);
	/* The write's name or namespace is not its object's. */
	o = role("Role", "ns", "sympozium-skill-web-r", OURS, PACK_RULES);
	expect(f, add(f, IPC_OP_CREATE, &roles, "ns", "admin", o),
	        "rbac-name");
	expect(f, add(f, IPC_OP_CREATE, &roles, "kube-system", NULL, o),
	        "rbac-name");
	/* Only create and delete; only rbac v1. */
	expect(f,
	        add(f, IPC_OP_UPDATE, &roles, "ns", "sympozium-skill-web-r",
	                o),
	        "rbac-op");
	expect(f,
	        add(f, IPC_OP_PATCH, &croles, NULL, "sympozium-skill-web-r",
	                NULL),
	        "rbac-op");
	{
		struct ipc_res beta = { RBAC, "v1beta1", "roles", true };
		expect(f, add(f, IPC_OP_CREATE, &beta, "ns", NULL, o),
		        "rbac-op");
	}
	free(o);
	/* Not an object; metadata missing. */
	expect(f, add(f, IPC_OP_CREATE, &roles, "ns", NULL, "[1]"), "rbac-op");
	expect(f, add(f, IPC_OP_CREATE, &roles, "ns", NULL, "{\"rules\":[]}"),
	        "rbac-name");
}

static void
test_bindings(void **state)
{
	struct fx *f = *state;
	const char *n = "sympozium-skill-web-r";
	char *o;
	size_t i;
	static const struct {
		const char *kind, *ns, *subj, *ref, *rule;
	} cases[] = {
		/* Within bounds: the Role is in the cache with our labels;
		 * the ClusterRole too. */
		{ "RoleBinding", "ns", SUBJ,
		        REF("Role", "sympozium-skill-web-r"), NULL },
		{ "ClusterRoleBinding", "", SUBJ,
		        REF("ClusterRole", "sympozium-skill-web-r"), NULL },
		/* cluster-admin, admin, edit; a Role where a ClusterRole is
		 * due; another group. */
		{ "ClusterRoleBinding", "", SUBJ,
		        REF("ClusterRole", "cluster-admin"), "rbac-roleref" },
		{ "RoleBinding", "ns", SUBJ, REF("ClusterRole", "admin"),
		        "rbac-roleref" },
		{ "RoleBinding", "ns", SUBJ, REF("Role", "edit"),
		        "rbac-roleref" },
		{ "ClusterRoleBinding", "", SUBJ,
		        REF("Role", "sympozium-skill-web-r"), "rbac-roleref" },
		{ "RoleBinding", "ns", SUBJ,
		        "{\"apiGroup\":\"x.io\",\"kind\":\"Role\",\"name\":"
		        "\"sympozium-skill-web-r\"}",
		        "rbac-roleref" },
		{ "RoleBinding", "ns", SUBJ, "\"x\"", "rbac-roleref" },
		/* A skill role name that is neither in this RESULT nor in the
		 * cache as ours (wild: cached without managed-by). */
		{ "RoleBinding", "ns", SUBJ,
		        REF("Role", "sympozium-lifecycle-r"), "rbac-roleref" },
		{ "ClusterRoleBinding", "", SUBJ,
		        REF("ClusterRole", "sympozium-skill-wild-r"),
		        "rbac-roleref" },
		/* Subjects: another SA, another namespace, a group, two, none,
		 * not an array. */
		{ "RoleBinding", "ns",
		        "[{\"kind\":\"ServiceAccount\",\"name\":\"default\","
		        "\"namespace\":\"ns\"}]",
		        REF("Role", "sympozium-skill-web-r"), "rbac-subject" },
		{ "ClusterRoleBinding", "",
		        "[{\"kind\":\"ServiceAccount\",\"name\":\"sympozium-"
		        "agent\","
		        "\"namespace\":\"kube-system\"}]",
		        REF("ClusterRole", "sympozium-skill-web-r"),
		        "rbac-subject" },
		{ "RoleBinding", "ns",
		        "[{\"kind\":\"Group\",\"name\":\"system:masters\","
		        "\"apiGroup\":\"" RBAC "\"}]",
		        REF("Role", "sympozium-skill-web-r"), "rbac-subject" },
		{ "RoleBinding", "ns",
		        "[{\"kind\":\"ServiceAccount\",\"name\":\"sympozium-"
		        "agent\","
		        "\"namespace\":\"ns\"},{\"kind\":\"User\",\"name\":"
		        "\"u\"}]",
		        REF("Role", "sympozium-skill-web-r"), "rbac-subject" },
		{ "RoleBinding", "ns", "[]",
		        REF("Role", "sympozium-skill-web-r"), "rbac-subject" },
		{ "RoleBinding", "ns", "{}",
		        REF("Role", "sympozium-skill-web-r"), "rbac-subject" },
		{ "RoleBinding", "ns", "[7]",
		        REF("Role", "sympozium-skill-web-r"), "rbac-subject" },
	};

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = binding(cases[i].kind, cases[i].ns, n, cases[i].subj,
		        cases[i].ref);
		expect(f,
		        add(f, IPC_OP_CREATE, cases[i].ns[0] ? &rbs : &crbs,
		                cases[i].ns[0] ? cases[i].ns : NULL, NULL, o),
		        cases[i].rule);
		free(o);
	}
	/* A binding with a name that is no skill RBAC of the run. */
	o = binding("ClusterRoleBinding", "", "pwn", SUBJ,
	        REF("ClusterRole", "sympozium-skill-web-r"));
	expect(f, add(f, IPC_OP_CREATE, &crbs, NULL, NULL, o), "rbac-name");
	free(o);
}

/* A roleRef may name a role the same RESULT creates (the lifecycle Role
 * is not cached here). */
static void
test_roleref_same_result(void **state)
{
	struct fx *f = *state;
	const char *life = "\"labels\":{\"sympozium.ai/agent-run\":\"r\","
	                   "\"sympozium.ai/managed-by\":\"sympozium\","
	                   "\"sympozium.ai/component\":\"lifecycle\"}";
	char *b = xasprintf(
	        "{\"kind\":\"RoleBinding\",\"metadata\":{\"name\":"
	        "\"sympozium-lifecycle-r\",\"namespace\":\"ns\",%s},"
	        "\"subjects\":" SUBJ ",\"roleRef\":%s}",
	        life, REF("Role", "sympozium-lifecycle-r"));
	char *r;

	expect(f, add(f, IPC_OP_CREATE, &rbs, "ns", NULL, b), "rbac-roleref");
	/* A Role of that name in another namespace does not count. */
	r = role("Role", "other", "sympozium-lifecycle-r", life, "[]");
	add(f, IPC_OP_CREATE, &roles, "other", NULL, r);
	expect(f, &f->w[0], "rbac-roleref");
	free(r);
	r = role("Role", "ns", "sympozium-lifecycle-r", life,
	        "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
	        "\"verbs\":[\"get\"]}]");
	expect(f, add(f, IPC_OP_CREATE, &roles, "ns", NULL, r), NULL);
	expect(f, &f->w[0], NULL);
	free(r);
	free(b);
}

static void
test_serviceaccount_and_deletes(void **state)
{
	struct fx *f = *state;
	const char *sa = "{\"kind\":\"ServiceAccount\",\"metadata\":{"
	                 "\"name\":\"sympozium-agent\",\"namespace\":\"ns\"}}";

	expect(f, add(f, IPC_OP_CREATE, &sas, "ns", NULL, sa), NULL);
	expect(f, add(f, IPC_OP_CREATE, &sas, "kube-system", NULL, sa),
	        "rbac-name");
	expect(f,
	        add(f, IPC_OP_CREATE, &sas, "ns", NULL,
	                "{\"metadata\":{\"name\":\"default\","
	                "\"namespace\":\"ns\"}}"),
	        "rbac-name");
	expect(f,
	        add(f, IPC_OP_CREATE, &sas, "ns", NULL,
	                "{\"metadata\":{\"name\":\"sympozium-agent\","
	                "\"namespace\":\"ns\"},\"secrets\":[{\"name\":"
	                "\"admin-token\"}]}"),
	        "rbac-fields");
	expect(f, add(f, IPC_OP_DELETE, &sas, "ns", "sympozium-agent", NULL),
	        "rbac-op");
	/* Deletes: our names only, labelled ours when cached. */
	expect(f,
	        add(f, IPC_OP_DELETE, &croles, NULL, "sympozium-skill-web-r",
	                NULL),
	        NULL);
	expect(f,
	        add(f, IPC_OP_DELETE, &crbs, NULL, "sympozium-skill-gone-r",
	                NULL),
	        NULL);
	expect(f,
	        add(f, IPC_OP_DELETE, &croles, NULL, "sympozium-skill-wild-r",
	                NULL),
	        "rbac-label");
	expect(f, add(f, IPC_OP_DELETE, &croles, NULL, "cluster-admin", NULL),
	        "rbac-name");
	expect(f,
	        add(f, IPC_OP_DELETE, &croles, NULL, "sympozium-skill-r",
	                NULL),
	        "rbac-name");
	expect(f,
	        add(f, IPC_OP_DELETE, &roles, "kube-system",
	                "sympozium-lifecycle-r", NULL),
	        "rbac-namespace");
	expect(f,
	        add(f, IPC_OP_DELETE, &croles, NULL, "sympozium-skill-x-rr",
	                NULL),
	        "rbac-name");
	/* Not RBAC: not this module's business. */
	expect(f, add(f, IPC_OP_DELETE, &cms, "kube-system", "..", NULL),
	        NULL);
}

/* Which SkillPacks count: the run's own skills, else its instance's
 * (not for a web-proxy run); one not in the cache (nor the instance) is
 * "rbac-pending", not a verdict. */
static void
test_which_skillpacks(void **state)
{
	struct fx *f = *state;
	const char *other = "\"labels\":{\"sympozium.ai/agent-run\":\"r\","
	                    "\"sympozium.ai/managed-by\":\"sympozium\","
	                    "\"sympozium.ai/skill\":\"other\"}";

	hidden = "web";
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, PACK_RULES,
	        "rbac-pending");
	hidden = "alice";
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, PACK_RULES,
	        "rbac-pending");
	hidden = NULL;
	json_object_object_add(json_object_object_get(f->run, "spec"),
	        "skills",
	        json_tokener_parse(
	                "[{\"skillPackRef\":\"skillpack-other\"}]"));
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, PACK_RULES,
	        "rbac-name");
	f->c.allow_wildcard = true;
	expect_role(f, "Role", "ns", "sympozium-skill-other-r", other,
	        STAR_RULES, NULL);
	/* A web-proxy run does not inherit the instance's skills. */
	json_object_object_del(
	        json_object_object_get(f->run, "spec"), "skills");
	json_object_object_add(jx_get(f->run, "metadata.labels"),
	        "sympozium.ai/source", json_object_new_string("web-proxy"));
	hidden = "alice";
	expect_role(f, "Role", "ns", "sympozium-skill-web-r", OURS, PACK_RULES,
	        "rbac-name");
}

/* A run without a name bounds nothing: every RBAC write is refused. */
static void
test_run_without_name(void **state)
{
	struct fx *f = *state;
	json_object *bare = json_tokener_parse("{\"spec\":{}}");

	f->c.run = bare;
	expect(f,
	        add(f, IPC_OP_CREATE, &sas, "ns", NULL,
	                "{\"metadata\":{\"name\":\"sympozium-agent\"}}"),
	        "rbac-name");
	f->c.run = f->run;
	json_object_put(bare);
	nlookups = 0;
	expect(f, add(f, IPC_OP_CREATE, &cms, "ns", NULL, "{}"), NULL);
	assert_int_equal(nlookups, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_agentrun_writes_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roles, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_wildcard, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_labels_and_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_bindings, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_roleref_same_result, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_serviceaccount_and_deletes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_which_skillpacks, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_run_without_name, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
