/*
 * personapack.c: the PersonaPack reconciler (spec sympozium-controllers.md
 * section 3).  An enabled pack stamps, per persona, the SympoziumInstance
 * <pack>-<persona>, the SympoziumSchedule <pack>-<persona>-schedule (both
 * controlled by the pack) and, once, the seed memory ConfigMap
 * <pack>-<persona>-memory (no owner); it re-syncs the pack-owned fields of
 * existing stamps; a stamp-named instance or schedule that has no owner
 * is adopted (upstream takes it over), one another owner controls is a
 * NameConflict error.  A disabled pack tears its stamps down, deletes the
 * managed-looking auth Secrets and clears spec.authRefs.  The status
 * counts the installed personas.
 *
 * Re-triggered by every change of an owned instance or schedule, so a pass
 * over a pack that is in sync emits no write: every write is computed
 * against the cached objects first.  Reads beyond the children go through
 * the view: the seed ConfigMaps (every pass of a persona with seeds), an
 * instance or schedule missing from the children (before creating it), and
 * the auth Secrets' metadata (once, when the pack is disabled).  The
 * shared memory server (PVC, Deployment, Service) is personapack_shmem.c's.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/kobj.h"
#include "workers/personapack.h"
#include "workers/personapack_shmem.h"
#include "workers/view.h"

#define API          "sympozium.ai/v1alpha1"
#define K_INSTANCE   "SympoziumInstance"
#define K_SCHEDULE   "SympoziumSchedule"
#define TEARDOWN_MS  2000
#define NAME_MAX_LEN 63   /* instance names are label values */
#define ERRS_MAX     4096 /* bound of the Ready condition's message */

/* One reconcile of one pack. */
struct pass {
	const struct rec_in *in;
	struct rec_out *out;
	json_object *pack; /* borrowed */
	json_object *spec; /* borrowed, may be NULL */
	const char *ns;
	const char *name;
	struct buf errs;    /* "; "-joined persona errors */
	const char *reason; /* of the first error */
	bool transient;     /* an error worth a backoff retry */
	bool wrote_pack;    /* a write to the pack itself was emitted */
	bool shm_ready;     /* status.sharedMemoryReady to write */
};

/* One persona of spec.personas. */
struct persona {
	json_object *o; /* borrowed */
	const char *name;
	size_t idx;
	char inst[NAME_MAX_LEN + 1];
	char sched[NAME_MAX_LEN + 16];
	char cm[NAME_MAX_LEN + 16];
};

/* ---- small JSON helpers ---- */

static const char *
str(json_object *o, const char *key)
{
	json_object *v = json_object_is_type(o, json_type_object)
	        ? json_object_object_get(o, key)
	        : NULL;

	return (v != NULL && json_object_is_type(v, json_type_string)
	                ? json_object_get_string(v)
	                : "");
}

static void
put_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

/* Sets key to v, or removes it when v is empty (Go's omitempty). */
static void
put_opt(json_object *o, const char *key, const char *v)
{
	if (v != NULL && v[0] != '\0') {
		put_str(o, key, v);
	} else {
		json_object_object_del(o, key);
	}
}

/* The object at key of o, created when missing or not an object.
 * Borrowed. */
static json_object *
obj_at(json_object *o, const char *key)
{
	json_object *v = json_object_object_get(o, key);

	if (v == NULL || !json_object_is_type(v, json_type_object)) {
		v = json_object_new_object();
		json_object_object_add(o, key, v);
	}
	return (v);
}

static bool
terminating(json_object *o)
{
	return (jx_get(o, "metadata.deletionTimestamp") != NULL);
}

static bool
in_list(json_object *list, const char *s)
{
	for (size_t i = 0; i < jx_array_len(list); i++) {
		json_object *e = json_object_array_get_idx(list, i);
		if (json_object_is_type(e, json_type_string)
		        && strcmp(json_object_get_string(e), s) == 0) {
			return (true);
		}
	}
	return (false);
}

/* ---- cron derivation (spec 3.3) ---- */

static char *
lower_trim(const char *s)
{
	size_t n;
	char *t;

	while (*s != '\0' && isspace((unsigned char)*s)) {
		s++;
	}
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1])) {
		n--;
	}
	t = xstrndup(s, n);
	for (char *c = t; *c != '\0'; c++) {
		*c = (char)tolower((unsigned char)*c);
	}
	return (t);
}

static char *
interval_cron(const char *interval, size_t offset)
{
	static const struct {
		const char *a, *b;
		unsigned n;
	} every[] = { { "5m", "5min", 5 }, { "10m", "10min", 10 },
		{ "15m", "15min", 15 }, { "30m", "30min", 30 } };
	static const char *const hours[] = { "2h", "3h", "4h", "6h", "12h" };
	char *s = lower_trim(interval != NULL ? interval : "");
	unsigned m = (unsigned)(offset % 60);
	char *out = NULL;

	if (strcmp(s, "1m") == 0 || strcmp(s, "1min") == 0) {
		out = xstrdup("* * * * *");
	}
	for (size_t i = 0; out == NULL && i < 4; i++) {
		if (strcmp(s, every[i].a) == 0 || strcmp(s, every[i].b) == 0) {
			out = xasprintf("%u/%u * * * *",
			        (unsigned)(offset % every[i].n), every[i].n);
		}
	}
	for (size_t i = 0; out == NULL && i < 5; i++) {
		if (strcmp(s, hours[i]) == 0) {
			out = xasprintf("%u */%d * * *", m, atoi(hours[i]));
		}
	}
	if (out == NULL && (strcmp(s, "24h") == 0 || strcmp(s, "1d") == 0)) {
		out = xasprintf("%u 0 * * *", m);
	}
	if (out == NULL && strchr(s, ' ') != NULL) {
		return (s);
	}
	if (out == NULL) { /* 1h, 60m and anything else: hourly */
		out = xasprintf("%u * * * *", m);
	}
	free(s);
	return (out);
}

