/*
 * kstatus.c: every non-2xx body kubesim sends is a Status built here
 * (spec A.6, H "error fidelity"), and the response helpers that put a
 * Status or an object into a struct kresp.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "kubesim/ksrv.h"

#define CT_JSON "application/json"

void
kresp_init(struct kresp *rs)
{
	memset(rs, 0, sizeof(*rs));
	buf_init(&rs->body);
	rs->code = 200;
	rs->ctype = CT_JSON;
}

void
kresp_fini(struct kresp *rs)
{
	buf_fini(&rs->body);
	free(rs->warning);
	if (rs->watch != NULL) {
		kwatch_free(rs->watch);
	}
	memset(rs, 0, sizeof(*rs));
}

json_object *
kstatus_new(int code, const char *reason, const char *message)
{
	json_object *st = json_object_new_object();

	json_object_object_add(st, "kind", json_object_new_string("Status"));
	json_object_object_add(st, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(st, "metadata", json_object_new_object());
	json_object_object_add(st, "status",
	        json_object_new_string(code < 400 ? "Success" : "Failure"));
	if (message != NULL) {
		json_object_object_add(
		        st, "message", json_object_new_string(message));
	}
	if (reason != NULL && reason[0] != '\0') {
		json_object_object_add(
		        st, "reason", json_object_new_string(reason));
	}
	json_object_object_add(st, "code", json_object_new_int(code));
	return (st);
}

static json_object *
details(json_object *st)
{
	json_object *d = json_object_object_get(st, "details");

	if (d == NULL) {
		d = json_object_new_object();
		json_object_object_add(st, "details", d);
	}
	return (d);
}

static void
add_str(json_object *o, const char *k, const char *v)
{
	if (v != NULL) {
		json_object_object_add(o, k, json_object_new_string(v));
	}
}

void
kstatus_details(json_object *st, const char *name, const char *group,
        const char *kind, const char *uid)
{
	json_object *d = details(st);

	add_str(d, "name", name);
	if (group != NULL && group[0] != '\0') {
		add_str(d, "group", group);
	}
	add_str(d, "kind", kind);
	add_str(d, "uid", uid);
}

void
kstatus_causes(json_object *st, const struct kschema_cause *c, size_t n)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		add_str(o, "reason", c[i].reason);
		add_str(o, "message", c[i].message);
		add_str(o, "field", c[i].field);
		json_object_array_add(arr, o);
	}
	json_object_object_add(details(st), "causes", arr);
}

void
kstatus_retry(json_object *st, int seconds)
{
	json_object_object_add(details(st), "retryAfterSeconds",
	        json_object_new_int(seconds));
}

json_object *
kstatus_success(
        const char *name, const char *group, const char *kind, const char *uid)
{
	json_object *st = kstatus_new(200, NULL, NULL);

	kstatus_details(st, name, group, kind, uid);
	return (st);
}

void
kresp_status(struct kresp *rs, json_object *st)
{
	int64_t code = 500, retry = 0;
	json_object *d = json_object_object_get(st, "details");

	jx_get_int(st, "code", &code);
	if (d != NULL) {
		jx_get_int(d, "retryAfterSeconds", &retry);
	}
	rs->code = (int)code;
	rs->retry_after = (int)retry;
	rs->ctype = CT_JSON;
	buf_reset(&rs->body);
	buf_puts(&rs->body,
	        json_object_to_json_string_ext(st,
	                JSON_C_TO_STRING_PLAIN
	                        | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(st);
}

int
kresp_error(
        struct kresp *rs, int code, const char *reason, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = NULL;
	}
	va_end(ap);
	kresp_status(rs, kstatus_new(code, reason, msg != NULL ? msg : ""));
	free(msg);
	return (code);
}

int
kresp_not_found(struct kresp *rs, const struct kres *res, const char *name)
{
	json_object *st;
	char *msg;

	if (res->group[0] != '\0') {
		msg = xasprintf("%s.%s \"%s\" not found", res->plural,
		        res->group, name);
	} else {
		msg = xasprintf("%s \"%s\" not found", res->plural, name);
	}
	st = kstatus_new(404, "NotFound", msg);
	kstatus_details(st, name, res->group, res->plural, NULL);
	kresp_status(rs, st);
	free(msg);
	return (404);
}

void
kresp_json(struct kresp *rs, int code, json_object *obj)
{
	rs->code = code;
	rs->ctype = CT_JSON;
	buf_reset(&rs->body);
	buf_puts(&rs->body,
	        json_object_to_json_string_ext(obj,
	                JSON_C_TO_STRING_PLAIN
	                        | JSON_C_TO_STRING_NOSLASHESCAPE));
}
