/*
 * sdproc.c: the supervisor child of sdproc.h.  Owns resolving the
 * binaries, fork/exec with the output redirected to a log file, the reap
 * loop with a deadline, the /proc scans for its workers and stopping it
 * with them, reading its log, the sympoziumctl runner, and the list of
 * required metric families.
 */
#include "tests/lib/sdproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "tests/lib/ksim.h"

#define SDPROC_MAX_ARGS 62
#define CTL_MAX_ARGS    14
#define KILL_REAP_MS    5000
#define LOG_MAX         ((size_t)256 << 20)

/* $name when set and not empty, else dflt. */
static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return (v != NULL && *v != '\0' ? v : dflt);
}

char *
sdproc_binary(char *buf, size_t n)
{
	char dflt[512];
	const char *rel;
	char cwd[512];
	int w;

	snprintf(dflt, sizeof(dflt), "%s/tests/sympoziumd-test",
	        env_or("BIN", "bin"));
	rel = env_or("SYMPOZIUMD", dflt);
	if (rel[0] == '/') {
		w = snprintf(buf, n, "%s", rel);
	} else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fprintf(stderr, "sdproc: getcwd: %s\n", strerror(errno));
		return (NULL);
	} else {
		w = snprintf(buf, n, "%s/%s", cwd, rel);
	}
	if (w < 0 || (size_t)w >= n) {
		fprintf(stderr, "sdproc: binary path too long\n");
		return (NULL);
	}
	return (buf);
}

const char *
sdproc_worker_test_binary(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/sympozium-worker-test",
	        env_or("BIN", "bin"));
	return (env_or("WORKER_TEST_BIN", path));
}

const char *
sdproc_ctl_binary(void)
{
	static char path[1100];
	const char *bin = env_or("BIN", "bin");
	char cwd[512];

	if (getenv("SYMPOZIUMCTL") != NULL) {
		return (getenv("SYMPOZIUMCTL"));
	}
	if (bin[0] == '/') {
		snprintf(path, sizeof(path), "%s/sympoziumctl", bin);
	} else if (getcwd(cwd, sizeof(cwd)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s/sympoziumctl", cwd, bin);
	} else {
		return ("");
	}
	return (path);
}

/* In the child: applies one "NAME=value" or "NAME" of env. */
static void
apply_env(const char *kv)
{
	const char *eq = strchr(kv, '=');
	char name[128];

	if (eq == NULL) {
		(void)unsetenv(kv);
	} else if ((size_t)(eq - kv) < sizeof(name)) {
		memcpy(name, kv, (size_t)(eq - kv));
		name[eq - kv] = '\0';
		(void)setenv(name, eq + 1, 1);
	}
}

/* The child: output to log, environment, then exec. */
static void
exec_child(const char *log, const char **argv, const char *const *env)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		_exit(126);
	}
	for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
		apply_env(env[i]);
	}
	execv(argv[0], (char *const *)(uintptr_t)argv);
	_exit(127);
}

pid_t
sdproc_start(const char *log, const char *const *args)
{
	return (sdproc_start_env(log, args, NULL));
}

pid_t
sdproc_start_env(
        const char *log, const char *const *args, const char *const *env)
{
	char bin[1024];

	if (sdproc_binary(bin, sizeof(bin)) == NULL) {
		return (-1);
	}
	return (sdproc_start_bin(bin, log, args, env));
}

pid_t
sdproc_start_bin(const char *bin, const char *log, const char *const *args,
        const char *const *env)
{
	const char *argv[SDPROC_MAX_ARGS + 2];
	size_t n = 0;
	pid_t pid;

	argv[n++] = bin;
	for (size_t i = 0; args != NULL && args[i] != NULL; i++) {
		if (n > SDPROC_MAX_ARGS) {
			fprintf(stderr, "sdproc: too many arguments\n");
			return (-1);
		}
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "sdproc: fork: %s\n", strerror(errno));
		return (-1);
	}
	if (pid == 0) {
		exec_child(log, argv, env);
	}
	return (pid);
}

bool
sdproc_reap(pid_t *pid, int *status, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	while (*pid > 0) {
		pid_t r = waitpid(*pid, status, WNOHANG);
		if (r == *pid || (r < 0 && errno != EINTR)) {
			*pid = 0;
			return (r > 0);
		}
		if (ksim_now_ms() >= end) {
			return (false);
		}
		ksim_sleep_ms(20);
	}
	return (true);
}

void
sdproc_dump_log(const char *path)
{
	char *t = sdproc_log_text(path);

	fprintf(stderr, "---- sympoziumd log (%s) ----\n%s----\n", path, t);
	free(t);
}

/* ---- processes ---- */

