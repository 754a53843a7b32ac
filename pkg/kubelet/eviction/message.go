//evictkit:file decision

package eviction

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

//evictkit:begin wired

// Reason is the pod status reason, and the event reason, of an eviction.
const Reason = "Evicted"

// Keys of the annotations on a pod's Evicted event.
const (
	// StarvedResourceKey names the resource the node was short of.
	StarvedResourceKey = "starved_resource"
	// OffendingContainersKey lists, comma-separated, the containers using more than they requested.
	OffendingContainersKey = "offending_containers"
	// OffendingContainersUsageKey lists those containers' usage, in the same order.
	OffendingContainersUsageKey = "offending_containers_usage"
	// OffendingPodKey names the pod when its pod-level request was exceeded.
	OffendingPodKey = "offending_pod"
	// OffendingPodUsageKey is that pod's usage.
	OffendingPodUsageKey = "offending_pod_usage"
)

//evictkit:end wired

// thresholdEvictionMessage builds the status message and event annotations
// of a pod evicted because threshold t on resource r was met. A pod
// without stats gets the node part of the message and no annotations.
func thresholdEvictionMessage(r v1.ResourceName, t *evictionapi.Threshold, ob *observation, pod *v1.Pod, s *statsapi.PodStats, podLevelResources bool) (string, map[string]string) {
	var b strings.Builder
	annotations := map[string]string{}
	b.WriteString(nodeEvictionMessage(r, t, ob))
	if s == nil {
		return b.String(), annotations
	}
	if r == v1.ResourceMemory && podLevelResources && resourcehelper.IsPodLevelResourcesSet(pod) && s.Memory != nil {
		if req, ok := pod.Spec.Resources.Requests[v1.ResourceMemory]; ok {
			used := resource.NewQuantity(workingSet(s), resource.BinarySI)
			fmt.Fprintf(&b, "Pod %s was using %s, request is %s, has larger consumption of %v. ", pod.Name, used, req.String(), r)
			annotations[OffendingPodKey] = pod.Name
			annotations[OffendingPodUsageKey] = used.String()
		}
	}
	var names, usages []string
	for i := range s.Containers {
		cs := &s.Containers[i]
		spec := findContainerSpec(pod, cs.Name)
		if spec == nil {
			continue
		}
		used, ok := containerUsageOf(r, cs)
		if !ok {
			continue
		}
		req := spec.Resources.Requests[r]
		if used.Cmp(req) <= 0 {
			continue
		}
		fmt.Fprintf(&b, "Container %s was using %s, request is %s, has larger consumption of %v. ", spec.Name, used.String(), req.String(), r)
		names = append(names, spec.Name)
		usages = append(usages, used.String())
	}
	annotations[OffendingContainersKey] = strings.Join(names, ",")
	annotations[OffendingContainersUsageKey] = strings.Join(usages, ",")
	annotations[StarvedResourceKey] = string(r)
	return b.String(), annotations
}

// nodeEvictionMessage is the part of an eviction message about the node,
// as the threshold's signal family words it.
func nodeEvictionMessage(r v1.ResourceName, t *evictionapi.Threshold, ob *observation) string {
	rule := availableRule
	if t != nil {
		rule = ruleOf(t.Signal)
	}
	return rule.nodeMessage(r, t, ob)
}

// findContainerSpec returns the regular or init container named name.
// Ephemeral containers cannot declare resources and are never blamed.
func findContainerSpec(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// containerUsageOf returns a container's use of a resource as shown in
// eviction messages: working set for memory, writable layer plus logs for
// ephemeral storage (only when both are known); other resources are not
// attributed to containers.
func containerUsageOf(r v1.ResourceName, cs *statsapi.ContainerStats) (*resource.Quantity, bool) {
	switch r {
	case v1.ResourceMemory:
		if cs.Memory == nil || cs.Memory.WorkingSetBytes == nil {
			return nil, false
		}
		return resource.NewQuantity(u64(cs.Memory.WorkingSetBytes), resource.BinarySI), true
	case v1.ResourceEphemeralStorage:
		if cs.Rootfs == nil || cs.Rootfs.UsedBytes == nil || cs.Logs == nil || cs.Logs.UsedBytes == nil {
			return nil, false
		}
		return resource.NewQuantity(satAdd(u64(cs.Rootfs.UsedBytes), u64(cs.Logs.UsedBytes)), resource.BinarySI), true
	}
	return nil, false
}
