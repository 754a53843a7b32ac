package nodee2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("Local storage isolation", Label("Eviction", "Disk", "LocalStorage", "Serial"), func() {
	// No threshold is involved: each over-limit pod goes for its own
	// limit, with no node condition; in-limit pods stay, and so does a pod
	// writing past the size limit of its memory-backed emptyDir: the
	// kubelet mounts that tmpfs at the limit, so the kernel stops the
	// writes there (ENOSPC) and the usage never exceeds the limit. (The
	// kubelet's own exemption of memory-backed emptyDirs, under the alpha
	// gate InPlacePodVerticalScalingMemoryBackedVolumes, cannot show: the
	// kernel's bound comes first.)
	It("evicts pods over their emptyDir, container (sidecar too) and pod limits, and leaves in-limit pods and one written past its memory-backed emptyDir's limit", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:    "local-storage",
			prepare: pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, _ nodeharness.Observations) {
				c.LocalStorageCapacityIsolation = ptr.To(true)
			},
			pods: func() []victim {
				return []victim{
					{order: 1, limit: &limitEviction{"emptydirfs.limit", `Usage of EmptyDir volume "scratch" exceeds the limit "100Mi"`},
						pod: f.Pod("emptydir-over", nodeharness.DiskHog("/scratch", "130Mi"), nodeharness.EmptyDir("/scratch", "", "100Mi"))},
					// The second container's limit keeps the pod's total
					// (300Mi) above its usage: the container's own limit
					// is what is exceeded.
					{order: 1, limit: &limitEviction{"ephemeralcontainerfs.limit", `Container container-over exceeded its local ephemeral storage limit "100Mi"`},
						pod: f.Pod("container-over", nodeharness.DiskHog("/var/fill", "130Mi"), nodeharness.EphemeralStorage("", "100Mi"),
							f.ExtraContainer("roomy", []string{"sleep"}, "200Mi"))},
					// A sidecar (restartable init container) over its own
					// limit, with the pod's total (300Mi) above the usage:
					// kubernetes#138371, fixed in v1.37 (#138462).
					{order: 1, limit: &limitEviction{"ephemeralcontainerfs.limit", `Container sidecar-over exceeded its local ephemeral storage limit "100Mi"`},
						pod: f.Pod("sidecar-main", []string{"sleep"}, nodeharness.EphemeralStorage("", "200Mi"),
							f.Sidecar("sidecar-over", nodeharness.DiskHog("/var/fill", "130Mi"), "100Mi"))},
					// An emptyDir without a size limit counts toward the
					// pod's total only.
					{order: 1, limit: &limitEviction{"ephemeralpodfs.limit", "Pod ephemeral local storage usage exceeds the total limit of containers 100Mi"},
						pod: f.Pod("pod-over", nodeharness.DiskHog("/scratch", "130Mi"), nodeharness.EphemeralStorage("", "100Mi"), nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 0, pod: f.Pod("emptydir-within", nodeharness.DiskHog("/scratch", "50Mi"), nodeharness.EmptyDir("/scratch", "", "100Mi"))},
					{order: 0, pod: f.Pod("memory-emptydir", nodeharness.DiskHog("/scratch", "150Mi"), nodeharness.EmptyDir("/scratch", corev1.StorageMediumMemory, "100Mi"))},
					{order: 0, pod: f.Pod("container-within", nodeharness.DiskHog("/var/fill", "40Mi"), nodeharness.EphemeralStorage("", "100Mi"))},
				}
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				By("checking the memory-backed emptyDir's writer was stopped at its limit, by the kernel")
				lines, err := f.ContainerLog(ctx, ns, "memory-emptydir")
				Expect(err).NotTo(HaveOccurred())
				Expect(lines).To(ContainElement(HaveField("Text", MatchRegexp(`^disk: stopped at \d+ MiB of 150 MiB \(no more room\)$`))),
					"the pod writing 150Mi into its 100Mi memory-backed emptyDir was not stopped for want of room: %v", lines)
			},
		})
	})
})
