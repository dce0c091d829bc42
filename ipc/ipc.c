/*
 * ipc.c: the ipc wire protocol's codec (ipc.h): the 16-byte header, the
 * JSON body, the per-type shape checks and the typed body builders and
 * readers.  Pure: no I/O, no nng.  Each reader and ipc_validate() share one
 * parse function per type, so what decodes is exactly what reads.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"

static const char *const type_names[] = { NULL, "HELLO", "READY", "WORK",
	"RESULT", "VIEW_REQ", "VIEW_REPLY", "HEARTBEAT", "QUIT", "ERROR" };
#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

static const char *const verdict_names[]
        = { "done", "requeue", "requeue_after", "error", "terminal", NULL };
static const char *const op_names[] = { "create", "update", "update_status",
	"patch", "apply", "delete", "event", NULL };
static const char *const patch_names[]
        = { "", "merge", "json", "strategic", NULL };
static const char *const tol_names[]
        = { "AlreadyExists", "NotFound", "Conflict", NULL };
static const char *const what_names[]
        = { "get", "list", "secret_meta", "pod_log", "zoneinfo", NULL };
static const char *const status_names[] = { "ok", "not_found", "error", NULL };

/* Field flags. */
#define F_OPT      0x1u /* may be absent (or null) */
#define F_NONEMPTY 0x2u /* string must not be empty */

/* Where a check stands, for its error message. */
struct chk {
	char *err;
	size_t errlen;
	char where[96];
};

static int bad(struct chk *c, const char *key, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int
bad(struct chk *c, const char *key, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (key != NULL) {
		errmsg(c->err, c->errlen, "%s: \"%s\" %s", c->where, key,
		        what);
	} else {
		errmsg(c->err, c->errlen, "%s: %s", c->where, what);
	}
	return (-1);
}

/* The value under key in *v: 1 when present, 0 when absent or JSON null
 * (null counts as absent everywhere). */
static int
lookup(json_object *o, const char *key, json_object **v)
{
	*v = NULL;
	return (json_object_object_get_ex(o, key, v) && *v != NULL);
}

static int
absent(struct chk *c, const char *key, unsigned flags)
{
	if (flags & F_OPT) {
		return (0);
	}
	return (bad(c, key, "is missing"));
}

static int
field_str(struct chk *c, json_object *o, const char *key, unsigned flags,
        size_t max, const char **out)
{
	json_object *v;
	size_t n;

	*out = NULL;
	if (!lookup(o, key, &v)) {
		return (absent(c, key, flags));
	}
	if (!json_object_is_type(v, json_type_string)) {
		return (bad(c, key, "must be a string"));
	}
	n = (size_t)json_object_get_string_len(v);
	if (n == 0 && (flags & F_NONEMPTY)) {
		return (bad(c, key, "is empty"));
	}
	if (max > 0 && n > max) {
		return (bad(c, key, "is too long (%zu > %zu bytes)", n, max));
	}
	if (max > 0 && strlen(json_object_get_string(v)) != n) {
		return (bad(c, key, "contains a NUL byte"));
	}
	*out = json_object_get_string(v);
	return (0);
}

/* An integer >= min; *out is left alone when optional and absent. */
static int
field_int(struct chk *c, json_object *o, const char *key, unsigned flags,
        int64_t min, int64_t *out)
{
	json_object *v;
	int64_t x;

	if (!lookup(o, key, &v)) {
		return (absent(c, key, flags));
	}
	if (!json_object_is_type(v, json_type_int)
	        || jx_get_int(o, key, &x) != 0) {
		return (bad(c, key, "must be an integer"));
	}
	if (x < min) {
		return (bad(c, key, "must be >= %lld", (long long)min));
	}
	*out = x;
	return (0);
}

static int
field_bool(struct chk *c, json_object *o, const char *key, unsigned flags,
        bool *out)
{
	json_object *v;

	if (!lookup(o, key, &v)) {
		return (absent(c, key, flags));
	}
	if (!json_object_is_type(v, json_type_boolean)) {
		return (bad(c, key, "must be a boolean"));
	}
	*out = json_object_get_boolean(v);
	return (0);
}

static int
lookup_name(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i] != NULL; i++) {
		if (names[i][0] != '\0' && strcmp(names[i], s) == 0) {
			return (i);
		}
	}
	return (-1);
}

/* A string among names; *out is its index, or -1 when optional and absent.
 */
static int
field_enum(struct chk *c, json_object *o, const char *key, unsigned flags,
        const char *const *names, int *out)
{
	const char *s;

	*out = -1;
	if (field_str(c, o, key, flags, IPC_NAME_MAX, &s) != 0) {
		return (-1);
	}
	if (s != NULL && (*out = lookup_name(names, s)) < 0) {
		return (bad(c, key, "has an unknown value \"%.64s\"", s));
	}
	return (0);
}

/* A value of the given json type (object or array); NULL when optional and
 * absent. */
static int
field_typed(struct chk *c, json_object *o, const char *key, unsigned flags,
        json_type t, json_object **out)
{
	json_object *v;

	*out = NULL;
	if (!lookup(o, key, &v)) {
		return (absent(c, key, flags));
	}
	if (!json_object_is_type(v, t)) {
		return (bad(c, key, "must be %s",
		        t == json_type_object ? "an object" : "an array"));
	}
	*out = v;
	return (0);
}

