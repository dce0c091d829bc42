/*
 * test_badobjects.c: the bad-object corpus against the whole operator.
 * One bin/kubesim with our CRDs (deploy/crds/, read with yamlj and
 * POSTed) and one bin/sympoziumd running the production workers.  Every
 * file of tests/integration/data/badobjects/ (but those starting with
 * '_') is created in a namespace of its own ("bo-" + the file's stem);
 * each YAML document of a file is either a fixture (no "# expect:" line:
 * it must be accepted) or a subject whose "# expect:" lines state what
 * the API or the operator must make of it (docs-badobjects.md has the
 * syntax; "# grow:" lines build absurd sizes and deep nesting).  Then a
 * canary set of good objects (_canary.yaml, one per kind) must converge
 * as usual, no worker may have exited, the supervisor writes nothing but
 * Lease renewals for 5 s, and it still runs and exits 0 on SIGTERM.
 *
 * Every wait is bounded.  Only the pid this test forked, and the workers
 * found under it in /proc, are signalled.
 */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "common/yamlj.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define CORPUS    "tests/integration/data/badobjects"
#define CANARY    CORPUS "/_canary.yaml"
#define CRD_DIR   "deploy/crds"
#define WAIT_MS   30000
#define STEADY_MS 5000
#define UA_SD     "sympoziumd"
#define MAX_SUBJ  256

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };

/* The kinds a corpus file may hold. */
static const struct {
	const char *kind;
	struct kapi_res r;
} KINDS[] = {
	{ "AgentRun", { "sympozium.ai", "v1alpha1", "agentruns", true } },
	{ "SympoziumInstance",
	        { "sympozium.ai", "v1alpha1", "sympoziuminstances", true } },
	{ "SympoziumSchedule",
	        { "sympozium.ai", "v1alpha1", "sympoziumschedules", true } },
	{ "SympoziumPolicy",
	        { "sympozium.ai", "v1alpha1", "sympoziumpolicies", true } },
	{ "SkillPack", { "sympozium.ai", "v1alpha1", "skillpacks", true } },
	{ "PersonaPack",
	        { "sympozium.ai", "v1alpha1", "personapacks", true } },
	{ "MCPServer", { "sympozium.ai", "v1alpha1", "mcpservers", true } },
	{ "SympoziumConfig",
	        { "sympozium.ai", "v1alpha1", "sympoziumconfigs", true } },
	{ "Secret", { "", "v1", "secrets", true } },
	{ "ConfigMap", { "", "v1", "configmaps", true } },
};

/* One object whose outcome the corpus states. */
struct subject {
	char *file;   /* file name, for messages */
	char *ns;     /* its namespace */
	char *name;   /* metadata.name */
	char *expect; /* the "# expect:" terms, joined by spaces */
	const struct kapi_res *r;
	bool rejected; /* the API refused it as expected: nothing to wait */
};

static struct optest F;

/* The corpus's subjects. */
static struct {
	struct subject subj[MAX_SUBJ];
	size_t nsubj;
	size_t rejected;
} C;

/* ---- small helpers ---- */

static const struct kapi_res *
res_of(const char *kind)
{
	for (size_t i = 0; i < sizeof(KINDS) / sizeof(KINDS[0]); i++) {
		if (kind != NULL && strcmp(KINDS[i].kind, kind) == 0) {
			return (&KINDS[i].r);
		}
	}
	return (NULL);
}

/* The value at a dotted path whose numeric steps index arrays; NULL when
 * absent.  Borrowed. */
static json_object *
walk(json_object *o, const char *path)
{
	char *p = xstrdup(path), *save = NULL;

	for (char *s = strtok_r(p, ".", &save); s != NULL && o != NULL;
	        s = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array)) {
			char *end = NULL;
			long i = strtol(s, &end, 10);
			o = *end == '\0' && i >= 0
			                && (size_t)i
			                        < json_object_array_length(o)
			        ? json_object_array_get_idx(o, (size_t)i)
			        : NULL;
		} else if (json_object_is_type(o, json_type_object)) {
			o = json_object_object_get(o, s);
		} else {
			o = NULL;
		}
	}
	free(p);
	return (o);
}

