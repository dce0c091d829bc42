/*
 * kpatch.c: the PATCH algorithms of kubesim, as the real API server applies
 * them: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with RFC 6901
 * pointers) and the strategic merge patch of built-in kinds (lists merged by
 * key, $patch / $setElementOrder / $deleteFromPrimitiveList / $retainKeys
 * directives).  kubesim's PATCH handler calls these with the stored object
 * and the decoded body; nothing here does I/O or keeps state.
 *
 * The merge patches build a new value from the two borrowed inputs; the JSON
 * patch works on a deep copy that is thrown away on the first error, so a
 * failing patch never leaves a partial result.  Inputs are checked against
 * KPATCH_MAX_DEPTH first, which bounds every recursion below.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/errmsg.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "kubesim/kpatch.h"

const struct kpatch_listkey kpatch_default_listkeys[] = {
	{ "metadata.finalizers", NULL },
	{ "metadata.ownerReferences", "uid" },
	{ "status.conditions", "type" },
	/* Pod */
	{ "spec.containers", "name" },
	{ "spec.containers[].env", "name" },
	{ "spec.containers[].ports", "containerPort" },
	{ "spec.containers[].volumeMounts", "mountPath" },
	{ "spec.initContainers", "name" },
	{ "spec.initContainers[].env", "name" },
	{ "spec.initContainers[].ports", "containerPort" },
	{ "spec.initContainers[].volumeMounts", "mountPath" },
	{ "spec.volumes", "name" },
	{ "spec.imagePullSecrets", "name" },
	/* Job, Deployment, StatefulSet, DaemonSet, ReplicaSet */
	{ "spec.template.spec.containers", "name" },
	{ "spec.template.spec.containers[].env", "name" },
	{ "spec.template.spec.containers[].ports", "containerPort" },
	{ "spec.template.spec.containers[].volumeMounts", "mountPath" },
	{ "spec.template.spec.initContainers", "name" },
	{ "spec.template.spec.initContainers[].env", "name" },
	{ "spec.template.spec.initContainers[].ports", "containerPort" },
	{ "spec.template.spec.initContainers[].volumeMounts", "mountPath" },
	{ "spec.template.spec.volumes", "name" },
	{ "spec.template.spec.imagePullSecrets", "name" },
	/* CronJob */
	{ "spec.jobTemplate.spec.template.spec.containers", "name" },
	{ "spec.jobTemplate.spec.template.spec.containers[].env", "name" },
	{ "spec.jobTemplate.spec.template.spec.volumes", "name" },
	/* Service */
	{ "spec.ports", "port" },
	{ NULL, NULL },
};

const struct kpatch_schema kpatch_default_schema = { kpatch_default_listkeys };

#define SEO_PREFIX  "$setElementOrder/"
#define DFPL_PREFIX "$deleteFromPrimitiveList/"

/* Deep copy; JSON null (NULL) stays NULL.  Caller owns the result. */
static json_object *
dup(json_object *o)
{
	json_object *c = NULL;

	if (o != NULL && json_object_deep_copy(o, &c, NULL) != 0) {
		return (NULL);
	}
	return (c);
}

static bool
is_obj(json_object *o)
{
	return (o != NULL && json_object_is_type(o, json_type_object));
}

static bool
is_arr(json_object *o)
{
	return (o != NULL && json_object_is_type(o, json_type_array));
}

/* True when o nests deeper than left levels (a scalar is one level). */
static bool
too_deep(json_object *o, int left)
{
	size_t i, n;

	if (left <= 0) {
		return (true);
	}
	if (is_arr(o)) {
		n = json_object_array_length(o);
		for (i = 0; i < n; i++) {
			if (too_deep(json_object_array_get_idx(o, i),
			            left - 1)) {
				return (true);
			}
		}
	} else if (is_obj(o)) {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			if (too_deep(v, left - 1)) {
				return (true);
			}
		}
	}
	return (false);
}

static int
check_depth(
        json_object *original, json_object *patch, char *err, size_t errlen)
{
	if (too_deep(original, KPATCH_MAX_DEPTH)) {
		errmsg(err, errlen, "object nested deeper than %d levels",
		        KPATCH_MAX_DEPTH);
		return (-1);
	}
	if (too_deep(patch, KPATCH_MAX_DEPTH)) {
		errmsg(err, errlen, "patch nested deeper than %d levels",
		        KPATCH_MAX_DEPTH);
		return (-1);
	}
	return (0);
}

/* ---- RFC 7386 merge patch ---- */

