/*
 * test_writer_kubesim.c: supervisor/writer.c against a spawned bin/kubesim:
 * create, update, update_status, patch and delete executed in order;
 * tolerated AlreadyExists / NotFound; stop at the first failure; a no-op
 * update is not sent (no PUT in the request log); a false fence sends
 * nothing; a failed event does not fail the result; results of one key run
 * in submit order; the supervisor's own Events (wr_event()) go through the
 * writer's correlator.  Every wait is bounded (WAIT_MS).
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
#include "ipc/ipc.h"
#include "supervisor/writer.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 15000
#define TOKEN   "wr-test-token"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CM = { "", "v1", "configmaps", true };

static struct ksim_api A;

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

static const struct ipc_res I_CM = { "", "v1", "configmaps", true };
static const struct ipc_res I_POD = { "", "v1", "pods", true };
static const struct ipc_res I_EV = { "", "v1", "events", true };

struct fx {
	struct kapi_multi *m;
	struct wr *w;
	bool fence_ok;
	const char *cached_json; /* lookup answer for every object */
	int lookup_rc;
	int done;
	struct wr_report rep;
	char msg[256];
	uint64_t order[8];
};

static int
lookup(void *arg, const struct ipc_res *res, const char *ns, const char *name,
        const char **json)
{
	struct fx *f = arg;

	(void)res;
	(void)ns;
	(void)name;
	*json = f->cached_json;
	return (f->lookup_rc);
}

static bool
fence(void *arg)
{
	return (((struct fx *)arg)->fence_ok);
}

static void
on_done(void *arg, uint64_t token, const struct wr_report *rep)
{
	struct fx *f = arg;

	if (f->done < 8) {
		f->order[f->done] = token;
	}
	f->done++;
	f->rep = *rep;
	snprintf(f->msg, sizeof(f->msg), "%s", rep->message);
	f->rep.message = f->msg;
	f->rep.key = NULL;
}

static void
fx_start(struct fx *f)
{
	struct wr_conf c = { lookup, fence, on_done, f, 0 };

	memset(f, 0, sizeof(*f));
	f->fence_ok = true;
	f->lookup_rc = -1;
	f->m = kapi_multi_new(A.c);
	f->w = wr_new(f->m, &c);
}

static void
fx_stop(struct fx *f)
{
	wr_free(f->w);
	kapi_multi_free(f->m);
}

/* Submits the writes (taken) as one result of key. */
static void
submit_as(struct fx *f, const char *key, json_object *writes, uint64_t token)
{
	json_object *res = ipc_result_new(key, 1, IPC_V_DONE, 0, NULL);
	struct ipc_result r;
	struct ipc_write *ops;
	struct ipc_msg msg;
	struct buf b = BUF_INIT;
	char err[128];

	for (size_t i = 0; i < json_object_array_length(writes); i++) {
		ipc_result_add_write(res,
		        json_object_get(json_object_array_get_idx(writes, i)));
	}
	json_object_put(writes);
	assert_int_equal(ipc_encode(IPC_RESULT, 1, res, &b), 0);
	assert_int_equal(
	        ipc_decode(b.data, b.len, 0, &msg, err, sizeof(err)), 0);
	assert_int_equal(ipc_result_decode(&msg, &r, &ops), 0);
	struct wr_batch wb = { r.key, ops, r.nwrites, r.writes, NULL };
	assert_int_equal(wr_submit(f->w, &wb, token), 0);
	free(ops);
	ipc_msg_fini(&msg);
	json_object_put(res);
	buf_fini(&b);
}

/* Submits the writes (taken) as one result. */
static void
submit(struct fx *f, json_object *writes, uint64_t token)
{
	submit_as(f, "ns/key", writes, token);
}

/* Submits the writes (taken) as one result and runs until n results are
 * done. */
static void
run(struct fx *f, json_object *writes, uint64_t token, int n)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	submit(f, writes, token);
	while (f->done < n && timefmt_now_ms_mono() < end) {
		wr_run(f->w);
		if (f->done >= n) {
			break;
		}
		kapi_multi_poll(f->m, NULL, 0, wr_has_ready(f->w) ? 0 : 50);
		kapi_multi_perform(f->m);
	}
	assert_true(f->done >= n);
}

