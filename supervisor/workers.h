/*
 * workers.h: the worker process pool of design.md "Worker lifecycle"
 * (issue 4, deliverable 5).  Prefix wk_.  One pool holds, per controller,
 * N process slots (--workers NAME=N); each slot runs one
 * `<binary> --controller NAME --socket <runtime>/<name>-<i>.sock
 * [--log-format F]` talking ipc over its own nng socket (ipc_sock.h).
 *
 * The pool is driven by the supervisor's single poll loop: no threads, no
 * blocking calls, time injected as now_ms (monotonic milliseconds).  The
 * loop polls wk_fds(), calls wk_handle_io() when any is readable (or
 * always: it never blocks), wk_reap() on SIGCHLD (signalfd), and wk_tick()
 * when wk_next_deadline() is reached.  Callbacks run from inside those
 * calls; they may call wk_dispatch(), wk_idle(), wk_view_reply() and the
 * read-only functions, never wk_free().
 *
 * Slot life: restarting (waiting for its start time) -> starting (forked,
 * handshake deadline) -> HELLO checked (controller name, HELLO pid and the
 * socket's peer pid must equal the forked pid) -> READY sent (epoch and
 * configuration) -> ready (idle; heartbeats) <-> busy (one key in flight,
 * reconcile deadline) -> ... until the process exits (reaped) or the pool
 * kills it (SIGKILL: handshake deadline, heartbeat timeout, reconcile
 * deadline, malformed or unexpected message, peer pid mismatch).  Every
 * exit goes through restart.h: the first restart is immediate, then
 * exponential backoff; too many exits in a period is crash-loop (still
 * retried at the maximum backoff).  The pool never exits the process
 * because of a worker.
 *
 * A key in flight when its worker dies or is killed is reported once via
 * on_lost (the caller re-queues it with backoff); the controller's
 * quarantine (restart.h) counts that death, and on_lost says when the key
 * is now quarantined (the caller then holds it until
 * quarantine_until(wk_quarantine(pool, ctl), key)).  A RESULT for the key
 * breaks its row (quarantine_key_ok()).
 *
 * Controller faults (fault.h): each controller's deaths also feed its
 * struct fault.  When its workers die on fault.keys [3] different keys in
 * a row (no RESULT between), the controller is Degraded: one log line
 * "controller NAME degraded: workers died on 3 different keys in a row
 * (last: CAUSE on KEY); restarting with backoff D"; its keys are not
 * quarantined any more, the keys quarantined during the streak are
 * released (on_released: the caller queues them now), and its restarts
 * wait the fault's backoff.  It recovers by itself (one log line
 * "controller NAME recovered: ...") fault.recover_ms after the first
 * RESULT that followed the last death, if no worker died since.
 *
 * Permanent failures: a worker that exits IPC_EXIT_PERMANENT (ipc.h) is
 * not restarted.  Its controller is failed (one log line with the exit
 * status and the worker's reason, from the ERROR it sent first when it
 * could); every slot of it stays down once its process exits, until
 * wk_restart() of any of its slots starts them all again.  An ERROR from
 * a worker ends its session (the key in flight is lost) and the pool gives
 * the process kill_after_ms to exit by itself before SIGKILL.
 *
 * Heartbeats: while a slot is ready (idle), the pool sends HEARTBEAT {seq}
 * every heartbeat_interval_ms of silence and kills the worker when no
 * HEARTBEAT comes back within heartbeat_timeout_ms.  Any HEARTBEAT from the
 * worker counts as the answer (the worker echoes ours); the pool never
 * answers a HEARTBEAT, so two echoing ends cannot loop.  A busy worker is
 * watched by the reconcile deadline instead.
 *
 * The child process: a clean environment (exactly cfg.env, plus
 * ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS copied from the supervisor
 * when set, since they only tune sanitizer diagnostics, and
 * SYMPOZIUM_WORKER_REPORT_FD=3), every descriptor but 0, 1, 2 and 3 closed
 * (stdout/stderr inherited: worker logs go to the supervisor's stderr; 3:
 * the write end of the sandbox kill report's pipe, ipc/sbxrep.h, read when
 * a worker died by SIGSYS: the cause then names the system call), all signals
 * unblocked and at their default action, its own process group (a terminal's
 * ^C reaches only the supervisor, which stops the workers), RLIMIT_CORE 0, and
 * PR_SET_PDEATHSIG(SIGKILL) so it dies with the supervisor.
 */
