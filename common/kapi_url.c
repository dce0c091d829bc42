/*
 * kapi_url.c: the pure part of the client: request URLs (spec kube-api.md
 * A.1, A.3), methods, content types and the DeleteOptions body.  No I/O,
 * so every verb and option is unit-tested without a server.
 */
#include "common/kapi.h"

#include <stdio.h>
#include <string.h>

const struct kapi_res kapi_res_pods = { "", "v1", "pods", true };

void
kapi_escape(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	unsigned char c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		        || (c >= '0' && c <= '9') || c == '-' || c == '.'
		        || c == '_' || c == '~') {
			buf_putc(out, (char)c);
		} else {
			buf_putc(out, '%');
			buf_putc(out, hex[c >> 4]);
			buf_putc(out, hex[c & 15]);
		}
	}
}

const char *
kapi_method(enum kapi_verb verb)
{
	switch (verb) {
	case KAPI_CREATE:
		return ("POST");
	case KAPI_UPDATE:
		return ("PUT");
	case KAPI_PATCH:
		return ("PATCH");
	case KAPI_DELETE:
		return ("DELETE");
	default:
		return ("GET");
	}
}

const char *
kapi_content_type(const struct kapi_req *req)
{
	static const char *const patch[] = {
		[KAPI_PATCH_MERGE] = "application/merge-patch+json",
		[KAPI_PATCH_JSON] = "application/json-patch+json",
		[KAPI_PATCH_STRATEGIC]
		= "application/strategic-merge-patch+json",
		[KAPI_PATCH_APPLY] = "application/apply-patch+yaml",
	};

	switch (req->verb) {
	case KAPI_CREATE:
	case KAPI_UPDATE:
	case KAPI_DELETE:
		return ("application/json");
	case KAPI_PATCH:
		if ((unsigned)req->patch_type >= 4) {
			return (NULL);
		}
		return (patch[req->patch_type]);
	default:
		return (NULL);
	}
}

static void
json_str(struct buf *out, const char *key, const char *v, bool *first)
{
	const char *p;

	buf_printf(out, "%s\"%s\":\"", *first ? "" : ",", key);
	for (p = v; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			buf_putc(out, '\\');
			buf_putc(out, *p);
		} else if ((unsigned char)*p < 0x20) {
			buf_printf(out, "\\u%04x", (unsigned char)*p);
		} else {
			buf_putc(out, *p);
		}
	}
	buf_putc(out, '"');
	*first = false;
}

int
kapi_delete_body(const struct kapi_req *req, struct buf *out)
{
	const struct kapi_delete_opts *d = &req->del;
	bool first = true, pre;

	pre = d->precondition_uid != NULL || d->precondition_rv != NULL;
	if (d->propagation_policy == NULL && !pre && !d->grace_period_set
	        && !req->dry_run) {
		return (-1);
	}
	buf_puts(out, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"");
	if (d->propagation_policy != NULL) {
		buf_putc(out, ',');
		json_str(out, "propagationPolicy", d->propagation_policy,
		        &first);
	}
	if (d->grace_period_set) {
		buf_printf(out, ",\"gracePeriodSeconds\":%ld",
		        d->grace_period_seconds);
	}
	if (req->dry_run) {
		buf_puts(out, ",\"dryRun\":[\"All\"]");
	}
	if (pre) {
		first = true;
		buf_puts(out, ",\"preconditions\":{");
		if (d->precondition_uid != NULL) {
			json_str(out, "uid", d->precondition_uid, &first);
		}
		if (d->precondition_rv != NULL) {
			json_str(out, "resourceVersion", d->precondition_rv,
			        &first);
		}
		buf_putc(out, '}');
	}
	buf_putc(out, '}');
	return (0);
}

static void
param(struct buf *out, bool *first, const char *key, const char *value)
{
	if (value == NULL) {
		return;
	}
	buf_putc(out, *first ? '?' : '&');
	buf_puts(out, key);
	buf_putc(out, '=');
	kapi_escape(out, value);
	*first = false;
}

static void
param_long(struct buf *out, bool *first, const char *key, long v)
{
	char num[32];

	if (v > 0) {
		snprintf(num, sizeof(num), "%ld", v);
		param(out, first, key, num);
	}
}

static void
list_params(struct buf *out, bool *first, const struct kapi_req *req)
{
	const struct kapi_list_opts *o = &req->list;
	bool watch = req->verb == KAPI_WATCH;

	if (watch) {
		param(out, first, "watch", "true");
	}
	param(out, first, "labelSelector", o->label_selector);
	param(out, first, "fieldSelector", o->field_selector);
	param(out, first, "resourceVersion", o->resource_version);
	param(out, first, "resourceVersionMatch", o->resource_version_match);
	if (!watch) {
		param_long(out, first, "limit", o->limit);
		param(out, first, "continue", o->cont);
	}
	if (watch && o->allow_watch_bookmarks) {
		param(out, first, "allowWatchBookmarks", "true");
	}
	if (watch && o->send_initial_events) {
		param(out, first, "sendInitialEvents", "true");
	}
	param_long(out, first, "timeoutSeconds", o->timeout_seconds);
}

