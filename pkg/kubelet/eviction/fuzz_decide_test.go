//evictkit:file fuzz

package eviction

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// fzReader hands out fuzz input bytes; past the end it returns zeros.
type fzReader struct {
	data []byte
	pos  int
}

func (r *fzReader) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *fzReader) bool() bool { return r.byte()&1 == 1 }

func (r *fzReader) intn(n int) int { return int(r.byte()) % n }

// fzInterestingU64 are the raw counter values the generator uses.
var fzInterestingU64 = []uint64{
	0, 1, 2, 10, 100, 1000, 4096,
	uint64(mi), uint64(100 * mi), uint64(500 * mi), uint64(gi), uint64(2 * gi), uint64(10 * gi), uint64(100 * gi),
	math.MaxInt32, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64 - 1, math.MaxUint64,
}

func (r *fzReader) u64() uint64 {
	b := r.byte()
	if int(b) < len(fzInterestingU64)*8 {
		return fzInterestingU64[int(b)%len(fzInterestingU64)]
	}
	// Otherwise a value built from the next bytes.
	v := uint64(r.byte())<<8 | uint64(r.byte())
	return v << (r.byte() % 48)
}

// optU64 returns nil a quarter of the time.
func (r *fzReader) optU64() *uint64 {
	if r.intn(4) == 0 {
		return nil
	}
	v := r.u64()
	return &v
}

// i64 returns a non-negative int64 quantity value.
func (r *fzReader) i64() int64 {
	v := r.u64()
	if v > math.MaxInt64 {
		v = math.MaxInt64
	}
	return int64(v)
}

func (r *fzReader) quantity() resource.Quantity {
	return *resource.NewQuantity(r.i64(), resource.BinarySI)
}

var fzDurations = []time.Duration{0, time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, time.Hour}

func (r *fzReader) duration() time.Duration { return fzDurations[r.intn(len(fzDurations))] }

// fzSignalCodes are the signals fuzz inputs name by a code of four bits.
// A code never changes meaning: a new signal takes a free code, so that
// the inputs kept as seeds decode as they did. Free codes decode as a
// signal the package does not know.
var fzSignalCodes = [16]evictionapi.Signal{
	0: evictionapi.SignalMemoryAvailable,
	1: evictionapi.SignalAllocatableMemoryAvailable,
	2: evictionapi.SignalNodeFsAvailable,
	3: evictionapi.SignalNodeFsInodesFree,
	4: evictionapi.SignalImageFsAvailable,
	5: evictionapi.SignalImageFsInodesFree,
	6: evictionapi.SignalContainerFsAvailable,
	7: evictionapi.SignalContainerFsInodesFree,
	8: evictionapi.SignalPIDAvailable,
	// An alpha feature's signals take their codes in its fzAlphaFeature.
}

func (r *fzReader) signal() evictionapi.Signal {
	if s := fzSignalCodes[r.byte()%16]; s != "" {
		return s
	}
	return "bogus.available"
}

// fzPSIShares are the PSI figures (percent) the generator uses.
var fzPSIShares = []float64{0, 0.5, 5, 10, 12.5, 20, 50, 99.99}

// threshold generates one threshold, now and then one of the oddities the
// configuration path can produce (a derived zero threshold without an
// operator). Every threshold reads the same bytes whatever its signal.
func (r *fzReader) threshold() evictionapi.Threshold {
	kind, sig := r.intn(16), r.signal()
	byQuantity, q, pct := r.bool(), r.quantity(), float32(r.intn(101))/100
	soft, grace := r.bool(), fzDurations[1+r.intn(len(fzDurations)-1)]
	reclaimKind, rq, rpct := r.intn(3), r.quantity(), float32(1+r.intn(100))/100
	if kind == 0 {
		return evictionapi.Threshold{Signal: sig}
	}
	t := evictionapi.Threshold{Signal: sig, Operator: evictionapi.OpLessThan}
	if soft {
		t.GracePeriod = grace
	}
	for _, f := range fzAlphaFeatures {
		if f.threshold != nil && f.threshold(sig, pct, &t) {
			return t
		}
	}
	if byQuantity {
		if q.Sign() == 0 {
			q = *resource.NewQuantity(1, resource.BinarySI)
		}
		t.Value.Quantity = &q
	} else {
		t.Value.Percentage = pct
	}
	switch reclaimKind {
	case 1:
		t.MinReclaim = &evictionapi.ThresholdValue{Quantity: &rq}
	case 2:
		t.MinReclaim = &evictionapi.ThresholdValue{Percentage: rpct}
	}
	return t
}

