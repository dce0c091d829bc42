/*
 * ipc.h: the wire protocol between the supervisor and its workers (and
 * sympoziumctl), pure encode/decode/validation with no I/O.  Prefix ipc_.
 * The nng transport is ipc_sock.h.
 *
 * A message is a fixed 16-byte header followed by a body:
 *
 *	offset	size	field (all big-endian)
 *	0	4	magic 0x53594D50 ("SYMP")
 *	4	2	protocol version (IPC_VERSION)
 *	6	2	type (enum ipc_type)
 *	8	4	request id (free for the sender; echoed where useful)
 *	12	4	body length in bytes
 *	16	n	body: compact JSON text of exactly one object
 *
 * Bodies per type (keys not listed are ignored, for forward compatibility;
 * "n" is a JSON integer >= 0 unless said otherwise; "?" marks optional keys):
 *
 *	HELLO      w->s {"controller":s,"pid":n>0,"proto":1}
 *	READY      s->w {"epoch":n, ...configuration keys}
 *	WORK       s->w {"key":s,"epoch":n,"attempt":n,"now":n (unix ms),
 *	                 "object"?:obj|null,"children"?:[obj...],
 *	                 "deadlineMs":n,"childrenStale"?:b,
 *	                 "reconcileID"?:s (at most IPC_RID_LEN bytes)}
 *	           childrenStale (default false): the supervisor's caches of
 *	           the child kinds may lag the server (a kind not synced, or
 *	           its watch not established); absent children then prove
 *	           nothing.
 *	RESULT     w->s {"key":s,"epoch":n,"verdict":{"kind":k,"afterMs"?:n,
 *	                 "message"?:s},"writes"?:[W...]}
 *	           k = done|requeue|requeue_after|error|terminal;
 *	           afterMs is required for requeue_after.
 *	           "memoryStore"?:{"content":s} (agentrun only: a failure
 *	           record for the run's instance memory server, which the
 *	           supervisor POSTs, supervisor/path.c).
 *	           "telemetry"?:obj (the OpenTelemetry signals of the
 *	           reconcile; only its type is checked here, its content by
 *	           supervisor/otel.h against the controller's signal policy).
 *	VIEW_REQ   w->s {"id":n,"what":get|list|secret_meta|pod_log|zoneinfo,
 *	                 "resource"?:R,"namespace"?:s,"name"?:s,
 *	                 "labelSelector"?:s,"tailLines"?:n,"container"?:s,
 *	                 "fields"?:[s...]}
 *	           resource is required for get and list, name for get,
 *	           secret_meta, pod_log and zoneinfo (the zone, e.g.
 *	           "America/New_York": the codec checks only its bounds, the
 *	           supervisor answers error unless ipc_zone_name_valid()).
 *	           fields (list only): a projection, 1..IPC_FIELDS_MAX
 *	           paths (ipc_field_valid()) such as "metadata.name",
 *	           "status.phase", "metadata.labels.sympozium.ai/instance";
 *	           each item of the reply is then a row, the array of the
 *	           values at those paths in order, null where absent
 *	           (ipc_project()).  Absent: full objects.
 *	VIEW_REPLY s->w {"id":n,"status":ok|not_found|error,"object"?:obj|null,
 *	                 "items"?:[obj...]|[[v...]...],"text"?:s,"data"?:s,
 *	                 "message"?:s}
 *	           items: objects, or (a projected list) all arrays.
 *	           data: binary content (a zoneinfo answer: the TZif file),
 *	           standard base64 with padding, at most IPC_DATA_MAX bytes
 *	           once decoded.
 *	HEARTBEAT  both {"seq":n}
 *	QUIT       s->w {}
 *	ERROR      both {"message":s}, sent before closing a session
 *
 *	R = {"group":s,"version":s (non-empty),"plural":s (non-empty),
 *	     "namespaced":b}
 *	W = {"op":create|update|update_status|patch|apply|delete|event,
 *	     "resource":R,"namespace"?:s,"name":s (not required for create and
 *	     event),"object":obj (create, update, update_status, apply, event),
 *	     "patch":obj|array and "patchType":merge|json|strategic (patch),
 *	     "propagation"?:s (delete),
 *	     "tolerate"?:[AlreadyExists|NotFound|Conflict...]}
 *
 * Bounds: key 1..IPC_KEY_MAX bytes; names, namespaces, resource parts and
 * the controller 1..IPC_NAME_MAX (namespace, group may be empty); other
 * strings (messages, selectors) up to IPC_TEXT_MAX, except VIEW_REPLY's
 * "text" (pod logs), bounded only by the message size; at most
 * IPC_WRITES_MAX writes; JSON nesting at most IPC_MAX_DEPTH.  Strings given
 * a bound may not contain NUL bytes.
 *
 * Ownership.  Builders (ipc_*_new) return a new body object the caller
 * owns (json_object_put(), or pass it to ipc_encode()/ipc_sock_send(), which
 * only borrow it).  Builder arguments of type json_object * are taken
 * (ownership moves to the new body, NULL allowed where said); const char *
 * arguments are copied.  Readers (ipc_*_read) fill a view whose strings and
 * objects are borrowed from the decoded message: they live until
 * ipc_msg_fini().
 */
