/*
 * served.c: which optional kinds the API serves, found once at start-up
 * (upstream cmd/controller/main.go with agentrun_sandbox.go
 * CheckAgentSandboxCRDs at 008266e: one LIST of sandboxes with limit 1;
 * any error, a 404 included, turns agent-sandbox mode off, and
 * AGENT_SANDBOX_ENABLED=false turns it off without asking).  The answer
 * decides whether the optional watches of the contract table are watched
 * (sup_optional_off()) and reaches the agentrun worker as
 * CONTRACT_ENV_AGENT_SANDBOX (sup.c worker_env()).  Blocking, before the
 * loop starts.
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
sandbox_group(const struct kapi_res *res)
{
	return (strcmp(res->group, CONTRACT_SANDBOX_GROUP) == 0);
}

/* Whether a running controller has an optional watch of the
 * agent-sandbox group. */
static bool
wants_sandbox(const struct sup *s)
{
	for (size_t i = 0; i < s->nctls; i++) {
		const struct ctrl_spec *sp = s->ctls[i].spec;
		for (size_t j = 0; j < sp->nwatches; j++) {
			if (contract_optional(&sp->watches[j].res)
			        && sandbox_group(&sp->watches[j].res)) {
				return (true);
			}
		}
	}
	return (false);
}

void
sup_detect_served(struct sup *s)
{
	static const struct kapi_res sbx = CONTRACT_RES_SANDBOXES;
	const char *env = getenv(CONTRACT_ENV_AGENT_SANDBOX_OFF);

	s->agent_sandbox = false;
	if (!wants_sandbox(s)) {
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

bool
sup_optional_off(const struct sup *s, const struct ctrl_watch *w)
{
	if (!contract_optional(&w->res)) {
		return (false);
	}
	return (!sandbox_group(&w->res) || !s->agent_sandbox);
}
