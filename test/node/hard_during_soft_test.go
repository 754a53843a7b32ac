package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("Hard threshold during a soft eviction", Label("Eviction", "Memory", "Soft", "HardDuringSoft", "Alpha", "Serial", "Slow"), func() {
	// A soft memory.available threshold 500 MiB below the start (10 s
	// grace, evictionMaxPodGracePeriod 120) and a hard one 1300 MiB below
	// it. Two pods start: a high-priority BestEffort hog of 800 MiB that
	// ignores SIGTERM and asks for 120 s to terminate, and a low-priority
	// Burstable one (request 200Mi) that waits. The soft threshold evicts
	// the first hog. Then the second grows to 300 MiB, over its request
	// but short of the hard threshold, and pauses until the Summary API
	// shows it at that size: the kubelet ranks on those stats, and the
	// second hog must rank first (over its request, low priority) when it
	// grows on to 1100 MiB and meets the hard threshold while the first
	// still terminates. With EvictionHardDuringSoft the kubelet evicts it
	// long before the first hog's grace period ends. Upstream's pass waits
	// for the first hog's kill, whose end leaves the node under the hard
	// threshold: the first hog ends with the second still running.
	It("evicts for a hard threshold while a soft eviction's pod terminates", func(ctx SpecContext) {
		expectControlFailure("ended before")
		start, resume := newNodeSignal("hard-during-soft-start"), newNodeSignal("hard-during-soft-resume")
		runEviction(ctx, evictionSpec{
			name:         "hard-during-soft",
			condition:    corev1.NodeMemoryPressure,
			signal:       "memory.available",
			resource:     "memory",
			offenders:    true,
			featureGates: map[string]bool{"EvictionHardDuringSoft": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionSoft = map[string]string{"memory.available": nodeharness.Quantity(o.MemoryAvailable - 500*nodeharness.Mi)}
				c.EvictionSoftGracePeriod = map[string]string{"memory.available": (10 * time.Second).String()}
				c.EvictionMaxPodGracePeriod = 120
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 1300*nodeharness.Mi),
				})
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				GinkgoWriter.Printf("%s: Evicted event at %s, seen Failed at %s (%s later)\n", p.Name,
					decidedAt(ctx, p).Format(time.TimeOnly), t.failedSeen.Format(time.TimeOnly), t.failedSeen.Sub(decidedAt(ctx, p)).Round(time.Second))
			},
			pods: func() []victim {
				return []victim{
					{order: 2, pod: f.Pod("hard-hog", []string{"memory", "-size", "1100Mi", "-rate", "40Mi",
						"-after", start.path(), "-pause-at", "300Mi", "-resume", resume.path()},
						signalMount, nodeharness.MemoryRequest("200Mi"),
						nodeharness.PriorityClass(nodeharness.LowPriority))},
					{order: 1, terminatesLate: true,
						pod: f.Pod("soft-hog", nodeharness.MemoryHog("800Mi"), nodeharness.GracePeriod(120),
							nodeharness.PriorityClass(nodeharness.HighPriority)),
						onEvicted: func(ctx context.Context, ns string) {
							By("letting the second hog grow to 300 MiB")
							start.give(ctx)
							waitShown(ctx, ns, "hard-hog", 300*nodeharness.Mi)
							By("letting the second hog grow on")
							resume.give(ctx)
						}},
				}
			},
		})
	})
})
