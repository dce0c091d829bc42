/*
 * kapi_watch.c: owns the decoding of Kubernetes watch streams (spec
 * kube-api.md B.5) into validated events.  The REST client feeds it the
 * body bytes of a watch as curl delivers them; the informer takes events
 * with kapi_watch_next().
 *
 * How it works: input is appended to a buffer `in`; `off` marks the first
 * byte not yet given to json-c.  Between events the decoder skips JSON
 * whitespace itself and insists on '{', so garbage and top-level arrays or
 * numbers fail at once and pending() can tell a boundary from a partial
 * event.  Inside an event, bytes go to one json_tokener that keeps its
 * state between calls: every byte is parsed exactly once, whatever the
 * chunking, so big events in small chunks cost O(n).  The tokener is never
 * given more than the bytes left under max_bytes, which bounds both memory
 * and work for an oversized event.  When an event completes, the rest of
 * the buffer waits until the event has been taken by next().
 *
 * One json-c 0.16 bug is worked around: a number split between two
 * json_tokener_parse_ex() calls loses part of its state ("41-" then "}"
 * is accepted as 41).  Bytes at the end of the input that may be the tail
 * of a number are held back until a byte that ends it arrives (see
 * note_number_tail), so the tokener never sees a number cut in two and the
 * result does not depend on how the stream was split.  The fuzz target
 * (tests/fuzz/fuzz_watch.c) checks exactly that property.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi_watch.h"
#include "common/log.h"
#include "common/xmalloc.h"

struct kapi_watch {
	struct json_tokener *tok;
	struct buf in;     /* received bytes */
	size_t off;        /* first byte of in not parsed */
	size_t nul_at;     /* index of a NUL in in, or SIZE_MAX */
	size_t hold_from;  /* in[hold_from..len) is a run of number bytes */
	size_t inflight;   /* bytes of the partial event */
	size_t stream_off; /* stream offset of in[off] */
	size_t event_off;  /* stream offset of the partial event's '{' */
	size_t max_bytes;
	int max_depth;
	/* skipping an event too deep to parse: its '{' and the scan */
	int skipping;
	size_t ev_start, sk_pos, sk_depth;
	int sk_str, sk_esc;
	size_t skipped;
	kapi_watch_skip_fn *on_skip;
	void *skip_arg;
	int has_ready;
	struct kapi_watch_event ready; /* valid when has_ready */
	int failed;
	char err[256];
};

static const char *const type_names[] = {
	[KAPI_WATCH_ADDED] = "ADDED",
	[KAPI_WATCH_MODIFIED] = "MODIFIED",
	[KAPI_WATCH_DELETED] = "DELETED",
	[KAPI_WATCH_BOOKMARK] = "BOOKMARK",
	[KAPI_WATCH_ERROR] = "ERROR",
};

#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

