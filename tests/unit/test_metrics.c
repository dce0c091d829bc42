/*
 * test_metrics.c: the Prometheus page (supervisor/metrics.c) parsed back
 * with a small text-format parser: every line a comment or a sample,
 * HELP and TYPE before a family's samples, families contiguous, label
 * values escaped, histogram buckets cumulative and ending in +Inf equal
 * to _count; the required names and values from a stats sample; the
 * workqueue duration histograms and processing ages (queue.c); /proc
 * reading and the host label.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "supervisor/metrics.h"
#include "supervisor/queue.h"
#include "supervisor/stats.h"
#include "tests/lib/sdproc.h"

/* ---- a small Prometheus text parser ---- */

#define MAXS 4096
#define MAXF 128

struct sample {
	char name[128];
	char labels[512]; /* canonical, without le */
	char le[32];
	double v;
};

struct fam {
	char name[128];
	char type[16];
	bool help;
};

struct page {
	struct sample s[MAXS];
	size_t ns;
	struct fam f[MAXF];
	size_t nf;
};

static struct fam *
fam_find(struct page *p, const char *name)
{
	for (size_t i = 0; i < p->nf; i++) {
		if (strcmp(p->f[i].name, name) == 0) {
			return (&p->f[i]);
		}
	}
	return (NULL);
}

/* The family a sample name belongs to (histogram suffixes). */
static struct fam *
fam_of(struct page *p, const char *name)
{
	static const char *const suf[] = { "_bucket", "_sum", "_count" };
	struct fam *f = fam_find(p, name);
	char base[128];

	for (size_t i = 0; f == NULL && i < 3; i++) {
		size_t n = strlen(name), k = strlen(suf[i]);
		if (n > k && strcmp(name + n - k, suf[i]) == 0) {
			snprintf(base, sizeof(base), "%.*s", (int)(n - k),
			        name);
			f = fam_find(p, base);
			if (f != NULL && strcmp(f->type, "histogram") != 0) {
				f = NULL;
			}
		}
	}
	return (f);
}

/* Parses {k="v",...}; returns the rest or NULL. */
static const char *
parse_labels(const char *s, struct sample *out)
{
	struct buf b = BUF_INIT;

	s++;
	while (*s != '}') {
		char key[64], val[256];
		size_t k = 0, v = 0;
		while ((*s >= 'a' && *s <= 'z') || *s == '_'
		        || (*s >= 'A' && *s <= 'Z')) {
			key[k++] = *s++;
		}
		key[k] = '\0';
		if (k == 0 || s[0] != '=' || s[1] != '"') {
			return (NULL);
		}
		for (s += 2; *s != '"'; s++) {
			if (*s == '\0' || *s == '\n') {
				return (NULL);
			}
			if (*s == '\\') {
				s++;
				if (*s != '\\' && *s != '"' && *s != 'n') {
					return (NULL);
				}
				val[v++] = *s == 'n' ? '\n' : *s;
			} else {
				val[v++] = *s;
			}
		}
		val[v] = '\0';
		s++;
		if (strcmp(key, "le") == 0) {
			snprintf(out->le, sizeof(out->le), "%.31s", val);
		} else {
			buf_printf(&b, "%s=%s;", key, val);
		}
		if (*s == ',') {
			s++;
		} else if (*s != '}') {
			buf_fini(&b);
			return (NULL);
		}
	}
	snprintf(out->labels, sizeof(out->labels), "%s",
	        b.len > 0 ? buf_str(&b) : "");
	buf_fini(&b);
	return (s + 1);
}

static int
parse_comment(struct page *p, const char *line, const char **last)
{
	char kind[8], name[128], rest[512];
	struct fam *f;

	if (sscanf(line, "# %7s %127s %511[^\n]", kind, name, rest) != 3) {
		return (-1);
	}
	f = fam_find(p, name);
	if (f == NULL) {
		if (p->nf == MAXF) {
			return (-1);
		}
		f = &p->f[p->nf++];
		snprintf(f->name, sizeof(f->name), "%s", name);
	}
	if (strcmp(kind, "HELP") == 0) {
		if (f->help || f->type[0] != '\0') {
			return (-1); /* twice, or after TYPE */
		}
		f->help = true;
	} else if (strcmp(kind, "TYPE") == 0) {
		if (f->type[0] != '\0') {
			return (-1);
		}
		snprintf(f->type, sizeof(f->type), "%.15s", rest);
	} else {
		return (-1);
	}
	*last = f->name;
	return (0);
}

