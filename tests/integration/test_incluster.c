/*
 * test_incluster.c: bin/sympoziumd with in-cluster configuration, as in
 * the pod deploy/ describes.  kubesim runs with --tls and a bearer token;
 * the test writes what the kubelet mounts into a pod (token, ca.crt,
 * namespace) into a service-account directory, sets the environment the
 * pod sees (KUBERNETES_SERVICE_HOST/PORT, no KUBECONFIG) plus
 * SYMPOZIUM_SERVICEACCOUNT_DIR (the test hook in supervisor/sup.c that
 * replaces /var/run/secrets/kubernetes.io/serviceaccount), and starts
 * sympoziumd with deploy/manager/deployment.yaml's flags (--leader-elect in
 * sympozium-system).
 *
 * Tests, in order: our samples (deploy/samples/) apply; sympoziumd
 * reconciles the SkillPack through that configuration (ConfigMap and
 * status Ready); it holds the Lease in sympozium-system; its requests
 * carried the token (kubesim answers 401 without it: every request of
 * sympoziumd succeeded or failed for another reason, none was 401);
 * every request it made is granted by deploy/rbac/ (the ClusterRole, and
 * the leader-election Role in sympozium-system); a second sympoziumd with
 * a wrong token in its token file is refused (401) and reconciles
 * nothing; SIGTERM exits 0.
 *
 * Every wait is bounded.  Only the pids this test forked, and the workers
 * found under them in /proc, are signalled.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 15000
#define TOKEN   "in-cluster-token-4f1c"
#define SYS_NS  "sympozium-system"
#define LEASE   "sympozium-controller-leader"
#define GROUP   "sympozium.ai"
#define VERSION "v1alpha1"

static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SECRET = { "", "v1", "secrets", true };
static const struct kapi_res R_LEASE
        = { "coordination.k8s.io", "v1", "leases", true };
static const struct kapi_res R_SKP = { GROUP, VERSION, "skillpacks", true };

/* The supervisors: one with the right token, one with a wrong one. */
enum { GOOD, BAD };

static struct optest F;
/* The API server's address as the pod sees it. */
static char host[64], port[16];

/* ---- files ---- */

static void
write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* What the kubelet mounts: token, ca.crt, namespace. */
static void
write_sa_dir(const char *dir, const char *token)
{
	char path[192];

	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/token", dir);
	write_file(path, token, strlen(token));
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	assert_non_null(F.a.conf->ca_pem);
	write_file(path, F.a.conf->ca_pem, F.a.conf->ca_len);
	snprintf(path, sizeof(path), "%s/namespace", dir);
	write_file(path, SYS_NS, strlen(SYS_NS));
}

/* ---- the supervisor ---- */

/* Starts $SYMPOZIUMD (default bin/sympoziumd) as supervisor i with the
 * pod's environment (its service-account directory <dir>/sa-<name>) and
 * deploy/'s flags; stdout and stderr to <dir>/<name>.log. */
static void
sd_start(int i, const char *name)
{
	struct sdproc *sd = &F.sd[i];
	char rundir[160], home[96], h[96], p[64], sa[192];
	const char *args[] = { "--leader-elect",
		"--leader-election-namespace=" SYS_NS,
		"--leader-elect-lease-duration=3s",
		"--leader-elect-renew-deadline=2s",
		"--leader-elect-retry-period=500ms",
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--runtime-dir", rundir, NULL };
	/* no KUBECONFIG and no ~/.kube/config */
	const char *env[] = { "KUBECONFIG", home, h, p, sa, NULL };

	snprintf(sd->log, sizeof(sd->log), "%s/%s.log", F.dir, name);
	snprintf(rundir, sizeof(rundir), "%s/run-%s", F.dir, name);
	snprintf(home, sizeof(home), "HOME=%s", F.dir);
	snprintf(h, sizeof(h), "KUBERNETES_SERVICE_HOST=%s", host);
	snprintf(p, sizeof(p), "KUBERNETES_SERVICE_PORT=%s", port);
	snprintf(sa, sizeof(sa), "SYMPOZIUM_SERVICEACCOUNT_DIR=%s/sa-%s",
	        F.dir, name);
	sd->pid = sdproc_start_env(sd->log, args, env);
	assert_true(sd->pid > 0);
}

/* ---- group setup / teardown ---- */

/* "https://127.0.0.1:PORT" into host and port. */
static int
split_server(const char *server)
{
	const char *h = strstr(server, "://"), *colon;

	if (h == NULL || (colon = strrchr(h + 3, ':')) == NULL) {
		return (-1);
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - h - 3), h + 3);
	snprintf(port, sizeof(port), "%s", colon + 1);
	return (0);
}

