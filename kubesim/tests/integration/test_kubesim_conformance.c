/*
 * test_kubesim_conformance.c: the black-box conformance suite of bin/kubesim.
 * g01..g52 are the items 1 to 52 of the checklist in section G of the
 * Kubernetes API spec (/work/shared/spec/kube-api.md); x01..x17 check
 * other rules of sections A, C and D (error bodies, scope, boolean
 * parameters, body checks, field validation, Tables, OpenAPI stub,
 * namespaces, leases, garbage collection, patches) and the bearer-token,
 * TLS and kubeconfig modes of the command line.  Every test talks HTTP to
 * a running kubesim through tests/lib/ksim; one server (started by the
 * group setup) is shared, and tests that need a tiny history or other
 * flags start their own.  CONFORMANCE_FILTER=<glob> runs only the matching
 * tests.
 *
 * Memory: strings, parsed bodies, watches and extra servers made by a test
 * are kept in a per-test arena that the test teardown releases, so a failed
 * assertion never leaves a watch thread or a server behind.
 */
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/testutil.h"

#define JSON     "application/json"
#define MERGE    "application/merge-patch+json"
#define JSONP    "application/json-patch+json"
#define SMP      "application/strategic-merge-patch+json"
#define APPLY    "application/apply-patch+yaml"
#define EVENT_MS 3000

static const char *const group_args[]
        = { "--watch-history", "50", "--bookmark-interval", "1s",
	          "--watch-timeout", "4s", "--too-large-wait", "1s", NULL };
static const char *const small_args[]
        = { "--watch-history", "5", "--bookmark-interval", "1s",
	          "--watch-timeout", "4s", "--too-large-wait", "1s", NULL };

static struct ksim *K;   /* the group's server */
static const char *BASE; /* its URL; tests may point it elsewhere */
static int seq;          /* unique names */

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

static char *
keep_str(char *s)
{
	if (n_str == ARENA_MAX) {
		fail_msg("test arena full (strings)");
	}
	a_str[n_str++] = s;
	return (s);
}

static json_object *
keep(json_object *o)
{
	if (o != NULL) {
		if (n_json == ARENA_MAX) {
			fail_msg("test arena full (json)");
		}
		a_json[n_json++] = o;
	}
	return (o);
}

static const char *S(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));

static const char *
S(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		abort();
	}
	va_end(ap);
	return (keep_str(s));
}

static int
arena_release(void **state)
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
	BASE = K != NULL ? ksim_url(K) : NULL;
	return (0);
}

/* A server of the test's own, stopped by the teardown unless the test
 * stops it with stop_own(). */
static struct ksim *
start_own(const char *const *args)
{
	struct ksim *k = ksim_start(args);

	if (k == NULL) {
		fail_msg("cannot start kubesim ($KUBESIM=%s)",
		        getenv("KUBESIM") ? getenv("KUBESIM") : "unset");
	}
	a_srv[n_srv++] = k;
	return (k);
}

static int
stop_own(struct ksim *k)
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

static const char *
str_at(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	if (s == NULL) {
		fail_msg("no string at %s in %s", path,
		        json_object_to_json_string(o));
	}
	return (s);
}

static int64_t
int_at(json_object *o, const char *path)
{
	int64_t v;

	if (jx_get_int(o, path, &v) != 0) {
		fail_msg("no integer at %s in %s", path,
		        json_object_to_json_string(o));
	}
	return (v);
}

static uint64_t
rv_num(const char *rv)
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

static const char *
rv_of(json_object *o)
{
	return (str_at(o, "metadata.resourceVersion"));
}

static uint64_t
rvn(json_object *o)
{
	return (rv_num(rv_of(o)));
}

static bool
str_in_array(json_object *arr, const char *s)
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

static void
assert_match(const char *re, const char *s)
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

static void
assert_contains(const char *s, const char *part)
{
	if (s == NULL || strstr(s, part) == NULL) {
		fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)",
		        part);
	}
}

/* Requests. */

/* Checks that an error answer is a Status of the HTTP code, served as
 * application/json. */
