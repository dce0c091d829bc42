/*
 * ktable.c: server-side printing (spec D.6) for custom resources: the
 * meta.k8s.io/v1 Table kubectl asks for, with a Name column, the CRD's
 * additionalPrinterColumns (simple JSONPaths such as .status.phase), and
 * an Age column when the CRD defines none.  date cells are human
 * durations as the real server renders them.  Built-in resources with a
 * printer (kprint.h: pods, events, namespaces, jobs, deployments,
 * services, configmaps, secrets, leases) get the real server's columns;
 * others are answered as plain JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/kprint.h"
#include "kubesim/ktable.h"

#define TABLE_CT "application/json;as=Table;v=v1;g=meta.k8s.io"

/* Whether Accept entry e (n bytes) is the v1 Table. */
static bool
is_table(const char *e, size_t n)
{
	char *s = xstrndup(e, n);
	bool t = strstr(s, "application/json") != NULL
	        && strstr(s, "as=Table") != NULL && strstr(s, "v=v1") != NULL
	        && strstr(s, "v=v1beta1") == NULL
	        && strstr(s, "g=meta.k8s.io") != NULL;

	free(s);
	return (t);
}

bool
ktable_wanted(const struct kres *res, const char *accept)
{
	const char *p = accept;

	if (accept == NULL
	        || (!(res->flags & KRES_CUSTOM)
	                && kprint_find(res->group, res->plural) == NULL)) {
		return (false);
	}
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		if (is_table(p, n)) {
			return (true);
		}
		if (strstr(p, "as=") == NULL || strstr(p, "as=") > p + n) {
			return (false); /* a plain entry came first */
		}
		p += n;
		if (*p == ',') {
			p++;
		}
	}
	return (false);
}

const char *
ktable_content_type(void)
{
	return (TABLE_CT);
}

enum ktable_include
ktable_include(const char *v)
{
	if (v != NULL && strcmp(v, "Object") == 0) {
		return (KTABLE_OBJECT);
	}
	if (v != NULL && strcmp(v, "None") == 0) {
		return (KTABLE_NONE);
	}
	return (KTABLE_METADATA);
}

/* apimachinery's duration.HumanDuration */
void
ktable_human(int64_t s, char *out, size_t len)
{
	if (s < 0) {
		s = 0;
	}
	if (s < 120) {
		snprintf(out, len, "%" PRId64 "s", s);
	} else if (s < 600) {
		snprintf(out, len, "%" PRId64 "m%" PRId64 "s", s / 60, s % 60);
	} else if (s < 3 * 3600) {
		snprintf(out, len, "%" PRId64 "m", s / 60);
	} else if (s < 8 * 3600) {
		snprintf(out, len, "%" PRId64 "h%" PRId64 "m", s / 3600,
		        (s % 3600) / 60);
	} else if (s < 48 * 3600) {
		snprintf(out, len, "%" PRId64 "h", s / 3600);
	} else if (s < 8 * 86400) {
		snprintf(out, len, "%" PRId64 "d%" PRId64 "h", s / 86400,
		        (s % 86400) / 3600);
	} else if (s < 2 * 365 * 86400) {
		snprintf(out, len, "%" PRId64 "d", s / 86400);
	} else if (s < 8 * 365 * 86400) {
		snprintf(out, len, "%" PRId64 "y%" PRId64 "d",
		        s / (365 * 86400), (s % (365 * 86400)) / 86400);
	} else {
		snprintf(out, len, "%" PRId64 "y", s / (365 * 86400));
	}
}

/* The value at a simple JSONPath (".a.b", ".a[0].b"), or NULL. */
static json_object *
jpath(json_object *obj, const char *path)
{
	char *p = xstrdup(path), *save = NULL;
	json_object *cur = obj;

	for (char *seg = strtok_r(p, ".", &save); seg != NULL && cur != NULL;
	        seg = strtok_r(NULL, ".", &save)) {
		char *br = strchr(seg, '[');
		if (br != NULL) {
			*br = '\0';
		}
		if (seg[0] != '\0') {
			cur = json_object_object_get(cur, seg);
		}
		while (br != NULL && cur != NULL) {
			long i = strtol(br + 1, NULL, 10);
			cur = json_object_is_type(cur, json_type_array)
			        ? json_object_array_get_idx(cur, (size_t)i)
			        : NULL;
			br = strchr(br + 1, '[');
		}
	}
	free(p);
	return (cur);
}

static json_object *
column(const char *name, const char *type, const char *format,
        const char *desc, int priority)
{
	json_object *c = json_object_new_object();

	json_object_object_add(c, "name", json_object_new_string(name));
	json_object_object_add(c, "type", json_object_new_string(type));
	json_object_object_add(c, "format", json_object_new_string(format));
	json_object_object_add(c, "description",
	        json_object_new_string(desc != NULL ? desc : ""));
	json_object_object_add(c, "priority", json_object_new_int(priority));
	return (c);
}

