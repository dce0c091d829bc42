/*
 * test_hostile.c: the hostile-worker suite (tests/hostile/README.md).  One
 * kubesim and one sympoziumd whose skillpack workers are
 * bin/hostile/sympozium-worker-hostile (sandbox on, production flags),
 * shared by every attack; each attack is a cmocka test that creates the
 * SkillPack default/<attack> and judges what followed, with kubesim's
 * request log as the oracle:
 *
 *  - nothing of the attack reached the API server from the operator's
 *    User-Agent (no write request but the Warning Event in the primary's
 *    namespace; for views, no GET of the paths the attack aimed at; for
 *    the flood and the write loop, at most a bound of them);
 *  - the victims are intact (reset before each attack) and nothing was
 *    planted; the canary of the Secrets is in no object it did not start
 *    in and in no line of the supervisor's log (which holds everything the
 *    hostile worker received: it prints each view reply);
 *  - the violation was reported: sympozium_policy_violations_total of the
 *    skillpack controller grew, a Warning Event with reason
 *    PolicyViolation names the primary, the worker was killed and its
 *    slot restarted (what each attack must show is its spec's report);
 *    the session-level attacks (malformed frames, a RESULT for another
 *    key) must kill the session with their precise reason.
 *
 * Each attack prints one line: "attack NAME: refused" or what went wrong
 * ("REACHED API SERVER (request ...)", "LEAKED ...", "VICTIM CHANGED
 * ...", "NOT REPORTED ...").  A SkillPack default/ok-<attack> follows
 * each attack, answered harmlessly: a RESULT that keeps the controller
 * out of the Degraded state that worker deaths on different keys cause.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/contract.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "ipc/ipc.h"
#include "tests/hostile/hostile.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define NPROCS     "skillpack=16"
#define WAIT_MS    15000
#define LOOP_BOUND 1000 /* writes of the write loop that may get through */
#define VIEW_BOUND 1000 /* GETs of the view flood that may get through */
#define UA         "sympoziumd"
#define LINE_MAX   600
#define SETTLE_MS  8000 /* a RESULT's writes or the attacker's kill */

static const struct kapi_res r_cm = CONTRACT_RES_CONFIGMAPS;
static const struct kapi_res r_secrets = { "", "v1", "secrets", true };
static const struct kapi_res r_ns = { "", "v1", "namespaces", false };
static const struct kapi_res r_events = { "", "v1", "events", true };
static const struct kapi_res r_deploy = CONTRACT_RES_DEPLOYMENTS;
static const struct kapi_res r_leases
        = { "coordination.k8s.io", "v1", "leases", true };
static const struct kapi_res r_skillpacks = CONTRACT_RES_SKILLPACKS;
static const struct kapi_res r_crb
        = { "rbac.authorization.k8s.io", "v1", "clusterrolebindings", false };
static const struct kapi_res r_roles
        = { "rbac.authorization.k8s.io", "v1", "roles", true };
static const struct kapi_res r_crd
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };

/* What an attack must show once refused. */
enum report {
	REP_POLICY,  /* metric, Warning Event, worker killed and restarted */
	REP_VIEW,    /* metric and Warning Event (a refused view) */
	REP_NAME,    /* worker killed: by the policy or the codec */
	REP_SESSION, /* worker killed with the reason in spec.reason */
	REP_NONE,    /* only the oracle (a sanctioned view) */
};

struct spec {
	const char *name;
	enum report report;
	const char *reason;  /* REP_SESSION: in the kill line */
	const char *gets[3]; /* GET path prefixes the attack aims at */
	int bound;           /* > 0: that many writes/GETs may pass */
};

static struct optest *T;
static int metrics_port;
static char uid_b[80]; /* owner-b's uid */
/* The canary as a Secret's data holds it (base64): a leak of the data
 * shows this form. */
static char *canary64;

/* ---- plumbing ---- */

static int
free_port(void)
{
	int port = testutil_free_port();

	assert_true(port > 0);
	return (port);
}

static const char *
worker_binary(void)
{
	const char *e = getenv("HOSTILE_WORKER");

	return (e != NULL && *e != '\0'
	                ? e
	                : "bin/hostile/sympozium-worker-hostile");
}

/* The sum of sympozium_policy_violations_total{controller="skillpack",...}
 * (0 when the family is absent), -1 when /metrics does not answer. */
