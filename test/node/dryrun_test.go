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

// wouldEvictReason is the reason of the event a dry run records
// (pkg/kubelet/eviction/dry_run.go).
const wouldEvictReason = "WouldEvict"

// dryRunHold is how long the dry run must go on killing nothing and
// reporting no pressure once it has decided: three monitoring passes.
const dryRunHold = 30 * time.Second

var _ = Describe("Dry run", Label("Eviction", "Memory", "DryRun", "Alpha", "Serial"), func() {
	// Pressure once the pods use 400 MiB more than when the spec started;
	// a BestEffort hog takes 700 MiB and holds it. With EvictionDryRun the
	// kubelet decides to evict the hog and says so, once, and then leaves
	// everything as it is for as long as the pressure lasts.
	It("reports the eviction it would make, once, and kills nothing, reports no pressure and admits pods", func(ctx SpecContext) {
		// Upstream's kubelet evicts the hog and never says it would.
		expectControlFailure("no WouldEvict event")
		start := time.Now()
		By("waiting until the node has no pressure condition")
		Eventually(ctx, f.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())
		obs, err := f.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		By("setting a memory threshold with EvictionDryRun on")
		setKubeletConfig(ctx, map[string]bool{"EvictionDryRun": true}, func(c *kubeletconfig.KubeletConfiguration) {
			c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
				"memory.available": nodeharness.Quantity(obs.MemoryAvailable - 400*nodeharness.Mi),
			})
		})
		kubelet, err := f.KubeletProcess(ctx)
		Expect(err).NotTo(HaveOccurred())
		evictionsBefore, err := f.EvictionCounts(ctx)
		Expect(err).NotTo(HaveOccurred())
		dryBefore, err := f.DryRunEvictionCounts(ctx)
		Expect(err).NotTo(HaveOccurred())

		ns := createNamespace(ctx, "dry-run")
		// The Guaranteed pod first, in the kubelet's stats before the hog
		// starts: a pod without stats ranks first, and on the slow cgroup
		// v2 VM node the kubelet once would have evicted it first.
		_, err = f.CreatePod(ctx, ns, f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")))
		Expect(err).NotTo(HaveOccurred())
		waitShown(ctx, ns, "guaranteed", 1)
		hog := f.Pod("hog", []string{"memory", "-size", "700Mi", "-rate", "100Mi"})
		_, err = f.CreatePod(ctx, ns, hog)
		Expect(err).NotTo(HaveOccurred())

		By("waiting for the WouldEvict event on the hog")
		var would []corev1.Event
		Eventually(ctx, func(g Gomega) {
			would, err = f.PodEvents(ctx, ns, "hog", wouldEvictReason)
			g.Expect(err).NotTo(HaveOccurred())
			if len(would) == 0 {
				// A kubelet that evicts will never say it would.
				evicted, err := f.PodEvents(ctx, ns, "hog", nodeharness.EvictedReason)
				g.Expect(err).NotTo(HaveOccurred())
				if len(evicted) > 0 {
					StopTrying("no WouldEvict event: the kubelet evicted the hog: " + evicted[0].Message).Now()
				}
			}
			g.Expect(would).NotTo(BeEmpty(), "no WouldEvict event yet")
		}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())
		ev := would[0]
		GinkgoWriter.Printf("WouldEvict: %s %v\n", ev.Message, ev.Annotations)
		Expect(ev.Type).To(Equal(corev1.EventTypeWarning))
		Expect(ev.Message).To(HavePrefix("The node was low on resource: memory."))
		Expect(ev.Annotations).To(HaveKeyWithValue("starved_resource", "memory"))
		Expect(ev.Annotations).To(HaveKeyWithValue("offending_containers", hog.Spec.Containers[0].Name))

		By("checking that, while the pressure lasts, nothing is killed and no pressure is reported")
		Consistently(ctx, func(g Gomega) {
			node, err := f.Client.CoreV1().Nodes().Get(ctx, f.Node, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nodeharness.IsReady(node)).To(BeTrue(), "node not Ready")
			g.Expect(nodeharness.Pressures(node)).To(BeEmpty(), "a dry run reported a pressure condition")
			pods, err := f.Pods(ctx, ns)
			g.Expect(err).NotTo(HaveOccurred())
			for i := range pods {
				p := &pods[i]
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), nodeharness.DescribePod(p))
				for _, cs := range p.Status.ContainerStatuses {
					g.Expect(cs.RestartCount).To(BeZero(), nodeharness.DescribePod(p))
				}
			}
			evicted, err := f.PodEvents(ctx, ns, "hog", nodeharness.EvictedReason)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(evicted).To(BeEmpty(), "a dry run recorded an Evicted event")
			again, err := f.PodEvents(ctx, ns, "hog", wouldEvictReason)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again).To(HaveLen(1))
			g.Expect(again[0].Count).To(BeNumerically("<=", 1), "the standing decision was reported again")
		}).WithTimeout(dryRunHold).WithPolling(suite.Poll).Should(Succeed())

		By("checking the hog holds its memory, so the threshold stayed met")
		Expect(holding(ctx, ns, "hog")).To(BeTrue(), "the hog never reached its size")
		lines, err := f.KubeletJournal(ctx, start)
		Expect(err).NotTo(HaveOccurred())
		Expect(lines).To(ContainElement(SatisfyAll(
			ContainSubstring("dry run: would report node conditions"), ContainSubstring("MemoryPressure"))),
			"the kubelet did not log the conditions it would report")
		Expect(lines).To(ContainElement(SatisfyAll(
			ContainSubstring("dry run: would evict pod"), ContainSubstring(ns+"/hog"))))

		By("checking kubelet_evictions_dry_run rose by one and kubelet_evictions not at all")
		dryAfter, err := f.DryRunEvictionCounts(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(countsDelta(dryBefore, dryAfter)).To(Equal(map[string]int{"memory.available": 1}))
		evictionsAfter, err := f.EvictionCounts(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(countsDelta(evictionsBefore, evictionsAfter)).To(BeEmpty())

		By("checking admission is unchanged: a BestEffort pod starts under the pressure and keeps running")
		_, err = f.CreatePod(ctx, ns, f.Pod("besteffort", []string{"sleep"}))
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, func(g Gomega) {
			p, err := f.Client.CoreV1().Pods(ns).Get(ctx, "besteffort", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			if p.Status.Phase == corev1.PodFailed {
				StopTrying("a dry run failed the pod it admitted: " + nodeharness.DescribePod(p)).Now()
			}
			g.Expect(p).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(p))
		}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
		Consistently(ctx, func(g Gomega) {
			p, err := f.Client.CoreV1().Pods(ns).Get(ctx, "besteffort", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p).To(Satisfy(nodeharness.IsRunning), "a dry run must not evict the pod it admitted: %s", nodeharness.DescribePod(p))
		}).WithTimeout(dryRunHold).WithPolling(suite.Poll).Should(Succeed())

		By("checking the kubelet never restarted on its own")
		now, err := f.KubeletProcess(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(now).To(Equal(kubelet))
	})
})
