/*
 * optest.h: the fixture of the integration tests that run bin/sympoziumd
 * against bin/kubesim: a fresh temporary directory for the supervisors'
 * logs and runtime directories, kubesim with a kubeconfig, a request log
 * and a kapi client (ksim_api), and up to OPTEST_MAX_SD supervisors
 * (sdproc), either with the production worker (the whole operator) or
 * with the test controller "testctl" of bin/tests/sympozium-worker-test.
 * Also what those tests share to drive and observe it: creating objects
 * while the CRDs come up, polling an object until a check passes, the
 * testctl ConfigMaps, kubesim's kubelet rules, a clean SIGTERM.
 *
 * The set-up and tear-down functions return 0 / -1 (for cmocka
 * fixtures), optest_create() and optest_poll() report what they got; the
 * others fail the running test (cmocka) on an error.
 */
#ifndef OPTEST_H
#define OPTEST_H

#include <stdbool.h>

#include <json-c/json.h>

#include "common/kapi.h"
#include "tests/lib/ksim.h"
#include "tests/lib/sdproc.h"

#define OPTEST_MAX_SD 2

/* The fixture.  Fields are set by optest_start() and owned by it until
 * optest_stop(). */
struct optest {
	struct ksim_api a; /* kubesim, its kubeconfig and request log */
	char dir[64];      /* fresh /tmp/<name>-XXXXXX */
	char sock[128];    /* <dir>/h.sock, for --health-socket */
	int wait_ms;       /* the bound of each wait below */
	struct sdproc sd[OPTEST_MAX_SD]; /* started by optest_sd_start() */
};

/* Makes the directory /tmp/<name>-XXXXXX and starts kubesim through
 * ksim_api_start() with ksim_args (may be NULL) and a client whose
 * User-Agent is "<name>/0.1" (so name must not contain "sympoziumd", the
 * tests' filter of the supervisor's requests) with client_timeout_ms.
 * wait_ms bounds the waits.  Returns 0 (release with optest_stop()), or
 * -1 with the reason on stderr. */
int optest_start(struct optest *o, const char *name,
        const char *const *ksim_args, long client_timeout_ms, int wait_ms);
/* The whole operator's group setup: optest_start() (no kubesim flags, a
 * 10 s client timeout), the upstream CRDs (asserts all 8 created), then
 * supervisor 0 with the production worker and args (may be NULL).
 * Returns 0, or -1 when kubesim did not start. */
int optest_start_operator(struct optest *o, const char *name, int wait_ms,
        const char *const *args);
/* Stops every supervisor still running (sdproc_stop(), 15 s), kubesim
 * (ksim_api_stop()), and removes the directory unless $KEEP_TEST_DIR is
 * set.  Returns 0 when kubesim exited cleanly, else -1. */
int optest_stop(struct optest *o);
/* A cmocka group teardown: optest_stop() of the struct optest *state
 * points to (the group setup sets it). */
int optest_teardown(void **state);

/* How optest_finish() ends the supervisors. */
enum optest_how {
	OPTEST_TERM_EXIT0, /* SIGTERM: each must exit 0 within 15 s */
	OPTEST_TERM,       /* SIGTERM: any exit within 10 s */
	OPTEST_KILL,       /* SIGKILL at once */
};

/* A new fixture (optest_start()) for the tests of the supervisor with the
 * test controller: kubesim runs without its emulated controllers
 * (--controllers none) and with ksim_args (may be NULL; at most 13).
 * Returns it (caller ends it with optest_finish()), or NULL with the
 * reason on stderr. */
struct optest *optest_testctl_new(
        const char *name, const char *const *ksim_args, int wait_ms);
/* Ends a fixture of optest_testctl_new(): stops the supervisors as how
 * says (sdproc_stop() or sdproc_kill()), checks each log for sanitizer
 * reports (segv_ok as for sdproc_sanitizer_line()) and prints it when
 * something was wrong or $KEEP_TEST_DIR is set, then optest_stop() and
 * frees o.  Returns 0 when all was clean (with OPTEST_TERM_EXIT0, each
 * exited 0), else -1 (also for o NULL: a failed set-up). */
int optest_finish(struct optest *o, enum optest_how how, bool segv_ok);
/* cmocka per-test fixtures: *state = optest_testctl_new("test-testctl",
 * NULL, 15000); optest_finish(*state, OPTEST_TERM_EXIT0, false). */
int optest_testctl_setup(void **state);
int optest_testctl_teardown(void **state);

/* What optest_sd_start() adds to the flags. */
enum optest_sd_opts {
	OPTEST_SD_HTTP = 1 << 0,    /* keep the metrics and probe endpoints
	                             * (else both get the address 0: off) */
	OPTEST_SD_TESTCTL = 1 << 1, /* run only the test controller testctl
	                             * of sdproc_worker_test_binary() */
};

