/*
 * test_kubesim_faults.c: black-box tests of kubesim's fault injection.
 * Each test starts $KUBESIM (default bin/kubesim) with --fault flags,
 * reads `listening on URL` from its stdout, and talks HTTP to it with
 * libcurl: injected 503 and 429 answers, added latency, a hung request
 * released by removing its rule, and refused connections.  A small local
 * spawn/HTTP helper keeps this file self-contained.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "tests/lib/testutil.h"

struct sim {
	pid_t pid;
	char url[256];
};

struct http {
	long code;
	int retry_after; /* -1: no header */
	struct buf body;
	CURLcode rc;
};

static const char *
kubesim_path(void)
{
	const char *p = getenv("KUBESIM");

	return (p != NULL && p[0] != '\0' ? p : "bin/kubesim");
}

/* Starts kubesim with the NULL-terminated extra arguments. */
static void
sim_start(struct sim *s, ...)
{
	const char *argv[32] = { kubesim_path(), "--controllers", "none" };
	size_t n = 3;
	int fds[2];
	FILE *f;
	char line[300];
	va_list ap;

	va_start(ap, s);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)) != NULL) {
		n++;
	}
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(pipe(fds), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	if (fgets(line, sizeof(line), f) == NULL
	        || sscanf(line, "listening on %255s", s->url) != 1) {
		fclose(f);
		fail_msg("%s did not start", argv[0]);
	}
	fclose(f);
}