func (r *fzReader) fsStats(ts metav1.Time) *statsapi.FsStats {
	if r.intn(5) == 0 {
		return nil
	}
	return &statsapi.FsStats{
		Time:           ts,
		AvailableBytes: r.optU64(),
		CapacityBytes:  r.optU64(),
		UsedBytes:      r.optU64(),
		InodesFree:     r.optU64(),
		Inodes:         r.optU64(),
		InodesUsed:     r.optU64(),
	}
}

func (r *fzReader) memStats(ts metav1.Time) *statsapi.MemoryStats {
	if r.intn(5) == 0 {
		return nil
	}
	return &statsapi.MemoryStats{Time: ts, AvailableBytes: r.optU64(), WorkingSetBytes: r.optU64(), UsageBytes: r.optU64()}
}

// fzStamper returns the time stamps of one pass's stats: zero, the
// previous pass's time or this pass's.
func (r *fzReader) stamp(prev, now time.Time) metav1.Time {
	switch r.intn(4) {
	case 0:
		return metav1.Time{}
	case 1:
		return metav1.NewTime(prev)
	default:
		return metav1.NewTime(now)
	}
}

// nodeStats generates the node part of a summary.
func (r *fzReader) nodeStats(prev, now time.Time) statsapi.NodeStats {
	n := statsapi.NodeStats{NodeName: "node", Memory: r.memStats(r.stamp(prev, now)), Fs: r.fsStats(r.stamp(prev, now))}
	if r.intn(4) != 0 {
		n.SystemContainers = []statsapi.ContainerStats{{Name: statsapi.SystemContainerPods, Memory: r.memStats(r.stamp(prev, now))}}
	}
	if r.intn(4) != 0 {
		n.Runtime = &statsapi.RuntimeStats{ImageFs: r.fsStats(r.stamp(prev, now)), ContainerFs: r.fsStats(r.stamp(prev, now))}
	}
	if r.intn(4) != 0 {
		rl := &statsapi.RlimitStats{Time: r.stamp(prev, now)}
		if r.intn(4) != 0 {
			v := r.i64()
			rl.MaxPID = &v
		}
		if r.intn(4) != 0 {
			v := r.i64()
			rl.NumOfRunningProcesses = &v
		}
		n.Rlimit = rl
	}
	return n
}

// fzPSI is a pass's PSI figures (some, full), when the pass has them.
type fzPSI struct {
	observed   bool
	some, full float64
	at         time.Time
}

func (r *fzReader) psi(prev, now time.Time) fzPSI {
	p := fzPSI{observed: r.intn(3) != 0, some: fzPSIShares[r.intn(len(fzPSIShares))], full: fzPSIShares[r.intn(len(fzPSIShares))]}
	p.at = r.stamp(prev, now).Time
	return p
}

var fzPriorities = []int32{0, -10, 10, 1000, 1999999999, 2000000000, 2000001000, math.MaxInt32, math.MinInt32}

func (r *fzReader) resources() v1.ResourceRequirements {
	var rr v1.ResourceRequirements
	for _, name := range []v1.ResourceName{v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if r.intn(3) == 0 {
			if rr.Requests == nil {
				rr.Requests = v1.ResourceList{}
			}
			rr.Requests[name] = r.quantity()
		}
		if r.intn(3) == 0 {
			if rr.Limits == nil {
				rr.Limits = v1.ResourceList{}
			}
			rr.Limits[name] = r.quantity()
		}
	}
	return rr
}

