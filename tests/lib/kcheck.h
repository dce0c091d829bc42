/*
 * kcheck.h: the harness of kubesim's black-box conformance tests, for any
 * cmocka test that talks HTTP to bin/kubesim (through tests/lib/ksim) and
 * asserts on the answers.  Every helper fails the running test with a
 * message (fail_msg) instead of returning an error.
 *
 * Memory: strings, parsed bodies, watches and extra servers made by a
 * test are kept in a per-test arena that kc_release() (the tests'
 * teardown) frees, so a failed assertion never leaves a watch thread or a
 * server behind.  Returned pointers are arena-owned unless said otherwise.
 *
 * One server is shared by a group: kc_group_start() in the group setup,
 * kc_group_stop() in its teardown.  Requests go to kc_base, its URL, which
 * a test may point at a server of its own (kc_release() points it back).
 */
#ifndef KCHECK_H
#define KCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "tests/lib/ksim.h"

#define KC_JSON  "application/json"
#define KC_MERGE "application/merge-patch+json"
#define KC_JSONP "application/json-patch+json"
#define KC_SMP   "application/strategic-merge-patch+json"
#define KC_APPLY "application/apply-patch+yaml"
/* How long kc_expect_event() waits. */
#define KC_EVENT_MS 3000
#define KC_CRD_PATH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
/* The schema of the example CRDs (kc_crd_json): spec.foo (string) and
 * spec.replicas (integer), unknown fields kept in spec and status. */
#define KC_WIDGET_SCHEMA                                                      \
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","               \
	"\"properties\":{\"spec\":{\"type\":\"object\","                      \
	"\"x-kubernetes-preserve-unknown-fields\":true,"                      \
	"\"properties\":{\"foo\":{\"type\":\"string\"},"                      \
	"\"replicas\":{\"type\":\"integer\"}}},"                              \
	"\"status\":{\"type\":\"object\","                                    \
	"\"x-kubernetes-preserve-unknown-fields\":true}}}}"

extern struct ksim *kc_srv; /* the group's server */
extern const char *kc_base; /* where requests go: kc_srv's URL by default */

/* Group setup: starts kc_srv with args (ksim_start) and points kc_base at
 * it.  Returns 0, or -1 with the reason on stderr. */
int kc_group_start(const char *const *args);
/* Group teardown: kc_release(), then stops kc_srv.  Returns -1 when its
 * exit status after SIGTERM is not 0. */
int kc_group_stop(void);

/* The arena.  kc_keep_str and kc_keep take ownership (o may be NULL). */
char *kc_keep_str(char *s);
json_object *kc_keep(json_object *o);
const char *kc_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Per-test teardown (cmocka signature): frees the arena, stops the
 * test's own servers, points kc_base back at kc_srv.  Returns 0. */
int kc_release(void **state);
/* A server of the test's own, stopped by the teardown unless the test
 * stops it with kc_stop_own() (which returns its exit status). */
struct ksim *kc_start_own(const char *const *args);
int kc_stop_own(struct ksim *k);

/* JSON accessors: the value at a dotted path (jx_get), or the test fails. */
const char *kc_str_at(json_object *o, const char *path);
int64_t kc_int_at(json_object *o, const char *path);
/* A resourceVersion as a positive decimal number; kc_rv_of is
 * metadata.resourceVersion, kc_rvn its number. */
uint64_t kc_rv_num(const char *rv);
const char *kc_rv_of(json_object *o);
uint64_t kc_rvn(json_object *o);
/* Whether the array arr holds the string s (false when arr is none). */
bool kc_str_in_array(json_object *arr, const char *s);
/* s matches the extended regular expression re / contains part. */
void kc_assert_match(const char *re, const char *s);
void kc_assert_contains(const char *s, const char *part);

/* Requests.  kc_send sends one to base (10 s timeout) and fails only when
 * the transfer fails; the caller frees the answer (ksim_resp_free). */
struct ksim_resp *kc_send(const char *base, const char *method,
        const char *path, const char *ctype, const char *body,
        const char *const *hdrs);
/* Checks that an error answer is a Status of the HTTP code, served as
 * application/json. */
