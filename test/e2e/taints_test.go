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
	"github.com/evictkit/evictkit/test/node/framework"
)

// Bounds of the waits (generous: a wait ends as soon as its condition holds).
const (
	pressureTimeout  = 5 * time.Minute // until the condition and its taint appear
	clearTimeout     = 5 * time.Minute // until they go
	scheduleTimeout  = 2 * time.Minute // until a pod is placed and runs
	poll             = 2 * time.Second
	transitionPeriod = 30 * time.Second // evictionPressureTransitionPeriod in every spec
	// monitoringInterval is the kubelet's housekeeping period: the last
	// time it saw a threshold met can be up to this long before the
	// pressure actually ended.
	monitoringInterval = 10 * time.Second
)

// holdPressure is one kind of pressure: a threshold set relative to what
// the pressured worker observes, and a system-node-critical pod that
// crosses it and holds it there. The kubelet never evicts a critical pod,
// so the pressure lasts until the spec deletes the pod.
type holdPressure struct {
	condition corev1.NodeConditionType
	// prepare runs before the node is observed.
	prepare   func(ctx context.Context)
	threshold func(o framework.Observations) map[string]string
	holder    func() *corev1.Pod
}

var memoryHold = holdPressure{
	condition: corev1.NodeMemoryPressure,
	threshold: func(o framework.Observations) map[string]string {
		return map[string]string{"memory.available": framework.Quantity(o.MemoryAvailable - 400*framework.Mi)}
	},
	holder: func() *corev1.Pod {
		return pressured.Pod("holder", framework.MemoryHog("600Mi"), framework.PriorityClass("system-node-critical"))
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
		Eventually(ctx, pressured.FsStatsCurrent).WithTimeout(2 * time.Minute).WithPolling(poll).Should(Succeed())
	},
	threshold: func(o framework.Observations) map[string]string {
		return map[string]string{"nodefs.available": framework.Quantity(o.NodeFsAvailable - 200*framework.Mi)}
	},
	holder: func() *corev1.Pod {
		return pressured.Pod("holder", framework.DiskHog("/scratch", "350Mi"),
			framework.EmptyDir("/scratch", "", ""), framework.PriorityClass("system-node-critical"))
	},
}

