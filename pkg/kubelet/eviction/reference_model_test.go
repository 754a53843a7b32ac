//evictkit:file fuzz

package eviction

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	v1resource "k8s.io/kubernetes/pkg/api/v1/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// The reference model: upstream's eviction rules restated from their
// documentation (kubernetes.io "Node-pressure Eviction", this README's
// "Behaviour" and the alpha gates' sections), independently of this
// package's code. It shares nothing with the decision core but the input
// types and Kubernetes' own request arithmetic (GetResourceRequestQuantity),
// carries its own state from pass to pass, and is what the fuzz targets
// hold the core to. It covers thresholds, conditions, the choice of the
// threshold to relieve, ranking, victims, grace periods, minimum reclaim,
// reclaim-sized selection, PSI thresholds and explanations; local storage
// limits are not modelled.

// refClass is the ranking rule of a resource.
type refClass int

const (
	refMemory refClass = iota
	refPIDs
	refDiskBytes
	refDiskInodes
)

// refFs is the filesystem a disk signal watches.
type refFs int

const (
	refNoFs refFs = iota
	refNodeFs
	refImageFs
	refContainerFs
)

// refSignal is what the documentation says of one signal.
type refSignal struct {
	condition v1.NodeConditionType
	class     refClass
	fs        refFs
	// order is the signal's place in the fixed reclaim order.
	order int
	// psi signals are met above their threshold, and have no minimum
	// reclaim nor sizing.
	psi bool
}

// refSignals: the reclaim order is memory.available,
// allocatableMemory.available, the PSI signals (orders 2 and 3, added by
// EvictionPSI's fzAlphaFeature), nodefs (bytes, inodes), imagefs,
// containerfs, pid.available.
var refSignals = map[evictionapi.Signal]refSignal{
	evictionapi.SignalMemoryAvailable:            {condition: v1.NodeMemoryPressure, class: refMemory, order: 0},
	evictionapi.SignalAllocatableMemoryAvailable: {condition: v1.NodeMemoryPressure, class: refMemory, order: 1},
	evictionapi.SignalNodeFsAvailable:            {condition: v1.NodeDiskPressure, class: refDiskBytes, fs: refNodeFs, order: 4},
	evictionapi.SignalNodeFsInodesFree:           {condition: v1.NodeDiskPressure, class: refDiskInodes, fs: refNodeFs, order: 5},
	evictionapi.SignalImageFsAvailable:           {condition: v1.NodeDiskPressure, class: refDiskBytes, fs: refImageFs, order: 6},
	evictionapi.SignalImageFsInodesFree:          {condition: v1.NodeDiskPressure, class: refDiskInodes, fs: refImageFs, order: 7},
	evictionapi.SignalContainerFsAvailable:       {condition: v1.NodeDiskPressure, class: refDiskBytes, fs: refContainerFs, order: 8},
	evictionapi.SignalContainerFsInodesFree:      {condition: v1.NodeDiskPressure, class: refDiskInodes, fs: refContainerFs, order: 9},
	evictionapi.SignalPIDAvailable:               {condition: v1.NodePIDPressure, class: refPIDs, order: 10},
}

// refConditions are the node conditions in the order they are reported.
var refConditions = []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure}

// refObservation is one signal's figure as the Summary API gives it.
type refObservation struct {
	available, capacity int64
	at                  time.Time
}

