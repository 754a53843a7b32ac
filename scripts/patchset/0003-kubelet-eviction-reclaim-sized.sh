#!/usr/bin/env bash
# Patch 0003: the EvictionReclaimSized feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionReclaimSized Alpha false "owner: @evictkit
kep: none (fork-only alpha)

When an eviction threshold is met, the kubelet evicts in one pass, in
rank order, as many pods as it takes for the signal to recover past the
threshold plus its minimum reclaim, and kills them concurrently, instead
of one pod per pass."
copy_package EvictionReclaimSized
