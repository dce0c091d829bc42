/*
 * reconcile.h: the interface between the worker runtime and a reconciler
 * (issue 4, deliverable 7).  A reconciler is a function from (the object
 * as cached, the children it controls, view lookups, now) to (ordered
 * writes, a verdict).  It has no network, no credentials and no files:
 * everything it reads comes in the WORK message or through the view, and
 * everything it wants done goes out in the RESULT.  Prefix rec_.
 */
#ifndef RECONCILE_H
#define RECONCILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "ipc/ipc.h"

struct view; /* view.h */

/* What one reconcile gets.  Borrowed for the duration of the call. */
struct rec_in {
	const char *key;       /* "ns/name" or "name" */
	json_object *object;   /* the object as cached; NULL: it is gone */
	json_object *children; /* array of the objects it controls */
	int64_t now_ms;        /* unix milliseconds, from the supervisor */
	int64_t attempt;       /* 0 first time, +1 per requeue */
	struct view *view;     /* reads of other objects */
	/* The supervisor's caches of the child kinds may lag the server
	 * (WORK "childrenStale"): a child absent from children may exist.
	 * Never conclude anything from an absence then. */
	bool children_stale;
};

/* What it answers.  Set by the reconciler with the helpers below. */
struct rec_out {
	json_object *result; /* the RESULT body being built */
	enum ipc_verdict verdict;
	int64_t after_ms;
	char message[512];
};

struct reconciler {
	const char *name; /* --controller NAME */
	void (*reconcile)(const struct rec_in *in, struct rec_out *out);
};

/* Appends a write (taken; built with ipc_write_new and friends). */
void rec_write(struct rec_out *out, json_object *write);
/* Sets the verdict; fmt may be NULL (no message). */
void rec_verdict(struct rec_out *out, enum ipc_verdict v, int64_t after_ms,
        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The reconciler called name, or NULL.  Production reconcilers are listed
 * in registry.c; test builds may add more through rec_extra (a weak
 * symbol: a NULL-terminated array the production binary does not define,
 * so test controllers are not reachable from a production worker). */
const struct reconciler *rec_find(const char *name);
/* Prints the name of every reconciler this binary has, one per line. */
void rec_list(FILE *out);
extern const struct reconciler *const rec_extra[] __attribute__((weak));

#endif
