/* test_ipc.c: the ipc codec: header, body shapes, builders and readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "ipc/ipc.h"
#include "tests/lib/testutil.h"

static const struct ipc_res pods = { "", "v1", "pods", true };
static const struct ipc_res agentruns
        = { "sympozium.ai", "v1alpha1", "agentruns", true };

/* A raw message with every header field chosen by the caller. */
static void
raw(struct buf *b, uint32_t magic, uint32_t version, uint32_t type,
        uint32_t blen, const char *body)
{
	uint8_t h[IPC_HDR_LEN];
	uint32_t f[] = { magic, version, type, 7, blen };
	int w[] = { 4, 2, 2, 4, 4 };
	size_t i, off = 0;
	int k;

	for (i = 0; i < 5; i++) {
		for (k = w[i] - 1; k >= 0; k--) {
			h[off + (size_t)k]
			        = (uint8_t)(f[i] >> (8 * (w[i] - 1 - k)));
		}
		off += (size_t)w[i];
	}
	buf_append(b, h, sizeof(h));
	buf_puts(b, body);
}

static void
raw_ok(struct buf *b, uint32_t type, const char *body)
{
	raw(b, IPC_MAGIC, IPC_VERSION, type, (uint32_t)strlen(body), body);
}

/* Decoding b must fail with an error containing want. */
static void
expect_err_buf(struct buf *b, size_t max_len, const char *want)
{
	struct ipc_msg m;
	char err[512] = "";

	if (ipc_decode(b->data, b->len, max_len, &m, err, sizeof(err)) == 0) {
		ipc_msg_fini(&m);
		fail_msg("decoded, expected error \"%s\"", want);
	}
	assert_null(m.body);
	if (strstr(err, want) == NULL) {
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
	}
}

static void
expect_err(uint32_t type, const char *body, const char *want)
{
	struct buf b = BUF_INIT;

	raw_ok(&b, type, body);
	expect_err_buf(&b, 0, want);
	buf_fini(&b);
}

static void
expect_ok(uint32_t type, const char *body)
{
	struct buf b = BUF_INIT;
	struct ipc_msg m;
	char err[512] = "";

	raw_ok(&b, type, body);
	if (ipc_decode(b.data, b.len, 0, &m, err, sizeof(err)) != 0) {
		fail_msg("%s %s: %s", ipc_type_name(type), body, err);
	}
	assert_int_equal(m.type, type);
	assert_int_equal(m.reqid, 7);
	ipc_msg_fini(&m);
	buf_fini(&b);
}

/* Encodes body (consumed) and decodes it into *m. */
static void
roundtrip(
        enum ipc_type t, uint32_t reqid, json_object *body, struct ipc_msg *m)
{
	struct buf b = BUF_INIT;
	char err[512] = "";

	assert_int_equal(ipc_encode(t, reqid, body, &b), 0);
	json_object_put(body);
	if (ipc_decode(b.data, b.len, 0, m, err, sizeof(err)) != 0) {
		fail_msg("%s: %s", ipc_type_name(t), err);
	}
	assert_int_equal(m->type, t);
	assert_int_equal(m->reqid, reqid);
	buf_fini(&b);
}

static void
test_header_layout(void **state)
{
	struct buf b = BUF_INIT;
	json_object *o = ipc_heartbeat_new(5);
	const uint8_t *p;

	(void)state;
	assert_int_equal(ipc_encode(IPC_HEARTBEAT, 0x01020304, o, &b), 0);
	p = (const uint8_t *)b.data;
	assert_memory_equal(p, "SYMP", 4);
	assert_int_equal(p[4], 0);
	assert_int_equal(p[5], 1);
	assert_int_equal(p[6], 0);
	assert_int_equal(p[7], IPC_HEARTBEAT);
	assert_memory_equal(p + 8, "\x01\x02\x03\x04", 4);
	assert_int_equal(p[15], strlen("{\"seq\":5}"));
	assert_string_equal(b.data + IPC_HDR_LEN, "{\"seq\":5}");
	/* Appends; NULL body is {}; refuses non-objects and unknown types. */
	assert_int_equal(ipc_encode(IPC_QUIT, 1, NULL, &b), 0);
	assert_string_equal(b.data + b.len - 2, "{}");
	json_object_put(o);
	o = json_object_new_array();
	assert_int_equal(ipc_encode(IPC_QUIT, 1, o, &b), -1);
	assert_int_equal(ipc_encode((enum ipc_type)0, 1, NULL, &b), -1);
	assert_int_equal(ipc_encode((enum ipc_type)10, 1, NULL, &b), -1);
	json_object_put(o);
	buf_fini(&b);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(ipc_type_name(IPC_HELLO), "HELLO");
	assert_string_equal(ipc_type_name(IPC_VIEW_REPLY), "VIEW_REPLY");
	assert_string_equal(ipc_type_name(IPC_ERROR), "ERROR");
	assert_string_equal(ipc_type_name((enum ipc_type)0), "UNKNOWN");
	assert_string_equal(ipc_type_name((enum ipc_type)99), "UNKNOWN");
	assert_string_equal(
	        ipc_verdict_name(IPC_V_REQUEUE_AFTER), "requeue_after");
	assert_string_equal(
	        ipc_op_name(IPC_OP_UPDATE_STATUS), "update_status");
	assert_string_equal(
	        ipc_patch_type_name(IPC_PATCH_STRATEGIC), "strategic");
	assert_string_equal(ipc_op_name((enum ipc_op)42), "");
}

static void
test_rt_hello_ready(void **state)
{
	struct ipc_msg m;
	struct ipc_hello h;
	int64_t epoch;

	(void)state;
	roundtrip(IPC_HELLO, 1, ipc_hello_new("agentrun", 4242), &m);
	assert_int_equal(ipc_hello_read(&m, &h), 0);
	assert_string_equal(h.controller, "agentrun");
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.proto, 1);
	assert_int_equal(ipc_ready_read(&m, &epoch), -1);
	ipc_msg_fini(&m);

	roundtrip(IPC_READY, 2,
	        ipc_ready_new(
	                9, testutil_json("{\"epoch\":1,\"ns\":\"x\"}", 0)),
	        &m);
	assert_int_equal(ipc_ready_read(&m, &epoch), 0);
	assert_int_equal(epoch, 9);
	assert_string_equal(jx_get_str(m.body, "ns"), "x");
	assert_int_equal(ipc_hello_read(&m, &h), -1);
	ipc_msg_fini(&m);
	roundtrip(IPC_READY, 2, ipc_ready_new(0, NULL), &m);
	ipc_msg_fini(&m);
}