/* MergePatch(target, patch) of RFC 7386 section 2, building a new value.
 * Keys of the target keep their order; new keys follow in patch order. */
static json_object *
merge_rec(json_object *target, json_object *patch)
{
	json_object *res, *pv;

	if (!is_obj(patch)) {
		return (dup(patch));
	}
	res = json_object_new_object();
	if (is_obj(target)) {
		json_object_object_foreach(target, tk, tv)
		{
			if (!json_object_object_get_ex(patch, tk, &pv)) {
				json_object_object_add(res, tk, dup(tv));
			} else if (pv != NULL) {
				json_object_object_add(
				        res, tk, merge_rec(tv, pv));
			}
		}
	}
	json_object_object_foreach(patch, k, v)
	{
		if (v == NULL || json_object_object_get_ex(res, k, NULL)) {
			continue;
		}
		json_object_object_add(res, k, merge_rec(NULL, v));
	}
	return (res);
}

json_object *
kpatch_merge(
        json_object *original, json_object *patch, char *err, size_t errlen)
{
	if (patch == NULL) {
		errmsg(err, errlen, "merge patch is null");
		return (NULL);
	}
	if (check_depth(original, patch, err, errlen) < 0) {
		return (NULL);
	}
	return (merge_rec(original, patch));
}

/* ---- RFC 6901 pointers ---- */

struct jptr {
	const char *text; /* as given, for messages */
	char *buf;        /* decoded tokens, each NUL-terminated */
	char **tok;
	size_t n;
};

static void
jptr_fini(struct jptr *p)
{
	free(p->buf);
	free(p->tok);
	memset(p, 0, sizeof(*p));
}

/* Decodes the reference tokens of s (len bytes, no NUL) into p. */
static int
jptr_decode(const char *s, size_t len, struct jptr *p)
{
	size_t i, n = 0;
	char *o;

	for (i = 0; i < len; i++) {
		n += s[i] == '/';
	}
	p->buf = o = xmalloc(len + 1);
	p->tok = xcalloc(n + 1, sizeof(*p->tok));
	for (i = 0; i < len; i++) {
		if (s[i] == '/') {
			if (p->n > 0) {
				*o++ = '\0';
			}
			p->tok[p->n++] = o;
		} else if (s[i] != '~') {
			*o++ = s[i];
		} else if (i + 1 < len
		        && (s[i + 1] == '0' || s[i + 1] == '1')) {
			*o++ = s[++i] == '0' ? '~' : '/';
		} else {
			return (-1);
		}
	}
	*o = '\0';
	return (0);
}

static int
jptr_parse(json_object *str, const char *what, struct jptr *p, char *err,
        size_t errlen)
{
	const char *s;
	size_t len;

	memset(p, 0, sizeof(*p));
	if (str == NULL || !json_object_is_type(str, json_type_string)) {
		errmsg(err, errlen, "%s must be a string", what);
		return (-1);
	}
	s = json_object_get_string(str);
	len = (size_t)json_object_get_string_len(str);
	p->text = s;
	if (len > KPATCH_MAX_POINTER) {
		errmsg(err, errlen, "%s longer than %d bytes", what,
		        KPATCH_MAX_POINTER);
		return (-1);
	}
	if (memchr(s, '\0', len) != NULL || (len > 0 && s[0] != '/')) {
		errmsg(err, errlen, "%s \"%.200s\" is not a JSON pointer",
		        what, s);
		return (-1);
	}
	if (jptr_decode(s, len, p) < 0) {
		errmsg(err, errlen, "%s \"%.200s\": bad ~ escape", what, s);
		jptr_fini(p);
		return (-1);
	}
	return (0);
}

/* Array index token: "0" or digits without a leading zero; "-" (one past
 * the end) only when allow_end.  The index must be < len, or <= len with
 * allow_end. */
static int
arr_index(const char *tok, size_t len, bool allow_end, size_t *out)
{
	size_t i, v = 0;

	if (strcmp(tok, "-") == 0) {
		*out = len;
		return (allow_end ? 0 : -1);
	}
	if (tok[0] == '\0' || (tok[0] == '0' && tok[1] != '\0')) {
		return (-1);
	}
	for (i = 0; tok[i] != '\0'; i++) {
		if (tok[i] < '0' || tok[i] > '9' || i >= 9) {
			return (-1);
		}
		v = v * 10 + (size_t)(tok[i] - '0');
	}
	*out = v;
	return (v < len || (allow_end && v == len) ? 0 : -1);
}