/* Every element of a VIEW_REPLY's items is an object, or every one an
 * array (the rows of a projected list). */
static int
all_items(struct chk *c, json_object *arr)
{
	size_t n = json_object_array_length(arr);
	json_type t = n > 0
	        ? json_object_get_type(json_object_array_get_idx(arr, 0))
	        : json_type_object;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(e, t)
		        || (t != json_type_object && t != json_type_array)) {
			return (bad(c, NULL,
			        "items[%zu] must be an object, or all arrays",
			        i));
		}
	}
	return (0);
}

/* Every element of arr is an object. */
static int
all_objects(struct chk *c, const char *key, json_object *arr)
{
	size_t i, n = json_object_array_length(arr);

	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_object)) {
			return (bad(
			        c, NULL, "%s[%zu] must be an object", key, i));
		}
	}
	return (0);
}

static void
chk_init(struct chk *c, const char *where, char *err, size_t errlen)
{
	c->err = err;
	c->errlen = errlen;
	snprintf(c->where, sizeof(c->where), "%s", where);
}

/* ---- per-type parsers ---- */

static int
parse_hello(struct chk *c, json_object *b, struct ipc_hello *h)
{
	if (field_str(c, b, "controller", F_NONEMPTY, IPC_NAME_MAX,
	            &h->controller)
	        || field_int(c, b, "pid", 0, 1, &h->pid)
	        || field_int(c, b, "proto", 0, 0, &h->proto)) {
		return (-1);
	}
	if (h->proto != IPC_VERSION) {
		return (bad(c, "proto", "is %lld, want %d",
		        (long long)h->proto, IPC_VERSION));
	}
	return (0);
}

static int
parse_work(struct chk *c, json_object *b, struct ipc_work *w)
{
	if (field_str(c, b, "key", F_NONEMPTY, IPC_KEY_MAX, &w->key)
	        || field_int(c, b, "epoch", 0, 0, &w->epoch)
	        || field_int(c, b, "attempt", 0, 0, &w->attempt)
	        || field_int(c, b, "now", 0, 0, &w->now_ms)
	        || field_int(c, b, "deadlineMs", 0, 0, &w->deadline_ms)
	        || field_typed(
	                c, b, "object", F_OPT, json_type_object, &w->object)
	        || field_typed(
	                c, b, "children", F_OPT, json_type_array, &w->children)
	        || field_bool(c, b, "childrenStale", F_OPT, &w->children_stale)
	        || field_str(c, b, "reconcileID", F_OPT, IPC_RID_LEN,
	                &w->reconcile_id)) {
		return (-1);
	}
	if (w->children != NULL) {
		return (all_objects(c, "children", w->children));
	}
	return (0);
}

static int
parse_res(struct chk *c, json_object *r, struct ipc_res *res)
{
	return (field_str(c, r, "group", 0, IPC_NAME_MAX, &res->group)
	        || field_str(c, r, "version", F_NONEMPTY, IPC_NAME_MAX,
	                &res->version)
	        || field_str(
	                c, r, "plural", F_NONEMPTY, IPC_NAME_MAX, &res->plural)
	        || field_bool(c, r, "namespaced", 0, &res->namespaced));
}

/* The object-valued "resource" of o, parsed with where + ".resource". */
static int
field_res(struct chk *c, json_object *o, unsigned flags, struct ipc_res *res,
        bool *has)
{
	json_object *r;
	struct chk sub = *c;

	memset(res, 0, sizeof(*res));
	*has = false;
	if (field_typed(c, o, "resource", flags, json_type_object, &r) != 0) {
		return (-1);
	}
	if (r == NULL) {
		return (0);
	}
	snprintf(sub.where, sizeof(sub.where), "%.80s.resource", c->where);
	*has = true;
	return (parse_res(&sub, r, res));
}

static int
parse_tolerate(struct chk *c, json_object *w, unsigned *tol)
{
	json_object *arr;
	size_t i, n;

	*tol = 0;
	if (field_typed(c, w, "tolerate", F_OPT, json_type_array, &arr) != 0) {
		return (-1);
	}
	if (arr == NULL) {
		return (0);
	}
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		int k = -1;

		if (json_object_is_type(e, json_type_string)) {
			k = lookup_name(tol_names, json_object_get_string(e));
		}
		if (k < 0) {
			return (bad(c, NULL,
			        "tolerate[%zu] is not one of "
			        "AlreadyExists, NotFound, Conflict",
			        i));
		}
		*tol |= 1u << k;
	}
	return (0);
}

static bool
op_has_object(enum ipc_op op)
{
	return (op != IPC_OP_PATCH && op != IPC_OP_DELETE);
}