static double
violations(void)
{
	char base[64];
	double sum = 0;

	snprintf(base, sizeof(base), "http://127.0.0.1:%d", metrics_port);
	struct ksim_resp *r = ksim_request(
	        base, "GET", "/metrics", NULL, NULL, NULL, 5000);
	if (r->code != 200) {
		ksim_resp_free(r);
		return (-1);
	}
	for (char *l = r->body; l != NULL && *l != '\0';) {
		char *nl = strchr(l, '\n');
		if (strncmp(l, "sympozium_policy_violations_total{", 34)
		        == 0) {
			char *end = nl != NULL ? nl : l + strlen(l);
			char *sp = memrchr(l, ' ', (size_t)(end - l));
			if (sp != NULL
			        && memmem(l, (size_t)(end - l),
			                   "controller=\"skillpack\"", 22)
			                != NULL) {
				sum += strtod(sp + 1, NULL);
			}
		}
		l = nl != NULL ? nl + 1 : NULL;
	}
	ksim_resp_free(r);
	return (sum);
}

static json_object *
get(const struct kapi_res *r, const char *ns, const char *name)
{
	json_object *o = NULL;

	if (kapi_get(T->a.c, r, ns, name, &o, NULL) != KAPI_OK) {
		json_object_put(o);
		return (NULL);
	}
	return (o);
}

/* Creates obj (taken); when it exists, merge-patches it with patch (may
 * be NULL). */
static void
ensure(const struct kapi_res *r, const char *ns, json_object *obj,
        const char *patch)
{
	const char *name = jx_get_str(obj, "metadata.name");
	struct kapi_err e = KAPI_ERR_INIT;
	enum kapi_rc rc = kapi_create(T->a.c, r, ns, obj, NULL, &e);

	if (rc != KAPI_OK && e.code == 409 && patch != NULL) {
		kapi_patch(T->a.c, r, ns, name, KAPI_PATCH_MERGE, patch, NULL,
		        false, NULL, NULL);
	}
	kapi_err_fini(&e);
	json_object_put(obj);
}

static void
drop(const struct kapi_res *r, const char *ns, const char *name)
{
	kapi_delete(T->a.c, r, ns, name, NULL, NULL, NULL);
}

static json_object *
secret(const char *ns, const char *name, const char *annotations)
{
	json_object *o = testutil_jsonf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{"
	        "\"name\":\"%s\",\"namespace\":\"%s\",\"annotations\":{%s}},"
	        "\"type\":\"Opaque\",\"data\":{\"value\":\"%s\"}}",
	        name, ns, annotations, canary64);

	return (o);
}

static json_object *
cm(const char *ns, const char *name, const char *key, const char *val)
{
	return (testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                       "\"metadata\":{\"name\":\"%s\",\"namespace\":"
	                       "\"%s\"},\"data\":{\"%s\":\"%s\"}}",
	        name, ns, key, val));
}

