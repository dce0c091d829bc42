/*
 * fuzz_watch.c: libFuzzer target for the watch-stream decoder
 * (common/kapi_watch.c).  The first input byte picks where the rest is
 * split in two; both parts are fed, every event drained, the stream
 * finished.  As a differential check the same bytes are also decoded in
 * one piece: the event count, the types and resourceVersions, and the
 * final error must be the same, or the target traps.
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
		(void)kapi_watch_error_status(&ev, NULL, NULL, NULL);
		kapi_watch_event_fini(&ev);
	}
}

/* Decodes s[0..len) cut at `cut`; logs events and the final error. */
static void
decode(const char *s, size_t len, size_t cut, struct buf *log)
{
	struct kapi_watch *w;
	const char *err;

	w = kapi_watch_new(FUZZ_MAX_BYTES, FUZZ_MAX_DEPTH);
	if (kapi_watch_feed(w, s, cut) == 0) {
		drain(w, log);
	}
	if (kapi_watch_feed(w, s + cut, len - cut) == 0) {
		drain(w, log);
	}
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
	decode(s, len, cut, &a);
	decode(s, len, len, &b);
	if (strcmp(buf_str(&a), buf_str(&b)) != 0) {
		__builtin_trap();
	}
	buf_fini(&a);
	buf_fini(&b);
	return (0);
}
