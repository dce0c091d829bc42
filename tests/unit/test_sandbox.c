/*
 * test_sandbox.c: the worker sandbox (workers/sandbox.c) in forked
 * children: the filter kills a child that calls openat, socket, execve,
 * fork or signals another process (SIGSYS) and lets one that only does
 * what a worker does after its handshake (memory, threads, a pipe, clocks,
 * sleeps, signals to itself) live; sbx_enter() leaves only the kept
 * environment, "/" as the working directory, stdout, stderr and pipes as
 * descriptors, and the rlimits of sandbox.h (read from /proc/PID/limits).
 * ASan builds relax open and fork (sandbox.h): those cases check that.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/log.h"
#include "ipc/sbxrep.h"
#include "workers/sandbox.h"

/* What a child does once the filter is in. */
typedef void (*child_fn)(void);

/* Runs fn in a child under the filter (log: mode log), its kill report
 * to report (-1: none) and its log lines to logfd (-1: stderr); returns
 * its wait status. */
static int
run_mode(child_fn fn, bool log, int report, int logfd)
{
	char err[256];
	int st = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		log_setfd(logfd);
		sbx_set_report_fd(report);
		if (sbx_filter_install(log, err, sizeof(err)) != 0) {
			_exit(100);
		}
		fn();
		sbx_log_refused("ns/key");
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) { }
	return (st);
}

static int
run_filtered(child_fn fn)
{
	return (run_mode(fn, false, -1, -1));
}

static void
assert_sigsys(int st)
{
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
}

static void
assert_exit0(int st)
{
	if (!WIFEXITED(st)) {
		fail_msg("child died by signal %d", WTERMSIG(st));
	}
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void
do_openat(void)
{
	(void)syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY);
}

static void
do_socket(void)
{
	(void)socket(AF_UNIX, SOCK_STREAM, 0);
}

static void
do_execve(void)
{
	char *const argv[] = { (char *)"/bin/true", NULL };

	(void)syscall(SYS_execve, "/bin/true", argv, NULL);
}

static void
do_fork(void)
{
	pid_t p = fork();

	if (p == 0) {
		_exit(0);
	}
	(void)waitpid(p, NULL, 0);
}

static void
do_kill_parent(void)
{
	(void)kill(getppid(), 0);
}

static void
do_segv(void)
{
	signal(SIGSEGV, SIG_DFL); /* cmocka's handler is inherited */
	raise(SIGSEGV);
}

static void *
thread_main(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
	return (arg);
}

/* What the runtime and nng do after the handshake. */
static void
do_allowed(void)
{
	struct timespec ts = { 0, 1000000 };
	char c = 'x';
	pthread_t t;
	void *r = NULL;

	/* descriptors made before the filter: stderr */
	(void)write(STDERR_FILENO, "", 0);
	for (int i = 0; i < 64; i++) {
		free(malloc((size_t)1 << (i % 24)));
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts = (struct timespec) { 0, 1000000 };
	nanosleep(&ts, NULL);
	(void)getpid();
	(void)gettid();
	sched_yield();
	if (pthread_create(&t, NULL, thread_main, &c) != 0
	        || pthread_join(t, &r) != 0 || r != &c) {
		_exit(3);
	}
}

static int
cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a;
	uintptr_t y = (uintptr_t) * (void *const *)b;

	return ((x > y) - (x < y));
}

/* glibc's qsort() of 1 KiB or more (128 pointers: the agentrun worker's
 * completed runs of one instance) asks sysconf(_SC_PHYS_PAGES), which is
 * a sysinfo call: a worker with a long run history died of it. */
static void
do_qsort(void)
{
	size_t n = 3000;
	void **v = malloc(n * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		v[i] = (void *)(uintptr_t)(n - i);
	}
	qsort(v, n, sizeof(*v), cmp_ptr);
	qsort(v, 128, sizeof(*v), cmp_ptr);
	if ((uintptr_t)v[0] != 1 || sysconf(_SC_PHYS_PAGES) <= 0) {
		_exit(5);
	}
	free(v);
}

