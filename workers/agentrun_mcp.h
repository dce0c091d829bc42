/*
 * agentrun_mcp.h: the MCP server list of an AgentRun (spec
 * sympozium-controllers.md 1.3 step 7): an instance's mcpServers entry
 * completed from its MCPServer, and the text of the ConfigMap key
 * mcp-servers.yaml.  Pure.  Prefix agentrun_mcp_.
 */
#ifndef AGENTRUN_MCP_H
#define AGENTRUN_MCP_H

#include <json-c/json.h>

#define AGENTRUN_MCP_KEY "mcp-servers.yaml"

/* The entry (an instance.spec.mcpServers item, borrowed) ready for the
 * ConfigMap.  An entry with a url is kept as is.  Otherwise server (the
 * MCPServer of that name, borrowed, NULL when there is none) must be
 * status.ready with a status.url: the url comes from it, and toolsPrefix,
 * timeout, toolsAllow, toolsDeny from its spec where the entry leaves
 * them unset.  Returns a new object (caller puts), or NULL when the entry
 * is dropped. */
json_object *agentrun_mcp_resolve(json_object *entry, json_object *server);

/* The environment variable holding a server's bearer token:
 * "MCP_AUTH_" + name upper-cased, '-' replaced by '_'.  Caller frees. */
char *agentrun_mcp_auth_env(const char *name);

/* The YAML document of resolved entries (an array, borrowed):
 * "servers:" then per entry name, url, toolsPrefix, timeout (30 when
 * <= 0), auth {type: bearer, tokenEnv} when authSecret is set, and
 * headers (sorted), toolsAllow, toolsDeny when not empty.  Caller frees. */
char *agentrun_mcp_yaml(json_object *servers);

#endif
