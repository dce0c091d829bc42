/*
 * test_schedule.c: the SympoziumSchedule reconciler, JSON in and writes and
 * verdict out, with a fake supervisor end answering view requests from an
 * in-test world of objects: gone and deleted objects, the finalizer,
 * suspend, invalid cron, not due, first fire (creation - 24 h), the run
 * (labels, owner, spec, memory prefix), Forbid/Allow/Replace, the serving
 * guard, a missing instance, orphan-aware and collision-free numbering,
 * one catch-up run after downtime, stale status repaired from the owned
 * runs, CRON_TZ, names too long for labels, view errors, no-op status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "tests/lib/evtest.h"
#include "tests/lib/fakesup.h"
#include "workers/cron.h"
#include "workers/kobj.h"
#include "workers/schedule.h"
#include "workers/zonecache.h"

/* ---- the fake supervisor end ---- */

static const char *
plural_of(const char *kind)
{
	if (strcmp(kind, "AgentRun") == 0) {
		return ("agentruns");
	}
	if (strcmp(kind, "ConfigMap") == 0) {
		return ("configmaps");
	}
	if (strcmp(kind, "SympoziumInstance") == 0) {
		return ("sympoziuminstances");
	}
	return ("?");
}

/* Adds an object the views answer from, its plural from its kind. */
static void
world(struct fakesup *f, const char *json)
{
	json_object *o = json_tokener_parse(json);

	assert_non_null(o);
	fakesup_add(f, plural_of(jx_get_str(o, "kind")), kobj_ns(o),
	        kobj_name(o), o);
}

/* ---- driving the reconciler ---- */

static int64_t
at(const char *rfc3339)
{
	int64_t us;

	assert_int_equal(timefmt_parse(rfc3339, &us), 0);
	return (us / 1000);
}

/* Runs the reconciler on obj (taken) at now. */
static void
run(struct fakesup *f, json_object *obj, json_object *children,
        const char *now, struct fakesup_run *o)
{
	fakesup_run(&schedule_reconciler, f, "default/x", obj, children,
	        at(now), o);
	json_object_put(children);
	json_object_put(obj);
}

static size_t
nwrites(const struct fakesup_run *o)
{
	return (o->writes != NULL ? json_object_array_length(o->writes) : 0);
}

static json_object *
write_at(const struct fakesup_run *o, size_t i, const char *op)
{
	json_object *w;

	assert_true(i < nwrites(o));
	w = json_object_array_get_idx(o->writes, i);
	assert_string_equal(jx_get_str(w, "op"), op);
	return (w);
}

/* The status of an update_status write. */
static json_object *
status_of(const struct fakesup_run *o, size_t i)
{
	json_object *w = write_at(o, i, "update_status");

	assert_string_equal(
	        jx_get_str(w, "resource.plural"), "sympoziumschedules");
	return (jx_get(w, "object.status"));
}

static const char base_json[]
        = "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
          "\"kind\":\"SympoziumSchedule\",\"metadata\":{"
          "\"name\":\"alice-heartbeat\",\"namespace\":\"default\","
          "\"uid\":\"uid-s\",\"resourceVersion\":\"42\","
          "\"creationTimestamp\":\"2026-06-15T10:30:00Z\","
          "\"finalizers\":[\"sympozium.ai/schedule-finalizer\"]},"
          "\"spec\":{\"instanceRef\":\"alice\",\"schedule\":\"0 * * * *\","
          "\"task\":\"Check in.\",\"type\":\"heartbeat\","
          "\"concurrencyPolicy\":\"Forbid\",\"includeMemory\":true}}";

static json_object *
base(void)
{
	return (json_tokener_parse(base_json));
}

static void
set(json_object *o, const char *path, const char *json)
{
	json_object *v = json_tokener_parse(json);

	if (jx_set_path(o, path, v) != 0) {
		json_object_put(v);
		fail_msg("cannot set %s", path);
	}
}

static void
instance_and_memory(struct fakesup *f)
{
	world(f,
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
	        "\"kind\":\"SympoziumInstance\",\"metadata\":{\"name\":"
	        "\"alice\",\"namespace\":\"default\"},\"spec\":{"
	        "\"authRefs\":[{\"secret\":\"alice-anthropic-key\"}],"
	        "\"imagePullSecrets\":[{\"name\":\"regcred\"}],"
	        "\"agents\":{\"default\":{\"model\":\"claude-x\","
	        "\"baseURL\":\"\",\"thinking\":\"high\","
	        "\"lifecycle\":{\"preRun\":[{\"name\":\"p\"}]}}},"
	        "\"skills\":[{\"skillPackRef\":\"k8s-ops\"},"
	        "{\"skillPackRef\":\"web-endpoint\"},"
	        "{\"skillPackRef\":\"skillpack-web-endpoint\"},"
	        "{\"configMapRef\":\"extra\",\"params\":{\"A\":\"1\"}}]}}");
	world(f,
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	        "{\"name\":\"alice-memory\",\"namespace\":\"default\"},"
	        "\"data\":{\"MEMORY.md\":\"# Agent Memory\\n\"}}");
}

static void
run_in_world(struct fakesup *f, const char *name, const char *phase)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
	        "\"default\",\"labels\":{\"sympozium.ai/instance\":\"alice\","
	        "\"sympozium.ai/schedule\":\"alice-heartbeat\"}}%s%s%s}",
	        name, phase != NULL ? ",\"status\":{\"phase\":\"" : "",
	        phase != NULL ? phase : "", phase != NULL ? "\"}" : "");
	world(f, buf);
}

