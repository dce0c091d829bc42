/*
 * test_chaos.c: the chaos suite (issue 7 item 1).  The whole operator on
 * bin/kubesim: two bin/sympoziumd with --leader-elect (one leader, one
 * standby) and their production workers, while a few hundred objects of
 * the six kinds are created (quick mode, in `make test` and `make asan`),
 * or thousands (long mode: `--long` or CHAOS_LONG=1), and faults are
 * injected at random from a seeded PRNG (CHAOS_SEED replays the choices):
 * SIGKILL, SIGSEGV and SIGSTOP/SIGCONT of worker processes (children of a
 * supervisor, found in /proc), 5xx and 429 answers (/_kubesim/faults),
 * every watch dropped (/_kubesim/close-watches), history compaction with
 * the watches dropped (410, a relist), refused connections for a few
 * seconds (/_kubesim/faults/refuse), and the leader supervisor killed
 * (SIGKILL), terminated (SIGTERM) or frozen (SIGSTOP past its lease, then
 * SIGCONT), a new standby being started after each exit.
 *
 * After the faults stop it measures forced relists (compact + close every
 * watch: each informer of each supervisor must LIST exactly once), waits
 * for convergence and checks, from kubesim's state and request log:
 * every object converged to the state the spec gives (an expectation
 * model written here from sympozium-controllers.md, not from the
 * operator's code: exact children per owner, their data, the status);
 * no write of a deposed leader after its renew deadline (each supervisor's
 * requests carry its identity in the User-Agent); no supervisor exited
 * unless it was killed or terminated here (SIGTERM: exit 0); no sanitizer
 * report in the supervisors' logs.  It prints what it injected and what
 * it verified, and fails with the list of violations.
 *
 * Everything started here is stopped by pid on every path (the cmocka
 * teardown runs after a failure too).  The run is bounded in time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "tests/lib/ksim.h"
#include "tests/lib/kstate.h"
#include "tests/lib/opmodel.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define NS       "default"
#define UA_SD    "sympoziumd/0.1 "
#define LEADING  "leading (epoch"
#define DEPOSED  "not leading any more"
#define MAX_SD   16
#define MAX_SEEN 1024
#define MAX_VIOL 40

/* Leader election timing (ms), passed to every supervisor. */
#define LEASE_MS 3000
#define RENEW_MS 2000
/* A resumed frozen leader's writes refused within this time of its
 * SIGCONT were in flight at the freeze (fence_line()). */
#define INFLIGHT_MS 500
#define RETRY_MS    500

static const char *const le_args[] = { "--leader-elect",
	"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline",
	"2s", "--leader-elect-retry-period", "500ms", NULL };

/* ---- run parameters ---- */

struct mode {
	const char *name;
	int skillpacks, instances, mcps, schedules, packs, runs;
	int run_instances;  /* instances the runs are spread over */
	int chaos_ms;       /* fault injection phase */
	int converge_ms;    /* bound on convergence after the faults */
	int relists;        /* measured forced relists after the faults */
	int relists_during; /* measured forced relists during the faults */
};

static const struct mode QUICK
        = { "quick", 90, 50, 40, 30, 10, 30, 10, 30000, 60000, 1, 0 };
static const struct mode LONG
        = { "long", 900, 500, 300, 300, 100, 300, 30, 300000, 240000, 2, 3 };

/* ---- fault kinds ---- */

enum fk {
	F_WK_KILL,
	F_WK_SEGV,
	F_WK_STOP,
	F_5XX,
	F_429,
	F_CLOSE_WATCHES,
	F_COMPACT,
	F_REFUSE,
	F_LEADER_KILL,
	F_LEADER_TERM,
	F_LEADER_STOP,
	F_NKINDS
};

static const char *const FK_NAMES[F_NKINDS] = { "worker SIGKILL",
	"worker SIGSEGV", "worker SIGSTOP+SIGCONT", "5xx answers (rules)",
	"429 answers (rules)", "every watch closed",
	"history compacted + watches closed (410)", "connections refused",
	"leader SIGKILL", "leader SIGTERM", "leader SIGSTOP past its lease" };

/* Weights of the random choice (leader faults are also rate-limited). */
static const int FK_WEIGHT[F_NKINDS] = { 14, 6, 8, 10, 6, 8, 5, 5, 4, 4, 3 };

/* ---- state ---- */

struct sd {
	pid_t pid;       /* 0 once reaped */
	int status;      /* wait status once reaped */
	bool expect_end; /* signalled here with SIGKILL or SIGTERM */
	bool term;       /* SIGTERM: must exit 0 */
	bool stopped;    /* SIGSTOPped now */
	int64_t cont_at; /* monotonic ms of the planned SIGCONT */
	char log[160];
	char id[160]; /* identity from its User-Agent ("" until known) */
	int64_t started_ms;
	pid_t seen[MAX_SEEN];
	int nseen;
};

/* A window of a deposed leader in which it must not write, unless it
 * took the Lease again (reacquire; fence_line()). */
struct fence {
	char id[160];
	int64_t from_us, to_us; /* real time */
	const char *why;
	bool reacquire;  /* a frozen leader, resumed: it may win the Lease */
	int64_t cont_us; /* real time of its SIGCONT; 0: not resumed */
};

/* A stopped worker and when to resume it. */
struct stopped {
	pid_t pid;
	int64_t until_ms;
};

/* An error rule in kubesim and when to remove it. */
struct rule {
	int id;
	int64_t until_ms;
};

static const struct kapi_res R_SECRET = { "", "v1", "secrets", true };

static struct {
	const struct mode *m;
	uint64_t seed, rng;
	char dir[64], kc[160], reqlog[160];
	struct ksim *k;
	struct kapi_conf *conf;
	struct kapi_client *c;
	struct sd sd[MAX_SD];
	int nsd;
	struct fence fences[64];
	int nfences;
	struct stopped stopped[64];
	int nstopped;
	struct rule rules[64];
	int nrules;
	struct opmodel om; /* the objects and their expected state */
	int created;
	int injected[F_NKINDS];
	int viol;
	int measured_relists;
	int64_t leader_quiet_until; /* no leader fault before (mono ms) */
	int64_t refuse_until;       /* refusal window end (mono ms) */
	json_object *kinds;         /* informer key -> LISTs per recovery */
	int nkinds;
} C;

/* ---- small helpers ---- */

static uint64_t
rnd(void)
{
	uint64_t x = C.rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	C.rng = x;
	return (x * 0x2545F4914F6CDD1DULL);
}

/* Uniform in [lo, hi]. */
static int
rnd_in(int lo, int hi)
{
	return (lo + (int)(rnd() % (uint64_t)(hi - lo + 1)));
}

