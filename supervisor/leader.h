/*
 * leader.h: the supervisor's leadership, one module.  It owns the Lease
 * state machine (lease.h), drives it over the supervisor's API connection
 * (one request at a time: GET, POST or PUT of the coordination.k8s.io/v1
 * Lease), keeps a watch of that Lease while standing by (its events are
 * judged like GET answers, lease_on_watch(): a release is taken within one
 * round trip, a killed holder's expiry counts from its last renewal as the
 * watch saw it), and counts every Lease request in the stats (stats_api(),
 * stats_leadership()).  Without election (--leader-elect off) this
 * process leads from its first tick, epoch 1, until leader_release().
 * Prefix leader_.
 *
 * It answers one question, leader_may_write(): may this process dispatch
 * and write now.  Every fence of the supervisor asks it (dispatch, the
 * writer before each request, results of an old epoch).  It reports each
 * change of leadership once, through the function the composition root
 * registers (sup.c: a new epoch for the workers and a resync on gaining,
 * writes in flight cancelled on losing), after logging it ("leading
 * (epoch N) as ID", "not leading any more (epoch N): dispatch and writes
 * stopped").
 *
 * One thread (the supervisor's loop).  struct leader is opaque; strings
 * of the configuration are copied.
 */
#ifndef LEADER_H
#define LEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kapi.h"
#include "supervisor/stats.h"

struct leader;

enum leader_event {
	LEADER_GAINED,   /* leading from now on, under a new epoch */
	LEADER_LOST,     /* the renew deadline passed without a renewal:
	                  * writes already submitted must not go out */
	LEADER_RELEASED, /* given up at shutdown (leader_release()) */
};

/* Reports ev; epoch: of the leadership gained or ended. */
typedef void leader_fn(
        void *arg, enum leader_event ev, uint32_t epoch, int64_t now_ms);

struct leader_conf {
	bool elect;           /* false: lead alone, no Lease */
	const char *identity; /* holderIdentity; NULL: "<hostname>_<uuid>" */
	const char *ns;       /* the Lease's namespace and name */
	const char *name;
	int64_t lease_ms; /* lease duration, renew deadline, retry period */
	int64_t renew_ms;
	int64_t retry_ms;
	uint64_t seed;       /* the retry jitter's */
	leader_fn *on_event; /* NULL: nothing reported */
	void *arg;
};

/* A new module, not leading yet, or NULL with the Lease configuration's
 * fault in err (lease_config_check()).  Free with leader_free(). */
struct leader *leader_new(
        const struct leader_conf *c, char *err, size_t errlen);
/* Frees l (NULL is fine); requests in flight belong to the kapi_multi,
 * which is freed after. */
void leader_free(struct leader *l);
/* The connection Lease requests go over and the stats that count them
 * (st may be NULL); before the first leader_tick(). */
void leader_connect(struct leader *l, struct kapi_multi *m, struct stats *st);

/* One turn of the loop: sends the Lease request that is due, reports a
 * change of leadership, opens or closes the standby's watch. */
void leader_tick(struct leader *l, int64_t now_ms);
/* Reports a change of leadership now (the renew deadline may have passed
 * while the loop waited or was stopped). */
void leader_check(struct leader *l, int64_t now_ms);
/* Shutdown began: the standby's watch closes; the Lease is renewed (or
 * campaigned for) until leader_release(). */
void leader_stopping(struct leader *l);
/* Gives leadership up (LEADER_RELEASED) and starts the Lease release. */
void leader_release(struct leader *l, int64_t now_ms);
/* The release finished, or none is needed (no Lease). */
bool leader_released(const struct leader *l);

/* Whether this process may dispatch and write now. */
bool leader_may_write(struct leader *l, int64_t now_ms);
/* The epoch of the current (or last) leadership; 0 before the first. */
uint32_t leader_epoch(const struct leader *l);
/* Leadership as last reported (gained and not lost since). */
bool leader_leading(const struct leader *l);

/* This process's identity (borrowed). */
const char *leader_identity(const struct leader *l);
/* The Lease's holderIdentity as last seen; without election, this
 * identity while leading; "" none (borrowed). */
const char *leader_holder(const struct leader *l);
/* Whether it elects over a Lease (--leader-elect). */
bool leader_elects(const struct leader *l);
/* When leader_tick() has a Lease step to take, or -1 (none: no Lease, a
 * request in flight). */
int64_t leader_next_deadline(const struct leader *l);

#endif
