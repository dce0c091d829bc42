#!/usr/bin/env bash
# run-valgrind.sh: `make valgrind`.  Runs every unit test ($BIN/tests/test_*
# built from tests/unit/ or kubesim/tests/unit/) under valgrind memcheck,
# VG_JOBS at a time, then one short integration run: $VG_INTEG (default
# test_operator; empty: none) with sympoziumd and every worker it starts
# under valgrind too (the suite's other integration tests are not run).
# A test passes when cmocka says so AND every valgrind log it produced
# reports zero errors (leaks of kinds definite, indirect and possible count
# as errors) AND every valgrinded process finished its own leak check (a
# process killed before exit, e.g. by SIGKILL, leaves a log without ERROR
# SUMMARY and fails the test).  Prints "N passed, N failed, N skipped" like
# run-tests.sh (cmocka's skipped tests are not failures).
#
# Workers run with their seccomp sandbox off (--no-worker-sandbox): the
# sandbox kills syscalls valgrind itself makes.  Suppressions, only for
# library noise: tests/valgrind.supp.
set -u
BIN=${BIN:-build/vg/bin}
VG_JOBS=${VG_JOBS:-2}
VG_INTEG=${VG_INTEG-test_operator}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
VALGRIND=${VALGRIND:-valgrind}
# VG_UNITS="test_a test_b": only those unit tests (default: all).
# Not run under valgrind: test_sandbox checks that the seccomp filter kills
# its children, and valgrind's own syscalls (and its signal handling)
# change what the filter sees and how the children die.
VG_SKIP=${VG_SKIP-test_sandbox}
# Run alone after the others: their timing assertions (e.g. test_kapi's
# "five 300 ms GETs in < 1.4 s") need the CPU.
VG_ALONE=${VG_ALONE-test_kapi}
VG_SLOW=${VG_SLOW-test_kapi_watch test_crds test_timefmt test_kschema test_cache}
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
if [ -z "${SHARED_DIR:-}" ] && [ -d ../shared ]; then
	SHARED_DIR=$(cd ../shared && pwd)
fi
export SHARED_DIR=${SHARED_DIR:-}
export KUBESIM=${KUBESIM:-$ROOT/$BIN/kubesim}
export WORKER_TEST_BIN=${WORKER_TEST_BIN:-$ROOT/$BIN/tests/sympozium-worker-test}
export SYMPOZIUMCTL=${SYMPOZIUMCTL:-$ROOT/$BIN/sympoziumctl}
command -v "$VALGRIND" >/dev/null 2>&1 || {
	echo "run-valgrind: $VALGRIND not found (make deps installs it)" >&2
	exit 1
}
VG_PATH=$(command -v "$VALGRIND")
logdir=${BUILD_LOGDIR:-$(mktemp -d /tmp/sympozium-vg.XXXXXX)}
mkdir -p "$logdir"

# --child-silent-after-fork: a forked child that only execs (kubesim,
# the worker binary) writes no log of its own.
VG_OPTS=(--leak-check=full --show-leak-kinds=definite,indirect,possible
	--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99
	--track-fds=no --child-silent-after-fork=yes --num-callers=30
	--suppressions="$ROOT/tests/valgrind.supp")

# run_one name: runs $BIN/tests/name under valgrind, logs in $logdir.
run_one() {
	local name=$1 t=$ROOT/$BIN/tests/$1 t0=$SECONDS
	timeout -k 10 "$TEST_TIMEOUT" "$VG_PATH" "${VG_OPTS[@]}" \
		--log-file="$logdir/$name.vg.%p" "$t" >"$logdir/$name.log" 2>&1
	echo $? >"$logdir/$name.rc"
	echo $((SECONDS - t0)) >"$logdir/$name.secs"
}

# The integration run: SYMPOZIUMD points at a wrapper that runs
# sympoziumd under valgrind, tracing the children it execs (the workers;
# the shell of its --list-controllers probe is skipped).
run_integ() {
	local name=$1 wrap=$logdir/sympoziumd-vg.sh
	{
		echo '#!/bin/sh'
		printf 'exec %q' "$VG_PATH"
		printf ' %q' "${VG_OPTS[@]}" --trace-children=yes \
			"--trace-children-skip=*/sh,*/bash,*/dash" \
			"--log-file=$logdir/$name.vg.%p" "$ROOT/$BIN/tests/sympoziumd-test" \
			--no-worker-sandbox --worker-handshake-timeout 60s
		echo ' "$@"'
	} >"$wrap"
	chmod +x "$wrap"
	SYMPOZIUMD=$wrap run_one "$name"
}