// refObserve reads the signals off a summary: memory.available is the
// node's available memory out of available + working set;
// allocatableMemory.available the same for the "pods" system container;
// each filesystem's available bytes out of capacity and free inodes out
// of inodes; pid.available is the PID limit minus running processes. A
// signal whose figures are missing is not observed. Unsigned counters are
// taken as int64 by a plain conversion, as upstream takes them.
func refObserve(s *statsapi.Summary) map[evictionapi.Signal]refObservation {
	out := map[evictionapi.Signal]refObservation{}
	if s == nil {
		return out
	}
	mem := func(sig evictionapi.Signal, m *statsapi.MemoryStats) {
		if m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
			out[sig] = refObservation{available: int64(*m.AvailableBytes), capacity: int64(*m.AvailableBytes + *m.WorkingSetBytes), at: m.Time.Time}
		}
	}
	fs := func(bytes, inodes evictionapi.Signal, f *statsapi.FsStats) {
		if f == nil {
			return
		}
		if f.AvailableBytes != nil && f.CapacityBytes != nil {
			out[bytes] = refObservation{available: int64(*f.AvailableBytes), capacity: int64(*f.CapacityBytes), at: f.Time.Time}
		}
		if f.InodesFree != nil && f.Inodes != nil {
			out[inodes] = refObservation{available: int64(*f.InodesFree), capacity: int64(*f.Inodes), at: f.Time.Time}
		}
	}
	mem(evictionapi.SignalMemoryAvailable, s.Node.Memory)
	for i := range s.Node.SystemContainers {
		if c := &s.Node.SystemContainers[i]; c.Name == "pods" {
			mem(evictionapi.SignalAllocatableMemoryAvailable, c.Memory)
			break
		}
	}
	fs(evictionapi.SignalNodeFsAvailable, evictionapi.SignalNodeFsInodesFree, s.Node.Fs)
	if rt := s.Node.Runtime; rt != nil {
		fs(evictionapi.SignalImageFsAvailable, evictionapi.SignalImageFsInodesFree, rt.ImageFs)
		fs(evictionapi.SignalContainerFsAvailable, evictionapi.SignalContainerFsInodesFree, rt.ContainerFs)
	}
	if rl := s.Node.Rlimit; rl != nil && rl.MaxPID != nil && rl.NumOfRunningProcesses != nil {
		out[evictionapi.SignalPIDAvailable] = refObservation{available: *rl.MaxPID - int64(*rl.NumOfRunningProcesses), capacity: *rl.MaxPID, at: rl.Time.Time}
	}
	return out
}

// refAmount is a threshold value against a capacity: a quantity, or a
// percentage of the capacity truncated to a whole unit.
func refAmount(v evictionapi.ThresholdValue, capacity int64) *big.Int {
	if v.Quantity != nil {
		return big.NewInt(v.Quantity.Value())
	}
	return big.NewInt(int64(float64(capacity) * float64(v.Percentage)))
}

// refMet says whether an observation meets a threshold: a signal that
// shrinks under pressure is met while strictly below the threshold (with
// reclaim, the threshold plus its minimum reclaim); a PSI signal while
// strictly above its share. A threshold with another operator than its
// signal's is never met.
func refMet(t evictionapi.Threshold, ob refObservation, reclaim bool) bool {
	if sig, ok := refSignals[t.Signal]; ok && sig.psi {
		return t.Operator == "GreaterThan" && t.Value.Quantity != nil && ob.available > t.Value.Quantity.MilliValue()
	}
	if t.Operator != evictionapi.OpLessThan {
		return false
	}
	return refLevel(t, ob.capacity, reclaim).Cmp(big.NewInt(ob.available)) > 0
}

// refLevel is the amount below which a threshold is met; with reclaim,
// its minimum reclaim on top.
func refLevel(t evictionapi.Threshold, capacity int64, reclaim bool) *big.Int {
	level := refAmount(t.Value, capacity)
	if reclaim && t.MinReclaim != nil {
		level.Add(level, refAmount(*t.MinReclaim, capacity))
	}
	return level
}

// refPod is one active pod as the ranking sees it.
type refPod struct {
	pod      *v1.Pod
	hasStats bool
	priority int64
	// usage and request of the starved resource; exceeds is usage >
	// request; excess is what the ranking compares: usage minus the
	// request upstream subtracts (for inodes, the ephemeral-storage one).
	usage, request, excess *big.Int
	exceeds                bool
	critical               bool
}

