/*
 * agentrun.h: the AgentRun reconciler (spec sympozium-controllers.md
 * section 1): policy checks, the agent ServiceAccount, input ConfigMap,
 * skill ConfigMap mirrors and skill RBAC, the Job, the phase machine
 * Pending -> Running -> Succeeded/Failed (server mode: Pending -> Serving,
 * agentrun_server.h), the result from the agent's
 * log, timeout, history pruning, finalizer and deletion.  Prefix
 * agentrun_.
 */
#ifndef AGENTRUN_H
#define AGENTRUN_H

#include "workers/reconcile.h"

#define AGENTRUN_POLL_MS    5000
#define AGENTRUN_TIMEOUT_MS (10 * 60 * 1000)
/* The memory-server wait (spec 1.3 step 12): requeue period, and the run
 * age after which the run fails instead. */
#define AGENTRUN_MEMORY_POLL_MS 5000
#define AGENTRUN_MEMORY_WAIT_MS (120 * 1000)
/* Completed runs kept per instance (spec 1.6 step 4: upstream flag
 * --max-run-history, default 50, <= 0 meaning 50): sympoziumd's flag of
 * that name reaches the worker as this environment variable. */
#define AGENTRUN_HISTORY     50
#define AGENTRUN_HISTORY_ENV "SYMPOZIUM_MAX_RUN_HISTORY"
/* Deletes one pruning pass sends, well below IPC_WRITES_MAX (a RESULT
 * with more writes gets the worker killed); the rest go a pass later,
 * AGENTRUN_PRUNE_AGAIN_MS on. */
#define AGENTRUN_PRUNE_MAX      500
#define AGENTRUN_PRUNE_AGAIN_MS 1000
/* How long after startedAt a missing Job is taken for a cache lag. */
#define AGENTRUN_JOB_GRACE_MS 30000
/* Requeue delay of a run whose Job is missing while the supervisor marks
 * the children stale (rec_in.children_stale): no grace applies then. */
#define AGENTRUN_STALE_MS 3000
/* A finished Job whose pod is not in the cache yet (the pods' watch can
 * trail the Job's, e.g. while it relists) is waited for this long after
 * its completion before the run completes without a log. */
#define AGENTRUN_POD_GRACE_MS 60000

extern const struct reconciler agentrun_reconciler; /* "agentrun" */

#endif
