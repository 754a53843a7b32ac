package nodee2e

import (
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

var _ = Describe("PID pressure with priority ordering", Label("Eviction", "PID", "Serial"), func() {
	// Pressure once there are 3000 more tasks on the machine than when the
	// spec started (pid.available counts every task of the kernel); each
	// hog alone starts 4500 threads (over 10 processes, as the kubelet
	// ranks equal priorities by process count), so both go: the
	// low-priority one first, then the default-priority one. The
	// high-priority idle pod stays.
	It("evicts the low-priority hog, then the default-priority hog, and never the idle pod", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "pid-priority",
			condition: corev1.NodePIDPressure,
			signal:    "pid.available",
			resource:  "pids",
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"pid.available": nodeharness.Quantity(o.PIDAvailable - 3000),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 1, pod: f.Pod("low-hog", nodeharness.ThreadHog("4500"), nodeharness.PriorityClass(nodeharness.LowPriority))},
					{order: 2, pod: f.Pod("default-hog", nodeharness.ThreadHog("4500"))},
					{order: 0, pod: f.Pod("idle", []string{"sleep"}, nodeharness.PriorityClass(nodeharness.HighPriority))},
				}
			},
		})
	})
})
