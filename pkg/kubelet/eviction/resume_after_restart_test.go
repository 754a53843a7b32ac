//evictkit:file EvictionResumeAfterRestart

package eviction

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// What is left of a recorded kill's grace period, in whole seconds, and
// whether the resumed kill counts the eviction.
func TestResumeKill(t *testing.T) {
	p := pod("p")
	started := mgrEpoch
	for _, tc := range []struct {
		name      string
		record    evictionRecord
		after     time.Duration
		wantGrace int64
		wantCount bool
	}{
		{name: "at once", record: evictionRecord{GracePeriodSeconds: 60, Started: started}, after: 900 * time.Millisecond, wantGrace: 60, wantCount: true},
		{name: "a third through", record: evictionRecord{GracePeriodSeconds: 60, Started: started}, after: 20 * time.Second, wantGrace: 40, wantCount: true},
		{name: "grace over", record: evictionRecord{GracePeriodSeconds: 60, Started: started}, after: 90 * time.Second, wantGrace: 0, wantCount: true},
		{name: "hard eviction", record: evictionRecord{GracePeriodSeconds: 0, Started: started}, after: time.Second, wantGrace: 0, wantCount: true},
		{name: "done", record: evictionRecord{GracePeriodSeconds: 60, Started: started, Done: true}, after: time.Second, wantGrace: 0, wantCount: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := resumeKill(p, tc.record, started.Add(tc.after))
			if k.gracePeriodSeconds != tc.wantGrace || k.count != tc.wantCount {
				t.Errorf("grace %d s, count %v; want %d s, %v", k.gracePeriodSeconds, k.count, tc.wantGrace, tc.wantCount)
			}
		})
	}
}

