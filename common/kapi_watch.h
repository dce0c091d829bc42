/*
 * kapi_watch.h: decoder for Kubernetes watch streams (spec kube-api.md
 * B.5).  The body of a `?watch=true` answer is a sequence of JSON objects
 * {"type":"ADDED","object":{...}}, usually one per line, but the bytes may
 * arrive split or merged at any offset, pretty-printed, or separated by any
 * JSON whitespace.  The decoder takes bytes as they come (kapi_watch_feed)
 * and hands out one validated event at a time (kapi_watch_next).
 *
 * Pure logic, no I/O.  Each input byte is parsed once (json-c's streaming
 * tokener keeps the state of a partial event between feeds).
 *
 * Errors are sticky: after feed, next or finish return -1, every later
 * call returns -1 too and kapi_watch_error() gives the one-line reason.
 *
 * An event nested deeper than max_depth is not an error: it is skipped
 * (its end found from its structure alone, without parsing), counted, and
 * handed to the skip callback by name (type, namespace/name when
 * readable, stream offset), and the events after it are decoded as usual.
 * One object too deep for the cache must not break the whole watch.
 */
#ifndef KAPI_WATCH_H
#define KAPI_WATCH_H

#include <stddef.h>

#include <json-c/json.h>

/* Used when kapi_watch_new() is given 0. */
#define KAPI_WATCH_DEFAULT_MAX_BYTES (16u * 1024 * 1024)
#define KAPI_WATCH_DEFAULT_MAX_DEPTH 64

enum kapi_watch_type {
	KAPI_WATCH_ADDED,
	KAPI_WATCH_MODIFIED,
	KAPI_WATCH_DELETED,
	KAPI_WATCH_BOOKMARK,
	KAPI_WATCH_ERROR,
};

struct kapi_watch_event {
	enum kapi_watch_type type;
	/* The event's "object" (for ERROR a Status).  After kapi_watch_next()
	 * returns 1 the caller owns one reference: kapi_watch_event_fini()
	 * drops it, or take it with json_object_get() first. */
	json_object *object;
	/* metadata.resourceVersion, or NULL.  Borrowed from object. */
	const char *rv;
};

struct kapi_watch;

/*
 * max_event_bytes bounds one event (from its '{' to its '}'); 0 means
 * KAPI_WATCH_DEFAULT_MAX_BYTES.  max_depth is json-c's nesting depth (the
 * event object is level 1, "object" level 2, its fields level 3, ...);
 * 0 or less means KAPI_WATCH_DEFAULT_MAX_DEPTH.  Caller frees with
 * kapi_watch_free().
 */
struct kapi_watch *kapi_watch_new(size_t max_event_bytes, int max_depth);
/* Frees w, including an event not yet handed out.  NULL is fine. */
void kapi_watch_free(struct kapi_watch *w);

/* Called for each skipped event, with a one-line description ("MODIFIED
 * event of ns/name at offset N nested deeper than 64 levels"), borrowed
 * for the call.  Runs inside feed/next/finish. */
typedef void kapi_watch_skip_fn(void *arg, const char *what);
/* Sets the skip callback (fn NULL: skipped events are only counted). */
void kapi_watch_set_skip(
        struct kapi_watch *w, kapi_watch_skip_fn *fn, void *arg);
/* Events skipped so far. */
size_t kapi_watch_skipped(const struct kapi_watch *w);

/*
 * Takes the next len bytes of the stream (copied; data is borrowed).
 * Parses as far as the first complete event that was not handed out yet,
 * so an oversized or malformed event is reported here already.  Returns 0,
 * or -1 when the stream is broken.  Bytes after an undelivered event are
 * kept: after each feed call kapi_watch_next() until it returns 0.
 */
int kapi_watch_feed(struct kapi_watch *w, const char *data, size_t len);

/*
 * Produces the next event: returns 1 and fills ev (caller frees with
 * kapi_watch_event_fini()), 0 when more bytes are needed (ev zeroed), or
 * -1 on error (ev zeroed).  Events before a broken one are all produced
 * before the -1, however the bytes were split.
 */
int kapi_watch_next(struct kapi_watch *w, struct kapi_watch_event *ev);

/* Drops the reference to ev->object and zeroes ev.  NULL ev is fine. */
void kapi_watch_event_fini(struct kapi_watch_event *ev);

/*
 * Bytes received but not yet part of a delivered event: the partial event
 * inside the tokener plus unparsed input.  Leading whitespace between
 * events is not counted once it has been parsed, so after next() returns
 * 0, pending() == 0 exactly when the stream is at an event boundary.
 */
size_t kapi_watch_pending(const struct kapi_watch *w);

/*
 * Call at end of stream, after next() returned 0.  Returns 0 when the
 * stream ended on an event boundary (only whitespace after the last
 * event), else -1 with the error "watch stream truncated" (or the earlier
 * error).  An event never taken with next() is an error too.
 */
int kapi_watch_finish(struct kapi_watch *w);

/* The reason of the sticky error, one line; NULL while there is none.
 * Borrowed from w. */
const char *kapi_watch_error(const struct kapi_watch *w);

/* "ADDED", "MODIFIED", ...; "?" for a value outside the enum. */
const char *kapi_watch_type_name(enum kapi_watch_type type);

/*
 * For an ERROR event: reads the Status (spec A.6).  code gets "code" (0
 * when absent), reason and message get the strings ("" when absent,
 * borrowed from ev->object).  Any out pointer may be NULL.  Returns 0, or
 * -1 when ev is not an ERROR event (outputs then untouched).
 */
int kapi_watch_error_status(const struct kapi_watch_event *ev, long *code,
        const char **reason, const char **message);

#endif
