package benche2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/workloadlog"
)

// Gates are the alpha gates ours runs with: those that change when and
// how much it evicts under memory and disk pressure, and two that these
// scenarios never trigger (NegativeMaxPodGraceDefers: no negative
// evictionMaxPodGracePeriod; NodeFsReclaim: no dedicated image
// filesystem), on so that every row is measured with the whole set.
// Left off: DryRun (evicts nothing), Explain, PSI and RequestAPI (no
// effect on when it acts), ResumeAfterRestart (no restart during a run),
// KillWithoutGrace (it would cut the hogs' 2 s grace that relief measures).
var Gates = map[string]bool{"EvictionFastPath": true, "EvictionReclaimSized": true, "EvictionSoftGraceTimer": true,
	"EvictionReclaimableMemory": true, "EvictionHardDuringSoft": true, "EvictionDiskFastPath": true,
	"EvictionNegativeMaxPodGraceDefers": true, "EvictionNodeFsReclaim": true}

// GatesV2 are the gates added on a cgroup v2 node, where both kubelets also
// run with kernelMemcgNotification: true (upstream's notifier is disabled
// there; ours is woken by memory.events and PSI).
var GatesV2 = map[string]bool{"EvictionCgroupV2Notifier": true}

// Timing bounds of a run.
const (
	settleTimeout  = 3 * time.Minute // until the node has no pressure condition
	startTimeout   = 2 * time.Minute // until the sampler and the hogs run
	outcomeTimeout = 2 * time.Minute // until every hog is evicted, OOM-killed or done
	transition     = 5 * time.Second // evictionPressureTransitionPeriod during a run
	afterRelief    = 15 * time.Second
	// housekeeping is the kubelet's eviction monitoring interval: the hogs
	// start at a random point of it, so that neither kubelet's reaction
	// depends on where its loop happens to be when the run starts.
	housekeeping    = 10 * time.Second
	samplerInterval = "5ms"
	poll            = 500 * time.Millisecond
)

// Result is what one run of a scenario measured.
type Result struct {
	Scenario string    `json:"scenario"`
	Kubelet  string    `json:"kubelet"`
	Round    int       `json:"round"`
	Start    time.Time `json:"start"`
	// Crossed is when the sampler first saw memory.available below the
	// threshold; Recovered when it saw it back (zero when it did not).
	Crossed   time.Time `json:"crossed,omitzero"`
	Recovered time.Time `json:"recovered,omitzero"`
	// CrossedReclaimable is when the sampler first saw memory.available
	// below the threshold by the reclaimable rule (clean page cache counts
	// as available: EvictionReclaimableMemory's rule, computed by the
	// sampler on its own); memory scenarios only.
	CrossedReclaimable time.Time `json:"crossedReclaimable,omitzero"`
	// KillCall is when the kubelet logged that it must evict pods, right
	// before it ranks them and calls the kill (both kubelets log it).
	KillCall time.Time `json:"killCall,omitzero"`
	// ReclaimStart is when the pass that made the kill call logged that it
	// attempts to reclaim, before node-level reclaim.
	ReclaimStart time.Time `json:"reclaimStart,omitzero"`
	// FirstKill is the earliest SIGTERM a hog logged, and TakenAtKill what
	// that hog had taken then (MiB). The kill goes through the kubelet's
	// pod worker between KillCall and FirstKill.
	FirstKill   time.Time `json:"firstKill,omitzero"`
	TakenAtKill int64     `json:"takenAtKillMiB"`
	// Evicted and OOMKilled count hogs by how they ended (OOMKilled: the
	// kernel's OOM killer killed a process of the hog, by the kernel's
	// log); Needed is how many had to go.
	Evicted   int `json:"evicted"`
	OOMKilled int `json:"oomKilled"`
	Needed    int `json:"needed"`
	// StatusOOMKilled counts hogs with a container whose status says
	// OOMKilled (containerd's account; OOMKilled is the kernel's).
	StatusOOMKilled int `json:"statusOOMKilled"`
	// Grace is the soft threshold's grace period (SoftGrace scenarios);
	// GraceStart is when the kubelet's first pass observed the signal
	// below the threshold, and Acted when a pass first acted on it after
	// that (both from the kubelet's log).
	Grace      time.Duration `json:"grace,omitempty"`
	GraceStart time.Time     `json:"graceStart,omitzero"`
	Acted      time.Time     `json:"acted,omitzero"`
	// StartDelay is the random wait between the kubelet's restart with the
	// run's configuration and the hogs' start.
	StartDelay time.Duration `json:"startDelay"`
	// Pressure (PageCache scenarios): the node reported MemoryPressure
	// while the run watched it.
	Pressure bool `json:"pressure,omitempty"`
	// BystanderEvicted (CachedBystander scenarios): the kubelet evicted
	// the bystander, whose memory is all clean page cache.
	BystanderEvicted bool `json:"bystanderEvicted,omitempty"`
	// Full (DiskBurst scenarios): the writer ran out of room before its
	// SIGTERM: the filesystem filled.
	Full bool `json:"full,omitempty"`
	// CgroupV2: the node ran on the unified hierarchy.
	CgroupV2 bool `json:"cgroupV2,omitempty"`
	// Error is set when the run could not be measured.
	Error string `json:"error,omitempty"`
}

