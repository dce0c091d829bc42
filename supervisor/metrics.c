/*
 * metrics.c: renders the Prometheus text page (metrics.h) from struct
 * stats: controller-runtime's reconcile metrics, client-go's workqueue,
 * leader-election and REST-client metrics, the Go client's process_*
 * metrics and our sympozium_worker_* ones; and reads /proc for the
 * process figures at scrape time.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "supervisor/metrics.h"

/* A label set: up to 4 pairs, plus an optional le for buckets. */
struct lbl {
	const char *k[4];
	const char *v[4];
	size_t n;
};

void
met_escape(struct buf *out, const char *v)
{
	for (; v != NULL && *v != '\0'; v++) {
		if (*v == '\\') {
			buf_puts(out, "\\\\");
		} else if (*v == '"') {
			buf_puts(out, "\\\"");
		} else if (*v == '\n') {
			buf_puts(out, "\\n");
		} else {
			buf_putc(out, *v);
		}
	}
}

/* A value as Go prints it: shortest that reads back, +Inf, NaN. */
static void
num(struct buf *b, double v)
{
	char s[64];

	if (isnan(v)) {
		buf_puts(b, "NaN");
	} else if (isinf(v)) {
		buf_puts(b, v > 0 ? "+Inf" : "-Inf");
	} else if (v == floor(v) && fabs(v) < 1e15) {
		buf_printf(b, "%.0f", v);
	} else {
		snprintf(s, sizeof(s), "%.15g", v);
		if (strtod(s, NULL) != v) {
			snprintf(s, sizeof(s), "%.17g", v);
		}
		buf_puts(b, s);
	}
}

static void
family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{labels[,le="le"]} v */
static void
line(struct buf *b, const char *name, const struct lbl *l, const char *le,
        double v)
{
	buf_puts(b, name);
	if ((l != NULL && l->n > 0) || le != NULL) {
		buf_putc(b, '{');
		for (size_t i = 0; l != NULL && i < l->n; i++) {
			buf_printf(b, "%s%s=\"", i > 0 ? "," : "", l->k[i]);
			met_escape(b, l->v[i]);
			buf_putc(b, '"');
		}
		if (le != NULL) {
			buf_printf(b, "%sle=\"%s\"",
			        l != NULL && l->n > 0 ? "," : "", le);
		}
		buf_putc(b, '}');
	}
	buf_putc(b, ' ');
	num(b, v);
	buf_putc(b, '\n');
}

static struct lbl
lbl1(const char *k, const char *v)
{
	return ((struct lbl) { .k = { k }, .v = { v }, .n = 1 });
}

static struct lbl
lbl2(const char *k1, const char *v1, const char *k2, const char *v2)
{
	return ((struct lbl) { .k = { k1, k2 }, .v = { v1, v2 }, .n = 2 });
}

/* A histogram's _bucket (cumulative, then +Inf), _sum and _count lines
 * (counts per bucket, nb bounds plus +Inf). */
static void
hist(struct buf *b, const char *name, const struct lbl *l,
        const double *bounds, size_t nb, const uint64_t *counts,
        uint64_t count, double sum)
{
	char n[160], le[32];
	uint64_t cum = 0;

	snprintf(n, sizeof(n), "%s_bucket", name);
	for (size_t i = 0; i < nb; i++) {
		cum += counts[i];
		snprintf(le, sizeof(le), "%g", bounds[i]);
		line(b, n, l, le, (double)cum);
	}
	line(b, n, l, "+Inf", (double)count);
	snprintf(n, sizeof(n), "%s_sum", name);
	line(b, n, l, NULL, sum);
	snprintf(n, sizeof(n), "%s_count", name);
	line(b, n, l, NULL, (double)count);
}

/* ---- controller-runtime ---- */

