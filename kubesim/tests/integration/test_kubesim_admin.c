/*
 * test_kubesim_admin.c: kubesim's request log (--request-log: one JSON line
 * per request with a microsecond timestamp, verb, method, path, query,
 * code, User-Agent and the resourceVersion produced) and its built-in
 * admin endpoints (POST /_kubesim/close-watches, POST /_kubesim/compact).
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"

#define UA "admin-test/1.0"

static const char *const ua_hdr[] = { "User-Agent: " UA, NULL };

static struct ksim_resp *
req(struct ksim *k, const char *method, const char *path, const char *body)
{
	return (ksim_request(ksim_url(k), method, path,
	        body != NULL ? "application/json" : NULL, body, ua_hdr, 0));
}

/* Creates configmap name in default; returns its resourceVersion. */
static char *
create_cm(struct ksim *k, const char *ns, const char *name)
{
	char body[256], path[128];
	struct ksim_resp *r;
	char *rv;

	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"}}", name);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
	r = req(k, "POST", path, body);
	assert_int_equal(r->code, 201);
	rv = xstrdup(jx_get_str(r->json, "metadata.resourceVersion"));
	ksim_resp_free(r);
	return (rv);
}

static json_object *
find_line(json_object *lines, const char *verb, const char *method)
{
	for (size_t i = 0; i < json_object_array_length(lines); i++) {
		json_object *l = json_object_array_get_idx(lines, i);
		const char *v = jx_get_str(l, "verb");
		const char *m = jx_get_str(l, "method");

		if (v != NULL && m != NULL && strcmp(v, verb) == 0
		        && strcmp(m, method) == 0) {
			return (l);
		}
	}
	return (NULL);
}

/* Every line of the log, parsed; each must be one JSON object. */
static json_object *
read_log(const char *path)
{
	struct buf b = BUF_INIT;
	json_object *arr = json_object_new_array();
	char *save = NULL;

	assert_int_equal(buf_read_file(&b, path, 1 << 20), 0);
	for (char *line = strtok_r(b.data, "\n", &save); line != NULL;
	        line = strtok_r(NULL, "\n", &save)) {
		json_object *o = jx_parse(line, strlen(line), 0, NULL, 0);
		assert_non_null(o);
		json_object_array_add(arr, o);
	}
	buf_fini(&b);
	return (arr);
}

static void
test_request_log(void **state)
{
	char path[] = "/tmp/kubesim-reqlog.XXXXXX";
	int fd = mkstemp(path);
	const char *args[] = { "--request-log", path, NULL };
	struct ksim *k;
	regex_t ts;
	char *rv;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	k = ksim_start(args);
	assert_non_null(k);
	rv = create_cm(k, "default", "logged");
	ksim_resp_free(req(k, "GET",
	        "/api/v1/namespaces/default/configmaps/"
	        "logged",
	        NULL));
	ksim_resp_free(req(k, "GET", "/api/v1/configmaps?limit=5", NULL));
	ksim_resp_free(req(k, "GET",
	        "/api/v1/namespaces/default/configmaps/"
	        "missing",
	        NULL));
	struct ksim_watch *w = ksim_watch_open(ksim_url(k),
	        "/api/v1/configmaps?watch=true&timeoutSeconds=1", ua_hdr);
	assert_int_equal(ksim_watch_status(w, 5000), 200);
	ksim_watch_close(w);
	assert_int_equal(ksim_stop(k), 0);

	json_object *lines = read_log(path);
	assert_int_equal(
	        regcomp(&ts,
	                "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
	                "[0-9]{2}\\.[0-9]{6}Z$",
	                REG_EXTENDED | REG_NOSUB),
	        0);
	for (size_t i = 0; i < json_object_array_length(lines); i++) {
		json_object *l = json_object_array_get_idx(lines, i);
		assert_int_equal(
		        regexec(&ts, jx_get_str(l, "ts"), 0, NULL, 0), 0);
		assert_non_null(jx_get_str(l, "path"));
		assert_non_null(jx_get_str(l, "query"));
		assert_string_equal(jx_get_str(l, "userAgent"), UA);
	}
	regfree(&ts);
	json_object *c = find_line(lines, "create", "POST");
	assert_non_null(c);
	assert_string_equal(jx_get_str(c, "rv"), rv);
	int64_t code = 0;
	jx_get_int(c, "code", &code);
	assert_int_equal(code, 201);
	json_object *l = find_line(lines, "list", "GET");
	assert_non_null(l);
	assert_string_equal(jx_get_str(l, "query"), "limit=5");
	assert_null(jx_get(l, "rv"));
	assert_non_null(find_line(lines, "watch", "GET"));
	json_object *g = NULL;
	for (size_t i = 0; i < json_object_array_length(lines); i++) {
		json_object *x = json_object_array_get_idx(lines, i);
		if (strstr(jx_get_str(x, "path"), "missing") != NULL) {
			g = x;
		}
	}
	assert_non_null(g);
	jx_get_int(g, "code", &code);
	assert_int_equal(code, 404);
	json_object_put(lines);
	free(rv);
	unlink(path);
}

