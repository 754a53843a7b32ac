//evictkit:file wired

package eviction

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// ParseThresholdConfig turns the kubelet's eviction flags into thresholds:
// hard thresholds first, then soft ones, each group in signal-table order.
// Every soft threshold needs a grace period. When allocatableConfig enforces
// node allocatable on pods, each hard memory.available threshold is also
// applied to allocatableMemory.available. Errors name the setting, the
// signal and the value at fault.
func ParseThresholdConfig(allocatableConfig []string, evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim map[string]string) ([]evictionapi.Threshold, error) {
	hard, err := parseThresholdMap("evictionHard", evictionHard)
	if err != nil {
		return nil, err
	}
	soft, err := parseThresholdMap("evictionSoft", evictionSoft)
	if err != nil {
		return nil, err
	}
	grace, err := parseGracePeriodMap(evictionSoftGracePeriod)
	if err != nil {
		return nil, err
	}
	reclaim, err := parseMinReclaimMap(evictionMinimumReclaim)
	if err != nil {
		return nil, err
	}
	for i := range soft {
		period, ok := grace[soft[i].Signal]
		if !ok {
			return nil, fmt.Errorf("evictionSoft[%q]: a soft eviction threshold needs a grace period in evictionSoftGracePeriod", soft[i].Signal)
		}
		soft[i].GracePeriod = period
	}
	out := make([]evictionapi.Threshold, 0, len(hard)+len(soft)+1)
	out = append(out, hard...)
	out = append(out, soft...)
	for i := range out {
		if v, ok := reclaim[out[i].Signal]; ok {
			v := v
			out[i].MinReclaim = &v
		}
	}
	for _, key := range allocatableConfig {
		if key == kubetypes.NodeAllocatableEnforcementKey {
			out = withAllocatableMemoryThresholds(out)
			break
		}
	}
	return out, nil
}

// withAllocatableMemoryThresholds appends an allocatableMemory.available
// copy of every hard memory.available threshold.
func withAllocatableMemoryThresholds(in []evictionapi.Threshold) []evictionapi.Threshold {
	out := append([]evictionapi.Threshold(nil), in...)
	for _, t := range in {
		if t.Signal != evictionapi.SignalMemoryAvailable || !isHardEvictionThreshold(t) {
			continue
		}
		out = append(out, evictionapi.Threshold{
			Signal:     evictionapi.SignalAllocatableMemoryAvailable,
			Operator:   t.Operator,
			Value:      t.Value,
			MinReclaim: t.MinReclaim,
		})
	}
	return out
}

// sortedSignalKeys returns the keys of m in signal-table order, unknown
// keys last in lexical order, so that parsing is deterministic.
func sortedSignalKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if id, ok := lookupSignal(evictionapi.Signal(k)); ok {
			return int(id)
		}
		return numSignals
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank(keys[i]), rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// checkSignal returns an error naming setting and key when key is not a
// supported signal.
func checkSignal(setting, key string) (evictionapi.Signal, error) {
	signal := evictionapi.Signal(key)
	if !validSignal(signal) {
		return "", fmt.Errorf("%s[%q]: unsupported eviction signal %v", setting, key, signal)
	}
	if gated := ruleOf(signal).gated; gated != nil {
		if err := gated(); err != nil {
			return "", fmt.Errorf("%s[%q]: eviction signal %v %w", setting, key, signal, err)
		}
	}
	return signal, nil
}

// parseThresholdMap parses evictionHard or evictionSoft.
func parseThresholdMap(setting string, m map[string]string) ([]evictionapi.Threshold, error) {
	var out []evictionapi.Threshold
	for _, key := range sortedSignalKeys(m) {
		signal, err := checkSignal(setting, key)
		if err != nil {
			return nil, err
		}
		rule := ruleOf(signal)
		value, use, err := rule.parseValue(m[key])
		if err != nil {
			return nil, fmt.Errorf("%s[%q]=%q: %w", setting, key, m[key], err)
		}
		if !use {
			continue
		}
		out = append(out, evictionapi.Threshold{
			Signal:   signal,
			Operator: rule.operator,
			Value:    value,
		})
	}
	return out, nil
}

// parseGracePeriodMap parses evictionSoftGracePeriod.
func parseGracePeriodMap(m map[string]string) (map[evictionapi.Signal]time.Duration, error) {
	out := make(map[evictionapi.Signal]time.Duration, len(m))
	for _, key := range sortedSignalKeys(m) {
		signal, err := checkSignal("evictionSoftGracePeriod", key)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(m[key])
		if err != nil {
			return nil, fmt.Errorf("evictionSoftGracePeriod[%q]=%q: %w", key, m[key], err)
		}
		if d < 0 {
			return nil, fmt.Errorf("evictionSoftGracePeriod[%q]=%q: grace period must not be negative", key, m[key])
		}
		out[signal] = d
	}
	return out, nil
}

// parseMinReclaimMap parses evictionMinimumReclaim.
func parseMinReclaimMap(m map[string]string) (map[evictionapi.Signal]evictionapi.ThresholdValue, error) {
	out := make(map[evictionapi.Signal]evictionapi.ThresholdValue, len(m))
	for _, key := range sortedSignalKeys(m) {
		signal, err := checkSignal("evictionMinimumReclaim", key)
		if err != nil {
			return nil, err
		}
		if rule := ruleOf(signal); !rule.minReclaim {
			return nil, fmt.Errorf("evictionMinimumReclaim[%q]=%q: %s has no minimum reclaim", key, m[key], rule.family)
		}
		s := m[key]
		if strings.HasSuffix(s, "%") {
			p, err := parsePercent(s)
			if err != nil {
				return nil, fmt.Errorf("evictionMinimumReclaim[%q]=%q: %w", key, s, err)
			}
			if p <= 0 {
				return nil, fmt.Errorf("evictionMinimumReclaim[%q]=%q: percentage must be positive", key, s)
			}
			out[signal] = evictionapi.ThresholdValue{Percentage: p}
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("evictionMinimumReclaim[%q]=%q: %w", key, s, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("evictionMinimumReclaim[%q]=%q: quantity must not be negative", key, s)
		}
		out[signal] = evictionapi.ThresholdValue{Quantity: &q}
	}
	return out, nil
}
