/*
 * test_kapi_exec.c: exec credential plugins (common/kapi_exec.c): the
 * kubeconfig stanza (apiVersion, interactiveMode by version, a relative
 * command, args and env), KUBERNETES_EXEC_INFO, the ExecCredential a
 * plugin prints (every way it can be wrong), and runs of small /bin/sh
 * plugins: a credential, a plugin not found (with its install hint), a
 * non-zero exit, interactiveMode Always refused.  Every error names the
 * plugin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/kapi_exec.h"

#define V1 "client.authentication.k8s.io/v1"

static struct kapi_exec *
parse(const char *json, char *err, size_t n)
{
	json_object *o = json_tokener_parse(json);
	struct kapi_exec *x;

	assert_non_null(o);
	x = kapi_exec_parse(o, "u", "/kc", err, n);
	json_object_put(o);
	return (x);
}

static void
refused(const char *json, const char *want)
{
	char err[512] = "";

	assert_null(parse(json, err, sizeof(err)));
	if (strstr(err, want) == NULL
	        || strncmp(err, "exec plugin \"u\": ", 17) != 0) {
		fail_msg("%s: got \"%s\", want \"%s\"", json, err, want);
	}
}

static void
test_parse(void **state)
{
	char err[512];
	struct kapi_exec *x;

	(void)state;
	x = parse("{\"apiVersion\":\"" V1 "\",\"command\":\"bin/cred\","
	          "\"args\":[\"get\",\"token\"],\"env\":[{\"name\":\"A\","
	          "\"value\":\"1\"}],\"interactiveMode\":\"Never\","
	          "\"provideClusterInfo\":true,\"installHint\":\"apt install "
	          "x\"}",
	        err, sizeof(err));
	assert_non_null(x);
	/* a relative command with a slash: from the kubeconfig's dir */
	assert_string_equal(x->command, "/kc/bin/cred");
	assert_string_equal(x->args[0], "/kc/bin/cred");
	assert_string_equal(x->args[2], "token");
	assert_null(x->args[3]);
	assert_string_equal(x->env[0], "A=1");
	assert_int_equal(x->interactive, KAPI_EXEC_NEVER);
	assert_true(x->provide_cluster_info);
	kapi_exec_free(x);
	/* a bare name: $PATH; v1beta1's default mode */
	x = parse("{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
	          "\"command\":\"aws\"}",
	        err, sizeof(err));
	assert_string_equal(x->command, "aws");
	assert_int_equal(x->interactive, KAPI_EXEC_IF_AVAILABLE);
	kapi_exec_free(x);
	refused("{\"apiVersion\":\"" V1 "\",\"command\":\"aws\"}",
	        "interactiveMode must be specified");
	refused("{\"apiVersion\":\"client.authentication.k8s.io/v1alpha1\","
	        "\"command\":\"aws\"}",
	        "is not supported");
	refused("{\"apiVersion\":\"" V1 "\",\"interactiveMode\":\"Never\"}",
	        "no command");
	refused("{\"apiVersion\":\"" V1 "\",\"command\":\"a\","
	        "\"interactiveMode\":\"Sometimes\"}",
	        "invalid interactiveMode");
	refused("{\"apiVersion\":\"" V1 "\",\"command\":\"a\","
	        "\"interactiveMode\":\"Never\",\"args\":[1]}",
	        "args must be strings");
	refused("{\"apiVersion\":\"" V1 "\",\"command\":\"a\","
	        "\"interactiveMode\":\"Never\",\"env\":[{\"value\":\"x\"}]}",
	        "env entries");
	refused("{\"apiVersion\":\"" V1 "\",\"command\":7}",
	        "must be an object");
}

static void
test_info(void **state)
{
	char err[512], *s;
	struct kapi_exec *x = parse("{\"apiVersion\":\"" V1 "\",\"command\":"
	                            "\"a\",\"interactiveMode\":\"Never\"}",
	        err, sizeof(err));

	(void)state;
	s = kapi_exec_info(x, "https://h:6443", "PEM", 3, false, NULL);
	assert_string_equal(s,
	        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
	        "\"spec\":{\"interactive\":false}}");
	free(s);
	x->provide_cluster_info = true;
	s = kapi_exec_info(x, "https://h:6443", "PEM", 3, true, "h");
	assert_non_null(strstr(s,
	        "\"cluster\":{\"server\":\"https://h:6443\","
	        "\"tls-server-name\":\"h\","
	        "\"insecure-skip-tls-verify\":true,"
	        "\"certificate-authority-data\":\"UEVN\"}"));
	free(s);
	kapi_exec_free(x);
}

