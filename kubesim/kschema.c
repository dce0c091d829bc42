/*
 * kschema.c: owns the structural-schema engine of kubesim: compiling a CRD
 * version's openAPIV3Schema (kschema_new), defaulting, pruning and
 * validating custom resources against it, and the Kubernetes wording of
 * the resulting field errors (kube-openapi messages wrapped in apimachinery
 * field.Error bodies).  Pure functions over json-c; see kschema.h for the
 * documented approximations.
 */
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/kschema.h"

struct rx {
	json_object *node; /* the schema node owning the pattern */
	regex_t re;
};

struct kschema {
	json_object *root; /* owned deep copy of the schema */
	struct rx *rx;
	size_t nrx;
};

struct vctx {
	const struct kschema *ks;
	struct kschema_cause *c;
	size_t n;
	size_t cap;
};

/* ------------------------------------------------------------------ */
/* Small schema accessors                                             */

static json_object *
kw(json_object *s, const char *key)
{
	json_object *v = NULL;

	if (s == NULL || !json_object_is_type(s, json_type_object)) {
		return (NULL);
	}
	if (!json_object_object_get_ex(s, key, &v)) {
		return (NULL);
	}
	return (v);
}

static bool
has_kw(json_object *s, const char *key)
{
	if (s == NULL || !json_object_is_type(s, json_type_object)) {
		return (false);
	}
	return (json_object_object_get_ex(s, key, NULL));
}

static bool
flag(json_object *s, const char *key)
{
	json_object *v = kw(s, key);

	return (v != NULL && json_object_is_type(v, json_type_boolean)
	        && json_object_get_boolean(v));
}