static json_object *
cm(const char *ns, const char *name, const char *val)
{
	json_object *o = json_object_new_object();

	jx_setv(o, json_object_new_string("v1"), "apiVersion", NULL);
	jx_setv(o, json_object_new_string("ConfigMap"), "kind", NULL);
	jx_setv(o, json_object_new_string(name), "metadata", "name", NULL);
	jx_setv(o, json_object_new_string(ns), "metadata", "namespace", NULL);
	jx_setv(o, json_object_new_string(val), "data", "k", NULL);
	return (o);
}

static json_object *
W(enum ipc_op op, const struct ipc_res *r, const char *ns, const char *name,
        json_object *obj, unsigned tol)
{
	json_object *w = ipc_write_new(op, r, ns, name, obj);

	if (tol != 0) {
		ipc_write_set_tolerate(w, tol);
	}
	return (w);
}

static const char *
data_k(const char *ns, const char *name)
{
	static char v[64];
	json_object *o = NULL;
	struct kapi_err e = KAPI_ERR_INIT;

	v[0] = '\0';
	if (kapi_get(A.c, &R_CM, ns, name, &o, &e) == KAPI_OK) {
		snprintf(v, sizeof(v), "%s", jx_get_str(o, "data.k"));
	} else {
		snprintf(v, sizeof(v), "<%s>", kapi_rc_name(e.rc));
	}
	json_object_put(o);
	kapi_err_fini(&e);
	return (v);
}

/* Request log lines of this method whose path contains frag. */
static int
count_method(const char *method, const char *frag)
{
	int n = ksim_count_log(A.request_log, method, frag, NULL);

	assert_true(n >= 0);
	return (n);
}

static void
test_ops(void **state)
{
	struct fx f;
	json_object *ws = json_object_new_array(), *pod;

	(void)state;
	make_ns("wr1");
	make_obj(&R_CM, "wr1", "upd", NULL);
	make_obj(&R_CM, "wr1", "pat", NULL);
	make_obj(&R_CM, "wr1", "del", NULL);
	pod = testutil_json(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	        "\"metadata\":{\"name\":\"p\",\"namespace\":\"wr1\"},"
	        "\"spec\":{\"containers\":[{\"name\":\"c\","
	        "\"image\":\"busybox\"}]}}",
	        0);
	fx_start(&f);
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr1", NULL, cm("wr1", "new", "1"),
	                0));
	json_object_array_add(ws,
	        W(IPC_OP_UPDATE, &I_CM, "wr1", "upd", cm("wr1", "upd", "2"),
	                0));
	json_object_array_add(ws,
	        ipc_write_patch_new(&I_CM, "wr1", "pat",
	                testutil_json("{\"data\":{\"k\":\"3\"}}", 0),
	                IPC_PATCH_MERGE));
	json_object_array_add(
	        ws, W(IPC_OP_DELETE, &I_CM, "wr1", "del", NULL, 0));
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_POD, "wr1", NULL, json_object_get(pod),
	                0));
	jx_setv(pod, testutil_json("{\"phase\":\"Running\"}", 0), "status",
	        NULL);
	json_object_array_add(
	        ws, W(IPC_OP_UPDATE_STATUS, &I_POD, "wr1", "p", pod, 0));
	json_object_array_add(ws,
	        W(IPC_OP_APPLY, &I_CM, "wr1", "app", cm("wr1", "app", "4"),
	                0));
	run(&f, ws, 7, 1);
	assert_int_equal(f.order[0], 7);
	assert_int_equal(f.rep.outcome, WR_OK);
	assert_int_equal(f.rep.sent, 7);
	assert_int_equal(f.rep.skipped, 0);
	assert_string_equal(data_k("wr1", "new"), "1");
	assert_string_equal(data_k("wr1", "upd"), "2");
	assert_string_equal(data_k("wr1", "pat"), "3");
	assert_string_equal(data_k("wr1", "del"), "<NotFound>");
	assert_string_equal(data_k("wr1", "app"), "4");
	{
		json_object *o = NULL;
		struct kapi_err e = KAPI_ERR_INIT;

		assert_int_equal(
		        kapi_get(A.c, &kapi_res_pods, "wr1", "p", &o, &e),
		        KAPI_OK);
		assert_string_equal(jx_get_str(o, "status.phase"), "Running");
		json_object_put(o);
		kapi_err_fini(&e);
	}
	fx_stop(&f);
}