func TestDecodeRecord(t *testing.T) {
	want := evictionRecord{Signal: "memory.available", Message: "The node was low on resource: memory.", Disruption: true,
		GracePeriodSeconds: 60, Started: mgrEpoch}
	data, err := encodeRecord(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(data)
	if err != nil || got != want {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{``, `{`, `[]`, `{"signal":"memory.available"}`,
		`{"started":"2030-01-02T03:04:05Z","gracePeriodSeconds":-1}`} {
		if r, err := decodeRecord([]byte(bad)); err == nil {
			t.Errorf("decodeRecord(%q) = %+v, want an error", bad, r)
		}
	}
}

// resumeHarness is a manager with the gate on whose pod directories are
// under dir, like one kubelet process of several on the same node.
func resumeHarness(t *testing.T, dir string, summary *statsapi.Summary, pods ...*v1.Pod) *mgrHarness {
	t.Helper()
	cfg := Config{PressureTransitionPeriod: time.Minute, MaxPodGracePeriodSeconds: 60, Thresholds: []evictionapi.Threshold{
		soft(evictionapi.SignalMemoryAvailable, "1Gi", 10*time.Second),
		hard(evictionapi.SignalMemoryAvailable, "200Mi"),
	}}
	h := mgrNewHarness(t, cfg, false, summary)
	h.pods = pods
	h.m.records.podDir = func(uid types.UID) string { return filepath.Join(dir, string(uid)) }
	for _, p := range pods {
		if err := os.MkdirAll(filepath.Join(dir, string(p.UID)), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// slowPodHarness is resumeHarness with the gate set as on says, one pod
// that asks for 60 s to terminate and the node 500 MiB short of memory.
func slowPodHarness(t *testing.T, on bool) (h *mgrHarness, dir string, slow *v1.Pod) {
	t.Helper()
	setGateDuringTest(t, evictionResumeAfterRestart, on)
	dir = t.TempDir()
	slow = pod("slow", withGrace(60))
	summary := hardDuringSoftNode(500*mi).summary(mgrEpoch, fakePodStats(slow, fakePodUsage{memWS: []int64{500 * mi}, ephem: -1}))
	return resumeHarness(t, dir, summary, slow), dir, slow
}

func readRecord(t *testing.T, dir string, p *v1.Pod) (evictionRecord, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, string(p.UID), recordFile))
	if os.IsNotExist(err) {
		return evictionRecord{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(data)
	if err != nil {
		t.Fatalf("pod %s: %v", p.Name, err)
	}
	return r, true
}

func writeRecord(t *testing.T, dir string, p *v1.Pod, r evictionRecord) {
	t.Helper()
	data, err := encodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, string(p.UID), recordFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A soft eviction of a pod that asks for 60 s to terminate; the kubelet
// dies during the kill. The next process finishes it: the same kill with
// what is left of the 60 s, the same status, no second Evicted event, one
// count; and before any threshold acts (a hard threshold is met too). A
// third process, which finds the record done, sets the status again and
// counts nothing. With the gate off the next process starts over.
func TestMgrResumeAfterRestart(t *testing.T) {
	setGateDuringTest(t, evictionResumeAfterRestart, true)
	dir := t.TempDir()
	slow := pod("slow", withGrace(60))
	other := pod("other", withMemRequest("100Mi"))
	stats := func(avail int64) *statsapi.Summary {
		return hardDuringSoftNode(avail).summary(mgrEpoch,
			fakePodStats(slow, fakePodUsage{memWS: []int64{500 * mi}, ephem: -1}),
			fakePodStats(other, fakePodUsage{memWS: []int64{300 * mi}, ephem: -1}))
	}

	// The first process: the record is there, not done, while the kill runs.
	first := resumeHarness(t, dir, stats(500*mi), slow, other)
	var duringKill evictionRecord
	first.m.killPodFunc = func(p *v1.Pod, isEvicted bool, grace *int64, fn func(*v1.PodStatus)) error {
		r, ok := readRecord(t, dir, p)
		if !ok {
			t.Fatalf("no record of %s's eviction while it is killed", p.Name)
		}
		duringKill = r
		return first.killer.kill(p, isEvicted, grace, fn)
	}
	first.sync()
	first.advance(10 * time.Second)
	if got := first.sync(); len(got) != 1 || got[0] != slow {
		t.Fatalf("first process evicted %v, want slow", got)
	}
	firstStatus := first.killer.get()[0].status
	if duringKill.Done || duringKill.GracePeriodSeconds != 60 || !duringKill.Started.Equal(mgrEpoch.Add(10*time.Second)) ||
		duringKill.Signal != string(evictionapi.SignalMemoryAvailable) || duringKill.Message != firstStatus.Message || !duringKill.Disruption {
		t.Fatalf("record during the kill: %+v", duringKill)
	}
	if r, _ := readRecord(t, dir, slow); !r.Done {
		t.Fatalf("record after the kill returned: %+v, want done", r)
	}

	// The process died during the kill: the record is as it was then. The
	// next process starts 20 s into the grace period, with the hard
	// threshold met as well.
	writeRecord(t, dir, slow, duringKill)
	count := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable))
	second := resumeHarness(t, dir, stats(100*mi), slow, other)
	second.clock.SetTime(mgrEpoch.Add(30 * time.Second))
	evicted, logged := second.syncLogging()
	if len(evicted) != 1 || evicted[0] != slow || !slices.Contains(logged, resumedMessage) {
		t.Fatalf("second process: evicted %v, logged %q; want slow resumed", evicted, logged)
	}
	kills := second.killer.get()
	if len(kills) != 1 || kills[0].pod != slow || kills[0].grace == nil || *kills[0].grace != 40 || !kills[0].isEvicted {
		t.Fatalf("second process: kills %v, want slow with 40 s left", second.killedNames())
	}
	if s := kills[0].status; s.Phase != v1.PodFailed || s.Reason != Reason || s.Message != firstStatus.Message ||
		len(s.Conditions) != 1 || s.Conditions[0].Type != v1.DisruptionTarget {
		t.Fatalf("resumed status %+v, want the first kill's %+v", s, firstStatus)
	}
	if events := second.recorder.byReason(Reason); len(events) != 0 {
		t.Fatalf("second process recorded %d Evicted events, want none", len(events))
	}
	if got := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable)) - count; got != 1 {
		t.Fatalf("kubelet_evictions rose by %v, want 1", got)
	}
	if r, _ := readRecord(t, dir, slow); !r.Done {
		t.Fatalf("record after the resumed kill: %+v, want done", r)
	}
	// A pod the process has seen is not looked at again.
	writeRecord(t, dir, slow, duringKill)
	second.killer.reset()
	second.summary.set(stats(500 * mi))
	second.advance(time.Second)
	if got := second.sync(); len(got) != 0 || len(second.killer.get()) != 0 {
		t.Fatalf("second process, next pass: evicted %v, killed %v; want nothing", got, second.killedNames())
	}

	// A third process finds the record done: the status again, no count.
	writeRecord(t, dir, slow, func() evictionRecord { r := duringKill; r.Done = true; return r }())
	count = mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable))
	third := resumeHarness(t, dir, stats(500*mi), slow, other)
	if got := third.sync(); len(got) != 1 || got[0] != slow {
		t.Fatalf("third process evicted %v, want slow", got)
	}
	if kills := third.killer.get(); len(kills) != 1 || *kills[0].grace != 0 || kills[0].status.Reason != Reason {
		t.Fatalf("third process: kills %v, want slow with no grace period", third.killedNames())
	}
	if got := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable)) - count; got != 0 || len(third.recorder.byReason(Reason)) != 0 {
		t.Fatalf("third process: kubelet_evictions rose by %v, %d events; want neither", got, len(third.recorder.byReason(Reason)))
	}
}

