#!/usr/bin/env bash
# kubectl.sh: real kubectl (a client we did not write) against bin/kubesim
# (spec kube-api.md D and G 53-56).  Applies the upstream Sympozium CRDs and
# samples (where the upstream tree, $SHARED_DIR or ../shared, is absent:
# ours, deploy/crds and deploy/samples), then exercises get (plural, singular, kind, short name, -o yaml,
# -w), wait, patch (also --subresource=status), replace with a stale
# resourceVersion, delete with a finalizer and with --wait, api-resources,
# get --raw and version; finally a run over TLS with a bearer token.
# The two samples that do not match their CRDs (INVALID_SAMPLES) must be
# refused twice: under kubectl's default validation (fieldValidation=
# Strict) with 400 "strict decoding error: unknown field", as a real API
# server does, and with --validate=false by the schema with 422 "is
# invalid".  The Helm values file among the samples is not a manifest and
# is skipped.  Without the upstream tree the two refusal checks are
# reported as "[  SKIPPED ] name".  KUBECTL selects another kubectl binary.
#
# Output is cmocka-style so tests/run-tests.sh counts the checks: one
# "[       OK ] name" or "[  FAILED  ] name" per check, printed at exit with
# the totals.  Diagnostics go to stderr.  Every command is bounded by
# timeout; kubesim is stopped by the EXIT trap and must exit 0 on SIGTERM.
set -u

KUBESIM=${KUBESIM:-$PWD/bin/kubesim}
UP=${SHARED_DIR:-$PWD/../shared}/upstream/sympozium-v1alpha1
# The CRDs and samples applied, and an AgentRun among the samples (name
# and instance): upstream's where the tree is present, else ours.
if [ -d "$UP/crds" ]; then
	CRDS=$UP/crds SAMPLES=$UP/samples RUN=alice-sandbox-run-001 RUN_INST=alice
else
	CRDS=$PWD/deploy/crds SAMPLES=$PWD/deploy/samples RUN=demo-run RUN_INST=demo
fi
KUBECTL=${KUBECTL:-kubectl}
tmp=$(mktemp -d /tmp/kubectl-test.XXXXXX)
ks_pid=
results=()
npass=0
nfail=0
nskip=0

# Samples that do not match their CRD's schema (unknown and missing
# fields): the server must refuse them.
INVALID_SAMPLES="agentrun_sample.yaml sympoziuminstance_sample.yaml"

ok() {
	results+=("[       OK ] $1")
	npass=$((npass + 1))
}

skip() { # name why
	results+=("[  SKIPPED ] $1")
	nskip=$((nskip + 1))
	echo "SKIPPED $1: $2" >&2
}

fail() { # name why
	results+=("[  FAILED  ] $1")
	nfail=$((nfail + 1))
	echo "FAILED $1: $2" >&2
}

# check NAME CMD...: the check passes when CMD exits 0.
check() {
	local name=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		ok "$name"
	else
		fail "$name" "$(head -c 2000 "$tmp/check.out")"
	fi
}

summary() {
	stop_kubesim default
	echo "[==========] Running $((npass + nfail + nskip)) test(s)."
	printf '%s\n' "${results[@]}"
	echo "[==========] $((npass + nfail + nskip)) test(s) run."
	echo "[  PASSED  ] $npass test(s)."
	[ "$nskip" -eq 0 ] || echo "[  SKIPPED ] $nskip test(s)."
	if [ "$nfail" -gt 0 ]; then
		echo "[  FAILED  ] $nfail test(s)."
	fi
	rm -rf "$tmp"
}
trap 'summary; [ "$nfail" -eq 0 ] || exit 1' EXIT
trap 'exit 1' INT TERM

