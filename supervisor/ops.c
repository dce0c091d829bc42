/*
 * ops.c: the supervisor's operations glue (ops.h): the stats rows and
 * their refresh from the workers, queues, informer and leader; the health
 * socket's answers (status, workers, worker, restart, pause, resume); the
 * /healthz, /readyz and /metrics handlers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/health.h"
#include "supervisor/http.h"
#include "supervisor/leader.h"
#include "supervisor/metrics.h"
#include "supervisor/ops.h"
#include "supervisor/otel.h"
#include "supervisor/egress.h"
#include "supervisor/shadow.h"
#include "supervisor/sup.h"

/* ---- the figures ---- */

struct stats *
ops_stats_new(struct sup *s, int64_t now_ms)
{
	struct stats *st = stats_new(now_ms, timefmt_now_us_real() / 1000);

	st->leader_elect = leader_elects(s->leader);
	stats_set_text(st->identity, sizeof(st->identity),
	        leader_identity(s->leader));
	for (size_t i = 0; i < s->nctls; i++) {
		const char *name = s->ctls[i].spec->name;
		int n = cfg_workers_for(&s->cfg, name);
		stats_add_ctl(st, name);
		for (int j = 0; j < n; j++) {
			stats_add_worker(st, name, j);
		}
	}
	for (size_t i = 0; i < s->nkinds; i++) {
		size_t row = stats_add_kind(st, s->kinds[i].name,
		        s->ctls[s->kind_ctl[i]].spec->name);
		struct stats_kind *k = &st->kinds[row]; /* after the realloc */
		stats_set_text(k->resource, sizeof(k->resource),
		        s->kinds[i].res.plural);
		snprintf(k->check, sizeof(k->check), "informer-%s",
		        k->resource);
	}
	st->cache_stale_ms = s->cfg.cache_stale_ms;
	st->shadow = s->cfg.shadow;
	return (st);
}

static enum stats_wstate
wstate(enum wk_state ws, bool leading)
{
	switch (ws) {
	case WK_STARTING:
		return (STATS_W_STARTING);
	case WK_READY:
		return (leading ? STATS_W_READY : STATS_W_STANDBY);
	case WK_BUSY:
		return (STATS_W_BUSY);
	case WK_RESTARTING:
		return (STATS_W_RESTARTING);
	case WK_CRASHLOOP:
		return (STATS_W_CRASHLOOP);
	case WK_STOPPING:
		return (STATS_W_STOPPING);
	case WK_FAILED:
		return (STATS_W_FAILED);
	default:
		return (STATS_W_STOPPED);
	}
}

static void
copy_worker(const struct wk_info *in, void *arg)
{
	struct sup *s = arg;
	struct stats_worker *w
	        = stats_worker(s->stats, in->controller, in->index);

	if (w == NULL) {
		return;
	}
	w->pid = in->pid;
	w->state = wstate(in->state, s->stats->leading);
	w->started_ms = in->started_ms;
	w->restarts = in->restarts;
	stats_set_text(w->last_exit, sizeof(w->last_exit), in->last_cause);
	w->hb_age_ms = in->hb_age_ms;
	stats_set_text(w->key, sizeof(w->key), in->key);
	w->key_since_ms = in->key != NULL ? in->key_since_ms : -1;
	w->lost = in->reconciles_lost;
}

static void
copy_fault(struct sup *s, struct stats_ctl *c)
{
	struct fault_info fi;

	if (wk_fault_info(s->pool, c->name, &fi) != 0) {
		return;
	}
	c->fault = fi.state;
	stats_set_text(c->fault_reason, sizeof(c->fault_reason), fi.reason);
	c->fault_since_ms = fi.since_ms;
	c->faults = fi.faults;
	c->failures = fi.failures;
}

static void
refresh_ctls(struct sup *s, int64_t now_ms)
{
	struct queue_stats qs;

	for (size_t i = 0; i < s->nctls && i < s->stats->nctls; i++) {
		struct stats_ctl *c = &s->stats->ctls[i];
		queue_stats(s->ctls[i].q, &qs);
		c->depth = qs.depth;
		c->parked = qs.parked;
		c->queued_high = qs.queued_high;
		c->queued_low = qs.queued_low;
		c->processing = qs.processing;
		c->adds = qs.adds_total;
		c->retries = qs.retries_total;
		c->wait = qs.wait;
		c->work = qs.work;
		queue_ages(s->ctls[i].q, now_ms, &c->unfinished_ms,
		        &c->longest_ms);
		c->quarantined = quarantine_count(
		        wk_quarantine(s->pool, s->ctls[i].spec->name));
		c->paused = s->ctls[i].paused;
		copy_fault(s, c);
	}
}