/* ---- tests ---- */

static void
test_gone_and_deleted(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base();

	run(f, NULL, NULL, "2026-06-15T10:30:00Z", &o);
	assert_int_equal(o.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&o), 0);
	fakesup_run_fini(&o);

	set(s, "metadata.deletionTimestamp", "\"2026-06-15T10:31:00Z\"");
	set(s, "metadata.finalizers",
	        "[\"other\",\"sympozium.ai/schedule-finalizer\"]");
	run(f, s, NULL, "2026-06-15T10:31:00Z", &o);
	assert_int_equal(o.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&o), 1);
	json_object *w = write_at(&o, 0, "patch");
	assert_string_equal(jx_get_str(w, "patchType"), "merge");
	assert_int_equal(json_object_array_length(
	                         jx_get(w, "patch.metadata.finalizers")),
	        1);
	assert_string_equal(
	        jx_get_str(w, "patch.metadata.resourceVersion"), "42");
	fakesup_run_fini(&o);

	s = base();
	set(s, "metadata.deletionTimestamp", "\"2026-06-15T10:31:00Z\"");
	set(s, "metadata.finalizers", "[]");
	run(f, s, NULL, "2026-06-15T10:31:00Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(fakesup_nreqs(f), 0);
	fakesup_run_fini(&o);
}

/* A new schedule: the finalizer patch alone (its watch event brings the
 * next pass); then, with the finalizer, no tick within the last 24 h: it
 * waits. */
static void
test_finalizer_not_due(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base(), *st;

	jx_strip(s, "metadata.finalizers");
	set(s, "spec.schedule", "\"0 0 1 1 *\"");
	run(f, s, NULL, "2026-06-15T10:30:05Z", &o);
	assert_int_equal(nwrites(&o), 1);
	json_object *w = write_at(&o, 0, "patch");
	assert_string_equal(
	        json_object_get_string(json_object_array_get_idx(
	                jx_get(w, "patch.metadata.finalizers"), 0)),
	        CONTRACT_FINALIZER_SCHEDULE);
	assert_int_equal(o.verdict, IPC_V_DONE);
	assert_int_equal(fakesup_nreqs(f), 0);
	fakesup_run_fini(&o);

	s = base();
	set(s, "spec.schedule", "\"0 0 1 1 *\"");
	run(f, s, NULL, "2026-06-15T10:30:05Z", &o);
	assert_int_equal(nwrites(&o), 1);
	st = status_of(&o, 0);
	assert_string_equal(jx_get_str(st, "phase"), "Active");
	assert_string_equal(
	        jx_get_str(st, "nextRunTime"), "2027-01-01T00:00:00Z");
	assert_null(jx_get(st, "lastRunTime"));
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);

	/* Feb 29 only: the next one is in 2028 */
	s = base();
	set(s, "spec.schedule", "\"0 0 29 2 *\"");
	run(f, s, NULL, "2026-06-15T10:30:05Z", &o);
	assert_string_equal(jx_get_str(status_of(&o, 0), "nextRunTime"),
	        "2028-02-29T00:00:00Z");
	fakesup_run_fini(&o);
}

/* Not due: the delay is the time to the tick when under a minute, and an
 * unchanged status is not written. */