static void
test_libc_qsort(void **state)
{
	(void)state;
	assert_exit0(run_filtered(do_qsort));
}

/* libc calls that make system calls of their own, none of which may
 * kill: sysconf's figures, uname, getrlimit, the CPU count malloc asks,
 * big allocations (mmap), stdio on stdout (newfstatat: refused, stdio
 * copes), isatty (ioctl: refused), formatting. */
static void
do_libc(void)
{
	struct utsname u;
	struct rlimit rl;
	struct sysinfo si;
	cpu_set_t cpus;
	char buf[128];

	if (sysconf(_SC_PHYS_PAGES) <= 0 || sysconf(_SC_PAGESIZE) <= 0
	        || sysconf(_SC_OPEN_MAX) <= 0 || sysconf(_SC_CLK_TCK) <= 0) {
		_exit(5);
	}
	if (uname(&u) != 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0
	        || sysinfo(&si) != 0
	        || sched_getaffinity(0, sizeof(cpus), &cpus) != 0) {
		_exit(6);
	}
	for (int i = 0; i < 8; i++) {
		char *p = malloc((size_t)64 << 20);
		if (p == NULL) {
			_exit(7);
		}
		memset(p, i, (size_t)1 << 20);
		free(p);
	}
	(void)isatty(STDERR_FILENO);
	snprintf(buf, sizeof(buf), "%.3f %s", 3.14159, u.sysname);
	fputs("", stdout);
	fflush(stdout);
	(void)getuid();
	(void)getppid();
}

static void
test_libc_calls(void **state)
{
	(void)state;
	assert_exit0(run_filtered(do_libc));
}

/* Calls on no list (getcwd: a path, but no file is opened; getpgid): ENOSYS,
 * and the worker goes on. */
static void
do_unlisted(void)
{
	char cwd[256];

	errno = 0;
	if (syscall(SYS_getcwd, cwd, sizeof(cwd)) != -1 || errno != ENOSYS) {
		_exit(8);
	}
	if (syscall(SYS_getpgid, 0) != -1 || errno != ENOSYS) {
		_exit(9);
	}
}

/* run_mode() with the child's log lines in out (NUL-ended); asserts that
 * it exited 0. */
static void
run_logged(child_fn fn, bool log, char *out, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int p[2];

	assert_int_equal(pipe(p), 0);
	int st = run_mode(fn, log, -1, p[1]);
	close(p[1]);
	while (n + 1 < len && (r = read(p[0], out + n, len - 1 - n)) > 0) {
		n += (size_t)r;
	}
	out[n] = '\0';
	close(p[0]);
	assert_exit0(st);
}

static void
test_unlisted_refused(void **state)
{
	char out[4096], want[128];

	(void)state;
	run_logged(do_unlisted, false, out, sizeof(out));
	print_message("%s", out);
	snprintf(want, sizeof(want),
	        "sandbox: system call getcwd (%d) refused with ENOSYS, "
	        "reconciling ns/key",
	        SYS_getcwd);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "system call getpgid ("));
	assert_null(strstr(out, "it kills"));
}

/* Mode log: even a deadly call only fails (ENOSYS) and is logged. */
static void
do_open_refused(void)
{
	errno = 0;
	if (syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY) != -1
	        || errno != ENOSYS) {
		_exit(10);
	}
}

static void
test_log_mode(void **state)
{
	char out[4096], want[128];

	(void)state;
	if (sbx_relaxed()) {
		return; /* openat is allowed there */
	}
	run_logged(do_open_refused, true, out, sizeof(out));
	snprintf(want, sizeof(want),
	        "sandbox: system call openat (%d) refused with ENOSYS (in "
	        "mode on it kills)",
	        SYS_openat);
	assert_non_null(strstr(out, want));
}

