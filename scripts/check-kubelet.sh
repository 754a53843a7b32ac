#!/usr/bin/env bash
# Proves that the built kubelet runs evictkit's eviction package and that
# the patched tree still passes upstream's own tests around it:
#   1. kubelet --version names the patch set;
#   2. _output/bin/kubelet has symbols that only evictkit's package defines
#      and none that only upstream's defines; kubelet-upstream the reverse;
#   3. in the patched tree, our package's tests and upstream's tests of the
#      packages that use it (nodeshutdown, preemption, and the eviction-
#      related tests of pkg/kubelet) pass.
# Run scripts/build-kubelet.sh first (make kubelet does).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"

root="$(repo_root)"
bin="$(base_bin_dir "${root}")"
patched="$(base_src_dir "${root}" kubernetes-patched)"
pkg="k8s.io/kubernetes/pkg/kubelet/eviction"

for b in kubelet kubelet-upstream; do
	[[ -x "${bin}/${b}" ]] || die "${bin}/${b} does not exist" "run: make kubelet"
done

step "check-kubelet: version"
want="Kubernetes $(evictkit_kubelet_version "${root}")"
got="$("${bin}/kubelet" --version)"
[[ "${got}" == "${want}" ]] || die "kubelet --version printed '${got}', want '${want}'" "rebuild: make kubelet"
note "${got}"
got="$("${bin}/kubelet-upstream" --version)"
[[ "${got}" == "Kubernetes ${K8S_VERSION}" ]] || die "kubelet-upstream --version printed '${got}'"

# The package's alpha feature gates (each declared in its behaviour's own
# file, EvictionReclaimSized in feature_gates.go): the patched kubelet
# knows each, upstream's rejects it. The kubelet sets its feature gates
# from the flags right before it validates them, so a label it refuses
# stops it there, before it touches anything.
step "check-kubelet: feature gates"
mapfile -t gates < <(find "${root}/pkg/kubelet/eviction" -maxdepth 1 -name '*.go' ! -name '*_test.go' -print0 |
	xargs -0 sed -nE 's/^(const |\t)[a-zA-Z0-9]+ +featuregate\.Feature = "([A-Za-z0-9]+)"$/\2/p' | sort -u)
((${#gates[@]} > 0)) || die "no feature gate declarations (featuregate.Feature constants) found in pkg/kubelet/eviction"
note "${#gates[@]} gates: ${gates[*]}"
# gate_check BINARY GATE: what BINARY says of --feature-gates=GATE=true.
gate_check() {
	timeout 30 "$1" --feature-gates="$2=true" --node-labels=kubernetes.io/evictkit-gate-check=1 2>&1 || true
}
for g in "${gates[@]}"; do
	out="$(gate_check "${bin}/kubelet" "${g}")"
	if grep -q "unrecognized feature gate" <<<"${out}" || ! grep -q "evictkit-gate-check" <<<"${out}"; then
		die "kubelet does not take --feature-gates=${g}=true: $(tail -n 1 <<<"${out}")"
	fi
	out="$(gate_check "${bin}/kubelet-upstream" "${g}")"
	grep -q "unrecognized feature gate: ${g}" <<<"${out}" ||
		die "kubelet-upstream does not reject ${g}: $(tail -n 1 <<<"${out}")"
done
note "kubelet takes ${gates[*]}; kubelet-upstream rejects them"
# Functions only one of the two packages defines (large enough not to be
# inlined away).
ours_only=("${pkg}.decide" "${pkg}.evaluate" "${pkg}.rankPods" "${pkg}.localStorageViolations" "${pkg}.(*managerImpl).relieve"
	"${pkg}.sizeTarget" "${pkg}.(*managerImpl).fastPass" "${pkg}.(*memcgReader).workingSet")
upstream_only=("${pkg}.makeSignalObservations" "${pkg}.thresholdsMetGracePeriod" "${pkg}.(*managerImpl).localStorageEviction")

# symbols BINARY: the text symbols of the eviction package in BINARY.
symbols() { go tool nm "$1" | awk '$2 == "T" || $2 == "t" { print $3 }' | grep -F "${pkg}." | sort -u; }

step "check-kubelet: symbols"
ours_syms="$(symbols "${bin}/kubelet")"
up_syms="$(symbols "${bin}/kubelet-upstream")"
for s in "${ours_only[@]}"; do
	grep -qxF "${s}" <<<"${ours_syms}" || die "kubelet lacks ${s}: it does not run evictkit's package"
	! grep -qxF "${s}" <<<"${up_syms}" || die "kubelet-upstream has ${s}: it is not upstream's package"
done
for s in "${upstream_only[@]}"; do
	! grep -qxF "${s}" <<<"${ours_syms}" || die "kubelet has upstream's ${s}: the patch did not replace the package"
	grep -qxF "${s}" <<<"${up_syms}" || die "kubelet-upstream lacks upstream's ${s}"
done
note "kubelet: ${#ours_only[@]} evictkit-only functions present, ${#upstream_only[@]} upstream-only absent"

step "check-kubelet: tests in the patched tree"
[[ -d "${patched}" ]] || die "${patched} does not exist" "run: make kubelet"
cd "${patched}"
GOFLAGS=-mod=mod go test -count=1 ./pkg/kubelet/eviction/... ./pkg/kubelet/nodeshutdown/... ./pkg/kubelet/preemption/... ./pkg/features/
# pkg/kubelet's tests that exercise the eviction manager through the kubelet,
# and the pod worker's and runtime manager's kill paths that patch 0022 edits.
GOFLAGS=-mod=mod go test -count=1 ./pkg/kubelet/ -run "${KUBELET_TEST_RUN:-Evict|Admit|Pressure|TestHandlePod|TestRecordAdmissionRejection|TestSyncPodsSetStatusToFailed|PodWorker|TestUpdatePod|KillPod|GracePeriod}"
GOFLAGS=-mod=mod go test -count=1 ./pkg/kubelet/kuberuntime/ -run 'Kill|GracePeriod|LifeCycleHook'
step "check-kubelet: OK"
