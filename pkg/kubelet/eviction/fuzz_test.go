package eviction

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// ---------------------------------------------------------------------------
// FuzzParseThresholdConfig

// fzParseMaps are the four eviction settings decoded from a fuzz input.
type fzParseMaps struct {
	hard, soft, grace, reclaim map[string]string
}

// fzDecodeParseSpec decodes "entry;entry;..." where each entry is
// "<m><key>=<value>": m picks the map (h, s, g or r; anything else picks
// by its byte value), and a key of one digit 0-8 stands for the signal at
// that position of the signal table; other keys are used as they are.
func fzDecodeParseSpec(spec string) fzParseMaps {
	out := fzParseMaps{hard: map[string]string{}, soft: map[string]string{}, grace: map[string]string{}, reclaim: map[string]string{}}
	all := []map[string]string{out.hard, out.soft, out.grace, out.reclaim}
	for _, entry := range strings.Split(spec, ";") {
		if entry == "" {
			continue
		}
		var target map[string]string
		switch entry[0] {
		case 'h':
			target = out.hard
		case 's':
			target = out.soft
		case 'g':
			target = out.grace
		case 'r':
			target = out.reclaim
		default:
			target = all[int(entry[0])%4]
		}
		key, value, _ := strings.Cut(entry[1:], "=")
		if len(key) == 1 && key[0] >= '0' && key[0] <= '8' {
			key = string(signalTable[key[0]-'0'].signal)
		}
		target[key] = value
	}
	return out
}

// fzHugeExponent matches decimal exponents of five digits or more.
var fzHugeExponent = regexp.MustCompile(`[eE][+-]?0*[1-9][0-9]{4,}`)

// fzAllocatable returns the allocatable enforcement list selected by b.
func fzAllocatable(b byte) []string {
	switch b % 4 {
	case 1:
		return []string{kubelettypes.NodeAllocatableEnforcementKey}
	case 2:
		return []string{kubelettypes.SystemReservedEnforcementKey, kubelettypes.NodeAllocatableEnforcementKey}
	case 3:
		return []string{kubelettypes.KubeReservedEnforcementKey}
	}
	return nil
}

func fzThresholdString(t evictionapi.Threshold) string {
	v := "nil"
	if t.Value.Quantity != nil {
		v = t.Value.Quantity.String()
	}
	r := "nil"
	if t.MinReclaim != nil {
		if t.MinReclaim.Quantity != nil {
			r = t.MinReclaim.Quantity.String()
		} else {
			r = fmt.Sprintf("%g", t.MinReclaim.Percentage)
		}
	}
	return fmt.Sprintf("{%s %s q=%s p=%g grace=%s reclaim=%s}", t.Signal, t.Operator, v, t.Value.Percentage, t.GracePeriod, r)
}

func fzThresholdsString(ts []evictionapi.Threshold) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fzThresholdString(t)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// fzCheckValue checks a threshold value as ParseThresholdConfig may return
// it: a positive quantity, or a percentage within [0, 1] (upstream accepts
// "0.0%" as a threshold that never fires).
func fzCheckValue(v evictionapi.ThresholdValue) error {
	if v.Quantity != nil {
		if v.Percentage != 0 {
			return fmt.Errorf("both quantity %s and percentage %g", v.Quantity, v.Percentage)
		}
		if v.Quantity.Sign() <= 0 {
			return fmt.Errorf("quantity %s not positive", v.Quantity)
		}
		return nil
	}
	p := float64(v.Percentage)
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("percentage %g outside [0,1]", p)
	}
	return nil
}

// fzCheckReclaim checks a minimum reclaim: a non-negative quantity or a
// positive percentage.
func fzCheckReclaim(v *evictionapi.ThresholdValue) error {
	if v == nil {
		return nil
	}
	if v.Quantity != nil {
		if v.Percentage != 0 || v.Quantity.Sign() < 0 {
			return fmt.Errorf("bad quantity reclaim %s/%g", v.Quantity, v.Percentage)
		}
		return nil
	}
	p := float64(v.Percentage)
	if math.IsNaN(p) || p <= 0 || math.IsInf(p, 0) {
		return fmt.Errorf("bad percentage reclaim %g", p)
	}
	return nil
}

