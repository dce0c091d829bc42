/*
 * runtime.c: what every worker process runs around its reconciler: the
 * HELLO/READY handshake, then one message at a time: WORK is reconciled
 * and answered with one RESULT, HEARTBEAT is echoed, QUIT ends the loop.
 * A message the worker cannot use ends the session (the supervisor
 * restarts the worker); the worker never guesses.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/contract.h"
#include "common/log.h"
#include "workers/runtime.h"
#include "workers/sandbox.h"
#include "workers/view.h"

/* Waits for READY; answers heartbeats that come first. */
int
wrt_handshake(struct ipc_sock *s, const char *controller, int timeout_ms,
        int64_t *epoch)
{
	json_object *hello = ipc_hello_new(controller, getpid());
	struct ipc_msg m = { 0 };
	char err[256];
	enum ipc_sock_rc rc;

	rc = ipc_sock_send(s, IPC_HELLO, 0, hello);
	json_object_put(hello);
	if (rc != IPC_SOCK_OK) {
		log_warnx("handshake: cannot send HELLO");
		return (-1);
	}
	rc = ipc_sock_recv_wait(s, timeout_ms, &m, err, sizeof(err));
	if (rc != IPC_SOCK_OK) {
		log_warnx("handshake: no READY within %d ms%s%s", timeout_ms,
		        rc == IPC_SOCK_ERR ? ": " : "",
		        rc == IPC_SOCK_ERR ? err : "");
		return (-1);
	}
	int ok = m.type == IPC_READY && ipc_ready_read(&m, epoch) == 0;
	if (!ok) {
		log_warnx("handshake: expected READY, got %s",
		        ipc_type_name(m.type));
	}
	ipc_msg_fini(&m);
	return (ok ? 0 : -1);
}

/* Every log record of this reconcile carries its object's fields, as a
 * controller-runtime reconcile's logger does (common/log.h). */
static void
log_key(const struct reconciler *r, const char *key, const char *rid)
{
	const struct contract_ctrl *c = contract_find(r->name);
	const char *slash = strchr(key, '/');
	char ns[IPC_NAME_MAX + 1] = "";
	struct log_obj o = { .controller = r->name,
		.name = slash != NULL ? slash + 1 : key,
		.ns = ns,
		.reconcile_id = rid };

	if (slash != NULL) {
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	}
	if (c != NULL && c->nwatches > 0) {
		o.group = c->watches[0].res.group;
		o.kind = c->watches[0].kind;
	}
	log_context(&o);
}

json_object *
wrt_reconcile(const struct reconciler *r, const struct ipc_msg *work,
        struct view *view)
{
	struct ipc_work w;
	struct rec_in in;
	struct rec_out out;

	if (ipc_work_read(work, &w) != 0) {
		return (NULL);
	}
	in = (struct rec_in) { .key = w.key,
		.object = w.object,
		.children = w.children,
		.now_ms = w.now_ms,
		.attempt = w.attempt,
		.view = view,
		.children_stale = w.children_stale };
	memset(&out, 0, sizeof(out));
	out.result = ipc_result_new(w.key, w.epoch, IPC_V_DONE, 0, NULL);
	out.verdict = IPC_V_DONE;
	log_key(r, w.key, w.reconcile_id);
	r->reconcile(&in, &out);
	log_context(NULL);
	sbx_log_refused(w.key);
	/* the verdict goes in last: reconcilers set it after their writes */
	json_object *v = json_object_new_object();
	json_object_object_add(v, "kind",
	        json_object_new_string(ipc_verdict_name(out.verdict)));
	if (out.verdict == IPC_V_REQUEUE_AFTER || out.after_ms > 0) {
		json_object_object_add(
		        v, "afterMs", json_object_new_int64(out.after_ms));
	}
	if (out.message[0] != '\0') {
		json_object_object_add(
		        v, "message", json_object_new_string(out.message));
	}
	json_object_object_add(out.result, "verdict", v);
	return (out.result);
}

/* Handles one message.  Returns 1 to go on, 0 on QUIT, -1 on error. */
static int
handle(struct ipc_sock *s, const struct reconciler *r, struct view *view,
        struct ipc_msg *m)
{
	json_object *reply;
	int64_t seq;

	switch (m->type) {
	case IPC_WORK:
		reply = wrt_reconcile(r, m, view);
		if (reply == NULL) {
			log_warnx("malformed WORK");
			return (-1);
		}
		if (view_quit(view)) {
			json_object_put(reply);
			return (0);
		}
		ipc_sock_send(s, IPC_RESULT, m->reqid, reply);
		json_object_put(reply);
		return (1);
	case IPC_HEARTBEAT:
		if (ipc_heartbeat_read(m, &seq) != 0) {
			return (-1);
		}
		reply = ipc_heartbeat_new(seq);
		ipc_sock_send(s, IPC_HEARTBEAT, m->reqid, reply);
		json_object_put(reply);
		return (1);
	case IPC_QUIT:
		return (0);
	default:
		log_warnx("unexpected %s from the supervisor",
		        ipc_type_name(m->type));
		return (-1);
	}
}

int
wrt_serve(struct ipc_sock *s, const struct reconciler *r, int view_timeout_ms)
{
	struct view *view = view_new(s, view_timeout_ms);
	char err[256];
	int rc = 1;

	while (rc == 1) {
		struct ipc_msg m = { 0 };
		enum ipc_sock_rc got
		        = ipc_sock_recv_wait(s, 1000, &m, err, sizeof(err));
		sbx_log_refused(NULL); /* nng's threads, while idle */
		if (got == IPC_SOCK_AGAIN) {
			continue;
		}
		if (got == IPC_SOCK_ERR) {
			log_warnx("session: %s", err);
			rc = -1;
			break;
		}
		rc = handle(s, r, view, &m);
		ipc_msg_fini(&m);
	}
	view_free(view);
	return (rc == 0 ? 0 : -1);
}