/* The scalar at path as text ("" when absent).  Borrowed. */
static const char *
text_at(json_object *o, const char *path)
{
	json_object *v = walk(o, path);

	if (v == NULL || json_object_is_type(v, json_type_object)
	        || json_object_is_type(v, json_type_array)) {
		return ("");
	}
	return (json_object_get_string(v));
}

/* The next term of an expect line from *p: a token, with "..." quotes
 * kept together (and removed).  Caller frees; NULL at the end. */
static char *
next_term(const char **p)
{
	struct buf b = BUF_INIT;
	bool q = false;

	while (isspace((unsigned char)**p)) {
		(*p)++;
	}
	if (**p == '\0') {
		return (NULL);
	}
	for (; **p != '\0' && (q || !isspace((unsigned char)**p)); (*p)++) {
		if (**p == '"') {
			q = !q;
		} else if (**p == '\\' && (*p)[1] != '\0') {
			buf_putc(&b, *++(*p));
		} else {
			buf_putc(&b, **p);
		}
	}
	return (buf_detach(&b, NULL));
}

/* "v1|v2|..." holds v. */
static bool
one_of(const char *alts, const char *v)
{
	size_t n = strlen(v);

	for (const char *a = alts;;) {
		const char *bar = strchr(a, '|');
		size_t len = bar != NULL ? (size_t)(bar - a) : strlen(a);
		if (len == n && strncmp(a, v, n) == 0) {
			return (true);
		}
		if (bar == NULL) {
			return (false);
		}
		a = bar + 1;
	}
}

/* Checks one field term "path=v|w", "path!=v", "path~sub" or "!path"
 * against o; NULL when it holds, else why (static). */
static const char *
check_field(json_object *o, const char *t)
{
	static char why[512];
	const char *op = strpbrk(t, "=~");
	char *path;
	const char *v;
	bool ok;

	if (t[0] == '!' && op == NULL) {
		snprintf(why, sizeof(why), "%s is present", t + 1);
		return (walk(o, t + 1) == NULL ? NULL : why);
	}
	if (op == NULL || op == t) {
		fail_msg("bad expect term \"%s\"", t);
	}
	ok = op[-1] == '!';
	path = xstrndup(t, (size_t)(op - t) - (ok ? 1 : 0));
	v = text_at(o, path);
	if (*op == '~') {
		ok = strstr(v, op + 1) != NULL;
	} else {
		ok = ok != one_of(op + 1, v);
	}
	snprintf(why, sizeof(why), "want %s, have %s=\"%.200s\"", t, path, v);
	free(path);
	return (ok ? NULL : why);
}

/* The condition of type ty in o's status.conditions, or NULL. */
static json_object *
condition(json_object *o, const char *ty)
{
	json_object *cs = walk(o, "status.conditions");

	for (size_t i = 0; i < jx_array_len(cs); i++) {
		json_object *c = json_object_array_get_idx(cs, i);
		if (strcmp(text_at(c, "type"), ty) == 0) {
			return (c);
		}
	}
	return (NULL);
}

/* Checks every term of expect against o (NULL: absent); NULL when all
 * hold, else the first failure (static). */
static const char *
check_all(json_object *o, const char *expect)
{
	static char why[600];
	const char *p = expect, *w = NULL;
	json_object *cond = NULL; /* terms after "condition T=S" apply here */
	char *t;

	if (o == NULL) {
		return ("absent");
	}
	while (w == NULL && (t = next_term(&p)) != NULL) {
		if (strcmp(t, "condition") == 0) {
			char *ts = next_term(&p);
			char *eq = ts != NULL ? strchr(ts, '=') : NULL;
			if (eq == NULL) {
				fail_msg("bad condition in \"%s\"", expect);
			}
			*eq = '\0';
			cond = condition(o, ts);
			if (cond == NULL
			        || !one_of(eq + 1, text_at(cond, "status"))) {
				snprintf(why, sizeof(why),
				        "no condition %s=%s", ts, eq + 1);
				w = why;
			}
			free(ts);
		} else if (cond != NULL
		        && (strncmp(t, "reason", 6) == 0
		                || strncmp(t, "message", 7) == 0)) {
			w = check_field(cond, t);
		} else {
			cond = NULL;
			w = check_field(o, t);
		}
		free(t);
	}
	return (w);
}