char *
personapack_cron(const char *cron, const char *interval, size_t index)
{
	if (cron != NULL && cron[0] != '\0') {
		return (xstrdup(cron));
	}
	return (interval_cron(interval, index * 2));
}

/* ---- errors, writes, reads ---- */

static void fail(struct pass *p, bool transient, const char *reason,
        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Remembers a persona error for the status (phase Error, Ready
 * condition). */
static void
fail(struct pass *p, bool transient, const char *reason, const char *fmt, ...)
{
	struct buf m;
	va_list ap;

	buf_init(&m);
	va_start(ap, fmt);
	buf_vprintf(&m, fmt, ap);
	va_end(ap);
	log_warnx("personapack %s/%s: %s", p->ns, p->name, buf_str(&m));
	if (p->reason == NULL) {
		p->reason = reason;
	}
	p->transient |= transient;
	if (p->errs.len + m.len + 2 < ERRS_MAX) {
		if (p->errs.len > 0) {
			buf_puts(&p->errs, "; ");
		}
		buf_puts(&p->errs, buf_str(&m));
	}
	buf_fini(&m);
}

/* A write of the pack-owned objects: Conflict is tolerated, because the
 * newer version's watch event triggers another pass anyway. */
static void
write_tol(struct pass *p, json_object *w, unsigned tolerate)
{
	ipc_write_set_tolerate(w, tolerate);
	rec_write(p->out, w);
}

static void
update(struct pass *p, const struct ipc_res *res, json_object *obj)
{
	json_object *w = ipc_write_new(
	        IPC_OP_UPDATE, res, p->ns, kobj_name(obj), obj);

	write_tol(p, w, IPC_TOL_CONFLICT);
}

static void
patch_pack(struct pass *p, json_object *patch, unsigned tolerate)
{
	json_object *w = ipc_write_patch_new(
	        &kobj_personapacks, p->ns, p->name, patch, IPC_PATCH_MERGE);

	write_tol(p, w, tolerate);
	p->wrote_pack = true;
}

/* view_get in the pack's namespace: 0 (*out: caller puts), 1 absent, -1
 * error with a message in err. */
static int
fetch(struct pass *p, const struct ipc_res *res, const char *name,
        json_object **out, char *err, size_t len)
{
	*out = NULL;
	if (p->in->view == NULL) {
		snprintf(err, len, "no view to read %s", res->plural);
		return (-1);
	}
	return (view_get(p->in->view, res, p->ns, name, out, err, len));
}

/*
 * An object of a stamped name that nobody owns is taken over as upstream
 * does, by the patch of contract.h's CONTRACT_OWN_ORPHAN (its controller
 * reference and the pack label); the pass after it syncs the object as
 * its own.  0 when the patch was written.
 */
static int
adopt(struct pass *p, const char *kind, const struct ipc_res *res,
        json_object *obj)
{
	if (kobj_adopt_orphan(p->out, res, obj, p->pack,
	            CONTRACT_LABEL_PERSONA_PACK, p->name)
	        < 0) {
		return (-1);
	}
	log_info("personapack %s/%s: adopting %s %s, which has no owner",
	        p->ns, p->name, kind, kobj_name(obj));
	return (0);
}

/*
 * The object of that kind and name the pack controls: from the children,
 * else read live (the children may lag behind our own writes).  0: *obj
 * (caller puts); 1: absent; 2: it had no owner and its adoption was
 * written (*obj NULL); -1: a persona error was recorded (read failure, or
 * an object of that name another owner has).
 */
static int
locate(struct pass *p, const char *kind, const struct ipc_res *res,
        const char *name, json_object **obj)
{
	json_object *c = kobj_child(p->in->children, kind, name);
	char err[256];
	int rc = 0;

	if (c != NULL) {
		*obj = json_object_get(c);
	} else if ((rc = fetch(p, res, name, obj, err, sizeof(err))) < 0) {
		fail(p, true, "ReadFailed", "cannot read %s %s: %s", kind,
		        name, err);
		return (-1);
	}
	if (rc != 0 || kobj_owned_by(*obj, p->pack)) {
		return (rc);
	}
	rc = !terminating(*obj) && adopt(p, kind, res, *obj) == 0 ? 2 : -1;
	if (rc < 0) {
		fail(p, true, "NameConflict",
		        "%s %s exists and is not controlled by PersonaPack %s",
		        kind, name, p->name);
	}
	json_object_put(*obj);
	*obj = NULL;
	return (rc);
}

static void
delete_child(struct pass *p, const char *kind, const struct ipc_res *res,
        const char *name)
{
	json_object *c = kobj_child(p->in->children, kind, name);

	if (c != NULL && !terminating(c)) {
		kobj_delete(p->out, res, p->ns, name, true);
	}
}

/* Deletes ConfigMap name when it exists.  Returns -1 when it cannot be
 * read. */
static int
delete_cm(struct pass *p, const char *name)
{
	json_object *cm = NULL;
	char err[256];
	int rc = fetch(p, &kobj_configmaps, name, &cm, err, sizeof(err));

	if (rc < 0) {
		log_warnx("personapack %s/%s: cannot read ConfigMap %s: %s",
		        p->ns, p->name, name, err);
		return (-1);
	}
	/* not upstream: only its own (the write policy's rule) */
	if (rc == 0 && !terminating(cm) && kobj_owned_by(cm, p->pack)) {
		kobj_delete(p->out, &kobj_configmaps, p->ns, name, true);
	}
	json_object_put(cm);
	return (0);
}

/* ---- personas ---- */

/* Lower-case alphanumerics, '-' and '.', starting and ending with an
 * alphanumeric: valid in object names and label values. */
static bool
name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || !isalnum((unsigned char)s[0])
	        || !isalnum((unsigned char)s[n - 1])) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		if (!islower((unsigned char)s[i])
		        && !isdigit((unsigned char)s[i]) && s[i] != '-'
		        && s[i] != '.') {
			return (false);
		}
	}
	return (true);
}

