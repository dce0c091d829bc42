/*
 * personapack_shmem.c: the shared memory server of a PersonaPack
 * (personapack_shmem.h; spec sympozium-controllers.md 3.4, upstream
 * personapack_controller.go reconcileSharedMemory / cleanupSharedMemory at
 * 008266e).  Owns the three objects' templates, their create-if-absent
 * pass and their teardown.  An object is present when the pass's children
 * hold it, else when a live read finds it controlled by the pack; one of
 * that name the pack does not control is a NameConflict error (as the
 * pack's stamps, not upstream, which took it as its own).  Prefix ppshm_.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "workers/kobj.h"
#include "workers/personapack_shmem.h"
#include "workers/view.h"

#define COMPONENT   "shared-memory"
#define PORT        8080
#define DEF_SIZE    "1Gi"
#define SVC_MAX     63 /* a Service name is a DNS-1035 label */
#define SUFFIX      "-shared-memory"
#define NAME_LEN    128
#define K_PVC       "PersistentVolumeClaim"
#define K_DEPLOY    "Deployment"
#define K_SERVICE   "Service"
#define DEF_TAG     "latest" /* upstream: not the build's tag */
#define IMAGE_LEN   512
#define ERR_LEN     256
#define MEMORY_PATH "/data/memory.db"

/* One step over one pack. */
struct sm {
	const struct rec_in *in;
	struct rec_out *out;
	struct ppshm *r;
	json_object *pack; /* borrowed */
	const char *ns;
	const char *pack_name;
	char name[NAME_LEN]; /* <pack>-shared-memory */
	char pvc[NAME_LEN];  /* <pack>-shared-memory-db */
};

static void
sm_init(struct sm *s, const struct rec_in *in, struct rec_out *out,
        struct ppshm *r)
{
	memset(s, 0, sizeof(*s));
	s->in = in;
	s->out = out;
	s->r = r;
	s->pack = in->object;
	s->ns = kobj_ns(in->object);
	s->pack_name = kobj_name(in->object);
	snprintf(s->name, sizeof(s->name), "%.100s" SUFFIX, s->pack_name);
	snprintf(s->pvc, sizeof(s->pvc), "%.100s" SUFFIX "-db", s->pack_name);
}

static void
sm_fail(struct sm *s, bool transient, const char *reason, const char *msg)
{
	s->r->reason = reason;
	s->r->transient = transient;
	snprintf(s->r->msg, sizeof(s->r->msg), "shared memory: %.290s", msg);
}

/* ---- names and quantities ---- */

/* The Service name <pack>-shared-memory must be a DNS-1035 label: a
 * lower-case letter first, then letters, digits and '-', 63 at most. */
static bool
names_ok(struct sm *s)
{
	const char *p = s->pack_name;
	size_t n = strlen(p);
	char msg[ERR_LEN];

	if (n == 0) {
		sm_fail(s, false, "InvalidName", "the pack has no name");
		return (false);
	}
	if (n + strlen(SUFFIX) > SVC_MAX) {
		snprintf(msg, sizeof(msg),
		        "Service name %.80s" SUFFIX " is longer than %d "
		        "characters",
		        p, SVC_MAX);
		sm_fail(s, false, "NameTooLong", msg);
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		if (!islower((unsigned char)p[i])
		        && (i == 0
		                || (!isdigit((unsigned char)p[i])
		                        && p[i] != '-'))) {
			snprintf(msg, sizeof(msg),
			        "Service name %s" SUFFIX
			        " is not a DNS-1035 label",
			        p);
			sm_fail(s, false, "InvalidName", msg);
			return (false);
		}
	}
	return (true);
}

/* The digits of a decimal number: [0-9]+(.[0-9]*)? or .[0-9]+.  Returns
 * the length, 0 when there is none. */
static size_t
number_len(const char *s)
{
	size_t i = 0, digits = 0;

	while (isdigit((unsigned char)s[i])) {
		i++;
		digits++;
	}
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i])) {
			i++;
			digits++;
		}
	}
	return (digits > 0 ? i : 0);
}

static bool
suffix_ok(const char *s)
{
	static const char *const fixed[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi",
		"Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E", NULL };
	size_t i = 1;

	for (size_t k = 0; fixed[k] != NULL; k++) {
		if (strcmp(s, fixed[k]) == 0) {
			return (true);
		}
	}
	if (s[0] != 'e' && s[0] != 'E') {
		return (false);
	}
	if (s[i] == '+' || s[i] == '-') {
		i++;
	}
	if (!isdigit((unsigned char)s[i])) {
		return (false);
	}
	while (isdigit((unsigned char)s[i])) {
		i++;
	}
	return (s[i] == '\0');
}

