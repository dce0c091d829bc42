/*
 * fakesup.c: the fake supervisor end of reconciler unit tests (see
 * fakesup.h): the socket pair and its serving thread, the store the
 * views are answered from, the request log, and running a reconciler.
 * Zoneinfo views are answered by the supervisor's own code (zoneinfo.c)
 * unless the test added the zone's bytes.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#include "ipc/ipc_sock.h"
#include "supervisor/zoneinfo.h"
#include "kubesim/ksel.h"
#include "supervisor/vpolicy.h"
#include "tests/lib/contractcheck.h"
#include "tests/lib/fakesup.h"

struct fakesup {
	char dir[64], path[128];
	struct ipc_sock *sup, *wk;
	struct view *view;
	pthread_t th;
	atomic_int stop;
	atomic_int nreqs;
	pthread_mutex_t mu;
	json_object *store; /* [{t, p, ns, n, v, msg}] */
	struct buf log;
	char *logcopy;
	struct zi *zi;
	atomic_bool unprojected; /* lists ignore "fields" (a bad supervisor) */
	/* fakesup_run(): the view policy of the reconcile under way (its
	 * controller, key) and the first view it refused, "" none */
	const struct contract_ctrl *ctrl;
	char *key;
	char refused[VPOL_DETAIL_MAX + 64];
};

static const char *const whats[] = { "get", "list", "secret", "log", "zone" };

static void
put(struct fakesup *f, const char *t, const char *p, const char *ns,
        const char *n, json_object *v)
{
	json_object *e = json_object_new_object();

	json_object_object_add(e, "t", json_object_new_string(t));
	json_object_object_add(e, "p", json_object_new_string(p));
	if (ns != NULL) {
		json_object_object_add(e, "ns", json_object_new_string(ns));
	}
	if (n != NULL) {
		json_object_object_add(e, "n", json_object_new_string(n));
	}
	json_object_object_add(e, "v", v);
	pthread_mutex_lock(&f->mu);
	json_object_array_add(f->store, e);
	pthread_mutex_unlock(&f->mu);
}

static bool
streq(const char *a, const char *b)
{
	return (strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0);
}

/* The last entry of type t on p (ns, n), n NULL in the entry: any. */
static json_object *
find(struct fakesup *f, const char *t, const char *p, const char *ns,
        const char *n)
{
	json_object *hit = NULL;

	for (size_t i = 0; i < json_object_array_length(f->store); i++) {
		json_object *e = json_object_array_get_idx(f->store, i);
		const char *en = jx_get_str(e, "n");
		const char *ens = jx_get_str(e, "ns");
		if (streq(jx_get_str(e, "t"), t)
		        && streq(jx_get_str(e, "p"), p)
		        && (ns == NULL || ens == NULL || streq(ens, ns))
		        && (en == NULL || streq(en, n))) {
			hit = e;
		}
	}
	return (hit);
}

static json_object *
list(struct fakesup *f, const struct ipc_view_req *q)
{
	json_object *items = json_object_new_array();
	struct ksel *sel = ksel_parse_labels(q->label_selector, NULL, 0);

	for (size_t i = 0; i < json_object_array_length(f->store); i++) {
		json_object *e = json_object_array_get_idx(f->store, i);
		json_object *v = jx_get(e, "v");
		if (streq(jx_get_str(e, "t"), "obj") && v != NULL
		        && streq(jx_get_str(e, "p"), q->res.plural)
		        && (q->namespace == NULL || q->namespace[0] == '\0'
		                || jx_get(e, "ns") == NULL
		                || streq(jx_get_str(e, "ns"), q->namespace))
		        && ksel_match_labels(
		                sel, jx_get(v, "metadata.labels"))) {
			json_object_array_add(items,
			        q->nfields > 0 && !atomic_load(&f->unprojected)
			                ? ipc_project(v, q->fields, q->nfields)
			                : json_object_get(v));
		}
	}
	ksel_free(sel);
	return (items);
}

static const char *
plural_of(const struct ipc_view_req *q)
{
	if (q->what == IPC_VIEW_SECRET_META) {
		return ("secrets");
	}
	if (q->what == IPC_VIEW_POD_LOG) {
		return ("pods/log");
	}
	if (q->what == IPC_VIEW_ZONEINFO) {
		return ("zoneinfo");
	}
	return (q->has_res ? q->res.plural : "?");
}

