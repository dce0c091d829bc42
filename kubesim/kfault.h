/*
 * kfault.h: kubesim's fault injection (issue 3, item 6): error responses
 * by verb and resource at a rate (500, 503, 429 with Retry-After), added
 * latency, hung requests, refused connections for a while; driven by
 * --fault flags and by the admin endpoint /_kubesim/faults.  Closing
 * every watch and compacting history are khttp's built-in admin
 * endpoints.  Every injected fault is logged.  Prefix kfault_.
 */
#ifndef KFAULT_H
#define KFAULT_H

#include <stdbool.h>

#include "kubesim/khttp.h"

struct kfault;

struct kfault *kfault_new(void);
void kfault_free(struct kfault *f);

/* Adds a rule from a --fault flag value (syntax in
 * kubesim/README.md).  Returns 0, or -1 with a reason in err. */
int kfault_add_spec(
        struct kfault *f, const char *spec, char *err, size_t errlen);

/* The khttp hooks; arg is the struct kfault. */
bool kfault_filter(void *arg, const struct kreq *rq, const char *verb,
        const char *plural, struct kresp *rs);
bool kfault_accept(void *arg);
void kfault_admin(
        void *arg, const struct kreq *rq, const char *sub, struct kresp *rs);

#endif