/* A built-in kind's columns (kprint.h). */
static json_object *
builtin_defs(const struct kprint *p)
{
	json_object *defs = json_object_new_array();

	for (const struct kprint_col *c = p->cols; c->name != NULL; c++) {
		json_object_array_add(defs,
		        column(c->name, c->type, c->format, c->desc,
		                c->priority));
	}
	return (defs);
}

static json_object *
definitions(const struct kres *res)
{
	const struct kprint *p = kprint_find(res->group, res->plural);
	json_object *defs;

	if (!(res->flags & KRES_CUSTOM) && p != NULL) {
		return (builtin_defs(p));
	}
	defs = json_object_new_array();
	size_t n = res->columns != NULL
	        ? json_object_array_length(res->columns)
	        : 0;

	json_object_array_add(defs,
	        column("Name", "string", "name",
	                "Name must be unique within a "
	                "namespace.",
	                0));
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(res->columns, i);
		int64_t prio = 0;
		const char *fmt = jx_get_str(c, "format");

		jx_get_int(c, "priority", &prio);
		json_object_array_add(defs,
		        column(jx_get_str(c, "name") ?: "",
		                jx_get_str(c, "type") ?: "string",
		                fmt != NULL ? fmt : "",
		                jx_get_str(c, "description"), (int)prio));
	}
	if (n == 0) {
		json_object_array_add(defs,
		        column("Age", "date", "", "Creation timestamp", 0));
	}
	return (defs);
}

static json_object *
cell(json_object *obj, const char *path, const char *type, int64_t now)
{
	json_object *v = jpath(obj, path);
	int64_t us;
	char h[32];

	if (v == NULL) {
		return (NULL);
	}
	if (type != NULL && strcmp(type, "date") == 0
	        && json_object_is_type(v, json_type_string)
	        && timefmt_parse(json_object_get_string(v), &us) == 0) {
		ktable_human(now - us / 1000000, h, sizeof(h));
		return (json_object_new_string(h));
	}
	if (json_object_is_type(v, json_type_object)
	        || json_object_is_type(v, json_type_array)) {
		return (json_object_new_string(json_object_to_json_string_ext(
		        v, JSON_C_TO_STRING_PLAIN)));
	}
	return (json_object_get(v));
}

static json_object *
row_object(json_object *obj, enum ktable_include inc)
{
	json_object *o;

	if (inc == KTABLE_OBJECT) {
		json_object_deep_copy(obj, &o, NULL);
		return (o);
	}
	o = json_object_new_object();
	json_object_object_add(
	        o, "kind", json_object_new_string("PartialObjectMetadata"));
	json_object_object_add(
	        o, "apiVersion", json_object_new_string("meta.k8s.io/v1"));
	json_object *md = NULL;
	json_object_deep_copy(
	        json_object_object_get(obj, "metadata"), &md, NULL);
	json_object_object_add(o, "metadata", md);
	return (o);
}

static json_object *
row(const struct kres *res, json_object *obj, enum ktable_include inc,
        int64_t now)
{
	const struct kprint *p = kprint_find(res->group, res->plural);
	json_object *r = json_object_new_object();
	json_object *cells;
	size_t n = res->columns != NULL
	        ? json_object_array_length(res->columns)
	        : 0;

	if (!(res->flags & KRES_CUSTOM) && p != NULL) {
		json_object_object_add(r, "cells", p->cells(obj, now));
		if (inc != KTABLE_NONE) {
			json_object_object_add(
			        r, "object", row_object(obj, inc));
		}
		return (r);
	}
	cells = json_object_new_array();
	json_object_array_add(cells,
	        json_object_new_string(
	                jx_get_str(obj, "metadata.name") ?: ""));
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(res->columns, i);
		json_object_array_add(cells,
		        cell(obj, jx_get_str(c, "jsonPath") ?: "",
		                jx_get_str(c, "type"), now));
	}
	if (n == 0) {
		json_object_array_add(cells,
		        cell(obj, ".metadata.creationTimestamp", "date", now));
	}
	json_object_object_add(r, "cells", cells);
	if (inc != KTABLE_NONE) {
		json_object_object_add(r, "object", row_object(obj, inc));
	}
	return (r);
}

json_object *
ktable_new(const struct kres *res, bool with_defs, const char *rv,
        const char *cont)
{
	json_object *t = json_object_new_object();
	json_object *md = json_object_new_object();

	json_object_object_add(t, "kind", json_object_new_string("Table"));
	json_object_object_add(
	        t, "apiVersion", json_object_new_string("meta.k8s.io/v1"));
	if (rv != NULL) {
		json_object_object_add(
		        md, "resourceVersion", json_object_new_string(rv));
	}
	if (cont != NULL) {
		json_object_object_add(
		        md, "continue", json_object_new_string(cont));
	}
	json_object_object_add(t, "metadata", md);
	json_object_object_add(t, "columnDefinitions",
	        with_defs ? definitions(res) : json_object_new_array());
	json_object_object_add(t, "rows", json_object_new_array());
	return (t);
}

void
ktable_add(json_object *table, const struct kres *res, json_object *obj,
        enum ktable_include inc)
{
	json_object_array_add(json_object_object_get(table, "rows"),
	        row(res, obj, inc, (int64_t)time(NULL)));
}
