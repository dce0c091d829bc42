/*
 * test_doclinks.c: every relative link of the documentation resolves.
 *
 * Walks the repository from its root (the directory the tests run in:
 * tests/run-tests.sh changes to it) and reads every *.md file outside
 * hidden directories, build/ and bin/.  For each inline link or image
 * ([text](dest), ![alt](dest), with or without a title or <angle
 * brackets>) and each reference definition ([label]: dest) outside code
 * (fenced blocks and code spans), a relative destination must name a file
 * or directory of the repository (relative to the linking file, or to the
 * root with a leading /), and a #fragment into a Markdown file (or into
 * the same file) must match one of its headings' anchors as GitHub makes
 * them (lowercase; punctuation dropped except - and _; spaces to -; a
 * repeated anchor gets -1, -2, ...), or an explicit <a name="..."> or
 * id="...".  Destinations with a scheme (https:, mailto:) are not
 * checked: the test needs no network.
 *
 * The parser and the checker are tested here on fixtures first (a broken
 * file link and a broken anchor must be reported), so the repository test
 * cannot pass by finding nothing.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/xmalloc.h"
#include "tests/lib/testutil.h"

/* One link found in a Markdown text. */
struct ml_link {
	char *dest; /* as written, angle brackets and title removed */
	int line;   /* 1-based */
};

struct ml_links {
	struct ml_link *v;
	size_t n, cap;
};

/* The anchors of one Markdown file. */
struct ml_anchors {
	char **v;
	size_t n, cap;
};

/* Everything the checker found and saw. */
struct ml_report {
	struct buf errors; /* one line per broken link */
	size_t nbroken, nfiles, nlinks, nchecked;
};

static void
links_add(struct ml_links *l, const char *dest, size_t len, int line)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n].dest = xstrndup(dest, len);
	l->v[l->n].line = line;
	l->n++;
}

static void
links_fini(struct ml_links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].dest);
	}
	free(l->v);
	*l = (struct ml_links) { 0 };
}

static void
anchors_add(struct ml_anchors *a, char *s)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 16;
		a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
	}
	a->v[a->n++] = s;
}

static bool
anchors_has(const struct ml_anchors *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->v[i], s) == 0) {
			return (true);
		}
	}
	return (false);
}

static void
anchors_fini(struct ml_anchors *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i]);
	}
	free(a->v);
	*a = (struct ml_anchors) { 0 };
}

/* The length of the line starting at p, without its newline. */
static size_t
line_len(const char *p)
{
	const char *e = strchr(p, '\n');

	return (e ? (size_t)(e - p) : strlen(p));
}

/* A fence line: up to 3 spaces, then ``` or ~~~. */
static char
fence_char(const char *p, size_t len)
{
	size_t i = 0;

	while (i < len && i < 3 && p[i] == ' ') {
		i++;
	}
	if (i + 3 <= len && (p[i] == '`' || p[i] == '~') && p[i + 1] == p[i]
	        && p[i + 2] == p[i]) {
		return (p[i]);
	}
	return (0);
}

/* The text of a Markdown document with fenced code blocks blanked out
 * (newlines kept, so line numbers hold). */
static char *
strip_fences(const char *text)
{
	char *out = xstrdup(text);
	char fence = 0;
	char *p = out;

	while (*p != '\0') {
		size_t len = line_len(p);
		char f = fence_char(p, len);

		if (fence != 0 || f != 0) {
			memset(p, ' ', len);
			if (f != 0) {
				fence = fence == f ? 0 : (fence ? fence : f);
			}
		}
		p += len + (p[len] == '\n');
	}
	return (out);
}

/* The end of the code span opening with run backticks at q (the first
 * character after them), or NULL: the same number of backticks, within
 * the paragraph. */
static char *
span_end(char *q, size_t run)
{
	for (; *q != '\0'; q++) {
		size_t n = 0;

		if (q[0] == '\n' && q[1] == '\n') {
			return (NULL);
		}
		while (q[n] == '`') {
			n++;
		}
		if (n == run) {
			return (q);
		}
		q += n ? n - 1 : 0;
	}
	return (NULL);
}

