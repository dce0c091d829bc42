/*
 * hproto.c: the health socket's request and reply lines (hproto.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "ipc/hproto.h"

static const char *const names[HP_NCMDS] = { "status", "workers", "worker",
	"restart", "pause", "resume", "shadow" };

const char *
hp_cmd_name(enum hp_cmd c)
{
	return ((unsigned)c < HP_NCMDS ? names[c] : "unknown");
}

int
hp_cmd_parse(const char *s, enum hp_cmd *out)
{
	for (int i = 0; s != NULL && i < HP_NCMDS; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum hp_cmd)i;
			return (0);
		}
	}
	return (-1);
}

bool
hp_cmd_needs_name(enum hp_cmd c)
{
	return (c == HP_WORKER || c == HP_RESTART || c == HP_PAUSE
	        || c == HP_RESUME);
}

static char *
line_of(json_object *o)
{
	char *s = jx_to_string(o);
	char *line = xasprintf("%s\n", s);

	free(s);
	json_object_put(o);
	return (line);
}

char *
hp_req_encode(const struct hp_req *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(
	        o, "cmd", json_object_new_string(hp_cmd_name(r->cmd)));
	if (hp_cmd_needs_name(r->cmd)) {
		json_object_object_add(
		        o, "name", json_object_new_string(r->name));
	}
	return (line_of(o));
}

/* A name: 1..HP_NAME_MAX-1 bytes of [a-z0-9-]. */
static bool
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= HP_NAME_MAX) {
		return (false);
	}
	return (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n);
}

int
hp_req_decode(const char *line, size_t len, struct hp_req *out, char *err,
        size_t errlen)
{
	json_object *o;
	const char *cmd, *name;

	memset(out, 0, sizeof(*out));
	if (len >= HP_REQ_MAX) {
		snprintf(err, errlen, "request longer than %d bytes",
		        HP_REQ_MAX - 1);
		return (-1);
	}
	if ((o = jx_parse(line, len, 4, err, errlen)) == NULL) {
		return (-1);
	}
	cmd = json_object_is_type(o, json_type_object) ? jx_get_str(o, "cmd")
	                                               : NULL;
	name = json_object_is_type(o, json_type_object) ? jx_get_str(o, "name")
	                                                : NULL;
	if (cmd == NULL || hp_cmd_parse(cmd, &out->cmd) != 0) {
		snprintf(err, errlen,
		        "want {\"cmd\":\"status|workers|worker|"
		        "restart|pause|resume\"}");
		json_object_put(o);
		return (-1);
	}
	if (hp_cmd_needs_name(out->cmd)) {
		if (name == NULL || !valid_name(name)) {
			snprintf(err, errlen,
			        "%s: want a \"name\" of "
			        "[a-z0-9-]",
			        cmd);
			json_object_put(o);
			return (-1);
		}
		snprintf(out->name, sizeof(out->name), "%s", name);
	}
	json_object_put(o);
	return (0);
}

char *
hp_reply_ok(json_object *data)
{
	if (data == NULL || !json_object_is_type(data, json_type_object)) {
		json_object_put(data);
		data = json_object_new_object();
	}
	json_object_object_add(data, "ok", json_object_new_boolean(1));
	return (line_of(data));
}

char *
hp_reply_error(const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return (line_of(o));
}

int
hp_reply_decode(const char *buf, size_t len, json_object **out, char *err,
        size_t errlen)
{
	json_object *o;
	bool ok = false;

	*out = NULL;
	if (len > HP_REPLY_MAX) {
		snprintf(err, errlen, "reply longer than %d bytes",
		        HP_REPLY_MAX);
		return (-1);
	}
	if ((o = jx_parse(buf, len, 0, err, errlen)) == NULL) {
		return (-1);
	}
	if (!json_object_is_type(o, json_type_object)
	        || jx_get_bool(o, "ok", &ok) != 0) {
		snprintf(err, errlen, "invalid reply (no \"ok\")");
		json_object_put(o);
		return (-1);
	}
	if (!ok) {
		const char *e = jx_get_str(o, "error");
		snprintf(err, errlen, "%s", e != NULL ? e : "error");
		json_object_put(o);
		return (-1);
	}
	*out = o;
	return (0);
}
