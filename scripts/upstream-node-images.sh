#!/usr/bin/env bash
# Builds, offline, the test images upstream's node e2e eviction specs run,
# under the exact names upstream's test/utils/image manifest gives them, and
# saves each as an archive for scripts/test-upstream-node.sh to load into
# the node:
#   registry.k8s.io/e2e-test-images/agnhost:2.66.1
#       upstream's test/images/agnhost, built static from the pristine tree,
#       with Debian's busybox-static for a shell (upstream's is Alpine's)
#   registry.k8s.io/e2e-test-images/busybox:1.37.0-2
#       Debian's busybox-static (1.35) with every applet linked in /bin
#   registry.k8s.io/pause:3.10.2
#       our pause (_output/bin/pause, from make components), as the node
#       image has it
# The names and tags are read from the pristine tree's manifest, so a
# different upstream release cannot get stale names.
#
# Usage: scripts/upstream-node-images.sh   (prints the archives, one a line)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"

root="$(repo_root)"
stage="${root}/_output/build/upstream-node-images"
require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
require_cmd docker "make components builds the Docker CLI"
require_cmd apt-get "a Debian host is expected"
docker info >/dev/null 2>&1 || die "the project's Docker engine is not running" "scripts/engine.sh up"

tree="$(pristine_tree "${root}")"
manifest="${tree}/test/utils/image/manifest.go"
# manifest_tag NAME: the tag upstream's manifest gives configs[NAME].
manifest_tag() {
	local tag
	tag="$(sed -n -E "s/^[[:space:]]*configs\[$1\] = Config\{list\.[A-Za-z0-9]+, \"[a-z0-9-]+\", \"([^\"]+)\"\}.*/\1/p" "${manifest}")"
	[[ -n "${tag}" ]] || die "no configs[$1] line in ${manifest}" "upstream's image manifest changed shape: update ${BASH_SOURCE[0]}"
	printf '%s' "${tag}"
}
e2e_registry="registry.k8s.io/e2e-test-images"
grep -q "PromoterE2eRegistry: *\"${e2e_registry}\"" "${manifest}" ||
	die "upstream's manifest does not name ${e2e_registry} as PromoterE2eRegistry" "update ${BASH_SOURCE[0]}"
agnhost="${e2e_registry}/agnhost:$(manifest_tag Agnhost)"
busybox="${e2e_registry}/busybox:$(manifest_tag BusyBox)"
pause_tag="$(manifest_tag Pause)"
[[ "${pause_tag}" == "${PAUSE_IMAGE_TAG}" ]] ||
	die "upstream's specs use pause ${pause_tag}, the node image has ${PAUSE_IMAGE_TAG}" "set PAUSE_IMAGE_TAG in scripts/lib/versions.sh"
pause="registry.k8s.io/pause:${pause_tag}"
[[ -x "${root}/_output/bin/pause" ]] || die "_output/bin/pause is missing" "make components"

mkdir -p "${stage}/debs" "${stage}/images"
# busybox-static from Debian, downloaded once.
deb="$(find "${stage}/debs" -name 'busybox-static_*.deb' | head -1)"
if [[ -z "${deb}" ]]; then
	step "upstream-node images: downloading Debian's busybox-static"
	(cd "${stage}/debs" && apt-get download -q busybox-static 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
		die "apt-get download busybox-static failed" "check access to Debian's repositories (apt-get update)"
	deb="$(find "${stage}/debs" -name 'busybox-static_*.deb' | head -1)"
fi
rm -rf "${stage}/busybox-deb" && mkdir -p "${stage}/busybox-deb"
dpkg-deb -x "${deb}" "${stage}/busybox-deb"
busybox_bin="${stage}/busybox-deb/bin/busybox"
[[ -x "${busybox_bin}" ]] || die "${deb} has no bin/busybox"

# with_busybox DIR: busybox at DIR/bin/busybox and a link per applet.
with_busybox() {
	local dir="$1" applet
	mkdir -p "${dir}/bin" "${dir}/tmp" && chmod 1777 "${dir}/tmp"
	cp "${busybox_bin}" "${dir}/bin/busybox"
	for applet in $("${busybox_bin}" --list); do
		[[ "${applet}" == busybox ]] && continue
		ln -sfn busybox "${dir}/bin/${applet}"
	done
}

# scratch_image NAME DIR CHANGE...: DIR as a one-layer image, saved.
scratch_image() {
	local name="$1" dir="$2" c changes=()
	shift 2
	for c in "$@"; do changes+=(--change "${c}"); done
	tar -C "${dir}" --numeric-owner --owner=0 --group=0 -c . | docker import "${changes[@]}" - "${name}" >/dev/null
	local out="${stage}/images/$(basename "${name%%:*}").tar"
	docker save -o "${out}" "${name}"
	# the engine keeps no registry.k8s.io image: make node-image preloads
	# every one it finds.
	docker image rm "${name}" >/dev/null
	note "${name}"
	printf '%s\n' "${out}"
}

step "upstream-node images: agnhost from ${tree#"${root}"/}/test/images/agnhost"
rm -rf "${stage}/agnhost" && mkdir -p "${stage}/agnhost"
with_busybox "${stage}/agnhost"
(cd "${tree}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -ldflags "-s -w" \
	-o "${stage}/agnhost/agnhost" ./test/images/agnhost) ||
	die "building test/images/agnhost in ${tree} failed" "see the compiler output above"
ln -sfn agnhost "${stage}/agnhost/agnhost-2"
mkdir -p "${stage}/agnhost/uploads"
scratch_image "${agnhost}" "${stage}/agnhost" 'ENV PATH=/bin' 'ENTRYPOINT ["/agnhost"]' 'CMD ["pause"]'

step "upstream-node images: busybox from $(basename "${deb}")"
rm -rf "${stage}/busybox" && mkdir -p "${stage}/busybox"
with_busybox "${stage}/busybox"
scratch_image "${busybox}" "${stage}/busybox" 'ENV PATH=/bin' 'CMD ["sh"]'

step "upstream-node images: ${pause} from _output/bin/pause"
rm -rf "${stage}/pause" && mkdir -p "${stage}/pause/tmp" && chmod 1777 "${stage}/pause/tmp"
cp "${root}/_output/bin/pause" "${stage}/pause/pause"
scratch_image "${pause}" "${stage}/pause" 'ENTRYPOINT ["/pause"]' 'USER 65535:65535'
