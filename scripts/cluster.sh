#!/usr/bin/env bash
# The kind cluster's life cycle, on the project's Docker engine.
#   scripts/cluster.sh up      engine up, node image, cluster up (idempotent)
#   scripts/cluster.sh down    cluster down, dedicated filesystems removed,
#                              engine stopped if the project started it
#   scripts/cluster.sh logs    export the cluster's logs to _output/logs
#   scripts/cluster.sh kubelet NODE evictkit|upstream
# Binaries are expected in _output/bin (make kubelet components; those of a
# base other than the default in _output/bin/<version>). Extra flags
# for evictkit-cluster come from CLUSTER_FLAGS (e.g. "-workers 0").
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
tool="${root}/_output/bin/evictkit-cluster"
# shellcheck disable=SC2206
flags=(${CLUSTER_FLAGS:-})

build_tool() {
	(cd "${root}" && go build -trimpath -o "${tool}" ./cmd/evictkit-cluster) || die "building cmd/evictkit-cluster failed"
}

case "${1:-}" in
up)
	start=${SECONDS}
	bash "${root}/scripts/engine.sh" up
	image="$(bash "${root}/scripts/node-image.sh" | tail -n 1)"
	build_tool
	"${tool}" -image "${image}" "${flags[@]}" up
	step "cluster: ready in $((SECONDS - start)) s; export KUBECONFIG=${root}/_output/kubeconfig"
	;;
down)
	if bash "${root}/scripts/engine.sh" status || [[ -x "${root}/_output/bin/dockerd" ]]; then
		bash "${root}/scripts/engine.sh" up
		build_tool
		"${tool}" "${flags[@]}" down
		bash "${root}/scripts/engine.sh" down
	else
		note "cluster: no engine was ever built here; nothing to take down"
	fi
	;;
logs)
	bash "${root}/scripts/engine.sh" status || die "the engine is not running, so there is no cluster to export logs from"
	build_tool
	"${tool}" "${flags[@]}" logs
	;;
kubelet)
	[[ $# -eq 3 ]] || die "usage: scripts/cluster.sh kubelet NODE evictkit|upstream"
	build_tool
	"${tool}" "${flags[@]}" kubelet "$2" "$3"
	;;
*) die "usage: scripts/cluster.sh up|down|logs|kubelet NODE evictkit|upstream" ;;
esac
