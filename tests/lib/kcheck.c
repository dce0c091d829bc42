/*
 * kcheck.c: the conformance harness of kcheck.h: the per-test arena, the
 * asserting request, object and watch helpers, and the group's shared
 * kubesim.  Lifted from kubesim's conformance suite
 * (kubesim/tests/integration/test_kubesim_conformance.c) so other
 * black-box tests can use it.
 */
#include "tests/lib/kcheck.h"

#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"

struct ksim *kc_srv;
const char *kc_base;
static int seq; /* unique names */

/* The arena. */
#define ARENA_MAX 512
static char *a_str[ARENA_MAX];
static int n_str;
static json_object *a_json[ARENA_MAX];
static int n_json;
static struct ksim_watch *a_watch[32];
static int n_watch;
static struct ksim *a_srv[4];
static int n_srv;

char *
kc_keep_str(char *s)
{
	if (n_str == ARENA_MAX) {
		fail_msg("test arena full (strings)");
	}
	a_str[n_str++] = s;
	return (s);
}

json_object *
kc_keep(json_object *o)
{
	if (o != NULL) {
		if (n_json == ARENA_MAX) {
			fail_msg("test arena full (json)");
		}
		a_json[n_json++] = o;
	}
	return (o);
}

const char *
kc_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		abort();
	}
	va_end(ap);
	return (kc_keep_str(s));
}

int
kc_release(void **state)
{
	(void)state;
	while (n_watch > 0) {
		ksim_watch_close(a_watch[--n_watch]);
	}
	while (n_srv > 0) {
		ksim_stop(a_srv[--n_srv]);
	}
	while (n_json > 0) {
		json_object_put(a_json[--n_json]);
	}
	while (n_str > 0) {
		free(a_str[--n_str]);
	}
	kc_base = kc_srv != NULL ? ksim_url(kc_srv) : NULL;
	return (0);
}

/* A server of the test's own, stopped by the teardown unless the test
 * stops it with kc_stop_own(). */
struct ksim *
kc_start_own(const char *const *args)
{
	struct ksim *k = ksim_start(args);

	if (k == NULL) {
		fail_msg("cannot start kubesim ($KUBESIM=%s)",
		        getenv("KUBESIM") ? getenv("KUBESIM") : "unset");
	}
	a_srv[n_srv++] = k;
	return (k);
}

int
kc_stop_own(struct ksim *k)
{
	for (int i = 0; i < n_srv; i++) {
		if (a_srv[i] == k) {
			a_srv[i] = a_srv[--n_srv];
			break;
		}
	}
	return (ksim_stop(k));
}

/* JSON accessors that fail the test. */

const char *
kc_str_at(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	if (s == NULL) {
		fail_msg("no string at %s in %s", path,
		        json_object_to_json_string(o));
	}
	return (s);
}

int64_t
kc_int_at(json_object *o, const char *path)
{
	int64_t v;

	if (jx_get_int(o, path, &v) != 0) {
		fail_msg("no integer at %s in %s", path,
		        json_object_to_json_string(o));
	}
	return (v);
}

uint64_t
kc_rv_num(const char *rv)
{
	char *end;
	unsigned long long v;

	if (rv == NULL || *rv == '\0' || *rv == '0') {
		fail_msg("resourceVersion %s is not a positive decimal",
		        rv ? rv : "(null)");
	}
	v = strtoull(rv, &end, 10);
	if (*end != '\0') {
		fail_msg("resourceVersion %s is not decimal", rv);
	}
	return (v);
}

const char *
kc_rv_of(json_object *o)
{
	return (kc_str_at(o, "metadata.resourceVersion"));
}

uint64_t
kc_rvn(json_object *o)
{
	return (kc_rv_num(kc_rv_of(o)));
}

bool
kc_str_in_array(json_object *arr, const char *s)
{
	size_t n = arr != NULL && json_object_is_type(arr, json_type_array)
	        ? json_object_array_length(arr)
	        : 0;

	for (size_t i = 0; i < n; i++) {
		const char *v = json_object_get_string(
		        json_object_array_get_idx(arr, i));

		if (v != NULL && strcmp(v, s) == 0) {
			return (true);
		}
	}
	return (false);
}

