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

/* ---- a bounded LRU map from string keys to fixed-size values ----
 *
 * A key is kept as a 128-bit digest (two 64-bit FNV-1a hashes with
 * different offset bases), not as its text: the event keys hold whole
 * messages, and 3 x 4096 of them were most of an idle supervisor's heap
 * after a burst.  The records (digest, links, value) live in one array
 * allocated up front and are reused in place, so the caches neither grow
 * past their bound nor scatter small allocations over the heap.  Two keys
 * share a record only if both hashes collide (about 2^-128 for a pair);
 * the cost would be one Event counted under the other's record. */

#define LRU_NONE UINT32_MAX
#define LRU_SEED 0x84222325cbf29ce4ULL /* the second hash's offset basis */

struct lrec {
	uint64_t ha, hb;     /* the key's digest */
	uint32_t hnext;      /* hash chain */
	uint32_t prev, next; /* recency: head is the most recent */
	uint32_t pad;
	max_align_t val[]; /* vsize bytes */
};

struct lru {
	unsigned char *recs; /* cap records of rsize bytes */
	uint32_t *b;         /* nb chain heads */
	size_t nb, n, cap, rsize, vsize;
	uint32_t head, tail;
};

static void
lru_init(struct lru *l, size_t cap, size_t vsize)
{
	memset(l, 0, sizeof(*l));
	l->cap = cap < LRU_NONE ? cap : LRU_NONE - 1;
	l->vsize = vsize;
	l->rsize = (sizeof(struct lrec) + vsize + sizeof(max_align_t) - 1)
	        / sizeof(max_align_t) * sizeof(max_align_t);
	l->nb = 1;
	while (l->nb < l->cap) {
		l->nb <<= 1;
	}
	l->b = xreallocarray(NULL, l->nb, sizeof(*l->b));
	memset(l->b, 0xff, l->nb * sizeof(*l->b)); /* LRU_NONE */
	l->recs = xcalloc(l->cap, l->rsize);
	l->head = l->tail = LRU_NONE;
}

static struct lrec *
rec(const struct lru *l, uint32_t i)
{
	return ((struct lrec *)(void *)(l->recs + (size_t)i * l->rsize));
}

static void
unlist(struct lru *l, uint32_t i)
{
	struct lrec *x = rec(l, i);

	if (x->prev != LRU_NONE) {
		rec(l, x->prev)->next = x->next;
	} else {
		l->head = x->next;
	}
	if (x->next != LRU_NONE) {
		rec(l, x->next)->prev = x->prev;
	} else {
		l->tail = x->prev;
	}
	x->prev = x->next = LRU_NONE;
}

static void
push_front(struct lru *l, uint32_t i)
{
	struct lrec *x = rec(l, i);

	x->next = l->head;
	x->prev = LRU_NONE;
	if (l->head != LRU_NONE) {
		rec(l, l->head)->prev = i;
	}
	l->head = i;
	if (l->tail == LRU_NONE) {
		l->tail = i;
	}
}

/* Takes record i out of its hash chain. */
static void
unchain(struct lru *l, uint32_t i)
{
	uint32_t *pp = &l->b[rec(l, i)->ha & (l->nb - 1)];

	while (*pp != i) {
		pp = &rec(l, *pp)->hnext;
	}
	*pp = rec(l, i)->hnext;
}

static void
digest(const char *key, uint64_t *ha, uint64_t *hb)
{
	*ha = strhash(key);
	*hb = strhash_seeded(key, LRU_SEED);
}

/* The value under key (marked most recent), or NULL. */
static void *
lru_get(struct lru *l, const char *key)
{
	uint64_t ha, hb;

	digest(key, &ha, &hb);
	for (uint32_t i = l->b[ha & (l->nb - 1)]; i != LRU_NONE;
	        i = rec(l, i)->hnext) {
		struct lrec *x = rec(l, i);
		if (x->ha == ha && x->hb == hb) {
			unlist(l, i);
			push_front(l, i);
			return (x->val);
		}
	}
	return (NULL);
}

/* Adds key (absent) and returns its value, zeroed; the least recent
 * entry's record is reused when the cache is full. */
