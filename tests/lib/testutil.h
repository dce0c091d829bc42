/*
 * testutil.h: small helpers shared by the cmocka tests.  Each fails the
 * running test (cmocka fail_msg) instead of returning an error, except
 * testutil_rmtree() (a cleanup: best effort).
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>

#include <json-c/json.h>

/* Parses a NUL-terminated JSON literal (max_depth as jx_parse; 0 for the
 * default).  Caller frees with json_object_put(). */
json_object *testutil_json(const char *s, int max_depth);
/* testutil_json() of the text fmt formats (printf).  Caller frees with
 * json_object_put(). */
json_object *testutil_jsonf(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));
/* The whole file (caller frees with free()); *lenp gets its length. */
char *testutil_read_file(const char *path, size_t *lenp);
/* Every YAML document of the file at path, as a JSON array.  Caller puts
 * with json_object_put(). */
json_object *testutil_read_yaml(const char *path);
/* The upstream reference tree inside the shared one. */
#define TESTUTIL_UPSTREAM "upstream/sympozium-v1alpha1"
/* The upstream reference tree ($SHARED_DIR, else ../shared of the
 * repository, then TESTUTIL_UPSTREAM), or NULL when it is absent; caller
 * frees with free(). */
char *testutil_upstream_dir(void);
/* The path of rel inside the shared reference tree; caller frees with
 * free().  Where the upstream tree is absent the running test is skipped
 * (cmocka skip(), "[  SKIPPED ] name"): call it inside a test only, for a
 * test that compares with upstream. */
char *testutil_shared_path(const char *rel);
/* Removes dir and everything below it (best effort, links not followed),
 * unless $KEEP_TEST_DIR is set: then it says on stderr that dir is kept.
 * Returns 0, or -1 when something could not be removed. */
int testutil_rmtree(const char *dir);
/* This process's resident set size in bytes (/proc/self/statm), or 0
 * under AddressSanitizer or valgrind, whose allocators keep freed memory
 * (quarantine, free list): there a bound on it means nothing. */
size_t testutil_rss_bytes(void);

/* A TCP port of 127.0.0.1 free now, for a server a test starts and
 * must name beforehand: below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range), so no outgoing connection of the tests
 * running beside takes it before the server binds it; picked at random
 * and tried.  -1 when none is found. */
int testutil_free_port(void);

#endif