static int
setup(void **state)
{
	static const char *const args[] = { "--tls", "--token", TOKEN, NULL };
	char sa[128];

	*state = &F;
	if (optest_start(&F, "test-incluster", args, 10000, WAIT_MS) != 0) {
		return (-1);
	}
	if (strncmp(F.a.conf->server, "https://", 8) != 0
	        || split_server(F.a.conf->server) != 0) {
		fprintf(stderr, "server %s\n", F.a.conf->server);
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	snprintf(sa, sizeof(sa), "%s/sa-good", F.dir);
	write_sa_dir(sa, TOKEN);
	snprintf(sa, sizeof(sa), "%s/sa-bad", F.dir);
	write_sa_dir(sa, "not-the-token");
	sd_start(GOOD, "good");
	return (0);
}

/* ---- samples ---- */

/* Creates o, retrying on 404 while its CRD is not served yet. */
static void
create_sample(json_object *o)
{
	const char *kind = jx_get_str(o, "kind");
	const char *plural = optest_plural(kind);
	struct kapi_res cr = { GROUP, VERSION, plural, true };
	const struct kapi_res *r
	        = strcmp(kind, "Secret") == 0 ? &R_SECRET : &cr;

	assert_true(r == &R_SECRET || plural != NULL);
	optest_create_or_fail(&F, r, "default", o, NULL);
}

static void
test_samples_apply(void **state)
{
	json_object *kust
	        = testutil_read_yaml("deploy/samples/kustomization.yaml");
	json_object *files
	        = jx_get(json_object_array_get_idx(kust, 0), "resources");
	size_t n = 0;

	(void)state;
	assert_non_null(files);
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		char *path = xasprintf("deploy/samples/%s",
		        json_object_get_string(
		                json_object_array_get_idx(files, i)));
		json_object *docs = testutil_read_yaml(path);

		assert_non_null(docs);
		for (size_t j = 0; j < json_object_array_length(docs); j++) {
			create_sample(json_object_array_get_idx(docs, j));
			n++;
		}
		json_object_put(docs);
		free(path);
	}
	json_object_put(kust);
	assert_int_equal(n, 9);
}

/* ---- reconciliation ---- */

/* GETs r/name in ns until check passes or WAIT_MS; true when it did. */
static bool
wait_for(const struct kapi_res *r, const char *ns, const char *name,
        optest_check_fn *check, const void *arg)
{
	return (optest_poll(&F, r, ns, name, check, arg, NULL) == NULL);
}

static const char *
held(json_object *o, const void *arg)
{
	const char *h = jx_get_str(o, "spec.holderIdentity");

	(void)arg;
	return (h != NULL && *h != '\0' ? NULL : "not held");
}

static void
test_reconciles_through_incluster(void **state)
{
	static const char *const ready[2] = { "status.phase", "Ready" };

	(void)state;
	if (!wait_for(&R_SKP, "default", "demo-skills", optest_check_field,
	            ready)
	        || !wait_for(&R_CM, "default", "demo-skills",
	                optest_check_present, NULL)) {
		sdproc_dump_log(F.sd[GOOD].log);
		fail_msg("SkillPack demo-skills not reconciled");
	}
}

static void
test_lease_in_system_namespace(void **state)
{
	(void)state;
	if (!wait_for(&R_LEASE, SYS_NS, LEASE, held, NULL)) {
		sdproc_dump_log(F.sd[GOOD].log);
		fail_msg("no Lease %s/%s held", SYS_NS, LEASE);
	}
}

/* ---- the request log ---- */

/* The request log's lines as JSON objects (an array). */
static json_object *
log_entries(void)
{
	char *t = testutil_read_file(F.a.request_log, NULL);
	json_object *arr = json_object_new_array();

	for (char *line = strtok(t, "\n"); line != NULL;
	        line = strtok(NULL, "\n")) {
		json_object *o = json_tokener_parse(line);
		if (o != NULL) {
			json_object_array_add(arr, o);
		}
	}
	free(t);
	return (arr);
}

