/*
 * test_model.c: unit tests of the chaos suite's expectation model
 * (tests/chaos/model.c; bin/tests/test_chaos_model): the fences of
 * killed, terminated and frozen leaders, a frozen leader resumed on time,
 * early or before its fence began, the judgement of request-log lines against
 * a fence (re-acquired Lease, writes in flight at the freeze, another leader's
 * Lease), the verdict on exits and on forced relists.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "tests/chaos/model.h"

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"
#define CM_PATH    "/api/v1/namespaces/ns/configmaps"

/* Seconds to microseconds (times are relative to an arbitrary origin). */
#define S(sec) ((int64_t)((sec)*1000000.0 + 0.5))

/* A synthetic request log, judged against one fence. */
struct log {
	struct chaosmodel_req req[32];
	char ua[32][64];
	int n;
};

/* A request at second sec by "sd-a" or "sd-b". */
static void
req(struct log *l, double sec, const char *method, const char *path, long code,
        const char *id)
{
	struct chaosmodel_req *e = &l->req[l->n];

	assert_true(l->n < 32);
	snprintf(l->ua[l->n], sizeof(l->ua[0]), "%s%s (chaos)", CHAOSMODEL_UA,
	        id);
	*e = (struct chaosmodel_req) { .ts_us = S(sec),
		.verb = "x",
		.method = method,
		.path = path,
		.query = "",
		.ua = l->ua[l->n],
		.code = code };
	l->n++;
}

struct verdict {
	int n, legit, inflight;
};

/* Feeds the log from the fence's scan start, in order. */
static struct verdict
judge(const struct log *l, const struct chaosmodel_fence *f)
{
	struct chaosmodel_scan s;

	chaosmodel_scan_init(&s, f);
	for (int i = 0; i < l->n; i++) {
		if (l->req[i].ts_us >= chaosmodel_scan_from_us(f)) {
			chaosmodel_scan_req(&s, &l->req[i]);
		}
	}
	return ((struct verdict) { s.n, s.legit, s.inflight });
}

/* A fence of "sd-a" from 10 s to 40 s (reacquire as given; resumed at
 * cont, 0: not resumed). */
static struct chaosmodel_fence
window(bool reacquire, double cont)
{
	struct chaosmodel_fence f = { .id = "sd-a",
		.from_us = S(10),
		.to_us = S(40),
		.why = "test",
		.reacquire = reacquire,
		.cont_us = cont > 0 ? S(cont) : 0 };
	return (f);
}

static void
test_fence_windows(void **state)
{
	struct chaosmodel_fence f = window(true, 0);
	struct log l = { .n = 0 };
	struct verdict v;

	(void)state;
	req(&l, 5, "POST", CM_PATH, 201, "sd-a");    /* before: fine */
	req(&l, 12, "POST", CM_PATH, 201, "sd-a");   /* violation */
	req(&l, 12, "POST", CM_PATH, 201, "sd-b");   /* another: fine */
	req(&l, 13, "GET", CM_PATH, 200, "sd-a");    /* a read: fine */
	req(&l, 14, "PUT", LEASE_PATH, 409, "sd-a"); /* lost race */
	req(&l, 15, "POST", CM_PATH, 201, "sd-a");   /* violation */
	v = judge(&l, &f);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.legit, 0);

	/* re-acquired at 16 s: writes within LEASE_MS of a Lease write are
	 * legitimate, then a gap without renewal makes them violations */
	req(&l, 16, "PUT", LEASE_PATH, 200, "sd-a");
	req(&l, 17, "POST", CM_PATH, 201, "sd-a");
	req(&l, 18, "PUT", LEASE_PATH, 200, "sd-a");
	req(&l, 20, "DELETE", CM_PATH "/x", 200, "sd-a");
	req(&l, 25, "POST", CM_PATH, 201, "sd-a"); /* 7 s: violation */
	req(&l, 45, "POST", CM_PATH, 201, "sd-a"); /* after: fine */
	v = judge(&l, &f);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.legit, 2);
	/* killed or terminated leaders never re-acquire: all count */
	f = window(false, 0);
	v = judge(&l, &f);
	assert_int_equal(v.n, 5);
	assert_int_equal(v.legit, 0);
}