static void
check_error_body(const struct ksim_resp *r, const char *what)
{
	int64_t code;

	if (strncmp(r->content_type, JSON, strlen(JSON)) != 0
	        || strstr(r->content_type, "as=") != NULL) {
		fail_msg("%s: HTTP %ld with Content-Type \"%s\", not %s", what,
		        r->code, r->content_type, JSON);
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

static struct ksim_resp *
send_req(const char *base, const char *method, const char *path,
        const char *ctype, const char *body, const char *const *hdrs)
{
	struct ksim_resp *r
	        = ksim_request(base, method, path, ctype, body, hdrs, 10000);
	const char *what = S("%s %s", method, path);

	if (r->code == 0) {
		char *e = xstrdup(r->error);

		ksim_resp_free(r);
		fail_msg("%s: transfer failed: %s", what, keep_str(e));
	}
	return (r);
}

/* Sends a request to BASE and asserts the HTTP code; returns the body as
 * JSON (arena-owned; NULL when not JSON). */
static json_object *
callh(long code, const char *method, const char *ctype, const char *body,
        const char *const *hdrs, const char *path)
{
	struct ksim_resp *r = send_req(BASE, method, path, ctype, body, hdrs);
	json_object *o;

	if (r->code != code) {
		const char *msg = S("%s %s: HTTP %ld, want %ld; body: %.800s",
		        method, path, r->code, code, r->body);

		ksim_resp_free(r);
		fail_msg("%s", msg);
	}
	if (r->code >= 400) {
		check_error_body(r, S("%s %s", method, path));
	}
	o = r->json != NULL ? json_object_get(r->json) : NULL;
	ksim_resp_free(r);
	return (keep(o));
}

static json_object *
call(long code, const char *method, const char *ctype, const char *body,
        const char *path)
{
	return (callh(code, method, ctype, body, NULL, path));
}

static json_object *
get(long code, const char *path)
{
	return (call(code, "GET", NULL, NULL, path));
}

static json_object *
post(long code, const char *path, const char *body)
{
	return (call(code, "POST", JSON, body, path));
}

static json_object *
put(long code, const char *path, json_object *obj)
{
	return (call(
	        code, "PUT", JSON, json_object_to_json_string(obj), path));
}

static json_object *
put_s(long code, const char *path, const char *body)
{
	return (call(code, "PUT", JSON, body, path));
}

static json_object *
patch(long code, const char *ctype, const char *path, const char *body)
{
	return (call(code, "PATCH", ctype, body, path));
}

static json_object *
del(long code, const char *path, const char *body)
{
	return (call(code, "DELETE", body ? JSON : NULL, body, path));
}

/* Asserts a failure Status's reason (and HTTP code inside it). */
static void
check_status(json_object *st, long code, const char *reason)
{
	assert_non_null(st);
	assert_string_equal(str_at(st, "kind"), "Status");
	assert_string_equal(str_at(st, "apiVersion"), "v1");
	assert_string_equal(str_at(st, "status"), "Failure");
	assert_int_equal(int_at(st, "code"), code);
	if (strcmp(str_at(st, "reason"), reason) != 0) {
		fail_msg("reason %s, want %s: %s", str_at(st, "reason"),
		        reason, json_object_to_json_string(st));
	}
}

/* Objects. */

static const char *
new_ns(void)
{
	const char *ns = S("cf-%d-%d", (int)getpid() % 1000, ++seq);

	post(201, "/api/v1/namespaces",
	        S("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	          "\"metadata\":{\"name\":\"%s\"}}",
	                ns));
	return (ns);
}

static const char *
cm_path(const char *ns, const char *name)
{
	return (name ? S("/api/v1/namespaces/%s/configmaps/%s", ns, name)
	             : S("/api/v1/namespaces/%s/configmaps", ns));
}

/* Creates ConfigMap ns/name; meta_extra is inserted into metadata (e.g.
 * "\"labels\":{\"a\":\"b\"}") or NULL. */
static json_object *
mk_cm(const char *ns, const char *name, const char *meta_extra)
{
	return (post(201, cm_path(ns, NULL),
	        S("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	          "\"metadata\":{\"name\":\"%s\"%s%s},"
	          "\"data\":{\"k\":\"v\"}}",
	                name, meta_extra ? "," : "",
	                meta_extra ? meta_extra : "")));
}

#define WIDGET_SCHEMA                                                         \
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","               \
	"\"properties\":{\"spec\":{\"type\":\"object\","                      \
	"\"x-kubernetes-preserve-unknown-fields\":true,"                      \
	"\"properties\":{\"foo\":{\"type\":\"string\"},"                      \
	"\"replicas\":{\"type\":\"integer\"}}},"                              \
	"\"status\":{\"type\":\"object\","                                    \
	"\"x-kubernetes-preserve-unknown-fields\":true}}}}"

static const char *
crd_json(const char *group, const char *plural, const char *kind, bool status)
{
	return (S("{\"apiVersion\":\"apiextensions.k8s.io/v1\","
	          "\"kind\":\"CustomResourceDefinition\","
	          "\"metadata\":{\"name\":\"%s.%s\"},"
	          "\"spec\":{\"group\":\"%s\",\"scope\":\"Namespaced\","
	          "\"names\":{\"plural\":\"%s\",\"singular\":\"%.*s\","
	          "\"kind\":\"%s\",\"listKind\":\"%sList\"},"
	          "\"versions\":[{\"name\":\"v1\",\"served\":true,"
	          "\"storage\":true,%s" WIDGET_SCHEMA "}]}}",
	        plural, group, group, plural, (int)strlen(plural) - 1, plural,
	        kind, kind,
	        status ? "\"subresources\":{\"status\":{}}," : ""));
}

#define CRD_PATH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

/* Makes sure the CRD exists; returns the POST answer or NULL when it
 * already existed. */
static json_object *
ensure_crd(
        const char *group, const char *plural, const char *kind, bool status)
{
	struct ksim_resp *r = send_req(BASE, "POST", CRD_PATH, JSON,
	        crd_json(group, plural, kind, status), NULL);
	json_object *o = NULL;

	if (r->code != 201 && r->code != 409) {
		const char *msg = S("create CRD %s.%s: HTTP %ld: %.500s",
		        plural, group, r->code, r->body);

		ksim_resp_free(r);
		fail_msg("%s", msg);
	}
	if (r->code == 201) {
		o = keep(json_object_get(r->json));
	}
	ksim_resp_free(r);
	return (o);
}

static void
need_widgets(void)
{
	ensure_crd("example.com", "widgets", "Widget", true);
}

static void
need_gizmos(void)
{
	ensure_crd("example.com", "gizmos", "Gizmo", false);
}

static const char *
w_path(const char *ns, const char *name)
{
	return (name ? S("/apis/example.com/v1/namespaces/%s/widgets/%s", ns,
	                name)
	             : S("/apis/example.com/v1/namespaces/%s/widgets", ns));
}

/* Creates Widget ns/name with spec.foo = foo; meta_extra as for mk_cm;
 * rest: more top-level members ("\"status\":{...}") or NULL. */
static json_object *
mk_widget(const char *ns, const char *name, const char *foo,
        const char *meta_extra, const char *rest)
{
	return (post(201, w_path(ns, NULL),
	        S("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
	          "\"metadata\":{\"name\":\"%s\"%s%s},"
	          "\"spec\":{\"foo\":\"%s\",\"replicas\":1}%s%s}",
	                name, meta_extra ? "," : "",
	                meta_extra ? meta_extra : "", foo, rest ? "," : "",
	                rest ? rest : "")));
}

/* A deep copy of o (arena-owned) for editing. */
static json_object *
copy(json_object *o)
{
	json_object *c = NULL;

	assert_int_equal(json_object_deep_copy(o, &c, NULL), 0);
	return (keep(c));
}

static void
set_str(json_object *o, const char *path, const char *v)
{
	assert_int_equal(jx_set_path(o, path, json_object_new_string(v)), 0);
}

/* Watches. */

static struct ksim_watch *
watch_on(const char *base, const char *path)
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
static void
check_stream_headers(struct ksim_watch *w, const char *path)
{
	char *ct = keep_str(ksim_watch_header(w, "Content-Type"));
	char *te = keep_str(ksim_watch_header(w, "Transfer-Encoding"));

	if (ct == NULL || strncmp(ct, JSON, strlen(JSON)) != 0
	        || strstr(ct, "as=") != NULL) {
		fail_msg("watch %s: Content-Type %s, want %s", path,
		        ct ? ct : "(none)", JSON);
	}
	if (te == NULL || strcasecmp(te, "chunked") != 0) {
		fail_msg("watch %s: Transfer-Encoding %s, want chunked", path,
		        te ? te : "(none)");
	}
}

/* Opens a watch on BASE + path and asserts HTTP 200. */
static struct ksim_watch *
watch(const char *path)
{
	struct ksim_watch *w = watch_on(BASE, path);
	long code = ksim_watch_status(w, 5000);

	if (code != 200) {
		char *body = keep_str(ksim_watch_body(w));

		ksim_watch_wait_end(w, 2000);
		fail_msg("watch %s: HTTP %ld, want 200: %.500s", path, code,
		        body);
	}
	return (w);
}

static json_object *
next_event(struct ksim_watch *w, int ms)
{
	return (keep(ksim_watch_next(w, ms)));
}

/* The next event other than BOOKMARK; asserts its type and name (name
 * NULL: any). */
static json_object *
expect_event(struct ksim_watch *w, const char *type, const char *name)
{
	int64_t deadline = ksim_now_ms() + EVENT_MS;
	json_object *ev;

	for (;;) {
		int64_t left = deadline - ksim_now_ms();

		ev = next_event(w, left > 0 ? (int)left : 0);
		if (ev == NULL) {
			fail_msg("no %s event for %s within %d ms", type,
			        name ? name : "*", EVENT_MS);
		}
		if (strcmp(str_at(ev, "type"), "BOOKMARK") != 0) {
			break;
		}
	}
	if (strcmp(str_at(ev, "type"), type) != 0
	        || (name != NULL
	                && strcmp(str_at(ev, "object.metadata.name"), name)
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
static void
expect_quiet(struct ksim_watch *w, int ms)
{
	int64_t deadline = ksim_now_ms() + ms;
	json_object *ev;

	for (;;) {
		int64_t left = deadline - ksim_now_ms();

		if (left <= 0) {
			return;
		}
		ev = next_event(w, (int)left);
		if (ev == NULL) {
			return;
		}
		if (strcmp(str_at(ev, "type"), "BOOKMARK") != 0) {
			fail_msg("unexpected event %s",
			        json_object_to_json_string(ev));
		}
	}
}

/* The list's metadata.resourceVersion. */
static const char *
list_rv(const char *path)
{
	return (rv_of(get(200, path)));
}

static const char *
resource_entry_verbs(json_object *list, const char *name, json_object **ent)
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

static void
assert_verbs(json_object *ent, const char *const *want, size_t n)
{
	json_object *verbs = jx_get(ent, "verbs");

	assert_non_null(verbs);
	for (size_t i = 0; i < n; i++) {
		if (!str_in_array(verbs, want[i])) {
			fail_msg("verb %s missing in %s", want[i],
			        json_object_to_json_string(ent));
		}
	}
	if (json_object_array_length(verbs) != n) {
		fail_msg("verbs of %s: want exactly %zu",
		        json_object_to_json_string(ent), n);
	}
}

static json_object *
find_group(json_object *groups, const char *name)
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

static const char *
cond_status(json_object *crd, const char *type)
{
	json_object *conds = jx_get(crd, "status.conditions");
	size_t n = conds ? json_object_array_length(conds) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(conds, i);

		if (strcmp(str_at(c, "type"), type) == 0) {
			return (str_at(c, "status"));
		}
	}
	return ("(missing)");
}

/* Names of a list's items, comma-joined (arena-owned). */
static const char *
item_names(json_object *list)
{
	json_object *items = jx_get(list, "items");
	char *s = xstrdup("");

	if (items == NULL || !json_object_is_type(items, json_type_array)) {
		fail_msg("no items array in %s",
		        json_object_to_json_string(list));
	}
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		char *t = xasprintf("%s%s%s", s, i ? "," : "",
		        str_at(json_object_array_get_idx(items, i),
		                "metadata.name"));

		free(s);
		s = t;
	}
	return (keep_str(s));
}

/* Discovery and CRDs */

static void
g01_discovery_api(void **state)
{
	json_object *api = get(200, "/api");
	json_object *apis, *groups;

	(void)state;
	assert_string_equal(str_at(api, "kind"), "APIVersions");
	assert_true(str_in_array(jx_get(api, "versions"), "v1"));
	apis = get(200, "/apis");
	assert_string_equal(str_at(apis, "kind"), "APIGroupList");
	groups = jx_get(apis, "groups");
	assert_non_null(groups);
	for (size_t i = 0; i < json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i);

		if (strcmp(str_at(g, "name"), "") == 0) {
			fail_msg("core group listed in /apis");
		}
		str_at(g, "preferredVersion.groupVersion");
	}
	assert_non_null(find_group(groups, "apiextensions.k8s.io"));
	assert_string_equal(str_at(find_group(groups, "coordination.k8s.io"),
	                            "preferredVersion.groupVersion"),
	        "coordination.k8s.io/v1");
}

static void
g02_discovery_group_version(void **state)
{
	json_object *l = get(200, "/apis/coordination.k8s.io/v1");
	json_object *ent = NULL;
	bool nsd = false;

	(void)state;
	assert_string_equal(str_at(l, "kind"), "APIResourceList");
	assert_string_equal(
	        str_at(l, "groupVersion"), "coordination.k8s.io/v1");
	resource_entry_verbs(l, "leases", &ent);
	assert_int_equal(jx_get_bool(ent, "namespaced", &nsd), 0);
	assert_true(nsd);
	assert_string_equal(str_at(ent, "kind"), "Lease");
	assert_true(str_in_array(jx_get(ent, "verbs"), "list"));
	assert_true(str_in_array(jx_get(ent, "verbs"), "watch"));
}

static void
g03_crd_discovery(void **state)
{
	static const char *const cr_verbs[] = { "delete", "deletecollection",
		"get", "list", "patch", "create", "update", "watch" };
	static const char *const st_verbs[] = { "get", "patch", "update" };
	json_object *l, *ent = NULL, *crd;

	(void)state;
	crd = ensure_crd("example.com", "widgets", "Widget", true);
	if (crd != NULL) {
		/* The install is synchronous (spec H): the 201 shows it. */
		assert_string_equal(cond_status(crd, "NamesAccepted"), "True");
		assert_string_equal(cond_status(crd, "Established"), "True");
	}
	l = get(200, "/apis/example.com/v1");
	assert_string_equal(str_at(l, "kind"), "APIResourceList");
	assert_string_equal(str_at(l, "groupVersion"), "example.com/v1");
	resource_entry_verbs(l, "widgets", &ent);
	assert_string_equal(str_at(ent, "kind"), "Widget");
	assert_verbs(ent, cr_verbs, 8);
	resource_entry_verbs(l, "widgets/status", &ent);
	assert_verbs(ent, st_verbs, 3);
	assert_non_null(find_group(
	        jx_get(get(200, "/apis"), "groups"), "example.com"));
	crd = get(200, CRD_PATH "/widgets.example.com");
	assert_string_equal(cond_status(crd, "NamesAccepted"), "True");
	assert_string_equal(cond_status(crd, "Established"), "True");
}

static void
g04_crd_bad_name(void **state)
{
	const char *body = crd_json("example.com", "bolts", "Bolt", false);
	json_object *o = keep(testutil_json(body, 0));
	json_object *st;

	(void)state;
	set_str(o, "metadata.name", "nuts.example.com");
	st = post(422, CRD_PATH, json_object_to_json_string(o));
	check_status(st, 422, "Invalid");
	get(404, CRD_PATH "/nuts.example.com");
}

static void
g05_crd_delete_cascade(void **state)
{
	const char *ns = new_ns();
	const char *base
	        = S("/apis/five.example.com/v1/namespaces/%s/sprockets", ns);
	const char *obj
	        = "{\"apiVersion\":\"five.example.com/v1\","
	          "\"kind\":\"Sprocket\",\"metadata\":{\"name\":\"%s\"},"
	          "\"spec\":{\"foo\":\"x\"}}";
	struct ksim_watch *w;
	json_object *ev1, *ev2;
	int64_t deadline;
	struct ksim_resp *r;
	long code = 0;

	(void)state;
	assert_non_null(
	        ensure_crd("five.example.com", "sprockets", "Sprocket", true));
	post(201, base, S(obj, "s1"));
	post(201, base, S(obj, "s2"));
	w = watch(S("/apis/five.example.com/v1/sprockets?watch=true"
	            "&resourceVersion=%s",
	        list_rv("/apis/five.example.com/v1/sprockets")));
	del(200, CRD_PATH "/sprockets.five.example.com", NULL);
	ev1 = expect_event(w, "DELETED", NULL);
	ev2 = expect_event(w, "DELETED", NULL);
	assert_string_not_equal(str_at(ev1, "object.metadata.name"),
	        str_at(ev2, "object.metadata.name"));
	deadline = ksim_now_ms() + 5000;
	while (ksim_now_ms() < deadline) {
		r = send_req(BASE, "GET", "/apis/five.example.com/v1", NULL,
		        NULL, NULL);
		code = r->code;
		ksim_resp_free(r);
		if (code == 404) {
			break;
		}
		usleep(50000);
	}
	assert_int_equal(code, 404);
	get(404, CRD_PATH "/sprockets.five.example.com");
	assert_null(find_group(
	        jx_get(get(200, "/apis"), "groups"), "five.example.com"));
}

static void
g06_aggregated_discovery_negotiation(void **state)
{
	static const char *const hdrs[]
	        = { "Accept: application/json;g=apidiscovery.k8s.io;v=v2;"
		    "as=APIGroupDiscoveryList,application/json",
		          NULL };
	struct ksim_resp *r;
	const char *ct,
	        *v2 = "application/json;g=apidiscovery.k8s.io;v=v2;"
	              "as=APIGroupDiscoveryList";

	(void)state;
	r = send_req(BASE, "GET", "/apis", NULL, NULL, hdrs);
	ct = S("%s", r->content_type);
	assert_int_equal(r->code, 200);
	assert_non_null(keep(r->json ? json_object_get(r->json) : NULL));
	if (strncmp(ct, v2, strlen(v2)) == 0) {
		assert_string_equal(
		        str_at(r->json, "kind"), "APIGroupDiscoveryList");
	} else {
		if (strcmp(ct, JSON) != 0
		        && strncmp(ct, JSON ";", strlen(JSON) + 1) != 0) {
			fail_msg("Content-Type %s", ct);
		}
		assert_null(strstr(ct, "as="));
		assert_string_equal(str_at(r->json, "kind"), "APIGroupList");
	}
	ksim_resp_free(r);
}

/* Create / read */

static void
g07_create_configmap(void **state)
{
	const char *ns = new_ns();
	json_object *o = mk_cm(ns, "c7", NULL);

	(void)state;
	assert_match(
	        "^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}"
	        "-[0-9a-f]{12}$",
	        str_at(o, "metadata.uid"));
	assert_match(
	        "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
	        str_at(o, "metadata.creationTimestamp"));
	assert_true(strlen(rv_of(o)) > 0);
	assert_string_equal(str_at(o, "metadata.namespace"), ns);
	assert_string_equal(str_at(o, "kind"), "ConfigMap");
	assert_string_equal(str_at(o, "apiVersion"), "v1");
}

static void
g08_create_existing(void **state)
{
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	mk_cm(ns, "c8", NULL);
	st = post(409, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c8\"}}");
	check_status(st, 409, "AlreadyExists");
	assert_string_equal(str_at(st, "details.name"), "c8");
	assert_string_equal(str_at(st, "details.kind"), "configmaps");
	assert_string_equal(
	        str_at(st, "message"), "configmaps \"c8\" already exists");
}

static void
g09_get_missing(void **state)
{
	json_object *st = get(404, cm_path("default", "nope9"));

	(void)state;
	check_status(st, 404, "NotFound");
	assert_string_equal(
	        str_at(st, "message"), "configmaps \"nope9\" not found");
}

static void
g10_generate_name(void **state)
{
	const char *ns = new_ns();
	json_object *o;

	(void)state;
	o = post(201, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"generateName\":\"w-\"}}");
	assert_match("^w-[bcdfghjklmnpqrstvwxz2456789]{5}$",
	        str_at(o, "metadata.name"));
	get(200, cm_path(ns, str_at(o, "metadata.name")));
}

static void
g11_create_with_rv(void **state)
{
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	st = post(500, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c11\",\"resourceVersion\":\"5\"}}");
	assert_string_equal(str_at(st, "message"),
	        "resourceVersion should not be set on objects to be created");
	get(404, cm_path(ns, "c11"));
}

static void
g12_namespace_mismatch_and_missing(void **state)
{
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	st = post(400, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c12\",\"namespace\":\"a\"}}");
	check_status(st, 400, "BadRequest");
	assert_contains(str_at(st, "message"),
	        "the namespace of the provided object does not match the "
	        "namespace sent on the request");
	st = post(404, cm_path("nope-ns12", NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c12\"}}");
	check_status(st, 404, "NotFound");
	assert_string_equal(
	        str_at(st, "message"), "namespaces \"nope-ns12\" not found");
}

static void
g13_media_types(void **state)
{
	static const char *const proto[]
	        = { "Accept: application/vnd.kubernetes.protobuf", NULL };
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	st = call(415, "POST", "text/plain",
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c13\"}}",
	        cm_path(ns, NULL));
	check_status(st, 415, "UnsupportedMediaType");
	need_widgets();
	mk_widget(ns, "w13", "a", NULL, NULL);
	st = callh(406, "GET", NULL, NULL, proto, w_path(ns, "w13"));
	check_status(st, 406, "NotAcceptable");
}

/* Update / patch / concurrency */

static void
g14_put_stale(void **state)
{
	const char *ns = new_ns();
	json_object *o = mk_cm(ns, "c14", NULL);
	json_object *c = copy(o), *st;

	(void)state;
	set_str(c, "data.k", "v2");
	put(200, cm_path(ns, "c14"), c);
	set_str(o, "data.k", "v3");
	st = put(409, cm_path(ns, "c14"), o);
	check_status(st, 409, "Conflict");
	assert_contains(str_at(st, "message"),
	        "the object has been modified; please apply your changes to "
	        "the latest version and try again");
	assert_contains(str_at(st, "message"),
	        "Operation cannot be fulfilled on configmaps \"c14\"");
	assert_string_equal(
	        str_at(get(200, cm_path(ns, "c14")), "data.k"), "v2");
}

static void
g15_put_current(void **state)
{
	const char *ns = new_ns();
	json_object *o = mk_cm(ns, "c15", NULL);
	json_object *u;

	(void)state;
	o = copy(o);
	set_str(o, "data.k", "v2");
	u = put(200, cm_path(ns, "c15"), o);
	assert_string_not_equal(rv_of(u), rv_of(o));
	assert_true(rvn(u) > rvn(o));
	assert_string_equal(rv_of(get(200, cm_path(ns, "c15"))), rv_of(u));
	assert_string_equal(str_at(u, "data.k"), "v2");
}

static void
g16_put_without_rv(void **state)
{
	const char *ns = new_ns();
	json_object *o, *st, *causes;
	bool found = false;

	(void)state;
	need_widgets();
	o = copy(mk_widget(ns, "w16", "a", NULL, NULL));
	jx_strip(o, "metadata.resourceVersion");
	set_str(o, "spec.foo", "b");
	st = put(422, w_path(ns, "w16"), o);
	check_status(st, 422, "Invalid");
	causes = jx_get(st, "details.causes");
	for (size_t i = 0; causes && i < json_object_array_length(causes);
	        i++) {
		const char *f = jx_get_str(
		        json_object_array_get_idx(causes, i), "field");

		found = found || (f && !strcmp(f, "metadata.resourceVersion"));
	}
	if (!found) {
		fail_msg("no cause for metadata.resourceVersion: %s",
		        json_object_to_json_string(st));
	}
	o = copy(mk_cm(ns, "c16", NULL));
	jx_strip(o, "metadata.resourceVersion");
	set_str(o, "data.k", "v2");
	assert_string_equal(
	        str_at(put(200, cm_path(ns, "c16"), o), "data.k"), "v2");
}

static void
g17_put_missing(void **state)
{
	const char *ns = new_ns();
	json_object *l;

	(void)state;
	need_widgets();
	put_s(404, w_path(ns, "w17"),
	        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
	        "\"metadata\":{\"name\":\"w17\"},\"spec\":{\"foo\":\"a\"}}");
	l = put_s(201,
	        S("/apis/coordination.k8s.io/v1/namespaces/%s/leases/l17", ns),
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"l17\"},"
	        "\"spec\":{\"holderIdentity\":\"me\"}}");
	assert_string_equal(str_at(l, "kind"), "Lease");
	assert_string_equal(str_at(l, "spec.holderIdentity"), "me");
}

static void
g18_noop_put(void **state)
{
	const char *ns = new_ns();
	json_object *o = mk_cm(ns, "c18", NULL);
	struct ksim_watch *w;
	json_object *u, *ev;

	(void)state;
	w = watch(S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL),
	        rv_of(o)));
	u = put(200, cm_path(ns, "c18"), get(200, cm_path(ns, "c18")));
	assert_string_equal(rv_of(u), rv_of(o));
	assert_string_equal(rv_of(get(200, cm_path(ns, "c18"))), rv_of(o));
	patch(200, MERGE, cm_path(ns, "c18"),
	        "{\"data\":{\"k\":\"changed\"}}");
	ev = expect_event(w, "MODIFIED", "c18");
	assert_string_equal(str_at(ev, "object.data.k"), "changed");
}

static void
g19_merge_and_json_patch(void **state)
{
	const char *ns = new_ns();
	json_object *o;

	(void)state;
	post(201, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"c19\"},"
	        "\"data\":{\"a\":\"1\",\"b\":\"1\"}}");
	o = patch(200, MERGE, cm_path(ns, "c19"),
	        "{\"data\":{\"a\":null,\"b\":\"2\"}}");
	assert_null(jx_get(o, "data.a"));
	assert_string_equal(str_at(o, "data.b"), "2");
	o = patch(200, JSONP, cm_path(ns, "c19"),
	        "[{\"op\":\"replace\",\"path\":\"/data/b\",\"value\":\"3\"}]");
	assert_string_equal(str_at(o, "data.b"), "3");
	o = get(200, cm_path(ns, "c19"));
	assert_null(jx_get(o, "data.a"));
	assert_string_equal(str_at(o, "data.b"), "3");
}

static void
g20_smp_on_cr(void **state)
{
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	need_widgets();
	mk_widget(ns, "w20", "a", NULL, NULL);
	st = patch(415, SMP, w_path(ns, "w20"), "{\"spec\":{\"foo\":\"b\"}}");
	check_status(st, 415, "UnsupportedMediaType");
	assert_string_equal(str_at(st, "message"),
	        "the body of the request was in an unknown format - accepted "
	        "media types include: application/json-patch+json, "
	        "application/merge-patch+json, application/apply-patch+yaml");
}

static void
g21_patch_with_rv(void **state)
{
	const char *ns = new_ns();
	json_object *o = mk_cm(ns, "c21", NULL);
	json_object *st;

	(void)state;
	patch(200, MERGE, cm_path(ns, "c21"), "{\"data\":{\"k\":\"v2\"}}");
	st = patch(409, MERGE, cm_path(ns, "c21"),
	        S("{\"metadata\":{\"resourceVersion\":\"%s\"},"
	          "\"data\":{\"k\":\"v3\"}}",
	                rv_of(o)));
	check_status(st, 409, "Conflict");
	assert_string_equal(
	        str_at(get(200, cm_path(ns, "c21")), "data.k"), "v2");
	o = patch(200, MERGE, cm_path(ns, "c21"), "{\"data\":{\"k\":\"v4\"}}");
	assert_string_equal(str_at(o, "data.k"), "v4");
}

static void
g22_patch_missing_and_apply(void **state)
{
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	st = patch(404, MERGE, cm_path(ns, "c22"), "{\"data\":{\"k\":\"v\"}}");
	check_status(st, 404, "NotFound");
	st = patch(422, APPLY, cm_path(ns, "c22"),
	        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c22\n"
	        "data:\n  k: v\n");
	check_status(st, 422, "Invalid");
	assert_contains(str_at(st, "message"), "fieldManager");
	assert_contains(str_at(st, "message"), "Required value");
}

struct racer {
	const char *base;
	const char *path;
	const char *body;
	long code;
	pthread_barrier_t *bar;
};

static void *
race_main(void *arg)
{
	struct racer *r = arg;
	struct ksim_resp *resp;

	pthread_barrier_wait(r->bar);
	resp = ksim_request(
	        r->base, "PUT", r->path, JSON, r->body, NULL, 10000);
	r->code = resp->code;
	ksim_resp_free(resp);
	return (NULL);
}

static void
g23_lease_race(void **state)
{
	const char *ns = new_ns();
	const char *p
	        = S("/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	json_object *l;
	struct racer r[2];
	pthread_t t[2];
	pthread_barrier_t bar;

	(void)state;
	l = post(201, p,
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"l23\"},"
	        "\"spec\":{\"holderIdentity\":\"none\"}}");
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++) {
		json_object *c = copy(l);

		set_str(c, "spec.holderIdentity", i ? "b" : "a");
		r[i] = (struct racer) { BASE, S("%s/l23", p),
			S("%s", json_object_to_json_string(c)), 0, &bar };
		pthread_create(&t[i], NULL, race_main, &r[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
	}
	pthread_barrier_destroy(&bar);
	if (!((r[0].code == 200 && r[1].code == 409)
	            || (r[0].code == 409 && r[1].code == 200))) {
		fail_msg("racing PUTs got %ld and %ld, want 200 and 409",
		        r[0].code, r[1].code);
	}
	assert_string_equal(
	        str_at(get(200, S("%s/l23", p)), "spec.holderIdentity"),
	        r[0].code == 200 ? "a" : "b");
}

/* Generation and status */

static void
g24_generation(void **state)
{
	const char *ns = new_ns();
	json_object *o;

	(void)state;
	need_widgets();
	o = mk_widget(ns, "w24", "a", NULL, NULL);
	assert_int_equal(int_at(o, "metadata.generation"), 1);
	o = copy(o);
	set_str(o, "spec.foo", "b");
	o = copy(put(200, w_path(ns, "w24"), o));
	assert_int_equal(int_at(o, "metadata.generation"), 2);
	set_str(o, "metadata.labels.l", "x");
	o = copy(put(200, w_path(ns, "w24"), o));
	assert_int_equal(int_at(o, "metadata.generation"), 2);
	assert_string_equal(str_at(o, "metadata.labels.l"), "x");
	set_str(o, "metadata.annotations.n", "y");
	o = put(200, w_path(ns, "w24"), o);
	assert_int_equal(int_at(o, "metadata.generation"), 2);
	assert_int_equal(
	        int_at(get(200, w_path(ns, "w24")), "metadata.generation"), 2);
}

static void
g25_status_ignored_on_main(void **state)
{
	const char *ns = new_ns();
	json_object *o;

	(void)state;
	need_widgets();
	o = mk_widget(ns, "w25", "a", NULL, "\"status\":{\"phase\":\"born\"}");
	assert_null(jx_get(o, "status.phase"));
	assert_null(jx_get(get(200, w_path(ns, "w25")), "status.phase"));
	o = copy(o);
	set_str(o, "status.phase", "s1");
	o = copy(put(200, S("%s/status", w_path(ns, "w25")), o));
	assert_string_equal(str_at(o, "status.phase"), "s1");
	set_str(o, "status.phase", "hacked");
	put(200, w_path(ns, "w25"), o);
	o = get(200, w_path(ns, "w25"));
	assert_string_equal(str_at(o, "status.phase"), "s1");
	assert_int_equal(int_at(o, "metadata.generation"), 1);
}

static void
g26_status_subresource_put(void **state)
{
	const char *ns = new_ns();
	const char *sp = NULL;
	json_object *o, *old, *u, *st;

	(void)state;
	need_widgets();
	old = mk_widget(ns, "w26", "a", NULL, NULL);
	sp = S("%s/status", w_path(ns, "w26"));
	o = copy(old);
	set_str(o, "status.phase", "ok");
	set_str(o, "spec.foo", "changed");
	set_str(o, "metadata.labels.l", "x");
	u = put(200, sp, o);
	assert_true(rvn(u) > rvn(old));
	o = get(200, w_path(ns, "w26"));
	assert_string_equal(str_at(o, "status.phase"), "ok");
	assert_string_equal(str_at(o, "spec.foo"), "a");
	assert_null(jx_get(o, "metadata.labels.l"));
	assert_int_equal(int_at(o, "metadata.generation"), 1);
	assert_string_equal(rv_of(o), rv_of(u));
	o = copy(old);
	set_str(o, "status.phase", "stale");
	st = put(409, sp, o);
	check_status(st, 409, "Conflict");
	o = get(200, sp);
	assert_string_equal(str_at(o, "status.phase"), "ok");
	assert_string_equal(str_at(o, "metadata.name"), "w26");
}

static void
g27_no_status_subresource(void **state)
{
	const char *ns = new_ns();
	const char *p = S("/apis/example.com/v1/namespaces/%s/gizmos", ns);
	json_object *o;

	(void)state;
	need_gizmos();
	o = post(201, p,
	        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gizmo\","
	        "\"metadata\":{\"name\":\"g27\"},\"spec\":{\"foo\":\"a\"},"
	        "\"status\":{\"phase\":\"p0\"}}");
	assert_int_equal(int_at(o, "metadata.generation"), 1);
	assert_string_equal(str_at(o, "status.phase"), "p0");
	get(404, S("%s/g27/status", p));
	o = copy(o);
	set_str(o, "status.phase", "p1");
	put(404, S("%s/g27/status", p), o);
	o = put(200, S("%s/g27", p), o);
	assert_string_equal(str_at(o, "status.phase"), "p1");
	assert_int_equal(int_at(o, "metadata.generation"), 2);
}

/* Deletion and finalizers */

static void
g28_delete_plain(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *o, *st, *e1, *e2, *e3;

	(void)state;
	need_widgets();
	w = watch(S("%s?watch=true&resourceVersion=%s", w_path(ns, NULL),
	        list_rv(w_path(ns, NULL))));
	o = mk_widget(ns, "w28", "a", NULL, NULL);
	e1 = expect_event(w, "ADDED", "w28");
	patch(200, MERGE, w_path(ns, "w28"), "{\"spec\":{\"foo\":\"b\"}}");
	e2 = expect_event(w, "MODIFIED", "w28");
	st = del(200, w_path(ns, "w28"), NULL);
	assert_string_equal(str_at(st, "kind"), "Status");
	assert_string_equal(str_at(st, "status"), "Success");
	assert_string_equal(str_at(st, "details.kind"), "widgets");
	assert_string_equal(str_at(st, "details.name"), "w28");
	assert_string_equal(str_at(st, "details.group"), "example.com");
	assert_string_equal(
	        str_at(st, "details.uid"), str_at(o, "metadata.uid"));
	get(404, w_path(ns, "w28"));
	e3 = expect_event(w, "DELETED", "w28");
	assert_true(rvn(jx_get(e2, "object")) > rvn(jx_get(e1, "object")));
	assert_true(rvn(jx_get(e3, "object")) > rvn(jx_get(e2, "object")));
}

#define HOLD "\"finalizers\":[\"example.com/hold\"]"

static void
g29_delete_with_finalizer(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *o, *d, *d2, *ev;
	int64_t grace;

	(void)state;
	o = mk_cm(ns, "c29", HOLD);
	w = watch(S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL),
	        rv_of(o)));
	d = del(200, cm_path(ns, "c29"), NULL);
	assert_string_equal(str_at(d, "kind"), "ConfigMap");
	str_at(d, "metadata.deletionTimestamp");
	grace = int_at(d, "metadata.deletionGracePeriodSeconds");
	assert_int_equal(grace, 0);
	assert_true(rvn(d) > rvn(o));
	o = get(200, cm_path(ns, "c29"));
	assert_string_equal(str_at(o, "metadata.deletionTimestamp"),
	        str_at(d, "metadata.deletionTimestamp"));
	ev = expect_event(w, "MODIFIED", "c29");
	str_at(ev, "object.metadata.deletionTimestamp");
	d2 = del(200, cm_path(ns, "c29"), NULL);
	assert_string_equal(rv_of(d2), rv_of(d));
	assert_string_equal(str_at(d2, "metadata.deletionTimestamp"),
	        str_at(d, "metadata.deletionTimestamp"));
	patch(200, MERGE, cm_path(ns, "c29"),
	        "{\"metadata\":{\"finalizers\":null}}");
	expect_event(w, "DELETED", "c29");
}

static void
g30_no_new_finalizers(void **state)
{
	const char *ns = new_ns();
	json_object *st, *o;

	(void)state;
	need_widgets();
	mk_widget(ns, "w30", "a", HOLD, NULL);
	del(200, w_path(ns, "w30"), NULL);
	st = patch(422, MERGE, w_path(ns, "w30"),
	        "{\"metadata\":{\"finalizers\":[\"example.com/hold\","
	        "\"example.com/new\"]}}");
	check_status(st, 422, "Invalid");
	assert_contains(str_at(st, "message"),
	        "no new finalizers can be added if the object is being "
	        "deleted");
	o = patch(200, MERGE, w_path(ns, "w30"), "{\"spec\":{\"foo\":\"b\"}}");
	assert_string_equal(str_at(o, "spec.foo"), "b");
	str_at(o, "metadata.deletionTimestamp");
	patch(200, MERGE, w_path(ns, "w30"),
	        "{\"metadata\":{\"finalizers\":null}}");
	get(404, w_path(ns, "w30"));
}

static void
g31_last_finalizer_removed(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *o;

	(void)state;
	o = mk_cm(ns, "c31", HOLD);
	w = watch(S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL),
	        rv_of(o)));
	del(200, cm_path(ns, "c31"), NULL);
	expect_event(w, "MODIFIED", "c31");
	o = copy(get(200, cm_path(ns, "c31")));
	jx_strip(o, "metadata.finalizers");
	put(200, cm_path(ns, "c31"), o);
	get(404, cm_path(ns, "c31"));
	expect_event(w, "DELETED", "c31");
}