static void
test_not_due_noop(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base();

	set(s, "spec.schedule", "\"*/5 * * * *\"");
	set(s, "status",
	        "{\"phase\":\"Active\",\"lastRunTime\":"
	        "\"2026-06-15T10:00:00Z\",\"nextRunTime\":"
	        "\"2026-06-15T10:05:00Z\",\"lastRunName\":"
	        "\"alice-heartbeat-1\",\"totalRuns\":1}");
	run(f, s, NULL, "2026-06-15T10:04:30Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 30000);
	fakesup_run_fini(&o);
}

static void
test_suspended(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base();

	set(s, "spec.suspend", "true");
	set(s, "status",
	        "{\"phase\":\"Active\",\"nextRunTime\":"
	        "\"2026-06-15T11:00:00Z\"}");
	run(f, s, NULL, "2026-06-15T12:00:00Z", &o);
	assert_int_equal(nwrites(&o), 1);
	json_object *st = status_of(&o, 0);
	assert_string_equal(jx_get_str(st, "phase"), "Suspended");
	assert_string_equal(
	        jx_get_str(st, "nextRunTime"), "2026-06-15T11:00:00Z");
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);

	s = base();
	set(s, "spec.suspend", "true");
	set(s, "status", "{\"phase\":\"Suspended\"}");
	run(f, s, NULL, "2026-06-15T12:00:00Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(o.after_ms, 60000);
	assert_int_equal(fakesup_nreqs(f), 0);
	fakesup_run_fini(&o);
}

static void
test_invalid_cron(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base(), *st, *c;
	const char *bad[] = { "@hourly", "0 * * *", "* * * * 7",
		"CRON_TZ=Nowhere/City 0 * * * *", "" };

	set(s, "spec.schedule", "\"61 * * * *\"");
	run(f, s, NULL, "2026-06-15T12:00:00Z", &o);
	assert_int_equal(o.verdict, IPC_V_DONE);
	assert_int_equal(nwrites(&o), 2);
	evtest_assert(o.result, 1, "alice-heartbeat", "Warning",
	        "InvalidSchedule", "61 * * * *");
	st = status_of(&o, 0);
	assert_string_equal(jx_get_str(st, "phase"), "Error");
	c = json_object_array_get_idx(jx_get(st, "conditions"), 0);
	assert_string_equal(jx_get_str(c, "type"), "Ready");
	assert_string_equal(jx_get_str(c, "status"), "False");
	assert_string_equal(jx_get_str(c, "reason"), "InvalidSchedule");
	assert_non_null(strstr(jx_get_str(c, "message"), "61 * * * *"));
	assert_non_null(strstr(jx_get_str(c, "message"), "above maximum"));
	assert_string_equal(
	        jx_get_str(c, "lastTransitionTime"), "2026-06-15T12:00:00Z");

	/* the same again: nothing to write (the transition time stays) */
	s = base();
	set(s, "spec.schedule", "\"61 * * * *\"");
	json_object_object_add(s, "status", json_object_get(st));
	fakesup_run_fini(&o);
	run(f, s, NULL, "2026-06-15T12:10:00Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(o.verdict, IPC_V_DONE);
	fakesup_run_fini(&o);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = base();
		jx_set_path(
		        s, "spec.schedule", json_object_new_string(bad[i]));
		run(f, s, NULL, "2026-06-15T12:00:00Z", &o);
		assert_string_equal(
		        jx_get_str(status_of(&o, 0), "phase"), "Error");
		assert_int_equal(o.verdict, IPC_V_DONE);
		fakesup_run_fini(&o);
	}
	/* only the unknown zone was asked for (a sandboxed worker cannot
	 * open the zone file: the supervisor answers) */
	assert_int_equal(fakesup_nreqs(f), 1);
	assert_string_equal(fakesup_log(f), "zone - /Nowhere/City\n");
}

/* The first fire of a new hourly schedule (a tick within the 24 h before
 * creation), the run it creates, and the status after. */
static void
test_first_fire(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *run_, *st;

	instance_and_memory(f);
	run(f, base(), NULL, "2026-06-15T10:30:02.500Z", &o);
	assert_int_equal(nwrites(&o), 2);
	json_object *w = write_at(&o, 0, "create");
	assert_string_equal(jx_get_str(w, "resource.plural"), "agentruns");
	assert_null(jx_get(w, "tolerate"));
	run_ = jx_get(w, "object");
	assert_string_equal(kobj_name(run_), "alice-heartbeat-1");
	assert_string_equal(kobj_ns(run_), "default");
	assert_string_equal(
	        kobj_label(run_, "sympozium.ai/instance"), "alice");
	assert_string_equal(
	        kobj_label(run_, "sympozium.ai/schedule"), "alice-heartbeat");
	assert_string_equal(
	        kobj_label(run_, "sympozium.ai/type"), "heartbeat");
	json_object *ref = json_object_array_get_idx(
	        jx_get(run_, "metadata.ownerReferences"), 0);
	assert_string_equal(jx_get_str(ref, "kind"), "SympoziumSchedule");
	assert_string_equal(jx_get_str(ref, "uid"), "uid-s");
	assert_string_equal(jx_get_str(run_, "spec.instanceRef"), "alice");
	assert_string_equal(
	        jx_get_str(run_, "spec.agentId"), "schedule-alice-heartbeat");
	assert_string_equal(jx_get_str(run_, "spec.sessionKey"), "");
	assert_null(jx_get(run_, "spec.systemPrompt"));
	assert_null(jx_get(run_, "spec.timeout"));
	assert_null(jx_get(run_, "spec.mode"));
	assert_string_equal(jx_get_str(run_, "spec.task"),
	        "## Memory Context\n# Agent Memory\n\n\n## Task\nCheck in.");
	assert_string_equal(
	        jx_get_str(run_, "spec.model.provider"), "anthropic");
	assert_string_equal(jx_get_str(run_, "spec.model.model"), "claude-x");
	assert_string_equal(jx_get_str(run_, "spec.model.thinking"), "high");
	assert_null(jx_get(run_, "spec.model.baseURL"));
	assert_null(jx_get(run_, "spec.model.nodeSelector"));
	assert_string_equal(jx_get_str(run_, "spec.model.authSecretRef"),
	        "alice-anthropic-key");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(
	                           jx_get(run_, "spec.imagePullSecrets"), 0),
	                "name"),
	        "regcred");
	assert_non_null(jx_get(run_, "spec.lifecycle.preRun"));
	json_object *sk = jx_get(run_, "spec.skills");
	assert_int_equal(json_object_array_length(sk), 2);
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(sk, 0), "skillPackRef"),
	        "k8s-ops");
	assert_string_equal(
	        jx_get_str(json_object_array_get_idx(sk, 1), "params.A"), "1");

	st = status_of(&o, 1);
	assert_string_equal(jx_get_str(st, "phase"), "Active");
	assert_string_equal(
	        jx_get_str(st, "lastRunTime"), "2026-06-15T10:30:02Z");
	assert_string_equal(
	        jx_get_str(st, "lastRunName"), "alice-heartbeat-1");
	assert_string_equal(
	        jx_get_str(st, "nextRunTime"), "2026-06-15T11:00:00Z");
	int64_t total = 0;
	assert_int_equal(jx_get_int(st, "totalRuns", &total), 0);
	assert_int_equal(total, 1);
	assert_string_equal(jx_get_str(json_object_array_get_idx(o.writes, 1),
	                            "object.metadata.resourceVersion"),
	        "42");
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);
}

