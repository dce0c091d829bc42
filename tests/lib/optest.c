/*
 * optest.c: the sympoziumd-against-kubesim fixture of optest.h.  Owns the
 * fixture's directory (made and removed here), the supervisors' command
 * lines, creating objects while their CRDs come up, the object polling
 * loop and its common checks, and the testctl ConfigMap protocol (the
 * enabled label, the action annotation, the <name>-out output).
 */
#include "tests/lib/optest.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/testutil.h"

#define STOP_MS     15000
#define TERM_MS     10000
#define MAX_ARGS    62
#define POLL_MS     100
#define CREATE_MS   50
#define TESTCTL_ON  "testctl.sympozium.ai/enabled"
#define TESTCTL_ACT "testctl.sympozium.ai/action"
#define CM_PATH     "/api/v1/namespaces/default/configmaps"
#define OWNER_API   "sympozium.ai/v1alpha1"

/* ---- the fixture ---- */

int
optest_start(struct optest *o, const char *name, const char *const *ksim_args,
        long client_timeout_ms, int wait_ms)
{
	char ua[96];

	memset(o, 0, sizeof(*o));
	o->wait_ms = wait_ms;
	snprintf(o->dir, sizeof(o->dir), "/tmp/%s-XXXXXX", name);
	if (mkdtemp(o->dir) == NULL) {
		fprintf(stderr, "optest: mkdtemp %s: %s\n", o->dir,
		        strerror(errno));
		o->dir[0] = '\0';
		return (-1);
	}
	snprintf(o->sock, sizeof(o->sock), "%s/h.sock", o->dir);
	snprintf(ua, sizeof(ua), "%s/0.1", name);
	if (ksim_api_start(&o->a, ksim_args, ua, client_timeout_ms) != 0) {
		(void)rmdir(o->dir);
		o->dir[0] = '\0';
		return (-1);
	}
	return (0);
}

int
optest_start_operator(struct optest *o, const char *name, int wait_ms,
        const char *const *args)
{
	if (optest_start(o, name, NULL, 10000, wait_ms) != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(o->a.c), 8);
	optest_sd_start(o, 0, 0, args);
	return (0);
}

int
optest_stop(struct optest *o)
{
	int rc;

	for (int i = 0; i < OPTEST_MAX_SD; i++) {
		(void)sdproc_stop(&o->sd[i], STOP_MS);
	}
	rc = o->a.dir[0] != '\0' ? ksim_api_stop(&o->a) : -1;
	if (o->dir[0] != '\0') {
		(void)testutil_rmtree(o->dir);
	}
	return (rc == 0 ? 0 : -1);
}

int
optest_teardown(void **state)
{
	return (*state != NULL ? optest_stop(*state) : -1);
}

/* ---- the test controller's fixture ---- */

struct optest *
optest_testctl_new(const char *name, const char *const *ksim_args, int wait_ms)
{
	const char *args[16] = { "--controllers", "none" };
	struct optest *o = xcalloc(1, sizeof(*o));
	int n = 2;

	for (; ksim_args != NULL && *ksim_args != NULL && n < 15;
	        ksim_args++) {
		args[n++] = *ksim_args;
	}
	args[n] = NULL;
	if (optest_start(o, name, args, 10000, wait_ms) != 0) {
		free(o);
		return (NULL);
	}
	return (o);
}

/* Checks s's log for sanitizer reports and prints it when there is one,
 * when bad, or with $KEEP_TEST_DIR.  -1 when there was a report. */
static int
log_clean(const struct sdproc *s, bool segv_ok, bool bad)
{
	int n = sdproc_check_sanitizers(s->log, segv_ok);

	if (n > 0 || bad || getenv("KEEP_TEST_DIR") != NULL) {
		sdproc_dump_log(s->log);
	}
	return (n > 0 ? -1 : 0);
}

int
optest_finish(struct optest *o, enum optest_how how, bool segv_ok)
{
	int rc = 0;

	if (o == NULL) {
		return (-1);
	}
	for (int i = 0; i < OPTEST_MAX_SD; i++) {
		struct sdproc *s = &o->sd[i];
		bool bad = false;
		if (how == OPTEST_KILL) {
			sdproc_kill(s);
		} else if (how == OPTEST_TERM) {
			(void)sdproc_stop(s, TERM_MS);
		} else {
			bad = sdproc_stop(s, STOP_MS) != 0;
		}
		if (s->log[0] != '\0' && log_clean(s, segv_ok, bad) != 0) {
			bad = true;
		}
		rc = bad ? -1 : rc;
	}
	(void)optest_stop(o);
	free(o);
	return (rc);
}

