#!/usr/bin/env bash
# Builds, offline, the test images upstream's node e2e specs (the eviction
# specs and NodeConformance) run, under the exact names upstream's
# test/utils/image manifest gives them, and saves them as archives for
# scripts/test-upstream-node.sh to load into the node. Each is built from
# source or from Debian's packages, the way upstream's test/images builds
# it on its own base:
#   busybox:1.37.0-2      busybox from Debian's source package, busybox's
#                         defconfig, static (scripts/upstream-node/busybox.sh)
#   agnhost:2.66.1        upstream's test/images/agnhost, built static from
#                         the pristine tree, with its porter certificates and
#                         image users, on a Debian userland with the tools its
#                         Dockerfile installs (scripts/upstream-node/userland.sh)
#                         and busybox for every other command Alpine has
#   nonewprivs:1.4        test/images/nonewprivs, setuid, on busybox
#   nonroot:1.5           the userland, as user 1234
#   glibc-dns-testing:2.1.1
#                         the userland (glibc, dnsutils)
#   nginx:1.27.0-2        the userland's nginx, in the foreground
#   pause:3.10.2          our pause (_output/bin/pause, from make
#                         components), as the node image has it
# (all but pause under registry.k8s.io/e2e-test-images/). Left out, as no
# spec run here needs them: agnhost's fake registry content and coredns.
# The names and tags are read from the pristine tree's manifest, so a
# different upstream release cannot get stale names.
#
# Usage: scripts/upstream-node-images.sh
#   prints one line per image: ARCHIVE<TAB>IMAGE (an archive may hold several)
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
nonewprivs="${e2e_registry}/nonewprivs:$(manifest_tag Nonewprivs)"
nonroot="${e2e_registry}/nonroot:$(manifest_tag NonRoot)"
glibc_dns="${e2e_registry}/glibc-dns-testing:$(manifest_tag GlibcDnsTesting)"
nginx="${e2e_registry}/nginx:$(manifest_tag Nginx)"
pause_tag="$(manifest_tag Pause)"
[[ "${pause_tag}" == "${PAUSE_IMAGE_TAG}" ]] ||
	die "upstream's specs use pause ${pause_tag}, the node image has ${PAUSE_IMAGE_TAG}" "set PAUSE_IMAGE_TAG in scripts/lib/versions.sh"
pause="registry.k8s.io/pause:${pause_tag}"
[[ -x "${root}/_output/bin/pause" ]] || die "_output/bin/pause is missing" "make components"

# The bases, each cached in the engine by its inputs.
busybox_base="$(bash "${root}/scripts/upstream-node/busybox.sh")"
userland_base="$(bash "${root}/scripts/upstream-node/userland.sh")"

mkdir -p "${stage}/bin" "${stage}/images"
step "upstream-node images: agnhost and nonewprivs from ${tree#"${root}"/}/test/images"
(cd "${tree}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -ldflags "-s -w" \
	-o "${stage}/bin/agnhost" ./test/images/agnhost &&
	CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -ldflags "-s -w" \
		-o "${stage}/bin/nnp" ./test/images/nonewprivs) ||
	die "building test/images/agnhost or test/images/nonewprivs in ${tree} failed" "see the compiler output above"

# Everything the archives are made of: when none of it changed, the
# archives of the last run stand.
inputs="$(cat "${BASH_SOURCE[0]}" "${stage}/bin/agnhost" "${stage}/bin/nnp" "${root}/_output/bin/pause" \
	"${tree}/test/images/agnhost/porter/localhost.crt" "${tree}/test/images/agnhost/porter/localhost.key" \
	<(docker image inspect -f '{{.Id}}' "${busybox_base}" "${userland_base}") \
	<(printf '%s\n' "${agnhost}" "${busybox}" "${nonewprivs}" "${nonroot}" "${glibc_dns}" "${nginx}" "${pause}") |
	sha256sum | cut -c1-16)"
listing="${stage}/images/${inputs}.txt"
if [[ -s "${listing}" ]] && while IFS=$'\t' read -r a _; do [[ -s "${a}" ]] || exit 1; done <"${listing}"; then
	note "upstream-node images: unchanged (${inputs})"
	cat "${listing}"
	exit 0
fi
rm -rf "${stage}/images" && mkdir -p "${stage}/images"