# check_vg name: prints the problems in name's valgrind logs; status 1
# when there is any.
check_vg() {
	local name=$1 f bad=0
	for f in "$logdir/$name".vg.*; do
		[ -s "$f" ] || continue
		if ! grep -q 'ERROR SUMMARY:' "$f"; then
			echo "  $f: process ended without its leak check"
			bad=1
		elif ! grep -q 'ERROR SUMMARY: 0 errors' "$f"; then
			echo "  $f: $(grep -h 'ERROR SUMMARY' "$f" | sed 's/^==[0-9]*== //')"
			grep -E 'lost in loss record|Invalid|uninitialised|Mismatched' "$f" | head -5
			bad=1
		fi
	done
	return $bad
}

passed=0
failed=0
skipped=0
failures=()
count() { # name
	local name=$1 log=$logdir/$1.log rc run ok bad secs skip
	rc=$(cat "$logdir/$name.rc" 2>/dev/null || echo 1)
	secs=$(cat "$logdir/$name.secs" 2>/dev/null || echo 0)
	run=$(sed -n 's/^\[==========\] Running \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	ok=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	skip=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	skipped=$((skipped + skip))
	if [ "$run" -eq 0 ]; then
		run=1
		[ "$rc" -eq 0 ] && ok=1
	fi
	if ! check_vg "$name"; then
		# valgrind errors fail the whole program
		ok=0
	fi
	bad=$((run - ok - skip))
	if [ "$bad" -eq 0 ] && [ "$rc" -ne 0 ]; then
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$bad" -gt 0 ]; then
		failures+=("$name ($bad failed, exit $rc; logs $logdir/$name.*)")
		grep -E '^\[  (FAILED|ERROR) +\]' "$log" | head -10
	fi
	printf '%-32s %3d run, %3d passed, exit %2d, %3d s\n' "$name" "$run" \
		"$ok" "$rc" "$secs"
}

start=$(date +%s)
units=()
alone=()
# The slowest under valgrind start first (tens of seconds each: the
# batch then ends together).
for name in $VG_SLOW; do
	[[ " $VG_SKIP $VG_ALONE " == *" $name "* ]] && continue
	[ -x "$BIN/tests/$name" ] && units+=("$name")
done
for t in "$BIN"/tests/test_*; do
	name=$(basename "$t")
	[ -x "$t" ] || continue
	[ -f "tests/unit/$name.c" ] || [ -f "kubesim/tests/unit/$name.c" ] ||
		continue
	if [ -n "${VG_UNITS+x}" ] && [[ " $VG_UNITS " != *" $name "* ]]; then
		continue
	fi
	if [[ " $VG_SKIP " == *" $name "* ]]; then
		echo "$name: skipped under valgrind (VG_SKIP)"
		continue
	fi
	if [[ " $VG_ALONE " == *" $name "* ]]; then
		alone+=("$name")
	elif [[ " $VG_SLOW " != *" $name "* ]]; then
		units+=("$name")
	fi
done
if [ -n "${VG_UNITS+x}" ]; then
	sel=()
	for name in "${units[@]}"; do
		[[ " $VG_UNITS " == *" $name "* ]] && sel+=("$name")
	done
	units=("${sel[@]}")
fi
# VG_JOBS at a time; each writes its own logs, counted afterwards.
for name in "${units[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$VG_JOBS" ]; do
		wait -n
	done
	run_one "$name" &
done
wait
for name in "${alone[@]}"; do
	run_one "$name"
done
for name in "${units[@]}" "${alone[@]}"; do
	count "$name"
done
# The integration run alone: it is timing-sensitive under valgrind.
if [ -n "$VG_INTEG" ] && [ -x "$BIN/tests/$VG_INTEG" ]; then
	run_integ "$VG_INTEG"
	count "$VG_INTEG"
fi

if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "valgrind: $(($(date +%s) - start)) s, logs in $logdir"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