/* ---- the API ---- */

static void
make_ns(const char *ns)
{
	if (ksim_api_create(&F.a, &R_NS, NULL, ns, NULL) != KAPI_OK) {
		fail_msg("namespace %s", ns);
	}
}

/* POSTs o (borrowed); answers 0 or the HTTP code of the refusal, the
 * reason in msg.  A 404 (CRD not served yet) is retried. */
static long
post(const struct kapi_res *r, const char *ns, json_object *o, char *msg,
        size_t n)
{
	struct kapi_err e = KAPI_ERR_INIT;
	enum kapi_rc rc = optest_create(&F, r, ns, o, NULL, &e);
	long code = rc == KAPI_OK ? 0 : e.code;

	snprintf(msg, n, "%s", e.message ?: "");
	kapi_err_fini(&e);
	return (code);
}

/* ---- grow: absurd sizes and deep nesting ---- */

/* A string of n bytes repeating seed (whole UTF-8 sequences only: the
 * tail is padded with 'x'). */
static json_object *
grow_string(const char *seed, size_t n)
{
	size_t sl = seed[0] != '\0' ? strlen(seed) : 1;
	char *s = xmalloc(n + 1);
	size_t i = 0;

	for (; i + sl <= n; i += sl) {
		memcpy(s + i, seed[0] != '\0' ? seed : "x", sl);
	}
	memset(s + i, 'x', n - i);
	s[n] = '\0';
	json_object *o = json_object_new_string_len(s, (int)n);
	free(s);
	return (o);
}

/* count copies of a's first element, each "name" suffixed "-<i>". */
static json_object *
grow_array(json_object *a, size_t count)
{
	json_object *first = json_object_array_get_idx(a, 0), *out;

	if (first == NULL) {
		fail_msg("grow array: empty array");
	}
	out = json_object_new_array();
	for (size_t i = 0; i < count; i++) {
		json_object *c = NULL;
		const char *nm = text_at(first, "name");
		assert_int_equal(json_object_deep_copy(first, &c, NULL), 0);
		if (nm[0] != '\0') {
			char *x = xasprintf("%s-%zu", nm, i);
			json_object_object_add(
			        c, "name", json_object_new_string(x));
			free(x);
		}
		json_object_array_add(out, c);
	}
	return (out);
}

/* seed followed by n invalid UTF-8 sequences (a lone continuation byte,
 * a truncated two-byte sequence, an overlong '/', 0xff). */
static json_object *
bad_utf8(const char *seed, size_t n)
{
	static const char bad[] = "\x80"
	                          "\xc3("
	                          "\xc0\xaf"
	                          "\xff";
	struct buf b = BUF_INIT;
	json_object *o;
	size_t len;
	char *s;

	buf_puts(&b, seed);
	for (size_t i = 0; i < n; i++) {
		buf_append(&b, bad, sizeof(bad) - 1);
	}
	s = buf_detach(&b, &len);
	o = json_object_new_string_len(s, (int)len);
	free(s);
	return (o);
}

static json_object *
grow_nest(size_t depth)
{
	json_object *o = json_object_new_object();

	for (size_t i = 1; i < depth; i++) {
		json_object *up = json_object_new_object();
		json_object_object_add(up, "n", o);
		o = up;
	}
	return (o);
}

/* Sets the value at path (numeric steps index arrays; the parent must
 * exist, or be created when every step is a key) to v (put here). */
static void
set_at(json_object *doc, const char *path, json_object *v)
{
	char *parent = xstrdup(path), *last = strrchr(parent, '.');
	json_object *up = NULL;

	if (last != NULL) {
		*last++ = '\0';
		up = walk(doc, parent);
	}
	if (up != NULL && json_object_is_type(up, json_type_object)) {
		json_object_object_add(up, last, v);
	} else if (up != NULL && json_object_is_type(up, json_type_array)) {
		if (json_object_array_put_idx(
		            up, (size_t)strtol(last, NULL, 10), v)
		        != 0) {
			fail_msg("grow: cannot set %s", path);
		}
	} else {
		assert_int_equal(jx_set_path(doc, path, v), 0);
	}
	free(parent);
}

