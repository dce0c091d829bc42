/*
 * fuzz_agentrun_result.c: libFuzzer target for the result, usage and
 * memory markers of an agent log (workers/agentrun_result.c).  The input
 * (cut at its first NUL, as a log read from the API is a C string) is
 * parsed; the result must be consistent: never both a result and an
 * error, has_usage exactly when input or output tokens are positive,
 * total = input + output, an error at most 503 bytes (500 and "...") when
 * it came from the 429 fallback, memory trimmed and non-empty, and the
 * tail of the log a suffix of it starting a line.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "workers/agentrun_result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok)
{
	if (!ok) {
		__builtin_trap();
	}
}

static void
check_result(const char *log)
{
	struct agentrun_result r;

	agentrun_result_parse(log, &r);
	check(r.result == NULL || r.error == NULL);
	check(r.has_usage == (r.input_tokens > 0 || r.output_tokens > 0));
	check(r.result == NULL || r.result[0] != '\0');
	check(r.error == NULL || r.error[0] != '\0'
	        || strstr(log, "__SYMPOZIUM_RESULT__") == NULL);
	if (strstr(log, "__SYMPOZIUM_RESULT__") == NULL) {
		check(!r.has_usage && r.result == NULL);
		check(r.error == NULL || strlen(r.error) <= 503);
	}
	agentrun_result_fini(&r);
	check(r.result == NULL && r.error == NULL);
}

static void
check_memory(const char *log)
{
	char *m = agentrun_result_memory(log);
	size_t n;

	if (m != NULL) {
		n = strlen(m);
		check(n > 0 && !isspace((unsigned char)m[0])
		        && !isspace((unsigned char)m[n - 1]));
		check(strstr(log, m) != NULL);
	}
	free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *log = xstrndup((const char *)data, size);
	const char *t;

	check_result(log);
	check_memory(log);
	for (int n = 0; n <= 3; n++) {
		t = agentrun_result_tail(log, n);
		check(t >= log && t <= log + strlen(log));
		check(t == log || t[-1] == '\n');
	}
	free(log);
	return (0);
}
