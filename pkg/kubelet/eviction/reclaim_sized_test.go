//evictkit:file EvictionReclaimSized

package eviction

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// What EvictionReclaimSized adds to the scenarios: the gate line gate
// reclaim-sized, and the sizing of a target.
var (
	_ = addScenarioFeature(scenarioFeature{
		gate:    "reclaim-sized",
		setGate: func(s *scenario) { s.gates.set(evictionReclaimSized, true) },
	})
	_ = addDecisionRender(decisionRender{
		target: func(b *strings.Builder, tg *reclaimTarget) {
			if s := tg.sizing; s != nil {
				fmt.Fprintf(b, "sized: shortfall %s, victims use %s, covered %v\n", formatBytes(s.shortfall), formatBytes(s.expected), s.covered)
			}
		},
	})
)

func TestSizeVictims(t *testing.T) {
	thr := hard(sigMem, "1Gi")
	withMin := minReclaim(thr, "512Mi")
	at := func(available int64) observation {
		return observation{available: available, capacity: 8 << 30}
	}
	cases := []struct {
		name     string
		t        evictionapi.Threshold
		ob       observation
		usage    []int64
		fallback int
		want     int
		wantS    sizing
	}{
		{name: "first pod covers the shortfall", t: thr, ob: at(900 * mi), usage: []int64{200 * mi, 300 * mi}, fallback: 1,
			want: 1, wantS: sizing{shortfall: 124 * mi, expected: 200 * mi, covered: true}},
		{name: "shortfall needs a prefix of three", t: thr, ob: at(424 * mi), usage: []int64{200 * mi, 200 * mi, 200 * mi, 200 * mi}, fallback: 1,
			want: 3, wantS: sizing{shortfall: 600 * mi, expected: 600 * mi, covered: true}},
		{name: "exact cover stops at the pod that reaches it", t: thr, ob: at(624 * mi), usage: []int64{200 * mi, 200 * mi, 200 * mi}, fallback: 1,
			want: 2, wantS: sizing{shortfall: 400 * mi, expected: 400 * mi, covered: true}},
		// 924Mi available, level 1Gi + 512Mi: shortfall 612Mi; 600Mi is short of it.
		{name: "minimum reclaim is part of the shortfall", t: withMin, ob: at(924 * mi), usage: []int64{300 * mi, 300 * mi, 300 * mi}, fallback: 1,
			want: 3, wantS: sizing{shortfall: 612 * mi, expected: 900 * mi, covered: true}},
		{name: "pods that free nothing still go when ranked ahead", t: thr, ob: at(824 * mi), usage: []int64{0, 0, 250 * mi}, fallback: 1,
			want: 3, wantS: sizing{shortfall: 200 * mi, expected: 250 * mi, covered: true}},
		{name: "not covered: fallback of one", t: thr, ob: at(0), usage: []int64{100 * mi, 100 * mi}, fallback: 1,
			want: 1, wantS: sizing{shortfall: 1024 * mi, expected: 100 * mi}},
		{name: "not covered: fallback of all", t: thr, ob: at(0), usage: []int64{100 * mi, 100 * mi}, fallback: 2,
			want: 2, wantS: sizing{shortfall: 1024 * mi, expected: 200 * mi}},
		{name: "no shortfall left: the first pod", t: thr, ob: at(2 << 30), usage: []int64{100 * mi, 100 * mi}, fallback: 2,
			want: 1, wantS: sizing{shortfall: -1024 * mi, expected: 100 * mi, covered: true}},
		{name: "empty pool", t: thr, ob: at(0), fallback: 1,
			want: 0, wantS: sizing{shortfall: 1024 * mi}},
		// Threshold plus minimum reclaim goes past the int64 limit; the
		// shortfall is still in range and takes both pods.
		{name: "level past int64 is not wrapped", t: minReclaim(hard(sigMem, "9223372036854775806"), "1Ki"), ob: at(12336),
			usage: []int64{0, math.MaxInt64 - 1}, fallback: 1,
			want: 2, wantS: sizing{shortfall: math.MaxInt64 - 11313, expected: math.MaxInt64 - 1, covered: true}},
		// The shortfall itself is past int64: one pod of MaxInt64 is short
		// of it, two cover it; the sizing clamps both figures.
		{name: "shortfall past int64 is compared exactly", t: minReclaim(hard(sigMem, "9223372036854775806"), "1Ei"), ob: at(0),
			usage: []int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}, fallback: 1,
			want: 2, wantS: sizing{shortfall: math.MaxInt64, expected: math.MaxInt64, covered: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, s := sizeVictims(tc.t, tc.ob, tc.usage, tc.fallback)
			if n != tc.want || s != tc.wantS {
				t.Errorf("sizeVictims = %d %+v, want %d %+v", n, s, tc.want, tc.wantS)
			}
		})
	}
}

// sizedInput is memoryInput with EvictionReclaimSized on.
func sizedInput(available int64, pods []*v1.Pod, stats ...statsapi.PodStats) *decideInput {
	in := memoryInput(available, pods, stats...)
	in.gates.set(evictionReclaimSized, true)
	return in
}

