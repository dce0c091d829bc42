/*
 * test_kapi.c: the REST client against the scripted HTTPS test server:
 * every verb, error decoding, Retry-After and 401 retries, transport and
 * TLS failures, client certificates, and the multi API with concurrent
 * requests and watches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "common/kapi.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "kubesim/kcert.h"
#include "tests/lib/testsrv.h"
#include "tests/lib/testutil.h"

#define TOKEN "tok-1"

static struct kcert tc, other;

static const struct kapi_res cms = { "", "v1", "configmaps", true };
static const struct kapi_res widgets
        = { "example.com", "v1", "widgets", true };

struct fx {
	struct testsrv *srv;
	struct kapi_conf *conf;
	struct kapi_client *c;
	char tokfile[64];
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static struct kapi_conf *
conf_new(const char *server, const char *ca, const char *token)
{
	struct kapi_conf *conf = xcalloc(1, sizeof(*conf));

	conf->server = xstrdup(server);
	if (ca != NULL) {
		conf->ca_pem = xstrdup(ca);
		conf->ca_len = strlen(ca);
	}
	if (token != NULL) {
		conf->token = xstrdup(token);
	}
	conf->namespace = xstrdup("default");
	return (conf);
}

static void
conf_free(struct kapi_conf *conf)
{
	free(conf->server);
	free(conf->ca_pem);
	free(conf->cert_pem);
	free(conf->key_pem);
	free(conf->namespace);
	free(conf->username);
	free(conf->password);
	free(conf->token);
	free(conf->token_file);
	free(conf);
}

static int
group_setup(void **state)
{
	(void)state;
	if (kcert_generate(&tc, "admin", "system:masters") != 0
	        || kcert_generate(&other, "nobody", NULL) != 0) {
		return (-1);
	}
	return (0);
}

static int
group_teardown(void **state)
{
	(void)state;
	kcert_free(&tc);
	kcert_free(&other);
	return (0);
}

static int
setup(void **state)
{
	struct testsrv_opts o = { tc.server_cert, tc.server_key, NULL, TOKEN };
	struct fx *f = xcalloc(1, sizeof(*f));

	if ((f->srv = testsrv_start(&o)) == NULL) {
		free(f);
		return (-1);
	}
	f->conf = conf_new(testsrv_url(f->srv), tc.ca_cert, TOKEN);
	f->c = kapi_client_new(f->conf, "test/1.0");
	*state = f;
	return (0);
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	kapi_client_free(f->c);
	testsrv_stop(f->srv);
	conf_free(f->conf);
	if (f->tokfile[0] != '\0') {
		unlink(f->tokfile);
	}
	free(f);
	return (0);
}

static const struct testsrv_req *
req_at(struct fx *f, int i)
{
	const struct testsrv_req *r = testsrv_req(f->srv, i);

	assert_non_null(r);
	return (r);
}

static void
assert_query(const struct testsrv_req *r, const char *key, const char *want)
{
	char *v = testsrv_query(r, key);

	if (want == NULL) {
		assert_null(v);
		return;
	}
	assert_non_null(v);
	assert_string_equal(v, want);
	free(v);
}

static const char *
jget(json_object *o, const char *a, const char *b)
{
	json_object *v;

	if (!json_object_object_get_ex(o, a, &v)) {
		return (NULL);
	}
	if (b != NULL && !json_object_object_get_ex(v, b, &v)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

/* ---- verbs ----------------------------------------------------------- */

static void
test_get_headers(void **state)
{
	struct fx *f = *state;
	struct kapi_err err = KAPI_ERR_INIT;
	const struct testsrv_req *r;
	json_object *o = NULL;

	testsrv_push(f->srv, 200, NULL,
	        "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}");
	assert_int_equal(kapi_get(f->c, &cms, "ns1", "a", &o, &err), KAPI_OK);
	assert_string_equal(jget(o, "metadata", "name"), "a");
	json_object_put(o);
	r = req_at(f, 0);
	assert_string_equal(r->method, "GET");
	assert_string_equal(r->uri, "/api/v1/namespaces/ns1/configmaps/a");
	assert_string_equal(r->authorization, "Bearer " TOKEN);
	assert_string_equal(r->accept, "application/json, */*");
	assert_string_equal(r->content_type, "");
	assert_non_null(strstr(r->user_agent, "test/1.0 (linux/"));
	assert_non_null(strstr(r->user_agent, ") sympozium"));
	kapi_err_fini(&err);
}

static void
test_list_pages(void **state)
{
	struct fx *f = *state;
	struct kapi_list_opts o = { .label_selector = "app=web,tier!=db",
		.field_selector = "metadata.name!=x",
		.resource_version = "5",
		.limit = 2 };
	struct kapi_err err = KAPI_ERR_INIT;
	const struct testsrv_req *r;
	json_object *items = NULL;
	char *rv = NULL;

	testsrv_push(f->srv, 200, NULL,
	        "{\"kind\":\"ConfigMapList\",\"metadata\":{"
	        "\"resourceVersion\":"
	        "\"10\",\"continue\":\"c1+/"
	        "\"},\"items\":[{\"n\":1},{\"n\":2}]}");
	testsrv_push(f->srv, 200, NULL,
	        "{\"kind\":\"ConfigMapList\",\"metadata\":{"
	        "\"resourceVersion\":"
	        "\"10\",\"continue\":\"\"},\"items\":[{\"n\":3}]}");
	assert_int_equal(
	        kapi_list_all(f->c, &cms, NULL, &o, &items, &rv, &err),
	        KAPI_OK);
	assert_int_equal(json_object_array_length(items), 3);
	assert_string_equal(rv, "10");
	assert_int_equal(testsrv_nreqs(f->srv), 2);
	r = req_at(f, 0);
	assert_string_equal(r->path, "/api/v1/configmaps");
	assert_query(r, "labelSelector", "app=web,tier!=db");
	assert_query(r, "fieldSelector", "metadata.name!=x");
	assert_query(r, "resourceVersion", "5");
	assert_query(r, "limit", "2");
	assert_query(r, "continue", NULL);
	r = req_at(f, 1);
	assert_query(r, "continue", "c1+/");
	assert_query(r, "resourceVersion", NULL);
	assert_query(r, "limit", "2");
	assert_query(r, "labelSelector", "app=web,tier!=db");
	json_object_put(items);
	free(rv);
	kapi_err_fini(&err);
}

