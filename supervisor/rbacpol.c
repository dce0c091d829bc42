/*
 * rbacpol.c: decides whether one write of the agentrun controller keeps
 * the skill RBAC (ServiceAccount, Roles, ClusterRoles and their bindings)
 * within the bounds rbacpol.h lists.  Pure: the AgentRun, the RESULT's
 * other writes and the caller's cache lookup are all it reads.
 */
#include "supervisor/rbacpol.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/contract.h"
#include "common/jsonx.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"
#define SYSTEM_NS  "sympozium-system"

enum kind { K_OTHER, K_SA, K_ROLE, K_CROLE, K_RB, K_CRB };

static const struct ipc_res res_skillpacks = CONTRACT_RES_SKILLPACKS;
static const struct ipc_res res_instances = CONTRACT_RES_INSTANCES;
static const struct ipc_res res_roles = { RBAC_GROUP, "v1", "roles", true };
static const struct ipc_res res_croles
        = { RBAC_GROUP, "v1", "clusterroles", false };
static const struct ipc_res res_rbs
        = { RBAC_GROUP, "v1", "rolebindings", true };
static const struct ipc_res res_crbs
        = { RBAC_GROUP, "v1", "clusterrolebindings", false };

/* One check in progress. */
struct pol {
	const struct rbacpol_ctx *c;
	const char *run; /* the AgentRun's name and namespace */
	const char *ns;
	const char **rule;
	char *detail;
	size_t len;
};

/* What a name stands for: a SkillPack's rules, or the run's lifecycle
 * rules (pack NULL). */
struct slot {
	const char *pack;
	json_object *rules; /* declared; borrowed from run or own[] */
	json_object *own[2];
	bool uncached; /* the instance or SkillPack it needs is not cached */
};

static int
fail(struct pol *p, const char *rule, const char *fmt, ...)
{
	va_list ap;

	*p->rule = rule;
	if (p->len > 0) {
		va_start(ap, fmt);
		vsnprintf(p->detail, p->len, fmt, ap);
		va_end(ap);
	}
	return (-1);
}