static void
violation(const char *fmt, ...)
{
	va_list ap;

	if (C.viol++ < MAX_VIOL) {
		fprintf(stderr, "chaos: VIOLATION: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static void
say(const char *fmt, ...)
{
	va_list ap;

	static int64_t t0;

	if (t0 == 0) {
		t0 = ksim_now_ms();
	}
	fprintf(stderr, "chaos %5.1fs: ", (ksim_now_ms() - t0) / 1000.0);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static json_object *
jparse(const char *s)
{
	json_object *o = json_tokener_parse(s);

	if (o == NULL) {
		fail_msg("bad JSON literal: %s", s);
	}
	return (o);
}

static const char *
str_at(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

/* ---- processes ---- */

/* The --controller argument of a worker (into out), "" if unknown. */
static void
worker_ctl(pid_t pid, char *out, size_t len)
{
	char path[64], buf[1024];
	size_t n = 0;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		return;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (strcmp(buf + i, "--controller") == 0 && i + 13 < n) {
			snprintf(out, len, "%s", buf + i + 13);
			return;
		}
	}
}

/* The live workers of s (remembered in s->seen for the cleanup). */
static int
sd_workers(struct sd *s, pid_t *out, int max)
{
	int n = s->pid > 0 ? sdproc_children(s->pid, out, max) : 0;

	for (int i = 0; i < n; i++) {
		sdproc_remember(s->seen, &s->nseen, MAX_SEEN, out[i]);
	}
	return (n);
}

/* True when the log of s says it leads now. */
static bool
sd_leading(const struct sd *s)
{
	char *t = sdproc_log_text(s->log);
	bool l = sdproc_count(t, LEADING) > sdproc_count(t, DEPOSED);

	free(t);
	return (l);
}

static void
sd_start(void)
{
	struct sd *s;
	const char *argv[32];
	char rundir[128];
	int n = 0, i = C.nsd;

	assert_true(C.nsd < MAX_SD);
	s = &C.sd[C.nsd++];
	memset(s, 0, sizeof(*s));
	snprintf(s->log, sizeof(s->log), "%s/sd%d.log", C.dir, i);
	snprintf(rundir, sizeof(rundir), "%s/run%d", C.dir, i);
	argv[n++] = "--kubeconfig";
	argv[n++] = C.kc;
	argv[n++] = "--runtime-dir";
	argv[n++] = rundir;
	argv[n++] = "--metrics-bind-address=0";
	argv[n++] = "--health-probe-bind-address=0";
	for (int j = 0; le_args[j] != NULL; j++) {
		argv[n++] = le_args[j];
	}
	argv[n] = NULL;
	s->started_ms = ksim_now_ms();
	s->pid = sdproc_start(s->log, argv);
	assert_true(s->pid > 0);
	say("started supervisor %d (pid %d)", i, (int)s->pid);
}

/* Reaps s if it exited; checks that it was meant to. */
static void
sd_poll(struct sd *s, int idx)
{
	pid_t r;

	if (s->pid <= 0 || (r = waitpid(s->pid, &s->status, WNOHANG)) == 0) {
		return;
	}
	if (r < 0 && errno == EINTR) {
		return;
	}
	s->pid = 0;
	if (!s->expect_end) {
		violation("supervisor %d exited on its own (status 0x%x)", idx,
		        s->status);
	} else if (s->term
	        && !(WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0)) {
		violation("supervisor %d did not exit 0 after SIGTERM "
		          "(status 0x%x)",
		        idx, s->status);
	}
}

static void
sd_poll_all(void)
{
	for (int i = 0; i < C.nsd; i++) {
		sd_poll(&C.sd[i], i);
	}
}

/* Live supervisors not being stopped or terminated. */
static int
sd_live(int *out)
{
	int n = 0;

	for (int i = 0; i < C.nsd; i++) {
		struct sd *s = &C.sd[i];
		if (s->pid > 0 && !s->expect_end) {
			out[n++] = i;
		}
	}
	return (n);
}

/* ---- kubesim admin and request log ---- */

static long
admin(const char *method, const char *path, const char *body,
        json_object **out)
{
	int64_t end = ksim_now_ms() + 6000;
	struct ksim_resp *r;
	long code;

	/* connections may be refused for up to 3 s (F_REFUSE) */
	for (;;) {
		r = ksim_request(ksim_url(C.k), method, path,
		        body != NULL ? "application/json" : NULL, body, NULL,
		        10000);
		if ((code = r->code) != 0 || ksim_now_ms() >= end) {
			break;
		}
		ksim_resp_free(r);
		ksim_sleep_ms(100);
	}

	if (out != NULL) {
		*out = r->json != NULL ? json_object_get(r->json) : NULL;
	}
	if (code < 200 || code > 299) {
		say("admin %s %s: %ld %s", method, path, code, r->body);
	}
	ksim_resp_free(r);
	return (code);
}

/* One parsed request-log line. */
struct rl {
	int64_t ts_us;
	const char *verb, *method, *path, *query, *ua;
	long code;
};

typedef void rl_fn(const struct rl *e, void *arg);

/* Calls fn for every line of t (request-log JSON lines; t is cut up)
 * with ts >= after_us. */
static void
rl_scan_text(char *t, int64_t after_us, rl_fn *fn, void *arg)
{
	char *save = NULL;

	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(l);
		struct rl e = { 0 };
		int64_t code = 0;

		if (o == NULL || timefmt_parse(str_at(o, "ts"), &e.ts_us) != 0
		        || e.ts_us < after_us) {
			json_object_put(o);
			continue;
		}
		e.verb = str_at(o, "verb");
		e.method = str_at(o, "method");
		e.path = str_at(o, "path");
		e.query = str_at(o, "query");
		e.ua = str_at(o, "userAgent");
		(void)jx_get_int(o, "code", &code);
		e.code = (long)code;
		fn(&e, arg);
		json_object_put(o);
	}
}

/* Calls fn for every line of the request log with ts >= after_us. */
static void
rl_scan(int64_t after_us, rl_fn *fn, void *arg)
{
	char *t = sdproc_log_text(C.reqlog);

	rl_scan_text(t, after_us, fn, arg);
	free(t);
}

/* The identity in a supervisor's User-Agent, into id ("" if none). */
static void
ua_identity(const char *ua, char *id, size_t len)
{
	id[0] = '\0';
	if (strncmp(ua, UA_SD, strlen(UA_SD)) == 0) {
		const char *p = ua + strlen(UA_SD);
		snprintf(id, len, "%.*s", (int)strcspn(p, " "), p);
	}
}

struct new_id {
	char id[160];
};

static void
find_new_id(const struct rl *e, void *arg)
{
	struct new_id *n = arg;
	char id[160];

	if (n->id[0] != '\0') {
		return;
	}
	ua_identity(e->ua, id, sizeof(id));
	if (id[0] == '\0') {
		return;
	}
	for (int i = 0; i < C.nsd; i++) {
		if (strcmp(C.sd[i].id, id) == 0) {
			return;
		}
	}
	snprintf(n->id, sizeof(n->id), "%s", id);
}

/* Learns the identity of the newest supervisor: the first User-Agent of
 * a supervisor in the request log that no other one has. */
static void
learn_identity(struct sd *s, int idx)
{
	int64_t end = ksim_now_ms() + 20000;
	struct new_id n = { "" };

	while (n.id[0] == '\0' && ksim_now_ms() < end) {
		rl_scan(0, find_new_id, &n);
		if (n.id[0] == '\0') {
			ksim_sleep_ms(100);
		}
	}
	if (n.id[0] == '\0') {
		fail_msg("supervisor %d made no request in 20 s", idx);
	}
	snprintf(s->id, sizeof(s->id), "%s", n.id);
	say("supervisor %d is %s", idx, s->id);
}

/* A query parameter's value (raw, still encoded), into out. */
static bool
query_param(const char *q, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = q; p != NULL && *p != '\0';) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			p += kl + 1;
			snprintf(out, len, "%.*s", (int)strcspn(p, "&"), p);
			return (true);
		}
		p = strchr(p, '&');
		p = p != NULL ? p + 1 : NULL;
	}
	out[0] = '\0';
	return (false);
}

