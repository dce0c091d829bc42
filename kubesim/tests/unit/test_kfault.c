/*
 * test_kfault.c: kubesim's fault injection without HTTP: the --fault spec
 * parser, matching by verb and resource, rates, count retiring, the
 * Status and Retry-After of injected errors, delays, hangs, the admin
 * endpoint's JSON and the connection-refusal window.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "kubesim/kfault.h"
#include "tests/lib/testutil.h"

static int
setup(void **state)
{
	log_setverbose(-1); /* injected faults log at info */
	*state = kfault_new();
	return (0);
}

static int
teardown(void **state)
{
	kfault_free(*state);
	log_setverbose(0);
	return (0);
}

static void
add(struct kfault *f, const char *spec)
{
	char err[256];

	if (kfault_add_spec(f, spec, err, sizeof(err)) != 0) {
		fail_msg("spec \"%s\": %s", spec, err);
	}
}

/* Runs the filter; returns whether it answered (code in *code). */
static bool
filt(struct kfault *f, const char *verb, const char *plural, int *code)
{
	struct kreq rq = { .method = "GET", .path = "/api/v1/pods" };
	struct kresp rs;
	bool hit;

	kresp_init(&rs);
	hit = kfault_filter(f, &rq, verb, plural, &rs);
	if (code != NULL) {
		*code = hit ? rs.code : 0;
	}
	kresp_fini(&rs);
	return (hit);
}

/* Calls the admin endpoint; returns the code, body parsed in *out. */
static int
admin(struct kfault *f, const char *method, const char *sub, const char *body,
        json_object **out)
{
	struct kreq rq = { .method = method,
		.path = "/_kubesim/faults",
		.body = body != NULL ? body : "",
		.body_len = body != NULL ? strlen(body) : 0 };
	struct kresp rs;
	int code;

	kresp_init(&rs);
	kfault_admin(f, &rq, sub, &rs);
	code = rs.code;
	if (out != NULL) {
		*out = testutil_json(rs.body.data, 0);
	}
	kresp_fini(&rs);
	return (code);
}

static json_object *
rules(struct kfault *f)
{
	json_object *o;

	assert_int_equal(admin(f, "GET", "", NULL, &o), 200);
	return (o);
}

static int64_t
rule_int(struct kfault *f, size_t i, const char *key)
{
	json_object *o = rules(f);
	json_object *r = json_object_array_get_idx(jx_get(o, "rules"), i);
	int64_t v = -1;

	assert_non_null(r);
	jx_get_int(r, key, &v);
	json_object_put(o);
	return (v);
}

static void
test_spec_valid(void **state)
{
	struct kfault *f = *state;
	json_object *o, *r;

	add(f, "verb=create,resource=configmaps,code=503,rate=0.5");
	add(f, "verb=list|watch,code=429,retry-after=2");
	add(f, "delay=200ms");
	add(f, "hang,resource=leases,count=1");
	add(f, "hang=5s,verb=any");
	add(f, "delay=15,resource=*");
	add(f, "seed=42");
	o = rules(f);
	assert_int_equal(json_object_array_length(jx_get(o, "rules")), 6);
	r = json_object_array_get_idx(jx_get(o, "rules"), 0);
	assert_string_equal(jx_get_str(r, "resource"), "configmaps");
	assert_string_equal(jx_get_str(r, "verbs.0"), "create");
	assert_null(jx_get(r, "verbs.1"));
	assert_true(json_object_get_double(jx_get(r, "rate")) == 0.5);
	r = json_object_array_get_idx(jx_get(o, "rules"), 1);
	assert_string_equal(jx_get_str(r, "verbs.1"), "watch");
	assert_string_equal(jx_get_str(r, "resource"), "*");
	assert_int_equal(json_object_get_int(jx_get(r, "retryAfter")), 2);
	r = json_object_array_get_idx(jx_get(o, "rules"), 2);
	assert_int_equal(json_object_get_int(jx_get(r, "delayMs")), 200);
	assert_int_equal(json_object_array_length(jx_get(r, "verbs")), 8);
	r = json_object_array_get_idx(jx_get(o, "rules"), 3);
	assert_true(json_object_get_boolean(jx_get(r, "hang")));
	assert_int_equal(json_object_get_int(jx_get(r, "hangMs")), 60000);
	assert_int_equal(json_object_get_int(jx_get(r, "count")), 1);
	r = json_object_array_get_idx(jx_get(o, "rules"), 4);
	assert_int_equal(json_object_get_int(jx_get(r, "hangMs")), 5000);
	r = json_object_array_get_idx(jx_get(o, "rules"), 5);
	assert_int_equal(json_object_get_int(jx_get(r, "delayMs")), 15);
	assert_int_equal(json_object_get_int(jx_get(o, "seed")), 42);
	json_object_put(o);
}

