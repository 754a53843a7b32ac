package nodee2e

import (
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("PSI signal", Label("Eviction", "Memory", "PSI", "Alpha", "Serial"), func() {
	// A pod reads a 72 MiB file over and over under a 64 MiB memory limit: the
	// kernel keeps reclaiming its page cache and refaulting what it reclaimed
	// a moment before, its working set. Measured on the host: a file a quarter
	// larger than the room stalls its reader a tenth of the time within
	// seconds; one twice as large hardly at all (a refault that far back is
	// not counted as the working set). The file is on the node's /var, the
	// host's disk, not on the kubelet's filesystem: that is a loop device
	// whose backing file sits in the host's page cache, where a refault is a
	// copy and should hardly stall (not measured on kind: the first version of
	// this spec, on an emptyDir, also met the kubelet reading cAdvisor's
	// zeros; on the host's disk the node's some avg10 went to 14-30 %). The
	// node's memory.psi.some.avg10, the share of time some task stalled on
	// memory (from /proc/pressure/memory on these cgroup v1 nodes), rises from
	// about 0 past the 2 % threshold. Ranked as for memory.available, the
	// thrasher, above its 2 MiB request (its working set swings as its page
	// cache turns over; with 16 MiB it was once within its request at the
	// decision, and not named the offender), goes before the Guaranteed
	// bystander, which stays: the relief shows in the average some seconds
	// later, and no second pod goes for the stall of before.
	It("evicts the pod above its request once memory.psi.some.avg10 passes the threshold, and no other", func(ctx SpecContext) {
		// Upstream's kubelet has no PSI signal: it refuses the threshold.
		expectControlFailure("unsupported eviction signal memory.psi")
		runEviction(ctx, evictionSpec{
			name:         "psi",
			condition:    corev1.NodeMemoryPressure,
			signal:       "memory.psi.some.avg10",
			resource:     "memory",
			offenders:    true,
			messageStart: "The node was under memory pressure: memory.psi.some.avg10 was ",
			featureGates: map[string]bool{"EvictionPSI": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, _ nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"memory.psi.some.avg10": "2"})
			},
			pods: func() []victim {
				// The Guaranteed pod first, in the kubelet's stats before the
				// thrasher starts: a pod without stats ranks first, and on the
				// slow cgroup v2 VM node it was once still being created when
				// the stall came, and evicted.
				return []victim{
					{order: 0, pod: f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")), shownBeforeNext: 1},
					{order: 1, pod: f.Pod("thrasher", []string{"thrash", "-dir", "/scratch", "-size", "72Mi"},
						nodeharness.HostDir("scratch", "/var/tmp", "/scratch"), nodeharness.MemoryRequestLimit("2Mi", "64Mi"))},
				}
			},
		})
	})
})
