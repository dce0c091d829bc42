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
/* The SympoziumConfig controller's Gateway API objects carry
 * CONTRACT_LABEL_MANAGED_BY with this value. */
#define CONTRACT_MANAGED_BY_CONFIG "sympoziumconfig"
/* On the Sandbox and SandboxClaim CRs of an agent-sandbox run. */
#define CONTRACT_LABEL_AGENT_SANDBOX "sympozium.ai/agent-sandbox"

/* ---- annotation keys ---- */

#define CONTRACT_ANN_REPLY_CHANNEL "sympozium.ai/reply-channel"
#define CONTRACT_ANN_REPLY_CHAT_ID "sympozium.ai/reply-chat-id"

/* ---- finalizers ---- */

#define CONTRACT_FINALIZER_AGENTRUN    "sympozium.ai/agentrun-finalizer"
#define CONTRACT_FINALIZER_INSTANCE    "sympozium.ai/finalizer"
#define CONTRACT_FINALIZER_PERSONAPACK "sympozium.ai/personapack-finalizer"
#define CONTRACT_FINALIZER_SKILLPACK   "sympozium.ai/skillpack-finalizer"
#define CONTRACT_FINALIZER_SCHEDULE    "sympozium.ai/schedule-finalizer"
#define CONTRACT_FINALIZER_CONFIG      "sympozium.ai/config-finalizer"

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
#define CONTRACT_RES_CONFIGS      CONTRACT_SYMP("sympoziumconfigs")
#define CONTRACT_RES_CONFIGMAPS   {"", "v1", "configmaps", true}
#define CONTRACT_RES_SERVICES     {"", "v1", "services", true}
#define CONTRACT_RES_PODS         {"", "v1", "pods", true}
#define CONTRACT_RES_DEPLOYMENTS  {"apps", "v1", "deployments", true}
#define CONTRACT_RES_JOBS         {"batch", "v1", "jobs", true}
#define CONTRACT_RES_SECRETS      {"", "v1", "secrets", true}
#define CONTRACT_RES_EVENTS       {"", "v1", "events", true}
#define CONTRACT_RES_PVCS         {"", "v1", "persistentvolumeclaims", true}
#define CONTRACT_RES_SERVICEACCOUNTS {"", "v1", "serviceaccounts", true}
#define CONTRACT_RBAC(plural, ns) {"rbac.authorization.k8s.io", "v1", plural, ns}
#define CONTRACT_RES_ROLES        CONTRACT_RBAC("roles", true)
#define CONTRACT_RES_ROLEBINDINGS CONTRACT_RBAC("rolebindings", true)
#define CONTRACT_RES_CLUSTERROLES CONTRACT_RBAC("clusterroles", false)
#define CONTRACT_RES_CLUSTERROLEBINDINGS                                      \
	CONTRACT_RBAC("clusterrolebindings", false)
#define CONTRACT_GATEWAY_GROUP "gateway.networking.k8s.io"
#define CONTRACT_RES_GATEWAYS  {CONTRACT_GATEWAY_GROUP, "v1", "gateways", true}
#define CONTRACT_RES_GATEWAYCLASSES                                           \
	{CONTRACT_GATEWAY_GROUP, "v1", "gatewayclasses", false}
/* a server-mode run's route (upstream maybeCreateHTTPRoute): watched only
 * where the Gateway API serves it */
#define CONTRACT_RES_HTTPROUTES                                               \
	{CONTRACT_GATEWAY_GROUP, "v1", "httproutes", true}
/* kubernetes-sigs/agent-sandbox (upstream agentrun_sandbox.go sandboxGVR,
 * sandboxClaimGVR): served only where its CRDs are installed */
#define CONTRACT_SANDBOX_GROUP   "agents.x-k8s.io"
#define CONTRACT_SANDBOX_VERSION "v1alpha1"
#define CONTRACT_RES_SANDBOXES                                                \
	{CONTRACT_SANDBOX_GROUP, CONTRACT_SANDBOX_VERSION, "sandboxes", true}
#define CONTRACT_RES_SANDBOXCLAIMS                                            \
	{CONTRACT_SANDBOX_GROUP, CONTRACT_SANDBOX_VERSION, "sandboxclaims", true}
/* clang-format on */

