/*
 * test_health.c: the supervisor's health socket and bin/sympoziumctl end
 * to end (issue 6): bin/sympoziumd with the test controller "testctl" of
 * bin/tests/sympozium-worker-test against bin/kubesim.  Every command of
 * sympoziumctl (status, workers, worker, restart, pause, resume, --json,
 * --watch, --socket and the environment), its errors (no socket, unknown
 * worker, bad usage), garbage and oversized requests on the raw socket,
 * answers within a bound while a worker is hung, SIGSTOPped and
 * crash-looping with the states reported right, and the refusal of a peer
 * with another uid.
 *
 * Each test starts its own kubesim and supervisor in a fresh temporary
 * directory.  Every wait is bounded.  Processes are only signalled by the
 * pids this test started or found as their children in /proc.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "ctl/ctl.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"

#define WAIT_MS 15000
/* An answer while a worker misbehaves: well under a second even under
 * the sanitizers (it takes a few ms). */
#define ANSWER_MS 500

/* ---- processes ---- */

static bool wait_state(struct optest *f, const char *state, int ms);

/* Waits up to ms for needle in the supervisor's log. */
static bool
log_wait(struct optest *f, const char *needle, int ms)
{
	return (sdproc_log_wait(&f->sd[0], needle, 1, ms));
}

/* Starts the supervisor with testctl and the health socket, leading and
 * its worker ready. */
static void
sd_start(struct optest *f)
{
	const char *args[] = { "--health-socket", f->sock, "--shutdown-grace",
		"1s", NULL };

	optest_sd_start(f, 0, OPTEST_SD_TESTCTL, args);
	assert_true(log_wait(f, "leading (epoch", WAIT_MS));
	/* a worker in its handshake at SIGTERM trips a known leak of a
	 * queued nng message (see docs-health.md): start from ready */
	assert_true(wait_state(f, "ready", WAIT_MS));
}

/* ---- the health socket ---- */

/* One request through ctl_call() (the client module, in process);
 * asserts an answer within ANSWER_MS.  Returns the reply (caller puts),
 * NULL on an error reply. */
static json_object *
ask(struct optest *f, enum hp_cmd cmd, const char *name)
{
	struct hp_req req = { .cmd = cmd };
	json_object *reply = NULL;
	char err[512];
	int64_t t0 = ksim_now_ms();
	int rc;

	snprintf(req.name, sizeof(req.name), "%s", name != NULL ? name : "");
	rc = ctl_call(f->sock, &req, 5000, &reply, NULL, err, sizeof(err));
	int64_t dt = ksim_now_ms() - t0;
	if (dt > ANSWER_MS) {
		print_error("%s answered in %lld ms\n", hp_cmd_name(cmd),
		        (long long)dt);
	}
	assert_true(dt <= ANSWER_MS);
	assert_int_not_equal(rc, CTL_EXIT_CONNECT);
	return (rc == CTL_EXIT_OK ? reply : NULL);
}

/* testctl-0's row, from the "worker" command (caller puts). */
static json_object *
worker0(struct optest *f)
{
	json_object *r = ask(f, HP_WORKER, "testctl-0");
	json_object *w;

	assert_non_null(r);
	w = json_object_get(jx_get(r, "worker"));
	json_object_put(r);
	return (w);
}

static bool
wait_state(struct optest *f, const char *state, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	do {
		json_object *w = worker0(f);
		bool ok = strcmp(jx_get_str(w, "state"), state) == 0;
		json_object_put(w);
		if (ok) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

static int64_t
wnum(json_object *o, const char *path)
{
	int64_t v = -12345;

	(void)jx_get_int(o, path, &v);
	return (v);
}

/* Runs sympoziumctl cmd [arg] until its output shows testctl-0 ready
 * (a resync can make the worker busy between two commands), bounded by
 * WAIT_MS; returns the last run (caller frees). */
static struct sdproc_ctl
ctl_status_ready(struct optest *f, const char *cmd, const char *arg)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	struct sdproc_ctl r;

	for (;;) {
		r = sdproc_ctl_run(
		        f->dir, NULL, "--socket", f->sock, cmd, arg, NULL);
		if ((r.rc == 0 && strstr(r.out, "ready") != NULL)
		        || ksim_now_ms() >= end) {
			return (r);
		}
		sdproc_ctl_free(&r);
		ksim_sleep_ms(50);
	}
}

/* Sends len bytes of data on a fresh connection and reads the reply until
 * the server closes (bounded).  Caller frees. */
static char *
raw_exchange(const char *path, const char *data, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 5, 0 };
	struct buf b = BUF_INIT;
	char chunk[4096];
	ssize_t r;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	(void)!send(fd, data, len, MSG_NOSIGNAL);
	while ((r = recv(fd, chunk, sizeof(chunk), 0)) > 0) {
		buf_append(&b, chunk, (size_t)r);
	}
	close(fd);
	buf_putc(&b, '\0');
	return (buf_detach(&b, NULL));
}

