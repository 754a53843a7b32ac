package kubelet

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// callLog records relist requests and kills in the order they came.
type callLog []string

func (c *callLog) RequestRelist(_ klog.Logger, podUID types.UID) {
	*c = append(*c, "relist "+string(podUID))
}

func TestEvictionKillRelistsThePodFirst(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: "ns", UID: "uid-1"}}
	grace := int64(1)
	killErr := errors.New("timeout waiting to kill pod")

	for _, tc := range []struct {
		name    string
		killErr error
	}{
		{name: "kill succeeds"},
		{name: "kill fails", killErr: killErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls callLog
			statusFnCalled := false
			kill := func(p *v1.Pod, isEvicted bool, gracePeriodOverride *int64, fn func(*v1.PodStatus)) error {
				calls = append(calls, "kill "+string(p.UID))
				if !isEvicted || gracePeriodOverride != &grace {
					t.Errorf("kill got isEvicted=%v gracePeriodOverride=%p, want true and %p", isEvicted, gracePeriodOverride, &grace)
				}
				fn(&v1.PodStatus{})
				return tc.killErr
			}
			err := relistThenKill(logger, &calls, kill)(pod, true, &grace, func(*v1.PodStatus) { statusFnCalled = true })
			if !errors.Is(err, tc.killErr) {
				t.Errorf("error %v, want %v", err, tc.killErr)
			}
			want := []string{"relist uid-1", "kill uid-1"}
			if !slices.Equal(calls, want) {
				t.Errorf("calls %q, want %q", calls, want)
			}
			if !statusFnCalled {
				t.Error("the status function did not reach the kill")
			}
		})
	}
}
