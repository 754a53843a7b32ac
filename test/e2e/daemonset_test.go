package clustere2e

import (
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

var _ = Describe("DaemonSet pods under node pressure", Label("Controllers", "DaemonSet", "Memory", "Serial"), func() {
	// Upstream's behaviour, asserted: a DaemonSet's pod is an ordinary
	// victim for the kubelet (not critical unless its priority says so).
	// Under lasting pressure the kubelet evicts it; the DaemonSet
	// controller deletes the failed pod and creates another for the same
	// node, which tolerates the memory-pressure taint (the controller adds
	// that toleration), so the scheduler places it there and the kubelet
	// admits it even though it is BestEffort; while the pressure lasts it
	// may be evicted again, with the controller's backoff between. Once the
	// pressure is over, the node's daemon pod runs and stays. The spare
	// worker's daemon pod is never touched.
	It("evicts the daemon pod, the controller replaces it on the same node, and it runs once the pressure is over", func(ctx SpecContext) {
		configurePressured(ctx, func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
			c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, memoryHold.threshold(o))
		})

		ns := createNamespace(ctx, "daemonset")
		labels := map[string]string{"app": "daemon"}
		By("creating a DaemonSet of idle BestEffort pods on both workers")
		tmpl := pressured.Pod("daemon", []string{"sleep"}, nodeharness.Scheduled(), nodeharness.GracePeriod(1))
		maps.Copy(tmpl.Labels, labels)
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
		tmpl.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{pressured.Node, spare.Node},
				}},
			}}},
		}}
		_, err := pressured.Client.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "daemon"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		daemons := map[string]*corev1.Pod{} // by node
		Eventually(ctx, func(g Gomega) {
			pods, err := pressured.Pods(ctx, ns)
			g.Expect(err).NotTo(HaveOccurred())
			clear(daemons)
			for i := range pods {
				if nodeharness.IsRunning(&pods[i]) {
					daemons[pods[i].Spec.NodeName] = &pods[i]
				}
			}
			g.Expect(daemons).To(HaveKey(pressured.Node))
			g.Expect(daemons).To(HaveKey(spare.Node))
		}).WithTimeout(scheduleTimeout).WithPolling(suite.Poll).Should(Succeed())
		first, onSpare := daemons[pressured.Node], daemons[spare.Node]
		Expect(first.Spec.Tolerations).To(ContainElement(SatisfyAll(
			HaveField("Key", corev1.TaintNodeMemoryPressure),
			HaveField("Effect", corev1.TaintEffectNoSchedule),
		)), "the DaemonSet controller did not add the memory-pressure toleration")

		By("holding the pressure with a critical pod")
		_, err = pressured.CreatePod(ctx, ns, memoryHold.holder())
		Expect(err).NotTo(HaveOccurred())

		// The controller deletes a failed daemon pod within a second or so,
		// often before a poll could see it Failed: the kubelet's Evicted
		// event outlives the pod.
		By("waiting for the kubelet's Evicted event of the daemon pod")
		Eventually(ctx, func(g Gomega) {
			events, err := pressured.PodEvents(ctx, ns, first.Name, nodeharness.EvictedReason)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(events).To(ContainElement(HaveField("Message", HavePrefix("The node was low on resource: memory"))),
				"no eviction event of %s", first.Name)
		}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())

		By("checking the controller deletes the evicted pod and makes another for the same node, which the kubelet admits")
		Eventually(ctx, func(g Gomega) {
			_, err := pressured.Client.CoreV1().Pods(ns).Get(ctx, first.Name, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "evicted daemon pod %s still there", first.Name)
			pods, err := pressured.Pods(ctx, ns)
			g.Expect(err).NotTo(HaveOccurred())
			var admitted []types.UID
			for i := range pods {
				p := &pods[i]
				if p.Spec.NodeName != pressured.Node || p.UID == first.UID || p.Labels["app"] != "daemon" {
					continue
				}
				// Admitted: running, or since evicted (an admission
				// rejection has no DisruptionTarget condition).
				if nodeharness.IsRunning(p) || nodeharness.CheckEvictedStatus(p) == nil {
					admitted = append(admitted, p.UID)
				}
			}
			g.Expect(admitted).NotTo(BeEmpty(), "no replacement daemon pod admitted on %s", pressured.Node)
		}).WithTimeout(suite.PressureTimeout).WithPolling(time.Second).Should(Succeed())

		By("ending the pressure")
		Expect(pressured.Client.CoreV1().Pods(ns).Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})).To(Succeed())
		Eventually(ctx, pressured.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())

		By("checking a daemon pod runs on the pressured worker and stays, and the spare worker's was never touched")
		daemonRuns := func(g Gomega) {
			pods, err := pressured.Pods(ctx, ns)
			g.Expect(err).NotTo(HaveOccurred())
			running := 0
			for i := range pods {
				if pods[i].Spec.NodeName == pressured.Node && pods[i].Labels["app"] == "daemon" && nodeharness.IsRunning(&pods[i]) {
					running++
				}
			}
			g.Expect(running).To(Equal(1), "running daemon pods on %s", pressured.Node)
			p := getPod(ctx, g, ns, onSpare.Name)
			g.Expect(p.UID).To(Equal(onSpare.UID))
			g.Expect(p).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(p))
		}
		// The controller's backoff after the last eviction can take a while.
		Eventually(ctx, daemonRuns).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())
		Consistently(ctx, daemonRuns).WithTimeout(2 * suite.MonitoringInterval).WithPolling(suite.Poll).Should(Succeed())
	})
})
