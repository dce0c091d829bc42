/*
 * kctrl.c: the emulated control-plane loops of kubesim (kctrl.h): the
 * garbage collector (spec C.6), the Job controller, a kubelet stand-in
 * that runs Pods through Pending, Running and Succeeded or Failed (with
 * logs), Deployment status, and the /_kubesim/kubelet admin rules.  One
 * thread follows the store's event ring from its own cursor, reacts under
 * the store lock and runs its timers (pod run times, Job backoff,
 * activeDeadlineSeconds, ttlSecondsAfterFinished) on a 50 ms tick.  Every
 * write goes through kwrite_*, so clients see them like any other write.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/duration.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/kctrl.h"

#define TICK_MS        50
#define SWEEP_MS       3000
#define BATCH          256
#define MAX_BATCHES    16
#define JOB_BACKOFF_US 1000000LL /* the real controller: 10 s, doubling */
#define DEF_RUN_MS     1000
#define DEF_START_MS   100
#define NEVER          INT64_MAX
#define ANN            "kubesim.sympozium.ai/"

/* One admin rule (/_kubesim/kubelet).  Unset values are -1 / NULL. */
struct rule {
	char *ns;
	struct ksel *sel;
	int64_t run_ms;
	int exit_code;
	int64_t start_ms;
	json_object *logs; /* container (or "*") -> text */
};

/* A pod the kubelet runs. */
struct pstate {
	char *uid;
	char *key;      /* "ns/name" */
	int running;    /* 0: Pending, 1: Running */
	int64_t due_ms; /* monotonic time of the next transition */
	int64_t run_ms; /* -1: runs until deleted */
	int exit_code;
	json_object *logs; /* container -> text */
	char started[TIMEFMT_RFC3339_LEN];
	char ip[24];
};

/* What the Job loop remembers of a Job (real-time microseconds). */
struct jstate {
	char *uid;
	char *key;
	int64_t wake_us; /* 0: no timer */
	int64_t start_us;
	int64_t fin_us;
	int64_t fail_us; /* last failure seen */
	int64_t nfailed;
};

struct kctrl {
	struct ksrv *ks;
	unsigned loops;
	pthread_t thr;
	bool thread;
	atomic_bool stop;
	uint64_t cursor, epoch;
	pthread_mutex_t mu; /* guards rules and rules_json */
	struct rule *rules;
	size_t nrules;
	json_object *rules_json;
	struct pstate **pods;
	size_t npods;
	struct jstate **jobs;
	size_t njobs;
	char **dirty; /* Job keys to reconcile */
	size_t ndirty;
	bool resync, sweep;
	int64_t next_sweep;
	int64_t sweep_after; /* no event-driven sweep before (mono ms) */
	unsigned ipseq;
	const struct kres *pod_r, *job_r, *dep_r;
	struct kstore_coll *pod_c, *job_c, *dep_c;
};

/* ---- parsing ---------------------------------------------------------- */

static int
loop_bit(const char *s, size_t n, unsigned *bit)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = { { "gc", KCTRL_GC }, { "job", KCTRL_JOB },
		{ "kubelet", KCTRL_KUBELET },
		{ "deployment", KCTRL_DEPLOYMENT },
		/* done synchronously by kwrite.c: accepted, no loop */
		{ "namespace", 0 }, { "crd", 0 } };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i].name) == n
		        && strncmp(names[i].name, s, n) == 0) {
			*bit = names[i].bit;
			return (0);
		}
	}
	return (-1);
}

int
kctrl_parse(const char *s, unsigned *loops)
{
	unsigned v = 0, bit;

	if (s == NULL || s[0] == '\0') {
		return (-1);
	}
	if (strcmp(s, "all") == 0 || strcmp(s, "none") == 0) {
		*loops = s[0] == 'a' ? KCTRL_ALL : 0;
		return (0);
	}
	for (;;) {
		size_t n = strcspn(s, ",");
		if (n == 0 || loop_bit(s, n, &bit) != 0) {
			return (-1);
		}
		v |= bit;
		if (s[n] == '\0') {
			break;
		}
		s += n + 1;
	}
	*loops = v;
	return (0);
}

/* ---- small helpers ---------------------------------------------------- */

static const char *
mstr(json_object *obj, const char *key)
{
	return (jx_get_str(json_object_object_get(obj, "metadata"), key));
}

static bool
deleting(json_object *obj)
{
	return (jx_get(obj, "metadata.deletionTimestamp") != NULL);
}

static bool
has_finalizer(json_object *obj, const char *name)
{
	json_object *f = jx_get(obj, "metadata.finalizers");
	size_t n = json_object_is_type(f, json_type_array)
	        ? json_object_array_length(f)
	        : 0;

	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(
		        json_object_array_get_idx(f, i));
		if (s != NULL && strcmp(s, name) == 0) {
			return (true);
		}
	}
	return (false);
}

static size_t
alen(json_object *a)
{
	return (json_object_is_type(a, json_type_array)
	                ? json_object_array_length(a)
	                : 0);
}

static json_object *
copy(json_object *o)
{
	json_object *c = NULL;

	json_object_deep_copy(o, &c, NULL);
	return (c);
}

static void
rfc3339(int64_t us, char out[TIMEFMT_RFC3339_LEN])
{
	timefmt_rfc3339(us / 1000000, out);
}

