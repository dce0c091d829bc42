/*
 * test_badinput.c: the bad-input corpus (tests/unit/data/badinput/, written
 * by its make-corpus.py).  Each file is one malformed input for one decoder
 * with a sidecar <name>.expect giving the expected outcome; every file is
 * fed to its decoder, which must fail with that error (exact prefix) and
 * nothing else: no crash, no leak (make asan), no partial result.  A few
 * watch cases say "error: (none)": inputs the decoder accepts on purpose
 * (their sidecar comment says why); they are kept to show they do no harm.
 * BADINPUT_PRINT=1 prints every actual outcome instead of comparing (to
 * review before writing expected.json for make-corpus.py).
 *
 *   ipc/         ipc_decode() of one wire message
 *   watch/       kapi_watch_* over a whole stream (4096-byte event bound)
 *   status/      kapi_err_from_http() of an error answer's body
 *   kubeconfig/  kapi_conf_from_memory()
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/kapi_conf.h"
#include "common/kapi_conf_mem.h"
#include "common/kapi_err.h"
#include "common/kapi_watch.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "tests/lib/testutil.h"

#define DATA "tests/unit/data/badinput/"

/* One case: its input and its sidecar's keys. */
struct bcase {
	char name[128];
	char *data;
	size_t len;
	char *expect; /* the sidecar text */
};

/* The value of key in the sidecar (borrowed into buf), or NULL. */
static const char *
sidecar(const struct bcase *c, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);

	for (const char *l = c->expect; l != NULL && *l != '\0';) {
		const char *nl = strchr(l, '\n');
		size_t n = nl != NULL ? (size_t)(nl - l) : strlen(l);
		if (n > klen + 1 && strncmp(l, key, klen) == 0
		        && l[klen] == ':' && l[klen + 1] == ' ') {
			snprintf(buf, size, "%.*s", (int)(n - klen - 2),
			        l + klen + 2);
			return (buf);
		}
		l = nl != NULL ? nl + 1 : NULL;
	}
	return (NULL);
}

/* actual must start with the sidecar's value for key. */
static void
expect_prefix(const struct bcase *c, const char *key, const char *actual)
{
	char want[1024];

	if (getenv("BADINPUT_PRINT") != NULL) { /* for make-corpus.py */
		printf("%s\t%s\t%s\n", c->name, key,
		        actual != NULL ? actual : "(none)");
		return;
	}
	if (sidecar(c, key, want, sizeof(want)) == NULL) {
		fail_msg("%s: no \"%s:\" in its sidecar", c->name, key);
	}
	if (strcmp(want, "(none)") == 0) { /* accepted: see the comment */
		if (actual != NULL) {
			fail_msg("%s: %s \"%s\", expected none", c->name, key,
			        actual);
		}
		return;
	}
	if (actual == NULL || strncmp(actual, want, strlen(want)) != 0) {
		fail_msg("%s: %s \"%s\", expected it to start with \"%s\"",
		        c->name, key, actual != NULL ? actual : "(none)",
		        want);
	}
}

typedef void case_fn(const struct bcase *c);

/* Runs fn over every input of DATA/dir (files with a sidecar); returns
 * the number of cases. */
static int
each_case(const char *dir, const char *ext, case_fn *fn)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), DATA "%s", dir);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		const char *dot = strrchr(de->d_name, '.');
		struct bcase c;

		if (dot == NULL || strcmp(dot + 1, ext) != 0) {
			continue;
		}
		snprintf(c.name, sizeof(c.name), "%s/%.*s", dir,
		        (int)(dot - de->d_name), de->d_name);
		snprintf(path, sizeof(path), DATA "%s/%s", dir, de->d_name);
		c.data = testutil_read_file(path, &c.len);
		snprintf(path, sizeof(path), DATA "%s.expect", c.name);
		c.expect = testutil_read_file(path, NULL);
		if (c.data == NULL || c.expect == NULL) {
			fail_msg("%s: input or sidecar unreadable", c.name);
		}
		fn(&c);
		free(c.data);
		free(c.expect);
		n++;
	}
	closedir(d);
	return (n);
}

/* ---- ipc ---- */

static void
ipc_case(const struct bcase *c)
{
	struct ipc_msg m;
	char err[512] = "";

	if (ipc_decode(c->data, c->len, 0, &m, err, sizeof(err)) == 0) {
		ipc_msg_fini(&m);
		fail_msg("%s: decoded", c->name);
	}
	assert_null(m.body);
	expect_prefix(c, "error", err);
}

static void
test_ipc(void **state)
{
	(void)state;
	assert_true(each_case("ipc", "bin", ipc_case) >= 60);
}

/* ---- watch ---- */

static void
watch_case(const struct bcase *c)
{
	struct kapi_watch *w = kapi_watch_new(4096, 0);
	struct kapi_watch_event ev;
	char want[64], got[32];
	int events = 0;

	(void)kapi_watch_feed(w, c->data, c->len);
	while (kapi_watch_next(w, &ev) == 1) {
		events++;
		kapi_watch_event_fini(&ev);
	}
	(void)kapi_watch_finish(w);
	expect_prefix(c, "error", kapi_watch_error(w));
	snprintf(got, sizeof(got), "%d", events);
	if (getenv("BADINPUT_PRINT") != NULL) {
		printf("%s\tevents\t%s\n", c->name, got);
	} else if (sidecar(c, "events", want, sizeof(want)) == NULL
	        || strcmp(want, got) != 0) {
		fail_msg("%s: %d events", c->name, events);
	}
	kapi_watch_free(w);
}

static void
test_watch(void **state)
{
	(void)state;
	assert_true(each_case("watch", "json", watch_case) >= 15);
}

/* ---- status ---- */

static void
status_case(const struct bcase *c)
{
	struct kapi_err e = KAPI_ERR_INIT;
	char http[64], method[16];
	long code;

	if (sidecar(c, "http", http, sizeof(http)) == NULL
	        || sscanf(http, "%ld %15s", &code, method) != 2) {
		fail_msg("%s: no \"http: CODE METHOD\"", c->name);
	}
	kapi_err_from_http(&e, code, method, c->data, c->len, NULL);
	assert_non_null(e.message);
	expect_prefix(c, "rc", kapi_rc_name(e.rc));
	expect_prefix(c, "reason", e.reason);
	expect_prefix(c, "message", e.message);
	/* one line of printable text, bounded */
	for (const char *p = e.message; *p != '\0'; p++) {
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
	}
	assert_true(strlen(e.message) <= 4096);
	kapi_err_fini(&e);
}

static void
test_status(void **state)
{
	(void)state;
	assert_true(each_case("status", "body", status_case) >= 15);
}

/* ---- kubeconfig ---- */

static void
kubeconfig_case(const struct bcase *c)
{
	struct kapi_conf *conf;
	char err[512] = "";

	conf = kapi_conf_from_memory(c->data, c->len, "/nonexistent-badinput",
	        NULL, err, sizeof(err));
	if (conf != NULL) {
		kapi_conf_free(conf);
		fail_msg("%s: loaded", c->name);
	}
	expect_prefix(c, "error", err);
}

static void
test_kubeconfig(void **state)
{
	(void)state;
	assert_true(each_case("kubeconfig", "yaml", kubeconfig_case) >= 15);
}

static int
quiet(void **state)
{
	static FILE *null;

	(void)state;
	if (null == NULL) {
		null = fopen("/dev/null", "w");
		log_setfd(fileno(null));
	}
	return (0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipc),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_kubeconfig),
	};

	return (cmocka_run_group_tests(tests, quiet, NULL));
}
