package nodee2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/e2ereport"
	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
	"github.com/evictkit/evictkit/internal/workloadlog"
)

// Bounds of this suite's waits besides suite's (generous: a wait ends as
// soon as its condition holds).
const (
	evictionTimeout = 10 * time.Minute // until every expected eviction happened
	stayClearFor    = 30 * time.Second // how long a cleared condition must stay clear
	eventTimeout    = time.Minute      // until an eviction's event is listed
)

// admitTimeout bounds the wait until a new pod runs or is turned away; set
// from the node's measured pod start once connected.
var admitTimeout time.Duration

// Annotation keys of the kubelet's Evicted events (the eviction package's
// StarvedResourceKey, OffendingContainersKey, OffendingContainersUsageKey).
const (
	annotationStarved        = "starved_resource"
	annotationOffenders      = "offending_containers"
	annotationOffendersUsage = "offending_containers_usage"
	rejectedMessagePrefix    = "Pod was rejected"
	// rejectedEventPrefix starts the Evicted event of a pod the kubelet
	// turned away at admission: the event carries the admit handler's
	// message as it is; only the pod's status has rejectedMessagePrefix.
	rejectedEventPrefix       = "The node had condition: "
	lowOnResourceMessageStart = "The node was low on resource: "
)

// victim is a pod of an eviction spec and when it has to go: order 1 is
// evicted first, then 2, ...; order 0 must never be evicted.
type victim struct {
	pod   *corev1.Pod
	order int
	// static pods run from a manifest in the node's staticPodPath; pod's
	// name becomes the mirror pod's once created.
	static bool
	// limit is set for a local storage limit eviction: the
	// kubelet_evictions label and the start of the pod's message.
	limit *limitEviction
	// followLog: the spec needs what the pod logged until it was killed
	// (evictionTiming.log); the log is followed from the start, as the
	// kubelet removes an evicted pod's containers and logs at once.
	followLog bool
	// shownBeforeNext, in bytes: the spec creates the next pod only once
	// the Summary API shows this pod's memory working set at least this
	// large, so that the kubelet ranks it on figures of that size, not on
	// figures taken before it grew (its stats lag by up to a housekeeping
	// interval).
	shownBeforeNext int64
	// holdingBeforeNext: the spec creates the next pod only once this one
	// logged that it holds its size (a writer of page cache, whose working
	// set does not show what it took).
	holdingBeforeNext bool
	// noStats: the kubelet has no stats of this pod when it evicts it. Its
	// Evicted event then carries no annotations at all, not even the
	// starved resource: upstream's eviction message stops at the missing
	// stats, before it sets them (ours keeps that).
	noStats bool
	// readyBeforeNext: the spec creates the next pod only once this
	// returns (it waits for a state of this pod that the scenario needs).
	readyBeforeNext func(ctx context.Context, ns, pod string)
	// onEvicted runs once the kubelet has recorded this pod's Evicted
	// event, before the next pod is created (which a node under pressure
	// would not admit: a pod created earlier can wait for what this does).
	onEvicted func(ctx context.Context, ns string)
	// terminatesLate: this pod's kill outlasts the evictions of later
	// orders (a soft eviction's long grace period, with hard evictions
	// during it). Its order is its Evicted event's; it must still be
	// running when every later pod is Failed, and must end after them.
	terminatesLate bool
}

// limitEviction is what a local storage limit eviction must show.
type limitEviction struct {
	signal  string
	message string
}

