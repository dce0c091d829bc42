/* test_kapi_err.c: Status and bare-code decoding of kapi_err.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/kapi_err.h"
#include "common/xmalloc.h"

static void
decode(struct kapi_err *e, long code, const char *method, const char *body,
        const char *ra)
{
	kapi_err_from_http(e, code, method, body, body ? strlen(body) : 0, ra);
}

static void
test_every_reason(void **state)
{
	static const struct {
		const char *reason;
		long code;
		enum kapi_rc rc;
	} t[] = {
		{ "NotFound", 404, KAPI_ENOTFOUND },
		{ "AlreadyExists", 409, KAPI_EEXISTS },
		{ "Conflict", 409, KAPI_ECONFLICT },
		{ "Invalid", 422, KAPI_EINVALID },
		{ "Expired", 410, KAPI_EGONE },
		{ "Gone", 410, KAPI_EGONE },
		{ "TooManyRequests", 429, KAPI_ETOOMANY },
		{ "Unauthorized", 401, KAPI_EUNAUTHORIZED },
		{ "Forbidden", 403, KAPI_EFORBIDDEN },
		{ "Timeout", 504, KAPI_ETIMEOUT },
		{ "ServerTimeout", 500, KAPI_ETIMEOUT },
		{ "BadRequest", 400, KAPI_EBADREQUEST },
		{ "MethodNotAllowed", 405, KAPI_EBADREQUEST },
		{ "NotAcceptable", 406, KAPI_EBADREQUEST },
		{ "UnsupportedMediaType", 415, KAPI_EBADREQUEST },
		{ "RequestEntityTooLarge", 413, KAPI_EBADREQUEST },
		{ "InternalError", 500, KAPI_ESERVER },
		{ "ServiceUnavailable", 503, KAPI_ESERVER },
	};
	struct kapi_err e = KAPI_ERR_INIT;
	size_t i;
	char *body;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		/* POST would turn a bare 409 into AlreadyExists: the
		 * reason must win over the method. */
		body = xasprintf("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		                 "\"metadata\":{},\"status\":\"Failure\","
		                 "\"message\":\"msg %zu\",\"reason\":\"%s\","
		                 "\"code\":%ld}",
		        i, t[i].reason, t[i].code);
		decode(&e, t[i].code, "POST", body, NULL);
		assert_int_equal(e.rc, t[i].rc);
		assert_string_equal(e.reason, t[i].reason);
		assert_int_equal(e.code, t[i].code);
		assert_int_equal(e.retry_after, -1);
		assert_non_null(strstr(e.message, "msg "));
		free(body);
	}
	kapi_err_fini(&e);
}

static void
test_every_bare_code(void **state)
{
	static const struct {
		long code;
		const char *method;
		enum kapi_rc rc;
		const char *reason;
	} t[] = {
		{ 400, "GET", KAPI_EBADREQUEST, "BadRequest" },
		{ 401, "GET", KAPI_EUNAUTHORIZED, "Unauthorized" },
		{ 403, "GET", KAPI_EFORBIDDEN, "Forbidden" },
		{ 404, "GET", KAPI_ENOTFOUND, "NotFound" },
		{ 405, "GET", KAPI_EBADREQUEST, "MethodNotAllowed" },
		{ 406, "GET", KAPI_EBADREQUEST, "NotAcceptable" },
		{ 409, "POST", KAPI_EEXISTS, "AlreadyExists" },
		{ 409, "PUT", KAPI_ECONFLICT, "Conflict" },
		{ 409, "PATCH", KAPI_ECONFLICT, "Conflict" },
		{ 409, NULL, KAPI_ECONFLICT, "Conflict" },
		{ 410, "GET", KAPI_EGONE, "Gone" },
		{ 413, "PUT", KAPI_EBADREQUEST, "RequestEntityTooLarge" },
		{ 415, "PATCH", KAPI_EBADREQUEST, "UnsupportedMediaType" },
		{ 418, "GET", KAPI_EBADREQUEST, "BadRequest" },
		{ 422, "POST", KAPI_EINVALID, "Invalid" },
		{ 429, "GET", KAPI_ETOOMANY, "TooManyRequests" },
		{ 500, "GET", KAPI_ESERVER, "InternalError" },
		{ 502, "GET", KAPI_ESERVER, "InternalError" },
		{ 503, "GET", KAPI_ESERVER, "ServiceUnavailable" },
		{ 504, "GET", KAPI_ETIMEOUT, "Timeout" },
		{ 302, "GET", KAPI_ESERVER, "Unknown" },
	};
	struct kapi_err e = KAPI_ERR_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		decode(&e, t[i].code, t[i].method, NULL, NULL);
		assert_int_equal(e.rc, t[i].rc);
		assert_string_equal(e.reason, t[i].reason);
		assert_int_equal(e.code, t[i].code);
		assert_non_null(e.message);
		assert_true(strlen(e.message) > 0);
		/* An empty body behaves as no body. */
		kapi_err_from_http(&e, t[i].code, t[i].method, "", 0, NULL);
		assert_int_equal(e.rc, t[i].rc);
	}
	kapi_err_fini(&e);
}