static void
test_spec_invalid(void **state)
{
	static const struct {
		const char *spec, *want;
	} bad[] = {
		{ "", "empty" },
		{ "verb=create", "exactly one action" },
		{ "code=503,delay=1s", "exactly one action" },
		{ "code=404", "code 404" },
		{ "code=abc", "\"code\"" },
		{ "verb=frob,code=500", "\"verb\"" },
		{ "verb=get|,code=500", "\"verb\"" },
		{ "verb=,code=500", "\"verb\"" },
		{ "resource=Pods!,code=500", "\"resource\"" },
		{ "code=500,rate=1.5", "\"rate\"" },
		{ "code=500,rate=-0.1", "\"rate\"" },
		{ "code=500,rate=nan", "\"rate\"" },
		{ "code=500,count=-1", "\"count\"" },
		{ "code=500,retry-after=2", "retry-after needs code" },
		{ "delay=1s,retry-after=2", "needs an error code" },
		{ "code=429,retry-after=0", "\"retry-after\"" },
		{ "delay=forever", "\"delay\"" },
		{ "delay=-5ms", "\"delay\"" },
		{ "hang=x", "\"hang\"" },
		{ "color=red,code=500", "unknown key \"color\"" },
		{ "code", "want key=value" },
		{ "seed=x", "seed" },
	};
	struct kfault *f = *state;
	char err[256];
	json_object *o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (kfault_add_spec(f, bad[i].spec, err, sizeof(err)) != -1) {
			fail_msg("spec \"%s\" accepted", bad[i].spec);
		}
		if (strstr(err, bad[i].want) == NULL) {
			fail_msg("spec \"%s\": error \"%s\" lacks \"%s\"",
			        bad[i].spec, err, bad[i].want);
		}
	}
	assert_int_equal(kfault_add_spec(f, NULL, NULL, 0), -1);
	o = rules(f);
	assert_int_equal(json_object_array_length(jx_get(o, "rules")), 0);
	json_object_put(o);
}

static void
test_match(void **state)
{
	struct kfault *f = *state;
	int code;

	add(f, "verb=create|update,resource=configmaps,code=503");
	assert_true(filt(f, "create", "configmaps", &code));
	assert_int_equal(code, 503);
	assert_true(filt(f, "update", "configmaps", &code));
	assert_false(filt(f, "get", "configmaps", NULL));
	assert_false(filt(f, "create", "secrets", NULL));
	assert_false(filt(f, "discovery", "", NULL));
	add(f, "resource=pods,code=500");
	assert_true(filt(f, "deletecollection", "pods", &code));
	assert_int_equal(code, 500);
	assert_true(filt(f, "watch", "pods", &code));
	assert_false(filt(f, "watch", "podsx", NULL));
	/* the first injecting rule wins; counters count matches */
	add(f, "code=504");
	assert_true(filt(f, "create", "configmaps", &code));
	assert_int_equal(code, 503);
	assert_true(filt(f, "discovery", "", &code));
	assert_int_equal(code, 504);
	assert_int_equal(rule_int(f, 0, "matched"), 3);
	assert_int_equal(rule_int(f, 0, "injected"), 3);
	assert_int_equal(rule_int(f, 2, "matched"), 1);
}

static void
test_rate(void **state)
{
	struct kfault *f = *state, *g = kfault_new(), *h = kfault_new();
	int hits = 0, same = 0;

	add(f, "code=500,rate=0");
	for (int i = 0; i < 200; i++) {
		assert_false(filt(f, "get", "pods", NULL));
	}
	assert_int_equal(rule_int(f, 0, "matched"), 200);
	assert_int_equal(rule_int(f, 0, "injected"), 0);
	add(f, "code=503,rate=1");
	for (int i = 0; i < 200; i++) {
		assert_true(filt(f, "get", "pods", NULL));
	}
	/* a fractional rate is reproducible for a given seed */
	add(g, "seed=7");
	add(h, "seed=7");
	add(g, "code=500,rate=0.5");
	add(h, "code=500,rate=0.5");
	for (int i = 0; i < 400; i++) {
		bool a = filt(g, "get", "pods", NULL);

		hits += a;
		same += a == filt(h, "get", "pods", NULL);
	}
	assert_int_equal(same, 400);
	assert_in_range(hits, 120, 280);
	kfault_free(g);
	kfault_free(h);
}

static void
test_count(void **state)
{
	struct kfault *f = *state;
	json_object *o;

	add(f, "verb=get,code=500,count=2");
	assert_true(filt(f, "get", "pods", NULL));
	assert_true(filt(f, "get", "pods", NULL));
	assert_false(filt(f, "get", "pods", NULL));
	assert_false(filt(f, "get", "pods", NULL));
	o = rules(f);
	assert_true(json_object_get_boolean(jx_get(o, "rules.0.retired")));
	assert_int_equal(
	        json_object_get_int(jx_get(o, "rules.0.injected")), 2);
	json_object_put(o);
}

