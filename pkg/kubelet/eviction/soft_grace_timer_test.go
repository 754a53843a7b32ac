//evictkit:file EvictionSoftGraceTimer

package eviction

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func TestGraceExpiry(t *testing.T) {
	t0 := mgrEpoch
	thresholds := []evictionapi.Threshold{
		hard(evictionapi.SignalMemoryAvailable, "1Gi"),
		soft(evictionapi.SignalMemoryAvailable, "2Gi", 30*time.Second),
		soft(evictionapi.SignalNodeFsAvailable, "5Gi", time.Minute),
		soft(evictionapi.SignalPIDAvailable, "100", 30*time.Second),
	}
	for _, tc := range []struct {
		name      string
		firstMet  []time.Time
		acting    []bool
		wantOK    bool
		wantIndex int
		wantAt    time.Time
	}{
		{name: "nothing met", firstMet: make([]time.Time, 4)},
		{name: "only a hard threshold met", firstMet: []time.Time{t0, {}, {}, {}}},
		{name: "one soft threshold met", firstMet: []time.Time{{}, {}, t0, {}}, wantOK: true, wantIndex: 2, wantAt: t0.Add(time.Minute)},
		{name: "the earlier expiry wins, not the earlier start", firstMet: []time.Time{{}, {}, t0, t0.Add(10 * time.Second)}, wantOK: true, wantIndex: 3, wantAt: t0.Add(40 * time.Second)},
		{name: "a tie goes to the lower index", firstMet: []time.Time{{}, t0, {}, t0}, wantOK: true, wantIndex: 1, wantAt: t0.Add(30 * time.Second)},
		{name: "an acting threshold waits for nothing", firstMet: []time.Time{{}, t0, t0, {}}, acting: []bool{false, true, false, false}, wantOK: true, wantIndex: 2, wantAt: t0.Add(time.Minute)},
		{name: "every met threshold acting", firstMet: []time.Time{{}, t0, {}, {}}, acting: []bool{false, true, false, false}},
		{name: "a state shorter than the thresholds", firstMet: []time.Time{{}, t0}, wantOK: true, wantIndex: 1, wantAt: t0.Add(30 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := decisionState{firstMet: tc.firstMet, acting: tc.acting}
			i, at, ok := graceExpiry(thresholds, &s)
			if ok != tc.wantOK || (ok && (i != tc.wantIndex || !at.Equal(tc.wantAt))) {
				t.Errorf("graceExpiry = (%d, %v, %v), want (%d, %v, %v)", i, at, ok, tc.wantIndex, tc.wantAt, tc.wantOK)
			}
		})
	}
}

func TestUntilNextPass(t *testing.T) {
	now := mgrEpoch
	deadline := now.Add(10 * time.Second)
	for _, tc := range []struct {
		name     string
		expiry   time.Time
		expiring bool
		want     time.Duration
	}{
		{"no grace running", time.Time{}, false, 10 * time.Second},
		{"expiry after the interval", now.Add(25 * time.Second), true, 10 * time.Second},
		{"expiry within the interval", now.Add(4 * time.Second), true, 4 * time.Second},
		{"expiry at the interval's end", deadline, true, 10 * time.Second},
		{"expiry already passed", now.Add(-time.Second), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := untilNextPass(now, deadline, tc.expiry, tc.expiring); got != tc.want {
				t.Errorf("untilNextPass = %v, want %v", got, tc.want)
			}
		})
	}
	if got := untilNextPass(now, now.Add(-time.Second), time.Time{}, false); got != 0 {
		t.Errorf("untilNextPass past its deadline = %v, want 0", got)
	}
}

func TestHasSoftThreshold(t *testing.T) {
	if hasSoftThreshold([]evictionapi.Threshold{hard(evictionapi.SignalMemoryAvailable, "1Gi")}) {
		t.Error("hard thresholds only: reported a soft one")
	}
	if !hasSoftThreshold([]evictionapi.Threshold{hard(evictionapi.SignalMemoryAvailable, "1Gi"), soft(evictionapi.SignalNodeFsAvailable, "1Gi", time.Minute)}) {
		t.Error("a soft threshold not found")
	}
	setGateDuringTest(t, evictionSoftGraceTimer, true)
	h := mgrNewHarness(t, mgrMemoryConfig(), false, fakeHealthyNode().summary(mgrEpoch))
	if h.m.alpha[evictionSoftGraceTimer] {
		t.Error("the gate is on for a manager with no soft threshold")
	}
}

// softTimerHarness is a manager with a soft memory.available<1Gi
// threshold of the given grace, whose monitoring loop runs every 10 s of
// the fake clock from start, logging to a buffer.
type softTimerHarness struct {
	*mgrHarness
	logger klog.Logger
	cancel context.CancelFunc
}

