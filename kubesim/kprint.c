/*
 * kprint.c: the built-in kinds' server-side printers (kprint.h), cell by
 * cell as the real server's printers compute them (pod status reasons,
 * ready counts, event objects, job durations, service ports).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/timefmt.h"
#include "kubesim/kprint.h"
#include "kubesim/ktable.h"

#define AGE_DESC                                                              \
	"CreationTimestamp is a timestamp representing the server time when " \
	"this object was created."

/* ---- cells ---- */

static const char *
str(json_object *o, const char *path, const char *def)
{
	const char *s = jx_get_str(o, path);

	return (s != NULL && s[0] != '\0' ? s : def);
}

static int64_t
num(json_object *o, const char *path)
{
	int64_t v = 0;

	jx_get_int(o, path, &v);
	return (v);
}

static void
add_s(json_object *cells, const char *s)
{
	json_object_array_add(cells, json_object_new_string(s));
}

static void
add_i(json_object *cells, int64_t v)
{
	json_object_array_add(cells, json_object_new_int64(v));
}

static void add_fmt(json_object *cells, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void
add_fmt(json_object *cells, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	add_s(cells, buf_str(&b));
	buf_fini(&b);
}

/* A time field as a human age ("<unknown>" when unset or unreadable). */
static void
add_since(json_object *cells, json_object *o, const char *path, int64_t now)
{
	int64_t us;
	char h[32];
	const char *t = jx_get_str(o, path);

	if (t == NULL || timefmt_parse(t, &us) != 0) {
		add_s(cells, "<unknown>");
		return;
	}
	ktable_human(now - us / 1000000, h, sizeof(h));
	add_s(cells, h);
}

static void
add_age(json_object *cells, json_object *o, int64_t now)
{
	add_since(cells, o, "metadata.creationTimestamp", now);
}

/* "a,b" of the names (or images) of spec.containers at path. */
static void
add_list(json_object *cells, json_object *arr, const char *field)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < jx_array_len(arr); i++) {
		buf_printf(&b, "%s%s", i > 0 ? "," : "",
		        str(json_object_array_get_idx(arr, i), field, ""));
	}
	add_s(cells, b.len > 0 ? buf_str(&b) : "<none>");
	buf_fini(&b);
}

/* "k=v,k2=v2" of an object of strings, or "<none>". */
static void
add_map(json_object *cells, json_object *m)
{
	struct buf b = BUF_INIT;

	if (json_object_is_type(m, json_type_object)) {
		json_object_object_foreach(m, k, v)
		{
			buf_printf(&b, "%s%s=%s", b.len > 0 ? "," : "", k,
			        json_object_get_string(v));
		}
	}
	add_s(cells, b.len > 0 ? buf_str(&b) : "<none>");
	buf_fini(&b);
}

static json_object *
start(json_object *obj)
{
	json_object *cells = json_object_new_array();

	add_s(cells, str(obj, "metadata.name", ""));
	return (cells);
}

/* ---- per kind ---- */

/* printPod's reason: the phase or status reason, a container's waiting
 * or terminated reason (or signal, exit code), Terminating. */
static void
pod_status(json_object *pod, char *out, size_t n)
{
	json_object *cs = jx_get(pod, "status.containerStatuses");

	snprintf(out, n, "%s",
	        str(pod, "status.reason",
	                str(pod, "status.phase", "Unknown")));
	for (size_t i = jx_array_len(cs); i-- > 0;) {
		json_object *c = json_object_array_get_idx(cs, i);
		const char *w = str(c, "state.waiting.reason", NULL);
		json_object *t = jx_get(c, "state.terminated");

		if (w != NULL) {
			snprintf(out, n, "%s", w);
		} else if (t != NULL && str(t, "reason", NULL) != NULL) {
			snprintf(out, n, "%s", str(t, "reason", ""));
		} else if (t != NULL && num(t, "signal") != 0) {
			snprintf(out, n, "Signal:%" PRId64, num(t, "signal"));
		} else if (t != NULL) {
			snprintf(out, n, "ExitCode:%" PRId64,
			        num(t, "exitCode"));
		}
	}
	if (jx_get(pod, "metadata.deletionTimestamp") != NULL) {
		snprintf(out, n, "Terminating");
	}
}

