package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// ballastSize is the unused image that pushes the node into disk
// pressure. Its layer is random data: containerd keeps it twice (the
// compressed blob and the unpacked snapshot), about 2 × ballastSize.
const ballastSize = 128 * nodeharness.Mi

var _ = Describe("Image garbage collection under disk pressure", Label("Eviction", "Disk", "ImageGC", "Serial"), func() {
	// An unused image of 128 MiB sits on the node (a pull, as far as the
	// kubelet can tell) when the thresholds are set 64 MiB below what the
	// node then has free. A pod writes 128 MiB: DiskPressure. Removing
	// unused images, which the kubelet does before it evicts anyone, frees
	// twice what the pod wrote, so the pressure goes without an eviction.
	//
	// The kubelet only removes images it has known for imageMinimumGCAge
	// (2 min by default; the spec sets 1 s), counted from when it first
	// listed them. It lists images when it starts, every 5 minutes, and in
	// the eviction cycle that finds pressure. So the image is loaded before
	// the kubelet restarts with the spec's configuration: an image first
	// listed in the cycle that finds the pressure is too young to remove
	// in that cycle, and the kubelet would evict the pod instead.
	It("relieves the pressure by removing unused images, with no eviction", func(ctx SpecContext) {
		var ballast string
		runEviction(ctx, evictionSpec{
			name:      "image-gc",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare: func(ctx context.Context) {
				pruneImages(ctx)
				By("loading an unused ballast image into the node")
				var err error
				ballast, err = f.LoadBallast(ctx, ballastSize)
				Expect(err).NotTo(HaveOccurred())
				waitFsStatsCurrent(ctx)
			},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.ImageMinimumGCAge = metav1.Duration{Duration: time.Second}
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
				By("waiting for the kubelet to remove the ballast image")
				Eventually(ctx, func() bool { return f.HasImage(ctx, ballast) }).
					WithTimeout(time.Minute).WithPolling(suite.Poll).Should(BeFalse(), "the kubelet did not remove %s", ballast)
			},
		})
	})
})
