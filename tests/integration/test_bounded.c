/*
 * test_bounded.c: bounded answers and objects too deep to decode (issue
 * 13 item 4), supervisor/informer.c over a tests/lib/testsrv server that
 * misbehaves as asked:
 *   - the first LIST is answered with an endless 200 body: the client
 *     stops at the LIST cap (1 MiB here) with an error naming the request
 *     and the cap, memory stays bounded, and the informer lists again
 *     after its backoff;
 *   - the next LIST carries an object nested deeper than the decoder's
 *     limit between two good ones: it is skipped with a warning naming
 *     it, the others are cached and the cache syncs;
 *   - the watch sends a too-deep MODIFIED event, then an ADDED one: the
 *     deep one is skipped with a warning, the watch goes on (no error, no
 *     relist) and the added object is cached.
 * The supervisor's log lines are captured (log_setfd) and checked.  Every
 * wait is bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/informer.h"
#include "tests/lib/testsrv.h"
#include "tests/lib/testutil.h"

#define WAIT_MS  15000
#define LIST_CAP ((size_t)1 << 20)
#define DEPTH    100

static const struct kapi_res R_CM = { "", "v1", "configmaps", true };

static atomic_int nlists;

static char *
cm(const char *name, const char *rv, bool deep)
{
	struct buf b = BUF_INIT;

	buf_printf(&b,
	        "{\"metadata\":{\"namespace\":\"d\",\"name\":\"%s\","
	        "\"resourceVersion\":\"%s\"},\"data\":",
	        name, rv);
	for (int i = 0; deep && i < DEPTH; i++) {
		buf_puts(&b, "{\"x\":");
	}
	buf_puts(&b, "{}");
	for (int i = 0; deep && i < DEPTH; i++) {
		buf_putc(&b, '}');
	}
	buf_putc(&b, '}');
	return (buf_detach(&b, NULL));
}

static void
set_chunks(struct testsrv_resp *resp, char *a, char *b)
{
	resp->chunks = xcalloc(2, sizeof(char *));
	resp->chunks[0] = a;
	resp->chunks[1] = b;
	resp->nchunks = 2;
}

/* LIST: endless the first time, then a page with a deep object; WATCH:
 * a deep event, an added object, then held open. */
static void
handler(void *arg, const struct testsrv_req *req, struct testsrv_resp *resp)
{
	char *g1, *dp, *g2;

	(void)arg;
	resp->code = 200;
	if (strstr(req->uri, "watch=true") != NULL) {
		dp = cm("deep2", "11", true);
		g1 = cm("good3", "12", false);
		set_chunks(resp,
		        xasprintf(
		                "{\"type\":\"MODIFIED\",\"object\":%s}\n", dp),
		        xasprintf("{\"type\":\"ADDED\",\"object\":%s}\n", g1));
		resp->hold = true;
		free(dp);
		free(g1);
	} else if (atomic_fetch_add(&nlists, 1) == 0) {
		set_chunks(resp,
		        xstrdup("{\"kind\":\"ConfigMapList\",\"apiVersion\":"
		                "\"v1\",\"metadata\":{\"resourceVersion\":"
		                "\"10\"},\"items\":["),
		        xstrdup("{\"metadata\":{\"name\":\"filler\"}},"));
		resp->repeat_last = true;
	} else {
		g1 = cm("good1", "8", false);
		dp = cm("deep", "9", true);
		g2 = cm("good2", "10", false);
		resp->body
		        = xasprintf("{\"kind\":\"ConfigMapList\",\"apiVersion"
		                    "\":\"v1\",\"metadata\":{"
		                    "\"resourceVersion\":\"10\"},"
		                    "\"items\":[%s,%s,%s]}",
		                g1, dp, g2);
		resp->body_len = strlen(resp->body);
		free(g1);
		free(dp);
		free(g2);
	}
}


static bool
has_good3(struct inf *in)
{
	return (cache_get(inf_cache(in, 0), "d", "good3") != NULL);
}

static void
test_endless_and_deep(void **state)
{
	struct testsrv *srv = testsrv_start(NULL);
	struct kapi_conf conf = { 0 };
	struct inf_kind k = { "configmaps", R_CM, NULL, "d" };
	struct inf_conf ic = { .seed = 7 };
	struct kapi_client *c;
	struct kapi_multi *m;
	struct inf *in;
	struct inf_stats st;
	char logpath[] = "/tmp/test-bounded-XXXXXX", *text;
	int logfd = mkstemp(logpath);
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	size_t rss0 = testutil_rss_bytes();

	(void)state;
	assert_non_null(srv);
	assert_true(logfd >= 0);
	testsrv_set_handler(srv, handler, NULL);
	conf.server = xstrdup(testsrv_url(srv));
	c = kapi_client_new(&conf, "test-bounded/0.1");
	kapi_client_set_max_body(c, LIST_CAP, 0);
	m = kapi_multi_new(c);
	in = inf_new(m, &k, 1, &ic);
	assert_non_null(in);
	log_setfd(logfd);
	while (!has_good3(in) && timefmt_now_ms_mono() < end) {
		kapi_multi_poll(m, NULL, 0, 50);
		kapi_multi_perform(m);
		inf_tick(in, timefmt_now_ms_mono());
	}
	log_setfd(-1);
	text = testutil_read_file(logpath, NULL);
	printf("%s", text);
	assert_true(has_good3(in));
	assert_non_null(cache_get(inf_cache(in, 0), "d", "good1"));
	assert_non_null(cache_get(inf_cache(in, 0), "d", "good2"));
	assert_null(cache_get(inf_cache(in, 0), "d", "deep"));
	assert_null(cache_get(inf_cache(in, 0), "d", "deep2"));
	assert_int_equal(cache_count(inf_cache(in, 0)), 3);
	assert_true(inf_synced(in, 0));
	inf_stats(in, 0, &st);
	assert_int_equal(st.list_requests, 2); /* the endless one, then one */
	assert_int_equal(st.watches, 1);       /* never broken */
	assert_int_equal(st.watch_errors, 0);
	assert_non_null(strstr(text, "GET /api/v1/namespaces/d/configmaps"));
	assert_non_null(strstr(text, "exceeds the cap of 1048576 bytes"));
	assert_non_null(strstr(text,
	        "listed object d/deep (item 1) nested "
	        "deeper than 64 levels: skipped"));
	assert_non_null(strstr(text, "watch: MODIFIED event of d/deep2"));
	/* the endless body cost at most a few caps */
	assert_true(rss0 == 0 || testutil_rss_bytes() < rss0 + 8 * LIST_CAP);
	free(text);
	inf_free(in);
	kapi_multi_free(m);
	kapi_client_free(c);
	free(conf.server);
	testsrv_stop(srv);
	close(logfd);
	unlink(logpath);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endless_and_deep),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
