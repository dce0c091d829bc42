/*
 * config.c: parses sympoziumd's flags (upstream controller-manager names
 * where they exist) with their defaults and checks.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/duration.h"
#include "common/errmsg.h"
#include "supervisor/config.h"

enum {
	O_KUBECONFIG = 256,
	O_LE,
	O_LE_NS,
	O_LE_ID,
	O_LEASE,
	O_RENEW,
	O_RETRY,
	O_METRICS,
	O_PROBE,
	O_HSOCK,
	O_RUNDIR,
	O_WBIN,
	O_CTRLS,
	O_WORKERS,
	O_RTIMEOUT,
	O_GRACE,
	O_LOGFMT,
	O_HISTORY,
	O_NOSBX,
	O_HSHAKE,
	O_HELP,
	O_RECOVER,
	O_STALE,
	O_MAXRESP,
	O_MAXWRITES,
	O_WILDCARD,
	O_SHADOW,
};

static const struct option opts[] = {
	{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
	{ "leader-elect", optional_argument, NULL, O_LE },
	{ "leader-election-namespace", required_argument, NULL, O_LE_NS },
	{ "leader-election-id", required_argument, NULL, O_LE_ID },
	{ "leader-elect-lease-duration", required_argument, NULL, O_LEASE },
	{ "leader-elect-renew-deadline", required_argument, NULL, O_RENEW },
	{ "leader-elect-retry-period", required_argument, NULL, O_RETRY },
	{ "metrics-bind-address", required_argument, NULL, O_METRICS },
	{ "health-probe-bind-address", required_argument, NULL, O_PROBE },
	{ "health-socket", required_argument, NULL, O_HSOCK },
	{ "runtime-dir", required_argument, NULL, O_RUNDIR },
	{ "worker-binary", required_argument, NULL, O_WBIN },
	{ "controllers", required_argument, NULL, O_CTRLS },
	{ "workers", required_argument, NULL, O_WORKERS },
	{ "reconcile-timeout", required_argument, NULL, O_RTIMEOUT },
	{ "shutdown-grace", required_argument, NULL, O_GRACE },
	{ "log-format", required_argument, NULL, O_LOGFMT },
	{ "max-run-history", required_argument, NULL, O_HISTORY },
	{ "no-worker-sandbox", no_argument, NULL, O_NOSBX },
	{ "worker-handshake-timeout", required_argument, NULL, O_HSHAKE },
	{ "controller-recovery", required_argument, NULL, O_RECOVER },
	{ "cache-staleness-limit", required_argument, NULL, O_STALE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, O_HELP },
	{ "max-response-bytes", required_argument, NULL, O_MAXRESP },
	{ "max-concurrent-writes", required_argument, NULL, O_MAXWRITES },
	{ "allow-skill-wildcard", no_argument, NULL, O_WILDCARD },
	{ "shadow", no_argument, NULL, O_SHADOW },
	{ NULL, 0, NULL, 0 },
};

const char *
cfg_usage(void)
{
	return ("usage: sympoziumd [flags]\n"
	        "  --kubeconfig PATH                 kubeconfig (default: "
	        "KUBECONFIG, then in-cluster, then ~/.kube/config)\n"
	        "  --leader-elect[=true|false]       elect a leader with a "
	        "Lease (default false)\n"
	        "  --leader-election-namespace NS    the Lease's namespace "
	        "(default sympozium-system)\n"
	        "  --leader-election-id NAME         the Lease's name "
	        "(default "
	        "sympozium-controller-leader)\n"
	        "  --leader-elect-lease-duration D   default 15s\n"
	        "  --leader-elect-renew-deadline D   default 10s\n"
	        "  --leader-elect-retry-period D     default 2s\n"
	        "  --metrics-bind-address ADDR       Prometheus /metrics "
	        "(default :8080; 0: off)\n"
	        "  --health-probe-bind-address ADDR  /healthz, /readyz "
	        "(default :8081; 0: off)\n"
	        "  --health-socket PATH              sympoziumctl's socket "
	        "(default RUNTIME_DIR/health.sock)\n"
	        "  --runtime-dir DIR                 worker sockets (default "
	        "$TMPDIR/sympoziumd-UID when free, else a new one)\n"
	        "  --worker-binary PATH              default: "
	        "sympozium-worker beside sympoziumd\n"
	        "  --controllers LIST                comma-separated "
	        "(default: every controller the worker binary offers)\n"
	        "  --workers NAME=N                  N processes for NAME "
	        "(repeatable; default 1)\n"
	        "  --reconcile-timeout D             kill a worker whose "
	        "reconcile runs longer (default 60s)\n"
	        "  --shutdown-grace D                in-flight reconciles "
	        "at SIGTERM (default 10s)\n"
	        "  --log-format text|json            default text\n"
	        "  --max-run-history N               completed AgentRuns "
	        "kept per instance (default 50; <= 0: 50)\n"
	        "  --no-worker-sandbox               run workers without "
	        "their seccomp sandbox (debugging)\n"
	        "  --allow-skill-wildcard            let skill RBAC carry "
	        "'*' where its SkillPack does (default off)\n"
	        "  --worker-handshake-timeout D      spawn to HELLO "
	        "(default 5s; longer under valgrind)\n"
	        "  --controller-recovery D           a degraded controller "
	        "recovers after D without a worker death (default 60s)\n"
	        "  --cache-staleness-limit D         /readyz fails when a "
	        "cache is older (default 5m)\n"
	        "  --max-response-bytes N[Ki|Mi|Gi]  cap on one API answer "
	        "(a LIST page; default 256Mi)\n"
	        "  --max-concurrent-writes N         writes in flight to the "
	        "API at most (1-1024;\n"
	        "                                    default 32)\n"
	        "  --shadow                          read and reconcile, "
	        "send no write: record the\n"
	        "                                    writes it would send "
	        "(sympoziumctl shadow)\n"
	        "  -v, --verbose                     debug logs\n"
	        "  --help                            this text\n");
}

static int
ms(const char *flag, const char *v, int64_t *out, char *err, size_t len)
{
	int64_t ns;

	if (duration_parse(v, &ns) != 0 || ns <= 0) {
		errmsg(err, len, "%s: invalid duration \"%s\"", flag, v);
		return (-1);
	}
	*out = ns / 1000000;
	return (0);
}

static int
workers_arg(struct sup_config *c, const char *v, char *err, size_t len)
{
	const char *eq = strchr(v, '=');
	char *end = NULL;
	long n;

	if (eq == NULL || eq == v
	        || (size_t)(eq - v) >= sizeof(c->workers[0].name)) {
		errmsg(err, len, "--workers: want NAME=N, got \"%s\"", v);
		return (-1);
	}
	n = strtol(eq + 1, &end, 10);
	if (*end != '\0' || n < 1 || n > 64) {
		errmsg(err, len, "--workers %s: N must be 1..64", v);
		return (-1);
	}
	if (c->nworkers == CFG_MAX_WORKERS) {
		errmsg(err, len, "--workers: at most %d", CFG_MAX_WORKERS);
		return (-1);
	}
	memcpy(c->workers[c->nworkers].name, v, (size_t)(eq - v));
	c->workers[c->nworkers].name[eq - v] = '\0';
	c->workers[c->nworkers++].n = (int)n;
	return (0);
}

static int
bool_arg(const char *v, bool *out, char *err, size_t len)
{
	if (v == NULL || strcmp(v, "true") == 0) {
		*out = true;
	} else if (strcmp(v, "false") == 0) {
		*out = false;
	} else {
		errmsg(err, len, "--leader-elect: want true or false");
		return (-1);
	}
	return (0);
}

static int
history_arg(struct sup_config *c, const char *v, char *err, size_t len)
{
	char *end = NULL;

	(void)strtol(v, &end, 10);
	if (v[0] == '\0' || *end != '\0') {
		errmsg(err, len, "--max-run-history: want an integer");
		return (-1);
	}
	c->max_run_history = v;
	return (0);
}

static int
writes_arg(struct sup_config *c, const char *v, char *err, size_t len)
{
	char *end = NULL;
	long n = strtol(v, &end, 10);

	if (v[0] == '\0' || *end != '\0' || n < 1 || n > 1024) {
		errmsg(err, len,
		        "--max-concurrent-writes: want 1 to 1024, got \"%s\"",
		        v);
		return (-1);
	}
	c->max_writes = (size_t)n;
	return (0);
}

/* N, NKi, NMi or NGi bytes, 64Ki to 16Gi. */
static int
bytes_arg(struct sup_config *c, const char *v, char *err, size_t len)
{
	static const char *const sfx[] = { "", "Ki", "Mi", "Gi" };
	char *end = NULL;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	for (size_t i = 0; v[0] >= '0' && v[0] <= '9' && errno == 0 && i < 4;
	        i++) {
		if (strcmp(end, sfx[i]) == 0 && n <= (16ULL << 30) >> (10 * i)
		        && (n << (10 * i)) >= (64ULL << 10)) {
			c->max_response_bytes = (size_t)(n << (10 * i));
			return (0);
		}
	}
	errmsg(err, len,
	        "--max-response-bytes: want N, NKi, NMi or NGi bytes, 64Ki "
	        "to 16Gi, got \"%s\"",
	        v);
	return (-1);
}