static void
test_retry_after(void **state)
{
	struct kfault *f = *state;
	struct kreq rq = { .method = "GET", .path = "/api/v1/pods" };
	struct kresp rs;
	json_object *st;

	add(f, "verb=list,code=429,retry-after=2");
	add(f, "verb=get,code=429");
	kresp_init(&rs);
	assert_true(kfault_filter(f, &rq, "list", "pods", &rs));
	assert_int_equal(rs.code, 429);
	assert_int_equal(rs.retry_after, 2);
	st = testutil_json(rs.body.data, 0);
	assert_string_equal(jx_get_str(st, "kind"), "Status");
	assert_string_equal(jx_get_str(st, "reason"), "TooManyRequests");
	assert_int_equal(
	        json_object_get_int(jx_get(st, "details.retryAfterSeconds")),
	        2);
	json_object_put(st);
	kresp_fini(&rs);
	kresp_init(&rs);
	assert_true(kfault_filter(f, &rq, "get", "pods", &rs));
	assert_int_equal(rs.retry_after, 1); /* 429 defaults to 1 s */
	kresp_fini(&rs);
}

static void
test_reasons(void **state)
{
	static const struct {
		const char *spec, *reason;
	} c[] = { { "code=500", "InternalError" },
		{ "code=503", "ServiceUnavailable" },
		{ "code=504", "Timeout" } };
	struct kfault *f = *state;
	struct kreq rq = { .method = "GET", .path = "/" };

	for (size_t i = 0; i < 3; i++) {
		struct kfault *g = kfault_new();
		struct kresp rs;
		json_object *st;

		add(g, c[i].spec);
		kresp_init(&rs);
		assert_true(kfault_filter(g, &rq, "get", "pods", &rs));
		st = testutil_json(rs.body.data, 0);
		assert_string_equal(jx_get_str(st, "reason"), c[i].reason);
		assert_int_equal(rs.retry_after, 0);
		json_object_put(st);
		kresp_fini(&rs);
		kfault_free(g);
	}
	(void)f;
}

static void
test_delay(void **state)
{
	struct kfault *f = *state;
	int64_t t0;

	add(f, "verb=get,delay=30ms");
	t0 = timefmt_now_ms_mono();
	assert_false(filt(f, "get", "pods", NULL)); /* served normally */
	assert_true(timefmt_now_ms_mono() - t0 >= 30);
	assert_int_equal(rule_int(f, 0, "injected"), 1);
}

static void
test_hang_bound(void **state)
{
	struct kfault *f = *state;
	int64_t t0;
	int code;

	add(f, "hang=40ms,resource=leases");
	t0 = timefmt_now_ms_mono();
	assert_true(filt(f, "update", "leases", &code));
	assert_int_equal(code, 504);
	assert_true(timefmt_now_ms_mono() - t0 >= 40);
}

static void *
hang_thread(void *arg)
{
	static int code;

	filt(arg, "get", "leases", &code);
	return (&code);
}

static void
test_hang_removed(void **state)
{
	struct kfault *f = *state;
	pthread_t t;
	void *res;
	int64_t t0 = timefmt_now_ms_mono();
	struct timespec ts = { 0, 10 * 1000000 };

	add(f, "hang,resource=leases,count=1");
	assert_int_equal(pthread_create(&t, NULL, hang_thread, f), 0);
	/* wait until the request is hanging, then remove the rule */
	while (rule_int(f, 0, "injected") == 0) {
		nanosleep(&ts, NULL);
	}
	assert_false(filt(f, "get", "leases", NULL)); /* retired */
	assert_int_equal(admin(f, "DELETE", "1", NULL, NULL), 200);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_int_equal(*(int *)res, 504);
	assert_true(timefmt_now_ms_mono() - t0 < 30000);
}

static void
test_admin(void **state)
{
	struct kfault *f = *state;
	json_object *o;
	int code;

	assert_int_equal(admin(f, "POST", "",
	                         "{\"verbs\":[\"create\"],\"resource\":"
	                         "\"configmaps\",\"code\":503,\"rate\":1,"
	                         "\"count\":3,\"retryAfter\":2,\"delayMs\":0,"
	                         "\"hang\":false}",
	                         &o),
	        201);
	assert_int_equal(json_object_get_int(jx_get(o, "id")), 1);
	assert_int_equal(json_object_get_int(jx_get(o, "count")), 3);
	json_object_put(o);
	assert_int_equal(admin(f, "POST", "", "{\"delayMs\":5}", &o), 201);
	assert_int_equal(json_object_get_int(jx_get(o, "id")), 2);
	json_object_put(o);
	assert_true(filt(f, "create", "configmaps", &code));
	assert_int_equal(code, 503);
	o = rules(f);
	assert_int_equal(json_object_array_length(jx_get(o, "rules")), 2);
	assert_int_equal(json_object_get_int(jx_get(o, "rules.0.matched")), 1);
	json_object_put(o);
	assert_int_equal(admin(f, "DELETE", "1", NULL, NULL), 200);
	assert_int_equal(admin(f, "DELETE", "1", NULL, NULL), 404);
	assert_int_equal(rule_int(f, 0, "id"), 2);
	assert_false(filt(f, "create", "configmaps", NULL));
	assert_int_equal(admin(f, "DELETE", "", NULL, NULL), 200);
	o = rules(f);
	assert_int_equal(json_object_array_length(jx_get(o, "rules")), 0);
	json_object_put(o);
}

