/*
 * view.h: a reconciler's reads of objects other than its own, answered by
 * the supervisor from its cache (or, for a pod's log, from the API server;
 * for a time zone, from the supervisor's zoneinfo directory)
 * over the worker's ipc session: one VIEW_REQ, one VIEW_REPLY.  While it
 * waits, heartbeats are answered; a QUIT ends the wait with an error.
 * Prefix view_.
 */
#ifndef VIEW_H
#define VIEW_H

#include <stdbool.h>

#include <json-c/json.h>

#include "ipc/ipc.h"
#include "ipc/ipc_sock.h"

struct view;

/* A view over session s (borrowed), each request waiting at most
 * timeout_ms for its reply. */
struct view *view_new(struct ipc_sock *s, int timeout_ms);
void view_free(struct view *v);
/* Whether a QUIT arrived while waiting (the worker should stop). */
bool view_quit(const struct view *v);

/*
 * Each returns 0 with the answer (caller frees: json_object_put, free),
 * 1 when the object does not exist, -1 on error with a message in err.
 */
int view_get(struct view *v, const struct ipc_res *res, const char *ns,
        const char *name, json_object **out, char *err, size_t errlen);
/* items: a new array of objects; selector may be NULL. */
int view_list(struct view *v, const struct ipc_res *res, const char *ns,
        const char *selector, json_object **items, char *err, size_t errlen);
/* view_list() projected: each item a row, the array of the values at
 * the n paths of fields (ipc_field_valid(), at most IPC_FIELDS_MAX) in
 * order, null where absent; n 0: whole objects.  A reply of another
 * shape is an error. */
int view_list_fields(struct view *v, const struct ipc_res *res, const char *ns,
        const char *selector, const char *const *fields, size_t n,
        json_object **items, char *err, size_t errlen);
/* The string at index i of a row, or NULL (absent or not a string). */
const char *view_row_str(json_object *row, size_t i);
/* A Secret's metadata and key names, never its values. */
int view_secret_meta(struct view *v, const char *ns, const char *name,
        json_object **out, char *err, size_t errlen);
/* The tail of a pod container's log (tail_lines < 0: all). */
int view_pod_log(struct view *v, const char *ns, const char *name,
        const char *container, int tail_lines, char **text, char *err,
        size_t errlen);
/* The TZif bytes of time zone name (*data: caller frees with free(), at
 * most IPC_DATA_MAX bytes).  A name ipc_zone_name_valid() refuses is an
 * error without asking. */
int view_zoneinfo(struct view *v, const char *name, unsigned char **data,
        size_t *len, char *err, size_t errlen);

#endif
