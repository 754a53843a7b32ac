#!/usr/bin/env bash
# make e2e: the main job. Builds the patched kubelet and every component,
# the node image, brings up the kind cluster, runs the node e2e suites
# (test/node) and the cluster e2e suites (test/e2e), prints a summary
# (specs per suite, evictions, time per phase; also in
# _output/reports/e2e-summary-<kubelet>.md, -<kubelet>-<version>.md on a
# base other than the default: K8S_VERSION) and removes the cluster.
#
# Environment:
#   KUBELET       evictkit (default) or upstream: the kubelet the suites run
#                 against (the nodes are switched for the suites and back)
#   KEEP_CLUSTER  1: leave the cluster (and the engine) running at the end
#   LABELS        a Ginkgo label filter for both suites (default: every spec)
#
# Exits non-zero if a phase or a spec failed; the suites both run even if
# the first fails.
#
# Usage: scripts/e2e.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"

root="$(repo_root)"
kubelet="${KUBELET:-evictkit}"
case "${kubelet}" in
evictkit | upstream) ;;
*) die "KUBELET=${kubelet}: want evictkit or upstream" ;;
esac
reports="${root}/_output/reports"
mkdir -p "${reports}"
phases="$(base_path "${reports}/e2e-phases-${kubelet}" -).tsv"
summary="$(base_path "${reports}/e2e-summary-${kubelet}" -).md"
: >"${phases}"
# This run's suite reports only: a stale one would be summarized as this run's.
suffix="${LABELS:+-${LABELS//[^A-Za-z0-9]/_}}"
node_report="${reports}/node-e2e-${kubelet}${suffix}.json"
e2e_report="${reports}/e2e-${kubelet}${suffix}.json"
rm -f "${node_report}" "${e2e_report}"

failed=0
# phase NAME COMMAND...: runs a step, timed, into the phase log.
phase() {
	local name="$1" start=${SECONDS} status=ok
	shift
	step "e2e: ${name}"
	"$@" || status=failed
	printf '%s\t%d\t%s\n' "${name}" "$((SECONDS - start))" "${status}" >>"${phases}"
	[[ "${status}" == ok ]] || failed=1
	[[ "${status}" == ok ]]
}

finish() {
	local rc=$?
	((rc == 0)) || failed=1
	trap - EXIT
	if [[ "${KEEP_CLUSTER:-}" == 1 ]]; then
		note "KEEP_CLUSTER=1: the cluster stays (export KUBECONFIG=${root}/_output/kubeconfig; make cluster-down removes it)"
	else
		phase "cluster down" bash "${root}/scripts/cluster.sh" down || true
	fi
	step "e2e: summary (kubelet ${kubelet}, ${K8S_VERSION})"
	(cd "${root}" && go run ./cmd/evictkit-report -phases "${phases}" -out "${summary}" \
		"test/node=${node_report}" "test/e2e=${e2e_report}") || failed=1
	if ((failed)); then
		step "e2e: FAILED (summary ${summary#"${root}"/}; diagnostics in _output/logs/)"
		exit 1
	fi
	step "e2e: passed (summary ${summary#"${root}"/})"
}
trap finish EXIT

# The build pipeline, one timed phase per step (scripts/pipeline.sh).
steps="$(bash "${root}/scripts/pipeline.sh" order cluster)"
for s in ${steps}; do
	phase "${s}" bash "${root}/scripts/pipeline.sh" only "${s}"
done
# Both suites run whatever the other's outcome.
phase "test/node" env KUBELET="${kubelet}" bash "${root}/scripts/test-node.sh" || true
phase "test/e2e" env KUBELET="${kubelet}" bash "${root}/scripts/test-e2e.sh" || true