# cleanup: the engine keeps no registry.k8s.io image (make node-image
# preloads every one it finds), nor a container of this script.
made=()
containers=()
cleanup() {
	local rc=$?
	((${#containers[@]} == 0)) || docker rm -f "${containers[@]}" >/dev/null 2>&1 || true
	((${#made[@]} == 0)) || docker image rm "${made[@]}" >/dev/null 2>&1 || true
	exit "${rc}"
}
trap cleanup EXIT

# from_dir NAME DIR CHANGE...: DIR as the one layer of image NAME.
from_dir() {
	local name="$1" dir="$2" c changes=()
	shift 2
	for c in "$@"; do changes+=(--change "${c}"); done
	tar -C "${dir}" --numeric-owner --owner=0 --group=0 -c . | docker import "${changes[@]}" - "${name}" >/dev/null
	made+=("${name}")
	note "${name}"
}
# on_base NAME BASE DIR CHANGE...: image NAME, BASE with DIR's files added
# as a layer of their own (so images on one base share its layers).
on_base() {
	local name="$1" base="$2" dir="$3" c changes=() id
	shift 3
	for c in "$@"; do changes+=(--change "${c}"); done
	id="$(docker create "${base}" true)"
	containers+=("${id}")
	if [[ -n "${dir}" ]]; then
		tar -C "${dir}" --numeric-owner --owner=0 --group=0 -c . | docker cp - "${id}:/"
	fi
	docker commit "${changes[@]}" "${id}" "${name}" >/dev/null
	docker rm "${id}" >/dev/null
	made+=("${name}")
	note "${name}"
}
# busybox_rootfs DIR: the busybox base's files in DIR.
busybox_rootfs() {
	local id
	id="$(docker create "${busybox_base}" true)"
	containers+=("${id}")
	mkdir -p "$1"
	docker export "${id}" | tar -C "$1" -x
	docker rm "${id}" >/dev/null
}

step "upstream-node images: busybox (${busybox_base})"
rm -rf "${stage}/busybox" && busybox_rootfs "${stage}/busybox"
from_dir "${busybox}" "${stage}/busybox" 'ENV PATH=/bin' 'CMD ["sh"]'

step "upstream-node images: nonewprivs on busybox"
rm -rf "${stage}/nonewprivs" && busybox_rootfs "${stage}/nonewprivs"
mkdir -p "${stage}/nonewprivs/usr/local/bin"
install -m 4755 "${stage}/bin/nnp" "${stage}/nonewprivs/usr/local/bin/nnp"
from_dir "${nonewprivs}" "${stage}/nonewprivs" 'ENV PATH=/usr/local/bin:/bin' 'CMD ["nnp"]'

step "upstream-node images: agnhost, nonroot, glibc-dns-testing and nginx on ${userland_base}"
rm -rf "${stage}/agnhost" && mkdir -p "${stage}/agnhost/uploads" "${stage}/agnhost/usr/local/bin" "${stage}/agnhost/etc"
cp "${stage}/bin/agnhost" "${stage}/agnhost/agnhost"
ln -sfn agnhost "${stage}/agnhost/agnhost-2"
cp "${tree}/test/images/agnhost/porter/localhost.crt" "${tree}/test/images/agnhost/porter/localhost.key" "${stage}/agnhost/"
# Alpine's busybox answers for every command its image has no program for:
# here, every applet the userland lacks (nmeter, ping, ps, ...).
cp "${stage}/busybox/bin/busybox" "${stage}/agnhost/usr/local/bin/busybox"
have="$(docker run --rm --network none --entrypoint /bin/bash "${userland_base}" -c \
	'compgen -c | sort -u')"
for applet in $("${stage}/busybox/bin/busybox" --list); do
	grep -qxF "${applet}" <<<"${have}" || ln -sfn busybox "${stage}/agnhost/usr/local/bin/${applet}"
done
# the image's own user and group (its Dockerfile's adduser and addgroup)
id="$(docker create "${userland_base}" true)"
containers+=("${id}")
docker cp "${id}:/etc/passwd" "${stage}/agnhost/etc/passwd"
docker cp "${id}:/etc/group" "${stage}/agnhost/etc/group"
docker rm "${id}" >/dev/null
echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >>"${stage}/agnhost/etc/passwd"
printf '%s\n' 'user-defined-in-image:x:1000:' 'group-defined-in-image:x:50000:user-defined-in-image' >>"${stage}/agnhost/etc/group"
on_base "${agnhost}" "${userland_base}" "${stage}/agnhost" 'WORKDIR /' \
	'EXPOSE 80 8080 8081 9376 5000' 'ENTRYPOINT ["/agnhost"]' 'CMD ["pause"]'
on_base "${nonroot}" "${userland_base}" "" 'USER 1234'
on_base "${glibc_dns}" "${userland_base}" "" 'CMD ["bash"]'
on_base "${nginx}" "${userland_base}" "" 'EXPOSE 80' 'STOPSIGNAL SIGQUIT' 'CMD ["nginx", "-g", "daemon off;"]'

step "upstream-node images: ${pause} from _output/bin/pause"
rm -rf "${stage}/pause" && mkdir -p "${stage}/pause/tmp" && chmod 1777 "${stage}/pause/tmp"
cp "${root}/_output/bin/pause" "${stage}/pause/pause"
from_dir "${pause}" "${stage}/pause" 'ENTRYPOINT ["/pause"]' 'USER 65535:65535'

step "upstream-node images: saving"
# the scratch images one archive each; the userland ones in one archive, so
# their shared layers are copied into the node once
save() {
	local out="${stage}/images/$1.tar" ref
	shift
	docker save -o "${out}" "$@"
	for ref in "$@"; do printf '%s\t%s\n' "${out}" "${ref}"; done >>"${listing}.new"
}
rm -f "${listing}.new"
save busybox "${busybox}"
save nonewprivs "${nonewprivs}"
save pause "${pause}"
save userland "${agnhost}" "${nonroot}" "${glibc_dns}" "${nginx}"
mv "${listing}.new" "${listing}"
note "upstream-node images: $(du -shc "${stage}"/images/*.tar | tail -1 | cut -f1) in $(wc -l <"${listing}") images"
cat "${listing}"
