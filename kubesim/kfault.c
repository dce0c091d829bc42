/*
 * kfault.c: kubesim's fault injection.  Owns the rule list (verbs,
 * resource, action, rate, count, counters), the --fault spec parser, the
 * JSON form of the admin endpoint /_kubesim/faults, the request filter
 * that injects errors, delays and hangs, and the connection-refusal
 * window of the accept hook.  One mutex guards everything; it is never
 * held while a request sleeps (delay) and a hang waits on a condition
 * variable that removing rules signals.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/backoff.h"
#include "common/buf.h"
#include "common/duration.h"
#include "common/errmsg.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/kfault.h"

#define DEFAULT_SEED    0x6b756265u /* "kube" */
#define DEFAULT_HANG_MS 60000
#define MAX_DELAY_MS    600000
#define MAX_RETRY_AFTER 3600
#define MAX_REFUSE_S    3600

enum action {
	ACT_NONE = 0,
	ACT_ERROR,
	ACT_DELAY,
	ACT_HANG,
};

static const char *const verb_names[] = { "get", "list", "watch", "create",
	"update", "patch", "delete", "deletecollection" };
#define NVERBS (sizeof(verb_names) / sizeof(verb_names[0]))

struct rule {
	int id;
	unsigned verbs; /* bit i: verb_names[i]; 0: any verb */
	char *resource; /* NULL: any resource */
	enum action act;
	int code;        /* ACT_ERROR */
	int retry_after; /* seconds, 0: none */
	int64_t delay_ms;
	int64_t hang_ms; /* ACT_HANG: the bound */
	double rate;
	uint64_t count; /* 0: unlimited */
	uint64_t matched;
	uint64_t injected;
};

struct kfault {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* removals */
	struct rule **rules;
	size_t nrules;
	int next_id;
	uint64_t seed;
	uint64_t rnd;
	int64_t refuse_until; /* monotonic ms */
};

/* What the filter decided, copied out of the rule under the lock. */
struct shot {
	int id;
	enum action act;
	int code;
	int retry_after;
	int64_t delay_ms;
	int64_t hang_ms;
};

struct kfault *
kfault_new(void)
{
	struct kfault *f = xcalloc(1, sizeof(*f));
	pthread_condattr_t ca;

	pthread_mutex_init(&f->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cv, &ca);
	pthread_condattr_destroy(&ca);
	f->next_id = 1;
	f->seed = DEFAULT_SEED;
	f->rnd = DEFAULT_SEED;
	return (f);
}

static void
rule_free(struct rule *r)
{
	if (r != NULL) {
		free(r->resource);
		free(r);
	}
}

