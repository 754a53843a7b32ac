#!/usr/bin/env bash
# Builds the node image's base: a debootstrapped Debian rootfs with the
# packages in images/node/packages.txt, with systemd trimmed the way a node
# container needs (no udev, no getty, no units kind does not start),
# imported into the project's engine as evictkit/node-base:<inputs hash>.
# Skipped when that image exists. Prints the image name on stdout.
#
# Usage: scripts/node-base.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
packages_file="${root}/images/node/packages.txt"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

hash="$(cat "${BASH_SOURCE[0]}" "${packages_file}" <(echo "${DEBIAN_SUITE} ${mirror}") | sha256sum | cut -c1-12)"
image="evictkit/node-base:${DEBIAN_SUITE}-${hash}"
if docker image inspect "${image}" >/dev/null 2>&1; then
	note "node-base: ${image} exists"
	printf '%s\n' "${image}"
	exit 0
fi

require_cmd debootstrap "apt-get install debootstrap"
rootfs="${root}/_output/build/node-rootfs"

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
step "node-base: debootstrap ${DEBIAN_SUITE} (minbase + ${packages//,/ })"
start=${SECONDS}
debootstrap --variant=minbase --include="${packages}" "${DEBIAN_SUITE}" "${rootfs}" "${mirror}" \
	>"${root}/_output/logs/debootstrap.log" 2>&1 ||
	{ tail -n 30 "${root}/_output/logs/debootstrap.log" >&2; die "debootstrap failed" "see _output/logs/debootstrap.log"; }
unmount_below "${rootfs}"
note "debootstrap: $((SECONDS - start)) s"

step "node-base: trimming systemd and apt caches"
(
	cd "${rootfs}"
	# A node container boots systemd only for containerd and the kubelet:
	# no tmpfiles setup at boot, no default wants, no udev or initctl sockets.
	find lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
	rm -f lib/systemd/system/multi-user.target.wants/* etc/systemd/system/*.wants/* \
		lib/systemd/system/local-fs.target.wants/* lib/systemd/system/sockets.target.wants/*udev* \
		lib/systemd/system/sockets.target.wants/*initctl* lib/systemd/system/basic.target.wants/*
	echo "ReadKMsg=no" >>etc/systemd/journald.conf
	ln -sfn /lib/systemd/systemd sbin/init
	ln -sf /dev/null etc/systemd/system/systemd-binfmt.service
	rm -rf var/lib/apt/lists/* var/cache/apt/*.bin var/cache/apt/archives/*.deb var/log/*.log \
		usr/share/doc/* usr/share/man/* usr/share/info/* usr/share/locale/*
	: >etc/machine-id
)

step "node-base: importing ${image}"
tar -C "${rootfs}" --numeric-owner -c . | docker import --change 'ENV container=docker' - "${image}" >/dev/null
note "node-base: ${image} in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "${image}" | awk '{printf "%.0f MB", $1/1e6}'))"
printf '%s\n' "${image}"
