/*
 * test_kapi_watch.c: the watch-stream decoder.  Every recorded stream in
 * tests/unit/data/watch/ (X.json, with X.expect listing "TYPE RV" per
 * event, "SKIPPED <what>" per event skipped as too deep, and an optional
 * last line "truncated" or "error: <message>") is
 * decoded whole, split in two at every byte offset, and one byte at a
 * time; all must give the same events and the same end.  Then the bounds,
 * sticky errors, finish/pending and the Status helper.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/kapi_watch.h"
#include "common/xmalloc.h"
#include "tests/lib/testutil.h"

#define DATADIR    "tests/unit/data/watch/"
#define TEST_MAX   8192
#define TEST_DEPTH 64

/* What decoding a stream produced. */
struct outcome {
	struct buf log;  /* "TYPE RV\n" per event */
	struct buf objs; /* each object serialised, one per line */
	char *error;     /* final error, NULL when finish() was clean */
	int error_in_finish;
};

static void
outcome_fini(struct outcome *o)
{
	buf_fini(&o->log);
	buf_fini(&o->objs);
	free(o->error);
	memset(o, 0, sizeof(*o));
}

static void
record_event(struct outcome *o, struct kapi_watch_event *ev)
{
	assert_non_null(ev->object);
	assert_true(json_object_is_type(ev->object, json_type_object));
	buf_printf(&o->log, "%s %s\n", kapi_watch_type_name(ev->type),
	        ev->rv != NULL ? ev->rv : "-");
	buf_puts(&o->objs,
	        json_object_to_json_string_ext(
	                ev->object, JSON_C_TO_STRING_PLAIN));
	buf_putc(&o->objs, '\n');
}

/* A skipped event, in the log among the others. */
static void
record_skip(void *arg, const char *what)
{
	buf_printf(&((struct outcome *)arg)->log, "SKIPPED %s\n", what);
}

/* Drains w; returns -1 once it failed. */
static int
drain(struct kapi_watch *w, struct outcome *o)
{
	struct kapi_watch_event ev;
	int rc;

	while ((rc = kapi_watch_next(w, &ev)) == 1) {
		record_event(o, &ev);
		kapi_watch_event_fini(&ev);
	}
	assert_null(ev.object);
	return (rc);
}

/* Decodes data fed in pieces of `step` bytes, with one extra cut at
 * `cut` (SIZE_MAX for none). */
static void
decode(const char *data, size_t len, size_t cut, size_t step,
        struct outcome *o)
{
	struct kapi_watch *w;
	size_t pos = 0, n;
	int failed = 0;

	memset(o, 0, sizeof(*o));
	w = kapi_watch_new(TEST_MAX, TEST_DEPTH);
	kapi_watch_set_skip(w, record_skip, o);
	while (pos < len && !failed) {
		n = len - pos < step ? len - pos : step;
		if (pos < cut && pos + n > cut) {
			n = cut - pos;
		}
		if (kapi_watch_feed(w, data + pos, n) == -1) {
			failed = 1;
		}
		pos += n;
		if (drain(w, o) == -1) {
			failed = 1;
		}
	}
	if (!failed && kapi_watch_finish(w) == -1) {
		o->error_in_finish = 1;
		failed = 1;
	}
	if (failed) {
		assert_non_null(kapi_watch_error(w));
		o->error = xstrdup(kapi_watch_error(w));
	} else {
		assert_null(kapi_watch_error(w));
		assert_int_equal(kapi_watch_pending(w), 0);
	}
	kapi_watch_free(w);
}

static void
assert_same(const struct outcome *a, const struct outcome *b, size_t cut,
        size_t step)
{
	if (strcmp(buf_str(&a->log), buf_str(&b->log)) != 0
	        || strcmp(buf_str(&a->objs), buf_str(&b->objs)) != 0
	        || (a->error == NULL) != (b->error == NULL)
	        || a->error_in_finish != b->error_in_finish
	        || (a->error != NULL && strcmp(a->error, b->error) != 0)) {
		fail_msg("cut %zu step %zu: got\n%s%s\nwant\n%s%s", cut, step,
		        buf_str(&b->log), b->error ? b->error : "(clean)",
		        buf_str(&a->log), a->error ? a->error : "(clean)");
	}
}

