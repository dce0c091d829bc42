/*
 * main.c: the chaos suite's run (bin/tests/test_chaos; see README.md
 * here).  The whole operator on bin/kubesim: two bin/sympoziumd with
 * --leader-elect (one leader, one standby) and their production workers,
 * while a few hundred objects of the six kinds are created (quick mode,
 * in `make test` and `make asan`), or thousands (long mode: `--long` or
 * CHAOS_LONG=1), and faults are injected at random from a seeded PRNG
 * (CHAOS_SEED replays the choices; faults.c).  After the faults stop it
 * measures forced relists, waits for convergence and checks fences,
 * exits and sanitizer reports (checks.c), prints what it injected and
 * verified, and fails with the list of violations.
 *
 * Owns the run's context (struct chaos), the modes, the seed, the
 * temporary directory, kubesim's process and client, the output lines,
 * and the phases.  Everything started here is stopped by pid on every
 * path (the cmocka teardown runs after a failure too, a SIGTERM or SIGINT
 * handler when the runner's timeout fires).  The run is bounded in time.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/kapi_conf.h"
#include "tests/chaos/chaos.h"
#include "tests/lib/testutil.h"

#define MAX_VIOL 40

static const struct chaos_mode QUICK
        = { "quick", 90, 50, 40, 30, 10, 30, 10, 30000, 60000, 1, 0 };
static const struct chaos_mode LONG
        = { "long", 900, 500, 300, 300, 100, 300, 30, 300000, 240000, 2, 3 };

struct chaos chaos;

static struct kapi_conf *conf;
static int viol;

void
chaos_violation(const char *fmt, ...)
{
	va_list ap;

	if (viol++ < MAX_VIOL) {
		fprintf(stderr, "chaos: VIOLATION: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

int
chaos_violations(void)
{
	return (viol);
}

void
chaos_say(const char *fmt, ...)
{
	va_list ap;

	static int64_t t0;

	if (t0 == 0) {
		t0 = ksim_now_ms();
	}
	fprintf(stderr, "chaos %5.1fs: ", (ksim_now_ms() - t0) / 1000.0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Every object of the mode, in creation order: the instances the runs
 * and schedules name first, the rest shuffled by the seeded PRNG. */
static void
build_items(void)
{
	const struct chaos_mode *m = chaos.m;
	struct opmodel_counts n = { m->skillpacks, m->instances, m->mcps,
		m->schedules, m->packs, m->runs, m->run_instances };
	struct opmodel *om = &chaos.om;
	int first;

	opmodel_build(om, &n);
	first = om->first_free;
	for (int i = om->nitems - 1; i > first; i--) {
		int j = first + (int)(fault_rnd() % (uint64_t)(i - first + 1));
		struct opmodel_item t = om->items[i];
		om->items[i] = om->items[j];
		om->items[j] = t;
	}
}

/* ---- setup and teardown ---- */

/* SIGTERM or SIGINT (e.g. the test runner's timeout): kill what was
 * started here, by pid, and exit.  Only async-signal-safe calls. */
static void
on_signal(int sig)
{
	sd_kill_all();
	if (chaos.k != NULL) {
		kill(ksim_pid(chaos.k), SIGKILL);
	}
	_exit(128 + sig);
}

/* kubesim with a request log and the fault seed, and our client. */
static int
start_kubesim(void)
{
	char fseed[32], err[256];

	snprintf(fseed, sizeof(fseed), "%" PRIu64,
	        (uint64_t)(chaos.seed % 1000000007ULL));
	const char *args[] = { "--write-kubeconfig", chaos.kc, "--request-log",
		chaos.reqlog, "--bookmark-interval", "1h", "--fault-seed",
		fseed, NULL };
	if ((chaos.k = ksim_start(args)) == NULL) {
		return (-1);
	}
	conf = kapi_conf_load(chaos.kc, NULL, err, sizeof(err));
	if (conf == NULL) {
		return (-1);
	}
	chaos.c = kapi_client_new(conf, "test-chaos/0.1");
	kapi_client_set_timeout(chaos.c, 15000);
	return (0);
}

static int
setup(void **state)
{
	struct sigaction sa = { .sa_handler = on_signal };
	const char *seed = getenv("CHAOS_SEED");

	(void)state;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	chaos.seed = seed != NULL && *seed != '\0'
	        ? strtoull(seed, NULL, 10)
	        : ((uint64_t)time(NULL) << 16) ^ (uint64_t)getpid();
	fault_seed(chaos.seed);
	snprintf(chaos.dir, sizeof(chaos.dir), "/tmp/test_chaos.XXXXXX");
	if (mkdtemp(chaos.dir) == NULL) {
		return (-1);
	}
	snprintf(chaos.kc, sizeof(chaos.kc), "%s/kubeconfig", chaos.dir);
	snprintf(chaos.reqlog, sizeof(chaos.reqlog), "%s/requests.log",
	        chaos.dir);
	return (start_kubesim());
}

