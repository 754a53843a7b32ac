#!/usr/bin/env bash
# Patch 0020: the EvictionResumeAfterRestart feature gate (alpha, off by
# default), the eviction package's code for it, and the kubelet giving
# the eviction manager the pods' directories when it is on. Runs inside
# the kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionResumeAfterRestart Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager records each eviction in the pod's
directory until its kill has returned, and a restarted kubelet finishes
an eviction a previous process started (the rest of its grace period,
the same status, no second Evicted event) instead of starting over."
copy_package EvictionResumeAfterRestart
copy_files pkg/kubelet/eviction_pod_dirs.go pkg/kubelet/eviction_pod_dirs_test.go
replace_once pkg/kubelet/kubelet.go '	kl.evictionManager.Start(ctx, kl.StatsProvider, kl.getAllocatedPods, kl.PodIsFinished, evictionMonitoringPeriod)' '	var evictionDisks eviction.DiskInfoProvider = kl.StatsProvider
	if utilfeature.DefaultFeatureGate.Enabled(features.EvictionResumeAfterRestart) {
		evictionDisks = evictionDiskInfo{DiskInfoProvider: kl.StatsProvider, podDir: kl.GetPodDir}
	}
	kl.evictionManager.Start(ctx, evictionDisks, kl.getAllocatedPods, kl.PodIsFinished, evictionMonitoringPeriod)'
