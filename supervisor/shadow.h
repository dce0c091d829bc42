/*
 * shadow.h: the record of shadow mode (--shadow; docs/operating.md
 * "Shadow mode"): the writes the supervisor would have sent, one record
 * per object (the latest write replaces the earlier), bounded in number
 * with a count of records dropped, and the short, redacted summary of what
 * a write would change against the cached object.  Pure: no I/O.  Prefix
 * sh_.
 */
#ifndef SHADOW_H
#define SHADOW_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc.h"

#define SH_DEFAULT_CAP 4096 /* records kept at most */
#define SH_SUMMARY_MAX 512  /* bytes of a summary, NUL included */

struct shadow;

/* A record table keeping at most cap records (0: SH_DEFAULT_CAP). */
struct shadow *sh_new(size_t cap);
void sh_free(struct shadow *sh); /* NULL is fine */

/* Records that controller would have sent verb on resource ns/name with
 * summary (all copied; NULL reads as ""): replaces the record of the same
 * resource/ns/name, else adds one, else (table full) counts a drop.
 * Returns 1 when the record is new or changed, 0 when it was already held
 * as it is, -1 when dropped. */
int sh_record(struct shadow *sh, const char *controller, const char *verb,
        const char *resource, const char *ns, const char *name,
        const char *summary);
/* The object resource/ns/name needs no write any more: its record goes. */
void sh_forget(struct shadow *sh, const char *resource, const char *ns,
        const char *name);

size_t sh_pending(const struct shadow *sh);   /* records held */
uint64_t sh_dropped(const struct shadow *sh); /* records not kept */

/* The records, a new JSON array of {"controller","verb","resource",
 * "namespace","name","summary"}, in resource/ns/name order. */
json_object *sh_json(const struct shadow *sh);

/* The verb name of op: "create", "update", "update-status", "patch",
 * "apply", "delete", "event". */
const char *sh_verb(enum ipc_op op);

/* The resource name of res: "plural" or "plural.group". */
void sh_resource(const struct ipc_res *res, char *out, size_t n);

/*
 * Writes into out (n bytes) a short summary of what wr would change on
 * cached (NULL: absent): the dotted paths that differ, at most a few, then
 * "+N more"; values never appear, and for Secrets every path under data
 * and stringData is shown as "data"/"stringData" (redacted).
 */
void sh_summary(
        const struct ipc_write *wr, json_object *cached, char *out, size_t n);

#endif
