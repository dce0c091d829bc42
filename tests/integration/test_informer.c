/*
 * test_informer.c: supervisor/informer.c against a spawned bin/kubesim:
 * the cache converges to the server's state for label-selected ConfigMaps
 * (unrelated ones never cached), change callbacks (adds, updates, deletes,
 * controller-owner changes), a watch closed by the server is resumed with
 * no LIST, a forced 410 costs exactly one LIST per kind (counted in
 * kubesim's --request-log), and kinds over one resource share one source
 * (one LIST, one cache) with per-kind filtered changes.  Our own small loop
 * drives the multi handle. Every wait is bounded (WAIT_MS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/informer.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 15000
#define TOKEN   "inf-test-token"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SA = { "", "v1", "serviceaccounts", true };

static struct ksim_api A;

/* What the callbacks saw. */
struct seen {
	struct inf *in;
	int adds, updates, deletes, synced;
	int origin[3]; /* changes by enum inf_origin */
	char last_key[128];
	char old_owner[64], new_owner[64];
};

static void
on_change(void *arg, size_t kind, enum inf_change ch, const char *key,
        const struct inf_owner *oo, const struct inf_owner *no)
{
	struct seen *s = arg;

	(void)kind;
	s->origin[inf_origin(s->in)]++;
	if (ch == INF_ADD) {
		s->adds++;
	} else if (ch == INF_UPDATE) {
		s->updates++;
	} else {
		s->deletes++;
	}
	snprintf(s->last_key, sizeof(s->last_key), "%s", key);
	snprintf(s->old_owner, sizeof(s->old_owner), "%s",
	        oo->uid != NULL ? oo->uid : "");
	snprintf(s->new_owner, sizeof(s->new_owner), "%s",
	        no->uid != NULL ? no->uid : "");
}

static void
on_synced(void *arg, size_t kind)
{
	(void)kind;
	((struct seen *)arg)->synced++;
}

typedef bool cond_fn(void *arg);

/* Runs the loop until cond(arg) holds or WAIT_MS pass.  */
static bool
pump(struct kapi_multi *m, struct inf *in, cond_fn *cond, void *arg)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	for (;;) {
		int64_t now = timefmt_now_ms_mono();
		int64_t dl = inf_next_deadline(in, now);
		int64_t t = dl - now;

		if (cond(arg)) {
			return (true);
		}
		if (now >= end) {
			return (false);
		}
		kapi_multi_poll(m, NULL, 0, (int)(t < 50 ? t : 50));
		kapi_multi_perform(m);
		inf_tick(in, timefmt_now_ms_mono());
	}
}

static void
make_ns(const char *ns)
{
	assert_int_equal(ksim_api_create(&A, &R_NS, NULL, ns, NULL), KAPI_OK);
}

static void
make_obj(const struct kapi_res *r, const char *ns, const char *name,
        const char *label)
{
	assert_int_equal(ksim_api_create(&A, r, ns, name, label), KAPI_OK);
}

static void
del_obj(const struct kapi_res *r, const char *ns, const char *name)
{
	struct kapi_err e = KAPI_ERR_INIT;

	assert_int_equal(
	        kapi_delete(A.c, r, ns, name, NULL, NULL, &e), KAPI_OK);
	kapi_err_fini(&e);
}

static void
admin(const char *path)
{
	struct ksim_resp *r;
	const char *hdr[] = { "Authorization: Bearer " TOKEN, NULL };

	r = ksim_request(ksim_url(A.k), "POST", path, NULL, NULL, hdr, 0);
	assert_int_equal(r->code, 200);
	ksim_resp_free(r);
}

/* LIST requests in the request log whose path contains frag. */
static int
count_lists(const char *frag)
{
	int n = ksim_count_log(A.request_log, "list", frag, NULL);

	assert_true(n >= 0);
	return (n);
}

/* ---- fixture ---- */

struct fx {
	struct kapi_multi *m;
	struct inf *in;
	struct seen seen;
};

