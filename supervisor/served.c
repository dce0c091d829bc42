/*
 * served.c: which optional kinds the API serves, found once at start-up
 * (upstream cmd/controller/main.go with agentrun_sandbox.go
 * CheckAgentSandboxCRDs at 008266e: one LIST of sandboxes with limit 1;
 * any error, a 404 included, turns agent-sandbox mode off, and
 * AGENT_SANDBOX_ENABLED=false turns it off without asking).  The answer
 * decides whether the optional watches of the contract table are watched
 * (sup_optional_off()) and reaches the agentrun worker as
 * CONTRACT_ENV_AGENT_SANDBOX (sup.c worker_env()).  The same single LIST
 * finds whether the Gateway API serves httproutes (the routes of
 * server-mode runs, watched only then).  Blocking, before the loop
 * starts.
 */
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/log.h"
#include "supervisor/sup.h"

/* Whether one LIST of res (limit 1, all namespaces, no retry) answers
 * 2xx. */
static bool
served(struct sup *s, const struct kapi_res *res)
{
	struct kapi_req rq = { .verb = KAPI_LIST,
		.res = res,
		.list = { .limit = 1 },
		.max_retries = -1 };
	struct kapi_resp rp;
	bool ok;

	kapi_resp_init(&rp);
	ok = kapi_do(s->client, &rq, &rp) == KAPI_OK;
	kapi_resp_fini(&rp);
	return (ok);
}

static bool
in_group(const struct kapi_res *res, const char *group)
{
	return (strcmp(res->group, group) == 0);
}

/* Whether a running controller has an optional watch of group. */
static bool
wants(const struct sup *s, const char *group)
{
	for (size_t i = 0; i < s->nctls; i++) {
		const struct ctrl_spec *sp = s->ctls[i].spec;
		for (size_t j = 0; j < sp->nwatches; j++) {
			if (contract_optional(&sp->watches[j].res)
			        && in_group(&sp->watches[j].res, group)) {
				return (true);
			}
		}
	}
	return (false);
}

static void
detect_sandbox(struct sup *s)
{
	static const struct kapi_res sbx = CONTRACT_RES_SANDBOXES;
	const char *env = getenv(CONTRACT_ENV_AGENT_SANDBOX_OFF);

	s->agent_sandbox = false;
	if (!wants(s, CONTRACT_SANDBOX_GROUP)) {
		return;
	}
	if (env != NULL && strcmp(env, "false") == 0) {
		log_info("agent-sandbox: explicitly disabled via %s=false",
		        CONTRACT_ENV_AGENT_SANDBOX_OFF);
		return;
	}
	s->agent_sandbox = served(s, &sbx);
	log_info(s->agent_sandbox
	                ? "agent-sandbox: CRDs served (%s/%s), Sandbox "
	                  "support on"
	                : "agent-sandbox: CRDs (%s/%s) not served, Sandbox "
	                  "support off",
	        CONTRACT_SANDBOX_GROUP, CONTRACT_SANDBOX_VERSION);
}

/* The HTTPRoutes of server-mode runs: watched where served; where not,
 * a run still creates its route once a gateway is ready (the API may
 * serve it by then), only without the cache's view of it. */
static void
detect_httproutes(struct sup *s)
{
	static const struct kapi_res hr = CONTRACT_RES_HTTPROUTES;

	s->httproutes = wants(s, CONTRACT_GATEWAY_GROUP) && served(s, &hr);
	if (wants(s, CONTRACT_GATEWAY_GROUP)) {
		log_info(s->httproutes
		                ? "gateway-api: httproutes served (%s/v1)"
		                : "gateway-api: httproutes (%s/v1) not "
		                  "served, not watched",
		        CONTRACT_GATEWAY_GROUP);
	}
}

void
sup_detect_served(struct sup *s)
{
	detect_sandbox(s);
	detect_httproutes(s);
}

bool
sup_optional_off(const struct sup *s, const struct ctrl_watch *w)
{
	if (!contract_optional(&w->res)) {
		return (false);
	}
	if (in_group(&w->res, CONTRACT_SANDBOX_GROUP)) {
		return (!s->agent_sandbox);
	}
	return (!in_group(&w->res, CONTRACT_GATEWAY_GROUP) || !s->httproutes);
}
