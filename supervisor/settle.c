/*
 * settle.c: a worker's RESULT to writes to a verdict (settle.h): the
 * pending table, verdicts to queue actions, the Events about failed
 * writes, lost and quarantined keys and sandbox kills, and the counting
 * of every final verdict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/sbxrep.h"
#include "supervisor/settle.h"
#include "supervisor/stats.h"

struct sctl {
	const char *name;
	const char *group, *kind; /* its primary's (the log records) */
	struct queue *q;
};

/* A RESULT whose writes are with the writer. */
struct pend {
	uint64_t token; /* 0: the slot is free */
	size_t ctl;
	int worker; /* the slot that sent the RESULT (stats) */
	char *key;
	enum queue_verdict verdict;
	int64_t after_ms;
	json_object *tel; /* the RESULT's telemetry (a reference), or NULL */
	json_object *mem; /* its memoryStore (a reference), or NULL */
	int64_t sent_ms;
	char *message;             /* an error verdict's, or NULL */
	char rid[IPC_RID_LEN + 1]; /* the reconcile's ID */
};

struct settle {
	struct settle_conf conf;
	struct sctl *ctls;
	size_t nctls;
	/* the pending table: slots, the free ones stacked */
	struct pend *slots;
	size_t nslots;
	uint32_t *free_slots;
	size_t nfree;
	size_t npend;
	uint32_t uses;              /* high half of the next token */
	struct wpol_budget *budget; /* writes per key over time */
};

struct settle *
settle_new(const struct settle_conf *conf)
{
	struct settle *st = xcalloc(1, sizeof(*st));

	st->conf = *conf;
	st->budget = wpol_budget_new();
	return (st);
}

void
settle_free(struct settle *st)
{
	if (st == NULL) {
		return;
	}
	for (size_t i = 0; i < st->nslots; i++) {
		free(st->slots[i].key);
		free(st->slots[i].message);
		json_object_put(st->slots[i].tel);
		json_object_put(st->slots[i].mem);
	}
	free(st->slots);
	free(st->free_slots);
	free(st->ctls);
	wpol_budget_free(st->budget);
	free(st);
}

size_t
settle_add(struct settle *st, const char *name, struct queue *q)
{
	st->ctls = xreallocarray(st->ctls, st->nctls + 1, sizeof(*st->ctls));
	st->ctls[st->nctls] = (struct sctl) { .name = name, .q = q };
	return (st->nctls++);
}

void
settle_set_kind(
        struct settle *st, size_t ctl, const char *group, const char *kind)
{
	if (ctl < st->nctls) {
		st->ctls[ctl].group = group;
		st->ctls[ctl].kind = kind;
	}
}

size_t
settle_pending(const struct settle *st)
{
	return (st->npend);
}

static struct sctl *
find_ctl(struct settle *st, const char *name, size_t *idx)
{
	for (size_t i = 0; i < st->nctls; i++) {
		if (strcmp(st->ctls[i].name, name) == 0) {
			*idx = i;
			return (&st->ctls[i]);
		}
	}
	return (NULL);
}

/* ---- the pending table ---- */

/* A free slot for p; returns p's token. */
static uint64_t
pend_put(struct settle *st, const struct pend *p)
{
	uint32_t slot;

	if (st->nfree > 0) {
		slot = st->free_slots[--st->nfree];
	} else {
		st->slots = xreallocarray(
		        st->slots, st->nslots + 1, sizeof(*st->slots));
		st->free_slots = xreallocarray(st->free_slots, st->nslots + 1,
		        sizeof(*st->free_slots));
		slot = (uint32_t)st->nslots++;
	}
	if (++st->uses == 0) {
		st->uses = 1; /* a token is never 0 */
	}
	st->slots[slot] = *p;
	st->slots[slot].token = ((uint64_t)st->uses << 32) | slot;
	st->npend++;
	return (st->slots[slot].token);
}

/* token's entry, or NULL. */
static struct pend *
pend_get(struct settle *st, uint64_t token)
{
	uint64_t slot = token & 0xffffffffu;

	if (token == 0 || slot >= st->nslots
	        || st->slots[slot].token != token) {
		return (NULL);
	}
	return (&st->slots[slot]);
}

static void
pend_del(struct settle *st, struct pend *p)
{
	free(p->key);
	free(p->message);
	json_object_put(p->tel);
	json_object_put(p->mem);
	*p = (struct pend) { 0 };
	st->free_slots[st->nfree++] = (uint32_t)(p - st->slots);
	st->npend--;
}

