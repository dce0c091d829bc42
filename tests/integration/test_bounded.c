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
 * And against bin/kubesim, which accepts an object exactly at the
 * decoder's depth limit: its watch event (one level deeper, inside the
 * event) is skipped with a warning, the watch goes on and the next object
 * is cached (before, the watch broke on it and resumed before it,
 * forever).
 * And bin/sympoziumd with --max-response-bytes 64Ki, whose one watched
 * ConfigMap is bigger than that: every LIST fails at the cap with the
 * error in the log, the supervisor retries with backoff and stays up
 * (SIGTERM: exit 0).
 * The informer's log lines are captured (log_setfd) and checked.  Every
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
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/informer.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testsrv.h"
#include "tests/lib/testutil.h"

#define WAIT_MS  15000
#define LIST_CAP ((size_t)1 << 20)
#define DEPTH    100

static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_CRD
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };
static const struct kapi_res R_BLOB = { "example.com", "v1", "blobs", true };

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

/* Runs the loop until ns/name is cached or WAIT_MS passed, the log in
 * logfd meanwhile. */
static bool
pump_until(struct kapi_multi *m, struct inf *in, const char *ns,
        const char *name, int logfd)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	bool got;

	log_setfd(logfd);
	while (!(got = cache_get(inf_cache(in, 0), ns, name) != NULL)
	        && timefmt_now_ms_mono() < end) {
		kapi_multi_poll(m, NULL, 0, 50);
		kapi_multi_perform(m);
		inf_tick(in, timefmt_now_ms_mono());
	}
	log_setfd(-1);
	return (got);
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
	assert_true(pump_until(m, in, "d", "good3", logfd));
	text = testutil_read_file(logpath, NULL);
	printf("%s", text);
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

/* A Blob (a CRD that keeps unknown fields) exactly JX_DEFAULT_DEPTH deep,
 * kubesim's limit too. */
static json_object *
deep_blob(const char *name)
{
	struct buf b = BUF_INIT;
	json_object *o;

	buf_printf(&b,
	        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Blob\","
	        "\"metadata\":{\"name\":\"%s\"},\"spec\":",
	        name);
	for (int i = 0; i < JX_DEFAULT_DEPTH - 2; i++) {
		buf_puts(&b, "{\"x\":");
	}
	buf_puts(&b, "{}");
	for (int i = 0; i < JX_DEFAULT_DEPTH - 2; i++) {
		buf_putc(&b, '}');
	}
	buf_putc(&b, '}');
	o = jx_parse(b.data, b.len, 0, NULL, 0);
	assert_non_null(o);
	buf_fini(&b);
	return (o);
}

/* Creates the Blob CRD, then a first Blob once it is served. */
static void
make_blobs(struct ksim_api *a)
{
	json_object *crd = testutil_json(
	        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
	        "\"CustomResourceDefinition\",\"metadata\":{\"name\":"
	        "\"blobs.example.com\"},\"spec\":{\"group\":\"example.com\","
	        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"blobs\","
	        "\"singular\":\"blob\",\"kind\":\"Blob\",\"listKind\":"
	        "\"BlobList\"},\"versions\":[{\"name\":\"v1\",\"served\":"
	        "true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{"
	        "\"type\":\"object\",\"x-kubernetes-preserve-unknown-"
	        "fields\":true}}}]}}",
	        0);
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;
	enum kapi_rc rc;

	assert_int_equal(
	        kapi_create(a->c, &R_CRD, NULL, crd, NULL, NULL), KAPI_OK);
	json_object_put(crd);
	while ((rc = ksim_api_create(a, &R_BLOB, "default", "before", NULL))
	                == KAPI_ENOTFOUND
	        && timefmt_now_ms_mono() < end) {
		ksim_sleep_ms(50);
	}
	assert_int_equal(rc, KAPI_OK);
}

static void
test_kubesim_deep_event(void **state)
{
	struct ksim_api a;
	struct inf_kind k = { "blobs", R_BLOB, NULL, "default" };
	struct inf_conf ic = { .seed = 7 };
	struct kapi_multi *m;
	struct inf *in;
	struct inf_stats st;
	json_object *o = deep_blob("d62");
	char logpath[] = "/tmp/test-bounded-XXXXXX", *text;
	int logfd = mkstemp(logpath);

	(void)state;
	assert_true(logfd >= 0);
	assert_int_equal(
	        ksim_api_start(&a, NULL, "test-bounded/0.1", WAIT_MS), 0);
	make_blobs(&a);
	m = kapi_multi_new(a.c);
	in = inf_new(m, &k, 1, &ic);
	assert_true(pump_until(m, in, "default", "before", logfd));
	assert_int_equal(
	        kapi_create(a.c, &R_BLOB, "default", o, NULL, NULL), KAPI_OK);
	assert_int_equal(
	        ksim_api_create(&a, &R_BLOB, "default", "after", NULL),
	        KAPI_OK);
	assert_true(pump_until(m, in, "default", "after", logfd));
	text = testutil_read_file(logpath, NULL);
	printf("%s", text);
	assert_null(cache_get(inf_cache(in, 0), "default", "d62"));
	assert_non_null(cache_get(inf_cache(in, 0), "default", "before"));
	inf_stats(in, 0, &st);
	assert_int_equal(st.watch_errors, 0);
	assert_int_equal(st.list_requests, 1);
	assert_non_null(strstr(text,
	        "watch: ADDED event of default/d62 at offset 0 nested deeper "
	        "than 64 levels: skipped"));
	free(text);
	json_object_put(o);
	inf_free(in);
	kapi_multi_free(m);
	assert_int_equal(ksim_api_stop(&a), 0);
	close(logfd);
	unlink(logpath);
}

static void
test_supervisor_carries_on(void **state)
{
	struct optest *o = optest_testctl_new("test-bounded", NULL, WAIT_MS);
	const char *args[] = { "--max-response-bytes", "64Ki", NULL };
	const char *needle = "exceeds the cap of 65536 bytes";
	struct buf b = BUF_INIT;
	json_object *cmo;

	(void)state;
	assert_non_null(o);
	buf_puts(&b,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"big\",\"labels\":{"
	        "\"testctl.sympozium.ai/enabled\":\"true\"}},"
	        "\"data\":{\"big\":\"");
	for (int i = 0; i < 100 * 1024; i++) {
		buf_putc(&b, 'a');
	}
	buf_puts(&b, "\"}}");
	cmo = jx_parse(b.data, b.len, 0, NULL, 0);
	assert_int_equal(
	        kapi_create(o->a.c, &R_CM, "default", cmo, NULL, NULL),
	        KAPI_OK);
	optest_sd_start(o, 0, OPTEST_SD_TESTCTL, args);
	/* the first list and at least one retry, each stopped at the cap */
	if (!sdproc_log_wait(&o->sd[0], needle, 2, WAIT_MS)) {
		sdproc_dump_log(o->sd[0].log);
		fail_msg("no two LISTs stopped at the cap");
	}
	assert_true(sdproc_alive(o->sd[0].pid));
	json_object_put(cmo);
	buf_fini(&b);
	assert_int_equal(optest_finish(o, OPTEST_TERM_EXIT0, false), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endless_and_deep),
		cmocka_unit_test(test_kubesim_deep_event),
		cmocka_unit_test(test_supervisor_carries_on),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
