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

static const struct contract_ctrl testctl
        = { "testctl", NULL, watches, sizeof(watches) / sizeof(watches[0]) };

const struct contract_ctrl *const contract_extra[] = { &testctl, NULL };
