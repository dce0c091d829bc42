/*
 * kverb.c: kubesim's request dispatch.  Routes a request (kroute), checks
 * Accept and Content-Type (spec A.4), resolves the resource and its scope,
 * and answers the reads itself: get, list with selectors, pagination and
 * resourceVersion rules (B.2-B.4), the parameters of a watch (B.5; the
 * stream is kwatch.c) and pods/log.  Writes go to kwrite.c, discovery to
 * kdisc.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "common/b64.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "kubesim/kproto.h"
#include "kubesim/ksel.h"
#include "kubesim/ksrv.h"
#include "kubesim/ktable.h"

#define LIST_INVALID "ListOptions.meta.k8s.io \"\" is invalid: "

/* Whether one Accept entry can be answered with plain JSON. */
static bool
accept_entry(const char *e, size_t n)
{
	size_t tlen;

	while (n > 0 && (*e == ' ' || *e == '\t')) {
		e++;
		n--;
	}
	tlen = strcspn(e, ";,");
	if (tlen > n) {
		tlen = n;
	}
	while (tlen > 0 && e[tlen - 1] == ' ') {
		tlen--;
	}
	if ((tlen == 3 && strncmp(e, "*/*", 3) == 0)
	        || (tlen == 13 && strncasecmp(e, "application/*", 13) == 0)) {
		return (true);
	}
	if (tlen != 16 || strncasecmp(e, "application/json", 16) != 0) {
		return (false);
	}
	/* application/json;as=Table... asks for another representation */
	char *params = xstrndup(e + tlen, n - tlen);
	bool ok = strstr(params, "as=") == NULL;
	free(params);
	return (ok);
}

static bool
accept_ok(const char *accept)
{
	const char *p = accept;

	if (accept == NULL || accept[0] == '\0') {
		return (true);
	}
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		if (accept_entry(p, n)) {
			return (true);
		}
		p += n;
		if (*p == ',') {
			p++;
		}
	}
	return (false);
}

static void
not_found_page(struct kresp *rs)
{
	kresp_error(rs, 404, "NotFound",
	        "the server could not find the requested resource");
}

/* A protobuf body (kproto.h) as JSON.  NULL with an answer in rs. */
static json_object *
proto_object(const struct kreq *rq, struct kresp *rs)
{
	char err[256];
	json_object *o = NULL;

	switch (kproto_decode((const uint8_t *)rq->body, rq->body_len, &o, err,
	        sizeof(err))) {
	case KPROTO_OK:
		return (o);
	case KPROTO_EKIND:
		kresp_error(rs, 415, "UnsupportedMediaType",
		        "kubesim decodes protobuf bodies of v1 Namespace, "
		        "ConfigMap and Secret only (%s); send "
		        "application/json",
		        err);
		return (NULL);
	case KPROTO_EBAD:
		break;
	}
	kresp_error(
	        rs, 400, "BadRequest", "error decoding request body: %s", err);
	return (NULL);
}

static bool
media_is(const char *ct, size_t n, const char *type)
{
	return (ct != NULL && n == strlen(type)
	        && strncasecmp(ct, type, n) == 0);
}

/* The request body as JSON (or YAML, or protobuf).  NULL with an answer
 * in rs. */
static json_object *
body_object(const struct kreq *rq, struct kresp *rs)
{
	const char *ct = rq->ctype;
	size_t n = ct != NULL ? strcspn(ct, "; ") : 0;
	char err[256];
	json_object *o = NULL;

	if (media_is(ct, n, "application/json")) {
		o = jx_parse(rq->body, rq->body_len, 0, err, sizeof(err));
	} else if (media_is(ct, n, "application/yaml")) {
		o = yamlj_parse(rq->body, rq->body_len, err, sizeof(err));
	} else if (media_is(ct, n, KPROTO_MEDIA_TYPE)) {
		return (proto_object(rq, rs));
	} else {
		kresp_error(rs, 415, "UnsupportedMediaType",
		        "the body of the request was in an unknown format - "
		        "accepted media types include: application/json, "
		        "application/yaml, " KPROTO_MEDIA_TYPE);
		return (NULL);
	}
	if (o == NULL) {
		kresp_error(rs, 400, "BadRequest",
		        "error decoding request body: %s", err);
	}
	return (o);
}

