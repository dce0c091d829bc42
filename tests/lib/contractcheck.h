/*
 * contractcheck.h: checks a reconciler's writes against the contract of
 * common/contract.h as the supervisor applies it: a create of one of the
 * controller's child kinds must carry labels that the
 * supervisor's own child watch (supervisor/ctrl.c's table, its selector
 * parsed and matched by supervisor/labelsel.c) selects, or the
 * supervisor never sees that child.  (An update keeps the labels of the
 * child as read, which the supervisor selected.)  fakesup_run() applies
 * it to every reconcile of the unit tests.  Pure.  Prefix contractcheck_.
 */
#ifndef CONTRACTCHECK_H
#define CONTRACTCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "ipc/ipc.h"

/* Whether write w of the reconciler of controller (a --controller name)
 * keeps the contract; when not, why in err.  A controller the
 * supervisor does not know keeps it (nothing to check). */
bool contractcheck_write(const char *controller, const struct ipc_write *w,
        char *err, size_t errlen);

#endif
