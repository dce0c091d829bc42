/*
 * test_workers_proc.c: the worker process pool (supervisor/workers.c)
 * with real processes.  The test runs its own poll loop (the pool's
 * descriptors, a
 * signalfd for SIGCHLD, wk_tick at the pool's deadlines) and drives
 * workers whose behaviour per WORK is chosen by the object's annotation
 * testctl.sympozium.ai/action (ok, error, sleep:MS, hang, segv, abort,
 * exit:N, malformed), as the test controller "testctl" does.
 *
 * The worker binary is $WORKER_TEST_BIN when set, else
 * $BIN/tests/sympozium-worker-test when it exists, else this very program:
 * started as `test_workers_proc --controller NAME --socket PATH` it acts as a
 * small fake worker speaking the protocol through ipc_sock (fake_worker()).
 * Every wait is bounded; processes are only ever signalled by pid.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "ipc/ipc_sock.h"
#include "supervisor/workers.h"

#define CTL       "testctl"
#define ACTION    "testctl.sympozium.ai/action"
#define WAIT_MS   10000
#define MAX_LOST  16
#define MAX_SLOTS 8

static char self_exe[4096];

/* ---- the fake worker (this binary re-executed) ---- */

static int
fake_work(struct ipc_sock *s, const struct ipc_msg *m)
{
	struct ipc_work w;
	const char *act;
	json_object *res;
	enum ipc_verdict v = IPC_V_DONE;

	if (ipc_work_read(m, &w) != 0) {
		return (5);
	}
	act = jx_getv(w.object, "metadata", "annotations", ACTION, NULL)
	                != NULL
	        ? json_object_get_string(jx_getv(
	                w.object, "metadata", "annotations", ACTION, NULL))
	        : "ok";
	if (strncmp(act, "sleep:", 6) == 0) {
		usleep((useconds_t)atoi(act + 6) * 1000);
	} else if (strcmp(act, "hang") == 0) {
		for (;;) {
			pause();
		}
	} else if (strcmp(act, "segv") == 0) {
		raise(SIGSEGV);
	} else if (strcmp(act, "abort") == 0) {
		abort();
	} else if (strncmp(act, "exit:", 5) == 0) {
		_exit(atoi(act + 5));
	} else if (strcmp(act, "error") == 0) {
		v = IPC_V_ERROR;
	}
	if (strcmp(act, "malformed") == 0) {
		res = json_object_new_object(); /* no key, no verdict */
	} else {
		res = ipc_result_new(w.key, w.epoch, v, 0, act);
	}
	ipc_sock_send(s, IPC_RESULT, 0, res);
	json_object_put(res);
	return (0);
}

static int
fake_loop(struct ipc_sock *s)
{
	struct ipc_msg m;
	char err[256];
	enum ipc_sock_rc rc;
	bool ready = false;
	int ret = -1;

	while (ret < 0) {
		rc = ipc_sock_recv_wait(s, 10000, &m, err, sizeof(err));
		if (rc == IPC_SOCK_AGAIN) {
			ret = ready ? -1 : 3;
			continue;
		}
		if (rc != IPC_SOCK_OK) {
			return (4);
		}
		if (m.type == IPC_READY) {
			ready = true;
		} else if (m.type == IPC_HEARTBEAT) {
			ipc_sock_send(s, IPC_HEARTBEAT, m.reqid, m.body);
		} else if (m.type == IPC_QUIT) {
			ret = 0;
		} else if (m.type == IPC_WORK && fake_work(s, &m) != 0) {
			ret = 5;
		}
		ipc_msg_fini(&m);
	}
	return (ret);
}

static int
fake_worker(int argc, char **argv)
{
	const char *ctl = NULL, *path = NULL;
	struct ipc_sock *s;
	json_object *hello;
	char err[256];
	int i, rc;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--controller") == 0) {
			ctl = argv[i + 1];
		} else if (strcmp(argv[i], "--socket") == 0) {
			path = argv[i + 1];
		}
	}
	if (ctl == NULL || path == NULL) {
		return (2);
	}
	if ((s = ipc_sock_dial(path, 0, 5000, err, sizeof(err))) == NULL) {
		fprintf(stderr, "fake worker: %s\n", err);
		return (2);
	}
	hello = ipc_hello_new(ctl, getpid());
	ipc_sock_send(s, IPC_HELLO, 0, hello);
	json_object_put(hello);
	rc = fake_loop(s);
	ipc_sock_close(s);
	return (rc);
}