/* The informer key of a LIST: "<plural>?<labelSelector>". */
static void
list_key(const struct rl *e, char *out, size_t len)
{
	const char *plural = strrchr(e->path, '/');
	char sel[256];

	(void)query_param(e->query, "labelSelector", sel, sizeof(sel));
	snprintf(
	        out, len, "%s?%s", plural != NULL ? plural + 1 : e->path, sel);
}

/* LIST starts (first pages) of one supervisor, by informer key. */
struct lists {
	const char *ua;   /* "sympoziumd/0.1 <id> " */
	bool initial;     /* only resourceVersion=0 lists */
	json_object *per; /* key -> count */
	int total;
};

static void
count_lists(const struct rl *e, void *arg)
{
	struct lists *l = arg;
	char key[400], rv[64], cont[8];
	json_object *v;

	if (strcmp(e->verb, "list") != 0 || strstr(e->ua, l->ua) != e->ua
	        || query_param(e->query, "continue", cont, sizeof(cont))) {
		return;
	}
	(void)query_param(e->query, "resourceVersion", rv, sizeof(rv));
	if (l->initial && strcmp(rv, "0") != 0) {
		return;
	}
	list_key(e, key, sizeof(key));
	v = json_object_object_get(l->per, key);
	json_object_object_add(
	        l->per, key, json_object_new_int(json_object_get_int(v) + 1));
	l->total++;
}

static void
lists_of(const struct sd *s, int64_t after_us, bool initial, struct lists *l)
{
	char ua[200];

	snprintf(ua, sizeof(ua), "%s%s ", UA_SD, s->id);
	l->ua = ua;
	l->initial = initial;
	l->per = json_object_new_object();
	l->total = 0;
	rl_scan(after_us, count_lists, l);
	l->ua = NULL;
}

/* ---- the objects (tests/lib/opmodel.c) ---- */

/* Every object of the mode, in creation order: the instances the runs
 * and schedules name first, the rest shuffled by the seeded PRNG. */
static void
build_items(void)
{
	const struct mode *m = C.m;
	struct opmodel_counts n = { m->skillpacks, m->instances, m->mcps,
		m->schedules, m->packs, m->runs, m->run_instances };
	int first;

	opmodel_build(&C.om, &n);
	first = C.om.first_free;
	for (int i = C.om.nitems - 1; i > first; i--) {
		int j = first + (int)(rnd() % (uint64_t)(i - first + 1));
		struct opmodel_item t = C.om.items[i];
		C.om.items[i] = C.om.items[j];
		C.om.items[j] = t;
	}
}

/* Creates obj, retrying through injected faults (bounded). */
static void
create_retry(const struct kapi_res *r, json_object *obj, const char *name)
{
	int64_t end = ksim_now_ms() + 60000;

	for (;;) {
		struct kapi_err e = KAPI_ERR_INIT;
		enum kapi_rc rc = kapi_create(C.c, r, NS, obj, NULL, &e);

		if (rc == KAPI_OK || rc == KAPI_EEXISTS) {
			kapi_err_fini(&e);
			return;
		}
		if (rc == KAPI_EINVALID || rc == KAPI_EBADREQUEST
		        || ksim_now_ms() > end) {
			fail_msg("create %s/%s: %ld %s", r->plural, name,
			        e.code, e.message != NULL ? e.message : "");
		}
		kapi_err_fini(&e);
		ksim_sleep_ms(rnd_in(20, 200));
	}
}

/* Kubelet rules: each run's pod logs its own result. */
static void
kubelet_rules(void)
{
	char *rules = opmodel_kubelet_rules(&C.om);

	assert_int_equal(admin("PUT", "/_kubesim/kubelet", rules, NULL), 200);
	free(rules);
}

/* Polls until everything matches or converge_ms pass. */
static void
converge(void)
{
	int64_t t0 = ksim_now_ms(), end = t0 + C.m->converge_ms;
	int rounds = 0;

	for (;;) {
		struct kstate st;
		int bad;

		rounds++;
		if (kstate_load(&st, C.c, NS, opmodel_kinds, OPMODEL_NKINDS)
		        != 0) {
			kstate_free(&st);
			ksim_sleep_ms(500);
			continue;
		}
		opmodel_check(&C.om, &st);
		bad = st.nwhy;
		if (bad == 0 || ksim_now_ms() >= end) {
			if (bad != 0) {
				violation("%d object(s) not converged after "
				          "%d ms; first ones:\n%s",
				        bad, C.m->converge_ms,
				        buf_str(&st.why));
			} else {
				say("converged %lld ms after the faults "
				    "stopped (%d rounds)",
				        (long long)(ksim_now_ms() - t0),
				        rounds);
			}
			kstate_free(&st);
			return;
		}
		kstate_free(&st);
		ksim_sleep_ms(1000);
	}
}

/* ---- faults ---- */

/* The index of the one live, running leader, or -1. */
static int
leader(void)
{
	int live[MAX_SD], n = sd_live(live), l = -1, count = 0;

	for (int i = 0; i < n; i++) {
		if (!C.sd[live[i]].stopped && sd_leading(&C.sd[live[i]])) {
			l = live[i];
			count++;
		}
	}
	return (count == 1 ? l : -1);
}

/* Recent worker kills by (supervisor, controller), to stay below the
 * CrashLoop threshold (more than 5 exits in 60 s) in quick runs. */
