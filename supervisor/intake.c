/*
 * intake.c: watch events to work queues (intake.h): the kind table
 * (controller, role, queue per informer kind), owner mapping of child
 * events, the resync.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "supervisor/intake.h"

struct kind {
	const struct ctrl_spec *spec; /* its controller */
	enum ctrl_role role;
	struct queue *q; /* the controller's */
	bool primary;    /* spec->watches[0] */
};

struct intake {
	struct kind *kinds;
	size_t nkinds;
};

struct intake *
intake_new(void)
{
	return (xcalloc(1, sizeof(struct intake)));
}

void
intake_free(struct intake *in)
{
	if (in == NULL) {
		return;
	}
	free(in->kinds);
	free(in);
}

size_t
intake_add(struct intake *in, const struct ctrl_spec *spec, struct queue *q)
{
	size_t first = in->nkinds;

	in->kinds = xreallocarray(
	        in->kinds, in->nkinds + spec->nwatches, sizeof(*in->kinds));
	for (size_t i = 0; i < spec->nwatches; i++) {
		in->kinds[in->nkinds++] = (struct kind) { .spec = spec,
			.role = spec->watches[i].role,
			.q = q,
			.primary = i == 0 };
	}
	return (first);
}

/* Enqueues the controller owner o of child_key, when it is of the
 * controller's primary kind: same namespace, the owner's name. */
static void
enqueue_owner(const struct kind *k, const char *child_key,
        const struct inf_owner *o, enum queue_lane lane, int64_t now)
{
	const char *sl = strchr(child_key, '/');
	char key[600];

	if (o == NULL || o->name == NULL || o->kind == NULL
	        || strcmp(o->kind, k->spec->watches[0].kind) != 0) {
		return;
	}
	if (sl != NULL) {
		snprintf(key, sizeof(key), "%.*s/%s", (int)(sl - child_key),
		        child_key, o->name);
	} else {
		snprintf(key, sizeof(key), "%s", o->name);
	}
	queue_add_lane(k->q, key, lane, now);
}

void
intake_on_change(struct intake *in, size_t kind, bool listed, const char *key,
        const struct inf_owner *old_owner, const struct inf_owner *new_owner,
        int64_t now)
{
	/* a first list's objects wait behind live changes (queue.h lanes) */
	enum queue_lane lane = listed ? QUEUE_LOW : QUEUE_HIGH;

	if (kind >= in->nkinds) {
		return;
	}
	const struct kind *k = &in->kinds[kind];
	if (k->role == CTRL_PRIMARY) {
		queue_add_lane(k->q, key, lane, now);
	} else if (k->role == CTRL_CHILD) {
		enqueue_owner(k, key, old_owner, lane, now);
		enqueue_owner(k, key, new_owner, lane, now);
	}
}

struct resync {
	struct queue *q;
	int64_t now;
};

static void
resync_one(void *ctx, const char *key)
{
	struct resync *r = ctx;

	queue_add_lane(r->q, key, QUEUE_LOW, r->now);
}

void
intake_resync(struct intake *in, intake_each_fn *each, void *arg, int64_t now)
{
	for (size_t i = 0; i < in->nkinds; i++) {
		if (!in->kinds[i].primary) {
			continue;
		}
		struct resync r = { in->kinds[i].q, now };
		each(arg, i, resync_one, &r);
	}
}