static int
one(struct sup_config *c, int ch, char *err, size_t len)
{
	switch (ch) {
	case O_KUBECONFIG:
		c->kubeconfig = optarg;
		return (0);
	case O_LE:
		return (bool_arg(optarg, &c->leader_elect, err, len));
	case O_LE_NS:
		c->le_namespace = optarg;
		return (0);
	case O_LE_ID:
		c->le_id = optarg;
		return (0);
	case O_LEASE:
		return (ms("--leader-elect-lease-duration", optarg,
		        &c->lease_ms, err, len));
	case O_RENEW:
		return (ms("--leader-elect-renew-deadline", optarg,
		        &c->renew_ms, err, len));
	case O_RETRY:
		return (ms("--leader-elect-retry-period", optarg, &c->retry_ms,
		        err, len));
	case O_METRICS:
		c->metrics_addr = optarg;
		return (0);
	case O_PROBE:
		c->probe_addr = optarg;
		return (0);
	case O_HSOCK:
		c->health_socket = optarg;
		return (0);
	case O_RUNDIR:
		c->runtime_dir = optarg;
		return (0);
	case O_WBIN:
		c->worker_binary = optarg;
		return (0);
	case O_CTRLS:
		c->controllers = optarg;
		return (0);
	case O_WORKERS:
		return (workers_arg(c, optarg, err, len));
	case O_RTIMEOUT:
		return (ms("--reconcile-timeout", optarg, &c->reconcile_ms,
		        err, len));
	case O_GRACE:
		return (ms("--shutdown-grace", optarg, &c->shutdown_ms, err,
		        len));
	case O_LOGFMT:
		c->log_format = optarg;
		return (0);
	case O_HISTORY:
		return (history_arg(c, optarg, err, len));
	case O_NOSBX:
		c->no_worker_sandbox = true;
		return (0);
	case O_WILDCARD:
		c->allow_skill_wildcard = true;
		return (0);
	case O_HSHAKE:
		return (ms("--worker-handshake-timeout", optarg,
		        &c->handshake_ms, err, len));
	case O_RECOVER:
		return (ms("--controller-recovery", optarg, &c->recover_ms,
		        err, len));
	case O_STALE:
		return (ms("--cache-staleness-limit", optarg,
		        &c->cache_stale_ms, err, len));
	case 'v':
		c->verbose++;
		return (0);
	case O_HELP:
		c->help = true;
		return (0);
	case O_MAXRESP:
		return (bytes_arg(c, optarg, err, len));
	case O_MAXWRITES:
		return (writes_arg(c, optarg, err, len));
	case O_SHADOW:
		c->shadow = true;
		return (0);
	default:
		errmsg(err, len, "unknown flag (see --help)");
		return (-1);
	}
}

