#!/usr/bin/env bash
# Assembles the kind node image offline (kind's own `build node-image` pulls
# from registries):
#   1. evictkit/node-base:<hash>: debootstrapped Debian (scripts/node-base.sh);
#   2. the control-plane and addon images kubeadm expects, built locally from
#      our binaries (FROM scratch, kube-proxy on a minimal iptables/nftables
#      rootfs taken from the base), named as `kubeadm config images list` says;
#   3. a container of the base gets containerd, runc, crictl, CNI plugins,
#      kubeadm, kubectl, both kubelets (ours active, kubelet-upstream one
#      `evictkit-kubelet upstream` away), kind's base files, our node files
#      (images/node/files), and the images preloaded; it is committed as
#      evictkit/node:<k8s version>-<inputs hash>.
# Nothing is rebuilt when an image with that hash exists. Older evictkit/node
# images of the same upstream base are removed. Prints the image name on
# stdout and writes it to _output/node-image (-<version> on a base other than
# the default). The base's binaries come from its own directory
# (scripts/build-components.sh says which), the rest from _output/bin.
#
# Usage: scripts/node-image.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"

root="$(repo_root)"
shared_bin="${root}/_output/bin"
base_bin="$(base_bin_dir "${root}")"
stage="${root}/_output/build/node-image"
image_file="$(base_path "${root}/_output/node-image" -)"
docker version >/dev/null 2>&1 || die "the project's Docker engine does not answer on ${DOCKER_HOST}" "run: scripts/engine.sh up"

