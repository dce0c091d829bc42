/*
 * contract.c: the table of controllers (spec sympozium-controllers.md,
 * the "Watches" sections): each one's primary kind, the child kinds it
 * owns, label-selected by the label key its reconciler puts on them (so
 * unrelated objects are never cached), and the kinds it only reads.
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
};

static const struct contract_watch personapack[] = {
	{ "PersonaPack", CONTRACT_RES_PERSONAPACKS, NULL, CONTRACT_PRIMARY },
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES,
	        CONTRACT_LABEL_PERSONA_PACK, CONTRACT_CHILD },
	{ "SympoziumSchedule", CONTRACT_RES_SCHEDULES,
	        CONTRACT_LABEL_PERSONA_PACK, CONTRACT_CHILD },
};

static const struct contract_watch skillpack[] = {
	{ "SkillPack", CONTRACT_RES_SKILLPACKS, NULL, CONTRACT_PRIMARY },
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, CONTRACT_LABEL_SKILLPACK,
	        CONTRACT_CHILD },
};

static const struct contract_watch schedule[] = {
	{ "SympoziumSchedule", CONTRACT_RES_SCHEDULES, NULL,
	        CONTRACT_PRIMARY },
	/* every run of an instance: the serving guard lists them too */
	{ "AgentRun", CONTRACT_RES_AGENTRUNS, CONTRACT_LABEL_INSTANCE,
	        CONTRACT_CHILD },
	{ "SympoziumInstance", CONTRACT_RES_INSTANCES, NULL, CONTRACT_READ },
};

static const struct contract_watch mcpserver[] = {
	{ "MCPServer", CONTRACT_RES_MCPSERVERS, NULL, CONTRACT_PRIMARY },
	{ "Deployment", CONTRACT_RES_DEPLOYMENTS, CONTRACT_LABEL_MCP_SERVER,
	        CONTRACT_CHILD },
	{ "Service", CONTRACT_RES_SERVICES, CONTRACT_LABEL_MCP_SERVER,
	        CONTRACT_CHILD },
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
	{ CONTRACT_RBAC("clusterroles"), V_LIST, CONTRACT_VIEW_CLUSTER,
	        CONTRACT_LABEL_AGENT_RUN },
	{ CONTRACT_RBAC("clusterrolebindings"), V_LIST, CONTRACT_VIEW_CLUSTER,
	        CONTRACT_LABEL_AGENT_RUN },
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
};

static const struct contract_view schedule_views[] = {
	{ CONTRACT_RES_AGENTRUNS, V_GET | V_LIST, V_NS, NULL },
	{ CONTRACT_RES_INSTANCES, V_GET, V_NS, NULL },
	{ CONTRACT_RES_CONFIGMAPS, V_GET, V_NS, NULL },
};

static const struct contract_view mcpserver_views[] = {
	{ CONTRACT_RES_SECRETS, V_SECRET, V_NS, NULL },
};

#define CTRL(n, fin, w, v)                                                    \
	{                                                                     \
		.name = n, .finalizer = fin, .watches = w,                    \
		.nwatches = NELEM(w), .views = v, .nviews = NELEM(v)          \
	}
#define CTRL_NO_VIEWS(n, fin, w)                                              \
	{                                                                     \
		.name = n, .finalizer = fin, .watches = w,                    \
		.nwatches = NELEM(w)                                          \
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
