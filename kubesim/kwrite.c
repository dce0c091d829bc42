/*
 * kwrite.c: every write kubesim accepts, with the API server's object
 * semantics (spec A.7, C.1-C.5, C.8, C.10): create (system metadata,
 * generateName, namespace checks), update and the status subresource
 * (optimistic concurrency, generation, no-op short-circuit), the four
 * patch types, delete with options, finalizers and deletionTimestamp,
 * deletecollection, and the synchronous parts of namespace and CRD
 * deletion.  Callers hold the store lock.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "common/b64.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "kubesim/kpatch.h"
#include "kubesim/ksrv.h"

#define CRD_FINALIZER "customresourcecleanup.apiextensions.k8s.io"
#define NAME_CHARS    "bcdfghjklmnpqrstvwxz2456789"

struct causes {
	struct kschema_cause *c;
	size_t n;
};

static void after_remove(struct ksrv *ks, const struct kres *res,
        const char *ns, const char *name);

static void cause_add(struct causes *cs, const char *field, const char *reason,
        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
cause_add(struct causes *cs, const char *field, const char *reason,
        const char *fmt, ...)
{
	va_list ap;
	struct kschema_cause *c;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = xstrdup("");
	}
	va_end(ap);
	cs->c = xreallocarray(cs->c, cs->n + 1, sizeof(*cs->c));
	c = &cs->c[cs->n++];
	c->field = xstrdup(field);
	c->reason = xstrdup(reason);
	c->message = msg;
}

static bool
is(const struct kres *res, const char *group, const char *plural)
{
	return (strcmp(res->group, group) == 0
	        && strcmp(res->plural, plural) == 0);
}

/* 422 Invalid for the object named name, with causes (freed). */
static int
invalid(struct kresp *rs, const struct kres *res, const char *name,
        struct causes *cs)
{
	struct buf msg = BUF_INIT;
	json_object *st;

	kschema_invalid_message(
	        res->kind, res->group, name, cs->c, cs->n, &msg);
	st = kstatus_new(422, "Invalid", buf_str(&msg));
	/* NewInvalid names the Kind here, not the resource */
	kstatus_details(st, name, res->group, res->kind, NULL);
	kstatus_causes(st, cs->c, cs->n);
	kresp_status(rs, st);
	buf_fini(&msg);
	kschema_causes_free(cs->c, cs->n);
	memset(cs, 0, sizeof(*cs));
	return (422);
}

/* "configmaps" or "leases.coordination.k8s.io" */
static char *
qualified(const struct kres *res)
{
	if (res->group[0] == '\0') {
		return (xstrdup(res->plural));
	}
	return (xasprintf("%s.%s", res->plural, res->group));
}

static int
conflict(struct kresp *rs, const struct kres *res, const char *name,
        const char *why)
{
	char *q = qualified(res);
	char *msg = xasprintf("Operation cannot be fulfilled on %s \"%s\": %s",
	        q, name, why);
	json_object *st = kstatus_new(409, "Conflict", msg);

	kstatus_details(st, name, res->group, res->plural, NULL);
	kresp_status(rs, st);
	free(msg);
	free(q);
	return (409);
}

static json_object *
meta(json_object *obj)
{
	json_object *md = json_object_object_get(obj, "metadata");

	if (md == NULL || !json_object_is_type(md, json_type_object)) {
		md = json_object_new_object();
		json_object_object_add(obj, "metadata", md);
	}
	return (md);
}

