/*
 * cache.c: the shared watch cache of one kind (cache.h).  The supervisor's
 * event loop feeds it from the reflector's LIST pages (cache_replace) and
 * WATCH events (cache_apply); the dispatcher and the view-request server
 * read it.  Single-threaded: no locks.
 *
 * Layout.  Each object is one allocation (struct entry): a small header
 * then, packed behind it, the key ("ns/name", whose tail is the name), the
 * namespace, uid, resourceVersion, controller owner (uid, kind, name),
 * labels as "k\0v\0" pairs and the compact JSON text (managedFields
 * stripped); the header holds 32-bit offsets of those, not pointers (the
 * header is a tenth of the cache's own memory at 10,000 objects).  Three
 * hash tables (common/strtab.h) index the entries by key and the groups
 * by owner uid and by namespace;
 * a group links its entries in an intrusive doubly-linked list, so moving
 * an object between owners is O(1).  Label indexes (struct lindex, made on
 * demand by selected listings) link separate nodes per (entry, index),
 * chained from the entry so that removing it is O(its labels).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/strtab.h"
#include "common/xmalloc.h"
#include <json-c/printbuf.h>

#include "supervisor/cache.h"
#include "supervisor/labelsel.h"

struct group;

/* Links of one entry in one group (owner or namespace). */
struct link {
	struct entry *prev, *next;
	struct group *g;
};

struct lnode;

#define NO_OWNER UINT32_MAX

/* Offsets into mem[] (the key is at 0). */
struct entry {
	struct link own, nsl;
	struct lnode *lnodes; /* its nodes in the label indexes */
	uint32_t size;        /* bytes of this allocation, for cache_bytes() */
	uint32_t gen;         /* cache_replace() generation that last saw it */
	uint32_t json_len;
	uint32_t nlabels;
	uint32_t name, ns, uid, rv;
	uint32_t owner;  /* "uid\0kind\0name\0", or NO_OWNER */
	uint32_t labels; /* nlabels "key\0value\0" pairs */
	uint32_t json;
	char mem[];
};

/* An entry's allocation is at most this (its offsets are 32-bit). */
#define ENTRY_MAX ((size_t)UINT32_MAX - 1)

static const char *
e_key(const struct entry *e)
{
	return (e->mem);
}

static const char *
e_ns(const struct entry *e)
{
	return (e->mem + e->ns);
}

static const char *
e_owner_uid(const struct entry *e)
{
	return (e->owner != NO_OWNER ? e->mem + e->owner : NULL);
}

static const char *
e_labels(const struct entry *e)
{
	return (e->mem + e->labels);
}

static const char *
e_json(const struct entry *e)
{
	return (e->mem + e->json);
}

struct group {
	char *id;
	struct entry *head;
	size_t n;
};

/* A label index (created on the first selected listing that names the
 * key with one value): (namespace, value) -> entries, through nodes. */
struct lnode {
	struct entry *e;
	struct lnode *prev, *next; /* in the group */
	struct lgroup *g;
	struct lnode *enext; /* the entry's next node */
};

struct lgroup {
	char *id; /* "<namespace>\n<value>" */
	struct lnode *head;
	size_t n;
};

struct lindex {
	char *key;
	struct strtab groups; /* id -> struct lgroup */
};

#define CACHE_MAX_LINDEX 4

/* Kept behind a pointer: listings (const) may add an index. */
struct lindexes {
	struct lindex v[CACHE_MAX_LINDEX];
	size_t n;
	size_t bytes;
};

struct cache {
	char *name;
	struct lindexes *lx;
	struct strtab items;  /* key -> struct entry */
	struct strtab owners; /* owner uid -> struct group */
	struct strtab nss;    /* namespace -> struct group */
	char *rv;
	bool synced;
	unsigned gen;
	size_t bytes; /* entries and groups */
};

static const char *
entry_key(const void *p)
{
	return (e_key(p));
}

static const char *
group_key(const void *p)
{
	return (((const struct group *)p)->id);
}

/* ---- groups ---- */

static struct link *
link_of(const struct cache *c, const struct strtab *t, struct entry *e)
{
	return (t == &c->owners ? &e->own : &e->nsl);
}

