/*
 * opmodel.c: the six-kind workload of opmodel.h (test_chaos, test_scale):
 * the objects, the kubelet rules of the runs, and the expectation model,
 * each kind's converged state written from sympozium-controllers.md (the
 * spec), not from the operator's code: exact children per owner, their
 * data, the status.
 */
#include "tests/lib/opmodel.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"

#define NS      OPMODEL_NS
#define GROUP   "sympozium.ai"
#define VERSION "v1alpha1"
#define MEM_MD  "# Agent Memory\n\nNo memories recorded yet.\n"
#define R_CM    opmodel_cm
#define R_JOB   opmodel_job
#define R_DEP   opmodel_dep
#define R_SVC   opmodel_svc
#define R_PVC   opmodel_pvc
#define R_SKP   opmodel_skp
#define R_INST  opmodel_inst
#define R_MCP   opmodel_mcp
#define R_SCH   opmodel_sch
#define R_PP    opmodel_pp
#define R_RUN   opmodel_run

const struct kapi_res opmodel_cm = { "", "v1", "configmaps", true };
const struct kapi_res opmodel_job = { "batch", "v1", "jobs", true };
const struct kapi_res opmodel_dep = { "apps", "v1", "deployments", true };
const struct kapi_res opmodel_svc = { "", "v1", "services", true };
const struct kapi_res opmodel_pvc
        = { "", "v1", "persistentvolumeclaims", true };
const struct kapi_res opmodel_skp = { GROUP, VERSION, "skillpacks", true };
const struct kapi_res opmodel_inst
        = { GROUP, VERSION, "sympoziuminstances", true };
const struct kapi_res opmodel_mcp = { GROUP, VERSION, "mcpservers", true };
const struct kapi_res opmodel_sch
        = { GROUP, VERSION, "sympoziumschedules", true };
const struct kapi_res opmodel_pp = { GROUP, VERSION, "personapacks", true };
const struct kapi_res opmodel_run = { GROUP, VERSION, "agentruns", true };

/* ---- the objects and what the spec says they become ---- */

/* The key of m->names for an object. Caller frees. */
static char *
key_of(const struct kapi_res *r, const char *name)
{
	return (xasprintf("%s/%s", r->plural, name));
}

static void
add_item(struct opmodel *m, const struct kapi_res *r, const char *name,
        char *json)
{
	struct opmodel_item *it;

	m->items = xreallocarray(
	        m->items, (size_t)m->nitems + 1, sizeof(*m->items));
	it = &m->items[m->nitems++];
	it->res = r;
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->obj = json_tokener_parse(json);
	if (it->obj == NULL) {
		fprintf(stderr, "opmodel: bad JSON: %s\n", json);
		abort();
	}
	char *key = key_of(r, name);
	json_object_object_add(m->names, key, NULL);
	free(key);
	free(json);
}

static char *
meta(const char *kind, const char *name, const char *labels)
{
	return (xasprintf("\"apiVersion\":\"sympozium.ai/v1alpha1\","
	                  "\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
	                  "\"namespace\":\"" NS "\"%s%s%s}",
	        kind, name, labels != NULL ? ",\"labels\":{" : "",
	        labels != NULL ? labels : "", labels != NULL ? "}" : ""));
}

static void
add_skillpack(struct opmodel *m, int i)
{
	char name[32];
	char *mt;

	snprintf(name, sizeof(name), "sp-%04d", i);
	mt = meta("SkillPack", name, NULL);
	add_item(m, &R_SKP, name,
	        xasprintf("{%s,\"spec\":{\"skills\":["
	                  "{\"name\":\"s1\",\"description\":\"d%d\","
	                  "\"content\":\"c1 %d\"},"
	                  "{\"name\":\"s2\",\"content\":\"c2 %d\"}]}}",
	                mt, i, i, i));
	free(mt);
}

