/*
 * contractcheck.c: a reconciler's child writes against the supervisor's
 * child watches (contractcheck.h).
 */
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "supervisor/ctrl.h"
#include "supervisor/labelsel.h"
#include "tests/lib/contractcheck.h"

/* The child watch of s on w's resource, or NULL. */
static const struct ctrl_watch *
child_watch(const struct ctrl_spec *s, const struct ipc_write *w)
{
	for (size_t i = 1; i < s->nwatches; i++) {
		const struct ctrl_watch *cw = &s->watches[i];
		if (cw->role == CTRL_CHILD
		        && strcmp(cw->res.group, w->res.group) == 0
		        && strcmp(cw->res.plural, w->res.plural) == 0) {
			return (cw);
		}
	}
	return (NULL);
}

bool
contractcheck_write(const char *controller, const struct ipc_write *w,
        char *err, size_t errlen)
{
	const struct ctrl_spec *s = ctrl_find(controller);
	const struct ctrl_watch *cw;
	struct labelsel *sel;
	json_object *labels;
	bool ok;

	if (s == NULL || w->op != IPC_OP_CREATE
	        || (cw = child_watch(s, w)) == NULL) {
		return (true);
	}
	if ((sel = labelsel_parse(cw->selector, err, errlen)) == NULL) {
		return (false);
	}
	labels = jx_getv(w->object, "metadata", "labels", NULL);
	ok = labelsel_match_json(sel, labels);
	labelsel_free(sel);
	if (!ok) {
		snprintf(err, errlen,
		        "%s writes %s %s/%s with labels %s: the supervisor's "
		        "child watch (%s) does not select it",
		        controller, cw->kind, w->namespace,
		        jx_get_str(w->object, "metadata.name") ?: "",
		        labels != NULL ? json_object_to_json_string(labels)
		                       : "(none)",
		        cw->selector);
	}
	return (ok);
}
