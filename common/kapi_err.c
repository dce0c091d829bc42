/*
 * kapi_err.c: turns an HTTP answer (or a transport failure) into the small
 * error set of kapi_err.h.  A Status body is trusted first (its reason,
 * then its code); anything else is synthesised from the HTTP code as
 * apimachinery's NewGenericServerResponse does (spec kube-api.md A.6), and
 * a text body is kept, trimmed and bounded, as the message.  Pure logic:
 * no I/O, except the clock read for an HTTP-date Retry-After.
 */
#include "common/kapi_err.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "common/xmalloc.h"

/* Longest text body kept as a message, and the largest body parsed. */
#define MSG_MAX   1024
#define PARSE_MAX (1024 * 1024)
/* A Retry-After beyond a day is treated as a day. */
#define RETRY_AFTER_MAX 86400

static const struct {
	const char *reason;
	enum kapi_rc rc;
} reasons[] = {
	{ "NotFound", KAPI_ENOTFOUND },
	{ "AlreadyExists", KAPI_EEXISTS },
	{ "Conflict", KAPI_ECONFLICT },
	{ "Invalid", KAPI_EINVALID },
	{ "Expired", KAPI_EGONE },
	{ "Gone", KAPI_EGONE },
	{ "TooManyRequests", KAPI_ETOOMANY },
	{ "Unauthorized", KAPI_EUNAUTHORIZED },
	{ "Forbidden", KAPI_EFORBIDDEN },
	{ "Timeout", KAPI_ETIMEOUT },
	{ "ServerTimeout", KAPI_ETIMEOUT },
	{ "BadRequest", KAPI_EBADREQUEST },
	{ "MethodNotAllowed", KAPI_EBADREQUEST },
	{ "NotAcceptable", KAPI_EBADREQUEST },
	{ "UnsupportedMediaType", KAPI_EBADREQUEST },
	{ "RequestEntityTooLarge", KAPI_EBADREQUEST },
	{ "InternalError", KAPI_ESERVER },
	{ "ServiceUnavailable", KAPI_ESERVER },
};

static const struct {
	long code;
	const char *reason;
	enum kapi_rc rc;
	const char *message;
} codes[] = {
	{ 400, "BadRequest", KAPI_EBADREQUEST,
	        "the server rejected our request for an unknown reason" },
	{ 401, "Unauthorized", KAPI_EUNAUTHORIZED,
	        "the server has asked for the client to provide credentials" },
	{ 403, "Forbidden", KAPI_EFORBIDDEN,
	        "the server does not allow access to the requested resource" },
	{ 404, "NotFound", KAPI_ENOTFOUND,
	        "the server could not find the requested resource" },
	{ 405, "MethodNotAllowed", KAPI_EBADREQUEST,
	        "the server does not allow this method on the requested "
	        "resource" },
	{ 406, "NotAcceptable", KAPI_EBADREQUEST,
	        "the server was unable to respond with a content type that "
	        "the "
	        "client supports" },
	{ 409, "Conflict", KAPI_ECONFLICT, "the server reported a conflict" },
	{ 410, "Gone", KAPI_EGONE,
	        "the server has asked for the client to start over" },
	{ 413, "RequestEntityTooLarge", KAPI_EBADREQUEST,
	        "the server has rejected the request due to its size" },
	{ 415, "UnsupportedMediaType", KAPI_EBADREQUEST,
	        "the server was unable to handle the media type requested" },
	{ 422, "Invalid", KAPI_EINVALID,
	        "the server rejected our request due to an error in our "
	        "request" },
	{ 429, "TooManyRequests", KAPI_ETOOMANY,
	        "the server has received too many requests and has asked us "
	        "to "
	        "try again later" },
	{ 500, "InternalError", KAPI_ESERVER,
	        "an error on the server has prevented the request from "
	        "succeeding" },
	{ 503, "ServiceUnavailable", KAPI_ESERVER,
	        "the server is currently unable to handle the request" },
	{ 504, "Timeout", KAPI_ETIMEOUT,
	        "the server was unable to return a response in the time "
	        "allotted" },
};

static const char *const rc_names[] = {
	[KAPI_OK] = "OK",
	[KAPI_ENOTFOUND] = "NotFound",
	[KAPI_EEXISTS] = "AlreadyExists",
	[KAPI_ECONFLICT] = "Conflict",
	[KAPI_EINVALID] = "Invalid",
	[KAPI_EGONE] = "Gone",
	[KAPI_ETOOMANY] = "TooManyRequests",
	[KAPI_EUNAUTHORIZED] = "Unauthorized",
	[KAPI_EFORBIDDEN] = "Forbidden",
	[KAPI_ETIMEOUT] = "Timeout",
	[KAPI_ESERVER] = "ServerError",
	[KAPI_EBADREQUEST] = "BadRequest",
	[KAPI_ETRANSPORT] = "TransportError",
	[KAPI_EDECODE] = "DecodeError",
	[KAPI_ETOOBIG] = "ResponseTooLarge",
};