#ifndef IPC_H
#define IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "common/buf.h"

#define IPC_MAGIC      0x53594D50u /* "SYMP" */
#define IPC_VERSION    1
#define IPC_HDR_LEN    16
#define IPC_MAX_DEPTH  64                  /* JSON nesting of a body */
#define IPC_KEY_MAX    512                 /* "ns/name" work keys */
#define IPC_NAME_MAX   253                 /* names, namespaces, plurals */
#define IPC_TEXT_MAX   65536               /* messages, selectors */
#define IPC_WRITES_MAX 1000                /* writes in one RESULT */
#define IPC_MAX_LEN    (16u * 1024 * 1024) /* default message bound */
#define IPC_DATA_MAX   (256u * 1024)       /* VIEW_REPLY "data", decoded */
#define IPC_FIELDS_MAX 16                  /* paths in a VIEW_REQ "fields" */
#define IPC_FIELD_MAX  128                 /* bytes of one such path */
#define IPC_RID_LEN    36                  /* a reconcile ID (a UUID) */

/*
 * A worker's exit status, shared by both sides.  IPC_EXIT_PERMANENT (skarnet
 * s6's "permanent failure" code): the worker cannot run with what it was
 * given (bad flags, an unknown controller, a bad sandbox setting, a sandbox
 * the kernel refuses), so starting it again would fail the same way.  The
 * worker says why on stderr and, when its session is up, in an ERROR sent
 * first; the supervisor does not restart it and marks its controller
 * failed until `sympoziumctl restart` (workers.h).  Any other status is a
 * crash and is restarted under the restart policy.
 */
#define IPC_EXIT_PERMANENT 100

enum ipc_type {
	IPC_HELLO = 1,
	IPC_READY,
	IPC_WORK,
	IPC_RESULT,
	IPC_VIEW_REQ,
	IPC_VIEW_REPLY,
	IPC_HEARTBEAT,
	IPC_QUIT,
	IPC_ERROR,
};

/* A decoded message.  body is owned (always a JSON object); free it with
 * ipc_msg_fini(). */
struct ipc_msg {
	enum ipc_type type;
	uint32_t reqid;
	json_object *body;
};

/* "HELLO", "WORK", ...; "UNKNOWN" for other values.  Static string. */
const char *ipc_type_name(enum ipc_type type);

/* Appends the encoded message (header + compact body) to out; out is not
 * reset.  body is borrowed; NULL encodes "{}".  Returns -1 (out unchanged)
 * when type is unknown or body is not an object; the body shape is not
 * checked here (ipc_decode() is the gate). */
int ipc_encode(enum ipc_type type, uint32_t reqid, json_object *body,
        struct buf *out);

/* Decodes exactly one message of len bytes from data (all of it: trailing
 * bytes are an error), refusing messages longer than max_len (0:
 * IPC_MAX_LEN).  Validates the header, parses the body and checks its shape
 * for the type.  Returns 0 and fills *out (free with ipc_msg_fini()), or -1
 * with a one-line message in err and *out zeroed. */
int ipc_decode(const void *data, size_t len, size_t max_len,
        struct ipc_msg *out, char *err, size_t errlen);

/* Frees the body and zeroes the message.  Accepts a zeroed message. */
void ipc_msg_fini(struct ipc_msg *msg);

/* Checks a body's shape for a type, as ipc_decode() does.  Returns 0, or -1
 * with a message in err. */
int ipc_validate(
        enum ipc_type type, json_object *body, char *err, size_t errlen);

/* ---- common pieces ---- */

/* A resource, as in kapi: group "" is the core group.  Borrowed strings. */
struct ipc_res {
	const char *group;
	const char *version;
	const char *plural;
	bool namespaced;
};

enum ipc_verdict {
	IPC_V_DONE,
	IPC_V_REQUEUE,
	IPC_V_REQUEUE_AFTER,
	IPC_V_ERROR,
	IPC_V_TERMINAL,
};

