#!/usr/bin/env bash
# Builds, from pristine upstream plus patches/, offline from the Go module
# proxy:
#   _output/bin/kubelet            patched, version vX.Y.Z-evictkit.<patches hash>
#   _output/bin/kubeadm, kubectl   from the patched tree (they do not link the
#                                  eviction package; version vX.Y.Z)
#   _output/bin/kubelet-upstream   unpatched, version vX.Y.Z
# Source trees live in stable paths under _output/src so the Go build cache
# stays warm between builds.
#
# Usage: scripts/build-kubelet.sh [kubelet|all]   (default all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

root="$(repo_root)"
what="${1:-all}"
bin="${root}/_output/bin"
patched="${root}/_output/src/kubernetes-patched"
pristine="${root}/_output/src/kubernetes-upstream"
upstream="${root}/_output/upstream/kubernetes"

require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
require_cmd gcc "apt-get install gcc (the kubelet links with cgo)"
[[ -f "${root}/patches/series" ]] || die "patches/series is missing" "run: make patches"

evictkit_version="$(evictkit_kubelet_version "${root}")"

# ldflags VERSION TREE: upstream's version stamping, with a fixed build date
# (the tree's commit date) so builds are reproducible.
ldflags() {
	local version="$1" tree="$2" major minor commit date
	major="$(sed -E 's/^v([0-9]+)\..*/\1/' <<<"${K8S_VERSION}")"
	minor="$(sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/' <<<"${K8S_VERSION}")"
	commit="$(git -C "${tree}" rev-parse HEAD)"
	date="$(git -C "${tree}" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)"
	local flags=""
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
		flags+=" -X ${pkg}.gitCommit=${commit} -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=${date}"
	done
	printf '%s' "${flags}"
}

# build TREE VERSION OUT PKG
build() {
	local tree="$1" version="$2" out="$3" pkg="$4" start
	start=${SECONDS}
	step "build: $(basename "${out}") (${version})"
	(cd "${tree}" && GOFLAGS=-mod=mod go build -trimpath -ldflags "$(ldflags "${version}" "${tree}")" -o "${out}" "${pkg}") ||
		die "building ${pkg} in ${tree} failed" "see the compiler output above"
	note "$(basename "${out}") built in $((SECONDS - start)) s"
}

mkdir -p "${bin}"
step "build: applying patches/ to ${K8S_VERSION} in ${patched#"${root}"/}"
bash "${root}/scripts/patches.sh" apply "${patched}"
build "${patched}" "${evictkit_version}" "${bin}/kubelet" ./cmd/kubelet
[[ "${what}" == kubelet ]] && exit 0

build "${patched}" "${K8S_VERSION}" "${bin}/kubeadm" ./cmd/kubeadm
build "${patched}" "${K8S_VERSION}" "${bin}/kubectl" ./cmd/kubectl

if [[ ! -e "${pristine}/.git" ]]; then
	git -C "${upstream}" worktree prune
	git -C "${upstream}" worktree add -q --detach "${pristine}" evictkit-base
fi
build "${pristine}" "${K8S_VERSION}" "${bin}/kubelet-upstream" ./cmd/kubelet
step "build: done; $("${bin}/kubelet" --version) in ${bin#"${root}"/}"