static void
reconciles(const struct stats *st, struct buf *b)
{
	family(b, "controller_runtime_reconcile_total", "counter",
	        "Total number of reconciliations per controller");
	for (size_t i = 0; i < st->nctls; i++) {
		for (int r = 0; r < STATS_NRESULTS; r++) {
			struct lbl l = lbl2("controller", st->ctls[i].name,
			        "result", stats_result_label(r));
			line(b, "controller_runtime_reconcile_total", &l, NULL,
			        (double)st->ctls[i].results[r]);
		}
	}
	family(b, "controller_runtime_reconcile_errors_total", "counter",
	        "Total number of reconciliation errors per controller");
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, "controller_runtime_reconcile_errors_total", &l, NULL,
		        (double)st->ctls[i].results[STATS_ERROR]);
	}
	family(b, "controller_runtime_terminal_reconcile_errors_total",
	        "counter",
	        "Total number of terminal reconciliation errors per "
	        "controller");
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, "controller_runtime_terminal_reconcile_errors_total",
		        &l, NULL, (double)st->ctls[i].terminal);
	}
	family(b, "controller_runtime_reconcile_panics_total", "counter",
	        "Total number of reconciliation panics per controller");
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, "controller_runtime_reconcile_panics_total", &l, NULL,
		        (double)st->ctls[i].panics);
	}
	family(b, "controller_runtime_reconcile_time_seconds", "histogram",
	        "Length of time per reconciliation per controller");
	for (size_t i = 0; i < st->nctls; i++) {
		const struct stats_hist *h = &st->ctls[i].latency;
		struct lbl l = lbl1("controller", st->ctls[i].name);
		hist(b, "controller_runtime_reconcile_time_seconds", &l,
		        stats_buckets, STATS_NBUCKETS, h->counts, h->count,
		        h->sum_s);
	}
}

static int
busy_workers(const struct stats *st, const char *ctl)
{
	int n = 0;

	for (size_t i = 0; i < st->nworkers; i++) {
		n += st->workers[i].state == STATS_W_BUSY
		        && strcmp(st->workers[i].controller, ctl) == 0;
	}
	return (n);
}

static void
workers_gauges(const struct stats *st, struct buf *b)
{
	family(b, "controller_runtime_max_concurrent_reconciles", "gauge",
	        "Maximum number of concurrent reconciles per controller");
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, "controller_runtime_max_concurrent_reconciles", &l,
		        NULL, st->ctls[i].workers);
	}
	family(b, "controller_runtime_active_workers", "gauge",
	        "Number of currently used workers per controller");
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, "controller_runtime_active_workers", &l, NULL,
		        busy_workers(st, st->ctls[i].name));
	}
}

/* ---- workqueue ---- */

enum qfig { Q_DEPTH, Q_ADDS, Q_RETRIES, Q_UNFINISHED, Q_LONGEST };

static const struct {
	const char *name, *type, *help;
} qfam[] = {
	{ "workqueue_depth", "gauge", "Current depth of workqueue" },
	{ "workqueue_adds_total", "counter",
	        "Total number of adds handled by workqueue" },
	{ "workqueue_retries_total", "counter",
	        "Total number of retries handled by workqueue" },
	{ "workqueue_unfinished_work_seconds", "gauge",
	        "How many seconds of work has been done that is in progress "
	        "and hasn't been observed by work_duration" },
	{ "workqueue_longest_running_processor_seconds", "gauge",
	        "How many seconds has the longest running processor for "
	        "workqueue been running" },
};

static double
qvalue(const struct stats_ctl *c, enum qfig f)
{
	switch (f) {
	case Q_DEPTH:
		return ((double)c->depth);
	case Q_ADDS:
		return ((double)c->adds);
	case Q_RETRIES:
		return ((double)c->retries);
	case Q_UNFINISHED:
		return ((double)c->unfinished_ms / 1000.0);
	default:
		return ((double)c->longest_ms / 1000.0);
	}
}