static void
test_list_one_page(void **state)
{
	struct fx *f = *state;
	struct kapi_list_opts o = { .resource_version = "0" };
	json_object *list = NULL;

	testsrv_push(f->srv, 200, NULL,
	        "{\"kind\":\"ConfigMapList\",\"metadata\":{"
	        "\"resourceVersion\":"
	        "\"12\"},\"items\":[]}");
	assert_int_equal(
	        kapi_list(f->c, &widgets, "n", &o, &list, NULL), KAPI_OK);
	assert_string_equal(jget(list, "metadata", "resourceVersion"), "12");
	assert_string_equal(req_at(f, 0)->uri,
	        "/apis/example.com/v1/namespaces/n/widgets?resourceVersion=0");
	json_object_put(list);
}

static void
test_list_expired_continue(void **state)
{
	struct fx *f = *state;
	struct kapi_list_opts o = { .limit = 1 };
	struct kapi_err err = KAPI_ERR_INIT;
	const struct testsrv_req *r;
	json_object *items = NULL;
	char *rv = NULL;

	testsrv_push(f->srv, 200, NULL,
	        "{\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"k\"}"
	        ","
	        "\"items\":[{\"n\":1}]}");
	testsrv_push(f->srv, 410, NULL,
	        "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":"
	        "\"Expired\",\"message\":\"The provided continue parameter is "
	        "too old\",\"code\":410}");
	testsrv_push(f->srv, 200, NULL,
	        "{\"metadata\":{\"resourceVersion\":\"20\"},"
	        "\"items\":[{\"n\":1},{\"n\":2}]}");
	assert_int_equal(kapi_list_all(f->c, &cms, "n", &o, &items, &rv, &err),
	        KAPI_OK);
	assert_int_equal(json_object_array_length(items), 2);
	assert_string_equal(rv, "20");
	assert_int_equal(testsrv_nreqs(f->srv), 3);
	r = req_at(f, 2);
	assert_query(r, "limit", NULL);
	assert_query(r, "continue", NULL);
	assert_query(r, "resourceVersion", "20");
	json_object_put(items);
	free(rv);
	kapi_err_fini(&err);
}

static void
test_create_update_status(void **state)
{
	struct fx *f = *state;
	json_object *obj = json_tokener_parse(
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"v\"}}");
	json_object *out = NULL;
	const struct testsrv_req *r;
	int i;

	testsrv_push(f->srv, 201, NULL, "{\"metadata\":{\"name\":\"a\"}}");
	testsrv_push(f->srv, 200, NULL, "{\"metadata\":{\"name\":\"a\"}}");
	testsrv_push(f->srv, 200, NULL, "{\"metadata\":{\"name\":\"a\"}}");
	assert_int_equal(
	        kapi_create(f->c, &cms, "n", obj, &out, NULL), KAPI_OK);
	json_object_put(out);
	assert_int_equal(
	        kapi_update(f->c, &cms, "n", obj, &out, NULL), KAPI_OK);
	json_object_put(out);
	assert_int_equal(
	        kapi_update_status(f->c, &cms, "n", obj, NULL, NULL), KAPI_OK);
	assert_string_equal(req_at(f, 0)->method, "POST");
	assert_string_equal(
	        req_at(f, 0)->uri, "/api/v1/namespaces/n/configmaps");
	assert_string_equal(req_at(f, 1)->method, "PUT");
	assert_string_equal(
	        req_at(f, 1)->uri, "/api/v1/namespaces/n/configmaps/a");
	assert_string_equal(req_at(f, 2)->method, "PUT");
	assert_string_equal(
	        req_at(f, 2)->uri, "/api/v1/namespaces/n/configmaps/a/status");
	for (i = 0; i < 3; i++) {
		r = req_at(f, i);
		assert_string_equal(r->content_type, "application/json");
		assert_string_equal(r->body,
		        json_object_to_json_string_ext(
		                obj, JSON_C_TO_STRING_PLAIN));
	}
	json_object_put(obj);
}

static void
test_patch_types(void **state)
{
	static const struct {
		enum kapi_patch type;
		const char *ctype;
		const char *body;
	} t[] = {
		{ KAPI_PATCH_MERGE, "application/merge-patch+json",
		        "{\"data\":{\"k\":null}}" },
		{ KAPI_PATCH_JSON, "application/json-patch+json",
		        "[{\"op\":\"remove\",\"path\":\"/data/k\"}]" },
		{ KAPI_PATCH_STRATEGIC,
		        "application/strategic-merge-patch+json",
		        "{\"metadata\":{\"$setElementOrder/"
		        "finalizers\":[]}}" },
		{ KAPI_PATCH_APPLY, "application/apply-patch+yaml",
		        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "
		        "a\n" },
	};
	struct fx *f = *state;
	const struct testsrv_req *r;
	json_object *out;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		testsrv_push(f->srv, 200, NULL, "{\"kind\":\"ConfigMap\"}");
		out = NULL;
		assert_int_equal(
		        kapi_patch(f->c, &cms, "n", "a", t[i].type, t[i].body,
		                t[i].type == KAPI_PATCH_APPLY ? "op" : NULL,
		                t[i].type == KAPI_PATCH_APPLY, &out, NULL),
		        KAPI_OK);
		json_object_put(out);
		r = req_at(f, (int)i);
		assert_string_equal(r->method, "PATCH");
		assert_string_equal(
		        r->path, "/api/v1/namespaces/n/configmaps/a");
		assert_string_equal(r->content_type, t[i].ctype);
		assert_string_equal(r->body, t[i].body);
	}
	assert_query(req_at(f, 3), "fieldManager", "op");
	assert_query(req_at(f, 3), "force", "true");
	assert_query(req_at(f, 0), "force", NULL);
}