// LatencyMs is the time from the crossing to the kill call, in
// milliseconds, and whether both were seen.
func (r Result) LatencyMs() (float64, bool) { return msBetween(r.Crossed, r.KillCall) }

// ReclaimableLatencyMs is the time from the crossing by the reclaimable
// rule to the kill call, in milliseconds, and whether both were seen.
func (r Result) ReclaimableLatencyMs() (float64, bool) {
	return msBetween(r.CrossedReclaimable, r.KillCall)
}

// ReclaimMs is the time from the start of the pass's node-level reclaim
// to its kill call, in milliseconds, and whether both were seen.
func (r Result) ReclaimMs() (float64, bool) { return msBetween(r.ReclaimStart, r.KillCall) }

// TerminationMs is the time from the crossing to the first victim's
// SIGTERM, the start of its termination.
func (r Result) TerminationMs() (float64, bool) { return msBetween(r.Crossed, r.FirstKill) }

func msBetween(a, b time.Time) (float64, bool) {
	if a.IsZero() || b.IsZero() {
		return 0, false
	}
	return float64(b.Sub(a).Microseconds()) / 1000, true
}

// GraceLateMs is the time from the soft grace period's expiry to the pass
// that acted on it, in milliseconds (negative: before it).
func (r Result) GraceLateMs() (float64, bool) {
	if r.GraceStart.IsZero() {
		return 0, false
	}
	return msBetween(r.GraceStart.Add(r.Grace), r.Acted)
}

// RecoverySeconds is the time from the crossing to the recovery that
// followed the first kill (or the crossing, when no hog was killed).
func (r Result) RecoverySeconds() (float64, bool) {
	if r.Crossed.IsZero() || r.Recovered.IsZero() {
		return 0, false
	}
	return r.Recovered.Sub(r.Crossed).Seconds(), true
}

// ReliefSeconds is the time from the first kill to the recovery.
func (r Result) ReliefSeconds() (float64, bool) {
	if r.FirstKill.IsZero() || r.Recovered.IsZero() {
		return 0, false
	}
	return r.Recovered.Sub(r.FirstKill).Seconds(), true
}

// OverEvicted is how many hogs were evicted beyond those needed.
func (r Result) OverEvicted() int { return max(r.Evicted-r.Needed, 0) }

// Runner runs scenarios on one node.
type Runner struct {
	F *nodeharness.Framework
	// CgroupV2: the node runs on the unified hierarchy (f.CgroupV2).
	CgroupV2 bool
	// Log receives progress lines.
	Log func(format string, args ...any)
}

