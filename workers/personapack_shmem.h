/*
 * personapack_shmem.h: the shared memory server of a PersonaPack (spec
 * sympozium-controllers.md 3.4; upstream personapack_controller.go
 * reconcileSharedMemory and cleanupSharedMemory at 008266e): the PVC
 * <pack>-shared-memory-db, the Deployment and the Service
 * <pack>-shared-memory, labelled sympozium.ai/component=shared-memory and
 * sympozium.ai/persona-pack=<pack>, controlled by the pack.  Used by
 * personapack.c only.  Prefix ppshm_.
 */
#ifndef PERSONAPACK_SHMEM_H
#define PERSONAPACK_SHMEM_H

#include <stdbool.h>

#include <json-c/json.h>

#include "workers/reconcile.h"

#define PPSHM_MSG_LEN 320

/* What one step decided. */
struct ppshm {
	bool ready;         /* status.sharedMemoryReady to write */
	const char *reason; /* NULL: no error; else a CamelCase reason */
	bool transient;     /* the error is worth a backoff retry */
	char msg[PPSHM_MSG_LEN];
};

/*
 * reconcileSharedMemory of an enabled pack (in->object, borrowed).  With
 * spec.sharedMemory.enabled: creates whichever of the three objects is
 * absent (create only: a spec change never updates them) and reports
 * ready once all three exist.  Without: tears them down when the cached
 * status says ready (or, not upstream, when one of them is still among
 * the children) and reports not ready.  On an error r->ready keeps the
 * cached status value.
 */
void ppshm_reconcile(
        const struct rec_in *in, struct rec_out *out, struct ppshm *r);

/* cleanupSharedMemory: deletes the Service, Deployment and PVC that are
 * among the pack's children (in that order); the status is not ready. */
void ppshm_cleanup(const struct rec_in *in, struct rec_out *out);

/* Whether s is a Kubernetes quantity (resource.ParseQuantity's syntax:
 * a signed decimal number, then a binary, SI or exponent suffix). */
bool ppshm_quantity_ok(const char *s);

#endif
