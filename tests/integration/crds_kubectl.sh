#!/usr/bin/env bash
# crds_kubectl.sh: real kubectl with our CRDs (deploy/crds) on bin/kubesim:
# `kubectl apply -k deploy/crds` creates the eight CRDs, they become
# Established, our samples (deploy/samples) are created under them, and
# every upstream sample of a sympozium kind too, except the two stale ones
# (as under upstream's CRDs, see test_kschema.c), which are refused with
# 422 "is invalid" (that check is SKIPPED where the upstream tree,
# $SHARED_DIR or ../shared, is absent); a printer column of ours shows in
# `kubectl get`.  Output is cmocka-style for tests/run-tests.sh, skips as
# "[  SKIPPED ] name".  KUBECTL selects another kubectl binary.
set -u

KUBESIM=${KUBESIM:-$PWD/bin/kubesim}
UP=${SHARED_DIR:-$PWD/../shared}/upstream/sympozium-v1alpha1
KUBECTL=${KUBECTL:-kubectl}
INVALID_SAMPLES="agentrun_sample.yaml sympoziuminstance_sample.yaml"
dir=$(mktemp -d /tmp/crds-kubectl.XXXXXX)
ks_pid=
npass=0
nfail=0
nskip=0
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
skip() { # NAME WHY
	results+=("[  SKIPPED ] $1")
	nskip=$((nskip + 1))
	echo "SKIPPED $1: $2" >&2
}
check() { # NAME CMD...
	local name=$1
	shift
	if "$@" >"$dir/check.out" 2>&1; then
		ok "$name"
	else
		fail "$name" "$(head -c 2000 "$dir/check.out")"
	fi
}
summary() {
	if [ -n "$ks_pid" ]; then
		kill -TERM "$ks_pid" 2>/dev/null
		wait "$ks_pid"
	fi
	echo "[==========] Running $((npass + nfail + nskip)) test(s)."
	printf '%s\n' "${results[@]}"
	echo "[==========] $((npass + nfail + nskip)) test(s) run."
	echo "[  PASSED  ] $npass test(s)."
	[ "$nskip" -eq 0 ] || echo "[  SKIPPED ] $nskip test(s)."
	[ "$nfail" -eq 0 ] || echo "[  FAILED  ] $nfail test(s)."
	rm -rf "$dir"
}
trap 'summary; [ "$nfail" -eq 0 ] || exit 1' EXIT
trap 'exit 1' INT TERM

k() {
	timeout -k 2 30 "$KUBECTL" --kubeconfig "$dir/kc.yaml" \
		--cache-dir "$dir/cache" "$@"
}

start() {
	local i url
	timeout -k 5 300 "$KUBESIM" --listen 127.0.0.1:0 \
		--write-kubeconfig "$dir/kc.yaml" \
		>"$dir/kubesim.out" 2>"$dir/kubesim.err" &
	ks_pid=$!
	for i in $(seq 100); do
		url=$(sed -n 's/^listening on //p' "$dir/kubesim.out")
		[ -n "$url" ] && return 0
		kill -0 "$ks_pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$dir/kubesim.err"
	return 1
}

apply_crds() {
	k apply -k deploy/crds >"$dir/out" 2>&1 || { cat "$dir/out"; return 1; }
	[ "$(grep -c 'sympozium.ai created' "$dir/out")" -eq 8 ] ||
		{ cat "$dir/out"; return 1; }
	k wait --for condition=established --timeout 10s \
		$(sed -n 's/^  - sympozium.ai_\(.*\)\.yaml$/crd\/\1.sympozium.ai/p' \
			deploy/crds/kustomization.yaml)
}

# Each of our samples applies under kubectl's strict validation (created,
# or configured: upstream's heartbeat schedule has the same name).
our_samples() {
	local f
	for f in deploy/samples/*.yaml; do
		[ "$(basename "$f")" = kustomization.yaml ] && continue
		k apply -f "$f" >"$dir/out" 2>&1 &&
			grep -Eq 'created|configured' "$dir/out" ||
			{ echo "$f:"; cat "$dir/out"; return 1; }
	done
}

# Every upstream sample document of a sympozium kind: created, or refused
# (422) for the stale ones.
samples() {
	local f base rc
	for f in "$UP"/samples/*.yaml; do
		base=$(basename "$f")
		case $base in *helm-values*) continue ;; esac
		k apply --validate=false -f "$f" >"$dir/out" 2>&1
		rc=$?
		if [[ " $INVALID_SAMPLES " == *" $base "* ]]; then
			[ "$rc" -ne 0 ] && grep -q "is invalid" "$dir/out" ||
				{ echo "$base: not refused:"; cat "$dir/out"; return 1; }
		else
			[ "$rc" -eq 0 ] && grep -q created "$dir/out" ||
				{ echo "$base:"; cat "$dir/out"; return 1; }
		fi
	done
}

columns() {
	k get mcpservers,sympoziumschedules -A >"$dir/out" 2>&1 &&
		grep -Eq 'SCHEDULE|TRANSPORT|INSTANCE' "$dir/out" ||
		{ cat "$dir/out"; return 1; }
}

check kubesim_starts start || exit 1
check crds_apply_k_established apply_crds
if [ -d "$UP/samples" ]; then
	check crds_samples_created_or_refused samples
else
	skip crds_samples_created_or_refused "no $UP/samples (set SHARED_DIR)"
fi
check crds_our_samples_applied our_samples
check crds_printer_columns columns