// pod generates pod i. Names repeat across namespaces so that the tie-break
// is exercised; UIDs are unique.
func (r *fzReader) pod(i int) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:      fmt.Sprintf("p%d", r.intn(3)),
		Namespace: fmt.Sprintf("ns%d", r.intn(2)),
		UID:       types.UID(fmt.Sprintf("uid-%d", i)),
	}}
	switch r.intn(8) {
	case 0:
		p.Annotations = map[string]string{kubelettypes.ConfigSourceAnnotationKey: kubelettypes.FileSource}
	case 1:
		p.Annotations = map[string]string{kubelettypes.ConfigMirrorAnnotationKey: "mirror"}
	case 2:
		p.Annotations = map[string]string{kubelettypes.ConfigSourceAnnotationKey: kubelettypes.ApiserverSource}
	}
	if r.bool() {
		prio := fzPriorities[r.intn(len(fzPriorities))]
		p.Spec.Priority = &prio
	}
	if r.bool() {
		g := int64(r.intn(4)) * 15
		p.Spec.TerminationGracePeriodSeconds = &g
	}
	for c := 0; c < 1+r.intn(2); c++ {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", c), Resources: r.resources()})
	}
	if r.intn(4) == 0 {
		ic := v1.Container{Name: "init", Resources: r.resources()}
		if r.bool() {
			always := v1.ContainerRestartPolicyAlways
			ic.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
	}
	if r.intn(4) == 0 {
		rr := r.resources()
		p.Spec.Resources = &rr
	}
	for v := 0; v < r.intn(3); v++ {
		vol := v1.Volume{Name: fmt.Sprintf("v%d", v)}
		switch r.intn(8) {
		case 0:
			vol.HostPath = &v1.HostPathVolumeSource{Path: "/x"}
		case 1:
			vol.ConfigMap = &v1.ConfigMapVolumeSource{}
		case 2:
			vol.DownwardAPI = &v1.DownwardAPIVolumeSource{}
		case 3:
			vol.Secret = &v1.SecretVolumeSource{}
		case 4:
			vol.GitRepo = &v1.GitRepoVolumeSource{}
		default:
			ed := &v1.EmptyDirVolumeSource{}
			if r.bool() {
				q := r.quantity()
				ed.SizeLimit = &q
			}
			switch r.intn(8) {
			case 0, 1:
				ed.Medium = v1.StorageMediumMemory
			case 2:
				ed.Medium = v1.StorageMediumHugePages
			}
			vol.EmptyDir = ed
		}
		p.Spec.Volumes = append(p.Spec.Volumes, vol)
	}
	return p
}

// podStats generates stats for pod, with some fields missing.
func (r *fzReader) podStats(p *v1.Pod) statsapi.PodStats {
	ps := statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)}}
	if r.intn(4) != 0 {
		ps.Memory = &statsapi.MemoryStats{WorkingSetBytes: r.optU64()}
	}
	names := []string{"c0", "c1", "init", "other"}
	for c := 0; c < r.intn(4); c++ {
		cs := statsapi.ContainerStats{Name: names[r.intn(len(names))]}
		if r.intn(4) != 0 {
			cs.Memory = &statsapi.MemoryStats{WorkingSetBytes: r.optU64()}
		}
		if r.intn(4) != 0 {
			cs.Rootfs = &statsapi.FsStats{UsedBytes: r.optU64(), InodesUsed: r.optU64()}
		}
		if r.intn(4) != 0 {
			cs.Logs = &statsapi.FsStats{UsedBytes: r.optU64(), InodesUsed: r.optU64()}
		}
		ps.Containers = append(ps.Containers, cs)
	}
	for v := 0; v < r.intn(3); v++ {
		ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{
			Name:    fmt.Sprintf("v%d", r.intn(3)),
			FsStats: statsapi.FsStats{UsedBytes: r.optU64(), InodesUsed: r.optU64()},
		})
	}
	if r.intn(3) != 0 {
		ps.EphemeralStorage = &statsapi.FsStats{UsedBytes: r.optU64(), InodesUsed: r.optU64()}
	}
	if r.intn(3) != 0 {
		ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: r.optU64()}
	}
	return ps
}

// fzGates are the alpha gates a scenario turns on. A build without a
// gate ignores its bit.
type fzGates struct {
	reclaimSized, explain bool
}

