/*
 * sandbox.c: the worker sandbox (sandbox.h): the environment, descriptor,
 * directory and rlimit clean-up, then PR_SET_NO_NEW_PRIVS and the seccomp
 * allow-list built with libseccomp.  The list is what the worker runtime,
 * nng 1.5's already-running threads on the connected ipc pipe, glibc's
 * malloc and our logging use after the handshake (found with strace -f;
 * docs-sandbox.md has the reasons line by line).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "common/errmsg.h"
#include "common/xmalloc.h"
#include "workers/sandbox.h"

#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif
#ifndef SBX_ASAN
#define SBX_ASAN 0
#endif

/* Environment variables the reconcilers read (getenv at reconcile time):
 * non-secret settings, kept; every other variable is dropped. */
static const char *const keep_env[] = { "SYMPOZIUM_IMAGE_REGISTRY",
	"SYMPOZIUM_IMAGE_TAG", "SYMPOZIUM_DEFAULT_OTEL_ENABLED",
	"SYMPOZIUM_DEFAULT_OTEL_ENDPOINT", "SYMPOZIUM_DEFAULT_OTEL_PROTOCOL",
	"SYMPOZIUM_DEFAULT_OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"TZDIR", NULL };

/* Allowed without conditions.  Names unknown on this architecture (poll,
 * epoll_wait on aarch64, ...) are skipped. */
static const char *const allowed[] = {
	/* the pipe: nng's ipc transport and its epoll-based poller */
	"read", "write", "readv", "writev", "recvmsg", "sendmsg", "recvfrom",
	"sendto", "shutdown", "close", "fcntl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "epoll_ctl", "poll", "ppoll", "pselect6", "select",
	/* nng's threads: locks, condition variables, timers */
	"futex", "sched_yield", "clock_gettime", "clock_getres",
	"gettimeofday", "time", "nanosleep", "clock_nanosleep",
	"restart_syscall", "pause", "rt_sigsuspend",
	/* malloc and thread stacks */
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise",
	/* signals: abort(), raise(), returns from handlers */
	"rt_sigreturn", "rt_sigprocmask", "rt_sigaction",
	/* a new thread's start (nng's threads all exist before entry;
	 * pthread_create still works): glibc registers these */
	"set_robust_list", "rseq",
	/* identity and the end */
	"getpid", "gettid", "getrandom", "exit", "exit_group",
	/* glibc's qsort() of more than 1 KiB asks sysconf(_SC_PHYS_PAGES),
	 * i.e. sysinfo: read-only figures about the machine */
	"sysinfo", NULL
};

/* Also allowed in ASan builds: the reporter (/proc/self/maps, the binary's
 * path), LeakSanitizer's exit check (a tracer task that ptraces the
 * threads listed from /proc/self/task), the allocator's probes. */
static const char *const allowed_asan[] = { "open", "openat", "readlink",
	"readlinkat", "getdents64", "fstat", "newfstatat", "stat", "lstat",
	"statx", "lseek", "pread64", "ptrace", "wait4", "waitid", "prctl",
	"sigaltstack", "sched_getaffinity", "mincore", "getppid", "dup",
	"dup2", "dup3", "pipe", "pipe2", "kill", "tgkill", "tkill",
	"getrlimit", "prlimit64", "uname", "setrlimit", "access", "faccessat",
	"faccessat2", "ioctl", "unshare", "getuid", "geteuid", "getgid",
	"getegid", NULL };

bool
sbx_relaxed(void)
{
	return (SBX_ASAN != 0);
}

int
sbx_parse_mode(const char *s, enum sbx_mode *mode)
{
	if (s == NULL || s[0] == '\0' || strcmp(s, "on") == 0
	        || strcmp(s, "1") == 0 || strcmp(s, "true") == 0) {
		*mode = SBX_ON;
	} else if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0
	        || strcmp(s, "false") == 0) {
		*mode = SBX_OFF;
	} else if (strcmp(s, "log") == 0) {
		*mode = SBX_LOG;
	} else {
		return (-1);
	}
	return (0);
}

/* Allows every name of list that this architecture knows. */
static int
allow_list(scmp_filter_ctx ctx, const char *const *list)
{
	for (size_t i = 0; list[i] != NULL; i++) {
		int nr = seccomp_syscall_resolve_name(list[i]);
		if (nr == __NR_SCMP_ERROR) {
			continue;
		}
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) != 0) {
			return (-1);
		}
	}
	return (0);
}

/* The calls allowed with conditions on their arguments. */
static int
conditional(scmp_filter_ctx ctx)
{
	scmp_datum_t self = (scmp_datum_t)getpid();
	int rc = 0;

	/* new threads only (pthread_create); a process (fork: no
	 * CLONE_THREAD) is killed.  glibc tries clone3 first: ENOSYS sends
	 * it back to clone, whose flags the filter can read. */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	        SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	rc |= seccomp_rule_add(
	        ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* raise() and abort(): signals to this process only */
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
	        SCMP_A0(SCMP_CMP_EQ, self));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
	        SCMP_A0(SCMP_CMP_EQ, self));
	return (rc != 0 ? -1 : 0);
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return ((x > y) - (x < y));
}

/* Fills glibc's caches that some calls fill on first use with a system
 * call: qsort()'s physical memory size (sysconf(_SC_PHYS_PAGES), read by
 * its merge sort for arrays of 1 KiB or more). */
static void
prewarm(void)
{
	long v[256];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		v[i] = (long)(sizeof(v) / sizeof(v[0]) - i);
	}
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), cmp_long);
	(void)sysconf(_SC_PHYS_PAGES);
}

