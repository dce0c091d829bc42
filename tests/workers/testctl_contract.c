/*
 * testctl_contract.c: the test controller's watches (ConfigMaps that ask
 * for it, and its outputs), added to the table of common/contract.h
 * through contract_extra.  Linked only into test binaries
 * (bin/tests/sympoziumd-test, the unit tests), never into bin/sympoziumd.
 */
#include "common/contract.h"
#include "tests/workers/testctl.h"

static const struct contract_watch watches[] = {
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, TESTCTL_LABEL_ENABLED,
	        CONTRACT_PRIMARY },
	{ "ConfigMap", CONTRACT_RES_CONFIGMAPS, TESTCTL_LABEL_OUT,
	        CONTRACT_CHILD },
};

/* its views: ConfigMaps (view:, switch:, views:), Secrets' metadata
 * (secret:) and its own pods' logs (log:) of the key's namespace */
static const struct contract_view views[] = {
	{ CONTRACT_RES_PODS, CONTRACT_VIEW_LOG, CONTRACT_VIEW_KEY_NS,
	        TESTCTL_LABEL_RUN },
	{ CONTRACT_RES_CONFIGMAPS, CONTRACT_VIEW_GET, CONTRACT_VIEW_KEY_NS,
	        NULL },
	{ CONTRACT_RES_SECRETS, CONTRACT_VIEW_SECRET, CONTRACT_VIEW_KEY_NS,
	        NULL },
};

/* its <name>-out ConfigMaps (labelled "true", owned by the primary) and
 * Events about the primary */
static const struct contract_write writes[] = {
	{ .res = CONTRACT_RES_EVENTS,
	        .ops = CONTRACT_W_EVENT,
	        .own = CONTRACT_OWN_SELF },
	{ .res = CONTRACT_RES_CONFIGMAPS,
	        .ops = CONTRACT_W_CREATE | CONTRACT_W_DELETE,
	        .own = CONTRACT_OWN_CHILD,
	        .label = TESTCTL_LABEL_OUT,
	        .any_value = true },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct contract_ctrl testctl = { .name = "testctl",
	.watches = watches,
	.nwatches = NELEM(watches),
	.writes = writes,
	.nwrites = NELEM(writes),
	.views = views,
	.nviews = NELEM(views) };

const struct contract_ctrl *const contract_extra[] = { &testctl, NULL };
