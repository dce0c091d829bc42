/*
 * sdproc.h: runs bin/sympoziumd from integration tests.  Starts the
 * supervisor as a child with its stdout and stderr in a log file, reaps it
 * with a deadline and prints that log when a test fails; finds its
 * workers in /proc (so that a test signals only the pids it started or
 * found under them), stops it with everything it left behind, reads its
 * log (counting, waiting for a line, sanitizer reports), and runs
 * bin/sympoziumctl with a deadline.  Also the metric families its
 * /metrics must carry, for the tests of the page.
 *
 * The binary is $SYMPOZIUMD, else $BIN/tests/sympoziumd-test (sympoziumd
 * with the test controller; $BIN defaults to "bin"); a relative path is
 * taken from the current directory.  Functions
 * print the reason of a failure on stderr and never call cmocka, so the
 * library suits any test.
 */
#ifndef SDPROC_H
#define SDPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Workers remembered per supervisor (restarts included). */
#define SDPROC_MAX_SEEN 64

/* One supervisor a test started, and the workers seen under it.  Zeroed:
 * nothing started. */
struct sdproc {
	pid_t pid;                   /* 0 until started and once reaped */
	int status;                  /* wait status once reaped */
	char log[160];               /* its stdout and stderr */
	pid_t seen[SDPROC_MAX_SEEN]; /* every worker seen, for the cleanup */
	int nseen;
};

/* The absolute path of the binary sdproc_start() runs, in buf (n bytes).
 * Returns buf, or NULL when the current directory is unknown or the path
 * does not fit. */
char *sdproc_binary(char *buf, size_t n);
/* The test worker (bin/tests/sympozium-worker-test with its "testctl"
 * controller): $WORKER_TEST_BIN, else $BIN/tests/sympozium-worker-test.
 * Borrowed (static storage). */
const char *sdproc_worker_test_binary(void);
/* bin/sympoziumctl: $SYMPOZIUMCTL, else $BIN/sympoziumctl, absolute ("" when
 * the current directory is unknown).  Borrowed (static storage). */
const char *sdproc_ctl_binary(void);

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

/* ---- processes ---- */

/* True while pid exists and is not a zombie. */
bool sdproc_alive(pid_t pid);
/* The live (non-zombie) children of parent, at most max of them, into
 * out.  Returns how many. */
int sdproc_children(pid_t parent, pid_t *out, int max);
/* True when pid runs a sympozium-worker (production or test): its command
 * line says so.  Async-signal-safe. */
bool sdproc_is_worker(pid_t pid);
/* Adds pid to seen (*nseen of max used) unless it is there or full. */
void sdproc_remember(pid_t *seen, int *nseen, int max, pid_t pid);
/* The live children of s (its workers; none when s->pid <= 0), at most
 * max of them into out (out NULL: only remembered), each remembered in
 * s->seen.  Returns how many there are (at most max, or
 * SDPROC_MAX_SEEN when out is NULL). */
int sdproc_workers(struct sdproc *s, pid_t *out, int max);
/* Stops s for good: remembers its workers, SIGCONTs them and s, SIGTERMs
 * s and waits up to ms; still running, it gets SIGKILL (reaped within
 * 5 s).  Then SIGKILLs every remembered worker still alive.  Returns 0
 * when s exited 0 within ms or was not running, else -1 (the reason on
 * stderr). */
int sdproc_stop(struct sdproc *s, int ms);
/* As sdproc_stop() but with SIGKILL at once (no clean exit asked). */
void sdproc_kill(struct sdproc *s);

/* ---- the log ---- */

/* The whole file at path as a NUL-terminated string, "" when it cannot be
 * read.  Caller frees with free(). */
char *sdproc_log_text(const char *path);
/* Occurrences of needle in text. */
int sdproc_count(const char *text, const char *needle);
/* Occurrences of needle in the file at path (0 when unreadable). */
int sdproc_log_count(const char *path, const char *needle);
/* Waits up to ms (polling every 20 ms) for at least n occurrences of
 * needle in s's log, remembering s's workers on each poll.  True when
 * they came. */
bool sdproc_log_wait(struct sdproc *s, const char *needle, int n, int ms);
/* True when line is a sanitizer report (ASan, LSan, UBSan's "runtime
 * error:"); with segv_ok, ASan's "SEGV on unknown address" (a worker's
 * deliberate crash) is not one. */
bool sdproc_sanitizer_line(const char *line, bool segv_ok);
/* Prints "path: line" on stderr for each sanitizer report in the file at
 * path (sdproc_sanitizer_line()).  Returns how many there are. */
int sdproc_check_sanitizers(const char *path, bool segv_ok);

/* ---- sympoziumctl ---- */

/* How long sdproc_ctl_run() lets sympoziumctl run. */
#define SDPROC_CTL_TIMEOUT_MS 20000

/* One run of sympoziumctl.  out and err are never NULL; free them with
 * sdproc_ctl_free(). */
struct sdproc_ctl {
	int rc;          /* exit status; -1: killed, timed out, not run */
	int64_t ms;      /* wall time of the run */
	char *out, *err; /* its stdout and stderr */
};

/* Runs sdproc_ctl_binary() with the arguments after envsock (at most 14,
 * ended by NULL), SYMPOZIUM_HEALTH_SOCKET set to envsock in its
 * environment (NULL: unset), its output through the files ctl.out and
 * ctl.err of dir; SIGKILL after SDPROC_CTL_TIMEOUT_MS. */
struct sdproc_ctl sdproc_ctl_run(const char *dir, const char *envsock, ...)
        __attribute__((sentinel));
/* Frees r's output (r itself is the caller's). */
void sdproc_ctl_free(struct sdproc_ctl *r);

/* ---- /metrics ---- */

/* The metric families sympoziumd's /metrics must carry (HELP and TYPE
 * lines), NULL-terminated. */
extern const char *const sdproc_metric_names[];

#endif
