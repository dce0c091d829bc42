/*
 * sbxrep.h: the sandbox kill report, the one record a worker killed by
 * its seccomp filter writes before it dies (workers/sandbox.h), and the
 * supervisor's reading of it into the exit cause.  Prefix sbxrep_.
 *
 * The supervisor gives every worker the write end of a pipe as descriptor
 * SBXREP_FD and says so in the environment (SBXREP_ENV=3).  The worker's
 * SIGSYS handler writes one SBXREP_LEN-byte record there with one
 * write(2) (async-signal-safe, sbxrep_encode()) and then dies by SIGSYS.
 * When the supervisor reaps a worker killed by SIGSYS it reads the pipe
 * (never blocking) and, when the record is valid, the exit cause becomes
 * "signal SIGSYS: killed by its sandbox: system call openat (257)".
 *
 * The worker is not trusted: a record is valid only when it has the
 * magic, the check word matches, the architecture is this machine's and
 * libseccomp knows the number; anything else is ignored (the cause stays
 * "signal SIGSYS").
 *
 * Record (big-endian): "SBX1", uint32 syscall number, uint32 audit
 * architecture (AUDIT_ARCH_*, as in siginfo's si_arch), uint32 check
 * (the bitwise complement of number ^ architecture).
 */
#ifndef SBXREP_H
#define SBXREP_H

#include <stddef.h>
#include <stdint.h>

#define SBXREP_ENV "SYMPOZIUM_WORKER_REPORT_FD"
#define SBXREP_FD  3
#define SBXREP_LEN 16
/* What every sandbox exit cause contains (tests and Events look for it). */
#define SBXREP_CAUSE "killed by its sandbox"

/* Writes the record of system call nr on arch into out.  Pure and
 * async-signal-safe. */
void sbxrep_encode(unsigned char out[SBXREP_LEN], uint32_t nr, uint32_t arch);

/* Decodes the first record of buf (n bytes).  Returns 0 with *nr and
 * *arch, or -1 when n is short or the record is not valid (magic, check
 * word).  Pure. */
int sbxrep_decode(
        const unsigned char *buf, size_t n, uint32_t *nr, uint32_t *arch);

/* "killed by its sandbox: system call NAME (NR)" into out (len bytes)
 * for the first record of buf, when it is valid and names a system call
 * of this machine's architecture.  Returns out, or NULL. */
char *sbxrep_cause(const unsigned char *buf, size_t n, char *out, size_t len);

/* Reads what is waiting on fd (non-blocking; at most a few records) and
 * returns sbxrep_cause() of it, NULL when there is nothing valid. */
char *sbxrep_read_cause(int fd, char *out, size_t len);

#endif
