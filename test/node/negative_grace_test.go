package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

var _ = Describe("Negative evictionMaxPodGracePeriod", Label("Eviction", "Disk", "Soft", "NegativeMaxPodGrace", "Alpha", "Serial", "Slow"), func() {
	// A soft nodefs threshold 200 MiB below the start with a 10 s grace
	// period and evictionMaxPodGracePeriod -1; the hog ignores SIGTERM and
	// asks for 40 s to terminate. With EvictionNegativeMaxPodGraceDefers
	// the kubelet gives it those 40 s; upstream's passes -1 on as the
	// grace period and the pod is killed at once.
	It("gives a soft eviction's pod its own terminationGracePeriodSeconds", func(ctx SpecContext) {
		expectControlFailure("killed at once")
		runEviction(ctx, evictionSpec{
			name:         "negative-max-grace",
			condition:    corev1.NodeDiskPressure,
			signal:       "nodefs.available",
			resource:     "ephemeral-storage",
			prepare:      pruneImages,
			featureGates: map[string]bool{"EvictionNegativeMaxPodGraceDefers": true},
			configure:    softNodeFs(10*time.Second, -1),
			pods: func() []victim {
				return []victim{
					{order: 1, pod: softDiskHog(40)},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				ended := t.failedSeen.Sub(decidedAt(ctx, p))
				Expect(ended).To(BeNumerically(">=", 30*time.Second),
					"the pod ended %s after its eviction: killed at once, though its terminationGracePeriodSeconds is 40 and evictionMaxPodGracePeriod -1", ended)
				Expect(ended).To(BeNumerically("<", 60*time.Second),
					"the pod ended %s after its eviction; its terminationGracePeriodSeconds is 40", ended)
			},
		})
	})
})