static void
set_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void
set_int(json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static int64_t
get_int(json_object *o, const char *path, int64_t def)
{
	int64_t v = def;

	jx_get_int(o, path, &v);
	return (v);
}

/* Writes obj's status (taken) through the status subresource. */
static int
write_status(struct kctrl *c, const struct kres *res, struct kitem *it,
        json_object *status)
{
	json_object *o = jx_copy_strip(it->obj, "status", NULL);
	struct kresp rs;
	int code;

	json_object_object_add(o, "status", status);
	kresp_init(&rs);
	code = kwrite_update(c->ks, res, mstr(o, "namespace"), mstr(o, "name"),
	        o, true, NULL, &rs);
	if (code != 200) {
		log_warnx("kctrl: status of %s %s: %d %.*s", res->kind,
		        it->key, code, (int)rs.body.len, rs.body.data);
	}
	kresp_fini(&rs);
	json_object_put(o);
	return (code);
}

/* Writes o (borrowed) as a full update. */
static int
write_object(struct kctrl *c, const struct kres *res, json_object *o)
{
	struct kresp rs;
	int code;

	kresp_init(&rs);
	code = kwrite_update(c->ks, res, mstr(o, "namespace"), mstr(o, "name"),
	        o, false, NULL, &rs);
	if (code != 200) {
		log_warnx("kctrl: update of %s %s: %d %.*s", res->kind,
		        mstr(o, "name"), code, (int)rs.body.len, rs.body.data);
	}
	kresp_fini(&rs);
	return (code);
}

static void
delete_object(struct kctrl *c, const struct kres *res, json_object *o,
        const char *policy)
{
	struct kresp rs;

	kresp_init(&rs);
	int code = kwrite_delete(c->ks, res, mstr(o, "namespace"),
	        mstr(o, "name"), policy, NULL, &rs);
	if (code != 200 && code != 404) {
		log_warnx("kctrl: delete of %s %s: %d", res->kind,
		        mstr(o, "name"), code);
	}
	kresp_fini(&rs);
}

/* The current item of res at the key of obj, when its uid is uid. */
static struct kitem *
current(struct kctrl *c, const struct kres *res, const char *key,
        const char *uid)
{
	struct kitem *it = kstore_get(ksrv_coll(c->ks, res), key);

	if (it == NULL || uid == NULL
	        || strcmp(mstr(it->obj, "uid") ?: "", uid) != 0) {
		return (NULL);
	}
	return (it);
}

/* Every served resource's collection once: res[i] for i < n (caller
 * frees the array). */
static const struct kres **
resources(struct kctrl *c, size_t *n)
{
	const struct kres *r, **out = NULL;

	*n = 0;
	for (size_t i = 0; (r = kres_at(c->ks->reg, i)) != NULL; i++) {
		bool seen = false;
		for (size_t j = 0; j < *n && !seen; j++) {
			seen = strcmp(out[j]->coll, r->coll) == 0;
		}
		if (!seen) {
			out = xreallocarray(out, *n + 1, sizeof(*out));
			out[(*n)++] = r;
		}
	}
	return (out);
}

/* ---- garbage collector ------------------------------------------------ */

struct gitem {
	const struct kres *res;
	struct kitem *it;
};

/* An owner being deleted with foregroundDeletion or orphan. */
struct gowner {
	const struct kres *res;
	struct kitem *it;
	const char *uid;
	bool fg, orphan, blocked;
};

struct gsweep {
	struct gitem *items;
	size_t n;
	struct gowner *owners;
	size_t nowners;
};

static struct gowner *
owner_find(struct gsweep *g, const char *uid)
{
	for (size_t i = 0; uid != NULL && i < g->nowners; i++) {
		if (strcmp(g->owners[i].uid, uid) == 0) {
			return (&g->owners[i]);
		}
	}
	return (NULL);
}

/* The resource of an ownerReference: its apiVersion and kind, else any
 * served version of the same group and kind. */
static const struct kres *
ref_resource(struct kctrl *c, const char *av, const char *kind)
{
	const struct kres *r = kres_find_kind(c->ks->reg, av, kind);
	const char *slash = strchr(av, '/');
	size_t glen = slash != NULL ? (size_t)(slash - av) : 0;

	for (size_t i = 0; r == NULL && (r = kres_at(c->ks->reg, i)); i++) {
		if (strcmp(r->kind, kind) != 0 || strlen(r->group) != glen
		        || strncmp(r->group, av, glen) != 0) {
			r = NULL;
		}
	}
	return (r);
}

/* Whether the owner an ownerReference names exists (by uid). */
static bool
owner_live(struct kctrl *c, json_object *ref, const char *dep_ns)
{
	const char *av = jx_get_str(ref, "apiVersion");
	const char *kind = jx_get_str(ref, "kind");
	const char *name = jx_get_str(ref, "name");
	const char *uid = jx_get_str(ref, "uid");
	const struct kres *r;
	char *key;
	bool live;

	if (av == NULL || kind == NULL || name == NULL || uid == NULL) {
		return (false);
	}
	r = ref_resource(c, av, kind);
	if (r == NULL || (r->flags & KRES_NAMESPACED && dep_ns == NULL)) {
		return (false);
	}
	key = ksrv_key(r, dep_ns, name);
	live = current(c, r, key, uid) != NULL;
	free(key);
	return (live);
}

static void
gc_collect(struct kctrl *c, struct gsweep *g)
{
	size_t nres;
	const struct kres **res = resources(c, &nres);

	for (size_t i = 0; i < nres; i++) {
		struct kitem **items = NULL;
		size_t n = 0;
		kstore_list(c->ks->st, ksrv_coll(c->ks, res[i]), NULL, 0,
		        &items, &n);
		g->items = xreallocarray(
		        g->items, g->n + n + 1, sizeof(*g->items));
		for (size_t j = 0; j < n; j++) {
			g->items[g->n++] = (struct gitem) { res[i], items[j] };
		}
		free(items);
	}
	free(res);
	for (size_t i = 0; i < g->n; i++) {
		json_object *o = g->items[i].it->obj;
		bool fg = has_finalizer(o, "foregroundDeletion");
		bool orphan = has_finalizer(o, "orphan");
		if (!deleting(o) || (!fg && !orphan) || !mstr(o, "uid")) {
			continue;
		}
		g->owners = xreallocarray(
		        g->owners, g->nowners + 1, sizeof(*g->owners));
		g->owners[g->nowners++] = (struct gowner) { g->items[i].res,
			g->items[i].it, mstr(o, "uid"), fg, orphan, false };
	}
}

/* How one dependent's references fare. */
struct gdep {
	json_object *keep; /* the live references */
	size_t live, absent, dropped;
	bool fg; /* a live owner is deleted in the foreground */
};

static void
gc_classify(struct kctrl *c, struct gsweep *g, json_object *o, struct gdep *d)
{
	json_object *refs = jx_get(o, "metadata.ownerReferences");
	const char *ns = mstr(o, "namespace");

	memset(d, 0, sizeof(*d));
	d->keep = json_object_new_array();
	for (size_t i = 0; i < alen(refs); i++) {
		json_object *ref = json_object_array_get_idx(refs, i);
		struct gowner *ow = owner_find(g, jx_get_str(ref, "uid"));
		if (ow != NULL && ow->orphan) {
			d->dropped++;
		} else if (!owner_live(c, ref, ns)) {
			d->absent++;
		} else {
			d->live++;
			d->fg = d->fg || (ow != NULL && ow->fg);
			json_object_array_add(d->keep, copy(ref));
		}
	}
}

/* Marks the foreground owners a (still present) dependent blocks. */
static void
gc_block(struct gsweep *g, json_object *refs)
{
	for (size_t i = 0; i < alen(refs); i++) {
		json_object *ref = json_object_array_get_idx(refs, i);
		struct gowner *ow = owner_find(g, jx_get_str(ref, "uid"));
		bool block = false;
		jx_get_bool(ref, "blockOwnerDeletion", &block);
		if (ow != NULL && ow->fg && block) {
			ow->blocked = true;
		}
	}
}

static void
gc_dependent(struct kctrl *c, struct gsweep *g, struct gitem *gi)
{
	const char *uid = mstr(gi->it->obj, "uid");
	struct kitem *it = current(c, gi->res, gi->it->key, uid);
	struct gdep d;

	if (it == NULL
	        || alen(jx_get(it->obj, "metadata.ownerReferences")) == 0) {
		return;
	}
	gc_classify(c, g, it->obj, &d);
	if (d.live == 0 && d.absent > 0) {
		if (!deleting(it->obj)) {
			log_debug(
			        "gc: deleting %s %s", gi->res->kind, it->key);
			delete_object(c, gi->res, it->obj, "Background");
		}
	} else if (d.absent + d.dropped > 0) {
		json_object *o = copy(it->obj);
		if (d.live > 0) {
			jx_set_path(o, "metadata.ownerReferences", d.keep);
			d.keep = NULL;
		} else {
			jx_strip(o, "metadata.ownerReferences");
		}
		write_object(c, gi->res, o);
		json_object_put(o);
	}
	json_object_put(d.keep);
	it = current(c, gi->res, gi->it->key, uid);
	if (it != NULL && d.fg && !deleting(it->obj)) {
		delete_object(c, gi->res, it->obj, "Foreground");
		it = current(c, gi->res, gi->it->key, uid);
	}
	if (it != NULL) {
		gc_block(g, jx_get(it->obj, "metadata.ownerReferences"));
	}
}

static void
remove_finalizer(struct kctrl *c, const struct kres *res, struct kitem *it,
        const char *name)
{
	json_object *o = copy(it->obj);
	json_object *f = jx_get(o, "metadata.finalizers");
	json_object *keep = json_object_new_array();

	for (size_t i = 0; i < alen(f); i++) {
		json_object *s = json_object_array_get_idx(f, i);
		if (strcmp(json_object_get_string(s) ?: "", name) != 0) {
			json_object_array_add(keep, json_object_get(s));
		}
	}
	if (json_object_array_length(keep) > 0) {
		jx_set_path(o, "metadata.finalizers", keep);
	} else {
		json_object_put(keep);
		jx_strip(o, "metadata.finalizers");
	}
	write_object(c, res, o);
	json_object_put(o);
}

static void
gc_owners(struct kctrl *c, struct gsweep *g)
{
	for (size_t i = 0; i < g->nowners; i++) {
		struct gowner *ow = &g->owners[i];
		struct kitem *it = current(c, ow->res, ow->it->key, ow->uid);
		if (it != NULL && ow->orphan
		        && has_finalizer(it->obj, "orphan")) {
			remove_finalizer(c, ow->res, it, "orphan");
			it = current(c, ow->res, ow->it->key, ow->uid);
		}
		if (it != NULL && ow->fg && !ow->blocked
		        && has_finalizer(it->obj, "foregroundDeletion")) {
			remove_finalizer(c, ow->res, it, "foregroundDeletion");
		}
	}
}

/* One pass of the three rules of spec C.6 over every object. */
static void
gc_sweep(struct kctrl *c)
{
	struct gsweep g = { 0 };

	gc_collect(c, &g);
	for (size_t i = 0; i < g.n; i++) {
		if (jx_get(g.items[i].it->obj, "metadata.ownerReferences")) {
			gc_dependent(c, &g, &g.items[i]);
		}
	}
	gc_owners(c, &g);
	for (size_t i = 0; i < g.n; i++) {
		kitem_unref(g.items[i].it);
	}
	free(g.items);
	free(g.owners);
}

/* ---- kubelet: rules --------------------------------------------------- */

static void
rules_free(struct rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].ns);
		ksel_free(r[i].sel);
		json_object_put(r[i].logs);
	}
	free(r);
}

