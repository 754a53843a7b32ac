package nodee2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/test/node/framework"
)

// diskHog writes size into dir at 20 MiB/s, then holds.
func diskHog(dir, size string) []string {
	return []string{"disk", "-dir", dir, "-size", size, "-rate", "20Mi"}
}

// pruneImages leaves the node only images in use, pinned, or the addons',
// so that the kubelet's image garbage collection, which runs before any
// disk eviction, has nothing to free: the pressure then lasts until the
// kubelet evicts.
func pruneImages(ctx context.Context) {
	By("pruning unused images on the node")
	removed, err := f.PruneImages(ctx)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("pruned images: %v\n", removed)
}

var _ = Describe("Node filesystem pressure", Label("Eviction", "Disk", "Serial", "Smoke"), func() {
	// Pressure once pods write 200 MiB more to the node's filesystem than
	// it had when the spec started. The hog writes 350 MiB into an
	// emptyDir; the pod next to it writes nothing and stays.
	It("evicts the pod filling its emptyDir and leaves the idle pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "nodefs",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o framework.Observations) {
				c.EvictionHard = framework.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": quantity(o.NodeFsAvailable - 200*mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("disk-hog", diskHog("/scratch", "350Mi"), framework.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: f.Pod("idle", []string{"sleep"}, framework.EmptyDir("/scratch", "", ""))},
				}
			},
		})
	})
})

var _ = Describe("Inode pressure", Label("Eviction", "Disk", "Serial"), func() {
	// Pressure once pods create 3000 more inodes on the node's filesystem
	// than it had free when the spec started; the hog creates 5000 empty
	// files in an emptyDir.
	It("evicts the pod creating files and leaves the idle pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "inodes",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.inodesFree",
			resource:  "inodes",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o framework.Observations) {
				c.EvictionHard = framework.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.inodesFree": quantity(o.NodeFsInodesFree - 3000),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("inode-hog", []string{"inodes", "-dir", "/scratch", "-count", "5000", "-rate", "300"},
						framework.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: f.Pod("idle", []string{"sleep"}, framework.EmptyDir("/scratch", "", ""))},
				}
			},
		})
	})
})
