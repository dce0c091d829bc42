/*
 * test_kubesim_faults.c: black-box tests of kubesim's fault injection.
 * Each test starts $KUBESIM (default bin/kubesim) with --fault flags
 * through tests/lib/ksim and talks HTTP to it: injected 503 and 429
 * answers, added latency, a hung request released by removing its rule or
 * by stopping the server, and refused connections.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

#define REQ_MS 30000

/* Starts kubesim --controllers none, with one --fault spec unless fault is
 * NULL. */
static struct ksim *
start(const char *fault)
{
	const char *args[] = { "--controllers", "none",
		fault != NULL ? "--fault" : NULL, fault, NULL };
	struct ksim *k = ksim_start(args);

	if (k == NULL) {
		fail_msg("%s did not start", ksim_binary());
	}
	return (k);
}

/* Stops kubesim; asserts a clean exit (no leaks under ASan). */
static void
stop(struct ksim *k)
{
	assert_int_equal(ksim_stop(k), 0);
}

/* One request with a JSON Content-Type, on a connection of its own. */
static struct ksim_resp *
ask(const struct ksim *k, const char *method, const char *path,
        const char *body)
{
	return (ksim_request(ksim_url(k), method, path, "application/json",
	        body, NULL, REQ_MS));
}

/* The body of r parsed as JSON (caller frees); fails the test otherwise. */
static json_object *
take_json(struct ksim_resp *r)
{
	json_object *o = r->json;

	if (o == NULL) {
		fail_msg("not JSON: %s", r->body);
	}
	r->json = NULL;
	return (o);
}

/* A request that must get an answer; returns its code. */
static long
call(const struct ksim *k, const char *method, const char *path,
        const char *body, json_object **out)
{
	struct ksim_resp *r = ask(k, method, path, body);
	long code = r->code;

	if (code == 0) {
		fail_msg("%s %s: %s", method, path, r->error);
	}
	if (out != NULL) {
		*out = take_json(r);
	}
	ksim_resp_free(r);
	return (code);
}