static bool
from_sympoziumd(json_object *o)
{
	const char *ua = jx_get_str(o, "userAgent");

	return (ua != NULL && strncmp(ua, "sympoziumd/", 11) == 0);
}

static void
test_requests_carried_token(void **state)
{
	json_object *log = log_entries();
	int n = 0, unauth = 0;

	(void)state;
	for (size_t i = 0; i < json_object_array_length(log); i++) {
		json_object *o = json_object_array_get_idx(log, i);
		int64_t code = 0;
		if (!from_sympoziumd(o)) {
			continue;
		}
		n++;
		jx_get_int(o, "code", &code);
		if (code == 401) {
			fprintf(stderr, "401: %s\n",
			        json_object_to_json_string(o));
			unauth++;
		}
	}
	json_object_put(log);
	assert_true(n >= 10);
	assert_int_equal(unauth, 0);
}

/* ---- RBAC: deploy/rbac/ against the requests ---- */

struct grant {
	char *group, *resource, *verb;
	const char *ns; /* NULL: cluster-wide (ClusterRole) */
};

static struct grant grants[256];
static size_t ngrants;

static void
add_rules(json_object *role, const char *ns)
{
	json_object *rules = jx_get(role, "rules");

	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		json_object *gs = jx_get(r, "apiGroups"),
		            *rs = jx_get(r, "resources"),
		            *vs = jx_get(r, "verbs");
		for (size_t g = 0; g < json_object_array_length(gs); g++) {
			for (size_t k = 0; k < json_object_array_length(rs);
			        k++) {
				for (size_t v = 0;
				        v < json_object_array_length(vs);
				        v++) {
					assert_true(ngrants < 256);
					grants[ngrants++] = (struct grant) {
						xstrdup(json_object_get_string(
						        json_object_array_get_idx(
						                gs, g))),
						xstrdup(json_object_get_string(
						        json_object_array_get_idx(
						                rs, k))),
						xstrdup(json_object_get_string(
						        json_object_array_get_idx(
						                vs, v))),
						ns
					};
				}
			}
		}
	}
}

static void
load_grants(void)
{
	static const char *const files[] = { "deploy/rbac/cluster_role.yaml",
		"deploy/rbac/leader_election_role.yaml" };

	for (size_t f = 0; f < 2; f++) {
		json_object *docs = testutil_read_yaml(files[f]);
		assert_non_null(docs);
		for (size_t i = 0; i < json_object_array_length(docs); i++) {
			json_object *d = json_object_array_get_idx(docs, i);
			const char *kind = jx_get_str(d, "kind");
			if (strcmp(kind, "ClusterRole") == 0) {
				add_rules(d, NULL);
			} else if (strcmp(kind, "Role") == 0) {
				add_rules(d, SYS_NS);
			}
		}
		json_object_put(docs);
	}
}

static void
free_grants(void)
{
	for (size_t i = 0; i < ngrants; i++) {
		free(grants[i].group);
		free(grants[i].resource);
		free(grants[i].verb);
	}
	ngrants = 0;
}

static bool
granted(const char *group, const char *resource, const char *verb,
        const char *ns)
{
	for (size_t i = 0; i < ngrants; i++) {
		const struct grant *g = &grants[i];
		if (strcmp(g->group, group) == 0
		        && strcmp(g->resource, resource) == 0
		        && strcmp(g->verb, verb) == 0
		        && (g->ns == NULL
		                || (ns != NULL && strcmp(g->ns, ns) == 0))) {
			return (true);
		}
	}
	return (false);
}

/* Splits a request path into group, namespace and resource
 * ("pods/log", "agentruns/status").  -1 for a non-resource path. */
