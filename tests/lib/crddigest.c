/*
 * crddigest.c: the CRD digest of crddigest.h: writing it from CRD
 * documents (crddigest_of, crddigest_files) and rebuilding a CRD from it
 * (crddigest_crd).  Pure logic on json-c objects and text; the only I/O
 * is reading the files crddigest_files is given.
 */
#include "tests/lib/crddigest.h"

#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"

const char crddigest_header[]
        = "# CRD digest: the facts of the upstream Sympozium CRDs, no "
          "description\n"
          "# text, one per line: CRD VERSION PATH KEY JSON (see "
          "tests/lib/crddigest.h).\n"
          "# Written by bin/tests/crd-digest from the reference tree "
          "(make crd-digest);\n"
          "# test_crds checks it against the tree.  Do not edit.\n";

/* CRD-level and version-level keys that are facts (descriptions aside). */
static const char *const crd_keys[] = { "apiVersion", "kind", "metadata.name",
	"spec.group", "spec.names", "spec.scope", "spec.conversion",
	"spec.preserveUnknownFields", NULL };
static const char *const version_keys[] = { "served", "storage", "deprecated",
	"deprecationWarning", "subresources", "additionalPrinterColumns",
	"selectableFields", NULL };
/* Schema keywords whose value holds schemas (their descriptions go). */
static const char *const schema_list_keys[]
        = { "anyOf", "allOf", "oneOf", "not", NULL };

struct lines {
	char **v;
	size_t n, cap;
};

static void
lines_add(struct lines *l, char *line)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = line;
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The lines sorted and joined (one per line); frees them. */
static char *
lines_join(struct lines *l, const char *head)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, head);
	if (l->n > 0) {
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
	}
	for (size_t i = 0; i < l->n; i++) {
		buf_printf(&b, "%s\n", l->v[i]);
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
	return (buf_detach(&b, NULL));
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

/* ---- canonical JSON: compact, object keys sorted ---- */

static void canon(json_object *o, struct buf *b, bool strip_desc);

static void
canon_object(json_object *o, struct buf *b, bool strip_desc)
{
	struct lines keys = { 0 };

	json_object_object_foreach(o, k, v)
	{
		(void)v;
		if (!strip_desc || strcmp(k, "description") != 0) {
			lines_add(&keys, k);
		}
	}
	if (keys.n > 0) {
		qsort(keys.v, keys.n, sizeof(*keys.v), cmp_str);
	}
	buf_putc(b, '{');
	for (size_t i = 0; i < keys.n; i++) {
		json_object *ks = json_object_new_string(keys.v[i]);
		char *s = jx_to_string(ks);

		buf_printf(b, "%s%s:", i > 0 ? "," : "", s);
		canon(json_object_object_get(o, keys.v[i]), b, strip_desc);
		free(s);
		json_object_put(ks);
	}
	buf_putc(b, '}');
	free(keys.v);
}

/* strip_desc: drop "description" members (inside schemas only). */
static void
canon(json_object *o, struct buf *b, bool strip_desc)
{
	char *s;

	if (json_object_is_type(o, json_type_object)) {
		canon_object(o, b, strip_desc);
		return;
	}
	if (json_object_is_type(o, json_type_array)) {
		buf_putc(b, '[');
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			buf_puts(b, i > 0 ? "," : "");
			canon(json_object_array_get_idx(o, i), b, strip_desc);
		}
		buf_putc(b, ']');
		return;
	}
	s = jx_to_string(o);
	buf_puts(b, s);
	free(s);
}

/* ---- writing ---- */

struct emit {
	const char *crd, *ver;
	struct lines *out;
	char *err;
	size_t errlen;
	int rc;
};

static void
emit(struct emit *e, const char *path, const char *key, json_object *v,
        bool strip_desc)
{
	struct buf b = BUF_INIT;

	buf_printf(&b, "%s %s %s %s ", e->crd, e->ver, path, key);
	canon(v, &b, strip_desc);
	lines_add(e->out, buf_detach(&b, NULL));
}

/* A property name the path syntax holds unambiguously. */
static bool
name_ok(const char *k)
{
	return (k[0] != '\0' && strcspn(k, " .[]{}\n") == strlen(k));
}

static void emit_node(struct emit *e, const char *path, json_object *node);

static void
emit_child(struct emit *e, const char *path, const char *suffix,
        json_object *node)
{
	char *p = xasprintf("%s%s", path, suffix);

	emit_node(e, p, node);
	free(p);
}

static void
emit_properties(struct emit *e, const char *path, json_object *props)
{
	json_object_object_foreach(props, k, v)
	{
		char *sfx = xasprintf(".%s", k);

		if (!name_ok(k)) {
			snprintf(e->err, e->errlen, "%s %s: property \"%s\"",
			        e->crd, path, k);
			e->rc = -1;
		} else {
			emit_child(e, path, sfx, v);
		}
		free(sfx);
	}
}

/* One line per keyword of the node at path ("" is the root), then its
 * sub-schemas; a node with no keyword and no sub-schema gets "- {}". */
