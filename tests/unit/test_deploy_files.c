/*
 * test_deploy_files.c: deploy/ checked against the code and against its
 * own rules, without a cluster.
 *
 * The ClusterRole (deploy/rbac/cluster_role.yaml) must grant exactly what
 * the code needs, derived here from the code itself:
 *   - list, watch: every kind of every controller's watch table
 *     (supervisor/ctrl.c through ctrl_at(), the test controller excepted);
 *   - the reconcilers' writes and views, found by scanning the workers/
 * sources for the calls that emit them (kobj_create, kobj_update, kobj_delete,
 *     kobj_merge_patch, kobj_update_status, ipc_write_new/_patch_new, the
 *     reconcilers' own wrappers delete_with, put_child, delete_child,
 *     update, and the view reads view_get, view_list, get, vget, fetch,
 *     locate) and the &kobj_<resource> each call names; a get needs "get"
 *     always (views.c confirms a cache miss live), a list needs "list"
 *     only when no unselected cache holds that kind (views.c reads those
 *     live);
 *   - secrets get (view_secret_meta), pods/log get (view_pod_log), events
 *     create and patch (the event recorder), <primary>/finalizers update
 *     for every controller that owns children (blockOwnerDeletion), and
 *     escalate and bind on roles and clusterroles when the code creates
 *     RBAC objects (the API server's escalation check), and
 *     sympoziumconfigs/finalizers update when the code creates Gateways
 *     (their controller reference, without a child watch).
 * Every needed (group, resource, verb) is granted, and nothing else,
 * split in two: anything on clusterroles and clusterrolebindings and
 * escalate/bind are the opt-in overlay deploy/overlays/skill-rbac/ (its
 * kustomization the base's parts and image plus that ClusterRole), the
 * rest the default ClusterRole, which grants no escalate, bind,
 * impersonate, '*', Secret create or Lease.  The
 * leader-election Role grants exactly get, create, update and watch on
 * leases (a standby watches the Lease: supervisor/leader.c).
 *
 * The Deployment keeps its hardening (two replicas, --leader-elect,
 * non-root, read-only root, no capabilities, seccomp, in-memory runtime
 * directory, probes, resources); the Dockerfile is multi-stage, runs as a
 * non-root USER, ADDs nothing and copies no secret.  The image build is
 * not exercised here (no docker on the test machines).
 */
#include <dirent.h>
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
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "supervisor/ctrl.h"
#include "tests/lib/testutil.h"
#include "workers/kobj.h"

#define MAXP 512

/* A set of "group|resource|verb" strings. */
struct perms {
	char *p[MAXP];
	size_t n;
};

static void
perm_add(struct perms *s, const char *group, const char *res, const char *verb)
{
	char *k = xasprintf("%s|%s|%s", group, res, verb);

	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->p[i], k) == 0) {
			free(k);
			return;
		}
	}
	assert_true(s->n < MAXP);
	s->p[s->n++] = k;
}

static bool
perm_has(const struct perms *s, const char *k)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->p[i], k) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
perm_free(struct perms *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i]);
	}
	s->n = 0;
}

static json_object *
read_yaml(const char *path)
{
	size_t len = 0;
	char *text = testutil_read_file(path, &len);
	char err[256] = "";
	json_object *docs = yamlj_parse_all(text, len, err, sizeof(err));

	if (docs == NULL) {
		fail_msg("%s: %s", path, err);
	}
	free(text);
	return (docs);
}

/* The document of that kind in a YAML file (borrowed from docs). */
static json_object *
doc_of(json_object *docs, const char *kind)
{
	for (size_t i = 0; i < json_object_array_length(docs); i++) {
		json_object *d = json_object_array_get_idx(docs, i);
		const char *k = jx_get_str(d, "kind");
		if (k != NULL && strcmp(k, kind) == 0) {
			return (d);
		}
	}
	fail_msg("no %s", kind);
	return (NULL);
}

