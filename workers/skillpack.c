/*
 * skillpack.c: the SkillPack reconciler (spec sympozium-controllers.md
 * section 4).  Owns the pack's finalizer, the ConfigMap named exactly like
 * the pack (one "<skill>.md" key per skill, labels component=skillpack and
 * skillpack=<name>) and the pack's status.  Skill names that cannot be
 * ConfigMap keys, or a pack too large for one ConfigMap, give phase
 * "Failed" with a Ready=False condition instead of a write loop.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/contract.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "common/xmalloc.h"
#include "workers/kobj.h"
#include "workers/skillpack.h"

#define API_VERSION  "sympozium.ai/v1alpha1"
#define KIND         "SkillPack"
#define CM_MAX_BYTES (1024 * 1024) /* the API server's ConfigMap limit */
#define KEY_MAX      253

/* ---- finalizer ---- */

static bool
has_finalizer(json_object *o)
{
	return (kobj_has_finalizer(o, CONTRACT_FINALIZER_SKILLPACK));
}

/* A copy of the pack to write back (apiVersion and kind set: cached list
 * items may lack them).  Caller puts. */
static json_object *
pack_copy(json_object *sp)
{
	json_object *c = jx_copy_strip(sp, "metadata.managedFields", NULL);

	json_object_object_add(
	        c, "apiVersion", json_object_new_string(API_VERSION));
	json_object_object_add(c, "kind", json_object_new_string(KIND));
	return (c);
}

/* A copy of sp with our finalizer added (add) or removed (!add). */
static json_object *
with_finalizer(json_object *sp, bool add)
{
	json_object *c = pack_copy(sp);

	jx_set_path(c, "metadata.finalizers",
	        kobj_finalizers(c, CONTRACT_FINALIZER_SKILLPACK, add));
	return (c);
}

/* ---- the ConfigMap's data ---- */

/* spec.skills when it is an array, else NULL (borrowed). */
static json_object *
skills_of(json_object *sp)
{
	json_object *s = jx_get(sp, "spec.skills");

	return (s != NULL && json_object_is_type(s, json_type_array) ? s
	                                                             : NULL);
}

static bool
valid_key(const char *k)
{
	size_t n = strlen(k);

	if (n == 0 || n > KEY_MAX) {
		return (false);
	}
	for (size_t i = 0; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		            || (c >= '0' && c <= '9') || c == '-' || c == '_'
		            || c == '.')) {
			return (false);
		}
	}
	return (true);
}

/* Adds skill s to data; -1 with a message in err when it cannot be. */
static int
add_skill(
        json_object *data, json_object *s, size_t i, char *err, size_t errlen)
{
	const char *name = jx_get_str(s, "name");
	const char *desc = jx_get_str(s, "description");
	const char *content = jx_get_str(s, "content");
	char *key, *value;

	if (name == NULL || name[0] == '\0') {
		snprintf(err, errlen, "skills[%zu] has no name", i);
		return (-1);
	}
	key = xasprintf("%s.md", name);
	if (!valid_key(key)) {
		snprintf(err, errlen,
		        "skills[%zu]: \"%.100s\" is not a valid ConfigMap key "
		        "(letters, digits, '-', '_' and '.', at most %d)",
		        i, key, KEY_MAX);
		free(key);
		return (-1);
	}
	if (desc != NULL && desc[0] != '\0') {
		value = xasprintf("# %s\n\n> %s\n\n%s", name, desc,
		        content != NULL ? content : "");
	} else {
		value = xstrdup(content != NULL ? content : "");
	}
	json_object_object_add(data, key, json_object_new_string(value));
	free(key);
	free(value);
	return (0);
}

static size_t
data_bytes(json_object *data)
{
	size_t n = 0;

	json_object_object_foreach(data, k, v)
	{
		n += strlen(k) + (size_t)json_object_get_string_len(v);
	}
	return (n);
}

/* spec 4.2 step 4: the ConfigMap data (caller puts), or NULL with a
 * message in err. */
static json_object *
build_data(json_object *skills, char *err, size_t errlen)
{
	json_object *data = json_object_new_object();
	size_t n = skills != NULL ? json_object_array_length(skills) : 0;

	for (size_t i = 0; i < n; i++) {
		if (add_skill(data, json_object_array_get_idx(skills, i), i,
		            err, errlen)
		        != 0) {
			json_object_put(data);
			return (NULL);
		}
	}
	if (data_bytes(data) > CM_MAX_BYTES) {
		snprintf(err, errlen,
		        "the skills take %zu bytes, more than a ConfigMap "
		        "holds (%d)",
		        data_bytes(data), CM_MAX_BYTES);
		json_object_put(data);
		return (NULL);
	}
	return (data);
}

/* ---- the ConfigMap ---- */

/* Our ConfigMap among the children (list items may lack "kind"). */
static json_object *
find_cm(json_object *children, const char *name)
{
	for (size_t i = 0; i < jx_array_len(children); i++) {
		json_object *c = json_object_array_get_idx(children, i);
		const char *kind = jx_get_str(c, "kind");
		if ((kind == NULL || strcmp(kind, "ConfigMap") == 0)
		        && strcmp(kobj_name(c), name) == 0) {
			return (c);
		}
	}
	return (NULL);
}

static json_object *
cm_labels(const char *name)
{
	json_object *l = json_object_new_object();

	json_object_object_add(l, CONTRACT_LABEL_COMPONENT,
	        json_object_new_string("skillpack"));
	json_object_object_add(
	        l, CONTRACT_LABEL_SKILLPACK, json_object_new_string(name));
	return (l);
}

