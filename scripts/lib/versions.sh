# Pinned versions of everything evictkit builds. Sourced by the scripts.
# shellcheck shell=bash

# Upstream Kubernetes release the patch series applies to.
K8S_VERSION="v1.37.2"
# Release of the staging modules (k8s.io/api, client-go, ...) that goes with it.
K8S_STAGING_VERSION="v0.37.2"
# The Go toolchain for upstream releases whose go.mod needs a newer Go
# than this machine's 1.26 (v1.38 on: go 1.27.0); the Go module proxy
# serves it (GOTOOLCHAIN). make rebase uses it.
NEWER_GO_TOOLCHAIN="go1.27.3"

# evictkit_kubelet_version ROOT: the patched kubelet's version, naming the
# upstream release and a short hash of the patch series in ROOT/patches.
evictkit_kubelet_version() {
	local hash
	hash="$(cd "$1/patches" && cat series $(cat series) | sha256sum | cut -c1-8)"
	printf '%s-evictkit.%s' "${K8S_VERSION}" "${hash}"
}

# Everything else in the kind cluster, built from the Go module proxy
# (scripts/build-components.sh). Image tags are the ones kubeadm ${K8S_VERSION}
# expects (`kubeadm config images list`); the sources are those releases.
KIND_VERSION="v0.33.0"             # sigs.k8s.io/kind: CLI and Go API
CONTAINERD_VERSION="v2.4.2"        # github.com/containerd/containerd/v2 (node and host engine)
RUNC_VERSION="v1.5.3"              # github.com/opencontainers/runc
MOBY_VERSION="v2.0.0-beta.24"      # github.com/moby/moby/v2: dockerd + docker-proxy
CRICTL_VERSION="v1.37.0"           # sigs.k8s.io/cri-tools
CNI_PLUGINS_VERSION="v1.10.0"      # github.com/containernetworking/plugins
ETCD_VERSION="v3.7.0"              # go.etcd.io/etcd/server/v3 -> registry.k8s.io/etcd:3.7.0-0
ETCD_IMAGE_TAG="3.7.0-0"
COREDNS_VERSION="v1.14.6"          # github.com/coredns/coredns (also in images/coredns/go.mod) -> registry.k8s.io/coredns/coredns
PAUSE_IMAGE_TAG="3.10.2"           # our own pause (images/pause), registry.k8s.io/pause
DEBIAN_SUITE="bookworm"            # node image rootfs (debootstrap)

# Kernel of the cgroup v2 test VM (scripts/test-cgroupv2.sh): Debian
# bookworm's cloud kernel, the version its metapackage names when the
# script runs (Debian removes superseded kernel packages from the mirror,
# so a fixed version would stop downloading).
VM_KERNEL_METAPACKAGE="linux-image-cloud-amd64"