# start_kubesim DIR ARGS...: starts kubesim writing DIR/kc.yaml, waits for
# "listening on URL" (5 s).  Sets ks_pid and url.
start_kubesim() {
	local dir=$1 i
	shift
	mkdir -p "$dir"
	timeout -k 5 300 "$KUBESIM" --listen 127.0.0.1:0 \
		--write-kubeconfig "$dir/kc.yaml" "$@" \
		>"$dir/kubesim.out" 2>"$dir/kubesim.err" &
	ks_pid=$!
	for i in $(seq 100); do
		url=$(sed -n 's/^listening on //p' "$dir/kubesim.out")
		[ -n "$url" ] && return 0
		kill -0 "$ks_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "kubesim did not start:" >&2
	tail -5 "$dir/kubesim.err" >&2
	return 1
}

# stop_kubesim NAME: SIGTERM, then the exit status must be 0.
stop_kubesim() {
	local rc
	[ -n "$ks_pid" ] || return 0
	kill -TERM "$ks_pid" 2>/dev/null
	wait "$ks_pid"
	rc=$?
	ks_pid=
	if [ "$rc" -eq 0 ]; then
		ok "kubesim_sigterm_exit0_$1"
	else
		fail "kubesim_sigterm_exit0_$1" "exit status $rc"
	fi
}

# k ARGS...: kubectl against the current kubeconfig, bounded.
k() {
	timeout -k 2 30 "$KUBECTL" --cache-dir "$dir/cache" "$@"
}

# out_has FILE PATTERN: grep -E, echoing the file on failure.
out_has() {
	grep -Eq -- "$2" "$1" || {
		echo "no /$2/ in:"
		cat "$1"
		return 1
	}
}

# run_expect PATTERN ARGS...: kubectl succeeds and prints PATTERN.
run_expect() {
	local pat=$1
	shift
	k "$@" >"$tmp/out" 2>&1 || {
		echo "kubectl $* failed:"
		cat "$tmp/out"
		return 1
	}
	out_has "$tmp/out" "$pat"
}

# run_refused PATTERN ARGS...: kubectl fails and prints PATTERN.
run_refused() {
	local pat=$1
	shift
	if k "$@" >"$tmp/out" 2>&1; then
		echo "kubectl $* succeeded:"
		cat "$tmp/out"
		return 1
	fi
	out_has "$tmp/out" "$pat"
}

crd_names() {
	local f
	for f in "$CRDS"/sympozium.ai_*.yaml; do
		basename "$f" .yaml | sed 's/^\([^_]*\)_\(.*\)$/\2.\1/'
	done
}

apply_crds() { # PATTERN: every CRD applies and prints PATTERN
	local f
	for f in "$CRDS"/sympozium.ai_*.yaml; do
		run_expect "customresourcedefinition.apiextensions.k8s.io/.* $1" \
			apply -f "$f" || return 1
	done
}

wait_established() {
	local n
	for n in $(crd_names); do
		run_expect "condition met" wait --timeout=10s \
			--for condition=established "crd/$n" || return 1
	done
}

# A changed manifest: a new label on one CRD (added by kubectl, offline).
crd_configured() {
	k label --local -o yaml -f "$CRDS/sympozium.ai_skillpacks.yaml" \
		kubectl-test=changed >"$tmp/crd.yaml" || return 1
	run_expect "skillpacks.sympozium.ai configured" apply -f "$tmp/crd.yaml" &&
		run_expect "changed" get crd skillpacks.sympozium.ai \
			-o 'jsonpath={.metadata.labels.kubectl-test}'
}

is_invalid_sample() {
	case " $INVALID_SAMPLES " in *" $1 "*) return 0 ;; esac
	return 1
}

