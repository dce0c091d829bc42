/*
 * zoneinfo.h: the supervisor's answers to zoneinfo views (a worker's
 * CRON_TZ= zone: sandboxed workers cannot open files).  Zone files are read
 * from a zoneinfo directory ($TZDIR, else /usr/share/zoneinfo), names
 * checked with ipc_zone_name_valid(), files bounded by IPC_DATA_MAX and
 * required to start with the TZif magic; "UTC" and "Local" are answered
 * with a built-in UTC zone (cron.c's meaning of both).  Found zones are
 * kept, base64-encoded, in a small LRU table.  Prefix zi_.
 */
#ifndef ZONEINFO_H
#define ZONEINFO_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "ipc/ipc.h"

#define ZI_CACHE_MAX 32 /* zones kept */

struct zi;

/* A zone reader over dir (copied; NULL: $TZDIR if set and non-empty, else
 * /usr/share/zoneinfo).  Free with zi_free(). */
struct zi *zi_new(const char *dir);
void zi_free(struct zi *z);
/* The process-wide reader the supervisor's views use (made on first use
 * with dir NULL; never freed). */
struct zi *zi_default(void);

/*
 * The zone called name: IPC_VS_OK with its base64 TZif bytes in *b64
 * (borrowed from the table: valid until the next zi_ call on z),
 * IPC_VS_NOT_FOUND when there is no such zone file, IPC_VS_ERROR with a
 * message in err for a bad name, an oversized or non-TZif file, or a read
 * error.
 */
enum ipc_view_status zi_lookup(struct zi *z, const char *name,
        const char **b64, char *err, size_t errlen);
/* A VIEW_REPLY body answering request id for zone name (caller puts). */
json_object *zi_reply(struct zi *z, int64_t id, const char *name);
/* Zones in the table, and how many lookups read a file (for tests). */
size_t zi_cached(const struct zi *z);
size_t zi_reads(const struct zi *z);

#endif