/* Checks the whole-stream decode against X.expect. */
static void
check_expect(const char *name, const struct outcome *o)
{
	char path[256], *exp, *last;
	struct buf want = BUF_INIT;
	size_t len;

	snprintf(path, sizeof(path), DATADIR "%s.expect", name);
	exp = testutil_read_file(path, &len);
	if (len > 0 && exp[len - 1] == '\n') {
		exp[--len] = '\0';
	}
	last = strrchr(exp, '\n');
	last = last != NULL ? last + 1 : exp;
	if (strcmp(last, "truncated") == 0
	        || strncmp(last, "error: ", 7) == 0) {
		buf_append(&want, exp, (size_t)(last - exp));
		assert_non_null(o->error);
		if (strcmp(last, "truncated") == 0) {
			assert_true(o->error_in_finish);
			assert_string_equal(
			        o->error, "watch stream truncated");
		} else {
			assert_false(o->error_in_finish);
			assert_string_equal(o->error, last + 7);
		}
	} else {
		buf_puts(&want, exp);
		buf_putc(&want, '\n');
		assert_null(o->error);
	}
	assert_string_equal(buf_str(&o->log), buf_str(&want));
	buf_fini(&want);
	free(exp);
}

static void
check_stream(const char *name)
{
	struct outcome whole, part;
	char path[256], *data;
	size_t len, cut;

	snprintf(path, sizeof(path), DATADIR "%s.json", name);
	data = testutil_read_file(path, &len);
	decode(data, len, SIZE_MAX, len ? len : 1, &whole);
	check_expect(name, &whole);
	for (cut = 0; cut <= len; cut++) {
		decode(data, len, cut, len, &part);
		assert_same(&whole, &part, cut, len);
		outcome_fini(&part);
	}
	decode(data, len, SIZE_MAX, 1, &part);
	assert_same(&whole, &part, SIZE_MAX, 1);
	outcome_fini(&part);
	decode(data, len, SIZE_MAX, 7, &part);
	assert_same(&whole, &part, SIZE_MAX, 7);
	outcome_fini(&part);
	outcome_fini(&whole);
	free(data);
}

#define STREAM_TEST(fn, name)                                                 \
	static void fn(void **state)                                          \
	{                                                                     \
		(void)state;                                                  \
		check_stream(name);                                           \
	}

STREAM_TEST(test_stream_configmaps, "configmaps")
STREAM_TEST(test_stream_jobs, "jobs")
STREAM_TEST(test_stream_pods, "pods")
STREAM_TEST(test_stream_agentruns, "agentruns")
STREAM_TEST(test_stream_expired, "expired")
STREAM_TEST(test_stream_pretty, "pretty")
STREAM_TEST(test_stream_unicode, "unicode")
STREAM_TEST(test_stream_merged, "merged")
STREAM_TEST(test_bad_truncated, "bad-truncated")
STREAM_TEST(test_bad_garbage, "bad-garbage")
STREAM_TEST(test_bad_wrong_type, "bad-wrong-type")
STREAM_TEST(test_bad_no_object, "bad-no-object")
STREAM_TEST(test_bad_no_type, "bad-no-type")
STREAM_TEST(test_bad_type_number, "bad-type-number")
STREAM_TEST(test_bad_object_string, "bad-object-string")
STREAM_TEST(test_bad_array, "bad-array")
STREAM_TEST(test_bad_number, "bad-number")
STREAM_TEST(test_bad_json, "bad-json")
STREAM_TEST(test_bad_nul, "bad-nul")
STREAM_TEST(test_deep_skipped, "deep")
STREAM_TEST(test_bad_oversize, "bad-oversize")
STREAM_TEST(test_bad_number_split, "bad-number-split")
STREAM_TEST(test_bad_number_tail, "bad-number-tail")

/* Feeds a C string; returns kapi_watch_next()'s result. */
static int
feed_next(struct kapi_watch *w, const char *s, struct kapi_watch_event *ev)
{
	if (kapi_watch_feed(w, s, strlen(s)) == -1) {
		memset(ev, 0, sizeof(*ev));
		return (-1);
	}
	return (kapi_watch_next(w, ev));
}

