//evictkit:file EvictionFastPath

package eviction

import (
	"context"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// evictionFastPath: watch the node's memory cgroup at a sub-second
// interval and decide on fresh cgroup figures as soon as a hard memory
// threshold is met.
const evictionFastPath featuregate.Feature = "EvictionFastPath"

var _ = addAlphaFeature(alphaFeature{
	gate: evictionFastPath,
	// The core learns which of the pods it evicted for memory are gone.
	input: func(m *managerImpl, in *decideInput) { in.cleanedUp = m.cleanupReport() },
	// A pass keeps its stats for the watcher, and does not act for memory
	// while pods evicted for it are still terminating.
	decided: func(m *managerImpl, logger klog.Logger, _ []*v1.Pod, stats podStatsIndex, d *decision) bool {
		if m.fast.memcg != nil {
			m.fast.lastStats = stats
		}
		return heldBack(logger, d, v1.NodeMemoryPressure)
	},
})

// The fast path (EvictionFastPath, alpha): a watcher reads the node's
// memory cgroup every fastPathInterval and, once a hard memory threshold
// is met there (or a memcg notification arrives), runs the core on fresh
// cgroup figures and kills at once, with no Summary API call. No pass
// evicts for memory while earlier memory victims terminate, stats older
// than a fast pass's figures never drive an eviction, and a fast pass that
// evicted nothing is followed by fastPathQuiet.
const (
	// fastPathInterval is how often the watcher reads the node's and the
	// pods' memory cgroups: two small files each per tick. At 50 ms a
	// crossing is seen 25 ms later on average; a hog allocating 1 GiB/s
	// takes 300 MiB of headroom in 300 ms, of which the kubelet's kill
	// path (pod worker, CRI) uses 150-250 ms on a loaded node.
	fastPathInterval = 50 * time.Millisecond
	// fastPathQuiet is the pause after a fast pass that evicted nothing
	// (only critical pods left, say) before the watcher tries again.
	fastPathQuiet = time.Second
)

// fastPathInputs are what the fast path is given when Start starts it.
type fastPathInputs struct {
	// memcg reads the memory cgroups; nil unless the fast path runs (the
	// gate is on and Start could start it).
	memcg *memcgReader
	// podCleanedUp and diskInfo are the kubelet's cleanup check and
	// filesystem layout source; lastStats the pod stats of the last
	// monitoring pass.
	podCleanedUp PodCleanedUpFunc
	diskInfo     DiskInfoProvider
	lastStats    podStatsIndex
	// watching[c] is set while a fast path watches condition
	// conditionOrder[c]'s signals (memory here, disk in disk_fast_path.go).
	watching [len(conditionOrder)]bool
	//evictkit:begin EvictionDiskFastPath
	// disk is the disk fast path's reader; nil unless it runs.
	disk *diskWatch
	//evictkit:end EvictionDiskFastPath
}

// newNodeMemcgReader returns a reader of the node's memory cgroups. The
// machine's memory comes from /proc/meminfo, as cAdvisor reads it; if it
// cannot be read, the watcher waits for the first monitoring pass.
func newNodeMemcgReader(logger klog.Logger, podCgroupRoot string) (*memcgReader, error) {
	mount, err := memoryControllerMount()
	if err != nil {
		return nil, err
	}
	r := &memcgReader{mount: mount, v2: onUnifiedHierarchy(mount), podRoot: podCgroupRoot}
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err == nil {
		r.capacity, err = memTotal(meminfo)
	}
	if err != nil {
		logger.Error(err, "Eviction manager: fast path cannot read the machine's memory from /proc/meminfo; it waits for the first monitoring pass")
	}
	return r, nil
}

// startFastPath starts the watcher, unless no hard memory threshold is
// configured or the memory cgroups cannot be read; it reports whether it
// did.
func (m *managerImpl) startFastPath(ctx context.Context, diskInfo DiskInfoProvider, podFunc ActivePodsFunc, cleanedUp PodCleanedUpFunc) bool {
	logger := klog.FromContext(ctx)
	hasHard := false
	for _, t := range m.config.Thresholds {
		if isHardEvictionThreshold(t) && isMemorySignal(t.Signal) {
			hasHard = true
		}
	}
	if !hasHard {
		logger.Info("Eviction manager: EvictionFastPath is on but no hard memory threshold is configured; the fast path stays off")
		return false
	}
	r := m.fast.memcg
	if r == nil {
		var err error
		if r, err = newNodeMemcgReader(logger, m.config.PodCgroupRoot); err != nil {
			logger.Error(err, "Eviction manager: EvictionFastPath is on but the memory cgroups cannot be found; the fast path stays off")
			return false
		}
	}
	//evictkit:begin EvictionReclaimableMemory
	r.reclaimable = m.alpha[evictionReclaimableMemory]
	//evictkit:end EvictionReclaimableMemory
	if _, err := r.readNode(m.clock.Now(), false); err != nil {
		logger.Error(err, "Eviction manager: EvictionFastPath is on but the memory cgroups cannot be read; the fast path stays off")
		return false
	}
	m.syncMu.Lock()
	m.fast.memcg, m.fast.podCleanedUp, m.fast.diskInfo = r, cleanedUp, diskInfo
	m.fast.watching[conditionIndex(v1.NodeMemoryPressure)] = true
	m.syncMu.Unlock()
	logger.Info("Eviction manager: fast path on", "memoryCgroup", r.mount, "cgroupV2", r.v2, "interval", fastPathInterval)
	go m.watchMemory(ctx, podFunc)
	return true
}

// watchMemory is the fast path's watcher loop, until ctx is done.
func (m *managerImpl) watchMemory(ctx context.Context, podFunc ActivePodsFunc) {
	m.watchLoop(ctx, fastPathInterval, fastPathQuiet, m.memoryCrossed, func(ctx context.Context) []*v1.Pod {
		return m.fastPass(ctx, podFunc, "memory cgroup watcher")
	})
}

// watchLoop is a fast path's watcher, until ctx is done: every interval
// it asks crossed whether a threshold is met and if so runs pass; after a
// pass that evicted nothing (only critical pods left, say) it pauses for
// quiet, after one that evicted it waits until the victims are cleaned up.
func (m *managerImpl) watchLoop(ctx context.Context, interval, quiet time.Duration, crossed func(context.Context) bool, pass func(context.Context) []*v1.Pod) {
	tick := m.clock.NewTicker(interval)
	defer tick.Stop()
	var quietUntil time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		if m.clock.Now().Before(quietUntil) || !crossed(ctx) {
			continue
		}
		evicted := pass(ctx)
		if len(evicted) == 0 {
			quietUntil = m.clock.Now().Add(quiet)
			continue
		}
		m.waitForPodsCleanup(ctx, m.cleanedUpFunc(), evicted)
	}
}