static void
refresh_kinds(struct sup *s)
{
	struct inf_stats is;
	struct stats *st = s->stats;

	st->relists = st->watch_restarts = 0;
	for (size_t i = 0; i < s->nkinds && i < st->nkinds; i++) {
		struct stats_kind *k = &st->kinds[i];
		inf_stats(s->inf, i, &is);
		k->synced = is.synced;
		k->objects = is.objects;
		k->lists = is.lists;
		k->relists = is.relists;
		k->watches = is.watches;
		k->watch_restarts = is.watch_restarts;
		k->watch_errors = is.watch_errors;
		k->events = is.events;
		k->age_ms = is.age_ms;
		k->failing = is.failing;
		st->relists += is.relists;
		st->watch_restarts += is.watch_restarts;
	}
	st->all_synced = inf_all_synced(s->inf);
}

void
ops_stats_refresh(struct sup *s, int64_t now_ms)
{
	struct stats *st = s->stats;

	if (st == NULL) {
		return;
	}
	st->leading = leader_leading(s->leader);
	st->epoch = leader_epoch(s->leader);
	st->stopping = s->stopping;
	if (s->shadow != NULL) {
		st->shadow_pending = sh_pending(s->shadow);
		st->shadow_dropped = sh_dropped(s->shadow);
	}
	stats_set_text(
	        st->holder, sizeof(st->holder), leader_holder(s->leader));
	wk_foreach(s->pool, now_ms, copy_worker, s);
	refresh_ctls(s, now_ms);
	refresh_kinds(s);
}

/* ---- the health socket's answers ---- */

static char *
do_worker(struct sup *s, const char *name, int64_t now)
{
	size_t idx[1];

	if (health_match(s->stats, name, idx, 1) == 0) {
		return (hp_reply_error("no worker \"%s\"", name));
	}
	json_object *o = json_object_new_object();
	json_object_object_add(o, "worker",
	        health_worker_json(&s->stats->workers[idx[0]], true, now));
	return (hp_reply_ok(o));
}

static char *
do_restart(struct sup *s, const char *name, int64_t now)
{
	size_t idx[WK_PROCS_MAX];
	size_t n = health_match(s->stats, name, idx, WK_PROCS_MAX);
	json_object *a = json_object_new_array(), *o;
	char full[STATS_NAME_MAX + 16];

	for (size_t i = 0; i < n; i++) {
		const struct stats_worker *w = &s->stats->workers[idx[i]];
		if (wk_restart(s->pool, w->controller, w->index,
		            "restarted by sympoziumctl", now)
		        == 0) {
			snprintf(full, sizeof(full), "%s-%d", w->controller,
			        w->index);
			log_info("health: worker %s restarted on request",
			        full);
			json_object_array_add(a, json_object_new_string(full));
		}
	}
	if (json_object_array_length(a) == 0) {
		json_object_put(a);
		return (n == 0 ? hp_reply_error("no worker \"%s\"", name)
		               : hp_reply_error("cannot restart \"%s\" now "
		                                "(shutting down)",
		                       name));
	}
	o = json_object_new_object();
	json_object_object_add(o, "restarted", a);
	return (hp_reply_ok(o));
}

static char *
do_pause(struct sup *s, const char *name, bool pause)
{
	for (size_t i = 0; i < s->nctls; i++) {
		if (strcmp(s->ctls[i].spec->name, name) != 0) {
			continue;
		}
		if (s->ctls[i].paused != pause) {
			log_info("health: controller %s %s", name,
			        pause ? "paused" : "resumed");
		}
		s->ctls[i].paused = pause;
		json_object *o = json_object_new_object();
		json_object_object_add(
		        o, "controller", json_object_new_string(name));
		json_object_object_add(
		        o, "paused", json_object_new_boolean(pause));
		return (hp_reply_ok(o));
	}
	return (hp_reply_error("no controller \"%s\"", name));
}