/* includeMemory false, an empty memory, a missing memory ConfigMap, and
 * the default type. */
static void
test_task_text(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base();

	instance_and_memory(f);
	set(s, "spec.includeMemory", "false");
	jx_strip(s, "spec.type");
	run(f, s, NULL, "2026-06-15T10:30:02Z", &o);
	json_object *r = jx_get(write_at(&o, 0, "create"), "object");
	assert_string_equal(jx_get_str(r, "spec.task"), "Check in.");
	assert_string_equal(kobj_label(r, "sympozium.ai/type"), "scheduled");
	fakesup_run_fini(&o);

	fakesup_remove(f, "configmaps", "default", "alice-memory");
	world(f,
	        "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
	        "\"alice-memory\",\"namespace\":\"default\"},"
	        "\"data\":{\"MEMORY.md\":\"\"}}");
	run(f, base(), NULL, "2026-06-15T10:30:02Z", &o);
	r = jx_get(write_at(&o, 0, "create"), "object");
	assert_string_equal(jx_get_str(r, "spec.task"), "Check in.");
	fakesup_run_fini(&o);

	fakesup_remove(f, "configmaps", "default", "alice-memory");
	run(f, base(), NULL, "2026-06-15T10:30:02Z", &o);
	r = jx_get(write_at(&o, 0, "create"), "object");
	assert_string_equal(jx_get_str(r, "spec.task"), "Check in.");
	fakesup_run_fini(&o);
}

static json_object *
after_run(const char *policy)
{
	json_object *s = base();

	jx_set_path(
	        s, "spec.concurrencyPolicy", json_object_new_string(policy));
	set(s, "status",
	        "{\"phase\":\"Active\",\"lastRunTime\":"
	        "\"2026-06-15T10:00:00Z\",\"nextRunTime\":"
	        "\"2026-06-15T11:00:00Z\",\"lastRunName\":"
	        "\"alice-heartbeat-1\",\"totalRuns\":1}");
	return (s);
}

/* Forbid waits while the last run is Running, Pending, Serving or has no
 * phase; PostRunning, finished and deleted runs do not block. */
static void
test_forbid(void **state)
{
	struct fakesup *f = *state;
	static const struct {
		const char *phase; /* NULL: the run is gone */
		bool blocks;
	} cases[] = {
		{ "Running", true },
		{ "Pending", true },
		{ "Serving", true },
		{ "", true },
		{ "PostRunning", false },
		{ "AwaitingDelegate", false },
		{ "Succeeded", false },
		{ "Failed", false },
		{ NULL, false },
	};
	struct fakesup_run o;

	instance_and_memory(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].phase != NULL) {
			run_in_world(f, "alice-heartbeat-1",
			        cases[i].phase[0] ? cases[i].phase : NULL);
		}
		run(f, after_run("Forbid"), NULL, "2026-06-15T11:00:10Z", &o);
		if (cases[i].blocks) {
			assert_int_equal(nwrites(&o), 0);
			assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
			assert_int_equal(o.after_ms, 30000);
		} else {
			json_object *r
			        = jx_get(write_at(&o, 0, "create"), "object");
			assert_string_equal(kobj_name(r), "alice-heartbeat-2");
			assert_string_equal(
			        jx_get_str(status_of(&o, 1), "lastRunName"),
			        "alice-heartbeat-2");
			assert_int_equal(o.after_ms, 60000);
		}
		fakesup_run_fini(&o);
		if (cases[i].phase != NULL) {
			fakesup_remove(f, "agentruns", "default",
			        "alice-heartbeat-1");
		}
	}
}

/* Later upstream fix #239 (sympoziumschedule_controller.go Reconcile,
 * commit a419afe): Forbid lists the runs labelled sympozium.ai/schedule=
 * <schedule> and waits (30 s) while any of them is Running, Pending,
 * Serving or has no phase, whatever status.lastRunName says; a run of
 * another schedule does not count. */
