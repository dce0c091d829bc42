/*
 * vpolicy.c: the view policy (vpolicy.h): a VIEW_REQ against the view
 * table of its controller and the key in flight, the per-reconcile view
 * meter, and the metadata-only shape of a Secret.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "supervisor/labelsel.h"
#include "supervisor/vpolicy.h"

static int violation(struct vpol_violation *v, const char *rule,
        const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
violation(struct vpol_violation *v, const char *rule, const char *fmt, ...)
{
	va_list ap;

	v->rule = rule;
	va_start(ap, fmt);
	vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
	va_end(ap);
	return (-1);
}

/* The namespace of key into ns (NULL: cluster-scoped key) and its name. */
static const char *
key_split(const char *key, char *ns, size_t len, const char **name)
{
	const char *sl = strchr(key, '/');

	*name = sl != NULL ? sl + 1 : key;
	if (sl == NULL || (size_t)(sl - key) >= len) {
		return (NULL);
	}
	snprintf(ns, len, "%.*s", (int)(sl - key), key);
	return (ns);
}

/* The view flag of what. */
static unsigned
op_of(enum ipc_view_what what)
{
	switch (what) {
	case IPC_VIEW_GET:
		return (CONTRACT_VIEW_GET);
	case IPC_VIEW_LIST:
		return (CONTRACT_VIEW_LIST);
	case IPC_VIEW_SECRET_META:
		return (CONTRACT_VIEW_SECRET);
	case IPC_VIEW_POD_LOG:
		return (CONTRACT_VIEW_LOG);
	default:
		return (0);
	}
}

static const char *
what_name(enum ipc_view_what what)
{
	static const char *const names[]
	        = { "get", "list", "metadata view", "log", "zoneinfo" };

	return ((size_t)what < sizeof(names) / sizeof(names[0]) ? names[what]
	                                                        : "view");
}

/* The resource req reads: its own for a get or list, else fixed. */
static void
res_of(const struct ipc_view_req *req, struct kapi_res *out)
{
	static const struct kapi_res secrets = CONTRACT_RES_SECRETS;
	static const struct kapi_res pods = CONTRACT_RES_PODS;

	if (req->what == IPC_VIEW_SECRET_META) {
		*out = secrets;
	} else if (req->what == IPC_VIEW_POD_LOG) {
		*out = pods;
	} else {
		*out = (struct kapi_res) { req->res.group ?: "",
			req->res.version ?: "", req->res.plural ?: "", true };
	}
}

static bool
same_res(const struct kapi_res *a, const struct kapi_res *b)
{
	return (strcmp(a->group, b->group) == 0
	        && strcmp(a->version, b->version) == 0
	        && strcmp(a->plural, b->plural) == 0);
}

/* The row of c's view table for req, or NULL. */
static const struct contract_view *
row_of(const struct contract_ctrl *c, const struct ipc_view_req *req)
{
	struct kapi_res r;

	res_of(req, &r);
	for (size_t i = 0; c != NULL && i < c->nviews; i++) {
		if (same_res(&c->views[i].res, &r)
		        && (c->views[i].ops & op_of(req->what)) != 0) {
			return (&c->views[i]);
		}
	}
	return (NULL);
}

/* A DNS subdomain (RFC 1123), the name of every object views read. */
static bool
name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253 || !isalnum((unsigned char)s[0])
	        || !isalnum((unsigned char)s[n - 1])) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!(islower(ch) || isdigit(ch) || ch == '-' || ch == '.')
		        || (ch == '.' && (s[i + 1] == '.' || s[i + 1] == '-'))
		        || (ch == '-' && s[i + 1] == '.')) {
			return (false);
		}
	}
	return (true);
}

static int
check_ns(const struct contract_view *row, const char *key_ns,
        const struct ipc_view_req *req, struct vpol_violation *v)
{
	const char *ns = req->namespace;

	/* the request's scope builds the path: it must be the table's */
	if (req->has_res
	        && req->res.namespaced
	                != (row->scope != CONTRACT_VIEW_CLUSTER)) {
		return (violation(v, "view-namespace", "%s is %s",
		        row->res.plural,
		        req->res.namespaced ? "cluster-scoped"
		                            : "namespaced"));
	}
	if (row->scope == CONTRACT_VIEW_CLUSTER) {
		return (ns == NULL || ns[0] == '\0'
		                ? 0
		                : violation(v, "view-namespace",
		                        "%s is cluster-scoped, not in %s",
		                        row->res.plural, ns));
	}
	if (ns == NULL || ns[0] == '\0') {
		return (violation(v, "view-namespace",
		        "%s across all namespaces", row->res.plural));
	}
	if ((key_ns != NULL && strcmp(ns, key_ns) == 0)
	        || (row->scope == CONTRACT_VIEW_OR_SYS
	                && strcmp(ns, CONTRACT_SYSTEM_NS) == 0)) {
		return (0);
	}
	return (violation(v, "view-namespace", "%s in namespace %s, not %s",
	        row->res.plural, ns, key_ns != NULL ? key_ns : "(none)"));
}

/* Whether sel is a selector at all (the API server answers 400 to one
 * that is not, e.g. a value over 63 characters: a reconciler bug, not
 * an attack). */
static bool
selector_valid(const char *sel)
{
	struct labelsel *ls = labelsel_parse(sel, NULL, 0);
	bool ok = ls != NULL;

	labelsel_free(ls);
	return (ok);
}

/* Whether selector sel requires label key == val: a valid selector with
 * a requirement "key=val" or "key==val" (the others can only narrow it;
 * blanks are never part of a key or value). */
