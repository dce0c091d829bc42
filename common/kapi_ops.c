/*
 * kapi_ops.c: the blocking convenience calls of kapi.h (get, list, list
 * all pages, create, update, patch, delete, log), each one kapi_do() plus
 * JSON encoding of the body and decoding of the answer.
 */
#include "common/kapi.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"

#define PAGE_DEFAULT 500

/* Finishes a call: decodes the body into *out on success, moves the
 * outcome into err. */
static enum kapi_rc
finish(struct kapi_resp *r, json_object **out, struct kapi_err *err)
{
	json_tokener *tok;
	json_object *o = NULL;

	if (r->err.rc == KAPI_OK && out != NULL) {
		tok = json_tokener_new();
		o = json_tokener_parse_ex(
		        tok, buf_str(&r->body), (int)r->body.len);
		if (o == NULL
		        || json_tokener_get_error(tok) != json_tokener_success
		        || !json_object_is_type(o, json_type_object)) {
			json_object_put(o);
			o = NULL;
			kapi_err_set(&r->err, KAPI_EDECODE, r->code,
			        "answer is not a JSON object (%zu bytes)",
			        r->body.len);
		}
		json_tokener_free(tok);
	}
	if (out != NULL) {
		*out = o;
	}
	if (err != NULL) {
		kapi_err_move(err, &r->err);
		return (err->rc);
	}
	return (r->err.rc);
}

static enum kapi_rc
run(struct kapi_client *c, const struct kapi_req *req, json_object **out,
        struct kapi_err *err)
{
	struct kapi_resp r;
	enum kapi_rc rc;

	kapi_do(c, req, &r);
	rc = finish(&r, out, err);
	kapi_resp_fini(&r);
	return (rc);
}

enum kapi_rc
kapi_get(struct kapi_client *c, const struct kapi_res *res, const char *ns,
        const char *name, json_object **out, struct kapi_err *err)
{
	struct kapi_req req
	        = { .verb = KAPI_GET, .res = res, .ns = ns, .name = name };

	return (run(c, &req, out, err));
}

enum kapi_rc
kapi_list(struct kapi_client *c, const struct kapi_res *res, const char *ns,
        const struct kapi_list_opts *opts, json_object **out,
        struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_LIST, .res = res, .ns = ns };

	if (opts != NULL) {
		req.list = *opts;
	}
	return (run(c, &req, out, err));
}

