/*
 * wpolicy.c: the write policy (wpolicy.h): each write of a RESULT against
 * its controller's write table, the skill RBAC call site, object names,
 * and the write budget per key.  Pure.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/strhash.h"
#include "common/xmalloc.h"
#include "supervisor/rbacpol.h"
#include "supervisor/wpolicy.h"

/* What one check knows of the primary. */
struct prim {
	const struct wpol_input *in;
	char ns[IPC_KEY_MAX + 1];
	const char *name;
	const char *uid;  /* "" when absent */
	const char *kind; /* "" when absent */
};

static enum wpol_verdict viol(struct wpol_violation *v, const char *rule,
        size_t i, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum wpol_verdict
viol(struct wpol_violation *v, const char *rule, size_t i, const char *fmt,
        ...)
{
	va_list ap;

	v->rule = rule;
	v->index = i;
	va_start(ap, fmt);
	vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
	va_end(ap);
	return (WPOL_VIOLATION);
}

static const char *
str_or(const char *s)
{
	return (s != NULL ? s : "");
}

static unsigned
op_bit(enum ipc_op op)
{
	switch (op) {
	case IPC_OP_CREATE:
		return (CONTRACT_W_CREATE);
	case IPC_OP_UPDATE:
		return (CONTRACT_W_UPDATE);
	case IPC_OP_UPDATE_STATUS:
		return (CONTRACT_W_STATUS);
	case IPC_OP_PATCH:
		return (CONTRACT_W_PATCH);
	case IPC_OP_APPLY:
		return (CONTRACT_W_APPLY);
	case IPC_OP_DELETE:
		return (CONTRACT_W_DELETE);
	case IPC_OP_EVENT:
		return (CONTRACT_W_EVENT);
	}
	return (0);
}

static bool
same_res(const struct kapi_res *a, const struct ipc_res *b)
{
	return (strcmp(a->group, b->group) == 0
	        && strcmp(a->version, b->version) == 0
	        && strcmp(a->plural, b->plural) == 0
	        && a->namespaced == b->namespaced);
}

static bool
is_res(const struct ipc_res *r, const char *group, const char *plural)
{
	return (strcmp(r->group, group) == 0
	        && strcmp(r->plural, plural) == 0);
}

/* ---- names ---- */

static bool
alnum(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

/* 1.. of [a-z0-9-], alphanumeric at both ends. */
static bool
subdomain_part(const char *s, size_t n)
{
	if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1])) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		if (!alnum(s[i]) && s[i] != '-') {
			return (false);
		}
	}
	return (true);
}

bool
wpol_name_valid(const char *plural, const char *name)
{
	size_t n = name != NULL ? strlen(name) : 0;
	const char *p = name, *dot;

	if (n == 0 || n > 253) {
		return (false);
	}
	if (strcmp(plural, "services") == 0
	        || strcmp(plural, "namespaces") == 0) {
		/* a DNS-1123 label */
		return (n <= 63 && strchr(name, '.') == NULL
		        && subdomain_part(name, n));
	}
	/* a subdomain: parts joined by '.' (so never "." or ".."), each
	 * like a label but of any length (Kubernetes' IsDNS1123Subdomain) */
	while ((dot = strchr(p, '.')) != NULL) {
		if (!subdomain_part(p, (size_t)(dot - p))) {
			return (false);
		}
		p = dot + 1;
	}
	return (subdomain_part(p, strlen(p)));
}

/* ---- the objects a write names ---- */

static const char *
label_of(json_object *o, const char *key)
{
	json_object *v = jx_getv(o, "metadata", "labels", key, NULL);

	return (v != NULL && json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : NULL);
}

/* Whether o has a controller ownerReference to uid. */
static bool
owned_by(json_object *o, const char *uid)
{
	json_object *refs = jx_getv(o, "metadata", "ownerReferences", NULL);

	for (size_t i = 0; uid[0] != '\0' && i < jx_array_len(refs); i++) {
		json_object *r = json_object_array_get_idx(refs, i);
		bool ctl = false;
		if (jx_get_bool(r, "controller", &ctl) == 0 && ctl
		        && strcmp(str_or(jx_get_str(r, "uid")), uid) == 0) {
			return (true);
		}
	}
	return (false);
}

/* The name a write acts on: the object's for a create, else its own. */
static const char *
target_name(const struct ipc_write *w)
{
	if (w->op == IPC_OP_CREATE) {
		return (str_or(jx_get_str(w->object, "metadata.name")));
	}
	return (w->name);
}

static bool
is_primary(const struct prim *p, const struct ipc_write *w)
{
	return (same_res(&p->in->ctrl->watches[0].res, &w->res)
	        && strcmp(w->namespace, p->ns) == 0
	        && strcmp(w->name, p->name) == 0);
}