static void
test_delete(void **state)
{
	struct fx *f = *state;
	struct kapi_delete_opts o = { .propagation_policy = "Foreground",
		.precondition_uid = "u-1",
		.precondition_rv = "9" };
	const struct testsrv_req *r;
	json_object *out = NULL, *body;

	testsrv_push(f->srv, 200, NULL,
	        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	        "\"status\":\"Success\",\"details\":{\"name\":\"a\"}}");
	testsrv_push(f->srv, 200, NULL, "{\"kind\":\"Widget\"}");
	assert_int_equal(kapi_delete(f->c, &widgets, "n", "a", &o, &out, NULL),
	        KAPI_OK);
	assert_string_equal(jget(out, "status", NULL), "Success");
	json_object_put(out);
	assert_int_equal(
	        kapi_delete(f->c, &widgets, "n", "b", NULL, NULL, NULL),
	        KAPI_OK);
	r = req_at(f, 0);
	assert_string_equal(r->method, "DELETE");
	assert_string_equal(
	        r->uri, "/apis/example.com/v1/namespaces/n/widgets/a");
	assert_string_equal(r->content_type, "application/json");
	body = json_tokener_parse(r->body);
	assert_string_equal(jget(body, "kind", NULL), "DeleteOptions");
	assert_string_equal(
	        jget(body, "propagationPolicy", NULL), "Foreground");
	assert_string_equal(jget(body, "preconditions", "uid"), "u-1");
	assert_string_equal(
	        jget(body, "preconditions", "resourceVersion"), "9");
	json_object_put(body);
	r = req_at(f, 1);
	assert_string_equal(r->method, "DELETE");
	assert_int_equal(r->body_len, 0);
	assert_string_equal(r->content_type, "");
}

/* A name or namespace that would change the path is refused before any
 * request: a DELETE of configmap ".." must never become a DELETE of the
 * namespace. */
static void
test_bad_segment_not_sent(void **state)
{
	struct fx *f = *state;
	struct kapi_err err = KAPI_ERR_INIT;

	assert_int_equal(kapi_delete(f->c, &cms, "n", "..", NULL, NULL, &err),
	        KAPI_EBADREQUEST);
	assert_int_equal(err.code, 0);
	assert_non_null(
	        strstr(err.message, "name is not a valid path segment"));
	assert_int_equal(kapi_get(f->c, &cms, "a/b", "x", NULL, &err),
	        KAPI_EBADREQUEST);
	assert_non_null(
	        strstr(err.message, "namespace is not a valid path segment"));
	assert_int_equal(testsrv_nreqs(f->srv), 0);
	kapi_err_fini(&err);
}

/* libcurl sends the path as built (CURLOPT_PATH_AS_IS), also through the
 * tls-server-name rewrite: a server URL whose prefix holds "/../" is not
 * folded into another path. */
static void
test_path_as_is(void **state)
{
	struct fx *f = *state;
	struct kapi_err err = KAPI_ERR_INIT;
	char *url = xasprintf("%s/p/../q/.", testsrv_url(f->srv));
	struct kapi_conf *conf = conf_new(url, tc.ca_cert, TOKEN);
	struct kapi_client *c = kapi_client_new(conf, "test/1.0");
	int i;

	for (i = 0; i < 2; i++) {
		testsrv_push(f->srv, 200, NULL, "{}");
		assert_int_equal(
		        kapi_get(c, &cms, "n", "a", NULL, &err), KAPI_OK);
		assert_string_equal(req_at(f, i)->path,
		        "/p/../q/./api/v1/namespaces/n/configmaps/a");
		if (i == 0) {
			conf->tls_server_name = xstrdup("localhost");
		}
	}
	kapi_client_free(c);
	free(conf->tls_server_name);
	conf_free(conf);
	free(url);
	kapi_err_fini(&err);
}

static void
test_log(void **state)
{
	struct fx *f = *state;
	struct kapi_log_opts o = { .container = "main", .tail_lines = 20 };
	struct testsrv_resp resp = { .code = 200,
		.content_type = "text/plain",
		.body = "line 1\nline 2\n" };
	char *text = NULL;

	testsrv_push_resp(f->srv, &resp);
	assert_int_equal(kapi_log(f->c, "n", "p", &o, &text, NULL), KAPI_OK);
	assert_string_equal(text, "line 1\nline 2\n");
	free(text);
	assert_string_equal(req_at(f, 0)->uri,
	        "/api/v1/namespaces/n/pods/p/log?container=main&tailLines=20");
	testsrv_push(f->srv, 404, NULL, "404 page not found");
	assert_int_equal(
	        kapi_log(f->c, "n", "p", NULL, &text, NULL), KAPI_ENOTFOUND);
	assert_null(text);
}

static void
test_dry_run_and_field_manager(void **state)
{
	struct fx *f = *state;
	struct kapi_req req = { .verb = KAPI_CREATE,
		.res = &cms,
		.ns = "n",
		.body = "{}",
		.dry_run = true,
		.field_manager = "mgr" };
	struct kapi_resp resp;

	testsrv_push(f->srv, 201, NULL, "{}");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_OK);
	assert_int_equal(resp.code, 201);
	assert_string_equal(buf_str(&resp.body), "{}");
	kapi_resp_fini(&resp);
	assert_query(req_at(f, 0), "dryRun", "All");
	assert_query(req_at(f, 0), "fieldManager", "mgr");
}

/* ---- errors ---------------------------------------------------------- */

