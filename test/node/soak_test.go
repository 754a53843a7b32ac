package nodee2e

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/evictkit/evictkit/internal/kernellog"
	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
	"github.com/evictkit/evictkit/internal/soak"
)

var (
	soakDuration time.Duration
	soakSeed     uint64
	soakReport   string
)

func init() {
	flag.DurationVar(&soakDuration, "soak-duration", 60*time.Minute, "how long the Soak spec starts random hogs (make soak: DURATION)")
	flag.Uint64Var(&soakSeed, "soak-seed", 0, "the Soak spec's random seed; 0 takes one from the clock (printed, so a run can be replayed)")
	flag.StringVar(&soakReport, "soak-report", "", "a file the Soak spec writes its report to (markdown)")
}

// Bounds of the soak's random hogs.
const (
	soakMaxHogs    = 6                // hogs running at once
	soakSample     = 2 * time.Second  // how often the node and the kubelet are sampled
	soakEventsPoll = 10 * time.Second // how often the Evicted events are listed
	// soakSlack is how far an eviction may lie outside its condition's
	// True span: the kubelet sets the condition's transition time when it
	// posts its status, up to a status period after its pass.
	soakSlack = 15 * time.Second
	// soakSandboxGC bounds the wait for the stopped sandboxes of deleted
	// pods to go: the kubelet's container GC removes them once a minute.
	soakSandboxGC = 3 * time.Minute
)

