/*
 * fuzz_otel.c: libFuzzer target for the supervisor's OpenTelemetry signal
 * policy and encoder (supervisor/otel.c).  The first byte picks the
 * controller (agentrun, config, or one with no signals), the rest is a
 * RESULT's "telemetry" text.  Refused telemetry must say why and leave
 * nothing to export; taken telemetry must encode into Export requests that
 * protobuf-c reads back.  Everything is freed, so leaks show up under
 * ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "supervisor/otel.h"
#include "supervisor/proto/otlp.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
round_trip(struct otel *o)
{
	struct buf b;

	buf_init(&b);
	for (int s = 0; s < OTEL_NSIGNALS; s++) {
		ProtobufCMessage *m;

		if (otel_encode(o, (enum otel_signal)s, 1, &b) == 0) {
			continue;
		}
		m = s == OTEL_METRICS
		        ? &otlp__export_metrics_service_request__unpack(
		                NULL, b.len, (const uint8_t *)b.data)
		                   ->base
		        : s == OTEL_TRACES
		        ? &otlp__export_trace_service_request__unpack(
		                NULL, b.len, (const uint8_t *)b.data)
		                   ->base
		        : &otlp__export_logs_service_request__unpack(
		                NULL, b.len, (const uint8_t *)b.data)
		                   ->base;
		if (m == NULL) {
			__builtin_trap();
		}
		protobuf_c_message_free_unpacked(m, NULL);
	}
	buf_fini(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ctl[] = { "agentrun", "config", "skillpack" };
	struct otel_conf c
	        = { "127.0.0.1:4317", "ns", "pod", NULL, NULL, 0, NULL };
	struct otel *o;
	json_object *t;
	char err[256] = "", *text;
	struct buf b;

	if (size < 1) {
		return (0);
	}
	text = strndup((const char *)data + 1, size - 1);
	t = text != NULL ? json_tokener_parse(text) : NULL;
	free(text);
	if (t == NULL) {
		return (0);
	}
	o = otel_new(&c);
	buf_init(&b);
	if (otel_ingest(o, ctl[data[0] % 3], t, 10, 20, err, sizeof(err))
	        != 0) {
		if (err[0] == '\0') {
			__builtin_trap();
		}
		for (int s = 0; s < OTEL_NSIGNALS; s++) {
			if (otel_encode(o, (enum otel_signal)s, 1, &b) != 0) {
				__builtin_trap();
			}
		}
	} else {
		round_trip(o);
	}
	buf_fini(&b);
	json_object_put(t);
	otel_free(o);
	return (0);
}