static void
test_error_classes(void **state)
{
	static const struct {
		int code;
		const char *body;
		enum kapi_rc rc;
	} t[] = {
		{ 404, "404 page not found", KAPI_ENOTFOUND },
		{ 404,
		        "{\"kind\":\"Status\",\"reason\":\"NotFound\","
		        "\"message\":\"configmaps \\\"a\\\" not found\"}",
		        KAPI_ENOTFOUND },
		{ 409, "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\"}",
		        KAPI_EEXISTS },
		{ 409, "{\"kind\":\"Status\",\"reason\":\"Conflict\"}",
		        KAPI_ECONFLICT },
		{ 422, "{\"kind\":\"Status\",\"reason\":\"Invalid\"}",
		        KAPI_EINVALID },
		{ 410, "{\"kind\":\"Status\",\"reason\":\"Expired\"}",
		        KAPI_EGONE },
		{ 429, "Too many requests, please try again later.",
		        KAPI_ETOOMANY },
		{ 403, "{\"kind\":\"Status\",\"reason\":\"Forbidden\"}",
		        KAPI_EFORBIDDEN },
		{ 504, "{\"kind\":\"Status\",\"reason\":\"Timeout\"}",
		        KAPI_ETIMEOUT },
		{ 500, "{\"kind\":\"Status\",\"reason\":\"InternalError\"}",
		        KAPI_ESERVER },
		{ 503, "", KAPI_ESERVER },
		{ 400, "{\"kind\":\"Status\",\"reason\":\"BadRequest\"}",
		        KAPI_EBADREQUEST },
		{ 415, "", KAPI_EBADREQUEST },
	};
	struct fx *f = *state;
	struct kapi_err err = KAPI_ERR_INIT;
	json_object *o;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		testsrv_push(f->srv, t[i].code, NULL, t[i].body);
		o = (json_object *)1;
		assert_int_equal(
		        kapi_get(f->c, &cms, "n", "a", &o, &err), t[i].rc);
		assert_null(o);
		assert_int_equal(err.code, t[i].code);
		assert_non_null(err.message);
	}
	/* Nothing was retried: no Retry-After anywhere. */
	assert_int_equal(testsrv_nreqs(f->srv), (int)i);
	/* The text/plain 404 is kept as the message. */
	testsrv_push(f->srv, 404, NULL, "404 page not found\n");
	kapi_get(f->c, &cms, "n", "a", NULL, &err);
	assert_string_equal(err.message, "404 page not found");
	/* A 2xx that is not JSON. */
	testsrv_push(f->srv, 200, NULL, "<html>");
	assert_int_equal(
	        kapi_get(f->c, &cms, "n", "a", &o, &err), KAPI_EDECODE);
	assert_null(o);
	kapi_err_fini(&err);
}

static void
test_401_static_token(void **state)
{
	struct fx *f = *state;
	struct kapi_err err = KAPI_ERR_INIT;

	testsrv_set_token(f->srv, "other");
	assert_int_equal(kapi_get(f->c, &cms, "n", "a", NULL, &err),
	        KAPI_EUNAUTHORIZED);
	assert_int_equal(err.code, 401);
	/* A static token cannot change: no resend. */
	assert_int_equal(testsrv_nreqs(f->srv), 1);
	kapi_err_fini(&err);
}

static void
write_file(const char *path, const char *s)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(s, fp);
	fclose(fp);
}

static void
test_401_token_file_reread(void **state)
{
	struct fx *f = *state;
	struct kapi_req req
	        = { .verb = KAPI_GET, .res = &cms, .ns = "n", .name = "a" };
	struct kapi_resp resp;
	int fd;

	strcpy(f->tokfile, "/tmp/test_kapi_tok.XXXXXX");
	assert_true((fd = mkstemp(f->tokfile)) >= 0);
	close(fd);
	write_file(f->tokfile, "tok-A\n");
	f->conf->token_file = xstrdup(f->tokfile);
	testsrv_set_token(f->srv, "tok-A");
	testsrv_push(f->srv, 200, NULL, "{}");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_OK);
	assert_int_equal(resp.retries, 0);
	kapi_resp_fini(&resp);
	assert_string_equal(req_at(f, 0)->authorization, "Bearer tok-A");
	/* Rotation: the cached token is now wrong; a 401 re-reads. */
	write_file(f->tokfile, "tok-B\n");
	testsrv_set_token(f->srv, "tok-B");
	testsrv_push(f->srv, 200, NULL, "{}");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_OK);
	assert_int_equal(resp.retries, 1);
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 3);
	assert_string_equal(req_at(f, 1)->authorization, "Bearer tok-A");
	assert_string_equal(req_at(f, 2)->authorization, "Bearer tok-B");
	/* Without a 401: a file older than the refresh period is re-read
	 * at the next request. */
	write_file(f->tokfile, "tok-D\n");
	testsrv_set_token(f->srv, "tok-D");
	f->conf->token_read_ms -= KAPI_TOKEN_REFRESH_MS + 1;
	testsrv_push(f->srv, 200, NULL, "{}");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_OK);
	assert_int_equal(resp.retries, 0);
	kapi_resp_fini(&resp);
	assert_string_equal(req_at(f, 3)->authorization, "Bearer tok-D");
	testsrv_clear(f->srv);
	/* Only once: a token that stays wrong ends in 401. */
	testsrv_set_token(f->srv, "tok-C");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_EUNAUTHORIZED);
	assert_int_equal(resp.retries, 1);
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 2);
}

static void
test_429_retry_after_2(void **state)
{
	struct fx *f = *state;
	struct kapi_req req = { .verb = KAPI_CREATE,
		.res = &cms,
		.ns = "n",
		.body = "{\"metadata\":{\"name\":\"a\"}}" };
	struct testsrv_resp r429 = { .code = 429,
		.content_type = "text/plain; charset=utf-8",
		.headers = "Retry-After: 2",
		.body = "Too many requests, please try again later.\n" };
	struct kapi_resp resp;
	int64_t t0 = mono_ms();

	testsrv_push_resp(f->srv, &r429);
	testsrv_push(f->srv, 201, NULL, "{}");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_OK);
	assert_true(mono_ms() - t0 >= 2000);
	assert_int_equal(resp.retries, 1);
	assert_int_equal(resp.code, 201);
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 2);
	assert_true(req_at(f, 1)->t_ms - req_at(f, 0)->t_ms >= 2000);
	/* The POST body was resent intact. */
	assert_string_equal(req_at(f, 1)->body, req.body);
}

