/*
 * instance.h: the SympoziumInstance reconciler (spec
 * sympozium-controllers.md section 2): channel Deployments (and the
 * WhatsApp PVC), the legacy memory ConfigMap, the memory server, the
 * web-endpoint server run, the active-run count and the status, with a
 * 60 s periodic requeue.  Prefix inst_.
 */
#ifndef INSTANCE_H
#define INSTANCE_H

#include "workers/reconcile.h"

#define INST_REQUEUE_MS 60000
#define INST_EVENT_BUS  "nats://nats.sympozium-system.svc:4222"

/* --controller instance */
extern const struct reconciler instance_reconciler;

/* The reconcile function itself (instance_reconciler.reconcile). */
void inst_reconcile(const struct rec_in *in, struct rec_out *out);

#endif