int
sbx_filter_install(bool log, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int rc;

	prewarm();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		errmsg(err, errlen, "PR_SET_NO_NEW_PRIVS: %s",
		        strerror(errno));
		return (-1);
	}
	ctx = seccomp_init(log ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL) {
		errmsg(err, errlen, "seccomp_init failed");
		return (-1);
	}
	rc = allow_list(ctx, allowed);
	if (rc == 0 && SBX_ASAN) {
		/* first, so that kill and tgkill are allowed unconditionally
		 * and clone with any flags (LeakSanitizer's tracer) */
		rc = allow_list(ctx, allowed_asan);
		rc |= seccomp_rule_add(
		        ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 0);
		rc |= seccomp_rule_add(
		        ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	} else if (rc == 0) {
		rc = conditional(ctx);
	}
	if (rc == 0) {
		rc = seccomp_load(ctx);
	}
	seccomp_release(ctx);
	if (rc != 0) {
		errmsg(err, errlen, "seccomp filter: %s", strerror(-rc));
		return (-1);
	}
	return (0);
}

/* Drops every environment variable but keep_env's. */
static void
scrub_env(void)
{
	char *vals[sizeof(keep_env) / sizeof(keep_env[0])];
	size_t i;

	for (i = 0; keep_env[i] != NULL; i++) {
		const char *v = getenv(keep_env[i]);
		vals[i] = v != NULL ? xstrdup(v) : NULL;
	}
	clearenv();
	for (i = 0; keep_env[i] != NULL; i++) {
		if (vals[i] != NULL) {
			(void)setenv(keep_env[i], vals[i], 1);
			free(vals[i]);
		}
	}
}

/* nng's descriptors are sockets, pipes, eventfds and epoll instances;
 * anything else (a file, a directory, a terminal on stdin) goes. */
static bool
keep_fd(int fd)
{
	struct stat st;
	char path[64], target[256];
	ssize_t n;

	if (fd == STDOUT_FILENO || fd == STDERR_FILENO) {
		return (true);
	}
	if (fd == STDIN_FILENO || fstat(fd, &st) != 0) {
		return (false);
	}
	if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) {
		return (true);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	return (n > 0 && strncmp(target, "anon_inode:", 11) == 0);
}

/* Closes what keep_fd() refuses; *maxfd: the highest descriptor left. */
static int
close_fds(int *maxfd, char *err, size_t errlen)
{
	DIR *d = opendir("/proc/self/fd");
	int fds[1024], n = 0;
	struct dirent *e;

	if (d == NULL) {
		errmsg(err, errlen, "/proc/self/fd: %s", strerror(errno));
		return (-1);
	}
	while ((e = readdir(d)) != NULL && n < 1024) {
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d)) {
			fds[n++] = atoi(e->d_name);
		}
	}
	closedir(d);
	*maxfd = STDERR_FILENO;
	for (int i = 0; i < n; i++) {
		if (!keep_fd(fds[i])) {
			(void)close(fds[i]);
		} else if (fds[i] > *maxfd) {
			*maxfd = fds[i];
		}
	}
	return (0);
}

/* VmData of /proc/self/status, in bytes (0 if unknown). */
static long
vm_data(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = 0;

	if (f == NULL) {
		return (0);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "VmData: %ld kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return (kb * 1024);
}

/* A regular file on stdout or stderr (a log redirected to a file) would
 * make every log line exceed FSIZE 0 (SIGXFSZ). */
static bool
logs_to_file(void)
{
	struct stat st;

	return ((fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode))
	        || (fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode)));
}

static int
limit(int res, rlim_t v, const char *name, char *err, size_t errlen)
{
	struct rlimit rl = { v, v };

	if (setrlimit(res, &rl) != 0) {
		errmsg(err, errlen, "setrlimit %s: %s", name, strerror(errno));
		return (-1);
	}
	return (0);
}

static int
limits(int maxfd, char *err, size_t errlen)
{
	int rc = limit(RLIMIT_CORE, 0, "CORE", err, errlen);

	if (rc == 0 && !logs_to_file()) {
		rc = limit(RLIMIT_FSIZE, 0, "FSIZE", err, errlen);
	}
	if (rc == 0 && !SBX_ASAN) {
		rc = limit(RLIMIT_NOFILE, (rlim_t)maxfd + 1, "NOFILE", err,
		        errlen);
	}
	if (rc == 0 && !SBX_ASAN) {
		rc = limit(RLIMIT_NPROC, 0, "NPROC", err, errlen);
	}
	if (rc == 0 && !SBX_ASAN) {
		rc = limit(RLIMIT_DATA,
		        (rlim_t)(vm_data() + SBX_DATA_HEADROOM), "DATA", err,
		        errlen);
	}
	return (rc);
}

int
sbx_enter(enum sbx_mode mode, char *err, size_t errlen)
{
	int maxfd;

	if (mode == SBX_OFF) {
		return (0);
	}
	scrub_env();
	/* libc reads the zone once (/etc/localtime, TZ being unset now);
	 * later localtime()/strftime() calls must not open it again under
	 * the filter */
	tzset();
	if (chdir("/") != 0) {
		errmsg(err, errlen, "chdir /: %s", strerror(errno));
		return (-1);
	}
	if (close_fds(&maxfd, err, errlen) != 0
	        || limits(maxfd, err, errlen) != 0) {
		return (-1);
	}
	if (SBX_ASAN) {
		/* LeakSanitizer's exit check hangs under the filter: ASan
		 * workers run without it (the unit tests still load it) */
		return (0);
	}
	return (sbx_filter_install(mode == SBX_LOG, err, errlen));
}
