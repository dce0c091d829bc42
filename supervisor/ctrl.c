/*
 * ctrl.c: the watch table of each controller, built once from the
 * controllers of common/contract.h: a child watch selects the label key
 * the controller's reconciler puts on its children (spec 0.4).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "supervisor/ctrl.h"

#define MAX_SPECS 16
#define MAX_ROWS  64

static struct ctrl_spec specs[MAX_SPECS];
static struct ctrl_watch rows[MAX_ROWS];
static size_t nspecs;
static pthread_once_t built = PTHREAD_ONCE_INIT;

static enum ctrl_role
role_of(enum contract_role r)
{
	switch (r) {
	case CONTRACT_PRIMARY:
		return (CTRL_PRIMARY);
	case CONTRACT_CHILD:
		return (CTRL_CHILD);
	default:
		return (CTRL_READ);
	}
}

static void
build(void)
{
	const struct contract_ctrl *c;
	size_t nrows = 0;

	for (size_t i = 0; (c = contract_at(i)) != NULL; i++) {
		if (nspecs == MAX_SPECS || MAX_ROWS - nrows < c->nwatches) {
			fprintf(stderr,
			        "ctrl: the contract table exceeds "
			        "%d controllers or %d watches\n",
			        MAX_SPECS, MAX_ROWS);
			abort();
		}
		specs[nspecs] = (struct ctrl_spec) { .name = c->name,
			.watches = &rows[nrows],
			.nwatches = c->nwatches,
			.test_only = contract_is_extra(c) };
		for (size_t j = 0; j < c->nwatches; j++) {
			const struct contract_watch *w = &c->watches[j];
			rows[nrows++] = (struct ctrl_watch) { .kind = w->kind,
				.res = w->res,
				.selector = w->label,
				.role = role_of(w->role) };
		}
		nspecs++;
	}
}

const struct ctrl_spec *
ctrl_at(size_t i)
{
	pthread_once(&built, build);
	return (i < nspecs ? &specs[i] : NULL);
}

const struct ctrl_spec *
ctrl_find(const char *name)
{
	const struct ctrl_spec *s;

	for (size_t i = 0; name != NULL && (s = ctrl_at(i)) != NULL; i++) {
		if (strcmp(s->name, name) == 0) {
			return (s);
		}
	}
	return (NULL);
}
