/*
 * kres.c: kubesim's resource registry.  Owns the table of built-in
 * resources (issue 3's list, as a 1.33 server shows them), the resources
 * served from CustomResourceDefinitions (their validation, server-managed
 * status, install and removal: spec C.10), the legacy discovery documents
 * (spec D.2, D.4) and the OpenAPI v3 stub kubectl's apply probes (D.5).
 *
 * Every resource ever registered is kept until kres_reg_free(): removed
 * ones are only marked gone, so holders' pointers stay valid.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/strhash.h"
#include "common/xmalloc.h"
#include "kubesim/kopenapi.h"
#include "kubesim/kres.h"

struct kres_reg {
	struct kres **res; /* every resource, gone ones too */
	size_t n;
	size_t cap;
};

#define STD_VERBS "create,delete,deletecollection,get,list,patch,update,watch"
#define NS_VERBS  "create,delete,get,list,patch,update,watch"
#define CR_VERBS  "delete,deletecollection,get,list,patch,create,update,watch"
#define END_VERBS "delete,deletecollection,get,list,watch"

#define F_NS     KRES_NAMESPACED
#define F_ST     KRES_STATUS
#define F_UNCOND KRES_UNCOND_UPDATE
#define F_GEN    KRES_GENERATION
#define F_CORE   (F_NS | F_UNCOND)

struct builtin {
	const char *group;
	const char *version;
	const char *plural;
	const char *singular;
	const char *kind;
	unsigned flags; /* KRES_STRATEGIC is added to all */
	const char *shorts;
	const char *cats;
	const char *verbs;
	const char *selectable;
};

static const char pod_fields[]
        = "spec.nodeName,spec.restartPolicy,spec.schedulerName,"
          "spec.serviceAccountName,spec.hostNetwork,status.phase,"
          "status.podIP,status.podIPs,status.nominatedNodeName";
static const char event_fields[]
        = "involvedObject.kind,involvedObject.namespace,involvedObject.name,"
          "involvedObject.uid,involvedObject.apiVersion,"
          "involvedObject.resourceVersion,involvedObject.fieldPath,reason,"
          "reportingComponent,source,type";

static const struct builtin builtins[] = {
	{ "", "v1", "namespaces", "namespace", "Namespace", F_UNCOND | F_ST,
	        "ns", "", NS_VERBS, "status.phase" },
	{ "", "v1", "configmaps", "configmap", "ConfigMap", F_CORE, "cm", "",
	        STD_VERBS, "" },
	{ "", "v1", "secrets", "secret", "Secret", F_CORE, "", "", STD_VERBS,
	        "type" },
	{ "", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount",
	        F_CORE, "sa", "", STD_VERBS, "" },
	{ "", "v1", "services", "service", "Service", F_CORE | F_ST, "svc",
	        "all", STD_VERBS, "spec.clusterIP,spec.type" },
	{ "", "v1", "pods", "pod", "Pod", F_CORE | F_ST | KRES_LOG, "po",
	        "all", STD_VERBS, pod_fields },
	{ "", "v1", "persistentvolumeclaims", "persistentvolumeclaim",
	        "PersistentVolumeClaim", F_CORE | F_ST, "pvc", "", STD_VERBS,
	        "" },
	{ "", "v1", "events", "event", "Event", F_CORE, "ev", "", STD_VERBS,
	        event_fields },
	{ "apps", "v1", "deployments", "deployment", "Deployment",
	        F_CORE | F_ST | F_GEN | KRES_SCALE, "deploy", "all", STD_VERBS,
	        "" },
	{ "batch", "v1", "jobs", "job", "Job", F_CORE | F_ST | F_GEN, "",
	        "all", STD_VERBS, "status.successful" },
	{ "rbac.authorization.k8s.io", "v1", "clusterrolebindings",
	        "clusterrolebinding", "ClusterRoleBinding", F_UNCOND, "", "",
	        STD_VERBS, "" },
	{ "rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole",
	        "ClusterRole", F_UNCOND, "", "", STD_VERBS, "" },
	{ "rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding",
	        "RoleBinding", F_CORE, "", "", STD_VERBS, "" },
	{ "rbac.authorization.k8s.io", "v1", "roles", "role", "Role", F_CORE,
	        "", "", STD_VERBS, "" },
	{ "coordination.k8s.io", "v1", "leases", "lease", "Lease",
	        F_NS | KRES_CREATE_ON_UPDATE, "", "", STD_VERBS, "" },
	{ "networking.k8s.io", "v1", "networkpolicies", "networkpolicy",
	        "NetworkPolicy", F_CORE | F_GEN, "netpol", "", STD_VERBS, "" },
	{ "policy", "v1", "poddisruptionbudgets", "poddisruptionbudget",
	        "PodDisruptionBudget", F_CORE | F_ST | F_GEN, "pdb", "",
	        STD_VERBS, "" },
	{ "events.k8s.io", "v1", "events", "event", "Event", F_CORE, "ev", "",
	        STD_VERBS, "" },
	{ "apiextensions.k8s.io", "v1", "customresourcedefinitions",
	        "customresourcedefinition", "CustomResourceDefinition",
	        F_ST | F_GEN, "crd,crds", "api-extensions", STD_VERBS, "" },
};

/* ------------------------------------------------------------------ */
/* String lists                                                       */

