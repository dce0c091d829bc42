/*
 * ctl.c: sympoziumctl's pure half (ctl.h): the command line and the
 * replies rendered as tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "ctl/ctl.h"

void
ctl_default_socket(char *out, size_t len, const char *env, const char *tmpdir,
        unsigned uid)
{
	if (env != NULL && env[0] != '\0') {
		snprintf(out, len, "%s", env);
		return;
	}
	snprintf(out, len, "%s/sympoziumd-%u/health.sock",
	        tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp", uid);
}

const char *
ctl_usage(void)
{
	return ("usage: sympoziumctl [flags] COMMAND [NAME]\n"
	        "commands:\n"
	        "  status             workers and the supervisor, one screen\n"
	        "  workers            the worker table\n"
	        "  worker NAME        one worker (NAME: CONTROLLER-INDEX)\n"
	        "  restart NAME       kill and restart a worker (or all of "
	        "a controller's)\n"
	        "  pause CONTROLLER   stop dispatching its queue (keys "
	        "accumulate)\n"
	        "  resume CONTROLLER  dispatch again\n"
	        "  shadow             writes a --shadow supervisor would "
	        "send (Secrets redacted)\n"
	        "flags:\n"
	        "  --socket PATH      default $SYMPOZIUM_HEALTH_SOCKET, else "
	        "$TMPDIR/sympoziumd-UID/health.sock\n"
	        "  --json             print the raw JSON reply\n"
	        "  --watch [SECONDS]  refresh every SECONDS (default 2)\n"
	        "  --count N          with --watch: stop after N refreshes\n"
	        "  --timeout SECONDS  for the answer (default 5)\n"
	        "  --help             this text\n"
	        "exit: 0 ok, 1 error reply, 2 usage, 3 cannot reach the "
	        "supervisor\n");
}

/* A positive number of seconds (fractions allowed) in ms; -1 if not. */
static int64_t
seconds(const char *s)
{
	char *end = NULL;
	double v;

	if (s == NULL || s[0] == '\0') {
		return (-1);
	}
	v = strtod(s, &end);
	if (*end != '\0' || !(v > 0) || v > 86400) {
		return (-1);
	}
	return ((int64_t)(v * 1000.0 + 0.5) > 0 ? (int64_t)(v * 1000.0 + 0.5)
	                                        : 1);
}

static int
flag(int argc, char *const *argv, int *i, struct ctl_opts *o, char *err,
        size_t errlen)
{
	const char *a = argv[*i];
	const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;

	if (strcmp(a, "--json") == 0) {
		o->json = true;
	} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
		o->help = true;
	} else if (strcmp(a, "--watch") == 0) {
		o->watch = true;
		if (seconds(next) > 0) {
			o->interval_ms = seconds(next);
			(*i)++;
		}
	} else if (strncmp(a, "--watch=", 8) == 0) {
		o->watch = true;
		if ((o->interval_ms = seconds(a + 8)) < 0) {
			snprintf(err, errlen, "--watch: want seconds > 0");
			return (-1);
		}
	} else if ((strcmp(a, "--socket") == 0 || strcmp(a, "--timeout") == 0
	                   || strcmp(a, "--count") == 0)
	        && next == NULL) {
		snprintf(err, errlen, "%s: missing value", a);
		return (-1);
	} else if (strcmp(a, "--socket") == 0) {
		if (strlen(next) >= sizeof(o->socket)) {
			snprintf(err, errlen, "--socket: path too long");
			return (-1);
		}
		snprintf(o->socket, sizeof(o->socket), "%s", next);
		(*i)++;
	} else if (strcmp(a, "--timeout") == 0) {
		if ((o->timeout_ms = seconds(next)) < 0) {
			snprintf(err, errlen, "--timeout: want seconds > 0");
			return (-1);
		}
		(*i)++;
	} else if (strcmp(a, "--count") == 0) {
		char *end = NULL;
		o->count = strtol(next, &end, 10);
		if (*end != '\0' || o->count < 1) {
			snprintf(err, errlen, "--count: want N >= 1");
			return (-1);
		}
		(*i)++;
	} else {
		snprintf(err, errlen, "unknown flag %s (see --help)", a);
		return (-1);
	}
	return (0);
}