static int
parse_write_body(struct chk *c, json_object *w, struct ipc_write *out)
{
	unsigned nameflags = F_NONEMPTY;
	bool has;
	int pt;

	if (out->op == IPC_OP_CREATE || out->op == IPC_OP_EVENT) {
		nameflags |= F_OPT;
	}
	if (field_res(c, w, 0, &out->res, &has)
	        || field_str(c, w, "namespace", F_OPT, IPC_NAME_MAX,
	                &out->namespace)
	        || field_str(c, w, "name", nameflags, IPC_NAME_MAX, &out->name)
	        || field_str(c, w, "propagation", F_OPT, IPC_NAME_MAX,
	                &out->propagation)
	        || parse_tolerate(c, w, &out->tolerate)) {
		return (-1);
	}
	if (op_has_object(out->op)) {
		return (field_typed(
		        c, w, "object", 0, json_type_object, &out->object));
	}
	if (out->op != IPC_OP_PATCH) {
		return (0);
	}
	if (field_enum(c, w, "patchType", 0, patch_names, &pt) != 0) {
		return (-1);
	}
	out->patch_type = (enum ipc_patch_type)pt;
	out->patch = jx_get(w, "patch");
	if (!json_object_is_type(out->patch, json_type_object)
	        && !json_object_is_type(out->patch, json_type_array)) {
		return (bad(c, "patch",
		        out->patch == NULL ? "is missing"
		                           : "must be an object or an array"));
	}
	return (0);
}

static int
parse_write(struct chk *c, json_object *w, struct ipc_write *out)
{
	int op;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(w, json_type_object)) {
		return (bad(c, NULL, "is not an object"));
	}
	if (field_enum(c, w, "op", 0, op_names, &op) != 0) {
		return (-1);
	}
	out->op = (enum ipc_op)op;
	if (parse_write_body(c, w, out) != 0) {
		return (-1);
	}
	if (out->namespace == NULL) {
		out->namespace = "";
	}
	if (out->name == NULL) {
		out->name = "";
	}
	return (0);
}

static int
parse_verdict(struct chk *c, json_object *b, struct ipc_result *r)
{
	json_object *v;
	struct chk sub = *c;
	int kind = -1;

	if (field_typed(c, b, "verdict", 0, json_type_object, &v) != 0) {
		return (-1);
	}
	snprintf(sub.where, sizeof(sub.where), "%.80s.verdict", c->where);
	r->after_ms = 0;
	if (field_enum(&sub, v, "kind", 0, verdict_names, &kind)
	        || field_int(&sub, v, "afterMs",
	                kind == IPC_V_REQUEUE_AFTER ? 0 : F_OPT, 0,
	                &r->after_ms)
	        || field_str(&sub, v, "message", F_OPT, IPC_TEXT_MAX,
	                &r->message)) {
		return (-1);
	}
	r->verdict = (enum ipc_verdict)kind;
	if (r->message == NULL) {
		r->message = "";
	}
	return (0);
}

/* The writes of a RESULT, each decoded into ops[i] when ops is not NULL
 * (r->nwrites entries, allocated here). */
static int
parse_writes(struct chk *c, json_object *b, struct ipc_result *r,
        struct ipc_write **ops)
{
	struct ipc_write w;
	struct chk sub = *c;
	size_t i;

	if (field_typed(c, b, "writes", F_OPT, json_type_array, &r->writes)
	        != 0) {
		return (-1);
	}
	r->nwrites = r->writes ? json_object_array_length(r->writes) : 0;
	if (r->nwrites > IPC_WRITES_MAX) {
		return (bad(c, "writes", "has too many entries (%zu > %d)",
		        r->nwrites, IPC_WRITES_MAX));
	}
	if (ops != NULL && r->nwrites > 0) {
		*ops = xcalloc(r->nwrites, sizeof(**ops));
	}
	for (i = 0; i < r->nwrites; i++) {
		snprintf(sub.where, sizeof(sub.where), "%.60s writes[%zu]",
		        c->where, i);
		if (parse_write(&sub, json_object_array_get_idx(r->writes, i),
		            ops != NULL ? &(*ops)[i] : &w)
		        != 0) {
			return (-1);
		}
	}
	return (0);
}

static int
parse_result(struct chk *c, json_object *b, struct ipc_result *r,
        struct ipc_write **ops)
{
	memset(r, 0, sizeof(*r));
	return (field_str(c, b, "key", F_NONEMPTY, IPC_KEY_MAX, &r->key)
	        || field_int(c, b, "epoch", 0, 0, &r->epoch)
	        || parse_verdict(c, b, r) || parse_writes(c, b, r, ops)
	        || field_typed(c, b, "telemetry", F_OPT, json_type_object,
	                &r->telemetry)
	        || field_typed(c, b, "memoryStore", F_OPT, json_type_object,
	                &r->memory_store));
}

/* A list's "fields": 1..IPC_FIELDS_MAX valid paths. */
static int
field_fields(struct chk *c, json_object *b, struct ipc_view_req *q)
{
	json_object *a;
	size_t n;

	if (field_typed(c, b, "fields", F_OPT, json_type_array, &a) != 0) {
		return (-1);
	}
	if (a == NULL) {
		return (0);
	}
	n = json_object_array_length(a);
	if (q->what != IPC_VIEW_LIST) {
		return (bad(c, "fields", "is only for a list"));
	}
	if (n == 0 || n > IPC_FIELDS_MAX) {
		return (bad(
		        c, "fields", "must hold 1..%d paths", IPC_FIELDS_MAX));
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *p = json_object_get_string(e);
		if (!json_object_is_type(e, json_type_string)
		        || (size_t)json_object_get_string_len(e) != strlen(p)
		        || !ipc_field_valid(p)) {
			return (bad(c, NULL, "fields[%zu] is not a valid path",
			        i));
		}
		q->fields[q->nfields++] = p;
	}
	return (0);
}