/* A label "key=value" of match on o. */
static bool
has_match(json_object *o, const char *match)
{
	const char *eq = strchr(match, '=');
	char key[IPC_NAME_MAX + 1];

	if (eq == NULL || (size_t)(eq - match) > IPC_NAME_MAX) {
		return (false);
	}
	snprintf(key, sizeof(key), "%.*s", (int)(eq - match), match);
	return (strcmp(str_or(label_of(o, key)), eq + 1) == 0);
}

/* ---- the generic rules of every write ---- */

static enum wpol_verdict
check_size(const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	json_object *o = w->object != NULL ? w->object : w->patch;
	size_t len = 0;

	if (o != NULL) {
		json_object_to_json_string_length(
		        o, JSON_C_TO_STRING_PLAIN, &len);
	}
	if (len > WPOL_OBJECT_MAX) {
		return (viol(v, "size", i, "%s of %zu bytes (at most %u)",
		        ipc_op_name(w->op), len, WPOL_OBJECT_MAX));
	}
	return (WPOL_OK);
}

static enum wpol_verdict
check_scope(const struct prim *p, const struct ipc_write *w, size_t i,
        struct wpol_violation *v)
{
	const char *ons = jx_get_str(w->object, "metadata.namespace");
	const char *oname = jx_get_str(w->object, "metadata.name");
	const char *want = w->res.namespaced ? p->ns : "";
	const char *name = target_name(w);

	if (strcmp(w->namespace, want) != 0
	        || (ons != NULL && strcmp(ons, want) != 0)) {
		return (viol(v, "namespace", i, "%s %s in namespace \"%s\"",
		        ipc_op_name(w->op), w->res.plural,
		        strcmp(w->namespace, want) != 0 ? w->namespace : ons));
	}
	if (w->op == IPC_OP_EVENT) {
		return (WPOL_OK); /* named by the writer */
	}
	if (!wpol_name_valid(w->res.plural, name)) {
		return (viol(v, "name", i, "%s %s: invalid name \"%.64s\"",
		        ipc_op_name(w->op), w->res.plural, name));
	}
	if (w->op != IPC_OP_CREATE && oname != NULL
	        && strcmp(oname, w->name) != 0) {
		return (viol(v, "name", i, "%s %s %s: object named \"%.64s\"",
		        ipc_op_name(w->op), w->res.plural, w->name, oname));
	}
	return (WPOL_OK);
}

static enum wpol_verdict
check_event(const struct prim *p, const struct ipc_write *w, size_t i,
        struct wpol_violation *v)
{
	static const struct kapi_res events = CONTRACT_RES_EVENTS;
	json_object *io = jx_get(w->object, "involvedObject");

	if (!same_res(&events, &w->res)) {
		return (viol(v, "event-target", i, "an event to %s/%s %s",
		        w->res.group, w->res.version, w->res.plural));
	}
	if (p->in->primary == NULL || p->uid[0] == '\0'
	        || strcmp(str_or(jx_get_str(io, "kind")), p->kind) != 0
	        || strcmp(str_or(jx_get_str(io, "name")), p->name) != 0
	        || strcmp(str_or(jx_get_str(io, "namespace")), p->ns) != 0
	        || strcmp(str_or(jx_get_str(io, "uid")), p->uid) != 0) {
		return (viol(v, "event-target", i,
		        "an Event about %.40s %.64s/%.64s, not the primary",
		        str_or(jx_get_str(io, "kind")),
		        str_or(jx_get_str(io, "namespace")),
		        str_or(jx_get_str(io, "name"))));
	}
	return (WPOL_OK);
}

/* ---- the rows ---- */

/* The cached object w acts on into *obj (caller puts).  WPOL_OK with
 * *obj NULL: not cached. */
static enum wpol_verdict
cached(const struct prim *p, const struct ipc_write *w, json_object **obj)
{
	const char *json = NULL;
	int rc = p->in->lookup != NULL ? p->in->lookup(
	                 p->in->arg, &w->res, w->namespace, w->name, &json)
	                               : 0;

	*obj = NULL;
	if (rc < 0 || rc == 2) {
		return (WPOL_RETRY); /* not synced yet, or gone meanwhile */
	}
	if (rc == 1 && json != NULL) {
		*obj = jx_parse(json, strlen(json), 0, NULL, 0);
	}
	return (WPOL_OK);
}

static enum wpol_verdict
not_owned(const struct ipc_write *w, size_t i, struct wpol_violation *v,
        const char *why)
{
	return (viol(v, "not-owned", i, "%s %s %s: %s", ipc_op_name(w->op),
	        w->res.plural, w->name, why));
}