void
kfault_free(struct kfault *f)
{
	if (f == NULL) {
		return;
	}
	for (size_t i = 0; i < f->nrules; i++) {
		rule_free(f->rules[i]);
	}
	free(f->rules);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* ---- rules: validation and the two input forms ---- */

static int
verb_bit(const char *v, size_t n, unsigned *bits)
{
	if ((n == 3 && strncmp(v, "any", 3) == 0) || (n == 1 && v[0] == '*')) {
		*bits = ~0u;
		return (0);
	}
	for (size_t i = 0; i < NVERBS; i++) {
		if (strlen(verb_names[i]) == n
		        && strncmp(v, verb_names[i], n) == 0) {
			*bits |= 1u << i;
			return (0);
		}
	}
	return (-1);
}

static int
code_reason(int code, const char **reason)
{
	switch (code) {
	case 500:
		*reason = "InternalError";
		return (0);
	case 503:
		*reason = "ServiceUnavailable";
		return (0);
	case 429:
		*reason = "TooManyRequests";
		return (0);
	case 504:
		*reason = "Timeout";
		return (0);
	default:
		return (-1);
	}
}

/* Completes and checks a parsed rule. */
static int
rule_check(struct rule *r, int nactions, char *err, size_t errlen)
{
	const char *reason;

	if (nactions != 1) {
		errmsg(err, errlen,
		        "want exactly one action (code=, delay= or "
		        "hang), got %d",
		        nactions);
		return (-1);
	}
	if (r->act == ACT_ERROR && code_reason(r->code, &reason) != 0) {
		errmsg(err, errlen, "code %d: want 500, 503, 429 or 504",
		        r->code);
		return (-1);
	}
	if (r->retry_after != 0 && r->act == ACT_ERROR && r->code != 429
	        && r->code != 503) {
		errmsg(err, errlen, "retry-after needs code 429 or 503");
		return (-1);
	}
	if (r->retry_after != 0 && r->act != ACT_ERROR) {
		errmsg(err, errlen, "retry-after needs an error code");
		return (-1);
	}
	if (r->act == ACT_ERROR && r->code == 429 && r->retry_after == 0) {
		r->retry_after = 1;
	}
	if ((r->verbs & ((1u << NVERBS) - 1)) == ((1u << NVERBS) - 1)) {
		r->verbs = 0;
	}
	return (0);
}

static int
parse_uint(const char *v, int64_t max, int64_t *out)
{
	char *end;
	long long n;

	if (v[0] < '0' || v[0] > '9') {
		return (-1);
	}
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0 || n > max) {
		return (-1);
	}
	*out = n;
	return (0);
}

static int
parse_rate(const char *v, double *out)
{
	char *end;
	double d;

	if ((v[0] < '0' || v[0] > '9') && v[0] != '.') {
		return (-1);
	}
	d = strtod(v, &end);
	if (*end != '\0' || !(d >= 0.0 && d <= 1.0)) {
		return (-1);
	}
	*out = d;
	return (0);
}

/* A Go duration ("200ms", "1.5s") or a bare count of milliseconds. */
static int
parse_ms(const char *v, int64_t max, int64_t *out)
{
	int64_t ns;

	if (parse_uint(v, max, out) == 0) {
		return (0);
	}
	if (duration_parse(v, &ns) != 0 || ns < 0 || ns / 1000000 > max) {
		return (-1);
	}
	*out = ns / 1000000;
	return (0);
}

static int
spec_verbs(struct rule *r, const char *v)
{
	if (v[0] == '\0') {
		return (-1);
	}
	while (*v != '\0') {
		size_t n = strcspn(v, "|");

		if (n == 0 || verb_bit(v, n, &r->verbs) != 0) {
			return (-1);
		}
		v += n;
		if (*v == '|') {
			v++;
			if (*v == '\0') {
				return (-1);
			}
		}
	}
	return (0);
}

static int
spec_resource(struct rule *r, const char *v)
{
	if (v[0] == '\0'
	        || strspn(v,
	                   "abcdefghijklmnopqrstuvwxyz0123456789"
	                   "-.*")
	                != strlen(v)) {
		return (-1);
	}
	if (strcmp(v, "*") != 0 && strcmp(v, "any") != 0) {
		free(r->resource);
		r->resource = xstrdup(v);
	}
	return (0);
}

/* One key=value item of a spec (v NULL for a bare word). */
static int
spec_item(struct rule *r, const char *k, const char *v, int *nact)
{
	int64_t n;

	if (strcmp(k, "hang") == 0) {
		(*nact)++;
		r->act = ACT_HANG;
		return (v == NULL ? 0 : parse_ms(v, 86400000, &r->hang_ms));
	}
	if (v == NULL) {
		return (-1);
	}
	if (strcmp(k, "verb") == 0 || strcmp(k, "verbs") == 0) {
		return (spec_verbs(r, v));
	} else if (strcmp(k, "resource") == 0) {
		return (spec_resource(r, v));
	} else if (strcmp(k, "code") == 0) {
		(*nact)++;
		r->act = ACT_ERROR;
		return (parse_uint(v, 999, &n) == 0 ? (r->code = (int)n, 0)
		                                    : -1);
	} else if (strcmp(k, "retry-after") == 0) {
		return (parse_uint(v, MAX_RETRY_AFTER, &n) == 0 && n > 0
		                ? (r->retry_after = (int)n, 0)
		                : -1);
	} else if (strcmp(k, "delay") == 0) {
		(*nact)++;
		r->act = ACT_DELAY;
		return (parse_ms(v, MAX_DELAY_MS, &r->delay_ms));
	} else if (strcmp(k, "rate") == 0) {
		return (parse_rate(v, &r->rate));
	} else if (strcmp(k, "count") == 0) {
		return (parse_uint(v, INT64_MAX, &n) == 0
		                ? (r->count = (uint64_t)n, 0)
		                : -1);
	}
	return (-2);
}