static void
test_error_status(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	const char *reason = NULL, *message = NULL;
	long code = 0;
	char *data;
	size_t len;

	(void)state;
	data = testutil_read_file(DATADIR "expired.json", &len);
	w = kapi_watch_new(0, 0);
	assert_int_equal(kapi_watch_feed(w, data, len), 0);
	assert_int_equal(kapi_watch_next(w, &ev), 1);
	assert_int_equal(ev.type, KAPI_WATCH_BOOKMARK);
	assert_string_equal(ev.rv, "17");
	assert_int_equal(kapi_watch_error_status(&ev, &code, NULL, NULL), -1);
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_next(w, &ev), 1);
	assert_int_equal(ev.type, KAPI_WATCH_ERROR);
	assert_null(ev.rv);
	assert_int_equal(
	        kapi_watch_error_status(&ev, &code, &reason, &message), 0);
	assert_int_equal(code, 410);
	assert_string_equal(reason, "Expired");
	assert_string_equal(message, "too old resource version: 5 (17)");
	assert_int_equal(kapi_watch_error_status(&ev, NULL, NULL, NULL), 0);
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_next(w, &ev), 0);
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);
	free(data);
}

static void
test_error_status_sparse(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	const char *reason = "x", *message = "x";
	long code = 7;

	(void)state;
	w = kapi_watch_new(0, 0);
	assert_int_equal(feed_next(w,
	                         "{\"type\":\"ERROR\",\"object\":"
	                         "{\"kind\":\"Status\",\"code\":\"500\"}}",
	                         &ev),
	        1);
	assert_int_equal(
	        kapi_watch_error_status(&ev, &code, &reason, &message), 0);
	assert_int_equal(code, 0);
	assert_string_equal(reason, "");
	assert_string_equal(message, "");
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_error_status(NULL, &code, NULL, NULL), -1);
	kapi_watch_free(w);
}

static void
test_bookmark_initial_events_end(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	json_object *md, *ann, *v;
	char *data;
	size_t len;
	int n = 0;

	(void)state;
	data = testutil_read_file(DATADIR "agentruns.json", &len);
	w = kapi_watch_new(0, 0);
	assert_int_equal(kapi_watch_feed(w, data, len), 0);
	while (kapi_watch_next(w, &ev) == 1) {
		if (ev.type == KAPI_WATCH_BOOKMARK && n++ == 0) {
			assert_string_equal(ev.rv, "91229");
			assert_true(json_object_object_get_ex(
			        ev.object, "metadata", &md));
			assert_true(json_object_object_get_ex(
			        md, "annotations", &ann));
			assert_true(json_object_object_get_ex(
			        ann, "k8s.io/initial-events-end", &v));
			assert_string_equal(json_object_get_string(v), "true");
		}
		kapi_watch_event_fini(&ev);
	}
	assert_int_equal(n, 2);
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);
	free(data);
}

static const char *
data_value(json_object *obj, const char *key, size_t *lenp)
{
	json_object *data, *v;

	assert_true(json_object_object_get_ex(obj, "data", &data));
	assert_true(json_object_object_get_ex(data, key, &v));
	*lenp = (size_t)json_object_get_string_len(v);
	return (json_object_get_string(v));
}

static void
test_unicode_values(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	char *data;
	size_t len, i, n;
	const char *s;

	(void)state;
	data = testutil_read_file(DATADIR "unicode.json", &len);
	w = kapi_watch_new(0, 0);
	for (i = 0; i < len; i++) {
		assert_int_equal(kapi_watch_feed(w, data + i, 1), 0);
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(kapi_watch_next(w, &ev), 1);
		s = data_value(ev.object, "emoji", &n);
		assert_string_equal(s, "\xf0\x9f\x9a\x80 launch \xe2\x9c\x85");
		s = data_value(ev.object, "html", &n);
		assert_string_equal(s, "<b>bold</b> & \"quoted\"");
		s = data_value(ev.object, "path", &n);
		assert_string_equal(s, "C:\\Users\\agent\\task.md");
		s = data_value(ev.object, "nul-escaped", &n);
		assert_int_equal(n, 3);
		assert_memory_equal(s, "a\0b", 3);
		s = data_value(ev.object, "greeting.ja", &n);
		assert_string_equal(s,
		        "\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab"
		        "\xe3\x81\xa1\xe3\x81\xaf\xe4\xb8\x96\xe7\x95\x8c");
		kapi_watch_event_fini(&ev);
	}
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);
	free(data);
}