static int
parse_path(const char *path, char *group, char *ns, char *resource, size_t len)
{
	char *p = xstrdup(path), *q = strchr(p, '?'), *parts[10];
	size_t n = 0, i;

	if (q != NULL) {
		*q = '\0';
	}
	for (char *s = strtok(p, "/"); s != NULL && n < 10;
	        s = strtok(NULL, "/")) {
		parts[n++] = s;
	}
	if (n >= 3 && strcmp(parts[0], "api") == 0) {
		snprintf(group, len, "%s", "");
		i = 2;
	} else if (n >= 4 && strcmp(parts[0], "apis") == 0) {
		snprintf(group, len, "%s", parts[1]);
		i = 3;
	} else {
		free(p);
		return (-1);
	}
	ns[0] = '\0';
	if (n > i + 1 && strcmp(parts[i], "namespaces") == 0) {
		snprintf(ns, len, "%s", parts[i + 1]);
		i += 2;
	}
	snprintf(resource, len, "%s%s%s", parts[i], n > i + 2 ? "/" : "",
	        n > i + 2 ? parts[i + 2] : "");
	free(p);
	return (0);
}

/* The verb of a logged request.  A resource the server does not serve
 * (sympoziumd's start-up LIST of the agent-sandbox sandboxes, without
 * their CRD) is answered 404 before kubesim names a verb; the real API
 * server authorizes it first, as a list (a GET of the collection) or a
 * get. */
static const char *
verb_of(json_object *o, const char *res)
{
	const char *verb = jx_get_str(o, "verb");
	const char *path = jx_get_str(o, "path");
	const char *method = jx_get_str(o, "method");
	size_t pl, rl = strlen(res);

	if (verb == NULL || verb[0] != '\0' || path == NULL || method == NULL
	        || strcmp(method, "GET") != 0) {
		return (verb);
	}
	pl = strcspn(path, "?");
	return (pl >= rl && strncmp(path + pl - rl, res, rl) == 0 ? "list"
	                                                          : "get");
}

static void
test_rbac_grants_every_request(void **state)
{
	json_object *log = log_entries();
	int n = 0, denied = 0;

	(void)state;
	load_grants();
	for (size_t i = 0; i < json_object_array_length(log); i++) {
		json_object *o = json_object_array_get_idx(log, i);
		char group[128], ns[128], res[128];
		const char *verb = jx_get_str(o, "verb");
		if (!from_sympoziumd(o) || verb == NULL
		        || parse_path(jx_get_str(o, "path"), group, ns, res,
		                   sizeof(group))
		                != 0) {
			continue;
		}
		verb = verb_of(o, res);
		n++;
		if (getenv("INCLUSTER_DEBUG") != NULL) {
			fprintf(stderr, "req %s %s/%s ns=%s\n", verb, group,
			        res, ns);
		}
		if (!granted(group, res, verb, ns[0] != '\0' ? ns : NULL)) {
			fprintf(stderr, "not granted: %s %s/%s in '%s' (%s)\n",
			        verb, group, res, ns, jx_get_str(o, "path"));
			denied++;
		}
	}
	json_object_put(log);
	free_grants();
	assert_true(n >= 10);
	assert_int_equal(denied, 0);
}

/* ---- a wrong token ---- */

static void
test_wrong_token_refused(void **state)
{
	int64_t end = ksim_now_ms() + WAIT_MS;
	int refused = 0;

	(void)state;
	sd_start(BAD, "bad");
	while (ksim_now_ms() < end) {
		json_object *log = log_entries();
		refused = 0;
		for (size_t i = 0; i < json_object_array_length(log); i++) {
			json_object *o = json_object_array_get_idx(log, i);
			int64_t code = 0;
			jx_get_int(o, "code", &code);
			refused += from_sympoziumd(o) && code == 401;
		}
		json_object_put(log);
		if (refused > 0) {
			break;
		}
		ksim_sleep_ms(100);
	}
	(void)sdproc_stop(&F.sd[BAD], 15000);
	if (refused == 0) {
		sdproc_dump_log(F.sd[BAD].log);
	}
	assert_true(refused > 0);
}

static void
test_sigterm_exit0(void **state)
{
	(void)state;
	optest_sd_sigterm(&F, GOOD, 20000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_apply),
		cmocka_unit_test(test_reconciles_through_incluster),
		cmocka_unit_test(test_lease_in_system_namespace),
		cmocka_unit_test(test_requests_carried_token),
		cmocka_unit_test(test_rbac_grants_every_request),
		cmocka_unit_test(test_wrong_token_refused),
		cmocka_unit_test(test_sigterm_exit0),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