static enum wpol_verdict
row_child_create(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	const char *l = label_of(w->object, row->label);

	if (l == NULL || (!row->any_value && strcmp(l, p->name) != 0)) {
		return (viol(v, "child-label", i,
		        "create %s %.64s without the label %s=%s",
		        w->res.plural, target_name(w), row->label,
		        row->any_value ? "..." : p->name));
	}
	if (row->match != NULL && !has_match(w->object, row->match)) {
		return (viol(v, "child-label", i,
		        "create %s %.64s without the label %s", w->res.plural,
		        target_name(w), row->match));
	}
	if (!owned_by(w->object, p->uid)) {
		return (viol(v, "owner", i,
		        "create %s %.64s without a controller ownerReference "
		        "to %s %s (uid %s)",
		        w->res.plural, target_name(w), p->kind, p->name,
		        p->uid));
	}
	return (WPOL_OK);
}

/* The primary's string at path ref (NULL: none). */
static const char *
primary_ref(const struct prim *p, const char *ref)
{
	return (jx_get_str(p->in->primary, ref));
}

static bool
labelled(
        const struct prim *p, const struct contract_write *row, json_object *o)
{
	const char *want
	        = row->ref != NULL ? primary_ref(p, row->ref) : p->name;

	if (row->label != NULL
	        && (want == NULL || want[0] == '\0'
	                || strcmp(str_or(label_of(o, row->label)), want)
	                        != 0)) {
		return (false);
	}
	return (row->match == NULL || has_match(o, row->match));
}

static enum wpol_verdict
row_mutate(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	json_object *o;
	enum wpol_verdict rc = cached(p, w, &o);
	bool ok;

	if (rc != WPOL_OK) {
		return (rc);
	}
	if (o == NULL) {
		return (not_owned(
		        w, i, v, "not an object of its in the cache"));
	}
	ok = row->own == CONTRACT_OWN_CHILD ? owned_by(o, p->uid)
	                                    : labelled(p, row, o);
	json_object_put(o);
	return (ok ? WPOL_OK
	           : not_owned(w, i, v,
	                   row->own == CONTRACT_OWN_CHILD
	                           ? "not controlled by the primary"
	                           : "not labelled as the primary's"));
}

static enum wpol_verdict
row_cluster(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	const char *name = target_name(w);

	size_t n = strlen(name), np = strlen(p->name);
	json_object *o;
	enum wpol_verdict rc;

	if (strncmp(name, row->prefix, strlen(row->prefix)) != 0
	        || n < strlen(row->prefix) + np + 1
	        || strcmp(name + n - np, p->name) != 0
	        || name[n - np - 1] != '-') {
		return (viol(v, "name", i, "%s %s %.64s: not named %s...-%s",
		        ipc_op_name(w->op), w->res.plural, name, row->prefix,
		        p->name));
	}
	if (w->op != IPC_OP_CREATE) {
		/* by its name; when cached, by its label too */
		if ((rc = cached(p, w, &o)) != WPOL_OK || o == NULL) {
			return (WPOL_OK);
		}
		bool ok = labelled(p, row, o);
		json_object_put(o);
		return (ok ? WPOL_OK
		           : not_owned(
		                   w, i, v, "not labelled as the primary's"));
	}
	if (strcmp(str_or(label_of(w->object, row->label)), p->name) != 0) {
		return (viol(v, "child-label", i,
		        "create %s %.64s without the label %s=%s",
		        w->res.plural, name, row->label, p->name));
	}
	return (WPOL_OK);
}

/* ---- adoption (CONTRACT_OWN_ADOPT) ---- */

/* Operation i of a JSON patch, when it is {op, path, value} with that op
 * and a string path. */
static bool
patch_at(json_object *ops, size_t i, const char *op, const char **path,
        json_object **value)
{
	json_object *e = json_object_array_get_idx(ops, i);

	if (!json_object_is_type(e, json_type_object)
	        || json_object_object_length(e) != 3
	        || strcmp(str_or(jx_get_str(e, "op")), op) != 0) {
		return (false);
	}
	*path = jx_get_str(e, "path");
	*value = json_object_object_get(e, "value");
	return (*path != NULL && *value != NULL);
}

/* Whether path is /metadata/ownerReferences/<n>/<leaf> (n decimal, no
 * leading zero). */
static bool
ref_path(const char *path, const char *leaf, long *n)
{
	static const char pre[] = "/metadata/ownerReferences/";
	const char *d = path + sizeof(pre) - 1;
	char *end;

	if (strncmp(path, pre, sizeof(pre) - 1) != 0 || d[0] < '0'
	        || d[0] > '9' || (d[0] == '0' && d[1] != '/')) {
		return (false);
	}
	*n = strtol(d, &end, 10);
	return (*n < 1024 && *end == '/' && strcmp(end + 1, leaf) == 0);
}

/* Whether path and value add exactly the row's label valued the
 * primary's name. */