static void
add_instance(struct opmodel *m, int i)
{
	char name[32];
	char *mt;

	snprintf(name, sizeof(name), "in-%04d", i);
	mt = meta("SympoziumInstance", name, NULL);
	add_item(m, &R_INST, name,
	        xasprintf("{%s,\"spec\":{\"agents\":{\"default\":{\"model\":"
	                  "\"gpt-4o\"}},\"memory\":{\"enabled\":%s}}}",
	                mt, i % 2 == 0 ? "true" : "false"));
	free(mt);
}

static void
add_mcp(struct opmodel *m, int i)
{
	char name[32];
	char *mt;

	snprintf(name, sizeof(name), "mcp-%04d", i);
	mt = meta("MCPServer", name, NULL);
	if (i % 2 == 0) {
		add_item(m, &R_MCP, name,
		        xasprintf("{%s,\"spec\":{\"transportType\":\"http\","
		                  "\"toolsPrefix\":\"t\",\"url\":"
		                  "\"http://ext-%d.example:80/mcp\"}}",
		                mt, i));
	} else {
		add_item(m, &R_MCP, name,
		        xasprintf(
		                "{%s,\"spec\":{\"transportType\":\"http\","
		                "\"toolsPrefix\":\"t\",\"deployment\":{"
		                "\"image\":\"example/mcp:1\",\"port\":9000}}}",
		                mt));
	}
	free(mt);
}

/* Schedules fire once a year (never during the run) or are suspended. */
static void
add_schedule(struct opmodel *m, int i)
{
	char name[32];
	char *mt;

	snprintf(name, sizeof(name), "sch-%04d", i);
	mt = meta("SympoziumSchedule", name, NULL);
	add_item(m, &R_SCH, name,
	        xasprintf("{%s,\"spec\":{\"instanceRef\":\"in-0000\","
	                  "\"schedule\":\"0 0 1 1 *\",\"task\":\"t%d\","
	                  "\"type\":\"scheduled\",\"suspend\":%s}}",
	                mt, i, i % 3 == 0 ? "true" : "false"));
	free(mt);
}

static void
add_pack(struct opmodel *m, int i)
{
	char name[32];
	char *mt;

	snprintf(name, sizeof(name), "pp-%03d", i);
	mt = meta("PersonaPack", name, NULL);
	add_item(m, &R_PP, name,
	        xasprintf("{%s,\"spec\":{\"enabled\":true,\"personas\":["
	                  "{\"name\":\"a\",\"systemPrompt\":\"pa%d\"},"
	                  "{\"name\":\"b\",\"systemPrompt\":\"pb%d\"}]}}",
	                mt, i, i));
	free(mt);
}

static void
run_instance(const struct opmodel *m, int i, char *out, size_t len)
{
	snprintf(out, len, "in-%04d", i % m->n.run_instances);
}

static void
add_run(struct opmodel *m, int i)
{
	char name[32], inst[32], lab[96];
	char *mt;

	snprintf(name, sizeof(name), "run-%04d", i);
	run_instance(m, i, inst, sizeof(inst));
	snprintf(lab, sizeof(lab), "\"sympozium.ai/instance\":\"%s\"", inst);
	mt = meta("AgentRun", name, lab);
	add_item(m, &R_RUN, name,
	        xasprintf("{%s,\"spec\":{\"instanceRef\":\"%s\","
	                  "\"agentId\":\"chaos\",\"sessionKey\":\"s%d\","
	                  "\"task\":\"task %d\",\"model\":{\"provider\":"
	                  "\"openai\",\"model\":\"gpt-4o\","
	                  "\"authSecretRef\":\"chaos-key\"}}}",
	                mt, inst, i, i));
	free(mt);
}

char *
opmodel_run_result(const char *run)
{
	return (xasprintf("ok %s", run));
}

