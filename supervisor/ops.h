/*
 * ops.h: the supervisor's operations glue: what joins the pure figure,
 * health-socket and HTTP modules (stats.h, health.h, http.h, metrics.h)
 * to the running supervisor (struct sup, sup.h).  It builds the stats
 * rows from the controllers, worker slots and kinds, copies every gauge
 * out of the modules that own them just before a reader looks, and
 * answers the health socket's requests and the /healthz, /readyz and
 * /metrics pages.  Nothing else reads struct sup for an operator.
 * Prefix ops_.
 */
#ifndef OPS_H
#define OPS_H

#include <stdint.h>

#include "common/buf.h"
#include "ipc/hproto.h"
#include "supervisor/http.h"
#include "supervisor/stats.h"

struct sup;

/* s's stats rows from its controllers, worker slots and kinds (leader,
 * controllers and informer set up).  Called once from sup_new(). */
struct stats *ops_stats_new(struct sup *s, int64_t now_ms);
/* Copies every gauge from the modules into s->stats. */
void ops_stats_refresh(struct sup *s, int64_t now_ms);

/* health_fn for a struct sup: status, workers, worker, restart, pause,
 * resume. */
char *ops_health_request(void *arg, const struct hp_req *req, int64_t now_ms);

/* http_fn for a struct sup: /healthz[/NAME], /readyz[/NAME]. */
int ops_http_probe(void *arg, const char *path, const struct http_query *q,
        struct buf *body, const char **ctype);
/* http_fn for a struct sup: /metrics. */
int ops_http_metrics(void *arg, const char *path, const struct http_query *q,
        struct buf *body, const char **ctype);

#endif
