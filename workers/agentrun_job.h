/*
 * agentrun_job.h: the Job (and its pod template) of a task-mode AgentRun
 * (spec sympozium-controllers.md 1.12).  Pure: everything it needs comes
 * in struct agentrun_job_in.  Prefix agentrun_job_.
 */
#ifndef AGENTRUN_JOB_H
#define AGENTRUN_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/w3trace.h"

/* The run annotation whose value becomes TRACEPARENT (upstream
 * buildContainers). */
#define AGENTRUN_JOB_ANN_TRACEPARENT "otel.dev/traceparent"

/* A resolved skill sidecar (spec 1.3 step 9).  Borrowed. */
struct agentrun_sidecar {
	const char *pack;     /* the SkillPack name */
	json_object *sidecar; /* its spec.sidecar */
	json_object *params;  /* the skill ref's params (may be NULL) */
};

struct agentrun_job_in {
	json_object *run;    /* the AgentRun (borrowed) */
	json_object *skills; /* effective skill refs (borrowed; may be NULL) */
	const struct agentrun_sidecar *sidecars; /* task-mode sidecars */
	size_t nsidecars;
	const char *persona_pack; /* "" or NULL when none */
	bool memory_enabled;      /* instance legacy memory */
	int64_t timeout_s;        /* known timeout in seconds, 0: none */
	/* resolved MCP servers (agentrun_mcp_resolve entries, borrowed;
	 * NULL or empty: none): mcp-discover, mcp-bridge, mcp-config */
	json_object *mcp;
	/* the instance's spec.observability when enabled (borrowed; NULL:
	 * off): the OTel env of agent, ipc-bridge and the MCP containers */
	json_object *observability;
	/* the persona's access to its pack's shared memory ("read-write",
	 * ...), NULL when the pack has none: WORKFLOW_MEMORY_* and
	 * wait-for-shared-memory (spec 1.13) */
	const char *shared_access;
};

/* The Job for in->run, without owner reference.  Caller puts. */
json_object *agentrun_job_build(const struct agentrun_job_in *in);

/* The Job's pod spec (its spec.template.spec) alone: the agent-sandbox
 * backend builds its Sandbox's pod template from its containers,
 * initContainers and volumes (agentrun_sandbox.h).  Caller puts. */
json_object *agentrun_job_pod_spec(const struct agentrun_job_in *in);

/* status.traceID as upstream's reconcilePending / createSandboxCR write it
 * with no tracer provider: its no-op tracer keeps the span context of the
 * `otel.dev/traceparent` annotation, so a valid annotation's trace ID is
 * set; nothing otherwise. */
/* Sets (c) or clears (NULL) the span of the reconcile in progress (wtel.h):
 * while set, its traceparent is the MCP containers' TRACEPARENT and its
 * trace ID status.traceID, as upstream's tracer stamps them. */
void agentrun_job_trace(const struct w3t_ctx *c);
void agentrun_job_status_trace_id(json_object *run, json_object *status);

/* The name of host mount idx of a pack: "host-<pack>-<idx>" lower-cased,
 * [^a-z0-9] replaced by '-', '-' trimmed at both ends, "host-mount" when
 * empty, cut to 63 characters.  out must hold 64 bytes. */
void agentrun_job_host_volume(const char *pack, size_t idx, char out[64]);

/* True when skills (effective skill refs) name the "memory" SkillPack:
 * the run then gets MEMORY_SERVER_URL and the wait-for-memory init
 * container, and waits for the memory Deployment (spec 1.12). */
bool agentrun_job_memory_skill(json_object *skills);

/* "http://<instanceRef>-memory.<ns>.svc:8080".  Caller frees. */
char *agentrun_job_memory_url(json_object *run);

/* Builders shared with the postRun Job (agentrun_postrun.c): the
 * hardened container securityContext; {requests, limits} of cpu and
 * memory; {name, image, imagePullPolicy IfNotPresent} with its env and
 * volumeMounts arrays through *env and *mounts; a volume mount; name =
 * value for every string entry of map, in key order (spec env). */
json_object *agentrun_job_hardened(void);
json_object *agentrun_job_resources(const char *rcpu, const char *rmem,
        const char *lcpu, const char *lmem);
json_object *agentrun_job_container(const char *name, const char *image,
        json_object **env, json_object **mounts);
void agentrun_job_mount(
        json_object *mounts, const char *name, const char *path, bool ro);
void agentrun_job_env_map(json_object *env, json_object *map);

#endif