static void
rules_to_perms(json_object *role, struct perms *s)
{
	json_object *rules = jx_get(role, "rules");

	assert_non_null(rules);
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		json_object *gs = jx_get(r, "apiGroups"),
		            *rs = jx_get(r, "resources"),
		            *vs = jx_get(r, "verbs");
		assert_null(jx_get(r, "resourceNames"));
		assert_null(jx_get(r, "nonResourceURLs"));
		for (size_t g = 0; g < json_object_array_length(gs); g++) {
			for (size_t k = 0; k < json_object_array_length(rs);
			        k++) {
				for (size_t v = 0;
				        v < json_object_array_length(vs);
				        v++) {
					const char *verb = json_object_get_string(
					        json_object_array_get_idx(
					                vs, v));
					assert_string_not_equal(verb, "*");
					perm_add(s,
					        json_object_get_string(
					                json_object_array_get_idx(
					                        gs, g)),
					        json_object_get_string(
					                json_object_array_get_idx(
					                        rs, k)),
					        verb);
				}
			}
		}
	}
}

/* ---- what the code needs ---- */

static const struct {
	const char *name;
	const struct ipc_res *res;
} RES[] = {
	{ "configmaps", &kobj_configmaps },
	{ "secrets", &kobj_secrets },
	{ "services", &kobj_services },
	{ "serviceaccounts", &kobj_serviceaccounts },
	{ "pods", &kobj_pods },
	{ "pvcs", &kobj_pvcs },
	{ "deployments", &kobj_deployments },
	{ "jobs", &kobj_jobs },
	{ "roles", &kobj_roles },
	{ "rolebindings", &kobj_rolebindings },
	{ "clusterroles", &kobj_clusterroles },
	{ "clusterrolebindings", &kobj_clusterrolebindings },
	{ "networkpolicies", &kobj_networkpolicies },
	{ "agentruns", &kobj_agentruns },
	{ "instances", &kobj_instances },
	{ "personapacks", &kobj_personapacks },
	{ "skillpacks", &kobj_skillpacks },
	{ "schedules", &kobj_schedules },
	{ "mcpservers", &kobj_mcpservers },
	{ "policies", &kobj_policies },
	{ "configs", &kobj_configs },
	{ "events", &kobj_events },
	{ "gateways", &kobj_gateways },
	{ "gatewayclasses", &kobj_gatewayclasses },
	{ "httproutes", &kobj_httproutes },
	{ "sandboxes", &kobj_sandboxes },
	{ "sandboxclaims", &kobj_sandboxclaims },
};

static const struct ipc_res *
res_named(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(RES) / sizeof(RES[0]); i++) {
		if (strlen(RES[i].name) == len
		        && strncmp(RES[i].name, name, len) == 0) {
			return (RES[i].res);
		}
	}
	fail_msg("unknown resource kobj_%.*s", (int)len, name);
	return (NULL);
}

/* Calls that emit requests, and what they need.  A get always needs
 * "get" (views.c confirms a cache miss live); a list needs "list" only
 * for kinds no unselected cache holds. */
enum need {
	N_CREATE,
	N_UPDATE,
	N_STATUS,
	N_PATCH,
	N_DELETE,
	N_PUT,
	N_GET,
	N_LIST
};

static const struct {
	const char *fn;
	enum need need;
} CALLS[] = {
	{ "kobj_create", N_CREATE },
	{ "kobj_update", N_UPDATE },
	{ "kobj_update_status", N_STATUS },
	{ "kobj_merge_patch", N_PATCH },
	{ "kobj_delete", N_DELETE },
	{ "ipc_write_patch_new", N_PATCH },
	{ "delete_with", N_DELETE },
	{ "delete_child", N_DELETE },
	{ "put_child", N_PUT },
	{ "update", N_UPDATE },
	{ "view_get", N_GET },
	{ "get", N_GET },
	{ "vget", N_GET },
	{ "fetch", N_GET },
	{ "locate", N_GET },
	{ "view_list", N_LIST },
	/* mcpserver.c: a child the watch does not see, read and adopted */
	{ "unseen_child", N_GET },
	{ "unseen_child", N_PATCH },
	/* sympoziumconfig.c: the Gateway no cache holds */
	{ "kobj_tested_patch", N_PATCH },
};