/* ---- 1: every command, the errors, the protocol's bounds ---- */

static void
test_commands(void **state)
{
	struct optest *f = *state;
	struct sdproc_ctl r;
	struct stat sb;
	json_object *o, *w;
	char *reply, big[10000];

	sd_start(f);
	assert_int_equal(stat(f->sock, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_true(wait_state(f, "ready", WAIT_MS));
	optest_testctl_create(f, "a", true, NULL);
	assert_true(optest_testctl_wait_out(f, "a", WAIT_MS, NULL));
	/* the worker may still be busy with the event its own write made */
	assert_true(wait_state(f, "ready", WAIT_MS));

	/* status: one screen, text and JSON */
	r = ctl_status_ready(f, "status", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "supervisor  pid"));
	assert_non_null(strstr(r.out, "leader (epoch 1)"));
	assert_non_null(strstr(r.out, "CONTROLLER"));
	assert_non_null(strstr(r.out, "testctl-0"));
	assert_non_null(strstr(r.out, "ready"));
	sdproc_ctl_free(&r);
	r = sdproc_ctl_run(
	        f->dir, f->sock, "status", "--json", NULL); /* env socket */
	assert_int_equal(r.rc, 0);
	o = jx_parse(r.out, strlen(r.out), 0, NULL, 0);
	assert_non_null(o);
	assert_string_equal(jx_get_str(o, "supervisor.role"), "leader");
	assert_string_equal(jx_get_str(o, "controllers.0.name"), "testctl");
	assert_true(wnum(o, "supervisor.api.total") > 0);
	assert_true(wnum(o, "controllers.0.reconciles.success") >= 1);
	assert_true(wnum(o, "kinds.0.objects") >= 1);
	json_object_put(o);
	sdproc_ctl_free(&r);

	/* workers and worker */
	r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock, "workers", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "WORKER"));
	assert_non_null(strstr(r.out, "testctl-0"));
	sdproc_ctl_free(&r);
	r = ctl_status_ready(f, "worker", "testctl-0");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "state       ready"));
	sdproc_ctl_free(&r);
	w = worker0(f);
	assert_true(wnum(w, "reconciles.success") >= 1);
	assert_true(wnum(w, "latencyMs.count") >= 1);
	assert_true(wnum(w, "pid") > 0);
	assert_int_equal(
	        json_object_array_length(jx_get(w, "latencyMs.buckets")), 40);
	pid_t pid0 = (pid_t)wnum(w, "pid");
	json_object_put(w);

	/* errors: unknown worker (1), usage (2), no socket (3) */
	r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "worker", "nope-3", NULL);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "no worker \"nope-3\""));
	sdproc_ctl_free(&r);
	r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "frobnicate", NULL);
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "unknown command"));
	sdproc_ctl_free(&r);
	r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock, "restart", NULL);
	assert_int_equal(r.rc, 2);
	sdproc_ctl_free(&r);
	r = sdproc_ctl_run(f->dir, NULL, "--socket", "/nonexistent/h.sock",
	        "status", NULL);
	assert_int_equal(r.rc, 3);
	assert_non_null(strstr(r.err, "cannot connect"));
	sdproc_ctl_free(&r);

	/* pause: keys accumulate; resume: they run */
	r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "pause", "testctl", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "testctl paused"));
	sdproc_ctl_free(&r);
	optest_testctl_create(f, "p1", true, NULL);
	optest_testctl_create(f, "p2", true, NULL);
	ksim_sleep_ms(800);
	assert_false(optest_testctl_has_out(f, "p1"));
	o = ask(f, HP_STATUS, NULL);
	assert_true(
	        json_object_get_boolean(jx_get(o, "controllers.0.paused")));
	assert_int_equal(wnum(o, "controllers.0.depth"), 2);
	json_object_put(o);
	r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock, "status", NULL);
	assert_non_null(strstr(r.out, "paused"));
	sdproc_ctl_free(&r);
	r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "resume", "testctl", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "testctl resumed"));
	sdproc_ctl_free(&r);
	assert_true(optest_testctl_wait_out(f, "p1", WAIT_MS, NULL));
	assert_true(optest_testctl_wait_out(f, "p2", WAIT_MS, NULL));
	r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "pause", "nope", NULL);
	assert_int_equal(r.rc, 1);
	sdproc_ctl_free(&r);

	/* restart: a new process, one more restart counted */
	r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock, "restart",
	        "testctl-0", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "restarted testctl-0"));
	sdproc_ctl_free(&r);
	assert_true(log_wait(f, "restarted by sympoziumctl", 5000));
	assert_true(wait_state(f, "ready", WAIT_MS));
	w = worker0(f);
	assert_int_not_equal((pid_t)wnum(w, "pid"), pid0);
	assert_int_equal(wnum(w, "restarts"), 1);
	assert_string_equal(
	        jx_get_str(w, "lastExit"), "restarted by sympoziumctl");
	json_object_put(w);
	assert_false(sdproc_alive(pid0));

	/* --watch: refreshes (two screens with --count 2) */
	r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock, "--watch", "0.2",
	        "--count", "2", "workers", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(strstr(r.out, "WORKER") + 1, "WORKER"));
	sdproc_ctl_free(&r);

	/* the raw protocol: garbage, bad command, oversized; still serving */
	reply = raw_exchange(f->sock, "hello\n", 6);
	assert_non_null(strstr(reply, "\"ok\":false"));
	assert_non_null(strstr(reply, "bad request"));
	free(reply);
	reply = raw_exchange(f->sock, "{\"cmd\":\"rm -rf\"}\n", 17);
	assert_non_null(strstr(reply, "\"ok\":false"));
	free(reply);
	memset(big, 'x', sizeof(big));
	reply = raw_exchange(f->sock, big, sizeof(big));
	assert_non_null(strstr(reply, "\"ok\":false"));
	assert_non_null(strstr(reply, "longer than"));
	free(reply);
	reply = raw_exchange(f->sock, "{\"cmd\":\"status\"}\n", 17);
	assert_non_null(strstr(reply, "\"ok\":true"));
	free(reply);
	o = ask(f, HP_STATUS, NULL);
	assert_non_null(o);
	json_object_put(o);
}

