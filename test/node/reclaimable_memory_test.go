package nodee2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("Page cache is not memory pressure", Label("Eviction", "Memory", "ReclaimableMemory", "Alpha", "Serial"), func() {
	// A hard memory.available threshold 400 MiB below what the node has
	// available, and a pod that writes an 800 MiB file on the node's disk
	// and reads it twice, then every 5 s: 800 MiB of clean page cache on
	// the active list, charged to the pod. The Summary API (cAdvisor's
	// working set, upstream's rule) then shows the node 400 MiB below the
	// threshold; that is checked, so the spec cannot pass on a node where
	// the cache never counted. With EvictionReclaimableMemory the kubelet
	// counts the cache as available: three monitoring passes later the
	// node has had no MemoryPressure and no pod was evicted. Upstream's
	// kubelet reports MemoryPressure and evicts the reader
	// (kubernetes#43916).
	It("counts clean page cache as available: no MemoryPressure, no eviction", func(ctx SpecContext) {
		expectControlFailure("reported MemoryPressure|pod reader no longer runs.*Evicted")
		By("waiting until the node has no pressure condition")
		Eventually(ctx, f.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())
		By("observing the node")
		obs, err := f.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		threshold := obs.MemoryAvailable - 400*nodeharness.Mi
		setKubeletConfig(ctx, map[string]bool{"EvictionReclaimableMemory": true}, func(c *kubeletconfig.KubeletConfiguration) {
			c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"memory.available": nodeharness.Quantity(threshold)})
			// The passes are counted from the kubelet's verbosity-3 log.
			c.Logging.Verbosity = logsapi.VerbosityLevel(3)
		})
		baseline := takeKubeletBaseline(ctx)

		ns := createNamespace(ctx, "page-cache")
		By("creating the reader and a bystander")
		for _, p := range []*corev1.Pod{
			// /var/tmp of a kind node is on the host's disk (its /tmp is a
			// tmpfs, whose pages are not file cache); the file is unlinked
			// once open.
			f.Pod("reader", []string{"pagecache", "-dir", "/data", "-size", "800Mi"}, nodeharness.HostDir("data", "/var/tmp", "/data")),
			f.Pod("bystander", []string{"sleep"}),
		} {
			_, err := f.CreatePod(ctx, ns, p)
			Expect(err).NotTo(HaveOccurred())
		}
		waitHolding(ctx, ns, "reader")

		By("waiting until the Summary API, by upstream's working set, shows the node below the threshold")
		var summaryAvail int64
		Eventually(ctx, func(g Gomega) {
			stopIfPressure(ctx, g, ns)
			o, err := f.Observe(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			summaryAvail = o.MemoryAvailable
			g.Expect(summaryAvail).To(BeNumerically("<", threshold), "the Summary API shows %d MiB available, the threshold is %d MiB", summaryAvail/nodeharness.Mi, threshold/nodeharness.Mi)
		}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
		since := time.Now()
		GinkgoWriter.Printf("at %s the Summary API shows %d MiB available, %d MiB below the threshold\n",
			since.Format(time.TimeOnly), summaryAvail/nodeharness.Mi, (threshold-summaryAvail)/nodeharness.Mi)

		By("watching three monitoring passes of the kubelet")
		var passes []nodeharness.Observed
		Eventually(ctx, func(g Gomega) {
			stopIfPressure(ctx, g, ns)
			var err error
			passes, err = f.Observations(ctx, since, "memory.available")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(passes).To(HaveLen(3), "the kubelet has logged %d monitoring passes since %s", len(passes), since.Format(time.TimeOnly))
		}).WithTimeout(2 * time.Minute).WithPolling(suite.Poll).Should(Succeed())
		for _, p := range passes {
			GinkgoWriter.Printf("pass at %s: the kubelet observed %d MiB available (threshold %d MiB)\n", p.At.Format(time.TimeOnly), p.Available/nodeharness.Mi, threshold/nodeharness.Mi)
		}
		Expect(pressureOrEnded(ctx, ns)).To(BeEmpty())

		By("checking the Summary API still counts the cache")
		o, err := f.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.MemoryAvailable).To(BeNumerically("<", threshold), "the cache is no longer counted by the Summary API (%d MiB available): the passes proved nothing", o.MemoryAvailable/nodeharness.Mi)

		By("checking no pod was evicted")
		for _, name := range []string{"reader", "bystander"} {
			events, err := f.PodEvents(ctx, ns, name, nodeharness.EvictedReason)
			Expect(err).NotTo(HaveOccurred())
			Expect(events).To(BeEmpty(), "pod %s has Evicted events", name)
		}
		baseline.expectSince(ctx, "memory.available", map[string]int{})
	})
})

// stopIfPressure stops an Eventually at once when the node reports
// MemoryPressure or a pod of ns no longer runs.
func stopIfPressure(ctx SpecContext, g Gomega, ns string) {
	why, err := pressureOrEnded(ctx, ns)
	g.Expect(err).NotTo(HaveOccurred())
	if why != "" {
		StopTrying(why).Now()
	}
}

// pressureOrEnded says whether the node reports MemoryPressure or a pod
// of ns no longer runs; "" when neither.
func pressureOrEnded(ctx SpecContext, ns string) (string, error) {
	n, err := f.GetNode(ctx)
	if err != nil {
		return "", err
	}
	if c := nodeharness.Condition(n, corev1.NodeMemoryPressure); c != nil && c.Status == corev1.ConditionTrue {
		return fmt.Sprintf("the node reported MemoryPressure since %s: %s", c.LastTransitionTime.Format(time.TimeOnly), c.Message), nil
	}
	pods, err := f.Pods(ctx, ns)
	if err != nil {
		return "", err
	}
	for i := range pods {
		if !nodeharness.IsRunning(&pods[i]) {
			return fmt.Sprintf("pod %s no longer runs: %s", pods[i].Name, nodeharness.DescribePod(&pods[i])), nil
		}
	}
	return "", nil
}
