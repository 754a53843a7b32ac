package eviction

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// Signals under test, with a capacity of 10000 units each.
const (
	sigMem    = evictionapi.SignalMemoryAvailable
	sigAlloc  = evictionapi.SignalAllocatableMemoryAvailable
	sigNodeFs = evictionapi.SignalNodeFsAvailable
	sigNodeIn = evictionapi.SignalNodeFsInodesFree
	sigImgFs  = evictionapi.SignalImageFsAvailable
	sigImgIn  = evictionapi.SignalImageFsInodesFree
	sigCtrFs  = evictionapi.SignalContainerFsAvailable
	sigCtrIn  = evictionapi.SignalContainerFsInodesFree
	sigPID    = evictionapi.SignalPIDAvailable
)

// avail observes a signal with 10000 units of capacity and no stats time,
// so that every pass sees it as fresh.
func avail(s evictionapi.Signal, available int64) ob {
	return ob{signal: s, available: available, capacity: 10000}
}

// availAt observes a signal whose stats were gathered at t0+at.
func availAt(s evictionapi.Signal, available int64, at time.Duration) ob {
	o := avail(s, available)
	o.at = t0.Add(at)
	return o
}

var (
	memPressure  = []v1.NodeConditionType{v1.NodeMemoryPressure}
	diskPressure = []v1.NodeConditionType{v1.NodeDiskPressure}
)

func TestEvaluateTracksFirstSeenTime(t *testing.T) {
	thresholds := []evictionapi.Threshold{soft(sigMem, "1000", time.Minute), hard(sigNodeFs, "1000")}
	steps := []struct {
		at       time.Duration
		obs      []ob
		firstMet [2]time.Time
		acting   [2]bool
	}{
		{at: 0, obs: []ob{avail(sigMem, 900), avail(sigNodeFs, 5000)}, firstMet: [2]time.Time{t0, {}}},
		{at: 20 * time.Second, obs: []ob{avail(sigMem, 900), avail(sigNodeFs, 900)}, firstMet: [2]time.Time{t0, t0.Add(20 * time.Second)}, acting: [2]bool{false, true}},
		{at: 70 * time.Second, obs: []ob{avail(sigMem, 900), avail(sigNodeFs, 900)}, firstMet: [2]time.Time{t0, t0.Add(20 * time.Second)}, acting: [2]bool{true, true}},
		{at: 80 * time.Second, obs: []ob{avail(sigMem, 5000), avail(sigNodeFs, 900)}, firstMet: [2]time.Time{{}, t0.Add(20 * time.Second)}, acting: [2]bool{false, true}},
	}
	state := newDecisionState(len(thresholds))
	for i, st := range steps {
		ev := evaluate(thresholds, &state, observations(st.obs...), 5*time.Minute, t0.Add(st.at))
		for j := range thresholds {
			if !ev.next.firstMet[j].Equal(st.firstMet[j]) {
				t.Errorf("step %d threshold %d: first met %v, want %v", i, j, ev.next.firstMet[j], st.firstMet[j])
			}
			if ev.next.acting[j] != st.acting[j] {
				t.Errorf("step %d threshold %d: acting %v, want %v", i, j, ev.next.acting[j], st.acting[j])
			}
		}
		state = ev.next
	}
}

func TestEvaluateWithStateOfFewerThresholds(t *testing.T) {
	// The manager derives containerfs thresholds after the first state
	// exists; a shorter state must read as "never seen".
	thresholds := []evictionapi.Threshold{hard(sigMem, "1000"), soft(sigCtrFs, "1000", time.Minute)}
	prev := newDecisionState(1)
	ev := evaluate(thresholds, &prev, observations(avail(sigMem, 900), avail(sigCtrFs, 900)), time.Minute, t0)
	if want := []int{0}; !reflect.DeepEqual(ev.actionable, want) {
		t.Errorf("actionable %v, want %v", ev.actionable, want)
	}
	if len(ev.next.firstMet) != 2 || !ev.next.firstMet[1].Equal(t0) {
		t.Errorf("next state first met %v, want two entries with the second at t0", ev.next.firstMet)
	}
}

func TestReclaimSatisfied(t *testing.T) {
	cases := []struct {
		name       string
		thresholds []evictionapi.Threshold
		obs        []ob
		want       bool
	}{
		{name: "no thresholds", want: true},
		{name: "above level plus reclaim", thresholds: []evictionapi.Threshold{minReclaim(hard(sigNodeFs, "1000"), "500")}, obs: []ob{avail(sigNodeFs, 1500)}, want: true},
		{name: "above level but within reclaim", thresholds: []evictionapi.Threshold{minReclaim(hard(sigNodeFs, "1000"), "500")}, obs: []ob{avail(sigNodeFs, 1499)}, want: false},
		{name: "no reclaim configured and at level", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1000")}, obs: []ob{avail(sigNodeFs, 1000)}, want: true},
		{name: "soft threshold counts regardless of grace", thresholds: []evictionapi.Threshold{soft(sigImgFs, "1000", time.Hour)}, obs: []ob{avail(sigImgFs, 999)}, want: false},
		{name: "every threshold is checked, not only the reclaimed one", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1000"), hard(sigMem, "1000")}, obs: []ob{avail(sigNodeFs, 5000), avail(sigMem, 10)}, want: false},
		{name: "unobserved signal counts as satisfied", thresholds: []evictionapi.Threshold{hard(sigImgFs, "1000")}, obs: []ob{avail(sigNodeFs, 1)}, want: true},
		{
			name:       "percentage reclaim uses the signal capacity",
			thresholds: []evictionapi.Threshold{{Signal: sigNodeFs, Operator: evictionapi.OpLessThan, Value: evictionapi.ThresholdValue{Percentage: 0.1}, MinReclaim: &evictionapi.ThresholdValue{Percentage: 0.05}}},
			obs:        []ob{avail(sigNodeFs, 1499)},
			want:       false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := reclaimSatisfied(tc.thresholds, observations(tc.obs...)); got != tc.want {
				t.Errorf("reclaimSatisfied = %v, want %v", got, tc.want)
			}
		})
	}
}
