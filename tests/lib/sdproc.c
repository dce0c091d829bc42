/*
 * sdproc.c: the supervisor child of sdproc.h.  Owns resolving the binary,
 * fork/exec with the output redirected to a log file, the reap loop with a
 * deadline and printing the log.
 */
#include "tests/lib/sdproc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

#define SDPROC_MAX_ARGS 62

char *
sdproc_binary(char *buf, size_t n)
{
	const char *env = getenv("SYMPOZIUMD");
	const char *rel = env != NULL && *env != '\0' ? env : "bin/sympoziumd";
	char cwd[512];
	int w;

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
	char *t = testutil_read_file(path, NULL);

	fprintf(stderr, "---- sympoziumd log (%s) ----\n%s----\n", path,
	        t != NULL ? t : "");
	free(t);
}