/* ---- verdicts ---- */

static enum queue_verdict
verdict_of(enum ipc_verdict v)
{
	switch (v) {
	case IPC_V_DONE:
		return (QUEUE_SUCCESS);
	case IPC_V_REQUEUE:
		return (QUEUE_REQUEUE);
	case IPC_V_REQUEUE_AFTER:
		return (QUEUE_REQUEUE_AFTER);
	case IPC_V_TERMINAL:
		return (QUEUE_TERMINAL);
	default:
		return (QUEUE_ERROR);
	}
}

static enum stats_result
result_of(enum queue_verdict v, int64_t after_ms)
{
	switch (v) {
	case QUEUE_SUCCESS:
		return (STATS_SUCCESS);
	case QUEUE_REQUEUE:
		return (STATS_REQUEUE);
	case QUEUE_REQUEUE_AFTER:
		return (after_ms > 0 ? STATS_REQUEUE_AFTER : STATS_REQUEUE);
	default:
		return (STATS_ERROR);
	}
}

/* The fields of a record about key of controller c (ns: its namespace,
 * filled here). */
static struct log_obj
obj_of(const struct sctl *c, const char *key, const char *rid,
        char ns[IPC_NAME_MAX + 1])
{
	const char *slash = strchr(key, '/');

	ns[0] = '\0';
	if (slash != NULL) {
		snprintf(
		        ns, IPC_NAME_MAX + 1, "%.*s", (int)(slash - key), key);
	}
	return ((struct log_obj) { .controller = c->name,
	        .group = c->group,
	        .kind = c->kind,
	        .ns = ns,
	        .name = slash != NULL ? slash + 1 : key,
	        .reconcile_id = rid });
}

/* The record of a reconcile's end, as controller-runtime logs it: one
 * "Reconciler error" per failed reconcile (terminal ones included), a
 * debug "Reconciled" otherwise. */
static void
log_end(const struct sctl *c, const char *key, const char *rid,
        enum queue_verdict v, const char *msg)
{
	static const char *const names[] = { [QUEUE_SUCCESS] = "done",
		[QUEUE_REQUEUE] = "requeue",
		[QUEUE_REQUEUE_AFTER] = "requeue_after",
		[QUEUE_ERROR] = "error",
		[QUEUE_TERMINAL] = "terminal" };
	char ns[IPC_NAME_MAX + 1];
	struct log_obj o = obj_of(c, key, rid, ns);

	o.key = "result";
	o.value = (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v]
	                                                         : "";
	if (v == QUEUE_ERROR || v == QUEUE_TERMINAL) {
		o.error = msg != NULL && msg[0] != '\0' ? msg : "error";
		log_obj(LOG_LEVEL_ERROR, &o, "Reconciler error");
	} else {
		log_obj(LOG_LEVEL_DEBUG, &o, "Reconciled");
	}
}

/* Counts a reconcile's final verdict (stats.h), before the queue forgets
 * when it started, and logs it. */
static void
count(struct settle *st, const struct sctl *c, int worker, const char *key,
        const char *rid, enum queue_verdict v, int64_t after_ms,
        const char *msg, int64_t now)
{
	int64_t t0 = queue_started_ms(c->q, key);

	log_end(c, key, rid, v, msg);

	stats_reconcile(st->conf.stats, c->name, worker,
	        result_of(v, after_ms), t0 >= 0 ? now - t0 : 0, msg, now);
	if (v == QUEUE_TERMINAL) {
		stats_terminal(st->conf.stats, c->name);
	}
}

static void
event(struct settle *st, size_t ctl, const char *key, const char *reason,
        const char *msg)
{
	st->conf.wr.event(st->conf.arg, ctl, key, "Warning", reason, msg);
}

