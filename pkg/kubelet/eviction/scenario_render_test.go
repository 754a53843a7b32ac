package eviction

// How a scenario's outcome is written: a few lines a reviewer can read,
// with quantities in binary units where they are whole ones.

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// renderRanking writes one line per candidate, first victim first.
func renderRanking(ranked []candidate, class rankClass) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for i, c := range ranked {
		fmt.Fprintf(w, "%d\t%s\t%s\n", i+1, podName(c), candidateFigures(c, class))
	}
	_ = w.Flush()
	return b.String()
}

// podName is the pod's name, with its namespace and UID when they are not
// the builders' defaults.
func podName(c candidate) string {
	name := c.pod.Name
	if c.pod.Namespace != "ns" {
		name = c.pod.Namespace + "/" + name
	}
	if string(c.pod.UID) != c.pod.Name+"-uid" {
		name += " (uid " + string(c.pod.UID) + ")"
	}
	return name
}

// candidateFigures says what ranked the candidate: stats, usage against
// request, priority, and whether it may be evicted at all.
func candidateFigures(c candidate, class rankClass) string {
	var parts []string
	switch {
	case !c.hasStats:
		parts = append(parts, "no stats")
	case class == rankByProcesses:
		parts = append(parts, fmt.Sprintf("processes %d", c.usage))
	default:
		amount := formatBytes
		if class == rankByDiskInodes {
			amount = func(n int64) string { return fmt.Sprint(n) }
		}
		rel := "within"
		if c.exceeds {
			rel = "above"
		}
		parts = append(parts, fmt.Sprintf("usage %s %s request %s", amount(c.usage), rel, amount(c.request)))
		if c.exceeds {
			parts = append(parts, "by "+amount(c.excess))
		}
	}
	parts = append(parts, fmt.Sprintf("priority %d", c.priority))
	if c.critical {
		parts = append(parts, "critical")
	}
	return strings.Join(parts, ", ")
}

// renderDecision writes the conditions, each threshold's state, the target
// with its ranking and victims, and any local storage victims.
func renderDecision(in *decideInput, d *decision) string {
	var b strings.Builder
	renderStates(&b, in.thresholds, d.conditions, &d.next)
	for _, v := range d.storageVictims {
		fmt.Fprintf(&b, "local storage victim %s (%s)\n  message: %q\n", v.pod.Name, v.limit, v.message)
	}
	tg := d.target
	if tg == nil {
		b.WriteString("target: none\n")
		return b.String()
	}
	steps := make([]string, 0, len(tg.steps))
	for _, s := range tg.steps {
		steps = append(steps, s.String())
	}
	fmt.Fprintf(&b, "target: %s, starving %s, node reclaim: %s\n", renderThreshold(tg.threshold), tg.resource, orNone(strings.Join(steps, ", ")))
	if len(tg.actionable) > 1 {
		var also []string
		for _, t := range tg.actionable[1:] {
			also = append(also, renderThreshold(t))
		}
		fmt.Fprintf(&b, "also actionable: %s\n", strings.Join(also, ", "))
	}
	if len(tg.ranked) == 0 {
		b.WriteString("ranking: none\n")
	} else {
		b.WriteString("ranking:\n")
	}
	for _, line := range strings.Split(strings.TrimSuffix(renderRanking(tg.ranked, tg.class), "\n"), "\n") {
		if line != "" {
			b.WriteString("  " + line + "\n")
		}
	}
	//evictkit:begin EvictionReclaimSized
	if s := tg.sizing; s != nil {
		fmt.Fprintf(&b, "sized: shortfall %s, victims use %s, covered %v\n", formatBytes(s.shortfall), formatBytes(s.expected), s.covered)
	}
	//evictkit:end EvictionReclaimSized
	if len(tg.victims) == 0 {
		b.WriteString("victims: none\n")
	}
	for _, v := range tg.victims {
		fmt.Fprintf(&b, "victim %s, rank %d, grace %ds\n  reason: %s\n  message: %q\n", v.pod.Name, v.rank+1, v.gracePeriodSeconds, v.reason, v.message)
		keys := make([]string, 0, len(v.annotations))
		for k := range v.annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  annotation %s: %q\n", k, v.annotations[k])
		}
		//evictkit:begin EvictionExplain
		if v.explanation != nil {
			fmt.Fprintf(&b, "  explained: %q\n", v.explanation.clause(tg.decision))
		}
		//evictkit:end EvictionExplain
	}
	return b.String()
}

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
	//evictkit:begin EvictionPSI
	if t.Operator == opGreaterThan {
		return string(t.Signal) + ">" + formatPSI(t.Value.Quantity.MilliValue())
	}
	//evictkit:end EvictionPSI
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

// renderAdmission writes one line per pod: admitted, or rejected with
// the reason and message a rejected pod gets.
func renderAdmission(conditions []v1.NodeConditionType, pods []*v1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		r := admitUnderPressure(klog.Background(), conditions, p, false)
		if r.Admit {
			fmt.Fprintf(&b, "%s: admitted\n", p.Name)
			continue
		}
		fmt.Fprintf(&b, "%s: rejected, %s: %q\n", p.Name, r.Reason, r.Message)
	}
	return b.String()
}

// renderViolations writes one line per pod over a local storage limit: the
// limit's metric label and the eviction message.
func renderViolations(vs []storageViolation) string {
	if len(vs) == 0 {
		return "none\n"
	}
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%s: %s %q\n", v.pod.Name, v.limit, v.message)
	}
	return b.String()
}