static void
always_429(void *arg, const struct testsrv_req *req, struct testsrv_resp *r)
{
	(void)arg;
	(void)req;
	r->code = 429;
	r->content_type = xstrdup("text/plain");
	r->headers = xstrdup("Retry-After: 0");
	r->body = xstrdup("Too many requests, please try again later.");
	r->body_len = strlen(r->body);
}

static void
test_429_at_most_10(void **state)
{
	struct fx *f = *state;
	struct kapi_req req = { .verb = KAPI_PATCH,
		.res = &cms,
		.ns = "n",
		.name = "a",
		.body = "{}" };
	struct kapi_resp resp;

	testsrv_set_handler(f->srv, always_429, NULL);
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_ETOOMANY);
	assert_int_equal(resp.retries, 10);
	assert_int_equal(resp.err.retry_after, 0);
	assert_string_equal(resp.err.message,
	        "Too many requests, please try again later.");
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 11);
	/* A per-request budget. */
	req.max_retries = 2;
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_ETOOMANY);
	assert_int_equal(resp.retries, 2);
	kapi_resp_fini(&resp);
	req.max_retries = -1;
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_ETOOMANY);
	assert_int_equal(resp.retries, 0);
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 11 + 3 + 1);
}

static void
test_5xx_retry_rules(void **state)
{
	struct fx *f = *state;
	struct kapi_req req
	        = { .verb = KAPI_GET, .res = &cms, .ns = "n", .name = "a" };
	struct kapi_resp resp;

	/* 503 without Retry-After: not retried. */
	testsrv_push(f->srv, 503, NULL, "");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_ESERVER);
	assert_int_equal(resp.retries, 0);
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 1);
	/* 503 (and a 500 ServerTimeout) with Retry-After: retried. */
	testsrv_push(f->srv, 500, "Retry-After: 0",
	        "{\"kind\":\"Status\",\"reason\":\"ServerTimeout\"}");
	testsrv_push(f->srv, 200, NULL, "{\"ok\":1}");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_OK);
	assert_int_equal(resp.retries, 1);
	kapi_resp_fini(&resp);
	assert_int_equal(testsrv_nreqs(f->srv), 3);
	/* 4xx other than 429 is never retried, even with the header. */
	testsrv_push(f->srv, 409, "Retry-After: 0", "");
	assert_int_equal(kapi_do(f->c, &req, &resp), KAPI_ECONFLICT);
	assert_int_equal(resp.retries, 0);
	assert_int_equal(resp.err.retry_after, 0);
	kapi_resp_fini(&resp);
}

static int
free_port(void)
{
	int port = testutil_free_port();

	assert_true(port > 0);
	return (port);
}

static void
test_connection_refused(void **state)
{
	struct kapi_conf *conf;
	struct kapi_client *c;
	struct kapi_req get
	        = { .verb = KAPI_GET, .res = &cms, .ns = "n", .name = "a" };
	struct kapi_req post = {
		.verb = KAPI_CREATE, .res = &cms, .ns = "n", .body = "{}"
	};
	struct kapi_resp resp;
	char url[64];

	(void)state;
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", free_port());
	conf = conf_new(url, tc.ca_cert, TOKEN);
	c = kapi_client_new(conf, "test/1.0");
	assert_int_equal(kapi_do(c, &get, &resp), KAPI_ETRANSPORT);
	assert_int_equal(resp.code, 0);
	assert_int_equal(resp.retries, KAPI_TRANSPORT_RETRIES);
	assert_non_null(strstr(resp.err.message, url));
	kapi_resp_fini(&resp);
	/* Writes are not retried after a connection failure. */
	assert_int_equal(kapi_do(c, &post, &resp), KAPI_ETRANSPORT);
	assert_int_equal(resp.retries, 0);
	kapi_resp_fini(&resp);
	kapi_client_free(c);
	conf_free(conf);
}

static void
test_wrong_ca(void **state)
{
	struct fx *f = *state;
	struct kapi_conf *conf
	        = conf_new(testsrv_url(f->srv), other.ca_cert, TOKEN);
	struct kapi_client *c = kapi_client_new(conf, "test/1.0");
	struct kapi_err err = KAPI_ERR_INIT;

	assert_int_equal(
	        kapi_get(c, &cms, "n", "a", NULL, &err), KAPI_ETRANSPORT);
	assert_non_null(strstr(err.message, "certificate"));
	assert_int_equal(testsrv_nreqs(f->srv), 0);
	kapi_client_free(c);
	/* insecure skips verification. */
	conf->insecure = true;
	c = kapi_client_new(conf, "test/1.0");
	testsrv_push(f->srv, 200, NULL, "{}");
	assert_int_equal(kapi_get(c, &cms, "n", "a", NULL, &err), KAPI_OK);
	kapi_client_free(c);
	conf_free(conf);
	kapi_err_fini(&err);
}

static void
test_tls_server_name(void **state)
{
	struct fx *f = *state;
	struct kapi_err err = KAPI_ERR_INIT;

	/* The certificate names localhost and 127.0.0.1, not "api.test". */
	f->conf->tls_server_name = xstrdup("api.test");
	assert_int_equal(
	        kapi_get(f->c, &cms, "n", "a", NULL, &err), KAPI_ETRANSPORT);
	assert_non_null(strstr(err.message, "api.test"));
	assert_int_equal(testsrv_nreqs(f->srv), 0);
	free(f->conf->tls_server_name);
	f->conf->tls_server_name = xstrdup("localhost");
	testsrv_push(f->srv, 200, NULL, "{}");
	assert_int_equal(kapi_get(f->c, &cms, "n", "a", NULL, &err), KAPI_OK);
	assert_int_equal(testsrv_nreqs(f->srv), 1);
	free(f->conf->tls_server_name);
	f->conf->tls_server_name = NULL;
	kapi_err_fini(&err);
}

