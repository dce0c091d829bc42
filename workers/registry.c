/*
 * registry.c: the reconcilers a worker can run, by --controller name.
 * The Sympozium reconcilers (issue 5) are listed here as they land.  Test
 * controllers live outside workers/ and only exist in test builds
 * (rec_extra).  Also the small helpers reconcilers use to answer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "workers/agentrun.h"
#include "workers/instance.h"
#include "workers/mcpserver.h"
#include "workers/personapack.h"
#include "workers/policy.h"
#include "workers/reconcile.h"
#include "workers/schedule.h"
#include "workers/skillpack.h"
#include "workers/sympoziumconfig.h"

static const struct reconciler *const builtin[] = {
	&agentrun_reconciler,
	&instance_reconciler,
	&skillpack_reconciler,
	&mcpserver_reconciler,
	&personapack_reconciler,
	&schedule_reconciler,
	&policy_reconciler,
	&symconf_reconciler,
	NULL,
};

static const struct reconciler *
search(const struct reconciler *const *list, const char *name)
{
	for (size_t i = 0; list != NULL && list[i] != NULL; i++) {
		if (strcmp(list[i]->name, name) == 0) {
			return (list[i]);
		}
	}
	return (NULL);
}

const struct reconciler *
rec_find(const char *name)
{
	const struct reconciler *r;

	if (name == NULL) {
		return (NULL);
	}
	r = search(builtin, name);
	if (r == NULL && rec_extra != NULL) {
		r = search(rec_extra, name);
	}
	return (r);
}

void
rec_list(FILE *out)
{
	for (size_t i = 0; builtin[i] != NULL; i++) {
		fprintf(out, "%s\n", builtin[i]->name);
	}
	for (size_t i = 0; rec_extra != NULL && rec_extra[i] != NULL; i++) {
		fprintf(out, "%s\n", rec_extra[i]->name);
	}
}

void
rec_write(struct rec_out *out, json_object *write)
{
	ipc_result_add_write(out->result, write);
}

void
rec_verdict(struct rec_out *out, enum ipc_verdict v, int64_t after_ms,
        const char *fmt, ...)
{
	va_list ap;

	out->verdict = v;
	out->after_ms = after_ms;
	out->message[0] = '\0';
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(out->message, sizeof(out->message), fmt, ap);
		va_end(ap);
	}
}