/* The member tok of container c in *out (NULL for JSON null); -1 when c
 * is not a container or has no such member. */
static int
child(json_object *c, const char *tok, json_object **out)
{
	size_t i;

	if (is_obj(c)) {
		return (json_object_object_get_ex(c, tok, out) ? 0 : -1);
	}
	if (is_arr(c)
	        && arr_index(tok, json_object_array_length(c), false, &i)
	                == 0) {
		*out = json_object_array_get_idx(c, i);
		return (0);
	}
	return (-1);
}

/* The value at the first upto tokens of p. */
static int
walk(json_object *doc, const struct jptr *p, size_t upto, json_object **out)
{
	size_t i;

	*out = doc;
	for (i = 0; i < upto; i++) {
		if (child(*out, p->tok[i], out) < 0) {
			return (-1);
		}
	}
	return (0);
}

/* ---- RFC 6902 JSON patch ---- */

struct jop {
	const char *name; /* "add", ... */
	struct jptr path;
	struct jptr from;
	json_object *value; /* borrowed from the patch */
	size_t *nodes;      /* values added so far, all operations */
	char *err;
	size_t errlen;
};

static int
missing(struct jop *op, const struct jptr *p)
{
	errmsg(op->err, op->errlen,
	        "%s operation does not apply: doc is missing path: "
	        "\"%.200s\": missing value",
	        op->name, p->text);
	return (-1);
}

static int
bad_index(struct jop *op, const struct jptr *p)
{
	errmsg(op->err, op->errlen,
	        "%s operation does not apply: invalid array index in path "
	        "\"%.200s\"",
	        op->name, p->text);
	return (-1);
}

/* Nesting depth of o (a scalar is 1); adds its value count to *nodes. */
static int
measure(json_object *o, size_t *nodes)
{
	int d, max = 0;
	size_t i, n;

	++*nodes;
	if (is_arr(o)) {
		n = json_object_array_length(o);
		for (i = 0; i < n; i++) {
			d = measure(json_object_array_get_idx(o, i), nodes);
			max = d > max ? d : max;
		}
	} else if (is_obj(o)) {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			d = measure(v, nodes);
			max = d > max ? d : max;
		}
	}
	return (max + 1);
}

/*
 * Copies can double the document with each operation: refuse a value that
 * would nest deeper than KPATCH_MAX_DEPTH where it lands, and stop once the
 * operations have added KPATCH_MAX_NODES values in all.
 */
static int
too_big(struct jop *op, const struct jptr *p, json_object *val)
{
	size_t depth = (size_t)measure(val, op->nodes);

	if (p->n + depth > KPATCH_MAX_DEPTH) {
		errmsg(op->err, op->errlen,
		        "%s operation does not apply: result nested deeper "
		        "than %d levels",
		        op->name, KPATCH_MAX_DEPTH);
		return (-1);
	}
	if (*op->nodes > KPATCH_MAX_NODES) {
		errmsg(op->err, op->errlen,
		        "%s operation does not apply: patch adds more than %d "
		        "values",
		        op->name, KPATCH_MAX_NODES);
		return (-1);
	}
	return (0);
}

/* Inserts val (owned) into array a at index i <= length. */
static void
arr_insert(json_object *a, size_t i, json_object *val)
{
	size_t j, len = json_object_array_length(a);

	json_object_array_add(a, NULL);
	for (j = len; j > i; j--) {
		json_object_array_put_idx(a, j,
		        json_object_get(json_object_array_get_idx(a, j - 1)));
	}
	json_object_array_put_idx(a, i, val);
}

/* Adds val (owned, even on failure) at p. */
static int
do_add(struct jop *op, json_object **doc, const struct jptr *p,
        json_object *val)
{
	json_object *par;
	const char *last;
	size_t i;

	if (too_big(op, p, val) < 0) {
		json_object_put(val);
		return (-1);
	}
	if (p->n == 0) {
		json_object_put(*doc);
		*doc = val;
		return (0);
	}
	last = p->tok[p->n - 1];
	if (walk(*doc, p, p->n - 1, &par) < 0
	        || !(is_obj(par) || is_arr(par))) {
		json_object_put(val);
		return (missing(op, p));
	}
	if (is_obj(par)) {
		json_object_object_add(par, last, val);
		return (0);
	}
	if (arr_index(last, json_object_array_length(par), true, &i) < 0) {
		json_object_put(val);
		return (bad_index(op, p));
	}
	arr_insert(par, i, val);
	return (0);
}