void
kc_assert_match(const char *re, const char *s)
{
	regex_t rx;
	int rc;

	assert_int_equal(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
	rc = regexec(&rx, s, 0, NULL, 0);
	regfree(&rx);
	if (rc != 0) {
		fail_msg("\"%s\" does not match /%s/", s, re);
	}
}

void
kc_assert_contains(const char *s, const char *part)
{
	if (s == NULL || strstr(s, part) == NULL) {
		fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)",
		        part);
	}
}

/* Requests. */

/* Checks that an error answer is a Status of the HTTP code, served as
 * application/json. */
void
kc_check_error_body(const struct ksim_resp *r, const char *what)
{
	int64_t code;

	if (strncmp(r->content_type, KC_JSON, strlen(KC_JSON)) != 0
	        || strstr(r->content_type, "as=") != NULL) {
		fail_msg("%s: HTTP %ld with Content-Type \"%s\", not %s", what,
		        r->code, r->content_type, KC_JSON);
	}
	if (r->json == NULL) {
		fail_msg("%s: HTTP %ld body is not JSON: %s", what, r->code,
		        r->body);
	}
	if (jx_get_str(r->json, "kind") == NULL
	        || strcmp(jx_get_str(r->json, "kind"), "Status") != 0
	        || jx_get_int(r->json, "code", &code) != 0
	        || code != r->code) {
		fail_msg("%s: HTTP %ld body is not a matching Status: %s",
		        what, r->code, r->body);
	}
}

struct ksim_resp *
kc_send(const char *base, const char *method, const char *path,
        const char *ctype, const char *body, const char *const *hdrs)
{
	struct ksim_resp *r
	        = ksim_request(base, method, path, ctype, body, hdrs, 10000);
	const char *what = kc_fmt("%s %s", method, path);

	if (r->code == 0) {
		char *e = xstrdup(r->error);

		ksim_resp_free(r);
		fail_msg("%s: transfer failed: %s", what, kc_keep_str(e));
	}
	return (r);
}

/* Sends a request to kc_base and asserts the HTTP code; returns the body as
 * JSON (arena-owned; NULL when not JSON). */
json_object *
kc_callh(long code, const char *method, const char *ctype, const char *body,
        const char *const *hdrs, const char *path)
{
	struct ksim_resp *r
	        = kc_send(kc_base, method, path, ctype, body, hdrs);
	json_object *o;

	if (r->code != code) {
		const char *msg
		        = kc_fmt("%s %s: HTTP %ld, want %ld; body: %.800s",
		                method, path, r->code, code, r->body);

		ksim_resp_free(r);
		fail_msg("%s", msg);
	}
	if (r->code >= 400) {
		kc_check_error_body(r, kc_fmt("%s %s", method, path));
	}
	o = r->json != NULL ? json_object_get(r->json) : NULL;
	ksim_resp_free(r);
	return (kc_keep(o));
}

json_object *
kc_call(long code, const char *method, const char *ctype, const char *body,
        const char *path)
{
	return (kc_callh(code, method, ctype, body, NULL, path));
}

json_object *
kc_get(long code, const char *path)
{
	return (kc_call(code, "GET", NULL, NULL, path));
}

json_object *
kc_post(long code, const char *path, const char *body)
{
	return (kc_call(code, "POST", KC_JSON, body, path));
}

json_object *
kc_put(long code, const char *path, json_object *obj)
{
	return (kc_call(
	        code, "PUT", KC_JSON, json_object_to_json_string(obj), path));
}

json_object *
kc_put_s(long code, const char *path, const char *body)
{
	return (kc_call(code, "PUT", KC_JSON, body, path));
}

json_object *
kc_patch(long code, const char *ctype, const char *path, const char *body)
{
	return (kc_call(code, "PATCH", ctype, body, path));
}

json_object *
kc_del(long code, const char *path, const char *body)
{
	return (kc_call(code, "DELETE", body ? KC_JSON : NULL, body, path));
}

