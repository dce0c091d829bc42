/*
 * agentrun_sandbox.h: the agent-sandbox backend of the AgentRun reconciler
 * (spec sympozium-controllers.md 1.3 agent-sandbox branch; upstream
 * internal/controller/agentrun_sandbox.go at 008266e): a run with
 * spec.agentSandbox.enabled gets a Sandbox CR (agents.x-k8s.io/v1alpha1,
 * kubernetes-sigs/agent-sandbox), or a SandboxClaim of a warm pool when
 * spec.agentSandbox.warmPoolRef is set, instead of a Job; its Running
 * phase follows the Sandbox's Ready condition and its pod.  The pod
 * template comes from the Job builder's pod spec (agentrun_job.h).
 * agentrun.c calls in at the Pending and Running phases.  Prefix
 * agentrun_sandbox_.
 */
#ifndef AGENTRUN_SANDBOX_H
#define AGENTRUN_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "workers/reconcile.h"

/* Requeue of a run whose Sandbox runs (upstream RequeueAfter 5s). */
#define AGENTRUN_SANDBOX_POLL_MS 5000
/* Upstream's failure when the CRDs are not served (DynamicClient nil). */
#define AGENTRUN_SANDBOX_ABSENT                                               \
	"agent-sandbox mode requires dynamic client (agent-sandbox CRDs "     \
	"not available)"

/* Whether the supervisor found the agent-sandbox CRDs served (the
 * environment variable CONTRACT_ENV_AGENT_SANDBOX is "1"). */
bool agentrun_sandbox_served(void);
/* Whether run asks for agent-sandbox mode (spec.agentSandbox.enabled). */
bool agentrun_sandbox_wanted(json_object *run);
/* Whether a run's status (borrowed) names a Sandbox or a SandboxClaim:
 * its Running phase is this module's (upstream reconcileRunning). */
bool agentrun_sandbox_active(json_object *status);

/* upstream containerToMap: the fields of a container (a Job builder
 * container, borrowed) the Sandbox's pod template keeps.  Caller puts. */
json_object *agentrun_sandbox_container(json_object *c);
/* upstream volumeToMap, likewise for a volume. */
json_object *agentrun_sandbox_volume(json_object *v);
/* upstream buildSandboxCR: the Sandbox "sb-<run>" of run from pod (a
 * Job builder pod spec: its containers, initContainers and volumes),
 * with the run's controller ownerReference.  Caller puts. */
json_object *agentrun_sandbox_cr(json_object *run, json_object *pod);
/* upstream buildSandboxClaimCR: the SandboxClaim "sbc-<run>" of the warm
 * pool pool.  Caller puts. */
json_object *agentrun_sandbox_claim(json_object *run, const char *pool);

/* upstream sandboxPhaseFromConditions: "Running" when the Sandbox's
 * condition Ready is "True", else "". */
const char *agentrun_sandbox_phase(json_object *sandbox);
/* upstream sandboxConditionMessage: the Ready condition's message, or
 * "" (borrowed). */
const char *agentrun_sandbox_message(json_object *sandbox);
/* upstream refineSandboxPhaseFromPod: "Completed" for a Succeeded pod,
 * "Failed" for a Failed one, else fallback (pod may be NULL). */
const char *agentrun_sandbox_pod_phase(json_object *pod, const char *fallback);

/* The Pending path's last step (upstream reconcilePendingAgentSandbox
 * after the shared steps): creates the Sandbox or the SandboxClaim from
 * pod (borrowed), sets the status (borrowed) Running with startedAt and
 * sandboxName / sandboxClaimName, and requeues in
 * AGENTRUN_SANDBOX_POLL_MS. */
void agentrun_sandbox_create(const struct rec_in *in, struct rec_out *out,
        json_object *status, json_object *pod);

/* What the Running path found (upstream reconcileRunningAgentSandbox). */
enum agentrun_sandbox_step {
	AGENTRUN_SANDBOX_WAIT,      /* still running: requeue verdict set */
	AGENTRUN_SANDBOX_ERROR,     /* a view failed: error verdict set */
	AGENTRUN_SANDBOX_FAILED,    /* fail the run with msg */
	AGENTRUN_SANDBOX_COMPLETED, /* the pod succeeded: read the result */
	AGENTRUN_SANDBOX_POD_FAILED /* the pod failed: the log's error,
	                             * else msg */
};

struct agentrun_sandbox_check {
	enum agentrun_sandbox_step step;
	/* the pod is the run's own (labelled with it): its log may be
	 * read (status.podName names it) */
	bool own_pod;
	char msg[512];
};

/* One Running pass of an agent-sandbox run: failed with upstream's
 * "dynamic client unavailable" when the CRDs are not served (any more);
 * the Sandbox (a child, else
 * read by name), status.podName set to its name, its phase from the
 * Ready condition refined by the pod of that name, the timeout
 * (spec.timeout only; the Sandbox is deleted), into *k. */
void agentrun_sandbox_check(const struct rec_in *in, struct rec_out *out,
        json_object *status, struct agentrun_sandbox_check *k);

#endif
