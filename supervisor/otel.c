/*
 * otel.c: upstream's OpenTelemetry signals, checked, aggregated and
 * encoded as OTLP protobuf (otel.h).  Owns the signal policy (which
 * controller may report which instrument, log event and span, with which
 * attributes), the cumulative series, and the queues of spans and log
 * records awaiting export.  Pure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/strhash.h"
#include "common/xmalloc.h"
#include "supervisor/otel.h"
#include "supervisor/proto/otlp.pb-c.h"

#define SCHEMA_URL "https://opentelemetry.io/schemas/1.26.0"
#define SERVICE    "sympozium-controller"
#define NATTR      8    /* attributes of a series, span or record */
#define VAL_MAX    253  /* a metric attribute's value */
#define TEXT_MAX   4096 /* a span's or record's attribute, an error */
#define ITEMS_MAX  16   /* metrics, logs or spans in one RESULT */
#define NBOUNDS    15
#define SEV_INFO   9  /* SeverityNumber INFO */
#define SEV_ERROR  17 /* SeverityNumber ERROR */

enum kind { K_COUNTER, K_UPDOWN, K_HIST };

/* An instrument a controller may report (upstream's meters); attrs
 * sorted, as the SDK's attribute sets are. */
struct instr {
	const char *ctl, *scope, *name, *unit, *desc;
	enum kind kind;
	const char *attrs[3];
};

static const struct instr instrs[] = {
	{ "agentrun", "sympozium.ai/controller", "sympozium.agent.runs",
	        "{run}", "Agent runs completed", K_COUNTER,
	        { "sympozium.agent.status", "sympozium.instance" } },
	{ "agentrun", "sympozium.ai/controller", "sympozium.agent.duration_ms",
	        "ms", "Agent run duration", K_HIST,
	        { "sympozium.agent.status", "sympozium.instance" } },
	{ "agentrun", "sympozium.ai/controller", "sympozium.errors", "{error}",
	        "Errors encountered", K_COUNTER,
	        { "error.type", "sympozium.instance" } },
	{ "agentrun", "sympozium.ai/controller",
	        "sympozium.web_endpoint.serving", "{deployment}",
	        "Active server-mode Deployments", K_UPDOWN,
	        { "sympozium.instance" } },
	{ "agentrun", "sympozium.ai/controller",
	        "sympozium.web_endpoint.gateway_not_ready", "{check}",
	        "Gateway check failures", K_COUNTER,
	        { "sympozium.instance" } },
	{ "agentrun", "sympozium.ai/controller",
	        "sympozium.web_endpoint.route_created", "{route}",
	        "HTTPRoutes created", K_COUNTER, { "sympozium.instance" } },
	{ "config", "sympozium.ai/config-controller",
	        "sympozium.gateway.ready", "{gateway}",
	        "1 when gateway is programmed, 0 otherwise", K_UPDOWN, { 0 } },
};
#define NINSTR (sizeof(instrs) / sizeof(instrs[0]))

/* A log event (upstream's slog records) or a span name a controller may
 * report, with its attribute keys. */
struct named {
	const char *ctl, *name;
	int severity; /* logs */
	const char *attrs[NATTR];
};

static const struct named log_events[] = {
	{ "agentrun", "agent.run.succeeded", SEV_INFO,
	        { "agent_run", "instance", "status", "input_tokens",
	                "output_tokens", "tool_calls", "duration_ms" } },
	{ "agentrun", "agent.run.failed", SEV_ERROR,
	        { "agent_run", "instance", "error" } },
};
#define NEVENTS (sizeof(log_events) / sizeof(log_events[0]))

#define SPAN_ATTRS                                                            \
	{                                                                     \
		"agentrun.name", "namespace", "agentrun.phase",               \
		        "instance.name", "sandbox.name", "runtime.class"      \
	}
static const struct named span_names[] = {
	{ "agentrun", "agentrun.reconcile", 0, SPAN_ATTRS },
	{ "agentrun", "agentrun.create_job", 0, SPAN_ATTRS },
	{ "agentrun", "agentrun.extract_result", 0, SPAN_ATTRS },
	{ "agentrun", "agentrun.create_sandbox", 0, SPAN_ATTRS },
	{ "agentrun", "agentrun.check_sandbox", 0, SPAN_ATTRS },
};
#define NSPANS (sizeof(span_names) / sizeof(span_names[0]))

/* The Go SDK's default explicit bucket bounds. */
static const double bounds[NBOUNDS] = { 0, 5, 10, 25, 50, 75, 100, 250, 500,
	750, 1000, 2500, 5000, 7500, 10000 };

struct kv {
	char *key, *s; /* s NULL: an integer, or a double when dbl */
	int64_t i;
	double d;
	bool dbl;
};

struct series {
	size_t instr;
	uint64_t hash;
	size_t nattr;
	struct kv attr[3];
	int64_t ival; /* sums */
	uint64_t count, buckets[NBOUNDS + 1];
	double sum, min, max;
};