static int
rule_duration(json_object *v, const char *what, int64_t *ms, char *err,
        size_t errlen)
{
	int64_t ns;
	const char *s = json_object_get_string(v);

	if (!json_object_is_type(v, json_type_string)
	        || duration_parse(s, &ns) != 0 || ns < 0) {
		snprintf(err, errlen, "%s: invalid duration \"%s\"", what,
		        s ?: "");
		return (-1);
	}
	*ms = ns / 1000000;
	return (0);
}

static int
rule_logs(json_object *v, struct rule *r, char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "logs: want an object");
		return (-1);
	}
	json_object_object_foreach(v, k, t)
	{
		if (!json_object_is_type(t, json_type_string)) {
			snprintf(err, errlen, "logs.%s: want a string", k);
			return (-1);
		}
	}
	r->logs = copy(v);
	return (0);
}

static int
rule_field(const char *k, json_object *v, struct rule *r, char *err,
        size_t errlen)
{
	int64_t n;

	if (strcmp(k, "namespace") == 0
	        && json_object_is_type(v, json_type_string)) {
		r->ns = xstrdup(json_object_get_string(v));
	} else if (strcmp(k, "labelSelector") == 0
	        && json_object_is_type(v, json_type_string)) {
		r->sel = ksel_parse_labels(
		        json_object_get_string(v), err, errlen);
		return (r->sel != NULL ? 0 : -1);
	} else if (strcmp(k, "runDuration") == 0) {
		return (rule_duration(v, k, &r->run_ms, err, errlen));
	} else if (strcmp(k, "startDelay") == 0) {
		return (rule_duration(v, k, &r->start_ms, err, errlen));
	} else if (strcmp(k, "exitCode") == 0 && jx_get_int(v, "", &n) == 0
	        && n >= 0 && n <= 255) {
		r->exit_code = (int)n;
	} else if (strcmp(k, "logs") == 0) {
		return (rule_logs(v, r, err, errlen));
	} else {
		snprintf(err, errlen, "%s: unknown field or invalid value", k);
		return (-1);
	}
	return (0);
}

/* Parses {"rules":[...]}.  Returns 0, or -1 with a message in err. */
static int
rules_parse(json_object *doc, struct rule **out, size_t *nout, char *err,
        size_t errlen)
{
	json_object *a = json_object_object_get(doc, "rules");
	size_t n = alen(a);
	struct rule *r = xcalloc(n + 1, sizeof(*r));

	if (!json_object_is_type(doc, json_type_object)
	        || !json_object_is_type(a, json_type_array)) {
		snprintf(err, errlen, "want an object with a \"rules\" array");
		free(r);
		return (-1);
	}
	for (size_t i = 0; i < n; i++) {
		json_object *ro = json_object_array_get_idx(a, i);
		r[i] = (struct rule) {
			.run_ms = -1, .exit_code = -1, .start_ms = -1
		};
		if (!json_object_is_type(ro, json_type_object)) {
			snprintf(err, errlen, "rules[%zu]: want an object", i);
			rules_free(r, i + 1);
			return (-1);
		}
		json_object_object_foreach(ro, k, v)
		{
			char e[200];
			if (rule_field(k, v, &r[i], e, sizeof(e)) != 0) {
				snprintf(err, errlen, "rules[%zu]: %s", i, e);
				rules_free(r, i + 1);
				return (-1);
			}
		}
	}
	*out = r;
	*nout = n;
	return (0);
}

static void
admin_put(struct kctrl *c, const struct kreq *rq, struct kresp *rs)
{
	char err[256];
	json_object *doc
	        = jx_parse(rq->body ?: "", rq->body_len, 0, err, sizeof(err));
	struct rule *r = NULL;
	size_t n = 0;

	if (doc == NULL || rules_parse(doc, &r, &n, err, sizeof(err)) != 0) {
		kresp_error(rs, 400, "BadRequest", "kubelet rules: %s", err);
		json_object_put(doc);
		return;
	}
	pthread_mutex_lock(&c->mu);
	rules_free(c->rules, c->nrules);
	json_object_put(c->rules_json);
	c->rules = r;
	c->nrules = n;
	c->rules_json = doc;
	kresp_json(rs, 200, c->rules_json);
	pthread_mutex_unlock(&c->mu);
	log_info("admin: %zu kubelet rule(s)", n);
}

