/*
 * ksel.c: label and field selectors for kubesim (ksel.h).  Owns the label
 * selector lexer and recursive-descent parser (same tokens, lookahead and
 * error texts as apimachinery's labels.Parse), the qualified-name and label
 * value checks (validation.IsQualifiedName, IsValidLabelValue), the field
 * selector splitter and unescaper (fields.ParseSelector), and matching.
 * Pure logic: no I/O.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "kubesim/ksel.h"

/* ---------------------------------------------------------------------
 * Shared helpers
 */

enum kop {
	OP_IN,
	OP_NOTIN,
	OP_EQ,
	OP_DEQ,
	OP_NE,
	OP_EXISTS,
	OP_NOTEXISTS,
	OP_GT,
	OP_LT
};

struct req {
	char *key;
	enum kop op;
	char **vals; /* sorted, unique */
	size_t nvals;
	int64_t num; /* OP_GT / OP_LT */
};

struct ksel {
	struct req *reqs;
	size_t n;
};

struct fterm {
	char *field;
	char *value;
	bool neg;
};

struct ksel_fields {
	struct fterm *t;
	size_t n;
};

static void
set_err(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0) {
		snprintf(err, errlen, "%s", msg);
	}
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t
utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0xc2 || s[0] > 0xf4) {
		return (0);
	}
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return (0);
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)
	        || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
		return (0);
	}
	return (n);
}

/* Go's %q, close enough: ASCII escapes as strconv.Quote, valid UTF-8 kept
 * (Go would also escape the few non-printable runes), bad bytes as \xNN. */
static void
put_quoted(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	buf_putc(b, '"');
	while (*p != '\0') {
		static const char cs[] = "\a\b\f\n\r\t\v", ls[] = "abfnrtv";
		const char *c = strchr(cs, *p);

		if (*p == '"' || *p == '\\') {
			buf_printf(b, "\\%c", *p++);
		} else if (c != NULL) {
			buf_printf(b, "\\%c", ls[c - cs]);
			p++;
		} else if (*p >= 0x20 && *p < 0x7f) {
			buf_putc(b, (char)*p++);
		} else if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
			buf_append(b, p, n);
			p += n;
		} else {
			buf_printf(b, "\\x%02x", *p++);
		}
	}
	buf_putc(b, '"');
}

static bool
is_alnum(int c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	        || (c >= '0' && c <= '9'));
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool
qname_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || !is_alnum((unsigned char)s[0])
	        || !is_alnum((unsigned char)s[n - 1])) {
		return (false);
	}
	for (i = 1; i + 1 < n; i++) {
		if (!is_alnum((unsigned char)s[i])
		        && strchr("-_.", s[i]) == NULL) {
			return (false);
		}
	}
	return (true);
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* */
static bool
dns_subdomain_ok(const char *s)
{
	const char *p = s;
	bool start = true;

	for (; *p != '\0'; p++) {
		bool lc = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');

		if (lc) {
			start = false;
		} else if (start || (*p != '-' && *p != '.')) {
			return (false);
		} else if (*p == '.' && p[-1] == '-') {
			return (false);
		} else if (*p == '.') {
			start = true;
		}
	}
	return (p != s && !start && p[-1] != '-');
}