static void
get_one(struct ksrv *ks, const struct kres *res, const struct kroute *rt,
        const struct kreq *rq, struct kresp *rs)
{
	const char *rvs = kreq_q(rq, "resourceVersion");
	uint64_t rv = 0;
	char *key;
	struct kitem *it;

	rs->verb = "get";
	if (rvs != NULL && rvs[0] != '\0') {
		if (ksrv_parse_rv(rvs, &rv) != 0) {
			kresp_error(rs, 400, "BadRequest",
			        "invalid resource version: %s", rvs);
			return;
		}
		if (rv > kstore_rv(ks->st) && ksrv_wait_rv(ks, rv, rs) != 0) {
			return;
		}
	}
	key = ksrv_key(res, rt->ns, rt->name);
	it = kstore_get(ksrv_coll(ks, res), key);
	free(key);
	if (it == NULL) {
		kresp_not_found(rs, res, rt->name);
		return;
	}
	if (ktable_wanted(res, rq->accept)) {
		char rvs2[24];
		snprintf(rvs2, sizeof(rvs2), "%" PRIu64, it->rv);
		json_object *t = ktable_new(res, true, rvs2, NULL);
		ktable_add(t, res, it->obj,
		        ktable_include(kreq_q(rq, "includeObject")));
		kresp_json(rs, 200, t);
		rs->ctype = ktable_content_type();
		json_object_put(t);
		return;
	}
	ksrv_send_item(rs, 200, res, it);
}

/* Selectors of a list or watch.  0, or -1 with a 400 in rs. */
static int
selectors(const struct kres *res, const struct kreq *rq, const char *name,
        struct ksel **ls, struct ksel_fields **fs, struct kresp *rs)
{
	char err[512];
	const char *fsq = kreq_q(rq, "fieldSelector");
	char *fstr;

	*ls = ksel_parse_labels(kreq_q(rq, "labelSelector"), err, sizeof(err));
	if (*ls == NULL) {
		kresp_error(rs, 400, "BadRequest", "%s", err);
		return (-1);
	}
	fstr = xstrdup(fsq != NULL ? fsq : "");
	*fs = ksel_parse_fields(fstr, (const char *const *)res->selectable,
	        res->plural, err, sizeof(err));
	if (*fs != NULL && name != NULL) {
		const char *pinned = ksel_fields_name(*fs);
		if (pinned != NULL && strcmp(pinned, name) != 0) {
			kresp_error(rs, 400, "BadRequest",
			        "fieldSelector metadata.name doesn't match "
			        "requested name");
			goto fail;
		}
		ksel_fields_free(*fs);
		free(fstr);
		fstr = xasprintf("%s%smetadata.name=%s", fsq ? fsq : "",
		        fsq && fsq[0] ? "," : "", name);
		*fs = ksel_parse_fields(fstr,
		        (const char *const *)res->selectable, res->plural, err,
		        sizeof(err));
	}
	if (*fs == NULL) {
		kresp_error(rs, 400, "BadRequest", "%s", err);
		goto fail;
	}
	free(fstr);
	return (0);
fail:
	free(fstr);
	ksel_free(*ls);
	ksel_fields_free(*fs);
	*ls = NULL;
	*fs = NULL;
	return (-1);
}

static bool
matches(struct ksel *ls, struct ksel_fields *fs, json_object *obj)
{
	return (ksel_match_labels(ls, jx_get(obj, "metadata.labels"))
	        && ksel_match_fields(fs, obj));
}

/* Continue tokens: base64url of {"v":"meta.k8s.io/v1","rv":N,"start":K}
 * where K is the last key returned. */
