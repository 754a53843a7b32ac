//evictkit:file decision

package eviction

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestAdvanceWithoutEvictionsKeepsTheState(t *testing.T) {
	s := newDecisionState(1)
	s.firstMet[0] = t0
	got := s.advance(outcome{signal: sigMem, at: t0.Add(time.Minute)})
	if !reflect.DeepEqual(got, s) {
		t.Errorf("advance with nothing evicted changed the state:\n got %+v\nwant %+v", got, s)
	}
}

func TestReplanWhenReclaimRelieves(t *testing.T) {
	pods := []*v1.Pod{pod("a"), pod("b")}
	stats := []statsapi.PodStats{podStats("a", withWorkingSet("300Mi")), podStats("b", withWorkingSet("200Mi"))}
	in := memoryInput(512*mi, pods, stats...)
	d := decide(in)
	// The threshold is 1Gi with no minimum reclaim: 2Gi available after
	// node-level reclaim is relieved, 900Mi is not.
	for _, tc := range []struct {
		after int64
		want  bool
	}{{2 << 30, true}, {900 * mi, false}} {
		next, relieved := replan(d.target, in.thresholds, observations(ob{signal: sigMem, available: tc.after, capacity: 8 << 30, at: t0}))
		if relieved != tc.want {
			t.Errorf("available %d MiB after reclaim: relieved %v, want %v", tc.after>>20, relieved, tc.want)
		}
		if got := victimNames(next.victims); !reflect.DeepEqual(got, []string{"a"}) {
			t.Errorf("available %d MiB after reclaim: victims %v, want [a] (one per pass)", tc.after>>20, got)
		}
	}
}