// evictionSpec is one scenario in upstream's style: thresholds set from
// what the node observes, pods that push the node over them, and what the
// kubelet must do.
type evictionSpec struct {
	name string // namespace base name
	// condition is the pressure condition to expect; "" for local storage
	// limit evictions, which must happen with no pressure condition at all.
	condition corev1.NodeConditionType
	signal    string // the kubelet_evictions label of threshold evictions
	resource  string // their Evicted events' starved_resource
	// offenders: the events name the evicted container and its usage
	// above its request (memory).
	offenders bool
	// messageStart is how evicted pods' status messages start; the default
	// is upstream's "The node was low on resource: <resource>".
	messageStart string
	// prepare runs before the thresholds are set (e.g. image pruning).
	prepare func(ctx context.Context)
	// configure sets the thresholds from the observations.
	configure func(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations)
	// featureGates are set in the kubelet's configuration with the
	// thresholds (the evictkit kubelet's alpha gates, say).
	featureGates map[string]bool
	// configureOnceHolding: the pods start first, and the thresholds (from
	// the observations made before the pods started) are set once every
	// pod has reached its size and holds it. The kubelet's first look at
	// the pressure is then at its full extent, which a spec that checks
	// what one pass decides needs.
	configureOnceHolding bool
	// pods are the spec's pods.
	pods func() []victim
	// whilePressureBuilds runs once every pod is created, before the spec
	// waits for the pressure (a fault to inject while the hogs grow).
	whilePressureBuilds func(ctx SpecContext, ns string)
	// killKubeletOnceEvicted: once the pressure is reported and these pods'
	// Evicted events are recorded, the kubelet is killed with SIGKILL and
	// systemd starts a new one (the baseline then counts both processes'
	// evictions).
	killKubeletOnceEvicted []string
	// afterEvictions runs once the evictions are checked, before the
	// evicted pods are removed and the condition must clear.
	afterEvictions func(ctx SpecContext, ns string)
	// checkEvicted adds checks of an evicted pod (e.g. its timing).
	checkEvicted func(ctx context.Context, p *corev1.Pod, t evictionTiming)
}

// evictionTiming is when things happened to an evicted pod, as the spec saw
// them.
type evictionTiming struct {
	// pressureSince is when the spec's node condition became True.
	pressureSince time.Time
	// failedSeen is when the spec first saw the pod Failed (to within the
	// poll interval). The kubelet posts the Failed phase only once the
	// pod's containers stopped, so this is when the kill ended; the
	// container's own finish time is not reliable: the kubelet removes an
	// evicted pod's exited containers at once, and the pod's status may
	// then only say ContainerStatusUnknown.
	failedSeen time.Time
	// log is what the pod logged, for victims with followLog.
	log []nodeharness.LogLine
}