/* ---- the harness ---- */

struct lost {
	char *key;
	char *cause;
	bool quarantined;
};

struct h {
	struct wk_pool *p;
	int sfd;
	char dir[64];
	char *bin;
	int results;
	char last_key[128];
	enum ipc_verdict last_verdict;
	int idles;
	struct lost lost[MAX_LOST];
	int nlost;
	struct wk_info slots[MAX_SLOTS];
	char causes[MAX_SLOTS][128];
	int nslots;
	char released[MAX_LOST][128]; /* on_released keys */
	int nreleased;
	const char *ctl; /* the controller's name (CTL unless said) */
};

static void
cb_result(void *arg, const char *controller, struct wk_worker *w,
        const struct ipc_result *r, const struct ipc_write *ops)
{
	struct h *h = arg;

	(void)ops;
	assert_string_equal(controller, wk_worker_controller(w));
	snprintf(h->last_key, sizeof(h->last_key), "%s", r->key);
	h->last_verdict = r->verdict;
	h->results++;
}

static void
cb_lost(void *arg, const char *controller, const char *key, const char *cause,
        bool quarantined)
{
	struct h *h = arg;

	assert_string_equal(controller, CTL);
	assert_true(h->nlost < MAX_LOST);
	h->lost[h->nlost].key = xstrdup(key);
	h->lost[h->nlost].cause = xstrdup(cause);
	h->lost[h->nlost].quarantined = quarantined;
	h->nlost++;
}

static void
cb_released(void *arg, const char *controller, const char *key)
{
	struct h *h = arg;

	assert_string_equal(controller, CTL);
	assert_true(h->nreleased < MAX_LOST);
	snprintf(h->released[h->nreleased++], sizeof(h->released[0]), "%s",
	        key);
}

static void
cb_idle(void *arg, const char *controller)
{
	struct h *h = arg;

	assert_string_equal(controller, CTL);
	h->idles++;
}

static const char *
worker_bin(void)
{
	static char path[4200];
	const char *e = getenv("WORKER_TEST_BIN");
	const char *bin = getenv("BIN");

	if (e != NULL && *e != '\0') {
		return (e);
	}
	snprintf(path, sizeof(path), "%s/tests/sympozium-worker-test",
	        bin != NULL ? bin : "bin");
	if (access(path, X_OK) == 0) {
		return (path);
	}
	return (self_exe);
}

/* A pool of n workers of controller ctl with short timers; cfg tweaks
 * by fn. */
static struct h *
h_new_ctl(int n, void (*tweak)(struct wk_config *), const char *binary,
        const char *ctl)
{
	struct wk_callbacks cb
	        = { cb_result, NULL, cb_lost, cb_idle, cb_released };
	struct wk_config cfg;
	struct h *h = xcalloc(1, sizeof(*h));
	char err[256];
	sigset_t set;

	snprintf(h->dir, sizeof(h->dir), "/tmp/wk-test.XXXXXX");
	assert_non_null(mkdtemp(h->dir));
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	h->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	assert_true(h->sfd >= 0);
	wk_config_default(&cfg);
	cfg.binary = binary != NULL ? binary : worker_bin();
	cfg.runtime_dir = h->dir;
	cfg.handshake_ms = 5000;
	cfg.shutdown_grace_ms = 3000;
	cfg.kill_after_ms = 1000;
	if (tweak != NULL) {
		tweak(&cfg);
	}
	h->p = wk_pool_new(&cfg, &cb, h);
	h->ctl = ctl;
	assert_int_equal(wk_add_controller(h->p, ctl, n, err, sizeof(err)), 0);
	assert_int_equal(wk_start(h->p, timefmt_now_ms_mono()), 0);
	return (h);
}

/* A pool of n testctl workers. */
static struct h *
h_new(int n, void (*tweak)(struct wk_config *), const char *binary)
{
	return (h_new_ctl(n, tweak, binary, CTL));
}

