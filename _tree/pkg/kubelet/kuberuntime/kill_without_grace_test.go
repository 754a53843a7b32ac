package kuberuntime

import (
	"context"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	internalapi "k8s.io/cri-api/pkg/apis"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/features"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/utils/ptr"
)

// stopTimeouts records the timeout of each StopContainer call; the call
// itself succeeds without reaching a runtime.
type stopTimeouts struct {
	internalapi.RuntimeService
	mu       sync.Mutex
	timeouts []int64
}

func (s *stopTimeouts) StopContainer(_ context.Context, _ string, timeout int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timeouts = append(s.timeouts, timeout)
	return nil
}

// The timeout the runtime manager asks the runtime to stop a container
// with, for a kill's grace period override, with EvictionKillWithoutGrace
// on and off: only an override of 0 with the gate on reaches the runtime
// as 0 (SIGKILL at once); everything else keeps upstream's 2 s minimum.
func TestKillContainerWithoutGrace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gate     bool
		override *int64
		want     int64
	}{
		{name: "gate off, override 0", override: ptr.To[int64](0), want: minimumGracePeriodInSeconds},
		{name: "gate on, override 0", gate: true, override: ptr.To[int64](0), want: 0},
		{name: "gate on, override 1", gate: true, override: ptr.To[int64](1), want: minimumGracePeriodInSeconds},
		{name: "gate on, override -1", gate: true, override: ptr.To[int64](-1), want: minimumGracePeriodInSeconds},
		{name: "gate on, override 5", gate: true, override: ptr.To[int64](5), want: 5},
		{name: "gate on, no override, pod grace 0", gate: true, want: minimumGracePeriodInSeconds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EvictionKillWithoutGrace, tc.gate)
			_, ctx := ktesting.NewTestContext(t)
			_, _, m, err := createTestRuntimeManager(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{UID: "kill-without-grace", Name: "hog", Namespace: "default"},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []v1.Container{{Name: "hog", Image: "busybox"}},
				},
			}
			rec := &stopTimeouts{RuntimeService: m.runtimeService}
			m.runtimeService = rec
			id := kubecontainer.ContainerID{Type: "containerd", ID: "hog-container"}
			if err := m.killContainer(ctx, pod, id, "hog", "", reasonUnknown, tc.override, nil); err != nil {
				t.Fatalf("killContainer: %v", err)
			}
			if len(rec.timeouts) != 1 || rec.timeouts[0] != tc.want {
				t.Errorf("StopContainer timeouts %v, want [%d]", rec.timeouts, tc.want)
			}
		})
	}
}
