#!/usr/bin/env bash
# make soak: the Soak spec of test/node (random memory, disk, inode and PID
# hogs on one worker, the history held to internal/soak's invariants) on
# each kubelet in turn, from one seed, so that both face the same draws.
#
# Environment:
#   DURATION  the hogs' time in all (a number of s, m or h; default 60m):
#             half on each kubelet, or all of it on KUBELET's
#   KUBELET   evictkit or upstream: that kubelet only (default: both, ours
#             first)
#   SEED      the random seed (default: one from the clock, printed)
#   NODE      the node under test (scripts/test-node.sh's default)
#
# Reports: _output/reports/soak-<kubelet>.md. Exits non-zero if any run
# failed (an invariant broken, or the run could not finish).
#
# Usage: scripts/soak.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"

root="$(repo_root)"
duration="${DURATION:-60m}"
[[ "${duration}" =~ ^([1-9][0-9]*)(s|m|h)$ ]] || die "DURATION=${duration}: want a number of s, m or h (e.g. 60m)"
case "${BASH_REMATCH[2]}" in
s) seconds=${BASH_REMATCH[1]} ;;
m) seconds=$((BASH_REMATCH[1] * 60)) ;;
h) seconds=$((BASH_REMATCH[1] * 3600)) ;;
esac
seed="${SEED:-$(date +%s%N)}"
[[ "${seed}" =~ ^[1-9][0-9]*$ ]] || die "SEED=${seed}: want a positive number"
if [[ -n "${KUBELET:-}" ]]; then
	kubelets=("${KUBELET}")
else
	kubelets=(evictkit upstream)
	seconds=$((seconds / 2))
fi
((seconds >= 60)) || die "DURATION=${duration}: at least a minute on each kubelet"

rc=0
for k in "${kubelets[@]}"; do
	step "soak: kubelet ${k}, ${seconds} s of hogs, seed ${seed}"
	SOAK=1 KUBELET="${k}" DURATION="${seconds}s" SEED="${seed}" bash "${root}/scripts/test-node.sh" || {
		note "the soak on kubelet ${k} FAILED"
		rc=1
	}
	[[ ! -f "${root}/_output/reports/soak-${k}.md" ]] || note "report: _output/reports/soak-${k}.md"
done
exit "${rc}"
