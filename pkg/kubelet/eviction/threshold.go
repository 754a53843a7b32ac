package eviction

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// isHardEvictionThreshold reports whether a threshold acts without a grace period.
func isHardEvictionThreshold(t evictionapi.Threshold) bool {
	return t.GracePeriod == time.Duration(0)
}

// isAllocatableEvictionThreshold reports whether a threshold watches the pods' allocatable memory.
func isAllocatableEvictionThreshold(t evictionapi.Threshold) bool {
	return t.Signal == evictionapi.SignalAllocatableMemoryAvailable
}

// thresholdLevel returns the amount below which the signal meets the
// threshold, given the signal's capacity; with reclaim set, the minimum
// reclaim is added on top.
func thresholdLevel(t evictionapi.Threshold, capacity int64, reclaim bool) *resource.Quantity {
	capQ := resource.NewQuantity(capacity, resource.BinarySI)
	level := evictionapi.GetThresholdQuantity(t.Value, capQ)
	if reclaim && t.MinReclaim != nil {
		level.Add(*evictionapi.GetThresholdQuantity(*t.MinReclaim, capQ))
	}
	return level
}

// describeThreshold renders a threshold for logs.
func describeThreshold(t evictionapi.Threshold) string {
	kind := "hard"
	if !isHardEvictionThreshold(t) {
		kind = "soft(" + t.GracePeriod.String() + ")"
	}
	return fmt.Sprintf("%s %s%s%s", kind, t.Signal, ruleOf(t.Signal).symbol, describeThresholdValue(t.Value))
}

// describeThresholdValue renders a threshold's configured value: its
// quantity, or its percentage of capacity.
func describeThresholdValue(v evictionapi.ThresholdValue) string {
	switch {
	case v.Quantity != nil:
		return v.Quantity.String()
	case v.Percentage != 0:
		return fmt.Sprintf("%g%%", v.Percentage*100)
	}
	return "<unset>"
}
