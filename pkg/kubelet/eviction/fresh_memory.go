//evictkit:file EvictionFastPath

package eviction

import (
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// Fresh memory figures (feature gate EvictionFastPath, alpha).
//
// Upstream decides on memory from the Summary API, whose figures can be
// ten seconds old when a notification arrives, long enough for a fast
// allocator to be killed by the kernel instead. The fast path reads the
// working sets it needs straight from the memory cgroups, computed as the
// Summary API computes them (usage minus inactive file pages), and decides
// on those. This file is the pure part: fresh figures go into the
// observations and pod stats the decision core reads.

// freshMemory is memory working sets read from the cgroups at one instant.
type freshMemory struct {
	at time.Time
	// node is the working set of the node's root memory cgroup (for
	// memory.available), pods that of the pods' cgroup (for
	// allocatableMemory.available); each only if its ok flag is set.
	node, pods     int64
	nodeOK, podsOK bool
	// pod are the working sets of the pods whose cgroup was found, and
	// containers those of their containers' cgroups, by container ID (as
	// the runtime names it, without the runtime's "name://" prefix).
	pod        map[types.UID]int64
	containers map[types.UID]map[string]int64
	// capacity is the machine's memory (MemTotal), for memory.available
	// before the monitoring loop has observed the node's capacity; 0 if
	// unknown.
	capacity int64
	// podsLimit is the pods' cgroup memory limit, for
	// allocatableMemory.available before the monitoring loop has observed
	// it (the Summary API's capacity is that limit too); 0 if none or
	// unknown.
	podsLimit int64
}

// withFreshMemory returns obs with the memory signals observed from fresh
// figures at fresh.at, and stats with the memory working set of each of
// pods, and of each of its containers whose cgroup was read, replaced by
// its fresh figure (a pod the Summary API has no stats for yet, such as
// one that started a moment ago, gets stats of memory alone). Capacities
// come from obs, or when obs has none yet (no monitoring pass has succeeded
// since the kubelet started) from fresh: the machine's memory for
// memory.available, the pods' cgroup limit for allocatableMemory.available.
// Neither changes while the kubelet runs. A signal without a capacity keeps
// its observation (or has none). Neither input is modified.
func withFreshMemory(obs *observationSet, stats podStatsIndex, pods []*v1.Pod, fresh *freshMemory) (*observationSet, podStatsIndex) {
	out := &observationSet{}
	if obs != nil {
		*out = *obs
	}
	refresh := func(signal evictionapi.Signal, workingSet int64, ok bool, fallback int64) {
		if !ok {
			return
		}
		capacity := fallback
		if prev, seen := out.get(signal); seen {
			capacity = prev.capacity
		}
		if capacity <= 0 {
			return
		}
		out.set(signal, observation{available: capacity - workingSet, capacity: capacity, time: fresh.at})
	}
	refresh(evictionapi.SignalMemoryAvailable, fresh.node, fresh.nodeOK, fresh.capacity)
	refresh(evictionapi.SignalAllocatableMemoryAvailable, fresh.pods, fresh.podsOK, fresh.podsLimit)

	return out, withPodUpdates(stats, pods, func(pod *v1.Pod, c *statsapi.PodStats) bool {
		ws, ok := fresh.pod[pod.UID]
		if ok {
			c.Memory = freshMemoryStats(c.Memory, ws, fresh.at)
			c.Containers = withFreshContainers(c.Containers, pod, fresh.containers[pod.UID], fresh.at)
		}
		return ok
	})
}

// withPodUpdates returns stats with each of pods that update changes
// replaced by the changed copy: update is given a copy of the pod's stats
// (or, for a pod the Summary API has none of, stats naming it alone) and
// reports whether it had fresh figures for the pod. stats itself is
// returned when update changes no pod; it is never modified.
func withPodUpdates(stats podStatsIndex, pods []*v1.Pod, update func(pod *v1.Pod, c *statsapi.PodStats) bool) podStatsIndex {
	var merged podStatsIndex
	for _, pod := range pods {
		var c statsapi.PodStats
		if s := stats[pod.UID]; s != nil {
			c = *s
		} else {
			c.PodRef = statsapi.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)}
		}
		if !update(pod, &c) {
			continue
		}
		if merged == nil {
			merged = make(podStatsIndex, len(stats)+len(pods))
			maps.Copy(merged, stats)
		}
		merged[pod.UID] = &c
	}
	if merged == nil {
		return stats
	}
	return merged
}

// freshMemoryStats is a copy of m (or new stats) with the working set ws at at.
func freshMemoryStats(m *statsapi.MemoryStats, ws int64, at time.Time) *statsapi.MemoryStats {
	var out statsapi.MemoryStats
	if m != nil {
		out = *m
	}
	v := uint64(max(ws, 0))
	out.Time, out.WorkingSetBytes = metav1.NewTime(at), &v
	return &out
}

// withFreshContainers returns a copy of a pod's container stats with the
// fresh working set of every container of pod whose cgroup was read
// (byID, by container ID); a container without stats gets some.
func withFreshContainers(list []statsapi.ContainerStats, pod *v1.Pod, byID map[string]int64, at time.Time) []statsapi.ContainerStats {
	if len(byID) == 0 {
		return list
	}
	out := append([]statsapi.ContainerStats(nil), list...)
	statuses := append(append([]v1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, st := range statuses {
		_, id, found := strings.Cut(st.ContainerID, "://")
		if !found {
			continue
		}
		ws, ok := byID[id]
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(c statsapi.ContainerStats) bool { return c.Name == st.Name })
		if i < 0 {
			out = append(out, statsapi.ContainerStats{Name: st.Name})
			i = len(out) - 1
		}
		out[i].Memory = freshMemoryStats(out[i].Memory, ws, at)
	}
	return out
}

// hardMemoryThresholdMet reports whether fresh observations meet a hard
// memory.available or allocatableMemory.available threshold (the signals
// the fast path has fresh figures for): what wakes the fast path. Soft
// thresholds wait out a grace period anyway and are left to the
// monitoring loop.
func hardMemoryThresholdMet(thresholds []evictionapi.Threshold, obs *observationSet) bool {
	for _, t := range thresholds {
		if !isHardEvictionThreshold(t) || !isMemorySignal(t.Signal) {
			continue
		}
		if ob, ok := obs.get(t.Signal); ok && signalBelow(t, ob, false) {
			return true
		}
	}
	return false
}