/* A NULL-terminated array of the comma-separated items of s. */
static char **
split(const char *s)
{
	char **v;
	size_t n = 1, i = 0;
	const char *p, *c;

	for (p = s; *p != '\0'; p++) {
		n += *p == ',';
	}
	v = xcalloc(n + 1, sizeof(*v));
	for (p = s; *p != '\0'; p = *c == ',' ? c + 1 : c) {
		c = strchr(p, ',');
		if (c == NULL) {
			c = p + strlen(p);
		}
		v[i++] = xstrndup(p, (size_t)(c - p));
	}
	return (v);
}

/* A NULL-terminated copy of the strings of a JSON array (may be NULL);
 * non-strings are skipped; strip_dot drops one leading '.'. */
static char **
from_json(json_object *arr, const char *key, int strip_dot)
{
	size_t n, i, k = 0;
	char **v;
	const char *s;

	n = json_object_is_type(arr, json_type_array)
	        ? json_object_array_length(arr)
	        : 0;
	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (key != NULL) {
			s = jx_get_str(e, key);
		} else if (json_object_is_type(e, json_type_string)) {
			s = json_object_get_string(e);
		} else {
			s = NULL;
		}
		if (s == NULL) {
			continue;
		}
		if (strip_dot && s[0] == '.') {
			s++;
		}
		v[k++] = xstrdup(s);
	}
	return (v);
}

static void
strv_free(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++) {
		free(v[i]);
	}
	free(v);
}

static json_object *
strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; v[i] != NULL; i++) {
		json_object_array_add(a, json_object_new_string(v[i]));
	}
	return (a);
}

static char *
lower(const char *s)
{
	char *l = xstrdup(s), *p;

	for (p = l; *p != '\0'; p++) {
		*p = (char)tolower((unsigned char)*p);
	}
	return (l);
}

/* ------------------------------------------------------------------ */
/* Registry                                                           */

static void
kres_free1(struct kres *r)
{
	free(r->group);
	free(r->version);
	free(r->plural);
	free(r->singular);
	free(r->kind);
	free(r->list_kind);
	strv_free(r->short_names);
	strv_free(r->categories);
	strv_free(r->verbs);
	strv_free(r->selectable);
	free(r->coll);
	free(r->api_version);
	kschema_free(r->schema);
	json_object_put(r->columns);
	free(r->crd);
	free(r);
}

/* A new resource with its names and derived fields set. */
static struct kres *
kres_alloc(const char *group, const char *version, const char *plural,
        const char *singular, const char *kind)
{
	struct kres *r = xcalloc(1, sizeof(*r));

	r->group = xstrdup(group);
	r->version = xstrdup(version);
	r->plural = xstrdup(plural);
	r->singular = xstrdup(singular);
	r->kind = xstrdup(kind);
	r->list_kind = xasprintf("%sList", kind);
	r->coll = xasprintf("%s/%s", group, plural);
	r->api_version = group[0] == '\0' ? xstrdup(version)
	                                  : xasprintf("%s/%s", group, version);
	return (r);
}

static void
reg_add(struct kres_reg *reg, struct kres *r)
{
	if (reg->n == reg->cap) {
		reg->cap = reg->cap == 0 ? 32 : reg->cap * 2;
		reg->res
		        = xreallocarray(reg->res, reg->cap, sizeof(*reg->res));
	}
	reg->res[reg->n++] = r;
}

struct kres_reg *
kres_reg_new(void)
{
	struct kres_reg *reg = xcalloc(1, sizeof(*reg));
	const struct builtin *b;
	struct kres *r;
	size_t i;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		b = &builtins[i];
		r = kres_alloc(
		        b->group, b->version, b->plural, b->singular, b->kind);
		r->flags = b->flags | KRES_STRATEGIC;
		r->short_names = split(b->shorts);
		r->categories = split(b->cats);
		r->verbs = split(b->verbs);
		r->selectable = split(b->selectable);
		reg_add(reg, r);
	}
	return (reg);
}

void
kres_reg_free(struct kres_reg *reg)
{
	size_t i;

	if (reg == NULL) {
		return;
	}
	for (i = 0; i < reg->n; i++) {
		kres_free1(reg->res[i]);
	}
	free(reg->res);
	free(reg);
}

const struct kres *
kres_find(const struct kres_reg *reg, const char *group, const char *version,
        const char *plural)
{
	const struct kres *r;
	size_t i;

	if (group == NULL || version == NULL || plural == NULL) {
		return (NULL);
	}
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		if (strcmp(r->group, group) == 0
		        && strcmp(r->version, version) == 0
		        && strcmp(r->plural, plural) == 0) {
			return (r);
		}
	}
	return (NULL);
}

const struct kres *
kres_find_kind(
        const struct kres_reg *reg, const char *api_version, const char *kind)
{
	const struct kres *r;
	size_t i;

	if (api_version == NULL || kind == NULL) {
		return (NULL);
	}
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		if (strcmp(r->api_version, api_version) == 0
		        && strcmp(r->kind, kind) == 0) {
			return (r);
		}
	}
	return (NULL);
}

const struct kres *
kres_at(const struct kres_reg *reg, size_t i)
{
	size_t k;

	if (reg == NULL) {
		return (NULL);
	}
	for (k = 0; k < reg->n; k++) {
		if (reg->res[k]->gone) {
			continue;
		}
		if (i-- == 0) {
			return (reg->res[k]);
		}
	}
	return (NULL);
}