static void
group_link(struct cache *c, struct strtab *t, struct entry *e, const char *id)
{
	struct group *g = strtab_get(t, id);
	struct link *l = link_of(c, t, e);

	if (g == NULL) {
		g = xcalloc(1, sizeof(*g));
		g->id = xstrdup(id);
		strtab_put(t, g);
		c->bytes += sizeof(*g) + strlen(id) + 1;
	}
	l->g = g;
	l->prev = NULL;
	l->next = g->head;
	if (g->head != NULL) {
		link_of(c, t, g->head)->prev = e;
	}
	g->head = e;
	g->n++;
}

static void
group_unlink(struct cache *c, struct strtab *t, struct entry *e)
{
	struct link *l = link_of(c, t, e);
	struct group *g = l->g;

	if (g == NULL) {
		return;
	}
	if (l->prev != NULL) {
		link_of(c, t, l->prev)->next = l->next;
	} else {
		g->head = l->next;
	}
	if (l->next != NULL) {
		link_of(c, t, l->next)->prev = l->prev;
	}
	l->g = NULL;
	if (--g->n == 0) {
		strtab_del(t, g->id);
		c->bytes -= sizeof(*g) + strlen(g->id) + 1;
		free(g->id);
		free(g);
	}
}

/* ---- label indexes ---- */

static const char *
lgroup_key(const void *p)
{
	return (((const struct lgroup *)p)->id);
}

static const char *
entry_label(const struct entry *e, const char *key)
{
	const char *p = e_labels(e);

	for (size_t i = 0; i < e->nlabels; i++) {
		const char *v = p + strlen(p) + 1;

		if (strcmp(p, key) == 0) {
			return (v);
		}
		p = v + strlen(v) + 1;
	}
	return (NULL);
}

static char *
lgroup_id(const char *ns, const char *value)
{
	return (xasprintf("%s\n%s", ns, value));
}

static void
lindex_add(struct lindexes *lx, struct lindex *ix, struct entry *e)
{
	const char *v = entry_label(e, ix->key);
	struct lnode *nd;
	struct lgroup *g;
	char *id;

	if (v == NULL) {
		return;
	}
	id = lgroup_id(e_ns(e), v);
	if ((g = strtab_get(&ix->groups, id)) == NULL) {
		g = xcalloc(1, sizeof(*g));
		g->id = id;
		strtab_put(&ix->groups, g);
		lx->bytes += sizeof(*g) + strlen(id) + 1;
	} else {
		free(id);
	}
	nd = xcalloc(1, sizeof(*nd));
	nd->e = e;
	nd->g = g;
	nd->next = g->head;
	if (g->head != NULL) {
		g->head->prev = nd;
	}
	g->head = nd;
	g->n++;
	nd->enext = e->lnodes;
	e->lnodes = nd;
	lx->bytes += sizeof(*nd);
}

/* Takes e out of every label index. */
static void
lindex_remove(struct lindexes *lx, struct entry *e)
{
	struct lnode *nd, *next;

	for (nd = e->lnodes; nd != NULL; nd = next) {
		struct lgroup *g = nd->g;

		next = nd->enext;
		if (nd->prev != NULL) {
			nd->prev->next = nd->next;
		} else {
			g->head = nd->next;
		}
		if (nd->next != NULL) {
			nd->next->prev = nd->prev;
		}
		if (--g->n == 0) {
			for (size_t i = 0; i < lx->n; i++) {
				(void)strtab_remove(&lx->v[i].groups, g);
			}
			lx->bytes -= sizeof(*g) + strlen(g->id) + 1;
			free(g->id);
			free(g);
		}
		lx->bytes -= sizeof(*nd);
		free(nd);
	}
	e->lnodes = NULL;
}

static void
lindex_insert(struct lindexes *lx, struct entry *e)
{
	for (size_t i = 0; i < lx->n; i++) {
		lindex_add(lx, &lx->v[i], e);
	}
}

/* The index of key, created (over every entry) when there is room; NULL
 * when there is none. */
static struct lindex *
lindex_get(const struct cache *c, const char *key)
{
	struct lindexes *lx = c->lx;
	struct lindex *ix;
	struct entry *e;

	for (size_t i = 0; i < lx->n; i++) {
		if (strcmp(lx->v[i].key, key) == 0) {
			return (&lx->v[i]);
		}
	}
	if (lx->n == CACHE_MAX_LINDEX) {
		return (NULL);
	}
	ix = &lx->v[lx->n++];
	ix->key = xstrdup(key);
	strtab_init(&ix->groups, lgroup_key, NULL, 0);
	for (size_t pos = 0; (e = strtab_next(&c->items, &pos)) != NULL;) {
		lindex_add(lx, ix, e);
	}
	return (ix);
}

