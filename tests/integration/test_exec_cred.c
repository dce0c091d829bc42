/*
 * test_exec_cred.c: exec credential plugins (common/kapi_exec.c) against
 * bin/kubesim with TLS and a bearer token, through the kapi client the
 * supervisor uses.  The plugin is a shell script the test writes; it
 * counts its runs, keeps each KUBERNETES_EXEC_INFO it was given, and
 * prints an ExecCredential whose token and lifetime its environment (the
 * kubeconfig's exec.env) decides.  Checked:
 *  - the first request runs the plugin; its first token is stale, the 401
 *    reruns it once and the request succeeds; the plugin saw
 *    interactive false and (provideClusterInfo) the server and its CA;
 *  - the credential is cached: more requests, no run, until its
 *    expirationTimestamp has passed, then one run;
 *  - a plugin that prints garbage, or exits 1, fails the request (401)
 *    with a log line naming the plugin and what was wrong;
 *  - a v1beta1 plugin giving a client certificate and key as well: both
 *    end up in the configuration the client uses.
 */
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
#include "common/kapi.h"
#include "common/kapi_conf.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"

#define TOKEN   "exec-cred-token"
#define WAIT_MS 10000

static struct ksim_api A;
static const struct kapi_res R_NS = { "", "v1", "namespaces", false };

static const char plugin[]
        = "#!/bin/sh\n"
          "n=$(cat \"$PDIR/count\" 2>/dev/null || echo 0)\n"
          "n=$((n + 1))\n"
          "echo $n >\"$PDIR/count\"\n"
          "printf '%s' \"$KUBERNETES_EXEC_INFO\" >\"$PDIR/info.$n\"\n"
          "case $MODE in\n"
          "garbage) echo 'not json'; exit 0 ;;\n"
          "fail) echo 'no credentials for you' >&2; exit 1 ;;\n"
          "esac\n"
          "tok=$GOOD\n"
          "[ \"$n\" = 1 ] && [ -n \"$STALE_FIRST\" ] && tok=stale\n"
          "exp=$(date -u -d \"+${TTL:-3600} seconds\" "
          "+%Y-%m-%dT%H:%M:%SZ)\n"
          "extra=\n"
          "[ -n \"$CERT\" ] && extra=\",\\\"clientCertificateData\\\":"
          "\\\"$(cat \"$CERT\" | sed ':a;N;$!ba;s/\\n/\\\\n/g')\\\","
          "\\\"clientKeyData\\\":\\\"$(cat \"$KEY\" | "
          "sed ':a;N;$!ba;s/\\n/\\\\n/g')\\\"\"\n"
          "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
          "\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"%s}}\\n'"
          " "
          "\"$API\" \"$tok\" \"$exp\" \"$extra\"\n";

static char pdir[256];

static int
setup(void **state)
{
	const char *args[] = { "--tls", "--token", TOKEN, NULL };
	char path[320];
	FILE *f;

	*state = &A;
	if (ksim_api_start(&A, args, "test_exec_cred/0", WAIT_MS) != 0) {
		return (-1);
	}
	snprintf(pdir, sizeof(pdir), "%s/plugin", A.dir);
	mkdir(pdir, 0700);
	snprintf(path, sizeof(path), "%s/cred.sh", pdir);
	f = fopen(path, "w");
	if (f == NULL || fputs(plugin, f) < 0 || fclose(f) != 0) {
		return (-1);
	}
	return (chmod(path, 0700));
}

static int
teardown(void **state)
{
	return (ksim_api_stop(*state));
}

/* A kubeconfig like kubesim's, its user the plugin with env (extra
 * "- name: X\n  value: Y" lines), apiVersion api; a new client over it
 * (*conf: its configuration). */
static struct kapi_client *
client(const char *sub, const char *api, const char *env,
        struct kapi_conf **conf)
{
	struct buf b = BUF_INIT;
	char path[384], err[512], *tok, *text;
	FILE *f;

	assert_int_equal(buf_read_file(&b, A.kubeconfig, 1 << 20), 0);
	text = xstrdup(buf_str(&b));
	tok = strstr(text, "    token: " TOKEN "\n");
	assert_non_null(tok);
	*tok = '\0';
	snprintf(path, sizeof(path), "%s/%s", pdir, sub);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/kubeconfig", pdir, sub);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
	        "%s    exec:\n      apiVersion: %s\n      command: "
	        "../cred.sh\n      interactiveMode: Never\n"
	        "      provideClusterInfo: true\n"
	        "      installHint: install cred.sh\n      env:\n"
	        "      - name: PDIR\n        value: %s/%s\n"
	        "      - name: API\n        value: %s\n"
	        "      - name: GOOD\n        value: " TOKEN "\n%s%s",
	        text, api, pdir, sub, api, env,
	        tok + strlen("    token: " TOKEN "\n"));
	fclose(f);
	free(text);
	buf_fini(&b);
	*conf = kapi_conf_from_kubeconfig(path, NULL, err, sizeof(err));
	if (*conf == NULL) {
		fail_msg("kubeconfig: %s", err);
	}
	return (kapi_client_new(*conf, "test_exec_cred/0"));
}

static int
runs(const char *sub)
{
	char path[384];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s/count", pdir, sub);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fscanf(f, "%d", &n) != 1) {
			n = -1;
		}
		fclose(f);
	}
	return (n);
}