var _ = Describe("Soak", Label("Soak", "Eviction", "Serial", "Slow"), func() {
	// Random pressure on the node for -soak-duration: memory, disk, inode
	// and PID hogs of random sizes, rates, QoS classes, priorities and
	// lifetimes, started at random times from a seed. The node and the
	// kubelet are sampled throughout and the history is held to
	// internal/soak's invariants at the end; the report goes to
	// -soak-report. With our kubelet EvictionFastPath and
	// EvictionKillWithoutGrace are on, which promise that the kernel
	// OOM-kills no pod at the pods' cgroup limit (counted from the
	// kernel's log, read in the node): the fast path decides within
	// milliseconds, and a hard eviction's victim is SIGKILLed at once
	// rather than given 2 s in which a hog that survives SIGTERM grows on.
	It("keeps the eviction manager's promises under random pressure", func(ctx SpecContext) {
		seed := soakSeed
		if seed == 0 {
			seed = uint64(time.Now().UnixNano())
		}
		By(fmt.Sprintf("soaking node %s (kubelet %s) for %s, seed %d", f.Node, f.Kubelet, soakDuration, seed))
		rnd := rand.New(rand.NewPCG(seed, 0x5eed))

		By("waiting until the node has no pressure condition")
		Eventually(ctx, f.NodePressures).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(BeEmpty())
		obs, err := f.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("observations: %+v\n", obs)
		var gates map[string]bool
		if f.Kubelet == nodeharness.KubeletEvictkit {
			gates = map[string]bool{"EvictionFastPath": true, "EvictionKillWithoutGrace": true}
		}
		setKubeletConfig(ctx, gates, func(c *kubeletconfig.KubeletConfiguration) { soakThresholds(c, obs) })
		r := newSoakRecorder()
		r.h.FastPath = gates["EvictionFastPath"] && !control
		r.gates = gates
		r.start = time.Now()

		ns := createNamespace(ctx, "soak")
		staticName := "soak-static"
		mirror, err := f.CreateStaticPod(ctx, ns, f.Pod(staticName, nodeharness.MemoryHog("100Mi")))
		Expect(err).NotTo(HaveOccurred())
		staticRemoved := false
		DeferCleanup(func(ctx SpecContext) {
			if !staticRemoved {
				Expect(f.DeleteStaticPod(ctx, staticName)).To(Succeed())
			}
		}, NodeTimeout(time.Minute))
		r.h.Pods = append(r.h.Pods, soakPod(ns, mirror, nil, true))
		// The static pod's cgroup carries its UID on the node, which
		// the mirror pod names once the kubelet has made it.
		var staticUID string
		Eventually(ctx, func() (map[string]string, error) {
			mp, err := f.Client.CoreV1().Pods(ns).Get(ctx, mirror, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			staticUID = mp.Annotations[corev1.MirrorPodAnnotationKey]
			return mp.Annotations, nil
		}).WithTimeout(suite.ClearTimeout).WithPolling(suite.Poll).Should(HaveKey(corev1.MirrorPodAnnotationKey), "the static pod's mirror pod")
		r.uids[staticUID] = ns + "/" + mirror
		critical, err := f.CreatePod(ctx, ns, f.Pod("soak-critical", nodeharness.MemoryHog("100Mi"), nodeharness.PriorityClass("system-node-critical")))
		Expect(err).NotTo(HaveOccurred())
		r.h.Pods = append(r.h.Pods, soakPod(ns, critical.Name, critical, true))
		r.uids[string(critical.UID)] = ns + "/" + critical.Name

		cpuStart, err := kubeletCPU(ctx)
		Expect(err).NotTo(HaveOccurred())
		start := time.Now()
		r.sample(ctx)

		By("starting random hogs until the duration is over")
		lifetimes := map[string]time.Time{} // hog → when the soak deletes it
		nextStart, nextEvents := start, start
		for n := 0; time.Since(start) < soakDuration; {
			now := time.Now()
			r.sample(ctx)
			if !now.Before(nextEvents) {
				r.events(ctx, ns)
				r.usage(ctx, ns)
				if err := r.kernelOOM(ctx); err != nil {
					r.missed["kernel log: "+err.Error()]++
				}
				nextEvents = now.Add(soakEventsPoll)
			}
			r.endHogs(ctx, ns, lifetimes)
			if !now.Before(nextStart) && len(lifetimes) < soakMaxHogs {
				n++
				h := randomHog(rnd, n)
				p, err := f.CreatePod(ctx, ns, f.Pod(h.name, h.args, h.opts...))
				Expect(err).NotTo(HaveOccurred())
				r.h.Pods = append(r.h.Pods, soakPod(ns, p.Name, p, false))
				r.uids[string(p.UID)] = ns + "/" + p.Name
				r.started[h.kind+", "+h.qos]++
				lifetimes[p.Name] = now.Add(h.lifetime)
				GinkgoWriter.Printf("%s started %s: %s %v, %s, priority %q, for %s\n",
					now.Format(time.TimeOnly), p.Name, h.kind, h.args, h.qos, h.priority, h.lifetime.Round(time.Second))
				nextStart = now.Add(time.Duration(3+rnd.IntN(18)) * time.Second)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(now.Add(soakSample))):
			}
		}

		By("removing the hogs, then sampling for soakSlack at least and until the pressure is gone")
		// The kubelet posts a condition up to a status period after its
		// pass, and counts an eviction once the kill has ended: stopping
		// at the first sample without pressure would cut both off.
		for name := range lifetimes {
			lifetimes[name] = time.Time{}
		}
		r.endHogs(ctx, ns, lifetimes)
		removed := time.Now()
		Eventually(ctx, func() ([]corev1.NodeConditionType, error) {
			r.sample(ctx)
			r.events(ctx, ns)
			pressures, err := f.NodePressures(ctx)
			if err == nil && time.Since(removed) < soakSlack {
				err = fmt.Errorf("%s of the %s after the hogs' removal sampled", time.Since(removed).Round(time.Second), soakSlack)
			}
			return pressures, err
		}).WithTimeout(suite.ClearTimeout).WithPolling(soakSample).Should(BeEmpty())
		r.sample(ctx)
		r.events(ctx, ns)
		Expect(r.kernelOOM(ctx)).To(Succeed(), "the kernel's log, read at the end: without it OOM kills would go uncounted")
		cpuEnd, err := kubeletCPU(ctx)
		Expect(err).NotTo(HaveOccurred())
		took := time.Since(start)

		By("removing everything the soak created and checking it is gone")
		Expect(f.DeleteStaticPod(ctx, staticName)).To(Succeed())
		staticRemoved = true
		r.h.Leftovers = soakLeftovers(ctx, ns, staticName)

		r.finish()
		violations := soak.Check(r.h, soakSlack)
		report := r.report(seed, took, cpuEnd-cpuStart, violations)
		GinkgoWriter.Println(report)
		if soakReport != "" {
			Expect(os.MkdirAll(filepath.Dir(soakReport), 0o755)).To(Succeed())
			Expect(os.WriteFile(soakReport, []byte(report), 0o644)).To(Succeed())
		}
		// A history with gaps would pass vacuously.
		Expect(len(r.h.Kubelet)).To(BeNumerically(">=", r.ticks*9/10), "the kubelet was read in %d of %d samples", len(r.h.Kubelet), r.ticks)
		Expect(len(r.h.Conditions)).To(BeNumerically(">=", r.ticks*9/10), "the node was read in %d of %d samples", len(r.h.Conditions), r.ticks)
		Expect(violations).To(BeEmpty(), "invariants broken (seed %d):\n%s", seed, formatViolations(violations))
	})
})

