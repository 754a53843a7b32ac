package eviction

import (
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// observation is one signal as the Summary API reported it.
type observation struct {
	// available is how much of the resource is left.
	available int64
	// capacity is the resource's total.
	capacity int64
	// time is when the stats were gathered; zero when unknown.
	time time.Time
}

// observationSet holds at most one observation per supported signal,
// indexed by signalID.
type observationSet struct {
	seen [numSignals]bool
	obs  [numSignals]observation
}

// get returns the observation of a signal.
func (o *observationSet) get(signal evictionapi.Signal) (observation, bool) {
	id, ok := lookupSignal(signal)
	if !ok || !o.seen[id] {
		return observation{}, false
	}
	return o.obs[id], true
}

// set records the observation of a signal.
func (o *observationSet) set(signal evictionapi.Signal, ob observation) {
	if id, ok := lookupSignal(signal); ok {
		o.seen[id], o.obs[id] = true, ob
	}
}

// observeSummary derives every signal that summary has complete figures for.
// Signals whose figures are missing are left unobserved.
func observeSummary(summary *statsapi.Summary) *observationSet {
	out := &observationSet{}
	if summary == nil {
		return out
	}
	node := &summary.Node
	if ob, ok := observeNodeMemory(node); ok {
		out.set(evictionapi.SignalMemoryAvailable, ob)
	}
	if pods := findSystemContainer(node.SystemContainers, statsapi.SystemContainerPods); pods != nil {
		if ob, ok := observeWorkingSet(pods.Memory); ok {
			out.set(evictionapi.SignalAllocatableMemoryAvailable, ob)
		}
	}
	observeFs(out, node.Fs, evictionapi.SignalNodeFsAvailable, evictionapi.SignalNodeFsInodesFree)
	if rt := node.Runtime; rt != nil {
		observeFs(out, rt.ImageFs, evictionapi.SignalImageFsAvailable, evictionapi.SignalImageFsInodesFree)
		observeFs(out, rt.ContainerFs, evictionapi.SignalContainerFsAvailable, evictionapi.SignalContainerFsInodesFree)
	}
	if rl := node.Rlimit; rl != nil && rl.MaxPID != nil && rl.NumOfRunningProcesses != nil {
		out.set(evictionapi.SignalPIDAvailable, observation{
			available: *rl.MaxPID - int64(*rl.NumOfRunningProcesses),
			capacity:  *rl.MaxPID,
			time:      rl.Time.Time,
		})
	}
	return out
}

// observeWorkingSet derives an "available" observation from memory stats:
// capacity is available plus working set.
func observeWorkingSet(m *statsapi.MemoryStats) (observation, bool) {
	if m == nil || m.AvailableBytes == nil || m.WorkingSetBytes == nil {
		return observation{}, false
	}
	return observation{
		available: int64(*m.AvailableBytes),
		capacity:  int64(*m.AvailableBytes + *m.WorkingSetBytes),
		time:      m.Time.Time,
	}, true
}

// observeFs records the bytes and inodes signals of one filesystem.
func observeFs(out *observationSet, fs *statsapi.FsStats, bytes, inodes evictionapi.Signal) {
	if fs == nil {
		return
	}
	if fs.AvailableBytes != nil && fs.CapacityBytes != nil {
		out.set(bytes, observation{available: int64(*fs.AvailableBytes), capacity: int64(*fs.CapacityBytes), time: fs.Time.Time})
	}
	if fs.InodesFree != nil && fs.Inodes != nil {
		out.set(inodes, observation{available: int64(*fs.InodesFree), capacity: int64(*fs.Inodes), time: fs.Time.Time})
	}
}

// findSystemContainer returns the named system container's stats, or nil.
func findSystemContainer(list []statsapi.ContainerStats, name string) *statsapi.ContainerStats {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
