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

#define CTRL(n, fin, w)                                                       \
	{                                                                     \
		n, fin, w, NELEM(w)                                           \
	}

static const struct contract_ctrl ctrls[] = {
	CTRL("agentrun", CONTRACT_FINALIZER_AGENTRUN, agentrun),
	CTRL("instance", CONTRACT_FINALIZER_INSTANCE, instance),
	CTRL("personapack", CONTRACT_FINALIZER_PERSONAPACK, personapack),
	CTRL("skillpack", CONTRACT_FINALIZER_SKILLPACK, skillpack),
	CTRL("schedule", CONTRACT_FINALIZER_SCHEDULE, schedule),
	CTRL("mcpserver", NULL, mcpserver),
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
