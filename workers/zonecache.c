/*
 * zonecache.c: owns a worker's table of parsed time zones and the cron
 * zone loader that fills it from zoneinfo views (see zonecache.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "workers/view.h"
#include "workers/zonecache.h"

struct zentry {
	char *name;
	struct cron_zone *zone;
	uint64_t used;
};

static struct zentry tab[ZC_MAX];
static size_t ntab;
static uint64_t tick;

size_t
zc_count(void)
{
	return (ntab);
}

void
zc_reset(void)
{
	for (size_t i = 0; i < ntab; i++) {
		free(tab[i].name);
		cron_zone_free(tab[i].zone);
	}
	memset(tab, 0, sizeof(tab));
	ntab = 0;
}

static struct zentry *
slot(void)
{
	struct zentry *e = &tab[0];

	if (ntab < ZC_MAX) {
		return (&tab[ntab++]);
	}
	for (size_t i = 1; i < ntab; i++) {
		if (tab[i].used < e->used) {
			e = &tab[i];
		}
	}
	free(e->name);
	cron_zone_free(e->zone);
	return (e);
}

/* Asks the view for name and parses the answer. */
static struct cron_zone *
fetch(struct view *v, const char *name, char *err, size_t errlen)
{
	unsigned char *data = NULL;
	struct cron_zone *z = NULL;
	char sub[256];
	size_t len = 0;
	int rc;

	if (v == NULL) {
		errmsg(err, errlen, "unknown time zone \"%s\" (no view)",
		        name);
		return (NULL);
	}
	rc = view_zoneinfo(v, name, &data, &len, sub, sizeof(sub));
	if (rc < 0) {
		errmsg(err, errlen, "unknown time zone \"%s\" (%s)", name,
		        sub);
	} else if (rc > 0) {
		errmsg(err, errlen, "unknown time zone \"%s\"", name);
	} else if ((z = cron_zone_parse(data, len, sub, sizeof(sub)))
	        == NULL) {
		errmsg(err, errlen, "unknown time zone \"%s\" (%s)", name,
		        sub);
	}
	free(data);
	return (z);
}

struct cron_zone *
zc_load(const char *name, void *arg, char *err, size_t errlen)
{
	struct cron_zone *z;
	struct zentry *e;

	if (!ipc_zone_name_valid(name)) {
		errmsg(err, errlen, "invalid location name \"%s\"", name);
		return (NULL);
	}
	for (size_t i = 0; i < ntab; i++) {
		if (strcmp(tab[i].name, name) == 0) {
			tab[i].used = ++tick;
			return (cron_zone_dup(tab[i].zone));
		}
	}
	if ((z = fetch(arg, name, err, errlen)) == NULL) {
		return (NULL);
	}
	e = slot();
	*e = (struct zentry) { xstrdup(name), z, ++tick };
	return (cron_zone_dup(z));
}
