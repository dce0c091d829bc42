/*
 * fuzz_tzif.c: libFuzzer target for the TZif reader behind CRON_TZ=
 * (cron_zone_parse in workers/cron.c): versions 1 to 4 and the POSIX TZ
 * footer.  Whatever parses must answer offsets for a spread of instants
 * (1900 to 2400, the ends of int64 included) without crashing or
 * undefined behaviour; an error must come with a message.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workers/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int64_t probes[] = { INT64_MIN, -2208988800, -1, 0, 1772953200,
	1792364400, 4102444800, 13569465600, INT64_MAX };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	struct cron_zone *z = cron_zone_parse(data, size, err, sizeof(err));

	if (z == NULL) {
		if (err[0] == '\0') {
			__builtin_trap();
		}
		return (0);
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		(void)cron_zone_offset(z, probes[i]);
	}
	cron_zone_free(z);
	return (0);
}
