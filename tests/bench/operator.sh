#!/bin/sh
# tests/bench/operator.sh: the operator benchmarks of issue 7 item 4
# (writes, memory, start, leader handover), run by `make bench`.  The
# driver bin/bench/bench_operator starts its own kubesim and sympoziumd
# processes per phase (temporary directories, request logs) and stops
# them.  Prints the driver's table (PASS/MISS per target).  Exits non-zero
# only on errors, never because a target was missed.
#
# Usage: tests/bench/operator.sh [--quick] [writes|start|handover]
#        (or BENCH_QUICK=1).  BIN selects the program directory (bin).
set -u

BIN=${BIN:-bin}
quick=
if [ "${BENCH_QUICK:-0}" = 1 ] || [ "${1:-}" = --quick ]; then
	quick=--quick
	[ "${1:-}" = --quick ] && shift
fi
export KUBESIM="$BIN/kubesim"
export SYMPOZIUMD="${SYMPOZIUMD:-$BIN/sympoziumd}"
exec "$BIN/bench/bench_operator" $quick "$@"
