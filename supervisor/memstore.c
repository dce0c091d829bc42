/*
 * memstore.c: the failure-memory store requests (memstore.h): the check
 * of a worker's ask, the address and body built from the cached run.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "supervisor/memstore.h"

int
memstore_check(
        const char *controller, json_object *ms, char *err, size_t errlen)
{
	json_object *c = json_object_object_get(ms, "content");
	size_t n = (size_t)json_object_get_string_len(c);

	if (strcmp(controller, "agentrun") != 0) {
		snprintf(err, errlen, "memoryStore: only agentrun may ask");
		return (-1);
	}
	if (!json_object_is_type(c, json_type_string) || n == 0
	        || n > MEMSTORE_CONTENT_MAX
	        || strlen(json_object_get_string(c)) != n
	        || json_object_object_length(ms) != 1) {
		snprintf(err, errlen,
		        "memoryStore: want {\"content\": 1..%d bytes}",
		        MEMSTORE_CONTENT_MAX);
		return (-1);
	}
	return (0);
}

/* A DNS-1123 label: what a Service name and a namespace are. */
static bool
label_ok(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-') {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z')
		            || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
			return (false);
		}
	}
	return (true);
}

int
memstore_request(json_object *run, json_object *ms, char **url, char **body,
        char *err, size_t errlen)
{
	const char *inst = jx_get_str(run, "spec.instanceRef");
	const char *ns = jx_get_str(run, "metadata.namespace");
	json_object *b, *tags;

	/* <instance>-memory must be a label too */
	if (!label_ok(inst) || strlen(inst) > 56 || !label_ok(ns)) {
		snprintf(err, errlen,
		        "memoryStore: the run's instanceRef or namespace is "
		        "no "
		        "valid name");
		return (-1);
	}
	*url = xasprintf("http://%s-memory.%s.svc:8080/store", inst, ns);
	b = json_object_new_object();
	json_object_object_add(b, "content",
	        json_object_get(json_object_object_get(ms, "content")));
	tags = json_object_new_array();
	json_object_array_add(tags, json_object_new_string("failure"));
	json_object_array_add(tags, json_object_new_string("agent-run"));
	json_object_array_add(tags, json_object_new_string(inst));
	json_object_object_add(b, "tags", tags);
	*body = xstrdup(json_object_to_json_string_ext(
	        b, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(b);
	return (0);
}
