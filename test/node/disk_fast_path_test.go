package nodee2e

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// diskFastPathLine is what our kubelet logs when the disk fast path acts
// (the eviction package's diskFastPass).
const diskFastPathLine = `"Eviction manager: disk fast path"`

var _ = Describe("Disk fast path", Label("Eviction", "Disk", "DiskFastPath", "Alpha", "Serial"), func() {
	// On the node with the small dedicated filesystem (1536 MiB for nodefs
	// and images), hard nodefs.available and imagefs.available thresholds
	// of 300 MiB. A bystander has written 32 MiB into its emptyDir, and
	// the Summary API shows them; then a writer starts filling its own
	// emptyDir at up to 200 MiB/s with more than the filesystem holds,
	// and stops at its SIGTERM (a writer that ignores it would write on
	// for the kill's grace period, whatever the kubelet does): 300 MiB of
	// headroom last it a second or two, a fraction of the kubelet's 10 s
	// monitoring interval, and the kubelet's volume figures (refreshed
	// about once a minute) still show the writer at a megabyte or so when
	// it crosses. With EvictionDiskFastPath the kubelet sees the crossing
	// within 50 ms by statfs, measures the pods' volumes and logs, and
	// evicts the writer before the filesystem is full: the writer never
	// logs that it ran out of room, the bystander stays, and the kubelet
	// says the disk fast path acted. Upstream's kubelet acts at its next
	// pass, after the filesystem has filled, and on figures that may rank
	// the bystander first.
	It("evicts a fast writer before the filesystem is full, ranked on fresh figures", func(ctx SpecContext) {
		expectControlFailure(`ran out of room|must never be evicted failed: bystander|disk fast path never acted`)
		start := newNodeSignal("disk-fast-path-start")
		since := time.Now()
		runEviction(ctx, evictionSpec{
			name:         "disk-fast-path",
			condition:    corev1.NodeDiskPressure,
			signal:       "nodefs.available",
			resource:     "ephemeral-storage",
			featureGates: map[string]bool{"EvictionDiskFastPath": true},
			prepare:      pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				Expect(o.NodeFsAvailable).To(BeNumerically(">", 700*nodeharness.Mi),
					"nodefs has %d MiB free: too little for a writer to cross 300 MiB at speed", o.NodeFsAvailable/nodeharness.Mi)
				// imagefs.available set alike: the images share nodefs's
				// filesystem here, and its default (15 %) is above 300 MiB.
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"nodefs.available": "300Mi", "imagefs.available": "300Mi"})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("bystander", []string{"disk", "-dir", "/scratch", "-size", "32Mi", "-rate", "32Mi"},
						nodeharness.EmptyDir("/scratch", "", ""))},
					{order: 1, followLog: true, pod: f.Pod("writer",
						[]string{"disk", "-dir", "/scratch", "-size", "2Gi", "-rate", "200Mi", "-pause-at", "1Mi", "-resume", start.path(), "-freeze-on-term"},
						nodeharness.EmptyDir("/scratch", "", ""), signalMount)},
				}
			},
			whilePressureBuilds: func(ctx SpecContext, ns string) {
				waitStorageShown(ctx, ns, "bystander", 32*nodeharness.Mi)
				By("letting the writer fill its emptyDir at 200 MiB/s")
				start.give(ctx)
			},
			checkEvicted: func(_ context.Context, p *corev1.Pod, t evictionTiming) {
				Expect(nodeharness.Texts(t.log)).NotTo(ContainElement(ContainSubstring("(no more room)")),
					"the writer ran out of room: the filesystem filled before the eviction; its log: %v", nodeharness.Texts(t.log))
			},
			afterEvictions: func(ctx SpecContext, _ string) {
				By("checking the kubelet's disk fast path acted")
				journal, err := f.KubeletJournal(ctx, since)
				Expect(err).NotTo(HaveOccurred())
				var acted []string
				for _, l := range journal {
					if strings.Contains(l, diskFastPathLine) {
						acted = append(acted, l)
					}
				}
				Expect(acted).NotTo(BeEmpty(), "the disk fast path never acted: the eviction came from a monitoring pass")
				GinkgoWriter.Printf("disk fast path: %s\n", acted[0])
			},
		})
	})
})