#ifndef WORKERS_H
#define WORKERS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "ipc/ipc.h"
#include "supervisor/fault.h"
#include "supervisor/restart.h"

struct wk_pool;
struct wk_worker; /* one process slot; lives as long as the pool */

#define WK_DEFAULT_HANDSHAKE_MS      5000
#define WK_DEFAULT_HB_INTERVAL_MS    5000
#define WK_DEFAULT_HB_TIMEOUT_MS     5000
#define WK_DEFAULT_RECONCILE_MS      60000
#define WK_DEFAULT_SHUTDOWN_GRACE_MS 10000
#define WK_DEFAULT_KILL_AFTER_MS     5000
#define WK_CONTROLLER_MAX            63 /* bytes of a controller name */
#define WK_PROCS_MAX                 64 /* processes of one controller */

struct wk_config {
	const char *binary;        /* the worker executable (path) */
	const char *runtime_dir;   /* exists, mode 0700: the sockets */
	const char *log_format;    /* passed as --log-format; NULL: omitted */
	const char *const *env;    /* NULL-terminated "K=V"; NULL: none */
	int64_t handshake_ms;      /* spawn to HELLO */
	int64_t hb_interval_ms;    /* idle silence before a HEARTBEAT */
	int64_t hb_timeout_ms;     /* HEARTBEAT to its answer */
	int64_t reconcile_ms;      /* WORK to RESULT (--reconcile-timeout) */
	int64_t shutdown_grace_ms; /* QUIT to SIGTERM */
	int64_t kill_after_ms;     /* SIGTERM to SIGKILL */
	size_t max_msg;            /* inbound message bound; 0: IPC_MAX_LEN */
	struct restart_config restart;
	struct quarantine_config quarantine;
	struct fault_config fault;
};

/*
 * Callbacks (any may be NULL).  Strings and messages are borrowed for the
 * call.  arg is wk_pool_new()'s.
 *
 * on_result: a valid RESULT from worker w (its key is the key in flight
 * and its epoch the one sent in WORK), decoded once here
 * (ipc_result_decode()): r and its r->nwrites typed writes ops, borrowed
 * for the call (what they point to lives in the message: a callee that
 * keeps them takes a reference to r->writes).  w is still busy during the
 * call and becomes ready right after (then on_idle), unless the callee
 * killed it (wk_violation()).  The caller checks
 * the epoch against the current one (fencing).
 *
 * on_view: a valid VIEW_REQ from w while busy; the caller answers with
 * wk_view_reply(w, ticket, body), now or later.
 *
 * on_lost: key was in flight when its worker died or was killed; cause is
 * "exit 3", "signal SIGSEGV", "reconcile deadline 60 s",
 * "malformed message: ...", "heartbeat timeout 5 s", ...; quarantined is
 * quarantine_key_died()'s answer.  Called once per lost key.
 *
 * on_idle: a worker of controller became ready (after the handshake or
 * after a RESULT): dispatch more.
 *
 * on_released: key was quarantined during a streak that turned out to be
 * a controller fault: it is not held any more (queue it now).
 */
struct wk_callbacks {
	void (*on_result)(void *arg, const char *controller,
	        struct wk_worker *w, const struct ipc_result *r,
	        const struct ipc_write *ops);
	void (*on_view)(void *arg, struct wk_worker *w, uint64_t ticket,
	        const struct ipc_msg *msg);
	void (*on_lost)(void *arg, const char *controller, const char *key,
	        const char *cause, bool quarantined);
	void (*on_idle)(void *arg, const char *controller);
	void (*on_released)(
	        void *arg, const char *controller, const char *key);
};