/* Writes within INFLIGHT_MS of the SIGCONT were in flight at the freeze:
 * excused while no other supervisor holds the Lease; a later one, or one
 * before the SIGCONT, counts. */
static void
test_fence_in_flight(void **state)
{
	struct chaosmodel_fence f = window(true, 0);
	struct log l = { .n = 0 };
	struct verdict v;

	(void)state;
	req(&l, 11.2, "PUT", CM_PATH "/x", 409, "sd-a");
	req(&l, 11.3, "POST", CM_PATH, 201, "sd-a");
	req(&l, 11.9, "PUT", CM_PATH "/y", 409, "sd-a");
	req(&l, 10.5, "PUT", CM_PATH "/z", 409, "sd-a");
	assert_int_equal(judge(&l, &f).n, 4);
	f = window(true, 11.1);
	v = judge(&l, &f);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.inflight, 2);
	assert_int_equal(v.legit, 0);

	/* the standby took the Lease at 11 s: the successful in-flight write
	 * is a split brain, the refused one still changed nothing */
	l.n = 0;
	req(&l, 11.0, "PUT", LEASE_PATH, 200, "sd-b");
	req(&l, 11.2, "PUT", CM_PATH "/x", 409, "sd-a");
	req(&l, 11.3, "POST", CM_PATH, 201, "sd-a");
	v = judge(&l, &f);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.inflight, 1);

	/* another supervisor's Lease write excuses nothing */
	f = window(true, 0);
	l.n = 0;
	req(&l, 16, "PUT", LEASE_PATH, 200, "sd-b");
	req(&l, 17, "POST", CM_PATH, 201, "sd-a");
	assert_int_equal(judge(&l, &f).n, 1);
}

/* The first violation is named. */
static void
test_fence_first(void **state)
{
	struct chaosmodel_fence f = window(false, 0);
	struct chaosmodel_scan s;
	struct log l = { .n = 0 };

	(void)state;
	req(&l, 12, "DELETE", CM_PATH "/a", 200, "sd-a");
	req(&l, 13, "POST", CM_PATH, 201, "sd-a");
	chaosmodel_scan_init(&s, &f);
	for (int i = 0; i < l.n; i++) {
		chaosmodel_scan_req(&s, &l.req[i]);
	}
	assert_int_equal(s.n, 2);
	assert_string_equal(s.first, "DELETE " CM_PATH "/a (200)");
	assert_string_equal(s.ua, CHAOSMODEL_UA "sd-a ");
}

/* A killed leader is fenced from its renew deadline on; a terminated one
 * from the end of its shutdown grace; neither is changed by a SIGCONT. */
static void
test_killed_terminated(void **state)
{
	struct chaosmodel m = { .nfences = 0 };
	const struct chaosmodel_fence *k, *t;
	struct log l = { .n = 0 };

	(void)state;
	k = chaosmodel_leader_hit(&m, "sd-a", CHAOSMODEL_KILLED, S(10), 0);
	t = chaosmodel_leader_hit(&m, "sd-b", CHAOSMODEL_TERMINATED, S(10), 0);
	assert_non_null(k);
	assert_non_null(t);
	assert_int_equal(m.nfences, 2);
	assert_int_equal(k->from_us, S(10) + CHAOSMODEL_RENEW_MS * 1000LL);
	assert_int_equal(k->to_us, INT64_MAX);
	assert_false(k->reacquire);
	assert_string_equal(k->why, "killed leader");
	assert_int_equal(t->from_us, S(10) + CHAOSMODEL_TERM_MS * 1000LL);
	assert_string_equal(t->why, "terminated leader");
	chaosmodel_leader_resumed(&m, "sd-a", S(11));
	assert_int_equal(k->to_us, INT64_MAX);
	assert_int_equal(k->cont_us, 0);

	req(&l, 11.9, "POST", CM_PATH, 201, "sd-a");   /* before: fine */
	req(&l, 12.1, "POST", CM_PATH, 201, "sd-a");   /* violation */
	req(&l, 1000, "POST", CM_PATH, 201, "sd-a");   /* never ends */
	req(&l, 21.0, "POST", CM_PATH, 201, "sd-b");   /* in its grace */
	req(&l, 23.0, "POST", CM_PATH, 201, "sd-b");   /* violation */
	req(&l, 24.0, "PUT", LEASE_PATH, 200, "sd-b"); /* excuses nothing */
	req(&l, 25.0, "POST", CM_PATH, 201, "sd-b");   /* violation */
	assert_int_equal(judge(&l, k).n, 2);
	assert_int_equal(judge(&l, t).n, 2);
}

