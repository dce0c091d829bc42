/*
 * shadow.c: the record table of shadow mode and the summaries of its
 * writes (shadow.h).  The table is an array searched linearly: it is
 * bounded (cap) and touched once per write the supervisor would send.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "supervisor/shadow.h"

struct sh_rec {
	char *controller, *verb, *resource, *ns, *name, *summary;
};

struct shadow {
	struct sh_rec *recs;
	size_t n, cap;
	uint64_t dropped;
};

struct shadow *
sh_new(size_t cap)
{
	struct shadow *sh = xcalloc(1, sizeof(*sh));

	sh->cap = cap > 0 ? cap : SH_DEFAULT_CAP;
	sh->recs = xcalloc(sh->cap, sizeof(*sh->recs));
	return (sh);
}

static void
rec_fini(struct sh_rec *r)
{
	free(r->controller);
	free(r->verb);
	free(r->resource);
	free(r->ns);
	free(r->name);
	free(r->summary);
}

void
sh_free(struct shadow *sh)
{
	if (sh == NULL) {
		return;
	}
	for (size_t i = 0; i < sh->n; i++) {
		rec_fini(&sh->recs[i]);
	}
	free(sh->recs);
	free(sh);
}

static const char *
nz(const char *s)
{
	return (s != NULL ? s : "");
}

static struct sh_rec *
find(struct shadow *sh, const char *resource, const char *ns, const char *name)
{
	for (size_t i = 0; i < sh->n; i++) {
		struct sh_rec *r = &sh->recs[i];
		if (strcmp(r->resource, nz(resource)) == 0
		        && strcmp(r->ns, nz(ns)) == 0
		        && strcmp(r->name, nz(name)) == 0) {
			return (r);
		}
	}
	return (NULL);
}

static bool
rec_same(const struct sh_rec *r, const char *controller, const char *verb,
        const char *summary)
{
	return (strcmp(r->controller, nz(controller)) == 0
	        && strcmp(r->verb, nz(verb)) == 0
	        && strcmp(r->summary, nz(summary)) == 0);
}

int
sh_record(struct shadow *sh, const char *controller, const char *verb,
        const char *resource, const char *ns, const char *name,
        const char *summary)
{
	struct sh_rec *r = find(sh, resource, ns, name);

	if (r != NULL && rec_same(r, controller, verb, summary)) {
		return (0);
	}
	if (r == NULL) {
		if (sh->n >= sh->cap) {
			sh->dropped++;
			return (-1);
		}
		r = &sh->recs[sh->n++];
		r->resource = xstrdup(nz(resource));
		r->ns = xstrdup(nz(ns));
		r->name = xstrdup(nz(name));
	} else {
		free(r->controller);
		free(r->verb);
		free(r->summary);
	}
	r->controller = xstrdup(nz(controller));
	r->verb = xstrdup(nz(verb));
	r->summary = xstrdup(nz(summary));
	return (1);
}

void
sh_forget(struct shadow *sh, const char *resource, const char *ns,
        const char *name)
{
	struct sh_rec *r = find(sh, resource, ns, name);

	if (r == NULL) {
		return;
	}
	rec_fini(r);
	*r = sh->recs[--sh->n];
}

size_t
sh_pending(const struct shadow *sh)
{
	return (sh->n);
}

uint64_t
sh_dropped(const struct shadow *sh)
{
	return (sh->dropped);
}

static int
rec_cmp(const void *pa, const void *pb)
{
	const struct sh_rec *a = *(const struct sh_rec *const *)pa;
	const struct sh_rec *b = *(const struct sh_rec *const *)pb;
	int c = strcmp(a->resource, b->resource);

	if (c == 0) {
		c = strcmp(a->ns, b->ns);
	}
	return (c != 0 ? c : strcmp(a->name, b->name));
}

static json_object *
rec_json(const struct sh_rec *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(
	        o, "controller", json_object_new_string(r->controller));
	json_object_object_add(o, "verb", json_object_new_string(r->verb));
	json_object_object_add(
	        o, "resource", json_object_new_string(r->resource));
	json_object_object_add(o, "namespace", json_object_new_string(r->ns));
	json_object_object_add(o, "name", json_object_new_string(r->name));
	json_object_object_add(
	        o, "summary", json_object_new_string(r->summary));
	return (o);
}

json_object *
sh_json(const struct shadow *sh)
{
	json_object *a = json_object_new_array();
	const struct sh_rec **v;

	if (sh->n == 0) {
		return (a);
	}
	v = xcalloc(sh->n, sizeof(*v));
	for (size_t i = 0; i < sh->n; i++) {
		v[i] = &sh->recs[i];
	}
	qsort(v, sh->n, sizeof(*v), rec_cmp);
	for (size_t i = 0; i < sh->n; i++) {
		json_object_array_add(a, rec_json(v[i]));
	}
	free(v);
	return (a);
}

static const char *const verb_names[] = {
	[IPC_OP_CREATE] = "create",
	[IPC_OP_UPDATE] = "update",
	[IPC_OP_UPDATE_STATUS] = "update-status",
	[IPC_OP_PATCH] = "patch",
	[IPC_OP_APPLY] = "apply",
	[IPC_OP_DELETE] = "delete",
	[IPC_OP_EVENT] = "event",
};

const char *
sh_verb(enum ipc_op op)
{
	if ((size_t)op >= sizeof(verb_names) / sizeof(verb_names[0])
	        || verb_names[op] == NULL) {
		return ("unknown");
	}
	return (verb_names[op]);
}

void
sh_resource(const struct ipc_res *res, char *out, size_t n)
{
	if (res->group != NULL && res->group[0] != '\0') {
		snprintf(out, n, "%s.%s", nz(res->plural), res->group);
	} else {
		snprintf(out, n, "%s", nz(res->plural));
	}
}

/* ---- summaries ---- */