static int
parse_view_req(struct chk *c, json_object *b, struct ipc_view_req *q)
{
	unsigned resflags = F_OPT, nameflags = F_OPT | F_NONEMPTY;
	int what;

	memset(q, 0, sizeof(*q));
	q->tail_lines = -1;
	if (field_int(c, b, "id", 0, 0, &q->id)
	        || field_enum(c, b, "what", 0, what_names, &what)) {
		return (-1);
	}
	q->what = (enum ipc_view_what)what;
	if (q->what == IPC_VIEW_GET || q->what == IPC_VIEW_LIST) {
		resflags = 0;
	}
	if (q->what != IPC_VIEW_LIST) {
		nameflags = F_NONEMPTY;
	}
	return (field_res(c, b, resflags, &q->res, &q->has_res)
	        || field_str(
	                c, b, "namespace", F_OPT, IPC_NAME_MAX, &q->namespace)
	        || field_str(c, b, "name", nameflags, IPC_NAME_MAX, &q->name)
	        || field_str(c, b, "labelSelector", F_OPT, IPC_TEXT_MAX,
	                &q->label_selector)
	        || field_int(c, b, "tailLines", F_OPT, 0, &q->tail_lines)
	        || field_str(
	                c, b, "container", F_OPT, IPC_NAME_MAX, &q->container)
	        || field_fields(c, b, q));
}

/* The length of base64 text holding at most IPC_DATA_MAX bytes. */
#define DATA_B64_MAX (4 * ((IPC_DATA_MAX + 2) / 3))

static int b64_val(unsigned char ch);
static bool b64_valid(const char *s, size_t n);

static int
field_data(struct chk *c, json_object *o, const char **out)
{
	size_t n;

	if (field_str(c, o, "data", F_OPT, DATA_B64_MAX, out) != 0) {
		return (-1);
	}
	if (*out == NULL) {
		return (0);
	}
	n = strlen(*out);
	if (!b64_valid(*out, n)) {
		*out = NULL;
		return (bad(c, "data", "is not valid base64"));
	}
	if (n / 4 * 3 - (n > 0 && (*out)[n - 1] == '=')
	                - (n > 1 && (*out)[n - 2] == '=')
	        > IPC_DATA_MAX) {
		*out = NULL;
		return (bad(c, "data", "is too large (over %u bytes)",
		        IPC_DATA_MAX));
	}
	return (0);
}

static int
parse_view_reply(struct chk *c, json_object *b, struct ipc_view_reply *r)
{
	int st;

	memset(r, 0, sizeof(*r));
	if (field_int(c, b, "id", 0, 0, &r->id)
	        || field_enum(c, b, "status", 0, status_names, &st)
	        || field_typed(
	                c, b, "object", F_OPT, json_type_object, &r->object)
	        || field_typed(
	                c, b, "items", F_OPT, json_type_array, &r->items)
	        || field_str(c, b, "text", F_OPT, 0, &r->text)
	        || field_data(c, b, &r->data)
	        || field_str(
	                c, b, "message", F_OPT, IPC_TEXT_MAX, &r->message)) {
		return (-1);
	}
	r->status = (enum ipc_view_status)st;
	return (r->items != NULL ? all_items(c, r->items) : 0);
}

static int
parse_simple(struct chk *c, enum ipc_type type, json_object *b)
{
	int64_t n;
	const char *s;

	switch (type) {
	case IPC_READY:
		return (field_int(c, b, "epoch", 0, 0, &n));
	case IPC_HEARTBEAT:
		return (field_int(c, b, "seq", 0, 0, &n));
	case IPC_ERROR:
		return (field_str(c, b, "message", 0, IPC_TEXT_MAX, &s));
	case IPC_QUIT:
		return (0);
	default:
		return (bad(c, NULL, "unknown message type"));
	}
}

int
ipc_validate(enum ipc_type type, json_object *body, char *err, size_t errlen)
{
	union {
		struct ipc_hello h;
		struct ipc_work w;
		struct ipc_result r;
		struct ipc_view_req q;
		struct ipc_view_reply p;
	} u;
	struct chk c;

	chk_init(&c, ipc_type_name(type), err, errlen);
	if (!json_object_is_type(body, json_type_object)) {
		return (bad(&c, NULL, "body is not a JSON object"));
	}
	switch (type) {
	case IPC_HELLO:
		return (parse_hello(&c, body, &u.h));
	case IPC_WORK:
		return (parse_work(&c, body, &u.w));
	case IPC_RESULT:
		return (parse_result(&c, body, &u.r, NULL));
	case IPC_VIEW_REQ:
		return (parse_view_req(&c, body, &u.q));
	case IPC_VIEW_REPLY:
		return (parse_view_reply(&c, body, &u.p));
	default:
		return (parse_simple(&c, type, body));
	}
}

/* ---- names ---- */

const char *
ipc_type_name(enum ipc_type type)
{
	if ((unsigned)type == 0 || (unsigned)type >= NTYPES) {
		return ("UNKNOWN");
	}
	return (type_names[type]);
}

static const char *
name_at(const char *const *names, size_t n, int i)
{
	return (i >= 0 && (size_t)i < n && names[i] != NULL ? names[i] : "");
}