/* {"shadow": on, "pending": [records], "dropped": n} (shadow.h). */
static char *
do_shadow(struct sup *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(
	        o, "shadow", json_object_new_boolean(s->shadow != NULL));
	json_object_object_add(o, "pending",
	        s->shadow != NULL ? sh_json(s->shadow)
	                          : json_object_new_array());
	json_object_object_add(o, "dropped",
	        json_object_new_int64(s->shadow != NULL
	                        ? (int64_t)sh_dropped(s->shadow)
	                        : 0));
	return (hp_reply_ok(o));
}

char *
ops_health_request(void *arg, const struct hp_req *req, int64_t now)
{
	struct sup *s = arg;

	ops_stats_refresh(s, now);
	switch (req->cmd) {
	case HP_STATUS:
		return (hp_reply_ok(health_status_json(s->stats, now)));
	case HP_WORKERS:
		return (hp_reply_ok(health_workers_json(s->stats, now)));
	case HP_WORKER:
		return (do_worker(s, req->name, now));
	case HP_RESTART:
		return (do_restart(s, req->name, now));
	case HP_PAUSE:
	case HP_RESUME:
		return (do_pause(s, req->name, req->cmd == HP_PAUSE));
	case HP_SHADOW:
		return (do_shadow(s));
	default:
		return (hp_reply_error("unknown command"));
	}
}

/* ---- the HTTP pages ---- */

int
ops_http_probe(void *arg, const char *path, const struct http_query *q,
        struct buf *body, const char **ctype)
{
	struct sup *s = arg;
	struct http_check c[HTTP_MAX_CHECKS];
	size_t n;
	const char *one;
	int status;

	*ctype = HTTP_TEXT_PLAIN;
	if (strncmp(path, "/healthz", 8) == 0
	        && (path[8] == '\0' || path[8] == '/')) {
		n = http_live_checks(c);
		one = path[8] == '/' ? path + 9 : NULL;
	} else if (strncmp(path, "/readyz", 7) == 0
	        && (path[7] == '\0' || path[7] == '/')) {
		ops_stats_refresh(s, timefmt_now_ms_mono());
		n = http_ready_checks(s->stats, c);
		one = path[7] == '/' ? path + 8 : NULL;
	} else {
		buf_puts(body, "404 page not found\n");
		return (404);
	}
	status = http_probe_answer(c, n, one, q, body);
	for (size_t i = 0; status != 200 && i < n; i++) {
		if (!c[i].ok) {
			log_debug("%s: %s failed: %s", path, c[i].name,
			        c[i].reason);
		}
	}
	return (status);
}

/* The exporter's figures for the metrics page. */
static const struct met_otel *
ops_otel(struct sup *s, struct met_otel *mo)
{
	struct otel_stats os;
	struct egress_stats xs;

	otel_stats(s->otel, &os);
	egress_stats(s->egress, &xs);
	memset(mo, 0, sizeof(*mo));
	for (int i = 0; i < OTEL_NSIGNALS; i++) {
		mo->sent[i] = xs.sent[i];
		mo->failed[i] = xs.failed[i];
		mo->dropped_items[i] = os.queue_dropped[i];
	}
	mo->dropped_queue = xs.dropped;
	mo->dropped_series = os.series_dropped;
	return (mo);
}

int
ops_http_metrics(void *arg, const char *path, const struct http_query *q,
        struct buf *body, const char **ctype)
{
	struct sup *s = arg;
	struct met_ctx ctx = { .lease = s->cfg.le_id };
	struct met_otel mo;
	struct met_proc *wp;
	char host[256];

	(void)q;
	*ctype = HTTP_TEXT_PLAIN;
	if (strcmp(path, "/metrics") != 0) {
		buf_puts(body, "404 page not found\n");
		return (404);
	}
	ops_stats_refresh(s, timefmt_now_ms_mono());
	met_host(s->conf != NULL ? s->conf->server : NULL, host, sizeof(host));
	ctx.host = host;
	met_proc_read(0, &ctx.self);
	wp = xcalloc(s->stats->nworkers + 1, sizeof(*wp));
	for (size_t i = 0; i < s->stats->nworkers; i++) {
		if (s->stats->workers[i].pid > 0) {
			met_proc_read(s->stats->workers[i].pid, &wp[i]);
		}
	}
	ctx.workers = wp;
	if (s->otel != NULL) {
		ctx.otel = ops_otel(s, &mo);
	}
	met_render(s->stats, &ctx, body);
	free(wp);
	*ctype = HTTP_PROM_TEXT;
	return (200);
}
