/*
 * faults.c: the chaos suite's fault schedule.  Owns the seeded xorshift
 * PRNG (CHAOS_SEED replays every choice made with it, here and in
 * main.c's shuffle), the choice of the next fault by weight, injecting it
 * (worker and leader signals, kubesim error rules, dropped watches,
 * compaction, refused connections) and undoing it when due: stopped
 * workers and leaders resumed, rules removed, a new standby started after
 * each supervisor exit.  The fences of the leaders it hits go to the model
 * (chaos.model).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/timefmt.h"
#include "tests/chaos/chaos.h"
#include "tests/lib/kstate.h"

const char *const fault_names[F_NKINDS] = { "worker SIGKILL", "worker SIGSEGV",
	"worker SIGSTOP+SIGCONT", "5xx answers (rules)", "429 answers (rules)",
	"every watch closed", "history compacted + watches closed (410)",
	"connections refused", "leader SIGKILL", "leader SIGTERM",
	"leader SIGSTOP past its lease" };

/* Weights of the random choice (leader faults are also rate-limited). */
static const int FK_WEIGHT[F_NKINDS] = { 14, 6, 8, 10, 6, 8, 5, 5, 4, 4, 3 };

#define MAX_KILLS 512
#define MAX_HELD  64

/* A stopped worker and when to resume it. */
struct stopped {
	pid_t pid;
	int64_t until_ms;
};

/* An error rule in kubesim and when to remove it. */
struct rule {
	int id;
	int64_t until_ms;
};

/* A worker fault, by (supervisor, controller). */
struct kill {
	int sd;
	char ctl[32];
	int64_t at;
};

static struct {
	uint64_t rng;
	struct stopped stopped[MAX_HELD];
	int nstopped;
	struct rule rules[MAX_HELD];
	int nrules;
	struct kill kills[MAX_KILLS];
	int nkills;
	int64_t leader_quiet_until; /* no leader fault before (mono ms) */
	int64_t refuse_until;       /* refusal window end (mono ms) */
} F;

void
fault_seed(uint64_t seed)
{
	F.rng = seed != 0 ? seed : 1;
}

uint64_t
fault_rnd(void)
{
	uint64_t x = F.rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	F.rng = x;
	return (x * 0x2545F4914F6CDD1DULL);
}

int
fault_rnd_in(int lo, int hi)
{
	return (lo + (int)(fault_rnd() % (uint64_t)(hi - lo + 1)));
}

/* Recent worker faults of (sd, ctl), to stay below the CrashLoop
 * threshold (more than 5 exits in 60 s) in quick runs. */
static int
recent_kills(int sd, const char *ctl, int64_t now)
{
	int n = 0;

	for (int i = 0; i < F.nkills; i++) {
		n += F.kills[i].sd == sd && strcmp(F.kills[i].ctl, ctl) == 0
		        && now - F.kills[i].at < 60000;
	}
	return (n);
}

static bool
fault_worker(enum chaos_fk k, int64_t now)
{
	int live[CHAOS_MAX_SD], n = sd_live(live), si, nw;
	pid_t w[64];
	char ctl[32];

	if (n == 0) {
		return (false);
	}
	si = live[fault_rnd() % (uint64_t)n];
	if (chaos.sd[si].stopped
	        || (nw = sd_workers(&chaos.sd[si], w, 64)) == 0) {
		return (false);
	}
	pid_t p = w[fault_rnd() % (uint64_t)nw];
	sd_worker_ctl(p, ctl, sizeof(ctl));
	if (recent_kills(si, ctl, now) >= 3 || F.nkills >= MAX_KILLS
	        || F.nstopped >= MAX_HELD) {
		return (false);
	}
	F.kills[F.nkills].sd = si;
	snprintf(F.kills[F.nkills].ctl, sizeof(F.kills[F.nkills].ctl), "%s",
	        ctl);
	F.kills[F.nkills++].at = now;
	if (k == F_WK_STOP) {
		F.stopped[F.nstopped].pid = p;
		F.stopped[F.nstopped++].until_ms
		        = now + fault_rnd_in(200, 2500);
	}
	kill(p, k == F_WK_KILL ? SIGKILL : k == F_WK_SEGV ? SIGSEGV : SIGSTOP);
	return (true);
}

static bool
fault_rule(enum chaos_fk k, int64_t now)
{
	static const char *const verbs[] = { "\"create\",\"update\","
		                             "\"patch\",\"delete\"",
		"\"get\",\"list\"", "\"watch\"", "\"list\",\"watch\"", "" };
	json_object *out = NULL;
	char body[256];
	int v = fault_rnd_in(0, 4), code = fault_rnd_in(0, 1) ? 500 : 503;

	if (F.nrules >= MAX_HELD) {
		return (false);
	}
	snprintf(body, sizeof(body),
	        "{\"verbs\":[%s],\"code\":%d,\"rate\":%.2f%s}", verbs[v],
	        k == F_429 ? 429 : code, fault_rnd_in(10, 50) / 100.0,
	        k == F_429 ? ",\"retryAfter\":1" : "");
	if (sim_admin("POST", "/_kubesim/faults", body, &out) != 201) {
		json_object_put(out);
		return (false);
	}
	F.rules[F.nrules].id = (int)kstate_int(out, "id");
	F.rules[F.nrules++].until_ms = now + fault_rnd_in(500, 3000);
	json_object_put(out);
	return (true);
}