# Every sample that is a Kubernetes manifest (the Helm values file is not)
# and not known to be invalid applies.
apply_valid_samples() {
	local f
	for f in "$SAMPLES"/*.yaml; do
		grep -q '^apiVersion:' "$f" || continue
		grep -q '^kind: Kustomization' "$f" && continue
		is_invalid_sample "$(basename "$f")" && continue
		run_expect " created" apply -f "$f" || return 1
	done
}

# Default validation (fieldValidation=Strict): unknown fields are refused
# with 400 "strict decoding error" before the schema is checked.
apply_invalid_strict() {
	local s
	for s in $INVALID_SAMPLES; do
		run_refused 'Error from server \(BadRequest\).*strict decoding error: unknown field' \
			apply -f "$UP/samples/$s" || return 1
	done
}

# Without field validation the unknown fields are pruned and the schema
# check answers 422 Invalid.
apply_invalid_schema() {
	local s
	for s in $INVALID_SAMPLES; do
		run_refused 'is invalid' apply --validate=false \
			-f "$UP/samples/$s" || return 1
		run_refused 'NotFound' get -f "$UP/samples/$s" || return 1
	done
}

# kubectl get <plural> -o yaml for every sympozium kind.
get_all_yaml() {
	local p kind
	for p in agentruns mcpservers personapacks skillpacks \
		sympoziumconfigs sympoziuminstances sympoziumpolicies \
		sympoziumschedules; do
		run_expect '^kind: List' get "$p" -o yaml || return 1
	done
	run_expect 'kind: AgentRun' get agentruns -o yaml &&
		run_expect "name: $RUN" get agentruns -o yaml
}

get_names() {
	local r
	for r in agentruns agentrun AgentRun agentruns.sympozium.ai \
		agentrun.v1alpha1.sympozium.ai; do
		run_expect "$RUN" get "$r" || return 1
	done
	run_expect "$RUN" get agentrun "$RUN"
}

# Server-side Table (D.6): the CRD's additionalPrinterColumns.
printer_columns() {
	run_expect '^NAME +INSTANCE +PHASE +POD +AGE' get agentruns &&
		out_has "$tmp/out" "^$RUN +$RUN_INST "
}

widget_crd() {
	cat >"$tmp/widget-crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
EOF
	cat >"$tmp/widget.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 1
EOF
	run_expect created apply -f "$tmp/widget-crd.yaml" &&
		run_expect "condition met" wait --timeout=10s \
			--for condition=established crd/widgets.example.com &&
		run_expect created apply -f "$tmp/widget.yaml"
}

# A ConfigMap manifest.  (kubectl create configmap sends protobuf, which
# kubesim, JSON only, refuses with 415 as the spec allows.)
cm_yaml() {
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  a: b\n' "$1"
}

get_short_names() {
	local r
	for r in wd widget widgets; do
		run_expect '^w1 ' get "$r" || return 1
	done
	cm_yaml short-cm | k create -f - >/dev/null &&
		run_expect '^short-cm ' get cm &&
		run_expect '^short-cm ' get configmap &&
		run_expect '^short-cm ' get configmaps
}

# kubectl get widgets -w prints the existing row, then the row of an object
# created while it watches.
get_watch() {
	local w i
	timeout -k 2 15 "$KUBECTL" --cache-dir "$dir/cache" get widgets -w \
		>"$tmp/watch.out" 2>&1 &
	w=$!
	for i in $(seq 100); do
		grep -q '^w1 ' "$tmp/watch.out" && break
		sleep 0.05
	done
	out_has "$tmp/watch.out" '^w1 ' || { kill "$w"; wait "$w"; return 1; }
	sed 's/name: w1/name: w2/' "$tmp/widget.yaml" | k create -f - || {
		kill "$w"
		wait "$w"
		return 1
	}
	for i in $(seq 100); do
		grep -q '^w2 ' "$tmp/watch.out" && break
		sleep 0.05
	done
	kill "$w" 2>/dev/null
	wait "$w"
	out_has "$tmp/watch.out" '^w2 '
}

patch_merge() {
	run_expect patched patch widget w1 --type=merge \
		-p '{"metadata":{"labels":{"color":"blue"}},"spec":{"size":2}}' &&
		run_expect '^blue 2$' get widget w1 \
			-o 'jsonpath={.metadata.labels.color} {.spec.size}'
}

# The status subresource takes status and ignores other changes; the main
# resource ignores status.
patch_status() {
	run_expect patched patch widget w1 --type=merge --subresource=status \
		-p '{"status":{"phase":"Ready"},"spec":{"size":99}}' &&
		run_expect '^Ready 2$' get widget w1 \
			-o 'jsonpath={.status.phase} {.spec.size}' &&
		k patch widget w1 --type=merge -p '{"status":{"phase":"X"}}' \
			>/dev/null &&
		run_expect '^Ready$' get widget w1 -o 'jsonpath={.status.phase}'
}

replace_conflict() {
	k get widget w1 -o yaml >"$tmp/stale.yaml" &&
		k patch widget w1 --type=merge -p '{"spec":{"size":3}}' \
			>/dev/null &&
		run_refused 'Error from server \(Conflict\).*the object has been modified' \
			replace -f "$tmp/stale.yaml" &&
		run_expect '^3$' get widget w1 -o 'jsonpath={.spec.size}'
}

delete_finalizer_pending() {
	k patch widget w1 --type=merge \
		-p '{"metadata":{"finalizers":["example.com/keep"]}}' \
		>/dev/null &&
		run_expect 'deleted' delete widget w1 --wait=false &&
		run_expect '^20[0-9-]+T' get widget w1 \
			-o 'jsonpath={.metadata.deletionTimestamp}'
}

delete_finalizer_removed() {
	run_expect patched patch widget w1 --type=merge \
		-p '{"metadata":{"finalizers":null}}' &&
		run_refused 'Error from server \(NotFound\)' get widget w1
}

# Default --wait: list+watch by name until DELETED; within a few seconds.
delete_wait() {
	local t0 t1
	t0=$(date +%s%N)
	run_expect 'deleted' delete widget w2 --timeout=10s || return 1
	t1=$(date +%s%N)
	echo "delete took $(((t1 - t0) / 1000000)) ms"
	[ $(((t1 - t0) / 1000000)) -lt 5000 ] &&
		run_refused 'NotFound' get widget w2
}

api_resources() {
	run_expect '^agentruns +sympozium.ai/v1alpha1 +true +AgentRun' \
		api-resources &&
		out_has "$tmp/out" '^sympoziumschedules ' &&
		out_has "$tmp/out" '^configmaps +cm +v1 +true +ConfigMap' &&
		out_has "$tmp/out" '^namespaces +ns +v1 +false +Namespace' &&
		out_has "$tmp/out" '^customresourcedefinitions +crd,crds ' &&
		out_has "$tmp/out" '^leases +coordination.k8s.io/v1 ' &&
		out_has "$tmp/out" '^widgets +wd +example.com/v1 +true +Widget'
}

raw_group_version() {
	run_expect '"kind":"APIResourceList"' get --raw /apis/sympozium.ai/v1alpha1 &&
		out_has "$tmp/out" '"groupVersion":"sympozium.ai/v1alpha1"' &&
		out_has "$tmp/out" '"name":"agentruns"' &&
		out_has "$tmp/out" '"name":"agentruns/status"'
}

version() {
	run_expect '^Server Version: v1\.' version &&
		out_has "$tmp/out" '^Client Version: v1\.'
}

# A tutorial's first commands: kubectl 1.32 and later send these built-in
# objects as application/vnd.kubernetes.protobuf (kubesim/kproto.c).
first_creates() {
	k create namespace team-a -v=8 >"$tmp/create-ns.log" 2>&1 || {
		echo "kubectl create namespace failed:"
		tail -5 "$tmp/create-ns.log"
		return 1
	}
	run_expect 'secret/my-key created' create secret generic my-key \
		--from-literal=OPENAI_API_KEY=sk-test -n team-a &&
		run_expect 'configmap/settings created' create configmap \
			settings --from-literal=a=b --from-literal=empty= \
			-n team-a &&
		run_expect '^Active$' get namespace team-a \
			-o 'jsonpath={.status.phase}' &&
		run_expect '^c2stdGVzdA== Opaque$' get secret my-key -n team-a \
			-o 'jsonpath={.data.OPENAI_API_KEY} {.type}' &&
		run_expect '^\{"a":"b","empty":""\}$' get configmap settings \
			-n team-a -o 'jsonpath={.data}'
}

# The real server's columns for built-in kinds (kubesim/kprint.c): after
# first_creates, a pod, a service and an event in team-a.
builtin_tables() {
	cat >"$tmp/builtins.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: team-a}
spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-a}
spec: {ports: [{port: 80}], selector: {app: web}}
---
apiVersion: v1
kind: Event
metadata: {name: p1.1, namespace: team-a}
type: Warning
reason: BackOff
message: Back-off restarting failed container
involvedObject: {kind: Pod, name: p1, namespace: team-a}
YAML
	k apply -f "$tmp/builtins.yaml" >/dev/null &&
		run_expect '^NAME +STATUS +AGE$' get namespaces &&
		run_expect '^team-a +Active ' get namespaces &&
		run_expect '^NAME +READY +STATUS +RESTARTS +AGE$' get pods \
			-n team-a &&
		run_expect '^p1 +[01]/1 +[A-Za-z]+ +0 ' get pods -n team-a &&
		run_expect 'IP +NODE +NOMINATED NODE +READINESS GATES$' get pods \
			-n team-a -o wide &&
		run_expect '^NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE$' \
			get services -n team-a &&
		run_expect '^web +ClusterIP +[0-9.]+ +<none> +80/TCP ' get services \
			-n team-a &&
		run_expect '^settings +2 ' get configmaps -n team-a &&
		run_expect '^my-key +Opaque +1 ' get secrets -n team-a &&
		run_expect '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$' get events \
			-n team-a &&
		run_expect 'Warning +BackOff +pod/p1 +Back-off restarting' get \
			events -n team-a
}

# kubectl's generators for the other built-in kinds (protobuf bodies on
# 1.32+): each object stored with what was asked.
more_creates() {
	run_expect 'deployment.apps/web created' create deployment web \
		--image=nginx --replicas=0 --port=80 -n team-a &&
		run_expect '^0 \[\{"containerPort":80\}\]$' get deployment web \
			-n team-a -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].ports}' &&
		run_expect 'job.batch/once created' create job once --image=busybox \
			-n team-a -- echo hi &&
		run_expect '^\["echo","hi"\] Never$' get job once -n team-a -o \
			'jsonpath={.spec.template.spec.containers[0].command} {.spec.template.spec.restartPolicy}' &&
		run_expect 'serviceaccount/bot created' create serviceaccount bot \
			-n team-a &&
		run_expect 'role.rbac.authorization.k8s.io/reader created' create \
			role reader --verb=get,list --resource=pods -n team-a &&
		run_expect 'rolebinding.rbac.authorization.k8s.io/bot-reader created' \
			create rolebinding bot-reader --role=reader \
			--serviceaccount=team-a:bot -n team-a &&
		run_expect '^ServiceAccount bot Role reader$' get rolebinding \
			bot-reader -n team-a -o \
			'jsonpath={.subjects[0].kind} {.subjects[0].name} {.roleRef.kind} {.roleRef.name}' &&
		run_expect 'service/api created' create service clusterip api \
			--tcp=80:8080 -n team-a &&
		run_expect '^80 8080$' get service api -n team-a -o \
			'jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort}' &&
		run_expect 'pod/box created' run box --image=busybox --env=A=1 \
			-n team-a &&
		run_expect '^A=1$' get pod box -n team-a -o \
			'jsonpath={.spec.containers[0].env[0].name}={.spec.containers[0].env[0].value}'
}

# kubectl explain reads /openapi/v3: a CRD's schema, a built-in kind's.
explain() {
	run_expect '^KIND: +AgentRun$' explain agentrun.spec &&
		run_expect '^  instanceRef	<string>' explain agentrun.spec &&
		run_expect '^FIELD: containers <\[\]Object>$' explain \
			pods.spec.containers &&
		run_expect '^  image	<string>' explain pods.spec.containers &&
		run_expect '^  data	<map\[string\]string>' explain configmaps &&
		run_expect '^  labels	<map\[string\]string>' explain \
			namespaces.metadata
}

# Whether that kubectl sent protobuf at all (older ones send JSON).
sent_protobuf() {
	grep -q 'Content-Type: application/vnd.kubernetes.protobuf' \
		"$tmp/create-ns.log"
}

tls_token() {
	run_expect '^default ' get namespaces &&
		cm_yaml tls-cm >"$tmp/tls-cm.yaml" &&
		run_expect created create -f "$tmp/tls-cm.yaml" &&
		run_expect '^tls-cm ' get cm &&
		out_has "$dir/kc.yaml" 'certificate-authority-data:' &&
		out_has "$dir/kc.yaml" 'server: https://127\.0\.0\.1:'
}

tls_bad_token() {
	run_refused 'Unauthorized' --token wrong get namespaces
}

main_plain() {
	dir=$tmp/plain
	start_kubesim "$dir" || { fail kubesim_start "no listening line"; return; }
	ok kubesim_start
	export KUBECONFIG=$dir/kc.yaml
	check crd_apply_created apply_crds created
	check crd_wait_established wait_established
	check crd_reapply_unchanged apply_crds unchanged
	check crd_changed_configured crd_configured
	check samples_apply_valid apply_valid_samples
	if [ -d "$UP/samples" ]; then
		check samples_invalid_strict_bad_request apply_invalid_strict
		check samples_invalid_schema_is_invalid apply_invalid_schema
	else
		skip samples_invalid_strict_bad_request "no $UP (set SHARED_DIR)"
		skip samples_invalid_schema_is_invalid "no $UP (set SHARED_DIR)"
	fi
	check get_all_kinds_yaml get_all_yaml
	check get_plural_singular_kind get_names
	check get_printer_columns printer_columns
	check widget_crd_and_cr widget_crd
	check get_short_names get_short_names
	check get_watch_new_row get_watch
	check patch_merge patch_merge
	check patch_status_subresource patch_status
	check replace_stale_conflict replace_conflict
	check delete_finalizer_pending delete_finalizer_pending
	check delete_finalizer_removed_gone delete_finalizer_removed
	check delete_wait_returns delete_wait
	check api_resources api_resources
	check get_raw_group_version raw_group_version
	check get_raw_notfound run_refused \
		'^Error from server \(NotFound\)' get --raw /nope
	check version version
	check create_namespace_secret_configmap first_creates
	check builtin_table_columns builtin_tables
	check create_more_builtin_kinds more_creates
	check explain_crd_and_builtin explain
	if sent_protobuf; then
		ok create_bodies_protobuf
	else
		skip create_bodies_protobuf "this kubectl sends JSON bodies"
	fi
	stop_kubesim plain
}

main_tls() {
	dir=$tmp/tls
	if ! start_kubesim "$dir" --tls --token "s3cret-$$"; then
		fail kubesim_tls_start "no listening line"
		return
	fi
	case $url in
	https://*) ok kubesim_tls_start ;;
	*) fail kubesim_tls_start "url $url" ;;
	esac
	export KUBECONFIG=$dir/kc.yaml
	check tls_token_kubeconfig tls_token
	check tls_wrong_token_unauthorized tls_bad_token
	stop_kubesim tls
}

if [ ! -x "$KUBESIM" ]; then
	fail kubesim_present "$KUBESIM is not executable"
	exit 1
fi
main_plain
main_tls
exit 0