static char *
token_encode(uint64_t rv, const char *last)
{
	json_object *o = json_object_new_object();
	const char *js;
	char *out;
	size_t n;

	json_object_object_add(
	        o, "v", json_object_new_string("meta.k8s.io/v1"));
	json_object_object_add(o, "rv", json_object_new_int64((int64_t)rv));
	json_object_object_add(o, "start", json_object_new_string(last));
	js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	out = b64_encode(js, strlen(js));
	n = strlen(out);
	while (n > 0 && out[n - 1] == '=') {
		n--;
	}
	out[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	}
	json_object_put(o);
	return (out);
}

static int
token_decode(const char *tok, uint64_t *rv, char **last)
{
	size_t n = strlen(tok);
	char *in = xmalloc(n + 4);
	unsigned char *out = xmalloc(n + 4);
	json_object *o;
	int64_t r = 0;
	int len;

	if (n == 0 || n > 8192) {
		free(in);
		free(out);
		return (-1);
	}
	for (size_t i = 0; i < n; i++) {
		in[i] = tok[i] == '-' ? '+' : tok[i] == '_' ? '/' : tok[i];
	}
	while (n % 4 != 0) {
		in[n++] = '=';
	}
	in[n] = '\0';
	len = EVP_DecodeBlock(out, (unsigned char *)in, (int)n);
	free(in);
	while (len > 0 && out[len - 1] == '\0') {
		len--;
	}
	o = len > 0 ? jx_parse((char *)out, (size_t)len, 4, NULL, 0) : NULL;
	free(out);
	if (o == NULL || jx_get_int(o, "rv", &r) != 0 || r <= 0
	        || jx_get_str(o, "start") == NULL) {
		json_object_put(o);
		return (-1);
	}
	*rv = (uint64_t)r;
	*last = xstrdup(jx_get_str(o, "start"));
	json_object_put(o);
	return (0);
}

struct listq {
	const char *rvs, *match, *cont;
	uint64_t rv;
	int64_t limit;
	uint64_t snap; /* 0: now */
	char *after;   /* continue: last key returned */
};

static int
list_invalid(struct kresp *rs, const char *msg)
{
	kresp_error(rs, 422, "Invalid", LIST_INVALID "%s", msg);
	return (-1);
}

/* The option checks of spec B.3.  0, or -1 with an answer in rs. */
static int
list_validate(const struct kreq *rq, struct listq *q, struct kresp *rs)
{
	const char *lim = kreq_q(rq, "limit");

	q->rvs = kreq_q(rq, "resourceVersion");
	q->match = kreq_q(rq, "resourceVersionMatch");
	q->cont = kreq_q(rq, "continue");
	if (q->rvs != NULL && q->rvs[0] == '\0') {
		q->rvs = NULL;
	}
	if (q->match != NULL && q->match[0] == '\0') {
		q->match = NULL;
	}
	if (q->cont != NULL && q->cont[0] == '\0') {
		q->cont = NULL;
	}
	q->limit = lim != NULL ? strtoll(lim, NULL, 10) : 0;
	if (kreq_q(rq, "sendInitialEvents") != NULL) {
		return (list_invalid(rs,
		        "sendInitialEvents: Forbidden: "
		        "sendInitialEvents is forbidden for "
		        "list"));
	}
	if (q->match != NULL && strcmp(q->match, "Exact") != 0
	        && strcmp(q->match, "NotOlderThan") != 0) {
		kresp_error(rs, 422, "Invalid",
		        LIST_INVALID
		        "resourceVersionMatch: Unsupported value: "
		        "\"%s\": supported values: \"Exact\", "
		        "\"NotOlderThan\", \"\"",
		        q->match);
		return (-1);
	}
	if (q->match != NULL && q->rvs == NULL) {
		return (list_invalid(rs,
		        "resourceVersionMatch: Forbidden: "
		        "resourceVersionMatch is forbidden "
		        "unless resourceVersion is provided"));
	}
	if (q->match != NULL && q->cont != NULL) {
		return (list_invalid(rs,
		        "resourceVersionMatch: Forbidden: "
		        "resourceVersionMatch is forbidden "
		        "when continue is provided"));
	}
	if (q->rvs != NULL && ksrv_parse_rv(q->rvs, &q->rv) != 0) {
		kresp_error(rs, 400, "BadRequest",
		        "invalid resource version: %s", q->rvs);
		return (-1);
	}
	if (q->match != NULL && strcmp(q->match, "Exact") == 0 && q->rv == 0) {
		return (list_invalid(rs,
		        "resourceVersionMatch: Forbidden: "
		        "resourceVersionMatch "
		        "\"exact\" is forbidden for resourceVersion \"0\""));
	}
	if (q->cont != NULL && q->rv != 0) {
		kresp_error(rs, 400, "BadRequest",
		        "specifying resource version is not allowed when "
		        "using "
		        "continue");
		return (-1);
	}
	return (0);
}