enum ipc_op {
	IPC_OP_CREATE,
	IPC_OP_UPDATE,
	IPC_OP_UPDATE_STATUS,
	IPC_OP_PATCH,
	IPC_OP_APPLY,
	IPC_OP_DELETE,
	IPC_OP_EVENT,
};

enum ipc_patch_type {
	IPC_PATCH_NONE, /* not a patch */
	IPC_PATCH_MERGE,
	IPC_PATCH_JSON,
	IPC_PATCH_STRATEGIC,
};

/* Bits of a write's "tolerate" list. */
#define IPC_TOL_ALREADY_EXISTS 0x1u
#define IPC_TOL_NOT_FOUND      0x2u
#define IPC_TOL_CONFLICT       0x4u

enum ipc_view_what {
	IPC_VIEW_GET,
	IPC_VIEW_LIST,
	IPC_VIEW_SECRET_META,
	IPC_VIEW_POD_LOG,
	IPC_VIEW_ZONEINFO,
};

enum ipc_view_status {
	IPC_VS_OK,
	IPC_VS_NOT_FOUND,
	IPC_VS_ERROR,
};

/* Wire names ("requeue_after", "update_status", "strategic", ...); static
 * strings, "" for out-of-range values. */
const char *ipc_verdict_name(enum ipc_verdict v);
const char *ipc_op_name(enum ipc_op op);
const char *ipc_patch_type_name(enum ipc_patch_type pt);

/* ---- HELLO / READY / HEARTBEAT / QUIT / ERROR ---- */

struct ipc_hello {
	const char *controller;
	int64_t pid;
	int64_t proto;
};

json_object *ipc_hello_new(const char *controller, pid_t pid);
int ipc_hello_read(const struct ipc_msg *m, struct ipc_hello *out);

/* READY: {"epoch":epoch} plus every key of config (taken; NULL for none;
 * must be an object, and its own "epoch" key is overridden). */
json_object *ipc_ready_new(int64_t epoch, json_object *config);
/* The epoch of a READY message; the body itself is the configuration. */
int ipc_ready_read(const struct ipc_msg *m, int64_t *epoch);

json_object *ipc_heartbeat_new(int64_t seq);
int ipc_heartbeat_read(const struct ipc_msg *m, int64_t *seq);

json_object *ipc_quit_new(void);

json_object *ipc_error_new(const char *message);
/* The message of an ERROR message (borrowed), or NULL if not one. */
const char *ipc_error_read(const struct ipc_msg *m);

/* ---- WORK ---- */

struct ipc_work {
	const char *key;
	int64_t epoch;
	int64_t attempt;
	int64_t now_ms;        /* unix milliseconds */
	json_object *object;   /* NULL when absent/null */
	json_object *children; /* array of objects; never NULL after read */
	int64_t deadline_ms;
	bool children_stale; /* "childrenStale": children may be missing */
	const char *reconcile_id; /* "reconcileID", or NULL (for logs) */
};

/* Builds a WORK body from w: object and children are taken (children NULL
 * gives []). */
json_object *ipc_work_new(const struct ipc_work *w);
/* Fills *out from a WORK message.  Returns 0, or -1 when m is not a valid
 * WORK (its children array is then left NULL). */
int ipc_work_read(const struct ipc_msg *m, struct ipc_work *out);

/* ---- RESULT ---- */

struct ipc_result {
	const char *key;
	int64_t epoch;
	enum ipc_verdict verdict;
	int64_t after_ms;    /* 0 unless given */
	const char *message; /* "" when absent */
	json_object *writes; /* array of W; never NULL after read */
	size_t nwrites;
	json_object *telemetry;    /* NULL when absent; checked by otel.h */
	json_object *memory_store; /* NULL when absent; checked by path.c */
	/* Not on the wire, set by the supervisor's pool before it hands the
	 * RESULT on: when it sent the WORK (monotonic ms), and the
	 * reconcile's ID (a UUID, controller-runtime's reconcileID; NULL
	 * when unknown). */
	int64_t sent_ms;
	const char *reconcile_id;
};

/* Builds a RESULT body with no writes; message may be NULL. */
json_object *ipc_result_new(const char *key, int64_t epoch,
        enum ipc_verdict verdict, int64_t after_ms, const char *message);
/* Appends a write (taken) to a RESULT body's "writes". */
void ipc_result_add_write(json_object *result, json_object *write);
int ipc_result_read(const struct ipc_msg *m, struct ipc_result *out);

