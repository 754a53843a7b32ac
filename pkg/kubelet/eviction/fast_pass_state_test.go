//evictkit:file EvictionFastPath

package eviction

import (
	"reflect"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

var (
	memoryCond = conditionIndex(v1.NodeMemoryPressure)
	diskCond   = conditionIndex(v1.NodeDiskPressure)
	pidCond    = conditionIndex(v1.NodePIDPressure)
)

func TestSignalConditionIndex(t *testing.T) {
	for signal, want := range map[evictionapi.Signal]int{
		sigMem: memoryCond, sigAlloc: memoryCond,
		sigNodeFs: diskCond, evictionapi.SignalNodeFsInodesFree: diskCond, evictionapi.SignalImageFsAvailable: diskCond,
		evictionapi.SignalContainerFsInodesFree: diskCond, sigPID: pidCond, "no.such.signal": -1,
	} {
		if got := signalConditionIndex(signal); got != want {
			t.Errorf("%s: condition index %d, want %d", signal, got, want)
		}
	}
}

// A fast pass keeps the decision's state for the thresholds and condition
// it had fresh figures for, and the previous pass's for the others.
func TestFastPassState(t *testing.T) {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi"), soft(sigNodeFs, "1Gi", time.Minute), hard(sigPID, "100")}
	prev := newDecisionState(3)
	prev.firstMet[0] = t0.Add(-2 * time.Minute)
	prev.firstMet[1], prev.acting[1] = t0.Add(-time.Minute), true
	prev.conditionSeen[diskCond], prev.conditionKnown[diskCond] = t0, true
	next := newDecisionState(3)
	next.firstMet[0], next.acting[0] = t0.Add(time.Second), true
	next.firstMet[1] = t0.Add(time.Second)
	next.firstMet[2] = t0.Add(time.Second) // seen met from stale PID stats
	next.conditionSeen[memoryCond], next.conditionKnown[memoryCond] = t0.Add(time.Second), true
	next.conditionSeen[diskCond], next.conditionKnown[diskCond] = t0.Add(time.Second), true
	next.conditionSeen[pidCond], next.conditionKnown[pidCond] = t0.Add(time.Second), true
	at := t0.Add(time.Second)

	got := fastPassState(thresholds, &prev, next, v1.NodeMemoryPressure, at)
	if got.firstMet[0] != at || !got.acting[0] {
		t.Errorf("memory pass: memory threshold state %v/%v, want the fast pass's", got.firstMet[0], got.acting[0])
	}
	if got.firstMet[1] != t0.Add(-time.Minute) || !got.acting[1] || !got.firstMet[2].IsZero() || got.acting[2] {
		t.Errorf("memory pass: disk/PID threshold state %v/%v %v/%v, want the previous pass's", got.firstMet[1], got.acting[1], got.firstMet[2], got.acting[2])
	}
	if c := got.conditions(time.Minute, at); !reflect.DeepEqual(c, []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure}) {
		t.Errorf("memory pass: conditions %v, want memory from the fast pass and disk as before (no PID from stale stats)", c)
	}
	if got.decidedAt[memoryCond] != at || !got.decidedAt[diskCond].IsZero() {
		t.Errorf("memory pass: decidedAt %v, want the fresh figures' time for memory alone", got.decidedAt)
	}

	got = fastPassState(thresholds, &prev, next, v1.NodeDiskPressure, at)
	if got.firstMet[1] != at || got.acting[1] {
		t.Errorf("disk pass: nodefs threshold state %v/%v, want the fast pass's", got.firstMet[1], got.acting[1])
	}
	if got.firstMet[0] != t0.Add(-2*time.Minute) || got.acting[0] || !got.firstMet[2].IsZero() {
		t.Errorf("disk pass: memory/PID threshold state %v/%v %v, want the previous pass's", got.firstMet[0], got.acting[0], got.firstMet[2])
	}
	if c := got.conditions(time.Minute, at); !reflect.DeepEqual(c, []v1.NodeConditionType{v1.NodeDiskPressure}) {
		t.Errorf("disk pass: conditions %v, want disk alone (seen by the fast pass; memory not seen by the previous pass)", c)
	}
	if !got.conditionSeen[diskCond].Equal(at) {
		t.Errorf("disk pass: DiskPressure seen at %v, want the fast pass's %v", got.conditionSeen[diskCond], at)
	}
	if got.decidedAt[diskCond] != at || !got.decidedAt[memoryCond].IsZero() {
		t.Errorf("disk pass: decidedAt %v, want the fresh figures' time for disk alone", got.decidedAt)
	}
}

