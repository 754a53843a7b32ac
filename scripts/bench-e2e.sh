#!/usr/bin/env bash
# make bench-e2e: the side-by-side eviction benchmark (cmd/evictkit-bench-e2e)
# on one node of the kind cluster: kubelet-upstream against ours with the
# alpha gates of internal/benche2e's Gates on, the same scenarios
# interleaved, RUNS runs of each on each. Writes
# _output/reports/bench-e2e.md (table of medians and ratios),
# bench-e2e-latency.png and bench-e2e-results.jsonl.
#
# Environment:
#   RUNS       runs of each scenario on each kubelet (default 20)
#   SCENARIOS  comma-separated scenario names (default: all but the
#              unmeasured ones: oom-burst, softgrace, pagecache and
#              hard-during-soft)
#   NODE       the node (default evictkit-worker: 8 GiB of disk, no disk specs)
#   V2=1       on the cgroup v2 VM node (scripts/vm-node.sh, started and
#              joined when it does not run): NODE defaults to <cluster>-v2,
#              both kubelets get kernelMemcgNotification: true and ours
#              EvictionCgroupV2Notifier too; the report goes to
#              _output/reports/bench-e2e-v2/
#   CLUSTER, KUBECONFIG_PATH
#              another cluster than the default, which must be up already
#   REPORT=1   only re-render the report from the results file
#
# Usage: scripts/bench-e2e.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
cluster="${CLUSTER:-evictkit}"
v2="${V2:-}"
[[ -z "${v2}" || "${v2}" == 1 ]] || die "V2=${v2}: want 1 or nothing"
if [[ -n "${v2}" ]]; then
	node="${NODE:-${cluster}-v2}"
	out="${root}/_output/reports/bench-e2e-v2"
else
	node="${NODE:-${cluster}-worker}"
	out="${root}/_output/reports"
fi
kubeconfig="$(realpath -m -- "${KUBECONFIG_PATH:-${root}/_output/kubeconfig}")"
args=(-root "${root}" -cluster "${cluster}" -kubeconfig "${kubeconfig}" -node "${node}" -runs "${RUNS:-20}" -out "${out}")
[[ -z "${SCENARIOS:-}" ]] || args+=(-scenarios "${SCENARIOS}")
[[ "${REPORT:-}" != 1 ]] || args+=(-report)
if [[ "${REPORT:-}" != 1 ]]; then
	if [[ -z "${CLUSTER:-}" ]]; then
		step "bench-e2e: bringing up the cluster (if needed)"
		bash "${root}/scripts/cluster.sh" up
	fi
	if [[ -n "${v2}" ]]; then
		CLUSTER="${cluster}" VM_NAME="${node}" bash "${root}/scripts/vm-node.sh" up
	fi
fi
start=${SECONDS}
step "bench-e2e: ${RUNS:-20} runs of each scenario on each kubelet, node ${node}"
(cd "${root}" && go run -trimpath ./cmd/evictkit-bench-e2e "${args[@]}")
step "bench-e2e: done in $((SECONDS - start)) s"