static struct {
	int sd;
	char ctl[32];
	int64_t at;
} kills[512];
static int nkills;

static int
recent_kills(int sd, const char *ctl, int64_t now)
{
	int n = 0;

	for (int i = 0; i < nkills; i++) {
		n += kills[i].sd == sd && strcmp(kills[i].ctl, ctl) == 0
		        && now - kills[i].at < 60000;
	}
	return (n);
}

static bool
fault_worker(enum fk k, int64_t now)
{
	int live[MAX_SD], n = sd_live(live), si, nw;
	pid_t w[64];
	char ctl[32];

	if (n == 0) {
		return (false);
	}
	si = live[rnd() % (uint64_t)n];
	if (C.sd[si].stopped || (nw = sd_workers(&C.sd[si], w, 64)) == 0) {
		return (false);
	}
	pid_t p = w[rnd() % (uint64_t)nw];
	worker_ctl(p, ctl, sizeof(ctl));
	if (recent_kills(si, ctl, now) >= 3 || nkills >= 512
	        || C.nstopped >= 64) {
		return (false);
	}
	kills[nkills].sd = si;
	snprintf(kills[nkills].ctl, sizeof(kills[nkills].ctl), "%s", ctl);
	kills[nkills++].at = now;
	if (k == F_WK_STOP) {
		C.stopped[C.nstopped].pid = p;
		C.stopped[C.nstopped++].until_ms = now + rnd_in(200, 2500);
	}
	kill(p, k == F_WK_KILL ? SIGKILL : k == F_WK_SEGV ? SIGSEGV : SIGSTOP);
	return (true);
}

static bool
fault_rule(enum fk k, int64_t now)
{
	static const char *const verbs[] = { "\"create\",\"update\","
		                             "\"patch\",\"delete\"",
		"\"get\",\"list\"", "\"watch\"", "\"list\",\"watch\"", "" };
	json_object *out = NULL;
	char body[256];
	int v = rnd_in(0, 4), code = rnd_in(0, 1) ? 500 : 503;

	if (C.nrules >= 64) {
		return (false);
	}
	snprintf(body, sizeof(body),
	        "{\"verbs\":[%s],\"code\":%d,\"rate\":%.2f%s}", verbs[v],
	        k == F_429 ? 429 : code, rnd_in(10, 50) / 100.0,
	        k == F_429 ? ",\"retryAfter\":1" : "");
	if (admin("POST", "/_kubesim/faults", body, &out) != 201) {
		json_object_put(out);
		return (false);
	}
	C.rules[C.nrules].id = (int)kstate_int(out, "id");
	C.rules[C.nrules++].until_ms = now + rnd_in(500, 3000);
	json_object_put(out);
	return (true);
}

/* Writes a ConfigMap no informer selects, so that the history has a
 * position newer than every informer's last resourceVersion. */
static void
touch_marker(void)
{
	static int n;
	char body[256];
	long code;

	snprintf(body, sizeof(body),
	        "{\"metadata\":{\"name\":\"chaos-marker-%d\"}}", n++);
	code = admin(
	        "POST", "/api/v1/namespaces/" NS "/configmaps", body, NULL);
	if (code != 201) {
		say("marker: %ld", code);
	}
}

static void
fault_compact(void)
{
	touch_marker();
	admin("POST", "/_kubesim/compact", "{}", NULL);
	admin("POST", "/_kubesim/close-watches", "{}", NULL);
}

static void
add_fence(const struct sd *s, int64_t from_us, int64_t to_us, const char *why,
        bool reacquire)
{
	struct fence *f;

	if (C.nfences >= 64) {
		return;
	}
	f = &C.fences[C.nfences++];
	memcpy(f->id, s->id, sizeof(f->id));
	f->from_us = from_us;
	f->to_us = to_us;
	f->why = why;
	f->reacquire = reacquire;
}

/* Notes the SIGCONT of frozen supervisor s in its open fence.  A leader
 * resumed early (the faults ended before its planned SIGCONT) is fenced
 * only up to 4 s after it; one resumed before the fence began (its renew
 * deadline counted from the SIGSTOP) never had to stand down: the fence is
 * void (seed 117713651518615: frozen 0.9 s, then flagged for renewing). */
static void
fence_resumed(const struct sd *s)
{
	for (int i = C.nfences - 1; i >= 0; i--) {
		struct fence *f = &C.fences[i];
		if (f->reacquire && f->cont_us == 0
		        && strcmp(f->id, s->id) == 0) {
			f->cont_us = timefmt_now_us_real();
			if (f->cont_us < f->from_us) {
				f->to_us = f->from_us - 1;
			} else if (f->to_us > f->cont_us + 4000000) {
				f->to_us = f->cont_us + 4000000;
			}
			return;
		}
	}
}

static bool
fault_leader(enum fk k, int64_t now)
{
	int l, live[MAX_SD];

	if (now < C.leader_quiet_until || sd_live(live) != 2
	        || (l = leader()) < 0) {
		return (false);
	}
	struct sd *s = &C.sd[l];
	int64_t t_us = timefmt_now_us_real();

	if (k == F_LEADER_STOP) {
		kill(s->pid, SIGSTOP);
		s->stopped = true;
		s->cont_at = now + LEASE_MS + RENEW_MS + rnd_in(500, 2000);
		/* fenced from its renew deadline to well after it resumes */
		add_fence(s, t_us + RENEW_MS * 1000LL,
		        t_us + (s->cont_at - now + 4000) * 1000LL,
		        "SIGSTOPped leader", true);
		C.leader_quiet_until = s->cont_at + 10000;
	} else {
		s->expect_end = true;
		s->term = k == F_LEADER_TERM;
		kill(s->pid, k == F_LEADER_TERM ? SIGTERM : SIGKILL);
		add_fence(s,
		        t_us
		                + (k == F_LEADER_TERM ? 12000 : RENEW_MS)
		                        * 1000LL,
		        INT64_MAX,
		        k == F_LEADER_TERM ? "terminated leader"
		                           : "killed leader",
		        false);
		C.leader_quiet_until = now + 12000;
	}
	say("%s: supervisor %d", FK_NAMES[k], l);
	return (true);
}

static bool
inject(enum fk k, int64_t now)
{
	char body[64];

	switch (k) {
	case F_WK_KILL:
	case F_WK_SEGV:
	case F_WK_STOP:
		return (fault_worker(k, now));
	case F_5XX:
	case F_429:
		return (fault_rule(k, now));
	case F_CLOSE_WATCHES:
		return (admin("POST", "/_kubesim/close-watches", "{}", NULL)
		        == 200);
	case F_COMPACT:
		fault_compact();
		return (true);
	case F_REFUSE:
		if (now < C.refuse_until) {
			return (false);
		}
		int sec = rnd_in(1, 3);
		snprintf(body, sizeof(body), "{\"seconds\":%d}", sec);
		C.refuse_until = now + sec * 1000 + 2000;
		return (admin("POST", "/_kubesim/faults/refuse", body, NULL)
		        == 200);
	default:
		return (fault_leader(k, now));
	}
}