static void
g32_foreground_delete(void **state)
{
	const char *ns = new_ns();
	json_object *d;
	struct ksim_resp *r;

	(void)state;
	need_widgets();
	mk_widget(ns, "w32", "a", NULL, NULL);
	d = del(200, w_path(ns, "w32"),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"propagationPolicy\":\"Foreground\"}");
	str_at(d, "metadata.deletionTimestamp");
	if (!str_in_array(
	            jx_get(d, "metadata.finalizers"), "foregroundDeletion")) {
		fail_msg("no foregroundDeletion finalizer: %s",
		        json_object_to_json_string(d));
	}
	/* The GC emulation may finish the deletion at once. */
	r = send_req(BASE, "GET", w_path(ns, "w32"), NULL, NULL, NULL);
	if (r->code == 200) {
		assert_non_null(jx_get(r->json, "metadata.deletionTimestamp"));
	} else {
		assert_int_equal(r->code, 404);
	}
	ksim_resp_free(r);
}

static void
g33_delete_precondition(void **state)
{
	const char *ns = new_ns();
	json_object *st;

	(void)state;
	mk_cm(ns, "c33", NULL);
	st = del(409, cm_path(ns, "c33"),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"preconditions\":{\"uid\":"
	        "\"00000000-0000-4000-8000-000000000000\"}}");
	check_status(st, 409, "Conflict");
	assert_contains(str_at(st, "message"), "Precondition failed");
	get(200, cm_path(ns, "c33"));
}