static bool
streq(const char *a, const char *b)
{
	return (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static const char *
nz(const char *s)
{
	return (s != NULL ? s : "");
}

/* Label key of obj (keys hold dots, so no jx path), or NULL. */
static const char *
label(json_object *obj, const char *key)
{
	json_object *v
	        = json_object_object_get(jx_get(obj, "metadata.labels"), key);

	return (json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : NULL);
}

static enum kind
kind_of(const struct ipc_res *r)
{
	static const struct {
		const char *plural;
		enum kind k;
	} rbac[] = { { "roles", K_ROLE }, { "clusterroles", K_CROLE },
		{ "rolebindings", K_RB }, { "clusterrolebindings", K_CRB } };

	if (nz(r->group)[0] == '\0') {
		return (streq(r->plural, "serviceaccounts") ? K_SA : K_OTHER);
	}
	if (!streq(r->group, RBAC_GROUP)) {
		return (K_OTHER);
	}
	for (size_t i = 0; i < sizeof(rbac) / sizeof(rbac[0]); i++) {
		if (streq(r->plural, rbac[i].plural)) {
			return (rbac[i].k);
		}
	}
	return (K_OTHER);
}

static bool
is_cluster(enum kind k)
{
	return (k == K_CROLE || k == K_CRB);
}

static bool
is_binding(enum kind k)
{
	return (k == K_RB || k == K_CRB);
}

static const struct ipc_res *
role_res(enum kind k)
{
	return (is_cluster(k) ? &res_croles : &res_roles);
}

static void
slot_fini(struct slot *s)
{
	json_object_put(s->own[0]);
	json_object_put(s->own[1]);
}

/* The cached object, parsed (owned), or NULL. */
static json_object *
cached(struct pol *p, const struct ipc_res *res, const char *ns,
        const char *name)
{
	const char *text;

	if (p->c->lookup == NULL) {
		return (NULL);
	}
	text = p->c->lookup(p->c->arg, res, ns, name);
	return (text != NULL ? jx_parse(text, strlen(text), 0, NULL, 0)
	                     : NULL);
}

/* The skill refs agentrun resolves (spec 1.3 step 6): the run's own, else
 * its instance's (kept in *inst, owned) unless the run came from the web
 * proxy. */
static json_object *
skill_refs(struct pol *p, json_object **inst, bool *uncached)
{
	json_object *own = jx_get(p->c->run, "spec.skills");
	const char *src = label(p->c->run, CONTRACT_LABEL_SOURCE);

	*inst = NULL;
	if (jx_array_len(own) > 0 || streq(src, "web-proxy")) {
		return (own);
	}
	*inst = cached(p, &res_instances, p->ns,
	        nz(jx_get_str(p->c->run, "spec.instanceRef")));
	*uncached = *inst == NULL;
	return (jx_get(*inst, "spec.skills"));
}

static const char *
pack_of_ref(json_object *ref)
{
	const char *n = jx_get_str(ref, "skillPackRef");

	if (n != NULL && strncmp(n, "skillpack-", 10) == 0) {
		n += 10;
	}
	return (n != NULL && n[0] != '\0' ? n : NULL);
}

/* Whether name is prefix + mid + "-" + run (mid NULL: prefix + run). */
static bool
name_is(const char *name, const char *prefix, const char *mid, const char *run)
{
	size_t lp = strlen(prefix), lm;

	if (strncmp(name, prefix, lp) != 0) {
		return (false);
	}
	name += lp;
	if (mid == NULL) {
		return (strcmp(name, run) == 0);
	}
	lm = strlen(mid);
	return (strncmp(name, mid, lm) == 0 && name[lm] == '-'
	        && strcmp(name + lm + 1, run) == 0);
}

/* The SkillPack's declared rules for a role of kind k. */
static void
pack_rules(struct pol *p, struct slot *s, enum kind k)
{
	json_object *pack = cached(p, &res_skillpacks, p->ns, s->pack);

	if (pack == NULL) {
		pack = cached(p, &res_skillpacks, SYSTEM_NS, s->pack);
	}
	s->own[1] = pack;
	s->uncached = pack == NULL;
	s->rules = jx_get(pack,
	        is_cluster(k) ? "spec.sidecar.clusterRBAC"
	                      : "spec.sidecar.rbac");
}

/* Finds what name stands for as a role (or binding) of kind k; -1 when
 * it names no skill or lifecycle RBAC of this run. */
static int
find_slot(struct pol *p, enum kind k, const char *name, struct slot *s)
{
	json_object *refs;

	*s = (struct slot) { 0 };
	if (!is_cluster(k)
	        && name_is(name, RBACPOL_LIFECYCLE_PREFIX, NULL, p->run)) {
		s->rules = jx_get(p->c->run, "spec.lifecycle.rbac");
		return (0);
	}
	refs = skill_refs(p, &s->own[0], &s->uncached);
	for (size_t i = 0; i < jx_array_len(refs); i++) {
		const char *pack
		        = pack_of_ref(json_object_array_get_idx(refs, i));
		if (pack != NULL
		        && name_is(name, RBACPOL_SKILL_PREFIX, pack, p->run)) {
			s->pack = pack;
			pack_rules(p, s, k);
			return (0);
		}
	}
	slot_fini(s);
	*s = (struct slot) { .uncached = s->uncached };
	return (-1);
}

/* Whether o is an object whose keys are all in keys (NULL-terminated);
 * *bad the first that is not. */
static bool
keys_within(json_object *o, const char *const *keys, const char **bad)
{
	if (!json_object_is_type(o, json_type_object)) {
		*bad = "(not an object)";
		return (false);
	}
	json_object_object_foreach(o, key, val)
	{
		size_t i;
		(void)val;
		for (i = 0; keys[i] != NULL && strcmp(keys[i], key) != 0;
		        i++) { }
		if (keys[i] == NULL) {
			*bad = key;
			return (false);
		}
	}
	return (true);
}

static int
check_fields(struct pol *p, enum kind k, json_object *obj)
{
	static const char *const sa[]
	        = { "apiVersion", "kind", "metadata", NULL };
	static const char *const role[]
	        = { "apiVersion", "kind", "metadata", "rules", NULL };
	static const char *const bind[] = { "apiVersion", "kind", "metadata",
		"subjects", "roleRef", NULL };
	static const char *const meta[]
	        = { "name", "namespace", "labels", "ownerReferences", NULL };
	const char *bad = NULL;

	if (!keys_within(obj,
	            k == K_SA               ? sa
	                    : is_binding(k) ? bind
	                                    : role,
	            &bad)
	        || !keys_within(
	                json_object_object_get(obj, "metadata"), meta, &bad)) {
		return (fail(
		        p, "rbac-fields", "field %s is not allowed", bad));
	}
	return (0);
}

/* The labels agentrun sets on skill RBAC, and nothing else. */
static int
check_labels(struct pol *p, json_object *obj, const struct slot *s)
{
	json_object *labels = jx_get(obj, "metadata.labels");
	const char *want_skill = s->pack,
	           *want_comp = s->pack ? NULL : "lifecycle";
	const struct {
		const char *key, *want;
	} set[] = { { CONTRACT_LABEL_AGENT_RUN, p->run },
		{ CONTRACT_LABEL_MANAGED_BY, "sympozium" },
		{ CONTRACT_LABEL_SKILL, want_skill },
		{ CONTRACT_LABEL_COMPONENT, want_comp } };

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		const char *got = label(obj, set[i].key);
		if (set[i].want == NULL ? got != NULL
		                        : !streq(got, set[i].want)) {
			return (fail(p, "rbac-label",
			        "label %s is %s, must be %s", set[i].key,
			        got != NULL ? got : "absent",
			        set[i].want != NULL ? set[i].want : "absent"));
		}
	}
	if (json_object_object_length(labels) != 3) {
		return (fail(p, "rbac-label",
		        "labels beyond agent-run, managed-by and %s",
		        s->pack ? "skill" : "component"));
	}
	return (0);
}

static bool
has_star(json_object *list)
{
	for (size_t i = 0; i < jx_array_len(list); i++) {
		const char *v = json_object_get_string(
		        json_object_array_get_idx(list, i));
		if (v != NULL && strchr(v, '*') != NULL) {
			return (true);
		}
	}
	return (false);
}

static int
check_rules(struct pol *p, json_object *obj, const struct slot *s)
{
	static const char *const lists[]
	        = { "apiGroups", "resources", "verbs", "nonResourceURLs" };
	json_object *rules = json_object_object_get(obj, "rules");

	if (!json_object_is_type(rules, json_type_array)) {
		return (fail(p, "rbac-rules", "rules is not an array"));
	}
	for (size_t i = 0; i < jx_array_len(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		for (size_t j = 0; j < 4 && !p->c->allow_wildcard; j++) {
			if (has_star(json_object_object_get(r, lists[j]))) {
				return (fail(p, "rbac-wildcard",
				        "rule %zu has '*' in %s "
				        "(--allow-skill-wildcard is off)",
				        i, lists[j]));
			}
		}
	}
	if (s->uncached) {
		return (fail(p, "rbac-pending",
		        "SkillPack %s is not cached: its rules are unknown",
		        s->pack));
	}
	if (jx_array_len(s->rules) == 0
	        || !json_object_equal(rules, s->rules)) {
		return (fail(p, "rbac-rules",
		        "rules are not those %s%s declares",
		        s->pack ? "SkillPack "
		                : "the run's spec.lifecycle.rbac",
		        s->pack ? s->pack : ""));
	}
	return (0);
}

static int
check_subjects(struct pol *p, json_object *obj)
{
	static const char *const keys[]
	        = { "kind", "name", "namespace", "apiGroup", NULL };
	json_object *subs = json_object_object_get(obj, "subjects"), *s;
	const char *bad = NULL, *group;

	s = jx_array_len(subs) == 1 ? json_object_array_get_idx(subs, 0)
	                            : NULL;
	if (!keys_within(s, keys, &bad)) {
		return (fail(p, "rbac-subject",
		        "subjects must be the one "
		        "ServiceAccount " RBACPOL_AGENT_SA
		        " of the run's namespace"));
	}
	group = jx_get_str(s, "apiGroup");
	if (!streq(jx_get_str(s, "kind"), "ServiceAccount")
	        || !streq(jx_get_str(s, "name"), RBACPOL_AGENT_SA)
	        || !streq(jx_get_str(s, "namespace"), p->ns)
	        || (group != NULL && group[0] != '\0')) {
		return (fail(p, "rbac-subject",
		        "subject %s %s/%s is not ServiceAccount "
		        "%s/" RBACPOL_AGENT_SA,
		        nz(jx_get_str(s, "kind")),
		        nz(jx_get_str(s, "namespace")),
		        nz(jx_get_str(s, "name")), p->ns));
	}
	return (0);
}

static const char *
obj_name(json_object *obj)
{
	return (nz(jx_get_str(obj, "metadata.name")));
}

/* Whether the RESULT creates role name of kind k (namespace ns). */
static bool
created_here(struct pol *p, enum kind k, const char *ns, const char *name)
{
	for (size_t i = 0; i < p->c->nwrites; i++) {
		const struct ipc_write *w = &p->c->writes[i];
		if (w->op == IPC_OP_CREATE && kind_of(&w->res) == k
		        && streq(obj_name(w->object), name)
		        && (is_cluster(k)
		                || streq(nz(jx_get_str(w->object,
		                                 "metadata.namespace")),
		                        ns))) {
			return (true);
		}
	}
	return (false);
}

/* Whether obj carries this run's agent-run and managed-by labels. */
static bool
labelled_ours(struct pol *p, json_object *obj)
{
	return (streq(label(obj, CONTRACT_LABEL_AGENT_RUN), p->run)
	        && streq(label(obj, CONTRACT_LABEL_MANAGED_BY), "sympozium"));
}

static int
check_roleref(struct pol *p, enum kind k, json_object *obj, const char *ns)
{
	json_object *ref = json_object_object_get(obj, "roleRef"), *o;
	enum kind rk = is_cluster(k) ? K_CROLE : K_ROLE;
	const char *name = nz(jx_get_str(ref, "name"));
	struct slot s;
	bool ok;

	if (!streq(jx_get_str(ref, "apiGroup"), RBAC_GROUP)
	        || !streq(jx_get_str(ref, "kind"),
	                rk == K_CROLE ? "ClusterRole" : "Role")) {
		return (fail(p, "rbac-roleref", "roleRef must be a %s of %s",
		        rk == K_CROLE ? "ClusterRole" : "Role", RBAC_GROUP));
	}
	if (find_slot(p, rk, name, &s) != 0) {
		return (fail(p, s.uncached ? "rbac-pending" : "rbac-roleref",
		        "roleRef %s is no skill role of run %s%s", name,
		        p->run,
		        s.uncached ? " (its instance is not cached)" : ""));
	}
	slot_fini(&s);
	ok = created_here(p, rk, ns, name);
	if (!ok
	        && (o = cached(
	                    p, role_res(rk), is_cluster(rk) ? "" : ns, name))
	                != NULL) {
		ok = labelled_ours(p, o);
		json_object_put(o);
	}
	if (!ok) {
		return (fail(p, "rbac-roleref",
		        "roleRef %s is neither created by this RESULT nor a "
		        "cached role of run %s",
		        name, p->run));
	}
	return (0);
}

/* The write's namespace and name; for a create they come from the object
 * and must agree with the write's own. */
static int
target(struct pol *p, const struct ipc_write *w, const char **ns,
        const char **name)
{
	const char *ons = nz(jx_get_str(w->object, "metadata.namespace"));
	const char *oname = obj_name(w->object);

	*ns = nz(w->namespace);
	*name = nz(w->name);
	if (w->op != IPC_OP_CREATE) {
		return (0);
	}
	if (((*ns)[0] != '\0' && strcmp(*ns, ons) != 0)
	        || ((*name)[0] != '\0' && strcmp(*name, oname) != 0)) {
		return (fail(p, "rbac-name",
		        "the write names %s/%s, its object %s/%s", *ns, *name,
		        ons, oname));
	}
	*ns = ons;
	*name = oname;
	return (0);
}

static int
check_scope(struct pol *p, enum kind k, const char *ns)
{
	if (is_cluster(k) ? ns[0] != '\0' : strcmp(ns, p->ns) != 0) {
		return (fail(p, "rbac-namespace", "namespace \"%s\" is not %s",
		        ns,
		        is_cluster(k) ? "empty (cluster-scoped)"
		                      : "the run's"));
	}
	return (0);
}

static int
check_sa(struct pol *p, const struct ipc_write *w, const char *name)
{
	if (w->op != IPC_OP_CREATE) {
		return (fail(p, "rbac-op", "%s of a ServiceAccount",
		        ipc_op_name(w->op)));
	}
	if (strcmp(name, RBACPOL_AGENT_SA) != 0) {
		return (fail(p, "rbac-name",
		        "ServiceAccount %s is not " RBACPOL_AGENT_SA, name));
	}
	return (check_fields(p, K_SA, w->object));
}

static int
check_create(struct pol *p, enum kind k, const struct ipc_write *w,
        const char *ns, const char *name)
{
	struct slot s;
	int rc;

	if (find_slot(p, k, name, &s) != 0) {
		return (fail(p, s.uncached ? "rbac-pending" : "rbac-name",
		        "%s is no skill or lifecycle RBAC name of run %s%s",
		        name, p->run,
		        s.uncached ? " (its instance is not cached)" : ""));
	}
	rc = check_fields(p, k, w->object);
	if (rc == 0) {
		rc = check_labels(p, w->object, &s);
	}
	if (rc == 0 && is_binding(k)) {
		rc = check_subjects(p, w->object);
		if (rc == 0) {
			rc = check_roleref(p, k, w->object, ns);
		}
	} else if (rc == 0) {
		rc = check_rules(p, w->object, &s);
	}
	slot_fini(&s);
	return (rc);
}

static int
check_delete(struct pol *p, enum kind k, const char *ns, const char *name)
{
	static const struct ipc_res *const res[] = { [K_ROLE] = &res_roles,
		[K_CROLE] = &res_croles,
		[K_RB] = &res_rbs,
		[K_CRB] = &res_crbs };
	size_t lp = strlen(RBACPOL_SKILL_PREFIX), ln = strlen(name);
	size_t lr = strlen(p->run);
	json_object *o;
	bool ok;

	ok = (!is_cluster(k)
	             && name_is(name, RBACPOL_LIFECYCLE_PREFIX, NULL, p->run))
	        || (strncmp(name, RBACPOL_SKILL_PREFIX, lp) == 0
	                && ln > lp + lr + 1 && name[ln - lr - 1] == '-'
	                && strcmp(name + ln - lr, p->run) == 0);
	if (!ok) {
		return (fail(p, "rbac-name",
		        "delete of %s, no skill RBAC name of run %s", name,
		        p->run));
	}
	if ((o = cached(p, res[k], ns, name)) != NULL) {
		ok = labelled_ours(p, o);
		json_object_put(o);
	}
	return (ok ? 0
	           : fail(p, "rbac-label",
	                   "delete of %s, which is not labelled for run %s",
	                   name, p->run));
}

int
rbacpol_check(const struct rbacpol_ctx *c, const struct ipc_write *w,
        const char **rule, char *detail, size_t len)
{
	struct pol p = { c, jx_get_str(c->run, "metadata.name"),
		jx_get_str(c->run, "metadata.namespace"), rule, detail, len };
	enum kind k = kind_of(&w->res);
	const char *ns, *name;

	if (k == K_OTHER) {
		return (0);
	}
	if (nz(p.run)[0] == '\0' || nz(p.ns)[0] == '\0') {
		return (fail(&p, "rbac-name", "the AgentRun has no name"));
	}
	if (!streq(w->res.version, "v1")
	        || (w->op != IPC_OP_CREATE && w->op != IPC_OP_DELETE)
	        || (w->op == IPC_OP_CREATE
	                && !json_object_is_type(
	                        w->object, json_type_object))) {
		return (fail(&p, "rbac-op", "%s of %s/%s %s",
		        ipc_op_name(w->op), nz(w->res.group),
		        nz(w->res.version), nz(w->res.plural)));
	}
	if (target(&p, w, &ns, &name) != 0 || check_scope(&p, k, ns) != 0) {
		return (-1);
	}
	if (k == K_SA) {
		return (check_sa(&p, w, name));
	}
	return (w->op == IPC_OP_CREATE ? check_create(&p, k, w, ns, name)
	                               : check_delete(&p, k, ns, name));
}