bool
ppshm_quantity_ok(const char *s)
{
	size_t n;

	if (s == NULL) {
		return (false);
	}
	if (*s == '+' || *s == '-') {
		s++;
	}
	n = number_len(s);
	return (n > 0 && suffix_ok(s + n));
}

/* ---- templates ---- */

static json_object *
jstr(const char *s)
{
	return (json_object_new_string(s));
}

static json_object *
labels(struct sm *s)
{
	json_object *l = json_object_new_object();

	json_object_object_add(l, CONTRACT_LABEL_COMPONENT, jstr(COMPONENT));
	json_object_object_add(
	        l, CONTRACT_LABEL_PERSONA_PACK, jstr(s->pack_name));
	return (l);
}

static json_object *
child_new(struct sm *s, const char *api, const char *kind, const char *name)
{
	json_object *o = kobj_new(api, kind, s->ns, name);

	jx_setv(o, labels(s), "metadata", "labels", NULL);
	kobj_set_owner(o, s->pack);
	return (o);
}

static json_object *
pvc_new(struct sm *s, const char *size)
{
	json_object *o = child_new(s, "v1", K_PVC, s->pvc);
	json_object *modes = json_object_new_array();

	json_object_array_add(modes, jstr("ReadWriteOnce"));
	jx_setv(o, modes, "spec", "accessModes", NULL);
	jx_setv(o, jstr(size), "spec", "resources", "requests", "storage",
	        NULL);
	return (o);
}

/* [{name: http, <port key>: 8080, ..., protocol: TCP}] */
static json_object *
ports(const char *key, bool target)
{
	json_object *list = json_object_new_array();
	json_object *p = json_object_new_object();

	json_object_object_add(p, "name", jstr("http"));
	json_object_object_add(p, key, json_object_new_int(PORT));
	if (target) {
		json_object_object_add(
		        p, "targetPort", json_object_new_int(PORT));
	}
	json_object_object_add(p, "protocol", jstr("TCP"));
	json_object_array_add(list, p);
	return (list);
}

/* <SYMPOZIUM_IMAGE_REGISTRY>/skill-memory:<SYMPOZIUM_IMAGE_TAG>, with the
 * default registry and "latest" as upstream's fallbacks. */
static void
image(char *buf, size_t len)
{
	const char *tag = getenv("SYMPOZIUM_IMAGE_TAG");

	kobj_image(buf, len, getenv("SYMPOZIUM_IMAGE_REGISTRY"),
	        "skill-memory", tag != NULL && tag[0] != '\0' ? tag : DEF_TAG);
}

static json_object *
container(void)
{
	char img[IMAGE_LEN];

	image(img, sizeof(img));
	return (kobj_memory_server(img, ports("containerPort", false)));
}

static json_object *
deployment_new(struct sm *s)
{
	json_object *d = child_new(s, "apps/v1", K_DEPLOY, s->name);
	json_object *ctrs = json_object_new_array();
	json_object *vols = json_object_new_array();
	json_object *v = json_object_new_object();

	jx_setv(d, json_object_new_int(1), "spec", "replicas", NULL);
	jx_setv(d, jstr("Recreate"), "spec", "strategy", "type", NULL);
	jx_setv(d, labels(s), "spec", "selector", "matchLabels", NULL);
	jx_setv(d, labels(s), "spec", "template", "metadata", "labels", NULL);
	json_object_array_add(ctrs, container());
	jx_setv(d, ctrs, "spec", "template", "spec", "containers", NULL);
	json_object_object_add(v, "name", jstr("memory-db"));
	jx_setv(v, jstr(s->pvc), "persistentVolumeClaim", "claimName", NULL);
	json_object_array_add(vols, v);
	jx_setv(d, vols, "spec", "template", "spec", "volumes", NULL);
	jx_setv(d, json_object_new_int(1000), "spec", "template", "spec",
	        "securityContext", "fsGroup", NULL);
	return (d);
}

static json_object *
service_new(struct sm *s)
{
	json_object *o = child_new(s, "v1", K_SERVICE, s->name);

	jx_setv(o, labels(s), "spec", "selector", NULL);
	jx_setv(o, ports("port", true), "spec", "ports", NULL);
	return (o);
}

/* ---- presence ---- */

