package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("Soft grace timer", Label("Eviction", "Disk", "Soft", "SoftGraceTimer", "Alpha", "Serial"), func() {
	// A soft nodefs threshold 200 MiB below the start with a 15 s grace
	// period, the kubelet logging its passes (verbosity 3). The grace
	// starts at the first pass that observes nodefs.available below the
	// threshold, read from the kubelet's own observation lines; with
	// EvictionSoftGraceTimer the pass that acts comes within a second of
	// its end. Upstream's acts at the first 10 s monitoring pass after
	// it: 5 s late when a 15 s grace starts on a pass.
	It("acts within a second of the soft grace period's expiry", func(ctx SpecContext) {
		expectControlFailure("after the grace period expired")
		const grace = 15 * time.Second
		start := time.Now()
		var threshold int64
		runEviction(ctx, evictionSpec{
			name:         "soft-grace-timer",
			condition:    corev1.NodeDiskPressure,
			signal:       "nodefs.available",
			resource:     "ephemeral-storage",
			prepare:      pruneImages,
			featureGates: map[string]bool{"EvictionSoftGraceTimer": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				softNodeFs(grace, 5)(c, o)
				threshold = o.NodeFsAvailable - 200*nodeharness.Mi
				c.Logging.Verbosity = logsapi.VerbosityLevel(3)
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: softDiskHog(5)},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, _ evictionTiming) {
				met, err := f.FirstObservedBelow(ctx, start, "nodefs.available", threshold)
				Expect(err).NotTo(HaveOccurred())
				all, err := f.ReclaimAttempts(ctx, met)
				Expect(err).NotTo(HaveOccurred())
				var acted time.Time
				for _, at := range all {
					if at.After(met) {
						acted = at
						break
					}
				}
				Expect(acted.IsZero()).To(BeFalse(), "no pass acted on the threshold after it was first observed met at %s", met.Format(time.StampMicro))
				late := acted.Sub(met.Add(grace))
				GinkgoWriter.Printf("first observed below the threshold at %s, first acted at %s: %s after the grace period expired\n",
					met.Format(time.StampMicro), acted.Format(time.StampMicro), late)
				Expect(late).To(BeNumerically(">=", 0), "acted %s before the grace period expired", -late)
				Expect(late).To(BeNumerically("<=", time.Second), "acted %s after the grace period expired", late)
			},
		})
	})
})
