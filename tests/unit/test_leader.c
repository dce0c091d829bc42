/* test_leader.c: the supervisor's leadership module (supervisor/leader.h)
 * over a real API connection to an in-test fake API server (testsrv.h)
 * holding one Lease: gained and lost reported once each, may_write false
 * from the renew deadline on, the release at shutdown, a standby that
 * does not lead, and leading alone without election. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/leader.h"
#include "tests/lib/testsrv.h"

#define LEASE_MS 1000
#define RENEW_MS 600
#define RETRY_MS 200
#define WAIT_MS  5000 /* generous bound for anything to happen */

/* ---- the fake API: one Lease, resourceVersions, 409 on a stale PUT ---- */

struct fake {
	pthread_mutex_t mu;
	json_object *obj; /* NULL: no Lease */
	int64_t rv;
	bool fail;          /* every request answers 500 */
	int64_t last_ok_ms; /* arrival of the last successful write */
	int writes, watches;
};

static void
status(struct testsrv_resp *r, int code, const char *reason)
{
	r->code = code;
	r->body = xasprintf("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
	                    "\"status\":\"Failure\",\"reason\":\"%s\","
	                    "\"code\":%d}",
	        reason, code);
	r->body_len = strlen(r->body);
}

static void
answer_obj(struct testsrv_resp *r, int code, json_object *o)
{
	r->code = code;
	r->body = jx_to_string(o);
	r->body_len = strlen(r->body);
}

/* Stores body as the Lease at the next resourceVersion. */
static void
store(struct fake *f, const struct testsrv_req *req, struct testsrv_resp *r,
        int code)
{
	json_object *o = jx_parse(req->body, req->body_len, 0, NULL, 0);
	char rv[32];

	json_object_put(f->obj);
	snprintf(rv, sizeof(rv), "%lld", (long long)++f->rv);
	jx_setv(o, json_object_new_string(rv), "metadata", "resourceVersion",
	        NULL);
	f->obj = o;
	f->writes++;
	f->last_ok_ms = req->t_ms;
	answer_obj(r, code, o);
}

static void
watch(struct fake *f, struct testsrv_resp *r)
{
	f->watches++;
	r->code = 200;
	r->nchunks = 1;
	r->chunks = xcalloc(1, sizeof(char *));
	if (f->obj != NULL) {
		char *o = jx_to_string(f->obj);
		r->chunks[0]
		        = xasprintf("{\"type\":\"ADDED\",\"object\":%s}\n", o);
		free(o);
	} else {
		r->chunks[0] = xstrdup("\n");
	}
	r->hold = true;
}

static void
handle(void *arg, const struct testsrv_req *req, struct testsrv_resp *r)
{
	struct fake *f = arg;
	char *w = testsrv_query(req, "watch");
	const char *rv;

	pthread_mutex_lock(&f->mu);
	if (f->fail) {
		status(r, 500, "InternalError");
	} else if (w != NULL) {
		watch(f, r);
	} else if (strcmp(req->method, "GET") == 0) {
		if (f->obj == NULL) {
			status(r, 404, "NotFound");
		} else {
			answer_obj(r, 200, f->obj);
		}
	} else if (strcmp(req->method, "POST") == 0) {
		if (f->obj != NULL) {
			status(r, 409, "AlreadyExists");
		} else {
			store(f, req, r, 201);
		}
	} else if (strcmp(req->method, "PUT") == 0) {
		json_object *o
		        = jx_parse(req->body, req->body_len, 0, NULL, 0);
		rv = jx_get_str(o, "metadata.resourceVersion");
		if (f->obj == NULL || rv == NULL
		        || strtoll(rv, NULL, 10) != f->rv) {
			status(r, 409, "Conflict");
		} else {
			store(f, req, r, 200);
		}
		json_object_put(o);
	}
	pthread_mutex_unlock(&f->mu);
	free(w);
}

static const char *
holder(struct fake *f, char *out, size_t len)
{
	pthread_mutex_lock(&f->mu);
	const char *h = jx_get_str(f->obj, "spec.holderIdentity");
	snprintf(out, len, "%s", h != NULL ? h : "");
	pthread_mutex_unlock(&f->mu);
	return (out);
}

static int64_t
last_ok(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	int64_t t = f->last_ok_ms;
	pthread_mutex_unlock(&f->mu);
	return (t);
}

static void
set_fail(struct fake *f, bool fail)
{
	pthread_mutex_lock(&f->mu);
	f->fail = fail;
	pthread_mutex_unlock(&f->mu);
}

/* ---- the fixture: the module over a kapi_multi to the fake ---- */

#define MAX_EVENTS 16

struct fx {
	struct fake fake;
	struct testsrv *srv;
	struct kapi_conf *conf;
	struct kapi_client *client;
	struct kapi_multi *m;
	struct stats *st;
	struct leader *l;
	enum leader_event ev[MAX_EVENTS];
	uint32_t ev_epoch[MAX_EVENTS];
	int nev;
};

