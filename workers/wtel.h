/*
 * wtel.h: the OpenTelemetry signals a reconcile reports (upstream's
 * meters, slog records and spans), appended to its RESULT's "telemetry"
 * object (ipc.h; the supervisor checks and exports them, otel.h).  On only
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set, as upstream's telemetry.Init:
 * otherwise every call does nothing and RESULTs are unchanged.  Span IDs
 * come from getrandom(2) (w3trace.h draws the IDs).  Prefix wtel_.
 */
#ifndef WTEL_H
#define WTEL_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "common/w3trace.h"
#include "workers/reconcile.h"

/* Whether telemetry is on for this process. */
bool wtel_on(void);

/* Adds value to the instrument name with up to two attributes (a NULL
 * key ends them). */
void wtel_count(struct rec_out *out, const char *name, int64_t value,
        const char *k1, const char *v1, const char *k2, const char *v2);
/* Records value in the histogram name, attributes as above. */
void wtel_record(struct rec_out *out, const char *name, double value,
        const char *k1, const char *v1, const char *k2, const char *v2);

/* The log record event with attrs (taken; NULL: none), inside span (NULL
 * or invalid: none). */
void wtel_log(struct rec_out *out, const char *event, json_object *attrs,
        const struct w3t_ctx *span);

/* A span being timed by the supervisor (from the WORK to the RESULT). */
struct wtel_span {
	struct w3t_ctx ctx, parent;
	const char *name;
	json_object *attrs; /* owned until wtel_span_end */
	char error[256];
	bool live;
};

/* Starts span name as a child of parent (NULL or invalid: a new root);
 * not live (and ctx invalid) when telemetry is off or randomness failed. */
void wtel_span_start(
        struct wtel_span *s, const struct w3t_ctx *parent, const char *name);
void wtel_span_attr(struct wtel_span *s, const char *key, const char *value);
/* Reports the span (with its error status when error[0] is set). */
void wtel_span_end(struct rec_out *out, struct wtel_span *s);

#endif