static enum fk
pick_fault(void)
{
	int total = 0, r;

	for (int i = 0; i < F_NKINDS; i++) {
		total += FK_WEIGHT[i];
	}
	r = rnd_in(0, total - 1);
	for (int i = 0; i < F_NKINDS; i++) {
		if (r < FK_WEIGHT[i]) {
			return ((enum fk)i);
		}
		r -= FK_WEIGHT[i];
	}
	return (F_WK_KILL);
}

/* Resumes what is due, removes expired rules, reaps, keeps a standby. */
static void
service(int64_t now, bool all)
{
	int live[MAX_SD];

	for (int i = 0; i < C.nstopped; i++) {
		if (all || now >= C.stopped[i].until_ms) {
			kill(C.stopped[i].pid, SIGCONT);
			C.stopped[i--] = C.stopped[--C.nstopped];
		}
	}
	for (int i = 0; i < C.nrules; i++) {
		if (all || now >= C.rules[i].until_ms) {
			char path[64];
			snprintf(path, sizeof(path), "/_kubesim/faults/%d",
			        C.rules[i].id);
			admin("DELETE", path, NULL, NULL);
			C.rules[i--] = C.rules[--C.nrules];
		}
	}
	for (int i = 0; i < C.nsd; i++) {
		struct sd *s = &C.sd[i];
		if (s->stopped && s->pid > 0 && (all || now >= s->cont_at)) {
			kill(s->pid, SIGCONT);
			s->stopped = false;
			fence_resumed(s);
		}
	}
	sd_poll_all();
	if (sd_live(live) < 2) {
		sd_start();
		learn_identity(&C.sd[C.nsd - 1], C.nsd - 1);
	}
}

/* Stops every fault: rules, refusal, stopped processes. */
static void
faults_off(void)
{
	service(ksim_now_ms(), true);
	admin("DELETE", "/_kubesim/faults", NULL, NULL);
	admin("POST", "/_kubesim/faults/refuse", "{\"seconds\":0}", NULL);
}

/* ---- LISTs per recovery ---- */

/* The number of watches supervisor s announced ("N watch(es)"). */
static int
sd_watches(const struct sd *s)
{
	char *t = sdproc_log_text(s->log);
	const char *p = strstr(t, "controller(s), ");
	int n = p != NULL ? atoi(p + strlen("controller(s), ")) : 0;

	free(t);
	return (n);
}

/* The informers of the first supervisor, from its initial lists: the
 * number of LISTs each (resource, selector) must cost per recovery. */
static void
learn_informers(void)
{
	struct sd *s = &C.sd[0];
	int64_t end = ksim_now_ms() + 30000;
	int want;
	struct lists l;

	while ((want = sd_watches(s)) == 0 && ksim_now_ms() < end) {
		ksim_sleep_ms(100);
	}
	for (;;) {
		lists_of(s, 0, true, &l);
		if (l.total >= want || ksim_now_ms() >= end) {
			break;
		}
		json_object_put(l.per);
		ksim_sleep_ms(200);
	}
	if (want == 0 || l.total != want) {
		fail_msg("supervisor 0: %d initial LISTs for %d watches",
		        l.total, want);
	}
	C.kinds = l.per;
	C.nkinds = want;
	say("%d informers per supervisor over %d (resource, selector) "
	    "pairs: %s",
	        want, json_object_object_length(C.kinds),
	        json_object_to_json_string(C.kinds));
}

/* True when every informer of s listed at least once since t_us; with
 * check, flags informers that listed more than once, and with need_all
 * also those that did not list.  (Other LISTs, e.g. the live reads of
 * views, are not informers and not counted.) */
static bool
relisted(const struct sd *s, int idx, int64_t t_us, bool check, bool need_all)
{
	struct lists l;
	bool all = true;

	lists_of(s, t_us, false, &l);
	json_object_object_foreach(C.kinds, key, v)
	{
		int want = json_object_get_int(v);
		int got = json_object_get_int(
		        json_object_object_get(l.per, key));
		all = all && got >= want;
		if (check && (got > want || (need_all && got < want))) {
			violation("forced relist: supervisor %d sent %d "
			          "LIST(s) of %s, expected %d (one per "
			          "informer)",
			        idx, got, key, want);
		}
	}
	json_object_put(l.per);
	return (all);
}

/* Compacts the history and closes every watch, with no other fault
 * active, then counts each live supervisor's LISTs per informer within
 * window_ms: never more than one per informer; with need_all (reflector
 * backoff rested, before the faults) exactly one.  After the faults an
 * informer may still back off (up to 60 s, then the 410 costs one more
 * backoff delay), so a missing LIST there is only reported. */
static void
measured_relist(const char *when, bool need_all, int window_ms)
{
	int live[MAX_SD], n, late = 0;
	int64_t t_us, t0, end;
	bool done = false;

	faults_off();
	ksim_sleep_ms(1000);
	n = sd_live(live);
	touch_marker();
	t_us = timefmt_now_us_real();
	admin("POST", "/_kubesim/compact", "{}", NULL);
	admin("POST", "/_kubesim/close-watches", "{}", NULL);
	C.injected[F_COMPACT]++;
	t0 = ksim_now_ms();
	end = t0 + window_ms;
	while (!done && ksim_now_ms() < end) {
		ksim_sleep_ms(300);
		sd_poll_all();
		done = true;
		for (int i = 0; i < n; i++) {
			done = done
			        && relisted(&C.sd[live[i]], live[i], t_us,
			                false, false);
		}
	}
	ksim_sleep_ms(1500); /* a second LIST would come now */
	for (int i = 0; i < n; i++) {
		late += !relisted(
		        &C.sd[live[i]], live[i], t_us, true, need_all);
	}
	if (!done && need_all) {
		violation("forced relist (%s): not every informer listed "
		          "again within %d ms",
		        when, window_ms);
	}
	C.measured_relists++;
	say("forced relist (%s): %d supervisor(s), %s in %lld ms, no "
	    "informer listed twice",
	        when, n,
	        late == 0 ? "every informer relisted"
	                  : "some informers still backing off",
	        (long long)(ksim_now_ms() - t0));
}

/* ---- fencing ---- */

struct fence_scan {
	const struct fence *f;
	char ua[200];
	int n;            /* writes in the fence: violations */
	int legit;        /* writes under a re-acquired Lease */
	int inflight;     /* in flight at the freeze (in_flight()) */
	int64_t other_us; /* another supervisor's last 2xx Lease write */
	int64_t lease_us; /* its last 2xx Lease write in the fence; 0: none */
	char first[512];
};

