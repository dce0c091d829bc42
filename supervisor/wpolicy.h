/*
 * wpolicy.h: the write policy (issue 15, item 1): every write of a
 * worker's RESULT checked against its controller's write table
 * (common/contract.h, struct contract_write) before anything of it is
 * sent.  Pure: no I/O, the caches reached through a lookup function,
 * time injected.  Prefix wpol_.
 *
 * wpol_check() answers, for one RESULT, OK, RETRY (a cache it needs is
 * not synced, or the primary is not cached any more: deleted while its
 * worker had it; nothing is sent, the key is retried, no one is blamed)
 * or VIOLATION with the first write that breaks a rule (without the
 * primary, only a rule that does not need it).  The rules, by their
 * stable names (supervisor/README.md "The write policy"):
 *
 *   writes-per-result  more than WPOL_WRITES_MAX writes in one RESULT
 *   forbidden-kind     a Lease, CustomResourceDefinition or Namespace
 *   secret             a Secret the table does not allow, or one the
 *                      primary's spec does not name
 *   resource           an operation on a resource its table does not list
 *   event-target       an Event not to v1 events, or whose involvedObject
 *                      is not the primary (kind, name, namespace, uid)
 *   namespace          not the key's namespace (a namespaced write), or a
 *                      namespace on a cluster-scoped one; an object whose
 *                      metadata.namespace differs
 *   name               not a valid name for its kind (DNS subdomain, a
 *                      DNS label for Services; never "", "." or "..");
 *                      the object's metadata.name differing from the
 *                      write's; a cluster-scoped name without its prefix
 *   child-label        a created child without the controller's label
 *   owner              a created child without a controller
 *                      ownerReference to the primary's uid
 *   not-owned          an update, patch or delete of an object that is
 *                      neither the primary nor, as cached, its own
 *   size               an object or patch over WPOL_OBJECT_MAX serialized
 *   rbac               the skill RBAC check (wpol_rbac_check(); its own
 *                      rule names, "rbac-...", replace this one)
 *   write-budget       the key's writes over time (struct wpol_budget)
 */
#ifndef WPOLICY_H
#define WPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/contract.h"
#include "ipc/ipc.h"

#define WPOL_WRITES_MAX   640            /* a pruning pass is 500 */
#define WPOL_OBJECT_MAX   (1536u * 1024) /* 1.5 MiB serialized */
#define WPOL_BUDGET_BURST 2000           /* writes a key may spend at once */
#define WPOL_BUDGET_RATE  20             /* refilled per second */
#define WPOL_BUDGET_SLOTS 8192           /* keys remembered (bounded) */

enum wpol_verdict {
	WPOL_OK,
	WPOL_RETRY,     /* a cache it needs is not synced: try later */
	WPOL_VIOLATION, /* *out says which rule, write and why */
};

struct wpol_violation {
	const char *rule; /* a stable name (above), static */
	size_t index;     /* the write (0-based); nwrites for the RESULT */
	char detail[256]; /* one line */
};

/*
 * The controller's caches: 1 with *json (borrowed compact JSON text) when
 * an object of res ns/name is cached, 0 when its synced caches of that
 * resource do not hold it (or none caches that resource: a mutation is
 * then refused as not-owned), 2 when a synced cache of every object of
 * that resource (no label selector) does not hold it: it is gone (another
 * RESULT deleted it after the worker read it), and the RESULT is retried,
 * nothing sent; -1 when one that might hold it has not synced yet (the
 * RESULT is retried).  ns "" for cluster-scoped.
 */
typedef int wpol_lookup_fn(void *arg, const struct ipc_res *res,
        const char *ns, const char *name, const char **json);

struct wpol_input {
	const struct contract_ctrl *ctrl;
	const char *key;      /* "ns/name" (or "name"), as dispatched */
	json_object *primary; /* the primary as cached; NULL: absent */
	const struct ipc_write *ops;
	size_t n;
	wpol_lookup_fn *lookup; /* NULL: nothing is cached */
	void *arg;
	bool allow_wildcard; /* the RBAC check: --allow-skill-wildcard */
};

/* Checks every write of one RESULT.  out is filled on VIOLATION (and
 * its rule is NULL otherwise). */
enum wpol_verdict wpol_check(
        const struct wpol_input *in, struct wpol_violation *out);

/*
 * The skill RBAC check: write i of in (a create or delete of a Role,
 * RoleBinding, ClusterRole or ClusterRoleBinding) that has passed the
 * generic rules; in holds the whole RESULT (a binding may name a role the
 * same RESULT creates), the primary and the lookup.  The one call site of
 * supervisor/rbacpol.h's rbacpol_check() (issue 15 item 2): returns 0
 * (within bounds), 1 (cannot be judged yet: rbacpol's "rbac-pending";
 * the RESULT is retried, no one is blamed) or -1 with *rule (static) and
 * a one-line detail (rbacpol's rule name).
 */
int wpol_rbac_check(const struct wpol_input *in, size_t i, const char **rule,
        char *detail, size_t len);

/* Whether name is a valid object name for plural (a DNS-1123 subdomain;
 * a DNS-1123 label for "services" and "namespaces"). */
bool wpol_name_valid(const char *plural, const char *name);

/*
 * The write budget per key: a token bucket of WPOL_BUDGET_BURST writes
 * refilled WPOL_BUDGET_RATE per second, per (controller, key), in a table
 * of WPOL_BUDGET_SLOTS entries whatever the number of keys (a key not
 * seen recently is forgotten: the bucket it would have is full anyway, or
 * the fullest is given up).  Time injected (monotonic ms).
 */
struct wpol_budget;

struct wpol_budget *wpol_budget_new(void);
void wpol_budget_free(struct wpol_budget *b); /* NULL is fine */
/* Takes n writes of key's bucket: true, or false (nothing taken) when it
 * holds fewer. */
bool wpol_budget_take(struct wpol_budget *b, const char *controller,
        const char *key, size_t n, int64_t now_ms);

#endif