static void
fx_start(struct fx *f, const struct inf_kind *kinds, size_t n)
{
	struct inf_conf conf = { 0 };

	memset(f, 0, sizeof(*f));
	conf.on_change = on_change;
	conf.on_synced = on_synced;
	conf.arg = &f->seen;
	conf.seed = 42;
	f->m = kapi_multi_new(A.c);
	f->in = inf_new(f->m, kinds, n, &conf);
	assert_non_null(f->in);
	f->seen.in = f->in;
}

static void
fx_stop(struct fx *f)
{
	inf_free(f->in);
	kapi_multi_free(f->m);
}

static bool
all_synced(void *arg)
{
	return (inf_all_synced(((struct fx *)arg)->in));
}

struct want {
	struct fx *f;
	size_t kind;
	const char *ns, *name;
	bool present;
};

static bool
cached(void *arg)
{
	struct want *w = arg;
	struct cache *c = inf_cache(w->f->in, w->kind);

	return ((cache_get(c, w->ns, w->name) != NULL) == w->present);
}

static void
wait_cached(struct fx *f, size_t kind, const char *ns, const char *name,
        bool present)
{
	struct want w = { f, kind, ns, name, present };

	assert_true(pump(f->m, f->in, cached, &w));
}

/* The cache holds exactly the server's selected objects, same RVs. */
static void
assert_converged(struct fx *f, size_t kind, const char *ns)
{
	struct kapi_list_opts o = { .label_selector = "app=sym" };
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *items = NULL;
	struct cache *c = inf_cache(f->in, kind);
	size_t n;

	assert_int_equal(
	        kapi_list_all(A.c, &R_CM, ns, &o, &items, NULL, &e), KAPI_OK);
	n = json_object_array_length(items);
	assert_int_equal(cache_count(c), n);
	for (size_t i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i);
		char key[256];
		struct cache_item ci;

		snprintf(key, sizeof(key), "%s/%s", ns,
		        jx_get_str(it, "metadata.name"));
		assert_int_equal(cache_lookup(c, key, &ci), 0);
		assert_string_equal(
		        ci.rv, jx_get_str(it, "metadata.resourceVersion"));
	}
	json_object_put(items);
	kapi_err_fini(&e);
}

static bool
updated(void *arg)
{
	return (((struct fx *)arg)->seen.updates > 0);
}

/* ---- tests ---- */

static void
test_converge(void **state)
{
	struct inf_kind k = { "configmaps", R_CM, "app=sym", "inf1" };
	struct fx f;
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *o;

	(void)state;
	make_ns("inf1");
	make_obj(&R_CM, "inf1", "a", "sym");
	make_obj(&R_CM, "inf1", "b", "sym");
	make_obj(&R_CM, "inf1", "other", "else");
	make_obj(&R_CM, "inf1", "plain", NULL);
	fx_start(&f, &k, 1);
	assert_true(pump(f.m, f.in, all_synced, &f));
	assert_int_equal(f.seen.synced, 1);
	assert_int_equal(f.seen.adds, 2);
	assert_int_equal(f.seen.origin[INF_LIST], 2);
	assert_int_equal(f.seen.origin[INF_LIVE], 0);
	assert_int_equal(inf_origin(f.in), INF_LIVE);
	assert_null(cache_get(inf_cache(f.in, 0), "inf1", "other"));
	assert_null(cache_get(inf_cache(f.in, 0), "inf1", "plain"));

	make_obj(&R_CM, "inf1", "c", "sym");
	make_obj(&R_CM, "inf1", "d", "nope");
	wait_cached(&f, 0, "inf1", "c", true);
	assert_int_equal(f.seen.adds, 3);
	assert_int_equal(f.seen.origin[INF_LIVE], 1); /* a watch event */

	/* Owner change: b gets a controller ownerReference. */
	assert_int_equal(kapi_get(A.c, &R_CM, "inf1", "b", &o, &e), KAPI_OK);
	jx_setv(o,
	        testutil_json("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                      "\"name\":\"a\",\"uid\":\"u-123\","
	                      "\"controller\":true}]",
	                0),
	        "metadata", "ownerReferences", NULL);
	assert_int_equal(
	        kapi_update(A.c, &R_CM, "inf1", o, NULL, &e), KAPI_OK);
	json_object_put(o);
	assert_true(pump(f.m, f.in, updated, &f));
	assert_string_equal(f.seen.last_key, "inf1/b");
	assert_string_equal(f.seen.old_owner, "");
	assert_string_equal(f.seen.new_owner, "u-123");

	/* Delete: callback with the old owner. */
	del_obj(&R_CM, "inf1", "b");
	wait_cached(&f, 0, "inf1", "b", false);
	assert_int_equal(f.seen.deletes, 1);
	assert_string_equal(f.seen.last_key, "inf1/b");
	assert_string_equal(f.seen.old_owner, "u-123");
	assert_converged(&f, 0, "inf1");
	kapi_err_fini(&e);
	fx_stop(&f);
}

