#!/usr/bin/env bash
# The build pipeline, stated once: each step, what it needs first, and its
# command. The make targets of the steps and scripts/e2e.sh go through it.
#
#   scripts/pipeline.sh STEP...      run each STEP after what it needs (each
#                                    step runs once; every step skips what is
#                                    already current)
#   scripts/pipeline.sh order STEP   print STEP and what it needs, in the
#                                    order they run, one per line
#   scripts/pipeline.sh only STEP    run STEP alone (its needs are current)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"

root="$(repo_root)"

# needs STEP: the steps STEP needs to have run first.
needs() {
	case "$1" in
	kubelet | host-deps) ;;
	components) echo host-deps ;;
	engine) echo components ;;
	node-image) echo kubelet components engine ;;
	cluster) echo node-image ;;
	*) die "no pipeline step ${1}" "steps: kubelet host-deps components engine node-image cluster" ;;
	esac
}

# run_step STEP: the step's command alone.
run_step() {
	case "$1" in
	kubelet) bash "${root}/scripts/build-kubelet.sh" all ;;
	host-deps) bash "${root}/scripts/host-deps.sh" ;;
	components) bash "${root}/scripts/build-components.sh" ;;
	engine) bash "${root}/scripts/engine.sh" up ;;
	node-image) bash "${root}/scripts/node-image.sh" >/dev/null ;;
	cluster) bash "${root}/scripts/cluster.sh" up ;;
	esac
}

# order STEP...: appends to ordered each step after what it needs, once.
ordered=()
order() {
	local s n
	for s in "$@"; do
		[[ " ${ordered[*]} " == *" ${s} "* ]] && continue
		n="$(needs "${s}")" || exit 1
		# shellcheck disable=SC2086
		[[ -z "${n}" ]] || order ${n}
		ordered+=("${s}")
	done
}

[[ $# -gt 0 ]] || die "usage: scripts/pipeline.sh STEP... | order STEP"
case "$1" in
order)
	shift
	order "$@"
	printf '%s\n' "${ordered[@]}"
	exit 0
	;;
only)
	[[ $# -eq 2 ]] || die "usage: scripts/pipeline.sh only STEP"
	needs "$2" >/dev/null || exit 1
	run_step "$2"
	exit
	;;
esac
order "$@"
for s in "${ordered[@]}"; do
	run_step "${s}"
done