static enum kapi_rc
get(struct kapi_client *c)
{
	json_object *o = NULL;
	enum kapi_rc rc = kapi_get(c, &R_NS, NULL, "default", &o, NULL);

	json_object_put(o);
	return (rc);
}

static char *
info(const char *sub, int n)
{
	struct buf b = BUF_INIT;
	char path[384];

	snprintf(path, sizeof(path), "%s/%s/info.%d", pdir, sub, n);
	assert_int_equal(buf_read_file(&b, path, 1 << 20), 0);
	return (buf_detach(&b, NULL));
}

static void
test_token_401_rerun(void **state)
{
	struct kapi_conf *conf;
	struct kapi_client *c;
	char *i;

	(void)state;
	c = client("a", "client.authentication.k8s.io/v1",
	        "      - name: STALE_FIRST\n        value: \"1\"\n", &conf);
	assert_int_equal(runs("a"), 0); /* lazily, on the first request */
	assert_int_equal(get(c), KAPI_OK);
	assert_int_equal(runs("a"), 2);
	i = info("a", 1);
	assert_non_null(strstr(i, "\"kind\":\"ExecCredential\""));
	assert_non_null(strstr(i, "\"interactive\":false"));
	assert_non_null(strstr(i, "\"server\":\"https://127.0.0.1:"));
	assert_non_null(strstr(i, "\"certificate-authority-data\":\""));
	free(i);
	/* cached: no run for the next requests */
	assert_int_equal(get(c), KAPI_OK);
	assert_int_equal(get(c), KAPI_OK);
	assert_int_equal(runs("a"), 2);
	kapi_client_free(c);
	kapi_conf_free(conf);
}

static void
test_expiry(void **state)
{
	struct kapi_conf *conf;
	struct kapi_client *c;

	(void)state;
	c = client("b", "client.authentication.k8s.io/v1",
	        "      - name: TTL\n        value: \"2\"\n", &conf);
	assert_int_equal(get(c), KAPI_OK);
	assert_int_equal(get(c), KAPI_OK);
	assert_int_equal(runs("b"), 1);
	ksim_sleep_ms(3100);
	assert_int_equal(get(c), KAPI_OK);
	assert_int_equal(runs("b"), 2);
	kapi_client_free(c);
	kapi_conf_free(conf);
}

/* The log lines written while fn runs. */
static void
bad_plugin(const char *sub, const char *mode, const char *want)
{
	struct kapi_conf *conf;
	struct kapi_client *c;
	char env[128], path[384];
	struct buf b = BUF_INIT;
	FILE *f;

	snprintf(env, sizeof(env), "      - name: MODE\n        value: %s\n",
	        mode);
	c = client(sub, "client.authentication.k8s.io/v1", env, &conf);
	snprintf(path, sizeof(path), "%s/%s/log", pdir, sub);
	f = fopen(path, "w+");
	assert_non_null(f);
	log_setfd(fileno(f));
	assert_int_equal(get(c), KAPI_EUNAUTHORIZED);
	log_setfd(-1);
	fclose(f);
	assert_int_equal(buf_read_file(&b, path, 1 << 20), 0);
	assert_non_null(strstr(buf_str(&b), "exec plugin \"kubesim\": "));
	if (strstr(buf_str(&b), want) == NULL) {
		fail_msg("log lacks \"%s\": %s", want, buf_str(&b));
	}
	buf_fini(&b);
	kapi_client_free(c);
	kapi_conf_free(conf);
}

static void
test_bad_plugins(void **state)
{
	(void)state;
	bad_plugin("c", "garbage", "not a JSON object");
	bad_plugin("d", "fail", "exited with status 1");
}

static void
test_client_cert(void **state)
{
	struct kapi_conf *conf;
	struct kapi_client *c;
	char env[1024], cert[320], key[320];
	struct buf want = BUF_INIT;
	FILE *f;

	(void)state;
	snprintf(cert, sizeof(cert), "%s/cert.pem", pdir);
	snprintf(key, sizeof(key), "%s/key.pem", pdir);
	f = fopen(cert, "w");
	fputs("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
	        f);
	fclose(f);
	f = fopen(key, "w");
	fputs("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
	        f);
	fclose(f);
	snprintf(env, sizeof(env),
	        "      - name: CERT\n        value: %s\n"
	        "      - name: KEY\n        value: %s\n",
	        cert, key);
	c = client("e", "client.authentication.k8s.io/v1beta1", env, &conf);
	assert_int_equal(kapi_conf_refresh(conf), 0);
	assert_int_equal(runs("e"), 1);
	assert_int_equal(buf_read_file(&want, cert, 4096), 0);
	assert_non_null(conf->cert_pem);
	/* the plugin's JSON carries the file without its last newline */
	assert_memory_equal(conf->cert_pem, buf_str(&want), want.len - 1);
	assert_non_null(strstr(conf->key_pem, "BEGIN PRIVATE KEY"));
	assert_string_equal(conf->token, TOKEN);
	buf_fini(&want);
	kapi_client_free(c);
	kapi_conf_free(conf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_401_rerun),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_bad_plugins),
		cmocka_unit_test(test_client_cert),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