// soakThresholds sets the soak's hard thresholds from the observations:
// the pods' cgroup limited to 2000 MiB above what they use now with
// allocatableMemory.available at 400 MiB (so a fast hog can reach the
// kernel's OOM killer before a slow kubelet acts), nodefs and imagefs
// (one filesystem here) 400 MiB below what is free, 4000 inodes and 3000
// PIDs below what is free.
func soakThresholds(c *kubeletconfig.KubeletConfiguration, o nodeharness.Observations) {
	allocatableRoom(c, o, 2000*nodeharness.Mi, "400Mi")
	disk := nodeharness.Quantity(o.NodeFsAvailable - 400*nodeharness.Mi)
	c.EvictionHard = nodeharness.WithThresholds(c.EvictionHard, map[string]string{
		"nodefs.available":  disk,
		"imagefs.available": disk,
		"nodefs.inodesFree": nodeharness.Quantity(o.NodeFsInodesFree - 4000),
		"pid.available":     nodeharness.Quantity(o.PIDAvailable - 3000),
	})
}

// soakHog is one random hog.
type soakHog struct {
	name, kind, qos, priority string
	args                      []string
	opts                      []nodeharness.PodOption
	lifetime                  time.Duration
}

// randomHog draws the n-th hog: its kind, size, rate, QoS class, priority
// and lifetime. Every hog ends 5 s after a SIGTERM, which it ignores.
func randomHog(rnd *rand.Rand, n int) soakHog {
	between := func(lo, hi int) int { return lo + rnd.IntN(hi-lo+1) }
	h := soakHog{
		kind:     []string{"memory", "memory", "disk", "inodes", "threads"}[rnd.IntN(5)],
		qos:      []string{"BestEffort", "Burstable", "Guaranteed"}[rnd.IntN(3)],
		priority: []string{"", nodeharness.LowPriority, nodeharness.HighPriority}[rnd.IntN(3)],
		lifetime: time.Duration(30+rnd.IntN(151)) * time.Second,
		opts:     []nodeharness.PodOption{nodeharness.GracePeriod(5)},
	}
	h.name = fmt.Sprintf("%s-%03d", h.kind, n)
	limit := "256Mi"
	switch h.kind {
	case "memory":
		size := between(200, 900)
		h.args = []string{"memory", "-size", fmt.Sprintf("%dMi", size), "-rate", fmt.Sprintf("%dMi", between(20, 300))}
		limit = fmt.Sprintf("%dMi", size+64)
	case "disk":
		h.args = []string{"disk", "-dir", "/scratch", "-size", fmt.Sprintf("%dMi", between(50, 300)), "-rate", fmt.Sprintf("%dMi", between(10, 60))}
		h.opts = append(h.opts, nodeharness.EmptyDir("/scratch", "", ""))
	case "inodes":
		h.args = []string{"inodes", "-dir", "/scratch", "-count", fmt.Sprint(between(1000, 5000)), "-rate", fmt.Sprint(between(100, 500))}
		h.opts = append(h.opts, nodeharness.EmptyDir("/scratch", "", ""))
	case "threads":
		h.args = []string{"threads", "-count", fmt.Sprint(between(500, 2500)), "-procs", "10", "-rate", fmt.Sprint(between(100, 300))}
	}
	switch h.qos {
	case "Burstable":
		h.opts = append(h.opts, nodeharness.MemoryRequest("50Mi"))
	case "Guaranteed":
		h.opts = append(h.opts, nodeharness.Guaranteed("50m", limit))
	}
	if h.priority != "" {
		h.opts = append(h.opts, nodeharness.PriorityClass(h.priority))
	}
	return h
}

