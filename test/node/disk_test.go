package nodee2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// pruneImages leaves the node only images in use, pinned, or the addons',
// so that the kubelet's image garbage collection, which runs before any
// disk eviction, has nothing to free: the pressure then lasts until the
// kubelet evicts.
func pruneImages(ctx context.Context) {
	By("pruning unused images on the node")
	removed, err := f.PruneImages(ctx)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("pruned images: %v\n", removed)
	waitFsStatsCurrent(ctx)
}

// waitFsStatsCurrent waits until the kubelet's nodefs.available and
// imagefs.available show what the filesystems have free: thresholds set
// from an older figure (one from before images were removed, say) would be
// off by hundreds of MiB.
func waitFsStatsCurrent(ctx context.Context) {
	By("waiting for the kubelet's filesystem figures to catch up with the filesystems")
	Eventually(ctx, f.FsStatsCurrent).WithTimeout(2 * time.Minute).WithPolling(suite.Poll).Should(Succeed())
}

// waitStorageShown waits until the Summary API shows a pod using at least
// bytes of ephemeral storage (its per-pod disk figures are refreshed about
// once a minute), and stops the spec if the pod ended first.
func waitStorageShown(ctx context.Context, ns, pod string, bytes int64) {
	mib := bytes / nodeharness.Mi
	By(fmt.Sprintf("waiting until the Summary API shows %s's %d MiB", pod, mib))
	Eventually(ctx, func(g Gomega) {
		stopIfEnded(ctx, g, ns, pod, fmt.Sprintf("it was shown at %d MiB", mib))
		got, ok, err := f.PodEphemeralStorage(ctx, ns, pod)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok && got >= bytes).To(BeTrue(), "the Summary API shows %s at %d MiB (reported: %v)", pod, got/nodeharness.Mi, ok)
	}).WithTimeout(3 * time.Minute).WithPolling(suite.Poll).Should(Succeed())
}

// idleDiskPod writes nothing and requests 10Mi of ephemeral storage, which
// it stays under: the kubelet ranks pods over their request first, so the
// idle pod comes after every writer even while the kubelet's volume usage
// figures (refreshed about once a minute) still show the writers near zero.
func idleDiskPod(opts ...nodeharness.PodOption) *corev1.Pod {
	return f.Pod("idle", []string{"sleep"}, append([]nodeharness.PodOption{
		nodeharness.EmptyDir("/scratch", "", ""), nodeharness.EphemeralStorage("10Mi", ""),
	}, opts...)...)
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
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 200*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("disk-hog", nodeharness.DiskHog("/scratch", "350Mi"), nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: idleDiskPod()},
				}
			},
		})
	})
})

var _ = Describe("Inode pressure", Label("Eviction", "Disk", "Serial"), func() {
	// Pressure once pods create 3000 more inodes on the node's filesystem
	// than it had free when the spec started; the hog creates 5000 empty
	// files in an emptyDir. Inodes have no requests, so the idle pod's
	// higher priority is what ranks it after the hog (the kubelet's inode
	// counts of volumes trail by about a minute).
	It("evicts the pod creating files and leaves the idle pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "inodes",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.inodesFree",
			resource:  "inodes",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.inodesFree": nodeharness.Quantity(o.NodeFsInodesFree - 3000),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("inode-hog", []string{"inodes", "-dir", "/scratch", "-count", "5000", "-rate", "300"},
						nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: f.Pod("idle", []string{"sleep"}, nodeharness.EmptyDir("/scratch", "", ""),
						nodeharness.PriorityClass(nodeharness.HighPriority))},
				}
			},
		})
	})
})

var _ = Describe("Node filesystem pressure with priority ordering", Label("Eviction", "Disk", "Serial"), func() {
	// Pressure once pods write 150 MiB more than at the start; each hog
	// alone writes 250 MiB, so both go: the low-priority one first, then
	// the default-priority one. The high-priority idle pod stays.
	It("evicts the low-priority hog, then the default-priority hog, and never the idle pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "nodefs-priority",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 150*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("low-hog", nodeharness.DiskHog("/scratch", "250Mi"),
						nodeharness.PriorityClass(nodeharness.LowPriority), nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 2, pod: f.Pod("default-hog", nodeharness.DiskHog("/scratch", "250Mi"), nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: idleDiskPod(nodeharness.PriorityClass(nodeharness.HighPriority))},
				}
			},
		})
	})
})

var _ = Describe("Minimum reclaim", Label("Eviction", "Disk", "Serial"), func() {
	// Pressure once pods write 300 MiB more than at the start; the hogs
	// write 200 MiB (low priority) and 150 MiB (default priority). Evicting
	// the first brings the node back over the threshold, but a 200 MiB
	// minimum reclaim keeps the threshold met until at most 100 MiB stay
	// written: the second hog must go too. The idle pod stays.
	It("keeps evicting until the threshold plus the minimum reclaim is reached", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "min-reclaim",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 300*nodeharness.Mi),
				})
				c.EvictionMinimumReclaim = map[string]string{"nodefs.available": "200Mi"}
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("low-hog", nodeharness.DiskHog("/scratch", "200Mi"),
						nodeharness.PriorityClass(nodeharness.LowPriority), nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 2, pod: f.Pod("default-hog", nodeharness.DiskHog("/scratch", "150Mi"), nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: idleDiskPod(nodeharness.PriorityClass(nodeharness.HighPriority))},
				}
			},
		})
	})
})