func FuzzParseThresholdConfig(f *testing.F) {
	for _, seed := range []struct {
		spec string
		b    byte
	}{
		{"h0=100Mi;h2=10%;h3=5%;h4=15%;h5=5%", 1},
		{"s0=1Gi;g0=1m30s;r0=500Mi", 0},
		{"s0=1Gi", 1},
		{"h0=0%;h2=100%", 1},
		{"h0=0.0%;h8=1000", 0},
		{"h0=-1Mi", 0},
		{"h0=50%%", 0},
		{"h0=NaN%", 0},
		{"hbogus=1Gi", 0},
		{"s2=10%;g2=0s;r2=1%", 2},
		{"s2=10%;g2=-1s", 0},
		{"h6=1Gi;s7=5%;g7=10s;r6=1Gi", 1},
		{"r0=0%", 0},
		{"r0=0", 1},
		{"h0=1e-50%;r0=1e-50%", 0},
		{"h0=1Ei;r0=9223372036854775807", 1},
		{"h1=1Gi;s1=2Gi;g1=1h", 1},
		{"gbogus=1s;s0=1Gi;g0=1s", 0},
	} {
		f.Add(seed.spec, seed.b)
	}
	f.Fuzz(func(t *testing.T, spec string, alloc byte) {
		if fzHugeExponent.MatchString(spec) {
			// resource.ParseQuantity (apimachinery, used alike by upstream)
			// computes 10^exp with big integers: "1E6854775802" runs for
			// minutes. Not a property of this package.
			t.Skip("quantity exponent too large to parse in reasonable time")
		}
		maps := fzDecodeParseSpec(spec)
		allocatable := fzAllocatable(alloc)
		got, err := ParseThresholdConfig(allocatable, maps.hard, maps.soft, maps.grace, maps.reclaim)

		// Unknown keys in any setting are rejected.
		for _, m := range []map[string]string{maps.hard, maps.soft, maps.grace, maps.reclaim} {
			for k := range m {
				if !validSignal(evictionapi.Signal(k)) && err == nil {
					t.Fatalf("unsupported signal %q accepted: %s", k, fzThresholdsString(got))
				}
			}
		}
		if err != nil {
			if got != nil {
				t.Fatalf("error %v with thresholds %s", err, fzThresholdsString(got))
			}
			return
		}

		// Parsing is deterministic.
		again, err2 := ParseThresholdConfig(allocatable, maps.hard, maps.soft, maps.grace, maps.reclaim)
		if err2 != nil || !reflect.DeepEqual(fzThresholdsString(got), fzThresholdsString(again)) {
			t.Fatalf("second parse differs: %s / %v vs %s", fzThresholdsString(got), err2, fzThresholdsString(again))
		}

		enforce := false
		for _, k := range allocatable {
			enforce = enforce || k == kubelettypes.NodeAllocatableEnforcementKey
		}

		// Every threshold is well formed.
		for i, th := range got {
			if !validSignal(th.Signal) {
				t.Fatalf("threshold %d has unsupported signal %q", i, th.Signal)
			}
			if th.Operator != evictionapi.OpLessThan {
				t.Fatalf("threshold %d has operator %q", i, th.Operator)
			}
			if err := fzCheckValue(th.Value); err != nil {
				t.Fatalf("threshold %d %s: %v", i, fzThresholdString(th), err)
			}
			if err := fzCheckReclaim(th.MinReclaim); err != nil {
				t.Fatalf("threshold %d %s: %v", i, fzThresholdString(th), err)
			}
			if th.GracePeriod < 0 {
				t.Fatalf("threshold %d has negative grace %s", i, th.GracePeriod)
			}
		}

		// Each entry parses the same on its own: the result is the hard
		// entries, then the soft ones, each in signal-table order, then
		// (with node allocatable enforced) an allocatableMemory.available
		// copy of every memory.available threshold without grace period.
		var want []evictionapi.Threshold
		for _, k := range sortedSignalKeys(maps.hard) {
			one, err := ParseThresholdConfig(nil, map[string]string{k: maps.hard[k]}, nil, nil, maps.reclaim)
			if err != nil {
				t.Fatalf("hard %q=%q alone fails (%v) but the whole config parses", k, maps.hard[k], err)
			}
			for _, th := range one {
				if th.GracePeriod != 0 || string(th.Signal) != k {
					t.Fatalf("hard %q parsed as %s", k, fzThresholdString(th))
				}
			}
			want = append(want, one...)
		}
		for _, k := range sortedSignalKeys(maps.soft) {
			grace := map[string]string{}
			if g, ok := maps.grace[k]; ok {
				grace[k] = g
			}
			one, err := ParseThresholdConfig(nil, nil, map[string]string{k: maps.soft[k]}, grace, maps.reclaim)
			if err != nil {
				t.Fatalf("soft %q=%q alone fails (%v) but the whole config parses", k, maps.soft[k], err)
			}
			for _, th := range one {
				d, _ := time.ParseDuration(maps.grace[k])
				if th.GracePeriod != d || string(th.Signal) != k {
					t.Fatalf("soft %q parsed as %s, want grace %s", k, fzThresholdString(th), d)
				}
			}
			want = append(want, one...)
		}
		for _, th := range want {
			if _, ok := maps.reclaim[string(th.Signal)]; ok != (th.MinReclaim != nil) {
				t.Fatalf("%s: min reclaim set=%v, configured=%v", fzThresholdString(th), th.MinReclaim != nil, ok)
			}
		}
		if enforce {
			for _, th := range want[:len(want):len(want)] {
				if th.Signal == evictionapi.SignalMemoryAvailable && th.GracePeriod == 0 {
					want = append(want, evictionapi.Threshold{
						Signal: evictionapi.SignalAllocatableMemoryAvailable, Operator: th.Operator,
						Value: th.Value, MinReclaim: th.MinReclaim,
					})
				}
			}
		}
		if g, w := fzThresholdsString(got), fzThresholdsString(want); g != w {
			t.Fatalf("thresholds differ from single-entry parses:\n got %s\nwant %s", g, w)
		}
	})
}

