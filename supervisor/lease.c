/*
 * lease.c: Lease leader election as a pure state machine (kube-api.md E.6).
 * Owns the elector's state: the configuration copy, the last Lease object
 * read or written, the observed record and its local observation time, the
 * step of the current attempt, the request in flight, leadership (epoch,
 * start, last successful renewal) and the release.  No I/O and no clock:
 * the supervisor's event loop performs the requests lease_next() asks for.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/errmsg.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/lease.h"

/* What lease_next() does once next_ms is reached. */
enum step {
	STEP_ATTEMPT, /* start an attempt: fast path or GET */
	STEP_GET,     /* GET at once (fast path failed) */
	STEP_CREATE,  /* POST (the GET answered 404) */
	STEP_PUT,     /* PUT the fetched object as mine */
	STEP_REL_PUT, /* release: PUT the empty holder */
	STEP_REL_GET, /* release: re-read after a conflict */
};

/* The request in flight. */
enum flight {
	FL_NONE,
	FL_GET,
	FL_FAST, /* fast-path PUT */
	FL_CREATE,
	FL_PUT, /* slow-path PUT */
	FL_REL_PUT,
};

struct lease {
	char *identity, *ns, *name;
	int64_t dur_ms, renew_ms, retry_ms;
	bool release_on_cancel;
	lease_rand_fn *rand;
	void *rand_arg;
	uint64_t rng;

	json_object *cached; /* last Lease read or written (owned) */
	char *rec;           /* canonical record of cached, NULL if none */
	char *holder;        /* its holderIdentity, "" when none */
	int64_t rec_dur_ms;  /* its leaseDurationSeconds, in ms */
	int64_t obs_ms;      /* local time rec last changed; -1 */

	enum step step;
	int64_t next_ms; /* when step is due */
	enum flight flight;
	int64_t sent_ms; /* send time of the request in flight */

	bool leader;
	int64_t renewed_ms; /* send time of the last successful write */
	int64_t since_ms;
	uint32_t epoch;

	bool releasing, done;
	int64_t rel_deadline_ms;
	uint64_t slowpath; /* renewals as leader through a GET */
};

int
lease_config_check(const struct lease_config *cfg, char *err, size_t errlen)
{
	if (cfg == NULL) {
		errmsg(err, errlen, "lease: no configuration");
		return (-1);
	}
	if (cfg->identity == NULL || cfg->identity[0] == '\0') {
		errmsg(err, errlen, "lease: identity must not be empty");
		return (-1);
	}
	if (cfg->ns == NULL || cfg->ns[0] == '\0' || cfg->name == NULL
	        || cfg->name[0] == '\0') {
		errmsg(err, errlen, "lease: namespace and name are required");
		return (-1);
	}
	if (cfg->lease_duration_ms <= 0 || cfg->renew_deadline_ms <= 0
	        || cfg->retry_period_ms <= 0) {
		errmsg(err, errlen,
		        "lease: lease duration, renew deadline and retry "
		        "period "
		        "must be > 0");
		return (-1);
	}
	if (cfg->lease_duration_ms <= cfg->renew_deadline_ms) {
		errmsg(err, errlen,
		        "lease: lease duration (%" PRId64
		        " ms) must be greater "
		        "than the renew deadline (%" PRId64 " ms)",
		        cfg->lease_duration_ms, cfg->renew_deadline_ms);
		return (-1);
	}
	/* renew > 1.2 * retry, exactly, in integers: 5 renew > 6 retry. */
	if (cfg->retry_period_ms > INT64_MAX / 6
	        || cfg->renew_deadline_ms > INT64_MAX / 5
	        || 5 * cfg->renew_deadline_ms <= 6 * cfg->retry_period_ms) {
		errmsg(err, errlen,
		        "lease: renew deadline (%" PRId64
		        " ms) must be greater "
		        "than 1.2 x the retry period (%" PRId64 " ms)",
		        cfg->renew_deadline_ms, cfg->retry_period_ms);
		return (-1);
	}
	if (cfg->lease_duration_ms < 1000) {
		errmsg(err, errlen,
		        "lease: lease duration must be at least 1s (it is "
		        "written in whole seconds)");
		return (-1);
	}
	return (0);
}