static int
words(struct ctl_opts *o, const char *cmd, const char *name, int extra,
        char *err, size_t errlen)
{
	if (cmd == NULL) {
		snprintf(err, errlen, "missing command (see --help)");
		return (-1);
	}
	if (hp_cmd_parse(cmd, &o->req.cmd) != 0) {
		snprintf(err, errlen, "unknown command \"%s\" (see --help)",
		        cmd);
		return (-1);
	}
	if (hp_cmd_needs_name(o->req.cmd) != (name != NULL) || extra > 0) {
		snprintf(err, errlen,
		        hp_cmd_needs_name(o->req.cmd)
		                ? "%s: want exactly one NAME"
		                : "%s: takes no argument",
		        cmd);
		return (-1);
	}
	if (name != NULL && strlen(name) >= sizeof(o->req.name)) {
		snprintf(err, errlen, "%s: NAME too long", cmd);
		return (-1);
	}
	snprintf(o->req.name, sizeof(o->req.name), "%s",
	        name != NULL ? name : "");
	return (0);
}

int
ctl_parse_args(int argc, char *const *argv, struct ctl_opts *o, char *err,
        size_t errlen)
{
	const char *pos[2] = { NULL, NULL };
	int npos = 0, extra = 0;

	o->interval_ms = 2000;
	o->timeout_ms = CTL_DEFAULT_TIMEOUT_MS;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] != '\0') {
			if (flag(argc, argv, &i, o, err, errlen) != 0) {
				return (-1);
			}
		} else if (npos < 2) {
			pos[npos++] = argv[i];
		} else {
			extra++;
		}
	}
	if (o->help) {
		return (0);
	}
	return (words(o, pos[0], pos[1], extra, err, errlen));
}

char *
ctl_fmt_dur(int64_t ms, char *out, size_t len)
{
	int64_t s = ms / 1000;

	if (ms < 0) {
		snprintf(out, len, "-");
	} else if (ms < 1000) {
		snprintf(out, len, "%lldms", (long long)ms);
	} else if (ms < 60000) {
		snprintf(out, len, "%lld.%llds", (long long)s,
		        (long long)(ms % 1000 / 100));
	} else if (s < 3600) {
		snprintf(out, len, "%lldm%llds", (long long)(s / 60),
		        (long long)(s % 60));
	} else if (s < 86400) {
		snprintf(out, len, "%lldh%lldm", (long long)(s / 3600),
		        (long long)(s % 3600 / 60));
	} else {
		snprintf(out, len, "%lldd%lldh", (long long)(s / 86400),
		        (long long)(s % 86400 / 3600));
	}
	return (out);
}

/* ---- rendering ---- */

static int64_t
num(json_object *o, const char *path)
{
	int64_t v = 0;

	return (jx_get_int(o, path, &v) == 0 ? v : 0);
}

static int64_t
num_or(json_object *o, const char *path, int64_t dflt)
{
	int64_t v = 0;

	return (jx_get_int(o, path, &v) == 0 ? v : dflt);
}

static const char *
str(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL && s[0] != '\0' ? s : "-");
}

static bool
flag_of(json_object *o, const char *path)
{
	bool b = false;

	return (jx_get_bool(o, path, &b) == 0 && b);
}

static void
worker_header(struct buf *out)
{
	buf_printf(out,
	        "%-22s %7s %-10s %7s %4s %-16s %6s %7s %5s %5s "
	        "%6s %6s  %s\n",
	        "WORKER", "PID", "STATE", "AGE", "RST", "LAST EXIT", "HB",
	        "OK", "ERR", "REQ", "P50", "P99", "KEY (FOR) / LAST ERROR");
}

