#!/usr/bin/env bash
# make-run.sh: what `make run` does: starts bin/kubesim on 127.0.0.1 with a
# kubeconfig, applies the upstream Sympozium CRDs and samples with the real
# kubectl, then runs bin/sympoziumd against it in the foreground (it runs
# every controller the worker binary offers) until Ctrl-C stops both.
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${BIN:-bin}
SHARED_DIR=${SHARED_DIR:-../shared}
upstream=$SHARED_DIR/upstream/sympozium-v1alpha1
dir=$(mktemp -d "${TMPDIR:-/tmp}/sympozium-run.XXXXXX")
kc=$dir/kubeconfig

"$BIN/kubesim" --listen "${LISTEN:-127.0.0.1:0}" --write-kubeconfig "$kc" \
	--request-log "$dir/requests.jsonl" >"$dir/kubesim.out" \
	2>"$dir/kubesim.log" &
pid=$!
stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "kubesim stopped; its log and request log are in $dir"
}
trap stop EXIT
trap 'exit 0' INT TERM

for _ in $(seq 100); do
	grep -q '^listening on ' "$dir/kubesim.out" 2>/dev/null && break
	sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$dir/kubesim.out")
if [ -z "$url" ]; then
	echo "kubesim did not start:" >&2
	cat "$dir/kubesim.log" >&2
	exit 1
fi
export KUBECONFIG=$kc
k() { kubectl --cache-dir "$dir/cache" "$@"; }

if [ -d "$upstream/crds" ]; then
	k apply -f "$upstream/crds/"
	k wait --for condition=established --timeout=10s crd --all >/dev/null
	for f in "$upstream"/samples/*.yaml; do
		k apply -f "$f" 2>&1 | sed 's/^/  /'
	done
else
	echo "no upstream CRDs at $upstream (set SHARED_DIR): none applied"
fi
cat <<MSG

kubesim is serving $url
  export KUBECONFIG=$kc
  kubectl get agentruns,sympoziuminstances,personapacks -A
Starting the operator (bin/sympoziumd); Ctrl-C stops it and kubesim.
MSG
"$BIN/sympoziumd" --kubeconfig "$kc" --runtime-dir "$dir/run" &
op=$!
trap 'kill -TERM "$op" 2>/dev/null; wait "$op"; exit 0' INT TERM
wait "$op"