/* One turn of the loop: poll up to 50 ms, then reap, read and tick. */
static void
turn(struct h *h)
{
	struct pollfd pfd[MAX_SLOTS + 1];
	struct signalfd_siginfo si;
	int64_t now = timefmt_now_ms_mono(), next;
	size_t n;
	int tmo = 50;

	pfd[0].fd = h->sfd;
	pfd[0].events = POLLIN;
	n = 1 + wk_fds(h->p, pfd + 1, MAX_SLOTS);
	next = wk_next_deadline(h->p, now);
	if (next >= 0 && next - now < tmo) {
		tmo = (int)(next - now);
	}
	(void)poll(pfd, n, tmo);
	while (read(h->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) { }
	now = timefmt_now_ms_mono();
	wk_reap(h->p, now);
	wk_handle_io(h->p, now);
	wk_tick(h->p, now);
}

static void
collect(const struct wk_info *in, void *arg)
{
	struct h *h = arg;

	if (h->nslots < MAX_SLOTS) {
		h->slots[h->nslots] = *in;
		snprintf(h->causes[h->nslots], sizeof(h->causes[0]), "%s",
		        in->last_cause);
		h->slots[h->nslots].last_cause = h->causes[h->nslots];
		h->slots[h->nslots].key = NULL;
		h->nslots++;
	}
}

static void
snapshot(struct h *h)
{
	h->nslots = 0;
	wk_foreach(h->p, timefmt_now_ms_mono(), collect, h);
}

/* Runs the loop until cond(h) or WAIT_MS; returns cond's final value. */
static bool
run_until(struct h *h, bool (*cond)(struct h *), int64_t max_ms)
{
	int64_t end = timefmt_now_ms_mono() + max_ms;

	while (!cond(h)) {
		if (timefmt_now_ms_mono() > end) {
			return (false);
		}
		turn(h);
	}
	return (true);
}

static bool
all_idle(struct h *h)
{
	int i;

	snapshot(h);
	for (i = 0; i < h->nslots; i++) {
		if (h->slots[i].state != WK_READY) {
			return (false);
		}
	}
	return (h->nslots > 0);
}

static bool
any_idle(struct h *h)
{
	return (wk_idle(h->p, CTL) > 0);
}

static bool
pool_done(struct h *h)
{
	return (wk_done(h->p));
}

static int g_want;

static bool
results_reached(struct h *h)
{
	return (h->results >= g_want);
}

static bool
lost_reached(struct h *h)
{
	return (h->nlost >= g_want);
}

static void
h_free(struct h *h)
{
	char path[128];
	int i;

	if (!wk_done(h->p)) {
		wk_shutdown(h->p, timefmt_now_ms_mono());
		assert_true(run_until(h, pool_done, WAIT_MS));
	}
	wk_free(h->p);
	for (i = 0; i < h->nlost; i++) {
		free(h->lost[i].key);
		free(h->lost[i].cause);
	}
	close(h->sfd);
	/* the pool unlinks each process's socket file (a path per
	 * process, supervisor/workers.c spawn()): none is left */
	snprintf(path, sizeof(path), "%s/%s-0.1.sock", h->dir, h->ctl);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/pids", h->dir);
	(void)unlink(path);
	snprintf(path, sizeof(path), "%s/wrap.sh", h->dir);
	(void)unlink(path);
	(void)rmdir(h->dir);
	free(h);
}

/* Dispatches name (key default/name) with action once a worker is idle. */
static void
dispatch(struct h *h, const char *name, const char *action)
{
	struct ipc_work w = { 0 };
	char key[128], obj[512];

	assert_true(run_until(h, any_idle, WAIT_MS));
	snprintf(key, sizeof(key), "default/%s", name);
	snprintf(obj, sizeof(obj),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	        "{\"name\":\"%s\",\"namespace\":\"default\",\"annotations\":"
	        "{\"" ACTION "\":\"%s\"}}}",
	        name, action);
	w.key = key;
	w.now_ms = 1;
	w.object = json_tokener_parse(obj);
	assert_non_null(w.object);
	assert_int_equal(wk_dispatch(h->p, CTL, key, ipc_work_new(&w),
	                         timefmt_now_ms_mono()),
	        0);
}

static pid_t
busy_pid(struct h *h)
{
	int i;

	snapshot(h);
	for (i = 0; i < h->nslots; i++) {
		if (h->slots[i].state == WK_BUSY) {
			return (h->slots[i].pid);
		}
	}
	fail_msg("no busy worker");
	return (-1);
}

/* ---- tests ---- */

static void
test_handshake_ready(void **state)
{
	struct h *h = h_new(2, NULL, NULL);
	int i;

	(void)state;
	assert_true(run_until(h, all_idle, WAIT_MS));
	assert_int_equal(h->nslots, 2);
	assert_int_equal(wk_idle(h->p, CTL), 2);
	assert_int_equal(h->idles, 2);
	for (i = 0; i < 2; i++) {
		assert_true(h->slots[i].pid > 0);
		assert_int_equal(h->slots[i].index, i);
		assert_true(h->slots[i].ready_ms >= 0);
		assert_int_equal(h->slots[i].restarts, 0);
	}
	h_free(h);
}

static void
test_dispatch_result(void **state)
{
	struct h *h = h_new(1, NULL, NULL);

	(void)state;
	dispatch(h, "a", "ok");
	assert_int_equal(wk_idle(h->p, CTL), 0);
	assert_int_equal(
	        wk_dispatch(h->p, CTL, "default/b", json_object_new_object(),
	                timefmt_now_ms_mono()),
	        -1);
	g_want = 1;
	assert_true(run_until(h, results_reached, WAIT_MS));
	assert_string_equal(h->last_key, "default/a");
	assert_int_equal(h->last_verdict, IPC_V_DONE);
	dispatch(h, "b", "error");
	g_want = 2;
	assert_true(run_until(h, results_reached, WAIT_MS));
	assert_string_equal(h->last_key, "default/b");
	assert_int_equal(h->last_verdict, IPC_V_ERROR);
	assert_true(run_until(h, all_idle, WAIT_MS));
	assert_int_equal(h->slots[0].reconciles_ok, 2);
	assert_int_equal(h->nlost, 0);
	h_free(h);
}

static void
test_sigkill_busy(void **state)
{
	struct h *h = h_new(1, NULL, NULL);
	int64_t t0;
	pid_t pid;

	(void)state;
	dispatch(h, "victim", "sleep:20000");
	pid = busy_pid(h);
	assert_int_equal(kill(pid, SIGKILL), 0);
	t0 = timefmt_now_ms_mono();
	g_want = 1;
	assert_true(run_until(h, lost_reached, WAIT_MS));
	assert_string_equal(h->lost[0].key, "default/victim");
	assert_string_equal(h->lost[0].cause, "signal SIGKILL");
	assert_false(h->lost[0].quarantined);
	assert_true(run_until(h, all_idle, WAIT_MS));
	assert_true(timefmt_now_ms_mono() - t0 < 3000);
	assert_int_not_equal(h->slots[0].pid, pid);
	assert_int_equal(h->slots[0].restarts, 1);
	assert_string_equal(h->slots[0].last_cause, "signal SIGKILL");
	dispatch(h, "after", "ok");
	g_want = 1;
	assert_true(run_until(h, results_reached, WAIT_MS));
	assert_string_equal(h->last_key, "default/after");
	h_free(h);
}

static void
short_deadline(struct wk_config *c)
{
	c->reconcile_ms = 300;
}

static void
test_hung_deadline(void **state)
{
	struct h *h = h_new(1, short_deadline, NULL);
	int64_t t0;

	(void)state;
	dispatch(h, "stuck", "hang");
	t0 = timefmt_now_ms_mono();
	g_want = 1;
	assert_true(run_until(h, lost_reached, WAIT_MS));
	assert_true(timefmt_now_ms_mono() - t0 >= 250);
	assert_string_equal(h->lost[0].key, "default/stuck");
	assert_string_equal(h->lost[0].cause, "reconcile deadline 300 ms");
	assert_true(run_until(h, all_idle, WAIT_MS));
	assert_string_equal(
	        h->slots[0].last_cause, "reconcile deadline 300 ms");
	h_free(h);
}

static void
test_poison_quarantined(void **state)
{
	struct h *h = h_new(1, NULL, NULL);
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		dispatch(h, "poison", "segv");
		g_want = i + 1;
		assert_true(run_until(h, lost_reached, WAIT_MS));
		assert_string_equal(h->lost[i].key, "default/poison");
		/* SIGSEGV, or exit 1 when ASan catches it */
		assert_true(strcmp(h->lost[i].cause, "signal SIGSEGV") == 0
		        || strncmp(h->lost[i].cause, "exit ", 5) == 0);
		assert_int_equal(h->lost[i].quarantined, i == 2);
	}
	assert_int_equal(quarantine_count(wk_quarantine(h->p, CTL)), 1);
	assert_true(
	        quarantine_until(wk_quarantine(h->p, CTL), "default/poison")
	        > timefmt_now_ms_mono());
	/* the controller keeps working on other keys */
	dispatch(h, "fine", "ok");
	g_want = 1;
	assert_true(run_until(h, results_reached, WAIT_MS));
	assert_string_equal(h->last_key, "default/fine");
	snapshot(h);
	assert_int_equal(h->slots[0].restarts, 3);
	assert_int_equal(h->slots[0].quarantined, 1);
	assert_int_equal(h->slots[0].reconciles_lost, 3);
	h_free(h);
}

