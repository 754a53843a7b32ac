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

var _ = Describe("cgroup v2 memory notifier", Label("Eviction", "Memory", "Notifier", "CgroupV2", "Alpha", "Serial"), func() {
	// On cgroup v2 upstream's kubelet has no memory notifier: it looks at
	// memory once per 10 s monitoring interval. With
	// EvictionCgroupV2Notifier the kernel's changes of the pods' cgroup
	// memory.events wake a pass at once.
	//
	// As in the allocatable spec, kubeReserved leaves the pods 700 MiB
	// more than they use now (the kubepods cgroup's memory.max), and
	// pressure on allocatableMemory.available comes once their working
	// set is 400 MiB larger. A BestEffort pod first writes 450 MiB of
	// files (page cache, charged to the pods' cgroup but not to their
	// working set), as the page cache of a busy node fills its memory.
	// Then a BestEffort hog grows at 20 MiB/s to 550 MiB: from about
	// 250 MiB on, each of its charges meets kubepods' memory.max, the
	// kernel reclaims the page cache and counts a "max" event in
	// memory.events, so notifications keep coming while the hog crosses
	// the threshold at 400 MiB. The pass one of them wakes evicts the hog,
	// and the kubelet says so; the writer and the Guaranteed pod stay.
	// Measured on the VM node: notifications (memory.events, and PSI
	// triggers on the node and the pods' cgroup) from about 8 s before the
	// eviction, a pass every 0.3-0.6 s. The monitoring loop waits for the
	// same lock as those passes, behind the notifier already waiting: it
	// could take the first pass after the crossing only by arriving when
	// none waits.
	It("evicts on a pass woken by the pods' cgroup memory.events, not by the monitoring loop", func(ctx SpecContext) {
		// Without the gate only the monitoring loop evicts.
		expectControlFailure("not evicted by a pass a notification woke")
		expectCgroupV2(ctx)
		start := time.Now()
		runEviction(ctx, evictionSpec{
			name:         "v2-notifier",
			condition:    corev1.NodeMemoryPressure,
			signal:       "allocatableMemory.available",
			resource:     "memory",
			offenders:    true,
			featureGates: map[string]bool{"EvictionCgroupV2Notifier": true},
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.KernelMemcgNotification = true
				allocatableRoom(c, o, 700*nodeharness.Mi, "300Mi")
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("guaranteed", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")), shownBeforeNext: 1},
					{order: 0, pod: f.Pod("page-cache", []string{"disk", "-dir", "/scratch", "-size", "450Mi", "-rate", "100Mi"},
						nodeharness.EmptyDir("/scratch", corev1.StorageMediumDefault, "")), holdingBeforeNext: true},
					{order: 1, pod: f.Pod("besteffort-hog", []string{"memory", "-size", "550Mi", "-rate", "20Mi"})},
				}
			},
			afterEvictions: func(ctx SpecContext, ns string) {
				lines, err := f.KubeletJournal(ctx, start)
				Expect(err).NotTo(HaveOccurred())
				var armed, notified, evicted []string
				for _, l := range lines {
					switch {
					case strings.Contains(l, "cgroup v2 memory notifier armed"):
						armed = append(armed, l)
					case strings.Contains(l, "notified:") && strings.Contains(l, "memory.events changed"):
						notified = append(notified, l)
					case strings.Contains(l, "pods evicted by the pass a notification woke"):
						evicted = append(evicted, l)
					}
				}
				GinkgoWriter.Printf("%d notifier(s) armed, %d notifications of memory.events; first: %s\n", len(armed), len(notified), first(notified))
				Expect(evicted).To(ContainElement(ContainSubstring(ns+"/besteffort-hog")),
					"the hog was not evicted by a pass a notification woke (%d notifications of memory.events)", len(notified))
			},
		})
	})
})

// expectCgroupV2 fails the spec unless the node under test runs on the
// unified cgroup hierarchy (make test-node V2=1).
func expectCgroupV2(ctx context.Context) {
	v2, err := f.CgroupV2(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(v2).To(BeTrue(), "node %s is not on cgroup v2: run this spec with V2=1 (the cgroup v2 VM node)", f.Node)
}

// first is the first of lines, or "none".
func first(lines []string) string {
	if len(lines) == 0 {
		return "none"
	}
	return lines[0]
}