func newSoftTimerHarness(t *testing.T, gate bool, grace time.Duration, node fakeNode) *softTimerHarness {
	t.Helper()
	setGateDuringTest(t, evictionSoftGraceTimer, gate)
	cfg := Config{
		PressureTransitionPeriod: 5 * time.Minute,
		MaxPodGracePeriodSeconds: 30,
		Thresholds:               []evictionapi.Threshold{soft(evictionapi.SignalMemoryAvailable, "1Gi", grace)},
	}
	victim := pod("victim")
	h := &softTimerHarness{mgrHarness: mgrNewHarness(t, cfg, false, node.summary(mgrEpoch, softTimerPodStats(victim)))}
	h.pods = []*v1.Pod{victim}
	if h.m.alpha[evictionSoftGraceTimer] != gate {
		t.Fatalf("gate %s reads %v, want %v", evictionSoftGraceTimer, h.m.alpha[evictionSoftGraceTimer], gate)
	}
	h.logger = ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), h.logger))
	h.cancel = cancel
	t.Cleanup(cancel)
	h.m.Start(ctx, h.disk, h.activePods, func(*v1.Pod) bool { return true }, 10*time.Second)
	mgrEventually(t, "the first pass and the wait after it", func() bool { return h.summary.calls() == 1 && h.clock.Waiters() == 1 })
	return h
}

func softTimerPodStats(p *v1.Pod) statsapi.PodStats {
	return fakePodStats(p, fakePodUsage{memWS: []int64{gi}, ephem: -1})
}

// stepTo moves the fake clock to mgrEpoch+at, stamping the summary with
// the new time first, so that a pass the step wakes sees fresh stats.
func (h *softTimerHarness) stepTo(at time.Duration) {
	to := mgrEpoch.Add(at)
	stamp := metav1.NewTime(to)
	h.summary.edit(func(s *statsapi.Summary) { fakeStampSummary(s, stamp) })
	h.clock.Step(to.Sub(h.clock.Now()))
}

// logged reports whether the loop has logged a message.
func (h *softTimerHarness) logged(message string) bool {
	return slices.ContainsFunc(h.logger.GetSink().(ktesting.Underlier).GetBuffer().Data(), func(e ktesting.LogEntry) bool {
		return e.Message == message
	})
}

const softTimerMessage = "Eviction manager: next pass at a soft threshold's grace expiry"

// The loop's own passes: memory pressure from the first pass, a 25 s
// grace, a 10 s interval. With the gate the pass after the one at 20 s
// comes at the grace's expiry (25 s); without it, at the interval (30 s).
func TestMgrSoftGraceTimerWakesTheLoop(t *testing.T) {
	for _, tc := range []struct {
		gate   bool
		killAt time.Duration
	}{{gate: true, killAt: 25 * time.Second}, {gate: false, killAt: 30 * time.Second}} {
		t.Run(map[bool]string{true: "gate on", false: "gate off"}[tc.gate], func(t *testing.T) {
			h := newSoftTimerHarness(t, tc.gate, 25*time.Second, mgrMemoryPressureNode())
			for i, at := range []time.Duration{10 * time.Second, 20 * time.Second} {
				h.stepTo(at)
				mgrEventually(t, "the pass at "+at.String(), func() bool { return h.summary.calls() == i+2 && h.clock.Waiters() == 1 })
			}
			if n := len(h.killer.get()); n != 0 {
				t.Fatalf("%d kills within the grace period", n)
			}
			h.stepTo(tc.killAt - time.Millisecond)
			mgrConsistently(t, "no pass before "+tc.killAt.String(), 50*time.Millisecond, func() bool { return h.summary.calls() == 3 })
			h.stepTo(tc.killAt)
			mgrEventually(t, "the eviction at "+tc.killAt.String(), func() bool { return len(h.killer.get()) == 1 })
			if got := h.logged(softTimerMessage); got != tc.gate {
				t.Errorf("logged %q: %v, want %v", softTimerMessage, got, tc.gate)
			}
		})
	}
}

// A pass the loop did not run (a memory notifier's) starts a 5 s grace
// at 2 s while the loop waits for its 10 s interval: with the gate the
// loop measures its wait again and evicts at 7 s; without it, at 10 s.
func TestMgrSoftGraceTimerRearmsAfterAnotherPass(t *testing.T) {
	for _, tc := range []struct {
		gate   bool
		killAt time.Duration
	}{{gate: true, killAt: 7 * time.Second}, {gate: false, killAt: 10 * time.Second}} {
		t.Run(map[bool]string{true: "gate on", false: "gate off"}[tc.gate], func(t *testing.T) {
			h := newSoftTimerHarness(t, tc.gate, 5*time.Second, fakeHealthyNode())
			h.summary.set(mgrMemoryPressureNode().summary(mgrEpoch, softTimerPodStats(h.pods[0])))
			h.stepTo(2 * time.Second)
			if ev := h.sync(); ev != nil {
				t.Fatalf("the notifier's pass evicted %v at the start of the grace", podNames(ev))
			}
			if tc.gate {
				mgrEventually(t, "the loop to measure its wait again", func() bool { return h.logged(softTimerMessage) })
			}
			h.stepTo(tc.killAt - time.Millisecond)
			mgrConsistently(t, "no kill before "+tc.killAt.String(), 50*time.Millisecond, func() bool { return len(h.killer.get()) == 0 })
			h.stepTo(tc.killAt)
			mgrEventually(t, "the eviction at "+tc.killAt.String(), func() bool { return len(h.killer.get()) == 1 })
		})
	}
}