static void
gone_list(struct kresp *rs)
{
	kresp_error(rs, 410, "Expired",
	        "The resourceVersion for the provided list is too old.");
}

/* Chooses the snapshot (B.3, B.4).  0, or -1 with an answer in rs. */
static int
list_snapshot(struct ksrv *ks, struct listq *q, struct kresp *rs)
{
	if (q->cont != NULL) {
		if (token_decode(q->cont, &q->snap, &q->after) != 0) {
			kresp_error(rs, 400, "BadRequest",
			        "invalid continue token: continue key is not "
			        "valid");
			return (-1);
		}
		if (q->snap < kstore_oldest_rv(ks->st)
		        || q->snap > kstore_rv(ks->st)) {
			json_object *st = kstatus_new(410, "Expired",
			        "The provided continue parameter is too old "
			        "to "
			        "display a consistent list result. You can "
			        "start a new list without the continue "
			        "parameter, or use the continue token in this "
			        "response to retrieve the remainder of the "
			        "results. Continuing with the provided token "
			        "results in an inconsistent list - objects "
			        "that were created, modified, or deleted "
			        "between the time the first chunk was "
			        "returned "
			        "and now may show up in the list.");
			char *t = token_encode(kstore_rv(ks->st), q->after);
			jx_set_path(st, "metadata.continue",
			        json_object_new_string(t));
			free(t);
			kresp_status(rs, st);
			return (-1);
		}
		return (0);
	}
	if (q->rv == 0) {
		return (0);
	}
	if (q->rv > kstore_rv(ks->st) && ksrv_wait_rv(ks, q->rv, rs) != 0) {
		return (-1);
	}
	bool exact = (q->match != NULL && strcmp(q->match, "Exact") == 0)
	        || (q->match == NULL && q->limit > 0);
	if (exact) {
		if (q->rv < kstore_oldest_rv(ks->st)) {
			gone_list(rs);
			return (-1);
		}
		q->snap = q->rv;
	}
	return (0);
}

/* The items of one page: indexes into items, and whether more remain. */
static size_t
list_select(struct listq *q, struct kitem **items, size_t n, struct ksel *ls,
        struct ksel_fields *fs, size_t *sel, bool *more)
{
	size_t count = 0;

	*more = false;
	for (size_t i = 0; i < n; i++) {
		if (q->after != NULL && strcmp(items[i]->key, q->after) <= 0) {
			continue;
		}
		if (!matches(ls, fs, items[i]->obj)) {
			continue;
		}
		if (q->limit > 0 && (int64_t)count == q->limit) {
			*more = true;
			break;
		}
		sel[count++] = i;
	}
	return (count);
}

static void
list_table(const struct kres *res, const struct kreq *rq, uint64_t snap,
        const char *cont, struct kitem **items, const size_t *sel,
        size_t count, struct kresp *rs)
{
	char rv[24];
	json_object *t;
	enum ktable_include inc = ktable_include(kreq_q(rq, "includeObject"));

	snprintf(rv, sizeof(rv), "%" PRIu64, snap);
	t = ktable_new(res, true, rv, cont);
	for (size_t k = 0; k < count; k++) {
		ktable_add(t, res, items[sel[k]]->obj, inc);
	}
	kresp_json(rs, 200, t);
	rs->ctype = ktable_content_type();
	json_object_put(t);
}

