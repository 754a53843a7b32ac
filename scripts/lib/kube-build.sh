# Building Kubernetes commands from a source tree with upstream's version
# stamping. Sourced by build-kubelet.sh and build-components.sh, not run.
# shellcheck shell=bash

# kube_ldflags VERSION TREE: upstream's -X version flags, with a fixed build
# date (the tree's commit date) so that builds are reproducible.
kube_ldflags() {
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

# kube_build TREE VERSION OUT PKG: go build one command of the tree.
# Every Kubernetes binary is built static (CGO_ENABLED=0, as upstream builds
# its server binaries), the kubelet too: one build configuration means one
# set of compiled dependencies in the Go build cache for all of them (a
# cgo and a non-cgo build share nothing that depends on package net), which
# is most of a cold build's time; and static binaries run FROM scratch.
kube_build() {
	local tree="$1" version="$2" out="$3" pkg="$4" start
	start=${SECONDS}
	step "build: $(basename "${out}") (${version})"
	(cd "${tree}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false \
		-ldflags "$(kube_ldflags "${version}" "${tree}")" -o "${out}" "${pkg}") ||
		die "building ${pkg} in ${tree} failed" "see the compiler output above"
	note "$(basename "${out}") built in $((SECONDS - start)) s"
}

# base_src_dir ROOT NAME: where a source tree of the base in use lives
# (_output/src/NAME, NAME-<version> on a base other than the default).
base_src_dir() { base_path "$1/_output/src/$2" -; }

# base_bin_dir ROOT: where the Kubernetes binaries of the base in use go
# (_output/bin, _output/bin/<version> on a base other than the default).
base_bin_dir() { base_path "$1/_output/bin" /; }

# pristine_tree ROOT: the unpatched upstream tree (a worktree of the base's
# materialized tree at evictkit-base), created when missing.
pristine_tree() {
	local root="$1" pristine upstream
	pristine="$(base_src_dir "${root}" kubernetes-upstream)"
	upstream="$(upstream_dir "${root}")"
	# A worktree whose repository is gone (moved or removed) is made again.
	if [[ -e "${pristine}/.git" ]] && ! git -C "${pristine}" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		note "$(basename "${pristine}"): not a usable worktree any more; making it again"
		rm -rf "${pristine}"
	fi
	if [[ ! -e "${pristine}/.git" ]]; then
		[[ -d "${upstream}/.git" ]] || bash "${root}/scripts/upstream-tree.sh" >&2
		git -C "${upstream}" worktree prune
		git -C "${upstream}" worktree add -q --detach "${pristine}" evictkit-base
	fi
	printf '%s' "${pristine}"
}