/* Hands the writes of r to the writer under a new token. */
static void
submit(struct settle *st, size_t ctl, int worker, const struct ipc_result *r,
        const struct ipc_write *ops, int64_t now)
{
	struct pend p = { .ctl = ctl,
		.worker = worker,
		.key = xstrdup(r->key),
		.verdict = verdict_of(r->verdict),
		.after_ms = r->after_ms,
		.tel = json_object_get(r->telemetry),
		.mem = json_object_get(r->memory_store),
		.sent_ms = r->sent_ms,
		.message
		= r->verdict == IPC_V_ERROR || r->verdict == IPC_V_TERMINAL
		        ? xstrdup(r->message)
		        : NULL };

	snprintf(p.rid, sizeof(p.rid), "%s",
	        r->reconcile_id != NULL ? r->reconcile_id : "");
	uint64_t token = pend_put(st, &p);
	struct wr_batch b = { .key = r->key,
		.controller = st->ctls[ctl].name,
		.ops = ops,
		.n = r->nwrites,
		.keep = r->writes };

	if (st->conf.wr.submit(st->conf.arg, &b, token) != 0) {
		log_warnx("%s: %s: the writer refused the result",
		        st->ctls[ctl].name, r->key);
		pend_del(st, pend_get(st, token));
		queue_finish(st->ctls[ctl].q, r->key, QUEUE_ERROR, 0, now);
	}
}

/* The write policy and the key's budget over r's writes (wpolicy.h). */
static enum wpol_verdict
policy(struct settle *st, size_t ctl, const struct ipc_result *r,
        const struct ipc_write *ops, int64_t now, struct wpol_violation *v)
{
	enum wpol_verdict rc = st->conf.check != NULL
	        ? st->conf.check(st->conf.arg, ctl, r, ops, v)
	        : WPOL_RETRY;

	if (rc == WPOL_OK
	        && !wpol_budget_take(st->budget, st->ctls[ctl].name, r->key,
	                r->nwrites, now)) {
		v->rule = "write-budget";
		v->index = r->nwrites;
		snprintf(v->detail, sizeof(v->detail),
		        "%zu writes over the key's budget (%d at once, %d/s)",
		        r->nwrites, WPOL_BUDGET_BURST, WPOL_BUDGET_RATE);
		rc = WPOL_VIOLATION;
	}
	return (rc);
}

/*
 * The one place where a RESULT's writes are accepted and handed to the
 * writer, once every one of them has passed the write policy.  Returns
 * -1 on a violation (*v: nothing sent, the key still in flight).
 */
static int
accept_writes(struct settle *st, size_t ctl, int worker,
        const struct ipc_result *r, const struct ipc_write *ops, int64_t now,
        struct wpol_violation *v)
{
	enum wpol_verdict rc = policy(st, ctl, r, ops, now, v);

	if (rc == WPOL_VIOLATION) {
		return (-1);
	}
	if (rc == WPOL_RETRY) {
		log_warnx("%s: %s: the caches the write policy needs are not "
		          "synced; retrying",
		        st->ctls[ctl].name, r->key);
		count(st, &st->ctls[ctl], worker, r->key, r->reconcile_id,
		        QUEUE_ERROR, 0, "write policy: caches not synced",
		        now);
		queue_finish(st->ctls[ctl].q, r->key, QUEUE_ERROR, 0, now);
		return (0);
	}
	submit(st, ctl, worker, r, ops, now);
	return (0);
}

static void
settled(struct settle *st, size_t ctl, const char *key, json_object *tel,
        json_object *mem, int64_t sent_ms, int64_t now)
{
	if ((tel != NULL || mem != NULL) && st->conf.settled != NULL) {
		st->conf.settled(
		        st->conf.arg, ctl, key, tel, mem, sent_ms, now);
	}
}

int
settle_result(struct settle *st, const char *controller, int worker,
        const struct ipc_result *r, const struct ipc_write *ops,
        uint32_t epoch, int64_t now, struct wpol_violation *v)
{
	size_t idx;
	struct sctl *c = find_ctl(st, controller, &idx);

	*v = (struct wpol_violation) { 0 };
	if (c == NULL) {
		return (0);
	}
	if ((uint32_t)r->epoch != epoch
	        || !st->conf.may_write(st->conf.arg, now)) {
		log_info("%s: dropping the result for %s from epoch %lld",
		        controller, r->key, (long long)r->epoch);
		queue_done(c->q, r->key, now);
		return (0);
	}
	if (r->nwrites == 0) {
		settled(st, idx, r->key, r->telemetry, r->memory_store,
		        r->sent_ms, now);
		count(st, c, worker, r->key, r->reconcile_id,
		        verdict_of(r->verdict), r->after_ms, r->message, now);
		queue_finish(c->q, r->key, verdict_of(r->verdict), r->after_ms,
		        now);
		return (0);
	}
	return (accept_writes(st, idx, worker, r, ops, now, v));
}

/* The API server refused a write for good (it will refuse the retries
 * too): say so on the object. */