// runEviction runs an eviction spec to the end: pressure, evictions in
// order, their status, events and metrics, the condition clearing and
// staying clear, a new pod admitted, and the kubelet never restarting on
// its own. The kubelet's configuration and the namespace are restored and
// removed however the spec ends.
func runEviction(ctx SpecContext, s evictionSpec) {
	specStart := time.Now().Add(-time.Second)
	By("waiting until the node has no pressure condition")
	Eventually(ctx, f.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())
	if s.prepare != nil {
		s.prepare(ctx)
	}
	By("observing the node")
	obs, err := f.Observe(ctx)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("observations: %+v\n", obs)

	baseline := &kubeletBaseline{}
	configure := func() {
		By("setting the eviction thresholds relative to the observations")
		setKubeletConfig(ctx, s.featureGates, func(c *kubeletconfig.KubeletConfiguration) { s.configure(c, obs) })
		*baseline = takeKubeletBaseline(ctx)
	}
	if !s.configureOnceHolding {
		configure()
	}

	ns := createNamespace(ctx, s.name)

	victims := s.pods()
	By(fmt.Sprintf("creating %d pods", len(victims)))
	for i, v := range victims {
		if v.static {
			name := v.pod.Name
			mirror, err := f.CreateStaticPod(ctx, ns, v.pod)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func(ctx SpecContext) {
				Expect(f.DeleteStaticPod(ctx, name)).To(Succeed())
			}, NodeTimeout(time.Minute))
			victims[i].pod = v.pod.DeepCopy()
			victims[i].pod.Name = mirror
			continue
		}
		_, err := f.CreatePod(ctx, ns, v.pod)
		Expect(err).NotTo(HaveOccurred())
		if v.shownBeforeNext > 0 {
			waitShown(ctx, ns, v.pod.Name, v.shownBeforeNext)
		}
		if v.holdingBeforeNext {
			waitHolding(ctx, ns, v.pod.Name)
		}
		if v.readyBeforeNext != nil {
			v.readyBeforeNext(ctx, ns, v.pod.Name)
		}
		if v.onEvicted != nil {
			waitEvictedEvent(ctx, ns, v.pod.Name)
			v.onEvicted(ctx, ns)
		}
	}
	w := &watch{ns: ns, victims: victims, logs: map[string]*nodeharness.LogFollower{}}
	for _, v := range victims {
		if v.followLog {
			w.logs[v.pod.Name] = f.FollowContainerLog(ctx, ns, v.pod.Name)
		}
	}
	if s.whilePressureBuilds != nil {
		s.whilePressureBuilds(ctx, ns)
	}
	if s.configureOnceHolding {
		By("waiting until every pod holds what it takes")
		Eventually(ctx, func(g Gomega) {
			w.check(ctx, g)
			for _, v := range victims {
				g.Expect(holding(ctx, ns, v.pod.Name)).To(BeTrue(), "pod %s does not hold its size yet; pods: %s", v.pod.Name, w.summary())
			}
		}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
		configure()
	}

	var pressureSince time.Time
	if s.condition != "" {
		By(fmt.Sprintf("waiting for %s", s.condition))
		Eventually(ctx, func(g Gomega) {
			n := w.check(ctx, g)
			since, ok := nodeharness.TrueSince(n, s.condition)
			g.Expect(ok).To(BeTrue(), "%s not yet reported; pods: %s", s.condition, w.summary())
			pressureSince = since
		}).WithTimeout(suite.PressureTimeout).WithPolling(suite.Poll).Should(Succeed())
	}

	if len(s.killKubeletOnceEvicted) > 0 {
		for _, name := range s.killKubeletOnceEvicted {
			waitEvictedEvent(ctx, ns, name)
		}
		baseline.killKubelet(ctx)
	}

	By("waiting for the evictions, in order")
	Eventually(ctx, func(g Gomega) {
		node := w.check(ctx, g)
		if s.condition == "" {
			g.Expect(nodeharness.Pressures(node)).To(BeEmpty(), "no pressure condition may appear")
		}
		g.Expect(w.pending()).To(BeEmpty(), "pods not evicted yet; pods: %s", w.summary())
	}).WithTimeout(evictionTimeout).WithPolling(suite.Poll).Should(Succeed())

	evicted := w.evicted()
	AddReportEntry(e2ereport.EvictionsEntry, len(evicted), ReportEntryVisibilityNever)
	By(fmt.Sprintf("checking the %d evicted pods' status and events", len(evicted)))
	wantCounts := map[string]int{}
	for _, p := range evicted {
		v := w.victim(p.Name)
		if v.limit != nil {
			expectLimitEvicted(ctx, p, *v.limit)
			wantCounts[v.limit.signal]++
		} else {
			expectEvicted(ctx, p, s, v.noStats)
			wantCounts[s.signal]++
		}
		if s.checkEvicted != nil {
			t := evictionTiming{pressureSince: pressureSince, failedSeen: w.failedSeen[p.Name]}
			if l := w.logs[p.Name]; l != nil {
				var err error
				t.log, err = l.Lines()
				Expect(err).NotTo(HaveOccurred())
			}
			s.checkEvicted(ctx, p, t)
		}
	}
	expectKubeletOrder(ctx, w, evicted, specStart)
	if s.afterEvictions != nil {
		s.afterEvictions(ctx, ns)
	}

	By("removing the evicted pods")
	for _, p := range evicted {
		Expect(f.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})).To(Succeed())
	}
	if s.condition != "" {
		expectPressureClears(ctx, s.condition)
	}
	expectAdmitted(ctx, ns)

	By("checking the pods that had to stay still run")
	for _, v := range victims {
		if v.order != 0 {
			continue
		}
		got, err := f.Client.CoreV1().Pods(ns).Get(ctx, v.pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && s.afterEvictions != nil {
			continue // removed by the spec's afterEvictions
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Satisfy(nodeharness.IsRunning), "pod %s had to stay: %s", v.pod.Name, nodeharness.DescribePod(got))
	}

	baseline.expectSince(ctx, s.signal, wantCounts)
}

