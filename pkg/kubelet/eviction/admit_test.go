package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

func TestAdmitUnderPressure(t *testing.T) {
	bestEffort := func(opts ...podOpt) *v1.Pod { return pod("be", opts...) }
	burstable := pod("bu", withMemRequest("100Mi"))
	guaranteed := pod("gu", withContainers(container("app",
		rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))))
	tolerateMemory := v1.Toleration{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}
	tolerateAll := v1.Toleration{Operator: v1.TolerationOpExists}
	tolerateDisk := v1.Toleration{Key: v1.TaintNodeDiskPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}
	tolerateMemoryNoExecute := v1.Toleration{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}

	mem := []v1.NodeConditionType{v1.NodeMemoryPressure}
	disk := []v1.NodeConditionType{v1.NodeDiskPressure}
	pid := []v1.NodeConditionType{v1.NodePIDPressure}
	memDisk := []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure}
	admit := lifecycle.PodAdmitResult{Admit: true}
	reject := func(msg string) lifecycle.PodAdmitResult {
		return lifecycle.PodAdmitResult{Admit: false, Reason: "Evicted", Message: msg}
	}

	cases := []struct {
		name       string
		conditions []v1.NodeConditionType
		pod        *v1.Pod
		want       lifecycle.PodAdmitResult
	}{
		{name: "no pressure admits best effort", pod: bestEffort(), want: admit},
		{name: "empty condition list admits best effort", conditions: []v1.NodeConditionType{}, pod: bestEffort(), want: admit},
		{name: "critical pod under disk pressure", conditions: disk, pod: pod("crit", withPriority(systemCritical)), want: admit},
		{name: "static pod under memory and disk pressure", conditions: memDisk, pod: pod("static", staticPod()), want: admit},
		{name: "memory pressure admits burstable", conditions: mem, pod: burstable, want: admit},
		{name: "memory pressure admits guaranteed", conditions: mem, pod: guaranteed, want: admit},
		{name: "memory pressure rejects best effort", conditions: mem, pod: bestEffort(), want: reject("The node had condition: [MemoryPressure]. ")},
		{name: "memory pressure admits best effort tolerating the memory-pressure taint", conditions: mem, pod: bestEffort(withTolerations(tolerateMemory)), want: admit},
		{name: "memory pressure admits best effort tolerating everything", conditions: mem, pod: bestEffort(withTolerations(tolerateAll)), want: admit},
		{name: "memory pressure rejects best effort tolerating only disk pressure", conditions: mem, pod: bestEffort(withTolerations(tolerateDisk)), want: reject("The node had condition: [MemoryPressure]. ")},
		{name: "memory pressure rejects best effort tolerating memory pressure for another effect", conditions: mem, pod: bestEffort(withTolerations(tolerateMemoryNoExecute)), want: reject("The node had condition: [MemoryPressure]. ")},
		{name: "disk pressure rejects best effort", conditions: disk, pod: bestEffort(), want: reject("The node had condition: [DiskPressure]. ")},
		{name: "disk pressure rejects guaranteed", conditions: disk, pod: guaranteed, want: reject("The node had condition: [DiskPressure]. ")},
		{name: "disk pressure rejects a pod tolerating everything", conditions: disk, pod: bestEffort(withTolerations(tolerateAll)), want: reject("The node had condition: [DiskPressure]. ")},
		{name: "PID pressure rejects burstable", conditions: pid, pod: burstable, want: reject("The node had condition: [PIDPressure]. ")},
		{name: "memory and disk pressure reject burstable", conditions: memDisk, pod: burstable, want: reject("The node had condition: [MemoryPressure DiskPressure]. ")},
		{name: "memory and disk pressure reject a tolerating best effort", conditions: memDisk, pod: bestEffort(withTolerations(tolerateMemory)), want: reject("The node had condition: [MemoryPressure DiskPressure]. ")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := admitUnderPressure(klog.Background(), tc.conditions, tc.pod, false)
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

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
