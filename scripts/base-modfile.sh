#!/usr/bin/env bash
# Writes a go.mod (and its go.sum beside it) for evictkit's module on an
# upstream release other than the default base: bases/<version>/go.mod for
# a supported base (commit it), or OUT (make rebase: a release not yet
# supported). Its requirements are go.mod's (at
# least their versions), k8s.io/kubernetes is the base, and the staging
# modules are pinned as the base's materialized tree pins them; go mod tidy
# fills in the rest.
#
# Usage: scripts/base-modfile.sh VERSION [OUT]   (OUT must end in .mod)
set -euo pipefail
# VERSION is the argument: the base in use (K8S_VERSION) plays no part.
unset K8S_VERSION GOFLAGS
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/upstream-module.sh"

root="$(repo_root)"
version="${1:-}"
[[ "${version}" =~ ^v1\.[0-9]+\.[0-9]+ ]] || die "usage: scripts/base-modfile.sh VERSION [OUT] (VERSION: v1.MINOR.PATCH[-pre], not '${version}')"
[[ "${version}" != "${K8S_DEFAULT_VERSION}" ]] ||
	die "${version} is the default base: its module file is go.mod itself"
modfile="${2:-$(K8S_VERSION="${version}" base_modfile "${root}")}"
[[ "${modfile}" == *.mod ]] || die "OUT=${modfile} does not end in .mod (go derives its go.sum from the name)"
require_cmd go "Go 1.26 is expected at /usr/local/go/bin"

tree="$(upstream_dir "${root}" "${version}")"
UPSTREAM_VERSION="${version}" bash "${root}/scripts/upstream-tree.sh"
mkdir -p "$(dirname "${modfile}")"

step "base-modfile: ${modfile#"${root}"/} for ${version}"
tmp="${modfile%.mod}.tmp.mod"
trap 'rm -f "${tmp}" "${tmp%.mod}.sum"' EXIT
{
	echo "module $(sed -n 's/^module //p' "${root}/go.mod")"
	echo
	grep -m1 '^go ' "${tree}/go.mod"
	echo
	echo "require k8s.io/kubernetes ${version}"
	echo
	echo "require ("
	# go.mod's requirements but upstream itself: floors, tidy raises what
	# the base needs newer.
	awk '/^require \($/ {on = 1; next} on && /^\)$/ {on = 0} on && $1 != "k8s.io/kubernetes" {print}' "${root}/go.mod"
	echo ")"
	echo
	awk '/^replace \($/ {on = 1} on {print} on && /^\)$/ {exit}' "${tree}/go.mod"
} >"${tmp}"
grep -q "=> k8s.io/api $(k8s_staging_version "${version}")\$" "${tmp}" ||
	die "${tree#"${root}"/}/go.mod does not pin k8s.io/api to $(k8s_staging_version "${version}")" "remove ${tree#"${root}"/} and run this again"
cp "${root}/go.sum" "${tmp%.mod}.sum"
use_go_for "${tmp}"
(cd "${root}" && GOFLAGS=-mod=mod go mod tidy -modfile="${tmp}") ||
	die "go mod tidy failed for ${version}" "see its output above"
mv "${tmp}" "${modfile}"
mv "${tmp%.mod}.sum" "${modfile%.mod}.sum"
trap - EXIT
step "base-modfile: wrote ${modfile#"${root}"/} and go.sum ($(grep -c '// indirect' "${modfile}") indirect requirements)"
