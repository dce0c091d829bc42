/*
 * view.c: the worker side of view requests: sends one VIEW_REQ, waits for
 * the VIEW_REPLY with the same id, answering heartbeats meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/view.h"

struct view {
	struct ipc_sock *s;
	int timeout_ms;
	int64_t next_id;
	bool quit;
};

struct view *
view_new(struct ipc_sock *s, int timeout_ms)
{
	struct view *v = xcalloc(1, sizeof(*v));

	v->s = s;
	v->timeout_ms = timeout_ms;
	v->next_id = 1;
	return (v);
}

void
view_free(struct view *v)
{
	free(v);
}

bool
view_quit(const struct view *v)
{
	return (v->quit);
}

/* Handles a message that is not our reply.  Returns -1 to stop waiting. */
static int
other(struct view *v, struct ipc_msg *m, char *err, size_t errlen)
{
	int64_t seq;

	if (m->type == IPC_HEARTBEAT && ipc_heartbeat_read(m, &seq) == 0) {
		json_object *hb = ipc_heartbeat_new(seq);
		ipc_sock_send(v->s, IPC_HEARTBEAT, m->reqid, hb);
		json_object_put(hb);
		return (0);
	}
	if (m->type == IPC_QUIT) {
		v->quit = true;
		errmsg(err, errlen, "view: the supervisor asked to quit");
		return (-1);
	}
	errmsg(err, errlen, "view: unexpected %s while waiting for a reply",
	        ipc_type_name(m->type));
	return (-1);
}

/* Sends req and waits for its reply (filled into *msg, *rep). */
static int
roundtrip(struct view *v, struct ipc_view_req *req, struct ipc_msg *msg,
        struct ipc_view_reply *rep, char *err, size_t errlen)
{
	int64_t deadline = timefmt_now_ms_mono() + v->timeout_ms;
	json_object *body;

	req->id = v->next_id++;
	body = ipc_view_req_new(req);
	if (ipc_sock_send(v->s, IPC_VIEW_REQ, 0, body) != IPC_SOCK_OK) {
		json_object_put(body);
		errmsg(err, errlen, "view: cannot send the request");
		return (-1);
	}
	json_object_put(body);
	for (;;) {
		int64_t left = deadline - timefmt_now_ms_mono();
		if (left <= 0) {
			errmsg(err, errlen, "view: no reply within %d ms",
			        v->timeout_ms);
			return (-1);
		}
		if (ipc_sock_recv_wait(v->s, (int)left, msg, err, errlen)
		        != IPC_SOCK_OK) {
			continue;
		}
		if (msg->type == IPC_VIEW_REPLY
		        && ipc_view_reply_read(msg, rep) == 0
		        && rep->id == req->id) {
			return (0);
		}
		int rc = msg->type == IPC_VIEW_REPLY
		        ? 0
		        : other(v, msg, err, errlen);
		ipc_msg_fini(msg);
		if (rc != 0) {
			return (-1);
		}
	}
}

/* Runs req; on success hands the reply to take() while it is alive. */
static int
ask(struct view *v, struct ipc_view_req *req,
        int (*take)(const struct ipc_view_reply *, void *), void *arg,
        char *err, size_t errlen)
{
	struct ipc_msg msg = { 0 };
	struct ipc_view_reply rep;
	int rc;

	if (roundtrip(v, req, &msg, &rep, err, errlen) != 0) {
		return (-1);
	}
	if (rep.status == IPC_VS_NOT_FOUND) {
		rc = 1;
	} else if (rep.status == IPC_VS_ERROR) {
		errmsg(err, errlen, "view: %s",
		        rep.message != NULL ? rep.message : "error");
		rc = -1;
	} else {
		rc = take(&rep, arg);
		if (rc != 0) {
			errmsg(err, errlen, "view: malformed reply");
		}
	}
	ipc_msg_fini(&msg);
	return (rc);
}

static int
take_object(const struct ipc_view_reply *rep, void *arg)
{
	if (rep->object == NULL) {
		return (-1);
	}
	*(json_object **)arg = json_object_get(rep->object);
	return (0);
}

static int
take_items(const struct ipc_view_reply *rep, void *arg)
{
	if (rep->items == NULL) {
		return (-1);
	}
	*(json_object **)arg = json_object_get(rep->items);
	return (0);
}