static void
on_event(void *arg, enum leader_event ev, uint32_t epoch, int64_t now)
{
	struct fx *f = arg;

	(void)now;
	assert_true(f->nev < MAX_EVENTS);
	f->ev[f->nev] = ev;
	f->ev_epoch[f->nev++] = epoch;
}

static struct leader *
make(struct fx *f, bool elect, const char *identity)
{
	struct leader_conf c = { .elect = elect,
		.identity = identity,
		.ns = "default",
		.name = "sympozium-controller-leader",
		.lease_ms = LEASE_MS,
		.renew_ms = RENEW_MS,
		.retry_ms = RETRY_MS,
		.seed = 1,
		.on_event = on_event,
		.arg = f };
	char err[256];
	struct leader *l = leader_new(&c, err, sizeof(err));

	assert_non_null(l);
	leader_connect(l, f->m, f->st);
	return (l);
}

static int
setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	pthread_mutex_init(&f->fake.mu, NULL);
	f->srv = testsrv_start(NULL);
	assert_non_null(f->srv);
	testsrv_set_handler(f->srv, handle, &f->fake);
	f->conf = xcalloc(1, sizeof(*f->conf));
	f->conf->server = xstrdup(testsrv_url(f->srv));
	f->conf->namespace = xstrdup("default");
	f->client = kapi_client_new(f->conf, "test-leader/1");
	kapi_client_set_timeout(f->client, RENEW_MS);
	f->m = kapi_multi_new(f->client);
	f->st = stats_new(timefmt_now_ms_mono(), 0);
	f->l = make(f, true, "me");
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	leader_free(f->l);
	kapi_multi_free(f->m);
	kapi_client_free(f->client);
	kapi_conf_free(f->conf);
	testsrv_stop(f->srv);
	stats_free(f->st);
	json_object_put(f->fake.obj);
	pthread_mutex_destroy(&f->fake.mu);
	free(f);
	return (0);
}

/* One turn of the supervisor's loop, as sup.c runs it. */
static void
turn(struct fx *f)
{
	leader_tick(f->l, timefmt_now_ms_mono());
	kapi_multi_poll(f->m, NULL, 0, 10);
	leader_check(f->l, timefmt_now_ms_mono());
	kapi_multi_perform(f->m);
}

/* Turns until nev events were reported (true) or WAIT_MS passed. */
static bool
until_events(struct fx *f, int nev)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	while (f->nev < nev && timefmt_now_ms_mono() < end) {
		turn(f);
	}
	return (f->nev >= nev);
}

static void
run_for(struct fx *f, int ms)
{
	int64_t end = timefmt_now_ms_mono() + ms;

	while (timefmt_now_ms_mono() < end) {
		turn(f);
	}
}

static uint64_t
api_count(const struct stats *st, enum kapi_verb verb, long code)
{
	for (size_t i = 0; i < st->napi; i++) {
		if (st->api[i].verb == verb && st->api[i].code == code) {
			return (st->api[i].count);
		}
	}
	return (0);
}

/* ---- tests ---- */

/* No Lease yet: GET 404, POST, leading at epoch 1, reported once however
 * many renewals follow; the Lease requests counted in the stats. */