/* Removes the value at p; *taken, when not NULL, receives it (owned). */
static int
do_remove(struct jop *op, json_object **doc, const struct jptr *p,
        json_object **taken)
{
	json_object *par, *v;
	size_t i;

	if (p->n == 0) {
		errmsg(op->err, op->errlen,
		        "%s operation does not apply: cannot remove the whole "
		        "document",
		        op->name);
		return (-1);
	}
	if (walk(*doc, p, p->n, &v) < 0) {
		return (missing(op, p));
	}
	(void)walk(*doc, p, p->n - 1, &par);
	if (taken != NULL) {
		*taken = json_object_get(v);
	}
	if (is_obj(par)) {
		json_object_object_del(par, p->tok[p->n - 1]);
	} else {
		(void)arr_index(p->tok[p->n - 1],
		        json_object_array_length(par), false, &i);
		json_object_array_del_idx(par, i, 1);
	}
	return (0);
}

static int
op_replace(struct jop *op, json_object **doc)
{
	const struct jptr *p = &op->path;
	json_object *par, *v;
	size_t i;

	if (walk(*doc, p, p->n, &v) < 0) {
		return (missing(op, p));
	}
	if (too_big(op, p, op->value) < 0) {
		return (-1);
	}
	if (p->n == 0) {
		json_object_put(*doc);
		*doc = dup(op->value);
		return (0);
	}
	(void)walk(*doc, p, p->n - 1, &par);
	if (is_obj(par)) {
		json_object_object_add(par, p->tok[p->n - 1], dup(op->value));
	} else {
		(void)arr_index(p->tok[p->n - 1],
		        json_object_array_length(par), false, &i);
		json_object_array_put_idx(par, i, dup(op->value));
	}
	return (0);
}

/* Whether the tokens of a are a prefix of (or equal to) those of b. */
static bool
tok_prefix(const struct jptr *a, const struct jptr *b)
{
	size_t i;

	if (a->n > b->n) {
		return (false);
	}
	for (i = 0; i < a->n; i++) {
		if (strcmp(a->tok[i], b->tok[i]) != 0) {
			return (false);
		}
	}
	return (true);
}

static int
op_move(struct jop *op, json_object **doc)
{
	json_object *v;

	if (walk(*doc, &op->from, op->from.n, &v) < 0) {
		return (missing(op, &op->from));
	}
	if (tok_prefix(&op->from, &op->path)) {
		if (op->from.n == op->path.n) {
			return (0);
		}
		errmsg(op->err, op->errlen,
		        "move operation does not apply: \"%.200s\" is a child "
		        "of \"%.200s\"",
		        op->path.text, op->from.text);
		return (-1);
	}
	if (do_remove(op, doc, &op->from, &v) < 0) {
		return (-1);
	}
	return (do_add(op, doc, &op->path, v));
}

static int
op_copy(struct jop *op, json_object **doc)
{
	json_object *v;

	if (walk(*doc, &op->from, op->from.n, &v) < 0) {
		return (missing(op, &op->from));
	}
	return (do_add(op, doc, &op->path, dup(v)));
}

/*
 * Whether a test of path against null passes on a member that is absent:
 * Kubernetes' JSON patch (evanphx/json-patch) takes an absent member of an
 * object that exists as null, so "test /metadata/ownerReferences null"
 * passes exactly when the object has none.
 */
static bool
absent_is_null(struct jop *op, json_object *doc)
{
	json_object *par;

	return (op->value == NULL && op->path.n > 0
	        && walk(doc, &op->path, op->path.n - 1, &par) == 0
	        && is_obj(par));
}

static int
op_test(struct jop *op, json_object **doc)
{
	json_object *v;

	if (walk(*doc, &op->path, op->path.n, &v) < 0) {
		if (absent_is_null(op, *doc)) {
			return (0);
		}
		return (missing(op, &op->path));
	}
	if (!jx_equal(v, op->value)) {
		errmsg(op->err, op->errlen,
		        "testing value %.200s failed: "
		        "test failed",
		        op->path.text);
		return (-1);
	}
	return (0);
}

static int
op_run(struct jop *op, json_object **doc)
{
	if (strcmp(op->name, "add") == 0) {
		return (do_add(op, doc, &op->path, dup(op->value)));
	} else if (strcmp(op->name, "remove") == 0) {
		return (do_remove(op, doc, &op->path, NULL));
	} else if (strcmp(op->name, "replace") == 0) {
		return (op_replace(op, doc));
	} else if (strcmp(op->name, "move") == 0) {
		return (op_move(op, doc));
	} else if (strcmp(op->name, "copy") == 0) {
		return (op_copy(op, doc));
	}
	return (op_test(op, doc));
}