void
opmodel_build(struct opmodel *m, const struct opmodel_counts *n)
{
	const struct opmodel_counts *c = &m->n;

	memset(m, 0, sizeof(*m));
	m->n = *n;
	m->names = json_object_new_object();
	for (int i = 0; i < c->run_instances; i++) {
		add_instance(m, i);
	}
	m->first_free = m->nitems;
	for (int i = c->run_instances; i < c->instances; i++) {
		add_instance(m, i);
	}
	for (int i = 0; i < c->skillpacks; i++) {
		add_skillpack(m, i);
	}
	for (int i = 0; i < c->mcps; i++) {
		add_mcp(m, i);
	}
	for (int i = 0; i < c->schedules; i++) {
		add_schedule(m, i);
	}
	for (int i = 0; i < c->packs; i++) {
		add_pack(m, i);
	}
	for (int i = 0; i < c->runs; i++) {
		add_run(m, i);
	}
}

void
opmodel_free(struct opmodel *m)
{
	for (int i = 0; i < m->nitems; i++) {
		json_object_put(m->items[i].obj);
	}
	free(m->items);
	json_object_put(m->names);
	memset(m, 0, sizeof(*m));
}

char *
opmodel_kubelet_rules(const struct opmodel *m)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, "{\"rules\":[");
	for (int i = 0; i < m->n.runs; i++) {
		char run[32];
		char *res;
		snprintf(run, sizeof(run), "run-%04d", i);
		res = opmodel_run_result(run);
		buf_printf(&b,
		        "%s{\"labelSelector\":\"sympozium.ai/agent-run=%s\","
		        "\"runDuration\":\"300ms\",\"logs\":{\"*\":\"start\\n"
		        "__SYMPOZIUM_RESULT__{\\\"status\\\":\\\"success\\\","
		        "\\\"response\\\":\\\"%s\\\"}__SYMPOZIUM_END__\\n\"}}",
		        i > 0 ? "," : "", run, res);
		free(res);
	}
	buf_puts(&b, "]}");
	return (buf_detach(&b, NULL));
}

/* ---- kubesim's state against the expectation model ---- */

const struct kstate_kind opmodel_kinds[OPMODEL_NKINDS] = {
	{ &R_SKP, "SkillPack" },
	{ &R_INST, "SympoziumInstance" },
	{ &R_MCP, "MCPServer" },
	{ &R_SCH, "SympoziumSchedule" },
	{ &R_PP, "PersonaPack" },
	{ &R_RUN, "AgentRun" },
	{ &R_CM, "ConfigMap" },
	{ &R_JOB, "Job" },
	{ &R_DEP, "Deployment" },
	{ &R_SVC, "Service" },
	{ &R_PVC, "PersistentVolumeClaim" },
};

/* Spec 4.2. */
static void
expect_skillpack(struct kstate *st, const char *name, json_object *o)
{
	int i = atoi(name + 3);
	json_object *cm = kstate_get(st, &R_CM, name);
	char *s1 = xasprintf("# s1\n\n> d%d\n\nc1 %d", i, i);
	char *s2 = xasprintf("c2 %d", i);
	char *kids[] = { xasprintf("ConfigMap/%s", name), NULL };

	if (strcmp(kstate_str(o, "status.phase"), "Ready") != 0
	        || strcmp(kstate_str(o, "status.configMapName"), name) != 0
	        || kstate_int(o, "status.skillCount") != 2) {
		kstate_miss(st, "SkillPack %s: status %s", name,
		        json_object_to_json_string(jx_get(o, "status")));
	} else if (!kstate_has_finalizer(
	                   o, "sympozium.ai/skillpack-finalizer")) {
		kstate_miss(st, "SkillPack %s: no finalizer", name);
	} else if (cm == NULL
	        || json_object_object_length(jx_get(cm, "data")) != 2
	        || strcmp(kstate_data(cm, "s1.md") ?: "", s1) != 0
	        || strcmp(kstate_data(cm, "s2.md") ?: "", s2) != 0
	        || !kstate_label_is(cm, "sympozium.ai/component", "skillpack")
	        || !kstate_label_is(cm, "sympozium.ai/skillpack", name)) {
		kstate_miss(st, "SkillPack %s: ConfigMap %s", name,
		        cm != NULL ? json_object_to_json_string(cm)
		                   : "absent");
	}
	free(s1);
	free(s2);
	kstate_check_kids(st, name, o, kids);
}

