/*
 * test_personapack.c: the PersonaPack reconciler, JSON in, writes and
 * verdict out.  Reads through the view are answered by a fake supervisor
 * end (a thread on the listening socket) from an in-test store, and
 * logged so that tests can check what was read.  Covers the cron table,
 * stamping (spec 9.5 samples), idempotence, the sync of existing stamps,
 * exclusion, seeds, disabled-pack teardown with auth Secrets, deletion,
 * and the error statuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "ipc/ipc.h"
#include "workers/personapack.h"

#define NOW_MS 1767225600000LL /* 2026-01-01T00:00:00Z */

/* ---- fake supervisor end ---- */

/* ---- JSON helpers ---- */

/* JSON with ' for " (no escapes needed in the fixtures). */
static json_object *
J(const char *s)
{
	char *t = xstrdup(s);
	json_object *o;

	for (char *c = t; *c != '\0'; c++) {
		if (*c == '\'') {
			*c = '"';
		}
	}
	o = jx_parse(t, strlen(t), 0, NULL, 0);
	free(t);
	assert_non_null(o);
	return (o);
}

/* Whether a equals the JSON text (with ' for "). */
static bool
eqj(json_object *a, const char *json)
{
	json_object *b = J(json);
	bool eq = jx_equal(a, b);

	json_object_put(b);
	return (eq);
}

/* Puts o (taken) at "plural/name" in every namespace ("secrets/name":
 * a Secret's metadata); the string "error" makes its reads fail. */
static void
store_put(struct fakesup *f, const char *key, json_object *o)
{
	char *plural = xstrdup(key), *name = strchr(plural, '/');

	*name++ = '\0';
	fakesup_remove(f, plural, NULL, name);
	fakesup_fail(f, plural, name, NULL);
	if (json_object_is_type(o, json_type_string)) {
		fakesup_fail(f, plural, name, "boom");
		json_object_put(o);
	} else if (strcmp(plural, "secrets") == 0) {
		fakesup_add_secret(f, NULL, name, o);
	} else {
		fakesup_add(f, plural, NULL, name, o);
	}
	free(plural);
}

/* ---- running the reconciler ---- */

static void
run(struct fakesup *f, json_object *pack, json_object *children,
        struct fakesup_run *out)
{
	fakesup_run(&personapack_reconciler, f, "default/x", pack, children,
	        NOW_MS, out);
}

/* The target name of a write (create: the object's). */
static const char *
wname(const struct ipc_write *w)
{
	return (w->name[0] != '\0' ? w->name
	                           : jx_get_str(w->object, "metadata.name"));
}

static void
assert_write(struct fakesup_run *r, size_t i, enum ipc_op op,
        const char *plural, const char *name)
{
	struct ipc_write w = fakesup_write(r, i);

	assert_string_equal(ipc_op_name(w.op), ipc_op_name(op));
	assert_string_equal(w.res.plural, plural);
	assert_string_equal(wname(&w), name);
	assert_string_equal(w.namespace[0] != '\0'
	                ? w.namespace
	                : jx_get_str(w.object, "metadata.namespace"),
	        "default");
}

/* The index of the write of that op and name, or -1. */
static int
find(struct fakesup_run *r, enum ipc_op op, const char *name)
{
	for (size_t i = 0; i < r->r.nwrites; i++) {
		struct ipc_write w = fakesup_write(r, i);
		if (w.op == op && strcmp(wname(&w), name) == 0) {
			return ((int)i);
		}
	}
	return (-1);
}

static json_object *
status_of(struct fakesup_run *r)
{
	int i = find(r, IPC_OP_UPDATE_STATUS, "my-team");

	assert_true(i >= 0);
	return (jx_get(fakesup_write(r, (size_t)i).object, "status"));
}

static void
assert_str(json_object *o, const char *path, const char *want)
{
	const char *s = jx_get_str(o, path);

	if (want == NULL) {
		assert_null(s);
		return;
	}
	assert_non_null(s);
	assert_string_equal(s, want);
}

static int64_t
int_at(json_object *o, const char *path)
{
	int64_t v = -1;

	assert_int_equal(jx_get_int(o, path, &v), 0);
	return (v);
}

/* ---- fixtures ---- */

/* Spec 9.5 my-team, enabled, with its finalizer. */
static json_object *
my_team(void)
{
	return (J("{'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
	          "'metadata':{'name':'my-team','namespace':'default',"
	          "'uid':'u-pack','resourceVersion':'10','generation':3,"
	          "'finalizers':['sympozium.ai/personapack-finalizer']},"
	          "'spec':{'enabled':true,'description':'Custom team',"
	          "'authRefs':[{'provider':'openai','secret':'my-team-openai-"
	          "key'}],"
	          "'policyRef':'default-policy',"
	          "'channelConfigs':{'slack':'my-team-slack'},"
	          "'personas':["
	          "{'name':'reviewer','systemPrompt':'You review PRs.',"
	          "'skills':['code-review'],"
	          "'schedule':{'type':'scheduled','cron':'0 */4 * * 1-5',"
	          "'task':'Review unreviewed PRs.'},"
	          "'memory':{'enabled':true,"
	          "'seeds':['Follow team coding standards']},"
	          "'channels':['slack']},"
	          "{'name':'triager','systemPrompt':'You triage new issues.',"
	          "'schedule':{'type':'sweep','interval':'30m',"
	          "'task':'Label and prioritise new issues.'}}]}}"));
}

static void
set(json_object *o, const char *path, const char *json)
{
	assert_int_equal(jx_set_path(o, path, json ? J(json) : NULL), 0);
}

/* Turns the creates of r into cached children (uid, resourceVersion). */
static json_object *
children_from(struct fakesup_run *r, const char *plural)
{
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < r->r.nwrites; i++) {
		struct ipc_write w = fakesup_write(r, i);
		json_object *o = NULL;
		if (w.op != IPC_OP_CREATE
		        || strcmp(w.res.plural, plural) != 0) {
			continue;
		}
		json_object_deep_copy(w.object, &o, NULL);
		jx_set_path(o, "metadata.uid", json_object_new_string("u-c"));
		jx_set_path(o, "metadata.resourceVersion",
		        json_object_new_string("20"));
		json_object_array_add(out, o);
	}
	return (out);
}

