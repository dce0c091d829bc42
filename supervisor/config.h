/*
 * config.h: bin/sympoziumd's command line (design.md "Contracts"; issue 4
 * deliverables 4, 5 and 8), parsed into one struct.  Pure: no I/O but the
 * message of --help.  Prefix cfg_.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFG_MAX_WORKERS 16 /* --workers entries */

struct cfg_workers {
	char name[64];
	int n;
};

struct sup_config {
	const char
	        *kubeconfig; /* --kubeconfig; NULL: KUBECONFIG, in-cluster */
	bool leader_elect;   /* --leader-elect */
	const char *le_namespace; /* --leader-election-namespace */
	const char *le_id;        /* --leader-election-id (Lease name) */
	int64_t lease_ms, renew_ms, retry_ms; /* --leader-elect-* */
	const char *metrics_addr;  /* --metrics-bind-address (issue 6) */
	const char *probe_addr;    /* --health-probe-bind-address (issue 6) */
	const char *health_socket; /* --health-socket (issue 6) */
	const char *runtime_dir;   /* --runtime-dir */
	const char *worker_binary; /* --worker-binary */
	const char *controllers;   /* --controllers LIST (default: all the
	                            * worker binary offers) */
	struct cfg_workers workers[CFG_MAX_WORKERS]; /* --workers NAME=N */
	size_t nworkers;
	int64_t reconcile_ms;        /* --reconcile-timeout */
	int64_t shutdown_ms;         /* --shutdown-grace */
	int64_t handshake_ms;        /* --worker-handshake-timeout */
	int64_t recover_ms;          /* --controller-recovery (fault.h) */
	int64_t cache_stale_ms;      /* --cache-staleness-limit */
	const char *log_format;      /* --log-format text|json */
	const char *max_run_history; /* --max-run-history N (NULL: unset;
	                              * given to the AgentRun workers) */
	bool no_worker_sandbox;      /* --no-worker-sandbox (debugging) */
	bool allow_skill_wildcard;   /* --allow-skill-wildcard: skill RBAC
	                              * may carry '*' its SkillPack declares
	                              * (supervisor/rbacpol.h) */
	size_t max_response_bytes;   /* --max-response-bytes (0: the client's
	                              * default, KAPI_MAX_LIST_BYTES) */
	size_t max_writes;           /* --max-concurrent-writes: requests of
	                              * the writer in flight at most */
	bool shadow;                 /* --shadow: no write sent, each one
	                              * recorded (supervisor/shadow.h);
	                              * excludes --leader-elect */
	int verbose;                 /* -v */
	bool help;                   /* --help */
};

/* Defaults, then argv.  Returns 0, or -1 with a one-line message in err
 * (unknown flag, bad duration, bad NAME=N, inconsistent lease timing).
 * Strings point into argv. */
int cfg_parse(
        int argc, char **argv, struct sup_config *c, char *err, size_t errlen);

/* The number of worker processes for controller name (default 1). */
int cfg_workers_for(const struct sup_config *c, const char *name);

/* The --help text. */
const char *cfg_usage(void);

#endif
