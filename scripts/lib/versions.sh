# Pinned versions of everything evictkit builds. Sourced by the scripts.
# shellcheck shell=bash

# The upstream Kubernetes releases the patch series is built on; K8S_VERSION
# picks one, the first is the default. Adding one: docs in README.md
# ("Upstream bases"). A base other than the default has its own go.mod for
# evictkit's module (bases/<version>/go.mod, used with GOFLAGS=-modfile) and
# its own materialized tree (_output/upstream/kubernetes-<version>).
K8S_BASES=(v1.37.2 v1.38.0-beta.0)
K8S_DEFAULT_VERSION="${K8S_BASES[0]}"
K8S_VERSION="${K8S_VERSION:-${K8S_DEFAULT_VERSION}}"
# A loop, not printf | grep -q: under pipefail grep's early exit can kill
# printf with SIGPIPE and fail the test for a listed base.
_base_known=false
for _b in "${K8S_BASES[@]}"; do [[ "${_b}" != "${K8S_VERSION}" ]] || _base_known=true; done
if [[ "${_base_known}" != true ]]; then
	echo "ERROR: K8S_VERSION=${K8S_VERSION} is not a supported base (${K8S_BASES[*]}; scripts/lib/versions.sh lists them)" >&2
	exit 1
fi
# Release of the staging modules (k8s.io/api, client-go, ...) that goes
# with a Kubernetes release: v1.MINOR.PATCH[-pre] -> v0.MINOR.PATCH[-pre].
k8s_staging_version() { sed -E 's/^v1\./v0./' <<<"$1"; }
K8S_STAGING_VERSION="$(k8s_staging_version "${K8S_VERSION}")"
# The Go toolchain for upstream releases whose go.mod needs a newer Go
# than this machine's 1.26 (v1.38 on: go 1.27.0); the Go module proxy
# serves it (GOTOOLCHAIN).
NEWER_GO_TOOLCHAIN="go1.27.3"

# base_modfile ROOT: the go.mod evictkit's module builds with on this base.
base_modfile() {
	if [[ "${K8S_VERSION}" == "${K8S_DEFAULT_VERSION}" ]]; then
		printf '%s/go.mod' "$1"
	else
		printf '%s/go.mod' "$(base_path "$1/bases" /)"
	fi
}

# needs_newer_go GOMOD: whether the go line of GOMOD asks for a newer Go
# than this machine's (then NEWER_GO_TOOLCHAIN builds it).
needs_newer_go() {
	local want have
	want="$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$1" | head -n 1)"
	have="$(GOTOOLCHAIN=local go env GOVERSION | sed 's/^go//')"
	[[ -n "${want}" ]] && ! printf '%s\n%s\n' "${want}" "${have}" | sort -V -C
}

# base_path PATH SEP [VERSION]: PATH on the default base, else PATH, SEP
# and the version (default the base in use).
base_path() {
	local v="${3:-${K8S_VERSION}}"
	if [[ "${v}" == "${K8S_DEFAULT_VERSION}" ]]; then
		printf '%s' "$1"
	else
		printf '%s%s%s' "$1" "$2" "${v}"
	fi
}

# base_go_env ROOT: prints the environment evictkit's own go commands need
# on this base (GOFLAGS=-modfile=... and, if its go line asks for a newer
# Go than this machine's, GOTOOLCHAIN=...), nothing on the default base;
# fails naming the missing file.
base_go_env() {
	local modfile
	[[ "${K8S_VERSION}" != "${K8S_DEFAULT_VERSION}" ]] || return 0
	modfile="$(base_modfile "$1")"
	if [[ ! -f "${modfile}" ]]; then
		echo "ERROR: ${modfile} is missing: the base ${K8S_VERSION} needs it (scripts/base-modfile.sh ${K8S_VERSION} writes it)" >&2
		return 1
	fi
	printf 'GOFLAGS=-modfile=%s' "${modfile}"
	if needs_newer_go "${modfile}"; then
		printf ' GOTOOLCHAIN=%s' "${NEWER_GO_TOOLCHAIN}"
	fi
}

# upstream_dir ROOT [VERSION]: where a release's upstream tree is
# materialized (scripts/upstream-tree.sh).
upstream_dir() { base_path "$1/_output/upstream/kubernetes" - "${2:-}"; }

# On a base other than the default, every go command a script runs in
# evictkit's module uses that base's go.mod (go commands in other modules'
# trees set GOFLAGS themselves). scripts/base-modfile.sh writes the file.
if [[ "${K8S_VERSION}" != "${K8S_DEFAULT_VERSION}" ]]; then
	_base_env="$(base_go_env "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)")" || exit 1
	for _kv in ${_base_env}; do
		export "${_kv?}"
	done
	unset _kv _base_env
fi

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
PAUSE_IMAGE_TAG="3.10.2"           # our own pause (images/pause), registry.k8s.io/pause
# What differs between bases: etcd (go.etcd.io/etcd/server/v3 ->
# registry.k8s.io/etcd:<tag>), coredns (github.com/coredns/coredns, also in
# images/coredns's go.mod of the base -> registry.k8s.io/coredns/coredns),
# and the base whose pristine tree gives kube-proxy. v1.38's kube-proxy
# needs sigs.k8s.io/iptables-wrappers throughout, which the proxy refuses
# and our stand-in (bases/standins) covers only for the kubelet; the v1.38
# cluster runs v1.37.2's kube-proxy under v1.38's image tag instead, which
# the version skew policy allows (kube-proxy may be older than the
# apiserver). It does not take part in eviction.
case "${K8S_VERSION}" in
v1.37.2) ETCD_VERSION="v3.7.0" ETCD_IMAGE_TAG="3.7.0-0" COREDNS_VERSION="v1.14.6" KUBE_PROXY_BASE="v1.37.2" ;;
v1.38.0-beta.0) ETCD_VERSION="v3.7.1" ETCD_IMAGE_TAG="3.7.1-0" COREDNS_VERSION="v1.15.0" KUBE_PROXY_BASE="v1.37.2" ;;
*)
	echo "ERROR: scripts/lib/versions.sh pins no etcd, coredns or kube-proxy base for ${K8S_VERSION}" >&2
	exit 1
	;;
esac
DEBIAN_SUITE="bookworm"            # node image rootfs (debootstrap)
# busybox for upstream's test image busybox:1.37.0-2 (make
# test-upstream-node), built from the release's source as Debian's trixie
# carries it (scripts/upstream-node/busybox.sh).
BUSYBOX_VERSION="1.37.0"
BUSYBOX_SUITE="trixie"

# Kernel of the cgroup v2 test VM (scripts/test-cgroupv2.sh): Debian
# bookworm's cloud kernel, the version its metapackage names when the
# script runs (Debian removes superseded kernel packages from the mirror,
# so a fixed version would stop downloading).
VM_KERNEL_METAPACKAGE="linux-image-cloud-amd64"