const char *
ipc_verdict_name(enum ipc_verdict v)
{
	return (name_at(verdict_names, 5, (int)v));
}

const char *
ipc_op_name(enum ipc_op op)
{
	return (name_at(op_names, 7, (int)op));
}

const char *
ipc_patch_type_name(enum ipc_patch_type pt)
{
	return (name_at(patch_names, 4, (int)pt));
}

/* ---- header ---- */

static void
put_be(uint8_t *p, uint32_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		p[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
}

static uint32_t
get_be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < n; i++) {
		v = (v << 8) | p[i];
	}
	return (v);
}

static bool
type_known(uint32_t t)
{
	return (t >= IPC_HELLO && t <= IPC_ERROR);
}

int
ipc_encode(
        enum ipc_type type, uint32_t reqid, json_object *body, struct buf *out)
{
	const char *s = "{}";
	uint8_t hdr[IPC_HDR_LEN];
	size_t n;

	if (!type_known((uint32_t)type)) {
		return (-1);
	}
	if (body != NULL) {
		if (!json_object_is_type(body, json_type_object)) {
			return (-1);
		}
		s = json_object_to_json_string_ext(body,
		        JSON_C_TO_STRING_PLAIN
		                | JSON_C_TO_STRING_NOSLASHESCAPE);
	}
	n = strlen(s);
	if (n > UINT32_MAX - IPC_HDR_LEN) {
		return (-1);
	}
	put_be(hdr, IPC_MAGIC, 4);
	put_be(hdr + 4, IPC_VERSION, 2);
	put_be(hdr + 6, (uint32_t)type, 2);
	put_be(hdr + 8, reqid, 4);
	put_be(hdr + 12, (uint32_t)n, 4);
	buf_append(out, hdr, sizeof(hdr));
	buf_append(out, s, n);
	return (0);
}

static int
check_header(
        const uint8_t *p, size_t len, size_t max_len, char *err, size_t errlen)
{
	uint32_t v, blen;

	if (len > max_len) {
		errmsg(err, errlen, "message too large (%zu > %zu bytes)", len,
		        max_len);
		return (-1);
	}
	if (len < IPC_HDR_LEN) {
		errmsg(err, errlen, "truncated header (%zu of %d bytes)", len,
		        IPC_HDR_LEN);
		return (-1);
	}
	if ((v = get_be(p, 4)) != IPC_MAGIC) {
		errmsg(err, errlen, "bad magic 0x%08x", v);
		return (-1);
	}
	if ((v = get_be(p + 4, 2)) != IPC_VERSION) {
		errmsg(err, errlen,
		        "unsupported protocol version %u (want %d)", v,
		        IPC_VERSION);
		return (-1);
	}
	if (!type_known(v = get_be(p + 6, 2))) {
		errmsg(err, errlen, "unknown message type %u", v);
		return (-1);
	}
	blen = get_be(p + 12, 4);
	if ((uint64_t)blen + IPC_HDR_LEN > max_len) {
		errmsg(err, errlen,
		        "message too large (body %u bytes, limit %zu)", blen,
		        max_len);
		return (-1);
	}
	if (len - IPC_HDR_LEN != blen) {
		errmsg(err, errlen, "%s (%zu body bytes, header says %u)",
		        len - IPC_HDR_LEN < blen ? "truncated body"
		                                 : "length mismatch",
		        len - IPC_HDR_LEN, blen);
		return (-1);
	}
	return (0);
}

int
ipc_decode(const void *data, size_t len, size_t max_len, struct ipc_msg *out,
        char *err, size_t errlen)
{
	const uint8_t *p = data;
	char jerr[160];
	json_object *body;
	enum ipc_type type;

	memset(out, 0, sizeof(*out));
	if (max_len == 0) {
		max_len = IPC_MAX_LEN;
	}
	if (check_header(p, len, max_len, err, errlen) != 0) {
		return (-1);
	}
	type = (enum ipc_type)get_be(p + 6, 2);
	body = jx_parse((const char *)p + IPC_HDR_LEN, len - IPC_HDR_LEN,
	        IPC_MAX_DEPTH, jerr, sizeof(jerr));
	if (body == NULL) {
		errmsg(err, errlen, "%s: body is not valid JSON: %s",
		        ipc_type_name(type), jerr);
		return (-1);
	}
	if (ipc_validate(type, body, err, errlen) != 0) {
		json_object_put(body);
		return (-1);
	}
	out->type = type;
	out->reqid = get_be(p + 8, 4);
	out->body = body;
	return (0);
}

void
ipc_msg_fini(struct ipc_msg *msg)
{
	if (msg == NULL) {
		return;
	}
	json_object_put(msg->body);
	memset(msg, 0, sizeof(*msg));
}

/* ---- builders and readers ---- */

static void
add_str(json_object *o, const char *key, const char *s)
{
	if (s != NULL) {
		json_object_object_add(o, key, json_object_new_string(s));
	}
}