static void
test_client_cert(void **state)
{
	struct testsrv_opts o
	        = { tc.server_cert, tc.server_key, tc.ca_cert, NULL };
	struct testsrv *srv = testsrv_start(&o);
	struct kapi_conf *conf;
	struct kapi_client *c;

	(void)state;
	assert_non_null(srv);
	conf = conf_new(testsrv_url(srv), tc.ca_cert, NULL);
	conf->cert_pem = xstrdup(tc.client_cert);
	conf->key_pem = xstrdup(tc.client_key);
	c = kapi_client_new(conf, "test/1.0");
	testsrv_push(srv, 200, NULL, "{}");
	assert_int_equal(kapi_get(c, &cms, "n", "a", NULL, NULL), KAPI_OK);
	assert_string_equal(testsrv_req(srv, 0)->client_cn, "admin");
	assert_string_equal(testsrv_req(srv, 0)->authorization, "");
	kapi_client_free(c);
	/* A certificate from another CA is not accepted as "admin". */
	free(conf->cert_pem);
	free(conf->key_pem);
	conf->cert_pem = xstrdup(other.client_cert);
	conf->key_pem = xstrdup(other.client_key);
	c = kapi_client_new(conf, "test/1.0");
	testsrv_push(srv, 200, NULL, "{}");
	kapi_get(c, &cms, "n", "a", NULL, NULL);
	if (testsrv_nreqs(srv) == 2) {
		assert_string_equal(testsrv_req(srv, 1)->client_cn, "");
	}
	kapi_client_free(c);
	/* Basic auth when a username is configured. */
	free(conf->cert_pem);
	free(conf->key_pem);
	conf->cert_pem = conf->key_pem = NULL;
	conf->username = xstrdup("u");
	conf->password = xstrdup("p");
	c = kapi_client_new(conf, "test/1.0");
	testsrv_clear(srv);
	testsrv_push(srv, 200, NULL, "{}");
	assert_int_equal(kapi_get(c, &cms, "n", "a", NULL, NULL), KAPI_OK);
	assert_string_equal(testsrv_req(srv, 0)->authorization, "Basic dTpw");
	kapi_client_free(c);
	conf_free(conf);
	testsrv_stop(srv);
}

static void
test_warning_logged(void **state)
{
	struct fx *f = *state;
	char path[] = "/tmp/test_kapi_log.XXXXXX", text[4096];
	int fd = mkstemp(path);
	ssize_t n;

	assert_true(fd >= 0);
	log_setfd(fd);
	testsrv_push(
	        f->srv, 200, "Warning: 299 - \"v1beta1 is deprecated\"", "{}");
	assert_int_equal(kapi_get(f->c, &cms, "n", "a", NULL, NULL), KAPI_OK);
	log_setfd(-1);
	n = pread(fd, text, sizeof(text) - 1, 0);
	assert_true(n > 0);
	text[n] = '\0';
	assert_non_null(strstr(text, "v1beta1 is deprecated"));
	close(fd);
	unlink(path);
}

/* ---- multi ----------------------------------------------------------- */

struct mstate {
	struct kapi_multi *m;
	int done;
	int chained;
	enum kapi_rc rc[16];
	char *body[16];
	struct buf wdata[2];
	enum kapi_rc wrc[2];
	int wdone[2];
	uint64_t wid[2];
};

static const char *const w0_chunks[] = {
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{"
	"\"ty",
	"pe\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n",
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
	"{\"resourceVersion\":\"9\"}}}\n",
};
static const char *const w1_chunks[] = {
	"{\"type\":\"DELETED\",\"object\":{}}\n",
	"{\"type\":\"ADDED\",\"object\":{}}\n",
};

static void
multi_handler(void *arg, const struct testsrv_req *req, struct testsrv_resp *r)
{
	const char *const *chunks;
	int i, n;

	(void)arg;
	if (strstr(req->uri, "watch=true") != NULL) {
		bool w0 = strstr(req->uri, "/w0") != NULL;

		chunks = w0 ? w0_chunks : w1_chunks;
		n = w0 ? 3 : 2;
		r->code = 200;
		r->chunks = xcalloc((size_t)n, sizeof(char *));
		for (i = 0; i < n; i++) {
			r->chunks[i] = xstrdup(chunks[i]);
		}
		r->nchunks = n;
		r->pause_ms = 100;
		return;
	}
	r->code = 200;
	r->delay_ms = 300;
	r->body = xasprintf("{\"path\":\"%s\"}", req->path);
	r->body_len = strlen(r->body);
}

static void
get_done(void *arg, struct kapi_resp *resp)
{
	struct mstate *st = arg;
	int i = st->done++;

	st->rc[i] = resp->err.rc;
	st->body[i] = buf_detach(&resp->body, NULL);
}

static void
chain_done(void *arg, struct kapi_resp *resp)
{
	struct mstate *st = arg;
	struct kapi_req req = {
		.verb = KAPI_GET, .res = &cms, .ns = "chain", .name = "next"
	};

	get_done(arg, resp);
	st->chained++;
	kapi_multi_submit(st->m, &req, get_done, st);
}

static void
w_data(void *arg, uint64_t id, const char *data, size_t len)
{
	struct mstate *st = arg;

	buf_append(&st->wdata[id == st->wid[0] ? 0 : 1], data, len);
}

static void
w_done(void *arg, struct kapi_resp *resp)
{
	struct mstate *st = arg;
	int i = resp->id == st->wid[0] ? 0 : 1;

	st->wdone[i]++;
	st->wrc[i] = resp->err.rc;
}

static void
run_until(struct kapi_multi *m, int64_t deadline_ms)
{
	while (kapi_multi_pending(m) > 0 && mono_ms() < deadline_ms) {
		kapi_multi_perform(m);
		kapi_multi_poll(m, NULL, 0, 100);
	}
	kapi_multi_perform(m);
}

static void
test_multi_concurrent(void **state)
{
	struct fx *f = *state;
	struct mstate st;
	struct kapi_req req = { .verb = KAPI_GET, .res = &cms, .ns = "n" };
	struct kapi_req w = { .verb = KAPI_WATCH, .res = &cms, .ns = "n" };
	char name[8], want[512];
	int64_t t0 = mono_ms();
	int i, j, found;

	memset(&st, 0, sizeof(st));
	st.m = kapi_multi_new(f->c);
	testsrv_set_handler(f->srv, multi_handler, NULL);
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "o%d", i);
		req.name = name; /* copied at submit */
		kapi_multi_submit(
		        st.m, &req, i == 0 ? chain_done : get_done, &st);
	}
	w.name = "w0";
	w.list.allow_watch_bookmarks = true;
	st.wid[0] = kapi_multi_watch(st.m, &w, w_data, w_done, &st);
	w.name = "w1";
	st.wid[1] = kapi_multi_watch(st.m, &w, w_data, w_done, &st);
	assert_int_equal(kapi_multi_pending(st.m), 7);
	run_until(st.m, t0 + 5000);
	assert_int_equal(kapi_multi_pending(st.m), 0);
	/* Five GETs of 300 ms each, plus one chained: concurrent. */
	assert_true(mono_ms() - t0 < 1400);
	assert_int_equal(st.done, 6);
	assert_int_equal(st.chained, 1);
	for (i = 0; i < 5; i++) {
		snprintf(want, sizeof(want),
		        "{\"path\":\"/api/v1/namespaces/n/configmaps/o%d\"}",
		        i);
		for (found = 0, j = 0; j < st.done; j++) {
			found += strcmp(st.body[j], want) == 0;
		}
		assert_int_equal(found, 1);
	}
	for (j = 0; j < st.done; j++) {
		assert_int_equal(st.rc[j], KAPI_OK);
		found += strstr(st.body[j], "/namespaces/chain/") != NULL;
		free(st.body[j]);
	}
	assert_int_equal(found, 2);
	assert_int_equal(st.wdone[0], 1);
	assert_int_equal(st.wdone[1], 1);
	assert_int_equal(st.wrc[0], KAPI_OK);
	assert_int_equal(st.wrc[1], KAPI_OK);
	snprintf(want, sizeof(want), "%s%s%s", w0_chunks[0], w0_chunks[1],
	        w0_chunks[2]);
	assert_string_equal(buf_str(&st.wdata[0]), want);
	snprintf(want, sizeof(want), "%s%s", w1_chunks[0], w1_chunks[1]);
	assert_string_equal(buf_str(&st.wdata[1]), want);
	buf_fini(&st.wdata[0]);
	buf_fini(&st.wdata[1]);
	kapi_multi_free(st.m);
}