static void
list_render(struct ksrv *ks, const struct kres *res, const struct kreq *rq,
        struct listq *q, struct kitem **items, size_t n, struct ksel *ls,
        struct ksel_fields *fs, struct kresp *rs)
{
	uint64_t snap = q->snap != 0 ? q->snap : kstore_rv(ks->st);
	size_t *sel = xreallocarray(NULL, n + 1, sizeof(*sel));
	bool more;
	size_t count = list_select(q, items, n, ls, fs, sel, &more);
	char *cont
	        = more ? token_encode(snap, items[sel[count - 1]]->key) : NULL;
	struct buf *b = &rs->body;

	if (ktable_wanted(res, rq->accept)) {
		list_table(res, rq, snap, cont, items, sel, count, rs);
		free(cont);
		free(sel);
		return;
	}
	buf_reset(b);
	buf_puts(b, "{\"items\":[");
	for (size_t k = 0; k < count; k++) {
		buf_puts(b, k > 0 ? "," : "");
		buf_append(b, items[sel[k]]->json, items[sel[k]]->len);
	}
	buf_printf(b,
	        "],\"kind\":\"%s\",\"apiVersion\":\"%s\","
	        "\"metadata\":{\"resourceVersion\":\"%" PRIu64 "\"",
	        res->list_kind, res->api_version, snap);
	if (cont != NULL) {
		buf_printf(b, ",\"continue\":\"%s\"", cont);
	}
	buf_puts(b, "}}");
	rs->code = 200;
	rs->ctype = "application/json";
	free(cont);
	free(sel);
}

static void
list(struct ksrv *ks, const struct kres *res, const struct kroute *rt,
        const struct kreq *rq, struct kresp *rs)
{
	struct listq q = { 0 };
	struct ksel *ls = NULL;
	struct ksel_fields *fs = NULL;
	struct kitem **items = NULL;
	size_t n = 0;
	char *prefix = rt->ns != NULL ? xasprintf("%s/", rt->ns) : NULL;

	rs->verb = "list";
	if (list_validate(rq, &q, rs) == 0
	        && selectors(res, rq, NULL, &ls, &fs, rs) == 0
	        && list_snapshot(ks, &q, rs) == 0) {
		if (kstore_list(ks->st, ksrv_coll(ks, res), prefix, q.snap,
		            &items, &n)
		        != 0) {
			gone_list(rs);
		} else {
			list_render(ks, res, rq, &q, items, n, ls, fs, rs);
		}
	}
	for (size_t i = 0; i < n; i++) {
		kitem_unref(items[i]);
	}
	free(items);
	free(prefix);
	free(q.after);
	ksel_free(ls);
	ksel_fields_free(fs);
}

static int64_t
watch_deadline(struct ksrv *ks, const struct kreq *rq)
{
	const char *ts = kreq_q(rq, "timeoutSeconds");
	int64_t now = timefmt_now_ms_mono();
	long long t = ts != NULL ? strtoll(ts, NULL, 10) : 0;

	if (t > 0) {
		return (now + t * 1000);
	}
	if (ks->opts.watch_timeout_ms > 0) {
		return (now + ks->opts.watch_timeout_ms);
	}
	ks->rnd = ks->rnd * 6364136223846793005ULL + 1442695040888963407ULL;
	return (now + 1800000 + (int64_t)((ks->rnd >> 33) % 1800000));
}

/* The start of a watch (B.5).  0, or -1 with an answer in rs. */
static int
watch_start(struct ksrv *ks, const struct kreq *rq, struct kwatch_spec *sp,
        struct kresp *rs)
{
	const char *rvs = kreq_q(rq, "resourceVersion");
	const char *match = kreq_q(rq, "resourceVersionMatch");
	const char *sie = kreq_q(rq, "sendInitialEvents");
	bool si = kroute_qbool(sie);
	uint64_t rv = 0;