static int
teardown(void **state)
{
	(void)state;
	sd_stop_all(false);
	kapi_client_free(chaos.c);
	kapi_conf_free(conf);
	ksim_stop(chaos.k);
	opmodel_free(&chaos.om);
	check_fini();
	if (viol == 0) {
		(void)testutil_rmtree(chaos.dir);
	} else {
		chaos_say("logs kept in %s", chaos.dir);
	}
	return (0);
}

/* ---- the run ---- */

static void
start_operator(void)
{
	int64_t end;

	sd_start();
	sd_learn_identity(0);
	sd_start();
	sd_learn_identity(1);
	end = ksim_now_ms() + 20000;
	while (sd_leader() < 0 && ksim_now_ms() < end) {
		sd_poll_all();
		ksim_sleep_ms(50);
	}
	if (sd_leader() < 0) {
		fail_msg("no single leader within 20 s");
	}
	chaos_say("supervisor %d leads", sd_leader());
	check_learn_informers();
	/* reflectors rested: exactly one LIST per informer */
	check_relist("before the faults", true, 20000);
}

static void
create_next(void)
{
	struct opmodel_item *it = &chaos.om.items[chaos.created++];

	sim_create(it->res, it->obj, it->name);
}

/* Creates the objects due by now: all of them by 70% of the phase. */
static void
create_due(int64_t t0, int64_t now)
{
	int64_t span = chaos.m->chaos_ms * 7 / 10;
	int due = (int)((now - t0) * chaos.om.nitems / span);

	if (due > chaos.om.nitems) {
		due = chaos.om.nitems;
	}
	for (int n = 0; n < 4 && chaos.created < due; n++) {
		create_next();
	}
}

static void
chaos_phase(void)
{
	const struct chaos_mode *m = chaos.m;
	int64_t t0 = ksim_now_ms(), end = t0 + m->chaos_ms;
	int64_t next = t0 + 500;
	int64_t next_relist = t0 + m->chaos_ms / (m->relists_during + 1);
	int during = 0;

	while (ksim_now_ms() < end) {
		int64_t now = ksim_now_ms();
		create_due(t0, now);
		fault_service(now, false);
		/* creating can take seconds through injected faults: a fault
		 * timed from a stale clock would end at once (a leader frozen
		 * for 20 ms, its fence window still open) */
		now = ksim_now_ms();
		if (during < m->relists_during && now >= next_relist) {
			check_relist("during the faults", false, 30000);
			during++;
			next_relist
			        = now + m->chaos_ms / (m->relists_during + 1);
		} else if (now >= next) {
			enum chaos_fk k = fault_pick();
			if (fault_inject(k, now)) {
				chaos.injected[k]++;
			}
			next = now + fault_rnd_in(150, 900);
		}
		ksim_sleep_ms(20);
	}
	while (chaos.created < chaos.om.nitems) {
		create_next();
	}
}

static void
test_chaos(void **state)
{
	int64_t t_start = ksim_now_ms();

	(void)state;
	chaos_say("mode %s, seed %" PRIu64 " (replay the choices with "
	          "CHAOS_SEED=%" PRIu64 ")",
	        chaos.m->name, chaos.seed, chaos.seed);
	sim_apply_crds();
	sim_wait_served();
	build_items();
	sim_fixtures();
	start_operator();
	chaos_say("%d objects to create over %d s of faults", chaos.om.nitems,
	        chaos.m->chaos_ms / 1000);
	chaos_phase();
	fault_all_off();
	chaos_say(
	        "faults stopped; %d supervisor(s) started so far", chaos.nsd);
	for (int i = 0; i < chaos.m->relists; i++) {
		check_relist("after the faults", false, 15000);
	}
	check_converge();
	check_fences();
	sd_stop_all(true);
	for (int i = 0; i < chaos.nsd; i++) {
		check_sanitizers(i);
	}
	check_report(t_start);
	if (viol > 0) {
		fail_msg("%d violation(s) (seed %" PRIu64 "); see above", viol,
		        chaos.seed);
	}
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chaos),
	};
	const char *lm = getenv("CHAOS_LONG");

	chaos.m = &QUICK;
	if (lm != NULL && strcmp(lm, "1") == 0) {
		chaos.m = &LONG;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--long") == 0) {
			chaos.m = &LONG;
		} else if (strcmp(argv[i], "--quick") == 0) {
			chaos.m = &QUICK;
		}
	}
	return (cmocka_run_group_tests(tests, setup, teardown));
}
