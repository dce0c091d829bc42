/*
 * personapack.h: the PersonaPack reconciler (spec sympozium-controllers.md
 * section 3): a pack stamps one SympoziumInstance, one SympoziumSchedule
 * and one seed memory ConfigMap per persona, removes them when the pack is
 * disabled, and reports the installed personas in its status.  Prefix
 * personapack_.
 */
#ifndef PERSONAPACK_H
#define PERSONAPACK_H

#include <stddef.h>

#include "workers/reconcile.h"

/* --controller personapack */
extern const struct reconciler personapack_reconciler;

/*
 * The cron expression of a persona schedule (spec 3.3 "Cron derivation"):
 * cron verbatim when non-empty, else intervalToCron(interval, index * 2).
 * cron and interval may be NULL.  Caller frees with free().
 */
char *personapack_cron(const char *cron, const char *interval, size_t index);

#endif