static void
append_all(json_object *dst, json_object *src)
{
	for (size_t i = 0; i < json_object_array_length(src); i++) {
		json_object_array_add(dst,
		        json_object_get(json_object_array_get_idx(src, i)));
	}
	json_object_put(src);
}

/* ---- tests ---- */

static void
expect_cron(
        const char *cron, const char *interval, size_t idx, const char *want)
{
	char *got = personapack_cron(cron, interval, idx);

	assert_string_equal(got, want);
	free(got);
}

static void
test_cron(void **state)
{
	(void)state;
	expect_cron("0 */4 * * 1-5", "5m", 3, "0 */4 * * 1-5");
	expect_cron("", "1m", 4, "* * * * *");
	expect_cron(NULL, "1min", 0, "* * * * *");
	expect_cron(NULL, "5m", 0, "0/5 * * * *");
	expect_cron(NULL, "5min", 3, "1/5 * * * *");
	expect_cron(NULL, "10m", 2, "4/10 * * * *");
	expect_cron(NULL, "15MIN", 1, "2/15 * * * *");
	expect_cron(NULL, " 30m ", 1, "2/30 * * * *");
	expect_cron(NULL, "30m", 16, "2/30 * * * *");
	expect_cron(NULL, "1h", 1, "2 * * * *");
	expect_cron(NULL, "60m", 31, "2 * * * *");
	expect_cron(NULL, "2h", 0, "0 */2 * * *");
	expect_cron(NULL, "3h", 2, "4 */3 * * *");
	expect_cron(NULL, "4h", 0, "0 */4 * * *");
	expect_cron(NULL, "6h", 0, "0 */6 * * *");
	expect_cron(NULL, "12h", 5, "10 */12 * * *");
	expect_cron(NULL, "24h", 1, "2 0 * * *");
	expect_cron(NULL, "1d", 0, "0 0 * * *");
	expect_cron(NULL, " 0 9 * * MON ", 1, "0 9 * * mon");
	expect_cron(NULL, "45m", 0, "0 * * * *");
	expect_cron(NULL, "90m", 2, "4 * * * *");
	expect_cron(NULL, "", 1, "2 * * * *");
	expect_cron(NULL, NULL, 0, "0 * * * *");
}

static void
test_gone(void **state)
{
	struct fakesup_run r;

	(void)state;
	run(NULL, NULL, NULL, &r);
	assert_int_equal(r.r.nwrites, 0);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	fakesup_run_fini(&r);
}

/* Spec 9.5 my-team: what a fresh enabled pack stamps. */
static void
test_stamp_my_team(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *o, *st;
	struct fakesup_run r;

	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 6);
	/* the seeds go before the instance */
	assert_write(
	        &r, 0, IPC_OP_CREATE, "configmaps", "my-team-reviewer-memory");
	assert_write(&r, 1, IPC_OP_CREATE, "sympoziuminstances",
	        "my-team-reviewer");
	assert_write(&r, 2, IPC_OP_CREATE, "sympoziumschedules",
	        "my-team-reviewer-schedule");
	assert_write(
	        &r, 3, IPC_OP_CREATE, "sympoziuminstances", "my-team-triager");
	assert_write(&r, 4, IPC_OP_CREATE, "sympoziumschedules",
	        "my-team-triager-schedule");
	assert_write(&r, 5, IPC_OP_UPDATE_STATUS, "personapacks", "my-team");

	o = fakesup_write(&r, 0).object;
	assert_int_equal(
	        fakesup_write(&r, 0).tolerate, IPC_TOL_ALREADY_EXISTS);
	assert_string_equal(
	        json_object_get_string(jx_getv(o, "data", "MEMORY.md", NULL)),
	        "# Memory\n\n- Follow team coding standards\n");
	assert_string_equal(json_object_get_string(jx_getv(o, "metadata",
	                            "labels", "sympozium.ai/memory", NULL)),
	        "true");
	assert_string_equal(
	        json_object_get_string(jx_getv(o, "metadata", "labels",
	                "sympozium.ai/persona-pack", NULL)),
	        "my-team");
	/* owned by the pack (not upstream): the write policy lets it
	 * delete only its own */
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(
	                           jx_get(o, "metadata.ownerReferences"), 0),
	                "uid"),
	        "u-pack");

	o = fakesup_write(&r, 1).object;
	assert_int_equal(fakesup_write(&r, 1).tolerate, 0);
	assert_string_equal(json_object_get_string(jx_getv(o, "metadata",
	                            "labels", "sympozium.ai/persona", NULL)),
	        "reviewer");
	assert_str(json_object_array_get_idx(
	                   jx_get(o, "metadata.ownerReferences"), 0),
	        "uid", "u-pack");
	assert_str(o, "spec.agents.default.model", "gpt-4o");
	assert_null(jx_get(o, "spec.agents.default.baseURL"));
	assert_true(eqj(jx_get(o, "spec.authRefs"),
	        "[{'provider':'openai','secret':'my-team-openai-key'}]"));
	assert_true(eqj(jx_get(o, "spec.memory"),
	        "{'enabled':true,'maxSizeKB':256,"
	        "'systemPrompt':'You review PRs.'}"));
	assert_true(eqj(jx_get(o, "spec.skills"),
	        "[{'skillPackRef':'code-review'},{'skillPackRef':'memory'}]"));
	assert_true(eqj(jx_get(o, "spec.channels"),
	        "[{'type':'slack','configRef':{'secret':'my-team-slack'}}]"));
	assert_str(o, "spec.policyRef", "default-policy");
	assert_str(o, "spec.observability.otlpProtocol", "grpc");

	o = fakesup_write(&r, 2).object;
	assert_true(eqj(jx_get(o, "spec"),
	        "{'instanceRef':'my-team-reviewer',"
	        "'schedule':'0 */4 * * 1-5','task':'Review unreviewed PRs.',"
	        "'type':'scheduled','concurrencyPolicy':'Forbid',"
	        "'includeMemory':true}"));
	assert_str(
	        fakesup_write(&r, 4).object, "spec.schedule", "2/30 * * * *");
	assert_null(jx_get(fakesup_write(&r, 3).object, "spec.channels"));

	st = status_of(&r);
	assert_true(eqj(st,
	        "{'phase':'Ready','personaCount':2,'installedCount':2,"
	        "'installedPersonas':["
	        "{'name':'reviewer','instanceName':'my-team-reviewer',"
	        "'scheduleName':'my-team-reviewer-schedule'},"
	        "{'name':'triager','instanceName':'my-team-triager',"
	        "'scheduleName':'my-team-triager-schedule'}]}"));
	assert_int_equal(fakesup_write(&r, 5).tolerate, IPC_TOL_CONFLICT);
	/* the missing stamps were looked up before being created */
	assert_true(
	        fakesup_was_read(f, "sympoziuminstances", "my-team-reviewer"));
	assert_true(fakesup_was_read(
	        f, "sympoziumschedules", "my-team-triager-schedule"));
	assert_true(
	        fakesup_was_read(f, "configmaps", "my-team-reviewer-memory"));
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* The pass after: stamps cached, status written: no write at all. */
static void
test_idempotent(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *children;
	struct fakesup_run r1, r2;
	size_t n;

	run(f, pack, NULL, &r1);
	children = children_from(&r1, "sympoziuminstances");
	append_all(children, children_from(&r1, "sympoziumschedules"));
	json_object_object_add(
	        pack, "status", json_object_get(status_of(&r1)));
	store_put(f, "configmaps/my-team-reviewer-memory",
	        J("{'metadata':{'name':'my-team-reviewer-memory',"
	          "'ownerReferences':[{'uid':'u-pack','controller':true}]}}"));
	n = fakesup_nreqs(f);
	run(f, pack, children, &r2);
	assert_int_equal(r2.r.nwrites, 0);
	assert_int_equal(r2.r.verdict, IPC_V_DONE);
	/* only the seed ConfigMap is read */
	assert_int_equal(fakesup_nreqs(f), n + 1);
	fakesup_run_fini(&r1);
	fakesup_run_fini(&r2);
	json_object_put(children);
	json_object_put(pack);
}

