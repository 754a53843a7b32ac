#!/usr/bin/env bash
# Patch 0019: the EvictionReclaimableMemory feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionReclaimableMemory Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager counts clean, unmapped page cache as
available memory: memory.available, allocatableMemory.available and
the pods' memory ranking use working sets read from the memory cgroups
as usage minus those file pages, instead of usage minus inactive file
pages."
copy_package EvictionReclaimableMemory