static void
workqueue(const struct stats *st, struct buf *b)
{
	for (size_t f = 0; f < sizeof(qfam) / sizeof(qfam[0]); f++) {
		family(b, qfam[f].name, qfam[f].type, qfam[f].help);
		for (size_t i = 0; i < st->nctls; i++) {
			const struct stats_ctl *c = &st->ctls[i];
			struct lbl l
			        = lbl2("controller", c->name, "name", c->name);
			line(b, qfam[f].name, &l, NULL, qvalue(c, f));
		}
	}
	family(b, "workqueue_queue_duration_seconds", "histogram",
	        "How long in seconds an item stays in workqueue before "
	        "being requested");
	for (size_t i = 0; i < st->nctls; i++) {
		const struct stats_ctl *c = &st->ctls[i];
		struct lbl l = lbl2("controller", c->name, "name", c->name);
		hist(b, "workqueue_queue_duration_seconds", &l, queue_buckets,
		        QUEUE_NBUCKETS, c->wait.counts, c->wait.count,
		        c->wait.sum_s);
	}
	family(b, "workqueue_work_duration_seconds", "histogram",
	        "How long in seconds processing an item from workqueue "
	        "takes");
	for (size_t i = 0; i < st->nctls; i++) {
		const struct stats_ctl *c = &st->ctls[i];
		struct lbl l = lbl2("controller", c->name, "name", c->name);
		hist(b, "workqueue_work_duration_seconds", &l, queue_buckets,
		        QUEUE_NBUCKETS, c->work.counts, c->work.count,
		        c->work.sum_s);
	}
}

/* ---- leader election, REST client ---- */

/* The HTTP method of a verb (LIST, WATCH and LOG are GETs). */
static const char *
method(enum kapi_verb v)
{
	return (v == KAPI_LIST || v == KAPI_WATCH || v == KAPI_LOG
	                ? "GET"
	                : stats_verb_name(v));
}

struct agg {
	const char *method;
	long code;
	uint64_t n;
};

static void
rest(const struct stats *st, const struct met_ctx *ctx, struct buf *b)
{
	struct agg agg[STATS_API_SLOTS];
	size_t na = 0;

	for (size_t i = 0; i < st->napi; i++) {
		const char *m = method(st->api[i].verb);
		size_t j = 0;
		while (j < na
		        && !(agg[j].code == st->api[i].code
		                && strcmp(agg[j].method, m) == 0)) {
			j++;
		}
		if (j == na) {
			agg[na++] = (struct agg) { m, st->api[i].code, 0 };
		}
		agg[j].n += st->api[i].count;
	}
	family(b, "rest_client_requests_total", "counter",
	        "Number of HTTP requests, partitioned by status code, method, "
	        "and host.");
	for (size_t j = 0; j < na; j++) {
		char code[24];
		snprintf(code, sizeof(code), "%ld", agg[j].code);
		struct lbl l = { .k = { "code", "host", "method" },
			.v = { agg[j].code == 0 ? "<error>" : code,
			        ctx->host != NULL ? ctx->host : "",
			        agg[j].method },
			.n = 3 };
		line(b, "rest_client_requests_total", &l, NULL,
		        (double)agg[j].n);
	}
}

static void
leader(const struct stats *st, const struct met_ctx *ctx, struct buf *b)
{
	struct lbl l = lbl1("name", ctx->lease != NULL ? ctx->lease : "");

	family(b, "leader_election_master_status", "gauge",
	        "Gauge of if the reporting system is master of the relevant "
	        "lease, 0 indicates backup, 1 indicates master. 'name' is the "
	        "string used to identify the lease. Please make sure to group "
	        "by name.");
	line(b, "leader_election_master_status", &l, NULL, st->leading);
	family(b, "leader_election_slowpath_total", "counter",
	        "Total number of slow path exercised in renewing leader "
	        "leases. 'name' is the string used to identify the lease. "
	        "Please make sure to group by name.");
	line(b, "leader_election_slowpath_total", &l, NULL,
	        (double)st->lease_slowpath);
}

/* ---- workers ---- */

static void
worker_name(const struct stats_worker *w, char *out, size_t len)
{
	snprintf(out, len, "%s-%d", w->controller, w->index);
}

