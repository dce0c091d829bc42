/*
 * kstate.c: the snapshot of kstate.h: loading every kind through the kapi
 * client, the owner -> children index, the children comparison and the
 * mismatch list, and the readers the expectation models share.
 */
#include "tests/lib/kstate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"

#define OWNER_API "sympozium.ai/v1alpha1"

const char *
kstate_str(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

int64_t
kstate_int(json_object *o, const char *path)
{
	int64_t v = -1;

	return (jx_get_int(o, path, &v) == 0 ? v : -1);
}

json_object *
kstate_controller_ref(json_object *o)
{
	json_object *refs = jx_get(o, "metadata.ownerReferences");

	for (size_t i = 0; refs != NULL && i < json_object_array_length(refs);
	        i++) {
		json_object *r = json_object_array_get_idx(refs, i);
		bool c = false;
		if (jx_get_bool(r, "controller", &c) == 0 && c) {
			return (r);
		}
	}
	return (NULL);
}

bool
kstate_has_finalizer(json_object *o, const char *fin)
{
	json_object *f = jx_get(o, "metadata.finalizers");

	for (size_t i = 0; f != NULL && i < json_object_array_length(f); i++) {
		if (strcmp(json_object_get_string(
		                   json_object_array_get_idx(f, i)),
		            fin)
		        == 0) {
			return (true);
		}
	}
	return (false);
}

bool
kstate_label_is(json_object *o, const char *key, const char *want)
{
	json_object *v = jx_getv(o, "metadata", "labels", key, NULL);

	return (v != NULL && strcmp(json_object_get_string(v), want) == 0);
}

const char *
kstate_data(json_object *cm, const char *key)
{
	json_object *v = jx_getv(cm, "data", key, NULL);

	return (v != NULL ? json_object_get_string(v) : NULL);
}

json_object *
kstate_condition(json_object *o, const char *t)
{
	json_object *cs = jx_get(o, "status.conditions");

	for (size_t i = 0; cs != NULL && i < json_object_array_length(cs);
	        i++) {
		json_object *c = json_object_array_get_idx(cs, i);
		if (strcmp(kstate_str(c, "type"), t) == 0) {
			return (c);
		}
	}
	return (NULL);
}

/* ---- the snapshot ---- */

void
kstate_miss(struct kstate *st, const char *fmt, ...)
{
	va_list ap;

	st->nwhy++;
	if (st->nwhy <= KSTATE_MAX_WHY) {
		va_start(ap, fmt);
		buf_vprintf(&st->why, fmt, ap);
		va_end(ap);
		buf_putc(&st->why, '\n');
	}
}

static void
add_kid(struct kstate *st, const char *uid, const char *kind, const char *name)
{
	json_object *a = json_object_object_get(st->kids, uid);
	char *s = xasprintf("%s/%s", kind, name);

	if (a == NULL) {
		a = json_object_new_array();
		json_object_object_add(st->kids, uid, a);
	}
	json_object_array_add(a, json_object_new_string(s));
	free(s);
}

static void
index_items(struct kstate *st, size_t k, json_object *items)
{
	for (size_t j = 0; j < json_object_array_length(items); j++) {
		json_object *o = json_object_array_get_idx(items, j);
		json_object *ref = kstate_controller_ref(o);
		const char *name = kstate_str(o, "metadata.name");

		json_object_object_add(st->by[k], name, json_object_get(o));
		if (ref != NULL
		        && strcmp(kstate_str(ref, "apiVersion"), OWNER_API)
		                == 0) {
			add_kid(st, kstate_str(ref, "uid"), st->kinds[k].kind,
			        name);
		}
	}
}

int
kstate_load(struct kstate *st, struct kapi_client *c, const char *ns,
        const struct kstate_kind *kinds, size_t n)
{
	memset(st, 0, sizeof(*st));
	st->kinds = kinds;
	st->nkinds = n;
	st->by = xcalloc(n, sizeof(*st->by));
	st->kids = json_object_new_object();
	for (size_t i = 0; i < n; i++) {
		json_object *items = NULL;
		struct kapi_err e = KAPI_ERR_INIT;

		st->by[i] = json_object_new_object();
		if (kapi_list_all(c, kinds[i].res, ns, NULL, &items, NULL, &e)
		        != KAPI_OK) {
			fprintf(stderr, "kstate: list %s: %s\n",
			        kinds[i].res->plural,
			        e.message != NULL ? e.message : "");
			kapi_err_fini(&e);
			return (-1);
		}
		kapi_err_fini(&e);
		index_items(st, i, items);
		json_object_put(items);
	}
	return (0);
}

void
kstate_free(struct kstate *st)
{
	for (size_t i = 0; st->by != NULL && i < st->nkinds; i++) {
		json_object_put(st->by[i]);
	}
	free(st->by);
	json_object_put(st->kids);
	buf_fini(&st->why);
	memset(st, 0, sizeof(*st));
}

json_object *
kstate_get(const struct kstate *st, const struct kapi_res *r, const char *name)
{
	for (size_t i = 0; i < st->nkinds; i++) {
		if (st->kinds[i].res == r) {
			return (json_object_object_get(st->by[i], name));
		}
	}
	return (NULL);
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The strings v[0..n) sorted, each followed by a space. */
static void
joined(struct buf *b, const char **v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "%s ", v[i]);
	}
}

void
kstate_check_kids(
        struct kstate *st, const char *what, json_object *o, char **want)
{
	json_object *a = json_object_object_get(
	        st->kids, kstate_str(o, "metadata.uid"));
	size_t n = a != NULL ? json_object_array_length(a) : 0, nw = 0;
	const char **got = xcalloc(n + 1, sizeof(*got)), **wv;
	struct buf g = BUF_INIT, w = BUF_INIT;

	while (want[nw] != NULL) {
		nw++;
	}
	wv = xcalloc(nw + 1, sizeof(*wv));
	for (size_t i = 0; i < nw; i++) {
		wv[i] = want[i];
	}
	for (size_t i = 0; i < n; i++) {
		got[i] = json_object_get_string(
		        json_object_array_get_idx(a, i));
	}
	joined(&g, got, n);
	joined(&w, wv, nw);
	if (strcmp(buf_str(&g), buf_str(&w)) != 0) {
		kstate_miss(st, "%s: children [%s], expected [%s]", what,
		        buf_str(&g), buf_str(&w));
	} else {
		st->verified_children += (int)nw;
	}
	free(got);
	free(wv);
	buf_fini(&g);
	buf_fini(&w);
	for (size_t i = 0; i < nw; i++) {
		free(want[i]);
	}
}
