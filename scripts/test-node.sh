#!/usr/bin/env bash
# make test-node: the node e2e eviction suites (test/node) against one node
# of a kind cluster, writing JUnit and Ginkgo JSON reports to _output/reports/.
#
# Environment:
#   KUBELET  evictkit (default) or upstream: the kubelet the node under test
#            runs; with upstream the node is switched to kubelet-upstream for
#            the run and back to ours afterwards.
#   NODE     the node under test (default evictkit-worker2: the small
#            dedicated filesystems of kind-config.yaml)
#   IMAGEFS_NODE
#            the node with a dedicated image filesystem that the ImageFs
#            specs use (default evictkit-worker; none with CLUSTER set);
#            with KUBELET=upstream it is switched too
#   LABELS   a Ginkgo label filter (default: every spec), e.g. Smoke, Memory
#   REPEAT   extra passes of the selected specs, each in a fresh test process;
#            the run stops at the first failing pass (default 0)
#   CONTROL  1: a negative-control run (make test-node-controls): the Alpha
#            specs (LABELS narrows them) without their feature gates,
#            against KUBELET (upstream by default there); every one must
#            fail as it says it would, and a table of how each failed is
#            written to _output/reports/node-e2e-controls-<kubelet>.md
#   V2       1: run on the cgroup v2 VM node (scripts/vm-node.sh, started
#            and joined to the cluster when it does not run): NODE defaults
#            to <cluster>-v2, LABELS to Memory (the specs of a memory
#            signal: the ones cgroup v2 changes), no IMAGEFS_NODE; the
#            CgroupV2 specs run only there
#   SOAK     1: the Soak spec only (make soak runs it on each kubelet),
#            with DURATION (a Go duration of s, m or h; default 60m) of
#            random hogs from SEED (default 0: one from the clock, printed);
#            report in _output/reports/soak-<kubelet>.md. Without SOAK the
#            Soak spec is left out.
#   CLUSTER, KUBECONFIG_PATH
#            another cluster than the default (scripts/cluster-smoke.sh runs
#            the Smoke specs on its one-node cluster); when set, that cluster
#            must be up already and the default one is not brought up.
#
# Usage: scripts/test-node.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/suite-run.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
kubelet="${KUBELET:-evictkit}"
cluster="${CLUSTER:-evictkit}"
v2="${V2:-}"
[[ -z "${v2}" || "${v2}" == 1 ]] || die "V2=${v2}: want 1 or nothing"
if [[ -n "${v2}" ]]; then
	node="${NODE:-${cluster}-v2}"
	imagefs_node=""
	LABELS="${LABELS-Memory}"
else
	node="${NODE:-${cluster}-worker2}"
	imagefs_node="${IMAGEFS_NODE-}"
	[[ -n "${CLUSTER:-}" || -n "${imagefs_node}" ]] || imagefs_node="${cluster}-worker"
fi
kubeconfig="${KUBECONFIG_PATH:-${root}/_output/kubeconfig}"
# The tests run in test/node: a relative path is the caller's.
kubeconfig="$(realpath -m -- "${kubeconfig}")"
labels="${LABELS:-}"
case "${kubelet}" in
evictkit | upstream) ;;
*) die "KUBELET=${kubelet}: want evictkit or upstream" ;;
esac

if [[ -z "${CLUSTER:-}" ]]; then
	step "test-node: bringing up the cluster (if needed)"
	bash "${root}/scripts/cluster.sh" up
fi

if [[ -n "${v2}" ]]; then
	CLUSTER="${cluster}" VM_NAME="${node}" bash "${root}/scripts/vm-node.sh" up
fi

nodes=("${node}")
[[ -z "${imagefs_node}" || "${imagefs_node}" == "${node}" ]] || nodes+=("${imagefs_node}")
suite_use_kubelet "${root}" "${cluster}" "${kubeconfig}" "${kubelet}" "${nodes[@]}"

report="${root}/_output/reports/node-e2e${v2:+-v2}-${kubelet}${labels:+-${labels//[^A-Za-z0-9]/_}}"
soak_args=()
if [[ -n "${SOAK:-}" ]]; then
	[[ "${SOAK}" == 1 ]] || die "SOAK=${SOAK}: want 1 or nothing"
	[[ -z "${CONTROL:-}${v2}" ]] || die "SOAK=1 runs on a node of the kind cluster, with neither CONTROL nor V2"
	duration="${DURATION:-60m}"
	[[ "${duration}" =~ ^([1-9][0-9]*)(s|m|h)$ ]] || die "DURATION=${duration}: want a number of s, m or h (e.g. 30m)"
	case "${BASH_REMATCH[2]}" in
	s) minutes=$(((BASH_REMATCH[1] + 59) / 60)) ;;
	m) minutes=${BASH_REMATCH[1]} ;;
	h) minutes=$((BASH_REMATCH[1] * 60)) ;;
	esac
	seed="${SEED:-0}"
	[[ "${seed}" =~ ^[0-9]+$ ]] || die "SEED=${seed}: want a number (0: one from the clock)"
	labels="Soak"
	report="${root}/_output/reports/soak-${kubelet}"
	soak_args=(-soak-duration "${duration}" -soak-seed "${seed}" -soak-report "${report}.md")
	# The hogs' duration, then the pressure's end, the cleanup and the
	# kubelet's restarts.
	export SUITE_MINUTES=$((minutes + 30))
else
	labels="${labels:+(${labels}) && }!Soak"
fi
filter="${labels}"
# The CgroupV2 specs need the unified hierarchy: only the VM node has it.
v1_only=""
[[ -n "${v2}" ]] || v1_only="!CgroupV2"
if [[ -n "${CONTROL:-}" ]]; then
	report="${root}/_output/reports/node-e2e-controls-${kubelet}"
	filter="Alpha${v1_only:+ && ${v1_only}}${labels:+ && (${labels})}"
	step "test-node: negative controls on ${node} (kubelet ${kubelet}, labels ${filter}): every spec must fail as it says"
	rc=0
	suite_run "${root}" test-node-controls ./test/node "${report}" 0 "${filter}" \
		-root "${root}" -cluster "${cluster}" -node "${node}" -imagefs-node "${imagefs_node}" -kubeconfig "${kubeconfig}" -kubelet "${kubelet}" -control || rc=$?
	note "the suite exited ${rc} (failures are what a control expects)"
	(cd "${root}" && go run ./cmd/evictkit-report -controls "${report}.json" -kubelet "${kubelet}" -out "${report}.md")
	exit 0
fi
if [[ "${kubelet}" == upstream ]]; then
	# The Alpha specs turn on the evictkit kubelet's alpha feature gates,
	# which kubelet-upstream does not have.
	filter="${labels:+(${labels}) && }!Alpha"
	note "KUBELET=upstream: the Alpha specs are left out (they need the evictkit kubelet's alpha feature gates)"
fi
if [[ -n "${v1_only}" ]]; then
	filter="${v1_only}${filter:+ && (${filter})}"
	note "the CgroupV2 specs are left out: they run on the cgroup v2 VM node (V2=1)"
fi
step "test-node: suites on ${node}${imagefs_node:+ and ${imagefs_node}} (kubelet ${kubelet}${filter:+, labels ${filter}}); diagnostics of failed specs in _output/logs/node-e2e/"
suite_run "${root}" test-node ./test/node "${report}" "${REPEAT:-0}" "${filter}" \
	-root "${root}" -cluster "${cluster}" -node "${node}" -imagefs-node "${imagefs_node}" -kubeconfig "${kubeconfig}" -kubelet "${kubelet}" "${soak_args[@]}"
