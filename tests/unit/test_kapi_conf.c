/*
 * test_kapi_conf.c: the configuration loader (common/kapi_conf.c):
 * kubeconfig fields, the KUBECONFIG merge (spec G item 69), errors,
 * in-cluster files and token rotation at the configuration level (item
 * 68), and kapi_conf_load's search order.  Fixtures are in
 * tests/unit/data/kubeconfig/; rotating files live in mkdtemp directories.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/kapi_conf.h"
#include "common/kapi_conf_mem.h"
#include "common/xmalloc.h"
#include "tests/lib/testutil.h"

#define DATA "tests/unit/data/kubeconfig"

static const char *const env_names[] = { "KUBECONFIG",
	"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "HOME", NULL };

static void
assert_pem(const char *pem, size_t len, const char *path)
{
	size_t want_len;
	char *want = testutil_read_file(path, &want_len);

	assert_non_null(pem);
	assert_int_equal(len, want_len);
	assert_memory_equal(pem, want, len);
	free(want);
}

/* Writes text to dir/name atomically (write then rename, as the kubelet
 * does). */
static void
put_file(const char *dir, const char *name, const char *text)
{
	char *tmp = xasprintf("%s/.%s.tmp", dir, name);
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(tmp, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
	free(tmp);
	free(path);
}

static char *
make_tmpdir(void)
{
	char *dir = xstrdup("/tmp/test_kapi_conf.XXXXXX");

	assert_non_null(mkdtemp(dir));
	return (dir);
}

static void
remove_tmpdir(char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	assert_int_equal(strncmp(dir, "/tmp/test_kapi_conf.", 20), 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

/* Saves and clears the environment the loader reads; restores it. */
static int
env_save(void **state)
{
	char **saved = xcalloc(4, sizeof(*saved));
	const char *v;
	int i;

	for (i = 0; env_names[i] != NULL; i++) {
		if ((v = getenv(env_names[i])) != NULL) {
			saved[i] = xstrdup(v);
		}
		unsetenv(env_names[i]);
	}
	*state = saved;
	return (0);
}

static int
env_restore(void **state)
{
	char **saved = *state;
	int i;

	for (i = 0; env_names[i] != NULL; i++) {
		if (saved[i] != NULL) {
			setenv(env_names[i], saved[i], 1);
		} else {
			unsetenv(env_names[i]);
		}
		free(saved[i]);
	}
	free(saved);
	return (0);
}

static struct kapi_conf *
load_ok(const char *paths, const char *context)
{
	char err[512];
	struct kapi_conf *conf;

	conf = kapi_conf_from_kubeconfig(paths, context, err, sizeof(err));
	if (conf == NULL) {
		print_error("load %s: %s\n", paths, err);
	}
	assert_non_null(conf);
	return (conf);
}

/* Spec G item 69. */
static void
test_merge_first_wins(void **state)
{
	struct kapi_conf *conf;

	(void)state;
	conf = load_ok(DATA "/a/config:" DATA "/b/config", NULL);
	/* b's current-context, b's cluster (CA relative to b/)... */
	assert_string_equal(conf->context, "ctx-b");
	assert_string_equal(conf->server, "https://b.example:6443");
	assert_pem(conf->ca_pem, conf->ca_len, DATA "/b/ca.crt");
	assert_string_equal(conf->namespace, "team-b");
	/* ...and a's user u entirely (paths relative to a/, no token). */
	assert_pem(conf->cert_pem, conf->cert_len, DATA "/a/certs/u.crt");
	assert_pem(conf->key_pem, conf->key_len, DATA "/a/certs/u.key");
	assert_null(conf->token);
	assert_null(conf->username);
	assert_null(conf->password);
	assert_false(conf->insecure);
	assert_false(conf->in_cluster);
	kapi_conf_free(conf);

	/* The other order: b's u wins, with its own relative path. */
	conf = load_ok(DATA "/b/config:" DATA "/a/config", NULL);
	assert_string_equal(conf->context, "ctx-b");
	assert_pem(conf->cert_pem, conf->cert_len, DATA "/b/u.crt");
	assert_null(conf->key_pem);
	assert_string_equal(conf->token, "b-token");
	assert_string_equal(conf->username, "b-user");
	assert_string_equal(conf->password, "b-pass");
	kapi_conf_free(conf);

	/* An explicit context reaches a's cluster. */
	conf = load_ok(DATA "/a/config:" DATA "/b/config", "ctx-a");
	assert_string_equal(conf->context, "ctx-a");
	assert_string_equal(conf->server, "https://a.example:6443");
	assert_pem(conf->ca_pem, conf->ca_len, DATA "/a/ca.crt");
	assert_string_equal(conf->namespace, "default");
	kapi_conf_free(conf);
}

static void
test_list_skips_missing_and_empty(void **state)
{
	struct kapi_conf *conf;
	char err[512], *dir, *paths;

	(void)state;
	conf = load_ok(
	        "::" DATA "/nope:" DATA "/a/config::" DATA "/b/config:", NULL);
	assert_string_equal(conf->context, "ctx-b");
	assert_pem(conf->cert_pem, conf->cert_len, DATA "/a/certs/u.crt");
	kapi_conf_free(conf);

	assert_null(kapi_conf_from_kubeconfig(
	        DATA "/nope1:" DATA "/nope2", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no kubeconfig file found"));
	assert_null(kapi_conf_from_kubeconfig("", NULL, err, sizeof(err)));

	/* An invalid file is an error, even after a good one. */
	dir = make_tmpdir();
	put_file(dir, "bad", "clusters: [\n");
	paths = xasprintf("%s:%s/bad", DATA "/b/config", dir);
	assert_null(kapi_conf_from_kubeconfig(paths, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "/bad: yaml:"));
	assert_non_null(strstr(err, "line "));
	free(paths);
	/* A directory is not readable as a kubeconfig. */
	paths = xasprintf("%s:%s", DATA "/b/config", dir);
	assert_null(kapi_conf_from_kubeconfig(paths, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot read kubeconfig"));
	free(paths);
	remove_tmpdir(dir);
}

static void
test_every_field(void **state)
{
	struct kapi_conf *conf;
	const char *t;

	(void)state;
	conf = load_ok(DATA "/full/config", "main");
	assert_string_equal(conf->context, "main");
	assert_string_equal(conf->server, "https://prod.example:8443");
	/* -data wins over the path and decodes to the exact bytes. */
	assert_int_equal(conf->ca_len, 62);
	assert_memory_equal(conf->ca_pem,
	        "-----BEGIN CERTIFICATE-----\nDATA-CA\n"
	        "-----END CERTIFICATE-----\n",
	        62);
	assert_int_equal(conf->cert_len, 64);
	assert_memory_equal(conf->cert_pem,
	        "-----BEGIN CERTIFICATE-----\nDATA-CERT\n"
	        "-----END CERTIFICATE-----\n",
	        64);
	assert_pem(conf->key_pem, conf->key_len, DATA "/full/key.pem");
	assert_string_equal(conf->tls_server_name, "api.prod.internal");
	assert_false(conf->insecure);
	assert_string_equal(conf->username, "alice");
	assert_string_equal(conf->password, "s3cret");
	assert_string_equal(conf->token, "static-token");
	assert_null(conf->token_file);
	assert_string_equal(conf->namespace, "payments");
	assert_string_equal(kapi_conf_token(conf, 5), "static-token");
	kapi_conf_free(conf);

	/* current-context "other": insecure, http, a token file that wins
	 * over the static token, made absolute. */
	conf = load_ok(DATA "/full/config", NULL);
	assert_string_equal(conf->context, "other");
	assert_string_equal(conf->server, "http://127.0.0.1:8080");
	assert_true(conf->insecure);
	assert_null(conf->ca_pem);
	assert_null(conf->cert_pem);
	assert_null(conf->tls_server_name);
	assert_string_equal(conf->token, "file-token");
	assert_non_null(conf->token_file);
	assert_int_equal(conf->token_file[0], '/');
	t = DATA "/full/token";
	assert_string_equal(
	        conf->token_file + strlen(conf->token_file) - strlen(t), t);
	assert_int_equal(conf->token_read_ms, 0);
	assert_string_equal(conf->namespace, "default");
	kapi_conf_free(conf);
	kapi_conf_free(NULL);
}

static void
test_json_kubeconfig(void **state)
{
	struct kapi_conf *conf;

	(void)state;
	conf = load_ok(DATA "/json.json", NULL);
	assert_string_equal(conf->context, "j");
	assert_string_equal(conf->server, "https://json.example:443");
	assert_true(conf->insecure);
	assert_string_equal(conf->token, "json-token");
	assert_string_equal(conf->namespace, "jns");
	kapi_conf_free(conf);
}

/* Base64 of *-data: exact bytes, CR/LF ignored, bad input refused. */
static void
test_base64(void **state)
{
	static const struct {
		const char *b64;
		const char *bytes; /* NULL: invalid */
		size_t len;
	} cases[] = {
		{ "AAH+/2hlbGxv", "\x00\x01\xfe\xffhello", 9 },
		{ "AAH+\\r\\n/2hl\\nbGxv", "\x00\x01\xfe\xffhello", 9 },
		{ "YQ==", "a", 1 },
		{ "YWI=", "ab", 2 },
		{ "YWJj", "abc", 3 },
		{ "YWJ", NULL, 0 },
		{ "YW=j", NULL, 0 },
		{ "YQ===", NULL, 0 },
		{ "Y===", NULL, 0 },
		{ "YW J", NULL, 0 },
		{ "YW-_", NULL, 0 },
		{ "====", NULL, 0 },
	};
	struct kapi_conf *conf;
	char err[512], *text;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		text = xasprintf(
		        "current-context: x\n"
		        "contexts: [{name: x, context: {cluster: c}}]\n"
		        "clusters: [{name: c, cluster: {server: "
		        "'https://h', certificate-authority-data: "
		        "\"%s\"}}]\n",
		        cases[i].b64);
		conf = kapi_conf_from_memory(
		        text, strlen(text), NULL, NULL, err, sizeof(err));
		if (cases[i].bytes == NULL) {
			assert_null(conf);
			assert_string_equal(err,
			        "cluster \"c\": certificate-authority-data is "
			        "not "
			        "valid base64");
		} else {
			assert_non_null(conf);
			assert_int_equal(conf->ca_len, cases[i].len);
			assert_memory_equal(
			        conf->ca_pem, cases[i].bytes, cases[i].len);
			kapi_conf_free(conf);
		}
		free(text);
	}
}

static void
expect_error(const char *yaml, const char *context, const char *needle)
{
	struct kapi_conf *conf;
	char err[512];

	conf = kapi_conf_from_memory(
	        yaml, strlen(yaml), DATA, context, err, sizeof(err));
	if (conf != NULL || strstr(err, needle) == NULL) {
		print_error("kubeconfig <%s>: got '%s', want '%s'\n", yaml,
		        conf != NULL ? "success" : err, needle);
		kapi_conf_free(conf);
		fail();
	}
}

#define CTX "current-context: x\ncontexts: [{name: x, context: "

static void
test_errors(void **state)
{
	(void)state;
	expect_error(CTX
	        "{cluster: c}}]\nclusters: [{name: c, cluster: "
	        "{server: 'https://h', insecure-skip-tls-verify: true, "
	        "certificate-authority: /nonexistent}}]\n",
	        NULL,
	        "cluster \"c\": specifying a root certificates file with the "
	        "insecure flag is not allowed");
	expect_error(CTX
	        "{cluster: c}}]\nclusters: [{name: c, cluster: "
	        "{server: 'https://h', insecure-skip-tls-verify: true, "
	        "certificate-authority-data: YQ==}}]\n",
	        NULL, "specifying a root certificates file with the insecure");
	expect_error(CTX
	        "{cluster: c, user: eu}}]\nclusters: [{name: c, "
	        "cluster: {server: 'https://h'}}]\nusers: [{name: eu, "
	        "user: {exec: {command: aws}}}]\n",
	        NULL,
	        "user \"eu\": exec plugin \"eu\": apiVersion \"\" is not "
	        "supported");
	expect_error(CTX
	        "{cluster: c, user: gu}}]\nclusters: [{name: c, "
	        "cluster: {server: 'https://h'}}]\nusers: [{name: gu, "
	        "user: {auth-provider: {name: gcp}}}]\n",
	        NULL, "user \"gu\": auth-provider plugins are not supported");
	expect_error("contexts: [{name: x, context: {cluster: c}}]\n", NULL,
	        "no current-context is set");
	expect_error("", NULL, "no current-context is set");
	expect_error(CTX "{cluster: c}}]\n", "nope",
	        "context \"nope\" was not found");
	expect_error(CTX "{cluster: c9}}]\n", NULL,
	        "cluster \"c9\" was not found for context \"x\"");
	expect_error(CTX "{cluster: c, user: u9}}]\nclusters: [{name: c, "
	                 "cluster: {server: 'https://h'}}]\n",
	        NULL, "user \"u9\" was not found for context \"x\"");
	expect_error(
	        CTX "{user: u}}]\n", NULL, "context \"x\" has no cluster");
	expect_error(CTX
	        "{cluster: c}}]\nclusters: [{name: c, cluster: {}}]\n",
	        NULL, "cluster \"c\" has no server");
	expect_error(CTX "{cluster: c}}]\nclusters: [{name: c, cluster: "
	                 "{server: 'ftp://h'}}]\n",
	        NULL, "server \"ftp://h\" is not an http:// or https:// URL");
	expect_error(CTX "{cluster: c}}]\nclusters: [{name: c, cluster: "
	                 "{server: 'https://'}}]\n",
	        NULL, "is not an http:// or https:// URL");
	expect_error(CTX "{cluster: c}}]\nclusters: [{name: c, cluster: "
	                 "{server: 6443}}]\n",
	        NULL, "cluster \"c\": server must be a string");
	expect_error(CTX "{cluster: c}}]\nclusters: [{name: c, cluster: "
	                 "{server: 'https://h', insecure-skip-tls-verify: "
	                 "'true'}}]\n",
	        NULL, "insecure-skip-tls-verify must be a boolean");
	expect_error(CTX "{cluster: c, user: u}}]\nclusters: [{name: c, "
	                 "cluster: {server: 'https://h'}}]\nusers: [{name: u, "
	                 "user: {client-certificate: missing.crt}}]\n",
	        NULL, "user \"u\": cannot read client-certificate ");
	expect_error(CTX "{cluster: c, user: u}}]\nclusters: [{name: c, "
	                 "cluster: {server: 'https://h'}}]\nusers: [{name: u, "
	                 "user: {tokenFile: /nonexistent/token}}]\n",
	        NULL, "cannot read tokenFile /nonexistent/token");
	expect_error("- a\n", NULL, "not a kubeconfig");
	expect_error("clusters: {a: 1}\n", NULL, "clusters must be a list");
	expect_error("users: [{user: {}}]\n", NULL, "users[0] has no name");
	expect_error("contexts: [{name: x}, {name: x}]\n", NULL,
	        "duplicate name \"x\" in contexts");
	expect_error("current-context: [a]\n", NULL,
	        "current-context must be a string");
	expect_error("a: [\n", NULL, "line 2");
}

/* The directory of a sa dir with a token, and optionally ca/namespace. */
static char *
make_sa_dir(const char *ca, const char *ns)
{
	char *dir = make_tmpdir();

	put_file(dir, "token", "tok1\n");
	if (ca != NULL) {
		put_file(dir, "ca.crt", ca);
	}
	if (ns != NULL) {
		put_file(dir, "namespace", ns);
	}
	return (dir);
}

static void
test_in_cluster(void **state)
{
	struct kapi_conf *conf;
	char err[512], *dir = make_sa_dir("CA-BYTES\n", " myns\n"), *tf;

	(void)state;
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	conf = kapi_conf_in_cluster(dir, err, sizeof(err));
	assert_non_null(conf);
	assert_true(conf->in_cluster);
	assert_string_equal(conf->server, "https://10.0.0.1:6443");
	assert_string_equal(conf->token, "tok1");
	tf = xasprintf("%s/token", dir);
	assert_string_equal(conf->token_file, tf);
	free(tf);
	assert_int_equal(conf->ca_len, 9);
	assert_memory_equal(conf->ca_pem, "CA-BYTES\n", 9);
	assert_string_equal(conf->namespace, "myns");
	assert_null(conf->context);
	assert_null(conf->cert_pem);
	kapi_conf_free(conf);
	remove_tmpdir(dir);

	/* IPv6 bracketed; no CA (system roots) and no namespace file. */
	dir = make_sa_dir(NULL, NULL);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	conf = kapi_conf_in_cluster(dir, err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf->server, "https://[fd00::1]:443");
	assert_null(conf->ca_pem);
	assert_string_equal(conf->namespace, "default");
	kapi_conf_free(conf);

	/* The token must be readable at load. */
	tf = xasprintf("%s/token", dir);
	assert_int_equal(unlink(tf), 0);
	free(tf);
	assert_null(kapi_conf_in_cluster(dir, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot read service-account token"));
	remove_tmpdir(dir);
}

static void
test_in_cluster_env_missing(void **state)
{
	static const char msg[]
	        = "unable to load in-cluster configuration, "
	          "KUBERNETES_SERVICE_HOST "
	          "and KUBERNETES_SERVICE_PORT must be defined";
	char err[512], *dir = make_sa_dir(NULL, NULL);

	(void)state;
	assert_null(kapi_conf_in_cluster(dir, err, sizeof(err)));
	assert_string_equal(err, msg);
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "", 1);
	assert_null(kapi_conf_in_cluster(dir, err, sizeof(err)));
	assert_string_equal(err, msg);
	setenv("KUBERNETES_SERVICE_HOST", "", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_null(kapi_conf_in_cluster(dir, err, sizeof(err)));
	assert_string_equal(err, msg);
	remove_tmpdir(dir);
}

/* Spec G item 68 at the configuration level. */
static void
check_rotation(struct kapi_conf *conf, const char *dir, const char *name)
{
	const int64_t now = 1000000;

	assert_string_equal(kapi_conf_token(conf, now), "tok1");
	put_file(dir, name, "tok2\n");
	assert_string_equal(kapi_conf_token(conf, now + 59999), "tok1");
	assert_string_equal(kapi_conf_token(conf, now + 60001), "tok2");
	put_file(dir, name, "tok3");
	assert_string_equal(kapi_conf_token(conf, now + 60002), "tok2");
	kapi_conf_token_invalidate(conf);
	assert_string_equal(kapi_conf_token(conf, now + 60003), "tok3");
	/* A failed re-read keeps the last good token. */
	put_file(dir, name, "");
	kapi_conf_token_invalidate(conf);
	assert_string_equal(kapi_conf_token(conf, now + 60004), "tok3");
}

static void
test_token_rotation(void **state)
{
	struct kapi_conf *conf;
	char err[512], *dir = make_sa_dir(NULL, NULL), *kc;

	(void)state;
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	conf = kapi_conf_in_cluster(dir, err, sizeof(err));
	assert_non_null(conf);
	check_rotation(conf, dir, "token");
	kapi_conf_free(conf);

	/* The same through a kubeconfig tokenFile (relative path). */
	put_file(dir, "sa-token", "tok1\n");
	put_file(dir, "config",
	        CTX "{cluster: c, user: u}}]\nclusters: [{name: c, cluster: "
	            "{server: 'https://h'}}]\nusers: [{name: u, user: "
	            "{tokenFile: sa-token, token: static}}]\n");
	kc = xasprintf("%s/config", dir);
	conf = load_ok(kc, NULL);
	assert_string_equal(conf->token, "tok1");
	check_rotation(conf, dir, "sa-token");
	kapi_conf_free(conf);
	free(kc);
	remove_tmpdir(dir);
}

static void
test_load_order(void **state)
{
	struct kapi_conf *conf;
	char err[512], *home = make_tmpdir(), *kube;

	(void)state;
	/* Explicit path: used as is, must exist, no splitting. */
	setenv("KUBECONFIG", DATA "/json.json", 1);
	conf = kapi_conf_load(DATA "/full/config", "main", err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf->context, "main");
	kapi_conf_free(conf);
	assert_null(kapi_conf_load(DATA "/missing", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot read kubeconfig"));
	assert_null(kapi_conf_load(
	        DATA "/a/config:" DATA "/b/config", NULL, err, sizeof(err)));

	/* $KUBECONFIG list. */
	setenv("KUBECONFIG", DATA "/a/config:" DATA "/b/config", 1);
	conf = kapi_conf_load(NULL, NULL, err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf->context, "ctx-b");
	kapi_conf_free(conf);

	/* Empty KUBECONFIG, no in-cluster env: ~/.kube/config. */
	setenv("KUBECONFIG", "", 1);
	setenv("HOME", home, 1);
	assert_null(kapi_conf_load(NULL, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no configuration has been provided"));
	kube = xasprintf("%s/.kube", home);
	assert_int_equal(mkdir(kube, 0700), 0);
	put_file(kube, "config",
	        "current-context: j\n"
	        "contexts: [{name: j, context: {cluster: c}}]\n"
	        "clusters: [{name: c, cluster: {server: "
	        "'https://home:6443'}}]\n");
	conf = kapi_conf_load(NULL, NULL, err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf->server, "https://home:6443");
	kapi_conf_free(conf);

	/* In-cluster env set but no service-account files here: falls back
	 * to ~/.kube/config, and reports the in-cluster error without it. */
	if (access(KAPI_SA_DIR "/token", F_OK) != 0) {
		setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
		setenv("KUBERNETES_SERVICE_PORT", "443", 1);
		conf = kapi_conf_load(NULL, NULL, err, sizeof(err));
		assert_non_null(conf);
		assert_string_equal(conf->server, "https://home:6443");
		kapi_conf_free(conf);
		setenv("HOME", "/nonexistent-home", 1);
		assert_null(kapi_conf_load(NULL, NULL, err, sizeof(err)));
		assert_non_null(
		        strstr(err, "cannot read service-account token"));
	}
	free(kube);
	remove_tmpdir(home);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_merge_first_wins, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_list_skips_missing_and_empty, env_save,
		        env_restore),
		cmocka_unit_test_setup_teardown(
		        test_every_field, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_json_kubeconfig, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_base64, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_errors, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_in_cluster, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_in_cluster_env_missing, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_token_rotation, env_save, env_restore),
		cmocka_unit_test_setup_teardown(
		        test_load_order, env_save, env_restore),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