/* Whether some controller watches r with no label selector. */
static bool
unselected_cache(const struct ipc_res *r)
{
	const struct ctrl_spec *s;

	for (size_t i = 0; (s = ctrl_at(i)) != NULL; i++) {
		for (size_t j = 0;
		        strcmp(s->name, "testctl") != 0 && j < s->nwatches;
		        j++) {
			const struct ctrl_watch *w = &s->watches[j];
			if (w->selector == NULL
			        && strcmp(w->res.group, r->group) == 0
			        && strcmp(w->res.plural, r->plural) == 0) {
				return (true);
			}
		}
	}
	return (false);
}

static void
need(struct perms *s, enum need n, const struct ipc_res *r)
{
	static const char *const verbs[] = { [N_CREATE] = "create",
		[N_UPDATE] = "update",
		[N_PATCH] = "patch",
		[N_DELETE] = "delete",
		[N_GET] = "get",
		[N_LIST] = "list" };
	char sub[160];

	if (n == N_STATUS) {
		snprintf(sub, sizeof(sub), "%s/status", r->plural);
		perm_add(s, r->group, sub, "update");
	} else if (n == N_PUT) {
		perm_add(s, r->group, r->plural, "create");
		perm_add(s, r->group, r->plural, "update");
	} else if (n != N_LIST || !unselected_cache(r)) {
		perm_add(s, r->group, r->plural, verbs[n]);
	}
}

/* The text of the call's arguments: from the '(' at p to its ')'. */
static size_t
args_len(const char *p)
{
	int depth = 0;

	for (size_t i = 0; p[i] != '\0'; i++) {
		depth += p[i] == '(';
		depth -= p[i] == ')';
		if (depth == 0) {
			return (i + 1);
		}
	}
	return (strlen(p));
}

static bool
ident_char(char c)
{
	return (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	        || (c >= '0' && c <= '9'));
}

/* The resources the argument text names: &kobj_X, or kinds[k] (the
 * resources of the file's kinds[] initialiser). */
static void
call_needs(struct perms *s, enum need n, const char *text, const char *a,
        size_t len)
{
	for (size_t i = 0; i + 6 < len; i++) {
		if (strncmp(a + i, "&kobj_", 6) == 0) {
			size_t k = i + 6, e = k;
			while (ident_char(a[e])) {
				e++;
			}
			need(s, n, res_named(a + k, e - k));
		} else if (strncmp(a + i, "kinds[k]", 8) == 0) {
			const char *init = strstr(text, "kinds[]");
			assert_non_null(init);
			call_needs(s, n, text, init, strcspn(init, ";"));
		}
	}
}

/* Every call of CALLS in one file; IPC_OP_UPDATE_STATUS in
 * ipc_write_new is a status update. */
static void
scan_file(struct perms *s, const char *path)
{
	char *text = testutil_read_file(path, NULL);

	for (const char *p = text; *p != '\0'; p++) {
		if (p > text && ident_char(p[-1])) {
			continue;
		}
		for (size_t c = 0; c < sizeof(CALLS) / sizeof(CALLS[0]); c++) {
			size_t fl = strlen(CALLS[c].fn);
			if (strncmp(p, CALLS[c].fn, fl) == 0 && p[fl] == '(') {
				call_needs(s, CALLS[c].need, text, p + fl,
				        args_len(p + fl));
			}
		}
		if (strncmp(p, "ipc_write_new(", 14) == 0) {
			size_t n = args_len(p + 13);
			char *a = xstrndup(p + 13, n);
			if (strstr(a, "IPC_OP_UPDATE_STATUS") != NULL) {
				call_needs(s, N_STATUS, text, a, n);
			}
			free(a);
		}
	}
	free(text);
}