// expectKubeletOrder checks the order of the evictions by the kubelet's
// own records, which the polling of pod phases (every poll interval) cannot
// resolve: the time of each eviction in the kubelet's log (both kubelets
// log it, to the microsecond) must be strictly after that of every pod of
// an earlier order, and the pods' Evicted events (to the second) must not
// be earlier.
func expectKubeletOrder(ctx context.Context, w *watch, evicted []*corev1.Pod, since time.Time) {
	By("checking the order of the evictions by the kubelet's own clock")
	times, err := f.EvictionTimes(ctx, since)
	Expect(err).NotTo(HaveOccurred())
	eventTime := map[string]time.Time{}
	for _, p := range evicted {
		key := p.Namespace + "/" + p.Name
		_, ok := times[key]
		Expect(ok).To(BeTrue(), "the kubelet logged no eviction of %s (logged: %v)", key, times)
		eventTime[p.Name] = expectOneEvictedEvent(ctx, p).FirstTimestamp.Time
	}
	for _, a := range evicted {
		for _, b := range evicted {
			va, vb := w.victim(a.Name), w.victim(b.Name)
			if va.order >= vb.order {
				continue
			}
			ta, tb := times[a.Namespace+"/"+a.Name], times[b.Namespace+"/"+b.Name]
			// The kubelet logs an eviction when the kill returns: a kill
			// that outlasts later ones is ordered by its event alone.
			Expect(va.terminatesLate || ta.Before(tb)).To(BeTrue(), "the kubelet evicted %s (order %d) at %s, not before %s (order %d) at %s",
				a.Name, va.order, ta.Format(time.StampMicro), b.Name, vb.order, tb.Format(time.StampMicro))
			Expect(eventTime[a.Name].After(eventTime[b.Name])).To(BeFalse(), "the Evicted event of %s (order %d) at %s is after that of %s (order %d) at %s",
				a.Name, va.order, eventTime[a.Name], b.Name, vb.order, eventTime[b.Name])
		}
	}
}

// setKubeletConfig sets the spec's kubelet configuration on f's node (see
// suite.SetKubeletConfig); a negative control leaves the gates out.
func setKubeletConfig(ctx SpecContext, gates map[string]bool, set func(*kubeletconfig.KubeletConfiguration)) {
	if control && len(gates) > 0 {
		GinkgoWriter.Printf("negative control: the feature gates %v are left out\n", gates)
		gates = nil
	}
	suite.SetKubeletConfig(ctx, f, gates, set)
}

// waitShown waits until the Summary API shows the pod's memory working set
// at least want bytes large, failing at once if the pod stops running.
func waitShown(ctx context.Context, ns, pod string, want int64) {
	if want < nodeharness.Mi {
		By(fmt.Sprintf("waiting until the Summary API shows pod %s's memory", pod))
	} else {
		By(fmt.Sprintf("waiting until the Summary API shows pod %s at %d MiB or more", pod, want/nodeharness.Mi))
	}
	Eventually(ctx, func(g Gomega) {
		stopIfEnded(ctx, g, ns, pod, "it was shown at its size")
		got, ok, err := f.PodMemoryWorkingSet(ctx, ns, pod)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok).To(BeTrue(), "the Summary API has no memory figures of pod %s yet", pod)
		g.Expect(got).To(BeNumerically(">=", want), "the Summary API shows pod %s at %d MiB", pod, got/nodeharness.Mi)
	}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
}

// waitEvictedEvent waits until the kubelet has recorded the pod's
// Evicted event.
func waitEvictedEvent(ctx context.Context, ns, pod string) {
	By(fmt.Sprintf("waiting for the kubelet's Evicted event of pod %s", pod))
	Eventually(ctx, func(g Gomega) {
		events, err := f.PodEvents(ctx, ns, pod, nodeharness.EvictedReason)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).NotTo(BeEmpty(), "pod %s has no Evicted event yet", pod)
	}).WithTimeout(evictionTimeout).WithPolling(suite.Poll).Should(Succeed())
}

// waitHolding waits until a workload pod logged that it holds its size.
func waitHolding(ctx context.Context, ns, pod string) {
	By(fmt.Sprintf("waiting until pod %s holds its size", pod))
	Eventually(ctx, func(g Gomega) {
		stopIfEnded(ctx, g, ns, pod, "it held its size")
		g.Expect(holding(ctx, ns, pod)).To(BeTrue(), "pod %s does not hold its size yet", pod)
	}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
}

// stopIfEnded stops an Eventually at once when the pod has ended: it can
// no longer get to what the spec waits for (what, "before ...").
func stopIfEnded(ctx context.Context, g Gomega, ns, pod, what string) {
	p, err := f.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		StopTrying(fmt.Sprintf("pod %s ended before %s: %s", pod, what, nodeharness.DescribePod(p))).Now()
	}
}

// holding reports whether a workload pod logged that it holds its size.
func holding(ctx context.Context, ns, pod string) bool {
	lines, err := f.ContainerLog(ctx, ns, pod)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(lines, func(l nodeharness.LogLine) bool { return l.Text == workloadlog.Holding })
}

// createNamespace makes the spec's namespace, removed when the spec ends.
func createNamespace(ctx context.Context, base string) string {
	return nodeSuite.CreateNamespace(ctx, f, base)
}