/* The memory ConfigMap of instance name (spec 2.2 step 6). */
static void
expect_memory_cm(struct kstate *st, const char *name)
{
	char cm_name[128];
	json_object *cm;

	snprintf(cm_name, sizeof(cm_name), "%s-memory", name);
	cm = kstate_get(st, &R_CM, cm_name);
	if (cm == NULL
	        || strcmp(kstate_data(cm, "MEMORY.md") ?: "", MEM_MD) != 0
	        || !kstate_label_is(cm, "sympozium.ai/instance", name)
	        || !kstate_label_is(cm, "sympozium.ai/component", "memory")) {
		kstate_miss(st, "instance %s: memory ConfigMap %s", name,
		        cm != NULL ? json_object_to_json_string(cm)
		                   : "absent");
	}
}

/* Spec 2.2 (no channels) and, for stamped instances, 3.3. */
static void
expect_instance(const struct opmodel *m, struct kstate *st, const char *name,
        json_object *o)
{
	char pack[64] = "", persona[8] = "";
	bool stamped = sscanf(name, "pp-%3[0-9]-%1[ab]", pack, persona) == 2;
	bool memory = stamped || atoi(name + 3) % 2 == 0;
	bool with_runs = !stamped && atoi(name + 3) < m->n.run_instances;
	char *kids[5] = { NULL };
	int n = 0;

	if (strcmp(kstate_str(o, "status.phase"), "Running") != 0) {
		kstate_miss(st, "instance %s: status %s", name,
		        json_object_to_json_string(jx_get(o, "status")));
	}
	if (!with_runs && kstate_int(o, "status.activeAgentPods") > 0) {
		kstate_miss(st, "instance %s: activeAgentPods > 0", name);
	}
	if (memory) {
		expect_memory_cm(st, name);
		kids[n++] = xasprintf("ConfigMap/%s-memory", name);
	}
	if (stamped) {
		char want[96];
		snprintf(want, sizeof(want), "p%s%d", persona, atoi(pack));
		if (strcmp(kstate_str(o, "spec.memory.systemPrompt"), want)
		                != 0
		        || !kstate_label_is(
		                o, "sympozium.ai/persona", persona)) {
			kstate_miss(st,
			        "instance %s: spec or labels not stamped "
			        "from its persona",
			        name);
		}
		/* the memory skill is appended: its server (2.2 step 7) */
		kids[n++] = xasprintf("Deployment/%s-memory", name);
		kids[n++] = xasprintf("Service/%s-memory", name);
		kids[n++] = xasprintf(
		        "PersistentVolumeClaim/%s-memory-db", name);
	}
	kstate_check_kids(st, name, o, kids);
}

/* Spec 6.2. */
static void
expect_mcp(struct kstate *st, const char *name, json_object *o)
{
	int i = atoi(name + 4);
	bool ext = i % 2 == 0, ready = false;
	char url[128];
	json_object *rc = kstate_condition(o, "Ready"),
	            *dc = kstate_condition(o, "Deployed");
	json_object *svc = kstate_get(st, &R_SVC, name);
	char *kids[3] = { NULL };

	if (ext) {
		snprintf(url, sizeof(url), "http://ext-%d.example:80/mcp", i);
	} else {
		snprintf(url, sizeof(url), "http://%s." NS ".svc:9000", name);
		kids[0] = xasprintf("Deployment/%s", name);
		kids[1] = xasprintf("Service/%s", name);
	}
	(void)jx_get_bool(o, "status.ready", &ready);
	if (!ready || strcmp(kstate_str(o, "status.url"), url) != 0
	        || strcmp(kstate_str(rc, "status"), "True") != 0
	        || strcmp(kstate_str(rc, "reason"), ext ? "External" : "Ready")
	                != 0
	        || (!ext && strcmp(kstate_str(dc, "status"), "True") != 0)) {
		kstate_miss(st, "MCPServer %s: status %s", name,
		        json_object_to_json_string(jx_get(o, "status")));
	}
	if (!ext
	        && (svc == NULL
	                || kstate_int(svc, "spec.ports.0.port") != 9000)) {
		kstate_miss(
		        st, "MCPServer %s: Service without port 9000", name);
	}
	kstate_check_kids(st, name, o, kids);
}