/* The reconcilers' sources: every .c file in workers/ but the runtime's. */
static bool
reconciler_source(const char *name)
{
	static const char *const infra[] = { "kobj.c", "view.c", "runtime.c",
		"registry.c", "main.c", NULL };
	size_t n = strlen(name);

	for (size_t i = 0; infra[i] != NULL; i++) {
		if (strcmp(name, infra[i]) == 0) {
			return (false);
		}
	}
	return (n > 2 && strcmp(name + n - 2, ".c") == 0);
}

static void
scan_workers(struct perms *s)
{
	DIR *d = opendir("workers");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (reconciler_source(e->d_name)) {
			char *path = xasprintf("workers/%s", e->d_name);
			scan_file(s, path);
			free(path);
			n++;
		}
	}
	closedir(d);
	assert_true(n >= 6);
}

static void
needed(struct perms *s)
{
	const struct ctrl_spec *c;
	char sub[160];

	for (size_t i = 0; (c = ctrl_at(i)) != NULL; i++) {
		bool owns = false;
		if (strcmp(c->name, "testctl") == 0) {
			continue;
		}
		for (size_t j = 0; j < c->nwatches; j++) {
			perm_add(s, c->watches[j].res.group,
			        c->watches[j].res.plural, "list");
			perm_add(s, c->watches[j].res.group,
			        c->watches[j].res.plural, "watch");
			owns |= c->watches[j].role == CTRL_CHILD;
		}
		if (owns) {
			snprintf(sub, sizeof(sub), "%s/finalizers",
			        c->watches[0].res.plural);
			perm_add(s, c->watches[0].res.group, sub, "update");
		}
	}
	scan_workers(s);
	/* the SympoziumConfig's Gateway carries its controller reference
	 * (blockOwnerDeletion) without a child watch (the Gateway API may
	 * not be served) */
	if (perm_has(s, "gateway.networking.k8s.io|gateways|create")) {
		perm_add(s, "sympozium.ai", "sympoziumconfigs/finalizers",
		        "update");
	}
	perm_add(s, "", "secrets", "get");
	perm_add(s, "", "pods/log", "get");
	perm_add(s, "", "events", "create");
	perm_add(s, "", "events", "patch");
	if (perm_has(s, "rbac.authorization.k8s.io|roles|create")
	        || perm_has(
	                s, "rbac.authorization.k8s.io|clusterroles|create")) {
		perm_add(s, "rbac.authorization.k8s.io", "roles", "escalate");
		perm_add(s, "rbac.authorization.k8s.io", "roles", "bind");
		perm_add(s, "rbac.authorization.k8s.io", "clusterroles",
		        "escalate");
		perm_add(s, "rbac.authorization.k8s.io", "clusterroles",
		        "bind");
	}
}

/* Whether perm "group|resource|verb" is the overlay's beyond the
 * default: anything on clusterroles or clusterrolebindings, escalate and
 * bind; and Secret create (a server-mode run's web-proxy key: the
 * default grants no Secret create). */
static bool
skill_only(const char *k)
{
	const char *res = strchr(k, '|') + 1, *verb = strrchr(k, '|') + 1;

	return (strcmp(k, "|secrets|create") == 0
	        || (strncmp(k, "rbac.authorization.k8s.io|", 26) == 0
	                && (strncmp(res, "clusterrole", 11) == 0
	                        || strcmp(verb, "escalate") == 0
	                        || strcmp(verb, "bind") == 0)));
}

/* The needed perms, split: the default deploy's, the overlay's. */
static void
needed_split(struct perms *def, struct perms *skill)
{
	struct perms all = { 0 };

	needed(&all);
	/* sanity: the scan found the writes */
	assert_true(perm_has(&all, "batch|jobs|create"));
	assert_true(perm_has(&all, "sympozium.ai|skillpacks/status|update"));
	assert_true(perm_has(&all, "|secrets|delete"));
	assert_true(all.n > 60);
	for (size_t i = 0; i < all.n; i++) {
		char *g = xstrdup(all.p[i]), *r = strchr(g, '|'), *v;
		*r++ = '\0';
		v = strchr(r, '|');
		*v++ = '\0';
		perm_add(skill_only(all.p[i]) ? skill : def, g, r, v);
		free(g);
	}
	perm_free(&all);
}