/* ---- 2: a hung worker, then SIGSTOPped ---- */

static void
test_hung_and_stopped(void **state)
{
	struct optest *f = *state;
	json_object *w;
	struct sdproc_ctl r;

	sd_start(f);
	assert_true(wait_state(f, "ready", WAIT_MS));
	optest_testctl_create(f, "stuck", true, "hang");
	assert_true(wait_state(f, "busy", WAIT_MS));
	w = worker0(f);
	assert_string_equal(jx_get_str(w, "key"), "default/stuck");
	pid_t pid = (pid_t)wnum(w, "pid");
	json_object_put(w);
	ksim_sleep_ms(300);
	w = worker0(f);
	assert_true(wnum(w, "keyAgeMs") >= 300);
	json_object_put(w);
	/* SIGSTOPped in the middle of its hang: answers stay immediate */
	assert_int_equal(kill(pid, SIGSTOP), 0);
	for (int i = 0; i < 10; i++) {
		json_object *o = ask(f, HP_STATUS, NULL);
		assert_string_equal(jx_get_str(o, "workers.0.state"), "busy");
		json_object_put(o);
		ksim_sleep_ms(50);
	}
	r = sdproc_ctl_run(f->dir, NULL, "--socket", f->sock, "status", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "default/stuck"));
	print_message("sympoziumctl status with a stopped worker: %lld ms\n",
	        (long long)r.ms);
	sdproc_ctl_free(&r);
	/* restart kills the stopped process; the key runs (and hangs) again */
	w = ask(f, HP_RESTART, "testctl");
	assert_non_null(w);
	assert_string_equal(jx_get_str(w, "restarted.0"), "testctl-0");
	json_object_put(w);
	int64_t end = ksim_now_ms() + WAIT_MS;
	pid_t now = pid;
	while (ksim_now_ms() < end && (now == pid || now <= 0)) {
		w = worker0(f);
		now = (pid_t)wnum(w, "pid");
		json_object_put(w);
		ksim_sleep_ms(20);
	}
	assert_int_not_equal(now, pid);
	assert_true(wait_state(f, "busy", WAIT_MS));
	w = worker0(f);
	assert_int_equal(wnum(w, "lost"), 1);
	assert_string_equal(
	        jx_get_str(w, "lastExit"), "restarted by sympoziumctl");
	json_object_put(w);
	(void)sdproc_workers(&f->sd[0], NULL, 0);
}