static void
emit_node(struct emit *e, const char *path, json_object *node)
{
	const char *p = path[0] != '\0' ? path : ".";
	size_t before = e->out->n;

	json_object_object_foreach(node, k, v)
	{
		bool sub = json_object_is_type(v, json_type_object);

		if (strcmp(k, "description") == 0) {
			continue;
		} else if (strcmp(k, "properties") == 0 && sub) {
			emit_properties(e, path, v);
		} else if (strcmp(k, "items") == 0 && sub) {
			emit_child(e, path, "[]", v);
		} else if (strcmp(k, "additionalProperties") == 0 && sub) {
			emit_child(e, path, "{}", v);
		} else {
			emit(e, p, k, v, in_list(schema_list_keys, k));
		}
	}
	if (e->out->n == before) {
		json_object *empty = json_object_new_object();

		emit(e, p, "-", empty, false);
		json_object_put(empty);
	}
}

/* Printer columns without their descriptions. */
static void
emit_version(struct emit *e, json_object *v)
{
	for (size_t i = 0; version_keys[i] != NULL; i++) {
		json_object *x = NULL;

		if (json_object_object_get_ex(v, version_keys[i], &x)) {
			emit(e, "-", version_keys[i], x, true);
		}
	}
	emit_node(e, "", jx_get(v, "schema.openAPIV3Schema"));
}

char *
crddigest_of(json_object *crd, char *err, size_t errlen)
{
	struct lines out = { 0 };
	struct emit e = { .crd = jx_get_str(crd, "metadata.name"),
		.ver = "-",
		.out = &out,
		.err = err,
		.errlen = errlen };
	json_object *vs = jx_get(crd, "spec.versions"), *names;

	if (e.crd == NULL || !json_object_is_type(vs, json_type_array)) {
		snprintf(err, errlen,
		        "not a CRD (no metadata.name or "
		        "spec.versions)");
		return (NULL);
	}
	for (size_t i = 0; crd_keys[i] != NULL; i++) {
		json_object *x = jx_get(crd, crd_keys[i]);

		if (x != NULL) {
			emit(&e, "-", crd_keys[i], x, false);
		}
	}
	names = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(vs); i++) {
		json_object *v = json_object_array_get_idx(vs, i);

		e.ver = jx_get_str(v, "name") ?: "?";
		json_object_array_add(names, json_object_new_string(e.ver));
		emit_version(&e, v);
	}
	e.ver = "-";
	emit(&e, "-", "versions", names, false);
	json_object_put(names);
	if (e.rc != 0) {
		for (size_t i = 0; i < out.n; i++) {
			free(out.v[i]);
		}
		free(out.v);
		return (NULL);
	}
	return (lines_join(&out, ""));
}

/* Appends the digest of every CRD document of the file to b. */
static int
digest_file(const char *path, struct buf *b, char *err, size_t errlen)
{
	struct buf text = BUF_INIT;
	json_object *docs = NULL;
	int rc = -1;

	if (buf_read_file(&text, path, 64u << 20) != 0) {
		snprintf(err, errlen, "%s: cannot read", path);
	} else if ((docs = yamlj_parse_all(text.data, text.len, err, errlen))
	        != NULL) {
		rc = 0;
	}
	for (size_t i = 0; rc == 0 && i < json_object_array_length(docs);
	        i++) {
		json_object *d = json_object_array_get_idx(docs, i);
		const char *kind = jx_get_str(d, "kind");
		char *one;

		if (kind == NULL || strcmp(kind, "CustomResourceDefinition")) {
			continue;
		}
		one = crddigest_of(d, err, errlen);
		rc = one != NULL ? 0 : -1;
		buf_puts(b, one != NULL ? one : "");
		free(one);
	}
	json_object_put(docs);
	buf_fini(&text);
	return (rc);
}

char *
crddigest_files(const char *pattern, char *err, size_t errlen)
{
	struct buf all = BUF_INIT;
	struct lines out = { 0 };
	glob_t g;
	int rc = 0;

	if (glob(pattern, 0, NULL, &g) != 0) {
		snprintf(err, errlen, "%s: no file", pattern);
		return (NULL);
	}
	for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
		rc = digest_file(g.gl_pathv[i], &all, err, errlen);
	}
	globfree(&g);
	buf_puts(&all, "");
	for (char *s = all.data, *nl; rc == 0 && (nl = strchr(s, '\n'));
	        s = nl + 1) {
		lines_add(&out, xstrndup(s, (size_t)(nl - s)));
	}
	buf_fini(&all);
	if (rc != 0) {
		free(lines_join(&out, ""));
		return (NULL);
	}
	return (lines_join(&out, crddigest_header));
}

/* ---- rebuilding ---- */

/* The member key of o, created as a new object when absent; NULL when o
 * or the member is not an object. */
static json_object *
child(json_object *o, const char *key)
{
	json_object *c;

	if (!json_object_is_type(o, json_type_object)) {
		return (NULL);
	}
	c = json_object_object_get(o, key);
	if (c != NULL && !json_object_is_type(c, json_type_object)) {
		return (NULL);
	}
	if (c == NULL) {
		c = json_object_new_object();
		json_object_object_add(o, key, c);
	}
	return (c);
}