/* One freeze of "sd-a" at 10 s, its SIGCONT planned at 16.5 s, resumed
 * at cont (0: never), and what its fence becomes. */
struct frozen_case {
	double cont;
	int64_t to_us;   /* the fence's end */
	int n, inflight; /* the verdict on frozen_log() */
};

/* Its requests, the same under every resumption. */
static void
frozen_log(struct log *l)
{
	req(l, 11.0, "PUT", LEASE_PATH, 200, "sd-a"); /* renews, not in it */
	req(l, 11.5, "POST", CM_PATH, 201, "sd-a");   /* before the fence */
	req(l, 12.5, "POST", CM_PATH, 201, "sd-a");
	req(l, 13.2, "PUT", CM_PATH "/x", 409, "sd-a");
	req(l, 16.6, "PUT", CM_PATH "/y", 409, "sd-a");
	req(l, 16.9, "POST", CM_PATH, 201, "sd-a");
	req(l, 17.5, "POST", CM_PATH, 201, "sd-a");
	req(l, 20.0, "POST", CM_PATH, 201, "sd-a");
	req(l, 21.0, "POST", CM_PATH, 201, "sd-a");
}

/* A frozen leader is fenced from its renew deadline (12 s) to RESUMED_MS
 * after its SIGCONT: the planned one when it comes then; the real one
 * when the faults ended first.  Resumed before its renew deadline it
 * never had to stand down: the fence is void (seed 117713651518615: a
 * leader frozen 0.9 s was flagged for renewing and writing). */
static void
test_frozen_resumed(void **state)
{
	static const struct frozen_case cases[] = {
		/* on time: 12.5, 13.2 (before the SIGCONT), 17.5, 20.0
		 * count; 16.6 and 16.9 were in flight */
		{ 16.5, S(20.5), 4, 2 },
		/* early: 12.5, 16.6, 16.9 count; 13.2 was in flight;
		 * nothing after 17 s */
		{ 13.0, S(17), 3, 1 },
		/* before its renew deadline: void */
		{ 10.9, S(12) - 1, 0, 0 },
		/* never resumed: every write from 12 s to 20.5 s */
		{ 0, S(20.5), 6, 0 },
	};
	struct log l = { .n = 0 };

	(void)state;
	frozen_log(&l);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct frozen_case *c = &cases[i];
		struct chaosmodel m = { .nfences = 0 };
		const struct chaosmodel_fence *f;
		struct verdict v;

		f = chaosmodel_leader_hit(
		        &m, "sd-a", CHAOSMODEL_FROZEN, S(10), S(16.5));
		assert_non_null(f);
		assert_true(f->reacquire);
		assert_string_equal(f->why, "SIGSTOPped leader");
		assert_int_equal(f->from_us, S(12));
		if (c->cont > 0) {
			chaosmodel_leader_resumed(&m, "sd-a", S(c->cont));
		}
		v = judge(&l, f);
		assert_int_equal(v.n, c->n);
		assert_int_equal(v.inflight, c->inflight);
		assert_int_equal(f->to_us, c->to_us);
		assert_int_equal(f->cont_us, c->cont > 0 ? S(c->cont) : 0);
	}
}

