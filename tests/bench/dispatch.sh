#!/bin/sh
# tests/bench/dispatch.sh: the supervisor benchmarks of issue 7 item 4
# (dispatch latency and throughput, isolation cost, restart), run by
# `make bench`.  bin/bench/bench_dispatch starts its own kubesims,
# sympoziumd and workers; this script keeps its log (the supervisor's and
# the workers' stderr) aside and prints it only on errors.  Prints the
# driver's table (PASS/MISS per target).  Exits non-zero only on errors,
# never because a target was missed.
#
# Usage: tests/bench/dispatch.sh [--quick]   (or BENCH_QUICK=1)
# BIN selects the program directory (default bin).  The SkillPack phase
# applies our SkillPack CRD (deploy/crds).
set -u

BIN=${BIN:-bin}
quick=
if [ "${BENCH_QUICK:-0}" = 1 ] || [ "${1:-}" = --quick ]; then
	quick=--quick
fi

log=$(mktemp "${TMPDIR:-/tmp}/bench-dispatch.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 1' INT TERM

echo "== dispatch benchmark (${quick:-full}), load average:" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/bench/bench_dispatch" $quick --bin "$BIN" 2>"$log"
rc=$?
if [ $rc -ne 0 ]; then
	echo "bench dispatch: failed (status $rc); last log lines:" >&2
	grep -v 'lost (signal SIGKILL)\|exited: signal SIGKILL' "$log" |
		tail -n 30 >&2
fi
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