	if (match != NULL && match[0] == '\0') {
		match = NULL;
	}
	if (match != NULL && sie == NULL) {
		return (list_invalid(rs,
		        "resourceVersionMatch: Forbidden: "
		        "resourceVersionMatch is forbidden for "
		        "watch unless sendInitialEvents is "
		        "provided"));
	}
	if (si && (match == NULL || strcmp(match, "NotOlderThan") != 0)) {
		return (list_invalid(rs,
		        "sendInitialEvents: Forbidden: "
		        "sendInitialEvents requires setting "
		        "resourceVersionMatch to NotOlderThan"));
	}
	if (rvs != NULL && rvs[0] != '\0' && ksrv_parse_rv(rvs, &rv) != 0) {
		kresp_error(rs, 422, "Invalid",
		        LIST_INVALID "resourceVersion: Invalid value: \"%s\": "
		                     "invalid resource version",
		        rvs);
		return (-1);
	}
	sp->bookmarks = kroute_qbool(kreq_q(rq, "allowWatchBookmarks"));
	if (si || rv == 0) {
		if (rv > kstore_rv(ks->st) && ksrv_wait_rv(ks, rv, rs) != 0) {
			return (-1);
		}
		sp->initial = true;
		sp->initial_bookmark = si && sp->bookmarks;
		sp->start_rv = kstore_rv(ks->st);
		return (0);
	}
	sp->start_rv = rv;
	sp->too_old = rv < kstore_oldest_rv(ks->st);
	return (0);
}

static void
watch(struct ksrv *ks, const struct kres *res, const struct kroute *rt,
        const struct kreq *rq, struct kresp *rs)
{
	struct kwatch_spec sp = { 0 };

	rs->verb = "watch";
	sp.res = res;
	if (watch_start(ks, rq, &sp, rs) != 0
	        || selectors(res, rq, rt->name, &sp.labels, &sp.fields, rs)
	                != 0) {
		return;
	}
	sp.ns_prefix = rt->ns != NULL ? xasprintf("%s/", rt->ns) : NULL;
	sp.deadline_ms = watch_deadline(ks, rq);
	sp.table = ktable_wanted(res, rq->accept)
	        ? (int)ktable_include(kreq_q(rq, "includeObject"))
	        : -1;
	rs->code = 200;
	rs->ctype = sp.table >= 0 ? ktable_content_type() : "application/json";
	rs->rv = sp.start_rv;
	rs->watch = kwatch_new(ks, &sp);
}

/* The container whose log is asked for.  NULL with an answer in rs. */
static const char *
log_container(json_object *pod, const char *want, struct kresp *rs)
{
	json_object *cs = jx_get(pod, "spec.containers");
	size_t n = cs != NULL && json_object_is_type(cs, json_type_array)
	        ? json_object_array_length(cs)
	        : 0;
	struct buf names = BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		const char *name
		        = jx_get_str(json_object_array_get_idx(cs, i), "name");
		if (name != NULL && want != NULL && strcmp(name, want) == 0) {
			buf_fini(&names);
			return (name);
		}
		buf_printf(&names, "%s%s", i > 0 ? " " : "", name ? name : "");
	}
	if (want == NULL && n == 1) {
		buf_fini(&names);
		return (jx_get_str(json_object_array_get_idx(cs, 0), "name"));
	}
	if (want == NULL) {
		kresp_error(rs, 400, "BadRequest",
		        "a container name must be specified for pod %s, "
		        "choose "
		        "one of: [%s]",
		        jx_get_str(pod, "metadata.name"), buf_str(&names));
	} else {
		kresp_error(rs, 400, "BadRequest",
		        "container %s is not valid for pod %s", want,
		        jx_get_str(pod, "metadata.name"));
	}
	buf_fini(&names);
	return (NULL);
}

/* The last n lines of text (all when n < 0). */
static const char *
tail(const char *text, long long n)
{
	const char *p = text + strlen(text);

	if (n < 0) {
		return (text);
	}
	if (n == 0) {
		return (p);
	}
	if (p > text && p[-1] == '\n') {
		p--;
	}
	for (; p > text; p--) {
		if (p[-1] == '\n' && --n == 0) {
			return (p);
		}
	}
	return (text);
}