static void
test_gained_once(void **state)
{
	struct fx *f = *state;
	char h[64];

	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_int_equal(leader_epoch(f->l), 0);
	assert_true(until_events(f, 1));
	assert_int_equal(f->ev[0], LEADER_GAINED);
	assert_int_equal(f->ev_epoch[0], 1);
	assert_true(leader_leading(f->l));
	assert_true(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_int_equal(leader_epoch(f->l), 1);
	assert_string_equal(leader_holder(f->l), "me");
	assert_string_equal(holder(&f->fake, h, sizeof(h)), "me");
	run_for(f, 3 * RETRY_MS + 100);
	assert_int_equal(f->nev, 1);
	assert_true(f->fake.writes >= 3); /* POST and renewals */
	assert_true(f->st->leading);
	assert_int_equal(f->st->epoch, 1);
	assert_int_equal(api_count(f->st, KAPI_GET, 404), 1);
	assert_int_equal(api_count(f->st, KAPI_CREATE, 201), 1);
	assert_true(api_count(f->st, KAPI_UPDATE, 200) >= 2);
}

/* The API fails: may_write is false from the renew deadline of the last
 * successful write on (counted from its arrival, which is after it was
 * sent), LOST is reported once; the API back, a new leadership (epoch 2)
 * is GAINED. */
static void
test_lost_after_renew_deadline(void **state)
{
	struct fx *f = *state;
	int64_t end, now;

	assert_true(until_events(f, 1));
	set_fail(&f->fake, true);
	end = timefmt_now_ms_mono() + RENEW_MS + WAIT_MS;
	while (f->nev < 2 && (now = timefmt_now_ms_mono()) < end) {
		bool may = leader_may_write(f->l, now);
		if (now > last_ok(&f->fake) + RENEW_MS) {
			assert_false(may);
		}
		turn(f);
	}
	assert_int_equal(f->nev, 2);
	assert_int_equal(f->ev[1], LEADER_LOST);
	assert_int_equal(f->ev_epoch[1], 1);
	assert_false(leader_leading(f->l));
	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_false(f->st->leading);
	run_for(f, 3 * RETRY_MS);
	assert_int_equal(f->nev, 2); /* reported once */
	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_true(api_count(f->st, KAPI_UPDATE, 500) >= 1);

	set_fail(&f->fake, false);
	assert_true(until_events(f, 3));
	assert_int_equal(f->ev[2], LEADER_GAINED);
	assert_int_equal(f->ev_epoch[2], 2);
	assert_int_equal(leader_epoch(f->l), 2);
	assert_true(leader_may_write(f->l, timefmt_now_ms_mono()));
}

/* At shutdown: RELEASED once, no writes from that moment, the Lease
 * written with an empty holder, leader_released() once that is done. */
static void
test_release_at_shutdown(void **state)
{
	struct fx *f = *state;
	int64_t end;
	char h[64];

	assert_true(until_events(f, 1));
	leader_stopping(f->l);
	turn(f);
	assert_true(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_false(leader_released(f->l));
	leader_release(f->l, timefmt_now_ms_mono());
	assert_int_equal(f->nev, 2);
	assert_int_equal(f->ev[1], LEADER_RELEASED);
	assert_int_equal(f->ev_epoch[1], 1);
	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
	end = timefmt_now_ms_mono() + WAIT_MS;
	while (!leader_released(f->l) && timefmt_now_ms_mono() < end) {
		turn(f);
	}
	assert_true(leader_released(f->l));
	assert_string_equal(holder(&f->fake, h, sizeof(h)), "");
	run_for(f, 2 * RETRY_MS);
	assert_int_equal(f->nev, 2);
	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
}

/* A Lease held by another: standing by, watching the Lease, never
 * writing. */
static void
test_standby(void **state)
{
	struct fx *f = *state;

	/* another candidate takes the Lease first, then stops renewing
	 * (freed with no request in flight) */
	leader_free(f->l);
	f->l = make(f, true, "other");
	assert_true(until_events(f, 1));
	while (leader_next_deadline(f->l) < 0) {
		kapi_multi_poll(f->m, NULL, 0, 10);
		kapi_multi_perform(f->m);
	}
	leader_free(f->l);
	f->nev = 0;
	f->l = make(f, true, "me");
	run_for(f, LEASE_MS / 2);
	assert_int_equal(f->nev, 0);
	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_string_equal(leader_holder(f->l), "other");
	assert_true(f->fake.watches >= 1);
	/* its record expires: this one takes over, epoch 1 of its own */
	assert_true(until_events(f, 1));
	assert_int_equal(f->ev[0], LEADER_GAINED);
	assert_string_equal(leader_holder(f->l), "me");
}

/* Without election: leading from the first tick at epoch 1, no request;
 * released at once at shutdown. */
static void
test_no_election(void **state)
{
	struct fx *f = *state;

	leader_free(f->l);
	f->l = make(f, false, "solo");
	assert_false(leader_elects(f->l));
	assert_int_equal(leader_next_deadline(f->l), -1);
	assert_true(leader_released(f->l)); /* none needed */
	leader_tick(f->l, timefmt_now_ms_mono());
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0], LEADER_GAINED);
	assert_int_equal(f->ev_epoch[0], 1);
	assert_true(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_string_equal(leader_holder(f->l), "solo");
	leader_tick(f->l, timefmt_now_ms_mono());
	assert_int_equal(f->nev, 1);
	leader_release(f->l, timefmt_now_ms_mono());
	assert_int_equal(f->nev, 2);
	assert_int_equal(f->ev[1], LEADER_RELEASED);
	assert_false(leader_may_write(f->l, timefmt_now_ms_mono()));
	assert_true(leader_released(f->l));
	assert_string_equal(leader_holder(f->l), "");
	assert_int_equal(testsrv_nreqs(f->srv), 0);
}

/* A bad Lease configuration is refused with its reason. */
static void
test_bad_config(void **state)
{
	struct leader_conf c = { .elect = true,
		.identity = "me",
		.ns = "default",
		.name = "x",
		.lease_ms = 500,
		.renew_ms = 400,
		.retry_ms = 100 };
	char err[256] = "";

	(void)state;
	assert_null(leader_new(&c, err, sizeof(err)));
	assert_true(strlen(err) > 0);
	c.elect = false; /* not checked without election */
	struct leader *l = leader_new(&c, err, sizeof(err));
	assert_non_null(l);
	assert_true(strlen(leader_identity(l)) > 0);
	leader_free(l);
	c.identity = NULL; /* "<hostname>_<uuid>" */
	l = leader_new(&c, err, sizeof(err));
	assert_non_null(strchr(leader_identity(l), '_'));
	leader_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_gained_once, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_lost_after_renew_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_release_at_shutdown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_standby, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_no_election, setup, teardown),
		cmocka_unit_test(test_bad_config),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
