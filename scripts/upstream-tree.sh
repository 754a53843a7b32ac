#!/usr/bin/env bash
# Materializes pristine upstream Kubernetes from the Go module cache as a
# git repository the patch series applies to:
#
#   commit 1  Kubernetes vX.Y.Z as served by the Go module proxy, untouched
#             (tag upstream-vX.Y.Z)
#   commit 2  build plumbing only: what a module-proxy copy needs to build on
#             its own (no vendor/, no go.work, staging modules pinned to
#             their releases). Not part of patches/. (tag evictkit-base)
#
# Usage: scripts/upstream-tree.sh [DIR]   (default _output/upstream/kubernetes)
# Idempotent: an existing, clean tree at the right tags is reused.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"

root="$(repo_root)"
dir="${1:-${root}/_output/upstream/kubernetes}"
base_tag="evictkit-base"
pristine_tag="upstream-${K8S_VERSION}"

require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
require_cmd git "apt-get install git"

if [[ -d "${dir}/.git" ]]; then
	if ! git -C "${dir}" rev-parse -q --verify "refs/tags/${base_tag}" >/dev/null; then
		die "${dir} exists but has no ${base_tag} tag (an interrupted earlier run?)" "remove it: rm -rf ${dir}"
	fi
	step "upstream tree: reusing ${dir} (${K8S_VERSION})"
	exit 0
fi

step "upstream tree: locating k8s.io/kubernetes@${K8S_VERSION} in the module cache"
moddir="$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -n "${moddir}" && -d "${moddir}" ]] || die "go mod download did not give a directory for k8s.io/kubernetes@${K8S_VERSION}" "check access to the Go module proxy"

tmp="${dir}.tmp.$$"
trap 'rm -rf "${tmp}"' EXIT
rm -rf "${tmp}"
mkdir -p "$(dirname "${dir}")"
step "upstream tree: copying ${moddir}"
cp -a "${moddir}" "${tmp}"
chmod -R u+w "${tmp}"

cd "${tmp}"
git init -q -b main
git config core.autocrlf false
git config gc.auto 0
step "upstream tree: commit 1, pristine ${K8S_VERSION}"
git add -A -f .
git commit -q -m "Kubernetes ${K8S_VERSION}, pristine, as served by the Go module proxy"
git tag "${pristine_tag}"

step "upstream tree: commit 2, build plumbing (standalone go.mod)"
rm -rf vendor go.work go.work.sum
# Point every staging module at its release instead of ./staging, which the
# module zip does not carry; drop the two sample modules that are not served.
sed -i -E \
	-e '/k8s\.io\/sample-(cli-plugin|controller)[[:space:]]+=>/d' \
	-e "s#^([[:space:]]*)(k8s\\.io/[a-z0-9-]+) => \\./staging/src/k8s\\.io/[a-z0-9-]+\$#\\1\\2 => \\2 ${K8S_STAGING_VERSION}#" \
	go.mod
if grep -q '=> ./staging' go.mod; then
	die "go.mod still points at ./staging after rewriting" "the replace block of ${K8S_VERSION} has an unexpected shape"
fi
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || die "go mod tidy failed in the upstream tree" "run it by hand in ${tmp} to see why"
git add -A -f .
git commit -q -m "build plumbing: build ${K8S_VERSION} from the Go module proxy

Not part of the evictkit patch series. A module-proxy copy of
k8s.io/kubernetes has no staging/ sources and an OWNERS-only vendor/
directory, so this commit removes vendor/ and go.work and pins every
staging module to its ${K8S_STAGING_VERSION} release."
git tag "${base_tag}"
cd - >/dev/null

mv "${tmp}" "${dir}"
trap - EXIT
step "upstream tree: ready at ${dir}"
