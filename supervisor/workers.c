/*
 * workers.c: the worker process pool (workers.h).  Owns the process slots
 * of every controller: spawning (fork+exec into a clean child), the nng
 * session of each slot (one listening socket per spawn, closed when the
 * process is killed or reaped, so nothing a dead worker queued is ever
 * read by its successor), the handshake, heartbeat and reconcile
 * deadlines, reaping, and the restart policy and quarantine bookkeeping
 * (restart.h).  Everything runs from the caller's poll loop with injected
 * time; the only blocking call is wk_free()'s final waitpid().
 *
 * A slot's internal phase is finer than enum wk_state: DYING is a process
 * the pool killed (or whose session it ended) that is not reaped yet.  A
 * kill reports the key in flight at once (on_lost with the kill's cause)
 * and remembers that cause, so the restart policy records "reconcile
 * deadline 60 s" rather than "signal SIGKILL".  A worker that sent ERROR
 * is DYING too, with a deadline (kill_after_ms) for exiting by itself.
 * FAILED is a slot down after a permanent exit (never restarted by
 * itself).
 */
#include "supervisor/workers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/ipc_sock.h"
#include "ipc/sbxrep.h"

#define DRAIN_MAX 64 /* messages taken from one session per call */

enum phase {
	PH_STOPPED, /* never started, or stopped by shutdown */
	PH_DOWN,    /* waiting for restart_at */
	PH_STARTING,
	PH_READY,
	PH_BUSY,
	PH_DYING,  /* killed or session ended; not reaped yet */
	PH_FAILED, /* permanent exit: down until wk_restart() */
};

struct ctl;

struct wk_worker {
	struct wk_pool *pool;
	struct ctl *ctl;
	int index;
	char *path;   /* socket file of the current process */
	unsigned gen; /* processes started in this slot: names the path */
	enum phase phase;
	pid_t pid; /* 0: no process */
	struct ipc_sock *sock;
	struct restart *restart;
	int64_t restart_at;
	int64_t started_ms;
	int64_t deadline;    /* handshake or reconcile, -1 none */
	int64_t hb_next;     /* ready: next heartbeat due */
	int64_t hb_deadline; /* outstanding heartbeat answer due, -1 */
	int64_t hb_seq;
	int64_t last_rx; /* -1: nothing received from this process */
	char *key;       /* in flight */
	int64_t key_since;
	char rid[IPC_RID_LEN + 1]; /* the reconcile ID of the key in flight */
	int64_t work_epoch;
	uint64_t ticket;
	bool quitting, termed, killed;
	int64_t term_at, kill_at;
	char *kill_cause; /* why the pool killed it */
	uint64_t ok, lost;
	bool asked;     /* wk_restart(): restart at once when reaped */
	bool poison;    /* wk_violation(): its key is quarantined at once */
	bool was_ready; /* has completed a handshake once */
	char *reason;   /* the worker's ERROR message, NULL none */
	int report_fd;  /* the sandbox kill report's read end, -1 none */
};

struct ctl {
	char *name;
	int nprocs;
	struct wk_worker *w;
	struct quarantine *q;
	struct fault *fault;
	bool just_degraded; /* the death being handled made it Degraded */
};

struct wk_pool {
	struct wk_config cfg;
	char *binary, *runtime_dir, *log_format; /* owned copies */
	char **env;                              /* NULL-terminated */
	struct wk_callbacks cb;
	void *arg;
	struct ctl **ctls;
	size_t nctl;
	int64_t epoch;
	bool started, shutting;
	bool all_ready_logged; /* "all N workers ready" said once */
};

static const char *sanitizer_vars[] = {
	"ASAN_OPTIONS",
	"UBSAN_OPTIONS",
	"LSAN_OPTIONS",
};

void
wk_config_default(struct wk_config *c)
{
	memset(c, 0, sizeof(*c));
	c->handshake_ms = WK_DEFAULT_HANDSHAKE_MS;
	c->hb_interval_ms = WK_DEFAULT_HB_INTERVAL_MS;
	c->hb_timeout_ms = WK_DEFAULT_HB_TIMEOUT_MS;
	c->reconcile_ms = WK_DEFAULT_RECONCILE_MS;
	c->shutdown_grace_ms = WK_DEFAULT_SHUTDOWN_GRACE_MS;
	c->kill_after_ms = WK_DEFAULT_KILL_AFTER_MS;
	restart_config_default(&c->restart);
	quarantine_config_default(&c->quarantine);
	fault_config_default(&c->fault);
}

static char **
build_env(const char *const *env)
{
	size_t n = 0, i, k = 0;
	char **out;
	const char *v;

	while (env != NULL && env[n] != NULL) {
		n++;
	}
	out = xcalloc(n + 5, sizeof(*out));
	for (i = 0; i < n; i++) {
		out[k++] = xstrdup(env[i]);
	}
	out[k++] = xasprintf("%s=%d", SBXREP_ENV, SBXREP_FD);
	for (i = 0; i < 3; i++) {
		if ((v = getenv(sanitizer_vars[i])) != NULL) {
			out[k++] = xasprintf("%s=%s", sanitizer_vars[i], v);
		}
	}
	return (out);
}

