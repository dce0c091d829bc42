/*
 * otel.h: upstream's OpenTelemetry signals (pkg/telemetry and the
 * controllers' meters, tracer and slog records at 008266e), gathered by the
 * supervisor and encoded as OTLP protobuf.  Pure: no I/O, no clock (every
 * time is an argument); egress.h sends what it encodes.  Prefix otel_.
 *
 * Workers report signals in a RESULT's "telemetry" object (ipc.h); the
 * supervisor is the only process with a network, so it aggregates them:
 *
 *	{"metrics"?:[{"name":s,"value":number,"attrs"?:{k:s}}...],
 *	 "logs"?:[{"event":s,"attrs"?:{k:s|n},"traceId"?:hex32,
 *	           "spanId"?:hex16}...],
 *	 "spans"?:[{"name":s,"traceId":hex32,"spanId":hex16,
 *	            "parentSpanId"?:hex16,"sampled":b,"attrs"?:{k:s},
 *	            "error"?:s}...]}
 *
 * A worker is untrusted, so otel_ingest() checks the whole object against
 * the signal policy before it counts anything: each controller may report
 * only its own instruments (agentrun: sympozium.agent.runs, .duration_ms,
 * sympozium.errors, sympozium.web_endpoint.*; config:
 * sympozium.gateway.ready), log events and span names, each with its own
 * attribute keys, values bounded; counters only grow; at most
 * OTEL_SERIES_MAX series per instrument (later ones are dropped and
 * counted).  A span's times are the supervisor's: the dispatch of the
 * WORK and the arrival of the RESULT.
 *
 * Aggregation as the Go SDK's defaults: cumulative sums (counters
 * monotonic, up-down counters not), explicit-bucket histograms with the
 * SDK's default bounds, min, max and sum; spans and log records queued
 * (at most OTEL_QUEUE_MAX each, the oldest dropped) until the next export.
 * The resource is upstream's buildResource for "sympozium-controller".
 */
#ifndef OTEL_H
#define OTEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "common/buf.h"

#define OTEL_SERIES_MAX 2000
#define OTEL_QUEUE_MAX  2048

enum otel_signal { OTEL_METRICS, OTEL_TRACES, OTEL_LOGS, OTEL_NSIGNALS };

struct otel;

/* Where the exporter sends (OTEL_EXPORTER_OTLP_ENDPOINT, an http:// or
 * https:// prefix dropped as upstream does: its gRPC exporter is insecure)
 * and the resource's environment (NAMESPACE, POD_NAME, NODE_NAME,
 * INSTANCE_NAME); getenv is the caller's. */
struct otel_conf {
	const char *endpoint;
	const char *namespace, *pod, *node, *instance;
	int64_t start_ns; /* the process start: every sum's start time */
	/* OTEL_RESOURCE_ATTRIBUTES (NULL: none): merged under the
	 * attributes above, as the Go SDK merges resource.Environment() */
	const char *resource_attrs;
};

#define OTEL_PAIRS_MAX 32

/* One "key=value" of OTEL_RESOURCE_ATTRIBUTES or
 * OTEL_EXPORTER_OTLP_HEADERS. */
struct otel_pair {
	char *key, *value;
};

/* Parses such a list: entries separated by commas, blanks around keys and
 * values trimmed, values percent-decoded (the OTel specification's
 * format).  Fills at most max pairs (free with otel_pairs_free()).
 * Returns how many, or -1 (nothing filled) when an entry has no '=' or an
 * empty key, a bad %-escape, a control character, or there are more than
 * max. */
int otel_pairs(const char *s, struct otel_pair *out, size_t max);
void otel_pairs_free(struct otel_pair *p, size_t n);

/* NULL when conf->endpoint is NULL or empty (telemetry off, as upstream's
 * noop providers). */
struct otel *otel_new(const struct otel_conf *conf);
void otel_free(struct otel *o);

/* "host:port" of the collector. */
const char *otel_endpoint(const struct otel *o);

/* Checks tel against controller's signal policy without taking it (the
 * check otel_ingest() starts with; it needs no struct otel, so telemetry
 * is checked whether or not it is exported).  0, or -1 with why in err. */
int otel_check(
        const char *controller, json_object *tel, char *err, size_t errlen);

/* Checks and takes the telemetry of a RESULT of controller, whose WORK was
 * sent at start_ns and answered at end_ns (unix nanoseconds).  Returns 0,
 * or -1 with why in err and nothing taken. */
int otel_ingest(struct otel *o, const char *controller, json_object *tel,
        int64_t start_ns, int64_t end_ns, char *err, size_t errlen);

/* The gRPC method path of a signal's Export. */
const char *otel_path(enum otel_signal sig);

/* Encodes the ExportXServiceRequest of sig at now_ns into out (reset
 * first): the sums and histograms as they stand, or the queued spans or
 * log records, which are then dropped from the queue.  Returns the number
 * of data points, spans or records encoded; 0 (out empty) when there is
 * nothing to send. */
size_t otel_encode(
        struct otel *o, enum otel_signal sig, int64_t now_ns, struct buf *out);

/* Counters for the supervisor's metrics page. */
struct otel_stats {
	uint64_t ingested, refused;            /* RESULTs with telemetry */
	uint64_t series_dropped;               /* over OTEL_SERIES_MAX */
	uint64_t queue_dropped[OTEL_NSIGNALS]; /* spans, records */
};
void otel_stats(const struct otel *o, struct otel_stats *out);

#endif