// fzScenario is a decoded FuzzDecide input: fixed configuration, pods and
// their stats, and one node summary per pass.
type fzScenario struct {
	thresholds   []evictionapi.Threshold
	layout       fsLayout
	gates        featureGates
	alpha        fzGates
	localStorage bool
	transition   time.Duration
	maxGrace     int64
	pods         []*v1.Pod
	passes       []fzPass
	shuffleSeed  int64
}

type fzPass struct {
	now     time.Time
	summary *statsapi.Summary
	psi     fzPSI
}

// fzAlphaFeature is what an alpha feature adds to the fuzz targets and
// their reference model. The feature's own fuzz test file registers it
// in a package-level declaration (addFzAlphaFeature), so the fuzz code
// uses nothing of a feature that comes later in the series. Every field
// is optional.
type fzAlphaFeature struct {
	// order places the feature among fzAlphaFeatures: its hooks run, and
	// its entries of ordered tables (promises, parse seeds) come, in this
	// order. It keeps the order the features had in the fuzz code before
	// they were hooks (reclaim-sized, PSI, explain), and with it the
	// numbering of the seeds FuzzDryRun adds.
	order int

	// FuzzDecide's input: gate is turned on or off as the scenario's alpha
	// bits say (on); signalCodes are the feature's signals by their code
	// (fzSignalCodes); threshold makes a threshold of the feature's
	// signals from the bits a threshold reads, true when sig is one;
	// observe adds the feature's observations of a pass.
	gate        featuregate.Feature
	on          func(fzGates) bool
	signalCodes map[int]evictionapi.Signal
	threshold   func(sig evictionapi.Signal, pct float32, t *evictionapi.Threshold) bool
	observe     func(p fzPass, obs *observationSet)

	// FuzzDecide's checks: victim renders what the feature adds to a
	// victim (fzDecisionSummary); checkVictim holds a victim to the
	// model's; targetPaths and runPaths add the paths (fzPaths) of a
	// target that evicts and of a whole run; promises are the paths that
	// must each have a named seed.
	victim      func(v victim) string
	checkVictim func(in *decideInput, v victim, w refVictim, fail func(format string, args ...any))
	targetPaths func(t *reclaimTarget, paths map[string]bool)
	runPaths    func(ins []decideInput, outs []decision, paths map[string]bool)
	promises    []string

	// The reference model: model passes the gate on to it; refSignals are
	// the feature's rows of refSignals.
	model      func(g *refGates, on bool)
	refSignals map[evictionapi.Signal]refSignal

	// FuzzParseThresholdConfig: signalNames are short names of the
	// feature's signals (fzSignalNames); parseSeeds are named inputs
	// (fzParseSeeds); parseGates sets the feature's gate as the options
	// say.
	signalNames map[string]evictionapi.Signal
	parseSeeds  []fzParseSeed
	parseGates  func(t *testing.T, o fzParseOptions)
}

// fzAlphaFeatures are the registered features, in order.
var fzAlphaFeatures []fzAlphaFeature

// addFzAlphaFeature registers a feature: it adds the feature's signal
// codes, signal names and reference signals to the tables, and its row
// to fzAlphaFeatures in order.
func addFzAlphaFeature(f fzAlphaFeature) bool {
	for code, sig := range f.signalCodes {
		if fzSignalCodes[code] != "" {
			panic("fuzz signal code taken twice: " + string(sig))
		}
		fzSignalCodes[code] = sig
	}
	maps.Copy(fzSignalNames, f.signalNames)
	maps.Copy(refSignals, f.refSignals)
	fzAlphaFeatures = append(fzAlphaFeatures, f)
	slices.SortStableFunc(fzAlphaFeatures, func(a, b fzAlphaFeature) int { return a.order - b.order })
	return true
}

// eachGate calls set with each feature's gate, on or off as the alpha
// bits say, in order.
func (a fzGates) eachGate(set func(gate featuregate.Feature, on bool)) {
	for _, f := range fzAlphaFeatures {
		if f.gate != "" {
			set(f.gate, f.on(a))
		}
	}
}

