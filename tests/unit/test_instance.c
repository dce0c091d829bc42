/*
 * test_instance.c: the SympoziumInstance reconciler (workers/instance.c)
 * driven directly: an instance (and its children) in, the writes and the
 * verdict out.  Its view reads are answered by a fake supervisor end on
 * an ipc socket (a thread answering VIEW_REQs from a table and logging
 * them), so the tests also see which reads it makes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "workers/instance.h"
#include "workers/view.h"

/* ---- the fake supervisor end ---- */

/* A canned answer: what ("get", "list", "secret"), plural (for get and
 * list), name (for get and secret), status, and the object or items. */
struct canned {
	const char *what;
	const char *plural;
	const char *name;
	enum ipc_view_status st;
	const char *json;
};

static int
setup(void **state)
{
	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	return (fakesup_setup(state));
}

static json_object *
parse(const char *json, const char *dflt)
{
	json_object *o = json_tokener_parse(json != NULL ? json : dflt);

	assert_non_null(o);
	return (o);
}

/* A list's items, labelled as the instance's so its selector finds them. */
static void
add_items(struct fakesup *f, const char *plural, const char *json)
{
	json_object *items = parse(json, "[]");

	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *o
		        = json_object_get(json_object_array_get_idx(items, i));
		if (jx_getv(o, "metadata", "labels", "sympozium.ai/instance",
		            NULL)
		        == NULL) {
			jx_setv(o, json_object_new_string("alice"), "metadata",
			        "labels", "sympozium.ai/instance", NULL);
		}
		fakesup_add(f, plural, NULL, NULL, o);
	}
	json_object_put(items);
}

/* Loads table into f: its answers, its errors, its absences; a Secret
 * not in it is found (empty), anything else not found or listed empty. */
static void
load(struct fakesup *f, const struct canned *table)
{
	fakesup_reset(f);
	fakesup_add_secret(f, NULL, NULL, json_object_new_object());
	for (const struct canned *c = table; c->what != NULL; c++) {
		bool secret = strcmp(c->what, "secret") == 0;
		const char *plural = secret ? "secrets" : c->plural;
		json_object *o
		        = c->st == IPC_VS_OK ? parse(c->json, "{}") : NULL;
		if (c->st == IPC_VS_ERROR) {
			fakesup_fail(f, plural, c->name, "boom");
		} else if (strcmp(c->what, "list") == 0) {
			json_object_put(o);
			add_items(f, plural, c->json);
		} else if (secret) {
			fakesup_add_secret(f, NULL, c->name, o);
		} else {
			fakesup_add(f, plural, NULL, c->name, o);
		}
	}
}

/* ---- running the reconciler ---- */

/* Reconciles obj (JSON text or NULL) with children (JSON array text or
 * NULL), answering view reads from table (NULL view when f is NULL). */
static void
run(struct fakesup *f, const struct canned *table, const char *obj,
        const char *children, struct fakesup_run *r)
{
	json_object *o = obj != NULL ? json_tokener_parse(obj) : NULL;
	json_object *k = json_tokener_parse(children ? children : "[]");

	assert_true(obj == NULL || o != NULL);
	if (f != NULL) {
		load(f, table);
	}
	fakesup_run(&instance_reconciler, f, "default/alice", o, k,
	        1700000000000, r);
	json_object_put(o);
	json_object_put(k);
}

static size_t
nwrites(const struct fakesup_run *r)
{
	return (r->writes != NULL ? json_object_array_length(r->writes) : 0);
}

/* Write i, checked to be op on plural. */
static json_object *
wr(const struct fakesup_run *r, size_t i, const char *op, const char *plural)
{
	json_object *w;

	assert_true(i < nwrites(r));
	w = json_object_array_get_idx(r->writes, i);
	assert_string_equal(jx_get_str(w, "op"), op);
	assert_string_equal(jx_get_str(w, "resource.plural"), plural);
	return (w);
}

static bool
tolerates(json_object *w, const char *what)
{
	json_object *t = jx_get(w, "tolerate");

	for (size_t i = 0; t != NULL && i < json_object_array_length(t); i++) {
		if (strcmp(json_object_get_string(
		                   json_object_array_get_idx(t, i)),
		            what)
		        == 0) {
			return (true);
		}
	}
	return (false);
}

static const char *
lbl(json_object *o, const char *key)
{
	json_object *v = jx_getv(o, "metadata", "labels", key, NULL);

	return (v != NULL ? json_object_get_string(v) : NULL);
}

/* ---- objects ---- */

#define META                                                                  \
	"\"apiVersion\":\"sympozium.ai/v1alpha1\","                           \
	"\"kind\":\"SympoziumInstance\",\"metadata\":{\"name\":\"alice\","    \
	"\"namespace\":\"default\",\"uid\":\"u-1\",\"resourceVersion\":"      \
	"\"7\","                                                              \
	"\"finalizers\":[\"sympozium.ai/finalizer\"]}"

#define AGENTS "\"agents\":{\"default\":{\"model\":\"gpt-4o\"}}"

