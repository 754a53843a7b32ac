package nodee2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("API server unreachable under pressure", Label("Eviction", "Memory", "Faults", "Serial"), func() {
	// A rule in the node's own network namespace drops the kubelet's
	// packets to the API server; then a hog starts to grow past a hard
	// memory.available threshold 600 MiB below the start, next to a
	// Guaranteed bystander. The kubelet must evict the hog on its own
	// (its log says so while the API server still shows the pod running),
	// and once the rule is gone the pod's status (Failed, Evicted,
	// DisruptionTarget), its one Evicted event and one count in
	// kubelet_evictions must reach the API server; the bystander stays,
	// the node stays Ready and the kubelet never restarts. The cut lasts
	// only until the eviction, well under the node's 40 s lease.
	It("evicts on its own while cut off, and reports the eviction once when the link is back", func(ctx SpecContext) {
		By("waiting until the node has no pressure condition")
		Eventually(ctx, f.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())
		obs, err := f.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		threshold := obs.MemoryAvailable - 600*nodeharness.Mi
		setKubeletConfig(ctx, nil, func(c *kubeletconfig.KubeletConfiguration) {
			c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"memory.available": nodeharness.Quantity(threshold)})
		})
		baseline := takeKubeletBaseline(ctx)

		start := newNodeSignal("faults-start")
		ns := createNamespace(ctx, "api-cut")
		By("creating a hog that waits for its start and a Guaranteed bystander")
		for _, p := range []*corev1.Pod{
			f.Pod("hog", []string{"memory", "-size", "1000Mi", "-rate", "100Mi", "-after", start.path()}, signalMount),
			f.Pod("bystander", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi")),
		} {
			_, err := f.CreatePod(ctx, ns, p)
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(ctx, func(g Gomega) {
			pods, err := f.Pods(ctx, ns)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods).To(HaveLen(2))
			for i := range pods {
				g.Expect(nodeharness.IsRunning(&pods[i])).To(BeTrue(), nodeharness.DescribePod(&pods[i]))
			}
		}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())

		By("cutting the node off the API server")
		host, port, err := f.KubeletAPIServer(ctx)
		Expect(err).NotTo(HaveOccurred())
		cutAt := time.Now()
		restore := cutAPIServer(ctx, port, "evictkit-fault-"+time.Now().UTC().Format("20060102T150405"))
		DeferCleanup(func(ctx SpecContext) { restore(ctx) }, NodeTimeout(time.Minute))
		for _, family := range []string{"ahostsv4", "ahostsv6"} {
			out, err := f.Exec(ctx, "getent", family, host)
			if err != nil {
				continue // no address of this family
			}
			addr := strings.Fields(out)[0]
			_, err = f.Exec(ctx, "timeout", "3", "bash", "-c", "exec 3<>/dev/tcp/"+addr+"/"+port)
			Expect(err).To(HaveOccurred(), "the node still reaches the API server at %s port %s", addr, port)
		}

		By("starting the hog")
		start.give(ctx)
		key := ns + "/hog"
		Eventually(ctx, func(g Gomega) {
			times, err := f.EvictionTimes(ctx, cutAt)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(times).To(HaveKey(key), "the kubelet has not logged an eviction of %s", key)
			g.Expect(times).NotTo(HaveKey(ns+"/bystander"), "the kubelet evicted the bystander")
		}).WithTimeout(30 * time.Second).WithPolling(suite.Poll).Should(Succeed())
		evictedAt := time.Now()
		hog, err := f.Client.CoreV1().Pods(ns).Get(ctx, "hog", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(hog.Status.Phase).NotTo(Equal(corev1.PodFailed),
			"the API server has the eviction while the node was cut off: the cut did not hold (%s)", nodeharness.DescribePod(hog))
		GinkgoWriter.Printf("the kubelet evicted %s %s after the cut; the API server still shows %s\n",
			key, evictedAt.Sub(cutAt).Round(time.Millisecond), nodeharness.DescribePod(hog))

		By("restoring the link")
		restore(ctx)
		restoredAt := time.Now()
		Eventually(ctx, func(g Gomega) {
			p, err := f.Client.CoreV1().Pods(ns).Get(ctx, "hog", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed), nodeharness.DescribePod(p))
			hog = p
		}).WithTimeout(2 * time.Minute).WithPolling(suite.Poll).Should(Succeed())
		GinkgoWriter.Printf("the API server has the hog Failed %s after the link came back\n", time.Since(restoredAt).Round(time.Second))
		expectEvicted(ctx, hog, evictionSpec{resource: "memory", offenders: true}, false)

		By("checking the bystander runs and the node is Ready")
		bystander, err := f.Client.CoreV1().Pods(ns).Get(ctx, "bystander", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(bystander).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(bystander))
		Eventually(ctx, func(g Gomega) {
			n, err := f.GetNode(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nodeharness.IsReady(n)).To(BeTrue(), "node %s is not Ready", f.Node)
		}).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())
		baseline.expectSince(ctx, "memory.available", map[string]int{"memory.available": 1})
	})
})