/* Decodes operation number idx into op (paths owned by op). */
static int
op_parse(json_object *o, size_t idx, struct jop *op)
{
	static const char *const names[]
	        = { "add", "remove", "replace", "move", "copy", "test" };
	json_object *name = NULL, *path = NULL, *from = NULL;
	size_t i;

	if (!is_obj(o) || !json_object_object_get_ex(o, "op", &name)
	        || !json_object_is_type(name, json_type_string)) {
		errmsg(op->err, op->errlen,
		        "operation %zu: not an object with a string \"op\"",
		        idx);
		return (-1);
	}
	op->name = json_object_get_string(name);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(op->name, names[i]) == 0) {
			break;
		}
	}
	if (i == sizeof(names) / sizeof(names[0])) {
		errmsg(op->err, op->errlen,
		        "operation %zu: unexpected kind "
		        "\"%.100s\"",
		        idx, op->name);
		return (-1);
	}
	(void)json_object_object_get_ex(o, "path", &path);
	if (jptr_parse(path, "path", &op->path, op->err, op->errlen) < 0) {
		return (-1);
	}
	if (i == 3 || i == 4) {
		(void)json_object_object_get_ex(o, "from", &from);
		if (jptr_parse(from, "from", &op->from, op->err, op->errlen)
		        < 0) {
			return (-1);
		}
	}
	if ((i == 0 || i == 2 || i == 5)
	        && !json_object_object_get_ex(o, "value", &op->value)) {
		errmsg(op->err, op->errlen,
		        "operation %zu (%s): missing "
		        "\"value\"",
		        idx, op->name);
		return (-1);
	}
	return (0);
}

json_object *
kpatch_json(
        json_object *original, json_object *patch, char *err, size_t errlen)
{
	json_object *doc;
	struct jop op;
	size_t i, n, nodes = 0;
	int rc = 0;

	if (!is_arr(patch)) {
		errmsg(err, errlen,
		        "json patch must be an array of operations");
		return (NULL);
	}
	if (check_depth(original, patch, err, errlen) < 0) {
		return (NULL);
	}
	doc = dup(original);
	n = json_object_array_length(patch);
	for (i = 0; i < n && rc == 0; i++) {
		memset(&op, 0, sizeof(op));
		op.err = err;
		op.errlen = errlen;
		op.nodes = &nodes;
		rc = op_parse(json_object_array_get_idx(patch, i), i, &op);
		if (rc == 0) {
			rc = op_run(&op, &doc);
		}
		jptr_fini(&op.path);
		jptr_fini(&op.from);
	}
	if (rc == 0 && doc == NULL) {
		errmsg(err, errlen, "json patch result is null");
		rc = -1;
	}
	if (rc < 0) {
		json_object_put(doc);
		return (NULL);
	}
	return (doc);
}

/* ---- strategic merge patch ---- */

struct smp {
	const struct kpatch_listkey *keys;
	struct buf path; /* dotted path of the value being merged */
	char *err;
	size_t errlen;
};

static int smp_value(struct smp *s, json_object *orig, json_object *patch,
        json_object **out);

static size_t
path_push(struct smp *s, const char *seg)
{
	size_t len = s->path.len;

	if (strcmp(seg, "[]") != 0 && len > 0) {
		buf_putc(&s->path, '.');
	}
	buf_puts(&s->path, seg);
	return (len);
}

static void
path_pop(struct smp *s, size_t len)
{
	s->path.len = len;
	if (s->path.data != NULL) {
		s->path.data[len] = '\0';
	}
}

/* The merge-list entry for the current path, or NULL (list replaced). */
static const struct kpatch_listkey *
listkey(struct smp *s)
{
	const struct kpatch_listkey *k;

	for (k = s->keys; k->path != NULL; k++) {
		if (strcmp(k->path, buf_str(&s->path)) == 0) {
			return (k);
		}
	}
	return (NULL);
}

static int
smp_fail(struct smp *s, const char *what)
{
	errmsg(s->err, s->errlen, "strategic merge patch at \"%.200s\": %s",
	        buf_str(&s->path), what);
	return (-1);
}

enum directive { DIR_NONE, DIR_MERGE, DIR_REPLACE, DIR_DELETE };

