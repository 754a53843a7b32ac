#!/usr/bin/env bash
# Patch 0014: with EvictionFastPath on, the kubelet requests an on-demand
# PLEG relist of a pod before the eviction manager's kill, so that the
# pod worker does not wait for the next periodic relist; EvictionFastPath
# now depends on PLEGOnDemandRelist. Runs inside the kubernetes tree;
# EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_files pkg/kubelet/eviction_relist.go pkg/kubelet/eviction_relist_test.go
replace_once pkg/kubelet/kubelet.go '	// setup eviction manager
	evictionManager, evictionAdmitHandler := eviction.NewManager(klet.resourceAnalyzer, evictionConfig,
		killPodNow(ctx, klet.podWorkers, kubeDeps.Recorder), klet.imageManager,' '	// setup eviction manager
	evictionKillPod := killPodNow(ctx, klet.podWorkers, kubeDeps.Recorder)
	if utilfeature.DefaultFeatureGate.Enabled(features.EvictionFastPath) {
		evictionKillPod = relistUntilKillStarts(klog.FromContext(ctx), klet.pleg, klet.clock, evictionKillPod)
	}
	evictionManager, evictionAdmitHandler := eviction.NewManager(klet.resourceAnalyzer, evictionConfig,
		evictionKillPod, klet.imageManager,'
set_feature_dependencies EvictionFastPath PLEGOnDemandRelist