/* A deadly call: death by SIGSYS, and the kill report names it. */
static void
test_kill_report(void **state)
{
	unsigned char rec[64];
	char cause[128], want[128];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	int st = run_mode(do_socket, false, p[1], -1);
	close(p[1]);
	ssize_t n = read(p[0], rec, sizeof(rec));
	close(p[0]);
	assert_sigsys(st);
	assert_int_equal(n, SBXREP_LEN);
	assert_non_null(sbxrep_cause(rec, (size_t)n, cause, sizeof(cause)));
	snprintf(want, sizeof(want),
	        "killed by its sandbox: system call socket (%d)", SYS_socket);
	assert_string_equal(cause, want);
}

static void
test_kills_openat(void **state)
{
	(void)state;
	if (sbx_relaxed()) {
		assert_exit0(run_filtered(do_openat));
	} else {
		assert_sigsys(run_filtered(do_openat));
	}
}

static void
test_kills_socket(void **state)
{
	(void)state;
	assert_sigsys(run_filtered(do_socket));
}

static void
test_kills_execve(void **state)
{
	(void)state;
	assert_sigsys(run_filtered(do_execve));
}

static void
test_kills_fork(void **state)
{
	(void)state;
	if (sbx_relaxed()) {
		assert_exit0(run_filtered(do_fork));
	} else {
		assert_sigsys(run_filtered(do_fork));
	}
}

static void
test_kills_kill_other(void **state)
{
	(void)state;
	if (!sbx_relaxed()) {
		assert_sigsys(run_filtered(do_kill_parent));
	}
}

static void
test_allowed_lives(void **state)
{
	(void)state;
	assert_exit0(run_filtered(do_allowed));
}

static void
test_own_signal(void **state)
{
	int st;

	(void)state;
	st = run_filtered(do_segv);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSEGV);
}

static void
test_parse_mode(void **state)
{
	enum sbx_mode m;

	(void)state;
	assert_int_equal(sbx_parse_mode(NULL, &m), 0);
	assert_int_equal(m, SBX_ON);
	assert_int_equal(sbx_parse_mode("", &m), 0);
	assert_int_equal(m, SBX_ON);
	assert_int_equal(sbx_parse_mode("on", &m), 0);
	assert_int_equal(m, SBX_ON);
	assert_int_equal(sbx_parse_mode("off", &m), 0);
	assert_int_equal(m, SBX_OFF);
	assert_int_equal(sbx_parse_mode("0", &m), 0);
	assert_int_equal(m, SBX_OFF);
	assert_int_equal(sbx_parse_mode("log", &m), 0);
	assert_int_equal(m, SBX_LOG);
	assert_int_equal(sbx_parse_mode("maybe", &m), -1);
}

/* ---- sbx_enter() as a whole ---- */

/* In the child: enters, reports the environment on out, waits for in to
 * close. */
static void
enter_child(int out, int in)
{
	char err[256], c = 'y';
	int junk = open("/dev/null", O_RDONLY);

	(void)junk;
	setenv("SECRET_TOKEN", "hunter2", 1);
	setenv("SYMPOZIUM_IMAGE_TAG", "t1", 1);
	(void)chdir("/tmp");
	if (sbx_enter(SBX_ON, err, sizeof(err)) != 0) {
		_exit(100);
	}
	if (getenv("SECRET_TOKEN") != NULL || getenv("PATH") != NULL
	        || getenv("SYMPOZIUM_IMAGE_TAG") == NULL
	        || strcmp(getenv("SYMPOZIUM_IMAGE_TAG"), "t1") != 0) {
		c = 'n';
	}
	(void)write(out, &c, 1);
	(void)read(in, &c, 1);
	_exit(0);
}