/* The workers' environment variable saying the agent-sandbox CRDs are
 * served ("1"; absent otherwise): the supervisor lists sandboxes once at
 * start-up, as upstream's CheckAgentSandboxCRDs does, unless
 * CONTRACT_ENV_AGENT_SANDBOX_OFF is "false". */
#define CONTRACT_ENV_AGENT_SANDBOX     "SYMPOZIUM_AGENT_SANDBOX"
#define CONTRACT_ENV_AGENT_SANDBOX_OFF "AGENT_SANDBOX_ENABLED"

/* The fixed name prefix of the cluster-scoped skill RBAC of a run. */
#define CONTRACT_PREFIX_SKILL_RBAC "sympozium-skill-"
/* The web-proxy API key Secret of a server-mode run (upstream
 * agentrun_controller.go ensureServerAPIKeySecret): named the run's
 * spec.instanceRef followed by this suffix, one stringData key. */
#define CONTRACT_WEB_PROXY_KEY_SUFFIX "-web-proxy-key"
#define CONTRACT_WEB_PROXY_KEY_DATA   "api-key"
/* Its value: "sk-" and the hex of 24 random bytes. */
#define CONTRACT_WEB_PROXY_KEY_BYTES 24

/* The SympoziumConfig in CONTRACT_SYSTEM_NS whose gateway the routes of
 * server-mode runs attach to (upstream maybeCreateHTTPRoute). */
#define CONTRACT_CONFIG_NAME "default"

/* The one ServiceAccount every agent pod runs as (created, shared). */
#define CONTRACT_AGENT_SA "sympozium-agent"

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

/* Whether watches of res are optional: watched only when the API serves
 * res (a kind of a CRD that may not be installed: the agent-sandbox and
 * Gateway API groups); the supervisor finds out once at start-up, and an
 * unserved kind's cache stays empty. */
bool contract_optional(const struct kapi_res *res);

/* ---- the view table: what a controller's views may read ---- */

/* The namespace of built-in objects (spec 0.2). */
#define CONTRACT_SYSTEM_NS "sympozium-system"

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

/*
 * The write table (supervisor/wpolicy.h checks every write of a RESULT
 * against it).  A row: the operations a controller may ask on one
 * resource, and which objects of it they may touch.  Several rows may
 * name the same resource (a write passes when one row allows it).  The
 * scope is the key's namespace for a namespaced resource; cluster-scoped
 * resources only with CONTRACT_OWN_CLUSTER.
 */
#define CONTRACT_W_CREATE (1u << 0)
#define CONTRACT_W_UPDATE (1u << 1)
#define CONTRACT_W_STATUS (1u << 2) /* update_status */
#define CONTRACT_W_PATCH  (1u << 3)
#define CONTRACT_W_APPLY  (1u << 4)
#define CONTRACT_W_DELETE (1u << 5)
#define CONTRACT_W_EVENT  (1u << 6)
#define CONTRACT_W_MUTATE                                                     \
	(CONTRACT_W_UPDATE | CONTRACT_W_STATUS | CONTRACT_W_PATCH             \
	        | CONTRACT_W_DELETE)