static int fail(struct kapi_watch *w, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Records the first error; later ones are ignored (sticky). */
static int
fail(struct kapi_watch *w, const char *fmt, ...)
{
	va_list ap;

	if (w->failed) {
		return (-1);
	}
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	w->failed = 1;
	/* Nothing more will be parsed: release the memory now. */
	buf_fini(&w->in);
	w->off = 0;
	w->nul_at = SIZE_MAX;
	return (-1);
}

struct kapi_watch *
kapi_watch_new(size_t max_event_bytes, int max_depth)
{
	struct kapi_watch *w;

	w = xcalloc(1, sizeof(*w));
	w->max_bytes = max_event_bytes ? max_event_bytes
	                               : KAPI_WATCH_DEFAULT_MAX_BYTES;
	w->max_depth
	        = max_depth > 0 ? max_depth : KAPI_WATCH_DEFAULT_MAX_DEPTH;
	w->tok = json_tokener_new_ex(w->max_depth);
	if (w->tok == NULL) {
		/* json-c returns NULL only when calloc fails. */
		fatalx("json_tokener_new_ex: out of memory");
	}
	/* Strict JSON, but several values on one stream are fine. */
	json_tokener_set_flags(w->tok,
	        JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	buf_init(&w->in);
	w->nul_at = SIZE_MAX;
	return (w);
}

void
kapi_watch_free(struct kapi_watch *w)
{
	if (w == NULL) {
		return;
	}
	if (w->has_ready) {
		kapi_watch_event_fini(&w->ready);
	}
	json_tokener_free(w->tok);
	buf_fini(&w->in);
	free(w);
}

void
kapi_watch_event_fini(struct kapi_watch_event *ev)
{
	if (ev == NULL) {
		return;
	}
	json_object_put(ev->object);
	memset(ev, 0, sizeof(*ev));
}

const char *
kapi_watch_type_name(enum kapi_watch_type type)
{
	if ((size_t)type >= NTYPES) {
		return ("?");
	}
	return (type_names[type]);
}

/* Copies s into out for an error message: at most 64 bytes, control
 * characters, quotes and backslashes replaced by '?'. */
static void
quote_value(char *out, size_t outsz, const char *s)
{
	size_t i, n;

	for (i = n = 0; s[i] != '\0' && n + 4 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == 64) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		out[n++] = (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
		        ? '?'
		        : (char)c;
	}
	out[n] = '\0';
}

static int
parse_type(const char *s, enum kapi_watch_type *out)
{
	size_t i;

	for (i = 0; i < NTYPES; i++) {
		if (strcmp(s, type_names[i]) == 0) {
			*out = (enum kapi_watch_type)i;
			return (0);
		}
	}
	return (-1);
}

/* Checks one complete event and keeps it as w->ready.  Takes env. */
static int
accept_event(struct kapi_watch *w, json_object *env)
{
	json_object *jtype, *jobj;
	enum kapi_watch_type type;
	char q[80];
	int rc = -1;

	if (!json_object_is_type(env, json_type_object)) {
		fail(w, "watch event is not a JSON object");
	} else if (!json_object_object_get_ex(env, "type", &jtype)) {
		fail(w, "watch event has no \"type\"");
	} else if (!json_object_is_type(jtype, json_type_string)) {
		fail(w, "watch event \"type\" is not a string");
	} else if (parse_type(json_object_get_string(jtype), &type) == -1) {
		quote_value(q, sizeof(q), json_object_get_string(jtype));
		fail(w, "unknown watch event type \"%s\"", q);
	} else if (!json_object_object_get_ex(env, "object", &jobj)) {
		fail(w, "watch event has no \"object\"");
	} else if (!json_object_is_type(jobj, json_type_object)) {
		fail(w, "watch event \"object\" is not a JSON object");
	} else {
		w->ready.type = type;
		w->ready.object = json_object_get(jobj);
		w->ready.rv = jx_get_str(jobj, "metadata.resourceVersion");
		w->has_ready = 1;
		rc = 0;
	}
	json_object_put(env);
	return (rc);
}

static int
is_ws(char c)
{
	return (c == ' ' || c == '\n' || c == '\r' || c == '\t');
}

/* Between events: skips whitespace; the next byte must open an object. */
static int
skip_to_event(struct kapi_watch *w)
{
	const char *p = w->in.data;
	unsigned char c;

	while (w->off < w->in.len && w->off != w->nul_at && is_ws(p[w->off])) {
		w->off++;
		w->stream_off++;
	}
	if (w->off == w->in.len || w->off == w->nul_at) {
		return (0);
	}
	c = (unsigned char)p[w->off];
	if (c == '{') {
		return (0);
	}
	if (c >= 0x20 && c < 0x7f) {
		return (fail(w,
		        "watch stream: expected '{' at offset %zu, "
		        "found '%c'",
		        w->stream_off, c));
	}
	return (fail(w,
	        "watch stream: expected '{' at offset %zu, "
	        "found byte 0x%02x",
	        w->stream_off, c));
}

static int
is_number_byte(char c)
{
	return ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.'
	        || c == 'e' || c == 'E');
}

/*
 * json-c 0.16 forgets part of its number state when a number is split
 * between two json_tokener_parse_ex() calls, and then accepts "41-" as 41
 * (or reports errors elsewhere).  So the bytes at the end of the input
 * that could be the tail of a number are held back until a byte that ends
 * the number arrives.  Called before data is appended; finds where the
 * trailing run of number bytes starts, looking only at the new bytes.
 */
static void
note_number_tail(struct kapi_watch *w, const char *data, size_t len)
{
	size_t i = len;

	while (i > 0 && is_number_byte(data[i - 1])) {
		i--;
	}
	if (i > 0) {
		w->hold_from = w->in.len + i;
	}
	/* else all new bytes extend the run that started at hold_from */
}

/* How many bytes the tokener may take now: up to a NUL, no more than the
 * event may still grow, and not the possible tail of a number at the end
 * of the input (unless the event is too big anyway: then holding back
 * would only buffer without bound). */
static size_t
chunk_len(const struct kapi_watch *w)
{
	size_t n, room = w->max_bytes - w->inflight;

	if (w->nul_at != SIZE_MAX && w->nul_at >= w->off) {
		n = w->nul_at - w->off;
	} else if (w->in.len - w->off > room) {
		n = room;
	} else {
		n = w->hold_from > w->off ? w->hold_from - w->off : 0;
	}
	if (n > room) {
		n = room;
	}
	return (n > INT_MAX ? INT_MAX : n);
}

/* The event being parsed is nested deeper than max_depth: from its '{'
 * (its bytes are kept while it is partial), scan its structure for its
 * end instead (skip_scan). */
static void
start_skip(struct kapi_watch *w)
{
	w->skipping = 1;
	w->ev_start = w->off - w->inflight;
	w->sk_pos = w->ev_start;
	w->sk_depth = 0;
	w->sk_str = w->sk_esc = 0;
}

/* Names the skipped event [ev_start, end) for the callback. */
static void
report_skip(struct kapi_watch *w, size_t end)
{
	const char *p = w->in.data + w->ev_start, *e = w->in.data + end;
	char type[16], name[512], what[640];

	jx_text_string(jx_text_member(p, e, "type"), e, type, sizeof(type));
	jx_text_name(jx_text_member(p, e, "object"), e, name, sizeof(name));
	snprintf(what, sizeof(what),
	        "%s event%s%s at offset %zu nested deeper than %d levels",
	        type[0] != '\0' ? type : "watch",
	        name[0] != '\0' ? " of " : "", name, w->event_off,
	        w->max_depth);
	w->skipped++;
	if (w->on_skip != NULL) {
		w->on_skip(w->skip_arg, what);
	}
}

/* One byte of structure while skipping; 1 when it closed the event. */
static int
skip_byte(struct kapi_watch *w, char c)
{
	if (w->sk_esc) {
		w->sk_esc = 0;
	} else if (w->sk_str) {
		w->sk_esc = c == '\\';
		w->sk_str = c != '"';
	} else if (c == '"') {
		w->sk_str = 1;
	} else if (c == '{' || c == '[') {
		w->sk_depth++;
	} else if ((c == '}' || c == ']') && --w->sk_depth == 0) {
		return (1);
	}
	return (0);
}

/* Scans the skipped event on from sk_pos; at its end the decoder goes on
 * after it.  0 (done, or more bytes needed) or -1 on error. */
static int
skip_scan(struct kapi_watch *w)
{
	size_t lim = w->nul_at < w->in.len ? w->nul_at : w->in.len;

	for (; w->sk_pos < lim; w->sk_pos++) {
		if (w->sk_pos - w->ev_start >= w->max_bytes) {
			return (fail(w, "watch event exceeds %zu bytes",
			        w->max_bytes));
		}
		if (skip_byte(w, w->in.data[w->sk_pos])) {
			w->sk_pos++;
			report_skip(w, w->sk_pos);
			w->stream_off
			        = w->event_off + (w->sk_pos - w->ev_start);
			w->off = w->sk_pos;
			w->inflight = 0;
			w->skipping = 0;
			json_tokener_reset(w->tok);
			return (0);
		}
	}
	if (lim == w->nul_at && lim < w->in.len) {
		return (fail(w, "NUL byte in watch stream at offset %zu",
		        w->event_off + (lim - w->ev_start)));
	}
	return (0);
}

/* Gives the tokener what it may take of the input; 1 when an event was
 * completed, 0 when it needs more, -1 on error. */
static int
tokenize(struct kapi_watch *w)
{
	enum json_tokener_error jerr;
	json_object *obj;
	size_t n = chunk_len(w), used;

	if (w->inflight == 0) {
		w->event_off = w->stream_off;
	}
	obj = json_tokener_parse_ex(w->tok, w->in.data + w->off, (int)n);
	used = json_tokener_get_parse_end(w->tok);
	jerr = json_tokener_get_error(w->tok);
	w->off += used;
	w->stream_off += used;
	w->inflight += used;
	if (obj != NULL) {
		w->inflight = 0;
		json_tokener_reset(w->tok);
		return (accept_event(w, obj) == 0 ? 1 : -1);
	}
	if (jerr == json_tokener_error_depth) {
		start_skip(w);
		return (0);
	}
	if (jerr != json_tokener_continue) {
		/* json-c's own error position depends on where the input
		 * was split (a number is checked when it ends), so report
		 * where the event starts: the same for every split. */
		return (fail(w,
		        "invalid JSON in watch event at offset %zu: %s",
		        w->event_off, json_tokener_error_desc(jerr)));
	}
	if (w->inflight >= w->max_bytes) {
		return (fail(
		        w, "watch event exceeds %zu bytes", w->max_bytes));
	}
	return (0);
}

/* Parses until an event is ready, the input is used up, or an error. */
static int
advance(struct kapi_watch *w)
{
	while (!w->failed && !w->has_ready) {
		if (w->skipping) {
			if (skip_scan(w) == -1 || w->skipping) {
				break;
			}
			continue;
		}
		if (w->inflight == 0 && skip_to_event(w) == -1) {
			break;
		}
		if (w->off == w->nul_at) {
			fail(w, "NUL byte in watch stream at offset %zu",
			        w->stream_off);
			break;
		}
		/* nothing left, or only the possible tail of a number */
		if (w->off == w->in.len || chunk_len(w) == 0) {
			break;
		}
		if (tokenize(w) == -1) {
			break;
		}
	}
	if (w->off == w->in.len && w->inflight == 0 && !w->skipping
	        && !w->failed) {
		buf_reset(&w->in);
		w->off = w->hold_from = 0;
	}
	return (w->failed ? -1 : 0);
}

/* Drops parsed bytes once they are at least half of the buffer, so the
 * copying stays linear in the input.  The bytes of a partial event are
 * kept (at most max_bytes): a skipped one is named from them. */
static void
compact(struct kapi_watch *w)
{
	size_t n = w->skipping ? w->ev_start : w->off - w->inflight;

	if (n == 0 || n < w->in.len / 2) {
		return;
	}
	buf_consume(&w->in, n);
	if (w->nul_at != SIZE_MAX) {
		w->nul_at -= n;
	}
	w->hold_from = w->hold_from > n ? w->hold_from - n : 0;
	w->off -= n;
	if (w->skipping) {
		w->ev_start -= n;
		w->sk_pos -= n;
	}
}

int
kapi_watch_feed(struct kapi_watch *w, const char *data, size_t len)
{
	const char *nul;

	if (w->failed) {
		return (-1);
	}
	if (len == 0) {
		return (0);
	}
	compact(w);
	if (w->nul_at == SIZE_MAX && (nul = memchr(data, '\0', len)) != NULL) {
		w->nul_at = w->in.len + (size_t)(nul - data);
	}
	note_number_tail(w, data, len);
	buf_append(&w->in, data, len);
	return (advance(w));
}

int
kapi_watch_next(struct kapi_watch *w, struct kapi_watch_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (!w->has_ready && advance(w) == -1) {
		return (-1);
	}
	if (!w->has_ready) {
		return (0);
	}
	*ev = w->ready;
	memset(&w->ready, 0, sizeof(w->ready));
	w->has_ready = 0;
	return (1);
}

void
kapi_watch_set_skip(struct kapi_watch *w, kapi_watch_skip_fn *fn, void *arg)
{
	w->on_skip = fn;
	w->skip_arg = arg;
}

size_t
kapi_watch_skipped(const struct kapi_watch *w)
{
	return (w->skipped);
}

size_t
kapi_watch_pending(const struct kapi_watch *w)
{
	return (w->in.len - w->off + w->inflight);
}

int
kapi_watch_finish(struct kapi_watch *w)
{
	if (advance(w) == -1) {
		return (-1);
	}
	if (w->has_ready) {
		return (fail(w,
		        "watch stream finished with an event not "
		        "taken by kapi_watch_next()"));
	}
	if (kapi_watch_pending(w) > 0) {
		return (fail(w, "watch stream truncated"));
	}
	return (0);
}

const char *
kapi_watch_error(const struct kapi_watch *w)
{
	return (w->failed ? w->err : NULL);
}

static const char *
member_string(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v)
	        || !json_object_is_type(v, json_type_string)) {
		return ("");
	}
	return (json_object_get_string(v));
}

int
kapi_watch_error_status(const struct kapi_watch_event *ev, long *code,
        const char **reason, const char **message)
{
	json_object *v;

	if (ev == NULL || ev->type != KAPI_WATCH_ERROR || ev->object == NULL) {
		return (-1);
	}
	if (code != NULL) {
		*code = 0;
		if (json_object_object_get_ex(ev->object, "code", &v)
		        && json_object_is_type(v, json_type_int)) {
			*code = (long)json_object_get_int64(v);
		}
	}
	if (reason != NULL) {
		*reason = member_string(ev->object, "reason");
	}
	if (message != NULL) {
		*message = member_string(ev->object, "message");
	}
	return (0);
}
