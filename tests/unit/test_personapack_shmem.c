/*
 * test_personapack_shmem.c: the PersonaPack's shared memory server
 * (workers/personapack_shmem.c through personapack_reconciler) against the
 * fake supervisor.  Every expected object, name, default, order and
 * status value comes from upstream internal/controller/
 * personapack_controller.go at 008266e: reconcileSharedMemory (the PVC,
 * Deployment and Service templates, the 1Gi default, the image from
 * SYMPOZIUM_IMAGE_REGISTRY / SYMPOZIUM_IMAGE_TAG with "latest", create
 * only, sharedMemoryReady true once the three exist, the teardown when
 * disabled while ready), cleanupSharedMemory (Service, Deployment, PVC in
 * that order) and where Reconcile and reconcileDelete call them (after
 * the personas; in the disabled-pack path before the Inactive status; at
 * the start of the deletion).  The deliberate differences (NameConflict,
 * ReadFailed, InvalidSpec for a storageSize MustParse would panic on, the
 * name checks, leftovers torn down) are docs/compatibility.md's.
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
#include "common/xmalloc.h"
#include "tests/lib/fakesup.h"
#include "ipc/ipc.h"
#include "workers/personapack.h"
#include "workers/personapack_shmem.h"

#define NOW_MS 1767225600000LL /* 2026-01-01T00:00:00Z */

/* JSON with ' for ". */
static char *
dq(const char *s)
{
	char *t = xstrdup(s);

	for (char *c = t; *c != '\0'; c++) {
		if (*c == '\'') {
			*c = '"';
		}
	}
	return (t);
}

static json_object *
J(const char *s)
{
	char *t = dq(s);
	json_object *o = jx_parse(t, strlen(t), 0, NULL, 0);

	free(t);
	assert_non_null(o);
	return (o);
}

static void
assert_json(json_object *got, const char *want)
{
	char *t = dq(want);

	fakesup_assert_json(got, t);
	free(t);
}

static void
set(json_object *o, const char *path, const char *json)
{
	assert_int_equal(jx_set_path(o, path, json ? J(json) : NULL), 0);
}

/* An enabled pack "team" without personas, shared memory enabled. */
static json_object *
team(void)
{
	return (J("{'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
	          "'metadata':{'name':'team','namespace':'default',"
	          "'uid':'u-pack','resourceVersion':'10','generation':2,"
	          "'finalizers':['sympozium.ai/personapack-finalizer']},"
	          "'spec':{'enabled':true,'personas':[],"
	          "'sharedMemory':{'enabled':true}}}"));
}

static void
run(struct fakesup *f, json_object *pack, json_object *children,
        struct fakesup_run *out)
{
	fakesup_run(&personapack_reconciler, f, "default/team", pack, children,
	        NOW_MS, out);
}

static const char *
wname(const struct ipc_write *w)
{
	return (w->name[0] != '\0' ? w->name
	                           : jx_get_str(w->object, "metadata.name"));
}

static void
assert_write(struct fakesup_run *r, size_t i, enum ipc_op op,
        const char *plural, const char *name)
{
	struct ipc_write w = fakesup_write(r, i);

	assert_string_equal(ipc_op_name(w.op), ipc_op_name(op));
	assert_string_equal(w.res.plural, plural);
	assert_string_equal(wname(&w), name);
}

static json_object *
status_at(struct fakesup_run *r, size_t i)
{
	assert_write(r, i, IPC_OP_UPDATE_STATUS, "personapacks", "team");
	return (jx_get(fakesup_write(r, i).object, "status"));
}

/* The three children as cached (created by the pack). */
static json_object *
cached_children(void)
{
	static const char *const kinds[]
	        = { "PersistentVolumeClaim", "Deployment", "Service" };
	static const char *const names[] = { "team-shared-memory-db",
		"team-shared-memory", "team-shared-memory" };
	json_object *arr = json_object_new_array();
	char buf[512];

	for (size_t i = 0; i < 3; i++) {
		snprintf(buf, sizeof(buf),
		        "{'kind':'%s','metadata':{'name':'%s','namespace':"
		        "'default','uid':'u-%zu','labels':{"
		        "'sympozium.ai/component':'shared-memory',"
		        "'sympozium.ai/persona-pack':'team'},"
		        "'ownerReferences':[{'apiVersion':"
		        "'sympozium.ai/v1alpha1','kind':'PersonaPack','name':"
		        "'team','uid':'u-pack','controller':true,"
		        "'blockOwnerDeletion':true}]}}",
		        kinds[i], names[i], i);
		json_object_array_add(arr, J(buf));
	}
	return (arr);
}

