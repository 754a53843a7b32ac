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
#        UPSTREAM_VERSION=vX.Y.Z scripts/upstream-tree.sh [DIR]
#                                   another release than the base in use
#                                   (K8S_VERSION); a release other than the
#                                   default base goes to
#                                   _output/upstream/kubernetes-vX.Y.Z
# Idempotent: an existing, clean tree at the right tags is reused. A
# release whose go.mod needs a newer Go than this machine's is handled
# with the pinned GOTOOLCHAIN (versions.sh: NEWER_GO_TOOLCHAIN).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/upstream-module.sh"

root="$(repo_root)"
version="${UPSTREAM_VERSION:-${K8S_VERSION}}"
[[ "${version}" =~ ^v1\.[0-9]+\.[0-9]+ ]] ||
	die "UPSTREAM_VERSION=${version} is not a Kubernetes release (v1.MINOR.PATCH[-pre])"
dir="${1:-$(upstream_dir "${root}" "${version}")}"
staging="$(k8s_staging_version "${version}")"
base_tag="evictkit-base"
pristine_tag="upstream-${version}"

require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
require_cmd git "apt-get install git"

if [[ -d "${dir}/.git" ]]; then
	if ! git -C "${dir}" rev-parse -q --verify "refs/tags/${base_tag}" >/dev/null; then
		die "${dir} exists but has no ${base_tag} tag (an interrupted earlier run?)" "remove it: rm -rf ${dir}"
	fi
	step "upstream tree: reusing ${dir} (${version})"
	exit 0
fi

step "upstream tree: locating k8s.io/kubernetes@${version} in the module cache"
moddir="$(upstream_module_dir "${version}")" ||
	die "go mod download did not give a directory for k8s.io/kubernetes@${version}" "check access to the Go module proxy"
use_go_for "${moddir}/go.mod"

tmp="${dir}.tmp.$$"
trap 'rm -rf "${tmp}" "${tmp}.tidy.log"' EXIT
rm -rf "${tmp}"
mkdir -p "$(dirname "${dir}")"
step "upstream tree: copying ${moddir}"
cp -a "${moddir}" "${tmp}"
chmod -R u+w "${tmp}"

cd "${tmp}"
git init -q -b main
git config core.autocrlf false
git config gc.auto 0
step "upstream tree: commit 1, pristine ${version}"
git add -A -f .
git commit -q -m "Kubernetes ${version}, pristine, as served by the Go module proxy"
git tag "${pristine_tag}"

step "upstream tree: commit 2, build plumbing (standalone go.mod)"
rm -rf vendor go.work go.work.sum
# Point every staging module at its release instead of ./staging, which the
# module zip does not carry; drop the two sample modules that are not served.
sed -i -E \
	-e '/k8s\.io\/sample-(cli-plugin|controller)[[:space:]]+=>/d' \
	-e "s#^([[:space:]]*)(k8s\\.io/[a-z0-9-]+) => \\./staging/src/k8s\\.io/[a-z0-9-]+\$#\\1\\2 => \\2 ${staging}#" \
	go.mod
if grep -q '=> ./staging' go.mod; then
	die "go.mod still points at ./staging after rewriting" "the replace block of ${version} has an unexpected shape"
fi
# A module upstream requires that the proxy refuses gets the stand-in
# written here for it (bases/standins: the kubelet's part of it only),
# copied into the tree and replaced in go.mod; the day the proxy serves the
# module, this does nothing.
standins=()
for standin in "${root}"/bases/standins/*/; do
	[[ -f "${standin}go.mod" ]] || continue
	mod="$(sed -n 's/^module //p' "${standin}go.mod")"
	want="$(awk -v m="${mod}" '$1 == m && $2 ~ /^v/ {print $2; exit}' go.mod)"
	[[ -n "${want}" ]] || continue
	proxy_refuses "${mod}" "${want}" || continue
	dst="_evictkit_standins/$(basename "${standin}")"
	mkdir -p "${dst}"
	cp -a "${standin}." "${dst}/"
	find "${dst}" -name '*_test.go' -delete
	GOFLAGS= go mod edit -replace "${mod}=./${dst}"
	standins+=("${mod} ${want}")
	note "the Go module proxy refuses ${mod}@${want}: the tree uses evictkit's stand-in (bases/standins/$(basename "${standin}"))"
done
if ! GOFLAGS=-mod=mod go mod tidy >"${tmp}.tidy.log" 2>&1; then
	[[ "${version}" != "${K8S_DEFAULT_VERSION}" ]] ||
		die "go mod tidy failed in the upstream tree: $(grep -v '^go: downloading' "${tmp}.tidy.log" | head -n 3 | tr '\n' ' ')"
	# Another release may need a module version the proxy does not serve
	# and that has no stand-in: the packages that import it stay unloaded.
	GOFLAGS=-mod=mod go mod tidy -e >"${tmp}.tidy.log" 2>&1 ||
		die "go mod tidy -e failed in the upstream tree: $(grep -v '^go: downloading' "${tmp}.tidy.log" | head -n 3 | tr '\n' ' ')"
	note "not served by the module proxy, packages that need them left out: $(grep -o '[^ ]*@v[^ :]*: reading' "${tmp}.tidy.log" | sed 's/: reading//' | sort -u | paste -sd' ' -)"
fi
rm -f "${tmp}.tidy.log"
standin_msg=""
if ((${#standins[@]} > 0)); then
	standin_msg="$(printf '\n\nThe Go module proxy refuses %s: replaced by the stand-in\nunder _evictkit_standins/ (bases/standins in evictkit).' "$(IFS=,; echo "${standins[*]}")")"
fi
git add -A -f .
git commit -q -m "build plumbing: build ${version} from the Go module proxy

Not part of the evictkit patch series. A module-proxy copy of
k8s.io/kubernetes has no staging/ sources and an OWNERS-only vendor/
directory, so this commit removes vendor/ and go.work and pins every
staging module to its ${staging} release.${standin_msg}"
git tag "${base_tag}"
cd - >/dev/null

mv "${tmp}" "${dir}"
trap - EXIT
step "upstream tree: ready at ${dir}"