// refKeyNames name the components of a ranking key, for explanations.
var refKeyNames = map[refClass][]string{
	refMemory:     {"no-stats", "exceeds-request", "priority", "usage"},
	refDiskBytes:  {"no-stats", "exceeds-request", "priority", "usage"},
	refDiskInodes: {"no-stats", "exceeds-request", "priority", "usage"},
	refPIDs:       {"priority", "no-stats", "usage"},
}

// key is the pod's sort key: smaller goes first. Memory and disk: pods
// without stats, then pods above their request, then lower priority,
// then more usage above the request. PIDs: lower priority, then pods
// without stats, then more processes.
func (p *refPod) key(class refClass) []*big.Int {
	flag := func(b bool) *big.Int {
		if b {
			return big.NewInt(0)
		}
		return big.NewInt(1)
	}
	neg := func(x *big.Int) *big.Int {
		if !p.hasStats {
			return big.NewInt(0)
		}
		return new(big.Int).Neg(x)
	}
	prio := big.NewInt(p.priority)
	if class == refPIDs {
		return []*big.Int{prio, flag(!p.hasStats), neg(p.usage)}
	}
	exceeds := p.hasStats && p.exceeds
	return []*big.Int{flag(!p.hasStats), flag(exceeds), prio, neg(p.excess)}
}

// refCompareKeys returns the first component where a and b differ and
// its sign (-1: a first), or -1, 0 when they are equal.
func refCompareKeys(a, b []*big.Int) (int, int) {
	for i := range a {
		if c := a[i].Cmp(b[i]); c != 0 {
			return i, c
		}
	}
	return -1, 0
}

// refTieBefore is the fixed order of pods equal on every rule:
// namespace, name, UID.
func refTieBefore(a, b *v1.Pod) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

// refCritical: static pods, mirror pods and pods at system-critical
// priority (2000000000 and above) are never evicted.
func refCritical(p *v1.Pod) bool {
	if p.Annotations["kubernetes.io/config.source"] == "file" {
		return true
	}
	if _, mirror := p.Annotations["kubernetes.io/config.mirror"]; mirror {
		return true
	}
	return p.Spec.Priority != nil && *p.Spec.Priority >= 2000000000
}

// refClamp is a counter as an int64, at most MaxInt64 (sums of counters
// saturate there too: the model's one concession to fixed-width
// arithmetic, a documented property of the package).
func refClamp(v *uint64) *big.Int {
	if v == nil {
		return big.NewInt(0)
	}
	x := new(big.Int).SetUint64(*v)
	return refSat(x)
}

var refMaxInt64 = big.NewInt(math.MaxInt64)

func refSat(x *big.Int) *big.Int {
	if x.Cmp(refMaxInt64) > 0 {
		return new(big.Int).Set(refMaxInt64)
	}
	return x
}

// refDiskParts says which parts of a pod's local storage count against
// a disk signal, per filesystem layout (upstream's documentation):
//
//	one filesystem:        writable layers, logs, local volumes
//	dedicated imagefs:     nodefs: logs, local volumes;
//	                       imagefs and containerfs: writable layers
//	split image/container: nodefs and containerfs: layers, logs, volumes;
//	                       imagefs: images only (no per-pod figure)
func refDiskParts(layout fsLayout, fs refFs) (layers, logs, volumes bool) {
	switch {
	case layout.dedicatedImageFs && layout.splitContainerFs:
		if fs == refImageFs {
			return false, false, false
		}
		return true, true, true
	case layout.dedicatedImageFs:
		if fs == refNodeFs {
			return false, true, true
		}
		return true, false, false
	}
	return true, true, true
}

// refLocalVolume: volumes whose data the ranking counts as the pod's:
// hostPath, and the kubelet's local ephemeral kinds (emptyDir on the
// node's disk, i.e. the default medium, configMap, gitRepo). Not
// downwardAPI or secret volumes, nor emptyDir in memory or hugepages.
func refLocalVolume(v *v1.Volume) bool {
	switch {
	case v.HostPath != nil, v.ConfigMap != nil, v.GitRepo != nil:
		return true
	case v.EmptyDir != nil:
		return v.EmptyDir.Medium == v1.StorageMediumDefault
	}
	return false
}

