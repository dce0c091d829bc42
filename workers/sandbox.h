/*
 * sandbox.h: the worker sandbox (issue 6 item 5), entered by every worker
 * right after its HELLO/READY handshake, once nng's threads and the
 * connected pipe exist.  Prefix sbx_.  See docs-sandbox.md.
 *
 * sbx_enter() does, in order: keeps only the environment variables the
 * reconcilers read (SYMPOZIUM_*, OTEL_EXPORTER_OTLP_ENDPOINT, TZDIR) and
 * drops the rest; closes every descriptor but stdout, stderr and nng's own
 * (sockets, pipes, eventfd, epoll); chdir("/"); tight rlimits (NOFILE to
 * what is open, NPROC 0, FSIZE 0, CORE 0, DATA to what is mapped plus
 * SBX_DATA_HEADROOM); PR_SET_NO_NEW_PRIVS; then a seccomp allow-list
 * (libseccomp) whose default action kills the process (SIGSYS): no file
 * or socket is ever opened again, no process created or program run.
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
	SBX_ON,  /* the default: violations kill the process (SIGSYS) */
	SBX_LOG, /* everything but the filter; violations are only logged
	          * by the kernel (SCMP_ACT_LOG): to find missing calls */
};

/* The mode named by s ("on", "off", "log", also "1"/"0", "true"/"false");
 * NULL or "" is SBX_ON.  -1 when s names none. */
int sbx_parse_mode(const char *s, enum sbx_mode *mode);

/* Enters the sandbox in mode (SBX_OFF: returns 0 at once).  Returns 0, or
 * -1 with a message in err (the caller must then exit: a worker never runs
 * half-sandboxed). */
int sbx_enter(enum sbx_mode mode, char *err, size_t errlen);

/* Installs only the seccomp filter (and PR_SET_NO_NEW_PRIVS), with the
 * kill default (log: SCMP_ACT_LOG).  For sbx_enter() and the unit tests.
 * Returns 0, or -1 with a message in err. */
int sbx_filter_install(bool log, char *err, size_t errlen);

/* True in builds whose filter is relaxed for AddressSanitizer. */
bool sbx_relaxed(void);

#endif
