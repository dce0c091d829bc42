/*
 * test_kproto.c: kubesim's protobuf request bodies (kubesim/kproto.h).
 * The three bodies in kubesim/proto/testdata/ are what kubectl 1.33 sent
 * for `create namespace team-a`, `create secret generic my-key
 * --from-literal=OPENAI_API_KEY=x` and `create configmap c
 * --from-literal=a=b`; the others are packed here with protobuf-c:
 * every field kind (labels, owner references, times, bytes, booleans),
 * and the malformed and unsupported bodies, which must fail cleanly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "kubesim/kproto.h"
#include "kubesim/proto/k8s.pb-c.h"
#include "tests/lib/testutil.h"

#define DATA "kubesim/proto/testdata/"

/* Decodes file DATA name; asserts rc; the object (caller puts). */
static json_object *
decode_file(const char *name, enum kproto_rc want)
{
	char *path = xasprintf(DATA "%s", name), err[256] = "";
	size_t len = 0;
	char *body = testutil_read_file(path, &len);
	json_object *o = NULL;

	assert_non_null(body);
	assert_int_equal(kproto_decode((const uint8_t *)body, len, &o, err,
	                         sizeof(err)),
	        want);
	free(body);
	free(path);
	return (o);
}

/* JSON with ' for " (the fixtures need no escapes). */
static json_object *
J(const char *s)
{
	char *t = xstrdup(s);
	json_object *o;

	for (char *c = t; *c != '\0'; c++) {
		*c = *c == '\'' ? '"' : *c;
	}
	o = testutil_json(t, 0);
	free(t);
	assert_non_null(o);
	return (o);
}

static void
assert_json(json_object *o, const char *want)
{
	json_object *w = J(want);

	if (!jx_equal(o, w)) {
		fail_msg("got %s, want %s", json_object_to_json_string(o),
		        json_object_to_json_string(w));
	}
	json_object_put(w);
}

/* kubectl's own bodies: the zero values it sends are left out, as the
 * JSON encoding leaves them out. */
static void
test_kubectl_bodies(void **state)
{
	json_object *o;

	(void)state;
	o = decode_file("namespace-team-a.pb", KPROTO_OK);
	assert_json(o,
	        "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':"
	        "'team-a'},'spec':{},'status':{}}");
	json_object_put(o);
	o = decode_file("secret-my-key.pb", KPROTO_OK);
	assert_json(o,
	        "{'apiVersion':'v1','kind':'Secret','metadata':{'name':"
	        "'my-key'},'data':{'OPENAI_API_KEY':'eA=='}}");
	json_object_put(o);
	o = decode_file("configmap-c.pb", KPROTO_OK);
	assert_json(o,
	        "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':"
	        "'c'},'data':{'a':'b'}}");
	json_object_put(o);
}

/* body: "k8s\0" + an Unknown of that type and raw (packed from m). */
static uint8_t *
envelope(char *av, char *kind, const ProtobufCMessage *m, char *encoding,
        size_t *len)
{
	Kubesim__TypeMeta tm = KUBESIM__TYPE_META__INIT;
	Kubesim__Unknown u = KUBESIM__UNKNOWN__INIT;
	uint8_t *raw = NULL, *out;
	size_t n;

	tm.api_version = av;
	tm.kind = kind;
	u.type_meta = &tm;
	if (m != NULL) {
		raw = xmalloc(protobuf_c_message_get_packed_size(m) + 1);
		u.raw.len = protobuf_c_message_pack(m, raw);
		u.raw.data = raw;
		u.has_raw = 1;
	}
	u.content_encoding = encoding;
	n = kubesim__unknown__get_packed_size(&u);
	out = xmalloc(n + 4);
	memcpy(out, "k8s", 4);
	kubesim__unknown__pack(&u, out + 4);
	free(raw);
	*len = n + 4;
	return (out);
}

static enum kproto_rc
decode(const uint8_t *b, size_t n, json_object **o, char *err, size_t len)
{
	err[0] = '\0';
	return (kproto_decode(b, n, o, err, len));
}

/* Every kind of field: a map, repeated messages and strings, a Time, a
 * bool, an int64, bytes in a map. */