// expectPressureClears waits until the condition is gone, then checks that
// it stays gone and the node stays Ready.
func expectPressureClears(ctx context.Context, condition corev1.NodeConditionType) {
	By(fmt.Sprintf("waiting for %s to clear", condition))
	Eventually(ctx, f.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).ShouldNot(ContainElement(condition))
	By(fmt.Sprintf("checking %s stays clear for %s", condition, stayClearFor))
	Consistently(ctx, func(g Gomega) {
		n, err := f.GetNode(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodeharness.IsReady(n)).To(BeTrue(), "node %s not Ready", n.Name)
		g.Expect(nodeharness.Pressures(n)).NotTo(ContainElement(condition))
	}).WithTimeout(stayClearFor).WithPolling(suite.Poll).Should(Succeed())
}

// expectAdmitted checks that a new pod is admitted and runs.
func expectAdmitted(ctx context.Context, ns string) {
	By("admitting a new pod")
	p, err := f.CreatePod(ctx, ns, f.Pod("after", []string{"sleep"}))
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func(g Gomega) {
		got, err := f.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		if got.Status.Phase == corev1.PodFailed {
			StopTrying("the new pod was not admitted: " + nodeharness.DescribePod(got)).Now()
		}
		g.Expect(got).To(Satisfy(nodeharness.IsRunning), nodeharness.DescribePod(got))
	}).WithTimeout(admitTimeout).WithPolling(suite.Poll).Should(Succeed())
}

// expectEvicted checks one evicted pod: phase, reason, message and
// DisruptionTarget condition, and exactly one Evicted event with the
// starved resource (and, for memory, the offending container and its usage
// above its request).
func expectEvicted(ctx context.Context, p *corev1.Pod, s evictionSpec, noStats bool) {
	Expect(nodeharness.CheckEvictedStatus(p)).To(Succeed())
	start := s.messageStart
	if start == "" {
		start = lowOnResourceMessageStart + s.resource
	}
	Expect(p.Status.Message).To(HavePrefix(start), nodeharness.DescribePod(p))

	e := expectOneEvictedEvent(ctx, p)
	if noStats {
		Expect(e.Annotations).To(BeEmpty(), "pod %s was evicted without stats", p.Name)
		return
	}
	Expect(e.Annotations).To(HaveKeyWithValue(annotationStarved, s.resource))
	if !s.offenders {
		return
	}
	c := p.Spec.Containers[0]
	Expect(e.Annotations).To(HaveKeyWithValue(annotationOffenders, c.Name))
	usage, err := resource.ParseQuantity(e.Annotations[annotationOffendersUsage])
	Expect(err).NotTo(HaveOccurred(), "pod %s: %s=%q", p.Name, annotationOffendersUsage, e.Annotations[annotationOffendersUsage])
	request := c.Resources.Requests[corev1.ResourceName(s.resource)]
	Expect(usage.Cmp(request)).To(Equal(1), "pod %s: usage %s is not above the request %s", p.Name, usage.String(), request.String())
}

// expectLimitEvicted checks a pod evicted for exceeding a local storage
// limit: phase, reason and message, and exactly one Evicted event. (The
// kubelet gives these evictions neither annotations nor a DisruptionTarget
// condition.)
func expectLimitEvicted(ctx context.Context, p *corev1.Pod, want limitEviction) {
	Expect(p.Status.Phase).To(Equal(corev1.PodFailed), nodeharness.DescribePod(p))
	Expect(p.Status.Reason).To(Equal(nodeharness.EvictedReason), nodeharness.DescribePod(p))
	Expect(p.Status.Message).To(HavePrefix(want.message), nodeharness.DescribePod(p))
	expectOneEvictedEvent(ctx, p)
}

// expectOneEvictedEvent waits for the pod's Evicted event and checks it is
// the only one, recorded once.
func expectOneEvictedEvent(ctx context.Context, p *corev1.Pod) corev1.Event {
	var events []corev1.Event
	Eventually(ctx, func(g Gomega) {
		var err error
		events, err = f.PodEvents(ctx, p.Namespace, p.Name, nodeharness.EvictedReason)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).NotTo(BeEmpty(), "no Evicted event for pod %s yet", p.Name)
	}).WithTimeout(eventTimeout).WithPolling(suite.Poll).Should(Succeed())
	Expect(events).To(HaveLen(1), "pod %s: want exactly one Evicted event", p.Name)
	Expect(events[0].Count).To(BeNumerically("<=", 1), "pod %s: the Evicted event was recorded %d times", p.Name, events[0].Count)
	return events[0]
}