int
cfg_parse(
        int argc, char **argv, struct sup_config *c, char *err, size_t errlen)
{
	int ch;

	*c = (struct sup_config) { .le_namespace = "sympozium-system",
		.le_id = "sympozium-controller-leader",
		.lease_ms = 15000,
		.renew_ms = 10000,
		.retry_ms = 2000,
		.metrics_addr = ":8080",
		.probe_addr = ":8081",
		.reconcile_ms = 60000,
		.shutdown_ms = 10000,
		.handshake_ms = 5000,
		.recover_ms = 60000,
		.cache_stale_ms = 300000,
		.max_writes = 32,
		.log_format = "text" };
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		if (one(c, ch, err, errlen) != 0) {
			return (-1);
		}
	}
	if (optind != argc) {
		errmsg(err, errlen, "unexpected argument \"%s\"",
		        argv[optind]);
		return (-1);
	}
	if (strcmp(c->log_format, "text") != 0
	        && strcmp(c->log_format, "json") != 0) {
		errmsg(err, errlen, "--log-format: want text or json");
		return (-1);
	}
	if (c->shadow && c->leader_elect) {
		errmsg(err, errlen,
		        "--shadow: refuses --leader-elect (shadow mode never "
		        "takes a Lease)");
		return (-1);
	}
	if (!(c->lease_ms > c->renew_ms
	            && c->renew_ms * 10 > c->retry_ms * 12)) {
		errmsg(err, errlen,
		        "leader election: want lease-duration > "
		        "renew-deadline > 1.2 x retry-period");
		return (-1);
	}
	return (0);
}

int
cfg_workers_for(const struct sup_config *c, const char *name)
{
	for (size_t i = 0; i < c->nworkers; i++) {
		if (strcmp(c->workers[i].name, name) == 0) {
			return (c->workers[i].n);
		}
	}
	return (1);
}