/* What upstream (008266e personapack_controller.go) leaves: status
 * fields false or 0 absent (omitempty on sharedMemoryReady and the
 * counts), stamped schedules without spec.suspend (buildSchedule's false,
 * omitempty; reconcilePersona compares the typed specs, so an explicit
 * false, as we used to write, is the same): nothing to write. */
static void
test_upstream_converged(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *children, *st;
	struct fakesup_run r1, r2;

	run(f, pack, NULL, &r1);
	children = children_from(&r1, "sympoziuminstances");
	append_all(children, children_from(&r1, "sympoziumschedules"));
	st = status_of(&r1);
	assert_null(jx_get(st, "sharedMemoryReady"));
	assert_null(jx_get(
	        json_object_array_get_idx(children, 2), "spec.suspend"));
	json_object_object_add(pack, "status", json_object_get(st));
	set(json_object_array_get_idx(children, 3), "spec.suspend", "false");
	store_put(f, "configmaps/my-team-reviewer-memory",
	        J("{'metadata':{'name':'my-team-reviewer-memory',"
	          "'ownerReferences':[{'uid':'u-pack','controller':true}]}}"));
	run(f, pack, children, &r2);
	assert_int_equal(r2.r.nwrites, 0);
	fakesup_run_fini(&r1);
	fakesup_run_fini(&r2);
	json_object_put(children);
	json_object_put(pack);
}

/* A missing finalizer is added first (conditioned on the cached
 * resourceVersion); the status waits for the next pass. */