// A state with fewer entries than thresholds (none yet, or thresholds
// added since) contributes nothing past its end: those entries are the
// fast pass's own.
func TestFastPassStateShorterStates(t *testing.T) {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi"), hard(sigNodeFs, "1Gi"), hard(sigPID, "100")}
	long := newDecisionState(3)
	long.firstMet[1], long.acting[1] = t0, true
	short := newDecisionState(1)

	got := fastPassState(thresholds, &short, long, v1.NodeMemoryPressure, t0.Add(time.Second))
	if got.firstMet[1] != t0 || !got.acting[1] {
		t.Errorf("nodefs state %v/%v with no previous entry, want the fast pass's", got.firstMet[1], got.acting[1])
	}
	got = fastPassState(thresholds, &long, short, v1.NodeMemoryPressure, t0.Add(time.Second))
	if len(got.firstMet) != 1 || len(got.acting) != 1 {
		t.Errorf("state of %d/%d entries, want the fast pass's single entry", len(got.firstMet), len(got.acting))
	}
}

// Stats from before a fast pass's figures never drive an eviction for
// that pass's condition; other conditions' signals are not affected.
func TestEvaluateDecidedAt(t *testing.T) {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi"), hard(sigNodeFs, "1Gi")}
	for _, tc := range []struct {
		name   string
		cond   int
		memAt  time.Time
		diskAt time.Time
		wantIx []int
	}{
		{name: "memory stats older than the memory fast pass", cond: memoryCond, memAt: t0.Add(3 * time.Second), diskAt: t0.Add(4 * time.Second), wantIx: []int{1}},
		{name: "memory stats of the memory fast pass's instant", cond: memoryCond, memAt: t0.Add(5 * time.Second), diskAt: t0.Add(4 * time.Second), wantIx: []int{1}},
		{name: "memory stats newer", cond: memoryCond, memAt: t0.Add(6 * time.Second), diskAt: t0.Add(4 * time.Second), wantIx: []int{0, 1}},
		{name: "disk stats older than the disk fast pass", cond: diskCond, memAt: t0.Add(3 * time.Second), diskAt: t0.Add(4 * time.Second), wantIx: []int{0}},
		{name: "disk stats newer than the disk fast pass", cond: diskCond, memAt: t0.Add(3 * time.Second), diskAt: t0.Add(6 * time.Second), wantIx: []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := newDecisionState(2)
			prev.decidedAt[tc.cond] = t0.Add(5 * time.Second)
			obs := observations(
				ob{signal: sigMem, available: 0, capacity: 8 << 30, at: tc.memAt},
				ob{signal: sigNodeFs, available: 0, capacity: 100 << 30, at: tc.diskAt},
			)
			ev := evaluate(thresholds, &prev, obs, time.Minute, t0.Add(10*time.Second))
			if !reflect.DeepEqual(ev.actionable, tc.wantIx) {
				t.Errorf("actionable %v, want %v", ev.actionable, tc.wantIx)
			}
			if ev.next.decidedAt != prev.decidedAt {
				t.Error("decidedAt not carried to the next state")
			}
		})
	}
}

func TestAdvanceTracksWatchedEvictions(t *testing.T) {
	a, b, c := pod("a"), pod("b"), pod("c")
	at := t0.Add(time.Minute)
	s := newDecisionState(1).advance(outcome{signal: sigMem, evicted: []*v1.Pod{a}, at: t0, tracked: true})
	s = s.advance(outcome{signal: sigAlloc, evicted: []*v1.Pod{b}, at: at, tracked: true})
	s = s.advance(outcome{signal: evictionapi.SignalNodeFsInodesFree, evicted: []*v1.Pod{c}, at: t0, tracked: true})
	if got := namesOf(s.inFlight[memoryCond].pods); !reflect.DeepEqual(got, []string{"a", "b"}) || !s.inFlight[memoryCond].at.Equal(at) {
		t.Errorf("memory: in flight %v since %v, want [a b] since %v", got, s.inFlight[memoryCond].at, at)
	}
	if got := namesOf(s.inFlight[diskCond].pods); !reflect.DeepEqual(got, []string{"c"}) || !s.inFlight[diskCond].at.Equal(t0) {
		t.Errorf("disk: in flight %v since %v, want [c] since %v", got, s.inFlight[diskCond].at, t0)
	}
	if got := namesOf(allInFlight(&s)); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("all in flight %v, want [a b c]", got)
	}
	if got := newDecisionState(1).advance(outcome{signal: sigMem, evicted: []*v1.Pod{a}, at: at}); len(allInFlight(&got)) != 0 {
		t.Errorf("without a fast path watching, %v are tracked", namesOf(allInFlight(&got)))
	}
}