#define OWNER                                                                 \
	"'ownerReferences':[{'apiVersion':'sympozium.ai/v1alpha1',"           \
	"'kind':'PersonaPack','name':'team','uid':'u-pack',"                  \
	"'controller':true,'blockOwnerDeletion':true}]"
#define LABELS                                                                \
	"{'sympozium.ai/component':'shared-memory',"                          \
	"'sympozium.ai/persona-pack':'team'}"
#define PROBE "'httpGet':{'path':'/health','port':8080}"

/* reconcileSharedMemory: the three objects, then ready. */
static void
test_create(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team();
	struct fakesup_run r;

	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	run(f, pack, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 4);
	assert_write(&r, 0, IPC_OP_CREATE, "persistentvolumeclaims",
	        "team-shared-memory-db");
	assert_json(fakesup_write(&r, 0).object,
	        "{'apiVersion':'v1','kind':'PersistentVolumeClaim',"
	        "'metadata':{'name':'team-shared-memory-db','namespace':"
	        "'default','labels':" LABELS "," OWNER "},"
	        "'spec':{'accessModes':['ReadWriteOnce'],"
	        "'resources':{'requests':{'storage':'1Gi'}}}}");
	assert_write(
	        &r, 1, IPC_OP_CREATE, "deployments", "team-shared-memory");
	assert_json(fakesup_write(&r, 1).object,
	        "{'apiVersion':'apps/v1','kind':'Deployment',"
	        "'metadata':{'name':'team-shared-memory','namespace':"
	        "'default','labels':" LABELS "," OWNER "},"
	        "'spec':{'replicas':1,'strategy':{'type':'Recreate'},"
	        "'selector':{'matchLabels':" LABELS "},"
	        "'template':{'metadata':{'labels':" LABELS "},"
	        "'spec':{'containers':[{'name':'memory-server',"
	        "'image':'ghcr.io/sympozium-ai/sympozium/skill-memory:latest',"
	        "'imagePullPolicy':'IfNotPresent',"
	        "'ports':[{'name':'http','containerPort':8080,"
	        "'protocol':'TCP'}],"
	        "'env':[{'name':'MEMORY_DB_PATH','value':'/data/memory.db'},"
	        "{'name':'MEMORY_PORT','value':'8080'}],"
	        "'volumeMounts':[{'name':'memory-db','mountPath':'/data'}],"
	        "'startupProbe':{" PROBE ",'periodSeconds':2,"
	        "'failureThreshold':30},"
	        "'readinessProbe':{" PROBE ",'periodSeconds':10},"
	        "'livenessProbe':{" PROBE ",'initialDelaySeconds':5,"
	        "'periodSeconds':30},"
	        "'resources':{'requests':{'cpu':'50m','memory':'64Mi'},"
	        "'limits':{'cpu':'200m','memory':'128Mi'}}}],"
	        "'volumes':[{'name':'memory-db','persistentVolumeClaim':{"
	        "'claimName':'team-shared-memory-db'}}],"
	        "'securityContext':{'fsGroup':1000}}}}}");
	assert_write(&r, 2, IPC_OP_CREATE, "services", "team-shared-memory");
	assert_json(fakesup_write(&r, 2).object,
	        "{'apiVersion':'v1','kind':'Service',"
	        "'metadata':{'name':'team-shared-memory','namespace':"
	        "'default','labels':" LABELS "," OWNER "},"
	        "'spec':{'selector':" LABELS ",'ports':[{'name':'http',"
	        "'port':8080,'targetPort':8080,'protocol':'TCP'}]}}");
	assert_json(status_at(&r, 3),
	        "{'phase':'Ready','sharedMemoryReady':true}");
	/* each missing one was looked up live first */
	assert_true(fakesup_was_read(
	        f, "persistentvolumeclaims", "team-shared-memory-db"));
	assert_true(fakesup_was_read(f, "deployments", "team-shared-memory"));
	assert_true(fakesup_was_read(f, "services", "team-shared-memory"));
	fakesup_run_fini(&r);
	json_object_put(pack);
}

