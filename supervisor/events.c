/*
 * events.c: the Event correlator of events.h: stamping, aggregation of
 * similar events, deduplication into count PATCHes and the per-object spam
 * filter, over three bounded LRU caches (a hash table of chains plus one
 * recency list each).  Pure: time comes in as an argument.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/strhash.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/events.h"

/* ---- a bounded LRU map from strings to owned values ---- */

struct lent {
	struct lent *hnext;       /* hash chain */
	struct lent *prev, *next; /* recency: head is the most recent */
	char *key;
	uint64_t h;
	void *val;
};

struct lru {
	struct lent **b;
	size_t nb, n, cap;
	struct lent *head, *tail;
	void (*free_val)(void *);
};

static void
lru_init(struct lru *l, size_t cap, void (*free_val)(void *))
{
	l->cap = cap;
	l->nb = 1;
	while (l->nb < cap) {
		l->nb <<= 1;
	}
	l->b = xcalloc(l->nb, sizeof(*l->b));
	l->free_val = free_val;
}

static void
unlist(struct lru *l, struct lent *x)
{
	if (x->prev != NULL) {
		x->prev->next = x->next;
	} else {
		l->head = x->next;
	}
	if (x->next != NULL) {
		x->next->prev = x->prev;
	} else {
		l->tail = x->prev;
	}
	x->prev = x->next = NULL;
}

static void
push_front(struct lru *l, struct lent *x)
{
	x->next = l->head;
	x->prev = NULL;
	if (l->head != NULL) {
		l->head->prev = x;
	}
	l->head = x;
	if (l->tail == NULL) {
		l->tail = x;
	}
}

static void
lent_free(struct lru *l, struct lent *x)
{
	l->free_val(x->val);
	free(x->key);
	free(x);
}

static void
lru_remove(struct lru *l, struct lent *x)
{
	struct lent **pp = &l->b[x->h & (l->nb - 1)];

	while (*pp != x) {
		pp = &(*pp)->hnext;
	}
	*pp = x->hnext;
	unlist(l, x);
	l->n--;
	lent_free(l, x);
}

/* The value under key (marked most recent), or NULL. */
static void *
lru_get(struct lru *l, const char *key)
{
	uint64_t h = strhash(key);

	for (struct lent *x = l->b[h & (l->nb - 1)]; x != NULL; x = x->hnext) {
		if (x->h == h && strcmp(x->key, key) == 0) {
			unlist(l, x);
			push_front(l, x);
			return (x->val);
		}
	}
	return (NULL);
}

/* Adds key (absent) with val (taken); forgets the least recent entry when
 * over capacity. */
static void
lru_add(struct lru *l, const char *key, void *val)
{
	struct lent *x = xcalloc(1, sizeof(*x));

	x->key = xstrdup(key);
	x->h = strhash(key);
	x->val = val;
	x->hnext = l->b[x->h & (l->nb - 1)];
	l->b[x->h & (l->nb - 1)] = x;
	push_front(l, x);
	l->n++;
	if (l->n > l->cap) {
		lru_remove(l, l->tail);
	}
}

static void
lru_fini(struct lru *l)
{
	struct lent *x, *next;

	for (x = l->head; x != NULL; x = next) {
		next = x->next;
		lent_free(l, x);
	}
	free(l->b);
	memset(l, 0, sizeof(*l));
}

/* ---- cache values ---- */

struct similar { /* aggregator: distinct messages seen lately */
	char *msgs[EV_MAX_SIMILAR];
	size_t n;
	int64_t last_ns;
};

struct seen { /* logger: the Event already recorded */
	int64_t count;
	char *name;
	char *first; /* firstTimestamp */
};

struct bucket { /* spam filter */
	double tokens;
	int64_t last_ns;
};

static void
similar_clear(struct similar *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->msgs[i]);
	}
	s->n = 0;
}

static void
similar_free(void *p)
{
	similar_clear(p);
	free(p);
}

static void
seen_free(void *p)
{
	struct seen *s = p;

	free(s->name);
	free(s->first);
	free(s);
}

struct ev {
	char *component, *instance;
	struct lru similar, log, spam;
	int64_t last_name_ns;
	struct ev_stats st;
};

struct ev *
ev_new(const struct ev_conf *conf)
{
	struct ev *e = xcalloc(1, sizeof(*e));
	size_t cap = conf != NULL && conf->cache_size > 0 ? conf->cache_size
	                                                  : EV_CACHE_SIZE;

	e->component = xstrdup(conf != NULL && conf->component != NULL
	                ? conf->component
	                : EV_COMPONENT);
	if (conf != NULL && conf->instance != NULL) {
		e->instance = xstrdup(conf->instance);
	}
	lru_init(&e->similar, cap, similar_free);
	lru_init(&e->log, cap, seen_free);
	lru_init(&e->spam, cap, free);
	return (e);
}