static const char *
kw_str(json_object *s, const char *key)
{
	json_object *v = kw(s, key);

	if (v == NULL || !json_object_is_type(v, json_type_string)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

static bool
is_number(json_object *v)
{
	return (v != NULL
	        && (json_object_is_type(v, json_type_int)
	                || json_object_is_type(v, json_type_double)));
}

/* The schema of property k of object schema s, or NULL. */
static json_object *
prop_schema(json_object *s, const char *k)
{
	json_object *p = kw(s, "properties");

	if (p == NULL || !json_object_is_type(p, json_type_object)) {
		return (NULL);
	}
	return (kw(p, k));
}

/* additionalProperties as a schema, or NULL (absent or boolean). */
static json_object *
addl_schema(json_object *s)
{
	json_object *a = kw(s, "additionalProperties");

	if (a == NULL || !json_object_is_type(a, json_type_object)) {
		return (NULL);
	}
	return (a);
}

static bool
addl_true(json_object *s)
{
	return (flag(s, "additionalProperties"));
}

/* A resource root: apiVersion, kind and metadata are left alone. */
static bool
resource_key(const char *k)
{
	return (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0
	        || strcmp(k, "metadata") == 0);
}

static char *
child_path(const char *path, const char *key)
{
	if (*path == '\0') {
		return (xstrdup(key));
	}
	return (xasprintf("%s.%s", path, key));
}

/* ------------------------------------------------------------------ */
/* Pattern translation: ECMA/RE2 subset to POSIX ERE                  */

static const char *
class_of(char c, bool inside)
{
	switch (c) {
	case 'd':
		return (inside ? "0-9" : "[0-9]");
	case 'D':
		return (inside ? NULL : "[^0-9]");
	case 'w':
		return (inside ? "A-Za-z0-9_" : "[A-Za-z0-9_]");
	case 'W':
		return (inside ? NULL : "[^A-Za-z0-9_]");
	case 's':
		return (inside ? "[:space:]" : "[[:space:]]");
	case 'S':
		return (inside ? NULL : "[^[:space:]]");
	default:
		return (NULL);
	}
}

/* The literal character of escape \c, or -1 when not a literal escape. */
static int
literal_escape(const char *p, size_t *used)
{
	*used = 1;
	switch (*p) {
	case 't':
		return ('\t');
	case 'n':
		return ('\n');
	case 'r':
		return ('\r');
	case 'f':
		return ('\f');
	case 'v':
		return ('\v');
	case 'x':
		if (p[1] != '\0' && p[2] != '\0'
		        && strchr("0123456789abcdefABCDEF", p[1]) != NULL
		        && strchr("0123456789abcdefABCDEF", p[2]) != NULL) {
			char hex[3] = { p[1], p[2], '\0' };

			*used = 3;
			return ((int)strtol(hex, NULL, 16));
		}
		return (-1);
	default:
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
		        || (*p >= '0' && *p <= '9') || *p == '\0') {
			return (-1);
		}
		return ((unsigned char)*p);
	}
}

static void
put_literal(struct buf *out, int c)
{
	if (c != 0 && strchr(".[]()*+?{}|^$\\", c) != NULL) {
		buf_putc(out, '\\');
	}
	buf_putc(out, (char)c);
}

struct bracket {
	struct buf body;
	bool neg, rbr, hyph, caret;
};

/* One escape inside a bracket, *pp at the character after '\\'. */
static int
bracket_escape(const char **pp, struct bracket *b)
{
	size_t used;
	int c;

	if (class_of(**pp, true) != NULL) {
		buf_puts(&b->body, class_of(**pp, true));
		return (0);
	}
	c = literal_escape(*pp, &used);
	if (c <= 0) {
		return (-1);
	}
	*pp += used - 1;
	if (c == ']') {
		b->rbr = true;
	} else if (c == '-') {
		b->hyph = true;
	} else if (c == '^') {
		b->caret = true;
	} else {
		buf_putc(&b->body, (char)c);
	}
	return (0);
}

/* A POSIX class "[:alpha:]" is copied; *pp at its '['. */
static int
bracket_class(const char **pp, struct bracket *b)
{
	const char *e = strstr(*pp + 2, ":]");

	if (e == NULL) {
		return (-1);
	}
	buf_append(&b->body, *pp, (size_t)(e + 2 - *pp));
	*pp = e + 1;
	return (0);
}

/*
 * Translates one bracket expression starting after '['; returns the
 * position after its ']' or NULL.  POSIX brackets have no escapes, so a
 * literal ']' goes first, '^' and '-' last (a '-' written first or last in
 * the source is a literal too).
 */
static const char *
tr_bracket(const char *p, struct buf *out)
{
	struct bracket b = { BUF_INIT, false, false, false, false };
	int rc = 0;

	if (*p == '^') {
		b.neg = true;
		p++;
	}
	if (*p == ']') {
		b.rbr = true;
		p++;
	}
	for (; rc == 0 && *p != ']'; p++) {
		if (*p == '\0') {
			rc = -1;
		} else if (*p == '\\') {
			p++;
			rc = bracket_escape(&p, &b);
		} else if (*p == '[' && p[1] == ':') {
			rc = bracket_class(&p, &b);
		} else if (*p == '-' && (b.body.len == 0 || p[1] == ']')) {
			b.hyph = true;
		} else {
			buf_putc(&b.body, *p);
		}
	}
	if (rc == 0 && (b.body.len > 0 || b.rbr || b.hyph || b.caret)) {
		buf_printf(out, "[%s%s%s%s%s]", b.neg ? "^" : "",
		        b.rbr ? "]" : "", buf_str(&b.body), b.caret ? "^" : "",
		        b.hyph ? "-" : "");
	} else {
		rc = -1;
	}
	buf_fini(&b.body);
	return (rc == 0 ? p + 1 : NULL);
}

static int
translate_re(const char *p, struct buf *out)
{
	size_t used;
	int c;

	for (; *p != '\0'; p++) {
		if (*p == '[') {
			p = tr_bracket(p + 1, out);
			if (p == NULL) {
				return (-1);
			}
			p--;
		} else if (*p == '(' && p[1] == '?') {
			if (p[2] != ':') {
				return (-1); /* flags, lookaround, names */
			}
			buf_putc(out, '(');
			p += 2;
		} else if (*p == '\\') {
			p++;
			if (class_of(*p, false) != NULL) {
				buf_puts(out, class_of(*p, false));
				continue;
			}
			if (*p == 'b' || *p == 'B') {
				buf_putc(out, '\\');
				buf_putc(out, *p);
				continue;
			}
			if (*p == 'A' || *p == 'z') {
				buf_putc(out, *p == 'A' ? '^' : '$');
				continue;
			}
			c = literal_escape(p, &used);
			if (c <= 0) {
				return (-1);
			}
			put_literal(out, c);
			p += used - 1;
		} else {
			buf_putc(out, *p);
		}
	}
	return (0);
}

static int
compile_pattern(struct kschema *ks, json_object *node, const char *pat)
{
	struct buf ere = BUF_INIT;
	regex_t re;
	int rc = -1;

	if (translate_re(pat, &ere) == 0
	        && regcomp(&re, buf_str(&ere), REG_EXTENDED | REG_NOSUB)
	                == 0) {
		ks->rx = xreallocarray(ks->rx, ks->nrx + 1, sizeof(*ks->rx));
		ks->rx[ks->nrx].node = node;
		ks->rx[ks->nrx].re = re;
		ks->nrx++;
		rc = 0;
	}
	buf_fini(&ere);
	return (rc);
}

static const regex_t *
find_rx(const struct kschema *ks, json_object *node)
{
	size_t i;

	for (i = 0; i < ks->nrx; i++) {
		if (ks->rx[i].node == node) {
			return (&ks->rx[i].re);
		}
	}
	return (NULL);
}

/* ------------------------------------------------------------------ */
/* Compilation                                                        */

static int check(
        struct kschema *, json_object *, int, const char *, char *, size_t);

static bool
known_type(const char *t)
{
	static const char *const types[] = { "object", "array", "string",
		"integer", "number", "boolean", NULL };
	size_t i;

	for (i = 0; types[i] != NULL; i++) {
		if (strcmp(t, types[i]) == 0) {
			return (true);
		}
	}
	return (false);
}

static int
check_list(struct kschema *ks, json_object *s, const char *key, int depth,
        const char *at, char *err, size_t errlen)
{
	json_object *l = kw(s, key);
	size_t i;
	int rc = 0;

	if (l == NULL) {
		return (0);
	}
	if (!json_object_is_type(l, json_type_array)) {
		snprintf(err, errlen, "%s.%s: must be a list of schemas", at,
		        key);
		return (-1);
	}
	for (i = 0; rc == 0 && i < json_object_array_length(l); i++) {
		char *sub = xasprintf("%s.%s[%zu]", at, key, i);

		rc = check(ks, json_object_array_get_idx(l, i), depth + 1, sub,
		        err, errlen);
		free(sub);
	}
	return (rc);
}

static int
check_props(struct kschema *ks, json_object *s, int depth, const char *at,
        char *err, size_t errlen)
{
	json_object *p = kw(s, "properties");
	int rc = 0;

	if (p == NULL) {
		return (0);
	}
	if (!json_object_is_type(p, json_type_object)) {
		snprintf(err, errlen, "%s.properties: must be an object", at);
		return (-1);
	}
	json_object_object_foreach(p, k, v)
	{
		char *sub = xasprintf("%s.properties[%s]", at, k);

		rc = check(ks, v, depth + 1, sub, err, errlen);
		free(sub);
		if (rc != 0) {
			break;
		}
	}
	return (rc);
}

static int
check_sub(struct kschema *ks, json_object *s, const char *key, bool boolok,
        int depth, const char *at, char *err, size_t errlen)
{
	json_object *v = kw(s, key);
	char *sub;
	int rc;

	if (!has_kw(s, key)
	        || (boolok && v != NULL
	                && json_object_is_type(v, json_type_boolean))) {
		return (0);
	}
	sub = xasprintf("%s.%s", at, key);
	rc = check(ks, v, depth + 1, sub, err, errlen);
	free(sub);
	return (rc);
}

static int
check_scalars(json_object *s, const char *at, char *err, size_t errlen)
{
	static const char *const nums[]
	        = { "minimum", "maximum", "minLength", "maxLength", "minItems",
		          "maxItems", "minProperties", "maxProperties", NULL };
	json_object *v;
	size_t i;

	for (i = 0; nums[i] != NULL; i++) {
		if (has_kw(s, nums[i]) && !is_number(kw(s, nums[i]))) {
			snprintf(err, errlen, "%s.%s: must be a number", at,
			        nums[i]);
			return (-1);
		}
	}
	v = kw(s, "required");
	for (i = 0; v != NULL && json_object_is_type(v, json_type_array)
	        && i < json_object_array_length(v);
	        i++) {
		if (!json_object_is_type(json_object_array_get_idx(v, i),
		            json_type_string)) {
			v = NULL;
		}
	}
	if (has_kw(s, "required")
	        && (v == NULL || !json_object_is_type(v, json_type_array))) {
		snprintf(err, errlen, "%s.required: must be a list of strings",
		        at);
		return (-1);
	}
	if (has_kw(s, "enum")
	        && !json_object_is_type(kw(s, "enum"), json_type_array)) {
		snprintf(err, errlen, "%s.enum: must be a list", at);
		return (-1);
	}
	return (0);
}

static int
check_type(struct kschema *ks, json_object *s, const char *at, char *err,
        size_t errlen)
{
	const char *t = kw_str(s, "type"), *pat;

	if (has_kw(s, "type") && (t == NULL || !known_type(t))) {
		snprintf(err, errlen, "%s.type: unsupported value %s", at,
		        t != NULL ? t : "(not a string)");
		return (-1);
	}
	if (!has_kw(s, "pattern")) {
		return (0);
	}
	pat = kw_str(s, "pattern");
	if (pat == NULL || compile_pattern(ks, s, pat) != 0) {
		snprintf(err, errlen,
		        "%s.pattern: unsupported or invalid "
		        "regular expression",
		        at);
		return (-1);
	}
	return (0);
}

static int
check(struct kschema *ks, json_object *s, int depth, const char *at, char *err,
        size_t errlen)
{
	if (depth > KSCHEMA_MAX_DEPTH) {
		snprintf(err, errlen, "schema nested deeper than %d at %s",
		        KSCHEMA_MAX_DEPTH, at);
		return (-1);
	}
	if (s == NULL || !json_object_is_type(s, json_type_object)) {
		snprintf(err, errlen, "%s: schema must be an object", at);
		return (-1);
	}
	if (check_type(ks, s, at, err, errlen) != 0
	        || check_scalars(s, at, err, errlen) != 0
	        || check_props(ks, s, depth, at, err, errlen) != 0
	        || check_list(ks, s, "allOf", depth, at, err, errlen) != 0
	        || check_list(ks, s, "anyOf", depth, at, err, errlen) != 0
	        || check_list(ks, s, "oneOf", depth, at, err, errlen) != 0) {
		return (-1);
	}
	if (check_sub(ks, s, "items", false, depth, at, err, errlen) != 0
	        || check_sub(ks, s, "not", false, depth, at, err, errlen) != 0
	        || check_sub(ks, s, "additionalProperties", true, depth, at,
	                   err, errlen)
	                != 0) {
		return (-1);
	}
	return (0);
}

struct kschema *
kschema_new(json_object *schema, char *err, size_t errlen)
{
	struct kschema *ks = xcalloc(1, sizeof(*ks));

	if (errlen > 0) {
		*err = '\0';
	}
	if (schema == NULL
	        || json_object_deep_copy(schema, &ks->root, NULL) != 0) {
		snprintf(err, errlen, "openAPIV3Schema: missing");
		free(ks);
		return (NULL);
	}
	if (check(ks, ks->root, 0, "openAPIV3Schema", err, errlen) != 0) {
		kschema_free(ks);
		return (NULL);
	}
	return (ks);
}

json_object *
kschema_root(const struct kschema *ks)
{
	return (ks->root);
}

void
kschema_free(struct kschema *ks)
{
	size_t i;

	if (ks == NULL) {
		return;
	}
	for (i = 0; i < ks->nrx; i++) {
		regfree(&ks->rx[i].re);
	}
	free(ks->rx);
	json_object_put(ks->root);
	free(ks);
}

/* ------------------------------------------------------------------ */
/* Defaulting                                                         */

static void default_walk(json_object *s, json_object *x, bool root);

static json_object *
copy_value(json_object *v)
{
	json_object *dst = NULL;

	if (v == NULL || json_object_deep_copy(v, &dst, NULL) != 0) {
		return (NULL);
	}
	return (dst);
}

/* Fills missing (or non-nullable null) properties with their defaults and
 * drops non-nullable nulls that have none. */
static void
default_props(json_object *s, json_object *x, bool root)
{
	json_object *props = kw(s, "properties"), *v, *d;

	if (props == NULL || !json_object_is_type(props, json_type_object)) {
		return;
	}
	json_object_object_foreach(props, k, ps)
	{
		bool present = json_object_object_get_ex(x, k, &v);

		if (root && resource_key(k)) {
			continue;
		}
		if (present && (v != NULL || flag(ps, "nullable"))) {
			continue;
		}
		if (!has_kw(ps, "default")) {
			if (present) {
				json_object_object_del(x, k);
			}
			continue;
		}
		d = kw(ps, "default");
		json_object_object_add(x, k, copy_value(d));
	}
}

/* Drops null map values whose additionalProperties schema is neither
 * nullable nor defaulted. */
static void
drop_addl_nulls(json_object *s, json_object *x, bool root)
{
	json_object *as = addl_schema(s);
	struct buf keys = BUF_INIT;
	const char *p;

	if (as == NULL || flag(as, "nullable") || has_kw(as, "default")) {
		return;
	}
	json_object_object_foreach(x, k, v)
	{
		if (v == NULL && prop_schema(s, k) == NULL
		        && !(root && resource_key(k))) {
			buf_append(&keys, k, strlen(k) + 1);
		}
	}
	for (p = keys.data; p != NULL && p < keys.data + keys.len;
	        p += strlen(p) + 1) {
		json_object_object_del(x, p);
	}
	buf_fini(&keys);
}

static void
default_walk(json_object *s, json_object *x, bool root)
{
	json_object *ps;
	size_t i;

	if (x == NULL || s == NULL) {
		return;
	}
	if (json_object_is_type(x, json_type_array)) {
		ps = kw(s, "items");
		for (i = 0; ps != NULL && i < json_object_array_length(x);
		        i++) {
			default_walk(
			        ps, json_object_array_get_idx(x, i), false);
		}
		return;
	}
	if (!json_object_is_type(x, json_type_object)) {
		return;
	}
	default_props(s, x, root);
	drop_addl_nulls(s, x, root);
	json_object_object_foreach(x, k, v)
	{
		if (root && resource_key(k)) {
			continue;
		}
		ps = prop_schema(s, k);
		if (ps == NULL) {
			ps = addl_schema(s);
		}
		default_walk(
		        ps, v, flag(ps, "x-kubernetes-embedded-resource"));
	}
}

int
kschema_default(const struct kschema *ks, json_object *obj)
{
	if (ks == NULL || obj == NULL
	        || !json_object_is_type(obj, json_type_object)) {
		return (-1);
	}
	default_walk(ks->root, obj, true);
	return (0);
}

/* ------------------------------------------------------------------ */
/* Pruning                                                            */

struct pctx {
	struct buf *out;
	int n;
};

static void prune_walk(
        struct pctx *, json_object *, json_object *, const char *, bool);

static void
record(struct pctx *pc, const char *path)
{
	if (pc->out != NULL) {
		if (pc->out->len > 0) {
			buf_putc(pc->out, ',');
		}
		buf_puts(pc->out, path);
	}
	pc->n++;
}

static void
prune_array(struct pctx *pc, json_object *s, json_object *x, const char *path)
{
	json_object *items = kw(s, "items");
	size_t i;

	if (s != NULL && items == NULL
	        && flag(s, "x-kubernetes-preserve-unknown-fields")) {
		return;
	}
	for (i = 0; i < json_object_array_length(x); i++) {
		char *sub = xasprintf("%s[%zu]", path, i);

		prune_walk(pc, items, json_object_array_get_idx(x, i), sub,
		        false);
		free(sub);
	}
}

static void
prune_object(struct pctx *pc, json_object *s, json_object *x, const char *path,
        bool root)
{
	bool keep = flag(s, "x-kubernetes-preserve-unknown-fields")
	        || addl_true(s);
	struct buf gone = BUF_INIT;
	const char *p;

	json_object_object_foreach(x, k, v)
	{
		json_object *ps = prop_schema(s, k);
		char *sub;

		if (root && resource_key(k)) {
			continue;
		}
		if (ps == NULL) {
			ps = addl_schema(s);
		}
		sub = child_path(path, k);
		if (ps != NULL) {
			prune_walk(pc, ps, v, sub,
			        flag(ps, "x-kubernetes-embedded-resource"));
		} else if (!keep) {
			buf_append(&gone, k, strlen(k) + 1);
			record(pc, sub);
		}
		free(sub);
	}
	for (p = gone.data; p != NULL && p < gone.data + gone.len;
	        p += strlen(p) + 1) {
		json_object_object_del(x, p);
	}
	buf_fini(&gone);
}

static void
prune_walk(struct pctx *pc, json_object *s, json_object *x, const char *path,
        bool root)
{
	if (x == NULL) {
		return;
	}
	if (json_object_is_type(x, json_type_array)) {
		prune_array(pc, s, x, path);
	} else if (json_object_is_type(x, json_type_object)) {
		prune_object(pc, s, x, path, root);
	}
}

int
kschema_prune(
        const struct kschema *ks, json_object *obj, struct buf *pruned_paths)
{
	struct pctx pc = { pruned_paths, 0 };

	if (ks == NULL || obj == NULL
	        || !json_object_is_type(obj, json_type_object)) {
		return (-1);
	}
	prune_walk(&pc, ks->root, obj, "", true);
	return (pc.n);
}

/* ------------------------------------------------------------------ */
/* Value formatting (Go fmt as used by apimachinery field.Error)       */

/* Go's %v of a float64: shortest round-trip digits, %e form when the
 * exponent is < -4 or >= 6 (strconv 'g' with the shortest precision). */
static void
go_float(struct buf *out, double d)
{
	char tmp[64];
	int prec, exp;

	if (isnan(d) || isinf(d)) {
		buf_puts(out, isnan(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d) {
			break;
		}
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
	exp = atoi(strchr(tmp, 'e') + 1);
	if (exp < -4 || exp >= 6) {
		buf_puts(out, tmp);
		return;
	}
	buf_printf(out, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
}

/* Go's %q of a string (printable bytes >= 0x80 kept as they are). */
static void
go_quote(struct buf *out, const char *s, size_t len)
{
	size_t i;

	buf_putc(out, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			buf_printf(out, "\\%c", c);
		} else if (c == '\n') {
			buf_puts(out, "\\n");
		} else if (c == '\t') {
			buf_puts(out, "\\t");
		} else if (c == '\r') {
			buf_puts(out, "\\r");
		} else if (c < 0x20 || c == 0x7f) {
			buf_printf(out, "\\x%02x", c);
		} else {
			buf_putc(out, (char)c);
		}
	}
	buf_putc(out, '"');
}

static void
go_value(struct buf *out, json_object *v)
{
	char *js;

	switch (json_object_get_type(v)) {
	case json_type_null:
		buf_puts(out, "\"null\"");
		break;
	case json_type_string:
		go_quote(out, json_object_get_string(v),
		        (size_t)json_object_get_string_len(v));
		break;
	case json_type_int:
		buf_puts(out, json_object_get_string(v));
		break;
	case json_type_double:
		go_float(out, json_object_get_double(v));
		break;
	case json_type_boolean:
		buf_puts(out, json_object_get_boolean(v) ? "true" : "false");
		break;
	default:
		js = jx_to_string(v);
		buf_puts(out, js);
		free(js);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Causes                                                             */

static void
add_cause(struct vctx *v, const char *field, const char *reason,
        char *message /* owned */)
{
	if (v->n >= KSCHEMA_MAX_CAUSES) {
		free(message);
		return;
	}
	if (v->n == v->cap) {
		v->cap = v->cap == 0 ? 4 : v->cap * 2;
		v->c = xreallocarray(v->c, v->cap, sizeof(*v->c));
	}
	v->c[v->n].field = xstrdup(field);
	v->c[v->n].reason = xstrdup(reason);
	v->c[v->n].message = message;
	v->n++;
}

/* field.Invalid / field.TypeInvalid: "Invalid value: <v>: <detail>". */
static void
add_invalid(struct vctx *v, const char *field, const char *reason,
        json_object *val, const char *detail)
{
	struct buf m = BUF_INIT;

	buf_puts(&m, "Invalid value: ");
	go_value(&m, val);
	buf_printf(&m, ": %s", detail);
	add_cause(v, field, reason, buf_detach(&m, NULL));
}

/* Invalid whose detail is "<field> in body <what>". */
static void
add_body(struct vctx *v, const char *field, json_object *val, const char *what)
{
	char *d = xasprintf("%s in body %s", field, what);

	add_invalid(v, field, "FieldValueInvalid", val, d);
	free(d);
}

void
kschema_causes_free(struct kschema_cause *causes, size_t n)
{
	size_t i;

	for (i = 0; causes != NULL && i < n; i++) {
		free(causes[i].field);
		free(causes[i].reason);
		free(causes[i].message);
	}
	free(causes);
}

/* ------------------------------------------------------------------ */
/* Validation                                                         */

static void validate(
        struct vctx *, json_object *, json_object *, const char *, bool);

static const char *
type_name(json_object *x)
{
	switch (json_object_get_type(x)) {
	case json_type_int:
		return ("integer");
	case json_type_double:
		return ("number");
	case json_type_string:
		return ("string");
	case json_type_boolean:
		return ("boolean");
	case json_type_array:
		return ("array");
	case json_type_object:
		return ("object");
	default:
		return ("null");
	}
}

/* Returns false (after reporting) when x does not have the schema's type. */
static bool
check_value_type(
        struct vctx *v, json_object *s, json_object *x, const char *path)
{
	const char *want = kw_str(s, "type"), *got = type_name(x);
	json_object *gv;
	char *d;

	if (flag(s, "x-kubernetes-int-or-string")) {
		want = "integer,string";
		if (strcmp(got, "integer") == 0
		        || strcmp(got, "string") == 0) {
			return (true);
		}
	} else if (want == NULL || strcmp(want, got) == 0
	        || (strcmp(want, "number") == 0
	                && strcmp(got, "integer") == 0)) {
		return (true);
	}
	if (x == NULL) {
		d = xasprintf("%s in body must be of type %s", path, want);
	} else {
		d = xasprintf("%s in body must be of type %s: \"%s\"", path,
		        want, got);
	}
	gv = json_object_new_string(got);
	add_invalid(v, path, "FieldValueTypeInvalid", gv, d);
	json_object_put(gv);
	free(d);
	return (false);
}

static void
check_enum(struct vctx *v, json_object *s, json_object *x, const char *path)
{
	json_object *e = kw(s, "enum");
	struct buf m = BUF_INIT;
	size_t i, n;

	if (e == NULL) {
		return;
	}
	n = json_object_array_length(e);
	for (i = 0; i < n; i++) {
		if (jx_equal(json_object_array_get_idx(e, i), x)) {
			return;
		}
	}
	buf_puts(&m, "Unsupported value: ");
	go_value(&m, x);
	buf_puts(&m, ": supported values: ");
	for (i = 0; i < n; i++) {
		json_object *ev = json_object_array_get_idx(e, i);
		char *js = json_object_is_type(ev, json_type_string)
		        ? xstrdup(json_object_get_string(ev))
		        : jx_to_string(ev);

		buf_puts(&m, i > 0 ? ", " : "");
		go_quote(&m, js, strlen(js));
		free(js);
	}
	add_cause(v, path, "FieldValueNotSupported", buf_detach(&m, NULL));
}

static size_t
code_points(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			n++;
		}
	}
	return (n);
}

static bool
valid_date(const char *s)
{
	char buf[64];
	int64_t us;

	if (strlen(s) != 10) {
		return (false);
	}
	snprintf(buf, sizeof(buf), "%sT00:00:00Z", s);
	return (timefmt_parse(buf, &us) == 0);
}

static void
check_format(struct vctx *v, json_object *s, json_object *x, const char *path)
{
	const char *f = kw_str(s, "format"), *str = json_object_get_string(x);
	struct buf m = BUF_INIT;
	int64_t us;
	bool ok = true;

	if (f == NULL) {
		return;
	}
	if (strcmp(f, "date-time") == 0 || strcmp(f, "datetime") == 0) {
		ok = timefmt_parse(str, &us) == 0;
	} else if (strcmp(f, "date") == 0) {
		ok = valid_date(str);
	}
	if (ok) {
		return;
	}
	buf_printf(&m, "%s in body must be of type %s: ", path, f);
	go_quote(&m, str, strlen(str));
	add_invalid(v, path, "FieldValueTypeInvalid", x, buf_str(&m));
	buf_fini(&m);
}

static void
check_string(struct vctx *v, json_object *s, json_object *x, const char *path)
{
	const char *str = json_object_get_string(x), *pat;
	size_t n = code_points(str, (size_t)json_object_get_string_len(x));
	const regex_t *re;
	json_object *lim;
	char *d;

	if ((lim = kw(s, "maxLength")) != NULL
	        && (double)n > json_object_get_double(lim)) {
		int64_t max = json_object_get_int64(lim);

		add_cause(v, path, "FieldValueTooLong",
		        xasprintf("Too long: "
		                  "may not be more than %lld %s",
		                (long long)max, max == 1 ? "byte" : "bytes"));
	}
	if ((lim = kw(s, "minLength")) != NULL
	        && (double)n < json_object_get_double(lim)) {
		d = xasprintf("should be at least %lld chars long",
		        (long long)json_object_get_int64(lim));
		add_body(v, path, x, d);
		free(d);
	}
	pat = kw_str(s, "pattern");
	re = find_rx(v->ks, s);
	if (pat != NULL && re != NULL && regexec(re, str, 0, NULL, 0) != 0) {
		d = xasprintf("should match '%s'", pat);
		add_body(v, path, x, d);
		free(d);
	}
	check_format(v, s, x, path);
}

static void
check_bound(struct vctx *v, json_object *s, json_object *x, const char *path,
        bool upper)
{
	json_object *lim = kw(s, upper ? "maximum" : "minimum");
	bool excl = flag(s, upper ? "exclusiveMaximum" : "exclusiveMinimum");
	double a = json_object_get_double(x), b;
	struct buf m = BUF_INIT;
	bool bad;

	if (lim == NULL) {
		return;
	}
	b = json_object_get_double(lim);
	if (upper) {
		bad = excl ? a >= b : a > b;
	} else {
		bad = excl ? a <= b : a < b;
	}
	if (!bad) {
		return;
	}
	buf_printf(&m, "should be %s than%s ", upper ? "less" : "greater",
	        excl ? "" : " or equal to");
	go_float(&m, b);
	add_body(v, path, x, buf_str(&m));
	buf_fini(&m);
}

/* minItems/maxItems or minProperties/maxProperties (kw_suffix "Items" or
 * "Properties") against the count n of x's elements. */
static void
check_count(struct vctx *v, json_object *s, json_object *x, const char *path,
        size_t n, const char *kw_suffix, const char *noun)
{
	char key[32];
	json_object *lim;
	char *d;

	snprintf(key, sizeof(key), "min%s", kw_suffix);
	if ((lim = kw(s, key)) != NULL
	        && (double)n < json_object_get_double(lim)) {
		d = xasprintf("should have at least %lld %s",
		        (long long)json_object_get_int64(lim), noun);
		add_body(v, path, x, d);
		free(d);
	}
	snprintf(key, sizeof(key), "max%s", kw_suffix);
	if ((lim = kw(s, key)) != NULL
	        && (double)n > json_object_get_double(lim)) {
		int64_t max = json_object_get_int64(lim);

		add_cause(v, path, "FieldValueTooMany",
		        xasprintf("Too many: "
		                  "%zu: must have at most %lld %s",
		                n, (long long)max,
		                max == 1 ? "item" : "items"));
	}
}

static void
check_array(struct vctx *v, json_object *s, json_object *x, const char *path)
{
	size_t i, n = json_object_array_length(x);
	json_object *items = kw(s, "items");

	check_count(v, s, x, path, n, "Items", "items");
	for (i = 0; items != NULL && i < n; i++) {
		char *sub = xasprintf("%s[%zu]", path, i);

		validate(
		        v, items, json_object_array_get_idx(x, i), sub, false);
		free(sub);
	}
}

static void
check_required(
        struct vctx *v, json_object *s, json_object *x, const char *path)
{
	json_object *req = kw(s, "required");
	size_t i;

	for (i = 0; req != NULL && i < json_object_array_length(req); i++) {
		const char *k = json_object_get_string(
		        json_object_array_get_idx(req, i));
		char *sub;

		if (json_object_object_get_ex(x, k, NULL)) {
			continue;
		}
		sub = child_path(path, k);
		add_cause(v, sub, "FieldValueRequired",
		        xstrdup("Required value"));
		free(sub);
	}
}

static void
check_object(struct vctx *v, json_object *s, json_object *x, const char *path,
        bool root)
{
	size_t n = (size_t)json_object_object_length(x);

	check_count(v, s, x, path, n, "Properties", "properties");
	check_required(v, s, x, path);
	json_object_object_foreach(x, k, val)
	{
		json_object *ps = prop_schema(s, k);
		char *sub;

		if (root && strcmp(k, "metadata") == 0) {
			continue;
		}
		if (ps == NULL) {
			ps = addl_schema(s);
		}
		if (ps == NULL) {
			continue;
		}
		sub = child_path(path, k);
		validate(v, ps, val, sub,
		        flag(ps, "x-kubernetes-embedded-resource"));
		free(sub);
	}
}

/* Number of causes x gives against schema s (0: it validates). */
static size_t
count_causes(struct vctx *v, json_object *s, json_object *x, const char *path)
{
	struct vctx sub = { v->ks, NULL, 0, 0 };
	size_t n;

	validate(&sub, s, x, path, false);
	n = sub.n;
	kschema_causes_free(sub.c, sub.n);
	return (n);
}

static void
check_composition(
        struct vctx *v, json_object *s, json_object *x, const char *path)
{
	json_object *l;
	size_t i, ok;

	if ((l = kw(s, "allOf")) != NULL) {
		for (i = 0; i < json_object_array_length(l); i++) {
			validate(v, json_object_array_get_idx(l, i), x, path,
			        false);
		}
	}
	if ((l = kw(s, "anyOf")) != NULL) {
		for (i = 0, ok = 0; ok == 0 && i < json_object_array_length(l);
		        i++) {
			ok += count_causes(v, json_object_array_get_idx(l, i),
			              x, path)
			        == 0;
		}
		if (ok == 0) {
			add_body(v, path, x,
			        "must validate at least one "
			        "schema (anyOf)");
		}
	}
	if ((l = kw(s, "oneOf")) != NULL) {
		for (i = 0, ok = 0; i < json_object_array_length(l); i++) {
			ok += count_causes(v, json_object_array_get_idx(l, i),
			              x, path)
			        == 0;
		}
		if (ok != 1) {
			add_body(v, path, x,
			        "must validate one and only one "
			        "schema (oneOf)");
		}
	}
	if ((l = kw(s, "not")) != NULL && count_causes(v, l, x, path) == 0) {
		add_body(v, path, x, "must not validate the schema (not)");
	}
}

static void
validate(struct vctx *v, json_object *s, json_object *x, const char *path,
        bool root)
{
	if (x == NULL && flag(s, "nullable")) {
		return;
	}
	if (x == NULL && !has_kw(s, "type")
	        && !flag(s, "x-kubernetes-int-or-string")) {
		return;
	}
	if (!check_value_type(v, s, x, path)) {
		return;
	}
	check_enum(v, s, x, path);
	check_composition(v, s, x, path);
	switch (json_object_get_type(x)) {
	case json_type_string:
		check_string(v, s, x, path);
		break;
	case json_type_int:
	case json_type_double:
		check_bound(v, s, x, path, false);
		check_bound(v, s, x, path, true);
		break;
	case json_type_array:
		check_array(v, s, x, path);
		break;
	case json_type_object:
		check_object(v, s, x, path, root);
		break;
	default:
		break;
	}
}

int
kschema_validate(const struct kschema *ks, json_object *obj,
        struct kschema_cause **causes, size_t *ncauses)
{
	struct vctx v = { ks, NULL, 0, 0 };

	if (causes == NULL || ncauses == NULL) {
		return (-1);
	}
	*causes = NULL;
	*ncauses = 0;
	if (ks == NULL) {
		return (-1);
	}
	validate(&v, ks->root, obj, "", true);
	*causes = v.c;
	*ncauses = v.n;
	return (v.n > 0 ? 1 : 0);
}

/* ------------------------------------------------------------------ */
/* The 422 message                                                    */

static bool
seen_before(const struct kschema_cause *c, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++) {
		if (strcmp(c[j].field, c[i].field) == 0
		        && strcmp(c[j].message, c[i].message) == 0) {
			return (true);
		}
	}
	return (false);
}

void
kschema_invalid_message(const char *kind, const char *group, const char *name,
        const struct kschema_cause *causes, size_t n, struct buf *out)
{
	size_t i, uniq = 0;
	bool first = true;

	buf_puts(out, kind);
	if (group != NULL && *group != '\0') {
		buf_printf(out, ".%s", group);
	}
	buf_putc(out, ' ');
	go_quote(out, name, strlen(name));
	buf_puts(out, " is invalid: ");
	for (i = 0; i < n; i++) {
		uniq += !seen_before(causes, i);
	}
	if (uniq == 0) {
		buf_puts(out, "<nil>");
		return;
	}
	buf_puts(out, uniq > 1 ? "[" : "");
	for (i = 0; i < n; i++) {
		if (seen_before(causes, i)) {
			continue;
		}
		buf_printf(out, "%s%s%s%s", first ? "" : ", ", causes[i].field,
		        *causes[i].field != '\0' ? ": " : "",
		        causes[i].message);
		first = false;
	}
	buf_puts(out, uniq > 1 ? "]" : "");
}