struct lease *
lease_new(const struct lease_config *cfg, char *err, size_t errlen)
{
	struct lease *l;

	if (lease_config_check(cfg, err, errlen) == -1) {
		return (NULL);
	}
	l = xcalloc(1, sizeof(*l));
	l->identity = xstrdup(cfg->identity);
	l->ns = xstrdup(cfg->ns);
	l->name = xstrdup(cfg->name);
	l->dur_ms = cfg->lease_duration_ms;
	l->renew_ms = cfg->renew_deadline_ms;
	l->retry_ms = cfg->retry_period_ms;
	l->release_on_cancel = cfg->release_on_cancel;
	l->rand = cfg->rand;
	l->rand_arg = cfg->rand_arg;
	l->rng = cfg->seed;
	l->holder = xstrdup("");
	l->obs_ms = -1;
	l->step = STEP_ATTEMPT;
	l->next_ms = INT64_MIN;
	l->since_ms = -1;
	return (l);
}

void
lease_free(struct lease *l)
{
	if (l == NULL) {
		return;
	}
	json_object_put(l->cached);
	free(l->rec);
	free(l->holder);
	free(l->identity);
	free(l->ns);
	free(l->name);
	free(l);
}

void
lease_action_fini(struct lease_action *act)
{
	free(act->body);
	act->body = NULL;
	act->act = LEASE_ACT_NONE;
	act->at_ms = 0;
	act->timeout_ms = 0;
}

static void
lose(struct lease *l, const char *why)
{
	log_warnx("lease %s/%s: leadership (epoch %" PRIu32 ") lost: %s",
	        l->ns, l->name, l->epoch, why);
	l->leader = false;
	l->since_ms = -1;
}

/* Leadership lapses renew_ms after the last successful write was sent. */
static void
expire(struct lease *l, int64_t now)
{
	if (l->leader && now - l->renewed_ms >= l->renew_ms) {
		lose(l, "not renewed within the renew deadline");
	}
}

/* A delay in [RP, (1 + LEASE_JITTER) RP). */
static int64_t
jittered(struct lease *l)
{
	double r;

	r = l->rand != NULL ? l->rand(l->rand_arg) : backoff_rand01(&l->rng);
	if (!(r >= 0.0)) {
		r = 0.0;
	}
	if (r >= 1.0) {
		r = 0.999999;
	}
	return (l->retry_ms + (int64_t)(r * LEASE_JITTER * l->retry_ms));
}

static int64_t
spec_int(json_object *obj, const char *path, int64_t max)
{
	int64_t v;

	if (jx_get_int(obj, path, &v) == -1 || v < 0) {
		return (0);
	}
	return (v > max ? max : v);
}

/* The record's fields as they came, in a fixed order, for byte-wise
 * comparison.  Caller frees with free(). */
static char *
record_of(json_object *obj)
{
	static const char *const keys[]
	        = { "holderIdentity", "leaseDurationSeconds", "acquireTime",
		          "renewTime", "leaseTransitions" };
	json_object *arr, *spec, *v;
	char *s;
	size_t i;

	spec = jx_get(obj, "spec");
	arr = json_object_new_array();
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = jx_get(spec, keys[i]);
		json_object_array_add(arr, json_object_get(v));
	}
	s = jx_to_string(arr);
	json_object_put(arr);
	return (s);
}

/* Keeps a copy of obj as the cached Lease and observes its record: the
 * observation time moves to now when the record changed, or always when
 * force (after our own write). */
static void
observe(struct lease *l, json_object *obj, int64_t now, bool force)
{
	const char *h;
	char *rec;

	json_object_put(l->cached);
	l->cached = jx_copy_strip(obj, "metadata.managedFields", NULL);
	rec = record_of(obj);
	if (force || l->rec == NULL || strcmp(rec, l->rec) != 0) {
		l->obs_ms = now;
	}
	free(l->rec);
	l->rec = rec;
	h = jx_get_str(obj, "spec.holderIdentity");
	free(l->holder);
	l->holder = xstrdup(h != NULL ? h : "");
	l->rec_dur_ms
	        = spec_int(obj, "spec.leaseDurationSeconds", INT32_MAX) * 1000;
}

/* The Lease is gone (404): forget it. */
static void
forget(struct lease *l)
{
	json_object_put(l->cached);
	l->cached = NULL;
	free(l->rec);
	l->rec = NULL;
	free(l->holder);
	l->holder = xstrdup("");
	l->rec_dur_ms = 0;
}

static bool
usable(json_object *obj)
{
	const char *rv;

	if (obj == NULL || !json_object_is_type(obj, json_type_object)) {
		return (false);
	}
	rv = jx_get_str(obj, "metadata.resourceVersion");
	return (rv != NULL && rv[0] != '\0');
}

