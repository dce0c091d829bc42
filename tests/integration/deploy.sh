#!/usr/bin/env bash
# deploy.sh: deploy/ applied with real kubectl (its built-in kustomize) to
# bin/kubesim.  `kubectl kustomize deploy/` renders, every namespaced
# object lands in sympozium-system; `kubectl apply -k deploy/` creates the
# CRDs, the ServiceAccount, the ClusterRole and ClusterRoleBinding, the
# leader-election Role and RoleBinding, the Deployment, the metrics
# Service, the PodDisruptionBudget (policy/v1) and the NetworkPolicy
# (networking.k8s.io/v1); each one is read back with the fields that
# matter (two replicas, --leader-elect, the hardened security context, the
# in-memory runtime volume, the probes, minAvailable, the policy's ports);
# a second apply changes nothing; the opt-in overlay
# deploy/overlays/skill-rbac/ renders to the base's objects plus its
# ClusterRole and ClusterRoleBinding, and applied on top of the base adds
# just those two (the base unchanged), read back with their rules and
# subject; our samples (deploy/samples/, one per kind) apply under strict
# validation; `kubectl delete -k` of the overlay removes it all.
#
# Output is cmocka-style (see kubectl.sh) so tests/run-tests.sh counts the
# checks.  Every command is bounded; kubesim is stopped by the EXIT trap.
set -u

KUBESIM=${KUBESIM:-$PWD/bin/kubesim}
KUBECTL=${KUBECTL:-kubectl}
NS=sympozium-system
tmp=$(mktemp -d /tmp/deploy-test.XXXXXX)
ks_pid=
results=()
npass=0
nfail=0

ok() {
	results+=("[       OK ] $1")
	npass=$((npass + 1))
}

fail() { # name why
	results+=("[  FAILED  ] $1")
	nfail=$((nfail + 1))
	echo "FAILED $1: $2" >&2
}

check() { # NAME CMD...: passes when CMD exits 0
	local name=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		ok "$name"
	else
		fail "$name" "$(head -c 3000 "$tmp/check.out")"
	fi
}

summary() {
	if [ -n "$ks_pid" ]; then
		kill -TERM "$ks_pid" 2>/dev/null
		wait "$ks_pid"
		if [ $? -eq 0 ]; then ok kubesim_sigterm_exit0; else
			fail kubesim_sigterm_exit0 "exit status"; fi
	fi
	echo "[==========] Running $((npass + nfail)) test(s)."
	printf '%s\n' "${results[@]}"
	echo "[==========] $((npass + nfail)) test(s) run."
	echo "[  PASSED  ] $npass test(s)."
	if [ "$nfail" -gt 0 ]; then
		echo "[  FAILED  ] $nfail test(s)."
	fi
	rm -rf "$tmp"
}
trap 'summary; [ "$nfail" -eq 0 ] || exit 1' EXIT
trap 'exit 1' INT TERM

start_kubesim() {
	local i
	timeout -k 5 300 "$KUBESIM" --listen 127.0.0.1:0 \
		--write-kubeconfig "$tmp/kc.yaml" \
		>"$tmp/kubesim.out" 2>"$tmp/kubesim.err" &
	ks_pid=$!
	for i in $(seq 100); do
		grep -q '^listening on ' "$tmp/kubesim.out" && return 0
		kill -0 "$ks_pid" 2>/dev/null || break
		sleep 0.05
	done
	tail -5 "$tmp/kubesim.err" >&2
	return 1
}

k() {
	timeout -k 2 60 "$KUBECTL" --cache-dir "$tmp/cache" "$@"
}

# expect PATTERN ARGS...: kubectl succeeds and prints PATTERN (grep -E).
expect() {
	local pat=$1
	shift
	k "$@" >"$tmp/out" 2>&1 || {
		echo "kubectl $* failed:"
		cat "$tmp/out"
		return 1
	}
	grep -Eq -- "$pat" "$tmp/out" || {
		echo "no /$pat/ in the output of kubectl $*:"
		cat "$tmp/out"
		return 1
	}
}

# jp OBJ JSONPATH WANT: the field of the stored object equals WANT.
jp() {
	local got
	got=$(k get "$1" -n "$NS" -o "jsonpath=$2" 2>&1) || {
		echo "get $1: $got"
		return 1
	}
	[ "$got" = "$3" ] || {
		echo "$1 $2: got '$got', want '$3'"
		return 1
	}
}

# The tree to apply: a copy of deploy/.
prepare_tree() {
	cp -r deploy "$tmp/deploy"
}