static void
test_forbid_by_label(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s;

	instance_and_memory(f);
	run_in_world(f, "alice-heartbeat-1", "Succeeded");
	run_in_world(f, "alice-heartbeat-7", "Running");
	run(f, after_run("Forbid"), NULL, "2026-06-15T11:00:10Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 30000);
	fakesup_run_fini(&o);

	/* no lastRunName at all: the list still finds the active run */
	s = after_run("Forbid");
	jx_strip(s, "status.lastRunName");
	run(f, s, NULL, "2026-06-15T11:00:10Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(o.after_ms, 30000);
	fakesup_run_fini(&o);
	fakesup_remove(f, "agentruns", "default", "alice-heartbeat-7");

	/* an active run of another schedule does not block */
	world(f,
	        "{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	        "\"AgentRun\",\"metadata\":{\"name\":\"bob-1\","
	        "\"namespace\":\"default\",\"labels\":{"
	        "\"sympozium.ai/instance\":\"alice\","
	        "\"sympozium.ai/schedule\":\"bob\"}},"
	        "\"status\":{\"phase\":\"Running\"}}");
	run(f, after_run("Forbid"), NULL, "2026-06-15T11:00:10Z", &o);
	assert_string_equal(
	        kobj_name(jx_get(write_at(&o, 0, "create"), "object")),
	        "alice-heartbeat-2");
	fakesup_run_fini(&o);
	fakesup_remove(f, "agentruns", "default", "bob-1");
	fakesup_remove(f, "agentruns", "default", "alice-heartbeat-1");
}

/* Later upstream fix #220 (sympoziumschedule_controller.go Reconcile,
 * commit a776f4d): a cron with no reachable date ("0 0 31 2 *") parks the
 * schedule: phase Active, nextRunTime cleared, no run, requeue 60 s; an
 * earlier Error condition of ours goes. */
static void
test_unreachable_cron(void **state)
{
	struct fakesup *f = *state;
	const char *never[]
	        = { "0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *" };
	struct fakesup_run o;
	json_object *s, *st;

	instance_and_memory(f);
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		s = after_run("Forbid");
		jx_set_path(
		        s, "spec.schedule", json_object_new_string(never[i]));
		set(s, "status.phase", "\"Error\"");
		set(s, "status.conditions",
		        "[{\"type\":\"Ready\",\"status\":\"False\","
		        "\"reason\":\"InvalidSchedule\",\"message\":\"x\","
		        "\"lastTransitionTime\":\"2026-06-15T10:00:00Z\"}]");
		run(f, s, NULL, "2026-06-15T11:00:10Z", &o);
		assert_int_equal(nwrites(&o), 1);
		st = status_of(&o, 0);
		assert_string_equal(jx_get_str(st, "phase"), "Active");
		assert_null(jx_get(st, "nextRunTime"));
		assert_int_equal(jx_array_len(jx_get(st, "conditions")), 0);
		assert_string_equal(
		        jx_get_str(st, "lastRunName"), "alice-heartbeat-1");
		assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
		assert_int_equal(o.after_ms, 60000);
		fakesup_run_fini(&o);
	}
	/* a new schedule (no status): parked too, never fired */
	s = base();
	jx_set_path(s, "spec.schedule", json_object_new_string("0 0 31 2 *"));
	run(f, s, NULL, "2026-06-15T10:30:02Z", &o);
	assert_int_equal(nwrites(&o), 1);
	st = status_of(&o, 0);
	assert_string_equal(jx_get_str(st, "phase"), "Active");
	assert_null(jx_get(st, "nextRunTime"));
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);
}

/* Later upstream fix #230 (sympoziumschedule_controller.go Reconcile,
 * api/v1alpha1 AgentConfig.ParseRunTimeout, commit 897c5f0): the run
 * carries spec.timeout from the instance's runTimeout when that parses as
 * a positive Go duration (metav1.Duration writes Duration.String); an
 * empty, invalid or non-positive one leaves it out. */
static void
test_run_timeout(void **state)
{
	struct fakesup *f = *state;
	static const struct {
		const char *rt, *want; /* want NULL: no spec.timeout */
	} cases[] = {
		{ "30m", "30m0s" },
		{ "90s", "1m30s" },
		{ "1h", "1h0m0s" },
		{ "", NULL },
		{ "ten minutes", NULL },
		{ "-5m", NULL },
		{ "0s", NULL },
	};
	struct fakesup_run o;
	char buf[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf),
		        "{\"apiVersion\":\"sympozium.ai/v1alpha1\","
		        "\"kind\":\"SympoziumInstance\",\"metadata\":{"
		        "\"name\":\"alice\",\"namespace\":\"default\"},"
		        "\"spec\":{\"agents\":{\"default\":{\"model\":"
		        "\"m\",\"runTimeout\":\"%s\"}}}}",
		        cases[i].rt);
		world(f, buf);
		run(f, base(), NULL, "2026-06-15T10:30:02Z", &o);
		json_object *r = jx_get(write_at(&o, 0, "create"), "object");
		if (cases[i].want != NULL) {
			assert_string_equal(
			        jx_get_str(r, "spec.timeout"), cases[i].want);
		} else {
			assert_null(jx_get(r, "spec.timeout"));
		}
		fakesup_run_fini(&o);
		fakesup_remove(f, "sympoziuminstances", "default", "alice");
	}
}

/* Allow and Replace create a run even while the last one is running (and
 * Replace deletes nothing). */
static void
test_allow_replace(void **state)
{
	struct fakesup *f = *state;
	const char *policies[] = { "Allow", "Replace" };
	struct fakesup_run o;

	instance_and_memory(f);
	run_in_world(f, "alice-heartbeat-1", "Running");
	for (size_t i = 0; i < 2; i++) {
		run(f, after_run(policies[i]), NULL, "2026-06-15T11:00:10Z",
		        &o);
		assert_int_equal(nwrites(&o), 2);
		assert_string_equal(
		        kobj_name(jx_get(write_at(&o, 0, "create"), "object")),
		        "alice-heartbeat-2");
		status_of(&o, 1);
		fakesup_run_fini(&o);
	}
}

static void
test_serving_guard(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;

	instance_and_memory(f);
	world(f,
	        "{\"kind\":\"AgentRun\",\"metadata\":{\"name\":\"web-1\","
	        "\"namespace\":\"default\",\"labels\":{"
	        "\"sympozium.ai/instance\":\"alice\"}},"
	        "\"status\":{\"phase\":\"Serving\"}}");
	run(f, after_run("Allow"), NULL, "2026-06-15T11:00:10Z", &o);
	assert_int_equal(nwrites(&o), 0);
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);
}

