/*
 * test_zoneinfo.c: the supervisor's answers to zoneinfo views
 * (supervisor/zoneinfo.c) over a temporary zoneinfo directory: a zone's
 * bytes (base64, decoded back and parsed by cron.c), not_found for a
 * missing zone or a directory, errors for bad names (traversal, absolute,
 * bad characters, too long), an oversized file, a file that is not TZif
 * and an unreadable one; "UTC" and "Local" built in; $TZDIR; the table
 * (a second lookup reads no file; bounded, least recently used evicted);
 * and zi_reply()'s VIEW_REPLY bodies through the codec.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "supervisor/zoneinfo.h"
#include "tests/lib/testutil.h"
#include "workers/cron.h"

#define SYS_NY "/usr/share/zoneinfo/America/New_York"

static char dir[64];

static void
put_file(const char *rel, const void *data, size_t len)
{
	char *path = xasprintf("%s/%s", dir, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(path);
}

static void
mk(const char *rel)
{
	char *path = xasprintf("%s/%s", dir, rel);

	assert_int_equal(mkdir(path, 0755), 0);
	free(path);
}

static int
setup(void **state)
{
	size_t len = 0;
	char *ny = testutil_read_file(SYS_NY, &len);
	char *big = xcalloc(1, IPC_DATA_MAX + 1);

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test-zoneinfo-XXXXXX");
	if (mkdtemp(dir) == NULL || ny == NULL) {
		return (-1);
	}
	mk("America");
	put_file("America/New_York", ny, len);
	put_file("EST5EDT", ny, len);
	memcpy(big, "TZif", 4);
	put_file("Big", big, IPC_DATA_MAX + 1);
	put_file("Max", big, IPC_DATA_MAX); /* not a valid zone, but TZif */
	put_file("Text", "hello, world\n", 13);
	put_file("Empty", "", 0);
	put_file("Secret", "TZif", 4);
	{
		char *p = xasprintf("%s/Secret", dir);
		chmod(p, 0);
		free(p);
	}
	free(big);
	free(ny);
	return (0);
}

static int
teardown(void **state)
{
	const char *files[] = { "America/New_York", "EST5EDT", "Big", "Max",
		"Text", "Empty", "Secret", "America" };

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = xasprintf("%s/%s", dir, files[i]);
		if (unlink(p) != 0) {
			rmdir(p);
		}
		free(p);
	}
	rmdir(dir);
	return (0);
}

static void
expect_status(struct zi *z, const char *name, enum ipc_view_status want,
        const char *msg)
{
	const char *b64 = NULL;
	char err[256] = "";
	enum ipc_view_status st = zi_lookup(z, name, &b64, err, sizeof(err));

	if (st != want) {
		fail_msg("%s: status %d, want %d (%s)", name, st, want, err);
	}
	if (want != IPC_VS_OK) {
		assert_null(b64);
	}
	if (msg != NULL && strstr(err, msg) == NULL) {
		fail_msg("%s: \"%s\" lacks \"%s\"", name, err, msg);
	}
}

static void
test_found(void **state)
{
	struct zi *z = zi_new(dir);
	const char *b64 = NULL;
	unsigned char *data;
	struct cron_zone *cz;
	char err[256];
	size_t len, flen = 0;
	char *file = testutil_read_file(SYS_NY, &flen);

	(void)state;
	assert_int_equal(
	        zi_lookup(z, "America/New_York", &b64, err, sizeof(err)),
	        IPC_VS_OK);
	assert_int_equal(ipc_b64_decode(b64, &data, &len), 0);
	assert_int_equal(len, flen);
	assert_memory_equal(data, file, len);
	cz = cron_zone_parse(data, len, err, sizeof(err));
	assert_non_null(cz);
	/* 2026-01-15T12:00Z: EST; 2026-07-15T12:00Z: EDT */
	assert_int_equal(cron_zone_offset(cz, 1768478400), -5 * 3600);
	assert_int_equal(cron_zone_offset(cz, 1784116800), -4 * 3600);
	cron_zone_free(cz);
	free(data);
	free(file);
	/* the table answers again without reading */
	assert_int_equal(zi_reads(z), 1);
	assert_int_equal(zi_cached(z), 1);
	expect_status(z, "America/New_York", IPC_VS_OK, NULL);
	assert_int_equal(zi_reads(z), 1);
	expect_status(z, "EST5EDT", IPC_VS_OK, NULL);
	expect_status(z, "Max", IPC_VS_OK, NULL);
	assert_int_equal(zi_reads(z), 3);
	zi_free(z);
}