# Every namespaced object of the rendered tree is in sympozium-system and
# the cluster-scoped ones carry no namespace.
rendered_namespaces() {
	k kustomize "$tmp/deploy" >"$tmp/all.yaml" || return 1
	python3 - "$tmp/all.yaml" <<'EOF'
import sys, yaml
cluster = {"Namespace", "ClusterRole", "ClusterRoleBinding",
           "CustomResourceDefinition"}
bad = 0
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    ns = d["metadata"].get("namespace")
    kind = d["kind"]
    if (kind in cluster) != (ns is None) or (ns and ns != "sympozium-system"):
        print("bad namespace", kind, d["metadata"]["name"], ns)
        bad = 1
    for s in (d.get("subjects") or []):
        if s.get("namespace") != "sympozium-system":
            print("bad subject namespace", kind, s)
            bad = 1
print(len(docs), "objects")
sys.exit(bad or len(docs) < 17)
EOF
}

OVERLAY=overlays/skill-rbac

# The overlay renders to the base's objects plus its two, namespaced the
# same way.
overlay_renders() {
	local nb no
	k kustomize "$tmp/deploy" >"$tmp/base.yaml" &&
		k kustomize "$tmp/deploy/$OVERLAY" >"$tmp/overlay.yaml" || return 1
	nb=$(grep -c '^kind: ' "$tmp/base.yaml")
	no=$(grep -c '^kind: ' "$tmp/overlay.yaml")
	[ "$no" -eq $((nb + 2)) ] || {
		echo "base $nb objects, overlay $no"
		return 1
	}
	grep -q '^  name: sympozium-skill-rbac$' "$tmp/overlay.yaml"
}

# Applied over the base: its ClusterRole and binding created, nothing of
# the base changed.
overlay_applies() {
	k apply -k "$tmp/deploy/$OVERLAY" >"$tmp/ov.out" 2>&1 || {
		cat "$tmp/ov.out"
		return 1
	}
	grep -q '^clusterrole.rbac.authorization.k8s.io/sympozium-skill-rbac created$' \
		"$tmp/ov.out" &&
		grep -q '^clusterrolebinding.rbac.authorization.k8s.io/sympozium-skill-rbac created$' \
			"$tmp/ov.out" || {
		echo "overlay objects not created:"
		cat "$tmp/ov.out"
		return 1
	}
	if grep -Ev ' unchanged$' "$tmp/ov.out" | grep -v 'sympozium-skill-rbac created$' |
		grep -v '^poddisruptionbudget.policy/sympozium-controller configured$' |
		grep -q .; then
		echo "the overlay changed the base:"
		cat "$tmp/ov.out"
		return 1
	fi
	jp clusterrole/sympozium-skill-rbac '{.rules[0].resources}' \
		'["clusterroles","clusterrolebindings"]' &&
		jp clusterrole/sympozium-skill-rbac '{.rules[1].verbs}' \
			'["escalate","bind"]' &&
		jp clusterrolebinding/sympozium-skill-rbac \
			'{.subjects[0].name}/{.subjects[0].namespace}' \
			"sympozium-controller/$NS" &&
		! k get clusterrole/sympozium-controller -o yaml |
			grep -Eq -- '- (escalate|bind|impersonate|"?\*"?|clusterrole.*)$'
}

# The objects apply -k must create (kind/name as kubectl prints them).
OBJECTS="serviceaccount/sympozium-controller
clusterrole.rbac.authorization.k8s.io/sympozium-controller
clusterrolebinding.rbac.authorization.k8s.io/sympozium-controller
role.rbac.authorization.k8s.io/sympozium-leader-election
rolebinding.rbac.authorization.k8s.io/sympozium-leader-election
service/sympozium-controller-metrics
deployment.apps/sympozium-controller
poddisruptionbudget.policy/sympozium-controller
networkpolicy.networking.k8s.io/sympozium-controller"

apply_creates() {
	local o
	k apply -k "$tmp/deploy" >"$tmp/apply.out" 2>&1 || {
		cat "$tmp/apply.out"
		return 1
	}
	for o in $OBJECTS; do
		grep -q "^$o created" "$tmp/apply.out" || {
			echo "no '$o created' in:"
			cat "$tmp/apply.out"
			return 1
		}
	done
	[ "$(grep -c '^customresourcedefinition.* created' \
		"$tmp/apply.out")" -eq 8 ] || {
		echo "want 8 CRDs created:"
		cat "$tmp/apply.out"
		return 1
	}
}

objects_exist() {
	local o
	for o in $OBJECTS; do
		expect "$(echo "$o" | sed 's,^[^/]*/,,')" get "$o" -n "$NS" \
			-o name || return 1
	done
	expect 'condition met' wait --timeout=10s \
		--for condition=established crd --all
}

