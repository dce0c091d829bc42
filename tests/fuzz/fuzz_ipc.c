/*
 * fuzz_ipc.c: libFuzzer target for the ipc codec (ipc/ipc.c).  The input
 * is one wire message.  A failed decode must leave a non-empty error and no
 * body; a decoded message must re-encode to a message that decodes to the
 * same type, request id and body (encoded identically), and its typed reader
 * must accept it (every write of a RESULT included, and ipc_result_decode()
 * must give the same writes in one pass).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "ipc/ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LEN 65536

static void
check(bool ok)
{
	if (!ok) {
		__builtin_trap();
	}
}

static void
read_result(const struct ipc_msg *m)
{
	struct ipc_result r, d;
	struct ipc_write w, *ops;
	size_t i;

	check(ipc_result_read(m, &r) == 0);
	check(r.nwrites <= IPC_WRITES_MAX);
	check(ipc_result_decode(m, &d, &ops) == 0);
	check(d.nwrites == r.nwrites && (ops != NULL) == (r.nwrites > 0));
	for (i = 0; i < r.nwrites; i++) {
		check(ipc_result_write(&r, i, &w) == 0);
		check(w.namespace != NULL && w.name != NULL);
		check((w.op == IPC_OP_PATCH) == (w.patch != NULL));
		check(memcmp(&w, &ops[i], sizeof(w)) == 0);
	}
	check(ipc_result_write(&r, r.nwrites, &w) == -1);
	free(ops);
}

static void
read_typed(const struct ipc_msg *m)
{
	union {
		struct ipc_hello h;
		struct ipc_work w;
		struct ipc_view_req q;
		struct ipc_view_reply p;
		int64_t n;
	} u;

	switch (m->type) {
	case IPC_HELLO:
		check(ipc_hello_read(m, &u.h) == 0);
		break;
	case IPC_READY:
		check(ipc_ready_read(m, &u.n) == 0 && u.n >= 0);
		break;
	case IPC_WORK:
		check(ipc_work_read(m, &u.w) == 0 && u.w.children != NULL);
		check(strlen(u.w.key) > 0 && strlen(u.w.key) <= IPC_KEY_MAX);
		break;
	case IPC_RESULT:
		read_result(m);
		break;
	case IPC_VIEW_REQ:
		check(ipc_view_req_read(m, &u.q) == 0);
		break;
	case IPC_VIEW_REPLY:
		check(ipc_view_reply_read(m, &u.p) == 0);
		break;
	case IPC_HEARTBEAT:
		check(ipc_heartbeat_read(m, &u.n) == 0 && u.n >= 0);
		break;
	case IPC_ERROR:
		check(ipc_error_read(m) != NULL);
		break;
	case IPC_QUIT:
		break;
	}
}

static void
reencode(const struct ipc_msg *m)
{
	struct buf b = BUF_INIT, b2 = BUF_INIT;
	struct ipc_msg again;
	char err[256] = "";

	check(ipc_encode(m->type, m->reqid, m->body, &b) == 0);
	/* Compact re-encoding can grow (escapes), so allow the full bound. */
	check(ipc_decode(b.data, b.len, 0, &again, err, sizeof(err)) == 0);
	check(again.type == m->type && again.reqid == m->reqid);
	/* Byte comparison, not jx_equal(): NaN is not equal to itself. */
	check(ipc_encode(again.type, again.reqid, again.body, &b2) == 0);
	check(b.len == b2.len && memcmp(b.data, b2.data, b.len) == 0);
	ipc_msg_fini(&again);
	buf_fini(&b);
	buf_fini(&b2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_msg m;
	char err[256] = "";

	if (ipc_decode(data, size, MAX_LEN, &m, err, sizeof(err)) != 0) {
		check(err[0] != '\0' && m.body == NULL);
		return (0);
	}
	check(m.body != NULL && ipc_type_name(m.type)[0] != 'U');
	reencode(&m);
	read_typed(&m);
	ipc_msg_fini(&m);
	return (0);
}
