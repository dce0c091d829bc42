/*
 * leader.c: the supervisor's leadership (leader.h): the Lease state
 * machine (lease.c) run over the API connection, one request at a time,
 * answers classified for the state machine; while standing by, a watch of
 * that Lease whose events the state machine judges like GET answers; the
 * change of leadership noticed, logged, counted and reported once.
 * Becoming leader takes the Lease's new epoch; losing it ends dispatch
 * and writes at once (every fence asks leader_may_write()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonx.h"
#include "common/kapi_watch.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "supervisor/lease.h"
#include "supervisor/leader.h"

static const struct kapi_res leases
        = { "coordination.k8s.io", "v1", "leases", true };

struct leader {
	struct leader_conf c; /* ns and name copied below */
	char *ns, *name;
	char identity[128];
	struct kapi_multi *m;
	struct stats *stats;
	struct lease *lease; /* NULL without election */
	bool busy;           /* a Lease request is in flight */
	enum kapi_verb verb; /* of the write in flight (stats) */
	int64_t at;          /* next lease_next() */
	uint64_t lw_id;      /* the standby's watch of the Lease, 0 none */
	struct kapi_watch *lw_dec; /* its decoder */
	int64_t lw_at;             /* when to (re)open it */
	bool lw_failing; /* its last end was a failure (logged once) */
	bool leading;    /* as last reported */
	uint32_t epoch;  /* of the last leadership reported */
	bool stopping;
	bool releasing; /* leader_release() called */
	bool released;  /* the release finished (or none was needed) */
};

/* "<hostname>_<uuid>", client-go's default identity. */
static void
default_identity(char *out, size_t len)
{
	char host[64] = "host", uid[37];
	FILE *f = fopen("/proc/sys/kernel/random/uuid", "re");

	gethostname(host, sizeof(host) - 1);
	if (f == NULL || fgets(uid, sizeof(uid), f) == NULL) {
		snprintf(uid, sizeof(uid), "%d", (int)getpid());
	}
	if (f != NULL) {
		fclose(f);
	}
	uid[strcspn(uid, "\n")] = '\0';
	snprintf(out, len, "%s_%s", host, uid);
}

struct leader *
leader_new(const struct leader_conf *c, char *err, size_t errlen)
{
	struct leader *l = xcalloc(1, sizeof(*l));
	struct lease_config lc = { .ns = c->ns,
		.name = c->name,
		.lease_duration_ms = c->lease_ms,
		.renew_deadline_ms = c->renew_ms,
		.retry_period_ms = c->retry_ms,
		.release_on_cancel = true,
		.seed = c->seed };

	l->c = *c;
	l->ns = c->ns != NULL ? xstrdup(c->ns) : NULL;
	l->name = c->name != NULL ? xstrdup(c->name) : NULL;
	if (c->identity != NULL) {
		snprintf(l->identity, sizeof(l->identity), "%s", c->identity);
	} else {
		default_identity(l->identity, sizeof(l->identity));
	}
	if (!c->elect) {
		return (l);
	}
	lc.identity = l->identity;
	l->lease = lease_new(&lc, err, errlen);
	if (l->lease == NULL) {
		leader_free(l);
		return (NULL);
	}
	return (l);
}

void
leader_free(struct leader *l)
{
	if (l == NULL) {
		return;
	}
	kapi_watch_free(l->lw_dec);
	lease_free(l->lease);
	free(l->ns);
	free(l->name);
	free(l);
}

void
leader_connect(struct leader *l, struct kapi_multi *m, struct stats *st)
{
	l->m = m;
	l->stats = st;
}

/* ---- the Lease requests ---- */

static enum lease_result
classify(const struct kapi_resp *resp)
{
	switch (resp->err.rc) {
	case KAPI_OK:
		return (LEASE_RES_OK);
	case KAPI_ENOTFOUND:
		return (LEASE_RES_NOTFOUND);
	case KAPI_ECONFLICT:
	case KAPI_EEXISTS:
		return (LEASE_RES_CONFLICT);
	default:
		return (LEASE_RES_ERROR);
	}
}

