//evictkit:file EvictionKillWithoutGrace

package eviction

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// The grace period an eviction asks for, with EvictionKillWithoutGrace on
// and off: a hard eviction asks for 1 s without the gate (upstream's) and
// for 0 with it; a soft eviction asks for what it would without the gate.
func TestMgrKillWithoutGrace(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gate      bool
		hard      bool
		maxGrace  int64
		wantGrace int64
	}{
		{name: "gate off, hard", hard: true, maxGrace: 60, wantGrace: 1},
		{name: "gate on, hard", gate: true, hard: true, maxGrace: 60, wantGrace: 0},
		{name: "gate off, soft", maxGrace: 60, wantGrace: 45},
		{name: "gate on, soft", gate: true, maxGrace: 60, wantGrace: 45},
		{name: "gate on, soft, maximum below the pod's", gate: true, maxGrace: 10, wantGrace: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setGateDuringTest(t, evictionKillWithoutGrace, tc.gate)
			th := soft(evictionapi.SignalMemoryAvailable, "1Gi", time.Minute)
			if tc.hard {
				th = hard(evictionapi.SignalMemoryAvailable, "1Gi")
			}
			cfg := Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: tc.maxGrace, Thresholds: []evictionapi.Threshold{th}}
			victim := pod("victim")
			victim.Spec.TerminationGracePeriodSeconds = ptrTo(int64(45))
			h := mgrNewHarness(t, cfg, false, mgrMemoryPressureNode().summary(mgrEpoch, fakePodStats(victim, fakePodUsage{memWS: []int64{gi}, ephem: -1})))
			h.pods = []*v1.Pod{victim}
			if h.m.alpha[evictionKillWithoutGrace] != tc.gate {
				t.Fatalf("gate reads %v, want %v", h.m.alpha[evictionKillWithoutGrace], tc.gate)
			}
			h.sync()
			if !tc.hard {
				h.advance(time.Minute)
				h.sync()
			}
			kills := h.killer.get()
			if len(kills) != 1 {
				t.Fatalf("killed %v, want [victim]", h.killedNames())
			}
			if g := kills[0].grace; g == nil || *g != tc.wantGrace {
				t.Errorf("grace override = %v, want %d", g, tc.wantGrace)
			}
		})
	}
}
