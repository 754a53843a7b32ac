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

func TestEvaluate(t *testing.T) {
	type step struct {
		at         time.Duration
		obs        []ob
		actionable []int
		conditions []v1.NodeConditionType
	}
	cases := []struct {
		name       string
		thresholds []evictionapi.Threshold
		transition time.Duration // 5m when zero, unless zeroTransition
		zeroTrans  bool
		steps      []step
	}{
		{
			name:       "hard threshold met below its level",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			steps:      []step{{obs: []ob{avail(sigMem, 999)}, actionable: []int{0}, conditions: memPressure}},
		},
		{
			name:       "available equal to the level is not met",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			steps:      []step{{obs: []ob{avail(sigMem, 1000)}}},
		},
		{
			name:       "percentage threshold met below its share of capacity",
			thresholds: []evictionapi.Threshold{hardPct(sigNodeFs, 0.1)},
			steps:      []step{{obs: []ob{avail(sigNodeFs, 999)}, actionable: []int{0}, conditions: diskPressure}},
		},
		{
			name:       "percentage threshold at its share of capacity is not met",
			thresholds: []evictionapi.Threshold{hardPct(sigNodeFs, 0.1)},
			steps:      []step{{obs: []ob{avail(sigNodeFs, 1000)}}},
		},
		{
			name:       "threshold without operator is never met",
			thresholds: []evictionapi.Threshold{{Signal: sigCtrFs}},
			steps:      []step{{obs: []ob{avail(sigCtrFs, 0)}}},
		},
		{
			name:       "soft threshold acts once met for its grace period",
			thresholds: []evictionapi.Threshold{soft(sigMem, "1000", time.Minute)},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 30 * time.Second, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 59 * time.Second, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: time.Minute, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: 2 * time.Minute, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
			},
		},
		{
			name:       "soft threshold grace restarts when the threshold clears",
			thresholds: []evictionapi.Threshold{soft(sigMem, "1000", time.Minute)},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 30 * time.Second, obs: []ob{avail(sigMem, 1100)}, conditions: memPressure},
				{at: 60 * time.Second, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 119 * time.Second, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 120 * time.Second, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
			},
		},
		{
			name:       "minimum reclaim keeps an acting threshold met until level plus reclaim",
			thresholds: []evictionapi.Threshold{minReclaim(hard(sigMem, "1000"), "500")},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: 10 * time.Second, obs: []ob{avail(sigMem, 1200)}, actionable: []int{0}, conditions: memPressure},
				{at: 20 * time.Second, obs: []ob{avail(sigMem, 1499)}, actionable: []int{0}, conditions: memPressure},
				{at: 30 * time.Second, obs: []ob{avail(sigMem, 1500)}, conditions: memPressure},
				{at: 40 * time.Second, obs: []ob{avail(sigMem, 1200)}, conditions: memPressure},
			},
		},
		{
			name:       "minimum reclaim does not keep a threshold still in its grace period",
			thresholds: []evictionapi.Threshold{minReclaim(soft(sigMem, "1000", time.Minute), "500")},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 30 * time.Second, obs: []ob{avail(sigMem, 1200)}, conditions: memPressure},
				{at: 90 * time.Second, obs: []ob{avail(sigMem, 900)}, conditions: memPressure},
				{at: 150 * time.Second, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: 160 * time.Second, obs: []ob{avail(sigMem, 1200)}, actionable: []int{0}, conditions: memPressure},
			},
		},
		{
			name:       "acting threshold whose signal disappears stops acting",
			thresholds: []evictionapi.Threshold{minReclaim(hard(sigMem, "1000"), "500")},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: 10 * time.Second, conditions: memPressure},
				{at: 20 * time.Second, obs: []ob{avail(sigMem, 1200)}, conditions: memPressure},
			},
		},
		{
			name:       "condition stays for the transition period after the last observation",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: time.Minute, obs: []ob{avail(sigMem, 5000)}, conditions: memPressure},
				{at: 4*time.Minute + 59*time.Second, obs: []ob{avail(sigMem, 5000)}, conditions: memPressure},
				{at: 5 * time.Minute, obs: []ob{avail(sigMem, 5000)}},
				{at: 6 * time.Minute, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: 10*time.Minute + 59*time.Second, obs: []ob{avail(sigMem, 5000)}, conditions: memPressure},
				{at: 11 * time.Minute, obs: []ob{avail(sigMem, 5000)}},
			},
		},
		{
			name:       "zero transition period reports no condition",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			zeroTrans:  true,
			steps:      []step{{obs: []ob{avail(sigMem, 900)}, actionable: []int{0}}},
		},
		{
			name:       "conditions come in the order memory, disk, PID",
			thresholds: []evictionapi.Threshold{hard(sigPID, "100"), hard(sigImgIn, "1000"), hard(sigAlloc, "1000")},
			steps: []step{{
				obs:        []ob{avail(sigPID, 99), avail(sigImgIn, 999), avail(sigAlloc, 999)},
				actionable: []int{2, 1, 0},
				conditions: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure},
			}},
		},
		{
			name:       "a condition kept by the transition period keeps its place",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000"), hard(sigPID, "100")},
			steps: []step{
				{at: 0, obs: []ob{avail(sigPID, 99)}, actionable: []int{1}, conditions: []v1.NodeConditionType{v1.NodePIDPressure}},
				{at: time.Minute, obs: []ob{avail(sigMem, 999)}, actionable: []int{0},
					conditions: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodePIDPressure}},
			},
		},
		{
			name:       "stats not newer than the previous pass are not actionable",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			steps: []step{
				{at: 0, obs: []ob{availAt(sigMem, 900, 0)}, actionable: []int{0}, conditions: memPressure},
				{at: 10 * time.Second, obs: []ob{availAt(sigMem, 900, 0)}, conditions: memPressure},
				{at: 20 * time.Second, obs: []ob{availAt(sigMem, 900, time.Second)}, actionable: []int{0}, conditions: memPressure},
				{at: 30 * time.Second, obs: []ob{availAt(sigMem, 900, 0)}, conditions: memPressure},
			},
		},
		{
			name:       "stats seen by a pass without pressure are stale for the next one",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			steps: []step{
				{at: 0, obs: []ob{availAt(sigMem, 5000, 0)}},
				{at: 10 * time.Second, obs: []ob{availAt(sigMem, 900, 0)}, conditions: memPressure},
			},
		},
		{
			name:       "stats without a time are always actionable",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000")},
			steps: []step{
				{at: 0, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
				{at: 10 * time.Second, obs: []ob{avail(sigMem, 900)}, actionable: []int{0}, conditions: memPressure},
			},
		},
		{
			name:       "stats freshness is judged per signal",
			thresholds: []evictionapi.Threshold{hard(sigMem, "1000"), hard(sigNodeFs, "1000")},
			steps: []step{
				{at: 0, obs: []ob{availAt(sigMem, 900, 0), availAt(sigNodeFs, 900, 0)}, actionable: []int{0, 1},
					conditions: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure}},
				{at: 10 * time.Second, obs: []ob{availAt(sigMem, 900, 0), availAt(sigNodeFs, 900, time.Second)}, actionable: []int{1},
					conditions: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure}},
			},
		},
		{
			name: "actionable thresholds: memory first, then signal order, hard before soft",
			thresholds: []evictionapi.Threshold{
				soft(sigNodeFs, "1000", time.Minute), // 0
				hard(sigPID, "100"),                  // 1
				hard(sigNodeFs, "1000"),              // 2
				hard(sigAlloc, "1000"),               // 3
				soft(sigMem, "1000", time.Minute),    // 4
				hard(sigImgFs, "1000"),               // 5
				hard(sigMem, "1000"),                 // 6
				hard(sigCtrIn, "1000"),               // 7
				hard(sigNodeIn, "1000"),              // 8
			},
			steps: []step{
				{
					at: 0,
					obs: []ob{avail(sigMem, 1), avail(sigAlloc, 1), avail(sigNodeFs, 1), avail(sigNodeIn, 1),
						avail(sigImgFs, 1), avail(sigCtrIn, 1), avail(sigPID, 1)},
					actionable: []int{6, 3, 2, 8, 5, 7, 1},
					conditions: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure},
				},
				{
					at: time.Minute,
					obs: []ob{avail(sigMem, 1), avail(sigAlloc, 1), avail(sigNodeFs, 1), avail(sigNodeIn, 1),
						avail(sigImgFs, 1), avail(sigCtrIn, 1), avail(sigPID, 1)},
					actionable: []int{6, 4, 3, 2, 0, 8, 5, 7, 1},
					conditions: []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure},
				},
			},
		},
		{
			name:       "unobserved signals are ignored",
			thresholds: []evictionapi.Threshold{hard(sigImgFs, "1000"), hard(sigMem, "1000")},
			steps:      []step{{obs: []ob{avail(sigMem, 900)}, actionable: []int{1}, conditions: memPressure}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			transition := 5 * time.Minute
			if tc.zeroTrans {
				transition = 0
			}
			state := newDecisionState(len(tc.thresholds))
			for i, st := range tc.steps {
				ev := evaluate(tc.thresholds, &state, observations(st.obs...), transition, t0.Add(st.at))
				if !reflect.DeepEqual(ev.actionable, st.actionable) && (len(ev.actionable) != 0 || len(st.actionable) != 0) {
					t.Errorf("step %d (t0+%s): actionable %v, want %v", i, st.at, ev.actionable, st.actionable)
				}
				if !reflect.DeepEqual(ev.conditions, st.conditions) && (len(ev.conditions) != 0 || len(st.conditions) != 0) {
					t.Errorf("step %d (t0+%s): conditions %v, want %v", i, st.at, ev.conditions, st.conditions)
				}
				state = ev.next
			}
		})
	}
}

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