/* The soft limit named name ("Max open files") in /proc/pid/limits. */
static long
proc_limit(pid_t pid, const char *name)
{
	char path[64];
	struct buf b = BUF_INIT;
	long v = -2;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	assert_int_equal(buf_read_file(&b, path, 1 << 16), 0);
	buf_putc(&b, '\0');
	const char *p = strstr(b.data, name);
	if (p != NULL) {
		p += strlen(name);
		v = strncmp(p + strspn(p, " "), "unlimited", 9) == 0
		        ? -1
		        : strtol(p, NULL, 10);
	}
	buf_fini(&b);
	return (v);
}

/* Descriptors of pid that are not sockets, pipes or anon inodes. */
static int
other_fds(pid_t pid, int *maxfd)
{
	char path[64], target[256];
	int n = 0;

	*maxfd = -1;
	for (int fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len < 0) {
			continue;
		}
		target[len] = '\0';
		*maxfd = fd;
		if (strncmp(target, "socket:", 7) != 0
		        && strncmp(target, "pipe:", 5) != 0
		        && strncmp(target, "anon_inode:", 11) != 0) {
			n++;
		}
	}
	return (n);
}

static void
test_enter(void **state)
{
	int out[2], in[2], logp[2], st, maxfd;
	char c = 0, cwd[64] = "", path[64];

	(void)state;
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(logp), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* stdout and stderr are pipes, as under a supervisor whose
		 * logs are not in a file: FSIZE 0 applies */
		dup2(logp[1], STDOUT_FILENO);
		dup2(logp[1], STDERR_FILENO);
		close(out[0]);
		close(in[1]);
		enter_child(out[1], in[0]);
	}
	close(out[1]);
	close(in[0]);
	close(logp[1]);
	assert_int_equal(read(out[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	assert_int_equal(readlink(path, cwd, sizeof(cwd) - 1), 1);
	assert_string_equal(cwd, "/");
	assert_int_equal(other_fds(pid, &maxfd), 0);
	assert_int_equal(proc_limit(pid, "Max file size"), 0);
	assert_int_equal(proc_limit(pid, "Max core file size"), 0);
	if (!sbx_relaxed()) {
		assert_int_equal(
		        proc_limit(pid, "Max open files"), (long)maxfd + 1);
		assert_int_equal(proc_limit(pid, "Max processes"), 0);
		assert_true(
		        proc_limit(pid, "Max data size") >= SBX_DATA_HEADROOM);
	}
	close(in[1]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) { }
	assert_exit0(st);
	close(out[0]);
	close(logp[0]);
}

/* Logging and local time under the whole sandbox: glibc's strftime() and
 * localtime_r() call tzset(), which opens /etc/localtime unless it was
 * read before the filter (a worker's first log line after READY once
 * died of SIGSYS this way). */
static void
test_log_and_localtime(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256], buf[64];
		struct tm tm;
		time_t t = 0;

		if (sbx_enter(SBX_ON, err, sizeof(err)) != 0) {
			_exit(100);
		}
		log_warnx("sandbox test: a log line under the filter");
		localtime_r(&t, &tm);
		if (strftime(buf, sizeof(buf), "%Y %Z", &tm) == 0) {
			_exit(4);
		}
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) { }
	assert_exit0(st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kills_openat),
		cmocka_unit_test(test_kills_socket),
		cmocka_unit_test(test_kills_execve),
		cmocka_unit_test(test_kills_fork),
		cmocka_unit_test(test_kills_kill_other),
		cmocka_unit_test(test_allowed_lives),
		cmocka_unit_test(test_libc_qsort),
		cmocka_unit_test(test_libc_calls),
		cmocka_unit_test(test_unlisted_refused),
		cmocka_unit_test(test_log_mode),
		cmocka_unit_test(test_kill_report),
		cmocka_unit_test(test_own_signal),
		cmocka_unit_test(test_parse_mode),
		cmocka_unit_test(test_enter),
		cmocka_unit_test(test_log_and_localtime),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
