//evictkit:file ranking

package eviction

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	volumeutils "k8s.io/kubernetes/pkg/volume/util"
)

// podStatsIndex finds a pod's stats in a summary by pod UID.
type podStatsIndex map[types.UID]*statsapi.PodStats

// indexPodStats indexes the pods of a summary. When a UID appears twice,
// the last entry wins.
func indexPodStats(summary *statsapi.Summary) podStatsIndex {
	if summary == nil {
		return podStatsIndex{}
	}
	idx := make(podStatsIndex, len(summary.Pods))
	for i := range summary.Pods {
		idx[types.UID(summary.Pods[i].PodRef.UID)] = &summary.Pods[i]
	}
	return idx
}

// lookup returns the stats of a pod, or nil.
func (x podStatsIndex) lookup(pod *v1.Pod) *statsapi.PodStats {
	return x[pod.UID]
}

// u64 converts an optional unsigned counter to int64, saturating.
func u64(p *uint64) int64 {
	if p == nil {
		return 0
	}
	if *p > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(*p)
}

// satAdd adds without overflowing.
func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) == (b > 0) {
		return s
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// satSub subtracts without overflowing.
func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		return satAdd(satAdd(a, math.MaxInt64), 1)
	}
	return satAdd(a, -b)
}

// workingSet returns a pod's memory working set in bytes.
func workingSet(s *statsapi.PodStats) int64 {
	if s.Memory == nil {
		return 0
	}
	return u64(s.Memory.WorkingSetBytes)
}

// processCount returns the number of processes in a pod.
func processCount(s *statsapi.PodStats) int64 {
	if s.ProcessStats == nil {
		return 0
	}
	return u64(s.ProcessStats.ProcessCount)
}

// fsUsage returns bytes and inodes used in an optional filesystem figure.
func fsUsage(fs *statsapi.FsStats) (bytes, inodes int64) {
	if fs == nil {
		return 0, 0
	}
	return u64(fs.UsedBytes), u64(fs.InodesUsed)
}

// localStorageUsage sums a pod's local storage use in bytes and inodes over
// the parts selected: container writable layers, container logs, and
// local volumes (hostPath and local ephemeral volumes, by name).
func localStorageUsage(pod *v1.Pod, s *statsapi.PodStats, parts usageParts) (bytes, inodes int64) {
	add := func(fs *statsapi.FsStats) {
		b, i := fsUsage(fs)
		bytes, inodes = satAdd(bytes, b), satAdd(inodes, i)
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		if parts.rootfs {
			add(c.Rootfs)
		}
		if parts.logs {
			add(c.Logs)
		}
	}
	if parts.volumes {
		for i := range pod.Spec.Volumes {
			vol := &pod.Spec.Volumes[i]
			if vol.HostPath == nil && !volumeutils.IsLocalEphemeralVolume(*vol) {
				continue
			}
			if vs := findVolumeStats(s, vol.Name); vs != nil {
				add(&vs.FsStats)
			}
		}
	}
	return bytes, inodes
}

// findVolumeStats returns the first volume stats entry named name, or nil.
func findVolumeStats(s *statsapi.PodStats, name string) *statsapi.VolumeStats {
	for i := range s.VolumeStats {
		if s.VolumeStats[i].Name == name {
			return &s.VolumeStats[i]
		}
	}
	return nil
}