/* The victims as each attack finds them, and nothing planted. */
static void
reset_victims(void)
{
	static const char *const nss[]
	        = { "kube-system", HOSTILE_NS_VICTIM, HOSTILE_OP_NS };
	char patch[256];

	for (size_t i = 0; i < 3; i++) {
		ensure(&r_ns, NULL,
		        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
		                       "\"Namespace\",\"metadata\":{\"name\":"
		                       "\"%s\"}}",
		                nss[i]),
		        NULL);
	}
	ensure(&r_cm, HOSTILE_NS_VICTIM,
	        cm(HOSTILE_NS_VICTIM, HOSTILE_CM_VICTIM, "keep", "victim"),
	        "{\"data\":{\"keep\":\"victim\"}}");
	ensure(&r_cm, HOSTILE_NS,
	        cm(HOSTILE_NS, HOSTILE_CM_LOOSE, "owner", "nobody"),
	        "{\"data\":{\"owner\":\"nobody\"}}");
	json_object *c = cm(HOSTILE_NS, HOSTILE_OTHER_CHILD, "owner",
	        HOSTILE_OTHER_PRIMARY);
	jx_set_path(c, "metadata.labels",
	        testutil_jsonf("{\"" CONTRACT_LABEL_SKILLPACK "\":\"%s\"}",
	                HOSTILE_OTHER_PRIMARY));
	jx_set_path(c, "metadata.ownerReferences",
	        testutil_jsonf(
	                "[{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                "\"kind\":\"SkillPack\",\"name\":\"%s\",\"uid\":"
	                "\"%s\",\"controller\":true,"
	                "\"blockOwnerDeletion\":true}]",
	                HOSTILE_OTHER_PRIMARY, uid_b));
	ensure(&r_cm, HOSTILE_NS, c,
	        "{\"data\":{\"owner\":\"" HOSTILE_OTHER_PRIMARY "\"}}");
	snprintf(patch, sizeof(patch),
	        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
	        "\"manager\",\"image\":\"%s\"}]}}}}",
	        HOSTILE_OP_IMAGE);
	ensure(&r_deploy, HOSTILE_OP_NS,
	        testutil_jsonf("{\"apiVersion\":\"apps/v1\",\"kind\":"
	                       "\"Deployment\",\"metadata\":{\"name\":\"%s\","
	                       "\"namespace\":\"%s\"},\"spec\":{\"selector\":"
	                       "{\"matchLabels\":{\"app\":\"op\"}},"
	                       "\"template\":{\"metadata\":{\"labels\":{"
	                       "\"app\":\"op\"}},\"spec\":{\"containers\":"
	                       "[{\"name\":\"manager\",\"image\":\"%s\"}]}}}}",
	                HOSTILE_OP_DEPLOY, HOSTILE_OP_NS, HOSTILE_OP_IMAGE),
	        patch);
	ensure(&r_leases, HOSTILE_OP_NS,
	        testutil_jsonf("{\"apiVersion\":\"coordination.k8s.io/v1\","
	                       "\"kind\":\"Lease\",\"metadata\":{\"name\":"
	                       "\"%s\",\"namespace\":\"%s\"},\"spec\":{"
	                       "\"holderIdentity\":\"%s\","
	                       "\"leaseDurationSeconds\":15}}",
	                HOSTILE_LEASE, HOSTILE_OP_NS, HOSTILE_HOLDER),
	        "{\"spec\":{\"holderIdentity\":\"" HOSTILE_HOLDER "\"}}");
	ensure(&r_secrets, "kube-system",
	        secret("kube-system", HOSTILE_SECRET, ""), NULL);
	ensure(&r_secrets, HOSTILE_NS, secret(HOSTILE_NS, HOSTILE_SECRET, ""),
	        NULL);
	/* as `kubectl apply` leaves it: the whole object, values included, in
	 * an annotation */
	ensure(&r_secrets, HOSTILE_NS,
	        secret(HOSTILE_NS, HOSTILE_SECRET_APPLIED,
	                "\"kubectl.kubernetes.io/last-applied-configuration\":"
	                "\"{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":"
	                "\\\"Secret\\\",\\\"stringData\\\":{\\\"value\\\":"
	                "\\\"" HOSTILE_CANARY "\\\"}}\""),
	        NULL);
	json_object *b = get(&r_skillpacks, HOSTILE_NS, HOSTILE_OTHER_PRIMARY);
	if (b != NULL && json_object_object_get(b, "status") != NULL) {
		json_object_object_del(b, "status");
		kapi_update_status(
		        T->a.c, &r_skillpacks, HOSTILE_NS, b, NULL, NULL);
	}
	json_object_put(b);
	drop(&r_crb, NULL, "hostile-admin");
	drop(&r_roles, "kube-system", "hostile-all");
	drop(&r_secrets, "kube-system", "hostile-secret");
	drop(&r_deploy, "kube-system", "hostile-node");
	drop(&r_crd, NULL, "evils.hostile.example");
}

/* A victim: the string at path must be want (want NULL: the object must be
 * absent; path NULL: only present), and its JSON must not hold bad. */
struct victim {
	const struct kapi_res *r;
	const char *ns, *name, *path, *want, *bad;
};

static const struct victim victims[] = {
	{ &r_cm, HOSTILE_NS_VICTIM, HOSTILE_CM_VICTIM, "data.keep", "victim",
	        NULL },
	{ &r_ns, NULL, HOSTILE_NS_VICTIM, NULL, "", "deletionTimestamp" },
	{ &r_cm, HOSTILE_NS, HOSTILE_CM_LOOSE, "data.owner", "nobody", NULL },
	{ &r_cm, HOSTILE_NS, HOSTILE_OTHER_CHILD, "data.owner",
	        HOSTILE_OTHER_PRIMARY, NULL },
	{ &r_deploy, HOSTILE_OP_NS, HOSTILE_OP_DEPLOY, NULL, "", "evil" },
	{ &r_leases, HOSTILE_OP_NS, HOSTILE_LEASE, "spec.holderIdentity",
	        HOSTILE_HOLDER, NULL },
	{ &r_secrets, "kube-system", HOSTILE_SECRET, NULL, "", NULL },
	{ &r_secrets, HOSTILE_NS, HOSTILE_SECRET, NULL, "", NULL },
	{ &r_skillpacks, HOSTILE_NS, HOSTILE_OTHER_PRIMARY, NULL, "",
	        "Hijacked" },
	{ &r_crb, NULL, "hostile-admin", NULL, NULL, NULL },
	{ &r_roles, "kube-system", "hostile-all", NULL, NULL, NULL },
	{ &r_secrets, "kube-system", "hostile-secret", NULL, NULL, NULL },
	{ &r_deploy, "kube-system", "hostile-node", NULL, NULL, NULL },
	{ &r_crd, NULL, "evils.hostile.example", NULL, NULL, NULL },
};