int
optest_testctl_setup(void **state)
{
	*state = optest_testctl_new("test-testctl", NULL, STOP_MS);
	return (*state != NULL ? 0 : -1);
}

int
optest_testctl_teardown(void **state)
{
	return (optest_finish(*state, OPTEST_TERM_EXIT0, false));
}

/* ---- supervisors ---- */

void
optest_sd_start(
        struct optest *o, int i, unsigned opts, const char *const *args)
{
	const char *argv[MAX_ARGS + 1];
	char rundir[128];
	struct sdproc *s;
	int n = 0;

	assert_true(i >= 0 && i < OPTEST_MAX_SD);
	s = &o->sd[i];
	memset(s, 0, sizeof(*s));
	snprintf(s->log, sizeof(s->log), "%s/sd%d.log", o->dir, i);
	snprintf(rundir, sizeof(rundir), "%s/run%d", o->dir, i);
	argv[n++] = "--kubeconfig";
	argv[n++] = o->a.kubeconfig;
	argv[n++] = "--runtime-dir";
	argv[n++] = rundir;
	if ((opts & OPTEST_SD_HTTP) == 0) {
		argv[n++] = "--metrics-bind-address=0";
		argv[n++] = "--health-probe-bind-address=0";
	}
	if ((opts & OPTEST_SD_TESTCTL) != 0) {
		argv[n++] = "--controllers";
		argv[n++] = "testctl";
		argv[n++] = "--worker-binary";
		argv[n++] = sdproc_worker_test_binary();
	}
	for (; args != NULL && *args != NULL; args++) {
		assert_true(n < MAX_ARGS);
		argv[n++] = *args;
	}
	argv[n] = NULL;
	s->pid = sdproc_start(s->log, argv);
	assert_true(s->pid > 0);
}

void
optest_sd_sigterm(struct optest *o, int i, int ms)
{
	struct sdproc *s = &o->sd[i];

	assert_true(s->pid > 0);
	assert_int_equal(kill(s->pid, SIGTERM), 0);
	assert_true(sdproc_reap(&s->pid, &s->status, ms));
	if (!WIFEXITED(s->status) || WEXITSTATUS(s->status) != 0) {
		sdproc_dump_log(s->log);
		fail_msg("sympoziumd: wait status %d, want exit 0", s->status);
	}
}

void
optest_test_sigterm(void **state)
{
	optest_sd_sigterm(*state, 0, STOP_MS);
}

/* ---- objects ---- */

int
optest_apply_upstream_crds(struct kapi_client *c)
{
	return (ksim_apply_crds(c, "deploy/crds"));
}

const char *
optest_plural(const char *kind)
{
	static const struct {
		const char *kind, *plural;
	} kinds[] = {
		{ "AgentRun", "agentruns" },
		{ "SympoziumInstance", "sympoziuminstances" },
		{ "SkillPack", "skillpacks" },
		{ "SympoziumPolicy", "sympoziumpolicies" },
		{ "SympoziumSchedule", "sympoziumschedules" },
		{ "PersonaPack", "personapacks" },
		{ "MCPServer", "mcpservers" },
		{ "SympoziumConfig", "sympoziumconfigs" },
	};

	for (size_t i = 0; kind != NULL && i < sizeof(kinds) / sizeof(*kinds);
	        i++) {
		if (strcmp(kinds[i].kind, kind) == 0) {
			return (kinds[i].plural);
		}
	}
	return (NULL);
}

enum kapi_rc
optest_create(struct optest *o, const struct kapi_res *r, const char *ns,
        json_object *obj, json_object **out, struct kapi_err *e)
{
	int64_t end = ksim_now_ms() + o->wait_ms;
	struct kapi_err scratch = KAPI_ERR_INIT;
	enum kapi_rc rc;

	if (e == NULL) {
		e = &scratch;
	}
	for (;;) {
		*e = (struct kapi_err)KAPI_ERR_INIT;
		rc = kapi_create(o->a.c, r, ns, obj, out, e);
		if (rc != KAPI_ENOTFOUND || ksim_now_ms() >= end) {
			break;
		}
		kapi_err_fini(e);
		ksim_sleep_ms(CREATE_MS);
	}
	kapi_err_fini(&scratch);
	return (rc);
}

