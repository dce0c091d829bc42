/*
 * yamlj.c: YAML to json-c, the way Kubernetes reads YAML (see yamlj.h for
 * the resolution rules).  Owns the libyaml event loop, the tree builder
 * (an explicit stack of open collections, so nesting depth costs heap, not
 * C stack), the anchor table and the plain-scalar resolver.  Callers: the
 * kubeconfig loader (kapi_conf.c) and, later, CRD/manifest loading.
 *
 * libyaml's document API is not used because it gives untagged scalars
 * the !!str tag, which hides the difference between "!!str 1" and "1".
 */
#include "common/yamlj.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"

#define TAG_PFX "tag:yaml.org,2002:"

/* One open collection. */
struct frame {
	json_object *obj; /* array or object */
	bool is_map;
	char *anchor;        /* to register when complete, or NULL */
	size_t nodes;        /* nodes below this one so far */
	char *key;           /* mapping: key waiting for its value */
	bool key_merge;      /* that key is << */
	json_object *merged; /* mapping: keys from << values */
};

struct builder {
	struct frame *stack;
	size_t depth;
	size_t cap;
	json_object *anchors; /* name -> [nodes, value] */
	size_t expanded;      /* nodes copied by aliases */
	json_object *root;
	char *err;
	size_t errlen;
};

static const char *const null_words[]
        = { "", "~", "null", "Null", "NULL", NULL };
static const char *const true_words[] = { "true", "True", "TRUE", "yes", "Yes",
	"YES", "y", "Y", "on", "On", "ON", NULL };
static const char *const false_words[] = { "false", "False", "FALSE", "no",
	"No", "NO", "n", "N", "off", "Off", "OFF", NULL };

static int fail(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int
fail(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (b->errlen == 0) {
		return (-1);
	}
	if (m != NULL) {
		snprintf(b->err, b->errlen, "%s at line %zu column %zu", msg,
		        m->line + 1, m->column + 1);
	} else {
		snprintf(b->err, b->errlen, "%s", msg);
	}
	return (-1);
}

static bool
in_list(const char *const *list, const char *s)
{
	for (; *list != NULL; list++) {
		if (strcmp(*list, s) == 0) {
			return (true);
		}
	}
	return (false);
}

static int
digit_value(char c)
{
	if (c >= '0' && c <= '9') {
		return (c - '0');
	}
	if (c >= 'a' && c <= 'f') {
		return (c - 'a' + 10);
	}
	if (c >= 'A' && c <= 'F') {
		return (c - 'A' + 10);
	}
	return (99);
}

/* Base prefix of a Go base-0 integer (0x, 0o, 0b, leading 0). */
static unsigned
int_base(const char **pp)
{
	const char *p = *pp;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		*pp = p + 2;
		return (16);
	}
	if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
		*pp = p + 2;
		return (8);
	}
	if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		*pp = p + 2;
		return (2);
	}
	if (p[0] == '0' && p[1] != '\0') {
		*pp = p + 1;
		return (8);
	}
	return (10);
}

/* Go's strconv.ParseInt(s, 0, 64), then ParseUint: NULL when s is not an
 * integer or does not fit. */
static json_object *
parse_int(const char *s)
{
	uint64_t v = 0;
	unsigned base, d;
	bool neg = false;

	if (*s == '+' || *s == '-') {
		neg = *s++ == '-';
	}
	base = int_base(&s);
	if (*s == '\0') {
		return (NULL);
	}
	for (; *s != '\0'; s++) {
		d = (unsigned)digit_value(*s);
		if (d >= base || v > (UINT64_MAX - d) / base) {
			return (NULL);
		}
		v = v * base + d;
	}
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1) {
			return (NULL);
		}
		return (json_object_new_int64(v == (uint64_t)INT64_MAX + 1
		                ? INT64_MIN
		                : -(int64_t)v));
	}
	if (v <= INT64_MAX) {
		return (json_object_new_int64((int64_t)v));
	}
	return (json_object_new_uint64(v));
}

static const char *
skip_digits(const char *p, size_t *n)
{
	*n = 0;
	while (*p >= '0' && *p <= '9') {
		p++;
		(*n)++;
	}
	return (p);
}

/* True when p is an optional exponent ([eE][-+]?[0-9]+) then the end. */
static bool
is_exponent_end(const char *p)
{
	size_t n;

	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-') {
			p++;
		}
		p = skip_digits(p, &n);
		if (n == 0) {
			return (false);
		}
	}
	return (*p == '\0');
}

