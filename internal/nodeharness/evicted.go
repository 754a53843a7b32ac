package nodeharness

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// What the kubelet writes into an evicted pod's status.
const (
	EvictedReason        = "Evicted"
	TerminationByKubelet = "TerminationByKubelet"
)

// CheckEvictedStatus returns nil if the pod's status is that of a pod the
// kubelet evicted: phase Failed, reason Evicted, and a True
// DisruptionTarget condition with reason TerminationByKubelet; otherwise
// an error saying what differs.
func CheckEvictedStatus(p *corev1.Pod) error {
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != EvictedReason {
		return fmt.Errorf("pod %s is not Failed with reason %s: %s", p.Name, EvictedReason, DescribePod(p))
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == TerminationByKubelet {
			return nil
		}
	}
	return fmt.Errorf("pod %s has no True DisruptionTarget condition with reason %s: %+v", p.Name, TerminationByKubelet, p.Status.Conditions)
}
