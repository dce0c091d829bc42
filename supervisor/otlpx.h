/*
 * otlpx.h: the OTLP/gRPC exporter's transport: one thread that POSTs
 * encoded Export requests (otel.h) to the collector over HTTP/2 without
 * TLS (prior knowledge, as upstream's insecure gRPC exporters connect),
 * gRPC-framed, and checks the answer's grpc-status.  The supervisor's loop
 * never waits on the collector: otlpx_send() queues (at most
 * OTLPX_QUEUE_MAX requests, the oldest dropped) and returns.  A retryable
 * failure (UNAVAILABLE and OTLP's other retryable codes, a refused or
 * broken connection, 429/502/503/504) is retried OTLPX_RETRIES times with
 * doubling waits from 1 s; an export that still fails is dropped (sums are
 * cumulative: the next export carries the totals).  Failures are logged
 * once when exports start failing and once when they recover.  Prefix
 * otlpx_.
 */
#ifndef OTLPX_H
#define OTLPX_H

#include <stdint.h>

#include "common/buf.h"
#include "supervisor/otel.h"

#define OTLPX_QUEUE_MAX  16
#define OTLPX_TIMEOUT_MS 10000 /* OTLP's default export timeout */
#define OTLPX_RETRIES    5     /* after a retryable failure, 1 s .. 16 s */

struct otlpx;

/* endpoint: "host:port"; headers: OTEL_EXPORTER_OTLP_HEADERS (NULL:
 * none), "key=value" pairs (otel_pairs()) sent as gRPC metadata with every
 * export; a list that does not parse, or a key that is no HTTP token, is
 * ignored with a warning. */
struct otlpx *otlpx_new(const char *endpoint, const char *headers);

/* Sends what is queued, waiting at most wait_ms for it, then stops the
 * thread.  NULL is accepted. */
void otlpx_free(struct otlpx *x, int64_t wait_ms);

/* Queues body (its bytes are taken; body is left empty) for sig. */
void otlpx_send(struct otlpx *x, enum otel_signal sig, struct buf *body);

struct otlpx_stats {
	uint64_t sent[OTEL_NSIGNALS], failed[OTEL_NSIGNALS];
	uint64_t dropped; /* queue full */
};
void otlpx_stats(struct otlpx *x, struct otlpx_stats *out);

#endif