static void
g34_two_controllers(void **state)
{
	const char *ns = new_ns();
	const char *ref
	        = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	          "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}";
	json_object *st;

	(void)state;
	st = post(422, cm_path(ns, NULL),
	        S("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	          "\"metadata\":{\"name\":\"c34\",\"ownerReferences\":[%s,%s]}"
	          "}",
	                S(ref, "o1", "11111111-1111-4111-8111-111111111111"),
	                S(ref, "o2", "22222222-2222-4222-8222-222222222222")));
	check_status(st, 422, "Invalid");
	get(404, cm_path(ns, "c34"));
}

/* List, selectors, pagination */

static void
assert_sorted(json_object *list)
{
	json_object *items = jx_get(list, "items");
	uint64_t lrv = rvn(list);

	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *it = json_object_array_get_idx(items, i);

		assert_true(rvn(it) <= lrv);
		if (i > 0) {
			json_object *pr
			        = json_object_array_get_idx(items, i - 1);
			int c = strcmp(str_at(pr, "metadata.namespace"),
			        str_at(it, "metadata.namespace"));

			if (c == 0) {
				c = strcmp(str_at(pr, "metadata.name"),
				        str_at(it, "metadata.name"));
			}
			if (c >= 0) {
				fail_msg("items not sorted: %s",
				        item_names(list));
			}
		}
	}
}