/* The spec's sample alice (9.1). */
static const char alice[]
        = "{" META ",\"spec\":{" AGENTS ","
          "\"authRefs\":[{\"provider\":\"openai\",\"secret\":\"k\"}],"
          "\"channels\":[{\"type\":\"telegram\",\"configRef\":{\"secret\":"
          "\"alice-telegram-secret\"}},{\"type\":\"slack\",\"configRef\":"
          "{\"secret\":\"alice-slack-secret\"}}],"
          "\"skills\":[{\"skillPackRef\":\"k8s-ops\"}],"
          "\"memory\":{\"enabled\":true,\"maxSizeKB\":256}}}";

static char *
inst(const char *spec, const char *status)
{
	char *s;

	assert_true(asprintf(&s, "{" META ",\"spec\":{" AGENTS "%s%s}%s%s}",
	                    spec[0] ? "," : "", spec,
	                    status ? ",\"status\":" : "", status ? status : "")
	        > 0);
	return (s);
}

static const struct canned none[] = { { NULL, NULL, NULL, 0, NULL } };

/* ---- tests ---- */

static void
test_gone(void **state)
{
	struct fakesup_run r;

	(void)state;
	run(NULL, NULL, NULL, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&r), 0);
	fakesup_run_fini(&r);
}

static void
test_adds_finalizer(void **state)
{
	struct fakesup_run r;
	json_object *w;

	(void)state;
	run(NULL, NULL,
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"default\","
	        "\"resourceVersion\":\"3\",\"finalizers\":[\"other/x\"]},"
	        "\"spec\":{" AGENTS ",\"channels\":[{\"type\":\"slack\"}]}}",
	        NULL, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&r), 1);
	w = wr(&r, 0, "patch", "sympoziuminstances");
	assert_string_equal(jx_get_str(w, "patchType"), "merge");
	assert_string_equal(jx_get_str(w, "name"), "alice");
	assert_string_equal(jx_get_str(w, "namespace"), "default");
	fakesup_assert_json(jx_get(w, "patch"),
	        "{\"metadata\":{\"finalizers\":[\"other/x\","
	        "\"sympozium.ai/finalizer\"],\"resourceVersion\":\"3\"}}");
	fakesup_run_fini(&r);
}

static const char kids[]
        = "[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":"
          "{\"name\":\"alice-channel-slack\",\"namespace\":\"default\","
          "\"labels\":{\"sympozium.ai/component\":\"channel\","
          "\"sympozium.ai/channel\":\"slack\",\"sympozium.ai/instance\":"
          "\"alice\"}},\"status\":{\"readyReplicas\":1}},"
          "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":"
          "{\"name\":\"alice-channel-telegram\",\"namespace\":\"default\","
          "\"labels\":{\"sympozium.ai/component\":\"channel\","
          "\"sympozium.ai/channel\":\"telegram\",\"sympozium.ai/instance\":"
          "\"alice\"}},\"status\":{\"replicas\":1}},"
          "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":"
          "{\"name\":\"alice-memory\",\"namespace\":\"default\",\"labels\":"
          "{\"sympozium.ai/component\":\"memory\",\"sympozium.ai/instance\":"
          "\"alice\"}}},"
          "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":"
          "{\"name\":\"alice-memory\",\"namespace\":\"default\",\"labels\":"
          "{\"sympozium.ai/component\":\"memory\",\"sympozium.ai/instance\":"
          "\"alice\"}}}]";

static const char kids_no_service[]
        = "[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
          "\"metadata\":{\"name\":\"alice-memory\",\"namespace\":"
          "\"default\",\"labels\":{\"sympozium.ai/component\":"
          "\"memory\",\"sympozium.ai/instance\":\"alice\"}}}]";

/* The legacy memory ConfigMap, owned by the instance (uid u-alice). */
static const struct canned memory_cm_owned[] = {
	{ "get", "configmaps", "alice-memory", IPC_VS_OK,
	        "{\"metadata\":{\"name\":\"alice-memory\",\"ownerReferences\":"
	        "[{\"uid\":\"u-alice\",\"controller\":true}]}}" },
	{ NULL, NULL, NULL, IPC_VS_OK, NULL },
};

/* One of that name the instance does not control (a PersonaPack's seed
 * memory is named so too). */
static const struct canned memory_cm_other[] = {
	{ "get", "configmaps", "alice-memory", IPC_VS_OK,
	        "{\"metadata\":{\"name\":\"alice-memory\",\"ownerReferences\":"
	        "[{\"uid\":\"u-pack\",\"controller\":true}]}}" },
	{ NULL, NULL, NULL, IPC_VS_OK, NULL },
};