/* 0: present; 1: absent; -1: error recorded. */
static int
present(struct sm *s, const char *kind, const struct ipc_res *res,
        const char *name)
{
	json_object *o = NULL;
	char err[ERR_LEN], msg[ERR_LEN + NAME_LEN + 32];
	int rc;

	if (kobj_child(s->in->children, kind, name) != NULL) {
		return (0);
	}
	if (s->in->view == NULL) {
		snprintf(err, sizeof(err), "no view");
		rc = -1;
	} else {
		rc = view_get(
		        s->in->view, res, s->ns, name, &o, err, sizeof(err));
	}
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "cannot read %s %s: %s", kind, name,
		        err);
		sm_fail(s, true, "ReadFailed", msg);
	} else if (rc == 0 && !kobj_owned_by(o, s->pack)) {
		snprintf(msg, sizeof(msg),
		        "%s %s exists and is not controlled by PersonaPack "
		        "%s",
		        kind, name, s->pack_name);
		sm_fail(s, true, "NameConflict", msg);
		rc = -1;
	}
	json_object_put(o);
	return (rc);
}

/* The PVC, created when absent with spec.sharedMemory.storageSize
 * (default 1Gi).  Returns -1 on an error (recorded). */
static int
ensure_pvc(struct sm *s)
{
	const char *size
	        = jx_get_str(s->pack, "spec.sharedMemory.storageSize");
	char msg[ERR_LEN];
	int rc = present(s, K_PVC, &kobj_pvcs, s->pvc);

	if (rc != 1) {
		return (rc);
	}
	if (size == NULL || size[0] == '\0') {
		size = DEF_SIZE;
	}
	/* upstream's resource.MustParse panics here */
	if (!ppshm_quantity_ok(size)) {
		snprintf(msg, sizeof(msg),
		        "storageSize \"%.64s\" is not a quantity", size);
		sm_fail(s, false, "InvalidSpec", msg);
		return (-1);
	}
	kobj_create(s->out, &kobj_pvcs, pvc_new(s, size), false);
	return (0);
}

static bool
enabled(json_object *pack)
{
	bool on = false;

	jx_get_bool(pack, "spec.sharedMemory.enabled", &on);
	return (on);
}

/* Whether one of the three is among the children and not going. */
static bool
any_child(struct sm *s)
{
	const char *kinds[] = { K_SERVICE, K_DEPLOY, K_PVC };
	const char *names[] = { s->name, s->name, s->pvc };

	for (size_t i = 0; i < 3; i++) {
		json_object *c
		        = kobj_child(s->in->children, kinds[i], names[i]);
		if (c != NULL
		        && jx_get(c, "metadata.deletionTimestamp") == NULL) {
			return (true);
		}
	}
	return (false);
}

static void
teardown(struct sm *s)
{
	const char *kinds[] = { K_SERVICE, K_DEPLOY, K_PVC };
	const struct ipc_res *res[]
	        = { &kobj_services, &kobj_deployments, &kobj_pvcs };
	const char *names[] = { s->name, s->name, s->pvc };

	for (size_t i = 0; i < 3; i++) {
		json_object *c
		        = kobj_child(s->in->children, kinds[i], names[i]);
		if (c != NULL
		        && jx_get(c, "metadata.deletionTimestamp") == NULL) {
			kobj_delete(s->out, res[i], s->ns, names[i], true);
		}
	}
}

/* ---- the two entry points ---- */

void
ppshm_reconcile(const struct rec_in *in, struct rec_out *out, struct ppshm *r)
{
	struct sm s;
	bool cached = false;

	memset(r, 0, sizeof(*r));
	sm_init(&s, in, out, r);
	jx_get_bool(in->object, "status.sharedMemoryReady", &cached);
	r->ready = cached;
	if (!enabled(in->object)) {
		/* not upstream: a leftover child alone also tears down (a
		 * create that failed before the status said ready) */
		if (cached || any_child(&s)) {
			teardown(&s);
		}
		r->ready = false;
		return;
	}
	if (!names_ok(&s) || ensure_pvc(&s) < 0) {
		return;
	}
	if (present(&s, K_DEPLOY, &kobj_deployments, s.name) == 1) {
		kobj_create(out, &kobj_deployments, deployment_new(&s), false);
	}
	if (r->reason == NULL
	        && present(&s, K_SERVICE, &kobj_services, s.name) == 1) {
		kobj_create(out, &kobj_services, service_new(&s), false);
	}
	if (r->reason == NULL) {
		r->ready = true;
	}
}

void
ppshm_cleanup(const struct rec_in *in, struct rec_out *out)
{
	struct ppshm r;
	struct sm s;

	memset(&r, 0, sizeof(r));
	sm_init(&s, in, out, &r);
	teardown(&s);
}