shared=(containerd containerd-shim-runc-v2 ctr runc crictl cni/host-local cni/loopback cni/ptp cni/portmap pause)
of_base=(kubelet kubelet-upstream kubeadm kubectl etcd coredns kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
for b in "${shared[@]/#/${shared_bin}/}" "${of_base[@]/#/${base_bin}/}"; do
	[[ -x "${b}" ]] || die "${b#"${root}"/} is missing" "run: make kubelet components (with K8S_VERSION=${K8S_VERSION})"
done
kind_dir="$(cd "${root}" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kind@${KIND_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
kind_base="${kind_dir}/images/base/files"
[[ -d "${kind_base}" ]] || die "kind's base image files are missing from the module cache (${kind_base})"

step "node-image: hashing inputs"
start=${SECONDS}
inputs_hash="$(
	{
		cat "${root}/scripts/lib/versions.sh" "${BASH_SOURCE[0]}" "${root}/scripts/node-base.sh" "${root}/images/node/packages.txt" "${root}/images/node/assemble.sh" "${root}/images/node/kube-proxy-rootfs.sh"
		(cd "${root}/images/node/files" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		(cd "${kind_base}" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		(cd "${shared_bin}" && sha256sum "${shared[@]}")
		(cd "${base_bin}" && sha256sum "${of_base[@]}")
	} | sha256sum | cut -c1-12
)"
image="evictkit/node:${K8S_VERSION}-${inputs_hash}"
note "inputs hashed in $((SECONDS - start)) s"

remove_older() {
	local old
	for old in $(docker image ls evictkit/node --format '{{.Repository}}:{{.Tag}}'); do
		[[ "${old}" == "${image}" || "${old}" != "evictkit/node:${K8S_VERSION}-"* ]] && continue
		docker image rm "${old}" >/dev/null 2>&1 && note "removed older ${old}" || true
	done
}

if docker image inspect "${image}" >/dev/null 2>&1; then
	note "node-image: ${image} is up to date"
	printf '%s\n' "${image}" >"${image_file}"
	printf '%s\n' "${image}"
	exit 0
fi

total=${SECONDS}
base="$(bash "${root}/scripts/node-base.sh" | tail -n 1)"

builder="evictkit-node-build-${inputs_hash}"
cleanup() {
	docker rm -f "${builder}" >/dev/null 2>&1 || true
	rm -rf "${stage}"
}
trap cleanup EXIT
cleanup
mkdir -p "${stage}/images" "${stage}/rootfs" "${stage}/bin/cni"
for b in "${shared[@]}"; do cp -l "${shared_bin}/${b}" "${stage}/bin/${b}"; done
for b in "${of_base[@]}"; do cp -l "${base_bin}/${b}" "${stage}/bin/${b}"; done
bin="${stage}/bin"

# registry_images: the registry.k8s.io images in the engine (ours: nothing
# is ever pulled).
registry_images() {
	docker image ls --format '{{.Repository}}:{{.Tag}}' \
		--filter 'reference=registry.k8s.io/*' --filter 'reference=registry.k8s.io/*/*'
}

# scratch_image NAME DIR CHANGE...: DIR's contents as a one-layer image.
scratch_image() {
	local name="$1" dir="$2"
	shift 2
	local changes=() c
	for c in "$@"; do changes+=(--change "${c}"); done
	mkdir -p "${dir}/tmp" && chmod 1777 "${dir}/tmp"
	tar -C "${dir}" --numeric-owner --owner=0 --group=0 -c . | docker import "${changes[@]}" - "${name}" >/dev/null
	docker save -o "${stage}/images/$(basename "${name%%:*}").tar" "${name}"
	note "${name}"
}

step "node-image: control-plane and addon images"
start=${SECONDS}
reg="registry.k8s.io"
path_env='ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin'
for c in kube-apiserver kube-controller-manager kube-scheduler; do
	mkdir -p "${stage}/rootfs/${c}/usr/local/bin"
	cp "${bin}/${c}" "${stage}/rootfs/${c}/usr/local/bin/"
	scratch_image "${reg}/${c}:${K8S_VERSION}" "${stage}/rootfs/${c}" "${path_env}" "ENTRYPOINT [\"/usr/local/bin/${c}\"]"
done
mkdir -p "${stage}/rootfs/etcd/usr/local/bin" "${stage}/rootfs/etcd/var/lib/etcd"
cp "${bin}/etcd" "${stage}/rootfs/etcd/usr/local/bin/"
scratch_image "${reg}/etcd:${ETCD_IMAGE_TAG}" "${stage}/rootfs/etcd" "${path_env}" 'ENTRYPOINT ["/usr/local/bin/etcd"]'
mkdir -p "${stage}/rootfs/coredns"
cp "${bin}/coredns" "${stage}/rootfs/coredns/coredns"
scratch_image "${reg}/coredns/coredns:${COREDNS_VERSION}" "${stage}/rootfs/coredns" 'ENTRYPOINT ["/coredns"]' 'EXPOSE 53 53/udp'
mkdir -p "${stage}/rootfs/pause"
cp "${bin}/pause" "${stage}/rootfs/pause/pause"
scratch_image "${reg}/pause:${PAUSE_IMAGE_TAG}" "${stage}/rootfs/pause" 'ENTRYPOINT ["/pause"]' 'USER 65535:65535'

# kube-proxy programs the node's packet filter: it gets iptables (nft and
# legacy), nft and conntrack from the base, with their shared libraries and
# xtables modules, and nothing else.
mkdir -p "${stage}/rootfs/kube-proxy"
docker run --rm --network none -v "${stage}/rootfs/kube-proxy:/out" \
	-v "${root}/images/node/kube-proxy-rootfs.sh:/kube-proxy-rootfs.sh:ro" "${base}" bash /kube-proxy-rootfs.sh /out
mkdir -p "${stage}/rootfs/kube-proxy/usr/local/bin"
cp "${bin}/kube-proxy" "${stage}/rootfs/kube-proxy/usr/local/bin/"
scratch_image "${reg}/kube-proxy:${K8S_VERSION}" "${stage}/rootfs/kube-proxy" "${path_env}" 'ENTRYPOINT ["/usr/local/bin/kube-proxy"]'
rm -rf "${stage}/rootfs"
note "images built in $((SECONDS - start)) s"

# What kubeadm will pull must be exactly what we preload.
want="$("${bin}/kubeadm" config images list --kubernetes-version "${K8S_VERSION}" | sort)"
have="$(registry_images | sort -u)"
missing="$(comm -23 <(echo "${want}") <(echo "${have}"))"
[[ -z "${missing}" ]] || die "kubeadm ${K8S_VERSION} expects images that were not built: ${missing//$'\n'/ }" "update the tags in scripts/lib/versions.sh"

step "node-image: assembling ${image} on ${base}"
start=${SECONDS}
printf '%s' "${PAUSE_IMAGE_TAG}" >"${stage}/pause-tag"
printf '%s' "${K8S_VERSION}" >"${stage}/kube-version"
cp "${root}/images/node/assemble.sh" "${stage}/assemble.sh"
registry_images >"${stage}/image-names"
mkdir -p "${stage}/kind-base" "${stage}/node-files" # mount points
docker run -d --name "${builder}" --privileged --network none --entrypoint sleep \
	-v "${stage}:/evictkit-build:ro" \
	-v "${kind_base}:/evictkit-build/kind-base:ro" \
	-v "${root}/images/node/files:/evictkit-build/node-files:ro" \
	"${base}" infinity >/dev/null
docker exec "${builder}" bash /evictkit-build/assemble.sh >&2
docker stop -t 1 "${builder}" >/dev/null
docker commit \
	--change 'ENV container=docker' \
	--change 'STOPSIGNAL SIGRTMIN+3' \
	--change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
	--change 'CMD []' \
	"${builder}" "${image}" >/dev/null
note "assembled in $((SECONDS - start)) s"

for name in $(registry_images); do
	docker image rm "${name}" >/dev/null
done
remove_older
printf '%s\n' "${image}" >"${image_file}"
step "node-image: ${image} built in $((SECONDS - total)) s ($(docker image inspect -f '{{.Size}}' "${image}" | awk '{printf "%.0f MB", $1/1e6}'))"
printf '%s\n' "${image}"
