/*
 * log.c: the process-wide logger of log.h.  State is one static struct set
 * once at start-up (title, format, verbosity, fd).  A record is formatted
 * into a stack buffer, control characters in the message are escaped so a
 * record is always one line, and it is written with a single write(2).
 */
#include "common/log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 8192

static struct {
	char title[64];
	enum log_format format;
	int verbose;
	int fd;
} lg = { "sympozium", LOG_FORMAT_TEXT, 0, -1 };

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warning",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

/* zap's level names (JSON records) */
static const char *const zap_levels[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void
log_init(const char *title, enum log_format format)
{
	log_procinit(title);
	lg.format = format;
	lg.verbose = 0;
}

void
log_procinit(const char *title)
{
	snprintf(lg.title, sizeof(lg.title), "%s", title);
}

void
log_setverbose(int verbose)
{
	lg.verbose = verbose;
}

int
log_getverbose(void)
{
	return (lg.verbose);
}

void
log_setfd(int fd)
{
	lg.fd = fd;
}

int
log_parse_format(const char *s, enum log_format *out)
{
	if (strcmp(s, "text") == 0) {
		*out = LOG_FORMAT_TEXT;
	} else if (strcmp(s, "json") == 0) {
		*out = LOG_FORMAT_JSON;
	} else {
		return (-1);
	}
	return (0);
}

static bool
enabled(enum log_level level)
{
	switch (level) {
	case LOG_LEVEL_ERROR:
		return (true);
	case LOG_LEVEL_WARN:
		return (true);
	case LOG_LEVEL_INFO:
		return (lg.verbose >= 0);
	case LOG_LEVEL_DEBUG:
		return (lg.verbose >= 1);
	}
	return (false);
}

static size_t
stamp(char *out, size_t len)
{
	struct timeval tv;
	struct tm tm;
	size_t n;

	/* snprintf, not strftime: glibc's strftime calls tzset(), which
	 * opens /etc/localtime, and a sandboxed worker may not open files. */
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = (size_t)snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	        tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000));
	return (n < len ? n : len - 1);
}

/* Appends s to out[*pos..len), escaping what would break the line (and, for
 * JSON, the string).  Leaves room for the record's tail. */
static void
put_escaped(char *out, size_t *pos, size_t len, const char *s, bool json)
{
	static const char hex[] = "0123456789abcdef";
	size_t p = *pos;

	for (; *s != '\0' && p + 8 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n' || c == '\r' || c == '\t') {
			out[p++] = '\\';
			out[p++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(out + p, "\\u00", 4);
			out[p + 4] = hex[c >> 4];
			out[p + 5] = hex[c & 15];
			p += 6;
		} else if (json && (c == '"' || c == '\\')) {
			out[p++] = '\\';
			out[p++] = (char)c;
		} else {
			out[p++] = (char)c;
		}
	}
	*pos = p;
}

/* Appends ,"key":"value" (JSON) or  key=value (text, quoted when the
 * value has a blank, a quote or is empty) when value is set (and not
 * empty, unless empty_too). */
static void
put_field(char *out, size_t *pos, size_t len, const char *key,
        const char *value, bool empty_too)
{
	bool quote = lg.format != LOG_FORMAT_JSON && value != NULL
	        && (strpbrk(value, " \"=") != NULL || value[0] == '\0');

	if (value == NULL || (value[0] == '\0' && !empty_too)
	        || *pos + strlen(key) + 8 >= len) {
		return;
	}
	*pos += (size_t)snprintf(out + *pos, len - *pos,
	        lg.format == LOG_FORMAT_JSON ? ",\"%s\":\"" : " %s=%s", key,
	        quote ? "\"" : "");
	put_escaped(out, pos, len, value, true);
	if (lg.format == LOG_FORMAT_JSON || quote) {
		out[(*pos)++] = '"';
	}
}