static void
lindexes_free(struct cache *c)
{
	struct lindexes *lx = c->lx;
	struct lgroup *g;
	struct entry *e;

	for (size_t pos = 0; (e = strtab_next(&c->items, &pos)) != NULL;) {
		for (struct lnode *nd = e->lnodes, *nx; nd != NULL; nd = nx) {
			nx = nd->enext;
			free(nd);
		}
	}
	for (size_t i = 0; i < lx->n; i++) {
		for (size_t pos = 0;
		        (g = strtab_next(&lx->v[i].groups, &pos)) != NULL;) {
			free(g->id);
			free(g);
		}
		strtab_fini(&lx->v[i].groups);
		free(lx->v[i].key);
	}
	free(lx);
}

static char *
trimmed(const char *a, const char *b)
{
	while (a < b && (*a == ' ' || *a == '\t')) {
		a++;
	}
	while (b > a && (b[-1] == ' ' || b[-1] == '\t')) {
		b--;
	}
	return (xasprintf("%.*s", (int)(b - a), a));
}

/* The first "key=value" or "key==value" term of a selector, trimmed
 * (caller frees both).  Returns -1 when there is none. */
static int
eq_term(const char *sel, char **key, char **value)
{
	const char *p = sel, *eq, *v;
	size_t n;

	while (p != NULL && *p != '\0') {
		n = strcspn(p, ",");
		eq = memchr(p, '=', n);
		if (eq != NULL && !(eq > p && eq[-1] == '!')) {
			v = eq + 1;
			if (v < p + n && *v == '=') {
				v++;
			}
			*key = trimmed(p, eq);
			*value = trimmed(v, p + n);
			return (0);
		}
		p += n;
		if (*p == ',') {
			p++;
		}
	}
	return (-1);
}

/* ---- entries ---- */

/* The fields of an object before packing. */
struct fields {
	const char *ns, *name, *uid, *rv;
	const char *owner_uid, *owner_kind, *owner_name;
	json_object *labels;
	char *json;
	size_t json_len;
};

/* The controller ownerReference (controller: true with a string uid). */
static void
find_owner(json_object *meta, struct fields *f)
{
	json_object *refs = jx_get(meta, "ownerReferences"), *r;
	bool ctl;

	if (!json_object_is_type(refs, json_type_array)) {
		return;
	}
	for (size_t i = 0; i < json_object_array_length(refs); i++) {
		r = json_object_array_get_idx(refs, i);
		if (jx_get_bool(r, "controller", &ctl) != 0 || !ctl
		        || jx_get_str(r, "uid") == NULL) {
			continue;
		}
		f->owner_uid = jx_get_str(r, "uid");
		f->owner_kind = jx_get_str(r, "kind");
		f->owner_name = jx_get_str(r, "name");
		return;
	}
}

/* Checks obj and reads its index fields (borrowed from obj).  Returns
 * NULL or the reason for rejecting it. */
static const char *
read_fields(json_object *obj, struct fields *f)
{
	json_object *meta = jx_get(obj, "metadata"), *v;

	memset(f, 0, sizeof(*f));
	if (!json_object_is_type(obj, json_type_object)) {
		return ("object is not a JSON object");
	}
	if (!json_object_is_type(meta, json_type_object)) {
		return ("object has no metadata");
	}
	if (json_object_object_get_ex(meta, "namespace", &v) && v != NULL
	        && !json_object_is_type(v, json_type_string)) {
		return ("metadata.namespace is not a string");
	}
	f->name = jx_get_str(meta, "name");
	if (f->name == NULL || f->name[0] == '\0') {
		return ("object has no metadata.name");
	}
	f->ns = jx_get_str(meta, "namespace");
	f->uid = jx_get_str(meta, "uid");
	f->rv = jx_get_str(meta, "resourceVersion");
	f->labels = jx_get(meta, "labels");
	if (!json_object_is_type(f->labels, json_type_object)) {
		f->labels = NULL;
	}
	find_owner(meta, f);
	return (NULL);
}

static size_t
slen(const char *s)
{
	return (s != NULL ? strlen(s) + 1 : 1);
}

