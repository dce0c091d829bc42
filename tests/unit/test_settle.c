/*
 * test_settle.c: RESULT to writes to verdict (supervisor/settle.c)
 * against a fake writer and fence, with real queues and stats: a RESULT
 * without writes finishes at once; writes go to the writer typed, under
 * tokens found again in any order (and a token used up, unknown or 0 is
 * ignored); the writer's report becomes the queue action (done, failed
 * with backoff and a FailedWrite Event when refused for good, fenced);
 * RESULTs of another epoch or while not leading are dropped; lost keys
 * are requeued, quarantined ones held back with an Event, sandbox kills
 * named in an Event; every final verdict is counted.  The write policy
 * (a fake check) comes first: a violation submits nothing and leaves the
 * key in flight for the caller to kill its worker, a RESULT it cannot
 * judge yet is retried, and the key's write budget stops a loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipc/ipc.h"
#include "ipc/sbxrep.h"
#include "supervisor/settle.h"
#include "supervisor/stats.h"
#include "tests/lib/testutil.h"

#define MAXB 8

/* The fake writer and fence. */
struct fake {
	bool leading;
	bool refuse;
	enum wpol_verdict verdict; /* what the policy check answers */
	int nchecks;
	int nbatch;
	struct {
		char key[64];
		uint64_t token;
		size_t n;
		enum ipc_op op0;
		char name0[64];
	} b[MAXB];
	int nev;
	struct {
		size_t ctl;
		char key[64];
		char type[16];
		char reason[32];
		char msg[512];
	} ev[MAXB];
};

static int
f_submit(void *arg, const struct wr_batch *b, uint64_t token)
{
	struct fake *f = arg;

	if (f->refuse || f->nbatch >= MAXB) {
		return (-1);
	}
	snprintf(f->b[f->nbatch].key, sizeof(f->b[0].key), "%s", b->key);
	f->b[f->nbatch].token = token;
	f->b[f->nbatch].n = b->n;
	f->b[f->nbatch].op0 = b->ops[0].op;
	snprintf(f->b[f->nbatch].name0, sizeof(f->b[0].name0), "%s",
	        b->ops[0].name);
	assert_non_null(b->keep);
	f->nbatch++;
	return (0);
}

static void
f_event(void *arg, size_t ctl, const char *key, const char *type,
        const char *reason, const char *message)
{
	struct fake *f = arg;

	assert_true(f->nev < MAXB);
	f->ev[f->nev].ctl = ctl;
	snprintf(f->ev[f->nev].key, sizeof(f->ev[0].key), "%s", key);
	snprintf(f->ev[f->nev].type, sizeof(f->ev[0].type), "%s", type);
	snprintf(f->ev[f->nev].reason, sizeof(f->ev[0].reason), "%s", reason);
	snprintf(f->ev[f->nev].msg, sizeof(f->ev[0].msg), "%s", message);
	f->nev++;
}

static enum wpol_verdict
f_check(void *arg, size_t ctl, const struct ipc_result *r,
        const struct ipc_write *ops, struct wpol_violation *v)
{
	struct fake *f = arg;

	(void)ctl;
	(void)ops;
	assert_true(r->nwrites > 0);
	f->nchecks++;
	if (f->verdict == WPOL_VIOLATION) {
		*v = (struct wpol_violation) { "not-owned", 1, "write 1" };
	}
	return (f->verdict);
}

static bool
f_may_write(void *arg, int64_t now)
{
	(void)now;
	return (((struct fake *)arg)->leading);
}

struct fx {
	struct fake fk;
	struct settle *st;
	struct stats *stats;
	struct queue *qa, *qb;
};