static void
g35_list_shape(void **state)
{
	const char *ns = new_ns(), *ns2 = new_ns();
	const char *lab = S("\"labels\":{\"g35\":\"%s\"}", ns);
	json_object *l;

	(void)state;
	l = get(200, cm_path(ns, NULL));
	assert_string_equal(str_at(l, "kind"), "ConfigMapList");
	assert_string_equal(str_at(l, "apiVersion"), "v1");
	assert_non_null(jx_get(l, "items"));
	assert_true(json_object_is_type(jx_get(l, "items"), json_type_array));
	assert_int_equal(json_object_array_length(jx_get(l, "items")), 0);
	rvn(l);
	mk_cm(ns2, "b", lab);
	mk_cm(ns, "c", lab);
	mk_cm(ns, "a", lab);
	mk_cm(ns2, "a", lab);
	mk_cm(ns, "b", lab);
	l = get(200, cm_path(ns, NULL));
	assert_string_equal(item_names(l), "a,b,c");
	assert_sorted(l);
	l = get(200,
	        S("/api/v1/configmaps?labelSelector=%s",
	                keep_str(ksim_urlenc(S("g35=%s", ns)))));
	assert_int_equal(json_object_array_length(jx_get(l, "items")), 5);
	assert_sorted(l);
}

static void
g36_label_selector(void **state)
{
	const char *ns = new_ns();
	json_object *l;

	(void)state;
	mk_cm(ns, "o1", "\"labels\":{\"env\":\"a\"}");
	mk_cm(ns, "o2", "\"labels\":{\"env\":\"b\",\"tier\":\"web\"}");
	mk_cm(ns, "o3", "\"labels\":{\"env\":\"a\",\"tier\":\"db\"}");
	mk_cm(ns, "o4", "\"labels\":{\"env\":\"c\"}");
	mk_cm(ns, "o5", "\"labels\":{\"env\":\"b\",\"legacy\":\"x\"}");
	mk_cm(ns, "o6", NULL);
	mk_cm(ns, "o7", "\"labels\":{\"env\":\"a\",\"legacy\":\"\"}");
	l = get(200,
	        S("%s?labelSelector=%s", cm_path(ns, NULL),
	                keep_str(ksim_urlenc(
	                        "env in (a,b),tier!=db,!legacy"))));
	assert_string_equal(item_names(l), "o1,o2");
}

static void
g37_bad_label_selector(void **state)
{
	json_object *st;

	(void)state;
	st = get(400,
	        S("%s?labelSelector=%s", cm_path("default", NULL),
	                keep_str(ksim_urlenc("a in (b"))));
	check_status(st, 400, "BadRequest");
}

static void
g38_field_selector(void **state)
{
	const char *ns = new_ns();
	json_object *l, *st;

	(void)state;
	mk_cm(ns, "x", NULL);
	mk_cm(ns, "y", NULL);
	l = get(200,
	        S("%s?fieldSelector=%s", cm_path(ns, NULL),
	                keep_str(ksim_urlenc("metadata.name=x"))));
	assert_string_equal(item_names(l), "x");
	need_widgets();
	st = get(400,
	        S("%s?fieldSelector=%s", w_path(ns, NULL),
	                keep_str(ksim_urlenc("spec.foo=1"))));
	check_status(st, 400, "BadRequest");
	assert_string_equal(
	        str_at(st, "message"), "field label not supported: spec.foo");
}

static void
g39_pagination(void **state)
{
	const char *ns = new_ns();
	const char *cont = "", *rv = NULL;
	char seen[256] = "";
	json_object *l;
	int pages = 0;

	(void)state;
	for (int i = 0; i < 5; i++) {
		mk_cm(ns, S("p%d", i), NULL);
	}
	do {
		const char *q = *cont
		        ? S("&continue=%s", keep_str(ksim_urlenc(cont)))
		        : "";

		l = get(200, S("%s?limit=2%s", cm_path(ns, NULL), q));
		assert_true(json_object_array_length(jx_get(l, "items")) <= 2);
		if (rv == NULL) {
			rv = rv_of(l);
			assert_int_equal(
			        json_object_array_length(jx_get(l, "items")),
			        2);
			assert_true(
			        strlen(str_at(l, "metadata.continue")) > 0);
			mk_cm(ns, "p2x", NULL);
			mk_cm(ns, "p9", NULL);
		} else {
			assert_string_equal(rv_of(l), rv);
		}
		if (*item_names(l)) {
			strcat(seen, *seen ? "," : "");
			strcat(seen, item_names(l));
		}
		cont = jx_get_str(l, "metadata.continue");
		cont = cont ? cont : "";
		assert_true(++pages <= 6);
	} while (*cont);
	assert_string_equal(seen, "p0,p1,p2,p3,p4");
}

static void
g40_continue_errors(void **state)
{
	struct ksim *k = start_own(small_args);
	const char *ns, *cont, *ok;
	json_object *l, *st;

	(void)state;
	BASE = ksim_url(k);
	ns = new_ns();
	for (int i = 0; i < 3; i++) {
		mk_cm(ns, S("q%d", i), NULL);
	}
	l = get(200, S("%s?limit=1", cm_path(ns, NULL)));
	cont = keep_str(ksim_urlenc(str_at(l, "metadata.continue")));
	st = get(400,
	        S("%s?limit=1&continue=%s&resourceVersion=%s",
	                cm_path(ns, NULL), cont, rv_of(l)));
	check_status(st, 400, "BadRequest");
	st = get(400,
	        S("%s?limit=1&continue=garbage%%21%%21", cm_path(ns, NULL)));
	check_status(st, 400, "BadRequest");
	ok = S("%s?limit=1&continue=%s", cm_path(ns, NULL), cont);
	get(200, ok);
	for (int i = 0; i < 8; i++) {
		patch(200, MERGE, cm_path(ns, "q0"),
		        S("{\"data\":{\"k\":\"%d\"}}", i));
	}
	st = get(410, ok);
	check_status(st, 410, "Expired");
}

static void
g41_list_option_validation(void **state)
{
	const char *p = cm_path("default", NULL);
	json_object *st;

	(void)state;
	st = get(422, S("%s?resourceVersionMatch=NotOlderThan", p));
	check_status(st, 422, "Invalid");
	assert_contains(str_at(st, "message"),
	        "ListOptions.meta.k8s.io \"\" is invalid");
	st = get(422, S("%s?resourceVersionMatch=Exact&resourceVersion=0", p));
	check_status(st, 422, "Invalid");
	st = get(422, S("%s?sendInitialEvents=true", p));
	check_status(st, 422, "Invalid");
}

static void
g42_exact_list(void **state)
{
	struct ksim *k = start_own(small_args);
	const char *ns, *q;
	json_object *a, *l, *st;

	(void)state;
	BASE = ksim_url(k);
	ns = new_ns();
	a = mk_cm(ns, "a", NULL);
	mk_cm(ns, "b", NULL);
	q = S("%s?resourceVersion=%s&resourceVersionMatch=Exact",
	        cm_path(ns, NULL), rv_of(a));
	l = get(200, q);
	assert_string_equal(rv_of(l), rv_of(a));
	assert_string_equal(item_names(l), "a");
	for (int i = 0; i < 8; i++) {
		patch(200, MERGE, cm_path(ns, "b"),
		        S("{\"data\":{\"k\":\"%d\"}}", i));
	}
	st = get(410, q);
	check_status(st, 410, "Expired");
}

static void
check_too_large(const char *path)
{
	struct ksim_resp *r = send_req(BASE, "GET", path, NULL, NULL, NULL);
	json_object *st = keep(json_object_get(r->json));
	json_object *causes;
	char *ra = ksim_resp_header(r, "Retry-After");
	long code = r->code;
	int64_t ms = r->elapsed_ms;

	keep_str(ra);
	ksim_resp_free(r);
	assert_int_equal(code, 504);
	if (ms > 3500) {
		fail_msg("504 after %lld ms, want <= ~3 s", (long long)ms);
	}
	check_status(st, 504, "Timeout");
	assert_contains(str_at(st, "message"),
	        "Too large resource version: 999999999, current: ");
	causes = jx_get(st, "details.causes");
	assert_non_null(causes);
	assert_string_equal(
	        str_at(json_object_array_get_idx(causes, 0), "reason"),
	        "ResourceVersionTooLarge");
	assert_int_equal(int_at(st, "details.retryAfterSeconds"), 1);
	assert_non_null(ra);
	assert_string_equal(ra, "1");
}

static void
g43_too_large(void **state)
{
	const char *ns = new_ns();

	(void)state;
	mk_cm(ns, "c43", NULL);
	check_too_large(S("%s?resourceVersion=999999999", cm_path(ns, "c43")));
	check_too_large(S("%s?resourceVersion=999999999", cm_path(ns, NULL)));
}

/* Watch */

static void
g44_watch_event_order(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *e[3];
	int64_t t0;

	(void)state;
	w = watch(S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL),
	        list_rv(cm_path(ns, NULL))));
	mk_cm(ns, "c44", NULL);
	t0 = ksim_now_ms();
	e[0] = expect_event(w, "ADDED", "c44");
	if (ksim_now_ms() - t0 > 1000) {
		fail_msg("ADDED arrived %lld ms after the write",
		        (long long)(ksim_now_ms() - t0));
	}
	patch(200, MERGE, cm_path(ns, "c44"), "{\"data\":{\"k\":\"v2\"}}");
	e[1] = expect_event(w, "MODIFIED", "c44");
	assert_string_equal(str_at(e[1], "object.data.k"), "v2");
	del(200, cm_path(ns, "c44"), NULL);
	e[2] = expect_event(w, "DELETED", "c44");
	assert_true(rvn(jx_get(e[1], "object")) > rvn(jx_get(e[0], "object")));
	assert_true(rvn(jx_get(e[2], "object")) > rvn(jx_get(e[1], "object")));
	for (int i = 0; i < 3; i++) {
		assert_string_equal(str_at(e[i], "object.kind"), "ConfigMap");
		assert_string_equal(str_at(e[i], "object.apiVersion"), "v1");
	}
	assert_int_equal(ksim_watch_lines(w), 3);
	assert_int_equal(ksim_watch_bad_lines(w), 0);
	check_stream_headers(w, "g44");
}

