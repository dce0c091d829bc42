/*
 * model.c: the chaos suite's expectation model (model.h): the fences of
 * deposed leaders and the judgement of the request log against them, the
 * verdict on a supervisor's exit and on a forced relist.  Pure: the
 * callers read the clock, the processes and the log.
 */
#include "tests/chaos/model.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

const struct chaosmodel_fence *
chaosmodel_leader_hit(struct chaosmodel *m, const char *id,
        enum chaosmodel_hit how, int64_t t_us, int64_t cont_plan_us)
{
	struct chaosmodel_fence *f;

	if (m->nfences >= CHAOSMODEL_MAX_FENCES) {
		return (NULL);
	}
	f = &m->fences[m->nfences++];
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->from_us = t_us + CHAOSMODEL_RENEW_MS * 1000LL;
	f->to_us = INT64_MAX;
	switch (how) {
	case CHAOSMODEL_FROZEN:
		/* from its renew deadline to well after it resumes */
		f->to_us = cont_plan_us + CHAOSMODEL_RESUMED_MS * 1000LL;
		f->why = "SIGSTOPped leader";
		f->reacquire = true;
		break;
	case CHAOSMODEL_TERMINATED:
		f->from_us = t_us + CHAOSMODEL_TERM_MS * 1000LL;
		f->why = "terminated leader";
		break;
	default:
		f->why = "killed leader";
		break;
	}
	return (f);
}

/* A frozen leader resumed before the fence began (its renew deadline
 * counted from the SIGSTOP) never had to stand down: seed 117713651518615
 * froze one 0.9 s, then flagged it for renewing. */
void
chaosmodel_leader_resumed(
        struct chaosmodel *m, const char *id, int64_t cont_us)
{
	for (int i = m->nfences - 1; i >= 0; i--) {
		struct chaosmodel_fence *f = &m->fences[i];
		if (!f->reacquire || f->cont_us != 0
		        || strcmp(f->id, id) != 0) {
			continue;
		}
		f->cont_us = cont_us;
		if (cont_us < f->from_us) {
			f->to_us = f->from_us - 1;
		} else if (f->to_us
		        > cont_us + CHAOSMODEL_RESUMED_MS * 1000LL) {
			f->to_us = cont_us + CHAOSMODEL_RESUMED_MS * 1000LL;
		}
		return;
	}
}

void
chaosmodel_scan_init(
        struct chaosmodel_scan *s, const struct chaosmodel_fence *f)
{
	memset(s, 0, sizeof(*s));
	s->f = f;
	snprintf(s->ua, sizeof(s->ua), "%s%s ", CHAOSMODEL_UA, f->id);
}

int64_t
chaosmodel_scan_from_us(const struct chaosmodel_fence *f)
{
	return (f->from_us - CHAOSMODEL_LEASE_MS * 1000LL);
}

/*
 * A write (not GET) by the fenced supervisor inside the window is a
 * violation, with one exception for a frozen leader (f->reacquire): once
 * resumed it may legitimately win the Lease again when the standby has
 * not taken it yet.  A 2xx Lease PUT or POST by it proves that (the PUT
 * carries the resourceVersion it read: kubesim refuses it with 409 when
 * another holder wrote the Lease since; a release, the only write that
 * gives the Lease up, comes only on SIGTERM, never sent to a frozen
 * leader's window).  Its writes are then legitimate while its last such
 * Lease write is at most LEASE_MS old; before the first one (between the
 * renew deadline and the re-acquisition) and after a gap they remain
 * violations.
 *
 * One more exception for a frozen leader: the requests it had handed to
 * its HTTP engine before SIGSTOP (decided while it led) reach the server
 * as soon as it resumes, in the few milliseconds before its loop sees the
 * lost lease.  Such a write within INFLIGHT_MS of the SIGCONT is counted
 * apart when it was refused (it changed nothing: resourceVersion
 * preconditions, 409) or when no other supervisor held the Lease then (no
 * 2xx Lease write by another one in the LEASE_MS before it: no split
 * brain).  A successful one while another supervisor leads is still a
 * violation.
 */
static bool
is_2xx_write(const struct chaosmodel_req *e)
{
	return (e->code >= 200 && e->code < 300
	        && (strcmp(e->method, "PUT") == 0
	                || strcmp(e->method, "POST") == 0));
}

/* A request of the in-flight exception: within INFLIGHT_MS of the SIGCONT,
 * and refused or sent while no other supervisor held the Lease. */
static bool
in_flight(const struct chaosmodel_scan *s, const struct chaosmodel_req *e)
{
	int64_t cont = s->f->cont_us;

	if (cont == 0 || e->ts_us < cont
	        || e->ts_us - cont > CHAOSMODEL_INFLIGHT_MS * 1000LL) {
		return (false);
	}
	return (e->code < 200 || e->code >= 300 || s->other_us == 0
	        || e->ts_us - s->other_us > CHAOSMODEL_LEASE_MS * 1000LL);
}

/* A Lease request: notes who holds it. */
static void
scan_lease(
        struct chaosmodel_scan *s, const struct chaosmodel_req *e, bool mine)
{
	if (!is_2xx_write(e)) {
		return;
	}
	if (!mine
	        && strncmp(e->ua, CHAOSMODEL_UA, strlen(CHAOSMODEL_UA)) == 0) {
		s->other_us = e->ts_us;
	} else if (mine && s->f->reacquire && e->ts_us >= s->f->from_us
	        && e->ts_us <= s->f->to_us) {
		s->lease_us = e->ts_us;
	}
}

void
chaosmodel_scan_req(struct chaosmodel_scan *s, const struct chaosmodel_req *e)
{
	bool mine = strstr(e->ua, s->ua) == e->ua;

	if (strcmp(e->method, "GET") == 0) {
		return;
	}
	if (strstr(e->path, "/leases") != NULL) {
		scan_lease(s, e, mine);
		return;
	}
	if (!mine || e->ts_us < s->f->from_us || e->ts_us > s->f->to_us) {
		return;
	}
	if (s->lease_us != 0 && e->ts_us >= s->lease_us
	        && e->ts_us - s->lease_us <= CHAOSMODEL_LEASE_MS * 1000LL) {
		s->legit++;
		return;
	}
	if (in_flight(s, e)) {
		s->inflight++;
		return;
	}
	if (s->n++ == 0) {
		snprintf(s->first, sizeof(s->first), "%s %s (%ld)", e->method,
		        e->path, e->code);
	}
}

enum chaosmodel_exit
chaosmodel_exit(bool expect_end, bool term, int status)
{
	if (!expect_end) {
		return (CHAOSMODEL_EXIT_UNASKED);
	}
	if (term && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		return (CHAOSMODEL_EXIT_TERM_BAD);
	}
	return (CHAOSMODEL_EXIT_OK);
}

bool
chaosmodel_relist_wrong(int got, int want, bool need_all)
{
	return (got > want || (need_all && got < want));
}