// refDiskUsage sums a pod's bytes and inodes over the counted parts.
func refDiskUsage(p *v1.Pod, s *statsapi.PodStats, layers, logs, volumes bool) (*big.Int, *big.Int) {
	b, in := new(big.Int), new(big.Int)
	add := func(f *statsapi.FsStats) {
		if f == nil {
			return
		}
		b = refSat(b.Add(b, refClamp(f.UsedBytes)))
		in = refSat(in.Add(in, refClamp(f.InodesUsed)))
	}
	for i := range s.Containers {
		if layers {
			add(s.Containers[i].Rootfs)
		}
		if logs {
			add(s.Containers[i].Logs)
		}
	}
	if volumes {
		for i := range p.Spec.Volumes {
			v := &p.Spec.Volumes[i]
			if !refLocalVolume(v) {
				continue
			}
			for j := range s.VolumeStats {
				if s.VolumeStats[j].Name == v.Name {
					add(&s.VolumeStats[j].FsStats)
					break
				}
			}
		}
	}
	return b, in
}

func refRequest(p *v1.Pod, name v1.ResourceName) *big.Int {
	q := v1resource.GetResourceRequestQuantity(p, name)
	return big.NewInt(q.Value())
}

// refRank ranks the active pods for a signal, first victim first.
func refRank(pods []*v1.Pod, stats map[types.UID]*statsapi.PodStats, sig refSignal, layout fsLayout) []refPod {
	var out []refPod
	for _, p := range pods {
		if p == nil {
			continue
		}
		rp := refPod{pod: p, usage: new(big.Int), request: new(big.Int), excess: new(big.Int), critical: refCritical(p)}
		if p.Spec.Priority != nil {
			rp.priority = int64(*p.Spec.Priority)
		}
		s := stats[p.UID]
		rp.hasStats = s != nil
		if s != nil {
			switch sig.class {
			case refMemory:
				if s.Memory != nil {
					rp.usage = refClamp(s.Memory.WorkingSetBytes)
				}
				rp.request = refRequest(p, v1.ResourceMemory)
				rp.excess = new(big.Int).Sub(rp.usage, rp.request)
			case refPIDs:
				if s.ProcessStats != nil {
					rp.usage = refClamp(s.ProcessStats.ProcessCount)
				}
			case refDiskBytes, refDiskInodes:
				layers, logs, volumes := refDiskParts(layout, sig.fs)
				b, in := refDiskUsage(p, s, layers, logs, volumes)
				if sig.class == refDiskBytes {
					rp.usage, rp.request = b, refRequest(p, v1.ResourceEphemeralStorage)
				} else {
					rp.usage, rp.request = in, refRequest(p, "inodes")
				}
				rp.excess = new(big.Int).Sub(rp.usage, refRequest(p, v1.ResourceEphemeralStorage))
			}
			rp.exceeds = rp.usage.Cmp(rp.request) > 0
		}
		out = append(out, rp)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if _, c := refCompareKeys(out[i].key(sig.class), out[j].key(sig.class)); c != 0 {
			return c < 0
		}
		return refTieBefore(out[i].pod, out[j].pod)
	})
	return out
}

// refVictim is a pod the model evicts.
type refVictim struct {
	uid   types.UID
	rank  int
	grace int64
	// rule, runnerUp and runnerUpRank explain the choice (EvictionExplain).
	rule         string
	runnerUp     types.UID
	runnerUpRank int
}