/* Reads the initial ADDED events of a watch: exactly names "a,b". */
static void
expect_initial_ab(struct ksim_watch *w)
{
	json_object *e1 = expect_event(w, "ADDED", NULL);
	json_object *e2 = expect_event(w, "ADDED", NULL);
	const char *n1 = str_at(e1, "object.metadata.name");
	const char *n2 = str_at(e2, "object.metadata.name");

	if (!((!strcmp(n1, "a") && !strcmp(n2, "b"))
	            || (!strcmp(n1, "b") && !strcmp(n2, "a")))) {
		fail_msg("initial events for %s and %s, want a and b", n1, n2);
	}
}

static void
g45_watch_start_points(void **state)
{
	const char *ns = new_ns();
	const char *n;
	struct ksim_watch *w;
	json_object *ev;

	(void)state;
	mk_cm(ns, "a", NULL);
	mk_cm(ns, "b", NULL);
	patch(200, MERGE, cm_path(ns, "b"), "{\"data\":{\"k\":\"old\"}}");
	w = watch(S("%s?watch=true", cm_path(ns, NULL)));
	expect_initial_ab(w);
	expect_quiet(w, 300);
	w = watch(S("%s?watch=true&resourceVersion=0", cm_path(ns, NULL)));
	expect_initial_ab(w);
	n = list_rv(cm_path(ns, NULL));
	w = watch(S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL), n));
	patch(200, MERGE, cm_path(ns, "a"), "{\"data\":{\"k\":\"new\"}}");
	ev = expect_event(w, "MODIFIED", "a");
	assert_true(rvn(jx_get(ev, "object")) > rv_num(n));
	expect_quiet(w, 300);
}

static void
relabel(const char *ns, const char *name, const char *app)
{
	patch(200, MERGE, cm_path(ns, name),
	        S("{\"metadata\":{\"labels\":{\"app\":\"%s\"}}}", app));
}

static void
g46_selector_transitions(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *ev;

	(void)state;
	w = watch(S("%s?watch=true&resourceVersion=%s&labelSelector=%s",
	        cm_path(ns, NULL), list_rv(cm_path(ns, NULL)),
	        keep_str(ksim_urlenc("app=a"))));
	mk_cm(ns, "y", "\"labels\":{\"app\":\"b\"}");
	mk_cm(ns, "x", "\"labels\":{\"app\":\"a\"}");
	expect_event(w, "ADDED", "x");
	relabel(ns, "x", "b");
	ev = expect_event(w, "DELETED", "x");
	(void)ev;
	relabel(ns, "x", "a");
	ev = expect_event(w, "ADDED", "x");
	assert_string_equal(str_at(ev, "object.metadata.labels.app"), "a");
	relabel(ns, "y", "c");
	expect_quiet(w, 300);
}

static void
g47_watch_too_old(void **state)
{
	struct ksim *k = start_own(small_args);
	struct ksim_watch *w;
	const char *ns;
	json_object *o, *ev;
	long code;

	(void)state;
	BASE = ksim_url(k);
	ns = new_ns();
	o = mk_cm(ns, "c47", NULL);
	for (int i = 0; i < 8; i++) {
		patch(200, MERGE, cm_path(ns, "c47"),
		        S("{\"data\":{\"k\":\"%d\"}}", i));
	}
	w = watch_on(BASE,
	        S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL),
	                rv_of(o)));
	code = ksim_watch_status(w, 5000);
	if (code == 200) {
		ev = next_event(w, EVENT_MS);
		assert_non_null(ev);
		assert_string_equal(str_at(ev, "type"), "ERROR");
		check_status(jx_get(ev, "object"), 410, "Expired");
		assert_true(ksim_watch_wait_end(w, 3000));
		assert_null(next_event(w, 0));
	} else if (code == 410) {
		assert_true(ksim_watch_wait_end(w, 3000));
		o = keep(testutil_json(keep_str(ksim_watch_body(w)), 0));
		check_status(o, 410, "Expired");
	} else {
		fail_msg("watch from a too-old RV: HTTP %ld, want 200 or 410",
		        code);
	}
}

static void
g48_watch_timeouts(void **state)
{
	const char *ns = new_ns();
	const char *rv = list_rv(cm_path(ns, NULL));
	struct ksim_watch *w;
	int64_t t0 = ksim_now_ms(), dt;
	char *err;

	(void)state;
	w = watch(S("%s?watch=true&timeoutSeconds=2&resourceVersion=%s",
	        cm_path(ns, NULL), rv));
	assert_true(ksim_watch_wait_end(w, 6000));
	dt = ksim_watch_end_ms(w) - t0;
	if (dt < 1500 || dt > 4000) {
		fail_msg("timeoutSeconds=2 watch lasted %lld ms",
		        (long long)dt);
	}
	assert_null(next_event(w, 0));
	assert_int_equal(ksim_watch_lines(w), 0);
	assert_int_equal(ksim_watch_bad_lines(w), 0);
	err = keep_str(ksim_watch_error(w));
	assert_string_equal(err, "");
	t0 = ksim_now_ms();
	w = watch(
	        S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL), rv));
	assert_false(ksim_watch_wait_end(w, 3500));
	/* --watch-timeout 4s is the length of such a watch. */
	assert_true(ksim_watch_wait_end(w, 4000));
	dt = ksim_watch_end_ms(w) - t0;
	if (dt > 6000) {
		fail_msg(
		        "default watch lasted %lld ms with --watch-timeout 4s",
		        (long long)dt);
	}
	err = keep_str(ksim_watch_error(w));
	assert_string_equal(err, "");
	assert_int_equal(ksim_watch_bad_lines(w), 0);
}

static void
check_bookmark(json_object *ev, uint64_t min_rv)
{
	json_object *obj = jx_get(ev, "object");
	json_object *md = jx_get(obj, "metadata");

	assert_string_equal(str_at(obj, "apiVersion"), "v1");
	assert_string_equal(str_at(obj, "kind"), "ConfigMap");
	if (json_object_object_length(obj) != 3
	        || json_object_object_length(md)
	                != (jx_get(md, "annotations") ? 2 : 1)) {
		fail_msg("BOOKMARK object has extra fields: %s",
		        json_object_to_json_string(ev));
	}
	assert_true(rvn(obj) >= min_rv);
}

static void
g49_bookmarks(void **state)
{
	const char *ns = new_ns();
	const char *rv = list_rv(cm_path(ns, NULL));
	struct ksim_watch *w;
	json_object *ev;
	uint64_t last;
	int64_t deadline;
	bool got = false;

	(void)state;
	w = watch(S("%s?watch=true&allowWatchBookmarks=true&"
	            "resourceVersion=%s",
	        cm_path(ns, NULL), rv));
	mk_cm(ns, "c49", NULL);
	ev = expect_event(w, "ADDED", "c49");
	last = rvn(jx_get(ev, "object"));
	deadline = ksim_now_ms() + 3500;
	while (!got && ksim_now_ms() < deadline) {
		ev = next_event(w, 500);
		if (ev != NULL) {
			assert_string_equal(str_at(ev, "type"), "BOOKMARK");
			check_bookmark(ev, last);
			got = true;
		}
	}
	assert_true(got);
	w = watch(
	        S("%s?watch=true&resourceVersion=%s", cm_path(ns, NULL), rv));
	expect_event(w, "ADDED", "c49");
	deadline = ksim_now_ms() + 2500;
	while (ksim_now_ms() < deadline) {
		ev = next_event(w, 500);
		if (ev != NULL) {
			fail_msg("event without bookmarks asked: %s",
			        json_object_to_json_string(ev));
		}
	}
}

static void
g50_send_initial_events(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *st, *ev;
	const char *end;
	long code;

	(void)state;
	mk_cm(ns, "a", NULL);
	mk_cm(ns, "b", NULL);
	st = get(422,
	        S("%s?watch=true&sendInitialEvents=true", cm_path(ns, NULL)));
	check_status(st, 422, "Invalid");
	w = watch_on(BASE,
	        S("%s?watch=true&sendInitialEvents=true"
	          "&resourceVersionMatch=NotOlderThan"
	          "&allowWatchBookmarks=true",
	                cm_path(ns, NULL)));
	code = ksim_watch_status(w, 5000);
	if (code == 422) {
		assert_true(ksim_watch_wait_end(w, 3000));
		st = keep(testutil_json(keep_str(ksim_watch_body(w)), 0));
		check_status(st, 422, "Invalid");
		return;
	}
	assert_int_equal(code, 200);
	expect_initial_ab(w);
	ev = next_event(w, EVENT_MS);
	assert_non_null(ev);
	assert_string_equal(str_at(ev, "type"), "BOOKMARK");
	end = jx_getv(ev, "object", "metadata", "annotations",
	              "k8s.io/initial-events-end", NULL)
	        ? json_object_get_string(jx_getv(ev, "object", "metadata",
	                "annotations", "k8s.io/initial-events-end", NULL))
	        : NULL;
	assert_non_null(end);
	assert_string_equal(end, "true");
	mk_cm(ns, "c", NULL);
	expect_event(w, "ADDED", "c");
}

static void
g51_watch_one_object(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *st;

	(void)state;
	need_widgets();
	mk_widget(ns, "foo", "a", NULL, NULL);
	mk_widget(ns, "bar", "a", NULL, NULL);
	w = watch(S("%s?watch=true&resourceVersion=%s", w_path(ns, "foo"),
	        list_rv(w_path(ns, NULL))));
	patch(200, MERGE, w_path(ns, "bar"), "{\"spec\":{\"foo\":\"b\"}}");
	patch(200, MERGE, w_path(ns, "foo"), "{\"spec\":{\"foo\":\"b\"}}");
	expect_event(w, "MODIFIED", "foo");
	del(200, w_path(ns, "bar"), NULL);
	del(200, w_path(ns, "foo"), NULL);
	expect_event(w, "DELETED", "foo");
	mk_widget(ns, "baz", "a", NULL, NULL);
	expect_quiet(w, 300);
	st = get(400,
	        S("%s?watch=true&fieldSelector=%s", w_path(ns, "foo"),
	                keep_str(ksim_urlenc("metadata.name=bar"))));
	check_status(st, 400, "BadRequest");
}

static void
g52_deleted_after_finalizer(void **state)
{
	const char *ns = new_ns();
	struct ksim_watch *w;
	json_object *o, *ev, *mod;

	(void)state;
	need_widgets();
	o = mk_widget(ns, "w52", "a", HOLD, NULL);
	w = watch(S("%s?watch=true&resourceVersion=%s", w_path(ns, NULL),
	        rv_of(o)));
	del(200, w_path(ns, "w52"), NULL);
	mod = expect_event(w, "MODIFIED", "w52");
	/* Spec C.2: marking for deletion bumps generation once. */
	assert_int_equal(int_at(mod, "object.metadata.generation"), 2);
	patch(200, MERGE, w_path(ns, "w52"), "{\"spec\":{\"foo\":\"last\"}}");
	mod = expect_event(w, "MODIFIED", "w52");
	o = patch(200, MERGE, w_path(ns, "w52"),
	        "{\"metadata\":{\"finalizers\":null}}");
	assert_null(jx_get(o, "metadata.finalizers.0"));
	ev = expect_event(w, "DELETED", "w52");
	assert_true(str_in_array(
	        jx_get(ev, "object.metadata.finalizers"), "example.com/hold"));
	assert_string_equal(str_at(ev, "object.spec.foo"), "last");
	assert_string_equal(str_at(ev, "object.metadata.deletionTimestamp"),
	        str_at(mod, "object.metadata.deletionTimestamp"));
	assert_true(rvn(jx_get(ev, "object")) > rvn(jx_get(mod, "object")));
	get(404, w_path(ns, "w52"));
}

