package nodee2e

import (
	"context"
	"regexp"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/workloadlog"
)

var _ = Describe("Hard eviction without grace", Label("Eviction", "Memory", "KillWithoutGrace", "Alpha", "Serial"), func() {
	// Pressure once the pods use 500 MiB more than when the spec started;
	// a BestEffort hog that survives SIGTERM grows at 100 MiB/s towards
	// 800 MiB. Upstream's kubelet asks for a hard eviction's 1 s, which
	// its runtime manager raises to 2 s: the runtime sends SIGTERM, which
	// the hog logs, and SIGKILLs 2 s later while the hog keeps growing.
	// With EvictionKillWithoutGrace the kubelet asks the runtime to stop
	// the container with a timeout of 0 (its log says so at verbosity 2),
	// and the runtime SIGKILLs at once: the hog never sees a SIGTERM.
	It("stops the hard eviction's victim with SIGKILL at once: no SIGTERM, stop timeout 0", func(ctx SpecContext) {
		// Upstream's kubelet asks for 2 s and the hog logs its SIGTERM.
		expectControlFailure("got a SIGTERM|gracePeriod=2")
		start := time.Now()
		runEviction(ctx, evictionSpec{
			name:         "kill-without-grace",
			condition:    corev1.NodeMemoryPressure,
			signal:       "memory.available",
			resource:     "memory",
			offenders:    true,
			featureGates: map[string]bool{"EvictionKillWithoutGrace": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.Logging.Verbosity = logsapi.VerbosityLevel(2)
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 500*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				// The Guaranteed pod first, in the kubelet's stats before the
				// hog starts (a pod without stats ranks first).
				return []victim{
					{order: 0, pod: f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")), shownBeforeNext: 1},
					{order: 1, followLog: true, pod: f.Pod("hog", []string{"memory", "-size", "800Mi", "-rate", "100Mi"})},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				if s, ok := workloadlog.FirstSigterm(nodeharness.Texts(t.log)); ok {
					Fail("pod " + p.Name + " got a SIGTERM at " + s.At.Format(time.RFC3339Nano) + " with " + s.Taken + " taken: the kubelet gave it a grace period")
				}
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				lines, err := f.KubeletJournal(ctx, start)
				Expect(err).NotTo(HaveOccurred())
				graces := stopGracePeriods(lines, ns+"/hog")
				GinkgoWriter.Printf("the kubelet stopped hog's containers with grace periods %v\n", graces)
				Expect(graces).NotTo(BeEmpty(), "the kubelet's journal has no \"Killing container with a grace period\" line for %s/hog (verbosity 2)", ns)
				for _, g := range graces {
					Expect(g).To(BeZero(), "the kubelet stopped a container of %s/hog with gracePeriod=%d", ns, g)
				}
			},
		})
	})
})

// killingContainer matches the runtime manager's line (verbosity 2) on the
// timeout it stops a container with.
var killingContainer = regexp.MustCompile(`"Killing container with a grace period" pod="([^"]+)".* gracePeriod=(-?[0-9]+)`)

// stopGracePeriods are the timeouts, in seconds, the kubelet's runtime
// manager stopped a pod's containers with, in the journal's order.
func stopGracePeriods(lines []string, pod string) []int64 {
	var out []int64
	for _, l := range lines {
		m := killingContainer.FindStringSubmatch(l)
		if m == nil || m[1] != pod {
			continue
		}
		g, err := strconv.ParseInt(m[2], 10, 64)
		Expect(err).NotTo(HaveOccurred(), "grace period in %q", l)
		out = append(out, g)
	}
	return out
}