void
kctrl_admin(
        void *arg, const struct kreq *rq, const char *sub, struct kresp *rs)
{
	struct kctrl *c = arg;
	const char *m = rq->method;

	if (sub[0] != '\0') {
		kresp_error(rs, 404, "NotFound",
		        "no admin endpoint kubelet/%s", sub);
	} else if (strcmp(m, "PUT") == 0 || strcmp(m, "POST") == 0) {
		admin_put(c, rq, rs);
	} else if (strcmp(m, "GET") == 0 || strcmp(m, "DELETE") == 0) {
		pthread_mutex_lock(&c->mu);
		if (m[0] == 'D') {
			rules_free(c->rules, c->nrules);
			json_object_put(c->rules_json);
			c->rules = NULL;
			c->nrules = 0;
			c->rules_json = json_tokener_parse("{\"rules\":[]}");
		}
		kresp_json(rs, 200, c->rules_json);
		pthread_mutex_unlock(&c->mu);
	} else {
		kresp_error(rs, 405, "MethodNotAllowed",
		        "kubelet takes GET, PUT, POST or DELETE");
	}
}

/* ---- kubelet: pods ---------------------------------------------------- */

static bool
terminal(json_object *pod)
{
	const char *p = jx_get_str(pod, "status.phase");

	return (p != NULL
	        && (strcmp(p, "Succeeded") == 0 || strcmp(p, "Failed") == 0));
}

static struct pstate *
pod_find(struct kctrl *c, const char *uid, size_t *idx)
{
	for (size_t i = 0; i < c->npods; i++) {
		if (strcmp(c->pods[i]->uid, uid) == 0) {
			*idx = i;
			return (c->pods[i]);
		}
	}
	return (NULL);
}

static void
pod_drop(struct kctrl *c, size_t i)
{
	struct pstate *ps = c->pods[i];

	free(ps->uid);
	free(ps->key);
	json_object_put(ps->logs);
	free(ps);
	c->pods[i] = c->pods[--c->npods];
}

static const char *
ann(json_object *pod, const char *name)
{
	return (jx_getv(pod, "metadata", "annotations", name, NULL) != NULL
	                ? json_object_get_string(jx_getv(
	                        pod, "metadata", "annotations", name, NULL))
	                : NULL);
}

/* A duration annotation in ms, or def. */
static int64_t
ann_ms(json_object *pod, const char *name, int64_t def)
{
	const char *s = ann(pod, name);
	int64_t ns;

	if (s == NULL) {
		return (def);
	}
	if (duration_parse(s, &ns) != 0 || ns < 0) {
		log_warnx("kubelet: pod %s: bad %s \"%s\"", mstr(pod, "name"),
		        name, s);
		return (def);
	}
	return (ns / 1000000);
}

static const struct rule *
rule_match(struct kctrl *c, json_object *pod)
{
	const char *ns = mstr(pod, "namespace");

	for (size_t i = 0; i < c->nrules; i++) {
		const struct rule *r = &c->rules[i];
		if (r->ns != NULL && strcmp(r->ns, ns ?: "") != 0) {
			continue;
		}
		if (ksel_match_labels(
		            r->sel, jx_get(pod, "metadata.labels"))) {
			return (r);
		}
	}
	return (NULL);
}

static const char *
log_text(json_object *pod, const struct rule *r, const char *container)
{
	char *name = xasprintf(ANN "log.%s", container);
	const char *t = ann(pod, name);

	free(name);
	if (t == NULL) {
		t = ann(pod, ANN "log");
	}
	if (t == NULL && r != NULL && r->logs != NULL) {
		t = jx_getv(r->logs, container, NULL) != NULL
		        ? jx_get_str(jx_getv(r->logs, container, NULL), "")
		        : jx_get_str(jx_getv(r->logs, "*", NULL), "");
	}
	return (t ?: "");
}

/* Settings from the annotations, then the first matching rule, then the
 * defaults. */
static void
pod_settings(struct kctrl *c, json_object *pod, struct pstate *ps,
        int64_t *start_ms)
{
	const char *rp = jx_get_str(pod, "spec.restartPolicy");
	bool forever = rp == NULL || strcmp(rp, "Always") == 0;
	json_object *cs = jx_get(pod, "spec.containers");
	const char *ec = ann(pod, ANN "exit-code");
	int64_t v;

	pthread_mutex_lock(&c->mu);
	const struct rule *r = rule_match(c, pod);
	*start_ms = ann_ms(pod, ANN "start-delay",
	        r != NULL && r->start_ms >= 0 ? r->start_ms : DEF_START_MS);
	ps->run_ms = ann_ms(pod, ANN "run-duration",
	        r != NULL && r->run_ms >= 0 ? r->run_ms
	                                    : (forever ? -1 : DEF_RUN_MS));
	ps->exit_code = r != NULL && r->exit_code >= 0 ? r->exit_code : 0;
	if (ec != NULL) {
		char *end;
		v = strtoll(ec, &end, 10);
		if (*end == '\0' && end != ec && v >= 0 && v <= 255) {
			ps->exit_code = (int)v;
		}
	}
	ps->logs = json_object_new_object();
	for (size_t i = 0; i < alen(cs); i++) {
		const char *n
		        = jx_get_str(json_object_array_get_idx(cs, i), "name");
		if (n != NULL) {
			set_str(ps->logs, n, log_text(pod, r, n));
		}
	}
	pthread_mutex_unlock(&c->mu);
}

static void
pod_track(struct kctrl *c, struct kitem *it, int64_t now_ms)
{
	json_object *pod = it->obj;
	const char *uid = mstr(pod, "uid");
	struct pstate *ps;
	int64_t start_ms;
	size_t idx;

	if (uid == NULL || terminal(pod) || deleting(pod)
	        || pod_find(c, uid, &idx) != NULL) {
		return;
	}
	ps = xcalloc(1, sizeof(*ps));
	ps->uid = xstrdup(uid);
	ps->key = xstrdup(it->key);
	pod_settings(c, pod, ps, &start_ms);
	c->ipseq++;
	snprintf(ps->ip, sizeof(ps->ip), "10.244.%u.%u",
	        (c->ipseq / 250) % 256, c->ipseq % 250 + 2);
	ps->due_ms = now_ms + start_ms;
	c->pods = xreallocarray(c->pods, c->npods + 1, sizeof(*c->pods));
	c->pods[c->npods++] = ps;
}