/* The spec.versions entry named name (created, in order of first use),
 * or NULL when spec or spec.versions has the wrong type. */
static json_object *
version_of(json_object *crd, const char *name)
{
	json_object *spec = child(crd, "spec"), *vs, *v;

	if (spec == NULL) {
		return (NULL);
	}
	vs = json_object_object_get(spec, "versions");
	if (vs == NULL) {
		vs = json_object_new_array();
		json_object_object_add(spec, "versions", vs);
	}
	if (!json_object_is_type(vs, json_type_array)) {
		return (NULL);
	}
	for (size_t i = 0; i < json_object_array_length(vs); i++) {
		v = json_object_array_get_idx(vs, i);
		if (strcmp(jx_get_str(v, "name") ?: "", name) == 0) {
			return (v);
		}
	}
	v = json_object_new_object();
	json_object_object_add(v, "name", json_object_new_string(name));
	json_object_array_add(vs, v);
	return (v);
}

/* The schema node at path below root (created), or NULL (bad path). */
static json_object *
node_at(json_object *root, const char *path)
{
	const char *p = strcmp(path, ".") == 0 ? "" : path;
	json_object *n = root;

	while (n != NULL && *p != '\0') {
		if (strncmp(p, "[]", 2) == 0 || strncmp(p, "{}", 2) == 0) {
			n = child(n,
			        p[0] == '[' ? "items"
			                    : "additionalProperties");
			p += 2;
		} else if (*p == '.' && strcspn(p + 1, ".[{") > 0) {
			size_t len = strcspn(p + 1, ".[{");
			char *k = xstrndup(p + 1, len);

			n = child(child(n, "properties"), k);
			free(k);
			p += 1 + len;
		} else {
			return (NULL);
		}
	}
	return (n);
}

/* The versions fact: the names, in order. */
static int
apply_versions(json_object *crd, json_object *names)
{
	if (!json_object_is_type(names, json_type_array)) {
		return (-1);
	}
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		json_object *n = json_object_array_get_idx(names, i);

		if (!json_object_is_type(n, json_type_string)
		        || version_of(crd, json_object_get_string(n))
		                == NULL) {
			return (-1);
		}
	}
	json_object_put(names);
	return (0);
}

/* Applies one fact "VERSION PATH KEY JSON" (the CRD name cut off); takes
 * val on success. */
static int
apply_fact(json_object *crd, char *f[3], json_object *val)
{
	json_object *v, *n;

	if (strcmp(f[0], "-") == 0) {
		return (strcmp(f[2], "versions") == 0
		                ? apply_versions(crd, val)
		                : jx_set_path(crd, f[2], val));
	}
	if ((v = version_of(crd, f[0])) == NULL) {
		return (-1);
	}
	if (strcmp(f[1], "-") == 0) {
		json_object_object_add(v, f[2], val);
		return (0);
	}
	n = node_at(child(child(v, "schema"), "openAPIV3Schema"), f[1]);
	if (n == NULL) {
		return (-1);
	}
	if (strcmp(f[2], "-") == 0) {
		json_object_put(val);
	} else {
		json_object_object_add(n, f[2], val);
	}
	return (0);
}

/* Splits "CRD VERSION PATH KEY JSON": f[0..2] VERSION..KEY, *json. */
static bool
split_line(char *line, const char *name, char *f[3], char **json)
{
	size_t nl = strlen(name);
	char *p;

	if (strncmp(line, name, nl) != 0 || line[nl] != ' ') {
		return (false);
	}
	p = line + nl + 1;
	for (int i = 0; i < 3; i++) {
		char *sp = strchr(p, ' ');

		if (sp == NULL) {
			return (false);
		}
		*sp = '\0';
		f[i] = p;
		p = sp + 1;
	}
	*json = p;
	return (true);
}

json_object *
crddigest_crd(const char *digest, const char *name, char *err, size_t errlen)
{
	json_object *crd = json_object_new_object();
	char *copy = xstrdup(digest), *save = NULL;
	size_t nfacts = 0;
	int rc = 0;

	for (char *l = strtok_r(copy, "\n", &save); rc == 0 && l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		char *f[3], *json;
		json_object *val;

		if (!split_line(l, name, f, &json)) {
			continue;
		}
		val = jx_parse(json, strlen(json), 0, err, errlen);
		if ((val == NULL && strcmp(json, "null") != 0)
		        || apply_fact(crd, f, val) != 0) {
			snprintf(err, errlen, "%s: bad fact %s %s %s", name,
			        f[0], f[1], f[2]);
			json_object_put(val);
			rc = -1;
		}
		nfacts++;
	}
	free(copy);
	if (rc == 0 && nfacts == 0) {
		snprintf(err, errlen, "%s: not in the digest", name);
		rc = -1;
	}
	if (rc != 0) {
		json_object_put(crd);
		return (NULL);
	}
	return (crd);
}