static void
test_success(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	decode(&e, 200, "GET", "{\"kind\":\"ConfigMap\"}", NULL);
	assert_int_equal(e.rc, KAPI_OK);
	assert_string_equal(e.message, "");
	decode(&e, 201, "POST", NULL, NULL);
	assert_int_equal(e.rc, KAPI_OK);
	assert_int_equal(e.code, 201);
	kapi_err_fini(&e);
}

static void
test_text_404(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	decode(&e, 404, "GET", "404 page not found\n", NULL);
	assert_int_equal(e.rc, KAPI_ENOTFOUND);
	assert_string_equal(e.reason, "NotFound");
	assert_string_equal(e.message, "404 page not found");
	kapi_err_fini(&e);
}

static void
test_text_429_header(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	decode(&e, 429, "GET", "Too many requests, please try again later.\n",
	        "2");
	assert_int_equal(e.rc, KAPI_ETOOMANY);
	assert_int_equal(e.retry_after, 2);
	assert_string_equal(
	        e.message, "Too many requests, please try again later.");
	kapi_err_fini(&e);
}

static void
test_retry_after_precedence(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;
	const char *st = "{\"kind\":\"Status\",\"reason\":\"ServerTimeout\","
	                 "\"message\":\"busy\",\"code\":500,"
	                 "\"details\":{\"retryAfterSeconds\":7}}";

	(void)state;
	decode(&e, 500, "GET", st, NULL);
	assert_int_equal(e.rc, KAPI_ETIMEOUT);
	assert_int_equal(e.retry_after, 7);
	decode(&e, 500, "GET", st, "3");
	assert_int_equal(e.retry_after, 3);
	/* An unparseable header leaves the body's value. */
	decode(&e, 500, "GET", st, "soon");
	assert_int_equal(e.retry_after, 7);
	kapi_err_fini(&e);
}

static void
test_unknown_reason_uses_code(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	decode(&e, 410, "GET",
	        "{\"kind\":\"Status\",\"reason\":\"Weird\",\"message\":"
	        "\"old\"}",
	        NULL);
	assert_int_equal(e.rc, KAPI_EGONE);
	assert_string_equal(e.message, "old");
	decode(&e, 500, "GET", "{\"kind\":\"Status\",\"reason\":\"\"}", NULL);
	assert_int_equal(e.rc, KAPI_ESERVER);
	assert_string_equal(e.reason, "InternalError");
	kapi_err_fini(&e);
}

static void
test_malformed_json(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	decode(&e, 409, "POST", "{\"kind\":\"Status\",\"reason\":\"Conf",
	        NULL);
	assert_int_equal(e.rc, KAPI_EEXISTS);
	assert_string_equal(
	        e.message, "{\"kind\":\"Status\",\"reason\":\"Conf");
	/* JSON that is not a Status is kept as text. */
	decode(&e, 422, "PUT", "[1,2]", NULL);
	assert_int_equal(e.rc, KAPI_EINVALID);
	assert_string_equal(e.message, "[1,2]");
	/* Control characters never reach the message. */
	decode(&e, 400, "PUT", "a\tb\001c", NULL);
	assert_string_equal(e.message, "a b c");
	kapi_err_fini(&e);
}

static void
test_huge_body(void **state)
{
	struct kapi_err e = KAPI_ERR_INIT;
	size_t n = 4 * 1024 * 1024;
	char *body = xmalloc(n);

	(void)state;
	memset(body, 'x', n);
	kapi_err_from_http(&e, 503, "GET", body, n, NULL);
	assert_int_equal(e.rc, KAPI_ESERVER);
	assert_true(strlen(e.message) <= 1024);
	assert_true(strlen(e.message) > 100);
	free(body);
	kapi_err_fini(&e);
}

