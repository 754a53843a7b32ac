#!/usr/bin/env bash
# Patch 0021: the EvictionDiskFastPath feature gate (alpha, off by
# default), the eviction package's code for it, and the kubelet telling
# the eviction manager where its filesystems, pod directories and logs
# are when it is on. Runs inside the kubernetes tree; EVICTKIT is the
# evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionDiskFastPath Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

The kubelet's eviction manager reads the node's filesystems with statfs
at a sub-second interval and, as soon as a hard disk eviction threshold
is met, decides on those figures and on the pods' local volumes and logs
measured then, instead of waiting for the next housekeeping pass and
volume stats refreshed about once a minute."
copy_package EvictionDiskFastPath
copy_files pkg/kubelet/eviction_disk_dirs.go pkg/kubelet/eviction_disk_dirs_test.go
replace_once pkg/kubelet/kubelet.go '		evictionDisks = evictionDiskInfo{DiskInfoProvider: kl.StatsProvider, podDir: kl.GetPodDir}
	}' '		evictionDisks = evictionDiskInfo{DiskInfoProvider: kl.StatsProvider, podDir: kl.GetPodDir}
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.EvictionDiskFastPath) {
		evictionDisks = evictionDiskDirs{
			DiskInfoProvider: kl.StatsProvider,
			rootDir:          kl.getRootDir(),
			podDir:           kl.GetPodDir,
			podLogsDir: func(namespace, name string, uid types.UID) string {
				return kuberuntime.BuildPodLogsDirectory(kl.podLogsDirectory, namespace, name, uid)
			},
			imageFsInfo: kl.containerRuntime.ImageFsInfo,
		}
	}'
