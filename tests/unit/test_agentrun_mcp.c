/*
 * test_agentrun_mcp.c: an AgentRun's MCP entries completed from their
 * MCPServer (kept, dropped, fields copied only where unset) and the exact
 * mcp-servers.yaml text (quoting, auth, headers sorted, empty lists
 * omitted, timeout default).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/yamlj.h"
#include "tests/lib/fakesup.h"
#include "workers/agentrun_mcp.h"

#define SERVER(ready, url)                                                    \
	"{\"metadata\":{\"name\":\"gh\"},\"spec\":{\"toolsPrefix\":\"srv\","  \
	"\"timeout\":45,\"toolsAllow\":[\"a\"],\"toolsDeny\":[\"d\"]},"       \
	"\"status\":{\"ready\":" ready ",\"url\":\"" url "\"}}"

static json_object *
resolve(const char *entry, const char *server)
{
	json_object *e = json_tokener_parse(entry);
	json_object *s = server != NULL ? json_tokener_parse(server) : NULL;
	json_object *r = agentrun_mcp_resolve(e, s);

	json_object_put(e);
	json_object_put(s);
	return (r);
}

static void
test_resolve(void **state)
{
	json_object *r;

	(void)state;
	/* an explicit url is kept as is, whatever the server says */
	r = resolve("{\"name\":\"x\",\"url\":\"http://x\",\"toolsPrefix\":"
	            "\"x\"}",
	        NULL);
	fakesup_assert_json(r,
	        "{\"name\":\"x\",\"url\":\"http://x\",\"toolsPrefix\":\"x\"}");
	json_object_put(r);
	/* dropped: no server, not ready, no url */
	assert_null(resolve("{\"name\":\"gh\",\"toolsPrefix\":\"g\"}", NULL));
	assert_null(resolve("{\"name\":\"gh\",\"toolsPrefix\":\"g\"}",
	        SERVER("false", "http://gh:8080")));
	assert_null(resolve("{\"name\":\"gh\",\"toolsPrefix\":\"g\"}",
	        SERVER("true", "")));
	/* url from status; unset fields from the server's spec */
	r = resolve("{\"name\":\"gh\",\"toolsPrefix\":\"g\",\"timeout\":0,"
	            "\"toolsDeny\":[]}",
	        SERVER("true", "http://gh.ns.svc:8080/mcp"));
	fakesup_assert_json(r,
	        "{\"name\":\"gh\",\"toolsPrefix\":\"g\",\"timeout\":45,"
	        "\"toolsDeny\":[\"d\"],\"url\":\"http://gh.ns.svc:8080/mcp\","
	        "\"toolsAllow\":[\"a\"]}");
	json_object_put(r);
	r = resolve("{\"name\":\"gh\",\"timeout\":5}",
	        SERVER("true", "http://gh"));
	fakesup_assert_json(r,
	        "{\"name\":\"gh\",\"timeout\":5,\"url\":\"http://gh\","
	        "\"toolsPrefix\":\"srv\",\"toolsAllow\":[\"a\"],"
	        "\"toolsDeny\":[\"d\"]}");
	json_object_put(r);
}

static void
test_auth_env(void **state)
{
	char *e = agentrun_mcp_auth_env("git-hub.x");

	(void)state;
	assert_string_equal(e, "MCP_AUTH_GIT_HUB.X");
	free(e);
}

static void
test_yaml(void **state)
{
	json_object *s = json_tokener_parse(
	        "[{\"name\":\"git-hub\",\"url\":\"http://gh.ns.svc:8080/mcp\","
	        "\"toolsPrefix\":\"gh\",\"timeout\":0,\"authSecret\":\"tok\","
	        "\"headers\":{\"X-B\":\"two words\",\"X-A\":\"1\"},"
	        "\"toolsAllow\":[\"list_issues\",\"true\"],\"toolsDeny\":[]},"
	        "{\"name\":\"k8s\",\"url\":\"http://k8s\",\"toolsPrefix\":"
	        "\"k: 8\",\"timeout\":12,\"headers\":{}}]");
	char *y = agentrun_mcp_yaml(s);
	json_object *back = NULL;
	char err[256];

	(void)state;
	assert_string_equal(y,
	        "servers:\n"
	        "  - name: git-hub\n"
	        "    url: http://gh.ns.svc:8080/mcp\n"
	        "    toolsPrefix: gh\n"
	        "    timeout: 30\n"
	        "    auth:\n"
	        "      type: bearer\n"
	        "      tokenEnv: MCP_AUTH_GIT_HUB\n"
	        "    headers:\n"
	        "      X-A: \"1\"\n"
	        "      X-B: \"two words\"\n"
	        "    toolsAllow:\n"
	        "      - list_issues\n"
	        "      - \"true\"\n"
	        "  - name: k8s\n"
	        "    url: http://k8s\n"
	        "    toolsPrefix: \"k: 8\"\n"
	        "    timeout: 12\n");
	/* it reads back as the same data */
	assert_int_equal(
	        yamlj_parse_doc(y, strlen(y), &back, err, sizeof(err)), 0);
	fakesup_assert_json(back,
	        "{\"servers\":[{\"name\":\"git-hub\",\"url\":"
	        "\"http://gh.ns.svc:8080/mcp\",\"toolsPrefix\":\"gh\","
	        "\"timeout\":30,\"auth\":{\"type\":\"bearer\",\"tokenEnv\":"
	        "\"MCP_AUTH_GIT_HUB\"},\"headers\":{\"X-A\":\"1\",\"X-B\":"
	        "\"two words\"},\"toolsAllow\":[\"list_issues\",\"true\"]},"
	        "{\"name\":\"k8s\",\"url\":\"http://k8s\",\"toolsPrefix\":"
	        "\"k: 8\",\"timeout\":12}]}");
	json_object_put(back);
	free(y);
	json_object_put(s);
	y = agentrun_mcp_yaml(NULL);
	assert_string_equal(y, "servers:\n");
	free(y);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_auth_env),
		cmocka_unit_test(test_yaml),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