struct wk_pool *
wk_pool_new(
        const struct wk_config *cfg, const struct wk_callbacks *cb, void *arg)
{
	struct wk_pool *p = xcalloc(1, sizeof(*p));

	p->cfg = *cfg;
	p->binary = xstrdup(cfg->binary != NULL ? cfg->binary : "");
	p->runtime_dir
	        = xstrdup(cfg->runtime_dir != NULL ? cfg->runtime_dir : ".");
	p->log_format
	        = cfg->log_format != NULL ? xstrdup(cfg->log_format) : NULL;
	p->cfg.binary = p->binary;
	p->cfg.runtime_dir = p->runtime_dir;
	p->cfg.log_format = p->log_format;
	p->cfg.env = NULL;
	p->env = build_env(cfg->env);
	if (cb != NULL) {
		p->cb = *cb;
	}
	p->arg = arg;
	return (p);
}

static void
close_report(struct wk_worker *w)
{
	if (w->report_fd >= 0) {
		close(w->report_fd);
	}
	w->report_fd = -1;
}

/*
 * Ends the worker's session: its socket closes on a thread of its own
 * (ipc_sock_close_async(): nng 1.5.2 can hang in a close racing the
 * peer's death), its socket file goes at once, and the next process gets
 * a path of its own.  Closes that pile up mean such hangs: said in the log at
 * 4, 8, 16, ... of them.
 */
static void
drop_sock(struct wk_worker *w)
{
	static unsigned warned = 2;
	unsigned n;

	if (w->sock != NULL && w->path != NULL) {
		unlink(w->path); /* nobody dials the closing socket */
	}
	ipc_sock_close_async(w->sock);
	w->sock = NULL;
	n = ipc_sock_closing();
	if (n > warned && n >= 4) {
		warned = n * 2 - 1;
		log_warnx("%u worker sockets still closing: nng close hang "
		          "(docs/known-issues.md)",
		        n);
	}
}

static void
worker_fini(struct wk_worker *w)
{
	int st;

	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) { }
	}
	drop_sock(w);
	close_report(w);
	restart_free(w->restart);
	free(w->path);
	free(w->key);
	free(w->kill_cause);
	free(w->reason);
}

void
wk_free(struct wk_pool *p)
{
	size_t i;
	int j;

	if (p == NULL) {
		return;
	}
	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			worker_fini(&p->ctls[i]->w[j]);
		}
		quarantine_free(p->ctls[i]->q);
		fault_free(p->ctls[i]->fault);
		free(p->ctls[i]->w);
		free(p->ctls[i]->name);
		free(p->ctls[i]);
	}
	free(p->ctls);
	for (i = 0; p->env[i] != NULL; i++) {
		free(p->env[i]);
	}
	free(p->env);
	free(p->binary);
	free(p->runtime_dir);
	free(p->log_format);
	free(p);
}

static struct ctl *
find_ctl(const struct wk_pool *p, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < p->nctl; i++) {
		if (strcmp(p->ctls[i]->name, name) == 0) {
			return (p->ctls[i]);
		}
	}
	return (NULL);
}

static bool
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > WK_CONTROLLER_MAX) {
		return (false);
	}
	return (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n);
}

static void
worker_init(struct wk_pool *p, struct ctl *c, int i)
{
	struct wk_worker *w = &c->w[i];

	w->pool = p;
	w->ctl = c;
	w->index = i;
	w->phase = PH_STOPPED;
	w->restart = restart_new(&p->cfg.restart);
	w->started_ms = -1;
	w->deadline = -1;
	w->hb_deadline = -1;
	w->last_rx = -1;
	w->key_since = -1;
	w->report_fd = -1;
}

int
wk_add_controller(struct wk_pool *p, const char *name, int nprocs, char *err,
        size_t errlen)
{
	struct sockaddr_un sun;
	struct ctl *c;
	int i;

	if (name == NULL || !valid_name(name)) {
		snprintf(err, errlen, "invalid controller name \"%s\"",
		        name != NULL ? name : "");
		return (-1);
	}
	if (nprocs < 1 || nprocs > WK_PROCS_MAX || p->started
	        || find_ctl(p, name) != NULL) {
		snprintf(err, errlen, "controller %s: %s", name,
		        p->started ? "pool already started"
		                : find_ctl(p, name) != NULL
		                ? "given twice"
		                : "process count out of range 1..64");
		return (-1);
	}
	if (strlen(p->cfg.runtime_dir) + strlen(name) + 32
	        > sizeof(sun.sun_path)) {
		snprintf(err, errlen, "runtime directory path too long");
		return (-1);
	}
	c = xcalloc(1, sizeof(*c));
	c->name = xstrdup(name);
	c->nprocs = nprocs;
	c->q = quarantine_new(&p->cfg.quarantine);
	c->fault = fault_new(&p->cfg.fault);
	c->w = xcalloc((size_t)nprocs, sizeof(*c->w));
	for (i = 0; i < nprocs; i++) {
		worker_init(p, c, i);
	}
	p->ctls = xreallocarray(p->ctls, p->nctl + 1, sizeof(*p->ctls));
	p->ctls[p->nctl++] = c;
	return (0);
}

/* ---- pure helpers ---- */

const char *
wk_state_name(enum wk_state s)
{
	static const char *const names[] = {
		[WK_STARTING] = "starting",
		[WK_READY] = "ready",
		[WK_BUSY] = "busy",
		[WK_RESTARTING] = "restarting",
		[WK_CRASHLOOP] = "crash-loop",
		[WK_STOPPING] = "stopping",
		[WK_STOPPED] = "stopped",
		[WK_FAILED] = "failed",
	};

	if ((unsigned)s >= sizeof(names) / sizeof(names[0])) {
		return ("unknown");
	}
	return (names[s]);
}