static bool
label_add(const struct prim *p, const struct contract_write *row,
        const char *path, json_object *value)
{
	static const char pre[] = "/metadata/labels";
	const char *k = row->label, *t = path + sizeof(pre) - 1;

	if (strncmp(path, pre, sizeof(pre) - 1) != 0) {
		return (false);
	}
	if (*t == '\0') {
		json_object *l = json_object_is_type(value, json_type_object)
		        ? json_object_object_get(value, k)
		        : NULL;
		return (l != NULL && json_object_object_length(value) == 1
		        && json_object_is_type(l, json_type_string)
		        && strcmp(json_object_get_string(l), p->name) == 0);
	}
	if (*t++ != '/') {
		return (false);
	}
	for (; *k != '\0'; k++) { /* the key as a JSON Pointer token */
		const char *want = *k == '/' ? "~1" : *k == '~' ? "~0" : NULL;
		if (want != NULL ? strncmp(t, want, 2) != 0 : *t != *k) {
			return (false);
		}
		t += want != NULL ? 2 : 1;
	}
	return (*t == '\0' && json_object_is_type(value, json_type_string)
	        && strcmp(json_object_get_string(value), p->name) == 0);
}

/* Why w is not the adoption patch of contract.h, or NULL. */
/* The three tests both take-over patches start with: operation 0 tests
 * the resourceVersion, 1 the uid of an ownerReference against the
 * primary's, 2 that the same reference is the controller.  NULL when they
 * are there, else what is wrong. */
static const char *
owner_tests(const struct prim *p, json_object *ops)
{
	json_object *val;
	const char *path;
	long n1 = -1, n2 = -2;

	if (!patch_at(ops, 0, "test", &path, &val)
	        || strcmp(path, "/metadata/resourceVersion") != 0
	        || !json_object_is_type(val, json_type_string)) {
		return ("operation 0 does not test the resourceVersion");
	}
	if (!patch_at(ops, 1, "test", &path, &val)
	        || !ref_path(path, "uid", &n1)
	        || !json_object_is_type(val, json_type_string)
	        || p->uid[0] == '\0'
	        || strcmp(json_object_get_string(val), p->uid) != 0) {
		return ("operation 1 does not test an ownerReference's uid "
		        "against the primary's");
	}
	if (!patch_at(ops, 2, "test", &path, &val)
	        || !ref_path(path, "controller", &n2) || n2 != n1
	        || !json_object_is_type(val, json_type_boolean)
	        || !json_object_get_boolean(val)) {
		return ("operation 2 does not test that it is the controller "
		        "reference");
	}
	return (NULL);
}

static const char *
adopt_why(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w)
{
	json_object *ops = w->patch, *val;
	const char *path, *why;

	if (w->patch_type != IPC_PATCH_JSON
	        || !json_object_is_type(ops, json_type_array)
	        || json_object_array_length(ops) != 4) {
		return ("not a JSON patch of four operations");
	}
	if ((why = owner_tests(p, ops)) != NULL) {
		return (why);
	}
	if (!patch_at(ops, 3, "add", &path, &val)
	        || !label_add(p, row, path, val)) {
		return ("operation 3 does not add only the child label");
	}
	return (NULL);
}

static enum wpol_verdict
row_adopt(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	const char *why = adopt_why(p, row, w);

	return (why == NULL ? WPOL_OK : not_owned(w, i, v, why));
}

/* ---- adoption of an unowned object (CONTRACT_OWN_ORPHAN) ---- */

/* Whether name is the primary's name, "-", one entry's `match` string of
 * the array at `ref`, then the row's suffix. */
static bool
orphan_name(const struct prim *p, const struct contract_write *row,
        const char *name)
{
	json_object *arr = jx_get(p->in->primary, row->ref);
	size_t np = strlen(p->name);
	const char *rest, *suf = str_or(row->suffix);

	if (strncmp(name, p->name, np) != 0 || name[np] != '-') {
		return (false);
	}
	rest = name + np + 1;
	for (size_t i = 0; i < jx_array_len(arr); i++) {
		const char *s = jx_get_str(
		        json_object_array_get_idx(arr, i), row->match);
		size_t n = s != NULL ? strlen(s) : 0;
		if (n > 0 && strncmp(rest, s, n) == 0
		        && strcmp(rest + n, suf) == 0) {
			return (true);
		}
	}
	return (false);
}

/* Whether operation i is exactly {"op":"test","path":path,"value":null}. */
static bool
test_null(json_object *ops, size_t i, const char *path)
{
	json_object *e = json_object_array_get_idx(ops, i), *val = NULL;

	return (json_object_is_type(e, json_type_object)
	        && json_object_object_length(e) == 3
	        && strcmp(str_or(jx_get_str(e, "op")), "test") == 0
	        && strcmp(str_or(jx_get_str(e, "path")), path) == 0
	        && json_object_object_get_ex(e, "value", &val) && val == NULL);
}