/* Asserts a failure Status's reason (and HTTP code inside it). */
void
kc_check_status(json_object *st, long code, const char *reason)
{
	assert_non_null(st);
	assert_string_equal(kc_str_at(st, "kind"), "Status");
	assert_string_equal(kc_str_at(st, "apiVersion"), "v1");
	assert_string_equal(kc_str_at(st, "status"), "Failure");
	assert_int_equal(kc_int_at(st, "code"), code);
	if (strcmp(kc_str_at(st, "reason"), reason) != 0) {
		fail_msg("reason %s, want %s: %s", kc_str_at(st, "reason"),
		        reason, json_object_to_json_string(st));
	}
}

/* Objects. */

const char *
kc_new_ns(void)
{
	const char *ns = kc_fmt("cf-%d-%d", (int)getpid() % 1000, ++seq);

	kc_post(201, "/api/v1/namespaces",
	        kc_fmt("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	               "\"metadata\":{\"name\":\"%s\"}}",
	                ns));
	return (ns);
}

const char *
kc_cm_path(const char *ns, const char *name)
{
	return (name ? kc_fmt("/api/v1/namespaces/%s/configmaps/%s", ns, name)
	             : kc_fmt("/api/v1/namespaces/%s/configmaps", ns));
}

/* Creates ConfigMap ns/name; meta_extra is inserted into metadata (e.g.
 * "\"labels\":{\"a\":\"b\"}") or NULL. */
json_object *
kc_mk_cm(const char *ns, const char *name, const char *meta_extra)
{
	return (kc_post(201, kc_cm_path(ns, NULL),
	        kc_fmt("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	               "\"metadata\":{\"name\":\"%s\"%s%s},"
	               "\"data\":{\"k\":\"v\"}}",
	                name, meta_extra ? "," : "",
	                meta_extra ? meta_extra : "")));
}

const char *
kc_crd_json(
        const char *group, const char *plural, const char *kind, bool status)
{
	return (kc_fmt("{\"apiVersion\":\"apiextensions.k8s.io/v1\","
	               "\"kind\":\"CustomResourceDefinition\","
	               "\"metadata\":{\"name\":\"%s.%s\"},"
	               "\"spec\":{\"group\":\"%s\",\"scope\":\"Namespaced\","
	               "\"names\":{\"plural\":\"%s\",\"singular\":\"%.*s\","
	               "\"kind\":\"%s\",\"listKind\":\"%sList\"},"
	               "\"versions\":[{\"name\":\"v1\",\"served\":true,"
	               "\"storage\":true,%s" KC_WIDGET_SCHEMA "}]}}",
	        plural, group, group, plural, (int)strlen(plural) - 1, plural,
	        kind, kind,
	        status ? "\"subresources\":{\"status\":{}}," : ""));
}

/* Makes sure the CRD exists; returns the POST answer or NULL when it
 * already existed. */
json_object *
kc_ensure_crd(
        const char *group, const char *plural, const char *kind, bool status)
{
	struct ksim_resp *r = kc_send(kc_base, "POST", KC_CRD_PATH, KC_JSON,
	        kc_crd_json(group, plural, kind, status), NULL);
	json_object *o = NULL;

	if (r->code != 201 && r->code != 409) {
		const char *msg = kc_fmt("create CRD %s.%s: HTTP %ld: %.500s",
		        plural, group, r->code, r->body);

		ksim_resp_free(r);
		fail_msg("%s", msg);
	}
	if (r->code == 201) {
		o = kc_keep(json_object_get(r->json));
	}
	ksim_resp_free(r);
	return (o);
}

void
kc_need_widgets(void)
{
	kc_ensure_crd("example.com", "widgets", "Widget", true);
}

void
kc_need_gizmos(void)
{
	kc_ensure_crd("example.com", "gizmos", "Gizmo", false);
}

const char *
kc_w_path(const char *ns, const char *name)
{
	return (name ? kc_fmt("/apis/example.com/v1/namespaces/%s/widgets/%s",
	                ns, name)
	             : kc_fmt("/apis/example.com/v1/namespaces/%s/widgets",
	                     ns));
}