static const char CM[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                         "\"metadata\":{\"name\":\"%s\"}}";
#define CM_PATH "/api/v1/namespaces/default/configmaps"

static char *
cm(const char *name)
{
	char *s = NULL;

	assert_true(asprintf(&s, CM, name) > 0);
	return (s);
}

static void
test_create_503(void **state)
{
	struct ksim *k;
	json_object *o;
	char *a = cm("a");

	(void)state;
	k = start("verb=create,resource=configmaps,code=503,rate=1");
	assert_int_equal(call(k, "POST", CM_PATH, a, &o), 503);
	assert_string_equal(jx_get_str(o, "kind"), "Status");
	assert_string_equal(jx_get_str(o, "reason"), "ServiceUnavailable");
	json_object_put(o);
	assert_int_equal(call(k, "POST", CM_PATH, a, NULL), 503);
	/* other verbs and resources are served */
	assert_int_equal(call(k, "GET", CM_PATH, NULL, NULL), 200);
	assert_int_equal(call(k, "POST", "/api/v1/namespaces/default/secrets",
	                         "{\"metadata\":{\"name\":\"s\"}}", NULL),
	        201);
	assert_int_equal(call(k, "GET", "/_kubesim/faults", NULL, &o), 200);
	assert_int_equal(
	        json_object_get_int(jx_get(o, "rules.0.injected")), 2);
	json_object_put(o);
	assert_int_equal(
	        call(k, "DELETE", "/_kubesim/faults", NULL, NULL), 200);
	assert_int_equal(call(k, "POST", CM_PATH, a, NULL), 201);
	free(a);
	stop(k);
}

static void
test_429(void **state)
{
	struct ksim *k;
	struct ksim_resp *r;
	json_object *o;
	char *ra;

	(void)state;
	k = start("verb=list|watch,code=429,retry-after=2");
	r = ask(k, "GET", CM_PATH, NULL);
	assert_int_equal(r->code, 429);
	ra = ksim_resp_header(r, "Retry-After");
	assert_non_null(ra);
	assert_int_equal(atoi(ra), 2);
	free(ra);
	o = take_json(r);
	assert_string_equal(jx_get_str(o, "reason"), "TooManyRequests");
	assert_int_equal(json_object_get_int(jx_get(o, "code")), 429);
	assert_int_equal(
	        json_object_get_int(jx_get(o, "details.retryAfterSeconds")),
	        2);
	json_object_put(o);
	ksim_resp_free(r);
	/* a get is not a list */
	assert_int_equal(call(k, "GET", CM_PATH "/x", NULL, NULL), 404);
	stop(k);
}

static void
test_delay(void **state)
{
	struct ksim *k;
	json_object *o;
	int64_t t0;

	(void)state;
	k = start(NULL);
	assert_int_equal(call(k, "POST", "/_kubesim/faults",
	                         "{\"verbs\":[\"list\"],\"resource\":"
	                         "\"configmaps\",\"delayMs\":300}",
	                         &o),
	        201);
	assert_int_equal(json_object_get_int(jx_get(o, "delayMs")), 300);
	json_object_put(o);
	t0 = ksim_now_ms();
	assert_int_equal(call(k, "GET", CM_PATH, NULL, &o), 200);
	assert_true(ksim_now_ms() - t0 >= 300);
	assert_string_equal(jx_get_str(o, "kind"), "ConfigMapList");
	json_object_put(o);
	stop(k);
}

/* A GET sent from a thread into a hang rule. */
struct hung {
	struct ksim *k;
	const char *path;
	pthread_t thread;
	int64_t t0;        /* monotonic ms when it was sent */
	_Atomic long code; /* 0 while hanging, -1 when the transfer failed */
};

static void *
hung_main(void *arg)
{
	struct hung *h = arg;
	struct ksim_resp *r = ask(h->k, "GET", h->path, NULL);

	h->code = r->code != 0 ? r->code : -1;
	ksim_resp_free(r);
	return (NULL);
}

static int64_t
injected(const struct ksim *k)
{
	json_object *o;
	int64_t n = -1;

	assert_int_equal(call(k, "GET", "/_kubesim/faults", NULL, &o), 200);
	jx_get_int(o, "rules.0.injected", &n);
	json_object_put(o);
	return (n);
}

/* Starts kubesim with the hang rule fault, sends GET path from a thread
 * and waits (10 s at most) until the rule has caught it. */
static void
hang_start(struct hung *h, const char *fault, const char *path)
{
	h->k = start(fault);
	h->path = path;
	h->code = 0;
	h->t0 = ksim_now_ms();
	assert_int_equal(pthread_create(&h->thread, NULL, hung_main, h), 0);
	while (injected(h->k) == 0) {
		assert_true(ksim_now_ms() - h->t0 < 10000);
		ksim_sleep_ms(20);
	}
}

/* Joins the request's thread: it must have ended within 20 s of being
 * sent.  Returns its code. */
static long
hang_join(struct hung *h)
{
	assert_int_equal(pthread_join(h->thread, NULL), 0);
	assert_true(ksim_now_ms() - h->t0 < 20000);
	return (h->code);
}

static void
test_hang(void **state)
{
	struct hung h;

	(void)state;
	hang_start(&h, "hang,resource=leases,count=1",
	        "/apis/coordination.k8s.io/v1/namespaces/default/leases/x");
	ksim_sleep_ms(20);
	assert_int_equal(h.code, 0); /* still hanging */
	assert_int_equal(
	        call(h.k, "DELETE", "/_kubesim/faults/1", NULL, NULL), 200);
	assert_int_equal(hang_join(&h), 504);
	stop(h.k);
}

/* SIGTERM releases hung requests: the server stops promptly. */
static void
test_hang_shutdown(void **state)
{
	struct hung h;
	long code;

	(void)state;
	hang_start(&h, "hang,verb=get", CM_PATH "/x");
	stop(h.k);
	code = hang_join(&h);
	assert_true(code == 504 || code == -1);
}

/* The code of GET CM_PATH, 0 when the connection failed. */
static long
get_code(const struct ksim *k)
{
	struct ksim_resp *r = ask(k, "GET", CM_PATH, NULL);
	long code = r->code;

	ksim_resp_free(r);
	return (code);
}

static void
test_refuse(void **state)
{
	struct ksim *k;
	int64_t t0;
	long code;

	(void)state;
	k = start(NULL);
	assert_int_equal(call(k, "POST", "/_kubesim/faults/refuse",
	                         "{\"seconds\":1}", NULL),
	        200);
	t0 = ksim_now_ms();
	assert_int_equal(get_code(k), 0);
	/* accepted again once the window ends */
	while ((code = get_code(k)) == 0) {
		assert_true(ksim_now_ms() - t0 < 10000);
		ksim_sleep_ms(50);
	}
	assert_int_equal(code, 200);
	assert_true(ksim_now_ms() - t0 >= 900);
	assert_int_equal(call(k, "POST", "/_kubesim/faults/refuse?seconds=x",
	                         NULL, NULL),
	        400);
	stop(k);
}

static void
test_bad_flag(void **state)
{
	char *cmd = NULL;
	int st;

	(void)state;
	assert_true(asprintf(&cmd, "%s --fault code=404 2>/dev/null",
	                    ksim_binary())
	        > 0);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	free(cmd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_503),
		cmocka_unit_test(test_429),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_hang_shutdown),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_bad_flag),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
