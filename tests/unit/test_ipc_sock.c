/* test_ipc_sock.c: the nng transport: listen/dial in one process over a
 * socket file in a private temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "ipc/ipc_sock.h"

struct fixture {
	char dir[64];
	char path[96];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/test-ipc-XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		free(f);
		return (-1);
	}
	snprintf(f->path, sizeof(f->path), "%s/w.sock", f->dir);
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return (0);
}

/* Waits (up to 5 s) for fd to poll readable. */
static bool
readable(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return (poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN));
}

/* The supervisor's way: poll the fd, then a non-blocking receive. */
static enum ipc_sock_rc
sup_recv(struct ipc_sock *s, struct ipc_msg *m, char *err, size_t errlen)
{
	if (!readable(ipc_sock_fd(s), 5000)) {
		fail_msg("no message within 5 s");
	}
	return (ipc_sock_recv(s, m, err, errlen));
}

static void
pair(struct fixture *f, struct ipc_sock **sup, struct ipc_sock **wrk)
{
	char err[256] = "";
	struct stat st;

	*sup = ipc_sock_listen(f->path, 0, err, sizeof(err));
	if (*sup == NULL) {
		fail_msg("listen: %s", err);
	}
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	*wrk = ipc_sock_dial(f->path, 0, 2000, err, sizeof(err));
	if (*wrk == NULL) {
		fail_msg("dial: %s", err);
	}
}

static void
test_both_ways(void **state)
{
	struct fixture *f = *state;
	struct ipc_sock *sup, *wrk;
	struct ipc_msg m;
	struct ipc_hello h;
	int64_t seq;
	char err[256] = "";

	pair(f, &sup, &wrk);
	assert_int_equal(
	        ipc_sock_recv(sup, &m, err, sizeof(err)), IPC_SOCK_AGAIN);
	assert_null(m.body);
	assert_int_equal(ipc_sock_recv_wait(wrk, 20, &m, err, sizeof(err)),
	        IPC_SOCK_AGAIN);

	/* Worker -> supervisor. */
	json_object *o = ipc_hello_new("agentrun", getpid());
	assert_int_equal(ipc_sock_send(wrk, IPC_HELLO, 1, o), IPC_SOCK_OK);
	json_object_put(o);
	assert_int_equal(sup_recv(sup, &m, err, sizeof(err)), IPC_SOCK_OK);
	assert_int_equal(m.type, IPC_HELLO);
	assert_int_equal(m.reqid, 1);
	assert_int_equal(ipc_hello_read(&m, &h), 0);
	assert_string_equal(h.controller, "agentrun");
	ipc_msg_fini(&m);
	assert_int_equal(ipc_sock_peer_pid(sup), getpid());
	assert_int_equal(
	        ipc_sock_recv(sup, &m, err, sizeof(err)), IPC_SOCK_AGAIN);

	/* Supervisor -> worker, several in order. */
	for (seq = 0; seq < 5; seq++) {
		o = ipc_heartbeat_new(seq);
		assert_int_equal(
		        ipc_sock_send(sup, IPC_HEARTBEAT, (uint32_t)seq, o),
		        IPC_SOCK_OK);
		json_object_put(o);
	}
	assert_int_equal(ipc_sock_send(sup, IPC_QUIT, 9, NULL), IPC_SOCK_OK);
	for (seq = 0; seq < 5; seq++) {
		int64_t got = -1;

		assert_int_equal(
		        ipc_sock_recv_wait(wrk, 5000, &m, err, sizeof(err)),
		        IPC_SOCK_OK);
		assert_int_equal(ipc_heartbeat_read(&m, &got), 0);
		assert_int_equal(got, seq);
		ipc_msg_fini(&m);
	}
	assert_int_equal(ipc_sock_recv_wait(wrk, -1, &m, err, sizeof(err)),
	        IPC_SOCK_OK);
	assert_int_equal(m.type, IPC_QUIT);
	ipc_msg_fini(&m);
	assert_int_equal(ipc_sock_peer_pid(wrk), getpid());
	ipc_sock_close(wrk);
	ipc_sock_close(sup);
	ipc_sock_close(NULL);
}

static void
test_fd_poll(void **state)
{
	struct fixture *f = *state;
	struct ipc_sock *sup, *wrk;
	struct ipc_msg m;
	char err[256] = "";
	int fd;

	pair(f, &sup, &wrk);
	fd = ipc_sock_fd(sup);
	assert_true(fd >= 0);
	assert_int_equal(ipc_sock_fd(sup), fd);
	assert_false(readable(fd, 0));
	json_object *o = ipc_error_new("bye");
	assert_int_equal(ipc_sock_send(wrk, IPC_ERROR, 3, o), IPC_SOCK_OK);
	json_object_put(o);
	assert_true(readable(fd, 5000));
	assert_int_equal(
	        ipc_sock_recv(sup, &m, err, sizeof(err)), IPC_SOCK_OK);
	assert_string_equal(ipc_error_read(&m), "bye");
	ipc_msg_fini(&m);
	/* Drained: no longer readable. */
	assert_false(readable(fd, 0));
	ipc_sock_close(wrk);
	ipc_sock_close(sup);
}

