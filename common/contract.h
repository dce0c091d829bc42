/*
 * contract.h: what the supervisor and the workers must agree on, in one
 * place.  The label keys the reconcilers put on objects (and the
 * supervisor's child watches select by), the annotation keys they read,
 * their finalizer names, the resources and kinds of the controllers' watches,
 * and the table of controllers: for each one its primary kind, the child
 * kinds it owns with the label key that marks every such child, the kinds
 * it only reads, and its finalizer.
 *
 * supervisor/ctrl.c builds its watch tables from contract_at(); the
 * reconcilers (workers/) name labels, finalizers and resources with these
 * macros.  Neither side spells one of these strings itself.  Test builds
 * add controllers through contract_extra (a weak symbol the product
 * binaries do not define).  Pure data.  Prefix contract_, CONTRACT_.
 */
#ifndef CONTRACT_H
#define CONTRACT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/kapi.h"

/* ---- label keys ---- */

/* Child labels: the supervisor's child watches select on these keys. */
#define CONTRACT_LABEL_AGENT_RUN    "sympozium.ai/agent-run"
#define CONTRACT_LABEL_INSTANCE     "sympozium.ai/instance"
#define CONTRACT_LABEL_PERSONA_PACK "sympozium.ai/persona-pack"
#define CONTRACT_LABEL_SKILLPACK    "sympozium.ai/skillpack"
#define CONTRACT_LABEL_MCP_SERVER   "sympozium.ai/mcp-server"
/* Other labels the reconcilers set or read. */
#define CONTRACT_LABEL_COMPONENT  "sympozium.ai/component"
#define CONTRACT_LABEL_MANAGED_BY "sympozium.ai/managed-by"
#define CONTRACT_LABEL_SOURCE     "sympozium.ai/source"
#define CONTRACT_LABEL_SKILL      "sympozium.ai/skill"
#define CONTRACT_LABEL_PERSONA    "sympozium.ai/persona"
#define CONTRACT_LABEL_MEMORY     "sympozium.ai/memory"
#define CONTRACT_LABEL_CHANNEL    "sympozium.ai/channel"
#define CONTRACT_LABEL_SCHEDULE   "sympozium.ai/schedule"
#define CONTRACT_LABEL_TYPE       "sympozium.ai/type"
/* The Kubernetes recommended labels. */
#define CONTRACT_LABEL_K8S_MANAGED_BY "app.kubernetes.io/managed-by"
#define CONTRACT_LABEL_K8S_PART_OF    "app.kubernetes.io/part-of"
#define CONTRACT_LABEL_K8S_NAME       "app.kubernetes.io/name"
#define CONTRACT_LABEL_K8S_INSTANCE   "app.kubernetes.io/instance"

/* ---- annotation keys ---- */

#define CONTRACT_ANN_REPLY_CHANNEL "sympozium.ai/reply-channel"
#define CONTRACT_ANN_REPLY_CHAT_ID "sympozium.ai/reply-chat-id"

/* ---- finalizers ---- */

#define CONTRACT_FINALIZER_AGENTRUN    "sympozium.ai/agentrun-finalizer"
#define CONTRACT_FINALIZER_INSTANCE    "sympozium.ai/finalizer"
#define CONTRACT_FINALIZER_PERSONAPACK "sympozium.ai/personapack-finalizer"
#define CONTRACT_FINALIZER_SKILLPACK   "sympozium.ai/skillpack-finalizer"
#define CONTRACT_FINALIZER_SCHEDULE    "sympozium.ai/schedule-finalizer"

/* ---- resources: initialisers of struct kapi_res or struct ipc_res ---- */

/* clang-format off */
#define CONTRACT_GROUP   "sympozium.ai"
#define CONTRACT_VERSION "v1alpha1"
#define CONTRACT_SYMP(plural) {CONTRACT_GROUP, CONTRACT_VERSION, plural, true}

