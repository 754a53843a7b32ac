package eviction

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

//evictkit:begin wired

// isHardEvictionThreshold reports whether a threshold acts without a grace period.
func isHardEvictionThreshold(t evictionapi.Threshold) bool {
	return t.GracePeriod == 0
}

// isAllocatableEvictionThreshold reports whether a threshold watches the pods' allocatable memory.
func isAllocatableEvictionThreshold(t evictionapi.Threshold) bool {
	return t.Signal == evictionapi.SignalAllocatableMemoryAvailable
}

//evictkit:end wired

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

// parseThresholdValue parses a quantity or a percentage. "0%" and "100%"
// disable the signal (use is false).
func parseThresholdValue(s string) (v evictionapi.ThresholdValue, use bool, err error) {
	if strings.HasSuffix(s, "%") {
		if s == "0%" || s == "100%" {
			return v, false, nil
		}
		p, err := parsePercent(s)
		if err != nil {
			return v, false, err
		}
		if p < 0 {
			return v, false, fmt.Errorf("percentage must be >= 0%%")
		}
		if p > 1 {
			return v, false, fmt.Errorf("percentage must be <= 100%%")
		}
		return evictionapi.ThresholdValue{Percentage: p}, true, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return v, false, err
	}
	if q.Sign() <= 0 {
		return v, false, fmt.Errorf("quantity must be positive")
	}
	return evictionapi.ThresholdValue{Quantity: &q}, true, nil
}

// parsePercent parses "12.5%" into 0.125. Like upstream, every trailing
// "%" is dropped, so "10%%" reads as 10%; unlike upstream, NaN is an error.
func parsePercent(s string) (float32, error) {
	f, err := strconv.ParseFloat(strings.TrimRight(s, "%"), 32)
	if err != nil {
		return 0, fmt.Errorf("not a percentage: %w", err)
	}
	if math.IsNaN(f) {
		return 0, fmt.Errorf("not a percentage: NaN")
	}
	return float32(f) / 100, nil
}
