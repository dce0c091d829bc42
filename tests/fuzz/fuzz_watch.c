/*
 * fuzz_watch.c: libFuzzer target for the watch-stream decoder
 * (common/kapi_watch.c).  The first input byte picks where the rest is
 * split in two; both parts are fed, every event drained, the stream
 * finished.  As a differential check the same bytes are also decoded in
 * one piece (and, when short, one byte at a time): the events (type,
 * resourceVersion, serialised object) and the final error must be the
 * same, or the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/kapi_watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small bounds so the limits are reached by short inputs. */
#define FUZZ_MAX_BYTES 4096
#define FUZZ_MAX_DEPTH 12

static void
drain(struct kapi_watch *w, struct buf *log)
{
	struct kapi_watch_event ev;

	while (kapi_watch_next(w, &ev) == 1) {
		if (ev.object == NULL || (int)ev.type < KAPI_WATCH_ADDED
		        || ev.type > KAPI_WATCH_ERROR) {
			__builtin_trap();
		}
		buf_printf(log, "%s %s\n", kapi_watch_type_name(ev.type),
		        ev.rv != NULL ? ev.rv : "-");
		buf_puts(log,
		        json_object_to_json_string_ext(
		                ev.object, JSON_C_TO_STRING_PLAIN));
		(void)kapi_watch_error_status(&ev, NULL, NULL, NULL);
		kapi_watch_event_fini(&ev);
	}
}

/* Feeds s[0..len) in pieces of at most step bytes, draining after each;
 * stops at the first error. */
static void
feed(struct kapi_watch *w, const char *s, size_t len, size_t step,
        struct buf *log)
{
	size_t pos, n;

	for (pos = 0; pos < len; pos += n) {
		n = len - pos < step ? len - pos : step;
		if (kapi_watch_feed(w, s + pos, n) == -1) {
			return;
		}
		drain(w, log);
	}
}

/* Decodes s[0..len) cut at `cut`, each part fed in pieces of step bytes;
 * logs events and the final error. */
static void
decode(const char *s, size_t len, size_t cut, size_t step, struct buf *log)
{
	struct kapi_watch *w;
	const char *err;

	w = kapi_watch_new(FUZZ_MAX_BYTES, FUZZ_MAX_DEPTH);
	feed(w, s, cut, step, log);
	feed(w, s + cut, len - cut, step, log);
	drain(w, log);
	if (kapi_watch_finish(w) == 0 && kapi_watch_pending(w) != 0) {
		__builtin_trap();
	}
	err = kapi_watch_error(w);
	buf_puts(log, err != NULL ? err : "(clean)");
	kapi_watch_free(w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf a = BUF_INIT, b = BUF_INIT;
	const char *s;
	size_t len, cut;

	if (size == 0) {
		return (0);
	}
	s = (const char *)data + 1;
	len = size - 1;
	cut = len * data[0] / 255;
	decode(s, len, cut, SIZE_MAX, &a);
	decode(s, len, len, SIZE_MAX, &b);
	if (strcmp(buf_str(&a), buf_str(&b)) != 0) {
		__builtin_trap();
	}
	if (len <= 512) {
		buf_reset(&b);
		decode(s, len, cut, 1, &b);
		if (strcmp(buf_str(&a), buf_str(&b)) != 0) {
			__builtin_trap();
		}
	}
	buf_fini(&a);
	buf_fini(&b);
	return (0);
}