struct item {        /* a span or a log record */
	size_t what; /* index in span_names or log_events */
	uint8_t trace[16], span[8], parent[8];
	bool has_trace, has_parent;
	int64_t start, end; /* a record's time is end */
	size_t nattr;
	struct kv attr[NATTR];
	char *error; /* a span's status message */
};

struct queue {
	struct item *v;
	size_t n;
};

struct otel {
	char *endpoint;
	struct kv res[6 + OTEL_PAIRS_MAX];
	size_t nres;
	int64_t start_ns;
	struct series *series;
	size_t nseries, cap;
	size_t per_instr[NINSTR];
	struct queue q[OTEL_NSIGNALS]; /* TRACES and LOGS */
	struct otel_stats st;
};

/* protobuf-c's messages hold non-const pointers; it never writes
 * through them when packing. */
static void *
mut(const void *p)
{
	union {
		const void *c;
		void *m;
	} u = { p };

	return (u.m);
}

/* ---- construction ---- */

static void
res_add(struct otel *o, const char *k, const char *v)
{
	if (v != NULL && v[0] != '\0') {
		o->res[o->nres++]
		        = (struct kv) { .key = xstrdup(k), .s = xstrdup(v) };
	}
}

static bool
res_has(const struct otel *o, const char *k)
{
	for (size_t i = 0; i < o->nres; i++) {
		if (strcmp(o->res[i].key, k) == 0) {
			return (true);
		}
	}
	return (false);
}

/* OTEL_RESOURCE_ATTRIBUTES under ours (ours win a conflict); a list that
 * does not parse is ignored with a warning, as the SDK drops it. */
static void
res_env(struct otel *o, const char *env)
{
	struct otel_pair p[OTEL_PAIRS_MAX];
	int n;

	if (env == NULL || env[0] == '\0') {
		return;
	}
	n = otel_pairs(env, p, OTEL_PAIRS_MAX);
	if (n < 0) {
		log_warnx("OTEL_RESOURCE_ATTRIBUTES does not parse: ignored");
		return;
	}
	for (int i = 0; i < n; i++) {
		if (!res_has(o, p[i].key)) {
			res_add(o, p[i].key, p[i].value);
		}
	}
	otel_pairs_free(p, (size_t)n);
}

static int
hexval(char c)
{
	return (c >= '0' && c <= '9'           ? c - '0'
	                : c >= 'a' && c <= 'f' ? c - 'a' + 10
	                : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                                       : -1);
}

/* [p, e) trimmed and percent-decoded into a new string, or NULL. */
static char *
decode(const char *p, const char *e, bool is_key)
{
	char *out, *w;

	while (p < e && (*p == ' ' || *p == '\t')) {
		p++;
	}
	while (e > p && (e[-1] == ' ' || e[-1] == '\t')) {
		e--;
	}
	if (is_key && p == e) {
		return (NULL);
	}
	out = w = xmalloc((size_t)(e - p) + 1);
	for (; p < e; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '%') {
			int hi = p + 2 < e ? hexval(p[1]) : -1;
			int lo = p + 2 < e ? hexval(p[2]) : -1;

			if (hi < 0 || lo < 0) {
				free(out);
				return (NULL);
			}
			c = (unsigned char)(hi << 4 | lo);
			p += 2;
		}
		if (c < 0x20 || c == 0x7f) {
			free(out);
			return (NULL);
		}
		*w++ = (char)c;
	}
	*w = '\0';
	return (out);
}

int
otel_pairs(const char *s, struct otel_pair *out, size_t max)
{
	size_t n = 0;

	while (s != NULL && *s != '\0') {
		const char *end = s + strcspn(s, ",");
		const char *eq = memchr(s, '=', (size_t)(end - s));
		char *k, *v;

		if (eq == NULL || n == max
		        || (k = decode(s, eq, true)) == NULL) {
			otel_pairs_free(out, n);
			return (-1);
		}
		if ((v = decode(eq + 1, end, false)) == NULL) {
			free(k);
			otel_pairs_free(out, n);
			return (-1);
		}
		out[n++] = (struct otel_pair) { k, v };
		s = *end == ',' ? end + 1 : end;
	}
	return ((int)n);
}

void
otel_pairs_free(struct otel_pair *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].key);
		free(p[i].value);
	}
}

struct otel *
otel_new(const struct otel_conf *conf)
{
	const char *ep = conf->endpoint;
	struct otel *o;

	if (ep == NULL || ep[0] == '\0') {
		return (NULL);
	}
	if (strncmp(ep, "https://", 8) == 0) {
		ep += 8;
	} else if (strncmp(ep, "http://", 7) == 0) {
		ep += 7;
	}
	o = xcalloc(1, sizeof(*o));
	o->endpoint = xstrdup(ep);
	o->endpoint[strcspn(o->endpoint, "/")] = '\0';
	o->start_ns = conf->start_ns;
	res_add(o, "service.name", SERVICE);
	res_add(o, "k8s.namespace.name", conf->namespace);
	res_add(o, "k8s.pod.name", conf->pod);
	res_add(o, "k8s.node.name", conf->node);
	res_add(o, "sympozium.instance", conf->instance);
	res_add(o, "sympozium.component", "controller");
	res_env(o, conf->resource_attrs);
	return (o);
}

