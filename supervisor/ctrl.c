/*
 * ctrl.c: the watch table of each controller.  Child selectors use the
 * labels the upstream controllers put on their children (spec 0.4).
 */
#include <string.h>

#include "supervisor/ctrl.h"

#define SYMP(plural) {"sympozium.ai", "v1alpha1", plural, true}
#define CORE(plural) {"", "v1", plural, true}
#define APPS(plural) {"apps", "v1", plural, true}
#define BATCH(plural) {"batch", "v1", plural, true}

static const struct ctrl_watch agentrun[] = {
        {"AgentRun", SYMP("agentruns"), NULL, CTRL_PRIMARY},
        {"Job", BATCH("jobs"), "sympozium.ai/agent-run", CTRL_CHILD},
        /* read through views: the run's pod, instances, policies, packs */
        {"Pod", CORE("pods"), "sympozium.ai/agent-run", CTRL_READ},
        {"SympoziumInstance", SYMP("sympoziuminstances"), NULL, CTRL_READ},
        {"SkillPack", SYMP("skillpacks"), NULL, CTRL_READ},
        {"SympoziumPolicy", SYMP("sympoziumpolicies"), NULL, CTRL_READ},
};

static const struct ctrl_watch instance[] = {
        {"SympoziumInstance", SYMP("sympoziuminstances"), NULL, CTRL_PRIMARY},
        {"Deployment", APPS("deployments"), "sympozium.ai/instance",
                CTRL_CHILD},
        {"Service", CORE("services"), "sympozium.ai/instance", CTRL_CHILD},
        /* the active-run count is a view list */
        {"AgentRun", SYMP("agentruns"), NULL, CTRL_READ},
};

static const struct ctrl_watch personapack[] = {
        {"PersonaPack", SYMP("personapacks"), NULL, CTRL_PRIMARY},
        {"SympoziumInstance", SYMP("sympoziuminstances"),
                "sympozium.ai/persona-pack", CTRL_CHILD},
        {"SympoziumSchedule", SYMP("sympoziumschedules"),
                "sympozium.ai/persona-pack", CTRL_CHILD},
};

static const struct ctrl_watch skillpack[] = {
        {"SkillPack", SYMP("skillpacks"), NULL, CTRL_PRIMARY},
        {"ConfigMap", CORE("configmaps"), "sympozium.ai/skillpack",
                CTRL_CHILD},
};

static const struct ctrl_watch schedule[] = {
        {"SympoziumSchedule", SYMP("sympoziumschedules"), NULL, CTRL_PRIMARY},
        /* every run of an instance: the serving guard lists them too */
        {"AgentRun", SYMP("agentruns"), "sympozium.ai/instance", CTRL_CHILD},
        {"SympoziumInstance", SYMP("sympoziuminstances"), NULL, CTRL_READ},
};

static const struct ctrl_watch mcpserver[] = {
        {"MCPServer", SYMP("mcpservers"), NULL, CTRL_PRIMARY},
        {"Deployment", APPS("deployments"), "sympozium.ai/mcp-server",
                CTRL_CHILD},
        {"Service", CORE("services"), "sympozium.ai/mcp-server", CTRL_CHILD},
};

/* The test controller: ConfigMaps that ask for it, and its outputs. */
static const struct ctrl_watch testctl[] = {
        {"ConfigMap", CORE("configmaps"), "testctl.sympozium.ai/enabled",
                CTRL_PRIMARY},
        {"ConfigMap", CORE("configmaps"), "testctl.sympozium.ai/out",
                CTRL_CHILD},
};

#define SPEC(n, w) {n, w, sizeof(w) / sizeof(w[0])}

static const struct ctrl_spec specs[] = {
        SPEC("agentrun", agentrun),
        SPEC("instance", instance),
        SPEC("personapack", personapack),
        SPEC("skillpack", skillpack),
        SPEC("schedule", schedule),
        SPEC("mcpserver", mcpserver),
        SPEC("testctl", testctl),
};

const struct ctrl_spec *
ctrl_at(size_t i)
{
	return (i < sizeof(specs) / sizeof(specs[0]) ? &specs[i] : NULL);
}

const struct ctrl_spec *
ctrl_find(const char *name)
{
	const struct ctrl_spec *s;

	for (size_t i = 0; name != NULL && (s = ctrl_at(i)) != NULL; i++) {
		if (strcmp(s->name, name) == 0) {
			return (s);
		}
	}
	return (NULL);
}
