/*
 * opload.c: the parallel client, the /proc memory readers and the raw
 * JSON measurement of opload.h.
 */
#include "tests/lib/opload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"

#define MIB (1024.0 * 1024.0)

/* ---- the parallel client ---- */

struct par {
	const char *base;
	int n;
	atomic_int next;
	atomic_int bad;
	const char *ua;
	opload_build_fn *build;
	opload_answer_fn *answer;
	void *arg;
};

static size_t
collect(char *p, size_t sz, size_t n, void *arg)
{
	buf_append(arg, p, sz * n);
	return (sz * n);
}

static void *
par_thread(void *arg)
{
	struct par *p = arg;
	CURL *c = curl_easy_init();
	struct buf path = BUF_INIT, body = BUF_INIT, out = BUF_INIT,
	           url = BUF_INIT;
	int i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n) {
		const char *method = "POST", *ctype = "application/json";
		struct curl_slist *h = NULL;
		char hdr[128];
		long code = 0;

		buf_reset(&path);
		buf_reset(&body);
		buf_reset(&out);
		buf_reset(&url);
		p->build(p->arg, i, &path, &body, &method, &ctype);
		buf_printf(&url, "%s%s", p->base, buf_str(&path));
		snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype);
		h = curl_slist_append(h, hdr);
		curl_easy_setopt(c, CURLOPT_URL, buf_str(&url));
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, buf_str(&body));
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body.len);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
		curl_easy_setopt(c, CURLOPT_USERAGENT, p->ua);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
		if (curl_easy_perform(c) != CURLE_OK) {
			code = 0;
		} else {
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		}
		curl_slist_free_all(h);
		if (code < 200 || code > 299) {
			if (atomic_fetch_add(&p->bad, 1) < 3) {
				fprintf(stderr, "opload: %s %s: %ld %s\n",
				        method, buf_str(&path), code,
				        buf_str(&out));
			}
		} else if (p->answer != NULL) {
			p->answer(p->arg, i, buf_str(&out));
		}
	}
	curl_easy_cleanup(c);
	buf_fini(&path);
	buf_fini(&body);
	buf_fini(&out);
	buf_fini(&url);
	return (NULL);
}

double
opload_send(const char *base, const char *user_agent, int n,
        opload_build_fn *b, opload_answer_fn *a, void *arg)
{
	struct par p = { .base = base,
		.ua = user_agent,
		.n = n,
		.build = b,
		.answer = a,
		.arg = arg };
	pthread_t t[OPLOAD_CLIENTS];
	int64_t t0 = ksim_now_ms();

	for (int i = 0; i < OPLOAD_CLIENTS; i++) {
		pthread_create(&t[i], NULL, par_thread, &p);
	}
	for (int i = 0; i < OPLOAD_CLIENTS; i++) {
		pthread_join(t[i], NULL);
	}
	if (atomic_load(&p.bad) > 0) {
		fprintf(stderr, "opload: %d of %d requests failed\n",
		        atomic_load(&p.bad), n);
		return (-1);
	}
	return ((double)(ksim_now_ms() - t0) / 1e3);
}

/* ---- memory ---- */

/* What the supervisor's watches select (supervisor/ctrl.c, every
 * controller): path and label selector. */
static const struct {
	const char *path, *sel;
} WATCHES[] = {
	{ "/apis/sympozium.ai/v1alpha1/agentruns", NULL },
	{ "/apis/batch/v1/jobs", "sympozium.ai/agent-run" },
	{ "/api/v1/pods", "sympozium.ai/agent-run" },
	{ "/apis/sympozium.ai/v1alpha1/sympoziuminstances", NULL },
	{ "/apis/sympozium.ai/v1alpha1/skillpacks", NULL },
	{ "/apis/sympozium.ai/v1alpha1/sympoziumpolicies", NULL },
	{ "/apis/sympozium.ai/v1alpha1/sympoziuminstances", NULL },
	{ "/apis/apps/v1/deployments", "sympozium.ai/instance" },
	{ "/api/v1/services", "sympozium.ai/instance" },
	{ "/apis/sympozium.ai/v1alpha1/agentruns", NULL },
	{ "/apis/sympozium.ai/v1alpha1/personapacks", NULL },
	{ "/apis/sympozium.ai/v1alpha1/sympoziuminstances",
	        "sympozium.ai/persona-pack" },
	{ "/apis/sympozium.ai/v1alpha1/sympoziumschedules",
	        "sympozium.ai/persona-pack" },
	{ "/apis/sympozium.ai/v1alpha1/skillpacks", NULL },
	{ "/api/v1/configmaps", "sympozium.ai/skillpack" },
	{ "/apis/sympozium.ai/v1alpha1/sympoziumschedules", NULL },
	{ "/apis/sympozium.ai/v1alpha1/agentruns", "sympozium.ai/instance" },
	{ "/apis/sympozium.ai/v1alpha1/sympoziuminstances", NULL },
	{ "/apis/sympozium.ai/v1alpha1/mcpservers", NULL },
	{ "/apis/apps/v1/deployments", "sympozium.ai/mcp-server" },
	{ "/api/v1/services", "sympozium.ai/mcp-server" },
};