static void
test_delete_cleans_up(void **state)
{
	struct fakesup_run r;
	json_object *w;

	run(*state, memory_cm_owned,
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"default\","
	        "\"uid\":\"u-alice\","
	        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"finalizers\":[\"sympozium.ai/"
	        "finalizer\"]},\"spec\":{" AGENTS "}}",
	        kids, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&r), 6);
	w = wr(&r, 0, "delete", "deployments");
	assert_string_equal(jx_get_str(w, "name"), "alice-channel-slack");
	assert_true(tolerates(w, "NotFound"));
	w = wr(&r, 1, "delete", "deployments");
	assert_string_equal(jx_get_str(w, "name"), "alice-channel-telegram");
	w = wr(&r, 2, "patch", "sympoziuminstances");
	fakesup_assert_json(
	        jx_get(w, "patch"), "{\"metadata\":{\"finalizers\":null}}");
	w = wr(&r, 3, "delete", "configmaps");
	assert_string_equal(jx_get_str(w, "name"), "alice-memory");
	assert_true(tolerates(w, "NotFound"));
	w = wr(&r, 4, "delete", "deployments");
	assert_string_equal(jx_get_str(w, "name"), "alice-memory");
	w = wr(&r, 5, "delete", "services");
	assert_string_equal(jx_get_str(w, "name"), "alice-memory");
	fakesup_run_fini(&r);
}

static void
test_delete_keeps_other_finalizers(void **state)
{
	struct fakesup_run r;

	run(*state, memory_cm_other,
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"default\","
	        "\"uid\":\"u-alice\","
	        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"resourceVersion\":\"9\",\"finalizers\":[\"a/b\","
	        "\"sympozium.ai/finalizer\"]}}",
	        NULL, &r);
	/* the memory ConfigMap of that name is not the instance's: kept */
	assert_int_equal(nwrites(&r), 1);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "patch", "sympoziuminstances"), "patch"),
	        "{\"metadata\":{\"finalizers\":[\"a/b\"],"
	        "\"resourceVersion\":\"9\"}}");
	fakesup_run_fini(&r);
}

static void
test_delete_without_finalizer(void **state)
{
	struct fakesup_run r;

	(void)state;
	run(NULL, NULL,
	        "{\"metadata\":{\"name\":\"alice\",\"namespace\":\"default\","
	        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"finalizers\":[\"a/b\"]}}",
	        kids, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&r), 0);
	fakesup_run_fini(&r);
}

static void
test_sample_alice_first_pass(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run r;
	json_object *w, *d, *ctr;

	run(f, none, alice, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after_ms, 60000);
	assert_string_equal(fakesup_log(f),
	        "secret - default/alice-telegram-secret\n"
	        "get deployments default/alice-channel-telegram\n"
	        "secret - default/alice-slack-secret\n"
	        "get deployments default/alice-channel-slack\n"
	        "list agentruns default/ sympozium.ai/instance=alice"
	        " fields=metadata.labels.sympozium.ai/component,"
	        "metadata.deletionTimestamp,status.phase\n"
	        "get configmaps default/alice-memory\n");
	assert_int_equal(nwrites(&r), 4);
	w = wr(&r, 0, "create", "deployments");
	assert_true(tolerates(w, "AlreadyExists"));
	assert_string_equal(jx_get_str(w, "namespace"), "default");
	d = jx_get(w, "object");
	fakesup_assert_json(d,
	        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	        "\"metadata\":{\"name\":\"alice-channel-telegram\","
	        "\"namespace\":\"default\",\"labels\":{"
	        "\"sympozium.ai/component\":\"channel\","
	        "\"sympozium.ai/channel\":\"telegram\","
	        "\"sympozium.ai/instance\":\"alice\"},"
	        "\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/"
	        "v1alpha1\","
	        "\"kind\":\"SympoziumInstance\",\"name\":\"alice\","
	        "\"uid\":\"u-1\",\"controller\":true,"
	        "\"blockOwnerDeletion\":true}]},"
	        "\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{"
	        "\"sympozium.ai/component\":\"channel\","
	        "\"sympozium.ai/channel\":\"telegram\","
	        "\"sympozium.ai/instance\":\"alice\"}},"
	        "\"template\":{\"metadata\":{\"labels\":{"
	        "\"sympozium.ai/component\":\"channel\","
	        "\"sympozium.ai/channel\":\"telegram\","
	        "\"sympozium.ai/instance\":\"alice\"}},"
	        "\"spec\":{\"containers\":[{\"name\":\"channel\","
	        "\"image\":\"ghcr.io/sympozium-ai/sympozium/"
	        "channel-telegram:latest\",\"imagePullPolicy\":"
	        "\"IfNotPresent\","
	        "\"env\":[{\"name\":\"INSTANCE_NAME\",\"value\":\"alice\"},"
	        "{\"name\":\"EVENT_BUS_URL\",\"value\":"
	        "\"nats://nats.sympozium-system.svc:4222\"},"
	        "{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\"},"
	        "{\"name\":\"OTEL_EXPORTER_OTLP_PROTOCOL\",\"value\":\"grpc\"}"
	        ","
	        "{\"name\":\"OTEL_SERVICE_NAME\",\"value\":"
	        "\"sympozium-channel-telegram\"}],"
	        "\"envFrom\":[{\"secretRef\":{\"name\":"
	        "\"alice-telegram-secret\"}}]}]}}}}");
	w = wr(&r, 1, "create", "deployments");
	ctr = jx_get(w, "object.spec.template.spec.containers");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(ctr, 0), "image"),
	        "ghcr.io/sympozium-ai/sympozium/channel-slack:latest");
	assert_null(jx_get(w, "object.spec.strategy"));
	w = wr(&r, 2, "update_status", "sympoziuminstances");
	/* no activeAgentPods: zero is omitted (upstream api/v1alpha1
	 * sympoziuminstance_types.go, ActiveAgentPods omitempty) */
	fakesup_assert_json(jx_get(w, "object.status"),
	        "{\"phase\":\"Running\",\"channels\":[{\"type\":\"telegram\","
	        "\"status\":\"Pending\"},{\"type\":\"slack\",\"status\":"
	        "\"Pending\"}]}");
	assert_string_equal(
	        jx_get_str(w, "object.spec.agents.default.model"), "gpt-4o");
	w = wr(&r, 3, "create", "configmaps");
	assert_true(tolerates(w, "AlreadyExists"));
	fakesup_assert_json(jx_get(w, "object"),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	        "\"name\":\"alice-memory\",\"namespace\":\"default\","
	        "\"labels\":{\"sympozium.ai/component\":\"memory\","
	        "\"sympozium.ai/instance\":\"alice\"},"
	        "\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/"
	        "v1alpha1\","
	        "\"kind\":\"SympoziumInstance\",\"name\":\"alice\","
	        "\"uid\":\"u-1\",\"controller\":true,"
	        "\"blockOwnerDeletion\":true}]},\"data\":{\"MEMORY.md\":"
	        "\"# Agent Memory\\n\\nNo memories recorded yet.\\n\"}}");
	fakesup_run_fini(&r);
}

