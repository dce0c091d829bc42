/*
 * model.h: the chaos suite's own expectation model (pure: no I/O, no
 * clock; tests/chaos/test_model.c tests it alone).  Given the faults the
 * suite injected, it says what the operator may and may not do:
 *
 * - fencing: a leader supervisor hit by a fault (killed, terminated or
 *   frozen) has a window in which it must not write (a fence); a frozen
 *   one that is resumed narrows or voids its window, and may win the
 *   Lease again.  chaosmodel_scan_req() judges the request log, request
 *   by request, against one fence;
 * - exits: a supervisor may end only when killed or terminated here, and
 *   a terminated one must exit 0;
 * - forced relists: each informer LISTs once per recovery.
 *
 * Convergence of the objects themselves is tests/lib/opmodel.c (shared
 * with the scale suite).  Times are real time in microseconds (the
 * request log's timestamps).
 */
#ifndef CHAOS_MODEL_H
#define CHAOS_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* Leader election timing (ms), passed to every supervisor. */
#define CHAOSMODEL_LEASE_MS 3000
#define CHAOSMODEL_RENEW_MS 2000
/* A resumed frozen leader's writes within this time of its SIGCONT were
 * in flight at the freeze (chaosmodel_scan_req()). */
#define CHAOSMODEL_INFLIGHT_MS 500
/* A resumed frozen leader is fenced up to this long after its SIGCONT. */
#define CHAOSMODEL_RESUMED_MS 4000
/* A terminated leader may finish reconciles for this long (its 10 s
 * shutdown grace) before its fence begins. */
#define CHAOSMODEL_TERM_MS    12000
#define CHAOSMODEL_MAX_FENCES 64
/* How every supervisor's User-Agent begins; its identity follows. */
#define CHAOSMODEL_UA "sympoziumd/0.1 "

/* What a fault did to a leader. */
enum chaosmodel_hit {
	CHAOSMODEL_KILLED,     /* SIGKILL */
	CHAOSMODEL_TERMINATED, /* SIGTERM */
	CHAOSMODEL_FROZEN,     /* SIGSTOP past its lease, SIGCONT later */
};

/* A window of a deposed leader in which it must not write, unless it
 * took the Lease again (reacquire). */
struct chaosmodel_fence {
	char id[160]; /* its identity (User-Agent) */
	int64_t from_us, to_us;
	const char *why;
	bool reacquire;  /* a frozen leader, resumed: it may win the Lease */
	int64_t cont_us; /* its SIGCONT; 0: not resumed */
};

/* Every fence of a run. */
struct chaosmodel {
	struct chaosmodel_fence fences[CHAOSMODEL_MAX_FENCES];
	int nfences;
};

/* The leader id was hit at t_us; a frozen one is planned to be resumed
 * at cont_plan_us (ignored otherwise).  Returns its fence, NULL when the
 * table is full (the fault goes unchecked). */
const struct chaosmodel_fence *chaosmodel_leader_hit(struct chaosmodel *m,
        const char *id, enum chaosmodel_hit how, int64_t t_us,
        int64_t cont_plan_us);

/* The frozen leader id was resumed at cont_us (possibly before the
 * planned time, when the faults ended).  Resumed before its fence began
 * (its renew deadline), it never had to stand down: the fence is void.
 * Resumed later, it is fenced up to CHAOSMODEL_RESUMED_MS after it. */
void chaosmodel_leader_resumed(
        struct chaosmodel *m, const char *id, int64_t cont_us);

/* One request of kubesim's request log. */
struct chaosmodel_req {
	int64_t ts_us;
	const char *verb, *method, *path, *query, *ua;
	long code;
};

/* The judgement of the request log against one fence. */
struct chaosmodel_scan {
	const struct chaosmodel_fence *f;
	char ua[200];     /* the fenced supervisor's User-Agent prefix */
	int n;            /* writes in the fence: violations */
	int legit;        /* writes under a re-acquired Lease */
	int inflight;     /* in flight at the freeze */
	int64_t other_us; /* another supervisor's last 2xx Lease write */
	int64_t lease_us; /* its last 2xx Lease write in the fence; 0: none */
	char first[512];  /* the first violation, "METHOD path (code)" */
};

void chaosmodel_scan_init(
        struct chaosmodel_scan *s, const struct chaosmodel_fence *f);
/* The earliest request the scan needs (the Lease history before it). */
int64_t chaosmodel_scan_from_us(const struct chaosmodel_fence *f);
/* Feeds one request, in log order. */
void chaosmodel_scan_req(
        struct chaosmodel_scan *s, const struct chaosmodel_req *e);

/* The verdict on a supervisor that exited with wait status status. */
enum chaosmodel_exit {
	CHAOSMODEL_EXIT_OK,
	CHAOSMODEL_EXIT_UNASKED,  /* exited on its own */
	CHAOSMODEL_EXIT_TERM_BAD, /* not exit 0 after SIGTERM */
};

/* expect_end: killed or terminated here; term: by SIGTERM. */
enum chaosmodel_exit chaosmodel_exit(bool expect_end, bool term, int status);

/* True when an informer that must LIST want times in a forced relist
 * and did got times is wrong: more is always wrong, fewer only with
 * need_all (the reflectors rested, nothing backing off). */
bool chaosmodel_relist_wrong(int got, int want, bool need_all);

#endif