/* strip_fences(), and code spans blanked out too. */
static char *
strip_code(const char *text)
{
	char *out = strip_fences(text);

	for (char *p = out; *p != '\0'; p++) {
		size_t run = 0;
		char *q;

		while (p[run] == '`') {
			run++;
		}
		if (run == 0) {
			continue;
		}
		if ((q = span_end(p + run, run)) == NULL) {
			p += run - 1;
			continue;
		}
		for (char *r = p; r < q + run; r++) {
			*r = *r == '\n' ? '\n' : ' ';
		}
		p = q + run - 1;
	}
	return (out);
}

static int
line_of(const char *text, const char *p)
{
	int line = 1;

	for (const char *q = text; q < p; q++) {
		line += *q == '\n';
	}
	return (line);
}

/* p after "](" : the destination, without <> and title, into links. */
static void
inline_dest(const char *text, const char *p, struct ml_links *out)
{
	const char *s, *e;
	int depth = 0;

	while (*p == ' ' || *p == '\n') {
		p++;
	}
	if (*p == '<') {
		s = p + 1;
		e = strpbrk(s, ">\n");
		if (e != NULL && *e == '>') {
			links_add(out, s, (size_t)(e - s), line_of(text, s));
		}
		return;
	}
	for (s = e = p; *e != '\0' && *e != ' ' && *e != '\n'; e++) {
		if (*e == '(') {
			depth++;
		} else if (*e == ')' && depth-- == 0) {
			break;
		}
	}
	if (e > s) {
		links_add(out, s, (size_t)(e - s), line_of(text, s));
	}
}

/* The end of the bracketed text starting at p ('['), or NULL. */
static const char *
bracket_end(const char *p)
{
	int depth = 0;

	for (; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0') {
			p++;
		} else if (*p == '[') {
			depth++;
		} else if (*p == ']' && --depth == 0) {
			return (p);
		} else if (p[0] == '\n' && p[1] == '\n') {
			return (NULL);
		}
	}
	return (NULL);
}

/* A reference definition "[label]: dest" at the start of line p. */
static void
ref_def(const char *text, const char *p, struct ml_links *out)
{
	const char *e, *s;

	while (*p == ' ') {
		p++;
	}
	if (*p != '[' || (e = bracket_end(p)) == NULL || e[1] != ':') {
		return;
	}
	s = e + 2;
	while (*s == ' ') {
		s++;
	}
	if (*s == '<') {
		inline_dest(text, s, out);
		return;
	}
	for (e = s; *e != '\0' && *e != ' ' && *e != '\n'; e++) { }
	if (e > s) {
		links_add(out, s, (size_t)(e - s), line_of(text, s));
	}
}

/* Every link of a Markdown text, code excepted. */
static void
ml_parse(const char *text, struct ml_links *out)
{
	char *t = strip_code(text);

	for (const char *p = t; *p != '\0'; p++) {
		const char *e;

		if (p == t || p[-1] == '\n') {
			ref_def(t, p, out);
		}
		if (*p == '\\' && p[1] != '\0') {
			p++;
			continue;
		}
		if (*p != '[' || (e = bracket_end(p)) == NULL) {
			continue;
		}
		if (e[1] == '(') {
			inline_dest(t, e + 2, out);
		}
	}
	free(t);
}

/* The code point of the UTF-8 sequence at s (its length in *n). */
static uint32_t
utf8_at(const unsigned char *s, size_t *n)
{
	if (s[0] < 0xC0) {
		*n = 1;
		return (s[0]);
	}
	if (s[0] < 0xE0 && (s[1] & 0xC0) == 0x80) {
		*n = 2;
		return ((uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F));
	}
	if (s[0] < 0xF0 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
		*n = 3;
		return ((uint32_t)(s[0] & 0x0F) << 12
		        | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F));
	}
	if ((s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80
	        && (s[3] & 0xC0) == 0x80) {
		*n = 4;
		return ((uint32_t)(s[0] & 0x07) << 18
		        | (uint32_t)(s[1] & 0x3F) << 12
		        | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F));
	}
	*n = 1;
	return (0xFFFD);
}

