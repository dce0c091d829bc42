/*
 * opmodel.h: a workload over the six kinds and its expectation model,
 * shared by the chaos suite (test_chaos) and the scale suite
 * (test_scale): SkillPacks sp-NNNN (two skills), SympoziumInstances
 * in-NNNN (every second one with memory), MCPServers mcp-NNNN (every
 * second one external, the others deployed), SympoziumSchedules sch-NNNN
 * (yearly, every third suspended), PersonaPacks pp-NNN (personas a and
 * b) and AgentRuns run-NNNN spread over the first run_instances
 * instances, all in namespace "default"; the kubelet rules that make each
 * run's pod log its own result; and the check of a kstate snapshot
 * against what the spec says each object becomes (status, children, their
 * data) with no primary nobody asked for.
 */
#ifndef OPMODEL_H
#define OPMODEL_H

#include <json-c/json.h>

#include "common/kapi.h"
#include "tests/lib/kstate.h"

#define OPMODEL_NS "default"
/* The kinds of opmodel_kinds: the six primaries first. */
#define OPMODEL_NKINDS   11
#define OPMODEL_NPRIMARY 6

extern const struct kapi_res opmodel_cm, opmodel_job, opmodel_dep, opmodel_svc,
        opmodel_pvc, opmodel_skp, opmodel_inst, opmodel_mcp, opmodel_sch,
        opmodel_pp, opmodel_run;
/* What kstate_load() lists for opmodel_check(). */
extern const struct kstate_kind opmodel_kinds[OPMODEL_NKINDS];

/* How many of each (names are numbered from 0). */
struct opmodel_counts {
	int skillpacks, instances, mcps, schedules, packs, runs;
	int run_instances; /* instances the runs are spread over */
};

/* One object to create. */
struct opmodel_item {
	const struct kapi_res *res;
	char name[64];
	json_object *obj; /* owned */
};

struct opmodel {
	struct opmodel_counts n;
	struct opmodel_item *items; /* in creation order */
	int nitems;
	int first_free;     /* items before it (the run instances) go first */
	json_object *names; /* "plural/name" of every item */
	int verified_objects, verified_children; /* of the last check */
};

/* Builds the items of n: the instances the runs name first, then the
 * rest (a caller may shuffle items[first_free..]).  Release with
 * opmodel_free(). */
void opmodel_build(struct opmodel *m, const struct opmodel_counts *n);
void opmodel_free(struct opmodel *m);
/* The result run's pod logs ("ok <run>").  Caller frees. */
char *opmodel_run_result(const char *run);
/* The body of PUT /_kubesim/kubelet: one rule per run.  Caller frees. */
char *opmodel_kubelet_rules(const struct opmodel *m);
/* Checks st (kstate_load() of opmodel_kinds in OPMODEL_NS) against the
 * model: mismatches go to st (kstate_miss()); sets m->verified_*.
 * Returns st->nwhy. */
int opmodel_check(struct opmodel *m, struct kstate *st);

#endif