/* Fills ps from spec.personas[idx].  Returns -1 with a message in msg when
 * it cannot name its objects. */
static int
persona_init(struct pass *p, json_object *o, size_t idx, struct persona *ps,
        char *msg, size_t len)
{
	memset(ps, 0, sizeof(*ps));
	ps->o = o;
	ps->idx = idx;
	ps->name = str(o, "name");
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(msg, len, "personas[%zu] is not an object", idx);
		return (-1);
	}
	if (!name_ok(ps->name)) {
		snprintf(msg, len,
		        "persona name \"%.64s\" is not a lower-case DNS name",
		        ps->name);
		return (-1);
	}
	if (strlen(p->name) + 1 + strlen(ps->name) > NAME_MAX_LEN) {
		snprintf(msg, len,
		        "instance name %s-%s is longer than %d characters",
		        p->name, ps->name, NAME_MAX_LEN);
		return (-1);
	}
	if (snprintf(ps->inst, sizeof(ps->inst), "%s-%s", p->name, ps->name)
	        < 0) {
		return (-1);
	}
	snprintf(ps->sched, sizeof(ps->sched), "%s-schedule", ps->inst);
	snprintf(ps->cm, sizeof(ps->cm), "%s-memory", ps->inst);
	return (0);
}

static json_object *
personas(struct pass *p)
{
	return (jx_get(p->spec, "personas"));
}

/* Runs fn on every persona with a valid name, once per name. */
static void
each_named(struct pass *p, void (*fn)(struct pass *, struct persona *))
{
	json_object *list = personas(p);
	json_object *seen = json_object_new_array();
	struct persona ps;
	char msg[256];

	for (size_t i = 0; i < jx_array_len(list); i++) {
		json_object *o = json_object_array_get_idx(list, i);
		if (persona_init(p, o, i, &ps, msg, sizeof(msg)) == 0
		        && !in_list(seen, ps.name)) {
			json_object_array_add(
			        seen, json_object_new_string(ps.name));
			fn(p, &ps);
		}
	}
	json_object_put(seen);
}

/* ---- the instance (spec 3.3 "Instance") ---- */

static json_object *
auth_refs(json_object *refs)
{
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(refs); i++) {
		json_object *r = json_object_array_get_idx(refs, i);
		json_object *o = json_object_new_object();
		put_opt(o, "provider", str(r, "provider"));
		put_str(o, "secret", str(r, "secret"));
		json_object_array_add(out, o);
	}
	return (out);
}

static bool
auth_equal(json_object *a, json_object *b)
{
	if (jx_array_len(a) != jx_array_len(b)) {
		return (false);
	}
	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *x = json_object_array_get_idx(a, i);
		json_object *y = json_object_array_get_idx(b, i);
		if (strcmp(str(x, "provider"), str(y, "provider")) != 0
		        || strcmp(str(x, "secret"), str(y, "secret")) != 0) {
			return (false);
		}
	}
	return (true);
}

static const char *
env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return (v != NULL && v[0] != '\0' ? v : def);
}

/* [PERIPH] the default observability of a stamped instance. */
static json_object *
observability(void)
{
	const char *en = getenv("SYMPOZIUM_DEFAULT_OTEL_ENABLED");
	json_object *o = json_object_new_object();
	json_object *attrs = json_object_new_object();

	json_object_object_add(o, "enabled",
	        json_object_new_boolean(
	                en != NULL && strcasecmp(en, "true") == 0));
	put_str(o, "otlpEndpoint",
	        env_or("SYMPOZIUM_DEFAULT_OTEL_ENDPOINT",
	                "sympozium-otel-collector.sympozium-system.svc:4317"));
	put_str(o, "otlpProtocol",
	        env_or("SYMPOZIUM_DEFAULT_OTEL_PROTOCOL", "grpc"));
	put_str(o, "serviceName",
	        env_or("SYMPOZIUM_DEFAULT_OTEL_SERVICE_NAME", "sympozium"));
	put_str(attrs, "deployment.environment", "cluster");
	put_str(attrs, "k8s.cluster.name", "unknown");
	json_object_object_add(o, "resourceAttributes", attrs);
	return (o);
}

static json_object *
skill_ref(const char *name, json_object *params)
{
	json_object *r = json_object_new_object();

	put_str(r, "skillPackRef", name);
	if (params != NULL && json_object_is_type(params, json_type_object)
	        && json_object_object_length(params) > 0) {
		json_object_object_add(r, "params", jx_copy(params));
	}
	return (r);
}

