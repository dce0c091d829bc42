/*
 * duration.h: durations written the way Go writes them (time.ParseDuration
 * and time.Duration.String), so values in CRDs, flags and logs read the same
 * as in Kubernetes tooling.  Prefix duration_.
 *
 * Units: every value is a signed count of nanoseconds (int64_t, like Go's
 * time.Duration), so the range is about +-292 years (+-2562047h47m16.85s).
 */
#ifndef DURATION_H
#define DURATION_H

#include <stdint.h>

#define DURATION_STR_LEN 40 /* size of duration_format()'s buffer */

/*
 * Parses a Go duration: an optional sign, then one or more decimal numbers,
 * each with an optional fraction and a unit: "300ms", "-1.5h", "+5s",
 * "1h30m", "2h45m10.5s".  Units: "ns", "us", "µs" (U+00B5 or U+03BC), "ms",
 * "s", "m", "h".  "0" (optionally signed) needs no unit.  Fractions are
 * exact to the nanosecond except for very long digit strings (Go's float
 * rounding is reproduced).  Stores the result in *out_ns and returns 0, or
 * returns -1 (leaving *out_ns alone) for NULL, "", a missing or unknown unit
 * ("1", "1x", "1d"), a unit without a number ("h", ".s"), spaces ("1h 30m")
 * or a total outside int64_t nanoseconds.
 */
int duration_parse(const char *s, int64_t *out_ns);

/*
 * Writes ns as Go's Duration.String does into out and returns out:
 * "0s", "1ns", "1.1µs" (U+00B5), "250ms", "1.5s", "1m30s", "1h30m0s",
 * "-1m0s", "2562047h47m16.854775807s".  The longest result is 26 bytes.
 */
char *duration_format(int64_t ns, char out[DURATION_STR_LEN]);

#endif