/* go-yaml v2's float syntax:
 * [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool
is_float(const char *p)
{
	size_t n, m;

	if (*p == '+' || *p == '-') {
		p++;
	}
	p = skip_digits(p, &n);
	if (*p == '.') {
		p = skip_digits(p + 1, &m);
		if (n == 0 && m == 0) {
			return (false);
		}
	} else if (n == 0) {
		return (false);
	}
	return (is_exponent_end(p));
}

/* JSON's number syntax, to keep the written form when it is valid JSON. */
static bool
is_json_number(const char *p)
{
	size_t n;

	if (*p == '-') {
		p++;
	}
	if (*p == '0') {
		p++;
	} else {
		p = skip_digits(p, &n);
		if (n == 0) {
			return (false);
		}
	}
	if (*p == '.') {
		p = skip_digits(p + 1, &n);
		if (n == 0) {
			return (false);
		}
	}
	return (is_exponent_end(p));
}

/* NULL when s is not a finite float. */
static json_object *
parse_float(const char *s)
{
	double d;
	char *end;

	if (!is_float(s)) {
		return (NULL);
	}
	d = strtod(s, &end);
	if (*end != '\0' || isinf(d) || isnan(d)) {
		return (NULL);
	}
	if (is_json_number(s)) {
		return (json_object_new_double_s(d, s));
	}
	return (json_object_new_double(d));
}

/* A number from a plain scalar ('_' dropped as go-yaml does), or NULL. */
static json_object *
parse_number(const char *s, size_t len)
{
	json_object *v;
	char *clean;
	size_t i, n = 0;

	if (len == 0 || strchr("+-0123456789.", s[0]) == NULL || len > 400) {
		return (NULL);
	}
	clean = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] != '_') {
			clean[n++] = s[i];
		}
	}
	clean[n] = '\0';
	if ((v = parse_int(clean)) == NULL) {
		v = parse_float(clean);
	}
	free(clean);
	return (v);
}

/* The value of a plain, untagged scalar (NULL is JSON null). */
static json_object *
resolve_plain(const char *s, size_t len)
{
	json_object *v;

	if (strlen(s) == len) {
		if (in_list(null_words, s)) {
			return (NULL);
		}
		if (in_list(true_words, s)) {
			return (json_object_new_boolean(1));
		}
		if (in_list(false_words, s)) {
			return (json_object_new_boolean(0));
		}
		if ((v = parse_number(s, len)) != NULL) {
			return (v);
		}
	}
	return (json_object_new_string_len(s, (int)len));
}

/* Scalar with an explicit tag.  Returns 0 and *out, 1 when the tag is not
 * one we honour (resolve as untagged), -1 when the value does not fit. */
static int
resolve_tagged(const char *tag, const char *s, size_t len, json_object **out)
{
	bool typed;

	*out = NULL;
	if (strncmp(tag, TAG_PFX, strlen(TAG_PFX)) != 0) {
		return (1);
	}
	tag += strlen(TAG_PFX);
	if (strcmp(tag, "str") == 0 || strcmp(tag, "binary") == 0) {
		*out = json_object_new_string_len(s, (int)len);
		return (0);
	}
	if (strcmp(tag, "null") == 0) {
		return (0);
	}
	typed = strcmp(tag, "int") == 0 || strcmp(tag, "float") == 0
	        || strcmp(tag, "bool") == 0;
	if (strlen(s) != len) {
		/* An embedded NUL fits no number and no boolean. */
		return (typed ? -1 : 1);
	}
	if (strcmp(tag, "bool") == 0) {
		if (in_list(true_words, s) || in_list(false_words, s)) {
			*out = json_object_new_boolean(in_list(true_words, s));
			return (0);
		}
		return (-1);
	}
	if (strcmp(tag, "int") == 0) {
		*out = parse_number(s, len);
		if (*out != NULL
		        && !json_object_is_type(*out, json_type_int)) {
			json_object_put(*out);
			*out = NULL;
		}
		return (*out == NULL ? -1 : 0);
	}
	if (strcmp(tag, "float") == 0) {
		*out = parse_number(s, len);
		if (*out != NULL
		        && !json_object_is_type(*out, json_type_double)) {
			double d = json_object_get_double(*out);

			json_object_put(*out);
			*out = json_object_new_double(d);
		}
		return (*out == NULL ? -1 : 0);
	}
	return (1);
}

/* Text of a mapping key, or NULL when the key is a collection. */
static char *
key_text(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return (xstrdup("null"));
	case json_type_string:
		return (xstrdup(json_object_get_string(v)));
	case json_type_boolean:
	case json_type_int:
	case json_type_double:
		return (xstrdup(json_object_to_json_string(v)));
	default:
		return (NULL);
	}
}

/* Adds every key of src missing from dst (earlier values win). */
static void
merge_missing(json_object *dst, json_object *src)
{
	json_object_object_foreach(src, k, val)
	{
		if (!json_object_object_get_ex(dst, k, NULL)) {
			json_object_object_add(dst, k, json_object_get(val));
		}
	}
}