static void
test_fields(void **state)
{
	Kubesim__ObjectMeta__LabelsEntry l1
	        = KUBESIM__OBJECT_META__LABELS_ENTRY__INIT;
	Kubesim__ObjectMeta__LabelsEntry *labels[1] = { &l1 };
	Kubesim__OwnerReference r = KUBESIM__OWNER_REFERENCE__INIT;
	Kubesim__OwnerReference *refs[1] = { &r };
	Kubesim__Time ts = KUBESIM__TIME__INIT;
	char *fins[2] = { "a/b", "c" };
	Kubesim__ObjectMeta meta = KUBESIM__OBJECT_META__INIT;
	Kubesim__Secret__DataEntry d1 = KUBESIM__SECRET__DATA_ENTRY__INIT;
	Kubesim__Secret__DataEntry *data[1] = { &d1 };
	Kubesim__Secret sec = KUBESIM__SECRET__INIT;
	json_object *o = NULL;
	char err[256];
	size_t n;
	uint8_t *b;

	(void)state;
	l1.key = "app";
	l1.value = "";
	r.kind = "Job";
	r.name = "j";
	r.uid = "u1";
	r.api_version = "batch/v1";
	r.has_controller = 1;
	r.controller = 1;
	r.has_block_owner_deletion = 1;
	r.block_owner_deletion = 0;
	ts.has_seconds = 1;
	ts.seconds = 1767225600; /* 2026-01-01T00:00:00Z */
	meta.name = "s";
	meta.namespace_ = "ns";
	meta.n_labels = 1;
	meta.labels = labels;
	meta.n_owner_references = 1;
	meta.owner_references = refs;
	meta.deletion_timestamp = &ts;
	meta.has_generation = 1;
	meta.generation = 4;
	meta.n_finalizers = 2;
	meta.finalizers = fins;
	d1.key = "bin";
	d1.has_value = 1;
	d1.value.data = (uint8_t *)"\x00\xff";
	d1.value.len = 2;
	sec.metadata = &meta;
	sec.n_data = 1;
	sec.data = data;
	sec.type = "kubernetes.io/tls";
	sec.has_immutable = 1;
	sec.immutable = 0;
	b = envelope("v1", "Secret", &sec.base, NULL, &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_OK);
	assert_json(o,
	        "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'s',"
	        "'namespace':'ns','generation':4,'deletionTimestamp':"
	        "'2026-01-01T00:00:00Z','labels':{'app':''},"
	        "'ownerReferences':[{'kind':'Job','name':'j','uid':'u1',"
	        "'apiVersion':'batch/v1','controller':true,"
	        "'blockOwnerDeletion':false}],'finalizers':['a/b','c']},"
	        "'data':{'bin':'AP8='},'type':'kubernetes.io/tls',"
	        "'immutable':false}");
	json_object_put(o);
	free(b);
}

/* Malformed bodies: 400 with a reason; an unknown kind or a custom
 * resource: 415; nothing crashes and nothing is returned. */
static void
test_errors(void **state)
{
	static const uint8_t junk[] = { 'k', '8', 's', 0, 0x0a, 0xff, 0xff };
	Kubesim__Namespace ns = KUBESIM__NAMESPACE__INIT;
	json_object *o = NULL;
	char err[256];
	uint8_t *b;
	size_t n;

	(void)state;
	assert_int_equal(
	        decode((const uint8_t *)"{}", 2, &o, err, sizeof(err)),
	        KPROTO_EBAD);
	assert_non_null(strstr(err, "prefix"));
	assert_int_equal(decode(junk, 3, &o, err, sizeof(err)), KPROTO_EBAD);
	assert_int_equal(
	        decode(junk, sizeof(junk), &o, err, sizeof(err)), KPROTO_EBAD);
	assert_non_null(strstr(err, "envelope"));
	assert_null(o);

	b = envelope("apps/v1", "StatefulSet", &ns.base, NULL, &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_EKIND);
	assert_non_null(strstr(err, "apps/v1 StatefulSet"));
	free(b);
	b = envelope("sympozium.ai/v1alpha1", "AgentRun", NULL, NULL, &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_EKIND);
	free(b);
	b = envelope("v1", "Namespace", &ns.base, "gzip", &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_EBAD);
	assert_non_null(strstr(err, "gzip"));
	free(b);
	assert_null(o);
}

/* A raw that is not the kind's message: 400. */
static void
test_bad_raw(void **state)
{
	Kubesim__TypeMeta tm = KUBESIM__TYPE_META__INIT;
	Kubesim__Unknown u = KUBESIM__UNKNOWN__INIT;
	static uint8_t raw[] = { 0x0a, 0x7f, 0x01 }; /* length past the end */
	json_object *o = NULL;
	uint8_t out[64];
	char err[256];
	size_t n;

	(void)state;
	tm.api_version = "v1";
	tm.kind = "ConfigMap";
	u.type_meta = &tm;
	u.has_raw = 1;
	u.raw.data = raw;
	u.raw.len = sizeof(raw);
	memcpy(out, "k8s", 4);
	n = kubesim__unknown__pack(&u, out + 4) + 4;
	assert_int_equal(decode(out, n, &o, err, sizeof(err)), KPROTO_EBAD);
	assert_non_null(strstr(err, "ConfigMap"));
	assert_null(o);
}

/* A Deployment as `kubectl create deployment web --image=nginx
 * --replicas=0 --port=80` sends it, and a Service with an IntOrString
 * target port and a Pod with a Quantity: replicas 0 kept (a Go pointer),
 * targetPort an integer or a string, quantities strings. */