/* Fills *state and *ppid from /proc/pid/stat; -1 when pid is gone. */
static int
proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], line[1024], *p;
	FILE *f;
	int ok = -1, pp = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		return (-1);
	}
	if (fgets(line, sizeof(line), f) != NULL
	        && (p = strrchr(line, ')')) != NULL) {
		ok = sscanf(p + 1, " %c %d", state, &pp) == 2 ? 0 : -1;
		*ppid = (pid_t)pp;
	}
	fclose(f);
	return (ok);
}

bool
sdproc_alive(pid_t pid)
{
	char st;
	pid_t pp;

	return (pid > 0 && proc_stat(pid, &st, &pp) == 0 && st != 'Z');
}

int
sdproc_children(pid_t parent, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d != NULL && n < max && (e = readdir(d)) != NULL) {
		char *end, st;
		long pid = strtol(e->d_name, &end, 10);
		pid_t pp;

		if (*end == '\0' && pid > 0
		        && proc_stat((pid_t)pid, &st, &pp) == 0 && pp == parent
		        && st != 'Z') {
			out[n++] = (pid_t)pid;
		}
	}
	if (d != NULL) {
		closedir(d);
	}
	return (n);
}

bool
sdproc_is_worker(pid_t pid)
{
	char path[32] = "/proc/", buf[256], digits[16];
	int n = 6, nd = 0, fd;
	ssize_t len;

	for (unsigned v = (unsigned)pid; nd == 0 || v > 0; v /= 10) {
		digits[nd++] = (char)('0' + v % 10);
	}
	while (nd > 0) {
		path[n++] = digits[--nd];
	}
	memcpy(path + n, "/cmdline", 9);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		return (false);
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; i < len; i++) {
		buf[i] = buf[i] == '\0' ? ' ' : buf[i];
	}
	buf[len > 0 ? len : 0] = '\0';
	return (strstr(buf, "sympozium-worker") != NULL);
}

void
sdproc_remember(pid_t *seen, int *nseen, int max, pid_t pid)
{
	bool known = false;

	for (int j = 0; j < *nseen && !known; j++) {
		known = seen[j] == pid;
	}
	if (!known && *nseen < max) {
		seen[(*nseen)++] = pid;
	}
}

int
sdproc_workers(struct sdproc *s, pid_t *out, int max)
{
	pid_t all[SDPROC_MAX_SEEN];
	int n;

	if (out == NULL) {
		out = all;
		max = SDPROC_MAX_SEEN;
	}
	n = s->pid > 0 ? sdproc_children(s->pid, out, max) : 0;
	for (int i = 0; i < n; i++) {
		sdproc_remember(s->seen, &s->nseen, SDPROC_MAX_SEEN, out[i]);
	}
	return (n);
}

/* SIGKILLs the remembered workers of s still alive (and still workers:
 * a pid may have been reused). */
static void
kill_seen(const struct sdproc *s)
{
	for (int j = 0; j < s->nseen; j++) {
		if (sdproc_alive(s->seen[j]) && sdproc_is_worker(s->seen[j])) {
			kill(s->seen[j], SIGKILL);
		}
	}
}

int
sdproc_stop(struct sdproc *s, int ms)
{
	int rc = 0;

	(void)sdproc_workers(s, NULL, 0);
	for (int j = 0; j < s->nseen; j++) {
		if (sdproc_alive(s->seen[j])) {
			kill(s->seen[j], SIGCONT);
		}
	}
	if (s->pid > 0) {
		kill(s->pid, SIGCONT);
		kill(s->pid, SIGTERM);
		if (!sdproc_reap(&s->pid, &s->status, ms) && s->pid > 0) {
			fprintf(stderr,
			        "sdproc: pid %d still running %d ms "
			        "after SIGTERM\n",
			        (int)s->pid, ms);
			kill(s->pid, SIGKILL);
			(void)sdproc_reap(&s->pid, &s->status, KILL_REAP_MS);
			rc = -1;
		} else if (!WIFEXITED(s->status)
		        || WEXITSTATUS(s->status) != 0) {
			fprintf(stderr, "sdproc: sympoziumd wait status %d\n",
			        s->status);
			rc = -1;
		}
	}
	kill_seen(s);
	return (rc);
}

void
sdproc_kill(struct sdproc *s)
{
	(void)sdproc_workers(s, NULL, 0);
	if (s->pid > 0) {
		kill(s->pid, SIGCONT);
		kill(s->pid, SIGKILL);
		(void)sdproc_reap(&s->pid, &s->status, KILL_REAP_MS);
	}
	kill_seen(s);
}

/* ---- the log ---- */

char *
sdproc_log_text(const char *path)
{
	struct buf b = BUF_INIT;

	(void)buf_read_file(&b, path, LOG_MAX);
	return (buf_detach(&b, NULL));
}

int
sdproc_count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) {
		n++;
	}
	return (n);
}

int
sdproc_log_count(const char *path, const char *needle)
{
	char *t = sdproc_log_text(path);
	int n = sdproc_count(t, needle);

	free(t);
	return (n);
}