static void
test_rt_small(void **state)
{
	struct ipc_msg m;
	int64_t seq;

	(void)state;
	roundtrip(IPC_HEARTBEAT, 3, ipc_heartbeat_new(77), &m);
	assert_int_equal(ipc_heartbeat_read(&m, &seq), 0);
	assert_int_equal(seq, 77);
	assert_null(ipc_error_read(&m));
	ipc_msg_fini(&m);
	roundtrip(IPC_QUIT, 4, ipc_quit_new(), &m);
	assert_int_equal(json_object_object_length(m.body), 0);
	ipc_msg_fini(&m);
	roundtrip(IPC_ERROR, 5, ipc_error_new("bad \"thing\"\n"), &m);
	assert_string_equal(ipc_error_read(&m), "bad \"thing\"\n");
	ipc_msg_fini(&m);
	ipc_msg_fini(&m); /* twice is harmless */
	ipc_msg_fini(NULL);
}

/* "childrenStale": optional boolean, written only when true. */
static void
test_work_children_stale(void **state)
{
	struct ipc_work w
	        = { "ns1/run-a", 3, 0, 1, NULL, NULL, 0, true, NULL };
	struct ipc_msg m;
	struct ipc_work r;
	json_object *body;

	(void)state;
	roundtrip(IPC_WORK, 12, ipc_work_new(&w), &m);
	assert_int_equal(ipc_work_read(&m, &r), 0);
	assert_true(r.children_stale);
	ipc_msg_fini(&m);

	w.children_stale = false;
	body = ipc_work_new(&w);
	assert_null(jx_get(body, "childrenStale"));
	roundtrip(IPC_WORK, 13, body, &m);
	assert_int_equal(ipc_work_read(&m, &r), 0);
	assert_false(r.children_stale);
	ipc_msg_fini(&m);

	expect_ok(IPC_WORK,
	        "{\"key\":\"k\",\"epoch\":0,\"attempt\":0,"
	        "\"now\":0,\"deadlineMs\":0,\"childrenStale\":false}");
	expect_err(IPC_WORK,
	        "{\"key\":\"k\",\"epoch\":0,\"attempt\":0,"
	        "\"now\":0,\"deadlineMs\":0,\"childrenStale\":1}",
	        "\"childrenStale\" must be a boolean");
}

static void
test_rt_work(void **state)
{
	struct ipc_work w = { "ns1/run-a", 3, 2, 1700000000123, NULL, NULL,
		30000, false, "0b1c2d3e-0000-4000-8000-000000000001" };
	struct ipc_msg m;
	struct ipc_work r;

	(void)state;
	w.object = testutil_json("{\"metadata\":{\"name\":\"run-a\"}}", 0);
	w.children
	        = testutil_json("[{\"kind\":\"Job\"},{\"kind\":\"Pod\"}]", 0);
	roundtrip(IPC_WORK, 10, ipc_work_new(&w), &m);
	assert_int_equal(ipc_work_read(&m, &r), 0);
	assert_string_equal(r.key, "ns1/run-a");
	assert_int_equal(r.epoch, 3);
	assert_int_equal(r.attempt, 2);
	assert_int_equal(r.now_ms, 1700000000123);
	assert_int_equal(r.deadline_ms, 30000);
	assert_string_equal(
	        r.reconcile_id, "0b1c2d3e-0000-4000-8000-000000000001");
	assert_string_equal(jx_get_str(r.object, "metadata.name"), "run-a");
	assert_int_equal(json_object_array_length(r.children), 2);
	ipc_msg_fini(&m);

	/* Deleted object (null) and no children. */
	w.object = NULL;
	w.children = NULL;
	roundtrip(IPC_WORK, 11, ipc_work_new(&w), &m);
	assert_int_equal(ipc_work_read(&m, &r), 0);
	assert_null(r.object);
	assert_int_equal(json_object_array_length(r.children), 0);
	ipc_msg_fini(&m);
	/* Children absent on the wire: the reader still gives an array. */
	expect_ok(IPC_WORK,
	        "{\"key\":\"k\",\"epoch\":0,\"attempt\":0,"
	        "\"now\":0,\"deadlineMs\":0}");
}

static json_object *
sample_result(void)
{
	json_object *res, *w;

	res = ipc_result_new(
	        "ns1/run-a", 4, IPC_V_REQUEUE_AFTER, 1500, "waiting for job");
	w = ipc_write_new(IPC_OP_CREATE, &pods, "ns1", "p1",
	        testutil_json("{\"kind\":\"Pod\"}", 0));
	ipc_write_set_tolerate(w, IPC_TOL_ALREADY_EXISTS | IPC_TOL_CONFLICT);
	ipc_result_add_write(res, w);
	ipc_result_add_write(res,
	        ipc_write_patch_new(&agentruns, "ns1", "run-a",
	                testutil_json(
	                        "{\"status\":{\"phase\":\"Running\"}}", 0),
	                IPC_PATCH_MERGE));
	w = ipc_write_new(IPC_OP_DELETE, &pods, "ns1", "p0", NULL);
	ipc_write_set_propagation(w, "Background");
	ipc_write_set_tolerate(w, IPC_TOL_NOT_FOUND);
	ipc_result_add_write(res, w);
	ipc_result_add_write(res,
	        ipc_write_new(IPC_OP_EVENT,
	                &(struct ipc_res) { "", "v1", "events", true }, "ns1",
	                NULL, testutil_json("{\"reason\":\"Started\"}", 0)));
	return (res);
}

static void
test_rt_result(void **state)
{
	struct ipc_msg m;
	struct ipc_result r;
	struct ipc_write w;

	(void)state;
	roundtrip(IPC_RESULT, 12, sample_result(), &m);
	assert_int_equal(ipc_result_read(&m, &r), 0);
	assert_string_equal(r.key, "ns1/run-a");
	assert_int_equal(r.epoch, 4);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after_ms, 1500);
	assert_string_equal(r.message, "waiting for job");
	assert_int_equal(r.nwrites, 4);

	assert_int_equal(ipc_result_write(&r, 0, &w), 0);
	assert_int_equal(w.op, IPC_OP_CREATE);
	assert_string_equal(w.res.group, "");
	assert_string_equal(w.res.plural, "pods");
	assert_true(w.res.namespaced);
	assert_string_equal(w.namespace, "ns1");
	assert_string_equal(w.name, "p1");
	assert_string_equal(jx_get_str(w.object, "kind"), "Pod");
	assert_int_equal(
	        w.tolerate, IPC_TOL_ALREADY_EXISTS | IPC_TOL_CONFLICT);

	assert_int_equal(ipc_result_write(&r, 1, &w), 0);
	assert_int_equal(w.op, IPC_OP_PATCH);
	assert_string_equal(w.res.group, "sympozium.ai");
	assert_int_equal(w.patch_type, IPC_PATCH_MERGE);
	assert_string_equal(jx_get_str(w.patch, "status.phase"), "Running");
	assert_null(w.object);

	assert_int_equal(ipc_result_write(&r, 2, &w), 0);
	assert_int_equal(w.op, IPC_OP_DELETE);
	assert_string_equal(w.propagation, "Background");
	assert_int_equal(w.tolerate, IPC_TOL_NOT_FOUND);

	assert_int_equal(ipc_result_write(&r, 3, &w), 0);
	assert_int_equal(w.op, IPC_OP_EVENT);
	assert_string_equal(w.name, "");
	assert_int_equal(ipc_result_write(&r, 4, &w), -1);
	ipc_msg_fini(&m);

	/* Simple verdict, no writes key on the wire. */
	expect_ok(IPC_RESULT,
	        "{\"key\":\"k\",\"epoch\":1,\"verdict\":"
	        "{\"kind\":\"done\"}}");
	roundtrip(IPC_RESULT, 1,
	        ipc_result_new("k", 1, IPC_V_TERMINAL, 0, NULL), &m);
	assert_int_equal(ipc_result_read(&m, &r), 0);
	assert_int_equal(r.verdict, IPC_V_TERMINAL);
	assert_string_equal(r.message, "");
	assert_int_equal(r.nwrites, 0);
	ipc_msg_fini(&m);
}