/* The $patch directive of object o. */
static int
directive(struct smp *s, json_object *o, enum directive *d)
{
	json_object *v;
	const char *str;

	*d = DIR_NONE;
	if (!is_obj(o) || !json_object_object_get_ex(o, "$patch", &v)) {
		return (0);
	}
	str = json_object_is_type(v, json_type_string)
	        ? json_object_get_string(v)
	        : "";
	if (strcmp(str, "merge") == 0) {
		*d = DIR_MERGE;
	} else if (strcmp(str, "replace") == 0) {
		*d = DIR_REPLACE;
	} else if (strcmp(str, "delete") == 0) {
		*d = DIR_DELETE;
	} else {
		return (smp_fail(s, "unknown $patch directive"));
	}
	return (0);
}

/* Whether two list elements match: by merge key, or whole value when key is
 * NULL. */
static bool
same_elem(json_object *a, json_object *b, const char *key)
{
	json_object *ka, *kb;

	if (key == NULL) {
		return (jx_equal(a, b));
	}
	return (is_obj(a) && is_obj(b)
	        && json_object_object_get_ex(a, key, &ka)
	        && json_object_object_get_ex(b, key, &kb) && ka != NULL
	        && jx_equal(ka, kb));
}

/* Index of the first element of a matching e, or -1. */
static ssize_t
find_elem(json_object *a, json_object *e, const char *key)
{
	size_t i, n = json_object_array_length(a);

	for (i = 0; i < n; i++) {
		if (same_elem(json_object_array_get_idx(a, i), e, key)) {
			return ((ssize_t)i);
		}
	}
	return (-1);
}

/* Merges one element of a keyed list into res (owned by the caller). */
static int
list_elem_keyed(struct smp *s, json_object *res, json_object *pe,
        const char *key, enum directive d)
{
	json_object *kv = NULL, *merged;
	ssize_t i;

	if (!is_obj(pe) || !json_object_object_get_ex(pe, key, &kv)
	        || kv == NULL) {
		errmsg(s->err, s->errlen,
		        "strategic merge patch at \"%.200s\": element does "
		        "not contain declared merge key: %s",
		        buf_str(&s->path), key);
		return (-1);
	}
	i = find_elem(res, pe, key);
	if (d == DIR_DELETE) {
		while (i >= 0) {
			json_object_array_del_idx(res, (size_t)i, 1);
			i = find_elem(res, pe, key);
		}
		return (0);
	}
	if (smp_value(s,
	            i >= 0 ? json_object_array_get_idx(res, (size_t)i) : NULL,
	            pe, &merged)
	        < 0) {
		return (-1);
	}
	if (i >= 0) {
		json_object_array_put_idx(res, (size_t)i, merged);
	} else {
		json_object_array_add(res, merged);
	}
	return (0);
}

/* Merges one element of a primitive merge list (set union). */
static int
list_elem_prim(
        struct smp *s, json_object *res, json_object *pe, enum directive d)
{
	if (d != DIR_NONE) {
		return (smp_fail(s, "$patch element in a primitive list"));
	}
	if (find_elem(res, pe, NULL) < 0) {
		json_object_array_add(res, dup(pe));
	}
	return (0);
}

/* A list of the schema: merged element by element into a copy of orig.
 * An element {"$patch": "replace"} drops orig. */
static int
smp_list(struct smp *s, json_object *orig, json_object *patch, const char *key,
        json_object **out)
{
	json_object *res, *pe;
	enum directive d;
	size_t i, n = json_object_array_length(patch), saved;
	int rc = 0;

	for (i = 0; i < n; i++) {
		pe = json_object_array_get_idx(patch, i);
		if (directive(s, pe, &d) < 0) {
			return (-1);
		}
		if (d == DIR_REPLACE) {
			orig = NULL;
		}
	}
	res = is_arr(orig) ? dup(orig) : json_object_new_array();
	saved = path_push(s, "[]");
	for (i = 0; i < n && rc == 0; i++) {
		pe = json_object_array_get_idx(patch, i);
		(void)directive(s, pe, &d);
		if (d == DIR_REPLACE) {
			continue;
		}
		rc = key != NULL ? list_elem_keyed(s, res, pe, key, d)
		                 : list_elem_prim(s, res, pe, d);
	}
	path_pop(s, saved);
	if (rc < 0) {
		json_object_put(res);
		return (-1);
	}
	*out = res;
	return (0);
}

/* A list outside the schema: replaced by the patch's list, whose elements
 * are cleaned of directives (merged against nothing). */
