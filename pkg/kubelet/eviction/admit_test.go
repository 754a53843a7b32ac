//evictkit:file decision

package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestPodIsEvicted(t *testing.T) {
	cases := []struct {
		name   string
		status v1.PodStatus
		want   bool
	}{
		{name: "failed with reason Evicted", status: v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted"}, want: true},
		{name: "failed for another reason", status: v1.PodStatus{Phase: v1.PodFailed, Reason: "OOMKilled"}},
		{name: "running with reason Evicted", status: v1.PodStatus{Phase: v1.PodRunning, Reason: "Evicted"}},
		{name: "empty status", status: v1.PodStatus{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodIsEvicted(tc.status); got != tc.want {
				t.Errorf("PodIsEvicted = %v, want %v", got, tc.want)
			}
		})
	}
}
