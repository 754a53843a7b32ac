//evictkit:file ranking

package eviction

import "testing"

// The reclaim steps are named in the kubelet's log after the garbage
// collector calls they make.
func TestReclaimStepString(t *testing.T) {
	for step, want := range map[reclaimStep]string{
		reclaimContainers: "DeleteAllUnusedContainers",
		reclaimImages:     "DeleteUnusedImages",
	} {
		if got := step.String(); got != want {
			t.Errorf("step %d is named %q, want %q", step, got, want)
		}
	}
}