/* ------------------------------------------------------------------ */
/* CRD validation                                                     */

#define RFC1123_MSG                                                           \
	"a lowercase RFC 1123 label must consist of lower case "              \
	"alphanumeric characters or '-', and must start and end with an "     \
	"alphanumeric character (e.g. 'my-name',  or '123-abc', regex "       \
	"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define RFC1035_MSG                                                           \
	"a DNS-1035 label must consist of lower case alphanumeric "           \
	"characters or '-', start with an alphabetic character, and end "     \
	"with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "     \
	"regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

struct causes {
	struct kschema_cause *v;
	size_t n;
};

static void cause(struct causes *c, const char *field, const char *reason,
        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
cause(struct causes *c, const char *field, const char *reason, const char *fmt,
        ...)
{
	struct kschema_cause *k;
	struct buf b = BUF_INIT;
	va_list ap;

	c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
	k = &c->v[c->n++];
	k->field = xstrdup(field);
	k->reason = xstrdup(reason);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	k->message = buf_detach(&b, NULL);
}

static const char *
str_or_empty(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

/* Whether s is a lowercase label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, its
 * first character a letter when alpha_first (RFC 1035). */
static bool
is_label(const char *s, bool alpha_first)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-') {
		return (false);
	}
	if (alpha_first && !islower((unsigned char)s[0])) {
		return (false);
	}
	for (i = 0; i < n; i++) {
		if (!islower((unsigned char)s[i])
		        && !isdigit((unsigned char)s[i]) && s[i] != '-') {
			return (false);
		}
	}
	return (true);
}

static void
check_names(json_object *crd, struct causes *c)
{
	const char *name = str_or_empty(crd, "metadata.name");
	const char *group = str_or_empty(crd, "spec.group");
	const char *plural = str_or_empty(crd, "spec.names.plural");
	char *want = xasprintf("%s.%s", plural, group);

	if (name[0] == '\0') {
		cause(c, "metadata.name", "FieldValueRequired",
		        "Required value: name or generateName is required");
	} else if (strcmp(name, want) != 0) {
		cause(c, "metadata.name", "FieldValueInvalid",
		        "Invalid value: \"%s\": must be "
		        "spec.names.plural+\".\"+spec.group",
		        name);
	}
	free(want);
	if (group[0] == '\0') {
		cause(c, "spec.group", "FieldValueRequired", "Required value");
	} else if (strchr(group, '.') == NULL) {
		cause(c, "spec.group", "FieldValueInvalid",
		        "Invalid value: \"%s\": should be a domain with at "
		        "least one dot",
		        group);
	}
}

static void
check_scope_names(json_object *crd, struct causes *c)
{
	const char *scope = str_or_empty(crd, "spec.scope"), *plural;

	if (scope[0] == '\0') {
		cause(c, "spec.scope", "FieldValueRequired", "Required value");
	} else if (strcmp(scope, "Namespaced") != 0
	        && strcmp(scope, "Cluster") != 0) {
		cause(c, "spec.scope", "FieldValueNotSupported",
		        "Unsupported value: \"%s\": supported values: "
		        "\"Cluster\", \"Namespaced\"",
		        scope);
	}
	plural = str_or_empty(crd, "spec.names.plural");
	if (plural[0] == '\0') {
		cause(c, "spec.names.plural", "FieldValueRequired",
		        "Required value");
	} else if (!is_label(plural, false)) {
		cause(c, "spec.names.plural", "FieldValueInvalid",
		        "Invalid value: \"%s\": %s", plural, RFC1123_MSG);
	}
	if (str_or_empty(crd, "spec.names.kind")[0] == '\0') {
		cause(c, "spec.names.kind", "FieldValueRequired",
		        "Required value");
	}
}

static void
check_version(json_object *v, size_t i, bool dup, struct causes *c)
{
	json_object *schema = jx_get(v, "schema.openAPIV3Schema");
	const char *name = str_or_empty(v, "name");
	struct kschema *ks;
	char err[256], field[96];

	snprintf(field, sizeof(field), "spec.versions[%zu].name", i);
	if (name[0] == '\0') {
		cause(c, field, "FieldValueRequired", "Required value");
	} else if (!is_label(name, true)) {
		cause(c, field, "FieldValueInvalid",
		        "Invalid value: \"%s\": %s", name, RFC1035_MSG);
	} else if (dup) {
		cause(c, field, "FieldValueDuplicate",
		        "Duplicate value: \"%s\"", name);
	}
	snprintf(field, sizeof(field),
	        "spec.versions[%zu].schema.openAPIV3Schema", i);
	if (schema == NULL) {
		cause(c, field, "FieldValueRequired",
		        "Required value: schemas are required");
		return;
	}
	ks = kschema_new(schema, err, sizeof(err));
	if (ks == NULL) {
		cause(c, field, "FieldValueInvalid", "Invalid value: %s", err);
	}
	kschema_free(ks);
}

