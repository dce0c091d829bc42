/*
 * kroute.c: turns a request path into what it names (discovery, OpenAPI,
 * health, admin, or a resource path with group, version, namespace,
 * plural, name and subresource) following spec A.1, and the boolean
 * query-parameter rule of A.3.  Pure: no store, no registry.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xmalloc.h"
#include "kubesim/kroute.h"

#define MAX_SEGS 12

/* Splits path on '/', skipping empty segments.  Returns the count, or -1
 * when there are more than max. */
static int
split(char *path, char **segs, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *s = strtok_r(path, "/", &save); s != NULL;
	        s = strtok_r(NULL, "/", &save)) {
		if (n == max) {
			return (-1);
		}
		segs[n++] = s;
	}
	return (n);
}

/* Joins segs[from..n) with '/'. */
static char *
join(char **segs, int from, int n)
{
	size_t len = 1;
	char *out;

	for (int i = from; i < n; i++) {
		len += strlen(segs[i]) + 1;
	}
	out = xmalloc(len);
	out[0] = '\0';
	for (int i = from; i < n; i++) {
		if (i > from) {
			strcat(out, "/");
		}
		strcat(out, segs[i]);
	}
	return (out);
}

/* The part below a group-version prefix: s[0..n). */
static void
resource_path(char **s, int n, struct kroute *r)
{
	if (n > 0 && strcmp(s[0], "watch") == 0) {
		r->watch_path = true;
		s++;
		n--;
	}
	if (n == 0) {
		return;
	}
	/* namespaces/<name>/status|finalize of the core group */
	if (n >= 3 && strcmp(s[0], "namespaces") == 0 && r->group[0] == '\0'
	        && n == 3
	        && (strcmp(s[2], "status") == 0
	                || strcmp(s[2], "finalize") == 0)) {
		r->plural = xstrdup("namespaces");
		r->name = xstrdup(s[1]);
		r->sub = xstrdup(s[2]);
		r->kind = KROUTE_RESOURCE;
		return;
	}
	if (n >= 3 && strcmp(s[0], "namespaces") == 0) {
		r->ns = xstrdup(s[1]);
		s += 2;
		n -= 2;
	}
	if (n > 3) {
		return;
	}
	r->plural = xstrdup(s[0]);
	r->name = n > 1 ? xstrdup(s[1]) : NULL;
	r->sub = n > 2 ? xstrdup(s[2]) : NULL;
	r->kind = KROUTE_RESOURCE;
}

static void
apis_path(char **s, int n, struct kroute *r)
{
	if (n == 1) {
		r->kind = KROUTE_APIS;
		return;
	}
	r->group = xstrdup(s[1]);
	if (n == 2) {
		r->kind = KROUTE_GROUP;
		return;
	}
	r->version = xstrdup(s[2]);
	if (n == 3) {
		r->kind = KROUTE_GV;
		return;
	}
	resource_path(s + 3, n - 3, r);
}

static void
api_path(char **s, int n, struct kroute *r)
{
	if (n == 1) {
		r->kind = KROUTE_API;
		return;
	}
	r->group = xstrdup("");
	r->version = xstrdup(s[1]);
	if (n == 2) {
		r->kind = KROUTE_GV;
		return;
	}
	resource_path(s + 2, n - 2, r);
}

static void
other_path(char **s, int n, struct kroute *r)
{
	if (n == 1 && strcmp(s[0], "version") == 0) {
		r->kind = KROUTE_VERSION;
	} else if (n == 1
	        && (strcmp(s[0], "healthz") == 0 || strcmp(s[0], "livez") == 0
	                || strcmp(s[0], "readyz") == 0)) {
		r->kind = KROUTE_HEALTH;
		r->rest = xstrdup(s[0]);
	} else if (n >= 2 && strcmp(s[0], "openapi") == 0
	        && strcmp(s[1], "v2") == 0) {
		r->kind = KROUTE_OPENAPI_V2;
	} else if (n == 2 && strcmp(s[0], "openapi") == 0
	        && strcmp(s[1], "v3") == 0) {
		r->kind = KROUTE_OPENAPI_ROOT;
	} else if (n > 2 && strcmp(s[0], "openapi") == 0
	        && strcmp(s[1], "v3") == 0) {
		r->kind = KROUTE_OPENAPI_DOC;
		r->rest = join(s, 2, n);
	} else if (n >= 1 && strcmp(s[0], "_kubesim") == 0) {
		r->kind = KROUTE_ADMIN;
		r->rest = join(s, 1, n);
	}
}

void
kroute_parse(const char *path, struct kroute *r)
{
	char *copy = xstrdup(path != NULL ? path : "");
	char *segs[MAX_SEGS];
	int n = split(copy, segs, MAX_SEGS);

	memset(r, 0, sizeof(*r));
	r->kind = KROUTE_NONE;
	if (n > 0 && strcmp(segs[0], "apis") == 0) {
		apis_path(segs, n, r);
	} else if (n > 0 && strcmp(segs[0], "api") == 0) {
		api_path(segs, n, r);
	} else if (n > 0) {
		other_path(segs, n, r);
	}
	if (r->kind == KROUTE_RESOURCE && r->sub != NULL && r->watch_path) {
		r->kind = KROUTE_NONE;
	}
	if (r->kind == KROUTE_NONE) {
		kroute_fini(r);
	}
	free(copy);
}

void
kroute_fini(struct kroute *r)
{
	free(r->group);
	free(r->version);
	free(r->ns);
	free(r->plural);
	free(r->name);
	free(r->sub);
	free(r->rest);
	memset(r, 0, sizeof(*r));
}

bool
kroute_qbool(const char *v)
{
	if (v == NULL) {
		return (false);
	}
	return (!(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0));
}