// refGates are the gates the reference model follows for a scenario.
func (s *fzScenario) refGates() refGates {
	var g refGates
	for _, f := range fzAlphaFeatures {
		if f.model != nil {
			f.model(&g, s.gates.alpha[f.gate])
		}
	}
	return g
}

// fzPromises are the paths that must each have a named seed: the core's,
// then the features'.
func fzPromises() []string {
	out := slices.Clone(fzDecidePromises)
	for _, f := range fzAlphaFeatures {
		out = append(out, f.promises...)
	}
	return out
}

// fzAllParseSeeds are FuzzParseThresholdConfig's named inputs: the
// core's, then the features'.
func fzAllParseSeeds() []fzParseSeed {
	out := slices.Clone(fzParseSeeds)
	for _, f := range fzAlphaFeatures {
		out = append(out, f.parseSeeds...)
	}
	return out
}

var fzEpoch = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

// fzDecodeScenario decodes a scenario. Decoding the same bytes twice gives
// two independent, equal scenarios. The byte layout does not depend on
// which features are built in.
func fzDecodeScenario(data []byte) *fzScenario {
	r := &fzReader{data: data}
	s := &fzScenario{
		layout:       fsLayout{dedicatedImageFs: r.bool(), splitContainerFs: r.bool()},
		gates:        featureGates{podLevelResources: r.bool(), memoryBackedVolumes: r.bool()},
		localStorage: r.bool(),
		transition:   r.duration(),
		maxGrace:     []int64{0, 10, 30, 600}[r.intn(4)],
		shuffleSeed:  int64(r.byte()),
	}
	alpha := r.byte()
	s.alpha = fzGates{reclaimSized: alpha&1 != 0, explain: alpha&2 != 0}
	s.alpha.eachGate(func(gate featuregate.Feature, on bool) {
		if s.gates.alpha == nil {
			s.gates.alpha = alphaGates{}
		}
		s.gates.alpha[gate] = on
	})
	for i := r.intn(7); i > 0; i-- {
		s.thresholds = append(s.thresholds, r.threshold())
	}
	for i := 0; i < r.intn(8); i++ {
		s.pods = append(s.pods, r.pod(i))
	}
	var podStats []statsapi.PodStats
	for _, p := range s.pods {
		if r.intn(5) != 0 {
			podStats = append(podStats, r.podStats(p))
		}
	}
	if r.intn(4) == 0 {
		// Stats of a pod that is not active.
		podStats = append(podStats, statsapi.PodStats{PodRef: statsapi.PodReference{Name: "gone", Namespace: "ns0", UID: "uid-gone"}})
	}
	prev, now := time.Time{}, fzEpoch
	for i := 1 + r.intn(3); i > 0; i-- {
		node := r.nodeStats(prev, now)
		psi := r.psi(prev, now)
		s.passes = append(s.passes, fzPass{now: now, summary: &statsapi.Summary{Node: node, Pods: podStats}, psi: psi})
		prev, now = now, now.Add(r.duration())
	}
	return s
}

// fzObserve is a pass's observations as the manager makes them: the
// summary's, and the alpha features' (the PSI figures where the pass has
// them).
func fzObserve(p fzPass) *observationSet {
	obs := observeSummary(p.summary)
	for _, f := range fzAlphaFeatures {
		if f.observe != nil {
			f.observe(p, obs)
		}
	}
	return obs
}

// fzRun runs every pass of a scenario through decide, the pods of pass i
// in the order given by order(i, pods). Between passes it does what the
// manager does with the decision's outcome (every eviction succeeds).
func fzRun(s *fzScenario, order func(pass int, pods []*v1.Pod) []*v1.Pod) ([]decideInput, []decision) {
	state := newDecisionState(len(s.thresholds))
	var ins []decideInput
	var outs []decision
	for i, p := range s.passes {
		prev := state
		in := decideInput{
			thresholds:               s.thresholds,
			prev:                     &prev,
			obs:                      fzObserve(p),
			pods:                     order(i, s.pods),
			stats:                    indexPodStats(p.summary),
			layout:                   s.layout,
			now:                      p.now,
			transition:               s.transition,
			maxPodGracePeriodSeconds: s.maxGrace,
			localStorageIsolation:    s.localStorage,
			gates:                    s.gates,
		}
		d := decide(&in)
		ins = append(ins, in)
		outs = append(outs, d)
		state = d.next
		// As the shell reports back: every victim's eviction attempted.
		if d.target != nil && len(d.target.victims) > 0 {
			var evicted []*v1.Pod
			for _, v := range d.target.victims {
				evicted = append(evicted, v.pod)
			}
			state = state.advance(outcome{signal: d.target.threshold.Signal, evicted: evicted, at: p.now})
		}
	}
	return ins, outs
}

