#!/usr/bin/env bash
# make bench-e2e: the side-by-side eviction benchmark (cmd/evictkit-bench-e2e)
# on one node of the kind cluster: kubelet-upstream against ours with
# EvictionFastPath and EvictionReclaimSized on, the same scenarios
# interleaved, RUNS runs of each on each. Writes
# _output/reports/bench-e2e.md (table of medians and ratios),
# bench-e2e-latency.png and bench-e2e-results.jsonl.
#
# Environment:
#   RUNS       runs of each scenario on each kubelet (default 20)
#   SCENARIOS  comma-separated scenario names (default: all)
#   NODE       the node (default evictkit-worker: 8 GiB of disk, no disk specs)
#   REPORT=1   only re-render the report from the results file
#
# Usage: scripts/bench-e2e.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/engine-env.sh"

root="$(repo_root)"
args=(-root "${root}" -node "${NODE:-evictkit-worker}" -runs "${RUNS:-20}")
[[ -z "${SCENARIOS:-}" ]] || args+=(-scenarios "${SCENARIOS}")
[[ "${REPORT:-}" != 1 ]] || args+=(-report)
if [[ "${REPORT:-}" != 1 ]]; then
	step "bench-e2e: bringing up the cluster (if needed)"
	bash "${root}/scripts/cluster.sh" up
fi
start=${SECONDS}
step "bench-e2e: ${RUNS:-20} runs of each scenario on each kubelet, node ${NODE:-evictkit-worker}"
(cd "${root}" && go run -trimpath ./cmd/evictkit-bench-e2e "${args[@]}")
step "bench-e2e: done in $((SECONDS - start)) s"
