/*
 * contract.c: the table of controllers (spec sympozium-controllers.md,
 * the "Watches" sections): each one's primary kind, the child kinds it
 * owns, label-selected by the label key its reconciler puts on them (so
 * unrelated objects are never cached), and the kinds it only reads
 * (among them, label-selected, what it mutates besides its children, so
 * the write policy can see whom an object belongs to); and next to each,
 * its write table (what the reconcilers in workers/ really write:
 * supervisor/README.md "The write policy").
 */
#include <string.h>

#include "common/contract.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct contract_watch agentrun[] = {
	{ "AgentRun", CONTRACT_RES_AGENTRUNS, NULL, CONTRACT_PRIMARY },
	{ "Job", CONTRACT_RES_JOBS, CONTRACT_LABEL_AGENT_RUN, CONTRACT_CHILD },
	/* read through views: the run's pod, instances, policies, packs */
	{ "Pod", CONTRACT_RES_PODS, CONTRACT_LABEL_AGENT_RUN, CONTRACT_READ },
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES, NULL, CONTRACT_READ },
	{ "SkillPack", CONTRACT_RES_SKILLPACKS, NULL, CONTRACT_READ },
	{ "SympoziumPolicy", CONTRACT_RES_POLICIES, NULL, CONTRACT_READ },
	/* cached for the write policy: what the reconciler mutates */
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, CONTRACT_LABEL_AGENT_RUN,
	        CONTRACT_READ },
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS,
	        CONTRACT_LABEL_COMPONENT "=memory", CONTRACT_READ },
	/* server mode (spec 1.4): the web-proxy Deployment and Service */
	{ "Deployment", CONTRACT_RES_DEPLOYMENTS, CONTRACT_LABEL_AGENT_RUN,
	        CONTRACT_CHILD },
	{ "Service", CONTRACT_RES_SERVICES, CONTRACT_LABEL_AGENT_RUN,
	        CONTRACT_CHILD },
	/* postRun hooks (spec 1.3 step 16, 1.6 step 2): the workspace PVC,
	 * deleted when the run completes only when cached */
	{ "PersistentVolumeClaim", CONTRACT_RES_PVCS, CONTRACT_LABEL_AGENT_RUN,
	        CONTRACT_CHILD },
	/* agent-sandbox mode (upstream agentrun_sandbox.go): the run's
	 * Sandbox CR, watched only where its CRD is served */
	{ "Sandbox", CONTRACT_RES_SANDBOXES, CONTRACT_LABEL_AGENT_RUN,
	        CONTRACT_CHILD },
	/* server mode with a gateway: the HTTPRoute <run>-web, watched only
	 * where the Gateway API serves it */
	{ "HTTPRoute", CONTRACT_RES_HTTPROUTES, CONTRACT_LABEL_AGENT_RUN,
	        CONTRACT_CHILD },
};

/* Every controller may emit Events about its primary. */
#define W_EVENTS                                                              \
	{                                                                     \
		.res = CONTRACT_RES_EVENTS, .ops = CONTRACT_W_EVENT,          \
		.own = CONTRACT_OWN_SELF                                      \
	}
/* The primary's own writes: updates, status, patches. */
#define W_SELF(r)                                                             \
	{                                                                     \
		.res = r,                                                     \
		.ops = CONTRACT_W_UPDATE | CONTRACT_W_STATUS                  \
		        | CONTRACT_W_PATCH,                                   \
		.own = CONTRACT_OWN_SELF                                      \
	}
#define W_CHILD(r, o, l)                                                      \
	{                                                                     \
		.res = r, .ops = o, .own = CONTRACT_OWN_CHILD, .label = l     \
	}
/* The cluster-scoped skill RBAC of a run: prefix and label. */
#define W_CLUSTER(r)                                                          \
	{                                                                     \
		.res = r, .ops = CONTRACT_W_CREATE | CONTRACT_W_DELETE,       \
		.own = CONTRACT_OWN_CLUSTER,                                  \
		.label = CONTRACT_LABEL_AGENT_RUN,                            \
		.prefix = CONTRACT_PREFIX_SKILL_RBAC                          \
	}