static void
kv_fini(struct kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].s);
	}
}

static void
item_fini(struct item *it)
{
	kv_fini(it->attr, it->nattr);
	free(it->error);
}

void
otel_free(struct otel *o)
{
	if (o == NULL) {
		return;
	}
	for (size_t i = 0; i < o->nseries; i++) {
		kv_fini(o->series[i].attr, o->series[i].nattr);
	}
	for (int s = 0; s < OTEL_NSIGNALS; s++) {
		for (size_t i = 0; i < o->q[s].n; i++) {
			item_fini(&o->q[s].v[i]);
		}
		free(o->q[s].v);
	}
	kv_fini(o->res, o->nres);
	free(o->series);
	free(o->endpoint);
	free(o);
}

const char *
otel_endpoint(const struct otel *o)
{
	return (o->endpoint);
}

void
otel_stats(const struct otel *o, struct otel_stats *out)
{
	*out = o->st;
}

const char *
otel_path(enum otel_signal sig)
{
	static const char *const p[OTEL_NSIGNALS] = {
		("/opentelemetry.proto.collector.metrics.v1.MetricsService/"
		 "Export"),
		("/opentelemetry.proto.collector.trace.v1.TraceService/"
		 "Export"),
		("/opentelemetry.proto.collector.logs.v1.LogsService/Export"),
	};

	return ((unsigned)sig < OTEL_NSIGNALS ? p[sig] : "");
}

/* ---- checks (nothing is taken until the whole object passes) ---- */

static int
fail(char *err, size_t n, const char *what, const char *name)
{
	snprintf(err, n, "telemetry: %s%s%s", what, name != NULL ? ": " : "",
	        name != NULL ? name : "");
	return (-1);
}

/* A string of min..max bytes with no NUL. */
static bool
text_in(json_object *v, size_t min, size_t max)
{
	size_t n;

	if (!json_object_is_type(v, json_type_string)) {
		return (false);
	}
	n = (size_t)json_object_get_string_len(v);
	return (n >= min && n <= max
	        && strlen(json_object_get_string(v)) == n);
}

static bool
text_ok(json_object *v, size_t max)
{
	return (text_in(v, 1, max));
}

static bool
listed(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n && list[i] != NULL; i++) {
		if (strcmp(list[i], s) == 0) {
			return (true);
		}
	}
	return (false);
}

/* attrs (absent, or an object of listed keys whose values are strings up
 * to max, or integers when ints) */
static bool
attrs_ok(json_object *attrs, const char *const *keys, size_t nkeys, size_t max,
        bool ints)
{
	if (attrs == NULL) {
		return (true);
	}
	if (!json_object_is_type(attrs, json_type_object)
	        || json_object_object_length(attrs) > (int)nkeys) {
		return (false);
	}
	json_object_object_foreach(attrs, k, v)
	{
		bool is_int = json_object_is_type(v, json_type_int);

		if (!listed(keys, nkeys, k)
		        || !(text_in(v, 0, max) || (ints && is_int))) {
			return (false);
		}
	}
	return (true);
}

/* n lowercase hex bytes, not all zero */
static bool
hex_ok(json_object *v, size_t n, uint8_t *out)
{
	const char *s = json_object_get_string(v);
	bool nonzero = false;

	if (!json_object_is_type(v, json_type_string) || strlen(s) != 2 * n) {
		return (false);
	}
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		                               : -1;

		if (d < 0) {
			return (false);
		}
		if (out != NULL) {
			out[i / 2] = (uint8_t)((i % 2 ? out[i / 2] : 0) << 4
			        | (uint8_t)d);
		}
		nonzero |= d != 0;
	}
	return (nonzero);
}

static json_object *
items(json_object *tel, const char *key, bool *bad)
{
	json_object *a = json_object_object_get(tel, key);

	if (a != NULL
	        && (!json_object_is_type(a, json_type_array)
	                || json_object_array_length(a) > ITEMS_MAX)) {
		*bad = true;
	}
	return (a);
}

static size_t
instr_find(const char *ctl, const char *name)
{
	for (size_t i = 0; i < NINSTR; i++) {
		if (strcmp(instrs[i].ctl, ctl) == 0
		        && strcmp(instrs[i].name, name) == 0) {
			return (i);
		}
	}
	return (SIZE_MAX);
}

static size_t
named_find(const struct named *t, size_t n, const char *ctl, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(t[i].ctl, ctl) == 0
		        && strcmp(t[i].name, name) == 0) {
			return (i);
		}
	}
	return (SIZE_MAX);
}