static bool
ref_str(json_object *r, const char *key, const char *want)
{
	return (strcmp(str_or(jx_get_str(r, key)), want) == 0);
}

/* Whether refs is exactly one controller reference to the primary. */
static bool
sole_owner_ref(const struct prim *p, json_object *refs)
{
	json_object *r = json_object_is_type(refs, json_type_array)
	                && json_object_array_length(refs) == 1
	        ? json_object_array_get_idx(refs, 0)
	        : NULL;
	bool ctl = false, block = false;

	return (json_object_is_type(r, json_type_object)
	        && json_object_object_length(r) == 6 && p->uid[0] != '\0'
	        && ref_str(r, "apiVersion",
	                str_or(jx_get_str(p->in->primary, "apiVersion")))
	        && ref_str(r, "kind", p->kind) && ref_str(r, "name", p->name)
	        && ref_str(r, "uid", p->uid)
	        && jx_get_bool(r, "controller", &ctl) == 0 && ctl
	        && jx_get_bool(r, "blockOwnerDeletion", &block) == 0 && block);
}

/* Why w is not the orphan adoption patch of contract.h, or NULL. */
static const char *
orphan_why(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w)
{
	json_object *ops = w->patch, *val;
	const char *path;

	if (p->in->primary == NULL || !orphan_name(p, row, w->name)) {
		return ("not named for an entry of the primary's spec");
	}
	if (w->patch_type != IPC_PATCH_JSON
	        || !json_object_is_type(ops, json_type_array)
	        || json_object_array_length(ops) != 4) {
		return ("not a JSON patch of four operations");
	}
	if (!patch_at(ops, 0, "test", &path, &val)
	        || strcmp(path, "/metadata/resourceVersion") != 0
	        || !json_object_is_type(val, json_type_string)) {
		return ("operation 0 does not test the resourceVersion");
	}
	if (!test_null(ops, 1, "/metadata/ownerReferences")) {
		return ("operation 1 does not test that there is no "
		        "ownerReference");
	}
	if (!patch_at(ops, 2, "add", &path, &val)
	        || strcmp(path, "/metadata/ownerReferences") != 0
	        || !sole_owner_ref(p, val)) {
		return ("operation 2 does not add only the controller "
		        "reference to the primary");
	}
	if (!patch_at(ops, 3, "add", &path, &val)
	        || !label_add(p, row, path, val)) {
		return ("operation 3 does not add only the child label");
	}
	return (NULL);
}

/* ---- objects the primary's spec names (CONTRACT_OWN_SPEC_NAME) ---- */

static enum wpol_verdict
row_spec_name(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	const char *want = primary_ref(p, row->ref), *name = target_name(w);

	if (p->in->primary == NULL) {
		return (not_owned(w, i, v, "the primary is gone"));
	}
	if (want == NULL || want[0] == '\0') {
		want = row->prefix;
	}
	if (strcmp(name, want) != 0) {
		return (viol(v, "not-owned", i,
		        "%s %s %.64s: the primary's %s names %.64s",
		        ipc_op_name(w->op), w->res.plural, name, row->ref,
		        want));
	}
	if (w->op != IPC_OP_CREATE) {
		return (WPOL_OK);
	}
	if (!has_match(w->object, row->match)) {
		return (viol(v, "child-label", i,
		        "create %s %.64s without the label %s", w->res.plural,
		        name, row->match));
	}
	if (w->res.namespaced && !owned_by(w->object, p->uid)) {
		return (viol(v, "owner", i,
		        "create %s %.64s without a controller ownerReference "
		        "to %s %s (uid %s)",
		        w->res.plural, name, p->kind, p->name, p->uid));
	}
	return (WPOL_OK);
}

/* ---- patches the API server tests (CONTRACT_OWN_TESTED) ---- */

static bool
listed(const char *const *paths, const char *path)
{
	for (size_t i = 0; paths != NULL && paths[i] != NULL; i++) {
		if (strcmp(paths[i], path) == 0) {
			return (true);
		}
	}
	return (false);
}

/* Whether operation i is an add (with a value) or a remove of one of the
 * row's paths. */
static bool
tested_change(const struct contract_write *row, json_object *ops, size_t i)
{
	json_object *e = json_object_array_get_idx(ops, i), *val;
	const char *path;

	if (patch_at(ops, i, "add", &path, &val)) {
		return (listed(row->paths, path));
	}
	path = jx_get_str(e, "path");
	return (json_object_is_type(e, json_type_object)
	        && json_object_object_length(e) == 2
	        && strcmp(str_or(jx_get_str(e, "op")), "remove") == 0
	        && path != NULL && listed(row->paths, path));
}

/* Why w is not the tested patch of contract.h, or NULL.  Its three tests
 * are the adoption patch's. */