static bool
rewatched(void *arg)
{
	struct fx *f = arg;
	struct inf_stats st;

	inf_stats(f->in, 0, &st);
	return (st.watch_restarts >= 1 && st.watches >= 2);
}

static void
test_close_watches(void **state)
{
	struct inf_kind k = { "configmaps", R_CM, "app=sym", "inf2" };
	struct fx f;
	struct inf_stats st;
	int lists;

	(void)state;
	make_ns("inf2");
	make_obj(&R_CM, "inf2", "a", "sym");
	fx_start(&f, &k, 1);
	assert_true(pump(f.m, f.in, all_synced, &f));
	wait_cached(&f, 0, "inf2", "a", true);
	/* Let the watch be established and not "very short". */
	ksim_sleep_ms(1100);
	kapi_multi_perform(f.m);
	lists = count_lists("/namespaces/inf2/configmaps");
	assert_int_equal(lists, 1);
	admin("/_kubesim/close-watches");
	assert_true(pump(f.m, f.in, rewatched, &f));
	make_obj(&R_CM, "inf2", "b", "sym");
	wait_cached(&f, 0, "inf2", "b", true);
	assert_int_equal(count_lists("/namespaces/inf2/configmaps"), lists);
	inf_stats(f.in, 0, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.relists, 0);
	assert_true(st.objects == 2);
	assert_converged(&f, 0, "inf2");
	fx_stop(&f);
}

static bool
fresh0(void *arg)
{
	struct fx *f = arg;

	return (inf_fresh(f->in, 0));
}

static bool
watch_failed(void *arg)
{
	struct fx *f = arg;
	struct inf_stats st;

	inf_stats(f->in, 0, &st);
	return (st.watch_errors >= 1);
}

/* inf_fresh(): false before the sync, while the watch is new, and while a
 * failed watch backs off; true once a watch has been open INF_FRESH_MS. */
static void
test_fresh(void **state)
{
	struct inf_kind k = { "configmaps", R_CM, "app=sym", "inf5" };
	struct fx f;
	struct ksim_resp *r;
	const char *hdr[] = { "Authorization: Bearer " TOKEN, NULL };

	(void)state;
	make_ns("inf5");
	fx_start(&f, &k, 1);
	assert_false(inf_fresh(f.in, 0));
	assert_false(inf_fresh(f.in, 1)); /* out of range */
	assert_true(pump(f.m, f.in, all_synced, &f));
	assert_true(pump(f.m, f.in, fresh0, &f));
	/* every watch answers 503: the watch ends, the reflector backs off
	 * (0.8 s at least) and the cache may lag */
	r = ksim_request(ksim_url(A.k), "POST", "/_kubesim/faults",
	        "application/json",
	        "{\"verbs\":[\"watch\"],\"resource\":\"configmaps\","
	        "\"code\":503}",
	        hdr, 0);
	assert_int_equal(r->code, 201);
	ksim_resp_free(r);
	admin("/_kubesim/close-watches");
	assert_true(pump(f.m, f.in, watch_failed, &f));
	assert_false(inf_fresh(f.in, 0));
	r = ksim_request(ksim_url(A.k), "DELETE", "/_kubesim/faults", NULL,
	        NULL, hdr, 0);
	assert_int_equal(r->code, 200);
	ksim_resp_free(r);
	assert_true(pump(f.m, f.in, fresh0, &f));
	fx_stop(&f);
}

