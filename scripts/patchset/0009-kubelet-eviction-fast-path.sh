#!/usr/bin/env bash
# Patch 0009: the EvictionFastPath feature gate (alpha, off by default)
# and the eviction package's code for it. Runs inside the kubernetes tree;
# EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionFastPath Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager watches the node's memory cgroup at a
sub-second interval and, as soon as a hard memory eviction threshold is
met, decides on working sets read from the memory cgroups instead of
waiting for the next housekeeping pass and its cached stats."
copy_package EvictionFastPath
