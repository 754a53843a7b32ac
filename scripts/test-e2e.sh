#!/usr/bin/env bash
# make test-e2e: the cluster e2e suites (test/e2e) against the two workers
# of a running kind cluster, writing JUnit and Ginkgo JSON reports to _output/reports/.
#
# Environment:
#   KUBELET  evictkit (default) or upstream: the kubelet both workers run;
#            with upstream they are switched to kubelet-upstream for the run
#            and back to ours afterwards.
#   PRESSURE_NODE, SPARE_NODE
#            the worker put under pressure (default evictkit-worker2) and the
#            one that takes the pods it cannot (default evictkit-worker)
#   LABELS   a Ginkgo label filter (default: every spec), e.g. Taints, Memory
#   REPEAT   extra passes, each in a fresh test process; the run stops at
#            the first failing pass (default 0)
#   CLUSTER, KUBECONFIG_PATH
#            another cluster than the default (evictkit, _output/kubeconfig)
#
# The cluster must be up (make cluster).
#
# Usage: scripts/test-e2e.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/suite-run.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
kubelet="${KUBELET:-evictkit}"
cluster="${CLUSTER:-evictkit}"
pressure_node="${PRESSURE_NODE:-${cluster}-worker2}"
spare_node="${SPARE_NODE:-${cluster}-worker}"
# The tests run in test/e2e: a relative path is the caller's.
kubeconfig="$(realpath -m -- "${KUBECONFIG_PATH:-${root}/_output/kubeconfig}")"
labels="${LABELS:-}"
[[ -f "${kubeconfig}" ]] || die "no kubeconfig at ${kubeconfig}" "bring the cluster up first: make cluster"

suite_use_kubelet "${root}" "${cluster}" "${kubeconfig}" "${kubelet}" "${pressure_node}" "${spare_node}"

report="${root}/_output/reports/e2e-${kubelet}${labels:+-${labels//[^A-Za-z0-9]/_}}"
step "test-e2e: suites on ${pressure_node} (pressure) and ${spare_node} (spare), kubelet ${kubelet}${labels:+, labels ${labels}}; diagnostics of failed specs in _output/logs/e2e/"
suite_run "${root}" test-e2e ./test/e2e "${report}" "${REPEAT:-0}" "${labels}" \
	-root "${root}" -cluster "${cluster}" -kubeconfig "${kubeconfig}" -kubelet "${kubelet}" \
	-pressure-node "${pressure_node}" -spare-node "${spare_node}"
