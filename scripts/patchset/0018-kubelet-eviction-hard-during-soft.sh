#!/usr/bin/env bash
# Patch 0018: the EvictionHardDuringSoft feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionHardDuringSoft Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager kills the victims of a soft eviction
threshold in the background, so that a hard threshold met during their
grace period is acted on at once instead of after it."
copy_package EvictionHardDuringSoft