enum contract_own {
	/* the primary object itself (the key), nothing else */
	CONTRACT_OWN_SELF,
	/* a child: created carrying the label key `label` (valued the
	 * primary's name unless `any_value`) and a controller
	 * ownerReference to the primary's uid; mutated only when the
	 * cache holds it with that ownerReference */
	CONTRACT_OWN_CHILD,
	/* mutated only when the cache holds it carrying the label
	 * `label` valued the primary's string at path `ref` (NULL: no
	 * such label check) and the fixed label `match` ("key=value",
	 * NULL: none) */
	CONTRACT_OWN_LABEL,
	/* cluster-scoped: named `prefix`...`-<primary's name>`,
	 * carrying `label` valued the primary's name (created so;
	 * mutated only when so named and, when the cache holds it, so
	 * labelled: the default RBAC cannot watch cluster RBAC) */
	CONTRACT_OWN_CLUSTER,
	/* created only, named exactly `prefix` (a shared, fixed
	   object) */
	CONTRACT_OWN_SHARED,
	/* only the objects the primary's spec names: the strings at
	 * key `item` of the objects of the array at path `ref` */
	CONTRACT_OWN_NAMED,
	/* adoption (take-over of upstream's children, which lack the child
	 * label, so the cache cannot hold them): a JSON patch of exactly
	 * four operations, in order: test /metadata/resourceVersion (a
	 * string); test /metadata/ownerReferences/N/uid equal to the
	 * primary's uid; test /metadata/ownerReferences/N/controller true
	 * (the same N); add the label `label` valued the primary's name
	 * (/metadata/labels/<key as a JSON Pointer token>, or
	 * /metadata/labels with an object of that one label).  The API
	 * server's tests make it apply only to an object the primary
	 * already controls, unchanged since the worker read it
	 * (workers/kobj.h kobj_adopt). */
	CONTRACT_OWN_ADOPT,
	/* the one object the primary's string at path `ref` names, or
	 * named `prefix` when that string is absent or empty; created only
	 * carrying the fixed label `match` ("key=value") and, when the
	 * resource is namespaced, a controller ownerReference to the
	 * primary (the SympoziumConfig's Gateway and GatewayClass, which no
	 * cache holds: the Gateway API may not be served) */
	CONTRACT_OWN_SPEC_NAME,
	/* a JSON patch the API server applies only to an object the primary
	 * controls: test /metadata/resourceVersion (a string); test
	 * /metadata/ownerReferences/N/uid equal to the primary's uid; test
	 * .../N/controller true (the same N); then one or more "add" or
	 * "remove" operations, each on one of the paths `paths` lists
	 * (exactly: no path below them) */
	CONTRACT_OWN_TESTED,
	/* a generated key Secret, created only (never updated, patched or
	 * read back): named the primary's string at `ref` followed by
	 * `suffix`, carrying `label` valued the primary's name and a
	 * controller ownerReference to it, of type Opaque (or none), with
	 * no `data` and `stringData` of exactly the key `match` valued
	 * "sk-" and 48 lowercase hex digits (supervisor/wpolicy.c) */
	CONTRACT_OWN_KEY_SECRET,
	/* adoption of an object nobody owns, named for one entry of the
	 * primary's spec (upstream's PersonaPack takes over a same-named
	 * instance or schedule): a JSON patch of exactly four operations,
	 * in order: test /metadata/resourceVersion (a string); test
	 * /metadata/ownerReferences null (the API server passes it only
	 * when the object has none); add /metadata/ownerReferences with
	 * exactly one controller reference to the primary (apiVersion,
	 * kind, name, uid, controller and blockOwnerDeletion true); add
	 * the label `label` valued the primary's name (as ADOPT's).  The
	 * target is named the primary's name, "-", the string at key
	 * `match` of an object of the primary's array at `ref`, then
	 * `suffix` (NULL: nothing).  workers/kobj.h kobj_adopt_orphan. */
	CONTRACT_OWN_ORPHAN,
};

struct contract_write {
	struct kapi_res res;
	unsigned ops; /* CONTRACT_W_* */
	enum contract_own own;
	const char *label;  /* CHILD, LABEL, CLUSTER: a label key */
	const char *prefix; /* CLUSTER: name prefix; SHARED: the name */
	const char *ref;    /* LABEL, NAMED: a path in the primary */
	const char *match;  /* LABEL: "key=value"; NAMED: the item key */
	bool any_value;     /* CHILD: the label's value is not checked */
	/* TESTED: the JSON Pointers the patch may add or remove, NULL
	 * ended.  (CHILD: `match`, when set, is a fixed label "key=value"
	 * the created object must carry too.) */
	const char *const *paths;
	/* KEY_SECRET, ORPHAN: the name after the ref's value */
	const char *suffix;
};

struct contract_ctrl {
	const char *name;      /* --controller NAME */
	const char *finalizer; /* on its primary objects; NULL: none */
	const struct contract_watch *watches;
	size_t nwatches; /* watches[0] is the primary */
	/* the view table */
	const struct contract_view *views;
	size_t nviews;
	const struct contract_write *writes;
	size_t nwrites;
};

/* Every controller: the product's, then contract_extra's;
 * contract_at(i) until NULL. */
const struct contract_ctrl *contract_at(size_t i);
/* The controller called name, or NULL (name may be NULL). */
const struct contract_ctrl *contract_find(const char *name);
/* Whether c is one of contract_extra's (a test controller). */
bool contract_is_extra(const struct contract_ctrl *c);

/* Test builds define this NULL-terminated array (tests/workers/); the
 * product binaries do not, so no test controller is reachable there.
 */
extern const struct contract_ctrl *const contract_extra[]
        __attribute__((weak));

#endif