static int
parse_sample(struct page *p, const char *line, const char **last)
{
	struct sample *s = &p->s[p->ns];
	const char *c = line;
	size_t n = 0;
	char *end;
	struct fam *f;

	memset(s, 0, sizeof(*s));
	while ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')
	        || *c == '_' || *c == ':'
	        || (n > 0 && *c >= '0' && *c <= '9')) {
		s->name[n++] = *c++;
	}
	if (n == 0 || p->ns == MAXS) {
		return (-1);
	}
	if (*c == '{' && (c = parse_labels(c, s)) == NULL) {
		return (-1);
	}
	if (*c != ' ') {
		return (-1);
	}
	s->v = strtod(c + 1, &end);
	if (end == c + 1 || *end != '\0') {
		return (-1);
	}
	f = fam_of(p, s->name);
	/* HELP and TYPE first; a family's samples together */
	if (f == NULL || !f->help || f->type[0] == '\0' || *last == NULL
	        || strcmp(*last, f->name) != 0) {
		return (-1);
	}
	p->ns++;
	return (0);
}

/* Parses text into p; returns 0 or the 1-based line that failed. */
static int
parse_page(const char *text, struct page *p)
{
	char *t = strdup(text), *save = NULL;
	const char *last = NULL;
	int ln = 0, rc = 0;

	memset(p, 0, sizeof(*p));
	assert_true(text[strlen(text) - 1] == '\n');
	for (char *l = strtok_r(t, "\n", &save); l != NULL && rc == 0;
	        l = strtok_r(NULL, "\n", &save)) {
		ln++;
		if ((l[0] == '#' ? parse_comment(p, l, &last)
		                 : parse_sample(p, l, &last))
		        != 0) {
			print_error("bad line %d: %s\n", ln, l);
			rc = ln;
		}
	}
	free(t);
	return (rc);
}

/* Checks every histogram: per label set, buckets cumulative with rising
 * bounds, the last +Inf and equal to _count; a _sum.  Returns the
 * number of label sets checked. */
static size_t
check_histograms(struct page *p)
{
	size_t sets = 0;

	for (size_t i = 0; i < p->ns; i++) {
		struct sample *s = &p->s[i];
		size_t n = strlen(s->name);
		if (n < 7 || strcmp(s->name + n - 7, "_bucket") != 0
		        || (i > 0 && strcmp(p->s[i - 1].name, s->name) == 0
		                && strcmp(p->s[i - 1].labels, s->labels)
		                        == 0)) {
			continue;
		}
		double le = -INFINITY, cum = 0;
		size_t j = i;
		for (; j < p->ns && strcmp(p->s[j].name, s->name) == 0
		        && strcmp(p->s[j].labels, s->labels) == 0;
		        j++) {
			double b = strtod(p->s[j].le, NULL);
			assert_true(p->s[j].le[0] != '\0');
			assert_true(b > le);
			assert_true(p->s[j].v >= cum);
			le = b;
			cum = p->s[j].v;
		}
		assert_string_equal(p->s[j - 1].le, "+Inf");
		char cname[140];
		snprintf(cname, sizeof(cname), "%.*s_count", (int)(n - 7),
		        s->name);
		bool found = false;
		for (size_t k = 0; k < p->ns; k++) {
			if (strcmp(p->s[k].name, cname) == 0
			        && strcmp(p->s[k].labels, s->labels) == 0) {
				assert_true(p->s[k].v == cum);
				found = true;
			}
		}
		assert_true(found);
		sets++;
	}
	return (sets);
}

/* The value of name{labels} (canonical "k=v;..."), or NAN. */
static double
val(const struct page *p, const char *name, const char *labels, const char *le)
{
	for (size_t i = 0; i < p->ns; i++) {
		if (strcmp(p->s[i].name, name) == 0
		        && strcmp(p->s[i].labels, labels) == 0
		        && strcmp(p->s[i].le, le != NULL ? le : "") == 0) {
			return (p->s[i].v);
		}
	}
	return (NAN);
}

/* ---- a stats sample ---- */