/* ipc_result_decode(): the RESULT and its typed writes in one pass, the
 * same as ipc_result_read() + ipc_result_write() each; a bad write fails
 * the whole RESULT and leaves no array. */
static void
test_result_decode(void **state)
{
	struct ipc_msg m;
	struct ipc_result r, r2;
	struct ipc_write *ops = NULL, w;

	(void)state;
	roundtrip(IPC_RESULT, 12, sample_result(), &m);
	assert_int_equal(ipc_result_decode(&m, &r, &ops), 0);
	assert_int_equal(ipc_result_read(&m, &r2), 0);
	assert_string_equal(r.key, r2.key);
	assert_int_equal(r.nwrites, 4);
	assert_ptr_equal(r.writes, r2.writes);
	assert_non_null(ops);
	for (size_t i = 0; i < r.nwrites; i++) {
		assert_int_equal(ipc_result_write(&r, i, &w), 0);
		assert_memory_equal(&ops[i], &w, sizeof(w));
	}
	assert_string_equal(
	        jx_get_str(ops[1].patch, "status.phase"), "Running");
	free(ops);
	ipc_msg_fini(&m);

	roundtrip(IPC_RESULT, 1, ipc_result_new("k", 1, IPC_V_DONE, 0, NULL),
	        &m);
	ops = (struct ipc_write *)&w;
	assert_int_equal(ipc_result_decode(&m, &r, &ops), 0);
	assert_int_equal(r.nwrites, 0);
	assert_null(ops);
	ipc_msg_fini(&m);

	/* a write without its object: the whole RESULT is refused */
	json_object *bad = ipc_result_new("k", 1, IPC_V_DONE, 0, NULL);
	ipc_result_add_write(bad,
	        ipc_write_new(IPC_OP_CREATE,
	                &(struct ipc_res) { "", "v1", "pods", true }, "ns",
	                "p", testutil_json("{}", 0)));
	ipc_result_add_write(bad,
	        ipc_write_new(IPC_OP_UPDATE,
	                &(struct ipc_res) { "", "v1", "pods", true }, "ns",
	                "p", NULL));
	m = (struct ipc_msg) { IPC_RESULT, 0, bad };
	ops = (struct ipc_write *)&w;
	assert_int_equal(ipc_result_decode(&m, &r, &ops), -1);
	assert_null(ops);
	assert_null(r.key);
	json_object_put(bad);
}

static void
test_field_valid(void **state)
{
	char longp[IPC_FIELD_MAX + 2];

	(void)state;
	assert_true(ipc_field_valid("metadata.name"));
	assert_true(ipc_field_valid("status"));
	assert_true(ipc_field_valid("a_b.c-d.E9"));
	assert_true(ipc_field_valid("metadata.labels.sympozium.ai/instance"));
	assert_true(ipc_field_valid("metadata.annotations.a.b/c-d_e"));
	assert_true(ipc_field_valid("metadata.labels"));
	assert_false(ipc_field_valid("metadata.labels."));
	assert_false(ipc_field_valid("metadata.labels.a b"));
	assert_false(ipc_field_valid("metadata.labels.a\"b"));
	assert_false(ipc_field_valid(""));
	assert_false(ipc_field_valid(".a"));
	assert_false(ipc_field_valid("a."));
	assert_false(ipc_field_valid("a..b"));
	assert_false(ipc_field_valid("a/b"));
	assert_false(ipc_field_valid("spec.labels.a/b"));
	assert_false(ipc_field_valid("a b"));
	assert_false(ipc_field_valid("a[0]"));
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	assert_false(ipc_field_valid(longp));
	longp[IPC_FIELD_MAX] = '\0';
	assert_true(ipc_field_valid(longp));
}

static void
test_project(void **state)
{
	json_object *o = testutil_json(
	        "{\"kind\":\"AgentRun\",\"metadata\":{\"name\":\"r1\","
	        "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"labels\":{\"sympozium.ai/instance\":\"i\"},"
	        "\"annotations\":{\"big\":\"x\"}},"
	        "\"spec\":{\"task\":\"long\"},"
	        "\"status\":{\"phase\":\"Succeeded\",\"result\":\"r\"}}",
	        0);
	const char *f[]
	        = { "metadata.name", "metadata.labels.sympozium.ai/instance",
		          "status.phase", "metadata.deletionTimestamp",
		          "spec.task.x", "a/b", "metadata.labels" };
	json_object *p = ipc_project(o, f, 7);

	(void)state;
	assert_string_equal(
	        json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN),
	        "[\"r1\",\"i\",\"Succeeded\",null,null,null,"
	        "{\"sympozium.ai\\/instance\":\"i\"}]");
	json_object_put(p);
	/* copies: the source may go */
	p = ipc_project(o, f + 6, 1);
	json_object_put(o);
	assert_string_equal(
	        json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN),
	        "[{\"sympozium.ai\\/instance\":\"i\"}]");
	json_object_put(p);
	o = testutil_json("{\"status\":\"flat\"}", 0);
	p = ipc_project(o, f + 2, 1);
	assert_string_equal(
	        json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN),
	        "[null]");
	json_object_put(p);
	json_object_put(o);
}