static void
test_tolerate_and_stop(void **state)
{
	struct fx f;
	json_object *ws;

	(void)state;
	make_ns("wr2");
	make_obj(&R_CM, "wr2", "exists", NULL);
	fx_start(&f);
	ws = json_object_new_array();
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr2", NULL, cm("wr2", "exists", "x"),
	                IPC_TOL_ALREADY_EXISTS));
	json_object_array_add(ws,
	        W(IPC_OP_DELETE, &I_CM, "wr2", "absent", NULL,
	                IPC_TOL_NOT_FOUND));
	run(&f, ws, 1, 1);
	assert_int_equal(f.rep.outcome, WR_OK);
	assert_int_equal(f.rep.tolerated, 2);
	assert_int_equal(f.rep.sent, 2);

	ws = json_object_new_array();
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr2", NULL, cm("wr2", "exists", "x"),
	                0));
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr2", NULL, cm("wr2", "after", "y"),
	                0));
	run(&f, ws, 2, 2);
	assert_int_equal(f.rep.outcome, WR_FAILED);
	assert_int_equal(f.rep.rc, KAPI_EEXISTS);
	assert_int_equal(f.rep.failed, 0);
	assert_int_equal(f.rep.sent, 1);
	assert_true(f.msg[0] != '\0');
	assert_string_equal(data_k("wr2", "after"), "<NotFound>");
	fx_stop(&f);
}

static void
test_noop_and_fence(void **state)
{
	struct fx f;
	json_object *ws, *cur = NULL;
	struct kapi_err e = KAPI_ERR_INIT;
	int puts, all;

	(void)state;
	make_ns("wr3");
	make_obj(&R_CM, "wr3", "same", NULL);
	assert_int_equal(
	        kapi_get(A.c, &R_CM, "wr3", "same", &cur, &e), KAPI_OK);
	fx_start(&f);
	f.lookup_rc = 1;
	f.cached_json = json_object_to_json_string(cur);
	ws = json_object_new_array();
	json_object_array_add(ws,
	        W(IPC_OP_UPDATE, &I_CM, "wr3", "same", json_object_get(cur),
	                0));
	puts = count_method("PUT", "/namespaces/wr3/");
	run(&f, ws, 1, 1);
	assert_int_equal(f.rep.outcome, WR_OK);
	assert_int_equal(f.rep.skipped, 1);
	assert_int_equal(f.rep.sent, 0);
	assert_int_equal(count_method("PUT", "/namespaces/wr3/"), puts);

	f.lookup_rc = -1;
	f.fence_ok = false;
	all = count_method("POST", "/namespaces/wr3/")
	        + count_method("DELETE", "/namespaces/wr3/");
	ws = json_object_new_array();
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr3", NULL, cm("wr3", "fenced", "1"),
	                0));
	json_object_array_add(
	        ws, W(IPC_OP_DELETE, &I_CM, "wr3", "same", NULL, 0));
	run(&f, ws, 2, 2);
	assert_int_equal(f.rep.outcome, WR_FENCED);
	assert_int_equal(f.rep.sent, 0);
	assert_int_equal(count_method("POST", "/namespaces/wr3/")
	                + count_method("DELETE", "/namespaces/wr3/"),
	        all);
	assert_string_equal(data_k("wr3", "fenced"), "<NotFound>");
	json_object_put(cur);
	kapi_err_fini(&e);
	fx_stop(&f);
}

/* Leadership lost between submitting a write and running the transfers
 * (a supervisor stopped right after wr_run, resumed after its renew
 * deadline): wr_fence_inflight() cancels the request before libcurl sends
 * it, and the job ends WR_FENCED. */
