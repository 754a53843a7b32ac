package nodee2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("Nodefs reclaim with a dedicated image filesystem", Label("Eviction", "Disk", "ImageFs", "NodeFsReclaim", "Alpha", "Serial"), func() {
	// On the node whose containerd has a filesystem of its own, five pods
	// have each logged 50 MiB and exited: 250 MiB of dead containers' logs
	// on nodefs. The threshold is set 64 MiB below what nodefs then has
	// free, and a pod writes 128 MiB into an emptyDir. With
	// EvictionNodeFsReclaim the kubelet removes the dead containers, and
	// their logs with them, and the pressure goes without an eviction.
	// Upstream's has no nodefs reclaim in this layout (kubernetes#129616)
	// and evicts the writer.
	BeforeEach(func(ctx SpecContext) { useImagefsNode(ctx) }, NodeTimeout(5*time.Minute))

	It("removes dead containers and their logs before evicting anyone", func(ctx SpecContext) {
		expectControlFailure("the kubelet removed no dead container")
		var logsNs string
		runEviction(ctx, evictionSpec{
			name:         "nodefs-reclaim",
			condition:    corev1.NodeDiskPressure,
			signal:       "nodefs.available",
			resource:     "ephemeral-storage",
			featureGates: map[string]bool{"EvictionNodeFsReclaim": true},
			prepare: func(ctx context.Context) {
				logsNs = deadContainersWithLogs(ctx, 5, "50Mi")
				waitFsStatsCurrent(ctx)
			},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 64*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("writer", nodeharness.DiskHog("/scratch", "128Mi"), nodeharness.EmptyDir("/scratch", "", ""))},
				}
			},
			afterEvictions: func(ctx SpecContext, _ string) {
				By("checking the dead containers' logs are gone from the node")
				Eventually(ctx, func() (int64, error) { return podLogBytes(ctx, logsNs) }).
					WithTimeout(time.Minute).WithPolling(suite.Poll).Should(BeNumerically("<", nodeharness.Mi),
					"the dead containers' logs are still on the node: the kubelet removed no dead container")
			},
		})
	})
})

// deadContainersWithLogs runs n pods that each log size and exit, in a
// namespace of their own (removed when the spec ends), and waits until all
// have succeeded and their logs are on the node. It returns the namespace.
func deadContainersWithLogs(ctx context.Context, n int, size string) string {
	By(fmt.Sprintf("running %d pods that each log %s and exit", n, size))
	ns, err := f.CreateNamespace(ctx, "dead-logs")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(f.DeleteNamespace(ctx, ns)).To(Succeed())
	}, NodeTimeout(5*time.Minute))
	for i := range n {
		_, err := f.CreatePod(ctx, ns, f.Pod(fmt.Sprintf("chatter-%d", i), nodeharness.Chatter(size)))
		Expect(err).NotTo(HaveOccurred())
	}
	Eventually(ctx, func(g Gomega) {
		pods, err := f.Pods(ctx, ns)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods).To(HaveLen(n))
		for i := range pods {
			p := &pods[i]
			if p.Status.Phase == corev1.PodFailed {
				StopTrying("a chatter pod failed: " + nodeharness.DescribePod(p)).Now()
			}
			g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), "pod %s: %s", p.Name, nodeharness.DescribePod(p))
		}
	}).WithTimeout(3 * time.Minute).WithPolling(suite.Poll).Should(Succeed())
	q := resource.MustParse(size)
	want := int64(n) * q.Value()
	got, err := podLogBytes(ctx, ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(got).To(BeNumerically(">=", want*9/10), "the pods' logs take %d bytes on the node; they wrote %d", got, want)
	return ns
}

// podLogBytes is the size of the log files the node keeps for the pods of
// namespace ns (under the kubelet's pod log directory, on nodefs).
func podLogBytes(ctx context.Context, ns string) (int64, error) {
	out, err := f.Exec(ctx, "find", "/var/log/pods", "-path", "/var/log/pods/"+ns+"_*", "-type", "f", "-printf", "%s\n")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, l := range strings.Fields(out) {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("find printed %q for a file size", l)
		}
		total += n
	}
	return total, nil
}
