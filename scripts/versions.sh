# Pinned versions of everything evictkit builds. Sourced by the scripts.
# shellcheck shell=bash

# Upstream Kubernetes release the patch series applies to.
K8S_VERSION="v1.37.2"
# Release of the staging modules (k8s.io/api, client-go, ...) that goes with it.
K8S_STAGING_VERSION="v0.37.2"

# evictkit_kubelet_version ROOT: the patched kubelet's version, naming the
# upstream release and a short hash of the patch series in ROOT/patches.
evictkit_kubelet_version() {
	local hash
	hash="$(cd "$1/patches" && cat series $(cat series) | sha256sum | cut -c1-8)"
	printf '%s-evictkit.%s' "${K8S_VERSION}" "${hash}"
}