var _ = Describe("containerd restarted under pressure", Label("Eviction", "Memory", "Faults", "Serial"), func() {
	// A hog grows at 50 MiB/s past a hard memory.available threshold 600
	// MiB below the start, next to a Guaranteed bystander; once it has
	// started to grow, the node's containerd is restarted (the containers
	// run on in their shims). The kubelet must get its runtime back and
	// evict the hog, once: one Evicted event, one count in
	// kubelet_evictions, the bystander left, the kubelet never restarted
	// (runEviction's checks).
	It("evicts once although containerd restarts while the hog grows", func(ctx SpecContext) {
		runEviction(ctx, evictionSpec{
			name:      "containerd-restart",
			condition: corev1.NodeMemoryPressure,
			signal:    "memory.available",
			resource:  "memory",
			offenders: true,
			configure: func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
					"memory.available": nodeharness.Quantity(o.MemoryAvailable - 600*nodeharness.Mi),
				})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("bystander", []string{"sleep"}, nodeharness.Guaranteed("50m", "50Mi"))},
					{order: 1, pod: f.Pod("hog", []string{"memory", "-size", "1000Mi", "-rate", "50Mi"})},
				}
			},
			whilePressureBuilds: func(ctx SpecContext, ns string) {
				By("waiting until the hog grows")
				Eventually(ctx, func(g Gomega) {
					stopIfEnded(ctx, g, ns, "hog", "it started to grow")
					lines, err := f.ContainerLog(ctx, ns, "hog")
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(lines).To(ContainElement(HaveField("Text", HavePrefix("memory: "))), "the hog has not logged its growth")
				}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
				restartContainerd(ctx)
			},
		})
	})
})