static struct stats *
sample_stats(void)
{
	struct stats *st = stats_new(1000, 1700000000123);

	stats_add_ctl(st, "instance");
	stats_add_ctl(st, "we\"ird\\x\ny");
	stats_add_worker(st, "instance", 0);
	stats_add_worker(st, "instance", 1);
	stats_add_worker(st, "we\"ird\\x\ny", 0);
	stats_add_kind(st, "SympoziumInstance", "instance");
	stats_add_kind(st, "SympoziumInstance", "we\"ird\\x\ny");
	for (size_t i = 0; i < 2; i++) {
		snprintf(st->kinds[i].resource, sizeof(st->kinds[i].resource),
		        "sympoziuminstances");
		st->kinds[i].age_ms = i == 0 ? 1500 : 42000;
	}
	stats_reconcile(st, "instance", 0, STATS_SUCCESS, 3, NULL, 2000);
	stats_reconcile(st, "instance", 0, STATS_SUCCESS, 120, NULL, 2000);
	stats_reconcile(st, "instance", 1, STATS_ERROR, 70000, "boom", 2000);
	stats_reconcile(st, "instance", 1, STATS_REQUEUE_AFTER, 7, NULL, 2000);
	/* a terminal error (counted as an error too) and a lost key */
	stats_reconcile(st, "instance", 0, STATS_ERROR, 100, "final", 2000);
	stats_terminal(st, "instance");
	stats_lost(st, "instance", "signal SIGSEGV", 100, 2000);
	stats_lease_slowpath(st, 4);
	stats_api(st, KAPI_LIST, 200);
	stats_api(st, KAPI_WATCH, 200);
	stats_api(st, KAPI_GET, 200);
	stats_api(st, KAPI_PATCH, 409);
	stats_api(st, KAPI_CREATE, 0);
	st->leading = true;
	st->workers[0].state = STATS_W_BUSY;
	st->workers[0].pid = 42;
	st->workers[0].restarts = 3;
	st->workers[1].state = STATS_W_READY;
	st->workers[1].pid = 43;
	st->ctls[0].depth = 5;
	st->ctls[0].adds = 9;
	st->ctls[0].retries = 2;
	st->ctls[0].quarantined = 1;
	stats_violation(st, st->ctls[0].name, "not-owned");
	stats_violation(st, st->ctls[0].name, "not-owned");
	stats_violation(st, st->ctls[0].name, "namespace");
	st->ctls[0].fault = FAULT_DEGRADED;
	st->ctls[0].faults = 2;
	st->ctls[0].unfinished_ms = 1500;
	st->ctls[0].longest_ms = 1000;
	st->ctls[0].wait.counts[6] = 2;
	st->ctls[0].wait.count = 2;
	st->ctls[0].wait.sum_s = 0.004;
	return (st);
}

static char *
render(const struct stats *st, bool procs)
{
	struct met_proc wp[3]
	        = { { .ok = true, .rss_bytes = 4096, .cpu_s = 1.5 },
		          { .ok = false },
		          { .ok = true, .rss_bytes = 1, .cpu_s = 1 } };
	struct met_ctx ctx = { .host = "10.0.0.1:6443",
		.lease = "lease-x",
		.workers = procs ? wp : NULL };
	struct buf b = BUF_INIT;

	met_proc_read(0, &ctx.self);
	met_render(st, &ctx, &b);
	return (buf_detach(&b, NULL));
}

static void
test_page_parses(void **state)
{
	struct stats *st = sample_stats();
	struct page *p = malloc(sizeof(*p));
	char *text = render(st, true);

	(void)state;
	assert_int_equal(parse_page(text, p), 0);
	/* 2 reconcile histograms + 2 x 2 workqueue ones */
	assert_int_equal(check_histograms(p), 6);
	for (size_t i = 0; i < p->nf; i++) {
		assert_true(p->f[i].help);
		assert_true(strcmp(p->f[i].type, "counter") == 0
		        || strcmp(p->f[i].type, "gauge") == 0
		        || strcmp(p->f[i].type, "histogram") == 0);
	}
	/* the escaped name came back whole */
	assert_true(val(p, "controller_runtime_reconcile_errors_total",
	                    "controller=we\"ird\\x\ny;", NULL)
	        == 0);
	assert_non_null(strstr(text, "controller=\"we\\\"ird\\\\x\\ny\""));
	free(text);
	free(p);
	stats_free(st);
}