static int
setup(void **state)
{
	static struct fx x;

	memset(&x, 0, sizeof(x));
	x.fk.leading = true;
	x.stats = stats_new(0, 0);
	stats_add_ctl(x.stats, "a");
	stats_add_ctl(x.stats, "b");
	struct settle_conf c = { .wr = { f_submit, f_event },
		.check = f_check,
		.may_write = f_may_write,
		.arg = &x.fk,
		.stats = x.stats };
	x.st = settle_new(&c);
	x.qa = queue_new(NULL);
	x.qb = queue_new(NULL);
	assert_int_equal(settle_add(x.st, "a", x.qa), 0);
	assert_int_equal(settle_add(x.st, "b", x.qb), 1);
	*state = &x;
	return (0);
}

static int
teardown(void **state)
{
	struct fx *x = *state;

	settle_free(x->st);
	stats_free(x->stats);
	queue_free(x->qa);
	queue_free(x->qb);
	return (0);
}

/* Hands key out of q as a worker would get it. */
static void
take(struct queue *q, const char *key, int64_t now)
{
	queue_add(q, key, now);
	const char *k = queue_get(q, now, NULL);
	assert_non_null(k);
	assert_string_equal(k, key);
}

static const struct ipc_res cms = { "", "v1", "configmaps", true };

/* A RESULT of key with nw ConfigMap creates named w0, w1, ..., decoded
 * and settled; the message is freed before returning (what the writer
 * keeps must be referenced).  Returns settle_result()'s answer. */
static int
result_v(struct fx *x, const char *ctl, const char *key, int64_t epoch,
        enum ipc_verdict v, int64_t after_ms, int nw, int64_t now,
        struct wpol_violation *viol)
{
	json_object *body = ipc_result_new(key, epoch, v, after_ms, "msg");
	struct ipc_msg m = { IPC_RESULT, 0, body };
	struct ipc_result r;
	struct ipc_write *ops;
	char name[16];

	for (int i = 0; i < nw; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		ipc_result_add_write(body,
		        ipc_write_new(IPC_OP_CREATE, &cms, "ns", name,
		                testutil_json("{\"kind\":\"ConfigMap\"}", 0)));
	}
	assert_int_equal(ipc_result_decode(&m, &r, &ops), 0);
	int rc = settle_result(x->st, ctl, 3, &r, ops, 7, now, viol);
	free(ops);
	json_object_put(body);
	return (rc);
}

static void
result(struct fx *x, const char *ctl, const char *key, int64_t epoch,
        enum ipc_verdict v, int64_t after_ms, int nw, int64_t now)
{
	struct wpol_violation viol;

	assert_int_equal(
	        result_v(x, ctl, key, epoch, v, after_ms, nw, now, &viol), 0);
}

static uint64_t
results(struct fx *x, const char *ctl, enum stats_result r)
{
	return (stats_ctl(x->stats, ctl)->results[r]);
}

static void
test_no_writes(void **state)
{
	struct fx *x = *state;

	take(x->qa, "ns/k", 0);
	result(x, "a", "ns/k", 7, IPC_V_DONE, 0, 0, 10);
	assert_int_equal(x->fk.nbatch, 0);
	assert_int_equal(settle_pending(x->st), 0);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(queue_len(x->qa) + queue_parked(x->qa), 0);
	assert_int_equal(results(x, "a", STATS_SUCCESS), 1);
	/* requeue after 5 s: parked that long */
	take(x->qa, "ns/k", 20);
	result(x, "a", "ns/k", 7, IPC_V_REQUEUE_AFTER, 5000, 0, 30);
	assert_int_equal(queue_parked_until(x->qa, "ns/k"), 5030);
	assert_int_equal(results(x, "a", STATS_REQUEUE_AFTER), 1);
	/* an error: requeued with backoff, counted */
	take(x->qb, "k2", 40);
	result(x, "b", "k2", 7, IPC_V_ERROR, 0, 0, 50);
	assert_int_equal(queue_num_requeues(x->qb, "k2"), 1);
	assert_int_equal(results(x, "b", STATS_ERROR), 1);
	/* an unknown controller: nothing */
	result(x, "zzz", "k2", 7, IPC_V_DONE, 0, 0, 60);
	assert_int_equal(x->fk.nbatch, 0);
}

