/*
 * sdproc.h: runs bin/sympoziumd from integration tests.  Starts the
 * supervisor as a child with its stdout and stderr in a log file, reaps it
 * with a deadline and prints that log when a test fails.
 *
 * The binary is $SYMPOZIUMD, else bin/sympoziumd; a relative path is taken
 * from the current directory.  Functions print the reason of a failure on
 * stderr and never call cmocka, so the library suits any test.
 */
#ifndef SDPROC_H
#define SDPROC_H

#include <stdbool.h>
#include <sys/types.h>

/* The absolute path of the binary sdproc_start() runs, in buf (n bytes).
 * Returns buf, or NULL when the current directory is unknown or the path
 * does not fit. */
char *sdproc_binary(char *buf, size_t n);
/* Forks and execs the supervisor with args (NULL-terminated, may be NULL;
 * at most 62; nothing else is added), its stdout and stderr truncated into
 * log.  The child exits 126 when log cannot be opened, 127 when the exec
 * fails.  Returns the child's pid, or -1. */
pid_t sdproc_start(const char *log, const char *const *args);
/* sdproc_start() with the child's environment changed first: env is a
 * NULL-terminated list (may be NULL) of "NAME=value" (set) or "NAME"
 * (unset), applied in order; names longer than 127 bytes are ignored. */
pid_t sdproc_start_env(
        const char *log, const char *const *args, const char *const *env);
/* sdproc_start_env() running bin (used as given, also as argv[0]) in
 * place of the usual binary: for tests that resolve it their own way. */
pid_t sdproc_start_bin(const char *bin, const char *log,
        const char *const *args, const char *const *env);
/* Waits up to ms for *pid to exit (nothing to wait for when *pid <= 0).
 * Once reaped (or waitpid failed), *pid is 0 and *status the wait status.
 * Returns true when the child exited (or *pid was already 0), false on
 * timeout or when waitpid failed. */
bool sdproc_reap(pid_t *pid, int *status, int ms);
/* Prints the log file at path on stderr between marker lines. */
void sdproc_dump_log(const char *path);

#endif
