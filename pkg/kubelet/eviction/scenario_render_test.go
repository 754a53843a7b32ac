package eviction

// How a scenario's outcome is written: a few lines a reviewer can read,
// with quantities in binary units where they are whole ones. This file
// writes the threshold evaluation; the ranking and the decision have
// files of their own.

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// renderEvaluation writes the conditions, each threshold's state, and the
// thresholds that may drive eviction this pass, in reclaim order.
func renderEvaluation(thresholds []evictionapi.Threshold, ev *evaluation) string {
	var b strings.Builder
	renderStates(&b, thresholds, ev.conditions, &ev.next)
	actionable := make([]string, 0, len(ev.actionable))
	for _, i := range ev.actionable {
		actionable = append(actionable, renderThreshold(thresholds[i]))
	}
	fmt.Fprintf(&b, "actionable: %s\n", orNone(strings.Join(actionable, ", ")))
	return b.String()
}

// renderStates writes the node conditions and whether each threshold is
// met (since when) and acting.
func renderStates(b *strings.Builder, thresholds []evictionapi.Threshold, conditions []v1.NodeConditionType, next *decisionState) {
	conds := make([]string, 0, len(conditions))
	for _, c := range conditions {
		conds = append(conds, string(c))
	}
	fmt.Fprintf(b, "conditions: %s\n", orNone(strings.Join(conds, ", ")))
	for i, t := range thresholds {
		state := "not met"
		if i < len(next.firstMet) && !next.firstMet[i].IsZero() {
			state = fmt.Sprintf("met since %s", next.firstMet[i].Sub(t0))
		}
		if i < len(next.acting) && next.acting[i] {
			state += ", acting"
		}
		fmt.Fprintf(b, "threshold %s: %s\n", renderThreshold(t), state)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// renderThreshold writes a threshold the way kubelet flags spell it, with
// its grace period and minimum reclaim when set.
func renderThreshold(t evictionapi.Threshold) string {
	if t.Operator == "" {
		return string(t.Signal) + " (no operator)"
	}
	for _, f := range scenarioFeatures {
		if f.writeThreshold == nil {
			continue
		}
		if s, ok := f.writeThreshold(t); ok {
			return s
		}
	}
	s := string(t.Signal) + "<" + formatThresholdValue(t.Value)
	if t.GracePeriod != 0 {
		s += fmt.Sprintf(" grace %s", t.GracePeriod)
	}
	if t.MinReclaim != nil {
		s += " min-reclaim " + formatThresholdValue(*t.MinReclaim)
	}
	return s
}

func formatThresholdValue(v evictionapi.ThresholdValue) string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return fmt.Sprintf("%g%%", v.Percentage*100)
}

// formatBytes writes n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	for _, u := range []struct {
		size   int64
		suffix string
	}{{1 << 30, "Gi"}, {1 << 20, "Mi"}, {1 << 10, "Ki"}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%s%d%s", sign, n/u.size, u.suffix)
		}
	}
	return fmt.Sprintf("%s%d", sign, n)
}