deployment_fields() {
	local d=deployment/sympozium-controller
	local c='{.spec.template.spec.containers[0]'
	jp $d '{.spec.replicas}' 2 &&
		jp $d "$c.args[0]}" --leader-elect &&
		jp $d '{.spec.template.spec.securityContext.runAsNonRoot}' true &&
		jp $d '{.spec.template.spec.securityContext.seccompProfile.type}' \
			RuntimeDefault &&
		jp $d "$c.securityContext.readOnlyRootFilesystem}" true &&
		jp $d "$c.securityContext.allowPrivilegeEscalation}" false &&
		jp $d "$c.securityContext.capabilities.drop[0]}" ALL &&
		jp $d "$c.livenessProbe.httpGet.path}" /healthz &&
		jp $d "$c.readinessProbe.httpGet.path}" /readyz &&
		jp $d '{.spec.template.spec.volumes[0].emptyDir.medium}' Memory &&
		jp $d "$c.volumeMounts[0].mountPath}" /run/sympozium &&
		jp $d '{.spec.template.spec.serviceAccountName}' \
			sympozium-controller &&
		jp $d "$c.image}" ghcr.io/sympozium-ai/sympoziumd:0.1.0
}

other_fields() {
	jp pdb/sympozium-controller '{.spec.minAvailable}' 1 &&
		jp networkpolicy/sympozium-controller \
			'{.spec.ingress[0].ports[*].port}' '8080 8081' &&
		jp networkpolicy/sympozium-controller '{.spec.policyTypes}' \
			'["Ingress","Egress"]' &&
		jp service/sympozium-controller-metrics \
			'{.spec.ports[0].port}' 8080 &&
		jp role/sympozium-leader-election \
			'{.rules[0].verbs}' '["get","create","update","watch"]' &&
		jp clusterrolebinding/sympozium-controller \
			'{.subjects[0].namespace}' "$NS"
}

reapply_unchanged() {
	k apply -k "$tmp/deploy" >"$tmp/apply2.out" 2>&1 || {
		cat "$tmp/apply2.out"
		return 1
	}
	# kubectl always sends a PodDisruptionBudget's selector (its patch
	# strategy is "replace") and so prints "configured"; the object must
	# not change (generation stays 1).
	if grep -Ev ' unchanged$' "$tmp/apply2.out" |
		grep -v '^poddisruptionbudget.policy/sympozium-controller configured$' |
		grep -q .; then
		echo "a second apply changed something:"
		cat "$tmp/apply2.out"
		return 1
	fi
	jp pdb/sympozium-controller '{.metadata.generation}' 1 &&
		jp deployment/sympozium-controller '{.metadata.generation}' 1
}

samples_apply() {
	local n
	k apply -k deploy/samples >"$tmp/samples.out" 2>&1 || {
		cat "$tmp/samples.out"
		return 1
	}
	n=$(grep -c ' created$' "$tmp/samples.out")
	[ "$n" -eq 9 ] || {
		echo "want 9 created:"
		cat "$tmp/samples.out"
		return 1
	}
}

one_sample_per_kind() {
	local kind
	for kind in agentruns sympoziuminstances personapacks skillpacks \
		sympoziumschedules mcpservers sympoziumpolicies \
		sympoziumconfigs; do
		[ "$(k get "$kind.sympozium.ai" -n default -o name |
			wc -l)" -eq 1 ] || {
			echo "not one $kind"
			return 1
		}
	done
}

delete_all() {
	k delete -k deploy/samples --wait=false >"$tmp/del.out" 2>&1 &&
		k delete -k "$tmp/deploy/$OVERLAY" --wait=false --ignore-not-found >>"$tmp/del.out" 2>&1 || {
		cat "$tmp/del.out"
		return 1
	}
	! k get deployment/sympozium-controller -n "$NS" >/dev/null 2>&1 &&
		! k get clusterrole/sympozium-controller >/dev/null 2>&1 &&
		! k get clusterrole/sympozium-skill-rbac >/dev/null 2>&1
}

if [ ! -x "$KUBESIM" ]; then
	fail kubesim_present "$KUBESIM is not executable"
	exit 1
fi
check prepare_tree prepare_tree || exit 1
check kustomize_renders_in_namespace rendered_namespaces
check overlay_renders_base_plus_two overlay_renders
if ! start_kubesim; then
	fail kubesim_start "no listening line"
	exit 1
fi
export KUBECONFIG=$tmp/kc.yaml
check apply_k_creates_every_object apply_creates
check objects_exist objects_exist
check deployment_fields deployment_fields
check pdb_netpol_service_rbac_fields other_fields
check second_apply_unchanged reapply_unchanged
check skill_rbac_overlay_applies overlay_applies
check samples_apply_strict samples_apply
check one_sample_per_kind one_sample_per_kind
check delete_k_removes delete_all
exit 0