static bool
mine(const struct lease *l)
{
	return (l->cached != NULL && strcmp(l->holder, l->identity) == 0);
}

/* The observation of the record is younger than its lease duration. */
static bool
observation_valid(const struct lease *l, int64_t now)
{
	return (l->obs_ms >= 0 && now - l->obs_ms < l->rec_dur_ms);
}

static void
schedule(struct lease *l, enum step step, int64_t at)
{
	l->step = step;
	l->next_ms = at;
}

/* The leader's next try: a retry period after the previous one was
 * sent, or at once when its answer came later (client-go's renew loop
 * polls on a timer that does not wait for the answer).  So a slow server
 * costs no renewal: with 4 s per request the leader renews every 4 s,
 * not every 6 s, and each answer comes well inside the deadline. */
static int64_t
next_renewal(const struct lease *l, int64_t now)
{
	int64_t at = l->sent_ms + l->retry_ms;

	return (at > now ? at : now);
}

static void
attempt_failed(struct lease *l, int64_t now)
{
	schedule(l, STEP_ATTEMPT,
	        l->leader ? next_renewal(l, now) : now + jittered(l));
}

/* The record is held by another: retry after the jittered period, or
 * as soon as our observation of it expires if that comes first, so a
 * holder that died is replaced within the lease duration plus the
 * observation lag, not plus another retry period (the handover
 * benchmark, docs/benchmarks.md). */
static void
held_by_other(struct lease *l, int64_t now)
{
	int64_t at = now + jittered(l), expiry = l->obs_ms + l->rec_dur_ms;

	if (expiry >= now && expiry < at) {
		at = expiry;
	}
	schedule(l, STEP_ATTEMPT, at);
}

/* Our write of holder=me succeeded: renewal or a new leadership. */
static void
write_ok(struct lease *l, int64_t now)
{
	if (l->leader) {
		l->renewed_ms = l->sent_ms;
	} else if (now - l->sent_ms < l->renew_ms) {
		l->leader = true;
		l->renewed_ms = l->sent_ms;
		l->since_ms = now;
		l->epoch++;
		log_info("lease %s/%s: leading as %s (epoch %" PRIu32 ")",
		        l->ns, l->name, l->identity, l->epoch);
	}
	schedule(l, STEP_ATTEMPT, next_renewal(l, now));
}

static char *
micro(int64_t now_us)
{
	char ts[TIMEFMT_RFC3339_MICRO_LEN];

	(void)timefmt_rfc3339_micro(now_us, ts);
	return (xstrdup(ts));
}

static json_object *
new_spec(const char *holder, int64_t dur_s, const char *acquire,
        const char *renew, int64_t transitions)
{
	json_object *spec;

	spec = json_object_new_object();
	json_object_object_add(
	        spec, "holderIdentity", json_object_new_string(holder));
	json_object_object_add(
	        spec, "leaseDurationSeconds", json_object_new_int64(dur_s));
	json_object_object_add(
	        spec, "acquireTime", json_object_new_string(acquire));
	json_object_object_add(
	        spec, "renewTime", json_object_new_string(renew));
	json_object_object_add(
	        spec, "leaseTransitions", json_object_new_int64(transitions));
	return (spec);
}

static char *
create_body(struct lease *l, int64_t now_us)
{
	json_object *o, *meta;
	char *now, *s;

	now = micro(now_us);
	o = json_object_new_object();
	json_object_object_add(o, "apiVersion",
	        json_object_new_string("coordination.k8s.io/v1"));
	json_object_object_add(o, "kind", json_object_new_string("Lease"));
	meta = json_object_new_object();
	json_object_object_add(meta, "name", json_object_new_string(l->name));
	json_object_object_add(
	        meta, "namespace", json_object_new_string(l->ns));
	json_object_object_add(o, "metadata", meta);
	json_object_object_add(o, "spec",
	        new_spec(l->identity, l->dur_ms / 1000, now, now, 0));
	s = jx_to_string(o);
	json_object_put(o);
	free(now);
	return (s);
}

/* The cached object with its spec replaced: as mine (renew or take over)
 * or, when release, with the empty holder. */
