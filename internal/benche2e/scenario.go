// Package benche2e is the side-by-side benchmark of the evictkit kubelet
// (alpha gates on) against kubelet-upstream on one kind node (make
// bench-e2e): the same memory-pressure scenarios on the same node, the two
// kubelets interleaved, each run measured from a 5 ms sampler of the
// node's memory cgroup and the hogs' own logs.
package benche2e

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// Scenario is one benchmark scenario: thresholds set relative to what the
// node observes, hog pods, and what a run of it measures.
type Scenario struct {
	// Name is short and stable: results and reports are keyed by it.
	Name string
	// What says in a sentence what it does and measures.
	What string
	// Margin is how much more the pods may use than when the run started
	// before memory.available meets its threshold (bytes).
	Margin int64
	// Allocatable, when set, puts the pods under a kubepods cgroup limit
	// AllocatableRoom above what they use when the run starts (kubeReserved
	// and enforceNodeAllocatable=pods), with the threshold Margin below it
	// through allocatableMemory.available: the kernel OOM killer acts once
	// the pods take AllocatableRoom, the kubelet should act at Margin.
	Allocatable     bool
	AllocatableRoom int64
	// Hogs are the hog pods, in the order the kubelet ranks them (largest
	// first); Needed is how many of them must go to relieve the pressure.
	Hogs   []Hog
	Needed int
	// SoftGrace, when set, makes the threshold a soft one with this grace
	// period, the kubelet logging its passes (verbosity 3): the run
	// measures how late the pass that acts comes after the grace expires.
	SoftGrace time.Duration
	// Unmeasured: left out of the default set (select it with -scenarios):
	// not yet run on this machine, or (diskburst) needing a node other
	// than the default one.
	Unmeasured bool
	// PageCache, when set, replaces the hogs with one reader that caches a
	// file of this size ("800Mi") and holds it on the active list (workload
	// pagecache): clean page cache, which upstream counts as used. Nothing
	// has to be evicted (Needed 0): a run watches three of the kubelet's
	// monitoring passes after the reader holds the cache and records
	// whether the node reported MemoryPressure and what was evicted.
	PageCache string
	// CachedBystander, when set, has a bystander hold a file of this size
	// in clean page cache on the active list (workload pagecache) before
	// the run observes the node: the two rules of memory.available then
	// differ by about that much, and the sampler's crossing by each rule
	// shows which one a kubelet acts on.
	CachedBystander string
	// DuringSoft, when set, first has a soft threshold evict a pod that
	// takes long to terminate; the hogs start once its Evicted event is
	// recorded and meet the hard threshold (Margin) while it terminates.
	DuringSoft *SoftEviction
	// DiskBurst, when set, makes it a disk scenario instead (no memory
	// thresholds, no hogs): see DiskBurst.
	DiskBurst *DiskBurst
	// HoldFirst: the hogs reach their size before the thresholds are set,
	// so the kubelet first sees the whole shortfall at once. Otherwise the
	// hogs start at a random point of the kubelet's housekeeping interval
	// after the thresholds are set.
	HoldFirst bool
}

// SoftEviction is the soft eviction a DuringSoft scenario starts with: a
// soft memory.available threshold Margin below the start with a 5 s grace
// period, and a high-priority pod of Size that ignores SIGTERM and asks
// for PodGrace seconds (evictionMaxPodGracePeriod is the same).
type SoftEviction struct {
	Margin   int64
	Size     string
	PodGrace int64
}

// DiskBurst is a disk scenario: unused images are pruned, hard
// nodefs.available and imagefs.available thresholds of Headroom are set
// (the images share nodefs on the small-disk node), a sampler watches
// nodefs's available bytes with statfs (workload diskwatch), and one
// writer fills an emptyDir at Rate with Size, more than the filesystem
// has free. The writer stops at the first SIGTERM: if it runs out of room
// before, the filesystem filled because the kubelet acted late.
type DiskBurst struct {
	Headroom   int64
	Size, Rate string
}

