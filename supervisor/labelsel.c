/*
 * labelsel.c: equality-based label selectors for the watch cache's
 * listings and the view requests of workers (labelsel.h).  Parsing builds
 * a flat array of requirements; matching asks a getter for each key, so
 * the cache can match its packed labels without building JSON.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "supervisor/labelsel.h"

enum op {
	OP_EQ,     /* key=value, key==value */
	OP_NE,     /* key!=value */
	OP_EXISTS, /* key */
	OP_ABSENT, /* !key */
};

struct req {
	enum op op;
	char *key;
	char *val; /* NULL for OP_EXISTS and OP_ABSENT */
};

struct labelsel {
	struct req *reqs;
	size_t n;
};

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool
alnum(char c)
{
	return (isalnum((unsigned char)c) != 0);
}

/* A label name or value body: [A-Za-z0-9] at both ends, -_. inside. */
static bool
valid_name(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !alnum(s[0]) || !alnum(s[len - 1])) {
		return (false);
	}
	for (size_t i = 0; i < len; i++) {
		if (!alnum(s[i]) && s[i] != '-' && s[i] != '_'
		        && s[i] != '.') {
			return (false);
		}
	}
	return (true);
}

/* A DNS-1123 subdomain: at most 253 characters, dot-separated labels of
 * lower-case alphanumerics and '-', each alphanumeric at both ends. */
static bool
valid_prefix(const char *s, size_t len)
{
	if (len == 0 || len > 253) {
		return (false);
	}
	for (size_t i = 0; i < len; i++) {
		bool edge = i == 0 || i == len - 1 || s[i - 1] == '.'
		        || s[i + 1] == '.';
		if (s[i] == '.' && !edge) {
			continue;
		}
		if (isupper((unsigned char)s[i]) || s[i] == '.'
		        || (!alnum(s[i]) && (edge || s[i] != '-'))) {
			return (false);
		}
	}
	return (true);
}

static bool
valid_key(const char *s)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL) {
		return (valid_name(s, strlen(s)));
	}
	return (valid_prefix(s, (size_t)(slash - s))
	        && valid_name(slash + 1, strlen(slash + 1)));
}

static bool
valid_value(const char *s)
{
	size_t len = strlen(s);

	return (len == 0 || valid_name(s, len));
}

/* apimachinery's selector lexer: only these four are white space (not
 * \f or \v, which isspace() would also skip). */
static bool
is_blank(char c)
{
	return (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

/* Copy of s[0..len) without surrounding blanks. */
static char *
trimdup(const char *s, size_t len)
{
	while (len > 0 && is_blank(*s)) {
		s++;
		len--;
	}
	while (len > 0 && is_blank(s[len - 1])) {
		len--;
	}
	return (xstrndup(s, len));
}

/* Splits one requirement term into r.  Returns 0 or -1 (message set). */
static int
parse_term(const char *t, size_t len, struct req *r, char *err, size_t el)
{
	const char *op = memchr(t, '=', len);
	size_t klen;

	if (op == NULL) {
		r->key = trimdup(t, len);
		r->op = OP_EXISTS;
		if (r->key[0] == '!') {
			char *k = trimdup(r->key + 1, strlen(r->key + 1));

			free(r->key);
			r->key = k;
			r->op = OP_ABSENT;
		}
	} else {
		klen = (size_t)(op - t);
		r->op = OP_EQ;
		if (klen > 0 && t[klen - 1] == '!') {
			r->op = OP_NE;
			klen--;
		} else if ((size_t)(op - t) + 1 < len && op[1] == '=') {
			op++;
		}
		r->key = trimdup(t, klen);
		r->val = trimdup(op + 1, len - (size_t)(op + 1 - t));
	}
	if (strpbrk(r->key, " \t()") != NULL || strchr(r->key, '!') != NULL) {
		seterr(err, el,
		        "unsupported selector term \"%.*s\" (only "
		        "k=v, k==v, k!=v, k and !k)",
		        (int)len, t);
		return (-1);
	}
	if (!valid_key(r->key)) {
		seterr(err, el, "invalid label key \"%s\"", r->key);
		return (-1);
	}
	if (r->val != NULL && !valid_value(r->val)) {
		seterr(err, el, "invalid label value \"%s\" for key \"%s\"",
		        r->val, r->key);
		return (-1);
	}
	return (0);
}

static bool
blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!is_blank(s[i])) {
			return (false);
		}
	}
	return (true);
}

struct labelsel *
labelsel_parse(const char *s, char *err, size_t errlen)
{
	struct labelsel *sel = xcalloc(1, sizeof(*sel));
	const char *t, *comma;
	size_t len;

	if (s == NULL || blank(s, strlen(s))) {
		return (sel);
	}
	for (t = s;; t = comma + 1) {
		comma = strchr(t, ',');
		len = comma != NULL ? (size_t)(comma - t) : strlen(t);
		if (blank(t, len)) {
			seterr(err, errlen, "empty term in selector \"%s\"",
			        s);
			goto fail;
		}
		sel->reqs = xreallocarray(
		        sel->reqs, sel->n + 1, sizeof(sel->reqs[0]));
		memset(&sel->reqs[sel->n], 0, sizeof(sel->reqs[0]));
		if (parse_term(t, len, &sel->reqs[sel->n++], err, errlen)
		        != 0) {
			goto fail;
		}
		if (comma == NULL) {
			break;
		}
	}
	return (sel);
fail:
	labelsel_free(sel);
	return (NULL);
}

void
labelsel_free(struct labelsel *sel)
{
	if (sel == NULL) {
		return;
	}
	for (size_t i = 0; i < sel->n; i++) {
		free(sel->reqs[i].key);
		free(sel->reqs[i].val);
	}
	free(sel->reqs);
	free(sel);
}

bool
labelsel_empty(const struct labelsel *sel)
{
	return (sel == NULL || sel->n == 0);
}

static bool
req_match(const struct req *r, const char *v)
{
	switch (r->op) {
	case OP_EQ:
		return (v != NULL && strcmp(v, r->val) == 0);
	case OP_NE:
		return (v == NULL || strcmp(v, r->val) != 0);
	case OP_EXISTS:
		return (v != NULL);
	case OP_ABSENT:
		return (v == NULL);
	}
	return (false);
}

bool
labelsel_match(const struct labelsel *sel, labelsel_get_fn *get, void *arg)
{
	if (sel == NULL) {
		return (true);
	}
	for (size_t i = 0; i < sel->n; i++) {
		if (!req_match(&sel->reqs[i], get(arg, sel->reqs[i].key))) {
			return (false);
		}
	}
	return (true);
}

static const char *
json_get(void *arg, const char *key)
{
	json_object *labels = arg, *v;

	if (!json_object_is_type(labels, json_type_object)
	        || !json_object_object_get_ex(labels, key, &v)
	        || !json_object_is_type(v, json_type_string)) {
		return (NULL);
	}
	return (json_object_get_string(v));
}

bool
labelsel_match_json(const struct labelsel *sel, json_object *labels)
{
	return (labelsel_match(sel, json_get, labels));
}
