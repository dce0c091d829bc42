/*
 * kproto.c: Kubernetes protobuf request bodies as JSON (kproto.h).  The
 * messages are kubesim/proto/k8s.proto, compiled by protoc-c; a body is
 * unpacked by protobuf-c and turned into JSON by walking the message
 * descriptors, so a kind is added by declaring its message and listing it
 * in kinds[].  Pure: no I/O.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "common/b64.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/kproto.h"
#include "kubesim/proto/k8s.pb-c.h"

/* The kinds whose bodies kubesim decodes. */
static const struct {
	const char *api_version;
	const char *kind;
	const ProtobufCMessageDescriptor *desc;
} kinds[] = {
	{ "v1", "Namespace", &kubesim__namespace__descriptor },
	{ "v1", "ConfigMap", &kubesim__config_map__descriptor },
	{ "v1", "Secret", &kubesim__secret__descriptor },
	{ "v1", "ServiceAccount", &kubesim__service_account__descriptor },
	{ "v1", "Service", &kubesim__service__descriptor },
	{ "v1", "Pod", &kubesim__pod__descriptor },
	{ "apps/v1", "Deployment", &kubesim__deployment__descriptor },
	{ "batch/v1", "Job", &kubesim__job__descriptor },
	{ "rbac.authorization.k8s.io/v1", "Role", &kubesim__role__descriptor },
	{ "rbac.authorization.k8s.io/v1", "ClusterRole",
	        &kubesim__cluster_role__descriptor },
	{ "rbac.authorization.k8s.io/v1", "RoleBinding",
	        &kubesim__role_binding__descriptor },
	{ "rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
	        &kubesim__cluster_role_binding__descriptor },
};

/* Go *int fields (a set 0 is kept, as the pointer is); other zero
 * integers are omitempty's. */
static const char *const pointer_ints[] = { "replicas", "completions",
	"parallelism", "backoffLimit", "activeDeadlineSeconds",
	"ttlSecondsAfterFinished", "terminationGracePeriodSeconds",
	"progressDeadlineSeconds", "revisionHistoryLimit", NULL };

static const char magic[4] = { 'k', '8', 's', '\0' };

static json_object *message_json(const ProtobufCMessage *m);
static json_object *scalar_message_json(const ProtobufCMessage *m);

/* The JSON name of a field: its proto name in lowerCamelCase. */
static char *
json_name(const char *proto_name)
{
	char *out = xmalloc(strlen(proto_name) + 1), *p = out;
	bool up = false;

	for (; *proto_name != '\0'; proto_name++) {
		if (*proto_name == '_') {
			up = true;
			continue;
		}
		*p++ = up ? (char)toupper((unsigned char)*proto_name)
		          : *proto_name;
		up = false;
	}
	*p = '\0';
	return (out);
}

static json_object *
bytes_json(const ProtobufCBinaryData *b)
{
	char *s = b64_encode(b->data, b->len);
	json_object *o = json_object_new_string(s);

	free(s);
	return (o);
}

/* meta/v1 Time: RFC 3339 in seconds, as its JSON encoding. */
static bool
is_time(const ProtobufCMessageDescriptor *d)
{
	return (d == &kubesim__time__descriptor);
}

static json_object *
time_json(const Kubesim__Time *t)
{
	char ts[TIMEFMT_RFC3339_LEN];

	if (timefmt_rfc3339(t->seconds, ts) != 0) {
		return (NULL);
	}
	return (json_object_new_string(ts));
}

/* Whether d is a map's entry message (protoc makes one per map field). */
static bool
is_map_entry(const ProtobufCMessageDescriptor *d)
{
	size_t n = strlen(d->name);

	return (n > 5 && strcmp(d->name + n - 5, "Entry") == 0
	        && d->n_fields == 2 && strcmp(d->fields[0].name, "key") == 0
	        && strcmp(d->fields[1].name, "value") == 0);
}

/* The bytes one value of that type takes in a message or a repeated
 * array. */
static size_t
value_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return (sizeof(int64_t));
	case PROTOBUF_C_TYPE_DOUBLE:
		return (sizeof(double));
	case PROTOBUF_C_TYPE_FLOAT:
		return (sizeof(float));
	case PROTOBUF_C_TYPE_BOOL:
		return (sizeof(protobuf_c_boolean));
	case PROTOBUF_C_TYPE_STRING:
		return (sizeof(char *));
	case PROTOBUF_C_TYPE_BYTES:
		return (sizeof(ProtobufCBinaryData));
	case PROTOBUF_C_TYPE_MESSAGE:
		return (sizeof(ProtobufCMessage *));
	default: /* the 32-bit integers and enums */
		return (sizeof(int32_t));
	}
}