/* Starts supervisor i (0 <= i < OPTEST_MAX_SD) as sympoziumd
 * --kubeconfig <a.kubeconfig> --runtime-dir <dir>/run<i>, the flags opts
 * asks for, then args (NULL-terminated, may be NULL), its output in
 * <dir>/sd<i>.log (o->sd[i].log).  Asserts that it started. */
void optest_sd_start(
        struct optest *o, int i, unsigned opts, const char *const *args);
/* SIGTERMs supervisor i and asserts that it exits 0 within ms (else its
 * log is printed). */
void optest_sd_sigterm(struct optest *o, int i, int ms);
/* A cmocka test (in a group whose setup points *state to the struct
 * optest): optest_sd_sigterm() of supervisor 0 within 15 s. */
void optest_test_sigterm(void **state);

/* Creates the eight sympozium.ai CRDs through c: ours, deploy/crds
 * (test_crds checks them against upstream's), so no shared tree is
 * needed.  Returns how many were created, or -1. */
int optest_apply_upstream_crds(struct kapi_client *c);
/* The plural of a sympozium.ai kind ("AgentRun": "agentruns"), NULL when
 * it is none of the eight.  Static. */
const char *optest_plural(const char *kind);
/* Creates obj (borrowed) in ns, retrying every 50 ms for up to o->wait_ms
 * while the answer is 404 (its CRD is not served yet).  Returns the last
 * outcome, its error in *e (caller finishes with kapi_err_fini(); e may
 * be NULL) and the created object in *out (when not NULL; caller puts). */
enum kapi_rc optest_create(struct optest *o, const struct kapi_res *r,
        const char *ns, json_object *obj, json_object **out,
        struct kapi_err *e);
/* optest_create() that fails the test on an error. */
void optest_create_or_fail(struct optest *o, const struct kapi_res *r,
        const char *ns, json_object *obj, json_object **out);
/* PUTs kubesim's kubelet rules: rules_json is the whole body
 * ({"rules":[...]}).  They apply to the pods created afterwards. */
void optest_kubelet_rules(struct optest *o, const char *rules_json);

/* ---- polling objects ---- */

/* Answers NULL when obj (NULL: absent) is as expected, else a static
 * description of the first mismatch. */
typedef const char *optest_check_fn(json_object *obj, const void *arg);

/* The object r ns/name (GET now), NULL when absent (404); fails the test
 * on another error.  Caller puts. */
json_object *optest_get(struct optest *o, const struct kapi_res *r,
        const char *ns, const char *name);
/* GETs r ns/name every 100 ms until check passes or o->wait_ms passed.
 * Returns NULL when it passed, else its last answer; the last object seen
 * goes to *last (when not NULL; NULL: absent; caller puts). */
const char *optest_poll(struct optest *o, const struct kapi_res *r,
        const char *ns, const char *name, optest_check_fn *check,
        const void *arg, json_object **last);
/* optest_poll() that fails the test with the mismatch and the object. */
void optest_wait_obj(struct optest *o, const struct kapi_res *r,
        const char *ns, const char *name, optest_check_fn *check,
        const void *arg);
/* Checks: absent; present; the string field at arg[0] (a dotted path)
 * equals arg[1] (arg: const char *const[2]). */
const char *optest_check_absent(json_object *obj, const void *arg);
const char *optest_check_present(json_object *obj, const void *arg);
const char *optest_check_field(json_object *obj, const void *arg);
/* Waits for the string field at path to equal want (optest_wait_obj()). */
void optest_wait_field(struct optest *o, const struct kapi_res *r,
        const char *ns, const char *name, const char *path, const char *want);

/* The owner expected of a child. */
struct optest_owner {
	const char *kind, *name;
	const char *uid; /* NULL: any */
};

/* Check (arg: const struct optest_owner *): exactly one controller
 * ownerReference, with blockOwnerDeletion, naming that sympozium.ai
 * owner. */
const char *optest_check_owner(json_object *obj, const void *arg);

/* ---- the test controller's ConfigMaps ---- */

/* Creates ConfigMap default/name, labelled for testctl when enabled and
 * annotated with action when not NULL; asserts 201. */
void optest_testctl_create(
        struct optest *o, const char *name, bool enabled, const char *action);
/* The data of ConfigMap default/<name>-out, testctl's output for name
 * ({} when it has none), or NULL when absent.  Caller puts. */
json_object *optest_testctl_out(struct optest *o, const char *name);
/* True when testctl's output for name exists (optest_testctl_out()). */
bool optest_testctl_has_out(struct optest *o, const char *name);
/* Waits up to ms for testctl's output for name; true when it came, its
 * data in *data when not NULL (caller puts). */
bool optest_testctl_wait_out(
        struct optest *o, const char *name, int ms, json_object **data);

/* ---- Events ---- */

/* The Events of namespace ns about involvedObject name with reason (a new
 * array; caller puts).  Fails the test when the list fails. */
json_object *optest_events(struct optest *o, const char *ns, const char *name,
        const char *reason);

#endif