/* ---- 3: a crash-looping worker ---- */

static void
test_crash_loop(void **state)
{
	struct optest *f = *state;
	json_object *w, *o;

	sd_start(f);
	assert_true(wait_state(f, "ready", WAIT_MS));
	optest_testctl_create(f, "boom-a", true, "exit:3");
	optest_testctl_create(f, "boom-b", true, "exit:3");
	optest_testctl_create(f, "boom-c", true, "exit:3");
	/* six exits in a row: 0 + 100 + 200 + 400 + 800 ms of backoff */
	assert_true(wait_state(f, "crash-loop", WAIT_MS));
	(void)sdproc_workers(&f->sd[0], NULL, 0);
	w = worker0(f);
	assert_string_equal(jx_get_str(w, "lastExit"), "exit 3");
	assert_true(wnum(w, "restarts") >= 6);
	assert_int_equal(wnum(w, "pid"), 0);
	json_object_put(w);
	o = ask(f, HP_STATUS, NULL);
	assert_true(wnum(o, "controllers.0.reconciles.error") >= 6);
	assert_true(wnum(o, "controllers.0.quarantined") >= 0);
	json_object_put(o);
	struct sdproc_ctl r = sdproc_ctl_run(
	        f->dir, NULL, "--socket", f->sock, "workers", NULL);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "crash-loop"));
	assert_non_null(strstr(r.out, "exit 3"));
	sdproc_ctl_free(&r);
	/* restart ends the wait at once (no 30 s backoff) */
	w = ask(f, HP_RESTART, "testctl-0");
	assert_non_null(w);
	json_object_put(w);
	int64_t end = ksim_now_ms() + 5000;
	bool up = false;
	while (!up && ksim_now_ms() < end) {
		w = worker0(f);
		up = wnum(w, "pid") > 0;
		json_object_put(w);
		ksim_sleep_ms(20);
	}
	assert_true(up);
	(void)sdproc_workers(&f->sd[0], NULL, 0);
}

/* ---- 4: a peer with another uid is refused ---- */

static void
test_other_uid_refused(void **state)
{
	struct optest *f = *state;
	char out[160];
	int st;

	if (geteuid() != 0) {
		skip();
	}
	sd_start(f);
	/* open the file system's way in, so only SO_PEERCRED can refuse */
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(chmod(f->sock, 0666), 0);
	snprintf(out, sizeof(out), "%s/nobody.out", f->dir);
	const char *ctl = sdproc_ctl_binary();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0
		        || setgid(65534) != 0 || setuid(65534) != 0) {
			_exit(126);
		}
		execl(ctl, ctl, "--socket", f->sock, "status", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	char *t = sdproc_log_text(out);
	print_message("as uid 65534: %s", t);
	assert_non_null(strstr(t, "permission denied: uid 65534"));
	free(t);
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_true(log_wait(f, "health socket: refused pid", 5000));
	/* root (our uid) still gets answers */
	json_object *o = ask(f, HP_STATUS, NULL);
	assert_non_null(o);
	json_object_put(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commands,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_hung_and_stopped,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_crash_loop,
		        optest_testctl_setup, optest_testctl_teardown),
		cmocka_unit_test_setup_teardown(test_other_uid_refused,
		        optest_testctl_setup, optest_testctl_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