char *
wk_exit_cause(int status, char *buf, size_t len)
{
	const char *abbrev;

	if (WIFEXITED(status)) {
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		abbrev = sigabbrev_np(WTERMSIG(status));
		if (abbrev != NULL) {
			snprintf(buf, len, "signal SIG%s%s", abbrev,
			        WCOREDUMP(status) ? " (core dumped)" : "");
		} else {
			snprintf(buf, len, "signal %d%s", WTERMSIG(status),
			        WCOREDUMP(status) ? " (core dumped)" : "");
		}
	} else {
		snprintf(buf, len, "status 0x%x", (unsigned)status);
	}
	return (buf);
}

/* "60 s" or "250 ms". */
static const char *
fmt_dur(int64_t ms, char *buf, size_t len)
{
	if (ms % 1000 == 0) {
		snprintf(buf, len, "%lld s", (long long)(ms / 1000));
	} else {
		snprintf(buf, len, "%lld ms", (long long)ms);
	}
	return (buf);
}

/* ---- deaths and restarts ---- */

/* Reports the key in flight (if any) as lost, once. */
static void
lose_key(struct wk_worker *w, int64_t now, const char *cause)
{
	struct wk_pool *p = w->pool;
	char *key = w->key;
	bool quarantined;

	if (key == NULL) {
		return;
	}
	w->key = NULL;
	w->key_since = -1;
	w->ticket++;
	w->lost++;
	if (w->poison) {
		/* the key's own fault, not the controller's */
		w->poison = false;
		quarantined
		        = quarantine_key_poison(w->ctl->q, key, cause, now);
	} else {
		if (!w->asked
		        && fault_key_died(w->ctl->fault, key, cause, now)) {
			w->ctl->just_degraded = true;
		}
		/* a controller fault is not a poison key: no quarantine */
		quarantined = fault_state(w->ctl->fault) == FAULT_OK
		        && quarantine_key_died(w->ctl->q, key, cause, now);
	}
	log_warnx("worker %s-%d: key %s lost (%s)%s", w->ctl->name, w->index,
	        key, cause, quarantined ? "; key quarantined" : "");
	if (p->cb.on_lost != NULL) {
		p->cb.on_lost(p->arg, w->ctl->name, key, cause, quarantined);
	}
	free(key);
}

/* SIGKILLs a live worker and ends its session at once. */
static void
kill_worker(struct wk_worker *w, int64_t now, const char *cause)
{
	if (w->pid <= 0 || w->phase == PH_DYING) {
		return;
	}
	log_warnx("worker %s-%d (pid %d): %s; killing it", w->ctl->name,
	        w->index, (int)w->pid, cause);
	drop_sock(w); /* before the peer dies: see drop_sock() */
	kill(w->pid, SIGKILL);
	w->killed = true;
	w->phase = PH_DYING;
	w->deadline = -1;
	w->hb_deadline = -1;
	if (w->kill_cause == NULL) {
		w->kill_cause = xstrdup(cause);
	}
	lose_key(w, now, cause);
}

/* A key of the streak that made the controller Degraded: not poison,
 * so its deaths are forgotten and, when held, it is released. */
static void
release_key(const char *key, void *arg)
{
	struct wk_worker *w = arg;
	struct wk_pool *p = w->pool;
	bool held = quarantine_until(w->ctl->q, key) >= 0;

	quarantine_key_ok(w->ctl->q, key);
	if (held) {
		log_info("%s: %s released from quarantine (controller fault)",
		        w->ctl->name, key);
		if (p->cb.on_released != NULL) {
			p->cb.on_released(p->arg, w->ctl->name, key);
		}
	}
}

/* The death just handled made the controller Degraded: say so once. */
static void
degraded(struct wk_worker *w, int64_t delay)
{
	struct fault_info fi;
	char d[32];

	w->ctl->just_degraded = false;
	fault_info(w->ctl->fault, &fi);
	log_error("controller %s degraded: %s; restarting with backoff %s",
	        w->ctl->name, fi.reason, fmt_dur(delay, d, sizeof(d)));
	fault_foreach_streak(w->ctl->fault, release_key, w);
}

/* A permanent exit (or an exit while the controller is failed): the slot
 * stays down. */
static void
stay_down(struct wk_worker *w, int64_t now, const char *cause, bool permanent)
{
	w->phase = PH_FAILED;
	w->asked = false;
	if (!permanent) {
		log_warnx("worker %s-%d: not restarted (controller %s failed)",
		        w->ctl->name, w->index, w->ctl->name);
		return;
	}
	fault_fail(w->ctl->fault, cause, now);
	log_error("controller %s failed: worker %s-%d %s; not restarted "
	          "(sympoziumctl restart %s starts it again)",
	        w->ctl->name, w->ctl->name, w->index, cause, w->ctl->name);
}

/* The slot is down for cause: schedule its restart (or stop it). */
static void
slot_down(struct wk_worker *w, int64_t now, const char *cause, bool permanent)
{
	enum restart_state st;
	int64_t delay;

	drop_sock(w);
	close_report(w);
	w->pid = 0;
	w->deadline = -1;
	w->hb_deadline = -1;
	w->quitting = w->termed = w->killed = false;
	free(w->kill_cause);
	w->kill_cause = NULL;
	if (w->pool->shutting) {
		w->phase = PH_STOPPED;
		return;
	}
	delay = restart_on_exit(w->restart, now, cause, &st);
	if (permanent || fault_state(w->ctl->fault) == FAULT_FAILED) {
		stay_down(w, now, cause, permanent);
		return;
	}
	delay = fault_on_exit(w->ctl->fault, delay, now);
	if (w->asked) {
		w->asked = false;
		delay = 0;
	}
	if (w->ctl->just_degraded) {
		degraded(w, delay);
	}
	w->phase = PH_DOWN;
	w->restart_at = now + delay;
	log_info("worker %s-%d: restart in %lld ms (%s)", w->ctl->name,
	        w->index, (long long)delay, restart_state_name(st));
}