static void
test_required_names(void **state)
{
	struct stats *st = sample_stats();
	struct page *p = malloc(sizeof(*p));
	char *text = render(st, true);
	const char *in = "controller=instance;";
	const char *inq = "controller=instance;name=instance;";

	(void)state;
	assert_int_equal(parse_page(text, p), 0);
	for (size_t i = 0; sdproc_metric_names[i] != NULL; i++) {
		if (fam_find(p, sdproc_metric_names[i]) == NULL) {
			fail_msg("missing %s", sdproc_metric_names[i]);
		}
	}
	assert_true(val(p, "controller_runtime_reconcile_total",
	                    "controller=instance;result=success;", NULL)
	        == 2);
	assert_true(val(p, "controller_runtime_reconcile_total",
	                    "controller=instance;result=requeue_after;", NULL)
	        == 1);
	/* boom, the terminal one and the lost key */
	assert_true(
	        val(p, "controller_runtime_reconcile_errors_total", in, NULL)
	        == 3);
	assert_true(
	        val(p, "controller_runtime_terminal_reconcile_errors_total",
	                in, NULL)
	        == 1);
	assert_true(
	        val(p, "controller_runtime_reconcile_panics_total", in, NULL)
	        == 1);
	assert_true(val(p, "controller_runtime_reconcile_panics_total",
	                    "controller=we\"ird\\x\ny;", NULL)
	        == 0);
	/* 3 ms <= 5 ms; 7, 100, 100, 120 ms <= 150 ms; 70 s only in +Inf */
	assert_true(val(p, "controller_runtime_reconcile_time_seconds_bucket",
	                    in, "0.005")
	        == 1);
	assert_true(val(p, "controller_runtime_reconcile_time_seconds_bucket",
	                    in, "0.15")
	        == 5);
	assert_true(val(p, "controller_runtime_reconcile_time_seconds_bucket",
	                    in, "60")
	        == 5);
	assert_true(val(p, "controller_runtime_reconcile_time_seconds_bucket",
	                    in, "+Inf")
	        == 6);
	assert_true(
	        fabs(val(p, "controller_runtime_reconcile_time_seconds_sum",
	                     in, NULL)
	                - 70.33)
	        < 1e-9);
	assert_true(val(p, "controller_runtime_max_concurrent_reconciles", in,
	                    NULL)
	        == 2);
	assert_true(
	        val(p, "controller_runtime_active_workers", in, NULL) == 1);
	assert_true(val(p, "workqueue_depth", inq, NULL) == 5);
	assert_true(val(p, "workqueue_adds_total", inq, NULL) == 9);
	assert_true(val(p, "workqueue_retries_total", inq, NULL) == 2);
	assert_true(
	        val(p, "workqueue_unfinished_work_seconds", inq, NULL) == 1.5);
	assert_true(val(p, "workqueue_longest_running_processor_seconds", inq,
	                    NULL)
	        == 1);
	assert_true(
	        val(p, "workqueue_queue_duration_seconds_bucket", inq, "0.001")
	        == 0);
	assert_true(
	        val(p, "workqueue_queue_duration_seconds_bucket", inq, "0.01")
	        == 2);
	assert_true(
	        val(p, "workqueue_queue_duration_seconds_bucket", inq, "1e-08")
	        == 0);
	assert_true(
	        val(p, "leader_election_master_status", "name=lease-x;", NULL)
	        == 1);
	assert_true(
	        val(p, "leader_election_slowpath_total", "name=lease-x;", NULL)
	        == 4);
	/* LIST, WATCH and GET are one GET; no answer is "<error>" */
	assert_true(val(p, "rest_client_requests_total",
	                    "code=200;host=10.0.0.1:6443;method=GET;", NULL)
	        == 3);
	assert_true(val(p, "rest_client_requests_total",
	                    "code=409;host=10.0.0.1:6443;method=PATCH;", NULL)
	        == 1);
	assert_true(
	        val(p, "rest_client_requests_total",
	                "code=<error>;host=10.0.0.1:6443;method=POST;", NULL)
	        == 1);
	assert_true(
	        val(p, "sympozium_worker_state",
	                "controller=instance;state=busy;worker=instance-0;",
	                NULL)
	        == 1);
	assert_true(
	        val(p, "sympozium_worker_state",
	                "controller=instance;state=ready;worker=instance-0;",
	                NULL)
	        == 0);
	assert_true(
	        val(p, "sympozium_worker_state",
	                "controller=instance;state=ready;worker=instance-1;",
	                NULL)
	        == 1);
	assert_true(val(p, "sympozium_worker_restarts_total",
	                    "controller=instance;worker=instance-0;", NULL)
	        == 3);
	assert_true(val(p, "sympozium_worker_resident_memory_bytes",
	                    "controller=instance;worker=instance-0;", NULL)
	        == 4096);
	assert_true(val(p, "sympozium_worker_cpu_seconds_total",
	                    "controller=instance;worker=instance-0;", NULL)
	        == 1.5);
	/* unreadable (worker 1) and no process (the third): skipped */
	assert_true(isnan(val(p, "sympozium_worker_cpu_seconds_total",
	        "controller=instance;worker=instance-1;", NULL)));
	assert_true(isnan(val(p, "sympozium_worker_cpu_seconds_total",
	        "controller=we\"ird\\x\ny;worker=we\"ird\\x\ny-0;", NULL)));
	assert_true(
	        val(p, "sympozium_worker_quarantined_keys", in, NULL) == 1);
	assert_true(val(p, "sympozium_policy_violations_total",
	                    "controller=instance;rule=not-owned;", NULL)
	        == 2);
	assert_true(val(p, "sympozium_policy_violations_total",
	                    "controller=instance;rule=namespace;", NULL)
	        == 1);
	assert_int_equal(st->ctls[0].violations, 3);
	assert_true(val(p, "sympozium_controller_degraded", in, NULL) == 1);
	assert_true(val(p, "sympozium_controller_failed", in, NULL) == 0);
	assert_true(
	        val(p, "sympozium_controller_faults_total", in, NULL) == 2);
	/* one series per resource: its oldest cache */
	assert_true(val(p, "sympozium_cache_age_seconds",
	                    "resource=sympoziuminstances;", NULL)
	        == 42);
	assert_true(val(p, "process_start_time_seconds", "", NULL)
	        == 1700000000.123);
	assert_true(val(p, "process_resident_memory_bytes", "", NULL) > 0);
	assert_true(val(p, "process_open_fds", "", NULL) >= 3);
	free(text);
	free(p);
	stats_free(st);
}