static void
test_finalizer_added(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team();
	struct fakesup_run r;
	struct ipc_write w;

	set(pack, "metadata.finalizers", "['other']");
	run(f, pack, NULL, &r);
	w = fakesup_write(&r, 0);
	assert_int_equal(w.op, IPC_OP_PATCH);
	assert_int_equal(w.patch_type, IPC_PATCH_MERGE);
	assert_true(eqj(w.patch,
	        "{'metadata':{'finalizers':['other',"
	        "'sympozium.ai/personapack-finalizer'],"
	        "'resourceVersion':'10'}}"));
	assert_int_equal(w.tolerate, IPC_TOL_CONFLICT);
	assert_true(find(&r, IPC_OP_CREATE, "my-team-reviewer") > 0);
	assert_int_equal(find(&r, IPC_OP_UPDATE_STATUS, "my-team"), -1);
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Spec 9.5 developer-team: taskOverride, skillParams, stagger, exclusion
 * of a persona whose stamps exist. */
static void
test_developer_team(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = J(
	        "{'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
	        "'metadata':{'name':'developer-team','namespace':'default',"
	        "'uid':'u-dev','finalizers':"
	        "['sympozium.ai/personapack-finalizer']},"
	        "'spec':{'enabled':true,"
	        "'authRefs':[{'provider':'openai','secret':'dev-team-openai-"
	        "key'}],"
	        "'skillParams':{'github-gitops':{'repo':'myorg/myapp'}},"
	        "'taskOverride':'Build the /api/v1/users endpoints.',"
	        "'excludePersonas':['qa-engineer'],'personas':["
	        "{'name':'tech-lead','model':'gpt-4o','systemPrompt':'TL',"
	        "'skills':['github-gitops','code-review','mcp-bridge'],"
	        "'schedule':{'type':'scheduled','interval':'2h',"
	        "'task':'Review open PRs.'}},"
	        "{'name':'backend-dev','model':'gpt-4o','systemPrompt':'BE',"
	        "'skills':['github-gitops'],'schedule':{'type':'sweep',"
	        "'interval':'1h','task':'Implement the top backend issue.'}},"
	        "{'name':'qa-engineer','systemPrompt':'QA','schedule':"
	        "{'type':'sweep','interval':'45m','task':'Add tests.'}}]}}");
	json_object *children = J(
	        "[{'kind':'SympoziumInstance','metadata':{'name':"
	        "'developer-team-qa-engineer','namespace':'default'}},"
	        "{'kind':'SympoziumSchedule','metadata':{'name':"
	        "'developer-team-qa-engineer-schedule','namespace':'default',"
	        "'deletionTimestamp':'2026-01-01T00:00:00Z'}}]");
	json_object *o;
	struct fakesup_run r;
	int i;

	store_put(f, "configmaps/developer-team-qa-engineer-memory",
	        J("{'metadata':{'name':'developer-team-qa-engineer-memory',"
	          "'ownerReferences':[{'uid':'u-dev','controller':true}]}}"));
	run(f, pack, children, &r);
	i = find(&r, IPC_OP_CREATE, "developer-team-tech-lead");
	o = fakesup_write(&r, (size_t)i).object;
	assert_true(eqj(jx_get(o, "spec.skills"),
	        "[{'skillPackRef':'github-gitops','params':"
	        "{'repo':'myorg/myapp'}},{'skillPackRef':'code-review'},"
	        "{'skillPackRef':'memory'}]"));
	o = fakesup_write(&r,
	        (size_t)find(&r, IPC_OP_CREATE,
	                "developer-team-tech-lead-schedule"))
	            .object;
	assert_str(o, "spec.schedule", "0 */2 * * *");
	assert_str(o, "spec.task",
	        "TEAM OBJECTIVE: Build the /api/v1/users endpoints.\n\n"
	        "YOUR ROLE TASK: Review open PRs.");
	o = fakesup_write(&r,
	        (size_t)find(&r, IPC_OP_CREATE,
	                "developer-team-backend-dev-schedule"))
	            .object;
	assert_str(o, "spec.schedule", "2 * * * *");
	/* the excluded persona: its instance and memory go, the schedule is
	 * already terminating; nothing is created for it */
	assert_true(
	        find(&r, IPC_OP_DELETE, "developer-team-qa-engineer") >= 0);
	assert_true(
	        find(&r, IPC_OP_DELETE, "developer-team-qa-engineer-memory")
	        >= 0);
	assert_int_equal(
	        find(&r, IPC_OP_DELETE, "developer-team-qa-engineer-schedule"),
	        -1);
	assert_int_equal(
	        find(&r, IPC_OP_CREATE, "developer-team-qa-engineer-schedule"),
	        -1);
	assert_int_equal(fakesup_write(&r,
	                         (size_t)find(&r, IPC_OP_DELETE,
	                                 "developer-team-qa-engineer"))
	                         .tolerate,
	        IPC_TOL_NOT_FOUND);
	o = jx_get(fakesup_write(&r, r.r.nwrites - 1).object, "status");
	assert_int_equal(int_at(o, "personaCount"), 3);
	assert_int_equal(int_at(o, "installedCount"), 2);
	assert_str(o, "phase", "Ready");
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* An existing instance gets the pack-owned fields back, in one Update;
 * skills, policyRef and lifecycle stay as the user set them. */
static void
test_sync_instance(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *children, *o, *want;
	struct fakesup_run r;
	int i;

	set(pack, "spec.baseURL", "'http://ollama:11434'");
	set(pack, "spec.personas",
	        "[{'name':'reviewer','model':'gpt-5',"
	        "'systemPrompt':'New prompt',"
	        "'channels':['slack','discord']}]");
	set(pack, "spec.channelConfigs", "{'slack':'s2','discord':'d1'}");
	children
	        = J("[{'apiVersion':'sympozium.ai/v1alpha1',"
	            "'kind':'SympoziumInstance','metadata':{'name':"
	            "'my-team-reviewer','namespace':'default',"
	            "'resourceVersion':'7','ownerReferences':[{'uid':'u-pack',"
	            "'controller':true}]},'spec':{'agents':{'default':"
	            "{'model':'gpt-4o','lifecycle':{'x':1}}},"
	            "'authRefs':[{'secret':'old'}],'policyRef':'mine',"
	            "'skills':[{'skillPackRef':'custom'}],"
	            "'channels':[{'type':'slack','configRef':"
	            "{'secret':'s1'}}]},'status':{'phase':'Running'}}]");
	run(f, pack, children, &r);
	i = find(&r, IPC_OP_UPDATE, "my-team-reviewer");
	assert_true(i >= 0);
	assert_int_equal(
	        fakesup_write(&r, (size_t)i).tolerate, IPC_TOL_CONFLICT);
	o = fakesup_write(&r, (size_t)i).object;
	want = J("{'agents':{'default':{'model':'gpt-5','lifecycle':{'x':1},"
	         "'baseURL':'http://ollama:11434'}},"
	         "'authRefs':[{'provider':'openai','secret':"
	         "'my-team-openai-key'}],'policyRef':'mine',"
	         "'skills':[{'skillPackRef':'custom'}],"
	         "'memory':{'enabled':true,'maxSizeKB':256,"
	         "'systemPrompt':'New prompt'},"
	         "'channels':[{'type':'slack','configRef':{'secret':'s2'}},"
	         "{'type':'discord','configRef':{'secret':'d1'}}]}");
	assert_true(jx_equal(jx_get(o, "spec"), want));
	assert_str(o, "metadata.resourceVersion", "7");
	assert_null(jx_get(o, "status"));
	/* no instance read: it was among the children */
	assert_false(
	        fakesup_was_read(f, "sympoziuminstances", "my-team-reviewer"));
	json_object_put(want);
	fakesup_run_fini(&r);

	/* same channel set: only the secret of the existing channel moves */
	set(pack, "spec.personas",
	        "[{'name':'reviewer','systemPrompt':'P',"
	        "'channels':['slack']}]");
	set(pack, "spec.authRefs", NULL);
	set(pack, "spec.baseURL", NULL);
	json_object_object_del(
	        json_object_object_get(
	                json_object_array_get_idx(children, 0), "spec"),
	        "authRefs");
	set(json_object_array_get_idx(children, 0), "spec.memory",
	        "{'enabled':false,'systemPrompt':'P'}");
	run(f, pack, children, &r);
	o = fakesup_write(
	        &r, (size_t)find(&r, IPC_OP_UPDATE, "my-team-reviewer"))
	            .object;
	assert_true(eqj(jx_get(o, "spec.channels"),
	        "[{'type':'slack','configRef':{'secret':'s2'}}]"));
	assert_true(eqj(jx_get(o, "spec.memory"),
	        "{'enabled':false,'systemPrompt':'P'}"));
	assert_str(o, "spec.agents.default.model", "gpt-4o");
	assert_null(jx_get(o, "spec.authRefs"));
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* A user's edit of a pack-owned schedule is reverted; a schedule whose
 * persona lost its schedule is deleted. */
static void
test_sync_schedule(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *children, *o;
	struct fakesup_run r1, r2;
	int i;

	run(f, pack, NULL, &r1);
	children = children_from(&r1, "sympoziuminstances");
	append_all(children, children_from(&r1, "sympoziumschedules"));
	o = json_object_array_get_idx(children, 2);
	assert_str(o, "metadata.name", "my-team-reviewer-schedule");
	set(o, "spec.suspend", "true");
	json_object_object_del(
	        jx_get(o, "metadata.labels"), "sympozium.ai/persona");
	json_object_object_del(
	        json_object_array_get_idx(jx_get(pack, "spec.personas"), 1),
	        "schedule");
	run(f, pack, children, &r2);
	i = find(&r2, IPC_OP_UPDATE, "my-team-reviewer-schedule");
	assert_true(i >= 0);
	o = fakesup_write(&r2, (size_t)i).object;
	/* the spec replaced by one without suspend (false, omitempty) */
	assert_null(jx_get(o, "spec.suspend"));
	assert_string_equal(json_object_get_string(jx_getv(o, "metadata",
	                            "labels", "sympozium.ai/persona", NULL)),
	        "reviewer");
	assert_true(find(&r2, IPC_OP_DELETE, "my-team-triager-schedule") >= 0);
	o = jx_get(fakesup_write(&r2, r2.r.nwrites - 1).object, "status");
	assert_null(jx_get(
	        json_object_array_get_idx(jx_get(o, "installedPersonas"), 1),
	        "scheduleName"));
	fakesup_run_fini(&r1);
	fakesup_run_fini(&r2);
	json_object_put(children);
	json_object_put(pack);
}

/* An instance missing from the children but found live and owned by the
 * pack (the cache lags behind our create) is synced, not re-created. */
static void
test_stale_children(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team();
	struct fakesup_run r1, r2;
	json_object *kids;

	run(f, pack, NULL, &r1);
	kids = children_from(&r1, "sympoziuminstances");
	store_put(f, "sympoziuminstances/my-team-reviewer",
	        json_object_get(json_object_array_get_idx(kids, 0)));
	store_put(f, "sympoziuminstances/my-team-triager",
	        json_object_get(json_object_array_get_idx(kids, 1)));
	run(f, pack, NULL, &r2);
	assert_int_equal(find(&r2, IPC_OP_CREATE, "my-team-reviewer"), -1);
	assert_int_equal(find(&r2, IPC_OP_UPDATE, "my-team-reviewer"), -1);
	assert_true(
	        find(&r2, IPC_OP_CREATE, "my-team-reviewer-schedule") >= 0);
	fakesup_run_fini(&r1);
	fakesup_run_fini(&r2);
	json_object_put(kids);
	json_object_put(pack);
}

/* The JSON patch operation i of write w. */
static json_object *
patch_op_at(const struct ipc_write *w, size_t i)
{
	return (json_object_array_get_idx(w->patch, i));
}

/* A stamp-named instance and schedule nobody owns (a user's, made before
 * the pack): each adopted by the orphan patch (resourceVersion tested,
 * no ownerReferences tested, the pack's controller reference and label
 * added), nothing created or updated; both count as installed. */
static void
test_adopt_orphans(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *st, *ref;
	struct fakesup_run r;
	struct ipc_write w;
	int i;

	store_put(f, "sympoziuminstances/my-team-triager",
	        J("{'metadata':{'name':'my-team-triager','uid':'u-user',"
	          "'resourceVersion':'77','labels':{'team':'x'}},"
	          "'spec':{'agents':{'default':{'model':'m'}}}}"));
	store_put(f, "sympoziumschedules/my-team-triager-schedule",
	        J("{'metadata':{'name':'my-team-triager-schedule',"
	          "'uid':'u-s','resourceVersion':'78'},'spec':{}}"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	assert_int_equal(find(&r, IPC_OP_CREATE, "my-team-triager"), -1);
	assert_int_equal(find(&r, IPC_OP_UPDATE, "my-team-triager"), -1);
	assert_int_equal(
	        find(&r, IPC_OP_CREATE, "my-team-triager-schedule"), -1);
	i = find(&r, IPC_OP_PATCH, "my-team-triager");
	assert_true(i >= 0);
	w = fakesup_write(&r, (size_t)i);
	assert_string_equal(w.res.plural, "sympoziuminstances");
	assert_int_equal(w.patch_type, IPC_PATCH_JSON);
	assert_int_equal(json_object_array_length(w.patch), 4);
	assert_true(eqj(patch_op_at(&w, 0),
	        "{'op':'test','path':'/metadata/resourceVersion',"
	        "'value':'77'}"));
	assert_true(eqj(patch_op_at(&w, 1),
	        "{'op':'test','path':'/metadata/ownerReferences',"
	        "'value':null}"));
	ref = jx_get(patch_op_at(&w, 2), "value");
	assert_str(patch_op_at(&w, 2), "path", "/metadata/ownerReferences");
	assert_true(eqj(ref,
	        "[{'apiVersion':'sympozium.ai/v1alpha1','kind':'PersonaPack',"
	        "'name':'my-team','uid':'u-pack','controller':true,"
	        "'blockOwnerDeletion':true}]"));
	assert_true(eqj(patch_op_at(&w, 3),
	        "{'op':'add','path':'/metadata/labels/sympozium.ai~1persona-"
	        "pack','value':'my-team'}"));
	i = find(&r, IPC_OP_PATCH, "my-team-triager-schedule");
	assert_true(i >= 0);
	w = fakesup_write(&r, (size_t)i);
	assert_string_equal(w.res.plural, "sympoziumschedules");
	assert_true(eqj(patch_op_at(&w, 3),
	        "{'op':'add','path':'/metadata/labels',"
	        "'value':{'sympozium.ai/persona-pack':'my-team'}}"));
	st = status_of(&r);
	assert_str(st, "phase", "Ready");
	assert_int_equal(int_at(st, "installedCount"), 2);
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* An object of a stamp's name that another owner controls (or that has
 * owner references of others): the persona is not installed, phase Error
 * with a Ready condition, backoff; once fixed the condition goes. */
static void
test_name_conflict(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *st, *c;
	struct fakesup_run r;

	store_put(f, "sympoziuminstances/my-team-reviewer",
	        J("{'metadata':{'name':'my-team-reviewer','uid':'u-r',"
	          "'resourceVersion':'5','ownerReferences':[{'apiVersion':"
	          "'v1','kind':'ConfigMap','name':'c','uid':'u-c'}]}}"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_ERROR);
	assert_int_equal(find(&r, IPC_OP_PATCH, "my-team-reviewer"), -1);
	assert_int_equal(find(&r, IPC_OP_CREATE, "my-team-reviewer"), -1);
	fakesup_run_fini(&r);
	fakesup_remove(f, "sympoziuminstances", NULL, "my-team-reviewer");

	store_put(f, "sympoziuminstances/my-team-triager",
	        J("{'metadata':{'name':'my-team-triager','uid':'u-user',"
	          "'resourceVersion':'5','ownerReferences':[{'apiVersion':"
	          "'sympozium.ai/v1alpha1','kind':'PersonaPack','name':"
	          "'other','uid':'u-other','controller':true}]}}"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_ERROR);
	assert_int_equal(find(&r, IPC_OP_CREATE, "my-team-triager"), -1);
	assert_int_equal(find(&r, IPC_OP_PATCH, "my-team-triager"), -1);
	assert_int_equal(
	        find(&r, IPC_OP_CREATE, "my-team-triager-schedule"), -1);
	assert_true(find(&r, IPC_OP_CREATE, "my-team-reviewer") >= 0);
	st = status_of(&r);
	assert_str(st, "phase", "Error");
	assert_int_equal(int_at(st, "installedCount"), 1);
	c = json_object_array_get_idx(jx_get(st, "conditions"), 0);
	assert_str(c, "type", "Ready");
	assert_str(c, "status", "False");
	assert_str(c, "reason", "NameConflict");
	assert_str(c, "message",
	        "SympoziumInstance my-team-triager exists and is not "
	        "controlled by PersonaPack my-team");
	assert_str(c, "lastTransitionTime", "2026-01-01T00:00:00Z");
	assert_int_equal(int_at(c, "observedGeneration"), 3);

	/* still failing an hour later: same status, no write */
	json_object_object_add(pack, "status", json_object_get(st));
	fakesup_run_fini(&r);
	run(f, pack, NULL, &r);
	assert_int_equal(find(&r, IPC_OP_UPDATE_STATUS, "my-team"), -1);
	fakesup_run_fini(&r);

	/* the user's object goes: Ready, the condition is removed */
	fakesup_remove(f, "sympoziuminstances", NULL, "my-team-triager");
	set(pack, "status.conditions",
	        "[{'type':'Other','status':'True'},{'type':'Ready',"
	        "'status':'False','reason':'NameConflict','message':'x',"
	        "'lastTransitionTime':'2025-01-01T00:00:00Z'}]");
	run(f, pack, NULL, &r);
	st = status_of(&r);
	assert_str(st, "phase", "Ready");
	assert_true(eqj(jx_get(st, "conditions"),
	        "[{'type':'Other','status':'True'}]"));
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Invalid and duplicate persona names, over-long instance names: Error,
 * no write for them, no backoff (a spec change fixes it). */
static void
test_invalid_personas(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *st;
	struct fakesup_run r;
	size_t n;

	set(pack, "spec.personas",
	        "[{'name':'ok','systemPrompt':'p'},{'name':'Bad_Name'},"
	        "{'name':'ok','systemPrompt':'q'},{'name':''},7,"
	        "{'name':'a-very-long-persona-name-that-will-not-fit-in-63-at-"
	        "all-"
	        "chars'}]");
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	n = r.r.nwrites;
	assert_int_equal(n, 3);
	evtest_assert(r.result, 2, "my-team", "Warning", "InvalidPersona",
	        "Bad_Name");
	assert_write(&r, 0, IPC_OP_CREATE, "sympoziuminstances", "my-team-ok");
	st = status_of(&r);
	assert_str(st, "phase", "Error");
	assert_int_equal(int_at(st, "personaCount"), 6);
	assert_int_equal(int_at(st, "installedCount"), 1);
	assert_str(json_object_array_get_idx(jx_get(st, "conditions"), 0),
	        "reason", "InvalidPersona");
	assert_non_null(strstr(jx_get_str(json_object_array_get_idx(
	                                          jx_get(st, "conditions"), 0),
	                               "message"),
	        "persona ok is listed more than once"));
	assert_non_null(strstr(r.r.message, "Bad_Name"));
	assert_non_null(strstr(r.r.message, "personas[4] is not an object"));
	assert_non_null(strstr(r.r.message, "longer than 63"));
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Seeds: an existing ConfigMap (the instance controller won) is left
 * alone; a read error is only logged. */
static void
test_seeds_existing_or_unreadable(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team();
	struct fakesup_run r;

	store_put(f, "configmaps/my-team-reviewer-memory",
	        J("{'metadata':{'name':'my-team-reviewer-memory',"
	          "'ownerReferences':[{'uid':'u-pack','controller':true}]}}"));
	run(f, pack, NULL, &r);
	assert_int_equal(
	        find(&r, IPC_OP_CREATE, "my-team-reviewer-memory"), -1);
	fakesup_run_fini(&r);
	store_put(f, "configmaps/my-team-reviewer-memory", J("'error'"));
	run(f, pack, NULL, &r);
	assert_int_equal(
	        find(&r, IPC_OP_CREATE, "my-team-reviewer-memory"), -1);
	assert_str(status_of(&r), "phase", "Ready");
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Skills and channel extras of buildInstance. */
static void
test_build_extras(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *o;
	struct fakesup_run r;

	set(pack, "spec.personas",
	        "[{'name':'web','systemPrompt':'p','model':'m1',"
	        "'skills':['mcp-bridge','memory','code-review'],"
	        "'webEndpoint':{'enabled':true,'hostname':'h.example'},"
	        "'lifecycle':{'preRun':[]},'channels':['slack','telegram']},"
	        "{'name':'web2','systemPrompt':'p','webEndpoint':"
	        "{'enabled':true}}]");
	set(pack, "spec.channelAccessControl",
	        "{'telegram':{'allowedChats':['1']}}");
	set(pack, "spec.agentSandbox", "{'enabled':true}");
	set(pack, "spec.skillParams", "{'code-review':{},'memory':{'a':'b'}}");
	run(f, pack, NULL, &r);
	o = fakesup_write(&r, (size_t)find(&r, IPC_OP_CREATE, "my-team-web"))
	            .object;
	assert_true(eqj(jx_get(o, "spec.skills"),
	        "[{'skillPackRef':'memory','params':{'a':'b'}},"
	        "{'skillPackRef':'code-review'},{'skillPackRef':"
	        "'web-endpoint','params':{'hostname':'h.example'}}]"));
	assert_true(eqj(jx_get(o, "spec.channels"),
	        "[{'type':'slack','configRef':{'secret':'my-team-slack'}},"
	        "{'type':'telegram','accessControl':"
	        "{'allowedChats':['1']}}]"));
	assert_str(o, "spec.agents.default.model", "m1");
	assert_true(eqj(jx_get(o, "spec.agents.default.agentSandbox"),
	        "{'enabled':true}"));
	assert_true(eqj(
	        jx_get(o, "spec.agents.default.lifecycle"), "{'preRun':[]}"));
	o = fakesup_write(&r, (size_t)find(&r, IPC_OP_CREATE, "my-team-web2"))
	            .object;
	assert_true(eqj(jx_get(o, "spec.skills"),
	        "[{'skillPackRef':'memory'},{'skillPackRef':'web-endpoint'}"
	        "]"));
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Disabled with stamps left: every controlled instance and schedule is
 * deleted (a persona removed from the list too), seed ConfigMaps of the
 * listed personas too, and the pass comes back in 2 s without status. */
static void
test_disabled_teardown(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *children;
	struct fakesup_run r;

	set(pack, "spec.enabled", "false");
	children = J("[{'kind':'SympoziumInstance','metadata':{'name':"
	             "'my-team-reviewer'}},{'kind':'SympoziumInstance',"
	             "'metadata':{'name':'my-team-gone'}},"
	             "{'kind':'SympoziumSchedule','metadata':{'name':"
	             "'my-team-reviewer-schedule','deletionTimestamp':'x'}}]");
	store_put(f, "configmaps/my-team-reviewer-memory",
	        J("{'metadata':{'name':'my-team-reviewer-memory',"
	          "'ownerReferences':[{'uid':'u-pack','controller':true}]}}"));
	run(f, pack, children, &r);
	assert_int_equal(r.r.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(r.r.after_ms, 2000);
	assert_int_equal(r.r.nwrites, 3);
	assert_write(&r, 0, IPC_OP_DELETE, "sympoziuminstances",
	        "my-team-reviewer");
	assert_write(
	        &r, 1, IPC_OP_DELETE, "sympoziuminstances", "my-team-gone");
	assert_write(
	        &r, 2, IPC_OP_DELETE, "configmaps", "my-team-reviewer-memory");
	assert_true(
	        fakesup_was_read(f, "configmaps", "my-team-triager-memory"));
	fakesup_run_fini(&r);
	json_object_put(children);
	json_object_put(pack);
}

/* Disabled, nothing left: managed auth Secrets are deleted, authRefs
 * cleared; the next pass writes Inactive; the one after writes nothing. */
static void
test_disabled_secrets(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team();
	struct fakesup_run r;

	set(pack, "spec.enabled", "false");
	set(pack, "spec.authRefs",
	        "[{'secret':'my-team-openai-key'},{'secret':'my-team-"
	        "credentials'},"
	        "{'secret':'labelled'},{'secret':'shared-openai'},"
	        "{'secret':'my-team-openai-key'},{'secret':'absent-key'},"
	        "{'secret':'my-team-key'},{'secret':''}]");
	store_put(f, "secrets/my-team-openai-key",
	        J("{'metadata':{'name':'my-team-openai-key'},'keys':['k']}"));
	store_put(f, "secrets/my-team-credentials",
	        J("{'metadata':{'name':'my-team-credentials'}}"));
	store_put(f, "secrets/labelled",
	        J("{'metadata':{'name':'labelled','labels':"
	          "{'sympozium.ai/persona-pack':'my-team'}}}"));
	store_put(f, "secrets/shared-openai",
	        J("{'metadata':{'name':'shared-openai','labels':"
	          "{'sympozium.ai/persona-pack':'other'}}}"));
	store_put(f, "secrets/my-team-key",
	        J("{'metadata':{'name':'my-team-key'}}"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 5);
	assert_write(&r, 0, IPC_OP_DELETE, "secrets", "my-team-openai-key");
	assert_write(&r, 1, IPC_OP_DELETE, "secrets", "my-team-credentials");
	assert_write(&r, 2, IPC_OP_DELETE, "secrets", "labelled");
	assert_write(&r, 3, IPC_OP_DELETE, "secrets", "my-team-key");
	assert_int_equal(fakesup_write(&r, 3).tolerate, IPC_TOL_NOT_FOUND);
	assert_write(&r, 4, IPC_OP_PATCH, "personapacks", "my-team");
	assert_true(
	        eqj(fakesup_write(&r, 4).patch, "{'spec':{'authRefs':null}}"));
	assert_true(fakesup_was_read(f, "secrets", "absent-key"));
	fakesup_run_fini(&r);

	set(pack, "spec.authRefs", NULL);
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.nwrites, 1);
	assert_true(
	        eqj(status_of(&r), "{'phase':'Inactive','personaCount':2}"));
	json_object_object_add(pack, "status", json_object_get(status_of(&r)));
	fakesup_run_fini(&r);
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.nwrites, 0);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* A Secret that cannot be read: authRefs stay (retried with backoff). */
static void
test_disabled_secret_error(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team();
	struct fakesup_run r;

	set(pack, "spec.enabled", "false");
	set(pack, "status", "{'phase':'Ready','installedPersonas':[{}]}");
	store_put(f, "secrets/my-team-openai-key", J("'error'"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_ERROR);
	assert_int_equal(find(&r, IPC_OP_PATCH, "my-team"), -1);
	assert_str(status_of(&r), "phase", "Inactive");
	assert_null(jx_get(status_of(&r), "installedPersonas"));
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Deletion: seed ConfigMaps that exist go, then the finalizer. */
static void
test_deletion(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team();
	struct fakesup_run r;

	set(pack, "metadata.deletionTimestamp", "'2026-01-01T00:00:00Z'");
	set(pack, "metadata.finalizers",
	        "['a','sympozium.ai/personapack-finalizer']");
	store_put(f, "configmaps/my-team-triager-memory",
	        J("{'metadata':{'name':'my-team-triager-memory',"
	          "'ownerReferences':[{'uid':'u-pack','controller':true}]}}"));
	/* one of that name the pack does not control is left alone */
	store_put(f, "configmaps/my-team-reviewer-memory",
	        J("{'metadata':{'name':'my-team-reviewer-memory'}}"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	assert_int_equal(r.r.nwrites, 2);
	assert_write(
	        &r, 0, IPC_OP_DELETE, "configmaps", "my-team-triager-memory");
	assert_write(&r, 1, IPC_OP_PATCH, "personapacks", "my-team");
	assert_true(eqj(fakesup_write(&r, 1).patch,
	        "{'metadata':{'finalizers':['a'],'resourceVersion':'10'}}"));
	assert_int_equal(fakesup_write(&r, 1).tolerate,
	        IPC_TOL_CONFLICT | IPC_TOL_NOT_FOUND);
	fakesup_run_fini(&r);

	/* the last finalizer: the key is removed */
	set(pack, "metadata.finalizers",
	        "['sympozium.ai/personapack-finalizer']");
	run(f, pack, NULL, &r);
	assert_true(eqj(fakesup_write(&r, 1).patch,
	        "{'metadata':{'finalizers':null,'resourceVersion':'10'}}"));
	fakesup_run_fini(&r);

	/* a ConfigMap read error keeps the finalizer */
	store_put(f, "configmaps/my-team-reviewer-memory", J("'error'"));
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.verdict, IPC_V_ERROR);
	assert_int_equal(r.r.nwrites, 0);
	fakesup_run_fini(&r);

	/* our finalizer already gone: nothing to do */
	set(pack, "metadata.finalizers", "['a']");
	run(f, pack, NULL, &r);
	assert_int_equal(r.r.nwrites, 0);
	assert_int_equal(r.r.verdict, IPC_V_DONE);
	fakesup_run_fini(&r);
	json_object_put(pack);
}

/* Terminating stamps are not updated; a pack without spec is Inactive
 * with no persona. */
static void
test_terminating_and_empty(void **state)
{
	struct fakesup *f = *state;
	json_object *pack = my_team(), *children;
	struct fakesup_run r1, r2;

	run(f, pack, NULL, &r1);
	children = children_from(&r1, "sympoziuminstances");
	set(json_object_array_get_idx(children, 0),
	        "metadata.deletionTimestamp", "'x'");
	set(json_object_array_get_idx(children, 0), "spec.authRefs", "[]");
	run(f, pack, children, &r2);
	assert_int_equal(find(&r2, IPC_OP_UPDATE, "my-team-reviewer"), -1);
	assert_int_equal(find(&r2, IPC_OP_CREATE, "my-team-reviewer"), -1);
	fakesup_run_fini(&r1);
	fakesup_run_fini(&r2);
	json_object_put(children);

	json_object_object_del(pack, "spec");
	run(f, pack, NULL, &r1);
	assert_true(eqj(status_of(&r1), "{'phase':'Inactive'}"));
	fakesup_run_fini(&r1);
	json_object_put(pack);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cron),
		cmocka_unit_test(test_gone),
#define T(fn)                                                                 \
	cmocka_unit_test_setup_teardown(fn, fakesup_setup, fakesup_teardown)
		T(test_stamp_my_team),
		T(test_idempotent),
		T(test_upstream_converged),
		T(test_finalizer_added),
		T(test_developer_team),
		T(test_sync_instance),
		T(test_sync_schedule),
		T(test_stale_children),
		T(test_adopt_orphans),
		T(test_name_conflict),
		T(test_invalid_personas),
		T(test_seeds_existing_or_unreadable),
		T(test_build_extras),
		T(test_disabled_teardown),
		T(test_disabled_secrets),
		T(test_disabled_secret_error),
		T(test_deletion),
		T(test_terminating_and_empty),
#undef T
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