static void
add_int(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* A reader's checks: m has the type and its body the shape. */
static bool
is_type(const struct ipc_msg *m, enum ipc_type t)
{
	return (m != NULL && m->type == t && m->body != NULL);
}

json_object *
ipc_hello_new(const char *controller, pid_t pid)
{
	json_object *o = json_object_new_object();

	add_str(o, "controller", controller);
	add_int(o, "pid", pid);
	add_int(o, "proto", IPC_VERSION);
	return (o);
}

int
ipc_hello_read(const struct ipc_msg *m, struct ipc_hello *out)
{
	struct chk c;

	chk_init(&c, "HELLO", NULL, 0);
	if (!is_type(m, IPC_HELLO)) {
		return (-1);
	}
	return (parse_hello(&c, m->body, out));
}

json_object *
ipc_ready_new(int64_t epoch, json_object *config)
{
	json_object *o = json_object_new_object();

	if (json_object_is_type(config, json_type_object)) {
		json_object_object_foreach(config, k, v)
		{
			json_object_object_add(o, k, json_object_get(v));
		}
	}
	json_object_put(config);
	add_int(o, "epoch", epoch);
	return (o);
}

static int
read_int(const struct ipc_msg *m, enum ipc_type t, const char *key,
        int64_t *out)
{
	struct chk c;

	chk_init(&c, ipc_type_name(t), NULL, 0);
	if (!is_type(m, t)) {
		return (-1);
	}
	return (field_int(&c, m->body, key, 0, 0, out));
}

int
ipc_ready_read(const struct ipc_msg *m, int64_t *epoch)
{
	return (read_int(m, IPC_READY, "epoch", epoch));
}

json_object *
ipc_heartbeat_new(int64_t seq)
{
	json_object *o = json_object_new_object();

	add_int(o, "seq", seq);
	return (o);
}

int
ipc_heartbeat_read(const struct ipc_msg *m, int64_t *seq)
{
	return (read_int(m, IPC_HEARTBEAT, "seq", seq));
}

json_object *
ipc_quit_new(void)
{
	return (json_object_new_object());
}

json_object *
ipc_error_new(const char *message)
{
	json_object *o = json_object_new_object();

	add_str(o, "message", message != NULL ? message : "");
	return (o);
}

const char *
ipc_error_read(const struct ipc_msg *m)
{
	if (!is_type(m, IPC_ERROR)) {
		return (NULL);
	}
	return (jx_get_str(m->body, "message"));
}

json_object *
ipc_work_new(const struct ipc_work *w)
{
	json_object *o = json_object_new_object();

	add_str(o, "key", w->key);
	add_int(o, "epoch", w->epoch);
	add_int(o, "attempt", w->attempt);
	add_int(o, "now", w->now_ms);
	json_object_object_add(o, "object", w->object);
	json_object_object_add(o, "children",
	        w->children != NULL ? w->children : json_object_new_array());
	add_int(o, "deadlineMs", w->deadline_ms);
	if (w->children_stale) {
		json_object_object_add(
		        o, "childrenStale", json_object_new_boolean(true));
	}
	if (w->reconcile_id != NULL) {
		add_str(o, "reconcileID", w->reconcile_id);
	}
	return (o);
}

int
ipc_work_read(const struct ipc_msg *m, struct ipc_work *out)
{
	struct chk c;

	memset(out, 0, sizeof(*out));
	chk_init(&c, "WORK", NULL, 0);
	if (!is_type(m, IPC_WORK) || parse_work(&c, m->body, out) != 0) {
		memset(out, 0, sizeof(*out));
		return (-1);
	}
	if (out->children == NULL) {
		/* Absent: give the reader an empty array owned by the body. */
		out->children = json_object_new_array();
		json_object_object_add(m->body, "children", out->children);
	}
	return (0);
}

json_object *
ipc_result_new(const char *key, int64_t epoch, enum ipc_verdict verdict,
        int64_t after_ms, const char *message)
{
	json_object *o = json_object_new_object();
	json_object *v = json_object_new_object();

	add_str(o, "key", key);
	add_int(o, "epoch", epoch);
	add_str(v, "kind", ipc_verdict_name(verdict));
	if (after_ms > 0 || verdict == IPC_V_REQUEUE_AFTER) {
		add_int(v, "afterMs", after_ms);
	}
	add_str(v, "message", message);
	json_object_object_add(o, "verdict", v);
	json_object_object_add(o, "writes", json_object_new_array());
	return (o);
}

void
ipc_result_add_write(json_object *result, json_object *write)
{
	json_object *arr = jx_get(result, "writes");

	if (!json_object_is_type(arr, json_type_array)) {
		arr = json_object_new_array();
		json_object_object_add(result, "writes", arr);
	}
	json_object_array_add(arr, write);
}

int
ipc_result_read(const struct ipc_msg *m, struct ipc_result *out)
{
	return (ipc_result_decode(m, out, NULL));
}

int
ipc_result_decode(const struct ipc_msg *m, struct ipc_result *out,
        struct ipc_write **ops)
{
	struct chk c;

	if (ops != NULL) {
		*ops = NULL;
	}
	chk_init(&c, "RESULT", NULL, 0);
	if (!is_type(m, IPC_RESULT)
	        || parse_result(&c, m->body, out, ops) != 0) {
		memset(out, 0, sizeof(*out));
		if (ops != NULL) {
			free(*ops);
			*ops = NULL;
		}
		return (-1);
	}
	if (out->writes == NULL) {
		out->writes = json_object_new_array();
		json_object_object_add(m->body, "writes", out->writes);
	}
	return (0);
}

static json_object *
res_new(const struct ipc_res *res)
{
	json_object *r = json_object_new_object();

	add_str(r, "group", res->group != NULL ? res->group : "");
	add_str(r, "version", res->version);
	add_str(r, "plural", res->plural);
	json_object_object_add(
	        r, "namespaced", json_object_new_boolean(res->namespaced));
	return (r);
}

static json_object *
write_head(enum ipc_op op, const struct ipc_res *res, const char *ns,
        const char *name)
{
	json_object *w = json_object_new_object();

	add_str(w, "op", ipc_op_name(op));
	json_object_object_add(w, "resource", res_new(res));
	add_str(w, "namespace", ns);
	add_str(w, "name", name);
	return (w);
}

json_object *
ipc_write_new(enum ipc_op op, const struct ipc_res *res, const char *ns,
        const char *name, json_object *object)
{
	json_object *w = write_head(op, res, ns, name);

	if (object != NULL) {
		json_object_object_add(w, "object", object);
	}
	return (w);
}

json_object *
ipc_write_patch_new(const struct ipc_res *res, const char *ns,
        const char *name, json_object *patch, enum ipc_patch_type pt)
{
	json_object *w = write_head(IPC_OP_PATCH, res, ns, name);

	json_object_object_add(w, "patch", patch);
	add_str(w, "patchType", ipc_patch_type_name(pt));
	return (w);
}

void
ipc_write_set_tolerate(json_object *write, unsigned tolerate)
{
	json_object *arr = json_object_new_array();
	int i;

	for (i = 0; tol_names[i] != NULL; i++) {
		if (tolerate & (1u << i)) {
			json_object_array_add(
			        arr, json_object_new_string(tol_names[i]));
		}
	}
	json_object_object_add(write, "tolerate", arr);
}

void
ipc_write_set_propagation(json_object *write, const char *propagation)
{
	add_str(write, "propagation", propagation);
}

int
ipc_result_write(const struct ipc_result *r, size_t i, struct ipc_write *out)
{
	struct chk c;

	chk_init(&c, "RESULT write", NULL, 0);
	if (r->writes == NULL || i >= r->nwrites) {
		memset(out, 0, sizeof(*out));
		return (-1);
	}
	return (parse_write(&c, json_object_array_get_idx(r->writes, i), out));
}

json_object *
ipc_view_req_new(const struct ipc_view_req *r)
{
	json_object *o = json_object_new_object();

	add_int(o, "id", r->id);
	add_str(o, "what", name_at(what_names, 5, (int)r->what));
	if (r->has_res) {
		json_object_object_add(o, "resource", res_new(&r->res));
	}
	add_str(o, "namespace", r->namespace);
	add_str(o, "name", r->name);
	add_str(o, "labelSelector", r->label_selector);
	if (r->tail_lines >= 0) {
		add_int(o, "tailLines", r->tail_lines);
	}
	add_str(o, "container", r->container);
	if (r->nfields > 0) {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < r->nfields && i < IPC_FIELDS_MAX; i++) {
			json_object_array_add(
			        a, json_object_new_string(r->fields[i]));
		}
		json_object_object_add(o, "fields", a);
	}
	return (o);
}