static int
metric_ok(const char *ctl, json_object *m, char *err, size_t n)
{
	const char *name
	        = json_object_get_string(json_object_object_get(m, "name"));
	json_object *v = json_object_object_get(m, "value");
	size_t i;
	double d;

	if (!json_object_is_type(m, json_type_object) || name == NULL) {
		return (fail(err, n, "a metric without a name", NULL));
	}
	i = instr_find(ctl, name);
	if (i == SIZE_MAX) {
		return (fail(err, n, "instrument not allowed", name));
	}
	if (!attrs_ok(json_object_object_get(m, "attrs"), instrs[i].attrs, 3,
	            VAL_MAX, false)) {
		return (fail(err, n, "bad attributes", name));
	}
	d = json_object_get_double(v);
	if (instrs[i].kind != K_HIST
	        && !json_object_is_type(v, json_type_int)) {
		return (fail(err, n, "value not an integer", name));
	}
	if (instrs[i].kind == K_HIST && !json_object_is_type(v, json_type_int)
	        && !json_object_is_type(v, json_type_double)) {
		return (fail(err, n, "value not a number", name));
	}
	if (!isfinite(d) || (instrs[i].kind != K_UPDOWN && d < 0)
	        || fabs(d) > 1e15) {
		return (fail(err, n, "value out of range", name));
	}
	return (0);
}

static int
log_ok(const char *ctl, json_object *l, char *err, size_t n)
{
	const char *ev
	        = json_object_get_string(json_object_object_get(l, "event"));
	json_object *t = json_object_object_get(l, "traceId");
	json_object *s = json_object_object_get(l, "spanId");
	size_t i;

	if (!json_object_is_type(l, json_type_object) || ev == NULL) {
		return (fail(err, n, "a log record without an event", NULL));
	}
	i = named_find(log_events, NEVENTS, ctl, ev);
	if (i == SIZE_MAX) {
		return (fail(err, n, "log event not allowed", ev));
	}
	if (!attrs_ok(json_object_object_get(l, "attrs"), log_events[i].attrs,
	            NATTR, TEXT_MAX, true)) {
		return (fail(err, n, "bad attributes", ev));
	}
	if ((t == NULL) != (s == NULL) || (t != NULL && !hex_ok(t, 16, NULL))
	        || (s != NULL && !hex_ok(s, 8, NULL))) {
		return (fail(err, n, "bad trace context", ev));
	}
	return (0);
}

static int
span_ok(const char *ctl, json_object *sp, char *err, size_t n)
{
	const char *name
	        = json_object_get_string(json_object_object_get(sp, "name"));
	json_object *p = json_object_object_get(sp, "parentSpanId");
	json_object *e = json_object_object_get(sp, "error");
	size_t i;

	if (!json_object_is_type(sp, json_type_object) || name == NULL) {
		return (fail(err, n, "a span without a name", NULL));
	}
	i = named_find(span_names, NSPANS, ctl, name);
	if (i == SIZE_MAX) {
		return (fail(err, n, "span not allowed", name));
	}
	if (!hex_ok(json_object_object_get(sp, "traceId"), 16, NULL)
	        || !hex_ok(json_object_object_get(sp, "spanId"), 8, NULL)
	        || (p != NULL && !hex_ok(p, 8, NULL))
	        || !json_object_is_type(json_object_object_get(sp, "sampled"),
	                json_type_boolean)) {
		return (fail(err, n, "bad span context", name));
	}
	if (!attrs_ok(json_object_object_get(sp, "attrs"), span_names[i].attrs,
	            NATTR, TEXT_MAX, false)
	        || (e != NULL && !text_ok(e, TEXT_MAX))) {
		return (fail(err, n, "bad attributes", name));
	}
	return (0);
}

int
otel_check(const char *ctl, json_object *tel, char *err, size_t n)
{
	static int (*const ok[])(const char *, json_object *, char *, size_t)
	        = { metric_ok, span_ok, log_ok };
	static const char *const keys[] = { "metrics", "spans", "logs" };
	bool bad = !json_object_is_type(tel, json_type_object);

	for (int k = 0; k < 3 && !bad; k++) {
		json_object *a = items(tel, keys[k], &bad);

		for (size_t i = 0; !bad && i < jx_array_len(a); i++) {
			if (ok[k](ctl, json_object_array_get_idx(a, i), err, n)
			        != 0) {
				return (-1);
			}
		}
	}
	return (bad ? fail(err, n, "not an object of bounded arrays", NULL)
	            : 0);
}

/* ---- taking ---- */

