//evictkit:file EvictionKillWithoutGrace

package eviction

import "testing"

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
			if g := mgrEvictionGrace(t, evictionKillWithoutGrace, tc.gate, tc.hard, tc.maxGrace, ptrTo(int64(45))); g != tc.wantGrace {
				t.Errorf("grace override = %d, want %d", g, tc.wantGrace)
			}
		})
	}
}