/* Applies "# grow: PATH string|array|nest N" to doc. */
static void
grow(json_object *doc, const char *line)
{
	char path[256], how[16];
	unsigned long n = 0;
	json_object *v = NULL;

	if (sscanf(line, "%255s %15s %lu", path, how, &n) != 3) {
		fail_msg("bad grow line \"%s\"", line);
	}
	if (strcmp(how, "string") == 0) {
		v = grow_string(text_at(doc, path), n);
	} else if (strcmp(how, "array") == 0) {
		v = grow_array(walk(doc, path), n);
	} else if (strcmp(how, "badutf8") == 0) {
		v = bad_utf8(text_at(doc, path), n);
	} else if (strcmp(how, "nest") == 0) {
		v = grow_nest(n);
	} else {
		fail_msg("bad grow kind \"%s\"", how);
	}
	set_at(doc, path, v);
}

/* ---- the corpus ---- */

/* The text after "# key:" on a comment line, or NULL. */
static const char *
directive(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, "# ", 2) != 0 || strncmp(line + 2, key, n) != 0
	        || line[2 + n] != ':') {
		return (NULL);
	}
	return (line + 3 + n);
}

/* The expected HTTP code of "rejected N" in expect, or 0. */
static long
rejected_code(const char *expect)
{
	const char *r = strstr(expect, "rejected ");

	return (r != NULL ? strtol(r + 9, NULL, 10) : 0);
}

/* Records a subject; expect is taken. */
static void
record(const char *file, const char *ns, const char *name,
        const struct kapi_res *r, char *expect)
{
	struct subject *s = &C.subj[C.nsubj++];

	assert_true(C.nsubj < MAX_SUBJ);
	s->file = xstrdup(file);
	s->ns = xstrdup(ns);
	s->name = xstrdup(name);
	s->expect = expect;
	s->r = r;
	s->rejected = rejected_code(expect) != 0;
	C.rejected += s->rejected;
}

/* Creates one document (text of one YAML document, its directives in
 * comment lines) of file in ns; records a subject. */
static void
load_doc(const char *file, const char *ns, const char *text)
{
	struct buf exp = BUF_INIT;
	char *copy = xstrdup(text), *save = NULL, err[256] = "", msg[512];
	json_object *docs
	        = yamlj_parse_all(text, strlen(text), err, sizeof(err)),
	        *o;
	const struct kapi_res *r;
	long code, want;
	bool observe = false; /* made by the operator: check only */

	if (docs == NULL) {
		fail_msg("%s: %s", file, err);
	}
	if (json_object_array_length(docs) == 0) {
		json_object_put(docs);
		free(copy);
		return;
	}
	o = json_object_array_get_idx(docs, 0);
	for (char *l = strtok_r(copy, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		const char *v;
		if (directive(l, "observe") != NULL) {
			observe = true;
		} else if ((v = directive(l, "expect")) != NULL) {
			buf_printf(&exp, "%s ", v);
		} else if ((v = directive(l, "grow")) != NULL) {
			grow(o, v);
		}
	}
	if ((r = res_of(text_at(o, "kind"))) == NULL) {
		fail_msg("%s: unknown kind %s", file, text_at(o, "kind"));
	}
	jx_set_path(o, "metadata.namespace", json_object_new_string(ns));
	code = observe ? 0 : post(r, ns, o, msg, sizeof(msg));
	want = rejected_code(exp.len > 0 ? buf_str(&exp) : "");
	if (code != want) {
		fail_msg("%s: %s %s: HTTP %ld (want %ld) %s", file, r->plural,
		        text_at(o, "metadata.name"), code, want, msg);
	}
	if (exp.len > 0) {
		record(file, ns, text_at(o, "metadata.name"), r,
		        buf_detach(&exp, NULL));
	}
	if (want != 0) {
		fprintf(stderr, "  %s: refused %ld: %.160s\n", file, code,
		        msg);
	}
	buf_fini(&exp);
	json_object_put(docs);
	free(copy);
}

/* Creates every document of path in ns. */
static void
load_file(const char *path, const char *file, const char *ns)
{
	char *text = testutil_read_file(path, NULL);
	char *p = text;

	assert_non_null(text);
	while (p != NULL) {
		char *sep = strstr(p, "\n---");
		while (sep != NULL && sep[4] != '\n' && sep[4] != '\0'
		        && sep[4] != ' ') {
			sep = strstr(sep + 4, "\n---");
		}
		if (sep != NULL) {
			*sep = '\0';
		}
		load_doc(file, ns, p);
		p = sep != NULL ? sep + 4 : NULL;
	}
	free(text);
}

static int
by_name(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* The corpus's file names, sorted, NULL-terminated.  Caller frees. */
static char **
corpus_files(void)
{
	DIR *d = opendir(CORPUS);
	struct dirent *de;
	char **v = xcalloc(MAX_SUBJ + 1, sizeof(*v));
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '_' || de->d_name[0] == '.' || len < 6
		        || strcmp(de->d_name + len - 5, ".yaml") != 0) {
			continue;
		}
		assert_true(n < MAX_SUBJ);
		v[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), by_name);
	return (v);
}