// Run runs one scenario once on the kubelet the node runs now, and cleans
// up after itself (namespace, kubelet configuration) however it ends.
func (r *Runner) Run(ctx context.Context, s Scenario, round int) (res Result) {
	f := r.F
	res = Result{Scenario: s.Name, Kubelet: f.Kubelet, Round: round, Start: time.Now(), Needed: s.Needed, CgroupV2: r.CgroupV2, Grace: s.SoftGrace}
	fail := func(err error) Result {
		res.Error = err.Error()
		return res
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, settleTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.NodePressures(ctx)
		return err == nil && len(p) == 0, nil
	}); err != nil {
		return fail(fmt.Errorf("the node did not settle without pressure: %w", err))
	}
	if s.DiskBurst != nil {
		// Image garbage collection, which runs before any disk eviction,
		// must find nothing to free: the writer alone ends the pressure.
		if _, err := f.PruneImages(ctx); err != nil {
			return fail(err)
		}
	}
	obs, err := f.Observe(ctx)
	if err != nil {
		return fail(err)
	}
	if d := s.DiskBurst; d != nil {
		size, err := resource.ParseQuantity(d.Size)
		if err != nil {
			return fail(fmt.Errorf("scenario %s: writer size %q: %w", s.Name, d.Size, err))
		}
		if obs.NodeFsAvailable >= size.Value() {
			return fail(fmt.Errorf("scenario %s needs a node whose nodefs has less free than the writer's %s (the small one: NODE=<cluster>-worker2); %s has %d MiB",
				s.Name, d.Size, f.Node, obs.NodeFsAvailable/nodeharness.Mi))
		}
	}
	ns, err := f.CreateNamespace(ctx, strings.ToLower(s.Name))
	if err != nil {
		return fail(err)
	}
	defer func() {
		cctx := context.WithoutCancel(ctx)
		if err := f.DeleteNamespace(cctx, ns); err != nil && res.Error == "" {
			res.Error = "cleanup: " + err.Error()
		}
		if err := f.RestoreKubeletConfig(cctx); err != nil && res.Error == "" {
			res.Error = "cleanup: " + err.Error()
		}
	}()

	if s.CachedBystander != "" {
		if obs, err = r.cacheFirst(ctx, ns, s.CachedBystander); err != nil {
			return fail(err)
		}
	}
	if _, err := f.CreatePod(ctx, ns, r.samplerPod(s, obs)); err != nil {
		return fail(err)
	}
	if err := waitLog(ctx, f, ns, s.sampler(), s.sampler()+": sampling"); err != nil {
		return fail(err)
	}
	configure := func() error {
		return f.UpdateKubeletConfig(ctx, func(c *kubeletconfig.KubeletConfiguration) {
			c.EvictionPressureTransitionPeriod = metav1.Duration{Duration: transition}
			s.configure(c, obs)
			if r.CgroupV2 {
				c.KernelMemcgNotification = true
			}
			if f.Kubelet == nodeharness.KubeletEvictkit {
				c.FeatureGates = maps.Clone(c.FeatureGates)
				if c.FeatureGates == nil {
					c.FeatureGates = map[string]bool{}
				}
				maps.Copy(c.FeatureGates, Gates)
				if r.CgroupV2 {
					maps.Copy(c.FeatureGates, GatesV2)
				}
			}
		})
	}
	if !s.HoldFirst {
		if err := configure(); err != nil {
			return fail(err)
		}
		res.StartDelay = rand.N(housekeeping)
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(res.StartDelay):
		}
	}
	if d := s.DuringSoft; d != nil {
		if err := r.softEvictionFirst(ctx, ns, d); err != nil {
			return fail(err)
		}
	}
	hogs := s.pods(f)
	// The kubelet removes an evicted pod's containers and their logs at
	// once: what the hogs log is followed from the start.
	logs := map[string]*nodeharness.LogFollower{}
	for _, p := range hogs {
		if _, err := f.CreatePod(ctx, ns, p); err != nil {
			return fail(err)
		}
		logs[p.Name] = f.FollowContainerLog(ctx, ns, p.Name)
	}
	if s.PageCache != "" {
		if err := r.watchPageCache(ctx, ns, &res); err != nil {
			return fail(err)
		}
		if err := r.collect(ctx, ns, s, hogs, logs, s.level(obs), &res); err != nil {
			return fail(err)
		}
		return res
	}
	if s.HoldFirst {
		for _, p := range hogs {
			if err := waitLog(ctx, f, ns, p.Name, workloadlog.Holding); err != nil {
				return fail(err)
			}
		}
		if err := configure(); err != nil {
			return fail(err)
		}
	}
	// Every hog but those the pressure spares ends; then the signal must be
	// back and stay back a while, so late evictions are counted too. After
	// a soft eviction the soft victim must have ended too: upstream's
	// kubelet evicts no hog before, and after it none may be needed.
	var ended []string
	timeout, done := outcomeTimeout, func() bool { return len(ended) >= s.Needed }
	if d := s.DuringSoft; d != nil {
		timeout = time.Duration(d.PodGrace)*time.Second*3/2 + outcomeTimeout
		victim := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: softVictim}}}
		done = func() bool {
			gone, err := endedHogs(ctx, f, ns, victim)
			return err == nil && len(gone) > 0
		}
	}
	err = wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		ended, err = endedHogs(ctx, f, ns, hogs)
		return err == nil && done(), nil
	})
	if err != nil {
		return fail(fmt.Errorf("the run did not end within %s (hogs ended: %v): %w", timeout, ended, err))
	}
	select {
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(afterRelief):
	}
	if err := waitSigtermedEnded(ctx, f, ns, hogs, logs); err != nil {
		return fail(err)
	}
	if err := r.collect(ctx, ns, s, hogs, logs, s.level(obs), &res); err != nil {
		return fail(err)
	}
	return res
}

