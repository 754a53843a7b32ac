#!/usr/bin/env bash
# stage-tests.sh: the eviction package's tests at every stage of the patch
# series. For the stage of each patch that changes the package (no alpha
# feature, then one more feature of features_in_order at a time), the
# package is cut to those features exactly as the patch generator cuts it
# (scripts/patchset/package.sh) into a scratch directory of evictkit's
# module, and go test runs there. This proves each commit's own tests
# without building the patched kubernetes tree once per stage.
#
#   RUN=<regexp>   go test -run (default: every test)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "${root}/scripts/lib/steps.sh"
EVICTKIT="${root}"
source "${root}/scripts/patchset/package.sh"

scratch="${root}/_output/stage-tests"
cleanup() { rm -rf "${scratch}"; }
trap cleanup EXIT

# stage DIR FEATURE: the package as of FEATURE (none when empty) in DIR.
stage() {
	local enabled_features
	enabled_features="$(features_through "$2")"
	rm -rf "$1" && mkdir -p "$1"
	cut_package "$1"
}

failed=()
for feature in "" "${features_in_order[@]}"; do
	name="${feature:-no alpha feature}"
	step "stage-tests: the package with ${name}$([[ -z "${feature}" ]] || echo " (and the features before it)")"
	stage "${scratch}/eviction" "${feature}"
	start=${SECONDS}
	if (cd "${root}" && go test -count=1 ${RUN:+-run "${RUN}"} ./_output/stage-tests/eviction/ >"${scratch}.log" 2>&1); then
		note "ok in $((SECONDS - start)) s"
	else
		grep -E -- '^(--- FAIL|FAIL|panic)|_test\.go:[0-9]+:' "${scratch}.log" | head -n 20 >&2 || true
		failed+=("${name}")
	fi
done
rm -f "${scratch}.log"
[[ ${#failed[@]} -eq 0 ]] || die "the package's tests fail at the stage of: ${failed[*]}"
step "stage-tests: every stage passes its own tests (${#features_in_order[@]} features + the base)"