static json_object *
pod_cells(json_object *pod, int64_t now)
{
	json_object *cells = start(pod);
	json_object *cs = jx_get(pod, "status.containerStatuses");
	int64_t ready = 0, restarts = 0;
	char status[128];

	for (size_t i = 0; i < jx_array_len(cs); i++) {
		json_object *c = json_object_array_get_idx(cs, i);
		bool r = false;

		jx_get_bool(c, "ready", &r);
		ready += r;
		restarts += num(c, "restartCount");
	}
	pod_status(pod, status, sizeof(status));
	add_fmt(cells, "%" PRId64 "/%zu", ready,
	        jx_array_len(jx_get(pod, "spec.containers")));
	add_s(cells, status);
	add_fmt(cells, "%" PRId64, restarts);
	add_age(cells, pod, now);
	add_s(cells, str(pod, "status.podIP", "<none>"));
	add_s(cells, str(pod, "spec.nodeName", "<none>"));
	add_s(cells, str(pod, "status.nominatedNodeName", "<none>"));
	add_s(cells, "<none>");
	return (cells);
}

static json_object *
event_cells(json_object *ev, int64_t now)
{
	json_object *cells = json_object_new_array();
	const char *last = jx_get_str(ev, "lastTimestamp") != NULL
	        ? "lastTimestamp"
	        : jx_get_str(ev, "eventTime") != NULL ? "eventTime"
	                                              : "firstTimestamp";
	char kind[128];
	size_t i;

	snprintf(kind, sizeof(kind), "%s", str(ev, "involvedObject.kind", ""));
	for (i = 0; kind[i] != '\0'; i++) {
		kind[i] = (char)tolower((unsigned char)kind[i]);
	}
	add_since(cells, ev, last, now);
	add_s(cells, str(ev, "type", ""));
	add_s(cells, str(ev, "reason", ""));
	add_fmt(cells, "%s/%s", kind, str(ev, "involvedObject.name", ""));
	add_s(cells, str(ev, "involvedObject.fieldPath", ""));
	if (jx_get_str(ev, "source.host") != NULL) {
		add_fmt(cells, "%s, %s", str(ev, "source.component", ""),
		        str(ev, "source.host", ""));
	} else {
		add_s(cells,
		        str(ev, "source.component",
		                str(ev, "reportingComponent", "")));
	}
	add_s(cells, str(ev, "message", ""));
	add_since(cells, ev, "firstTimestamp", now);
	add_i(cells, num(ev, "count"));
	add_s(cells, str(ev, "metadata.name", ""));
	return (cells);
}

static json_object *
ns_cells(json_object *ns, int64_t now)
{
	json_object *cells = start(ns);

	add_s(cells, str(ns, "status.phase", "Active"));
	add_age(cells, ns, now);
	return (cells);
}

static bool
has_cond(json_object *o, const char *type)
{
	json_object *cs = jx_get(o, "status.conditions");

	for (size_t i = 0; i < jx_array_len(cs); i++) {
		json_object *c = json_object_array_get_idx(cs, i);

		if (strcmp(str(c, "type", ""), type) == 0
		        && strcmp(str(c, "status", ""), "True") == 0) {
			return (true);
		}
	}
	return (false);
}

static json_object *
job_cells(json_object *job, int64_t now)
{
	json_object *cells = start(job);
	int64_t want = jx_get(job, "spec.completions") != NULL
	        ? num(job, "spec.completions")
	        : 1;
	bool suspended = false;
	int64_t t0, t1;
	char d[32] = "";

	jx_get_bool(job, "spec.suspend", &suspended);
	add_s(cells,
	        has_cond(job, "Complete")         ? "Complete"
	                : has_cond(job, "Failed") ? "Failed"
	                : suspended               ? "Suspended"
	                                          : "Running");
	add_fmt(cells, "%" PRId64 "/%" PRId64, num(job, "status.succeeded"),
	        want);
	if (timefmt_parse(str(job, "status.startTime", ""), &t0) == 0) {
		t1 = timefmt_parse(str(job, "status.completionTime", ""), &t1)
		                == 0
		        ? t1 / 1000000
		        : now;
		ktable_human(t1 - t0 / 1000000, d, sizeof(d));
	}
	add_s(cells, d);
	add_age(cells, job, now);
	add_list(cells, jx_get(job, "spec.template.spec.containers"), "name");
	add_list(cells, jx_get(job, "spec.template.spec.containers"), "image");
	add_map(cells, jx_get(job, "spec.selector.matchLabels"));
	return (cells);
}