static int
take_text(const struct ipc_view_reply *rep, void *arg)
{
	*(char **)arg = xstrdup(rep->text != NULL ? rep->text : "");
	return (0);
}

int
view_get(struct view *v, const struct ipc_res *res, const char *ns,
        const char *name, json_object **out, char *err, size_t errlen)
{
	struct ipc_view_req req = { .what = IPC_VIEW_GET,
		.res = *res,
		.has_res = true,
		.namespace = ns,
		.name = name,
		.tail_lines = -1 };

	*out = NULL;
	return (ask(v, &req, take_object, out, err, errlen));
}

int
view_list(struct view *v, const struct ipc_res *res, const char *ns,
        const char *selector, json_object **items, char *err, size_t errlen)
{
	return (view_list_fields(
	        v, res, ns, selector, NULL, 0, items, err, errlen));
}

/* Whether every item is a row of n values (n > 0) or an object (n 0). */
static bool
items_shaped(json_object *items, size_t n)
{
	for (size_t i = 0; i < json_object_array_length(items); i++) {
		json_object *e = json_object_array_get_idx(items, i);
		if (n == 0 ? !json_object_is_type(e, json_type_object)
		           : !json_object_is_type(e, json_type_array)
		                        || json_object_array_length(e) != n) {
			return (false);
		}
	}
	return (true);
}

int
view_list_fields(struct view *v, const struct ipc_res *res, const char *ns,
        const char *selector, const char *const *fields, size_t n,
        json_object **items, char *err, size_t errlen)
{
	struct ipc_view_req req = { .what = IPC_VIEW_LIST,
		.res = *res,
		.has_res = true,
		.namespace = ns,
		.label_selector = selector,
		.tail_lines = -1,
		.nfields = n };
	int rc;

	*items = NULL;
	if (n > IPC_FIELDS_MAX) {
		errmsg(err, errlen, "view: too many fields");
		return (-1);
	}
	for (size_t i = 0; i < n; i++) {
		if (!ipc_field_valid(fields[i])) {
			errmsg(err, errlen, "view: invalid field path");
			return (-1);
		}
		req.fields[i] = fields[i];
	}
	rc = ask(v, &req, take_items, items, err, errlen);
	if (rc == 0 && !items_shaped(*items, n)) {
		json_object_put(*items);
		*items = NULL;
		errmsg(err, errlen,
		        "view: malformed reply (items of another "
		        "shape than asked)");
		return (-1);
	}
	return (rc);
}

const char *
view_row_str(json_object *row, size_t i)
{
	json_object *v = json_object_array_get_idx(row, i);

	return (json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : NULL);
}

int
view_secret_meta(struct view *v, const char *ns, const char *name,
        json_object **out, char *err, size_t errlen)
{
	struct ipc_view_req req = { .what = IPC_VIEW_SECRET_META,
		.namespace = ns,
		.name = name,
		.tail_lines = -1 };

	*out = NULL;
	return (ask(v, &req, take_object, out, err, errlen));
}

int
view_pod_log(struct view *v, const char *ns, const char *name,
        const char *container, int tail_lines, char **text, char *err,
        size_t errlen)
{
	struct ipc_view_req req = { .what = IPC_VIEW_POD_LOG,
		.namespace = ns,
		.name = name,
		.container = container,
		.tail_lines = tail_lines };

	*text = NULL;
	return (ask(v, &req, take_text, text, err, errlen));
}

struct bytes {
	unsigned char *data;
	size_t len;
};

static int
take_data(const struct ipc_view_reply *rep, void *arg)
{
	struct bytes *b = arg;

	if (rep->data == NULL) {
		return (-1);
	}
	return (ipc_b64_decode(rep->data, &b->data, &b->len));
}

int
view_zoneinfo(struct view *v, const char *name, unsigned char **data,
        size_t *len, char *err, size_t errlen)
{
	struct ipc_view_req req = {
		.what = IPC_VIEW_ZONEINFO, .name = name, .tail_lines = -1
	};
	struct bytes b = { NULL, 0 };
	int rc;

	*data = NULL;
	*len = 0;
	if (!ipc_zone_name_valid(name)) {
		errmsg(err, errlen, "view: invalid time zone name");
		return (-1);
	}
	rc = ask(v, &req, take_data, &b, err, errlen);
	*data = b.data;
	*len = b.len;
	return (rc);
}