/* A zone the test added, else the supervisor's answer. */
static void
zone(struct fakesup *f, const struct ipc_view_req *q, struct ipc_view_reply *r)
{
	json_object *e = find(f, "zone", "zoneinfo", NULL, q->name);
	static char err[256]; /* used under f->mu */

	if (e != NULL) {
		r->data = jx_get_str(e, "v");
		return;
	}
	r->status = zi_lookup(f->zi, q->name, &r->data, err, sizeof(err));
	r->message = r->status == IPC_VS_ERROR ? err : NULL;
}

static void
fill(struct fakesup *f, const struct ipc_view_req *q, struct ipc_view_reply *r)
{
	const char *p = plural_of(q);
	const char *t = q->what == IPC_VIEW_SECRET_META ? "secret"
	        : q->what == IPC_VIEW_POD_LOG           ? "log"
	                                                : "obj";
	json_object *e = find(f, "fail", p, NULL, q->name);

	if (e != NULL) {
		r->status = IPC_VS_ERROR;
		r->message = jx_get_str(e, "v");
		return;
	}
	if (find(f, "unserved", p, NULL, NULL) != NULL) {
		r->status = IPC_VS_NOT_FOUND;
		return;
	}
	r->status = IPC_VS_OK;
	if (q->what == IPC_VIEW_LIST) {
		r->items = list(f, q);
		return;
	}
	if (q->what == IPC_VIEW_ZONEINFO) {
		zone(f, q, r);
		return;
	}
	e = find(f, t, p, q->namespace, q->name);
	if (e == NULL || jx_get(e, "v") == NULL) {
		r->status = IPC_VS_NOT_FOUND;
	} else if (q->what == IPC_VIEW_POD_LOG) {
		r->text = jx_get_str(e, "v");
	} else {
		r->object = jx_copy(jx_get(e, "v"));
	}
}

/* Whether the view policy refuses q (the first refusal kept). */
static bool
refused(struct fakesup *f, const struct ipc_view_req *q)
{
	struct vpol_violation v;

	if (f->ctrl == NULL || vpol_check(f->ctrl, f->key, q, &v) >= 0) {
		return (false);
	}
	if (f->refused[0] == '\0') {
		snprintf(f->refused, sizeof(f->refused), "policy: %s: %s",
		        v.rule, v.detail);
	}
	return (true);
}

static void
answer(struct fakesup *f, const struct ipc_view_req *q)
{
	struct ipc_view_reply r = { .id = q->id };
	json_object *body;

	pthread_mutex_lock(&f->mu);
	buf_printf(&f->log, "%s %s %s/%s%s%s", whats[q->what],
	        q->has_res ? q->res.plural : "-",
	        q->namespace ? q->namespace : "", q->name ? q->name : "",
	        q->label_selector ? " " : "",
	        q->label_selector ? q->label_selector : "");
	for (size_t i = 0; i < q->nfields; i++) {
		buf_printf(&f->log, "%s%s", i == 0 ? " fields=" : ",",
		        q->fields[i]);
	}
	buf_printf(&f->log, "\n");
	if (refused(f, q)) {
		r.status = IPC_VS_ERROR;
		r.message = f->refused;
	} else {
		fill(f, q, &r);
	}
	body = ipc_view_reply_new(&r);
	pthread_mutex_unlock(&f->mu);
	atomic_fetch_add(&f->nreqs, 1);
	ipc_sock_send(f->sup, IPC_VIEW_REPLY, 0, body);
	json_object_put(body);
}

static void *
serve(void *arg)
{
	struct fakesup *f = arg;
	char err[128];

	while (!atomic_load(&f->stop)) {
		struct ipc_msg m = { 0 };
		struct ipc_view_req q;
		if (ipc_sock_recv_wait(f->sup, 20, &m, err, sizeof(err))
		        != IPC_SOCK_OK) {
			continue;
		}
		if (m.type == IPC_VIEW_REQ && ipc_view_req_read(&m, &q) == 0) {
			answer(f, &q);
		}
		ipc_msg_fini(&m);
	}
	return (NULL);
}

