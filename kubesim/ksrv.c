/*
 * ksrv.c: kubesim's server context (store, registry, options, the
 * namespaces that exist at start, pod logs) and the small helpers every
 * handler shares: object keys, timestamps, uids, resourceVersion parsing,
 * sending a stored item, waiting for a future resourceVersion.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "kubesim/ksrv.h"

struct ksrv_log {
	char *ns, *pod, *container, *text;
};

static const char *const initial_ns[] = { "default", "kube-system",
	"kube-public", "kube-node-lease", "sympozium-system", NULL };

static void
make_namespaces(struct ksrv *ks)
{
	const struct kres *res = kres_find(ks->reg, "", "v1", "namespaces");

	for (size_t i = 0; initial_ns[i] != NULL; i++) {
		json_object *o = json_object_new_object();
		json_object *md = json_object_new_object();

		json_object_object_add(
		        o, "apiVersion", json_object_new_string("v1"));
		json_object_object_add(
		        o, "kind", json_object_new_string("Namespace"));
		json_object_object_add(
		        md, "name", json_object_new_string(initial_ns[i]));
		json_object_object_add(o, "metadata", md);
		kwrite_create(ks, res, NULL, o, NULL, NULL);
		json_object_put(o);
	}
}

struct ksrv *
ksrv_new(const struct ksrv_opts *opts)
{
	struct ksrv *ks = xcalloc(1, sizeof(*ks));

	ks->opts = *opts;
	ks->st = kstore_new(opts->watch_history, 100);
	ks->reg = kres_reg_new();
	ks->addr = xstrdup("127.0.0.1:6443");
	if (getrandom(&ks->rnd, sizeof(ks->rnd), 0) != sizeof(ks->rnd)) {
		ks->rnd = (uint64_t)time(NULL);
	}
	kstore_lock(ks->st);
	make_namespaces(ks);
	kstore_unlock(ks->st);
	return (ks);
}

void
ksrv_free(struct ksrv *ks)
{
	if (ks == NULL) {
		return;
	}
	for (size_t i = 0; i < ks->nlogs; i++) {
		free(ks->logs[i].ns);
		free(ks->logs[i].pod);
		free(ks->logs[i].container);
		free(ks->logs[i].text);
	}
	free(ks->logs);
	kstore_free(ks->st);
	kres_reg_free(ks->reg);
	free(ks->addr);
	free(ks);
}

const char *
kreq_q(const struct kreq *rq, const char *name)
{
	if (rq == NULL) {
		return (NULL);
	}
	for (size_t i = 0; i < rq->nq; i++) {
		if (strcmp(rq->q[i].k, name) == 0) {
			return (rq->q[i].v != NULL ? rq->q[i].v : "");
		}
	}
	return (NULL);
}

char *
ksrv_key(const struct kres *res, const char *ns, const char *name)
{
	if (res->flags & KRES_NAMESPACED) {
		return (xasprintf("%s/%s", ns != NULL ? ns : "", name));
	}
	return (xstrdup(name));
}

struct kstore_coll *
ksrv_coll(struct ksrv *ks, const struct kres *res)
{
	return (kstore_coll(ks->st, res->coll, true));
}

void
ksrv_now(char out[32])
{
	/* not time(): its coarse clock lags a tick behind, so an object
	 * created just after a second began would carry the one before */
	timefmt_rfc3339(timefmt_now_us_real() / 1000000, out);
}

void
ksrv_uid(char out[37])
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != sizeof(b)) {
		for (size_t i = 0; i < sizeof(b); i++) {
			b[i] = (unsigned char)rand();
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37,
	        "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	        "%02x%02x%02x%02x%02x%02x",
	        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
	        b[10], b[11], b[12], b[13], b[14], b[15]);
}

