//evictkit:file EvictionNegativeMaxPodGraceDefers

package eviction

import "testing"

// The grace period a soft eviction gives its pod, with the gate on and
// off: a negative maximum passes on as it is without the gate (upstream's
// behaviour: the runtime kills at once) and gives the pod its own grace
// period with it; a maximum of zero or more caps it either way, and hard
// evictions always get 1 s.
func TestMgrNegativeMaxPodGraceDefers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gate      bool
		hard      bool
		maxGrace  int64
		podGrace  *int64
		wantGrace int64
	}{
		{name: "gate off, negative maximum", maxGrace: -1, podGrace: ptrTo(int64(45)), wantGrace: -1},
		{name: "gate off, negative maximum, pod without its own", maxGrace: -5, wantGrace: -5},
		{name: "gate on, negative maximum", gate: true, maxGrace: -1, podGrace: ptrTo(int64(45)), wantGrace: 45},
		{name: "gate on, negative maximum, pod grace zero", gate: true, maxGrace: -1, podGrace: ptrTo(int64(0)), wantGrace: 0},
		{name: "gate on, negative maximum, pod without its own", gate: true, maxGrace: -1, wantGrace: 30},
		{name: "gate on, maximum below the pod's", gate: true, maxGrace: 10, podGrace: ptrTo(int64(45)), wantGrace: 10},
		{name: "gate on, maximum zero", gate: true, maxGrace: 0, podGrace: ptrTo(int64(45)), wantGrace: 0},
		{name: "gate on, negative maximum, hard threshold", gate: true, hard: true, maxGrace: -1, podGrace: ptrTo(int64(45)), wantGrace: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := mgrEvictionGrace(t, evictionNegativeMaxPodGraceDefers, tc.gate, tc.hard, tc.maxGrace, tc.podGrace); g != tc.wantGrace {
				t.Errorf("grace override = %d, want %d", g, tc.wantGrace)
			}
		})
	}
}