static json_object *
pod_cond(const char *type, bool ok, const char *reason, const char *now)
{
	json_object *o = json_object_new_object();

	set_str(o, "type", type);
	set_str(o, "status", ok ? "True" : "False");
	json_object_object_add(o, "lastProbeTime", NULL);
	set_str(o, "lastTransitionTime", now);
	if (reason != NULL) {
		set_str(o, "reason", reason);
	}
	return (o);
}

static json_object *
container_status(
        json_object *spec, const struct pstate *ps, bool done, const char *now)
{
	json_object *o = json_object_new_object();
	json_object *state = json_object_new_object();
	json_object *s = json_object_new_object();
	const char *name = jx_get_str(spec, "name") ?: "";
	char id[80];

	snprintf(id, sizeof(id), "containerd://%.8s%s", ps->uid, name);
	set_str(o, "name", name);
	set_str(o, "image", jx_get_str(spec, "image") ?: "");
	set_str(o, "imageID", "");
	set_str(o, "containerID", id);
	json_object_object_add(o, "ready", json_object_new_boolean(!done));
	json_object_object_add(o, "started", json_object_new_boolean(!done));
	set_int(o, "restartCount", 0);
	set_str(s, "startedAt", ps->started);
	if (done) {
		set_int(s, "exitCode", ps->exit_code);
		set_str(s, "reason",
		        ps->exit_code == 0 ? "Completed" : "Error");
		set_str(s, "finishedAt", now);
		set_str(s, "containerID", id);
	}
	json_object_object_add(state, done ? "terminated" : "running", s);
	json_object_object_add(o, "state", state);
	return (o);
}

static json_object *
pod_status(json_object *pod, const struct pstate *ps, bool done)
{
	json_object *st = json_object_new_object();
	json_object *conds = json_object_new_array();
	json_object *css = json_object_new_array();
	json_object *cs = jx_get(pod, "spec.containers");
	const char *why = done ? "PodCompleted" : NULL;
	const char *phase = !done    ? "Running"
	        : ps->exit_code == 0 ? "Succeeded"
	                             : "Failed";
	char now[TIMEFMT_RFC3339_LEN];

	rfc3339(timefmt_now_us_real(), now);
	set_str(st, "phase", phase);
	json_object_array_add(conds,
	        pod_cond("PodReadyToStartContainers", !done, NULL, now));
	json_object_array_add(conds, pod_cond("Initialized", true, why, now));
	json_object_array_add(conds, pod_cond("Ready", !done, why, now));
	json_object_array_add(
	        conds, pod_cond("ContainersReady", !done, why, now));
	json_object_array_add(
	        conds, pod_cond("PodScheduled", true, NULL, ps->started));
	json_object_object_add(st, "conditions", conds);
	set_str(st, "hostIP", "172.18.0.2");
	set_str(st, "podIP", ps->ip);
	json_object *ips = json_object_new_array(),
	            *ip = json_object_new_object();
	set_str(ip, "ip", ps->ip);
	json_object_array_add(ips, ip);
	json_object_object_add(st, "podIPs", ips);
	set_str(st, "startTime", ps->started);
	set_str(st, "qosClass", "BestEffort");
	for (size_t i = 0; i < alen(cs); i++) {
		json_object_array_add(css,
		        container_status(json_object_array_get_idx(cs, i), ps,
		                done, now));
	}
	json_object_object_add(st, "containerStatuses", css);
	return (st);
}

static void
pod_logs(struct kctrl *c, const struct pstate *ps, json_object *pod)
{
	const char *ns = mstr(pod, "namespace"), *name = mstr(pod, "name");

	json_object_object_foreach(ps->logs, k, v)
	{
		ksrv_log_set(c->ks, ns, name, k, json_object_get_string(v));
	}
}

/* The next transition of pod i.  Returns whether it was dropped. */
static bool
pod_step(struct kctrl *c, size_t i, int64_t now_ms)
{
	struct pstate *ps = c->pods[i];
	struct kitem *it = current(c, c->pod_r, ps->key, ps->uid);

	if (it == NULL || deleting(it->obj) || terminal(it->obj)) {
		pod_drop(c, i);
		return (true);
	}
	if (!ps->running) {
		rfc3339(timefmt_now_us_real(), ps->started);
		write_status(c, c->pod_r, it, pod_status(it->obj, ps, false));
		pod_logs(c, ps, it->obj);
		ps->running = 1;
		ps->due_ms = ps->run_ms < 0 ? NEVER : now_ms + ps->run_ms;
		return (false);
	}
	write_status(c, c->pod_r, it, pod_status(it->obj, ps, true));
	pod_drop(c, i);
	return (true);
}

static void
pods_due(struct kctrl *c, int64_t now_ms)
{
	for (size_t i = 0; i < c->npods;) {
		if (c->pods[i]->due_ms > now_ms || !pod_step(c, i, now_ms)) {
			i++;
		}
	}
}

/* ---- jobs ------------------------------------------------------------- */

static struct jstate *
job_state(struct kctrl *c, const char *uid, const char *key)
{
	for (size_t i = 0; i < c->njobs; i++) {
		if (strcmp(c->jobs[i]->uid, uid) == 0) {
			return (c->jobs[i]);
		}
	}
	struct jstate *js = xcalloc(1, sizeof(*js));
	js->uid = xstrdup(uid);
	js->key = xstrdup(key);
	c->jobs = xreallocarray(c->jobs, c->njobs + 1, sizeof(*c->jobs));
	c->jobs[c->njobs++] = js;
	return (js);
}

static void
job_forget(struct kctrl *c, const char *uid)
{
	for (size_t i = 0; uid != NULL && i < c->njobs; i++) {
		if (strcmp(c->jobs[i]->uid, uid) == 0) {
			free(c->jobs[i]->uid);
			free(c->jobs[i]->key);
			free(c->jobs[i]);
			c->jobs[i] = c->jobs[--c->njobs];
			return;
		}
	}
}

static void
mark_dirty(struct kctrl *c, const char *key)
{
	for (size_t i = 0; i < c->ndirty; i++) {
		if (strcmp(c->dirty[i], key) == 0) {
			return;
		}
	}
	c->dirty = xreallocarray(c->dirty, c->ndirty + 1, sizeof(*c->dirty));
	c->dirty[c->ndirty++] = xstrdup(key);
}

/* The uid of obj's controller of kind kind (and its name), or NULL. */
static const char *
controller_of(json_object *obj, const char *kind, const char **name)
{
	json_object *refs = jx_get(obj, "metadata.ownerReferences");

	for (size_t i = 0; i < alen(refs); i++) {
		json_object *r = json_object_array_get_idx(refs, i);
		bool ctl = false;
		jx_get_bool(r, "controller", &ctl);
		if (ctl && strcmp(jx_get_str(r, "kind") ?: "", kind) == 0) {
			*name = jx_get_str(r, "name");
			return (jx_get_str(r, "uid"));
		}
	}
	return (NULL);
}