void kc_check_error_body(const struct ksim_resp *r, const char *what);
/* Sends a request to kc_base and asserts the HTTP code (and, for codes
 * >= 400, kc_check_error_body); returns the body as JSON (NULL when not
 * JSON).  hdrs: NULL-terminated "Name: value" lines, or NULL. */
json_object *kc_callh(long code, const char *method, const char *ctype,
        const char *body, const char *const *hdrs, const char *path);
json_object *kc_call(long code, const char *method, const char *ctype,
        const char *body, const char *path);
json_object *kc_get(long code, const char *path);
json_object *kc_post(long code, const char *path, const char *body);
json_object *kc_put(long code, const char *path, json_object *obj);
json_object *kc_put_s(long code, const char *path, const char *body);
json_object *kc_patch(
        long code, const char *ctype, const char *path, const char *body);
/* body NULL: no body (and no Content-Type). */
json_object *kc_del(long code, const char *path, const char *body);
/* Asserts a failure Status's reason (and HTTP code inside it). */
void kc_check_status(json_object *st, long code, const char *reason);

/* Objects.  kc_new_ns creates a namespace of a fresh name ("cf-..."). */
const char *kc_new_ns(void);
/* The ConfigMaps path of ns, or of ns/name when name is not NULL. */
const char *kc_cm_path(const char *ns, const char *name);
/* Creates ConfigMap ns/name; meta_extra is inserted into metadata (e.g.
 * "\"labels\":{\"a\":\"b\"}") or NULL. */
json_object *kc_mk_cm(
        const char *ns, const char *name, const char *meta_extra);
/* A CRD plural.group of kind, namespaced, version v1 with
 * KC_WIDGET_SCHEMA, and the status subresource when status is true. */
const char *kc_crd_json(
        const char *group, const char *plural, const char *kind, bool status);
/* Makes sure the CRD exists; returns the POST answer or NULL when it
 * already existed. */
json_object *kc_ensure_crd(
        const char *group, const char *plural, const char *kind, bool status);
/* widgets.example.com (Widget, status subresource) and gizmos.example.com
 * (Gizmo, none). */
void kc_need_widgets(void);
void kc_need_gizmos(void);
/* The Widgets path of ns, or of ns/name when name is not NULL. */
const char *kc_w_path(const char *ns, const char *name);
/* Creates Widget ns/name with spec.foo = foo; meta_extra as for kc_mk_cm;
 * rest: more top-level members ("\"status\":{...}") or NULL. */
json_object *kc_mk_widget(const char *ns, const char *name, const char *foo,
        const char *meta_extra, const char *rest);
/* A deep copy of o for editing; kc_set_str sets the string at a path. */
json_object *kc_copy(json_object *o);
void kc_set_str(json_object *o, const char *path, const char *v);

/* Watches.  kc_watch_on opens one on base + path (no assertion). */
struct ksim_watch *kc_watch_on(const char *base, const char *path);
/* A watch answer is application/json, chunked (spec B.5). */
void kc_check_stream_headers(struct ksim_watch *w, const char *path);
/* Opens a watch on kc_base + path and asserts HTTP 200. */
struct ksim_watch *kc_watch(const char *path);
/* The next event within ms, or NULL. */
json_object *kc_next_event(struct ksim_watch *w, int ms);
/* The next event other than BOOKMARK within KC_EVENT_MS; asserts its
 * type and name (name NULL: any). */
json_object *kc_expect_event(
        struct ksim_watch *w, const char *type, const char *name);
/* Asserts that no non-BOOKMARK event arrives within ms. */
void kc_expect_quiet(struct ksim_watch *w, int ms);
/* The list's metadata.resourceVersion. */
const char *kc_list_rv(const char *path);

/* Discovery.  The verbs (JSON text) of resource name in an
 * APIResourceList, its entry in *ent. */
const char *kc_resource_entry_verbs(
        json_object *list, const char *name, json_object **ent);
/* Asserts that ent's verbs are exactly the n of want (in any order). */
void kc_assert_verbs(json_object *ent, const char *const *want, size_t n);
/* The group name in an APIGroupList's groups, or NULL. */
json_object *kc_find_group(json_object *groups, const char *name);
/* The status of condition type of an object ("(missing)" when none). */
const char *kc_cond_status(json_object *crd, const char *type);
/* Names of a list's items, comma-joined. */
const char *kc_item_names(json_object *list);

#endif