static void
test_rt_view(void **state)
{
	struct ipc_view_req q = { 0 }, rq;
	struct ipc_view_reply p = { 0 }, rp;
	struct ipc_msg m;

	(void)state;
	q.id = 99;
	q.what = IPC_VIEW_LIST;
	q.res = pods;
	q.has_res = true;
	q.namespace = "ns1";
	q.label_selector = "app=x,tier in (a,b)";
	q.tail_lines = -1;
	roundtrip(IPC_VIEW_REQ, 99, ipc_view_req_new(&q), &m);
	assert_int_equal(ipc_view_req_read(&m, &rq), 0);
	assert_int_equal(rq.id, 99);
	assert_int_equal(rq.what, IPC_VIEW_LIST);
	assert_true(rq.has_res);
	assert_string_equal(rq.res.plural, "pods");
	assert_string_equal(rq.namespace, "ns1");
	assert_null(rq.name);
	assert_string_equal(rq.label_selector, "app=x,tier in (a,b)");
	assert_int_equal(rq.tail_lines, -1);
	assert_int_equal(rq.nfields, 0);
	ipc_msg_fini(&m);

	q.fields[0] = "metadata.name";
	q.fields[1] = "status.phase";
	q.nfields = 2;
	roundtrip(IPC_VIEW_REQ, 99, ipc_view_req_new(&q), &m);
	assert_int_equal(ipc_view_req_read(&m, &rq), 0);
	assert_int_equal(rq.nfields, 2);
	assert_string_equal(rq.fields[0], "metadata.name");
	assert_string_equal(rq.fields[1], "status.phase");
	ipc_msg_fini(&m);
	q.nfields = 0;

	memset(&q, 0, sizeof(q));
	q.id = 5;
	q.what = IPC_VIEW_POD_LOG;
	q.namespace = "ns1";
	q.name = "pod-1";
	q.tail_lines = 100;
	q.container = "agent";
	roundtrip(IPC_VIEW_REQ, 5, ipc_view_req_new(&q), &m);
	assert_int_equal(ipc_view_req_read(&m, &rq), 0);
	assert_false(rq.has_res);
	assert_int_equal(rq.tail_lines, 100);
	assert_string_equal(rq.container, "agent");
	ipc_msg_fini(&m);

	p.id = 99;
	p.status = IPC_VS_OK;
	p.items = testutil_json("[{\"a\":1},{\"b\":2}]", 0);
	p.text = "line1\nline2\n";
	roundtrip(IPC_VIEW_REPLY, 99, ipc_view_reply_new(&p), &m);
	assert_int_equal(ipc_view_reply_read(&m, &rp), 0);
	assert_int_equal(rp.id, 99);
	assert_int_equal(rp.status, IPC_VS_OK);
	assert_int_equal(json_object_array_length(rp.items), 2);
	assert_null(rp.object);
	assert_string_equal(rp.text, "line1\nline2\n");
	assert_null(rp.message);
	ipc_msg_fini(&m);

	memset(&p, 0, sizeof(p));
	p.status = IPC_VS_NOT_FOUND;
	p.message = "pods \"x\" not found";
	roundtrip(IPC_VIEW_REPLY, 1, ipc_view_reply_new(&p), &m);
	assert_int_equal(ipc_view_reply_read(&m, &rp), 0);
	assert_int_equal(rp.status, IPC_VS_NOT_FOUND);
	assert_string_equal(rp.message, "pods \"x\" not found");
	assert_int_equal(ipc_work_read(&m, &(struct ipc_work) { 0 }), -1);
	ipc_msg_fini(&m);
}

static void
test_bad_header(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	raw(&b, 0x53594D51, 1, IPC_QUIT, 2, "{}");
	expect_err_buf(&b, 0, "bad magic 0x53594d51");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 2, IPC_QUIT, 2, "{}");
	expect_err_buf(&b, 0, "unsupported protocol version 2");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, 0, 2, "{}");
	expect_err_buf(&b, 0, "unknown message type 0");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, 10, 2, "{}");
	expect_err_buf(&b, 0, "unknown message type 10");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, IPC_QUIT, 2, "{}");
	b.len = 9;
	expect_err_buf(&b, 0, "truncated header (9 of 16 bytes)");
	b.len = 0;
	expect_err_buf(&b, 0, "truncated header (0 of 16 bytes)");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, IPC_HEARTBEAT, 9, "{\"seq\":");
	expect_err_buf(&b, 0, "truncated body (7 body bytes, header says 9)");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, IPC_QUIT, 2, "{}  ");
	expect_err_buf(&b, 0, "length mismatch (4 body bytes, header says 2)");
	buf_fini(&b);
}

static void
test_too_large(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	raw_ok(&b, IPC_ERROR, "{\"message\":\"0123456789\"}");
	expect_err_buf(&b, 20, "message too large (40 > 20 bytes)");
	/* The header's claim is checked before the bytes arrive in full. */
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, IPC_QUIT, 0xfffffff0u, "{}");
	expect_err_buf(&b, 0, "message too large (body 4294967280 bytes");
	buf_reset(&b);
	raw(&b, IPC_MAGIC, 1, IPC_QUIT, 200, "{}");
	expect_err_buf(
	        &b, 100, "message too large (body 200 bytes, limit 100)");
	buf_fini(&b);
}

static void
test_bad_body(void **state)
{
	struct buf b = BUF_INIT;
	int i;

	(void)state;
	expect_err(IPC_QUIT, "{", "QUIT: body is not valid JSON");
	expect_err(IPC_QUIT, "", "body is not valid JSON");
	expect_err(IPC_QUIT, "{} {}", "trailing data");
	expect_err(IPC_QUIT, "[]", "QUIT: body is not a JSON object");
	expect_err(IPC_HEARTBEAT, "7", "body is not a JSON object");
	expect_err(IPC_QUIT, "\"x\"", "body is not a JSON object");
	expect_err(IPC_QUIT, "null", "body is not valid JSON");
	for (i = 0; i < 70; i++) {
		buf_puts(&b, "{\"a\":");
	}
	buf_puts(&b, "1");
	for (i = 0; i < 70; i++) {
		buf_putc(&b, '}');
	}
	expect_err(IPC_QUIT, b.data, "nesting too deep");
	buf_fini(&b);
}

struct bad {
	enum ipc_type type;
	const char *body;
	const char *want;
};

#define WORK_TAIL ",\"epoch\":1,\"attempt\":0,\"now\":5,\"deadlineMs\":10}"
#define RES_HEAD  "{\"key\":\"k\",\"epoch\":1,\"verdict\":{\"kind\":\"done\"},"
#define R_PODS                                                                \
	"\"resource\":{\"group\":\"\",\"version\":\"v1\",\"plural\":"         \
	"\"pods\",\"namespaced\":true}"