/* Spec 5.2 steps 4, 6, 7: "0 0 1 1 *" from creation - 24 h. */
static void
expect_schedule(struct kstate *st, const char *name, json_object *o)
{
	bool suspended = atoi(name + 4) % 3 == 0;
	char *kids[] = { NULL };
	int64_t created = 0;
	char want[32] = "";

	if (timefmt_parse(
	            kstate_str(o, "metadata.creationTimestamp"), &created)
	        == 0) {
		time_t base = (time_t)(created / 1000000 - 86400);
		struct tm tm;
		gmtime_r(&base, &tm);
		snprintf(want, sizeof(want), "%04d-01-01T00:00:00Z",
		        tm.tm_year + 1900 + 1);
	}
	if (suspended) {
		if (strcmp(kstate_str(o, "status.phase"), "Suspended") != 0) {
			kstate_miss(st,
			        "schedule %s: status %s (want Suspended)",
			        name,
			        json_object_to_json_string(
			                jx_get(o, "status")));
		}
	} else if (strcmp(kstate_str(o, "status.phase"), "Active") != 0
	        || strcmp(kstate_str(o, "status.nextRunTime"), want) != 0
	        || kstate_int(o, "status.totalRuns") > 0) {
		kstate_miss(st,
		        "schedule %s: status %s (want Active, next %s)", name,
		        json_object_to_json_string(jx_get(o, "status")), want);
	}
	kstate_check_kids(st, name, o, kids);
}

/* Spec 3.2 step 7, 3.3 (personas a and b, no schedule). */
static void
expect_pack(struct kstate *st, const char *name, json_object *o)
{
	char *kids[] = { xasprintf("SympoziumInstance/%s-a", name),
		xasprintf("SympoziumInstance/%s-b", name), NULL };
	json_object *ip = jx_get(o, "status.installedPersonas");
	char a[80], b[80];

	snprintf(a, sizeof(a), "%s-a", name);
	snprintf(b, sizeof(b), "%s-b", name);
	if (strcmp(kstate_str(o, "status.phase"), "Ready") != 0
	        || kstate_int(o, "status.personaCount") != 2
	        || kstate_int(o, "status.installedCount") != 2 || ip == NULL
	        || json_object_array_length(ip) != 2
	        || strcmp(kstate_str(o,
	                          "status.installedPersonas.0.instanceName"),
	                   a)
	                != 0
	        || strcmp(kstate_str(o,
	                          "status.installedPersonas.1.instanceName"),
	                   b)
	                != 0
	        || strcmp(kstate_str(o, "status.installedPersonas.0.name"),
	                   "a")
	                != 0) {
		kstate_miss(st, "PersonaPack %s: status %s", name,
		        json_object_to_json_string(jx_get(o, "status")));
	}
	for (int i = 0; i < 2; i++) {
		json_object *inst = kstate_get(st, &R_INST, i == 0 ? a : b);
		if (inst == NULL
		        || !kstate_label_is(
		                inst, "sympozium.ai/persona-pack", name)) {
			kstate_miss(st,
			        "PersonaPack %s: instance %s absent or "
			        "unlabelled",
			        name, i == 0 ? a : b);
		}
	}
	kstate_check_kids(st, name, o, kids);
}

/* The run's Job has ttlSecondsAfterFinished 300 (spec 1.12): kubesim's Job
 * controller deletes it 300 s after it finished, which the run's
 * completedAt trails by a little.  True when it may be gone by now. */
static bool
job_may_be_gone(struct kstate *st, const char *name, json_object *o)
{
	int64_t done_us;

	return (timefmt_parse(kstate_str(o, "status.completedAt"), &done_us)
	                == 0
	        && timefmt_now_us_real() - done_us >= 290LL * 1000000
	        && kstate_get(st, &R_JOB, name) == NULL);
}