/* One listed object: its uid and JSON length.  Two watches of one path
 * may select different objects (deployments of instances and of MCP
 * servers), and one object may be selected by several watches: each
 * object is counted once in ubytes, by uid. */
struct rawobj {
	char *uid;
	size_t len;
};

struct rawobjs {
	struct rawobj *v;
	size_t n;
};

static int
rawobj_cmp(const void *a, const void *b)
{
	return (strcmp(((const struct rawobj *)a)->uid,
	        ((const struct rawobj *)b)->uid));
}

/* Adds the items of one watch's list to all and out->objs, bytes. */
static void
raw_add(json_object *items, struct rawobjs *all, struct opload_raw *out)
{
	size_t n = json_object_array_length(items);

	all->v = xreallocarray(all->v, all->n + n + 1, sizeof(*all->v));
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(items, i);
		const char *uid = jx_get_str(o, "metadata.uid");
		size_t len;

		jx_strip(o, "metadata.managedFields");
		len = strlen(json_object_to_json_string_ext(
		        o, JSON_C_TO_STRING_PLAIN));
		out->objs++;
		out->bytes += len;
		all->v[all->n++]
		        = (struct rawobj) { xstrdup(uid != NULL ? uid : ""),
			          len };
	}
}

/* Sums each uid once into out->uobjs, ubytes, and frees all. */
static void
raw_unique(struct rawobjs *all, struct opload_raw *out)
{
	if (all->n > 0) {
		qsort(all->v, all->n, sizeof(*all->v), rawobj_cmp);
	}
	for (size_t i = 0; i < all->n; i++) {
		if (i == 0 || all->v[i].uid[0] == '\0'
		        || strcmp(all->v[i].uid, all->v[i - 1].uid) != 0) {
			out->uobjs++;
			out->ubytes += all->v[i].len;
		}
	}
	for (size_t i = 0; i < all->n; i++) {
		free(all->v[i].uid);
	}
	free(all->v);
}

int
opload_raw_json(const char *base, struct opload_raw *out)
{
	struct rawobjs all = { 0 };
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t w = 0; rc == 0 && w < sizeof(WATCHES) / sizeof(WATCHES[0]);
	        w++) {
		char path[300];
		struct ksim_resp *r;

		snprintf(path, sizeof(path), "%s%s%s", WATCHES[w].path,
		        WATCHES[w].sel != NULL ? "?labelSelector=" : "",
		        WATCHES[w].sel != NULL ? WATCHES[w].sel : "");
		r = ksim_request(base, "GET", path, NULL, NULL, NULL, 60000);
		if (r->code != 200 || r->json == NULL) {
			fprintf(stderr, "opload: GET %s: %ld\n", path,
			        r->code);
			rc = -1;
		} else {
			raw_add(json_object_object_get(r->json, "items"), &all,
			        out);
		}
		ksim_resp_free(r);
	}
	raw_unique(&all, out);
	return (rc);
}

/* The first "<field> N kB" line of /proc/<pid>/<file>, in KiB, or -1. */
static long
proc_kib(pid_t pid, const char *file, const char *field)
{
	char path[64], line[256];
	size_t fl = strlen(field);
	FILE *f;
	long kib = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((f = fopen(path, "re")) == NULL) {
		return (-1);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, field, fl) == 0
		        && sscanf(line + fl, " %ld kB", &kib) == 1) {
			break;
		}
	}
	fclose(f);
	return (kib);
}

long
opload_hwm_kib(pid_t pid)
{
	return (proc_kib(pid, "status", "VmHWM:"));
}

long
opload_pss_kib(pid_t pid)
{
	return (proc_kib(pid, "smaps_rollup", "Pss:"));
}

double
opload_sup_limit(const struct opload_raw *raw)
{
	return (1.5 * (double)raw->ubytes + 8 * MIB);
}