var _ = Describe("Disk really full", Label("Eviction", "Disk", "Faults", "Serial"), func() {
	// On the node with the small dedicated filesystem (1536 MiB for nodefs
	// and images), a writer writes 100 MiB into an emptyDir and pauses
	// until the Summary API shows that much of its use, then fills the
	// filesystem at 200 MiB/s with more than it holds, and holds what it
	// wrote once the kernel says ENOSPC; a bystander waits. The filesystem
	// reaches 100 % before either kubelet's 10 s loop can act (the
	// writer's own log must say it ran out of room, or the spec proves
	// nothing). The kubelet must keep running, evict the writer (its
	// emptyDir goes with it) and the node recover on its own: DiskPressure
	// clears, a new pod is admitted, the bystander still runs, the kubelet
	// never restarted (runEviction's checks). The pause is there because
	// both kubelets rank disk users on per-pod figures that can be a minute
	// old: a writer that had never been measured once ranked below the
	// bystander's 4 KiB and the bystander was evicted first (issue 25 item
	// 2, a fast disk path with fresh per-pod figures, is about that).
	It("evicts a writer that filled nodefs to the last byte, and the node recovers", func(ctx SpecContext) {
		resume := newNodeSignal("disk-full-resume")
		runEviction(ctx, evictionSpec{
			name:      "disk-full",
			condition: corev1.NodeDiskPressure,
			signal:    "nodefs.available",
			resource:  "ephemeral-storage",
			prepare:   pruneImages,
			configure: func(c *kubeletconfig.KubeletConfiguration, _ nodeharness.Observations) {
				// imagefs.available (15 % by default) set alike: the images
				// share nodefs's filesystem here, and a filesystem filled to
				// the last byte meets both thresholds in one pass.
				c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{"nodefs.available": "10%", "imagefs.available": "10%"})
			},
			pods: func() []victim {
				return []victim{
					{order: 0, pod: f.Pod("bystander", []string{"sleep"})},
					{order: 1, followLog: true, pod: f.Pod("writer",
						[]string{"disk", "-dir", "/scratch", "-size", "2Gi", "-rate", "200Mi", "-pause-at", "100Mi", "-resume", resume.path()},
						nodeharness.EmptyDir("/scratch", "", ""), signalMount)},
				}
			},
			whilePressureBuilds: func(ctx SpecContext, ns string) {
				waitStorageShown(ctx, ns, "writer", 100*nodeharness.Mi)
				By("letting the writer fill the filesystem")
				resume.give(ctx)
			},
			checkEvicted: func(_ context.Context, p *corev1.Pod, t evictionTiming) {
				Expect(nodeharness.Texts(t.log)).To(ContainElement(MatchRegexp(`^disk: stopped at \d+ MiB of 2048 MiB \(no more room\)$`)),
					"the writer never ran out of room: the filesystem was not full, the spec shows nothing; its log: %v", nodeharness.Texts(t.log))
			},
		})
	})
})

// restartContainerd restarts the node's containerd and waits until it is
// active again with a new process.
func restartContainerd(ctx context.Context) {
	By("restarting the node's containerd")
	pid := func() string {
		out, err := f.Exec(ctx, "systemctl", "show", "-p", "MainPID", "--value", "containerd")
		Expect(err).NotTo(HaveOccurred())
		return strings.TrimSpace(out)
	}
	was := pid()
	_, err := f.Exec(ctx, "systemctl", "restart", "containerd")
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func(g Gomega) {
		out, err := f.Exec(ctx, "systemctl", "is-active", "containerd")
		g.Expect(err).NotTo(HaveOccurred(), "containerd: %s", out)
		now := pid()
		g.Expect(now).NotTo(Or(Equal(was), Equal("0")), "containerd's process is still %s", was)
	}).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())
	GinkgoWriter.Printf("containerd restarted (process %s before)\n", was)
}

// cutAPIServer adds rules to the node's OUTPUT chains, IPv4 and IPv6 (in
// the node's own network namespace), that drop every packet to the API
// server's port (kind's API server is another node's container, so the
// rules have no effect outside this node; kind's network has both
// families, and the node's resolver prefers IPv6 while the kubelet's
// connection is IPv4), and returns what removes them: safe to call more
// than once.
func cutAPIServer(ctx context.Context, port, comment string) func(context.Context) {
	rule := []string{"OUTPUT", "-p", "tcp", "--dport", port, "-m", "comment", "--comment", comment, "-j", "DROP"}
	tools := []string{"iptables", "ip6tables"}
	for _, tool := range tools {
		_, err := f.Exec(ctx, append([]string{tool, "-w", "-I"}, rule...)...)
		Expect(err).NotTo(HaveOccurred())
	}
	return func(ctx context.Context) {
		for _, tool := range tools {
			for {
				if _, err := f.Exec(ctx, append([]string{tool, "-w", "-C"}, rule...)...); err != nil {
					if !strings.Contains(err.Error(), "exit status 1") {
						Fail(fmt.Sprintf("%s: checking the rule %q: %v", tool, comment, err))
					}
					break
				}
				_, err := f.Exec(ctx, append([]string{tool, "-w", "-D"}, rule...)...)
				Expect(err).NotTo(HaveOccurred())
			}
		}
	}
}