#define QNAME_MSG                                                             \
	"must consist of alphanumeric characters, '-', '_' or '.', and must " \
	"start and end with an alphanumeric character (e.g. 'MyName',  or "   \
	"'my.name',  or '123-abc', regex used for validation is "             \
	"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define DNS_MSG                                                               \
	"a lowercase RFC 1123 subdomain must consist of lower case "          \
	"alphanumeric characters, '-' or '.', and must start and end with "   \
	"an alphanumeric character (e.g. 'example.com', regex used for "      \
	"validation is "                                                      \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define VALUE_MSG                                                             \
	"a valid label must be an empty string or consist of alphanumeric "   \
	"characters, '-', '_' or '.', and must start and end with an "        \
	"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "        \
	"'12345', regex used for validation is "                              \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

static void
add_msg(struct buf *b, const char *msg)
{
	if (b->len > 0) {
		buf_puts(b, "; ");
	}
	buf_puts(b, msg);
}

/* validation.IsQualifiedName: the problems, "; "-joined, in b. */
static void
check_qname(const char *k, struct buf *b)
{
	const char *slash = strchr(k, '/'), *name = k;

	if (slash != NULL && strchr(slash + 1, '/') != NULL) {
		add_msg(b,
		        "a qualified name " QNAME_MSG " with an optional DNS "
		        "subdomain prefix and '/' (e.g. "
		        "'example.com/MyName')");
		return;
	}
	if (slash != NULL) {
		char *prefix = xstrndup(k, (size_t)(slash - k));

		if (*prefix == '\0') {
			add_msg(b, "prefix part must be non-empty");
		} else {
			if (strlen(prefix) > 253) {
				add_msg(b,
				        "prefix part must be no more than "
				        "253 characters");
			}
			if (!dns_subdomain_ok(prefix)) {
				add_msg(b, "prefix part " DNS_MSG);
			}
		}
		free(prefix);
		name = slash + 1;
	}
	if (*name == '\0') {
		add_msg(b, "name part must be non-empty");
	} else if (strlen(name) > 63) {
		add_msg(b, "name part must be no more than 63 characters");
	}
	if (!qname_ok(name)) {
		add_msg(b, "name part " QNAME_MSG);
	}
}

/* validation.IsValidLabelValue */
static void
check_value(const char *v, struct buf *b)
{
	if (strlen(v) > 63) {
		add_msg(b, "must be no more than 63 characters");
	}
	if (*v != '\0' && !qname_ok(v)) {
		add_msg(b, VALUE_MSG);
	}
}

/* strconv.ParseInt(s, 10, 64) == nil */
static bool
parse_int64(const char *s, int64_t *out)
{
	const char *d = s + (*s == '+' || *s == '-');
	char *end;
	long long v;

	if (*d < '0' || *d > '9') {
		return (false);
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0') {
		return (false);
	}
	*out = v;
	return (true);
}

/* ---------------------------------------------------------------------
 * Label selector lexer
 */

enum tok {
	T_EOS,
	T_CPAR,
	T_COMMA,
	T_NOT,
	T_DEQ,
	T_EQ,
	T_GT,
	T_ID,
	T_IN,
	T_LT,
	T_NE,
	T_NOTIN,
	T_OPAR
};

struct token {
	enum tok t;
	char *lit;
};

static bool
is_space(int c)
{
	return (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

static bool
is_special(int c)
{
	return (c != '\0' && strchr("=!(),><", c) != NULL);
}

/* One special-symbol token at *pp.  Go's longest match reduces to this:
 * the only two-byte tokens are "==" and "!=". */
static struct token
lex_special(const char **pp)
{
	static const char syms[] = "=!(),><";
	static const enum tok toks[]
	        = { T_EQ, T_NOT, T_OPAR, T_CPAR, T_COMMA, T_GT, T_LT };
	const char *p = *pp;
	struct token tk;

	if ((p[0] == '=' || p[0] == '!') && p[1] == '=') {
		tk.t = p[0] == '=' ? T_DEQ : T_NE;
		tk.lit = xstrndup(p, 2);
		*pp = p + 2;
		return (tk);
	}
	tk.t = toks[strchr(syms, p[0]) - syms];
	tk.lit = xstrndup(p, 1);
	*pp = p + 1;
	return (tk);
}

static struct token
lex_one(const char **pp)
{
	const char *p = *pp, *start;
	struct token tk;

	while (is_space((unsigned char)*p)) {
		p++;
	}
	if (*p == '\0') {
		*pp = p;
		tk.t = T_EOS;
		tk.lit = xstrdup("");
		return (tk);
	}
	if (is_special((unsigned char)*p)) {
		*pp = p;
		return (lex_special(pp));
	}
	for (start = p; *p != '\0' && !is_special((unsigned char)*p)
	        && !is_space((unsigned char)*p);
	        p++) { }
	*pp = p;
	tk.lit = xstrndup(start, (size_t)(p - start));
	tk.t = strcmp(tk.lit, "in") == 0       ? T_IN
	        : strcmp(tk.lit, "notin") == 0 ? T_NOTIN
	                                       : T_ID;
	return (tk);
}

/* ---------------------------------------------------------------------
 * Label selector parser
 */

enum ctx { CTX_OP, CTX_VALUES };

struct parser {
	struct token *toks;
	size_t ntoks, pos;
	struct buf err; /* non-empty once an error occurred */
};

static void
scan_all(struct parser *p, const char *s)
{
	size_t cap = strlen(s) + 1;

	p->toks = xreallocarray(NULL, cap, sizeof(*p->toks));
	do {
		p->toks[p->ntoks] = lex_one(&s);
	} while (p->toks[p->ntoks++].t != T_EOS);
}

/* The token at pos (never past the end-of-string token). */
static enum tok
peek(const struct parser *p, enum ctx c, const char **lit)
{
	size_t i = p->pos < p->ntoks ? p->pos : p->ntoks - 1;
	enum tok t = p->toks[i].t;

	*lit = p->toks[i].lit;
	if (c == CTX_VALUES && (t == T_IN || t == T_NOTIN)) {
		t = T_ID;
	}
	return (t);
}

static enum tok
next(struct parser *p, enum ctx c, const char **lit)
{
	enum tok t = peek(p, c, lit);

	p->pos++;
	return (t);
}

static int
fail(struct parser *p, const char *fmt, const char *lit)
{
	buf_printf(&p->err, fmt, lit);
	return (-1);
}

static void
req_fini(struct req *r)
{
	size_t i;

	for (i = 0; i < r->nvals; i++) {
		free(r->vals[i]);
	}
	free(r->vals);
	free(r->key);
}

static void
add_val(struct req *r, const char *v)
{
	r->vals = xreallocarray(r->vals, r->nvals + 1, sizeof(*r->vals));
	r->vals[r->nvals++] = xstrdup(v);
}

static int
parse_key(struct parser *p, struct req *r)
{
	const char *lit;
	enum tok t = next(p, CTX_VALUES, &lit);
	struct buf msgs = BUF_INIT;

	r->op = OP_EQ;
	if (t == T_NOT) {
		r->op = OP_NOTEXISTS;
		t = next(p, CTX_VALUES, &lit);
	}
	if (t != T_ID) {
		return (fail(p, "found '%s', expected: identifier", lit));
	}
	check_qname(lit, &msgs);
	if (msgs.len > 0) {
		buf_puts(&p->err, "<nil>: Invalid value: ");
		put_quoted(&p->err, lit);
		buf_printf(&p->err, ": %s", buf_str(&msgs));
		buf_fini(&msgs);
		return (-1);
	}
	r->key = xstrdup(lit);
	t = peek(p, CTX_VALUES, &lit);
	if ((t == T_EOS || t == T_COMMA) && r->op != OP_NOTEXISTS) {
		r->op = OP_EXISTS;
	}
	return (0);
}

static int
parse_op(struct parser *p, struct req *r)
{
	const char *lit;

	switch (next(p, CTX_OP, &lit)) {
	case T_IN:
		r->op = OP_IN;
		break;
	case T_NOTIN:
		r->op = OP_NOTIN;
		break;
	case T_EQ:
		r->op = OP_EQ;
		break;
	case T_DEQ:
		r->op = OP_DEQ;
		break;
	case T_NE:
		r->op = OP_NE;
		break;
	case T_GT:
		r->op = OP_GT;
		break;
	case T_LT:
		r->op = OP_LT;
		break;
	default:
		return (fail(p,
		        "found '%s', expected: in, notin, =, ==, !=, gt, lt",
		        lit));
	}
	return (0);
}

/* parseIdentifiersList: values up to (not including) ')'. */
static int
parse_idlist(struct parser *p, struct req *r)
{
	const char *lit, *lit2;
	enum tok t2;

	for (;;) {
		switch (next(p, CTX_VALUES, &lit)) {
		case T_ID:
			add_val(r, lit);
			t2 = peek(p, CTX_VALUES, &lit2);
			if (t2 == T_CPAR) {
				return (0);
			} else if (t2 != T_COMMA) {
				return (fail(p,
				        "found '%s', expected: ',' or ')'",
				        lit2));
			}
			break;
		case T_COMMA:
			if (r->nvals == 0) {
				add_val(r, ""); /* "(," */
			}
			t2 = peek(p, CTX_VALUES, &lit2);
			if (t2 == T_CPAR) {
				add_val(r, ""); /* ",)" */
				return (0);
			} else if (t2 == T_COMMA) {
				p->pos++;
				add_val(r, ""); /* ",," */
			}
			break;
		default:
			return (fail(p,
			        "found '%s', expected: ',', or identifier",
			        lit));
		}
	}
}

static int
parse_values(struct parser *p, struct req *r)
{
	const char *lit, *first;

	if (next(p, CTX_VALUES, &lit) != T_OPAR) {
		return (fail(p, "found '%s' expected: '('", lit));
	}
	switch (peek(p, CTX_VALUES, &first)) {
	case T_ID:
	case T_COMMA:
		if (parse_idlist(p, r) < 0) {
			return (-1);
		}
		if (next(p, CTX_VALUES, &lit) != T_CPAR) {
			/* Go reports the first value here, not the token. */
			return (fail(p, "found '%s', expected: ')'", first));
		}
		return (0);
	case T_CPAR:
		p->pos++;
		add_val(r, "");
		return (0);
	default:
		return (fail(p, "found '%s', expected: ',', ')' or identifier",
		        first));
	}
}

static int
parse_exact(struct parser *p, struct req *r)
{
	const char *lit;
	enum tok t = peek(p, CTX_VALUES, &lit);

	if (t == T_EOS || t == T_COMMA) {
		add_val(r, "");
		return (0);
	}
	if (next(p, CTX_VALUES, &lit) != T_ID) {
		return (fail(p, "found '%s', expected: identifier", lit));
	}
	add_val(r, lit);
	return (0);
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* sets.String(...).List(): sorted, duplicates dropped. */
static void
sort_unique(struct req *r)
{
	size_t i, o = 0;

	if (r->nvals > 1) {
		qsort(r->vals, r->nvals, sizeof(*r->vals), cmp_str);
	}
	for (i = 0; i < r->nvals; i++) {
		if (o > 0 && strcmp(r->vals[o - 1], r->vals[i]) == 0) {
			free(r->vals[i]);
		} else {
			r->vals[o++] = r->vals[i];
		}
	}
	r->nvals = o;
}

static void
add_invalid(struct buf *all, int *count, const char *field, const char *v,
        const char *detail)
{
	if ((*count)++ > 0) {
		buf_puts(all, ", ");
	}
	buf_printf(all, "%s: Invalid value: ", field);
	put_quoted(all, v);
	buf_printf(all, ": %s", detail);
}

/* NewRequirement's checks of the values; errors aggregated as Go does. */
static int
check_req(struct parser *p, struct req *r)
{
	struct buf all = BUF_INIT, msgs = BUF_INIT;
	int count = 0;
	size_t i;

	sort_unique(r);
	if ((r->op == OP_GT || r->op == OP_LT)
	        && !parse_int64(r->vals[0], &r->num)) {
		add_invalid(&all, &count, "values[0]", r->vals[0],
		        "for 'Gt', 'Lt' operators, the value must be an "
		        "integer");
	}
	for (i = 0; i < r->nvals; i++) {
		char *field;

		buf_reset(&msgs);
		check_value(r->vals[i], &msgs);
		if (msgs.len > 0) {
			field = xasprintf("values[%zu][%s]", i, r->key);
			add_invalid(&all, &count, field, r->vals[i],
			        buf_str(&msgs));
			free(field);
		}
	}
	if (count > 1) {
		buf_printf(&p->err, "[%s]", buf_str(&all));
	} else {
		buf_puts(&p->err, buf_str(&all));
	}
	buf_fini(&all);
	buf_fini(&msgs);
	return (count > 0 ? -1 : 0);
}

static int
parse_req(struct parser *p, struct req *r)
{
	int rc;

	if (parse_key(p, r) < 0) {
		return (-1);
	}
	if (r->op == OP_EXISTS || r->op == OP_NOTEXISTS) {
		return (0);
	}
	if (parse_op(p, r) < 0) {
		return (-1);
	}
	rc = r->op == OP_IN || r->op == OP_NOTIN ? parse_values(p, r)
	                                         : parse_exact(p, r);
	return (rc < 0 ? -1 : check_req(p, r));
}

/* One requirement and what follows it: 1 at the end, 0 for more, -1. */
static int
parse_one(struct parser *p, struct ksel *sel)
{
	struct req r = { 0 };
	const char *lit;

	if (parse_req(p, &r) < 0) {
		struct buf tmp = BUF_INIT;

		buf_printf(&tmp, "unable to parse requirement: %s",
		        buf_str(&p->err));
		buf_fini(&p->err);
		p->err = tmp;
		req_fini(&r);
		return (-1);
	}
	sel->reqs = xreallocarray(sel->reqs, sel->n + 1, sizeof(*sel->reqs));
	sel->reqs[sel->n++] = r;
	switch (next(p, CTX_VALUES, &lit)) {
	case T_EOS:
		return (1);
	case T_COMMA:
		if (peek(p, CTX_VALUES, &lit) != T_ID
		        && peek(p, CTX_VALUES, &lit) != T_NOT) {
			return (fail(p,
			        "found '%s', expected: identifier after ','",
			        lit));
		}
		return (0);
	default:
		return (fail(p, "found '%s', expected: ',' or 'end of string'",
		        lit));
	}
}

static int
parse_all(struct parser *p, struct ksel *sel)
{
	const char *lit;
	int rc;

	for (;;) {
		switch (peek(p, CTX_VALUES, &lit)) {
		case T_ID:
		case T_NOT:
			if ((rc = parse_one(p, sel)) != 0) {
				return (rc < 0 ? -1 : 0);
			}
			break;
		case T_EOS:
			return (0);
		default:
			return (fail(p,
			        "found '%s', expected: !, identifier, or "
			        "'end of string'",
			        lit));
		}
	}
}

struct ksel *
ksel_parse_labels(const char *s, char *err, size_t errlen)
{
	struct parser p = { 0 };
	struct ksel *sel = xcalloc(1, sizeof(*sel));
	size_t i;
	int rc;

	if (s == NULL) {
		s = "";
	}
	if (strlen(s) > KSEL_MAX_LEN) {
		set_err(err, errlen, "label selector too long");
		free(sel);
		return (NULL);
	}
	scan_all(&p, s);
	rc = parse_all(&p, sel);
	if (rc < 0) {
		set_err(err, errlen, buf_str(&p.err));
		ksel_free(sel);
		sel = NULL;
	}
	for (i = 0; i < p.ntoks; i++) {
		free(p.toks[i].lit);
	}
	free(p.toks);
	buf_fini(&p.err);
	return (sel);
}

size_t
ksel_count(const struct ksel *sel)
{
	return (sel != NULL ? sel->n : 0);
}

void
ksel_free(struct ksel *sel)
{
	size_t i;

	if (sel == NULL) {
		return;
	}
	for (i = 0; i < sel->n; i++) {
		req_fini(&sel->reqs[i]);
	}
	free(sel->reqs);
	free(sel);
}

/* ---------------------------------------------------------------------
 * Matching
 */

/* Go's %v of a float64: shortest round-trip digits, exponent form when the
 * decimal exponent is < -4 or >= 21. */
static void
put_go_float(struct buf *b, double d)
{
	char tmp[64], *e;
	int prec, exp10;

	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d) {
			break;
		}
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
	e = strchr(tmp, 'e');
	exp10 = atoi(e + 1);
	if (exp10 >= -4 && exp10 < 21) {
		int dec = prec - 1 - exp10;

		buf_printf(b, "%.*f", dec > 0 ? dec : 0, d);
		return;
	}
	/* Mantissa without trailing zeros, then e+XX. */
	*e = '\0';
	if (strchr(tmp, '.') != NULL) {
		size_t n = strlen(tmp);

		while (tmp[n - 1] == '0') {
			tmp[--n] = '\0';
		}
		if (tmp[n - 1] == '.') {
			tmp[n - 1] = '\0';
		}
	}
	buf_printf(b, "%se%c%02d", tmp, exp10 < 0 ? '-' : '+', abs(exp10));
}

/* The string form of a scalar as Go would print it, in b; false for null.
 * Objects and arrays read as their compact JSON text. */
static bool
value_string(json_object *v, struct buf *b)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return (false);
	case json_type_string:
		buf_append(b, json_object_get_string(v),
		        (size_t)json_object_get_string_len(v));
		return (true);
	case json_type_boolean:
		buf_puts(b, json_object_get_boolean(v) ? "true" : "false");
		return (true);
	case json_type_int:
		buf_printf(b, "%" PRId64, json_object_get_int64(v));
		return (true);
	case json_type_double:
		put_go_float(b, json_object_get_double(v));
		return (true);
	default:
		buf_puts(b,
		        json_object_to_json_string_ext(
		                v, JSON_C_TO_STRING_PLAIN));
		return (true);
	}
}

static bool
has_value(const struct req *r, const char *v)
{
	size_t i;

	for (i = 0; i < r->nvals; i++) {
		if (strcmp(r->vals[i], v) == 0) {
			return (true);
		}
	}
	return (false);
}

static bool
req_match(const struct req *r, bool has, const char *v)
{
	int64_t n;

	switch (r->op) {
	case OP_IN:
	case OP_EQ:
	case OP_DEQ:
		return (has && has_value(r, v));
	case OP_NOTIN:
	case OP_NE:
		return (!has || !has_value(r, v));
	case OP_EXISTS:
		return (has);
	case OP_NOTEXISTS:
		return (!has);
	case OP_GT:
		return (has && parse_int64(v, &n) && n > r->num);
	case OP_LT:
		return (has && parse_int64(v, &n) && n < r->num);
	}
	return (false);
}

bool
ksel_match_labels(const struct ksel *sel, json_object *labels)
{
	struct buf v = BUF_INIT;
	bool ok = true;
	size_t i;

	if (!json_object_is_type(labels, json_type_object)) {
		labels = NULL;
	}
	for (i = 0; sel != NULL && i < sel->n && ok; i++) {
		json_object *lv = NULL;
		bool has = false;

		buf_reset(&v);
		if (labels != NULL) {
			(void)json_object_object_get_ex(
			        labels, sel->reqs[i].key, &lv);
			has = value_string(lv, &v);
		}
		ok = req_match(&sel->reqs[i], has, buf_str(&v));
	}
	buf_fini(&v);
	return (ok);
}

/* ---------------------------------------------------------------------
 * Field selectors
 */

/* fields.UnescapeValue; error text in errb. */
static char *
unescape(const char *s, struct buf *errb)
{
	struct buf out = BUF_INIT;
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0'
		        && strchr("\\,=", p[1]) != NULL) {
			buf_putc(&out, (char)*++p);
		} else if (*p == '\\') {
			buf_puts(errb,
			        "invalid field selector: invalid escape "
			        "sequence: \\");
			n = p[1] < 0x80 ? (p[1] != '\0') : utf8_len(p + 1);
			if (p[1] >= 0x80 && n == 0) {
				buf_puts(errb, "\xef\xbf\xbd"); /* U+FFFD */
			}
			buf_append(errb, p + 1, n);
			break;
		} else if (*p == ',' || *p == '=') {
			buf_printf(errb,
			        "invalid field selector: unescaped "
			        "character in value: %d",
			        *p);
			break;
		} else {
			buf_putc(&out, (char)*p);
		}
	}
	if (errb->len > 0) {
		buf_fini(&out);
		return (NULL);
	}
	return (buf_detach(&out, NULL));
}