/* ---- controller faults and permanent exits ---- */

/* Degraded recovers quickly here, and a slot's own backoff and
 * CrashLoop end once it ran 200 ms. */
static void
fast_recovery(struct wk_config *c)
{
	c->fault.recover_ms = 300;
	c->restart.stable_ms = 200;
}

static enum fault_state
ctl_fault(struct h *h, struct fault_info *fi)
{
	assert_int_equal(wk_fault_info(h->p, h->ctl, fi), 0);
	return (fi->state);
}

static bool
fault_ok(struct h *h)
{
	struct fault_info fi;

	return (ctl_fault(h, &fi) == FAULT_OK);
}

/* Dispatches name with action and waits for its loss. */
static void
die_on(struct h *h, const char *name, const char *action)
{
	dispatch(h, name, action);
	g_want = h->nlost + 1;
	assert_true(run_until(h, lost_reached, WAIT_MS));
}

/* One poison key among keys that succeed: quarantined, the controller is
 * fine.  The same number of deaths on different keys with no success
 * between: a controller fault, and the key quarantined during that streak
 * is released. */
static void
test_poison_versus_fault(void **state)
{
	struct h *h = h_new(1, fast_recovery, NULL);
	struct fault_info fi;

	(void)state;
	for (int i = 0; i < 3; i++) {
		char ok[16];
		die_on(h, "p", "exit:3");
		snprintf(ok, sizeof(ok), "ok-%d", i);
		dispatch(h, ok, "ok");
		g_want = i + 1;
		assert_true(run_until(h, results_reached, WAIT_MS));
	}
	assert_true(h->lost[2].quarantined);
	assert_int_equal(ctl_fault(h, &fi), FAULT_OK);
	assert_int_equal(quarantine_count(wk_quarantine(h->p, CTL)), 1);
	/* p dies twice more (a streak of one key: still no fault), then two
	 * other keys: three different keys without a RESULT */
	die_on(h, "p", "exit:3");
	assert_true(h->lost[h->nlost - 1].quarantined);
	assert_int_equal(ctl_fault(h, &fi), FAULT_OK);
	die_on(h, "q", "exit:3");
	assert_false(h->lost[h->nlost - 1].quarantined);
	assert_int_equal(ctl_fault(h, &fi), FAULT_OK);
	die_on(h, "r", "exit:3");
	assert_false(h->lost[h->nlost - 1].quarantined);
	assert_int_equal(ctl_fault(h, &fi), FAULT_DEGRADED);
	assert_string_equal(fi.reason,
	        "workers died on 3 different keys in a row (last: exit 3 on "
	        "default/r)");
	assert_int_equal(fi.faults, 1);
	/* p was no poison after all: released, nothing quarantined */
	assert_int_equal(h->nreleased, 1);
	assert_string_equal(h->released[0], "default/p");
	assert_int_equal(quarantine_count(wk_quarantine(h->p, CTL)), 0);
	/* while Degraded, deaths quarantine nothing, and restarts back off */
	int64_t t0 = timefmt_now_ms_mono();
	for (int i = 0; i < 3; i++) {
		die_on(h, "r", "exit:3");
		assert_false(h->lost[h->nlost - 1].quarantined);
	}
	assert_int_equal(quarantine_count(wk_quarantine(h->p, CTL)), 0);
	/* the backoff: 500 ms + 1 s + 2 s at least before the next start */
	assert_true(run_until(h, any_idle, WAIT_MS));
	assert_true(timefmt_now_ms_mono() - t0 >= 3500);
	/* a worker that does its work and stays up: recovered */
	dispatch(h, "fine", "ok");
	g_want = h->results + 1;
	assert_true(run_until(h, results_reached, WAIT_MS));
	assert_true(run_until(h, fault_ok, WAIT_MS));
	/* quarantine applies again */
	for (int i = 0; i < 3; i++) {
		die_on(h, "p2", "exit:3");
	}
	assert_true(h->lost[h->nlost - 1].quarantined);
	assert_int_equal(ctl_fault(h, &fi), FAULT_OK);
	h_free(h);
}

