/*
 * hostile.h: the contract between the two halves of the hostile-worker
 * suite (tests/hostile/README.md): the hostile worker
 * (hostile_worker.c, bin/hostile/sympozium-worker-hostile) and its test
 * (test_hostile.c).  The names of the victim objects the test creates and
 * the worker attacks, the canary the Secrets carry, and the lines the
 * worker writes to stderr (the supervisor's log) so the test can follow
 * it.  Prefix HOSTILE_.
 */
#ifndef HOSTILE_H
#define HOSTILE_H

/* The namespace of the primaries (SkillPacks named after their attack). */
#define HOSTILE_NS "default"
/* Another tenant's namespace: its ConfigMap, the Namespace itself. */
#define HOSTILE_NS_VICTIM "victim-ns"
#define HOSTILE_CM_VICTIM "victim-cm"
/* A ConfigMap of the primaries' namespace that no primary owns. */
#define HOSTILE_CM_LOOSE "loose-cm"
/* Another primary (SkillPack default/owner-b) and its child ConfigMap. */
#define HOSTILE_OTHER_PRIMARY "owner-b"
#define HOSTILE_OTHER_CHILD   "owner-b-child"
/* Secrets carrying the canary: in kube-system, in the primaries'
 * namespace, and one created by `kubectl apply` (the canary also in its
 * last-applied-configuration annotation). */
#define HOSTILE_SECRET         "victim-secret"
#define HOSTILE_SECRET_APPLIED "applied-secret"
#define HOSTILE_CANARY         "SECRET-CANARY-5f0c9e2a"
/* The operator's own Deployment and the leader Lease. */
#define HOSTILE_OP_NS     "sympozium-system"
#define HOSTILE_OP_DEPLOY "sympozium-controller"
#define HOSTILE_OP_IMAGE  "ghcr.io/sympozium-ai/sympozium/controller:v0"
#define HOSTILE_LEASE     "sympozium-controller-leader"
#define HOSTILE_HOLDER    "replica-a"
/* A primary whose name starts with this is reconciled harmlessly (done,
 * no writes): the test's proof that a worker serves again. */
#define HOSTILE_BENIGN_PREFIX "ok-"
/* The label and Event reason of everything the worker writes. */
#define HOSTILE_LABEL  "hostile.sympozium.ai/attack"
#define HOSTILE_REASON "HostileEvent"

/* stderr lines, "hostile[PID]: " then:
 *   "hello"                          once the sandbox is entered
 *   "attack NAME start"              before the attack
 *   "attack NAME sent"               its RESULT (or frame) is sent
 *   "attack NAME finished"           the write loop ended by itself
 *   "benign KEY done"                a benign or repeated key answered
 *   "view NAME reply: JSON"          what a view answered (truncated) */
#define HOSTILE_TAG "hostile["

#endif
