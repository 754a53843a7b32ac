#!/usr/bin/env bash
# Patch 0017: the EvictionNodeFsReclaim feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionNodeFsReclaim Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

On a node with a dedicated image filesystem, the kubelet's eviction
manager removes dead containers (whose logs are on nodefs) when a nodefs
threshold is met, and evicts pods only if that does not relieve it."
copy_package EvictionNodeFsReclaim