// fzDecisionSummary renders what a decision does, independent of pod order.
func fzDecisionSummary(d decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "conditions=%v firstMet=%v acting=%v\n", d.conditions, d.next.firstMet, d.next.acting)
	var storage []string
	for _, v := range d.storageVictims {
		storage = append(storage, fmt.Sprintf("%s/%s/%q", v.pod.UID, v.limit, v.message))
	}
	sort.Strings(storage)
	fmt.Fprintf(&b, "storage=%v\n", storage)
	if d.target == nil {
		b.WriteString("target=nil\n")
		return b.String()
	}
	t := d.target
	fmt.Fprintf(&b, "target=%s resource=%s steps=%v class=%d actionable=%s\n", fzThresholdString(t.threshold), t.resource, t.steps, t.class, fzThresholdsString(t.actionable))
	var ranked []string
	for _, c := range t.ranked {
		ranked = append(ranked, string(c.pod.UID))
	}
	fmt.Fprintf(&b, "ranked=%v\n", ranked)
	for _, v := range t.victims {
		fmt.Fprintf(&b, "victim=%s rank=%d grace=%d msg=%q ann=%v reason=%q%s\n", v.pod.UID, v.rank, v.gracePeriodSeconds, v.message, v.annotations, v.reason, fzVictimExtra(v))
	}
	return b.String()
}

// fzVictimExtra renders what the alpha gates add to a victim.
func fzVictimExtra(v victim) string {
	var extra string
	for _, f := range fzAlphaFeatures {
		if f.victim != nil {
			extra += f.victim(v)
		}
	}
	return extra
}

func fzIdentity(_ int, pods []*v1.Pod) []*v1.Pod { return pods }

func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fzDecodeScenario(data)
		ins, outs := fzRun(s, fzIdentity)

		// Same input, same decision.
		_, again := fzRun(fzDecodeScenario(data), fzIdentity)
		// Pod order does not matter.
		rng := rand.New(rand.NewSource(s.shuffleSeed))
		_, shuffled := fzRun(fzDecodeScenario(data), func(_ int, pods []*v1.Pod) []*v1.Pod {
			out := append([]*v1.Pod(nil), pods...)
			rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
			return out
		})

		model := newRefModel(s.thresholds, s.layout, s.transition, s.maxGrace, s.refGates())
		for pass := range outs {
			in, d := &ins[pass], outs[pass]
			want := fzDecisionSummary(d)
			if got := fzDecisionSummary(again[pass]); got != want {
				t.Fatalf("pass %d: decision not reproducible:\n%s\nvs\n%s", pass, want, got)
			}
			if got := fzDecisionSummary(shuffled[pass]); got != want {
				t.Fatalf("pass %d: decision depends on pod order:\n%s\nvs\n%s", pass, want, got)
			}
			ref := model.pass(in.now, fzRefObserve(s.passes[pass]), s.pods, refStats(s.passes[pass].summary), len(d.storageVictims) > 0)
			fzCheckDecision(t, pass, in, d, ref)
		}
	})
}

// fzRefObserve is a pass's observations as the reference model makes them.
func fzRefObserve(p fzPass) map[evictionapi.Signal]refObservation {
	obs := refObserve(p.summary)
	if p.psi.observed {
		for sig, share := range map[evictionapi.Signal]float64{"memory.psi.some.avg10": p.psi.some, "memory.psi.full.avg10": p.psi.full} {
			if _, known := refSignals[sig]; known {
				obs[sig] = refObservation{available: int64(math.Round(share * 1000)), capacity: 100 * 1000, at: p.psi.at}
			}
		}
	}
	return obs
}