static json_object *
deploy_cells(json_object *d, int64_t now)
{
	json_object *cells = start(d);
	int64_t want = jx_get(d, "spec.replicas") != NULL
	        ? num(d, "spec.replicas")
	        : 1;

	add_fmt(cells, "%" PRId64 "/%" PRId64, num(d, "status.readyReplicas"),
	        want);
	add_i(cells, num(d, "status.updatedReplicas"));
	add_i(cells, num(d, "status.availableReplicas"));
	add_age(cells, d, now);
	add_list(cells, jx_get(d, "spec.template.spec.containers"), "name");
	add_list(cells, jx_get(d, "spec.template.spec.containers"), "image");
	add_map(cells, jx_get(d, "spec.selector.matchLabels"));
	return (cells);
}

static json_object *
svc_cells(json_object *s, int64_t now)
{
	json_object *cells = start(s);
	const char *type = str(s, "spec.type", "ClusterIP");
	json_object *ports = jx_get(s, "spec.ports");
	struct buf b = BUF_INIT;

	add_s(cells, type);
	add_s(cells, str(s, "spec.clusterIP", "<none>"));
	if (strcmp(type, "LoadBalancer") == 0) {
		add_s(cells,
		        str(json_object_array_get_idx(
		                    jx_get(s, "status.loadBalancer.ingress"),
		                    0),
		                "ip", "<pending>"));
	} else if (strcmp(type, "ExternalName") == 0) {
		add_s(cells, str(s, "spec.externalName", "<none>"));
	} else {
		add_s(cells, "<none>");
	}
	for (size_t i = 0; i < jx_array_len(ports); i++) {
		json_object *p = json_object_array_get_idx(ports, i);

		buf_printf(&b, "%s%" PRId64, i > 0 ? "," : "", num(p, "port"));
		if (num(p, "nodePort") > 0) {
			buf_printf(&b, ":%" PRId64, num(p, "nodePort"));
		}
		buf_printf(&b, "/%s", str(p, "protocol", "TCP"));
	}
	add_s(cells, b.len > 0 ? buf_str(&b) : "<none>");
	buf_fini(&b);
	add_age(cells, s, now);
	add_map(cells, jx_get(s, "spec.selector"));
	return (cells);
}

static size_t
nkeys(json_object *o)
{
	return (json_object_is_type(o, json_type_object)
	                ? (size_t)json_object_object_length(o)
	                : 0);
}

static json_object *
cm_cells(json_object *cm, int64_t now)
{
	json_object *cells = start(cm);

	add_i(cells,
	        (int64_t)(nkeys(json_object_object_get(cm, "data"))
	                + nkeys(json_object_object_get(cm, "binaryData"))));
	add_age(cells, cm, now);
	return (cells);
}

static json_object *
secret_cells(json_object *sec, int64_t now)
{
	json_object *cells = start(sec);

	add_s(cells, str(sec, "type", "Opaque"));
	add_i(cells, (int64_t)nkeys(json_object_object_get(sec, "data")));
	add_age(cells, sec, now);
	return (cells);
}

static json_object *
lease_cells(json_object *l, int64_t now)
{
	json_object *cells = start(l);

	add_s(cells, str(l, "spec.holderIdentity", ""));
	add_age(cells, l, now);
	return (cells);
}

/* ---- the table ---- */

#define NAME_COL                                                              \
	{                                                                     \
		"Name", "string", "name", 0,                                  \
		        "Name must be unique within a namespace."             \
	}
#define AGE_COL                                                               \
	{                                                                     \
		"Age", "string", "", 0, AGE_DESC                              \
	}
#define END_COL                                                               \
	{                                                                     \
		NULL, NULL, NULL, 0, NULL                                     \
	}

static const struct kprint_col pod_cols[] = { NAME_COL,
	{ "Ready", "string", "", 0,
	        "The aggregate readiness state of this pod for accepting "
	        "traffic." },
	{ "Status", "string", "", 0,
	        "The aggregate status of the containers in this pod." },
	{ "Restarts", "string", "", 0,
	        "The number of times the containers in this pod have been "
	        "restarted and when the last container in this pod has "
	        "restarted." },
	AGE_COL,
	{ "IP", "string", "", 1, "The IP address assigned to the pod." },
	{ "Node", "string", "", 1,
	        "The name of the node that this pod is assigned to." },
	{ "Nominated Node", "string", "", 1,
	        "The name of the node where the pod is nominated to run." },
	{ "Readiness Gates", "string", "", 1,
	        "The readiness gates of this pod." },
	END_COL };

