/*
 * kobj.h: the building blocks every reconciler uses: Kubernetes objects
 * (new child objects, controller ownerReferences, labels), the writes a
 * reconciler answers with, the resources it names, and the helpers shared
 * by several Sympozium reconcilers (spec sympozium-controllers.md 0.2,
 * 0.3).  Pure.  Prefix kobj_.
 */
#ifndef KOBJ_H
#define KOBJ_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "common/contract.h"
#include "ipc/ipc.h"
#include "workers/reconcile.h"

/* Resources (group, version, plural, namespaced). */
extern const struct ipc_res kobj_configmaps, kobj_secrets, kobj_services,
        kobj_serviceaccounts, kobj_pods, kobj_pvcs, kobj_deployments,
        kobj_jobs, kobj_roles, kobj_rolebindings, kobj_clusterroles,
        kobj_clusterrolebindings, kobj_networkpolicies, kobj_agentruns,
        kobj_instances, kobj_personapacks, kobj_skillpacks, kobj_schedules,
        kobj_mcpservers, kobj_policies, kobj_configs, kobj_events,
        kobj_gateways, kobj_gatewayclasses, kobj_httproutes;
/* agent-sandbox mode (served only where its CRDs are installed) */
extern const struct ipc_res kobj_sandboxes, kobj_sandboxclaims;

#define KOBJ_SYSTEM_NS CONTRACT_SYSTEM_NS
#define KOBJ_REGISTRY  "ghcr.io/sympozium-ai/sympozium"
/* The default image tag, set at build time (Makefile IMAGE_TAG). */
#ifndef KOBJ_IMAGE_TAG
#define KOBJ_IMAGE_TAG "latest"
#endif

/* {"apiVersion":..,"kind":..,"metadata":{"name":..,"namespace":..}};
 * ns may be NULL (cluster-scoped).  Caller puts. */
json_object *kobj_new(const char *api_version, const char *kind,
        const char *ns, const char *name);

/* Borrowed metadata strings of o ("" when missing). */
const char *kobj_name(json_object *o);
const char *kobj_ns(json_object *o);
const char *kobj_uid(json_object *o);
/* A label or annotation value (NULL when missing). */
const char *kobj_label(json_object *o, const char *key);
const char *kobj_annotation(json_object *o, const char *key);

void kobj_set_label(json_object *o, const char *key, const char *value);
void kobj_set_annotation(json_object *o, const char *key, const char *value);

/* ---- the memory server ---- */

/* The "memory-server" container of the memory Deployments (upstream
 * sympoziuminstance_controller.go reconcileMemoryDeployment and
 * personapack_controller.go reconcileSharedMemory build the same one):
 * image, pull policy IfNotPresent, ports (taken), the SQLite path and
 * port env, the memory-db mount at /data, the /health probes on 8080 and
 * the resources.  Caller puts. */
json_object *kobj_memory_server(const char *image, json_object *ports);

/* ---- status conditions ---- */

/* meta.SetStatusCondition on status.conditions (made when absent or not
 * an array): the condition of that type is added or updated with st,
 * reason, msg and observedGeneration gen; its lastTransitionTime (RFC
 * 3339 of now_ms) moves only when the status changes or it had none. */
void kobj_set_condition(json_object *status, const char *type, const char *st,
        const char *reason, const char *msg, int64_t gen, int64_t now_ms);

/* ---- finalizers ---- */

/* Whether o's metadata.finalizers holds the string name. */
bool kobj_has_finalizer(json_object *o, const char *name);
/* A new array: o's metadata.finalizers (any but an array: none) without
 * name, then name appended when add.  Caller puts. */
json_object *kobj_finalizers(json_object *o, const char *name, bool add);

/* What kobj_finalizer_patch() writes. */
#define KOBJ_FIN_ADD        0x1u /* name added (else removed) */
#define KOBJ_FIN_RV         0x2u /* o's resourceVersion too (a precondition) */
#define KOBJ_FIN_NULL_EMPTY 0x4u /* an empty list as null: the key removed */

/* The merge patch {"metadata":{"finalizers":kobj_finalizers(),
 * "resourceVersion":rv}} of o, as flags say.  Caller puts. */
json_object *kobj_finalizer_patch(
        json_object *o, const char *name, unsigned flags);

/* Makes owner the controller of child, as SetControllerReference does:
 * ownerReferences = [{apiVersion, kind, name, uid, controller: true,
 * blockOwnerDeletion: true}] (other references kept, a previous
 * controller reference replaced). */
void kobj_set_owner(json_object *child, json_object *owner);
/* Whether child's controller reference names owner's uid. */
bool kobj_owned_by(json_object *child, json_object *owner);

/* Adoption of an object the reconciler's child watch cannot see, one
 * that another controller (upstream's) created for owner without the
 * child label: when live's controller reference already names owner's
 * uid, appends the JSON patch of contract.h's CONTRACT_OWN_ADOPT (tests of
 * live's resourceVersion and of that reference, then the label key=value
 * added) and returns 0; returns -1, appending nothing, when live is not
 * controlled by owner.  live and owner borrowed. */