/* Appends the worker's own words to an exit cause: " (permanent failure:
 * REASON)" for IPC_EXIT_PERMANENT, " (worker error: REASON)" after an
 * ERROR. */
static void
cause_reason(const struct wk_worker *w, bool permanent, char *buf, size_t len)
{
	size_t n = strlen(buf);

	if (!permanent && w->reason == NULL) {
		return;
	}
	snprintf(buf + n, len - n, " (%s%s%s)",
	        permanent ? "permanent failure" : "worker error",
	        w->reason != NULL ? ": " : "",
	        w->reason != NULL ? w->reason : "");
}

static void
on_exit_status(struct wk_worker *w, int64_t now, int status)
{
	char buf[640], sbx[128];
	const char *cause = wk_exit_cause(status, buf, sizeof(buf));
	bool permanent = WIFEXITED(status)
	        && WEXITSTATUS(status) == IPC_EXIT_PERMANENT
	        && w->kill_cause == NULL;

	if (w->kill_cause != NULL) {
		snprintf(buf, sizeof(buf), "%s", w->kill_cause);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS
	        && sbxrep_read_cause(w->report_fd, sbx, sizeof(sbx)) != NULL) {
		snprintf(buf, sizeof(buf), "signal SIGSYS: %s", sbx);
	} else {
		cause_reason(w, permanent, buf, sizeof(buf));
	}
	if (!w->quitting || w->kill_cause != NULL || status != 0) {
		log_warnx("worker %s-%d (pid %d) exited: %s", w->ctl->name,
		        w->index, (int)w->pid, cause);
	}
	lose_key(w, now, cause);
	free(w->reason);
	w->reason = NULL;
	slot_down(w, now, cause, permanent);
}

void
wk_reap(struct wk_pool *p, int64_t now_ms)
{
	struct wk_worker *w;
	size_t i;
	int j, st;
	pid_t r;

	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			w = &p->ctls[i]->w[j];
			if (w->pid <= 0) {
				continue;
			}
			r = waitpid(w->pid, &st, WNOHANG);
			if (r == w->pid) {
				on_exit_status(w, now_ms, st);
			} else if (r < 0 && errno == ECHILD) {
				on_exit_status(w, now_ms, 255 << 8);
			}
		}
	}
}

/* ---- spawning ---- */

static void
child_reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP) {
			(void)sigaction(sig, &sa, NULL);
		}
	}
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* In the forked child: only async-signal-safe calls until execve.
 * report: the kill report pipe's write end (-1 none), made SBXREP_FD. */
static void
child_exec(char *const argv[], char *const envp[], pid_t parent, int report)
{
	struct rlimit nocore = { 0, 0 };
	int fd, keep = report >= 0 ? SBXREP_FD : 2;

	child_reset_signals();
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) {
		_exit(127);
	}
	(void)setrlimit(RLIMIT_CORE, &nocore);
	if (report == SBXREP_FD) {
		(void)fcntl(report, F_SETFD, 0);
	} else if (report >= 0 && dup2(report, SBXREP_FD) != SBXREP_FD) {
		keep = 2;
	}
	if (close_range((unsigned)keep + 1, ~0u, 0) != 0) {
		for (fd = keep + 1; fd < 65536; fd++) {
			(void)close(fd);
		}
	}
	execve(argv[0], argv, envp);
	_exit(127);
}

static void
spawn(struct wk_worker *w, int64_t now)
{
	struct wk_pool *p = w->pool;
	char err[256], cause[300];
	char *argv[9];
	int n = 0, rep[2] = { -1, -1 };
	pid_t parent = getpid(), pid;

	/* A path per process: the last one's socket may still be closing
	 * (drop_sock()), listening on its own path. */
	free(w->path);
	w->path = xasprintf("%s/%s-%d.%u.sock", p->cfg.runtime_dir,
	        w->ctl->name, w->index, ++w->gen);
	w->sock = ipc_sock_listen(w->path, p->cfg.max_msg, err, sizeof(err));
	if (w->sock == NULL) {
		snprintf(cause, sizeof(cause), "listen: %s", err);
		log_warnx("worker %s-%d: %s", w->ctl->name, w->index, cause);
		slot_down(w, now, cause, false);
		return;
	}
	argv[n++] = p->binary;
	argv[n++] = "--controller";
	argv[n++] = w->ctl->name;
	argv[n++] = "--socket";
	argv[n++] = w->path;
	if (p->log_format != NULL) {
		argv[n++] = "--log-format";
		argv[n++] = p->log_format;
	}
	argv[n] = NULL;
	if (pipe2(rep, O_CLOEXEC) != 0
	        || fcntl(rep[0], F_SETFL, O_NONBLOCK) != 0) {
		rep[0] = rep[1] = -1; /* no kill report: the cause stays
		                       * "signal SIGSYS" */
	}
	pid = fork();
	if (pid == 0) {
		child_exec(argv, p->env, parent, rep[1]);
	}
	if (rep[1] >= 0) {
		close(rep[1]);
	}
	w->report_fd = rep[0];
	if (pid < 0) {
		snprintf(cause, sizeof(cause), "fork: %s", strerror(errno));
		log_warnx("worker %s-%d: %s", w->ctl->name, w->index, cause);
		slot_down(w, now, cause, false);
		return;
	}
	w->pid = pid;
	w->phase = PH_STARTING;
	w->started_ms = now;
	w->deadline = now + p->cfg.handshake_ms;
	w->last_rx = -1;
	log_debug("worker %s-%d: started pid %d", w->ctl->name, w->index,
	        (int)pid);
}

