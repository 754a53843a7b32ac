#!/usr/bin/env bash
# Patch 0008: the EvictionReclaimSized feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionReclaimSized Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

When an eviction threshold is met, the kubelet evicts in one pass, in
rank order, as many pods as it takes for the signal to recover past the
threshold plus its minimum reclaim, and kills them concurrently, instead
of one pod per pass."
copy_package EvictionReclaimSized
