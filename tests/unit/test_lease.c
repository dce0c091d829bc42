/* test_lease.c: Lease leader election (kube-api.md E.6, checklist 65, 66)
 * with injected clocks against an in-test fake API server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/jsonx.h"
#include "common/timefmt.h"
#include "supervisor/lease.h"

#define BASE_US 1700000000000000LL /* wall clock at now_ms == 0 */

/* ------------------------------------------------------------------ */
/* The fake server: one Lease, resourceVersions, 409 on a stale PUT. */

enum fail_mode {
	FAIL_NONE,
	FAIL_ERROR,    /* every request errors */
	FAIL_CONFLICT, /* every write conflicts; GETs work */
};

struct fake {
	json_object *obj; /* NULL: no Lease */
	int64_t rv;
	enum fail_mode fail;
	int gets, creates, updates;
};

static json_object *
parse(const char *s)
{
	json_object *o;
	char err[128];

	o = jx_parse(s, strlen(s), 0, err, sizeof(err));
	assert_non_null(o);
	return (o);
}

static void
fake_store(struct fake *f, json_object *o)
{
	char rv[32];

	snprintf(rv, sizeof(rv), "%lld", (long long)++f->rv);
	assert_int_equal(jx_set_path(o, "metadata.resourceVersion",
	                         json_object_new_string(rv)),
	        0);
	json_object_put(f->obj);
	f->obj = o;
}

static void
fake_free(struct fake *f)
{
	json_object_put(f->obj);
	memset(f, 0, sizeof(*f));
}

/* Answers one request; *out receives an owned copy of the object. */
static enum lease_result
fake_do(struct fake *f, const struct lease_action *a, json_object **out)
{
	json_object *o;
	const char *rv;

	*out = NULL;
	if (f->fail == FAIL_ERROR) {
		return (LEASE_RES_ERROR);
	}
	if (a->act == LEASE_ACT_GET) {
		f->gets++;
		if (f->obj == NULL) {
			return (LEASE_RES_NOTFOUND);
		}
		*out = jx_copy_stripa(f->obj, NULL);
		return (LEASE_RES_OK);
	}
	if (f->fail == FAIL_CONFLICT) {
		return (LEASE_RES_CONFLICT);
	}
	o = parse(a->body);
	if (a->act == LEASE_ACT_CREATE) {
		f->creates++;
		if (f->obj != NULL) {
			json_object_put(o);
			return (LEASE_RES_CONFLICT);
		}
	} else {
		f->updates++;
		rv = jx_get_str(o, "metadata.resourceVersion");
		assert_non_null(rv); /* Lease refuses unconditional update */
		if (f->obj == NULL
		        || strcmp(rv,
		                   jx_get_str(
		                           f->obj, "metadata.resourceVersion"))
		                != 0) {
			json_object_put(o);
			return (LEASE_RES_CONFLICT);
		}
	}
	fake_store(f, o);
	*out = jx_copy_stripa(f->obj, NULL);
	return (LEASE_RES_OK);
}

/* Runs l against f at now until it has nothing to send; returns at_ms of
 * the final NONE (or -1 for DONE). */
static int64_t
drive(struct lease *l, struct fake *f, int64_t now)
{
	struct lease_action a;
	json_object *o;
	enum lease_result r;
	int n;

	for (n = 0;; n++) {
		assert_true(n < 10); /* an attempt is a few requests at most */
		lease_next(l, now, BASE_US + now * 1000, &a);
		if (a.act == LEASE_ACT_NONE) {
			return (a.at_ms);
		}
		if (a.act == LEASE_ACT_DONE) {
			return (-1);
		}
		r = fake_do(f, &a, &o);
		if (a.act == LEASE_ACT_GET) {
			assert_int_equal(lease_on_get(l, r, o, now), 0);
		} else {
			assert_int_equal(lease_on_write(l, r, o, now), 0);
		}
		json_object_put(o);
		lease_action_fini(&a);
	}
}

static double
rand_zero(void *arg)
{
	(void)arg;
	return (0.0);
}

static double
rand_high(void *arg)
{
	(void)arg;
	return (0.9999999);
}

static double
rand_fixed(void *arg)
{
	return (*(double *)arg);
}

static struct lease_config
config(const char *id)
{
	struct lease_config c = {
		.identity = id,
		.ns = "sympozium-system",
		.name = LEASE_DEFAULT_NAME,
		.lease_duration_ms = LEASE_DEFAULT_DURATION_MS,
		.renew_deadline_ms = LEASE_DEFAULT_RENEW_MS,
		.retry_period_ms = LEASE_DEFAULT_RETRY_MS,
		.release_on_cancel = true,
		.seed = 42,
	};

	return (c);
}

static struct lease *
mk(const char *id)
{
	struct lease_config c = config(id);
	struct lease *l;

	l = lease_new(&c, NULL, 0);
	assert_non_null(l);
	return (l);
}

static void
micro(int64_t now_ms, char out[TIMEFMT_RFC3339_MICRO_LEN])
{
	assert_int_equal(
	        timefmt_rfc3339_micro(BASE_US + now_ms * 1000, out), 0);
}