/* Stops kubesim; asserts a clean exit (no leaks under ASan). */
static void
sim_stop(struct sim *s)
{
	int st = 0;

	kill(s->pid, SIGTERM);
	assert_int_equal(waitpid(s->pid, &st, 0), s->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	buf_append(arg, p, sz * n);
	return (sz * n);
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct http *h = arg;

	if (sz * n > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		h->retry_after = atoi(p + 12);
	}
	return (sz * n);
}

/* One request on a new connection.  The caller frees h->body. */
static void
req(const struct sim *s, const char *method, const char *path,
        const char *body, struct http *h)
{
	CURL *c = curl_easy_init();
	struct curl_slist *hd = NULL;
	char *url = NULL;

	buf_init(&h->body);
	h->code = 0;
	h->retry_after = -1;
	assert_true(asprintf(&url, "%s%s", s->url, path) > 0);
	hd = curl_slist_append(hd, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &h->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	h->rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->code);
	curl_slist_free_all(hd);
	curl_easy_cleanup(c);
	free(url);
}

/* A request that must get an answer; returns its code. */
static long
call(const struct sim *s, const char *method, const char *path,
        const char *body, json_object **out)
{
	struct http h;

	req(s, method, path, body, &h);
	if (h.rc != CURLE_OK) {
		fail_msg("%s %s: %s", method, path, curl_easy_strerror(h.rc));
	}
	if (out != NULL) {
		*out = testutil_json(buf_str(&h.body), 0);
	}
	buf_fini(&h.body);
	return (h.code);
}

static const char CM[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                         "\"metadata\":{\"name\":\"%s\"}}";
#define CM_PATH "/api/v1/namespaces/default/configmaps"

static char *
cm(const char *name)
{
	char *s = NULL;

	assert_true(asprintf(&s, CM, name) > 0);
	return (s);
}

static void
test_create_503(void **state)
{
	struct sim s;
	json_object *o;
	char *a = cm("a");

	(void)state;
	sim_start(&s, "--fault",
	        "verb=create,resource=configmaps,code=503,"
	        "rate=1",
	        NULL);
	assert_int_equal(call(&s, "POST", CM_PATH, a, &o), 503);
	assert_string_equal(jx_get_str(o, "kind"), "Status");
	assert_string_equal(jx_get_str(o, "reason"), "ServiceUnavailable");
	json_object_put(o);
	assert_int_equal(call(&s, "POST", CM_PATH, a, NULL), 503);
	/* other verbs and resources are served */
	assert_int_equal(call(&s, "GET", CM_PATH, NULL, NULL), 200);
	assert_int_equal(call(&s, "POST", "/api/v1/namespaces/default/secrets",
	                         "{\"metadata\":{\"name\":\"s\"}}", NULL),
	        201);
	assert_int_equal(call(&s, "GET", "/_kubesim/faults", NULL, &o), 200);
	assert_int_equal(
	        json_object_get_int(jx_get(o, "rules.0.injected")), 2);
	json_object_put(o);
	assert_int_equal(
	        call(&s, "DELETE", "/_kubesim/faults", NULL, NULL), 200);
	assert_int_equal(call(&s, "POST", CM_PATH, a, NULL), 201);
	free(a);
	sim_stop(&s);
}

static void
test_429(void **state)
{
	struct sim s;
	struct http h;
	json_object *o;

	(void)state;
	sim_start(
	        &s, "--fault", "verb=list|watch,code=429,retry-after=2", NULL);
	req(&s, "GET", CM_PATH, NULL, &h);
	assert_int_equal(h.rc, CURLE_OK);
	assert_int_equal(h.code, 429);
	assert_int_equal(h.retry_after, 2);
	o = testutil_json(buf_str(&h.body), 0);
	assert_string_equal(jx_get_str(o, "reason"), "TooManyRequests");
	assert_int_equal(json_object_get_int(jx_get(o, "code")), 429);
	assert_int_equal(
	        json_object_get_int(jx_get(o, "details.retryAfterSeconds")),
	        2);
	json_object_put(o);
	buf_fini(&h.body);
	/* a get is not a list */
	assert_int_equal(call(&s, "GET", CM_PATH "/x", NULL, NULL), 404);
	sim_stop(&s);
}

static void
test_delay(void **state)
{
	struct sim s;
	json_object *o;
	int64_t t0;

	(void)state;
	sim_start(&s, NULL);
	assert_int_equal(call(&s, "POST", "/_kubesim/faults",
	                         "{\"verbs\":[\"list\"],\"resource\":"
	                         "\"configmaps\",\"delayMs\":300}",
	                         &o),
	        201);
	assert_int_equal(json_object_get_int(jx_get(o, "delayMs")), 300);
	json_object_put(o);
	t0 = timefmt_now_ms_mono();
	assert_int_equal(call(&s, "GET", CM_PATH, NULL, &o), 200);
	assert_true(timefmt_now_ms_mono() - t0 >= 300);
	assert_string_equal(jx_get_str(o, "kind"), "ConfigMapList");
	json_object_put(o);
	sim_stop(&s);
}

struct hung {
	const struct sim *s;
	_Atomic long code;
};

static void *
hung_get(void *arg)
{
	struct hung *h = arg;

	h->code = call(h->s, "GET",
	        "/apis/coordination.k8s.io/v1/namespaces/default/leases/x",
	        NULL, NULL);
	return (NULL);
}

static int64_t
injected(const struct sim *s)
{
	json_object *o;
	int64_t n = -1;

	assert_int_equal(call(s, "GET", "/_kubesim/faults", NULL, &o), 200);
	jx_get_int(o, "rules.0.injected", &n);
	json_object_put(o);
	return (n);
}

static void
test_hang(void **state)
{
	struct sim s;
	struct hung h = { .s = &s };
	struct timespec ts = { 0, 20 * 1000000 };
	pthread_t t;
	int64_t t0;

	(void)state;
	sim_start(&s, "--fault", "hang,resource=leases,count=1", NULL);
	t0 = timefmt_now_ms_mono();
	assert_int_equal(pthread_create(&t, NULL, hung_get, &h), 0);
	while (injected(&s) == 0) {
		assert_true(timefmt_now_ms_mono() - t0 < 10000);
		nanosleep(&ts, NULL);
	}
	nanosleep(&ts, NULL);
	assert_int_equal(h.code, 0); /* still hanging */
	assert_int_equal(
	        call(&s, "DELETE", "/_kubesim/faults/1", NULL, NULL), 200);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(h.code, 504);
	assert_true(timefmt_now_ms_mono() - t0 < 20000);
	sim_stop(&s);
}

static void *
hung_req(void *arg)
{
	struct hung *h = arg;
	struct http r;

	req(h->s, "GET", "/api/v1/namespaces/default/configmaps/x", NULL, &r);
	buf_fini(&r.body);
	h->code = r.rc == CURLE_OK ? r.code : -1;
	return (NULL);
}

/* SIGTERM releases hung requests: the server stops promptly. */
static void
test_hang_shutdown(void **state)
{
	struct sim s;
	struct hung h = { .s = &s };
	struct timespec ts = { 0, 20 * 1000000 };
	pthread_t t;
	int64_t t0;

	(void)state;
	sim_start(&s, "--fault", "hang,verb=get", NULL);
	t0 = timefmt_now_ms_mono();
	assert_int_equal(pthread_create(&t, NULL, hung_req, &h), 0);
	while (injected(&s) == 0) {
		assert_true(timefmt_now_ms_mono() - t0 < 10000);
		nanosleep(&ts, NULL);
	}
	sim_stop(&s);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(h.code == 504 || h.code == -1);
	assert_true(timefmt_now_ms_mono() - t0 < 20000);
}

static void
test_refuse(void **state)
{
	struct sim s;
	struct http h;
	struct timespec ts = { 0, 50 * 1000000 };
	int64_t t0;

	(void)state;
	sim_start(&s, NULL);
	assert_int_equal(call(&s, "POST", "/_kubesim/faults/refuse",
	                         "{\"seconds\":1}", NULL),
	        200);
	t0 = timefmt_now_ms_mono();
	req(&s, "GET", CM_PATH, NULL, &h);
	assert_int_not_equal(h.rc, CURLE_OK);
	buf_fini(&h.body);
	/* accepted again once the window ends */
	for (;;) {
		req(&s, "GET", CM_PATH, NULL, &h);
		buf_fini(&h.body);
		if (h.rc == CURLE_OK) {
			break;
		}
		assert_true(timefmt_now_ms_mono() - t0 < 10000);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(h.code, 200);
	assert_true(timefmt_now_ms_mono() - t0 >= 900);
	assert_int_equal(call(&s, "POST", "/_kubesim/faults/refuse?seconds=x",
	                         NULL, NULL),
	        400);
	sim_stop(&s);
}

static void
test_bad_flag(void **state)
{
	char *cmd = NULL;
	int st;

	(void)state;
	assert_true(asprintf(&cmd, "%s --fault code=404 2>/dev/null",
	                    kubesim_path())
	        > 0);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	free(cmd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_503),
		cmocka_unit_test(test_429),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_hang_shutdown),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_bad_flag),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return (rc);
}