/*
 * One line of the request log against a fence (pure: test_fence_windows
 * feeds it synthetic lines, in log order).  A write (not GET) by the
 * fenced supervisor inside the window is a violation, with one exception
 * for a frozen leader (f->reacquire): once resumed it may legitimately
 * win the Lease again when the standby has not taken it yet.  A 2xx Lease
 * PUT or POST by it proves that (the PUT carries the resourceVersion it
 * read: kubesim refuses it with 409 when another holder wrote the Lease
 * since; a release, the only write that gives the Lease up, comes only on
 * SIGTERM, never sent to a frozen leader's window).  Its writes are then
 * legitimate while its last such Lease write is at most LEASE_MS old;
 * before the first one (between the renew deadline and the re-acquisition)
 * and after a gap they remain violations.
 *
 * One more exception for a frozen leader: the requests it had handed to
 * its HTTP engine before SIGSTOP (decided while it led) reach the server
 * as soon as it resumes, in the few milliseconds before its loop sees the
 * lost lease (sup.c performs them before leader_check() runs).  Such a write
 * within INFLIGHT_MS of the SIGCONT is counted apart when it was refused
 * (it changed nothing: resourceVersion preconditions, 409) or when no
 * other supervisor held the Lease then (no 2xx Lease write by another one
 * in the LEASE_MS before it: no split brain).  A successful one while
 * another supervisor leads is still a violation.
 */
static bool
is_2xx_write(const struct rl *e)
{
	return (e->code >= 200 && e->code < 300
	        && (strcmp(e->method, "PUT") == 0
	                || strcmp(e->method, "POST") == 0));
}

/* A request of the in-flight exception: within INFLIGHT_MS of the SIGCONT,
 * and refused or sent while no other supervisor held the Lease. */
static bool
in_flight(const struct fence_scan *fs, const struct rl *e)
{
	int64_t cont = fs->f->cont_us;

	if (cont == 0 || e->ts_us < cont
	        || e->ts_us - cont > INFLIGHT_MS * 1000LL) {
		return (false);
	}
	return (e->code < 200 || e->code >= 300 || fs->other_us == 0
	        || e->ts_us - fs->other_us > LEASE_MS * 1000LL);
}

static void
fence_line(const struct rl *e, void *arg)
{
	struct fence_scan *fs = arg;
	bool mine = strstr(e->ua, fs->ua) == e->ua;

	if (strcmp(e->method, "GET") == 0) {
		return;
	}
	if (strstr(e->path, "/leases") != NULL) {
		if (!is_2xx_write(e)) {
			return;
		}
		if (!mine && strncmp(e->ua, UA_SD, strlen(UA_SD)) == 0) {
			fs->other_us = e->ts_us;
		} else if (mine && fs->f->reacquire
		        && e->ts_us >= fs->f->from_us
		        && e->ts_us <= fs->f->to_us) {
			fs->lease_us = e->ts_us;
		}
		return;
	}
	if (!mine || e->ts_us < fs->f->from_us || e->ts_us > fs->f->to_us) {
		return;
	}
	if (fs->lease_us != 0 && e->ts_us >= fs->lease_us
	        && e->ts_us - fs->lease_us <= LEASE_MS * 1000LL) {
		fs->legit++;
		return;
	}
	if (in_flight(fs, e)) {
		fs->inflight++;
		return;
	}
	if (fs->n++ == 0) {
		snprintf(fs->first, sizeof(fs->first), "%s %s (%ld)",
		        e->method, e->path, e->code);
	}
}

static void
check_fences(void)
{
	for (int i = 0; i < C.nfences; i++) {
		struct fence_scan fs = { .f = &C.fences[i] };
		snprintf(fs.ua, sizeof(fs.ua), "%s%s ", UA_SD, fs.f->id);
		rl_scan(fs.f->from_us - LEASE_MS * 1000LL, fence_line, &fs);
		if (fs.inflight > 0) {
			say("%s (%s): %d write(s) in flight at the freeze, "
			    "sent on its resumption with no other leader",
			        fs.f->why, fs.f->id, fs.inflight);
		}
		if (fs.legit > 0) {
			say("%s (%s): %d write(s) after it re-acquired the "
			    "Lease",
			        fs.f->why, fs.f->id, fs.legit);
		}
		if (fs.n > 0) {
			violation("%d write(s) by a %s (%s) after its renew "
			          "deadline; first: %s",
			        fs.n, fs.f->why, fs.f->id, fs.first);
		}
	}
}

/* Sanitizer reports in a supervisor's log (the workers' stderr goes
 * there too); the deliberate SIGSEGVs of workers are not reports. */
static void
check_sanitizers(const struct sd *s, int idx)
{
	char *t = sdproc_log_text(s->log), *save = NULL;

	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		if (sdproc_sanitizer_line(l, true)) {
			violation("supervisor %d log: %s", idx, l);
		}
	}
	free(t);
}

/* ---- setup and teardown ---- */

static void
apply_crds(void)
{
	assert_int_equal(ksim_apply_crds(C.c, "deploy/crds"), 8);
}

/* Waits until every sympozium.ai resource is served. */
static void
wait_served(void)
{
	const struct kapi_res *rs[] = { &opmodel_skp, &opmodel_inst,
		&opmodel_mcp, &opmodel_sch, &opmodel_pp, &opmodel_run };
	int64_t end = ksim_now_ms() + 10000;

	for (size_t i = 0; i < 6; i++) {
		json_object *items = NULL;
		while (kapi_list_all(C.c, rs[i], NS, NULL, &items, NULL, NULL)
		        != KAPI_OK) {
			assert_true(ksim_now_ms() < end);
			ksim_sleep_ms(50);
		}
		json_object_put(items);
	}
}

/* Stops every process started here, by pid: supervisors get SIGCONT and
 * SIGTERM (a clean exit is checked when check is set), then SIGKILL;
 * workers left behind get SIGKILL. */
static void
stop_all(bool check)
{
	pid_t w[64];

	for (int i = 0; i < C.nsd; i++) {
		struct sd *s = &C.sd[i];
		(void)sd_workers(s, w, 64);
		if (s->pid > 0) {
			s->expect_end = true;
			s->term = check;
			kill(s->pid, SIGCONT);
			kill(s->pid, SIGTERM);
		}
	}
	for (int i = 0; i < C.nsd; i++) {
		struct sd *s = &C.sd[i];
		int64_t end = ksim_now_ms() + 20000;
		while (s->pid > 0 && ksim_now_ms() < end) {
			sd_poll(s, i);
			ksim_sleep_ms(20);
		}
		if (s->pid > 0) {
			if (check) {
				violation("supervisor %d did not exit within "
				          "20 s of SIGTERM",
				        i);
			}
			kill(s->pid, SIGKILL);
			(void)waitpid(s->pid, &s->status, 0);
			s->pid = 0;
		}
		for (int j = 0; j < s->nseen; j++) {
			if (sdproc_alive(s->seen[j])
			        && sdproc_is_worker(s->seen[j])) {
				kill(s->seen[j], SIGCONT);
				kill(s->seen[j], SIGKILL);
			}
		}
	}
}