/* Command-line modes and error bodies */

static void
x01_error_bodies_are_json_status(void **state)
{
	static const char *const paths[] = { "/api/v1/namespaces/nope-x1",
		"/api/v1/namespaces/default/configmaps/nope-x1",
		"/apis/coordination.k8s.io/v1/namespaces/default/leases/nope",
		NULL };

	(void)state;
	for (int i = 0; paths[i] != NULL; i++) {
		check_status(get(404, paths[i]), 404, "NotFound");
	}
	check_status(post(400, cm_path("default", NULL), "{not json"), 400,
	        "BadRequest");
	check_status(post(409, "/api/v1/namespaces",
	                     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	                     "\"metadata\":{\"name\":\"default\"}}"),
	        409, "AlreadyExists");
}

static void
x02_unknown_group(void **state)
{
	(void)state;
	check_status(get(404, "/apis/nope.example.com"), 404, "NotFound");
	check_status(get(404, "/apis/nope.example.com/v1"), 404, "NotFound");
	check_status(get(404,
	                     "/apis/nope.example.com/v1/namespaces/default/"
	                     "things"),
	        404, "NotFound");
	check_status(get(404, "/api/v1/nothings"), 404, "NotFound");
}

/* Spec A.1: scope mismatches are 404. */
static void
x02b_scope_mismatch(void **state)
{
	(void)state;
	mk_cm("default", "x02b", NULL);
	get(200, cm_path("default", "x02b"));
	check_status(get(404, "/api/v1/configmaps/x02b"), 404, "NotFound");
	del(404, "/api/v1/configmaps/x02b", NULL);
	need_widgets();
	check_status(get(404,
	                     "/apis/apiextensions.k8s.io/v1/namespaces/"
	                     "default/customresourcedefinitions/"
	                     "widgets.example.com"),
	        404, "NotFound");
	check_status(get(404, "/api/v1/namespaces/default/namespaces/default"),
	        404, "NotFound");
	del(200, cm_path("default", "x02b"), NULL);
}

static void
x03_bearer_token(void **state)
{
	static const char *const good[]
	        = { "Authorization: Bearer t0k", NULL };
	static const char *const bad[]
	        = { "Authorization: Bearer nope", NULL };
	static const char *const args[] = { "--token", "t0k", NULL };
	struct ksim *k = start_own(args);
	struct ksim_resp *r;
	long c1, c2, c3;

	(void)state;
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, NULL, 5000);
	c1 = r->code;
	ksim_resp_free(r);
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, bad, 5000);
	c2 = r->code;
	ksim_resp_free(r);
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, good, 5000);
	c3 = r->code;
	ksim_resp_free(r);
	assert_int_equal(c1, 401);
	assert_int_equal(c2, 401);
	assert_int_equal(c3, 200);
	assert_int_equal(stop_own(k), 0);
}

static void
x04_tls(void **state)
{
	static const char *const args[] = { "--tls", NULL };
	struct ksim *k = start_own(args);
	struct ksim_resp *r;
	long code;

	(void)state;
	assert_match("^https://127\\.0\\.0\\.1:[0-9]+$", ksim_url(k));
	r = ksim_request(ksim_url(k), "GET", "/api", NULL, NULL, NULL, 5000);
	code = r->code;
	if (code != 200) {
		fail_msg("GET /api over TLS: %ld %s", code,
		        keep_str(xstrdup(r->error)));
	}
	ksim_resp_free(r);
	assert_int_equal(stop_own(k), 0);
}

static void
x05_write_kubeconfig(void **state)
{
	char path[] = "/tmp/ksim-kubeconfig-XXXXXX";
	const char *args[] = { "--write-kubeconfig", path, NULL };
	struct ksim *k;
	char *text = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	k = start_own(args);
	for (int i = 0; i < 40 && access(path, R_OK) != 0; i++) {
		usleep(50000);
	}
	if (access(path, R_OK) == 0) {
		text = keep_str(testutil_read_file(path, NULL));
	}
	unlink(path);
	assert_non_null(text);
	assert_contains(text, ksim_url(k));
	assert_int_equal(stop_own(k), 0);
}

/* Spec A.3: absent, 0 or false (any case) is false; anything else,
 * even empty, is true. */
static void
x06_boolean_params(void **state)
{
	static const char *const off[] = { "false", "0", "FALSE", NULL };
	static const char *const on[]
	        = { "watch", "watch=", "watch=1", "watch=yes", NULL };
	const char *ns = new_ns();
	struct ksim_resp *r;

	(void)state;
	mk_cm(ns, "b", NULL);
	for (int i = 0; off[i] != NULL; i++) {
		json_object *l = get(
		        200, S("%s?watch=%s", cm_path(ns, NULL), off[i]));

		assert_string_equal(str_at(l, "kind"), "ConfigMapList");
	}
	for (int i = 0; on[i] != NULL; i++) {
		const char *p = S(
		        "%s?%s&timeoutSeconds=1", cm_path(ns, NULL), on[i]);

		r = send_req(BASE, "GET", p, NULL, NULL, NULL);
		if (r->code != 200
		        || strncmp(r->body, "{\"type\":\"ADDED\"", 15) != 0) {
			const char *m
			        = S("%s: %ld %.300s", p, r->code, r->body);

			ksim_resp_free(r);
			fail_msg("not a watch: %s", m);
		}
		ksim_resp_free(r);
	}
}

/* Spec A.7: request-body checks. */
static void
x07_body_checks(void **state)
{
	const char *ns = new_ns();
	json_object *o = copy(mk_cm(ns, "c", NULL));
	json_object *st;

	(void)state;
	set_str(o, "metadata.name", "other");
	st = put(400, cm_path(ns, "c"), o);
	check_status(st, 400, "BadRequest");
	assert_contains(str_at(st, "message"),
	        "the name of the object (other) does not match the name on "
	        "the URL (c)");
	st = patch(400, MERGE, cm_path(ns, "c"),
	        "{\"metadata\":{\"name\":\"other\"}}");
	check_status(st, 400, "BadRequest");
	st = post(400, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v2\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"d\"}}");
	check_status(st, 400, "BadRequest");
	assert_contains(str_at(st, "message"),
	        "does not match the expected API version");
	st = post(422, cm_path(ns, NULL),
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{}}");
	check_status(st, 422, "Invalid");
	assert_contains(str_at(st, "message"),
	        "metadata.name: Required value: name or generateName is "
	        "required");
	st = patch(422, MERGE, S("%s?force=true", cm_path(ns, "c")),
	        "{\"data\":{\"k\":\"v\"}}");
	check_status(st, 422, "Invalid");
}

/* Spec A.7: fieldValidation Strict, Warn and Ignore. */
static void
x08_field_validation(void **state)
{
	static const char *const modes[] = { "Warn", "Ignore" };
	const char *ns = new_ns();
	const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                   "\"metadata\":{\"name\":\"%s\"},\"bogus\":1}";
	json_object *st;

	(void)state;
	st = post(400, S("%s?fieldValidation=Strict", cm_path(ns, NULL)),
	        S(body, "s"));
	check_status(st, 400, "BadRequest");
	assert_match("^strict decoding error:", str_at(st, "message"));
	for (int i = 0; i < 2; i++) {
		struct ksim_resp *r = send_req(BASE, "POST",
		        S("%s?fieldValidation=%s", cm_path(ns, NULL),
		                modes[i]),
		        JSON, S(body, i ? "i" : "w"), NULL);
		char *warn = keep_str(ksim_resp_header(r, "Warning"));
		long code = r->code;

		ksim_resp_free(r);
		assert_int_equal(code, 201);
		if (i == 0) {
			assert_non_null(warn);
			assert_match("^299 - \"", warn);
		} else {
			assert_null(warn);
		}
	}
}

/* Beyond the checklist: spec A, C and D behaviour the operator's tests
 * rely on. */

/* Spec D.6: a Table Accept gets a Table with its Content-Type, or a plain
 * list labelled application/json. */
static void
x09_table_negotiation(void **state)
{
	static const char *const hdrs[]
	        = { "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,"
		    "application/json",
		          NULL };
	const char *tab = "application/json;as=Table;v=v1;g=meta.k8s.io";
	const char *ns = new_ns();
	const char *paths[2];

	(void)state;
	need_widgets();
	mk_widget(ns, "t1", "a", NULL, NULL);
	mk_cm(ns, "t1", NULL);
	paths[0] = w_path(ns, NULL);
	paths[1] = cm_path(ns, NULL);
	for (int i = 0; i < 2; i++) {
		struct ksim_resp *r
		        = send_req(BASE, "GET", paths[i], NULL, NULL, hdrs);
		const char *ct = S("%s", r->content_type);
		json_object *o
		        = keep(r->json ? json_object_get(r->json) : NULL);

		ksim_resp_free(r);
		assert_non_null(o);
		if (strncmp(ct, tab, strlen(tab)) == 0) {
			json_object *row;

			assert_string_equal(str_at(o, "kind"), "Table");
			assert_string_equal(
			        str_at(o, "apiVersion"), "meta.k8s.io/v1");
			assert_string_equal(
			        str_at(o, "columnDefinitions.0.name"), "Name");
			row = jx_get(o, "rows.0");
			assert_non_null(row);
			assert_string_equal(str_at(row, "cells.0"), "t1");
			assert_string_equal(str_at(row, "object.kind"),
			        "PartialObjectMetadata");
			rv_of(o);
		} else {
			assert_string_equal(ct, JSON);
			assert_string_equal(item_names(o), "t1");
		}
	}
}

/* Spec A.1: the deprecated watch paths equal ?watch=true. */
static void
x10_deprecated_watch_path(void **state)
{
	const char *ns = new_ns();
	const char *rv = list_rv(cm_path(ns, NULL));
	struct ksim_watch *w;

	(void)state;
	w = watch(
	        S("/api/v1/watch/namespaces/%s/configmaps?resourceVersion=%s",
	                ns, rv));
	mk_cm(ns, "d1", NULL);
	expect_event(w, "ADDED", "d1");
}

/* Spec D.1. */
static void
x11_version_and_health(void **state)
{
	static const char *const hp[]
	        = { "/healthz", "/livez", "/readyz", NULL };
	json_object *v = get(200, "/version");

	(void)state;
	str_at(v, "major");
	str_at(v, "minor");
	assert_match("^v1\\.[0-9]+\\.[0-9]+", str_at(v, "gitVersion"));
	for (int i = 0; hp[i] != NULL; i++) {
		struct ksim_resp *r
		        = send_req(BASE, "GET", hp[i], NULL, NULL, NULL);
		const char *m = S("%s: %ld [%s] %s", hp[i], r->code,
		        r->content_type, r->body);
		bool ok = r->code == 200 && strcmp(r->body, "ok") == 0
		        && strncmp(r->content_type, "text/plain", 10) == 0;

		ksim_resp_free(r);
		if (!ok) {
			fail_msg("%s", m);
		}
	}
}