static size_t
kv_take(struct kv *out, json_object *attrs, size_t max)
{
	size_t n = 0;

	if (attrs == NULL) {
		return (0);
	}
	json_object_object_foreach(attrs, k, v)
	{
		if (n == max) {
			break;
		}
		out[n].key = xstrdup(k);
		out[n].s = json_object_is_type(v, json_type_string)
		        ? xstrdup(json_object_get_string(v))
		        : NULL;
		out[n].i = json_object_get_int64(v);
		n++;
	}
	return (n);
}

/* The series of instrument i with attrs, found or added; NULL when the
 * instrument has OTEL_SERIES_MAX already. */
static struct series *
series_get(struct otel *o, size_t i, json_object *attrs)
{
	struct series want = { .instr = i };
	uint64_t h = strhash(instrs[i].name);

	/* attributes in the instrument's (sorted) key order */
	for (size_t k = 0; k < 3 && instrs[i].attrs[k] != NULL; k++) {
		/* keys hold dots: not a jx path */
		const char *v = json_object_get_string(
		        json_object_object_get(attrs, instrs[i].attrs[k]));

		if (v == NULL) {
			continue;
		}
		want.attr[want.nattr].key = mut(instrs[i].attrs[k]);
		want.attr[want.nattr++].s = mut(v);
		h = strhash_seeded(v, h ^ k);
	}
	for (size_t s = 0; s < o->nseries; s++) {
		struct series *x = &o->series[s];
		bool same = x->instr == i && x->hash == h
		        && x->nattr == want.nattr;

		for (size_t k = 0; same && k < x->nattr; k++) {
			same = strcmp(x->attr[k].key, want.attr[k].key) == 0
			        && strcmp(x->attr[k].s, want.attr[k].s) == 0;
		}
		if (same) {
			return (x);
		}
	}
	if (o->per_instr[i] >= OTEL_SERIES_MAX) {
		o->st.series_dropped++;
		return (NULL);
	}
	if (o->nseries == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 16;
		o->series
		        = xreallocarray(o->series, o->cap, sizeof(*o->series));
	}
	want.hash = h;
	for (size_t k = 0; k < want.nattr; k++) {
		want.attr[k].key = xstrdup(want.attr[k].key);
		want.attr[k].s = xstrdup(want.attr[k].s);
	}
	o->per_instr[i]++;
	o->series[o->nseries] = want;
	return (&o->series[o->nseries++]);
}

static void
take_metric(struct otel *o, const char *ctl, json_object *m)
{
	size_t i = instr_find(ctl,
	        json_object_get_string(json_object_object_get(m, "name")));
	json_object *v = json_object_object_get(m, "value");
	struct series *s
	        = series_get(o, i, json_object_object_get(m, "attrs"));
	double d = json_object_get_double(v);
	size_t b = 0;

	if (s == NULL) {
		return;
	}
	if (instrs[i].kind != K_HIST) {
		s->ival += json_object_get_int64(v);
		return;
	}
	while (b < NBOUNDS && d > bounds[b]) {
		b++;
	}
	s->buckets[b]++;
	s->min = s->count == 0 || d < s->min ? d : s->min;
	s->max = s->count == 0 || d > s->max ? d : s->max;
	s->sum += d;
	s->count++;
}

/* A free slot at the tail of queue sig, the oldest dropped when full. */
static struct item *
enqueue(struct otel *o, enum otel_signal sig)
{
	struct queue *q = &o->q[sig];

	if (q->v == NULL) {
		q->v = xcalloc(OTEL_QUEUE_MAX, sizeof(*q->v));
	}
	if (q->n == OTEL_QUEUE_MAX) {
		item_fini(&q->v[0]);
		memmove(q->v, q->v + 1, (q->n - 1) * sizeof(*q->v));
		q->n--;
		o->st.queue_dropped[sig]++;
	}
	memset(&q->v[q->n], 0, sizeof(q->v[q->n]));
	return (&q->v[q->n++]);
}

static void
take_span(struct otel *o, const char *ctl, json_object *sp, int64_t start,
        int64_t end)
{
	json_object *p = json_object_object_get(sp, "parentSpanId");
	struct item *it;

	if (!json_object_get_boolean(json_object_object_get(sp, "sampled"))) {
		return; /* ParentBased: an unsampled span is not exported */
	}
	it = enqueue(o, OTEL_TRACES);
	it->what = named_find(span_names, NSPANS, ctl,
	        json_object_get_string(json_object_object_get(sp, "name")));
	hex_ok(json_object_object_get(sp, "traceId"), 16, it->trace);
	hex_ok(json_object_object_get(sp, "spanId"), 8, it->span);
	it->has_trace = true;
	it->has_parent = p != NULL && hex_ok(p, 8, it->parent);
	it->start = start;
	it->end = end;
	it->nattr = kv_take(
	        it->attr, json_object_object_get(sp, "attrs"), NATTR - 1);
	if (it->what == 0) { /* upstream's reconcile.duration_ms */
		it->attr[it->nattr++] = (struct kv) {
			.key = xstrdup("reconcile.duration_ms"),
			.d = (double)((end - start) / 1000000),
			.dbl = true,
		};
	}
	if (json_object_object_get(sp, "error") != NULL) {
		it->error = xstrdup(json_object_get_string(
		        json_object_object_get(sp, "error")));
	}
}