/* Copies s (NULL as "") at *p; returns the copy. */
static const char *
pack(char **p, const char *s)
{
	char *at = *p;
	size_t n = s != NULL ? strlen(s) : 0;

	memcpy(at, s != NULL ? s : "", n);
	at[n] = '\0';
	*p += n + 1;
	return (at);
}

static size_t
labels_size(json_object *labels, size_t *count)
{
	size_t n = 0;

	*count = 0;
	if (labels == NULL) {
		return (0);
	}
	json_object_object_foreach(labels, k, v)
	{
		if (json_object_is_type(v, json_type_string)) {
			n += strlen(k) + 1 + strlen(json_object_get_string(v))
			        + 1;
			(*count)++;
		}
	}
	return (n);
}

static void
pack_labels(char **p, json_object *labels)
{
	if (labels == NULL) {
		return;
	}
	json_object_object_foreach(labels, k, v)
	{
		if (json_object_is_type(v, json_type_string)) {
			pack(p, k);
			pack(p, json_object_get_string(v));
		}
	}
}

static char *
make_key(const char *ns, const char *name)
{
	if (ns == NULL || ns[0] == '\0') {
		return (xstrdup(name));
	}
	return (xasprintf("%s/%s", ns, name));
}

/* Copies s (NULL as "") at e->mem + *off; returns the copy's offset. */
static uint32_t
pack_at(struct entry *e, size_t *off, const char *s)
{
	char *p = e->mem + *off;
	uint32_t at = (uint32_t)*off;

	pack(&p, s);
	*off = (size_t)(p - e->mem);
	return (at);
}

/* One allocation holding the object and its index fields, or NULL when
 * it would be larger than ENTRY_MAX. */
static struct entry *
entry_new(const struct fields *f)
{
	char *key = make_key(f->ns, f->name), *p;
	size_t nl, lsz = labels_size(f->labels, &nl), off = 0;
	size_t owner = f->owner_uid == NULL ? 0
	                                    : slen(f->owner_uid)
	                + slen(f->owner_kind) + slen(f->owner_name);
	size_t sz = sizeof(struct entry) + slen(key) + slen(f->ns)
	        + slen(f->uid) + slen(f->rv) + owner + lsz + f->json_len + 1;
	struct entry *e;

	if (sz > ENTRY_MAX) {
		free(key);
		return (NULL);
	}
	e = xcalloc(1, sz);
	e->size = (uint32_t)sz;
	pack_at(e, &off, key);
	e->name = f->ns != NULL && f->ns[0] != '\0'
	        ? (uint32_t)strlen(f->ns) + 1
	        : 0;
	e->ns = pack_at(e, &off, f->ns);
	e->uid = pack_at(e, &off, f->uid);
	e->rv = pack_at(e, &off, f->rv);
	e->owner = NO_OWNER;
	if (f->owner_uid != NULL) {
		e->owner = pack_at(e, &off, f->owner_uid);
		pack_at(e, &off, f->owner_kind);
		pack_at(e, &off, f->owner_name);
	}
	e->labels = (uint32_t)off;
	e->nlabels = (uint32_t)nl;
	p = e->mem + off;
	pack_labels(&p, f->labels);
	e->json = (uint32_t)(p - e->mem);
	e->json_len = (uint32_t)f->json_len;
	memcpy(p, f->json, f->json_len + 1);
	free(key);
	return (e);
}

/* Validates obj, strips its managedFields, and builds its entry.  Returns
 * NULL with *why set when obj is rejected. */
static struct entry *
entry_from(json_object *obj, const char **why)
{
	struct fields f;
	struct entry *e;

	if ((*why = read_fields(obj, &f)) != NULL) {
		return (NULL);
	}
	jx_strip(obj, "metadata.managedFields");
	f.json = jx_to_string(obj);
	f.json_len = strlen(f.json);
	e = entry_new(&f);
	free(f.json);
	if (e == NULL) {
		*why = "object too large for the cache";
	}
	return (e);
}

static void
fill_item(const struct entry *e, struct cache_item *it, bool tombstone)
{
	const char *ou = e_owner_uid(e);

	it->key = e_key(e);
	it->ns = e_ns(e);
	it->name = e->mem + e->name;
	it->uid = e->mem + e->uid;
	it->rv = e->mem + e->rv;
	it->owner_uid = ou;
	it->owner_kind = ou != NULL ? ou + strlen(ou) + 1 : NULL;
	it->owner_name = ou != NULL
	        ? it->owner_kind + strlen(it->owner_kind) + 1
	        : NULL;
	it->json = e_json(e);
	it->json_len = e->json_len;
	it->labels = e_labels(e);
	it->nlabels = e->nlabels;
	it->tombstone = tombstone;
}

