package framework

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/evictkit/evictkit/internal/kindcluster"
)

// IsReady reports whether the node's Ready condition is True.
func IsReady(n *corev1.Node) bool {
	ready, _ := kindcluster.NodeReady(n)
	return ready
}

// HasCondition reports whether the node's condition of type t is True.
func HasCondition(n *corev1.Node, t corev1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TrueSince returns when the node's condition t last became True, and
// whether it is True now.
func TrueSince(n *corev1.Node, t corev1.NodeConditionType) (time.Time, bool) {
	for _, c := range n.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// PressureConditions are the node conditions the eviction manager sets.
var PressureConditions = []corev1.NodeConditionType{
	corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
}

// Pressures lists the pressure conditions that are True on the node.
func Pressures(n *corev1.Node) []corev1.NodeConditionType {
	var on []corev1.NodeConditionType
	for _, t := range PressureConditions {
		if HasCondition(n, t) {
			on = append(on, t)
		}
	}
	return on
}