static void
take_log(struct otel *o, const char *ctl, json_object *l, int64_t end)
{
	struct item *it = enqueue(o, OTEL_LOGS);
	json_object *t = json_object_object_get(l, "traceId");

	it->what = named_find(log_events, NEVENTS, ctl,
	        json_object_get_string(json_object_object_get(l, "event")));
	it->end = end;
	it->has_trace = t != NULL && hex_ok(t, 16, it->trace)
	        && hex_ok(json_object_object_get(l, "spanId"), 8, it->span);
	it->nattr
	        = kv_take(it->attr, json_object_object_get(l, "attrs"), NATTR);
}

int
otel_ingest(struct otel *o, const char *controller, json_object *tel,
        int64_t start_ns, int64_t end_ns, char *err, size_t errlen)
{
	json_object *a;

	if (otel_check(controller, tel, err, errlen) != 0) {
		o->st.refused++;
		return (-1);
	}
	o->st.ingested++;
	a = json_object_object_get(tel, "metrics");
	for (size_t i = 0; i < jx_array_len(a); i++) {
		take_metric(o, controller, json_object_array_get_idx(a, i));
	}
	a = json_object_object_get(tel, "spans");
	for (size_t i = 0; i < jx_array_len(a); i++) {
		take_span(o, controller, json_object_array_get_idx(a, i),
		        start_ns, end_ns);
	}
	a = json_object_object_get(tel, "logs");
	for (size_t i = 0; i < jx_array_len(a); i++) {
		take_log(o, controller, json_object_array_get_idx(a, i),
		        end_ns);
	}
	return (0);
}

/* ---- encoding: protobuf-c message trees in an arena, packed ---- */

struct arena {
	void **p;
	size_t n, cap;
};

static void *
ar_new(struct arena *a, size_t size)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->p = xreallocarray(a->p, a->cap, sizeof(*a->p));
	}
	return (a->p[a->n++] = xcalloc(1, size));
}

static void
ar_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->p[i]);
	}
	free(a->p);
}

#define AR_ARRAY(a, n, type) ((type **)ar_new((a), ((n) + 1) * sizeof(type *)))

static Otlp__KeyValue *
pb_kv(struct arena *a, const struct kv *kv)
{
	Otlp__KeyValue *p = ar_new(a, sizeof(*p));
	Otlp__AnyValue *v = ar_new(a, sizeof(*v));

	otlp__any_value__init(v);
	if (kv->s != NULL) {
		v->value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = kv->s;
	} else if (kv->dbl) {
		v->value_case = OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE;
		v->double_value = kv->d;
	} else {
		v->value_case = OTLP__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = kv->i;
	}
	otlp__key_value__init(p);
	p->key = kv->key;
	p->value = v;
	return (p);
}

static Otlp__KeyValue **
pb_attrs(struct arena *a, const struct kv *kv, size_t n)
{
	Otlp__KeyValue **v = AR_ARRAY(a, n, Otlp__KeyValue);

	for (size_t i = 0; i < n; i++) {
		v[i] = pb_kv(a, &kv[i]);
	}
	return (v);
}

static Otlp__Resource *
pb_resource(struct arena *a, const struct otel *o)
{
	Otlp__Resource *r = ar_new(a, sizeof(*r));

	otlp__resource__init(r);
	r->n_attributes = o->nres;
	r->attributes = pb_attrs(a, o->res, o->nres);
	return (r);
}

static Otlp__InstrumentationScope *
pb_scope(struct arena *a, const char *name)
{
	Otlp__InstrumentationScope *s = ar_new(a, sizeof(*s));

	otlp__instrumentation_scope__init(s);
	s->name = mut(name);
	return (s);
}

static void
pack(const ProtobufCMessage *m, struct buf *out)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	buf_reserve(out, n + 1);
	protobuf_c_message_pack(m, (uint8_t *)out->data + out->len);
	out->len += n;
	out->data[out->len] = '\0';
}