static void
rule_defaults(struct rule *r)
{
	memset(r, 0, sizeof(*r));
	r->rate = 1.0;
	r->hang_ms = DEFAULT_HANG_MS;
}

/* Parses spec into r (which the caller frees on failure too). */
static int
spec_parse(struct rule *r, const char *spec, char *err, size_t errlen)
{
	char *s = xstrdup(spec), *save = NULL, *item;
	int nact = 0, rc = 0;

	for (item = strtok_r(s, ",", &save); item != NULL && rc == 0;
	        item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (eq != NULL) {
			*eq = '\0';
		}
		rc = spec_item(r, item, eq != NULL ? eq + 1 : NULL, &nact);
		if (rc == -2) {
			errmsg(err, errlen, "unknown key \"%s\"", item);
		} else if (rc != 0) {
			errmsg(err, errlen, "bad value for \"%s\"%s%s", item,
			        eq != NULL ? ": " : " (want key=value)",
			        eq != NULL ? eq + 1 : "");
		}
	}
	free(s);
	if (rc != 0) {
		return (-1);
	}
	return (rule_check(r, nact, err, errlen));
}

/* Takes r; returns its id. */
static int
rule_add(struct kfault *f, struct rule *r)
{
	int id;

	pthread_mutex_lock(&f->mu);
	id = r->id = f->next_id++;
	f->rules = xreallocarray(f->rules, f->nrules + 1, sizeof(*f->rules));
	f->rules[f->nrules++] = r;
	pthread_mutex_unlock(&f->mu);
	return (id);
}

static int
seed_spec(struct kfault *f, const char *spec, char *err, size_t errlen)
{
	int64_t n;

	if (parse_uint(spec + 5, INT64_MAX, &n) != 0) {
		errmsg(err, errlen, "seed: want a non-negative integer");
		return (-1);
	}
	pthread_mutex_lock(&f->mu);
	f->seed = f->rnd = (uint64_t)n;
	pthread_mutex_unlock(&f->mu);
	return (0);
}

int
kfault_add_spec(struct kfault *f, const char *spec, char *err, size_t errlen)
{
	struct rule *r;

	errmsg(err, errlen, "%s", "");
	if (spec == NULL || spec[0] == '\0') {
		errmsg(err, errlen, "empty fault spec");
		return (-1);
	}
	if (strncmp(spec, "seed=", 5) == 0) {
		return (seed_spec(f, spec, err, errlen));
	}
	r = xmalloc(sizeof(*r));
	rule_defaults(r);
	if (spec_parse(r, spec, err, errlen) != 0) {
		rule_free(r);
		return (-1);
	}
	rule_add(f, r);
	return (0);
}

/* ---- the filter ---- */

static bool
rule_matches(const struct rule *r, const char *verb, const char *plural)
{
	bool vok = r->verbs == 0;

	if (r->count != 0 && r->injected >= r->count) {
		return (false); /* retired */
	}
	for (size_t i = 0; i < NVERBS && !vok; i++) {
		vok = (r->verbs & (1u << i)) != 0
		        && strcmp(verb, verb_names[i]) == 0;
	}
	return (vok
	        && (r->resource == NULL || strcmp(r->resource, plural) == 0));
}