static const char *
tested_why(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w)
{
	json_object *ops = w->patch;
	const char *why;

	if (w->patch_type != IPC_PATCH_JSON
	        || !json_object_is_type(ops, json_type_array)
	        || json_object_array_length(ops) < 4) {
		return ("not a JSON patch of three tests and a change");
	}
	if ((why = owner_tests(p, ops)) != NULL) {
		return (why);
	}
	for (size_t k = 3; k < json_object_array_length(ops); k++) {
		if (!tested_change(row, ops, k)) {
			return ("an operation changes a path the table does "
			        "not list");
		}
	}
	return (NULL);
}

/* ---- the generated key Secret (CONTRACT_OWN_KEY_SECRET) ---- */

/* Whether s is "sk-" and 2 * CONTRACT_WEB_PROXY_KEY_BYTES lowercase hex
 * digits. */
static bool
key_shape(const char *s)
{
	size_t n = 2 * CONTRACT_WEB_PROXY_KEY_BYTES;

	if (strncmp(s, "sk-", 3) != 0 || strlen(s + 3) != n) {
		return (false);
	}
	for (s += 3; *s != '\0'; s++) {
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) {
			return (false);
		}
	}
	return (true);
}

/* Why the object of a key Secret create is not of the row's shape, or
 * NULL: only apiVersion, kind, metadata, type Opaque, and stringData of
 * the one key `match` with a generated key (no data, so no value the
 * worker could have copied from elsewhere in base64). */
static const char *
key_body_why(const struct contract_write *row, json_object *o)
{
	json_object *sd = json_object_object_get(o, "stringData"), *v;
	const char *type = jx_get_str(o, "type");

	json_object_object_foreach(o, k, val)
	{
		(void)val;
		if (strcmp(k, "apiVersion") != 0 && strcmp(k, "kind") != 0
		        && strcmp(k, "metadata") != 0 && strcmp(k, "type") != 0
		        && strcmp(k, "stringData") != 0) {
			return ("a field beyond metadata, type and "
			        "stringData");
		}
	}
	if (json_object_object_get(o, "type") != NULL
	        && (type == NULL || strcmp(type, "Opaque") != 0)) {
		return ("a type other than Opaque");
	}
	if (!json_object_is_type(sd, json_type_object)
	        || json_object_object_length(sd) != 1
	        || (v = json_object_object_get(sd, row->match)) == NULL) {
		return ("stringData is not exactly the generated key");
	}
	if (!json_object_is_type(v, json_type_string)
	        || !key_shape(json_object_get_string(v))) {
		return ("the key is not sk- and 48 hex digits");
	}
	return (NULL);
}

static enum wpol_verdict
row_key_secret(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	const char *ref = primary_ref(p, row->ref);
	const char *name = target_name(w);
	size_t nr = ref != NULL ? strlen(ref) : 0;
	const char *why;

	if (w->op != IPC_OP_CREATE || nr == 0 || strncmp(name, ref, nr) != 0
	        || strcmp(name + nr, row->suffix) != 0) {
		return (viol(v, "secret", i,
		        "%s secrets %.64s: only create %s%s",
		        ipc_op_name(w->op), name, str_or(ref), row->suffix));
	}
	if (strcmp(str_or(label_of(w->object, row->label)), p->name) != 0) {
		return (viol(v, "child-label", i,
		        "create secrets %.64s without the label %s=%s", name,
		        row->label, p->name));
	}
	if (!owned_by(w->object, p->uid)) {
		return (viol(v, "owner", i,
		        "create secrets %.64s without a controller "
		        "ownerReference to %s (uid %s)",
		        name, p->name, p->uid));
	}
	if ((why = key_body_why(row, w->object)) != NULL) {
		return (viol(v, "secret", i, "create secrets %.64s: %s", name,
		        why));
	}
	return (WPOL_OK);
}

/* Whether the primary's spec names name (CONTRACT_OWN_NAMED). */
static bool
named(const struct prim *p, const struct contract_write *row, const char *name)
{
	json_object *arr = jx_get(p->in->primary, row->ref);

	for (size_t i = 0; i < jx_array_len(arr); i++) {
		const char *s = jx_get_str(
		        json_object_array_get_idx(arr, i), row->match);
		if (s != NULL && strcmp(s, name) == 0) {
			return (true);
		}
	}
	return (false);
}