static bool
has_cond(json_object *obj, const char *type)
{
	json_object *cs = jx_get(obj, "status.conditions");

	for (size_t i = 0; i < alen(cs); i++) {
		json_object *k = json_object_array_get_idx(cs, i);
		if (strcmp(jx_get_str(k, "type") ?: "", type) == 0
		        && strcmp(jx_get_str(k, "status") ?: "", "True")
		                == 0) {
			return (true);
		}
	}
	return (false);
}

struct jcount {
	int64_t active, ready, succeeded, failed;
	struct kitem **act; /* active pods (referenced) */
};

/* The Job's pods: those it controls among the pods named after it (its
 * pods are made with generateName "<job>-"), found by the store's key
 * order, not by a scan of the namespace (3,000 Jobs of one namespace made
 * every pass O(jobs x pods): the scale suite's AgentRun burst). */
static void
job_count(struct kctrl *c, json_object *job, struct jcount *jc)
{
	char *prefix = xasprintf("%s/%s-", mstr(job, "namespace") ?: "",
	        mstr(job, "name") ?: "");
	const char *uid = mstr(job, "uid"), *nm;
	struct kitem **items = NULL;
	size_t n = 0;

	memset(jc, 0, sizeof(*jc));
	kstore_list(c->ks->st, c->pod_c, prefix, 0, &items, &n);
	jc->act = xcalloc(n + 1, sizeof(*jc->act));
	for (size_t i = 0; i < n; i++) {
		json_object *p = items[i]->obj;
		const char *ph = jx_get_str(p, "status.phase") ?: "";
		const char *cu = controller_of(p, "Job", &nm);
		if (cu == NULL || strcmp(cu, uid) != 0) {
			kitem_unref(items[i]);
		} else if (strcmp(ph, "Succeeded") == 0
		        || strcmp(ph, "Failed") == 0 || deleting(p)) {
			jc->succeeded += ph[0] == 'S';
			jc->failed += ph[0] == 'F';
			kitem_unref(items[i]);
		} else {
			jc->ready += strcmp(ph, "Running") == 0;
			jc->act[jc->active++] = items[i];
		}
	}
	free(items);
	free(prefix);
}

static void
jcount_fini(struct jcount *jc)
{
	for (int64_t i = 0; i < jc->active; i++) {
		kitem_unref(jc->act[i]);
	}
	free(jc->act);
}

static void
add_cond(json_object *st, const char *type, const char *reason,
        const char *msg, const char *now)
{
	json_object *cs = json_object_object_get(st, "conditions");
	json_object *o = json_object_new_object();

	if (!json_object_is_type(cs, json_type_array)) {
		cs = json_object_new_array();
		json_object_object_add(st, "conditions", cs);
	}
	set_str(o, "type", type);
	set_str(o, "status", "True");
	set_str(o, "lastProbeTime", now);
	set_str(o, "lastTransitionTime", now);
	set_str(o, "reason", reason);
	set_str(o, "message", msg);
	json_object_array_add(cs, o);
}

static void
set_count(json_object *st, const char *k, int64_t v)
{
	if (v > 0) {
		set_int(st, k, v);
	} else {
		json_object_object_del(st, k);
	}
}

/* A new Pod from the Job's template. */
static void
job_pod(struct kctrl *c, json_object *job)
{
	json_object *pod = json_object_new_object();
	json_object *md = copy(jx_get(job, "spec.template.metadata"));
	json_object *refs = json_object_new_array();
	json_object *ref = json_object_new_object();
	char *gen = xasprintf("%s-", mstr(job, "name"));
	struct kresp rs;

	if (md == NULL) {
		md = json_object_new_object();
	}
	json_object_object_del(md, "name");
	set_str(md, "generateName", gen);
	set_str(ref, "apiVersion", "batch/v1");
	set_str(ref, "kind", "Job");
	set_str(ref, "name", mstr(job, "name"));
	set_str(ref, "uid", mstr(job, "uid"));
	json_object_object_add(ref, "controller", json_object_new_boolean(1));
	json_object_object_add(
	        ref, "blockOwnerDeletion", json_object_new_boolean(1));
	json_object_array_add(refs, ref);
	json_object_object_add(md, "ownerReferences", refs);
	set_str(pod, "apiVersion", "v1");
	set_str(pod, "kind", "Pod");
	json_object_object_add(pod, "metadata", md);
	json_object_object_add(
	        pod, "spec", copy(jx_get(job, "spec.template.spec")));
	kresp_init(&rs);
	if (kwrite_create(
	            c->ks, c->pod_r, mstr(job, "namespace"), pod, NULL, &rs)
	        != 201) {
		log_warnx("job %s: cannot create its pod: %.*s",
		        mstr(job, "name"), (int)rs.body.len, rs.body.data);
	}
	kresp_fini(&rs);
	json_object_put(pod);
	free(gen);
}

/* ttlSecondsAfterFinished of a finished Job. */
static void
job_ttl(struct kctrl *c, struct kitem *it, struct jstate *js, int64_t now)
{
	int64_t ttl = get_int(it->obj, "spec.ttlSecondsAfterFinished", -1);
	json_object *cs = jx_get(it->obj, "status.conditions");

	if (ttl < 0) {
		js->wake_us = 0;
		return;
	}
	for (size_t i = 0; js->fin_us == 0 && i < alen(cs); i++) {
		timefmt_parse(jx_get_str(json_object_array_get_idx(cs, i),
		                      "lastTransitionTime"),
		        &js->fin_us);
	}
	if (js->fin_us == 0) {
		js->fin_us = now;
	}
	if (now < js->fin_us + ttl * 1000000) {
		js->wake_us = js->fin_us + ttl * 1000000;
		return;
	}
	log_debug("job %s: ttlSecondsAfterFinished passed", it->key);
	char *uid = xstrdup(js->uid);
	delete_object(c, c->job_r, it->obj, "Background");
	job_forget(c, uid);
	free(uid);
}

static void
job_fail(struct kctrl *c, json_object *st, struct jcount *jc,
        const char *reason, const char *msg, const char *now)
{
	for (int64_t i = 0; i < jc->active; i++) {
		delete_object(c, c->pod_r, jc->act[i]->obj, "Background");
	}
	add_cond(st, "FailureTarget", reason, msg, now);
	add_cond(st, "Failed", reason, msg, now);
	json_object_object_del(st, "active");
	set_int(st, "ready", 0);
}

/* Keeps the wanted number of pods; sets the next timer. */
static void
job_run(struct kctrl *c, json_object *job, struct jstate *js,
        struct jcount *jc, int64_t now)
{
	int64_t par = get_int(job, "spec.parallelism", 1);
	int64_t comp = get_int(job, "spec.completions", 1);
	int64_t ads = get_int(job, "spec.activeDeadlineSeconds", -1);
	int64_t want = par < comp - jc->succeeded ? par : comp - jc->succeeded;

	js->wake_us = ads >= 0 ? js->start_us + ads * 1000000 : 0;
	if (want <= jc->active) {
		return;
	}
	if (js->nfailed > 0 && now < js->fail_us + JOB_BACKOFF_US) {
		int64_t t = js->fail_us + JOB_BACKOFF_US;
		js->wake_us = js->wake_us == 0 || t < js->wake_us
		        ? t
		        : js->wake_us;
		return;
	}
	for (; jc->active < want; jc->active++) {
		job_pod(c, job);
	}
}