/* SIGTERM or SIGINT (e.g. the test runner's timeout): kill what was
 * started here, by pid, and exit.  Only async-signal-safe calls. */
static void
on_signal(int sig)
{
	for (int i = 0; i < C.nsd; i++) {
		if (C.sd[i].pid > 0) {
			kill(C.sd[i].pid, SIGKILL);
		}
		for (int j = 0; j < C.sd[i].nseen; j++) {
			if (sdproc_is_worker(C.sd[i].seen[j])) {
				kill(C.sd[i].seen[j], SIGKILL);
			}
		}
	}
	if (C.k != NULL) {
		kill(ksim_pid(C.k), SIGKILL);
	}
	_exit(128 + sig);
}

static int
setup(void **state)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	const char *seed = getenv("CHAOS_SEED");

	(void)state;
	C.seed = seed != NULL && *seed != '\0'
	        ? strtoull(seed, NULL, 10)
	        : ((uint64_t)time(NULL) << 16) ^ (uint64_t)getpid();
	C.rng = C.seed != 0 ? C.seed : 1;
	snprintf(C.dir, sizeof(C.dir), "/tmp/test_chaos.XXXXXX");
	if (mkdtemp(C.dir) == NULL) {
		return (-1);
	}
	snprintf(C.kc, sizeof(C.kc), "%s/kubeconfig", C.dir);
	snprintf(C.reqlog, sizeof(C.reqlog), "%s/requests.log", C.dir);
	char fseed[32];
	snprintf(fseed, sizeof(fseed), "%" PRIu64,
	        (uint64_t)(C.seed % 1000000007ULL));
	const char *args[] = { "--write-kubeconfig", C.kc, "--request-log",
		C.reqlog, "--bookmark-interval", "1h", "--fault-seed", fseed,
		NULL };
	if ((C.k = ksim_start(args)) == NULL) {
		return (-1);
	}
	char err[256];
	C.conf = kapi_conf_load(C.kc, NULL, err, sizeof(err));
	if (C.conf == NULL) {
		return (-1);
	}
	C.c = kapi_client_new(C.conf, "test-chaos/0.1");
	kapi_client_set_timeout(C.c, 15000);
	return (0);
}

static int
teardown(void **state)
{
	(void)state;
	stop_all(false);
	kapi_client_free(C.c);
	kapi_conf_free(C.conf);
	ksim_stop(C.k);
	opmodel_free(&C.om);
	json_object_put(C.kinds);
	if (C.viol == 0) {
		(void)testutil_rmtree(C.dir);
	} else {
		say("logs kept in %s", C.dir);
	}
	return (0);
}

/* ---- the run ---- */

static void
start_operator(void)
{
	int64_t end;

	sd_start();
	learn_identity(&C.sd[0], 0);
	sd_start();
	learn_identity(&C.sd[1], 1);
	end = ksim_now_ms() + 20000;
	while (leader() < 0 && ksim_now_ms() < end) {
		sd_poll_all();
		ksim_sleep_ms(50);
	}
	if (leader() < 0) {
		fail_msg("no single leader within 20 s");
	}
	say("supervisor %d leads", leader());
	learn_informers();
	/* reflectors rested: exactly one LIST per informer */
	measured_relist("before the faults", true, 20000);
}

/* Creates the objects due by now: all of them by 70% of the phase. */
static void
create_due(int64_t t0, int64_t now)
{
	int64_t span = C.m->chaos_ms * 7 / 10;
	int due = (int)((now - t0) * C.om.nitems / span);

	if (due > C.om.nitems) {
		due = C.om.nitems;
	}
	for (int n = 0; n < 4 && C.created < due; n++) {
		struct opmodel_item *it = &C.om.items[C.created++];
		create_retry(it->res, it->obj, it->name);
	}
}

static void
chaos_phase(void)
{
	int64_t t0 = ksim_now_ms(), end = t0 + C.m->chaos_ms;
	int64_t next = t0 + 500;
	int64_t next_relist = t0 + C.m->chaos_ms / (C.m->relists_during + 1);
	int during = 0;

	while (ksim_now_ms() < end) {
		int64_t now = ksim_now_ms();
		create_due(t0, now);
		service(now, false);
		/* creating can take seconds through injected faults: a fault
		 * timed from a stale clock would end at once (a leader frozen
		 * for 20 ms, its fence window still open) */
		now = ksim_now_ms();
		if (during < C.m->relists_during && now >= next_relist) {
			measured_relist("during the faults", false, 30000);
			during++;
			next_relist = now
			        + C.m->chaos_ms / (C.m->relists_during + 1);
		} else if (now >= next) {
			enum fk k = pick_fault();
			if (inject(k, now)) {
				C.injected[k]++;
			}
			next = now + rnd_in(150, 900);
		}
		ksim_sleep_ms(20);
	}
	while (C.created < C.om.nitems) {
		struct opmodel_item *it = &C.om.items[C.created++];
		create_retry(it->res, it->obj, it->name);
	}
}

static void
report(int64_t t_start)
{
	say("injected (mode %s, seed %" PRIu64 "):", C.m->name, C.seed);
	for (int i = 0; i < F_NKINDS; i++) {
		say("  %-42s %d", FK_NAMES[i], C.injected[i]);
	}
	say("verified: %d objects converged as the spec says (%d "
	    "expected children, exact sets per owner), %d forced "
	    "relist(s) at one LIST per informer, %d fenced "
	    "window(s) without a write, %d supervisor(s) run, none "
	    "exited on its own; %d violation(s); %lld s",
	        C.om.verified_objects, C.om.verified_children,
	        C.measured_relists, C.nfences, C.nsd, C.viol,
	        (long long)(ksim_now_ms() - t_start) / 1000);
}