static void
test_fence_inflight(void **state)
{
	struct fx f;
	json_object *ws;
	int posts;
	int64_t end;

	(void)state;
	make_ns("wr5");
	fx_start(&f);
	posts = count_method("POST", "/namespaces/wr5/");
	ws = json_object_new_array();
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr5", NULL, cm("wr5", "late", "1"),
	                0));
	submit(&f, ws, 7);
	wr_run(f.w); /* the request is submitted, not yet sent */
	assert_int_equal(f.done, 0);
	assert_int_equal(wr_fence_inflight(f.w), 1);
	assert_int_equal(f.done, 1);
	assert_int_equal(f.rep.outcome, WR_FENCED);
	assert_int_equal(wr_pending(f.w), 0);
	assert_int_equal(wr_fence_inflight(f.w), 0);
	end = timefmt_now_ms_mono() + 300;
	while (timefmt_now_ms_mono() < end) {
		kapi_multi_poll(f.m, NULL, 0, 50);
		kapi_multi_perform(f.m);
	}
	assert_int_equal(count_method("POST", "/namespaces/wr5/"), posts);
	assert_string_equal(data_k("wr5", "late"), "<NotFound>");
	fx_stop(&f);
}

static void
test_event_and_order(void **state)
{
	struct fx f;
	json_object *ws, *ev;

	(void)state;
	make_ns("wr4");
	fx_start(&f);
	ev = testutil_json("{\"apiVersion\":\"v1\",\"kind\":\"Event\","
	                   "\"metadata\":{\"name\":\"e1\",\"namespace\":"
	                   "\"no-such-ns\"},\"involvedObject\":{\"kind\":"
	                   "\"ConfigMap\",\"name\":\"x\"},\"reason\":\"R\","
	                   "\"message\":\"m\",\"type\":\"Normal\"}",
	        0);
	ws = json_object_new_array();
	json_object_array_add(
	        ws, W(IPC_OP_EVENT, &I_EV, "no-such-ns", NULL, ev, 0));
	json_object_array_add(ws,
	        W(IPC_OP_CREATE, &I_CM, "wr4", NULL, cm("wr4", "o", "1"), 0));
	/* Same key, submitted before the first finished: runs after it. */
	{
		json_object *ws2 = json_object_new_array();

		json_object_array_add(ws2,
		        W(IPC_OP_UPDATE, &I_CM, "wr4", "o",
		                cm("wr4", "o", "2"), 0));
		json_object *res
		        = ipc_result_new("ns/key", 1, IPC_V_DONE, 0, NULL);
		struct ipc_result r;

		ipc_result_add_write(res,
		        json_object_get(json_object_array_get_idx(ws2, 0)));
		json_object_put(ws2);
		memset(&r, 0, sizeof(r));
		r.key = "ns/key";
		r.writes = json_object_object_get(res, "writes");
		r.nwrites = 1;
		struct ipc_write op;
		assert_int_equal(ipc_result_write(&r, 0, &op), 0);
		struct wr_batch wb = { r.key, &op, 1, r.writes, NULL };
		run(&f, ws, 1, 0);
		assert_int_equal(wr_submit(f.w, &wb, 2), 0);
		json_object_put(res);
	}
	run(&f, json_object_new_array(), 3, 3);
	assert_int_equal(f.order[0], 1);
	assert_int_equal(f.order[1], 2);
	assert_int_equal(f.order[2], 3);
	assert_string_equal(data_k("wr4", "o"), "2");
	fx_stop(&f);
}

/* Runs until nothing is pending (bounded). */
static void
drain(struct fx *f)
{
	int64_t end = timefmt_now_ms_mono() + WAIT_MS;

	while (wr_run(f->w) > 0 && timefmt_now_ms_mono() < end) {
		kapi_multi_poll(f->m, NULL, 0, wr_has_ready(f->w) ? 0 : 50);
		kapi_multi_perform(f->m);
	}
	assert_int_equal(wr_pending(f->w), 0);
}

/* The supervisor's own Events are a call: wr_event() goes through the
 * writer's correlator (stamped; the same Event again is a count PATCH),
 * without on_done, on its own ordering key. */
