#!/usr/bin/env bash
# stage-tests.sh: the eviction package's tests at every stage of the patch
# series. For the stage of each patch that changes the package (the core
# beside upstream's code, then one more feature of features_in_order at a
# time: the manager on the core, the fuzz targets, each alpha gate), the
# package is cut to those features exactly as the patch generator cuts it
# (scripts/patchset/package.sh) into a scratch directory of evictkit's
# module, and go test runs there. This proves each commit's own tests
# without building the patched kubernetes tree once per stage. At each
# stage the short parity run (internal/parity, against upstream v1.37.2
# with every gate off) runs on that stage's package too; make test skips
# it here, as make verify-patches runs it on each commit's own package.
#
#   RUN=<regexp>   go test -run (default: every test)
#   PARITY=0       skip the parity runs
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "${root}/scripts/lib/steps.sh"
EVICTKIT="${root}"
source "${root}/scripts/patchset/package.sh"
source "${root}/scripts/lib/stage-parity.sh"

scratch="${root}/_output/stage-tests"
cleanup() { rm -rf "${scratch}"; }
trap cleanup EXIT

# stage DIR FEATURE: the package as of FEATURE (none when empty) in DIR.
# Before wired the core sits beside upstream's code, copied from the module
# cache (less the files the features reached replace); upstream's tests
# are left out here (they need modules evictkit's module does not
# require) and run in the tree in make verify-patches.
stage() {
	local enabled_features up f
	enabled_features="$(features_through "$2")"
	rm -rf "$1" && mkdir -p "$1"
	if ! feature_enabled wired; then
		up="$(cd "${root}" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/pkg/kubelet/eviction"
		find "${up}" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$1/" \;
		chmod u+w "$1"/*.go
		for f in $(replaced_upstream_files); do
			[[ -f "${up}/${f}" ]] || die "upstream_replaced names ${f}, which upstream's package does not have"
			rm -f "$1/${f}"
		done
	fi
	cut_package "$1"
}

failed=()
for feature in "" "${features_in_order[@]}"; do
	name="${feature:-the base: threshold evaluation beside upstream code}"
	step "stage-tests: the package at ${name}$([[ -z "${feature}" ]] || echo " (and the features before it)")"
	stage "${scratch}/eviction" "${feature}"
	start=${SECONDS}
	if (cd "${root}" && go test -count=1 ${RUN:+-run "${RUN}"} ./_output/stage-tests/eviction/ >"${scratch}.log" 2>&1); then
		note "tests ok in $((SECONDS - start)) s"
	else
		grep -E -- '^(--- FAIL|FAIL|panic)|_test\.go:[0-9]+:' "${scratch}.log" | head -n 20 >&2 || true
		failed+=("${name} (tests)")
	fi
	[[ "${PARITY:-1}" != 0 ]] || continue
	start=${SECONDS}
	if line="$(stage_parity "${scratch}/eviction" "${scratch}/parity")"; then
		note "${line} ($((SECONDS - start)) s)"
	else
		failed+=("${name} (parity)")
	fi
done
rm -f "${scratch}.log"
[[ ${#failed[@]} -eq 0 ]] || die "the package's tests fail at the stage of: ${failed[*]}"
step "stage-tests: every stage passes its own tests$([[ "${PARITY:-1}" == 0 ]] || echo " and the short parity run") (${#features_in_order[@]} features + the base)"