/* The JSON of the value of field f stored at p (NULL: none). */
static json_object *
value_json(const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)p;
		return (json_object_new_string(s != NULL ? s : ""));
	}
	case PROTOBUF_C_TYPE_BYTES:
		return (bytes_json(p));
	case PROTOBUF_C_TYPE_BOOL:
		return (json_object_new_boolean(
		        *(const protobuf_c_boolean *)p));
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *m = *(ProtobufCMessage *const *)p;
		if (m == NULL) {
			return (NULL);
		}
		return (is_time(m->descriptor)
		                ? time_json((const Kubesim__Time *)m)
		                : scalar_message_json(m));
	}
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return (json_object_new_int64(*(const int64_t *)p));
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return (json_object_new_uint64(*(const uint64_t *)p));
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return (json_object_new_int64(*(const uint32_t *)p));
	case PROTOBUF_C_TYPE_DOUBLE:
		return (json_object_new_double(*(const double *)p));
	case PROTOBUF_C_TYPE_FLOAT:
		return (json_object_new_double(*(const float *)p));
	default:
		return (json_object_new_int64(*(const int32_t *)p));
	}
}

/* A map field: its n entries as one object. */
static json_object *
map_json(ProtobufCMessage *const *entries, size_t n)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; i < n; i++) {
		const ProtobufCMessageDescriptor *d = entries[i]->descriptor;
		const char *base = (const char *)entries[i];
		const char *key = *(char *const *)(base + d->fields[0].offset);
		json_object *v = value_json(
		        &d->fields[1], base + d->fields[1].offset);
		json_object_object_add(o, key != NULL ? key : "",
		        v != NULL ? v : json_object_new_string(""));
	}
	return (o);
}

static json_object *
repeated_json(const ProtobufCFieldDescriptor *f, const char *base)
{
	size_t n = *(const size_t *)(base + f->quantifier_offset);
	const char *arr = *(char *const *)(base + f->offset);
	json_object *a;

	if (n == 0 || arr == NULL) {
		return (NULL);
	}
	if (f->type == PROTOBUF_C_TYPE_MESSAGE
	        && is_map_entry(f->descriptor)) {
		return (map_json((ProtobufCMessage *const *)arr, n));
	}
	a = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++) {
		json_object *v = value_json(f, arr + i * value_size(f->type));
		json_object_array_add(a, v);
	}
	return (a);
}

/* Whether the value of optional field f at p is Go's zero value, which
 * omitempty leaves out (a bool is kept: the Go fields are pointers). */
static bool
zero(const ProtobufCFieldDescriptor *f, const void *p)
{
	const ProtobufCMessage *m;

	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		return (*(char *const *)p == NULL
		        || **(char *const *)p == '\0');
	case PROTOBUF_C_TYPE_BYTES:
		return (((const ProtobufCBinaryData *)p)->len == 0);
	case PROTOBUF_C_TYPE_BOOL:
		return (false);
	case PROTOBUF_C_TYPE_MESSAGE:
		m = *(ProtobufCMessage *const *)p;
		return (m == NULL
		        || (is_time(m->descriptor)
		                && ((const Kubesim__Time *)m)->seconds == 0));
	default:
		for (size_t i = 0; pointer_ints[i] != NULL; i++) {
			if (strcmp(f->name, pointer_ints[i]) == 0) {
				return (false);
			}
		}
		return (memcmp(p, &(int64_t) { 0 }, value_size(f->type)) == 0);
	}
}

/* An optional field: NULL when absent or zero. */
static json_object *
optional_json(const ProtobufCFieldDescriptor *f, const char *base)
{
	const void *p = base + f->offset;
	bool has = f->type == PROTOBUF_C_TYPE_STRING
	        || f->type == PROTOBUF_C_TYPE_MESSAGE
	        || f->quantifier_offset == 0
	        || *(const protobuf_c_boolean *)(base + f->quantifier_offset);

	return (has && !zero(f, p) ? value_json(f, p) : NULL);
}

static json_object *
message_json(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;
	json_object *o = json_object_new_object();

	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		json_object *v = f->label == PROTOBUF_C_LABEL_REPEATED
		        ? repeated_json(f, base)
		        : optional_json(f, base);
		char *name;
		if (v == NULL) {
			continue;
		}
		name = json_name(f->name);
		json_object_object_add(o, name, v);
		free(name);
	}
	return (o);
}

/* IntOrString and Quantity, whose JSON is a scalar; other messages as
 * objects. */
static json_object *
scalar_message_json(const ProtobufCMessage *m)
{
	if (m->descriptor == &kubesim__int_or_string__descriptor) {
		const Kubesim__IntOrString *v
		        = (const Kubesim__IntOrString *)m;

		return (v->type == 1 ? json_object_new_string(
		                v->strval != NULL ? v->strval : "")
		                     : json_object_new_int(v->intval));
	}
	if (m->descriptor == &kubesim__quantity__descriptor) {
		const Kubesim__Quantity *q = (const Kubesim__Quantity *)m;

		return (json_object_new_string(
		        q->string != NULL ? q->string : ""));
	}
	return (message_json(m));
}

