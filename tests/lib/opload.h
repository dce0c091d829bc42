/*
 * opload.h: what the operator benchmarks and the scale suite share to
 * load kubesim and to measure the supervisor: a plain parallel libcurl
 * client (OPLOAD_CLIENTS threads sending n requests a caller builds), the
 * memory figures of a process from /proc (PSS, peak RSS), and the raw JSON
 * the supervisor's watches select (managedFields stripped), which the
 * memory target (docs/benchmarks.md) is stated against.
 *
 * Functions print the reason of a failure on stderr and never call
 * cmocka.  The caller runs curl_global_init() first.
 */
#ifndef OPLOAD_H
#define OPLOAD_H

#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"

#define OPLOAD_CLIENTS 4

/* Fills the path (with the query), body, method (default "POST") and
 * Content-Type (default "application/json") of request i. */
typedef void opload_build_fn(void *arg, int i, struct buf *path,
        struct buf *body, const char **method, const char **ctype);
/* Gets the body of the 2xx answer to request i (from any thread). */
typedef void opload_answer_fn(void *arg, int i, const char *body);

/* Sends requests 0..n-1 to base over OPLOAD_CLIENTS threads, with
 * user_agent, each timing out after 30 s; answer may be NULL.  Returns
 * the elapsed seconds, or -1 when a request failed (the first three
 * failures printed). */
double opload_send(const char *base, const char *user_agent, int n,
        opload_build_fn *build, opload_answer_fn *answer, void *arg);

/* Pss of pid in KiB (smaps_rollup), or -1. */
long opload_pss_kib(pid_t pid);
/* VmHWM (peak resident set) of pid in KiB, or -1. */
long opload_hwm_kib(pid_t pid);

/* The raw JSON of what the supervisor's watches select. */
struct opload_raw {
	size_t objs, bytes;   /* every watch (what the caches hold) */
	size_t uobjs, ubytes; /* each object once */
};

/* Lists every watch of the supervisor (supervisor/ctrl.c, every
 * controller) on base, cluster-wide.  Returns 0, or -1. */
int opload_raw_json(const char *base, struct opload_raw *out);
/* The supervisor's memory target for raw: 1.5 x raw + 8 MiB, in bytes. */
double opload_sup_limit(const struct opload_raw *raw);

#endif