void
ev_free(struct ev *e)
{
	if (e == NULL) {
		return;
	}
	lru_fini(&e->similar);
	lru_fini(&e->log);
	lru_fini(&e->spam);
	free(e->component);
	free(e->instance);
	free(e);
}

void
ev_action_fini(struct ev_action *a)
{
	json_object_put(a->event);
	json_object_put(a->patch);
	memset(a, 0, sizeof(*a));
}

void
ev_stats(const struct ev *e, struct ev_stats *out)
{
	*out = e->st;
	out->similar_entries = e->similar.n;
	out->log_entries = e->log.n;
	out->spam_entries = e->spam.n;
}

/* ---- stamping ---- */

static const char *
str(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

static void
set_str(json_object *o, const char *path, const char *v)
{
	jx_set_path(o, path, json_object_new_string(v));
}

/* The length of s cut to at most max bytes on a UTF-8 boundary. */
static size_t
utf8_cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max) {
		return (n);
	}
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) {
		n--;
	}
	return (n);
}

/* A fresh Event name for the object at now_ns, strictly after the last. */
static void
set_name(struct ev *e, json_object *ev, int64_t now_ns)
{
	char *name;

	if (now_ns <= e->last_name_ns) {
		now_ns = e->last_name_ns + 1;
	}
	e->last_name_ns = now_ns;
	name = xasprintf("%s.%llx", str(ev, "involvedObject.name"),
	        (unsigned long long)now_ns);
	set_str(ev, "metadata.name", name);
	free(name);
}

static json_object *
stamp(struct ev *e, json_object *in, int64_t now_ns, const char *ts)
{
	json_object *ev
	        = jx_copy_strip(in, "metadata", "count", "firstTimestamp",
	                "lastTimestamp", "eventTime", "source", NULL);
	const char *ns = str(ev, "involvedObject.namespace");
	const char *msg = str(ev, "message");

	set_name(e, ev, now_ns);
	set_str(ev, "metadata.namespace", ns[0] != '\0' ? ns : "default");
	set_str(ev, "apiVersion", "v1");
	set_str(ev, "kind", "Event");
	json_object_object_add(ev, "message",
	        json_object_new_string_len(
	                msg, (int)utf8_cut(msg, EV_MESSAGE_MAX)));
	if (str(ev, "type")[0] == '\0') {
		set_str(ev, "type", "Normal");
	}
	set_str(ev, "source.component", e->component);
	set_str(ev, "reportingComponent", e->component);
	if (e->instance != NULL) {
		set_str(ev, "reportingInstance", e->instance);
	}
	set_str(ev, "firstTimestamp", ts);
	set_str(ev, "lastTimestamp", ts);
	json_object_object_add(ev, "count", json_object_new_int64(1));
	return (ev);
}

/* ---- keys ---- */

enum key_kind { KEY_SPAM, KEY_SIMILAR, KEY_EVENT };

static char *
key_of(json_object *ev, enum key_kind kind)
{
	static const char *const object[] = { "source.component",
		"source.host", "involvedObject.kind",
		"involvedObject.namespace", "involvedObject.name",
		"involvedObject.uid", "involvedObject.apiVersion", NULL };
	static const char *const similar[] = { "type", "reason",
		"reportingComponent", "reportingInstance", NULL };
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; object[i] != NULL; i++) {
		buf_printf(&b, "%s\x1f", str(ev, object[i]));
	}
	for (size_t i = 0; kind != KEY_SPAM && similar[i] != NULL; i++) {
		buf_printf(&b, "%s\x1f", str(ev, similar[i]));
	}
	if (kind == KEY_EVENT) {
		buf_printf(&b, "%s\x1f%s", str(ev, "involvedObject.fieldPath"),
		        str(ev, "message"));
	}
	return (buf_detach(&b, NULL));
}

/* ---- the three steps ---- */

static bool
similar_has(const struct similar *s, const char *msg)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->msgs[i], msg) == 0) {
			return (true);
		}
	}
	return (false);
}

/* Step 1.  Returns the dedupe key; may replace *evp by an aggregate. */
static char *
aggregate(struct ev *e, json_object **evp, int64_t now_ns)
{
	char *akey = key_of(*evp, KEY_SIMILAR);
	const char *msg = str(*evp, "message");
	struct similar *s = lru_get(&e->similar, akey);

	if (s == NULL) {
		s = xcalloc(1, sizeof(*s));
		lru_add(&e->similar, akey, s);
	} else if (now_ns - s->last_ns
	        > (int64_t)EV_SIMILAR_WINDOW_MS * 1000000) {
		similar_clear(s);
	}
	s->last_ns = now_ns;
	if (!similar_has(s, msg)) {
		s->msgs[s->n++] = xstrdup(msg);
	}
	if (s->n < EV_MAX_SIMILAR) {
		free(akey);
		return (key_of(*evp, KEY_EVENT));
	}
	free(s->msgs[--s->n]); /* never more than the bound */
	char *m = xasprintf(EV_AGGREGATE_PREFIX "%s", msg);
	json_object_object_add(*evp, "message",
	        json_object_new_string_len(
	                m, (int)utf8_cut(m, EV_MESSAGE_MAX)));
	free(m);
	set_name(e, *evp, now_ns);
	e->st.aggregated++;
	return (akey);
}

