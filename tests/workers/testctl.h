/*
 * testctl.h: the contract of the test controller "testctl" between its
 * two halves, both linked only into test binaries: the reconciler
 * (testctl.c, in bin/tests/sympozium-worker-test) and its watch table
 * (testctl_contract.c, in bin/tests/sympoziumd-test and the unit tests,
 * through contract_extra of common/contract.h).  Prefix TESTCTL_.
 */
#ifndef TESTCTL_H
#define TESTCTL_H

/* The primary: ConfigMaps with this label. */
#define TESTCTL_LABEL_ENABLED "testctl.sympozium.ai/enabled"
/* The child label: on the <name>-out ConfigMaps it writes. */
#define TESTCTL_LABEL_OUT "testctl.sympozium.ai/out"
/* The label of a pod whose log log:POD of the object NAME may read:
 * NAME (the view table's own objects, testctl_contract.c). */
#define TESTCTL_LABEL_RUN "testctl.sympozium.ai/run"
/* The annotation that chooses a reconcile's behaviour (testctl.c). */
#define TESTCTL_ANN_ACTION "testctl.sympozium.ai/action"

#endif