/* Fails unless got is exactly want, naming each difference. */
static void
assert_same_perms(
        const struct perms *want, const struct perms *got, const char *what)
{
	int missing = 0, extra = 0;

	for (size_t i = 0; i < want->n; i++) {
		if (!perm_has(got, want->p[i])) {
			fprintf(stderr, "%s: needed, not granted: %s\n", what,
			        want->p[i]);
			missing++;
		}
	}
	for (size_t i = 0; i < got->n; i++) {
		if (!perm_has(want, got->p[i])) {
			fprintf(stderr, "%s: granted, not needed: %s\n", what,
			        got->p[i]);
			extra++;
		}
	}
	assert_int_equal(missing, 0);
	assert_int_equal(extra, 0);
}

static void
test_clusterrole_is_what_the_code_needs(void **state)
{
	json_object *docs = read_yaml("deploy/rbac/cluster_role.yaml");
	struct perms want = { 0 }, skill = { 0 }, got = { 0 };

	(void)state;
	needed_split(&want, &skill);
	rules_to_perms(doc_of(docs, "ClusterRole"), &got);
	assert_same_perms(&want, &got, "deploy/rbac/cluster_role.yaml");
	perm_free(&want);
	perm_free(&skill);
	perm_free(&got);
	json_object_put(docs);
}

/* No verb of the default deploy leads to cluster-admin: no escalate,
 * bind or impersonate, no '*', nothing on clusterroles or
 * clusterrolebindings, no create of Secrets, no Leases beyond the
 * leader-election Role's namespace. */
static void
test_default_has_no_path_to_cluster_admin(void **state)
{
	static const char *const files[] = { "deploy/rbac/cluster_role.yaml",
		"deploy/rbac/leader_election_role.yaml" };
	static const char *const kinds[] = { "ClusterRole", "Role" };

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		json_object *docs = read_yaml(files[f]);
		struct perms got = { 0 };
		rules_to_perms(doc_of(docs, kinds[f]), &got);
		for (size_t i = 0; i < got.n; i++) {
			const char *k = got.p[i], *verb = strrchr(k, '|') + 1;
			if (strcmp(verb, "escalate") == 0
			        || strcmp(verb, "bind") == 0
			        || strcmp(verb, "impersonate") == 0
			        || strchr(k, '*') != NULL
			        || strstr(k, "|clusterrole") != NULL
			        || strcmp(k, "|secrets|create") == 0
			        || (f == 0 && strstr(k, "|leases|") != NULL)) {
				fail_msg("%s grants %s", files[f], k);
			}
		}
		assert_true(got.n > 0);
		perm_free(&got);
		json_object_put(docs);
	}
}

/* deploy/overlays/skill-rbac/: the base's parts and image plus one
 * ClusterRole that grants exactly the skill RBAC the code needs beyond
 * the default (so together they are what the reconcilers write), bound
 * to the controller's ServiceAccount. */