static const struct bad bad_shapes[] = {
	/* HELLO */
	{ IPC_HELLO, "{\"pid\":1,\"proto\":1}",
	        "HELLO: \"controller\" is missing" },
	{ IPC_HELLO, "{\"controller\":7,\"pid\":1,\"proto\":1}",
	        "HELLO: \"controller\" must be a string" },
	{ IPC_HELLO, "{\"controller\":\"\",\"pid\":1,\"proto\":1}",
	        "\"controller\" is empty" },
	{ IPC_HELLO, "{\"controller\":\"a\",\"proto\":1}",
	        "\"pid\" is missing" },
	{ IPC_HELLO, "{\"controller\":\"a\",\"pid\":\"1\",\"proto\":1}",
	        "\"pid\" must be an integer" },
	{ IPC_HELLO, "{\"controller\":\"a\",\"pid\":1.5,\"proto\":1}",
	        "\"pid\" must be an integer" },
	{ IPC_HELLO, "{\"controller\":\"a\",\"pid\":0,\"proto\":1}",
	        "\"pid\" must be >= 1" },
	{ IPC_HELLO, "{\"controller\":\"a\",\"pid\":1}",
	        "\"proto\" is missing" },
	{ IPC_HELLO, "{\"controller\":\"a\",\"pid\":1,\"proto\":2}",
	        "HELLO: \"proto\" is 2, want 1" },
	{ IPC_HELLO, "{\"controller\":\"a\\u0000b\",\"pid\":1,\"proto\":1}",
	        "\"controller\" contains a NUL byte" },
	/* READY, HEARTBEAT, ERROR */
	{ IPC_READY, "{}", "READY: \"epoch\" is missing" },
	{ IPC_READY, "{\"epoch\":-1}", "READY: \"epoch\" must be >= 0" },
	{ IPC_READY, "{\"epoch\":true}", "\"epoch\" must be an integer" },
	{ IPC_HEARTBEAT, "{}", "HEARTBEAT: \"seq\" is missing" },
	{ IPC_HEARTBEAT, "{\"seq\":null}", "HEARTBEAT: \"seq\" is missing" },
	{ IPC_HEARTBEAT, "{\"seq\":18446744073709551615}",
	        "\"seq\" must be an integer" },
	{ IPC_ERROR, "{}", "ERROR: \"message\" is missing" },
	{ IPC_ERROR, "{\"message\":[]}",
	        "ERROR: \"message\" must be a string" },
	/* WORK */
	{ IPC_WORK, "{\"epoch\":1,\"attempt\":0,\"now\":5,\"deadlineMs\":10}",
	        "WORK: \"key\" is missing" },
	{ IPC_WORK, "{\"key\":\"\"" WORK_TAIL, "WORK: \"key\" is empty" },
	{ IPC_WORK, "{\"key\":1" WORK_TAIL, "WORK: \"key\" must be a string" },
	{ IPC_WORK,
	        "{\"key\":\"k\",\"attempt\":0,\"now\":5,\"deadlineMs\":10}",
	        "WORK: \"epoch\" is missing" },
	{ IPC_WORK, "{\"key\":\"k\",\"epoch\":1,\"now\":5,\"deadlineMs\":10}",
	        "WORK: \"attempt\" is missing" },
	{ IPC_WORK,
	        "{\"key\":\"k\",\"epoch\":1,\"attempt\":0,\"deadlineMs\":1}",
	        "WORK: \"now\" is missing" },
	{ IPC_WORK, "{\"key\":\"k\",\"epoch\":1,\"attempt\":0,\"now\":5}",
	        "WORK: \"deadlineMs\" is missing" },
	{ IPC_WORK,
	        "{\"key\":\"k\",\"epoch\":1,\"attempt\":-2,\"now\":5,"
	        "\"deadlineMs\":1}",
	        "\"attempt\" must be >= 0" },
	{ IPC_WORK, "{\"key\":\"k\",\"object\":[]" WORK_TAIL,
	        "WORK: \"object\" must be an object" },
	{ IPC_WORK, "{\"key\":\"k\",\"children\":{}" WORK_TAIL,
	        "WORK: \"children\" must be an array" },
	{ IPC_WORK, "{\"key\":\"k\",\"children\":[{},3]" WORK_TAIL,
	        "WORK: children[1] must be an object" },
	/* RESULT */
	{ IPC_RESULT, "{\"epoch\":1,\"verdict\":{\"kind\":\"done\"}}",
	        "RESULT: \"key\" is missing" },
	{ IPC_RESULT,
	        "{\"key\":\"\",\"epoch\":1,\"verdict\":{\"kind\":\"done\"}}",
	        "RESULT: \"key\" is empty" },
	{ IPC_RESULT, "{\"key\":\"k\",\"verdict\":{\"kind\":\"done\"}}",
	        "RESULT: \"epoch\" is missing" },
	{ IPC_RESULT, "{\"key\":\"k\",\"epoch\":1}",
	        "RESULT: \"verdict\" is missing" },
	{ IPC_RESULT, "{\"key\":\"k\",\"epoch\":1,\"verdict\":\"done\"}",
	        "RESULT: \"verdict\" must be an object" },
	{ IPC_RESULT, "{\"key\":\"k\",\"epoch\":1,\"verdict\":{}}",
	        "RESULT.verdict: \"kind\" is missing" },
	{ IPC_RESULT,
	        "{\"key\":\"k\",\"epoch\":1,\"verdict\":{\"kind\":\"ok\"}}",
	        "RESULT.verdict: \"kind\" has an unknown value \"ok\"" },
	{ IPC_RESULT,
	        "{\"key\":\"k\",\"epoch\":1,\"verdict\":{\"kind\":"
	        "\"requeue_after\"}}",
	        "RESULT.verdict: \"afterMs\" is missing" },
	{ IPC_RESULT,
	        "{\"key\":\"k\",\"epoch\":1,\"verdict\":{\"kind\":"
	        "\"requeue_after\",\"afterMs\":-5}}",
	        "RESULT.verdict: \"afterMs\" must be >= 0" },
	{ IPC_RESULT,
	        "{\"key\":\"k\",\"epoch\":1,\"verdict\":{\"kind\":\"error\","
	        "\"message\":5}}",
	        "RESULT.verdict: \"message\" must be a string" },
	{ IPC_RESULT, RES_HEAD "\"writes\":{}}",
	        "RESULT: \"writes\" must be an array" },
	{ IPC_RESULT, RES_HEAD "\"writes\":[1]}",
	        "RESULT writes[0]: is not an object" },
	{ IPC_RESULT, RES_HEAD "\"writes\":[{" R_PODS ",\"name\":\"a\"}]}",
	        "RESULT writes[0]: \"op\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"replace\"," R_PODS
	                 ",\"name\":\"a\"}]}",
	        "RESULT writes[0]: \"op\" has an unknown value \"replace\"" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\",\"name\":\"a\"}]}",
	        "RESULT writes[0]: \"resource\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD
	        "\"writes\":[{\"op\":\"delete\",\"name\":\"a\","
	        "\"resource\":{\"version\":\"v1\",\"plural\":\"pods\","
	        "\"namespaced\":true}}]}",
	        "RESULT writes[0].resource: \"group\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\",\"name\":\"a\","
	                 "\"resource\":{\"group\":\"\",\"version\":\"\","
	                 "\"plural\":\"pods\",\"namespaced\":true}}]}",
	        "RESULT writes[0].resource: \"version\" is empty" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\",\"name\":\"a\","
	                 "\"resource\":{\"group\":\"\",\"version\":\"v1\","
	                 "\"plural\":\"pods\",\"namespaced\":\"yes\"}}]}",
	        "RESULT writes[0].resource: \"namespaced\" must be a "
	        "boolean" },
	{ IPC_RESULT, RES_HEAD "\"writes\":[{\"op\":\"delete\"," R_PODS "}]}",
	        "RESULT writes[0]: \"name\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"update\"," R_PODS
	                 ",\"name\":\"a\"}]}",
	        "RESULT writes[0]: \"object\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"create\"," R_PODS
	                 ",\"object\":[]}]}",
	        "RESULT writes[0]: \"object\" must be an object" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"patch\"," R_PODS
	                 ",\"name\":\"a\",\"patchType\":\"merge\"}]}",
	        "RESULT writes[0]: \"patch\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"patch\"," R_PODS
	                 ",\"name\":\"a\",\"patchType\":\"merge\","
	                 "\"patch\":\"x\"}]}",
	        "\"patch\" must be an object or an array" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"patch\"," R_PODS
	                 ",\"name\":\"a\",\"patch\":{}}]}",
	        "RESULT writes[0]: \"patchType\" is missing" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"patch\"," R_PODS
	                 ",\"name\":\"a\",\"patch\":{},\"patchType\":\"\"}]}",
	        "\"patchType\" has an unknown value \"\"" },
	{ IPC_RESULT,
	        RES_HEAD
	        "\"writes\":[{\"op\":\"patch\"," R_PODS
	        ",\"name\":\"a\",\"patch\":[],\"patchType\":\"apply\"}]}",
	        "\"patchType\" has an unknown value \"apply\"" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\"," R_PODS
	                 ",\"name\":\"a\",\"tolerate\":[\"Gone\"]}]}",
	        "RESULT writes[0]: tolerate[0] is not one of" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\"," R_PODS
	                 ",\"name\":\"a\",\"tolerate\":\"NotFound\"}]}",
	        "\"tolerate\" must be an array" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\"," R_PODS
	                 ",\"name\":\"a\",\"namespace\":3}]}",
	        "RESULT writes[0]: \"namespace\" must be a string" },
	{ IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"delete\"," R_PODS
	                 ",\"name\":\"a\",\"propagation\":false}]}",
	        "\"propagation\" must be a string" },
	/* VIEW_REQ */
	{ IPC_VIEW_REQ, "{\"what\":\"list\"," R_PODS "}",
	        "VIEW_REQ: \"id\" is missing" },
	{ IPC_VIEW_REQ, "{\"id\":1," R_PODS "}",
	        "VIEW_REQ: \"what\" is missing" },
	{ IPC_VIEW_REQ, "{\"id\":1,\"what\":\"watch\"," R_PODS "}",
	        "VIEW_REQ: \"what\" has an unknown value \"watch\"" },
	{ IPC_VIEW_REQ, "{\"id\":1,\"what\":\"list\"}",
	        "VIEW_REQ: \"resource\" is missing" },
	{ IPC_VIEW_REQ, "{\"id\":1,\"what\":\"get\"," R_PODS "}",
	        "VIEW_REQ: \"name\" is missing" },
	{ IPC_VIEW_REQ, "{\"id\":1,\"what\":\"secret_meta\",\"name\":\"\"}",
	        "VIEW_REQ: \"name\" is empty" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"pod_log\",\"name\":\"p\","
	        "\"tailLines\":-1}",
	        "VIEW_REQ: \"tailLines\" must be >= 0" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS ",\"labelSelector\":[]}",
	        "VIEW_REQ: \"labelSelector\" must be a string" },
	{ IPC_VIEW_REQ, "{\"id\":-1,\"what\":\"list\"," R_PODS "}",
	        "VIEW_REQ: \"id\" must be >= 0" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"fields\":\"status.phase\"}",
	        "VIEW_REQ: \"fields\" must be an array" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS ",\"fields\":[]}",
	        "VIEW_REQ: \"fields\" must hold 1..16 paths" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"fields\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
	        "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
	        "\"a\"]}",
	        "VIEW_REQ: \"fields\" must hold 1..16 paths" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"fields\":[\"status.phase\",3]}",
	        "VIEW_REQ: fields[1] is not a valid path" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"fields\":[\"metadata..name\"]}",
	        "VIEW_REQ: fields[0] is not a valid path" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"fields\":[\"spec.a/b\"]}",
	        "VIEW_REQ: fields[0] is not a valid path" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"fields\":[\"a\\u0000b\"]}",
	        "VIEW_REQ: fields[0] is not a valid path" },
	{ IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"get\"," R_PODS ",\"name\":\"p\","
	        "\"fields\":[\"status\"]}",
	        "VIEW_REQ: \"fields\" is only for a list" },
	/* VIEW_REPLY */
	{ IPC_VIEW_REPLY, "{\"status\":\"ok\"}",
	        "VIEW_REPLY: \"id\" is missing" },
	{ IPC_VIEW_REPLY, "{\"id\":1}", "VIEW_REPLY: \"status\" is missing" },
	{ IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"OK\"}",
	        "VIEW_REPLY: \"status\" has an unknown value \"OK\"" },
	{ IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"items\":{}}",
	        "VIEW_REPLY: \"items\" must be an array" },
	{ IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"items\":[1]}",
	        "VIEW_REPLY: items[0] must be an object, or all arrays" },
	{ IPC_VIEW_REPLY,
	        "{\"id\":1,\"status\":\"ok\",\"items\":[[\"a\"],{}]}",
	        "VIEW_REPLY: items[1] must be an object, or all arrays" },
	{ IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"items\":[{},[]]}",
	        "VIEW_REPLY: items[1] must be an object, or all arrays" },
	{ IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"object\":1}",
	        "VIEW_REPLY: \"object\" must be an object" },
	{ IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"text\":1}",
	        "VIEW_REPLY: \"text\" must be a string" },
};

