/*
 * agentrun_mcp.c: resolves an AgentRun's MCP server entries against
 * MCPServer objects and renders the mcp-servers.yaml the mcp-bridge reads
 * (spec 1.3 step 7).  The YAML writer is ours: plain scalars when they
 * read back as the same string, JSON-style double quotes otherwise.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "workers/agentrun_mcp.h"

static bool
empty(const char *s)
{
	return (s == NULL || s[0] == '\0');
}

/* Whether the entry leaves key unset (absent, "", 0 or []). */
static bool
unset(json_object *entry, const char *key)
{
	json_object *v = json_object_object_get(entry, key);

	switch (v != NULL ? json_object_get_type(v) : json_type_null) {
	case json_type_null:
		return (true);
	case json_type_string:
		return (json_object_get_string_len(v) == 0);
	case json_type_int:
		return (json_object_get_int64(v) == 0);
	case json_type_array:
		return (json_object_array_length(v) == 0);
	default:
		return (false);
	}
}

json_object *
agentrun_mcp_resolve(json_object *entry, json_object *server)
{
	static const char *const copied[]
	        = { "toolsPrefix", "timeout", "toolsAllow", "toolsDeny" };
	json_object *out = NULL, *spec;
	bool ready = false;
	const char *url = jx_get_str(server, "status.url");

	if (!empty(jx_get_str(entry, "url"))) {
		return (jx_copy(entry));
	}
	jx_get_bool(server, "status.ready", &ready);
	if (server == NULL || !ready || empty(url)) {
		return (NULL);
	}
	out = jx_copy(entry);
	json_object_object_add(out, "url", json_object_new_string(url));
	spec = json_object_object_get(server, "spec");
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		json_object *v = json_object_object_get(spec, copied[i]);
		if (unset(out, copied[i]) && v != NULL) {
			json_object_object_add(
			        out, copied[i], json_object_get(v));
		}
	}
	return (out);
}

char *
agentrun_mcp_auth_env(const char *name)
{
	char *env = xasprintf("MCP_AUTH_%s", name != NULL ? name : "");

	for (char *p = env + 9; *p != '\0'; p++) {
		*p = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
	}
	return (env);
}

/* Whether s can be written as a plain scalar that reads back as the same
 * string (no quoting, no number, bool or null). */
static bool
plain(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no",
		"on", "off", "y", "n", "null", "~" };
	char *end = NULL;

	if (empty(s) || !(isalpha((unsigned char)s[0]) || s[0] == '/')
	        || s[strlen(s) - 1] == ':') {
		return (false);
	}
	for (const char *p = s; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p)
		        && strchr("_./:@-", *p) == NULL) {
			return (false);
		}
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(s, words[i]) == 0) {
			return (false);
		}
	}
	(void)strtod(s, &end);
	return (*end != '\0');
}

static void
scalar(struct buf *b, const char *s)
{
	json_object *q;

	if (plain(s)) {
		buf_puts(b, s);
		return;
	}
	q = json_object_new_string(s != NULL ? s : "");
	buf_puts(b,
	        json_object_to_json_string_ext(
	                q, JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(q);
}

/* "    key: value\n" for a string member (ind spaces). */
static void
field(struct buf *b, int ind, const char *key, const char *value)
{
	buf_printf(b, "%*s%s: ", ind, "", key);
	scalar(b, value);
	buf_putc(b, '\n');
}

static void
list(struct buf *b, json_object *e, const char *key)
{
	json_object *a = json_object_object_get(e, key);

	if (jx_array_len(a) == 0) {
		return;
	}
	buf_printf(b, "    %s:\n", key);
	for (size_t i = 0; i < jx_array_len(a); i++) {
		buf_puts(b, "      - ");
		scalar(b,
		        json_object_get_string(
		                json_object_array_get_idx(a, i)));
		buf_putc(b, '\n');
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

static void
headers(struct buf *b, json_object *h)
{
	size_t n = 0;
	const char **keys;

	if (h == NULL || !json_object_is_type(h, json_type_object)
	        || json_object_object_length(h) == 0) {
		return;
	}
	keys = xcalloc((size_t)json_object_object_length(h), sizeof(*keys));
	json_object_object_foreach(h, k, v)
	{
		(void)v;
		keys[n++] = k;
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	buf_puts(b, "    headers:\n");
	for (size_t i = 0; i < n; i++) {
		buf_puts(b, "      ");
		scalar(b, keys[i]);
		buf_puts(b, ": ");
		scalar(b,
		        json_object_get_string(
		                json_object_object_get(h, keys[i])));
		buf_putc(b, '\n');
	}
	free(keys);
}

static void
entry(struct buf *b, json_object *e)
{
	const char *name = jx_get_str(e, "name");
	int64_t timeout = 0;

	buf_puts(b, "  - name: ");
	scalar(b, name);
	buf_putc(b, '\n');
	field(b, 4, "url", jx_get_str(e, "url"));
	field(b, 4, "toolsPrefix", jx_get_str(e, "toolsPrefix"));
	jx_get_int(e, "timeout", &timeout);
	buf_printf(b, "    timeout: %lld\n",
	        (long long)(timeout > 0 ? timeout : 30));
	if (!empty(jx_get_str(e, "authSecret"))) {
		char *env = agentrun_mcp_auth_env(name);
		buf_puts(b, "    auth:\n");
		field(b, 6, "type", "bearer");
		field(b, 6, "tokenEnv", env);
		free(env);
	}
	headers(b, json_object_object_get(e, "headers"));
	list(b, e, "toolsAllow");
	list(b, e, "toolsDeny");
}

char *
agentrun_mcp_yaml(json_object *servers)
{
	struct buf b;

	buf_init(&b);
	buf_puts(&b, "servers:\n");
	for (size_t i = 0; i < jx_array_len(servers); i++) {
		entry(&b, json_object_array_get_idx(servers, i));
	}
	return (buf_detach(&b, NULL));
}