static const struct contract_write agentrun_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_AGENTRUNS),
	/* history pruning: completed runs of the same instance */
	{ .res = CONTRACT_RES_AGENTRUNS,
	        .ops = CONTRACT_W_DELETE,
	        .own = CONTRACT_OWN_LABEL,
	        .label = CONTRACT_LABEL_INSTANCE,
	        .ref = "spec.instanceRef" },
	{ .res = CONTRACT_RES_SERVICEACCOUNTS,
	        .ops = CONTRACT_W_CREATE,
	        .own = CONTRACT_OWN_SHARED,
	        .prefix = CONTRACT_AGENT_SA },
	/* input, MCP and mirrored skill ConfigMaps */
	W_CHILD(CONTRACT_RES_CONFIGMAPS, CONTRACT_W_CREATE,
	        CONTRACT_LABEL_AGENT_RUN),
	/* a mirror is refreshed by whichever run finds it stale */
	{ .res = CONTRACT_RES_CONFIGMAPS,
	        .ops = CONTRACT_W_UPDATE,
	        .own = CONTRACT_OWN_LABEL,
	        .match = CONTRACT_LABEL_COMPONENT "=skillpack-mirror" },
	/* the instance's memory, written back after a run */
	{ .res = CONTRACT_RES_CONFIGMAPS,
	        .ops = CONTRACT_W_UPDATE,
	        .own = CONTRACT_OWN_LABEL,
	        .label = CONTRACT_LABEL_INSTANCE,
	        .ref = "spec.instanceRef",
	        .match = CONTRACT_LABEL_COMPONENT "=memory" },
	W_CHILD(CONTRACT_RES_JOBS, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_AGENT_RUN),
	/* skill RBAC: the content is checked by wpol_rbac_check() */
	W_CHILD(CONTRACT_RES_ROLES, CONTRACT_W_CREATE,
	        CONTRACT_LABEL_AGENT_RUN),
	W_CHILD(CONTRACT_RES_ROLEBINDINGS, CONTRACT_W_CREATE,
	        CONTRACT_LABEL_AGENT_RUN),
	W_CLUSTER(CONTRACT_RES_CLUSTERROLES),
	W_CLUSTER(CONTRACT_RES_CLUSTERROLEBINDINGS),
	/* server mode (spec 1.4): created; deleted with the run */
	W_CHILD(CONTRACT_RES_DEPLOYMENTS,
	        CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_AGENT_RUN),
	W_CHILD(CONTRACT_RES_SERVICES, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_AGENT_RUN),
	/* postRun hooks (spec 1.3 step 16, 1.6 step 2): the workspace PVC
	 * <run>-workspace (the postRun Job is a Job child as above) */
	W_CHILD(CONTRACT_RES_PVCS, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_AGENT_RUN),
	/* agent-sandbox mode: the Sandbox (deleted on timeout) or the
	 * SandboxClaim of a warm-pool run */
	W_CHILD(CONTRACT_RES_SANDBOXES, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_AGENT_RUN),
	W_CHILD(CONTRACT_RES_SANDBOXCLAIMS, CONTRACT_W_CREATE,
	        CONTRACT_LABEL_AGENT_RUN),
	/* server mode with a gateway: the HTTPRoute <run>-web */
	W_CHILD(CONTRACT_RES_HTTPROUTES, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_AGENT_RUN),
	/* server mode: the web-proxy API key Secret <instance>-web-proxy-key,
	 * created once with a key the worker draws (docs/security.md) */
	{ .res = CONTRACT_RES_SECRETS,
	        .ops = CONTRACT_W_CREATE,
	        .own = CONTRACT_OWN_KEY_SECRET,
	        .label = CONTRACT_LABEL_AGENT_RUN,
	        .ref = "spec.instanceRef",
	        .suffix = CONTRACT_WEB_PROXY_KEY_SUFFIX,
	        .match = CONTRACT_WEB_PROXY_KEY_DATA },
};

static const struct contract_watch instance[] = {
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES, NULL,
	        CONTRACT_PRIMARY },
	{ "Deployment", CONTRACT_RES_DEPLOYMENTS, CONTRACT_LABEL_INSTANCE,
	        CONTRACT_CHILD },
	{ "Service", CONTRACT_RES_SERVICES, CONTRACT_LABEL_INSTANCE,
	        CONTRACT_CHILD },
	/* the active-run count is a view list */
	{ "AgentRun", CONTRACT_RES_AGENTRUNS, NULL, CONTRACT_READ },
	/* cached for the write policy: the memory ConfigMap */
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, CONTRACT_LABEL_INSTANCE,
	        CONTRACT_READ },
};