/* splitTerms: commas not escaped by a backslash end a term. */
static char **
split_terms(const char *s, size_t *np)
{
	char **terms = NULL;
	const char *start = s, *p;
	size_t n = 0;

	for (p = s;; p++) {
		if (*p == '\\' && p[1] != '\0') {
			p++;
		} else if (*p == ',' || *p == '\0') {
			terms = xreallocarray(terms, n + 1, sizeof(*terms));
			terms[n++] = xstrndup(start, (size_t)(p - start));
			if (*p == '\0') {
				break;
			}
			start = p + 1;
		}
	}
	*np = n;
	return (terms);
}

/* splitTerm: the first "!=", "==" or "=" splits; false if none. */
static bool
split_term(const char *t, struct fterm *ft, const char **rhs)
{
	const char *p;

	for (p = t; *p != '\0'; p++) {
		size_t oplen = strncmp(p, "!=", 2) == 0 ? 2
		        : strncmp(p, "==", 2) == 0      ? 2
		        : *p == '='                     ? 1
		                                        : 0;

		if (oplen > 0) {
			ft->field = xstrndup(t, (size_t)(p - t));
			ft->neg = *p == '!';
			*rhs = p + oplen;
			return (true);
		}
	}
	return (false);
}

static bool
field_allowed(const char *f, const char *const *extra)
{
	if (strcmp(f, "metadata.name") == 0
	        || strcmp(f, "metadata.namespace") == 0) {
		return (true);
	}
	for (; extra != NULL && *extra != NULL; extra++) {
		if (strcmp(f, *extra) == 0) {
			return (true);
		}
	}
	return (false);
}

