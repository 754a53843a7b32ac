package nodee2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/test/node/framework"
)

var _ = Describe("Image garbage collection under disk pressure", Label("Eviction", "Disk", "ImageGC", "Serial"), func() {
	// The node gets an unused 128 MiB image and a threshold 40 MiB above
	// what it has free: DiskPressure at once. Removing unused images, which
	// the kubelet does before it evicts anyone, frees more than that, so
	// the pressure goes without an eviction.
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
				ballast, err = f.LoadBallast(ctx, 128*mi)
				Expect(err).NotTo(HaveOccurred())
			},
			configure: func(c *kubeletconfig.KubeletConfiguration, o framework.Observations) {
				c.EvictionHard = framework.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": quantity(o.NodeFsAvailable + 40*mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("idle", []string{"sleep"}, framework.EmptyDir("/scratch", "", ""))},
				}
			},
			afterEvictions: func(ctx SpecContext, _ string) {
				By("waiting for the kubelet to remove the ballast image")
				Eventually(ctx, func() bool { return f.HasImage(ctx, ballast) }).
					WithTimeout(pressureTimeout).WithPolling(poll).Should(BeFalse())
			},
		})
	})
})
