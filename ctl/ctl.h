/*
 * ctl.h: bin/sympoziumctl, the operator's CLI over the supervisor's
 * health socket (protocol: ipc/hproto.h).  Prefix ctl_.
 *   ctl.c     pure: the command line, and the replies rendered as text;
 *   client.c  the one request over the socket, bounded in time;
 *   main.c    the program (one shot or --watch).
 */
#ifndef CTL_H
#define CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "ipc/hproto.h"

#define CTL_DEFAULT_TIMEOUT_MS 5000
#define CTL_PATH_MAX           4096

/* Exit codes. */
enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_ERROR = 1,   /* the supervisor answered an error */
	CTL_EXIT_USAGE = 2,   /* bad command line */
	CTL_EXIT_CONNECT = 3, /* no socket, refused, timed out, bad reply */
};

struct ctl_opts {
	struct hp_req req;
	char socket[CTL_PATH_MAX];
	bool json;           /* print the raw reply */
	bool watch;          /* refresh until interrupted */
	int64_t interval_ms; /* --watch SECONDS (default 2 s) */
	long count;          /* --count N: stop after N refreshes (0: never) */
	int64_t timeout_ms;  /* --timeout SECONDS */
	bool help;
};

/* The default socket: SYMPOZIUM_HEALTH_SOCKET when set (env may be NULL:
 * not set), else TMPDIR/sympoziumd-UID/health.sock (tmpdir NULL: /tmp),
 * which is where sympoziumd serves it by default. */
void ctl_default_socket(char *out, size_t len, const char *env,
        const char *tmpdir, unsigned uid);

/* Parses argv (argv[0] skipped) into o, after ctl_default_socket() has
 * filled o->socket.  Returns 0, or -1 with a one-line reason in err. */
int ctl_parse_args(int argc, char *const *argv, struct ctl_opts *o, char *err,
        size_t errlen);
/* The --help text. */
const char *ctl_usage(void);

/* Durations as people read them: "-" (ms < 0), "850ms", "3.1s", "2m3s",
 * "1h2m", "3d4h".  Returns out. */
char *ctl_fmt_dur(int64_t ms, char *out, size_t len);

/* Appends the text rendering of a successful reply to command cmd. */
void ctl_format(enum hp_cmd cmd, json_object *reply, struct buf *out);
void ctl_format_status(json_object *reply, struct buf *out);
void ctl_format_workers(json_object *reply, struct buf *out);
void ctl_format_worker(json_object *reply, struct buf *out);
void ctl_format_shadow(json_object *reply, struct buf *out);

/* client.c: sends req to the socket at path and reads the reply within
 * timeout_ms.  Returns CTL_EXIT_OK with *reply (caller puts) and the raw
 * line in raw (may be NULL), CTL_EXIT_ERROR with the supervisor's error
 * in err, or CTL_EXIT_CONNECT with why in err. */
int ctl_call(const char *path, const struct hp_req *req, int64_t timeout_ms,
        json_object **reply, struct buf *raw, char *err, size_t errlen);

#endif