void
optest_create_or_fail(struct optest *o, const struct kapi_res *r,
        const char *ns, json_object *obj, json_object **out)
{
	struct kapi_err e = KAPI_ERR_INIT;

	if (optest_create(o, r, ns, obj, out, &e) != KAPI_OK) {
		fail_msg("create %s %s/%s: %ld %s", r->plural, ns,
		        jx_get_str(obj, "metadata.name"), e.code,
		        e.message != NULL ? e.message : "");
	}
	kapi_err_fini(&e);
}

void
optest_kubelet_rules(struct optest *o, const char *rules_json)
{
	struct ksim_resp *r = ksim_request(ksim_url(o->a.k), "PUT",
	        "/_kubesim/kubelet", "application/json", rules_json, NULL, 0);

	if (r->code != 200) {
		fail_msg("kubelet rules: %ld %s", r->code, r->body);
	}
	ksim_resp_free(r);
}

/* ---- polling ---- */

json_object *
optest_get(struct optest *o, const struct kapi_res *r, const char *ns,
        const char *name)
{
	json_object *obj = NULL;
	struct kapi_err e = KAPI_ERR_INIT;
	enum kapi_rc rc = kapi_get(o->a.c, r, ns, name, &obj, &e);

	if (rc != KAPI_OK && rc != KAPI_ENOTFOUND) {
		fail_msg("GET %s %s/%s: %s", r->plural, ns, name,
		        e.message != NULL ? e.message : "");
	}
	kapi_err_fini(&e);
	return (rc == KAPI_OK ? obj : NULL);
}

const char *
optest_poll(struct optest *o, const struct kapi_res *r, const char *ns,
        const char *name, optest_check_fn *check, const void *arg,
        json_object **last)
{
	int64_t end = ksim_now_ms() + o->wait_ms;
	const char *why;
	json_object *obj;

	for (;;) {
		obj = optest_get(o, r, ns, name);
		if ((why = check(obj, arg)) == NULL || ksim_now_ms() >= end) {
			break;
		}
		json_object_put(obj);
		ksim_sleep_ms(POLL_MS);
	}
	if (last != NULL) {
		*last = obj;
	} else {
		json_object_put(obj);
	}
	return (why);
}

void
optest_wait_obj(struct optest *o, const struct kapi_res *r, const char *ns,
        const char *name, optest_check_fn *check, const void *arg)
{
	json_object *obj = NULL;
	const char *why = optest_poll(o, r, ns, name, check, arg, &obj);

	if (why != NULL) {
		fprintf(stderr, "%s %s/%s after %d ms: %s\nobject: %s\n",
		        r->plural, ns, name, o->wait_ms, why,
		        obj != NULL ? json_object_to_json_string(obj)
		                    : "(absent)");
		fail_msg("%s %s/%s: %s", r->plural, ns, name, why);
	}
	json_object_put(obj);
}

const char *
optest_check_absent(json_object *obj, const void *arg)
{
	(void)arg;
	return (obj == NULL ? NULL : "still present");
}

const char *
optest_check_present(json_object *obj, const void *arg)
{
	(void)arg;
	return (obj != NULL ? NULL : "absent");
}

const char *
optest_check_field(json_object *obj, const void *arg)
{
	const char *const *fv = arg;
	const char *v = jx_get_str(obj, fv[0]);

	if (obj == NULL) {
		return ("absent");
	}
	return (v != NULL && strcmp(v, fv[1]) == 0 ? NULL : "field differs");
}

void
optest_wait_field(struct optest *o, const struct kapi_res *r, const char *ns,
        const char *name, const char *path, const char *want)
{
	const char *fv[2] = { path, want };

	optest_wait_obj(o, r, ns, name, optest_check_field, fv);
}

/* "" for NULL. */
static const char *
str_or_empty(const char *s)
{
	return (s != NULL ? s : "");
}

/* The one controller ownerReference of obj; NULL when not exactly one. */
static json_object *
controller_ref(json_object *obj)
{
	json_object *refs = jx_get(obj, "metadata.ownerReferences");
	json_object *ref = NULL;
	int controllers = 0;

	for (size_t i = 0; refs != NULL && i < json_object_array_length(refs);
	        i++) {
		json_object *r = json_object_array_get_idx(refs, i);
		bool v = false;
		if (jx_get_bool(r, "controller", &v) == 0 && v) {
			controllers++;
			ref = r;
		}
	}
	return (controllers == 1 ? ref : NULL);
}