int
ipc_view_req_read(const struct ipc_msg *m, struct ipc_view_req *out)
{
	struct chk c;

	chk_init(&c, "VIEW_REQ", NULL, 0);
	if (!is_type(m, IPC_VIEW_REQ) || parse_view_req(&c, m->body, out)) {
		memset(out, 0, sizeof(*out));
		return (-1);
	}
	return (0);
}

json_object *
ipc_view_reply_new(const struct ipc_view_reply *r)
{
	json_object *o = json_object_new_object();

	add_int(o, "id", r->id);
	add_str(o, "status", name_at(status_names, 3, (int)r->status));
	if (r->object != NULL) {
		json_object_object_add(o, "object", r->object);
	}
	if (r->items != NULL) {
		json_object_object_add(o, "items", r->items);
	}
	add_str(o, "text", r->text);
	add_str(o, "data", r->data);
	add_str(o, "message", r->message);
	return (o);
}

int
ipc_view_reply_read(const struct ipc_msg *m, struct ipc_view_reply *out)
{
	struct chk c;

	chk_init(&c, "VIEW_REPLY", NULL, 0);
	if (!is_type(m, IPC_VIEW_REPLY)
	        || parse_view_reply(&c, m->body, out) != 0) {
		memset(out, 0, sizeof(*out));
		return (-1);
	}
	return (0);
}

/* ---- projected lists ---- */

/* The length of the map prefix ("metadata.labels." or
 * "metadata.annotations.") path starts with, or 0. */
static size_t
map_prefix(const char *path)
{
	static const char *const maps[]
	        = { "metadata.labels.", "metadata.annotations." };

	for (size_t i = 0; i < 2; i++) {
		if (strncmp(path, maps[i], strlen(maps[i])) == 0) {
			return (strlen(maps[i]));
		}
	}
	return (0);
}

/* A label or annotation key: [A-Za-z0-9._/-], not empty. */
static bool
map_key_valid(const char *k)
{
	if (k[0] == '\0') {
		return (false);
	}
	for (; *k != '\0'; k++) {
		if (!isalnum((unsigned char)*k)
		        && strchr("._/-", *k) == NULL) {
			return (false);
		}
	}
	return (true);
}