static char *
update_body(struct lease *l, int64_t now_us, bool release)
{
	json_object *o, *spec;
	const char *acq;
	char *now, *s;
	int64_t trans;

	now = micro(now_us);
	trans = spec_int(l->cached, "spec.leaseTransitions", INT32_MAX);
	acq = jx_get_str(l->cached, "spec.acquireTime");
	if (release) {
		spec = new_spec("", 1, now, now, trans);
	} else if (mine(l)) {
		spec = new_spec(l->identity, l->dur_ms / 1000,
		        acq != NULL ? acq : now, now, trans);
	} else {
		spec = new_spec(l->identity, l->dur_ms / 1000, now, now,
		        trans < INT32_MAX ? trans + 1 : trans);
	}
	o = jx_copy(l->cached);
	json_object_object_add(o, "spec", spec);
	s = jx_to_string(o);
	json_object_put(o);
	free(now);
	return (s);
}

static void
emit(struct lease *l, struct lease_action *out, enum lease_act act,
        enum flight fl, char *body, int64_t now)
{
	out->act = act;
	out->at_ms = now;
	out->timeout_ms = l->renew_ms;
	out->body = body;
	l->flight = fl;
	l->sent_ms = now;
}

static void
release_next(struct lease *l, int64_t now_ms, int64_t now_us,
        struct lease_action *out)
{
	if (l->done || now_ms >= l->rel_deadline_ms) {
		l->done = true;
		out->act = LEASE_ACT_DONE;
	} else if (l->flight != FL_NONE || now_ms < l->next_ms) {
		out->at_ms = l->flight != FL_NONE
		        ? l->rel_deadline_ms
		        : (l->next_ms < l->rel_deadline_ms
		                        ? l->next_ms
		                        : l->rel_deadline_ms);
	} else if (l->step == STEP_REL_GET) {
		emit(l, out, LEASE_ACT_GET, FL_GET, NULL, now_ms);
	} else if (mine(l)) {
		emit(l, out, LEASE_ACT_UPDATE, FL_REL_PUT,
		        update_body(l, now_us, true), now_ms);
	} else {
		l->done = true;
		out->act = LEASE_ACT_DONE;
	}
}

/* When to be called back while waiting: the step, capped by the moment
 * leadership would lapse. */
static int64_t
wake_at(const struct lease *l)
{
	int64_t at;

	at = l->flight != FL_NONE ? INT64_MAX : l->next_ms;
	if (l->leader && l->renewed_ms + l->renew_ms < at) {
		at = l->renewed_ms + l->renew_ms;
	}
	return (at);
}

static void
step_now(struct lease *l, int64_t now_ms, int64_t now_us,
        struct lease_action *out)
{
	switch (l->step) {
	case STEP_ATTEMPT:
		if (mine(l) && observation_valid(l, now_ms)) {
			emit(l, out, LEASE_ACT_UPDATE, FL_FAST,
			        update_body(l, now_us, false), now_ms);
			return;
		}
		/* FALLTHROUGH */
	case STEP_GET:
	default:
		emit(l, out, LEASE_ACT_GET, FL_GET, NULL, now_ms);
		return;
	case STEP_CREATE:
		emit(l, out, LEASE_ACT_CREATE, FL_CREATE,
		        create_body(l, now_us), now_ms);
		return;
	case STEP_PUT:
		l->slowpath += mine(l);
		emit(l, out, LEASE_ACT_UPDATE, FL_PUT,
		        update_body(l, now_us, false), now_ms);
		return;
	}
}

void
lease_next(struct lease *l, int64_t now_ms, int64_t now_us,
        struct lease_action *out)
{
	out->act = LEASE_ACT_NONE;
	out->at_ms = INT64_MAX;
	out->timeout_ms = 0;
	out->body = NULL;
	expire(l, now_ms);
	if (l->releasing) {
		release_next(l, now_ms, now_us, out);
	} else if (l->flight != FL_NONE || now_ms < l->next_ms) {
		out->at_ms = wake_at(l);
	} else {
		step_now(l, now_ms, now_us, out);
	}
}

static void
release_on_get(
        struct lease *l, enum lease_result r, json_object *obj, int64_t now)
{
	if (r == LEASE_RES_OK) {
		observe(l, obj, now, false);
		schedule(l, STEP_REL_PUT, now);
	} else if (r == LEASE_RES_NOTFOUND) {
		forget(l);
		schedule(l, STEP_REL_PUT, now);
	} else {
		schedule(l, STEP_REL_GET, now + l->retry_ms);
	}
}

/* After reading the record: wait while another holds it, else write. */
static void
judge(struct lease *l, int64_t now)
{
	if (l->holder[0] != '\0' && !mine(l) && observation_valid(l, now)) {
		held_by_other(l, now);
	} else {
		schedule(l, STEP_PUT, now);
	}
}

