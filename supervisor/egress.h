/*
 * egress.h: the supervisor's outbound HTTP beside the API server: one
 * thread that POSTs, so the loop never waits on a slow peer, and never
 * with the API server's credentials.  Two kinds of request:
 *
 *  - egress_post(): a JSON POST, once, 3 s at most (upstream's failure
 *    records to an instance's memory server, persistFailureMemory); its
 *    outcome logged as upstream logs it (success info, failure debug);
 *  - egress_send(): an OTLP/gRPC export.
 *
 * OTLP exports: encoded Export requests (otel.h) to the collector over HTTP/2
 * without TLS (prior knowledge, as upstream's insecure gRPC exporters
 * connect), gRPC-framed, and checks the answer's grpc-status.  The
 * supervisor's loop never waits on the collector: egress_send() queues (at
 * most EGRESS_QUEUE_MAX requests, the oldest dropped) and returns.  A
 * retryable failure (UNAVAILABLE and OTLP's other retryable codes, a refused
 * or broken connection, 429/502/503/504) is retried EGRESS_RETRIES times with
 * doubling waits from 1 s; an export that still fails is dropped (sums are
 * cumulative: the next export carries the totals).  Failures are logged
 * once when exports start failing and once when they recover.  Prefix
 * egress_.
 */
#ifndef EGRESS_H
#define EGRESS_H

#include <stdint.h>

#include "common/buf.h"
#include "supervisor/otel.h"

#define EGRESS_QUEUE_MAX  16
#define EGRESS_TIMEOUT_MS 10000 /* OTLP's default export timeout */
#define EGRESS_RETRIES    5     /* after a retryable failure, 1 s .. 16 s */
#define EGRESS_POST_MS    3000  /* a plain POST (upstream's 3 s) */

struct egress;

/* endpoint: the collector's "host:port" (NULL: no OTLP); headers:
 * OTEL_EXPORTER_OTLP_HEADERS (NULL: none), "key=value" pairs (otel_pairs())
 * sent as gRPC metadata with every export; a list that does not parse, or a
 * key that is no HTTP token, is ignored with a warning. */
struct egress *egress_new(const char *endpoint, const char *headers);

/* Sends what is queued, waiting at most wait_ms for it, then stops the
 * thread.  NULL is accepted. */
void egress_free(struct egress *x, int64_t wait_ms);

/* Queues a JSON POST of json to url (both copied); what names it in the
 * log ("agentrun ns/name"). */
void egress_post(
        struct egress *x, const char *url, const char *json, const char *what);

/* Queues body (its bytes are taken; body is left empty) for sig. */
void egress_send(struct egress *x, enum otel_signal sig, struct buf *body);

struct egress_stats {
	uint64_t sent[OTEL_NSIGNALS], failed[OTEL_NSIGNALS];
	uint64_t dropped; /* queue full */
	uint64_t posts_ok, posts_failed;
};
void egress_stats(struct egress *x, struct egress_stats *out);

#endif
