/*
 * fuzz_duration.c: libFuzzer target for Go durations (common/duration.c).
 * The input, cut at its first NUL, is parsed; an accepted duration must
 * format (as Go's Duration.String) to text that parses back to the same
 * nanoseconds and formats identically.  The first eight input bytes, read
 * as an int64, are formatted and parsed back the same way, so the whole
 * range (INT64_MIN included) is covered.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/duration.h"
#include "common/xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok)
{
	if (!ok) {
		__builtin_trap();
	}
}

/* format(ns) parses back to ns and formats the same. */
static void
round_trip(int64_t ns)
{
	char a[DURATION_STR_LEN], b[DURATION_STR_LEN];
	int64_t back = ns ^ 1;

	duration_format(ns, a);
	check(strlen(a) > 0 && strlen(a) <= 26);
	check(duration_parse(a, &back) == 0 && back == ns);
	check(strcmp(duration_format(back, b), a) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	int64_t ns = 42, raw;

	if (duration_parse(s, &ns) == 0) {
		round_trip(ns);
	} else {
		check(ns == 42); /* left alone on error */
	}
	if (size >= sizeof(raw)) {
		memcpy(&raw, data, sizeof(raw));
		round_trip(raw);
	}
	free(s);
	return (0);
}
