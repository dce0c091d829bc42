/*
 * cache.h: the shared watch cache of one kind (design.md data flow, spec
 * kube-api.md E.2-E.3).  Prefix cache_.  The supervisor keeps one per
 * watched kind; the watch (and the relist) is its only writer.
 *
 * Objects are stored compactly: metadata.managedFields is stripped, the
 * object is kept as compact JSON text in one allocation together with its
 * key and the few fields the indexes need (namespace, name, uid,
 * resourceVersion, controller owner, labels).  Readers get the text
 * (borrowed) or parse it on demand (cache_get_obj).
 *
 * Keys follow MetaNamespaceKeyFunc: "<namespace>/<name>", or "<name>" for
 * objects without a namespace (cluster-scoped).  Indexes: key (hash map),
 * controller owner uid (uid -> keys), namespace (namespace -> keys), and
 * up to 4 label indexes ((namespace, value of label k) -> keys), each
 * created by the first cache_list() in a namespace whose selector has an
 * equality term on k, then kept up to date by every change.
 *
 * Pure logic: no I/O, no time.  Every pointer handed out by the cache
 * (struct cache_item fields, cache_get() text, cache_rv()) is borrowed and
 * valid only until the next call that changes the cache (cache_apply,
 * cache_replace, cache_free).  Callbacks must not change the cache.
 * Listings are sorted by key, so reconcilers see a stable order.
 */
#ifndef CACHE_H
#define CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

struct cache;

/* The watch event types the cache takes (ERROR events are the
 * reflector's business, never the cache's). */
enum cache_event {
	CACHE_EV_ADDED,
	CACHE_EV_MODIFIED,
	CACHE_EV_DELETED,
	CACHE_EV_BOOKMARK,
};

/* What cache_apply() did. */
enum cache_change {
	CACHE_INVALID = -1, /* rejected: see cache_result.err; no change */
	CACHE_UNCHANGED,    /* bookmark, identical object, unknown delete */
	CACHE_ADD,          /* a new key */
	CACHE_UPDATE,       /* an existing key got a different object */
	CACHE_DELETE,       /* the key is gone */
};

/* A read-only view of one cached object.  All fields borrowed. */
struct cache_item {
	const char *key;
	const char *ns; /* "" when cluster-scoped */
	const char *name;
	const char *uid;        /* "" when the object had none */
	const char *rv;         /* metadata.resourceVersion, "" if none */
	const char *owner_uid;  /* controller ownerReference, or NULL */
	const char *owner_kind; /* NULL when owner_uid is NULL */
	const char *owner_name; /* NULL when owner_uid is NULL */
	const char *json;       /* compact JSON text, NUL-terminated */
	size_t json_len;
	const char *labels; /* nlabels "key\0value\0" pairs (string labels) */
	size_t nlabels;
	bool tombstone; /* on_delete from cache_replace: last known state
	                 * (client-go DeletedFinalStateUnknown) */
};

/* The controller owner of an object, as owned copies (NULL when none). */
struct cache_owner {
	char *uid;
	char *kind;
	char *name;
};

/* Filled by cache_apply(); caller frees with cache_result_fini(). */
struct cache_result {
	enum cache_change change;
	char *key;                    /* owned; NULL for bookmarks, errors */
	struct cache_owner old_owner; /* before (UPDATE, DELETE, UNCHANGED) */
	struct cache_owner new_owner; /* after (ADD, UPDATE, UNCHANGED) */
	const char *rv;  /* the cache's rv after the call (cache_rv()) */
	const char *err; /* static message when change == CACHE_INVALID */
};

/* Handlers of cache_replace(), each may be NULL.  Items are borrowed for
 * the duration of the call. */
struct cache_handlers {
	void (*on_add)(void *arg, const struct cache_item *obj);
	void (*on_update)(void *arg, const struct cache_item *old,
	        const struct cache_item *obj);
	void (*on_delete)(void *arg, const struct cache_item *tombstone);
};

/* Visitor of listings: return 0 to go on, anything else stops the walk
 * and becomes the walk's return value. */
typedef int cache_each_fn(void *arg, const struct cache_item *obj);

/* A new, empty, unsynced cache; name (copied) is for logs, e.g. the
 * resource "agentruns.sympozium.ai".  Caller frees with cache_free(). */
struct cache *cache_new(const char *name);

/* Frees c and every object.  NULL is fine. */
void cache_free(struct cache *c);

/* The name given to cache_new().  Borrowed. */
const char *cache_name(const struct cache *c);

/*
 * Applies one watch event.  obj is borrowed, but its
 * metadata.managedFields is removed in place (the caller throws the event
 * away afterwards anyway).  ADDED of a known key counts as an update,
 * DELETED of an unknown key as unchanged.  BOOKMARK records only
 * metadata.resourceVersion.  Every accepted event with a resourceVersion
 * advances cache_rv().  Rejected (CACHE_INVALID, cache untouched): obj not
 * an object, missing or empty metadata.name, non-string namespace or
 * name, a bookmark without resourceVersion, an unknown event type.
 * res is always filled (free it with cache_result_fini()).
 */