/* Puts e in the tables, replacing (and returning) the entry of its key. */
static struct entry *
insert(struct cache *c, struct entry *e)
{
	struct entry *old = strtab_get(&c->items, e_key(e));

	if (old != NULL) {
		group_unlink(c, &c->owners, old);
		group_unlink(c, &c->nss, old);
		lindex_remove(c->lx, old);
		c->bytes -= old->size;
	}
	strtab_put(&c->items, e);
	c->bytes += e->size;
	if (e_owner_uid(e) != NULL) {
		group_link(c, &c->owners, e, e_owner_uid(e));
	}
	group_link(c, &c->nss, e, e_ns(e));
	lindex_insert(c->lx, e);
	e->gen = c->gen;
	return (old);
}

/* Takes e out of the tables (the caller frees it). */
static void
detach(struct cache *c, struct entry *e)
{
	group_unlink(c, &c->owners, e);
	group_unlink(c, &c->nss, e);
	lindex_remove(c->lx, e);
	strtab_del(&c->items, e_key(e));
	c->bytes -= e->size;
}

static void
set_rv(struct cache *c, const char *rv)
{
	if (rv != NULL && rv[0] != '\0' && strcmp(rv, c->rv) != 0) {
		free(c->rv);
		c->rv = xstrdup(rv);
	}
}

/* ---- public ---- */

struct cache *
cache_new(const char *name)
{
	struct cache *c = xcalloc(1, sizeof(*c));

	c->name = xstrdup(name != NULL ? name : "");
	c->rv = xstrdup("");
	c->lx = xcalloc(1, sizeof(*c->lx));
	strtab_init(&c->items, entry_key, NULL, 0);
	strtab_init(&c->owners, group_key, NULL, 0);
	strtab_init(&c->nss, group_key, NULL, 0);
	return (c);
}

static void
free_groups(struct strtab *t)
{
	struct group *g;

	for (size_t pos = 0; (g = strtab_next(t, &pos)) != NULL;) {
		free(g->id);
		free(g);
	}
	strtab_fini(t);
}

void
cache_free(struct cache *c)
{
	struct entry *e;

	if (c == NULL) {
		return;
	}
	lindexes_free(c);
	for (size_t pos = 0; (e = strtab_next(&c->items, &pos)) != NULL;) {
		free(e);
	}
	strtab_fini(&c->items);
	free_groups(&c->owners);
	free_groups(&c->nss);
	free(c->rv);
	free(c->name);
	free(c);
}

const char *
cache_name(const struct cache *c)
{
	return (c->name);
}

static void
owner_copy(struct cache_owner *o, const struct entry *e)
{
	struct cache_item it;

	if (e == NULL || e_owner_uid(e) == NULL) {
		return;
	}
	fill_item(e, &it, false);
	o->uid = xstrdup(it.owner_uid);
	o->kind = xstrdup(it.owner_kind);
	o->name = xstrdup(it.owner_name);
}

static enum cache_change
apply_delete(struct cache *c, const struct fields *f, struct cache_result *res)
{
	struct entry *old;

	res->key = make_key(f->ns, f->name);
	set_rv(c, f->rv);
	old = strtab_get(&c->items, res->key);
	if (old == NULL) {
		return (CACHE_UNCHANGED);
	}
	owner_copy(&res->old_owner, old);
	detach(c, old);
	free(old);
	return (CACHE_DELETE);
}

static enum cache_change
apply_upsert(struct cache *c, json_object *obj, struct cache_result *res)
{
	struct entry *e, *old;

	e = entry_from(obj, &res->err);
	res->key = xstrdup(e_key(e));
	set_rv(c, e->mem + e->rv);
	owner_copy(&res->new_owner, e);
	old = strtab_get(&c->items, e_key(e));
	if (old != NULL && old->json_len == e->json_len
	        && memcmp(e_json(old), e_json(e), e->json_len) == 0) {
		owner_copy(&res->old_owner, old);
		free(e);
		return (CACHE_UNCHANGED);
	}
	old = insert(c, e);
	if (old == NULL) {
		return (CACHE_ADD);
	}
	owner_copy(&res->old_owner, old);
	free(old);
	return (CACHE_UPDATE);
}

