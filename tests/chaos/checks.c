/*
 * checks.c: what the chaos suite verifies, from kubesim's state and
 * request log and the supervisors' logs, and the closing report.  Owns
 * the informers learnt from the first supervisor's initial LISTs (the
 * LISTs each forced relist must cost) and the count of measured relists.
 * The verdicts themselves are the model's (model.c, opmodel.c).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/timefmt.h"
#include "tests/chaos/chaos.h"
#include "tests/lib/kstate.h"
#include "tests/lib/sdproc.h"

static struct {
	json_object *kinds; /* informer key -> LISTs per recovery */
	int nkinds;
	int measured_relists;
} K;

void
check_learn_informers(void)
{
	struct chaos_sd *s = &chaos.sd[0];
	int64_t end = ksim_now_ms() + 30000;
	int want;
	struct rl_lists l;

	while ((want = sd_watches(s)) == 0 && ksim_now_ms() < end) {
		ksim_sleep_ms(100);
	}
	for (;;) {
		rl_lists_of(s, 0, true, &l);
		if (l.total >= want || ksim_now_ms() >= end) {
			break;
		}
		json_object_put(l.per);
		ksim_sleep_ms(200);
	}
	if (want == 0 || l.total != want) {
		fail_msg("supervisor 0: %d initial LISTs for %d watches",
		        l.total, want);
	}
	K.kinds = l.per;
	K.nkinds = want;
	chaos_say("%d informers per supervisor over %d (resource, selector) "
	          "pairs: %s",
	        want, json_object_object_length(K.kinds),
	        json_object_to_json_string(K.kinds));
}

/* True when every informer of s listed at least once since t_us; with
 * check, flags informers that listed more than once, and with need_all
 * also those that did not list.  (Other LISTs, e.g. the live reads of
 * views, are not informers and not counted.) */
static bool
relisted(const struct chaos_sd *s, int idx, int64_t t_us, bool check,
        bool need_all)
{
	struct rl_lists l;
	bool all = true;

	rl_lists_of(s, t_us, false, &l);
	json_object_object_foreach(K.kinds, key, v)
	{
		int want = json_object_get_int(v);
		int got = json_object_get_int(
		        json_object_object_get(l.per, key));
		all = all && got >= want;
		if (check && chaosmodel_relist_wrong(got, want, need_all)) {
			chaos_violation("forced relist: supervisor %d sent %d "
			                "LIST(s) of %s, expected %d (one per "
			                "informer)",
			        idx, got, key, want);
		}
	}
	json_object_put(l.per);
	return (all);
}

/* Until every live supervisor relisted since t_us or window_ms pass. */
static bool
wait_relisted(const int *live, int n, int64_t t_us, int64_t end)
{
	bool done = false;

	while (!done && ksim_now_ms() < end) {
		ksim_sleep_ms(300);
		sd_poll_all();
		done = true;
		for (int i = 0; i < n; i++) {
			done = done
			        && relisted(&chaos.sd[live[i]], live[i], t_us,
			                false, false);
		}
	}
	return (done);
}

/* Compacts the history and closes every watch, with no other fault
 * active, then counts each live supervisor's LISTs per informer within
 * window_ms: never more than one per informer; with need_all (reflector
 * backoff rested, before the faults) exactly one.  After the faults an
 * informer may still back off (up to 60 s, then the 410 costs one more
 * backoff delay), so a missing LIST there is only reported. */
void
check_relist(const char *when, bool need_all, int window_ms)
{
	int live[CHAOS_MAX_SD], n, late = 0;
	int64_t t_us, t0;
	bool done;

	fault_all_off();
	ksim_sleep_ms(1000);
	n = sd_live(live);
	sim_touch_marker();
	t_us = timefmt_now_us_real();
	sim_admin("POST", "/_kubesim/compact", "{}", NULL);
	sim_admin("POST", "/_kubesim/close-watches", "{}", NULL);
	chaos.injected[F_COMPACT]++;
	t0 = ksim_now_ms();
	done = wait_relisted(live, n, t_us, t0 + window_ms);
	ksim_sleep_ms(1500); /* a second LIST would come now */
	for (int i = 0; i < n; i++) {
		late += !relisted(
		        &chaos.sd[live[i]], live[i], t_us, true, need_all);
	}
	if (!done && need_all) {
		chaos_violation("forced relist (%s): not every informer "
		                "listed again within %d ms",
		        when, window_ms);
	}
	K.measured_relists++;
	chaos_say("forced relist (%s): %d supervisor(s), %s in %lld ms, no "
	          "informer listed twice",
	        when, n,
	        late == 0 ? "every informer relisted"
	                  : "some informers still backing off",
	        (long long)(ksim_now_ms() - t0));
}