static const char *
mstr(json_object *obj, const char *key)
{
	json_object *v = json_object_object_get(meta(obj), key);

	if (v == NULL || !json_object_is_type(v, json_type_string)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

static void
mset(json_object *obj, const char *key, const char *val)
{
	if (val == NULL) {
		json_object_object_del(meta(obj), key);
	} else {
		json_object_object_add(
		        meta(obj), key, json_object_new_string(val));
	}
}

static void
mcopy(json_object *dst, json_object *src, const char *key)
{
	json_object *v = json_object_object_get(meta(src), key);
	json_object *c = NULL;

	if (v == NULL) {
		json_object_object_del(meta(dst), key);
		return;
	}
	json_object_deep_copy(v, &c, NULL);
	json_object_object_add(meta(dst), key, c);
}

static json_object *
copy(json_object *o)
{
	json_object *c = NULL;

	if (o != NULL) {
		json_object_deep_copy(o, &c, NULL);
	}
	return (c);
}

static bool
deleting(json_object *obj)
{
	return (jx_get(obj, "metadata.deletionTimestamp") != NULL);
}

static size_t
nfinalizers(json_object *obj)
{
	json_object *f = jx_get(obj, "metadata.finalizers");

	if (f == NULL || !json_object_is_type(f, json_type_array)) {
		return (0);
	}
	return (json_object_array_length(f));
}

static bool
has_finalizer(json_object *obj, const char *name)
{
	json_object *f = jx_get(obj, "metadata.finalizers");

	for (size_t i = 0; i < nfinalizers(obj); i++) {
		const char *s = json_object_get_string(
		        json_object_array_get_idx(f, i));
		if (s != NULL && strcmp(s, name) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
finalizer_set(json_object *obj, const char *name, bool on)
{
	json_object *f = jx_get(obj, "metadata.finalizers");
	json_object *n = json_object_new_array();

	for (size_t i = 0; i < nfinalizers(obj); i++) {
		json_object *e = json_object_array_get_idx(f, i);
		const char *s = json_object_get_string(e);

		if (s != NULL && strcmp(s, name) == 0) {
			continue;
		}
		json_object_array_add(n, json_object_get(e));
	}
	if (on) {
		json_object_array_add(n, json_object_new_string(name));
	}
	if (json_object_array_length(n) == 0) {
		json_object_put(n);
		json_object_object_del(meta(obj), "finalizers");
		return;
	}
	json_object_object_add(meta(obj), "finalizers", n);
}

/* Body checks common to create and update: an object, kind and
 * apiVersion matching the endpoint.  Returns 0 or an error code. */
static int
check_envelope(json_object *obj, const struct kres *res, struct kresp *rs)
{
	const char *av, *kind;

	if (obj == NULL || !json_object_is_type(obj, json_type_object)) {
		return (kresp_error(rs, 400, "BadRequest",
		        "the body of the request is not a JSON object"));
	}
	av = jx_get_str(obj, "apiVersion");
	kind = jx_get_str(obj, "kind");
	if (av != NULL && strcmp(av, res->api_version) != 0
	        && !(res->flags & KRES_CUSTOM
	                && strcmp(res->kind, "x") == 0)) {
		const char *sl = strchr(av, '/');
		bool same_group = sl != NULL
		        && strncmp(av, res->group, (size_t)(sl - av)) == 0
		        && res->group[sl - av] == '\0';
		if (!same_group) {
			return (kresp_error(rs, 400, "BadRequest",
			        "the API version in the data (%s) does not "
			        "match the expected API version (%s)",
			        av, res->api_version));
		}
	}
	if (kind != NULL && strcmp(kind, res->kind) != 0) {
		return (kresp_error(rs, 400, "BadRequest",
		        "the kind in the data (%s) does not match the "
		        "expected kind (%s)",
		        kind, res->kind));
	}
	json_object_object_add(
	        obj, "apiVersion", json_object_new_string(res->api_version));
	json_object_object_add(obj, "kind", json_object_new_string(res->kind));
	return (0);
}

static bool
dns_label_ok(const char *s, size_t max, bool dots)
{
	size_t n = strlen(s);

	if (n == 0 || n > max) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		bool inner = c == '-' || (dots && c == '.');

		if (!alnum && !(inner && i > 0 && i + 1 < n)) {
			return (false);
		}
		if (c == '.'
		        && (s[i - 1] == '.' || s[i - 1] == '-'
		                || s[i + 1] == '-')) {
			return (false);
		}
	}
	return (true);
}

static bool
label_part_ok(const char *s, size_t n, bool empty_ok)
{
	if (n == 0) {
		return (empty_ok);
	}
	if (n > 63) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9');
		bool inner = c == '-' || c == '_' || c == '.';

		if (!alnum && !(inner && i > 0 && i + 1 < n)) {
			return (false);
		}
	}
	return (true);
}

static void
check_labels(json_object *obj, struct causes *cs)
{
	json_object *l = jx_get(obj, "metadata.labels");

	if (l == NULL || !json_object_is_type(l, json_type_object)) {
		return;
	}
	json_object_object_foreach(l, k, v)
	{
		const char *sl = strrchr(k, '/');
		const char *name = sl != NULL ? sl + 1 : k;
		const char *val = json_object_get_string(v);
		bool ok = label_part_ok(name, strlen(name), false);

		if (sl != NULL) {
			char *pfx = xstrndup(k, (size_t)(sl - k));
			ok = ok && dns_label_ok(pfx, 253, true);
			free(pfx);
		}
		if (!ok) {
			cause_add(cs, "metadata.labels", "FieldValueInvalid",
			        "Invalid value: \"%s\": name part must "
			        "consist "
			        "of alphanumeric characters, '-', '_' or '.', "
			        "and must start and end with an alphanumeric "
			        "character",
			        k);
		}
		if (!json_object_is_type(v, json_type_string)
		        || !label_part_ok(val, strlen(val), true)) {
			cause_add(cs, "metadata.labels", "FieldValueInvalid",
			        "Invalid value: \"%s\": a valid label must be "
			        "an empty string or consist of alphanumeric "
			        "characters, '-', '_' or '.', and must start "
			        "and end with an alphanumeric character",
			        val != NULL ? val : "");
		}
	}
}

static void
check_owners(json_object *obj, struct causes *cs)
{
	json_object *refs = jx_get(obj, "metadata.ownerReferences");
	struct buf who = BUF_INIT;
	size_t ctl = 0;

	if (refs == NULL || !json_object_is_type(refs, json_type_array)) {
		return;
	}
	for (size_t i = 0; i < json_object_array_length(refs); i++) {
		json_object *r = json_object_array_get_idx(refs, i);
		bool c = false;
		static const char *const req[]
		        = { "apiVersion", "kind", "name", "uid", NULL };

		for (size_t j = 0; req[j] != NULL; j++) {
			const char *v = jx_get_str(r, req[j]);
			if (v == NULL || v[0] == '\0') {
				cause_add(cs, "metadata.ownerReferences",
				        "FieldValueInvalid",
				        "Invalid value: \"\": %s must not be "
				        "empty",
				        req[j]);
			}
		}
		if (jx_get_bool(r, "controller", &c) == 0 && c) {
			buf_printf(&who, "%s%s/%s", ctl > 0 ? " and " : "",
			        jx_get_str(r, "kind"), jx_get_str(r, "name"));
			ctl++;
		}
	}
	if (ctl > 1) {
		cause_add(cs, "metadata.ownerReferences", "FieldValueInvalid",
		        "Invalid value: []v1.OwnerReference{...}: Only one "
		        "reference can have Controller set to true. Found "
		        "\"true\" in references for %s",
		        buf_str(&who));
	}
	buf_fini(&who);
}

/* How the real server validates a kind's metadata.name: a DNS-1123
 * subdomain (most kinds, custom resources), a DNS-1123 label
 * (Namespaces), a DNS-1035 label (Services), a path segment (the RBAC
 * kinds, whose names hold colons: system:controller:...). */
enum name_rule { N_SUBDOMAIN, N_LABEL, N_DNS1035, N_SEGMENT };

static enum name_rule
name_rule(const struct kres *res)
{
	if (is(res, "", "namespaces")) {
		return (N_LABEL);
	}
	if (is(res, "", "services")) {
		return (N_DNS1035);
	}
	if (strcmp(res->group, "rbac.authorization.k8s.io") == 0) {
		return (N_SEGMENT);
	}
	return (N_SUBDOMAIN);
}

/* apimachinery's ValidatePathSegmentName: NULL when fine. */
static const char *
segment_why(const char *name)
{
	if (strcmp(name, ".") == 0) {
		return ("may not be '.'");
	}
	if (strcmp(name, "..") == 0) {
		return ("may not be '..'");
	}
	if (strchr(name, '/') != NULL) {
		return ("may not contain '/'");
	}
	if (strchr(name, '%') != NULL) {
		return ("may not contain '%'");
	}
	return (NULL);
}

static void
check_name(const struct kres *res, json_object *obj, struct causes *cs)
{
	const char *name = mstr(obj, "name"), *why;
	enum name_rule r = name_rule(res);

	if (name == NULL) {
		return;
	}
	if (r == N_SEGMENT) {
		if ((why = segment_why(name)) != NULL) {
			cause_add(cs, "metadata.name", "FieldValueInvalid",
			        "Invalid value: \"%s\": %s", name, why);
		}
		return;
	}
	if (r == N_DNS1035) {
		if (strlen(name) > 63) {
			cause_add(cs, "metadata.name", "FieldValueInvalid",
			        "Invalid value: \"%s\": must be no more than "
			        "63 characters",
			        name);
		} else if (!dns_label_ok(name, 63, false)
		        || !(name[0] >= 'a' && name[0] <= 'z')) {
			cause_add(cs, "metadata.name", "FieldValueInvalid",
			        "Invalid value: \"%s\": a DNS-1035 label must "
			        "consist of lower case alphanumeric "
			        "characters "
			        "or '-', start with an alphabetic character, "
			        "and "
			        "end with an alphanumeric character (e.g. "
			        "'my-name',  or 'abc-123', regex used for "
			        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
			        name);
		}
		return;
	}
	if (dns_label_ok(name, r == N_LABEL ? 63 : 253, r != N_LABEL)) {
		return;
	}
	cause_add(cs, "metadata.name", "FieldValueInvalid",
	        "Invalid value: \"%s\": a lowercase RFC 1123 %s must "
	        "consist of lower case alphanumeric characters, '-'%s, and "
	        "must start and end with an alphanumeric character",
	        name, r == N_LABEL ? "label" : "subdomain",
	        r == N_LABEL ? "" : " or '.'");
}

/* Top-level fields of built-in kinds; anything else is an unknown field
 * (the real server drops it when decoding into the typed object). */
struct topkeys {
	const char *plural;
	const char *const *keys;
};

static const char *const k_cm[] = { "data", "binaryData", "immutable", NULL };
static const char *const k_secret[]
        = { "data", "stringData", "type", "immutable", NULL };
static const char *const k_sa[] = { "secrets", "imagePullSecrets",
	"automountServiceAccountToken", NULL };
static const char *const k_event[] = { "involvedObject", "reason", "message",
	"source", "firstTimestamp", "lastTimestamp", "count", "type",
	"eventTime", "series", "action", "related", "reportingComponent",
	"reportingInstance", "regarding", "note", "reportingController",
	"deprecatedSource", "deprecatedFirstTimestamp",
	"deprecatedLastTimestamp", "deprecatedCount", NULL };
static const char *const k_role[] = { "rules", "aggregationRule", NULL };
static const char *const k_binding[] = { "subjects", "roleRef", NULL };
static const char *const k_spec[] = { "spec", "status", NULL };

static const struct topkeys topkeys[] = {
	{ "configmaps", k_cm },
	{ "secrets", k_secret },
	{ "serviceaccounts", k_sa },
	{ "events", k_event },
	{ "roles", k_role },
	{ "clusterroles", k_role },
	{ "rolebindings", k_binding },
	{ "clusterrolebindings", k_binding },
	{ NULL, k_spec },
};

static bool
in_list(const char *const *l, const char *k)
{
	for (size_t i = 0; l[i] != NULL; i++) {
		if (strcmp(l[i], k) == 0) {
			return (true);
		}
	}
	return (false);
}

/* Drops unknown top-level fields of a built-in object; their names go to
 * pruned, comma-separated. */
static void
builtin_prune(const struct kres *res, json_object *obj, struct buf *pruned)
{
	static const char *const always[]
	        = { "apiVersion", "kind", "metadata", NULL };
	const struct topkeys *t = topkeys;
	struct buf drop = BUF_INIT;

	while (t->plural != NULL && strcmp(t->plural, res->plural) != 0) {
		t++;
	}
	json_object_object_foreach(obj, k, v)
	{
		(void)v;
		if (!in_list(always, k) && !in_list(t->keys, k)) {
			buf_printf(&drop, "%s%s", drop.len ? "," : "", k);
		}
	}
	if (drop.len == 0) {
		buf_fini(&drop);
		return;
	}
	char *save = NULL, *p = buf_detach(&drop, NULL);
	for (char *f = strtok_r(p, ",", &save); f != NULL;
	        f = strtok_r(NULL, ",", &save)) {
		json_object_object_del(obj, f);
		buf_printf(pruned, "%s%s", pruned->len ? "," : "", f);
	}
	free(p);
}

/* What fieldValidation asks for about the unknown fields in pruned:
 * Strict is a 400, Warn (the default) a Warning header, Ignore nothing.
 * Returns 0 or the error code. */
static int
unknown_fields(const struct kreq *rq, struct buf *pruned, struct kresp *rs)
{
	const char *fv = kreq_q(rq, "fieldValidation");
	struct buf msg = BUF_INIT;
	char *save = NULL, *p;
	int code = 0;

	if (pruned->len == 0) {
		return (0);
	}
	p = buf_detach(pruned, NULL);
	for (char *f = strtok_r(p, ",", &save); f != NULL;
	        f = strtok_r(NULL, ",", &save)) {
		buf_printf(&msg, "%sunknown field \"%s\"",
		        msg.len > 0 ? ", " : "", f);
	}
	free(p);
	if (fv != NULL && strcasecmp(fv, "Strict") == 0) {
		code = kresp_error(rs, 400, "BadRequest",
		        "strict decoding error: %s", buf_str(&msg));
	} else if (fv == NULL || strcasecmp(fv, "Ignore") != 0) {
		free(rs->warning);
		rs->warning = xasprintf("299 - \"%s\"", buf_str(&msg));
	}
	buf_fini(&msg);
	return (code);
}

/* A Secret as the real server stores it: stringData written into data
 * (base64, winning over a data key of the same name) and dropped; type
 * Opaque when absent. */
static void
secret_normalize(const struct kres *res, json_object *obj)
{
	json_object *sd = json_object_object_get(obj, "stringData"), *data;

	if (!is(res, "", "secrets")) {
		return;
	}
	if (jx_get_str(obj, "type") == NULL) {
		jx_set_path(obj, "type", json_object_new_string("Opaque"));
	}
	if (!json_object_is_type(sd, json_type_object)) {
		json_object_object_del(obj, "stringData");
		return;
	}
	data = json_object_object_get(obj, "data");
	if (!json_object_is_type(data, json_type_object)) {
		data = json_object_new_object();
		json_object_object_add(obj, "data", data);
	}
	json_object_object_foreach(sd, k, v)
	{
		const char *plain = json_object_get_string(v);
		char *enc = b64_encode(plain, strlen(plain));
		json_object_object_add(data, k, json_object_new_string(enc));
		free(enc);
	}
	json_object_object_del(obj, "stringData");
}

/* Defaulting, pruning and validation against the schema (custom
 * resources) or the known top-level fields (built-ins).  Returns 0 or an
 * error code; validation failures become causes. */
static int
custom_schema(const struct kres *res, json_object *obj, const struct kreq *rq,
        struct causes *cs, struct kresp *rs)
{
	struct buf pruned = BUF_INIT;
	struct kschema_cause *c = NULL;
	size_t n = 0;
	int code;

	if (res->schema == NULL) {
		builtin_prune(res, obj, &pruned);
		secret_normalize(res, obj);
		code = unknown_fields(rq, &pruned, rs);
		buf_fini(&pruned);
		return (code);
	}
	kschema_default(res->schema, obj);
	kschema_prune(res->schema, obj, &pruned);
	code = unknown_fields(rq, &pruned, rs);
	buf_fini(&pruned);
	if (code != 0) {
		return (code);
	}
	if (kschema_validate(res->schema, obj, &c, &n) == 1) {
		for (size_t i = 0; i < n; i++) {
			cause_add(cs, c[i].field, c[i].reason, "%s",
			        c[i].message);
		}
		kschema_causes_free(c, n);
	}
	return (0);
}

/* The Lease fields the real validation checks (spec C.9). */
static void
check_lease(const struct kres *res, json_object *obj, struct causes *cs)
{
	int64_t v;

	if (!is(res, "coordination.k8s.io", "leases")) {
		return;
	}
	if (jx_get(obj, "spec.leaseDurationSeconds") != NULL
	        && (jx_get_int(obj, "spec.leaseDurationSeconds", &v) != 0
	                || v <= 0)) {
		cause_add(cs, "spec.leaseDurationSeconds", "FieldValueInvalid",
		        "Invalid value: %s: must be greater than 0",
		        json_object_to_json_string(
		                jx_get(obj, "spec.leaseDurationSeconds")));
	}
	if (jx_get(obj, "spec.leaseTransitions") != NULL
	        && (jx_get_int(obj, "spec.leaseTransitions", &v) != 0
	                || v < 0)) {
		cause_add(cs, "spec.leaseTransitions", "FieldValueInvalid",
		        "Invalid value: %s: must be greater than or equal to "
		        "0",
		        json_object_to_json_string(
		                jx_get(obj, "spec.leaseTransitions")));
	}
}

/* Metadata and schema validation; 0 or an error code (422 included). */
static int
validate(struct ksrv *ks, const struct kres *res, json_object *obj,
        const struct kreq *rq, struct kresp *rs)
{
	struct causes cs = { 0 };
	int code;

	(void)ks;
	check_name(res, obj, &cs);
	check_labels(obj, &cs);
	check_owners(obj, &cs);
	check_lease(res, obj, &cs);
	code = custom_schema(res, obj, rq, &cs, rs);
	if (code == 0
	        && is(res, "apiextensions.k8s.io",
	                "customresourcedefinitions")) {
		struct kschema_cause *c = NULL;
		size_t n = 0;

		if (kres_crd_validate(obj, &c, &n) == 1) {
			for (size_t i = 0; i < n; i++) {
				cause_add(&cs, c[i].field, c[i].reason, "%s",
				        c[i].message);
			}
			kschema_causes_free(c, n);
		}
	}
	if (code != 0) {
		kschema_causes_free(cs.c, cs.n);
		return (code);
	}
	if (cs.n > 0) {
		return (invalid(rs, res, mstr(obj, "name"), &cs));
	}
	return (0);
}

static bool
dry_run(const struct kreq *rq)
{
	const char *d = kreq_q(rq, "dryRun");

	return (d != NULL && strcmp(d, "All") == 0);
}

static void
set_int(json_object *o, const char *path, int64_t v)
{
	jx_set_path(o, path, json_object_new_int64(v));
}

static void
default_int(json_object *o, const char *path, int64_t v)
{
	if (jx_get(o, path) == NULL) {
		set_int(o, path, v);
	}
}

/* What the real server's create strategies add for some built-ins. */
static void
builtin_defaults(struct ksrv *ks, const struct kres *res, json_object *obj)
{
	const char *uid = mstr(obj, "uid");

	if (is(res, "", "namespaces")) {
		json_object *f = json_object_new_array();
		json_object_array_add(f, json_object_new_string("kubernetes"));
		jx_set_path(obj, "spec.finalizers", f);
		jx_set_path(
		        obj, "status.phase", json_object_new_string("Active"));
	} else if (is(res, "", "pods")) {
		jx_set_path(obj, "status.phase",
		        json_object_new_string("Pending"));
	} else if (is(res, "batch", "jobs")) {
		default_int(obj, "spec.backoffLimit", 6);
		default_int(obj, "spec.completions", 1);
		default_int(obj, "spec.parallelism", 1);
		jx_setv(obj, json_object_new_string(uid), "spec", "selector",
		        "matchLabels", "batch.kubernetes.io/controller-uid",
		        NULL);
		jx_setv(obj, json_object_new_string(uid), "spec", "template",
		        "metadata", "labels",
		        "batch.kubernetes.io/controller-uid", NULL);
		jx_setv(obj, json_object_new_string(mstr(obj, "name")), "spec",
		        "template", "metadata", "labels",
		        "batch.kubernetes.io/job-name", NULL);
	} else if (is(res, "apps", "deployments")) {
		default_int(obj, "spec.replicas", 1);
	} else if (is(res, "", "services")
	        && jx_get(obj, "spec.clusterIP") == NULL) {
		uint64_t r = ks->rnd++;
		char ip[32];
		snprintf(ip, sizeof(ip), "10.96.%u.%u",
		        (unsigned)((r >> 8) % 256), (unsigned)(r % 254 + 1));
		jx_set_path(obj, "spec.clusterIP", json_object_new_string(ip));
	}
}

static int
check_namespace(struct ksrv *ks, const struct kres *res, const char *ns,
        struct kresp *rs)
{
	const struct kres *nsr;
	struct kitem *it;

	if (!(res->flags & KRES_NAMESPACED)) {
		return (0);
	}
	nsr = kres_find(ks->reg, "", "v1", "namespaces");
	it = kstore_get(ksrv_coll(ks, nsr), ns);
	if (it == NULL) {
		return (kresp_not_found(rs, nsr, ns));
	}
	if (deleting(it->obj)) {
		json_object *st;
		char *msg = xasprintf("%s \"%s\" is forbidden: unable to "
		                      "create new content in namespace %s "
		                      "because it is being terminated",
		        res->plural, "", ns);
		st = kstatus_new(403, "Forbidden", msg);
		kstatus_details(st, NULL, res->group, res->plural, NULL);
		kresp_status(rs, st);
		free(msg);
		return (403);
	}
	return (0);
}

static char *
generate_name(struct ksrv *ks, const char *prefix)
{
	char sfx[6];
	size_t n = strlen(prefix);

	for (size_t i = 0; i < 5; i++) {
		ks->rnd = ks->rnd * 6364136223846793005ULL
		        + 1442695040888963407ULL;
		sfx[i] = NAME_CHARS[(ks->rnd >> 33)
		        % (sizeof(NAME_CHARS) - 1)];
	}
	sfx[5] = '\0';
	return (xasprintf("%.*s%s", (int)(n > 58 ? 58 : n), prefix, sfx));
}

/* Picks the name of a new object.  Returns 0, or an error code. */
static int
choose_name(struct ksrv *ks, const struct kres *res, const char *ns,
        json_object *obj, struct kresp *rs)
{
	const char *name = mstr(obj, "name");
	const char *gen = mstr(obj, "generateName");
	struct kstore_coll *c = ksrv_coll(ks, res);

	if (name != NULL && name[0] != '\0') {
		return (0);
	}
	if (gen == NULL || gen[0] == '\0') {
		struct causes cs = { 0 };
		cause_add(&cs, "metadata.name", "FieldValueRequired",
		        "Required value: name or generateName is required");
		return (invalid(rs, res, "", &cs));
	}
	for (int tries = 0; tries < 8; tries++) {
		char *cand = generate_name(ks, gen);
		char *key = ksrv_key(res, ns, cand);
		bool taken = kstore_get(c, key) != NULL;

		free(key);
		if (!taken) {
			mset(obj, "name", cand);
			free(cand);
			return (0);
		}
		free(cand);
	}
	json_object *st = kstatus_new(409, "AlreadyExists",
	        "the server was not able to generate a unique name for the "
	        "object");
	kstatus_retry(st, 1);
	kresp_status(rs, st);
	return (409);
}

/* Serves a CRD before it is stored, so that a CRD the registry refuses
 * (one that would take over a built-in resource) is answered 422 and
 * never recorded as Established. */
static int
crd_install(struct ksrv *ks, const struct kres *res, json_object *crd,
        struct kresp *rs)
{
	char err[256];
	const char *name = jx_get_str(crd, "metadata.name");

	if (kres_crd_install(ks->reg, crd, err, sizeof(err)) == 0) {
		return (0);
	}
	log_warnx("CRD %s not served: %s", name, err);
	struct causes cs = { 0 };
	cause_add(&cs, "spec", "FieldValueInvalid", "Invalid value: %s", err);
	invalid(rs, res, name, &cs);
	return (-1);
}

static bool
is_crd(const struct kres *res)
{
	return (is(res, "apiextensions.k8s.io", "customresourcedefinitions"));
}

/* The namespace and name checks of a create body.  0 or an error. */
static int
create_meta(struct ksrv *ks, const struct kres *res, const char *ns,
        json_object *obj, struct kresp *rs)
{
	const char *bns = mstr(obj, "namespace");
	const char *rv = mstr(obj, "resourceVersion");
	char uid[37], now[32];

	if (res->flags & KRES_NAMESPACED) {
		if (bns != NULL && bns[0] != '\0' && ns != NULL
		        && strcmp(bns, ns) != 0) {
			return (kresp_error(rs, 400, "BadRequest",
			        "the namespace of the provided object does "
			        "not "
			        "match the namespace sent on the request"));
		}
		mset(obj, "namespace", ns);
	} else {
		mset(obj, "namespace", NULL);
	}
	if (rv != NULL && rv[0] != '\0') {
		return (kresp_error(rs, 500, "InternalError",
		        "resourceVersion should not be set on objects to be "
		        "created"));
	}
	if (res->terminating) {
		return (kresp_error(rs, 405, "MethodNotAllowed",
		        "create not allowed while custom resource definition "
		        "is terminating"));
	}
	int code = check_namespace(ks, res, ns, rs);
	if (code == 0) {
		code = choose_name(ks, res, ns, obj, rs);
	}
	ksrv_uid(uid);
	ksrv_now(now);
	mset(obj, "uid", uid);
	mset(obj, "creationTimestamp", now);
	json_object_object_del(meta(obj), "deletionTimestamp");
	json_object_object_del(meta(obj), "deletionGracePeriodSeconds");
	json_object_object_del(meta(obj), "managedFields");
	json_object_object_del(meta(obj), "resourceVersion");
	if (res->flags & KRES_GENERATION) {
		set_int(obj, "metadata.generation", 1);
	} else {
		json_object_object_del(meta(obj), "generation");
	}
	return (code);
}

static int
store_new(struct ksrv *ks, const struct kres *res, const char *ns,
        json_object *obj, const struct kreq *rq, struct kresp *rs)
{
	char *key = ksrv_key(res, ns, mstr(obj, "name"));
	struct kstore_coll *c = ksrv_coll(ks, res);
	struct kitem *it;

	if (kstore_get(c, key) != NULL) {
		char *q = qualified(res);
		int code = kresp_error(rs, 409, "AlreadyExists",
		        "%s \"%s\" already exists", q, mstr(obj, "name"));
		json_object *st
		        = jx_parse(rs->body.data, rs->body.len, 0, NULL, 0);
		kstatus_details(
		        st, mstr(obj, "name"), res->group, res->plural, NULL);
		kresp_status(rs, st);
		free(q);
		free(key);
		json_object_put(obj);
		return (code);
	}
	if (dry_run(rq)) {
		kresp_json(rs, 201, obj);
		free(key);
		json_object_put(obj);
		return (201);
	}
	if (is_crd(res) && crd_install(ks, res, obj, rs) != 0) {
		free(key);
		json_object_put(obj);
		return (422);
	}
	it = kstore_put(ks->st, c, key, obj);
	free(key);
	ksrv_send_item(rs, 201, res, it);
	rs->rv = it->rv;
	return (201);
}

int
kwrite_create(struct ksrv *ks, const struct kres *res, const char *ns,
        json_object *in, const struct kreq *rq, struct kresp *rs)
{
	struct kresp local;
	json_object *obj = copy(in);
	int code;

	if (rs == NULL) {
		kresp_init(&local);
		rs = &local;
	}
	rs->verb = "create";
	code = check_envelope(obj, res, rs);
	if (code == 0) {
		code = create_meta(ks, res, ns, obj, rs);
	}
	if (code == 0) {
		if (res->flags & KRES_STATUS && !is_crd(res)) {
			json_object_object_del(obj, "status");
		}
		builtin_defaults(ks, res, obj);
		code = validate(ks, res, obj, rq, rs);
	}
	if (code == 0 && is_crd(res)) {
		char now[32];
		ksrv_now(now);
		kres_crd_set_status(obj, now);
		finalizer_set(obj, CRD_FINALIZER, true);
	}
	if (code == 0) {
		code = store_new(ks, res, ns, obj, rq, rs);
		obj = NULL;
	}
	json_object_put(obj);
	if (rs == &local) {
		kresp_fini(&local);
	}
	return (code);
}

/* Whether a and b differ outside metadata (and status when skip_status):
 * what bumps metadata.generation (spec C.2). */
static bool
content_differs(json_object *a, json_object *b, bool skip_status)
{
	json_object_object_foreach(a, k, va)
	{
		if (strcmp(k, "metadata") == 0
		        || (skip_status && strcmp(k, "status") == 0)) {
			continue;
		}
		if (!jx_equal(va, json_object_object_get(b, k))) {
			return (true);
		}
	}
	json_object_object_foreach(b, k2, vb)
	{
		if (strcmp(k2, "metadata") == 0
		        || (skip_status && strcmp(k2, "status") == 0)) {
			continue;
		}
		if (json_object_object_get(a, k2) == NULL && vb != NULL) {
			return (true);
		}
	}
	return (false);
}

/* 422 when new adds finalizers to an object being deleted. */
static int
check_new_finalizers(const struct kres *res, json_object *cur,
        json_object *new, struct kresp *rs)
{
	json_object *f = jx_get(new, "metadata.finalizers");
	struct buf added = BUF_INIT;
	struct causes cs = { 0 };

	if (!deleting(cur)) {
		return (0);
	}
	for (size_t i = 0; i < nfinalizers(new); i++) {
		const char *s = json_object_get_string(
		        json_object_array_get_idx(f, i));
		if (s != NULL && !has_finalizer(cur, s)) {
			buf_printf(
			        &added, "%s\"%s\"", added.len ? ", " : "", s);
		}
	}
	if (added.len == 0) {
		buf_fini(&added);
		return (0);
	}
	cause_add(&cs, "metadata.finalizers", "FieldValueForbidden",
	        "Forbidden: no new finalizers can be added if the object is "
	        "being deleted, found new finalizers []string{%s}",
	        buf_str(&added));
	buf_fini(&added);
	return (invalid(rs, res, mstr(cur, "name"), &cs));
}

/* Builds the object to store from the submitted one (taken): status
 * rules, system metadata restored from cur.  Returns it. */
static json_object *
merge_submitted(const struct kres *res, json_object *cur, json_object *sub,
        bool status)
{
	json_object *new;

	if (status) {
		new = copy(cur);
		json_object *st = json_object_object_get(sub, "status");
		if (st != NULL) {
			json_object_object_add(new, "status", copy(st));
		} else {
			json_object_object_del(new, "status");
		}
		json_object_put(sub);
		return (new);
	}
	new = sub;
	if (res->flags & KRES_STATUS && !is_crd(res)) {
		json_object *st = json_object_object_get(cur, "status");
		if (st != NULL) {
			json_object_object_add(new, "status", copy(st));
		} else {
			json_object_object_del(new, "status");
		}
	}
	static const char *const keep[] = { "uid", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds",
		"generation", "namespace", "name", NULL };
	for (size_t i = 0; keep[i] != NULL; i++) {
		mcopy(new, cur, keep[i]);
	}
	json_object_object_del(meta(new), "managedFields");
	return (new);
}

static void
bump_generation(const struct kres *res, json_object *cur, json_object *new)
{
	int64_t gen = 0;

	if (!(res->flags & KRES_GENERATION)) {
		return;
	}
	jx_get_int(cur, "metadata.generation", &gen);
	if (content_differs(cur, new, (res->flags & KRES_STATUS) != 0)) {
		gen++;
	}
	set_int(new, "metadata.generation", gen);
}

/* Removes cur from the store (cur is invalid afterwards) and runs the
 * cleanups that follow a removal.  Returns the deletion's rv. */
static uint64_t
remove_item(struct ksrv *ks, const struct kres *res, struct kitem *cur)
{
	char *key = xstrdup(cur->key);
	char *ns = xstrdup(mstr(cur->obj, "namespace") ?: "");
	char *name = xstrdup(mstr(cur->obj, "name") ?: "");
	uint64_t rv = kstore_delete(ks->st, ksrv_coll(ks, res), key);

	after_remove(ks, res, ns, name);
	free(key);
	free(ns);
	free(name);
	return (rv);
}

/* Removes cur and answers 200 with what was submitted (new, taken). */
static int
finish_deletion(struct ksrv *ks, const struct kres *res, struct kitem *cur,
        json_object *new, struct kresp *rs)
{
	kresp_json(rs, 200, new);
	json_object_put(new);
	rs->rv = remove_item(ks, res, cur);
	return (200);
}

/* The common tail of update and patch: sub (taken) replaces cur. */
static int
commit(struct ksrv *ks, const struct kres *res, struct kitem *cur,
        json_object *sub, bool status, const struct kreq *rq, struct kresp *rs)
{
	json_object *new = merge_submitted(res, cur->obj, sub, status);
	char rv[24];
	int code = check_new_finalizers(res, cur->obj, new, rs);

	if (code == 0) {
		code = validate(ks, res, new, rq, rs);
	}
	if (code != 0) {
		json_object_put(new);
		return (code);
	}
	if (is_crd(res) && !status) {
		char now[32];
		ksrv_now(now);
		kres_crd_set_status(new, now);
	}
	bump_generation(res, cur->obj, new);
	snprintf(rv, sizeof(rv), "%" PRIu64, cur->rv);
	mset(new, "resourceVersion", rv);
	if (jx_equal(new, cur->obj)) {
		json_object_put(new);
		ksrv_send_item(rs, 200, res, cur);
		return (200);
	}
	if (dry_run(rq)) {
		kresp_json(rs, 200, new);
		json_object_put(new);
		return (200);
	}
	if (deleting(new) && nfinalizers(new) == 0) {
		return (finish_deletion(ks, res, cur, new, rs));
	}
	if (is_crd(res) && !status && !deleting(new)
	        && crd_install(ks, res, new, rs) != 0) {
		json_object_put(new);
		return (422);
	}
	struct kitem *it
	        = kstore_put(ks->st, ksrv_coll(ks, res), cur->key, new);
	ksrv_send_item(rs, 200, res, it);
	rs->rv = it->rv;
	return (200);
}

/* Name and namespace of a PUT/PATCH body against the URL. */
static int
check_identity(const struct kres *res, const char *ns, const char *name,
        json_object *obj, struct kresp *rs)
{
	const char *bn = mstr(obj, "name");
	const char *bns = mstr(obj, "namespace");

	if (bn != NULL && strcmp(bn, name) != 0) {
		return (kresp_error(rs, 400, "BadRequest",
		        "the name of the object (%s) does not match the name "
		        "on the URL (%s)",
		        bn, name));
	}
	if (res->flags & KRES_NAMESPACED && bns != NULL && bns[0] != '\0'
	        && strcmp(bns, ns) != 0) {
		return (kresp_error(rs, 400, "BadRequest",
		        "the namespace of the provided object does not match "
		        "the namespace sent on the request"));
	}
	return (0);
}

/* The rv precondition of a submitted object: 0, or an error code. */
static int
check_rv(const struct kres *res, struct kitem *cur, json_object *obj,
        bool required, struct kresp *rs)
{
	const char *rv = mstr(obj, "resourceVersion");
	char want[24];

	snprintf(want, sizeof(want), "%" PRIu64, cur->rv);
	if (rv == NULL || rv[0] == '\0') {
		if (required) {
			struct causes cs = { 0 };
			cause_add(&cs, "metadata.resourceVersion",
			        "FieldValueInvalid",
			        "Invalid value: 0x0: must be specified for an "
			        "update");
			return (invalid(rs, res, mstr(cur->obj, "name"), &cs));
		}
		mset(obj, "resourceVersion", want);
		return (0);
	}
	if (strcmp(rv, want) != 0) {
		return (conflict(rs, res, mstr(cur->obj, "name"),
		        "the object has been modified; please apply your "
		        "changes to the latest version and try again"));
	}
	return (0);
}

int
kwrite_update(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name, json_object *in, bool status, const struct kreq *rq,
        struct kresp *rs)
{
	json_object *obj = copy(in);
	char *key = ksrv_key(res, ns, name);
	struct kitem *cur = kstore_get(ksrv_coll(ks, res), key);
	int code;

	free(key);
	rs->verb = "update";
	code = check_envelope(obj, res, rs);
	if (code == 0) {
		code = check_identity(res, ns, name, obj, rs);
	}
	if (code == 0 && cur == NULL) {
		if (res->flags & KRES_CREATE_ON_UPDATE && !status) {
			mset(obj, "name", name);
			mset(obj, "resourceVersion", NULL);
			code = kwrite_create(ks, res, ns, obj, rq, rs);
			rs->verb = "update";
		} else {
			code = kresp_not_found(rs, res, name);
		}
		json_object_put(obj);
		return (code);
	}
	if (code == 0) {
		code = check_rv(
		        res, cur, obj, !(res->flags & KRES_UNCOND_UPDATE), rs);
	}
	if (code != 0) {
		json_object_put(obj);
		return (code);
	}
	return (commit(ks, res, cur, obj, status, rq, rs));
}

enum ptype { P_JSON, P_MERGE, P_STRATEGIC, P_APPLY, P_BAD };

static enum ptype
patch_type(const char *ctype)
{
	size_t n;

	if (ctype == NULL) {
		return (P_BAD);
	}
	n = strcspn(ctype, "; ");
	if (strncasecmp(ctype, "application/json-patch+json", n) == 0
	        && n == strlen("application/json-patch+json")) {
		return (P_JSON);
	}
	if (strncasecmp(ctype, "application/merge-patch+json", n) == 0
	        && n == strlen("application/merge-patch+json")) {
		return (P_MERGE);
	}
	if (strncasecmp(ctype, "application/strategic-merge-patch+json", n)
	                == 0
	        && n == strlen("application/strategic-merge-patch+json")) {
		return (P_STRATEGIC);
	}
	if (strncasecmp(ctype, "application/apply-patch+yaml", n) == 0
	        && n == strlen("application/apply-patch+yaml")) {
		return (P_APPLY);
	}
	return (P_BAD);
}

/* Patch options: type, force, fieldManager.  0 or an error code. */
static int
patch_options(const struct kres *res, const struct kreq *rq, enum ptype *pt,
        struct kresp *rs)
{
	const char *fm = kreq_q(rq, "fieldManager");

	*pt = patch_type(rq->ctype);
	if (*pt == P_BAD
	        || (*pt == P_STRATEGIC && !(res->flags & KRES_STRATEGIC))) {
		return (kresp_error(rs, 415, "UnsupportedMediaType",
		        "the body of the request was in an unknown format - "
		        "accepted media types include: "
		        "application/json-patch+json, "
		        "application/merge-patch+json, "
		        "application/apply-patch+yaml%s",
		        res->flags & KRES_STRATEGIC
		                ? ", application/strategic-merge-patch+json"
		                : ""));
	}
	if (*pt != P_APPLY && kreq_q(rq, "force") != NULL) {
		return (kresp_error(rs, 422, "Invalid",
		        "PatchOptions.meta.k8s.io \"\" is invalid: force: "
		        "Forbidden: may not be specified for non-apply "
		        "patch"));
	}
	if (*pt == P_APPLY && (fm == NULL || fm[0] == '\0')) {
		return (kresp_error(rs, 422, "Invalid",
		        "PatchOptions.meta.k8s.io \"\" is invalid: "
		        "fieldManager: Required value: is required for apply "
		        "patch"));
	}
	return (0);
}

static json_object *
patch_body(const struct kreq *rq, enum ptype pt, char *err, size_t errlen)
{
	if (pt == P_APPLY) {
		return (yamlj_parse(rq->body, rq->body_len, err, errlen));
	}
	return (jx_parse(rq->body, rq->body_len, 0, err, errlen));
}

static json_object *
apply_patch(json_object *cur, json_object *p, enum ptype pt, char *err,
        size_t errlen)
{
	switch (pt) {
	case P_JSON:
		return (kpatch_json(cur, p, err, errlen));
	case P_STRATEGIC:
		return (kpatch_strategic(cur, p, NULL, err, errlen));
	default:
		return (kpatch_merge(cur, p, err, errlen));
	}
}

int
kwrite_patch(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name, bool status, const struct kreq *rq, struct kresp *rs)
{
	char *key = ksrv_key(res, ns, name);
	struct kitem *cur = kstore_get(ksrv_coll(ks, res), key);
	json_object *p, *obj;
	enum ptype pt;
	char err[256];
	int code;

	free(key);
	rs->verb = "patch";
	code = patch_options(res, rq, &pt, rs);
	if (code != 0) {
		return (code);
	}
	p = patch_body(rq, pt, err, sizeof(err));
	if (p == NULL) {
		return (kresp_error(rs, 400, "BadRequest",
		        "error decoding patch: %s", err));
	}
	if (cur == NULL) {
		code = kresp_not_found(rs, res, name);
		if (pt == P_APPLY && !status
		        && json_object_is_type(p, json_type_object)) {
			mset(p, "name", name);
			code = kwrite_create(ks, res, ns, p, rq, rs);
			rs->verb = "patch";
		}
		json_object_put(p);
		return (code);
	}
	obj = apply_patch(cur->obj, p, pt, err, sizeof(err));
	json_object_put(p);
	if (obj == NULL) {
		return (kresp_error(rs, 422, "Invalid",
		        "the server rejected our request due to an error in "
		        "our "
		        "request: %s",
		        err));
	}
	code = check_envelope(obj, res, rs);
	if (code == 0) {
		code = check_identity(res, ns, name, obj, rs);
	}
	if (code == 0) {
		code = check_rv(res, cur, obj, false, rs);
	}
	if (code != 0) {
		json_object_put(obj);
		return (code);
	}
	return (commit(ks, res, cur, obj, status, rq, rs));
}

/* DeleteOptions, from the body when there is one, else the query. */
struct delopts {
	const char *policy; /* NULL: default */
	bool orphan_set, orphan;
	const char *pre_uid, *pre_rv;
	bool dry;
	json_object *body;
};

static int
delete_options(const struct kreq *rq, struct delopts *o, struct kresp *rs)
{
	char err[256];

	memset(o, 0, sizeof(*o));
	if (rq == NULL) {
		return (0);
	}
	o->dry = dry_run(rq);
	if (rq->body_len == 0) {
		o->policy = kreq_q(rq, "propagationPolicy");
		const char *od = kreq_q(rq, "orphanDependents");
		o->orphan_set = od != NULL;
		o->orphan = kroute_qbool(od);
		return (0);
	}
	o->body = jx_parse(rq->body, rq->body_len, 0, err, sizeof(err));
	if (o->body == NULL
	        || !json_object_is_type(o->body, json_type_object)) {
		return (kresp_error(rs, 400, "BadRequest",
		        "error decoding DeleteOptions: %s",
		        o->body == NULL ? err : "not an object"));
	}
	o->policy = jx_get_str(o->body, "propagationPolicy");
	o->orphan_set
	        = jx_get_bool(o->body, "orphanDependents", &o->orphan) == 0;
	o->pre_uid = jx_get_str(o->body, "preconditions.uid");
	o->pre_rv = jx_get_str(o->body, "preconditions.resourceVersion");
	json_object *dr = json_object_object_get(o->body, "dryRun");
	o->dry = o->dry || (dr != NULL && json_object_array_length(dr) > 0);
	return (0);
}

static int
check_delopts(struct delopts *o, struct kresp *rs)
{
	if (o->orphan_set && o->policy != NULL) {
		return (kresp_error(rs, 422, "Invalid",
		        "DeleteOptions.meta.k8s.io \"\" is invalid: "
		        "propagationPolicy: Invalid value: \"%s\": "
		        "orphanDependents and deletionPropagation cannot be "
		        "both set",
		        o->policy));
	}
	if (o->policy != NULL && strcmp(o->policy, "Orphan") != 0
	        && strcmp(o->policy, "Background") != 0
	        && strcmp(o->policy, "Foreground") != 0) {
		return (kresp_error(rs, 422, "Invalid",
		        "DeleteOptions.meta.k8s.io \"\" is invalid: "
		        "propagationPolicy: Unsupported value: \"%s\": "
		        "supported values: \"Foreground\", \"Background\", "
		        "\"Orphan\", \"nil\"",
		        o->policy));
	}
	if (o->orphan_set) {
		o->policy = o->orphan ? "Orphan" : "Background";
	}
	return (0);
}

static int
check_preconditions(const struct kres *res, struct kitem *cur,
        const struct delopts *o, struct kresp *rs)
{
	const char *uid = mstr(cur->obj, "uid");
	char rv[24], *why;
	int code;

	snprintf(rv, sizeof(rv), "%" PRIu64, cur->rv);
	if (o->pre_uid != NULL && strcmp(o->pre_uid, uid) != 0) {
		why = xasprintf("StorageError: invalid object, Code: 4, Key: "
		                "/registry/%s/%s, ResourceVersion: 0, "
		                "AdditionalErrorMsg: Precondition failed: UID "
		                "in precondition: %s, UID in object meta: %s",
		        res->plural, cur->key, o->pre_uid, uid);
	} else if (o->pre_rv != NULL && strcmp(o->pre_rv, rv) != 0) {
		why = xasprintf("StorageError: invalid object, Code: 4, Key: "
		                "/registry/%s/%s, ResourceVersion: 0, "
		                "AdditionalErrorMsg: Precondition failed: "
		                "ResourceVersion in precondition: %s, "
		                "ResourceVersion in object meta: %s",
		        res->plural, cur->key, o->pre_rv, rv);
	} else {
		return (0);
	}
	code = conflict(rs, res, mstr(cur->obj, "name"), why);
	free(why);
	return (code);
}

/* Removes cur now and answers as the real server does: the object for
 * pods, a Success Status for everything else. */
static int
remove_now(struct ksrv *ks, const struct kres *res, struct kitem *cur,
        struct kresp *rs)
{
	if (is(res, "", "pods")) {
		ksrv_send_item(rs, 200, res, cur);
	} else {
		kresp_status(rs,
		        kstatus_success(mstr(cur->obj, "name"), res->group,
		                res->plural, mstr(cur->obj, "uid")));
	}
	rs->rv = remove_item(ks, res, cur);
	return (200);
}

/* Marks cur deleted (finalizers pending) with finalizers fin (taken). */
static int
mark_deleting(struct ksrv *ks, const struct kres *res, struct kitem *cur,
        json_object *new, struct kresp *rs)
{
	char now[32];
	int64_t gen = 0;
	struct kitem *it;

	ksrv_now(now);
	mset(new, "deletionTimestamp", now);
	set_int(new, "metadata.deletionGracePeriodSeconds", 0);
	if (jx_get_int(new, "metadata.generation", &gen) == 0 && gen > 0) {
		set_int(new, "metadata.generation", gen + 1);
	}
	if (is(res, "", "namespaces")) {
		jx_set_path(new, "status.phase",
		        json_object_new_string("Terminating"));
	}
	it = kstore_put(ks->st, ksrv_coll(ks, res), cur->key, new);
	ksrv_send_item(rs, 200, res, it);
	rs->rv = it->rv;
	return (200);
}

static void ns_purge(struct ksrv *ks, const char *ns);
static void crd_reap(struct ksrv *ks, const char *crd);

static int
delete_item(struct ksrv *ks, const struct kres *res, struct kitem *cur,
        const struct delopts *o, struct kresp *rs)
{
	json_object *new;
	char *name;
	int code;

	if (deleting(cur->obj)) {
		ksrv_send_item(rs, 200, res, cur);
		return (200);
	}
	new = copy(cur->obj);
	if (o->policy != NULL && ks->opts.gc) {
		finalizer_set(new, "foregroundDeletion",
		        strcmp(o->policy, "Foreground") == 0);
		finalizer_set(new, "orphan", strcmp(o->policy, "Orphan") == 0);
	}
	if (o->dry) {
		kresp_json(rs, 200, new);
		json_object_put(new);
		return (200);
	}
	if (nfinalizers(new) == 0 && !is(res, "", "namespaces")
	        && !is_crd(res)) {
		json_object_put(new);
		return (remove_now(ks, res, cur, rs));
	}
	name = xstrdup(mstr(new, "name"));
	code = mark_deleting(ks, res, cur, new, rs);
	if (is(res, "", "namespaces")) {
		ns_purge(ks, name);
	} else if (is_crd(res)) {
		crd_reap(ks, name);
	}
	free(name);
	return (code);
}

int
kwrite_delete(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name, const char *policy, const struct kreq *rq,
        struct kresp *rs)
{
	char *key = ksrv_key(res, ns, name);
	struct kitem *cur = kstore_get(ksrv_coll(ks, res), key);
	struct delopts o;
	int code;

	free(key);
	rs->verb = "delete";
	code = delete_options(rq, &o, rs);
	if (code == 0) {
		code = check_delopts(&o, rs);
	}
	if (code == 0 && policy != NULL) {
		o.policy = policy;
	}
	if (code == 0 && cur == NULL) {
		code = kresp_not_found(rs, res, name);
	}
	if (code == 0) {
		code = check_preconditions(res, cur, &o, rs);
	}
	if (code == 0) {
		code = delete_item(ks, res, cur, &o, rs);
	}
	json_object_put(o.body);
	return (code);
}

int
kwrite_delete_collection(struct ksrv *ks, const struct kres *res,
        const char *ns, const struct kreq *rq, struct kresp *rs)
{
	char *prefix = ns != NULL ? xasprintf("%s/", ns) : NULL;
	const char *ls = kreq_q(rq, "labelSelector");
	char err[256];
	struct ksel *sel = ksel_parse_labels(ls, err, sizeof(err));
	struct kitem **items = NULL;
	size_t n = 0;
	struct buf out = BUF_INIT;

	rs->verb = "deletecollection";
	if (sel == NULL) {
		free(prefix);
		return (kresp_error(rs, 400, "BadRequest", "%s", err));
	}
	kstore_list(ks->st, ksrv_coll(ks, res), prefix, 0, &items, &n);
	buf_printf(&out,
	        "{\"kind\":\"%s\",\"apiVersion\":\"%s\","
	        "\"metadata\":{},\"items\":[",
	        res->list_kind, res->api_version);
	for (size_t i = 0, k = 0; i < n; i++) {
		struct kresp one;
		if (ksel_match_labels(
		            sel, jx_get(items[i]->obj, "metadata.labels"))) {
			kresp_init(&one);
			kwrite_delete(ks, res,
			        mstr(items[i]->obj, "namespace"),
			        mstr(items[i]->obj, "name"), NULL, rq, &one);
			if (one.code == 200) {
				buf_puts(&out, k++ > 0 ? "," : "");
				buf_append(
				        &out, items[i]->json, items[i]->len);
			}
			kresp_fini(&one);
		}
		kitem_unref(items[i]);
	}
	buf_puts(&out, "]}");
	free(items);
	free(prefix);
	ksel_free(sel);
	buf_reset(&rs->body);
	buf_append(&rs->body, out.data, out.len);
	buf_fini(&out);
	rs->code = 200;
	return (200);
}

/* Whether any namespaced object is left in ns. */
static bool
ns_empty(struct ksrv *ks, const char *ns)
{
	char *prefix = xasprintf("%s/", ns);
	const struct kres *r;
	bool empty = true;

	for (size_t i = 0; empty && (r = kres_at(ks->reg, i)) != NULL; i++) {
		struct kitem **items = NULL;
		size_t n = 0;
		if (!(r->flags & KRES_NAMESPACED)) {
			continue;
		}
		kstore_list(ks->st, ksrv_coll(ks, r), prefix, 0, &items, &n);
		empty = n == 0;
		for (size_t j = 0; j < n; j++) {
			kitem_unref(items[j]);
		}
		free(items);
	}
	free(prefix);
	return (empty);
}

/* Removes a terminating namespace once it is empty. */
static void
ns_reap(struct ksrv *ks, const char *ns)
{
	const struct kres *nsr = kres_find(ks->reg, "", "v1", "namespaces");
	struct kitem *it = kstore_get(ksrv_coll(ks, nsr), ns);

	if (it == NULL || !deleting(it->obj) || nfinalizers(it->obj) > 0
	        || !ns_empty(ks, ns)) {
		return;
	}
	remove_item(ks, nsr, it);
}

/* Deletes every object of namespace ns (the namespace controller). */
static void
ns_purge(struct ksrv *ks, const char *ns)
{
	char *prefix = xasprintf("%s/", ns);
	const struct kres *r;
	int was = ks->reaping;

	ks->reaping = 1;
	for (size_t i = 0; (r = kres_at(ks->reg, i)) != NULL; i++) {
		struct kitem **items = NULL;
		size_t n = 0;
		if (!(r->flags & KRES_NAMESPACED)) {
			continue;
		}
		kstore_list(ks->st, ksrv_coll(ks, r), prefix, 0, &items, &n);
		for (size_t j = 0; j < n; j++) {
			struct kresp one;
			kresp_init(&one);
			kwrite_delete(ks, r, ns, mstr(items[j]->obj, "name"),
			        "Background", NULL, &one);
			kresp_fini(&one);
			kitem_unref(items[j]);
		}
		free(items);
	}
	ks->reaping = was;
	free(prefix);
	ns_reap(ks, ns);
}

/* The CRD cleanup: deletes its custom resources, then (when none is
 * left) removes the cleanup finalizer, which removes the CRD. */
static void
crd_reap(struct ksrv *ks, const char *crd)
{
	const struct kres *crdr = kres_find(ks->reg, "apiextensions.k8s.io",
	        "v1", "customresourcedefinitions");
	struct kitem *it = kstore_get(ksrv_coll(ks, crdr), crd);
	const char *group, *plural;
	struct kitem **items = NULL;
	size_t n = 0;
	int was = ks->reaping;

	if (it == NULL || !deleting(it->obj)) {
		return;
	}
	kres_crd_terminating(ks->reg, crd);
	group = jx_get_str(it->obj, "spec.group");
	plural = jx_get_str(it->obj, "spec.names.plural");
	char *coll = xasprintf("%s/%s", group ?: "", plural ?: "");
	const struct kres *r = NULL;
	for (size_t i = 0; (r = kres_at(ks->reg, i)) != NULL; i++) {
		if (strcmp(r->coll, coll) == 0) {
			break;
		}
	}
	free(coll);
	if (r != NULL) {
		ks->reaping = 1;
		kstore_list(ks->st, ksrv_coll(ks, r), NULL, 0, &items, &n);
		for (size_t j = 0; j < n; j++) {
			struct kresp one;
			kresp_init(&one);
			kwrite_delete(ks, r, mstr(items[j]->obj, "namespace"),
			        mstr(items[j]->obj, "name"), "Background",
			        NULL, &one);
			kresp_fini(&one);
			kitem_unref(items[j]);
		}
		free(items);
		ks->reaping = was;
		if (kstore_coll_count(ksrv_coll(ks, r)) > 0) {
			return;
		}
	}
	it = kstore_get(ksrv_coll(ks, crdr), crd);
	if (it != NULL && has_finalizer(it->obj, CRD_FINALIZER)) {
		json_object *new = copy(it->obj);
		struct kresp one;
		finalizer_set(new, CRD_FINALIZER, false);
		kresp_init(&one);
		commit(ks, crdr, it, new, false, NULL, &one);
		kresp_fini(&one);
	} else if (it != NULL && nfinalizers(it->obj) == 0) {
		remove_item(ks, crdr, it);
	}
}

static void
after_remove(struct ksrv *ks, const struct kres *res, const char *ns,
        const char *name)
{
	if (is(res, "", "pods")) {
		ksrv_log_set(ks, ns, name, NULL, NULL);
	}
	if (is_crd(res)) {
		kres_crd_remove(ks->reg, name);
	}
	if (ks->reaping) {
		return;
	}
	if (res->flags & KRES_NAMESPACED && ns != NULL && ns[0] != '\0') {
		ns_reap(ks, ns);
	}
	if (res->terminating && res->crd != NULL) {
		crd_reap(ks, res->crd);
	}
}
