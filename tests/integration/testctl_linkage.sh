#!/usr/bin/env bash
# testctl_linkage.sh: the test controller is linked only into test
# binaries.  bin/sympoziumd and bin/sympozium-worker define neither
# contract_extra nor rec_extra (the weak symbols the test controller's two
# halves fill), hold no "testctl" string, refuse --controllers testctl and
# do not list it; bin/tests/sympoziumd-test and
# bin/tests/sympozium-worker-test have it.  Output is cmocka-style for
# tests/run-tests.sh.
set -u

BIN=${BIN:-bin}
# shellcheck source=tests/lib/shtest.sh
. "$(dirname "$0")/../lib/shtest.sh"

for b in sympoziumd sympozium-worker tests/sympoziumd-test \
	tests/sympozium-worker-test; do
	if [ ! -x "$BIN/$b" ]; then
		echo "$BIN/$b is missing: run make all" >&2
		exit 1
	fi
done
if ! command -v nm >/dev/null || ! command -v strings >/dev/null; then
	echo "[  SKIPPED ] testctl_linkage (no nm or strings)"
	echo "[  SKIPPED ] 1 test(s)"
	trap - EXIT
	rm -rf "$dir"
	exit 0
fi

# defines BIN SYMBOL: nm lists SYMBOL as defined (not "w"/"U") in BIN.
defines() {
	nm "$1" | awk -v s="$2" '$NF == s && NF == 3 { f = 1 } END { exit !f }'
}
no_extra() { # BIN SYMBOL
	! defines "$1" "$2" && ! strings -a "$1" | grep -q testctl
}
has_extra() { # BIN SYMBOL
	defines "$1" "$2" && strings -a "$1" | grep -q testctl
}
refuses() { # the product supervisor does not know testctl
	! "$BIN/sympoziumd" --controllers testctl \
		--kubeconfig "$dir/none" 2>"$dir/err" &&
		grep -q 'unknown controller "testctl"' "$dir/err"
}
accepts() { # the test supervisor does (and fails on the kubeconfig)
	! "$BIN/tests/sympoziumd-test" --controllers testctl \
		--kubeconfig "$dir/none" 2>"$dir/err" &&
		! grep -q 'unknown controller' "$dir/err" &&
		grep -q kubeconfig "$dir/err"
}
lists() { # WORKER: whether --list-controllers names testctl
	"$1" --list-controllers | grep -qx testctl
}

check sympoziumd_has_no_testctl no_extra "$BIN/sympoziumd" contract_extra
check worker_has_no_testctl no_extra "$BIN/sympozium-worker" rec_extra
check test_supervisor_has_testctl has_extra "$BIN/tests/sympoziumd-test" \
	contract_extra
check test_worker_has_testctl has_extra "$BIN/tests/sympozium-worker-test" \
	rec_extra
check sympoziumd_refuses_testctl refuses
check test_supervisor_accepts_testctl accepts
check worker_lists_no_testctl eval "! lists $BIN/sympozium-worker"
check test_worker_lists_testctl lists "$BIN/tests/sympozium-worker-test"