#define INST_W CONTRACT_W_CREATE | CONTRACT_W_DELETE
static const struct contract_write instance_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_INSTANCES),
	W_CHILD(CONTRACT_RES_DEPLOYMENTS, INST_W, CONTRACT_LABEL_INSTANCE),
	W_CHILD(CONTRACT_RES_SERVICES, INST_W, CONTRACT_LABEL_INSTANCE),
	W_CHILD(CONTRACT_RES_CONFIGMAPS, INST_W, CONTRACT_LABEL_INSTANCE),
	W_CHILD(CONTRACT_RES_PVCS, CONTRACT_W_CREATE, CONTRACT_LABEL_INSTANCE),
	/* the web-endpoint run */
	W_CHILD(CONTRACT_RES_AGENTRUNS, CONTRACT_W_CREATE,
	        CONTRACT_LABEL_INSTANCE),
};

static const struct contract_watch personapack[] = {
	{ "PersonaPack", CONTRACT_RES_PERSONAPACKS, NULL, CONTRACT_PRIMARY },
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES,
	        CONTRACT_LABEL_PERSONA_PACK, CONTRACT_CHILD },
	{ "SympoziumSchedule", CONTRACT_RES_SCHEDULES,
	        CONTRACT_LABEL_PERSONA_PACK, CONTRACT_CHILD },
	/* cached for the write policy: the seed memory ConfigMaps */
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, CONTRACT_LABEL_PERSONA_PACK,
	        CONTRACT_READ },
	/* the shared memory server (spec 3.4) */
	{ "PersistentVolumeClaim", CONTRACT_RES_PVCS,
	        CONTRACT_LABEL_PERSONA_PACK, CONTRACT_CHILD },
	{ "Deployment", CONTRACT_RES_DEPLOYMENTS, CONTRACT_LABEL_PERSONA_PACK,
	        CONTRACT_CHILD },
	{ "Service", CONTRACT_RES_SERVICES, CONTRACT_LABEL_PERSONA_PACK,
	        CONTRACT_CHILD },
};

#define PP_W CONTRACT_W_CREATE | CONTRACT_W_UPDATE | CONTRACT_W_DELETE
static const struct contract_write personapack_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_PERSONAPACKS),
	W_CHILD(CONTRACT_RES_INSTANCES, PP_W, CONTRACT_LABEL_PERSONA_PACK),
	W_CHILD(CONTRACT_RES_SCHEDULES, PP_W, CONTRACT_LABEL_PERSONA_PACK),
	W_CHILD(CONTRACT_RES_CONFIGMAPS, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_PERSONA_PACK),
	/* an unowned instance or schedule of a stamped name: adopted */
	{ .res = CONTRACT_RES_INSTANCES,
	        .ops = CONTRACT_W_PATCH,
	        .own = CONTRACT_OWN_ORPHAN,
	        .label = CONTRACT_LABEL_PERSONA_PACK,
	        .ref = "spec.personas",
	        .match = "name" },
	{ .res = CONTRACT_RES_SCHEDULES,
	        .ops = CONTRACT_W_PATCH,
	        .own = CONTRACT_OWN_ORPHAN,
	        .label = CONTRACT_LABEL_PERSONA_PACK,
	        .ref = "spec.personas",
	        .match = "name",
	        .suffix = "-schedule" },
	/* the auth Secrets the pack names, deleted when it is disabled */
	{ .res = CONTRACT_RES_SECRETS,
	        .ops = CONTRACT_W_DELETE,
	        .own = CONTRACT_OWN_NAMED,
	        .ref = "spec.authRefs",
	        .match = "secret" },
	/* the shared memory server (spec 3.4): created once, never
	 * updated; deleted when disabled or with the pack */
	W_CHILD(CONTRACT_RES_PVCS, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_PERSONA_PACK),
	W_CHILD(CONTRACT_RES_DEPLOYMENTS,
	        CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_PERSONA_PACK),
	W_CHILD(CONTRACT_RES_SERVICES, CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_PERSONA_PACK),
};

