#!/usr/bin/env bash
# make-run.sh: what `make run` does after building.  Starts bin/kubesim on
# 127.0.0.1 with a kubeconfig, applies our CRDs (deploy/crds/) and samples
# (deploy/samples/) with the real kubectl, tells kubesim's emulated kubelet
# what the agent pods print (a result and token usage, so runs visibly reach
# Succeeded), then runs bin/sympoziumd in the foreground.  Ctrl-C (SIGINT or
# SIGTERM) stops the operator, its workers and kubesim, and leaves nothing
# running; the logs stay in the run directory it prints.
#
# Environment (also as make variables: make run METRICS_ADDR=...): BIN
# (programs, default bin), LISTEN (kubesim's address, default
# 127.0.0.1:0), METRICS_ADDR / PROBE_ADDR (sympoziumd's HTTP endpoints,
# default 127.0.0.1:8080 / 127.0.0.1:8081; 0 turns one off; one in use
# stops the script before anything starts, naming the variable), RUN_DIR
# (default a new directory under $TMPDIR), HEALTH_SOCKET (default where
# sympoziumctl looks first: $SYMPOZIUM_HEALTH_SOCKET, else
# $TMPDIR/sympoziumd-UID/health.sock, so `sympoziumctl status` needs no
# flag).
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-bin}
metrics=${METRICS_ADDR:-127.0.0.1:8080}
probes=${PROBE_ADDR:-127.0.0.1:8081}
sock=${HEALTH_SOCKET:-${SYMPOZIUM_HEALTH_SOCKET:-${TMPDIR:-/tmp}/sympoziumd-$(id -u)/health.sock}}

# An address in use (something answers a connect there) stops us before
# anything starts, naming the variable that moves it.
in_use() {
	local a=$1 host port
	[ "$a" = 0 ] && return 1
	host=${a%:*}
	port=${a##*:}
	[ -z "$host" ] && host=127.0.0.1
	(exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}
for v in METRICS_ADDR:$metrics PROBE_ADDR:$probes; do
	if in_use "${v#*:}"; then
		echo "make run: ${v#*:} is in use; choose another address with" \
			"make run ${v%%:*}=127.0.0.1:PORT (or ${v%%:*}=0 to turn" \
			"it off)" >&2
		exit 1
	fi
done
if [ -S "$sock" ] && "$BIN/sympoziumctl" --socket "$sock" --timeout 2 \
	status >/dev/null 2>&1; then
	echo "make run: an operator already answers on $sock; stop it, or" \
		"make run HEALTH_SOCKET=PATH" >&2
	exit 1
fi
mkdir -p "$(dirname "$sock")" && chmod 700 "$(dirname "$sock")" || exit 1
dir=${RUN_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/sympozium-run.XXXXXX")}
mkdir -p "$dir" || exit 1
kc=$dir/kubeconfig
ks=
op=

stop() {
	trap '' INT TERM
	if [ -n "$op" ]; then
		kill -TERM "$op" 2>/dev/null
		wait "$op" 2>/dev/null
	fi
	if [ -n "$ks" ]; then
		kill -TERM "$ks" 2>/dev/null
		wait "$ks" 2>/dev/null
	fi
	echo "make run: stopped; logs and the request log are in $dir"
}
trap stop EXIT
trap 'exit 0' INT TERM

"$BIN/kubesim" --listen "${LISTEN:-127.0.0.1:0}" --write-kubeconfig "$kc" \
	--request-log "$dir/requests.jsonl" >"$dir/kubesim.out" \
	2>"$dir/kubesim.log" &
ks=$!
for _ in $(seq 100); do
	grep -q '^listening on ' "$dir/kubesim.out" 2>/dev/null && break
	sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$dir/kubesim.out")
if [ -z "$url" ]; then
	echo "make run: kubesim did not start:" >&2
	cat "$dir/kubesim.log" >&2
	exit 1
fi
export KUBECONFIG=$kc
k() { kubectl --cache-dir "$dir/cache" "$@"; }

# The agent pods of every run print a result with token usage and finish
# after 3 s (kubesim's kubelet; a real cluster runs the agent image).
cat >"$dir/kubelet.json" <<'EOF'
{"rules":[{"labelSelector":"sympozium.ai/agent-run","runDuration":"3s",
 "logs":{"*":"thinking...\n__SYMPOZIUM_RESULT__{\"status\":\"success\",\"response\":\"All quiet: 3 namespaces, nothing failing.\",\"metrics\":{\"inputTokens\":812,\"outputTokens\":64,\"toolCalls\":2,\"durationMs\":2900}}__SYMPOZIUM_END__\n"}}]}
EOF
if ! k apply -k deploy/crds >"$dir/apply.log" 2>&1 \
	|| ! k wait --for condition=established --timeout=10s crd --all \
		>>"$dir/apply.log" 2>&1 \
	|| ! k replace --raw /_kubesim/kubelet -f "$dir/kubelet.json" \
		>/dev/null 2>>"$dir/apply.log" \
	|| ! k apply -k deploy/samples >>"$dir/apply.log" 2>&1; then
	echo "make run: applying the CRDs and samples failed:" >&2
	cat "$dir/apply.log" >&2
	exit 1
fi
sed 's/^/  /' "$dir/apply.log" | grep -v '^  $'

cat <<MSG

kubesim is serving $url (run directory $dir)
In another terminal:
  export KUBECONFIG=$kc
  kubectl get agentruns,sympoziumschedules,sympoziuminstances,personapacks -A
  kubectl get agentrun demo-run -o jsonpath='{.status.phase} {.status.result}{"\n"}'
  kubectl get events -A
  $BIN/sympoziumctl status$(
	[ -n "${HEALTH_SOCKET:-}" ] && [ "$sock" != "${SYMPOZIUM_HEALTH_SOCKET:-}" ] &&
		echo " --socket $sock")
The demo run reaches Succeeded with a result within seconds; the schedule
demo-heartbeat fires a run every minute.
Starting the operator (bin/sympoziumd); Ctrl-C stops it and kubesim.

MSG
"$BIN/sympoziumd" --kubeconfig "$kc" --runtime-dir "$dir/run" \
	--health-socket "$sock" \
	--metrics-bind-address "$metrics" \
	--health-probe-bind-address "$probes" &
op=$!
wait "$op"
st=$?
op=
exit "$st"