static void
test_writes_and_tokens(void **state)
{
	struct fx *x = *state;
	struct wr_report ok = { .outcome = WR_OK, .message = "" };

	take(x->qa, "ns/one", 0);
	take(x->qa, "ns/two", 0);
	take(x->qb, "three", 0);
	result(x, "a", "ns/one", 7, IPC_V_DONE, 0, 2, 10);
	result(x, "a", "ns/two", 7, IPC_V_REQUEUE_AFTER, 1000, 1, 10);
	result(x, "b", "three", 7, IPC_V_DONE, 0, 3, 10);
	assert_int_equal(x->fk.nbatch, 3);
	assert_int_equal(settle_pending(x->st), 3);
	/* typed writes, as decoded */
	assert_string_equal(x->fk.b[0].key, "ns/one");
	assert_int_equal(x->fk.b[0].n, 2);
	assert_int_equal(x->fk.b[0].op0, IPC_OP_CREATE);
	assert_string_equal(x->fk.b[0].name0, "w0");
	assert_int_equal(x->fk.b[2].n, 3);
	/* distinct tokens, never 0 */
	assert_true(x->fk.b[0].token != 0);
	assert_true(x->fk.b[0].token != x->fk.b[1].token);
	assert_true(x->fk.b[1].token != x->fk.b[2].token);
	/* nothing finished until the writer says so */
	assert_int_equal(queue_processing(x->qa), 2);
	assert_int_equal(results(x, "a", STATS_SUCCESS), 0);
	/* out of order */
	settle_written(x->st, x->fk.b[1].token, &ok, 20);
	assert_int_equal(queue_parked_until(x->qa, "ns/two"), 1020);
	assert_int_equal(results(x, "a", STATS_REQUEUE_AFTER), 1);
	settle_written(x->st, x->fk.b[2].token, &ok, 20);
	assert_int_equal(queue_processing(x->qb), 0);
	assert_int_equal(results(x, "b", STATS_SUCCESS), 1);
	assert_int_equal(settle_pending(x->st), 1);
	/* used up, unknown and 0: ignored */
	settle_written(x->st, x->fk.b[2].token, &ok, 20);
	settle_written(x->st, x->fk.b[0].token ^ 0x100000000ULL, &ok, 20);
	settle_written(x->st, 0, &ok, 20);
	settle_written(x->st, 12345, &ok, 20);
	assert_int_equal(settle_pending(x->st), 1);
	assert_int_equal(results(x, "b", STATS_SUCCESS), 1);
	settle_written(x->st, x->fk.b[0].token, &ok, 20);
	assert_int_equal(settle_pending(x->st), 0);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(results(x, "a", STATS_SUCCESS), 1);
	/* a freed slot is reused under a new token */
	take(x->qa, "ns/four", 30);
	result(x, "a", "ns/four", 7, IPC_V_DONE, 0, 1, 30);
	assert_int_equal(x->fk.nbatch, 4);
	for (int i = 0; i < 3; i++) {
		assert_true(x->fk.b[3].token != x->fk.b[i].token);
	}
	settle_written(x->st, x->fk.b[0].token, &ok, 40); /* stale */
	assert_int_equal(settle_pending(x->st), 1);
	settle_written(x->st, x->fk.b[3].token, &ok, 40);
	assert_int_equal(settle_pending(x->st), 0);
}

