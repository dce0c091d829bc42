/*
 * log.h: one line per record on stderr, process title first, then the
 * time, the level and the message:
 *
 *   sympoziumd 2026-11-30T15:18:26.123Z info: watch started for jobs
 *
 * or, with --log-format=json, one JSON object per line, with the field
 * names and level names (debug, info, warn, error) of zap, the logger of
 * controller-runtime:
 *
 *   {"level":"info","ts":"2026-11-30T15:18:26.123Z","logger":"sympoziumd",
 *    "msg":"watch started for jobs","pid":42}
 *
 * A record about an object (log_obj()) carries controller-runtime's
 * reconcile fields after msg, in JSON as fields, in text as key=value
 * pairs after the message:
 *
 *   {"level":"error","ts":"...","logger":"sympoziumd","msg":"Reconciler
 *    error","controller":"agentrun","controllerGroup":"sympozium.ai",
 *    "controllerKind":"AgentRun","AgentRun":{"name":"r","namespace":"ns"},
 *    "namespace":"ns","name":"r","reconcileID":"6f1c...","error":"...",
 *    "pid":42}
 *   sympoziumd 2026-... error: Reconciler error controller=agentrun
 *    controllerGroup=sympozium.ai controllerKind=AgentRun namespace=ns
 *    name=r reconcileID=6f1c... error="..."
 *
 * The API follows OpenBSD's log.h.  log_warn() and fatal() append
 * strerror(errno); the x variants do not.  The level is checked before
 * formatting.  Records are written with one write(2), so lines from
 * several threads or processes sharing stderr do not interleave.
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

enum log_format {
	LOG_FORMAT_TEXT = 0,
	LOG_FORMAT_JSON,
};

/* Sets the title ("sympoziumd", "worker[agentrun]") and the format; the
 * level starts at info. */
void log_init(const char *title, enum log_format format);
void log_procinit(const char *title);
/* 0 = info, 1 = debug; negative values keep only warnings and errors. */
void log_setverbose(int verbose);
int log_getverbose(void);
/* Parses "text" or "json"; returns 0, or -1 for anything else. */
int log_parse_format(const char *s, enum log_format *out);
/* Sends records to fd instead of stderr (tests).  -1 restores stderr. */
void log_setfd(int fd);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_msg(enum log_level level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, int errnum, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

/* What a record is about (controller-runtime's reconcile logger values);
 * every field may be NULL or "" (left out).  error is the error, its own
 * field; key/value one more field (such as "result"). */
struct log_obj {
	const char *controller, *group, *kind;
	const char *ns, *name;
	const char *reconcile_id;
	const char *error;
	const char *key, *value;
};

void log_obj(enum log_level level, const struct log_obj *o, const char *fmt,
        ...) __attribute__((format(printf, 3, 4)));
/* Sets (o, copied) or clears (NULL) the object every later record of this
 * process is about, as a reconcile's logger carries it (a worker sets it
 * around each reconcile). */
void log_context(const struct log_obj *o);

void fatal(const char *fmt, ...)
        __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
        __attribute__((format(printf, 1, 2), noreturn));

#endif
