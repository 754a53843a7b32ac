#!/usr/bin/env bash
# Patch 0015: the EvictionSoftGraceTimer feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionSoftGraceTimer Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager runs its next monitoring pass when a soft
eviction threshold's grace period expires, instead of at the first
monitoring interval after it, so soft evictions happen at their grace
period rather than up to an interval later."
copy_package EvictionSoftGraceTimer