// kubeletBaseline is what the end of a spec is held to: the kubelet's
// process and its kubelet_evictions counts once the spec's configuration
// is in effect, and what processes the spec killed had counted since.
type kubeletBaseline struct {
	process nodeharness.KubeletProcess
	counts  map[string]int
	carried map[string]int
}

// killKubelet kills the kubelet (nodeharness.KillKubelet) and moves the
// baseline to the new process, carrying what the killed one had counted
// since the baseline (read just before the kill).
func (b *kubeletBaseline) killKubelet(ctx context.Context) {
	By("killing the kubelet with SIGKILL")
	counts, err := f.EvictionCounts(ctx)
	Expect(err).NotTo(HaveOccurred())
	was, now, err := f.KillKubelet(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(was).To(Equal(b.process), "the kubelet had restarted before the spec killed it")
	GinkgoWriter.Printf("kubelet process %d killed; systemd started %d\n", was.PID, now.PID)
	b.carried = addCounts(b.carried, countsDelta(b.counts, counts))
	b.process = now
	b.counts, err = f.EvictionCounts(ctx)
	Expect(err).NotTo(HaveOccurred())
}

// takeKubeletBaseline reads the baseline from the node.
func takeKubeletBaseline(ctx context.Context) kubeletBaseline {
	var b kubeletBaseline
	var err error
	b.process, err = f.KubeletProcess(ctx)
	Expect(err).NotTo(HaveOccurred())
	b.counts, err = f.EvictionCounts(ctx)
	Expect(err).NotTo(HaveOccurred())
	return b
}

// expectSince checks that kubelet_evictions rose by exactly want since
// the baseline (kubelet-upstream's counts folded into signal, the spec's
// threshold, see sameThreshold) and that the kubelet never restarted on
// its own.
func (b kubeletBaseline) expectSince(ctx context.Context, signal string, want map[string]int) {
	By("checking kubelet_evictions rose by exactly the evictions")
	after, err := f.EvictionCounts(ctx)
	Expect(err).NotTo(HaveOccurred())
	got := addCounts(countsDelta(b.counts, after), b.carried)
	if f.Kubelet == nodeharness.KubeletUpstream {
		got = foldSameThreshold(got, signal)
	}
	Expect(got).To(Equal(want))

	By("checking the kubelet never restarted on its own")
	now, err := f.KubeletProcess(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(now).To(Equal(b.process), "the kubelet restarted")
}

// sameThreshold lists, for a spec's signal, the signals whose thresholds
// the kubelet derives from the same setting on these nodes, so they are
// met in the same pass: allocatableMemory.available copies
// memory.available's hard threshold (enforceNodeAllocatable includes
// pods), the containerfs thresholds copy nodefs's or imagefs's where
// the container filesystem is one of those, and imagefs.available is met
// with nodefs.available where the images share nodefs's filesystem and a
// spec sets both alike (Disk really full; on v1.38.0-beta.0 upstream's
// kubelet once named imagefs.available for it). Which one upstream's kubelet
// names in kubelet_evictions depends on map order; ours takes the first in
// signal order, the spec's signal (README: fixed rules).
var sameThreshold = map[string][]string{
	"memory.available":   {"allocatableMemory.available"},
	"nodefs.available":   {"containerfs.available", "imagefs.available"},
	"nodefs.inodesFree":  {"containerfs.inodesFree"},
	"imagefs.available":  {"containerfs.available"},
	"imagefs.inodesFree": {"containerfs.inodesFree"},
}

// foldSameThreshold counts the evictions upstream's kubelet named by one of
// signal's sameThreshold signals as signal's.
func foldSameThreshold(counts map[string]int, signal string) map[string]int {
	out := maps.Clone(counts)
	for _, other := range sameThreshold[signal] {
		if n, ok := out[other]; ok {
			out[signal] += n
			delete(out, other)
		}
	}
	return out
}

// addCounts returns a + b, zero sums left out.
func addCounts(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int{}
	}
	for k, v := range b {
		out[k] += v
		if out[k] == 0 {
			delete(out, k)
		}
	}
	return out
}

// countsDelta is after − before, signals that did not change left out.
func countsDelta(before, after map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			d[k] = -v
		}
	}
	return d
}