/* Creates Widget ns/name with spec.foo = foo; meta_extra as for kc_mk_cm;
 * rest: more top-level members ("\"status\":{...}") or NULL. */
json_object *
kc_mk_widget(const char *ns, const char *name, const char *foo,
        const char *meta_extra, const char *rest)
{
	return (kc_post(201, kc_w_path(ns, NULL),
	        kc_fmt("{\"apiVersion\":\"example.com/"
	               "v1\",\"kind\":\"Widget\","
	               "\"metadata\":{\"name\":\"%s\"%s%s},"
	               "\"spec\":{\"foo\":\"%s\",\"replicas\":1}%s%s}",
	                name, meta_extra ? "," : "",
	                meta_extra ? meta_extra : "", foo, rest ? "," : "",
	                rest ? rest : "")));
}

/* A deep copy of o (arena-owned) for editing. */
json_object *
kc_copy(json_object *o)
{
	json_object *c = NULL;

	assert_int_equal(json_object_deep_copy(o, &c, NULL), 0);
	return (kc_keep(c));
}

void
kc_set_str(json_object *o, const char *path, const char *v)
{
	assert_int_equal(jx_set_path(o, path, json_object_new_string(v)), 0);
}

/* Watches. */

struct ksim_watch *
kc_watch_on(const char *base, const char *path)
{
	struct ksim_watch *w;

	if (n_watch == (int)(sizeof(a_watch) / sizeof(a_watch[0]))) {
		fail_msg("test arena full (watches)");
	}
	w = ksim_watch_open(base, path, NULL);
	a_watch[n_watch++] = w;
	return (w);
}

/* A watch answer is application/json, chunked (spec B.5). */
void
kc_check_stream_headers(struct ksim_watch *w, const char *path)
{
	char *ct = kc_keep_str(ksim_watch_header(w, "Content-Type"));
	char *te = kc_keep_str(ksim_watch_header(w, "Transfer-Encoding"));

	if (ct == NULL || strncmp(ct, KC_JSON, strlen(KC_JSON)) != 0
	        || strstr(ct, "as=") != NULL) {
		fail_msg("watch %s: Content-Type %s, want %s", path,
		        ct ? ct : "(none)", KC_JSON);
	}
	if (te == NULL || strcasecmp(te, "chunked") != 0) {
		fail_msg("watch %s: Transfer-Encoding %s, want chunked", path,
		        te ? te : "(none)");
	}
}

/* Opens a watch on kc_base + path and asserts HTTP 200. */
struct ksim_watch *
kc_watch(const char *path)
{
	struct ksim_watch *w = kc_watch_on(kc_base, path);
	long code = ksim_watch_status(w, 5000);

	if (code != 200) {
		char *body = kc_keep_str(ksim_watch_body(w));

		ksim_watch_wait_end(w, 2000);
		fail_msg("watch %s: HTTP %ld, want 200: %.500s", path, code,
		        body);
	}
	return (w);
}

json_object *
kc_next_event(struct ksim_watch *w, int ms)
{
	return (kc_keep(ksim_watch_next(w, ms)));
}

/* The next event other than BOOKMARK; asserts its type and name (name
 * NULL: any). */
json_object *
kc_expect_event(struct ksim_watch *w, const char *type, const char *name)
{
	int64_t deadline = ksim_now_ms() + KC_EVENT_MS;
	json_object *ev;

	for (;;) {
		int64_t left = deadline - ksim_now_ms();

		ev = kc_next_event(w, left > 0 ? (int)left : 0);
		if (ev == NULL) {
			fail_msg("no %s event for %s within %d ms", type,
			        name ? name : "*", KC_EVENT_MS);
		}
		if (strcmp(kc_str_at(ev, "type"), "BOOKMARK") != 0) {
			break;
		}
	}
	if (strcmp(kc_str_at(ev, "type"), type) != 0
	        || (name != NULL
	                && strcmp(kc_str_at(ev, "object.metadata.name"), name)
	                        != 0)) {
		fail_msg("want %s %s, got %s", type, name ? name : "*",
		        json_object_to_json_string(ev));
	}
	assert_int_equal(json_object_object_length(ev), 2);
	assert_non_null(jx_get(ev, "object"));
	assert_int_equal(ksim_watch_bad_lines(w), 0);
	return (ev);
}

