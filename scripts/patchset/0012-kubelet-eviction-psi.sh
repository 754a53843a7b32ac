#!/usr/bin/env bash
# Patch 0012: the EvictionPSI feature gate (alpha, off by default) and the
# eviction package's code for it. Runs inside the kubernetes tree;
# EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionPSI Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager takes memory pressure stall information
(memory.psi.some.avg10, memory.psi.full.avg10: the share of time tasks
stalled on memory) as eviction signals, met above their threshold,
reported as MemoryPressure, with pods ranked as for memory.available."
copy_package EvictionPSI
