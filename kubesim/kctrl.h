/*
 * kctrl.h: the parts of the control plane kubesim emulates, because an
 * operator's children are acted on by other controllers in a real
 * cluster (issue 3, item 5): the garbage collector (ownerReferences with
 * background, foreground and orphan propagation, spec C.6), the Job
 * controller and a kubelet stand-in (a Job gets a Pod from its template;
 * the Pod runs, then succeeds or fails; Job status follows;
 * activeDeadlineSeconds and ttlSecondsAfterFinished), pod logs, and
 * Deployment status.  One thread follows the store's event ring; every
 * write goes through kwrite_* under the store lock, so clients see these
 * writes exactly like any other.  Prefix kctrl_.
 */
#ifndef KCTRL_H
#define KCTRL_H

#include <stdbool.h>

#include "kubesim/ksrv.h"

enum kctrl_loop {
	KCTRL_GC = 1 << 0,
	KCTRL_JOB = 1 << 1,
	KCTRL_KUBELET = 1 << 2,
	KCTRL_DEPLOYMENT = 1 << 3,
	KCTRL_ALL = 0xf,
};

/* Parses a --controllers value ("all", "none", or a comma-separated list
 * of gc, job, kubelet, deployment) into *loops.  Returns 0, or -1. */
int kctrl_parse(const char *s, unsigned *loops);

struct kctrl;

/* Starts the loops (a thread; none when loops is 0). */
struct kctrl *kctrl_start(struct ksrv *ks, unsigned loops);
/* Stops the thread and frees ctl (NULL is fine). */
void kctrl_stop(struct kctrl *ctl);

/* The admin endpoint /_kubesim/kubelet (a khttp_admin_fn; arg is the
 * struct kctrl): see kubesim/README.md for its requests. */
void kctrl_admin(
        void *arg, const struct kreq *rq, const char *sub, struct kresp *rs);

#endif
