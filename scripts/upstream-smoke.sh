#!/usr/bin/env bash
# CI's upstream gate: one short eviction spec of upstream's own node e2e
# suite, unmodified, on our kubelet (make test-upstream-node with a fixed
# focus). LocalStorageCapacityIsolationEviction is the shortest of them
# (about 3 minutes): of eight pods writing to disk, the four over an
# emptyDir size limit or a container's (or sidecar's) ephemeral-storage
# limit must be evicted, and the four under their limits or on a
# memory-backed emptyDir must not. A pass that failed only because the
# container runtime could not create a test pod's container runs once more
# (both are reported). The node container is removed, and the engine
# stopped if this run started it.
#
# With "control" it is the lane's negative control instead: the same spec
# on a kubelet that enforces no local storage limit (scripts/control-
# kubelet.sh localstorage-off) must fail, on the pods that it should have
# evicted.
#
# Usage: scripts/upstream-smoke.sh [control]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/upstream-node-reports.sh"

root="$(repo_root)"
mode="${1:-smoke}"
[[ "${mode}" == smoke || "${mode}" == control ]] || die "unknown mode '${mode}'" "usage: scripts/upstream-smoke.sh [control]"
focus='LocalStorageCapacityIsolationEviction \[Feature:LocalStorageCapacityIsolationQuota\] \[Feature:Eviction\]'
started_engine=false
cleanup() {
	local rc=$?
	if [[ "${started_engine}" == true ]]; then
		bash "${root}/scripts/engine.sh" down || rc=1
	fi
	exit "${rc}"
}
trap cleanup EXIT
bash "${root}/scripts/engine.sh" status || started_engine=true
bash "${root}/scripts/engine.sh" up
bash "${root}/scripts/node-image.sh" >/dev/null
bash "${root}/scripts/build-upstream-e2e.sh"
start=${SECONDS}
if [[ "${mode}" == control ]]; then
	bash "${root}/scripts/control-kubelet.sh" localstorage-off
	rc=0
	KUBELET=control-localstorage-off FOCUS="${focus}" SKIP='' REPEAT=0 bash "${root}/scripts/test-upstream-node.sh" || rc=$?
	report="$(ls "${root}"/_output/reports/upstream-node-e2e/control-localstorage-off-*-pass1.xml 2>/dev/null | head -1)"
	[[ "${rc}" != 0 && -n "${report}" ]] || die "upstream-smoke control: the spec did not fail on the localstorage-off kubelet (exit ${rc})"
	# upstream's check that the over-limit pods were evicted is what must fail
	grep -q 'status="failed"' "${report}" && grep -q 'pods that should be evicted are still running' "${report}" ||
		die "upstream-smoke control: ${report#"${root}"/} does not show the eviction check failing" "read it: the spec failed for another reason"
	step "upstream-smoke control: upstream's ${focus} failed on the localstorage-off kubelet as it must, in $((SECONDS - start)) s"
	exit 0
fi
# the focus's reports, as test-upstream-node.sh names them
key="$(upstream_node_key "${focus}" "")"
reports="${root}/_output/reports/upstream-node-e2e"
xml="${reports}/evictkit-${key}-pass1.xml"
log="${reports}/evictkit-${key}-pass1-kubelet.log"
rm -rf "${reports}/runtime-failed" && rm -f "${xml}" "${log}"
rc=0
KUBELET=evictkit FOCUS="${focus}" SKIP='' REPEAT=0 bash "${root}/scripts/test-upstream-node.sh" || rc=$?
# A pass that failed only because containerd (runc) could not create a test
# pod's container never reached the kubelet's eviction code: it is printed,
# kept aside in runtime-failed/, and the spec runs once more. A second
# failure of any kind fails the gate.
if [[ "${rc}" != 0 && -f "${xml}" && -f "${log}" ]] &&
	why="$(cd "${root}" && go run ./cmd/evictkit-report -runtime-failure "${xml}" -kubelet-log "${log}")"; then
	note "the spec failed only because the container runtime could not create a test pod's container:"
	printf '      %s\n' "${why}" >&2
	mkdir -p "${reports}/runtime-failed"
	mv "${xml}" "${log}" "${reports}/runtime-failed/"
	step "upstream-smoke: running the spec once more (the failed pass is in ${reports#"${root}"/}/runtime-failed/)"
	rc=0
	KUBELET=evictkit FOCUS="${focus}" SKIP='' REPEAT=0 bash "${root}/scripts/test-upstream-node.sh" || rc=$?
fi
(cd "${root}" && go run ./cmd/evictkit-report -upstream-node _output/reports/upstream-node-e2e \
	-out _output/reports/upstream-node-e2e.md) || rc=1
if [[ -n "${why:-}" ]]; then
	printf '\nThe first pass failed only on the container runtime and was rerun once:\n\n%s\n' "${why}" \
		>>"${root}/_output/reports/upstream-node-e2e.md"
fi
if [[ "${rc}" != 0 ]]; then
	# CI keeps only the tail of the output and not the clone: say here what
	# happened to the test's pods, from upstream's own event dump in the
	# JUnit and from the kubelet's warnings.
	if [[ -f "${xml}" ]]; then
		note "events of the test's namespace (upstream's dump, ${xml#"${root}"/}):"
		grep -oE 'At [^&<]{0,60} - event for [^&<]{0,600}' "${xml}" | sort -u | tail -40 >&2 || true
	fi
	if [[ -f "${log}" ]]; then
		note "the kubelet's warnings about pods (${log#"${root}"/}):"
		grep -E 'kind="Pod" apiVersion="v1" type="Warning"' "${log}" | sed -E 's/^.*object=/object=/' | cut -c1-900 | tail -20 >&2 || true
	fi
	die "upstream-smoke: upstream's ${focus} failed on our kubelet (exit ${rc})" \
		"its JUnit and kubelet log are in _output/reports/upstream-node-e2e/"
fi
step "upstream-smoke: upstream's ${focus} passed on our kubelet in $((SECONDS - start)) s${why:+ (its second pass; the first failed on the container runtime)}"
