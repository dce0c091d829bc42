/*
 * sympoziumconfig.h: the SympoziumConfig reconciler (upstream
 * internal/controller/sympoziumconfig_controller.go at 008266e): its
 * finalizer, the shared Gateway API GatewayClass and Gateway when
 * spec.gateway.enabled, their removal when disabled or deleted, and the
 * status (phase, gateway, the Ready condition).  Prefix symconf_.
 */
#ifndef SYMPOZIUMCONFIG_H
#define SYMPOZIUMCONFIG_H

#include "workers/reconcile.h"

/* Upstream's RequeueAfter once the Gateway is reconciled. */
#define SYMCONF_REQUEUE_MS 30000

/* --controller config. */
extern const struct reconciler symconf_reconciler;

#endif
