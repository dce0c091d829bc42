/*
 * sandbox.c: the worker sandbox (sandbox.h): the mode, the environment,
 * descriptor, directory and rlimit clean-up, the kill report's pipe, then
 * the seccomp filter of sandbox_filter.c.  workers/README.md has the
 * reasons of every step and of every system call on the lists.
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

#include "common/contract.h"
#include "common/errmsg.h"
#include "common/xmalloc.h"
#include "ipc/sbxrep.h"
#include "workers/agentrun.h"
#include "workers/sandbox.h"

/* Environment variables the reconcilers read (getenv at reconcile time):
 * non-secret settings, kept; every other variable is dropped. */
static const char *const keep_env[] = { "SYMPOZIUM_IMAGE_REGISTRY",
	"SYMPOZIUM_IMAGE_TAG", "SYMPOZIUM_DEFAULT_OTEL_ENABLED",
	"SYMPOZIUM_DEFAULT_OTEL_ENDPOINT", "SYMPOZIUM_DEFAULT_OTEL_PROTOCOL",
	"SYMPOZIUM_DEFAULT_OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"TZDIR", AGENTRUN_HISTORY_ENV, CONTRACT_ENV_AGENT_SANDBOX, NULL };

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
	if (rc == 0 && !sbx_relaxed()) {
		rc = limit(RLIMIT_NOFILE, (rlim_t)maxfd + 1, "NOFILE", err,
		        errlen);
	}
	if (rc == 0 && !sbx_relaxed()) {
		rc = limit(RLIMIT_NPROC, 0, "NPROC", err, errlen);
	}
	if (rc == 0 && !sbx_relaxed()) {
		rc = limit(RLIMIT_DATA,
		        (rlim_t)(vm_data() + SBX_DATA_HEADROOM), "DATA", err,
		        errlen);
	}
	return (rc);
}

/* The kill report's pipe: the descriptor SBXREP_ENV names when it is
 * the write end of a pipe, else -1 (a worker not started by sympoziumd). */
static int
report_fd(void)
{
	const char *v = getenv(SBXREP_ENV);
	struct stat st;
	char *end = NULL;
	long fd;
	int fl;

	if (v == NULL || v[0] == '\0') {
		return (-1);
	}
	fd = strtol(v, &end, 10);
	if (*end != '\0' || fd <= STDERR_FILENO || fd > 1024
	        || fstat((int)fd, &st) != 0 || !S_ISFIFO(st.st_mode)
	        || (fl = fcntl((int)fd, F_GETFL)) < 0
	        || (fl & O_ACCMODE) != O_WRONLY) {
		return (-1);
	}
	return ((int)fd);
}

int
sbx_enter(enum sbx_mode mode, char *err, size_t errlen)
{
	int maxfd;

	if (mode == SBX_OFF) {
		return (0);
	}
	sbx_set_report_fd(report_fd());
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
	if (sbx_relaxed()) {
		/* LeakSanitizer's exit check hangs under the filter: ASan
		 * workers run without it (the unit tests still load it) */
		return (0);
	}
	return (sbx_filter_install(mode == SBX_LOG, err, errlen));
}