// ---------------------------------------------------------------------------
// FuzzDecide

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
	uint64(fakeMi), uint64(100 * fakeMi), uint64(500 * fakeMi), uint64(fakeGi), uint64(2 * fakeGi), uint64(10 * fakeGi), uint64(100 * fakeGi),
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

// fzThreshold generates one threshold, now and then one of the oddities
// the configuration path can produce (a derived zero threshold without
// operator, an unknown signal).
func (r *fzReader) threshold() evictionapi.Threshold {
	kind := r.intn(16)
	sig := signalTable[r.intn(numSignals)].signal
	switch kind {
	case 0:
		return evictionapi.Threshold{Signal: sig}
	case 1:
		sig = "bogus.available"
	}
	t := evictionapi.Threshold{Signal: sig, Operator: evictionapi.OpLessThan}
	if r.bool() {
		q := r.quantity()
		if q.Sign() == 0 {
			q = *resource.NewQuantity(1, resource.BinarySI)
		}
		t.Value.Quantity = &q
	} else {
		t.Value.Percentage = float32(r.intn(101)) / 100
	}
	if r.bool() {
		t.GracePeriod = fzDurations[1+r.intn(len(fzDurations)-1)]
	}
	switch r.intn(3) {
	case 1:
		q := r.quantity()
		t.MinReclaim = &evictionapi.ThresholdValue{Quantity: &q}
	case 2:
		t.MinReclaim = &evictionapi.ThresholdValue{Percentage: float32(1+r.intn(100)) / 100}
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

// nodeStats generates the node part of a summary whose stats are stamped
// with zero, the previous time or now.
func (r *fzReader) nodeStats(prev, now time.Time) statsapi.NodeStats {
	stamp := func() metav1.Time {
		switch r.intn(4) {
		case 0:
			return metav1.Time{}
		case 1:
			return metav1.NewTime(prev)
		default:
			return metav1.NewTime(now)
		}
	}
	n := statsapi.NodeStats{NodeName: "node", Memory: r.memStats(stamp()), Fs: r.fsStats(stamp())}
	if r.intn(4) != 0 {
		n.SystemContainers = []statsapi.ContainerStats{{Name: statsapi.SystemContainerPods, Memory: r.memStats(stamp())}}
	}
	if r.intn(4) != 0 {
		n.Runtime = &statsapi.RuntimeStats{ImageFs: r.fsStats(stamp()), ContainerFs: r.fsStats(stamp())}
	}
	if r.intn(4) != 0 {
		rl := &statsapi.RlimitStats{Time: stamp()}
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
		switch r.intn(3) {
		case 0:
			vol.HostPath = &v1.HostPathVolumeSource{Path: "/x"}
		default:
			ed := &v1.EmptyDirVolumeSource{}
			if r.bool() {
				q := r.quantity()
				ed.SizeLimit = &q
			}
			if r.intn(4) == 0 {
				ed.Medium = v1.StorageMediumMemory
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

// fzScenario is a decoded FuzzDecide input: fixed configuration, pods and
// their stats, and one node summary per pass.
type fzScenario struct {
	thresholds   []evictionapi.Threshold
	layout       fsLayout
	gates        featureGates
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
}

var fzEpoch = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

// fzDecodeScenario decodes a scenario. Decoding the same bytes twice gives
// two independent, equal scenarios.
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
		s.passes = append(s.passes, fzPass{now: now, summary: &statsapi.Summary{Node: node, Pods: podStats}})
		prev, now = now, now.Add(r.duration())
	}
	return s
}

// fzRun runs every pass of a scenario through decide, the pods of pass i
// in the order given by order(i, pods).
func fzRun(s *fzScenario, order func(pass int, pods []*v1.Pod) []*v1.Pod) ([]decideInput, []decision) {
	state := newDecisionState(len(s.thresholds))
	var ins []decideInput
	var outs []decision
	for i, p := range s.passes {
		prev := state
		in := decideInput{
			thresholds:               s.thresholds,
			prev:                     &prev,
			obs:                      observeSummary(p.summary),
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
		fmt.Fprintf(&b, "victim=%s rank=%d grace=%d msg=%q ann=%v reason=%q\n", v.pod.UID, v.rank, v.gracePeriodSeconds, v.message, v.annotations, v.reason)
	}
	return b.String()
}

func fzIdentity(_ int, pods []*v1.Pod) []*v1.Pod { return pods }

func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x00\x01\x03\x01\x04\x02\x01\x00\x80\x40\x01\x03\x00\x00\x00\x00\x02\x05"))
	f.Add([]byte("memory pressure with several pods and stats......................................................."))
	f.Add([]byte{1, 1, 1, 1, 1, 6, 2, 200, 5, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40})
	f.Add([]byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7, 0xf6, 0xf5, 0xf4, 0xf3, 0xf2, 0xf1, 0xf0, 0xef, 0xee, 0xed, 0xec, 0xeb, 0xea, 0xe9})
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

		for pass := range outs {
			in, d := &ins[pass], outs[pass]
			want := fzDecisionSummary(d)
			if got := fzDecisionSummary(again[pass]); got != want {
				t.Fatalf("pass %d: decision not reproducible:\n%s\nvs\n%s", pass, want, got)
			}
			if got := fzDecisionSummary(shuffled[pass]); got != want {
				t.Fatalf("pass %d: decision depends on pod order:\n%s\nvs\n%s", pass, want, got)
			}
			fzCheckDecision(t, pass, in, d)
		}
	})
}

// fzCheckDecision checks the invariants of one pass.
func fzCheckDecision(t *testing.T, pass int, in *decideInput, d decision) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("pass %d: %s\n%s", pass, fmt.Sprintf(format, args...), fzDecisionSummary(d))
	}

	// Conditions are known ones, in the fixed order, without repeats.
	last := -1
	for _, c := range d.conditions {
		i := conditionIndex(c)
		if i <= last {
			fail("conditions %v out of order or unknown", d.conditions)
		}
		last = i
	}
	if len(d.next.firstMet) != len(in.thresholds) || len(d.next.acting) != len(in.thresholds) {
		fail("state sized %d/%d for %d thresholds", len(d.next.firstMet), len(d.next.acting), len(in.thresholds))
	}

	// Which thresholds are met this pass, straight from the definition.
	anyMet := false
	for i, th := range in.thresholds {
		ob, ok := in.obs.get(th.Signal)
		met := ok && (signalBelow(th, ob, false) || (in.prev.acting[i] && signalBelow(th, ob, true)))
		anyMet = anyMet || met
		if met != !d.next.firstMet[i].IsZero() {
			fail("threshold %d %s met=%v but firstMet=%v", i, fzThresholdString(th), met, d.next.firstMet[i])
		}
		if d.next.acting[i] && !met {
			fail("threshold %d acting but not met", i)
		}
		if met && !d.next.firstMet[i].After(in.now) && in.now.Sub(d.next.firstMet[i]) >= th.GracePeriod != d.next.acting[i] {
			fail("threshold %d met since %v, grace %s, acting=%v at %v", i, d.next.firstMet[i], th.GracePeriod, d.next.acting[i], in.now)
		}
		if met && in.transition > 0 {
			if id, ok := lookupSignal(th.Signal); ok && !hasNodeCondition(d.conditions, signalTable[id].condition) {
				fail("threshold %d met but condition %s not reported", i, signalTable[id].condition)
			}
		}
	}

	// Local storage victims: only with isolation, never critical, each pod once.
	seen := map[types.UID]bool{}
	for _, v := range d.storageVictims {
		if !in.localStorageIsolation {
			fail("local storage victim %s without isolation", v.pod.UID)
		}
		if kubelettypes.IsCriticalPod(v.pod) {
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
	if len(d.storageVictims) > 0 && d.target != nil {
		fail("both local storage victims and a threshold target")
	}

	if d.target == nil {
		return
	}
	target := d.target
	if !anyMet {
		fail("target %s while no threshold is met", fzThresholdString(target.threshold))
	}
	idx := -1
	for i, th := range in.thresholds {
		if reflect.DeepEqual(th, target.threshold) && d.next.acting[i] {
			idx = i
			break
		}
	}
	if idx < 0 {
		fail("target %s is not an acting threshold", fzThresholdString(target.threshold))
	}
	if target.resource != signalResource(target.threshold.Signal) || target.resource == "" {
		fail("target resource %q for %s", target.resource, target.threshold.Signal)
	}
	if in.transition > 0 {
		id, _ := lookupSignal(target.threshold.Signal)
		if !hasNodeCondition(d.conditions, signalTable[id].condition) {
			fail("target %s without its node condition in %v", target.threshold.Signal, d.conditions)
		}
	}

	// Ranked: every active pod once, in an order no rule contradicts.
	if len(target.ranked) != len(in.pods) {
		fail("%d ranked for %d pods", len(target.ranked), len(in.pods))
	}
	for i := range target.ranked {
		for j := i + 1; j < len(target.ranked); j++ {
			if compareRank(&target.ranked[j], &target.ranked[i], target.class) < 0 {
				fail("ranked[%d]=%s ranks strictly ahead of ranked[%d]=%s", j, target.ranked[j].pod.UID, i, target.ranked[i].pod.UID)
			}
		}
	}

	// At most one victim: the first non-critical ranked pod.
	if len(target.victims) > 1 {
		fail("%d threshold victims", len(target.victims))
	}
	first := -1
	for i := range target.ranked {
		if !kubelettypes.IsCriticalPod(target.ranked[i].pod) {
			first = i
			break
		}
	}
	if first < 0 {
		if len(target.victims) != 0 {
			fail("victim chosen among critical pods only")
		}
		return
	}
	if len(target.victims) != 1 {
		fail("no victim although ranked[%d] is not critical", first)
	}
	v := target.victims[0]
	if kubelettypes.IsCriticalPod(v.pod) {
		fail("critical pod %s chosen", v.pod.UID)
	}
	if v.rank != first || v.pod != target.ranked[first].pod {
		fail("victim %s at rank %d, first non-critical is %s at %d", v.pod.UID, v.rank, target.ranked[first].pod.UID, first)
	}
	wantGrace := int64(hardEvictionGracePeriodSeconds)
	if target.threshold.GracePeriod != 0 {
		wantGrace = in.maxPodGracePeriodSeconds
		if g := v.pod.Spec.TerminationGracePeriodSeconds; g != nil && *g < wantGrace {
			wantGrace = *g
		}
	}
	if v.gracePeriodSeconds != wantGrace {
		fail("victim grace %d, want %d", v.gracePeriodSeconds, wantGrace)
	}
	if !strings.HasPrefix(v.message, fmt.Sprintf("The node was low on resource: %s. ", target.resource)) {
		fail("victim message %q", v.message)
	}
}
