/*
 * kres.h: kubesim's resource registry.  The built-in resources (issue 3's
 * list), the resources served from CustomResourceDefinitions, and every
 * document that describes them: /api, /apis, group and group-version
 * discovery (spec D.2, D.4) and the OpenAPI v3 stub kubectl apply needs
 * (D.5).  Also the CRD rules of spec C.10: validation of a CRD object and
 * its server-managed status.  Prefix kres_.
 *
 * Not thread-safe: kubesim calls it under its store lock.  A resource
 * returned by a lookup stays valid (read-only) until kres_reg_free(), even
 * after its CRD is removed (it is then marked gone), so a watcher may hold
 * it.
 */
#ifndef KRES_H
#define KRES_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "kubesim/kschema.h"

enum kres_flag {
	KRES_NAMESPACED = 1 << 0,
	KRES_STATUS = 1 << 1,           /* has a /status subresource */
	KRES_CREATE_ON_UPDATE = 1 << 2, /* PUT of a missing object creates */
	KRES_UNCOND_UPDATE = 1 << 3,    /* PUT without resourceVersion ok */
	KRES_STRATEGIC = 1 << 4,        /* takes strategic merge patch */
	KRES_CUSTOM = 1 << 5,           /* served from a CRD */
	KRES_LOG = 1 << 6,              /* has /log (pods) */
	KRES_GENERATION = 1 << 7,       /* maintains metadata.generation */
	KRES_SCALE = 1 << 8,            /* has /scale */
};

struct kres {
	char *group;        /* "" for core */
	char *version;      /* "v1" */
	char *plural;       /* "deployments" */
	char *singular;     /* "deployment" */
	char *kind;         /* "Deployment" */
	char *list_kind;    /* "DeploymentList" */
	unsigned flags;     /* enum kres_flag */
	char **short_names; /* NULL-terminated; never NULL */
	char **categories;  /* NULL-terminated; never NULL */
	char **verbs;       /* discovery verbs, NULL-terminated */
	char **selectable;  /* extra field-selector keys, NULL-terminated */
	char *coll;         /* store collection: "<group>/<plural>" */
	char *api_version;  /* "v1" or "<group>/<version>" */
	/* Custom resources only (NULL otherwise): */
	struct kschema *schema; /* this version's openAPIV3Schema */
	json_object *columns;   /* additionalPrinterColumns, or NULL */
	char *crd;              /* the CRD's name */
	bool gone;              /* its CRD was removed: no longer served */
	bool terminating;       /* its CRD is being deleted: creates refused */
};

struct kres_reg;

/* A registry holding the built-in resources. */
struct kres_reg *kres_reg_new(void);
void kres_reg_free(struct kres_reg *reg);

/* The served resource at group/version/plural ("" group for core), or
 * NULL (unknown, or gone). */
const struct kres *kres_find(const struct kres_reg *reg, const char *group,
        const char *version, const char *plural);

/* The served resource of an apiVersion ("v1", "apps/v1") and kind, or
 * NULL.  For ownerReferences. */
const struct kres *kres_find_kind(
        const struct kres_reg *reg, const char *api_version, const char *kind);

/* Every served resource, one per group/version/plural, in registration
 * order: for (i = 0; (r = kres_at(reg, i)); i++). */
const struct kres *kres_at(const struct kres_reg *reg, size_t i);

/*
 * Validates a CRD (borrowed) as the real server does on create and
 * update: metadata.name == <plural>.<group>, a group with a dot, scope,
 * names.kind and names.plural set, at least one version, exactly one
 * storage version, a schema per version that kschema_new accepts.
 * Returns 0, or 1 with a new array of causes in *causes (field paths as the
 * server reports them, e.g. "metadata.name"; caller frees with
 * kschema_causes_free()).
 */
int kres_crd_validate(
        json_object *crd, struct kschema_cause **causes, size_t *ncauses);

/* Fills in the server-managed parts of a validated CRD (modified in
 * place): spec.names defaults (singular, listKind), status.acceptedNames,
 * status.storedVersions, conditions NamesAccepted and Established (True;
 * lastTransitionTime = now_rfc3339, kept when already True). */
void kres_crd_set_status(json_object *crd, const char *now_rfc3339);

/* Serves every served version of a validated CRD (borrowed; what it needs
 * is copied).  Re-installing a CRD of the same name replaces its
 * resources (older ones are marked gone).  Returns 0, or -1 with a reason
 * in err. */
int kres_crd_install(
        struct kres_reg *reg, json_object *crd, char *err, size_t errlen);

/* Marks the CRD's resources terminating (creates refused). */
void kres_crd_terminating(struct kres_reg *reg, const char *crd_name);
/* Stops serving the CRD's resources (marked gone, kept until free). */
void kres_crd_remove(struct kres_reg *reg, const char *crd_name);

/* Discovery documents (new objects; caller puts them), NULL for 404. */
json_object *kres_api_versions(const struct kres_reg *reg, const char *addr);
json_object *kres_group_list(const struct kres_reg *reg);
json_object *kres_group(const struct kres_reg *reg, const char *group);
json_object *kres_resource_list(
        const struct kres_reg *reg, const char *group, const char *version);

/* OpenAPI v3: the root index (/openapi/v3) and one group-version document
 * ("api/v1", "apis/<group>/<version>"; NULL for 404).  The hash in each
 * serverRelativeURL changes when the document changes. */
/* /openapi/v2: a Swagger 2.0 document whose definitions are every served
 * kind's schema (kopenapi.h), as JSON. */
json_object *kres_openapi_v2(const struct kres_reg *reg);
json_object *kres_openapi_root(const struct kres_reg *reg);
json_object *kres_openapi_doc(const struct kres_reg *reg, const char *gvpath);

#endif