static void
test_close_watches(void **state)
{
	struct ksim *k = ksim_start(NULL);
	struct ksim_watch *w1, *w2;
	struct ksim_resp *r;

	(void)state;
	assert_non_null(k);
	w1 = ksim_watch_open(ksim_url(k),
	        "/api/v1/configmaps?watch=true&"
	        "resourceVersion=100",
	        NULL);
	w2 = ksim_watch_open(ksim_url(k),
	        "/api/v1/namespaces?watch=true&"
	        "allowWatchBookmarks=true",
	        NULL);
	assert_int_equal(ksim_watch_status(w1, 5000), 200);
	assert_int_equal(ksim_watch_status(w2, 5000), 200);
	ksim_sleep_ms(200);
	assert_false(ksim_watch_ended(w1));
	r = ksim_request(ksim_url(k), "POST", "/_kubesim/close-watches", NULL,
	        NULL, NULL, 0);
	assert_int_equal(r->code, 200);
	ksim_resp_free(r);
	assert_true(ksim_watch_wait_end(w1, 3000));
	assert_true(ksim_watch_wait_end(w2, 3000));
	char *e = ksim_watch_error(w1);
	assert_string_equal(e, "");
	free(e);
	assert_int_equal(ksim_watch_bad_lines(w1), 0);
	ksim_watch_close(w1);
	ksim_watch_close(w2);
	/* new watches are served again */
	w1 = ksim_watch_open(
	        ksim_url(k), "/api/v1/configmaps?watch=true", NULL);
	assert_int_equal(ksim_watch_status(w1, 5000), 200);
	ksim_sleep_ms(200);
	assert_false(ksim_watch_ended(w1));
	ksim_watch_close(w1);
	r = ksim_request(ksim_url(k), "GET", "/_kubesim/close-watches", NULL,
	        NULL, NULL, 0);
	assert_int_equal(r->code, 405);
	ksim_resp_free(r);
	assert_int_equal(ksim_stop(k), 0);
}

static void
test_compact(void **state)
{
	struct ksim *k = ksim_start(NULL);
	struct ksim_resp *r;
	struct ksim_watch *w;
	char path[256];
	char *rv1, *rv2;

	(void)state;
	assert_non_null(k);
	rv1 = create_cm(k, "default", "c1");
	rv2 = create_cm(k, "default", "c2");
	free(create_cm(k, "default", "c3"));
	free(create_cm(k, "default", "c4"));
	/* a paginated list started before compaction */
	r = req(k, "GET", "/api/v1/namespaces/default/configmaps?limit=1",
	        NULL);
	assert_int_equal(r->code, 200);
	char *cont = ksim_urlenc(jx_get_str(r->json, "metadata.continue"));
	ksim_resp_free(r);
	/* the list's snapshot must be older than the compaction point */
	free(create_cm(k, "default", "c5"));

	r = ksim_request(
	        ksim_url(k), "POST", "/_kubesim/compact", NULL, NULL, NULL, 0);
	assert_int_equal(r->code, 200);
	ksim_resp_free(r);

	snprintf(path, sizeof(path),
	        "/api/v1/namespaces/default/configmaps?watch=true&"
	        "resourceVersion=%s",
	        rv1);
	w = ksim_watch_open(ksim_url(k), path, NULL);
	json_object *ev = ksim_watch_next(w, 3000);
	assert_non_null(ev);
	assert_string_equal(jx_get_str(ev, "type"), "ERROR");
	int64_t code = 0;
	jx_get_int(ev, "object.code", &code);
	assert_int_equal(code, 410);
	assert_string_equal(jx_get_str(ev, "object.reason"), "Expired");
	json_object_put(ev);
	assert_true(ksim_watch_wait_end(w, 3000));
	ksim_watch_close(w);

	snprintf(path, sizeof(path),
	        "/api/v1/namespaces/default/configmaps?limit=1&continue=%s",
	        cont);
	r = req(k, "GET", path, NULL);
	assert_int_equal(r->code, 410);
	ksim_resp_free(r);
	snprintf(path, sizeof(path),
	        "/api/v1/namespaces/default/configmaps?resourceVersion=%s&"
	        "resourceVersionMatch=Exact",
	        rv2);
	r = req(k, "GET", path, NULL);
	assert_int_equal(r->code, 410);
	ksim_resp_free(r);
	/* a list now still works */
	r = req(k, "GET", "/api/v1/namespaces/default/configmaps", NULL);
	assert_int_equal(r->code, 200);
	assert_int_equal(json_object_array_length(
	                         json_object_object_get(r->json, "items")),
	        5);
	ksim_resp_free(r);
	free(cont);
	free(rv1);
	free(rv2);
	assert_int_equal(ksim_stop(k), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_log),
		cmocka_unit_test(test_close_watches),
		cmocka_unit_test(test_compact),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
