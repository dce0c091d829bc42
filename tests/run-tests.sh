#!/usr/bin/env bash
# run-tests.sh: runs every test program and prints one closing line
# "N passed, N failed".  Unit tests are the cmocka programs in $BIN/tests/;
# integration tests are executables tests/integration/*.sh (each prints its
# own cmocka-style "[  PASSED  ] N" / "[  FAILED  ] N" lines or exits non-zero).
# A program that crashes counts every test it did not report as passed as
# failed.  Exit status is non-zero when anything failed.  The programs'
# logs go to $BUILD_LOGDIR, else to a /tmp directory removed after a clean
# run.
set -u
BIN=${BIN:-bin}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
cd "$(dirname "$0")/.." || exit 1
# The shared reference tree (upstream CRDs and samples) beside the clone.
if [ -z "${SHARED_DIR:-}" ] && [ -d ../shared ]; then
	SHARED_DIR=$(cd ../shared && pwd)
fi
export SHARED_DIR=${SHARED_DIR:-}
# Black-box tests start the local API server from here.
export KUBESIM=${KUBESIM:-$PWD/$BIN/kubesim}
export WORKER_TEST_BIN=${WORKER_TEST_BIN:-$PWD/$BIN/tests/sympozium-worker-test}
export SYMPOZIUMD=${SYMPOZIUMD:-$PWD/$BIN/sympoziumd}
export SYMPOZIUMCTL=${SYMPOZIUMCTL:-$PWD/$BIN/sympoziumctl}
logdir=${BUILD_LOGDIR:-$(mktemp -d /tmp/sympozium-tests.XXXXXX)}
passed=0
failed=0
failures=()

count() { # name logfile exitcode
	local name=$1 log=$2 rc=$3 run ok
	run=$(sed -n 's/^\[==========\] Running \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	ok=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	if [ "$run" -eq 0 ]; then
		run=1
		[ "$rc" -eq 0 ] && ok=1
	fi
	local bad=$((run - ok))
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$bad" -gt 0 ] || [ "$rc" -ne 0 ]; then
		[ "$bad" -eq 0 ] && { failed=$((failed + 1)); bad=1; }
		failures+=("$name ($bad failed, exit $rc; log $log)")
		grep -E '^\[  (FAILED|ERROR) +\]|^\[  FAILED  \]|ERROR|Sanitizer|runtime error' "$log" | head -20
	fi
	printf '%-40s %3d run, %3d passed, exit %d\n' "$name" "$run" "$ok" "$rc"
}

for t in "$BIN"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	log="$logdir/$name.log"
	timeout -k 10 "$TEST_TIMEOUT" "$t" >"$log" 2>&1
	count "$name" "$log" $?
done
for t in tests/integration/*.sh; do
	[ -x "$t" ] || continue
	name=$(basename "$t" .sh)
	log="$logdir/$name.log"
	BIN=$BIN timeout -k 10 "$TEST_TIMEOUT" "$t" >"$log" 2>&1
	count "$name" "$log" $?
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
fi
# The logs are kept when something failed (the lines above name them) or
# when the caller chose the directory; a clean run leaves nothing in /tmp.
if [ "$failed" -eq 0 ] && [ -z "${BUILD_LOGDIR:-}" ]; then
	rm -rf "$logdir"
else
	echo "logs: $logdir"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
