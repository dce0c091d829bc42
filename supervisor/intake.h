/*
 * intake.h: watch events to work queues (design.md step 2).  Prefix
 * intake_.
 *
 * Owns the map from informer kind to controller and role (ctrl.h): a
 * change of a primary object enqueues its key; a change of a child
 * enqueues its controller owner (before and after the change), when the
 * owner is of the controller's primary kind; a kind only read enqueues
 * nothing.  Objects of a first LIST go to the low lane (queue.h "Lanes"),
 * live changes to the high one.  A resync (on becoming leader) enqueues
 * every primary object, low lane.
 *
 * Pure: no I/O; the caches are reached through the caller's function
 * (intake_resync()), the queues are the caller's (borrowed).
 */
#ifndef INTAKE_H
#define INTAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/ctrl.h"
#include "supervisor/informer.h"
#include "supervisor/queue.h"

struct intake;

struct intake *intake_new(void);
void intake_free(struct intake *in); /* NULL is fine */

/* Adds controller spec (borrowed, static) whose keys go to q (borrowed):
 * its watches become the next spec->nwatches kinds, in order, as the
 * informer numbers them (supervisor/sup.c add_kinds()).  Returns the
 * number of its primary kind. */
size_t intake_add(
        struct intake *in, const struct ctrl_spec *spec, struct queue *q);

/* Kind number kind's object key changed (informer.h inf_change_fn);
 * listed: it comes from a LIST (the low lane).  Unknown kinds are
 * ignored. */
void intake_on_change(struct intake *in, size_t kind, bool listed,
        const char *key, const struct inf_owner *old_owner,
        const struct inf_owner *new_owner, int64_t now);

/* Calls add(ctx, key) for every object of kind (the caller's caches). */
typedef void intake_each_fn(void *arg, size_t kind,
        void (*add)(void *ctx, const char *key), void *ctx);

/* Enqueues every primary object of every controller (low lane), listed
 * by each(arg, kind, ...). */
void intake_resync(
        struct intake *in, intake_each_fn *each, void *arg, int64_t now);

#endif