enum cache_change cache_apply(struct cache *c, enum cache_event ev,
        json_object *obj, struct cache_result *res);

/* Frees the owned strings of res and zeroes it.  NULL is fine. */
void cache_result_fini(struct cache_result *res);

/*
 * Replaces the whole content with the n objects of a (re)list whose
 * metadata.resourceVersion was list_rv (copied; NULL keeps cache_rv()),
 * reporting the difference as client-go's DeltaFIFO Replace followed by
 * the informer does: for each listed object, in list order, on_update(old,
 * new) when the key was cached (even if nothing changed) or on_add(new);
 * then for each cached key missing from the list, in key order,
 * on_delete(last known state, tombstone = true).  items are borrowed (their
 * managedFields are stripped in place; NULL entries are skipped).  Invalid
 * items are skipped with a warning; a key listed twice keeps the last.
 * Returns the number of skipped items (0 when all were taken).
 */
size_t cache_replace(struct cache *c, json_object *const *items, size_t n,
        const char *list_rv, const struct cache_handlers *h, void *arg);

/*
 * Staged list items: a (re)list's objects turned into compact cache
 * entries as the pages arrive, so the parsed json-c trees of a page can be
 * freed at once (one item at a time) instead of being kept until the list
 * ends.  cache_replace_staged() then installs them.  Caller frees with
 * cache_stage_free().
 */
struct cache_stage;

struct cache_stage *cache_stage_new(void);
void cache_stage_free(struct cache_stage *st);
/* Drops every staged object (a list that starts again). */
void cache_stage_clear(struct cache_stage *st);
/* Stages obj (borrowed; its managedFields are stripped in place).
 * Returns 0, or -1 (with a warning logged, counted as skipped) when obj
 * is not a valid object (see cache_apply). */
int cache_stage_add(struct cache_stage *st, json_object *obj);
/* Number of objects staged. */
size_t cache_stage_count(const struct cache_stage *st);
/* cache_replace() with the staged objects, in staging order; empties st.
 * Returns the number of objects skipped while staging. */
size_t cache_replace_staged(struct cache *c, struct cache_stage *st,
        const char *list_rv, const struct cache_handlers *h, void *arg);

/* The value of label key on it, or NULL.  Borrowed from it.  The
 * signature of labelsel_get_fn (labelsel.h): pass the item as arg. */
const char *cache_item_label(void *item, const char *key);

/* Compact JSON text of ns/name (ns NULL or "" for cluster-scoped), or
 * NULL when absent.  Borrowed. */
const char *cache_get(const struct cache *c, const char *ns, const char *name);

/* Same by key ("ns/name" or "name"); fills *out when found.  Returns 0,
 * or -1 when absent. */
int cache_lookup(
        const struct cache *c, const char *key, struct cache_item *out);

/* The object ns/name parsed anew (caller frees with json_object_put()), or
 * NULL when absent. */
json_object *cache_get_obj(
        const struct cache *c, const char *ns, const char *name);

/* Calls fn for each object whose controller owner has this uid, in key
 * order.  Returns 0 or the first non-zero value fn returned. */
int cache_by_owner(
        const struct cache *c, const char *uid, cache_each_fn *fn, void *arg);

/* cache_by_owner() restricted to the objects whose labels match the
 * equality-based selector (NULL or "" matches all).  Returns -1 (fn never
 * called) when the selector does not parse. */
int cache_by_owner_sel(const struct cache *c, const char *uid,
        const char *selector, cache_each_fn *fn, void *arg);

/* Calls fn for each object in namespace ns (NULL: all namespaces; "":
 * cluster-scoped objects only) whose labels match the equality-based
 * selector (labelsel.h; NULL or "" matches all), in key order.  Returns 0,
 * the first non-zero value fn returned, or -1 (fn never called) when the
 * selector does not parse. */
int cache_list(const struct cache *c, const char *ns, const char *selector,
        cache_each_fn *fn, void *arg);

/* A json-c value that serializes as it->json (copied) without parsing
 * it: for message bodies that are only serialized (WORK, view replies).
 * It reads as an empty object.  Caller releases it with json_object_put()
 * (or hands it to a container). */
json_object *cache_item_raw(const struct cache_item *it);

/* Number of objects held. */
size_t cache_count(const struct cache *c);

/* Bytes held by the cache: objects (allocations) plus index tables. */
size_t cache_bytes(const struct cache *c);

/* The synced flag: set by the supervisor after the first full list. */
void cache_set_synced(struct cache *c, bool synced);
bool cache_synced(const struct cache *c);

/* The last resourceVersion seen (events, bookmarks, lists); "" before
 * any.  Borrowed.  Never compared or ordered: RVs are opaque. */
const char *cache_rv(const struct cache *c);

#endif
