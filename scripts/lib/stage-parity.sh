# Sourced: the short parity run (internal/parity, TestParityShort: 300
# scenarios against upstream's manager, every gate off) against a copy of
# an eviction package other than evictkit's own, such as a stage of the
# patch series. Needs root (evictkit's checkout) and steps.sh.

# stage_parity PKGDIR HARNESSDIR: builds the parity harness in HARNESSDIR
# against the package in PKGDIR (both directories of evictkit's module)
# and runs it; prints the run's "parity:" line, or its failures and
# returns 1. Where PKGDIR still has upstream's manager (eviction_manager.go:
# the stages before the manager is wired to the core) the run is told so,
# as upstream's outcomes depend on pod order.
stage_parity() {
	local pkgdir="$1" harness="$2" f log
	local own='"github.com/evictkit/evictkit/pkg/kubelet/eviction"'
	local staged="\"github.com/evictkit/evictkit/${pkgdir#"${root}"/}\""
	rm -rf "${harness}" && mkdir -p "${harness}"
	for f in "${root}"/internal/parity/*.go; do
		sed "s#${own}#${staged}#" "${f}" >"${harness}/$(basename "${f}")"
	done
	grep -q -F "${staged}" "${harness}/subjects.go" ||
		die "internal/parity/subjects.go no longer imports ${own}: the parity run cannot be pointed at ${pkgdir#"${root}"/}"
	local base_stage=()
	[[ ! -f "${pkgdir}/eviction_manager.go" ]] || base_stage=(-args -base-stage)
	log="${harness}.log"
	if (cd "${root}" && go test -count=1 -v -run '^TestParityShort$' "./${harness#"${root}"/}/" "${base_stage[@]}" >"${log}" 2>&1); then
		grep -o 'parity: .*' "${log}" | tail -n 1
		rm -f "${log}"
		return 0
	fi
	grep -E -- '^(--- FAIL|FAIL|panic)|parity: |_test\.go:[0-9]+:' "${log}" | head -n 20 >&2 || true
	rm -f "${log}"
	return 1
}
