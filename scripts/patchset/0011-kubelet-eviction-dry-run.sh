#!/usr/bin/env bash
# Patch 0011: the EvictionDryRun feature gate (alpha, off by default) and
# the eviction package's code for it. Runs inside the kubernetes tree;
# EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionDryRun Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager makes and reports every eviction decision
(a WouldEvict event on the pod, kubelet_evictions_dry_run, a log line)
but kills no pod and reports no node pressure condition, so new
thresholds can be tried on a live node."
copy_package EvictionDryRun
