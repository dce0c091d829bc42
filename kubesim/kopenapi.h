/*
 * kopenapi.h: the schemas of kubesim's OpenAPI v3 documents
 * (/openapi/v3/<group-version>), as `kubectl explain` reads them: each
 * kind a component with its x-kubernetes-group-version-kind, fields with
 * types and descriptions, metadata a reference to ObjectMeta.  Custom
 * resources get their CRD's openAPIV3Schema; the built-in kinds a schema
 * of their main fields, written for kubesim from the API's field names
 * and meanings (kopenapi.c).  Pure.  Prefix kopenapi_.
 */
#ifndef KOPENAPI_H
#define KOPENAPI_H

#include <json-c/json.h>

#include "kubesim/kres.h"

/* Adds r's component (and ObjectMeta, once) to schemas (an object). */
void kopenapi_add(json_object *schemas, const struct kres *r);

/* The component name of r: "io.k8s.api.core.v1.Pod",
 * "ai.sympozium.v1alpha1.AgentRun".  New string. */
char *kopenapi_name(const struct kres *r);

#endif
