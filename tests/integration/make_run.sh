#!/usr/bin/env bash
# make_run.sh: what `make run` promises, checked end to end with the real
# kubectl and sympoziumctl: scripts/make-run.sh (the script `make run`
# runs after building) is started in a session of its own; the CRDs and
# samples are applied; the demo AgentRun reaches Succeeded with the result
# the emulated agent printed; the every-minute schedule creates a run;
# sympoziumctl status shows eight ready workers; then SIGINT to the whole
# process group, as Ctrl-C in a terminal sends it, stops everything: the
# script exits 0 and no process of the run is left.  Output is
# cmocka-style for tests/run-tests.sh.
set -u

BIN=${BIN:-bin}
KUBECTL=${KUBECTL:-kubectl}
CTL=${SYMPOZIUMCTL:-$PWD/$BIN/sympoziumctl}
dir=$(mktemp -d /tmp/make-run-test.XXXXXX)
run=$dir/run
pg=
npass=0
nfail=0
results=()

ok() {
	results+=("[       OK ] $1")
	npass=$((npass + 1))
}
fail() {
	results+=("[  FAILED  ] $1")
	nfail=$((nfail + 1))
	echo "FAILED $1: $2" >&2
}
# Polls CMD (up to 30 s) until it succeeds.
eventually() { # NAME CMD...
	local name=$1 i
	shift
	for i in $(seq 150); do
		if "$@" >"$dir/check.out" 2>&1; then
			ok "$name"
			return 0
		fi
		sleep 0.2
	done
	fail "$name" "$(head -c 2000 "$dir/check.out")"
	return 1
}
# The pids whose command line names the run directory.
leftovers() {
	local p c
	for p in /proc/[0-9]*; do
		c=$( (tr '\0' ' ' <"$p/cmdline") 2>/dev/null)
		if [[ $c == *"$run"* ]]; then
			echo "${p#/proc/}"
		fi
	done
}
summary() {
	if [ -n "$pg" ]; then
		kill -KILL -- "-$pg" 2>/dev/null
	fi
	for p in $(leftovers); do
		kill -KILL "$p" 2>/dev/null
	done
	echo "[==========] Running $((npass + nfail)) test(s)."
	printf '%s\n' "${results[@]}"
	echo "[==========] $((npass + nfail)) test(s) run."
	echo "[  PASSED  ] $npass test(s)."
	[ "$nfail" -eq 0 ] || echo "[  FAILED  ] $nfail test(s)."
	if [ "$nfail" -ne 0 ]; then
		echo "---- make-run.sh output ----" >&2
		tail -n 40 "$dir/out" >&2
	fi
	rm -rf "$dir"
}
trap 'summary; [ "$nfail" -eq 0 ] || exit 1' EXIT
trap 'exit 1' INT TERM

k() {
	timeout -k 2 20 "$KUBECTL" --kubeconfig "$run/kubeconfig" \
		--cache-dir "$dir/cache" "$@"
}

# Ports 0: the test must not depend on 8080/8081 being free.
# TMPDIR: the socket goes where sympoziumctl looks by default (under it).
RUN_DIR=$run METRICS_ADDR=0 PROBE_ADDR=0 BIN=$BIN TMPDIR=$dir \
	SYMPOZIUM_HEALTH_SOCKET= setsid scripts/make-run.sh >"$dir/out" 2>&1 &
pg=$!

started() { grep -q 'Starting the operator' "$dir/out"; }
eventually make_run_starts started || exit 1

run_succeeded() {
	local s
	s=$(k get agentrun demo-run -o \
		jsonpath='{.status.phase}|{.status.result}|{.status.tokenUsage.totalTokens}')
	echo "$s"
	[ "$s" = "Succeeded|All quiet: 3 namespaces, nothing failing.|876" ]
}
eventually demo_run_succeeds_with_result run_succeeded

pack_stamped() {
	k get sympoziuminstance demo-team-reviewer -o name &&
		k get sympoziumschedule demo-team-reviewer-schedule -o name
}
eventually persona_pack_stamps pack_stamped

schedule_fired() {
	k get agentrun demo-heartbeat-1 -o jsonpath='{.status.phase}' |
		grep -qx Succeeded
}
eventually schedule_creates_run schedule_fired

# sympoziumctl with no --socket finds the make run operator
eight_ready() {
	TMPDIR=$dir SYMPOZIUM_HEALTH_SOCKET= "$CTL" status >"$dir/status" ||
		return 1
	cat "$dir/status"
	[ "$(grep -cE '^[a-z]+-0 +[0-9]+ ready ' "$dir/status")" -eq 8 ]
}
eventually sympoziumctl_status_eight_ready eight_ready

# A second make run whose metrics address is taken (kubesim's) stops at
# once, naming the make variable, and starts nothing.
port_named() {
	local a out
	a=$(sed -n 's|^ *server: https\{0,1\}://||p' "$run/kubeconfig" | head -1)
	out=$(RUN_DIR=$dir/run2 METRICS_ADDR=$a PROBE_ADDR=0 BIN=$BIN \
		HEALTH_SOCKET=$dir/h2.sock timeout 20 scripts/make-run.sh 2>&1)
	local st=$?
	echo "$out"
	[ "$st" -eq 1 ] && echo "$out" | grep -q "METRICS_ADDR=127.0.0.1:PORT" &&
		[ ! -e "$dir/run2/kubeconfig" ]
}
eventually port_in_use_names_variable port_named

# Ctrl-C: SIGINT to the whole foreground process group.
kill -INT -- "-$pg"
st=0
for _ in $(seq 150); do
	kill -0 "$pg" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pg" 2>/dev/null; then
	fail ctrl_c_stops_script "still running after 15 s"
else
	wait "$pg"
	st=$?
	if [ "$st" -eq 0 ]; then
		ok ctrl_c_stops_script
	else
		fail ctrl_c_stops_script "exit status $st"
	fi
fi
pg=
nothing_left() {
	local l
	l=$(leftovers)
	echo "$l"
	[ -z "$l" ]
}
eventually ctrl_c_leaves_nothing_running nothing_left