static void
test_not_found(void **state)
{
	struct zi *z = zi_new(dir);

	(void)state;
	expect_status(z, "Nowhere/City", IPC_VS_NOT_FOUND, NULL);
	expect_status(z, "America", IPC_VS_NOT_FOUND, NULL);
	expect_status(z, "America/New_York/x", IPC_VS_NOT_FOUND, NULL);
	expect_status(z, "Text/x", IPC_VS_NOT_FOUND, NULL);
	/* not kept: a zone installed later is found */
	assert_int_equal(zi_cached(z), 0);
	zi_free(z);
}

static void
test_bad_names(void **state)
{
	struct zi *z = zi_new(dir);
	const char *bad[] = { "", "/etc/passwd", "../../etc/passwd",
		"America/../../../etc/passwd", "..", "America/./New_York",
		"America//New_York", "America/", "New York", "a;b", "a\\b",
		"$HOME", "Europe/Lond\xc3\xb6n" };
	char longname[IPC_NAME_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_status(
		        z, bad[i], IPC_VS_ERROR, "invalid time zone name");
	}
	expect_status(z, NULL, IPC_VS_ERROR, "invalid time zone name");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	expect_status(z, longname, IPC_VS_ERROR, "invalid time zone name");
	assert_int_equal(zi_reads(z), 0); /* no file was opened */
	zi_free(z);
}

static void
test_bad_files(void **state)
{
	struct zi *z = zi_new(dir);

	(void)state;
	expect_status(z, "Big", IPC_VS_ERROR, "too large");
	expect_status(z, "Text", IPC_VS_ERROR, "not a TZif file");
	expect_status(z, "Empty", IPC_VS_ERROR, "not a TZif file");
	if (geteuid() != 0) { /* root reads mode 0 files */
		expect_status(z, "Secret", IPC_VS_ERROR, "cannot open");
	}
	assert_int_equal(zi_cached(z), 0);
	zi_free(z);
}

static void
test_utc_local(void **state)
{
	struct zi *z = zi_new("/nonexistent");

	(void)state;
	for (int i = 0; i < 2; i++) {
		const char *b64 = NULL;
		unsigned char *data;
		struct cron_zone *cz;
		char err[256];
		size_t len;
		assert_int_equal(zi_lookup(z, i ? "Local" : "UTC", &b64, err,
		                         sizeof(err)),
		        IPC_VS_OK);
		assert_int_equal(ipc_b64_decode(b64, &data, &len), 0);
		cz = cron_zone_parse(data, len, err, sizeof(err));
		if (cz == NULL) {
			fail_msg("built-in UTC: %s", err);
		}
		assert_int_equal(cron_zone_offset(cz, 0), 0);
		assert_int_equal(cron_zone_offset(cz, 1784116800), 0);
		cron_zone_free(cz);
		free(data);
	}
	assert_int_equal(zi_reads(z), 0);
	expect_status(z, "America/New_York", IPC_VS_NOT_FOUND, NULL);
	zi_free(z);
}

static void
test_tzdir(void **state)
{
	char *old = getenv("TZDIR") ? xstrdup(getenv("TZDIR")) : NULL;
	struct zi *z;

	(void)state;
	setenv("TZDIR", dir, 1);
	z = zi_new(NULL);
	expect_status(z, "Text", IPC_VS_ERROR, "not a TZif file");
	zi_free(z);
	setenv("TZDIR", "", 1);
	z = zi_new(NULL);
	expect_status(z, "Text", IPC_VS_NOT_FOUND, NULL); /* system dir */
	expect_status(z, "America/New_York", IPC_VS_OK, NULL);
	zi_free(z);
	if (old != NULL) {
		setenv("TZDIR", old, 1);
	} else {
		unsetenv("TZDIR");
	}
	free(old);
}

