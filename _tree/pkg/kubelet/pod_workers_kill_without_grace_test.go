package kubelet

import (
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/features"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/utils/ptr"
)

// The grace period the pod worker hands a running pod's terminating sync
// after one kill, or after two kills that reach it together (the second
// queued while the worker is paused), with EvictionKillWithoutGrace on and
// off. Only an eviction's 0 with the gate on comes through as 0; every
// other kill gets what upstream gives it, at least 1 s.
func TestPodWorkersEvictionKillWithoutGrace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gate  bool
		kills []*KillPodOptions
		want  int64
	}{
		{name: "gate off: an eviction's 0 becomes 1", kills: []*KillPodOptions{{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](0)}}, want: 1},
		{name: "gate on: an eviction's 0 stays 0", gate: true, kills: []*KillPodOptions{{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](0)}}, want: 0},
		{name: "gate on: an eviction's 1 stays 1", gate: true, kills: []*KillPodOptions{{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](1)}}, want: 1},
		{name: "gate on: an eviction's negative grace becomes 1", gate: true, kills: []*KillPodOptions{{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](-1)}}, want: 1},
		{name: "gate on: a kill that is not an eviction gets 1 for 0", gate: true, kills: []*KillPodOptions{{PodTerminationGracePeriodSecondsOverride: ptr.To[int64](0)}}, want: 1},
		{name: "gate on: an eviction without an override gets the pod's 30", gate: true, kills: []*KillPodOptions{{Evict: true}}, want: 30},
		{name: "gate on: a later kill with a longer grace keeps 0", gate: true, kills: []*KillPodOptions{
			{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](0)},
			{PodTerminationGracePeriodSecondsOverride: ptr.To[int64](20)},
		}, want: 0},
		{name: "gate on: an eviction's 0 after a longer kill gives 0", gate: true, kills: []*KillPodOptions{
			{PodTerminationGracePeriodSecondsOverride: ptr.To[int64](20)},
			{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](0)},
		}, want: 0},
		{name: "gate off: a later kill with a longer grace keeps 1", kills: []*KillPodOptions{
			{Evict: true, PodTerminationGracePeriodSecondsOverride: ptr.To[int64](0)},
			{PodTerminationGracePeriodSecondsOverride: ptr.To[int64](20)},
		}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EvictionKillWithoutGrace, tc.gate)
			logger, tCtx := ktesting.NewTestContext(t)
			w, processed := createTimeIncrementingPodWorkers(logger)
			pod := newNamedPod("1", "ns", "running-pod", false)
			w.UpdatePod(tCtx, UpdatePodOptions{UpdateType: kubetypes.SyncPodCreate, Pod: pod})

			w.PauseWorkers(pod.UID)
			for _, kill := range tc.kills {
				w.UpdatePod(tCtx, UpdatePodOptions{UpdateType: kubetypes.SyncPodKill, Pod: pod, KillPodOptions: kill})
			}
			w.ReleaseWorkers(pod.UID)
			w.drainUnpausedWorkers()

			var got []*int64
			for _, r := range processed[pod.UID] {
				if r.updateType == kubetypes.SyncPodKill && !r.terminated {
					got = append(got, r.gracePeriod)
				}
			}
			if len(got) != 1 || got[0] == nil {
				t.Fatalf("terminating syncs were handed %v, want one with %d", got, tc.want)
			}
			if *got[0] != tc.want {
				t.Errorf("terminating sync handed grace period %d, want %d", *got[0], tc.want)
			}
		})
	}
}
