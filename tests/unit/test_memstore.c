/*
 * test_memstore.c: upstream's persistFailureMemory, the supervisor's half:
 * the check of an agentrun worker's ask (supervisor/memstore.c), the
 * address and body built from the cached run (never the worker's), and
 * the POST by the egress thread (supervisor/egress.c) to a local server:
 * JSON, no credentials, counted; a refused one counted as failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/xmalloc.h"
#include "supervisor/egress.h"
#include "supervisor/memstore.h"
#include "tests/lib/testsrv.h"

static json_object *
J(const char *s)
{
	json_object *o = json_tokener_parse(s);

	assert_non_null(o);
	return (o);
}

static void
test_check(void **state)
{
	json_object *ok = J("{\"content\":\"## Failed\"}");
	json_object *big = json_object_new_object();
	char err[256], *text = xmalloc(MEMSTORE_CONTENT_MAX + 2);
	static const char *const bad[]
	        = { "{}", "{\"content\":\"\"}", "{\"content\":5}",
		          "{\"content\":\"x\",\"url\":\"http://evil\"}" };

	(void)state;
	assert_int_equal(memstore_check("agentrun", ok, err, sizeof(err)), 0);
	assert_int_equal(
	        memstore_check("skillpack", ok, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "only agentrun"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *b = J(bad[i]);

		assert_int_equal(
		        memstore_check("agentrun", b, err, sizeof(err)), -1);
		json_object_put(b);
	}
	memset(text, 'x', MEMSTORE_CONTENT_MAX + 1);
	text[MEMSTORE_CONTENT_MAX + 1] = '\0';
	json_object_object_add(big, "content", json_object_new_string(text));
	assert_int_equal(
	        memstore_check("agentrun", big, err, sizeof(err)), -1);
	json_object_put(big);
	json_object_put(ok);
	free(text);
}

static void
test_request(void **state)
{
	json_object *run
	        = J("{\"metadata\":{\"name\":\"r\",\"namespace\":"
	            "\"team-a\"},\"spec\":{\"instanceRef\":\"alice\"}}");
	json_object *bad = J("{\"metadata\":{\"name\":\"r\",\"namespace\":"
	                     "\"team-a\"},\"spec\":{\"instanceRef\":"
	                     "\"evil.example.com/x\"}}");
	json_object *ms = J("{\"content\":\"## Failed AgentRun: r\"}");
	char err[256], *url, *body;

	(void)state;
	assert_int_equal(
	        memstore_request(run, ms, &url, &body, err, sizeof(err)), 0);
	assert_string_equal(url, "http://alice-memory.team-a.svc:8080/store");
	assert_string_equal(body,
	        "{\"content\":\"## Failed AgentRun: r\",\"tags\":[\"failure\","
	        "\"agent-run\",\"alice\"]}");
	free(url);
	free(body);
	/* the address comes from the run's name fields, which must be
	 * labels: no other host can be reached */
	assert_int_equal(
	        memstore_request(bad, ms, &url, &body, err, sizeof(err)), -1);
	json_object_put(run);
	json_object_put(bad);
	json_object_put(ms);
}

static void
wait_posts(struct egress *x, uint64_t n)
{
	struct egress_stats st;

	for (int i = 0; i < 500; i++) {
		egress_stats(x, &st);
		if (st.posts_ok + st.posts_failed >= n) {
			return;
		}
		usleep(10000);
	}
	fail_msg("the POSTs did not finish");
}

static void
test_post(void **state)
{
	struct testsrv *srv = testsrv_start(NULL);
	struct egress *x = egress_new(NULL, NULL);
	const struct testsrv_req *rq;
	struct egress_stats st;
	char *url;

	(void)state;
	assert_non_null(srv);
	assert_non_null(x);
	url = xasprintf("%s/store", testsrv_url(srv));
	testsrv_push(srv, 200, NULL, "{}");
	testsrv_push(srv, 500, NULL, "{}");
	egress_post(x, url, "{\"content\":\"a\"}", "agentrun ns/r");
	wait_posts(x, 1);
	egress_post(x, url, "{\"content\":\"b\"}", "agentrun ns/r");
	wait_posts(x, 2);
	egress_stats(x, &st);
	assert_int_equal(st.posts_ok, 1);
	assert_int_equal(st.posts_failed, 1);
	assert_int_equal(testsrv_nreqs(srv), 2);
	rq = testsrv_req(srv, 0);
	assert_string_equal(rq->method, "POST");
	assert_string_equal(rq->path, "/store");
	assert_string_equal(rq->content_type, "application/json");
	assert_string_equal(rq->authorization, "");
	assert_string_equal(rq->body, "{\"content\":\"a\"}");
	egress_free(x, 1000);
	testsrv_stop(srv);
	free(url);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_post),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