static enum wpol_verdict
check_row(const struct prim *p, const struct contract_write *row,
        const struct ipc_write *w, size_t i, struct wpol_violation *v)
{
	switch (row->own) {
	case CONTRACT_OWN_SELF:
		if (w->op == IPC_OP_EVENT || is_primary(p, w)) {
			return (WPOL_OK);
		}
		return (not_owned(w, i, v, "not the primary"));
	case CONTRACT_OWN_CHILD:
		return (w->op == IPC_OP_CREATE
		                ? row_child_create(p, row, w, i, v)
		                : row_mutate(p, row, w, i, v));
	case CONTRACT_OWN_LABEL:
		return (row_mutate(p, row, w, i, v));
	case CONTRACT_OWN_CLUSTER:
		return (row_cluster(p, row, w, i, v));
	case CONTRACT_OWN_SHARED:
		if (strcmp(target_name(w), row->prefix) == 0) {
			return (WPOL_OK);
		}
		return (viol(v, "name", i, "create %s %.64s: only %s",
		        w->res.plural, target_name(w), row->prefix));
	case CONTRACT_OWN_ADOPT:
		return (row_adopt(p, row, w, i, v));
	case CONTRACT_OWN_SPEC_NAME:
		return (row_spec_name(p, row, w, i, v));
	case CONTRACT_OWN_TESTED: {
		const char *why = tested_why(p, row, w);
		return (why == NULL ? WPOL_OK : not_owned(w, i, v, why));
	}
	case CONTRACT_OWN_KEY_SECRET:
		return (row_key_secret(p, row, w, i, v));
	case CONTRACT_OWN_ORPHAN: {
		const char *why = orphan_why(p, row, w);
		return (why == NULL ? WPOL_OK : not_owned(w, i, v, why));
	}
	case CONTRACT_OWN_NAMED:
		if (named(p, row, w->name)) {
			return (WPOL_OK);
		}
		return (viol(v,
		        is_res(&w->res, "", "secrets") ? "secret"
		                                       : "not-owned",
		        i, "%s %s %s: not named by the primary's %s",
		        ipc_op_name(w->op), w->res.plural, w->name, row->ref));
	}
	return (viol(v, "resource", i, "bad table row"));
}

static bool
is_rbac(const struct ipc_res *r)
{
	return (strcmp(r->group, "rbac.authorization.k8s.io") == 0);
}

/* rbacpol's lookup (cached text or NULL) over the controller's caches;
 * arg is the wpol_input.  Not synced reads as not cached: rbacpol then
 * answers "rbac-pending", and the RESULT is retried. */
static const char *
rbac_lookup(
        void *arg, const struct ipc_res *res, const char *ns, const char *name)
{
	const struct wpol_input *in = arg;
	const char *json = NULL;

	if (in->lookup == NULL
	        || in->lookup(in->arg, res, ns != NULL ? ns : "", name, &json)
	                != 1) {
		return (NULL);
	}
	return (json);
}

int
wpol_rbac_check(const struct wpol_input *in, size_t i, const char **rule,
        char *detail, size_t len)
{
	struct rbacpol_ctx c = { .run = in->primary,
		.lookup = rbac_lookup,
		.arg = (void *)(uintptr_t)in,
		.allow_wildcard = in->allow_wildcard,
		.writes = in->ops,
		.nwrites = in->n };

	detail[0] = '\0';
	if (rbacpol_check(&c, &in->ops[i], rule, detail, len) == 0) {
		return (0);
	}
	return (strcmp(*rule, "rbac-pending") == 0 ? 1 : -1);
}

/* The rows of the table for w: the first that allows it, else the
 * first's violation. */
static enum wpol_verdict
check_rows(const struct prim *p, const struct ipc_write *w, size_t i,
        struct wpol_violation *v)
{
	const struct contract_ctrl *c = p->in->ctrl;
	struct wpol_violation first = { 0 };
	enum wpol_verdict rc, best = WPOL_VIOLATION;
	bool any = false;

	for (size_t j = 0; j < c->nwrites; j++) {
		const struct contract_write *row = &c->writes[j];
		if (!same_res(&row->res, &w->res)
		        || (row->ops & op_bit(w->op)) == 0) {
			continue;
		}
		rc = check_row(p, row, w, i, any ? v : &first);
		if (rc == WPOL_OK) {
			return (WPOL_OK);
		}
		if (rc == WPOL_RETRY) {
			best = WPOL_RETRY;
		}
		any = true;
	}
	if (!any) {
		return (viol(v,
		        is_res(&w->res, "", "secrets") ? "secret" : "resource",
		        i, "%s on %s%s%s/%s is not in the %s write table",
		        ipc_op_name(w->op), w->res.group,
		        w->res.group[0] != '\0' ? "/" : "", w->res.version,
		        w->res.plural, c->name));
	}
	*v = first;
	return (best);
}