static void
output(struct kapi_exec *x, const char *text, const char *want)
{
	struct kapi_exec_cred c;
	char err[512] = "";

	assert_int_equal(
	        kapi_exec_parse_output(x, text, &c, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL) {
		fail_msg("%s: got \"%s\", want \"%s\"", text, err, want);
	}
}

static void
test_output(void **state)
{
	char err[512];
	struct kapi_exec *x = parse("{\"apiVersion\":\"" V1 "\",\"command\":"
	                            "\"a\",\"interactiveMode\":\"Never\"}",
	        err, sizeof(err));
	struct kapi_exec_cred c;

	(void)state;
	assert_int_equal(kapi_exec_parse_output(x,
	                         "{\"apiVersion\":\"" V1 "\",\"kind\":"
	                         "\"ExecCredential\",\"status\":{\"token\":"
	                         "\"t\",\"expirationTimestamp\":"
	                         "\"2026-01-01T00:00:00Z\"}}",
	                         &c, err, sizeof(err)),
	        0);
	assert_string_equal(c.token, "t");
	assert_int_equal(c.expires_ms, 1767225600000LL);
	assert_null(c.cert_pem);
	kapi_exec_cred_fini(&c);
	assert_int_equal(kapi_exec_parse_output(x,
	                         "{\"apiVersion\":\"" V1 "\",\"kind\":"
	                         "\"ExecCredential\",\"status\":{"
	                         "\"clientCertificateData\":\"C\","
	                         "\"clientKeyData\":\"K\"}}",
	                         &c, err, sizeof(err)),
	        0);
	assert_string_equal(c.cert_pem, "C");
	assert_string_equal(c.key_pem, "K");
	assert_int_equal(c.expires_ms, 0);
	kapi_exec_cred_fini(&c);
	output(x, "nope", "not a JSON object");
	output(x, "{\"apiVersion\":\"v1\",\"kind\":\"ExecCredential\"}",
	        "apiVersion \"v1\"");
	output(x, "{\"apiVersion\":\"" V1 "\",\"kind\":\"Secret\"}",
	        "kind \"Secret\"");
	output(x, "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\"}",
	        "no status");
	output(x,
	        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
	        "\"status\":{}}",
	        "neither a token");
	output(x,
	        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
	        "\"status\":{\"clientCertificateData\":\"C\"}}",
	        "both be present");
	output(x,
	        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
	        "\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"soon\"}"
	        "}",
	        "not RFC 3339");
	output(x,
	        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
	        "\"status\":{\"token\":5}}",
	        "must be strings");
	kapi_exec_free(x);
}

static void
test_run(void **state)
{
	char err[512];
	struct kapi_exec_cred c;
	struct kapi_exec *x = parse(
	        "{\"apiVersion\":\"" V1 "\",\"command\":\"/bin/sh\","
	        "\"interactiveMode\":\"IfAvailable\",\"args\":[\"-c\","
	        "\"printf '{\\\"apiVersion\\\":\\\"%s\\\",\\\"kind\\\":"
	        "\\\"ExecCredential\\\",\\\"status\\\":{\\\"token\\\":"
	        "\\\"%s\\\"}}' \\\"$V\\\" \\\"$KUBERNETES_EXEC_INFO\\\" | "
	        "sed 's/\\\"{/\\\"x/; s/}\\\"}}/\\\"}}/'\"],"
	        "\"env\":[{\"name\":\"V\",\"value\":\"" V1 "\"}]}",
	        err, sizeof(err));

	(void)state;
	assert_non_null(x);
	assert_int_equal(kapi_exec_run(x, "{}", &c, err, sizeof(err)), 0);
	assert_string_equal(c.token, "x");
	kapi_exec_cred_fini(&c);
	kapi_exec_free(x);
	x = parse(
	        "{\"apiVersion\":\"" V1 "\",\"command\":\"no-such-plugin-x\","
	        "\"interactiveMode\":\"Never\",\"installHint\":\"see docs\"}",
	        err, sizeof(err));
	assert_int_equal(kapi_exec_run(x, "{}", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err,
	        "exec plugin \"u\": no-such-plugin-x could "
	        "not be run (not found?): see docs"));
	kapi_exec_free(x);
	x = parse("{\"apiVersion\":\"" V1 "\",\"command\":\"/bin/false\","
	          "\"interactiveMode\":\"Never\"}",
	        err, sizeof(err));
	assert_int_equal(kapi_exec_run(x, "{}", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/bin/false exited with status 1"));
	x->interactive = KAPI_EXEC_ALWAYS;
	assert_int_equal(kapi_exec_run(x, "{}", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "needs a terminal"));
	kapi_exec_free(x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_run),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
