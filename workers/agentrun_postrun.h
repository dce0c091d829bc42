/*
 * agentrun_postrun.h: the PostRunning path of the AgentRun reconciler
 * (spec sympozium-controllers.md 1.3 steps 2 and 16, 1.5, 1.6 step 2,
 * 1.7; upstream agentrun_controller.go startPostRun, buildPostRunJob,
 * reconcilePostRunning, resolveGate, validateGateHooks,
 * hasResponseGateHook, parseGateVerdict, ensureWorkspacePVC and
 * cleanupWorkspacePVC at 008266e): the workspace PVC, the postRun Job of
 * lifecycle.postRun hooks run as init containers once the agent is done,
 * the PostRunning phase, the PostRunFailed condition and the response
 * gate (annotation sympozium.ai/gate-verdict, status.gateVerdict).  Not
 * built: publishing the gated completion on NATS.  Prefix
 * agentrun_postrun_.
 */
#ifndef AGENTRUN_POSTRUN_H
#define AGENTRUN_POSTRUN_H

#include <stdbool.h>

#include <json-c/json.h>

#include "workers/reconcile.h"

/* Requeue delay of a PostRunning run (upstream RequeueAfter 5s). */
#define AGENTRUN_POSTRUN_POLL_MS 5000
/* The postRun budget, from status.startedAt of the whole run. */
#define AGENTRUN_POSTRUN_TIMEOUT_MS (10 * 60 * 1000)
/* AGENT_RESULT is cut to this many bytes. */
#define AGENTRUN_POSTRUN_RESULT_MAX (32 * 1024)
/* The annotation a gate hook writes its verdict to. */
#define AGENTRUN_POSTRUN_ANN_VERDICT "sympozium.ai/gate-verdict"

/* Whether the run has lifecycle.postRun hooks. */
bool agentrun_postrun_hooks(json_object *run);
/* Whether one of them is a gate (hasResponseGateHook). */
bool agentrun_postrun_gated(json_object *run);

/* validateGateHooks: NULL when the hooks are valid, else the message the
 * run fails with (static storage, valid until the next call). */
const char *agentrun_postrun_validate(json_object *run);

/* "<run>-workspace".  Caller frees. */
char *agentrun_postrun_pvc_name(json_object *run);
/* Pending (ensureWorkspacePVC): creates the workspace PVC when the run
 * has postRun hooks (AlreadyExists tolerated). */
void agentrun_postrun_pvc(struct rec_out *out, json_object *run);

/* The postRun Job (buildPostRunJob) of run, without owner reference, for
 * the agent's exit code and result or error text.  Caller puts. */
json_object *agentrun_postrun_job(
        json_object *run, int exit_code, const char *text);

/* The agent finished (startPostRun): writes exitCode, result (exit code
 * 0) or error, tokenUsage (usage, taken; NULL removes it) into status,
 * creates the postRun Job and sets phase PostRunning and postRunJobName.
 * The caller requeues in AGENTRUN_POSTRUN_POLL_MS. */
void agentrun_postrun_start(const struct rec_in *in, struct rec_out *out,
        json_object *status, int exit_code, const char *text,
        json_object *usage);

/* A run in phase PostRunning (reconcilePostRunning): status (borrowed)
 * is the one being written; sets the verdict. */
void agentrun_postrun_running(
        const struct rec_in *in, struct rec_out *out, json_object *status);

/* The Events of the postRun path, right after the status write (old: the
 * cached status, now: the one written): Normal PostRunStarted when the
 * phase turns PostRunning, Warning PostRunFailed when a PostRunFailed
 * condition was added. */
void agentrun_postrun_events(struct rec_out *out, json_object *run,
        json_object *old, json_object *now);

/* Completed path (cleanupWorkspacePVC): deletes the workspace PVC of a
 * run with status.postRunJobName when the children hold it. */
void agentrun_postrun_cleanup(
        const struct rec_in *in, struct rec_out *out, json_object *status);

#endif