#define CONTRACT_RES_AGENTRUNS    CONTRACT_SYMP("agentruns")
#define CONTRACT_RES_INSTANCES    CONTRACT_SYMP("sympoziuminstances")
#define CONTRACT_RES_PERSONAPACKS CONTRACT_SYMP("personapacks")
#define CONTRACT_RES_SKILLPACKS   CONTRACT_SYMP("skillpacks")
#define CONTRACT_RES_SCHEDULES    CONTRACT_SYMP("sympoziumschedules")
#define CONTRACT_RES_MCPSERVERS   CONTRACT_SYMP("mcpservers")
#define CONTRACT_RES_POLICIES     CONTRACT_SYMP("sympoziumpolicies")
#define CONTRACT_RES_CONFIGMAPS   {"", "v1", "configmaps", true}
#define CONTRACT_RES_SERVICES     {"", "v1", "services", true}
#define CONTRACT_RES_PODS         {"", "v1", "pods", true}
#define CONTRACT_RES_DEPLOYMENTS  {"apps", "v1", "deployments", true}
#define CONTRACT_RES_JOBS         {"batch", "v1", "jobs", true}
/* clang-format on */

/* ---- the controllers ---- */

enum contract_role {
	CONTRACT_PRIMARY, /* For(): its events enqueue the object */
	CONTRACT_CHILD,   /* Owns(): its events enqueue the controller owner */
	CONTRACT_READ,    /* read through views; events enqueue nothing */
};

/* One kind a controller watches. */
struct contract_watch {
	const char *kind; /* "AgentRun": the Kind, matched with owners */
	struct kapi_res res;
	/* CONTRACT_CHILD: the label key the reconciler puts on every child
	 * of this kind; the supervisor's watch selects objects that have it.
	 * Otherwise a label selector, NULL for all. */
	const char *label;
	enum contract_role role;
};

/* ---- the view table: what a controller's views may read ---- */

/* The namespace of built-in objects (spec 0.2). */
#define CONTRACT_SYSTEM_NS "sympozium-system"

/* clang-format off */
#define CONTRACT_RES_SECRETS  {"", "v1", "secrets", true}
#define CONTRACT_RES_PVCS     {"", "v1", "persistentvolumeclaims", true}
#define CONTRACT_RBAC(plural) {"rbac.authorization.k8s.io", "v1", plural, false}
/* clang-format on */

/* The views of a row, or'ed. */
#define CONTRACT_VIEW_GET    (1u << 0)
#define CONTRACT_VIEW_LIST   (1u << 1)
#define CONTRACT_VIEW_SECRET (1u << 2) /* a Secret's metadata only */
#define CONTRACT_VIEW_LOG    (1u << 3) /* a pod's log */

enum contract_view_scope {
	CONTRACT_VIEW_KEY_NS, /* the key's namespace */
	CONTRACT_VIEW_OR_SYS, /* that or CONTRACT_SYSTEM_NS (built-ins) */
	CONTRACT_VIEW_CLUSTER /* cluster-scoped: no namespace */
};

/* One resource a controller may read (supervisor/vpolicy.h). */
struct contract_view {
	struct kapi_res res;
	unsigned ops; /* CONTRACT_VIEW_* */
	enum contract_view_scope scope;
	/* Non-NULL: only the key's own objects, those with this label equal
	 * to the key's name: a list must select it, a get or a log finds it
	 * on the object. */
	const char *own;
};

struct contract_ctrl {
	const char *name;      /* --controller NAME */
	const char *finalizer; /* on its primary objects; NULL: none */
	const struct contract_watch *watches;
	size_t nwatches; /* watches[0] is the primary */
	/* the view table */
	const struct contract_view *views;
	size_t nviews;
};

/* Every controller: the product's, then contract_extra's; contract_at(i)
 * until NULL. */
const struct contract_ctrl *contract_at(size_t i);
/* The controller called name, or NULL (name may be NULL). */
const struct contract_ctrl *contract_find(const char *name);
/* Whether c is one of contract_extra's (a test controller). */
bool contract_is_extra(const struct contract_ctrl *c);

/* Test builds define this NULL-terminated array (tests/workers/); the
 * product binaries do not, so no test controller is reachable there. */
extern const struct contract_ctrl *const contract_extra[]
        __attribute__((weak));

#endif
