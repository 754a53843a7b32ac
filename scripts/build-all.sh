#!/usr/bin/env bash
# Everything the node image is made of, then the node image (make node-image):
#   kubelets (scripts/build-kubelet.sh), components
#   (scripts/build-components.sh), the project's engine, the node image
#   (scripts/node-image.sh).
# On a cold machine much of that time is network, not CPU: while the
# kubelet compiles, two background jobs download the components' Go modules
# and debootstrap the node's rootfs. Their output goes to
# _output/logs/prefetch-*.log; a failed prefetch is only a warning (the build
# that needs it reports the real error). The jobs are stopped if this script
# ends early.
#
# Usage: scripts/build-all.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"

root="$(repo_root)"
logs="${root}/_output/logs"
mkdir -p "${logs}"

declare -A jobs=()
stop_jobs() {
	local name
	for name in "${!jobs[@]}"; do
		# Each job leads its own process group (setsid): end it and its
		# children (go, debootstrap), only those.
		kill -TERM -- "-${jobs[${name}]}" 2>/dev/null || true
	done
}
trap stop_jobs EXIT

# background NAME COMMAND...: run COMMAND in its own process group.
background() {
	local name="$1"
	shift
	setsid "$@" >"${logs}/prefetch-${name}.log" 2>&1 &
	jobs[${name}]=$!
	note "prefetch: ${name} in the background (log: _output/logs/prefetch-${name}.log)"
}

# finish NAME: wait for a background job, warn if it failed.
finish() {
	local name="$1" rc=0
	wait "${jobs[${name}]}" || rc=$?
	unset "jobs[${name}]"
	if ((rc != 0)); then
		note "warning: prefetch ${name} failed (exit ${rc}); the build will retry it. Last lines:"
		tail -n 5 "${logs}/prefetch-${name}.log" | sed 's/^/      /' >&2
	fi
}

start=${SECONDS}
background modules bash "${root}/scripts/build-components.sh" --download-only
background rootfs bash "${root}/scripts/node-base.sh" rootfs

bash "${root}/scripts/build-kubelet.sh" all
finish modules
bash "${root}/scripts/build-components.sh"
bash "${root}/scripts/engine.sh" up
finish rootfs
bash "${root}/scripts/node-image.sh" >/dev/null
step "build-all: node image ready in $((SECONDS - start)) s"
