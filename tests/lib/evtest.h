/*
 * evtest.h: assertions on the Event writes of a reconciler's RESULT body
 * (workers/kobj.h kobj_event), for the reconciler unit tests.  Prefix
 * evtest_.
 */
#ifndef EVTEST_H
#define EVTEST_H

#include <stddef.h>

#include <json-c/json.h>

/* The number of event writes in a RESULT body (borrowed). */
size_t evtest_count(json_object *result);

/* Asserts that write i of result is an event of core/v1 events about the
 * involved object named name (NULL: any), with type and reason, and a message
 * containing msg (NULL: any). */
void evtest_assert(json_object *result, size_t i, const char *name,
        const char *type, const char *reason, const char *msg);

#endif