// With the gate off, nothing is recorded and a record is not resumed: the
// soft threshold starts its grace period over, as upstream does.
func TestMgrResumeAfterRestartGateOff(t *testing.T) {
	h, dir, slow := slowPodHarness(t, false)
	writeRecord(t, dir, slow, evictionRecord{Signal: "memory.available", GracePeriodSeconds: 60, Started: mgrEpoch})
	if got := h.sync(); len(got) != 0 {
		t.Fatalf("gate off: evicted %v at once, want the soft grace period first", got)
	}
	h.advance(10 * time.Second)
	if got := h.sync(); len(got) != 1 || len(h.recorder.byReason(Reason)) != 1 {
		t.Fatalf("gate off: evicted %v with %d events, want slow anew", got, len(h.recorder.byReason(Reason)))
	}
	if r, _ := readRecord(t, dir, slow); r.Done || !r.Started.Equal(mgrEpoch) {
		t.Fatalf("gate off: the record was rewritten: %+v", r)
	}
}

// An unreadable record is logged and ignored; a pod directory that cannot
// be written leaves the eviction as it is.
func TestMgrResumeAfterRestartBadRecords(t *testing.T) {
	h, dir, slow := slowPodHarness(t, true)
	if err := os.WriteFile(filepath.Join(dir, string(slow.UID), recordFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, logged := h.syncLogging(); len(got) != 0 || !slices.Contains(logged, "Eviction manager: ignoring an unreadable eviction record") {
		t.Fatalf("unreadable record: evicted %v, logged %q", got, logged)
	}
	h.m.records.podDir = func(uid types.UID) string { return filepath.Join(dir, "missing", string(uid)) }
	h.advance(10 * time.Second)
	if got, logged := h.syncLogging(); len(got) != 1 || len(h.recorder.byReason(Reason)) != 1 ||
		!slices.Contains(logged, "Eviction manager: cannot record the eviction; a kubelet restart before it ends starts it over") {
		t.Fatalf("unwritable pod directory: evicted %v, logged %q; want the eviction anyway", got, logged)
	}
}

// A pod the process evicts before any pass has looked at it (the fast
// path's pass, say) is not taken for a previous process's eviction.
func TestMgrResumeAfterRestartOwnEviction(t *testing.T) {
	h, dir, slow := slowPodHarness(t, true)
	h.m.evictPod(klog.Background(), &podEviction{pod: slow, signal: "memory.available", gracePeriodSeconds: 60, message: "m", disruption: true})
	if r, ok := readRecord(t, dir, slow); !ok || !r.Done {
		t.Fatalf("record after the eviction: %+v (present %v), want done", r, ok)
	}
	h.killer.reset()
	if got := h.sync(); len(got) != 0 || len(h.killer.get()) != 0 {
		t.Fatalf("the pass after the process's own eviction resumed it: evicted %v, killed %v", got, h.killedNames())
	}
}

// An eviction decided before any pass has looked at the pod (the fast
// path's) finishes a previous process's recorded eviction instead of
// starting a new one: no event, the rest of the grace period, one count.
func TestMgrResumeAfterRestartBeforeFirstPass(t *testing.T) {
	h, dir, slow := slowPodHarness(t, true)
	writeRecord(t, dir, slow, evictionRecord{Signal: "memory.available", Message: "first", Disruption: true, GracePeriodSeconds: 60, Started: mgrEpoch.Add(-25 * time.Second)})
	count := mgrEvictionCount(t, "memory.available")
	if !h.m.evictPod(klog.Background(), &podEviction{pod: slow, signal: "memory.available", gracePeriodSeconds: 60, message: "second", disruption: true}) {
		t.Fatal("evictPod attempted nothing")
	}
	kills := h.killer.get()
	if len(kills) != 1 || *kills[0].grace != 35 || kills[0].status.Message != "first" {
		t.Fatalf("kills %v (grace %v, message %q), want slow with 35 s left and the first message", h.killedNames(), kills[0].grace, kills[0].status.Message)
	}
	if n := len(h.recorder.byReason(Reason)); n != 0 {
		t.Fatalf("%d Evicted events, want none", n)
	}
	if got := mgrEvictionCount(t, "memory.available") - count; got != 1 {
		t.Fatalf("kubelet_evictions rose by %v, want 1", got)
	}
}
