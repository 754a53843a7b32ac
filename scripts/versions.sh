# Pinned versions of everything evictkit builds. Sourced by the scripts.
# shellcheck shell=bash

# Upstream Kubernetes release the patch series applies to.
K8S_VERSION="v1.37.2"
# Release of the staging modules (k8s.io/api, client-go, ...) that goes with it.
K8S_STAGING_VERSION="v0.37.2"