// watch follows a spec's pods and fails the spec at once when an
// invariant breaks: the node leaves Ready, a pod that must stay is gone, a
// pod fails for another reason than eviction, or a pod is evicted before
// one that had to go first.
type watch struct {
	ns      string
	victims []victim
	byName  map[string]*corev1.Pod
	// failedSeen is when each pod was first seen Failed.
	failedSeen map[string]time.Time
	// logs follow the logs of the victims with followLog.
	logs map[string]*nodeharness.LogFollower
}

// check reads the pods and the node and stops the wait on a broken
// invariant; it returns the node.
func (w *watch) check(ctx context.Context, g Gomega) *corev1.Node {
	n, err := f.GetNode(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	if !nodeharness.IsReady(n) {
		StopTrying(fmt.Sprintf("node %s is not Ready", n.Name)).Now()
	}
	pods, err := f.Pods(ctx, w.ns)
	g.Expect(err).NotTo(HaveOccurred())
	w.byName = map[string]*corev1.Pod{}
	if w.failedSeen == nil {
		w.failedSeen = map[string]time.Time{}
	}
	for i := range pods {
		p := &pods[i]
		w.byName[p.Name] = p
		if _, seen := w.failedSeen[p.Name]; !seen && p.Status.Phase == corev1.PodFailed {
			w.failedSeen[p.Name] = time.Now()
		}
	}
	for _, v := range w.victims {
		p, ok := w.byName[v.pod.Name]
		if !ok && v.static {
			g.Expect(p).NotTo(BeNil(), "the mirror pod %s is not posted yet", v.pod.Name)
		} else if !ok {
			StopTrying(fmt.Sprintf("pod %s disappeared", v.pod.Name)).Now()
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			StopTrying("pod exited on its own: " + nodeharness.DescribePod(p)).Now()
		case p.Status.Phase != corev1.PodFailed:
			continue
		case v.order == 0:
			StopTrying("a pod that must never be evicted failed: " + nodeharness.DescribePod(p)).Now()
		case p.Status.Reason != nodeharness.EvictedReason:
			StopTrying("pod failed, not by eviction: " + nodeharness.DescribePod(p)).Now()
		}
		if v.terminatesLate {
			for _, later := range w.victims {
				if later.order > v.order && w.byName[later.pod.Name].Status.Phase != corev1.PodFailed {
					StopTrying(fmt.Sprintf("pod %s (order %d) ended before %s (order %d) was evicted; pods: %s",
						v.pod.Name, v.order, later.pod.Name, later.order, w.summary())).Now()
				}
			}
		}
		for _, earlier := range w.victims {
			if earlier.terminatesLate {
				continue
			}
			if earlier.order > 0 && earlier.order < v.order && w.byName[earlier.pod.Name].Status.Phase != corev1.PodFailed {
				StopTrying(fmt.Sprintf("pod %s (order %d) was evicted while %s (order %d) still runs; pods: %s",
					v.pod.Name, v.order, earlier.pod.Name, earlier.order, w.summary())).Now()
			}
		}
	}
	return n
}

// victim finds a victim by its pod's name.
func (w *watch) victim(name string) victim {
	for _, v := range w.victims {
		if v.pod.Name == name {
			return v
		}
	}
	Fail("no victim named " + name)
	return victim{}
}

// pending lists the pods still to be evicted.
func (w *watch) pending() []string {
	var names []string
	for _, v := range w.victims {
		if p := w.byName[v.pod.Name]; v.order > 0 && (p == nil || p.Status.Phase != corev1.PodFailed) {
			names = append(names, v.pod.Name)
		}
	}
	return names
}

// evicted lists the evicted pods in eviction order.
func (w *watch) evicted() []*corev1.Pod {
	vs := slices.Clone(w.victims)
	slices.SortStableFunc(vs, func(a, b victim) int { return a.order - b.order })
	var out []*corev1.Pod
	for _, v := range vs {
		if p := w.byName[v.pod.Name]; v.order > 0 && p != nil && p.Status.Phase == corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

func (w *watch) summary() string {
	var parts []string
	for _, v := range w.victims {
		if p, ok := w.byName[v.pod.Name]; ok {
			parts = append(parts, nodeharness.DescribePod(p))
		}
	}
	return strings.Join(parts, "; ")
}