/* A slot's state as shown in health output. */
enum wk_state {
	WK_STARTING,   /* forked, handshake pending */
	WK_READY,      /* idle */
	WK_BUSY,       /* a key in flight */
	WK_RESTARTING, /* down (or dying), restart scheduled */
	WK_CRASHLOOP,  /* down, restart policy in CrashLoop */
	WK_STOPPING,   /* shutdown: QUIT sent, not yet reaped */
	WK_STOPPED,    /* shutdown done, or never started */
	WK_FAILED,     /* down after a permanent exit: not restarted */
};

/* Read-only view of one slot for health output (wk_foreach()).  Strings
 * are borrowed for the callback's duration. */
struct wk_info {
	const char *controller;
	int index; /* 0..nprocs-1 */
	pid_t pid; /* 0: no process */
	enum wk_state state;
	uint64_t restarts;        /* exits seen */
	const char *last_cause;   /* "" none */
	int64_t started_ms;       /* last spawn, -1 never */
	int64_t ready_ms;         /* ready since (-1: not ready) */
	int64_t hb_age_ms;        /* since last message from it (-1: none) */
	const char *key;          /* in flight, NULL none */
	int64_t key_since_ms;     /* -1 when no key */
	uint64_t reconciles_ok;   /* RESULTs received */
	uint64_t reconciles_lost; /* keys lost with the worker */
	size_t quarantined;       /* the controller's quarantined keys */
};

typedef void wk_info_fn(const struct wk_info *info, void *arg);

/* Fills the defaults above (binary, runtime_dir, log_format, env NULL). */
void wk_config_default(struct wk_config *c);
/* cfg is copied (strings and env too); cb copied; arg borrowed.  Caller
 * frees with wk_free(). */
struct wk_pool *wk_pool_new(
        const struct wk_config *cfg, const struct wk_callbacks *cb, void *arg);
/* SIGKILLs and reaps (blocking waitpid) any process still running, closes
 * the sockets and frees everything.  NULL is accepted.  Call wk_shutdown()
 * and wait for wk_done() first for a clean stop. */
void wk_free(struct wk_pool *p);

/* Adds a controller with nprocs (1..WK_PROCS_MAX) slots; before
 * wk_start().  name: 1..WK_CONTROLLER_MAX bytes of [a-z0-9-], unique, and
 * the socket paths must fit a sockaddr_un.  Returns 0, or -1 with a
 * message in err. */
int wk_add_controller(struct wk_pool *p, const char *name, int nprocs,
        char *err, size_t errlen);
/* Spawns every slot.  Returns 0 (a slot that fails to spawn is handled as
 * an exit and retried under the restart policy). */
int wk_start(struct wk_pool *p, int64_t now_ms);

/* The epoch sent in READY and WORK from now on (default 0). */
void wk_set_epoch(struct wk_pool *p, int64_t epoch);

/* Sends WORK for key to an idle ready worker of controller.  body is a
 * WORK body (ipc_work_new()), taken in every case; the pool sets its
 * "key", "epoch" (wk_set_epoch()) and "deadlineMs" (reconcile_ms).
 * Returns 0 when sent (the worker is busy with key until its RESULT or
 * on_lost), -1 when no worker is idle (or the pool is shutting down, or
 * the send failed: that worker is killed, key is not lost). */
int wk_dispatch(struct wk_pool *p, const char *controller, const char *key,
        json_object *body, int64_t now_ms);
/* Number of idle ready workers of controller (0 when unknown). */
int wk_idle(const struct wk_pool *p, const char *controller);
/* Sends VIEW_REPLY body (taken) to w if ticket still names its current
 * reconcile (the one on_view reported).  Returns 0, or -1 when the
 * reconcile is over or the worker is gone (body dropped). */
