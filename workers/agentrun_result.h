/*
 * agentrun_result.h: the result, token usage and memory an agent run
 * leaves in its container log (spec sympozium-controllers.md 1.14).  Pure
 * text processing, no I/O.  Prefix agentrun_result_.
 */
#ifndef AGENTRUN_RESULT_H
#define AGENTRUN_RESULT_H

#include <stdbool.h>
#include <stdint.h>

/* Lines of the agent log read for the result and for memory. */
#define AGENTRUN_RESULT_LINES 80
#define AGENTRUN_MEMORY_LINES 100

struct agentrun_result {
	char *result;   /* the response (NULL: none); owned */
	char *error;    /* the error (NULL: none); owned */
	bool has_usage; /* input or output tokens > 0 */
	int64_t input_tokens, output_tokens, total_tokens, tool_calls,
	        duration_ms;
	/* status "skipped": a preRun hook skipped the run (later upstream
	 * fix #228); result holds the reason, no usage, no error */
	bool skipped;
};

/* Parses the result markers of log (may be NULL: empty result) into *out
 * (zeroed first; free with agentrun_result_fini()).  Only the last
 * AGENTRUN_RESULT_LINES lines are looked at. */
void agentrun_result_parse(const char *log, struct agentrun_result *out);
void agentrun_result_fini(struct agentrun_result *r);

/* The trimmed text between the last memory markers of the last
 * AGENTRUN_MEMORY_LINES lines of log, or NULL when absent or empty.
 * Caller frees with free(). */
char *agentrun_result_memory(const char *log);

/* The start of the last n lines of log (borrowed from log). */
const char *agentrun_result_tail(const char *log, int n);

#endif