int
wk_start(struct wk_pool *p, int64_t now_ms)
{
	size_t i;
	int j;

	p->started = true;
	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			if (p->ctls[i]->w[j].phase == PH_STOPPED) {
				spawn(&p->ctls[i]->w[j], now_ms);
			}
		}
	}
	return (0);
}

void
wk_set_epoch(struct wk_pool *p, int64_t epoch)
{
	p->epoch = epoch;
}

/* ---- messages ---- */

static void
become_idle(struct wk_worker *w, int64_t now)
{
	struct wk_pool *p = w->pool;

	w->phase = PH_READY;
	w->deadline = -1;
	w->hb_deadline = -1;
	w->hb_next = now + p->cfg.hb_interval_ms;
	if (!p->shutting && !w->quitting && p->cb.on_idle != NULL) {
		p->cb.on_idle(p->arg, w->ctl->name);
	}
}

/* Logs "all N workers ready" the first time every slot has completed its
 * handshake (start-up timing, tests/bench/operator.sh). */
static void
log_all_ready(struct wk_pool *p)
{
	size_t n = 0;

	if (p->all_ready_logged) {
		return;
	}
	for (size_t i = 0; i < p->nctl; i++) {
		for (int j = 0; j < p->ctls[i]->nprocs; j++) {
			const struct wk_worker *x = &p->ctls[i]->w[j];
			if (!x->was_ready) {
				return;
			}
			n++;
		}
	}
	p->all_ready_logged = true;
	log_info("all %zu workers ready", n);
}

static void
on_hello(struct wk_worker *w, const struct ipc_msg *m, int64_t now)
{
	struct ipc_hello h;
	char why[IPC_NAME_MAX + 128];
	pid_t peer = ipc_sock_peer_pid(w->sock);
	json_object *ready;
	enum ipc_sock_rc rc;

	if (ipc_hello_read(m, &h) != 0) {
		kill_worker(w, now, "malformed message: bad HELLO");
		return;
	}
	if (strcmp(h.controller, w->ctl->name) != 0) {
		snprintf(why, sizeof(why), "HELLO from controller %s",
		        h.controller);
		kill_worker(w, now, why);
		return;
	}
	if (peer != w->pid || h.pid != (int64_t)w->pid) {
		snprintf(why, sizeof(why),
		        "peer pid mismatch (peer %d, hello %lld, forked %d)",
		        (int)peer, (long long)h.pid, (int)w->pid);
		kill_worker(w, now, why);
		return;
	}
	ready = ipc_ready_new(w->pool->epoch, NULL);
	rc = ipc_sock_send(w->sock, IPC_READY, 0, ready);
	json_object_put(ready);
	if (rc != IPC_SOCK_OK) {
		kill_worker(w, now, "cannot send READY");
		return;
	}
	restart_on_ready(w->restart, now);
	log_debug("worker %s-%d (pid %d): ready", w->ctl->name, w->index,
	        (int)w->pid);
	w->was_ready = true;
	log_all_ready(w->pool);
	become_idle(w, now);
}

static void
on_result(struct wk_worker *w, const struct ipc_msg *m, int64_t now)
{
	struct wk_pool *p = w->pool;
	struct ipc_result r;
	struct ipc_write *ops;
	char why[IPC_KEY_MAX * 2 + 64];

	/* the one decode of a RESULT: handed on typed (workers.h) */
	if (ipc_result_decode(m, &r, &ops) != 0) {
		kill_worker(w, now, "malformed message: bad RESULT");
		return;
	}
	if (strcmp(r.key, w->key) != 0 || r.epoch != w->work_epoch) {
		snprintf(why, sizeof(why),
		        "malformed message: RESULT for %s epoch %lld, "
		        "expected %s epoch %lld",
		        r.key, (long long)r.epoch, w->key,
		        (long long)w->work_epoch);
		free(ops);
		kill_worker(w, now, why);
		return;
	}
	r.sent_ms = w->key_since;
	r.reconcile_id = w->rid;
	if (p->cb.on_result != NULL) {
		p->cb.on_result(p->arg, w->ctl->name, w, &r, ops);
	}
	free(ops);
	if (w->phase == PH_DYING) {
		return; /* killed by the callee: its key is already lost */
	}
	quarantine_key_ok(w->ctl->q, w->key);
	fault_result(w->ctl->fault, now);
	w->ok++;
	free(w->key);
	w->key = NULL;
	w->key_since = -1;
	w->ticket++;
	become_idle(w, now);
}

/* The worker sent ERROR: it is going away by itself (a permanent failure
 * says why this way).  Ends the session, loses its key and gives it
 * kill_after_ms to exit before SIGKILL (tick_worker()). */
static void
on_error(struct wk_worker *w, const char *msg, int64_t now)
{
	char why[300];

	free(w->reason);
	w->reason = xasprintf("%.200s", msg != NULL ? msg : "");
	snprintf(why, sizeof(why), "worker error: %s", w->reason);
	log_warnx("worker %s-%d (pid %d): %s", w->ctl->name, w->index,
	        (int)w->pid, why);
	drop_sock(w);
	w->phase = PH_DYING;
	w->hb_deadline = -1;
	w->deadline = now + w->pool->cfg.kill_after_ms;
	lose_key(w, now, why);
}

