//evictkit:file EvictionDryRun

package eviction

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func dryRunCount(t *testing.T, signal string) float64 {
	t.Helper()
	return mgrWriteMetric(t, dryRunEvictions.WithLabelValues(signal)).GetCounter().GetValue()
}

func TestDryRunMemoryPressure(t *testing.T) {
	setGateDuringTest(t, evictionDryRun, true)
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, mgrMemoryConfig(), false, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	h.pods = pods
	const sig = string(evictionapi.SignalMemoryAvailable)
	evictedBefore, dryBefore := mgrEvictionCount(t, sig), dryRunCount(t, sig)

	if ev := h.sync(); ev != nil {
		t.Fatalf("a dry run evicted %v", podNames(ev))
	}
	if k := h.killer.get(); len(k) != 0 {
		t.Fatalf("a dry run killed %d pods", len(k))
	}
	would := h.recorder.byReason(wouldEvictReason)
	if len(would) != 1 {
		t.Fatalf("%d WouldEvict events, want 1", len(would))
	}
	if p, ok := would[0].object.(*v1.Pod); !ok || p.Name != "besteffort" || would[0].eventType != v1.EventTypeWarning {
		t.Errorf("WouldEvict event on %v (%s), want a Warning on besteffort", would[0].object, would[0].eventType)
	}
	if e := h.recorder.byReason(Reason); len(e) != 0 {
		t.Errorf("a dry run recorded %d Evicted events", len(e))
	}

	// The event is the Evicted event the same pass makes without the gate.
	setGateDuringTest(t, evictionDryRun, false)
	real := mgrNewHarness(t, mgrMemoryConfig(), false, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	real.pods = pods
	if got := podNames(real.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
		t.Fatalf("without the gate the pass evicted %v, want [besteffort]", got)
	}
	evicted := real.recorder.byReason(Reason)[0]
	if would[0].message != evicted.message || !reflect.DeepEqual(would[0].annotations, evicted.annotations) {
		t.Errorf("WouldEvict %q %v, want the Evicted event's %q %v", would[0].message, would[0].annotations, evicted.message, evicted.annotations)
	}

	if d := mgrEvictionCount(t, sig) - evictedBefore; d != 1 {
		t.Errorf("kubelet_evictions delta %v, want 1 (the pass without the gate only)", d)
	}
	if d := dryRunCount(t, sig) - dryBefore; d != 1 {
		t.Errorf("kubelet_evictions_dry_run delta %v, want 1", d)
	}
	if h.m.IsUnderMemoryPressure() {
		t.Error("a dry run reported MemoryPressure")
	}
	if r := mgrAdmit(h, pod("new-besteffort")); !r.Admit {
		t.Errorf("a dry run rejected a BestEffort pod: %s", r.Message)
	}

	// The same decision next pass is not reported again.
	h.recorder.reset()
	h.advance(10 * time.Second)
	h.sync()
	if e := h.recorder.byReason(wouldEvictReason); len(e) != 0 {
		t.Errorf("the standing decision was reported again: %d WouldEvict events", len(e))
	}
	if d := dryRunCount(t, sig) - dryBefore; d != 1 {
		t.Errorf("kubelet_evictions_dry_run delta %v after a second pass, want 1", d)
	}

	// Once the pressure is gone, new pressure is a new decision.
	h.summary.set(fakeHealthyNode().summary(h.clock.Now(), st...))
	h.advance(10 * time.Second)
	h.sync()
	h.summary.set(mgrMemoryPressureNode().summary(h.clock.Now(), st...))
	h.advance(10 * time.Second)
	h.sync()
	if e := h.recorder.byReason(wouldEvictReason); len(e) != 1 {
		t.Errorf("%d WouldEvict events for renewed pressure, want 1", len(e))
	}
	if k := h.killer.get(); len(k) != 0 {
		t.Errorf("a dry run killed %d pods", len(k))
	}
}

func TestDryRunLocalStorage(t *testing.T) {
	setGateDuringTest(t, evictionDryRun, true)
	pod := pod("emptydir", withVolumes(emptyDirVol("cache", "100Mi", "")))
	h := mgrNewHarness(t, Config{}, true, fakeHealthyNode().summary(mgrEpoch,
		fakePodStats(pod, fakePodUsage{volumes: map[string]int64{"cache": 200 * mi}, ephem: -1})))
	h.pods = []*v1.Pod{pod}
	before := dryRunCount(t, signalEmptyDirFsLimit)
	if ev := h.sync(); ev != nil || len(h.killer.get()) != 0 {
		t.Fatalf("a dry run evicted %v", podNames(ev))
	}
	e := h.recorder.byReason(wouldEvictReason)
	if len(e) != 1 || e[0].message != `Usage of EmptyDir volume "cache" exceeds the limit "100Mi". ` {
		t.Errorf("WouldEvict events %+v, want one with the emptyDir message", e)
	}
	if d := dryRunCount(t, signalEmptyDirFsLimit) - before; d != 1 {
		t.Errorf("kubelet_evictions_dry_run{emptydirfs.limit} delta %v, want 1", d)
	}
}

// Reclaim-sized victims are reported concurrently, each once.
func TestDryRunReclaimSized(t *testing.T) {
	setGateDuringTest(t, evictionDryRun, true)
	setGateDuringTest(t, evictionReclaimSized, true)
	var pods []*v1.Pod
	var st []statsapi.PodStats
	for _, name := range []string{"a", "b", "c", "d"} {
		p := pod(name)
		pods = append(pods, p)
		st = append(st, fakePodStats(p, fakePodUsage{memWS: []int64{300 * mi}, ephem: -1}))
	}
	n := fakeHealthyNode()
	n.memAvail, n.memWS = 300*mi, 7*gi+724*mi // 724Mi short of 1Gi: three pods
	h := mgrNewHarness(t, mgrMemoryConfig(), false, n.summary(mgrEpoch, st...))
	h.pods = pods
	h.sync()
	var got []string
	for _, e := range h.recorder.byReason(wouldEvictReason) {
		got = append(got, e.object.(*v1.Pod).Name)
	}
	if len(got) != 3 || len(h.killer.get()) != 0 {
		t.Errorf("WouldEvict for %v with %d kills, want three pods and no kill", got, len(h.killer.get()))
	}
}

func TestDryRunGateOff(t *testing.T) {
	setGateDuringTest(t, evictionDryRun, false)
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, mgrMemoryConfig(), false, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	h.pods = pods
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
		t.Errorf("evicted %v, want [besteffort]", got)
	}
	if e := h.recorder.byReason(wouldEvictReason); len(e) != 0 || !h.m.IsUnderMemoryPressure() {
		t.Errorf("gate off: %d WouldEvict events, MemoryPressure %v; want none and true", len(e), h.m.IsUnderMemoryPressure())
	}
}