/* The next status of a running Job (st is modified). */
static void
job_status(struct kctrl *c, json_object *job, struct jstate *js,
        struct jcount *jc, json_object *st, int64_t now)
{
	int64_t comp = get_int(job, "spec.completions", 1);
	int64_t limit = get_int(job, "spec.backoffLimit", 6);
	int64_t ads = get_int(job, "spec.activeDeadlineSeconds", -1);
	char ts[TIMEFMT_RFC3339_LEN];

	rfc3339(now, ts);
	if (jc->succeeded >= comp) {
		add_cond(st, "SuccessCriteriaMet", "CompletionsReached",
		        "Reached expected number of succeeded pods", ts);
		add_cond(st, "Complete", "CompletionsReached",
		        "Reached expected number of succeeded pods", ts);
		set_str(st, "completionTime", ts);
		json_object_object_del(st, "active");
		set_int(st, "ready", 0);
		js->fin_us = now;
	} else if (jc->failed > limit) {
		job_fail(c, st, jc, "BackoffLimitExceeded",
		        "Job has reached the specified backoff limit", ts);
		js->fin_us = now;
	} else if (ads >= 0 && now >= js->start_us + ads * 1000000) {
		jc->failed += jc->active;
		job_fail(c, st, jc, "DeadlineExceeded",
		        "Job was active longer than specified deadline", ts);
		js->fin_us = now;
	} else {
		job_run(c, job, js, jc, now);
		set_count(st, "active", jc->active);
		set_int(st, "ready", jc->ready);
	}
	set_count(st, "succeeded", jc->succeeded);
	set_count(st, "failed", jc->failed);
}

static void
job_sync(struct kctrl *c, struct kitem *it, int64_t now)
{
	json_object *job = it->obj, *st;
	struct jstate *js;
	struct jcount jc;
	bool suspend = false;

	if (deleting(job) || mstr(job, "uid") == NULL) {
		return;
	}
	js = job_state(c, mstr(job, "uid"), it->key);
	if (has_cond(job, "Complete") || has_cond(job, "Failed")) {
		job_ttl(c, it, js, now);
		return;
	}
	jx_get_bool(job, "spec.suspend", &suspend);
	if (suspend) {
		return;
	}
	job_count(c, job, &jc);
	if (jc.failed > js->nfailed) {
		js->nfailed = jc.failed;
		js->fail_us = now;
	}
	st = copy(json_object_object_get(job, "status"));
	if (!json_object_is_type(st, json_type_object)) {
		json_object_put(st);
		st = json_object_new_object();
	}
	jc.failed = get_int(st, "failed", 0) > jc.failed
	        ? get_int(st, "failed", 0)
	        : jc.failed;
	if (js->start_us == 0
	        && timefmt_parse(jx_get_str(st, "startTime"), &js->start_us)
	                != 0) {
		char ts[TIMEFMT_RFC3339_LEN];
		js->start_us = now;
		rfc3339(now, ts);
		set_str(st, "startTime", ts);
	}
	job_status(c, job, js, &jc, st, now);
	if (!jx_equal(st, json_object_object_get(job, "status"))) {
		write_status(c, c->job_r, it, st);
	} else {
		json_object_put(st);
	}
	jcount_fini(&jc);
}

static void
jobs_run(struct kctrl *c, int64_t now)
{
	for (size_t i = 0; i < c->njobs; i++) {
		if (c->jobs[i]->wake_us != 0 && c->jobs[i]->wake_us <= now) {
			c->jobs[i]->wake_us = 0;
			mark_dirty(c, c->jobs[i]->key);
		}
	}
	char **keys = c->dirty;
	size_t n = c->ndirty;
	c->dirty = NULL;
	c->ndirty = 0;
	for (size_t i = 0; i < n; i++) {
		struct kitem *it = kstore_get(c->job_c, keys[i]);
		if (it != NULL) {
			job_sync(c, it, now);
		}
		free(keys[i]);
	}
	free(keys);
}

/* ---- deployments ------------------------------------------------------ */

/* A Deployment condition, keeping the times of an unchanged one. */
static json_object *
dep_cond(json_object *old, const char *type, const char *reason,
        const char *msg, const char *now)
{
	json_object *o = json_object_new_object();
	json_object *cs = jx_get(old, "status.conditions");
	const char *lut = now, *ltt = now;

	for (size_t i = 0; i < alen(cs); i++) {
		json_object *k = json_object_array_get_idx(cs, i);
		if (strcmp(jx_get_str(k, "type") ?: "", type) == 0
		        && strcmp(jx_get_str(k, "status") ?: "", "True") == 0
		        && strcmp(jx_get_str(k, "reason") ?: "", reason)
		                == 0) {
			lut = jx_get_str(k, "lastUpdateTime") ?: now;
			ltt = jx_get_str(k, "lastTransitionTime") ?: now;
		}
	}
	set_str(o, "type", type);
	set_str(o, "status", "True");
	set_str(o, "lastUpdateTime", lut);
	set_str(o, "lastTransitionTime", ltt);
	set_str(o, "reason", reason);
	set_str(o, "message", msg);
	return (o);
}

static void
dep_sync(struct kctrl *c, struct kitem *it)
{
	json_object *d = it->obj, *st, *cs;
	int64_t n = get_int(d, "spec.replicas", 1);
	char now[TIMEFMT_RFC3339_LEN];
	char *msg;

	if (deleting(d)) {
		return;
	}
	rfc3339(timefmt_now_us_real(), now);
	st = json_object_new_object();
	set_int(st, "observedGeneration",
	        get_int(d, "metadata.generation", 1));
	set_count(st, "replicas", n);
	set_count(st, "updatedReplicas", n);
	set_count(st, "readyReplicas", n);
	set_count(st, "availableReplicas", n);
	cs = json_object_new_array();
	json_object_array_add(cs,
	        dep_cond(d, "Available", "MinimumReplicasAvailable",
	                "Deployment has minimum availability.", now));
	msg = xasprintf("ReplicaSet \"%s\" has successfully progressed.",
	        mstr(d, "name"));
	json_object_array_add(cs,
	        dep_cond(
	                d, "Progressing", "NewReplicaSetAvailable", msg, now));
	free(msg);
	json_object_object_add(st, "conditions", cs);
	if (!jx_equal(st, json_object_object_get(d, "status"))) {
		write_status(c, c->dep_r, it, st);
	} else {
		json_object_put(st);
	}
}

/* ---- the loop --------------------------------------------------------- */

static bool
gc_relevant(const struct kstore_ev *ev)
{
	json_object *o = ev->new != NULL ? ev->new->obj : NULL;

	return (ev->type == KSTORE_DELETED
	        || (o != NULL && deleting(o)
	                && (has_finalizer(o, "foregroundDeletion")
	                        || has_finalizer(o, "orphan"))));
}