static void
test_bad_shapes(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_shapes) / sizeof(bad_shapes[0]); i++) {
		expect_err(bad_shapes[i].type, bad_shapes[i].body,
		        bad_shapes[i].want);
	}
	/* Extra keys are ignored; optional keys may be null. */
	expect_ok(IPC_QUIT, "{\"future\":[1,2]}");
	expect_ok(IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"list\"," R_PODS
	        ",\"name\":null,\"x\":1}");
	expect_ok(IPC_VIEW_REPLY,
	        "{\"id\":1,\"status\":\"error\",\"object\":null}");
	expect_ok(IPC_RESULT,
	        RES_HEAD "\"writes\":[{\"op\":\"patch\"," R_PODS
	                 ",\"name\":\"a\",\"patch\":[],"
	                 "\"patchType\":\"json\"}]}");
}

static void
test_bounds(void **state)
{
	struct buf b = BUF_INIT, key = BUF_INIT;
	json_object *res;
	int i;

	(void)state;
	/* Key: 512 bytes pass, 513 do not. */
	for (i = 0; i < 512; i++) {
		buf_putc(&key, 'k');
	}
	buf_printf(&b, "{\"key\":\"%s\"%s", key.data, WORK_TAIL);
	expect_ok(IPC_WORK, b.data);
	buf_reset(&b);
	buf_printf(&b, "{\"key\":\"%sX\"%s", key.data, WORK_TAIL);
	expect_err(IPC_WORK, b.data, "\"key\" is too long (513 > 512 bytes)");
	buf_reset(&b);
	buf_printf(
	        &b, "{\"controller\":\"%s\",\"pid\":1,\"proto\":1}", key.data);
	expect_err(IPC_HELLO, b.data, "\"controller\" is too long (512 > 253");

	/* Writes: 1000 pass, 1001 do not. */
	res = ipc_result_new("k", 1, IPC_V_DONE, 0, NULL);
	for (i = 0; i < IPC_WRITES_MAX; i++) {
		ipc_result_add_write(res,
		        ipc_write_new(IPC_OP_DELETE, &pods, "ns", "p", NULL));
	}
	assert_int_equal(ipc_validate(IPC_RESULT, res, NULL, 0), 0);
	ipc_result_add_write(
	        res, ipc_write_new(IPC_OP_DELETE, &pods, "ns", "p", NULL));
	buf_reset(&b);
	assert_int_equal(ipc_encode(IPC_RESULT, 1, res, &b), 0);
	expect_err_buf(&b, 0,
	        "RESULT: \"writes\" has too many entries (1001 > 1000)");
	json_object_put(res);
	buf_fini(&b);
	buf_fini(&key);
}