static enum cache_change
apply_event(struct cache *c, enum cache_event ev, json_object *obj,
        struct cache_result *res)
{
	struct fields f;
	const char *rv;

	if (ev == CACHE_EV_BOOKMARK) {
		rv = jx_get_str(obj, "metadata.resourceVersion");
		if (rv == NULL || rv[0] == '\0') {
			res->err = "bookmark without metadata.resourceVersion";
			return (CACHE_INVALID);
		}
		set_rv(c, rv);
		return (CACHE_UNCHANGED);
	}
	if (ev != CACHE_EV_ADDED && ev != CACHE_EV_MODIFIED
	        && ev != CACHE_EV_DELETED) {
		res->err = "unknown watch event type";
		return (CACHE_INVALID);
	}
	if ((res->err = read_fields(obj, &f)) != NULL) {
		return (CACHE_INVALID);
	}
	if (ev == CACHE_EV_DELETED) {
		return (apply_delete(c, &f, res));
	}
	return (apply_upsert(c, obj, res));
}

enum cache_change
cache_apply(struct cache *c, enum cache_event ev, json_object *obj,
        struct cache_result *res)
{
	memset(res, 0, sizeof(*res));
	res->change = apply_event(c, ev, obj, res);
	res->rv = c->rv;
	return (res->change);
}

static void
owner_fini(struct cache_owner *o)
{
	free(o->uid);
	free(o->kind);
	free(o->name);
}

void
cache_result_fini(struct cache_result *res)
{
	if (res == NULL) {
		return;
	}
	free(res->key);
	owner_fini(&res->old_owner);
	owner_fini(&res->new_owner);
	memset(res, 0, sizeof(*res));
}

/* One listed entry of cache_replace_staged(): installs it and reports. */
static void
replace_one(struct cache *c, struct entry *e, const struct cache_handlers *h,
        void *arg)
{
	struct cache_item oi, ni;
	struct entry *old;

	old = insert(c, e);
	fill_item(e, &ni, false);
	if (old != NULL) {
		fill_item(old, &oi, false);
		if (h != NULL && h->on_update != NULL) {
			h->on_update(arg, &oi, &ni);
		}
		free(old);
	} else if (h != NULL && h->on_add != NULL) {
		h->on_add(arg, &ni);
	}
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;

	return (strcmp(e_key(*x), e_key(*y)));
}

/* The cached entries not seen by the current generation, by key. */
static struct entry **
stale_entries(struct cache *c, size_t *np)
{
	struct entry **v = xcalloc(strtab_len(&c->items) + 1, sizeof(v[0]));
	size_t n = 0;

	struct entry *e;

	for (size_t pos = 0; (e = strtab_next(&c->items, &pos)) != NULL;) {
		if (e->gen != c->gen) {
			v[n++] = e;
		}
	}
	qsort(v, n, sizeof(v[0]), cmp_entry);
	*np = n;
	return (v);
}

struct cache_stage {
	struct entry **v;
	size_t n, cap;
	size_t skipped;
};

struct cache_stage *
cache_stage_new(void)
{
	return (xcalloc(1, sizeof(struct cache_stage)));
}

void
cache_stage_clear(struct cache_stage *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i]);
	}
	st->n = 0;
	st->skipped = 0;
}

void
cache_stage_free(struct cache_stage *st)
{
	if (st == NULL) {
		return;
	}
	cache_stage_clear(st);
	free(st->v);
	free(st);
}

int
cache_stage_add(struct cache_stage *st, json_object *obj)
{
	const char *why;
	struct entry *e = entry_from(obj, &why);

	if (e == NULL) {
		log_warnx("cache: list item skipped: %s", why);
		st->skipped++;
		return (-1);
	}
	if (st->n == st->cap) {
		st->cap = st->cap == 0 ? 64 : st->cap * 2;
		st->v = xreallocarray(st->v, st->cap, sizeof(st->v[0]));
	}
	st->v[st->n++] = e;
	return (0);
}

size_t
cache_stage_count(const struct cache_stage *st)
{
	return (st->n);
}