static bool
slot_failed(struct h *h)
{
	snapshot(h);
	return (h->nslots > 0 && h->slots[0].state == WK_FAILED);
}

/* Runs the loop for ms whatever happens. */
static void
run_for(struct h *h, int64_t ms)
{
	int64_t end = timefmt_now_ms_mono() + ms;

	while (timefmt_now_ms_mono() < end) {
		turn(h);
	}
}

/* A worker exiting 100 is not restarted; its controller is failed until
 * wk_restart(). */
static void
test_permanent_exit(void **state)
{
	struct h *h = h_new(1, NULL, NULL);
	struct fault_info fi;

	(void)state;
	die_on(h, "cfg", "exit:100");
	assert_string_equal(h->lost[0].cause, "exit 100 (permanent failure)");
	assert_true(run_until(h, slot_failed, WAIT_MS));
	run_for(h, 1000);
	snapshot(h);
	assert_int_equal(h->slots[0].state, WK_FAILED);
	assert_int_equal(h->slots[0].pid, 0);
	assert_int_equal(h->slots[0].restarts, 1);
	assert_string_equal(
	        h->slots[0].last_cause, "exit 100 (permanent failure)");
	assert_string_equal(wk_state_name(WK_FAILED), "failed");
	assert_int_equal(ctl_fault(h, &fi), FAULT_FAILED);
	assert_string_equal(fi.reason, "exit 100 (permanent failure)");
	assert_int_equal(wk_idle(h->p, CTL), 0);
	/* the operator's restart starts it again */
	assert_int_equal(wk_restart(h->p, CTL, 0, "restarted by test",
	                         timefmt_now_ms_mono()),
	        0);
	assert_int_equal(ctl_fault(h, &fi), FAULT_OK);
	assert_true(run_until(h, all_idle, WAIT_MS));
	dispatch(h, "after", "ok");
	g_want = 1;
	assert_true(run_until(h, results_reached, WAIT_MS));
	h_free(h);
}