/* Non-ASCII code points GitHub drops from an anchor: punctuation and
 * symbols of the blocks headings here may use. */
static bool
uni_dropped(uint32_t c)
{
	return ((c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB5 && c != 0xBA)
	        || c == 0xD7 || c == 0xF7 || (c >= 0x2000 && c <= 0x2BFF)
	        || (c >= 0x3000 && c <= 0x303F) || c >= 0x1F000);
}

/*
 * GitHub's anchor for a heading's text: markup of links and images
 * reduced to their text, lowercase, everything but letters, marks,
 * digits, '_', '-' and spaces dropped, spaces made '-'.
 */
static char *
ml_slug(const char *heading)
{
	struct buf b = BUF_INIT;
	const unsigned char *s = (const unsigned char *)heading;

	while (*s != '\0') {
		size_t n;
		uint32_t c = utf8_at(s, &n);

		if (c == ']' && s[1] == '(') {
			const char *e = strchr((const char *)s, ')');

			s = e ? (const unsigned char *)e + 1 : s + 1;
			continue;
		}
		if (c >= 0x80) {
			if (!uni_dropped(c)) {
				buf_append(&b, s, n);
			}
		} else if (c >= 'A' && c <= 'Z') {
			buf_putc(&b, (char)(c - 'A' + 'a'));
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		        || c == '_' || c == '-') {
			buf_putc(&b, (char)c);
		} else if (c == ' ') {
			buf_putc(&b, '-');
		}
		s += n;
	}
	return (buf_detach(&b, NULL));
}

/* The anchor text of an explicit <a name="x"> or id="x" at p, or NULL. */
static char *
html_anchor(const char *p)
{
	static const char *const keys[] = { "name=\"", "id=\"" };

	for (size_t i = 0; i < 2; i++) {
		size_t kl = strlen(keys[i]);
		const char *e;

		if (strncmp(p, keys[i], kl) == 0
		        && (e = strchr(p + kl, '"')) != NULL) {
			return (xstrndup(p + kl, (size_t)(e - p - kl)));
		}
	}
	return (NULL);
}

/* The heading text of an ATX heading line (NULL if it is none). */
static char *
atx_text(const char *p, size_t len)
{
	size_t i = 0, h = 0;

	while (i < len && i < 3 && p[i] == ' ') {
		i++;
	}
	while (i + h < len && p[i + h] == '#') {
		h++;
	}
	if (h == 0 || h > 6 || (i + h < len && p[i + h] != ' ')) {
		return (NULL);
	}
	i += h;
	while (i < len && p[i] == ' ') {
		i++;
	}
	while (len > i && (p[len - 1] == ' ' || p[len - 1] == '\r')) {
		len--;
	}
	while (len > i && p[len - 1] == '#') {
		len--;
	}
	while (len > i && p[len - 1] == ' ') {
		len--;
	}
	return (xstrndup(p + i, len - i));
}

/* The anchor of a heading, with GitHub's -N suffix for repeats. */
static void
add_heading(struct ml_anchors *a, char *text)
{
	char *slug = ml_slug(text);
	char *name = xstrdup(slug);

	for (int n = 1; anchors_has(a, name); n++) {
		free(name);
		name = xasprintf("%s-%d", slug, n);
	}
	anchors_add(a, name);
	free(slug);
	free(text);
}

/* Every anchor a Markdown text defines. */
static void
ml_anchors(const char *text, struct ml_anchors *out)
{
	char *t = strip_fences(text);

	for (const char *p = t; *p != '\0';) {
		size_t len = line_len(p);
		char *h = atx_text(p, len);

		if (h != NULL) {
			add_heading(out, h);
		}
		for (const char *q = p; q < p + len; q++) {
			char *x = html_anchor(q);

			if (x != NULL) {
				anchors_add(out, x);
			}
		}
		p += len + (p[len] == '\n');
	}
	free(t);
}