/* Spec 1.3, 1.5, 1.6, 1.10, 1.14. */
static void
expect_run(struct kstate *st, const char *name, json_object *o)
{
	char *want = opmodel_run_result(name);
	char *kids[] = { xasprintf("ConfigMap/%s-input", name),
		xasprintf("Job/%s", name), NULL };
	json_object *fins = jx_get(o, "metadata.finalizers");

	if (job_may_be_gone(st, name, o)) {
		/* its TTL expired (long mode): the input ConfigMap alone */
		free(kids[1]);
		kids[1] = NULL;
	}

	if (strcmp(kstate_str(o, "status.phase"), "Succeeded") != 0
	        || strcmp(kstate_str(o, "status.result"), want) != 0
	        || strcmp(kstate_str(o, "status.jobName"), name) != 0
	        || kstate_str(o, "status.podName")[0] == '\0'
	        || kstate_str(o, "status.completedAt")[0] == '\0') {
		kstate_miss(st, "AgentRun %s: status %s", name,
		        json_object_to_json_string(jx_get(o, "status")));
	}
	if (fins != NULL && json_object_array_length(fins) > 0) {
		kstate_miss(st,
		        "AgentRun %s: finalizer left on a finished run", name);
	}
	free(want);
	kstate_check_kids(st, name, o, kids);
}

/* Checks the item it, present as o (and, for a pack, its two stamped
 * instances); returns the objects verified. */
static int
check_item(const struct opmodel *m, struct kstate *st,
        const struct opmodel_item *it, json_object *o)
{
	int n = 1;

	if (it->res == &R_SKP) {
		expect_skillpack(st, it->name, o);
	} else if (it->res == &R_INST) {
		expect_instance(m, st, it->name, o);
	} else if (it->res == &R_MCP) {
		expect_mcp(st, it->name, o);
	} else if (it->res == &R_SCH) {
		expect_schedule(st, it->name, o);
	} else if (it->res == &R_PP) {
		expect_pack(st, it->name, o);
		for (int p = 0; p < 2; p++) {
			char nm[80];
			json_object *in;
			snprintf(nm, sizeof(nm), "%s-%c", it->name,
			        p == 0 ? 'a' : 'b');
			if ((in = kstate_get(st, &R_INST, nm)) != NULL) {
				expect_instance(m, st, nm, in);
				n++;
			}
		}
	} else {
		expect_run(st, it->name, o);
	}
	return (n);
}

/* Objects of our kinds that nobody asked for (children are counted by
 * kstate_check_kids(); this catches extra primaries, e.g. a run of a
 * schedule). */
static void
check_no_extra(const struct opmodel *m, struct kstate *st)
{
	for (size_t r = 0; r < OPMODEL_NPRIMARY; r++) {
		const struct kstate_kind *k = &opmodel_kinds[r];
		json_object_object_foreach(st->by[r], name, o)
		{
			char *key = key_of(k->res, name);
			bool known = json_object_object_get_ex(
			                     m->names, key, NULL)
			        || (k->res == &R_INST
			                && strncmp(name, "pp-", 3) == 0);
			(void)o;
			free(key);
			if (!known) {
				kstate_miss(
				        st, "unexpected %s %s", k->kind, name);
			}
		}
	}
}

int
opmodel_check(struct opmodel *m, struct kstate *st)
{
	int n = 0;

	for (int i = 0; i < m->nitems; i++) {
		struct opmodel_item *it = &m->items[i];
		json_object *o = kstate_get(st, it->res, it->name);

		if (o == NULL) {
			kstate_miss(st, "%s %s is absent", it->res->plural,
			        it->name);
			continue;
		}
		n += check_item(m, st, it, o);
	}
	check_no_extra(m, st);
	m->verified_objects = n;
	m->verified_children = st->verified_children;
	return (st->nwhy);
}
