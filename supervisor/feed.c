/*
 * feed.c: work queues to idle workers (feed.h): the controllers' turn
 * over their queues and the WORK body with the object and its children.
 */
#include <stdlib.h>

#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "supervisor/feed.h"

struct ctl {
	const struct ctrl_spec *spec;
	size_t first_kind;
	struct queue *q;
	const bool *paused;
	bool started; /* every kind it watches has synced once */
};

struct feed {
	struct feed_conf conf;
	struct ctl *ctls;
	size_t nctls;
};

struct feed *
feed_new(const struct feed_conf *conf)
{
	struct feed *f = xcalloc(1, sizeof(*f));

	f->conf = *conf;
	return (f);
}

void
feed_free(struct feed *f)
{
	if (f == NULL) {
		return;
	}
	free(f->ctls);
	free(f);
}

size_t
feed_add(struct feed *f, const struct ctrl_spec *spec, size_t first_kind,
        struct queue *q, const bool *paused)
{
	f->ctls = xreallocarray(f->ctls, f->nctls + 1, sizeof(*f->ctls));
	f->ctls[f->nctls]
	        = (struct ctl) { spec, first_kind, q, paused, false };
	return (f->nctls++);
}

/* Whether c may start (feed.h): latched once every kind c watches has
 * synced. */
static bool
started(struct feed *f, struct ctl *c)
{
	if (c->started || f->conf.cache.synced == NULL) {
		return (true);
	}
	for (size_t i = 0; i < c->spec->nwatches; i++) {
		if (!f->conf.cache.synced(f->conf.arg, c->first_kind + i)) {
			return (false);
		}
	}
	c->started = true;
	log_info("controller %s: caches synced, starting workers",
	        c->spec->name);
	return (true);
}

/* Whether a child kind of c is not fresh: the children sent may then lack
 * objects the server has (WORK "childrenStale"). */
static bool
children_stale(const struct feed *f, const struct ctl *c)
{
	for (size_t i = 1; i < c->spec->nwatches; i++) {
		if (c->spec->watches[i].role == CTRL_CHILD
		        && !f->conf.cache.fresh(
		                f->conf.arg, c->first_kind + i)) {
			return (true);
		}
	}
	return (false);
}

/* The WORK body for key of controller ctl. */
static json_object *
work_body(struct feed *f, size_t ctl, const char *key)
{
	const struct ctl *c = &f->ctls[ctl];
	const struct feed_cache *fc = &f->conf.cache;
	char *uid = NULL;
	struct ipc_work w = { .key = key,
		.attempt = queue_num_requeues(c->q, key),
		.now_ms = timefmt_now_us_real() / 1000 };
	json_object *arr = json_object_new_array();

	w.object = fc->object(f->conf.arg, c->first_kind, key, &uid);
	if (w.object != NULL && uid != NULL) {
		for (size_t i = 1; i < c->spec->nwatches; i++) {
			if (c->spec->watches[i].role == CTRL_CHILD) {
				fc->children(f->conf.arg, c->first_kind + i,
				        uid, arr);
			}
		}
	}
	free(uid);
	w.children = arr;
	w.children_stale = children_stale(f, c);
	return (ipc_work_new(&w));
}

static bool
backlogged(const struct feed *f)
{
	return (f->conf.backlogged != NULL && f->conf.backlogged(f->conf.arg));
}

/* Controller ctl's turn: ready keys to its idle workers. */
static void
feed_ctl(struct feed *f, size_t ctl, int64_t now)
{
	struct ctl *c = &f->ctls[ctl];
	const struct feed_pool *p = &f->conf.pool;
	const char *name = c->spec->name;

	queue_tick(c->q, now);
	if (!started(f, c)) {
		return;
	}
	while (!*c->paused && p->idle(f->conf.arg, name) > 0
	        && !backlogged(f)) {
		const char *k = queue_get(c->q, now, NULL);
		if (k == NULL) {
			break;
		}
		char *key = xstrdup(k);
		json_object *body = work_body(f, ctl, key);
		if (p->dispatch(f->conf.arg, name, key, body, now) != 0) {
			queue_done(c->q, key, now);
			queue_add(c->q, key, now);
			free(key);
			break;
		}
		free(key);
	}
}

void
feed_run(struct feed *f, int64_t now)
{
	if (!f->conf.may_write(f->conf.arg, now)) {
		return;
	}
	for (size_t i = 0; i < f->nctls; i++) {
		feed_ctl(f, i, now);
	}
}