static json_object *
build_skills(struct pass *p, struct persona *ps)
{
	json_object *skills = jx_get(ps->o, "skills");
	json_object *out = json_object_new_array();
	json_object *params = NULL;
	bool memory = false, web = false;

	for (size_t i = 0; i < jx_array_len(skills); i++) {
		json_object *s = json_object_array_get_idx(skills, i);
		const char *n = json_object_is_type(s, json_type_string)
		        ? json_object_get_string(s)
		        : "";
		if (n[0] == '\0' || strcmp(n, "mcp-bridge") == 0) {
			continue;
		}
		memory |= strcmp(n, "memory") == 0;
		json_object_array_add(out,
		        skill_ref(
		                n, jx_getv(p->spec, "skillParams", n, NULL)));
	}
	if (!memory) {
		json_object_array_add(out, skill_ref("memory", NULL));
	}
	if (jx_get_bool(ps->o, "webEndpoint.enabled", &web) == 0 && web) {
		params = json_object_new_object();
		put_opt(params, "hostname",
		        jx_get_str(ps->o, "webEndpoint.hostname"));
		json_object_array_add(out, skill_ref("web-endpoint", params));
		json_object_put(params);
	}
	return (out);
}

static json_object *
build_channels(struct pass *p, struct persona *ps)
{
	json_object *types = jx_get(ps->o, "channels");
	json_object *out = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(types); i++) {
		json_object *t = json_object_array_get_idx(types, i);
		const char *type = json_object_is_type(t, json_type_string)
		        ? json_object_get_string(t)
		        : "";
		json_object *cfg
		        = jx_getv(p->spec, "channelConfigs", type, NULL);
		json_object *acl
		        = jx_getv(p->spec, "channelAccessControl", type, NULL);
		json_object *ch = json_object_new_object();
		put_str(ch, "type", type);
		if (cfg != NULL && json_object_is_type(cfg, json_type_string)
		        && json_object_get_string_len(cfg) > 0) {
			json_object *ref = json_object_new_object();
			put_str(ref, "secret", json_object_get_string(cfg));
			json_object_object_add(ch, "configRef", ref);
		}
		if (acl != NULL) {
			json_object_object_add(
			        ch, "accessControl", jx_copy(acl));
		}
		json_object_array_add(out, ch);
	}
	return (out);
}

static json_object *
build_memory(struct persona *ps)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "enabled", json_object_new_boolean(1));
	json_object_object_add(m, "maxSizeKB", json_object_new_int(256));
	put_opt(m, "systemPrompt", str(ps->o, "systemPrompt"));
	return (m);
}

static json_object *
build_agent(struct pass *p, struct persona *ps)
{
	json_object *a = json_object_new_object();
	const char *model = str(ps->o, "model");
	json_object *sandbox = jx_get(p->spec, "agentSandbox");
	json_object *lifecycle = jx_get(ps->o, "lifecycle");

	put_str(a, "model", model[0] != '\0' ? model : "gpt-4o");
	put_opt(a, "baseURL", str(p->spec, "baseURL"));
	if (sandbox != NULL) {
		json_object_object_add(a, "agentSandbox", jx_copy(sandbox));
	}
	if (lifecycle != NULL) {
		json_object_object_add(a, "lifecycle", jx_copy(lifecycle));
	}
	return (a);
}

/* buildInstance: the new instance of a persona. */
static json_object *
build_instance(struct pass *p, struct persona *ps)
{
	json_object *o = kobj_new(API, K_INSTANCE, p->ns, ps->inst);
	json_object *spec = json_object_new_object();
	json_object *agents = json_object_new_object();
	json_object *chans = build_channels(p, ps);

	kobj_set_label(o, CONTRACT_LABEL_PERSONA_PACK, p->name);
	kobj_set_label(o, CONTRACT_LABEL_PERSONA, ps->name);
	kobj_set_owner(o, p->pack);
	json_object_object_add(agents, "default", build_agent(p, ps));
	json_object_object_add(spec, "agents", agents);
	if (jx_array_len(jx_get(p->spec, "authRefs")) > 0) {
		json_object_object_add(spec, "authRefs",
		        auth_refs(jx_get(p->spec, "authRefs")));
	}
	json_object_object_add(spec, "memory", build_memory(ps));
	json_object_object_add(spec, "observability", observability());
	json_object_object_add(spec, "skills", build_skills(p, ps));
	if (jx_array_len(chans) > 0) {
		json_object_object_add(spec, "channels", chans);
	} else {
		json_object_put(chans);
	}
	put_opt(spec, "policyRef", str(p->spec, "policyRef"));
	json_object_object_add(o, "spec", spec);
	return (o);
}

/* Whether the channel types of chans and the persona's types are the same
 * set. */
static bool
same_types(json_object *chans, json_object *types)
{
	json_object *have = json_object_new_array();
	bool same = true;

	for (size_t i = 0; i < jx_array_len(chans); i++) {
		const char *t
		        = str(json_object_array_get_idx(chans, i), "type");
		json_object_array_add(have, json_object_new_string(t));
		same &= in_list(types, t);
	}
	for (size_t i = 0; same && i < jx_array_len(types); i++) {
		json_object *t = json_object_array_get_idx(types, i);
		same &= json_object_is_type(t, json_type_string)
		        && in_list(have, json_object_get_string(t));
	}
	json_object_put(have);
	return (same);
}

/* Step 6: channel secrets from channelConfigs. */
static bool
sync_channel_secrets(struct pass *p, json_object *spec)
{
	json_object *chans = jx_get(spec, "channels");
	bool changed = false;

	for (size_t i = 0; i < jx_array_len(chans); i++) {
		json_object *ch = json_object_array_get_idx(chans, i);
		json_object *cfg = jx_getv(
		        p->spec, "channelConfigs", str(ch, "type"), NULL);
		if (cfg == NULL || !json_object_is_type(cfg, json_type_string)
		        || json_object_get_string_len(cfg) == 0
		        || !json_object_is_type(ch, json_type_object)
		        || strcmp(str(jx_get(ch, "configRef"), "secret"),
		                   json_object_get_string(cfg))
		                == 0) {
			continue;
		}
		put_str(obj_at(ch, "configRef"), "secret",
		        json_object_get_string(cfg));
		changed = true;
	}
	return (changed);
}