static void
worker_row(json_object *w, struct buf *out)
{
	char age[32], hb[32], p50[32], p99[32], kage[32];
	int64_t req = num(w, "reconciles.requeue")
	        + num(w, "reconciles.requeue_after");

	buf_printf(out,
	        "%-22.22s %7lld %-10s %7s %4lld %-16.16s %6s %7lld "
	        "%5lld %5lld %6s %6s  ",
	        str(w, "name"), (long long)num(w, "pid"), str(w, "state"),
	        ctl_fmt_dur(num_or(w, "startedAgoMs", -1), age, sizeof(age)),
	        (long long)num(w, "restarts"), str(w, "lastExit"),
	        ctl_fmt_dur(num_or(w, "heartbeatAgeMs", -1), hb, sizeof(hb)),
	        (long long)num(w, "reconciles.success"),
	        (long long)num(w, "reconciles.error"), (long long)req,
	        ctl_fmt_dur(num_or(w, "latencyMs.p50", -1), p50, sizeof(p50)),
	        ctl_fmt_dur(num_or(w, "latencyMs.p99", -1), p99, sizeof(p99)));
	if (jx_get_str(w, "key") != NULL && jx_get_str(w, "key")[0] != '\0') {
		buf_printf(out, "%s (%s)", str(w, "key"),
		        ctl_fmt_dur(num_or(w, "keyAgeMs", -1), kage,
		                sizeof(kage)));
	} else if (jx_get_str(w, "lastError") != NULL
	        && jx_get_str(w, "lastError")[0] != '\0') {
		buf_printf(out, "! %.60s", str(w, "lastError"));
	}
	buf_putc(out, '\n');
}

void
ctl_format_workers(json_object *reply, struct buf *out)
{
	json_object *a = jx_get(reply, "workers");
	size_t n = jx_array_len(a);

	worker_header(out);
	for (size_t i = 0; i < n; i++) {
		worker_row(json_object_array_get_idx(a, i), out);
	}
}

/* A controller's STATE: its fault state (fault.h) when not ok, then
 * paused or active. */
static const char *
ctl_state(json_object *c)
{
	const char *st = jx_get_str(c, "state");

	if (st != NULL && strcmp(st, "ok") != 0) {
		return (st);
	}
	return (flag_of(c, "paused") ? "paused" : "active");
}

/* A line for a degraded or failed controller c, with its reason. */
static void
ctl_fault_line(json_object *c, struct buf *out)
{
	const char *st = jx_get_str(c, "state");
	char since[32];

	if (st == NULL || strcmp(st, "ok") == 0) {
		return;
	}
	buf_printf(out, "%s %s for %s: %s\n", str(c, "name"), st,
	        ctl_fmt_dur(num_or(c, "stateSinceAgoMs", -1), since,
	                sizeof(since)),
	        str(c, "stateReason"));
}

static void
ctl_rows(json_object *reply, struct buf *out)
{
	json_object *a = jx_get(reply, "controllers");
	size_t n = jx_array_len(a);
	struct buf faults = BUF_INIT;

	buf_printf(out,
	        "%-16s %-8s %5s %6s %6s %8s %7s %4s %7s %5s %5s %6s "
	        "%6s\n",
	        "CONTROLLER", "STATE", "DEPTH", "PARKED", "ADDS", "RETRIES",
	        "QUARANT", "VIOL", "OK", "ERR", "REQ", "P50", "P99");
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(a, i);
		char p50[32], p99[32];
		buf_printf(out,
		        "%-16.16s %-8s %5lld %6lld %6lld %8lld %7lld %4lld "
		        "%7lld %5lld %5lld %6s %6s\n",
		        str(c, "name"), ctl_state(c),
		        (long long)num(c, "depth"),
		        (long long)num(c, "parked"), (long long)num(c, "adds"),
		        (long long)num(c, "retries"),
		        (long long)num(c, "quarantined"),
		        (long long)num(c, "violations"),
		        (long long)num(c, "reconciles.success"),
		        (long long)num(c, "reconciles.error"),
		        (long long)(num(c, "reconciles.requeue")
		                + num(c, "reconciles.requeue_after")),
		        ctl_fmt_dur(num_or(c, "latencyMs.p50", -1), p50,
		                sizeof(p50)),
		        ctl_fmt_dur(num_or(c, "latencyMs.p99", -1), p99,
		                sizeof(p99)));
		ctl_fault_line(c, &faults);
	}
	buf_append(out, faults.data, faults.len);
	buf_fini(&faults);
}

