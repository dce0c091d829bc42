/*
 * settle.h: a worker's RESULT to writes to a verdict (design.md steps 4
 * and 5).  Prefix settle_.
 *
 * A RESULT (decoded once where it arrived: workers.c) of the current
 * epoch, while the fence allows writing, with no writes ends the
 * reconcile at once: its verdict becomes the queue action (done,
 * requeue, requeue after, error with backoff, terminal).  One with writes
 * is accepted (settle.c accept_writes(): the one place a RESULT's writes
 * are taken) and handed to the writer under a token; the pending table
 * keeps the key and verdict until the writer reports (settle_written()):
 * all writes done, the verdict; a write failed, an error with backoff and
 * a Warning "FailedWrite" Event when the API server refused it for good
 * (Invalid, BadRequest, Forbidden); fenced, the key is only released.
 * Before that, every write is checked against the controller's write
 * policy and the key's write budget (wpolicy.h): a violation refuses the
 * whole RESULT, nothing of it is sent.  A
 * RESULT of another epoch, or one arriving while not leading, is dropped
 * (the key released).  Every final verdict is counted (stats.h).
 *
 * A key lost with its worker is requeued with backoff, or, quarantined,
 * held back until its quarantine ends with a Warning "Quarantined" Event;
 * a worker killed by its sandbox gives a Warning "SandboxKilled" Event.
 *
 * The pending table finds a completion in O(1): a token names its slot
 * (low 32 bits) and the slot's use (high 32 bits).
 *
 * The writer and the fence are the caller's functions (struct
 * settle_conf), so this is tested against fakes.
 */
#ifndef SETTLE_H
#define SETTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc.h"
#include "supervisor/queue.h"
#include "supervisor/wpolicy.h"
#include "supervisor/writer.h"

struct settle;
struct stats;

/* The writer's part (writer.h). */
struct settle_writer {
	/* wr_submit(): 0, or -1 when refused. */
	int (*submit)(void *arg, const struct wr_batch *b, uint64_t token);
	/* The supervisor's own Event (wr_event()) on the primary object key
	 * of controller ctl (settle_add()'s index); nothing when the object
	 * is not cached. */
	void (*event)(void *arg, size_t ctl, const char *key, const char *type,
	        const char *reason, const char *message);
};

struct settle_conf {
	struct settle_writer wr;
	/* The write policy of a RESULT r of controller ctl (wpol_check()
	 * with its contract, its cached primary and its caches): WPOL_OK,
	 * WPOL_RETRY or WPOL_VIOLATION with *v filled. */
	enum wpol_verdict (*check)(void *arg, size_t ctl,
	        const struct ipc_result *r, const struct ipc_write *ops,
	        struct wpol_violation *v);
	/* The fence: whether this process may write now. */
	bool (*may_write)(void *arg, int64_t now);
	/* What a RESULT asks besides its writes (r->telemetry and
	 * r->memory_store, borrowed, either NULL) once its writes all
	 * succeeded, or at once when it has none; sent_ms is r->sent_ms.
	 * NULL: they are dropped. */
	void (*settled)(void *arg, size_t ctl, const char *key,
	        json_object *tel, json_object *mem, int64_t sent_ms,
	        int64_t now);
	void *arg;           /* given to the functions above */
	struct stats *stats; /* borrowed; NULL: not counted */
};

/* conf is copied.  Caller frees with settle_free() (pending entries are
 * dropped without queue actions). */
struct settle *settle_new(const struct settle_conf *conf);
void settle_free(struct settle *st); /* NULL is fine */

/* Adds controller name (borrowed, static) whose keys are in q (borrowed).
 * Returns its index (as given to the event function). */
size_t settle_add(struct settle *st, const char *name, struct queue *q);
/* The group and Kind of controller ctl's primary (borrowed, static), for
 * the fields of its log records (log_obj()). */
void settle_set_kind(
        struct settle *st, size_t ctl, const char *group, const char *kind);

/* A RESULT r with its r->nwrites typed writes ops (borrowed; what they
 * point to is referenced through r->writes while the writes run) from
 * worker index worker of controller; epoch: the current one.  Its writes
 * pass the write policy (conf.check) and the key's write budget
 * (wpolicy.h) before anything is submitted: a RESULT the policy cannot
 * judge yet (WPOL_RETRY) is dropped and the key retried with backoff; a
 * violation returns -1 with *v filled, nothing of the RESULT sent and
 * the key left in flight: the caller kills the worker
 * (sup_violation()), which loses the key (settle_lost()).  Returns 0
 * otherwise. */
int settle_result(struct settle *st, const char *controller, int worker,
        const struct ipc_result *r, const struct ipc_write *ops,
        uint32_t epoch, int64_t now, struct wpol_violation *v);

/* The writer finished the writes submitted under token (wr_done_fn).
 * Unknown tokens are ignored. */
void settle_written(struct settle *st, uint64_t token,
        const struct wr_report *rep, int64_t now);

/* How a key was lost (workers.h on_lost). */
struct settle_loss {
	const char *cause; /* "signal SIGKILL", ... */
	bool quarantined;
	int64_t until_ms; /* quarantined: held until (quarantine_until()) */
	int deaths;       /* quarantined: deaths in a row */
};

/* key of controller was in flight when its worker died. */
void settle_lost(struct settle *st, const char *controller, const char *key,
        const struct settle_loss *loss, int64_t now);

/* key of controller left its quarantine (a controller fault): queued. */
void settle_released(struct settle *st, const char *controller,
        const char *key, int64_t now);

/* Results whose writes are with the writer. */
size_t settle_pending(const struct settle *st);

#endif