static void
worker_states(const struct stats *st, struct buf *b)
{
	char wn[STATS_NAME_MAX + 16];

	family(b, "sympozium_worker_state", "gauge",
	        "The worker process's state: 1 for the current one");
	for (size_t i = 0; i < st->nworkers; i++) {
		const struct stats_worker *w = &st->workers[i];
		worker_name(w, wn, sizeof(wn));
		for (int s = 0; s < STATS_W_NSTATES; s++) {
			struct lbl l
			        = { .k = { "controller", "state", "worker" },
				          .v = { w->controller,
				                  stats_wstate_name(s), wn },
				          .n = 3 };
			line(b, "sympozium_worker_state", &l, NULL,
			        w->state == (enum stats_wstate)s);
		}
	}
	family(b, "sympozium_worker_restarts_total", "counter",
	        "Exits of the worker process (each is followed by a restart)");
	for (size_t i = 0; i < st->nworkers; i++) {
		const struct stats_worker *w = &st->workers[i];
		worker_name(w, wn, sizeof(wn));
		struct lbl l = lbl2("controller", w->controller, "worker", wn);
		line(b, "sympozium_worker_restarts_total", &l, NULL,
		        (double)w->restarts);
	}
}

static void
worker_procs(const struct stats *st, const struct met_ctx *ctx, struct buf *b,
        bool cpu)
{
	char wn[STATS_NAME_MAX + 16];
	const char *name = cpu ? "sympozium_worker_cpu_seconds_total"
	                       : "sympozium_worker_resident_memory_bytes";

	family(b, name, cpu ? "counter" : "gauge",
	        cpu ? "User and system CPU time of the worker process in "
	              "seconds (since its last start)"
	            : "Resident memory of the worker process in bytes");
	for (size_t i = 0; ctx->workers != NULL && i < st->nworkers; i++) {
		const struct stats_worker *w = &st->workers[i];
		const struct met_proc *p = &ctx->workers[i];
		if (w->pid <= 0 || !p->ok) {
			continue;
		}
		worker_name(w, wn, sizeof(wn));
		struct lbl l = lbl2("controller", w->controller, "worker", wn);
		line(b, name, &l, NULL, cpu ? p->cpu_s : p->rss_bytes);
	}
}

static void
quarantine(const struct stats *st, struct buf *b)
{
	family(b, "sympozium_worker_quarantined_keys", "gauge",
	        "Keys held back because reconciling them killed the "
	        "controller's worker repeatedly");
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, "sympozium_worker_quarantined_keys", &l, NULL,
		        (double)st->ctls[i].quarantined);
	}
}

static void
violations(const struct stats *st, struct buf *b)
{
	static const char name[] = "sympozium_policy_violations_total";

	family(b, name, "counter",
	        "Worker requests refused by the supervisor's policy, by "
	        "controller and rule (the worker killed, the key "
	        "quarantined)");
	for (size_t i = 0; i < st->nctls; i++) {
		const struct stats_ctl *c = &st->ctls[i];
		for (size_t j = 0; j < STATS_RULES_MAX && c->rules[j].rule[0];
		        j++) {
			struct lbl l = lbl2("controller", c->name, "rule",
			        c->rules[j].rule);
			line(b, name, &l, NULL, (double)c->rules[j].count);
		}
	}
}

/* Shadow mode's writes not sent, and its pending records (only under
 * --shadow). */
static void
shadow(const struct stats *st, struct buf *b)
{
	static const char name[] = "sympozium_shadow_writes_total";

	if (!st->shadow) {
		return;
	}
	family(b, name, "counter",
	        "Writes shadow mode did not send, by controller, verb and "
	        "resource");
	for (size_t i = 0; i < st->nshadow; i++) {
		const struct stats_shadow *r = &st->shadow_w[i];
		struct lbl l = { { "controller", "verb", "resource" },
			{ r->controller, r->verb, r->resource }, 3 };
		line(b, name, &l, NULL, (double)r->count);
	}
	family(b, "sympozium_shadow_pending_writes", "gauge",
	        "Objects shadow mode would write now (the latest write per "
	        "object that would change it)");
	line(b, "sympozium_shadow_pending_writes", NULL, NULL,
	        (double)st->shadow_pending);
	family(b, "sympozium_shadow_dropped_records_total", "counter",
	        "Pending writes not recorded: the record table was full");
	line(b, "sympozium_shadow_dropped_records_total", NULL, NULL,
	        (double)st->shadow_dropped);
}