/* Whether versions[i] has the name of an earlier version. */
static bool
dup_name(json_object *vs, size_t i)
{
	const char *name
	        = jx_get_str(json_object_array_get_idx(vs, i), "name");
	size_t k;

	for (k = 0; name != NULL && k < i; k++) {
		const char *o
		        = jx_get_str(json_object_array_get_idx(vs, k), "name");

		if (o != NULL && strcmp(o, name) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
check_versions(json_object *crd, struct causes *c)
{
	json_object *vs = jx_get(crd, "spec.versions"), *v;
	size_t i, n, nstorage = 0;
	bool storage;

	n = json_object_is_type(vs, json_type_array)
	        ? json_object_array_length(vs)
	        : 0;
	if (n == 0) {
		cause(c, "spec.versions", "FieldValueRequired",
		        "Required value: must have at least one version");
		return;
	}
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(vs, i);
		if (jx_get_bool(v, "storage", &storage) == 0 && storage) {
			nstorage++;
		}
		check_version(v, i, dup_name(vs, i), c);
	}
	if (nstorage != 1) {
		cause(c, "spec.versions", "FieldValueInvalid",
		        "Invalid value: "
		        "[]apiextensions.CustomResourceDefinitionVersion{...}:"
		        " "
		        "must have exactly one version marked as storage "
		        "version");
	}
}

int
kres_crd_validate(
        json_object *crd, struct kschema_cause **causes, size_t *ncauses)
{
	struct causes c = { NULL, 0 };

	check_names(crd, &c);
	check_scope_names(crd, &c);
	check_versions(crd, &c);
	*causes = c.v;
	*ncauses = c.n;
	return (c.n == 0 ? 0 : 1);
}

/* ------------------------------------------------------------------ */
/* CRD status                                                         */

static void
default_names(json_object *names)
{
	const char *kind = jx_get_str(names, "kind");

	if (kind == NULL) {
		return;
	}
	if (jx_get_str(names, "singular") == NULL) {
		char *l = lower(kind);

		json_object_object_add(
		        names, "singular", json_object_new_string(l));
		free(l);
	}
	if (jx_get_str(names, "listKind") == NULL) {
		char *lk = xasprintf("%sList", kind);

		json_object_object_add(
		        names, "listKind", json_object_new_string(lk));
		free(lk);
	}
}

static const char *
storage_version(json_object *crd)
{
	json_object *vs = jx_get(crd, "spec.versions"), *v;
	size_t i, n;
	bool storage;

	n = json_object_is_type(vs, json_type_array)
	        ? json_object_array_length(vs)
	        : 0;
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(vs, i);
		if (jx_get_bool(v, "storage", &storage) == 0 && storage) {
			return (jx_get_str(v, "name"));
		}
	}
	return (NULL);
}

static void
set_stored(json_object *status, const char *sv)
{
	json_object *stored = jx_get(status, "storedVersions");
	size_t i, n;

	if (!json_object_is_type(stored, json_type_array)) {
		stored = json_object_new_array();
		json_object_object_add(status, "storedVersions", stored);
	}
	if (sv == NULL) {
		return;
	}
	n = json_object_array_length(stored);
	for (i = 0; i < n; i++) {
		const char *s = json_object_get_string(
		        json_object_array_get_idx(stored, i));

		if (s != NULL && strcmp(s, sv) == 0) {
			return;
		}
	}
	json_object_array_add(stored, json_object_new_string(sv));
}

/* Sets condition type to True with reason and message; its
 * lastTransitionTime stays when it already was True. */
static void
set_cond(json_object *conds, const char *type, const char *reason,
        const char *msg, const char *now)
{
	json_object *c = NULL, *e;
	const char *ltt = now, *st;
	size_t i, n = json_object_array_length(conds);

	for (i = 0; i < n && c == NULL; i++) {
		e = json_object_array_get_idx(conds, i);
		if (strcmp(str_or_empty(e, "type"), type) == 0) {
			c = e;
		}
	}
	st = jx_get_str(c, "status");
	if (st != NULL && strcmp(st, "True") == 0
	        && jx_get_str(c, "lastTransitionTime") != NULL) {
		ltt = jx_get_str(c, "lastTransitionTime");
	}
	e = json_object_new_object();
	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "status", json_object_new_string("True"));
	json_object_object_add(
	        e, "lastTransitionTime", json_object_new_string(ltt));
	json_object_object_add(e, "reason", json_object_new_string(reason));
	json_object_object_add(e, "message", json_object_new_string(msg));
	if (c != NULL) {
		json_object_array_put_idx(conds, i - 1, e);
	} else {
		json_object_array_add(conds, e);
	}
}

void
kres_crd_set_status(json_object *crd, const char *now_rfc3339)
{
	json_object *names = jx_get(crd, "spec.names"), *status, *conds;

	if (!json_object_is_type(crd, json_type_object)) {
		return;
	}
	if (json_object_is_type(names, json_type_object)) {
		default_names(names);
	}
	status = jx_get(crd, "status");
	if (!json_object_is_type(status, json_type_object)) {
		status = json_object_new_object();
		json_object_object_add(crd, "status", status);
	}
	conds = jx_get(status, "conditions");
	if (!json_object_is_type(conds, json_type_array)) {
		conds = json_object_new_array();
		json_object_object_add(status, "conditions", conds);
	}
	set_cond(conds, "NamesAccepted", "NoConflicts", "no conflicts found",
	        now_rfc3339);
	set_cond(conds, "Established", "InitialNamesAccepted",
	        "the initial names have been accepted", now_rfc3339);
	json_object_object_add(status, "acceptedNames",
	        names != NULL ? jx_copy_stripa(names, NULL)
	                      : json_object_new_object());
	set_stored(status, storage_version(crd));
}

/* ------------------------------------------------------------------ */
/* CRD install                                                        */