/* spec 4.2 step 5: create the ConfigMap or replace its data and labels
 * (ownerReferences of an existing one are left alone).  data taken. */
static void
sync_cm(const struct rec_in *in, struct rec_out *out, json_object *data)
{
	const char *name = kobj_name(in->object), *ns = kobj_ns(in->object);
	json_object *cur = find_cm(in->children, name);
	json_object *labels = cm_labels(name), *cm;

	if (cur != NULL && jx_equal(jx_get(cur, "data"), data)
	        && jx_equal(jx_get(cur, "metadata.labels"), labels)) {
		json_object_put(data);
		json_object_put(labels);
		return;
	}
	if (cur == NULL) {
		json_object *owner = pack_copy(in->object);
		cm = kobj_new("v1", "ConfigMap", ns, name);
		kobj_set_owner(cm, owner);
		json_object_put(owner);
	} else {
		cm = jx_copy_strip(cur, "metadata.managedFields", NULL);
		json_object_object_add(
		        cm, "apiVersion", json_object_new_string("v1"));
		json_object_object_add(
		        cm, "kind", json_object_new_string("ConfigMap"));
	}
	jx_set_path(cm, "metadata.labels", labels);
	json_object_object_add(cm, "data", data);
	if (cur == NULL) {
		kobj_create(out, &kobj_configmaps, cm, false);
	} else {
		kobj_update(out, &kobj_configmaps, cm);
	}
}

/* ---- status ---- */

static bool
has_ready(json_object *status)
{
	json_object *conds = jx_get(status, "conditions");

	for (size_t i = 0; i < jx_array_len(conds); i++) {
		const char *t = jx_get_str(
		        json_object_array_get_idx(conds, i), "type");
		if (t != NULL && strcmp(t, "Ready") == 0) {
			return (true);
		}
	}
	return (false);
}

/* spec 4.2 step 6 (err == NULL), or the Failed status for err.  Written
 * only when it changes something. */
static void
write_status(const struct rec_in *in, struct rec_out *out, const char *err)
{
	json_object *sp = in->object, *skills = skills_of(sp);
	json_object *st = jx_copy_obj(jx_get(sp, "status"));
	int64_t gen = 0;

	jx_get_int(sp, "metadata.generation", &gen);
	json_object_object_add(st, "phase",
	        json_object_new_string(err == NULL ? "Ready" : "Failed"));
	if (err == NULL) {
		json_object_object_add(st, "configMapName",
		        json_object_new_string(kobj_name(sp)));
	}
	json_object_object_add(st, "skillCount",
	        json_object_new_int64(skills != NULL
	                        ? (int64_t)json_object_array_length(skills)
	                        : 0));
	if (err != NULL) {
		kobj_set_condition(st, "Ready", "False", "InvalidSkills", err,
		        gen, in->now_ms);
	} else if (has_ready(st)) {
		kobj_set_condition(st, "Ready", "True", "ConfigMapSynced",
		        "The skills ConfigMap is up to date", gen, in->now_ms);
	}
	if (jx_equal(st, jx_get(sp, "status"))) {
		json_object_put(st);
		return;
	}
	json_object *c = pack_copy(sp);
	json_object_object_add(c, "status", st);
	kobj_update_status(out, &kobj_skillpacks, c);
	kobj_status_event(out, sp, st);
}

/* ---- reconcile ---- */

/* spec 4.2 step 2. */
static void
finalize(const struct rec_in *in, struct rec_out *out)
{
	json_object *sp = in->object;

	if (!has_finalizer(sp)) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	/* not upstream: only a ConfigMap it controls (a child), as the
	 * write policy allows; the garbage collector takes the others */
	if (find_cm(in->children, kobj_name(sp)) != NULL) {
		kobj_delete(out, &kobj_configmaps, kobj_ns(sp), kobj_name(sp),
		        true);
	}
	kobj_update(out, &kobj_skillpacks, with_finalizer(sp, false));
	rec_verdict(
	        out, IPC_V_DONE, 0, "ConfigMap deleted, finalizer removed");
}

static void
reconcile(const struct rec_in *in, struct rec_out *out)
{
	json_object *sp = in->object, *data;
	char err[400];

	if (sp == NULL) {
		rec_verdict(out, IPC_V_DONE, 0, NULL);
		return;
	}
	if (jx_get(sp, "metadata.deletionTimestamp") != NULL) {
		finalize(in, out);
		return;
	}
	if (!has_finalizer(sp)) {
		/* the update's watch event brings us back with the new
		 * resourceVersion for the status write */
		kobj_update(out, &kobj_skillpacks, with_finalizer(sp, true));
		rec_verdict(out, IPC_V_DONE, 0, "finalizer added");
		return;
	}
	data = build_data(skills_of(sp), err, sizeof(err));
	if (data == NULL) {
		log_warnx("skillpack %s/%s: %s", kobj_ns(sp), kobj_name(sp),
		        err);
		write_status(in, out, err);
		rec_verdict(out, IPC_V_DONE, 0, "invalid: %s", err);
		return;
	}
	sync_cm(in, out, data);
	write_status(in, out, NULL);
	rec_verdict(out, IPC_V_DONE, 0, NULL);
}

const struct reconciler skillpack_reconciler = { "skillpack", reconcile };