static void
test_rv_absent_or_not_string(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;

	(void)state;
	w = kapi_watch_new(0, 0);
	assert_int_equal(feed_next(w,
	                         "{\"type\":\"ADDED\",\"object\":"
	                         "{\"kind\":\"X\"}}",
	                         &ev),
	        1);
	assert_null(ev.rv);
	kapi_watch_event_fini(&ev);
	assert_int_equal(
	        feed_next(w,
	                "{\"object\":{\"metadata\":"
	                "{\"resourceVersion\":12}},\"type\":\"DELETED\"}",
	                &ev),
	        1);
	assert_int_equal(ev.type, KAPI_WATCH_DELETED);
	assert_null(ev.rv);
	kapi_watch_event_fini(&ev);
	kapi_watch_free(w);
}

static void
test_pending_and_finish(void **state)
{
	const char *e = "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
	                "{\"resourceVersion\":\"5\"}}}";
	struct kapi_watch_event ev;
	struct kapi_watch *w;

	(void)state;
	w = kapi_watch_new(0, 0);
	assert_int_equal(kapi_watch_pending(w), 0);
	assert_int_equal(kapi_watch_next(w, &ev), 0);
	assert_null(ev.object);
	assert_int_equal(kapi_watch_feed(w, "", 0), 0);
	assert_int_equal(kapi_watch_feed(w, " \r\n\t", 4), 0);
	assert_int_equal(kapi_watch_pending(w), 0);
	assert_int_equal(kapi_watch_feed(w, e, 10), 0);
	assert_int_equal(kapi_watch_next(w, &ev), 0);
	assert_int_equal(kapi_watch_pending(w), 10);
	assert_int_equal(kapi_watch_feed(w, e + 10, strlen(e) - 10), 0);
	assert_int_equal(kapi_watch_feed(w, "\n{", 2), 0);
	/* the complete event is parsed, "{" is still waiting */
	assert_int_equal(kapi_watch_pending(w), 2);
	assert_int_equal(kapi_watch_next(w, &ev), 1);
	assert_string_equal(ev.rv, "5");
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_next(w, &ev), 0);
	assert_int_equal(kapi_watch_pending(w), 1);
	assert_int_equal(kapi_watch_finish(w), -1);
	assert_string_equal(kapi_watch_error(w), "watch stream truncated");
	kapi_watch_free(w);

	w = kapi_watch_new(0, 0);
	assert_int_equal(kapi_watch_feed(w, e, strlen(e)), 0);
	assert_int_equal(kapi_watch_finish(w), -1);
	assert_non_null(strstr(kapi_watch_error(w), "not taken"));
	kapi_watch_free(w);

	w = kapi_watch_new(0, 0);
	assert_int_equal(kapi_watch_finish(w), 0);
	assert_null(kapi_watch_error(w));
	kapi_watch_free(w);
}

static void
test_errors_are_sticky(void **state)
{
	const char *good = "{\"type\":\"ADDED\",\"object\":{}}\n";
	struct kapi_watch_event ev;
	struct kapi_watch *w;

	(void)state;
	w = kapi_watch_new(0, 0);
	assert_null(kapi_watch_error(w));
	assert_int_equal(feed_next(w,
	                         "{\"type\":\"ADDDED\",\"object\":{}}"
	                         "\n",
	                         &ev),
	        -1);
	assert_null(ev.object);
	assert_string_equal(
	        kapi_watch_error(w), "unknown watch event type \"ADDDED\"");
	assert_int_equal(kapi_watch_feed(w, good, strlen(good)), -1);
	assert_int_equal(kapi_watch_next(w, &ev), -1);
	assert_int_equal(kapi_watch_finish(w), -1);
	assert_string_equal(
	        kapi_watch_error(w), "unknown watch event type \"ADDDED\"");
	kapi_watch_free(w);
}

static void
test_unknown_type_quoted(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	struct buf b = BUF_INIT;
	int i;

	(void)state;
	buf_puts(&b, "{\"type\":\"A\\\"B\\n");
	for (i = 0; i < 200; i++) {
		buf_putc(&b, 'x');
	}
	buf_puts(&b, "\",\"object\":{}}");
	w = kapi_watch_new(0, 0);
	assert_int_equal(feed_next(w, buf_str(&b), &ev), -1);
	assert_non_null(strstr(
	        kapi_watch_error(w), "unknown watch event type \"A?B?xxx"));
	assert_non_null(strstr(kapi_watch_error(w), "x...\""));
	assert_true(strlen(kapi_watch_error(w)) < 120);
	assert_null(strchr(kapi_watch_error(w), '\n'));
	kapi_watch_free(w);
	buf_fini(&b);
}