static void *
lru_add(struct lru *l, const char *key)
{
	uint32_t i;
	struct lrec *x;

	if (l->n < l->cap) {
		i = (uint32_t)l->n++;
	} else {
		i = l->tail;
		unchain(l, i);
		unlist(l, i);
	}
	x = rec(l, i);
	memset(x, 0, l->rsize);
	digest(key, &x->ha, &x->hb);
	x->hnext = l->b[x->ha & (l->nb - 1)];
	l->b[x->ha & (l->nb - 1)] = i;
	push_front(l, i);
	return (x->val);
}

static void
lru_fini(struct lru *l)
{
	free(l->recs);
	free(l->b);
	memset(l, 0, sizeof(*l));
}

/* ---- cache values ---- */

struct similar { /* aggregator: distinct messages seen lately */
	uint64_t msgs[EV_MAX_SIMILAR]; /* their hashes */
	size_t n;
	int64_t last_ns;
};

struct seen { /* logger: the Event already recorded */
	int64_t count;
	int64_t name_ns; /* its name: "<involvedObject.name>.<hex name_ns>" */
	int64_t first_s; /* its firstTimestamp */
};

struct bucket { /* spam filter */
	double tokens;
	int64_t last_ns;
};

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
	lru_init(&e->similar, cap, sizeof(struct similar));
	lru_init(&e->log, cap, sizeof(struct seen));
	lru_init(&e->spam, cap, sizeof(struct bucket));
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

/* Names ev "<involvedObject.name>.<hex name_ns>". */
static void
name_at(json_object *ev, int64_t name_ns)
{
	char *name = xasprintf("%s.%llx", str(ev, "involvedObject.name"),
	        (unsigned long long)name_ns);

	set_str(ev, "metadata.name", name);
	free(name);
}

/* A fresh Event name for the object at now_ns, strictly after the last
 * (e->last_name_ns: the name ev has now). */
static void
set_name(struct ev *e, json_object *ev, int64_t now_ns)
{
	if (now_ns <= e->last_name_ns) {
		now_ns = e->last_name_ns + 1;
	}
	e->last_name_ns = now_ns;
	name_at(ev, now_ns);
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
similar_has(const struct similar *s, uint64_t msg)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->msgs[i] == msg) {
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
		s = lru_add(&e->similar, akey);
	} else if (now_ns - s->last_ns
	        > (int64_t)EV_SIMILAR_WINDOW_MS * 1000000) {
		s->n = 0;
	}
	s->last_ns = now_ns;
	if (!similar_has(s, strhash(msg))) {
		s->msgs[s->n++] = strhash(msg);
	}
	if (s->n < EV_MAX_SIMILAR) {
		free(akey);
		return (key_of(*evp, KEY_EVENT));
	}
	s->n--; /* never more than the bound */
	char *m = xasprintf(EV_AGGREGATE_PREFIX "%s", msg);
	json_object_object_add(*evp, "message",
	        json_object_new_string_len(
	                m, (int)utf8_cut(m, EV_MESSAGE_MAX)));
	free(m);
	set_name(e, *evp, now_ns);
	e->st.aggregated++;
	return (akey);
}

/* Step 2.  Returns the PATCH body when the Event exists already.  ev was
 * named last (e->last_name_ns) and stamped at now_s; the key holds the
 * involved object, so a recorded Event's name is rebuilt from ev's. */
static json_object *
observe(struct ev *e, json_object *ev, const char *key, int64_t now_s)
{
	struct seen *s = lru_get(&e->log, key);
	char first[TIMEFMT_RFC3339_LEN];
	json_object *patch;

	if (s == NULL) {
		s = lru_add(&e->log, key);
		s->count = 1;
		s->name_ns = e->last_name_ns;
		s->first_s = now_s;
		return (NULL);
	}
	s->count++;
	name_at(ev, s->name_ns);
	timefmt_rfc3339(s->first_s, first);
	set_str(ev, "firstTimestamp", first);
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
		b = lru_add(&e->spam, key);
		b->tokens = EV_SPAM_BURST;
		b->last_ns = now_ns;
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
	out->patch = observe(e, out->event, key, now_ns / 1000000000);
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