void
check_converge(void)
{
	int64_t t0 = ksim_now_ms(), end = t0 + chaos.m->converge_ms;
	int rounds = 0;

	for (;;) {
		struct kstate st;
		int bad;

		rounds++;
		if (kstate_load(&st, chaos.c, CHAOS_NS, opmodel_kinds,
		            OPMODEL_NKINDS)
		        != 0) {
			kstate_free(&st);
			ksim_sleep_ms(500);
			continue;
		}
		opmodel_check(&chaos.om, &st);
		bad = st.nwhy;
		if (bad == 0 || ksim_now_ms() >= end) {
			if (bad != 0) {
				chaos_violation("%d object(s) not converged "
				                "after %d ms; first ones:\n%s",
				        bad, chaos.m->converge_ms,
				        buf_str(&st.why));
			} else {
				chaos_say("converged %lld ms after the faults "
				          "stopped (%d rounds)",
				        (long long)(ksim_now_ms() - t0),
				        rounds);
			}
			kstate_free(&st);
			return;
		}
		kstate_free(&st);
		ksim_sleep_ms(1000);
	}
}

static void
scan_line(const struct chaosmodel_req *e, void *arg)
{
	chaosmodel_scan_req(arg, e);
}

void
check_fences(void)
{
	for (int i = 0; i < chaos.model.nfences; i++) {
		const struct chaosmodel_fence *f = &chaos.model.fences[i];
		struct chaosmodel_scan fs;

		chaosmodel_scan_init(&fs, f);
		rl_scan(chaosmodel_scan_from_us(f), scan_line, &fs);
		if (fs.inflight > 0) {
			chaos_say("%s (%s): %d write(s) in flight at the "
			          "freeze, sent on its resumption with no "
			          "other leader",
			        f->why, f->id, fs.inflight);
		}
		if (fs.legit > 0) {
			chaos_say("%s (%s): %d write(s) after it re-acquired "
			          "the Lease",
			        f->why, f->id, fs.legit);
		}
		if (fs.n > 0) {
			chaos_violation("%d write(s) by a %s (%s) after its "
			                "renew deadline; first: %s",
			        fs.n, f->why, f->id, fs.first);
		}
	}
}

/* Sanitizer reports in a supervisor's log (the workers' stderr goes
 * there too); the deliberate SIGSEGVs of workers are not reports. */
void
check_sanitizers(int idx)
{
	char *t = sdproc_log_text(chaos.sd[idx].log), *save = NULL;

	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		if (sdproc_sanitizer_line(l, true)) {
			chaos_violation("supervisor %d log: %s", idx, l);
		}
	}
	free(t);
}

void
check_report(int64_t t_start)
{
	chaos_say("injected (mode %s, seed %" PRIu64 "):", chaos.m->name,
	        chaos.seed);
	for (int i = 0; i < F_NKINDS; i++) {
		chaos_say("  %-42s %d", fault_names[i], chaos.injected[i]);
	}
	chaos_say("verified: %d objects converged as the spec says (%d "
	          "expected children, exact sets per owner), %d forced "
	          "relist(s) at one LIST per informer, %d fenced "
	          "window(s) without a write, %d supervisor(s) run, none "
	          "exited on its own; %d violation(s); %lld s",
	        chaos.om.verified_objects, chaos.om.verified_children,
	        K.measured_relists, chaos.model.nfences, chaos.nsd,
	        chaos_violations(),
	        (long long)(ksim_now_ms() - t_start) / 1000);
}

void
check_fini(void)
{
	json_object_put(K.kinds);
	K.kinds = NULL;
}