/* An event of exactly max bytes passes, one byte more fails. */
static void
test_size_bound_exact(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	struct buf b = BUF_INIT;
	size_t max;

	(void)state;
	buf_puts(&b, "{\"type\":\"ADDED\",\"object\":{\"k\":\"");
	while (b.len < 200) {
		buf_putc(&b, 'v');
	}
	buf_puts(&b, "\"}}");
	max = b.len;
	w = kapi_watch_new(max, 0);
	assert_int_equal(kapi_watch_feed(w, b.data, b.len), 0);
	assert_int_equal(kapi_watch_feed(w, "\n \n", 3), 0);
	assert_int_equal(kapi_watch_next(w, &ev), 1);
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);

	w = kapi_watch_new(max - 1, 0);
	assert_int_equal(kapi_watch_feed(w, b.data, b.len), -1);
	assert_non_null(strstr(kapi_watch_error(w), "watch event exceeds "));
	assert_int_equal(strtoul(kapi_watch_error(w) + 20, NULL, 10), max - 1);
	kapi_watch_free(w);
	buf_fini(&b);
}

/* A huge event fails once max bytes are seen, without buffering it. */
static void
test_size_bound_streaming(void **state)
{
	const char *prefix = "{\"type\":\"ADDED\",\"object\":{\"k\":\"";
	struct kapi_watch *w;
	char chunk[4096];
	size_t fed = 0;
	int rc = 0;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	w = kapi_watch_new(65536, 0);
	assert_int_equal(kapi_watch_feed(w, prefix, strlen(prefix)), 0);
	while (rc == 0 && fed < 64 * 1024 * 1024) {
		rc = kapi_watch_feed(w, chunk, sizeof(chunk));
		fed += sizeof(chunk);
		assert_true(kapi_watch_pending(w) <= 65536);
	}
	assert_int_equal(rc, -1);
	assert_true(fed <= 65536);
	assert_string_equal(
	        kapi_watch_error(w), "watch event exceeds 65536 bytes");
	kapi_watch_free(w);
}

/* A number that never ends is not held back (see kapi_watch.c) beyond
 * the size bound. */
static void
test_size_bound_digits(void **state)
{
	const char *prefix = "{\"type\":\"ADDED\",\"object\":{\"n\":1";
	struct kapi_watch *w;
	char chunk[1000];
	size_t fed = 0;
	int rc = 0;

	(void)state;
	memset(chunk, '7', sizeof(chunk));
	w = kapi_watch_new(8192, 0);
	assert_int_equal(kapi_watch_feed(w, prefix, strlen(prefix)), 0);
	while (rc == 0 && fed < 1000000) {
		rc = kapi_watch_feed(w, chunk, sizeof(chunk));
		fed += sizeof(chunk);
		assert_true(kapi_watch_pending(w) <= 8192 + sizeof(chunk));
	}
	assert_int_equal(rc, -1);
	assert_true(fed <= 9000);
	assert_string_equal(
	        kapi_watch_error(w), "watch event exceeds 8192 bytes");
	kapi_watch_free(w);
}

static void
test_depth_bound(void **state)
{
	const char *e = "{\"type\":\"ADDED\",\"object\":{\"a\":{\"b\":1}}}";
	struct kapi_watch_event ev;
	struct kapi_watch *w;

	(void)state;
	w = kapi_watch_new(0, 4);
	assert_int_equal(feed_next(w, e, &ev), 1);
	kapi_watch_event_fini(&ev);
	kapi_watch_free(w);

	/* one level too deep: skipped, not an error; the next event comes */
	w = kapi_watch_new(0, 3);
	assert_int_equal(feed_next(w, e, &ev), 0);
	assert_null(kapi_watch_error(w));
	assert_int_equal(kapi_watch_skipped(w), 1);
	assert_int_equal(
	        feed_next(w, "{\"type\":\"DELETED\",\"object\":{}}", &ev), 1);
	assert_int_equal(ev.type, KAPI_WATCH_DELETED);
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);
	/* a skipped event still counts against the size bound */
	w = kapi_watch_new(64, 3);
	assert_int_equal(
	        feed_next(w,
	                "{\"type\":\"ADDED\",\"object\":{\"a\":{\"b\":"
	                "\"0123456789012345678901234567890123456789\"",
	                &ev),
	        -1);
	assert_string_equal(
	        kapi_watch_error(w), "watch event exceeds 64 bytes");
	kapi_watch_free(w);
	/* a truncated skipped event */
	w = kapi_watch_new(0, 3);
	assert_int_equal(
	        feed_next(w, "{\"type\":\"ADDED\",\"object\":{\"a\":{", &ev),
	        0);
	assert_int_equal(kapi_watch_finish(w), -1);
	assert_string_equal(kapi_watch_error(w), "watch stream truncated");
	kapi_watch_free(w);
}

