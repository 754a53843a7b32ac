package nodee2e

import (
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("Memory pressure with priority ordering", Label("Eviction", "Memory", "Serial", "Smoke"), func() {
	// Pressure once the pods use 900 MiB more than when the spec started.
	// Two hogs that both exceed their requests come first, each started
	// only once the previous one's size is in the kubelet's stats (the
	// figures it ranks on; they lag by up to a housekeeping interval): a
	// 500 MiB BestEffort hog of low priority, then a 200 MiB Burstable hog
	// of high priority (request 100Mi). Together they stay 200 MiB under
	// the threshold. A Guaranteed pod taking 500 MiB within its request
	// then pushes the node 300 MiB over, so the kubelet ranks the two hogs
	// on fresh figures, both above their requests: priority decides, the
	// BestEffort hog goes, and the node is 200 MiB under again. The
	// Burstable hog and the Guaranteed pod stay. A kubelet that ranked the
	// high-priority pod first would evict the Burstable hog. (The margins
	// are wide because memory.available on these cgroup v1 nodes is the
	// host's: its page cache moved 100 MiB within a spec in CI.)
	It("evicts the low-priority hog, not the high-priority hog that also exceeds its request, nor the Guaranteed pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "memory-priority",
			condition: corev1.NodeMemoryPressure,
			signal:    "memory.available",
			resource:  "memory",
			offenders: true,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 900*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("besteffort-hog", nodeharness.MemoryHog("500Mi"), nodeharness.PriorityClass(nodeharness.LowPriority)),
						shownBeforeNext: 480 * nodeharness.Mi},
					{order: 0, pod: f.Pod("burstable-hog", nodeharness.MemoryHog("200Mi"),
						nodeharness.PriorityClass(nodeharness.HighPriority), nodeharness.MemoryRequest("100Mi")),
						shownBeforeNext: 190 * nodeharness.Mi},
					{order: 0, pod: f.Pod("guaranteed-hog", nodeharness.MemoryHog("500Mi"), nodeharness.Guaranteed("100m", "600Mi"))},
				}
			},
		})
	})
})

var _ = Describe("Allocatable memory pressure", Label("Eviction", "Memory", "Allocatable", "Serial", "Smoke"), func() {
	// kubeReserved leaves the pods 700 MiB more than they use now: that is
	// the kubepods cgroup's limit and what allocatableMemory.available is
	// measured against. With enforceNodeAllocatable=pods the hard
	// memory.available threshold, here 300Mi, applies to
	// allocatableMemory.available too, so pressure comes once pods use
	// 400 MiB more. The 550 MiB hog gets there and stays 150 MiB under the
	// cgroup limit (no kernel OOM kill); the Guaranteed pod stays. The
	// node's own memory.available is nowhere near 300Mi.
	It("evicts the BestEffort hog on allocatableMemory.available, not the Guaranteed pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "allocatable",
			condition: corev1.NodeMemoryPressure,
			signal:    "allocatableMemory.available",
			resource:  "memory",
			offenders: true,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				allocatableRoom(c, o, 700*nodeharness.Mi, "300Mi")
			},
			pods: func() []victim {
				// The Guaranteed pod first, in the kubelet's stats before the
				// hog starts: a pod without stats ranks first (upstream's
				// rule), and on a slow node (the cgroup v2 VM) its
				// container may still be starting when pressure comes.
				return []victim{
					{order: 0, pod: f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")), shownBeforeNext: 1},
					{order: 1, pod: f.Pod("besteffort-hog", []string{"memory", "-size", "550Mi", "-rate", "20Mi"})},
				}
			},
		})
	})
})

// allocatableRoom leaves the pods room bytes more than they use now, as
// the kubepods cgroup's limit (kubeReserved, enforceNodeAllocatable=pods),
// with the hard memory.available threshold, which applies to
// allocatableMemory.available too, at threshold.
func allocatableRoom(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations, room int64, threshold string) {
	c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"memory.available": threshold})
	c.EnforceNodeAllocatable = []string{"pods"}
	c.KubeReserved = nodeharness.WithThresholds(c.KubeReserved, map[string]string{
		"memory": nodeharness.Quantity(o.MemoryCapacity - o.PodsMemoryWorkingSet - room),
	})
}