/* Spec D.5: the OpenAPI v3 stub kubectl apply needs; v2 is a 404. */
static void
x12_openapi_stub(void **state)
{
	static const char *const gvs[]
	        = { "api/v1", "apis/apiextensions.k8s.io/v1",
		          "apis/coordination.k8s.io/v1", NULL };
	json_object *root = get(200, "/openapi/v3");

	(void)state;
	for (int i = 0; gvs[i] != NULL; i++) {
		const char *url
		        = jx_get_str(jx_getv(root, "paths", gvs[i],
		                             "serverRelativeURL", NULL),
		                "");
		json_object *doc;
		const char *txt;

		if (url == NULL) {
			fail_msg("no %s in /openapi/v3: %s", gvs[i],
			        json_object_to_json_string(root));
		}
		doc = get(200, url);
		str_at(doc, "openapi");
		txt = json_object_to_json_string(jx_get(doc, "paths"));
		assert_contains(txt, "x-kubernetes-group-version-kind");
		assert_contains(txt, "\"fieldValidation\"");
		assert_null(strstr(txt, "strategic-merge-patch"));
	}
	get(404, "/openapi/v2");
}

/* Spec C.8: standard namespaces; a terminating namespace refuses new
 * content; deleting a namespace removes its objects. */
static void
x13_namespace_lifecycle(void **state)
{
	static const char *const std[] = { "default", "kube-system",
		"kube-public", "kube-node-lease", "sympozium-system", NULL };
	const char *ns = new_ns();
	struct ksim_resp *r;
	int64_t deadline;
	long code = 0;

	(void)state;
	for (int i = 0; std[i] != NULL; i++) {
		get(200, S("/api/v1/namespaces/%s", std[i]));
	}
	mk_cm(ns, "n1", NULL);
	del(200, S("/api/v1/namespaces/%s", ns), NULL);
	r = send_req(BASE, "POST", cm_path(ns, NULL), JSON,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	        "\"metadata\":{\"name\":\"n2\"}}",
	        NULL);
	code = r->code;
	if (code == 403) {
		check_error_body(r, "create in terminating namespace");
		assert_string_equal(
		        jx_get_str(r->json, "reason"), "Forbidden");
		assert_contains(jx_get_str(r->json, "message"),
		        "because it is being terminated");
	}
	ksim_resp_free(r);
	if (code != 403 && code != 404) {
		fail_msg("create in a deleted namespace: HTTP %ld", code);
	}
	deadline = ksim_now_ms() + 5000;
	do {
		r = send_req(BASE, "GET", S("/api/v1/namespaces/%s", ns), NULL,
		        NULL, NULL);
		code = r->code;
		ksim_resp_free(r);
		if (code != 404) {
			usleep(50000);
		}
	} while (code != 404 && ksim_now_ms() < deadline);
	assert_int_equal(code, 404);
	get(404, cm_path(ns, "n1"));
}

/* Spec C.4, C.9: Lease rules. */
static void
x14_lease_rules(void **state)
{
	const char *ns = new_ns();
	const char *p
	        = S("/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	json_object *l, *st;

	(void)state;
	l = copy(post(201, p,
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":"
	        "\"a\",\"leaseDurationSeconds\":15,\"acquireTime\":"
	        "\"2026-01-02T03:04:05.123456Z\",\"renewTime\":"
	        "\"2026-01-02T03:04:05.123456Z\",\"leaseTransitions\":0}}"));
	assert_string_equal(
	        str_at(l, "spec.renewTime"), "2026-01-02T03:04:05.123456Z");
	jx_strip(l, "metadata.resourceVersion");
	set_str(l, "spec.holderIdentity", "b");
	st = put(422, S("%s/l", p), l);
	check_status(st, 422, "Invalid");
	assert_contains(
	        str_at(st, "message"), "must be specified for an update");
	st = post(422, p,
	        "{\"apiVersion\":\"coordination.k8s.io/"
	        "v1\",\"kind\":\"Lease\","
	        "\"metadata\":{\"name\":\"bad\"},"
	        "\"spec\":{\"leaseDurationSeconds\":0}}");
	check_status(st, 422, "Invalid");
}

static json_object *
wait_gone_or(const char *path, bool want_gone, int ms)
{
	int64_t deadline = ksim_now_ms() + ms;
	json_object *o = NULL;

	for (;;) {
		struct ksim_resp *r
		        = send_req(BASE, "GET", path, NULL, NULL, NULL);
		long code = r->code;

		o = keep(r->json ? json_object_get(r->json) : NULL);
		ksim_resp_free(r);
		if (want_gone ? code == 404 : code == 200) {
			return (o);
		}
		if (ksim_now_ms() >= deadline) {
			fail_msg("%s: HTTP %ld after %d ms", path, code, ms);
		}
		usleep(50000);
	}
}

/* Spec C.6: the emulated garbage collector (--controllers all). */
static void
x15_garbage_collection(void **state)
{
	const char *ns = new_ns();
	const char *ref = "\"ownerReferences\":[{\"apiVersion\":\"v1\","
	                  "\"kind\":\"ConfigMap\",\"name\":\"%s\","
	                  "\"uid\":\"%s\",\"controller\":true}]";
	json_object *o1, *o2, *d;

	(void)state;
	o1 = mk_cm(ns, "owner1", NULL);
	mk_cm(ns, "dep1", S(ref, "owner1", str_at(o1, "metadata.uid")));
	del(200, cm_path(ns, "owner1"), NULL);
	wait_gone_or(cm_path(ns, "dep1"), true, 5000);
	o2 = mk_cm(ns, "owner2", NULL);
	mk_cm(ns, "dep2", S(ref, "owner2", str_at(o2, "metadata.uid")));
	del(200, cm_path(ns, "owner2"),
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	        "\"propagationPolicy\":\"Orphan\"}");
	wait_gone_or(cm_path(ns, "owner2"), true, 5000);
	d = get(200, cm_path(ns, "dep2"));
	assert_null(jx_get(d, "metadata.ownerReferences.0"));
}

/* Spec D.7 (kubectl delete): DeleteOptions in any of three apiVersions. */
static void
x16_delete_options_versions(void **state)
{
	static const char *const av[]
	        = { "v1", "meta.k8s.io/v1", "example.com/v1", NULL };
	const char *ns = new_ns();

	(void)state;
	need_widgets();
	for (int i = 0; av[i] != NULL; i++) {
		const char *n = S("d%d", i);

		mk_widget(ns, n, "a", NULL, NULL);
		del(200, w_path(ns, n),
		        S("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"%s\","
		          "\"propagationPolicy\":\"Background\"}",
		                av[i]));
		get(404, w_path(ns, n));
	}
}

/* Spec A.4: strategic merge patch on a built-in, with kubectl's
 * directives for lists. */
static void
x17_smp_builtin(void **state)
{
	const char *ns = new_ns();
	json_object *o;

	(void)state;
	mk_cm(ns, "s", "\"finalizers\":[\"example.com/a\"]");
	o = patch(200, SMP, cm_path(ns, "s"),
	        "{\"metadata\":{\"$setElementOrder/finalizers\":"
	        "[\"example.com/a\",\"example.com/b\"],"
	        "\"finalizers\":[\"example.com/b\"]},"
	        "\"data\":{\"x\":\"1\"}}");
	assert_string_equal(str_at(o, "data.x"), "1");
	assert_true(str_in_array(
	        jx_get(o, "metadata.finalizers"), "example.com/b"));
	assert_null(strstr(json_object_to_json_string(o), "$setElementOrder"));
	o = patch(200, SMP, cm_path(ns, "s"),
	        "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	        "[\"example.com/a\",\"example.com/b\"]}}");
	assert_null(jx_get(o, "metadata.finalizers.0"));
	assert_null(strstr(json_object_to_json_string(o), "$delete"));
}

/* Group fixtures */

static int
group_setup(void **state)
{
	(void)state;
	K = ksim_start(group_args);
	if (K == NULL) {
		fprintf(stderr,
		        "conformance: kubesim did not start; every "
		        "test fails\n");
		return (-1);
	}
	BASE = ksim_url(K);
	return (0);
}

static int
group_teardown(void **state)
{
	int rc;

	arena_release(state);
	if (K == NULL) {
		return (0);
	}
	rc = ksim_stop(K);
	K = NULL;
	if (rc != 0) {
		fprintf(stderr,
		        "conformance: kubesim exit status %d after "
		        "SIGTERM, want 0\n",
		        rc);
		return (-1);
	}
	return (0);
}

#define T(f) cmocka_unit_test_teardown(f, arena_release)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(g01_discovery_api),
		T(g02_discovery_group_version),
		T(g03_crd_discovery),
		T(g04_crd_bad_name),
		T(g05_crd_delete_cascade),
		T(g06_aggregated_discovery_negotiation),
		T(g07_create_configmap),
		T(g08_create_existing),
		T(g09_get_missing),
		T(g10_generate_name),
		T(g11_create_with_rv),
		T(g12_namespace_mismatch_and_missing),
		T(g13_media_types),
		T(g14_put_stale),
		T(g15_put_current),
		T(g16_put_without_rv),
		T(g17_put_missing),
		T(g18_noop_put),
		T(g19_merge_and_json_patch),
		T(g20_smp_on_cr),
		T(g21_patch_with_rv),
		T(g22_patch_missing_and_apply),
		T(g23_lease_race),
		T(g24_generation),
		T(g25_status_ignored_on_main),
		T(g26_status_subresource_put),
		T(g27_no_status_subresource),
		T(g28_delete_plain),
		T(g29_delete_with_finalizer),
		T(g30_no_new_finalizers),
		T(g31_last_finalizer_removed),
		T(g32_foreground_delete),
		T(g33_delete_precondition),
		T(g34_two_controllers),
		T(g35_list_shape),
		T(g36_label_selector),
		T(g37_bad_label_selector),
		T(g38_field_selector),
		T(g39_pagination),
		T(g40_continue_errors),
		T(g41_list_option_validation),
		T(g42_exact_list),
		T(g43_too_large),
		T(g44_watch_event_order),
		T(g45_watch_start_points),
		T(g46_selector_transitions),
		T(g47_watch_too_old),
		T(g48_watch_timeouts),
		T(g49_bookmarks),
		T(g50_send_initial_events),
		T(g51_watch_one_object),
		T(g52_deleted_after_finalizer),
		T(x01_error_bodies_are_json_status),
		T(x02_unknown_group),
		T(x02b_scope_mismatch),
		T(x06_boolean_params),
		T(x07_body_checks),
		T(x08_field_validation),
		T(x09_table_negotiation),
		T(x10_deprecated_watch_path),
		T(x11_version_and_health),
		T(x12_openapi_stub),
		T(x13_namespace_lifecycle),
		T(x14_lease_rules),
		T(x15_garbage_collection),
		T(x16_delete_options_versions),
		T(x17_smp_builtin),
		T(x03_bearer_token),
		T(x04_tls),
		T(x05_write_kubeconfig),
	};

	/* CONFORMANCE_FILTER=g05* runs only the matching tests. */
	if (getenv("CONFORMANCE_FILTER") != NULL) {
		cmocka_set_test_filter(getenv("CONFORMANCE_FILTER"));
	}
	return (cmocka_run_group_tests(tests, group_setup, group_teardown));
}