size_t
cache_replace_staged(struct cache *c, struct cache_stage *st,
        const char *list_rv, const struct cache_handlers *h, void *arg)
{
	struct cache_item it;
	struct entry **stale;
	size_t skipped = st->skipped, ns;

	c->gen++;
	for (size_t i = 0; i < st->n; i++) {
		replace_one(c, st->v[i], h, arg);
	}
	st->n = 0;
	st->skipped = 0;
	stale = stale_entries(c, &ns);
	for (size_t i = 0; i < ns; i++) {
		detach(c, stale[i]);
		fill_item(stale[i], &it, true);
		if (h != NULL && h->on_delete != NULL) {
			h->on_delete(arg, &it);
		}
		free(stale[i]);
	}
	free(stale);
	set_rv(c, list_rv);
	return (skipped);
}

size_t
cache_replace(struct cache *c, json_object *const *items, size_t n,
        const char *list_rv, const struct cache_handlers *h, void *arg)
{
	struct cache_stage *st = cache_stage_new();
	size_t skipped;

	for (size_t i = 0; i < n; i++) {
		if (items[i] != NULL) {
			cache_stage_add(st, items[i]);
		}
	}
	skipped = cache_replace_staged(c, st, list_rv, h, arg);
	cache_stage_free(st);
	return (skipped);
}

const char *
cache_get(const struct cache *c, const char *ns, const char *name)
{
	char *key;
	struct entry *e;

	if (name == NULL) {
		return (NULL);
	}
	key = make_key(ns, name);
	e = strtab_get(&c->items, key);
	free(key);
	return (e != NULL ? e_json(e) : NULL);
}

int
cache_lookup(const struct cache *c, const char *key, struct cache_item *out)
{
	struct entry *e = key != NULL ? strtab_get(&c->items, key) : NULL;

	if (e == NULL) {
		return (-1);
	}
	fill_item(e, out, false);
	return (0);
}

json_object *
cache_get_obj(const struct cache *c, const char *ns, const char *name)
{
	const char *text = cache_get(c, ns, name);

	if (text == NULL) {
		return (NULL);
	}
	return (jx_parse(text, strlen(text), 0, NULL, 0));
}

/* Visits v[0..n) sorted by key; frees v. */
static int visit(struct entry **v, size_t n, const struct labelsel *sel,
        cache_each_fn *fn, void *arg);

static struct entry **
group_entries(const struct cache *c, const struct strtab *t, const char *id,
        size_t *np)
{
	struct group *g = strtab_get(t, id);
	struct entry **v, *e;
	size_t n = 0;

	*np = 0;
	if (g == NULL) {
		return (NULL);
	}
	v = xcalloc(g->n, sizeof(v[0]));
	for (e = g->head; e != NULL; e = link_of(c, t, e)->next) {
		v[n++] = e;
	}
	*np = n;
	return (v);
}

int
cache_by_owner(
        const struct cache *c, const char *uid, cache_each_fn *fn, void *arg)
{
	struct entry **v;
	size_t n;

	if (uid == NULL) {
		return (0);
	}
	v = group_entries(c, &c->owners, uid, &n);
	return (visit(v, n, NULL, fn, arg));
}

int
cache_by_owner_sel(const struct cache *c, const char *uid,
        const char *selector, cache_each_fn *fn, void *arg)
{
	struct labelsel *sel;
	struct entry **v;
	char err[256];
	size_t n;
	int rc;

	if ((sel = labelsel_parse(selector, err, sizeof(err))) == NULL) {
		log_warnx("cache %s: %s", c->name, err);
		return (-1);
	}
	if (uid == NULL) {
		labelsel_free(sel);
		return (0);
	}
	v = group_entries(c, &c->owners, uid, &n);
	rc = visit(v, n, labelsel_empty(sel) ? NULL : sel, fn, arg);
	labelsel_free(sel);
	return (rc);
}

static const char *
label_get(void *arg, const char *key)
{
	return (entry_label(arg, key));
}

const char *
cache_item_label(void *item, const char *key)
{
	const struct cache_item *it = item;
	const char *p = it->labels;

	for (size_t i = 0; p != NULL && i < it->nlabels; i++) {
		const char *v = p + strlen(p) + 1;

		if (strcmp(p, key) == 0) {
			return (v);
		}
		p = v + strlen(v) + 1;
	}
	return (NULL);
}