// refOutcome is what the model decides in one pass.
type refOutcome struct {
	met, acting []bool
	conditions  []v1.NodeConditionType
	// target is the index of the threshold relieved, -1 for none;
	// actionable are the thresholds that could have been, in order.
	target     int
	actionable []int
	ranked     []types.UID
	victims    []refVictim
	// covered says whether a reclaim-sized selection covered the shortfall.
	covered bool
}

func (o refOutcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "met=%v acting=%v conditions=%v target=%d ranked=%v", o.met, o.acting, o.conditions, o.target, o.ranked)
	for _, v := range o.victims {
		fmt.Fprintf(&b, " victim{%s rank=%d grace=%d rule=%s runnerUp=%s@%d}", v.uid, v.rank, v.grace, v.rule, v.runnerUp, v.runnerUpRank)
	}
	return b.String()
}

// refGates are the alpha gates the model follows.
type refGates struct {
	reclaimSized, explain bool
}

// refModel carries the model's state from pass to pass.
type refModel struct {
	thresholds []evictionapi.Threshold
	layout     fsLayout
	transition time.Duration
	maxGrace   int64
	gates      refGates

	firstMet     []time.Time
	acting       []bool
	conditionAt  map[v1.NodeConditionType]time.Time
	lastObs      map[evictionapi.Signal]refObservation
	psiEvictedAt time.Time
}

func newRefModel(thresholds []evictionapi.Threshold, layout fsLayout, transition time.Duration, maxGrace int64, gates refGates) *refModel {
	return &refModel{
		thresholds: thresholds, layout: layout, transition: transition, maxGrace: maxGrace, gates: gates,
		firstMet:    make([]time.Time, len(thresholds)),
		acting:      make([]bool, len(thresholds)),
		conditionAt: map[v1.NodeConditionType]time.Time{},
	}
}

// refPSISettle and refPSISettleMax: after a PSI eviction, PSI thresholds
// evict nothing for 10 s, then, until a minute has passed, nothing while
// their signal is lower than at the previous pass.
const (
	refPSISettle    = 10 * time.Second
	refPSISettleMax = time.Minute
)

// refStats indexes a summary's pod stats by pod UID; of two entries for
// one UID the later counts.
func refStats(s *statsapi.Summary) map[types.UID]*statsapi.PodStats {
	out := map[types.UID]*statsapi.PodStats{}
	if s != nil {
		for i := range s.Pods {
			out[types.UID(s.Pods[i].PodRef.UID)] = &s.Pods[i]
		}
	}
	return out
}