static void
test_existing_children_steady_state(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "get", "configmaps", "alice-memory", IPC_VS_OK, "{}" },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst(
	        "\"channels\":[{\"type\":\"slack\"},"
	        "{\"type\":\"telegram\"}],\"memory\":{\"enabled\":true}",
	        "{\"phase\":\"Running\",\"totalAgentRuns\":4,\"channels\":["
	        "{\"type\":\"slack\",\"status\":\"Connected\"},"
	        "{\"type\":\"telegram\",\"status\":\"Disconnected\"}]}");
	struct fakesup_run r;

	run(f, t, o, kids, &r);
	/* nothing changes: no creates, no status write */
	assert_int_equal(nwrites(&r), 0);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after_ms, INST_REQUEUE_MS);
	assert_null(strstr(fakesup_log(f), "get deployments"));
	fakesup_run_fini(&r);
	free(o);
}

static void
test_readiness_changes_status(void **state)
{
	struct fakesup *f = *state;
	char *o = inst("\"channels\":[{\"type\":\"slack\"}]",
	        "{\"phase\":\"Running\",\"channels\":[{\"type\":\"slack\","
	        "\"status\":\"Pending\"}]}");
	struct fakesup_run r;

	run(f, none, o, kids, &r);
	assert_int_equal(nwrites(&r), 1);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status"),
	        "{\"phase\":\"Running\",\"channels\":[{\"type\":\"slack\","
	        "\"status\":\"Connected\"}]}");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_missing_secret(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "secret", NULL, "nope", IPC_VS_NOT_FOUND, NULL },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"channels\":[{\"type\":\"discord\",\"configRef\":"
	               "{\"secret\":\"nope\"}},{\"type\":\"slack\"}]",
	        NULL);
	struct fakesup_run r;
	json_object *w;

	run(f, t, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(nwrites(&r), 2);
	w = wr(&r, 0, "create", "deployments");
	assert_string_equal(
	        jx_get_str(w, "object.metadata.name"), "alice-channel-slack");
	assert_null(
	        jx_get(w, "object.spec.template.spec.containers.0.envFrom"));
	w = wr(&r, 1, "update_status", "sympoziuminstances");
	fakesup_assert_json(jx_get(w, "object.status"),
	        "{\"phase\":\"Running\",\"channels\":[{\"type\":\"discord\","
	        "\"status\":\"Error\",\"message\":\"secret \\\"nope\\\" not "
	        "found\"},{\"type\":\"slack\",\"status\":\"Pending\"}]}");
	/* no configRef: no secret read, no envFrom */
	assert_null(strstr(fakesup_log(f), "secret - default/\n"));
	fakesup_run_fini(&r);
	free(o);
}

static void
test_secret_read_error(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "secret", NULL, "s2", IPC_VS_ERROR, NULL },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"channels\":[{\"type\":\"slack\"},{\"type\":"
	               "\"discord\",\"configRef\":{\"secret\":\"s2\"}}]",
	        "{\"phase\":\"Running\",\"channels\":[{\"type\":\"slack\","
	        "\"status\":\"Connected\"}],\"activeAgentPods\":3}");
	struct fakesup_run r;

	run(f, t, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_ERROR);
	assert_non_null(strstr(r.message, "boom"));
	/* slack was created before the error; the status keeps its
	 * channels and count, with phase Error; nothing after */
	assert_int_equal(nwrites(&r), 3);
	evtest_assert(r.result, 2, "alice", "Warning", "Failed", NULL);
	wr(&r, 0, "create", "deployments");
	fakesup_assert_json(
	        jx_get(wr(&r, 1, "update_status", "sympoziuminstances"),
	                "object.status"),
	        "{\"phase\":\"Error\",\"channels\":[{\"type\":\"slack\","
	        "\"status\":\"Connected\"}],\"activeAgentPods\":3}");
	assert_null(strstr(fakesup_log(f), "agentruns"));
	fakesup_run_fini(&r);
	free(o);
}

