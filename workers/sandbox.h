/*
 * sandbox.h: the worker sandbox (issue 6 item 5), entered by every worker
 * right after its HELLO/READY handshake, once nng's threads and the
 * connected pipe exist.  Prefix sbx_.  The lists and their reasons:
 * workers/README.md.
 *
 * sbx_enter() does, in order: keeps only the environment variables the
 * reconcilers read (SYMPOZIUM_*, OTEL_EXPORTER_OTLP_ENDPOINT, TZDIR) and
 * drops the rest; closes every descriptor but stdout, stderr and nng's own
 * (sockets, pipes, eventfd, epoll); chdir("/"); tight rlimits (NOFILE to
 * what is open, NPROC 0, FSIZE 0, CORE 0, DATA to what is mapped plus
 * SBX_DATA_HEADROOM); PR_SET_NO_NEW_PRIVS; then the seccomp filter
 * (libseccomp, sandbox_filter.c): the calls on its allow-list run; every
 * other call is trapped (SIGSYS handler) and never runs.  A deadly call
 * (opening a file or a socket, creating a process, running a program,
 * ...) kills the worker by SIGSYS, after writing which call it was to the
 * supervisor's report pipe (ipc/sbxrep.h; SBXREP_ENV names it); any other
 * call fails with ENOSYS and is logged once (sbx_log_refused()), so a
 * system call that libc makes on its own never kills a worker.
 *
 * Builds with AddressSanitizer (detected at compile time) relax it, since
 * ASan's reports and LeakSanitizer's exit check open /proc files, create a
 * tracer task and ptrace: the filter then also allows those calls
 * (sbx_relaxed() is true) and the NOFILE, NPROC and DATA limits are left
 * alone.  socket(), connect(), execve() and fork() still kill.  But
 * sbx_enter() does not load the filter in ASan builds at all: LeakSanitizer's
 * exit check was seen to hang under it (workers then miss their QUIT exit),
 * so only sbx_filter_install() (the unit tests) uses the relaxed list.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

/* Extra writable memory a worker may map after entry. */
#define SBX_DATA_HEADROOM (1024L * 1024 * 1024)

/* The environment variable that chooses the mode (the supervisor sets it to
 * "off" under --no-worker-sandbox). */
#define SBX_ENV "SYMPOZIUM_WORKER_SANDBOX"

enum sbx_mode {
	SBX_OFF, /* nothing is done (debugging) */
	SBX_ON,  /* the default: deadly calls kill the process (SIGSYS),
	          * other calls off the list fail with ENOSYS (logged) */
	SBX_LOG, /* the audit mode: every call off the list, deadly or
	          * not, fails with ENOSYS and is logged; nothing kills */
};

/* The mode named by s ("on", "off", "log", also "1"/"0", "true"/"false");
 * NULL or "" is SBX_ON.  -1 when s names none. */
int sbx_parse_mode(const char *s, enum sbx_mode *mode);

/* Enters the sandbox in mode (SBX_OFF: returns 0 at once).  Returns 0, or
 * -1 with a message in err (the caller must then exit: a worker never runs
 * half-sandboxed). */
int sbx_enter(enum sbx_mode mode, char *err, size_t errlen);

/* Installs only the SIGSYS handler and the seccomp filter (and
 * PR_SET_NO_NEW_PRIVS); log: mode SBX_LOG (nothing kills).  For
 * sbx_enter() and the unit tests.  Returns 0, or -1 with a message in
 * err. */
int sbx_filter_install(bool log, char *err, size_t errlen);

/* Where the SIGSYS handler writes the kill report (-1: nowhere, the
 * default).  sbx_enter() sets it from SBXREP_ENV. */
void sbx_set_report_fd(int fd);

/* Logs (warning) each system call refused with ENOSYS since the last
 * call that was not logged yet, once per call per process, naming key
 * (may be NULL) as the reconcile in flight.  Returns how many lines. */
int sbx_log_refused(const char *key);

/* True in builds whose filter is relaxed for AddressSanitizer. */
bool sbx_relaxed(void);

#endif