static bool
roll(struct kfault *f, double rate)
{
	if (rate >= 1.0) {
		return (true);
	}
	if (rate <= 0.0) {
		return (false);
	}
	return (backoff_rand01(&f->rnd) < rate);
}

/* Finds the first rule that injects on this request; under the lock. */
static bool
pick(struct kfault *f, const char *verb, const char *plural, struct shot *s)
{
	for (size_t i = 0; i < f->nrules; i++) {
		struct rule *r = f->rules[i];

		if (!rule_matches(r, verb, plural)) {
			continue;
		}
		r->matched++;
		if (!roll(f, r->rate)) {
			continue;
		}
		r->injected++;
		*s = (struct shot) { .id = r->id,
			.act = r->act,
			.code = r->code,
			.retry_after = r->retry_after,
			.delay_ms = r->delay_ms,
			.hang_ms = r->hang_ms };
		return (true);
	}
	return (false);
}

static struct rule *
find(struct kfault *f, int id, size_t *idx)
{
	for (size_t i = 0; i < f->nrules; i++) {
		if (f->rules[i]->id == id) {
			if (idx != NULL) {
				*idx = i;
			}
			return (f->rules[i]);
		}
	}
	return (NULL);
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts
	        = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) { }
}

/* Waits until rule id is removed or ms pass.  True when it was removed. */
static bool
hang(struct kfault *f, int id, int64_t ms)
{
	int64_t end = timefmt_now_ms_mono() + ms;
	struct timespec ts
	        = { .tv_sec = end / 1000, .tv_nsec = (end % 1000) * 1000000 };
	bool removed;

	pthread_mutex_lock(&f->mu);
	while (find(f, id, NULL) != NULL && timefmt_now_ms_mono() < end) {
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	removed = find(f, id, NULL) == NULL;
	pthread_mutex_unlock(&f->mu);
	return (removed);
}

static void
inject_error(const struct shot *s, const char *verb, const char *plural,
        struct kresp *rs)
{
	const char *reason = "InternalError";
	json_object *st;
	char *msg;

	code_reason(s->code, &reason);
	if (s->code == 429) {
		msg = xasprintf("Too many requests, please try again later. "
		                "(kubesim fault rule %d)",
		        s->id);
	} else {
		msg = xasprintf("kubesim fault rule %d: injected %d for %s %s",
		        s->id, s->code, verb, plural);
	}
	st = kstatus_new(s->code, reason, msg);
	if (s->retry_after > 0) {
		kstatus_retry(st, s->retry_after);
	}
	kresp_status(rs, st);
	free(msg);
}

bool
kfault_filter(void *arg, const struct kreq *rq, const char *verb,
        const char *plural, struct kresp *rs)
{
	struct kfault *f = arg;
	struct shot s;
	bool hit, removed;

	(void)rq;
	pthread_mutex_lock(&f->mu);
	hit = pick(f, verb, plural, &s);
	pthread_mutex_unlock(&f->mu);
	if (!hit) {
		return (false);
	}
	switch (s.act) {
	case ACT_ERROR:
		log_info("fault: rule %d: %s %s: error %d", s.id, verb, plural,
		        s.code);
		inject_error(&s, verb, plural, rs);
		return (true);
	case ACT_DELAY:
		log_info("fault: rule %d: %s %s: delay %" PRId64 "ms", s.id,
		        verb, plural, s.delay_ms);
		sleep_ms(s.delay_ms);
		return (false);
	default:
		log_info("fault: rule %d: %s %s: hang (up to %" PRId64 "ms)",
		        s.id, verb, plural, s.hang_ms);
		removed = hang(f, s.id, s.hang_ms);
		log_info("fault: rule %d: hung %s %s released (%s)", s.id,
		        verb, plural,
		        removed ? "rule removed" : "bound reached");
		kresp_error(rs, 504, "Timeout",
		        "kubesim fault rule %d: the request hung and timed "
		        "out",
		        s.id);
		return (true);
	}
}

bool
kfault_accept(void *arg)
{
	struct kfault *f = arg;
	int64_t until;

	pthread_mutex_lock(&f->mu);
	until = f->refuse_until;
	pthread_mutex_unlock(&f->mu);
	if (until != 0 && timefmt_now_ms_mono() < until) {
		log_info("fault: refusing a new connection");
		return (false);
	}
	return (true);
}

/* ---- admin: JSON form of rules ---- */

static json_object *
rule_json(const struct rule *r)
{
	json_object *o = json_object_new_object(),
	            *v = json_object_new_array();

	json_object_object_add(o, "id", json_object_new_int(r->id));
	for (size_t i = 0; i < NVERBS; i++) {
		if (r->verbs == 0 || (r->verbs & (1u << i)) != 0) {
			json_object_array_add(
			        v, json_object_new_string(verb_names[i]));
		}
	}
	json_object_object_add(o, "verbs", v);
	json_object_object_add(o, "resource",
	        json_object_new_string(r->resource ? r->resource : "*"));
	json_object_object_add(o, "code",
	        json_object_new_int(r->act == ACT_ERROR ? r->code : 0));
	json_object_object_add(o, "rate", json_object_new_double(r->rate));
	json_object_object_add(
	        o, "count", json_object_new_int64((int64_t)r->count));
	json_object_object_add(
	        o, "retryAfter", json_object_new_int(r->retry_after));
	json_object_object_add(o, "delayMs",
	        json_object_new_int64(r->act == ACT_DELAY ? r->delay_ms : 0));
	json_object_object_add(
	        o, "hang", json_object_new_boolean(r->act == ACT_HANG));
	json_object_object_add(o, "hangMs", json_object_new_int64(r->hang_ms));
	json_object_object_add(
	        o, "matched", json_object_new_int64((int64_t)r->matched));
	json_object_object_add(
	        o, "injected", json_object_new_int64((int64_t)r->injected));
	json_object_object_add(o, "retired",
	        json_object_new_boolean(
	                r->count != 0 && r->injected >= r->count));
	return (o);
}

static int
json_verbs(struct rule *r, json_object *v)
{
	size_t n;

	if (!json_object_is_type(v, json_type_array)) {
		return (-1);
	}
	n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		const char *s = json_object_get_string(e);

		if (!json_object_is_type(e, json_type_string)
		        || verb_bit(s, strlen(s), &r->verbs) != 0) {
			return (-1);
		}
	}
	return (0);
}