/* One line per cache that is not fresh (age over 1 s or failing). */
static void
cache_rows(json_object *a, size_t n, struct buf *out)
{
	char age[32];

	for (size_t i = 0; i < n; i++) {
		json_object *k = json_object_array_get_idx(a, i);
		if (num(k, "ageMs") < 1000 && num(k, "failing") == 0) {
			continue;
		}
		buf_printf(out,
		        "  cache     %s (%s): age %s, %lld failure(s)\n",
		        str(k, "resource"), str(k, "name"),
		        ctl_fmt_dur(num(k, "ageMs"), age, sizeof(age)),
		        (long long)num(k, "failing"));
	}
}

static void
kinds_line(json_object *reply, struct buf *out)
{
	json_object *a = jx_get(reply, "kinds");
	size_t n = jx_array_len(a);
	int64_t objects = 0, oldest = -1;
	size_t synced = 0, failing = 0;
	const char *res = "";
	char age[32];

	for (size_t i = 0; i < n; i++) {
		json_object *k = json_object_array_get_idx(a, i);
		objects += num(k, "objects");
		synced += flag_of(k, "synced") ? 1 : 0;
		failing += num(k, "failing") > 0 ? 1 : 0;
		if (num(k, "ageMs") > oldest) {
			oldest = num(k, "ageMs");
			res = str(k, "resource");
		}
	}
	buf_printf(out, "caches      %zu/%zu kinds synced, %lld objects",
	        synced, n, (long long)objects);
	if (oldest >= 0) {
		buf_printf(out, "; oldest %s (%s)",
		        ctl_fmt_dur(oldest, age, sizeof(age)), res);
	}
	buf_printf(out, failing > 0 ? "; %zu failing\n" : "\n", failing);
	cache_rows(a, n, out);
}

void
ctl_format_status(json_object *reply, struct buf *out)
{
	json_object *s = jx_get(reply, "supervisor");
	char since[32], up[32];

	buf_printf(out,
	        "supervisor  pid %lld, %s (epoch %lld) for %s, up %s%s\n",
	        (long long)num(s, "pid"), str(s, "role"),
	        (long long)num(s, "epoch"),
	        ctl_fmt_dur(
	                num_or(s, "roleSinceAgoMs", -1), since, sizeof(since)),
	        ctl_fmt_dur(num_or(s, "uptimeMs", -1), up, sizeof(up)),
	        flag_of(s, "stopping") ? ", STOPPING" : "");
	buf_printf(out, "lease       %s (holder %s)\n",
	        flag_of(s, "leaderElection") ? "elected"
	                                     : "none (leads alone)",
	        str(s, "leaseHolder"));
	kinds_line(reply, out);
	buf_printf(out,
	        "api         %lld requests, %lld errors; %lld "
	        "relists, %lld watch restarts\n\n",
	        (long long)num(s, "api.total"),
	        (long long)num(s, "api.errors"), (long long)num(s, "relists"),
	        (long long)num(s, "watchRestarts"));
	ctl_rows(reply, out);
	buf_putc(out, '\n');
	ctl_format_workers(reply, out);
}

