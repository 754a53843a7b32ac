package clustere2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("Kubelet restart under pressure", Label("Restart", "Memory", "Serial"), func() {
	// A system-node-critical hog holds the pressured worker over a memory
	// threshold, so the pressure lasts; the kubelet evicts the one other
	// pod it may evict. Then the kubelet restarts while the pressure goes
	// on. The restarted kubelet must report the pressure again within two
	// monitoring intervals and keep it, and must not evict anything again:
	// the evicted pod keeps its single Evicted event and the holder runs
	// on.
	//
	// The condition does not always survive the restart itself: a starting
	// kubelet posts its first node status before its eviction manager's
	// first pass (which also fails while the node object is not yet read
	// back), so that status can say MemoryPressure False, and the
	// memory-pressure taint goes with it for a moment: the default
	// behaviour (seen on our kubelet; KUBELET=upstream runs the same
	// spec). The spec measures how long the node's status went without
	// MemoryPressure True, from the first poll that missed it to the first
	// that saw it again, and bounds it by two monitoring intervals: the
	// restarted kubelet's first passes.
	It("reports MemoryPressure again within two monitoring intervals of losing it, and evicts nothing twice", func(ctx SpecContext) {
		configurePressured(ctx, func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
			c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, memoryHold.threshold(o))
		})

		ns := createNamespace(ctx, "restart")
		By("starting an evictable pod, then the critical pod that holds the pressure")
		_, err := pressured.CreatePod(ctx, ns, pressured.Pod("victim", []string{"sleep"}, nodeharness.PriorityClass(nodeharness.LowPriority)))
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, func(g Gomega) {
			g.Expect(getPod(ctx, g, ns, "victim")).To(Satisfy(nodeharness.IsRunning))
		}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())
		_, err = pressured.CreatePod(ctx, ns, memoryHold.holder())
		Expect(err).NotTo(HaveOccurred())

		By("waiting for MemoryPressure and the eviction of the evictable pod")
		var since time.Time
		Eventually(ctx, func(g Gomega) {
			n, err := pressured.GetNode(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			s, ok := nodeharness.TrueSince(n, corev1.NodeMemoryPressure)
			g.Expect(ok).To(BeTrue(), "no MemoryPressure yet")
			since = s
			g.Expect(nodeharness.CheckEvictedStatus(getPod(ctx, g, ns, "victim"))).To(Succeed())
		}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())
		expectEvictedEvents(ctx, ns, "victim", 1)

		By("restarting the kubelet under the lasting pressure")
		before, err := pressured.KubeletProcess(ctx)
		Expect(err).NotTo(HaveOccurred())
		restart := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			restart <- pressured.RestartKubelet(ctx)
		}()
		// Watch the condition the whole time the kubelet comes back.
		var lostAt, backAt time.Time
		for watching := true; watching; {
			select {
			case err := <-restart:
				Expect(err).NotTo(HaveOccurred())
				watching = false
			case <-time.After(500 * time.Millisecond):
			}
			n, err := pressured.GetNode(ctx)
			Expect(err).NotTo(HaveOccurred())
			s, ok := nodeharness.TrueSince(n, corev1.NodeMemoryPressure)
			switch {
			case (!ok || !s.Equal(since)) && lostAt.IsZero():
				lostAt = time.Now()
				if ok {
					backAt = lostAt // gone and back between two polls
				}
			case ok && !lostAt.IsZero() && backAt.IsZero():
				backAt = time.Now()
			}
		}
		restarted := time.Now()
		AddReportEntry("MemoryPressure reported False during the restart", !lostAt.IsZero())
		after, err := pressured.KubeletProcess(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(after.PID).NotTo(Equal(before.PID), "the kubelet did not restart")

		By("waiting for MemoryPressure, then checking over two monitoring intervals that it stays and nothing is evicted again")
		var back time.Time
		Eventually(ctx, func(g Gomega) {
			n, err := pressured.GetNode(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			s, ok := nodeharness.TrueSince(n, corev1.NodeMemoryPressure)
			g.Expect(ok).To(BeTrue(), "no MemoryPressure since the restart")
			back = s
		}).WithTimeout(2 * suite.MonitoringInterval).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("MemoryPressure True since %s (restart done %s, first True %s)\n", back, restarted, since)
		if !lostAt.IsZero() {
			if backAt.IsZero() {
				backAt = time.Now()
			}
			gap := backAt.Sub(lostAt)
			GinkgoWriter.Printf("MemoryPressure missing from the node's status for at most %s\n", gap.Round(time.Second))
			Expect(gap).To(BeNumerically("<=", 2*suite.MonitoringInterval), "the node went %s without MemoryPressure True", gap.Round(time.Second))
		}
		Consistently(ctx, func(g Gomega) {
			n, err := pressured.GetNode(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			s, ok := nodeharness.TrueSince(n, corev1.NodeMemoryPressure)
			g.Expect(ok).To(BeTrue(), "MemoryPressure went away after the restart")
			g.Expect(s).To(BeTemporally("==", back), "MemoryPressure went away and came back")
			g.Expect(getPod(ctx, g, ns, "holder")).To(Satisfy(nodeharness.IsRunning), "the critical holder")
		}).WithTimeout(2 * suite.MonitoringInterval).WithPolling(suite.Poll).Should(Succeed())
		expectEvictedEvents(ctx, ns, "victim", 1)
	})
})

// expectEvictedEvents checks the pod has exactly want Evicted events, each
// recorded once.
func expectEvictedEvents(ctx SpecContext, ns, pod string, want int) {
	Eventually(ctx, func(g Gomega) {
		events, err := pressured.PodEvents(ctx, ns, pod, nodeharness.EvictedReason)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(HaveLen(want), "Evicted events of %s", pod)
		for _, e := range events {
			g.Expect(e.Count).To(BeNumerically("<=", 1), "event %s of %s recorded %d times", e.Name, pod, e.Count)
		}
	}).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())
}