static void
test_validate_direct(void **state)
{
	char err[256];
	json_object *o = ipc_heartbeat_new(1);

	(void)state;
	assert_int_equal(ipc_validate(IPC_HEARTBEAT, o, err, sizeof(err)), 0);
	assert_int_equal(ipc_validate(IPC_ERROR, o, err, sizeof(err)), -1);
	assert_string_equal(err, "ERROR: \"message\" is missing");
	assert_int_equal(ipc_validate(IPC_QUIT, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "QUIT: body is not a JSON object");
	assert_int_equal(
	        ipc_validate((enum ipc_type)77, o, err, sizeof(err)), -1);
	assert_string_equal(err, "UNKNOWN: unknown message type");
	json_object_put(o);
}

/* Deterministic PRNG (xorshift) for the fuzz-like loops. */
static uint32_t
rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

static void
decode_any(const void *p, size_t n)
{
	struct ipc_msg m;
	char err[256] = "";

	if (ipc_decode(p, n, 4096, &m, err, sizeof(err)) == 0) {
		assert_non_null(m.body);
		ipc_msg_fini(&m);
	} else {
		assert_true(err[0] != '\0');
	}
}

static void
test_random_input(void **state)
{
	struct buf valid = BUF_INIT;
	json_object *res = sample_result();
	uint8_t junk[600], *copy;
	uint32_t seed = 12345;
	size_t i, j, n;

	(void)state;
	assert_int_equal(ipc_encode(IPC_RESULT, 9, res, &valid), 0);
	json_object_put(res);
	copy = malloc(valid.len);
	for (i = 0; i < 3000; i++) {
		/* Random bytes, sometimes behind a valid header prefix. */
		n = rnd(&seed) % sizeof(junk);
		for (j = 0; j < n; j++) {
			junk[j] = (uint8_t)rnd(&seed);
		}
		if (n >= 8 && (i & 1)) {
			memcpy(junk, valid.data, 8);
		}
		decode_any(junk, n);
		/* A valid message truncated, or with a few bytes flipped. */
		decode_any(valid.data, rnd(&seed) % (valid.len + 1));
		memcpy(copy, valid.data, valid.len);
		for (j = 0; j < 3; j++) {
			copy[rnd(&seed) % valid.len] = (uint8_t)rnd(&seed);
		}
		decode_any(copy, valid.len);
	}
	decode_any(valid.data, valid.len);
	free(copy);
	buf_fini(&valid);
}

/* ---- zoneinfo views ---- */

static void
test_rt_zoneinfo(void **state)
{
	struct ipc_view_req q = { .id = 3,
		.what = IPC_VIEW_ZONEINFO,
		.name = "America/New_York",
		.tail_lines = -1 },
	                    rq;
	struct ipc_view_reply p = { .id = 3, .status = IPC_VS_OK }, rp;
	const unsigned char bin[]
	        = { 'T', 'Z', 'i', 'f', 0, 0xff, 0x80, '\n', '=' };
	unsigned char *dec;
	struct ipc_msg m;
	size_t len;
	char *b64;

	(void)state;
	roundtrip(IPC_VIEW_REQ, 3, ipc_view_req_new(&q), &m);
	assert_int_equal(ipc_view_req_read(&m, &rq), 0);
	assert_int_equal(rq.what, IPC_VIEW_ZONEINFO);
	assert_false(rq.has_res);
	assert_string_equal(rq.name, "America/New_York");
	assert_string_equal(jx_get_str(m.body, "what"), "zoneinfo");
	ipc_msg_fini(&m);

	b64 = ipc_b64_encode(bin, sizeof(bin));
	p.data = b64;
	roundtrip(IPC_VIEW_REPLY, 3, ipc_view_reply_new(&p), &m);
	assert_int_equal(ipc_view_reply_read(&m, &rp), 0);
	assert_string_equal(rp.data, b64);
	assert_int_equal(ipc_b64_decode(rp.data, &dec, &len), 0);
	assert_int_equal(len, sizeof(bin));
	assert_memory_equal(dec, bin, sizeof(bin));
	free(dec);
	free(b64);
	ipc_msg_fini(&m);

	/* not_found and error carry no data */
	p.data = NULL;
	p.status = IPC_VS_ERROR;
	p.message = "invalid time zone name \"../x\"";
	roundtrip(IPC_VIEW_REPLY, 3, ipc_view_reply_new(&p), &m);
	assert_int_equal(ipc_view_reply_read(&m, &rp), 0);
	assert_null(rp.data);
	assert_int_equal(rp.status, IPC_VS_ERROR);
	ipc_msg_fini(&m);
}

static void
test_b64(void **state)
{
	/* RFC 4648 section 10 vectors */
	const char *plain[]
	        = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	const char *enc[] = { "", "Zg==", "Zm8=", "Zm9v",
		"Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	const char *bad[] = { "Zg=", "Z===", "Zm9v!A==", "=Zm9",
		"Zg==Zg==", "Zm 9", "Zm9vYg=a", "Zm8\n" };
	unsigned char *out, all[256];
	size_t len;

	(void)state;
	for (size_t i = 0; i < 7; i++) {
		char *e = ipc_b64_encode(plain[i], strlen(plain[i]));
		assert_string_equal(e, enc[i]);
		free(e);
		assert_int_equal(ipc_b64_decode(enc[i], &out, &len), 0);
		assert_int_equal(len, strlen(plain[i]));
		assert_memory_equal(out, plain[i], len);
		free(out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ipc_b64_decode(bad[i], &out, &len) != -1) {
			fail_msg("\"%s\" decoded", bad[i]);
		}
		assert_null(out);
	}
	for (int i = 0; i < 256; i++) {
		all[i] = (unsigned char)i;
	}
	for (size_t n = 250; n <= 256; n++) {
		char *e = ipc_b64_encode(all, n);
		assert_int_equal(ipc_b64_decode(e, &out, &len), 0);
		assert_int_equal(len, n);
		assert_memory_equal(out, all, n);
		free(out);
		free(e);
	}
}

static void
test_zone_names(void **state)
{
	const char *good[] = { "UTC", "Local", "America/New_York",
		"America/Argentina/Buenos_Aires", "Etc/GMT+5", "Etc/GMT-14",
		"posix/Europe/London", "a.b", "..a", "a..", "EST5EDT" };
	const char *bad[] = { "", "/etc/passwd", "../etc/passwd",
		"America/../../etc/passwd", "..", ".", "a/./b", "a//b", "a/",
		"America/New York", "a\\b", "a:b", "a*",
		"Europe/Lond\xc3\xb6n", "a\tb", "a%2e%2e" };
	char longname[IPC_NAME_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!ipc_zone_name_valid(good[i])) {
			fail_msg("\"%s\" refused", good[i]);
		}
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ipc_zone_name_valid(bad[i])) {
			fail_msg("\"%s\" accepted", bad[i]);
		}
	}
	assert_false(ipc_zone_name_valid(NULL));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[IPC_NAME_MAX] = '\0';
	assert_true(ipc_zone_name_valid(longname));
	longname[IPC_NAME_MAX] = 'a';
	longname[IPC_NAME_MAX + 1] = '\0';
	assert_false(ipc_zone_name_valid(longname));
}

