#!/usr/bin/env bash
# Builds a deliberately broken kubelet for a negative control: the patched
# tree with one behaviour of our eviction package switched off, through
# go build -overlay (the tree itself is not touched, so nothing else built
# from it changes). A test that passes on our kubelet must fail on it.
#
# Controls (NAME: what is switched off):
#   localstorage-off   local storage limits (emptyDir sizeLimit, container
#                      and pod ephemeral-storage limits) are never enforced
#
# Out: _output/bin/kubelet-control-NAME. Run make kubelet first.
#
# Usage: scripts/control-kubelet.sh NAME
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"

root="$(repo_root)"
name="${1:-}"
patched="$(base_src_dir "${root}" kubernetes-patched)"
# control NAME: the file it changes and the line after which it returns.
case "${name}" in
localstorage-off)
	file=pkg/kubelet/eviction/localstorage.go
	after='^func localStorageViolations\(.*\{$'
	insert='	return nil // negative control localstorage-off: no local storage limit is enforced'
	;;
*) die "no control '${name}'" "controls: localstorage-off" ;;
esac
[[ -f "${patched}/${file}" ]] || die "${patched#"${root}"/}/${file} is missing" "make kubelet"
require_cmd go "Go 1.26 is expected at /usr/local/go/bin"

work="${root}/_output/build/control-${name}"
rm -rf "${work}" && mkdir -p "${work}"
awk -v re="${after}" -v ins="${insert}" '{ print } $0 ~ re { print ins; n++ } END { exit n == 1 ? 0 : 1 }' \
	"${patched}/${file}" >"${work}/$(basename "${file}")" ||
	die "${file}: want exactly one line matching ${after} in the patched tree" "update the control in ${BASH_SOURCE[0]}"
printf '{"Replace":{"%s":"%s"}}\n' "${patched}/${file}" "${work}/$(basename "${file}")" >"${work}/overlay.json"

out="${root}/_output/bin/kubelet-control-${name}"
version="$(evictkit_kubelet_version "${root}")-control-${name}"
step "control kubelet: ${name} (${file} changed by overlay)"
start=${SECONDS}
(cd "${patched}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false \
	-overlay "${work}/overlay.json" -ldflags "$(kube_ldflags "${version}" "${patched}")" -o "${out}" ./cmd/kubelet) ||
	die "building the ${name} control kubelet failed" "see the compiler output above"
note "kubelet-control-${name} built in $((SECONDS - start)) s (${version})"