/* The first victim found changed, described in why; false when none. */
static bool
victim_changed(char *why, size_t n)
{
	for (size_t i = 0; i < sizeof(victims) / sizeof(victims[0]); i++) {
		const struct victim *v = &victims[i];
		json_object *o = get(v->r, v->ns, v->name);
		const char *s = o != NULL && v->path != NULL
		        ? jx_get_str(o, v->path)
		        : NULL;
		const char *text
		        = o != NULL ? json_object_to_json_string(o) : "";
		bool bad = v->want == NULL ? o != NULL
		        : o == NULL        ? true
		        : v->path != NULL
		        ? s == NULL || strcmp(s, v->want) != 0
		        : false;
		bad = bad || (v->bad != NULL && strstr(text, v->bad) != NULL);
		if (bad) {
			snprintf(why, n, "%s %s/%s %s", v->r->plural,
			        v->ns != NULL ? v->ns : "", v->name,
			        v->want == NULL ? "planted"
			                        : "changed or gone");
		}
		json_object_put(o);
		if (bad) {
			return (true);
		}
	}
	return (false);
}

/* Occurrences of needle in the cluster-wide list of r (ConfigMaps and
 * Events: where a worker could have put what it stole or planted). */
static int
store_count(const struct kapi_res *r, const char *needle)
{
	json_object *items = NULL;
	int n = 0;

	if (kapi_list_all(T->a.c, r, NULL, NULL, &items, NULL, NULL)
	        != KAPI_OK) {
		return (-1);
	}
	n = sdproc_count(json_object_to_json_string(items), needle);
	json_object_put(items);
	return (n);
}

static int
store_canaries(void)
{
	return (store_count(&r_cm, HOSTILE_CANARY)
	        + store_count(&r_cm, canary64)
	        + store_count(&r_events, HOSTILE_CANARY)
	        + store_count(&r_events, canary64)
	        + store_count(&r_events, HOSTILE_REASON)
	        + store_count(&r_secrets, "\"hostile-"));
}

/* ---- the request log ---- */

static bool
is_write(const char *method)
{
	return (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0
	        || strcmp(method, "PATCH") == 0
	        || strcmp(method, "DELETE") == 0);
}

/* Whether one line of the request log is part of the attack. */
static bool
offends(const struct spec *sp, json_object *l)
{
	const char *ua = jx_get_str(l, "userAgent"),
	           *m = jx_get_str(l, "method"), *p = jx_get_str(l, "path");

	if (ua == NULL || m == NULL || p == NULL || strstr(ua, UA) == NULL) {
		return (false);
	}
	if (is_write(m)) {
		/* the Warning Event about the primary is the one write due */
		return (strstr(p, "/namespaces/" HOSTILE_NS "/events")
		        == NULL);
	}
	for (size_t i = 0; i < 3 && sp->gets[i] != NULL; i++) {
		if (strcmp(m, "GET") == 0
		        && strncmp(p, sp->gets[i], strlen(sp->gets[i])) == 0) {
			return (true);
		}
	}
	return (false);
}

/* The requests of the attack after line mark of the log; the first one
 * in first. */
static int
offending(const struct spec *sp, int mark, char *first, size_t n)
{
	char *text = sdproc_log_text(T->a.request_log), *save = NULL;
	int line = 0, count = 0;

	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		if (line++ < mark) {
			continue;
		}
		json_object *j = json_tokener_parse(l);
		if (j != NULL && offends(sp, j)) {
			if (count++ == 0) {
				int64_t code = 0;
				jx_get_int(j, "code", &code);
				snprintf(first, n, "%s %s -> %lld",
				        jx_get_str(j, "method"),
				        jx_get_str(j, "path"),
				        (long long)code);
			}
		}
		json_object_put(j);
	}
	free(text);
	return (count);
}