static const char *
image_of(struct fakesup_run *r)
{
	assert_write(r, 1, IPC_OP_CREATE, "deployments", "team-shared-memory");
	return (jx_get_str(json_object_array_get_idx(
	                           jx_get(fakesup_write(r, 1).object,
	                                   "spec.template.spec.containers"),
	                           0),
	        "image"));
}

/* The image: both variables, else the default registry and "latest". */
static void
test_image(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team();
	struct fakesup_run r;

	setenv("SYMPOZIUM_IMAGE_REGISTRY", "reg.example/sym", 1);
	setenv("SYMPOZIUM_IMAGE_TAG", "v0.9.1", 1);
	run(f, pack, NULL, &r);
	assert_string_equal(
	        image_of(&r), "reg.example/sym/skill-memory:v0.9.1");
	fakesup_run_fini(&r);
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	run(f, pack, NULL, &r);
	assert_string_equal(
	        image_of(&r), "reg.example/sym/skill-memory:latest");
	fakesup_run_fini(&r);
	unsetenv("SYMPOZIUM_IMAGE_REGISTRY");
	setenv("SYMPOZIUM_IMAGE_TAG", "", 1);
	run(f, pack, NULL, &r);
	assert_string_equal(image_of(&r),
	        "ghcr.io/sympozium-ai/sympozium/skill-memory:latest");
	fakesup_run_fini(&r);
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	json_object_put(pack);
}

/* storageSize: copied; unparsable: InvalidSpec, nothing created (upstream
 * panics in MustParse); ignored once the PVC exists. */
static void
test_storage_size(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *children, *st;
	struct fakesup_run r;

	set(pack, "spec.sharedMemory.storageSize", "'5Gi'");
	run(f, pack, NULL, &r);
	assert_json(
	        jx_get(fakesup_write(&r, 0).object, "spec.resources.requests"),
	        "{'storage':'5Gi'}");
	fakesup_run_fini(&r);

	set(pack, "spec.sharedMemory.storageSize", "'lots'");
	run(f, pack, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_DONE); /* not worth a retry */
	assert_int_equal(r.r.nwrites, 2);        /* the status and its event */
	assert_int_equal(fakesup_write(&r, 1).op, IPC_OP_EVENT);
	st = status_at(&r, 0);
	assert_string_equal(jx_get_str(st, "phase"), "Error");
	assert_false(json_object_get_boolean(jx_get(st, "sharedMemoryReady")));
	assert_string_equal(jx_get_str(json_object_array_get_idx(
	                                       jx_get(st, "conditions"), 0),
	                            "reason"),
	        "InvalidSpec");
	fakesup_run_fini(&r);

	/* the PVC exists: the size is not read again */
	children = cached_children();
	json_object_array_del_idx(children, 1, 2);
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 3);
	assert_write(
	        &r, 0, IPC_OP_CREATE, "deployments", "team-shared-memory");
	assert_write(&r, 1, IPC_OP_CREATE, "services", "team-shared-memory");
	assert_true(json_object_get_boolean(
	        jx_get(status_at(&r, 2), "sharedMemoryReady")));
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* In sync: no write.  A spec change updates nothing (create only). */
static void
test_idempotent_create_only(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *children = cached_children();
	struct fakesup_run r;
	int n;

	set(pack, "status", "{'phase':'Ready','sharedMemoryReady':true}");
	n = fakesup_nreqs(f);
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 0);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(fakesup_nreqs(f), n); /* all from the children */
	fakesup_run_fini(&r);

	set(pack, "spec.sharedMemory.storageSize", "'50Gi'");
	setenv("SYMPOZIUM_IMAGE_TAG", "v2", 1);
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 0);
	fakesup_run_fini(&r);
	unsetenv("SYMPOZIUM_IMAGE_TAG");
	json_object_put(children);
	json_object_put(pack);
}

/* One missing child (a Service deleted by hand) is created again; an
 * object the children miss but the live read finds the pack's is there. */
static void
test_partial(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *children = cached_children();
	struct fakesup_run r;

	json_object_array_del_idx(children, 2, 1);
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 2);
	assert_write(&r, 0, IPC_OP_CREATE, "services", "team-shared-memory");
	fakesup_run_fini(&r);

	fakesup_add_json(f, "services",
	        "{\"metadata\":{\"name\":\"team-shared-memory\","
	        "\"namespace\":\"default\",\"ownerReferences\":[{\"uid\":"
	        "\"u-pack\",\"controller\":true}]}}");
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 1);
	assert_true(json_object_get_boolean(
	        jx_get(status_at(&r, 0), "sharedMemoryReady")));
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* Not upstream: a same-named object the pack does not control is a
 * NameConflict (retried), a failed read ReadFailed; no create follows and
 * sharedMemoryReady keeps its cached value. */