/* The codec checks the request's bounds only (the supervisor answers an
 * error for a bad name), and the reply's data strictly. */
static void
test_zoneinfo_codec(void **state)
{
	struct buf big = BUF_INIT, body = BUF_INIT;
	size_t max = 4 * ((IPC_DATA_MAX + 2) / 3);

	(void)state;
	expect_ok(IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"zoneinfo\","
	        "\"name\":\"../../etc/passwd\"}");
	expect_err(IPC_VIEW_REQ, "{\"id\":1,\"what\":\"zoneinfo\"}",
	        "VIEW_REQ: \"name\" is missing");
	expect_err(IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"zoneinfo\",\"name\":\"\"}",
	        "VIEW_REQ: \"name\" is empty");
	expect_err(IPC_VIEW_REQ, "{\"id\":1,\"what\":\"zoneinfo\",\"name\":7}",
	        "VIEW_REQ: \"name\" must be a string");
	expect_err(IPC_VIEW_REQ,
	        "{\"id\":1,\"what\":\"zoneinfo\",\"name\":\"a\\u0000b\"}",
	        "VIEW_REQ: \"name\" contains a NUL byte");
	buf_printf(&body, "{\"id\":1,\"what\":\"zoneinfo\",\"name\":\"");
	for (int i = 0; i < IPC_NAME_MAX + 1; i++) {
		buf_printf(&body, "a");
	}
	buf_printf(&body, "\"}");
	expect_err(IPC_VIEW_REQ, buf_str(&body), "\"name\" is too long");

	expect_ok(IPC_VIEW_REPLY,
	        "{\"id\":1,\"status\":\"ok\",\"data\":\"VFppZg==\"}");
	expect_ok(
	        IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"data\":\"\"}");
	expect_ok(
	        IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"data\":null}");
	expect_err(IPC_VIEW_REPLY, "{\"id\":1,\"status\":\"ok\",\"data\":12}",
	        "VIEW_REPLY: \"data\" must be a string");
	expect_err(IPC_VIEW_REPLY,
	        "{\"id\":1,\"status\":\"ok\",\"data\":\"VFppZg\"}",
	        "VIEW_REPLY: \"data\" is not valid base64");
	expect_err(IPC_VIEW_REPLY,
	        "{\"id\":1,\"status\":\"ok\",\"data\":\"VFp*Zg==\"}",
	        "VIEW_REPLY: \"data\" is not valid base64");
	expect_err(IPC_VIEW_REPLY,
	        "{\"id\":1,\"status\":\"ok\",\"data\":\"VFppZg==\\u0000\"}",
	        "VIEW_REPLY: \"data\" contains a NUL byte");

	/* exactly IPC_DATA_MAX bytes pass; one more does not */
	buf_printf(&big, "{\"id\":1,\"status\":\"ok\",\"data\":\"");
	for (size_t i = 0; i < max - 4; i += 4) {
		buf_printf(&big, "AAAA");
	}
	buf_printf(&big, "AA==\"}"); /* 262142 + 1 = IPC_DATA_MAX bytes */
	expect_ok(IPC_VIEW_REPLY, buf_str(&big));
	buf_reset(&big);
	buf_printf(&big, "{\"id\":1,\"status\":\"ok\",\"data\":\"");
	for (size_t i = 0; i < max; i += 4) {
		buf_printf(&big, "AAAA");
	}
	buf_printf(&big, "\"}");
	expect_err(IPC_VIEW_REPLY, buf_str(&big),
	        "VIEW_REPLY: \"data\" is too large (over 262144 bytes)");
	buf_reset(&big);
	buf_printf(&big, "{\"id\":1,\"status\":\"ok\",\"data\":\"");
	for (size_t i = 0; i < max + 4; i += 4) {
		buf_printf(&big, "AAAA");
	}
	buf_printf(&big, "\"}");
	expect_err(IPC_VIEW_REPLY, buf_str(&big), "\"data\" is too long");
	buf_fini(&big);
	buf_fini(&body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_rt_hello_ready),
		cmocka_unit_test(test_rt_small),
		cmocka_unit_test(test_rt_work),
		cmocka_unit_test(test_work_children_stale),
		cmocka_unit_test(test_rt_result),
		cmocka_unit_test(test_result_decode),
		cmocka_unit_test(test_rt_view),
		cmocka_unit_test(test_field_valid),
		cmocka_unit_test(test_project),
		cmocka_unit_test(test_rt_zoneinfo),
		cmocka_unit_test(test_b64),
		cmocka_unit_test(test_zone_names),
		cmocka_unit_test(test_zoneinfo_codec),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_bad_body),
		cmocka_unit_test(test_bad_shapes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_validate_direct),
		cmocka_unit_test(test_random_input),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