/* Step 2.  Returns the PATCH body when the Event exists already. */
static json_object *
observe(struct ev *e, json_object *ev, const char *key)
{
	struct seen *s = lru_get(&e->log, key);
	json_object *patch;

	if (s == NULL) {
		s = xcalloc(1, sizeof(*s));
		s->count = 1;
		s->name = xstrdup(str(ev, "metadata.name"));
		s->first = xstrdup(str(ev, "firstTimestamp"));
		lru_add(&e->log, key, s);
		return (NULL);
	}
	s->count++;
	set_str(ev, "metadata.name", s->name);
	set_str(ev, "firstTimestamp", s->first);
	json_object_object_add(ev, "count", json_object_new_int64(s->count));
	patch = json_object_new_object();
	json_object_object_add(
	        patch, "count", json_object_new_int64(s->count));
	set_str(patch, "lastTimestamp", str(ev, "lastTimestamp"));
	set_str(patch, "message", str(ev, "message"));
	return (patch);
}

/* Step 3.  True when the object's bucket has a token left (taken). */
static bool
spam_ok(struct ev *e, json_object *ev, int64_t now_ns)
{
	char *key = key_of(ev, KEY_SPAM);
	struct bucket *b = lru_get(&e->spam, key);
	int64_t dt;

	if (b == NULL) {
		b = xcalloc(1, sizeof(*b));
		b->tokens = EV_SPAM_BURST;
		b->last_ns = now_ns;
		lru_add(&e->spam, key, b);
	}
	free(key);
	dt = now_ns > b->last_ns ? now_ns - b->last_ns : 0;
	b->last_ns = now_ns > b->last_ns ? now_ns : b->last_ns;
	b->tokens += (double)dt / ((double)EV_SPAM_REFILL_MS * 1e6);
	if (b->tokens > EV_SPAM_BURST) {
		b->tokens = EV_SPAM_BURST;
	}
	if (b->tokens < 1.0) {
		return (false);
	}
	b->tokens -= 1.0;
	return (true);
}

static enum ev_verb
drop(struct ev *e, struct ev_action *out, const char *why)
{
	ev_action_fini(out);
	out->verb = EV_DROP;
	out->why = why;
	e->st.dropped++;
	return (EV_DROP);
}

enum ev_verb
ev_correlate(struct ev *e, json_object *event, int64_t now_ns,
        struct ev_action *out)
{
	char ts[TIMEFMT_RFC3339_LEN], *key;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(event, json_type_object)
	        || str(event, "involvedObject.name")[0] == '\0'
	        || str(event, "reason")[0] == '\0') {
		return (drop(e, out, "no involvedObject.name or reason"));
	}
	timefmt_rfc3339(now_ns / 1000000000, ts);
	out->event = stamp(e, event, now_ns, ts);
	key = aggregate(e, &out->event, now_ns);
	out->patch = observe(e, out->event, key);
	free(key);
	if (!spam_ok(e, out->event, now_ns)) {
		return (drop(e, out, "rate-limited (spam filter)"));
	}
	out->verb = out->patch != NULL ? EV_PATCH : EV_CREATE;
	out->ns = str(out->event, "metadata.namespace");
	out->name = str(out->event, "metadata.name");
	if (out->verb == EV_PATCH) {
		e->st.patched++;
	} else {
		e->st.created++;
	}
	return (out->verb);
}

static void
copy_ref(
        json_object *ref, const char *key, json_object *from, const char *path)
{
	const char *v = jx_get_str(from, path);

	if (v != NULL && v[0] != '\0') {
		json_object_object_add(ref, key, json_object_new_string(v));
	}
}

json_object *
ev_event_new(json_object *involved, const char *type, const char *reason,
        const char *message)
{
	json_object *ev = json_object_new_object();
	json_object *ref = json_object_new_object();

	copy_ref(ref, "kind", involved, "kind");
	copy_ref(ref, "namespace", involved, "metadata.namespace");
	copy_ref(ref, "name", involved, "metadata.name");
	copy_ref(ref, "uid", involved, "metadata.uid");
	copy_ref(ref, "apiVersion", involved, "apiVersion");
	copy_ref(ref, "resourceVersion", involved, "metadata.resourceVersion");
	set_str(ev, "apiVersion", "v1");
	set_str(ev, "kind", "Event");
	json_object_object_add(ev, "involvedObject", ref);
	set_str(ev, "type", type);
	set_str(ev, "reason", reason);
	set_str(ev, "message", message != NULL ? message : "");
	return (ev);
}