/* Steps 4 and 5: memory and the channel list. */
static bool
sync_memory_channels(struct pass *p, struct persona *ps, json_object *spec)
{
	json_object *mem = json_object_object_get(spec, "memory");
	json_object *types = jx_get(ps->o, "channels");
	const char *prompt = str(ps->o, "systemPrompt");
	bool changed = false;

	if (mem == NULL || !json_object_is_type(mem, json_type_object)) {
		mem = json_object_new_object();
		json_object_object_add(
		        mem, "enabled", json_object_new_boolean(1));
		json_object_object_add(
		        mem, "maxSizeKB", json_object_new_int(256));
		json_object_object_add(spec, "memory", mem);
		changed = true;
	}
	if (strcmp(str(mem, "systemPrompt"), prompt) != 0) {
		put_opt(mem, "systemPrompt", prompt);
		changed = true;
	}
	if (jx_array_len(types) > 0
	        && !same_types(jx_get(spec, "channels"), types)) {
		json_object_object_add(
		        spec, "channels", build_channels(p, ps));
		changed = true;
	}
	return (changed);
}

/* The pack-owned fields of an existing instance (spec 3.3 "Present").
 * Returns whether inst changed. */
static bool
sync_instance(struct pass *p, struct persona *ps, json_object *inst)
{
	json_object *spec = obj_at(inst, "spec");
	json_object *def = obj_at(obj_at(spec, "agents"), "default");
	json_object *refs = jx_get(p->spec, "authRefs");
	const char *model = str(ps->o, "model");
	const char *url = str(p->spec, "baseURL");
	bool changed = false;

	if (!auth_equal(jx_get(spec, "authRefs"), refs)) {
		if (jx_array_len(refs) > 0) {
			json_object_object_add(
			        spec, "authRefs", auth_refs(refs));
		} else {
			json_object_object_del(spec, "authRefs");
		}
		changed = true;
	}
	if (model[0] != '\0' && strcmp(str(def, "model"), model) != 0) {
		put_str(def, "model", model);
		changed = true;
	}
	if (strcmp(str(def, "baseURL"), url) != 0) {
		put_opt(def, "baseURL", url);
		changed = true;
	}
	changed |= sync_memory_channels(p, ps, spec);
	changed |= sync_channel_secrets(p, spec);
	return (changed);
}

/* cur: the instance as it is (NULL: absent). */
static void
ensure_instance(struct pass *p, struct persona *ps, json_object *cur)
{
	json_object *upd;

	if (cur == NULL) {
		kobj_create(
		        p->out, &kobj_instances, build_instance(p, ps), false);
		return;
	}
	if (terminating(cur)) {
		return;
	}
	upd = jx_copy_strip(cur, "status", "metadata.managedFields", NULL);
	if (sync_instance(p, ps, upd)) {
		update(p, &kobj_instances, upd);
	} else {
		json_object_put(upd);
	}
}

/* ---- seeds and schedule ---- */

/* Memory seeds: created once, never overwritten; errors logged only. */
static void
ensure_seeds(struct pass *p, struct persona *ps)
{
	json_object *seeds = jx_get(ps->o, "memory.seeds");
	json_object *cm = NULL;
	struct buf md;
	char err[256];
	int rc;

	if (jx_array_len(seeds) == 0) {
		return;
	}
	rc = fetch(p, &kobj_configmaps, ps->cm, &cm, err, sizeof(err));
	json_object_put(cm);
	if (rc < 0) {
		log_warnx("personapack %s/%s: seeds of %s: %s", p->ns, p->name,
		        ps->name, err);
	}
	if (rc != 1) {
		return;
	}
	buf_init(&md);
	buf_puts(&md, "# Memory\n\n");
	for (size_t i = 0; i < jx_array_len(seeds); i++) {
		json_object *s = json_object_array_get_idx(seeds, i);
		if (json_object_is_type(s, json_type_string)) {
			buf_printf(&md, "- %s\n", json_object_get_string(s));
		}
	}
	cm = kobj_new("v1", "ConfigMap", p->ns, ps->cm);
	/* not upstream (no owner there): the write policy lets a pack
	 * delete only the objects it controls */
	kobj_set_owner(cm, p->pack);
	kobj_set_label(cm, CONTRACT_LABEL_PERSONA_PACK, p->name);
	kobj_set_label(cm, CONTRACT_LABEL_PERSONA, ps->name);
	kobj_set_label(cm, CONTRACT_LABEL_MEMORY, "true");
	jx_setv(cm, json_object_new_string(buf_str(&md)), "data", "MEMORY.md",
	        NULL);
	buf_fini(&md);
	kobj_create(p->out, &kobj_configmaps, cm, true);
}

static json_object *
schedule_spec(struct pass *p, struct persona *ps, json_object *sch)
{
	json_object *s = json_object_new_object();
	const char *over = str(p->spec, "taskOverride");
	const char *type = str(sch, "type");
	char *cron = personapack_cron(
	        str(sch, "cron"), str(sch, "interval"), ps->idx);

	put_str(s, "instanceRef", ps->inst);
	put_str(s, "schedule", cron);
	free(cron);
	if (over[0] != '\0') {
		char *t = xasprintf("TEAM OBJECTIVE: %s\n\nYOUR ROLE TASK: %s",
		        over, str(sch, "task"));
		put_str(s, "task", t);
		free(t);
	} else {
		put_str(s, "task", str(sch, "task"));
	}
	put_str(s, "type", type[0] != '\0' ? type : "heartbeat");
	put_str(s, "concurrencyPolicy", "Forbid");
	json_object_object_add(s, "includeMemory", json_object_new_boolean(1));
	/* suspend false is left out, as upstream's omitempty does */
	return (s);
}