static void
write_failed_event(struct settle *st, size_t ctl, const char *key,
        const struct wr_report *rep)
{
	char msg[1024];

	if (rep->rc != KAPI_EINVALID && rep->rc != KAPI_EBADREQUEST
	        && rep->rc != KAPI_EFORBIDDEN) {
		return;
	}
	snprintf(msg, sizeof(msg), "write %zu refused (%s): %s", rep->failed,
	        kapi_rc_name(rep->rc), rep->message);
	event(st, ctl, key, "FailedWrite", msg);
}

void
settle_written(struct settle *st, uint64_t token, const struct wr_report *rep,
        int64_t now)
{
	struct pend *p = pend_get(st, token);

	if (p == NULL) {
		return;
	}
	struct sctl *c = &st->ctls[p->ctl];
	char msg[1024];

	snprintf(msg, sizeof(msg), "write %zu failed: %s", rep->failed,
	        rep->message != NULL ? rep->message : "");
	if (rep->outcome != WR_FENCED) {
		bool ok = rep->outcome == WR_OK;
		count(st, c, p->worker, p->key, p->rid,
		        ok ? p->verdict : QUEUE_ERROR, p->after_ms,
		        ok ? p->message : msg, now);
	}
	if (rep->outcome == WR_OK) {
		settled(st, p->ctl, p->key, p->tel, p->mem, p->sent_ms, now);
		queue_finish(c->q, p->key, p->verdict, p->after_ms, now);
	} else if (rep->outcome == WR_FENCED) {
		queue_done(c->q, p->key, now);
	} else {
		write_failed_event(st, p->ctl, p->key, rep);
		queue_finish(c->q, p->key, QUEUE_ERROR, 0, now);
	}
	pend_del(st, p);
}

/* A worker killed by its sandbox: a Warning Event on the key in flight
 * naming the system call (ipc/sbxrep.h). */
static void
sandbox_event(
        struct settle *st, size_t ctl, const char *key, const char *cause)
{
	const char *what = strstr(cause, SBXREP_CAUSE);
	char msg[512];

	if (what == NULL) {
		return;
	}
	snprintf(msg, sizeof(msg), "reconciling it, the %s worker was %s",
	        st->ctls[ctl].name, what);
	event(st, ctl, key, "SandboxKilled", msg);
}

/* A quarantined key: held back until its quarantine ends. */
static void
hold_back(struct settle *st, size_t ctl, const char *key,
        const struct settle_loss *l, int64_t now)
{
	struct sctl *c = &st->ctls[ctl];
	int64_t hold = l->until_ms > now ? l->until_ms - now : 600000;
	char msg[512], ns[IPC_NAME_MAX + 1];
	struct log_obj o = obj_of(c, key, NULL, ns);

	o.error = l->cause;
	log_obj(LOG_LEVEL_ERROR, &o,
	        "%s: %s quarantined: it killed its worker %d times in a row "
	        "(last: %s)",
	        c->name, key, l->deaths, l->cause);
	queue_done(c->q, key, now);
	queue_forget(c->q, key);
	queue_add_after(c->q, key, hold, now);
	snprintf(msg, sizeof(msg),
	        "reconciling it killed the %s worker %d times in a row "
	        "(last: %s); held back for %lld s",
	        c->name, l->deaths, l->cause, (long long)(hold / 1000));
	event(st, ctl, key, "Quarantined", msg);
}

void
settle_lost(struct settle *st, const char *controller, const char *key,
        const struct settle_loss *l, int64_t now)
{
	size_t idx;
	struct sctl *c = find_ctl(st, controller, &idx);

	if (c == NULL) {
		return;
	}
	sandbox_event(st, idx, key, l->cause);
	int64_t t0 = queue_started_ms(c->q, key);
	stats_lost(st->conf.stats, controller, l->cause,
	        t0 >= 0 ? now - t0 : 0, now);
	if (!l->quarantined) {
		char ns[IPC_NAME_MAX + 1];
		struct log_obj o = obj_of(c, key, NULL, ns);

		o.error = l->cause;
		log_obj(LOG_LEVEL_WARN, &o,
		        "%s: %s lost with its worker (%s); requeued",
		        controller, key, l->cause);
		queue_finish(c->q, key, QUEUE_ERROR, 0, now);
		return;
	}
	hold_back(st, idx, key, l, now);
}

void
settle_released(struct settle *st, const char *controller, const char *key,
        int64_t now)
{
	size_t idx;
	struct sctl *c = find_ctl(st, controller, &idx);

	if (c != NULL) {
		queue_add(c->q, key, now);
	}
}
