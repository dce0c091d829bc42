/*
 * agentrun_server.h: the server-mode path of the AgentRun reconciler
 * (spec sympozium-controllers.md 1.4 and 1.8; upstream
 * agentrun_controller.go reconcilePendingServer, reconcileServing,
 * ensureServerAPIKeySecret, maybeCreateHTTPRoute at 008266e): the
 * web-proxy Deployment and Service <run>-server, the API key Secret, the
 * gateway's HTTPRoute <run>-web, the Serving phase.  Prefix
 * agentrun_server_.
 */
#ifndef AGENTRUN_SERVER_H
#define AGENTRUN_SERVER_H

#include <json-c/json.h>

#include "workers/reconcile.h"

/* Requeue delay of a Serving run (upstream RequeueAfter 30s). */
#define AGENTRUN_SERVER_POLL_MS 30000
/* Requeue delay while the children cache may lag the server. */
#define AGENTRUN_SERVER_STALE_MS 3000

/* A Pending run with spec.mode "server".  status is the status being
 * written (borrowed).  Returns 2 (children written, phase Serving,
 * verdict set), 1 (the run failed: the caller ends it) or -1 (a view
 * error: error verdict set). */
int agentrun_server_pending(
        const struct rec_in *in, struct rec_out *out, json_object *status);

/* A run in phase Serving: fails it when its Deployment is gone, else
 * retries the gateway's HTTPRoute <run>-web and requeues in
 * AGENTRUN_SERVER_POLL_MS (no timeout). */
void agentrun_server_serving(
        const struct rec_in *in, struct rec_out *out, json_object *status);

#endif
