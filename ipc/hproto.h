/*
 * hproto.h: the health socket's protocol, shared by the supervisor
 * (supervisor/health.c) and bin/sympoziumctl (ctl/).  Prefix hp_.  Pure.
 *
 * One request per connection: the client sends one JSON object on one
 * line (at most HP_REQ_MAX bytes, '\n' included), the server answers one
 * JSON object on one line (at most HP_REPLY_MAX bytes) and closes.
 *   request:  {"cmd":"status"|"workers"|"worker"|"restart"|"pause"|
 *              "resume", "name":"..."}   (name for the last four)
 *   reply:    {"ok":true, ...}  or  {"ok":false,"error":"why"}
 * worker and restart name a worker slot ("CONTROLLER-INDEX", e.g.
 * "testctl-0"; "CONTROLLER" alone means all its slots for restart and its
 * first slot for worker); pause and resume name a controller.
 */
#ifndef HPROTO_H
#define HPROTO_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#define HP_REQ_MAX   4096
#define HP_REPLY_MAX (4 * 1024 * 1024)
#define HP_NAME_MAX  128

enum hp_cmd {
	HP_STATUS,
	HP_WORKERS,
	HP_WORKER,
	HP_RESTART,
	HP_PAUSE,
	HP_RESUME,
	HP_SHADOW, /* shadow mode's pending writes (supervisor/shadow.h) */
	HP_NCMDS,
};

struct hp_req {
	enum hp_cmd cmd;
	char name[HP_NAME_MAX]; /* "" when the command takes none */
};

/* The command's wire name; "unknown" when out of range. */
const char *hp_cmd_name(enum hp_cmd c);
/* Parses a wire name; 0, or -1 when unknown. */
int hp_cmd_parse(const char *s, enum hp_cmd *out);
/* Whether c takes a name. */
bool hp_cmd_needs_name(enum hp_cmd c);

/* One request line, '\n'-terminated.  Caller frees with free(). */
char *hp_req_encode(const struct hp_req *r);
/* Decodes one request line (the '\n' may be included or not).  Returns 0,
 * or -1 with a one-line reason in err (too long, not JSON, not an object,
 * unknown command, missing or bad name). */
int hp_req_decode(const char *line, size_t len, struct hp_req *out, char *err,
        size_t errlen);

/* The reply line for data (taken; NULL: an empty object): "ok":true is
 * added.  Caller frees with free(). */
char *hp_reply_ok(json_object *data);
/* The error reply line.  Caller frees with free(). */
char *hp_reply_error(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));
/* Decodes a reply.  Returns 0 with *out (owned; caller puts) for
 * "ok":true, -1 with the server's error (or why the reply is invalid) in
 * err otherwise (*out NULL). */
int hp_reply_decode(const char *buf, size_t len, json_object **out, char *err,
        size_t errlen);

#endif