/* ---- the supervisor's log ---- */

/* The supervisor's log from byte off on (caller frees). */
static char *
log_since(size_t off)
{
	char *t = sdproc_log_text(T->sd[0].log);
	size_t n = strlen(t);
	char *r = strdup(off < n ? t + off : "");

	free(t);
	return (r);
}

static size_t
log_len(void)
{
	char *t = sdproc_log_text(T->sd[0].log);
	size_t n = strlen(t);

	free(t);
	return (n);
}

/* The line of text holding needle, copied into out; false when none. */
static bool
line_with(const char *text, const char *needle, const char *also, char *out,
        size_t n)
{
	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) {
		const char *b = p, *e = strchr(p, '\n');
		while (b > text && b[-1] != '\n') {
			b--;
		}
		e = e != NULL ? e : p + strlen(p);
		if (also == NULL
		        || memmem(b, (size_t)(e - b), also, strlen(also))) {
			snprintf(out, n, "%.*s", (int)(e - b), b);
			return (true);
		}
	}
	return (false);
}

/* The pid of the hostile worker that ran attack name (from its "attack
 * NAME start" line in text), or -1. */
static int
attacker_pid(const char *text, const char *name)
{
	char needle[128], line[LINE_MAX];

	snprintf(needle, sizeof(needle), "]: attack %s start", name);
	if (!line_with(text, needle, NULL, line, sizeof(line))) {
		return (-1);
	}
	const char *t = strstr(line, HOSTILE_TAG);
	return (t != NULL ? atoi(t + strlen(HOSTILE_TAG)) : -1);
}

/* Waits for needle (with the attack's name) in the log after off. */
static bool
wait_line(size_t off, const char *fmt, const char *name, int ms)
{
	char needle[160];
	int64_t until = ksim_now_ms() + ms;

	snprintf(needle, sizeof(needle), fmt, name);
	do {
		char *t = log_since(off);
		bool ok = strstr(t, needle) != NULL;
		free(t);
		if (ok) {
			return (true);
		}
		ksim_sleep_ms(30);
	} while (ksim_now_ms() < until);
	return (false);
}

/* Waits for the attack to be over on the worker's side: its "sent" line,
 * or the supervisor's word on the attacker's end (a kill, an exit).  True
 * when it was sent. */
static bool
wait_attack(size_t off, const char *name)
{
	char sent[160], l[LINE_MAX];
	int64_t until = ksim_now_ms() + WAIT_MS;

	snprintf(sent, sizeof(sent), "]: attack %s sent", name);
	do {
		char *t = log_since(off), pid[32];
		bool ok = strstr(t, sent) != NULL;
		int p = attacker_pid(t, name);
		snprintf(pid, sizeof(pid), "(pid %d)", p);
		bool gone = p > 0
		        && line_with(t, pid, "sympoziumd", l, sizeof(l));
		free(t);
		if (ok || gone) {
			return (ok);
		}
		ksim_sleep_ms(30);
	} while (ksim_now_ms() < until);
	return (false);
}

/* ---- one attack ---- */

static void
create_primary(const char *name)
{
	json_object *o = testutil_jsonf(
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"SkillPack\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
	        "\"%s\"},\"spec\":{\"skills\":[{\"name\":\"s\",\"content\":"
	        "\"c\"}]}}",
	        name, HOSTILE_NS);

	optest_create_or_fail(T, &r_skillpacks, HOSTILE_NS, o, NULL);
	json_object_put(o);
}

/* The kill of pid in text: its line in kill and the slot's restart; false
 * when the supervisor did not kill it. */
static bool
killed(const char *text, int pid, char *kill, size_t n, bool *restarted)
{
	char needle[64], slot[64];

	snprintf(needle, sizeof(needle), "(pid %d)", pid);
	*restarted = false;
	if (pid <= 0
	        || !(line_with(text, needle, "killing it", kill, n)
	                || line_with(text, needle, "exited", kill, n))) {
		return (false);
	}
	const char *w = strstr(kill, "worker skillpack-");
	if (w != NULL && sscanf(w, "worker %63s", slot) == 1) {
		char restart[96], l[LINE_MAX];
		snprintf(restart, sizeof(restart), "worker %s: restart in",
		        slot);
		*restarted = line_with(
		        strstr(text, kill) != NULL ? strstr(text, kill) : text,
		        restart, NULL, l, sizeof(l));
	}
	return (true);
}