static int
smp_plain_list(struct smp *s, json_object *patch, json_object **out)
{
	json_object *res = json_object_new_array(), *pe, *v;
	enum directive d;
	size_t i, n = json_object_array_length(patch), saved;
	int rc = 0;

	saved = path_push(s, "[]");
	for (i = 0; i < n && rc == 0; i++) {
		pe = json_object_array_get_idx(patch, i);
		rc = directive(s, pe, &d);
		if (rc == 0 && d != DIR_REPLACE && d != DIR_DELETE) {
			rc = smp_value(s, NULL, pe, &v);
			if (rc == 0) {
				json_object_array_add(res, v);
			}
		}
	}
	path_pop(s, saved);
	if (rc < 0) {
		json_object_put(res);
		return (-1);
	}
	*out = res;
	return (0);
}

static bool
has_prefix(const char *s, const char *prefix)
{
	return (strncmp(s, prefix, strlen(prefix)) == 0);
}

/* Whether the array a holds the string str. */
static bool
in_strings(json_object *a, const char *str)
{
	json_object *e;
	size_t i, n = json_object_array_length(a);

	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(a, i);
		if (json_object_is_type(e, json_type_string)
		        && strcmp(json_object_get_string(e), str) == 0) {
			return (true);
		}
	}
	return (false);
}

static int
check_retain(struct smp *s, json_object *patch, json_object *rk)
{
	size_t i, n = json_object_array_length(rk);

	for (i = 0; i < n; i++) {
		if (!json_object_is_type(json_object_array_get_idx(rk, i),
		            json_type_string)) {
			return (smp_fail(s, "$retainKeys must list strings"));
		}
	}
	json_object_object_foreach(patch, k, v)
	{
		(void)v;
		if (k[0] != '$' && !in_strings(rk, k)) {
			return (smp_fail(s,
			        "a patched key is not present in "
			        "$retainKeys"));
		}
	}
	return (0);
}

/* Checks the "$" keys of a patch map. */
static int
check_directives(struct smp *s, json_object *patch)
{
	json_object_object_foreach(patch, k, v)
	{
		if (k[0] != '$' || strcmp(k, "$patch") == 0) {
			continue;
		}
		if (strcmp(k, "$retainKeys") == 0) {
			if (!is_arr(v)) {
				return (smp_fail(
				        s, "$retainKeys must be a list"));
			}
			if (check_retain(s, patch, v) < 0) {
				return (-1);
			}
		} else if (has_prefix(k, SEO_PREFIX)
		        || has_prefix(k, DFPL_PREFIX)) {
			if (!is_arr(v) || strchr(k, '/')[1] == '\0') {
				return (smp_fail(s,
				        "bad $setElementOrder or "
				        "$deleteFromPrimitiveList directive"));
			}
		} else {
			return (smp_fail(s, "unknown $ directive"));
		}
	}
	return (0);
}

/* A copy of list without the values listed in del. */
static json_object *
without(json_object *list, json_object *del)
{
	json_object *res = json_object_new_array(), *e;
	size_t i, n = json_object_array_length(list);

	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(list, i);
		if (find_elem(del, e, NULL) < 0) {
			json_object_array_add(res, dup(e));
		}
	}
	return (res);
}

/* Sets field k of res from the original value ov (NULL when absent or
 * null) and the patch map. */
static int
map_field(struct smp *s, const char *k, json_object *ov, json_object *patch,
        json_object *res)
{
	json_object *pv, *base = ov, *filtered = NULL, *v;
	char *dk = xasprintf(DFPL_PREFIX "%s", k);
	size_t saved;
	int rc;

	if (json_object_object_get_ex(patch, dk, &pv) && is_arr(ov)) {
		base = filtered = without(ov, pv);
	}
	free(dk);
	if (!json_object_object_get_ex(patch, k, &pv)) {
		json_object_object_add(res, k, dup(base));
		json_object_put(filtered);
		return (0);
	}
	if (pv == NULL) {
		json_object_put(filtered);
		return (0);
	}
	saved = path_push(s, k);
	rc = smp_value(s, base, pv, &v);
	path_pop(s, saved);
	json_object_put(filtered);
	if (rc == 0) {
		json_object_object_add(res, k, v);
	}
	return (rc);
}

static int
map_fields(
        struct smp *s, json_object *orig, json_object *patch, json_object *res)
{
	if (orig != NULL) {
		json_object_object_foreach(orig, ok, ov)
		{
			if (map_field(s, ok, ov, patch, res) < 0) {
				return (-1);
			}
		}
	}
	json_object_object_foreach(patch, k, v)
	{
		(void)v;
		if (k[0] == '$' || json_object_object_get_ex(res, k, NULL)
		        || (orig != NULL
		                && json_object_object_get_ex(orig, k, NULL))) {
			continue;
		}
		if (map_field(s, k, NULL, patch, res) < 0) {
			return (-1);
		}
	}
	return (0);
}