/* The worker binary asked for a controller it does not have exits 100
 * and says why in an ERROR: the reason reaches the exit cause. */
static void
test_unknown_controller_permanent(void **state)
{
	const char *bin = worker_bin();
	struct h *h;
	struct fault_info fi;

	(void)state;
	if (strcmp(bin, self_exe) == 0) {
		skip(); /* the fake worker knows every name */
	}
	h = h_new_ctl(1, NULL, bin, "nosuch");
	assert_true(run_until(h, slot_failed, WAIT_MS));
	assert_string_equal(h->slots[0].last_cause,
	        "exit 100 (permanent failure: unknown controller "
	        "\"nosuch\")");
	run_for(h, 1000);
	snapshot(h);
	assert_int_equal(h->slots[0].restarts, 1);
	assert_int_equal(ctl_fault(h, &fi), FAULT_FAILED);
	h_free(h);
}

/* Bad flags are a permanent failure too. */
static void
test_bad_flags_exit_100(void **state)
{
	const char *bin = worker_bin();
	int st;
	pid_t pid;

	(void)state;
	if (strcmp(bin, self_exe) == 0) {
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		execl(bin, bin, "--no-such-flag", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), IPC_EXIT_PERMANENT);
}

static void
test_malformed_isolated(void **state)
{
	struct h *h = h_new(2, NULL, NULL);
	pid_t good;

	(void)state;
	assert_true(run_until(h, all_idle, WAIT_MS));
	dispatch(h, "slow", "sleep:500");
	good = busy_pid(h);
	dispatch(h, "bad", "malformed");
	g_want = 1;
	assert_true(run_until(h, lost_reached, WAIT_MS));
	assert_string_equal(h->lost[0].key, "default/bad");
	assert_memory_equal(h->lost[0].cause, "malformed message: ", 19);
	assert_true(run_until(h, results_reached, WAIT_MS));
	assert_string_equal(h->last_key, "default/slow");
	assert_true(run_until(h, all_idle, WAIT_MS));
	assert_int_equal(h->slots[0].pid, good);
	assert_int_equal(h->slots[0].restarts, 0);
	assert_int_equal(h->slots[1].restarts, 1);
	h_free(h);
}