const char *
kapi_rc_name(enum kapi_rc rc)
{
	if ((unsigned)rc >= sizeof(rc_names) / sizeof(rc_names[0])
	        || rc_names[rc] == NULL) {
		return ("Unknown");
	}
	return (rc_names[rc]);
}

static void
set_reason(struct kapi_err *e, const char *reason)
{
	snprintf(e->reason, sizeof(e->reason), "%s", reason);
}

static void
set_message(struct kapi_err *e, char *msg)
{
	free(e->message);
	e->message = msg;
}

/* Fills rc and reason from the code alone (the "Client rule"). */
static void
from_code(struct kapi_err *e, long code, const char *method, const char **msg)
{
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		if (codes[i].code == code) {
			e->rc = codes[i].rc;
			set_reason(e, codes[i].reason);
			*msg = codes[i].message;
			if (code == 409 && method != NULL
			        && strcmp(method, "POST") == 0) {
				e->rc = KAPI_EEXISTS;
				set_reason(e, "AlreadyExists");
				*msg = "the server reported that the object "
				       "already exists";
			}
			return;
		}
	}
	if (code >= 500 && code <= 599) {
		e->rc = KAPI_ESERVER;
		set_reason(e, "InternalError");
	} else if (code >= 400 && code <= 499) {
		e->rc = KAPI_EBADREQUEST;
		set_reason(e, "BadRequest");
	} else {
		e->rc = KAPI_ESERVER;
		set_reason(e, "Unknown");
	}
	*msg = "the server responded with an unexpected status code";
}

/* rc for a Status reason, or -1 when the reason is not known. */
static int
rc_of_reason(const char *reason)
{
	size_t i;

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (strcmp(reasons[i].reason, reason) == 0) {
			return ((int)reasons[i].rc);
		}
	}
	return (-1);
}

/* The body as a bounded single message: surrounding space trimmed, control
 * characters replaced, cut at MSG_MAX bytes.  NULL when blank. */
static char *
text_message(const char *body, size_t len)
{
	size_t start = 0, n, i;
	char *s;

	while (start < len && isspace((unsigned char)body[start])) {
		start++;
	}
	while (len > start && isspace((unsigned char)body[len - 1])) {
		len--;
	}
	n = len - start;
	if (n == 0) {
		return (NULL);
	}
	if (n > MSG_MAX) {
		n = MSG_MAX;
	}
	s = xmalloc(n + 1);
	memcpy(s, body + start, n);
	s[n] = '\0';
	for (i = 0; i < n; i++) { /* NUL bytes too: keep what follows */
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			s[i] = ' ';
		}
	}
	return (s);
}

static const char *
jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v)
	        || !json_object_is_type(v, json_type_string)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

static int
status_retry_after(json_object *st)
{
	json_object *d, *v;
	int64_t n;

	if (!json_object_object_get_ex(st, "details", &d)
	        || !json_object_object_get_ex(d, "retryAfterSeconds", &v)
	        || !json_object_is_type(v, json_type_int)) {
		return (-1);
	}
	n = json_object_get_int64(v);
	if (n <= 0) {
		return (-1);
	}
	return (n > RETRY_AFTER_MAX ? RETRY_AFTER_MAX : (int)n);
}

/* Parses a Status body; NULL when the body is not one. */
static json_object *
parse_status(const char *body, size_t len)
{
	json_tokener *tok;
	json_object *o;
	const char *kind;

	if (body == NULL || len == 0 || len > PARSE_MAX) {
		return (NULL);
	}
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, body, (int)len);
	if (o != NULL && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (o == NULL) {
		return (NULL);
	}
	kind = json_object_is_type(o, json_type_object) ? jstr(o, "kind")
	                                                : NULL;
	if (kind == NULL || strcmp(kind, "Status") != 0) {
		json_object_put(o);
		return (NULL);
	}
	return (o);
}

#define TOO_LARGE_MSG "Too large resource version"

static bool
cause_says_too_large(json_object *c, bool timeout)
{
	const char *r = jstr(c, "reason"), *m = jstr(c, "message");

	if (r != NULL && strcmp(r, "ResourceVersionTooLarge") == 0) {
		return (true);
	}
	return (timeout && m != NULL && strcmp(m, TOO_LARGE_MSG) == 0);
}