int kobj_adopt(struct rec_out *out, const struct ipc_res *res,
        json_object *live, json_object *owner, const char *key,
        const char *value);

/* Adoption of an object nobody owns (upstream's PersonaPack takes over
 * a same-named instance): when live has no ownerReferences, appends the
 * JSON patch of contract.h's CONTRACT_OWN_ORPHAN (test of live's
 * resourceVersion, test that ownerReferences is absent, add of owner's
 * controller reference, add of the label key=value) and returns 0; else
 * appends nothing and returns -1.  live and owner borrowed. */
int kobj_adopt_orphan(struct rec_out *out, const struct ipc_res *res,
        json_object *live, json_object *owner, const char *key,
        const char *value);

/* A change of an object the reconciler controls but no cache holds (the
 * SympoziumConfig's Gateway): when live's controller reference names
 * owner's uid, appends the JSON patch of contract.h's CONTRACT_OWN_TESTED
 * (the three tests of kobj_adopt(), then the operations of changes, an
 * array, taken) and returns 0; else appends nothing and returns -1.
 * live and owner borrowed. */
int kobj_tested_patch(struct rec_out *out, const struct ipc_res *res,
        json_object *live, json_object *owner, json_object *changes);
/* A JSON patch operation {op, path, value} (value taken; NULL: none, as
 * a remove has).  Caller puts. */
json_object *kobj_patch_op(
        const char *op, const char *path, json_object *value);

/* The child of that kind and name in a WORK's children array, or NULL.
 * Borrowed. */
json_object *kobj_child(
        json_object *children, const char *kind, const char *name);

/* Writes (appended to out; obj and patch taken). */
void kobj_create(struct rec_out *out, const struct ipc_res *res,
        json_object *obj, bool tolerate_exists);
void kobj_update(
        struct rec_out *out, const struct ipc_res *res, json_object *obj);
void kobj_update_status(
        struct rec_out *out, const struct ipc_res *res, json_object *obj);
void kobj_merge_patch(struct rec_out *out, const struct ipc_res *res,
        const char *ns, const char *name, json_object *patch);
void kobj_delete(struct rec_out *out, const struct ipc_res *res,
        const char *ns, const char *name, bool tolerate_missing);

/* Kubernetes Event types. */
#define KOBJ_NORMAL  "Normal"
#define KOBJ_WARNING "Warning"

/* Appends an event write: a core/v1 Event about involved (borrowed: its
 * apiVersion, kind, namespace, name, uid and resourceVersion are copied
 * into involvedObject) with type (KOBJ_NORMAL or KOBJ_WARNING), reason
 * (CamelCase) and message.  The supervisor names, stamps, deduplicates
 * and rate-limits it (supervisor/events.h); an event that fails is only
 * logged.  Emit events on transitions only, never on every reconcile.
 * Does nothing when involved is NULL. */
void kobj_event(struct rec_out *out, json_object *involved, const char *type,
        const char *reason, const char *message);
/* The same with a printf message. */
void kobj_eventf(struct rec_out *out, json_object *involved, const char *type,
        const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

/* The event for a status transition, given obj as cached (borrowed) and
 * the status about to be written (borrowed); call it right after the
 * status write, so it goes out only when that write succeeds:
 *  - the Ready condition turns False, or changes reason or message while
 *    False: a Warning with its reason and message (invalid specs, missing
 *    references), unless the reason says "in progress" (NotReady,
 *    Progressing, Pending, Reconciling);
 *  - otherwise, phase turns Error or Failed: a Warning with reason
 *    "Failed" and the status's message or error (else "phase <P>").
 * Nothing else (a steady state emits nothing). */
void kobj_status_event(
        struct rec_out *out, json_object *obj, json_object *new_status);

/* Appends a container env entry {name, value} to the array env (a NULL
 * name is ""); an empty or NULL value is omitted, as Go's omitempty does. */
void kobj_env_add(json_object *env, const char *name, const char *value);

/* spec 0.3 resolveProvider(instance): borrowed static or instance
 * string. */
const char *kobj_resolve_provider(json_object *instance);
/* spec 0.3 resolveAuthSecret(instance): "" when none (borrowed). */
const char *kobj_resolve_auth_secret(json_object *instance);
/* "<registry>/<name>:<tag>" (spec 0.2); registry and tag NULL or "" for
 * $SYMPOZIUM_IMAGE_REGISTRY / $SYMPOZIUM_IMAGE_TAG when set, else the
 * defaults (KOBJ_REGISTRY, the build's KOBJ_IMAGE_TAG): every child image
 * honours both variables (later upstream fixes #202 and #244). */
/* The build's default tag (KOBJ_IMAGE_TAG, "latest" when empty). */
const char *kobj_image_tag(void);
void kobj_image(char *out, size_t len, const char *registry, const char *name,
        const char *tag);
/* p when it is a pull policy (Always, IfNotPresent, Never), else NULL
 * (later upstream fix #167 ResolveImagePullPolicy; callers choose the
 * fallback).  Static string. */
const char *kobj_pull_policy(const char *p);

#endif