static bool
relisted(void *arg)
{
	struct fx *f = arg;
	struct inf_stats a, b;

	inf_stats(f->in, 0, &a);
	inf_stats(f->in, 1, &b);
	return (a.relists >= 1 && b.relists >= 1
	        && cache_get(inf_cache(f->in, 0), "inf3", "late") != NULL);
}

struct lists_goal {
	int cm, sa;
};

static bool
lists_reached(void *arg)
{
	struct lists_goal *g = arg;

	return (count_lists("/namespaces/inf3/configmaps") >= g->cm
	        && count_lists("/namespaces/inf3/serviceaccounts") >= g->sa);
}

static void
test_expired_relist(void **state)
{
	struct inf_kind k[] = {
		{ "configmaps", R_CM, "app=sym", "inf3" },
		{ "serviceaccounts", R_SA, NULL, "inf3" },
	};
	struct fx f;
	int cm, sa;

	(void)state;
	make_ns("inf3");
	make_ns("inf3-other");
	make_obj(&R_CM, "inf3", "a", "sym");
	make_obj(&R_CM, "inf3", "gone", "sym");
	make_obj(&R_SA, "inf3", "sa1", NULL);
	fx_start(&f, k, 2);
	assert_true(pump(f.m, f.in, all_synced, &f));
	wait_cached(&f, 0, "inf3", "gone", true);
	cm = count_lists("/namespaces/inf3/configmaps");
	sa = count_lists("/namespaces/inf3/serviceaccounts");
	assert_int_equal(cm, 1);
	assert_int_equal(sa, 1);
	/* Move the server's RV past the informer's, then forget history. */
	make_obj(&R_CM, "inf3-other", "x", NULL);
	admin("/_kubesim/compact");
	admin("/_kubesim/close-watches");
	make_obj(&R_CM, "inf3", "late", "sym");
	del_obj(&R_CM, "inf3", "gone");
	assert_true(pump(f.m, f.in, relisted, &f));
	wait_cached(&f, 0, "inf3", "gone", false);
	/* relists counts a relist when it is decided; its LIST goes out
	 * after one backoff delay (up to 1.6 s): keep the informer running
	 * until both LISTs are in the request log, or the wait ends */
	struct lists_goal goal = { cm + 1, sa + 1 };
	pump(f.m, f.in, lists_reached, &goal);
	assert_int_equal(count_lists("/namespaces/inf3/configmaps"), cm + 1);
	assert_int_equal(
	        count_lists("/namespaces/inf3/serviceaccounts"), sa + 1);
	assert_converged(&f, 0, "inf3");
	assert_true(f.seen.deletes >= 1);
	/* the first lists' 3 adds; late and gone came with the relist */
	assert_int_equal(f.seen.origin[INF_LIST], 3);
	assert_true(f.seen.origin[INF_RELIST] >= 2);
	fx_stop(&f);
}

/* ---- shared sources ---- */

/* Changes seen per kind. */
struct per_kind {
	int adds[3], updates[3], deletes[3];
};

static void
on_change_kind(void *arg, size_t kind, enum inf_change ch, const char *key,
        const struct inf_owner *oo, const struct inf_owner *no)
{
	struct per_kind *p = arg;

	(void)key;
	(void)oo;
	(void)no;
	assert_true(kind < 3);
	if (ch == INF_ADD) {
		p->adds[kind]++;
	} else if (ch == INF_UPDATE) {
		p->updates[kind]++;
	} else {
		p->deletes[kind]++;
	}
}