static void
answered(struct leader *l, struct kapi_resp *resp, bool get)
{
	stats_api(l->stats, get ? KAPI_GET : l->verb, resp->code);
	int64_t now = timefmt_now_ms_mono();
	json_object *obj = resp->err.rc == KAPI_OK
	        ? jx_parse(resp->body.data, resp->body.len, 0, NULL, 0)
	        : NULL;

	l->busy = false;
	if (get) {
		lease_on_get(l->lease, classify(resp), obj, now);
	} else {
		lease_on_write(l->lease, classify(resp), obj, now);
	}
	json_object_put(obj);
	l->at = now;
}

static void
get_done(void *arg, struct kapi_resp *resp)
{
	answered(arg, resp, true);
}

static void
write_done(void *arg, struct kapi_resp *resp)
{
	answered(arg, resp, false);
}

static void
send_action(struct leader *l, struct lease_action *act)
{
	struct kapi_req req = { .res = &leases,
		.ns = l->ns,
		.name = l->name,
		.max_retries = -1,
		.timeout_ms = act->timeout_ms };

	switch (act->act) {
	case LEASE_ACT_GET:
		req.verb = KAPI_GET;
		kapi_multi_submit(l->m, &req, get_done, l);
		break;
	case LEASE_ACT_CREATE:
		req.verb = l->verb = KAPI_CREATE;
		req.name = NULL;
		req.body = act->body;
		kapi_multi_submit(l->m, &req, write_done, l);
		break;
	case LEASE_ACT_UPDATE:
		req.verb = l->verb = KAPI_UPDATE;
		req.body = act->body;
		kapi_multi_submit(l->m, &req, write_done, l);
		break;
	default:
		l->at = act->at_ms;
		if (act->act == LEASE_ACT_DONE) {
			l->released = true;
		}
		return;
	}
	l->busy = true;
}

/* ---- the standby's watch of the Lease ---- */

static void
lw_close(struct leader *l, int64_t reopen_at)
{
	if (l->lw_id != 0) {
		kapi_multi_cancel(l->m, l->lw_id);
		l->lw_id = 0;
	}
	kapi_watch_free(l->lw_dec);
	l->lw_dec = NULL;
	l->lw_at = reopen_at;
}

static void
lw_data(void *arg, uint64_t id, const char *data, size_t len)
{
	struct leader *l = arg;
	struct kapi_watch_event ev;
	int64_t now = timefmt_now_ms_mono();
	int rc = 0;

	if (id != l->lw_id || l->lw_dec == NULL) {
		return;
	}
	if (kapi_watch_feed(l->lw_dec, data, len) == 0) {
		while ((rc = kapi_watch_next(l->lw_dec, &ev)) == 1) {
			bool del = ev.type == KAPI_WATCH_DELETED;
			if ((del || ev.type == KAPI_WATCH_ADDED
			            || ev.type == KAPI_WATCH_MODIFIED)
			        && lease_on_watch(l->lease,
			                del ? NULL : ev.object, now)) {
				l->at = now;
			}
			kapi_watch_event_fini(&ev);
		}
	} else {
		rc = -1;
	}
	if (rc < 0) {
		log_warnx("lease watch: %s", kapi_watch_error(l->lw_dec));
		lw_close(l, now + l->c.retry_ms);
	}
}

static void
lw_done(void *arg, struct kapi_resp *resp)
{
	struct leader *l = arg;

	if (resp->id != l->lw_id) {
		return;
	}
	stats_api(l->stats, KAPI_WATCH, resp->code);
	l->lw_id = 0;
	if (resp->err.rc != KAPI_OK && !l->lw_failing) {
		/* once per streak: without the watch, polling goes on */
		log_warnx("lease watch: %s; polling the Lease only until it "
		          "works",
		        resp->err.message != NULL
		                ? resp->err.message
		                : kapi_rc_name(resp->err.rc));
	}
	l->lw_failing = resp->err.rc != KAPI_OK;
	/* a clean end (the server's timeout) reopens at once, a failure
	 * after the retry period */
	lw_close(l,
	        timefmt_now_ms_mono()
	                + (resp->err.rc == KAPI_OK ? 0 : l->c.retry_ms));
}

static void
lw_skipped(void *arg, const char *what)
{
	(void)arg;
	log_warnx("lease watch: %s: skipped", what);
}

