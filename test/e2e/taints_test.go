package clustere2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/evictkit/evictkit/internal/e2ereport"
	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// scheduleTimeout bounds the wait until a pod is placed and runs.
const scheduleTimeout = 2 * time.Minute

// holdPressure is one kind of pressure: a threshold set relative to what
// the pressured worker observes, and a system-node-critical pod that
// crosses it and holds it there. The kubelet never evicts a critical pod,
// so the pressure lasts until the spec deletes the pod.
type holdPressure struct {
	condition corev1.NodeConditionType
	// prepare runs before the node is observed.
	prepare   func(ctx context.Context)
	threshold func(o nodeharness.Observations) map[string]string
	holder    func() *corev1.Pod
}

var memoryHold = holdPressure{
	condition: corev1.NodeMemoryPressure,
	threshold: func(o nodeharness.Observations) map[string]string {
		return map[string]string{"memory.available": nodeharness.Quantity(o.MemoryAvailable - 400*nodeharness.Mi)}
	},
	holder: func() *corev1.Pod {
		return pressured.Pod("holder", nodeharness.MemoryHog("600Mi"), nodeharness.PriorityClass("system-node-critical"))
	},
}

var diskHold = holdPressure{
	condition: corev1.NodeDiskPressure,
	// Unused images go first, so image garbage collection cannot end the
	// pressure; the threshold is then set from the kubelet's figures once
	// they show the space that freed.
	prepare: func(ctx context.Context) {
		By("pruning unused images on the pressured worker")
		_, err := pressured.PruneImages(ctx)
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, pressured.FsStatsCurrent).WithTimeout(2 * time.Minute).WithPolling(suite.Poll).Should(Succeed())
	},
	threshold: func(o nodeharness.Observations) map[string]string {
		return map[string]string{"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 200*nodeharness.Mi)}
	},
	holder: func() *corev1.Pod {
		return pressured.Pod("holder", nodeharness.DiskHog("/scratch", "350Mi"),
			nodeharness.EmptyDir("/scratch", "", ""), nodeharness.PriorityClass("system-node-critical"))
	},
}

var pidHold = holdPressure{
	condition: corev1.NodePIDPressure,
	threshold: func(o nodeharness.Observations) map[string]string {
		return map[string]string{"pid.available": nodeharness.Quantity(o.PIDAvailable - 2000)}
	},
	holder: func() *corev1.Pod {
		return pressured.Pod("holder", nodeharness.ThreadHog("3500"), nodeharness.PriorityClass("system-node-critical"))
	},
}