/* Whether the schedule's spec have equals want, an absent suspend and
 * false being the same value (upstream compares the typed specs). */
static bool
schedule_spec_equal(json_object *have, json_object *want)
{
	json_object *h = jx_copy(have);
	bool susp = true, eq;

	if (json_object_is_type(h, json_type_object)
	        && jx_get_bool(h, "suspend", &susp) == 0 && !susp) {
		json_object_object_del(h, "suspend");
	}
	eq = jx_equal(h, want);
	json_object_put(h);
	return (eq);
}

/* Replaces a drifted spec, restores the labels.  spec taken. */
static void
resync_schedule(struct pass *p, struct persona *ps, json_object *cur,
        json_object *spec)
{
	json_object *upd
	        = jx_copy_strip(cur, "status", "metadata.managedFields", NULL);
	const char *pk = kobj_label(upd, CONTRACT_LABEL_PERSONA_PACK);
	const char *pe = kobj_label(upd, CONTRACT_LABEL_PERSONA);
	bool changed = !schedule_spec_equal(
	        json_object_object_get(upd, "spec"), spec);

	changed |= pk == NULL || strcmp(pk, p->name) != 0;
	changed |= pe == NULL || strcmp(pe, ps->name) != 0;
	json_object_object_add(upd, "spec", spec);
	kobj_set_label(upd, CONTRACT_LABEL_PERSONA_PACK, p->name);
	kobj_set_label(upd, CONTRACT_LABEL_PERSONA, ps->name);
	if (changed) {
		update(p, &kobj_schedules, upd);
	} else {
		json_object_put(upd);
	}
}

/* Returns -1 when the schedule cannot be reconciled (error recorded). */
static int
ensure_schedule(struct pass *p, struct persona *ps)
{
	json_object *sch = jx_get(ps->o, "schedule");
	json_object *cur = NULL, *spec, *o;
	int rc;

	if (sch == NULL || !json_object_is_type(sch, json_type_object)) {
		delete_child(p, K_SCHEDULE, &kobj_schedules, ps->sched);
		return (0);
	}
	rc = locate(p, K_SCHEDULE, &kobj_schedules, ps->sched, &cur);
	if (rc < 0) {
		return (-1);
	}
	if (rc == 2) { /* synced by the pass its adoption triggers */
		return (0);
	}
	spec = schedule_spec(p, ps, sch);
	if (rc == 1) {
		o = kobj_new(API, K_SCHEDULE, p->ns, ps->sched);
		kobj_set_label(o, CONTRACT_LABEL_PERSONA_PACK, p->name);
		kobj_set_label(o, CONTRACT_LABEL_PERSONA, ps->name);
		kobj_set_owner(o, p->pack);
		json_object_object_add(o, "spec", spec);
		kobj_create(p->out, &kobj_schedules, o, false);
	} else if (!terminating(cur)) {
		resync_schedule(p, ps, cur, spec);
	} else {
		json_object_put(spec);
	}
	json_object_put(cur);
	return (0);
}

/* reconcilePersona: 0 when installed. */
static int
reconcile_persona(struct pass *p, struct persona *ps)
{
	json_object *cur = NULL;
	int rc = locate(p, K_INSTANCE, &kobj_instances, ps->inst, &cur);

	if (rc < 0) {
		return (-1);
	}
	/* The seeds go first so that they win over the instance
	 * controller's default memory ConfigMap of the same name. */
	ensure_seeds(p, ps);
	if (rc != 2) { /* else synced by the pass its adoption triggers */
		ensure_instance(p, ps, cur);
	}
	json_object_put(cur);
	return (ensure_schedule(p, ps));
}

/* cleanupPersona: the persona's stamps and its memory ConfigMap. */
static void
cleanup_persona(struct pass *p, struct persona *ps)
{
	delete_child(p, K_INSTANCE, &kobj_instances, ps->inst);
	delete_child(p, K_SCHEDULE, &kobj_schedules, ps->sched);
	delete_cm(p, ps->cm);
}

static void
cleanup_cm(struct pass *p, struct persona *ps)
{
	delete_cm(p, ps->cm);
}

/* ---- status ---- */

/* The Ready condition is written only while the phase is Error (reason
 * and message of the persona errors) and removed otherwise; other
 * conditions are kept. */
static void
ready_condition(struct pass *p, json_object *st, bool error)
{
	json_object *conds = jx_get(st, "conditions");
	json_object *out = json_object_new_array();
	json_object *old = NULL, *c;
	char ts[TIMEFMT_RFC3339_LEN];
	int64_t gen;

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		c = json_object_array_get_idx(conds, i);
		if (strcmp(str(c, "type"), "Ready") == 0) {
			old = c;
		} else {
			json_object_array_add(out, json_object_get(c));
		}
	}
	if (old == NULL && !error) {
		json_object_put(out);
		return;
	}
	if (error) {
		c = json_object_new_object();
		put_str(c, "type", "Ready");
		put_str(c, "status", "False");
		put_str(c, "reason", p->reason != NULL ? p->reason : "Error");
		put_str(c, "message", buf_str(&p->errs));
		if (strcmp(str(old, "status"), "False") == 0
		        && str(old, "lastTransitionTime")[0] != '\0') {
			put_str(c, "lastTransitionTime",
			        str(old, "lastTransitionTime"));
		} else {
			timefmt_rfc3339(p->in->now_ms / 1000, ts);
			put_str(c, "lastTransitionTime", ts);
		}
		if (jx_get_int(p->pack, "metadata.generation", &gen) == 0) {
			json_object_object_add(c, "observedGeneration",
			        json_object_new_int64(gen));
		}
		json_object_array_add(out, c);
	}
	if (jx_array_len(out) > 0) {
		json_object_object_add(st, "conditions", out);
	} else {
		json_object_object_del(st, "conditions");
		json_object_put(out);
	}
}