/* What the attack's report lacks, in why; true when it is complete. */
static bool
reported(const struct spec *sp, double before, int pid, size_t off, char *why,
        size_t n)
{
	char kill[LINE_MAX] = "";
	bool restarted = false, k = false, ev = false, metric = false;
	int64_t until = ksim_now_ms() + 3000;

	do {
		char *t = log_since(off);
		k = killed(t, pid, kill, sizeof(kill), &restarted);
		free(t);
		json_object *e = optest_events(
		        T, HOSTILE_NS, sp->name, "PolicyViolation");
		ev = json_object_array_length(e) > 0
		        && strcmp(jx_get_str(json_object_array_get_idx(e, 0),
		                          "type")
		                           ?: "",
		                   "Warning")
		                == 0;
		json_object_put(e);
		metric = violations() > before;
		bool done = sp->report == REP_POLICY
		        ? k && restarted && ev && metric
		        : sp->report == REP_VIEW ? ev && metric
		        : sp->report == REP_NAME ? k && restarted
		        : sp->report == REP_SESSION
		        ? k && strstr(kill, sp->reason) != NULL
		        : true;
		if (done) {
			snprintf(why, n, "%s", kill);
			return (true);
		}
		ksim_sleep_ms(100);
	} while (ksim_now_ms() < until);
	snprintf(why, n, "metric %s, Warning Event %s, worker %s%s%s%s",
	        metric ? "grew" : "did not grow", ev ? "present" : "absent",
	        k ? "killed" : "not killed",
	        k ? (restarted ? " and restarted" : " but not restarted") : "",
	        sp->report == REP_SESSION ? ", want reason " : "",
	        sp->report == REP_SESSION ? sp->reason : "");
	return (false);
}

/* Creates default/ok-<name> and waits for the worker's harmless answer;
 * then deletes both primaries, so no later reconcile repeats the attack
 * in another one's window. */
static void
benign_after(const char *name)
{
	char ok[128];
	size_t off = log_len();

	snprintf(ok, sizeof(ok), HOSTILE_BENIGN_PREFIX "%s", name);
	create_primary(ok);
	if (!wait_line(off, "benign " HOSTILE_NS "/%s done", ok, WAIT_MS)) {
		printf("    (no worker answered %s within %d ms)\n", ok,
		        WAIT_MS);
	}
	drop(&r_skillpacks, HOSTILE_NS, name);
	drop(&r_skillpacks, HOSTILE_NS, ok);
}

/* Waits (up to SETTLE_MS) until the supervisor has dealt with a RESULT
 * that asks for writes: a write (or a request of the attack) was sent,
 * or the attacker is gone.  A quiet request log alone proves nothing: a 15 MB
 * RESULT takes seconds to decode under ASan. */
static void
settle(const struct spec *sp, int mark, size_t off)
{
	char first[LINE_MAX], kill[LINE_MAX];
	int64_t until = ksim_now_ms() + SETTLE_MS;
	bool restarted;

	if (sp->report != REP_POLICY && sp->report != REP_NAME) {
		return; /* views are answered before the worker says "sent" */
	}
	do {
		char *t = log_since(off);
		bool gone = killed(t, attacker_pid(t, sp->name), kill,
		        sizeof(kill), &restarted);
		free(t);
		if (gone || offending(sp, mark, first, sizeof(first)) > 0
		        || ksim_writes_after(T->a.request_log, UA, mark, false)
		                > 0) {
			return;
		}
		ksim_sleep_ms(50);
	} while (ksim_now_ms() < until);
}

/* What one attack left behind. */
struct evidence {
	bool ran;              /* the worker said it attacked */
	int pid;               /* the attacker, -1 when unknown */
	int requests;          /* of the attack, from UA */
	char first[LINE_MAX];  /* the first of them */
	bool leaked_log;       /* the canary in the supervisor's log */
	char leak[LINE_MAX];   /* that line */
	bool changed;          /* a victim changed or something planted */
	char victim[LINE_MAX]; /* which */
	int stored;            /* canaries and planted Events/Secrets */
};

static void
gather(const struct spec *sp, int mark, size_t off, int stored0,
        struct evidence *ev)
{
	char *text = log_since(off);

	ev->pid = attacker_pid(text, sp->name);
	ev->requests = offending(sp, mark, ev->first, sizeof(ev->first));
	ev->leaked_log = line_with(text, HOSTILE_CANARY, NULL, ev->leak,
	                         sizeof(ev->leak))
	        || line_with(text, canary64, NULL, ev->leak, sizeof(ev->leak));
	ev->changed = victim_changed(ev->victim, sizeof(ev->victim));
	ev->stored = store_canaries() - stored0;
	free(text);
}

