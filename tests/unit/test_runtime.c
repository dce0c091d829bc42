/*
 * test_runtime.c: the worker runtime against an in-test supervisor end:
 * handshake, WORK answered by one RESULT with the reconciler's writes and
 * verdict, heartbeats echoed, a view request answered mid-reconcile, QUIT,
 * and a session broken by an unexpected message.
 */
#include <pthread.h>
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
#include "ipc/ipc_sock.h"
#include "workers/runtime.h"
#include "workers/view.h"

static const struct ipc_res cms = { "", "v1", "configmaps", true };

/* The reconciler under test: reads "peer" through the view when the
 * object asks, writes one ConfigMap, requeues after 42 ms. */
static void
rec(const struct rec_in *in, struct rec_out *out)
{
	json_object *cm = json_object_new_object();
	json_object *peer = NULL;
	char err[128];

	if (jx_get_str(in->object, "spec.peek") != NULL) {
		int rc = view_get(
		        in->view, &cms, "ns", "peer", &peer, err, sizeof(err));
		json_object_object_add(
		        cm, "peer", json_object_new_int(rc == 0 ? 1 : rc));
		json_object_put(peer);
	}
	json_object_object_add(
	        cm, "attempt", json_object_new_int64(in->attempt));
	rec_write(out, ipc_write_new(IPC_OP_CREATE, &cms, "ns", NULL, cm));
	rec_verdict(out, IPC_V_REQUEUE_AFTER, 42, "again %s", in->key);
}

static const struct reconciler testrec = { "unit", rec };

struct side {
	char dir[64];
	char path[128];
	struct ipc_sock *sup;
	pthread_t th;
	int rc;
};

static void *
worker_main(void *arg)
{
	struct side *s = arg;
	char err[128];
	int64_t epoch = 0;
	struct ipc_sock *w = ipc_sock_dial(s->path, 0, 3000, err, sizeof(err));

	s->rc = -2;
	if (w == NULL) {
		return (NULL);
	}
	if (wrt_handshake(w, "unit", 3000, &epoch) == 0 && epoch == 7) {
		s->rc = wrt_serve(w, &testrec, 3000);
	}
	ipc_sock_close(w);
	return (NULL);
}

static int
setup(void **state)
{
	struct side *s = calloc(1, sizeof(*s));
	char err[128];

	strcpy(s->dir, "/tmp/test-runtime.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/w.sock", s->dir);
	s->sup = ipc_sock_listen(s->path, 0, err, sizeof(err));
	assert_non_null(s->sup);
	assert_int_equal(pthread_create(&s->th, NULL, worker_main, s), 0);
	*state = s;
	return (0);
}

static void
expect(struct side *s, enum ipc_type type, struct ipc_msg *m)
{
	char err[128];

	assert_int_equal(ipc_sock_recv_wait(s->sup, 3000, m, err, sizeof(err)),
	        IPC_SOCK_OK);
	assert_int_equal(m->type, type);
}

static void
send_body(struct side *s, enum ipc_type type, json_object *body)
{
	assert_int_equal(ipc_sock_send(s->sup, type, 5, body), IPC_SOCK_OK);
	json_object_put(body);
}

static void
handshake(struct side *s)
{
	struct ipc_msg m = { 0 };
	struct ipc_hello h;

	expect(s, IPC_HELLO, &m);
	assert_int_equal(ipc_hello_read(&m, &h), 0);
	assert_string_equal(h.controller, "unit");
	assert_int_equal(h.pid, getpid());
	ipc_msg_fini(&m);
	send_body(s, IPC_READY, ipc_ready_new(7, NULL));
}

static void
send_work(struct side *s, const char *obj)
{
	struct ipc_work w = { .key = "ns/a",
		.epoch = 7,
		.attempt = 2,
		.now_ms = 1000,
		.object = json_tokener_parse(obj),
		.deadline_ms = 5000 };

	send_body(s, IPC_WORK, ipc_work_new(&w));
}