static Otlp__Metric *
pb_metric(struct arena *a, const struct otel *o, size_t i, int64_t now,
        size_t *points)
{
	Otlp__Metric *m = ar_new(a, sizeof(*m));
	size_t n = 0;
	void **pts = (void **)ar_new(a, (o->nseries + 1) * sizeof(void *));

	otlp__metric__init(m);
	m->name = mut(instrs[i].name);
	m->description = mut(instrs[i].desc);
	m->unit = mut(instrs[i].unit);
	for (size_t s = 0; s < o->nseries; s++) {
		const struct series *x = &o->series[s];

		if (x->instr != i) {
			continue;
		}
		if (instrs[i].kind == K_HIST) {
			Otlp__HistogramDataPoint *p = ar_new(a, sizeof(*p));

			otlp__histogram_data_point__init(p);
			p->n_attributes = x->nattr;
			p->attributes = pb_attrs(a, x->attr, x->nattr);
			p->has_start_time_unix_nano = p->has_time_unix_nano
			        = 1;
			p->start_time_unix_nano = (uint64_t)o->start_ns;
			p->time_unix_nano = (uint64_t)now;
			p->has_count = p->has_sum = p->has_min = p->has_max
			        = 1;
			p->count = x->count;
			p->sum = x->sum;
			p->min = x->min;
			p->max = x->max;
			p->n_bucket_counts = NBOUNDS + 1;
			p->bucket_counts = mut(x->buckets);
			p->n_explicit_bounds = NBOUNDS;
			p->explicit_bounds = mut(bounds);
			pts[n++] = p;
		} else {
			Otlp__NumberDataPoint *p = ar_new(a, sizeof(*p));

			otlp__number_data_point__init(p);
			p->n_attributes = x->nattr;
			p->attributes = pb_attrs(a, x->attr, x->nattr);
			p->has_start_time_unix_nano = p->has_time_unix_nano
			        = 1;
			p->start_time_unix_nano = (uint64_t)o->start_ns;
			p->time_unix_nano = (uint64_t)now;
			p->value_case = OTLP__NUMBER_DATA_POINT__VALUE_AS_INT;
			p->as_int = x->ival;
			pts[n++] = p;
		}
	}
	if (n == 0) {
		return (NULL);
	}
	*points += n;
	if (instrs[i].kind == K_HIST) {
		Otlp__Histogram *h = ar_new(a, sizeof(*h));

		otlp__histogram__init(h);
		h->n_data_points = n;
		h->data_points = (Otlp__HistogramDataPoint **)pts;
		h->has_aggregation_temporality = 1;
		h->aggregation_temporality
		        = OTLP__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
		m->data_case = OTLP__METRIC__DATA_HISTOGRAM;
		m->histogram = h;
	} else {
		Otlp__Sum *sum = ar_new(a, sizeof(*sum));

		otlp__sum__init(sum);
		sum->n_data_points = n;
		sum->data_points = (Otlp__NumberDataPoint **)pts;
		sum->has_aggregation_temporality = sum->has_is_monotonic = 1;
		sum->aggregation_temporality
		        = OTLP__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
		sum->is_monotonic = instrs[i].kind == K_COUNTER;
		m->data_case = OTLP__METRIC__DATA_SUM;
		m->sum = sum;
	}
	return (m);
}

/* One ScopeMetrics per scope, in the order the instruments are listed. */
static size_t
enc_metrics(
        struct arena *a, const struct otel *o, int64_t now, struct buf *out)
{
	Otlp__ExportMetricsServiceRequest req
	        = OTLP__EXPORT_METRICS_SERVICE_REQUEST__INIT;
	Otlp__ResourceMetrics rm = OTLP__RESOURCE_METRICS__INIT;
	Otlp__ResourceMetrics *rmp = &rm;
	Otlp__ScopeMetrics **sms = AR_ARRAY(a, NINSTR, Otlp__ScopeMetrics);
	size_t nsm = 0, points = 0;

	for (size_t i = 0; i < NINSTR; i++) {
		Otlp__Metric *m = pb_metric(a, o, i, now, &points);
		Otlp__ScopeMetrics *sm = nsm > 0 ? sms[nsm - 1] : NULL;

		if (m == NULL) {
			continue;
		}
		if (sm == NULL
		        || strcmp(sm->scope->name, instrs[i].scope) != 0) {
			sm = sms[nsm++] = ar_new(a, sizeof(*sm));
			otlp__scope_metrics__init(sm);
			sm->scope = pb_scope(a, instrs[i].scope);
			sm->metrics = AR_ARRAY(a, NINSTR, Otlp__Metric);
		}
		sm->metrics[sm->n_metrics++] = m;
	}
	if (points == 0) {
		return (0);
	}
	rm.resource = pb_resource(a, o);
	rm.schema_url = SCHEMA_URL;
	rm.n_scope_metrics = nsm;
	rm.scope_metrics = sms;
	req.n_resource_metrics = 1;
	req.resource_metrics = &rmp;
	pack(&req.base, out);
	return (points);
}