/* A plain nng pair1 socket dialled to path, bypassing the encoder. */
static nng_socket
raw_dial(const char *path)
{
	nng_socket s;
	char url[128];

	snprintf(url, sizeof(url), "ipc://%s", path);
	assert_int_equal(nng_pair1_open(&s), 0);
	assert_int_equal(nng_dial(s, url, NULL, 0), 0);
	return (s);
}

static void
raw_send(nng_socket s, const void *p, size_t n)
{
	assert_int_equal(nng_send(s, (void *)(uintptr_t)p, n, 0), 0);
}

static void
test_malformed(void **state)
{
	struct fixture *f = *state;
	struct ipc_sock *sup;
	struct ipc_msg m;
	struct buf b = BUF_INIT;
	char err[256] = "";
	nng_socket raw;

	sup = ipc_sock_listen(f->path, 0, err, sizeof(err));
	assert_non_null(sup);
	raw = raw_dial(f->path);
	raw_send(raw, "hello, world, not ipc", 21);
	assert_int_equal(sup_recv(sup, &m, err, sizeof(err)), IPC_SOCK_ERR);
	assert_null(m.body);
	assert_string_equal(err, "bad magic 0x68656c6c");
	raw_send(raw, "SYMP", 4);
	assert_int_equal(sup_recv(sup, &m, err, sizeof(err)), IPC_SOCK_ERR);
	assert_string_equal(err, "truncated header (4 of 16 bytes)");
	/* A well-formed header over a body of the wrong shape. */
	json_object *o = json_object_new_object();
	assert_int_equal(ipc_encode(IPC_WORK, 1, o, &b), 0);
	json_object_put(o);
	raw_send(raw, b.data, b.len);
	assert_int_equal(sup_recv(sup, &m, err, sizeof(err)), IPC_SOCK_ERR);
	assert_string_equal(err, "WORK: \"key\" is missing");
	/* The socket still works afterwards. */
	buf_reset(&b);
	assert_int_equal(ipc_encode(IPC_QUIT, 2, NULL, &b), 0);
	raw_send(raw, b.data, b.len);
	assert_int_equal(sup_recv(sup, &m, err, sizeof(err)), IPC_SOCK_OK);
	assert_int_equal(m.type, IPC_QUIT);
	ipc_msg_fini(&m);
	buf_fini(&b);
	nng_close(raw);
	ipc_sock_close(sup);
}

static void
test_oversized_dropped(void **state)
{
	struct fixture *f = *state;
	struct ipc_sock *sup, *wrk;
	struct ipc_msg m;
	char err[256] = "", big[600];

	sup = ipc_sock_listen(f->path, 256, err, sizeof(err));
	assert_non_null(sup);
	wrk = ipc_sock_dial(f->path, 0, 2000, err, sizeof(err));
	assert_non_null(wrk);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_object *o = ipc_error_new(big);
	assert_int_equal(ipc_sock_send(wrk, IPC_ERROR, 1, o), IPC_SOCK_OK);
	json_object_put(o);
	/* nng refuses it (and drops the connection): nothing arrives. */
	assert_false(readable(ipc_sock_fd(sup), 200));
	assert_int_equal(
	        ipc_sock_recv(sup, &m, err, sizeof(err)), IPC_SOCK_AGAIN);
	ipc_sock_close(wrk);
	ipc_sock_close(sup);
}

static void
test_send_would_block(void **state)
{
	struct fixture *f = *state;
	struct ipc_sock *sup;
	char err[256] = "";
	int i, ok = 0;
	enum ipc_sock_rc rc = IPC_SOCK_OK;

	sup = ipc_sock_listen(f->path, 0, err, sizeof(err));
	assert_non_null(sup);
	assert_int_equal(ipc_sock_peer_pid(sup), -1);
	/* No peer: the queue fills, then sends report AGAIN at once. */
	for (i = 0; i < 1000 && rc == IPC_SOCK_OK; i++) {
		rc = ipc_sock_send(sup, IPC_QUIT, (uint32_t)i, NULL);
		ok += rc == IPC_SOCK_OK;
	}
	assert_int_equal(rc, IPC_SOCK_AGAIN);
	assert_true(ok < 1000);
	/* Bad bodies are errors, not AGAIN. */
	json_object *arr = json_object_new_array();
	assert_int_equal(ipc_sock_send(sup, IPC_QUIT, 1, arr), IPC_SOCK_ERR);
	json_object_put(arr);
	assert_int_equal(
	        ipc_sock_send(sup, (enum ipc_type)0, 1, NULL), IPC_SOCK_ERR);
	ipc_sock_close(sup);
}