static const char *
fspec(struct fake *f, const char *field)
{
	return (jx_get_str(jx_get(f->obj, "spec"), field));
}

static int64_t
fspec_int(struct fake *f, const char *field)
{
	int64_t v = -1;

	assert_int_equal(jx_get_int(jx_get(f->obj, "spec"), field, &v), 0);
	return (v);
}

/* Puts a Lease held by `holder` on the fake, renewed at renew_us. */
static void
fake_put_other(
        struct fake *f, const char *holder, int64_t renew_us, int transitions)
{
	char ts[TIMEFMT_RFC3339_MICRO_LEN], *s;

	assert_int_equal(timefmt_rfc3339_micro(renew_us, ts), 0);
	s = NULL;
	assert_true(asprintf(&s,
	                    "{\"apiVersion\":\"coordination.k8s.io/v1\","
	                    "\"kind\":\"Lease\",\"metadata\":{\"name\":"
	                    "\"sympozium-controller-leader\",\"namespace\":"
	                    "\"sympozium-system\"},\"spec\":{"
	                    "\"holderIdentity\":\"%s\","
	                    "\"leaseDurationSeconds\":15,"
	                    "\"acquireTime\":\"%s\",\"renewTime\":\"%s\","
	                    "\"leaseTransitions\":%d}}",
	                    holder, ts, ts, transitions)
	        > 0);
	fake_store(f, parse(s));
	free(s);
}

/* ------------------------------------------------------------------ */

static void
test_config(void **state)
{
	struct lease_config c;
	char err[256];

	(void)state;
	c = config("me");
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), 0);
	c.retry_period_ms = 8333; /* 1.2 x 8333 = 9999.6 < 10000 */
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), 0);
	c.retry_period_ms = 8334; /* 10000.8 >= 10000 */
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "1.2"));
	assert_null(lease_new(&c, err, sizeof(err)));
	c = config("me");
	c.renew_deadline_ms = 15000; /* must be < lease duration */
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "lease duration"));
	c = config("me");
	c.retry_period_ms = 0;
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "> 0"));
	c = config("me");
	c.lease_duration_ms = -1;
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	c = config("");
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "identity"));
	c = config(NULL);
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	c = config("me");
	c.ns = "";
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	c = config("me");
	c.name = NULL;
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	c = config("me"); /* sub-second lease: 0 whole seconds */
	c.lease_duration_ms = 900;
	c.renew_deadline_ms = 800;
	c.retry_period_ms = 100;
	assert_int_equal(lease_config_check(&c, err, sizeof(err)), -1);
	assert_int_equal(lease_config_check(NULL, err, sizeof(err)), -1);
}