int
lease_on_get(
        struct lease *l, enum lease_result r, json_object *obj, int64_t now_ms)
{
	if (l->flight != FL_GET) {
		return (-1);
	}
	l->flight = FL_NONE;
	expire(l, now_ms);
	if (r == LEASE_RES_OK && !usable(obj)) {
		r = LEASE_RES_ERROR;
	}
	if (l->releasing) {
		release_on_get(l, r, obj, now_ms);
	} else if (r == LEASE_RES_NOTFOUND) {
		if (l->leader) {
			lose(l, "the Lease is gone");
		}
		forget(l);
		schedule(l, STEP_CREATE, now_ms);
	} else if (r != LEASE_RES_OK) {
		attempt_failed(l, now_ms);
	} else {
		observe(l, obj, now_ms, false);
		if (l->leader && !mine(l)) {
			lose(l, "the Lease names another holder");
		}
		judge(l, now_ms);
	}
	return (0);
}

/* A write failed (conflict or error). */
static void
write_failed(struct lease *l, enum flight fl, enum lease_result r, int64_t now)
{
	if (fl == FL_REL_PUT) {
		if (r == LEASE_RES_CONFLICT) {
			schedule(l, STEP_REL_GET, now);
		} else {
			schedule(l, STEP_REL_PUT, now + l->retry_ms);
		}
	} else if (l->releasing) {
		schedule(l, STEP_REL_PUT, now);
	} else if (fl == FL_FAST) {
		schedule(l, STEP_GET, now); /* fall through to the slow path */
	} else {
		attempt_failed(l, now);
	}
}

int
lease_on_write(
        struct lease *l, enum lease_result r, json_object *obj, int64_t now_ms)
{
	enum flight fl = l->flight;

	if (fl != FL_FAST && fl != FL_CREATE && fl != FL_PUT
	        && fl != FL_REL_PUT) {
		return (-1);
	}
	l->flight = FL_NONE;
	expire(l, now_ms);
	if (r == LEASE_RES_OK && !usable(obj)) {
		r = LEASE_RES_ERROR;
	}
	if (r != LEASE_RES_OK) {
		write_failed(l, fl, r, now_ms);
		return (0);
	}
	observe(l, obj, now_ms, true);
	if (fl == FL_REL_PUT) {
		log_info("lease %s/%s: released", l->ns, l->name);
		l->done = true;
	} else if (l->releasing) {
		schedule(l, STEP_REL_PUT, now_ms);
	} else {
		write_ok(l, now_ms);
	}
	return (0);
}

void
lease_release(struct lease *l, int64_t now_ms, int64_t now_us,
        struct lease_action *out)
{
	expire(l, now_ms);
	if (!l->releasing) {
		if (l->leader) {
			log_info("lease %s/%s: stepping down (epoch %" PRIu32
			         ")",
			        l->ns, l->name, l->epoch);
		}
		l->releasing = true;
		l->leader = false;
		l->since_ms = -1;
		l->rel_deadline_ms = now_ms + l->renew_ms;
		l->done = !l->release_on_cancel;
		schedule(l, STEP_REL_PUT, now_ms);
	}
	lease_next(l, now_ms, now_us, out);
}

bool
lease_on_watch(struct lease *l, json_object *obj, int64_t now_ms)
{
	expire(l, now_ms);
	if (l->leader || l->releasing || l->flight != FL_NONE
	        || l->step != STEP_ATTEMPT) {
		return (false);
	}
	if (obj == NULL) {
		forget(l);
		schedule(l, STEP_CREATE, now_ms);
	} else if (!usable(obj)) {
		return (false);
	} else {
		observe(l, obj, now_ms, false);
		judge(l, now_ms);
	}
	return (true);
}

bool
lease_is_leader(struct lease *l, int64_t now_ms)
{
	expire(l, now_ms);
	return (l->leader);
}

int64_t
lease_valid_until(struct lease *l, int64_t now_ms)
{
	expire(l, now_ms);
	return (l->leader ? l->renewed_ms + l->renew_ms : -1);
}

uint32_t
lease_epoch(const struct lease *l)
{
	return (l->epoch);
}

const char *
lease_holder(const struct lease *l)
{
	return (l->holder);
}

int64_t
lease_leader_since(const struct lease *l)
{
	return (l->leader ? l->since_ms : -1);
}

uint64_t
lease_slowpath(const struct lease *l)
{
	return (l->slowpath);
}

int64_t
lease_observed_time(const struct lease *l)
{
	return (l->obs_ms);
}
