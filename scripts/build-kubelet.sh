#!/usr/bin/env bash
# Builds, from pristine upstream plus patches/, offline from the Go module
# proxy:
#   _output/bin/kubelet            patched, version vX.Y.Z-evictkit.<patches hash>
#   _output/bin/kubeadm, kubectl   from the patched tree (they do not link the
#                                  eviction package; version vX.Y.Z)
#   _output/bin/kubelet-upstream   unpatched, version vX.Y.Z
# Source trees live in stable paths under _output/src so the Go build cache
# stays warm between builds. On a base other than the default (K8S_VERSION)
# the series is generated on it, trees are _output/src/*-<version> and the
# binaries go to _output/bin/<version>/.
#
# Usage: scripts/build-kubelet.sh [kubelet|all]   (default all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/upstream-module.sh"

root="$(repo_root)"
what="${1:-all}"
bin="$(base_bin_dir "${root}")"
patched="$(base_src_dir "${root}" kubernetes-patched)"

require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
[[ -f "${root}/patches/series" ]] || die "patches/series is missing" "run: make patches"

evictkit_version="$(evictkit_kubelet_version "${root}")"

mkdir -p "${bin}"
step "build: applying the series to ${K8S_VERSION} in ${patched#"${root}"/}"
bash "${root}/scripts/patches.sh" apply "${patched}"
# A release the proxy serves only in part cannot give a kubelet: say which
# modules it lacks, and exit 3 so make test can tell this from a build that
# fails.
unserved="$(unserved_modules "${patched}" ./cmd/kubelet)"
if [[ -n "${unserved}" ]]; then
	printf 'error: the kubelet of %s cannot be built here: it needs %s, which the Go module proxy does not serve (403)\n' "${K8S_VERSION}" "${unserved}" >&2
	exit 3
fi
kube_build "${patched}" "${evictkit_version}" "${bin}/kubelet" ./cmd/kubelet
[[ "${what}" == kubelet ]] && exit 0

kube_build "${patched}" "${K8S_VERSION}" "${bin}/kubeadm" ./cmd/kubeadm
kube_build "${patched}" "${K8S_VERSION}" "${bin}/kubectl" ./cmd/kubectl

pristine="$(pristine_tree "${root}")"
kube_build "${pristine}" "${K8S_VERSION}" "${bin}/kubelet-upstream" ./cmd/kubelet
step "build: done; $("${bin}/kubelet" --version) in ${bin#"${root}"/}"