static void
test_fresh_create(void **state)
{
	struct lease *l = mk("me");
	struct lease_action a;
	json_object *o, *ans;
	char ts[TIMEFMT_RFC3339_MICRO_LEN];
	int64_t v;

	(void)state;
	assert_false(lease_is_leader(l, 1000));
	assert_int_equal(lease_epoch(l), 0);
	assert_string_equal(lease_holder(l), "");
	lease_next(l, 1000, BASE_US + 1000000, &a);
	assert_int_equal(a.act, LEASE_ACT_GET);
	assert_null(a.body);
	/* Nothing else is sent while the GET is in flight. */
	lease_next(l, 1001, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_NONE);
	assert_int_equal(a.at_ms, INT64_MAX);
	assert_int_equal(lease_on_write(l, LEASE_RES_OK, NULL, 1001), -1);
	assert_int_equal(lease_on_get(l, LEASE_RES_NOTFOUND, NULL, 1002), 0);
	lease_next(l, 1002, BASE_US + 1002000, &a);
	assert_int_equal(a.act, LEASE_ACT_CREATE);
	o = parse(a.body);
	micro(1002, ts);
	assert_string_equal(
	        jx_get_str(o, "apiVersion"), "coordination.k8s.io/v1");
	assert_string_equal(jx_get_str(o, "kind"), "Lease");
	assert_string_equal(
	        jx_get_str(o, "metadata.name"), "sympozium-controller-leader");
	assert_string_equal(
	        jx_get_str(o, "metadata.namespace"), "sympozium-system");
	assert_null(jx_get(o, "metadata.resourceVersion"));
	assert_string_equal(jx_get_str(o, "spec.holderIdentity"), "me");
	assert_int_equal(jx_get_int(o, "spec.leaseDurationSeconds", &v), 0);
	assert_int_equal(v, 15);
	assert_string_equal(jx_get_str(o, "spec.acquireTime"), ts);
	assert_string_equal(jx_get_str(o, "spec.renewTime"), ts);
	assert_int_equal(jx_get_int(o, "spec.leaseTransitions", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(json_object_object_length(jx_get(o, "spec")), 5);
	/* The server answers with the object and a resourceVersion. */
	ans = jx_copy_stripa(o, NULL);
	jx_set_path(
	        ans, "metadata.resourceVersion", json_object_new_string("7"));
	lease_action_fini(&a);
	assert_null(a.body);
	assert_false(lease_is_leader(l, 1003));
	assert_int_equal(lease_on_write(l, LEASE_RES_OK, ans, 1050), 0);
	assert_true(lease_is_leader(l, 1050));
	assert_int_equal(lease_epoch(l), 1);
	assert_int_equal(lease_leader_since(l), 1050);
	assert_string_equal(lease_holder(l), "me");
	/* Valid for the renew deadline from the send time (1002). */
	assert_int_equal(lease_valid_until(l, 1050), 11002);
	json_object_put(ans);
	json_object_put(o);
	lease_free(l);
}

static void
test_renew_fast_path(void **state)
{
	struct lease *l = mk("me");
	struct fake f = { 0 };
	struct lease_action a;
	char acq[TIMEFMT_RFC3339_MICRO_LEN], ts[TIMEFMT_RFC3339_MICRO_LEN];
	int64_t now = 0, at;
	int i;

	(void)state;
	at = drive(l, &f, now);
	assert_true(lease_is_leader(l, now));
	assert_int_equal(f.creates, 1);
	assert_int_equal(at, 2000);
	micro(0, acq);
	lease_next(l, 1999, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_NONE);
	assert_int_equal(a.at_ms, 2000);
	for (i = 1; i <= 20; i++) {
		now = at;
		assert_int_equal(now, 2000 * i);
		at = drive(l, &f, now);
		micro(now, ts);
		assert_string_equal(fspec(&f, "acquireTime"), acq);
		assert_string_equal(fspec(&f, "renewTime"), ts);
		assert_int_equal(fspec_int(&f, "leaseTransitions"), 0);
		assert_true(lease_is_leader(l, now));
		assert_int_equal(lease_valid_until(l, now), now + 10000);
	}
	/* Every renewal was one PUT from the cache: no GET after the first. */
	assert_int_equal(f.gets, 1);
	assert_int_equal(f.updates, 20);
	assert_int_equal(lease_slowpath(l), 0);
	assert_int_equal(lease_epoch(l), 1);
	assert_int_equal(lease_leader_since(l), 0);
	fake_free(&f);
	lease_free(l);
}

/* Steps whichever of a and b is due first, up to `until`; a and b may be
 * NULL (stopped).  Asserts that they never lead at once. */
struct sim {
	struct lease *c[2];
	int64_t at[2];
	int64_t now;
};

static int
sim_step(struct sim *s, struct fake *f)
{
	int i, k = -1;

	for (i = 0; i < 2; i++) {
		if (s->c[i] != NULL && (k < 0 || s->at[i] < s->at[k])) {
			k = i;
		}
	}
	assert_true(k >= 0);
	if (s->at[k] > s->now) {
		s->now = s->at[k];
	}
	s->at[k] = drive(s->c[k], f, s->now);
	assert_true(s->at[k] > s->now);
	assert_false(s->c[0] != NULL && s->c[1] != NULL
	        && lease_is_leader(s->c[0], s->now)
	        && lease_is_leader(s->c[1], s->now));
	return (k);
}

static void
test_two_candidates_failover(void **state)
{
	struct fake f = { 0 };
	struct sim s = { { mk("a"), mk("b") }, { 0, 10 }, 0 };
	char acq[TIMEFMT_RFC3339_MICRO_LEN];
	struct lease *dead;
	int64_t seen, t_last, take;
	int k;

	(void)state;
	while (s.now < 60000) {
		sim_step(&s, &f);
		if (s.now > 100) { /* exactly one leads once started */
			assert_true(lease_is_leader(s.c[0], s.now)
			        != lease_is_leader(s.c[1], s.now));
		}
	}
	assert_int_equal(lease_epoch(s.c[0]), 1);
	/* a came first and holds; b stands by. */
	assert_true(lease_is_leader(s.c[0], s.now));
	assert_false(lease_is_leader(s.c[1], s.now));
	assert_string_equal(lease_holder(s.c[1]), "a");
	assert_string_equal(fspec(&f, "holderIdentity"), "a");
	assert_int_equal(lease_epoch(s.c[1]), 0);
	strcpy(acq, fspec(&f, "acquireTime"));
	/* Kill a without release. */
	dead = s.c[0];
	s.c[0] = NULL;
	t_last = s.now;
	seen = -1;
	take = -1;
	while (take < 0) {
		seen = lease_observed_time(s.c[1]);
		k = sim_step(&s, &f);
		assert_int_equal(k, 1);
		if (lease_is_leader(s.c[1], s.now)) {
			take = s.now;
		}
		assert_true(s.now < t_last + 40000);
	}
	/* No sooner than 15 s after b last saw a change; no later than
	 * that plus one jittered retry period. */
	assert_true(take >= seen + 15000);
	assert_true(take < seen + 15000 + 4400);
	assert_false(lease_is_leader(dead, take));
	assert_string_equal(fspec(&f, "holderIdentity"), "b");
	assert_int_equal(fspec_int(&f, "leaseTransitions"), 1);
	assert_string_not_equal(fspec(&f, "acquireTime"), acq);
	assert_string_equal(fspec(&f, "acquireTime"), fspec(&f, "renewTime"));
	assert_int_equal(lease_epoch(s.c[1]), 1);
	lease_free(dead);
	lease_free(s.c[1]);
	fake_free(&f);
}

/* Checklist 66: a renewTime an hour old means nothing; what counts is
 * when this candidate saw the record change.  Retries every 500 ms here
 * (rand 0) to probe the boundary closely. */
static void
test_local_observation(void **state)
{
	struct lease_config c = config("me");
	struct lease *l;
	struct fake f = { 0 };
	int64_t hour_ago = BASE_US - 3600LL * 1000000;
	int64_t at, obs, t;

	(void)state;
	c.retry_period_ms = 500;
	c.rand = rand_zero;
	l = lease_new(&c, NULL, 0);
	assert_non_null(l);
	fake_put_other(&f, "other", hour_ago, 3);
	at = drive(l, &f, 100000);
	assert_int_equal(at, 100500);
	assert_int_equal(lease_observed_time(l), 100000);
	assert_false(lease_is_leader(l, 100000));
	assert_string_equal(lease_holder(l), "other");
	/* The record changes (renewTime still about an hour old). */
	fake_put_other(&f, "other", hour_ago + 1, 3);
	at = drive(l, &f, at);
	assert_int_equal(lease_observed_time(l), 100500);
	/* 1 s after the observed change: held, nothing written. */
	at = drive(l, &f, at);
	at = drive(l, &f, at);
	assert_int_equal(at, 102000);
	assert_int_equal(lease_observed_time(l), 100500);
	assert_int_equal(f.updates, 0);
	/* A new resourceVersion with the same record is not a change. */
	fake_store(&f, jx_copy_stripa(f.obj, NULL));
	obs = lease_observed_time(l);
	while (at < obs + 15000) {
		t = at;
		at = drive(l, &f, t);
		assert_true(at > t);
		assert_int_equal(f.updates, 0);
		assert_false(lease_is_leader(l, at));
	}
	assert_int_equal(lease_observed_time(l), obs);
	/* Exactly 15 s after the observed change: taken over. */
	assert_int_equal(at, obs + 15000);
	at = drive(l, &f, at);
	assert_true(lease_is_leader(l, obs + 15000));
	assert_int_equal(f.updates, 1);
	assert_string_equal(fspec(&f, "holderIdentity"), "me");
	assert_int_equal(fspec_int(&f, "leaseTransitions"), 4);
	assert_int_equal(lease_epoch(l), 1);
	fake_free(&f);
	lease_free(l);
}

static void
test_release_handover(void **state)
{
	struct fake f = { 0 };
	struct lease *a = mk("a"), *b = mk("b");
	struct lease_action act;
	json_object *o, *ans;
	char ts[TIMEFMT_RFC3339_MICRO_LEN];
	int64_t at_a, at_b, t, take, v;
	enum lease_result r;

	(void)state;
	at_a = drive(a, &f, 0);
	at_b = drive(b, &f, 1);
	for (t = 0; t < 30000; t += 100) {
		if (t >= at_a) {
			at_a = drive(a, &f, t);
		}
		if (t >= at_b) {
			at_b = drive(b, &f, t);
		}
	}
	assert_true(lease_is_leader(a, t));
	lease_release(a, t, BASE_US + t * 1000, &act);
	assert_false(lease_is_leader(a, t));
	assert_int_equal(act.act, LEASE_ACT_UPDATE);
	o = parse(act.body);
	micro(t, ts);
	assert_string_equal(jx_get_str(o, "spec.holderIdentity"), "");
	assert_int_equal(jx_get_int(o, "spec.leaseDurationSeconds", &v), 0);
	assert_int_equal(v, 1);
	assert_string_equal(jx_get_str(o, "spec.acquireTime"), ts);
	assert_string_equal(jx_get_str(o, "spec.renewTime"), ts);
	assert_int_equal(jx_get_int(o, "spec.leaseTransitions", &v), 0);
	assert_int_equal(v, 0);
	assert_non_null(jx_get_str(o, "metadata.resourceVersion"));
	json_object_put(o);
	r = fake_do(&f, &act, &ans);
	assert_int_equal(r, LEASE_RES_OK);
	lease_action_fini(&act);
	assert_int_equal(lease_on_write(a, r, ans, t), 0);
	json_object_put(ans);
	lease_next(a, t, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_DONE);
	assert_string_equal(lease_holder(a), "");
	/* b takes over on its next attempt, within 2.2 retry periods. */
	take = -1;
	for (t += 1; take < 0; t++) {
		if (t >= at_b) {
			at_b = drive(b, &f, t);
		}
		if (lease_is_leader(b, t)) {
			take = t;
		}
		assert_int_equal(drive(a, &f, t), -1);
		assert_true(t < 40000);
	}
	assert_true(take - 30000 <= 4400);
	assert_string_equal(fspec(&f, "holderIdentity"), "b");
	assert_int_equal(fspec_int(&f, "leaseTransitions"), 1);
	assert_int_equal(fspec_int(&f, "leaseDurationSeconds"), 15);
	lease_free(a);
	lease_free(b);
	fake_free(&f);
}

static void
test_release_variants(void **state)
{
	struct fake f = { 0 };
	struct lease_config c = config("me");
	struct lease *l;
	struct lease_action act, act2;
	json_object *ans;

	(void)state;
	/* Without release_on_cancel: done at once, nothing written. */
	c.release_on_cancel = false;
	l = lease_new(&c, NULL, 0);
	drive(l, &f, 0);
	assert_true(lease_is_leader(l, 0));
	lease_release(l, 100, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_DONE);
	assert_false(lease_is_leader(l, 100));
	assert_string_equal(fspec(&f, "holderIdentity"), "me");
	lease_free(l);
	fake_free(&f);

	/* Never leader: nothing to release. */
	l = mk("me");
	lease_release(l, 0, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_DONE);
	lease_free(l);

	/* A conflict re-reads; someone else holds it now: done. */
	l = mk("me");
	drive(l, &f, 0);
	fake_put_other(&f, "other", BASE_US, 1);
	lease_release(l, 500, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_UPDATE);
	assert_int_equal(fake_do(&f, &act, &ans), LEASE_RES_CONFLICT);
	lease_action_fini(&act);
	assert_int_equal(lease_on_write(l, LEASE_RES_CONFLICT, NULL, 510), 0);
	assert_int_equal(drive(l, &f, 510), -1);
	assert_int_equal(f.gets, 2);
	assert_string_equal(fspec(&f, "holderIdentity"), "other");
	lease_free(l);
	fake_free(&f);

	/* A conflict re-reads; still mine (a stale RV): released. */
	l = mk("me");
	drive(l, &f, 0);
	fake_store(&f, jx_copy_stripa(f.obj, NULL)); /* bump the RV */
	assert_int_equal(drive(l, &f, 600), 2000);
	lease_release(l, 700, BASE_US, &act);
	assert_int_equal(fake_do(&f, &act, &ans), LEASE_RES_CONFLICT);
	lease_action_fini(&act);
	assert_int_equal(lease_on_write(l, LEASE_RES_CONFLICT, NULL, 710), 0);
	assert_int_equal(drive(l, &f, 710), -1);
	assert_string_equal(fspec(&f, "holderIdentity"), "");
	assert_int_equal(fspec_int(&f, "leaseDurationSeconds"), 1);
	lease_free(l);
	fake_free(&f);

	/* Release while a renewal is in flight: its answer is awaited and
	 * its resourceVersion used. */
	l = mk("me");
	drive(l, &f, 0);
	lease_next(l, 2000, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_UPDATE);
	lease_release(l, 2001, BASE_US, &act2);
	assert_int_equal(act2.act, LEASE_ACT_NONE);
	assert_int_equal(act2.at_ms, 12001);
	assert_false(lease_is_leader(l, 2001));
	assert_int_equal(fake_do(&f, &act, &ans), LEASE_RES_OK);
	lease_action_fini(&act);
	assert_int_equal(lease_on_write(l, LEASE_RES_OK, ans, 2002), 0);
	json_object_put(ans);
	assert_false(lease_is_leader(l, 2002));
	assert_int_equal(lease_epoch(l), 1);
	assert_int_equal(drive(l, &f, 2002), -1);
	assert_string_equal(fspec(&f, "holderIdentity"), "");
	assert_int_equal(f.updates, 2);
	lease_free(l);
	fake_free(&f);

	/* Errors retry every RP, bounded by the renew deadline. */
	l = mk("me");
	drive(l, &f, 0);
	f.fail = FAIL_ERROR;
	lease_release(l, 1000, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_UPDATE);
	lease_action_fini(&act);
	assert_int_equal(lease_on_write(l, LEASE_RES_ERROR, NULL, 1000), 0);
	assert_int_equal(drive(l, &f, 1000), 3000);
	assert_int_equal(drive(l, &f, 3000), 5000);
	assert_int_equal(drive(l, &f, 9000), 11000);
	assert_int_equal(drive(l, &f, 10999), 11000);
	assert_int_equal(drive(l, &f, 11000), -1);
	assert_int_equal(drive(l, &f, 20000), -1);
	lease_free(l);
	fake_free(&f);
}

/* Renewals fail from time T on: leadership ends exactly at the last
 * successful send + renew deadline, and stays ended. */
static void
fencing(enum fail_mode mode)
{
	struct lease *l = mk("me");
	struct fake f = { 0 };
	int64_t at, last, t, n;

	at = drive(l, &f, 0);
	while (at < 20000) {
		t = at;
		at = drive(l, &f, t);
		assert_true(at > t);
	}
	last = at - 2000; /* the last successful renewal */
	assert_int_equal(lease_valid_until(l, at), last + 10000);
	f.fail = mode;
	n = 0;
	for (t = at; t < last + 10000; t++) {
		assert_true(lease_is_leader(l, t));
		if (t >= at) {
			at = drive(l, &f, t);
			/* Woken in time to notice the deadline. */
			assert_true(at <= last + 10000);
			n++;
		}
	}
	assert_true(n >= 4); /* retried every retry period */
	assert_false(lease_is_leader(l, last + 10000));
	assert_int_equal(lease_valid_until(l, last + 10000), -1);
	assert_int_equal(lease_leader_since(l), -1);
	for (t = last + 10000; t < last + 12000; t += 7) {
		if (t >= at) {
			at = drive(l, &f, t);
		}
		assert_false(lease_is_leader(l, t));
	}
	assert_int_equal(lease_epoch(l), 1);
	/* The server recovers: a new leadership, a new epoch. */
	f.fail = FAIL_NONE;
	t = at;
	at = drive(l, &f, t);
	assert_true(lease_is_leader(l, t));
	assert_int_equal(lease_epoch(l), 2);
	assert_int_equal(lease_leader_since(l), t);
	/* Still our record, so acquireTime and transitions are kept. */
	assert_int_equal(fspec_int(&f, "leaseTransitions"), 0);
	lease_free(l);
	fake_free(&f);
}

static void
test_fencing_errors(void **state)
{
	(void)state;
	fencing(FAIL_ERROR);
}

static void
test_fencing_conflicts(void **state)
{
	(void)state;
	fencing(FAIL_CONFLICT);
}

/* A renewal sent before the deadline whose answer arrives after it: the
 * gap was visible, so leadership resumes under a new epoch. */
static void
test_late_answer(void **state)
{
	struct lease *l = mk("me");
	struct fake f = { 0 };
	struct lease_action a;
	json_object *o;

	(void)state;
	drive(l, &f, 0);
	lease_next(l, 2000, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_UPDATE);
	lease_action_fini(&a);
	lease_next(l, 5000, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_NONE);
	assert_int_equal(a.at_ms, 10000); /* the lapse of the create */
	assert_true(lease_is_leader(l, 9999));
	assert_false(lease_is_leader(l, 10000));
	lease_next(l, 10001, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_NONE);
	assert_int_equal(a.at_ms, INT64_MAX);
	/* Answer the PUT sent at 2000, at 10500. */
	o = jx_copy_stripa(f.obj, NULL);
	jx_set_path(
	        o, "metadata.resourceVersion", json_object_new_string("99"));
	assert_int_equal(lease_on_write(l, LEASE_RES_OK, o, 10500), 0);
	json_object_put(o);
	assert_true(lease_is_leader(l, 10500));
	assert_int_equal(lease_epoch(l), 2);
	assert_int_equal(lease_valid_until(l, 10500), 12000);
	assert_false(lease_is_leader(l, 12000));
	lease_free(l);
	fake_free(&f);
}

static void
test_fast_path_falls_through(void **state)
{
	struct lease *l = mk("me");
	struct fake f = { 0 };
	int64_t at;

	(void)state;
	at = drive(l, &f, 0);
	assert_int_equal(lease_slowpath(l), 0);
	/* Someone bumps the RV without changing the record: the fast PUT
	 * conflicts, the same attempt GETs and PUTs with the new RV: one
	 * renewal through the slow path. */
	fake_store(&f, jx_copy_stripa(f.obj, NULL));
	at = drive(l, &f, at);
	assert_int_equal(lease_slowpath(l), 1);
	assert_int_equal(at, 4000);
	assert_int_equal(f.gets, 2);
	assert_int_equal(f.updates, 2);
	assert_true(lease_is_leader(l, 2000));
	assert_int_equal(lease_valid_until(l, 2000), 12000);
	assert_int_equal(fspec_int(&f, "leaseTransitions"), 0);
	assert_int_equal(lease_epoch(l), 1);
	/* Someone else takes the Lease: seen at the next GET, leadership
	 * ends at once. */
	fake_put_other(&f, "thief", BASE_US, 1);
	at = drive(l, &f, at);
	assert_false(lease_is_leader(l, 4000));
	assert_string_equal(lease_holder(l), "thief");
	assert_true(at >= 6000 && at < 8400);
	/* The Lease is deleted: re-created, new leadership. */
	fake_free(&f);
	at = drive(l, &f, at);
	assert_true(lease_is_leader(l, at - 2000));
	assert_int_equal(lease_epoch(l), 2);
	/* taking a Lease that was not ours is no slow-path renewal */
	assert_int_equal(lease_slowpath(l), 1);
	lease_free(l);
	fake_free(&f);
}

static void
test_epochs(void **state)
{
	struct lease *l = mk("me");
	struct fake f = { 0 };
	int64_t at, t;
	uint32_t e;

	(void)state;
	at = 0;
	for (e = 1; e <= 3; e++) {
		at = drive(l, &f, at);
		assert_true(lease_is_leader(l, at - 2000));
		assert_int_equal(lease_epoch(l), e);
		f.fail = FAIL_ERROR;
		for (t = at; lease_is_leader(l, t); t = at) {
			at = drive(l, &f, t);
			assert_true(at > t);
		}
		assert_int_equal(lease_epoch(l), e);
		f.fail = FAIL_NONE;
	}
	lease_free(l);
	fake_free(&f);
}

static void
test_jitter(void **state)
{
	struct lease_config c = config("me");
	struct fake f = { 0 };
	struct lease *l;
	int64_t at, d, lo = INT64_MAX, hi = 0;
	double r;
	int i;

	(void)state;
	fake_put_other(&f, "other", BASE_US, 0);
	/* Injected extremes. */
	c.rand = rand_zero;
	l = lease_new(&c, NULL, 0);
	assert_int_equal(drive(l, &f, 0), 2000);
	lease_free(l);
	c.rand = rand_high;
	l = lease_new(&c, NULL, 0);
	at = drive(l, &f, 0);
	assert_true(at >= 4399 && at < 4400);
	lease_free(l);
	r = 0.5;
	c.rand = rand_fixed;
	c.rand_arg = &r;
	l = lease_new(&c, NULL, 0);
	assert_int_equal(drive(l, &f, 0), 3200);
	r = 7.0; /* out of range: clamped */
	at = drive(l, &f, 3200);
	assert_true(at - 3200 >= 2000 && at - 3200 < 4400);
	r = -1.0;
	assert_int_equal(drive(l, &f, at), at + 2000);
	lease_free(l);
	/* The built-in PRNG: always in [RP, 2.2 RP), and spread out. */
	c.rand = NULL;
	l = lease_new(&c, NULL, 0);
	at = 0;
	for (i = 0; i < 500; i++) {
		d = drive(l, &f, at) - at;
		at += d;
		assert_true(d >= 2000 && d < 4400);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		fake_put_other(&f, "other", BASE_US + at * 1000, 0);
	}
	assert_true(lo < 2200);
	assert_true(hi > 4200);
	assert_false(lease_is_leader(l, at));
	lease_free(l);
	fake_free(&f);
}

static void
test_bad_answers(void **state)
{
	struct lease *l = mk("me");
	struct lease_action a;
	json_object *o;

	(void)state;
	assert_int_equal(lease_on_get(l, LEASE_RES_OK, NULL, 0), -1);
	lease_next(l, 0, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_GET);
	/* OK without an object: an error, retried later. */
	assert_int_equal(lease_on_get(l, LEASE_RES_OK, NULL, 0), 0);
	lease_next(l, 0, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_NONE);
	assert_true(a.at_ms >= 2000);
	lease_next(l, a.at_ms, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_GET);
	o = parse("[1,2]");
	assert_int_equal(lease_on_get(l, LEASE_RES_OK, o, 5000), 0);
	json_object_put(o);
	lease_next(l, 10000, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_GET);
	/* Wrong types in the spec: no crash; treated as free. */
	o = parse("{\"metadata\":{\"resourceVersion\":\"3\"},\"spec\":"
	          "{\"holderIdentity\":5,\"leaseDurationSeconds\":\"x\","
	          "\"leaseTransitions\":-4,\"acquireTime\":[]}}");
	assert_int_equal(lease_on_get(l, LEASE_RES_OK, o, 10000), 0);
	json_object_put(o);
	lease_next(l, 10000, BASE_US, &a);
	assert_int_equal(a.act, LEASE_ACT_UPDATE);
	o = parse(a.body);
	assert_string_equal(jx_get_str(o, "spec.holderIdentity"), "me");
	assert_string_equal(jx_get_str(o, "metadata.resourceVersion"), "3");
	json_object_put(o);
	lease_action_fini(&a);
	/* A write answered OK without a resourceVersion: not leader. */
	o = parse("{\"spec\":{\"holderIdentity\":\"me\"}}");
	assert_int_equal(lease_on_write(l, LEASE_RES_OK, o, 10001), 0);
	json_object_put(o);
	assert_false(lease_is_leader(l, 10001));
	assert_int_equal(lease_on_write(l, LEASE_RES_OK, NULL, 10001), -1);
	lease_free(l);
	lease_free(NULL);
}

/* The standby's watch (lease_on_watch()): events are judged like GET
 * answers between attempts, and ignored while a request is in flight or
 * while leading. */
static void
test_watch_events(void **state)
{
	struct lease_config c = config("me");
	struct lease_action act;
	struct lease *l;
	struct fake f = { 0 };
	json_object *ev;
	int64_t at;

	(void)state;
	c.retry_period_ms = 500;
	c.rand = rand_high; /* the jittered wait is near 2.2 periods */
	l = lease_new(&c, NULL, 0);
	assert_non_null(l);
	fake_put_other(&f, "other", BASE_US, 0);
	at = drive(l, &f, 1000);
	assert_true(at >= 1000 + 1090);
	assert_int_equal(lease_observed_time(l), 1000);
	/* A renewal seen on the watch: observed now, still held, no write;
	 * the next attempt is no later than its expiry. */
	fake_put_other(&f, "other", BASE_US + 1200000, 0);
	ev = jx_copy_stripa(f.obj, NULL);
	assert_true(lease_on_watch(l, ev, 1200));
	json_object_put(ev);
	assert_int_equal(lease_observed_time(l), 1200);
	at = drive(l, &f, 1200);
	assert_true(at > 1200 && at <= 1200 + 15000);
	assert_int_equal(f.updates, 0);
	assert_false(lease_is_leader(l, 1200));
	/* The holder releases (empty holder): taken at once, one PUT with
	 * the watched resourceVersion, no GET. */
	json_object_object_add(json_object_object_get(f.obj, "spec"),
	        "holderIdentity", json_object_new_string(""));
	fake_store(&f, jx_copy_stripa(f.obj, NULL));
	ev = jx_copy_stripa(f.obj, NULL);
	f.gets = 0;
	assert_true(lease_on_watch(l, ev, 1300));
	json_object_put(ev);
	at = drive(l, &f, 1300);
	assert_true(lease_is_leader(l, 1300));
	assert_int_equal(f.gets, 0);
	assert_int_equal(f.updates, 1);
	assert_string_equal(fspec(&f, "holderIdentity"), "me");
	/* Leading: watch events change nothing. */
	ev = jx_copy_stripa(f.obj, NULL);
	assert_false(lease_on_watch(l, ev, 1400));
	assert_false(lease_on_watch(l, NULL, 1400));
	json_object_put(ev);
	assert_true(lease_is_leader(l, 1400));
	lease_free(l);
	fake_free(&f);

	/* A deletion seen between attempts: the next step creates. */
	l = lease_new(&c, NULL, 0);
	fake_put_other(&f, "other", BASE_US, 0);
	(void)drive(l, &f, 0);
	json_object_put(f.obj);
	f.obj = NULL;
	assert_true(lease_on_watch(l, NULL, 100));
	(void)drive(l, &f, 100);
	assert_int_equal(f.creates, 1);
	assert_true(lease_is_leader(l, 100));
	lease_free(l);
	fake_free(&f);

	/* A request in flight: the event waits for its answer. */
	l = lease_new(&c, NULL, 0);
	fake_put_other(&f, "other", BASE_US, 0);
	lease_next(l, 0, BASE_US, &act);
	assert_int_equal(act.act, LEASE_ACT_GET);
	ev = jx_copy_stripa(f.obj, NULL);
	assert_false(lease_on_watch(l, ev, 10));
	assert_false(lease_on_watch(l, NULL, 10));
	json_object_put(ev);
	lease_action_fini(&act);
	lease_free(l);
	fake_free(&f);
	/* Garbage from the watch is ignored. */
	l = lease_new(&c, NULL, 0);
	fake_put_other(&f, "other", BASE_US, 0);
	(void)drive(l, &f, 0);
	ev = json_object_new_string("not a lease");
	assert_false(lease_on_watch(l, ev, 10));
	json_object_put(ev);
	assert_int_equal(lease_observed_time(l), 0);
	lease_free(l);
	fake_free(&f);
}

/* A slow server (issue 13): every request takes 4 s (the server applies it
 * halfway), lease 15 s, renew deadline 10 s, retry period 2 s.  The leader
 * keeps its lease for a minute: each renewal is sent as soon as the
 * previous one was answered (RP after it was sent has passed), so every
 * answer comes 8 s after the previous success was sent, inside the 10 s
 * deadline.  Every request carries the renew deadline as its timeout. */
static void
test_slow_server(void **state)
{
	struct lease *l = mk("me");
	struct fake f = { 0 };
	struct lease_action a;
	json_object *o;
	enum lease_result r;
	int64_t now = 0, t;
	int writes = 0;

	(void)state;
	while (now < 60000) {
		lease_next(l, now, BASE_US + now * 1000, &a);
		if (a.act == LEASE_ACT_NONE) {
			assert_true(a.at_ms > now);
			now = a.at_ms;
			continue;
		}
		assert_int_equal(a.timeout_ms, 10000);
		r = fake_do(&f, &a, &o);
		/* leadership holds across the whole round trip */
		for (t = now; t < now + 4000 && lease_epoch(l) > 0; t += 100) {
			assert_true(lease_is_leader(l, t));
		}
		now += 4000;
		if (a.act == LEASE_ACT_GET) {
			assert_int_equal(lease_on_get(l, r, o, now), 0);
		} else {
			assert_int_equal(lease_on_write(l, r, o, now), 0);
			writes++;
		}
		json_object_put(o);
		lease_action_fini(&a);
		assert_true(lease_epoch(l) == 0 || lease_is_leader(l, now));
	}
	assert_true(lease_is_leader(l, now));
	assert_int_equal(lease_epoch(l), 1);
	assert_int_equal(f.gets, 1);
	assert_true(writes >= 14); /* one every 4 s */
	fake_free(&f);
	lease_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_fresh_create),
		cmocka_unit_test(test_renew_fast_path),
		cmocka_unit_test(test_two_candidates_failover),
		cmocka_unit_test(test_local_observation),
		cmocka_unit_test(test_release_handover),
		cmocka_unit_test(test_watch_events),
		cmocka_unit_test(test_release_variants),
		cmocka_unit_test(test_fencing_errors),
		cmocka_unit_test(test_fencing_conflicts),
		cmocka_unit_test(test_late_answer),
		cmocka_unit_test(test_slow_server),
		cmocka_unit_test(test_fast_path_falls_through),
		cmocka_unit_test(test_epochs),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_bad_answers),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
