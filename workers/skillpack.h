/*
 * skillpack.h: the SkillPack reconciler (spec sympozium-controllers.md
 * section 4): one ConfigMap named like the pack holding its skills as
 * Markdown, a finalizer that deletes it, and status phase/configMapName/
 * skillCount.  Prefix skillpack_.
 */
#ifndef SKILLPACK_H
#define SKILLPACK_H

#include "workers/reconcile.h"

/* --controller skillpack */
extern const struct reconciler skillpack_reconciler;

#endif