static void
test_instance_missing(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *st, *c;

	run(f, after_run("Allow"), NULL, "2026-06-15T11:00:10Z", &o);
	assert_int_equal(nwrites(&o), 2);
	evtest_assert(o.result, 1, "alice-heartbeat", "Warning",
	        "InstanceNotFound", "alice");
	st = status_of(&o, 0);
	assert_string_equal(jx_get_str(st, "phase"), "Error");
	c = json_object_array_get_idx(jx_get(st, "conditions"), 0);
	assert_string_equal(jx_get_str(c, "reason"), "InstanceNotFound");
	assert_non_null(strstr(jx_get_str(c, "message"), "\"alice\""));
	assert_string_equal(
	        jx_get_str(st, "lastRunName"), "alice-heartbeat-1");
	assert_int_equal(o.verdict, IPC_V_REQUEUE_AFTER);
	assert_int_equal(o.after_ms, 60000);

	/* the instance appears: Active again, the condition goes */
	json_object *s = after_run("Allow");
	json_object_object_add(s, "status", json_object_get(st));
	fakesup_run_fini(&o);
	instance_and_memory(f);
	run(f, s, NULL, "2026-06-15T11:01:10Z", &o);
	st = status_of(&o, 1);
	assert_string_equal(jx_get_str(st, "phase"), "Active");
	assert_int_equal(
	        json_object_array_length(jx_get(st, "conditions")), 0);
	fakesup_run_fini(&o);
}

/* N = max(totalRuns + 1, highest `<name>-<k>` + 1), other names ignored,
 * then past names already taken. */
static void
test_numbering(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *kids = json_object_new_array();

	instance_and_memory(f);
	run_in_world(f, "alice-heartbeat-7", "Succeeded");
	run_in_world(f, "alice-heartbeat-x", "Succeeded");
	run_in_world(f, "alice-heartbeat-", "Succeeded");
	run_in_world(f, "alice-heartbeat-3b", "Succeeded");
	run_in_world(f, "other-99", "Succeeded");
	/* owned but unlabelled, created before the last run */
	json_object_array_add(kids,
	        json_tokener_parse(
	                "{\"kind\":\"AgentRun\",\"metadata\":{\"name\":"
	                "\"alice-heartbeat-8\",\"creationTimestamp\":"
	                "\"2026-06-15T09:00:00Z\"}}"));
	run(f, after_run("Allow"), kids, "2026-06-15T11:00:10Z", &o);
	assert_string_equal(
	        kobj_name(jx_get(write_at(&o, 0, "create"), "object")),
	        "alice-heartbeat-9");
	int64_t total = 0;
	jx_get_int(status_of(&o, 1), "totalRuns", &total);
	assert_int_equal(total, 9);
	fakesup_run_fini(&o);

	/* totalRuns ahead of the names */
	json_object *s = after_run("Allow");
	set(s, "status.totalRuns", "20");
	run(f, s, NULL, "2026-06-15T11:00:10Z", &o);
	assert_string_equal(
	        kobj_name(jx_get(write_at(&o, 0, "create"), "object")),
	        "alice-heartbeat-21");
	fakesup_run_fini(&o);
}

/* Three days down: exactly one catch-up run, then the next tick from
 * now. */
static void
test_catch_up(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = after_run("Forbid"), *st;

	instance_and_memory(f);
	run(f, s, NULL, "2026-06-18T09:17:45Z", &o);
	assert_int_equal(nwrites(&o), 2);
	write_at(&o, 0, "create");
	st = status_of(&o, 1);
	assert_string_equal(
	        jx_get_str(st, "lastRunTime"), "2026-06-18T09:17:45Z");
	assert_string_equal(
	        jx_get_str(st, "nextRunTime"), "2026-06-18T10:00:00Z");
	fakesup_run_fini(&o);

	/* with that status the next reconcile waits */
	s = after_run("Allow");
	set(s, "status.lastRunTime", "\"2026-06-18T09:17:45Z\"");
	run(f, s, NULL, "2026-06-18T09:18:00Z", &o);
	assert_int_equal(nwrites(&o), 1);
	assert_string_equal(jx_get_str(status_of(&o, 0), "nextRunTime"),
	        "2026-06-18T10:00:00Z");
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);
}

/* The run was created but the status write is not in the cache: the owned
 * run stands for it and the tick is not fired twice. */
static void
test_stale_status(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *kids = json_object_new_array(), *st;

	instance_and_memory(f);
	run_in_world(f, "alice-heartbeat-2", NULL);
	json_object_array_add(kids,
	        json_tokener_parse(
	                "{\"kind\":\"AgentRun\",\"metadata\":{\"name\":"
	                "\"alice-heartbeat-2\",\"creationTimestamp\":"
	                "\"2026-06-15T11:00:11Z\"}}"));
	run(f, after_run("Allow"), kids, "2026-06-15T11:00:30Z", &o);
	assert_int_equal(nwrites(&o), 1);
	st = status_of(&o, 0);
	assert_string_equal(
	        jx_get_str(st, "lastRunName"), "alice-heartbeat-2");
	assert_string_equal(
	        jx_get_str(st, "lastRunTime"), "2026-06-15T11:00:11Z");
	assert_string_equal(
	        jx_get_str(st, "nextRunTime"), "2026-06-15T12:00:00Z");
	assert_int_equal(o.after_ms, 60000);
	fakesup_run_fini(&o);
}

