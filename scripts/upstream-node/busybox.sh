#!/usr/bin/env bash
# A static busybox built here from Debian's source package of the release
# upstream's image has (BUSYBOX_VERSION, from BUSYBOX_SUITE; busybox's own
# source, without Debian's patches) with busybox's own defconfig, the configuration of the busybox image upstream's test
# images start from. Debian's busybox-static is configured for an installer
# and lacks applets upstream's specs call (nmeter, which the container
# lifecycle specs use for every timestamp; nc -u; pgrep, flock, ...).
#
# The source comes through a private apt configuration (the host's sources
# and state are not touched), checked against Debian's archive keyring. The
# result is cached in the project's engine as evictkit/upstream-busybox:<hash
# of this script and the suite>, a one-layer image with /bin/busybox and a
# link per applet; when that image exists nothing is downloaded or built.
# Prints the image name on stdout.
#
# Usage: scripts/upstream-node/busybox.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/engine-env.sh"

root="$(repo_root)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
hash="$(cat "${BASH_SOURCE[0]}" <(echo "${BUSYBOX_SUITE} ${BUSYBOX_VERSION} ${mirror}") | sha256sum | cut -c1-12)"
image="evictkit/upstream-busybox:${BUSYBOX_VERSION}-${hash}"
docker info >/dev/null 2>&1 || die "the project's Docker engine is not running" "scripts/engine.sh up"
if docker image inspect "${image}" >/dev/null 2>&1; then
	note "busybox: ${image} exists"
	printf '%s\n' "${image}"
	exit 0
fi

require_cmd apt-get "a Debian host is expected"
require_cmd dpkg-source "apt-get install dpkg-dev"
require_cmd gcc "apt-get install gcc"
require_cmd make "apt-get install make"
require_cmd bzip2 "apt-get install bzip2"
[[ -e /usr/lib/x86_64-linux-gnu/libc.a ]] || die "no static C library (/usr/lib/x86_64-linux-gnu/libc.a)" "apt-get install libc6-dev"

work="${root}/_output/build/upstream-busybox"
rm -rf "${work}" && mkdir -p "${work}/apt/lists/partial" "${work}/apt/cache/archives/partial" "${work}/src" "${work}/rootfs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r "${keyring}" ]] || die "${keyring} is missing" "apt-get install debian-archive-keyring"
printf 'deb-src [signed-by=%s] %s %s main\n' "${keyring}" "${mirror}" "${BUSYBOX_SUITE}" >"${work}/apt/sources.list"
apt_private=(-q -o "Dir::Etc::SourceList=${work}/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=${work}/apt/lists" -o "Dir::Cache=${work}/apt/cache")

step "busybox: Debian's source package (${BUSYBOX_SUITE})"
apt-get "${apt_private[@]}" update >"${work}/apt.log" 2>&1 ||
	{ tail -n 20 "${work}/apt.log" >&2; die "apt-get update of ${mirror} ${BUSYBOX_SUITE} (deb-src) failed" "check access to Debian's repositories"; }
(cd "${work}/src" && apt-get "${apt_private[@]}" source --download-only busybox >>"${work}/apt.log" 2>&1) ||
	{ tail -n 20 "${work}/apt.log" >&2; die "apt-get source busybox failed" "check access to Debian's repositories"; }
dsc="$(find "${work}/src" -maxdepth 1 -name 'busybox_*.dsc' | head -1)"
[[ -n "${dsc}" ]] || die "apt-get source left no busybox_*.dsc in ${work}/src"
# dpkg-source checks the files against the .dsc, whose hashes apt checked
# against the signed Release. Debian's patches are left out: upstream's
# image is busybox as released, and one of them (for Debian's installer)
# makes ash drop environment variables whose names are not identifiers,
# which upstream's ConfigMap and Secret specs print with `sh -c env`.
dpkg-source -q -x --skip-patches "${dsc}" "${work}/src/busybox" >>"${work}/apt.log" 2>&1 ||
	{ tail -n 20 "${work}/apt.log" >&2; die "dpkg-source -x ${dsc##*/} failed"; }
version="$(sed -n 's/^Version: //p' "${dsc}")"
[[ "${version}" =~ ^([0-9]+:)?${BUSYBOX_VERSION//./\\.}- ]] ||
	die "Debian's ${BUSYBOX_SUITE} has busybox ${version}, not ${BUSYBOX_VERSION}" "set BUSYBOX_SUITE in scripts/lib/versions.sh to a suite that has ${BUSYBOX_VERSION}"

step "busybox: ${version}, defconfig, static"
start=${SECONDS}
(
	cd "${work}/src/busybox"
	make -s defconfig >/dev/null
	sed -i -E 's/^# CONFIG_STATIC is not set$/CONFIG_STATIC=y/' .config
	grep -qx 'CONFIG_STATIC=y' .config
	make -s -j"$(nproc)" busybox >"${work}/build.log" 2>&1
) || { tail -n 30 "${work}/build.log" >&2; die "building busybox ${version} failed" "see ${work#"${root}"/}/build.log"; }
bin="${work}/src/busybox/busybox"
file_out="$(file -b "${bin}" 2>/dev/null || true)"
[[ -z "${file_out}" || "${file_out}" == *"statically linked"* ]] || die "${bin} is not static: ${file_out}"
grep -qx nmeter <<<"$("${bin}" --list)" || die "busybox ${version} (defconfig) has no nmeter applet"
note "busybox: built in $((SECONDS - start)) s"

mkdir -p "${work}/rootfs/bin" "${work}/rootfs/etc" "${work}/rootfs/root" "${work}/rootfs/home" \
	"${work}/rootfs/var" "${work}/rootfs/tmp" && chmod 1777 "${work}/rootfs/tmp"
# the accounts of busybox's own image, so that id, whoami and ls -l name them
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'daemon:x:1:1:daemon:/usr/sbin:/bin/false' \
	'nobody:x:65534:65534:nobody:/home:/bin/false' >"${work}/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'daemon:x:1:' 'nogroup:x:65534:' >"${work}/rootfs/etc/group"
cp "${bin}" "${work}/rootfs/bin/busybox"
for applet in $("${bin}" --list); do
	[[ "${applet}" == busybox ]] && continue
	ln -sfn busybox "${work}/rootfs/bin/${applet}"
done
tar -C "${work}/rootfs" --numeric-owner --owner=0 --group=0 -c . |
	docker import --change 'ENV PATH=/bin' --change 'CMD ["sh"]' \
		--change "LABEL evictkit.dev/busybox-source=debian:busybox_${version}" - "${image}" >/dev/null
rm -rf "${work}/src"
note "busybox: ${image}"
printf '%s\n' "${image}"
