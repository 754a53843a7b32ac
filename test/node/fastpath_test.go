package nodee2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/workloadlog"
)

// The specs of issue 7's alpha eviction behaviour, each with its feature
// gate on (label FastPath). Every spec of an alpha gate is also labelled
// Alpha: upstream's kubelet has no such gates, so scripts/test-node.sh
// leaves them out with KUBELET=upstream.

var _ = Describe("Reclaim-sized eviction", Label("Eviction", "Memory", "FastPath", "ReclaimSized", "Alpha", "Serial"), func() {
	// Three BestEffort hogs of 350, 300 and 250 MiB hold their memory
	// before the threshold is set: pressure once the pods use 400 MiB more
	// than before they started, so the kubelet first looks at a shortfall
	// of about 500 MiB. The largest hog alone is 150 MiB short of it, the
	// two largest together 150 MiB over: with EvictionReclaimSized both go
	// in the same pass, and the third, which the pressure no longer calls
	// for, stays.
	It("evicts in one pass the two largest hogs the shortfall takes, and not the third", func(ctx SpecContext) {
		// Upstream's kubelet evicts them one pass apart: the second kill
		// comes after the first pod is cleaned up, seconds later.
		expectControlFailure("not in one pass")
		start := time.Now()
		sigterm := map[string]time.Time{}
		runEviction(ctx, evictionSpec{
			name:                 "reclaim-sized",
			condition:            corev1.NodeMemoryPressure,
			signal:               "memory.available",
			resource:             "memory",
			offenders:            true,
			featureGates:         map[string]bool{"EvictionReclaimSized": true},
			configureOnceHolding: true,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 400*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				// The kubelet restarts with the pressure already there; should
				// it re-admit the running pods after reporting MemoryPressure,
				// BestEffort pods must tolerate the taint to stay.
				hog := func(name, size string) *corev1.Pod {
					return f.Pod(name, []string{"memory", "-size", size, "-rate", "100Mi"},
						nodeharness.Tolerate("node.kubernetes.io/memory-pressure"))
				}
				return []victim{
					{order: 1, followLog: true, pod: hog("hog-a", "350Mi")},
					{order: 1, followLog: true, pod: hog("hog-b", "300Mi")},
					{order: 0, pod: hog("hog-c", "250Mi")},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				_, sigterm[p.Name] = sigtermTaken(t.log, p.Name)
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				By("checking both hogs got their SIGTERM together, by their own clocks")
				apart := sigterm["hog-a"].Sub(sigterm["hog-b"]).Abs()
				GinkgoWriter.Printf("hog-a SIGTERM at %s, hog-b at %s: %s apart\n", sigterm["hog-a"].Format(time.StampMicro), sigterm["hog-b"].Format(time.StampMicro), apart)
				Expect(apart).To(BeNumerically("<", 500*time.Millisecond), "hog-a and hog-b got their SIGTERM %s apart: not in one pass", apart)

				By("checking the kubelet sized the pass to the shortfall")
				lines, err := f.KubeletJournal(ctx, start)
				Expect(err).NotTo(HaveOccurred())
				var sized []string
				for _, l := range lines {
					if strings.Contains(l, "victims sized to the shortfall") {
						sized = append(sized, l)
					}
				}
				GinkgoWriter.Printf("sizing decisions:\n%s\n", strings.Join(sized, "\n"))
				Expect(sized).To(ContainElement(And(
					ContainSubstring(ns+"/hog-a"), ContainSubstring(ns+"/hog-b"), Not(ContainSubstring(ns+"/hog-c")),
					ContainSubstring("covered=true"))), "no single pass chose exactly hog-a and hog-b")
				a, b := disruptionTime(ctx, ns, "hog-a"), disruptionTime(ctx, ns, "hog-b")
				Expect(a.Sub(b).Abs()).To(BeNumerically("<=", time.Second),
					"hog-a was marked for eviction at %s, hog-b at %s: not one pass", a, b)
			},
		})
	})
})