static void
test_failed_and_fenced(void **state)
{
	struct fx *x = *state;
	struct wr_report refused = { .outcome = WR_FAILED,
		.rc = KAPI_EINVALID,
		.message = "spec.x: bad",
		.failed = 1 };
	struct wr_report server = {
		.outcome = WR_FAILED, .rc = KAPI_ESERVER, .message = "boom"
	};
	struct wr_report fenced = { .outcome = WR_FENCED, .message = "" };

	take(x->qa, "ns/k", 0);
	result(x, "a", "ns/k", 7, IPC_V_DONE, 0, 2, 0);
	settle_written(x->st, x->fk.b[0].token, &refused, 10);
	assert_int_equal(queue_num_requeues(x->qa, "ns/k"), 1);
	assert_int_equal(results(x, "a", STATS_ERROR), 1);
	assert_int_equal(x->fk.nev, 1);
	assert_int_equal(x->fk.ev[0].ctl, 0);
	assert_string_equal(x->fk.ev[0].key, "ns/k");
	assert_string_equal(x->fk.ev[0].type, "Warning");
	assert_string_equal(x->fk.ev[0].reason, "FailedWrite");
	assert_string_equal(
	        x->fk.ev[0].msg, "write 1 refused (Invalid): spec.x: bad");
	/* a failure the server may not repeat: requeued, no Event */
	take(x->qb, "k", 0);
	result(x, "b", "k", 7, IPC_V_DONE, 0, 1, 0);
	settle_written(x->st, x->fk.b[1].token, &server, 10);
	assert_int_equal(queue_num_requeues(x->qb, "k"), 1);
	assert_int_equal(x->fk.nev, 1);
	/* fenced: the key is only released, nothing counted */
	take(x->qb, "k2", 0);
	result(x, "b", "k2", 7, IPC_V_DONE, 0, 1, 0);
	settle_written(x->st, x->fk.b[2].token, &fenced, 10);
	assert_int_equal(queue_num_requeues(x->qb, "k2"), 0);
	assert_int_equal(queue_processing(x->qb), 0);
	assert_int_equal(queue_parked(x->qb) + queue_len(x->qb), 1); /* k */
	assert_int_equal(results(x, "b", STATS_ERROR), 1);
	assert_int_equal(results(x, "b", STATS_SUCCESS), 0);
	assert_int_equal(settle_pending(x->st), 0);
}

static void
test_dropped(void **state)
{
	struct fx *x = *state;

	/* another epoch */
	take(x->qa, "ns/k", 0);
	result(x, "a", "ns/k", 6, IPC_V_DONE, 0, 1, 0);
	assert_int_equal(x->fk.nbatch, 0);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(queue_num_requeues(x->qa, "ns/k"), 0);
	/* not leading */
	x->fk.leading = false;
	take(x->qa, "ns/k", 0);
	result(x, "a", "ns/k", 7, IPC_V_DONE, 0, 1, 0);
	assert_int_equal(x->fk.nbatch, 0);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(results(x, "a", STATS_SUCCESS), 0);
	/* the writer refuses: an error, nothing pending */
	x->fk.leading = true;
	x->fk.refuse = true;
	take(x->qa, "ns/k", 0);
	result(x, "a", "ns/k", 7, IPC_V_DONE, 0, 1, 0);
	assert_int_equal(settle_pending(x->st), 0);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(queue_num_requeues(x->qa, "ns/k"), 1);
}

static void
test_lost(void **state)
{
	struct fx *x = *state;
	struct settle_loss died = { .cause = "signal SIGSEGV" };
	struct settle_loss held = { .cause = "exit 3",
		.quarantined = true,
		.until_ms = 60000,
		.deaths = 3 };
	struct settle_loss sbx
	        = { .cause = "signal SIGSYS (" SBXREP_CAUSE ": ptrace)" };

	take(x->qa, "ns/k", 0);
	settle_lost(x->st, "a", "ns/k", &died, 10);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(queue_num_requeues(x->qa, "ns/k"), 1);
	assert_int_equal(results(x, "a", STATS_ERROR), 1);
	assert_int_equal(x->fk.nev, 0);
	/* quarantined: held until the quarantine ends, failures forgotten */
	take(x->qb, "q", 100);
	settle_lost(x->st, "b", "q", &held, 1000);
	assert_int_equal(queue_parked_until(x->qb, "q"), 60000);
	assert_int_equal(queue_num_requeues(x->qb, "q"), 0);
	assert_int_equal(x->fk.nev, 1);
	assert_int_equal(x->fk.ev[0].ctl, 1);
	assert_string_equal(x->fk.ev[0].reason, "Quarantined");
	assert_string_equal(x->fk.ev[0].msg,
	        "reconciling it killed the b worker 3 times in a row "
	        "(last: exit 3); held back for 59 s");
	/* killed by the sandbox: named */
	take(x->qa, "ns/s", 0);
	settle_lost(x->st, "a", "ns/s", &sbx, 10);
	assert_int_equal(x->fk.nev, 2);
	assert_string_equal(x->fk.ev[1].reason, "SandboxKilled");
	assert_string_equal(x->fk.ev[1].msg,
	        "reconciling it, the a worker was " SBXREP_CAUSE ": ptrace)");
	/* released from quarantine: queued now */
	settle_released(x->st, "b", "other", 2000);
	assert_int_equal(queue_len(x->qb), 1);
	settle_lost(x->st, "zzz", "k", &died, 10);
	settle_released(x->st, "zzz", "k", 10);
}