// soakRecorder keeps the history of a soak run, read only from outside
// the kubelet: the API server's node, pods and events, systemd's view of
// the kubelet and its metrics.
type soakRecorder struct {
	h       soak.History
	started map[string]int   // "kind, QoS" → hogs started
	seen    map[string]int32 // event UID → how many of its count are recorded
	// uids are the soak's pods by API UID (namespace/name), to know them
	// in the kernel's log; kills are the kernel's OOM kills in them since
	// the start, by time and PID; statusOOM are the pods whose container
	// status says OOMKilled, containerd's account (reported beside the
	// kernel's, never counted).
	uids      map[string]string
	kills     map[killKey]kernelKill
	statusOOM map[string]bool
	start     time.Time
	gates     map[string]bool // the kubelet's alpha gates during the soak
	ticks     int             // sample calls, read or not
	missed    map[string]int  // what a sample could not read → how often
	// rejected counts admission rejections: the kubelet records them as
	// Evicted events too, but they are no evictions.
	rejected int
	// running are the pods the newest listing showed running and not
	// deleted, by name.
	running map[string]bool
}

func newSoakRecorder() *soakRecorder {
	return &soakRecorder{started: map[string]int{}, seen: map[string]int32{}, uids: map[string]string{}, kills: map[killKey]kernelKill{},
		statusOOM: map[string]bool{}, missed: map[string]int{}, running: map[string]bool{}}
}

// kernelKill is a kernel OOM kill in one of the soak's pods.
type kernelKill struct {
	kernellog.OOMKill
	Pod string // namespace/name
}

// killKey tells one kill from another across reads of the kernel's log.
type killKey struct {
	at  int64 // Unix nanoseconds
	pid int
}

// kernelOOM reads the kernel's log in the node (the node's kernel: the
// host's on kind, the VM's on the cgroup v2 node) and records the OOM
// kills in the soak's pods since the start. It is read every events poll
// so that no kill leaves the kernel's ring buffer unread.
func (r *soakRecorder) kernelOOM(ctx context.Context) error {
	kills, err := f.KernelOOMKills(ctx)
	if err != nil {
		return err
	}
	for _, k := range kills {
		if pod, ok := r.uids[k.PodUID]; ok && !k.At.Before(r.start) {
			r.kills[killKey{k.At.UnixNano(), k.PID}] = kernelKill{k, pod}
		}
	}
	return nil
}

// sample records the node's Ready and pressure conditions and the
// kubelet's process and eviction count.
func (r *soakRecorder) sample(ctx context.Context) {
	now := time.Now()
	r.ticks++
	if n, err := f.GetNode(ctx); err != nil {
		r.missed["node: "+err.Error()]++
	} else {
		s := soak.ConditionSample{At: now, Ready: nodeharness.IsReady(n), Pressure: map[string]time.Time{}}
		for _, c := range nodeharness.Pressures(n) {
			if since, ok := nodeharness.TrueSince(n, c); ok {
				s.Pressure[string(c)] = since
			}
		}
		r.h.Conditions = append(r.h.Conditions, s)
	}
	p, err := f.KubeletProcess(ctx)
	if err != nil {
		r.missed["kubelet process: "+err.Error()]++
		return
	}
	counts, err := f.EvictionCounts(ctx)
	if err != nil {
		r.missed["kubelet_evictions: "+err.Error()]++
		return
	}
	total := 0
	for _, v := range counts {
		total += v
	}
	r.h.Kubelet = append(r.h.Kubelet, soak.KubeletSample{At: now, PID: p.PID, Restarts: p.Restarts, Evictions: total})
}