static void
on_message(struct wk_worker *w, const struct ipc_msg *m, int64_t now)
{
	struct wk_pool *p = w->pool;
	char why[200];

	if (m->type == IPC_HELLO && w->phase == PH_STARTING) {
		on_hello(w, m, now);
	} else if (m->type == IPC_RESULT && w->phase == PH_BUSY) {
		on_result(w, m, now);
	} else if (m->type == IPC_VIEW_REQ && w->phase == PH_BUSY) {
		if (p->cb.on_view != NULL) {
			p->cb.on_view(p->arg, w, w->ticket, m);
		}
	} else if (m->type == IPC_HEARTBEAT && w->phase != PH_STARTING) {
		w->hb_deadline = -1;
		w->hb_next = now + p->cfg.hb_interval_ms;
	} else if (m->type == IPC_ERROR) {
		on_error(w, ipc_error_read(m), now);
	} else {
		snprintf(why, sizeof(why), "unexpected %s while %s",
		        ipc_type_name(m->type),
		        w->phase == PH_STARTING       ? "starting"
		                : w->phase == PH_BUSY ? "busy"
		                                      : "idle");
		kill_worker(w, now, why);
	}
}

static void
drain(struct wk_worker *w, int64_t now)
{
	struct ipc_msg m;
	char err[256], why[300];
	enum ipc_sock_rc rc;
	int n;

	for (n = 0; n < DRAIN_MAX && w->sock != NULL; n++) {
		rc = ipc_sock_recv(w->sock, &m, err, sizeof(err));
		if (rc == IPC_SOCK_AGAIN) {
			return;
		}
		if (rc != IPC_SOCK_OK) {
			snprintf(why, sizeof(why), "malformed message: %s",
			        err);
			kill_worker(w, now, why);
			return;
		}
		w->last_rx = now;
		on_message(w, &m, now);
		ipc_msg_fini(&m);
	}
}

void
wk_handle_io(struct wk_pool *p, int64_t now_ms)
{
	size_t i;
	int j;

	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			if (p->ctls[i]->w[j].sock != NULL) {
				drain(&p->ctls[i]->w[j], now_ms);
			}
		}
	}
}

size_t
wk_fds(const struct wk_pool *p, struct pollfd *out, size_t max)
{
	size_t i, n = 0;
	int j, fd;

	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs && n < max; j++) {
			if (p->ctls[i]->w[j].sock == NULL) {
				continue;
			}
			fd = ipc_sock_fd(p->ctls[i]->w[j].sock);
			if (fd >= 0) {
				out[n].fd = fd;
				out[n].events = POLLIN;
				out[n].revents = 0;
				n++;
			}
		}
	}
	return (n);
}

/* ---- dispatch ---- */

static struct wk_worker *
find_idle(struct ctl *c)
{
	int j;

	for (j = 0; j < c->nprocs; j++) {
		if (c->w[j].phase == PH_READY && !c->w[j].quitting
		        && c->w[j].sock != NULL) {
			return (&c->w[j]);
		}
	}
	return (NULL);
}
/* A reconcile ID, as controller-runtime's (a version 4 UUID): a random
 * 128-bit base drawn once, plus a counter, so no two reconciles of this
 * process share one and no system call is made per reconcile. */
static void
rid_new(char out[IPC_RID_LEN + 1])
{
	static uint64_t base[2], n;
	static bool seeded;
	uint64_t a, b;

	if (!seeded) {
		if (getrandom(base, sizeof(base), 0)
		        != (ssize_t)sizeof(base)) {
			base[0] = (uint64_t)getpid() << 32
			        ^ (uint64_t)time(NULL);
		}
		seeded = true;
	}
	a = base[0];
	b = base[1] + ++n;
	snprintf(out, IPC_RID_LEN + 1, "%08x-%04x-4%03x-%04x-%012llx",
	        (unsigned)(a >> 32), (unsigned)(a >> 16 & 0xffff),
	        (unsigned)(a & 0xfff), (unsigned)(0x8000 | (b >> 48 & 0x3fff)),
	        (unsigned long long)(b & 0xffffffffffffULL));
}

int
wk_dispatch(struct wk_pool *p, const char *controller, const char *key,
        json_object *body, int64_t now_ms)
{
	struct ctl *c = find_ctl(p, controller);
	struct wk_worker *w = c != NULL ? find_idle(c) : NULL;
	enum ipc_sock_rc rc;

	if (p->shutting || w == NULL || key == NULL
	        || !json_object_is_type(body, json_type_object)) {
		json_object_put(body);
		return (-1);
	}
	json_object_object_add(body, "key", json_object_new_string(key));
	json_object_object_add(body, "epoch", json_object_new_int64(p->epoch));
	json_object_object_add(body, "deadlineMs",
	        json_object_new_int64(p->cfg.reconcile_ms));
	rid_new(w->rid);
	json_object_object_add(
	        body, "reconcileID", json_object_new_string(w->rid));
	rc = ipc_sock_send(w->sock, IPC_WORK, 0, body);
	json_object_put(body);
	if (rc != IPC_SOCK_OK) {
		kill_worker(w, now_ms, "cannot send WORK");
		return (-1);
	}
	w->phase = PH_BUSY;
	w->key = xstrdup(key);
	w->key_since = now_ms;
	w->work_epoch = p->epoch;
	w->ticket++;
	w->deadline = now_ms + p->cfg.reconcile_ms;
	w->hb_deadline = -1;
	return (0);
}

