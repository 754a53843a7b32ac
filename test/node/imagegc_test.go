package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/test/node/framework"
)

// ballastSize is the unused image that pushes the node into disk
// pressure. Its layer is random data: containerd keeps it twice (the
// compressed blob and the unpacked snapshot), about 2 × ballastSize.
const ballastSize = 128 * mi

var _ = Describe("Image garbage collection under disk pressure", Label("Eviction", "Disk", "ImageGC", "Serial"), func() {
	// The threshold sits 64 MiB below what the node has free, with a
	// running pod. Then an unused image of 128 MiB arrives (a pull, as far
	// as the kubelet can tell): DiskPressure. Removing unused images,
	// which the kubelet does before it evicts anyone, frees it all again,
	// so the pressure goes without an eviction.
	//
	// The kubelet only removes images it has known for imageMinimumGCAge
	// (2 min by default), counted from its restart with the spec's
	// configuration; the spec sets 1 s so that the image it loads can be
	// removed in the next eviction cycle rather than the pod evicted.
	It("relieves the pressure by removing unused images, with no eviction", func(ctx SpecContext) {
		var ballast string
		runEviction(ctx, evictionSpec{
			name:      "image-gc",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o framework.Observations) {
				c.ImageMinimumGCAge = metav1.Duration{Duration: time.Second}
				c.EvictionHard = framework.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": quantity(o.NodeFsAvailable - 64*mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("idle", []string{"sleep"}, framework.EmptyDir("/scratch", "", ""))},
				}
			},
			induce: func(ctx context.Context) {
				By("loading an unused ballast image into the node")
				var err error
				ballast, err = f.LoadBallast(ctx, ballastSize)
				Expect(err).NotTo(HaveOccurred())
			},
			afterEvictions: func(ctx SpecContext, _ string) {
				By("waiting for the kubelet to remove the ballast image")
				Eventually(ctx, func() bool { return f.HasImage(ctx, ballast) }).
					WithTimeout(pressureTimeout).WithPolling(poll).Should(BeFalse())
			},
		})
	})
})