static void
pod_event(struct kctrl *c, const struct kstore_ev *ev, int64_t now_ms)
{
	struct kitem *its[2] = { ev->old, ev->new };
	size_t idx;

	if (c->loops & KCTRL_KUBELET) {
		if (ev->type == KSTORE_ADDED) {
			pod_track(c, ev->new, now_ms);
		} else if (ev->type == KSTORE_DELETED
		        && pod_find(
		                c, mstr(ev->old->obj, "uid") ?: "", &idx)) {
			pod_drop(c, idx);
		}
	}
	for (size_t i = 0; i < 2 && c->loops & KCTRL_JOB; i++) {
		const char *name = NULL;
		if (its[i] != NULL
		        && controller_of(its[i]->obj, "Job", &name) != NULL
		        && name != NULL) {
			char *key = xasprintf("%s/%s",
			        mstr(its[i]->obj, "namespace") ?: "", name);
			mark_dirty(c, key);
			free(key);
		}
	}
}

static void
on_event(struct kctrl *c, const struct kstore_ev *ev, int64_t now_ms)
{
	if (gc_relevant(ev)) {
		c->sweep = true;
	}
	if (ev->coll == c->pod_c) {
		pod_event(c, ev, now_ms);
	} else if (ev->coll == c->job_c && c->loops & KCTRL_JOB) {
		if (ev->type == KSTORE_DELETED) {
			job_forget(c, mstr(ev->old->obj, "uid"));
		} else {
			mark_dirty(c, ev->new->key);
		}
	} else if (ev->coll == c->dep_c && ev->type != KSTORE_DELETED
	        && c->loops & KCTRL_DEPLOYMENT) {
		struct kitem *it = kstore_get(c->dep_c, ev->new->key);
		if (it != NULL) {
			dep_sync(c, it);
		}
	}
}

/* Reads the events after the cursor (a bounded number of batches). */
static void
drain(struct kctrl *c, int64_t now_ms)
{
	struct kstore_ev evs[BATCH];

	for (int b = 0; b < MAX_BATCHES; b++) {
		int n = kstore_events(c->ks->st, c->cursor, evs, BATCH);
		if (n < 0) {
			log_warnx("kctrl: fell behind the event ring; resync");
			c->cursor = kstore_rv(c->ks->st);
			c->resync = true;
			return;
		}
		for (int i = 0; i < n; i++) {
			on_event(c, &evs[i], now_ms);
			c->cursor = evs[i].rv;
			kstore_ev_release(&evs[i]);
		}
		if (n < BATCH) {
			return;
		}
	}
}

/* Looks at every pod, Job and Deployment again. */
static void
resync(struct kctrl *c, int64_t now_ms)
{
	struct kstore_coll *colls[3] = { c->pod_c, c->job_c, c->dep_c };

	c->resync = false;
	c->sweep = true;
	for (size_t k = 0; k < 3; k++) {
		struct kitem **items = NULL;
		size_t n = 0;
		kstore_list(c->ks->st, colls[k], NULL, 0, &items, &n);
		for (size_t i = 0; i < n; i++) {
			if (k == 0 && c->loops & KCTRL_KUBELET) {
				pod_track(c, items[i], now_ms);
			} else if (k == 1 && c->loops & KCTRL_JOB) {
				mark_dirty(c, items[i]->key);
			} else if (k == 2 && c->loops & KCTRL_DEPLOYMENT) {
				dep_sync(c, items[i]);
			}
			kitem_unref(items[i]);
		}
		free(items);
	}
}

static void
step(struct kctrl *c)
{
	int64_t now_ms = timefmt_now_ms_mono();

	drain(c, now_ms);
	if (c->resync) {
		resync(c, now_ms);
	}
	if (c->loops & KCTRL_GC
	        && ((c->sweep && now_ms >= c->sweep_after)
	                || now_ms >= c->next_sweep)) {
		int64_t t0 = timefmt_now_ms_mono(), t1;
		c->sweep = false;
		c->next_sweep = now_ms + SWEEP_MS;
		gc_sweep(c);
		t1 = timefmt_now_ms_mono();
		/* A sweep visits every object under the store's lock: at
		 * 15,000 objects and a delete every few ms (the scale suite's
		 * burst) back-to-back sweeps held it most of the time and
		 * starved the API.  The next event-driven one waits 4 times as
		 * long as this one took (nothing, at the sizes tests use). */
		c->sweep_after = t1 + 4 * (t1 - t0);
	}
	if (c->loops & KCTRL_JOB) {
		jobs_run(c, timefmt_now_us_real());
	}
	if (c->loops & KCTRL_KUBELET) {
		pods_due(c, now_ms);
	}
}

static void *
run(void *arg)
{
	struct kctrl *c = arg;
	struct kstore *st = c->ks->st;

	while (!atomic_load(&c->stop)) {
		kstore_wait(st, c->cursor, &c->epoch,
		        timefmt_now_ms_mono() + TICK_MS);
		if (atomic_load(&c->stop)) {
			break;
		}
		kstore_lock(st);
		step(c);
		kstore_unlock(st);
	}
	return (NULL);
}

struct kctrl *
kctrl_start(struct ksrv *ks, unsigned loops)
{
	struct kctrl *c = xcalloc(1, sizeof(*c));

	c->ks = ks;
	c->loops = loops & KCTRL_ALL;
	pthread_mutex_init(&c->mu, NULL);
	c->rules_json = json_tokener_parse("{\"rules\":[]}");
	atomic_init(&c->stop, false);
	kstore_lock(ks->st);
	c->pod_r = kres_find(ks->reg, "", "v1", "pods");
	c->job_r = kres_find(ks->reg, "batch", "v1", "jobs");
	c->dep_r = kres_find(ks->reg, "apps", "v1", "deployments");
	c->pod_c = ksrv_coll(ks, c->pod_r);
	c->job_c = ksrv_coll(ks, c->job_r);
	c->dep_c = ksrv_coll(ks, c->dep_r);
	c->cursor = kstore_rv(ks->st);
	c->epoch = kstore_epoch(ks->st);
	c->resync = true;
	kstore_unlock(ks->st);
	if (c->loops != 0) {
		if (pthread_create(&c->thr, NULL, run, c) != 0) {
			fatalx("kctrl: cannot start the controller thread");
		}
		c->thread = true;
	}
	return (c);
}

void
kctrl_stop(struct kctrl *c)
{
	if (c == NULL) {
		return;
	}
	atomic_store(&c->stop, true);
	if (c->thread) {
		pthread_join(c->thr, NULL);
	}
	while (c->npods > 0) {
		pod_drop(c, 0);
	}
	free(c->pods);
	while (c->njobs > 0) {
		job_forget(c, c->jobs[0]->uid);
	}
	free(c->jobs);
	for (size_t i = 0; i < c->ndirty; i++) {
		free(c->dirty[i]);
	}
	free(c->dirty);
	rules_free(c->rules, c->nrules);
	json_object_put(c->rules_json);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