static void
relabel(const char *ns, const char *name, const char *app)
{
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *o;

	assert_int_equal(kapi_get(A.c, &R_CM, ns, name, &o, &e), KAPI_OK);
	jx_setv(o, json_object_new_string(app), "metadata", "labels", "app",
	        NULL);
	assert_int_equal(kapi_update(A.c, &R_CM, ns, o, NULL, &e), KAPI_OK);
	json_object_put(o);
	kapi_err_fini(&e);
}

struct counts_goal {
	struct per_kind *p;
	int kind, adds, deletes;
};

static bool
counts_reached(void *arg)
{
	struct counts_goal *g = arg;

	return (g->p->adds[g->kind] >= g->adds
	        && g->p->deletes[g->kind] >= g->deletes);
}

static int
count_item(void *arg, const struct cache_item *it)
{
	(void)it;
	(*(int *)arg)++;
	return (0);
}

/* Three kinds over one resource: all, app=sym, app=sym again.  One source
 * (one LIST, one cache); the selected kinds see only their objects, an
 * object relabelled into or out of the selector is an add or a delete for
 * them, and inf_by_owner() filters. */
static void
test_shared(void **state)
{
	struct inf_kind k[] = {
		{ "configmaps", R_CM, NULL, "inf4" },
		{ "sym", R_CM, "app=sym", "inf4" },
		{ "sym2", R_CM, "app=sym", "inf4" },
	};
	struct inf_conf conf = { 0 };
	struct per_kind p = { 0 };
	struct fx f;
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *o;
	int n = 0;

	(void)state;
	make_ns("inf4");
	make_obj(&R_CM, "inf4", "a", "sym");
	make_obj(&R_CM, "inf4", "b", "else");
	/* text that a naive scanner would trip on */
	o = testutil_json("{\"metadata\":{\"name\":\"tricky\",\"labels\":"
	                  "{\"app\":\"sym\"}},\"data\":{\"k\":"
	                  "\"}]{[\\\"\\\\,\\u00e9\"}}",
	        0);
	assert_int_equal(
	        kapi_create(A.c, &R_CM, "inf4", o, NULL, &e), KAPI_OK);
	json_object_put(o);
	memset(&f, 0, sizeof(f));
	conf.on_change = on_change_kind;
	conf.arg = &p;
	f.m = kapi_multi_new(A.c);
	f.in = inf_new(f.m, k, 3, &conf);
	assert_non_null(f.in);
	assert_int_equal(inf_nsources(f.in), 1);
	assert_true(inf_source(f.in, 2) == 0);
	assert_ptr_equal(inf_cache(f.in, 0), inf_cache(f.in, 1));
	assert_null(inf_filter(f.in, 0));
	assert_string_equal(inf_filter(f.in, 1), "app=sym");
	assert_true(pump(f.m, f.in, all_synced, &f));
	assert_int_equal(count_lists("/namespaces/inf4/configmaps"), 1);
	assert_int_equal(cache_count(inf_cache(f.in, 0)), 3);
	assert_non_null(strstr(cache_get(inf_cache(f.in, 0), "inf4", "tricky"),
	        "\"kind\":\"ConfigMap\""));
	assert_int_equal(p.adds[0], 3);
	assert_int_equal(p.adds[1], 2);
	assert_int_equal(p.adds[2], 2);

	relabel("inf4", "b", "sym"); /* enters the selector */
	struct counts_goal g = { &p, 1, 3, 0 };
	assert_true(pump(f.m, f.in, counts_reached, &g));
	assert_int_equal(p.adds[2], 3);
	assert_int_equal(p.updates[0], 1);
	assert_int_equal(p.updates[1], 0);

	relabel("inf4", "a", "else"); /* leaves it */
	g = (struct counts_goal) { &p, 1, 3, 1 };
	assert_true(pump(f.m, f.in, counts_reached, &g));
	assert_int_equal(p.deletes[2], 1);
	assert_int_equal(p.updates[0], 2);

	del_obj(&R_CM, "inf4", "a"); /* outside the selector: kind 0 only */
	g = (struct counts_goal) { &p, 0, 3, 1 };
	assert_true(pump(f.m, f.in, counts_reached, &g));
	assert_int_equal(p.deletes[1], 1);

	/* owners: nothing owned, and a filtered walk of nothing is 0 */
	assert_int_equal(inf_by_owner(f.in, 1, "none", count_item, &n), 0);
	assert_int_equal(n, 0);
	cache_list(inf_cache(f.in, 1), "inf4", inf_filter(f.in, 1), count_item,
	        &n);
	assert_int_equal(n, 2);
	kapi_err_fini(&e);
	fx_stop(&f);
}