static void
pod_log(struct ksrv *ks, const struct kres *res, const struct kroute *rt,
        const struct kreq *rq, struct kresp *rs)
{
	char *key = ksrv_key(res, rt->ns, rt->name);
	struct kitem *it = kstore_get(ksrv_coll(ks, res), key);
	const char *c, *text, *tl = kreq_q(rq, "tailLines");
	const char *phase;
	long long lb;

	free(key);
	rs->verb = "get";
	if (it == NULL) {
		kresp_not_found(rs, res, rt->name);
		return;
	}
	c = log_container(it->obj, kreq_q(rq, "container"), rs);
	if (c == NULL) {
		return;
	}
	text = ksrv_log_get(ks, rt->ns, rt->name, c);
	phase = jx_get_str(it->obj, "status.phase");
	if (text == NULL && (phase == NULL || strcmp(phase, "Pending") == 0)) {
		kresp_error(rs, 400, "BadRequest",
		        "container \"%s\" in pod \"%s\" is waiting to start: "
		        "ContainerCreating",
		        c, rt->name);
		return;
	}
	rs->code = 200;
	rs->ctype = "text/plain";
	buf_reset(&rs->body);
	buf_puts(&rs->body,
	        tail(text != NULL ? text : "",
	                tl != NULL ? strtoll(tl, NULL, 10) : -1));
	/* limitBytes: the first N bytes of what would be sent */
	lb = kreq_q(rq, "limitBytes") != NULL
	        ? strtoll(kreq_q(rq, "limitBytes"), NULL, 10)
	        : 0;
	if (lb > 0 && (size_t)lb < rs->body.len) {
		rs->body.len = (size_t)lb;
		rs->body.data[lb] = '\0';
	}
}

static bool
is_get(const struct kreq *rq)
{
	return (strcmp(rq->method, "GET") == 0
	        || strcmp(rq->method, "HEAD") == 0);
}

static void
method_not_allowed(
        struct kresp *rs, const struct kreq *rq, const struct kres *res)
{
	kresp_error(rs, 405, "MethodNotAllowed",
	        "%s is not supported on resources of kind \"%s\"", rq->method,
	        res->kind);
}

/* POST, PUT, PATCH, DELETE. */
static void
write_verb(struct ksrv *ks, const struct kres *res, const struct kroute *rt,
        const struct kreq *rq, struct kresp *rs)
{
	bool status = rt->sub != NULL && strcmp(rt->sub, "status") == 0;
	const char *m = rq->method;
	json_object *body;

	if (strcmp(m, "PATCH") == 0 && rt->name != NULL) {
		kwrite_patch(ks, res, rt->ns, rt->name, status, rq, rs);
	} else if (strcmp(m, "DELETE") == 0 && rt->name != NULL && !status) {
		kwrite_delete(ks, res, rt->ns, rt->name, NULL, rq, rs);
	} else if (strcmp(m, "DELETE") == 0 && rt->name == NULL) {
		kwrite_delete_collection(ks, res, rt->ns, rq, rs);
	} else if ((strcmp(m, "POST") == 0 && rt->name == NULL)
	        || (strcmp(m, "PUT") == 0 && rt->name != NULL)) {
		rs->verb = m[1] == 'O' ? "create" : "update";
		body = body_object(rq, rs);
		if (body == NULL) {
			return;
		}
		if (m[1] == 'O') {
			kwrite_create(ks, res, rt->ns, body, rq, rs);
		} else {
			kwrite_update(ks, res, rt->ns, rt->name, body, status,
			        rq, rs);
		}
		json_object_put(body);
	} else {
		method_not_allowed(rs, rq, res);
	}
}

/* Resolves the resource of a path and checks its scope and
 * subresource.  NULL with an answer in rs. */
