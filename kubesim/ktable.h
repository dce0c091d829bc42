/*
 * ktable.h: the meta.k8s.io/v1 Table representation of custom resources
 * (spec D.6) that kubectl's human output asks for.  Prefix ktable_.
 */
#ifndef KTABLE_H
#define KTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "kubesim/kres.h"

enum ktable_include { KTABLE_METADATA, KTABLE_OBJECT, KTABLE_NONE };

/* Whether Accept prefers the v1 Table and res can be printed (custom
 * resources, and the built-in kinds kprint.h prints). */
bool ktable_wanted(const struct kres *res, const char *accept);
/* "application/json;as=Table;v=v1;g=meta.k8s.io" */
const char *ktable_content_type(void);
/* The includeObject query value (NULL: Metadata). */
enum ktable_include ktable_include(const char *v);

/* An empty Table (caller puts it); with_defs adds columnDefinitions; rv
 * and cont (may be NULL) go into its metadata. */
json_object *ktable_new(const struct kres *res, bool with_defs, const char *rv,
        const char *cont);
/* Appends obj's row (obj borrowed). */
void ktable_add(json_object *table, const struct kres *res, json_object *obj,
        enum ktable_include inc);

/* A seconds count as apimachinery's HumanDuration ("5m10s", "3d4h"). */
void ktable_human(int64_t seconds, char *out, size_t len);

#endif