// pass runs one pass of the model at now on the observations obs (from
// refObserve, plus PSI figures), the active pods and their stats. The
// model assumes every eviction it decides is carried out. Local storage
// limits are not modelled: when storageEvicted says the pass evicted for
// them, it ends before any threshold is relieved.
func (m *refModel) pass(now time.Time, obs map[evictionapi.Signal]refObservation, pods []*v1.Pod, stats map[types.UID]*statsapi.PodStats, storageEvicted bool) refOutcome {
	out := refOutcome{met: make([]bool, len(m.thresholds)), acting: make([]bool, len(m.thresholds)), target: -1}
	var actionable []int
	for i, t := range m.thresholds {
		sig, known := refSignals[t.Signal]
		ob, ok := obs[t.Signal]
		if !known || !ok {
			m.firstMet[i] = time.Time{}
			continue
		}
		met := refMet(t, ob, false) || (m.acting[i] && !sig.psi && refMet(t, ob, true))
		if !met {
			m.firstMet[i] = time.Time{}
			continue
		}
		out.met[i] = true
		if m.firstMet[i].IsZero() {
			m.firstMet[i] = now
		}
		m.conditionAt[sig.condition] = now
		if now.Sub(m.firstMet[i]) < t.GracePeriod {
			continue
		}
		out.acting[i] = true
		// Stats no newer than the previous pass's drive no eviction.
		if last, seen := m.lastObs[t.Signal]; seen && !ob.at.IsZero() && !ob.at.After(last.at) {
			continue
		}
		if sig.psi && !m.psiEvictedAt.IsZero() {
			since := now.Sub(m.psiEvictedAt)
			last, seen := m.lastObs[t.Signal]
			if since < refPSISettle || (since < refPSISettleMax && seen && ob.available < last.available) {
				continue
			}
		}
		actionable = append(actionable, i)
	}
	copy(m.acting, out.acting)
	m.lastObs = obs
	for _, c := range refConditions {
		if at, ok := m.conditionAt[c]; ok && now.Sub(at) < m.transition {
			out.conditions = append(out.conditions, c)
		}
	}
	if len(actionable) == 0 || storageEvicted {
		return out
	}
	// Memory first; then, among the rest, a threshold below its level now
	// before one still acting only until its minimum reclaim; then the
	// fixed signal order; hard before soft, shorter grace first; then
	// configuration order.
	belowNow := func(i int) bool {
		t := m.thresholds[i]
		return refSignals[t.Signal].class == refMemory || refMet(t, obs[t.Signal], false)
	}
	sort.SliceStable(actionable, func(a, b int) bool {
		ta, tb := m.thresholds[actionable[a]], m.thresholds[actionable[b]]
		if ca, cb := refSignals[ta.Signal].class == refMemory, refSignals[tb.Signal].class == refMemory; ca != cb {
			return ca
		}
		if na, nb := belowNow(actionable[a]), belowNow(actionable[b]); na != nb {
			return na
		}
		if oa, ob := refSignals[ta.Signal].order, refSignals[tb.Signal].order; oa != ob {
			return oa < ob
		}
		if ta.GracePeriod != tb.GracePeriod {
			return ta.GracePeriod < tb.GracePeriod
		}
		return actionable[a] < actionable[b]
	})
	out.target, out.actionable = actionable[0], actionable
	t := m.thresholds[out.target]
	sig := refSignals[t.Signal]
	ranked := refRank(pods, stats, sig, m.layout)
	for _, rp := range ranked {
		out.ranked = append(out.ranked, rp.pod.UID)
	}
	var evictable []int
	for i := range ranked {
		if !ranked[i].critical {
			evictable = append(evictable, i)
		}
	}
	if len(evictable) == 0 {
		return out
	}
	n := 1
	if m.gates.reclaimSized && !sig.psi {
		ob := obs[t.Signal]
		short := new(big.Int).Sub(refLevel(t, ob.capacity, true), big.NewInt(ob.available))
		sum := new(big.Int)
		out.covered = false
		for k, i := range evictable {
			sum.Add(sum, ranked[i].usage) // exact: no int64 limit

			if sum.Cmp(short) >= 0 {
				n, out.covered = k+1, true
				break
			}
		}
	}
	chosen := evictable[:n]
	runnerUp := -1
	if n < len(evictable) {
		runnerUp = evictable[n]
	}
	for _, i := range chosen {
		v := refVictim{uid: ranked[i].pod.UID, rank: i, grace: m.grace(t, ranked[i].pod), rule: "only-candidate", runnerUpRank: -1}
		if runnerUp >= 0 {
			v.runnerUp, v.runnerUpRank = ranked[runnerUp].pod.UID, runnerUp
			idx, _ := refCompareKeys(ranked[i].key(sig.class), ranked[runnerUp].key(sig.class))
			if idx < 0 {
				v.rule = "tie-break"
			} else {
				v.rule = refKeyNames[sig.class][idx]
			}
		}
		out.victims = append(out.victims, v)
	}
	if sig.psi {
		m.psiEvictedAt = now
	}
	return out
}

// grace is the grace period of an evicted pod: 1 s for a hard threshold;
// for a soft one, the pod's own termination grace period capped at the
// configured maximum (the maximum when the pod sets none).
func (m *refModel) grace(t evictionapi.Threshold, p *v1.Pod) int64 {
	if t.GracePeriod == 0 {
		return 1
	}
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g < m.maxGrace {
		return *g
	}
	return m.maxGrace
}