static int
visit(struct entry **v, size_t n, const struct labelsel *sel,
        cache_each_fn *fn, void *arg)
{
	struct cache_item it;
	size_t m = 0;
	int rc = 0;

	/* Filter, then sort only the matches: a selected list of a few
	 * objects in a namespace of thousands sorts a few (the start
	 * benchmark, docs/benchmarks.md). */
	for (size_t i = 0; i < n; i++) {
		if (sel == NULL || labelsel_match(sel, label_get, v[i])) {
			v[m++] = v[i];
		}
	}
	if (v != NULL) {
		qsort(v, m, sizeof(v[0]), cmp_entry);
	}
	for (size_t i = 0; i < m && rc == 0; i++) {
		fill_item(v[i], &it, false);
		rc = fn(arg, &it);
	}
	free(v);
	return (rc);
}

static struct entry **
all_entries(const struct cache *c, size_t *np)
{
	struct entry **v = xcalloc(strtab_len(&c->items) + 1, sizeof(v[0]));
	size_t n = 0;

	struct entry *e;

	for (size_t pos = 0; (e = strtab_next(&c->items, &pos)) != NULL;) {
		v[n++] = e;
	}
	*np = n;
	return (v);
}

/* The entries of namespace ns with the label of the selector's first
 * equality term, from its label index (created on first use).  Returns
 * false when there is no such term or no room for another index: the
 * caller walks the namespace. */
static bool
label_entries(const struct cache *c, const char *ns, const char *selector,
        struct entry ***vp, size_t *np)
{
	struct lindex *ix;
	struct lgroup *g;
	struct lnode *nd;
	char *key, *value, *id;
	size_t n = 0;

	if (eq_term(selector, &key, &value) < 0) {
		return (false);
	}
	ix = lindex_get(c, key);
	id = lgroup_id(ns, value);
	g = ix != NULL ? strtab_get(&ix->groups, id) : NULL;
	free(key);
	free(value);
	free(id);
	if (ix == NULL) {
		return (false);
	}
	*vp = NULL;
	*np = 0;
	if (g == NULL) {
		return (true);
	}
	*vp = xcalloc(g->n, sizeof(**vp));
	for (nd = g->head; nd != NULL; nd = nd->next) {
		(*vp)[n++] = nd->e;
	}
	*np = n;
	return (true);
}

int
cache_list(const struct cache *c, const char *ns, const char *selector,
        cache_each_fn *fn, void *arg)
{
	struct labelsel *sel;
	struct entry **v;
	char err[256];
	size_t n;
	int rc;

	if ((sel = labelsel_parse(selector, err, sizeof(err))) == NULL) {
		log_warnx("cache %s: %s", c->name, err);
		return (-1);
	}
	if (ns == NULL) {
		v = all_entries(c, &n);
	} else if (!label_entries(c, ns, selector, &v, &n)) {
		v = group_entries(c, &c->nss, ns, &n);
	}
	rc = visit(v, n, labelsel_empty(sel) ? NULL : sel, fn, arg);
	labelsel_free(sel);
	return (rc);
}

static int
raw_serialize(json_object *jso, struct printbuf *pb, int level, int flags)
{
	const char *text = json_object_get_userdata(jso);

	(void)level;
	(void)flags;
	return (printbuf_memappend(pb, text, (int)strlen(text)));
}

static void
raw_free(json_object *jso, void *userdata)
{
	(void)jso;
	free(userdata);
}

json_object *
cache_item_raw(const struct cache_item *it)
{
	json_object *o = json_object_new_object();
	char *text = xmalloc(it->json_len + 1);

	memcpy(text, it->json, it->json_len + 1);
	json_object_set_serializer(o, raw_serialize, text, raw_free);
	return (o);
}

size_t
cache_count(const struct cache *c)
{
	return (strtab_len(&c->items));
}

size_t
cache_bytes(const struct cache *c)
{
	size_t lx = sizeof(*c->lx) + c->lx->bytes;

	for (size_t i = 0; i < c->lx->n; i++) {
		lx += strtab_bytes(&c->lx->v[i].groups);
	}
	return (lx + sizeof(*c) + strlen(c->name) + 1 + strlen(c->rv) + 1
	        + c->bytes + strtab_bytes(&c->items) + strtab_bytes(&c->owners)
	        + strtab_bytes(&c->nss));
}

void
cache_set_synced(struct cache *c, bool synced)
{
	c->synced = synced;
}

bool
cache_synced(const struct cache *c)
{
	return (c->synced);
}

const char *
cache_rv(const struct cache *c)
{
	return (c->rv);
}