static void
test_work_result(void **state)
{
	struct side *s = *state;
	struct ipc_msg m = { 0 };
	struct ipc_result r;
	struct ipc_write w;
	int64_t seq;

	handshake(s);
	send_body(s, IPC_HEARTBEAT, ipc_heartbeat_new(9));
	expect(s, IPC_HEARTBEAT, &m);
	assert_int_equal(ipc_heartbeat_read(&m, &seq), 0);
	assert_int_equal(seq, 9);
	ipc_msg_fini(&m);

	send_work(s, "{\"metadata\":{\"name\":\"a\"}}");
	expect(s, IPC_RESULT, &m);
	assert_int_equal(ipc_result_read(&m, &r), 0);
	assert_string_equal(r.key, "ns/a");
	assert_int_equal(r.epoch, 7);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after_ms, 42);
	assert_string_equal(r.message, "again ns/a");
	assert_int_equal(r.nwrites, 1);
	assert_int_equal(ipc_result_write(&r, 0, &w), 0);
	assert_int_equal(w.op, IPC_OP_CREATE);
	int64_t attempt = -1;
	jx_get_int(w.object, "attempt", &attempt);
	assert_int_equal(attempt, 2);
	ipc_msg_fini(&m);

	send_body(s, IPC_QUIT, ipc_quit_new());
	pthread_join(s->th, NULL);
	s->th = pthread_self();
	assert_int_equal(s->rc, 0);
}

static void
test_view_roundtrip(void **state)
{
	struct side *s = *state;
	struct ipc_msg m = { 0 };
	struct ipc_view_req req;
	struct ipc_result r;
	struct ipc_write w;

	handshake(s);
	send_work(s,
	        "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"peek\":\"y\"}}");
	expect(s, IPC_VIEW_REQ, &m);
	assert_int_equal(ipc_view_req_read(&m, &req), 0);
	assert_int_equal(req.what, IPC_VIEW_GET);
	assert_string_equal(req.name, "peer");
	/* a heartbeat while the worker waits is answered too */
	send_body(s, IPC_HEARTBEAT, ipc_heartbeat_new(3));
	struct ipc_view_reply rep = { .id = req.id,
		.status = IPC_VS_OK,
		.object = json_tokener_parse("{\"data\":{}}") };
	ipc_msg_fini(&m);
	send_body(s, IPC_VIEW_REPLY, ipc_view_reply_new(&rep));
	expect(s, IPC_HEARTBEAT, &m);
	ipc_msg_fini(&m);
	expect(s, IPC_RESULT, &m);
	assert_int_equal(ipc_result_read(&m, &r), 0);
	assert_int_equal(ipc_result_write(&r, 0, &w), 0);
	int64_t peer = -1;
	jx_get_int(w.object, "peer", &peer);
	assert_int_equal(peer, 1);
	ipc_msg_fini(&m);
	send_body(s, IPC_QUIT, ipc_quit_new());
	pthread_join(s->th, NULL);
	s->th = pthread_self();
	assert_int_equal(s->rc, 0);
}

static void
test_unexpected_message(void **state)
{
	struct side *s = *state;

	handshake(s);
	send_body(s, IPC_READY, ipc_ready_new(7, NULL));
	pthread_join(s->th, NULL);
	s->th = pthread_self();
	assert_int_equal(s->rc, -1);
}

static int
teardown_joined(void **state)
{
	struct side *s = *state;

	if (!pthread_equal(s->th, pthread_self())) {
		pthread_join(s->th, NULL);
	}
	ipc_sock_close(s->sup);
	unlink(s->path);
	rmdir(s->dir);
	free(s);
	return (0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_work_result, setup, teardown_joined),
		cmocka_unit_test_setup_teardown(
		        test_view_roundtrip, setup, teardown_joined),
		cmocka_unit_test_setup_teardown(
		        test_unexpected_message, setup, teardown_joined),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
