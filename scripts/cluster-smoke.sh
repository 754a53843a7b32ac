#!/usr/bin/env bash
# CI's cluster gate: the node image (built here unless up to date) brings up
# a one-node cluster (named evictkit-smoke, so it never touches the default
# cluster) that reaches Ready on the patched kubelet and passes the pod
# network check, then runs the node e2e specs labelled Smoke on it; the
# cluster is then removed, and the engine stopped if this run started it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
tool="${root}/_output/bin/evictkit-cluster"
kubeconfig="${root}/_output/kubeconfig-smoke"
args=(-name evictkit-smoke -workers 0 -kubeconfig "${kubeconfig}")
report="${root}/_output/reports/node-e2e-evictkit-Smoke" # as scripts/test-node.sh names it
started_engine=false
specs_failed=false
# One trap for every way out: the smoke cluster (if the tool got built) and
# the engine (if this run started it) go away.
cleanup() {
	local rc=$?
	if [[ -x "${tool}" ]]; then
		"${tool}" "${args[@]}" down || rc=1
	fi
	if [[ "${started_engine}" == true ]]; then
		bash "${root}/scripts/engine.sh" down || rc=1
	fi
	# Last, so that the tail of a CI log says what failed and why.
	if [[ "${specs_failed}" == true ]]; then
		(cd "${root}" && go run ./cmd/evictkit-report "smoke=${report}.json") || true
	fi
	exit "${rc}"
}
trap cleanup EXIT
bash "${root}/scripts/engine.sh" status || started_engine=true
bash "${root}/scripts/engine.sh" up
image="$(bash "${root}/scripts/node-image.sh" | tail -n 1)"
(cd "${root}" && go build -trimpath -o "${tool}" ./cmd/evictkit-cluster)
start=${SECONDS}
"${tool}" -image "${image}" "${args[@]}" up
step "cluster-smoke: one-node cluster Ready and networked in $((SECONDS - start)) s"
# The node e2e specs labelled Smoke (memory and node filesystem pressure) on
# that node: real pressure, our kubelet's evictions, the condition clearing.
rm -f "${report}.json" # a report left by an earlier run must not stand for this one
CLUSTER=evictkit-smoke NODE=evictkit-smoke-control-plane KUBECONFIG_PATH="${kubeconfig}" \
	LABELS=Smoke KUBELET=evictkit bash "${root}/scripts/test-node.sh" || {
	specs_failed=true
	exit 1
}
