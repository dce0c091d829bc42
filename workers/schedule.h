/*
 * schedule.h: the SympoziumSchedule reconciler (spec
 * sympozium-controllers.md section 5): on each due cron tick it creates
 * one AgentRun `<schedule>-<N>` for the schedule's instance, with the
 * Forbid wait, the single catch-up run and the status of upstream.
 * Prefix schedule_.
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include "workers/reconcile.h"

/* --controller schedule */
extern const struct reconciler schedule_reconciler;

#endif