struct fakesup *
fakesup_start(void)
{
	struct fakesup *f = xcalloc(1, sizeof(*f));
	char err[128];

	strcpy(f->dir, "/tmp/fakesup.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
	f->sup = ipc_sock_listen(f->path, 0, err, sizeof(err));
	assert_non_null(f->sup);
	f->wk = ipc_sock_dial(f->path, 0, 3000, err, sizeof(err));
	assert_non_null(f->wk);
	f->view = view_new(f->wk, 3000);
	f->store = json_object_new_array();
	buf_init(&f->log);
	pthread_mutex_init(&f->mu, NULL);
	f->zi = zi_new(NULL);
	assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
	return (f);
}

void
fakesup_unprojected(struct fakesup *f, bool on)
{
	atomic_store(&f->unprojected, on);
}

void
fakesup_stop(struct fakesup *f)
{
	atomic_store(&f->stop, 1);
	pthread_join(f->th, NULL);
	view_free(f->view);
	ipc_sock_close(f->wk);
	ipc_sock_close(f->sup);
	unlink(f->path);
	rmdir(f->dir);
	json_object_put(f->store);
	buf_fini(&f->log);
	free(f->logcopy);
	free(f->key);
	zi_free(f->zi);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

int
fakesup_setup(void **state)
{
	*state = fakesup_start();
	return (0);
}

int
fakesup_teardown(void **state)
{
	fakesup_stop(*state);
	return (0);
}

struct view *
fakesup_view(struct fakesup *f)
{
	return (f->view);
}

void
fakesup_add(struct fakesup *f, const char *plural, const char *ns,
        const char *name, json_object *o)
{
	put(f, "obj", plural, ns, name, o);
}

void
fakesup_add_json(struct fakesup *f, const char *plural, const char *json)
{
	json_object *o = json_tokener_parse(json);

	assert_non_null(o);
	put(f, "obj", plural, jx_get_str(o, "metadata.namespace"),
	        jx_get_str(o, "metadata.name"), o);
}

void
fakesup_add_secret(
        struct fakesup *f, const char *ns, const char *name, json_object *o)
{
	put(f, "secret", "secrets", ns, name, o);
}

void
fakesup_add_log(
        struct fakesup *f, const char *ns, const char *pod, const char *text)
{
	put(f, "log", "pods/log", ns, pod, json_object_new_string(text));
}

/* Removes the entries of type t on plural (ns and name unless NULL). */
static void
drop(struct fakesup *f, const char *t, const char *plural, const char *ns,
        const char *name)
{
	pthread_mutex_lock(&f->mu);
	for (size_t i = json_object_array_length(f->store); i-- > 0;) {
		json_object *e = json_object_array_get_idx(f->store, i);
		if (streq(jx_get_str(e, "t"), t)
		        && streq(jx_get_str(e, "p"), plural)
		        && (ns == NULL || streq(jx_get_str(e, "ns"), ns))
		        && (name == NULL || streq(jx_get_str(e, "n"), name))) {
			json_object_array_del_idx(f->store, i, 1);
		}
	}
	pthread_mutex_unlock(&f->mu);
}

void
fakesup_remove(struct fakesup *f, const char *plural, const char *ns,
        const char *name)
{
	drop(f, "obj", plural, ns, name);
}

void
fakesup_fail(struct fakesup *f, const char *plural, const char *name,
        const char *message)
{
	if (message == NULL) {
		drop(f, "fail", plural, NULL, name);
		return;
	}
	put(f, "fail", plural, NULL, name, json_object_new_string(message));
}

void
fakesup_unserved(struct fakesup *f, const char *plural, bool on)
{
	if (!on) {
		drop(f, "unserved", plural, NULL, NULL);
		return;
	}
	put(f, "unserved", plural, NULL, NULL, json_object_new_boolean(1));
}

void
fakesup_add_zone(
        struct fakesup *f, const char *name, const void *data, size_t len)
{
	char *b64 = ipc_b64_encode(data, len);

	put(f, "zone", "zoneinfo", NULL, name, json_object_new_string(b64));
	free(b64);
}

void
fakesup_reset(struct fakesup *f)
{
	pthread_mutex_lock(&f->mu);
	json_object_put(f->store);
	f->store = json_object_new_array();
	pthread_mutex_unlock(&f->mu);
}

void
fakesup_clear_log(struct fakesup *f)
{
	pthread_mutex_lock(&f->mu);
	buf_reset(&f->log);
	atomic_store(&f->nreqs, 0);
	pthread_mutex_unlock(&f->mu);
}

int
fakesup_nreqs(struct fakesup *f)
{
	return (atomic_load(&f->nreqs));
}

const char *
fakesup_log(struct fakesup *f)
{
	pthread_mutex_lock(&f->mu);
	free(f->logcopy);
	f->logcopy = xstrdup(buf_str(&f->log));
	pthread_mutex_unlock(&f->mu);
	return (f->logcopy);
}

bool
fakesup_was_read(struct fakesup *f, const char *plural, const char *name)
{
	char *want = strcmp(plural, "secrets") == 0
	        ? xasprintf("secret - ")
	        : xasprintf("get %s ", plural);
	const char *log = fakesup_log(f);
	bool found = false;

	for (const char *l = log; *l != '\0' && !found;
	        l = strchr(l, '\n') + 1) {
		const char *slash = strchr(l, '/');
		size_t n = strcspn(slash + 1, " \n");
		found = strncmp(l, want, strlen(want)) == 0
		        && n == strlen(name)
		        && strncmp(slash + 1, name, n) == 0;
	}
	free(want);
	return (found);
}

/* Puts the verdict the reconciler gave into the RESULT body. */
static void
set_verdict(json_object *result, const struct rec_out *ro)
{
	json_object *v = json_object_new_object();

	json_object_object_add(v, "kind",
	        json_object_new_string(ipc_verdict_name(ro->verdict)));
	if (ro->verdict == IPC_V_REQUEUE_AFTER) {
		json_object_object_add(
		        v, "afterMs", json_object_new_int64(ro->after_ms));
	}
	json_object_object_add(
	        v, "message", json_object_new_string(ro->message));
	json_object_object_add(result, "verdict", v);
}

/* Every write of r against the contract (tests/lib/contractcheck.h). */
static void
check_contract(const struct reconciler *rc, const struct ipc_result *r)
{
	struct ipc_write w;
	char err[1024];

	for (size_t i = 0; i < r->nwrites; i++) {
		assert_int_equal(ipc_result_write(r, i, &w), 0);
		if (!contractcheck_write(rc->name, &w, err, sizeof(err))) {
			fail_msg("contract: %s", err);
		}
	}
}

/* The view policy of controller rc->name (when it has a view table) for
 * key, on the views of f until policy_off(). */
static void
policy_on(struct fakesup *f, const struct reconciler *rc, const char *key)
{
	if (f == NULL) {
		return;
	}
	pthread_mutex_lock(&f->mu);
	f->ctrl = contract_find(rc->name);
	free(f->key);
	f->key = xstrdup(key);
	f->refused[0] = '\0';
	pthread_mutex_unlock(&f->mu);
}

/* Policy off; fails the test when a view was refused: every view of a
 * reconciler is one its controller's view table gives. */
static void
policy_off(struct fakesup *f)
{
	char msg[sizeof(f->refused)];

	if (f == NULL) {
		return;
	}
	pthread_mutex_lock(&f->mu);
	f->ctrl = NULL;
	snprintf(msg, sizeof(msg), "%s", f->refused);
	pthread_mutex_unlock(&f->mu);
	if (msg[0] != '\0') {
		fail_msg("view refused: %s", msg);
	}
}

void
fakesup_run(const struct reconciler *rc, struct fakesup *f, const char *key,
        json_object *obj, json_object *children, int64_t now_ms,
        struct fakesup_run *out)
{
	struct rec_in in = { .key = key,
		.object = obj,
		.children = children,
		.now_ms = now_ms,
		.view = f != NULL ? f->view : NULL };
	struct rec_out ro = { .verdict = IPC_V_DONE };
	struct buf b = BUF_INIT;
	char err[256];

	memset(out, 0, sizeof(*out));
	if (children == NULL) {
		in.children = json_object_new_array();
	}
	policy_on(f, rc, key);
	ro.result = ipc_result_new(key, 1, IPC_V_DONE, 0, NULL);
	rc->reconcile(&in, &ro);
	policy_off(f);
	set_verdict(ro.result, &ro);
	assert_int_equal(ipc_encode(IPC_RESULT, 0, ro.result, &b), 0);
	assert_int_equal(
	        ipc_decode(b.data, b.len, 0, &out->msg, err, sizeof(err)), 0);
	assert_int_equal(ipc_result_read(&out->msg, &out->r), 0);
	buf_fini(&b);
	check_contract(rc, &out->r);
	out->result = ro.result;
	out->writes = out->r.writes;
	out->nwrites = out->r.nwrites;
	out->verdict = ro.verdict;
	out->after_ms = ro.after_ms;
	memcpy(out->message, ro.message, sizeof(out->message));
	if (children == NULL) {
		json_object_put(in.children);
	}
}

void
fakesup_run_fini(struct fakesup_run *out)
{
	ipc_msg_fini(&out->msg);
	json_object_put(out->result);
	memset(out, 0, sizeof(*out));
}

struct ipc_write
fakesup_write(struct fakesup_run *r, size_t i)
{
	struct ipc_write w;

	assert_true(i < r->nwrites);
	assert_int_equal(ipc_result_write(&r->r, i, &w), 0);
	return (w);
}

void
fakesup_assert_json(json_object *got, const char *want)
{
	json_object *w = json_tokener_parse(want);
	bool eq;

	assert_non_null(w);
	eq = jx_equal(got, w);
	json_object_put(w);
	if (!eq) {
		char *g = jx_to_string(got);
		print_error("got  %s\nwant %s\n", g, want);
		free(g);
		fail();
	}
}