static void
test_chaos(void **state)
{
	int64_t t_start = ksim_now_ms();

	(void)state;
	say("mode %s, seed %" PRIu64 " (replay the choices with "
	    "CHAOS_SEED=%" PRIu64 ")",
	        C.m->name, C.seed, C.seed);
	apply_crds();
	wait_served();
	build_items();
	{
		json_object *sec = jparse("{\"metadata\":{\"name\":"
		                          "\"chaos-key\"},\"stringData\":{"
		                          "\"OPENAI_API_KEY\":\"x\"}}");
		create_retry(&R_SECRET, sec, "chaos-key");
		json_object_put(sec);
	}
	kubelet_rules();
	start_operator();
	say("%d objects to create over %d s of faults", C.om.nitems,
	        C.m->chaos_ms / 1000);
	chaos_phase();
	faults_off();
	say("faults stopped; %d supervisor(s) started so far", C.nsd);
	for (int i = 0; i < C.m->relists; i++) {
		measured_relist("after the faults", false, 15000);
	}
	converge();
	check_fences();
	stop_all(true);
	for (int i = 0; i < C.nsd; i++) {
		check_sanitizers(&C.sd[i], i);
	}
	report(t_start);
	if (C.viol > 0) {
		fail_msg("%d violation(s) (seed %" PRIu64 "); see above",
		        C.viol, C.seed);
	}
}

/* ---- self-test of the fence check ---- */

/* A request-log line at second sec (2026-01-01T00:00:<sec>Z) by "sd-a"
 * or "sd-b". */
static void
rl_line(struct buf *b, const char *sec, const char *method, const char *path,
        int code, const char *id)
{
	buf_printf(b,
	        "{\"ts\":\"2026-01-01T00:00:%sZ\",\"verb\":\"x\","
	        "\"method\":\"%s\",\"path\":\"%s\",\"query\":\"\","
	        "\"code\":%d,\"userAgent\":\"" UA_SD "%s (chaos)\"}\n",
	        sec, method, path, code, id);
}

/* Judges the synthetic log b against a fence of "sd-a" from 10 s to 40 s
 * (reacquire as given; resumed at second cont, NULL: not resumed);
 * returns violations, *legit the writes under a re-acquired Lease. */
static int
judge(struct buf *b, bool reacquire, const char *cont, int *legit)
{
	struct fence f = { "sd-a", 0, 0, "test", reacquire, 0 };
	struct fence_scan fs = { .f = &f };
	int64_t base;
	char *t = xstrdup(buf_str(b));

	assert_int_equal(timefmt_parse("2026-01-01T00:00:00Z", &base), 0);
	f.from_us = base + 10000000;
	f.to_us = base + 40000000;
	if (cont != NULL) {
		char ts[64];
		snprintf(ts, sizeof(ts), "2026-01-01T00:00:%sZ", cont);
		assert_int_equal(timefmt_parse(ts, &f.cont_us), 0);
	}
	snprintf(fs.ua, sizeof(fs.ua), "%s%s ", UA_SD, f.id);
	rl_scan_text(t, 0, fence_line, &fs);
	free(t);
	*legit = fs.legit;
	return (fs.n);
}

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"
#define CM_PATH    "/api/v1/namespaces/ns/configmaps"

static void
test_fence_windows(void **state)
{
	struct buf b = BUF_INIT;
	int legit;

	(void)state;
	rl_line(&b, "05", "POST", CM_PATH, 201, "sd-a");   /* before: fine */
	rl_line(&b, "12", "POST", CM_PATH, 201, "sd-a");   /* violation */
	rl_line(&b, "12", "POST", CM_PATH, 201, "sd-b");   /* another: fine */
	rl_line(&b, "13", "GET", CM_PATH, 200, "sd-a");    /* a read: fine */
	rl_line(&b, "14", "PUT", LEASE_PATH, 409, "sd-a"); /* lost race */
	rl_line(&b, "15", "POST", CM_PATH, 201, "sd-a");   /* violation */
	assert_int_equal(judge(&b, true, NULL, &legit), 2);
	assert_int_equal(legit, 0);

	/* re-acquired at 16 s: writes within LEASE_MS of a Lease write are
	 * legitimate, then a gap without renewal makes them violations */
	rl_line(&b, "16", "PUT", LEASE_PATH, 200, "sd-a");
	rl_line(&b, "17", "POST", CM_PATH, 201, "sd-a");
	rl_line(&b, "18", "PUT", LEASE_PATH, 200, "sd-a");
	rl_line(&b, "20", "DELETE", CM_PATH "/x", 200, "sd-a");
	rl_line(&b, "25", "POST", CM_PATH, 201, "sd-a"); /* 7 s: violation */
	rl_line(&b, "45", "POST", CM_PATH, 201, "sd-a"); /* after: fine */
	assert_int_equal(judge(&b, true, NULL, &legit), 3);
	assert_int_equal(legit, 2);
	/* killed or terminated leaders never re-acquire: all count */
	assert_int_equal(judge(&b, false, NULL, &legit), 5);
	assert_int_equal(legit, 0);
	/* resumed at 11.1 s: writes within INFLIGHT_MS were in flight at the
	 * freeze: excused while no other supervisor holds the Lease; a
	 * later one, or one before the SIGCONT, counts */
	buf_reset(&b);
	rl_line(&b, "11.200000", "PUT", CM_PATH "/x", 409, "sd-a");
	rl_line(&b, "11.300000", "POST", CM_PATH, 201, "sd-a");
	rl_line(&b, "11.900000", "PUT", CM_PATH "/y", 409, "sd-a");
	rl_line(&b, "10.500000", "PUT", CM_PATH "/z", 409, "sd-a");
	assert_int_equal(judge(&b, true, NULL, &legit), 4);
	assert_int_equal(judge(&b, true, "11.100000", &legit), 2);
	assert_int_equal(legit, 0);
	/* the standby took the Lease at 11 s: the successful in-flight write
	 * is a split brain, the refused one still changed nothing */
	buf_reset(&b);
	rl_line(&b, "11.000000", "PUT", LEASE_PATH, 200, "sd-b");
	rl_line(&b, "11.200000", "PUT", CM_PATH "/x", 409, "sd-a");
	rl_line(&b, "11.300000", "POST", CM_PATH, 201, "sd-a");
	assert_int_equal(judge(&b, true, "11.100000", &legit), 1);
	/* another supervisor's Lease write excuses nothing */
	buf_reset(&b);
	rl_line(&b, "16", "PUT", LEASE_PATH, 200, "sd-b");
	rl_line(&b, "17", "POST", CM_PATH, 201, "sd-a");
	assert_int_equal(judge(&b, true, NULL, &legit), 1);
	buf_fini(&b);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fence_windows),
		cmocka_unit_test(test_chaos),
	};
	const char *lm = getenv("CHAOS_LONG");

	C.m = &QUICK;
	if (lm != NULL && strcmp(lm, "1") == 0) {
		C.m = &LONG;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--long") == 0) {
			C.m = &LONG;
		} else if (strcmp(argv[i], "--quick") == 0) {
			C.m = &QUICK;
		}
	}
	return (cmocka_run_group_tests(tests, setup, teardown));
}