bool
kapi_status_rv_too_large(json_object *st)
{
	json_object *d, *causes, *v;
	const char *reason, *msg;
	bool timeout;
	size_t n;

	if (st == NULL || !json_object_is_type(st, json_type_object)) {
		return (false);
	}
	reason = jstr(st, "reason");
	timeout = (reason != NULL && strcmp(reason, "Timeout") == 0)
	        || (json_object_object_get_ex(st, "code", &v)
	                && json_object_is_type(v, json_type_int)
	                && json_object_get_int64(v) == 504);
	if (json_object_object_get_ex(st, "details", &d)
	        && json_object_object_get_ex(d, "causes", &causes)
	        && json_object_is_type(causes, json_type_array)) {
		n = json_object_array_length(causes);
		for (size_t i = 0; i < n; i++) {
			if (cause_says_too_large(
			            json_object_array_get_idx(causes, i),
			            timeout)) {
				return (true);
			}
		}
	}
	msg = jstr(st, "message");
	return (timeout && msg != NULL && strstr(msg, TOO_LARGE_MSG) != NULL);
}

/* Applies a Status: its reason when known, its message when given. */
static void
apply_status(struct kapi_err *e, json_object *st)
{
	const char *reason, *msg;
	int rc;

	reason = jstr(st, "reason");
	if (reason != NULL && (rc = rc_of_reason(reason)) >= 0) {
		e->rc = (enum kapi_rc)rc;
		set_reason(e, reason);
	}
	msg = jstr(st, "message");
	if (msg != NULL && *msg != '\0') {
		set_message(e, text_message(msg, strlen(msg)));
	}
	e->retry_after = status_retry_after(st);
	e->rv_too_large = kapi_status_rv_too_large(st);
}

void
kapi_err_from_http(struct kapi_err *e, long code, const char *method,
        const char *body, size_t len, const char *retry_after_hdr)
{
	const char *msg = NULL;
	json_object *st;
	char *text;

	e->code = code;
	e->retry_after = -1;
	e->rv_too_large = false;
	if (code >= 200 && code <= 299) {
		e->rc = KAPI_OK;
		set_reason(e, "");
		set_message(e, xstrdup(""));
		return;
	}
	from_code(e, code, method, &msg);
	set_message(e, xstrdup(msg));
	if ((st = parse_status(body, len)) != NULL) {
		apply_status(e, st);
		json_object_put(st);
	} else if (body != NULL && (text = text_message(body, len)) != NULL) {
		set_message(e, text);
	}
	if (retry_after_hdr != NULL) {
		int ra = kapi_retry_after_parse(retry_after_hdr);

		if (ra >= 0) {
			e->retry_after = ra;
		}
	}
}

void
kapi_err_transport(struct kapi_err *e, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1) {
		msg = xstrdup("transport error");
	}
	va_end(ap);
	e->rc = KAPI_ETRANSPORT;
	e->code = 0;
	e->retry_after = -1;
	e->rv_too_large = false;
	set_reason(e, "TransportError");
	set_message(e, msg);
}

void
kapi_err_set(
        struct kapi_err *e, enum kapi_rc rc, long code, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1) {
		msg = xstrdup(kapi_rc_name(rc));
	}
	va_end(ap);
	e->rc = rc;
	e->code = code;
	e->retry_after = -1;
	e->rv_too_large = false;
	set_reason(e, rc == KAPI_OK ? "" : kapi_rc_name(rc));
	set_message(e, msg);
}

void
kapi_err_fini(struct kapi_err *e)
{
	free(e->message);
	e->message = NULL;
}

void
kapi_err_move(struct kapi_err *dst, struct kapi_err *src)
{
	if (dst == src) {
		return;
	}
	kapi_err_fini(dst);
	*dst = *src;
	src->message = NULL;
}

static int
parse_delta(const char *s)
{
	long long n = 0;

	for (; isdigit((unsigned char)*s); s++) {
		if (n < RETRY_AFTER_MAX) {
			n = n * 10 + (*s - '0');
		}
	}
	while (isspace((unsigned char)*s)) {
		s++;
	}
	if (*s != '\0') {
		return (-1);
	}
	return (n > RETRY_AFTER_MAX ? RETRY_AFTER_MAX : (int)n);
}

/* IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") relative to now. */
static int
parse_date(const char *s, time_t now)
{
	struct tm tm;
	const char *end;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (end == NULL) {
		return (-1);
	}
	while (isspace((unsigned char)*end)) {
		end++;
	}
	if (*end != '\0' || (t = timegm(&tm)) == (time_t)-1) {
		return (-1);
	}
	if (t <= now) {
		return (0);
	}
	return (t - now > RETRY_AFTER_MAX ? RETRY_AFTER_MAX : (int)(t - now));
}

int
kapi_retry_after_parse(const char *value)
{
	if (value == NULL) {
		return (-1);
	}
	while (isspace((unsigned char)*value)) {
		value++;
	}
	if (*value == '\0') {
		return (-1);
	}
	if (isdigit((unsigned char)*value)) {
		return (parse_delta(value));
	}
	return (parse_date(value, time(NULL)));
}