/* The OpenTelemetry exporter (only when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set). */
static void
otlp(const struct met_ctx *ctx, struct buf *b)
{
	static const char *const sig[] = { "metrics", "traces", "logs" };
	static const char ex[] = "sympozium_otlp_exports_total";
	static const char dr[] = "sympozium_otlp_dropped_total";
	const struct met_otel *o = ctx->otel;

	if (o == NULL) {
		return;
	}
	family(b, ex, "counter",
	        "OTLP export requests sent to the collector, by signal and "
	        "result (failed: after the retries)");
	for (int i = 0; i < 3; i++) {
		struct lbl ok
		        = { { "signal", "result" }, { sig[i], "ok" }, 2 };
		struct lbl ko
		        = { { "signal", "result" }, { sig[i], "failed" }, 2 };

		line(b, ex, &ok, NULL, (double)o->sent[i]);
		line(b, ex, &ko, NULL, (double)o->failed[i]);
	}
	family(b, dr, "counter",
	        "Telemetry not exported, by reason: an export over the "
	        "exporter's queue, a measurement over the series bound, a "
	        "span or log record over its buffer");
	{
		struct lbl q = { { "reason" }, { "queue" }, 1 };
		struct lbl se = { { "reason" }, { "series" }, 1 };
		struct lbl sp = { { "reason" }, { "spans" }, 1 };
		struct lbl lg = { { "reason" }, { "logs" }, 1 };

		line(b, dr, &q, NULL, (double)o->dropped_queue);
		line(b, dr, &se, NULL, (double)o->dropped_series);
		line(b, dr, &sp, NULL, (double)o->dropped_items[1]);
		line(b, dr, &lg, NULL, (double)o->dropped_items[2]);
	}
}

/* One 0/1 or counter sample per controller. */
static void
per_ctl(const struct stats *st, struct buf *b, const char *name,
        const char *type, const char *help,
        double (*value)(const struct stats_ctl *))
{
	family(b, name, type, help);
	for (size_t i = 0; i < st->nctls; i++) {
		struct lbl l = lbl1("controller", st->ctls[i].name);
		line(b, name, &l, NULL, value(&st->ctls[i]));
	}
}

static double
is_degraded(const struct stats_ctl *c)
{
	return (c->fault == FAULT_DEGRADED);
}

static double
is_failed(const struct stats_ctl *c)
{
	return (c->fault == FAULT_FAILED);
}

static double
faults(const struct stats_ctl *c)
{
	return ((double)c->faults);
}

static void
controller_faults(const struct stats *st, struct buf *b)
{
	per_ctl(st, b, "sympozium_controller_degraded", "gauge",
	        "1 while the controller is degraded: its workers died on "
	        "several different keys in a row (a controller fault)",
	        is_degraded);
	per_ctl(st, b, "sympozium_controller_failed", "gauge",
	        "1 while the controller is stopped: a worker exited with the "
	        "permanent-failure code and is not restarted",
	        is_failed);
	per_ctl(st, b, "sympozium_controller_faults_total", "counter",
	        "Times the controller became degraded", faults);
}

static void
caches(const struct stats *st, struct buf *b)
{
	family(b, "sympozium_cache_age_seconds", "gauge",
	        "Time since the watch cache of a resource was last known to "
	        "hold what the API server holds (0 while its watch is open)");
	for (size_t i = 0; i < st->nkinds; i++) {
		int64_t age = stats_resource_age(st, i);
		struct lbl l = lbl1("resource", st->kinds[i].resource);
		if (age >= 0 && st->kinds[i].resource[0] != '\0') {
			line(b, "sympozium_cache_age_seconds", &l, NULL,
			        (double)age / 1000.0);
		}
	}
}

/* ---- the supervisor's process ---- */