static void
test_multi_watch_cancel_and_errors(void **state)
{
	struct fx *f = *state;
	static const char *const ev[] = { "{\"type\":\"ADDED\"}\n" };
	struct kapi_req w = { .verb = KAPI_WATCH,
		.res = &cms,
		.ns = "n",
		.list = { .resource_version = "5" } };
	struct kapi_req bad = { .verb = KAPI_GET, .res = &cms, .name = "x" };
	struct mstate st;
	int64_t t0 = mono_ms();
	int fds[2];
	struct kapi_pollfd pfd;

	memset(&st, 0, sizeof(st));
	st.m = kapi_multi_new(f->c);
	/* A held stream, cancelled once its first event arrived. */
	testsrv_push_stream(f->srv, 200, ev, 1, 0, true);
	st.wid[0] = kapi_multi_watch(st.m, &w, w_data, w_done, &st);
	while (st.wdata[0].len == 0 && mono_ms() - t0 < 3000) {
		kapi_multi_perform(st.m);
		kapi_multi_poll(st.m, NULL, 0, 50);
	}
	assert_string_equal(buf_str(&st.wdata[0]), ev[0]);
	assert_int_equal(kapi_multi_cancel(st.m, st.wid[0]), 0);
	assert_int_equal(kapi_multi_cancel(st.m, st.wid[0]), -1);
	assert_int_equal(kapi_multi_pending(st.m), 0);
	assert_int_equal(st.wdone[0], 0);
	/* A watch whose start fails: HTTP 410, no data. */
	testsrv_push(f->srv, 410, NULL,
	        "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410}");
	st.wid[1] = kapi_multi_watch(st.m, &w, w_data, w_done, &st);
	/* An invalid request completes through its callback. */
	kapi_multi_submit(st.m, &bad, get_done, &st);
	run_until(st.m, mono_ms() + 3000);
	assert_int_equal(st.wdone[1], 1);
	assert_int_equal(st.wrc[1], KAPI_EGONE);
	assert_int_equal(st.wdata[1].len, 0);
	assert_int_equal(st.done, 1);
	assert_int_equal(st.rc[0], KAPI_EBADREQUEST);
	free(st.body[0]);
	/* Extra descriptors are polled too. */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "x", 1), 1);
	pfd = (struct kapi_pollfd) { fds[0], POLLIN, 0 };
	assert_int_equal(kapi_multi_poll(st.m, &pfd, 1, 1000), 1);
	assert_true(pfd.revents & POLLIN);
	close(fds[0]);
	close(fds[1]);
	buf_fini(&st.wdata[0]);
	buf_fini(&st.wdata[1]);
	kapi_multi_free(st.m);
}

static void
slow_then_fast(
        void *arg, const struct testsrv_req *req, struct testsrv_resp *r)
{
	int *nslow = arg;

	if (strstr(req->path, "/slow") != NULL
	        && __atomic_fetch_add(nslow, 1, __ATOMIC_SEQ_CST) == 0) {
		r->code = 503;
		r->headers = xstrdup("Retry-After: 1");
		return;
	}
	r->code = 200;
	r->body = xasprintf("{\"path\":\"%s\"}", req->path);
	r->body_len = strlen(r->body);
}

struct order {
	char names[4][16];
	int64_t t[4];
	int retries[4];
	int n;
};