// diskWriter is the pod name of a DiskBurst scenario's writer.
const diskWriter = "writer"

// sampler is the pod name of the scenario's sampler.
func (s Scenario) sampler() string {
	if s.DiskBurst != nil {
		return "diskwatch"
	}
	return "memwatch"
}

// softVictim is the pod name of a DuringSoft scenario's soft victim.
const softVictim = "soft-victim"

// Hog is one memory hog of a scenario.
type Hog struct {
	Name string
	// Size and Rate are quantities ("2000Mi", "1Gi" per second).
	Size, Rate string
	// Request, when set, is its memory request (a Burstable pod, which a
	// node under MemoryPressure admits), and it runs at low priority.
	Request string
	// Threads touch memory at once (workload memory -threads); 0 is one.
	Threads int
}

// Scenarios are the benchmark's scenarios, in the order a round runs them.
var Scenarios = []Scenario{
	{
		Name:   "latency-200Mi",
		What:   "one hog growing at 200 MiB/s crosses memory.available 600 MiB above where it started: time from the crossing (sampler) to the kill's SIGTERM (hog)",
		Margin: 600 * nodeharness.Mi,
		Hogs:   []Hog{{Name: "hog", Size: "2500Mi", Rate: "200Mi"}},
		Needed: 1,
	},
	{
		Name:   "latency-1Gi",
		What:   "the same at 1 GiB/s",
		Margin: 600 * nodeharness.Mi,
		Hogs:   []Hog{{Name: "hog", Size: "3000Mi", Rate: "1Gi"}},
		Needed: 1,
	},
	{
		Name:            "latency-cache",
		What:            "latency-200Mi with a high-priority bystander holding a 400 MiB file in clean page cache (active list) from before the thresholds are set: crossing to kill call by each rule of memory.available, the Summary API's and the reclaimable one",
		Margin:          600 * nodeharness.Mi,
		CachedBystander: "400Mi",
		Hogs:            []Hog{{Name: "hog", Size: "3000Mi", Rate: "200Mi"}},
		Needed:          1,
	},
	{
		Name:            "oom",
		What:            "a hog at 1 GiB/s under a kubepods limit 700 MiB above the pods' use, threshold 400 MiB above it (allocatableMemory.available 300Mi): runs in which the kernel OOM killer ended the hog before the kubelet did",
		Margin:          400 * nodeharness.Mi,
		Allocatable:     true,
		AllocatableRoom: 700 * nodeharness.Mi,
		Hogs:            []Hog{{Name: "hog", Size: "1500Mi", Rate: "1Gi"}},
		Needed:          1,
	},
	{
		Name:            "oom-burst",
		What:            "the oom scenario with a hog touching memory in two threads as fast as the machine allows (about 2.9 GiB/s here, 1.5 GiB/s per thread): runs in which the kernel OOM killer ended the hog before the kubelet did",
		Margin:          400 * nodeharness.Mi,
		Allocatable:     true,
		AllocatableRoom: 700 * nodeharness.Mi,
		Hogs:            []Hog{{Name: "hog", Size: "1500Mi", Rate: "100Gi", Threads: 2}},
		Needed:          1,
	},
	{
		Name:      "softgrace",
		What:      "a soft memory.available threshold 600 MiB above the start with a 15 s grace period; one hog at 200 MiB/s grows by 1000 MiB and holds: from the grace period's expiry (the first pass that observed the signal below the threshold, plus 15 s, from the kubelet's own verbosity-3 log) to the pass that acts (grace-late)",
		Margin:    600 * nodeharness.Mi,
		SoftGrace: 15 * time.Second,
		Hogs:      []Hog{{Name: "hog", Size: "1000Mi", Rate: "200Mi"}},
		Needed:    1,
	},
	{
		Name:      "pagecache",
		What:      "a pod caches an 800 MiB file (written, read twice, then again every 5 s: clean page cache on the active list) under a hard memory.available threshold 400 MiB below the start; for three monitoring passes after it holds the cache: runs in which the node reported MemoryPressure, and pods evicted",
		Margin:    400 * nodeharness.Mi,
		PageCache: "800Mi",
	},
	{
		Name:       "hard-during-soft",
		What:       "a soft memory.available threshold 500 MiB below the start (5 s grace) evicts an 800 MiB pod that ignores SIGTERM and asks for 60 s; then a low-priority Burstable hog grows at 200 MiB/s to 1100 MiB and crosses a hard threshold 1300 MiB below the start while that pod terminates: time from the hard crossing (sampler) to the kill call and to the hog's SIGTERM, and to the signal's recovery",
		Margin:     1300 * nodeharness.Mi,
		DuringSoft: &SoftEviction{Margin: 500 * nodeharness.Mi, Size: "800Mi", PodGrace: 60},
		Hogs:       []Hog{{Name: "hog", Size: "1100Mi", Rate: "200Mi", Request: "200Mi"}},
		Needed:     1,
	},
	{
		Name:       "diskburst",
		What:       "on the node with the small nodefs (NODE=evictkit-worker2), hard nodefs.available and imagefs.available thresholds of 300 MiB; a writer fills an emptyDir at 200 MiB/s with 2 GiB, more than the filesystem has, and stops at its SIGTERM: time from the crossing (statfs sampler, 5 ms) to the kill call and to the writer's SIGTERM, and runs in which the writer ran out of room (the filesystem was full before the kill)",
		DiskBurst:  &DiskBurst{Headroom: 300 * nodeharness.Mi, Size: "2Gi", Rate: "200Mi"},
		Needed:     1,
		Unmeasured: true,
	},
	{
		Name:      "relief-k3",
		What:      "four hogs of 300 MiB hold 1200 MiB when a threshold 450 MiB above the start is set: three must go; time from the first kill to the signal's recovery, and pods evicted beyond the three",
		Margin:    450 * nodeharness.Mi,
		HoldFirst: true,
		Hogs: []Hog{
			{Name: "hog-a", Size: "330Mi", Rate: "200Mi"},
			{Name: "hog-b", Size: "310Mi", Rate: "200Mi"},
			{Name: "hog-c", Size: "290Mi", Rate: "200Mi"},
			{Name: "hog-d", Size: "270Mi", Rate: "200Mi"},
		},
		Needed: 3,
	},
}