static void
test_own_events(void **state)
{
	static const struct kapi_res R_EV = { "", "v1", "events", true };
	struct fx f;
	struct wr_stats st;
	json_object *obj, *list = NULL;
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	make_ns("wr6");
	fx_start(&f);
	wr_set_correlator(f.w, NULL);
	obj = cm("wr6", "o", "1");
	wr_event(f.w, obj, "Warning", "Boom", "it broke");
	wr_event(f.w, obj, "Warning", "Boom", "it broke");
	json_object_put(obj);
	drain(&f);
	assert_int_equal(f.done, 0);
	wr_stats(f.w, &st);
	assert_int_equal(st.results, 2);
	assert_int_equal(st.sent, 2);
	assert_int_equal(st.event_errors, 0);
	assert_int_equal(count_method("POST", "/namespaces/wr6/events"), 1);
	assert_int_equal(count_method("PATCH", "/namespaces/wr6/events/"), 1);
	assert_int_equal(
	        kapi_list(A.c, &R_EV, "wr6", NULL, &list, &e), KAPI_OK);
	json_object *items = json_object_object_get(list, "items");
	assert_int_equal(json_object_array_length(items), 1);
	json_object *ev = json_object_array_get_idx(items, 0);
	assert_string_equal(jx_get_str(ev, "reason"), "Boom");
	assert_string_equal(jx_get_str(ev, "type"), "Warning");
	assert_string_equal(jx_get_str(ev, "involvedObject.name"), "o");
	assert_string_equal(jx_get_str(ev, "source.component"), EV_COMPONENT);
	assert_int_equal(json_object_get_int(jx_get(ev, "count")), 2);
	json_object_put(list);
	kapi_err_fini(&e);
	fx_stop(&f);
}

/* --max-concurrent-writes: results of different keys run side by side,
 * never more than max_inflight requests at once, and every one of them
 * completes (a request waiting for the bound is sent on an answer). */
static void
test_max_inflight(void **state)
{
	struct wr_conf c = { lookup, fence, on_done, NULL, 3 };
	struct fx f;
	size_t most = 0;
	int64_t end;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.fence_ok = true;
	f.lookup_rc = -1;
	c.arg = &f;
	f.m = kapi_multi_new(A.c);
	f.w = wr_new(f.m, &c);
	make_ns("wr-cap");
	for (int i = 0; i < 24; i++) {
		char key[32], name[32];
		json_object *w = json_object_new_array();
		snprintf(key, sizeof(key), "wr-cap/k%d", i);
		snprintf(name, sizeof(name), "cap-%d", i);
		json_object_array_add(w,
		        W(IPC_OP_CREATE, &I_CM, "wr-cap", NULL,
		                cm("wr-cap", name, "v"), 0));
		submit_as(&f, key, w, (uint64_t)i + 1);
	}
	end = timefmt_now_ms_mono() + WAIT_MS;
	while (f.done < 24 && timefmt_now_ms_mono() < end) {
		wr_run(f.w);
		assert_true(wr_inflight(f.w) <= 3);
		most = wr_inflight(f.w) > most ? wr_inflight(f.w) : most;
		kapi_multi_poll(f.m, NULL, 0, wr_has_ready(f.w) ? 0 : 50);
		kapi_multi_perform(f.m);
	}
	assert_int_equal(f.done, 24);
	assert_int_equal(f.rep.outcome, WR_OK);
	assert_int_equal(most, 3);
	assert_int_equal(wr_pending(f.w), 0);
	assert_int_equal(wr_inflight(f.w), 0);
	assert_string_equal(data_k("wr-cap", "cap-0"), "v");
	assert_string_equal(data_k("wr-cap", "cap-23"), "v");
	assert_int_equal(
	        count_method("POST", "/namespaces/wr-cap/configmaps"), 24);
	fx_stop(&f);
}

static int
group_setup(void **state)
{
	const char *args[]
	        = { "--tls", "--token", TOKEN, "--controllers", "none", NULL };

	*state = &A;
	return (ksim_api_start(&A, args, "test_writer_kubesim/0", WAIT_MS));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_tolerate_and_stop),
		cmocka_unit_test(test_noop_and_fence),
		cmocka_unit_test(test_fence_inflight),
		cmocka_unit_test(test_event_and_order),
		cmocka_unit_test(test_own_events),
		cmocka_unit_test(test_max_inflight),
	};

	return (cmocka_run_group_tests(tests, group_setup, ksim_api_teardown));
}