static int
json_int(json_object *v, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t n;

	if (!json_object_is_type(v, json_type_int)) {
		return (-1);
	}
	n = json_object_get_int64(v);
	if (n < lo || n > hi) {
		return (-1);
	}
	*out = n;
	return (0);
}

/* The action members: code, delayMs, hang.  -2 for other keys. */
static int
json_action(struct rule *r, const char *k, json_object *v, int *nact)
{
	int64_t n = 0;
	bool b;

	if (strcmp(k, "code") == 0) {
		if (json_int(v, 0, 999, &n) != 0) {
			return (-1);
		}
		*nact += n != 0;
		r->act = n != 0 ? ACT_ERROR : r->act;
		r->code = (int)n;
	} else if (strcmp(k, "delayMs") == 0) {
		if (json_int(v, 0, MAX_DELAY_MS, &n) != 0) {
			return (-1);
		}
		*nact += n != 0;
		r->act = n != 0 ? ACT_DELAY : r->act;
		r->delay_ms = n;
	} else if (strcmp(k, "hang") == 0) {
		if (!json_object_is_type(v, json_type_boolean)) {
			return (-1);
		}
		b = json_object_get_boolean(v);
		*nact += b;
		r->act = b ? ACT_HANG : r->act;
	} else {
		return (-2);
	}
	return (0);
}

