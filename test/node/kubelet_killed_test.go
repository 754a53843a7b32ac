package nodee2e

import (
	"context"
	"maps"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// resumedLine is what our kubelet logs for an eviction it finishes for a
// previous process (the eviction package's resumedMessage).
const resumedLine = "Eviction manager: resuming an eviction a previous kubelet process started"

var _ = Describe("kubelet killed mid-eviction", Label("Eviction", "Memory", "Faults", "ResumeAfterRestart", "Alpha", "Serial", "Slow"), func() {
	// A soft memory.available threshold 500 MiB below the start (10 s
	// grace, evictionMaxPodGracePeriod 60) and a Burstable hog of 800 MiB
	// that ignores SIGTERM and asks for 60 s to terminate, next to a
	// Guaranteed bystander. Once the hog's Evicted event is recorded, its
	// kill runs for 60 s; the spec kills the kubelet with SIGKILL then,
	// and systemd starts a new one, which still sees the pressure. With
	// EvictionResumeAfterRestart the new kubelet finishes the eviction the
	// old one started: the hog ends within its first 60 s (plus the
	// restart), with one Evicted event, one count in kubelet_evictions
	// across both processes, the bystander left and the condition
	// cleared. Upstream's kubelet knows nothing of the kill in progress
	// and evicts the hog again: a second Evicted event.
	It("finishes the eviction it had started, once", func(ctx SpecContext) {
		killedMidEviction(ctx, "kubelet-killed", nil, []string{"hog"}, func() []victim {
			// Burstable: a restarted kubelet admits its pods again, and
			// under MemoryPressure it would turn a BestEffort one away.
			return []victim{
				{order: 0, pod: f.Pod("bystander", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi"))},
				{order: 1, pod: f.Pod("hog", nodeharness.MemoryHog("800Mi"),
					nodeharness.MemoryRequest("100Mi"), nodeharness.GracePeriod(60))},
			}
		})
	})

	// The same with EvictionReclaimSized: three Burstable hogs of 500, 400
	// and 300 MiB, the last of high priority, hold their memory before the
	// threshold is set (the kubelet then ranks on figures that show them
	// all), so that the shortfall (about 700 MiB) takes the first two in
	// one pass and both kills run when the kubelet is killed; the third
	// stays (it is the bystander).
	It("finishes every kill of a reclaim-sized pass, once each", func(ctx SpecContext) {
		killedMidEviction(ctx, "kubelet-killed-sized", map[string]bool{"EvictionReclaimSized": true}, []string{"hog-a", "hog-b"}, func() []victim {
			hog := func(name, size string, opts ...nodeharness.PodOption) *corev1.Pod {
				return f.Pod(name, []string{"memory", "-size", size, "-rate", "100Mi"},
					append(opts, nodeharness.MemoryRequest("50Mi"), nodeharness.GracePeriod(60))...)
			}
			return []victim{
				{order: 0, pod: hog("hog-c", "300Mi", nodeharness.PriorityClass(nodeharness.HighPriority))},
				{order: 1, pod: hog("hog-a", "500Mi", nodeharness.PriorityClass(nodeharness.LowPriority))},
				{order: 1, pod: hog("hog-b", "400Mi", nodeharness.PriorityClass(nodeharness.LowPriority))},
			}
		})
	})
})

// killedMidEviction runs a spec of the kubelet killed during soft
// evictions' kills (a soft memory.available threshold 500 MiB below the
// start, 10 s grace, evictionMaxPodGracePeriod 60; pods that ignore
// SIGTERM and ask for 60 s) with EvictionResumeAfterRestart and gates on:
// every evicted pod must end within its first 60 s plus the restart, with
// one Evicted event, and the new kubelet must say it resumed the kills
// that ran when it was killed (checked after the events, so that
// upstream's kubelet, which evicts one pod per pass, fails the control
// for what it does wrong: a second Evicted event).
func killedMidEviction(ctx SpecContext, name string, gates map[string]bool, killOnceEvicted []string, pods func() []victim) {
	expectControlFailure("Evicted event")
	specStart := time.Now()
	all := map[string]bool{"EvictionResumeAfterRestart": true}
	maps.Copy(all, gates)
	runEviction(ctx, evictionSpec{
		name:         name,
		condition:    corev1.NodeMemoryPressure,
		signal:       "memory.available",
		resource:     "memory",
		offenders:    true,
		featureGates: all,
		configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
			c.EvictionSoft = map[string]string{"memory.available": nodeharness.Quantity(o.MemoryAvailable - 500*nodeharness.Mi)}
			c.EvictionSoftGracePeriod = map[string]string{"memory.available": (10 * time.Second).String()}
			c.EvictionMaxPodGracePeriod = 60
		},
		pods:                   pods,
		killKubeletOnceEvicted: killOnceEvicted,
		configureOnceHolding:   len(killOnceEvicted) > 1,
		checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
			evicted := decidedAt(ctx, p)
			took := t.failedSeen.Sub(evicted)
			GinkgoWriter.Printf("%s: Evicted event at %s, seen Failed %s later\n", p.Name, evicted.Format(time.TimeOnly), took.Round(time.Second))
			// 60 s of grace, the restart and the new kubelet's first
			// passes, the poll; a second kill would give 60 s more.
			Expect(took).To(BeNumerically("<", 100*time.Second), "%s ended %s after its Evicted event: its kill started over", p.Name, took.Round(time.Second))
		},
		afterEvictions: func(ctx SpecContext, ns string) {
			By("checking the new kubelet resumed every kill in flight")
			lines, err := f.KubeletJournal(ctx, specStart)
			Expect(err).NotTo(HaveOccurred())
			var resumed []string
			for _, l := range lines {
				if strings.Contains(l, resumedLine) {
					resumed = append(resumed, l)
				}
			}
			GinkgoWriter.Printf("resumed:\n%s\n", strings.Join(resumed, "\n"))
			for _, name := range killOnceEvicted {
				Expect(resumed).To(ContainElement(ContainSubstring(`pod="`+ns+"/"+name+`"`)),
					"the new kubelet did not resume the eviction of %s/%s", ns, name)
			}
		},
	})
}