/* Prints the attack's line (and what else went wrong below it); true when
 * it was refused and reported. */
static bool
judge(const struct spec *sp, const struct evidence *ev, double before,
        size_t off)
{
	char why[LINE_MAX] = "";
	bool reached = ev->requests > sp->bound;

	if (!ev->ran && ev->pid < 0) {
		printf("attack %s: NOT RUN (no worker took it)\n", sp->name);
		return (false);
	}
	if (reached) {
		printf("attack %s: REACHED API SERVER (request %s)\n",
		        sp->name, ev->first);
		printf("    %d request(s) of the attack from %s\n",
		        ev->requests, UA);
	} else if (ev->leaked_log) {
		printf("attack %s: LEAKED (the canary in the log)\n",
		        sp->name);
	} else if (ev->changed) {
		printf("attack %s: VICTIM CHANGED (%s)\n", sp->name,
		        ev->victim);
	} else if (ev->stored > 0) {
		printf("attack %s: REACHED API SERVER (the canary or a "
		       "planted "
		       "Event/Secret is in the store)\n",
		        sp->name);
	}
	if (reached || ev->leaked_log || ev->changed || ev->stored > 0) {
		if (ev->leaked_log) {
			printf("    leak: %.300s\n", ev->leak);
		}
		if (ev->changed) {
			printf("    victim: %s\n", ev->victim);
		}
		return (false);
	}
	if (!reported(sp, before, ev->pid, off, why, sizeof(why))) {
		printf("attack %s: refused but NOT REPORTED (%s)\n", sp->name,
		        why);
		return (false);
	}
	printf("attack %s: refused\n", sp->name);
	if (why[0] != '\0') {
		printf("    kill: %s\n", why);
	}
	return (true);
}

static void
run_attack(void **state)
{
	const struct spec *sp = *state;
	struct evidence ev = { 0 };
	int64_t t0 = ksim_now_ms();

	reset_victims();
	int mark = ksim_log_lines(T->a.request_log);
	size_t off = log_len();
	double before = violations();
	int stored0 = store_canaries();

	create_primary(sp->name);
	ev.ran = wait_attack(off, sp->name);
	if (strcmp(sp->name, "write-loop") == 0) {
		wait_line(off, "]: attack %s finished", sp->name, 20000);
	}
	settle(sp, mark, off);
	ksim_wait_quiet(T->a.request_log, UA, 300, 3000);
	gather(sp, mark, off, stored0, &ev);
	bool ok = judge(sp, &ev, before, off);
	int64_t t1 = ksim_now_ms();
	benign_after(sp->name);
	printf("    (%lld ms, then %lld ms to a harmless reconcile)\n",
	        (long long)(t1 - t0), (long long)(ksim_now_ms() - t1));
	fflush(stdout);
	if (!ok) {
		fail_msg("attack %s was not refused as it must be", sp->name);
	}
}

/* ---- set-up ---- */

static int
suite_setup(void **state)
{
	char maddr[64];
	json_object *b = NULL;

	(void)state;
	canary64 = ipc_b64_encode(HOSTILE_CANARY, strlen(HOSTILE_CANARY));
	T = optest_testctl_new("test-hostile", NULL, WAIT_MS);
	if (T == NULL || optest_apply_upstream_crds(T->a.c) < 1) {
		return (-1);
	}
	create_primary(HOSTILE_OTHER_PRIMARY);
	b = get(&r_skillpacks, HOSTILE_NS, HOSTILE_OTHER_PRIMARY);
	snprintf(uid_b, sizeof(uid_b), "%s",
	        jx_get_str(b, "metadata.uid") ?: "");
	json_object_put(b);
	reset_victims();
	metrics_port = free_port();
	snprintf(maddr, sizeof(maddr), "127.0.0.1:%d", metrics_port);
	const char *args[] = { "--controllers", "skillpack", "--worker-binary",
		worker_binary(), "--workers", NPROCS, "--metrics-bind-address",
		maddr, "--health-probe-bind-address", "0", "--health-socket",
		T->sock, "--shutdown-grace", "1s", NULL };
	optest_sd_start(T, 0, OPTEST_SD_HTTP, args);
	/* every worker in the sandbox before the first attack */
	if (!sdproc_log_wait(
	            &T->sd[0], "]: hello (sandbox on)", 16, WAIT_MS)) {
		sdproc_dump_log(T->sd[0].log);
		return (-1);
	}
	/* owner-b's own (harmless) reconcile */
	wait_line(0, "benign " HOSTILE_NS "/%s done", HOSTILE_OTHER_PRIMARY,
	        WAIT_MS);
	return (0);
}