static void
test_retry_after_parse(void **state)
{
	char date[64];
	struct tm tm;
	time_t t;
	int n;

	(void)state;
	assert_int_equal(kapi_retry_after_parse("2"), 2);
	assert_int_equal(kapi_retry_after_parse(" 120 "), 120);
	assert_int_equal(kapi_retry_after_parse("0"), 0);
	assert_int_equal(kapi_retry_after_parse(NULL), -1);
	assert_int_equal(kapi_retry_after_parse(""), -1);
	assert_int_equal(kapi_retry_after_parse("-1"), -1);
	assert_int_equal(kapi_retry_after_parse("2x"), -1);
	assert_int_equal(
	        kapi_retry_after_parse("99999999999999999999"), 86400);
	assert_int_equal(
	        kapi_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT"), 0);
	t = time(NULL) + 100;
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	n = kapi_retry_after_parse(date);
	assert_in_range(n, 98, 100);
	assert_int_equal(kapi_retry_after_parse("Sun, 06 Nov 1994"), -1);
}

static void
test_transport_set_move(void **state)
{
	struct kapi_err a = KAPI_ERR_INIT, b = KAPI_ERR_INIT;

	(void)state;
	kapi_err_transport(&a, "connect to %s: %s", "127.0.0.1", "refused");
	assert_int_equal(a.rc, KAPI_ETRANSPORT);
	assert_int_equal(a.code, 0);
	assert_string_equal(a.message, "connect to 127.0.0.1: refused");
	kapi_err_set(&b, KAPI_EDECODE, 200, "bad %d", 1);
	assert_int_equal(b.rc, KAPI_EDECODE);
	assert_string_equal(b.message, "bad 1");
	kapi_err_move(&b, &a);
	assert_null(a.message);
	assert_int_equal(b.rc, KAPI_ETRANSPORT);
	assert_string_equal(b.message, "connect to 127.0.0.1: refused");
	assert_string_equal(kapi_rc_name(KAPI_ECONFLICT), "Conflict");
	assert_string_equal(kapi_rc_name((enum kapi_rc)99), "Unknown");
	kapi_err_fini(&a);
	kapi_err_fini(&b);
}

/* client-go's isTooLargeResourceVersionError: the cause, whatever the
 * code; for a Timeout only, the cause message or the Status message of
 * 1.17.0-1.18.5 servers. */
static void
test_rv_too_large(void **state)
{
	static const struct {
		long code;
		const char *body;
		bool want;
	} t[] = {
		/* the real 1.19+ answer (and kubesim's) */
		{ 504,
		        "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		        "\"status\":\"Failure\",\"message\":\"Timeout: Too "
		        "large resource version: 900, current: 120\","
		        "\"reason\":\"Timeout\",\"details\":{\"causes\":[{"
		        "\"reason\":\"ResourceVersionTooLarge\",\"message\":"
		        "\"Too large resource "
		        "version\"}],\"retryAfterSeconds\""
		        ":1},\"code\":504}",
		        true },
		/* the cause alone, any reason */
		{ 500,
		        "{\"kind\":\"Status\",\"reason\":\"InternalError\","
		        "\"details\":{\"causes\":[{\"reason\":"
		        "\"ResourceVersionTooLarge\"}]},\"code\":500}",
		        true },
		/* 1.17.0-1.18.5: a Timeout with only the cause message */
		{ 504,
		        "{\"kind\":\"Status\",\"reason\":\"Timeout\","
		        "\"details\":{\"causes\":[{\"message\":\"Too large "
		        "resource version\"}]},\"code\":504}",
		        true },
		/* ... or only the Status message */
		{ 504,
		        "{\"kind\":\"Status\",\"reason\":\"Timeout\","
		        "\"message\":\"Timeout: Too large resource version: "
		        "9, "
		        "current: 3\",\"code\":504}",
		        true },
		/* the words in another error are not enough */
		{ 500,
		        "{\"kind\":\"Status\",\"reason\":\"InternalError\","
		        "\"message\":\"Too large resource version\",\"code\":"
		        "500}",
		        false },
		/* a plain Timeout */
		{ 504,
		        "{\"kind\":\"Status\",\"reason\":\"Timeout\","
		        "\"message\":\"request timed out\",\"code\":504}",
		        false },
		/* not a Status; bad causes */
		{ 504, "Too large resource version", false },
		{ 504,
		        "{\"kind\":\"Status\",\"reason\":\"Timeout\","
		        "\"details\":{\"causes\":{\"reason\":"
		        "\"ResourceVersionTooLarge\"}},\"code\":504}",
		        false },
	};
	struct kapi_err e = KAPI_ERR_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		decode(&e, t[i].code, "GET", t[i].body, NULL);
		if (e.rv_too_large != t[i].want) {
			fail_msg("case %zu: rv_too_large %d", i,
			        e.rv_too_large);
		}
	}
	/* every other fill clears it */
	decode(&e, 504, "GET", t[0].body, NULL);
	assert_true(e.rv_too_large);
	decode(&e, 200, "GET", "{}", NULL);
	assert_false(e.rv_too_large);
	decode(&e, 504, "GET", t[0].body, NULL);
	kapi_err_transport(&e, "refused");
	assert_false(e.rv_too_large);
	kapi_err_fini(&e);
	assert_false(kapi_status_rv_too_large(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_reason),
		cmocka_unit_test(test_every_bare_code),
		cmocka_unit_test(test_success),
		cmocka_unit_test(test_text_404),
		cmocka_unit_test(test_text_429_header),
		cmocka_unit_test(test_retry_after_precedence),
		cmocka_unit_test(test_unknown_reason_uses_code),
		cmocka_unit_test(test_malformed_json),
		cmocka_unit_test(test_huge_body),
		cmocka_unit_test(test_retry_after_parse),
		cmocka_unit_test(test_transport_set_move),
		cmocka_unit_test(test_rv_too_large),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