int
wk_idle(const struct wk_pool *p, const char *controller)
{
	struct ctl *c = find_ctl(p, controller);
	int j, n = 0;

	for (j = 0; c != NULL && j < c->nprocs; j++) {
		if (c->w[j].phase == PH_READY && !c->w[j].quitting
		        && c->w[j].sock != NULL) {
			n++;
		}
	}
	return (p->shutting ? 0 : n);
}

int
wk_view_reply(struct wk_worker *w, uint64_t ticket, json_object *body)
{
	enum ipc_sock_rc rc;

	if (w->phase != PH_BUSY || w->ticket != ticket || w->sock == NULL) {
		json_object_put(body);
		return (-1);
	}
	rc = ipc_sock_send(w->sock, IPC_VIEW_REPLY, 0, body);
	json_object_put(body);
	return (rc == IPC_SOCK_OK ? 0 : -1);
}

/* ---- timers ---- */

static void
tick_ready(struct wk_worker *w, int64_t now)
{
	struct wk_pool *p = w->pool;
	char d[32], why[64];
	json_object *hb;
	enum ipc_sock_rc rc;

	if (w->hb_deadline >= 0 && now >= w->hb_deadline) {
		snprintf(why, sizeof(why), "heartbeat timeout %s",
		        fmt_dur(p->cfg.hb_timeout_ms, d, sizeof(d)));
		kill_worker(w, now, why);
	} else if (w->hb_deadline < 0 && now >= w->hb_next && !w->quitting) {
		hb = ipc_heartbeat_new(++w->hb_seq);
		rc = ipc_sock_send(w->sock, IPC_HEARTBEAT, 0, hb);
		json_object_put(hb);
		if (rc == IPC_SOCK_ERR) {
			kill_worker(w, now, "cannot send HEARTBEAT");
			return;
		}
		w->hb_deadline = now + p->cfg.hb_timeout_ms;
	}
}

static void
tick_quit(struct wk_worker *w, int64_t now)
{
	if (!w->termed && now >= w->term_at) {
		w->termed = true;
		kill(w->pid, SIGTERM);
	}
	if (!w->killed && now >= w->kill_at) {
		w->killed = true;
		kill(w->pid, SIGKILL);
	}
}

static void
tick_worker(struct wk_worker *w, int64_t now)
{
	struct wk_pool *p = w->pool;
	char d[32], why[64];

	if (w->phase == PH_DOWN && !p->shutting && now >= w->restart_at) {
		spawn(w, now);
	} else if (w->phase == PH_STARTING && now >= w->deadline) {
		snprintf(why, sizeof(why), "handshake timeout %s",
		        fmt_dur(p->cfg.handshake_ms, d, sizeof(d)));
		kill_worker(w, now, why);
	} else if (w->phase == PH_READY) {
		tick_ready(w, now);
	} else if (w->phase == PH_BUSY && now >= w->deadline) {
		snprintf(why, sizeof(why), "reconcile deadline %s",
		        fmt_dur(p->cfg.reconcile_ms, d, sizeof(d)));
		kill_worker(w, now, why);
	} else if (w->phase == PH_DYING && w->deadline >= 0 && !w->killed
	        && now >= w->deadline) {
		/* sent ERROR but did not exit */
		kill(w->pid, SIGKILL);
		w->killed = true;
		w->deadline = -1;
		free(w->kill_cause);
		w->kill_cause = xasprintf("worker error: %s", w->reason);
	}
	if (w->quitting && w->pid > 0) {
		tick_quit(w, now);
	}
}

/* A Degraded controller that stayed up recovers: one line. */
static void
tick_fault(struct ctl *c, const struct wk_config *cfg, int64_t now)
{
	char d[32];

	if (fault_tick(c->fault, now)) {
		log_info(
		        "controller %s recovered: a worker completed a "
		        "reconcile and stayed up %s; quarantine applies again",
		        c->name, fmt_dur(cfg->fault.recover_ms, d, sizeof(d)));
	}
}

void
wk_tick(struct wk_pool *p, int64_t now_ms)
{
	size_t i;
	int j;

	for (i = 0; i < p->nctl; i++) {
		tick_fault(p->ctls[i], &p->cfg, now_ms);
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			tick_worker(&p->ctls[i]->w[j], now_ms);
		}
	}
}

static int64_t
earliest(int64_t a, int64_t b)
{
	if (a < 0) {
		return (b);
	}
	if (b < 0) {
		return (a);
	}
	return (a < b ? a : b);
}

static int64_t
worker_deadline(const struct wk_worker *w, bool shutting)
{
	int64_t t = -1;

	if (w->phase == PH_DOWN && !shutting) {
		t = w->restart_at;
	} else if (w->phase == PH_STARTING || w->phase == PH_BUSY
	        || w->phase == PH_DYING) {
		t = w->deadline;
	} else if (w->phase == PH_READY) {
		t = w->hb_deadline >= 0 ? w->hb_deadline
		        : w->quitting   ? -1
		                        : w->hb_next;
	}
	if (w->quitting && w->pid > 0) {
		t = earliest(t, !w->termed ? w->term_at : -1);
		t = earliest(t, !w->killed ? w->kill_at : -1);
	}
	return (t);
}

int64_t
wk_next_deadline(const struct wk_pool *p, int64_t now_ms)
{
	int64_t t = -1;
	size_t i;
	int j;

	for (i = 0; i < p->nctl; i++) {
		t = earliest(t, fault_next_deadline(p->ctls[i]->fault));
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			t = earliest(t,
			        worker_deadline(
			                &p->ctls[i]->w[j], p->shutting));
		}
	}
	return (t >= 0 && t < now_ms ? now_ms : t);
}