var pidHold = holdPressure{
	condition: corev1.NodePIDPressure,
	threshold: func(o framework.Observations) map[string]string {
		return map[string]string{"pid.available": framework.Quantity(o.PIDAvailable - 2000)}
	},
	holder: func() *corev1.Pod {
		return pressured.Pod("holder", framework.ThreadHog("3500"), framework.PriorityClass("system-node-critical"))
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
			taint := framework.PressureTaints[h.condition]

			By("waiting until the pressured worker has no pressure condition or taint")
			Eventually(ctx, func(g Gomega) {
				n, err := pressured.GetNode(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(framework.Pressures(n)).To(BeEmpty())
				g.Expect(framework.HasTaint(n, taint, corev1.TaintEffectNoSchedule)).To(BeFalse(), "taint %s", taint)
			}).WithTimeout(clearTimeout).WithPolling(poll).Should(Succeed())
			if h.prepare != nil {
				h.prepare(ctx)
			}
			configurePressured(ctx, func(c *kubeletconfig.KubeletConfiguration, o framework.Observations) {
				c.EvictionHard = framework.WithThresholds(c.EvictionHard, h.threshold(o))
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
				s, ok := framework.TrueSince(n, h.condition)
				g.Expect(ok).To(BeTrue(), "%s not reported yet", h.condition)
				g.Expect(framework.HasTaint(n, taint, corev1.TaintEffectNoSchedule)).To(BeTrue(), "no %s taint yet", taint)
				since = s
			}).WithTimeout(pressureTimeout).WithPolling(poll).Should(Succeed())

			By("checking the kubelet recorded EvictionThresholdMet on the node")
			Eventually(ctx, func(g Gomega) {
				events, err := pressured.NodeEvents(ctx, "EvictionThresholdMet")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(events).To(ContainElement(HaveField("LastTimestamp.Time", BeTemporally(">=", started.Add(-time.Second)))),
					"no EvictionThresholdMet event on %s since the spec started", pressured.Node)
			}).WithTimeout(time.Minute).WithPolling(poll).Should(Succeed())

			By("creating a pod that may only run on the pressured worker: it must stay unschedulable")
			pinned, err := spare.CreatePod(ctx, ns, spare.Pod("pinned", []string{"sleep"}, framework.ScheduledOnlyOn(pressured.Node)))
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
			}).WithTimeout(scheduleTimeout).WithPolling(poll).Should(Succeed())

			By("creating pods free to run on any worker: all must run on the spare one")
			var free []string
			for i := range 4 {
				p, err := spare.CreatePod(ctx, ns, spare.Pod(fmt.Sprintf("free-%d", i), []string{"sleep"}, framework.Scheduled()))
				Expect(err).NotTo(HaveOccurred())
				free = append(free, p.Name)
			}
			Eventually(ctx, func(g Gomega) {
				for _, name := range free {
					p := getPod(ctx, g, ns, name)
					g.Expect(p).To(Satisfy(framework.IsRunning), framework.DescribePod(p))
					g.Expect(p.Spec.NodeName).To(Equal(spare.Node), "pod %s", p.Name)
				}
			}).WithTimeout(scheduleTimeout).WithPolling(poll).Should(Succeed())

			By("checking the pressure lasted throughout and the critical holder still runs")
			n, err := pressured.GetNode(ctx)
			Expect(err).NotTo(HaveOccurred())
			now, ok := framework.TrueSince(n, h.condition)
			Expect(ok).To(BeTrue(), "%s went away while the holder ran", h.condition)
			Expect(now).To(BeTemporally("==", since), "%s went away and came back", h.condition)
			Expect(getPod(ctx, Default, ns, "holder")).To(Satisfy(framework.IsRunning))

			By("ending the pressure: deleting the holder")
			Expect(pressured.Client.CoreV1().Pods(ns).Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})).To(Succeed())
			ended := time.Now()

			By(fmt.Sprintf("waiting for %s and its taint to go", h.condition))
			var cleared time.Time
			Eventually(ctx, func(g Gomega) {
				n, err := pressured.GetNode(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(framework.IsReady(n)).To(BeTrue(), "node %s not Ready", n.Name)
				c := framework.Condition(n, h.condition)
				g.Expect(c).NotTo(BeNil(), "node %s has no %s condition", n.Name, h.condition)
				g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
				g.Expect(framework.HasTaint(n, taint, corev1.TaintEffectNoSchedule)).To(BeFalse(), "taint %s still there", taint)
				cleared = c.LastTransitionTime.Time
			}).WithTimeout(clearTimeout).WithPolling(poll).Should(Succeed())
			// The condition's times are whole seconds: allow one.
			Expect(cleared.Sub(ended)).To(BeNumerically(">=", transitionPeriod-monitoringInterval-time.Second),
				"%s cleared %s after the pressure ended, before the transition period (%s)", h.condition, cleared.Sub(ended), transitionPeriod)

			By("checking the pod pinned to the pressured worker is placed there and runs")
			Eventually(ctx, func(g Gomega) {
				p := getPod(ctx, g, ns, pinned.Name)
				g.Expect(p.Spec.NodeName).To(Equal(pressured.Node))
				g.Expect(p).To(Satisfy(framework.IsRunning), framework.DescribePod(p))
			}).WithTimeout(scheduleTimeout).WithPolling(poll).Should(Succeed())
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
	ns, err := pressured.CreateNamespace(ctx, base)
	Expect(err).NotTo(HaveOccurred())
	current.namespace = ns
	DeferCleanup(func(ctx SpecContext) {
		Expect(pressured.DeleteNamespace(ctx, ns)).To(Succeed())
	}, NodeTimeout(5*time.Minute))
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
func configurePressured(ctx context.Context, change func(c *kubeletconfig.KubeletConfiguration, o framework.Observations)) {
	By("waiting until the pressured worker has no pressure condition")
	Eventually(ctx, pressured.NodePressures).WithTimeout(clearTimeout).WithPolling(poll).Should(BeEmpty())
	obs, err := pressured.Observe(ctx)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("observations on %s: %+v\n", pressured.Node, obs)

	By("setting the thresholds on the pressured worker relative to the observations")
	DeferCleanup(func(ctx SpecContext) {
		Expect(pressured.RestoreKubeletConfig(ctx)).To(Succeed())
	}, NodeTimeout(5*time.Minute))
	Expect(pressured.UpdateKubeletConfig(ctx, func(c *kubeletconfig.KubeletConfiguration) {
		c.EvictionPressureTransitionPeriod = metav1.Duration{Duration: transitionPeriod}
		change(c, obs)
		GinkgoWriter.Printf("evictionHard %v evictionSoft %v\n", c.EvictionHard, c.EvictionSoft)
	})).To(Succeed())
}

// countEvictions counts the kubelet's Evicted events in ns.
func countEvictions(ctx context.Context, ns string) (int, error) {
	list, err := pressured.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", framework.EvictedReason).String(),
	})
	if err != nil {
		return 0, fmt.Errorf("listing the Evicted events of %s: %w", ns, err)
	}
	return len(list.Items), nil
}