/* The spec's second sample: CRON_TZ=Europe/London, weekdays 08:30. */
static void
test_cron_tz(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base();

	instance_and_memory(f);
	set(s, "metadata.name", "\"weekday-sweep\"");
	set(s, "metadata.creationTimestamp", "\"2026-03-27T12:00:00Z\"");
	set(s, "spec.schedule", "\"CRON_TZ=Europe/London 30 8 * * MON-FRI\"");
	set(s, "spec.type", "\"sweep\"");
	set(s, "spec.concurrencyPolicy", "\"Allow\"");
	set(s, "spec.includeMemory", "false");
	run(f, s, NULL, "2026-03-27T12:00:05Z", &o);
	json_object *r = jx_get(write_at(&o, 0, "create"), "object");
	assert_string_equal(kobj_name(r), "weekday-sweep-1");
	assert_string_equal(jx_get_str(r, "spec.task"), "Check in.");
	assert_string_equal(jx_get_str(status_of(&o, 1), "nextRunTime"),
	        "2026-03-30T07:30:00Z");
	fakesup_run_fini(&o);
}

static void
test_bad_names(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s = base(), *c;
	char name[64];

	instance_and_memory(f);
	memset(name, 'a', 62);
	name[62] = '\0';
	jx_set_path(s, "metadata.name", json_object_new_string(name));
	run(f, s, NULL, "2026-06-15T10:30:02Z", &o);
	assert_int_equal(nwrites(&o), 2);
	evtest_assert(o.result, 1, name, "Warning", "NameTooLong", NULL);
	c = json_object_array_get_idx(
	        jx_get(status_of(&o, 0), "conditions"), 0);
	assert_string_equal(jx_get_str(c, "reason"), "NameTooLong");
	assert_int_equal(o.verdict, IPC_V_DONE);
	fakesup_run_fini(&o);

	s = base();
	set(s, "spec.instanceRef", "\"\"");
	run(f, s, NULL, "2026-06-15T10:30:02Z", &o);
	c = json_object_array_get_idx(
	        jx_get(status_of(&o, 0), "conditions"), 0);
	assert_string_equal(jx_get_str(c, "reason"), "InvalidInstanceRef");
	fakesup_run_fini(&o);

	fakesup_clear_log(f);
	s = base();
	set(s, "spec.instanceRef", "\"a,b=c\"");
	run(f, s, NULL, "2026-06-15T10:30:02Z", &o);
	assert_string_equal(jx_get_str(status_of(&o, 0), "phase"), "Error");
	assert_int_equal(fakesup_nreqs(f), 0);
	fakesup_run_fini(&o);
}

/* A view that fails: an error verdict, no run. */
static void
test_view_errors(void **state)
{
	struct fakesup *f = *state;
	const char *plurals[]
	        = { "agentruns", "configmaps", "sympoziuminstances" };
	struct fakesup_run o;

	instance_and_memory(f);
	for (size_t i = 0; i < 3; i++) {
		fakesup_fail(f, plurals[i], NULL, "injected");
		run(f, after_run("Forbid"), NULL, "2026-06-15T11:00:10Z", &o);
		assert_int_equal(o.verdict, IPC_V_ERROR);
		assert_non_null(strstr(o.message, "injected"));
		for (size_t k = 0; k < nwrites(&o); k++) {
			assert_string_not_equal(
			        jx_get_str(
			                json_object_array_get_idx(o.writes, k),
			                "op"),
			        "create");
		}
		fakesup_run_fini(&o);
		fakesup_fail(f, plurals[i], NULL, NULL);
	}
}

/* A CRON_TZ zone through the view (a sandboxed worker cannot open the
 * zone file): asked once, then kept by the worker. */
static void
test_tz_view(void **state)
{
	struct fakesup *f = *state;
	struct fakesup_run o;
	json_object *s;

	zc_reset();
	fakesup_clear_log(f);
	for (int i = 0; i < 3; i++) {
		s = base();
		set(s, "metadata.creationTimestamp",
		        "\"2026-06-15T12:00:00Z\"");
		set(s, "spec.schedule",
		        "\"CRON_TZ=America/New_York 0 9 1 12 *\"");
		run(f, s, NULL, "2026-06-15T12:00:05Z", &o);
		/* 09:00 EST is 14:00Z */
		assert_string_equal(
		        jx_get_str(status_of(&o, 0), "nextRunTime"),
		        "2026-12-01T14:00:00Z");
		assert_string_equal(
		        jx_get_str(status_of(&o, 0), "phase"), "Active");
		fakesup_run_fini(&o);
	}
	assert_string_equal(fakesup_log(f), "zone - /America/New_York\n");
	assert_int_equal(zc_count(), 1);
	/* UTC and Local are never asked */
	s = base();
	set(s, "spec.schedule", "\"TZ=Local 0 9 1 12 *\"");
	run(f, s, NULL, "2026-06-15T12:00:05Z", &o);
	assert_string_equal(jx_get_str(status_of(&o, 0), "nextRunTime"),
	        "2026-12-01T09:00:00Z");
	fakesup_run_fini(&o);
	assert_int_equal(fakesup_nreqs(f), 1);
	zc_reset();
}

/* The zone status of expr after a run. */
static void
expect_zone_error(struct fakesup *f, const char *expr, const char *msg)
{
	struct fakesup_run o;
	json_object *s = base(), *c;

	jx_set_path(s, "spec.schedule", json_object_new_string(expr));
	run(f, s, NULL, "2026-06-15T12:00:00Z", &o);
	assert_int_equal(o.verdict, IPC_V_DONE);
	assert_string_equal(jx_get_str(status_of(&o, 0), "phase"), "Error");
	c = json_object_array_get_idx(
	        jx_get(status_of(&o, 0), "conditions"), 0);
	assert_string_equal(jx_get_str(c, "reason"), "InvalidSchedule");
	if (strstr(jx_get_str(c, "message"), msg) == NULL) {
		fail_msg("\"%s\" lacks \"%s\"", jx_get_str(c, "message"), msg);
	}
	fakesup_run_fini(&o);
}