static const struct contract_watch skillpack[] = {
	{ "SkillPack", CONTRACT_RES_SKILLPACKS, NULL, CONTRACT_PRIMARY },
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, CONTRACT_LABEL_SKILLPACK,
	        CONTRACT_CHILD },
};

static const struct contract_write skillpack_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_SKILLPACKS),
	W_CHILD(CONTRACT_RES_CONFIGMAPS,
	        CONTRACT_W_CREATE | CONTRACT_W_UPDATE | CONTRACT_W_DELETE,
	        CONTRACT_LABEL_SKILLPACK),
};

static const struct contract_watch schedule[] = {
	{ "SympoziumSchedule", CONTRACT_RES_SCHEDULES, NULL,
	        CONTRACT_PRIMARY },
	/* every run of an instance: the serving guard lists them too */
	{ "AgentRun", CONTRACT_RES_AGENTRUNS, CONTRACT_LABEL_INSTANCE,
	        CONTRACT_CHILD },
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES, NULL, CONTRACT_READ },
};

static const struct contract_write schedule_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_SCHEDULES),
	/* labelled with the instance's name, owned by the schedule */
	{ .res = CONTRACT_RES_AGENTRUNS,
	        .ops = CONTRACT_W_CREATE,
	        .own = CONTRACT_OWN_CHILD,
	        .label = CONTRACT_LABEL_INSTANCE,
	        .any_value = true },
};

static const struct contract_watch mcpserver[] = {
	{ "MCPServer", CONTRACT_RES_MCPSERVERS, NULL, CONTRACT_PRIMARY },
	{ "Deployment", CONTRACT_RES_DEPLOYMENTS, CONTRACT_LABEL_MCP_SERVER,
	        CONTRACT_CHILD },
	{ "Service", CONTRACT_RES_SERVICES, CONTRACT_LABEL_MCP_SERVER,
	        CONTRACT_CHILD },
};

#define MCP_W CONTRACT_W_CREATE | CONTRACT_W_UPDATE
static const struct contract_write mcpserver_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_MCPSERVERS),
	W_CHILD(CONTRACT_RES_DEPLOYMENTS, MCP_W, CONTRACT_LABEL_MCP_SERVER),
	W_CHILD(CONTRACT_RES_SERVICES, MCP_W, CONTRACT_LABEL_MCP_SERVER),
	/* upstream's Deployment and Service carry no label: adopted */
	{ .res = CONTRACT_RES_DEPLOYMENTS,
	        .ops = CONTRACT_W_PATCH,
	        .own = CONTRACT_OWN_ADOPT,
	        .label = CONTRACT_LABEL_MCP_SERVER },
	{ .res = CONTRACT_RES_SERVICES,
	        .ops = CONTRACT_W_PATCH,
	        .own = CONTRACT_OWN_ADOPT,
	        .label = CONTRACT_LABEL_MCP_SERVER },
};

static const struct contract_watch policy[] = {
	{ "SympoziumPolicy", CONTRACT_RES_POLICIES, NULL, CONTRACT_PRIMARY },
	/* listed through a view; upstream watches only the policy, so an
	 * instance's events enqueue nothing */
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES, NULL, CONTRACT_READ },
};

/* status.boundInstances only (and Events, as every controller) */
static const struct contract_write policy_w[] = {
	W_EVENTS,
	{ .res = CONTRACT_RES_POLICIES,
	        .ops = CONTRACT_W_STATUS,
	        .own = CONTRACT_OWN_SELF },
};

static const struct contract_watch config[] = {
	/* upstream watches only the config (For, no Owns): the Gateway API
	 * objects are read live through views, as the Gateway API may not
	 * be served (a watch of it would never sync) */
	{ "SympoziumConfig", CONTRACT_RES_CONFIGS, NULL, CONTRACT_PRIMARY },
};

#define CONFIG_MANAGED CONTRACT_LABEL_MANAGED_BY "=" CONTRACT_MANAGED_BY_CONFIG
static const char *const config_gw_paths[] = { "/spec/gatewayClassName",
	"/spec/listeners", "/metadata/annotations", NULL };

/* the finalizer and status; the Gateway and GatewayClass its spec names
 * (created labelled, the Gateway controlled by it; deleted by that name
 * only); the Gateway's spec and annotations by a JSON patch that tests
 * the controller reference */