/* One member of the JSON rule: 0, -1 for a bad value, -2 if unknown. */
static int
json_member(struct rule *r, const char *k, json_object *v, int *nact)
{
	int64_t n = 0;

	if (strcmp(k, "verbs") == 0) {
		return (json_verbs(r, v));
	} else if (strcmp(k, "resource") == 0) {
		return (json_object_is_type(v, json_type_string)
		                ? spec_resource(r, json_object_get_string(v))
		                : -1);
	} else if (strcmp(k, "rate") == 0) {
		if (!json_object_is_type(v, json_type_int)
		        && !json_object_is_type(v, json_type_double)) {
			return (-1);
		}
		r->rate = json_object_get_double(v);
		return (r->rate >= 0.0 && r->rate <= 1.0 ? 0 : -1);
	} else if (strcmp(k, "count") == 0) {
		if (json_int(v, 0, INT64_MAX, &n) != 0) {
			return (-1);
		}
		r->count = (uint64_t)n;
	} else if (strcmp(k, "retryAfter") == 0) {
		if (json_int(v, 0, MAX_RETRY_AFTER, &n) != 0) {
			return (-1);
		}
		r->retry_after = (int)n;
	} else if (strcmp(k, "hangMs") == 0) {
		return (json_int(v, 1, 86400000, &r->hang_ms));
	} else {
		return (json_action(r, k, v, nact));
	}
	return (0);
}

static int
json_rule(struct rule *r, json_object *o, char *err, size_t errlen)
{
	int nact = 0, rc;

	if (!json_object_is_type(o, json_type_object)) {
		errmsg(err, errlen, "want a JSON object");
		return (-1);
	}
	json_object_object_foreach(o, k, v)
	{
		rc = json_member(r, k, v, &nact);
		if (rc == -2) {
			errmsg(err, errlen, "unknown field \"%s\"", k);
			return (-1);
		} else if (rc != 0) {
			errmsg(err, errlen, "bad value for \"%s\"", k);
			return (-1);
		}
	}
	return (rule_check(r, nact, err, errlen));
}

/* ---- admin endpoint ---- */

static void
admin_list(struct kfault *f, struct kresp *rs)
{
	json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();
	int64_t now = timefmt_now_ms_mono(), left;

	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->nrules; i++) {
		json_object_array_add(a, rule_json(f->rules[i]));
	}
	left = f->refuse_until > now ? f->refuse_until - now : 0;
	json_object_object_add(
	        o, "seed", json_object_new_int64((int64_t)f->seed));
	pthread_mutex_unlock(&f->mu);
	json_object_object_add(o, "rules", a);
	json_object_object_add(o, "refusingMs", json_object_new_int64(left));
	kresp_json(rs, 200, o);
	json_object_put(o);
}

static void
admin_add(struct kfault *f, const struct kreq *rq, struct kresp *rs)
{
	char err[256] = "";
	json_object *o = jx_parse(rq->body, rq->body_len, 0, err, sizeof(err));
	struct rule *r = xmalloc(sizeof(*r));
	int id;

	rule_defaults(r);
	if (o == NULL || json_rule(r, o, err, sizeof(err)) != 0) {
		kresp_error(rs, 400, "BadRequest", "fault rule: %s", err);
		rule_free(r);
		json_object_put(o);
		return;
	}
	json_object_put(o);
	id = rule_add(f, r);
	log_info("fault: rule %d added", id);
	pthread_mutex_lock(&f->mu);
	r = find(f, id, NULL); /* a concurrent DELETE may have removed it */
	o = r != NULL ? rule_json(r) : NULL;
	pthread_mutex_unlock(&f->mu);
	if (o == NULL) {
		kresp_error(
		        rs, 409, "Conflict", "fault rule %d was removed", id);
		return;
	}
	kresp_json(rs, 201, o);
	json_object_put(o);
}