func TestStillTerminating(t *testing.T) {
	a, b := pod("a"), pod("b")
	prev := podsInFlight{pods: []*v1.Pod{a, b}, at: t0}
	for _, tc := range []struct {
		name      string
		cleanedUp map[*v1.Pod]bool
		now       time.Time
		want      []string
	}{
		{"none cleaned up", nil, t0.Add(time.Second), []string{"a", "b"}},
		{"one cleaned up", map[*v1.Pod]bool{a: true}, t0.Add(time.Second), []string{"b"}},
		{"all cleaned up", map[*v1.Pod]bool{a: true, b: true}, t0.Add(time.Second), nil},
		{"at the cleanup timeout", nil, t0.Add(30 * time.Second), []string{"a", "b"}},
		{"past the cleanup timeout", nil, t0.Add(30*time.Second + 1), nil},
	} {
		kept := stillTerminating(prev, tc.cleanedUp, tc.now)
		if got := namesOf(kept.pods); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v still terminating, want %v", tc.name, got, tc.want)
		}
		if wantSince := map[bool]time.Time{true: t0}[len(tc.want) > 0]; !kept.at.Equal(wantSince) {
			t.Errorf("%s: since %v, want %v", tc.name, kept.at, wantSince)
		}
	}
}

func TestDecideHoldsWhileVictimsTerminate(t *testing.T) {
	gone := pod("gone")
	pods := []*v1.Pod{pod("a")}
	held := memoryInput(512*mi, pods, podStats("a", withWorkingSet("300Mi")))
	held.prev.inFlight[memoryCond] = podsInFlight{pods: []*v1.Pod{gone}, at: t0.Add(-time.Second)}
	d := decide(held)
	if d.target != nil || !slices.Equal(namesOf(d.heldFor), []string{"gone"}) || d.heldCondition != v1.NodeMemoryPressure {
		t.Fatalf("with an earlier victim terminating: target %v, held for %v (%s); want no target, held for [gone] (MemoryPressure)", d.target != nil, namesOf(d.heldFor), d.heldCondition)
	}
	if got := namesOf(d.next.inFlight[memoryCond].pods); !reflect.DeepEqual(got, []string{"gone"}) {
		t.Errorf("the next state remembers %v in flight, want [gone]", got)
	}
	held.cleanedUp = map[*v1.Pod]bool{gone: true}
	d = decide(held)
	if d.target == nil || len(d.heldFor) > 0 || len(allInFlight(&d.next)) > 0 {
		t.Errorf("once it is cleaned up: target %v, held for %v, in flight %v; want a target, nothing held or in flight",
			d.target != nil, namesOf(d.heldFor), namesOf(allInFlight(&d.next)))
	}

	// A disk victim terminating holds no memory target, and the reverse.
	held = memoryInput(512*mi, pods, podStats("a", withWorkingSet("300Mi")))
	held.prev.inFlight[diskCond] = podsInFlight{pods: []*v1.Pod{gone}, at: t0.Add(-time.Second)}
	if d = decide(held); d.target == nil || len(d.heldFor) > 0 {
		t.Errorf("a disk victim terminating: memory target %v, held for %v; want a target", d.target != nil, namesOf(d.heldFor))
	}
	if got := namesOf(d.next.inFlight[diskCond].pods); !reflect.DeepEqual(got, []string{"gone"}) {
		t.Errorf("the disk victim is forgotten by a memory pass: in flight %v, want [gone]", got)
	}
}