bool
ipc_field_valid(const char *path)
{
	size_t n = strlen(path), comp = 0, mp = map_prefix(path);

	if (n == 0 || n > IPC_FIELD_MAX) {
		return (false);
	}
	if (mp > 0) {
		return (map_key_valid(path + mp));
	}
	for (size_t i = 0; i <= n; i++) {
		char ch = path[i];
		if (ch == '.' || ch == '\0') {
			if (comp == 0) {
				return (false);
			}
			comp = 0;
		} else if (isalnum((unsigned char)ch) || ch == '_'
		        || ch == '-') {
			comp++;
		} else {
			return (false);
		}
	}
	return (true);
}

/* The value at path in o, or NULL; comp is scratch. */
static json_object *
walk(json_object *o, const char *path, char comp[IPC_FIELD_MAX + 1])
{
	const char *p = path;
	size_t mp = map_prefix(path);

	for (;;) {
		/* a label or annotation key is one component, dots and all */
		bool key = mp > 0 && (size_t)(p - path) == mp;
		size_t len = key ? strlen(p) : strcspn(p, ".");
		json_object *v = NULL;
		snprintf(comp, IPC_FIELD_MAX + 1, "%.*s", (int)len, p);
		if (!json_object_is_type(o, json_type_object)
		        || !json_object_object_get_ex(o, comp, &v)
		        || v == NULL) {
			return (NULL);
		}
		if (p[len] == '\0') {
			return (v);
		}
		o = v;
		p += len + 1;
	}
}

json_object *
ipc_project(json_object *obj, const char *const *paths, size_t n)
{
	json_object *row = json_object_new_array_ext((int)n);
	char comp[IPC_FIELD_MAX + 1];

	for (size_t i = 0; i < n; i++) {
		json_object *v = NULL;
		if (paths[i] != NULL && ipc_field_valid(paths[i])) {
			v = walk(obj, paths[i], comp);
		}
		json_object_array_add(row, jx_copy(v));
	}
	return (row);
}

/* ---- zoneinfo views ---- */

static bool
zone_char(char ch)
{
	return ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')
	        || (ch >= '0' && ch <= '9') || ch == '_' || ch == '+'
	        || ch == '-' || ch == '.' || ch == '/');
}

bool
ipc_zone_name_valid(const char *name)
{
	size_t n = name != NULL ? strlen(name) : 0;

	if (n == 0 || n > IPC_NAME_MAX) {
		return (false);
	}
	for (const char *p = name; *p != '\0'; p++) {
		if (!zone_char(*p)) {
			return (false);
		}
	}
	for (const char *p = name; p != NULL;) {
		const char *sl = strchr(p, '/');
		size_t len = sl != NULL ? (size_t)(sl - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.')
		        || (len == 2 && p[0] == '.' && p[1] == '.')) {
			return (false);
		}
		p = sl != NULL ? sl + 1 : NULL;
	}
	return (true);
}

static const char b64_alpha[]
        = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
b64_val(unsigned char ch)
{
	const char *p = ch != 0 ? strchr(b64_alpha, ch) : NULL;

	return (p != NULL ? (int)(p - b64_alpha) : -1);
}

/* n a multiple of 4, alphabet characters, '=' only as the last one or
 * two. */
static bool
b64_valid(const char *s, size_t n)
{
	if (n % 4 != 0) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		bool pad = s[i] == '='
		        && (i == n - 1 || (i == n - 2 && s[n - 1] == '='));
		if (!pad && b64_val((unsigned char)s[i]) < 0) {
			return (false);
		}
	}
	return (true);
}

char *
ipc_b64_encode(const void *data, size_t len)
{
	const unsigned char *p = data;
	char *out = xmalloc(4 * ((len + 2) / 3) + 1), *o = out;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		size_t left = len - i;
		if (left > 1) {
			v |= (uint32_t)p[i + 1] << 8;
		}
		if (left > 2) {
			v |= p[i + 2];
		}
		*o++ = b64_alpha[(v >> 18) & 63];
		*o++ = b64_alpha[(v >> 12) & 63];
		*o++ = left > 1 ? b64_alpha[(v >> 6) & 63] : '=';
		*o++ = left > 2 ? b64_alpha[v & 63] : '=';
	}
	*o = '\0';
	return (out);
}

int
ipc_b64_decode(const char *s, unsigned char **out, size_t *len)
{
	size_t n = strlen(s), k = 0;
	unsigned char *b;

	*out = NULL;
	*len = 0;
	if (!b64_valid(s, n)) {
		return (-1);
	}
	b = xmalloc(n / 4 * 3 + 1);
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int npad = 0;
		for (size_t j = 0; j < 4; j++) {
			int x = b64_val((unsigned char)s[i + j]);
			npad += x < 0;
			v = v << 6 | (uint32_t)(x < 0 ? 0 : x);
		}
		b[k++] = (unsigned char)(v >> 16);
		if (npad < 2) {
			b[k++] = (unsigned char)(v >> 8);
		}
		if (npad < 1) {
			b[k++] = (unsigned char)v;
		}
	}
	*out = b;
	*len = k;
	return (0);
}