static void
test_admin_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"nope",
		"[]",
		"{}",
		"{\"code\":418}",
		"{\"code\":\"503\"}",
		"{\"code\":503,\"verbs\":\"create\"}",
		"{\"code\":503,\"verbs\":[\"frob\"]}",
		"{\"code\":503,\"verbs\":[1]}",
		"{\"code\":503,\"rate\":2}",
		"{\"code\":503,\"count\":-1}",
		"{\"code\":503,\"resource\":7}",
		"{\"code\":503,\"hang\":true}",
		"{\"delayMs\":99999999}",
		"{\"hang\":1}",
		"{\"code\":503,\"colour\":1}",
	};
	struct kfault *f = *state;
	json_object *o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (admin(f, "POST", "", bad[i], &o) != 400) {
			fail_msg("body %s accepted", bad[i]);
		}
		assert_string_equal(jx_get_str(o, "reason"), "BadRequest");
		json_object_put(o);
	}
	assert_int_equal(admin(f, "DELETE", "x1", NULL, NULL), 400);
	assert_int_equal(admin(f, "PUT", "", NULL, NULL), 405);
	assert_int_equal(admin(f, "GET", "refuse", NULL, NULL), 405);
	assert_int_equal(admin(f, "GET", "nosuch", NULL, NULL), 404);
	o = rules(f);
	assert_int_equal(json_object_array_length(jx_get(o, "rules")), 0);
	json_object_put(o);
}

static void
test_refuse(void **state)
{
	struct kfault *f = *state;
	struct timespec ts = { 0, 5 * 1000000 };
	int64_t t0;

	assert_true(kfault_accept(f));
	assert_int_equal(
	        admin(f, "POST", "refuse", "{\"seconds\":60}", NULL), 200);
	assert_false(kfault_accept(f));
	assert_false(kfault_accept(f));
	/* seconds 0 ends the window */
	assert_int_equal(
	        admin(f, "POST", "refuse", "{\"seconds\":0}", NULL), 200);
	assert_true(kfault_accept(f));
	/* a short window ends by itself */
	t0 = timefmt_now_ms_mono();
	assert_int_equal(
	        admin(f, "POST", "refuse", "{\"seconds\":0.05}", NULL), 200);
	assert_false(kfault_accept(f));
	while (!kfault_accept(f)) {
		assert_true(timefmt_now_ms_mono() - t0 < 5000);
		nanosleep(&ts, NULL);
	}
	assert_true(timefmt_now_ms_mono() - t0 >= 50);
	assert_int_equal(
	        admin(f, "POST", "refuse", "{\"seconds\":-1}", NULL), 400);
	assert_int_equal(
	        admin(f, "POST", "refuse", "{\"secs\":1}", NULL), 400);
	assert_int_equal(admin(f, "POST", "refuse", "", NULL), 400);
	assert_true(kfault_accept(f));
}

static void
test_refuse_query(void **state)
{
	struct kfault *f = *state;
	struct kq q[] = { { "seconds", "60" } };
	struct kreq rq = { .method = "POST",
		.path = "/_kubesim/faults/refuse",
		.q = q,
		.nq = 1,
		.body = "",
		.body_len = 0 };
	struct kresp rs;

	kresp_init(&rs);
	kfault_admin(f, &rq, "refuse", &rs);
	assert_int_equal(rs.code, 200);
	kresp_fini(&rs);
	assert_false(kfault_accept(f));
	q[0].v = "soon";
	kresp_init(&rs);
	kfault_admin(f, &rq, "refuse", &rs);
	assert_int_equal(rs.code, 400);
	kresp_fini(&rs);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_spec_valid),
		T(test_spec_invalid),
		T(test_match),
		T(test_rate),
		T(test_count),
		T(test_retry_after),
		T(test_reasons),
		T(test_delay),
		T(test_hang_bound),
		T(test_hang_removed),
		T(test_admin),
		T(test_admin_bad),
		T(test_refuse),
		T(test_refuse_query),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