static Otlp__Span *
pb_span(struct arena *a, struct item *it)
{
	Otlp__Span *s = ar_new(a, sizeof(*s));

	otlp__span__init(s);
	s->has_trace_id = s->has_span_id = 1;
	s->trace_id = (ProtobufCBinaryData) { 16, it->trace };
	s->span_id = (ProtobufCBinaryData) { 8, it->span };
	if (it->has_parent) {
		s->has_parent_span_id = 1;
		s->parent_span_id = (ProtobufCBinaryData) { 8, it->parent };
	}
	s->has_flags = 1;
	s->flags = 0x01 | 0x100 | (it->has_parent ? 0x200 : 0);
	s->name = mut(span_names[it->what].name);
	s->has_kind = 1;
	s->kind = OTLP__SPAN__SPAN_KIND__SPAN_KIND_INTERNAL;
	s->has_start_time_unix_nano = s->has_end_time_unix_nano = 1;
	s->start_time_unix_nano = (uint64_t)it->start;
	s->end_time_unix_nano = (uint64_t)it->end;
	s->n_attributes = it->nattr;
	s->attributes = pb_attrs(a, it->attr, it->nattr);
	if (it->error != NULL) {
		s->status = ar_new(a, sizeof(*s->status));
		otlp__status__init(s->status);
		s->status->message = it->error;
		s->status->has_code = 1;
		s->status->code = OTLP__STATUS__STATUS_CODE__STATUS_CODE_ERROR;
	}
	return (s);
}

static Otlp__LogRecord *
pb_log(struct arena *a, struct item *it)
{
	Otlp__LogRecord *r = ar_new(a, sizeof(*r));
	const struct named *ev = &log_events[it->what];

	otlp__log_record__init(r);
	r->has_time_unix_nano = r->has_observed_time_unix_nano = 1;
	r->time_unix_nano = r->observed_time_unix_nano = (uint64_t)it->end;
	r->has_severity_number = 1;
	r->severity_number = ev->severity;
	r->severity_text = ev->severity == SEV_ERROR ? "ERROR" : "INFO";
	r->body = ar_new(a, sizeof(*r->body));
	otlp__any_value__init(r->body);
	r->body->value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	r->body->string_value = mut(ev->name);
	r->n_attributes = it->nattr;
	r->attributes = pb_attrs(a, it->attr, it->nattr);
	if (it->has_trace) {
		r->has_trace_id = r->has_span_id = 1;
		r->trace_id = (ProtobufCBinaryData) { 16, it->trace };
		r->span_id = (ProtobufCBinaryData) { 8, it->span };
	}
	return (r);
}

static size_t
enc_spans(struct arena *a, const struct otel *o, struct queue *q,
        struct buf *out)
{
	Otlp__ExportTraceServiceRequest req
	        = OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
	Otlp__ResourceSpans rs = OTLP__RESOURCE_SPANS__INIT, *rsp = &rs;
	Otlp__ScopeSpans ss = OTLP__SCOPE_SPANS__INIT, *ssp = &ss;

	ss.scope = pb_scope(a, "sympozium.ai/controller");
	ss.spans = AR_ARRAY(a, q->n, Otlp__Span);
	for (size_t i = 0; i < q->n; i++) {
		ss.spans[ss.n_spans++] = pb_span(a, &q->v[i]);
	}
	rs.resource = pb_resource(a, o);
	rs.schema_url = SCHEMA_URL;
	rs.n_scope_spans = 1;
	rs.scope_spans = &ssp;
	req.n_resource_spans = 1;
	req.resource_spans = &rsp;
	pack(&req.base, out);
	return (q->n);
}

static size_t
enc_logs(struct arena *a, const struct otel *o, struct queue *q,
        struct buf *out)
{
	Otlp__ExportLogsServiceRequest req
	        = OTLP__EXPORT_LOGS_SERVICE_REQUEST__INIT;
	Otlp__ResourceLogs rl = OTLP__RESOURCE_LOGS__INIT, *rlp = &rl;
	Otlp__ScopeLogs sl = OTLP__SCOPE_LOGS__INIT, *slp = &sl;

	/* otelslog.NewHandler(ServiceName): the scope is the service */
	sl.scope = pb_scope(a, SERVICE);
	sl.log_records = AR_ARRAY(a, q->n, Otlp__LogRecord);
	for (size_t i = 0; i < q->n; i++) {
		sl.log_records[sl.n_log_records++] = pb_log(a, &q->v[i]);
	}
	rl.resource = pb_resource(a, o);
	rl.schema_url = SCHEMA_URL;
	rl.n_scope_logs = 1;
	rl.scope_logs = &slp;
	req.n_resource_logs = 1;
	req.resource_logs = &rlp;
	pack(&req.base, out);
	return (q->n);
}

size_t
otel_encode(
        struct otel *o, enum otel_signal sig, int64_t now_ns, struct buf *out)
{
	struct arena a = { 0 };
	struct queue *q = &o->q[sig];
	size_t n = 0;

	buf_reset(out);
	if (sig == OTEL_METRICS) {
		n = enc_metrics(&a, o, now_ns, out);
	} else if ((unsigned)sig < OTEL_NSIGNALS && q->n > 0) {
		n = sig == OTEL_TRACES ? enc_spans(&a, o, q, out)
		                       : enc_logs(&a, o, q, out);
		for (size_t i = 0; i < q->n; i++) {
			item_fini(&q->v[i]);
		}
		q->n = 0;
	}
	ar_free(&a);
	return (n);
}