/* Polls every recorded subject from index from until its expectation
 * holds; fails with every subject still wrong after WAIT_MS. */
static void
wait_subjects(size_t from)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	size_t bad;

	do {
		bad = 0;
		for (size_t i = from; i < C.nsubj; i++) {
			struct subject *s = &C.subj[i];
			json_object *o;
			const char *why;
			if (s->rejected) {
				continue;
			}
			o = optest_get(&F, s->r, s->ns, s->name);
			why = check_all(o, s->expect);
			if (why != NULL) {
				bad++;
				if (ksim_now_ms() >= end) {
					fprintf(stderr,
					        "%s: %s %s/%s: %s\n  object: "
					        "%.1200s\n",
					        s->file, s->r->plural, s->ns,
					        s->name, why,
					        o != NULL
					                ? json_object_to_json_string(
					                        o)
					                : "(absent)");
				}
			}
			json_object_put(o);
		}
		if (bad > 0 && ksim_now_ms() < end) {
			ksim_sleep_ms(250);
		} else if (bad > 0) {
			fail_msg(
			        "%zu object(s) without their expected outcome",
			        bad);
		}
	} while (bad > 0);
}

/* ---- group setup / teardown ---- */

/* kubesim with our CRDs, then the supervisor (leader election, a health
 * socket for sympoziumctl). */
static int
setup(void **state)
{
	const char *args[] = { "--leader-elect", "--leader-election-namespace",
		"default", "--health-socket", F.sock, NULL };

	*state = &F;
	if (optest_start(&F, "test-badobjects", NULL, 20000, WAIT_MS) != 0) {
		return (-1);
	}
	assert_int_equal(ksim_apply_crds(F.a.c, CRD_DIR), 8);
	optest_sd_start(&F, 0, 0, args);
	return (0);
}

static int
teardown(void **state)
{
	for (size_t i = 0; i < C.nsubj; i++) {
		free(C.subj[i].file);
		free(C.subj[i].ns);
		free(C.subj[i].name);
		free(C.subj[i].expect);
	}
	return (optest_teardown(state));
}

/* ---- the tests ---- */

/* "bo-" + the file's stem, lower-cased, other characters as '-'. */
static char *
ns_of(const char *file)
{
	char *ns = xasprintf("bo-%.*s", (int)(strlen(file) - 5), file);

	for (char *p = ns; *p != '\0'; p++) {
		*p = (char)tolower((unsigned char)*p);
		if (!isalnum((unsigned char)*p)) {
			*p = '-';
		}
	}
	ns[63 < strlen(ns) ? 63 : strlen(ns)] = '\0';
	return (ns);
}

/* Adds the "# kubelet: {rule}" lines of path to rules, each for ns. */
static void
kubelet_rules_of(const char *path, const char *ns, json_object *rules)
{
	char *text = testutil_read_file(path, NULL), *save = NULL;

	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		const char *v = directive(l, "kubelet");
		json_object *r = v != NULL ? json_tokener_parse(v) : NULL;
		if (v != NULL && r == NULL) {
			fail_msg("%s: bad kubelet rule %s", path, v);
		}
		if (r != NULL) {
			json_object_object_add(
			        r, "namespace", json_object_new_string(ns));
			json_object_array_add(rules, r);
		}
	}
	free(text);
}