static void
test_deployment_read_error(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "get", "deployments", NULL, IPC_VS_ERROR, NULL },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"channels\":[{\"type\":\"slack\"}]",
	        "{\"phase\":\"Error\"}");
	struct fakesup_run r;

	/* already Error: no status write either */
	run(f, t, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_ERROR);
	assert_int_equal(nwrites(&r), 0);
	fakesup_run_fini(&r);
	free(o);
}

static void
test_deployment_found_by_name(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "get", "deployments", "alice-channel-slack", IPC_VS_OK,
		            "{\"kind\":\"Deployment\",\"status\":"
		            "{\"readyReplicas\":2}}" },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"channels\":[{\"type\":\"slack\"}]", NULL);
	struct fakesup_run r;

	run(f, t, o, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status.channels"),
	        "[{\"type\":\"slack\",\"status\":\"Connected\"}]");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_whatsapp(void **state)
{
	struct fakesup *f = *state;
	char *o = inst("\"channels\":[{\"type\":\"whatsapp\"}]", NULL);
	struct fakesup_run r;
	json_object *w;

	run(f, none, o, NULL, &r);
	assert_string_equal(fakesup_log(f),
	        "get persistentvolumeclaims default/"
	        "alice-channel-whatsapp-data\n"
	        "get deployments default/alice-channel-whatsapp\n"
	        "list agentruns default/ sympozium.ai/instance=alice"
	        " fields=metadata.labels.sympozium.ai/component,"
	        "metadata.deletionTimestamp,status.phase\n");
	assert_int_equal(nwrites(&r), 3);
	w = wr(&r, 0, "create", "persistentvolumeclaims");
	assert_true(tolerates(w, "AlreadyExists"));
	assert_string_equal(jx_get_str(w, "object.metadata.name"),
	        "alice-channel-whatsapp-data");
	assert_string_equal(
	        lbl(jx_get(w, "object"), "sympozium.ai/component"), "channel");
	assert_string_equal(
	        lbl(jx_get(w, "object"), "sympozium.ai/channel"), "whatsapp");
	assert_string_equal(
	        lbl(jx_get(w, "object"), "sympozium.ai/instance"), "alice");
	assert_string_equal(
	        jx_get_str(w, "object.metadata.ownerReferences.0.uid"), "u-1");
	fakesup_assert_json(jx_get(w, "object.spec"),
	        "{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":"
	        "{\"requests\":{\"storage\":\"256Mi\"}}}");
	w = wr(&r, 1, "create", "deployments");
	assert_string_equal(
	        jx_get_str(w, "object.spec.strategy.type"), "Recreate");
	fakesup_assert_json(jx_get(w, "object.spec.template.spec.volumes"),
	        "[{\"name\":\"whatsapp-data\",\"persistentVolumeClaim\":"
	        "{\"claimName\":\"alice-channel-whatsapp-data\"}}]");
	fakesup_assert_json(jx_get(w,
	                            "object.spec.template.spec.containers.0."
	                            "volumeMounts"),
	        "[{\"name\":\"whatsapp-data\",\"mountPath\":\"/data\"}]");
	assert_null(
	        jx_get(w, "object.spec.template.spec.containers.0.envFrom"));
	wr(&r, 2, "update_status", "sympoziuminstances");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_whatsapp_pvc_exists_or_fails(void **state)
{
	struct fakesup *f = *state;
	static const struct canned ok[]
	        = { { "get", "persistentvolumeclaims", NULL, IPC_VS_OK, "{}" },
		          { NULL, NULL, NULL, 0, NULL } };
	static const struct canned bad[] = {
		{ "get", "persistentvolumeclaims", NULL, IPC_VS_ERROR, NULL },
		{ NULL, NULL, NULL, 0, NULL }
	};
	char *o = inst("\"channels\":[{\"type\":\"whatsapp\"}]", NULL);
	struct fakesup_run r;

	run(f, ok, o, NULL, &r);
	assert_int_equal(nwrites(&r), 2);
	wr(&r, 0, "create", "deployments");
	fakesup_run_fini(&r);
	run(f, bad, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_ERROR);
	assert_int_equal(nwrites(&r), 2);
	evtest_assert(r.result, 1, "alice", "Warning", "Failed", NULL);
	assert_string_equal(
	        jx_get_str(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status.phase"),
	        "Error");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_duplicate_types_collapse(void **state)
{
	struct fakesup *f = *state;
	char *o = inst("\"channels\":[{\"type\":\"slack\"},{\"type\":"
	               "\"slack\",\"configRef\":{\"secret\":\"x\"}}]",
	        NULL);
	struct fakesup_run r;

	run(f, none, o, NULL, &r);
	assert_int_equal(nwrites(&r), 2);
	wr(&r, 0, "create", "deployments");
	fakesup_assert_json(
	        jx_get(wr(&r, 1, "update_status", "sympoziuminstances"),
	                "object.status.channels"),
	        "[{\"type\":\"slack\",\"status\":\"Pending\"},"
	        "{\"type\":\"slack\",\"status\":\"Pending\"}]");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_invalid_types(void **state)
{
	struct fakesup *f = *state;
	char *o = inst("\"channels\":[{\"type\":\"\"},{\"configRef\":{}},"
	               "{\"type\":\"Bad_Type\"},{\"type\":\"-x\"}]",
	        NULL);
	struct fakesup_run r;

	run(f, none, o, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status.channels"),
	        "[{\"type\":\"\",\"status\":\"Error\",\"message\":"
	        "\"invalid channel type \\\"\\\"\"},"
	        "{\"type\":\"\",\"status\":\"Error\",\"message\":"
	        "\"invalid channel type \\\"\\\"\"},"
	        "{\"type\":\"Bad_Type\",\"status\":\"Error\",\"message\":"
	        "\"invalid channel type \\\"Bad_Type\\\"\"},"
	        "{\"type\":\"-x\",\"status\":\"Error\",\"message\":"
	        "\"invalid channel type \\\"-x\\\"\"}]");
	assert_null(strstr(fakesup_log(f), "deployments"));
	fakesup_run_fini(&r);
	free(o);
}

static void
test_long_instance_name(void **state)
{
	struct fakesup *f = *state;
	char name[80], *o;
	struct fakesup_run r;

	memset(name, 'a', 70);
	name[70] = '\0';
	assert_true(asprintf(&o,
	                    "{\"metadata\":{\"name\":\"%s\",\"namespace\":"
	                    "\"default\",\"finalizers\":["
	                    "\"sympozium.ai/finalizer\"]},\"spec\":{" AGENTS
	                    ",\"channels\":[{\"type\":\"slack\"}],"
	                    "\"memory\":{\"enabled\":true}}}",
	                    name)
	        > 0);
	run(f, none, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	/* no child it could not label; the reason is in the status */
	assert_int_equal(nwrites(&r), 1);
	assert_string_equal(
	        jx_get_str(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status.channels.0.status"),
	        "Error");
	assert_null(strstr(fakesup_log(f), "configmaps"));
	fakesup_run_fini(&r);
	free(o);
}

static void
test_active_count_and_serving(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "list", "agentruns", NULL, IPC_VS_OK,
		            "[{\"status\":{\"phase\":\"Running\"}},"
		            "{\"status\":{\"phase\":\"Serving\"}},"
		            "{\"status\":{\"phase\":\"Succeeded\"}},"
		            "{\"status\":{\"phase\":\"Pending\"}},{}]" },
		          { NULL, NULL, NULL, 0, NULL } };
	static const struct canned t2[]
	        = { { "list", "agentruns", NULL, IPC_VS_OK,
		            "[{\"status\":{\"phase\":\"Running\"}},"
		            "{\"status\":{\"phase\":\"Failed\"}}]" },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("", "{\"phase\":\"Running\"}");
	struct fakesup_run r;

	run(f, t, o, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status"),
	        "{\"phase\":\"Serving\",\"activeAgentPods\":2}");
	fakesup_run_fini(&r);
	run(f, t2, o, NULL, &r);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status"),
	        "{\"phase\":\"Running\",\"activeAgentPods\":1}");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_list_error_counts_zero(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "list", "agentruns", NULL, IPC_VS_ERROR, NULL },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"skills\":[{\"skillPackRef\":\"web-endpoint\"}]",
	        "{\"phase\":\"Serving\",\"activeAgentPods\":5}");
	struct fakesup_run r;

	run(f, t, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	/* count 0, phase Running; no web-endpoint run on an unknown list */
	assert_int_equal(nwrites(&r), 1);
	fakesup_assert_json(
	        jx_get(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status"),
	        "{\"phase\":\"Running\"}");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_memory_switches(void **state)
{
	struct fakesup *f = *state;
	char *off = inst("\"memory\":{\"enabled\":false}", NULL);
	char *absent = inst("", NULL);
	char *dflt = inst("\"memory\":{}", NULL);
	struct fakesup_run r;

	run(f, none, off, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	fakesup_run_fini(&r);
	run(f, none, absent, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	fakesup_run_fini(&r);
	assert_null(strstr(fakesup_log(f), "configmaps"));
	run(f, none, dflt, NULL, &r);
	assert_int_equal(nwrites(&r), 2);
	wr(&r, 1, "create", "configmaps");
	fakesup_run_fini(&r);
	free(off);
	free(absent);
	free(dflt);
}

static void
test_memory_configmap_read_error(void **state)
{
	struct fakesup *f = *state;
	static const struct canned t[]
	        = { { "get", "configmaps", NULL, IPC_VS_ERROR, NULL },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"memory\":{\"enabled\":true}", NULL);
	struct fakesup_run r;

	/* logged only */
	run(f, t, o, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(nwrites(&r), 1);
	wr(&r, 0, "update_status", "sympoziuminstances");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_memory_server(void **state)
{
	struct fakesup *f = *state;
	char *o = inst("\"skills\":[{\"skillPackRef\":\"memory\"}]",
	        "{\"phase\":\"Running\"}");
	struct fakesup_run r;
	json_object *w, *ctr;

	setenv("SYMPOZIUM_IMAGE_REGISTRY", "reg.example/x", 1);
	run(f, none, o, NULL, &r);
	assert_int_equal(nwrites(&r), 3);
	w = wr(&r, 0, "create", "persistentvolumeclaims");
	assert_string_equal(
	        jx_get_str(w, "object.metadata.name"), "alice-memory-db");
	assert_string_equal(lbl(jx_get(w, "object"), "sympozium.ai/component"),
	        "memory-db");
	assert_string_equal(jx_get_str(w,
	                            "object.spec.resources.requests."
	                            "storage"),
	        "1Gi");
	w = wr(&r, 1, "create", "deployments");
	assert_string_equal(
	        jx_get_str(w, "object.metadata.name"), "alice-memory");
	assert_string_equal(
	        jx_get_str(w, "object.spec.strategy.type"), "Recreate");
	fakesup_assert_json(jx_get(w, "object.spec.selector.matchLabels"),
	        "{\"sympozium.ai/component\":\"memory\","
	        "\"sympozium.ai/instance\":\"alice\"}");
	fakesup_assert_json(
	        jx_get(w, "object.spec.template.spec.securityContext"),
	        "{\"fsGroup\":1000}");
	ctr = jx_get(w, "object.spec.template.spec.containers.0");
	assert_string_equal(jx_get_str(ctr, "name"), "memory-server");
	assert_string_equal(
	        jx_get_str(ctr, "image"), "reg.example/x/skill-memory:latest");
	/* sympoziuminstance_controller.go: reconcileMemoryDeployment's
	 * container sets ImagePullPolicy PullIfNotPresent */
	assert_string_equal(
	        jx_get_str(ctr, "imagePullPolicy"), "IfNotPresent");
	fakesup_assert_json(jx_get(ctr, "env"),
	        "[{\"name\":\"MEMORY_DB_PATH\",\"value\":\"/data/memory.db\"},"
	        "{\"name\":\"MEMORY_PORT\",\"value\":\"8080\"}]");
	fakesup_assert_json(jx_get(ctr, "startupProbe"),
	        "{\"httpGet\":{\"path\":\"/health\",\"port\":8080},"
	        "\"periodSeconds\":2,\"failureThreshold\":30}");
	fakesup_assert_json(jx_get(ctr, "livenessProbe"),
	        "{\"httpGet\":{\"path\":\"/health\",\"port\":8080},"
	        "\"initialDelaySeconds\":5,\"periodSeconds\":30}");
	fakesup_assert_json(jx_get(ctr, "resources"),
	        "{\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"},"
	        "\"limits\":{\"cpu\":\"200m\",\"memory\":\"128Mi\"}}");
	w = wr(&r, 2, "create", "services");
	fakesup_assert_json(jx_get(w, "object.spec"),
	        "{\"ports\":[{\"name\":\"http\",\"port\":8080,"
	        "\"targetPort\":8080}],\"selector\":{"
	        "\"sympozium.ai/component\":\"memory\","
	        "\"sympozium.ai/instance\":\"alice\"}}");
	fakesup_run_fini(&r);
	/* once it runs (a child), only the PVC is checked */
	run(f, none, o, kids, &r);
	assert_int_equal(nwrites(&r), 1);
	wr(&r, 0, "create", "persistentvolumeclaims");
	fakesup_run_fini(&r);
	/* the Deployment without its Service (its create failed): the
	 * Service is made */
	run(f, none, o, kids_no_service, &r);
	assert_int_equal(nwrites(&r), 2);
	wr(&r, 0, "create", "persistentvolumeclaims");
	w = wr(&r, 1, "create", "services");
	assert_string_equal(
	        jx_get_str(w, "object.metadata.name"), "alice-memory");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_web_endpoint(void **state)
{
	struct fakesup *f = *state;
	static const struct canned alive[]
	        = { { "list", "agentruns", NULL, IPC_VS_OK,
		            "[{\"metadata\":{\"labels\":{\"sympozium.ai/"
		            "component\":\"web-endpoint\"}},\"status\":"
		            "{\"phase\":\"Serving\"}}]" },
		          { NULL, NULL, NULL, 0, NULL } };
	static const struct canned dying[]
	        = { { "list", "agentruns", NULL, IPC_VS_OK,
		            "[{\"metadata\":{\"deletionTimestamp\":\"x\","
		            "\"labels\":{\"sympozium.ai/component\":"
		            "\"web-endpoint\"}}}]" },
		          { NULL, NULL, NULL, 0, NULL } };
	char *o = inst("\"skills\":[{\"skillPackRef\":\"k8s-ops\"},"
	               "{\"skillPackRef\":\"skillpack-web-endpoint\","
	               "\"params\":{\"a\":\"b\"}}],"
	               "\"authRefs\":[{\"secret\":\"my-anthropic-key\"}],"
	               "\"imagePullSecrets\":[{\"name\":\"pull\"}]",
	        "{\"phase\":\"Running\"}");
	struct fakesup_run r;
	json_object *w;

	run(f, none, o, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	w = wr(&r, 0, "create", "agentruns");
	assert_true(tolerates(w, "AlreadyExists"));
	assert_string_equal(
	        jx_get_str(w, "object.metadata.name"), "alice-web-endpoint");
	assert_string_equal(lbl(jx_get(w, "object"), "sympozium.ai/component"),
	        "web-endpoint");
	assert_string_equal(
	        lbl(jx_get(w, "object"), "sympozium.ai/instance"), "alice");
	fakesup_assert_json(jx_get(w, "object.spec"),
	        "{\"instanceRef\":\"alice\",\"agentId\":\"web-endpoint\","
	        "\"sessionKey\":\"web-endpoint\",\"task\":\"Serve HTTP "
	        "requests for this instance\",\"mode\":\"server\","
	        "\"model\":{\"provider\":\"anthropic\",\"model\":\"gpt-4o\","
	        "\"authSecretRef\":\"my-anthropic-key\"},"
	        "\"skills\":[{\"skillPackRef\":\"skillpack-web-endpoint\","
	        "\"params\":{\"a\":\"b\"}}],"
	        "\"imagePullSecrets\":[{\"name\":\"pull\"}]}");
	fakesup_run_fini(&r);
	run(f, alive, o, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	assert_string_equal(
	        jx_get_str(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status.phase"),
	        "Serving");
	fakesup_run_fini(&r);
	run(f, dying, o, NULL, &r);
	assert_int_equal(nwrites(&r), 1);
	wr(&r, 0, "create", "agentruns");
	fakesup_run_fini(&r);
	free(o);
}

static void
test_otel_env(void **state)
{
	struct fakesup *f = *state;
	char *on = inst("\"channels\":[{\"type\":\"slack\"}],"
	                "\"observability\":{\"enabled\":true,"
	                "\"otlpEndpoint\":\"otel:4317\"}",
	        NULL);
	char *off = inst("\"channels\":[{\"type\":\"slack\"}],"
	                 "\"observability\":{\"enabled\":false,"
	                 "\"otlpEndpoint\":\"otel:4317\"}",
	        NULL);
	char *unset = inst("\"channels\":[{\"type\":\"slack\"}]", NULL);
	const char *path = "object.spec.template.spec.containers.0.env.2";
	struct fakesup_run r;

	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "from-env:4317", 1);
	run(f, none, on, NULL, &r);
	fakesup_assert_json(jx_get(wr(&r, 0, "create", "deployments"), path),
	        "{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\","
	        "\"value\":\"otel:4317\"}");
	fakesup_run_fini(&r);
	run(f, none, off, NULL, &r);
	fakesup_assert_json(jx_get(wr(&r, 0, "create", "deployments"), path),
	        "{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\"}");
	fakesup_run_fini(&r);
	run(f, none, unset, NULL, &r);
	fakesup_assert_json(jx_get(wr(&r, 0, "create", "deployments"), path),
	        "{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\","
	        "\"value\":\"from-env:4317\"}");
	fakesup_run_fini(&r);
	free(on);
	free(off);
	free(unset);
}

static void
test_no_view(void **state)
{
	char *chans = inst("\"channels\":[{\"type\":\"slack\",\"configRef\":"
	                   "{\"secret\":\"s\"}}]",
	        NULL);
	char *plain = inst("\"memory\":{\"enabled\":true}", NULL);
	struct fakesup_run r;

	(void)state;
	run(NULL, NULL, chans, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_ERROR);
	assert_string_equal(
	        jx_get_str(wr(&r, 0, "update_status", "sympoziuminstances"),
	                "object.status.phase"),
	        "Error");
	fakesup_run_fini(&r);
	run(NULL, NULL, plain, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(nwrites(&r), 1);
	fakesup_run_fini(&r);
	free(chans);
	free(plain);
}

static void
test_registered_name(void **state)
{
	(void)state;
	assert_string_equal(instance_reconciler.name, "instance");
	assert_ptr_equal(instance_reconciler.reconcile, inst_reconcile);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, fakesup_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_gone),
		T(test_adds_finalizer),
		T(test_delete_cleans_up),
		T(test_delete_keeps_other_finalizers),
		T(test_delete_without_finalizer),
		T(test_sample_alice_first_pass),
		T(test_existing_children_steady_state),
		T(test_readiness_changes_status),
		T(test_missing_secret),
		T(test_secret_read_error),
		T(test_deployment_read_error),
		T(test_deployment_found_by_name),
		T(test_whatsapp),
		T(test_whatsapp_pvc_exists_or_fails),
		T(test_duplicate_types_collapse),
		T(test_invalid_types),
		T(test_long_instance_name),
		T(test_active_count_and_serving),
		T(test_list_error_counts_zero),
		T(test_memory_switches),
		T(test_memory_configmap_read_error),
		T(test_memory_server),
		T(test_web_endpoint),
		T(test_otel_env),
		T(test_no_view),
		T(test_registered_name),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
