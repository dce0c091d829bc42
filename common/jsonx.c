/*
 * jsonx.c: json-c helpers (jsonx.h): dotted-path getters and setters,
 * semantic equality, stripped copies, compact serialisation, a strict,
 * bounded parser, and a structure-only reader of raw text.  Used by the watch
 * cache, the reconcilers and the REST client; pure logic, no I/O.
 */
#include "common/jsonx.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/xmalloc.h"

#define TO_STRING_FLAGS                                                       \
	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Parses seg[0..len) as an array index: decimal digits only. */
static int
parse_index(const char *seg, size_t len, size_t *idx)
{
	size_t i, v = 0;

	if (len == 0 || len > 9) {
		return (-1);
	}
	for (i = 0; i < len; i++) {
		if (seg[i] < '0' || seg[i] > '9') {
			return (-1);
		}
		v = v * 10 + (size_t)(seg[i] - '0');
	}
	*idx = v;
	return (0);
}

/* Looks up the key seg[0..len) in an object (seg need not end in NUL). */
static json_object *
key_of(json_object *obj, const char *seg, size_t len)
{
	char small[128], *key;
	json_object *v = NULL;

	key = len < sizeof(small) ? small : xmalloc(len + 1);
	memcpy(key, seg, len);
	key[len] = '\0';
	if (!json_object_object_get_ex(obj, key, &v)) {
		v = NULL;
	}
	if (key != small) {
		free(key);
	}
	return (v);
}

/* One step of a dotted path: an object key or, on an array, an index. */
static json_object *
step(json_object *obj, const char *seg, size_t len)
{
	size_t idx;

	if (len == 0) {
		return (NULL);
	}
	if (json_object_is_type(obj, json_type_object)) {
		return (key_of(obj, seg, len));
	}
	if (json_object_is_type(obj, json_type_array)
	        && parse_index(seg, len, &idx) == 0
	        && idx < json_object_array_length(obj)) {
		return (json_object_array_get_idx(obj, idx));
	}
	return (NULL);
}

json_object *
jx_get(json_object *obj, const char *path)
{
	const char *p, *dot;
	size_t len;

	if (path == NULL) {
		return (NULL);
	}
	if (*path == '\0') {
		return (obj);
	}
	for (p = path;; p = dot + 1) {
		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		obj = step(obj, p, len);
		if (obj == NULL || dot == NULL) {
			return (obj);
		}
	}
}

json_object *
jx_getv(json_object *obj, ...)
{
	va_list ap;
	const char *key;

	va_start(ap, obj);
	while (obj != NULL && (key = va_arg(ap, const char *)) != NULL) {
		if (!json_object_is_type(obj, json_type_object)
		        || !json_object_object_get_ex(obj, key, &obj)) {
			obj = NULL;
		}
	}
	va_end(ap);
	return (obj);
}

