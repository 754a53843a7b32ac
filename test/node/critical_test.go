package nodee2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("Critical pods under memory pressure", Label("Eviction", "Memory", "Critical", "Serial"), func() {
	// Pressure once the pods use 500 MiB more than at the start; a static
	// hog and a system-node-critical hog hold 400 MiB each, a low-priority
	// hog 400 MiB more. Only the low-priority hog may go; the pressure the
	// critical pods cause must then last without any further eviction.
	// The threshold is set once all three hold their memory: on the slow
	// cgroup v2 VM node the static pod was once still being created when
	// the low-priority hog was evicted. The kubelet restarts with the
	// threshold already met, and on restart it admits its running pods
	// again: a BestEffort hog would be rejected there ("The node had
	// condition: [MemoryPressure]", no DisruptionTarget), not evicted by
	// the manager, so the low-priority hog is Burstable.
	It("evicts only the non-critical hog and never a static or system-node-critical pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:                 "critical",
			condition:            corev1.NodeMemoryPressure,
			signal:               "memory.available",
			resource:             "memory",
			offenders:            true,
			configureOnceHolding: true,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 500*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("low-hog", nodeharness.MemoryHog("400Mi"), nodeharness.MemoryRequest("50Mi"), nodeharness.PriorityClass(nodeharness.LowPriority))},
					{order: 0, pod: f.Pod("critical-hog", nodeharness.MemoryHog("400Mi"), nodeharness.PriorityClass("system-node-critical"))},
					{order: 0, static: true, pod: f.Pod("static-hog", nodeharness.MemoryHog("400Mi"))},
				}
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				By("checking the pressure lasts and the critical pods keep running")
				Consistently(ctx, func(g Gomega) {
					n, err := f.GetNode(ctx)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(nodeharness.HasCondition(n, corev1.NodeMemoryPressure)).To(BeTrue(), "the critical hogs still hold the memory")
					pods, err := f.Pods(ctx, ns)
					g.Expect(err).NotTo(HaveOccurred())
					for i := range pods {
						if pods[i].Name != "low-hog" {
							g.Expect(&pods[i]).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(&pods[i]))
						}
					}
				}).WithTimeout(40 * time.Second).WithPolling(suite.Poll).Should(Succeed())
				By("removing the critical hogs")
				Expect(f.DeleteStaticPod(ctx, "static-hog")).To(Succeed())
				Expect(f.Client.CoreV1().Pods(ns).Delete(ctx, "critical-hog", metav1.DeleteOptions{})).To(Succeed())
			},
		})
	})
})
