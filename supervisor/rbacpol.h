/*
 * rbacpol.h: the bounds of the skill RBAC the agentrun controller writes
 * (spec sympozium-controllers 1.3 steps 4, 14 and 15; docs/security.md).
 * Pure: the supervisor's write checker calls rbacpol_check() for each
 * write of an agentrun RESULT, with the AgentRun and a lookup into the
 * watch caches; nothing here does I/O.
 *
 * A write is within bounds when it is one of:
 *   - a create of the ServiceAccount RBACPOL_AGENT_SA in the run's
 *     namespace, with nothing but apiVersion, kind and metadata;
 *   - a create of a Role (run's namespace) or ClusterRole named
 *     RBACPOL_SKILL_PREFIX "<pack>-<run>" for a SkillPack the run
 *     references (its spec.skills, else its instance's), or a Role named
 *     RBACPOL_LIFECYCLE_PREFIX "<run>", whose rules are exactly the
 *     SkillPack's spec.sidecar.rbac (clusterRBAC for a ClusterRole; the
 *     pack looked up in the run's namespace, then in sympozium-system) or
 *     the run's spec.lifecycle.rbac; no aggregationRule, only the labels
 *     agentrun sets (agent-run = the run, managed-by = sympozium, skill =
 *     the pack or component = lifecycle); no '*' in apiGroups, resources,
 *     verbs or nonResourceURLs unless allow_wildcard;
 *   - a create of a RoleBinding / ClusterRoleBinding with such a name and
 *     labels, whose one subject is the ServiceAccount RBACPOL_AGENT_SA in
 *     the run's namespace and whose roleRef names a Role (ClusterRole for
 *     a ClusterRoleBinding) of such a name that the same RESULT creates,
 *     or that the cache holds with the run's agent-run and managed-by
 *     labels;
 *   - a delete of a Role, RoleBinding, ClusterRole or ClusterRoleBinding
 *     with such a name (prefix and run suffix; the pack need no longer be
 *     referenced), which, when the cache holds it, carries the run's
 *     labels.
 * Writes of any other resource are not this module's business (0).
 */
#ifndef SUPERVISOR_RBACPOL_H
#define SUPERVISOR_RBACPOL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "ipc/ipc.h"

#define RBACPOL_AGENT_SA         "sympozium-agent"
#define RBACPOL_SKILL_PREFIX     "sympozium-skill-"
#define RBACPOL_LIFECYCLE_PREFIX "sympozium-lifecycle-"

struct rbacpol_ctx {
	json_object *run; /* the AgentRun, borrowed */
	/* The cached object's JSON text, or NULL when not cached. */
	const char *(*lookup)(void *arg, const struct ipc_res *res,
	        const char *ns, const char *name);
	void *arg;
	bool allow_wildcard; /* --allow-skill-wildcard */
	const struct ipc_write *writes;
	size_t nwrites; /* the whole RESULT */
};

/*
 * Whether write w (one of c->writes, or any write of the same RESULT) is
 * within the bounds above.  Returns 0, or -1 with *rule set to a static
 * rule name ("rbac-op", "rbac-namespace", "rbac-name", "rbac-label",
 * "rbac-fields", "rbac-wildcard", "rbac-rules", "rbac-subject",
 * "rbac-roleref") and a one-line reason in detail[0..len).  One rule is
 * not a verdict on the worker: "rbac-pending" says the SkillPack or the
 * instance the write depends on is not in the cache (the worker may have
 * read it live just after it was created), so the write cannot be judged
 * yet; it must not be sent either, but the caller may requeue the key
 * rather than count a violation.
 */
int rbacpol_check(const struct rbacpol_ctx *c, const struct ipc_write *w,
        const char **rule, char *detail, size_t len);

#endif