/* Asserts that no non-BOOKMARK event arrives within ms. */
void
kc_expect_quiet(struct ksim_watch *w, int ms)
{
	int64_t deadline = ksim_now_ms() + ms;
	json_object *ev;

	for (;;) {
		int64_t left = deadline - ksim_now_ms();

		if (left <= 0) {
			return;
		}
		ev = kc_next_event(w, (int)left);
		if (ev == NULL) {
			return;
		}
		if (strcmp(kc_str_at(ev, "type"), "BOOKMARK") != 0) {
			fail_msg("unexpected event %s",
			        json_object_to_json_string(ev));
		}
	}
}

/* The list's metadata.resourceVersion. */
const char *
kc_list_rv(const char *path)
{
	return (kc_rv_of(kc_get(200, path)));
}

const char *
kc_resource_entry_verbs(json_object *list, const char *name, json_object **ent)
{
	json_object *res = jx_get(list, "resources");
	size_t n = res ? json_object_array_length(res) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(res, i);

		if (jx_get_str(e, "name") != NULL
		        && strcmp(jx_get_str(e, "name"), name) == 0) {
			*ent = e;
			return (json_object_to_json_string(
			        jx_get(e, "verbs")));
		}
	}
	fail_msg("no resource %s in %s", name,
	        json_object_to_json_string(list));
	return (NULL);
}

void
kc_assert_verbs(json_object *ent, const char *const *want, size_t n)
{
	json_object *verbs = jx_get(ent, "verbs");

	assert_non_null(verbs);
	for (size_t i = 0; i < n; i++) {
		if (!kc_str_in_array(verbs, want[i])) {
			fail_msg("verb %s missing in %s", want[i],
			        json_object_to_json_string(ent));
		}
	}
	if (json_object_array_length(verbs) != n) {
		fail_msg("verbs of %s: want exactly %zu",
		        json_object_to_json_string(ent), n);
	}
}

json_object *
kc_find_group(json_object *groups, const char *name)
{
	size_t n = groups ? json_object_array_length(groups) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(groups, i);
		const char *gn = jx_get_str(g, "name");

		if (gn != NULL && strcmp(gn, name) == 0) {
			return (g);
		}
	}
	return (NULL);
}

const char *
kc_cond_status(json_object *crd, const char *type)
{
	json_object *conds = jx_get(crd, "status.conditions");
	size_t n = conds ? json_object_array_length(conds) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(conds, i);

		if (strcmp(kc_str_at(c, "type"), type) == 0) {
			return (kc_str_at(c, "status"));
		}
	}
	return ("(missing)");
}

/* Names of a list's items, comma-joined (arena-owned). */
const char *
kc_item_names(json_object *list)
{
	json_object *items = jx_get(list, "items");
	char *s = xstrdup("");

	if (items == NULL || !json_object_is_type(items, json_type_array)) {
		fail_msg("no items array in %s",
		        json_object_to_json_string(list));
	}
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		char *t = xasprintf("%s%s%s", s, i ? "," : "",
		        kc_str_at(json_object_array_get_idx(items, i),
		                "metadata.name"));

		free(s);
		s = t;
	}
	return (kc_keep_str(s));
}

/* The group's server. */

int
kc_group_start(const char *const *args)
{
	kc_srv = ksim_start(args);
	if (kc_srv == NULL) {
		fprintf(stderr,
		        "kcheck: kubesim did not start; every test fails\n");
		return (-1);
	}
	kc_base = ksim_url(kc_srv);
	return (0);
}

int
kc_group_stop(void)
{
	int rc;

	kc_release(NULL);
	if (kc_srv == NULL) {
		return (0);
	}
	rc = ksim_stop(kc_srv);
	kc_srv = NULL;
	if (rc != 0) {
		fprintf(stderr,
		        "kcheck: kubesim exit status %d after SIGTERM, want "
		        "0\n",
		        rc);
		return (-1);
	}
	return (0);
}