/* A violation: nothing submitted, the key still in flight (the caller
 * kills the worker, which loses it), the rule handed back. */
static void
test_violation(void **state)
{
	struct fx *x = *state;
	struct wpol_violation v;

	x->fk.verdict = WPOL_VIOLATION;
	take(x->qa, "ns/k", 0);
	assert_int_equal(
	        result_v(x, "a", "ns/k", 7, IPC_V_DONE, 0, 2, 10, &v), -1);
	assert_int_equal(x->fk.nchecks, 1);
	assert_int_equal(x->fk.nbatch, 0);
	assert_int_equal(settle_pending(x->st), 0);
	assert_string_equal(v.rule, "not-owned");
	assert_int_equal(v.index, 1);
	assert_int_equal(queue_processing(x->qa), 1);
	/* no writes: nothing to check */
	take(x->qb, "k2", 0);
	result(x, "b", "k2", 7, IPC_V_DONE, 0, 0, 10);
	assert_int_equal(x->fk.nchecks, 1);
}

/* Caches not synced: nothing submitted, the key retried with backoff. */
static void
test_policy_retry(void **state)
{
	struct fx *x = *state;

	x->fk.verdict = WPOL_RETRY;
	take(x->qa, "ns/k", 0);
	result(x, "a", "ns/k", 7, IPC_V_DONE, 0, 1, 10);
	assert_int_equal(x->fk.nbatch, 0);
	assert_int_equal(queue_processing(x->qa), 0);
	assert_int_equal(queue_num_requeues(x->qa, "ns/k"), 1);
	assert_int_equal(results(x, "a", STATS_ERROR), 1);
}

/* A write loop on one key runs out of its budget; another key and,
 * later, the same key are fine. */
static void
test_budget(void **state)
{
	struct fx *x = *state;
	struct wr_report ok = { .outcome = WR_OK, .message = "" };
	struct wpol_violation v;
	int rc = 0, i;

	for (i = 0; i < 1000 && rc == 0; i++) {
		take(x->qa, "ns/loop", 10);
		rc = result_v(
		        x, "a", "ns/loop", 7, IPC_V_REQUEUE, 0, 100, 10, &v);
		if (rc == 0) {
			settle_written(x->st, x->fk.b[0].token, &ok, 10);
			x->fk.nbatch = 0;
		}
	}
	assert_int_equal(rc, -1);
	assert_int_equal(i, WPOL_BUDGET_BURST / 100 + 1);
	assert_string_equal(v.rule, "write-budget");
	assert_int_equal(x->fk.nbatch, 0);
	queue_done(x->qa, "ns/loop", 10);
	take(x->qa, "ns/other", 10);
	result(x, "a", "ns/other", 7, IPC_V_DONE, 0, 100, 10);
	assert_int_equal(x->fk.nbatch, 1);
	/* refilled after 5 s (20 a second) */
	take(x->qa, "ns/loop", 5010);
	result(x, "a", "ns/loop", 7, IPC_V_DONE, 0, 100, 5010);
	assert_int_equal(x->fk.nbatch, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_no_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_writes_and_tokens, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_failed_and_fenced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_violation, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_policy_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
