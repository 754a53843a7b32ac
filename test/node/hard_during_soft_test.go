package nodee2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("Hard threshold during a soft eviction", Label("Eviction", "Disk", "Soft", "HardDuringSoft", "Alpha", "Serial", "Slow"), func() {
	// A soft nodefs threshold 150 MiB below the start (10 s grace,
	// evictionMaxPodGracePeriod 120) and a hard one 500 MiB below it. The
	// first hog writes 250 MiB, ignores SIGTERM and asks for 120 s to
	// terminate: the soft threshold evicts it. Once its Evicted event is
	// recorded a second hog, of low priority, writes 400 MiB: the hard
	// threshold is met while the first hog still terminates. With
	// EvictionHardDuringSoft the kubelet evicts the second hog (it ranks
	// first: over its request, or on priority while its usage is not yet
	// in the stats) long before the first hog's grace period ends.
	// Upstream's pass waits for the first hog's kill, whose end frees
	// enough that the hard threshold is no longer met: the second hog is
	// never evicted.
	It("evicts for a hard threshold while a soft eviction's pod terminates", func(ctx SpecContext) {
		expectControlFailure("ended before")
		runEviction(ctx, evictionSpec{
			name:         "hard-during-soft",
			condition:    corev1.NodeDiskPressure,
			signal:       "nodefs.available",
			resource:     "ephemeral-storage",
			prepare:      pruneImages,
			featureGates: map[string]bool{"EvictionHardDuringSoft": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionSoft = map[string]string{"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 150*nodeharness.Mi)}
				c.EvictionSoftGracePeriod = map[string]string{"nodefs.available": (10 * time.Second).String()}
				c.EvictionMaxPodGracePeriod = 120
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 500*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, terminatesLate: true, evictedBeforeNext: true,
						pod: f.Pod("soft-hog", nodeharness.DiskHog("/scratch", "250Mi"), nodeharness.EmptyDir("/scratch", "", ""),
							nodeharness.GracePeriod(120), nodeharness.PriorityClass(nodeharness.HighPriority), nodeharness.EphemeralStorage("300Mi", ""))},
					{order: 2, pod: f.Pod("hard-hog", nodeharness.DiskHog("/scratch", "400Mi"), nodeharness.EmptyDir("/scratch", "", ""),
						nodeharness.PriorityClass(nodeharness.LowPriority))},
				}
			},
		})
	})
})
