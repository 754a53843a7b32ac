//evictkit:file EvictionFastPath

package eviction

import (
	"reflect"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func TestWithFreshMemory(t *testing.T) {
	at := t0.Add(7 * time.Second)
	last := observations(
		ob{signal: sigMem, available: 3 << 30, capacity: 8 << 30, at: t0},
		ob{signal: sigAlloc, available: 2 << 30, capacity: 6 << 30, at: t0},
		ob{signal: sigNodeFs, available: 50 << 30, capacity: 100 << 30, at: t0},
	)
	hog, idle, fresh := pod("hog"), pod("idle"), pod("fresh")
	hog.Spec.Containers = []v1.Container{{Name: "c"}, {Name: "sidecar"}}
	hog.Status.ContainerStatuses = []v1.ContainerStatus{
		{Name: "c", ContainerID: "containerd://c-id"},
		{Name: "sidecar", ContainerID: "containerd://sidecar-id"},
	}
	stats := statsIndex(
		podStats("hog", withWorkingSet("100Mi"), withContainerStats(cStats("c", cWorkingSet("100Mi")))),
		podStats("idle", withWorkingSet("50Mi")),
	)
	f := &freshMemory{at: at, node: 7 << 30, nodeOK: true, pods: 5 << 30, podsOK: true,
		pod:        map[types.UID]int64{hog.UID: 2 << 30, fresh.UID: 300 << 20},
		containers: map[types.UID]map[string]int64{hog.UID: {"c-id": 1900 << 20, "sidecar-id": 100 << 20}}}

	obs, merged := withFreshMemory(last, stats, []*v1.Pod{hog, idle, fresh}, f)

	if got, _ := obs.get(sigMem); got != (observation{available: 1 << 30, capacity: 8 << 30, time: at}) {
		t.Errorf("memory.available = %+v, want 1Gi of 8Gi at the fresh time", got)
	}
	if got, _ := obs.get(sigAlloc); got != (observation{available: 1 << 30, capacity: 6 << 30, time: at}) {
		t.Errorf("allocatableMemory.available = %+v, want 1Gi of 6Gi at the fresh time", got)
	}
	if got, want := mustGet(t, obs, sigNodeFs), mustGet(t, last, sigNodeFs); got != want {
		t.Errorf("nodefs.available = %+v, want it unchanged %+v", got, want)
	}
	if ws := workingSet(merged.lookup(hog)); ws != 2<<30 {
		t.Errorf("hog working set %d, want the fresh 2Gi", ws)
	}
	cs := merged.lookup(hog).Containers
	if len(cs) != 2 || cs[0].Name != "c" || cs[1].Name != "sidecar" {
		t.Fatalf("hog's container stats %+v, want c (kept) and sidecar (added)", cs)
	}
	if a, b := u64(cs[0].Memory.WorkingSetBytes), u64(cs[1].Memory.WorkingSetBytes); a != 1900<<20 || b != 100<<20 {
		t.Errorf("hog's containers' working sets %d, %d; want the fresh 1900Mi and 100Mi", a, b)
	}
	if ws := u64(stats.lookup(hog).Containers[0].Memory.WorkingSetBytes); ws != 100<<20 {
		t.Errorf("the input container stats changed: %d", ws)
	}
	if merged.lookup(idle) != stats.lookup(idle) {
		t.Error("idle's stats were replaced though it had no fresh figure")
	}
	s := merged.lookup(fresh)
	if s == nil || workingSet(s) != 300<<20 || s.PodRef.Name != "fresh" || s.PodRef.UID != string(fresh.UID) {
		t.Errorf("a pod the summary lacks: stats %+v, want its fresh working set and reference", s)
	}
	// The inputs are untouched.
	if ws := workingSet(stats.lookup(hog)); ws != 100<<20 {
		t.Errorf("the input stats changed: hog %d", ws)
	}
	if got, _ := last.get(sigMem); got.time != t0 {
		t.Error("the input observations changed")
	}

	t.Run("figures that could not be read keep the old observation", func(t *testing.T) {
		obs, merged := withFreshMemory(last, stats, nil, &freshMemory{at: at, node: 1, nodeOK: false})
		if got, want := mustGet(t, obs, sigMem), mustGet(t, last, sigMem); got != want {
			t.Errorf("memory.available %+v, want the old %+v", got, want)
		}
		if !reflect.DeepEqual(merged, stats) {
			t.Error("stats changed without fresh pod figures")
		}
	})
	t.Run("no capacity known: no observation", func(t *testing.T) {
		obs, _ := withFreshMemory(observations(), nil, nil, f)
		if _, ok := obs.get(sigMem); ok {
			t.Error("memory.available observed without a capacity")
		}
	})
	t.Run("before the first monitoring pass: the machine's memory", func(t *testing.T) {
		g := *f
		g.capacity = 8 << 30
		obs, _ := withFreshMemory(nil, nil, nil, &g)
		if got := mustGet(t, obs, sigMem); got != (observation{available: 1 << 30, capacity: 8 << 30, time: at}) {
			t.Errorf("memory.available = %+v, want 1Gi of the machine's 8Gi", got)
		}
		if _, ok := obs.get(sigAlloc); ok {
			t.Error("allocatableMemory.available observed without the node's allocatable")
		}
	})
	t.Run("an observed capacity wins over the machine's", func(t *testing.T) {
		g := *f
		g.capacity = 64 << 30
		obs, _ := withFreshMemory(last, nil, nil, &g)
		if got := mustGet(t, obs, sigMem); got.capacity != 8<<30 {
			t.Errorf("memory.available capacity %d, want the observed 8Gi", got.capacity)
		}
	})
}

func mustGet(t *testing.T, obs *observationSet, s evictionapi.Signal) observation {
	t.Helper()
	o, ok := obs.get(s)
	if !ok {
		t.Fatalf("%s not observed", s)
	}
	return o
}

func TestHardMemoryThresholdMet(t *testing.T) {
	obs := observations(
		ob{signal: sigMem, available: 500 << 20, capacity: 8 << 30},
		ob{signal: sigNodeFs, available: 0, capacity: 100 << 30},
	)
	cases := []struct {
		name       string
		thresholds []evictionapi.Threshold
		want       bool
	}{
		{name: "hard memory met", thresholds: []evictionapi.Threshold{hard(sigMem, "1Gi")}, want: true},
		{name: "hard memory not met", thresholds: []evictionapi.Threshold{hard(sigMem, "100Mi")}},
		{name: "soft memory met is left to the loop", thresholds: []evictionapi.Threshold{soft(sigMem, "1Gi", time.Minute)}},
		{name: "a disk threshold met is not memory", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1Gi")}},
		{name: "allocatable not observed", thresholds: []evictionapi.Threshold{hard(sigAlloc, "1Gi")}},
	}
	for _, tc := range cases {
		if got := hardMemoryThresholdMet(tc.thresholds, obs); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFastPassState(t *testing.T) {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi"), soft(sigNodeFs, "1Gi", time.Minute), hard(sigPID, "100")}
	prev := newDecisionState(3)
	prev.firstMet[1], prev.acting[1] = t0.Add(-time.Minute), true
	prev.conditionSeen[conditionIndex(v1.NodeDiskPressure)], prev.conditionKnown[conditionIndex(v1.NodeDiskPressure)] = t0, true
	next := newDecisionState(3)
	next.firstMet[0], next.acting[0] = t0.Add(time.Second), true
	next.firstMet[2] = t0.Add(time.Second) // seen met from stale PID stats
	next.conditionSeen[conditionIndex(v1.NodeMemoryPressure)], next.conditionKnown[conditionIndex(v1.NodeMemoryPressure)] = t0.Add(time.Second), true
	next.conditionSeen[conditionIndex(v1.NodeDiskPressure)] = t0.Add(time.Second)
	next.conditionSeen[conditionIndex(v1.NodePIDPressure)], next.conditionKnown[conditionIndex(v1.NodePIDPressure)] = t0.Add(time.Second), true

	got := fastPassState(thresholds, &prev, next, t0.Add(time.Second))
	if got.firstMet[0] != t0.Add(time.Second) || !got.acting[0] {
		t.Errorf("memory threshold state %v/%v, want the fast pass's", got.firstMet[0], got.acting[0])
	}
	if got.firstMet[1] != t0.Add(-time.Minute) || !got.acting[1] || !got.firstMet[2].IsZero() || got.acting[2] {
		t.Errorf("disk/PID threshold state %v/%v %v/%v, want the previous pass's", got.firstMet[1], got.acting[1], got.firstMet[2], got.acting[2])
	}
	if c := got.conditions(time.Minute, t0.Add(time.Second)); !reflect.DeepEqual(c, []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure}) {
		t.Errorf("conditions %v, want memory from the fast pass and disk as before (no PID from stale stats)", c)
	}
	if got.memoryDecidedAt != t0.Add(time.Second) {
		t.Errorf("memoryDecidedAt %v, want the fresh figures' time", got.memoryDecidedAt)
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

	got := fastPassState(thresholds, &short, long, t0.Add(time.Second))
	if got.firstMet[1] != t0 || !got.acting[1] {
		t.Errorf("nodefs state %v/%v with no previous entry, want the fast pass's", got.firstMet[1], got.acting[1])
	}
	got = fastPassState(thresholds, &long, short, t0.Add(time.Second))
	if len(got.firstMet) != 1 || len(got.acting) != 1 {
		t.Errorf("state of %d/%d entries, want the fast pass's single entry", len(got.firstMet), len(got.acting))
	}
}

// Memory stats from before a fast pass's figures never drive an eviction.
func TestEvaluateMemoryDecidedAt(t *testing.T) {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi"), hard(sigNodeFs, "1Gi")}
	prev := newDecisionState(2)
	prev.memoryDecidedAt = t0.Add(5 * time.Second)
	for _, tc := range []struct {
		name   string
		memAt  time.Time
		wantIx []int
	}{
		{name: "memory stats older than the fast pass", memAt: t0.Add(3 * time.Second), wantIx: []int{1}},
		{name: "memory stats of the fast pass's instant", memAt: t0.Add(5 * time.Second), wantIx: []int{1}},
		{name: "memory stats newer", memAt: t0.Add(6 * time.Second), wantIx: []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := observations(
				ob{signal: sigMem, available: 0, capacity: 8 << 30, at: tc.memAt},
				ob{signal: sigNodeFs, available: 0, capacity: 100 << 30, at: t0.Add(4 * time.Second)},
			)
			ev := evaluate(thresholds, &prev, obs, time.Minute, t0.Add(10*time.Second))
			if !reflect.DeepEqual(ev.actionable, tc.wantIx) {
				t.Errorf("actionable %v, want %v", ev.actionable, tc.wantIx)
			}
			if !ev.next.memoryDecidedAt.Equal(prev.memoryDecidedAt) {
				t.Error("memoryDecidedAt not carried to the next state")
			}
		})
	}
}

func TestAdvanceTracksMemoryEvictions(t *testing.T) {
	a, b := pod("a"), pod("b")
	at := t0.Add(time.Minute)
	s := newDecisionState(1).advance(outcome{signal: sigMem, evicted: []*v1.Pod{a}, at: t0, trackMemory: true})
	s = s.advance(outcome{signal: sigAlloc, evicted: []*v1.Pod{b}, at: at, trackMemory: true})
	if got := namesOf(s.memoryInFlight); !reflect.DeepEqual(got, []string{"a", "b"}) || !s.memoryEvictedAt.Equal(at) {
		t.Errorf("in flight %v since %v, want [a b] since %v", got, s.memoryEvictedAt, at)
	}
	if got := newDecisionState(1).advance(outcome{signal: sigMem, evicted: []*v1.Pod{a}, at: at}); len(got.memoryInFlight) != 0 {
		t.Errorf("without the fast path running, %v are tracked", namesOf(got.memoryInFlight))
	}
	if got := newDecisionState(1).advance(outcome{signal: sigNodeFs, evicted: []*v1.Pod{a}, at: at, trackMemory: true}); len(got.memoryInFlight) != 0 {
		t.Errorf("a disk eviction is tracked as a memory one: %v", namesOf(got.memoryInFlight))
	}
}

func TestStillTerminating(t *testing.T) {
	a, b := pod("a"), pod("b")
	prev := newDecisionState(1)
	prev.memoryInFlight, prev.memoryEvictedAt = []*v1.Pod{a, b}, t0
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
		kept, since := stillTerminating(&prev, tc.cleanedUp, tc.now)
		if got := namesOf(kept); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v still terminating, want %v", tc.name, got, tc.want)
		}
		if wantSince := map[bool]time.Time{true: t0}[len(tc.want) > 0]; !since.Equal(wantSince) {
			t.Errorf("%s: since %v, want %v", tc.name, since, wantSince)
		}
	}
}

func TestDecideHoldsMemoryWhileVictimsTerminate(t *testing.T) {
	gone := pod("gone")
	pods := []*v1.Pod{pod("a")}
	held := memoryInput(512*mi, pods, podStats("a", withWorkingSet("300Mi")))
	held.prev.memoryInFlight, held.prev.memoryEvictedAt = []*v1.Pod{gone}, t0.Add(-time.Second)
	d := decide(held)
	if d.target != nil || namesOf(d.heldFor) == nil || namesOf(d.heldFor)[0] != "gone" {
		t.Fatalf("with an earlier victim terminating: target %v, held for %v; want no target, held for [gone]", d.target != nil, namesOf(d.heldFor))
	}
	if got := namesOf(d.next.memoryInFlight); !reflect.DeepEqual(got, []string{"gone"}) {
		t.Errorf("the next state remembers %v in flight, want [gone]", got)
	}
	held.cleanedUp = map[*v1.Pod]bool{gone: true}
	d = decide(held)
	if d.target == nil || len(d.heldFor) > 0 || len(d.next.memoryInFlight) > 0 {
		t.Errorf("once it is cleaned up: target %v, held for %v, in flight %v; want a target, nothing held or in flight",
			d.target != nil, namesOf(d.heldFor), namesOf(d.next.memoryInFlight))
	}
}