/* PUTs kubesim's kubelet rules (they apply to pods created later). */
static void
put_kubelet_rules(json_object *rules)
{
	json_object *body = json_object_new_object();

	json_object_object_add(body, "rules", rules);
	optest_kubelet_rules(&F, json_object_to_json_string(body));
	json_object_put(body);
}

static void
test_corpus(void **state)
{
	char **files = corpus_files();
	size_t n = 0;

	json_object *rules = json_object_new_array();

	(void)state;
	for (size_t i = 0; files[i] != NULL; i++) {
		char *ns = ns_of(files[i]);
		char *path = xasprintf("%s/%s", CORPUS, files[i]);
		kubelet_rules_of(path, ns, rules);
		free(path);
		free(ns);
	}
	put_kubelet_rules(rules);
	for (; files[n] != NULL; n++) {
		char *ns = ns_of(files[n]);
		char *path = xasprintf("%s/%s", CORPUS, files[n]);
		make_ns(ns);
		load_file(path, files[n], ns);
		free(path);
		free(ns);
		free(files[n]);
	}
	free(files);
	fprintf(stderr,
	        "  corpus: %zu files, %zu subjects (%zu refused by "
	        "the API)\n",
	        n, C.nsubj, C.rejected);
	assert_true(n >= 30);
	wait_subjects(0);
}

static void
test_canary(void **state)
{
	size_t from = C.nsubj;

	(void)state;
	make_ns("canary");
	load_file(CANARY, "_canary.yaml", "canary");
	assert_int_equal(C.nsubj - from, 6);
	wait_subjects(from);
}

/* The worker table from sympoziumctl --json workers.  Caller puts. */
static json_object *
ctl_workers(void)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        F.dir, NULL, "--socket", F.sock, "--json", "workers", NULL);
	json_object *o;

	if (r.rc != 0) {
		fail_msg("sympoziumctl --json workers: exit %d: %s%s", r.rc,
		        r.out, r.err);
	}
	o = json_tokener_parse(r.out);
	if (o == NULL) {
		fail_msg("sympoziumctl --json workers: not JSON: %s", r.out);
	}
	sdproc_ctl_free(&r);
	return (o);
}

/* Every worker ready, none restarted. */
static void
assert_no_restart(void)
{
	json_object *o = ctl_workers(), *ws = jx_get(o, "workers");
	size_t n = ws != NULL ? json_object_array_length(ws) : 0;

	assert_true(n >= 6);
	for (size_t i = 0; i < n; i++) {
		json_object *w = json_object_array_get_idx(ws, i);
		int64_t r = -1;
		if (jx_get_int(w, "restarts", &r) != 0 || r != 0) {
			fail_msg("worker %s restarted %lld time(s), last "
			         "exit: %s",
			        text_at(w, "name"), (long long)r,
			        text_at(w, "lastExit"));
		}
	}
	fprintf(stderr, "  %zu workers, none restarted\n", n);
	json_object_put(o);
}

/* No worker exited, the supervisor runs, and it writes nothing but Lease
 * renewals for STEADY_MS. */
static void
test_nothing_broke(void **state)
{
	int skip, n;
	char *t;

	(void)state;
	ksim_wait_quiet(F.a.request_log, UA_SD, 1500, WAIT_MS);
	skip = ksim_log_lines(F.a.request_log);
	ksim_sleep_ms(STEADY_MS);
	if ((n = ksim_writes_after(F.a.request_log, UA_SD, skip, false))
	        != 0) {
		(void)ksim_writes_after(F.a.request_log, UA_SD, skip, true);
		fail_msg("%d write(s) by the supervisor in %d ms of steady "
		         "state; want 0",
		        n, STEADY_MS);
	}
	assert_true(F.sd[0].pid > 0);
	assert_int_equal(waitpid(F.sd[0].pid, &F.sd[0].status, WNOHANG), 0);
	t = testutil_read_file(F.sd[0].log, NULL);
	assert_non_null(t);
	if (strstr(t, "exited:") != NULL) {
		sdproc_dump_log(F.sd[0].log);
		fail_msg("a worker exited");
	}
	free(t);
	assert_no_restart();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_canary),
		cmocka_unit_test(test_nothing_broke),
		cmocka_unit_test(optest_test_sigterm),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
