/*
 * kapi_list.h: the decoder of LIST answers (spec kube-api.md: a List is
 * {"kind":"<Kind>List","apiVersion":...,"metadata":{...},"items":[...]}),
 * beside the watch decoder (kapi_watch.h).  Prefix kapi_list_.
 *
 * The items are parsed one at a time in one pass over the body, never the
 * whole list as one tree: a 10,000-object page costs one object's tree at
 * a time.  Items lacking apiVersion or kind (real servers leave them out
 * of built-in lists) get the list's own (kind without its "List"
 * suffix).  An item nested deeper than JX_DEFAULT_DEPTH is skipped and
 * named to the skip callback; the rest of the list is decoded.
 *
 * Pure logic, no I/O.
 */
#ifndef KAPI_LIST_H
#define KAPI_LIST_H

#include <stddef.h>

#include <json-c/json.h>

struct kapi_list_cb {
	/* Each item in order (borrowed: take a reference to keep it). */
	void (*item)(void *arg, json_object *item);
	/* An item too deep to parse: its "namespace/name" when readable
	 * (else ""), its index.  NULL: skipped silently. */
	void (*skip)(void *arg, const char *name, size_t idx);
	void *arg;
};

/*
 * Decodes the LIST answer body[0..len): every item to cb, every other
 * top-level member into *doc (owned by the caller: metadata.continue,
 * metadata.resourceVersion).  Returns 0, or -1 when the body is not a
 * JSON object, holds a NUL, or its items are not an array (or null) of
 * values that parse (*doc NULL; items already handed out stay handed).
 */
int kapi_list_decode(const char *body, size_t len, json_object **doc,
        const struct kapi_list_cb *cb);

#endif