static int
add_merge(struct builder *b, struct frame *f, json_object *v,
        const yaml_mark_t *m)
{
	size_t i, n;

	if (f->merged == NULL) {
		f->merged = json_object_new_object();
	}
	if (json_object_is_type(v, json_type_object)) {
		merge_missing(f->merged, v);
		return (0);
	}
	if (!json_object_is_type(v, json_type_array)) {
		return (fail(b, m, "merge key value is not a mapping"));
	}
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);

		if (!json_object_is_type(e, json_type_object)) {
			return (fail(
			        b, m, "merge key list holds a non-mapping"));
		}
		merge_missing(f->merged, e);
	}
	return (0);
}

static int
attach_map(struct builder *b, struct frame *f, json_object *v, bool merge,
        const yaml_mark_t *m)
{
	int rc = 0;

	if (f->key == NULL) {
		if ((f->key = key_text(v)) == NULL) {
			rc = fail(b, m, "mapping key is not a scalar");
		}
		f->key_merge = merge;
		json_object_put(v);
		return (rc);
	}
	if (f->key_merge) {
		rc = add_merge(b, f, v, m);
		json_object_put(v);
	} else {
		json_object_object_add(f->obj, f->key, v);
	}
	free(f->key);
	f->key = NULL;
	return (rc);
}

/* Hangs a finished node (ownership taken) on the open collection, or makes
 * it the document root. */
static int
attach(struct builder *b, json_object *v, size_t nodes, bool merge,
        const yaml_mark_t *m)
{
	struct frame *f;

	if (b->depth == 0) {
		json_object_put(b->root);
		b->root = v;
		return (0);
	}
	f = &b->stack[b->depth - 1];
	f->nodes += nodes;
	if (!f->is_map) {
		json_object_array_add(f->obj, v);
		return (0);
	}
	return (attach_map(b, f, v, merge, m));
}

static void
anchor_set(struct builder *b, const char *name, json_object *v, size_t nodes)
{
	json_object *a = json_object_new_array_ext(2);

	json_object_array_add(a, json_object_new_int64((int64_t)nodes));
	json_object_array_add(a, json_object_get(v));
	json_object_object_add(b->anchors, name, a);
}

static int
on_alias(struct builder *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_object *a, *copy = NULL, *src;
	size_t nodes;

	if (!json_object_object_get_ex(b->anchors, name, &a)) {
		return (fail(b, &ev->start_mark, "unknown anchor '%s'", name));
	}
	nodes = (size_t)json_object_get_int64(json_object_array_get_idx(a, 0));
	if (nodes > YAMLJ_MAX_ALIAS_NODES - b->expanded) {
		return (fail(b, &ev->start_mark,
		        "aliases expand to more than %d nodes",
		        YAMLJ_MAX_ALIAS_NODES));
	}
	b->expanded += nodes;
	src = json_object_array_get_idx(a, 1);
	if (src != NULL && (copy = jx_copy(src)) == NULL) {
		return (fail(
		        b, &ev->start_mark, "cannot copy alias '%s'", name));
	}
	return (attach(b, copy, nodes, false, &ev->start_mark));
}

static int
on_scalar(struct builder *b, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	size_t len = ev->data.scalar.length;
	json_object *v = NULL;
	bool merge = false;
	int rc = 1;

	if (tag != NULL && strcmp(tag, TAG_PFX "merge") == 0) {
		merge = true;
	} else if (tag != NULL && strcmp(tag, "!") != 0) {
		rc = resolve_tagged(tag, s, len, &v);
		if (rc < 0) {
			return (fail(b, &ev->start_mark,
			        "value does not match its tag %s", tag));
		}
	}
	if (rc == 1 && !merge) {
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
		        && tag == NULL) {
			merge = strcmp(s, "<<") == 0;
			v = resolve_plain(s, len);
		} else {
			v = json_object_new_string_len(s, (int)len);
		}
	}
	if (merge && v == NULL) {
		v = json_object_new_string("<<");
	}
	if (ev->data.scalar.anchor != NULL) {
		anchor_set(b, (const char *)ev->data.scalar.anchor, v, 1);
	}
	return (attach(b, v, 1, merge, &ev->start_mark));
}

static int
on_start(struct builder *b, const yaml_event_t *ev, bool is_map)
{
	const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor
	                                   : ev->data.sequence_start.anchor;
	struct frame *f;

	if (b->depth >= YAMLJ_MAX_DEPTH) {
		return (fail(b, &ev->start_mark, "nesting deeper than %d",
		        YAMLJ_MAX_DEPTH));
	}
	if (b->depth == b->cap) {
		b->cap = b->cap == 0 ? 16 : b->cap * 2;
		b->stack = xreallocarray(b->stack, b->cap, sizeof(*b->stack));
	}
	f = &b->stack[b->depth++];
	memset(f, 0, sizeof(*f));
	f->is_map = is_map;
	f->obj = is_map ? json_object_new_object() : json_object_new_array();
	if (anchor != NULL) {
		f->anchor = xstrdup((const char *)anchor);
	}
	return (0);
}