/* Whether an undeclared field holds Go's zero value: the Kubernetes
 * encoder writes every non-pointer field, so an empty selfLink (ObjectMeta
 * field 4) or status arrives with every object and means nothing. */
static bool
empty_value(const ProtobufCMessageUnknownField *u)
{
	for (size_t i = 0; i < u->len; i++) {
		if (u->data[i] != 0) {
			return (false);
		}
	}
	return (true);
}

/* The first field of m (or a message inside it) this file does not
 * declare and that holds something: its number and the message's name in
 * *where, or 0. */
static uint32_t
unknown_field(const ProtobufCMessage *m, const char **where)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;

	for (unsigned i = 0; i < m->n_unknown_fields; i++) {
		if (!empty_value(&m->unknown_fields[i])) {
			*where = d->name;
			return (m->unknown_fields[i].tag);
		}
	}
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		ProtobufCMessage *const *v;
		size_t n = 1;
		uint32_t t;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			v = *(ProtobufCMessage *const *const *)(base
			        + f->offset);
		} else {
			v = (ProtobufCMessage *const *)(base + f->offset);
		}
		for (size_t k = 0; v != NULL && k < n; k++) {
			if (v[k] != NULL
			        && (t = unknown_field(v[k], where)) != 0) {
				return (t);
			}
		}
	}
	return (0);
}

static const ProtobufCMessageDescriptor *
kind_desc(const char *api_version, const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].api_version, api_version) == 0
		        && strcmp(kinds[i].kind, kind) == 0) {
			return (kinds[i].desc);
		}
	}
	return (NULL);
}

/* The object of u (its typeMeta and raw): *out, or an error. */
static enum kproto_rc
object_json(
        const Kubesim__Unknown *u, json_object **out, char *err, size_t errlen)
{
	const char *av = u->type_meta != NULL && u->type_meta->api_version
	        ? u->type_meta->api_version
	        : "";
	const char *kind = u->type_meta != NULL && u->type_meta->kind
	        ? u->type_meta->kind
	        : "";
	const ProtobufCMessageDescriptor *d = kind_desc(av, kind);
	ProtobufCMessage *m;
	json_object *o, *body;

	if (d == NULL) {
		snprintf(err, errlen, "no protobuf message for %.64s %.64s",
		        av[0] != '\0' ? av : "(no apiVersion)",
		        kind[0] != '\0' ? kind : "(no kind)");
		return (KPROTO_EKIND);
	}
	if (u->content_encoding != NULL && u->content_encoding[0] != '\0') {
		snprintf(err, errlen, "unsupported content encoding %.64s",
		        u->content_encoding);
		return (KPROTO_EBAD);
	}
	m = protobuf_c_message_unpack(d, NULL, u->raw.len, u->raw.data);
	if (m == NULL) {
		snprintf(
		        err, errlen, "the %s message cannot be decoded", kind);
		return (KPROTO_EBAD);
	}
	{
		const char *where = "";
		uint32_t tag = unknown_field(m, &where);

		if (tag != 0) {
			snprintf(err, errlen,
			        "field %u of %s in the %s body is not "
			        "supported "
			        "by kubesim; send it as JSON",
			        tag, where, kind);
			protobuf_c_message_free_unpacked(m, NULL);
			return (KPROTO_EBAD);
		}
	}
	o = json_object_new_object();
	json_object_object_add(o, "apiVersion", json_object_new_string(av));
	json_object_object_add(o, "kind", json_object_new_string(kind));
	body = message_json(m);
	json_object_object_foreach(body, k, v)
	{
		json_object_object_add(o, k, json_object_get(v));
	}
	json_object_put(body);
	protobuf_c_message_free_unpacked(m, NULL);
	*out = o;
	return (KPROTO_OK);
}

enum kproto_rc
kproto_decode(const uint8_t *body, size_t len, json_object **out, char *err,
        size_t errlen)
{
	Kubesim__Unknown *u;
	enum kproto_rc rc;

	*out = NULL;
	if (len < sizeof(magic) || memcmp(body, magic, sizeof(magic)) != 0) {
		snprintf(err, errlen,
		        "the body does not start with the protobuf prefix "
		        "k8s\\0");
		return (KPROTO_EBAD);
	}
	u = kubesim__unknown__unpack(
	        NULL, len - sizeof(magic), body + sizeof(magic));
	if (u == NULL) {
		snprintf(err, errlen, "the envelope cannot be decoded");
		return (KPROTO_EBAD);
	}
	rc = object_json(u, out, err, errlen);
	kubesim__unknown__free_unpacked(u, NULL);
	return (rc);
}