static const struct contract_write config_w[] = {
	W_EVENTS,
	W_SELF(CONTRACT_RES_CONFIGS),
	{ .res = CONTRACT_RES_GATEWAYS,
	        .ops = CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        .own = CONTRACT_OWN_SPEC_NAME,
	        .ref = "spec.gateway.name",
	        .prefix = "sympozium-gateway",
	        .match = CONFIG_MANAGED },
	{ .res = CONTRACT_RES_GATEWAYS,
	        .ops = CONTRACT_W_PATCH,
	        .own = CONTRACT_OWN_TESTED,
	        .paths = config_gw_paths },
	{ .res = CONTRACT_RES_GATEWAYCLASSES,
	        .ops = CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        .own = CONTRACT_OWN_SPEC_NAME,
	        .ref = "spec.gateway.gatewayClassName",
	        .prefix = "sympozium",
	        .match = CONFIG_MANAGED },
};

/* ---- the view tables: what each reconciler reads (workers/), where
 * upstream reads it: the key's namespace, built-ins also in the system
 * one (spec 0.2), the run's own pods and cluster RBAC by its label ---- */

#define V_GET    CONTRACT_VIEW_GET
#define V_LIST   CONTRACT_VIEW_LIST
#define V_SECRET CONTRACT_VIEW_SECRET
#define V_LOG    CONTRACT_VIEW_LOG
#define V_NS     CONTRACT_VIEW_KEY_NS
#define V_OR_SYS CONTRACT_VIEW_OR_SYS

static const struct contract_view agentrun_views[] = {
	{ CONTRACT_RES_AGENTRUNS, V_LIST, V_NS, NULL },
	{ CONTRACT_RES_INSTANCES, V_GET, V_NS, NULL },
	{ CONTRACT_RES_POLICIES, V_GET, V_NS, NULL },
	{ CONTRACT_RES_SKILLPACKS, V_GET, V_OR_SYS, NULL },
	{ CONTRACT_RES_MCPSERVERS, V_GET, V_OR_SYS, NULL },
	/* skill ConfigMaps mirrored from the system namespace, memory */
	{ CONTRACT_RES_CONFIGMAPS, V_GET, V_OR_SYS, NULL },
	{ CONTRACT_RES_PODS, V_GET | V_LIST | V_LOG, V_NS,
	        CONTRACT_LABEL_AGENT_RUN },
	{ CONTRACT_RES_CLUSTERROLES, V_LIST, CONTRACT_VIEW_CLUSTER,
	        CONTRACT_LABEL_AGENT_RUN },
	{ CONTRACT_RES_CLUSTERROLEBINDINGS, V_LIST, CONTRACT_VIEW_CLUSTER,
	        CONTRACT_LABEL_AGENT_RUN },
	/* the instance's memory server, waited for (spec 1.3 step 12) */
	{ CONTRACT_RES_DEPLOYMENTS, V_GET, V_NS, NULL },
	/* the run's PersonaPack: shared memory (spec 1.13) */
	{ CONTRACT_RES_PERSONAPACKS, V_GET, V_NS, NULL },
	/* agent-sandbox mode: the run's Sandbox by name (a claim's is the
	 * agent-sandbox controller's, without the run's label) */
	{ CONTRACT_RES_SANDBOXES, V_GET, V_NS, NULL },
	/* server mode: whether the web-proxy key Secret exists (metadata) */
	{ CONTRACT_RES_SECRETS, V_SECRET, V_NS, NULL },
	/* server mode: the gateway of SympoziumConfig sympozium-system/default
	 */
	{ CONTRACT_RES_CONFIGS, V_GET, V_OR_SYS, NULL },
};

static const struct contract_view instance_views[] = {
	{ CONTRACT_RES_AGENTRUNS, V_LIST, V_NS, NULL },
	{ CONTRACT_RES_DEPLOYMENTS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_CONFIGMAPS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_PVCS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_SECRETS, V_SECRET, V_NS, NULL },
};

static const struct contract_view personapack_views[] = {
	{ CONTRACT_RES_INSTANCES, V_GET, V_NS, NULL },
	{ CONTRACT_RES_SCHEDULES, V_GET, V_NS, NULL },
	{ CONTRACT_RES_CONFIGMAPS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_SECRETS, V_SECRET, V_NS, NULL },
	/* the shared memory server's objects the children miss */
	{ CONTRACT_RES_PVCS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_DEPLOYMENTS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_SERVICES, V_GET, V_NS, NULL },
};