static const struct kprint_col event_cols[] = {
	{ "Last Seen", "string", "", 0,
	        "The time at which the most recent occurrence of this event "
	        "was recorded." },
	{ "Type", "string", "", 0, "Type of this event (Normal, Warning)." },
	{ "Reason", "string", "", 0,
	        "This should be a short, machine understandable string that "
	        "gives the reason for the transition into the object's "
	        "current status." },
	{ "Object", "string", "", 0, "The object that this event is about." },
	{ "Subobject", "string", "", 1,
	        "The subobject that this event is about." },
	{ "Source", "string", "", 1, "The component reporting this event." },
	{ "Message", "string", "", 0,
	        "A human-readable description of the status of this "
	        "operation." },
	{ "First Seen", "string", "", 1,
	        "The time at which the event was first recorded." },
	{ "Count", "integer", "", 1,
	        "The number of times this event has occurred." },
	{ "Name", "string", "name", 1,
	        "Name must be unique within a namespace." },
	END_COL
};

static const struct kprint_col ns_cols[] = { NAME_COL,
	{ "Status", "string", "", 0, "The status of the namespace" }, AGE_COL,
	END_COL };

static const struct kprint_col job_cols[] = { NAME_COL,
	{ "Status", "string", "", 0, "Status of the job." },
	{ "Completions", "string", "", 0,
	        "The completed and desired completions of the job." },
	{ "Duration", "string", "", 0, "Time required to complete the job." },
	AGE_COL,
	{ "Containers", "string", "", 1,
	        "Names of each container in the template." },
	{ "Images", "string", "", 1,
	        "Images referenced by each container in the template." },
	{ "Selector", "string", "", 1,
	        "A label query over pods that should match the pod count." },
	END_COL };

static const struct kprint_col deploy_cols[] = { NAME_COL,
	{ "Ready", "string", "", 0, "Number of the pod with ready state" },
	{ "Up-to-date", "string", "", 0,
	        "Total number of non-terminated pods targeted by this "
	        "deployment that have the desired template spec." },
	{ "Available", "string", "", 0,
	        "Total number of available pods (ready for at least "
	        "minReadySeconds) targeted by this deployment." },
	AGE_COL,
	{ "Containers", "string", "", 1,
	        "Names of each container in the template." },
	{ "Images", "string", "", 1,
	        "Images referenced by each container in the template." },
	{ "Selector", "string", "", 1, "Label selector for pods." }, END_COL };

static const struct kprint_col svc_cols[] = { NAME_COL,
	{ "Type", "string", "", 0, "The type of the service." },
	{ "Cluster-IP", "string", "", 0, "The IP address of the service." },
	{ "External-IP", "string", "", 0,
	        "The external IP address of the service." },
	{ "Port(s)", "string", "", 0, "The ports of the service." }, AGE_COL,
	{ "Selector", "string", "", 1,
	        "Route service traffic to pods with label keys and values "
	        "matching this selector." },
	END_COL };

static const struct kprint_col cm_cols[] = { NAME_COL,
	{ "Data", "integer", "", 0,
	        "The number of entries in the data and binaryData fields." },
	AGE_COL, END_COL };

static const struct kprint_col secret_cols[]
        = { NAME_COL, { "Type", "string", "", 0, "The type of the secret." },
	          { "Data", "integer", "", 0,
	                  "The number of entries in the data field." },
	          AGE_COL, END_COL };

static const struct kprint_col lease_cols[] = { NAME_COL,
	{ "Holder", "string", "", 0, "The holder of the lease." }, AGE_COL,
	END_COL };

static const struct kprint printers[] = {
	{ "", "pods", pod_cols, pod_cells },
	{ "", "events", event_cols, event_cells },
	{ "", "namespaces", ns_cols, ns_cells },
	{ "batch", "jobs", job_cols, job_cells },
	{ "apps", "deployments", deploy_cols, deploy_cells },
	{ "", "services", svc_cols, svc_cells },
	{ "", "configmaps", cm_cols, cm_cells },
	{ "", "secrets", secret_cols, secret_cells },
	{ "coordination.k8s.io", "leases", lease_cols, lease_cells },
};

const struct kprint *
kprint_find(const char *group, const char *plural)
{
	if (group == NULL || plural == NULL) {
		return (NULL);
	}
	for (size_t i = 0; i < sizeof(printers) / sizeof(printers[0]); i++) {
		if (strcmp(printers[i].group, group) == 0
		        && strcmp(printers[i].plural, plural) == 0) {
			return (&printers[i]);
		}
	}
	return (NULL);
}
