#!/bin/sh
# tests/bench/kubesim.sh: the kubesim benchmark (issue 3), run by
# `make bench`.  Starts bin/kubesim on a free port, runs
# bin/bench/bench_kubesim against it, stops kubesim with SIGTERM.
# Prints the driver's table (PASS/MISS per target).  Exits non-zero only on
# errors (kubesim failed to start or stop, failed requests, a wrong watch
# stream), never because a target was missed.
#
# Usage: tests/bench/kubesim.sh [--quick]   (or BENCH_QUICK=1)
# BIN selects the program directory (default bin).
set -u

BIN=${BIN:-bin}
quick=
if [ "${BENCH_QUICK:-0}" = 1 ] || [ "${1:-}" = --quick ]; then
	quick=--quick
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-kubesim.XXXXXX") || exit 1
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A large watch history, so a watcher that falls behind is measured, not
# expired (the benchmark checks throughput, not 410 handling).
"$BIN/kubesim" --listen 127.0.0.1:0 --watch-history 200000 \
	>"$tmp/out" 2>"$tmp/err" &
pid=$!

url=
i=0
while [ $i -lt 100 ]; do
	url=$(sed -n '1s/^listening on //p' "$tmp/out" 2>/dev/null)
	[ -n "$url" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		break
	fi
	sleep 0.1
	i=$((i + 1))
done
if [ -z "$url" ]; then
	echo "bench kubesim: kubesim did not start" >&2
	cat "$tmp/err" >&2
	exit 1
fi

echo "== kubesim benchmark (${quick:-full}) against $url"
"$BIN/bench/bench_kubesim" $quick --server-pid "$pid" "$url"
rc=$?

kill -TERM "$pid"
wait "$pid"
krc=$?
pid=
if [ $krc -ne 0 ]; then
	echo "bench kubesim: kubesim exited with status $krc" >&2
	tail -n 20 "$tmp/err" >&2
	rc=1
fi
exit $rc