static void
test_errors(void **state)
{
	struct fixture *f = *state;
	struct ipc_sock *s;
	char err[256] = "", path[160];

	/* Nobody listens: the dial gives up after its timeout. */
	s = ipc_sock_dial(f->path, 0, 100, err, sizeof(err));
	assert_null(s);
	assert_non_null(strstr(err, "dial ipc://"));
	snprintf(path, sizeof(path), "%s/missing/dir/w.sock", f->dir);
	s = ipc_sock_listen(path, 0, err, sizeof(err));
	assert_null(s);
	assert_non_null(strstr(err, "listen on ipc://"));
}

/* The LeakSanitizer hook in ipc_sock.c (nng 1.5.2 loses a sent message when
 * a pipe closes mid-handoff; docs-nngleak.md): it must name only our send
 * path, never all of libnng (that would hide our own receive leaks). */
const char *__lsan_default_suppressions(void);

static void
test_lsan_hook(void **state)
{
	const char *s = __lsan_default_suppressions();

	(void)state;
	assert_string_equal(s, "leak:ipc_sock_send\n");
	assert_null(strstr(s, "nng"));
}

/* This program's own path: the dialer of test_close_async is a fresh
 * exec of it (nng cannot be used in a forked child of an nng process). */
static const char *self;

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* The dialer: sends heartbeats as fast as it can until it is killed. */
static int
dialer_main(const char *path)
{
	char err[256];
	struct ipc_sock *s = ipc_sock_dial(path, 0, 5000, err, sizeof(err));
	int64_t seq = 0;

	if (s == NULL) {
		fprintf(stderr, "dialer: %s\n", err);
		return (1);
	}
	for (;;) {
		json_object *o = ipc_heartbeat_new(seq);

		ipc_sock_send(s, IPC_HEARTBEAT, seq++, o);
		json_object_put(o);
	}
}

static pid_t
spawn_dialer(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(self, self, "--dialer", path, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	return (pid);
}

/* The supervisor's way of ending a worker (supervisor/workers.c
 * drop_sock()): the socket is closed without waiting while the peer is
 * killed mid-stream.  nng 1.5.2 can hang such a close (ipc_sock.c): the
 * caller must never wait for it, and a hung close must not stop the next
 * socket from working (each round listens anew and receives).  The bound
 * is generous (the machine is shared): a blocking close is either instant
 * or forever. */
static void
test_close_async_peer_killed(void **state)
{
	struct fixture *f = *state;
	enum { ROUNDS = 40 };
	char path[ROUNDS][sizeof(f->path)];
	int64_t t0, worst = 0;
	struct ipc_sock *sup;
	struct ipc_msg m;
	char err[256] = "";
	int st;

	for (int i = 0; i < ROUNDS; i++) {
		/* a path of its own: the last close may still hold its own */
		snprintf(path[i], sizeof(path[i]), "%s/w%d.sock", f->dir, i);
		sup = ipc_sock_listen(path[i], 0, err, sizeof(err));
		assert_non_null(sup);
		pid_t pid = spawn_dialer(path[i]);

		assert_int_equal(
		        sup_recv(sup, &m, err, sizeof(err)), IPC_SOCK_OK);
		assert_int_equal(m.type, IPC_HEARTBEAT);
		ipc_msg_fini(&m);
		t0 = now_ms();
		ipc_sock_close_async(sup);
		kill(pid, SIGKILL);
		if (now_ms() - t0 > worst) {
			worst = now_ms() - t0;
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st));
	}
	assert_true(worst < 2000);
	assert_true(ipc_sock_closing() <= ROUNDS);
	print_message("closes not finished yet: %u of %d\n",
	        ipc_sock_closing(), ROUNDS);
	for (int i = 0; i < ROUNDS; i++) {
		unlink(path[i]);
	}
}

/* With no peer there is no race: every async close finishes, counted in
 * and out, and the socket file is free to listen on again. */
static void
test_close_async_idle(void **state)
{
	struct fixture *f = *state;
	unsigned before = ipc_sock_closing();
	struct ipc_sock *sup;
	char err[256] = "";
	int64_t t0;

	for (int i = 0; i < 20; i++) {
		sup = ipc_sock_listen(f->path, 0, err, sizeof(err));
		assert_non_null(sup);
		ipc_sock_close_async(sup);
		t0 = now_ms();
		while (ipc_sock_closing() > before && now_ms() - t0 < 20000) {
			usleep(1000);
		}
		assert_int_equal(ipc_sock_closing(), before);
	}
	ipc_sock_close_async(NULL);
	assert_int_equal(ipc_sock_closing(), before);
}

int
main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 3 && strcmp(argv[1], "--dialer") == 0) {
		return (dialer_main(argv[2]));
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_both_ways, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_oversized_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_send_would_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test(test_lsan_hook),
		cmocka_unit_test_setup_teardown(
		        test_close_async_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_close_async_peer_killed, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
