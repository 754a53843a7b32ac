package nodeharness

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

// Condition returns the node's condition of type t, or nil.
func Condition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// HasCondition reports whether the node's condition of type t is True.
func HasCondition(n *corev1.Node, t corev1.NodeConditionType) bool {
	c := Condition(n, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// TrueSince returns when the node's condition t last became True, and
// whether it is True now.
func TrueSince(n *corev1.Node, t corev1.NodeConditionType) (time.Time, bool) {
	if c := Condition(n, t); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time, true
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

// PressureTaints are the NoSchedule taints the node lifecycle controller
// puts on a node while it has each pressure condition.
var PressureTaints = map[corev1.NodeConditionType]string{
	corev1.NodeMemoryPressure: corev1.TaintNodeMemoryPressure,
	corev1.NodeDiskPressure:   corev1.TaintNodeDiskPressure,
	corev1.NodePIDPressure:    corev1.TaintNodePIDPressure,
}

// HasTaint reports whether the node has a taint with key and effect.
func HasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}
