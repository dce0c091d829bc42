#!/usr/bin/env bash
# measure-memory.sh: the measurements behind the Deployment's resource
# requests and limits (docs/operating.md).  Starts bin/kubesim, applies our
# CRDs (deploy/crds/), the upstream samples (where the reference tree is
# present) and deploy/samples/ with kubectl, runs
# bin/sympoziumd (all its workers) against it, and samples the process
# tree (sympoziumd and its children) every second for SECONDS_TO_RUN
# (default 60): the sum of Rss and Pss from /proc/PID/smaps_rollup, and
# the CPU seconds used.  Prints the peak and the final values.
#   usage: deploy/measure-memory.sh        (from the repository root,
#          after make; SHARED_DIR as for the tests)
set -u
BIN=${BIN:-bin}
UP=${SHARED_DIR:-$PWD/../shared}/upstream/sympozium-v1alpha1
DUR=${SECONDS_TO_RUN:-60}
tmp=$(mktemp -d /tmp/measure.XXXXXX)
ks=
sd=
cleanup() {
	[ -n "$sd" ] && kill -TERM "$sd" 2>/dev/null && wait "$sd"
	[ -n "$ks" ] && kill -TERM "$ks" 2>/dev/null && wait "$ks"
	rm -rf "$tmp"
}
trap cleanup EXIT

"$BIN/kubesim" --listen 127.0.0.1:0 --write-kubeconfig "$tmp/kc" \
	>"$tmp/ks.out" 2>"$tmp/ks.err" &
ks=$!
for _ in $(seq 100); do
	grep -q '^listening' "$tmp/ks.out" && break
	sleep 0.05
done
export KUBECONFIG=$tmp/kc
kubectl apply -k deploy/crds >/dev/null
kubectl wait --for condition=established crd --all --timeout=20s >/dev/null
for f in "$UP"/samples/*.yaml; do
	[ -f "$f" ] && grep -q '^apiVersion:' "$f" &&
		kubectl apply -f "$f" >/dev/null 2>&1
done
kubectl apply -k deploy/samples >/dev/null

"$BIN/sympoziumd" --runtime-dir "$tmp/run" >"$tmp/sd.log" 2>&1 &
sd=$!

# tree PID: PID and its descendants.
tree() {
	local p=$1 c
	echo "$p"
	for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
		tree "$c"
	done
}

# sample: "rss_kib pss_kib nprocs cpu_seconds"
sample() {
	local rss=0 pss=0 n=0 ticks=0 p v
	for p in $(tree "$sd"); do
		v=$(awk '/^Rss:/{r=$2} /^Pss:/{s=$2} END{print r+0, s+0}' \
			/proc/"$p"/smaps_rollup 2>/dev/null) || continue
		[ -n "$v" ] || continue
		rss=$((rss + ${v% *}))
		pss=$((pss + ${v#* }))
		n=$((n + 1))
		ticks=$((ticks + $(awk '{print $14 + $15}' /proc/"$p"/stat)))
	done
	echo "$rss $pss $n $(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" \
		'BEGIN{printf "%.2f", t / hz}')"
}

peak_rss=0
peak_pss=0
for _ in $(seq "$DUR"); do
	sleep 1
	read -r rss pss n cpu < <(sample)
	[ "$rss" -gt "$peak_rss" ] && peak_rss=$rss
	[ "$pss" -gt "$peak_pss" ] && peak_pss=$pss
done
echo "processes: $n (sympoziumd + workers)"
echo "final:  Rss ${rss} KiB  Pss ${pss} KiB  CPU ${cpu} s in ${DUR} s"
echo "peak:   Rss ${peak_rss} KiB  Pss ${peak_pss} KiB"
echo "objects: $(kubectl get agentruns,sympoziuminstances,personapacks,skillpacks,sympoziumschedules,mcpservers,jobs,deployments,configmaps,services -A -o name | wc -l)"