// The fast path reports what it would evict and kills nothing, once.
func TestDryRunFastPass(t *testing.T) {
	setGateDuringTest(t, evictionDryRun, true)
	hog, idle, pods, st := fastPods()
	h := newFastHarness(t, pods, st)
	h.cgroups(5*gi, map[*v1.Pod]int64{hog: 100 * mi, idle: 500 * mi})
	h.sync()
	h.clock.Step(time.Second)
	h.cgroups(7*gi+424*mi, map[*v1.Pod]int64{hog: 2*gi + 512*mi, idle: 500 * mi})
	ctx := t.Context()
	for range 3 {
		if got := h.m.fastPass(ctx, h.activePods, "test"); got != nil {
			t.Fatalf("a dry-run fast pass evicted %v", podNames(got))
		}
		h.clock.Step(fastPathQuiet)
	}
	e := h.recorder.byReason(wouldEvictReason)
	if len(e) != 1 || e[0].object.(*v1.Pod).Name != "hog" || len(h.killer.get()) != 0 {
		t.Errorf("%d WouldEvict events (want 1, on hog), %d kills (want 0)", len(e), len(h.killer.get()))
	}
	if h.m.IsUnderMemoryPressure() {
		t.Error("a dry-run fast pass reported MemoryPressure")
	}
}