static void
admin_delete(struct kfault *f, const char *sub, struct kresp *rs)
{
	int64_t id = 0;
	size_t idx = 0, n;

	if (sub[0] != '\0' && (parse_uint(sub, INT32_MAX, &id) != 0)) {
		kresp_error(rs, 400, "BadRequest", "bad fault rule id \"%s\"",
		        sub);
		return;
	}
	pthread_mutex_lock(&f->mu);
	n = f->nrules;
	if (sub[0] == '\0') {
		for (size_t i = 0; i < f->nrules; i++) {
			rule_free(f->rules[i]);
		}
		f->nrules = 0;
	} else if (find(f, (int)id, &idx) != NULL) {
		rule_free(f->rules[idx]);
		memmove(&f->rules[idx], &f->rules[idx + 1],
		        (f->nrules - idx - 1) * sizeof(*f->rules));
		f->nrules--;
		n = 1;
	} else {
		n = 0;
	}
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (sub[0] != '\0' && n == 0) {
		kresp_error(rs, 404, "NotFound", "no fault rule %s", sub);
		return;
	}
	if (n > 0) {
		log_info("fault: %zu rule(s) removed", n);
	}
	kresp_error(rs, 200, NULL, "%zu fault rule(s) removed", n);
}

/* The refusal length in ms from ?seconds= or {"seconds":N}; -1 if bad. */
static int64_t
refuse_ms(const struct kreq *rq)
{
	const char *q = kreq_q(rq, "seconds");
	json_object *o = NULL, *v;
	double s = -1;
	char *end;

	if (q != NULL) {
		s = strtod(q, &end);
		s = *end == '\0' && end != q ? s : -1;
	} else if ((o = jx_parse(rq->body, rq->body_len, 0, NULL, 0)) != NULL
	        && json_object_is_type(o, json_type_object)
	        && json_object_object_length(o) == 1
	        && json_object_object_get_ex(o, "seconds", &v)
	        && (json_object_is_type(v, json_type_int)
	                || json_object_is_type(v, json_type_double))) {
		s = json_object_get_double(v);
	}
	json_object_put(o);
	if (!(s >= 0 && s <= MAX_REFUSE_S)) {
		return (-1);
	}
	return ((int64_t)llround(s * 1000.0));
}

static void
admin_refuse(struct kfault *f, const struct kreq *rq, struct kresp *rs)
{
	int64_t ms = refuse_ms(rq);

	if (ms < 0) {
		kresp_error(rs, 400, "BadRequest",
		        "refuse: want {\"seconds\":N} or ?seconds=N with N in "
		        "[0, %d]",
		        MAX_REFUSE_S);
		return;
	}
	pthread_mutex_lock(&f->mu);
	f->refuse_until = ms > 0 ? timefmt_now_ms_mono() + ms : 0;
	pthread_mutex_unlock(&f->mu);
	log_info("fault: refusing new connections for %" PRId64 "ms", ms);
	kresp_error(rs, 200, NULL,
	        "refusing new connections for %" PRId64 "ms", ms);
}

void
kfault_admin(
        void *arg, const struct kreq *rq, const char *sub, struct kresp *rs)
{
	struct kfault *f = arg;
	const char *m = rq->method;

	if (strcmp(sub, "refuse") == 0) {
		if (strcmp(m, "POST") == 0) {
			admin_refuse(f, rq, rs);
		} else {
			kresp_error(rs, 405, "MethodNotAllowed",
			        "faults/refuse takes POST");
		}
	} else if (strcmp(m, "DELETE") == 0) {
		admin_delete(f, sub, rs);
	} else if (sub[0] != '\0') {
		kresp_error(rs, 404, "NotFound", "no admin endpoint faults/%s",
		        sub);
	} else if (strcmp(m, "GET") == 0) {
		admin_list(f, rs);
	} else if (strcmp(m, "POST") == 0) {
		admin_add(f, rq, rs);
	} else {
		kresp_error(rs, 405, "MethodNotAllowed",
		        "faults takes GET, POST or DELETE");
	}
}
