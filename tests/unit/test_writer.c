/*
 * test_writer.c: the writer's pure helpers: the tolerate mapping and the
 * no-op rules of wr_noop() for every op.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "supervisor/writer.h"
#include "tests/lib/testutil.h"

static const struct ipc_res CM = { "", "v1", "configmaps", true };

#define CACHED                                                                \
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"        \
	"\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u1\","                  \
	"\"resourceVersion\":\"7\",\"creationTimestamp\":\"2024-01-01T00:00:" \
	"00Z\",\"labels\":{\"x\":\"1\"}},\"data\":{\"k\":\"v\"},"             \
	"\"status\":{\"phase\":\"Ready\"}}"

static struct ipc_write
mk(enum ipc_op op, const char *obj, unsigned tol)
{
	struct ipc_write w = { 0 };

	w.op = op;
	w.res = CM;
	w.namespace = "n";
	w.name = "a";
	w.object = obj != NULL ? testutil_json(obj, 0) : NULL;
	w.tolerate = tol;
	return (w);
}

static bool
noop(struct ipc_write *w, const char *cached, bool known)
{
	json_object *c = cached != NULL ? testutil_json(cached, 0) : NULL;
	bool r = wr_noop(w, c, known);

	json_object_put(c);
	json_object_put(w->object);
	json_object_put(w->patch);
	return (r);
}

static void
test_tolerated(void **state)
{
	(void)state;
	assert_true(wr_tolerated(0, KAPI_OK));
	assert_true(wr_tolerated(IPC_TOL_ALREADY_EXISTS, KAPI_EEXISTS));
	assert_false(wr_tolerated(IPC_TOL_ALREADY_EXISTS, KAPI_ENOTFOUND));
	assert_true(wr_tolerated(IPC_TOL_NOT_FOUND, KAPI_ENOTFOUND));
	assert_false(wr_tolerated(IPC_TOL_NOT_FOUND, KAPI_ECONFLICT));
	assert_true(wr_tolerated(IPC_TOL_CONFLICT, KAPI_ECONFLICT));
	assert_false(wr_tolerated(0, KAPI_EEXISTS));
	assert_false(wr_tolerated(0xffu, KAPI_EFORBIDDEN));
	assert_false(wr_tolerated(0xffu, KAPI_ESERVER));
}

static void
test_update(void **state)
{
	struct ipc_write w;

	(void)state;
	/* Same object without server fields and status: no-op. */
	w = mk(IPC_OP_UPDATE,
	        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
	        "\"labels\":{\"x\":\"1\"},\"resourceVersion\":\"3\"},"
	        "\"data\":{\"k\":\"v\"}}",
	        0);
	assert_true(noop(&w, CACHED, true));
	/* Unknown cache state: never a no-op. */
	w = mk(IPC_OP_UPDATE,
	        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
	        "\"labels\":{\"x\":\"1\"}},\"data\":{\"k\":\"v\"}}",
	        0);
	assert_false(noop(&w, CACHED, false));
	/* A changed label or data: sent. */
	w = mk(IPC_OP_UPDATE,
	        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
	        "\"labels\":{\"x\":\"2\"}},\"data\":{\"k\":\"v\"}}",
	        0);
	assert_false(noop(&w, CACHED, true));
	w = mk(IPC_OP_UPDATE,
	        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\","
	        "\"labels\":{\"x\":\"1\"}},\"data\":{\"k\":\"w\"}}",
	        0);
	assert_false(noop(&w, CACHED, true));
	/* Absent from the cache: sent. */
	w = mk(IPC_OP_UPDATE, "{\"metadata\":{\"name\":\"a\"}}", 0);
	assert_false(noop(&w, NULL, true));
}