/* Many events arriving in one buffer, and a big event in tiny chunks:
 * both must be linear (a quadratic decoder times out here). */
static void
test_linear_work(void **state)
{
	struct kapi_watch_event ev;
	struct kapi_watch *w;
	struct buf b = BUF_INIT;
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < 20000; i++) {
		buf_printf(&b,
		        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":"
		        "{\"name\":\"o%zu\",\"resourceVersion\":\"%zu\"}}}\n",
		        i, i + 1);
	}
	w = kapi_watch_new(0, 0);
	assert_int_equal(kapi_watch_feed(w, b.data, b.len), 0);
	while (kapi_watch_next(w, &ev) == 1) {
		n++;
		kapi_watch_event_fini(&ev);
	}
	assert_int_equal(n, 20000);
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);

	buf_reset(&b);
	buf_puts(&b, "{\"type\":\"ADDED\",\"object\":{\"data\":{");
	for (i = 0; i < 40000; i++) {
		buf_printf(&b, "%s\"k%zu\":\"value-%zu\"", i ? "," : "", i, i);
	}
	buf_puts(&b, "}}}\n");
	w = kapi_watch_new(b.len, 0);
	for (i = 0; i < b.len; i += 3) {
		assert_int_equal(kapi_watch_feed(w, b.data + i,
		                         b.len - i < 3 ? b.len - i : 3),
		        0);
	}
	assert_int_equal(kapi_watch_next(w, &ev), 1);
	kapi_watch_event_fini(&ev);
	assert_int_equal(kapi_watch_finish(w), 0);
	kapi_watch_free(w);
	buf_fini(&b);
}

static void
test_type_names(void **state)
{
	(void)state;
	assert_string_equal(kapi_watch_type_name(KAPI_WATCH_ADDED), "ADDED");
	assert_string_equal(kapi_watch_type_name(KAPI_WATCH_ERROR), "ERROR");
	assert_string_equal(
	        kapi_watch_type_name((enum kapi_watch_type)99), "?");
	kapi_watch_free(NULL);
	kapi_watch_event_fini(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_configmaps),
		cmocka_unit_test(test_stream_jobs),
		cmocka_unit_test(test_stream_pods),
		cmocka_unit_test(test_stream_agentruns),
		cmocka_unit_test(test_stream_expired),
		cmocka_unit_test(test_stream_pretty),
		cmocka_unit_test(test_stream_unicode),
		cmocka_unit_test(test_stream_merged),
		cmocka_unit_test(test_bad_truncated),
		cmocka_unit_test(test_bad_garbage),
		cmocka_unit_test(test_bad_wrong_type),
		cmocka_unit_test(test_bad_no_object),
		cmocka_unit_test(test_bad_no_type),
		cmocka_unit_test(test_bad_type_number),
		cmocka_unit_test(test_bad_object_string),
		cmocka_unit_test(test_bad_array),
		cmocka_unit_test(test_bad_number),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_bad_nul),
		cmocka_unit_test(test_deep_skipped),
		cmocka_unit_test(test_bad_oversize),
		cmocka_unit_test(test_bad_number_split),
		cmocka_unit_test(test_bad_number_tail),
		cmocka_unit_test(test_size_bound_digits),
		cmocka_unit_test(test_error_status),
		cmocka_unit_test(test_error_status_sparse),
		cmocka_unit_test(test_bookmark_initial_events_end),
		cmocka_unit_test(test_unicode_values),
		cmocka_unit_test(test_rv_absent_or_not_string),
		cmocka_unit_test(test_pending_and_finish),
		cmocka_unit_test(test_errors_are_sticky),
		cmocka_unit_test(test_unknown_type_quoted),
		cmocka_unit_test(test_size_bound_exact),
		cmocka_unit_test(test_size_bound_streaming),
		cmocka_unit_test(test_depth_bound),
		cmocka_unit_test(test_linear_work),
		cmocka_unit_test(test_type_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
