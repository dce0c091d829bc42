/*
 * fakesup.h: a fake supervisor end for reconciler unit tests.  An ipc
 * socket pair whose supervisor side is served by a thread answering
 * VIEW_REQs (get, list, secret_meta, pod_log) from an in-test store of
 * objects, Secrets' metadata and pod logs, with per-resource injected
 * errors and a log of the requests (zoneinfo views from the zoneinfo
 * directory through supervisor/zoneinfo.c, or from zones the test adds); and
 * fakesup_run(), which runs a reconciler once and collects its writes (checked
 * against the wire format and the contract, tests/lib/contractcheck.h),
 * verdict, delay and message; during the run each view is judged by the
 * view policy of the reconciler's controller (supervisor/vpolicy.h) and a
 * refused one fails the test.  Prefix fakesup_.
 */
#ifndef FAKESUP_H
#define FAKESUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "ipc/ipc.h"
#include "workers/reconcile.h"
#include "workers/view.h"

struct fakesup;

/* Starts a fake supervisor end (asserts on failure); stop frees it. */
struct fakesup *fakesup_start(void);
void fakesup_stop(struct fakesup *f);
/* cmocka group or test setup/teardown: *state is a started fake. */
int fakesup_setup(void **state);
int fakesup_teardown(void **state);
/* The worker's view over the session (borrowed). */
struct view *fakesup_view(struct fakesup *f);

/* Adds o (taken) as plural ns/name (ns NULL: in every namespace; name
 * NULL: under every name); a get answers a copy of the last one added
 * that matches, a list the objects of that plural and namespace its
 * selector matches.  o NULL: a get answers not found. */
void fakesup_add(struct fakesup *f, const char *plural, const char *ns,
        const char *name, json_object *o);
/* Adds the JSON text, named by its metadata.namespace and .name. */
void fakesup_add_json(struct fakesup *f, const char *plural, const char *json);
/* A Secret's metadata (taken) answered to secret_meta ns/name (NULLs
 * and o NULL as for fakesup_add). */
void fakesup_add_secret(
        struct fakesup *f, const char *ns, const char *name, json_object *o);
/* The text answered to pod_log ns/pod. */
void fakesup_add_log(
        struct fakesup *f, const char *ns, const char *pod, const char *text);
/* The bytes (copied) answered to a zoneinfo view of name, instead of the
 * zone file; fakesup_fail(f, "zoneinfo", name, msg) makes it an error. */
void fakesup_add_zone(
        struct fakesup *f, const char *name, const void *data, size_t len);
/* Removes the objects plural ns/name (ns NULL: in any namespace). */
void fakesup_remove(struct fakesup *f, const char *plural, const char *ns,
        const char *name);
/* Makes requests on plural ("secrets" for secret_meta, "pods/log" for
 * logs), for name only unless NULL, answer an error with message;
 * message NULL ends the errors injected on plural (for name only
 * unless NULL). */
void fakesup_fail(struct fakesup *f, const char *plural, const char *name,
        const char *message);
/* on: every get and list of plural answers not found, as the supervisor
 * answers for a resource the API server does not serve (a 404 on the
 * collection); off ends it. */
void fakesup_unserved(struct fakesup *f, const char *plural, bool on);
/* Empties the store and the injected errors (not the request log). */
void fakesup_reset(struct fakesup *f);
/* on: lists answer whole objects even when the request names fields
 * (a supervisor that ignores the projection). */
void fakesup_unprojected(struct fakesup *f, bool on);
/* Empties the request log and count only. */
void fakesup_clear_log(struct fakesup *f);

/* Requests answered so far. */
int fakesup_nreqs(struct fakesup *f);
/* The requests, one line each: "get|list|secret|log|zone plural ns/name",
 * plural "-" for secret, log and zone (whose ns is empty), " selector"
 * appended for a list, then " fields=path,..." for a projected one, whose
 * items are projected as the supervisor does (ipc_project()) (borrowed,
 * valid until the next request or reset). */
const char *fakesup_log(struct fakesup *f);
/* Whether a get (or, for plural "secrets", a secret_meta) of name was
 * made. */
bool fakesup_was_read(struct fakesup *f, const char *plural, const char *name);

/* What one reconcile answered. */
struct fakesup_run {
	json_object *result; /* RESULT body, verdict included (owned) */
	json_object *writes; /* borrowed from result; never NULL */
	size_t nwrites;
	struct ipc_msg msg;  /* result decoded from the wire */
	struct ipc_result r; /* read from msg (ipc_result_write works) */
	enum ipc_verdict verdict;
	int64_t after_ms;
	char message[512];
};

/* Runs rc once on key with obj and children (borrowed; NULL: gone, and
 * an empty array), its view served by f (NULL: no view); asserts the
 * result passes encoding and decoding.  Free with fakesup_run_fini(). */
void fakesup_run(const struct reconciler *rc, struct fakesup *f,
        const char *key, json_object *obj, json_object *children,
        int64_t now_ms, struct fakesup_run *out);
void fakesup_run_fini(struct fakesup_run *out);
/* Write i of run r (asserted to exist). */
struct ipc_write fakesup_write(struct fakesup_run *r, size_t i);

/* Fails the test unless got equals the JSON text want (printing both). */
void fakesup_assert_json(json_object *got, const char *want);

#endif
