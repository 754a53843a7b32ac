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

// softNodeFs sets a soft nodefs.available threshold 200 MiB below what the
// node has, with the given grace and maximum pod grace periods.
func softNodeFs(grace time.Duration, maxPodGrace int32) func(*kubeletconfig.KubeletConfiguration, nodeharness.Observations) {
	return func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
		c.EvictionSoft = map[string]string{"nodefs.available": nodeharness.Quantity(o.NodeFsAvailable - 200*nodeharness.Mi)}
		c.EvictionSoftGracePeriod = map[string]string{"nodefs.available": grace.String()}
		c.EvictionMaxPodGracePeriod = maxPodGrace
	}
}

// softDiskHog is the disk hog of the soft threshold specs: 350 MiB into
// an emptyDir, ignoring SIGTERM, asking for grace seconds to terminate.
func softDiskHog(grace int64) *corev1.Pod {
	return f.Pod("disk-hog", nodeharness.DiskHog("/scratch", "350Mi"),
		nodeharness.EmptyDir("/scratch", "", ""), nodeharness.GracePeriod(grace))
}

// decidedAt is when the kubelet decided to evict the pod: its one Evicted
// event.
func decidedAt(ctx context.Context, p *corev1.Pod) time.Time {
	events, err := f.PodEvents(ctx, p.Namespace, p.Name, nodeharness.EvictedReason)
	Expect(err).NotTo(HaveOccurred())
	Expect(events).To(HaveLen(1))
	if t := events[0].FirstTimestamp.Time; !t.IsZero() {
		return t
	}
	return events[0].EventTime.Time
}

var _ = Describe("Soft eviction with grace periods", Label("Eviction", "Disk", "Soft", "Serial", "Slow"), func() {
	// A soft threshold 200 MiB below the start with a 1m grace period and
	// a 30 s maximum pod grace period; the hog ignores SIGTERM and asks
	// for 60 s to terminate. The kubelet must wait out the grace period
	// after the condition appears, then give the pod 30 s, not 60.
	It("evicts only after the soft grace period, with at most the maximum pod grace period", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "soft-grace",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: softNodeFs(time.Minute, 30),
			pods: func() []victim {
				return []victim{
					{order: 1, pod: softDiskHog(60)},
					{order: 0, pod: idleDiskPod()},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				decided := decidedAt(ctx, p)
				// The condition is posted with the node status (every
				// 10 s), so it may trail the first observation by that.
				Expect(decided.Sub(t.pressureSince)).To(BeNumerically(">=", 45*time.Second),
					"evicted %s after DiskPressure appeared; the soft grace period is 1m", decided.Sub(t.pressureSince))
				ended := t.failedSeen.Sub(decided)
				Expect(ended).To(And(BeNumerically(">=", 25*time.Second), BeNumerically("<", 50*time.Second)),
					"the pod ended %s after its eviction; the maximum pod grace period is 30s (its own: 60s)", ended)
			},
		})
	})

	// The same with a 60 s maximum pod grace period and a hog that asks
	// for only 5 s: the kubelet must not give it more.
	It("does not lengthen a pod's shorter terminationGracePeriodSeconds", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "soft-short-grace",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: softNodeFs(10*time.Second, 60),
			pods: func() []victim {
				return []victim{
					{order: 1, pod: softDiskHog(5)},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				ended := t.failedSeen.Sub(decidedAt(ctx, p))
				Expect(ended).To(And(BeNumerically(">=", 3*time.Second), BeNumerically("<", 25*time.Second)),
					"the pod ended %s after its eviction; its terminationGracePeriodSeconds is 5", ended)
			},
		})
	})
})
