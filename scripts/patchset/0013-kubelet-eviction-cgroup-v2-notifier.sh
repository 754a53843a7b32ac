#!/usr/bin/env bash
# Patch 0013: the EvictionCgroupV2Notifier feature gate (alpha, off by
# default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionCgroupV2Notifier Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

On cgroup v2 hosts, with kernelMemcgNotification on, the kubelet's
eviction manager is woken by a PSI trigger on the memory pressure file
and by changes of the pods' cgroup memory.events, instead of running a
disabled memory notifier."
copy_package EvictionCgroupV2Notifier