static enum wpol_verdict
check_one(const struct prim *p, size_t i, struct wpol_violation *v)
{
	const struct ipc_write *w = &p->in->ops[i];
	const struct ipc_res *r = &w->res;
	enum wpol_verdict rc;
	char detail[256];

	if (strcmp(r->plural, "leases") == 0
	        || strcmp(r->plural, "customresourcedefinitions") == 0
	        || strcmp(r->plural, "namespaces") == 0) {
		return (viol(v, "forbidden-kind", i, "%s on %s",
		        ipc_op_name(w->op), r->plural));
	}
	if ((rc = check_size(w, i, v)) != WPOL_OK
	        || (rc = check_scope(p, w, i, v)) != WPOL_OK) {
		return (rc);
	}
	if (w->op == IPC_OP_EVENT
	        && (rc = check_event(p, w, i, v)) != WPOL_OK) {
		return (rc);
	}
	if ((rc = check_rows(p, w, i, v)) != WPOL_OK) {
		return (rc);
	}
	if (is_rbac(r)) {
		const char *rule = "rbac";
		int rb = wpol_rbac_check(
		        p->in, i, &rule, detail, sizeof(detail));
		if (rb > 0) {
			return (WPOL_RETRY);
		}
		if (rb < 0) {
			return (viol(v, rule, i, "%s", detail));
		}
	}
	return (WPOL_OK);
}

/* A rule that needs the primary: without it (deleted while its worker
 * had it), the RESULT is stale, not hostile. */
static bool
about_primary(const char *rule)
{
	static const char *const rules[] = { "owner", "child-label",
		"not-owned", "event-target", "secret" };

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (strcmp(rule, rules[i]) == 0) {
			return (true);
		}
	}
	return (false);
}

enum wpol_verdict
wpol_check(const struct wpol_input *in, struct wpol_violation *out)
{
	struct prim p = { .in = in };
	const char *slash = strchr(in->key, '/');
	enum wpol_verdict rc, all = WPOL_OK;
	struct wpol_violation v;

	*out = (struct wpol_violation) { 0 };
	if (in->n > WPOL_WRITES_MAX) {
		return (viol(out, "writes-per-result", in->n,
		        "%zu writes in one result (at most %d)", in->n,
		        WPOL_WRITES_MAX));
	}
	if (slash != NULL) {
		snprintf(p.ns, sizeof(p.ns), "%.*s", (int)(slash - in->key),
		        in->key);
	}
	p.name = slash != NULL ? slash + 1 : in->key;
	p.uid = str_or(jx_get_str(in->primary, "metadata.uid"));
	p.kind = str_or(jx_get_str(in->primary, "kind"));
	for (size_t i = 0; i < in->n; i++) {
		rc = check_one(&p, i, &v);
		if (rc == WPOL_VIOLATION
		        && !(in->primary == NULL && about_primary(v.rule))) {
			*out = v;
			return (rc);
		}
		if (rc != WPOL_OK) {
			all = WPOL_RETRY;
		}
	}
	return (in->primary == NULL && in->n > 0 ? WPOL_RETRY : all);
}

/* ---- the write budget ---- */

#define PROBE 8 /* slots a key may sit in */

struct bslot {
	uint64_t hash; /* 0: free */
	double tokens;
	int64_t at;
};

struct wpol_budget {
	struct bslot slots[WPOL_BUDGET_SLOTS];
};

struct wpol_budget *
wpol_budget_new(void)
{
	return (xcalloc(1, sizeof(struct wpol_budget)));
}

void
wpol_budget_free(struct wpol_budget *b)
{
	free(b);
}

static double
refilled(const struct bslot *s, int64_t now)
{
	double t = s->tokens
	        + (double)(now > s->at ? now - s->at : 0) * WPOL_BUDGET_RATE
	                / 1000.0;

	return (t < WPOL_BUDGET_BURST ? t : WPOL_BUDGET_BURST);
}

/* key's slot: its own, else a free one, else the fullest (given up). */
static struct bslot *
slot_of(struct wpol_budget *b, uint64_t h, int64_t now)
{
	struct bslot *best = NULL;
	double most = -1;

	for (size_t k = 0; k < PROBE; k++) {
		struct bslot *s = &b->slots[(h + k) % WPOL_BUDGET_SLOTS];
		if (s->hash == h) {
			return (s);
		}
		double t = s->hash == 0 ? WPOL_BUDGET_BURST + 1
		                        : refilled(s, now);
		if (t > most) {
			most = t;
			best = s;
		}
	}
	*best = (struct bslot) { h, WPOL_BUDGET_BURST, now };
	return (best);
}

bool
wpol_budget_take(struct wpol_budget *b, const char *controller,
        const char *key, size_t n, int64_t now_ms)
{
	uint64_t h = strhash_seeded(key, strhash(controller));
	struct bslot *s;

	if (h == 0) {
		h = 1;
	}
	s = slot_of(b, h, now_ms);
	s->tokens = refilled(s, now_ms);
	s->at = now_ms;
	if (s->tokens < (double)n) {
		return (false);
	}
	s->tokens -= (double)n;
	return (true);
}