static const struct kres *
resolve(struct ksrv *ks, const struct kroute *rt, const struct kreq *rq,
        struct kresp *rs)
{
	const struct kres *res
	        = kres_find(ks->reg, rt->group, rt->version, rt->plural);
	bool ns = res != NULL && (res->flags & KRES_NAMESPACED);

	if (res == NULL || (!ns && rt->ns != NULL)
	        || (ns && rt->name != NULL && rt->ns == NULL)) {
		not_found_page(rs);
		return (NULL);
	}
	if (rt->sub == NULL) {
		return (res);
	}
	if ((strcmp(rt->sub, "status") == 0 && res->flags & KRES_STATUS)
	        || (strcmp(rt->sub, "log") == 0 && res->flags & KRES_LOG
	                && is_get(rq))) {
		return (res);
	}
	not_found_page(rs);
	return (NULL);
}

static void
resource(struct ksrv *ks, const struct kroute *rt, const struct kreq *rq,
        struct kresp *rs)
{
	const struct kres *res = resolve(ks, rt, rq, rs);
	bool w = rt->watch_path || kroute_qbool(kreq_q(rq, "watch"));

	if (res == NULL) {
		return;
	}
	if (!is_get(rq)) {
		write_verb(ks, res, rt, rq, rs);
	} else if (rt->sub != NULL && strcmp(rt->sub, "log") == 0) {
		pod_log(ks, res, rt, rq, rs);
	} else if (w) {
		watch(ks, res, rt, rq, rs);
	} else if (rt->name != NULL) {
		get_one(ks, res, rt, rq, rs);
	} else {
		list(ks, res, rt, rq, rs);
	}
}

const char *
kverb_classify(const struct kreq *rq, char **plural)
{
	struct kroute rt;
	const char *m = rq->method, *verb = "discovery";

	kroute_parse(rq->path, &rt);
	*plural = NULL;
	if (rt.kind == KROUTE_RESOURCE) {
		*plural = rt.plural;
		rt.plural = NULL;
		if (is_get(rq)) {
			verb = rt.watch_path
			                || kroute_qbool(kreq_q(rq, "watch"))
			        ? "watch"
			        : rt.name != NULL ? "get"
			                          : "list";
		} else if (strcmp(m, "POST") == 0) {
			verb = "create";
		} else if (strcmp(m, "PUT") == 0) {
			verb = "update";
		} else if (strcmp(m, "PATCH") == 0) {
			verb = "patch";
		} else if (strcmp(m, "DELETE") == 0) {
			verb = rt.name != NULL ? "delete" : "deletecollection";
		}
	}
	kroute_fini(&rt);
	return (verb);
}

void
kverb_handle(struct ksrv *ks, const struct kreq *rq, struct kresp *rs)
{
	struct kroute rt;

	kroute_parse(rq->path, &rt);
	if (rt.kind == KROUTE_OPENAPI_V2 && rq->accept != NULL
	        && strstr(rq->accept, "json") == NULL
	        && strstr(rq->accept, "*/*") == NULL) {
		/* v2 as JSON only: a protobuf-only client is told so */
		kresp_error(rs, 406, "NotAcceptable",
		        "only the following media types are accepted: "
		        "application/json");
	} else if (rt.kind == KROUTE_OPENAPI_V2) {
		kdisc_handle(ks, rq, &rt, rs);
	} else if (rt.kind == KROUTE_NONE || rt.kind == KROUTE_ADMIN) {
		rs->code = 404;
		rs->ctype = "text/plain; charset=utf-8";
		buf_puts(&rs->body, "404 page not found\n");
	} else if (!accept_ok(rq->accept)) {
		kresp_error(rs, 406, "NotAcceptable",
		        "only the following media types are accepted: "
		        "application/json, application/yaml");
	} else if (rt.kind != KROUTE_RESOURCE) {
		kdisc_handle(ks, rq, &rt, rs);
	} else {
		kstore_lock(ks->st);
		resource(ks, &rt, rq, rs);
		kstore_unlock(ks->st);
	}
	kroute_fini(&rt);
}