const char *
optest_check_owner(json_object *obj, const void *arg)
{
	const struct optest_owner *own = arg;
	json_object *ref;
	bool bod = false;

	if (obj == NULL) {
		return ("absent");
	}
	if ((ref = controller_ref(obj)) == NULL) {
		return ("not exactly one controller ownerReference");
	}
	(void)jx_get_bool(ref, "blockOwnerDeletion", &bod);
	if (!bod) {
		return ("ownerReference without blockOwnerDeletion: true");
	}
	if (strcmp(str_or_empty(jx_get_str(ref, "apiVersion")), OWNER_API) != 0
	        || strcmp(str_or_empty(jx_get_str(ref, "kind")), own->kind)
	                != 0
	        || strcmp(str_or_empty(jx_get_str(ref, "name")), own->name)
	                != 0
	        || (own->uid != NULL
	                && strcmp(str_or_empty(jx_get_str(ref, "uid")),
	                           own->uid)
	                        != 0)) {
		return ("controller ownerReference names another owner");
	}
	return (NULL);
}

/* ---- the test controller ---- */

void
optest_testctl_create(
        struct optest *o, const char *name, bool enabled, const char *action)
{
	json_object *obj = json_object_new_object();
	struct ksim_resp *r;

	jx_set_path(obj, "metadata.name", json_object_new_string(name));
	if (enabled) {
		jx_setv(obj, json_object_new_string("yes"), "metadata",
		        "labels", TESTCTL_ON, NULL);
	}
	if (action != NULL) {
		jx_setv(obj, json_object_new_string(action), "metadata",
		        "annotations", TESTCTL_ACT, NULL);
	}
	r = ksim_request(ksim_url(o->a.k), "POST", CM_PATH, "application/json",
	        json_object_to_json_string(obj), NULL, 0);
	json_object_put(obj);
	if (r->code != 201) {
		print_error("create %s: %ld %s\n", name, r->code, r->body);
	}
	assert_int_equal(r->code, 201);
	ksim_resp_free(r);
}

json_object *
optest_testctl_out(struct optest *o, const char *name)
{
	char path[256];
	struct ksim_resp *r;
	json_object *d = NULL;

	snprintf(path, sizeof(path), "%s/%s-out", CM_PATH, name);
	r = ksim_request(ksim_url(o->a.k), "GET", path, NULL, NULL, NULL, 0);
	if (r->code == 200 && r->json != NULL) {
		d = json_object_get(json_object_object_get(r->json, "data"));
		if (d == NULL) {
			d = json_object_new_object();
		}
	}
	ksim_resp_free(r);
	return (d);
}

bool
optest_testctl_has_out(struct optest *o, const char *name)
{
	json_object *d = optest_testctl_out(o, name);

	json_object_put(d);
	return (d != NULL);
}

bool
optest_testctl_wait_out(
        struct optest *o, const char *name, int ms, json_object **data)
{
	int64_t end = ksim_now_ms() + ms;
	json_object *d;

	do {
		if ((d = optest_testctl_out(o, name)) != NULL) {
			if (data != NULL) {
				*data = d;
			} else {
				json_object_put(d);
			}
			return (true);
		}
		ksim_sleep_ms(25);
	} while (ksim_now_ms() < end);
	return (false);
}

/* ---- Events ---- */

json_object *
optest_events(
        struct optest *o, const char *ns, const char *name, const char *reason)
{
	static const struct kapi_res events = { "", "v1", "events", true };
	json_object *items = NULL, *out = json_object_new_array();
	struct kapi_err e = KAPI_ERR_INIT;

	if (kapi_list_all(o->a.c, &events, ns, NULL, &items, NULL, &e)
	        != KAPI_OK) {
		fail_msg("list events: %s", e.message ?: "");
	}
	kapi_err_fini(&e);
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *ev = json_object_array_get_idx(items, i);
		const char *n = jx_get_str(ev, "involvedObject.name");
		const char *r = jx_get_str(ev, "reason");
		if (n != NULL && r != NULL && strcmp(n, name) == 0
		        && strcmp(r, reason) == 0) {
			json_object_array_add(out, json_object_get(ev));
		}
	}
	json_object_put(items);
	return (out);
}