// memoryCrossed reads the node's and the pods' memory cgroups and reports
// whether their figures meet a hard memory threshold. Capacities come from
// the last monitoring pass, or before the first one from the machine's
// memory and the pods' cgroup limit (withFreshMemory).
func (m *managerImpl) memoryCrossed(ctx context.Context) bool {
	m.syncMu.Lock()
	last, thresholds, r := m.state.lastObservations, m.config.Thresholds, m.fast.memcg
	m.syncMu.Unlock()
	if r == nil {
		return false
	}
	fresh, err := r.readNode(m.clock.Now(), false)
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Eviction manager: fast path could not read the memory cgroups", "err", err)
	}
	obs, _ := withFreshMemory(last, nil, nil, fresh)
	return hardMemoryThresholdMet(thresholds, obs)
}

// fastPass decides on fresh memory figures and evicts at once. It returns
// the pods it evicted.
func (m *managerImpl) fastPass(ctx context.Context, podFunc ActivePodsFunc, trigger string) []*v1.Pod {
	logger := klog.FromContext(ctx)
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	// Before the first monitoring pass (the kubelet has just started and
	// the Summary API may not answer yet) it detects the filesystem layout
	// itself and decides on memory alone.
	if m.fast.memcg == nil {
		return nil
	}
	if m.layout == nil && m.fast.diskInfo != nil {
		if err := m.detectLayout(ctx, m.fast.diskInfo); err != nil {
			return nil
		}
	}
	if m.layout == nil || m.rankingUnavailable {
		return nil
	}
	if held := stillTerminating(m.state.inFlight[conditionIndex(v1.NodeMemoryPressure)], m.cleanupReport(), m.clock.Now()); len(held.pods) > 0 {
		return nil
	}
	pods := podFunc()
	fresh, err := m.fast.memcg.readNode(m.clock.Now(), true)
	if err != nil {
		logger.V(4).Info("Eviction manager: fast path could not read every memory cgroup", "err", err)
	}
	obs, stats := withFreshMemory(m.state.lastObservations, m.fast.lastStats, pods, fresh)
	if !hardMemoryThresholdMet(m.config.Thresholds, obs) {
		return nil
	}
	logObservations(logger, "fast path observations", obs)
	in := m.decideInput(obs, pods, stats, fresh.at)
	// Local storage limits are the monitoring loop's: the fast path has
	// nothing fresh about them.
	in.localStorageIsolation = false
	d := decide(in)
	m.state = fastPassState(m.config.Thresholds, &m.state, d.next, v1.NodeMemoryPressure, fresh.at)
	m.setConditions(logger, m.state.conditions(m.config.PressureTransitionPeriod, fresh.at))
	if d.target == nil || signalResource(d.target.threshold.Signal) != v1.ResourceMemory {
		return nil
	}
	ob, _ := obs.get(d.target.threshold.Signal)
	logger.Info("Eviction manager: fast path", "trigger", trigger, "signal", d.target.threshold.Signal,
		"available", ob.available, "threshold", describeThreshold(d.target.threshold), "freshPods", len(fresh.pod))
	return m.relieve(ctx, d.target, pods, obs, m.summaryAfterReclaim)
}