static void
test_skill_rbac_overlay(void **state)
{
	json_object *base = read_yaml("deploy/kustomization.yaml");
	json_object *ov
	        = read_yaml("deploy/overlays/skill-rbac/kustomization.yaml");
	json_object *role
	        = read_yaml("deploy/overlays/skill-rbac/skill_rbac_role.yaml");
	json_object *b = json_object_array_get_idx(base, 0);
	json_object *o = json_object_array_get_idx(ov, 0);
	json_object *bres = jx_get(b, "resources"),
	            *ores = jx_get(o, "resources");
	json_object *crb = doc_of(role, "ClusterRoleBinding");
	struct perms def = { 0 }, want = { 0 }, got = { 0 };
	size_t n = jx_array_len(bres);

	(void)state;
	assert_int_equal(jx_array_len(ores), n + 1);
	for (size_t i = 0; i < n; i++) {
		char *want_res = xasprintf("../../%s",
		        json_object_get_string(
		                json_object_array_get_idx(bres, i)));
		assert_string_equal(
		        json_object_get_string(
		                json_object_array_get_idx(ores, i)),
		        want_res);
		free(want_res);
	}
	assert_string_equal(
	        json_object_get_string(json_object_array_get_idx(ores, n)),
	        "skill_rbac_role.yaml");
	assert_true(
	        json_object_equal(jx_get(b, "images"), jx_get(o, "images")));
	assert_string_equal(
	        jx_get_str(o, "namespace"), jx_get_str(b, "namespace"));
	needed_split(&def, &want);
	assert_true(perm_has(&want,
	        "rbac.authorization.k8s.io|clusterrolebindings|create"));
	assert_true(
	        perm_has(&want, "rbac.authorization.k8s.io|roles|escalate"));
	assert_true(perm_has(
	        &want, "rbac.authorization.k8s.io|clusterroles|bind"));
	assert_true(perm_has(&want, "|secrets|create"));
	rules_to_perms(doc_of(role, "ClusterRole"), &got);
	assert_same_perms(&want, &got, "skill_rbac_role.yaml");
	assert_string_equal(jx_get_str(crb, "roleRef.name"),
	        jx_get_str(doc_of(role, "ClusterRole"), "metadata.name"));
	assert_string_equal(
	        jx_get_str(crb, "subjects.0.name"), "sympozium-controller");
	assert_string_equal(
	        jx_get_str(crb, "subjects.0.namespace"), "sympozium-system");
	assert_int_equal(jx_array_len(jx_get(crb, "subjects")), 1);
	perm_free(&def);
	perm_free(&want);
	perm_free(&got);
	json_object_put(base);
	json_object_put(ov);
	json_object_put(role);
}

static void
test_bindings_name_the_service_account(void **state)
{
	json_object *cr = read_yaml("deploy/rbac/cluster_role.yaml");
	json_object *le = read_yaml("deploy/rbac/leader_election_role.yaml");
	json_object *sa = read_yaml("deploy/rbac/service_account.yaml");
	json_object *crb = doc_of(cr, "ClusterRoleBinding");
	json_object *rb = doc_of(le, "RoleBinding");
	const char *name
	        = jx_get_str(doc_of(sa, "ServiceAccount"), "metadata.name");
	struct perms got = { 0 };

	(void)state;
	assert_string_equal(jx_get_str(crb, "roleRef.name"),
	        jx_get_str(doc_of(cr, "ClusterRole"), "metadata.name"));
	assert_string_equal(jx_get_str(crb, "subjects.0.name"), name);
	assert_string_equal(jx_get_str(rb, "roleRef.kind"), "Role");
	assert_string_equal(jx_get_str(rb, "subjects.0.name"), name);
	rules_to_perms(doc_of(le, "Role"), &got);
	assert_int_equal(got.n, 4);
	assert_true(perm_has(&got, "coordination.k8s.io|leases|get"));
	assert_true(perm_has(&got, "coordination.k8s.io|leases|create"));
	assert_true(perm_has(&got, "coordination.k8s.io|leases|update"));
	assert_true(perm_has(&got, "coordination.k8s.io|leases|watch"));
	perm_free(&got);
	json_object_put(cr);
	json_object_put(le);
	json_object_put(sa);
}

/* ---- the Deployment ---- */

static void
expect(json_object *o, const char *path, const char *want)
{
	json_object *v = jx_get(o, path);
	const char *got = v != NULL ? json_object_get_string(v) : "(absent)";

	if (strcmp(got, want) != 0) {
		fail_msg("%s: got %s, want %s", path, got, want);
	}
}