var _ = Describe("Pressure taints and scheduling", Label("Taints", "Serial"), func() {
	// While a worker has a pressure condition, the node lifecycle
	// controller taints it NoSchedule with the condition's taint and the
	// scheduler places pods elsewhere; once the pressure is over, the
	// kubelet clears the condition after the transition period, the taint
	// goes, and the worker takes pods again.
	DescribeTable("taints the pressured worker, places pods on the other one, then takes pods again",
		func(ctx SpecContext, h holdPressure) {
			taint := nodeharness.PressureTaints[h.condition]

			By("waiting until the pressured worker has no pressure condition or taint")
			Eventually(ctx, func(g Gomega) {
				n, err := pressured.GetNode(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(nodeharness.Pressures(n)).To(BeEmpty())
				g.Expect(nodeharness.HasTaint(n, taint, corev1.TaintEffectNoSchedule)).To(BeFalse(), "taint %s", taint)
			}).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(Succeed())
			if h.prepare != nil {
				h.prepare(ctx)
			}
			configurePressured(ctx, func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, h.threshold(o))
			})

			ns := createNamespace(ctx, "taints")
			started := time.Now()
			By("starting the critical pod that holds the pressure")
			_, err := pressured.CreatePod(ctx, ns, h.holder())
			Expect(err).NotTo(HaveOccurred())

			By(fmt.Sprintf("waiting for %s and the %s taint", h.condition, taint))
			var since time.Time
			Eventually(ctx, func(g Gomega) {
				n, err := pressured.GetNode(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				s, ok := nodeharness.TrueSince(n, h.condition)
				g.Expect(ok).To(BeTrue(), "%s not reported yet", h.condition)
				g.Expect(nodeharness.HasTaint(n, taint, corev1.TaintEffectNoSchedule)).To(BeTrue(), "no %s taint yet", taint)
				since = s
			}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())

			By("checking the kubelet recorded EvictionThresholdMet on the node")
			Eventually(ctx, func(g Gomega) {
				events, err := pressured.NodeEvents(ctx, "EvictionThresholdMet")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(events).To(ContainElement(HaveField("LastTimestamp.Time", BeTemporally(">=", started.Add(-time.Second)))),
					"no EvictionThresholdMet event on %s since the spec started", pressured.Node)
			}).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())

			By("creating a pod that may only run on the pressured worker: it must stay unschedulable")
			pinned, err := spare.CreatePod(ctx, ns, spare.Pod("pinned", []string{"sleep"}, nodeharness.ScheduledOnlyOn(pressured.Node)))
			Expect(err).NotTo(HaveOccurred())
			Eventually(ctx, func(g Gomega) {
				p := getPod(ctx, g, ns, pinned.Name)
				g.Expect(p.Spec.NodeName).To(BeEmpty(), "pod %s was placed on %s", p.Name, p.Spec.NodeName)
				g.Expect(p.Status.Conditions).To(ContainElement(SatisfyAll(
					HaveField("Type", corev1.PodScheduled),
					HaveField("Status", corev1.ConditionFalse),
					HaveField("Reason", corev1.PodReasonUnschedulable),
					// The scheduler counts nodes per reason without naming
					// taints; the pressured worker's only taint is checked above.
					HaveField("Message", ContainSubstring("untolerated taint")),
				)), "pod %s is not unschedulable for a taint: %+v", p.Name, p.Status.Conditions)
			}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())

			By("creating pods free to run on any worker: all must run on the spare one")
			var free []string
			for i := range 4 {
				p, err := spare.CreatePod(ctx, ns, spare.Pod(fmt.Sprintf("free-%d", i), []string{"sleep"}, nodeharness.Scheduled()))
				Expect(err).NotTo(HaveOccurred())
				free = append(free, p.Name)
			}
			Eventually(ctx, func(g Gomega) {
				for _, name := range free {
					p := getPod(ctx, g, ns, name)
					g.Expect(p).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(p))
					g.Expect(p.Spec.NodeName).To(Equal(spare.Node), "pod %s", p.Name)
				}
			}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())

			By("checking the pressure lasted throughout and the critical holder still runs")
			n, err := pressured.GetNode(ctx)
			Expect(err).NotTo(HaveOccurred())
			now, ok := nodeharness.TrueSince(n, h.condition)
			Expect(ok).To(BeTrue(), "%s went away while the holder ran", h.condition)
			Expect(now).To(BeTemporally("==", since), "%s went away and came back", h.condition)
			Expect(getPod(ctx, Default, ns, "holder")).To(Satisfy(nodeharness.IsRunning))

			By("ending the pressure: deleting the holder")
			Expect(pressured.Client.CoreV1().Pods(ns).Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})).To(Succeed())
			ended := time.Now()

			By(fmt.Sprintf("waiting for %s and its taint to go", h.condition))
			var cleared time.Time
			Eventually(ctx, func(g Gomega) {
				n, err := pressured.GetNode(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(nodeharness.IsReady(n)).To(BeTrue(), "node %s not Ready", n.Name)
				c := nodeharness.Condition(n, h.condition)
				g.Expect(c).NotTo(BeNil(), "node %s has no %s condition", n.Name, h.condition)
				g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
				g.Expect(nodeharness.HasTaint(n, taint, corev1.TaintEffectNoSchedule)).To(BeFalse(), "taint %s still there", taint)
				cleared = c.LastTransitionTime.Time
			}).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(Succeed())
			// The condition's times are whole seconds: allow one.
			Expect(cleared.Sub(ended)).To(BeNumerically(">=", suite.TransitionPeriod-suite.MonitoringInterval-time.Second),
				"%s cleared %s after the pressure ended, before the transition period (%s)", h.condition, cleared.Sub(ended), suite.TransitionPeriod)

			By("checking the pod pinned to the pressured worker is placed there and runs")
			Eventually(ctx, func(g Gomega) {
				p := getPod(ctx, g, ns, pinned.Name)
				g.Expect(p.Spec.NodeName).To(Equal(pressured.Node))
				g.Expect(p).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(p))
			}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())
		},
		Entry("memory", Label("Memory"), memoryHold),
		Entry("disk", Label("Disk"), diskHold),
		Entry("PID", Label("PID"), pidHold),
	)
})

// getPod reads a pod of the spec's namespace.
func getPod(ctx context.Context, g Gomega, ns, name string) *corev1.Pod {
	p, err := spare.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return p
}

// createNamespace makes the spec's namespace, removed when the spec ends.
func createNamespace(ctx context.Context, base string) string {
	ns := clusterSuite.CreateNamespace(ctx, pressured, base)
	// Runs before the namespace goes (cleanups run last in, first out).
	DeferCleanup(func(ctx SpecContext) {
		n, err := countEvictions(ctx, ns)
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry(e2ereport.EvictionsEntry, n, ReportEntryVisibilityNever)
	}, NodeTimeout(time.Minute))
	return ns
}

// configurePressured waits until the pressured worker has no pressure
// condition, observes it, and sets its kubelet configuration: the spec's
// transition period, then change with the observations. The original
// configuration is put back when the spec ends.
func configurePressured(ctx context.Context, change func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations)) {
	By("waiting until the pressured worker has no pressure condition")
	Eventually(ctx, pressured.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())
	obs, err := pressured.Observe(ctx)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("observations on %s: %+v\n", pressured.Node, obs)

	By("setting the thresholds on the pressured worker relative to the observations")
	suite.SetKubeletConfig(ctx, pressured, nil, func(c *kubeletconfig.KubeletConfiguration) { change(c, obs) })
}

// countEvictions counts the kubelet's Evicted events in ns.
func countEvictions(ctx context.Context, ns string) (int, error) {
	list, err := pressured.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", nodeharness.EvictedReason).String(),
	})
	if err != nil {
		return 0, fmt.Errorf("listing the Evicted events of %s: %w", ns, err)
	}
	return len(list.Items), nil
}