// cleanupReport says which of the pods a fast path evicted that the core
// remembers (state.inFlight) the kubelet has cleaned up.
func (m *managerImpl) cleanupReport() map[*v1.Pod]bool {
	return cleanedUpAmong(allInFlight(&m.state), m.fast.podCleanedUp)
}

// heldBack logs a pass that victims of cond's signals, still terminating,
// held back, and reports whether it was one.
func heldBack(logger klog.Logger, d *decision, cond v1.NodeConditionType) bool {
	if len(d.heldFor) == 0 || d.heldCondition != cond {
		return false
	}
	logger.Info("Eviction manager: pods evicted for this pressure are still terminating; not evicting more for it yet", "condition", cond, "pods", klog.KObjSlice(d.heldFor))
	return true
}

// fastPathWatches reports whether a fast path watches the condition that
// signal reports: the pods evicted for it are then tracked until the
// kubelet has cleaned them up.
func (m *managerImpl) fastPathWatches(signal evictionapi.Signal) bool {
	c := signalConditionIndex(signal)
	return c >= 0 && m.fast.watching[c]
}

// cleanedUpAmong asks the kubelet which of pods it has cleaned up; nil
// when there are none to ask about or nothing to ask.
func cleanedUpAmong(pods []*v1.Pod, cleanedUp PodCleanedUpFunc) map[*v1.Pod]bool {
	if len(pods) == 0 || cleanedUp == nil {
		return nil
	}
	out := make(map[*v1.Pod]bool, len(pods))
	for _, p := range pods {
		if cleanedUp(p) {
			out[p] = true
		}
	}
	return out
}

// cleanedUpFunc returns the kubelet's PodCleanedUpFunc, or one that says
// every pod is cleaned up if Start has not been given one.
func (m *managerImpl) cleanedUpFunc() PodCleanedUpFunc {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	if m.fast.podCleanedUp == nil {
		return func(*v1.Pod) bool { return true }
	}
	return m.fast.podCleanedUp
}
