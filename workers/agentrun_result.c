/*
 * agentrun_result.c: the agent's result, token usage and memory found in
 * the tail of its log (spec 1.14): the __SYMPOZIUM_RESULT__ JSON, the
 * 429/quota fallback, and the __SYMPOZIUM_MEMORY__ block.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "workers/agentrun_result.h"

#define RESULT_START "__SYMPOZIUM_RESULT__"
#define RESULT_END   "__SYMPOZIUM_END__"
#define MEMORY_START "__SYMPOZIUM_MEMORY__"
#define MEMORY_END   "__SYMPOZIUM_MEMORY_END__"
#define ERROR_MAX    500

static const char *const signatures[] = { "http 429", "status 429",
	"status code: 429", "(429)", " 429 ", "insufficient_quota", "quota",
	"rate limit", "too many requests", NULL };

const char *
agentrun_result_tail(const char *log, int n)
{
	size_t len = strlen(log);
	int lines = 0;

	if (len > 0 && log[len - 1] == '\n') {
		len--;
	}
	for (size_t i = len; i > 0; i--) {
		if (log[i - 1] == '\n' && ++lines == n) {
			return (log + i);
		}
	}
	return (log);
}

/* The last occurrence of needle in [s, s + len), or NULL. */
static const char *
last_of(const char *s, const char *needle)
{
	const char *last = NULL;

	for (const char *p = strstr(s, needle); p != NULL;
	        p = strstr(p + 1, needle)) {
		last = p;
	}
	return (last);
}

/* A trimmed copy of [p, e). */
static char *
trimmed(const char *p, const char *e)
{
	while (p < e && isspace((unsigned char)*p)) {
		p++;
	}
	while (e > p && isspace((unsigned char)e[-1])) {
		e--;
	}
	return (xstrndup(p, (size_t)(e - p)));
}

/* The trimmed text between the last start and the next end, or NULL. */
static char *
between(const char *text, const char *start, const char *end)
{
	const char *s = last_of(text, start);
	const char *e;

	if (s == NULL) {
		return (NULL);
	}
	s += strlen(start);
	e = strstr(s, end);
	return (e != NULL ? trimmed(s, e) : NULL);
}

static int64_t
metric(json_object *m, const char *key)
{
	json_object *v = json_object_object_get(m, key);

	return (v != NULL ? json_object_get_int64(v) : 0);
}

static void
from_json(json_object *j, struct agentrun_result *out)
{
	json_object *m = json_object_object_get(j, "metrics");
	const char *status = jx_get_str(j, "status");
	const char *text;

	out->input_tokens = metric(m, "inputTokens");
	out->output_tokens = metric(m, "outputTokens");
	out->tool_calls = metric(m, "toolCalls");
	out->duration_ms = metric(m, "durationMs");
	if (__builtin_add_overflow(out->input_tokens, out->output_tokens,
	            &out->total_tokens)) {
		/* absurd counts: saturate rather than overflow */
		out->total_tokens
		        = out->input_tokens > 0 ? INT64_MAX : INT64_MIN;
	}
	out->has_usage = out->input_tokens > 0 || out->output_tokens > 0;
	if (status != NULL && strcmp(status, "skipped") == 0) {
		text = jx_get_str(j, "response");
		out->skipped = true;
		out->has_usage = false;
		out->result = trimmed(
		        text ?: "", (text ?: "") + strlen(text ?: ""));
		if (out->result[0] == '\0') {
			free(out->result);
			out->result = xstrdup("preRun hook requested skip");
		}
		return;
	}
	if (status != NULL && strcmp(status, "error") == 0) {
		text = jx_get_str(j, "error");
		out->error = trimmed(
		        text ?: "", (text ?: "") + strlen(text ?: ""));
		if (out->error[0] == '\0') {
			free(out->error);
			out->error = xstrdup("agent run failed");
		}
		return;
	}
	text = jx_get_str(j, "response");
	if (text != NULL && text[0] != '\0') {
		out->result = xstrdup(text);
	}
}

static bool
has_signature(const char *line, size_t len)
{
	char *low = xstrndup(line, len);
	bool hit = false;

	for (char *p = low; *p != '\0'; p++) {
		*p = (char)tolower((unsigned char)*p);
	}
	for (size_t i = 0; signatures[i] != NULL && !hit; i++) {
		hit = strstr(low, signatures[i]) != NULL;
	}
	free(low);
	return (hit);
}

/* Whitespace collapsed, cut to ERROR_MAX characters plus "...". */
static char *
collapse(const char *line, size_t len)
{
	struct buf b;
	size_t i = 0;

	buf_init(&b);
	while (i < len) {
		while (i < len && isspace((unsigned char)line[i])) {
			i++;
		}
		if (i < len && b.len > 0) {
			buf_putc(&b, ' ');
		}
		while (i < len && !isspace((unsigned char)line[i])) {
			buf_putc(&b, line[i++]);
		}
	}
	if (b.len > ERROR_MAX) {
		b.len = ERROR_MAX;
		buf_puts(&b, "...");
	}
	return (b.data != NULL ? buf_detach(&b, NULL) : xstrdup(""));
}

/* The 429/quota fallback: the last matching line. */
static char *
quota_error(const char *text)
{
	const char *end = text + strlen(text);

	while (end > text) {
		const char *start = end;
		while (start > text && start[-1] != '\n') {
			start--;
		}
		if (has_signature(start, (size_t)(end - start))) {
			return (collapse(start, (size_t)(end - start)));
		}
		end = start > text ? start - 1 : text;
	}
	return (NULL);
}

void
agentrun_result_parse(const char *log, struct agentrun_result *out)
{
	const char *text;
	char *json;
	json_object *j;

	memset(out, 0, sizeof(*out));
	if (log == NULL) {
		return;
	}
	text = agentrun_result_tail(log, AGENTRUN_RESULT_LINES);
	if (last_of(text, RESULT_START) == NULL) {
		out->error = quota_error(text);
		return;
	}
	json = between(text, RESULT_START, RESULT_END);
	j = json != NULL ? json_tokener_parse(json) : NULL;
	if (j != NULL && json_object_is_type(j, json_type_object)) {
		from_json(j, out);
	}
	json_object_put(j);
	free(json);
}

void
agentrun_result_fini(struct agentrun_result *r)
{
	free(r->result);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

char *
agentrun_result_memory(const char *log)
{
	char *m;

	if (log == NULL) {
		return (NULL);
	}
	m = between(agentrun_result_tail(log, AGENTRUN_MEMORY_LINES),
	        MEMORY_START, MEMORY_END);
	if (m != NULL && m[0] == '\0') {
		free(m);
		m = NULL;
	}
	return (m);
}
