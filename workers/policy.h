/*
 * policy.h: the SympoziumPolicy reconciler (upstream
 * internal/controller/sympoziumpolicy_controller.go at 008266e): it counts
 * the SympoziumInstances of the policy's namespace whose spec.policyRef
 * names it and writes the count to status.boundInstances.  Prefix policy_.
 */
#ifndef POLICY_H
#define POLICY_H

#include "workers/reconcile.h"

/* --controller policy. */
extern const struct reconciler policy_reconciler;

#endif