static unsigned
cr_flags(json_object *crd, json_object *v)
{
	unsigned f = KRES_CUSTOM | KRES_GENERATION;

	if (strcmp(str_or_empty(crd, "spec.scope"), "Namespaced") == 0) {
		f |= KRES_NAMESPACED;
	}
	if (jx_get(v, "subresources.status") != NULL) {
		f |= KRES_STATUS;
	}
	if (jx_get(v, "subresources.scale") != NULL) {
		f |= KRES_SCALE;
	}
	return (f);
}

/* The resource of one served version v of crd, or NULL with err. */
static struct kres *
cr_new(json_object *crd, json_object *v, char *err, size_t errlen)
{
	json_object *names = jx_get(crd, "spec.names");
	const char *kind = jx_get_str(names, "kind");
	const char *sing = jx_get_str(names, "singular");
	const char *lk = jx_get_str(names, "listKind");
	char *l = lower(kind), e[256];
	struct kres *r;

	r = kres_alloc(jx_get_str(crd, "spec.group"), jx_get_str(v, "name"),
	        jx_get_str(names, "plural"), sing != NULL ? sing : l, kind);
	free(l);
	if (lk != NULL) {
		free(r->list_kind);
		r->list_kind = xstrdup(lk);
	}
	r->flags = cr_flags(crd, v);
	r->short_names = from_json(jx_get(names, "shortNames"), NULL, 0);
	r->categories = from_json(jx_get(names, "categories"), NULL, 0);
	r->verbs = split(CR_VERBS);
	r->selectable
	        = from_json(jx_get(v, "selectableFields"), "jsonPath", 1);
	r->crd = xstrdup(jx_get_str(crd, "metadata.name"));
	r->columns
	        = jx_copy_stripa(jx_get(v, "additionalPrinterColumns"), NULL);
	r->schema = kschema_new(
	        jx_get(v, "schema.openAPIV3Schema"), e, sizeof(e));
	if (r->schema == NULL) {
		snprintf(err, errlen, "version %s: %s", r->version, e);
		kres_free1(r);
		return (NULL);
	}
	return (r);
}

/* Whether a served resource not of crd_name has group/version/plural. */
static bool
taken(const struct kres_reg *reg, const struct kres *n, const char *crd_name)
{
	const struct kres *r = kres_find(reg, n->group, n->version, n->plural);

	return (r != NULL
	        && (r->crd == NULL || strcmp(r->crd, crd_name) != 0));
}

static bool
crd_ok(json_object *crd, char *err, size_t errlen)
{
	static const char *const need[] = { "metadata.name", "spec.group",
		"spec.names.plural", "spec.names.kind" };
	size_t i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (jx_get_str(crd, need[i]) == NULL) {
			snprintf(err, errlen, "CRD without %s", need[i]);
			return (false);
		}
	}
	if (!json_object_is_type(
	            jx_get(crd, "spec.versions"), json_type_array)) {
		snprintf(err, errlen, "CRD without spec.versions");
		return (false);
	}
	return (true);
}

/* The new resources of crd's served versions in *out (count returned),
 * or -1 with err. */
static int
cr_build(const struct kres_reg *reg, json_object *crd, struct kres ***out,
        char *err, size_t errlen)
{
	json_object *vs = jx_get(crd, "spec.versions"), *v;
	const char *name = jx_get_str(crd, "metadata.name");
	size_t i, n = json_object_array_length(vs), k = 0;
	struct kres **nr = xcalloc(n + 1, sizeof(*nr));
	bool served;

	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(vs, i);
		if (jx_get_bool(v, "served", &served) != 0 || !served) {
			continue;
		}
		if (jx_get_str(v, "name") == NULL) {
			snprintf(err, errlen,
			        "spec.versions[%zu] without name", i);
			goto fail;
		}
		if ((nr[k] = cr_new(crd, v, err, errlen)) == NULL) {
			goto fail;
		}
		if (taken(reg, nr[k++], name)) {
			snprintf(err, errlen, "%s/%s is already served",
			        nr[k - 1]->api_version, nr[k - 1]->plural);
			goto fail;
		}
	}
	*out = nr;
	return ((int)k);
fail:
	for (i = 0; i < k; i++) {
		kres_free1(nr[i]);
	}
	free(nr);
	return (-1);
}

int
kres_crd_install(
        struct kres_reg *reg, json_object *crd, char *err, size_t errlen)
{
	struct kres **nr;
	int i, n;

	if (!crd_ok(crd, err, errlen)) {
		return (-1);
	}
	if ((n = cr_build(reg, crd, &nr, err, errlen)) < 0) {
		return (-1);
	}
	kres_crd_remove(reg, jx_get_str(crd, "metadata.name"));
	for (i = 0; i < n; i++) {
		reg_add(reg, nr[i]);
	}
	free(nr);
	return (0);
}

void
kres_crd_terminating(struct kres_reg *reg, const char *crd_name)
{
	size_t i;

	for (i = 0; crd_name != NULL && i < reg->n; i++) {
		if (reg->res[i]->crd != NULL
		        && strcmp(reg->res[i]->crd, crd_name) == 0) {
			reg->res[i]->terminating = true;
		}
	}
}

