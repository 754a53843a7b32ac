#!/usr/bin/env bash
# The Debian userland under the test images that upstream builds on Debian
# (nonroot, glibc-dns-testing) or on Alpine with packages added (agnhost,
# nginx): a debootstrapped minbase rootfs with images/upstream-node/
# packages.txt, imported into the project's engine as
# evictkit/upstream-userland:<suite>-<hash of its inputs>. Skipped when that
# image exists. Prints the image name on stdout.
#
# Usage: scripts/upstream-node/userland.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/engine-env.sh"

root="$(repo_root)"
packages_file="${root}/images/upstream-node/packages.txt"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
hash="$(cat "${BASH_SOURCE[0]}" "${packages_file}" <(echo "${DEBIAN_SUITE} ${mirror}") | sha256sum | cut -c1-12)"
image="evictkit/upstream-userland:${DEBIAN_SUITE}-${hash}"
docker info >/dev/null 2>&1 || die "the project's Docker engine is not running" "scripts/engine.sh up"
if docker image inspect "${image}" >/dev/null 2>&1; then
	note "userland: ${image} exists"
	printf '%s\n' "${image}"
	exit 0
fi

require_cmd debootstrap "apt-get install debootstrap"
rootfs="${root}/_output/build/upstream-userland"
mkdir -p "${root}/_output/logs"
# unmount_below DIR: anything debootstrap left mounted inside the rootfs.
unmount_below() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r | xargs -r umount -l
}
cleanup() {
	unmount_below "${rootfs}"
	rm -rf "${rootfs}"
}
trap cleanup EXIT
cleanup

packages="$(grep -vE '^\s*(#|$)' "${packages_file}" | paste -sd, -)"
step "userland: debootstrap ${DEBIAN_SUITE} (minbase + ${packages//,/ })"
start=${SECONDS}
debootstrap --variant=minbase --include="${packages}" "${DEBIAN_SUITE}" "${rootfs}" "${mirror}" \
	>"${root}/_output/logs/debootstrap-userland.log" 2>&1 ||
	{ tail -n 30 "${root}/_output/logs/debootstrap-userland.log" >&2; die "debootstrap failed" "see _output/logs/debootstrap-userland.log"; }
unmount_below "${rootfs}"
# an image, not a system: no package caches, documentation or services
rm -rf "${rootfs}"/var/lib/apt/lists/* "${rootfs}"/var/cache/apt/*.bin "${rootfs}"/var/cache/apt/archives/*.deb \
	"${rootfs}"/var/log/*.log "${rootfs}"/usr/share/doc/* "${rootfs}"/usr/share/man/* "${rootfs}"/usr/share/info/* \
	"${rootfs}"/usr/share/locale/*
: >"${rootfs}/etc/machine-id"
tar -C "${rootfs}" --numeric-owner -c . |
	docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["bash"]' - "${image}" >/dev/null
note "userland: ${image} in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "${image}" | awk '{printf "%.0f MB", $1/1e6}'))"
printf '%s\n' "${image}"
