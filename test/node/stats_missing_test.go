package nodee2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("Summary stats missing under pressure", Label("Eviction", "Memory", "Faults", "StatsMissing", "Serial"), func() {
	// A pod the kubelet admitted but cannot start (its configMap does not
	// exist, so it waits for the volume) has no sandbox and no stats: the
	// Summary API does not list it. Upstream's rule ranks a pod without
	// stats before every pod with stats, whatever its priority or QoS, so
	// under memory pressure the kubelet evicts it first, although it frees
	// nothing; the next pass evicts the hog. Its Evicted event carries no
	// annotations, not even the starved resource (see victim.noStats). The
	// pod with stats that stays
	// within its request stays. What is seen on a real node: the rule holds
	// with stats really missing, the kubelet keeps running (no restart, one
	// event and one count per eviction), and the pressure clears. Pressure
	// comes once the node has 500 MiB less available; the hog takes 700.
	It("evicts the pod without stats first, as upstream ranks it, then the hog, and keeps running", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "stats-missing",
			condition: corev1.NodeMemoryPressure,
			signal:    "memory.available",
			resource:  "memory",
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 500*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("with-stats", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi"),
						nodeharness.PriorityClass(nodeharness.HighPriority)), shownBeforeNext: 1},
					{order: 1, pod: f.Pod("no-stats", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi"),
						nodeharness.PriorityClass(nodeharness.HighPriority), nodeharness.ConfigMapVolume("evictkit-absent", "/config")),
						readyBeforeNext: waitAdmittedWithoutStats, noStats: true},
					{order: 2, pod: f.Pod("besteffort-hog", nodeharness.MemoryHog("700Mi"), nodeharness.PriorityClass(nodeharness.LowPriority))},
				}
			},
		})
	})
})

// waitAdmittedWithoutStats waits until the kubelet has taken pod up (it
// reported a FailedMount event: the volume cannot be set up) while the
// Summary API lists no stats of it.
func waitAdmittedWithoutStats(ctx context.Context, ns, pod string) {
	By("waiting until the kubelet works on " + pod + " and the Summary API has no stats of it")
	Eventually(ctx, func(g Gomega) {
		events, err := f.PodEvents(ctx, ns, pod, "FailedMount")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).NotTo(BeEmpty(), "no FailedMount event of %s yet", pod)
		s, err := f.Summary(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range s.Pods {
			g.Expect(p.PodRef.Namespace+"/"+p.PodRef.Name).NotTo(Equal(ns+"/"+pod), "the Summary API lists stats of %s", pod)
		}
	}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
}
