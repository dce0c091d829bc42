/*
 * reqlog.c: kubesim's request log as the chaos suite reads it (one JSON
 * object per line: ts, verb, method, path, query, code, userAgent):
 * each line as a struct chaosmodel_req, a supervisor's identity from its
 * User-Agent, and the LIST starts of one supervisor per informer key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/timefmt.h"
#include "tests/chaos/chaos.h"
#include "tests/lib/sdproc.h"

static const char *
str_at(json_object *o, const char *path)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL ? s : "");
}

void
rl_scan_text(char *t, int64_t after_us, rl_fn *fn, void *arg)
{
	char *save = NULL;

	for (char *l = strtok_r(t, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(l);
		struct chaosmodel_req e = { 0 };
		int64_t code = 0;

		if (o == NULL || timefmt_parse(str_at(o, "ts"), &e.ts_us) != 0
		        || e.ts_us < after_us) {
			json_object_put(o);
			continue;
		}
		e.verb = str_at(o, "verb");
		e.method = str_at(o, "method");
		e.path = str_at(o, "path");
		e.query = str_at(o, "query");
		e.ua = str_at(o, "userAgent");
		(void)jx_get_int(o, "code", &code);
		e.code = (long)code;
		fn(&e, arg);
		json_object_put(o);
	}
}

void
rl_scan(int64_t after_us, rl_fn *fn, void *arg)
{
	char *t = sdproc_log_text(chaos.reqlog);

	rl_scan_text(t, after_us, fn, arg);
	free(t);
}

void
rl_ua_identity(const char *ua, char *id, size_t len)
{
	id[0] = '\0';
	if (strncmp(ua, CHAOSMODEL_UA, strlen(CHAOSMODEL_UA)) == 0) {
		const char *p = ua + strlen(CHAOSMODEL_UA);
		snprintf(id, len, "%.*s", (int)strcspn(p, " "), p);
	}
}

/* A query parameter's value (raw, still encoded), into out. */
static bool
query_param(const char *q, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = q; p != NULL && *p != '\0';) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			p += kl + 1;
			snprintf(out, len, "%.*s", (int)strcspn(p, "&"), p);
			return (true);
		}
		p = strchr(p, '&');
		p = p != NULL ? p + 1 : NULL;
	}
	out[0] = '\0';
	return (false);
}

/* The informer key of a LIST: "<plural>?<labelSelector>". */
static void
list_key(const struct chaosmodel_req *e, char *out, size_t len)
{
	const char *plural = strrchr(e->path, '/');
	char sel[256];

	(void)query_param(e->query, "labelSelector", sel, sizeof(sel));
	snprintf(
	        out, len, "%s?%s", plural != NULL ? plural + 1 : e->path, sel);
}

static void
count_lists(const struct chaosmodel_req *e, void *arg)
{
	struct rl_lists *l = arg;
	char key[400], rv[64], cont[8];
	json_object *v;

	if (strcmp(e->verb, "list") != 0 || strstr(e->ua, l->ua) != e->ua
	        || query_param(e->query, "continue", cont, sizeof(cont))) {
		return;
	}
	(void)query_param(e->query, "resourceVersion", rv, sizeof(rv));
	if (l->initial && strcmp(rv, "0") != 0) {
		return;
	}
	list_key(e, key, sizeof(key));
	v = json_object_object_get(l->per, key);
	json_object_object_add(
	        l->per, key, json_object_new_int(json_object_get_int(v) + 1));
	l->total++;
}

void
rl_lists_of(const struct chaos_sd *s, int64_t after_us, bool initial,
        struct rl_lists *l)
{
	char ua[200];

	snprintf(ua, sizeof(ua), "%s%s ", CHAOSMODEL_UA, s->id);
	l->ua = ua;
	l->initial = initial;
	l->per = json_object_new_object();
	l->total = 0;
	rl_scan(after_us, count_lists, l);
	l->ua = NULL;
}