/* The object's fields, in controller-runtime's order. */
static void
put_obj(char *out, size_t *pos, size_t len, const struct log_obj *o)
{
	if (o == NULL) {
		return;
	}
	put_field(out, pos, len, "controller", o->controller, false);
	put_field(out, pos, len, "controllerGroup", o->group,
	        o->controller != NULL);
	put_field(out, pos, len, "controllerKind", o->kind, false);
	/* {"AgentRun":{"name":..,"namespace":..}}: JSON only */
	if (lg.format == LOG_FORMAT_JSON && o->kind != NULL
	        && o->kind[0] != '\0' && o->name != NULL && o->name[0] != '\0'
	        && *pos + 64 < len) {
		*pos += (size_t)snprintf(out + *pos, len - *pos,
		        ",\"%s\":{\"name\":\"", o->kind);
		put_escaped(out, pos, len, o->name, true);
		out[(*pos)++] = '"';
		if (o->ns != NULL && o->ns[0] != '\0') {
			*pos += (size_t)snprintf(
			        out + *pos, len - *pos, ",\"namespace\":\"");
			put_escaped(out, pos, len, o->ns, true);
			out[(*pos)++] = '"';
		}
		out[(*pos)++] = '}';
	}
	put_field(out, pos, len, "namespace", o->ns, false);
	put_field(out, pos, len, "name", o->name, false);
	put_field(out, pos, len, "reconcileID", o->reconcile_id, false);
	if (o->key != NULL && o->key[0] != '\0') {
		put_field(out, pos, len, o->key, o->value, false);
	}
	put_field(out, pos, len, "error", o->error, false);
}

static void
emit(enum log_level level, const struct log_obj *o, const char *msg)
{
	char line[LOG_LINE_MAX + 256];
	char ts[80];
	size_t pos = 0, room = sizeof(line) - 64;
	int fd = lg.fd >= 0 ? lg.fd : STDERR_FILENO;

	stamp(ts, sizeof(ts));
	if (lg.format == LOG_FORMAT_JSON) {
		pos = (size_t)snprintf(line, sizeof(line),
		        "{\"level\":\"%s\",\"ts\":\"%s\",\"logger\":\"%s\","
		        "\"msg\":\"",
		        zap_levels[level], ts, lg.title);
		put_escaped(line, &pos, room, msg, true);
		line[pos++] = '"';
		put_obj(line, &pos, room, o);
		pos += (size_t)snprintf(line + pos, sizeof(line) - pos,
		        ",\"pid\":%ld}\n", (long)getpid());
	} else {
		pos = (size_t)snprintf(line, sizeof(line),
		        "%s %s %s: ", lg.title, ts, level_names[level]);
		put_escaped(line, &pos, room, msg, false);
		put_obj(line, &pos, room, o);
		line[pos++] = '\n';
	}
	if (write(fd, line, pos) < 0) {
		/* a logger has nowhere to report its own failure */
	}
}

/* The process's current object (log_context()): copies. */
static struct {
	bool set;
	char controller[64], group[128], kind[64], ns[254], name[254], rid[40];
	struct log_obj o;
} ctx;

void
log_context(const struct log_obj *o)
{
	ctx.set = o != NULL;
	if (o == NULL) {
		return;
	}
#define CP(f, src)                                                            \
	snprintf(ctx.f, sizeof(ctx.f), "%s", (src) != NULL ? (src) : "")
	CP(controller, o->controller);
	CP(group, o->group);
	CP(kind, o->kind);
	CP(ns, o->ns);
	CP(name, o->name);
	CP(rid, o->reconcile_id);
#undef CP
	ctx.o = (struct log_obj) { .controller = ctx.controller,
		.group = o->group != NULL ? ctx.group : NULL,
		.kind = ctx.kind,
		.ns = ctx.ns,
		.name = ctx.name,
		.reconcile_id = ctx.rid };
}

void
log_vmsg(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX];
	int n;

	if (!enabled(level)) {
		return;
	}
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0) {
		return;
	}
	if (errnum != 0 && (size_t)n < sizeof(msg)) {
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s",
		        strerror(errnum));
	}
	emit(level, ctx.set ? &ctx.o : NULL, msg);
}

void
log_obj(enum log_level level, const struct log_obj *o, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX];
	va_list ap;
	int saved = errno;

	if (!enabled(level)) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, o, msg);
	errno = saved;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, 0, fmt, ap);
	va_end(ap);
}

#define LOG_FN(name, level, witherr)                                          \
	void name(const char *fmt, ...)                                       \
	{                                                                     \
		va_list ap;                                                   \
		int saved = errno;                                            \
		va_start(ap, fmt);                                            \
		log_vmsg(level, (witherr) ? saved : 0, fmt, ap);              \
		va_end(ap);                                                   \
		errno = saved;                                                \
	}

LOG_FN(log_error, LOG_LEVEL_ERROR, 0)
LOG_FN(log_warn, LOG_LEVEL_WARN, 1)
LOG_FN(log_warnx, LOG_LEVEL_WARN, 0)
LOG_FN(log_info, LOG_LEVEL_INFO, 0)
LOG_FN(log_debug, LOG_LEVEL_DEBUG, 0)

void
fatal(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, 0, fmt, ap);
	va_end(ap);
	exit(1);
}