static int
suite_teardown(void **state)
{
	(void)state;
	free(canary64);
	return (optest_finish(T, OPTEST_TERM, false));
}

#define W(n)                                                                  \
	{                                                                     \
		n, REP_POLICY, NULL, { NULL }, 0                              \
	}
#define BADNAME(n)                                                            \
	{                                                                     \
		n, REP_NAME, NULL, { NULL }, 0                                \
	}
#define V(n, ...)                                                             \
	{                                                                     \
		n, REP_VIEW, NULL, { __VA_ARGS__ }, 0                         \
	}
#define S(n, reason)                                                          \
	{                                                                     \
		n, REP_SESSION, reason, { NULL }, 0                           \
	}

static const struct spec specs[] = {
	W("crb-admin"),
	W("role-star"),
	W("secret-kube-system"),
	W("deploy-privileged"),
	W("patch-operator"),
	W("crd-create"),
	W("delete-cm-elsewhere"),
	W("event-kube-system"),
	W("event-secrets"),
	W("lease-ssa"),
	W("telemetry-forged"),
	W("memory-store-forged"),
	W("child-other-owner"),
	W("child-no-label"),
	W("child-no-owner"),
	W("child-other-ns"),
	W("update-not-owned"),
	W("patch-not-owned"),
	W("delete-not-owned"),
	W("patch-other-child"),
	W("status-other-primary"),
	W("event-other-object"),
	W("big-object"),
	{ "exfil-secret", REP_VIEW, NULL,
	        { "/api/v1/namespaces/" HOSTILE_NS "/secrets" }, 0 },
	V("view-secret-kube-system", "/api/v1/namespaces/kube-system/secrets"),
	V("view-secret-own-ns", "/api/v1/namespaces/" HOSTILE_NS "/secrets"),
	V("view-secret-meta-other-ns",
	        "/api/v1/namespaces/kube-system/secrets"),
	{ "view-secret-meta-applied", REP_NONE, NULL, { NULL }, 0 },
	V("view-list-other-ns", "/api/v1/namespaces/" HOSTILE_NS_VICTIM "/"),
	V("view-list-cluster", "/api/v1/configmaps", "/api/v1/secrets"),
	V("view-pod-log", "/api/v1/namespaces/kube-system/pods"),
	{ "view-flood", REP_VIEW, NULL,
	        { "/api/v1/namespaces/" HOSTILE_NS
	          "/configmaps/flood-absent" },
	        VIEW_BOUND },
	{ "write-loop", REP_POLICY, NULL, { NULL }, LOOP_BOUND },
	S("result-other-key", "RESULT for default/someone-else"),
	S("result-wrong-epoch", "RESULT for default/result-wrong-epoch epoch"),
	S("frame-bad-magic", "bad magic 0xdeadbeef"),
	S("frame-oversize", "message too large (body 4294967280 bytes"),
	S("frame-truncated",
	        "truncated body (10 body bytes, header says 100)"),
	S("json-deep", "RESULT: body is not valid JSON"),
	S("json-invalid", "RESULT: body is not valid JSON"),
#ifdef __SANITIZE_ADDRESS__
	/* ASan builds do not load the filter (workers/sandbox.h) */
	{ "sandbox-open", REP_NONE, NULL, { NULL }, 0 },
#else
	S("sandbox-open", "signal SIGSYS"),
#endif
	BADNAME("delete-empty"),
	BADNAME("delete-slash"),
	BADNAME("delete-pct"),
	BADNAME("delete-pct-slash"),
	/* last: these delete the victims' namespace when they get through */
	BADNAME("delete-dot"),
	BADNAME("delete-dotdot"),
	W("delete-namespace"),
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

int
main(void)
{
	struct CMUnitTest tests[NSPECS];

	for (size_t i = 0; i < NSPECS; i++) {
		tests[i] = (struct CMUnitTest) { .name = specs[i].name,
			.test_func = run_attack,
			.initial_state = (void *)(uintptr_t)&specs[i] };
	}
	return (_cmocka_run_group_tests(
	        "test_hostile", tests, NSPECS, suite_setup, suite_teardown));
}