/* The table keeps ZI_CACHE_MAX zones, dropping the least recently used. */
static void
test_lru(void **state)
{
	struct zi *z = zi_new(NULL);
	const char *names[ZI_CACHE_MAX + 1];
	const char *pick[] = { "Europe/London", "Europe/Paris",
		"Europe/Berlin", "Europe/Rome", "Europe/Madrid",
		"Europe/Lisbon", "Europe/Dublin", "Europe/Oslo",
		"Europe/Vienna", "Europe/Zurich", "Europe/Prague",
		"Europe/Warsaw", "Europe/Athens", "Europe/Helsinki",
		"Europe/Kiev", "Europe/Moscow", "Asia/Tokyo", "Asia/Seoul",
		"Asia/Shanghai", "Asia/Kolkata", "Asia/Dubai",
		"Asia/Singapore", "Australia/Sydney", "Australia/Perth",
		"Pacific/Auckland", "Pacific/Honolulu", "America/Chicago",
		"America/Denver", "America/Los_Angeles", "America/Anchorage",
		"America/Sao_Paulo", "America/Toronto", "Africa/Cairo" };
	size_t reads;

	(void)state;
	assert_true(sizeof(pick) / sizeof(pick[0]) >= ZI_CACHE_MAX + 1);
	for (int i = 0; i <= ZI_CACHE_MAX; i++) {
		names[i] = pick[i];
	}
	for (int i = 0; i < ZI_CACHE_MAX; i++) {
		expect_status(z, names[i], IPC_VS_OK, NULL);
	}
	assert_int_equal(zi_cached(z), ZI_CACHE_MAX);
	/* touch the first: the second becomes the oldest */
	expect_status(z, names[0], IPC_VS_OK, NULL);
	reads = zi_reads(z);
	expect_status(z, names[ZI_CACHE_MAX], IPC_VS_OK, NULL);
	assert_int_equal(zi_cached(z), ZI_CACHE_MAX);
	assert_int_equal(zi_reads(z), reads + 1);
	expect_status(z, names[0], IPC_VS_OK, NULL); /* kept */
	assert_int_equal(zi_reads(z), reads + 1);
	expect_status(z, names[1], IPC_VS_OK, NULL); /* evicted: read */
	assert_int_equal(zi_reads(z), reads + 2);
	zi_free(z);
}

/* zi_reply()'s bodies pass the codec. */
static void
test_reply(void **state)
{
	struct zi *z = zi_new(dir);
	struct {
		const char *name;
		enum ipc_view_status st;
	} cases[] = { { "America/New_York", IPC_VS_OK },
		{ "Nowhere", IPC_VS_NOT_FOUND }, { "../x", IPC_VS_ERROR },
		{ "Big", IPC_VS_ERROR } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *body
		        = zi_reply(z, 40 + (int64_t)i, cases[i].name);
		struct buf b = BUF_INIT;
		struct ipc_msg m;
		struct ipc_view_reply r;
		char err[256];

		assert_int_equal(ipc_encode(IPC_VIEW_REPLY, 1, body, &b), 0);
		json_object_put(body);
		assert_int_equal(
		        ipc_decode(b.data, b.len, 0, &m, err, sizeof(err)), 0);
		assert_int_equal(ipc_view_reply_read(&m, &r), 0);
		assert_int_equal(r.id, 40 + (int64_t)i);
		assert_int_equal(r.status, cases[i].st);
		assert_true((r.data != NULL) == (cases[i].st == IPC_VS_OK));
		assert_true((r.message != NULL) == (cases[i].st != IPC_VS_OK));
		ipc_msg_fini(&m);
		buf_fini(&b);
	}
	zi_free(z);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_utc_local),
		cmocka_unit_test(test_tzdir),
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_reply),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