static int
parse_terms(struct ksel_fields *sel, const char *s, char **terms, size_t n,
        struct buf *errb)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct fterm ft = { 0 };
		const char *rhs;

		if (*terms[i] == '\0') {
			continue;
		}
		if (!split_term(terms[i], &ft, &rhs)) {
			buf_printf(errb,
			        "invalid selector: '%s'; can't "
			        "understand '%s'",
			        s, terms[i]);
			return (-1);
		}
		if ((ft.value = unescape(rhs, errb)) == NULL) {
			free(ft.field);
			return (-1);
		}
		sel->t = xreallocarray(sel->t, sel->n + 1, sizeof(*sel->t));
		sel->t[sel->n++] = ft;
	}
	return (0);
}

/* The label conversion (Transform), after every term parsed. */
static int
check_fields(const struct ksel_fields *sel, const char *const *extra,
        struct buf *errb)
{
	size_t i;

	for (i = 0; i < sel->n; i++) {
		if (!field_allowed(sel->t[i].field, extra)) {
			buf_printf(errb, "field label not supported: %s",
			        sel->t[i].field);
			return (-1);
		}
	}
	return (0);
}

struct ksel_fields *
ksel_parse_fields(const char *s, const char *const *allowed_extra,
        const char *resource_plural, char *err, size_t errlen)
{
	struct ksel_fields *sel = xcalloc(1, sizeof(*sel));
	struct buf errb = BUF_INIT;
	char **terms;
	size_t n, i;
	int rc;

	if (s == NULL || *s == '\0') {
		return (sel);
	}
	if (strlen(s) > KSEL_MAX_LEN) {
		set_err(err, errlen, "field selector too long");
		free(sel);
		return (NULL);
	}
	terms = split_terms(s, &n);
	qsort(terms, n, sizeof(*terms), cmp_str);
	rc = parse_terms(sel, s, terms, n, &errb);
	if (rc == 0) {
		rc = check_fields(sel, allowed_extra, &errb);
	}
	for (i = 0; i < n; i++) {
		free(terms[i]);
	}
	free(terms);
	if (rc < 0) {
		log_debug("ksel: %s: %s",
		        resource_plural != NULL ? resource_plural : "?",
		        buf_str(&errb));
		set_err(err, errlen, buf_str(&errb));
		ksel_fields_free(sel);
		sel = NULL;
	}
	buf_fini(&errb);
	return (sel);
}

bool
ksel_match_fields(const struct ksel_fields *sel, json_object *obj)
{
	struct buf v = BUF_INIT;
	bool ok = true;
	size_t i;

	for (i = 0; sel != NULL && i < sel->n && ok; i++) {
		buf_reset(&v);
		(void)value_string(jx_get(obj, sel->t[i].field), &v);
		ok = (strcmp(buf_str(&v), sel->t[i].value) == 0)
		        != sel->t[i].neg;
	}
	buf_fini(&v);
	return (ok);
}

const char *
ksel_fields_name(const struct ksel_fields *sel)
{
	size_t i;

	for (i = 0; sel != NULL && i < sel->n; i++) {
		if (!sel->t[i].neg
		        && strcmp(sel->t[i].field, "metadata.name") == 0) {
			return (sel->t[i].value);
		}
	}
	return (NULL);
}

void
ksel_fields_free(struct ksel_fields *sel)
{
	size_t i;

	if (sel == NULL) {
		return;
	}
	for (i = 0; i < sel->n; i++) {
		free(sel->t[i].field);
		free(sel->t[i].value);
	}
	free(sel->t);
	free(sel);
}
