/*
 * chaos.h: the chaos suite's shared declarations (tests/chaos/, one
 * program: bin/tests/test_chaos; see README.md there).  The run's
 * context (struct chaos) and one section per file:
 *
 *   main.c    the run: modes, seed, set-up and teardown, the phases,
 *             the output lines (chaos_say(), chaos_violation())
 *   faults.c  the fault schedule: the seeded PRNG, which fault when,
 *             injecting and undoing it
 *   procs.c   the supervisors and their workers: start, reap, leader,
 *             stop every process started here
 *   sim.c     kubesim: its admin endpoints, creating objects through
 *             injected errors
 *   reqlog.c  kubesim's request log: parsing, identities, LIST counts
 *   checks.c  the checks after the faults: forced relists, convergence,
 *             fences, sanitizer reports; the closing report
 *   model.c   the expectation model (model.h; pure, unit-tested)
 */
#ifndef CHAOS_H
#define CHAOS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "common/kapi.h"
#include "tests/chaos/model.h"
#include "tests/lib/ksim.h"
#include "tests/lib/opmodel.h"

#define CHAOS_NS       "default"
#define CHAOS_MAX_SD   16
#define CHAOS_MAX_SEEN 1024

/* ---- the run (main.c) ---- */

struct chaos_mode {
	const char *name;
	int skillpacks, instances, mcps, schedules, packs, runs;
	int run_instances;  /* instances the runs are spread over */
	int chaos_ms;       /* fault injection phase */
	int converge_ms;    /* bound on convergence after the faults */
	int relists;        /* measured forced relists after the faults */
	int relists_during; /* measured forced relists during the faults */
};

/* One supervisor started here (procs.c). */
struct chaos_sd {
	pid_t pid;       /* 0 once reaped */
	int status;      /* wait status once reaped */
	bool expect_end; /* signalled here with SIGKILL or SIGTERM */
	bool term;       /* SIGTERM: must exit 0 */
	bool stopped;    /* SIGSTOPped now */
	int64_t cont_at; /* monotonic ms of the planned SIGCONT */
	char log[160];
	char id[160]; /* identity from its User-Agent ("" until known) */
	int64_t started_ms;
	pid_t seen[CHAOS_MAX_SEEN];
	int nseen;
};

/* The fault kinds (faults.c). */
enum chaos_fk {
	F_WK_KILL,
	F_WK_SEGV,
	F_WK_STOP,
	F_5XX,
	F_429,
	F_CLOSE_WATCHES,
	F_COMPACT,
	F_REFUSE,
	F_LEADER_KILL,
	F_LEADER_TERM,
	F_LEADER_STOP,
	F_NKINDS
};

/* What every file reads; the comment names the file that writes. */
struct chaos {
	const struct chaos_mode *m;         /* main.c */
	uint64_t seed;                      /* main.c */
	char dir[64], kc[160], reqlog[160]; /* main.c */
	struct ksim *k;                     /* main.c */
	struct kapi_client *c;              /* main.c */
	struct opmodel om; /* main.c: the objects and their expected state */
	int created;       /* main.c: items of om created so far */
	struct chaos_sd sd[CHAOS_MAX_SD]; /* procs.c */
	int nsd;
	struct chaosmodel model; /* faults.c adds fences, checks.c judges */
	int injected[F_NKINDS];  /* faults.c (and checks.c's compactions) */
};

extern struct chaos chaos;

/* "chaos  12.3s: ..." on stderr. */
void chaos_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "chaos: VIOLATION: ..." on stderr (the first 40); fails the run. */
void chaos_violation(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));
int chaos_violations(void);

/* ---- faults.c ---- */

extern const char *const fault_names[F_NKINDS];

void fault_seed(uint64_t seed);
uint64_t fault_rnd(void);
/* Uniform in [lo, hi]. */
int fault_rnd_in(int lo, int hi);
enum chaos_fk fault_pick(void);
/* Injects k at monotonic ms now; false when it did not apply. */
bool fault_inject(enum chaos_fk k, int64_t now);
/* Resumes what is due (all: everything), removes expired rules, reaps,
 * keeps a standby. */
void fault_service(int64_t now, bool all);
/* Stops every fault: rules, refusal, stopped processes. */
void fault_all_off(void);

/* ---- procs.c ---- */

void sd_start(void);
/* Reaps supervisor idx if it exited; checks that it was meant to. */
void sd_poll(int idx);
void sd_poll_all(void);
/* Indexes of live supervisors not being stopped or terminated. */
int sd_live(int *out);
/* The index of the one live, running leader, or -1. */
int sd_leader(void);
/* The live workers of s (remembered for the cleanup). */
int sd_workers(struct chaos_sd *s, pid_t *out, int max);
/* The --controller argument of a worker (into out), "" if unknown. */
void sd_worker_ctl(pid_t pid, char *out, size_t len);
/* The number of watches s announced in its log (0: not yet). */
int sd_watches(const struct chaos_sd *s);
/* Learns the identity of the newest supervisor (fails after 20 s). */
void sd_learn_identity(int idx);
/* Stops every process started here, by pid (check: a clean exit on
 * SIGTERM is required). */
void sd_stop_all(bool check);
/* Async-signal-safe: SIGKILL to everything started here. */
void sd_kill_all(void);

/* ---- sim.c ---- */

/* An admin request, retried while connections are refused; the JSON
 * answer into *out when out is set.  Returns the HTTP code. */
long sim_admin(const char *method, const char *path, const char *body,
        json_object **out);
/* Creates obj, retrying through injected faults (fails after 60 s). */
void sim_create(const struct kapi_res *r, json_object *obj, const char *name);
void sim_apply_crds(void);
/* Waits until every sympozium.ai resource is served. */
void sim_wait_served(void);
/* The Secret chaos-key and the kubelet rules of chaos.om. */
void sim_fixtures(void);
/* A write no informer selects: a history position newer than theirs. */
void sim_touch_marker(void);
/* sim_touch_marker(), compaction, every watch closed. */
void sim_compact(void);

/* ---- reqlog.c ---- */

typedef void rl_fn(const struct chaosmodel_req *e, void *arg);

/* Calls fn for every line of t (request-log JSON lines; t is cut up)
 * with ts >= after_us. */
void rl_scan_text(char *t, int64_t after_us, rl_fn *fn, void *arg);
/* The same over kubesim's request log. */
void rl_scan(int64_t after_us, rl_fn *fn, void *arg);
/* The identity in a supervisor's User-Agent, into id ("" if none). */
void rl_ua_identity(const char *ua, char *id, size_t len);

/* LIST starts (first pages) of one supervisor, by informer key
 * "<plural>?<labelSelector>". */
struct rl_lists {
	const char *ua;   /* "sympoziumd/0.1 <id> " */
	bool initial;     /* only resourceVersion=0 lists */
	json_object *per; /* key -> count; the caller puts it */
	int total;
};

void rl_lists_of(const struct chaos_sd *s, int64_t after_us, bool initial,
        struct rl_lists *l);

/* ---- checks.c ---- */

/* Learns the informers from supervisor 0's initial LISTs. */
void check_learn_informers(void);
/* A forced relist with no other fault, counted per informer. */
void check_relist(const char *when, bool need_all, int window_ms);
/* Polls until every object matches the model or converge_ms pass. */
void check_converge(void);
void check_fences(void);
void check_sanitizers(int idx);
/* The closing lines: what was injected and verified. */
void check_report(int64_t t_start);
/* Releases what the checks hold. */
void check_fini(void);

#endif