static void
test_conflict_and_read_error(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *st;
	struct fakesup_run r;

	fakesup_add_json(f, "deployments",
	        "{\"metadata\":{\"name\":\"team-shared-memory\","
	        "\"namespace\":\"default\"}}");
	run(f, pack, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_ERROR);
	assert_int_equal(r.r.nwrites, 3); /* the Error status's event last */
	assert_write(&r, 0, IPC_OP_CREATE, "persistentvolumeclaims",
	        "team-shared-memory-db");
	st = status_at(&r, 1);
	assert_string_equal(jx_get_str(st, "phase"), "Error");
	assert_false(json_object_get_boolean(jx_get(st, "sharedMemoryReady")));
	assert_string_equal(jx_get_str(json_object_array_get_idx(
	                                       jx_get(st, "conditions"), 0),
	                            "reason"),
	        "NameConflict");
	fakesup_run_fini(&r);

	fakesup_reset(f);
	set(pack, "status", "{'sharedMemoryReady':true}");
	fakesup_fail(f, "persistentvolumeclaims", NULL, "boom");
	run(f, pack, NULL, &r);
	assert_int_equal(r.verdict, IPC_V_ERROR);
	assert_int_equal(r.r.nwrites, 2);
	st = status_at(&r, 0);
	assert_true(json_object_get_boolean(jx_get(st, "sharedMemoryReady")));
	assert_string_equal(jx_get_str(json_object_array_get_idx(
	                                       jx_get(st, "conditions"), 0),
	                            "reason"),
	        "ReadFailed");
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Not upstream: names the API server would refuse are errors up front
 * (no PVC and Deployment left behind a refused Service). */
static void
test_bad_names(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team();
	struct fakesup_run r;
	const char *reason;

	/* 50 + 14 characters: over a Service name's 63 */
	set(pack, "metadata.name",
	        "'a2345678901234567890123456789012345678901234567890'");
	fakesup_run(&personapack_reconciler, f, "default/x", pack, NULL,
	        NOW_MS, &r);
	assert_int_equal(r.r.nwrites, 2);
	reason = jx_get_str(
	        json_object_array_get_idx(jx_get(fakesup_write(&r, 0).object,
	                                          "status.conditions"),
	                0),
	        "reason");
	assert_string_equal(reason, "NameTooLong");
	fakesup_run_fini(&r);
	set(pack, "metadata.name", "'9team'");
	fakesup_run(&personapack_reconciler, f, "default/9team", pack, NULL,
	        NOW_MS, &r);
	assert_int_equal(r.r.nwrites, 2);
	reason = jx_get_str(
	        json_object_array_get_idx(jx_get(fakesup_write(&r, 0).object,
	                                          "status.conditions"),
	                0),
	        "reason");
	assert_string_equal(reason, "InvalidName");
	assert_int_equal(r.verdict, IPC_V_DONE);
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Disabled while ready: Service, Deployment, PVC deleted, then not
 * ready.  Disabled and not ready, nothing there: nothing to do. */
static void
test_disable(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *children = cached_children();
	struct fakesup_run r;

	set(pack, "spec.sharedMemory.enabled", "false");
	set(pack, "status", "{'phase':'Ready','sharedMemoryReady':true}");
	run(f, pack, children, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 4);
	assert_write(&r, 0, IPC_OP_DELETE, "services", "team-shared-memory");
	assert_write(
	        &r, 1, IPC_OP_DELETE, "deployments", "team-shared-memory");
	assert_write(&r, 2, IPC_OP_DELETE, "persistentvolumeclaims",
	        "team-shared-memory-db");
	assert_int_equal(fakesup_write(&r, 0).tolerate & IPC_TOL_NOT_FOUND,
	        IPC_TOL_NOT_FOUND);
	assert_false(json_object_get_boolean(
	        jx_get(status_at(&r, 3), "sharedMemoryReady")));
	fakesup_run_fini(&r);

	/* spec.sharedMemory absent altogether, status not ready */
	set(pack, "spec.sharedMemory", NULL);
	set(pack, "status.sharedMemoryReady", "false");
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.nwrites, 0);
	fakesup_run_fini(&r);

	/* not upstream: a leftover child alone is torn down too */
	json_object_array_del_idx(children, 0, 2);
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 1);
	assert_write(&r, 0, IPC_OP_DELETE, "services", "team-shared-memory");
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* A disabled pack: the three go (after the stamps), status Inactive and
 * not ready. */
static void
test_disabled_pack(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *children = cached_children();
	struct fakesup_run r;

	set(pack, "spec.enabled", "false");
	set(pack, "status", "{'phase':'Ready','sharedMemoryReady':true}");
	run(f, pack, children, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 4);
	assert_write(&r, 0, IPC_OP_DELETE, "services", "team-shared-memory");
	assert_write(
	        &r, 1, IPC_OP_DELETE, "deployments", "team-shared-memory");
	assert_write(&r, 2, IPC_OP_DELETE, "persistentvolumeclaims",
	        "team-shared-memory-db");
	assert_json(status_at(&r, 3), "{'phase':'Inactive'}");
	fakesup_run_fini(&r);

	/* still waiting for a stamped instance: shared memory stays */
	json_object_array_add(children,
	        J("{'kind':'SympoziumInstance','metadata':{'name':'team-a',"
	          "'namespace':'default','deletionTimestamp':"
	          "'2026-01-01T00:00:00Z'}}"));
	run(f, pack, children, &r);
	assert_int_equal(r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.after_ms, 2000);
	assert_int_equal(r.r.nwrites, 0);
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* reconcileDelete: shared memory first, then the finalizer; whether or
 * not shared memory is enabled. */
static void
test_deletion(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = team(), *children = cached_children();
	struct fakesup_run r;

	set(pack, "metadata.deletionTimestamp", "'2026-01-01T00:00:00Z'");
	set(pack, "spec.sharedMemory.enabled", "false");
	run(f, pack, children, &r);
	assert_int_equal(r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 4);
	assert_write(&r, 0, IPC_OP_DELETE, "services", "team-shared-memory");
	assert_write(
	        &r, 1, IPC_OP_DELETE, "deployments", "team-shared-memory");
	assert_write(&r, 2, IPC_OP_DELETE, "persistentvolumeclaims",
	        "team-shared-memory-db");
	assert_write(&r, 3, IPC_OP_PATCH, "personapacks", "team");
	fakesup_run_fini(&r);

	/* already going: not deleted twice */
	for (size_t i = 0; i < 3; i++) {
		set(json_object_array_get_idx(children, i),
		        "metadata.deletionTimestamp",
		        "'2026-01-01T00:00:00Z'");
	}
	run(f, pack, children, &r);
	assert_int_equal(r.r.nwrites, 1);
	assert_write(&r, 0, IPC_OP_PATCH, "personapacks", "team");
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* resource.ParseQuantity's syntax. */
static void
test_quantity(void **state)
{
	static const char *const good[] = { "1Gi", "1", "0", "500Mi", "1.5Gi",
		".5", "2.", "+1Ki", "-1", "100m", "1e3", "1E-2", "3k", "7Ei",
		"12n", NULL };
	static const char *const bad[]
	        = { "", "Gi", "1GB", "1gi", "1K", "1 Gi", "1.2.3", "e3", "1e",
		          "1e+", "lots", "1Gi ", "--1", ".", NULL };

	(void)state;
	for (size_t i = 0; good[i] != NULL; i++) {
		if (!ppshm_quantity_ok(good[i])) {
			fail_msg("%s refused", good[i]);
		}
	}
	for (size_t i = 0; bad[i] != NULL; i++) {
		if (ppshm_quantity_ok(bad[i])) {
			fail_msg("%s accepted", bad[i]);
		}
	}
	assert_false(ppshm_quantity_ok(NULL));
}

#define T(fn)                                                                 \
	cmocka_unit_test_setup_teardown(fn, fakesup_setup, fakesup_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_create),
		T(test_image),
		T(test_storage_size),
		T(test_idempotent_create_only),
		T(test_partial),
		T(test_conflict_and_read_error),
		T(test_bad_names),
		T(test_disable),
		T(test_disabled_pack),
		T(test_deletion),
		cmocka_unit_test(test_quantity),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