static bool
has_arg(json_object *args, const char *prefix)
{
	for (size_t i = 0; i < json_object_array_length(args); i++) {
		const char *a = json_object_get_string(
		        json_object_array_get_idx(args, i));
		if (strncmp(a, prefix, strlen(prefix)) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
test_deployment_hardened(void **state)
{
	json_object *docs = read_yaml("deploy/manager/deployment.yaml");
	json_object *d = doc_of(docs, "Deployment");
	json_object *pod = jx_get(d, "spec.template.spec");
	json_object *c = jx_get(pod, "containers.0");

	(void)state;
	expect(d, "spec.replicas", "2");
	expect(pod, "securityContext.runAsNonRoot", "true");
	expect(pod, "securityContext.seccompProfile.type", "RuntimeDefault");
	expect(c, "securityContext.allowPrivilegeEscalation", "false");
	expect(c, "securityContext.readOnlyRootFilesystem", "true");
	expect(c, "securityContext.capabilities.drop.0", "ALL");
	assert_null(jx_get(c, "securityContext.capabilities.add"));
	expect(c, "livenessProbe.httpGet.path", "/healthz");
	expect(c, "readinessProbe.httpGet.path", "/readyz");
	expect(c, "livenessProbe.httpGet.port", "probes");
	expect(c, "ports.1.containerPort", "8081");
	expect(c, "ports.0.containerPort", "8080");
	expect(pod, "volumes.0.emptyDir.medium", "Memory");
	expect(c, "volumeMounts.0.mountPath", "/run/sympozium");
	assert_true(has_arg(jx_get(c, "args"), "--leader-elect"));
	assert_true(
	        has_arg(jx_get(c, "args"), "--runtime-dir=/run/sympozium"));
	assert_true(has_arg(
	        jx_get(c, "args"), "--health-probe-bind-address=:8081"));
	assert_non_null(jx_get(c, "resources.requests.memory"));
	assert_non_null(jx_get(c, "resources.limits.memory"));
	assert_non_null(jx_get(c, "resources.requests.cpu"));
	expect(pod, "serviceAccountName", "sympozium-controller");
	json_object_put(docs);
}

/* ---- the Dockerfile ---- */

static void
test_dockerfile_structure(void **state)
{
	char *text = testutil_read_file("deploy/Dockerfile", NULL);
	int from = 0, user = 0, copy_from = 0;
	char last_user[64] = "";
	const char *bins[]
	        = { "sympoziumd", "sympozium-worker", "sympoziumctl" };

	(void)state;
	for (char *l = strtok(text, "\n"); l != NULL; l = strtok(NULL, "\n")) {
		if (strncmp(l, "FROM ", 5) == 0) {
			from++;
			assert_non_null(strstr(l, " AS "));
			user = 0;
		} else if (strncmp(l, "USER ", 5) == 0) {
			user++;
			snprintf(last_user, sizeof(last_user), "%s", l + 5);
		} else if (strncmp(l, "COPY --from=build", 17) == 0) {
			copy_from++;
		}
		assert_false(strncmp(l, "ADD ", 4) == 0);
		assert_null(strstr(l, "--mount=type=secret"));
		assert_null(strcasestr(l, "token"));
		assert_null(strcasestr(l, "password"));
		assert_null(strstr(l, ".kube"));
		assert_false(
		        strncmp(l, "ARG ", 4) == 0 && strcasestr(l, "key"));
	}
	free(text);
	text = testutil_read_file("deploy/Dockerfile", NULL);
	assert_int_equal(from, 2);
	assert_int_equal(user, 1); /* in the final stage */
	assert_int_equal(atoi(last_user), 65532);
	assert_true(copy_from >= 1);
	assert_non_null(strstr(text, "FROM debian:bookworm-slim AS runtime"));
	for (size_t i = 0; i < 3; i++) {
		char *b = xasprintf("/src/bin/%s", bins[i]);
		assert_non_null(strstr(text, b));
		free(b);
	}
	/* no compiler in the runtime stage */
	assert_null(strstr(strstr(text, "AS runtime"), "gcc"));
	assert_null(strstr(strstr(text, "AS runtime"), "-dev"));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clusterrole_is_what_the_code_needs),
		cmocka_unit_test(test_default_has_no_path_to_cluster_admin),
		cmocka_unit_test(test_skill_rbac_overlay),
		cmocka_unit_test(test_bindings_name_the_service_account),
		cmocka_unit_test(test_deployment_hardened),
		cmocka_unit_test(test_dockerfile_structure),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