void
kres_crd_remove(struct kres_reg *reg, const char *crd_name)
{
	size_t i;

	for (i = 0; crd_name != NULL && i < reg->n; i++) {
		if (reg->res[i]->crd != NULL
		        && strcmp(reg->res[i]->crd, crd_name) == 0) {
			reg->res[i]->gone = true;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Group versions                                                     */

struct vkey {
	bool kube;
	int level; /* 2 GA, 1 beta, 0 alpha */
	long major;
	long minor;
};

/* Parses v<major>[(alpha|beta)<minor>] into k. */
static void
vkey(const char *v, struct vkey *k)
{
	char *end;

	memset(k, 0, sizeof(*k));
	if (v[0] != 'v' || !isdigit((unsigned char)v[1])) {
		return;
	}
	k->major = strtol(v + 1, &end, 10);
	k->level = 2;
	if (strncmp(end, "alpha", 5) == 0 || strncmp(end, "beta", 4) == 0) {
		k->level = end[0] == 'b';
		end += end[0] == 'b' ? 4 : 5;
		if (!isdigit((unsigned char)*end)) {
			return;
		}
		k->minor = strtol(end, &end, 10);
	}
	k->kube = *end == '\0';
}

/* Kubernetes version priority: < 0 when a comes first. */
static int
vcmp(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa;
	const char *b = *(const char *const *)pb;
	struct vkey ka, kb;

	vkey(a, &ka);
	vkey(b, &kb);
	if (ka.kube != kb.kube) {
		return (ka.kube ? -1 : 1);
	}
	if (!ka.kube) {
		return (strcmp(a, b));
	}
	if (ka.level != kb.level) {
		return (kb.level - ka.level);
	}
	if (ka.major != kb.major) {
		return (kb.major > ka.major ? 1 : -1);
	}
	if (ka.minor != kb.minor) {
		return (kb.minor > ka.minor ? 1 : -1);
	}
	return (0);
}

static bool
strv_has(const char **v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(v[i], s) == 0) {
			return (true);
		}
	}
	return (false);
}

/* The served versions of group, preferred first (borrowed strings in a
 * new array the caller frees with free()); their count in *n. */
static const char **
group_versions(const struct kres_reg *reg, const char *group, size_t *n)
{
	const char **v = xcalloc(reg->n + 1, sizeof(*v));
	const struct kres *r;
	size_t i;

	*n = 0;
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		if (strcmp(r->group, group) == 0
		        && !strv_has(v, *n, r->version)) {
			v[(*n)++] = r->version;
		}
	}
	qsort(v, *n, sizeof(*v), vcmp);
	return (v);
}

/* The served non-core groups in registration order (borrowed strings in
 * a new array the caller frees with free()). */
static const char **
groups(const struct kres_reg *reg, size_t *n)
{
	const char **g = xcalloc(reg->n + 1, sizeof(*g));
	const struct kres *r;
	size_t i;

	*n = 0;
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		if (r->group[0] != '\0' && !strv_has(g, *n, r->group)) {
			g[(*n)++] = r->group;
		}
	}
	return (g);
}

/* ------------------------------------------------------------------ */
/* Discovery                                                          */

static void
add_str(json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, json_object_new_string(val));
}

json_object *
kres_api_versions(const struct kres_reg *reg, const char *addr)
{
	json_object *o = json_object_new_object(), *a, *cidr;

	(void)reg;
	add_str(o, "kind", "APIVersions");
	a = json_object_new_array();
	json_object_array_add(a, json_object_new_string("v1"));
	json_object_object_add(o, "versions", a);
	cidr = json_object_new_object();
	add_str(cidr, "clientCIDR", "0.0.0.0/0");
	add_str(cidr, "serverAddress", addr != NULL ? addr : "");
	a = json_object_new_array();
	json_object_array_add(a, cidr);
	json_object_object_add(o, "serverAddressByClientCIDRs", a);
	return (o);
}

static json_object *
gv_json(const char *group, const char *version)
{
	json_object *o = json_object_new_object();
	char *gv = xasprintf("%s/%s", group, version);

	add_str(o, "groupVersion", gv);
	add_str(o, "version", version);
	free(gv);
	return (o);
}

/* The APIGroup of group (without kind/apiVersion), or NULL. */
static json_object *
group_json(const struct kres_reg *reg, const char *group)
{
	json_object *o, *a;
	const char **v;
	size_t i, n;

	v = group_versions(reg, group, &n);
	if (n == 0 || group[0] == '\0') {
		free(v);
		return (NULL);
	}
	o = json_object_new_object();
	add_str(o, "name", group);
	a = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object_array_add(a, gv_json(group, v[i]));
	}
	json_object_object_add(o, "versions", a);
	json_object_object_add(o, "preferredVersion", gv_json(group, v[0]));
	free(v);
	return (o);
}

json_object *
kres_group_list(const struct kres_reg *reg)
{
	json_object *o = json_object_new_object(), *a;
	const char **g = groups(reg, &(size_t) { 0 });
	size_t i;

	add_str(o, "kind", "APIGroupList");
	add_str(o, "apiVersion", "v1");
	a = json_object_new_array();
	for (i = 0; g[i] != NULL; i++) {
		json_object_array_add(a, group_json(reg, g[i]));
	}
	json_object_object_add(o, "groups", a);
	free(g);
	return (o);
}

json_object *
kres_group(const struct kres_reg *reg, const char *group)
{
	json_object *g, *o;

	if (group == NULL || (g = group_json(reg, group)) == NULL) {
		return (NULL);
	}
	o = json_object_new_object();
	add_str(o, "kind", "APIGroup");
	add_str(o, "apiVersion", "v1");
	json_object_object_foreach(g, k, v)
	{
		json_object_object_add(o, k, json_object_get(v));
	}
	json_object_put(g);
	return (o);
}