static bool
has_scheme(const char *d)
{
	size_t i = 0;

	if (!((d[0] >= 'a' && d[0] <= 'z') || (d[0] >= 'A' && d[0] <= 'Z'))) {
		return (false);
	}
	while (d[i] != '\0'
	        && (isalnum((unsigned char)d[i]) || d[i] == '+' || d[i] == '.'
	                || d[i] == '-')) {
		i++;
	}
	return (d[i] == ':');
}

/* %XX decoded, in place. */
static void
pct_decode(char *s)
{
	char *w = s;

	for (char *r = s; *r != '\0'; r++) {
		unsigned v;

		if (r[0] == '%' && sscanf(r + 1, "%2x", &v) == 1
		        && isxdigit((unsigned char)r[1])
		        && isxdigit((unsigned char)r[2])) {
			*w++ = (char)v;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/*
 * The repository path of rel seen from the directory dir (both relative
 * to the root, dir "" for the root), normalized; NULL when it climbs out
 * of the repository.  Caller frees with free().
 */
static char *
resolve(const char *dir, const char *rel)
{
	char *joined = rel[0] == '/'
	        ? xstrdup(rel + 1)
	        : xasprintf("%s%s%s", dir, dir[0] ? "/" : "", rel);
	char **parts = xcalloc(strlen(joined) + 1, sizeof(*parts));
	size_t n = 0;
	struct buf b = BUF_INIT;
	char *save = NULL;

	for (char *c = strtok_r(joined, "/", &save); c != NULL;
	        c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0) {
			continue;
		}
		if (strcmp(c, "..") == 0) {
			if (n == 0) {
				free(parts);
				free(joined);
				return (NULL);
			}
			n--;
			continue;
		}
		parts[n++] = c;
	}
	for (size_t i = 0; i < n; i++) {
		buf_printf(&b, "%s%s", i ? "/" : "", parts[i]);
	}
	if (n == 0) {
		buf_puts(&b, ".");
	}
	free(parts);
	free(joined);
	return (buf_detach(&b, NULL));
}

static bool
is_md(const char *path)
{
	size_t n = strlen(path);

	return (n > 3 && strcmp(path + n - 3, ".md") == 0);
}

static char *
read_text(const char *root, const char *rel)
{
	struct buf b = BUF_INIT;
	char *path = xasprintf("%s/%s", root, rel);
	int rc = buf_read_file(&b, path, 16u << 20);

	free(path);
	if (rc != 0) {
		buf_fini(&b);
		return (NULL);
	}
	return (buf_detach(&b, NULL));
}

static void
broken(struct ml_report *r, const char *file, int line, const char *dest,
        const char *why)
{
	buf_printf(&r->errors, "%s:%d: link %s: %s\n", file, line, dest, why);
	r->nbroken++;
}

/* An anchor must exist in the Markdown file target (repository path). */
static void
check_anchor(struct ml_report *r, const char *root, const char *file,
        const struct ml_link *l, const char *target, const char *frag)
{
	struct ml_anchors a = { 0 };
	char *text = read_text(root, target);

	if (text == NULL) {
		broken(r, file, l->line, l->dest, "cannot read the target");
		return;
	}
	ml_anchors(text, &a);
	if (!anchors_has(&a, frag)) {
		char *why = xasprintf("no heading #%s in %s", frag, target);

		broken(r, file, l->line, l->dest, why);
		free(why);
	}
	anchors_fini(&a);
	free(text);
}

/* One link of the file (repository path) whose directory is dir. */
static void
check_link(struct ml_report *r, const char *root, const char *file,
        const char *dir, const struct ml_link *l)
{
	char *path = xstrdup(l->dest), *frag = strchr(path, '#');
	char *target, *full;
	struct stat st;

	if (has_scheme(l->dest)) {
		free(path);
		return;
	}
	r->nchecked++;
	if (frag != NULL) {
		*frag++ = '\0';
	}
	pct_decode(path);
	target = path[0] ? resolve(dir, path) : xstrdup(file);
	if (target == NULL) {
		broken(r, file, l->line, l->dest, "outside the repository");
		free(path);
		return;
	}
	full = xasprintf("%s/%s", root, target);
	if (stat(full, &st) != 0) {
		broken(r, file, l->line, l->dest, "no such file");
	} else if (frag != NULL && frag[0] != '\0' && is_md(target)
	        && S_ISREG(st.st_mode)) {
		check_anchor(r, root, file, l, target, frag);
	}
	free(full);
	free(target);
	free(path);
}

/* Every link of one Markdown file (repository path rel). */
static void
check_file(struct ml_report *r, const char *root, const char *rel)
{
	struct ml_links links = { 0 };
	char *text = read_text(root, rel);
	char *dir = xstrdup(rel), *slash = strrchr(dir, '/');

	if (slash != NULL) {
		*slash = '\0';
	} else {
		dir[0] = '\0';
	}
	r->nfiles++;
	if (text == NULL) {
		broken(r, rel, 0, rel, "cannot read the file");
	} else {
		ml_parse(text, &links);
	}
	r->nlinks += links.n;
	for (size_t i = 0; i < links.n; i++) {
		check_link(r, root, rel, dir, &links.v[i]);
	}
	links_fini(&links);
	free(text);
	free(dir);
}

static bool
skipped_dir(const char *name)
{
	return (name[0] == '.' || strcmp(name, "build") == 0
	        || strcmp(name, "bin") == 0);
}

/* Every *.md below rel (repository path, "" for the root). */
static void
walk(struct ml_report *r, const char *root, const char *rel)
{
	char *path = xasprintf("%s%s%s", root, rel[0] ? "/" : "", rel);
	DIR *d = opendir(path);
	struct dirent *e;

	if (d == NULL) {
		broken(r, rel, 0, rel, "cannot open the directory");
		free(path);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char *sub;
		struct stat st;
		char *full;

		if (strcmp(e->d_name, ".") == 0
		        || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		sub = xasprintf("%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
		full = xasprintf("%s/%s", root, sub);
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (!skipped_dir(e->d_name)) {
				walk(r, root, sub);
			}
		} else if (S_ISREG(st.st_mode) && is_md(sub)) {
			check_file(r, root, sub);
		}
		free(full);
		free(sub);
	}
	closedir(d);
	free(path);
}

static void
ml_check_tree(struct ml_report *r, const char *root)
{
	*r = (struct ml_report) { .errors = BUF_INIT };
	walk(r, root, "");
}

/* ---- tests ---- */

static void
expect_slug(const char *heading, const char *want)
{
	char *got = ml_slug(heading);

	if (strcmp(got, want) != 0) {
		fail_msg("slug of \"%s\": got \"%s\", want \"%s\"", heading,
		        got, want);
	}
	free(got);
}

static void
test_slug(void **state)
{
	(void)state;
	expect_slug("Set up and run", "set-up-and-run");
	expect_slug("Operator's manual", "operators-manual");
	expect_slug("The health socket and `sympoziumctl`",
	        "the-health-socket-and-sympoziumctl");
	expect_slug("What the supervisor counts: supervisor/stats.{c,h}",
	        "what-the-supervisor-counts-supervisorstatsch");
	expect_slug("Faults (seeded PRNG; one every 150 to 900 ms)",
	        "faults-seeded-prng-one-every-150-to-900-ms");
	expect_slug("Probes and metrics (`/healthz`, `/readyz`)",
	        "probes-and-metrics-healthz-readyz");
	expect_slug("snake_case and kebab-case", "snake_case-and-kebab-case");
	expect_slug("Targets \xe2\x80\x94 m\xc3\xa1s", "targets--m\xc3\xa1s");
	expect_slug("See [the guide](x.md) now", "see-the-guide-now");
	expect_slug("**Bold** *it*", "bold-it");
}

static void
test_anchors(void **state)
{
	struct ml_anchors a = { 0 };

	(void)state;
	ml_anchors("# Top\n\n## Tests\n\ntext\n\n### Tests\n\n"
	           "```\n# not a heading\n```\n\n#nospace\n"
	           "## Closed ##\n<a name=\"explicit\"></a>\n"
	           "   ## Indented\n    ## code, not counted by us either\n"
	           "## The `sandbox_filter.c` lists\n",
	        &a);
	assert_true(anchors_has(&a, "top"));
	assert_true(anchors_has(&a, "tests"));
	assert_true(anchors_has(&a, "tests-1"));
	assert_true(anchors_has(&a, "closed"));
	assert_true(anchors_has(&a, "explicit"));
	assert_true(anchors_has(&a, "indented"));
	assert_true(anchors_has(&a, "the-sandbox_filterc-lists"));
	assert_false(anchors_has(&a, "not-a-heading"));
	assert_false(anchors_has(&a, "nospace"));
	anchors_fini(&a);
}

static void
test_parse(void **state)
{
	struct ml_links l = { 0 };
	static const char *const want[] = { "a.md", "b.md#sec", "img.png",
		"c d.md", "https://example.com/x", "ref.md", "e.md", "f(1).md",
		"#local" };

	(void)state;
	ml_parse("[A](a.md) and [B](b.md#sec \"title\")\n"
	         "![img](img.png) [C](<c d.md>)\n"
	         "`[code](x.md)` and ``[more `code`](y.md)``\n"
	         "```\n[fenced](z.md)\n```\n"
	         "[web](https://example.com/x)\n"
	         "[ref]: ref.md\n"
	         "[[nested] text](e.md) \\[not](n.md)\n"
	         "[paren](f(1).md) [self](#local)\n",
	        &l);
	assert_int_equal(l.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < l.n; i++) {
		assert_string_equal(l.v[i].dest, want[i]);
	}
	assert_int_equal(l.v[0].line, 1);
	assert_int_equal(l.v[2].line, 2);
	assert_int_equal(l.v[8].line, 10);
	links_fini(&l);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

/* A broken file link and a broken anchor are reported, nothing else. */
static void
test_broken_detected(void **state)
{
	char dir[] = "/tmp/doclinks-XXXXXX";
	struct ml_report r;
	char *sub;

	(void)state;
	assert_non_null(mkdtemp(dir));
	sub = xasprintf("%s/docs", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(dir, "README.md",
	        "# Top\n\n## Quick start\n\n[ok](docs/b.md#the-part) "
	        "[ok2](docs/) [self](#quick-start)\n"
	        "[gone](docs/missing.md)\n[bad anchor](docs/b.md#nope)\n"
	        "[out](../elsewhere.md) [web](https://x.invalid/)\n");
	write_file(sub, "b.md",
	        "# B\n\n## The part\n\n[up](../README.md#top) "
	        "[root](/README.md)\n");
	ml_check_tree(&r, dir);
	fprintf(stderr, "%s", buf_str(&r.errors));
	assert_int_equal(r.nfiles, 2);
	assert_int_equal(r.nbroken, 3);
	assert_int_equal(r.nchecked, 8);
	assert_non_null(strstr(buf_str(&r.errors),
	        "README.md:6: link docs/missing.md: no such file"));
	assert_non_null(strstr(buf_str(&r.errors),
	        "README.md:7: link docs/b.md#nope: no heading #nope in "
	        "docs/b.md"));
	assert_non_null(strstr(buf_str(&r.errors),
	        "README.md:8: link ../elsewhere.md: outside the repository"));
	buf_fini(&r.errors);
	free(sub);
	testutil_rmtree(dir);
}

/* The repository's own documentation. */
static void
test_repository_links(void **state)
{
	struct ml_report r;
	struct stat st;

	(void)state;
	if (stat("README.md", &st) != 0 || stat("Makefile", &st) != 0) {
		fail_msg("run from the repository root (no README.md here)");
	}
	ml_check_tree(&r, ".");
	fprintf(stderr,
	        "doclinks: %zu files, %zu links, %zu relative, %zu "
	        "broken\n%s",
	        r.nfiles, r.nlinks, r.nchecked, r.nbroken, buf_str(&r.errors));
	assert_true(r.nfiles >= 5);
	assert_true(r.nchecked >= 10);
	assert_int_equal(r.nbroken, 0);
	buf_fini(&r.errors);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slug),
		cmocka_unit_test(test_anchors),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_broken_detected),
		cmocka_unit_test(test_repository_links),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
