//evictkit:file EvictionDiskFastPath

package eviction

import (
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// Fresh disk figures (feature gate EvictionDiskFastPath, alpha).
//
// Upstream sees a filesystem fill at its next monitoring pass, up to ten
// seconds later, and ranks pods on volume figures the kubelet refreshes
// about once a minute: a fast writer fills the filesystem before any
// eviction, and the pass may take a pod that wrote nothing. The disk
// watcher reads the filesystems with statfs and, on a crossing, measures
// the pods' local volumes and logs where they live. This file is the pure
// part: fresh figures go into the observations and pod stats the decision
// core reads.

// fsFigures are one filesystem's statfs figures.
type fsFigures struct {
	capacity, available int64
	// inodes and inodesFree are 0 on a filesystem that reports no inodes.
	inodes, inodesFree int64
}

// diskUsage is what a directory tree holds.
type diskUsage struct{ bytes, inodes int64 }

// podDiskUsage is what a pod holds where the kubelet keeps it: its local
// volumes by name, and its containers' logs by container name.
type podDiskUsage struct {
	volumes map[string]diskUsage
	logs    map[string]diskUsage
}

// freshDisk is what the disk watcher read at one instant.
type freshDisk struct {
	at time.Time
	// nodeFs is the kubelet's root filesystem; imageFs the runtime's image
	// filesystem when it is a dedicated one (nil otherwise, or when it
	// could not be read).
	nodeFs, imageFs *fsFigures
	// pod are the pods measured, by UID.
	pod map[types.UID]podDiskUsage
}

// figuresFor returns the figures of the filesystem a disk signal watches
// in layout, or nil when none were read. Writable layers live with the
// images, except in a split layout, where they are on nodefs.
func (f *freshDisk) figuresFor(signal evictionapi.Signal, layout fsLayout) *fsFigures {
	switch signalFsRole(signal) {
	case roleNodeFs:
		return f.nodeFs
	case roleContainerFs:
		if layout.kind() == layoutSplit {
			return f.nodeFs
		}
		fallthrough
	case roleImageFs:
		if layout.dedicatedImageFs {
			return f.imageFs
		}
		return f.nodeFs
	}
	return nil
}

// withFreshDisk returns obs with every disk signal whose filesystem was
// read observed from fresh figures at fresh.at, and stats with the local
// volumes and container logs of each measured pod replaced by their fresh
// figures (a pod the Summary API has no stats for yet gets stats of
// these alone; writable layers keep the Summary API's figures: they live
// in the runtime's snapshots). Neither input is modified.
func withFreshDisk(obs *observationSet, stats podStatsIndex, pods []*v1.Pod, fresh *freshDisk, layout fsLayout) (*observationSet, podStatsIndex) {
	out := &observationSet{}
	if obs != nil {
		*out = *obs
	}
	for _, info := range signalTable {
		if info.condition != v1.NodeDiskPressure {
			continue
		}
		fs := fresh.figuresFor(info.signal, layout)
		if fs == nil {
			continue
		}
		ob := observation{available: fs.available, capacity: fs.capacity, time: fresh.at}
		if info.resource == resourceInodes {
			if fs.inodes <= 0 {
				continue
			}
			ob.available, ob.capacity = fs.inodesFree, fs.inodes
		}
		out.set(info.signal, ob)
	}

	return out, withPodUpdates(stats, pods, func(pod *v1.Pod, c *statsapi.PodStats) bool {
		usage, ok := fresh.pod[pod.UID]
		if ok {
			c.VolumeStats = withFreshVolumes(c.VolumeStats, usage.volumes, fresh.at)
			c.Containers = withFreshLogs(c.Containers, usage.logs, fresh.at)
		}
		return ok
	})
}

// usedFsStats are filesystem stats of what a tree holds, at at.
func usedFsStats(u diskUsage, at time.Time) *statsapi.FsStats {
	bytes, inodes := uint64(max(u.bytes, 0)), uint64(max(u.inodes, 0))
	return &statsapi.FsStats{Time: metav1.NewTime(at), UsedBytes: &bytes, InodesUsed: &inodes}
}

// withFreshVolumes returns a copy of a pod's volume stats with the fresh
// figures of the volumes measured (byName); a volume without stats gets
// some, in name order.
func withFreshVolumes(list []statsapi.VolumeStats, byName map[string]diskUsage, at time.Time) []statsapi.VolumeStats {
	return withFreshByName(list, byName, at, func(v *statsapi.VolumeStats) *string { return &v.Name },
		func(v *statsapi.VolumeStats, fs *statsapi.FsStats) { v.FsStats = *fs })
}

// withFreshLogs returns a copy of a pod's container stats with the fresh
// log figures of the containers measured (byName); a container without
// stats gets some, in name order.
func withFreshLogs(list []statsapi.ContainerStats, byName map[string]diskUsage, at time.Time) []statsapi.ContainerStats {
	return withFreshByName(list, byName, at, func(c *statsapi.ContainerStats) *string { return &c.Name },
		func(c *statsapi.ContainerStats, fs *statsapi.FsStats) { c.Logs = fs })
}

// withFreshByName returns a copy of list in which set gives each entry
// that byName has a figure for (by the entry's name) its fresh stats at
// at; a name without an entry gets a new one, in name order. list itself
// is returned when byName is empty; it is never modified.
func withFreshByName[T any](list []T, byName map[string]diskUsage, at time.Time, name func(*T) *string, set func(*T, *statsapi.FsStats)) []T {
	if len(byName) == 0 {
		return list
	}
	out := append([]T(nil), list...)
	seen := make(map[string]bool, len(byName))
	for i := range out {
		n := *name(&out[i])
		if u, ok := byName[n]; ok {
			set(&out[i], usedFsStats(u, at))
			seen[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		if !seen[n] {
			var e T
			*name(&e) = n
			set(&e, usedFsStats(byName[n], at))
			out = append(out, e)
		}
	}
	return out
}

// hardDiskThresholdMet reports whether observations meet a hard threshold
// of a disk signal: what wakes the disk fast path. Soft thresholds wait
// out a grace period anyway and are left to the monitoring loop.
func hardDiskThresholdMet(thresholds []evictionapi.Threshold, obs *observationSet) bool {
	for _, t := range thresholds {
		if !isHardDiskThreshold(t) {
			continue
		}
		if ob, ok := obs.get(t.Signal); ok && signalBelow(t, ob, false) {
			return true
		}
	}
	return false
}

// isHardDiskThreshold reports whether t is a hard threshold of a disk
// signal (one that reports DiskPressure).
func isHardDiskThreshold(t evictionapi.Threshold) bool {
	return isHardEvictionThreshold(t) && signalConditionIndex(t.Signal) == conditionIndex(v1.NodeDiskPressure)
}