static void
test_bad_kind(void **state)
{
	struct inf_kind k = { "cm", R_CM, "app in (x)", NULL };
	struct inf_kind k2 = { "", R_CM, NULL, NULL };
	struct kapi_multi *m = kapi_multi_new(A.c);

	(void)state;
	assert_null(inf_new(m, &k, 1, NULL));
	assert_null(inf_new(m, &k2, 1, NULL));
	kapi_multi_free(m);
}

static int
group_setup(void **state)
{
	const char *args[]
	        = { "--tls", "--token", TOKEN, "--controllers", "none", NULL };

	*state = &A;
	return (ksim_api_start(&A, args, "test_informer/0", WAIT_MS));
}

/* inf_new_off(): a kind that is off (a resource the server does not
 * serve: supervisor/served.c) sends nothing, is synced and fresh at once
 * with an empty cache of its own, and shares no source with a kind of
 * the same resource that is on. */
static void
test_off_kind(void **state)
{
	static const struct kapi_res R_SBX
	        = { "agents.x-k8s.io", "v1alpha1", "sandboxes", true };
	struct inf_kind k[] = {
		{ "configmaps", R_CM, "app=sym", "inf7" },
		{ "sandboxes", R_SBX, "sympozium.ai/agent-run", NULL },
		{ "configmaps-off", R_CM, "app=sym", "inf7" },
	};
	const bool off[] = { false, true, true };
	struct inf_conf conf = { .on_synced = on_synced, .seed = 7 };
	struct fx f;

	(void)state;
	make_ns("inf7");
	make_obj(&R_CM, "inf7", "a", "sym");
	memset(&f, 0, sizeof(f));
	conf.on_change = on_change;
	conf.arg = &f.seen;
	f.m = kapi_multi_new(A.c);
	f.in = inf_new_off(f.m, k, off, 3, &conf);
	assert_non_null(f.in);
	f.seen.in = f.in;
	assert_int_equal(inf_nsources(f.in), 3);
	assert_true(inf_synced(f.in, 1));
	assert_true(inf_fresh(f.in, 1));
	assert_int_equal(inf_age_ms(f.in, 1), 0);
	assert_false(inf_synced(f.in, 0));
	assert_true(pump(f.m, f.in, all_synced, &f));
	wait_cached(&f, 0, "inf7", "a", true);
	assert_null(cache_get(inf_cache(f.in, 2), "inf7", "a"));
	assert_int_equal(cache_count(inf_cache(f.in, 1)), 0);
	assert_int_equal(count_lists("sandboxes"), 0);
	assert_int_equal(
	        ksim_count_log(A.request_log, "watch", "sandboxes", NULL), 0);
	fx_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_converge),
		cmocka_unit_test(test_close_watches),
		cmocka_unit_test(test_expired_relist),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_fresh),
		cmocka_unit_test(test_bad_kind),
		cmocka_unit_test(test_off_kind),
	};

	return (cmocka_run_group_tests(tests, group_setup, ksim_api_teardown));
}