/* ---- shutdown ---- */

void
wk_shutdown(struct wk_pool *p, int64_t now_ms)
{
	struct wk_worker *w;
	json_object *quit;
	size_t i;
	int j;

	p->shutting = true;
	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			w = &p->ctls[i]->w[j];
			if (w->pid <= 0) {
				w->phase = PH_STOPPED;
				continue;
			}
			if (w->quitting) {
				continue;
			}
			w->quitting = true;
			w->term_at = now_ms + p->cfg.shutdown_grace_ms;
			w->kill_at = w->term_at + p->cfg.kill_after_ms;
			if (w->sock != NULL) {
				quit = ipc_quit_new();
				(void)ipc_sock_send(
				        w->sock, IPC_QUIT, 0, quit);
				json_object_put(quit);
			}
		}
	}
}

bool
wk_done(const struct wk_pool *p)
{
	size_t i;
	int j;

	if (!p->shutting) {
		return (false);
	}
	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			if (p->ctls[i]->w[j].phase != PH_STOPPED) {
				return (false);
			}
		}
	}
	return (true);
}

/* ---- health ---- */

static enum wk_state
public_state(struct wk_worker *w, int64_t now)
{
	switch (w->phase) {
	case PH_STARTING:
		return (w->quitting ? WK_STOPPING : WK_STARTING);
	case PH_READY:
		return (w->quitting ? WK_STOPPING : WK_READY);
	case PH_BUSY:
		return (w->quitting ? WK_STOPPING : WK_BUSY);
	case PH_DYING:
		return (w->quitting ? WK_STOPPING : WK_RESTARTING);
	case PH_DOWN:
		return (restart_state(w->restart, now) == RESTART_CRASHLOOP
		                ? WK_CRASHLOOP
		                : WK_RESTARTING);
	case PH_FAILED:
		return (WK_FAILED);
	default:
		return (WK_STOPPED);
	}
}

void
wk_foreach(const struct wk_pool *p, int64_t now_ms, wk_info_fn *fn, void *arg)
{
	struct restart_info ri;
	struct wk_info in;
	struct wk_worker *w;
	size_t i;
	int j;

	for (i = 0; i < p->nctl; i++) {
		for (j = 0; j < p->ctls[i]->nprocs; j++) {
			w = &p->ctls[i]->w[j];
			restart_info(w->restart, now_ms, &ri);
			memset(&in, 0, sizeof(in));
			in.controller = w->ctl->name;
			in.index = w->index;
			in.pid = w->pid;
			in.state = public_state(w, now_ms);
			in.restarts = ri.restarts_total;
			in.last_cause = ri.last_cause;
			in.started_ms = w->started_ms;
			in.ready_ms = ri.ready_since_ms;
			in.hb_age_ms
			        = w->last_rx >= 0 ? now_ms - w->last_rx : -1;
			in.key = w->key;
			in.key_since_ms = w->key_since;
			in.reconciles_ok = w->ok;
			in.reconciles_lost = w->lost;
			in.quarantined = quarantine_count(w->ctl->q);
			fn(&in, arg);
		}
	}
}

/* Clears a failed controller: its failed slots start now. */
static void
unfail(struct ctl *c, int64_t now)
{
	fault_reset(c->fault, now);
	for (int j = 0; j < c->nprocs; j++) {
		if (c->w[j].phase == PH_FAILED) {
			c->w[j].phase = PH_DOWN;
			c->w[j].restart_at = now;
		}
	}
	log_info("controller %s: failed state cleared on request; starting "
	         "its workers",
	        c->name);
}

int
wk_restart(struct wk_pool *p, const char *controller, int index,
        const char *cause, int64_t now_ms)
{
	struct ctl *c = find_ctl(p, controller);
	struct wk_worker *w;

	if (c == NULL || index < 0 || index >= c->nprocs || p->shutting
	        || !p->started) {
		return (-1);
	}
	w = &c->w[index];
	if (fault_state(c->fault) == FAULT_FAILED) {
		unfail(c, now_ms);
	}
	if (w->phase == PH_DOWN) {
		w->restart_at = now_ms;
		return (0);
	}
	if (w->pid > 0 && w->phase != PH_DYING) {
		w->asked = true;
		kill_worker(w, now_ms, cause);
	}
	return (0);
}

void
wk_violation(struct wk_worker *w, const char *cause, int64_t now_ms)
{
	if (w == NULL || w->pid <= 0 || w->phase == PH_DYING) {
		return;
	}
	w->poison = w->key != NULL;
	kill_worker(w, now_ms, cause);
	w->poison = false;
}

int
wk_fault_info(const struct wk_pool *p, const char *controller,
        struct fault_info *out)
{
	struct ctl *c = find_ctl(p, controller);

	if (c == NULL) {
		return (-1);
	}
	fault_info(c->fault, out);
	return (0);
}

struct quarantine *
wk_quarantine(struct wk_pool *p, const char *controller)
{
	struct ctl *c = find_ctl(p, controller);

	return (c != NULL ? c->q : NULL);
}

const char *
wk_worker_controller(const struct wk_worker *w)
{
	return (w->ctl->name);
}

int
wk_worker_index(const struct wk_worker *w)
{
	return (w != NULL ? w->index : -1);
}

const char *
wk_worker_key(const struct wk_worker *w)
{
	return (w != NULL ? w->key : NULL);
}

pid_t
wk_worker_pid(const struct wk_worker *w)
{
	return (w->pid);
}