// fzCheckDecision holds one pass's decision to the reference model's
// outcome ref, and checks what the model does not say (local storage).
func fzCheckDecision(t *testing.T, pass int, in *decideInput, d decision, ref refOutcome) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("pass %d: %s\ncore:  %smodel: %s", pass, fmt.Sprintf(format, args...), fzDecisionSummary(d), ref)
	}
	if len(d.next.firstMet) != len(in.thresholds) || len(d.next.acting) != len(in.thresholds) {
		fail("state sized %d/%d for %d thresholds", len(d.next.firstMet), len(d.next.acting), len(in.thresholds))
	}
	for i := range in.thresholds {
		if met := !d.next.firstMet[i].IsZero(); met != ref.met[i] {
			fail("threshold %d %s: met=%v, the model says %v", i, fzThresholdString(in.thresholds[i]), met, ref.met[i])
		}
		if d.next.acting[i] != ref.acting[i] {
			fail("threshold %d %s: acting=%v, the model says %v", i, fzThresholdString(in.thresholds[i]), d.next.acting[i], ref.acting[i])
		}
	}
	if fmt.Sprint(d.conditions) != fmt.Sprint(ref.conditions) {
		fail("conditions %v, the model says %v", d.conditions, ref.conditions)
	}

	// Local storage victims: only with isolation, never critical, each pod once.
	seen := map[types.UID]bool{}
	for _, v := range d.storageVictims {
		if !in.localStorageIsolation {
			fail("local storage victim %s without isolation", v.pod.UID)
		}
		if refCritical(v.pod) {
			fail("critical pod %s evicted for local storage", v.pod.UID)
		}
		if seen[v.pod.UID] {
			fail("pod %s evicted twice for local storage", v.pod.UID)
		}
		seen[v.pod.UID] = true
		if in.stats.lookup(v.pod) == nil {
			fail("pod %s without stats evicted for local storage", v.pod.UID)
		}
	}
	if len(d.storageVictims) > 0 {
		// The pass ends with the local storage evictions.
		if d.target != nil {
			fail("both local storage victims and a threshold target")
		}
		return
	}

	if (d.target == nil) != (ref.target < 0) {
		fail("target present=%v, the model's %d", d.target != nil, ref.target)
	}
	if d.target == nil {
		return
	}
	target := d.target
	if fzThresholdString(target.threshold) != fzThresholdString(in.thresholds[ref.target]) {
		fail("target %s, the model relieves threshold %d %s", fzThresholdString(target.threshold), ref.target, fzThresholdString(in.thresholds[ref.target]))
	}
	var actionable []string
	for _, i := range ref.actionable {
		actionable = append(actionable, fzThresholdString(in.thresholds[i]))
	}
	if got, want := fzThresholdsString(target.actionable), "["+strings.Join(actionable, " ")+"]"; got != want {
		fail("actionable thresholds %s, the model's %s", got, want)
	}
	var ranked []types.UID
	for _, c := range target.ranked {
		ranked = append(ranked, c.pod.UID)
	}
	if fmt.Sprint(ranked) != fmt.Sprint(ref.ranked) {
		fail("ranked %v, the model ranks %v", ranked, ref.ranked)
	}
	if len(target.victims) != len(ref.victims) {
		fail("%d victims, the model evicts %d", len(target.victims), len(ref.victims))
	}
	for k, v := range target.victims {
		w := ref.victims[k]
		if v.pod.UID != w.uid || v.rank != w.rank || v.gracePeriodSeconds != w.grace {
			fail("victim %d: %s rank %d grace %d, the model's %s rank %d grace %d", k, v.pod.UID, v.rank, v.gracePeriodSeconds, w.uid, w.rank, w.grace)
		}
		if !strings.HasPrefix(v.message, fmt.Sprintf("The node was low on resource: %s. ", target.resource)) && !strings.HasPrefix(v.message, "The node was under memory pressure") {
			fail("victim message %q", v.message)
		}
		for _, f := range fzAlphaFeatures {
			if f.checkVictim != nil {
				f.checkVictim(in, v, w, fail)
			}
		}
	}
}
