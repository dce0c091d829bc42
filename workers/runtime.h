/*
 * runtime.h: the worker runtime (issue 4, deliverable 7): the handshake
 * with the supervisor, then the loop that takes WORK, runs the reconciler
 * and answers RESULT, answering heartbeats and stopping on QUIT.  Prefix
 * wrt_.
 */
#ifndef RUNTIME_H
#define RUNTIME_H

#include <stdint.h>

#include "ipc/ipc_sock.h"
#include "workers/reconcile.h"

/* Sends HELLO for controller and waits up to timeout_ms for READY.
 * Returns 0 with the leadership epoch in *epoch, or -1 (logged). */
int wrt_handshake(struct ipc_sock *s, const char *controller, int timeout_ms,
        int64_t *epoch);

/* Serves WORK with r until QUIT (returns 0) or a broken session (-1,
 * logged).  view_timeout_ms bounds each view request. */
int wrt_serve(
        struct ipc_sock *s, const struct reconciler *r, int view_timeout_ms);

/* Runs one reconcile of a decoded WORK message and returns the RESULT body
 * (caller puts).  NULL when the message is not a valid WORK. */
json_object *wrt_reconcile(const struct reconciler *r,
        const struct ipc_msg *work, struct view *view);

#endif