static const struct contract_view schedule_views[] = {
	{ CONTRACT_RES_AGENTRUNS, V_LIST, V_NS, NULL },
	{ CONTRACT_RES_INSTANCES, V_GET, V_NS, NULL },
	{ CONTRACT_RES_CONFIGMAPS, V_GET, V_NS, NULL },
};

static const struct contract_view mcpserver_views[] = {
	{ CONTRACT_RES_SECRETS, V_SECRET, V_NS, NULL },
	/* a Deployment or Service of its name the child watch does not
	 * see (upstream's, unlabelled: adopted) */
	{ CONTRACT_RES_DEPLOYMENTS, V_GET, V_NS, NULL },
	{ CONTRACT_RES_SERVICES, V_GET, V_NS, NULL },
};

static const struct contract_view policy_views[] = {
	{ CONTRACT_RES_INSTANCES, V_LIST, V_NS, NULL },
};

/* the Gateway API objects, live (no cache holds them) */
static const struct contract_view config_views[] = {
	/* the one the spec names; a list is the probe of whether the
	 * Gateway API is served */
	{ CONTRACT_RES_GATEWAYS, V_GET | V_LIST, V_NS, NULL },
	{ CONTRACT_RES_GATEWAYCLASSES, V_GET, CONTRACT_VIEW_CLUSTER, NULL },
};

#define CTRL(n, fin, w, v)                                                    \
	{                                                                     \
		.name = n, .finalizer = fin, .watches = w,                    \
		.nwatches = NELEM(w), .writes = w##_w,                        \
		.nwrites = NELEM(w##_w), .views = v, .nviews = NELEM(v)       \
	}
#define CTRL_NO_VIEWS(n, fin, w)                                              \
	{                                                                     \
		.name = n, .finalizer = fin, .watches = w,                    \
		.nwatches = NELEM(w), .writes = w##_w,                        \
		.nwrites = NELEM(w##_w)                                       \
	}

static const struct contract_ctrl ctrls[] = {
	CTRL("agentrun", CONTRACT_FINALIZER_AGENTRUN, agentrun,
	        agentrun_views),
	CTRL("instance", CONTRACT_FINALIZER_INSTANCE, instance,
	        instance_views),
	CTRL("personapack", CONTRACT_FINALIZER_PERSONAPACK, personapack,
	        personapack_views),
	CTRL_NO_VIEWS("skillpack", CONTRACT_FINALIZER_SKILLPACK, skillpack),
	CTRL("schedule", CONTRACT_FINALIZER_SCHEDULE, schedule,
	        schedule_views),
	CTRL("mcpserver", NULL, mcpserver, mcpserver_views),
	CTRL("policy", NULL, policy, policy_views),
	CTRL("config", CONTRACT_FINALIZER_CONFIG, config, config_views),
};

const struct contract_ctrl *
contract_at(size_t i)
{
	if (i < NELEM(ctrls)) {
		return (&ctrls[i]);
	}
	i -= NELEM(ctrls);
	for (size_t j = 0; contract_extra != NULL && contract_extra[j] != NULL;
	        j++) {
		if (j == i) {
			return (contract_extra[j]);
		}
	}
	return (NULL);
}

const struct contract_ctrl *
contract_find(const char *name)
{
	const struct contract_ctrl *c;

	for (size_t i = 0; name != NULL && (c = contract_at(i)) != NULL; i++) {
		if (strcmp(c->name, name) == 0) {
			return (c);
		}
	}
	return (NULL);
}

bool
contract_is_extra(const struct contract_ctrl *c)
{
	for (size_t i = 0; i < NELEM(ctrls); i++) {
		if (c == &ctrls[i]) {
			return (false);
		}
	}
	return (c != NULL);
}

bool
contract_optional(const struct kapi_res *res)
{
	return (res != NULL && res->group != NULL
	        && (strcmp(res->group, CONTRACT_SANDBOX_GROUP) == 0
	                || strcmp(res->group, CONTRACT_GATEWAY_GROUP) == 0));
}