int
ksrv_parse_rv(const char *s, uint64_t *rv)
{
	uint64_t v = 0;

	if (s == NULL || s[0] == '\0' || strlen(s) > 19) {
		return (-1);
	}
	if (s[0] == '0' && s[1] != '\0') {
		return (-1);
	}
	for (const char *p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9') {
			return (-1);
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*rv = v;
	return (0);
}

void
ksrv_send_item(struct kresp *rs, int code, const struct kres *res,
        const struct kitem *it)
{
	const char *av = jx_get_str(it->obj, "apiVersion");

	rs->code = code;
	rs->ctype = "application/json";
	buf_reset(&rs->body);
	if (av == NULL || strcmp(av, res->api_version) == 0) {
		buf_append(&rs->body, it->json, it->len);
		return;
	}
	json_object *copy = NULL;
	json_object_deep_copy(it->obj, &copy, NULL);
	json_object_object_add(
	        copy, "apiVersion", json_object_new_string(res->api_version));
	kresp_json(rs, code, copy);
	json_object_put(copy);
}

int
ksrv_wait_rv(struct ksrv *ks, uint64_t rv, struct kresp *rs)
{
	uint64_t cur = kstore_rv(ks->st);
	uint64_t epoch = kstore_epoch(ks->st);
	int64_t deadline = timefmt_now_ms_mono() + ks->opts.too_large_wait_ms;

	while (cur < rv && !ks->stopping) {
		kstore_unlock(ks->st);
		int r = kstore_wait(ks->st, rv - 1, &epoch, deadline);
		kstore_lock(ks->st);
		cur = kstore_rv(ks->st);
		if (r == 0) {
			break;
		}
	}
	if (cur >= rv) {
		return (0);
	}
	char msg[128];
	snprintf(msg, sizeof(msg),
	        "Timeout: Too large resource version: %" PRIu64
	        ", current: %" PRIu64,
	        rv, cur);
	json_object *st = kstatus_new(504, "Timeout", msg);
	struct kschema_cause c = { .field = NULL,
		.reason = (char *)(uintptr_t) "ResourceVersionTooLarge",
		.message = (char *)(uintptr_t) "Too large resource version" };
	kstatus_causes(st, &c, 1);
	kstatus_retry(st, 1);
	kresp_status(rs, st);
	return (-1);
}

static struct ksrv_log *
log_find(struct ksrv *ks, const char *ns, const char *pod, const char *c)
{
	for (size_t i = 0; i < ks->nlogs; i++) {
		struct ksrv_log *l = &ks->logs[i];

		if (strcmp(l->ns, ns) == 0 && strcmp(l->pod, pod) == 0
		        && strcmp(l->container, c) == 0) {
			return (l);
		}
	}
	return (NULL);
}

static void
log_remove_pod(struct ksrv *ks, const char *ns, const char *pod)
{
	size_t j = 0;

	for (size_t i = 0; i < ks->nlogs; i++) {
		struct ksrv_log *l = &ks->logs[i];

		if (strcmp(l->ns, ns) == 0 && strcmp(l->pod, pod) == 0) {
			free(l->ns);
			free(l->pod);
			free(l->container);
			free(l->text);
			continue;
		}
		ks->logs[j++] = *l;
	}
	ks->nlogs = j;
}

void
ksrv_log_set(struct ksrv *ks, const char *ns, const char *pod,
        const char *container, const char *text)
{
	struct ksrv_log *l;

	if (text == NULL) {
		log_remove_pod(ks, ns, pod);
		return;
	}
	l = log_find(ks, ns, pod, container);
	if (l != NULL) {
		free(l->text);
		l->text = xstrdup(text);
		return;
	}
	ks->logs = xreallocarray(ks->logs, ks->nlogs + 1, sizeof(*ks->logs));
	l = &ks->logs[ks->nlogs++];
	l->ns = xstrdup(ns);
	l->pod = xstrdup(pod);
	l->container = xstrdup(container);
	l->text = xstrdup(text);
}

const char *
ksrv_log_get(struct ksrv *ks, const char *ns, const char *pod,
        const char *container)
{
	struct ksrv_log *l = log_find(ks, ns, pod, container);

	return (l != NULL ? l->text : NULL);
}
