/*
 * sim.c: the chaos suite's side of bin/kubesim (started in main.c): its
 * admin endpoints (/_kubesim/...), retried while connections are
 * refused; the CRDs and fixtures (the Secret chaos-key, the kubelet rules
 * that make each run's pod log its result); creating the objects through
 * injected errors; the marker write and compaction that force relists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tests/chaos/chaos.h"

static const struct kapi_res R_SECRET = { "", "v1", "secrets", true };

long
sim_admin(const char *method, const char *path, const char *body,
        json_object **out)
{
	int64_t end = ksim_now_ms() + 6000;
	struct ksim_resp *r;
	long code;

	/* connections may be refused for up to 3 s (F_REFUSE) */
	for (;;) {
		r = ksim_request(ksim_url(chaos.k), method, path,
		        body != NULL ? "application/json" : NULL, body, NULL,
		        10000);
		if ((code = r->code) != 0 || ksim_now_ms() >= end) {
			break;
		}
		ksim_resp_free(r);
		ksim_sleep_ms(100);
	}

	if (out != NULL) {
		*out = r->json != NULL ? json_object_get(r->json) : NULL;
	}
	if (code < 200 || code > 299) {
		chaos_say("admin %s %s: %ld %s", method, path, code, r->body);
	}
	ksim_resp_free(r);
	return (code);
}

void
sim_create(const struct kapi_res *r, json_object *obj, const char *name)
{
	int64_t end = ksim_now_ms() + 60000;

	for (;;) {
		struct kapi_err e = KAPI_ERR_INIT;
		enum kapi_rc rc
		        = kapi_create(chaos.c, r, CHAOS_NS, obj, NULL, &e);

		if (rc == KAPI_OK || rc == KAPI_EEXISTS) {
			kapi_err_fini(&e);
			return;
		}
		if (rc == KAPI_EINVALID || rc == KAPI_EBADREQUEST
		        || ksim_now_ms() > end) {
			fail_msg("create %s/%s: %ld %s", r->plural, name,
			        e.code, e.message != NULL ? e.message : "");
		}
		kapi_err_fini(&e);
		ksim_sleep_ms(fault_rnd_in(20, 200));
	}
}

void
sim_apply_crds(void)
{
	assert_int_equal(ksim_apply_crds(chaos.c, "deploy/crds"), 8);
}

void
sim_wait_served(void)
{
	const struct kapi_res *rs[] = { &opmodel_skp, &opmodel_inst,
		&opmodel_mcp, &opmodel_sch, &opmodel_pp, &opmodel_run };
	int64_t end = ksim_now_ms() + 10000;

	for (size_t i = 0; i < 6; i++) {
		json_object *items = NULL;
		while (kapi_list_all(chaos.c, rs[i], CHAOS_NS, NULL, &items,
		               NULL, NULL)
		        != KAPI_OK) {
			assert_true(ksim_now_ms() < end);
			ksim_sleep_ms(50);
		}
		json_object_put(items);
	}
}

void
sim_fixtures(void)
{
	json_object *sec = json_tokener_parse(
	        "{\"metadata\":{\"name\":\"chaos-key\"},"
	        "\"stringData\":{\"OPENAI_API_KEY\":\"x\"}}");
	char *rules;

	assert_non_null(sec);
	sim_create(&R_SECRET, sec, "chaos-key");
	json_object_put(sec);
	rules = opmodel_kubelet_rules(&chaos.om);
	assert_int_equal(
	        sim_admin("PUT", "/_kubesim/kubelet", rules, NULL), 200);
	free(rules);
}

void
sim_touch_marker(void)
{
	static int n;
	char body[256];
	long code;

	snprintf(body, sizeof(body),
	        "{\"metadata\":{\"name\":\"chaos-marker-%d\"}}", n++);
	code = sim_admin("POST", "/api/v1/namespaces/" CHAOS_NS "/configmaps",
	        body, NULL);
	if (code != 201) {
		chaos_say("marker: %ld", code);
	}
}

void
sim_compact(void)
{
	sim_touch_marker();
	sim_admin("POST", "/_kubesim/compact", "{}", NULL);
	sim_admin("POST", "/_kubesim/close-watches", "{}", NULL);
}
