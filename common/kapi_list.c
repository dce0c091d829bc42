/*
 * kapi_list.c: the decoder of LIST answers (kapi_list.h), beside the watch
 * decoder (kapi_watch.c).  Pure: no I/O, no allocation kept.
 */
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi_list.h"

/* Items of a list answer may lack apiVersion and kind (real servers leave
 * them out of built-in lists): they come from the list's own, so every
 * cached object names its kind (ownerReferences are built from them). */
static void
fill_type(json_object *item, json_object *doc)
{
	const char *lk = jx_get_str(doc, "kind");
	const char *av = jx_get_str(doc, "apiVersion");
	size_t n = lk != NULL ? strlen(lk) : 0;

	if (!json_object_is_type(item, json_type_object)) {
		return;
	}
	if (json_object_object_get(item, "apiVersion") == NULL && av != NULL) {
		json_object_object_add(
		        item, "apiVersion", json_object_new_string(av));
	}
	if (json_object_object_get(item, "kind") == NULL && n > 4
	        && strcmp(lk + n - 4, "List") == 0) {
		json_object_object_add(item, "kind",
		        json_object_new_string_len(lk, (int)(n - 4)));
	}
}

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end
	        && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	return (p);
}

/* Splits a list answer: every top-level member but "items" goes to a
 * small document (*doc, owned), the items array's text to [*ia, *ib)
 * (both NULL when absent).  Returns -1 when the text is not an object. */
static int
split_list(const char *p, const char *end, json_object **doc, const char **ia,
        const char **ib)
{
	struct buf b = BUF_INIT;
	const char *k, *v, *ve;
	size_t members = 0;

	*doc = NULL;
	*ia = *ib = NULL;
	p = skip_ws(p, end);
	if (p >= end || *p++ != '{') {
		return (-1);
	}
	buf_puts(&b, "{");
	for (;;) {
		p = skip_ws(p, end);
		if (p < end && *p == '}' && members == 0) {
			break;
		}
		k = p;
		if (p >= end || *p != '"'
		        || (p = jx_text_skip(p, end)) == NULL) {
			goto bad;
		}
		ve = skip_ws(p, end);
		if (ve >= end || *ve != ':') {
			goto bad;
		}
		v = skip_ws(ve + 1, end);
		if ((ve = jx_text_skip(v, end)) == NULL) {
			goto bad;
		}
		members++;
		if ((size_t)(p - k) == 7 && memcmp(k, "\"items\"", 7) == 0) {
			*ia = v;
			*ib = ve;
		} else {
			buf_printf(&b, "%s%.*s:%.*s", b.len > 1 ? "," : "",
			        (int)(p - k), k, (int)(ve - v), v);
		}
		p = skip_ws(ve, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}') {
			break;
		}
		goto bad;
	}
	buf_puts(&b, "}");
	*doc = jx_parse(b.data, b.len, 0, NULL, 0);
	buf_fini(&b);
	return (*doc != NULL ? 0 : -1);
bad:
	buf_fini(&b);
	return (-1);
}

/* Parses the one JSON value at p (json-c stops at its end, which goes to
 * *next), or NULL when it does not parse within [p, end). */
static json_object *
parse_one(struct json_tokener *tok, const char *p, const char *end,
        const char **next)
{
	json_object *o;

	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, p, (int)(end - p));
	if (o == NULL) {
		return (NULL);
	}
	*next = p + json_tokener_get_parse_end(tok);
	return (o);
}

/* An item nested deeper than the parser's limit: named to the skip
 * callback (a whole list never fails for one object). */
static void
skip_deep(const struct kapi_list_cb *cb, const char *p, const char *q,
        size_t idx)
{
	char name[512];

	if (cb->skip != NULL) {
		jx_text_name(p, q, name, sizeof(name));
		cb->skip(cb->arg, name, idx);
	}
}

/* Hands the items of [p, end) to the callbacks one at a time, in one pass
 * (the tokener says where each item ends).  Returns -1 when it is neither
 * an array nor null or an item does not parse. */
static int
items(const char *p, const char *end, json_object *doc,
        const struct kapi_list_cb *cb)
{
	struct json_tokener *tok;
	json_object *it;
	const char *next;
	size_t idx = 0;
	int rc = -1;

	if ((size_t)(end - p) == 4 && memcmp(p, "null", 4) == 0) {
		return (0);
	}
	if (*p != '[' || end - p > INT32_MAX) {
		return (-1);
	}
	p = skip_ws(p + 1, end);
	if (p < end && *p == ']') {
		return (0);
	}
	tok = json_tokener_new_ex(JX_DEFAULT_DEPTH);
	json_tokener_set_flags(tok,
	        JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS
	                | JSON_TOKENER_VALIDATE_UTF8);
	for (;; idx++) {
		it = parse_one(tok, p, end, &next);
		if (it == NULL
		        && json_tokener_get_error(tok)
		                == json_tokener_error_depth
		        && (next = jx_text_skip(p, end)) != NULL) {
			skip_deep(cb, p, next, idx);
		} else if (it == NULL) {
			break;
		} else {
			fill_type(it, doc);
			cb->item(cb->arg, it);
			json_object_put(it);
		}
		p = skip_ws(next, end);
		if (p < end && *p == ']') {
			rc = 0;
			break;
		}
		if (p >= end || *p != ',') {
			break;
		}
		p = skip_ws(p + 1, end);
	}
	json_tokener_free(tok);
	return (rc);
}

int
kapi_list_decode(const char *body, size_t len, json_object **doc,
        const struct kapi_list_cb *cb)
{
	const char *ia, *ib;

	*doc = NULL;
	/* JSON holds no raw NUL; json-c would take one for the end */
	if (body == NULL || memchr(body, '\0', len) != NULL
	        || split_list(body, body + len, doc, &ia, &ib) < 0) {
		return (-1);
	}
	if (ia != NULL && items(ia, ib, *doc, cb) < 0) {
		json_object_put(*doc);
		*doc = NULL;
		return (-1);
	}
	return (0);
}