/* A stable short base64 hash of the resource's group/version/kind. */
static json_object *
storage_hash(const struct kres *r)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                          "abcdefghijklmnopqrstuvwxyz0123456789+/";
	char *s = xasprintf("%s/%s/%s", r->group, r->version, r->kind);
	uint64_t h = strhash_n(s, strlen(s));
	char out[13];
	int i;

	/* 64 bits: ten 6-bit digits, then 4 bits padded, as base64 of 8
	 * bytes. */
	for (i = 0; i < 10; i++) {
		out[i] = b64[(h >> (58 - 6 * i)) & 63];
	}
	out[10] = b64[(h & 15) << 2];
	out[11] = '=';
	out[12] = '\0';
	free(s);
	return (json_object_new_string(out));
}

/* One discovery entry: the resource (sub NULL) or a subresource. */
static json_object *
entry(const struct kres *r, const char *sub, const char *verbs)
{
	json_object *o = json_object_new_object();
	char *name = sub != NULL ? xasprintf("%s/%s", r->plural, sub)
	                         : xstrdup(r->plural);
	char **v;
	bool scale = sub != NULL && strcmp(sub, "scale") == 0;

	add_str(o, "name", name);
	add_str(o, "singularName", sub != NULL ? "" : r->singular);
	json_object_object_add(o, "namespaced",
	        json_object_new_boolean(r->flags & KRES_NAMESPACED));
	if (scale) {
		add_str(o, "group", "autoscaling");
		add_str(o, "version", "v1");
	}
	add_str(o, "kind", scale ? "Scale" : r->kind);
	if (verbs == NULL && r->terminating) {
		verbs = END_VERBS;
	}
	v = verbs != NULL ? split(verbs) : NULL;
	json_object_object_add(
	        o, "verbs", strv_json(v != NULL ? v : r->verbs));
	strv_free(v);
	free(name);
	return (o);
}

static json_object *
main_entry(const struct kres *r)
{
	json_object *o = entry(r, NULL, NULL);

	if (r->short_names[0] != NULL) {
		json_object_object_add(
		        o, "shortNames", strv_json(r->short_names));
	}
	if (r->categories[0] != NULL) {
		json_object_object_add(
		        o, "categories", strv_json(r->categories));
	}
	json_object_object_add(o, "storageVersionHash", storage_hash(r));
	return (o);
}

static void
add_entries(json_object *a, const struct kres *r)
{
	json_object_array_add(a, main_entry(r));
	if (r->flags & KRES_LOG) {
		json_object_array_add(a, entry(r, "log", "get"));
	}
	if (r->flags & KRES_SCALE) {
		json_object_array_add(
		        a, entry(r, "scale", "get,patch,update"));
	}
	if (r->flags & KRES_STATUS) {
		json_object_array_add(
		        a, entry(r, "status", "get,patch,update"));
	}
}

static int
entry_cmp(const void *pa, const void *pb)
{
	json_object *a = *(json_object *const *)pa;
	json_object *b = *(json_object *const *)pb;

	return (strcmp(jx_get_str(a, "name"), jx_get_str(b, "name")));
}

json_object *
kres_resource_list(
        const struct kres_reg *reg, const char *group, const char *version)
{
	json_object *o, *a;
	const struct kres *r;
	size_t i;
	char *gv;

	if (group == NULL || version == NULL) {
		return (NULL);
	}
	a = json_object_new_array();
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		if (strcmp(r->group, group) == 0
		        && strcmp(r->version, version) == 0) {
			add_entries(a, r);
		}
	}
	if (json_object_array_length(a) == 0) {
		json_object_put(a);
		return (NULL);
	}
	json_object_array_sort(a, entry_cmp);
	gv = group[0] == '\0' ? xstrdup(version)
	                      : xasprintf("%s/%s", group, version);
	o = json_object_new_object();
	add_str(o, "kind", "APIResourceList");
	add_str(o, "apiVersion", "v1");
	add_str(o, "groupVersion", gv);
	json_object_object_add(o, "resources", a);
	free(gv);
	return (o);
}

/* ------------------------------------------------------------------ */
/* OpenAPI v3                                                         */

static json_object *
patch_op(const struct kres *r)
{
	json_object *op = json_object_new_object(), *gvk, *p, *c, *rb, *resp;
	static const char *const types[] = { "application/merge-patch+json",
		"application/json-patch+json" };
	size_t i;

	gvk = json_object_new_object();
	add_str(gvk, "group", r->group);
	add_str(gvk, "version", r->version);
	add_str(gvk, "kind", r->kind);
	json_object_object_add(op, "x-kubernetes-group-version-kind", gvk);
	p = json_object_new_object();
	add_str(p, "name", "fieldValidation");
	add_str(p, "in", "query");
	c = json_object_new_object();
	add_str(c, "type", "string");
	json_object_object_add(p, "schema", c);
	json_object_object_add(op, "parameters", json_object_new_array());
	json_object_array_add(jx_get(op, "parameters"), p);
	c = json_object_new_object();
	for (i = 0; i < 2; i++) {
		p = json_object_new_object();
		json_object_object_add(p, "schema", json_object_new_object());
		add_str(jx_get(p, "schema"), "type", "object");
		json_object_object_add(c, types[i], p);
	}
	rb = json_object_new_object();
	json_object_object_add(rb, "content", c);
	json_object_object_add(op, "requestBody", rb);
	resp = json_object_new_object();
	p = json_object_new_object();
	add_str(p, "description", "OK");
	json_object_object_add(resp, "200", p);
	json_object_object_add(op, "responses", resp);
	return (op);
}