const char *
jx_get_str(json_object *obj, const char *path)
{
	json_object *v = jx_get(obj, path);

	if (!json_object_is_type(v, json_type_string)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

int
jx_get_int(json_object *obj, const char *path, int64_t *out)
{
	json_object *v = jx_get(obj, path);
	int64_t n;

	if (!json_object_is_type(v, json_type_int)) {
		return (-1);
	}
	n = json_object_get_int64(v);
	/* json-c clamps unsigned values above INT64_MAX to INT64_MAX. */
	if (n == INT64_MAX && json_object_get_uint64(v) != (uint64_t)n) {
		return (-1);
	}
	*out = n;
	return (0);
}

int
jx_get_bool(json_object *obj, const char *path, bool *out)
{
	json_object *v = jx_get(obj, path);

	if (!json_object_is_type(v, json_type_boolean)) {
		return (-1);
	}
	*out = json_object_get_boolean(v) != 0;
	return (0);
}

/*
 * Sets keys[0..n) below obj.  Intermediates are created only once a key is
 * missing, and from then on nothing can fail, so a failure leaves obj as it
 * was.
 */
static int
set_keys(json_object *obj, const char *const *keys, size_t n,
        json_object *value)
{
	json_object *child;
	size_t i;

	if (n == 0 || !json_object_is_type(obj, json_type_object)) {
		return (-1);
	}
	for (i = 0; i + 1 < n; i++) {
		if (!json_object_object_get_ex(obj, keys[i], &child)
		        || child == NULL) {
			child = json_object_new_object();
			json_object_object_add(obj, keys[i], child);
		} else if (!json_object_is_type(child, json_type_object)) {
			return (-1);
		}
		obj = child;
	}
	if (json_object_object_add(obj, keys[n - 1], value) != 0) {
		return (-1);
	}
	return (0);
}

int
jx_set_path(json_object *obj, const char *path, json_object *value)
{
	char *dup, *p, **keys = NULL;
	size_t n = 0;
	int rc = -1;

	if (path == NULL || *path == '\0') {
		return (-1);
	}
	dup = xstrdup(path);
	for (p = dup; p != NULL;) {
		keys = xreallocarray(keys, n + 1, sizeof(*keys));
		keys[n] = strsep(&p, ".");
		if (*keys[n++] == '\0') {
			goto fail;
		}
	}
	rc = set_keys(obj, (const char *const *)keys, n, value);
fail:
	free(keys);
	free(dup);
	return (rc);
}

int
jx_setv(json_object *obj, json_object *value, ...)
{
	va_list ap;
	const char **keys = NULL;
	const char *key;
	size_t n = 0;
	int rc;

	va_start(ap, value);
	while ((key = va_arg(ap, const char *)) != NULL) {
		keys = xreallocarray(keys, n + 1, sizeof(*keys));
		keys[n++] = key;
	}
	va_end(ap);
	rc = set_keys(obj, keys, n, value);
	free(keys);
	return (rc);
}

static bool
is_number(enum json_type t)
{
	return (t == json_type_int || t == json_type_double);
}

/* Two integers compared exactly: int64 when either is negative, else
 * uint64.  No long double: valgrind, and some targets, compute it with
 * only 64 bits. */
static bool
ints_equal(json_object *a, json_object *b)
{
	int64_t ia = json_object_get_int64(a), ib = json_object_get_int64(b);

	if (ia < 0 || ib < 0) {
		return (ia == ib);
	}
	return (json_object_get_uint64(a) == json_object_get_uint64(b));
}

/* An integer and a double compared exactly: equal only when d is integral,
 * in range, and converts to the same integer. */
static bool
int_double_equal(json_object *i, double d)
{
	int64_t v = json_object_get_int64(i);

	if (isnan(d) || floor(d) != d) {
		return (false);
	}
	if (d >= 0) {
		return (d < 18446744073709551616.0 && v >= 0
		        && json_object_get_uint64(i) == (uint64_t)d);
	}
	return (d >= -9223372036854775808.0 && v == (int64_t)d);
}

static bool
numbers_equal(
        json_object *a, enum json_type ta, json_object *b, enum json_type tb)
{
	if (ta == json_type_int && tb == json_type_int) {
		return (ints_equal(a, b));
	}
	if (ta == json_type_int) {
		return (int_double_equal(a, json_object_get_double(b)));
	}
	if (tb == json_type_int) {
		return (int_double_equal(b, json_object_get_double(a)));
	}
	return (json_object_get_double(a) == json_object_get_double(b));
}

static bool
arrays_equal(json_object *a, json_object *b)
{
	size_t i, n = json_object_array_length(a);

	if (n != json_object_array_length(b)) {
		return (false);
	}
	for (i = 0; i < n; i++) {
		if (!jx_equal(json_object_array_get_idx(a, i),
		            json_object_array_get_idx(b, i))) {
			return (false);
		}
	}
	return (true);
}

static bool
objects_equal(json_object *a, json_object *b)
{
	json_object *bv;

	if (json_object_object_length(a) != json_object_object_length(b)) {
		return (false);
	}
	json_object_object_foreach(a, key, av)
	{
		if (!json_object_object_get_ex(b, key, &bv)
		        || !jx_equal(av, bv)) {
			return (false);
		}
	}
	return (true);
}

bool
jx_equal(json_object *a, json_object *b)
{
	enum json_type ta = json_object_get_type(a);
	enum json_type tb = json_object_get_type(b);

	if (is_number(ta) && is_number(tb)) {
		return (numbers_equal(a, ta, b, tb));
	}
	if (ta != tb) {
		return (false);
	}
	switch (ta) {
	case json_type_null:
		return (true);
	case json_type_boolean:
		return (!json_object_get_boolean(a)
		        == !json_object_get_boolean(b));
	case json_type_string:
		return (json_object_get_string_len(a)
		                == json_object_get_string_len(b)
		        && memcmp(json_object_get_string(a),
		                   json_object_get_string(b),
		                   (size_t)json_object_get_string_len(a))
		                == 0);
	case json_type_array:
		return (arrays_equal(a, b));
	case json_type_object:
		return (objects_equal(a, b));
	default:
		return (false);
	}
}

void
jx_strip(json_object *obj, const char *path)
{
	const char *last;
	char *parent_path;
	json_object *parent;
	size_t idx;

	if (obj == NULL || path == NULL) {
		return;
	}
	last = strrchr(path, '.');
	if (last == NULL) {
		parent = obj;
		last = path;
	} else {
		parent_path = xstrndup(path, (size_t)(last - path));
		parent = parent_path[0] != '\0' ? jx_get(obj, parent_path)
		                                : NULL;
		free(parent_path);
		last++;
	}
	if (*last == '\0') {
		return;
	}
	if (json_object_is_type(parent, json_type_object)) {
		json_object_object_del(parent, last);
	} else if (json_object_is_type(parent, json_type_array)
	        && parse_index(last, strlen(last), &idx) == 0
	        && idx < json_object_array_length(parent)) {
		json_object_array_del_idx(parent, idx, 1);
	}
}

size_t
jx_array_len(json_object *a)
{
	return (json_object_is_type(a, json_type_array)
	                ? json_object_array_length(a)
	                : 0);
}

json_object *
jx_copy(json_object *obj)
{
	json_object *dst = NULL;

	if (obj == NULL || json_object_deep_copy(obj, &dst, NULL) != 0) {
		return (NULL);
	}
	return (dst);
}

json_object *
jx_copy_obj(json_object *obj)
{
	if (!json_object_is_type(obj, json_type_object)) {
		return (json_object_new_object());
	}
	json_object *dst = jx_copy(obj);
	return (dst != NULL ? dst : json_object_new_object());
}

json_object *
jx_copy_stripa(json_object *obj, const char *const *paths)
{
	json_object *dst = jx_copy(obj);

	if (dst == NULL) {
		return (NULL);
	}
	while (paths != NULL && *paths != NULL) {
		jx_strip(dst, *paths++);
	}
	return (dst);
}

json_object *
jx_copy_strip(json_object *obj, ...)
{
	va_list ap;
	const char *path;
	json_object *dst;

	dst = jx_copy_stripa(obj, NULL);
	va_start(ap, obj);
	while (dst != NULL && (path = va_arg(ap, const char *)) != NULL) {
		jx_strip(dst, path);
	}
	va_end(ap);
	return (dst);
}

char *
jx_to_string(json_object *obj)
{
	return (xstrdup(json_object_to_json_string_ext(obj, TO_STRING_FLAGS)));
}

/*
 * Runs the tokener over s[0..len).  A number or literal at the very end
 * leaves json-c waiting for more input; one NUL byte then tells it the
 * input is over.
 */
static json_object *
tokenize(struct json_tokener *tok, const char *s, size_t len, size_t *endp)
{
	json_object *obj;

	obj = json_tokener_parse_ex(tok, s, (int)len);
	*endp = json_tokener_get_parse_end(tok);
	if (obj == NULL
	        && json_tokener_get_error(tok) == json_tokener_continue) {
		obj = json_tokener_parse_ex(tok, "", 1);
		*endp = len;
	}
	return (obj);
}

static bool
only_space(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n'
		        && s[i] != '\r') {
			return (false);
		}
	}
	return (true);
}

