/*
 * kproto.h: Kubernetes protobuf request bodies
 * (application/vnd.kubernetes.protobuf) as kubesim's JSON objects.
 * Prefix kproto_.
 */
#ifndef KPROTO_H
#define KPROTO_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* The media type of a protobuf body. */
#define KPROTO_MEDIA_TYPE "application/vnd.kubernetes.protobuf"

enum kproto_rc {
	KPROTO_OK = 0,
	KPROTO_EBAD,  /* malformed: 400 BadRequest */
	KPROTO_EKIND, /* no message for the object's kind: 415 */
};

/*
 * Decodes body (the 4 bytes "k8s\0", then a runtime.Unknown whose typeMeta
 * names the kind and whose raw is the object's own message) into *out, a
 * new JSON object with apiVersion and kind first, as the object's JSON
 * encoding would be: field names in lowerCamelCase, meta/v1 Time as RFC
 * 3339, bytes as base64, maps as objects, and the zero values of strings,
 * integers and lists left out (Go's omitempty).  Kinds: v1 Namespace,
 * ConfigMap and Secret.  On an error *out is NULL and err holds the
 * reason.
 */
enum kproto_rc kproto_decode(const uint8_t *body, size_t len,
        json_object **out, char *err, size_t errlen);

#endif