static void
short_heartbeat(struct wk_config *c)
{
	c->hb_interval_ms = 100;
	c->hb_timeout_ms = 200;
}

static bool
restarted_ready(struct h *h)
{
	return (all_idle(h) && h->slots[0].restarts >= 1);
}

static void
test_heartbeat_timeout(void **state)
{
	struct h *h = h_new(1, short_heartbeat, NULL);
	pid_t pid;

	(void)state;
	assert_true(run_until(h, all_idle, WAIT_MS));
	/* a few heartbeats pass while the worker answers */
	assert_false(run_until(h, restarted_ready, 500));
	pid = h->slots[0].pid;
	assert_true(h->slots[0].hb_age_ms >= 0 && h->slots[0].hb_age_ms < 400);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	assert_true(run_until(h, restarted_ready, WAIT_MS));
	assert_int_not_equal(h->slots[0].pid, pid);
	assert_string_equal(
	        h->slots[0].last_cause, "heartbeat timeout 200 ms");
	assert_int_equal(h->nlost, 0);
	h_free(h);
}

static void
test_shutdown_quit(void **state)
{
	struct h *h = h_new(3, NULL, NULL);
	int64_t t0;
	int i;

	(void)state;
	assert_true(run_until(h, all_idle, WAIT_MS));
	t0 = timefmt_now_ms_mono();
	wk_shutdown(h->p, t0);
	assert_int_equal(wk_idle(h->p, CTL), 0);
	assert_int_equal(wk_dispatch(h->p, CTL, "default/x",
	                         json_object_new_object(), t0),
	        -1);
	assert_true(run_until(h, pool_done, WAIT_MS));
	/* QUIT did it, well before the 3 s grace ended in SIGTERM */
	assert_true(timefmt_now_ms_mono() - t0 < 2500);
	snapshot(h);
	for (i = 0; i < 3; i++) {
		assert_int_equal(h->slots[i].state, WK_STOPPED);
		assert_int_equal(h->slots[i].pid, 0);
	}
	h_free(h);
}

static bool
mismatch_seen(struct h *h)
{
	snapshot(h);
	return (strstr(h->slots[0].last_cause, "peer pid mismatch") != NULL);
}

/* The binary is a shell script that runs the worker as its own child, so
 * the process that connects is not the one the pool forked: the pool kills
 * it; the grandchildren (recorded by the script) are killed by pid. */
static void
test_peer_pid_mismatch(void **state)
{
	char dir[64] = "/tmp/wk-wrap.XXXXXX", wrap[128], pids[128];
	char line[64];
	struct h *h;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(wrap, sizeof(wrap), "%s/wrap.sh", dir);
	snprintf(pids, sizeof(pids), "%s/pids", dir);
	f = fopen(wrap, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n'%s' \"$@\" &\necho $! >>'%s'\nwait\n",
	        worker_bin(), pids);
	fclose(f);
	assert_int_equal(chmod(wrap, 0700), 0);
	h = h_new(1, NULL, wrap);
	assert_true(run_until(h, mismatch_seen, WAIT_MS));
	assert_int_equal(h->idles, 0);
	h_free(h);
	f = fopen(pids, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (atoi(line) > 1) {
			(void)kill((pid_t)atoi(line), SIGKILL);
		}
	}
	fclose(f);
	(void)unlink(pids);
	(void)unlink(wrap);
	(void)rmdir(dir);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_ready),
		cmocka_unit_test(test_dispatch_result),
		cmocka_unit_test(test_sigkill_busy),
		cmocka_unit_test(test_hung_deadline),
		cmocka_unit_test(test_poison_quarantined),
		cmocka_unit_test(test_poison_versus_fault),
		cmocka_unit_test(test_permanent_exit),
		cmocka_unit_test(test_unknown_controller_permanent),
		cmocka_unit_test(test_bad_flags_exit_100),
		cmocka_unit_test(test_malformed_isolated),
		cmocka_unit_test(test_heartbeat_timeout),
		cmocka_unit_test(test_shutdown_quit),
		cmocka_unit_test(test_peer_pid_mismatch),
	};
	sigset_t set;
	ssize_t n;

	if (argc > 1 && strcmp(argv[1], "--controller") == 0) {
		return (fake_worker(argc, argv));
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0) {
		return (1);
	}
	self_exe[n] = '\0';
	/* before any nng thread exists, so every thread blocks it */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
