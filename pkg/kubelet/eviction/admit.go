//evictkit:file decision

package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// admitUnderPressure decides whether a pod may start on a node with the
// given conditions: always without pressure and for critical pods; under
// memory pressure alone, every pod that is not BestEffort, and BestEffort
// pods that tolerate the memory-pressure taint; otherwise never.
func admitUnderPressure(logger klog.Logger, conditions []v1.NodeConditionType, pod *v1.Pod, comparisonOperators bool) lifecycle.PodAdmitResult {
	if len(conditions) == 0 || kubelettypes.IsCriticalPod(pod) {
		return lifecycle.PodAdmitResult{Admit: true}
	}
	if len(conditions) == 1 && conditions[0] == v1.NodeMemoryPressure {
		if v1qos.GetPodQOS(pod) != v1.PodQOSBestEffort {
			return lifecycle.PodAdmitResult{Admit: true}
		}
		taint := &v1.Taint{Key: v1.TaintNodeMemoryPressure, Effect: v1.TaintEffectNoSchedule}
		if corev1helpers.TolerationsTolerateTaint(logger, pod.Spec.Tolerations, taint, comparisonOperators) {
			return lifecycle.PodAdmitResult{Admit: true}
		}
	}
	return lifecycle.PodAdmitResult{
		Admit:   false,
		Reason:  Reason,
		Message: fmt.Sprintf("The node had condition: %v. ", conditions),
	}
}