static bool
selects(const char *sel, const char *key, const char *val)
{
	char tok[512], one[512], two[512];
	size_t n = 0;
	bool yes = false;

	snprintf(one, sizeof(one), "%s=%s", key, val);
	snprintf(two, sizeof(two), "%s==%s", key, val);
	for (const char *p = sel;; p++) {
		if (*p == ',' || *p == '\0') {
			tok[n] = '\0';
			yes = yes || strcmp(tok, one) == 0
			        || strcmp(tok, two) == 0;
			n = 0;
		} else if (!isspace((unsigned char)*p)
		        && n + 1 < sizeof(tok)) {
			tok[n++] = *p;
		}
		if (*p == '\0') {
			return (yes);
		}
	}
}

int
vpol_check(const struct contract_ctrl *c, const char *key,
        const struct ipc_view_req *req, struct vpol_violation *v)
{
	const struct contract_view *row;
	const char *key_ns, *key_name;
	char nsbuf[IPC_NAME_MAX + 1];
	struct kapi_res r;

	if (key == NULL) {
		return (violation(v, "view-no-key", "no key in flight"));
	}
	if (req->what == IPC_VIEW_ZONEINFO) {
		return (0); /* from disk, never the API server */
	}
	res_of(req, &r);
	if ((req->what == IPC_VIEW_GET || req->what == IPC_VIEW_LIST)
	        && strcmp(r.group, "") == 0
	        && strcmp(r.plural, "secrets") == 0) {
		return (violation(v, "view-secret",
		        "a %s of Secrets (only their metadata may be read)",
		        req->what == IPC_VIEW_GET ? "get" : "list"));
	}
	if ((row = row_of(c, req)) == NULL) {
		return (violation(v, "view-resource",
		        "%s %s%s%s/%s not allowed", what_name(req->what),
		        r.group, r.group[0] != '\0' ? "/" : "", r.version,
		        r.plural));
	}
	key_ns = key_split(key, nsbuf, sizeof(nsbuf), &key_name);
	if (check_ns(row, key_ns, req, v) != 0) {
		return (-1);
	}
	if (req->what == IPC_VIEW_LIST && req->label_selector != NULL
	        && !selector_valid(req->label_selector)) {
		return (2);
	}
	if (req->what == IPC_VIEW_LIST && row->own != NULL
	        && (req->label_selector == NULL
	                || !selects(
	                        req->label_selector, row->own, key_name))) {
		return (violation(v, "view-own",
		        "a list of %s must select %s=%s", r.plural, row->own,
		        key_name));
	}
	if (req->what != IPC_VIEW_LIST && !name_ok(req->name)) {
		return (1);
	}
	return (0);
}

const char *
vpol_own_label(const struct contract_ctrl *c, const struct ipc_view_req *req)
{
	const struct contract_view *row = row_of(c, req);

	return (row != NULL && req->what != IPC_VIEW_LIST ? row->own : NULL);
}

int
vpol_check_object(const struct contract_ctrl *c, const char *key,
        const struct ipc_view_req *req, json_object *obj,
        struct vpol_violation *v)
{
	const char *own = vpol_own_label(c, req), *name;
	json_object *got;
	char ns[IPC_NAME_MAX + 1];

	if (own == NULL) {
		return (0);
	}
	key_split(key != NULL ? key : "", ns, sizeof(ns), &name);
	got = jx_getv(obj, "metadata", "labels", own, NULL);
	if (json_object_is_type(got, json_type_string)
	        && strcmp(json_object_get_string(got), name) == 0) {
		return (0);
	}
	return (violation(v, "view-own", "%s %s is not labelled %s=%s",
	        req->what == IPC_VIEW_POD_LOG ? "the log of pod" : "object",
	        req->name != NULL ? req->name : "", own, name));
}

/* m counting ticket: a new reconcile starts afresh. */
static void
meter_at(struct vpol_meter *m, uint64_t ticket)
{
	if (m->ticket != ticket) {
		*m = (struct vpol_meter) { .ticket = ticket };
	}
}

int
vpol_meter_view(
        struct vpol_meter *m, uint64_t ticket, struct vpol_violation *v)
{
	meter_at(m, ticket);
	if (m->views >= VPOL_VIEWS_MAX) {
		return (violation(v, "view-budget",
		        "over %d views in one reconcile", VPOL_VIEWS_MAX));
	}
	m->views++;
	return (0);
}

int
vpol_meter_live(
        struct vpol_meter *m, uint64_t ticket, struct vpol_violation *v)
{
	meter_at(m, ticket);
	if (m->live >= VPOL_LIVE_MAX) {
		return (violation(v, "view-in-flight",
		        "over %d live reads in flight", VPOL_LIVE_MAX));
	}
	m->live++;
	return (0);
}

void
vpol_meter_done(struct vpol_meter *m, uint64_t ticket)
{
	if (m->ticket == ticket && m->live > 0) {
		m->live--;
	}
}

json_object *
vpol_secret_meta(json_object *secret)
{
	json_object *out = json_object_new_object();
	json_object *keys = json_object_new_array();
	json_object *md
	        = jx_copy_strip(json_object_object_get(secret, "metadata"),
	                "annotations", "managedFields", NULL);
	json_object *data = json_object_object_get(secret, "data");
	const char *type = jx_get_str(secret, "type");

	json_object_object_add(out, "metadata", md);
	if (type != NULL) {
		json_object_object_add(
		        out, "type", json_object_new_string(type));
	}
	if (json_object_is_type(data, json_type_object)) {
		json_object_object_foreach(data, k, val)
		{
			(void)val;
			json_object_array_add(keys, json_object_new_string(k));
		}
	}
	json_object_object_add(out, "keys", keys);
	return (out);
}