// events records the Evicted events of ns not recorded yet: one eviction
// per count of an event (the event recorder folds repeats into one event),
// admission rejections counted apart.
func (r *soakRecorder) events(ctx context.Context, ns string) {
	sel := fields.Set{"involvedObject.kind": "Pod", "reason": nodeharness.EvictedReason}.AsSelector().String()
	list, err := f.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		r.missed["events: "+err.Error()]++
		return
	}
	for _, e := range list.Items {
		count := max(e.Count, 1)
		for i := r.seen[string(e.UID)]; i < count; i++ {
			if strings.HasPrefix(e.Message, rejectedEventPrefix) {
				r.rejected++
				continue
			}
			at := e.FirstTimestamp.Time
			if i > 0 {
				at = e.LastTimestamp.Time
			}
			if at.IsZero() {
				at = e.EventTime.Time
			}
			name := ns + "/" + e.InvolvedObject.Name
			r.h.Evictions = append(r.h.Evictions, soak.Eviction{UID: name, Name: name, At: at, Resource: e.Annotations[annotationStarved]})
		}
		r.seen[string(e.UID)] = count
	}
}

// usage records the Summary API's figures of the pods of ns that the
// newest listing showed running, for the Ranking invariant.
func (r *soakRecorder) usage(ctx context.Context, ns string) {
	now := time.Now()
	s, err := f.Summary(ctx)
	if err != nil {
		r.missed["summary: "+err.Error()]++
		return
	}
	u := soak.UsageSample{At: now, Pods: map[string]soak.Usage{}}
	for _, p := range s.Pods {
		if p.PodRef.Namespace != ns || !r.running[p.PodRef.Name] {
			continue
		}
		var pu soak.Usage
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			pu.MemoryWorkingSet = int64(*p.Memory.WorkingSetBytes)
		}
		if e := p.EphemeralStorage; e != nil {
			if e.UsedBytes != nil {
				pu.EphemeralStorage = int64(*e.UsedBytes)
			}
			if e.InodesUsed != nil {
				pu.Inodes = int64(*e.InodesUsed)
			}
		}
		u.Pods[ns+"/"+p.PodRef.Name] = pu
	}
	r.h.Usage = append(r.h.Usage, u)
}

// soakPod is a pod of the soak as internal/soak sees it: its priority and
// requests from the API server's copy (p; nil for a mirror pod, which is
// never a rival since it must stay).
func soakPod(ns, name string, p *corev1.Pod, mustStay bool) soak.Pod {
	sp := soak.Pod{Namespace: ns, Name: name, UID: ns + "/" + name, MustStay: mustStay}
	if p == nil {
		return sp
	}
	sp.Priority = ptr.Deref(p.Spec.Priority, 0)
	sp.MemoryGuaranteed = true
	for _, c := range p.Spec.Containers {
		req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
		if req.IsZero() {
			req = lim // the API server defaults a request to its limit
		}
		sp.MemoryRequest += req.Value()
		st := c.Resources.Requests[corev1.ResourceEphemeralStorage]
		sp.StorageRequest += st.Value()
		if lim.IsZero() || lim.Cmp(req) != 0 {
			sp.MemoryGuaranteed = false
		}
	}
	return sp
}

// endHogs records which pods of ns containerd says were OOM-killed, and deletes the
// hogs whose lifetime is over or that have ended (evicted, rejected),
// freeing their place.
func (r *soakRecorder) endHogs(ctx context.Context, ns string, lifetimes map[string]time.Time) {
	pods, err := f.Pods(ctx, ns)
	if err != nil {
		r.missed["pods: "+err.Error()]++
		return
	}
	now := time.Now()
	clear(r.running)
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			r.running[p.Name] = true
		}
		if containerOOMKilled(p) {
			r.statusOOM[ns+"/"+p.Name] = true
		}
		until, hog := lifetimes[p.Name]
		ended := p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
		if !hog || (now.Before(until) && !ended) {
			continue
		}
		deleted := time.Now()
		err := f.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			r.missed["deleting a hog: "+err.Error()]++
			continue
		}
		delete(lifetimes, p.Name)
		delete(r.running, p.Name)
		if i := slices.IndexFunc(r.h.Pods, func(sp soak.Pod) bool { return sp.UID == ns+"/"+p.Name }); i >= 0 && r.h.Pods[i].Deleted.IsZero() {
			r.h.Pods[i].Deleted = deleted
		}
	}
	for name := range lifetimes {
		if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == name }) {
			delete(lifetimes, name) // gone already
		}
	}
}