/* Writes the status when it differs from the cached one.  installed
 * taken (NULL: none). */
/* A status count, left out when 0 (upstream's omitempty); a 0 already
 * there (as we used to write it) is kept, the same value. */
static void
put_count(json_object *st, const char *key, size_t n)
{
	int64_t have = -1;

	if (n > 0) {
		json_object_object_add(
		        st, key, json_object_new_int64((int64_t)n));
	} else if (jx_get_int(st, key, &have) != 0 || have != 0) {
		json_object_object_del(st, key);
	}
}

static void
write_status(struct pass *p, const char *phase, json_object *installed)
{
	json_object *cur = jx_get(p->pack, "status");
	json_object *st = json_object_is_type(cur, json_type_object)
	        ? jx_copy(cur)
	        : json_object_new_object();
	json_object *obj, *w;
	bool shm = true;

	put_str(st, "phase", phase);
	put_count(st, "personaCount", jx_array_len(personas(p)));
	put_count(st, "installedCount", jx_array_len(installed));
	if (jx_array_len(installed) > 0) {
		json_object_object_add(st, "installedPersonas", installed);
	} else {
		json_object_object_del(st, "installedPersonas");
		json_object_put(installed);
	}
	/* false is omitted (upstream's omitempty), or kept when already
	 * there as false */
	if (p->shm_ready) {
		json_object_object_add(
		        st, "sharedMemoryReady", json_object_new_boolean(1));
	} else if (jx_get_bool(st, "sharedMemoryReady", &shm) != 0 || shm) {
		json_object_object_del(st, "sharedMemoryReady");
	}
	ready_condition(p, st, strcmp(phase, "Error") == 0);
	/* After a write to the pack itself the cached resourceVersion is
	 * stale: that write's watch event brings the next pass. */
	if (jx_equal(st, cur) || p->wrote_pack) {
		json_object_put(st);
		return;
	}
	obj = jx_copy_strip(p->pack, "status", "metadata.managedFields", NULL);
	json_object_object_add(obj, "status", st);
	w = ipc_write_new(
	        IPC_OP_UPDATE_STATUS, &kobj_personapacks, p->ns, p->name, obj);
	write_tol(p, w, IPC_TOL_CONFLICT);
	kobj_status_event(p->out, p->pack, st);
}

/* ---- the three paths ---- */

static bool
has_finalizer(struct pass *p)
{
	return (kobj_has_finalizer(p->pack, CONTRACT_FINALIZER_PERSONAPACK));
}

/* Adds or removes our finalizer with a merge patch conditioned on the
 * cached resourceVersion (as Update would be). */
static void
patch_finalizers(struct pass *p, bool add)
{
	json_object *patch = kobj_finalizer_patch(p->pack,
	        CONTRACT_FINALIZER_PERSONAPACK,
	        (add ? KOBJ_FIN_ADD : 0) | KOBJ_FIN_RV | KOBJ_FIN_NULL_EMPTY);

	patch_pack(p, patch, IPC_TOL_CONFLICT | (add ? 0 : IPC_TOL_NOT_FOUND));
}

/* Deletion: the seed ConfigMaps, then the finalizer. */
static void
deleting(struct pass *p)
{
	json_object *list = personas(p);
	struct persona ps;
	char msg[256];

	if (!has_finalizer(p)) {
		rec_verdict(p->out, IPC_V_DONE, 0, NULL);
		return;
	}
	ppshm_cleanup(p->in, p->out);
	for (size_t i = 0; i < jx_array_len(list); i++) {
		if (persona_init(p, json_object_array_get_idx(list, i), i, &ps,
		            msg, sizeof(msg))
		                == 0
		        && delete_cm(p, ps.cm) < 0) {
			rec_verdict(p->out, IPC_V_ERROR, 0,
			        "cannot read ConfigMap %s", ps.cm);
			return;
		}
	}
	patch_finalizers(p, false);
	rec_verdict(p->out, IPC_V_DONE, 0, NULL);
}

/* Whether a Secret named name looks managed by the pack. */
static bool
managed_secret(struct pass *p, const char *name, json_object *meta)
{
	const char *l = kobj_label(meta, CONTRACT_LABEL_PERSONA_PACK);
	size_t np = strlen(p->name), n = strlen(name);
	char *cred = xasprintf("%s-credentials", p->name);
	bool yes = (l != NULL && strcmp(l, p->name) == 0)
	        || strcmp(name, cred) == 0
	        || (n > np && strncmp(name, p->name, np) == 0
	                && name[np] == '-' && n >= 4
	                && strcmp(name + n - 4, "-key") == 0);

	free(cred);
	return (yes);
}

/* Deletes the managed auth Secrets.  Returns -1 when one cannot be
 * read. */