static char *
object_path(const struct kres *r)
{
	const char *pre = r->group[0] == '\0' ? "/api" : "/apis/";

	return (xasprintf("%s%s/%s%s/%s/{name}", pre, r->group, r->version,
	        (r->flags & KRES_NAMESPACED) ? "/namespaces/{namespace}" : "",
	        r->plural));
}

/* The OpenAPI document of group/version, or NULL when nothing is
 * served there. */
static json_object *
gv_doc(const struct kres_reg *reg, const char *group, const char *version)
{
	json_object *doc, *paths, *info, *path, *comp, *schemas;
	const struct kres *r;
	size_t i;
	char *p;

	paths = json_object_new_object();
	schemas = json_object_new_object();
	for (i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		if (strcmp(r->group, group) != 0
		        || strcmp(r->version, version) != 0) {
			continue;
		}
		kopenapi_add(schemas, r);
		p = object_path(r);
		path = json_object_new_object();
		json_object_object_add(path, "patch", patch_op(r));
		json_object_object_add(paths, p, path);
		free(p);
	}
	if (json_object_object_length(paths) == 0) {
		json_object_put(paths);
		json_object_put(schemas);
		return (NULL);
	}
	doc = json_object_new_object();
	add_str(doc, "openapi", "3.0.0");
	info = json_object_new_object();
	add_str(info, "title", "Kubernetes");
	add_str(info, "version", "v1.33.0");
	json_object_object_add(doc, "info", info);
	json_object_object_add(doc, "paths", paths);
	comp = json_object_new_object();
	json_object_object_add(comp, "schemas", schemas);
	json_object_object_add(doc, "components", comp);
	return (doc);
}

json_object *
kres_openapi_doc(const struct kres_reg *reg, const char *gvpath)
{
	const char *slash;
	char *group;
	json_object *doc;

	if (gvpath == NULL) {
		return (NULL);
	}
	if (strcmp(gvpath, "api/v1") == 0) {
		return (gv_doc(reg, "", "v1"));
	}
	if (strncmp(gvpath, "apis/", 5) != 0) {
		return (NULL);
	}
	gvpath += 5;
	slash = strchr(gvpath, '/');
	if (slash == NULL || slash == gvpath || slash[1] == '\0'
	        || strchr(slash + 1, '/') != NULL) {
		return (NULL);
	}
	group = xstrndup(gvpath, (size_t)(slash - gvpath));
	doc = gv_doc(reg, group, slash + 1);
	free(group);
	return (doc);
}

static void
root_add(const struct kres_reg *reg, json_object *paths, const char *gvpath)
{
	json_object *doc = kres_openapi_doc(reg, gvpath), *o;
	char *s, *url;

	if (doc == NULL) {
		return;
	}
	s = jx_to_string(doc);
	url = xasprintf("/openapi/v3/%s?hash=%016llX", gvpath,
	        (unsigned long long)strhash_n(s, strlen(s)));
	o = json_object_new_object();
	add_str(o, "serverRelativeURL", url);
	json_object_object_add(paths, gvpath, o);
	free(url);
	free(s);
	json_object_put(doc);
}

json_object *
kres_openapi_v2(const struct kres_reg *reg)
{
	json_object *doc = json_object_new_object(), *info, *defs, *out;
	const struct kres *r;
	struct buf b = BUF_INIT;
	const char *text, *hit;

	defs = json_object_new_object();
	for (size_t i = 0; (r = kres_at(reg, i)) != NULL; i++) {
		kopenapi_add(defs, r);
	}
	add_str(doc, "swagger", "2.0");
	info = json_object_new_object();
	add_str(info, "title", "Kubernetes");
	add_str(info, "version", "v1.33.0");
	json_object_object_add(doc, "info", info);
	json_object_object_add(doc, "paths", json_object_new_object());
	json_object_object_add(doc, "definitions", defs);
	/* v2 refers to #/definitions/, v3 to #/components/schemas/ */
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	while ((hit = strstr(text, "#/components/schemas/")) != NULL) {
		buf_append(&b, text, (size_t)(hit - text));
		buf_puts(&b, "#/definitions/");
		text = hit + strlen("#/components/schemas/");
	}
	buf_puts(&b, text);
	out = json_tokener_parse(buf_str(&b));
	buf_fini(&b);
	json_object_put(doc);
	return (out);
}

json_object *
kres_openapi_root(const struct kres_reg *reg)
{
	json_object *root = json_object_new_object();
	json_object *paths = json_object_new_object();
	const char **g, **v;
	size_t i, j, n;
	char *p;

	root_add(reg, paths, "api/v1");
	g = groups(reg, &n);
	for (i = 0; i < n; i++) {
		v = group_versions(reg, g[i], &(size_t) { 0 });
		for (j = 0; v[j] != NULL; j++) {
			p = xasprintf("apis/%s/%s", g[i], v[j]);
			root_add(reg, paths, p);
			free(p);
		}
		free(v);
	}
	free(g);
	json_object_object_add(root, "paths", paths);
	return (root);
}