/* Keeps the watch open while standing by, closed while leading. */
static void
lw_tick(struct leader *l, int64_t now)
{
	char sel[256];
	struct kapi_req req
	        = { .verb = KAPI_WATCH, .res = &leases, .ns = l->ns };

	if (l->lease == NULL) {
		return;
	}
	if (l->leading || l->stopping) {
		if (l->lw_id != 0) {
			lw_close(l, now);
		}
		return;
	}
	if (l->lw_id != 0 || now < l->lw_at) {
		return;
	}
	snprintf(sel, sizeof(sel), "metadata.name=%s", l->name);
	req.list.field_selector = sel;
	req.list.timeout_seconds = 300;
	l->lw_dec = kapi_watch_new(64 * 1024, 0);
	kapi_watch_set_skip(l->lw_dec, lw_skipped, l);
	l->lw_id = kapi_multi_watch(l->m, &req, lw_data, lw_done, l);
}

/* ---- leadership ---- */

bool
leader_may_write(struct leader *l, int64_t now)
{
	if (l->lease == NULL) {
		return (!l->released);
	}
	return (lease_is_leader(l->lease, now));
}

static void
report(struct leader *l, enum leader_event ev, int64_t now)
{
	if (l->c.on_event != NULL) {
		l->c.on_event(l->c.arg, ev, l->epoch, now);
	}
}

static void
gained(struct leader *l, int64_t now)
{
	l->leading = true;
	l->epoch = l->lease != NULL ? lease_epoch(l->lease) : 1;
	stats_leadership(l->stats, true, l->epoch, now);
	log_info("leading (epoch %u) as %s", l->epoch, l->identity);
	report(l, LEADER_GAINED, now);
}

static void
ended(struct leader *l, int64_t now)
{
	l->leading = false;
	stats_leadership(l->stats, false, l->epoch, now);
	log_warnx("not leading any more (epoch %u): dispatch and writes "
	          "stopped",
	        l->epoch);
	report(l, l->releasing ? LEADER_RELEASED : LEADER_LOST, now);
}

/* A leadership that lapsed and began anew (a late renewal's success)
 * between two looks is reported as lost, then gained. */
void
leader_check(struct leader *l, int64_t now)
{
	bool lead = leader_may_write(l, now);

	if (l->leading
	        && (!lead
	                || (l->lease != NULL
	                        && lease_epoch(l->lease) != l->epoch))) {
		ended(l, now);
	}
	if (lead && !l->leading) {
		gained(l, now);
	}
}

void
leader_tick(struct leader *l, int64_t now)
{
	struct lease_action act;

	if (l->lease != NULL && !l->busy && now >= l->at && !l->released) {
		lease_next(l->lease, now, timefmt_now_us_real(), &act);
		send_action(l, &act);
		lease_action_fini(&act);
		stats_lease_slowpath(l->stats, lease_slowpath(l->lease));
	}
	leader_check(l, now);
	lw_tick(l, now);
}

void
leader_stopping(struct leader *l)
{
	l->stopping = true;
}

void
leader_release(struct leader *l, int64_t now)
{
	struct lease_action act;

	l->releasing = true;
	if (l->lease == NULL) {
		l->released = true;
		leader_check(l, now);
		return;
	}
	lease_release(l->lease, now, timefmt_now_us_real(), &act);
	if (!l->busy) {
		send_action(l, &act);
	} else {
		l->at = now;
	}
	lease_action_fini(&act);
	leader_check(l, now);
}

bool
leader_released(const struct leader *l)
{
	return (l->lease == NULL || l->released);
}

uint32_t
leader_epoch(const struct leader *l)
{
	return (l->epoch);
}

bool
leader_leading(const struct leader *l)
{
	return (l->leading);
}

const char *
leader_identity(const struct leader *l)
{
	return (l->identity);
}

const char *
leader_holder(const struct leader *l)
{
	if (l->lease != NULL) {
		return (lease_holder(l->lease));
	}
	return (l->leading ? l->identity : "");
}

bool
leader_elects(const struct leader *l)
{
	return (l->lease != NULL);
}

int64_t
leader_next_deadline(const struct leader *l)
{
	return (l->lease != NULL && !l->busy ? l->at : -1);
}