/* Whether o holds a number that is not finite (NaN, an infinity). */
static bool
nonfinite(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_double:
		return (!isfinite(json_object_get_double(o)));
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			if (nonfinite(json_object_array_get_idx(o, i))) {
				return (true);
			}
		}
		return (false);
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			if (nonfinite(v)) {
				return (true);
			}
		}
		return (false);
	}
	default:
		return (false);
	}
}

/* Whether [s, s+len) has the letter e (either case) after a digit: an
 * exponent, or text that looks like one. */
static bool
has_exponent(const char *s, size_t len, int e)
{
	const char *end = s + len;

	for (const char *p = s; (p = memchr(p, e, (size_t)(end - p))) != NULL;
	        p++) {
		if (p > s && p[-1] >= '0' && p[-1] <= '9') {
			return (true);
		}
	}
	return (false);
}

/* json-c reads NaN and [-]Infinity even in strict mode, and an exponent
 * too large as an infinity: none is JSON (RFC 8259), the API server never
 * sends one, and NaN is not equal to itself.  The tree is walked only when
 * the text may hold one: a token NaN or Infinity, or an exponent. */
static bool
maybe_nonfinite(const char *s, size_t len)
{
	return (memmem(s, len, "NaN", 3) != NULL
	        || memmem(s, len, "Infinity", 8) != NULL
	        || has_exponent(s, len, 'e') || has_exponent(s, len, 'E'));
}