static void
process(const struct stats *st, const struct met_ctx *ctx, struct buf *b)
{
	const struct met_proc *p = &ctx->self;

	family(b, "process_cpu_seconds_total", "counter",
	        "Total user and system CPU time spent in seconds.");
	if (p->ok) {
		line(b, "process_cpu_seconds_total", NULL, NULL, p->cpu_s);
	}
	family(b, "process_resident_memory_bytes", "gauge",
	        "Resident memory size in bytes.");
	if (p->ok) {
		line(b, "process_resident_memory_bytes", NULL, NULL,
		        p->rss_bytes);
	}
	family(b, "process_virtual_memory_bytes", "gauge",
	        "Virtual memory size in bytes.");
	if (p->ok) {
		line(b, "process_virtual_memory_bytes", NULL, NULL,
		        p->vsize_bytes);
	}
	family(b, "process_open_fds", "gauge",
	        "Number of open file descriptors.");
	if (p->open_fds >= 0) {
		line(b, "process_open_fds", NULL, NULL, p->open_fds);
	}
	family(b, "process_max_fds", "gauge",
	        "Maximum number of open file descriptors.");
	if (p->max_fds >= 0) {
		line(b, "process_max_fds", NULL, NULL, p->max_fds);
	}
	family(b, "process_start_time_seconds", "gauge",
	        "Start time of the process since unix epoch in seconds.");
	line(b, "process_start_time_seconds", NULL, NULL,
	        (double)st->start_unix_ms / 1000.0);
}

void
met_render(const struct stats *st, const struct met_ctx *ctx, struct buf *out)
{
	reconciles(st, out);
	workers_gauges(st, out);
	workqueue(st, out);
	leader(st, ctx, out);
	rest(st, ctx, out);
	worker_states(st, out);
	worker_procs(st, ctx, out, false);
	worker_procs(st, ctx, out, true);
	quarantine(st, out);
	violations(st, out);
	controller_faults(st, out);
	caches(st, out);
	shadow(st, out);
	otlp(ctx, out);
	process(st, ctx, out);
}

/* ---- /proc ---- */

static int
read_small(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (f == NULL) {
		return (-1);
	}
	n = fread(out, 1, len - 1, f);
	fclose(f);
	out[n] = '\0';
	return (n > 0 ? 0 : -1);
}

/* utime, stime (fields 14, 15) and vsize (23) after the ")" of comm. */
static int
parse_stat(const char *text, struct met_proc *p)
{
	const char *s = strrchr(text, ')');
	unsigned long long ut, st, vs;
	long tck = sysconf(_SC_CLK_TCK);

	if (s == NULL || tck <= 0
	        || sscanf(s + 1,
	                   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	                   "%llu %llu %*d %*d %*d %*d %*d %*d %*u %llu",
	                   &ut, &st, &vs)
	                != 3) {
		return (-1);
	}
	p->cpu_s = (double)(ut + st) / (double)tck;
	p->vsize_bytes = (double)vs;
	return (0);
}

static double
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	double n = 0;

	if (d == NULL) {
		return (-1);
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return (n - 1); /* the directory's own descriptor */
}

int
met_proc_read(pid_t pid, struct met_proc *p)
{
	char path[64], text[1024];
	unsigned long long size, res;
	struct rlimit rl;

	*p = (struct met_proc) { .open_fds = -1, .max_fds = -1 };
	if (pid == 0) {
		p->open_fds = count_fds();
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0
		        && rl.rlim_cur != RLIM_INFINITY) {
			p->max_fds = (double)rl.rlim_cur;
		}
	}
	snprintf(path, sizeof(path), "/proc/%s/stat", "self");
	if (pid != 0) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	}
	if (read_small(path, text, sizeof(text)) != 0
	        || parse_stat(text, p) != 0) {
		return (-1);
	}
	snprintf(path + strlen(path) - 4, 6, "statm");
	if (read_small(path, text, sizeof(text)) != 0
	        || sscanf(text, "%llu %llu", &size, &res) != 2) {
		return (-1);
	}
	p->rss_bytes = (double)res * (double)sysconf(_SC_PAGESIZE);
	p->ok = true;
	return (0);
}

void
met_host(const char *url, char *out, size_t len)
{
	const char *h = url != NULL ? strstr(url, "://") : NULL;
	size_t n;

	h = h != NULL ? h + 3 : (url != NULL ? url : "");
	n = strcspn(h, "/?#");
	snprintf(out, len, "%.*s", (int)n, h);
}