// waitSigtermedEnded waits until every hog that has logged a SIGTERM has
// ended, so that a kill still in progress is counted by how it ends. The
// run's end condition does not ensure it: after a soft eviction it waits
// for the soft victim only, and kubelet-upstream's pass right after that
// victim's cleanup can still evict a hog, whose kill has taken 30 s there.
func waitSigtermedEnded(ctx context.Context, f *nodeharness.Framework, ns string, hogs []*corev1.Pod, logs map[string]*nodeharness.LogFollower) error {
	var waiting []string
	err := wait.PollUntilContextTimeout(ctx, poll, outcomeTimeout, true, func(ctx context.Context) (bool, error) {
		ended, err := endedHogs(ctx, f, ns, hogs)
		if err != nil {
			return false, nil
		}
		texts := map[string][]string{}
		for _, p := range hogs {
			lines, _ := logs[p.Name].Lines()
			texts[p.Name] = nodeharness.Texts(lines)
		}
		waiting = sigtermedNotEnded(hogs, texts, ended)
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("hogs %v logged a SIGTERM and did not end within %s: %w", waiting, outcomeTimeout, err)
	}
	return nil
}

// sigtermedNotEnded are the hogs, in order, that have a SIGTERM among
// their log lines and are not among the ended ones.
func sigtermedNotEnded(hogs []*corev1.Pod, lines map[string][]string, ended []string) []string {
	var out []string
	for _, p := range hogs {
		if _, ok := workloadlog.FirstSigterm(lines[p.Name]); ok && !slices.Contains(ended, p.Name) {
			out = append(out, p.Name)
		}
	}
	return out
}

// samplerPod is the scenario's sampler: of the node's memory cgroup (v1's
// memory hierarchy, or v2's root), or for a disk scenario of nodefs,
// through a directory of the kubelet's that holds no mounts.
func (r *Runner) samplerPod(s Scenario, obs nodeharness.Observations) *corev1.Pod {
	level := strconv.FormatInt(s.level(obs), 10)
	critical := nodeharness.PriorityClass("system-node-critical")
	if s.DiskBurst != nil {
		return r.F.Pod(s.sampler(), []string{"diskwatch", "-dir", nodefsSampleDir, "-level", level, "-interval", samplerInterval},
			critical, nodeharness.HostPathReadOnly("nodefs", nodefsSampleDir))
	}
	memcg := "/sys/fs/cgroup/memory"
	if r.CgroupV2 {
		memcg = "/sys/fs/cgroup"
	}
	return r.F.Pod(s.sampler(), []string{"memwatch", "-cgroup", memcg,
		"-capacity", strconv.FormatInt(obs.MemoryCapacity, 10), "-level", level, "-interval", samplerInterval},
		critical, nodeharness.HostPathReadOnly("cgroup", "/sys/fs/cgroup"))
}

// nodefsSampleDir is a directory of the kubelet's root, on nodefs, with
// no mounts inside (the plugin registration sockets).
const nodefsSampleDir = "/var/lib/kubelet/plugins_registry"

// softEvictionFirst starts a DuringSoft scenario: it creates the soft
// victim and waits until the kubelet has recorded its Evicted event.
func (r *Runner) softEvictionFirst(ctx context.Context, ns string, d *SoftEviction) error {
	f := r.F
	if _, err := f.CreatePod(ctx, ns, d.softVictimPod(f)); err != nil {
		return err
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, poll, outcomeTimeout, true, func(ctx context.Context) (bool, error) {
		events, err := f.PodEvents(ctx, ns, softVictim, nodeharness.EvictedReason)
		last = err
		return err == nil && len(events) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("the soft threshold did not evict %s within %s (%v): %w", softVictim, outcomeTimeout, last, err)
	}
	return nil
}

// cacheFirst starts a CachedBystander scenario: it creates the bystander,
// a high-priority reader of a file of size, waits until it holds the file
// in page cache, and observes the node again.
func (r *Runner) cacheFirst(ctx context.Context, ns, size string) (nodeharness.Observations, error) {
	f := r.F
	if _, err := f.CreatePod(ctx, ns, pageCachePod(f, size, nodeharness.PriorityClass(nodeharness.HighPriority))); err != nil {
		return nodeharness.Observations{}, err
	}
	if err := waitLog(ctx, f, ns, pageCacheReader, workloadlog.Holding); err != nil {
		return nodeharness.Observations{}, err
	}
	return f.Observe(ctx)
}

// passesWatched is how many of the kubelet's monitoring passes a PageCache
// run watches once the reader holds its cache.
const passesWatched = 3

// watchPageCache waits until the reader holds its cache, then until the
// kubelet has logged passesWatched monitoring passes, recording whether
// the node reported MemoryPressure meanwhile. It watches the passes even
// after an eviction: the condition reaches the node's status later.
func (r *Runner) watchPageCache(ctx context.Context, ns string, res *Result) error {
	f := r.F
	if err := waitLog(ctx, f, ns, pageCacheReader, workloadlog.Holding); err != nil {
		return err
	}
	since := time.Now()
	var passes []nodeharness.Observed
	return wait.PollUntilContextTimeout(ctx, poll, outcomeTimeout, true, func(ctx context.Context) (bool, error) {
		n, err := f.GetNode(ctx)
		if err != nil {
			return false, nil
		}
		if nodeharness.HasCondition(n, corev1.NodeMemoryPressure) {
			res.Pressure = true
		}
		if passes, err = f.Observations(ctx, since, "memory.available"); err != nil {
			return false, nil
		}
		return len(passes) >= passesWatched, nil
	})
}

// endedHogs lists the hogs that are no longer running.
func endedHogs(ctx context.Context, f *nodeharness.Framework, ns string, hogs []*corev1.Pod) ([]string, error) {
	pods, err := f.Pods(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		if isHog(p.Name, hogs) && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

func isHog(name string, hogs []*corev1.Pod) bool {
	return slices.ContainsFunc(hogs, func(p *corev1.Pod) bool { return p.Name == name })
}

// collect fills in the measurements from the sampler's and the hogs' logs
// and the hogs' statuses.
func (r *Runner) collect(ctx context.Context, ns string, s Scenario, hogs []*corev1.Pod, logs map[string]*nodeharness.LogFollower, level int64, res *Result) error {
	f := r.F
	lines, err := f.ContainerLog(ctx, ns, s.sampler())
	if err != nil {
		return err
	}
	recoveries := samplerCrossings(nodeharness.Texts(lines), res, !s.Allocatable)
	journal, err := f.KubeletJournal(ctx, res.Start)
	if err != nil {
		return err
	}
	res.ReclaimStart, res.KillCall = killCallTimes(journal, res.Start, res.Crossed)
	if res.Grace > 0 {
		if err := graceTimes(journal, level, res); err != nil {
			return err
		}
	}
	pods, err := f.Pods(ctx, ns)
	if err != nil {
		return err
	}
	killed, err := kernelKilledPods(ctx, f, res.Start)
	if err != nil {
		return fmt.Errorf("reading the kernel's OOM kills: %w", err)
	}
	for _, p := range pods {
		if s.CachedBystander != "" && p.Name == pageCacheReader && isEvicted(&p) {
			res.BystanderEvicted = true
		}
		if !isHog(p.Name, hogs) {
			continue
		}
		kernelOOM, statusOOM := killed[string(p.UID)], statusOOMKilled(&p)
		if statusOOM {
			res.StatusOOMKilled++
		}
		switch {
		case kernelOOM:
			res.OOMKilled++
		case isEvicted(&p):
			res.Evicted++
		}
		hl, err := logs[p.Name].Lines()
		if err != nil {
			if kernelOOM || statusOOM {
				// The kernel killed it before it logged a line (within a
				// second of its start): there is no SIGTERM to find.
				continue
			}
			return fmt.Errorf("pod %s: %w", p.Name, err)
		}
		if sig, ok := workloadlog.FirstSigterm(nodeharness.Texts(hl)); ok {
			if res.FirstKill.IsZero() || sig.At.Before(res.FirstKill) {
				res.FirstKill = sig.At
				res.TakenAtKill, _ = sig.TakenMiB()
			}
		}
		if s.DiskBurst != nil && slices.ContainsFunc(hl, func(l nodeharness.LogLine) bool { return strings.HasSuffix(l.Text, outOfRoomSuffix) }) {
			res.Full = true
		}
	}
	res.Recovered = recoveryAfter(recoveries, res.FirstKill, res.Crossed)
	return nil
}

// samplerCrossings sets res's first crossing by the Summary API's rule
// and, with reclaimable, by the reclaimable one from the sampler's lines,
// and returns the recoveries by the Summary API's rule. The signal can
// bounce back over the level for a moment before the kill (the kernel
// reclaims page cache): relief is the recovery that follows the first
// kill. An allocatable scenario passes reclaimable false: its sampler
// reads the node's cgroup, not the pods', and by the reclaimable rule the
// node's own page cache moves that crossing away from the pods' signal.
func samplerCrossings(lines []string, res *Result, reclaimable bool) (recoveries []time.Time) {
	for _, l := range lines {
		c, ok := workloadlog.ParseCrossing(l)
		switch {
		case !ok:
		case c.Rule == workloadlog.RuleReclaimable:
			if reclaimable && !c.Recovered && res.CrossedReclaimable.IsZero() {
				res.CrossedReclaimable = c.At
			}
		case c.Rule != "":
		case c.Recovered:
			recoveries = append(recoveries, c.At)
		case res.Crossed.IsZero():
			res.Crossed = c.At
		}
	}
	return recoveries
}

// isEvicted: the kubelet ended p with an eviction.
func isEvicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == nodeharness.EvictedReason
}

// outOfRoomSuffix ends the line a disk hog logs when the filesystem is
// full (workload disk).
const outOfRoomSuffix = "(no more room)"

// mustEvictLine is what both kubelets log right before they rank the pods
// and kill, and reclaimLine what they log before node-level reclaim, at the
// start of the same pass (pkg/kubelet/eviction, at the default verbosity).
const (
	mustEvictLine = `"Eviction manager: must evict pod(s) to reclaim"`
	reclaimLine   = `"Eviction manager: attempting to reclaim"`
)

// killCallTimes returns, from the kubelet's log lines, the first kill call
// from a second before the crossing on, and when the pass that made it
// began to reclaim (its last reclaim line before the kill call); zero
// times where the log has none.
func killCallTimes(journal []string, start, crossed time.Time) (reclaimStart, killCall time.Time) {
	from := crossed.Add(-time.Second)
	for _, l := range journal {
		isReclaim, isKill := strings.Contains(l, reclaimLine), strings.Contains(l, mustEvictLine)
		if !isReclaim && !isKill {
			continue
		}
		at, ok, _ := nodeharness.KlogTime(l, start)
		if !ok || at.Before(from) {
			continue
		}
		if isKill {
			return reclaimStart, at
		}
		reclaimStart = at
	}
	return time.Time{}, time.Time{}
}

// graceTimes sets when the soft threshold's grace started and when a pass
// first acted after it, from the kubelet's log lines.
func graceTimes(journal []string, level int64, res *Result) error {
	start, ok, err := nodeharness.ParseFirstObservedBelow(journal, res.Start, "memory.available", level)
	if err != nil || !ok {
		return err
	}
	res.GraceStart = start
	acts, err := nodeharness.ParseReclaimAttempts(journal, res.Start)
	if err != nil {
		return err
	}
	for _, at := range acts {
		if at.After(start) {
			res.Acted = at
			break
		}
	}
	return nil
}

// kernelKilledPods are the UIDs of the pods in which the kernel's OOM
// killer killed a process since start, by the kernel's log: the record
// that counts. On cgroup v1 containerd reports every container under a
// memory cgroup that hit its limit as OOMKilled when it ends, however it
// ends (an evicted hog among them).
func kernelKilledPods(ctx context.Context, f *nodeharness.Framework, start time.Time) (map[string]bool, error) {
	kills, err := f.KernelOOMKills(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, k := range kills {
		if !k.At.Before(start) {
			out[k.PodUID] = true
		}
	}
	return out, nil
}

// statusOOMKilled reports whether a container of p has the status
// OOMKilled: containerd's account, reported beside the kernel's.
func statusOOMKilled(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			return true
		}
		if t := c.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
			return true
		}
	}
	return false
}

// waitLog waits until a pod's log has a line starting with prefix.
func waitLog(ctx context.Context, f *nodeharness.Framework, ns, pod, prefix string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, poll, startTimeout, true, func(ctx context.Context) (bool, error) {
		lines, err := f.ContainerLog(ctx, ns, pod)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		return slices.ContainsFunc(lines, func(l nodeharness.LogLine) bool { return strings.HasPrefix(l.Text, prefix) }), nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s did not log %q within %s (%s): %w", ns, pod, prefix, startTimeout, last, err)
	}
	return nil
}

// recoveryAfter is the first of recoveries at or after the first kill
// (after the crossing when no kill was seen); zero if there is none.
func recoveryAfter(recoveries []time.Time, firstKill, crossed time.Time) time.Time {
	from := firstKill
	if from.IsZero() {
		from = crossed
	}
	for _, at := range recoveries {
		if !at.Before(from) {
			return at
		}
	}
	return time.Time{}
}