// DefaultScenarios are the scenarios a run without -scenarios measures:
// all but the unmeasured ones.
func DefaultScenarios() []Scenario {
	var out []Scenario
	for _, s := range Scenarios {
		if !s.Unmeasured {
			out = append(out, s)
		}
	}
	return out
}

// ScenarioByName returns the named scenario.
func ScenarioByName(name string) (Scenario, error) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("no scenario %q", name)
}

// configure sets the scenario's thresholds from the observations.
func (s Scenario) configure(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
	if d := s.DiskBurst; d != nil {
		headroom := nodeharness.Quantity(d.Headroom)
		c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"nodefs.available": headroom, "imagefs.available": headroom})
		return
	}
	if s.PageCache != "" {
		c.Logging.Verbosity = logsapi.VerbosityLevel(3)
	}
	if d := s.DuringSoft; d != nil {
		c.EvictionSoft = map[string]string{"memory.available": nodeharness.Quantity(o.MemoryAvailable - d.Margin)}
		c.EvictionSoftGracePeriod = map[string]string{"memory.available": (5 * time.Second).String()}
		c.EvictionMaxPodGracePeriod = int32(d.PodGrace)
	}
	if s.SoftGrace > 0 {
		c.EvictionSoft = map[string]string{"memory.available": nodeharness.Quantity(s.level(o))}
		c.EvictionSoftGracePeriod = map[string]string{"memory.available": s.SoftGrace.String()}
		c.EvictionMaxPodGracePeriod = 5
		c.Logging.Verbosity = logsapi.VerbosityLevel(3)
		return
	}
	if !s.Allocatable {
		c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
			"memory.available": nodeharness.Quantity(o.MemoryAvailable - s.Margin),
		})
		return
	}
	// The kubepods limit is capacity − kubeReserved; allocatableMemory.available
	// is measured against it, with memory.available's hard threshold.
	threshold := s.AllocatableRoom - s.Margin
	c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"memory.available": nodeharness.Quantity(threshold)})
	c.EnforceNodeAllocatable = []string{"pods"}
	c.KubeReserved = nodeharness.WithThresholds(c.KubeReserved, map[string]string{
		"memory": nodeharness.Quantity(o.MemoryCapacity - o.PodsMemoryWorkingSet - s.AllocatableRoom),
	})
}

