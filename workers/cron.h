/*
 * cron.h: cron expressions as robfig/cron v3's parser with the fields
 * Minute | Hour | Dom | Month | Dow (spec sympozium-controllers.md 5.3), and
 * the next-fire calculation of its SpecSchedule.Next, time zones included.
 * Prefix cron_.
 *
 * Accepted: exactly 5 fields; per field `*`, `?`, a value, `a-b`, `x/n`
 * (`*` / `a` / `a-b` with a step; `a/n` means `a-max/n`), comma lists;
 * month names JAN-DEC and weekday names SUN-SAT (case-insensitive); an
 * optional `CRON_TZ=<zone> ` or `TZ=<zone> ` prefix.  Rejected with a
 * message: descriptors (`@hourly`, `@every 5m`, ...), 6 fields, weekday 7,
 * `L`, `W`, `#`; and, told apart (CRON_NEVER), expressions that can never
 * fire (`0 0 30 2 *`).
 *
 * Zones are got by cron_parse() from a zone loader: by default
 * cron_zone_load(), which reads TZif files under $TZDIR or
 * /usr/share/zoneinfo (the only I/O here; no setenv/tzset).  A sandboxed
 * worker cannot open files: it passes a loader asking the supervisor
 * (workers/zonecache.h) to cron_parse_with().  No prefix, `Local`, `UTC`
 * and an empty zone mean UTC without asking any loader: the upstream
 * controller evaluates in its process's local zone, UTC in its container.
 */
#ifndef CRON_H
#define CRON_H

#include <stddef.h>
#include <stdint.h>

struct cron;      /* a parsed expression (opaque) */
struct cron_zone; /* a loaded time zone (opaque) */

/*
 * Parses expr.  Returns 0 and *out (caller frees with cron_free()), or -1
 * with a one-line message in err and *out NULL; CRON_NEVER (and a message)
 * for a well-formed expression no date can match (`0 0 30 2 *`), which
 * robfig accepts and whose Next is the zero time.
 */
#define CRON_NEVER (-2)

int cron_parse(const char *expr, struct cron **out, char *err, size_t errlen);
void cron_free(struct cron *c);

/*
 * A zone loader: returns the zone called name (never "", "UTC" or
 * "Local"), a new one the caller frees with cron_zone_free(), or NULL with
 * a one-line message in err (e.g. `unknown time zone "X"`).
 */
typedef struct cron_zone *(*cron_zone_loader_fn)(
        const char *name, void *arg, char *err, size_t errlen);

/* Sets the loader cron_parse() uses (process-wide; fn NULL: the file
 * reader cron_zone_load()); arg is borrowed and passed to fn.  For unit
 * tests and fuzzers. */
void cron_set_zone_loader(cron_zone_loader_fn fn, void *arg);
/* cron_parse() with loader fn (arg borrowed); fn NULL: the one set by
 * cron_set_zone_loader(). */
int cron_parse_with(const char *expr, cron_zone_loader_fn fn, void *arg,
        struct cron **out, char *err, size_t errlen);

/*
 * The earliest matching minute strictly after after_ms (unix ms), as
 * robfig's Next: after is first moved to the next whole second.  Returns 0
 * with *next_ms, or -1 when nothing matches within five years of after.
 */
int cron_next(const struct cron *c, int64_t after_ms, int64_t *next_ms);

/*
 * Zones.  cron_zone_load() reads <dir>/<name> (dir: $TZDIR, else
 * /usr/share/zoneinfo); names that are absolute or contain ".." are
 * refused; "", "UTC" and "Local" give UTC.  cron_zone_parse() reads TZif
 * data (versions 1 to 4, with the POSIX TZ footer for times after the last
 * transition).  Both return a zone (caller frees with cron_zone_free()) or
 * NULL with a message in err.
 */
struct cron_zone *cron_zone_load(const char *name, char *err, size_t errlen);
struct cron_zone *cron_zone_parse(
        const void *data, size_t len, char *err, size_t errlen);
void cron_zone_free(struct cron_zone *z);
/* A deep copy of z (caller frees with cron_zone_free()). */
struct cron_zone *cron_zone_dup(const struct cron_zone *z);
/* The UTC offset in seconds of zone z (NULL: UTC) at unix second t. */
int cron_zone_offset(const struct cron_zone *z, int64_t t);

#endif