int wk_view_reply(struct wk_worker *w, uint64_t ticket, json_object *body);

/* Fills out with the descriptors to poll (POLLIN), at most max; returns
 * the number filled. */
size_t wk_fds(const struct wk_pool *p, struct pollfd *out, size_t max);
/* Drains every session's waiting messages (never blocks). */
void wk_handle_io(struct wk_pool *p, int64_t now_ms);
/* Deadlines: handshake, heartbeats, reconcile deadline, restarts due,
 * shutdown SIGTERM/SIGKILL. */
void wk_tick(struct wk_pool *p, int64_t now_ms);
/* The earliest time wk_tick() has something to do (>= now_ms), or -1 for
 * none. */
int64_t wk_next_deadline(const struct wk_pool *p, int64_t now_ms);
/* Reaps exited workers (waitpid(pid, WNOHANG) per slot, so other children
 * of the process are left alone) and schedules their restarts.  Call on
 * SIGCHLD. */
void wk_reap(struct wk_pool *p, int64_t now_ms);

/* Stops dispatch, sends QUIT to every worker, SIGTERM after
 * shutdown_grace_ms, SIGKILL kill_after_ms later (driven by wk_tick());
 * slots waiting for a restart stop at once.  A RESULT arriving meanwhile
 * is still delivered. */
void wk_shutdown(struct wk_pool *p, int64_t now_ms);
/* True after wk_shutdown() once every worker has exited and been reaped. */
bool wk_done(const struct wk_pool *p);

/* Restarts slot index of controller on request (sympoziumctl restart):
 * a live process is SIGKILLed with cause (its key in flight, if any, is
 * lost and requeued as with any death) and started again at once when
 * reaped, without the restart backoff; a slot waiting for its restart
 * (backoff, crash-loop) starts now.  A failed controller (permanent
 * exit) is cleared and every failed slot of it starts now.  Returns 0, or
 * -1 when the slot is unknown or the pool is shutting down. */
int wk_restart(struct wk_pool *p, const char *controller, int index,
        const char *cause, int64_t now_ms);

/* w broke the supervisor's policy (sup_violation()) while busy: it is
 * SIGKILLed with cause at once, and its key in flight is quarantined at
 * once (quarantine_key_poison(), not counted as a controller fault),
 * then reported lost (on_lost, quarantined).  Nothing when w is not
 * live. */
void wk_violation(struct wk_worker *w, const char *cause, int64_t now_ms);

/* Walks every slot in controller order, then index. */
void wk_foreach(
        const struct wk_pool *p, int64_t now_ms, wk_info_fn *fn, void *arg);
/* The fault state of controller into *out (strings borrowed until the
 * pool's next call).  Returns 0, or -1 when unknown. */
int wk_fault_info(const struct wk_pool *p, const char *controller,
        struct fault_info *out);
/* The quarantine of controller (borrowed; NULL when unknown). */
struct quarantine *wk_quarantine(struct wk_pool *p, const char *controller);

/* A worker's controller and index (borrowed; the index of NULL, a result
 * produced in-process by the dispatch benchmark, is -1). */
const char *wk_worker_controller(const struct wk_worker *w);
int wk_worker_index(const struct wk_worker *w);
/* w's key in flight (borrowed), or NULL when none (or w is NULL). */
const char *wk_worker_key(const struct wk_worker *w);
pid_t wk_worker_pid(const struct wk_worker *w);

/* ---- pure helpers (exposed for tests) ---- */

/* "starting", "ready", "busy", "restarting", "crash-loop", "stopping",
 * "stopped", "failed" ("unknown" otherwise).  Static string. */
const char *wk_state_name(enum wk_state s);
/* Writes the exit cause of a waitpid() status into buf: "exit N",
 * "signal SIGSEGV" (or "signal N" for an unnamed one), with " (core
 * dumped)" when so.  Returns buf. */
char *wk_exit_cause(int status, char *buf, size_t len);

#endif