/* One write, as read back. */
struct ipc_write {
	enum ipc_op op;
	struct ipc_res res;
	const char *namespace; /* "" when absent */
	const char *name;      /* "" when absent */
	json_object *object; /* NULL unless create/update/status/apply/event */
	json_object *patch;  /* NULL unless patch */
	enum ipc_patch_type patch_type;
	const char *propagation; /* NULL when absent */
	unsigned tolerate;       /* IPC_TOL_* bits */
};

/* A write: op is any but IPC_OP_PATCH; object taken (required for every op
 * but delete; NULL for delete).  ns, name may be NULL (omitted). */
json_object *ipc_write_new(enum ipc_op op, const struct ipc_res *res,
        const char *ns, const char *name, json_object *object);
/* A patch write; patch (object or array) taken. */
json_object *ipc_write_patch_new(const struct ipc_res *res, const char *ns,
        const char *name, json_object *patch, enum ipc_patch_type pt);
/* Sets the optional fields of a write built above. */
void ipc_write_set_tolerate(json_object *write, unsigned tolerate);
void ipc_write_set_propagation(json_object *write, const char *propagation);
/* Reads a RESULT as ipc_result_read() does and, in the same pass, decodes
 * its writes into *ops (allocated, out->nwrites entries, NULL when there
 * are none; free() it): each borrows from m's body as *out does.  The
 * supervisor's one decode of a RESULT (supervisor/workers.c).  Returns 0,
 * or -1 (then *ops is NULL). */
int ipc_result_decode(const struct ipc_msg *m, struct ipc_result *out,
        struct ipc_write **ops);
/* Fills *out from write i of a read RESULT.  Returns 0, or -1 when i is out
 * of range. */
int ipc_result_write(
        const struct ipc_result *r, size_t i, struct ipc_write *out);

/* ---- VIEW_REQ / VIEW_REPLY ---- */

struct ipc_view_req {
	int64_t id;
	enum ipc_view_what what;
	struct ipc_res res; /* all NULL when absent */
	bool has_res;
	const char *namespace;              /* NULL when absent */
	const char *name;                   /* NULL when absent */
	const char *label_selector;         /* NULL when absent */
	int64_t tail_lines;                 /* -1 when absent */
	const char *container;              /* NULL when absent */
	const char *fields[IPC_FIELDS_MAX]; /* a list's projection */
	size_t nfields;                     /* 0: full objects */
};

/* Builds a VIEW_REQ from r: res is used when has_res; NULL strings and
 * tail_lines < 0 are omitted. */
json_object *ipc_view_req_new(const struct ipc_view_req *r);
int ipc_view_req_read(const struct ipc_msg *m, struct ipc_view_req *out);

/* Whether path may be a VIEW_REQ field: at most IPC_FIELD_MAX bytes,
 * either "metadata.labels.KEY" or "metadata.annotations.KEY" (KEY of
 * [A-Za-z0-9._/-], not empty: one map key, dots included), or
 * [A-Za-z0-9_-] components joined by '.', none empty. */
bool ipc_field_valid(const char *path);
/* The row of obj (borrowed) for the n paths: a new array of n values,
 * copies of those at each path, JSON null where a path is absent (or
 * invalid, or crosses a non-object). */
json_object *ipc_project(json_object *obj, const char *const *paths, size_t n);

struct ipc_view_reply {
	int64_t id;
	enum ipc_view_status status;
	json_object *object; /* NULL when absent */
	json_object *items;  /* NULL when absent */
	const char *text;    /* NULL when absent */
	const char *data;    /* base64, valid and bounded; NULL when absent */
	const char *message; /* NULL when absent */
};

/* Builds a VIEW_REPLY from r: object and items taken; NULL fields are
 * omitted. */
json_object *ipc_view_reply_new(const struct ipc_view_reply *r);
int ipc_view_reply_read(const struct ipc_msg *m, struct ipc_view_reply *out);

/* ---- zoneinfo views ---- */

/* Whether name may be asked as a zoneinfo view: 1..IPC_NAME_MAX bytes of
 * [A-Za-z0-9_+-./], not starting with '/', no empty, "." or ".."
 * component (so no "a//b", no trailing '/'). */
bool ipc_zone_name_valid(const char *name);

/* Standard base64 (with padding) of len bytes; caller frees with free(). */
char *ipc_b64_encode(const void *data, size_t len);
/* Decodes base64 text s (as ipc_decode() accepts it: valid, padded) into a
 * new buffer *out (caller frees with free(); never NULL on success) of
 * *len bytes.  Returns 0, or -1 when s is not valid base64. */
int ipc_b64_decode(const char *s, unsigned char **out, size_t *len);

#endif