/* list reordered: elements matching order's entries first, in that order,
 * then the others as they were.  Caller owns the result. */
static json_object *
reorder(json_object *list, json_object *order, const char *key)
{
	json_object *res = json_object_new_array(), *e;
	size_t i, j, n = json_object_array_length(list);
	size_t m = json_object_array_length(order);
	char *used = xcalloc(n + 1, 1);

	for (j = 0; j < m; j++) {
		for (i = 0; i < n; i++) {
			e = json_object_array_get_idx(list, i);
			if (!used[i]
			        && same_elem(e,
			                json_object_array_get_idx(order, j),
			                key)) {
				json_object_array_add(res, json_object_get(e));
				used[i] = 1;
				break;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (!used[i]) {
			json_object_array_add(res,
			        json_object_get(
			                json_object_array_get_idx(list, i)));
		}
	}
	free(used);
	return (res);
}

/* Applies the $setElementOrder/<field> directives of patch to res. */
static void
map_order(struct smp *s, json_object *patch, json_object *res)
{
	const struct kpatch_listkey *lk;
	const char *field;
	json_object *list;
	size_t saved;

	json_object_object_foreach(patch, k, v)
	{
		if (!has_prefix(k, SEO_PREFIX)) {
			continue;
		}
		field = k + strlen(SEO_PREFIX);
		if (!json_object_object_get_ex(res, field, &list)
		        || !is_arr(list)) {
			continue;
		}
		saved = path_push(s, field);
		lk = listkey(s);
		path_pop(s, saved);
		json_object_object_add(
		        res, field, reorder(list, v, lk ? lk->key : NULL));
	}
}

/* res keeping only the keys listed by $retainKeys, when there is one. */
static json_object *
map_retain(json_object *patch, json_object *res)
{
	json_object *rk, *kept;

	if (!json_object_object_get_ex(patch, "$retainKeys", &rk)) {
		return (res);
	}
	kept = json_object_new_object();
	json_object_object_foreach(res, k, v)
	{
		if (in_strings(rk, k)) {
			json_object_object_add(kept, k, json_object_get(v));
		}
	}
	json_object_put(res);
	return (kept);
}

static int
smp_map(struct smp *s, json_object *orig, json_object *patch,
        json_object **out)
{
	enum directive d;
	json_object *res;

	if (directive(s, patch, &d) < 0 || check_directives(s, patch) < 0) {
		return (-1);
	}
	if (d == DIR_DELETE) {
		*out = json_object_new_object();
		return (0);
	}
	if (d == DIR_REPLACE || !is_obj(orig)) {
		orig = NULL;
	}
	res = json_object_new_object();
	if (map_fields(s, orig, patch, res) < 0) {
		json_object_put(res);
		return (-1);
	}
	map_order(s, patch, res);
	*out = map_retain(patch, res);
	return (0);
}

static int
smp_value(struct smp *s, json_object *orig, json_object *patch,
        json_object **out)
{
	const struct kpatch_listkey *lk;

	if (is_obj(patch)) {
		return (smp_map(s, orig, patch, out));
	}
	if (is_arr(patch)) {
		lk = listkey(s);
		if (lk != NULL) {
			return (smp_list(s, orig, patch, lk->key, out));
		}
		return (smp_plain_list(s, patch, out));
	}
	*out = dup(patch);
	return (0);
}

json_object *
kpatch_strategic(json_object *original, json_object *patch,
        const struct kpatch_schema *schema, char *err, size_t errlen)
{
	struct smp s;
	json_object *res = NULL;

	if (!is_obj(patch)) {
		errmsg(err, errlen, "strategic merge patch must be an object");
		return (NULL);
	}
	if (original != NULL && !is_obj(original)) {
		errmsg(err, errlen,
		        "strategic merge patch target is not an "
		        "object");
		return (NULL);
	}
	if (check_depth(original, patch, err, errlen) < 0) {
		return (NULL);
	}
	memset(&s, 0, sizeof(s));
	s.keys = (schema != NULL ? schema : &kpatch_default_schema)->keys;
	buf_init(&s.path);
	s.err = err;
	s.errlen = errlen;
	if (smp_map(&s, original, patch, &res) < 0) {
		res = NULL;
	}
	buf_fini(&s.path);
	return (res);
}