bool
sdproc_log_wait(struct sdproc *s, const char *needle, int n, int ms)
{
	int64_t end = ksim_now_ms() + ms;

	do {
		(void)sdproc_workers(s, NULL, 0);
		if (sdproc_log_count(s->log, needle) >= n) {
			return (true);
		}
		ksim_sleep_ms(20);
	} while (ksim_now_ms() < end);
	return (false);
}

bool
sdproc_sanitizer_line(const char *line, bool segv_ok)
{
	return ((strstr(line, "ERROR: AddressSanitizer") != NULL
	                && !(segv_ok
	                        && strstr(line, "SEGV on unknown address")
	                                != NULL))
	        || strstr(line, "ERROR: LeakSanitizer") != NULL
	        || strstr(line, "runtime error:") != NULL);
}

int
sdproc_check_sanitizers(const char *path, bool segv_ok)
{
	char *t = sdproc_log_text(path), *save = NULL;
	int n = 0;

	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		if (sdproc_sanitizer_line(l, segv_ok)) {
			fprintf(stderr, "%s: %s\n", path, l);
			n++;
		}
	}
	free(t);
	return (n);
}

/* ---- sympoziumctl ---- */

/* The child of sdproc_ctl_run(): output to out and err, then exec. */
static void
ctl_child(const char **argv, const char *out, const char *err,
        const char *envsock)
{
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) {
		_exit(126);
	}
	if (envsock != NULL) {
		setenv("SYMPOZIUM_HEALTH_SOCKET", envsock, 1);
	} else {
		unsetenv("SYMPOZIUM_HEALTH_SOCKET");
	}
	execv(argv[0], (char *const *)(uintptr_t)argv);
	_exit(127);
}

/* Waits for pid up to SDPROC_CTL_TIMEOUT_MS, then SIGKILLs it; returns
 * its exit status, or -1 when it did not exit by itself. */
static int
ctl_wait(pid_t pid, int64_t t0)
{
	int st = 0;

	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (ksim_now_ms() - t0 > SDPROC_CTL_TIMEOUT_MS) {
			fprintf(stderr,
			        "sdproc: sympoziumctl killed after "
			        "%d ms\n",
			        SDPROC_CTL_TIMEOUT_MS);
			kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			return (-1);
		}
		ksim_sleep_ms(2);
	}
	return (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

struct sdproc_ctl
sdproc_ctl_run(const char *dir, const char *envsock, ...)
{
	const char *argv[CTL_MAX_ARGS + 2];
	char out[256], err[256];
	struct sdproc_ctl r = { -1, 0, NULL, NULL };
	int64_t t0 = ksim_now_ms();
	va_list ap;
	int n = 0;
	pid_t pid;

	argv[n++] = sdproc_ctl_binary();
	va_start(ap, envsock);
	while (n <= CTL_MAX_ARGS
	        && (argv[n] = va_arg(ap, const char *)) != NULL) {
		n++;
	}
	va_end(ap);
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/ctl.out", dir);
	snprintf(err, sizeof(err), "%s/ctl.err", dir);
	if ((pid = fork()) == 0) {
		ctl_child(argv, out, err, envsock);
	}
	if (pid < 0) {
		fprintf(stderr, "sdproc: fork: %s\n", strerror(errno));
	} else {
		r.rc = ctl_wait(pid, t0);
	}
	r.ms = ksim_now_ms() - t0;
	r.out = sdproc_log_text(out);
	r.err = sdproc_log_text(err);
	return (r);
}

void
sdproc_ctl_free(struct sdproc_ctl *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* ---- /metrics ---- */

const char *const sdproc_metric_names[] = {
	"controller_runtime_reconcile_total",
	"controller_runtime_reconcile_errors_total",
	"controller_runtime_terminal_reconcile_errors_total",
	"controller_runtime_reconcile_panics_total",
	"controller_runtime_reconcile_time_seconds",
	"controller_runtime_max_concurrent_reconciles",
	"controller_runtime_active_workers",
	"workqueue_depth",
	"workqueue_adds_total",
	"workqueue_retries_total",
	"workqueue_queue_duration_seconds",
	"workqueue_work_duration_seconds",
	"workqueue_unfinished_work_seconds",
	"workqueue_longest_running_processor_seconds",
	"leader_election_master_status",
	"leader_election_slowpath_total",
	"rest_client_requests_total",
	"sympozium_worker_restarts_total",
	"sympozium_worker_state",
	"sympozium_worker_resident_memory_bytes",
	"sympozium_worker_cpu_seconds_total",
	"sympozium_worker_quarantined_keys",
	"sympozium_policy_violations_total",
	"process_resident_memory_bytes",
	"process_cpu_seconds_total",
	"process_start_time_seconds",
	"process_open_fds",
	NULL,
};
