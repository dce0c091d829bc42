/*
 * mcpserver.h: the MCPServer reconciler (spec sympozium-controllers.md
 * section 6): an external URL is reported as ready; a managed server gets
 * a Deployment and a Service named like it, and status ready/url/toolCount
 * with the Deployed and Ready conditions.  Prefix mcpserver_.
 */
#ifndef MCPSERVER_H
#define MCPSERVER_H

#include "workers/reconcile.h"

/* Labels of the pods (and selector); the Deployment and Service carry
 * them too, plus CONTRACT_LABEL_MCP_SERVER=<name> (common/contract.h) for
 * the supervisor's watch. */
#define MCPSERVER_REQUEUE_MS 5000 /* while the Deployment is not ready */
/* after adopting children upstream made (their watch event comes first) */
#define MCPSERVER_ADOPT_MS 1000

/* --controller mcpserver.  The stdio adapter's image is
 * <SYMPOZIUM_IMAGE_REGISTRY>/mcp-bridge:<SYMPOZIUM_IMAGE_TAG>, each env
 * var falling back to the defaults of kobj_image(). */
extern const struct reconciler mcpserver_reconciler;

#endif