static void
order_done(void *arg, struct kapi_resp *resp)
{
	struct order *o = arg;

	snprintf(o->names[o->n], sizeof(o->names[0]), "%s",
	        strstr(buf_str(&resp->body), "slow") ? "slow" : "fast");
	o->t[o->n] = mono_ms();
	o->retries[o->n] = resp->retries;
	o->n++;
}

static void
test_multi_retry_is_a_deadline(void **state)
{
	static const char *const ev[] = { "{\"type\":\"ADDED\"}\n" };
	struct fx *f = *state;
	struct kapi_multi *m = kapi_multi_new(f->c);
	struct kapi_req slow
	        = { .verb = KAPI_GET, .res = &cms, .ns = "n", .name = "slow" };
	struct kapi_req fast
	        = { .verb = KAPI_GET, .res = &cms, .ns = "n", .name = "fast" };
	struct kapi_req w = { .verb = KAPI_WATCH, .res = &cms, .ns = "n" };
	struct mstate st;
	struct order o;
	int nslow = 0;
	int64_t t0 = mono_ms();

	memset(&o, 0, sizeof(o));
	memset(&st, 0, sizeof(st));
	testsrv_set_handler(f->srv, slow_then_fast, &nslow);
	kapi_multi_submit(m, &slow, order_done, &o);
	run_until(m, t0 + 300);
	/* The retry waits as a deadline: other requests run meanwhile. */
	kapi_multi_submit(m, &fast, order_done, &o);
	run_until(m, t0 + 3000);
	assert_int_equal(o.n, 2);
	assert_string_equal(o.names[0], "fast");
	assert_string_equal(o.names[1], "slow");
	assert_true(o.t[0] - t0 < 900);
	assert_true(o.t[1] - t0 >= 1000);
	assert_int_equal(o.retries[0], 0);
	assert_int_equal(o.retries[1], 1);
	/* A watch whose start is throttled is retried, then streams. */
	testsrv_set_handler(f->srv, NULL, NULL);
	testsrv_push(f->srv, 429, "Retry-After: 0", "busy");
	testsrv_push_stream(f->srv, 200, ev, 1, 0, false);
	st.wid[0] = kapi_multi_watch(m, &w, w_data, w_done, &st);
	run_until(m, mono_ms() + 3000);
	assert_int_equal(st.wdone[0], 1);
	assert_int_equal(st.wrc[0], KAPI_OK);
	assert_string_equal(buf_str(&st.wdata[0]), ev[0]);
	buf_fini(&st.wdata[0]);
	kapi_multi_free(m);
}

/* An endless 200 answer to a LIST (issue 13): the client stops at the
 * cap with KAPI_ETOOBIG naming the method, the path and the cap, keeps
 * nothing of the body, and its memory stays bounded; the next request on
 * the same client works.  The same for a GET with a per-request cap. */
static void
test_body_cap(void **state)
{
	struct fx *f = *state;
	static char filler[64 * 1024 + 1];
	char *chunks[2] = { "{\"kind\":\"ConfigMapList\",\"apiVersion\":"
		            "\"v1\",\"metadata\":{},\"items\":[",
		filler };
	struct testsrv_resp r = { .code = 200,
		.chunks = chunks,
		.nchunks = 2,
		.repeat_last = true };
	struct kapi_req req = { .verb = KAPI_LIST, .res = &cms, .ns = "d" };
	struct kapi_resp out;
	size_t rss0;
	int64_t t0;

	for (size_t i = 0; i + 10 < sizeof(filler); i += 10) {
		memcpy(filler + i, "{\"a\":1},  ", 10);
	}
	kapi_client_set_timeout(f->c, 5000);
	kapi_client_set_max_body(f->c, 2u << 20, 0);
	rss0 = testutil_rss_bytes();
	t0 = mono_ms();
	testsrv_push_resp(f->srv, &r);
	assert_int_equal(kapi_do(f->c, &req, &out), KAPI_ETOOBIG);
	printf("endless LIST stopped after %lld ms: %s\n",
	        (long long)(mono_ms() - t0), out.err.message);
	assert_int_equal(out.code, 200);
	assert_non_null(strstr(out.err.message,
	        "GET "
	        "/api/v1/namespaces/d/"
	        "configmaps"));
	assert_non_null(strstr(out.err.message, "2097152 bytes"));
	assert_string_equal(kapi_rc_name(out.err.rc), "ResponseTooLarge");
	assert_int_equal(out.body.len, 0);
	assert_int_equal(out.retries, 0);
	assert_true(rss0 == 0 || testutil_rss_bytes() < rss0 + (16u << 20));
	kapi_resp_fini(&out);
	/* A per-request cap, on a GET; then a normal answer. */
	testsrv_push_resp(f->srv, &r);
	req = (struct kapi_req) { .verb = KAPI_GET,
		.res = &cms,
		.ns = "d",
		.name = "x",
		.max_body = 100000 };
	assert_int_equal(kapi_do(f->c, &req, &out), KAPI_ETOOBIG);
	assert_non_null(strstr(out.err.message, "100000 bytes"));
	kapi_resp_fini(&out);
	testsrv_push(f->srv, 200, NULL, "{\"kind\":\"ConfigMap\"}");
	assert_int_equal(kapi_do(f->c, &req, &out), KAPI_OK);
	kapi_resp_fini(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_get_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_list_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_list_one_page, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_list_expired_continue, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_create_update_status, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_patch_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_bad_segment_not_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_path_as_is, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_body_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_dry_run_and_field_manager, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_error_classes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_401_static_token, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_401_token_file_reread, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_429_retry_after_2, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_429_at_most_10, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_5xx_retry_rules, setup, teardown),
		cmocka_unit_test(test_connection_refused),
		cmocka_unit_test_setup_teardown(
		        test_wrong_ca, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_tls_server_name, setup, teardown),
		cmocka_unit_test(test_client_cert),
		cmocka_unit_test_setup_teardown(
		        test_warning_logged, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_multi_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_multi_watch_cancel_and_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_multi_retry_is_a_deadline, setup, teardown),
	};

	return (cmocka_run_group_tests(tests, group_setup, group_teardown));
}
