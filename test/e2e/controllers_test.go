package clustere2e

import (
	"context"
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// softGrace is how long the soft memory threshold must be met before the
// kubelet evicts: long enough for the node lifecycle controller to taint
// the node first, so the replacement pod cannot be placed back on it.
const softGrace = 30 * time.Second

var _ = Describe("Controllers and disruption budgets under node pressure", Label("Controllers", "Memory", "Serial"), func() {
	// A one-replica Deployment runs a memory hog on the pressured worker,
	// and a PodDisruptionBudget allows no disruption of it. The hog crosses
	// a soft memory threshold (grace 30 s): MemoryPressure, the taint, then
	// the eviction. The kubelet does not ask the eviction API, so the budget
	// does not stop it; the ReplicaSet replaces the pod, and the scheduler
	// puts the replacement on the spare worker. The evicted pod stays,
	// Failed with reason Evicted: the pod garbage collector only removes
	// terminated pods above its threshold (12500 by default).
	It("evicts a Deployment's pod despite a budget that allows no disruption, and the replacement runs on the other worker", func(ctx SpecContext) {
		configurePressured(ctx, func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
			c.EvictionSoft = map[string]string{"memory.available": nodeharness.Quantity(o.MemoryAvailable - 400*nodeharness.Mi)}
			c.EvictionSoftGracePeriod = map[string]string{"memory.available": softGrace.String()}
			c.EvictionMaxPodGracePeriod = 0
		})

		ns := createNamespace(ctx, "controllers")
		labels := map[string]string{"app": "hog"}

		By("creating a budget that allows no disruption")
		_, err := pressured.Client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "hog"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(1)),
				Selector:     &metav1.LabelSelector{MatchLabels: labels},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("creating the Deployment on the pressured worker (the spare one tainted for a moment)")
		var first *corev1.Pod
		withNodeTainted(ctx, spare, func() {
			tmpl := pressured.Pod("hog", nodeharness.MemoryHog("600Mi"), nodeharness.Scheduled(), nodeharness.GracePeriod(1))
			maps.Copy(tmpl.Labels, labels)
			tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
			_, err := pressured.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "hog"},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec},
				},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			Eventually(ctx, func(g Gomega) {
				pods, err := pressured.Pods(ctx, ns)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pods).To(HaveLen(1))
				g.Expect(pods[0].Spec.NodeName).To(Equal(pressured.Node))
				first = &pods[0]
			}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())
		})

		By("checking the budget allows no disruption while the pod is healthy")
		Eventually(ctx, func(g Gomega) {
			pdb, err := pressured.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "hog", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pdb.Status.CurrentHealthy).To(BeEquivalentTo(1))
			g.Expect(pdb.Status.DisruptionsAllowed).To(BeEquivalentTo(0))
		}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())

		By("waiting for MemoryPressure and its taint, then the eviction")
		Eventually(ctx, func(g Gomega) {
			n, err := pressured.GetNode(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nodeharness.HasCondition(n, corev1.NodeMemoryPressure)).To(BeTrue(), "no MemoryPressure yet")
			g.Expect(nodeharness.HasTaint(n, corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)).To(BeTrue(), "no taint yet")
		}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())
		Eventually(ctx, func(g Gomega) {
			p := getPod(ctx, g, ns, first.Name)
			g.Expect(nodeharness.CheckEvictedStatus(p)).To(Succeed())
		}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())

		By("waiting for the replacement to run on the spare worker")
		Eventually(ctx, func(g Gomega) {
			pods, err := pressured.Pods(ctx, ns)
			g.Expect(err).NotTo(HaveOccurred())
			var running []string
			for i := range pods {
				p := &pods[i]
				if p.Name == first.Name {
					continue
				}
				// A replacement must never be placed on the tainted worker.
				g.Expect(p.Spec.NodeName).NotTo(Equal(pressured.Node), "replacement %s placed on the pressured worker", p.Name)
				if nodeharness.IsRunning(p) && p.Spec.NodeName == spare.Node {
					running = append(running, p.Name)
				}
			}
			g.Expect(running).To(HaveLen(1), "running replacements on %s", spare.Node)
		}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())

		By("waiting for the pressure to clear")
		Eventually(ctx, pressured.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())

		By("checking the evicted pod object is still there, Failed and Evicted")
		p := getPod(ctx, Default, ns, first.Name)
		Expect(nodeharness.CheckEvictedStatus(p)).To(Succeed())
	})
})

// e2eTaint is the taint a spec puts on a node to keep the scheduler away
// from it for a moment.
const e2eTaint = "evictkit.dev/e2e-hold"

// withNodeTainted runs fn while w's node has e2eTaint (NoSchedule). The
// taint is removed when fn returns, and in any case when the spec ends.
func withNodeTainted(ctx context.Context, w *nodeharness.Framework, fn func()) {
	set := func(ctx context.Context, on bool) error {
		n, err := w.GetNode(ctx)
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != e2eTaint {
				taints = append(taints, t)
			}
		}
		if on {
			taints = append(taints, corev1.Taint{Key: e2eTaint, Effect: corev1.TaintEffectNoSchedule})
		}
		n.Spec.Taints = taints
		_, err = w.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	}
	DeferCleanup(func(ctx SpecContext) {
		Eventually(ctx, set).WithArguments(false).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())
	}, NodeTimeout(2*time.Minute))
	Eventually(ctx, set).WithArguments(true).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())
	fn()
	Eventually(ctx, set).WithArguments(false).WithTimeout(time.Minute).WithPolling(suite.Poll).Should(Succeed())
}
