/*
 * vpolicy.h: the view policy, pure logic.  Whether a worker's VIEW_REQ
 * may be answered, judged against its controller's view table
 * (common/contract.h: which resources, which views, which namespaces,
 * own objects only), the key in flight, and the worker's meter (views of
 * the reconcile, live reads in flight); and the one shape in which a
 * Secret leaves the supervisor.  views.c asks before any cache read or
 * live request.  Prefix vpol_, VPOL_.
 *
 * Rules (struct vpol_violation.rule):
 *   view-no-key     no key in flight
 *   view-secret     a get or list of Secrets (only their metadata view)
 *   view-resource   a resource or a view the table does not give
 *   view-namespace  another namespace than the key's (or, where the
 *                   table says, the system one); a namespace on a
 *                   cluster-scoped read, none on a namespaced one; a
 *                   request's scope (namespaced) other than the table's
 *   view-own        a list that does not select the key's own objects, a
 *                   get or log of an object that is not one of them
 *   view-in-flight  over VPOL_LIVE_MAX live reads in flight
 *   view-budget     over VPOL_VIEWS_MAX views in one reconcile
 */
#ifndef VPOLICY_H
#define VPOLICY_H

#include <stdint.h>

#include <json-c/json.h>

#include "common/contract.h"
#include "ipc/ipc.h"

/* A reconcile's views wait for their answers one at a time
 * (workers/view.c): one live read in flight is the legitimate most. */
#define VPOL_LIVE_MAX 8
/* Views of one reconcile.  The largest legitimate ones: a PersonaPack's
 * pass reads about 4 objects per persona, and its RESULT (at most
 * IPC_WRITES_MAX = 1000 writes, 3 per persona) bounds it near 330
 * personas, about 1,300 views: three times that. */
#define VPOL_VIEWS_MAX 4096

#define VPOL_DETAIL_MAX 256

struct vpol_violation {
	const char *rule; /* static, one of the above */
	char detail[VPOL_DETAIL_MAX];
};

/* One worker slot's views of its current reconcile (ticket: the one
 * wk_view_reply() takes, new for each WORK and after a death). */
struct vpol_meter {
	uint64_t ticket;
	unsigned views; /* views of the reconcile so far */
	unsigned live;  /* live reads of it in flight */
};

/* Judges req of controller c for key (NULL: none in flight).  Returns 0
 * (allowed), 1 (req names an object no name can be, e.g. "..": answer
 * "not found" without asking), 2 (a list whose label selector does not
 * parse: answer an error without asking, as the API server would answer
 * 400), or -1 with the violation in *v. */
int vpol_check(const struct contract_ctrl *c, const char *key,
        const struct ipc_view_req *req, struct vpol_violation *v);
/* The label key an object a get or log of req reads must carry with the
 * key's name (vpol_check_object()), or NULL when any object will do. */
const char *vpol_own_label(
        const struct contract_ctrl *c, const struct ipc_view_req *req);
/* Whether obj (borrowed), read for req, is one of key's own objects:
 * 0, or -1 with the violation in *v. */
int vpol_check_object(const struct contract_ctrl *c, const char *key,
        const struct ipc_view_req *req, json_object *obj,
        struct vpol_violation *v);

/* Counts one view of reconcile ticket (a new ticket starts the count
 * afresh).  Returns 0, or -1 over VPOL_VIEWS_MAX with the violation. */
int vpol_meter_view(
        struct vpol_meter *m, uint64_t ticket, struct vpol_violation *v);
/* One more live read of ticket in flight: 0, or -1 (not counted) when
 * VPOL_LIVE_MAX are already. */
int vpol_meter_live(
        struct vpol_meter *m, uint64_t ticket, struct vpol_violation *v);
/* A live read of ticket is over (answered or dropped); one of an older
 * reconcile changes nothing. */
void vpol_meter_done(struct vpol_meter *m, uint64_t ticket);

/* What a worker sees of secret (borrowed): its metadata without
 * annotations (kubectl's last-applied-configuration holds the values)
 * and managedFields, its type, and "keys", its data's key names; never a
 * value.  A new object. */
json_object *vpol_secret_meta(json_object *secret);

#endif
