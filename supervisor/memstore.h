/*
 * memstore.h: upstream's persistFailureMemory, the supervisor's half.  An
 * agentrun worker (no network) asks, in its RESULT's "memoryStore"
 * (ipc.h), for a failure record to be stored in the run's instance memory
 * server; the supervisor checks the ask, builds the request itself from
 * the run as cached (the worker chooses neither the address nor the
 * tags: http://<spec.instanceRef>-memory.<namespace>.svc:8080/store, tags
 * failure, agent-run, the instance) and POSTs it with egress.h once the
 * RESULT's writes succeeded.  Pure.  Prefix memstore_.
 */
#ifndef MEMSTORE_H
#define MEMSTORE_H

#include <stddef.h>
#include <json-c/json.h>

#define MEMSTORE_CONTENT_MAX 8192

/* 0 when controller may ask and ms is {"content": 1..MEMSTORE_CONTENT_MAX
 * bytes, no NUL}; -1 with why in err. */
int memstore_check(
        const char *controller, json_object *ms, char *err, size_t errlen);

/* The URL and JSON body for run (its cached object) and ms (checked), as
 * new strings; -1 with why when the run has no usable instanceRef or
 * namespace (a DNS-1123 label each). */
int memstore_request(json_object *run, json_object *ms, char **url,
        char **body, char *err, size_t errlen);

#endif
