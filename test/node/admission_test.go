package nodee2e

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// holdPressure puts the node under lasting pressure: a threshold relative
// to what the node observes, and a system-node-critical hog (which the
// kubelet never evicts) that takes more than the margin, so nothing the
// kubelet can do relieves it. (A threshold above what the node has would
// do it without a hog, but the kubelet refuses to start with an eviction
// reservation above capacity.) It waits for the condition.
func holdPressure(ctx SpecContext, ns string, condition corev1.NodeConditionType, hog []string, opts []nodeharness.PodOption,
	set func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations)) {
	By("observing the node")
	obs, err := f.Observe(ctx)
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("setting a threshold and starting a critical hog that hold the node in %s", condition))
	setKubeletConfig(ctx, nil, func(c *kubeletconfig.KubeletConfiguration) { set(c, obs) })
	_, err = f.CreatePod(ctx, ns, f.Pod("critical-hog", hog, append(opts, nodeharness.PriorityClass("system-node-critical"))...))
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, f.NodePressures).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(ContainElement(condition))
}

// expectRejected waits until the kubelet rejects the pod at admission:
// phase Failed, reason Evicted, a message naming the condition, and no
// container ever started.
func expectRejected(ctx context.Context, ns string, p *corev1.Pod, condition corev1.NodeConditionType) {
	_, err := f.CreatePod(ctx, ns, p)
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func(g Gomega) {
		got, err := f.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		if started(got) || creating(got) {
			StopTrying("the kubelet admitted a pod it had to reject: " + nodeharness.DescribePod(got)).Now()
		}
		g.Expect(got.Status.Phase).To(Equal(corev1.PodFailed), nodeharness.DescribePod(got))
		g.Expect(got.Status.Reason).To(Equal(nodeharness.EvictedReason), nodeharness.DescribePod(got))
		g.Expect(got.Status.Message).To(SatisfyAll(HavePrefix(rejectedMessagePrefix), ContainSubstring(string(condition))), nodeharness.DescribePod(got))
	}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
}

// expectAdmittedUnderPressure waits until the kubelet admitted the pod: it
// began creating the pod's containers (a rejected pod goes to Failed
// without), a container of it started, or the eviction manager evicted
// it. The pressure lasts, so the kubelet may evict the pod once admitted,
// even before its container starts (a pod without stats yet ranks first):
// that is fine, a rejection at admission is not. (On the slow cgroup v2
// VM node such a pod once stayed in ContainerCreating for minutes, its
// kill timing out, on its way to neither end.)
func expectAdmittedUnderPressure(ctx context.Context, ns string, p *corev1.Pod) {
	_, err := f.CreatePod(ctx, ns, p)
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func(g Gomega) {
		got, err := f.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		if started(got) || creating(got) {
			return
		}
		if got.Status.Phase == corev1.PodFailed {
			if strings.HasPrefix(got.Status.Message, rejectedMessagePrefix) {
				StopTrying("the kubelet rejected a pod it had to admit: " + nodeharness.DescribePod(got)).Now()
			}
			g.Expect(got.Status.Reason).To(Equal(nodeharness.EvictedReason), nodeharness.DescribePod(got))
			g.Expect(got.Status.Message).To(HavePrefix(lowOnResourceMessageStart), nodeharness.DescribePod(got))
			return
		}
		g.Expect(started(got)).To(BeTrue(), nodeharness.DescribePod(got))
	}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
}

// creating reports whether the kubelet is creating a container of the pod
// (waiting with reason ContainerCreating), which it does only for a pod
// it admitted.
func creating(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodPending {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason == "ContainerCreating" {
			return true
		}
	}
	return false
}

// started reports whether a container of the pod ever ran.
func started(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil || (cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero()) {
			return true
		}
	}
	return false
}

var _ = Describe("Admission under memory pressure", Label("Eviction", "Admission", "Memory", "Serial"), func() {
	It("rejects BestEffort pods unless they tolerate the memory-pressure taint, and admits the others", func(ctx SpecContext) {
		ns := createNamespace(ctx, "admit-memory")
		holdPressure(ctx, ns, corev1.NodeMemoryPressure, nodeharness.MemoryHog("600Mi"), nil,
			func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 400*nodeharness.Mi),
				})
			})
		By("creating a BestEffort pod")
		expectRejected(ctx, ns, f.Pod("besteffort", []string{"sleep"}), corev1.NodeMemoryPressure)
		By("creating a BestEffort pod that tolerates node.kubernetes.io/memory-pressure")
		expectAdmittedUnderPressure(ctx, ns, f.Pod("besteffort-tolerating", []string{"sleep"},
			nodeharness.Tolerate(corev1.TaintNodeMemoryPressure)))
		By("creating a Burstable pod")
		expectAdmittedUnderPressure(ctx, ns, f.Pod("burstable", []string{"sleep"}, nodeharness.MemoryRequest("10Mi")))
		By("creating a Guaranteed pod")
		expectAdmittedUnderPressure(ctx, ns, f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("10m", "20Mi")))
	})
})

var _ = Describe("Admission under disk pressure", Label("Eviction", "Admission", "Disk", "Serial"), func() {
	It("rejects every pod that is not critical, and admits a critical one", func(ctx SpecContext) {
		pruneImages(ctx)
		ns := createNamespace(ctx, "admit-disk")
		holdPressure(ctx, ns, corev1.NodeDiskPressure, nodeharness.DiskHog("/scratch", "250Mi"), []nodeharness.PodOption{nodeharness.EmptyDir("/scratch", "", "")},
			func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 150*nodeharness.Mi),
				})
			})
		By("creating a BestEffort pod")
		expectRejected(ctx, ns, f.Pod("besteffort", []string{"sleep"}), corev1.NodeDiskPressure)
		By("creating a Guaranteed pod")
		expectRejected(ctx, ns, f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("10m", "20Mi")), corev1.NodeDiskPressure)
		By("creating a BestEffort pod that tolerates node.kubernetes.io/disk-pressure")
		expectRejected(ctx, ns, f.Pod("besteffort-tolerating", []string{"sleep"}, nodeharness.Tolerate(corev1.TaintNodeDiskPressure)),
			corev1.NodeDiskPressure)
		By("creating a system-node-critical pod")
		expectAdmittedUnderPressure(ctx, ns, f.Pod("critical", []string{"sleep"}, nodeharness.PriorityClass("system-node-critical")))
	})
})
