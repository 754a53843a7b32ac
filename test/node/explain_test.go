package nodee2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// decisionRe is the grammar of the decision clause that ends an Evicted
// event's message with EvictionExplain (pkg/kubelet/eviction/explain.go).
var decisionRe = regexp.MustCompile(`Decision: signal=(\S+) observed=(\S+) threshold=(\S+) rank=(\d+)/(\d+) rule=(\S+) runnerUp=(\S+)(?: runnerUpRank=(\d+))?$`)

// decision is a parsed decision clause.
type decision struct {
	signal              string
	observed, threshold resource.Quantity
	rank, total         int
	rule, runnerUp      string
	runnerUpRank        int
}

// parseDecision parses the decision clause at the end of an event message.
func parseDecision(message string) (decision, bool) {
	m := decisionRe.FindStringSubmatch(message)
	if m == nil {
		return decision{}, false
	}
	var d decision
	var err error
	d.signal, d.rule, d.runnerUp = m[1], m[6], m[7]
	if d.observed, err = resource.ParseQuantity(m[2]); err != nil {
		return decision{}, false
	}
	if d.threshold, err = resource.ParseQuantity(m[3]); err != nil {
		return decision{}, false
	}
	d.rank, _ = strconv.Atoi(m[4])
	d.total, _ = strconv.Atoi(m[5])
	if m[8] != "" {
		d.runnerUpRank, _ = strconv.Atoi(m[8])
	}
	return d, true
}

var _ = Describe("Explained decisions", Label("Eviction", "Memory", "Explain", "Alpha", "Serial"), func() {
	// A BestEffort hog takes 700 MiB and holds it; then pressure is set
	// for once the pods use 400 MiB more than before they started, so the
	// kubelet's first look has the hog's whole usage in its stats (a pod
	// that started a second ago may still show a working set of 0). The
	// hog is above its (zero) request, the Guaranteed pod within its own,
	// and every other pod on the node is critical, with a higher priority:
	// the hog ranks first, and the first rule that put it ahead of the
	// Guaranteed pod, the runner-up, is exceeds-request.
	It("ends the Evicted event with the signal, observed value, threshold, rank, rule and runner-up", func(ctx SpecContext) {
		expectControlFailure("has no decision clause")
		start := time.Now()
		var ns string
		runEviction(ctx, evictionSpec{
			name:                 "explain",
			condition:            corev1.NodeMemoryPressure,
			signal:               "memory.available",
			resource:             "memory",
			offenders:            true,
			featureGates:         map[string]bool{"EvictionExplain": true},
			configureOnceHolding: true,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 400*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				// The Guaranteed pod first, in the kubelet's stats before the
				// hog starts (a pod without stats ranks first).
				return []victim{
					{order: 0, pod: f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")), shownBeforeNext: 1},
					{order: 1, pod: f.Pod("hog", []string{"memory", "-size", "700Mi", "-rate", "100Mi"},
						nodeharness.Tolerate("node.kubernetes.io/memory-pressure"))},
				}
			},
			checkEvicted: func(ctx context.Context, p *corev1.Pod, _ evictionTiming) {
				ns = p.Namespace
				ev := expectOneEvictedEvent(ctx, p)
				GinkgoWriter.Printf("Evicted event: %s\n", ev.Message)
				d, ok := parseDecision(ev.Message)
				Expect(ok).To(BeTrue(), "the Evicted event has no decision clause: %q", ev.Message)
				Expect(d.signal).To(Equal("memory.available"))
				Expect(d.observed.Cmp(d.threshold)).To(Equal(-1), "observed %s is not below the threshold %s", &d.observed, &d.threshold)
				Expect(d.rank).To(Equal(1), "the hog's rank")
				Expect(d.total).To(BeNumerically(">=", 2), "pods ranked")
				Expect(d.rule).To(Equal("exceeds-request"))
				Expect(d.runnerUp).To(Equal(ns + "/guaranteed"))
				Expect(d.runnerUpRank).To(BeNumerically(">", 1))
				Expect(ev.Message).To(HavePrefix(strings.TrimSpace(p.Status.Message)), "the event does not start with the status message")
				Expect(p.Status.Message).NotTo(ContainSubstring("Decision:"), "the status message must stay upstream's")
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				By("checking the kubelet logged the decision with the ranked pods")
				lines, err := f.KubeletJournal(ctx, start)
				Expect(err).NotTo(HaveOccurred())
				Expect(lines).To(ContainElement(SatisfyAll(
					ContainSubstring(`"Eviction manager: decision"`),
					ContainSubstring(`"pod":"`+ns+`/hog","victim":true`),
					ContainSubstring(`"pod":"`+ns+`/guaranteed"`),
				)), "no decision log line ranking %s/hog first as the victim", ns)
			},
		})
	})
})