static void
test_empty_and_no_procs(void **state)
{
	struct stats *st = stats_new(0, 0);
	struct page *p = malloc(sizeof(*p));
	char *text = render(st, false);

	(void)state;
	assert_int_equal(parse_page(text, p), 0);
	assert_int_equal(check_histograms(p), 0);
	assert_non_null(fam_find(p, "controller_runtime_reconcile_total"));
	assert_true(
	        val(p, "leader_election_master_status", "name=lease-x;", NULL)
	        == 0);
	free(text);
	stats_free(st);
	st = sample_stats();
	text = render(st, false);
	assert_int_equal(parse_page(text, p), 0);
	assert_null(strstr(text, "sympozium_worker_cpu_seconds_total{"));
	free(text);
	free(p);
	stats_free(st);
}

/* Shadow mode's families: absent without --shadow; with it, one counter
 * sample per (controller, verb, resource), the pending gauge (0 too). */
static void
test_otlp_metrics(void **state)
{
	struct stats *st = stats_new(0, 0);
	struct met_otel o = { .sent = { 3, 1, 2 },
		.failed = { 0, 0, 4 },
		.dropped_queue = 5,
		.dropped_series = 6,
		.dropped_items = { 0, 7, 8 } };
	struct met_ctx ctx = { .host = "h", .lease = "l", .otel = NULL };
	struct page *p = malloc(sizeof(*p));
	struct buf b = BUF_INIT;

	(void)state;
	met_render(st, &ctx, &b);
	assert_null(strstr(buf_str(&b), "sympozium_otlp_"));
	buf_reset(&b);
	ctx.otel = &o;
	met_render(st, &ctx, &b);
	assert_int_equal(parse_page(buf_str(&b), p), 0);
	assert_non_null(strstr(buf_str(&b),
	        "sympozium_otlp_exports_total{signal=\"metrics\","
	        "result=\"ok\"} 3\n"));
	assert_non_null(strstr(buf_str(&b),
	        "sympozium_otlp_exports_total{signal=\"logs\","
	        "result=\"failed\"} 4\n"));
	assert_non_null(strstr(buf_str(&b),
	        "sympozium_otlp_dropped_total{reason=\"queue\"} 5\n"));
	assert_non_null(strstr(buf_str(&b),
	        "sympozium_otlp_dropped_total{reason=\"logs\"} 8\n"));
	buf_fini(&b);
	free(p);
	stats_free(st);
}

