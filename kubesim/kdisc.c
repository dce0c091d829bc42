/*
 * kdisc.c: the routes that describe the server rather than objects:
 * /version, /healthz /livez /readyz, legacy discovery (/api, /apis, a
 * group, a group-version's resources: spec D.2), the OpenAPI v3 stub
 * (D.5; /openapi/v2 as JSON).  The documents
 * themselves come from kres.
 */
#include <string.h>

#include "kubesim/ksrv.h"

static void
version(struct kresp *rs)
{
	json_object *v = json_object_new_object();

	json_object_object_add(v, "major", json_object_new_string("1"));
	json_object_object_add(v, "minor", json_object_new_string("33"));
	json_object_object_add(
	        v, "gitVersion", json_object_new_string("v1.33.0-kubesim"));
	json_object_object_add(v, "gitCommit", json_object_new_string(""));
	json_object_object_add(
	        v, "gitTreeState", json_object_new_string("clean"));
	json_object_object_add(v, "buildDate",
	        json_object_new_string("2026-01-01T00:00:00Z"));
	json_object_object_add(v, "goVersion", json_object_new_string("c17"));
	json_object_object_add(v, "compiler", json_object_new_string("gcc"));
	json_object_object_add(
	        v, "platform", json_object_new_string("linux/amd64"));
	kresp_json(rs, 200, v);
	json_object_put(v);
}

static void
health(const struct kreq *rq, const struct kroute *rt, struct kresp *rs)
{
	rs->ctype = "text/plain; charset=utf-8";
	if (kreq_q(rq, "verbose") != NULL) {
		buf_printf(&rs->body,
		        "[+]ping ok\n[+]log ok\n%s check passed\n", rt->rest);
	} else {
		buf_puts(&rs->body, "ok");
	}
}

static void
send_doc(struct kresp *rs, json_object *doc)
{
	if (doc == NULL) {
		kresp_error(rs, 404, "NotFound",
		        "the server could not find the requested resource");
		return;
	}
	kresp_json(rs, 200, doc);
	json_object_put(doc);
}

void
kdisc_handle(struct ksrv *ks, const struct kreq *rq, const struct kroute *rt,
        struct kresp *rs)
{
	rs->verb = "get";
	if (strcmp(rq->method, "GET") != 0) {
		kresp_error(rs, 405, "MethodNotAllowed",
		        "the server does not allow this method on the "
		        "requested resource");
		return;
	}
	kstore_lock(ks->st);
	switch (rt->kind) {
	case KROUTE_VERSION:
		version(rs);
		break;
	case KROUTE_HEALTH:
		health(rq, rt, rs);
		break;
	case KROUTE_API:
		send_doc(rs, kres_api_versions(ks->reg, ks->addr));
		break;
	case KROUTE_APIS:
		send_doc(rs, kres_group_list(ks->reg));
		break;
	case KROUTE_GROUP:
		send_doc(rs, kres_group(ks->reg, rt->group));
		break;
	case KROUTE_GV:
		send_doc(rs,
		        kres_resource_list(ks->reg, rt->group, rt->version));
		break;
	case KROUTE_OPENAPI_ROOT:
		send_doc(rs, kres_openapi_root(ks->reg));
		break;
	case KROUTE_OPENAPI_DOC:
		send_doc(rs, kres_openapi_doc(ks->reg, rt->rest));
		break;
	case KROUTE_OPENAPI_V2:
		send_doc(rs, kres_openapi_v2(ks->reg));
		break;
	default:
		send_doc(rs, NULL);
		break;
	}
	kstore_unlock(ks->st);
}