/* Zones the supervisor cannot give: the same InvalidSchedule status as
 * an unknown zone, nothing kept, no crash. */
static void
test_tz_view_errors(void **state)
{
	struct fakesup *f = *state;
	unsigned char junk[300];

	zc_reset();
	fakesup_clear_log(f);
	expect_zone_error(f, "CRON_TZ=Nowhere/City 0 * * * *",
	        "unknown time zone \"Nowhere/City\"");
	/* refused by the worker before asking */
	expect_zone_error(f, "CRON_TZ=../../etc/passwd 0 * * * *",
	        "invalid location name \"../../etc/passwd\"");
	expect_zone_error(
	        f, "TZ=/etc/localtime 0 * * * *", "invalid location name");
	assert_int_equal(fakesup_nreqs(f), 1);
	/* a view error */
	fakesup_fail(f, "zoneinfo", "Europe/Paris", "disk on fire");
	expect_zone_error(f, "CRON_TZ=Europe/Paris 0 * * * *",
	        "unknown time zone \"Europe/Paris\" (view: disk on fire)");
	/* garbage bytes */
	memset(junk, 0x5a, sizeof(junk));
	fakesup_add_zone(f, "Junk/Zone", junk, sizeof(junk));
	expect_zone_error(f, "CRON_TZ=Junk/Zone 0 * * * *",
	        "unknown time zone \"Junk/Zone\" (malformed time zone data)");
	memcpy(junk, "TZif2", 5);
	fakesup_add_zone(f, "Junk/Header", junk, sizeof(junk));
	expect_zone_error(f, "CRON_TZ=Junk/Header 0 * * * *",
	        "malformed time zone data");
	fakesup_add_zone(f, "Junk/Empty", "", 0);
	expect_zone_error(f, "CRON_TZ=Junk/Empty 0 * * * *",
	        "unknown time zone \"Junk/Empty\"");
	assert_int_equal(zc_count(), 0);
	/* nothing kept: asked again */
	expect_zone_error(
	        f, "CRON_TZ=Junk/Zone 0 * * * *", "unknown time zone");
	assert_int_equal(fakesup_nreqs(f), 6);
	zc_reset();
}

/* The worker keeps at most ZC_MAX zones, dropping the least recently
 * used; a kept zone is a copy per parse. */
static void
test_zone_cache_bound(void **state)
{
	struct fakesup *f = *state;
	unsigned char *tzif;
	size_t len;
	char name[32], err[256];
	struct cron_zone *z;
	FILE *fp = fopen("/usr/share/zoneinfo/Asia/Tokyo", "rb");

	assert_non_null(fp);
	tzif = malloc(1 << 16);
	len = fread(tzif, 1, 1 << 16, fp);
	fclose(fp);
	zc_reset();
	fakesup_clear_log(f);
	for (int i = 0; i <= ZC_MAX; i++) {
		snprintf(name, sizeof(name), "Test/Zone%d", i);
		fakesup_add_zone(f, name, tzif, len);
		z = zc_load(name, fakesup_view(f), err, sizeof(err));
		assert_non_null(z);
		assert_int_equal(cron_zone_offset(z, 0), 9 * 3600);
		cron_zone_free(z);
		if (i == 0) {
			continue;
		}
		/* Zone0 stays the most recently used */
		z = zc_load("Test/Zone0", fakesup_view(f), err, sizeof(err));
		cron_zone_free(z);
	}
	assert_int_equal(zc_count(), ZC_MAX);
	assert_int_equal(fakesup_nreqs(f), ZC_MAX + 1);
	/* Zone1 was the oldest: evicted, asked again; Zone0 kept */
	z = zc_load("Test/Zone0", fakesup_view(f), err, sizeof(err));
	cron_zone_free(z);
	assert_int_equal(fakesup_nreqs(f), ZC_MAX + 1);
	z = zc_load("Test/Zone1", fakesup_view(f), err, sizeof(err));
	assert_non_null(z);
	cron_zone_free(z);
	assert_int_equal(fakesup_nreqs(f), ZC_MAX + 2);
	/* no view: an error, not a crash */
	assert_null(zc_load("Test/Other", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown time zone \"Test/Other\""));
	free(tzif);
	zc_reset();
	assert_int_equal(zc_count(), 0);
}

int
main(void)
{
#define T(fn)                                                                 \
	cmocka_unit_test_setup_teardown(fn, fakesup_setup, fakesup_teardown)
	static const struct CMUnitTest tests[] = {
		T(test_gone_and_deleted),
		T(test_finalizer_not_due),
		T(test_not_due_noop),
		T(test_suspended),
		T(test_invalid_cron),
		T(test_first_fire),
		T(test_task_text),
		T(test_unreachable_cron),
		T(test_forbid),
		T(test_run_timeout),
		T(test_forbid_by_label),
		T(test_allow_replace),
		T(test_serving_guard),
		T(test_instance_missing),
		T(test_numbering),
		T(test_catch_up),
		T(test_stale_status),
		T(test_cron_tz),
		T(test_bad_names),
		T(test_view_errors),
		T(test_tz_view),
		T(test_tz_view_errors),
		T(test_zone_cache_bound),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