static void
frame_fini(struct frame *f)
{
	json_object_put(f->obj);
	json_object_put(f->merged);
	free(f->anchor);
	free(f->key);
}

static int
on_end(struct builder *b, const yaml_event_t *ev)
{
	struct frame f;

	if (b->depth == 0) {
		return (fail(b, &ev->start_mark, "unbalanced collection end"));
	}
	f = b->stack[--b->depth];
	if (f.merged != NULL) {
		merge_missing(f.obj, f.merged);
	}
	if (f.anchor != NULL) {
		anchor_set(b, f.anchor, f.obj, f.nodes + 1);
	}
	json_object_put(f.merged);
	free(f.anchor);
	free(f.key);
	return (attach(b, f.obj, f.nodes + 1, false, &ev->start_mark));
}

static int
on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		json_object_put(b->anchors);
		b->anchors = json_object_new_object();
		json_object_put(b->root);
		b->root = NULL;
		return (0);
	case YAML_ALIAS_EVENT:
		return (on_alias(b, ev));
	case YAML_SCALAR_EVENT:
		return (on_scalar(b, ev));
	case YAML_SEQUENCE_START_EVENT:
		return (on_start(b, ev, false));
	case YAML_MAPPING_START_EVENT:
		return (on_start(b, ev, true));
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return (on_end(b, ev));
	default:
		return (0);
	}
}

static int
parser_error(struct builder *b, const yaml_parser_t *p)
{
	const char *problem = p->problem != NULL ? p->problem : "syntax error";

	if (p->error == YAML_READER_ERROR) {
		return (fail(b, NULL, "yaml: %s at byte %zu", problem,
		        p->problem_offset));
	}
	if (p->context != NULL) {
		/* "did not find expected ',' or ']' (while parsing a flow
		 * sequence) at line 3 column 2" */
		return (fail(b, &p->problem_mark, "yaml: %s (%s)", problem,
		        p->context));
	}
	return (fail(b, &p->problem_mark, "yaml: %s", problem));
}

/* Runs the parser.  docs == NULL: stop after the first document (left in
 * b->root); else append every non-null document to docs. */
static int
run(struct builder *b, const char *text, size_t len, json_object *docs)
{
	yaml_parser_t p;
	yaml_event_t ev;
	yaml_event_type_t type;
	int rc = 0;

	if (len > YAMLJ_MAX_INPUT) {
		return (fail(b, NULL, "yaml: input larger than %zu bytes",
		        YAMLJ_MAX_INPUT));
	}
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	do {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = parser_error(b, &p);
			break;
		}
		rc = on_event(b, &ev);
		type = ev.type;
		yaml_event_delete(&ev);
		if (rc == 0 && type == YAML_DOCUMENT_END_EVENT) {
			if (docs == NULL) {
				break;
			}
			if (b->root != NULL) {
				json_object_array_add(docs, b->root);
				b->root = NULL;
			}
		}
	} while (rc == 0 && type != YAML_STREAM_END_EVENT);
	yaml_parser_delete(&p);
	return (rc);
}

static void
builder_init(struct builder *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	b->err = err;
	b->errlen = errlen;
	if (errlen > 0) {
		err[0] = '\0';
	}
}

static void
builder_fini(struct builder *b)
{
	while (b->depth > 0) {
		frame_fini(&b->stack[--b->depth]);
	}
	free(b->stack);
	json_object_put(b->anchors);
	json_object_put(b->root);
}

int
yamlj_parse_doc(const char *text, size_t len, json_object **out, char *err,
        size_t errlen)
{
	struct builder b;
	int rc;

	builder_init(&b, err, errlen);
	*out = NULL;
	rc = run(&b, text, len, NULL);
	if (rc == 0) {
		*out = b.root;
		b.root = NULL;
	}
	builder_fini(&b);
	return (rc);
}

json_object *
yamlj_parse(const char *text, size_t len, char *err, size_t errlen)
{
	json_object *doc;

	if (yamlj_parse_doc(text, len, &doc, err, errlen) != 0) {
		return (NULL);
	}
	if (doc == NULL && errlen > 0) {
		snprintf(err, errlen, "yaml: no document, or a null one");
	}
	return (doc);
}

json_object *
yamlj_parse_all(const char *text, size_t len, char *err, size_t errlen)
{
	struct builder b;
	json_object *docs = json_object_new_array();

	builder_init(&b, err, errlen);
	if (run(&b, text, len, docs) != 0) {
		json_object_put(docs);
		docs = NULL;
	}
	builder_fini(&b);
	return (docs);
}