func TestDecideReclaimSizedOtherSignals(t *testing.T) {
	t.Run("PID: processes freed", func(t *testing.T) {
		thresholds := []evictionapi.Threshold{hard(sigPID, "1000")}
		prev := newDecisionState(1)
		in := &decideInput{
			thresholds: thresholds, prev: &prev, now: t0, transition: time.Minute, layout: singleFs,
			obs:  observations(ob{signal: sigPID, available: 400, capacity: 32768, at: t0}), // shortfall 600
			pods: []*v1.Pod{pod("fork-a"), pod("fork-b"), pod("fork-c")},
			stats: statsIndex(
				podStats("fork-a", withProcesses(500)),
				podStats("fork-b", withProcesses(300)),
				podStats("fork-c", withProcesses(200))),
			gates: featureGates{alpha: alphaGates{evictionReclaimSized: true}},
		}
		d := decide(in)
		if got := victimNames(d.target.victims); !reflect.DeepEqual(got, []string{"fork-a", "fork-b"}) {
			t.Errorf("victims %v, want [fork-a fork-b]", got)
		}
	})
	t.Run("nodefs: bytes freed, soft grace per pod", func(t *testing.T) {
		thresholds := []evictionapi.Threshold{soft(sigNodeFs, "1Gi", time.Minute)}
		prev := newDecisionState(1)
		prev.firstMet[0] = t0.Add(-2 * time.Minute)
		in := &decideInput{
			thresholds: thresholds, prev: &prev, now: t0, transition: time.Minute, layout: singleFs,
			obs:                      observations(ob{signal: sigNodeFs, available: 512 * mi, capacity: 10 << 30, at: t0}), // shortfall 512Mi
			maxPodGracePeriodSeconds: 30,
			pods:                     []*v1.Pod{pod("writer-a", withGrace(5)), pod("writer-b", withGrace(60)), pod("idle")},
			stats: statsIndex(
				podStats("writer-a", withContainerStats(cStats("c", cRootfs(300<<20, 10)))),
				podStats("writer-b", withContainerStats(cStats("c", cRootfs(250<<20, 10)))),
				podStats("idle", withContainerStats(cStats("c", cRootfs(1<<20, 10))))),
			gates: featureGates{alpha: alphaGates{evictionReclaimSized: true}},
		}
		d := decide(in)
		if got := victimNames(d.target.victims); !reflect.DeepEqual(got, []string{"writer-a", "writer-b"}) {
			t.Fatalf("victims %v, want [writer-a writer-b]", got)
		}
		if a, b := d.target.victims[0].gracePeriodSeconds, d.target.victims[1].gracePeriodSeconds; a != 5 || b != 30 {
			t.Errorf("grace periods %d, %d; want 5 (the pod's own) and 30 (the cap)", a, b)
		}
	})
}

func TestReclaimTargetResize(t *testing.T) {
	pods := []*v1.Pod{pod("a"), pod("b"), pod("c")}
	stats := []statsapi.PodStats{
		podStats("a", withWorkingSet("300Mi")),
		podStats("b", withWorkingSet("300Mi")),
		podStats("c", withWorkingSet("300Mi")),
	}
	cases := []struct {
		name      string
		available int64
		after     int64
		want      []string
	}{
		{name: "reclaim freed some: fewer victims", available: 124 * mi, after: 824 * mi, want: []string{"a"}},
		{name: "pressure grew: the selection stays", available: 424 * mi, after: 100 * mi, want: []string{"a", "b"}},
		{name: "nothing changed", available: 424 * mi, after: 424 * mi, want: []string{"a", "b"}},
		{name: "not covered before: stays one", available: 0, after: 900 * mi, want: []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(sizedInput(tc.available, pods, stats...))
			d.target.resize(observation{available: tc.after, capacity: 8 << 30})
			if got := victimNames(d.target.victims); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("victims after resize %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("gate off: no change", func(t *testing.T) {
		d := decide(memoryInput(0, pods, stats...))
		d.target.resize(observation{available: 2 << 30, capacity: 8 << 30})
		if got := victimNames(d.target.victims); !reflect.DeepEqual(got, []string{"a"}) {
			t.Errorf("victims %v, want [a]", got)
		}
	})
}

func TestReplanResizesACopy(t *testing.T) {
	pods := []*v1.Pod{pod("a"), pod("b"), pod("c")}
	stats := []statsapi.PodStats{podStats("a", withWorkingSet("300Mi")), podStats("b", withWorkingSet("300Mi")), podStats("c", withWorkingSet("300Mi"))}
	in := sizedInput(424*mi, pods, stats...)
	d := decide(in)
	next, relieved := replan(d.target, in.thresholds, observations(ob{signal: sigMem, available: 824 * mi, capacity: 8 << 30, at: t0}))
	if relieved {
		t.Error("824Mi available under a 1Gi threshold counted as relieved")
	}
	if got := victimNames(next.victims); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("victims after reclaim freed 400Mi: %v, want [a]", got)
	}
	if got := victimNames(d.target.victims); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("replan changed the decision's victims to %v, want [a b]", got)
	}
}
