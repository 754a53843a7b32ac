//evictkit:file EvictionFastPath

package eviction

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func TestWithFreshMemory(t *testing.T) {
	at := t0.Add(7 * time.Second)
	last := observations(
		ob{signal: sigMem, available: 3 << 30, capacity: 8 << 30, at: t0},
		ob{signal: sigAlloc, available: 2 << 30, capacity: 6 << 30, at: t0},
		ob{signal: sigNodeFs, available: 50 << 30, capacity: 100 << 30, at: t0},
	)
	hog, idle, fresh := pod("hog"), pod("idle"), pod("fresh")
	hog.Spec.Containers = []v1.Container{{Name: "c"}, {Name: "sidecar"}}
	hog.Status.ContainerStatuses = []v1.ContainerStatus{
		{Name: "c", ContainerID: "containerd://c-id"},
		{Name: "sidecar", ContainerID: "containerd://sidecar-id"},
	}
	stats := statsIndex(
		podStats("hog", withWorkingSet("100Mi"), withContainerStats(cStats("c", cWorkingSet("100Mi")))),
		podStats("idle", withWorkingSet("50Mi")),
	)
	f := &freshMemory{at: at, node: 7 << 30, nodeOK: true, pods: 5 << 30, podsOK: true,
		pod:        map[types.UID]int64{hog.UID: 2 << 30, fresh.UID: 300 << 20},
		containers: map[types.UID]map[string]int64{hog.UID: {"c-id": 1900 << 20, "sidecar-id": 100 << 20}}}

	obs, merged := withFreshMemory(last, stats, []*v1.Pod{hog, idle, fresh}, f)

	if got, _ := obs.get(sigMem); got != (observation{available: 1 << 30, capacity: 8 << 30, time: at}) {
		t.Errorf("memory.available = %+v, want 1Gi of 8Gi at the fresh time", got)
	}
	if got, _ := obs.get(sigAlloc); got != (observation{available: 1 << 30, capacity: 6 << 30, time: at}) {
		t.Errorf("allocatableMemory.available = %+v, want 1Gi of 6Gi at the fresh time", got)
	}
	if got, want := mustGet(t, obs, sigNodeFs), mustGet(t, last, sigNodeFs); got != want {
		t.Errorf("nodefs.available = %+v, want it unchanged %+v", got, want)
	}
	if ws := workingSet(merged.lookup(hog)); ws != 2<<30 {
		t.Errorf("hog working set %d, want the fresh 2Gi", ws)
	}
	cs := merged.lookup(hog).Containers
	if len(cs) != 2 || cs[0].Name != "c" || cs[1].Name != "sidecar" {
		t.Fatalf("hog's container stats %+v, want c (kept) and sidecar (added)", cs)
	}
	if a, b := u64(cs[0].Memory.WorkingSetBytes), u64(cs[1].Memory.WorkingSetBytes); a != 1900<<20 || b != 100<<20 {
		t.Errorf("hog's containers' working sets %d, %d; want the fresh 1900Mi and 100Mi", a, b)
	}
	if ws := u64(stats.lookup(hog).Containers[0].Memory.WorkingSetBytes); ws != 100<<20 {
		t.Errorf("the input container stats changed: %d", ws)
	}
	if merged.lookup(idle) != stats.lookup(idle) {
		t.Error("idle's stats were replaced though it had no fresh figure")
	}
	s := merged.lookup(fresh)
	if s == nil || workingSet(s) != 300<<20 || s.PodRef.Name != "fresh" || s.PodRef.UID != string(fresh.UID) {
		t.Errorf("a pod the summary lacks: stats %+v, want its fresh working set and reference", s)
	}
	// The inputs are untouched.
	if ws := workingSet(stats.lookup(hog)); ws != 100<<20 {
		t.Errorf("the input stats changed: hog %d", ws)
	}
	if got, _ := last.get(sigMem); got.time != t0 {
		t.Error("the input observations changed")
	}

	t.Run("figures that could not be read keep the old observation", func(t *testing.T) {
		obs, merged := withFreshMemory(last, stats, nil, &freshMemory{at: at, node: 1, nodeOK: false})
		if got, want := mustGet(t, obs, sigMem), mustGet(t, last, sigMem); got != want {
			t.Errorf("memory.available %+v, want the old %+v", got, want)
		}
		if !reflect.DeepEqual(merged, stats) {
			t.Error("stats changed without fresh pod figures")
		}
	})
	t.Run("no capacity known: no observation", func(t *testing.T) {
		obs, _ := withFreshMemory(observations(), nil, nil, f)
		if _, ok := obs.get(sigMem); ok {
			t.Error("memory.available observed without a capacity")
		}
	})
	t.Run("before the first monitoring pass: the machine's memory", func(t *testing.T) {
		g := *f
		g.capacity = 8 << 30
		obs, _ := withFreshMemory(nil, nil, nil, &g)
		if got := mustGet(t, obs, sigMem); got != (observation{available: 1 << 30, capacity: 8 << 30, time: at}) {
			t.Errorf("memory.available = %+v, want 1Gi of the machine's 8Gi", got)
		}
		if _, ok := obs.get(sigAlloc); ok {
			t.Error("allocatableMemory.available observed without the node's allocatable")
		}
		g.podsLimit = 6 << 30
		obs, _ = withFreshMemory(nil, nil, nil, &g)
		if got := mustGet(t, obs, sigAlloc); got != (observation{available: 1 << 30, capacity: 6 << 30, time: at}) {
			t.Errorf("allocatableMemory.available = %+v, want 1Gi of the pods' cgroup limit of 6Gi", got)
		}
	})
	t.Run("an observed capacity wins over the machine's", func(t *testing.T) {
		g := *f
		g.capacity = 64 << 30
		obs, _ := withFreshMemory(last, nil, nil, &g)
		if got := mustGet(t, obs, sigMem); got.capacity != 8<<30 {
			t.Errorf("memory.available capacity %d, want the observed 8Gi", got.capacity)
		}
		g.podsLimit = 7 << 30
		obs, _ = withFreshMemory(last, nil, nil, &g)
		if got := mustGet(t, obs, sigAlloc); got.capacity != 6<<30 {
			t.Errorf("allocatableMemory.available capacity %d, want the observed 6Gi", got.capacity)
		}
	})
}

func mustGet(t *testing.T, obs *observationSet, s evictionapi.Signal) observation {
	t.Helper()
	o, ok := obs.get(s)
	if !ok {
		t.Fatalf("%s not observed", s)
	}
	return o
}

func TestHardMemoryThresholdMet(t *testing.T) {
	obs := observations(
		ob{signal: sigMem, available: 500 << 20, capacity: 8 << 30},
		ob{signal: sigNodeFs, available: 0, capacity: 100 << 30},
	)
	cases := []struct {
		name       string
		thresholds []evictionapi.Threshold
		want       bool
	}{
		{name: "hard memory met", thresholds: []evictionapi.Threshold{hard(sigMem, "1Gi")}, want: true},
		{name: "hard memory not met", thresholds: []evictionapi.Threshold{hard(sigMem, "100Mi")}},
		{name: "soft memory met is left to the loop", thresholds: []evictionapi.Threshold{soft(sigMem, "1Gi", time.Minute)}},
		{name: "a disk threshold met is not memory", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1Gi")}},
		{name: "allocatable not observed", thresholds: []evictionapi.Threshold{hard(sigAlloc, "1Gi")}},
	}
	for _, tc := range cases {
		if got := hardMemoryThresholdMet(tc.thresholds, obs); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