var _ = Describe("Fast path", Label("Eviction", "Memory", "FastPath", "Alpha", "Serial"), func() {
	// Pressure once the pods use 600 MiB more than when the spec started;
	// a BestEffort hog grows at 400 MiB/s towards 2000 MiB. The monitoring
	// loop alone looks every 10 s at stats up to 10 s old: the hog would
	// mostly be at its full size by then. With EvictionFastPath the
	// watcher sees the crossing within 50 ms and the fast pass decides at
	// once: the fresh memory.available it decided on is less than 120 MiB
	// (300 ms of the hog's growth) below the threshold. The kill itself
	// then goes through the kubelet's pod worker (at most half a second
	// here, for either kubelet): by its own count the hog gets the SIGTERM
	// before it has taken 920 MiB (600 + 300 ms and 500 ms of growth).
	// Measured: ours 580 MiB; upstream, whose cgroup v1 threshold notifier
	// wakes it but which decides on cached stats, 1224 MiB in a control run.
	It("decides within 300 ms of the crossing, on fresh cgroup figures, and evicts a fast-growing hog", func(ctx SpecContext) {
		// Upstream's kubelet looks every 10 s: the hog, by its own count,
		// has taken far more by the time its kill starts.
		expectControlFailure("when the kill started")
		start := time.Now()
		const margin, rate, bound = 600, 400, 920 // MiB, MiB/s, MiB
		const lagBound = 120 * nodeharness.Mi
		runEviction(ctx, evictionSpec{
			name:         "fast-path",
			condition:    corev1.NodeMemoryPressure,
			signal:       "memory.available",
			resource:     "memory",
			offenders:    true,
			featureGates: map[string]bool{"EvictionFastPath": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - margin*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				// The Guaranteed pod first, in the kubelet's stats before the
				// hog starts (a pod without stats ranks first).
				return []victim{
					{order: 0, pod: f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")), shownBeforeNext: 1},
					{order: 1, followLog: true, pod: f.Pod("fast-hog", []string{"memory", "-size", "2000Mi", "-rate", fmt.Sprintf("%dMi", rate)})},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, t evictionTiming) {
				taken, at := sigtermTaken(t.log, p.Name)
				GinkgoWriter.Printf("%s: the kill started at %s with %d MiB taken (pressure from about %d MiB)\n",
					p.Name, at.Format(time.RFC3339Nano), taken, margin)
				Expect(taken).To(BeNumerically("<", bound), "the hog had taken %d MiB when the kill started", taken)
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				lines, err := f.KubeletJournal(ctx, start)
				Expect(err).NotTo(HaveOccurred())
				Expect(lines).To(ContainElement(ContainSubstring("Eviction manager: fast path on")), "the kubelet did not start the fast path")
				var pass string
				for _, l := range lines {
					if strings.Contains(l, `"Eviction manager: fast path"`) && strings.Contains(l, "memory cgroup watcher") {
						pass = l
						break
					}
				}
				Expect(pass).NotTo(BeEmpty(), "no fast pass of the memory cgroup watcher")
				m := fastPassRe.FindStringSubmatch(pass)
				Expect(m).NotTo(BeNil(), "fast pass line %q", pass)
				available, _ := strconv.ParseInt(m[1], 10, 64)
				threshold, _ := strconv.ParseInt(m[2], 10, 64)
				lag := threshold - available
				GinkgoWriter.Printf("fast pass %d MiB below the threshold: about %d ms after the crossing at %d MiB/s\n",
					lag/nodeharness.Mi, lag*1000/(rate*nodeharness.Mi), rate)
				Expect(lag).To(BeNumerically("<", lagBound), "the fast pass decided %d MiB past the threshold", lag/nodeharness.Mi)
			},
		})
	})
})

// fastPassRe matches the fresh memory.available and the threshold in the
// kubelet's log line of a fast pass.
var fastPassRe = regexp.MustCompile(`available=(\d+) threshold="hard memory\.available<(\d+)"`)

// sigtermTaken returns how many MiB a hog had taken when it got the first
// SIGTERM, and when (by the hog's clock), from its log.
func sigtermTaken(lines []nodeharness.LogLine, pod string) (int64, time.Time) {
	s, ok := workloadlog.FirstSigterm(nodeharness.Texts(lines))
	if !ok {
		Fail(fmt.Sprintf("pod %s never logged a SIGTERM (%d lines)", pod, len(lines)))
	}
	n, ok := s.TakenMiB()
	Expect(ok).To(BeTrue(), "pod %s logged its SIGTERM with %q taken, not a figure in MiB", pod, s.Taken)
	return n, s.At
}

// disruptionTime is when the kubelet marked a pod for eviction (its
// DisruptionTarget condition).
func disruptionTime(ctx context.Context, ns, name string) time.Time {
	p, err := f.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.LastTransitionTime.Time
		}
	}
	Fail("pod " + name + " has no DisruptionTarget condition: " + nodeharness.DescribePod(p))
	return time.Time{}
}
