/*
 * wtel.c: the telemetry of one reconcile (wtel.h), built into the RESULT
 * body.  Owns nothing across reconciles but the cached switch.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "workers/wtel.h"

bool
wtel_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");

		on = e != NULL && e[0] != '\0';
	}
	return (on == 1);
}

/* The RESULT's telemetry array key, made on first use. */
static json_object *
list(struct rec_out *out, const char *key)
{
	json_object *tel = json_object_object_get(out->result, "telemetry");
	json_object *a;

	if (tel == NULL) {
		tel = json_object_new_object();
		json_object_object_add(out->result, "telemetry", tel);
	}
	a = json_object_object_get(tel, key);
	if (a == NULL) {
		a = json_object_new_array();
		json_object_object_add(tel, key, a);
	}
	return (a);
}

static json_object *
attrs2(const char *k1, const char *v1, const char *k2, const char *v2)
{
	json_object *a = json_object_new_object();

	if (k1 != NULL && v1 != NULL && v1[0] != '\0') {
		json_object_object_add(a, k1, json_object_new_string(v1));
	}
	if (k1 != NULL && k2 != NULL && v2 != NULL && v2[0] != '\0') {
		json_object_object_add(a, k2, json_object_new_string(v2));
	}
	return (a);
}

static void
metric(struct rec_out *out, const char *name, json_object *value,
        json_object *attrs)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "name", json_object_new_string(name));
	json_object_object_add(m, "value", value);
	json_object_object_add(m, "attrs", attrs);
	json_object_array_add(list(out, "metrics"), m);
}

void
wtel_count(struct rec_out *out, const char *name, int64_t value,
        const char *k1, const char *v1, const char *k2, const char *v2)
{
	if (wtel_on()) {
		metric(out, name, json_object_new_int64(value),
		        attrs2(k1, v1, k2, v2));
	}
}

void
wtel_record(struct rec_out *out, const char *name, double value,
        const char *k1, const char *v1, const char *k2, const char *v2)
{
	if (wtel_on()) {
		metric(out, name, json_object_new_double(value),
		        attrs2(k1, v1, k2, v2));
	}
}

static void
add_hex(json_object *o, const char *key, const uint8_t *b, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char s[33];

	for (size_t i = 0; i < n; i++) {
		s[2 * i] = hex[b[i] >> 4];
		s[2 * i + 1] = hex[b[i] & 15];
	}
	s[2 * n] = '\0';
	json_object_object_add(o, key, json_object_new_string(s));
}

void
wtel_log(struct rec_out *out, const char *event, json_object *attrs,
        const struct w3t_ctx *span)
{
	json_object *l;

	if (!wtel_on()) {
		json_object_put(attrs);
		return;
	}
	l = json_object_new_object();
	json_object_object_add(l, "event", json_object_new_string(event));
	if (attrs != NULL) {
		json_object_object_add(l, "attrs", attrs);
	}
	if (span != NULL && span->valid) {
		add_hex(l, "traceId", span->trace_id, 16);
		add_hex(l, "spanId", span->span_id, 8);
	}
	json_object_array_add(list(out, "logs"), l);
}

void
wtel_span_start(
        struct wtel_span *s, const struct w3t_ctx *parent, const char *name)
{
	uint8_t rnd[W3T_RANDOM_LEN];

	memset(s, 0, sizeof(*s));
	s->name = name;
	if (!wtel_on()
	        || getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		return;
	}
	if (parent != NULL && parent->valid) {
		s->parent = *parent;
	}
	w3t_child(parent, rnd, &s->ctx);
	s->attrs = json_object_new_object();
	s->live = true;
}

void
wtel_span_attr(struct wtel_span *s, const char *key, const char *value)
{
	if (s->live && value != NULL) {
		json_object_object_add(
		        s->attrs, key, json_object_new_string(value));
	}
}

void
wtel_span_end(struct rec_out *out, struct wtel_span *s)
{
	json_object *sp;

	if (!s->live) {
		return;
	}
	sp = json_object_new_object();
	json_object_object_add(sp, "name", json_object_new_string(s->name));
	add_hex(sp, "traceId", s->ctx.trace_id, 16);
	add_hex(sp, "spanId", s->ctx.span_id, 8);
	if (s->parent.valid) {
		add_hex(sp, "parentSpanId", s->parent.span_id, 8);
	}
	json_object_object_add(sp, "sampled",
	        json_object_new_boolean((s->ctx.flags & 1) != 0));
	json_object_object_add(sp, "attrs", s->attrs);
	if (s->error[0] != '\0') {
		json_object_object_add(
		        sp, "error", json_object_new_string(s->error));
	}
	json_object_array_add(list(out, "spans"), sp);
	s->live = false;
	s->attrs = NULL;
}
