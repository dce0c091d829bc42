/*
 * elect.c: runs the Lease state machine (lease.c) over the supervisor's
 * API connection: one request at a time, GET / POST / PUT of
 * coordination.k8s.io/v1 leases, answers classified for the state machine;
 * and, while standing by, a watch of that Lease whose events the state
 * machine judges like GET answers (lease_on_watch()): a release is taken
 * within one round trip, not after the retry period with its jitter (up
 * to 2.2 of them), and a killed holder's expiry counts from its last
 * renewal as the watch saw it, not from the standby's last poll.
 * Becoming leader bumps the epoch given to workers and re-enqueues every
 * primary object; losing the lease stops dispatch and writes at once
 * (fencing: sup_leading() is asked before every dispatch and every write).
 * Without --leader-elect this process leads from the start, epoch 1.
 */
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "supervisor/sup.h"

static const struct kapi_res leases = {
        "coordination.k8s.io", "v1", "leases", true};

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
answered(struct sup *s, struct kapi_resp *resp, bool get)
{
	stats_api(s->stats, get ? KAPI_GET : s->lease_verb, resp->code);
	int64_t now = timefmt_now_ms_mono();
	json_object *obj = resp->err.rc == KAPI_OK
	        ? jx_parse(resp->body.data, resp->body.len, 0, NULL, 0)
	        : NULL;

	s->lease_busy = false;
	if (get) {
		lease_on_get(s->lease, classify(resp), obj, now);
	} else {
		lease_on_write(s->lease, classify(resp), obj, now);
	}
	json_object_put(obj);
	s->lease_at = now;
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
send_action(struct sup *s, struct lease_action *act)
{
	struct kapi_req req = {.res = &leases, .ns = s->cfg.le_namespace,
	        .name = s->cfg.le_id, .max_retries = -1,
	        .timeout_ms = act->timeout_ms};

	switch (act->act) {
	case LEASE_ACT_GET:
		req.verb = KAPI_GET;
		kapi_multi_submit(s->m, &req, get_done, s);
		break;
	case LEASE_ACT_CREATE:
		req.verb = s->lease_verb = KAPI_CREATE;
		req.name = NULL;
		req.body = act->body;
		kapi_multi_submit(s->m, &req, write_done, s);
		break;
	case LEASE_ACT_UPDATE:
		req.verb = s->lease_verb = KAPI_UPDATE;
		req.body = act->body;
		kapi_multi_submit(s->m, &req, write_done, s);
		break;
	default:
		s->lease_at = act->at_ms;
		if (act->act == LEASE_ACT_DONE) {
			s->released = true;
		}
		return;
	}
	s->lease_busy = true;
}

/* ---- the standby's watch of the Lease ---- */

static void
lw_close(struct sup *s, int64_t reopen_at)
{
	if (s->lw_id != 0) {
		kapi_multi_cancel(s->m, s->lw_id);
		s->lw_id = 0;
	}
	kapi_watch_free(s->lw_dec);
	s->lw_dec = NULL;
	s->lw_at = reopen_at;
}

static void
lw_data(void *arg, uint64_t id, const char *data, size_t len)
{
	struct sup *s = arg;
	struct kapi_watch_event ev;
	int64_t now = timefmt_now_ms_mono();
	int rc = 0;

	if (id != s->lw_id || s->lw_dec == NULL) {
		return;
	}
	if (kapi_watch_feed(s->lw_dec, data, len) == 0) {
		while ((rc = kapi_watch_next(s->lw_dec, &ev)) == 1) {
			bool del = ev.type == KAPI_WATCH_DELETED;
			if ((del || ev.type == KAPI_WATCH_ADDED
			            || ev.type == KAPI_WATCH_MODIFIED)
			        && lease_on_watch(s->lease,
			                del ? NULL : ev.object, now)) {
				s->lease_at = now;
			}
			kapi_watch_event_fini(&ev);
		}
	} else {
		rc = -1;
	}
	if (rc < 0) {
		log_warnx("lease watch: %s", kapi_watch_error(s->lw_dec));
		lw_close(s, now + s->cfg.retry_ms);
	}
}

static void
lw_done(void *arg, struct kapi_resp *resp)
{
	struct sup *s = arg;

	if (resp->id != s->lw_id) {
		return;
	}
	stats_api(s->stats, KAPI_WATCH, resp->code);
	s->lw_id = 0;
	if (resp->err.rc != KAPI_OK && !s->lw_failing) {
		/* once per streak: without the watch, polling goes on */
		log_warnx("lease watch: %s; polling the Lease only until it "
		          "works",
		        resp->err.message != NULL ? resp->err.message
		                                  : kapi_rc_name(resp->err.rc));
	}
	s->lw_failing = resp->err.rc != KAPI_OK;
	/* a clean end (the server's timeout) reopens at once, a failure
	 * after the retry period */
	lw_close(s, timefmt_now_ms_mono()
	                + (resp->err.rc == KAPI_OK ? 0 : s->cfg.retry_ms));
}

static void
lw_skipped(void *arg, const char *what)
{
	(void)arg;
	log_warnx("lease watch: %s: skipped", what);
}

/* Keeps the watch open while standing by, closed while leading. */
static void
lw_tick(struct sup *s, int64_t now)
{
	char sel[256];
	struct kapi_req req = {.verb = KAPI_WATCH, .res = &leases,
	        .ns = s->cfg.le_namespace};

	if (s->lease == NULL) {
		return;
	}
	if (s->leading || s->stopping) {
		if (s->lw_id != 0) {
			lw_close(s, now);
		}
		return;
	}
	if (s->lw_id != 0 || now < s->lw_at) {
		return;
	}
	snprintf(sel, sizeof(sel), "metadata.name=%s", s->cfg.le_id);
	req.list.field_selector = sel;
	req.list.timeout_seconds = 300;
	s->lw_dec = kapi_watch_new(64 * 1024, 0);
	kapi_watch_set_skip(s->lw_dec, lw_skipped, s);
	s->lw_id = kapi_multi_watch(s->m, &req, lw_data, lw_done, s);
}

bool
sup_leading(struct sup *s, int64_t now)
{
	if (s->lease == NULL) {
		return (!s->stopping || !s->released);
	}
	return (lease_is_leader(s->lease, now));
}

/* Notices a change of leadership. */
static void
transition(struct sup *s, int64_t now)
{
	bool lead = sup_leading(s, now);

	if (lead == s->leading) {
		return;
	}
	s->leading = lead;
	if (lead) {
		s->epoch = s->lease != NULL ? lease_epoch(s->lease) : 1;
		stats_leadership(s->stats, true, s->epoch, now);
		wk_set_epoch(s->pool, s->epoch);
		log_info("leading (epoch %u) as %s", s->epoch, s->identity);
		sup_resync(s, now);
	} else {
		stats_leadership(s->stats, false, s->epoch, now);
		log_warnx("not leading any more (epoch %u): dispatch and "
		          "writes stopped",
		        s->epoch);
	}
}

void
sup_elect(struct sup *s, int64_t now)
{
	struct lease_action act;

	if (s->lease != NULL && !s->lease_busy && now >= s->lease_at &&
	        !s->released) {
		lease_next(s->lease, now, timefmt_now_us_real(), &act);
		send_action(s, &act);
		lease_action_fini(&act);
	}
	transition(s, now);
	lw_tick(s, now);
}

void
sup_elect_release(struct sup *s, int64_t now)
{
	struct lease_action act;

	if (s->lease == NULL) {
		s->released = true;
		return;
	}
	lease_release(s->lease, now, timefmt_now_us_real(), &act);
	if (!s->lease_busy) {
		send_action(s, &act);
	} else {
		s->lease_at = now;
	}
	lease_action_fini(&act);
	transition(s, now);
}
