/*
 * w3trace.h: W3C trace context (the `traceparent` header form), pure logic.
 * Prefix w3t_.
 *
 * Owns the span context the OTel tracer of the AgentRun reconcile will use:
 * parsing the `otel.dev/traceparent` annotation as OTel Go's TraceContext
 * propagator accepts it, starting a child span under a ParentBased(always
 * on) sampler (upstream's telemetry sampler with ratio 1.0), and formatting
 * the traceparent and the 32-hex trace ID upstream writes to status.traceID.
 * Randomness is injected (the 24 bytes a caller reads from getrandom()), so
 * every function is deterministic and unit-tested (tests/unit/test_w3trace).
 * Used by workers/wtel.c and workers/agentrun_job.c.
 */
#ifndef W3TRACE_H
#define W3TRACE_H

#include <stdbool.h>
#include <stdint.h>

#define W3T_TRACEPARENT_LEN 55 /* "00-" 32 "-" 16 "-" 2 */
#define W3T_RANDOM_LEN      24 /* 16 trace-ID bytes then 8 span-ID bytes */

struct w3t_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t flags; /* bit 0: sampled */
	bool valid;
};

/* Parses s; false (and *out invalid) unless OTel Go's propagator would
 * accept it: lowercase hex, version not "ff", version 00 exactly 55
 * characters, other versions optionally followed by "-...", trace and span
 * IDs not all zero. */
bool w3t_parse(const char *s, struct w3t_ctx *out);

/* Child of parent (may be NULL or invalid: a new root) with the IDs drawn
 * from rnd; sampled as parent-based always-on decides. */
void w3t_child(const struct w3t_ctx *parent, const uint8_t rnd[W3T_RANDOM_LEN],
        struct w3t_ctx *out);

/* "00-<trace>-<span>-<01|00>" into buf (56 bytes); "" when invalid. */
void w3t_format(const struct w3t_ctx *c, char buf[W3T_TRACEPARENT_LEN + 1]);

/* The 32 lowercase hex digits of the trace ID (33 bytes); "" when invalid. */
void w3t_trace_id_hex(const struct w3t_ctx *c, char buf[33]);

#endif