// finish puts the history in the order soak.Check reads it: evictions in
// time order, the pods the kernel OOM-killed at a limit above their own
// sorted.
func (r *soakRecorder) finish() {
	slices.SortStableFunc(r.h.Evictions, func(a, b soak.Eviction) int { return a.At.Compare(b.At) })
	pods := map[string]bool{}
	for _, k := range r.kills {
		if !k.OwnLimit {
			pods[k.Pod] = true
		}
	}
	r.h.OOMKills = slices.Sorted(maps.Keys(pods))
}

// containerOOMKilled: containerd says the kernel's OOM killer ended a
// container of p.
func containerOOMKilled(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		for _, t := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
			if t != nil && t.Reason == "OOMKilled" {
				return true
			}
		}
	}
	return false
}

// kubeletCPU reads the CPU time the kubelet's process has used, from
// /proc in the node (user and system ticks of 1/100 s).
func kubeletCPU(ctx context.Context) (time.Duration, error) {
	p, err := f.KubeletProcess(ctx)
	if err != nil {
		return 0, err
	}
	out, err := f.Exec(ctx, "cat", fmt.Sprintf("/proc/%d/stat", p.PID))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// fields 14 and 15 (utime, stime) count from the last ")".
	rest := strings.Fields(out[strings.LastIndexByte(out, ')')+1:])
	if len(rest) < 13 {
		return 0, fmt.Errorf("node %s: /proc/%d/stat: %q", f.Node, p.PID, out)
	}
	var utime, stime int64
	if _, err := fmt.Sscan(rest[11]+" "+rest[12], &utime, &stime); err != nil {
		return 0, fmt.Errorf("node %s: /proc/%d/stat: utime, stime: %w", f.Node, p.PID, err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// soakLeftovers deletes the soak's namespace and reports what of the
// soak is still on the node or in the API server afterwards.
func soakLeftovers(ctx context.Context, ns, static string) []string {
	var left []string
	if err := f.DeleteNamespace(ctx, ns); err != nil {
		left = append(left, err.Error())
	}
	// DeleteNamespace waits until no sandbox of ns is ready; the stopped
	// ones go at the kubelet's next container GC.
	var out string
	err := wait.PollUntilContextTimeout(ctx, soakSample, soakSandboxGC, true, func(ctx context.Context) (bool, error) {
		var err error
		out, err = f.Exec(ctx, "crictl", "pods", "--quiet", "--label", "io.kubernetes.pod.namespace="+ns)
		return err == nil && strings.TrimSpace(out) == "", nil
	})
	switch {
	case err == nil:
	case strings.TrimSpace(out) != "":
		left = append(left, fmt.Sprintf("pod sandboxes of %s %s after its deletion: %s", ns, soakSandboxGC, strings.Join(strings.Fields(out), " ")))
	default:
		left = append(left, fmt.Sprintf("crictl pods could not list the sandboxes of %s within %s", ns, soakSandboxGC))
	}
	if _, err := f.Client.CoreV1().Pods(ns).Get(ctx, static+"-"+f.Node, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		left = append(left, fmt.Sprintf("mirror pod %s/%s-%s (%v)", ns, static, f.Node, err))
	}
	return left
}

// gateList names the gates that are on, sorted, or says none is.
func gateList(gates map[string]bool) string {
	var on []string
	for g, v := range gates {
		if v {
			on = append(on, g)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	slices.Sort(on)
	return strings.Join(on, ", ")
}

// report renders the run in markdown.
func (r *soakRecorder) report(seed uint64, took, cpu time.Duration, vs []soak.Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Soak: kubelet %s on %s\n\n", f.Kubelet, f.Node)
	fmt.Fprintf(&b, "Seed %d, hogs started for %s, %s in all (to the pressure gone). Alpha feature gates on: %s.\n\n", seed, soakDuration, took.Round(time.Second), gateList(r.gates))
	pods := 0
	keys := slices.Sorted(maps.Keys(r.started))
	b.WriteString("| hogs started | count |\n|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | %d |\n", k, r.started[k])
		pods += r.started[k]
	}
	fmt.Fprintf(&b, "| all | %d |\n\n", pods)
	byResource := map[string]int{}
	for _, e := range r.h.Evictions {
		byResource[cmp.Or(e.Resource, "(limit)")]++
	}
	b.WriteString("| evictions by starved resource | count |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(byResource)) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, byResource[k])
	}
	fmt.Fprintf(&b, "| all | %d |\n\n", len(r.h.Evictions))
	if len(r.h.Evictions) > 0 {
		b.WriteString("| evicted at | pod | starved resource |\n|---|---|---|\n")
		for _, e := range r.h.Evictions {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", e.At.Format(time.TimeOnly), e.Name, cmp.Or(e.Resource, "(limit)"))
		}
		b.WriteString("\n")
	}
	b.WriteString(r.killsReport())
	fmt.Fprintf(&b, "Admission rejections: %d. Kubelet CPU: %s, %.1f s per hour. Samples: %d of the node, %d of the kubelet.\n\n",
		r.rejected, cpu.Round(10*time.Millisecond), cpu.Seconds()/took.Hours(), len(r.h.Conditions), len(r.h.Kubelet))
	if len(r.missed) > 0 {
		b.WriteString("Reads that failed (samples missed):\n\n")
		for _, k := range slices.Sorted(maps.Keys(r.missed)) {
			fmt.Fprintf(&b, "- %d × %s\n", r.missed[k], k)
		}
		b.WriteString("\n")
	}
	cov := soak.RankingCoverage(r.h)
	fmt.Fprintf(&b, "Ranking: %d evictions held against %d rivals (pods the kubelet knew and could have evicted instead: internal/soak's rivals), %d not judged (the victim had no stats reported in time), from %d usage samples.\n\n", cov.Evictions, cov.Rivals, cov.Unjudged, len(r.h.Usage))
	tally := soak.Tally(vs)
	fmt.Fprintf(&b, "Invariant violations: %d.\n\n", len(vs))
	if len(vs) > 0 {
		b.WriteString("| invariant | count |\n|---|---|\n")
		for _, k := range slices.Sorted(maps.Keys(tally)) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, tally[k])
		}
		b.WriteString("\n" + formatViolations(vs))
	}
	return b.String()
}

// killsReport renders the kernel's OOM kills in the soak's pods, and
// containerd's account beside them.
func (r *soakRecorder) killsReport() string {
	var b strings.Builder
	kills := slices.SortedFunc(maps.Values(r.kills), func(a, b kernelKill) int { return a.At.Compare(b.At) })
	above := 0
	for _, k := range kills {
		if !k.OwnLimit {
			above++
		}
	}
	fmt.Fprintf(&b, "Kernel OOM kills (the kernel's log) in the soak's pods: %d at a limit above the pod (the pods' cgroup or the node: the kubelet's to prevent), %d at a pod's or container's own limit.\n\n", above, len(kills)-above)
	if len(kills) > 0 {
		b.WriteString("| killed at | pod | PID | limit hit |\n|---|---|---|---|\n")
		for _, k := range kills {
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", k.At.Format("15:04:05.000"), k.Pod, k.PID, map[bool]string{true: "its own", false: "above the pod"}[k.OwnLimit])
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Pods whose container status says OOMKilled: %d%s (containerd's account; on cgroup v1 the kernel tells every cgroup under one at its limit, so it counts pods the kernel did not kill).\n\n",
		len(r.statusOOM), listSuffix(slices.Sorted(maps.Keys(r.statusOOM))))
	return b.String()
}

func listSuffix(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// formatViolations lists violations a line each.
func formatViolations(vs []soak.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "- %s %s: %s\n", v.At.Format(time.TimeOnly), v.Invariant, v.What)
	}
	return b.String()
}