static bool
fault_leader(enum chaos_fk k, int64_t now)
{
	int l, live[CHAOS_MAX_SD];

	if (now < F.leader_quiet_until || sd_live(live) != 2
	        || (l = sd_leader()) < 0) {
		return (false);
	}
	struct chaos_sd *s = &chaos.sd[l];
	int64_t t_us = timefmt_now_us_real();

	if (k == F_LEADER_STOP) {
		kill(s->pid, SIGSTOP);
		s->stopped = true;
		s->cont_at = now + CHAOSMODEL_LEASE_MS + CHAOSMODEL_RENEW_MS
		        + fault_rnd_in(500, 2000);
		(void)chaosmodel_leader_hit(&chaos.model, s->id,
		        CHAOSMODEL_FROZEN, t_us,
		        t_us + (s->cont_at - now) * 1000LL);
		F.leader_quiet_until = s->cont_at + 10000;
	} else {
		s->expect_end = true;
		s->term = k == F_LEADER_TERM;
		kill(s->pid, k == F_LEADER_TERM ? SIGTERM : SIGKILL);
		(void)chaosmodel_leader_hit(&chaos.model, s->id,
		        k == F_LEADER_TERM ? CHAOSMODEL_TERMINATED
		                           : CHAOSMODEL_KILLED,
		        t_us, 0);
		F.leader_quiet_until = now + 12000;
	}
	chaos_say("%s: supervisor %d", fault_names[k], l);
	return (true);
}

static bool
fault_refuse(int64_t now)
{
	char body[64];
	int sec;

	if (now < F.refuse_until) {
		return (false);
	}
	sec = fault_rnd_in(1, 3);
	snprintf(body, sizeof(body), "{\"seconds\":%d}", sec);
	F.refuse_until = now + sec * 1000 + 2000;
	return (sim_admin("POST", "/_kubesim/faults/refuse", body, NULL)
	        == 200);
}

bool
fault_inject(enum chaos_fk k, int64_t now)
{
	switch (k) {
	case F_WK_KILL:
	case F_WK_SEGV:
	case F_WK_STOP:
		return (fault_worker(k, now));
	case F_5XX:
	case F_429:
		return (fault_rule(k, now));
	case F_CLOSE_WATCHES:
		return (sim_admin(
		                "POST", "/_kubesim/close-watches", "{}", NULL)
		        == 200);
	case F_COMPACT:
		sim_compact();
		return (true);
	case F_REFUSE:
		return (fault_refuse(now));
	default:
		return (fault_leader(k, now));
	}
}

enum chaos_fk
fault_pick(void)
{
	int total = 0, r;

	for (int i = 0; i < F_NKINDS; i++) {
		total += FK_WEIGHT[i];
	}
	r = fault_rnd_in(0, total - 1);
	for (int i = 0; i < F_NKINDS; i++) {
		if (r < FK_WEIGHT[i]) {
			return ((enum chaos_fk)i);
		}
		r -= FK_WEIGHT[i];
	}
	return (F_WK_KILL);
}

static void
resume_workers(int64_t now, bool all)
{
	for (int i = 0; i < F.nstopped; i++) {
		if (all || now >= F.stopped[i].until_ms) {
			kill(F.stopped[i].pid, SIGCONT);
			F.stopped[i--] = F.stopped[--F.nstopped];
		}
	}
}

static void
remove_rules(int64_t now, bool all)
{
	for (int i = 0; i < F.nrules; i++) {
		if (all || now >= F.rules[i].until_ms) {
			char path[64];
			snprintf(path, sizeof(path), "/_kubesim/faults/%d",
			        F.rules[i].id);
			sim_admin("DELETE", path, NULL, NULL);
			F.rules[i--] = F.rules[--F.nrules];
		}
	}
}

static void
resume_leaders(int64_t now, bool all)
{
	for (int i = 0; i < chaos.nsd; i++) {
		struct chaos_sd *s = &chaos.sd[i];
		if (s->stopped && s->pid > 0 && (all || now >= s->cont_at)) {
			kill(s->pid, SIGCONT);
			s->stopped = false;
			chaosmodel_leader_resumed(
			        &chaos.model, s->id, timefmt_now_us_real());
		}
	}
}

void
fault_service(int64_t now, bool all)
{
	int live[CHAOS_MAX_SD];

	resume_workers(now, all);
	remove_rules(now, all);
	resume_leaders(now, all);
	sd_poll_all();
	if (sd_live(live) < 2) {
		sd_start();
		sd_learn_identity(chaos.nsd - 1);
	}
}

void
fault_all_off(void)
{
	fault_service(ksim_now_ms(), true);
	sim_admin("DELETE", "/_kubesim/faults", NULL, NULL);
	sim_admin("POST", "/_kubesim/faults/refuse", "{\"seconds\":0}", NULL);
}