static void
query(struct buf *out, const struct kapi_req *req)
{
	bool first = true;

	switch (req->verb) {
	case KAPI_GET:
		param(out, &first, "resourceVersion",
		        req->list.resource_version);
		break;
	case KAPI_LIST:
	case KAPI_WATCH:
		list_params(out, &first, req);
		break;
	case KAPI_CREATE:
	case KAPI_UPDATE:
	case KAPI_PATCH:
		param(out, &first, "dryRun", req->dry_run ? "All" : NULL);
		param(out, &first, "fieldManager", req->field_manager);
		if (req->verb == KAPI_PATCH
		        && req->patch_type == KAPI_PATCH_APPLY && req->force) {
			param(out, &first, "force", "true");
		}
		break;
	case KAPI_LOG:
		param(out, &first, "container", req->log.container);
		param_long(out, &first, "tailLines", req->log.tail_lines);
		param_long(out, &first, "limitBytes", req->log.limit_bytes);
		param(out, &first, "previous",
		        req->log.previous ? "true" : NULL);
		param(out, &first, "timestamps",
		        req->log.timestamps ? "true" : NULL);
		break;
	case KAPI_DELETE:
		break;
	}
}

/*
 * Whether s can stand as one path segment the API server reads back as s
 * (apimachinery's path-segment rule): not ".", "..", no '/' or '%' (which
 * would change the path or decode to something else), no control byte.
 * Empty strings are judged by the caller (the "required" checks).
 */
static bool
segment_ok(const char *s)
{
	if (s == NULL || *s == '\0') {
		return (true);
	}
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
		return (false);
	}
	for (; *s != '\0'; s++) {
		if (*s == '/' || *s == '%' || (unsigned char)*s < 0x20
		        || *s == 0x7f) {
			return (false);
		}
	}
	return (true);
}

/* Checks every part that becomes a path segment. */
static const char *
check_segments(const struct kapi_req *req, const struct kapi_res *res)
{
	if (!segment_ok(res->group) || !segment_ok(res->version)
	        || !segment_ok(res->plural)) {
		return ("resource is not a valid path segment");
	}
	if (!segment_ok(req->ns)) {
		return ("namespace is not a valid path segment");
	}
	if (!segment_ok(req->name)) {
		return ("name is not a valid path segment");
	}
	if (!segment_ok(req->subresource)
	        || (req->subresource != NULL && *req->subresource == '\0')) {
		return ("subresource is not a valid path segment");
	}
	return (NULL);
}

/* Checks the combination of verb, scope, namespace and name. */
static const char *
check(const struct kapi_req *req, const struct kapi_res *res)
{
	bool collection = req->verb == KAPI_LIST || req->verb == KAPI_CREATE;

	if ((unsigned)req->verb > KAPI_LOG) {
		return ("unknown verb");
	}
	if (res == NULL || res->plural == NULL || *res->plural == '\0') {
		return ("no resource");
	}
	if (!res->namespaced && req->ns != NULL) {
		return ("namespace given for a cluster-scoped resource");
	}
	if (res->namespaced && (req->ns == NULL || *req->ns == '\0')
	        && req->verb != KAPI_LIST && req->verb != KAPI_WATCH) {
		return ("namespace required");
	}
	if (collection && req->name != NULL) {
		return ("name given for a collection request");
	}
	if (!collection && req->verb != KAPI_WATCH
	        && (req->name == NULL || *req->name == '\0')) {
		return ("name required");
	}
	if (req->subresource != NULL && req->name == NULL) {
		return ("subresource without a name");
	}
	if (req->verb == KAPI_PATCH && (unsigned)req->patch_type > 3) {
		return ("unknown patch type");
	}
	return (check_segments(req, res));
}

int
kapi_url(const struct kapi_conf *conf, const struct kapi_req *req,
        struct buf *out, const char **why)
{
	const struct kapi_res *res = req->res;
	const char *version;

	if (req->verb == KAPI_LOG && res == NULL) {
		res = &kapi_res_pods;
	}
	if ((*why = check(req, res)) != NULL) {
		return (-1);
	}
	version = res->version != NULL ? res->version : "v1";
	buf_puts(out, conf->server != NULL ? conf->server : "");
	if (res->group == NULL || *res->group == '\0') {
		buf_puts(out, "/api/");
	} else {
		buf_puts(out, "/apis/");
		kapi_escape(out, res->group);
		buf_putc(out, '/');
	}
	kapi_escape(out, version);
	if (req->ns != NULL && *req->ns != '\0') {
		buf_puts(out, "/namespaces/");
		kapi_escape(out, req->ns);
	}
	buf_putc(out, '/');
	kapi_escape(out, res->plural);
	if (req->name != NULL) {
		buf_putc(out, '/');
		kapi_escape(out, req->name);
	}
	if (req->verb == KAPI_LOG) {
		buf_puts(out, "/log");
	} else if (req->subresource != NULL) {
		buf_putc(out, '/');
		kapi_escape(out, req->subresource);
	}
	query(out, req);
	return (0);
}