json_object *
jx_parse(const char *s, size_t len, int max_depth, char *err, size_t errlen)
{
	struct json_tokener *tok;
	json_object *obj;
	enum json_tokener_error e;
	const char *nul;
	size_t end;

	if (s == NULL || len > (size_t)INT32_MAX - 1) {
		errmsg(err, errlen, "no input or input too large");
		return (NULL);
	}
	/* JSON never holds a raw NUL, and json-c would read one as the end of
	 * the input and report a misleading "truncated". */
	if ((nul = memchr(s, '\0', len)) != NULL) {
		errmsg(err, errlen, "NUL byte at offset %zu",
		        (size_t)(nul - s));
		return (NULL);
	}
	if (max_depth <= 0 || max_depth > 10000) {
		max_depth = JX_DEFAULT_DEPTH;
	}
	tok = json_tokener_new_ex(max_depth);
	json_tokener_set_flags(tok,
	        JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS
	                | JSON_TOKENER_VALIDATE_UTF8);
	obj = tokenize(tok, s, len, &end);
	e = json_tokener_get_error(tok);
	if (obj == NULL && e == json_tokener_success) {
		errmsg(err, errlen, "document is null");
	} else if (obj == NULL) {
		errmsg(err, errlen, "%s at offset %zu",
		        e == json_tokener_error_parse_eof
		                ? "truncated input"
		                : json_tokener_error_desc(e),
		        end);
	} else if (!only_space(s + end, len - end)) {
		errmsg(err, errlen, "trailing data at offset %zu", end);
		json_object_put(obj);
		obj = NULL;
	} else if (maybe_nonfinite(s, len) && nonfinite(obj)) {
		errmsg(err, errlen, "a number is not finite (NaN, Infinity)");
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return (obj);
}

/* ---- raw text ---- */

static const char *
text_ws(const char *p, const char *end)
{
	while (p < end
	        && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	return (p);
}

/* p at '"': the position after the closing quote, or NULL. */
static const char *
text_string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			p++;
		} else if (*p == '"') {
			return (p + 1);
		}
	}
	return (NULL);
}

const char *
jx_text_skip(const char *p, const char *end)
{
	size_t depth = 0;

	if (p >= end) {
		return (NULL);
	}
	if (*p == '"') {
		return (text_string_end(p, end));
	}
	if (*p != '{' && *p != '[') {
		while (p < end && strchr(",}] \t\r\n", *p) == NULL) {
			p++;
		}
		return (p);
	}
	for (; p < end; p++) {
		if (*p == '"') {
			if ((p = text_string_end(p, end)) == NULL) {
				return (NULL);
			}
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if ((*p == '}' || *p == ']') && --depth == 0) {
			return (p + 1);
		}
	}
	return (NULL);
}

const char *
jx_text_member(const char *p, const char *end, const char *key)
{
	size_t klen = strlen(key);
	const char *k, *ke;

	if (p == NULL || p >= end || *p != '{') {
		return (NULL);
	}
	for (p = text_ws(p + 1, end); p < end && *p == '"';) {
		k = p;
		if ((ke = text_string_end(p, end)) == NULL) {
			return (NULL);
		}
		p = text_ws(ke, end);
		if (p >= end || *p != ':') {
			return (NULL);
		}
		p = text_ws(p + 1, end);
		if ((size_t)(ke - k) == klen + 2
		        && memcmp(k + 1, key, klen) == 0) {
			return (p);
		}
		if ((p = jx_text_skip(p, end)) == NULL) {
			return (NULL);
		}
		p = text_ws(p, end);
		if (p >= end || *p != ',') {
			return (NULL);
		}
		p = text_ws(p + 1, end);
	}
	return (NULL);
}

void
jx_text_string(const char *p, const char *end, char *out, size_t n)
{
	const char *q = p != NULL && p < end && *p == '"'
	        ? text_string_end(p, end)
	        : NULL;
	json_object *o
	        = q != NULL ? jx_parse(p, (size_t)(q - p), 1, NULL, 0) : NULL;
	const char *v = json_object_is_type(o, json_type_string)
	        ? json_object_get_string(o)
	        : "";
	size_t i;

	for (i = 0; n > 0 && i + 1 < n && v[i] != '\0'; i++) {
		out[i] = (unsigned char)v[i] < 0x20 ? '?' : v[i];
	}
	if (n > 0) {
		out[i] = '\0';
	}
	json_object_put(o);
}

void
jx_text_name(const char *p, const char *end, char *out, size_t n)
{
	const char *md = jx_text_member(p, end, "metadata");
	char ns[254], name[254];

	jx_text_string(
	        jx_text_member(md, end, "namespace"), end, ns, sizeof(ns));
	jx_text_string(
	        jx_text_member(md, end, "name"), end, name, sizeof(name));
	snprintf(out, n, "%s%s%s", ns, ns[0] != '\0' ? "/" : "", name);
}