void
ctl_format_worker(json_object *reply, struct buf *out)
{
	json_object *w = jx_get(reply, "worker");
	char a[32], b[32], c[32];

	buf_printf(out, "worker      %s (controller %s)\n", str(w, "name"),
	        str(w, "controller"));
	buf_printf(out, "pid         %lld\nstate       %s\n",
	        (long long)num(w, "pid"), str(w, "state"));
	buf_printf(out,
	        "started     %s ago\nrestarts    %lld (last exit: %s)\n",
	        ctl_fmt_dur(num_or(w, "startedAgoMs", -1), a, sizeof(a)),
	        (long long)num(w, "restarts"), str(w, "lastExit"));
	buf_printf(out, "heartbeat   %s ago\nkey         %s (for %s)\n",
	        ctl_fmt_dur(num_or(w, "heartbeatAgeMs", -1), b, sizeof(b)),
	        str(w, "key"),
	        ctl_fmt_dur(num_or(w, "keyAgeMs", -1), c, sizeof(c)));
	buf_printf(out,
	        "reconciles  success %lld, error %lld, requeue %lld, "
	        "requeue_after %lld, lost %lld\n",
	        (long long)num(w, "reconciles.success"),
	        (long long)num(w, "reconciles.error"),
	        (long long)num(w, "reconciles.requeue"),
	        (long long)num(w, "reconciles.requeue_after"),
	        (long long)num(w, "lost"));
	buf_printf(out, "last error  %s (%s ago)\n", str(w, "lastError"),
	        ctl_fmt_dur(num_or(w, "lastErrorAgoMs", -1), a, sizeof(a)));
	buf_printf(out, "latency     p50 %s, p90 %s, p99 %s over %lld\n",
	        ctl_fmt_dur(num_or(w, "latencyMs.p50", -1), a, sizeof(a)),
	        ctl_fmt_dur(num_or(w, "latencyMs.p90", -1), b, sizeof(b)),
	        ctl_fmt_dur(num_or(w, "latencyMs.p99", -1), c, sizeof(c)),
	        (long long)num(w, "latencyMs.count"));
}

/* The pending writes of shadow mode, one row each. */
void
ctl_format_shadow(json_object *reply, struct buf *out)
{
	json_object *a = jx_get(reply, "pending");
	size_t n = jx_array_len(a);

	if (!flag_of(reply, "shadow")) {
		buf_puts(out, "not in shadow mode (sympoziumd --shadow)\n");
		return;
	}
	buf_printf(out, "%zu pending write%s", n, n == 1 ? "" : "s");
	if (num(reply, "dropped") > 0) {
		buf_printf(out, " (%lld not recorded: table full)",
		        (long long)num(reply, "dropped"));
	}
	buf_puts(out, "\n");
	if (n == 0) {
		return;
	}
	buf_printf(out, "%-16s %-14s %-28s %-40s %s\n", "CONTROLLER", "VERB",
	        "RESOURCE", "OBJECT", "CHANGES");
	for (size_t i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(a, i);
		char obj[300];
		const char *ns = jx_get_str(r, "namespace");
		ns = ns != NULL ? ns : "";
		snprintf(obj, sizeof(obj), "%s%s%s", ns,
		        ns[0] != '\0' ? "/" : "", str(r, "name"));
		buf_printf(out, "%-16s %-14s %-28s %-40s %s\n",
		        str(r, "controller"), str(r, "verb"),
		        str(r, "resource"), obj, str(r, "summary"));
	}
}

void
ctl_format(enum hp_cmd cmd, json_object *reply, struct buf *out)
{
	switch (cmd) {
	case HP_STATUS:
		ctl_format_status(reply, out);
		break;
	case HP_WORKERS:
		ctl_format_workers(reply, out);
		break;
	case HP_WORKER:
		ctl_format_worker(reply, out);
		break;
	case HP_RESTART: {
		json_object *a = jx_get(reply, "restarted");
		size_t n = jx_array_len(a);
		for (size_t i = 0; i < n; i++) {
			buf_printf(out, "restarted %s\n",
			        json_object_get_string(
			                json_object_array_get_idx(a, i)));
		}
		break;
	}
	case HP_SHADOW:
		ctl_format_shadow(reply, out);
		break;
	default:
		buf_printf(out, "%s %s\n", str(reply, "controller"),
		        flag_of(reply, "paused") ? "paused" : "resumed");
		break;
	}
}