static const char *
list_meta(json_object *list, const char *key)
{
	json_object *md, *v;

	if (!json_object_object_get_ex(list, "metadata", &md)
	        || !json_object_object_get_ex(md, key, &v)
	        || !json_object_is_type(v, json_type_string)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

/* Appends the items of list to all; -1 when list has no items array. */
static int
take_items(json_object *list, json_object *all)
{
	json_object *items;
	size_t i, n;

	if (!json_object_object_get_ex(list, "items", &items)
	        || !json_object_is_type(items, json_type_array)) {
		return (-1);
	}
	n = json_object_array_length(items);
	for (i = 0; i < n; i++) {
		json_object_array_add(all,
		        json_object_get(json_object_array_get_idx(items, i)));
	}
	return (0);
}

/* Fetches every page into all; on return *rvp holds the first page's
 * resourceVersion (heap). */
static enum kapi_rc
pages(struct kapi_client *c, struct kapi_req *req, json_object *all,
        char **rvp, struct kapi_err *err)
{
	json_object *list;
	const char *cont, *rv;
	char *next = NULL;
	enum kapi_rc rc;

	for (;;) {
		rc = run(c, req, &list, err);
		if (rc != KAPI_OK) {
			break;
		}
		if (take_items(list, all) == -1) {
			json_object_put(list);
			rc = KAPI_EDECODE;
			if (err != NULL) {
				kapi_err_set(
				        err, rc, 200, "list has no items");
			}
			break;
		}
		if (*rvp == NULL
		        && (rv = list_meta(list, "resourceVersion"))) {
			*rvp = xstrdup(rv);
		}
		cont = list_meta(list, "continue");
		free(next);
		next = cont != NULL && *cont != '\0' ? xstrdup(cont) : NULL;
		json_object_put(list);
		if (next == NULL) {
			break;
		}
		req->list.cont = next;
		req->list.resource_version = NULL;
		req->list.resource_version_match = NULL;
	}
	free(next);
	req->list.cont = NULL;
	return (rc);
}

enum kapi_rc
kapi_list_all(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, const struct kapi_list_opts *opts, json_object **items,
        char **rvp, struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_LIST, .res = res, .ns = ns };
	json_object *all = json_object_new_array();
	char *rv = NULL, *rv0;
	enum kapi_rc rc;

	if (opts != NULL) {
		req.list = *opts;
	}
	if (req.list.limit <= 0) {
		req.list.limit = PAGE_DEFAULT;
	}
	rc = pages(c, &req, all, &rv, err);
	if (rc == KAPI_EGONE && rv != NULL) {
		/* A continue token expired: one full list at the first
		 * page's resourceVersion, as client-go's pager does. */
		json_object_put(all);
		all = json_object_new_array();
		req.list.limit = 0;
		req.list.resource_version = rv0 = rv;
		req.list.resource_version_match = NULL;
		rv = NULL;
		rc = pages(c, &req, all, &rv, err);
		free(rv0);
	}
	if (rc != KAPI_OK) {
		json_object_put(all);
		all = NULL;
		free(rv);
		rv = NULL;
	}
	*items = all;
	if (rvp != NULL) {
		*rvp = rv;
	} else {
		free(rv);
	}
	return (rc);
}

static enum kapi_rc
write_obj(struct kapi_client *c, struct kapi_req *req, json_object *obj,
        json_object **out, struct kapi_err *err)
{
	req->body
	        = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	return (run(c, req, out, err));
}

enum kapi_rc
kapi_create(struct kapi_client *c, const struct kapi_res *res, const char *ns,
        json_object *obj, json_object **out, struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_CREATE, .res = res, .ns = ns };

	return (write_obj(c, &req, obj, out, err));
}

enum kapi_rc
kapi_update(struct kapi_client *c, const struct kapi_res *res, const char *ns,
        json_object *obj, json_object **out, struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_UPDATE,
		.res = res,
		.ns = ns,
		.name = jx_get_str(obj, "metadata.name") };

	return (write_obj(c, &req, obj, out, err));
}

enum kapi_rc
kapi_update_status(struct kapi_client *c, const struct kapi_res *res,
        const char *ns, json_object *obj, json_object **out,
        struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_UPDATE,
		.res = res,
		.ns = ns,
		.name = jx_get_str(obj, "metadata.name"),
		.subresource = "status" };

	return (write_obj(c, &req, obj, out, err));
}

enum kapi_rc
kapi_patch(struct kapi_client *c, const struct kapi_res *res, const char *ns,
        const char *name, enum kapi_patch type, const char *patch,
        const char *field_manager, bool force, json_object **out,
        struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_PATCH,
		.res = res,
		.ns = ns,
		.name = name,
		.patch_type = type,
		.body = patch,
		.field_manager = field_manager,
		.force = force };

	return (run(c, &req, out, err));
}

enum kapi_rc
kapi_delete(struct kapi_client *c, const struct kapi_res *res, const char *ns,
        const char *name, const struct kapi_delete_opts *opts,
        json_object **out, struct kapi_err *err)
{
	struct kapi_req req
	        = { .verb = KAPI_DELETE, .res = res, .ns = ns, .name = name };

	if (opts != NULL) {
		req.del = *opts;
	}
	return (run(c, &req, out, err));
}

enum kapi_rc
kapi_log(struct kapi_client *c, const char *ns, const char *pod,
        const struct kapi_log_opts *opts, char **text, struct kapi_err *err)
{
	struct kapi_req req = { .verb = KAPI_LOG, .ns = ns, .name = pod };
	struct kapi_resp r;
	enum kapi_rc rc;

	if (opts != NULL) {
		req.log = *opts;
	}
	kapi_do(c, &req, &r);
	*text = r.err.rc == KAPI_OK ? buf_detach(&r.body, NULL) : NULL;
	rc = finish(&r, NULL, err);
	kapi_resp_fini(&r);
	return (rc);
}