static void
test_more_kinds(void **state)
{
	Kubesim__ObjectMeta md = KUBESIM__OBJECT_META__INIT;
	Kubesim__ContainerPort port = KUBESIM__CONTAINER_PORT__INIT;
	Kubesim__ContainerPort *ports[] = { &port };
	Kubesim__Container c = KUBESIM__CONTAINER__INIT, *cs[] = { &c };
	Kubesim__PodSpec ps = KUBESIM__POD_SPEC__INIT;
	Kubesim__PodTemplateSpec tpl = KUBESIM__POD_TEMPLATE_SPEC__INIT;
	Kubesim__DeploymentSpec spec = KUBESIM__DEPLOYMENT_SPEC__INIT;
	Kubesim__Deployment d = KUBESIM__DEPLOYMENT__INIT;
	Kubesim__IntOrString tp = KUBESIM__INT_OR_STRING__INIT;
	Kubesim__ServicePort sp = KUBESIM__SERVICE_PORT__INIT,
	                     *sps[] = { &sp };
	Kubesim__ServiceSpec ss = KUBESIM__SERVICE_SPEC__INIT;
	Kubesim__Service svc = KUBESIM__SERVICE__INIT;
	json_object *o = NULL;
	char err[256];
	uint8_t *b;
	size_t n;

	(void)state;
	md.name = "web";
	port.has_containerport = 1;
	port.containerport = 80;
	c.name = "nginx";
	c.image = "nginx";
	c.n_ports = 1;
	c.ports = ports;
	ps.n_containers = 1;
	ps.containers = cs;
	tpl.spec = &ps;
	spec.has_replicas = 1;
	spec.replicas = 0;
	spec.template_ = &tpl;
	d.metadata = &md;
	d.spec = &spec;
	b = envelope("apps/v1", "Deployment", &d.base, NULL, &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_OK);
	assert_json(o,
	        "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{"
	        "'name':'web'},'spec':{'replicas':0,'template':{'spec':{"
	        "'containers':[{'name':'nginx','image':'nginx','ports':[{"
	        "'containerPort':80}]}]}}}}");
	json_object_put(o);
	free(b);
	tp.has_type = 1;
	tp.type = 1;
	tp.strval = "http";
	sp.has_port = 1;
	sp.port = 80;
	sp.targetport = &tp;
	ss.n_ports = 1;
	ss.ports = sps;
	svc.metadata = &md;
	svc.spec = &ss;
	b = envelope("v1", "Service", &svc.base, NULL, &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_OK);
	assert_json(jx_get(o, "spec"),
	        "{'ports':[{'port':80,'targetPort':'http'}]}");
	json_object_put(o);
	free(b);
	tp.type = 0;
	tp.has_intval = 1;
	tp.intval = 8080;
	b = envelope("v1", "Service", &svc.base, NULL, &n);
	assert_int_equal(decode(b, n, &o, err, sizeof(err)), KPROTO_OK);
	assert_json(jx_get(o, "spec"),
	        "{'ports':[{'port':80,'targetPort':8080}]}");
	json_object_put(o);
	free(b);
}

/* A field kubesim does not declare: refused, naming it, when it holds
 * something; an empty one (the Kubernetes encoder writes every
 * non-pointer field) is ignored. */
static void
test_undeclared_fields(void **state)
{
	Kubesim__ObjectMeta md = KUBESIM__OBJECT_META__INIT;
	Kubesim__ServiceAccount sa = KUBESIM__SERVICE_ACCOUNT__INIT;
	Kubesim__TypeMeta tm = KUBESIM__TYPE_META__INIT;
	Kubesim__Unknown u = KUBESIM__UNKNOWN__INIT;
	uint8_t raw[256], out[512];
	json_object *o = NULL;
	char err[256];
	size_t n, k;

	(void)state;
	md.name = "sa";
	sa.metadata = &md;
	k = kubesim__service_account__pack(&sa, raw);
	/* field 98, varint 0: empty */
	raw[k++] = 0x90;
	raw[k++] = 0x06;
	raw[k++] = 0x00;
	tm.api_version = "v1";
	tm.kind = "ServiceAccount";
	u.type_meta = &tm;
	u.has_raw = 1;
	u.raw.data = raw;
	u.raw.len = k;
	memcpy(out, "k8s", 4);
	n = kubesim__unknown__pack(&u, out + 4) + 4;
	assert_int_equal(decode(out, n, &o, err, sizeof(err)), KPROTO_OK);
	assert_json(o,
	        "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{"
	        "'name':'sa'}}");
	json_object_put(o);
	o = NULL;
	/* field 99, varint 1: something kubesim would lose */
	raw[k++] = 0x98;
	raw[k++] = 0x06;
	raw[k++] = 0x01;
	u.raw.len = k;
	n = kubesim__unknown__pack(&u, out + 4) + 4;
	assert_int_equal(decode(out, n, &o, err, sizeof(err)), KPROTO_EBAD);
	assert_null(o);
	assert_non_null(strstr(err, "field 99 of kubesim.ServiceAccount"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubectl_bodies),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bad_raw),
		cmocka_unit_test(test_more_kinds),
		cmocka_unit_test(test_undeclared_fields),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
