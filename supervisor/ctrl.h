/*
 * ctrl.h: what each controller watches (spec sympozium-controllers.md,
 * the "Watches" sections): its primary kind, the child kinds it owns
 * (label-selected, so unrelated objects are never cached) and the kinds it
 * only reads.  Built once from the table of common/contract.h, the one the
 * reconcilers label their children by.  Prefix ctrl_.
 */
#ifndef CTRL_H
#define CTRL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/kapi.h"

enum ctrl_role {
	CTRL_PRIMARY, /* For(): its events enqueue the object */
	CTRL_CHILD,   /* Owns(): its events enqueue the controller owner */
	CTRL_READ,    /* read through views; events enqueue nothing */
};

struct ctrl_watch {
	const char *kind; /* "AgentRun": the Kind, matched with owners */
	struct kapi_res res;
	const char *selector; /* label selector, NULL for all */
	enum ctrl_role role;
};

struct ctrl_spec {
	const char *name; /* --controller NAME */
	const struct ctrl_watch *watches;
	size_t nwatches; /* watches[0] is the primary */
	/* A test controller (contract_extra, test builds only): run only
	 * when --controllers names it. */
	bool test_only;
};

/* The controller called name, or NULL. */
const struct ctrl_spec *ctrl_find(const char *name);
/* Every controller, for listings: ctrl_at(i) until NULL. */
const struct ctrl_spec *ctrl_at(size_t i);

#endif
