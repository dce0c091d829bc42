/*
 * zoneinfo.c: owns the supervisor's zoneinfo views (see zoneinfo.h): the
 * name check, the bounded read of one zone file, the built-in UTC zone
 * and the LRU table of base64-encoded zones.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/xmalloc.h"
#include "supervisor/zoneinfo.h"

struct entry {
	char *name;
	char *b64;
	uint64_t used; /* tick of the last lookup */
};

struct zi {
	char *dir;
	struct entry tab[ZI_CACHE_MAX];
	size_t n;
	uint64_t tick;
	size_t reads;
};

/* TZif version 1, no transitions, one type: UTC+0 "UTC". */
static const unsigned char utc_tzif[] = { 'T', 'Z', 'i', 'f', 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0,       /* version, reserved */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* isutcnt isstdcnt leapcnt */
	0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4, /* timecnt typecnt charcnt */
	0, 0, 0, 0, 0, 0,                   /* utoff 0, isdst 0, idx 0 */
	'U', 'T', 'C', 0 };

struct zi *
zi_new(const char *dir)
{
	struct zi *z = xcalloc(1, sizeof(*z));

	if (dir == NULL) {
		dir = getenv("TZDIR");
	}
	z->dir = xstrdup(
	        dir != NULL && dir[0] != '\0' ? dir : "/usr/share/zoneinfo");
	return (z);
}

void
zi_free(struct zi *z)
{
	if (z == NULL) {
		return;
	}
	for (size_t i = 0; i < z->n; i++) {
		free(z->tab[i].name);
		free(z->tab[i].b64);
	}
	free(z->dir);
	free(z);
}

struct zi *
zi_default(void)
{
	static struct zi *def;

	if (def == NULL) {
		def = zi_new(NULL);
	}
	return (def);
}

size_t
zi_cached(const struct zi *z)
{
	return (z->n);
}

size_t
zi_reads(const struct zi *z)
{
	return (z->reads);
}

/* Reads at most IPC_DATA_MAX bytes of regular file fd into *out. */
static enum ipc_view_status
read_fd(int fd, const char *name, unsigned char **out, size_t *len, char *err,
        size_t errlen)
{
	struct stat st;
	unsigned char *b;
	size_t n = 0;
	ssize_t r;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		return (IPC_VS_NOT_FOUND); /* a directory ("America") */
	}
	if (st.st_size > (off_t)IPC_DATA_MAX) {
		errmsg(err, errlen,
		        "time zone \"%s\" is too large (over %u "
		        "bytes)",
		        name, IPC_DATA_MAX);
		return (IPC_VS_ERROR);
	}
	b = xmalloc(IPC_DATA_MAX + 1);
	while (n <= IPC_DATA_MAX
	        && (r = read(fd, b + n, IPC_DATA_MAX + 1 - n)) != 0) {
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			free(b);
			errmsg(err, errlen, "cannot read time zone \"%s\": %s",
			        name, strerror(errno));
			return (IPC_VS_ERROR);
		}
		n += (size_t)r;
	}
	if (n > IPC_DATA_MAX || n < 4 || memcmp(b, "TZif", 4) != 0) {
		free(b);
		errmsg(err, errlen, "time zone \"%s\" is %s", name,
		        n > IPC_DATA_MAX ? "too large" : "not a TZif file");
		return (IPC_VS_ERROR);
	}
	*out = b;
	*len = n;
	return (IPC_VS_OK);
}

/* Reads zone name (valid) from the directory into *b64 (caller frees). */
static enum ipc_view_status
load(struct zi *z, const char *name, char **b64, char *err, size_t errlen)
{
	enum ipc_view_status st;
	unsigned char *data = NULL;
	size_t len = 0;
	char *path;
	int fd;

	if (strcmp(name, "UTC") == 0 || strcmp(name, "Local") == 0) {
		*b64 = ipc_b64_encode(utc_tzif, sizeof(utc_tzif));
		return (IPC_VS_OK);
	}
	path = xasprintf("%s/%s", z->dir, name);
	z->reads++;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	free(path);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			return (IPC_VS_NOT_FOUND);
		}
		errmsg(err, errlen, "cannot open time zone \"%s\": %s", name,
		        strerror(errno));
		return (IPC_VS_ERROR);
	}
	st = read_fd(fd, name, &data, &len, err, errlen);
	close(fd);
	if (st == IPC_VS_OK) {
		*b64 = ipc_b64_encode(data, len);
		free(data);
	}
	return (st);
}

/* The table slot for a new entry: a free one, else the least recently
 * used (emptied). */
static struct entry *
slot(struct zi *z)
{
	struct entry *e = &z->tab[0];

	if (z->n < ZI_CACHE_MAX) {
		return (&z->tab[z->n++]);
	}
	for (size_t i = 1; i < z->n; i++) {
		if (z->tab[i].used < e->used) {
			e = &z->tab[i];
		}
	}
	free(e->name);
	free(e->b64);
	return (e);
}

enum ipc_view_status
zi_lookup(struct zi *z, const char *name, const char **b64, char *err,
        size_t errlen)
{
	enum ipc_view_status st;
	struct entry *e;
	char *data = NULL;

	*b64 = NULL;
	if (!ipc_zone_name_valid(name)) {
		errmsg(err, errlen, "invalid time zone name \"%.64s\"",
		        name != NULL ? name : "");
		return (IPC_VS_ERROR);
	}
	for (size_t i = 0; i < z->n; i++) {
		if (strcmp(z->tab[i].name, name) == 0) {
			z->tab[i].used = ++z->tick;
			*b64 = z->tab[i].b64;
			return (IPC_VS_OK);
		}
	}
	if ((st = load(z, name, &data, err, errlen)) != IPC_VS_OK) {
		return (st);
	}
	e = slot(z);
	*e = (struct entry) { xstrdup(name), data, ++z->tick };
	*b64 = e->b64;
	return (IPC_VS_OK);
}

json_object *
zi_reply(struct zi *z, int64_t id, const char *name)
{
	struct ipc_view_reply r = { .id = id };
	char err[256];

	r.status = zi_lookup(z, name, &r.data, err, sizeof(err));
	if (r.status == IPC_VS_ERROR) {
		r.message = err;
	} else if (r.status == IPC_VS_NOT_FOUND) {
		r.message = "unknown time zone";
	}
	return (ipc_view_reply_new(&r));
}