#define SH_PATHS_SHOWN 6

struct acc {
	char *out;
	size_t n, len;
	int shown, more;
	bool secret;
};

/* Appends path (once) to the summary; a Secret's body is one word. */
static void
acc_add(struct acc *a, const char *path)
{
	char p[256];

	snprintf(p, sizeof(p), "%s", path);
	if (a->secret
	        && (strncmp(p, "data", 4) == 0
	                || strncmp(p, "stringData", 10) == 0)) {
		char *dot = strchr(p, '.');
		if (dot != NULL) {
			*dot = '\0';
		}
		snprintf(p + strlen(p), sizeof(p) - strlen(p), "(redacted)");
	}
	size_t pl = strlen(p);
	for (const char *s = a->out; (s = strstr(s, p)) != NULL; s += pl) {
		if ((s == a->out || s[-1] == ' ')
		        && (s[pl] == ',' || s[pl] == '\0')) {
			return; /* already listed */
		}
	}
	if (a->shown >= SH_PATHS_SHOWN) {
		a->more++;
		return;
	}
	a->len += (size_t)snprintf(a->out + a->len, a->n - a->len, "%s%s",
	        a->shown > 0 ? ", " : "", p);
	if (a->len >= a->n) {
		a->len = a->n - 1;
	}
	a->shown++;
}

static void
join(char *out, size_t n, const char *prefix, const char *k)
{
	if (prefix[0] != '\0') {
		snprintf(out, n, "%s.%s", prefix, k);
	} else {
		snprintf(out, n, "%s", k);
	}
}

/* Paths where want and have differ (both ways over objects). */
static void
diff(struct acc *a, const char *prefix, json_object *want, json_object *have)
{
	char p[256];

	if (!json_object_is_type(want, json_type_object)
	        || !json_object_is_type(have, json_type_object)) {
		if (!jx_equal(want, have)) {
			acc_add(a, prefix[0] != '\0' ? prefix : "(object)");
		}
		return;
	}
	json_object_object_foreach(want, k, v)
	{
		join(p, sizeof(p), prefix, k);
		diff(a, p, v, json_object_object_get(have, k));
	}
	json_object_object_foreach(have, hk, hv)
	{
		(void)hv;
		if (!json_object_object_get_ex(want, hk, NULL)) {
			join(p, sizeof(p), prefix, hk);
			acc_add(a, p);
		}
	}
}

/* Paths a merge-like patch (or apply) sets to what have lacks. */
static void
patch_diff(struct acc *a, const char *prefix, json_object *patch,
        json_object *have)
{
	char p[256];

	if (!json_object_is_type(patch, json_type_object)) {
		if (!jx_equal(patch, have)) {
			acc_add(a, prefix[0] != '\0' ? prefix : "(object)");
		}
		return;
	}
	json_object_object_foreach(patch, k, v)
	{
		json_object *h = json_object_is_type(have, json_type_object)
		        ? json_object_object_get(have, k)
		        : NULL;
		join(p, sizeof(p), prefix, k);
		if (v == NULL) {
			if (h != NULL) {
				acc_add(a, p); /* removes it */
			}
			continue;
		}
		patch_diff(a, p, v, h);
	}
}

static const char *const ignored[] = {
	"metadata.resourceVersion",
	"metadata.managedFields",
	"metadata.uid",
	"metadata.creationTimestamp",
	"metadata.generation",
	"metadata.selfLink",
	"metadata.deletionTimestamp",
	"metadata.deletionGracePeriodSeconds",
	"apiVersion",
	"kind",
	"status",
	NULL,
};

static void
update_diff(struct acc *a, json_object *want, json_object *have)
{
	json_object *w = jx_copy_stripa(want, ignored);
	json_object *h = jx_copy_stripa(have, ignored);

	diff(a, "", w, h);
	json_object_put(w);
	json_object_put(h);
}

static void
summarize(struct acc *a, const struct ipc_write *wr, json_object *cached)
{
	switch (wr->op) {
	case IPC_OP_CREATE:
		if (cached == NULL) {
			acc_add(a, "new object");
		} else {
			update_diff(a, wr->object, cached);
		}
		return;
	case IPC_OP_UPDATE:
		update_diff(a, wr->object, cached);
		return;
	case IPC_OP_UPDATE_STATUS:
		diff(a, "status", jx_get(wr->object, "status"),
		        jx_get(cached, "status"));
		return;
	case IPC_OP_PATCH:
		if (wr->patch_type == IPC_PATCH_JSON) {
			acc_add(a, "json patch");
			return;
		}
		patch_diff(a, "", wr->patch, cached);
		return;
	case IPC_OP_APPLY:
		patch_diff(a, "", wr->object, cached);
		return;
	case IPC_OP_DELETE:
		acc_add(a, cached != NULL ? "object exists" : "object");
		return;
	default:
		acc_add(a, "event");
		return;
	}
}

void
sh_summary(
        const struct ipc_write *wr, json_object *cached, char *out, size_t n)
{
	struct acc a = { .out = out, .n = n };

	if (n == 0) {
		return;
	}
	out[0] = '\0';
	a.secret = (wr->res.group == NULL || wr->res.group[0] == '\0')
	        && wr->res.plural != NULL
	        && strcmp(wr->res.plural, "secrets") == 0;
	summarize(&a, wr, cached);
	if (a.more > 0 && a.len < n) {
		snprintf(out + a.len, n - a.len, ", +%d more", a.more);
	}
}
