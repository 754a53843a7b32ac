package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// useImagefsNode runs the spec on the node with a dedicated image
// filesystem (-imagefs-node) and checks that it has one.
func useImagefsNode(ctx context.Context) {
	Expect(imagefsNode).NotTo(BeEmpty(), "this spec needs a node with a dedicated image filesystem: -imagefs-node (IMAGEFS_NODE)")
	By("switching to " + imagefsNode + ", the node with a dedicated image filesystem")
	useNode(ctx, imagefsNode)
	dedicated, err := f.DedicatedImageFs(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(dedicated).To(BeTrue(), "node %s has %s and %s on one filesystem; give it a dedicated one (label evictkit.dev/imagefs-size in the kind config)",
		imagefsNode, nodeharness.NodeFsDir, nodeharness.ImageFsDir)
}

var _ = Describe("Dedicated image filesystem pressure", Label("Eviction", "Disk", "ImageFs", "Serial"), func() {
	// The node's containerd, and with it every container's writable
	// layer, has a filesystem of its own. Pressure once containers write
	// 200 MiB more to it than it had free when the spec started; the hog
	// writes 350 MiB into its container's root filesystem. The kubelet
	// must see imagefs.available, not nodefs, and evict the writer; the
	// idle pod stays.
	BeforeEach(func(ctx SpecContext) { useImagefsNode(ctx) }, NodeTimeout(5*time.Minute))

	It("evicts the pod filling its container's writable layer and leaves the idle pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "imagefs",
			condition: corev1.NodeDiskPressure,
			signal:    "imagefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"imagefs.available": nodeharness.Quantity(o.ImageFsAvailable - 200*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("rootfs-hog", nodeharness.DiskHog("/var/fill", "350Mi"))},
					{order: 0, pod: idleDiskPod()},
				}
			},
		})
	})
})