/* A resumption applies to the leader's latest open freeze only, once. */
static void
test_resumed_latest_open(void **state)
{
	struct chaosmodel m = { .nfences = 0 };
	const struct chaosmodel_fence *a, *b, *c;

	(void)state;
	a = chaosmodel_leader_hit(&m, "sd-a", CHAOSMODEL_FROZEN, S(10), S(16));
	chaosmodel_leader_resumed(&m, "sd-a", S(16));
	b = chaosmodel_leader_hit(&m, "sd-b", CHAOSMODEL_FROZEN, S(30), S(36));
	c = chaosmodel_leader_hit(&m, "sd-a", CHAOSMODEL_FROZEN, S(50), S(56));
	chaosmodel_leader_resumed(&m, "sd-a", S(53));
	assert_int_equal(a->cont_us, S(16));
	assert_int_equal(a->to_us, S(20));
	assert_int_equal(b->cont_us, 0);
	assert_int_equal(b->to_us, S(40));
	assert_int_equal(c->cont_us, S(53));
	assert_int_equal(c->to_us, S(57));
	/* a second SIGCONT finds no open freeze: nothing changes */
	chaosmodel_leader_resumed(&m, "sd-a", S(54));
	assert_int_equal(c->cont_us, S(53));
	assert_int_equal(a->cont_us, S(16));
	/* an unknown identity changes nothing */
	chaosmodel_leader_resumed(&m, "sd-z", S(31));
	assert_int_equal(b->cont_us, 0);
}

/* The table holds CHAOSMODEL_MAX_FENCES; more are refused, not written
 * past its end. */
static void
test_fences_full(void **state)
{
	static struct chaosmodel m;

	(void)state;
	for (int i = 0; i < CHAOSMODEL_MAX_FENCES; i++) {
		assert_non_null(chaosmodel_leader_hit(
		        &m, "sd-a", CHAOSMODEL_KILLED, S(i), 0));
	}
	assert_null(
	        chaosmodel_leader_hit(&m, "sd-a", CHAOSMODEL_KILLED, 0, 0));
	assert_int_equal(m.nfences, CHAOSMODEL_MAX_FENCES);
}

/* Wait statuses as waitpid() gives them. */
#define EXITED(code)   ((code) << 8)
#define SIGNALLED(sig) (sig)

static void
test_exit_verdict(void **state)
{
	(void)state;
	assert_int_equal(chaosmodel_exit(false, false, EXITED(0)),
	        CHAOSMODEL_EXIT_UNASKED);
	assert_int_equal(chaosmodel_exit(false, false, SIGNALLED(SIGSEGV)),
	        CHAOSMODEL_EXIT_UNASKED);
	assert_int_equal(chaosmodel_exit(true, false, SIGNALLED(SIGKILL)),
	        CHAOSMODEL_EXIT_OK);
	assert_int_equal(
	        chaosmodel_exit(true, true, EXITED(0)), CHAOSMODEL_EXIT_OK);
	assert_int_equal(chaosmodel_exit(true, true, EXITED(1)),
	        CHAOSMODEL_EXIT_TERM_BAD);
	assert_int_equal(chaosmodel_exit(true, true, SIGNALLED(SIGTERM)),
	        CHAOSMODEL_EXIT_TERM_BAD);
	assert_true(WIFEXITED(EXITED(1)) && WEXITSTATUS(EXITED(1)) == 1);
	assert_true(WIFSIGNALED(SIGNALLED(SIGTERM)));
}

static void
test_relist_verdict(void **state)
{
	(void)state;
	assert_false(chaosmodel_relist_wrong(1, 1, true));
	assert_false(chaosmodel_relist_wrong(3, 3, false));
	assert_true(chaosmodel_relist_wrong(2, 1, false));
	assert_true(chaosmodel_relist_wrong(2, 1, true));
	assert_false(chaosmodel_relist_wrong(0, 1, false));
	assert_true(chaosmodel_relist_wrong(0, 1, true));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fence_windows),
		cmocka_unit_test(test_fence_in_flight),
		cmocka_unit_test(test_fence_first),
		cmocka_unit_test(test_killed_terminated),
		cmocka_unit_test(test_frozen_resumed),
		cmocka_unit_test(test_resumed_latest_open),
		cmocka_unit_test(test_fences_full),
		cmocka_unit_test(test_exit_verdict),
		cmocka_unit_test(test_relist_verdict),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