static void
test_status(void **state)
{
	struct ipc_write w;

	(void)state;
	w = mk(IPC_OP_UPDATE_STATUS,
	        "{\"metadata\":{\"name\":\"a\"},\"data\":{\"other\":\"1\"},"
	        "\"status\":{\"phase\":\"Ready\"}}",
	        0);
	assert_true(noop(&w, CACHED, true));
	w = mk(IPC_OP_UPDATE_STATUS,
	        "{\"metadata\":{\"name\":\"a\"},\"status\":{\"phase\":"
	        "\"Failed\"}}",
	        0);
	assert_false(noop(&w, CACHED, true));
	w = mk(IPC_OP_UPDATE_STATUS, "{\"metadata\":{\"name\":\"a\"}}", 0);
	assert_false(noop(&w, CACHED, true));
}

static void
test_create_delete(void **state)
{
	static const char *obj
	        = "{\"metadata\":{\"name\":\"a\","
	          "\"namespace\":\"n\",\"labels\":{\"x\":\"1\"}},"
	          "\"data\":{\"k\":\"v\"}}";
	struct ipc_write w;

	(void)state;
	w = mk(IPC_OP_CREATE, obj, IPC_TOL_ALREADY_EXISTS);
	assert_true(noop(&w, CACHED, true));
	w = mk(IPC_OP_CREATE, obj, 0);
	assert_false(noop(&w, CACHED, true));
	w = mk(IPC_OP_CREATE, obj, IPC_TOL_ALREADY_EXISTS);
	assert_false(noop(&w, NULL, true));
	w = mk(IPC_OP_DELETE, NULL, IPC_TOL_NOT_FOUND);
	assert_true(noop(&w, NULL, true));
	w = mk(IPC_OP_DELETE, NULL, IPC_TOL_NOT_FOUND);
	assert_false(noop(&w, NULL, false));
	w = mk(IPC_OP_DELETE, NULL, 0);
	assert_false(noop(&w, NULL, true));
	w = mk(IPC_OP_DELETE, NULL, IPC_TOL_NOT_FOUND);
	assert_false(noop(&w, CACHED, true));
}

static void
test_patch(void **state)
{
	struct ipc_write w;

	(void)state;
	w = mk(IPC_OP_PATCH, NULL, 0);
	w.patch_type = IPC_PATCH_MERGE;
	w.patch = testutil_json("{\"data\":{\"k\":\"v\"}}", 0);
	assert_true(noop(&w, CACHED, true));
	w = mk(IPC_OP_PATCH, NULL, 0);
	w.patch_type = IPC_PATCH_MERGE;
	w.patch = testutil_json("{\"data\":{\"k\":null}}", 0);
	assert_false(noop(&w, CACHED, true));
	w = mk(IPC_OP_PATCH, NULL, 0);
	w.patch_type = IPC_PATCH_MERGE;
	w.patch = testutil_json("{\"metadata\":{\"labels\":{\"y\":null}}}", 0);
	assert_true(noop(&w, CACHED, true));
	w = mk(IPC_OP_PATCH, NULL, 0);
	w.patch_type = IPC_PATCH_STRATEGIC;
	w.patch = testutil_json("{\"data\":{\"k\":\"v\"}}", 0);
	assert_true(noop(&w, CACHED, true));
	w = mk(IPC_OP_PATCH, NULL, 0);
	w.patch_type = IPC_PATCH_STRATEGIC;
	w.patch = testutil_json("{\"data\":{\"$patch\":\"replace\"}}", 0);
	assert_false(noop(&w, CACHED, true));
	w = mk(IPC_OP_PATCH, NULL, 0);
	w.patch_type = IPC_PATCH_JSON;
	w.patch = testutil_json("[{\"op\":\"test\",\"path\":\"/a\"}]", 0);
	assert_false(noop(&w, CACHED, true));
}

static void
test_never(void **state)
{
	struct ipc_write w;

	(void)state;
	w = mk(IPC_OP_APPLY, CACHED, 0);
	assert_false(noop(&w, CACHED, true));
	w = mk(IPC_OP_EVENT, CACHED, 0);
	assert_false(noop(&w, CACHED, true));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tolerated),
		cmocka_unit_test(test_update),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_create_delete),
		cmocka_unit_test(test_patch),
		cmocka_unit_test(test_never),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
