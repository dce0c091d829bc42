#!/usr/bin/env bash
# run-fuzz.sh: runs libFuzzer targets for `make fuzz`.
#
#   FUZZ_SECONDS=N [FUZZ_JOBS=J] tests/fuzz/run-fuzz.sh build/fuzz/bin/fuzz_a ...
#
# Each binary fuzz_X runs for FUZZ_SECONDS (default 60), FUZZ_JOBS of them
# at a time (default 1; CI's short pass uses 2 on 2 cores), with the writable
# corpus build/fuzz/corpus/X (so the repo is not polluted) and the seeds in
# tests/fuzz/corpus/X; crash, leak, timeout and OOM inputs are written as
# build/fuzz/findings/X-*.  Logs go to build/fuzz/logs/X.log.  Prints one
# line per target and a final "N passed, N failed" (targets); exits
# non-zero when any target found something or could not run.
# FUZZ_ARGS adds libFuzzer flags (default: -timeout=30, the per-input limit).
set -u
cd "$(dirname "$0")/../.." || exit 1

secs=${FUZZ_SECONDS:-60}
extra=${FUZZ_ARGS:--timeout=30}
jobs=${FUZZ_JOBS:-1}
case $secs in
'' | *[!0-9]*)
	echo "run-fuzz: FUZZ_SECONDS must be a number of seconds" >&2
	exit 2
	;;
esac
case $jobs in
'' | 0 | *[!0-9]*)
	echo "run-fuzz: FUZZ_JOBS must be a positive number" >&2
	exit 2
	;;
esac
# UBSan must stop the target, or libFuzzer does not see undefined behaviour.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p build/fuzz/findings build/fuzz/logs
passed=0
failed=0

if [ $# -eq 0 ]; then
	echo "run-fuzz: no fuzz targets (tests/fuzz/fuzz_*.c)"
fi

# Runs one target; writes its report line(s) to build/fuzz/logs/X.result
# and returns 0 when it passed.
run_one() {
	local bin=$1 base name corpus seeds log res rc runs artifact
	base=$(basename "$bin")
	name=${base#fuzz_}
	corpus=build/fuzz/corpus/$name
	seeds=tests/fuzz/corpus/$name
	log=build/fuzz/logs/$name.log
	res=build/fuzz/logs/$name.result
	mkdir -p "$corpus"
	local dirs=("$corpus")
	[ -d "$seeds" ] && dirs+=("$seeds")
	if [ ! -x "$bin" ]; then
		printf '%-24s not built (%s)\n' "$base" "$bin" >"$res"
		return 1
	fi
	# shellcheck disable=SC2086 # $extra is a list of flags
	timeout -k 10 $((secs + 120)) "$bin" -max_total_time="$secs" \
		-print_final_stats=1 \
		-artifact_prefix="build/fuzz/findings/$name-" \
		$extra "${dirs[@]}" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
		tail -1)
	[ -n "$runs" ] || runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' \
		"$log" | tail -1)
	runs=${runs:-0}
	artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" |
		tail -1)
	if [ "$rc" -eq 0 ] && [ -z "$artifact" ]; then
		printf '%-24s %10s runs in %ss, ok\n' "$base" "$runs" "$secs" \
			>"$res"
		return 0
	fi
	{
		printf '%-24s %10s runs, FINDING (exit %d) %s; log %s\n' \
			"$base" "$runs" "$rc" "${artifact:-no artifact}" "$log"
		grep -E '^==[0-9]+==ERROR|runtime error|^SUMMARY' "$log" |
			head -5 | sed 's/^/    /'
	} >"$res"
	return 1
}

# At most $jobs targets at a time; reports in the order given.
running=0
for bin in "$@"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_one "$bin" &
	running=$((running + 1))
done
wait
for bin in "$@"; do
	name=$(basename "$bin")
	res=build/fuzz/logs/${name#fuzz_}.result
	cat "$res"
	if grep -q ', ok$' "$res"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
