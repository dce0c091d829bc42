/*
 * metrics.h: the Prometheus /metrics page (text format 0.0.4) rendered
 * from struct stats (stats.h) with controller-runtime's and client-go's
 * metric names and labels (kube-api.md E.7), the Go client's process_*
 * figures, and our per-worker process metrics.  The renderer is pure;
 * met_proc_read() is the only I/O (/proc at scrape time).  Prefix met_.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"
#include "supervisor/stats.h"

/* One process's figures from /proc; ok false: unreadable (the samples
 * are left out). */
struct met_proc {
	bool ok;
	double rss_bytes;
	double vsize_bytes;
	double cpu_s;    /* user + system */
	double open_fds; /* -1: unknown (read for the supervisor only) */
	double max_fds;  /* -1: unknown */
};

/* The OpenTelemetry exporter's figures (otel.h, egress.h). */
struct met_otel {
	uint64_t sent[3], failed[3]; /* metrics, traces, logs exports */
	uint64_t dropped_queue;      /* exports not sent: queue full */
	uint64_t dropped_series;     /* measurements over the series bound */
	uint64_t dropped_items[3];   /* spans, records over the buffer */
};

/* What the page needs besides st. */
struct met_ctx {
	const struct met_otel *otel; /* NULL: telemetry off */
	const char *host;     /* rest_client_requests_total's host label */
	const char *lease;    /* leader_election_master_status's name */
	struct met_proc self; /* the supervisor (process_*) */
	const struct met_proc *workers; /* [st->nworkers], NULL: none */
};

/* Appends the whole page to out.  Every family has its HELP and TYPE
 * lines before its samples; label values are escaped. */
void met_render(
        const struct stats *st, const struct met_ctx *ctx, struct buf *out);

/* Reads pid's /proc/PID/stat and statm (pid 0: this process, with its
 * open and maximum descriptors too).  Returns 0, or -1 (p->ok false). */
int met_proc_read(pid_t pid, struct met_proc *p);

/* The host:port of an API server URL ("https://h:6443/x" -> "h:6443"),
 * into out (len bytes); "" when there is none. */
void met_host(const char *url, char *out, size_t len);

/* Appends v escaped as a label value (\\, \", \n). */
void met_escape(struct buf *out, const char *v);

#endif