// level is the level the sampler watches: the node's memory.available
// where the threshold is met (for the allocatable scenario, none: the
// sampler still records the low point), or a disk scenario's nodefs
// headroom.
func (s Scenario) level(o nodeharness.Observations) int64 {
	if s.DiskBurst != nil {
		return s.DiskBurst.Headroom
	}
	return o.MemoryAvailable - s.Margin
}

// pageCacheReader is the pod name of a PageCache scenario's reader.
const pageCacheReader = "reader"

// pods are the scenario's hog pods on f's node. Every hog stops growing at
// the first SIGTERM: a kernel OOM kill then means the kubelet acted late.
func (s Scenario) pods(f *nodeharness.Framework) []*corev1.Pod {
	if d := s.DiskBurst; d != nil {
		return []*corev1.Pod{f.Pod(diskWriter, []string{"disk", "-dir", "/scratch", "-size", d.Size, "-rate", d.Rate, "-freeze-on-term"},
			nodeharness.EmptyDir("/scratch", "", ""))}
	}
	if s.PageCache != "" {
		return []*corev1.Pod{pageCachePod(f, s.PageCache)}
	}
	var out []*corev1.Pod
	for _, h := range s.Hogs {
		// A kubelet that restarts under pressure must not reject them.
		opts := []nodeharness.PodOption{nodeharness.Tolerate("node.kubernetes.io/memory-pressure")}
		if h.Request != "" {
			opts = append(opts, nodeharness.MemoryRequest(h.Request), nodeharness.PriorityClass(nodeharness.LowPriority))
		}
		args := []string{"memory", "-size", h.Size, "-rate", h.Rate, "-freeze-on-term"}
		if h.Threads > 1 {
			args = append(args, "-threads", strconv.Itoa(h.Threads))
		}
		out = append(out, f.Pod(h.Name, args, opts...))
	}
	return out
}

// pageCachePod is a reader that caches a file of size and holds it
// (workload pagecache). /var/tmp of a kind node is on the host's disk (its
// /tmp is a tmpfs, whose pages are not file cache).
func pageCachePod(f *nodeharness.Framework, size string, opts ...nodeharness.PodOption) *corev1.Pod {
	opts = append(opts, nodeharness.HostDir("data", "/var/tmp", "/data"), nodeharness.Tolerate("node.kubernetes.io/memory-pressure"))
	return f.Pod(pageCacheReader, []string{"pagecache", "-dir", "/data", "-size", size}, opts...)
}

// softVictimPod is a DuringSoft scenario's soft victim on f's node.
func (d *SoftEviction) softVictimPod(f *nodeharness.Framework) *corev1.Pod {
	return f.Pod(softVictim, []string{"memory", "-size", d.Size, "-rate", "200Mi"},
		nodeharness.GracePeriod(d.PodGrace), nodeharness.PriorityClass(nodeharness.HighPriority),
		nodeharness.Tolerate("node.kubernetes.io/memory-pressure"))
}