static void
test_shadow_metrics(void **state)
{
	struct stats *st = stats_new(0, 0);
	struct page *p = malloc(sizeof(*p));
	char *text = render(st, false);

	(void)state;
	assert_null(strstr(text, "sympozium_shadow_"));
	free(text);
	st->shadow = true;
	text = render(st, false);
	assert_int_equal(parse_page(text, p), 0);
	assert_non_null(strstr(text, "\nsympozium_shadow_pending_writes 0\n"));
	assert_null(strstr(text, "sympozium_shadow_writes_total{"));
	free(text);
	stats_shadow(st, "skillpack", "create", "configmaps");
	stats_shadow(st, "skillpack", "create", "configmaps");
	stats_shadow(st, "instance", "update-status",
	        "sympoziuminstances.sympozium.ai");
	st->shadow_pending = 2;
	st->shadow_dropped = 1;
	text = render(st, false);
	assert_int_equal(parse_page(text, p), 0);
	assert_non_null(strstr(text,
	        "sympozium_shadow_writes_total{controller=\"skillpack\","
	        "verb=\"create\",resource=\"configmaps\"} 2\n"));
	assert_non_null(strstr(text,
	        "sympozium_shadow_writes_total{controller=\"instance\","
	        "verb=\"update-status\",resource=\"sympoziuminstances."
	        "sympozium.ai\"} 1\n"));
	assert_non_null(strstr(text, "\nsympozium_shadow_pending_writes 2\n"));
	assert_non_null(
	        strstr(text, "\nsympozium_shadow_dropped_records_total 1\n"));
	free(text);
	free(p);
	stats_free(st);
}

static void
test_queue_durations(void **state)
{
	struct queue *q = queue_new(NULL);
	struct queue_stats qs;
	int64_t sum, max;

	(void)state;
	queue_add(q, "a", 1000);
	queue_add(q, "b", 1000);
	assert_string_equal(queue_get(q, 1003, NULL), "a"); /* waited 3 ms */
	assert_string_equal(queue_get(q, 1500, NULL), "b"); /* 500 ms */
	queue_ages(q, 2000, &sum, &max);
	assert_int_equal(sum, 997 + 500);
	assert_int_equal(max, 997);
	assert_int_equal(queue_done(q, "a", 2000), 0); /* worked 997 */
	assert_int_equal(queue_finish(q, "b", QUEUE_SUCCESS, 0, 1600), 0);
	queue_ages(q, 3000, &sum, &max);
	assert_int_equal(sum, 0);
	assert_int_equal(max, 0);
	queue_stats(q, &qs);
	assert_int_equal(qs.wait.count, 2);
	assert_int_equal(qs.wait.counts[6], 1); /* 3 ms <= 0.01 */
	assert_int_equal(qs.wait.counts[8], 1); /* 0.5 s <= 1 */
	assert_true(fabs(qs.wait.sum_s - 0.503) < 1e-9);
	assert_int_equal(qs.work.count, 2);
	assert_int_equal(qs.work.counts[7], 1); /* 0.1 s */
	assert_int_equal(qs.work.counts[8], 1); /* 0.997 s */
	queue_free(q);
}

static void
test_proc_and_host(void **state)
{
	struct met_proc p;
	char h[64];

	(void)state;
	assert_int_equal(met_proc_read(0, &p), 0);
	assert_true(p.ok && p.rss_bytes > 0 && p.vsize_bytes >= p.rss_bytes);
	assert_true(p.open_fds >= 3 && p.cpu_s >= 0);
	assert_int_equal(met_proc_read(getpid(), &p), 0);
	assert_true(p.ok && p.rss_bytes > 0 && p.open_fds == -1);
	assert_int_equal(met_proc_read(999999999, &p), -1);
	assert_false(p.ok);
	met_host("https://10.1.2.3:6443", h, sizeof(h));
	assert_string_equal(h, "10.1.2.3:6443");
	met_host("http://[::1]:8080/base?x", h, sizeof(h));
	assert_string_equal(h, "[::1]:8080");
	met_host(NULL, h, sizeof(h));
	assert_string_equal(h, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_parses),
		cmocka_unit_test(test_required_names),
		cmocka_unit_test(test_empty_and_no_procs),
		cmocka_unit_test(test_queue_durations),
		cmocka_unit_test(test_shadow_metrics),
		cmocka_unit_test(test_otlp_metrics),
		cmocka_unit_test(test_proc_and_host),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
