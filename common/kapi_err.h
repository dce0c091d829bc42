/*
 * kapi_err.h: the outcome of a Kubernetes API request as a small named set
 * (spec kube-api.md A.6), decoded from the API's Status objects, or
 * synthesised from the HTTP code when the body is not a Status (the
 * text/plain 404 and 429 bodies real servers send), or from a transport
 * failure.  The message is always kept, so callers can log it or put it in
 * an object's status.
 */
#ifndef KAPI_ERR_H
#define KAPI_ERR_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

enum kapi_rc {
	KAPI_OK = 0,
	KAPI_ENOTFOUND,     /* 404 NotFound */
	KAPI_EEXISTS,       /* 409 AlreadyExists */
	KAPI_ECONFLICT,     /* 409 Conflict (stale RV, precondition) */
	KAPI_EINVALID,      /* 422 Invalid */
	KAPI_EGONE,         /* 410 Expired / Gone: relist */
	KAPI_ETOOMANY,      /* 429 TooManyRequests (retry_after) */
	KAPI_EUNAUTHORIZED, /* 401 */
	KAPI_EFORBIDDEN,    /* 403 */
	KAPI_ETIMEOUT,      /* 504 Timeout, 500 ServerTimeout */
	KAPI_ESERVER,       /* other 5xx: InternalError, 503, ... */
	KAPI_EBADREQUEST,   /* 400 and the other 4xx (405, 406, 415) */
	KAPI_ETRANSPORT,    /* no HTTP answer: refused, reset, TLS */
	KAPI_EDECODE,       /* a 2xx answer that is not what it must be */
	KAPI_ETOOBIG,       /* the answer's body passed its cap (kapi.h) */
};

struct kapi_err {
	enum kapi_rc rc;
	long code;         /* HTTP status; 0 for transport */
	char reason[48];   /* Status.reason, or synthesised */
	int retry_after;   /* seconds; -1 when not given */
	char *message;     /* heap, never NULL after a fill */
	bool rv_too_large; /* kapi_status_rv_too_large() */
};

#define KAPI_ERR_INIT                                                         \
	{                                                                     \
		KAPI_OK, 0, "", -1, NULL, false                               \
	}

/* "NotFound", "Conflict", ... for logs and metrics. */
const char *kapi_rc_name(enum kapi_rc rc);

/*
 * Fills e from an HTTP answer.  method is the HTTP method ("POST" makes a
 * bare 409 AlreadyExists, else Conflict).  body may be NULL; when it parses
 * as a Status its reason, message, code and retryAfterSeconds are used.
 * retry_after_hdr is the Retry-After header value or NULL; it takes
 * precedence over the body.  A 2xx code gives KAPI_OK.
 */
void kapi_err_from_http(struct kapi_err *e, long code, const char *method,
        const char *body, size_t len, const char *retry_after_hdr);
/* Fills e as a transport failure (rc KAPI_ETRANSPORT, code 0). */
void kapi_err_transport(struct kapi_err *e, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Fills e with rc and a formatted message (KAPI_EDECODE and the like). */
void kapi_err_set(struct kapi_err *e, enum kapi_rc rc, long code,
        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void kapi_err_fini(struct kapi_err *e);
/* Moves src into dst (dst is finalised first). */
void kapi_err_move(struct kapi_err *dst, struct kapi_err *src);

/*
 * Whether a Status object says the resourceVersion asked for is newer than
 * the server's (the server was restored from a backup, or is behind), as
 * client-go's reflector tells it (isTooLargeResourceVersionError): a
 * details.causes[] entry with reason "ResourceVersionTooLarge"; or, for a
 * Timeout (reason "Timeout" or code 504) from servers 1.17.0-1.18.5, a
 * cause whose message is "Too large resource version", or those words in
 * the Status message.  The answer to a list or watch is then: list again
 * with resourceVersion "" (a consistent read).  NULL is false.
 */
bool kapi_status_rv_too_large(json_object *status);

/* Retry-After in whole seconds (delta-seconds form; an HTTP date is
 * converted against the current time).  -1 when absent or unparseable. */
int kapi_retry_after_parse(const char *value);

#endif
