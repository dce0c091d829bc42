#!/usr/bin/env bash
# run-tests.sh: runs every test program and prints one closing line
# "N passed, N failed, N skipped".  Unit tests are the cmocka programs in
# $BIN/tests/; integration tests are executables tests/integration/*.sh
# (each prints its own cmocka-style "[  PASSED  ] N" / "[  FAILED  ] N"
# lines or exits non-zero).  A skipped test is one a program reports as
# "[  SKIPPED ] name" (cmocka's skip(); the scripts print the same line and
# "[  SKIPPED ] N test(s)" in their totals), or a whole program that exits
# 77 (automake's code) having reported nothing; skipped tests are listed
# by name and are not failures.  A program that crashes counts every test
# it did not report as passed or skipped as failed.  Exit status is
# non-zero when anything failed.  Tests that compare with the upstream
# reference tree ($SHARED_DIR, else ../shared beside the clone) skip where
# it is absent; under CI (CI set and non-empty) its absence is a failure.
# The programs' logs go to $BUILD_LOGDIR, else to a /tmp directory removed
# after a clean run.
set -u
BIN=${BIN:-bin}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
cd "$(dirname "$0")/.." || exit 1
# The shared reference tree (upstream CRDs and samples) beside the clone.
if [ -z "${SHARED_DIR:-}" ] && [ -d ../shared ]; then
	SHARED_DIR=$(cd ../shared && pwd)
fi
export SHARED_DIR=${SHARED_DIR:-}
upstream=${SHARED_DIR:-../shared}/upstream/sympozium-v1alpha1
# Black-box tests start the local API server from here.
export KUBESIM=${KUBESIM:-$PWD/$BIN/kubesim}
export WORKER_TEST_BIN=${WORKER_TEST_BIN:-$PWD/$BIN/tests/sympozium-worker-test}
# The supervisor under test: sympoziumd plus the test controller.
export SYMPOZIUMD=${SYMPOZIUMD:-$PWD/$BIN/tests/sympoziumd-test}
export SYMPOZIUMCTL=${SYMPOZIUMCTL:-$PWD/$BIN/sympoziumctl}
export HOSTILE_WORKER=${HOSTILE_WORKER:-$PWD/$BIN/hostile/sympozium-worker-hostile}
logdir=${BUILD_LOGDIR:-$(mktemp -d /tmp/sympozium-tests.XXXXXX)}
passed=0
failed=0
skipped=0
failures=()
skipped_names=()

sum_of() { # SED-SCRIPT LOG: the sum of the numbers the script prints
	sed -n "$1" "$2" | awk '{s+=$1} END {print s+0}'
}

count() { # name logfile exitcode
	local name=$1 log=$2 rc=$3 run ok skip names
	run=$(sum_of 's/^\[==========\] Running \([0-9]*\) test.*/\1/p' "$log")
	ok=$(sum_of 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
	skip=$(sum_of 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' "$log")
	names=$(grep -E '^\[  SKIPPED \] ' "$log" | grep -vE '^\[  SKIPPED \] [0-9]+ test\(s\)' |
		sed 's/^\[  SKIPPED \] //' | awk '!seen[$0]++')
	if [ "$run" -eq 0 ] && [ "$rc" -eq 77 ]; then
		run=1 skip=1 rc=0 names=$name
	elif [ "$run" -eq 0 ]; then
		run=1
		[ "$rc" -eq 0 ] && ok=1
	fi
	local bad=$((run - ok - skip))
	passed=$((passed + ok))
	failed=$((failed + bad))
	skipped=$((skipped + skip))
	while IFS= read -r n; do
		[ -n "$n" ] && skipped_names+=("$name: $n")
	done <<<"$names"
	if [ "$bad" -gt 0 ] || [ "$rc" -ne 0 ]; then
		[ "$bad" -eq 0 ] && { failed=$((failed + 1)); bad=1; }
		failures+=("$name ($bad failed, exit $rc; log $log)")
		grep -E '^\[  (FAILED|ERROR) +\]|^\[  FAILED  \]|ERROR|Sanitizer|runtime error' "$log" | head -20
	fi
	printf '%-40s %3d run, %3d passed, exit %d%s\n' "$name" "$run" "$ok" "$rc" \
		"$([ "$skip" -gt 0 ] && echo ", $skip skipped")"
}

if [ -d "$upstream" ]; then
	echo "upstream reference tree: $(cd "$upstream" && pwd)"
else
	echo "upstream reference tree: absent (no $upstream; set SHARED_DIR): tests that compare with it are skipped"
	if [ -n "${CI:-}" ]; then
		failed=$((failed + 1))
		failures+=("upstream_tree (CI needs $upstream)")
	fi
fi
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

if [ ${#skipped_names[@]} -gt 0 ]; then
	echo "skipped:"
	printf '  %s\n' "${skipped_names[@]}"
fi
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
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
