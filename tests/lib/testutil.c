/*
 * testutil.c: the test helpers of testutil.h.  The shared reference tree
 * (upstream CRDs and samples) is found through $SHARED_DIR, which
 * tests/run-tests.sh sets, else ../shared relative to the repository root
 * the tests run in; a test that needs it is skipped where it is absent.
 */
#include "tests/lib/testutil.h"

#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"

json_object *
testutil_json(const char *s, int max_depth)
{
	char err[128];
	json_object *o = jx_parse(s, strlen(s), max_depth, err, sizeof(err));

	if (o == NULL) {
		fail_msg("parse %s: %s", s, err);
	}
	return (o);
}

json_object *
testutil_jsonf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	json_object *o;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		fail_msg("vasprintf %s", fmt);
	}
	va_end(ap);
	o = testutil_json(s, 0);
	free(s);
	return (o);
}

char *
testutil_read_file(const char *path, size_t *lenp)
{
	struct buf b = BUF_INIT;

	if (buf_read_file(&b, path, (size_t)64 << 20) != 0) {
		fail_msg("cannot read %s", path);
	}
	return (buf_detach(&b, lenp));
}

json_object *
testutil_read_yaml(const char *path)
{
	size_t len = 0;
	char *text = testutil_read_file(path, &len);
	char err[256] = "";
	json_object *docs = yamlj_parse_all(text, len, err, sizeof(err));

	free(text);
	if (docs == NULL) {
		fail_msg("%s: %s", path, err);
	}
	return (docs);
}

/* $SHARED_DIR, else ../shared (borrowed). */
static const char *
shared_root(void)
{
	const char *dir = getenv("SHARED_DIR");

	return (dir != NULL && *dir != '\0' ? dir : "../shared");
}

char *
testutil_upstream_dir(void)
{
	char *up = xasprintf("%s/" TESTUTIL_UPSTREAM, shared_root());
	struct stat st;

	if (stat(up, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(up);
		return (NULL);
	}
	return (up);
}

char *
testutil_shared_path(const char *rel)
{
	char *up = testutil_upstream_dir();

	if (up == NULL) {
		print_message("no upstream reference tree in %s (set "
		              "SHARED_DIR): skipped\n",
		        shared_root());
		skip();
	}
	free(up);
	return (xasprintf("%s/%s", shared_root(), rel));
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

int
testutil_rmtree(const char *dir)
{
	if (getenv("KEEP_TEST_DIR") != NULL) {
		fprintf(stderr, "KEEP_TEST_DIR: %s kept\n", dir);
		return (0);
	}
	return (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1);
}

size_t
testutil_rss_bytes(void)
{
	const char *pre = getenv("LD_PRELOAD");
	unsigned long size = 0, res = 0;
	FILE *fp;

#ifdef __SANITIZE_ADDRESS__
	return (0);
#endif
	if (pre != NULL && strstr(pre, "vgpreload") != NULL) {
		return (0);
	}
	fp = fopen("/proc/self/statm", "r");
	if (fp == NULL || fscanf(fp, "%lu %lu", &size, &res) != 2) {
		fail_msg("/proc/self/statm: cannot read it");
	}
	fclose(fp);
	return ((size_t)res * (size_t)sysconf(_SC_PAGESIZE));
}

/* Whether 127.0.0.1:port can be bound now (0: the kernel picks); the
 * port bound, or -1. */
static int
try_port(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), got = -1;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0
	        && getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
		got = ntohs(sa.sin_port);
	}
	if (fd >= 0) {
		close(fd);
	}
	return (got);
}

/* The low end of the ephemeral range (32768 when unreadable). */
static int
ephemeral_low(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	int lo = 32768, hi = 0;

	if (f != NULL) {
		if (fscanf(f, "%d %d", &lo, &hi) != 2 || lo < 2048) {
			lo = 32768;
		}
		fclose(f);
	}
	return (lo);
}

int
testutil_free_port(void)
{
	static unsigned seed;
	int lo = 10000, hi = ephemeral_low();

	if (seed == 0) {
		seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	}
	for (int i = 0; hi > lo && i < 64; i++) {
		int port = lo + (int)(rand_r(&seed) % (unsigned)(hi - lo));
		if (try_port(port) == port) {
			return (port);
		}
	}
	return (try_port(0));
}