static int
delete_auth_secrets(struct pass *p)
{
	json_object *refs = jx_get(p->spec, "authRefs");
	json_object *seen = json_object_new_array();
	json_object *meta;
	char err[256];
	int rc, ret = 0;

	for (size_t i = 0; i < jx_array_len(refs); i++) {
		const char *s
		        = str(json_object_array_get_idx(refs, i), "secret");
		if (s[0] == '\0' || in_list(seen, s)) {
			continue;
		}
		json_object_array_add(seen, json_object_new_string(s));
		meta = NULL;
		rc = p->in->view == NULL ? -1
		                         : view_secret_meta(p->in->view, p->ns,
		                                 s, &meta, err, sizeof(err));
		if (rc < 0) {
			log_warnx(
			        "personapack %s/%s: cannot read Secret %s: %s",
			        p->ns, p->name, s,
			        p->in->view ? err : "no view");
			ret = -1;
		} else if (rc == 0 && managed_secret(p, s, meta)) {
			kobj_delete(p->out, &kobj_secrets, p->ns, s, true);
		}
		json_object_put(meta);
	}
	json_object_put(seen);
	return (ret);
}

/* Deletes every instance and schedule the pack controls; returns how many
 * are still there. */
static size_t
teardown_children(struct pass *p)
{
	json_object *ch = p->in->children;
	size_t left = 0;

	for (size_t i = 0; i < jx_array_len(ch); i++) {
		json_object *c = json_object_array_get_idx(ch, i);
		const char *kind = str(c, "kind");
		bool inst = strcmp(kind, K_INSTANCE) == 0;
		if (!inst && strcmp(kind, K_SCHEDULE) != 0) {
			continue;
		}
		left++;
		if (!terminating(c)) {
			kobj_delete(p->out,
			        inst ? &kobj_instances : &kobj_schedules,
			        p->ns, kobj_name(c), true);
		}
	}
	return (left);
}

/* spec.enabled false: catalog only. */
static void
disabled_pack(struct pass *p)
{
	size_t left = teardown_children(p);
	int rc = 0;

	each_named(p, cleanup_cm);
	if (left > 0) {
		rec_verdict(p->out, IPC_V_REQUEUE_AFTER, TEARDOWN_MS,
		        "waiting for %zu stamped objects to go", left);
		return;
	}
	if (jx_array_len(jx_get(p->spec, "authRefs")) > 0) {
		rc = delete_auth_secrets(p);
		if (rc == 0) {
			json_object *patch = json_object_new_object();
			jx_setv(patch, NULL, "spec", "authRefs", NULL);
			patch_pack(p, patch, IPC_TOL_NOT_FOUND);
		}
	}
	ppshm_cleanup(p->in, p->out);
	p->shm_ready = false;
	write_status(p, "Inactive", NULL);
	if (rc < 0) {
		rec_verdict(p->out, IPC_V_ERROR, 0,
		        "cannot read the auth Secrets");
	} else {
		rec_verdict(p->out, IPC_V_DONE, 0, NULL);
	}
}

static json_object *
installed_entry(struct persona *ps)
{
	json_object *e = json_object_new_object();

	put_str(e, "name", ps->name);
	put_str(e, "instanceName", ps->inst);
	if (jx_get(ps->o, "schedule") != NULL) {
		put_str(e, "scheduleName", ps->sched);
	}
	return (e);
}

/* One persona of an enabled pack; adds it to installed when it is. */
static void
enabled_persona(struct pass *p, json_object *o, size_t i, json_object *seen,
        json_object *installed)
{
	json_object *excl = jx_get(p->spec, "excludePersonas");
	struct persona ps;
	char msg[256];
	int rc = persona_init(p, o, i, &ps, msg, sizeof(msg));

	if (in_list(excl, ps.name)) {
		if (rc == 0) {
			cleanup_persona(p, &ps);
		}
		return;
	}
	if (rc < 0) {
		fail(p, false, "InvalidPersona", "%s", msg);
		return;
	}
	if (in_list(seen, ps.name)) {
		fail(p, false, "InvalidPersona",
		        "persona %s is listed more than once", ps.name);
		return;
	}
	json_object_array_add(seen, json_object_new_string(ps.name));
	if (reconcile_persona(p, &ps) == 0) {
		json_object_array_add(installed, installed_entry(&ps));
	}
}

/* Step 6: the shared memory server; its error is remembered. */
static void
shared_memory(struct pass *p)
{
	struct ppshm r;

	ppshm_reconcile(p->in, p->out, &r);
	p->shm_ready = r.ready;
	if (r.reason != NULL) {
		fail(p, r.transient, r.reason, "%s", r.msg);
	}
}

static void
enabled_pack(struct pass *p)
{
	json_object *list = personas(p);
	json_object *seen = json_object_new_array();
	json_object *installed = json_object_new_array();

	for (size_t i = 0; i < jx_array_len(list); i++) {
		enabled_persona(p, json_object_array_get_idx(list, i), i, seen,
		        installed);
	}
	json_object_put(seen);
	shared_memory(p);
	write_status(p, p->errs.len > 0 ? "Error" : "Ready", installed);
	if (p->transient) {
		rec_verdict(p->out, IPC_V_ERROR, 0, "%s", buf_str(&p->errs));
	} else if (p->errs.len > 0) {
		rec_verdict(p->out, IPC_V_DONE, 0, "%s", buf_str(&p->errs));
	} else {
		rec_verdict(p->out, IPC_V_DONE, 0, NULL);
	}
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	struct pass p = { .in = in, .out = out, .pack = in->object };
	bool enabled = false;

	if (in->object == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	p.spec = jx_get(in->object, "spec");
	p.ns = kobj_ns(in->object);
	p.name = kobj_name(in->object);
	buf_init(&p.errs);
	if (terminating(in->object)) {
		deleting(&p);
	} else {
		if (!has_finalizer(&p)) {
			patch_finalizers(&p, true);
		}
		jx_get_bool(p.spec, "enabled", &enabled);
		if (enabled) {
			enabled_pack(&p);
		} else {
			disabled_pack(&p);
		}
	}
	buf_fini(&p.errs);
}

const struct reconciler personapack_reconciler = { "personapack", reconcile };
