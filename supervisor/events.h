/*
 * events.h: the Kubernetes Event correlator, as client-go's recorder
 * (tools/record, EventCorrelator) does it.  Pure logic: time is a
 * parameter, no I/O.  Prefix ev_.
 *
 * Workers (workers/kobj.h kobj_event) and the supervisor itself hand it a
 * bare core/v1 Event (involvedObject, type, reason, message); ev_correlate
 * stamps it as client-go's makeEvent does and decides how it goes out:
 *
 *  1. Aggregation: events with the same source, involved object, type and
 *     reason but different messages are "similar".  From the
 *     EV_MAX_SIMILAR-th distinct message seen within EV_SIMILAR_WINDOW_MS
 *     (the window restarts when none came for that long), the event is
 *     replaced by one aggregate event whose message is
 *     "(combined from similar events): <message>", deduplicated below
 *     under the aggregate key (so it becomes a count).
 *  2. Deduplication: an event identical to one already recorded (same
 *     source, object, type, reason, message) is not created again: the
 *     existing Event (same name, same firstTimestamp) gets a strategic
 *     merge PATCH of {"count": n+1, "lastTimestamp": now, "message": m}.
 *  3. Spam filter: a token bucket per source + involved object (burst
 *     EV_SPAM_BURST, one token back every EV_SPAM_REFILL_MS); an event
 *     finding it empty is dropped.  As in client-go, a dropped event still
 *     counts in step 2.
 *
 * Each of the three keeps an LRU cache of at most cache_size entries
 * (default EV_CACHE_SIZE, client-go's 4096): the least recently used key
 * is forgotten first (a forgotten event is created anew).
 *
 * Stamping (client-go makeEvent): metadata.name "<involvedObject.name>.<hex
 * unix nanoseconds>" (strictly increasing nanoseconds, so two events in one
 * tick never share a name), metadata.namespace = the object's namespace
 * ("default" for cluster-scoped objects), firstTimestamp = lastTimestamp =
 * now (RFC 3339), count 1, source.component, reportingComponent,
 * reportingInstance (when given), type "Normal" when absent, the message
 * cut to EV_MESSAGE_MAX bytes on a UTF-8 boundary.
 */
#ifndef EVENTS_H
#define EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define EV_COMPONENT         "sympozium-controller"
#define EV_CACHE_SIZE        4096
#define EV_MAX_SIMILAR       10
#define EV_SIMILAR_WINDOW_MS (600 * 1000)
#define EV_SPAM_BURST        25
#define EV_SPAM_REFILL_MS    (300 * 1000)
#define EV_MESSAGE_MAX       1024
#define EV_AGGREGATE_PREFIX  "(combined from similar events): "

struct ev;

struct ev_conf {
	const char *component; /* source.component; NULL: EV_COMPONENT */
	const char *instance;  /* reportingInstance; NULL: none */
	size_t cache_size;     /* per cache; 0: EV_CACHE_SIZE */
};

/* A correlator; conf may be NULL (defaults); its strings are copied.
 * Caller frees with ev_free(). */
struct ev *ev_new(const struct ev_conf *conf);
void ev_free(struct ev *e);

enum ev_verb {
	EV_CREATE, /* POST event */
	EV_PATCH,  /* PATCH (strategic merge) events/<ns>/<name> with patch */
	EV_DROP,   /* rate-limited or malformed: send nothing */
};

/* What to send.  Owned; release with ev_action_fini(). */
struct ev_action {
	enum ev_verb verb;
	json_object *event; /* CREATE, PATCH: the whole Event (for PATCH: what
	                       to POST instead if the Event is gone) */
	json_object *patch; /* PATCH: {"count","lastTimestamp","message"} */
	const char *ns;     /* CREATE, PATCH: borrowed from event */
	const char *name;   /* CREATE, PATCH: borrowed from event */
	const char *why;    /* EV_DROP: static reason */
};

/*
 * Correlates one event (borrowed; copied) at now_ns (unix nanoseconds).
 * Fills *out (zeroed first) and returns its verb.  An event without
 * involvedObject.name or reason is dropped (why says so).
 */
enum ev_verb ev_correlate(struct ev *e, json_object *event, int64_t now_ns,
        struct ev_action *out);

void ev_action_fini(struct ev_action *a);

/* A bare core/v1 Event about involved (borrowed; its apiVersion, kind,
 * namespace, name, uid and resourceVersion become involvedObject), as
 * ev_correlate() takes it; the same shape as workers/kobj.h kobj_event().
 * Caller puts. */
json_object *ev_event_new(json_object *involved, const char *type,
        const char *reason, const char *message);

struct ev_stats {
	uint64_t created, patched, dropped, aggregated;
	size_t similar_entries, log_entries, spam_entries; /* cache sizes */
};
void ev_stats(const struct ev *e, struct ev_stats *out);

#endif
